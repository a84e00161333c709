"""Numpy reference of the keras_backend API, written from docs/semantics.md.

Every function takes numpy arrays and returns numpy arrays. Floating point work
is done in float64; the tests cast the result to the dtype the contract asks for.
It must run on Python 3.6 + numpy 1.19 (the CNTK test run) as well as numpy 2.
Nothing here imports an engine or keras_backend's adapters.
"""
import itertools

import numpy as np

EPSILON = 1e-7  # the default epsilon(); functions take ``eps`` explicitly


def f64(x):
    return np.asarray(x, dtype=np.float64)


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        return tuple(sorted(set(a % ndim for a in axis)))
    return (axis % ndim,)


# ---------------------------------------------------------------------------
# Math
# ---------------------------------------------------------------------------

def dot(x, y):
    x, y = f64(x), f64(y)
    if y.ndim <= 2:
        return np.tensordot(x, y, axes=([x.ndim - 1], [0]))
    # contract last axis of x with the second-to-last of y
    out = np.tensordot(x, y, axes=([x.ndim - 1], [y.ndim - 2]))
    # tensordot gives x.shape[:-1] + y.shape[:-2] + y.shape[-1:] already
    return out


def batch_dot(x, y, axes=None):
    x, y = f64(x), f64(y)
    xn, yn = x.ndim, y.ndim
    if axes is None:
        axes = (xn - 1, yn - 1 if yn == 2 else yn - 2)
    elif isinstance(axes, int):
        axes = (axes, axes)
    ax, ay = axes[0] % xn, axes[1] % yn
    if x.shape[0] == 0 and y.shape[0] == 0:   # an empty batch: the shape of one sample's
        one = batch_dot(np.zeros((1,) + x.shape[1:]), np.zeros((1,) + y.shape[1:]), axes)
        return one[:0]
    outs = [np.tensordot(x[i], y[i], axes=([ax - 1], [ay - 1])) for i in range(x.shape[0])]
    out = np.stack(outs, axis=0)
    if out.ndim == 1:
        out = out.reshape((-1, 1))
    return out


def transpose(x):
    return np.transpose(np.asarray(x))


def gather(reference, indices):
    return np.asarray(reference)[np.asarray(indices)]


def _reduce(fn, x, axis, keepdims):
    x = np.asarray(x)
    return fn(x, axis=_axes(axis, x.ndim), keepdims=keepdims)


def _extreme(fn, x, axis, keepdims, lowest):
    """max / min; over an empty axis the reduction's identity (-inf / +inf, an integer
    dtype's extreme), as TensorFlow's reduce_max / reduce_min (Keras 2.3.1's engine) give:
    numpy refuses, an engine may refuse too (our ValueError)."""
    x = np.asarray(x)
    if x.dtype.kind == 'f':
        initial = -np.inf if lowest else np.inf
    elif x.dtype.kind in 'iu':
        initial = np.iinfo(x.dtype).min if lowest else np.iinfo(x.dtype).max
    else:
        return _reduce(fn, x, axis, keepdims)
    return fn(x, axis=_axes(axis, x.ndim), keepdims=keepdims, initial=initial)


def max(x, axis=None, keepdims=False):  # noqa: A001 - mirrors the API name
    return _extreme(np.max, x, axis, keepdims, True)


def min(x, axis=None, keepdims=False):  # noqa: A001
    return _extreme(np.min, x, axis, keepdims, False)


def sum(x, axis=None, keepdims=False):  # noqa: A001
    return _reduce(np.sum, f64(x), axis, keepdims)


def prod(x, axis=None, keepdims=False):
    return _reduce(np.prod, f64(x), axis, keepdims)


def mean(x, axis=None, keepdims=False):
    return _reduce(np.mean, f64(x), axis, keepdims)


def var(x, axis=None, keepdims=False):
    return _reduce(np.var, f64(x), axis, keepdims)


def std(x, axis=None, keepdims=False):
    return _reduce(np.std, f64(x), axis, keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001
    return _reduce(np.any, np.asarray(x) != 0, axis, keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001
    return _reduce(np.all, np.asarray(x) != 0, axis, keepdims)


def logsumexp(x, axis=None, keepdims=False):
    x = f64(x)
    ax = _axes(axis, x.ndim)
    m = np.max(x, axis=ax, keepdims=True, initial=-np.inf)   # an empty axis: -inf
    out = np.log(np.sum(np.exp(x - m), axis=ax, keepdims=True)) + m
    if not keepdims:
        out = np.squeeze(out, axis=ax)
    return out


def argmax(x, axis=-1):
    return np.argmax(np.asarray(x), axis=axis).astype(np.int64)


def argmin(x, axis=-1):
    return np.argmin(np.asarray(x), axis=axis).astype(np.int64)


def cumsum(x, axis=0):
    return np.cumsum(f64(x), axis=axis)


def cumprod(x, axis=0):
    return np.cumprod(f64(x), axis=axis)


def square(x):
    return f64(x) ** 2


def abs(x):  # noqa: A001
    return np.abs(f64(x))


def sqrt(x):
    return np.sqrt(np.maximum(f64(x), 0.))


def exp(x):
    return np.exp(f64(x))


def log(x):
    return np.log(f64(x))


def round(x):  # noqa: A001
    return np.round(f64(x))  # numpy rounds half to even


def sign(x):
    return np.sign(f64(x))


def pow(x, a):  # noqa: A001
    return f64(x) ** a


def clip(x, min_value, max_value):
    # Keras 2.3.1: a bound of None is no bound
    min_value = -np.inf if min_value is None else min_value
    max_value = np.inf if max_value is None else max_value
    if max_value < min_value:
        max_value = min_value
    return np.minimum(np.maximum(f64(x), min_value), max_value)


def equal(x, y):
    return np.equal(x, y)


def not_equal(x, y):
    return np.not_equal(x, y)


def greater(x, y):
    return np.greater(x, y)


def greater_equal(x, y):
    return np.greater_equal(x, y)


def less(x, y):
    return np.less(x, y)


def less_equal(x, y):
    return np.less_equal(x, y)


def maximum(x, y):
    return np.maximum(f64(x), f64(y))


def minimum(x, y):
    return np.minimum(f64(x), f64(y))


def sin(x):
    return np.sin(f64(x))


def cos(x):
    return np.cos(f64(x))


def sigmoid(x):
    x = f64(x)
    return np.where(x >= 0, 1. / (1. + np.exp(-np.abs(x))),
                    np.exp(-np.abs(x)) / (1. + np.exp(-np.abs(x))))


def tanh(x):
    return np.tanh(f64(x))


def hard_sigmoid(x):
    return np.clip(0.2 * f64(x) + 0.5, 0., 1.)


def relu(x, alpha=0., max_value=None, threshold=0.):
    # Keras 2.3.1's rule (all its backends): the kept part is x above the
    # threshold (relu(x) for threshold 0), clipped to [0, max_value]; alpha
    # adds the slope below the threshold.
    x = f64(x)
    # a NaN stays NaN (as the engines' relu, maximum and where)
    kept = np.where(x > threshold, x, np.where(np.isnan(x), x, 0.)) if threshold != 0 \
        else np.maximum(x, 0.)
    if max_value is not None:
        kept = np.clip(kept, 0., float(max_value))
    if alpha != 0:
        kept = kept - alpha * np.maximum(threshold - x, 0.)
    return kept


def elu(x, alpha=1.):
    x = f64(x)
    return np.where(x > 0, x, alpha * (np.exp(np.minimum(x, 0.)) - 1.))


def softplus(x):
    x = f64(x)
    return np.maximum(x, 0.) + np.log1p(np.exp(-np.abs(x)))


def softsign(x):
    x = f64(x)
    return x / (1. + np.abs(x))


def log_softmax(x, axis=-1):
    x = f64(x)
    return x - logsumexp(x, axis=axis, keepdims=True)


def softmax(x, axis=-1):
    return np.exp(log_softmax(x, axis))


def categorical_crossentropy(target, output, from_logits=False, axis=-1, eps=EPSILON):
    target, output = f64(target), f64(output)
    if from_logits:
        return -np.sum(target * log_softmax(output, axis), axis=axis)
    p = output / np.sum(output, axis=axis, keepdims=True)
    p = np.clip(p, eps, 1. - eps)
    return -np.sum(target * np.log(p), axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1, eps=EPSILON):
    output = f64(output)
    if output.size == 0:      # no values: the engines' empty results differ in shape
        raise EngineDefined('sparse_categorical_crossentropy of an empty output')
    axis = axis % output.ndim
    if not from_logits:
        output = np.log(np.clip(output, eps, 1. - eps))
    ls = np.moveaxis(log_softmax(output, axis), axis, -1)
    idx = np.asarray(target).astype(np.int64)
    picked = np.take_along_axis(ls, idx[..., None], axis=-1)[..., 0]
    return -picked


def binary_crossentropy(target, output, from_logits=False, eps=EPSILON):
    t, x = f64(target), f64(output)
    if from_logits:
        return np.maximum(x, 0.) - x * t + np.log1p(np.exp(-np.abs(x)))
    # the upper bound as float32 holds it (1 - 1.19e-7 for eps 1e-7): what every engine's
    # clip of a float32 output gives
    p = np.clip(x, eps, float(np.float32(1. - eps)))
    return -(t * np.log(p) + (1. - t) * np.log(1. - p))


def l2_normalize(x, axis=None):
    x = f64(x)
    ax = _axes(axis, x.ndim)
    return x / np.sqrt(np.maximum(np.sum(x * x, axis=ax, keepdims=True), 1e-12))


def in_top_k(predictions, targets, k):
    p = f64(predictions)
    t = np.asarray(targets).astype(np.int64)
    out = np.zeros(p.shape[0], dtype=bool)
    for i in range(p.shape[0]):
        s = p[i, t[i]]
        if not np.isfinite(s):
            continue
        out[i] = np.sum(p[i] > s) < k
    return out


def _bcast_param(p, axis, ndim):
    p = f64(p)
    if p.ndim == 1 and ndim > 1:
        shape = [1] * ndim
        shape[axis % ndim] = p.shape[0]
        p = p.reshape(shape)
    return p


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    x = f64(x)
    nd = x.ndim
    m = _bcast_param(mean, axis, nd)
    v = _bcast_param(var, axis, nd)
    out = (x - m) / np.sqrt(v + epsilon)
    if gamma is not None:
        out = out * _bcast_param(gamma, axis, nd)
    if beta is not None:
        out = out + _bcast_param(beta, axis, nd)
    return out


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    x = f64(x)
    ax = _axes(list(reduction_axes), x.ndim)
    m = np.mean(x, axis=ax, keepdims=True)
    v = np.var(x, axis=ax, keepdims=True)
    out = (x - m) / np.sqrt(v + epsilon)
    kept_shape = [d for i, d in enumerate(x.shape) if i not in ax]
    bshape = [1 if i in ax else d for i, d in enumerate(x.shape)]
    if gamma is not None:
        out = out * f64(gamma).reshape(bshape)
    if beta is not None:
        out = out + f64(beta).reshape(bshape)
    return out, m.reshape(kept_shape), v.reshape(kept_shape)


def bias_add(x, bias, data_format='channels_last'):
    x, b = f64(x), f64(bias)
    if b.ndim == 1:
        shape = [1] * x.ndim
        shape[1 if data_format == 'channels_first' else -1] = b.shape[0]
        return x + b.reshape(shape)
    if data_format == 'channels_first' and x.ndim in (3, 4, 5):
        # Keras 2.3.1's rule: a full-rank bias is laid out (spatial..., channels)
        # and reshaped (not transposed) to (1, channels, spatial...).
        return x + b.reshape((1, b.shape[-1]) + b.shape[:-1])
    return x + b[None]


def one_hot(indices, num_classes):
    idx = np.asarray(indices).astype(np.int64)
    return (idx[..., None] == np.arange(num_classes)).astype(np.float64)


# ---------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------

def concatenate(tensors, axis=-1):
    return np.concatenate([np.asarray(t) for t in tensors], axis=axis)


def reshape(x, shape):
    # a None size is read as -1 (Keras layers pass int_shape's None for the batch)
    if isinstance(shape, (list, tuple)):
        shape = tuple(-1 if d is None else d for d in shape)
    return np.reshape(np.asarray(x), shape)


def permute_dimensions(x, pattern):
    return np.transpose(np.asarray(x), pattern)


def repeat_elements(x, rep, axis):
    return np.repeat(np.asarray(x), rep, axis=axis)


def repeat(x, n):
    x = np.asarray(x)
    return np.repeat(x[:, None, :], n, axis=1)


def arange(start, stop=None, step=1, dtype='int32'):
    if stop is None:
        start, stop = 0, start
    return np.arange(start, stop, step).astype(dtype)


def tile(x, n):
    return np.tile(np.asarray(x), n)


def flatten(x):
    return np.asarray(x).reshape(-1)


def batch_flatten(x):
    x = np.asarray(x)
    return x.reshape((x.shape[0], int(np.prod(x.shape[1:]))))


def expand_dims(x, axis=-1):
    return np.expand_dims(np.asarray(x), axis)


def squeeze(x, axis):
    return np.squeeze(np.asarray(x), axis=axis)


def stack(x, axis=0):
    return np.stack([np.asarray(t) for t in x], axis=axis)


def reverse(x, axes):
    x = np.asarray(x)
    if isinstance(axes, int):
        axes = [axes]
    sl = [np.s_[:]] * x.ndim
    for a in axes:
        sl[a] = np.s_[::-1]
    return x[tuple(sl)]


def slice(x, start, size):  # noqa: A001
    x = np.asarray(x)
    sl = []
    for s, n in zip(start, size):
        sl.append(np.s_[s:] if n == -1 else np.s_[s:s + n])
    return x[tuple(sl)]


def _pad_spatial(x, pairs, data_format):
    x = np.asarray(x)
    widths = [(0, 0)] * x.ndim
    first = 2 if data_format == 'channels_first' else 1
    for i, p in enumerate(pairs):
        widths[first + i] = tuple(p)
    return np.pad(x, widths, mode='constant')


def temporal_padding(x, padding=(1, 1)):
    return _pad_spatial(x, [padding], 'channels_last')


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format='channels_last'):
    return _pad_spatial(x, padding, data_format)


def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format='channels_last'):
    return _pad_spatial(x, padding, data_format)


def to_channels_last(x, data_format):
    x = np.asarray(x)
    if data_format == 'channels_first':
        return np.moveaxis(x, 1, -1)
    return x


def from_channels_last(x, data_format):
    if data_format == 'channels_first':
        return np.moveaxis(x, -1, 1)
    return x


def _bilinear_axis(x, axis, factor):
    """Resize ``x`` along ``axis`` by ``factor`` with half-pixel centres."""
    n = x.shape[axis]
    out_n = n * factor
    src = (np.arange(out_n) + 0.5) / factor - 0.5
    lo_f = np.floor(src)
    frac = src - lo_f
    lo = np.clip(lo_f.astype(np.int64), 0, n - 1)
    hi = np.clip(lo_f.astype(np.int64) + 1, 0, n - 1)
    shape = [1] * x.ndim
    shape[axis] = out_n
    frac = frac.reshape(shape)
    return np.take(x, lo, axis=axis) * (1. - frac) + np.take(x, hi, axis=axis) * frac


def resize_images(x, height_factor, width_factor, data_format, interpolation='nearest'):
    x = to_channels_last(f64(x), data_format)
    if interpolation == 'nearest':
        out = np.repeat(np.repeat(x, height_factor, axis=1), width_factor, axis=2)
    else:
        out = _bilinear_axis(_bilinear_axis(x, 1, height_factor), 2, width_factor)
    return from_channels_last(out, data_format)


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    x = to_channels_last(np.asarray(x), data_format)
    out = np.repeat(np.repeat(np.repeat(x, depth_factor, 1), height_factor, 2), width_factor, 3)
    return from_channels_last(out, data_format)


# ---------------------------------------------------------------------------
# Convolution and pooling (all computed channels_last internally)
# ---------------------------------------------------------------------------

def _tup(v, n):
    if isinstance(v, int):
        return (v,) * n
    return tuple(v)


def same_padding(length, kernel, stride, dilation=1):
    """TensorFlow's 'same' padding: total cells, the odd one after."""
    dk = (kernel - 1) * dilation + 1
    out = -(-length // stride)
    total = (out - 1) * stride + dk - length
    if total < 0:
        total = 0
    return total // 2, total - total // 2


def conv_out_length(length, kernel, stride, dilation, padding):
    dk = (kernel - 1) * dilation + 1
    if padding in ('same', 'causal'):
        return -(-length // stride)
    return -(-(length - dk + 1) // stride)


def pad_amounts(length, kernel, stride, dilation, padding):
    if padding == 'valid':
        return (0, 0)
    if padding == 'causal':
        return ((kernel - 1) * dilation, 0)
    return same_padding(length, kernel, stride, dilation)


def _windows(xp, ksize, strides, dilation, out_sizes):
    """Yield (offset, view) for each kernel offset: view[n, o..., c] =
    xp[n, o * stride + offset * dilation, c]."""
    for off in itertools.product(*[range(k) for k in ksize]):
        sl = [np.s_[:]]
        for o, s, d, n in zip(off, strides, dilation, out_sizes):
            start = o * d
            sl.append(np.s_[start:start + (n - 1) * s + 1:s])
        sl.append(np.s_[:])
        yield off, xp[tuple(sl)]


def _prepare(x, ksize, strides, dilation, padding, pad_value=0.):
    nsp = len(ksize)
    pads, outs = [], []
    for i in range(nsp):
        L = x.shape[1 + i]
        pads.append(pad_amounts(L, ksize[i], strides[i], dilation[i], padding))
        outs.append(conv_out_length(L, ksize[i], strides[i], dilation[i], padding))
    xp = np.pad(x, [(0, 0)] + pads + [(0, 0)], mode='constant', constant_values=pad_value)
    return xp, outs


def conv_nd(x, kernel, strides=1, padding='valid', data_format='channels_last', dilation_rate=1):
    """N-d convolution (cross-correlation); kernel (*k, in, out) channels-last."""
    x = to_channels_last(f64(x), data_format)
    kernel = f64(kernel)
    nsp = x.ndim - 2
    ksize = kernel.shape[:nsp]
    strides, dil = _tup(strides, nsp), _tup(dilation_rate, nsp)
    xp, outs = _prepare(x, ksize, strides, dil, padding)
    out = np.zeros((x.shape[0],) + tuple(outs) + (kernel.shape[-1],))
    for off, view in _windows(xp, ksize, strides, dil, outs):
        out += np.tensordot(view, kernel[off], axes=([x.ndim - 1], [0]))
    return from_channels_last(out, data_format)


def conv1d(x, kernel, strides=1, padding='valid', data_format='channels_last', dilation_rate=1):
    return conv_nd(x, kernel, strides, padding, data_format, dilation_rate)


def conv2d(x, kernel, strides=(1, 1), padding='valid', data_format='channels_last',
           dilation_rate=(1, 1)):
    return conv_nd(x, kernel, strides, padding, data_format, dilation_rate)


def conv3d(x, kernel, strides=(1, 1, 1), padding='valid', data_format='channels_last',
           dilation_rate=(1, 1, 1)):
    return conv_nd(x, kernel, strides, padding, data_format, dilation_rate)


def depthwise_conv_nd(x, kernel, strides=1, padding='valid', data_format='channels_last',
                      dilation_rate=1):
    """Depthwise conv; kernel (*k, in, mult); output channel c * mult + m."""
    x = to_channels_last(f64(x), data_format)
    kernel = f64(kernel)
    nsp = x.ndim - 2
    ksize = kernel.shape[:nsp]
    cin, mult = kernel.shape[-2], kernel.shape[-1]
    strides, dil = _tup(strides, nsp), _tup(dilation_rate, nsp)
    xp, outs = _prepare(x, ksize, strides, dil, padding)
    out = np.zeros((x.shape[0],) + tuple(outs) + (cin, mult))
    for off, view in _windows(xp, ksize, strides, dil, outs):
        out += view[..., None] * kernel[off]
    out = out.reshape(out.shape[:-2] + (cin * mult,))
    return from_channels_last(out, data_format)


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding='valid',
                     data_format='channels_last', dilation_rate=(1, 1)):
    return depthwise_conv_nd(x, depthwise_kernel, strides, padding, data_format, dilation_rate)


def separable_conv_nd(x, depthwise_kernel, pointwise_kernel, strides=1, padding='valid',
                      data_format='channels_last', dilation_rate=1):
    y = to_channels_last(depthwise_conv_nd(x, depthwise_kernel, strides, padding, data_format,
                                           dilation_rate), data_format)
    out = np.tensordot(y, f64(pointwise_kernel).reshape(pointwise_kernel.shape[-2:]),
                       axes=([y.ndim - 1], [0]))
    return from_channels_last(out, data_format)


def separable_conv1d(x, depthwise_kernel, pointwise_kernel, strides=1, padding='valid',
                     data_format='channels_last', dilation_rate=1):
    return separable_conv_nd(x, depthwise_kernel, pointwise_kernel, strides, padding,
                             data_format, dilation_rate)


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding='valid',
                     data_format='channels_last', dilation_rate=(1, 1)):
    return separable_conv_nd(x, depthwise_kernel, pointwise_kernel, strides, padding,
                             data_format, dilation_rate)


def conv_transpose_nd(x, kernel, output_shape, strides=1, padding='valid',
                      data_format='channels_last', dilation_rate=1):
    """Transposed conv: the adjoint of ``conv_nd`` with kernel (*k, out, in)
    mapping a tensor of ``output_shape`` to one of ``x``'s shape."""
    x = to_channels_last(f64(x), data_format)
    kernel = f64(kernel)
    nsp = x.ndim - 2
    ksize = kernel.shape[:nsp]
    strides, dil = _tup(strides, nsp), _tup(dilation_rate, nsp)
    oshape = list(output_shape)
    if data_format == 'channels_first':
        oshape = [oshape[0]] + oshape[2:] + [oshape[1]]
    out_sp = oshape[1:-1]
    pads = []
    for i in range(nsp):
        if conv_out_length(out_sp[i], ksize[i], strides[i], dil[i], padding) != x.shape[1 + i]:
            raise ValueError('output_shape incompatible with the input')
        pads.append(pad_amounts(out_sp[i], ksize[i], strides[i], dil[i], padding))
    padded = [out_sp[i] + pads[i][0] + pads[i][1] for i in range(nsp)]
    z = np.zeros((x.shape[0],) + tuple(padded) + (kernel.shape[-2],))
    for off in itertools.product(*[range(k) for k in ksize]):
        sl = [np.s_[:]]
        for i in range(nsp):
            start = off[i] * dil[i]
            sl.append(np.s_[start:start + (x.shape[1 + i] - 1) * strides[i] + 1:strides[i]])
        sl.append(np.s_[:])
        # kernel[off]: (out, in); x: (..., in)
        z[tuple(sl)] += np.tensordot(x, kernel[off], axes=([x.ndim - 1], [1]))
    crop = [np.s_[:]] + [np.s_[p[0]:p[0] + n] for p, n in zip(pads, out_sp)] + [np.s_[:]]
    return from_channels_last(z[tuple(crop)], data_format)


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding='valid',
                     data_format='channels_last', dilation_rate=(1, 1)):
    return conv_transpose_nd(x, kernel, output_shape, strides, padding, data_format,
                             dilation_rate)


def conv3d_transpose(x, kernel, output_shape, strides=(1, 1, 1), padding='valid',
                     data_format='channels_last'):
    return conv_transpose_nd(x, kernel, output_shape, strides, padding, data_format, 1)


def pool_nd(x, pool_size, strides, padding='valid', data_format='channels_last',
            pool_mode='max'):
    x = to_channels_last(f64(x), data_format)
    nsp = x.ndim - 2
    ksize, strides = _tup(pool_size, nsp), _tup(strides, nsp)
    dil = (1,) * nsp
    if pool_mode == 'max':
        xp, outs = _prepare(x, ksize, strides, dil, padding, pad_value=-np.inf)
        out = np.full((x.shape[0],) + tuple(outs) + (x.shape[-1],), -np.inf)
        for _, view in _windows(xp, ksize, strides, dil, outs):
            out = np.maximum(out, view)
    else:
        xp, outs = _prepare(x, ksize, strides, dil, padding)
        ones = np.ones((1,) + x.shape[1:-1] + (1,))
        op, _ = _prepare(ones, ksize, strides, dil, padding)
        out = np.zeros((x.shape[0],) + tuple(outs) + (x.shape[-1],))
        cnt = np.zeros((1,) + tuple(outs) + (1,))
        for (_, view), (_, cview) in zip(_windows(xp, ksize, strides, dil, outs),
                                         _windows(op, ksize, strides, dil, outs)):
            out += view
            cnt += cview
        out = out / cnt
    return from_channels_last(out, data_format)


def pool2d(x, pool_size, strides=(1, 1), padding='valid', data_format='channels_last',
           pool_mode='max'):
    return pool_nd(x, pool_size, strides, padding, data_format, pool_mode)


def pool3d(x, pool_size, strides=(1, 1, 1), padding='valid', data_format='channels_last',
           pool_mode='max'):
    return pool_nd(x, pool_size, strides, padding, data_format, pool_mode)


def local_conv1d(inputs, kernel, kernel_size, strides):
    """channels_last only: inputs (batch, steps, in), kernel (out_steps, k * in, filters)."""
    x, w = f64(inputs), f64(kernel)
    k, s = _tup(kernel_size, 1)[0], _tup(strides, 1)[0]
    out = np.zeros((x.shape[0], w.shape[0], w.shape[2]))
    for i in range(w.shape[0]):
        patch = x[:, i * s:i * s + k, :].reshape((x.shape[0], -1))
        out[:, i, :] = patch.dot(w[i])
    return out


def local_conv2d(inputs, kernel, kernel_size, strides, output_shape,
                 data_format='channels_last'):
    x, w = f64(inputs), f64(kernel)
    kh, kw = _tup(kernel_size, 2)
    sh, sw = _tup(strides, 2)
    rows, cols = output_shape
    out = np.zeros((x.shape[0], rows, cols, w.shape[2]))
    for i in range(rows):
        for j in range(cols):
            if data_format == 'channels_first':
                patch = x[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw]
            else:
                patch = x[:, i * sh:i * sh + kh, j * sw:j * sw + kw, :]
            out[:, i, j, :] = patch.reshape((x.shape[0], -1)).dot(w[i * cols + j])
    return from_channels_last(out, data_format)


# ---------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------

def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None, constants=None):
    """``step_function(x_t, states + constants) -> (output_t, new_states)`` in numpy."""
    inputs = f64(inputs)
    states = [f64(s) for s in initial_states]
    constants = [f64(c) for c in (constants or [])]
    T = inputs.shape[1]
    order = list(range(T))[::-1] if go_backwards else list(range(T))
    outputs = []
    prev_out = None
    for t in order:
        out_t, new_states = step_function(inputs[:, t], states + constants)
        out_t = f64(out_t)
        if prev_out is None:
            prev_out = np.zeros_like(out_t)
        if mask is not None:
            m = np.asarray(mask)[:, t].astype(bool)
            mo = m.reshape((-1,) + (1,) * (out_t.ndim - 1))
            out_t = np.where(mo, out_t, prev_out)
            new_states = [np.where(m.reshape((-1,) + (1,) * (ns.ndim - 1)), ns, s)
                          for ns, s in zip(new_states, states)]
        states = [f64(s) for s in new_states]
        prev_out = out_t
        outputs.append(out_t)
    outputs = np.stack(outputs, axis=1)
    return outputs[:, -1], outputs, states


def conv_lstm2d(x, kernel, recurrent_kernel, bias, padding='valid',
                data_format='channels_last', initial_states=None, mask=None,
                recurrent_activation=hard_sigmoid, activation=tanh):
    """Keras 2.3.1's ``ConvLSTM2D`` (strides 1) on ``x`` ``(batch, time, *image)``: gates in
    the order i, f, c, o along the kernels' last axis (``(kh, kw, in, 4 * filters)``, cross-
    correlation: TensorFlow's convention), the recurrent convolution 'same'. Returns
    ``(outputs (batch, time, *out_image), [h, c])`` in ``data_format``."""
    x = f64(x)
    kernel, recurrent_kernel, bias = f64(kernel), f64(recurrent_kernel), f64(bias)
    filters = recurrent_kernel.shape[-1] // 4
    xs = np.stack([to_channels_last(x[:, t], data_format) for t in range(x.shape[1])], axis=1)
    if initial_states is None:
        first = conv2d(xs[:, 0], kernel[..., :filters], padding=padding)
        initial_states = [np.zeros_like(first), np.zeros_like(first)]
    else:
        initial_states = [to_channels_last(f64(s), data_format) for s in initial_states]

    def step(x_t, states):
        h, c = states[0], states[1]
        z = conv2d(x_t, kernel, padding=padding) + bias
        z = z + conv2d(h, recurrent_kernel, padding='same')
        zi, zf, zc, zo = [z[..., k * filters:(k + 1) * filters] for k in range(4)]
        c_new = recurrent_activation(zf) * c + recurrent_activation(zi) * activation(zc)
        h_new = recurrent_activation(zo) * activation(c_new)
        return h_new, [h_new, c_new]

    _, outputs, states = rnn(step, xs, initial_states, mask=mask)
    outputs = np.stack([from_channels_last(outputs[:, t], data_format)
                        for t in range(outputs.shape[1])], axis=1)
    return outputs, [from_channels_last(s, data_format) for s in states]


class EngineDefined(Exception):
    """A case whose answer Keras 2's engines gave differently, each by its own rule: the
    reference says nothing (docs/semantics.md names the case)."""


def switch(condition, then_expression, else_expression):
    c = np.asarray(condition)
    t, e = f64(then_expression), f64(else_expression)
    if c.ndim == 0:
        if t.shape != e.shape:
            # TensorFlow's cond gives the chosen expression, Theano's and CNTK's elementwise
            # selection the two broadcast together
            raise EngineDefined('switch: a scalar condition between two shapes')
        return t if bool(c) else e
    c = c.reshape(c.shape + (1,) * (t.ndim - c.ndim))
    return np.where(c != 0, t, e)


def map_fn(fn, elems):
    return np.stack([fn(e) for e in np.asarray(elems)], axis=0)


def foldl(fn, elems, initializer=None):
    elems = list(np.asarray(elems))
    if initializer is None:
        acc, rest = elems[0], elems[1:]
    else:
        acc, rest = initializer, elems
    for e in rest:
        acc = fn(acc, e)
    return acc


def foldr(fn, elems, initializer=None):
    return foldl(fn, np.asarray(elems)[::-1], initializer)


# ---------------------------------------------------------------------------
# CTC (blank = last class)
# ---------------------------------------------------------------------------

def _logaddexp_all(values):
    values = [v for v in values if v != -np.inf]
    if not values:
        return -np.inf
    m = np.max(values)
    return m + np.log(np.sum(np.exp(np.asarray(values) - m)))


def ctc_log_probs(y_pred, eps=EPSILON):
    """log_softmax(log(y_pred + eps)) over the class axis."""
    return log_softmax(np.log(f64(y_pred) + eps), axis=-1)


def ctc_sequence_nll(logp, label):
    """-log p(label | logp (T, C)) by the log-space forward algorithm."""
    T, C = logp.shape
    blank = C - 1
    ext = [blank]
    for lab in label:
        ext += [int(lab), blank]
    S = len(ext)
    alpha = np.full(S, -np.inf)
    alpha[0] = logp[0, blank]
    if S > 1:
        alpha[1] = logp[0, ext[1]]
    for t in range(1, T):
        new = np.full(S, -np.inf)
        for s in range(S):
            cands = [alpha[s]]
            if s >= 1:
                cands.append(alpha[s - 1])
            if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                cands.append(alpha[s - 2])
            new[s] = _logaddexp_all(cands) + logp[t, ext[s]]
        alpha = new
    total = _logaddexp_all([alpha[S - 1]] + ([alpha[S - 2]] if S > 1 else []))
    return -total


def ctc_batch_cost(y_true, y_pred, input_length, label_length, eps=EPSILON):
    logp = ctc_log_probs(y_pred, eps)
    il = np.asarray(input_length).reshape(-1).astype(np.int64)
    ll = np.asarray(label_length).reshape(-1).astype(np.int64)
    lab = np.asarray(y_true).astype(np.int64)
    out = [ctc_sequence_nll(logp[i, :il[i]], lab[i, :ll[i]]) for i in range(logp.shape[0])]
    return np.asarray(out).reshape((-1, 1))


def collapse(path, blank):
    out, prev = [], None
    for p in path:
        p = int(p)
        if p != prev and p != blank:
            out.append(p)
        prev = p
    return out


def merge_repeats(seq):
    out = []
    for s in seq:
        if not out or out[-1] != s:
            out.append(s)
    return out


def _pad_dense(seqs):
    width = 0
    for s in seqs:
        width = width if width >= len(s) else len(s)
    dense = np.full((len(seqs), width), -1, dtype=np.int64)
    for i, s in enumerate(seqs):
        dense[i, :len(s)] = s
    return dense


def ctc_greedy_decode(y_pred, input_length, eps=EPSILON):
    logits = np.log(f64(y_pred) + eps)
    il = np.asarray(input_length).reshape(-1).astype(np.int64)
    blank = logits.shape[-1] - 1
    seqs, lp = [], []
    for i in range(logits.shape[0]):
        li = logits[i, :il[i]]
        seqs.append(collapse(np.argmax(li, axis=-1), blank))
        lp.append(-np.sum(np.max(li, axis=-1)))
    return [_pad_dense(seqs)], np.asarray(lp).reshape((-1, 1))


def prefix_beam_search(logp, beam_width=None):
    """CTC prefix beam search over ``logp (T, C)`` (log probabilities).

    Returns a list of (labelling tuple, log probability) sorted by decreasing
    probability. With ``beam_width`` None (or at least the number of prefixes)
    nothing is pruned and each labelling's probability is exact.
    """
    T, C = logp.shape
    blank = C - 1
    # prefix -> (log p ending in blank, log p ending in non-blank)
    beams = {(): (0.0, -np.inf)}
    for t in range(T):
        nxt = {}

        def add(prefix, pb, pnb):
            ob, onb = nxt.get(prefix, (-np.inf, -np.inf))
            nxt[prefix] = (np.logaddexp(ob, pb), np.logaddexp(onb, pnb))

        for prefix, (pb, pnb) in beams.items():
            tot = np.logaddexp(pb, pnb)
            add(prefix, tot + logp[t, blank], -np.inf)
            for c in range(C - 1):
                if prefix and prefix[-1] == c:
                    # repeat without a blank between: stays the same prefix
                    add(prefix, -np.inf, pnb + logp[t, c])
                    add(prefix + (c,), -np.inf, pb + logp[t, c])
                else:
                    add(prefix + (c,), -np.inf, tot + logp[t, c])
        # prefixes with no path (a repeat right after a non-blank) are dropped
        items = sorted([kv for kv in nxt.items() if np.logaddexp(*kv[1]) > -np.inf],
                       key=lambda kv: -np.logaddexp(*kv[1]))
        if beam_width is not None:
            items = items[:beam_width]
        beams = dict(items)
    res = [(p, float(np.logaddexp(*v))) for p, v in beams.items()]
    res.sort(key=lambda pv: -pv[1])
    return res


def ctc_beam_decode(y_pred, input_length, top_paths=1, merge_repeated=False, eps=EPSILON):
    logp = ctc_log_probs(y_pred, eps)
    il = np.asarray(input_length).reshape(-1).astype(np.int64)
    paths = [[] for _ in range(top_paths)]
    lp = np.zeros((logp.shape[0], top_paths))
    for i in range(logp.shape[0]):
        res = prefix_beam_search(logp[i, :il[i]])
        for k in range(top_paths):
            seq = list(res[k][0])
            if merge_repeated:
                seq = merge_repeats(seq)
            paths[k].append(seq)
            lp[i, k] = res[k][1]
    return [_pad_dense(p) for p in paths], lp


def ctc_label_dense_to_sparse(labels, label_lengths):
    """The dense form of the sparse labels: zeros past each length."""
    labels = np.asarray(labels)
    ll = np.asarray(label_lengths).reshape(-1)
    out = np.zeros_like(labels)
    for i in range(labels.shape[0]):
        out[i, :ll[i]] = labels[i, :ll[i]]
    return out


# ---------------------------------------------------------------------------
# Misc
# ---------------------------------------------------------------------------

def moving_average_update(x, value, momentum):
    return f64(x) * momentum + f64(value) * (1. - momentum)


def numerical_gradient(fn, x, h=1e-5):
    """Central finite differences of the scalar ``fn`` at float64 ``x``."""
    x = f64(x).copy()
    g = np.zeros_like(x)
    flat, gflat = x.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + h
        fp = fn(x)
        flat[i] = old - h
        fm = fn(x)
        flat[i] = old
        gflat[i] = (fp - fm) / (2 * h)
    return g
