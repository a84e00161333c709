"""Higher-order functions on PyTorch: the engine-level functions of the names of
:mod:`keras_backend.api.higher_order`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import numpy as np

from .core import (torch, Tensor, _builtin_any, _Context, _context_op, _dependents,
                   _flatten, _normalize_dtype, _Plan, _Spec, _to_tensor, _torch_dtype,
                   _tracing_loop_body, _walk)
from .control_flow import _avals_of, _drop_axis, _step_standin


def _loop_body(fn, arg_avals, names):
    """Build ``fn`` once on stand-ins: (stand-ins, output, the body's evaluation plan
    over the nodes depending on them, the outer tensors the body reads)."""
    ins = [_step_standin(a, n) for a, n in zip(arg_avals, names)]
    out = _to_tensor(fn(*ins))
    local = _dependents([out], ins)
    refs = [v for n in _walk([out]) if n.id in local
            for v in n.leaves if isinstance(v, Tensor) and v.id not in local]
    return ins, out, _Plan([out], local), refs


def _value(v):
    return v if isinstance(v, torch.Tensor) else torch.as_tensor(np.asarray(v))


def map_fn(fn, elems, name=None, dtype=None):
    """A Python loop over the first axis of ``elems``, ``fn`` built once on a stand-in,
    the results stacked (``torch.stack``)."""
    elems = _to_tensor(elems)
    (x_in,), out, body, refs = _loop_body(fn, [_drop_axis(_avals_of(elems), 0)], ['elem'])
    out_dt = _torch_dtype(_normalize_dtype(dtype)) if dtype is not None else None
    out_aval = _avals_of(out)[0]

    @_context_op
    def op(ctx, xs, _refs):
        results = []
        outer = body.outer_values(ctx)
        elems = torch.unbind(xs, 0)    # one unbind: its gradient is one stack
        for i in range(xs.shape[0]):
            with _tracing_loop_body():
                v = _value(body.run(ctx, {x_in.id: elems[i]}, outer).memo[out.id])
            results.append(v.to(out_dt) if out_dt is not None else v)
        if not results:
            return torch.zeros((0,) + tuple(out_aval.shape),
                               dtype=out_dt if out_dt is not None else out_aval.dtype)
        return torch.stack(results)
    return _loop_node(op, (elems, refs), out, lead=elems, dt=out_dt)


def _loop_node(op, args, out, lead=None, dt=None):
    leaves, treedef = _flatten(args)
    avals = []
    for p in range(2):
        o = _avals_of(out)[p]
        shape = tuple(o.shape)
        if lead is not None:
            shape = (_avals_of(lead)[p].shape[0],) + shape
        avals.append(_Spec(shape, dt if dt is not None else o.dtype))
    node = Tensor(op, leaves, treedef, tuple(avals))
    node.hidden = [out]
    node._uses_learning_phase = getattr(out, '_uses_learning_phase', False)
    return node


def _fold(fn, elems, initializer, reverse_order):
    elems = _to_tensor(elems)
    e_av = _drop_axis(_avals_of(elems), 0)
    if initializer is None:
        init = elems[-1] if reverse_order else elems[0]
        rest = elems[:-1] if reverse_order else elems[1:]
    else:
        init, rest = _to_tensor(initializer), elems
    (acc_in, x_in), out, body, refs = _loop_body(fn, [_avals_of(init), e_av], ['acc', 'elem'])

    @_context_op
    def op(ctx, a0, xs, _refs):
        acc = _value(a0)
        order = range(xs.shape[0] - 1, -1, -1) if reverse_order else range(xs.shape[0])
        outer = body.outer_values(ctx)
        elems = torch.unbind(xs, 0)
        for i in order:
            with _tracing_loop_body():
                v = body.run(ctx, {acc_in.id: acc, x_in.id: elems[i]}, outer).memo[out.id]
            acc = _value(v).to(acc.dtype)
        return acc
    leaves, treedef = _flatten((init, rest, refs))
    if not _builtin_any(isinstance(v, Tensor) for v in leaves):
        return op(_Context(), init, rest, refs)
    node = Tensor(op, leaves, treedef, _avals_of(init))
    node.hidden = [out]
    return node


def foldl(fn, elems, initializer=None, name=None):
    """A Python loop from the first element; ``fn(acc, x)`` built once on stand-ins."""
    return _fold(fn, elems, initializer, False)


def foldr(fn, elems, initializer=None, name=None):
    """A Python loop from the last element; ``fn(acc, x)`` built once on stand-ins."""
    return _fold(fn, elems, initializer, True)
