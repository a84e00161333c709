"""Locally connected on CNTK 2.7: the engine-level functions of the names of
:mod:`keras_backend.api.locally_connected`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from .. import shape_rules
from ..common import normalize_data_format
from .core import (C, _add_axis, _coerce_pair, _drop_axis, _reshape, _static_shape,
                   _transpose_node)
from .shapes import batch_flatten


def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """One ``C.times`` per output step on the flattened patch, spliced."""
    inputs, kernel = _coerce_pair(inputs, kernel)
    fmt = normalize_data_format(data_format)
    k = shape_rules.normalize_tuple(kernel_size, 1, 'kernel_size')[0]
    s = shape_rules.normalize_tuple(strides, 1, 'strides')[0]
    x = inputs if fmt == 'channels_last' else _transpose_node(inputs, (0, 2, 1))
    steps = _static_shape(kernel)[0]
    outs = []
    for i in range(steps):
        patch = batch_flatten(C.slice(x, 1, i * s, i * s + k))
        w = _drop_axis(C.slice(kernel, 0, i, i + 1), 0)
        outs.append(_add_axis(C.times(patch, w), 1))
    y = C.splice(*outs, axis=1) if len(outs) > 1 else outs[0]
    return y if fmt == 'channels_last' else _transpose_node(y, (0, 2, 1))


def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """One ``C.times`` per output position on the flattened patch, spliced; patches flatten as
    ``(kh, kw, in)`` for channels_last and ``(in, kh, kw)`` for channels_first."""
    inputs, kernel = _coerce_pair(inputs, kernel)
    fmt = normalize_data_format(data_format)
    kh, kw = shape_rules.normalize_tuple(kernel_size, 2, 'kernel_size')
    sh, sw = shape_rules.normalize_tuple(strides, 2, 'strides')
    rows, cols = shape_rules.normalize_tuple(output_shape, 2, 'output_shape')
    ha, wa = (2, 3) if fmt == 'channels_first' else (1, 2)
    outs = []
    for r in range(rows):
        for c in range(cols):
            patch = C.slice(inputs, [ha, wa], [r * sh, c * sw], [r * sh + kh, c * sw + kw])
            w = _drop_axis(C.slice(kernel, 0, r * cols + c, r * cols + c + 1), 0)
            outs.append(_add_axis(C.times(batch_flatten(patch), w), 1))
    y = C.splice(*outs, axis=1) if len(outs) > 1 else outs[0]
    filters = _static_shape(kernel)[-1]
    y = _reshape(y, (rows, cols, filters), begin_axis=1)
    return y if fmt == 'channels_last' else _transpose_node(y, (0, 3, 1, 2))
