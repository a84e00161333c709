"""Random on TensorFlow: the engine-level functions of the names of
:mod:`keras_backend.api.random`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import numbers

import numpy as np

from .core import graph_aware, tf, _normalize_dtype, _shared_constant
from .helpers import _op_seed, _shape_arg, _stateless_seed


def _with_eager_twin(t, make, shape, *params):
    """Graph tensor ``t`` of a random op, given ``_keras_backend_eager_twin``: a function
    computing the same draw's eager counterpart (``make``, a stateless op, with the same
    seed) when its shape and parameters are constants. ``variable`` uses it for a
    weight's initial value, which Keras 2.3.1 makes as a graph op inside the layer's name
    scope: the value comes from the same distribution and seed without compiling a
    program for it."""
    if isinstance(shape, list) and all(isinstance(p, numbers.Number) for p in params):
        t._keras_backend_eager_twin = make
    return t


def _shared_args(shape, dtype, *params):
    """``(shape,) + params`` for a random op built in the module graph, its constants shared
    there (``core._shared_constant``): a shape of ints and the float parameters (not
    TensorFlow's own defaults 0 and 1, ints, for which it builds no arithmetic). Keras 2.3.1
    draws every weight's initial value as graph ops in the layer's name scope (``variable``
    takes the value from the eager twin): a shape, a minimum and a maximum constant per
    weight, three of the seven ops of a ``glorot_uniform``. The same op, seed and
    arithmetic: the same values."""
    if not tf.as_dtype(dtype).is_floating or not isinstance(shape, list) or \
            not all(type(d) is int for d in shape):
        return (shape,) + params
    shared = _shared_constant(tuple(shape), tf.int32)
    if shared is None:
        return (shape,) + params
    out = [shared]
    for p in params:
        # (Keras' initialisers give numpy floats: ``glorot_uniform``'s limit is ``np.sqrt``)
        number = type(p) is float or isinstance(p, np.floating)
        c = _shared_constant(float(p), dtype) if number else None
        out.append(p if c is None else c)
    return tuple(out)


@graph_aware
def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Eagerly ``tf.random.stateless_normal`` (a seed gives the same values from
    process start); in a compiled function ``tf.random.normal``, the next values of its seeded
    sequence at each call. ``seed=None`` draws one from numpy's global generator."""
    dtype = _normalize_dtype(dtype, 'random_normal: dtype')
    seed = _op_seed(seed)
    shape = _shape_arg(shape)
    def make():
        return tf.random.stateless_normal(shape, _stateless_seed(seed), mean, stddev, dtype)
    if tf.executing_eagerly():
        return make()
    return _with_eager_twin(tf.random.normal(*_shared_args(shape, dtype, mean, stddev),
                                             dtype=dtype, seed=seed),
                            make, shape, mean, stddev)


@graph_aware
def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Eagerly ``tf.random.stateless_uniform``, in a compiled function
    ``tf.random.uniform``; seeds as ``random_normal``."""
    dtype = _normalize_dtype(dtype, 'random_uniform: dtype')
    seed = _op_seed(seed)
    shape = _shape_arg(shape)
    def make():
        return tf.random.stateless_uniform(shape, _stateless_seed(seed), minval, maxval, dtype)
    if tf.executing_eagerly():
        return make()
    return _with_eager_twin(tf.random.uniform(*_shared_args(shape, dtype, minval, maxval),
                                              dtype=dtype, seed=seed),
                            make, shape, minval, maxval)


@graph_aware
def random_binomial(shape, p=0.0, dtype=None, seed=None):
    """``random_uniform(shape) < p`` cast to ``dtype``; seeds as
    ``random_normal``."""
    dtype = _normalize_dtype(dtype, 'random_binomial: dtype')
    u = random_uniform(shape, 0.0, 1.0, dtype='float32', seed=seed)
    return tf.cast(u < tf.cast(p, 'float32'), dtype)


@graph_aware
def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Eagerly ``tf.random.stateless_truncated_normal``, in a compiled function
    ``tf.random.truncated_normal``; seeds as ``random_normal``."""
    dtype = _normalize_dtype(dtype, 'truncated_normal: dtype')
    seed = _op_seed(seed)
    shape = _shape_arg(shape)
    def make():
        return tf.random.stateless_truncated_normal(shape, _stateless_seed(seed), mean, stddev,
                                                    dtype)
    if tf.executing_eagerly():
        return make()
    return _with_eager_twin(tf.random.truncated_normal(*_shared_args(shape, dtype, mean,
                                                                     stddev),
                                                       dtype=dtype, seed=seed),
                            make, shape, mean, stddev)
