"""The docstrings of the Keras 1 aliases (``keras_backend.api.LEGACY_NAMES``); each alias
forwards to its Keras 2 name, whose argument rules apply."""

DOCS = {}

DOCS['lesser'] = """Deprecated Keras 1 alias of ``less``: element-wise ``x < y``.

``K.lesser(x, y)`` warns ``DeprecationWarning`` and returns
``K.less(x, y)``; it is an attribute of the backend module (``K.lesser``)
kept for old code. Use ``less`` instead.

Arguments:
    x: A tensor or variable.
    y: A tensor, variable or number, broadcastable against ``x``.

Returns:
    The ``bool`` tensor of ``less(x, y)`` (0./1. floats on CNTK, which has
    no bool tensors).

Raises:
    TypeError: If ``x`` or ``y`` is not a tensor or numeric value (as ``less``).
    ValueError: If the static shapes of ``x`` and ``y`` do not broadcast.

Example:
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter('always')
    ...     y = K.lesser(K.constant([1., 3.]), K.constant([2., 2.]))
    >>> caught[0].category is DeprecationWarning
    True
    >>> K.eval(K.cast(y, 'float32'))
    array([1., 0.], dtype=float32)
"""

DOCS['lesser_equal'] = """Deprecated Keras 1 alias of ``less_equal``: element-wise ``x <= y``.

``K.lesser_equal(x, y)`` warns ``DeprecationWarning`` and returns
``K.less_equal(x, y)``; it is an attribute of the backend module
(``K.lesser_equal``) kept for old code. Use ``less_equal`` instead.

Arguments:
    x: A tensor or variable.
    y: A tensor, variable or number, broadcastable against ``x``.

Returns:
    The ``bool`` tensor of ``less_equal(x, y)`` (0./1. floats on CNTK, which
    has no bool tensors).

Raises:
    TypeError: If ``x`` or ``y`` is not a tensor or numeric value (as
        ``less_equal``).
    ValueError: If the static shapes of ``x`` and ``y`` do not broadcast.

Example:
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter('always')
    ...     y = K.lesser_equal(K.constant([1., 3., 2.]), K.constant([2., 2., 2.]))
    >>> caught[0].category is DeprecationWarning
    True
    >>> K.eval(K.cast(y, 'float32'))
    array([1., 0., 1.], dtype=float32)
"""

DOCS['deconv2d'] = """Deprecated Keras 1 form of ``conv2d_transpose`` (2-D transposed convolution).

``K.deconv2d(x, kernel, output_shape, strides, border_mode, dim_ordering)``
warns ``DeprecationWarning`` and returns ``conv2d_transpose`` of the same
``x``, ``kernel``, ``output_shape`` and ``strides``, with ``border_mode`` as
``padding`` and ``dim_ordering`` as ``data_format``: ``'th'`` is read as
``'channels_first'``, ``'tf'`` as ``'channels_last'`` and ``'default'`` as
``image_data_format()``. It is an attribute of the backend module
(``K.deconv2d``) kept for old code. Use ``conv2d_transpose`` instead.

Arguments:
    x: A 4-D input tensor, ``(batch, rows, cols, in_channels)`` for ``'tf'``
        or ``(batch, in_channels, rows, cols)`` for ``'th'``.
    kernel: A 4-D kernel in Keras 2's ``conv2d_transpose`` layout
        ``(kernel_rows, kernel_cols, out_channels, in_channels)``.
    output_shape: A tuple of 4 ints, the shape of the result in the
        ``dim_ordering`` layout.
    strides: A pair of ints, ``(1, 1)`` by default.
    border_mode: ``'valid'`` (default) or ``'same'``: the padding.
    dim_ordering: ``'th'``, ``'tf'`` or ``'default'`` (default).
    image_shape: Ignored (Keras 1 compatibility).
    filter_shape: Ignored (Keras 1 compatibility).

Returns:
    A 4-D tensor of shape ``output_shape``, ``x``'s dtype.

Raises:
    ValueError: If ``dim_ordering`` or ``border_mode`` is not an allowed
        value, or ``output_shape`` does not fit the input, kernel, strides
        and padding.

Example:
    >>> import warnings
    >>> x = K.constant(3., shape=(1, 1, 1, 1))
    >>> kernel = K.ones((2, 2, 1, 1))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter('always')
    ...     y = K.deconv2d(x, kernel, (1, 2, 2, 1), strides=(2, 2), dim_ordering='tf')
    >>> caught[0].category is DeprecationWarning
    True
    >>> K.int_shape(y)
    (1, 2, 2, 1)
    >>> K.eval(y)[0, :, :, 0]
    array([[3., 3.],
           [3., 3.]], dtype=float32)
"""

DOCS['asymmetric_temporal_padding'] = """Deprecated Keras 1 alias of ``temporal_padding``.

``K.asymmetric_temporal_padding(x, left_pad, right_pad)`` warns
``DeprecationWarning`` and returns
``K.temporal_padding(x, (left_pad, right_pad))``: zeros are added at the
start and end of the steps axis. It is an attribute of the backend module
(``K.asymmetric_temporal_padding``) kept for old code. Use
``temporal_padding`` instead.

Arguments:
    x: A 3-D tensor of shape ``(batch, steps, channels)``.
    left_pad: A non-negative ``int``, the zero steps added before; 1 by
        default.
    right_pad: A non-negative ``int``, the zero steps added after; 1 by
        default.

Returns:
    A tensor of shape ``(batch, steps + left_pad + right_pad, channels)``,
    ``x``'s dtype.

Raises:
    ValueError: If ``x`` is not 3-D or a padding amount is negative.

Example:
    >>> import warnings
    >>> x = K.constant([[[1.], [2.]]])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter('always')
    ...     y = K.asymmetric_temporal_padding(x, 1, 2)
    >>> caught[0].category is DeprecationWarning
    True
    >>> K.eval(y)[0, :, 0]
    array([0., 1., 2., 0., 0.], dtype=float32)
"""
