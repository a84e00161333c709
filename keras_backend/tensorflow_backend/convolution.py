"""Convolution and pooling on TensorFlow: the engine-level functions of the names of
:mod:`keras_backend.api.convolution`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from .. import shape_rules
from ..common import normalize_data_format
from .core import graph_aware, tf, _set_shape, _to_tensor
from .helpers import (py_all, py_any, py_slice, _check_kernel, _dyn_dims, _from_channels_last,
                      _shape_arg, _to_channels_last)


def _explicit_pad(x, kernel_sizes, strides, dilations, padding):
    """Zero-pad the spatial axes of a channels_last ``x`` for ``padding``;
    returns the padded tensor (padding then becomes 'valid')."""
    static = x.shape.as_list()
    pads = [[0, 0]]
    for i, (k, s, d) in enumerate(zip(kernel_sizes, strides, dilations)):
        length = static[i + 1]
        if padding == 'same' and length is None:
            raise ValueError('padding: \'same\' with strides > 1 and dilation_rate > 1 (or '
                             'unequal depthwise strides) needs static spatial sizes, got '
                             'shape %s' % (tuple(static),))
        pads.append(list(shape_rules.padding_amounts(length, k, s, d, padding)))
    pads.append([0, 0])
    if py_all(p == [0, 0] for p in pads):
        return x
    return tf.pad(x, pads)


def _conv_core(x, conv, kernel_sizes, strides, dilations, padding, equal_strides=False):
    """Run ``conv(x, strides, padding, dilations)`` on a channels_last ``x``.

    'causal' becomes left padding; strides and dilations both above 1 (or,
    with ``equal_strides``, strides that differ between axes: TensorFlow's
    CPU depthwise kernel refuses them) are computed as an explicitly padded
    stride-1 conv subsampled by the strides (same result as TensorFlow's
    definition).
    """
    if padding == 'causal':
        x = _explicit_pad(x, kernel_sizes, strides, dilations, 'causal')
        padding = 'valid'
    if (py_any(s > 1 for s in strides) and py_any(d > 1 for d in dilations)) or (
            equal_strides and len(set(strides)) > 1):
        x = _explicit_pad(x, kernel_sizes, strides, dilations, padding)
        out = conv(x, (1,) * len(strides), 'VALID', dilations)
        slices = [py_slice(None)] + [py_slice(None, None, s) for s in strides] + \
            [py_slice(None)]
        return out[tuple(slices)]
    return conv(x, strides, padding.upper(), dilations)


def _conv_nd(x, kernel, rank, strides, padding, data_format, dilation_rate, allow_causal):
    data_format = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal=allow_causal)
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    dilation_rate = shape_rules.normalize_tuple(dilation_rate, rank, 'dilation_rate')
    x = _to_tensor(x)
    kernel = _check_kernel(kernel, rank + 2)
    if kernel.dtype != x.dtype:
        kernel = tf.cast(kernel, x.dtype)
    ksizes = tuple(kernel.shape.as_list()[:rank])
    x = _to_channels_last(x, data_format)

    def conv(inp, s, p, d):
        return tf.nn.convolution(inp, kernel, strides=list(s), padding=p, dilations=list(d))
    out = _conv_core(x, conv, ksizes, strides, dilation_rate, padding)
    return _from_channels_last(out, data_format)


@graph_aware
def conv1d(x, kernel, strides=1, padding='valid', data_format=None, dilation_rate=1):
    """``tf.nn.convolution`` on channels_last data; 'causal' is a left zero-padding of
    ``(k - 1) * dilation_rate``; strides and dilation both above 1 run as a padded stride-1
    conv subsampled by the strides."""
    return _conv_nd(x, kernel, 1, strides, padding, data_format, dilation_rate, True)


@graph_aware
def conv2d(x, kernel, strides=(1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1)):
    """``tf.nn.convolution`` on channels_last data (channels_first is transposed around
    it); strides and dilation both above 1 run as a padded stride-1 conv subsampled."""
    return _conv_nd(x, kernel, 2, strides, padding, data_format, dilation_rate, False)


def _transpose_output_shape(x_cl, output_shape, data_format, rank):
    """Channels_last output shape for a transposed conv (batch may be None)."""
    try:
        shp = [None if d is None else d for d in output_shape]
    except TypeError:
        shp = None
    if shp is None or isinstance(output_shape, (tf.Tensor, tf.Variable)):
        out = tf.cast(output_shape, 'int32')
        if data_format == 'channels_first':
            out = tf.gather(out, list(shape_rules.to_channels_last_perm(rank + 2)))
        return out, None
    if len(shp) != rank + 2:
        raise ValueError('output_shape: expected %d entries (batch, spatial..., channels in '
                         'the data format), got %r' % (rank + 2, output_shape))
    if data_format == 'channels_first':
        shp = [shp[i] for i in shape_rules.to_channels_last_perm(rank + 2)]
    static = [None if isinstance(d, (tf.Tensor, tf.Variable)) else
              (None if d is None else int(d)) for d in shp]
    dyn = list(static)
    if dyn[0] is None:
        dyn[0] = tf.shape(x_cl)[0]
    for i, d in enumerate(shp):
        if isinstance(d, (tf.Tensor, tf.Variable)):
            dyn[i] = d
    if py_any(d is None for d in dyn[1:]):
        raise ValueError('output_shape: only the batch entry may be None, got %r'
                         % (output_shape,))
    return _shape_arg(dyn), static


def _dilate_kernel(kernel, dilations):
    """``kernel`` (spatial axes first) with ``d - 1`` zeros inserted between the
    taps of each spatial axis dilated by ``d``: a dilation-1 equivalent."""
    n = kernel.shape.rank
    for i, d in enumerate(dilations):
        if d == 1:
            continue
        shape = kernel.shape.as_list()
        k = shape[i]
        grown = tf.expand_dims(kernel, i + 1)
        pads = [[0, 0]] * (n + 1)
        pads[i + 1] = [0, d - 1]
        grown = tf.pad(grown, pads)
        shape[i] = k * d
        grown = tf.reshape(grown, shape)
        index = [py_slice(None)] * n
        index[i] = py_slice(0, (k - 1) * d + 1)
        kernel = grown[tuple(index)]
    return kernel


def _conv_transpose(x, kernel, output_shape, rank, strides, padding, data_format,
                    dilation_rate):
    data_format = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    dilation_rate = shape_rules.normalize_tuple(dilation_rate, rank, 'dilation_rate')
    if py_any(s > 1 for s in strides) and py_any(d > 1 for d in dilation_rate):
        raise ValueError('dilation_rate: a transposed conv cannot have both strides %r and '
                         'dilation_rate %r above 1' % (strides, dilation_rate))
    x = _to_tensor(x)
    kernel = tf.cast(_check_kernel(kernel, rank + 2), x.dtype)
    x = _to_channels_last(x, data_format)
    out_shape, static = _transpose_output_shape(x, output_shape, data_format, rank)
    ks = kernel.shape.as_list()
    in_static = x.shape.as_list()
    if static is not None:
        if ks[rank] is not None and static[-1] is not None and static[-1] != ks[rank]:
            raise ValueError('output_shape: %s output channels, but the kernel %s has %s '
                             '(kernel layout: spatial..., out, in)'
                             % (static[-1], tuple(ks), ks[rank]))
        for i in range(rank):
            if py_all(d is not None for d in (in_static[i + 1], ks[i], static[i + 1])) and \
                    shape_rules.conv_output_length(static[i + 1], ks[i], padding, strides[i],
                                                   dilation_rate[i]) != in_static[i + 1]:
                raise ValueError('output_shape: spatial size %s (axis %d) is not compatible '
                                 'with input size %s, kernel %s, stride %d and padding %r'
                                 % (static[i + 1], i, in_static[i + 1], ks[i], strides[i],
                                    padding))
    full_strides = [1] + list(strides) + [1]
    # TensorFlow's CPU kernels refuse dilated transposed convs: the same
    # result comes from the kernel with zeros inserted between its taps.
    kernel = _dilate_kernel(kernel, dilation_rate)
    if rank == 2:
        out = tf.nn.conv2d_transpose(x, kernel, out_shape, full_strides,
                                     padding=padding.upper())
    else:
        out = tf.nn.conv3d_transpose(x, kernel, out_shape, full_strides,
                                     padding=padding.upper())
    if static is not None:
        out = _set_shape(out, static)
    return _from_channels_last(out, data_format)


@graph_aware
def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """``tf.nn.conv2d_transpose`` on channels_last data; a dilated kernel gets
    zeros between its taps (TensorFlow's CPU kernels refuse dilation); strides and
    ``dilation_rate`` cannot both be above 1."""
    return _conv_transpose(x, kernel, output_shape, 2, strides, padding, data_format,
                           dilation_rate)


def _depthwise_conv(x, depthwise_kernel, strides, padding, dilation_rate):
    """Depthwise 2-D conv of a channels_last ``x``."""
    ksizes = tuple(depthwise_kernel.shape.as_list()[:2])

    def conv(inp, s, p, d):
        return tf.nn.depthwise_conv2d(inp, depthwise_kernel, strides=[1, s[0], s[1], 1],
                                      padding=p, dilations=list(d))
    return _conv_core(x, conv, ksizes, strides, dilation_rate, padding, equal_strides=True)


@graph_aware
def separable_conv1d(x, depthwise_kernel, pointwise_kernel, strides=1, padding='valid',
                     data_format=None, dilation_rate=1):
    """Run as ``separable_conv2d`` ops (``tf.nn.depthwise_conv2d`` then a 1x1
    ``tf.nn.convolution``) on an inserted axis."""
    data_format = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal=True)
    strides = shape_rules.normalize_tuple(strides, 1, 'strides')
    dilation_rate = shape_rules.normalize_tuple(dilation_rate, 1, 'dilation_rate')
    x = _to_tensor(x)
    dk = tf.cast(_check_kernel(depthwise_kernel, 3, 'depthwise_kernel'), x.dtype)
    pk = tf.cast(_check_kernel(pointwise_kernel, 3, 'pointwise_kernel'), x.dtype)
    x = _to_channels_last(x, data_format)
    if padding == 'causal':
        x = _explicit_pad(x, (dk.shape[0],), strides, dilation_rate, 'causal')
        padding = 'valid'
    x4 = tf.expand_dims(x, 1)
    out = _depthwise_conv(x4, tf.expand_dims(dk, 0), (1,) + strides, padding,
                        (1,) + dilation_rate)
    out = tf.nn.convolution(out, tf.expand_dims(pk, 0), strides=[1, 1], padding='VALID')
    out = tf.squeeze(out, 1)
    return _from_channels_last(out, data_format)


@graph_aware
def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """``tf.nn.depthwise_conv2d``, then a 1x1 ``tf.nn.convolution``."""
    data_format = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    strides = shape_rules.normalize_tuple(strides, 2, 'strides')
    dilation_rate = shape_rules.normalize_tuple(dilation_rate, 2, 'dilation_rate')
    x = _to_tensor(x)
    dk = _check_kernel(depthwise_kernel, 4, 'depthwise_kernel')
    pk = _check_kernel(pointwise_kernel, 4, 'pointwise_kernel')
    dk, pk = tf.cast(dk, x.dtype), tf.cast(pk, x.dtype)
    out = _depthwise_conv(_to_channels_last(x, data_format), dk, strides, padding, dilation_rate)
    out = tf.nn.convolution(out, pk, strides=[1, 1], padding='VALID')
    return _from_channels_last(out, data_format)


@graph_aware
def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding='valid', data_format=None,
                     dilation_rate=(1, 1)):
    """``tf.nn.depthwise_conv2d``; unequal strides (refused by TensorFlow's CPU
    kernel) run as a padded stride-1 conv subsampled."""
    data_format = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    strides = shape_rules.normalize_tuple(strides, 2, 'strides')
    dilation_rate = shape_rules.normalize_tuple(dilation_rate, 2, 'dilation_rate')
    x = _to_tensor(x)
    dk = _check_kernel(depthwise_kernel, 4, 'depthwise_kernel')
    if dk.dtype != x.dtype:
        dk = tf.cast(dk, x.dtype)
    out = _depthwise_conv(_to_channels_last(x, data_format), dk, strides, padding, dilation_rate)
    return _from_channels_last(out, data_format)


@graph_aware
def conv3d(x, kernel, strides=(1, 1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1, 1)):
    """``tf.nn.convolution`` on channels_last data (channels_first is transposed around
    it); strides and dilation both above 1 run as a padded stride-1 conv subsampled."""
    return _conv_nd(x, kernel, 3, strides, padding, data_format, dilation_rate, False)


@graph_aware
def conv3d_transpose(x, kernel, output_shape, strides=(1, 1, 1), padding='valid',
                     data_format=None):
    """``tf.nn.conv3d_transpose`` on channels_last data."""
    return _conv_transpose(x, kernel, output_shape, 3, strides, padding, data_format,
                           (1, 1, 1))


def _pool(x, pool_size, strides, padding, data_format, pool_mode, rank):
    data_format = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    pool_mode = shape_rules.normalize_pool_mode(pool_mode)
    pool_size = shape_rules.normalize_tuple(pool_size, rank, 'pool_size')
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    x = _to_tensor(x)
    x = _to_channels_last(x, data_format)
    fn = tf.nn.max_pool if pool_mode == 'max' else tf.nn.avg_pool
    out = fn(x, ksize=list(pool_size), strides=list(strides), padding=padding.upper())
    return _from_channels_last(out, data_format)


@graph_aware
def pool2d(x, pool_size, strides=(1, 1), padding='valid', data_format=None, pool_mode='max'):
    """``tf.nn.max_pool`` / ``tf.nn.avg_pool`` on channels_last data; 'same' average
    pooling divides by the count of real (unpadded) cells."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 2)


@graph_aware
def pool3d(x, pool_size, strides=(1, 1, 1), padding='valid', data_format=None,
           pool_mode='max'):
    """``tf.nn.max_pool`` / ``tf.nn.avg_pool`` on channels_last data; 'same' average
    pooling divides by the count of real (unpadded) cells."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 3)


@graph_aware
def bias_add(x, bias, data_format=None):
    """``tf.nn.bias_add`` for a 1-D bias on channels_last, else a broadcast add; with
    channels_first a bias of rank ``ndim(x) - 1`` is reshaped (not transposed) to
    ``(1, channels, spatial...)``, as Keras 2."""
    data_format = normalize_data_format(data_format)
    x = _to_tensor(x)
    bias = _to_tensor(bias, x.dtype)
    n = x.shape.rank
    b_shape = bias.shape.as_list()
    if len(b_shape) != 1 and len(b_shape) != n - 1:
        raise ValueError('bias: expected a 1-D bias or one of rank %d (ndim(x) - 1), got shape '
                         '%s' % (n - 1, tuple(b_shape)))
    channel_axis = n - 1 if data_format == 'channels_last' else 1
    if len(b_shape) == 1:
        c = x.shape[channel_axis]
        if c is not None and b_shape[0] is not None and c != b_shape[0]:
            raise ValueError('bias: has %d entries, x has %d channels (axis %d)'
                             % (b_shape[0], c, channel_axis))
        if data_format == 'channels_first' and n > 2:
            return x + tf.reshape(bias, [1, -1] + [1] * (n - 2))
        if n >= 2:
            # the engine's BiasAdd (as Keras 2): its gradient (BiasAddGrad) needs no
            # shape arithmetic, which inside an RNN's while loop would be accumulated
            return tf.nn.bias_add(x, bias)
        return x + bias
    if data_format == 'channels_first' and n > 2:
        # As Keras: a (spatial..., channels) bias is reshaped (not transposed)
        # to (1, channels, spatial...).
        dims = _dyn_dims(bias)
        return x + tf.reshape(bias, _shape_arg([1, dims[-1]] + dims[:-1]))
    return x + tf.expand_dims(bias, 0)
