"""Shape manipulation on CNTK 2.7: the engine-level functions of the names of
:mod:`keras_backend.api.shapes`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import builtins

import numpy as np

from .. import shape_rules
from ..common import normalize_data_format
from .core import (C, _add_axis, _constant_like, _drop_axes, _drop_axis, _empty, _FreeAxis,
                   _is_engine_tensor, _keras_meta, _MAYBE_EMPTY, _nd, _np_dtype, _numpy_op,
                   _one_hot, _pad, _reshape, _resolve_sizes, _RunTime, _stack_mixed, _static_shape,
                   _to_tensor, _transpose_node, _var)
from .tensors import is_sparse, to_dense


def concatenate(tensors, axis=-1):
    """``C.splice``; zero-size parts are dropped (CNTK cannot compute them) and sparse inputs are
    densified first."""
    tensors = [to_dense(t) if is_sparse(t) else _to_tensor(t) for t in tensors]
    a = shape_rules.normalize_axis(axis, _nd(tensors[0]))
    # zero-size parts add nothing (and CNTK cannot compute them)
    kept = [t for t in tensors if _static_shape(t)[a] != 0]
    if kept and len(kept) < len(tensors):
        tensors = kept
    if len(tensors) == 1:
        return tensors[0]
    return C.splice(*tensors, axis=a)


def reshape(x, shape):
    """``C.reshape``; ``None`` in ``shape`` means -1. Sizes may be tensors (``K.shape(y)[i]``):
    those known while building the graph are used as numbers, leading ``K.shape(x)[i]`` of
    ``x`` itself keep those axes, and one size known only at run time is inferred (-1); with
    more, a graph node reshapes at run time (``UserFunction``, gradient reshaped back)."""
    x = _to_tensor(x)
    sizes = _resolve_sizes(shape, 'reshape', 'shape')
    nd_ = _nd(x)
    keep = 0
    while keep < builtins.min(len(sizes), nd_) and isinstance(sizes[keep], _FreeAxis) \
            and sizes[keep].of(x) and sizes[keep].axis == keep:
        keep += 1
    rest = [-1 if d is None or (not isinstance(d, int)) else d for d in sizes[keep:]]
    for d in rest:   # sizes held in a shape tensor, which the shared rules do not read
        if d < -1:
            raise ValueError('reshape: shape %r holds a negative size other than -1' % (shape,))
    if rest.count(-1) <= 1:
        if keep == 0:
            return _reshape(x, tuple(rest))
        if not rest:
            return x
        return _reshape(x, tuple(rest), begin_axis=keep)
    if builtins.all(d is None or isinstance(d, int) for d in sizes):
        raise ValueError('reshape: shape %r has more than one unknown (-1 or None) size'
                         % (shape,))
    if _is_engine_tensor(shape):
        target = shape
    else:
        target = _stack_mixed([-1 if d is None else d for d in shape])
    target = _reshape(target, (len(sizes),))
    static = [d if isinstance(d, int) and d >= 0 else None for d in sizes]

    def run(v, t):
        return [v.reshape(tuple(int(e) for e in t.reshape(-1)))]

    def grad(values, _, g):
        return g.reshape(values[0].shape)
    return _numpy_op([x, target], run, [tuple(static)], dtype=_var(x).dtype, grad_fn=grad,
                     name='reshape')[0]


def permute_dimensions(x, pattern):
    """``C.transpose``."""
    x = _to_tensor(x)
    pattern = tuple(int(p) for p in pattern)
    if pattern == tuple(range(_nd(x))):
        return x
    return _transpose_node(x, pattern)


def _bilinear_matrix(n_in, n_out):
    """(n_out, n_in) weights of TF's half-pixel bilinear resize along one axis."""
    m = np.zeros((n_out, n_in))
    scale = n_in / float(n_out)
    for i in range(n_out):
        src = (i + 0.5) * scale - 0.5
        src = np.clip(src, 0, n_in - 1)
        lo = int(np.floor(src))
        hi = lo + 1 if lo + 1 < n_in else lo
        w = src - lo
        m[i, lo] += 1 - w
        m[i, hi] += w
    return m


def resize_images(x, height_factor, width_factor, data_format, interpolation='nearest'):
    """'nearest' repeats pixels (``repeat_elements``); 'bilinear' follows TensorFlow's resize with
    half-pixel centres (interpolation matrices applied with ``C.times``) and needs static spatial
    sizes."""
    x = _to_tensor(x)
    fmt = normalize_data_format(data_format)
    interpolation = shape_rules.normalize_interpolation(interpolation)
    ha, wa = (2, 3) if fmt == 'channels_first' else (1, 2)
    fh, fw = int(height_factor), int(width_factor)
    if interpolation == 'nearest':
        return repeat_elements(repeat_elements(x, fh, ha), fw, wa)
    for a, f in ((ha, fh), (wa, fw)):
        n = _static_shape(x)[a]
        if n is None:
            raise ValueError('resize_images: bilinear needs static spatial sizes')
        m = _bilinear_matrix(n, n * f).astype(_var(x).dtype)
        perm = [i for i in range(4) if i != a] + [a]
        xt = _transpose_node(x, perm)
        r = C.times(xt, C.constant(m.T))
        x = _transpose_node(r, [int(i) for i in np.argsort(perm)])
    return x


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    """Nearest upsampling with ``repeat_elements``."""
    x = _to_tensor(x)
    fmt = normalize_data_format(data_format)
    axes = (2, 3, 4) if fmt == 'channels_first' else (1, 2, 3)
    for a, f in zip(axes, (depth_factor, height_factor, width_factor)):
        x = repeat_elements(x, f, a)
    return x


def repeat_elements(x, rep, axis):
    """``C.splice`` of ``rep`` copies along a new axis, then ``C.reshape``."""
    x = _to_tensor(x)
    a = shape_rules.normalize_axis(axis, _nd(x))
    rep = int(rep)
    if rep == 1:
        return x
    e = _add_axis(x, a + 1)
    e = C.splice(*([e] * rep), axis=a + 1)
    return _keras_meta(_reshape(e, (-1,), begin_axis=a, end_axis=a + 2)
                 if _static_shape(x)[a] is None else
                 _reshape(e, (_static_shape(x)[a] * rep,), begin_axis=a, end_axis=a + 2))


def repeat(x, n):
    """``C.splice`` of ``n`` copies along a new axis 1; a count known only at run time
    (a tensor) broadcasts ``x`` against ones of that length."""
    x = _to_tensor(x)
    e = _add_axis(x, 1)
    count = _resolve_sizes([n], 'repeat', 'n')[0]
    if isinstance(count, (_FreeAxis, _RunTime)):
        return _repeat_axis(e, 1, _ones_of_length(count, _var(x).dtype))
    if count is None or count < 0:   # a count held in a tensor, which the shared rules do not read
        raise ValueError('repeat: n must be a count >= 0, got %r' % (n,))
    if count == 0:
        return tile(e, [1, 0, 1])
    return C.splice(*([e] * count), axis=1) if count > 1 else e


def arange(start, stop=None, step=1, dtype='int32'):
    """Integer values held in ``floatx()``. Scalar tensor arguments are read at run time by a numpy
    graph node (free length). CNTK holds no zero-element value: a range empty at run time is an
    empty array as an output of ``function``/``eval``, a ValueError when another op reads it."""
    if not builtins.any(_is_engine_tensor(v) for v in (start, stop, step)):
        values = np.arange(start, stop, step).astype(_np_dtype(dtype))
        if values.size == 0:
            return _empty((0,), values.dtype)
        return C.constant(values)
    dt = _np_dtype(dtype, 'arange')
    like = [v for v in (start, stop, step) if _is_engine_tensor(v)][0]
    ins = [_to_tensor(v, dtype=_var(like).dtype)
           for v in (start, stop if stop is not None else _constant_like(like, 0), step)]
    has_stop = stop is not None
    state = {'empty': False, 'consumed': False}

    def run(a, b, s):
        a, b, s = a.reshape(-1)[0], b.reshape(-1)[0], s.reshape(-1)[0]
        values = np.arange(a, b, s) if has_stop else np.arange(0, a, s)
        state['empty'] = values.size == 0
        if state['empty']:
            if state['consumed']:
                raise ValueError('arange: the range (start=%r, stop=%r, step=%r) is empty at '
                                 'run time; CNTK cannot pass an empty tensor to another op'
                                 % ((a, b, s) if has_stop else (0, a, s)))
            values = np.zeros((1,))   # stands in; function/eval return an empty array
        return [values]
    out = _numpy_op(ins, run, [(None,)], dtype=dt, name='arange')[0]
    _MAYBE_EMPTY[out.uid] = state
    return out


def tile(x, n):
    """``C.splice`` of copies per axis; zero repetitions need a static shape (CNTK cannot compute
    zero-size values)."""
    x = _to_tensor(x)
    reps = _resolve_sizes(n, 'tile', 'n')
    nd_ = _nd(x)
    if len(reps) > nd_:
        for _ in range(len(reps) - nd_):
            x = _add_axis(x, 0)
        nd_ = len(reps)
    reps = [1] * (nd_ - len(reps)) + reps
    for a, r in enumerate(reps):
        if isinstance(r, (_FreeAxis, _RunTime)):
            x = _repeat_axis(x, a, _ones_of_length(r, _var(x).dtype))
            continue
        if r is None:
            raise ValueError('tile: n must hold numbers or scalar tensors, got %r' % (n,))
        if r < 0:   # a repetition count held in a tensor
            raise ValueError('tile: repetitions must be >= 0, got %r' % (n,))
        if r > 1:
            x = C.splice(*([x] * r), axis=a)
        elif r == 0:
            shp = list(_static_shape(x))
            shp[a] = 0
            if builtins.any(d is None for d in shp):
                raise ValueError('tile: zero repetitions need a static shape on CNTK '
                                 '(it cannot compute zero-size values), got %r' % (shp,))
            x = _empty(shp, _var(x).dtype)
    return x


def _ones_of_length(r, dtype):
    """A 1-D tensor of ones as long as the run-time size ``r``: for a free axis of a tensor,
    ``C.ones_like`` of it reduced over its other axes; for another run-time value, a graph
    node (``UserFunction``) that shapes ones by it."""
    if isinstance(r, _FreeAxis):
        src = _to_tensor(r.src)
        others = tuple(j for j in range(_nd(src)) if j != r.axis)
        ones = C.ones_like(src)
        if others:
            ones = _drop_axes(C.reduce_max(ones, axis=others), others)
    else:
        def run(v):
            count = float(np.asarray(v).reshape(-1)[0])
            if count < 1 or count != int(count):
                raise ValueError('a repetition count known at run time must be an integer '
                                 '>= 1 on CNTK (it holds no zero-size values), got %r' % count)
            return [np.ones((int(count),))]
        ones = _numpy_op([r.value], run, [(None,)], dtype=dtype, name='ones_of_length')[0]
    if _var(ones).dtype != dtype:
        ones = C.cast(ones, dtype)
    return ones


def _repeat_axis(x, a, ones):
    """Repeat ``x`` along axis ``a`` as many times as ``ones`` (1-D) is long: ``x`` is
    broadcast against the ones, and the two axes are merged when ``x``'s is not 1."""
    nd_ = _nd(x)
    d = _static_shape(x)[a]
    if d == 1:
        return C.element_times(x, _reshape(ones, (-1,) + (1,) * (nd_ - a - 1)))
    y = C.element_times(_add_axis(x, a), _reshape(ones, (-1,) + (1,) * (nd_ - a)))
    return _reshape(y, (-1,), begin_axis=a, end_axis=a + 2)


def flatten(x):
    """``C.reshape``."""
    return _reshape(_to_tensor(x), (-1,))


def batch_flatten(x):
    """``C.reshape`` of the axes after the first."""
    x = _to_tensor(x)
    s = _static_shape(x)
    if len(s) == 1:
        return _add_axis(x, 1)
    if builtins.all(d is not None for d in s[1:]):
        return _reshape(x, (int(np.prod(s[1:])),), begin_axis=1)
    return _reshape(x, (-1,), begin_axis=1)


def expand_dims(x, axis=-1):
    """``C.reshape`` inserting a unit axis."""
    x = _to_tensor(x)
    n = _nd(x)
    axis = int(axis)
    return _add_axis(x, axis + n + 1 if axis < 0 else axis)


def squeeze(x, axis):
    """``C.reshape`` removing the axis; an axis of unknown (free) size is not checked."""
    x = _to_tensor(x)
    a = shape_rules.normalize_axis(axis, _nd(x))
    if _static_shape(x)[a] not in (1, None):   # the shared rules check the axis, not its size
        raise ValueError('squeeze: axis %d has size %d, not 1' % (axis, _static_shape(x)[a]))
    return _drop_axis(x, a)


def temporal_padding(x, padding=(1, 1)):
    """``C.pad``."""
    x = _to_tensor(x)
    p = shape_rules.normalize_tuple(padding, 2, 'padding')
    return _pad(x, [(0, 0), p, (0, 0)])


def _spatial_padding(x, padding, n, data_format):
    x = _to_tensor(x)
    fmt = normalize_data_format(data_format)
    pairs = list(shape_rules.normalize_spatial_padding(padding, n))
    full = [(0, 0)] + ([(0, 0)] + pairs if fmt == 'channels_first' else pairs + [(0, 0)])
    return _pad(x, full)


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    """``C.pad``."""
    return _spatial_padding(x, padding, 2, data_format)


def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    """``C.pad``."""
    return _spatial_padding(x, padding, 3, data_format)


def stack(x, axis=0):
    """``C.splice`` along a new unit axis."""
    x = [_to_tensor(t) for t in x]
    n = _nd(x[0])
    a = axis + n + 1 if axis < 0 else axis
    parts = [_add_axis(t, a) for t in x]
    return C.splice(*parts, axis=a) if len(parts) > 1 else parts[0]


def one_hot(indices, num_classes):
    """``C.equal`` against a constant range rather than ``C.one_hot``: it has a (zero) gradient, so
    graphs that differentiate through integer targets do not hit CNTK's one-hot backprop. 1.0/0.0
    in ``floatx()``."""
    indices = _to_tensor(indices)
    if _is_engine_tensor(num_classes):
        # a count tensor (K.shape(x)[i]): CNTK needs its value while building the graph
        n = _resolve_sizes([num_classes], 'one_hot', 'num_classes')[0]
        if not isinstance(n, int):
            raise ValueError('one_hot: num_classes must be known while the graph is built on '
                             'CNTK (a constant, or K.shape(x)[i] of a static axis); got %r'
                             % (num_classes,))
        num_classes = n
    return _one_hot(indices, int(num_classes))


def reverse(x, axes):
    """A product with a flipped identity (``C.times``); a free length runs in a numpy graph node
    whose gradient is the reversed gradient."""
    x = _to_tensor(x)
    n = _nd(x)
    axes = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    for a in axes:
        a = shape_rules.normalize_axis(a, n)
        length = _static_shape(x)[a]
        if length is None:
            # free length: a numpy graph node whose gradient is the reversed gradient
            x = _numpy_op([x], lambda v, a=a: [np.flip(v, a)], [_static_shape(x)],
                          dtype=np.dtype(_var(x).dtype),
                          grad_fn=lambda vals, _, g, a=a: np.flip(g, a), name='reverse')[0]
            continue
        perm = [i for i in range(n) if i != a] + [a]
        xt = _transpose_node(x, perm) if perm != list(range(n)) else x
        flip = C.constant(np.eye(length)[::-1].astype(_var(x).dtype))
        r = C.times(xt, flip)
        x = _transpose_node(r, [int(i) for i in np.argsort(perm)]) if perm != list(range(n)) else r
    return x


def slice(x, start, size):
    """``C.slice``."""
    x = _to_tensor(x)
    start = _resolve_sizes(start, 'slice', 'start')
    size = [-1 if d == -1 else d for d in _resolve_sizes(size, 'slice', 'size')]
    if len(start) != _nd(x) or len(size) != _nd(x):   # start/size given as tensors
        raise ValueError('slice: start and size need %d entries' % _nd(x))
    axes, begins, ends = [], [], []
    for a, (b, s) in enumerate(zip(start, size)):
        if not isinstance(b, int) or not isinstance(s, int):
            raise ValueError('slice: on CNTK, start and size must be known while the graph is '
                             'built (ints, or K.shape(x)[i] of static axes); got %r, %r'
                             % (start, size))
        if s == -1:
            e = 0
        else:
            e = b + s
        axes.append(a)
        begins.append(b)
        ends.append(e)
    return C.slice(x, axes, begins, ends)


def pattern_broadcast(x, broadcastable):
    """CNTK has no broadcast patterns: ``x`` is returned unchanged."""
    return x
