"""Values, functions and gradients on JAX: the engine-level functions of the names of
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
from .core import (Function, int_shape, jax, jnp, Tensor, Variable, _apply, _context_op,
                   _dependents, _flatten, _is_array_tree, _multi_node, _outputs,
                   _to_tensor)
from .tensors import eval, zeros_like

from jax import lax  # noqa: E402  (core imported it, or said how to install it)

#: this module: the functions of ``generic`` bound here read ``set_value`` and ``int_shape``
#: from it
_K = sys.modules[__name__]


def get_value(x):
    if isinstance(x, Variable):
        return np.array(x._value)
    return eval(x)


def batch_get_value(ops):
    return [get_value(x) for x in ops]


def set_value(x, value):
    if hasattr(value, 'toarray'):
        value = value.toarray()
    value = np.asarray(value, dtype=x.dtype)
    if value.shape != tuple(x.avals[0].shape) and value.size == _math.prod(x.avals[0].shape):
        value = value.reshape(x.avals[0].shape)
    x._assign(value)


batch_set_value = generic.batch_set_value(_K)


get_variable_shape = generic.get_variable_shape(_K)


def print_tensor(x, message=''):
    """``jax.debug.print`` of ``message`` and the value when it is computed."""
    x = _to_tensor(x)

    def op(v):
        jax.debug.print(message + '{v}', v=v)
        return v
    return _apply(op, x)


def function(inputs, outputs, updates=None, **kwargs):
    """One ``jax.jit`` program per input signature (see the design in
    ``jax_backend.core``); ``name`` is kept, other keywords are refused."""
    name = kwargs.pop('name', None)
    if kwargs:
        raise ValueError('function: invalid keyword argument(s) %s; accepted: name'
                         % ', '.join(sorted(kwargs)))
    return Function(inputs, outputs, updates=updates, name=name)


def gradients(loss, variables):
    """``jax.vjp`` of the graph between ``loss`` (summed when not a scalar) and
    ``variables`` (any tensors); a tensor the loss does not depend on gets zeros."""
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

    @_context_op
    def op(ctx, loss_leaf, *wrt_vals):
        def f(*vals):
            child = ctx.child(local, dict((w.id, v) for w, v in zip(sym, vals)))
            total = jnp.sum(child.value(loss))
            # the forward values, handed back so that the program computes them once
            return total, dict((i, v) for i, v in child.memo.items()
                               if i in local and _is_array_tree(v))
        out, pullback, forward = jax.vjp(f, *wrt_vals, has_aux=True)
        for i, v in forward.items():
            ctx.memo.setdefault(i, v)
        return tuple(pullback(jnp.ones_like(out)))
    op.lazy_leaves = (0,)
    op.hands_forward = True   # Function evaluates these first (see Function.__init__)

    # the loss is a leaf so that graph walks see it; the op evaluates it itself (the
    # context leaves it lazy), and the function reads its value from the gradient's pass
    leaves, treedef = _flatten((loss,) + tuple(sym))
    avals = tuple(tuple(jax.ShapeDtypeStruct(w.avals[p].shape, w.avals[p].dtype) for w in sym)
                  for p in range(2))
    node = _multi_node(op, leaves, treedef, avals)
    grads = _outputs(node, len(sym))
    it = iter(grads)
    return [next(it) if isinstance(w, Tensor) else jnp.zeros_like(w) for w in wrt]


def stop_gradient(variables):
    """``lax.stop_gradient``."""
    many = isinstance(variables, (list, tuple))
    cut = [_apply(lax.stop_gradient, _to_tensor(v)) for v in (variables if many else [variables])]
    return type(variables)(cut) if many else cut[0]


control_dependencies = sections.control_dependencies(core, doc="""\
Ops made inside the block come after the updates among ``control_inputs``: they
    read those variables' new values, and a ``function`` computing them applies the
    updates (once per call, also when they are among its ``updates``). Tensors among
    ``control_inputs`` order nothing: a function is one pure program.""")


symbolic = generic.unchanged('symbolic', """Returns ``func`` unchanged.""")


eager = generic.unchanged('eager', """Returns ``func`` unchanged.""")
