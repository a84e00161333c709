"""Convolution and pooling: convolutions, pooling, bias_add.

The contract of each name of this section of the API reference, side by side: its
argument rules (``SPECS[name]``: ``({argument: checker}, [checks across arguments])``,
in the vocabulary of :mod:`keras_backend.checks`) and its one docstring
(``DOCS[name]``). :mod:`keras_backend.api` gathers the sections in order.
"""
from ..checks import (CONV_PAD, CONV_PAD_CAUSAL, DF, PAD, T, bias_size, choice, conv_channels,
    int_tuple, output_shape_rank, pool_rank, separable_channels, shape_arg)

TITLE = 'Convolution and pooling'
NAMES = ('conv1d', 'conv2d', 'conv2d_transpose', 'separable_conv1d', 'separable_conv2d',
         'depthwise_conv2d', 'conv3d', 'conv3d_transpose', 'pool2d', 'pool3d', 'bias_add')
SPECS = {}
DOCS = {}


# ---------------------------------------------------------------------------
# conv1d
# ---------------------------------------------------------------------------

SPECS['conv1d'] = ({'x': T, 'kernel': T, 'strides': int_tuple(1),
                    'padding': CONV_PAD_CAUSAL, 'data_format': DF,
                    'dilation_rate': int_tuple(1)}, [conv_channels(1)])

DOCS['conv1d'] = """1-D convolution over the steps axis.

On TensorFlow and CNTK this is a cross-correlation (the kernel is not
flipped); on Theano it is a true convolution with the kernel reversed along
its spatial axis, as in Keras 2.3.1's Theano backend.
``keras_backend.utils.convert_kernel`` converts weights between the two
conventions.

Arguments:
    x: A float tensor of shape ``(batch, steps, in_channels)`` for
        ``'channels_last'`` or ``(batch, in_channels, steps)`` for
        ``'channels_first'``.
    kernel: A float tensor of shape ``(kernel_size, in_channels,
        out_channels)``.
    strides: A positive integer, the step between windows (default 1).
    padding: ``'valid'`` (default, no padding), ``'same'`` (the output has
        ``ceil(steps / strides)`` steps) or ``'causal'`` (``(kernel_size - 1) *
        dilation_rate`` zeros added before the first step only, so output
        ``t`` sees no input after ``t``).
    data_format: ``'channels_last'``, ``'channels_first'`` or ``None``
        (default: ``image_data_format()``).
    dilation_rate: A positive integer, the spacing between kernel taps
        (default 1).

Returns:
    A tensor of ``x``'s dtype and shape ``(batch, new_steps, out_channels)``
    (``(batch, out_channels, new_steps)`` for ``'channels_first'``).

Raises:
    TypeError: If ``x`` or ``kernel`` is not a tensor, ``strides`` or
        ``dilation_rate`` is not an int, or ``padding`` or
        ``data_format`` is not a string.
    ValueError: If ``x`` or ``kernel`` has the wrong rank, their channels differ,
        a stride or dilation is below 1, ``padding`` or ``data_format`` is not an
        allowed value, or with ``'valid'`` padding the kernel does not fit in ``x``.

Example:
    >>> x = K.constant([[[1.], [2.], [3.], [4.]]])   # (batch=1, steps=4, channels=1)
    >>> kernel = K.ones((2, 1, 1))
    >>> K.eval(K.conv1d(x, kernel))[0, :, 0]
    array([3., 5., 7.], dtype=float32)
    >>> K.eval(K.conv1d(x, kernel, padding='causal'))[0, :, 0]
    array([1., 3., 5., 7.], dtype=float32)
    >>> K.int_shape(K.conv1d(K.zeros((2, 10, 3)), K.zeros((3, 3, 8)), strides=2, padding='same'))
    (2, 5, 8)
"""


# ---------------------------------------------------------------------------
# conv2d
# ---------------------------------------------------------------------------

SPECS['conv2d'] = ({'x': T, 'kernel': T, 'strides': int_tuple(2), 'padding': CONV_PAD, 'data_format': DF,
                    'dilation_rate': int_tuple(2)}, [conv_channels(2)])

DOCS['conv2d'] = """2-D convolution over the rows and columns of images.

On TensorFlow and CNTK this is a cross-correlation (the kernel is not
flipped); on Theano it is a true convolution with the kernel reversed along
both spatial axes, as in Keras 2.3.1's Theano backend.
``keras_backend.utils.convert_kernel`` converts weights between the two
conventions.

Arguments:
    x: A float tensor of shape ``(batch, rows, cols, in_channels)`` for
        ``'channels_last'`` or ``(batch, in_channels, rows, cols)`` for
        ``'channels_first'``.
    kernel: A float tensor of shape ``(kernel_rows, kernel_cols,
        in_channels, out_channels)``, whatever the data format.
    strides: An integer or a tuple of 2 positive integers (default
        ``(1, 1)``).
    padding: ``'valid'`` (default, no padding) or ``'same'`` (zero padding
        so that each spatial size is ``ceil(size / stride)``). On Theano also
        ``'full'`` (zero padding of the dilated kernel's size - 1 on each
        side), as Keras 2.3.1's Theano backend takes for every convolution
        and transposed convolution, not for pooling.
    data_format: ``'channels_last'``, ``'channels_first'`` or ``None``
        (default: ``image_data_format()``).
    dilation_rate: An integer or a tuple of 2 positive integers, the
        spacing between kernel taps (default ``(1, 1)``).

Returns:
    A 4-D tensor of ``x``'s dtype with ``out_channels`` channels, laid out in
    ``data_format``.

Raises:
    TypeError: If ``x`` or ``kernel`` is not a tensor, ``strides`` or
        ``dilation_rate`` is not an int or a tuple of 2 ints, or ``padding`` or
        ``data_format`` is not a string.
    ValueError: If ``x`` or ``kernel`` has the wrong rank, their channels differ,
        a stride or dilation is below 1, ``padding`` or ``data_format`` is not an
        allowed value, or with ``'valid'`` padding the kernel does not fit in ``x``.

Example:
    >>> x = K.constant(np.arange(1., 10.).reshape((1, 3, 3, 1)))
    >>> kernel = K.ones((2, 2, 1, 1))
    >>> K.eval(K.conv2d(x, kernel))[0, :, :, 0]
    array([[12., 16.],
           [24., 28.]], dtype=float32)
    >>> K.int_shape(K.conv2d(K.zeros((1, 5, 5, 3)), K.zeros((3, 3, 3, 4)), padding='same'))
    (1, 5, 5, 4)
    >>> K.int_shape(K.conv2d(K.zeros((1, 3, 5, 5)), K.zeros((3, 3, 3, 4)),
    ...                      strides=(2, 2), data_format='channels_first'))
    (1, 4, 2, 2)
"""


# ---------------------------------------------------------------------------
# conv2d_transpose
# ---------------------------------------------------------------------------

SPECS['conv2d_transpose'] = ({'x': T, 'kernel': T, 'output_shape': shape_arg(allow_none_dims=True),
                              'strides': int_tuple(2), 'padding': CONV_PAD, 'data_format': DF,
                              'dilation_rate': int_tuple(2)}, [output_shape_rank(2)])

DOCS['conv2d_transpose'] = """2-D transposed convolution, the input gradient of ``conv2d``.

Each input pixel adds the kernel, weighted by its value, into the output;
used to upsample feature maps. ``output_shape`` is needed because several
output sizes map back to the same input size with strides above 1. On
Theano the kernel's spatial axes are reversed relative to TensorFlow and
CNTK, as in Keras 2.3.1's Theano backend; ``keras_backend.utils.convert_kernel``
converts weights between the two conventions.

Arguments:
    x: A 4-D float tensor laid out in ``data_format``, with ``in_channels``
        channels.
    kernel: A float tensor of shape ``(kernel_rows, kernel_cols,
        out_channels, in_channels)`` (note the order of the channels).
    output_shape: The full output shape, a tuple of 4 integers in
        ``data_format`` layout; the batch entry may be ``None`` (taken from
        ``x``).
    strides: An integer or a tuple of 2 positive integers (default
        ``(1, 1)``).
    padding: ``'valid'`` (default) or ``'same'``, as for the ``conv2d``
        that this transposes.
    data_format: ``'channels_last'``, ``'channels_first'`` or ``None``
        (default: ``image_data_format()``).
    dilation_rate: An integer or a tuple of 2 positive integers (default
        ``(1, 1)``); it cannot exceed 1 together with ``strides``.

Returns:
    A 4-D tensor of ``x``'s dtype and shape ``output_shape``.

Raises:
    TypeError: If ``x`` or ``kernel`` is not a tensor, ``output_shape`` is not a
        tuple of ints (and ``None``), or ``strides``, ``dilation_rate``,
        ``padding`` or ``data_format`` has the wrong type.
    ValueError: If ``x`` or ``kernel`` has the wrong rank, the channels of ``x``,
        ``kernel`` and ``output_shape`` disagree, an argument is not an allowed
        value, or ``output_shape`` is not a size that a ``conv2d`` with these
        settings maps back to the spatial size of ``x``.

Example:
    >>> x = K.ones((1, 2, 2, 1))
    >>> y = K.conv2d_transpose(x, K.ones((2, 2, 1, 1)), (1, 3, 3, 1))
    >>> K.eval(y)[0, :, :, 0]
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]], dtype=float32)
    >>> K.int_shape(K.conv2d_transpose(K.zeros((1, 3, 3, 4)), K.zeros((3, 3, 2, 4)),
    ...                                (1, 6, 6, 2), strides=(2, 2), padding='same'))
    (1, 6, 6, 2)
"""


# ---------------------------------------------------------------------------
# separable_conv1d
# ---------------------------------------------------------------------------

SPECS['separable_conv1d'] = ({'x': T, 'depthwise_kernel': T, 'pointwise_kernel': T,
                              'strides': int_tuple(1), 'padding': CONV_PAD_CAUSAL,
                              'data_format': DF, 'dilation_rate': int_tuple(1)},
                             [separable_channels(1)])

DOCS['separable_conv1d'] = """1-D separable convolution: depthwise, then pointwise.

Each input channel is first convolved with its own ``depth_multiplier``
filters (``depthwise_kernel``); the ``in_channels * depth_multiplier``
results are then mixed by a convolution of size 1 (``pointwise_kernel``).
The depthwise step is a cross-correlation on every engine (Keras 2.3.1's
Theano backend flipped these kernels back as well).

Arguments:
    x: A float tensor of shape ``(batch, steps, in_channels)`` for
        ``'channels_last'`` or ``(batch, in_channels, steps)`` for
        ``'channels_first'``.
    depthwise_kernel: A float tensor of shape ``(kernel_size, in_channels,
        depth_multiplier)``.
    pointwise_kernel: A float tensor of shape ``(1, in_channels *
        depth_multiplier, out_channels)``.
    strides: A positive integer (default 1).
    padding: ``'valid'`` (default), ``'same'`` or ``'causal'``, as for
        ``conv1d``.
    data_format: ``'channels_last'``, ``'channels_first'`` or ``None``
        (default: ``image_data_format()``).
    dilation_rate: A positive integer (default 1).

Returns:
    A 3-D tensor of ``x``'s dtype with ``out_channels`` channels, laid out in
    ``data_format``.

Raises:
    TypeError: If an input or kernel is not a tensor, ``strides`` or
        ``dilation_rate`` is not an int, or ``padding`` or ``data_format`` is not a
        string.
    ValueError: If an argument has the wrong rank, the channels of ``x``, of
        ``depthwise_kernel`` and (times the multiplier) of ``pointwise_kernel``
        differ, a stride or dilation is below 1, ``padding`` or ``data_format`` is
        not an allowed value, or with ``'valid'`` padding the kernel does not fit.

Example:
    >>> x = K.constant([[[1.], [2.], [3.], [4.]]])   # (batch=1, steps=4, channels=1)
    >>> y = K.separable_conv1d(x, K.ones((2, 1, 1)), K.constant([[[2.]]]))
    >>> K.eval(y)[0, :, 0]
    array([ 6., 10., 14.], dtype=float32)
    >>> K.int_shape(K.separable_conv1d(K.zeros((1, 10, 3)), K.zeros((3, 3, 2)),
    ...                                K.zeros((1, 6, 4))))
    (1, 8, 4)
"""


# ---------------------------------------------------------------------------
# separable_conv2d
# ---------------------------------------------------------------------------

SPECS['separable_conv2d'] = ({'x': T, 'depthwise_kernel': T, 'pointwise_kernel': T,
                              'strides': int_tuple(2), 'padding': CONV_PAD, 'data_format': DF,
                              'dilation_rate': int_tuple(2)}, [separable_channels(2)])

DOCS['separable_conv2d'] = """2-D separable convolution: depthwise, then pointwise.

Each input channel is first convolved with its own ``depth_multiplier``
filters (``depthwise_kernel``); the ``in_channels * depth_multiplier``
results are then mixed by a 1x1 convolution (``pointwise_kernel``). The
depthwise step is a cross-correlation on every engine (Keras 2.3.1's Theano
backend flipped these kernels back as well).

Arguments:
    x: A float tensor of shape ``(batch, rows, cols, in_channels)`` for
        ``'channels_last'`` or ``(batch, in_channels, rows, cols)`` for
        ``'channels_first'``.
    depthwise_kernel: A float tensor of shape ``(kernel_rows, kernel_cols,
        in_channels, depth_multiplier)``.
    pointwise_kernel: A float tensor of shape ``(1, 1, in_channels *
        depth_multiplier, out_channels)``.
    strides: An integer or a tuple of 2 positive integers (default
        ``(1, 1)``).
    padding: ``'valid'`` (default) or ``'same'``.
    data_format: ``'channels_last'``, ``'channels_first'`` or ``None``
        (default: ``image_data_format()``).
    dilation_rate: An integer or a tuple of 2 positive integers (default
        ``(1, 1)``).

Returns:
    A 4-D tensor of ``x``'s dtype with ``out_channels`` channels, laid out in
    ``data_format``.

Raises:
    TypeError: If an input or kernel is not a tensor, ``strides`` or
        ``dilation_rate`` is not an int or a pair of ints, or ``padding`` or
        ``data_format`` is not a string.
    ValueError: If an argument has the wrong rank, the channels of ``x``, of
        ``depthwise_kernel`` and (times the multiplier) of ``pointwise_kernel``
        differ, a stride or dilation is below 1, ``padding`` or ``data_format`` is
        not an allowed value, or with ``'valid'`` padding the kernel does not fit.

Example:
    >>> x = K.constant(np.arange(1., 10.).reshape((1, 3, 3, 1)))
    >>> y = K.separable_conv2d(x, K.ones((2, 2, 1, 1)), K.constant([[[[0.5]]]]))
    >>> K.eval(y)[0, :, :, 0]
    array([[ 6.,  8.],
           [12., 14.]], dtype=float32)
    >>> K.int_shape(K.separable_conv2d(K.zeros((1, 5, 5, 3)), K.zeros((3, 3, 3, 2)),
    ...                                K.zeros((1, 1, 6, 4)), padding='same'))
    (1, 5, 5, 4)
"""


# ---------------------------------------------------------------------------
# depthwise_conv2d
# ---------------------------------------------------------------------------

SPECS['depthwise_conv2d'] = ({'x': T, 'depthwise_kernel': T, 'strides': int_tuple(2),
                              'padding': CONV_PAD, 'data_format': DF, 'dilation_rate': int_tuple(2)},
                             [conv_channels(2, 'depthwise_kernel')])

DOCS['depthwise_conv2d'] = """2-D depthwise convolution: each input channel filtered separately.

Input channel ``c`` is convolved with its own ``depth_multiplier`` filters;
output channel ``c * depth_multiplier + m`` holds the result of filter
``m``. Channels are never mixed. This is a cross-correlation on every
engine (Keras 2.3.1's Theano backend flipped these kernels back as well).

Arguments:
    x: A float tensor of shape ``(batch, rows, cols, in_channels)`` for
        ``'channels_last'`` or ``(batch, in_channels, rows, cols)`` for
        ``'channels_first'``.
    depthwise_kernel: A float tensor of shape ``(kernel_rows, kernel_cols,
        in_channels, depth_multiplier)``.
    strides: An integer or a tuple of 2 positive integers (default
        ``(1, 1)``).
    padding: ``'valid'`` (default) or ``'same'``.
    data_format: ``'channels_last'``, ``'channels_first'`` or ``None``
        (default: ``image_data_format()``).
    dilation_rate: An integer or a tuple of 2 positive integers (default
        ``(1, 1)``).

Returns:
    A 4-D tensor of ``x``'s dtype with ``in_channels * depth_multiplier``
    channels, laid out in ``data_format``.

Raises:
    TypeError: If ``x`` or ``depthwise_kernel`` is not a tensor, ``strides`` or
        ``dilation_rate`` is not an int or a tuple of 2 ints, or ``padding`` or
        ``data_format`` is not a string.
    ValueError: If ``x`` or ``depthwise_kernel`` has the wrong rank, their channels differ,
        a stride or dilation is below 1, ``padding`` or ``data_format`` is not an
        allowed value, or with ``'valid'`` padding the kernel does not fit in ``x``.

Example:
    >>> x = K.constant(np.stack([np.arange(1., 10.), np.ones(9)], -1).reshape((1, 3, 3, 2)))
    >>> y = K.depthwise_conv2d(x, K.ones((2, 2, 2, 1)))
    >>> K.int_shape(y)
    (1, 2, 2, 2)
    >>> K.eval(y)[0, :, :, 0]
    array([[12., 16.],
           [24., 28.]], dtype=float32)
    >>> K.eval(y)[0, :, :, 1]
    array([[4., 4.],
           [4., 4.]], dtype=float32)
"""


# ---------------------------------------------------------------------------
# conv3d
# ---------------------------------------------------------------------------

SPECS['conv3d'] = ({'x': T, 'kernel': T, 'strides': int_tuple(3), 'padding': CONV_PAD, 'data_format': DF,
                    'dilation_rate': int_tuple(3)}, [conv_channels(3)])

DOCS['conv3d'] = """3-D convolution over the three spatial axes of volumes.

On TensorFlow and CNTK this is a cross-correlation (the kernel is not
flipped); on Theano it is a true convolution with the kernel reversed along
its three spatial axes, as in Keras 2.3.1's Theano backend.
``keras_backend.utils.convert_kernel`` converts weights between the two
conventions.

Arguments:
    x: A float tensor of shape ``(batch, dim1, dim2, dim3, in_channels)``
        for ``'channels_last'`` or ``(batch, in_channels, dim1, dim2, dim3)``
        for ``'channels_first'``.
    kernel: A float tensor of shape ``(k1, k2, k3, in_channels,
        out_channels)``.
    strides: An integer or a tuple of 3 positive integers (default
        ``(1, 1, 1)``).
    padding: ``'valid'`` (default) or ``'same'``.
    data_format: ``'channels_last'``, ``'channels_first'`` or ``None``
        (default: ``image_data_format()``).
    dilation_rate: An integer or a tuple of 3 positive integers (default
        ``(1, 1, 1)``).

Returns:
    A 5-D tensor of ``x``'s dtype with ``out_channels`` channels, laid out in
    ``data_format``.

Raises:
    TypeError: If ``x`` or ``kernel`` is not a tensor, ``strides`` or
        ``dilation_rate`` is not an int or a tuple of 3 ints, or ``padding`` or
        ``data_format`` is not a string.
    ValueError: If ``x`` or ``kernel`` has the wrong rank, their channels differ,
        a stride or dilation is below 1, ``padding`` or ``data_format`` is not an
        allowed value, or with ``'valid'`` padding the kernel does not fit in ``x``.

Example:
    >>> x = K.ones((1, 3, 3, 3, 1))
    >>> y = K.conv3d(x, K.ones((2, 2, 2, 1, 1)))
    >>> K.int_shape(y)
    (1, 2, 2, 2, 1)
    >>> K.eval(y).ravel()
    array([8., 8., 8., 8., 8., 8., 8., 8.], dtype=float32)
    >>> K.int_shape(K.conv3d(K.zeros((1, 4, 4, 4, 2)), K.zeros((3, 3, 3, 2, 5)), padding='same'))
    (1, 4, 4, 4, 5)
"""


# ---------------------------------------------------------------------------
# conv3d_transpose
# ---------------------------------------------------------------------------

SPECS['conv3d_transpose'] = ({'x': T, 'kernel': T, 'output_shape': shape_arg(allow_none_dims=True),
                              'strides': int_tuple(3), 'padding': CONV_PAD, 'data_format': DF},
                             [output_shape_rank(3)])

DOCS['conv3d_transpose'] = """3-D transposed convolution, the input gradient of ``conv3d``.

Each input voxel adds the kernel, weighted by its value, into the output;
used to upsample volumes. On Theano the kernel's spatial axes are reversed
relative to TensorFlow and CNTK, as in Keras 2.3.1's Theano backend;
``keras_backend.utils.convert_kernel`` converts weights between the two
conventions.

Arguments:
    x: A 5-D float tensor laid out in ``data_format``, with ``in_channels``
        channels.
    kernel: A float tensor of shape ``(k1, k2, k3, out_channels,
        in_channels)`` (note the order of the channels).
    output_shape: The full output shape, a tuple of 5 integers in
        ``data_format`` layout; the batch entry may be ``None``.
    strides: An integer or a tuple of 3 positive integers (default
        ``(1, 1, 1)``).
    padding: ``'valid'`` (default) or ``'same'``, as for the ``conv3d`` that
        this transposes.
    data_format: ``'channels_last'``, ``'channels_first'`` or ``None``
        (default: ``image_data_format()``).

Returns:
    A 5-D tensor of ``x``'s dtype and shape ``output_shape``.

Raises:
    TypeError: If ``x`` or ``kernel`` is not a tensor, ``output_shape`` is not a
        tuple of ints (and ``None``), or ``strides``, ``padding`` or
        ``data_format`` has the wrong type.
    ValueError: If ``x`` or ``kernel`` has the wrong rank, the channels of ``x``,
        ``kernel`` and ``output_shape`` disagree, an argument is not an allowed
        value, or ``output_shape`` is not a size that a ``conv3d`` with these
        settings maps back to the spatial size of ``x``.

Example:
    >>> y = K.conv3d_transpose(K.ones((1, 2, 2, 2, 1)), K.ones((2, 2, 2, 1, 1)),
    ...                        (1, 3, 3, 3, 1))
    >>> K.eval(y)[0, :, :, 0, 0]
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]], dtype=float32)
    >>> K.int_shape(K.conv3d_transpose(K.zeros((1, 2, 2, 2, 4)), K.zeros((2, 2, 2, 3, 4)),
    ...                                (1, 4, 4, 4, 3), strides=(2, 2, 2)))
    (1, 4, 4, 4, 3)
"""


# ---------------------------------------------------------------------------
# pool2d
# ---------------------------------------------------------------------------

SPECS['pool2d'] = ({'x': T, 'pool_size': int_tuple(2), 'strides': int_tuple(2), 'padding': PAD,
                    'data_format': DF, 'pool_mode': choice(('max', 'avg'))}, [pool_rank(2)])

DOCS['pool2d'] = """2-D max or average pooling.

Each output value is the maximum or the mean of a ``pool_size`` window of
the input, per channel. With ``padding='same'`` the padding never counts:
max pooling ignores it and average pooling divides by the number of input
cells inside the window.

Arguments:
    x: A 4-D float tensor of shape ``(batch, rows, cols, channels)`` for
        ``'channels_last'`` or ``(batch, channels, rows, cols)`` for
        ``'channels_first'``.
    pool_size: A tuple of 2 positive integers, the window size.
    strides: A tuple of 2 positive integers (default ``(1, 1)``).
    padding: ``'valid'`` (default) or ``'same'``.
    data_format: ``'channels_last'``, ``'channels_first'`` or ``None``
        (default: ``image_data_format()``).
    pool_mode: ``'max'`` (default) or ``'avg'``.

Returns:
    A 4-D tensor of ``x``'s dtype with the same channels, laid out in
    ``data_format``.

Raises:
    TypeError: If ``x`` is not a tensor, ``pool_size`` or ``strides`` is not an int
        or a pair of ints, or ``padding``, ``data_format`` or ``pool_mode`` is not a
        string.
    ValueError: If ``x`` is not 4-D, a size or stride is below 1, a string argument
        is not an allowed value, or with ``'valid'`` padding the window does not fit.

Example:
    >>> x = K.constant(np.arange(1., 17.).reshape((1, 4, 4, 1)))
    >>> K.eval(K.pool2d(x, (2, 2), strides=(2, 2)))[0, :, :, 0]
    array([[ 6.,  8.],
           [14., 16.]], dtype=float32)
    >>> K.eval(K.pool2d(x, (2, 2), strides=(2, 2), pool_mode='avg'))[0, :, :, 0]
    array([[ 3.5,  5.5],
           [11.5, 13.5]], dtype=float32)
"""


# ---------------------------------------------------------------------------
# pool3d
# ---------------------------------------------------------------------------

SPECS['pool3d'] = ({'x': T, 'pool_size': int_tuple(3), 'strides': int_tuple(3), 'padding': PAD,
                    'data_format': DF, 'pool_mode': choice(('max', 'avg'))}, [pool_rank(3)])

DOCS['pool3d'] = """3-D max or average pooling.

Each output value is the maximum or the mean of a ``pool_size`` window of
the input, per channel. With ``padding='same'`` the padding never counts:
max pooling ignores it and average pooling divides by the number of input
cells inside the window.

Arguments:
    x: A 5-D float tensor of shape ``(batch, dim1, dim2, dim3, channels)``
        for ``'channels_last'`` or ``(batch, channels, dim1, dim2, dim3)``
        for ``'channels_first'``.
    pool_size: A tuple of 3 positive integers, the window size.
    strides: A tuple of 3 positive integers (default ``(1, 1, 1)``).
    padding: ``'valid'`` (default) or ``'same'``.
    data_format: ``'channels_last'``, ``'channels_first'`` or ``None``
        (default: ``image_data_format()``).
    pool_mode: ``'max'`` (default) or ``'avg'``.

Returns:
    A 5-D tensor of ``x``'s dtype with the same channels, laid out in
    ``data_format``.

Raises:
    TypeError: If ``x`` is not a tensor, ``pool_size`` or ``strides`` is not an int
        or a tuple of 3 ints, or ``padding``, ``data_format`` or ``pool_mode`` is not
        a string.
    ValueError: If ``x`` is not 5-D, a size or stride is below 1, a string argument
        is not an allowed value, or with ``'valid'`` padding the window does not fit.

Example:
    >>> x = K.constant(np.arange(1., 9.).reshape((1, 2, 2, 2, 1)))
    >>> K.eval(K.pool3d(x, (2, 2, 2))).ravel()
    array([8.], dtype=float32)
    >>> K.eval(K.pool3d(x, (2, 2, 2), pool_mode='avg')).ravel()
    array([4.5], dtype=float32)
    >>> K.int_shape(K.pool3d(K.zeros((1, 4, 4, 4, 3)), (2, 2, 2), strides=(2, 2, 2)))
    (1, 2, 2, 2, 3)
"""


# ---------------------------------------------------------------------------
# bias_add
# ---------------------------------------------------------------------------

SPECS['bias_add'] = ({'x': T, 'bias': T, 'data_format': DF}, [bias_size])

DOCS['bias_add'] = """Add a bias vector to a tensor along its channel axis.

The channel axis is the last one for ``'channels_last'`` and axis 1 for
``'channels_first'``. A bias of rank ``ndim(x) - 1`` is added to every
sample instead; for ``'channels_first'`` inputs of rank 3 to 5 it is read as
laid out channels last and reshaped (not transposed), as in Keras 2.3.1.

Arguments:
    x: A tensor of rank 2 or more, float dtype.
    bias: A float tensor of shape ``(channels,)``, or of rank ``ndim(x) - 1``.
    data_format: ``'channels_last'``, ``'channels_first'`` or ``None``
        (default: ``image_data_format()``).

Returns:
    A tensor with the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` or ``bias`` is not a tensor, or ``data_format`` is not a
        string.
    ValueError: If ``x`` has rank < 2, ``bias`` has another rank or a 1-D ``bias``
        does not match the channels, or ``data_format`` is not an allowed value.

Example:
    >>> x = K.zeros((2, 3))
    >>> K.eval(K.bias_add(x, K.constant([1., 2., 3.])))
    array([[1., 2., 3.],
           [1., 2., 3.]], dtype=float32)
    >>> y = K.bias_add(K.zeros((1, 2, 3)), K.constant([1., 2.]), data_format='channels_first')
    >>> K.eval(y)
    array([[[1., 1., 1.],
            [2., 2., 2.]]], dtype=float32)
"""
