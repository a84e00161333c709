"""Shape manipulation: concatenating, reshaping, padding, tiling, slicing.

The contract of each name of this section of the API reference, side by side: its
argument rules (``SPECS[name]``: ``({argument: checker}, [checks across arguments])``,
in the vocabulary of :mod:`keras_backend.checks`) and its one docstring
(``DOCS[name]``). :mod:`keras_backend.api` gathers the sections in order.
"""
from ..checks import (DF, DT, T, arange_step, axes, axis, choice, concatenate_shapes,
    int_tuple, integer, integer_tensor, number, padding_pairs, pattern_length, permutation, rank,
    reshape_count, shape_arg, slice_args, stack_shapes, tensor_list)

TITLE = 'Shape manipulation'
NAMES = ('concatenate', 'reshape', 'permute_dimensions', 'resize_images', 'resize_volumes',
         'repeat_elements', 'repeat', 'arange', 'tile', 'flatten', 'batch_flatten',
         'expand_dims', 'squeeze', 'temporal_padding', 'spatial_2d_padding',
         'spatial_3d_padding', 'stack', 'one_hot', 'reverse', 'slice', 'pattern_broadcast')
SPECS = {}
DOCS = {}


# ---------------------------------------------------------------------------
# concatenate
# ---------------------------------------------------------------------------

SPECS['concatenate'] = ({'tensors': tensor_list(), 'axis': integer()}, [concatenate_shapes])

DOCS['concatenate'] = """Join a list of tensors along an existing axis.

When every input is sparse the result is sparse (on TensorFlow and Theano); otherwise
sparse inputs are made dense first.

Arguments:
    tensors: A non-empty list of tensors of the same rank and dtype whose shapes agree
        except along ``axis``.
    axis: An integer in ``[-ndim, ndim)``, the axis to join along; default -1 (the last
        axis).

Returns:
    A tensor of the inputs' rank and dtype whose size along ``axis`` is the sum of the
    inputs' sizes there.

Raises:
    TypeError: If ``tensors`` is not a list of tensors, or ``axis`` is not an int.
    ValueError: If ``tensors`` is empty or holds scalars or tensors of different
        ranks, ``axis`` is out of range, or the shapes differ off ``axis``.

Example:
    >>> a, b = K.constant([[1., 2.]]), K.constant([[3.]])
    >>> K.eval(K.concatenate([a, b]))
    array([[1., 2., 3.]], dtype=float32)
    >>> K.eval(K.concatenate([a, K.constant([[3., 4.]])], axis=0))
    array([[1., 2.],
           [3., 4.]], dtype=float32)
    >>> K.int_shape(K.concatenate([K.zeros((2, 3)), K.zeros((2, 1))]))
    (2, 4)
"""


# ---------------------------------------------------------------------------
# reshape
# ---------------------------------------------------------------------------

SPECS['reshape'] = ({'x': T, 'shape': shape_arg(allow_minus_one=True, allow_none_dims=True)},
                    [reshape_count])

DOCS['reshape'] = """Give a tensor a new shape with the same number of entries.

The entries keep their row-major (C) order.

Arguments:
    x: A tensor or variable.
    shape: The new shape: a tuple or list of integers, of which at most one may be -1
        (that size is inferred from the others), or a 1-D integer tensor.

Returns:
    A tensor of the dtype of ``x`` and shape ``shape``.

Raises:
    TypeError: If ``x`` is not a tensor, or ``shape`` is not a tuple of ints or a
        tensor.
    ValueError: If ``shape`` holds a size below -1 or more than one -1, or does not
        hold as many entries as ``x``.

Example:
    >>> x = K.constant([1., 2., 3., 4., 5., 6.])
    >>> K.eval(K.reshape(x, (2, -1)))
    array([[1., 2., 3.],
           [4., 5., 6.]], dtype=float32)
    >>> K.int_shape(K.reshape(K.zeros((2, 3, 4)), (-1, 4)))
    (6, 4)
"""


# ---------------------------------------------------------------------------
# permute_dimensions
# ---------------------------------------------------------------------------

SPECS['permute_dimensions'] = ({'x': T}, [permutation])

DOCS['permute_dimensions'] = """Reorder the axes of a tensor.

Axis ``i`` of the result is axis ``pattern[i]`` of ``x`` (``np.transpose(x, pattern)``).

Arguments:
    x: A tensor or variable.
    pattern: A tuple or list of integers, a permutation of ``range(ndim(x))``.

Returns:
    A tensor of the dtype of ``x`` whose shape is ``x.shape`` taken in the order of
    ``pattern``.

Raises:
    TypeError: If ``x`` is not a tensor, or ``pattern`` is not a tuple of ints.
    ValueError: If ``pattern`` is not a permutation of the axes of ``x``.

Example:
    >>> K.eval(K.permute_dimensions(K.constant([[1., 2.], [3., 4.]]), (1, 0)))
    array([[1., 3.],
           [2., 4.]], dtype=float32)
    >>> K.int_shape(K.permute_dimensions(K.zeros((2, 3, 4)), (2, 0, 1)))
    (4, 2, 3)
"""


# ---------------------------------------------------------------------------
# resize_images
# ---------------------------------------------------------------------------

SPECS['resize_images'] = ({'x': rank(4), 'height_factor': integer(1), 'width_factor': integer(1),
                           'data_format': DF,
                           'interpolation': choice(('nearest', 'bilinear'))}, [])

DOCS['resize_images'] = """Upsample the rows and columns of a batch of images by integer factors.

With ``'nearest'`` interpolation each pixel is repeated ``height_factor`` times down and
``width_factor`` times across (as ``repeat_elements``). With ``'bilinear'`` the new
pixels are interpolated the way TensorFlow 2's ``tf.image.resize`` does (half-pixel
centres, no antialiasing), on every engine.

Arguments:
    x: A 4-D tensor: ``(batch, rows, cols, channels)`` for channels_last data or
        ``(batch, channels, rows, cols)`` for channels_first.
    height_factor: A positive integer, the factor for the rows.
    width_factor: A positive integer, the factor for the columns.
    data_format: ``'channels_last'``, ``'channels_first'``, or ``None`` for
        ``image_data_format()``.
    interpolation: ``'nearest'`` (default) or ``'bilinear'``.

Returns:
    A 4-D tensor of the dtype of ``x`` with ``rows * height_factor`` rows and
    ``cols * width_factor`` columns.

Raises:
    TypeError: If ``x`` is not a tensor, a factor is not an int, or
        ``data_format`` or ``interpolation`` is not a string.
    ValueError: If ``x`` is not 4-D, a factor is below 1, or ``data_format`` or
        ``interpolation`` is not one of the values above.

Example:
    >>> x = K.constant([[[[1.], [2.]]]])
    >>> K.int_shape(x)
    (1, 1, 2, 1)
    >>> K.eval(K.resize_images(x, 2, 2, 'channels_last'))[0, :, :, 0].tolist()
    [[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0]]
    >>> y = K.resize_images(x, 1, 2, 'channels_last', interpolation='bilinear')
    >>> K.eval(y)[0, 0, :, 0].tolist()
    [1.0, 1.25, 1.75, 2.0]
    >>> K.int_shape(K.resize_images(K.zeros((1, 3, 2, 2)), 2, 3, 'channels_first'))
    (1, 3, 4, 6)
"""


# ---------------------------------------------------------------------------
# resize_volumes
# ---------------------------------------------------------------------------

SPECS['resize_volumes'] = ({'x': rank(5), 'depth_factor': integer(1), 'height_factor': integer(1),
                            'width_factor': integer(1), 'data_format': DF}, [])

DOCS['resize_volumes'] = """Upsample the 3 spatial axes of a batch of volumes by integer factors.

Each voxel is repeated ``depth_factor``, ``height_factor`` and ``width_factor`` times
along the three spatial axes (nearest-neighbour upsampling, as ``repeat_elements``).

Arguments:
    x: A 5-D tensor: ``(batch, depth, rows, cols, channels)`` for channels_last data or
        ``(batch, channels, depth, rows, cols)`` for channels_first.
    depth_factor: A positive integer, the factor for the first spatial axis.
    height_factor: A positive integer, the factor for the second spatial axis.
    width_factor: A positive integer, the factor for the third spatial axis.
    data_format: ``'channels_last'``, ``'channels_first'``, or ``None`` for
        ``image_data_format()``.

Returns:
    A 5-D tensor of the dtype of ``x`` with each spatial size multiplied by its factor.

Raises:
    TypeError: If ``x`` is not a tensor, a factor is not an int, or
        ``data_format`` is not a string.
    ValueError: If ``x`` is not 5-D, a factor is below 1, or ``data_format`` is not
        one of the values above.

Example:
    >>> x = K.constant([[[[[0.], [1.]]]]])
    >>> y = K.resize_volumes(x, 1, 2, 2, 'channels_last')
    >>> K.int_shape(y)
    (1, 1, 2, 4, 1)
    >>> K.eval(y)[0, 0, :, :, 0].tolist()
    [[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]]
    >>> K.int_shape(K.resize_volumes(K.zeros((1, 4, 1, 2, 3)), 2, 2, 2, 'channels_first'))
    (1, 4, 2, 4, 6)
"""


# ---------------------------------------------------------------------------
# repeat_elements
# ---------------------------------------------------------------------------

SPECS['repeat_elements'] = ({'x': T, 'rep': integer(1), 'axis': axis('x')}, [])

DOCS['repeat_elements'] = """Repeat each entry of a tensor along an axis (as ``np.repeat``).

Each slice of ``x`` along ``axis`` appears ``rep`` times in a row, so ``[1, 2]`` with
``rep=2`` gives ``[1, 1, 2, 2]`` (compare ``tile``, which gives ``[1, 2, 1, 2]``).

Arguments:
    x: A tensor or variable of rank >= 1.
    rep: A positive integer, the number of repetitions.
    axis: An integer in ``[-ndim(x), ndim(x))``, the axis to repeat along.

Returns:
    A tensor of the dtype of ``x`` whose size along ``axis`` is ``rep`` times that of
    ``x``.

Raises:
    TypeError: If ``x`` is not a tensor, or ``rep`` or ``axis`` is not an int.
    ValueError: If ``rep`` is below 1 or ``axis`` is out of range for ``x``.

Example:
    >>> x = K.constant([[1., 2.], [3., 4.]])
    >>> K.eval(K.repeat_elements(x, 2, axis=1))
    array([[1., 1., 2., 2.],
           [3., 3., 4., 4.]], dtype=float32)
    >>> K.int_shape(K.repeat_elements(x, 3, axis=0))
    (6, 2)
"""


# ---------------------------------------------------------------------------
# repeat
# ---------------------------------------------------------------------------

SPECS['repeat'] = ({'x': rank(2), 'n': integer(1, allow_tensor=True)}, [])

DOCS['repeat'] = """Repeat a batch of vectors along a new axis 1.

A ``(batch, dim)`` tensor becomes ``(batch, n, dim)`` with ``n`` copies of each sample's
vector (what the ``RepeatVector`` layer does).

Arguments:
    x: A 2-D tensor of shape ``(batch, dim)``.
    n: A positive integer (or a scalar integer tensor), the number of
        copies.

Returns:
    A 3-D tensor of the dtype of ``x`` and shape ``(batch, n, dim)``.

Raises:
    TypeError: If ``x`` is not a tensor, or ``n`` is neither an int nor a tensor.
    ValueError: If ``x`` is not 2-D or ``n`` is below 1.

Example:
    >>> y = K.repeat(K.constant([[1., 2.], [3., 4.]]), 2)
    >>> K.int_shape(y)
    (2, 2, 2)
    >>> K.eval(y)[1].tolist()
    [[3.0, 4.0], [3.0, 4.0]]
"""


# ---------------------------------------------------------------------------
# arange
# ---------------------------------------------------------------------------

SPECS['arange'] = ({'start': number(), 'stop': number(allow_none=True), 'step': number(),
                    'dtype': DT}, [arange_step])

DOCS['arange'] = """A 1-D tensor of evenly spaced values, as numpy's ``arange``.

The values run from ``start`` (included) to ``stop`` (excluded) in steps of ``step``.
With one argument the range is ``[0, start)``; an empty range (e.g. ``arange(-3)``)
gives a tensor of length 0. The values are computed in the arguments' type (floats if
any argument is a float) and then cast to ``dtype``.

Arguments:
    start: A number or a scalar tensor: the first value, or the end of the range when
        ``stop`` is ``None``.
    stop: ``None`` (default) or a number or scalar tensor: the end of the range.
    step: A non-zero number or scalar tensor (may be negative); default 1.
    dtype: The dtype of the result; default ``'int32'``.

Returns:
    A 1-D tensor of dtype ``dtype`` holding ``max(ceil((stop - start) / step), 0)``
    values. CNTK has no integer tensors and holds integer dtypes in ``floatx()``.

Raises:
    TypeError: If ``start``, ``stop`` or ``step`` is not a number or a scalar
        tensor, or ``dtype`` names no numeric or bool dtype.
    ValueError: If ``step`` is 0, or an argument is NaN.

Example:
    >>> K.eval(K.arange(5))
    array([0, 1, 2, 3, 4], dtype=int32)
    >>> K.eval(K.arange(1, 7, 2))
    array([1, 3, 5], dtype=int32)
    >>> K.eval(K.arange(5, 0, -2))
    array([5, 3, 1], dtype=int32)
    >>> K.eval(K.arange(0., 1., 0.25, dtype='float32'))
    array([0.  , 0.25, 0.5 , 0.75], dtype=float32)
"""


# ---------------------------------------------------------------------------
# tile
# ---------------------------------------------------------------------------

SPECS['tile'] = ({'x': T, 'n': shape_arg()}, [])

DOCS['tile'] = """Repeat a whole tensor along each axis (as ``np.tile``).

``x`` is laid ``n[i]`` times side by side along axis ``i``, so ``[1, 2]`` tiled 2 times
gives ``[1, 2, 1, 2]`` (compare ``repeat_elements``). With fewer entries in ``n`` than
axes in ``x``, ``n`` is padded with leading 1s; with more, ``x`` gets leading axes of
size 1.

Arguments:
    x: A tensor or variable.
    n: A non-negative integer or a list/tuple of them: the number of copies per axis.

Returns:
    A tensor of the dtype of ``x``: its shape is the shape of ``x`` (with leading 1s
    as needed) multiplied entrywise by ``n``.

Raises:
    TypeError: If ``x`` is not a tensor, or ``n`` is not an int or a list of ints.
    ValueError: If ``n`` holds a negative count.

Example:
    >>> K.eval(K.tile(K.constant([1., 2.]), 2))
    array([1., 2., 1., 2.], dtype=float32)
    >>> K.eval(K.tile(K.constant([[1., 2.]]), (2, 2)))
    array([[1., 2., 1., 2.],
           [1., 2., 1., 2.]], dtype=float32)
    >>> K.int_shape(K.tile(K.zeros((2, 3)), (2, 1, 1)))
    (2, 2, 3)
"""


# ---------------------------------------------------------------------------
# flatten
# ---------------------------------------------------------------------------

SPECS['flatten'] = ({'x': T}, [])

DOCS['flatten'] = """Flatten a tensor into a 1-D tensor.

The entries keep their row-major (C) order.

Arguments:
    x: A tensor or variable of any rank.

Returns:
    A 1-D tensor of the dtype of ``x`` holding all its entries.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.eval(K.flatten(K.constant([[1., 2.], [3., 4.]])))
    array([1., 2., 3., 4.], dtype=float32)
    >>> K.int_shape(K.flatten(K.zeros((2, 3, 4))))
    (24,)
"""


# ---------------------------------------------------------------------------
# batch_flatten
# ---------------------------------------------------------------------------

SPECS['batch_flatten'] = ({'x': rank(min_rank=1)}, [])

DOCS['batch_flatten'] = """Flatten each sample of a batch: all axes but the first are merged.

A ``(batch, d1, ..., dn)`` tensor becomes ``(batch, d1 * ... * dn)``, each row in
row-major (C) order (what the ``Flatten`` layer does).

Arguments:
    x: A tensor or variable of rank >= 1, axis 0 being the batch axis.

Returns:
    A 2-D tensor of the dtype of ``x`` and shape ``(batch, d1 * ... * dn)``
    (``(batch, 1)`` for a 1-D ``x``).

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.
    ValueError: If ``x`` is a scalar.

Example:
    >>> K.eval(K.batch_flatten(K.constant([[[1., 2.], [3., 4.]]])))
    array([[1., 2., 3., 4.]], dtype=float32)
    >>> K.int_shape(K.batch_flatten(K.zeros((2, 3, 4))))
    (2, 12)
"""


# ---------------------------------------------------------------------------
# expand_dims
# ---------------------------------------------------------------------------

SPECS['expand_dims'] = ({'x': T, 'axis': axis('x', extra=1)}, [])

DOCS['expand_dims'] = """Insert an axis of size 1 into the shape of a tensor.

Arguments:
    x: A tensor or variable.
    axis: The position of the new axis in the result, an integer in
        ``[-ndim(x) - 1, ndim(x)]``; default -1 (appended last).

Returns:
    A tensor of the dtype and entries of ``x``, of rank ``ndim(x) + 1``.

Raises:
    TypeError: If ``x`` is not a tensor, or ``axis`` is not an int.
    ValueError: If ``axis`` is outside ``[-ndim(x) - 1, ndim(x)]``.

Example:
    >>> x = K.zeros((2, 3))
    >>> K.int_shape(K.expand_dims(x))
    (2, 3, 1)
    >>> K.int_shape(K.expand_dims(x, 0))
    (1, 2, 3)
    >>> K.eval(K.expand_dims(K.constant([1., 2.]), 1))
    array([[1.],
           [2.]], dtype=float32)
"""


# ---------------------------------------------------------------------------
# squeeze
# ---------------------------------------------------------------------------

SPECS['squeeze'] = ({'x': T, 'axis': axis('x')}, [])

DOCS['squeeze'] = """Remove an axis of size 1 from the shape of a tensor.

Arguments:
    x: A tensor or variable.
    axis: An integer in ``[-ndim(x), ndim(x))``, the axis to remove; it must have
        size 1.

Returns:
    A tensor of the dtype and entries of ``x``, of rank ``ndim(x) - 1``.

Raises:
    TypeError: If ``x`` is not a tensor, or ``axis`` is not an int.
    ValueError: If ``axis`` is out of range, or that axis does not have size 1.

Example:
    >>> K.int_shape(K.squeeze(K.zeros((2, 1, 3)), 1))
    (2, 3)
    >>> K.eval(K.squeeze(K.constant([[1.], [2.]]), -1))
    array([1., 2.], dtype=float32)
"""


# ---------------------------------------------------------------------------
# temporal_padding
# ---------------------------------------------------------------------------

SPECS['temporal_padding'] = ({'x': rank(3), 'padding': int_tuple(2, minimum=0)}, [])

DOCS['temporal_padding'] = """Pad the time axis (axis 1) of a 3-D tensor with zeros.

Arguments:
    x: A 3-D tensor of shape ``(batch, steps, features)``.
    padding: A pair of non-negative integers ``(left, right)``: the number of zero
        steps added before and after; default ``(1, 1)``. An integer ``p``
        means ``(p, p)``.

Returns:
    A 3-D tensor of the dtype of ``x`` and shape
    ``(batch, left + steps + right, features)``.

Raises:
    TypeError: If ``x`` is not a tensor, or ``padding`` is not an int or a pair of
        ints.
    ValueError: If ``x`` is not 3-D, or ``padding`` has another length or a
        negative amount.

Example:
    >>> x = K.constant([[[1.], [2.]]])
    >>> K.eval(K.temporal_padding(x, (1, 2)))[0, :, 0].tolist()
    [0.0, 1.0, 2.0, 0.0, 0.0]
    >>> K.int_shape(K.temporal_padding(K.zeros((2, 3, 4))))
    (2, 5, 4)
"""


# ---------------------------------------------------------------------------
# spatial_2d_padding
# ---------------------------------------------------------------------------

SPECS['spatial_2d_padding'] = ({'x': rank(4), 'padding': padding_pairs(2), 'data_format': DF}, [])

DOCS['spatial_2d_padding'] = """Pad the rows and columns of a batch of images with zeros.

Arguments:
    x: A 4-D tensor: ``(batch, rows, cols, channels)`` for channels_last data or
        ``(batch, channels, rows, cols)`` for channels_first.
    padding: ``((top, bottom), (left, right))``, non-negative integers: the zero rows
        added above and below and the zero columns added left and right; default
        ``((1, 1), (1, 1))``. A single integer pads all four sides alike, and a pair of
        integers ``(r, c)`` means ``((r, r), (c, c))``.
    data_format: ``'channels_last'``, ``'channels_first'``, or ``None`` (default) for
        ``image_data_format()``.

Returns:
    A 4-D tensor of the dtype of ``x`` with ``top + rows + bottom`` rows and
    ``left + cols + right`` columns.

Raises:
    TypeError: If ``x`` is not a tensor, ``padding`` is not made of ints, or
        ``data_format`` is not a string.
    ValueError: If ``x`` is not 4-D, ``padding`` does not hold 2 entries or holds a
        negative amount, or ``data_format`` is not one of the values above.

Example:
    >>> x = K.ones((1, 1, 1, 1))
    >>> K.eval(K.spatial_2d_padding(x, ((1, 0), (0, 1))))[0, :, :, 0].tolist()
    [[0.0, 0.0], [1.0, 0.0]]
    >>> K.int_shape(K.spatial_2d_padding(K.zeros((1, 2, 2, 3))))
    (1, 4, 4, 3)
    >>> K.int_shape(K.spatial_2d_padding(K.zeros((1, 3, 2, 2)), ((1, 0), (2, 1)),
    ...                                  data_format='channels_first'))
    (1, 3, 3, 5)
"""


# ---------------------------------------------------------------------------
# spatial_3d_padding
# ---------------------------------------------------------------------------

SPECS['spatial_3d_padding'] = ({'x': rank(5), 'padding': padding_pairs(3), 'data_format': DF}, [])

DOCS['spatial_3d_padding'] = """Pad the three spatial axes of a batch of volumes with zeros.

Arguments:
    x: A 5-D tensor: ``(batch, dim1, dim2, dim3, channels)`` for channels_last data or
        ``(batch, channels, dim1, dim2, dim3)`` for channels_first.
    padding: Three pairs of non-negative integers ``((before1, after1), (before2,
        after2), (before3, after3))``: the zeros added before and after each spatial
        axis; default ``((1, 1), (1, 1), (1, 1))``. A single integer pads every side
        alike, and three integers pad each axis symmetrically.
    data_format: ``'channels_last'``, ``'channels_first'``, or ``None`` (default) for
        ``image_data_format()``.

Returns:
    A 5-D tensor of the dtype of ``x`` whose spatial sizes are
    ``before + dim + after`` for each spatial axis.

Raises:
    TypeError: If ``x`` is not a tensor, ``padding`` is not made of ints, or
        ``data_format`` is not a string.
    ValueError: If ``x`` is not 5-D, ``padding`` does not hold 3 entries or holds a
        negative amount, or ``data_format`` is not one of the values above.

Example:
    >>> K.int_shape(K.spatial_3d_padding(K.zeros((1, 2, 2, 2, 3))))
    (1, 4, 4, 4, 3)
    >>> y = K.spatial_3d_padding(K.zeros((1, 3, 2, 2, 2)), ((1, 0), (0, 1), (2, 2)),
    ...                          data_format='channels_first')
    >>> K.int_shape(y)
    (1, 3, 3, 3, 6)
"""


# ---------------------------------------------------------------------------
# stack
# ---------------------------------------------------------------------------

SPECS['stack'] = ({'x': tensor_list(), 'axis': integer()}, [stack_shapes])

DOCS['stack'] = """Stack a list of tensors of the same shape along a new axis.

Arguments:
    x: A non-empty list of tensors of the same shape and dtype.
    axis: The position of the new axis in the result, an integer in
        ``[-ndim - 1, ndim]`` for inputs of rank ``ndim``; default 0.

Returns:
    A tensor of the inputs' dtype and rank ``ndim + 1``, whose new axis has size
    ``len(x)``.

Raises:
    TypeError: If ``x`` is not a list of tensors.
    ValueError: If ``x`` is empty, its tensors differ in shape, or ``axis`` is out of
        range.

Example:
    >>> a, b = K.constant([1., 2.]), K.constant([3., 4.])
    >>> K.eval(K.stack([a, b]))
    array([[1., 2.],
           [3., 4.]], dtype=float32)
    >>> K.eval(K.stack([a, b], axis=-1))
    array([[1., 3.],
           [2., 4.]], dtype=float32)
"""


# ---------------------------------------------------------------------------
# one_hot
# ---------------------------------------------------------------------------

SPECS['one_hot'] = ({'indices': T, 'num_classes': integer(1, allow_tensor=True)},
                   [integer_tensor('indices')])

DOCS['one_hot'] = """One-hot encoding of a tensor of integer class indices.

Each index ``i`` becomes a vector of ``num_classes`` values that is 1 at position ``i``
and 0 elsewhere.

Arguments:
    indices: A tensor of integer class indices of any shape, values in
        ``[0, num_classes)`` (held as floats on CNTK).
    num_classes: A positive integer, the number of classes.

Returns:
    A tensor of dtype ``floatx()`` and shape ``indices.shape + (num_classes,)``.

Raises:
    TypeError: If ``indices`` is not a tensor, or ``num_classes`` is not an int.
    ValueError: If ``num_classes`` is below 1.

Example:
    >>> K.eval(K.one_hot(K.constant([0, 2], dtype='int32'), 3))
    array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)
    >>> K.int_shape(K.one_hot(K.constant([[0, 2], [1, 1]], dtype='int32'), 3))
    (2, 2, 3)
"""


# ---------------------------------------------------------------------------
# reverse
# ---------------------------------------------------------------------------

SPECS['reverse'] = ({'x': T, 'axes': axes('x', allow_none=False)}, [])

DOCS['reverse'] = """Reverse the order of the entries of a tensor along the given axes.

Arguments:
    x: A tensor or variable.
    axes: An integer or a list/tuple of integers in ``[-ndim(x), ndim(x))``: the axes
        to reverse.

Returns:
    A tensor of the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor, or ``axes`` is not an int or a list of ints.
    ValueError: If an axis is out of range for ``x`` or is named twice.

Example:
    >>> x = K.constant([[1., 2.], [3., 4.]])
    >>> K.eval(K.reverse(x, 1))
    array([[2., 1.],
           [4., 3.]], dtype=float32)
    >>> K.eval(K.reverse(x, (0, 1)))
    array([[4., 3.],
           [2., 1.]], dtype=float32)
"""


# ---------------------------------------------------------------------------
# slice
# ---------------------------------------------------------------------------

SPECS['slice'] = ({'x': T}, [slice_args])

DOCS['slice'] = """Extract a rectangular block of a tensor.

The block starts at index ``start[i]`` and spans ``size[i]`` entries along each axis
``i``, so it is ``x[start[0]:start[0] + size[0], ...]``.

Arguments:
    x: A tensor or variable.
    start: A list or tuple of non-negative integers, one per axis of ``x``: the first
        index of the block.
    size: A list or tuple of integers, one per axis of ``x``: the length of the block
        along each axis, or -1 for everything from ``start[i]`` to the end.

Returns:
    A tensor of the dtype and rank of ``x`` and shape ``size`` (with each -1 replaced by
    the remaining length).

Raises:
    TypeError: If ``x`` is not a tensor, or ``start`` or ``size`` is not a list of
        ints.
    ValueError: If ``start`` or ``size`` does not have one entry per axis of ``x``,
        holds a negative start or a size below -1, or the block goes past the end.

Example:
    >>> x = K.constant([[1., 2., 3.], [4., 5., 6.]])
    >>> K.eval(K.slice(x, (0, 1), (2, 2)))
    array([[2., 3.],
           [5., 6.]], dtype=float32)
    >>> K.eval(K.slice(x, (1, 1), (-1, -1)))
    array([[5., 6.]], dtype=float32)
"""


# ---------------------------------------------------------------------------
# pattern_broadcast
# ---------------------------------------------------------------------------

SPECS['pattern_broadcast'] = ({'x': T}, [pattern_length])

DOCS['pattern_broadcast'] = """Declare which axes of a tensor have size 1 and may broadcast.

The values and shape of ``x`` are unchanged. Theano only broadcasts axes it knows to have
size 1 (its "broadcastable pattern"); this function sets that pattern, as Keras' Theano
backend did, so a tensor whose size-1 axes are not known when the graph is built can
broadcast against others. TensorFlow and CNTK broadcast any size-1 axis, so there the
pattern is only checked and ``x`` is returned as is. An axis marked ``True`` must have
size 1 when the graph runs.

Arguments:
    x: A tensor or variable.
    broadcastable: A sequence of booleans, one per axis of ``x``: ``True`` for an axis
        of size 1 that may broadcast.

Returns:
    A tensor of the shape, dtype and values of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor, or ``broadcastable`` is not a tuple or list.
    ValueError: If ``broadcastable`` does not have one entry per axis of ``x``.

Example:
    >>> x = K.pattern_broadcast(K.constant([[1., 2.]]), (True, False))
    >>> K.int_shape(x)
    (1, 2)
    >>> K.eval(x + K.constant([[10.], [20.]]))
    array([[11., 12.],
           [21., 22.]], dtype=float32)
"""
