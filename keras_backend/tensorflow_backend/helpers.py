"""Helpers the sections of the TensorFlow ops share.

Dynamic sizes, shape and axis arguments, the channels-last layout of the convolutions, kernel
checks and random seeds; and the Python builtins (``py_all``, ``py_any``, ...) kept under other
names, for the sections that define the API's ``all``, ``any``, ``sum``, ``slice``, ``round``
and ``max``.
"""
import numpy as np

from .. import shape_rules
from .core import tf, _to_tensor


py_all = all
py_any = any
py_sum = sum
py_slice = slice
py_round = round
py_builtin_max = max


def _dyn_dims(x):
    """Per-axis sizes: python ints where static, scalar tensors otherwise."""
    static = x.shape.as_list()
    if py_all(d is not None for d in static):
        return static
    dyn = tf.shape(x)
    return [d if d is not None else dyn[i] for i, d in enumerate(static)]


def _is_tf_tensor(v):
    return isinstance(v, (tf.Tensor, tf.Variable))


def _shape_arg(dims):
    """A shape, size list or count (``shape_rules.sizes``: ints, numpy ints, scalar
    tensors, mixed) as ``tf`` ops take it: a list of ints, else an int32 tensor."""
    dims = shape_rules.sizes(dims, _is_tf_tensor)
    if not isinstance(dims, list):
        return tf.cast(dims, 'int32')
    if shape_rules.all_static(dims):
        return dims
    return tf.stack([tf.cast(d, 'int32') for d in dims])


def _int_tuple(shape, name):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return (int(shape),)
    try:
        out = tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise ValueError('%s: expected a tuple of ints, got %r' % (name, shape))
    if py_any(s < 0 for s in out):
        raise ValueError('%s: expected non-negative sizes, got %r' % (name, shape))
    return out


def _axis_arg(axis, ndim):
    """``axis`` (None, an int or a list of ints) with negative axes counted
    from ``ndim``; None stays None (all axes)."""
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return [shape_rules.normalize_axis(int(a), ndim) for a in axis]
    return shape_rules.normalize_axis(int(axis), ndim)


def _to_channels_last(x, data_format):
    """Move channels last when ``data_format`` is channels_first."""
    if data_format == 'channels_first':
        return tf.transpose(x, shape_rules.to_channels_last_perm(x.shape.rank))
    return x


def _from_channels_last(x, data_format):
    """Move channels back first when ``data_format`` is channels_first."""
    if data_format == 'channels_first':
        return tf.transpose(x, shape_rules.to_channels_first_perm(x.shape.rank))
    return x


def _check_kernel(kernel, rank, name='kernel'):
    kernel = _to_tensor(kernel)
    if kernel.shape.rank is not None and kernel.shape.rank != rank:
        raise ValueError('%s: expected a rank-%d kernel, got shape %s'
                         % (name, rank, tuple(kernel.shape.as_list())))
    return kernel


def _stateless_seed(seed):
    """A stateless-op seed pair for an int ``seed``: same seed, same values."""
    seed = int(seed)
    return tf.constant([seed & 0x7FFFFFFF, (seed >> 31) & 0x7FFFFFFF], dtype='int64')


def _op_seed(seed, name='seed'):
    """The op seed to use: ``seed``, or (None) one drawn from numpy's global
    generator, as Keras 2.3.1 does, so ``np.random.seed`` makes seedless
    random ops (initialisers, dropout) reproducible."""
    if seed is None:
        return int(np.random.randint(10e6))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError('%s: expected an int or None, got %r' % (name, seed))
    return int(seed)
