"""Values, functions and gradients on PyTorch: the engine-level functions of the names of
:mod:`keras_backend.api.functions`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import math as _math
import sys

import numpy as np

from .. import generic
from ..eager_graph import sections
from . import core
from .core import (Function, int_shape, torch, Tensor, Variable, _apply, _context_op,
                   _dependents, _flatten, _GRAD_DEPTH, _host, _is_array_tree, _multi_node,
                   _outputs, _Plan, _PROBING, _Spec, _to_tensor)
from .tensors import eval, zeros_like

#: this module: the functions of ``generic`` bound here read ``set_value`` and ``int_shape``
#: from it
_K = sys.modules[__name__]


def get_value(x):
    if isinstance(x, Variable):
        return x.numpy()
    return eval(x)


def batch_get_value(ops):
    return [get_value(x) for x in ops]


def set_value(x, value):
    if hasattr(value, 'toarray'):
        value = value.toarray()
    if isinstance(value, torch.Tensor):
        value = _host(value)
    dt = np.float32 if x.dtype == 'bfloat16' else x.dtype
    value = np.asarray(value, dtype=dt)
    if value.shape != tuple(x.avals[0].shape) and value.size == _math.prod(x.avals[0].shape):
        value = value.reshape(x.avals[0].shape)
    x._assign(value)


batch_set_value = generic.batch_set_value(_K)


get_variable_shape = generic.get_variable_shape(_K)


def print_tensor(x, message=''):
    """Prints ``message`` and the value (to stdout) each time it is computed."""
    x = _to_tensor(x)

    def op(v):
        if not _PROBING[0]:
            print(message + str(_host(v)))
            sys.stdout.flush()
        return v
    op.stateful = True
    return _apply(op, x)


def function(inputs, outputs, updates=None, **kwargs):
    """One callable evaluating the graph with eager ``torch`` ops, variables updated in
    place (see the design in ``torch_backend.core``); ``name`` is kept, other keywords
    are refused."""
    name = kwargs.pop('name', None)
    if kwargs:
        raise ValueError('function: invalid keyword argument(s) %s; accepted: name'
                         % ', '.join(sorted(kwargs)))
    return Function(inputs, outputs, updates=updates, name=name)


def _source(v):
    """A source of a gradient pass: ``v`` itself joined to the graph that made it where a
    gradient pass around this one differentiates it, else a fresh leaf requiring grad."""
    if not isinstance(v, torch.Tensor):
        v = torch.as_tensor(np.asarray(v))
    if v.requires_grad:
        return v.view_as(v)
    return v.detach().requires_grad_(True)


def gradients(loss, variables):
    """``torch.autograd.grad`` of the graph between ``loss`` (summed when not a scalar) and
    ``variables`` (any tensors), recomputed with them requiring grad; a tensor the loss
    does not depend on gets zeros; an integer one gets zeros."""
    many = isinstance(variables, (list, tuple))
    wrt = list(variables) if many else [variables]
    loss = _to_tensor(loss)
    wrt = [_to_tensor(w) for w in wrt]
    sym = [w for w in wrt if isinstance(w, Tensor)]
    if not isinstance(loss, Tensor) or not sym:
        return [zeros_like(w) for w in wrt]
    local = _dependents([loss], sym)
    for w in sym:
        local.discard(w.id)
    forward = _Plan([loss], local)

    @_context_op
    def op(ctx, loss_leaf, *wrt_vals):
        nested = _GRAD_DEPTH[0] > 0
        diff = [v.is_floating_point() or v.is_complex() for v in wrt_vals]
        with torch.enable_grad():
            _GRAD_DEPTH[0] += 1
            try:
                sources = [_source(v) if d else v for v, d in zip(wrt_vals, diff)]
                child = forward.run(ctx, dict((w.id, s) for w, s in zip(sym, sources)))
                total = child.memo[loss.id]
                if not isinstance(total, torch.Tensor):
                    total = torch.as_tensor(total)
                total = total.sum()
                wanted = [s for s, d in zip(sources, diff) if d]
                if wanted and total.requires_grad:
                    found = torch.autograd.grad(total, wanted, allow_unused=True,
                                                create_graph=nested)
                else:
                    found = [None] * len(wanted)
            finally:
                _GRAD_DEPTH[0] -= 1
        # the forward values, handed to the context so that the function computes them once
        for i, v in child.memo.items():
            if i in local and _is_array_tree(v) and i not in ctx.memo:
                ctx.memo[i] = v if nested else _detached(v)
        it = iter(found)
        out = []
        for v, d in zip(wrt_vals, diff):
            g = next(it) if d else None
            if g is None:
                g = torch.zeros_like(v)
            out.append(g if nested else g.detach())
        return tuple(out)
    op.lazy_leaves = (0,)
    op.hands_forward = True   # Function evaluates these first (see Function.__init__)

    # the loss is a leaf so that graph walks see it; the op evaluates it itself (the
    # context leaves it lazy), and the function reads its value from the gradient's pass
    leaves, treedef = _flatten((loss,) + tuple(sym))
    avals = tuple(tuple(_Spec(w.avals[p].shape, w.avals[p].dtype) for w in sym)
                  for p in range(2))
    node = _multi_node(op, leaves, treedef, avals)
    grads = _outputs(node, len(sym))
    it = iter(grads)
    return [next(it) if isinstance(w, Tensor) else torch.zeros_like(w) for w in wrt]


def _detached(v):
    if isinstance(v, (tuple, list)):
        return type(v)(_detached(e) for e in v)
    return v.detach()


def stop_gradient(variables):
    """``Tensor.detach``."""
    many = isinstance(variables, (list, tuple))
    cut = [_apply(lambda v: v.detach(), _to_tensor(v))
           for v in (variables if many else [variables])]
    return type(variables)(cut) if many else cut[0]


control_dependencies = sections.control_dependencies(core, doc="""\
Ops made inside the block come after the updates among ``control_inputs``: they
    read those variables' new values, and a ``function`` computing them applies the
    updates (once per call, also when they are among its ``updates``). Tensors among
    ``control_inputs`` order nothing: a function computes what it needs in order.""")


symbolic = generic.unchanged('symbolic', """Returns ``func`` unchanged.""")


eager = generic.unchanged('eager', """Returns ``func`` unchanged.""")
