"""Values, functions and gradients on TensorFlow: the engine-level functions of the names of
:mod:`keras_backend.api.functions`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import contextlib
import functools
import sys

import numpy as np

from .. import generic
from .core import graph_aware, int_shape, tf, _Function, _graph, _is_symbolic, _Update
from .helpers import py_any
from .tensors import eval

#: this module: the functions of ``generic`` bound here read ``set_value`` and ``int_shape``
#: from it
_K = sys.modules[__name__]


def get_value(x):
    """``eval``: a graph tensor that needs no feed is accepted too."""
    return eval(x)


def batch_get_value(ops):
    return [eval(x) for x in ops]


def set_value(x, value):
    """``tf.Variable.assign``, at once (eagerly)."""
    if not isinstance(x, tf.Variable):
        raise ValueError('set_value: x must be a variable, got %r' % (x,))
    arr = np.asarray(value, dtype=x.dtype.as_numpy_dtype)
    if tuple(arr.shape) != tuple(x.shape.as_list()):
        raise ValueError('set_value: value has shape %s, the variable has shape %s'
                         % (arr.shape, tuple(x.shape.as_list())))
    with tf.init_scope():
        x.assign(arr)


batch_set_value = generic.batch_set_value(_K)


get_variable_shape = generic.get_variable_shape(_K)


@graph_aware
def print_tensor(x, message=''):
    """``tf.print`` to stdout: an eager tensor is printed at once, a symbolic one
    each time a function computing it runs."""
    if tf.executing_eagerly():
        tf.print(message, x, output_stream=sys.stdout)
        return x
    op = tf.print(message, x, output_stream=sys.stdout)
    with tf.control_dependencies([op]):
        return tf.identity(x)


def function(inputs, outputs, updates=None, **kwargs):
    """Compiles the needed part of the adapter's graph once
    (``tf.compat.v1.wrap_function``). Extra keyword arguments: ``name``, ``fetches`` (ops run
    with it, results dropped), ``feed_dict`` (``{placeholder: value}`` fed at every call)."""
    allowed = ('name', 'fetches', 'feed_dict')
    unknown = sorted(k for k in kwargs if k not in allowed)
    if unknown:
        raise ValueError('function: unknown keyword argument(s) %s; the TensorFlow backend '
                         'accepts %s' % (', '.join(unknown), ', '.join(allowed)))
    if updates is not None and not isinstance(updates, (list, tuple)):
        raise ValueError('updates: expected a list, got %r' % (updates,))
    return _Function(inputs, outputs, updates, **kwargs)


def gradients(loss, variables):
    """``tf.gradients`` in the adapter's graph; zeros for unconnected variables,
    ``IndexedSlices`` densified. ``loss`` must be symbolic: an eager one raises ValueError."""
    single = not isinstance(variables, (list, tuple))
    var_list = [variables] if single else list(variables)
    if not _is_symbolic(loss):
        raise ValueError('gradients: loss must be a graph tensor built with this backend\'s '
                         'ops from placeholders and/or variables; got the eager value %r'
                         % (loss,))
    with _graph().as_default():
        grads = tf.gradients(loss, var_list,
                             unconnected_gradients=tf.UnconnectedGradients.ZERO)
        grads = [tf.convert_to_tensor(gr) if isinstance(gr, tf.IndexedSlices) else gr
                 for gr in grads]
    return grads


@graph_aware
def stop_gradient(variables):
    """``tf.stop_gradient``."""
    if isinstance(variables, (list, tuple)):
        return type(variables)(tf.stop_gradient(v) for v in variables)
    return tf.stop_gradient(variables)


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """``tf.control_dependencies``; symbolic inputs or updates build the block
    in the adapter's graph (eager inputs: a no-op). An update also in a function's ``updates``
    runs once per call."""
    if control_inputs is not None and not isinstance(control_inputs, (list, tuple)):
        control_inputs = [control_inputs]
    control_inputs = list(control_inputs or [])
    updates = [c for c in control_inputs if isinstance(c, _Update)]
    inputs = [c for c in control_inputs if not isinstance(c, _Update)]
    if tf.executing_eagerly() and (updates or py_any(
            _is_symbolic(c) or isinstance(c, tf.Operation) for c in inputs)):
        with _graph().as_default():
            inputs += [u.shared_op() for u in updates]
            with tf.control_dependencies(inputs) as ctx:
                yield ctx
    else:
        inputs += [u.shared_op() for u in updates]
        with tf.control_dependencies(inputs) as ctx:
            yield ctx


def symbolic(func):
    """Builds the ops inside the adapter's one symbolic graph (a ``FuncGraph``)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if not tf.executing_eagerly():
            return func(*args, **kwargs)
        with _graph().as_default():
            return func(*args, **kwargs)
    return wrapper


def eager(func):
    """``tf.init_scope``: runs eagerly even from inside graph building."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with tf.init_scope():
            return func(*args, **kwargs)
    return wrapper
