"""Locally connected: unshared-weight convolutions.

The contract of each name of this section of the API reference, side by side: its
argument rules (``SPECS[name]``: ``({argument: checker}, [checks across arguments])``,
in the vocabulary of :mod:`keras_backend.checks`) and its one docstring
(``DOCS[name]``). :mod:`keras_backend.api` gathers the sections in order.
"""
from ..checks import DF, T, int_tuple, local_conv_args

TITLE = 'Locally connected'
NAMES = ('local_conv1d', 'local_conv2d')
SPECS = {}
DOCS = {}


# ---------------------------------------------------------------------------
# local_conv1d
# ---------------------------------------------------------------------------

SPECS['local_conv1d'] = ({'kernel': T, 'kernel_size': int_tuple(1), 'strides': int_tuple(1),
                          'data_format': DF}, [local_conv_args(1)])

DOCS['local_conv1d'] = """1-D locally connected convolution (weights not shared).

Like ``conv1d`` with ``'valid'`` padding, but each output step has its own
kernel. The patch under the window is flattened in ``(kernel_size,
in_channels)`` order and multiplied by that step's
``(kernel_size * in_channels, filters)`` matrix.

Arguments:
    inputs: A float tensor of shape ``(batch, steps, in_channels)`` for
        ``'channels_last'`` or ``(batch, in_channels, steps)`` for
        ``'channels_first'``.
    kernel: A float tensor of shape ``(output_steps, kernel_size *
        in_channels, filters)``, where ``output_steps = (steps -
        kernel_size) // strides + 1``.
    kernel_size: An integer or a tuple of 1 integer, the window length.
    strides: An integer or a tuple of 1 integer, the step between windows.
    data_format: ``'channels_last'``, ``'channels_first'`` or ``None``
        (default: ``image_data_format()``).

Returns:
    A tensor of ``inputs``' dtype and shape ``(batch, output_steps,
    filters)`` (``(batch, filters, output_steps)`` for
    ``'channels_first'``).

Raises:
    TypeError: If ``kernel`` is not a tensor, ``kernel_size`` or ``strides`` is not
        an int, or ``data_format`` is not a string.
    ValueError: If ``inputs`` is not 3-D, ``kernel`` is not 3-D, a size or stride
        is below 1, or ``data_format`` is not an allowed value.

Example:
    >>> x = K.constant([[[1.], [2.], [3.]]])          # (batch=1, steps=3, channels=1)
    >>> kernel = K.constant([[[1.], [1.]],            # step 0: x0 + x1
    ...                      [[1.], [-1.]]])          # step 1: x1 - x2
    >>> K.eval(K.local_conv1d(x, kernel, 2, 1))[0, :, 0]
    array([ 3., -1.], dtype=float32)
"""


# ---------------------------------------------------------------------------
# local_conv2d
# ---------------------------------------------------------------------------

SPECS['local_conv2d'] = ({'kernel': T, 'kernel_size': int_tuple(2), 'strides': int_tuple(2),
                          'output_shape': int_tuple(2), 'data_format': DF}, [local_conv_args(2)])

DOCS['local_conv2d'] = """2-D locally connected convolution (weights not shared).

Like ``conv2d`` with ``'valid'`` padding, but each output position has its
own kernel. The patch under the window is flattened in ``(kernel_rows,
kernel_cols, in_channels)`` order for ``'channels_last'`` and
``(in_channels, kernel_rows, kernel_cols)`` for ``'channels_first'``, then
multiplied by that position's matrix.

Arguments:
    inputs: A float tensor of shape ``(batch, rows, cols, in_channels)`` for
        ``'channels_last'`` or ``(batch, in_channels, rows, cols)`` for
        ``'channels_first'``.
    kernel: A float tensor of shape ``(output_rows * output_cols,
        kernel_rows * kernel_cols * in_channels, filters)``; positions are
        in row-major order.
    kernel_size: A tuple of 2 integers, the window size.
    strides: A tuple of 2 integers, the step between windows.
    output_shape: A tuple of 2 integers ``(output_rows, output_cols)``.
    data_format: ``'channels_last'``, ``'channels_first'`` or ``None``
        (default: ``image_data_format()``).

Returns:
    A tensor of ``inputs``' dtype and shape ``(batch, output_rows,
    output_cols, filters)`` (``(batch, filters, output_rows, output_cols)``
    for ``'channels_first'``).

Raises:
    TypeError: If ``kernel`` is not a tensor, ``kernel_size``, ``strides`` or
        ``output_shape`` is not an int or a pair of ints, or ``data_format`` is not a
        string.
    ValueError: If ``inputs`` is not 4-D, ``kernel`` is not 3-D, a size or stride is
        below 1, ``output_shape`` does not hold 2 sizes, or ``data_format`` is not an
        allowed value.

Example:
    >>> x = K.constant(np.arange(1., 7.).reshape((1, 2, 3, 1)))   # [[1, 2, 3], [4, 5, 6]]
    >>> kernel = K.constant([[[1.], [1.], [1.], [1.]],             # position (0, 0): patch sum
    ...                      [[1.], [0.], [0.], [0.]]])            # position (0, 1): top left
    >>> K.eval(K.local_conv2d(x, kernel, (2, 2), (1, 1), (1, 2)))[0, :, :, 0]
    array([[12.,  2.]], dtype=float32)
"""
