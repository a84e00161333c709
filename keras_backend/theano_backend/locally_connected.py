"""Locally connected on Theano 1.0.5 / PyTensor: the engine-level functions of the names of
:mod:`keras_backend.api.locally_connected`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from __future__ import absolute_import, division, print_function

from .. import shape_rules
from ..common import normalize_data_format
from .core import T, _engine, _known_shape, _to_tensor, _with_shape
from .helpers import _check_kernel, _from_channels_last, _patches, _to_channels_last


def _local_patches(inputs, kernel_size, strides, data_format, n, name):
    inputs = _to_tensor(inputs)
    data_format = normalize_data_format(data_format)
    kernel_size = shape_rules.normalize_tuple(kernel_size, n, 'kernel_size')
    strides = shape_rules.normalize_tuple(strides, n, 'strides')
    x_cl = _to_channels_last(inputs, data_format)
    cols = _patches(x_cl, kernel_size, strides, (1,) * n, [(0, 0)] * n)
    return T.stack(cols, axis=n + 1), data_format  # (B, *O, nK, C)


def _local_apply(patches, kernel, n_locations, feat):
    """patches (B, L, feat), kernel (L, feat, F) -> (B, L, F) (batched dot over L)."""
    p = patches.dimshuffle(1, 0, 2)
    out = _engine.batched_dot(p, kernel)
    return out.dimshuffle(1, 0, 2)


def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """Strided slices and a batched product per output location."""
    kernel = _to_tensor(kernel)
    ks = _check_kernel(kernel, 3, 'local_conv1d')
    stacked, data_format = _local_patches(inputs, kernel_size, strides, data_format, 1,
                                          'local_conv1d')
    b = stacked.shape[0]
    p = T.reshape(stacked, T.stack([b, ks[0], ks[1]]), ndim=3)
    out = _local_apply(p, kernel, ks[0], ks[1])
    out = _with_shape(out, (_known_shape(inputs)[0], ks[0], ks[2]))
    return _from_channels_last(out, data_format)


def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """Strided slices and a batched product per output location."""
    kernel = _to_tensor(kernel)
    ks = _check_kernel(kernel, 3, 'local_conv2d')
    rows, cols_ = shape_rules.normalize_tuple(output_shape, 2, 'output_shape')
    stacked, data_format = _local_patches(inputs, kernel_size, strides, data_format, 2,
                                          'local_conv2d')
    if data_format == 'channels_first':
        stacked = stacked.dimshuffle(0, 1, 2, 4, 3)  # (B, O1, O2, C, nK)
    b = stacked.shape[0]
    p = T.reshape(stacked, T.stack([b, rows * cols_, ks[1]]), ndim=3)
    out = _local_apply(p, kernel, ks[0], ks[1])  # (B, L, F)
    out = T.reshape(out, T.stack([b, rows, cols_, ks[2]]), ndim=4)
    out = _with_shape(out, (_known_shape(inputs)[0], rows, cols_, ks[2]))
    return _from_channels_last(out, data_format)
