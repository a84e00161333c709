"""Values, functions and gradients on CNTK 2.7: the engine-level functions of the names of
:mod:`keras_backend.api.functions`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import builtins
import contextlib
import sys

import numpy as np

from .. import generic
from .core import (C, Function, int_shape, _CONTROL_UPDATES, _evaluate, _GRADIENT_OF,
                   _is_engine_tensor, _numpy_op, _PassThrough, _static_shape, _to_tensor, _var)
from .tensors import eval

#: this module: the functions of ``generic`` bound here read ``set_value`` and ``int_shape``
#: from it
_K = sys.modules[__name__]


def get_value(x):
    """Same as ``eval`` (any tensor without inputs works)."""
    return eval(x)


def batch_get_value(ops):
    """Evaluated in one CNTK pass."""
    return _evaluate(list(ops)) if ops else []


def set_value(x, value):
    """Writes the CNTK parameter's ``value``."""
    v = _var(x)
    v.value = np.asarray(value, dtype=v.dtype)


batch_set_value = generic.batch_set_value(_K)


get_variable_shape = generic.get_variable_shape(_K)


def print_tensor(x, message=''):
    """An identity ``UserFunction`` node that prints ``message`` and the value whenever it is
    evaluated."""
    x = _to_tensor(x)

    def show(value):
        print(message, value)
        sys.stdout.flush()
    return C.user_function(_PassThrough(x, show))


def function(inputs, outputs, updates=None, **kwargs):
    """``C.combine`` of the outputs and the ``C.assign`` updates, which write after every output
    has read the old values; a training step (updates from one loss's ``gradients``) runs as one
    forward pass, one backward pass and a ``C.universal`` learner. ``name`` is the only keyword."""
    for k in kwargs:
        if k != 'name':
            raise ValueError('function: unexpected keyword argument %r (CNTK accepts only '
                             '"name")' % (k,))
    return Function(inputs, outputs, updates=updates, name=kwargs.get('name'))


def gradients(loss, variables):
    """CNTK has no symbolic gradient: each gradient is a numpy graph node (``UserFunction``)
    running CNTK's backward pass (``Function.grad``) of ``loss`` (summed when not scalar); no
    gradients of gradients (ValueError); ``variables`` must be variables or placeholders."""
    single = not isinstance(variables, (list, tuple))
    variables = [variables] if single else list(variables)
    for v in variables:
        vv = _var(v) if _is_engine_tensor(v) else None
        if vv is None or not (vv.is_parameter or vv.is_input):
            raise ValueError('gradients: every variable must be a K.variable or a placeholder '
                             '(CNTK differentiates with respect to graph leaves), got %r' % (v,))
    loss = _to_tensor(loss)
    loss_f = C.combine([_var(loss)]) if not isinstance(loss, C.Function) else loss
    args = list(loss_f.arguments)
    wrt = [_var(v) for v in variables]
    loss_uids = set(p.uid for p in loss_f.parameters) | set(a.uid for a in args)
    dt = _var(loss).dtype
    wrt_uids = set(w.uid for w in wrt)
    grad_f, grad_args, grad_wrt = loss_f, args, dict((w.uid, w) for w in wrt)
    if builtins.any(a.uid in wrt_uids and not a.needs_gradient for a in args):
        # inputs are built without gradients: differentiate a clone whose
        # inputs (all of them, so that each keeps a known counterpart) do
        fresh = [C.input_variable(a.shape, dtype=a.dtype, dynamic_axes=a.dynamic_axes,
                                  needs_gradient=a.uid in wrt_uids, name=a.name)
                 for a in args]
        grad_f = loss_f.clone(C.CloneMethod.share, dict(zip(args, fresh)))
        grad_args = fresh
        grad_wrt.update((a.uid, f) for a, f in zip(args, fresh) if a.uid in wrt_uids)

    def run(*values):
        used = [w for w in wrt if w.uid in loss_uids]
        grads = {}
        if used:
            feed = dict(zip(grad_args, values[:len(args)]))
            targets = [grad_wrt[w.uid] for w in used]
            g = grad_f.grad(feed, wrt=targets, as_numpy=True) if feed else \
                grad_f.grad({}, wrt=targets, as_numpy=True)
            if not isinstance(g, dict):
                g = {targets[0]: g}
            for w, t in zip(used, targets):
                grads[w.uid] = g[t]
        out = []
        for w, v in zip(wrt, variables):
            if w.uid in grads:
                out.append(np.asarray(grads[w.uid]))
            else:
                shp = tuple(values[args.index(w)].shape) if w.is_input and w in args \
                    else tuple(w.shape)
                out.append(np.zeros(shp))
        return out

    outs = _numpy_op(args, run, [_static_shape(w) for w in wrt], dtype=np.dtype(dt),
                     name='gradients')
    for o, w in zip(outs, wrt):
        _GRADIENT_OF[o.uid] = (_var(loss), w)
    return outs


def stop_gradient(variables):
    """``C.stop_gradient`` (of each tensor of a list or tuple)."""
    if isinstance(variables, (list, tuple)):
        return type(variables)(C.stop_gradient(_to_tensor(v)) for v in variables)
    return C.stop_gradient(_to_tensor(variables))


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """CNTK has no control edges: the updates among ``control_inputs`` are recorded while the block
    is open, and ``identity(t)`` built inside it reads the values they write (see ``identity``);
    other ops and inputs are unaffected."""
    if control_inputs is not None and not isinstance(control_inputs, (list, tuple)):
        control_inputs = [control_inputs]
    group = [u for u in (control_inputs or [])
             if isinstance(u, C.Function) and hasattr(u, '_keras_target')]
    _CONTROL_UPDATES.append(group)
    try:
        yield
    finally:
        _CONTROL_UPDATES.pop()


symbolic = generic.unchanged('symbolic', 'Returns ``func`` unchanged (CNTK is always symbolic).')


eager = generic.unchanged('eager', 'Returns ``func`` unchanged (CNTK has no eager mode).')
