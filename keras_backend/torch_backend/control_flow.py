"""Control flow on PyTorch: the engine-level functions of the names of
:mod:`keras_backend.api.control_flow`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import functools
import sys

import numpy as np

from .. import generic
from .core import (torch, stack, Tensor, _apply, _builtin_max, _builtin_min, _context_op,
                   _dependents, _flatten, _host, _infer, _multi_node, _ndim, _node, _ONE, _Plan,
                   _Spec, _spec_of, _static_shape, _step_input_part, _to_tensor,
                   _tracing_loop_body, _unflatten, _walk)
from .session import learning_phase
from .tensors import zeros_like

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
    return tuple(_Spec(a.shape[:axis] + a.shape[axis + 1:], a.dtype) for a in avals)


def _cast_like(v, ref_aval):
    if not isinstance(v, torch.Tensor):
        v = torch.as_tensor(np.asarray(v))
    return v.to(ref_aval.dtype)


def _avals_of(x):
    if isinstance(x, Tensor):
        return x.avals
    a = _spec_of(x)
    return (a, a)


def _right_pad(m, ndim):
    return m.reshape(tuple(m.shape) + (1,) * (ndim - m.ndim))


def _time_batched(n, batched):
    """``graph.step_input_part``'s rule: how node ``n`` of a step graph runs on every time
    step at once (time on axis 1 of its ``batched`` leaves), or None. Taken: the elementwise
    operators (a fixed operand of the step's rank gets a time axis), ``dot`` of the input
    by a fixed 1-D or 2-D weight (matmul's rows stay apart) and channels_last ``bias_add``."""
    kind = getattr(n.op, 'time_batched', None)
    if kind is None and getattr(n.op, 'elementwise', False):
        kind = 'elementwise'
    if kind is None or len(n.leaves) != 2:
        return None
    ndims = [v.ndim if isinstance(v, Tensor) else np.ndim(v) for v in n.leaves]
    if kind == 'elementwise':
        how = []
        for v, b, d in zip(n.leaves, batched, ndims):
            if b:
                if d != n.ndim or d < 1:
                    return None
                how.append(None)
            elif isinstance(v, Tensor):
                if d > n.ndim:
                    return None
                how.append('expand' if d == n.ndim else None)
            elif isinstance(v, (bool, int, float)):
                how.append(None)
            else:
                return None
        return tuple(how)
    # dot, bias_add: the step's value first, a fixed weight / bias second
    if batched != (True, False) or not isinstance(n.leaves[1], Tensor) or ndims[0] < 2:
        return None
    if kind == 'dot' and 1 <= ndims[1] <= 2:
        return (None, None)
    if kind == 'bias' and ndims[1] >= 1:
        return (None, None)
    return None


def _run_time_batched(ctx, part, how, frontier, x_in, x):
    """{id: the values of every time step (a tuple, by step)} of the ``frontier`` nodes of
    ``part`` (``graph.step_input_part``), computed on the whole sequence ``x``."""
    if not part:
        return {}
    memo = {x_in.id: x}
    for nd in part:
        vals = []
        for v, h in zip(nd.leaves, how[nd.id]):
            if isinstance(v, Tensor):
                v = memo[v.id] if v.id in memo else ctx.value(v)
                if h == 'expand' and isinstance(v, torch.Tensor):
                    v = v.unsqueeze(1)
            vals.append(v)
        memo[nd.id] = nd.op(*_unflatten(nd.treedef, vals))
    return dict((k, torch.unbind(memo[k], 1)) for k in frontier)


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None,
        constants=None, unroll=False, input_length=None):
    """A Python loop over the time steps evaluating a step graph built once on stand-in
    inputs (autograd differentiates through it); what the step computes without its
    inputs (dropout masks, weight slices) is computed once outside the loop. With
    ``unroll`` the step is built once per time step instead."""
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
    new_states = [_to_tensor(ns) for ns in list(new_states)]
    out = _to_tensor(out)
    inner = [x_in] + s_in
    local = _dependents([out] + new_states, inner)
    uses_lp = any(getattr(v, '_uses_learning_phase', False) for v in [out] + new_states)
    n_states = len(initial_states)
    out_avals = _avals_of(out)
    state_avals = [_avals_of(s) for s in initial_states]
    # what reads the input and no state runs on every time step at once (one matmul over the
    # sequence, one in the gradient): the step plan starts from its values
    part, part_how, frontier = _step_input_part([out] + new_states, local, x_in,
                                                _time_batched)
    step = _Plan([out] + new_states, local - set(n.id for n in part) if part else local)
    state_ids = [s.id for s in s_in]

    @_context_op
    def op(ctx, x, m, states0, body_refs):
        n = x.shape[1]
        if input_length is not None and isinstance(input_length, int):
            n = _builtin_min(n, input_length)
        order = range(n - 1, -1, -1) if go_backwards else range(n)
        batch = x.shape[0]
        prev = torch.zeros((batch,) + tuple(out_avals[0].shape[1:]), dtype=out_avals[0].dtype)
        states = [s if isinstance(s, torch.Tensor) else torch.as_tensor(np.asarray(s))
                  for s in states0]
        outs = []
        # the step's outer values (weights, dropout masks) once, then the step per time step
        outer = step.outer_values(ctx, frontier)
        # the time steps as views of one unbind, whose gradient is one stack (indexing
        # x[:, t] per step would give a full-size gradient per step to be summed)
        steps_of_x = torch.unbind(x, 1) if n else ()
        batched = _run_time_batched(ctx, part, part_how, frontier, x_in, x) if n else {}
        with _tracing_loop_body():
            for t in order:
                seeds = dict(zip(state_ids, states))
                seeds[x_in.id] = steps_of_x[t]
                for k, v in batched.items():
                    seeds[k] = v[t]
                memo = step.run(ctx, seeds, outer).memo
                o = _cast_like(memo[out.id], out_avals[0])
                ns = [_cast_like(memo[v.id], a[0]) for v, a in zip(new_states, state_avals)]
                if m is not None:
                    keep = m[:, t].to(torch.bool)
                    o = torch.where(_right_pad(keep, o.ndim), o, prev)
                    ns = [torch.where(_right_pad(keep, s.ndim), a, s)
                          for a, s in zip(ns, states)]
                outs.append(o)
                prev, states = o, ns
        if outs:
            seq = torch.stack(outs, dim=1)
        else:
            seq = torch.zeros((batch, 0) + tuple(out_avals[0].shape[1:]),
                              dtype=out_avals[0].dtype)
        return prev, seq, tuple(states)

    # the body's outer tensors are leaves too, so that functions see their variables
    body_refs = [v for nd in _walk([out] + new_states) if nd.id in local
                 for v in nd.leaves if isinstance(v, Tensor) and v.id not in local]
    leaves, treedef = _flatten((inputs, mask, list(initial_states), body_refs))
    avals = []
    in_avals = _avals_of(inputs)
    for p in range(2):
        b = in_avals[p].shape[0]
        t_len = in_avals[p].shape[1]
        o = out_avals[p]
        avals.append((_Spec((b,) + tuple(o.shape[1:]), o.dtype),
                      _Spec((b, t_len) + tuple(o.shape[1:]), o.dtype),
                      tuple(_Spec(s[p].shape, s[p].dtype) for s in state_avals)))
    node = _multi_node(op, leaves, treedef, tuple(avals))
    node.hidden = [out] + new_states
    last = _node(lambda r: r[0], [node], _ONE)
    outputs = _node(lambda r: r[1], [node], _ONE)
    states = [_node(functools.partial(lambda r, i: r[2][i], i=i), [node], _ONE)
              for i in range(n_states)]
    for v in [last, outputs] + states:
        v._uses_learning_phase = uses_lp
    return last, outputs, states


def _call_if(x):
    return x() if callable(x) else x


def _where(c, a, b, expr_ndim):
    if not isinstance(c, torch.Tensor):
        c = torch.as_tensor(np.asarray(c))
    c = c.to(torch.bool)
    if 0 < c.ndim < expr_ndim:
        c = _right_pad(c, expr_ndim)
    a = a if isinstance(a, torch.Tensor) else torch.as_tensor(np.asarray(a))
    b = b if isinstance(b, torch.Tensor) else torch.as_tensor(np.asarray(b))
    if a.dtype != b.dtype:
        dt = torch.promote_types(a.dtype, b.dtype)
        a, b = a.to(dt), b.to(dt)
    if 'meta' in (a.device.type, b.device.type, c.device.type):
        a, b, c = a.to('meta'), b.to('meta'), c.to('meta')
    return torch.where(c, a, b)


def switch(condition, then_expression, else_expression):
    """``torch.where``; a lower-rank condition gets trailing broadcast axes; a scalar
    condition (the learning phase) computes only the branch it picks."""
    cond = _to_tensor(condition)
    then_expression = _to_tensor(_call_if(then_expression))
    else_expression = _to_tensor(_call_if(else_expression))
    expr_ndim = _builtin_max(_ndim(then_expression), _ndim(else_expression))
    # the shared rule skips expressions given as callables: their ranks are known only here
    if _ndim(cond) > expr_ndim:
        raise ValueError('switch: condition of rank %d is higher than the expressions\' '
                         'rank %d' % (_ndim(cond), expr_ndim))

    def plain(c, a, b):
        if isinstance(c, torch.Tensor) and c.device.type != 'meta' and c.ndim == 0 or \
                not isinstance(c, torch.Tensor) and np.ndim(c) == 0:
            return a if bool(_host(c)) else b
        try:
            return _where(c, a, b, expr_ndim)
        except RuntimeError:
            return a
    if _ndim(cond) != 0 or not isinstance(cond, Tensor):
        return _apply(plain, cond, then_expression, else_expression)

    @_context_op
    def lazy(ctx, c, a, b):
        return ctx.value(then_expression) if bool(_host(c)) else ctx.value(else_expression)
    lazy.lazy_leaves = (1, 2)
    leaves, treedef = _flatten((cond, then_expression, else_expression))
    avals, _ = _infer(plain, leaves, treedef)
    return _node(lazy, leaves, treedef, avals=avals)


def in_train_phase(x, alt, training=None):
    """``switch`` on the learning phase (only the branch it picks is computed); a Python
    0/1 picks the branch at once. The result carries ``_uses_learning_phase`` when the
    phase is the symbolic one."""
    uses_lp = training is None
    if training is None:
        training = learning_phase()
    if not isinstance(training, Tensor):
        if isinstance(training, (torch.Tensor, np.ndarray)):
            training = bool(_host(training))
        return _call_if(x) if training else _call_if(alt)
    out = switch(training, x, alt)
    if uses_lp and isinstance(out, Tensor):
        out._uses_learning_phase = True
    return out


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)
