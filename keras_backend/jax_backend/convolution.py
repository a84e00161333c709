"""Convolution and pooling on JAX: the engine-level functions of the names of
:mod:`keras_backend.api.convolution`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import functools
import itertools

import numpy as np

from .. import common, shape_rules
from .core import (jax, jnp, records_keras_shape, Tensor, _apply, _builtin_max, _LOOP_DEPTH,
                   _to_tensor)

from jax import lax  # noqa: E402  (core imported it, or said how to install it)


def _cl(v, data_format):
    """channels_first -> channels_last."""
    if data_format == 'channels_first':
        return jnp.transpose(v, shape_rules.to_channels_last_perm(v.ndim))
    return v


def _cf(v, data_format):
    """channels_last -> the data format."""
    if data_format == 'channels_first':
        return jnp.transpose(v, shape_rules.to_channels_first_perm(v.ndim))
    return v


def _dims(rank):
    sp = 'DHW'[3 - rank:] if rank <= 3 else None
    return ('N' + sp + 'C', sp + 'IO', 'N' + sp + 'C')


def _conv_padding(padding, kernel_sizes, dilations):
    if not isinstance(padding, str):
        return padding
    if padding == 'causal':
        return [((k - 1) * d, 0) for k, d in zip(kernel_sizes, dilations)]
    return padding.upper()


def _conv_cl(v, k, strides, padding, dilations, groups=1):
    rank = v.ndim - 2
    ks = k.shape[:rank]
    conv = functools.partial(
        lax.conv_general_dilated, window_strides=tuple(strides),
        padding=_conv_padding(padding, ks, dilations), rhs_dilation=tuple(dilations),
        dimension_numbers=_dims(rank), feature_group_count=groups)
    k = k.astype(v.dtype)
    if groups == 1 and jax.default_backend() == 'cpu':
        if rank == 3:
            return _conv3d_by_conv2d(v, k, strides, conv.keywords['padding'], dilations)
        if _LOOP_DEPTH[0]:
            return _conv_by_forward_convs(conv, v, k)
    return conv(v, k)


def _conv3d_by_conv2d(v, k, strides, padding, dilations):
    """A 3-D convolution (channels last) as one 2-D convolution over the frames of every
    kernel depth offset at once, the offsets then summed along the depth axis.

    XLA's CPU backend runs 3-D convolutions and their gradients 5-10x slower than the
    2-D ones doing the same arithmetic (a Conv3D's training step; TensorFlow's oneDNN has
    no such gap). The same values up to float rounding."""
    depth_k = k.shape[0]
    dilated = [(n - 1) * d + 1 for n, d in zip(k.shape[:3], dilations)]
    pads = padding
    if isinstance(pads, str):
        pads = lax.padtype_to_pads(v.shape[1:4], dilated, strides, pads)
    pads = [tuple(int(e) for e in pair) for pair in pads]
    zero = jnp.zeros((), v.dtype)
    v = lax.pad(v, zero, ((0, 0, 0), pads[0] + (0,), (0, 0, 0), (0, 0, 0), (0, 0, 0)))
    batch, depth = v.shape[:2]
    out_depth = (depth - dilated[0]) // strides[0] + 1
    # (kd, kh, kw, in, out) -> (kh, kw, in, kd * out): every depth offset's outputs
    k2 = jnp.transpose(k, (1, 2, 3, 0, 4)).reshape(tuple(k.shape[1:4]) +
                                                   (depth_k * k.shape[4],))
    y = _conv_cl(v.reshape((batch * depth,) + tuple(v.shape[2:])), k2, strides[1:],
                 pads[1:], dilations[1:])
    y = y.reshape((batch, depth) + tuple(y.shape[1:3]) + (depth_k, k.shape[4]))
    out = None
    for i in range(depth_k):
        start = i * dilations[0]
        tap = lax.slice(y, (0, start, 0, 0, i, 0),
                        (batch, start + (out_depth - 1) * strides[0] + 1) +
                        tuple(y.shape[2:4]) + (i + 1, k.shape[4]),
                        (1, strides[0], 1, 1, 1, 1))[:, :, :, :, 0]
        out = tap if out is None else out + tap
    return out


def _conv_by_forward_convs(conv, v, k):
    """``conv(v, k)`` (``lax.conv_general_dilated``, channels last, no groups) whose
    gradients are computed as forward convolutions and a ``dot``.

    On XLA's CPU backend the convolutions that JAX's own transpose rules emit (the
    kernel with its in/out axes swapped in the dimension numbers, the kernel gradient as
    a convolution over the batch) run 5-30x slower than a forward convolution of the same
    size inside a ``lax.scan`` (a ConvLSTM2D step: minutes). Here the input gradient is
    a forward convolution of the output gradient with the flipped kernel (its axes
    swapped in the array), and the kernel gradient, for each kernel offset, a ``dot`` of
    the input window it saw with the output gradient. The same values up
    to float rounding; differentiable again (the backward pass is JAX code)."""
    rank = v.ndim - 2
    p = conv.keywords
    strides, dilations = p['window_strides'], p['rhs_dilation']
    dims = p['dimension_numbers']
    sizes = tuple(k.shape[:rank])
    dilated = tuple((n - 1) * d + 1 for n, d in zip(sizes, dilations))
    pads = p['padding']
    if isinstance(pads, str):
        pads = lax.padtype_to_pads(v.shape[1:-1], dilated, strides, pads)
    pads = tuple(tuple(int(e) for e in pair) for pair in pads)

    def forward(a, w):
        return lax.conv_general_dilated(a, w, strides, pads, rhs_dilation=dilations,
                                        dimension_numbers=dims)

    @jax.custom_vjp
    def f(a, w):
        return forward(a, w)

    def fwd(a, w):
        return forward(a, w), (a, w)

    def bwd(res, g):
        a, w = res
        g = g.astype(a.dtype)
        # input gradient: the output gradient dilated by the strides, convolved with
        # the kernel flipped in space and its in/out channels swapped
        wt = jnp.swapaxes(jnp.flip(w, tuple(range(rank))), rank, rank + 1)
        back_pads = []
        for i in range(rank):
            before = dilated[i] - 1 - pads[i][0]
            out_dilated = (g.shape[i + 1] - 1) * strides[i] + 1
            after = a.shape[i + 1] + dilated[i] - 1 - out_dilated - before
            back_pads.append((before, after))
        ga = lax.conv_general_dilated(g, wt, (1,) * rank, back_pads,
                                      lhs_dilation=strides, rhs_dilation=dilations,
                                      dimension_numbers=dims)
        # kernel gradient: for each kernel offset, the input window it saw (a strided
        # slice of the padded input) contracted with the output gradient
        padded = lax.pad(a, jnp.zeros((), a.dtype),
                         ((0, 0, 0),) + tuple((lo, hi, 0) for lo, hi in pads) + ((0, 0, 0),))
        axes = list(range(rank + 1))
        taps = []
        for offset in itertools.product(*[range(n) for n in sizes]):
            start = [0] + [o * d for o, d in zip(offset, dilations)] + [0]
            limit = ([a.shape[0]] +
                     [st + (n - 1) * s + 1 for st, n, s in zip(start[1:], g.shape[1:-1],
                                                              strides)] + [a.shape[-1]])
            window = lax.slice(padded, start, limit, (1,) + tuple(strides) + (1,))
            taps.append(jnp.tensordot(window, g, axes=(axes, axes)))
        gw = jnp.stack(taps).reshape(tuple(w.shape))
        return ga, gw.astype(w.dtype)

    f.defvjp(fwd, bwd)
    return f(v, k)


def _conv(x, kernel, rank, strides, padding, data_format, dilation_rate, allow_causal=False):
    data_format = common.normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal=allow_causal)
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    dilations = shape_rules.normalize_tuple(dilation_rate, rank, 'dilation_rate')

    def op(v, k):
        return _cf(_conv_cl(_cl(v, data_format), k, strides, padding, dilations), data_format)
    out = _apply(op, _to_tensor(x), _to_tensor(kernel))
    if isinstance(out, Tensor):
        # what ``rnn`` needs to merge the convolutions of one input (``_conv_groups``)
        out._conv_key = (rank, strides, padding, dilations,
                         1 if data_format == 'channels_first' else -1)
    return out


@records_keras_shape
def conv1d(x, kernel, strides=1, padding='valid', data_format=None, dilation_rate=1):
    """``lax.conv_general_dilated``; 'causal' pads the left only."""
    return _conv(x, kernel, 1, strides, padding, data_format, dilation_rate,
                 allow_causal=True)


@records_keras_shape
def conv2d(x, kernel, strides=(1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1)):
    """``lax.conv_general_dilated``."""
    return _conv(x, kernel, 2, strides, padding, data_format, dilation_rate)


def _conv_transpose(x, kernel, output_shape, rank, strides, padding, data_format,
                    dilation_rate):
    data_format = common.normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    dilations = shape_rules.normalize_tuple(dilation_rate, rank, 'dilation_rate')
    if isinstance(output_shape, (list, tuple)):
        output_shape = list(output_shape)

    def op(v, k, out_shape):
        v = _cl(v, data_format)
        out = [None if d is None else int(np.asarray(d)) for d in _size_list(out_shape)]
        if data_format == 'channels_first':
            out = [out[i] for i in shape_rules.to_channels_last_perm(rank + 2)]
        # the forward convolution of the output to x, transposed: x dilated by the
        # strides, the kernel flipped with its channel axes swapped
        kt = jnp.swapaxes(jnp.flip(k, axis=tuple(range(rank))), rank, rank + 1)
        pads = []
        for i in range(rank):
            kd = (k.shape[i] - 1) * dilations[i] + 1
            o, n_in, s = out[i + 1], v.shape[i + 1], strides[i]
            if padding == 'same':
                total = _builtin_max((-(-o // s) - 1) * s + kd - o, 0)
                before = total // 2
            else:
                before = 0
            lo = kd - 1 - before
            hi = o - (n_in - 1) * s - 1 + before
            pads.append((lo, hi))
        y = lax.conv_general_dilated(v, kt.astype(v.dtype), window_strides=(1,) * rank,
                                     padding=pads, lhs_dilation=tuple(strides),
                                     rhs_dilation=tuple(dilations),
                                     dimension_numbers=_dims(rank))
        return _cf(y, data_format)
    return _apply(op, _to_tensor(x), _to_tensor(kernel), output_shape)


def _size_list(s):
    if isinstance(s, (jax.Array, np.ndarray)):
        return list(np.asarray(s))
    return list(s)


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """The transpose of ``conv2d``: ``lax.conv_general_dilated`` with the input dilated
    by the strides and the kernel (``(rows, cols, out_channels, in_channels)``) flipped."""
    return _conv_transpose(x, kernel, output_shape, 2, strides, padding, data_format,
                           dilation_rate)


def _depthwise_cl(v, dk, strides, padding, dilations):
    rank = v.ndim - 2
    cin, mult = dk.shape[rank], dk.shape[rank + 1]
    k = dk.reshape(dk.shape[:rank] + (1, cin * mult))
    return _conv_cl(v, k, strides, padding, dilations, groups=cin)


def _separable(x, dk, pk, rank, strides, padding, data_format, dilation_rate):
    data_format = common.normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal=(rank == 1))
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    dilations = shape_rules.normalize_tuple(dilation_rate, rank, 'dilation_rate')

    def op(v, d, p):
        y = _depthwise_cl(_cl(v, data_format), d, strides, padding, dilations)
        if p is not None:
            y = _conv_cl(y, p, (1,) * rank, 'valid', (1,) * rank)
        return _cf(y, data_format)
    return _apply(op, _to_tensor(x), _to_tensor(dk),
                  None if pk is None else _to_tensor(pk))


def separable_conv1d(x, depthwise_kernel, pointwise_kernel, strides=1, padding='valid',
                     data_format=None, dilation_rate=1):
    """A depthwise convolution (``feature_group_count`` = channels) then a 1x1 one."""
    return _separable(x, depthwise_kernel, pointwise_kernel, 1, strides, padding,
                      data_format, dilation_rate)


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """A depthwise convolution (``feature_group_count`` = channels) then a 1x1 one."""
    return _separable(x, depthwise_kernel, pointwise_kernel, 2, strides, padding,
                      data_format, dilation_rate)


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding='valid', data_format=None,
                     dilation_rate=(1, 1)):
    """``lax.conv_general_dilated`` with ``feature_group_count`` = channels."""
    return _separable(x, depthwise_kernel, None, 2, strides, padding, data_format,
                      dilation_rate)


@records_keras_shape
def conv3d(x, kernel, strides=(1, 1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1, 1)):
    """``lax.conv_general_dilated``; on CPU as 2-D convolutions summed over the kernel's
    depth (``_conv3d_by_conv2d``: XLA's CPU 3-D convolution is 5-10x slower)."""
    return _conv(x, kernel, 3, strides, padding, data_format, dilation_rate)


def conv3d_transpose(x, kernel, output_shape, strides=(1, 1, 1), padding='valid',
                     data_format=None):
    """The transpose of ``conv3d`` (see ``conv2d_transpose``)."""
    return _conv_transpose(x, kernel, output_shape, 3, strides, padding, data_format,
                           (1, 1, 1))


def _pool(x, pool_size, strides, padding, data_format, pool_mode, rank):
    data_format = common.normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    pool_mode = shape_rules.normalize_pool_mode(pool_mode)
    pool_size = shape_rules.normalize_tuple(pool_size, rank, 'pool_size')
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    window = (1,) + tuple(pool_size) + (1,)
    step = (1,) + tuple(strides) + (1,)

    def op(v):
        v = _cl(v, data_format)
        pad = padding.upper()
        if pool_mode == 'max':
            # numpy identities: JAX then lowers to its differentiable max/sum windows
            init = -np.inf if jnp.issubdtype(v.dtype, jnp.floating) else \
                np.iinfo(v.dtype).min
            y = lax.reduce_window(v, np.array(init, v.dtype), lax.max, window, step, pad)
        else:
            zero = np.array(0, v.dtype)
            total = lax.reduce_window(v, zero, lax.add, window, step, pad)
            # 'same' windows average over the entries inside x only, as Keras' engines
            count = lax.reduce_window(jnp.ones(v.shape[1:-1], v.dtype)[None, ..., None],
                                      zero, lax.add, window, step, pad)
            y = total / count
        return _cf(y, data_format)
    return _apply(op, _to_tensor(x))


@records_keras_shape
def pool2d(x, pool_size, strides=(1, 1), padding='valid', data_format=None, pool_mode='max'):
    """``lax.reduce_window``; 'avg' divides by the entries inside ``x``."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 2)


@records_keras_shape
def pool3d(x, pool_size, strides=(1, 1, 1), padding='valid', data_format=None,
           pool_mode='max'):
    """``lax.reduce_window``; 'avg' divides by the entries inside ``x``."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 3)


@records_keras_shape
def bias_add(x, bias, data_format=None):
    """A broadcast add; with channels_first a bias of rank ``ndim(x) - 1`` is reshaped
    (not transposed) to ``(1, channels, spatial...)``, as Keras 2."""
    data_format = common.normalize_data_format(data_format)
    x = _to_tensor(x)
    bias = _to_tensor(bias)

    def op(v, b):
        n = v.ndim
        b = b.astype(v.dtype)
        if b.ndim == 1:
            if data_format == 'channels_first' and n > 2:
                return v + b.reshape((1, -1) + (1,) * (n - 2))
            return v + b
        if data_format == 'channels_first' and n > 2:
            return v + b.reshape((1, b.shape[-1]) + b.shape[:-1])
        return v + b[None]
    return _apply(op, x, bias)
