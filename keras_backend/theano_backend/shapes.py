"""Shape manipulation on Theano 1.0.5 / PyTensor: the engine-level functions of the names of
:mod:`keras_backend.api.shapes`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from __future__ import absolute_import, division, print_function

import numpy as np

from .. import common, shape_rules
from ..common import normalize_data_format
from .core import (records_keras_shape, T, _ball, _bslice, _constant_like, _engine,
                   _is_engine_tensor, _known_shape, _normalize_dtype, _size_argument, _to_tensor,
                   _with_shape)
from .helpers import _pad
from .tensors import is_sparse, to_dense


@records_keras_shape
def concatenate(tensors, axis=-1):
    """``T.concatenate``; 2-D sparse tensors use the engine's sparse ``vstack``
    (axis 0) or ``hstack`` (axis 1)."""
    if _ball(is_sparse(t) for t in tensors):
        nd = 2
        axis = shape_rules.normalize_axis(axis, nd)
        if axis == 0:
            return _engine.sparse.vstack(tensors, format='csr')
        return _engine.sparse.hstack(tensors, format='csr')
    tensors = [to_dense(_to_tensor(t)) for t in tensors]
    axis = shape_rules.normalize_axis(axis, tensors[0].ndim)
    return T.concatenate(tensors, axis=axis)


@records_keras_shape
def reshape(x, shape):
    """``T.reshape``."""
    x = _to_tensor(x)
    if isinstance(shape, (list, tuple)):
        shape = tuple(-1 if s is None else s
                      for s in shape_rules.sizes(shape, _is_engine_tensor, 'shape'))
        out = T.reshape(x, shape, ndim=len(shape))
        static = shape_rules.static_sizes(shape)
        known_in = _known_shape(x)
        if static.count(-1) == 1 and _ball(d is not None for d in known_in) and \
                _ball(s is not None for s in static):
            total = int(np.prod(known_in))
            rest = int(np.prod([s for s in static if s != -1]))
            static[static.index(-1)] = total // rest if rest else 0
        static = [None if s == -1 else s for s in static]
        out = _with_shape(out, static)
    else:
        length = _known_shape(shape)
        if length and length[0] is not None:
            # a shape tensor of known length (K.shape(y)): Theano 1.0.5 needs the rank
            out = T.reshape(x, shape, ndim=length[0])
        else:
            out = T.reshape(x, shape)
    # as Keras 2.3.1's Theano backend: Keras' Network reads it beside
    # _keras_shape (TimeDistributed calls a wrapped model on this result)
    out._uses_learning_phase = getattr(x, '_uses_learning_phase', False)
    return out


@records_keras_shape
def permute_dimensions(x, pattern):
    """``dimshuffle``."""
    x = _to_tensor(x)
    return x.dimshuffle(tuple(int(p) for p in pattern))


def _repeat_axis(x, factor, axis):
    return repeat_elements(x, factor, axis) if factor != 1 else x


def _bilinear_axis(x, factor, axis):
    """Upsample ``x`` by an integer ``factor`` along ``axis`` with
    tf.image.resize's bilinear rule (half-pixel centres, edges clamped)."""
    if factor == 1:
        return x
    nd = x.ndim
    s = _known_shape(x)

    def shifted(step):
        # neighbour at i + step, clamped at the edges
        if step > 0:
            body = x[tuple([_bslice(None)] * axis + [_bslice(1, None)])]
            edge = x[tuple([_bslice(None)] * axis + [_bslice(-1, None)])]
            return T.concatenate([body, edge], axis=axis)
        body = x[tuple([_bslice(None)] * axis + [_bslice(None, -1)])]
        edge = x[tuple([_bslice(None)] * axis + [_bslice(0, 1)])]
        return T.concatenate([edge, body], axis=axis)

    up = shifted(1)
    down = shifted(-1)
    phases = []
    for r in range(factor):
        delta = (r + 0.5) / factor - 0.5
        if delta >= 0:
            phases.append(x * _constant_like(x, 1. - delta) + up * _constant_like(x, delta))
        else:
            phases.append(down * _constant_like(x, -delta) + x * _constant_like(x, 1. + delta))
    stacked = T.stack(phases, axis=axis + 1)
    dims = [x.shape[i] for i in range(nd)]
    dims[axis] = dims[axis] * factor
    out = T.reshape(stacked, T.stack(dims), ndim=nd)
    new = list(s)
    if new[axis] is not None:
        new[axis] *= factor
    return _with_shape(out, new)


@records_keras_shape
def resize_images(x, height_factor, width_factor, data_format, interpolation='nearest'):
    """'nearest' repeats pixels (``T.repeat``); 'bilinear' blends neighbours with
    ``tf.image.resize``'s rule (half-pixel centres, no antialias)."""
    x = _to_tensor(x)
    data_format = normalize_data_format(data_format)
    interpolation = shape_rules.normalize_interpolation(interpolation)
    hf, wf = int(height_factor), int(width_factor)
    axes = (2, 3) if data_format == 'channels_first' else (1, 2)
    fn = _repeat_axis if interpolation == 'nearest' else _bilinear_axis
    return fn(fn(x, hf, axes[0]), wf, axes[1])


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    """``T.repeat`` along each spatial axis (nearest neighbour)."""
    x = _to_tensor(x)
    data_format = normalize_data_format(data_format)
    factors = (int(depth_factor), int(height_factor), int(width_factor))
    axes = (2, 3, 4) if data_format == 'channels_first' else (1, 2, 3)
    for f, a in zip(factors, axes):
        x = _repeat_axis(x, f, a)
    return x


@records_keras_shape
def repeat_elements(x, rep, axis):
    """``T.repeat``."""
    x = _to_tensor(x)
    axis = shape_rules.normalize_axis(axis, x.ndim)
    out = T.repeat(x, int(rep), axis=axis)
    s = list(_known_shape(x))
    if s[axis] is not None:
        s[axis] *= int(rep)
    return _with_shape(out, s)


@records_keras_shape
def repeat(x, n):
    """``T.repeat`` along a new axis 1."""
    x = _to_tensor(x)
    n = shape_rules.sizes([n], _is_engine_tensor, 'n')[0]
    out = T.repeat(x.dimshuffle(0, 'x', 1), n, axis=1)
    s = _known_shape(x)
    return _with_shape(out, (s[0], n if isinstance(n, int) else None, s[1]))


def arange(start, stop=None, step=1, dtype='int32'):
    """``T.arange``, cast to ``dtype``."""
    if stop is None:
        start, stop = 0, start
    return T.cast(T.arange(start, stop, step), _normalize_dtype(dtype, 'arange'))


@records_keras_shape
def tile(x, n):
    """``T.tile``."""
    x = _to_tensor(x)
    n = shape_rules.sizes(n, _is_engine_tensor, 'n')
    if not isinstance(n, list):
        # a shape tensor (K.shape(y)): one repeat count per axis of x
        n = [n[i] for i in range(x.ndim)]
    reps = [1] * (x.ndim - len(n)) + n
    if len(reps) > x.ndim:
        extra = len(reps) - x.ndim
        x = x.dimshuffle(['x'] * extra + list(range(x.ndim)))
    s = _known_shape(x)
    out = T.tile(x, reps)      # a list of ints and scalar tensors (both engines take it)
    return _with_shape(out, [d * r if d is not None and isinstance(r, int) else None
                             for d, r in zip(s, reps)])


@records_keras_shape
def flatten(x):
    """The engine's ``flatten``."""
    x = _to_tensor(x)
    s = _known_shape(x)
    out = _engine.flatten(x)
    return _with_shape(out, (int(np.prod(s)) if _ball(d is not None for d in s) else None,))


@records_keras_shape
def batch_flatten(x):
    """``T.reshape`` to ``(batch, -1)``."""
    x = _to_tensor(x)
    s = _known_shape(x)
    rest = s[1:]
    n = int(np.prod(rest)) if _ball(d is not None for d in rest) else None
    size = _size_argument(n)
    size = -1 if size is None else size
    out = T.reshape(x, (x.shape[0], size), ndim=2)
    return _with_shape(out, (s[0], n))


@records_keras_shape
def expand_dims(x, axis=-1):
    """``dimshuffle`` adding a broadcastable axis."""
    x = _to_tensor(x)
    if axis < 0:
        axis = x.ndim + 1 + axis
    pattern = list(range(x.ndim))
    pattern.insert(axis, 'x')
    return x.dimshuffle(pattern)


@records_keras_shape
def squeeze(x, axis):
    """``dimshuffle`` when the axis is broadcastable, else ``T.reshape``."""
    x = _to_tensor(x)
    axis = shape_rules.normalize_axis(axis, x.ndim)
    s = list(_known_shape(x))
    if s[axis] not in (None, 1):   # the shared rules check the axis, not its size
        raise ValueError('squeeze: axis %d has size %d, expected 1' % (axis, s[axis]))
    if s[axis] == 1 and x.broadcastable[axis]:
        return x.dimshuffle([i for i in range(x.ndim) if i != axis])
    dims = [x.shape[i] for i in range(x.ndim) if i != axis]
    out = T.reshape(x, T.stack(dims) if dims else (), ndim=x.ndim - 1)
    del s[axis]
    return _with_shape(out, s)


@records_keras_shape
def temporal_padding(x, padding=(1, 1)):
    """``set_subtensor`` of ``x`` into zeros (``T.alloc``)."""
    x = _to_tensor(x)
    padding = shape_rules.normalize_tuple(padding, 2, 'padding')
    return _pad(x, [(0, 0), padding, (0, 0)])


def _spatial_padding(x, padding, n, data_format, name):
    x = _to_tensor(x)
    pairs = shape_rules.normalize_spatial_padding(padding, n)
    data_format = normalize_data_format(data_format)
    if data_format == 'channels_first':
        pads = [(0, 0), (0, 0)] + list(pairs)
    else:
        pads = [(0, 0)] + list(pairs) + [(0, 0)]
    return _pad(x, pads)


@records_keras_shape
def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    """``set_subtensor`` of ``x`` into zeros (``T.alloc``)."""
    return _spatial_padding(x, padding, 2, data_format, 'spatial_2d_padding')


@records_keras_shape
def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    """``set_subtensor`` of ``x`` into zeros (``T.alloc``)."""
    return _spatial_padding(x, padding, 3, data_format, 'spatial_3d_padding')


@records_keras_shape
def stack(x, axis=0):
    """``T.stack``."""
    xs = [_to_tensor(t) for t in x]
    nd = xs[0].ndim + 1
    axis = shape_rules.normalize_axis(axis, nd)
    return T.stack(xs, axis=axis)


@records_keras_shape
def one_hot(indices, num_classes):
    """``T.eq`` of the indices against ``arange(num_classes)``, cast to ``floatx()``."""
    indices = _to_tensor(indices, 'int64')
    classes = T.arange(num_classes)
    pattern = list(range(indices.ndim)) + ['x']
    out = T.cast(T.eq(indices.dimshuffle(pattern), classes), common.floatx())
    if not _is_engine_tensor(num_classes):
        out = _with_shape(out, tuple(_known_shape(indices)) + (int(num_classes),))
    return out


@records_keras_shape
def reverse(x, axes):
    """A ``::-1`` slice along each of ``axes``."""
    x = _to_tensor(x)
    if isinstance(axes, (int, np.integer)):
        axes = [axes]
    axes = [shape_rules.normalize_axis(int(a), x.ndim, 'axes') for a in axes]
    idx = [_bslice(None, None, -1) if i in axes else _bslice(None) for i in range(x.ndim)]
    return x[tuple(idx)]


@records_keras_shape
def slice(x, start, size):
    """Basic indexing, one slice per axis."""
    x = _to_tensor(x)
    start = list(start)
    size = list(size)
    idx = []
    static = []
    for d, b, n in zip(_known_shape(x), start, size):
        symbolic_ = _is_engine_tensor(n) or _is_engine_tensor(b)
        if not _is_engine_tensor(n) and int(n) == -1:
            idx.append(_bslice(b, None))
            static.append(d - int(b) if (d is not None and not symbolic_) else None)
        else:
            idx.append(_bslice(b, b + n))
            static.append(None if symbolic_ else int(n))
    return _with_shape(x[tuple(idx)], static)


@records_keras_shape
def pattern_broadcast(x, broadcastable):
    """Engine-dependent: Theano 1.0.5's ``patternbroadcast`` sets the whole pattern;
    PyTensor's ``specify_broadcastable`` marks the axes marked True, the others unchanged."""
    x = _to_tensor(x)
    pattern = tuple(bool(b) for b in broadcastable)
    return _engine.pattern_broadcast(x, pattern)
