"""Control flow on JAX: the engine-level functions of the names of
:mod:`keras_backend.api.control_flow`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import functools
import os
import sys

import numpy as np

from .. import generic
from .core import (jax, jnp, stack, Tensor, _apply, _builtin_any, _builtin_max, _builtin_min,
                   _context_op, _dependents, _flatten, _infer, _multi_node, _ndim, _node, _ONE,
                   _static_shape, _to_tensor, _tracing_loop_body, _walk)
from .session import learning_phase
from .tensors import zeros_like

from jax import lax  # noqa: E402  (core imported it, or said how to install it)

#: this module: the functions of ``generic`` bound here read ``zeros_like``, ``switch`` and
#: ``stack`` from it
_K = sys.modules[__name__]


def _step_standin(like_avals, name):
    """A stand-in input of a loop body, with the given probe shapes."""
    t = Tensor(None, [], None, tuple(like_avals), name=name)
    t._is_placeholder = True
    t._uses_learning_phase = False
    return t


def _drop_axis(avals, axis):
    return tuple(jax.ShapeDtypeStruct(a.shape[:axis] + a.shape[axis + 1:], a.dtype)
                 for a in avals)


def _cast_like(v, ref_aval):
    return jnp.asarray(v).astype(ref_aval.dtype)


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None,
        constants=None, unroll=False, input_length=None):
    """``lax.scan`` over a step graph built once on stand-in inputs (a Python loop of
    the step when ``unroll``); what the step computes without its inputs (dropout
    masks, weight slices) is computed once outside the loop. Convolutions of one input
    by slices of one loop-invariant kernel (Keras' ConvLSTM2DCell) run as one
    (``_conv_groups``); on CPU a convolution's gradients in the loop are forward
    convolutions and dots (``_conv_by_forward_convs``)."""
    inputs = _to_tensor(inputs)
    constants = list(constants or [])
    initial_states = [_to_tensor(s) for s in initial_states]
    if mask is not None:
        mask = _to_tensor(mask)
        if _ndim(mask) == 3:
            mask = mask[:, :, 0]
    steps = _static_shape(inputs)[1]
    if unroll:
        if steps is None:
            steps = input_length
        if steps is None:
            # the time length is known only here (the static shape JAX infers)
            raise ValueError('rnn: unroll=True needs a static time length or input_length')
        return generic.unrolled_rnn(_K, step_function, inputs, initial_states,
                                    go_backwards=go_backwards, mask=mask,
                                    constants=constants, steps=steps)

    # a first call on the real first step: cells that cache tensors on their first
    # call (Keras' dropout masks) build them outside the loop
    step_function(inputs[:, 0], initial_states + constants)
    x_in = _step_standin(_drop_axis(_avals_of(inputs), 1), 'rnn_input')
    s_in = [_step_standin(_avals_of(s), 'rnn_state_%d' % i)
            for i, s in enumerate(initial_states)]
    out, new_states = step_function(x_in, s_in + constants)
    new_states = list(new_states)
    out = _to_tensor(out)
    new_states = [_to_tensor(ns) for ns in new_states]
    inner = [x_in] + s_in
    local = _dependents([out] + new_states, inner)
    uses_lp = _builtin_any(getattr(v, '_uses_learning_phase', False)
                           for v in [out] + new_states)
    n_states = len(initial_states)
    out_avals = _avals_of(out)
    state_avals = [_avals_of(s) for s in initial_states]
    conv_groups = _conv_groups([out] + new_states, local)

    @_context_op
    def op(ctx, x, m, states0, body_refs):
        # the merged kernels, computed outside the loop
        merged = [jnp.concatenate([ctx.value(n.leaves[1]) for n in nodes], axis=-1)
                  for nodes in conv_groups]
        seq = jnp.swapaxes(x, 0, 1)
        mseq = None if m is None else jnp.swapaxes(m, 0, 1)
        n = seq.shape[0]
        if input_length is not None and isinstance(input_length, int):
            n = _builtin_min(n, input_length)
        if go_backwards:
            seq = seq[::-1]
            mseq = None if mseq is None else mseq[::-1]

        def body(carry, xs):
            prev_out, states = carry
            x_t, m_t = xs
            child = ctx.child(local, dict([(x_in.id, x_t)] +
                                          [(s.id, v) for s, v in zip(s_in, states)]))
            with _tracing_loop_body():
                for nodes, kernel in zip(conv_groups, merged):
                    axis = nodes[0]._conv_key[-1]
                    y = nodes[0].op(child.value(nodes[0].leaves[0]), kernel)
                    cuts = np.cumsum([n.avals[0].shape[axis] for n in nodes])[:-1]
                    for n, part in zip(nodes, jnp.split(y, [int(c) for c in cuts], axis)):
                        child.memo[n.id] = part
                o = child.value(out)
                ns = [_cast_like(child.value(v), a[0])
                      for v, a in zip(new_states, state_avals)]
            o = _cast_like(o, out_avals[0])
            if m_t is not None:
                keep = m_t.astype(bool)
                o = jnp.where(_right_pad(keep, o.ndim), o, prev_out)
                ns = [jnp.where(_right_pad(keep, s.ndim), a, s) for a, s in zip(ns, states)]
            return (o, ns), o
        batch = seq.shape[1]
        init_out = jnp.zeros((batch,) + tuple(out_avals[0].shape[1:]), out_avals[0].dtype)
        (last, states), outs = lax.scan(body, (init_out, [jnp.asarray(s) for s in states0]),
                                        (seq, mseq), unroll=_scan_unroll(n))
        return last, jnp.swapaxes(outs, 0, 1), tuple(states)

    # the body's outer tensors are leaves too, so that functions see their variables
    body_refs = [v for n in _walk([out] + new_states) if n.id in local
                 for v in n.leaves if isinstance(v, Tensor) and v.id not in local]
    leaves, treedef = _flatten((inputs, mask, list(initial_states), body_refs))
    avals = []
    in_avals = _avals_of(inputs)
    for p in range(2):
        b = in_avals[p].shape[0]
        t_len = in_avals[p].shape[1]
        o = out_avals[p]
        avals.append((jax.ShapeDtypeStruct((b,) + tuple(o.shape[1:]), o.dtype),
                      jax.ShapeDtypeStruct((b, t_len) + tuple(o.shape[1:]), o.dtype),
                      tuple(jax.ShapeDtypeStruct(s[p].shape, s[p].dtype) for s in state_avals)))
    node = _multi_node(op, leaves, treedef, tuple(avals))
    node.hidden = [out] + new_states
    last = _node(lambda r: r[0], [node], _ONE)
    outputs = _node(lambda r: r[1], [node], _ONE)
    states = [_node(functools.partial(lambda r, i: r[2][i], i=i), [node],
                    _ONE) for i in range(n_states)]
    for v in [last, outputs] + states:
        v._uses_learning_phase = uses_lp
    return last, outputs, states


def _conv_groups(roots, local):
    """The convolutions of a loop body (``local``) that read the same input with the same
    parameters and loop-invariant kernels of the same spatial and input sizes, in groups
    of two or more (Keras' ConvLSTM2DCell convolves its input, and its state, with four
    slices of one kernel). ``rnn`` computes each group as one convolution with the
    kernels concatenated along their output axis, split afterwards: one wider convolution
    and one gradient of it run several times faster per step than four narrow ones on
    XLA's CPU backend. The same values up to float rounding."""
    groups = {}
    for n in _walk(roots):
        key = getattr(n, '_conv_key', None)
        if key is None or n.id not in local or len(n.leaves) != 2:
            continue
        x, k = n.leaves
        if not (isinstance(x, Tensor) and isinstance(k, Tensor)) or k.id in local:
            continue
        shape = k.avals[0].shape
        groups.setdefault((x.id, key, tuple(shape[:-1]), str(k.avals[0].dtype)),
                          []).append(n)
    return [nodes for nodes in groups.values() if len(nodes) > 1]


def _scan_unroll(steps):
    """``lax.scan``'s unroll factor for an ``rnn`` of ``steps`` steps:
    ``KERAS_BACKEND_JAX_SCAN_UNROLL`` (default 1, a loop; 0 or a factor >= steps: straight-line
    code). Unrolling trades compile time for speed per step (benchmarks/README.md)."""
    factor = int(os.environ.get('KERAS_BACKEND_JAX_SCAN_UNROLL', '1') or 1)
    if factor <= 0 or factor >= steps:
        return True
    return factor


def _avals_of(x):
    if isinstance(x, Tensor):
        return x.avals
    a = jax.ShapeDtypeStruct(np.shape(x), np.asarray(x).dtype if not hasattr(x, 'dtype')
                             else x.dtype)
    return (a, a)


def _right_pad(m, ndim):
    return m.reshape(m.shape + (1,) * (ndim - m.ndim))


def _call_if(x):
    return x() if callable(x) else x


def switch(condition, then_expression, else_expression):
    """``jnp.where``; a lower-rank condition gets trailing broadcast axes; a scalar
    condition known while tracing (the learning phase) picks a branch, and only that
    branch is traced (a prediction program holds no dropout, nor the split of its key)."""
    cond = _to_tensor(condition)
    then_expression = _to_tensor(_call_if(then_expression))
    else_expression = _to_tensor(_call_if(else_expression))
    expr_ndim = _builtin_max(_ndim(then_expression), _ndim(else_expression))
    # the shared rule skips expressions given as callables: their ranks are known only here
    if _ndim(cond) > expr_ndim:
        raise ValueError('switch: condition of rank %d is higher than the expressions\' '
                         'rank %d' % (_ndim(cond), expr_ndim))

    def op(c, a, b):
        if not isinstance(c, jax.core.Tracer) and np.ndim(c) == 0:
            return a if bool(np.asarray(c)) else b
        c = jnp.asarray(c).astype(bool)
        if 0 < c.ndim < expr_ndim:
            c = _right_pad(c, expr_ndim)
        return jnp.where(c, a, b)
    if _ndim(cond) != 0 or not isinstance(cond, Tensor) or cond.pvals is not None:
        return _apply(op, cond, then_expression, else_expression)

    @_context_op
    def lazy(ctx, c, a, b):
        if not isinstance(c, jax.core.Tracer):
            return ctx.value(then_expression if bool(np.asarray(c)) else else_expression)
        return op(c, ctx.value(then_expression), ctx.value(else_expression))
    lazy.lazy_leaves = (1, 2)
    leaves, treedef = _flatten((cond, then_expression, else_expression))
    return _node(lazy, leaves, treedef, avals=_infer(op, leaves, treedef)[0])


def in_train_phase(x, alt, training=None):
    """``switch`` on the learning phase, which is static in each compiled program (one
    branch is traced); a Python 0/1 picks the branch at once. The result carries
    ``_uses_learning_phase`` when the phase is the symbolic one."""
    uses_lp = training is None
    if training is None:
        training = learning_phase()
    if not isinstance(training, Tensor):
        if isinstance(training, (jax.Array, np.ndarray)):
            training = bool(np.asarray(training))
        return _call_if(x) if training else _call_if(alt)
    out = switch(training, x, alt)
    if uses_lp and isinstance(out, Tensor):
        out._uses_learning_phase = True
    return out


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)
