"""Random on TensorFlow: the engine-level functions of the names of
:mod:`keras_backend.api.random`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from .core import graph_aware, tf, _normalize_dtype
from .helpers import _op_seed, _shape_arg, _stateless_seed


@graph_aware
def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Eagerly ``tf.random.stateless_normal`` (a seed gives the same values from
    process start); in a compiled function ``tf.random.normal``, the next values of its seeded
    sequence at each call. ``seed=None`` draws one from numpy's global generator."""
    dtype = _normalize_dtype(dtype, 'random_normal: dtype')
    seed = _op_seed(seed)
    shape = _shape_arg(shape)
    if tf.executing_eagerly():
        return tf.random.stateless_normal(shape, _stateless_seed(seed), mean, stddev, dtype)
    return tf.random.normal(shape, mean, stddev, dtype=dtype, seed=seed)


@graph_aware
def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Eagerly ``tf.random.stateless_uniform``, in a compiled function
    ``tf.random.uniform``; seeds as ``random_normal``."""
    dtype = _normalize_dtype(dtype, 'random_uniform: dtype')
    seed = _op_seed(seed)
    shape = _shape_arg(shape)
    if tf.executing_eagerly():
        return tf.random.stateless_uniform(shape, _stateless_seed(seed), minval, maxval, dtype)
    return tf.random.uniform(shape, minval, maxval, dtype=dtype, seed=seed)


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
    if tf.executing_eagerly():
        return tf.random.stateless_truncated_normal(shape, _stateless_seed(seed), mean, stddev,
                                                    dtype)
    return tf.random.truncated_normal(shape, mean, stddev, dtype=dtype, seed=seed)
