"""Convolution and pooling on PyTorch: the engine-level functions of the names of
:mod:`keras_backend.api.convolution`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).

PyTorch convolves channels_first values with ``(out, in, spatial...)`` weights; Keras'
kernels are ``(spatial..., in, out)`` and its default format channels_last: each op moves
the channels axis and the kernel's axes (views), then calls ``torch.nn.functional``. Padding
'same' is TensorFlow's (the extra row or column after, when the total is odd), made
explicit with ``F.pad`` (max pooling pads with -inf, average pooling divides by the
entries inside the input only).
"""
import numpy as np

from .. import common, shape_rules
from .core import (torch, records_keras_shape, Tensor, _apply, _builtin_max, _host,
                   _to_tensor)

F = torch.nn.functional

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def _to_cf(v, data_format):
    """The value channels_first (PyTorch's layout)."""
    if data_format == 'channels_last':
        return v.permute(0, v.ndim - 1, *range(1, v.ndim - 1))
    return v


def _from_cf(v, data_format):
    if data_format == 'channels_last':
        return v.permute(0, *range(2, v.ndim), 1)
    return v


def _cl(v, data_format):
    """channels_first -> channels_last."""
    if data_format == 'channels_first':
        return v.permute(tuple(shape_rules.to_channels_last_perm(v.ndim)))
    return v


def _cf(v, data_format):
    """channels_last -> the data format."""
    if data_format == 'channels_first':
        return v.permute(tuple(shape_rules.to_channels_first_perm(v.ndim)))
    return v


def _weight(k, rank):
    """A Keras kernel ``(spatial..., in, out)`` as PyTorch's ``(out, in, spatial...)``."""
    return k.permute(rank + 1, rank, *range(rank))


def _pads(sizes, kernel_sizes, strides, dilations, padding):
    """(before, after) per spatial axis for ``padding`` ('valid', 'same', 'causal')."""
    out = []
    for n, k, s, d in zip(sizes, kernel_sizes, strides, dilations):
        kd = (k - 1) * d + 1
        if padding == 'same':
            total = _builtin_max((-(-n // s) - 1) * s + kd - n, 0)
            out.append((total // 2, total - total // 2))
        elif padding == 'causal':
            out.append((kd - 1, 0))
        else:
            out.append((0, 0))
    return out


def _pad_cf(v, pads, value=0.):
    """``pads`` on the spatial axes of a channels_first value."""
    if not any(a or b for a, b in pads):
        return v
    flat = []
    for a, b in reversed(pads):
        flat += [int(a), int(b)]
    return F.pad(v, flat, value=value)


def _same_dtype(v, k):
    if k.dtype != v.dtype:
        k = k.to(v.dtype)
    return k


def _conv_cf(v, k, rank, strides, padding, dilations, groups=1):
    """A convolution of a channels_first value by a Keras kernel."""
    k = _same_dtype(v, k)
    w = _weight(k, rank)
    pads = _pads(v.shape[2:], k.shape[:rank], strides, dilations, padding)
    v = _pad_cf(v, pads)
    return _CONV[rank](v, w, stride=tuple(strides), dilation=tuple(dilations), groups=groups)


def _conv(x, kernel, rank, strides, padding, data_format, dilation_rate, allow_causal=False):
    data_format = common.normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal=allow_causal)
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    dilations = shape_rules.normalize_tuple(dilation_rate, rank, 'dilation_rate')

    def op(v, k):
        y = _conv_cf(_to_cf(v, data_format), k, rank, strides, padding, dilations)
        return _from_cf(y, data_format)
    return _apply(op, _to_tensor(x), _to_tensor(kernel))


@records_keras_shape
def conv1d(x, kernel, strides=1, padding='valid', data_format=None, dilation_rate=1):
    """``F.conv1d``; 'causal' pads the left only."""
    return _conv(x, kernel, 1, strides, padding, data_format, dilation_rate,
                 allow_causal=True)


@records_keras_shape
def conv2d(x, kernel, strides=(1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1)):
    """``F.conv2d``."""
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
        out = [None if d is None else int(_host(d)) for d in _size_list(out_shape)]
        if data_format == 'channels_last':
            out = [out[0], out[-1]] + out[1:-1]
        v = _to_cf(v, data_format)
        k = _same_dtype(v, k)
        # Keras' (spatial..., out, in) kernel is PyTorch's transposed weight (in, out, ...)
        w = k.permute(rank + 1, rank, *range(rank))
        full = _CONV_T[rank](v, w, stride=tuple(strides), dilation=tuple(dilations))
        # the forward convolution of an output of ``out`` sizes, transposed: its padding
        # before is cut, and the rest cut (or zero-filled) to the output's sizes
        index = [slice(None), slice(None)]
        extra = []
        for i in range(rank):
            o = out[i + 2]
            kd = (k.shape[i] - 1) * dilations[i] + 1
            before = 0
            if padding == 'same':
                total = _builtin_max((-(-o // strides[i]) - 1) * strides[i] + kd - o, 0)
                before = total // 2
            index.append(slice(before, before + o))
            extra.append((0, _builtin_max(before + o - full.shape[i + 2], 0)))
        full = _pad_cf(full, extra)
        return _from_cf(full[tuple(index)], data_format)
    return _apply(op, _to_tensor(x), _to_tensor(kernel), output_shape)


def _size_list(s):
    if isinstance(s, (torch.Tensor, np.ndarray)):
        return list(_host(s).reshape(-1))
    return list(s)


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """``F.conv_transpose2d`` of the kernel ``(rows, cols, out_channels, in_channels)``,
    cut to ``output_shape`` as TensorFlow's ``conv2d_transpose``."""
    return _conv_transpose(x, kernel, output_shape, 2, strides, padding, data_format,
                           dilation_rate)


def _separable(x, dk, pk, rank, strides, padding, data_format, dilation_rate):
    data_format = common.normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal=(rank == 1))
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    dilations = shape_rules.normalize_tuple(dilation_rate, rank, 'dilation_rate')

    def op(v, d, p):
        v = _to_cf(v, data_format)
        cin, mult = d.shape[rank], d.shape[rank + 1]
        # (spatial..., in, multiplier) -> (spatial..., 1, in * multiplier): output channel
        # c * multiplier + m, as TensorFlow's depthwise convolution
        k = d.reshape(tuple(d.shape[:rank]) + (1, cin * mult))
        y = _conv_cf(v, k, rank, strides, padding, dilations, groups=cin)
        if p is not None:
            y = _conv_cf(y, p, rank, (1,) * rank, 'valid', (1,) * rank)
        return _from_cf(y, data_format)
    return _apply(op, _to_tensor(x), _to_tensor(dk),
                  None if pk is None else _to_tensor(pk))


def separable_conv1d(x, depthwise_kernel, pointwise_kernel, strides=1, padding='valid',
                     data_format=None, dilation_rate=1):
    """A depthwise convolution (``groups`` = channels) then a 1x1 one."""
    return _separable(x, depthwise_kernel, pointwise_kernel, 1, strides, padding,
                      data_format, dilation_rate)


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """A depthwise convolution (``groups`` = channels) then a 1x1 one."""
    return _separable(x, depthwise_kernel, pointwise_kernel, 2, strides, padding,
                      data_format, dilation_rate)


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding='valid', data_format=None,
                     dilation_rate=(1, 1)):
    """``F.conv2d`` with ``groups`` = channels."""
    return _separable(x, depthwise_kernel, None, 2, strides, padding, data_format,
                      dilation_rate)


@records_keras_shape
def conv3d(x, kernel, strides=(1, 1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1, 1)):
    """``F.conv3d``."""
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
    max_pool = {2: F.max_pool2d, 3: F.max_pool3d}[rank]
    avg_pool = {2: F.avg_pool2d, 3: F.avg_pool3d}[rank]

    def op(v):
        v = _to_cf(v, data_format)
        pads = _pads(v.shape[2:], pool_size, strides, (1,) * rank, padding)
        if pool_mode == 'max':
            dt = v.dtype
            if not v.is_floating_point():
                v = v.to(torch.float64)
            y = max_pool(_pad_cf(v, pads, value=-float('inf')), pool_size, strides).to(dt)
        else:
            y = avg_pool(_pad_cf(v, pads), pool_size, strides)
            if any(a or b for a, b in pads):
                # 'same' windows average over the entries inside x only, as Keras' engines
                ones = torch.ones((1, 1) + tuple(v.shape[2:]), dtype=v.dtype, device=v.device)
                y = y / avg_pool(_pad_cf(ones, pads), pool_size, strides)
        return _from_cf(y, data_format)
    return _apply(op, _to_tensor(x))


@records_keras_shape
def pool2d(x, pool_size, strides=(1, 1), padding='valid', data_format=None,
           pool_mode='max'):
    """``F.max_pool2d`` / ``F.avg_pool2d`` on TensorFlow's padding."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 2)


@records_keras_shape
def pool3d(x, pool_size, strides=(1, 1, 1), padding='valid', data_format=None,
           pool_mode='max'):
    """``F.max_pool3d`` / ``F.avg_pool3d`` on TensorFlow's padding."""
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
        b = b.to(v.dtype)
        if b.ndim == 1:
            if data_format == 'channels_first' and n > 2:
                return v + b.reshape((1, -1) + (1,) * (n - 2))
            return v + b
        if data_format == 'channels_first' and n > 2:
            return v + b.reshape((1, b.shape[-1]) + tuple(b.shape[:-1]))
        return v + b[None]
    if data_format == 'channels_last':
        op.time_batched = 'bias'   # x's leading axes are rows: a loop body's runs at once
    return _apply(op, x, bias)
