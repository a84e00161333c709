"""Variable updates on TensorFlow: the engine-level functions of the names of
:mod:`keras_backend.api.updates`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from .. import checks
from .core import (graph_aware, tf, _constant_like, _has_variable, _is_symbolic, _to_tensor,
                   _Update)


def _make_update(x, value, mode, name):
    if not isinstance(x, tf.Variable):
        raise ValueError('%s: x must be a variable, got %r' % (name, x))
    if isinstance(value, tf.SparseTensor):
        raise ValueError('%s: the new value must be dense, got a sparse tensor' % name)
    if not (_is_symbolic(value) or isinstance(value, (tf.Tensor, tf.Variable)) or
            _has_variable(value)):
        try:
            with tf.init_scope():
                value = _to_tensor(value, x.dtype)
        except (TypeError, ValueError) as e:
            raise ValueError('%s: cannot convert the new value to %s (%s)'
                             % (name, x.dtype.name, e))
    vshape = tf.TensorShape(getattr(value, 'shape', None))
    if vshape.rank and tuple(vshape.as_list()) != tuple(x.shape.as_list()):
        try:
            tf.broadcast_static_shape(vshape, x.shape)
        except ValueError:
            raise ValueError('%s: the new value has shape %s, the variable %s'
                             % (name, tuple(vshape.as_list()), tuple(x.shape.as_list())))
    return _Update(x, value, mode)


def update(x, new_x):
    """Builds a ``tf.Variable.assign`` that runs only when a ``function`` lists it in
    ``updates`` (after the outputs) or under ``eval`` (once); ``new_x`` is read again at every
    run. ``control_dependencies`` accepts it too."""
    return _make_update(x, new_x, 'assign', 'update')


def update_add(x, increment):
    """``tf.Variable.assign_add``, run as ``update``'s assignment is."""
    return _make_update(x, increment, 'add', 'update_add')


def update_sub(x, decrement):
    """``tf.Variable.assign_sub``, run as ``update``'s assignment is."""
    return _make_update(x, decrement, 'sub', 'update_sub')


@graph_aware
def _moving_average_value(x, value, momentum):
    value = _to_tensor(value, x.dtype)
    if checks._is_number(momentum):
        # 1 - momentum in Python, as TensorFlow 1's assign_moving_average took it (one
        # constant, not two and a subtraction in every BatchNormalization's graph)
        rest = _constant_like(value, 1. - float(momentum))
        return x * _constant_like(value, momentum) + value * rest
    momentum = _constant_like(value, momentum)
    return x * momentum + value * (1 - momentum)


def moving_average_update(x, value, momentum):
    """An ``update`` (``tf.Variable.assign``) whose value reads ``x``
    when it runs."""
    if not isinstance(x, tf.Variable):
        raise ValueError('moving_average_update: x must be a variable, got %r' % (x,))
    return update(x, _moving_average_value(x, value, momentum))
