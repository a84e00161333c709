"""Shape manipulation on TensorFlow: the engine-level functions of the names of
:mod:`keras_backend.api.shapes`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import numpy as np

from .. import shape_rules
from ..common import floatx, normalize_data_format
from .core import (graph_aware, is_tensor, tf, _keras_meta, _normalize_dtype, _set_shape,
                   _shared_constant, _to_tensor)
from .helpers import py_all, py_any, py_builtin_max, _dyn_dims, _is_tf_tensor, _shape_arg
from .tensors import ndim


@graph_aware
def concatenate(tensors, axis=-1):
    """``tf.concat``; all-sparse inputs give a sparse result (``tf.sparse.concat``),
    a mix is densified."""
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise ValueError('concatenate: expected a non-empty list of tensors, got %r'
                         % (tensors,))
    rank = ndim(tensors[0]) if is_tensor(tensors[0]) else np.ndim(tensors[0])
    if axis < 0 and rank is not None:
        axis = axis % rank if rank else 0
    if py_all(isinstance(t, tf.SparseTensor) for t in tensors):
        return tf.sparse.concat(axis, list(tensors))
    ts = [tf.sparse.to_dense(t) if isinstance(t, tf.SparseTensor) else _to_tensor(t)
          for t in tensors]
    if len(ts) > 1 and type(axis) is int:
        # the axis as the module graph's shared constant (DenseNet121: 58 concatenations)
        shared = _shared_constant(axis, tf.int32)
        if shared is not None:
            return tf.concat(ts, shared)
    return tf.concat(ts, axis)


@graph_aware
def reshape(x, shape):
    """``tf.reshape``; None entries of ``shape`` count as -1."""
    if isinstance(shape, (list, tuple)):
        shape = _shape_arg([-1 if d is None else d for d in shape])
    return tf.reshape(_to_tensor(x), shape)


@graph_aware
def permute_dimensions(x, pattern):
    """``tf.transpose``."""
    x = _to_tensor(x)
    return tf.transpose(x, tuple(int(p) for p in pattern))


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError('%s: expected a positive integer, got %r' % (name, value))
    return int(value)


@graph_aware
def resize_images(x, height_factor, width_factor, data_format, interpolation='nearest'):
    """'nearest' repeats entries (``repeat_elements``); 'bilinear' is
    ``tf.image.resize`` (half-pixel centres, no antialias)."""
    hf = _positive_int(height_factor, 'height_factor')
    wf = _positive_int(width_factor, 'width_factor')
    data_format = normalize_data_format(data_format)
    interpolation = shape_rules.normalize_interpolation(interpolation)
    x = _to_tensor(x)
    if interpolation == 'nearest':
        axes = (1, 2) if data_format == 'channels_last' else (2, 3)
        out = repeat_elements(x, hf, axes[0])
        return repeat_elements(out, wf, axes[1])
    if data_format == 'channels_first':
        x = tf.transpose(x, shape_rules.to_channels_last_perm(4))
    dims = _dyn_dims(x)
    size = _shape_arg([dims[1] * hf, dims[2] * wf])
    out = tf.image.resize(x, size, method='bilinear', antialias=False)
    if out.dtype != x.dtype:
        out = tf.cast(out, x.dtype)
    if data_format == 'channels_first':
        out = tf.transpose(out, shape_rules.to_channels_first_perm(4))
    return out


@graph_aware
def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    """Repeats entries (``repeat_elements``) along each spatial axis."""
    factors = (_positive_int(depth_factor, 'depth_factor'),
               _positive_int(height_factor, 'height_factor'),
               _positive_int(width_factor, 'width_factor'))
    data_format = normalize_data_format(data_format)
    x = _to_tensor(x)
    first = 1 if data_format == 'channels_last' else 2
    out = x
    for i, f in enumerate(factors):
        out = repeat_elements(out, f, first + i)
    return out


@graph_aware
def repeat_elements(x, rep, axis):
    """``tf.tile`` along an inserted axis, then ``tf.reshape``."""
    x = _to_tensor(x)
    rep = int(rep)
    if rep < 0:
        raise ValueError('rep: expected a non-negative int, got %r' % (rep,))
    n = x.shape.rank
    axis = shape_rules.normalize_axis(int(axis), n)
    static = x.shape.as_list()
    dims = _dyn_dims(x)
    y = tf.expand_dims(x, axis + 1)
    multiples = [1] * (n + 1)
    multiples[axis + 1] = rep
    y = tf.tile(y, multiples)
    new_dims = list(dims)
    new_dims[axis] = dims[axis] * rep
    y = tf.reshape(y, _shape_arg(new_dims))
    static[axis] = None if static[axis] is None else static[axis] * rep
    return _keras_meta(_set_shape(y, static))


@graph_aware
def repeat(x, n):
    """``tf.tile`` of ``x`` with an inserted axis 1."""
    x = _to_tensor(x)
    return tf.tile(tf.expand_dims(x, 1), _shape_arg([1, n, 1]))


@graph_aware
def arange(start, stop=None, step=1, dtype='int32'):
    """``tf.range`` computed in int64 (float64 when an argument is a float), then cast to
    ``dtype``; scalar tensors are accepted as bounds."""
    dtype = _normalize_dtype(dtype, 'arange: dtype')
    if stop is None:
        start, stop = 0, start
    values = (start, stop, step)
    for name, v in zip(('start', 'stop', 'step'), values):
        # the shared rules let any tensor through; tf.range needs a scalar
        if isinstance(v, (tf.Tensor, tf.Variable)) and v.shape.rank not in (None, 0):
            raise ValueError('arange: %s must be a scalar, got shape %s'
                             % (name, tuple(v.shape.as_list())))

    def _floating(v):
        if isinstance(v, (tf.Tensor, tf.Variable)):
            return not v.dtype.is_integer
        return isinstance(v, (float, np.floating))

    kind = 'float64' if py_any(_floating(v) for v in values) else 'int64'
    if py_all(not isinstance(v, (tf.Tensor, tf.Variable)) for v in values):
        count = py_builtin_max(int(np.ceil((stop - start) / float(step))), 0)
    else:
        start, stop, step = [tf.cast(v, kind) if isinstance(v, (tf.Tensor, tf.Variable))
                             else tf.constant(v, kind) for v in values]
        span = tf.cast(stop - start, 'float64') / tf.cast(step, 'float64')
        count = tf.maximum(tf.cast(tf.math.ceil(span), 'int64'), tf.constant(0, 'int64'))
    out = tf.range(count, dtype=kind) * tf.cast(step, kind) + tf.cast(start, kind)
    return tf.cast(out, dtype)


@graph_aware
def tile(x, n):
    """``tf.tile``; an ``n`` longer than ``ndim(x)`` first prepends length-1 axes to ``x``
    (numpy's rule)."""
    x = _to_tensor(x)
    n = shape_rules.sizes(n, _is_tf_tensor, 'n')
    if isinstance(n, list):
        rank = x.shape.rank
        if len(n) < rank:
            n = [1] * (rank - len(n)) + n
        elif len(n) > rank:
            x = tf.reshape(x, _shape_arg([1] * (len(n) - rank) + _dyn_dims(x)))
    return tf.tile(x, _shape_arg(n))


@graph_aware
def flatten(x):
    """``tf.reshape``."""
    return tf.reshape(_to_tensor(x), [-1])


@graph_aware
def batch_flatten(x):
    """``tf.reshape``."""
    x = _to_tensor(x)
    static = x.shape.as_list()
    rest = static[1:]
    if py_all(d is not None for d in rest):
        size = int(np.prod(rest, dtype=np.int64))
        if size > 0 or static[0] is not None:
            out = tf.reshape(x, _shape_arg([static[0] if size == 0 else -1, size]))
            return _set_shape(out, (static[0], size))
    out = tf.reshape(x, tf.stack([tf.shape(x)[0], -1]))
    return out


@graph_aware
def expand_dims(x, axis=-1):
    """``tf.expand_dims``."""
    return tf.expand_dims(_to_tensor(x), int(axis))


@graph_aware
def squeeze(x, axis):
    """``tf.squeeze``."""
    x = _to_tensor(x)
    n = x.shape.rank
    a = shape_rules.normalize_axis(int(axis), n)
    if n is not None and x.shape[a] is not None and x.shape[a] != 1:
        raise ValueError('squeeze: axis %d has length %d, expected 1' % (axis, x.shape[a]))
    return tf.squeeze(x, [a])


@graph_aware
def temporal_padding(x, padding=(1, 1)):
    """``tf.pad``."""
    x = _to_tensor(x)
    pad = shape_rules.normalize_spatial_padding([padding], 1)[0]
    return tf.pad(x, [[0, 0], list(pad), [0, 0]])


def _spatial_padding(x, padding, n, data_format):
    x = _to_tensor(x)
    pads = shape_rules.normalize_spatial_padding(padding, n)
    data_format = normalize_data_format(data_format)
    if data_format == 'channels_last':
        full = [[0, 0]] + [list(p) for p in pads] + [[0, 0]]
    else:
        full = [[0, 0], [0, 0]] + [list(p) for p in pads]
    return tf.pad(x, full)


@graph_aware
def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    """``tf.pad``."""
    return _spatial_padding(x, padding, 2, data_format)


@graph_aware
def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    """``tf.pad``."""
    return _spatial_padding(x, padding, 3, data_format)


@graph_aware
def stack(x, axis=0):
    """``tf.stack``."""
    return tf.stack([_to_tensor(t) for t in x], axis=axis)


@graph_aware
def one_hot(indices, num_classes):
    """``tf.one_hot``; float indices are cast to int32."""
    indices = _to_tensor(indices)
    if not indices.dtype.is_integer:
        indices = tf.cast(indices, 'int32')
    depth = num_classes if _is_tf_tensor(num_classes) else int(num_classes)
    return tf.one_hot(indices, depth, dtype=floatx())


@graph_aware
def reverse(x, axes):
    """``tf.reverse``."""
    x = _to_tensor(x)
    if isinstance(axes, (int, np.integer)):
        axes = [axes]
    return tf.reverse(x, [shape_rules.normalize_axis(int(a), x.shape.rank) for a in axes])


@graph_aware
def slice(x, start, size):
    """``tf.slice``."""
    x = _to_tensor(x)
    if isinstance(start, (list, tuple)) and isinstance(size, (list, tuple)):
        n = x.shape.rank
        if n is not None and (len(start) != n or len(size) != n):
            raise ValueError('slice: start and size need %d entries, got %r and %r'
                             % (n, start, size))
    return tf.slice(x, start, size)


def pattern_broadcast(x, broadcastable):
    """TensorFlow broadcasts any length-1 axis: the pattern is only checked
    against ``ndim(x)`` and ``x`` is returned as is."""
    try:
        pattern = [bool(b) for b in broadcastable]
    except TypeError:
        raise ValueError('broadcastable: expected a sequence of bools, got %r'
                         % (broadcastable,))
    n = ndim(x)
    if n is not None and len(pattern) != n:
        raise ValueError('broadcastable: expected %d entries (one per axis of x), got %r'
                         % (n, broadcastable))
    return x
