"""Locally connected on TensorFlow: the engine-level functions of the names of
:mod:`keras_backend.api.locally_connected`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from .. import shape_rules
from ..common import normalize_data_format
from .core import graph_aware, tf, _to_tensor
from .helpers import (_check_kernel, _dyn_dims, _from_channels_last, _shape_arg,
                      _to_channels_last)


@graph_aware
def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """Patches flattened in ``(k, in)`` order, multiplied by one batched
    ``tf.linalg.matmul``."""
    data_format = normalize_data_format(data_format)
    k = shape_rules.normalize_tuple(kernel_size, 1, 'kernel_size')[0]
    s = shape_rules.normalize_tuple(strides, 1, 'strides')[0]
    x = _to_tensor(inputs)
    kernel = tf.cast(_check_kernel(kernel, 3), x.dtype)
    x = _to_channels_last(x, data_format)
    out_len = kernel.shape[0]
    if out_len is None:
        raise ValueError('kernel: the number of output steps (axis 0) must be static')
    batch = _dyn_dims(x)[0]
    patches = [tf.reshape(x[:, i * s:i * s + k, :], _shape_arg([batch, -1]))
               for i in range(out_len)]
    stacked = tf.stack(patches, 0)            # (out_len, batch, k * in)
    out = tf.matmul(stacked, kernel)          # (out_len, batch, filters)
    out = tf.transpose(out, [1, 0, 2])
    return _from_channels_last(out, data_format)


@graph_aware
def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """Patches flattened ``(kh, kw, in)`` (channels_last) or ``(in, kh, kw)``
    (channels_first), multiplied by one batched ``tf.linalg.matmul``."""
    data_format = normalize_data_format(data_format)
    kh, kw = shape_rules.normalize_tuple(kernel_size, 2, 'kernel_size')
    sh, sw = shape_rules.normalize_tuple(strides, 2, 'strides')
    rows, cols = shape_rules.normalize_tuple(output_shape, 2, 'output_shape')
    x = _to_tensor(inputs)
    kernel = tf.cast(_check_kernel(kernel, 3), x.dtype)
    if kernel.shape[0] is not None and kernel.shape[0] != rows * cols:
        raise ValueError('kernel: axis 0 has %d entries, output_shape %r needs %d'
                         % (kernel.shape[0], (rows, cols), rows * cols))
    batch = _dyn_dims(x)[0]
    patches = []
    for i in range(rows):
        for j in range(cols):
            if data_format == 'channels_last':
                p = x[:, i * sh:i * sh + kh, j * sw:j * sw + kw, :]
            else:
                p = x[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw]
            patches.append(tf.reshape(p, _shape_arg([batch, -1])))
    stacked = tf.stack(patches, 0)            # (rows * cols, batch, features)
    out = tf.matmul(stacked, kernel)          # (rows * cols, batch, filters)
    filters = kernel.shape[2]
    out = tf.reshape(out, _shape_arg([rows, cols, batch, -1 if filters is None else filters]))
    if data_format == 'channels_last':
        return tf.transpose(out, [2, 0, 1, 3])
    return tf.transpose(out, [2, 3, 0, 1])
