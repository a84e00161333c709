"""Values, functions and gradients on Theano 1.0.5 / PyTensor: the engine-level functions of the names of
:mod:`keras_backend.api.functions`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from __future__ import absolute_import, division, print_function

import contextlib
import sys

import numpy as np

from .. import generic
from .core import (eval, Function, int_shape, T, _ball, _CONTROL_SCOPES, _engine,
                   _FUNCTION_KWARGS, _serial_now, _to_tensor)
from .tensors import is_sparse

#: this module: the functions of ``generic`` bound here read ``set_value`` and ``int_shape``
#: from it
_K = sys.modules[__name__]


def get_value(x):
    """The shared variable's ``get_value()`` (a scipy matrix when sparse); other
    tensors are evaluated with ``eval``."""
    if isinstance(x, _engine.SharedVariable):
        return np.array(x.get_value()) if not is_sparse(x) else x.get_value()
    return eval(x)


def batch_get_value(ops):
    return [get_value(x) for x in ops]


def set_value(x, value):
    """The shared variable's ``set_value``, with the value cast to its dtype (its shape
    is checked against the variable's by ``checks``)."""
    x.set_value(np.asarray(value, dtype=x.dtype))


batch_set_value = generic.batch_set_value(_K)


get_variable_shape = generic.get_variable_shape(_K)


def print_tensor(x, message=''):
    """The engine's ``Print`` op: prints ``message`` and the value when evaluated."""
    x = _to_tensor(x)
    return _engine.Print(message)(x)


def function(inputs, outputs, updates=None, **kwargs):
    """The engine's ``function``, whose own keywords (``mode``, ``givens``,
    ``no_default_updates``, ...) it takes; PyTensor compiles with the C ``cvm``
    linker and ``fast_run`` rewrites unless the engine's flags set a mode or linker."""
    name = kwargs.pop('name', None)
    unknown = sorted(k for k in kwargs if k not in _FUNCTION_KWARGS)
    if unknown:
        raise ValueError('function: invalid keyword argument(s) %s; accepted: name, %s'
                         % (', '.join(unknown), ', '.join(_FUNCTION_KWARGS)))
    return Function(inputs, outputs, updates=updates, name=name, **kwargs)


def gradients(loss, variables):
    """``T.grad``; variables the loss does not depend on get zeros."""
    vs = list(variables) if isinstance(variables, (list, tuple)) else [variables]
    fixed = _engine.fix_broadcast([loss])[0]
    if fixed is not loss:
        # differentiate the broadcast-fixed graph unless that loses a variable
        # taken inside the rebuilt part of the graph
        before = set(_engine.ancestors([loss]))
        after = set(_engine.ancestors([fixed]))
        if _ball(v in after for v in vs if v in before):
            loss = fixed
    return list(T.grad(loss, vs, disconnected_inputs='ignore'))


def stop_gradient(variables):
    """The engine's ``disconnected_grad``."""
    many = isinstance(variables, (list, tuple))
    cut = [_engine.disconnected_grad(_to_tensor(v)) for v in (variables if many else [variables])]
    return type(variables)(cut) if many else cut[0]


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """The graph has no control edges: ops built inside the block that read a
    variable updated by ``control_inputs`` read its new value once compiled into a
    ``function`` (which still applies the update); tensors among them only order."""
    if control_inputs is not None and not isinstance(control_inputs, (list, tuple)):
        raise ValueError('control_dependencies: expected None or a list, got %r'
                         % (control_inputs,))
    writes = {}
    for u in control_inputs or []:
        if isinstance(u, tuple) and len(u) == 2 and isinstance(u[0], _engine.SharedVariable):
            writes[u[0]] = u[1]
    scope = [_serial_now(), None, writes]
    try:
        yield
    finally:
        scope[1] = _serial_now()
        if writes:
            _CONTROL_SCOPES.append(scope)


symbolic = generic.unchanged('symbolic', 'Returns ``func`` unchanged: every call is symbolic on '
                                         'this engine.')


eager = generic.unchanged('eager', 'Returns ``func`` unchanged: this engine is graph-only.')
