"""Locally connected on PyTorch: the engine-level functions of the names of
:mod:`keras_backend.api.locally_connected`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from .. import common, shape_rules
from .core import torch, _apply, _to_tensor
from .convolution import _cf, _cl


def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """One product per output position (``torch.einsum`` over the stacked patches)."""
    data_format = common.normalize_data_format(data_format)
    k_size = shape_rules.normalize_tuple(kernel_size, 1, 'kernel_size')[0]
    stride = shape_rules.normalize_tuple(strides, 1, 'strides')[0]

    def op(v, k):
        v = _cl(v, data_format)
        n_out = k.shape[0]
        patches = torch.stack([v[:, i * stride:i * stride + k_size, :].reshape(v.shape[0], -1)
                               for i in range(n_out)], dim=1)
        y = torch.einsum('bpf,pfo->bpo', patches, k.to(v.dtype))
        return _cf(y, data_format)
    return _apply(op, _to_tensor(inputs), _to_tensor(kernel))


def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """One product per output position (``torch.einsum`` over the stacked patches); a
    channels_first patch is flattened in (channels, rows, cols) order, as Keras'."""
    data_format = common.normalize_data_format(data_format)
    kr, kc = shape_rules.normalize_tuple(kernel_size, 2, 'kernel_size')
    sr, sc = shape_rules.normalize_tuple(strides, 2, 'strides')
    rows, cols = shape_rules.normalize_tuple(output_shape, 2, 'output_shape')

    def op(v, k):
        ps = []
        for i in range(rows):
            for j in range(cols):
                if data_format == 'channels_first':
                    p = v[:, :, i * sr:i * sr + kr, j * sc:j * sc + kc]
                else:
                    p = v[:, i * sr:i * sr + kr, j * sc:j * sc + kc, :]
                ps.append(p.reshape(v.shape[0], -1))
        patches = torch.stack(ps, dim=1)
        y = torch.einsum('bpf,pfo->bpo', patches, k.to(v.dtype))
        y = y.reshape(v.shape[0], rows, cols, -1)
        return _cf(y, data_format)
    return _apply(op, _to_tensor(inputs), _to_tensor(kernel))
