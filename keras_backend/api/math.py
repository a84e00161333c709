"""Math: products, reductions, elementwise math, comparisons, batch normalisation.

The contract of each name of this section of the API reference, side by side: its
argument rules (``SPECS[name]``: ``({argument: checker}, [checks across arguments])``,
in the vocabulary of :mod:`keras_backend.checks`) and its one docstring
(``DOCS[name]``). :mod:`keras_backend.api` gathers the sections in order.
"""
from ..checks import (BOOL, T, axes, axis, batch_dot_sizes, batch_norm_params, broadcastable,
    dot_sizes, float_x_on_tensorflow, gather_indices, integer_clip_bounds, integer_powers,
    kept_axes_parameters, nonempty_axis, number, reduction_axes, tensor)

TITLE = 'Math'
NAMES = ('dot', 'batch_dot', 'transpose', 'gather', 'max', 'min', 'sum', 'prod', 'cumsum',
         'cumprod', 'var', 'std', 'mean', 'any', 'all', 'argmax', 'argmin', 'square', 'abs',
         'sqrt', 'exp', 'log', 'logsumexp', 'round', 'sign', 'pow', 'clip', 'equal',
         'not_equal', 'greater', 'greater_equal', 'less', 'less_equal', 'maximum', 'minimum',
         'sin', 'cos', 'normalize_batch_in_training', 'batch_normalization')
SPECS = {}
DOCS = {}


def _reduction():
    """The rules of a reduction: a tensor, its axes (None, an int or a list), keepdims."""
    return {'x': T, 'axis': axes('x'), 'keepdims': BOOL}, []


# ---------------------------------------------------------------------------
# dot
# ---------------------------------------------------------------------------

SPECS['dot'] = ({'x': T, 'y': T}, [dot_sizes])

DOCS['dot'] = """Tensor product of two tensors (the matrix product for 2-D inputs).

For inputs of higher rank Keras 2 follows Theano's ``dot`` on every engine: the last
axis of ``x`` is contracted with the second-to-last axis of ``y`` (with the only axis
of a 1-D ``y``), and all other axes are kept, those of ``x`` first. This is not a
per-sample product; use ``batch_dot`` for that.

Arguments:
    x: A tensor of rank >= 1 whose last axis has size ``k``. A sparse 2-D ``x`` is
        accepted on engines with sparse tensors.
    y: A tensor of shape ``(k,)``, ``(k, m)`` or ``(..., k, m)``, of the dtype of ``x``.

Returns:
    A tensor of the inputs' dtype and shape ``x.shape[:-1] + y.shape[:-2] + y.shape[-1:]``
    (just ``x.shape[:-1]`` for a 1-D ``y``); e.g. ``(2, 3, 4)`` times ``(5, 4, 6)`` gives
    ``(2, 3, 5, 6)``.

Raises:
    TypeError: If ``x`` or ``y`` is not a tensor or numeric value.
    ValueError: If ``x`` or ``y`` is a scalar, or the contracted axes have different
        sizes.

Example:
    >>> x = K.constant([[1., 2.], [3., 4.]])
    >>> K.eval(K.dot(x, K.constant([[1.], [1.]])))
    array([[3.],
           [7.]], dtype=float32)
    >>> K.eval(K.dot(x, K.constant([1., 0.])))
    array([1., 3.], dtype=float32)
    >>> K.int_shape(K.dot(K.ones((2, 3, 4)), K.ones((5, 4, 6))))
    (2, 3, 5, 6)
"""


# ---------------------------------------------------------------------------
# batch_dot
# ---------------------------------------------------------------------------

SPECS['batch_dot'] = ({'x': T, 'y': T}, [batch_dot_sizes])

DOCS['batch_dot'] = """Batchwise dot product: one dot product per sample of a batch.

Axis 0 of both inputs is the batch axis. For each sample ``i``, axis ``axes[0]`` of
``x[i]`` is contracted with axis ``axes[1]`` of ``y[i]`` (axes are counted with the
batch axis as 0), without computing the products across samples. The result holds the
batch axis, then the other axes of ``x``, then the other non-batch axes of ``y``. As in
Keras 2.3.1, a result that would be 1-D (two 2-D inputs) is returned as ``(batch, 1)``.

Arguments:
    x: A tensor of shape ``(batch, ...)``, rank >= 2.
    y: A tensor of shape ``(batch, ...)``, rank >= 2, with the batch size and dtype of
        ``x``.
    axes: The axes to contract. An int ``a`` means ``(a, a)``; a pair ``(ax, ay)`` names
        one axis of ``x`` and one of ``y`` (negative values count from the end).
        ``None`` (default) means ``(ndim(x) - 1, ndim(y) - 2)``, a matrix product per
        sample, or ``(ndim(x) - 1, ndim(y) - 1)`` when ``y`` is 2-D. Axis 0 cannot be
        contracted.

Returns:
    A tensor of the inputs' dtype, of shape
    ``x.shape[:ax] + x.shape[ax + 1:] + y.shape[1:ay] + y.shape[ay + 1:]`` for the
    contracted axes ``(ax, ay)``, or ``(batch, 1)`` when that shape is ``(batch,)``.

Raises:
    TypeError: If ``x`` or ``y`` is not a tensor or numeric value, or ``axes`` is not
        ``None``, an int or a pair of ints.
    ValueError: If an input has rank < 2, an axis is out of range or is the batch
        axis 0, or the batch sizes or the sizes of the contracted axes differ.

Example:
    >>> x = K.constant([[1., 2.], [3., 4.]])
    >>> y = K.constant([[5., 6.], [7., 8.]])
    >>> K.eval(K.batch_dot(x, y))
    array([[17.],
           [53.]], dtype=float32)
    >>> y = K.constant([[[1., 1.], [0., 1.]], [[2., 0.], [1., 2.]]])
    >>> K.eval(K.batch_dot(x, y))
    array([[ 1.,  3.],
           [10.,  8.]], dtype=float32)
    >>> K.eval(K.batch_dot(x, y, axes=(1, 2)))
    array([[ 3.,  2.],
           [ 6., 11.]], dtype=float32)
    >>> K.int_shape(K.batch_dot(K.ones((2, 20, 1)), K.ones((2, 30, 20)), axes=(1, 2)))
    (2, 1, 30)
"""


# ---------------------------------------------------------------------------
# transpose
# ---------------------------------------------------------------------------

SPECS['transpose'] = ({'x': T}, [])

DOCS['transpose'] = """Transpose of a tensor: its axes in reverse order.

Arguments:
    x: A tensor or variable of any rank (a sparse 2-D tensor on engines with sparse
        tensors).

Returns:
    A tensor of the dtype of ``x`` whose shape is that of ``x`` reversed; a 1-D tensor
    comes back unchanged.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.eval(K.transpose(K.constant([[1., 2., 3.], [4., 5., 6.]])))
    array([[1., 4.],
           [2., 5.],
           [3., 6.]], dtype=float32)
    >>> K.int_shape(K.transpose(K.ones((2, 3, 4))))
    (4, 3, 2)
"""


# ---------------------------------------------------------------------------
# gather
# ---------------------------------------------------------------------------

SPECS['gather'] = ({'reference': T, 'indices': T}, [gather_indices])

DOCS['gather'] = """Select entries of a tensor along its first axis by index.

Arguments:
    reference: A tensor of shape ``(n, ...)``, any dtype.
    indices: An integer tensor, list or numpy array of any shape, with values in
        ``[0, n)``: the positions along axis 0 of ``reference`` to pick (repeats
        allowed).

Returns:
    A tensor of the dtype of ``reference`` and shape
    ``indices.shape + reference.shape[1:]``.

Raises:
    TypeError: If ``reference`` is not a tensor or numeric value, or ``indices``
        holds non-integers (a float tensor too, except on CNTK).
    ValueError: If ``reference`` is a scalar, or numpy or list ``indices`` fall
        outside the rows of ``reference``; on CNTK (whose tensors hold indices
        as floats), if constant indices, or values a ``K.function`` feeds to a
        placeholder taken as the indices, are not whole numbers.

Example:
    >>> ref = K.constant([[1., 2.], [3., 4.], [5., 6.]])
    >>> K.eval(K.gather(ref, [2, 0]))
    array([[5., 6.],
           [1., 2.]], dtype=float32)
    >>> K.eval(K.gather(K.constant([10., 20., 30.]), K.constant([2, 0, 2], dtype='int32')))
    array([30., 10., 30.], dtype=float32)
    >>> K.int_shape(K.gather(ref, K.constant([[2, 0]], dtype='int32')))
    (1, 2, 2)
"""


# ---------------------------------------------------------------------------
# max
# ---------------------------------------------------------------------------

SPECS['max'] = _reduction()

DOCS['max'] = """Maximum of the values of a tensor along the given axes.

Arguments:
    x: A tensor or variable of any rank and a numeric dtype.
    axis: ``None`` (default: all axes), an integer in ``[-ndim(x), ndim(x))`` or a
        list/tuple of such integers: the axes to reduce.
    keepdims: If ``True`` the reduced axes stay, with size 1; if ``False``
        (default) they are removed.

Returns:
    A tensor of the dtype of ``x``: the shape of ``x`` without the reduced axes (with
    them as size 1 when ``keepdims``); a scalar for ``axis=None``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, ``axis`` is not ``None``, an int
        or a list of ints, or ``keepdims`` is not a bool.
    ValueError: If an axis is out of range for ``x`` or is named twice.

Example:
    >>> x = K.constant([[1., 5.], [3., 2.]])
    >>> K.eval(K.max(x, axis=1))
    array([5., 3.], dtype=float32)
    >>> K.eval(K.max(x, axis=0, keepdims=True))
    array([[3., 5.]], dtype=float32)
    >>> float(K.eval(K.max(x)))
    5.0
"""


# ---------------------------------------------------------------------------
# min
# ---------------------------------------------------------------------------

SPECS['min'] = _reduction()

DOCS['min'] = """Minimum of the values of a tensor along the given axes.

Arguments:
    x: A tensor or variable of any rank and a numeric dtype.
    axis: ``None`` (default: all axes), an integer in ``[-ndim(x), ndim(x))`` or a
        list/tuple of such integers: the axes to reduce.
    keepdims: If ``True`` the reduced axes stay, with size 1; if ``False``
        (default) they are removed.

Returns:
    A tensor of the dtype of ``x``: the shape of ``x`` without the reduced axes (with
    them as size 1 when ``keepdims``); a scalar for ``axis=None``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, ``axis`` is not ``None``, an int
        or a list of ints, or ``keepdims`` is not a bool.
    ValueError: If an axis is out of range for ``x`` or is named twice.

Example:
    >>> x = K.constant([[1., 5.], [3., 2.]])
    >>> K.eval(K.min(x, axis=0))
    array([1., 2.], dtype=float32)
    >>> K.eval(K.min(x, axis=-1, keepdims=True))
    array([[1.],
           [2.]], dtype=float32)
    >>> float(K.eval(K.min(x)))
    1.0
"""


# ---------------------------------------------------------------------------
# sum
# ---------------------------------------------------------------------------

SPECS['sum'] = _reduction()

DOCS['sum'] = """Sum of the values of a tensor along the given axes.

Arguments:
    x: A tensor or variable of any rank and a numeric dtype (a boolean ``x`` counts
        its ``True`` entries).
    axis: ``None`` (default: all axes), an integer in ``[-ndim(x), ndim(x))`` or a
        list/tuple of such integers: the axes to reduce.
    keepdims: If ``True`` the reduced axes stay, with size 1; if ``False``
        (default) they are removed.

Returns:
    A tensor of the dtype of ``x``: the shape of ``x`` without the reduced axes (with
    them as size 1 when ``keepdims``); a scalar for ``axis=None``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, ``axis`` is not ``None``, an int
        or a list of ints, or ``keepdims`` is not a bool.
    ValueError: If an axis is out of range for ``x`` or is named twice.

Example:
    >>> x = K.constant([[1., 2.], [3., 4.]])
    >>> K.eval(K.sum(x, axis=0))
    array([4., 6.], dtype=float32)
    >>> K.eval(K.sum(x, axis=1, keepdims=True))
    array([[3.],
           [7.]], dtype=float32)
    >>> float(K.eval(K.sum(x)))
    10.0
"""


# ---------------------------------------------------------------------------
# prod
# ---------------------------------------------------------------------------

SPECS['prod'] = _reduction()

DOCS['prod'] = """Product of the values of a tensor along the given axes.

Arguments:
    x: A tensor or variable of any rank and a numeric dtype.
    axis: ``None`` (default: all axes), an integer in ``[-ndim(x), ndim(x))`` or a
        list/tuple of such integers: the axes to reduce.
    keepdims: If ``True`` the reduced axes stay, with size 1; if ``False``
        (default) they are removed.

Returns:
    A tensor of the dtype of ``x``: the shape of ``x`` without the reduced axes (with
    them as size 1 when ``keepdims``); a scalar for ``axis=None``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, ``axis`` is not ``None``, an int
        or a list of ints, or ``keepdims`` is not a bool.
    ValueError: If an axis is out of range for ``x`` or is named twice.

Example:
    >>> x = K.constant([[1., 2.], [3., 4.]])
    >>> K.eval(K.prod(x, axis=1))
    array([ 2., 12.], dtype=float32)
    >>> float(K.eval(K.prod(x)))
    24.0
"""


# ---------------------------------------------------------------------------
# cumsum
# ---------------------------------------------------------------------------

SPECS['cumsum'] = ({'x': T, 'axis': axis('x')}, [])

DOCS['cumsum'] = """Cumulative sum of the values of a tensor along an axis.

Entry ``i`` of the result along ``axis`` is the sum of entries ``0`` to ``i`` of ``x``.

Arguments:
    x: A tensor or variable of rank >= 1 and a numeric dtype.
    axis: An integer in ``[-ndim(x), ndim(x))``, the axis to accumulate along;
        default 0.

Returns:
    A tensor of the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, or ``axis`` is not an int.
    ValueError: If ``axis`` is out of range for ``x``.

Example:
    >>> K.eval(K.cumsum(K.constant([1., 2., 3.])))
    array([1., 3., 6.], dtype=float32)
    >>> K.eval(K.cumsum(K.constant([[1., 2.], [3., 4.]]), axis=1))
    array([[1., 3.],
           [3., 7.]], dtype=float32)
"""


# ---------------------------------------------------------------------------
# cumprod
# ---------------------------------------------------------------------------

SPECS['cumprod'] = ({'x': T, 'axis': axis('x')}, [])

DOCS['cumprod'] = """Cumulative product of the values of a tensor along an axis.

Entry ``i`` of the result along ``axis`` is the product of entries ``0`` to ``i`` of
``x``.

Arguments:
    x: A tensor or variable of rank >= 1 and a numeric dtype.
    axis: An integer in ``[-ndim(x), ndim(x))``, the axis to accumulate along;
        default 0.

Returns:
    A tensor of the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, or ``axis`` is not an int.
    ValueError: If ``axis`` is out of range for ``x``.

Example:
    >>> K.eval(K.cumprod(K.constant([1., 2., 3.])))
    array([1., 2., 6.], dtype=float32)
    >>> K.eval(K.cumprod(K.constant([[1., 2.], [3., 4.]]), axis=1))
    array([[ 1.,  2.],
           [ 3., 12.]], dtype=float32)
"""


# ---------------------------------------------------------------------------
# var
# ---------------------------------------------------------------------------

SPECS['var'] = _reduction()

DOCS['var'] = """Variance of the values of a tensor along the given axes.

This is the population variance (the mean of the squared deviations from the mean,
dividing by ``n``, not ``n - 1``).

Arguments:
    x: A tensor or variable of any rank; integer and boolean tensors are cast to
        ``floatx()`` first.
    axis: ``None`` (default: all axes), an integer in ``[-ndim(x), ndim(x))`` or a
        list/tuple of such integers: the axes to reduce.
    keepdims: If ``True`` the reduced axes stay, with size 1; if ``False``
        (default) they are removed.

Returns:
    A float tensor (the dtype of a float ``x``, else ``floatx()``): the shape of ``x``
    without the reduced axes (with them as size 1 when ``keepdims``); a scalar for
    ``axis=None``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, ``axis`` is not ``None``, an int
        or a list of ints, or ``keepdims`` is not a bool.
    ValueError: If an axis is out of range for ``x`` or is named twice.

Example:
    >>> x = K.constant([[1., 2.], [3., 6.]])
    >>> K.eval(K.var(x, axis=0))
    array([1., 4.], dtype=float32)
    >>> float(K.eval(K.var(K.constant([1., 2., 3., 4.]))))
    1.25
"""


# ---------------------------------------------------------------------------
# std
# ---------------------------------------------------------------------------

SPECS['std'] = _reduction()

DOCS['std'] = """Standard deviation of the values of a tensor along the given axes.

This is the square root of the population variance (dividing by ``n``, not ``n - 1``).

Arguments:
    x: A tensor or variable of any rank; integer and boolean tensors are cast to
        ``floatx()`` first.
    axis: ``None`` (default: all axes), an integer in ``[-ndim(x), ndim(x))`` or a
        list/tuple of such integers: the axes to reduce.
    keepdims: If ``True`` the reduced axes stay, with size 1; if ``False``
        (default) they are removed.

Returns:
    A float tensor (the dtype of a float ``x``, else ``floatx()``): the shape of ``x``
    without the reduced axes (with them as size 1 when ``keepdims``); a scalar for
    ``axis=None``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, ``axis`` is not ``None``, an int
        or a list of ints, or ``keepdims`` is not a bool.
    ValueError: If an axis is out of range for ``x`` or is named twice.

Example:
    >>> x = K.constant([[1., 2.], [3., 6.]])
    >>> K.eval(K.std(x, axis=0))
    array([1., 2.], dtype=float32)
    >>> K.eval(K.std(x, axis=1, keepdims=True))
    array([[0.5],
           [1.5]], dtype=float32)
"""


# ---------------------------------------------------------------------------
# mean
# ---------------------------------------------------------------------------

SPECS['mean'] = _reduction()

DOCS['mean'] = """Mean of the values of a tensor along the given axes.

Arguments:
    x: A tensor or variable of any rank; integer and boolean tensors are cast to
        ``floatx()`` first.
    axis: ``None`` (default: all axes), an integer in ``[-ndim(x), ndim(x))`` or a
        list/tuple of such integers: the axes to reduce.
    keepdims: If ``True`` the reduced axes stay, with size 1; if ``False``
        (default) they are removed.

Returns:
    A float tensor (the dtype of a float ``x``, else ``floatx()``): the shape of ``x``
    without the reduced axes (with them as size 1 when ``keepdims``); a scalar for
    ``axis=None``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, ``axis`` is not ``None``, an int
        or a list of ints, or ``keepdims`` is not a bool.
    ValueError: If an axis is out of range for ``x`` or is named twice.

Example:
    >>> x = K.constant([[1., 2.], [3., 4.]])
    >>> K.eval(K.mean(x, axis=0))
    array([2., 3.], dtype=float32)
    >>> K.eval(K.mean(x, axis=1, keepdims=True))
    array([[1.5],
           [3.5]], dtype=float32)
    >>> float(K.eval(K.mean(K.constant([1, 2], dtype='int32'))))
    1.5
"""


# ---------------------------------------------------------------------------
# any
# ---------------------------------------------------------------------------

SPECS['any'] = _reduction()

DOCS['any'] = """Logical OR of the values of a tensor along the given axes.

An entry counts as true when it is non-zero.

Arguments:
    x: A tensor or variable of any rank, numeric or boolean dtype.
    axis: ``None`` (default: all axes), an integer in ``[-ndim(x), ndim(x))`` or a
        list/tuple of such integers: the axes to reduce.
    keepdims: If ``True`` the reduced axes stay, with size 1; if ``False``
        (default) they are removed.

Returns:
    A boolean tensor: the shape of ``x`` without the reduced axes (with them as size
    1 when ``keepdims``); a scalar for ``axis=None``. CNTK has no boolean tensors and
    returns 1.0/0.0 in ``floatx()`` instead.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, ``axis`` is not ``None``, an int
        or a list of ints, or ``keepdims`` is not a bool.
    ValueError: If an axis is out of range for ``x`` or is named twice.

Example:
    >>> x = K.constant([[0., 1.], [0., 0.]])
    >>> K.eval(K.any(x, axis=1))
    array([ True, False])
    >>> bool(K.eval(K.any(x)))
    True
"""


# ---------------------------------------------------------------------------
# all
# ---------------------------------------------------------------------------

SPECS['all'] = _reduction()

DOCS['all'] = """Logical AND of the values of a tensor along the given axes.

An entry counts as true when it is non-zero.

Arguments:
    x: A tensor or variable of any rank, numeric or boolean dtype.
    axis: ``None`` (default: all axes), an integer in ``[-ndim(x), ndim(x))`` or a
        list/tuple of such integers: the axes to reduce.
    keepdims: If ``True`` the reduced axes stay, with size 1; if ``False``
        (default) they are removed.

Returns:
    A boolean tensor: the shape of ``x`` without the reduced axes (with them as size
    1 when ``keepdims``); a scalar for ``axis=None``. CNTK has no boolean tensors and
    returns 1.0/0.0 in ``floatx()`` instead.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, ``axis`` is not ``None``, an int
        or a list of ints, or ``keepdims`` is not a bool.
    ValueError: If an axis is out of range for ``x`` or is named twice.

Example:
    >>> x = K.constant([[2., 1.], [0., 1.]])
    >>> K.eval(K.all(x, axis=1))
    array([ True, False])
    >>> bool(K.eval(K.all(x)))
    False
"""


# ---------------------------------------------------------------------------
# argmax
# ---------------------------------------------------------------------------

SPECS['argmax'] = ({'x': T, 'axis': axis('x')}, [nonempty_axis])

DOCS['argmax'] = """Index of the largest value along an axis.

When the largest value occurs several times, the first index is returned.

Arguments:
    x: A tensor or variable of rank >= 1 and a numeric dtype.
    axis: An integer in ``[-ndim(x), ndim(x))``, the axis to search; default -1 (the
        last axis).

Returns:
    An ``int64`` tensor: the shape of ``x`` without ``axis``. CNTK has no integer
    tensors and holds the indices in ``floatx()``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, or ``axis`` is not an int.
    ValueError: If ``axis`` is out of range for ``x``.

Example:
    >>> x = K.constant([[1., 3.], [4., 2.]])
    >>> K.eval(K.argmax(x))
    array([1, 0])
    >>> K.eval(K.argmax(x, axis=0))
    array([1, 0])
    >>> int(K.eval(K.argmax(K.constant([1., 3., 3.]))))
    1
"""


# ---------------------------------------------------------------------------
# argmin
# ---------------------------------------------------------------------------

SPECS['argmin'] = ({'x': T, 'axis': axis('x')}, [nonempty_axis])

DOCS['argmin'] = """Index of the smallest value along an axis.

When the smallest value occurs several times, the first index is returned.

Arguments:
    x: A tensor or variable of rank >= 1 and a numeric dtype.
    axis: An integer in ``[-ndim(x), ndim(x))``, the axis to search; default -1 (the
        last axis).

Returns:
    An ``int64`` tensor: the shape of ``x`` without ``axis``. CNTK has no integer
    tensors and holds the indices in ``floatx()``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, or ``axis`` is not an int.
    ValueError: If ``axis`` is out of range for ``x``.

Example:
    >>> x = K.constant([[1., 3.], [4., 2.]])
    >>> K.eval(K.argmin(x))
    array([0, 1])
    >>> K.eval(K.argmin(x, axis=0))
    array([0, 1])
"""


# ---------------------------------------------------------------------------
# square
# ---------------------------------------------------------------------------

SPECS['square'] = ({'x': T}, [])

DOCS['square'] = """Elementwise square, ``x * x``.

Arguments:
    x: A tensor or variable of a numeric dtype.

Returns:
    A tensor of the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.eval(K.square(K.constant([-2., 0.5, 3.])))
    array([4.  , 0.25, 9.  ], dtype=float32)
"""


# ---------------------------------------------------------------------------
# abs
# ---------------------------------------------------------------------------

SPECS['abs'] = ({'x': T}, [])

DOCS['abs'] = """Elementwise absolute value.

Arguments:
    x: A tensor or variable of a numeric dtype.

Returns:
    A tensor of the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.eval(K.abs(K.constant([-2., 0., 1.5])))
    array([2. , 0. , 1.5], dtype=float32)
"""


# ---------------------------------------------------------------------------
# sqrt
# ---------------------------------------------------------------------------

SPECS['sqrt'] = ({'x': T}, [float_x_on_tensorflow])

DOCS['sqrt'] = """Elementwise square root.

As in Keras 2, negative entries are clipped to 0 first, so they give 0 rather than NaN.

Arguments:
    x: A tensor or variable of a float dtype.

Returns:
    A tensor of the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.eval(K.sqrt(K.constant([4., 0.25, -1.])))
    array([2. , 0.5, 0. ], dtype=float32)
"""


# ---------------------------------------------------------------------------
# exp
# ---------------------------------------------------------------------------

SPECS['exp'] = ({'x': T}, [float_x_on_tensorflow])

DOCS['exp'] = """Elementwise exponential, ``e ** x``.

Arguments:
    x: A tensor or variable of a float dtype.

Returns:
    A tensor of the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.eval(K.exp(K.constant([0., 0.])))
    array([1., 1.], dtype=float32)
    >>> np.round(K.eval(K.exp(K.constant([1., -1.]))), 4)
    array([2.7183, 0.3679], dtype=float32)
"""


# ---------------------------------------------------------------------------
# log
# ---------------------------------------------------------------------------

SPECS['log'] = ({'x': T}, [float_x_on_tensorflow])

DOCS['log'] = """Elementwise natural logarithm.

Zero gives ``-inf`` and negative entries give NaN.

Arguments:
    x: A tensor or variable of a float dtype.

Returns:
    A tensor of the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.eval(K.log(K.constant([1., 1.])))
    array([0., 0.], dtype=float32)
    >>> np.round(K.eval(K.log(K.constant([2., 10.]))), 4)
    array([0.6931, 2.3026], dtype=float32)
"""


# ---------------------------------------------------------------------------
# logsumexp
# ---------------------------------------------------------------------------

SPECS['logsumexp'] = _reduction()

DOCS['logsumexp'] = """Logarithm of the sum of the exponentials of a tensor along the given axes.

The result equals ``log(sum(exp(x), axis))`` but is computed without overflow or
underflow for large or very negative entries (the maximum is taken out first).

Arguments:
    x: A tensor or variable of any rank and a float dtype.
    axis: ``None`` (default: all axes), an integer in ``[-ndim(x), ndim(x))`` or a
        list/tuple of such integers: the axes to reduce.
    keepdims: If ``True`` the reduced axes stay, with size 1; if ``False``
        (default) they are removed.

Returns:
    A tensor of the dtype of ``x``: the shape of ``x`` without the reduced axes (with
    them as size 1 when ``keepdims``); a scalar for ``axis=None``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, ``axis`` is not ``None``, an int
        or a list of ints, or ``keepdims`` is not a bool.
    ValueError: If an axis is out of range for ``x`` or is named twice.

Example:
    >>> x = K.constant([[0., 0.], [1., 1.]])
    >>> np.round(K.eval(K.logsumexp(x, axis=1)), 4)
    array([0.6931, 1.6931], dtype=float32)
    >>> round(float(K.eval(K.logsumexp(K.constant([1000., 1000.])))), 2)
    1000.69
"""


# ---------------------------------------------------------------------------
# round
# ---------------------------------------------------------------------------

SPECS['round'] = ({'x': T}, [])

DOCS['round'] = """Elementwise rounding to the nearest integer.

Halves are rounded to the nearest even integer ("banker's rounding", as numpy's
``round``), so 0.5 gives 0 and 1.5 and 2.5 both give 2.

Arguments:
    x: A tensor or variable of a float dtype.

Returns:
    A tensor of the shape and dtype of ``x`` holding integral values.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.eval(K.round(K.constant([0.5, 1.5, 2.5, 2.4, -2.6])))
    array([ 0.,  2.,  2.,  2., -3.], dtype=float32)
"""


# ---------------------------------------------------------------------------
# sign
# ---------------------------------------------------------------------------

SPECS['sign'] = ({'x': T}, [])

DOCS['sign'] = """Elementwise sign: -1 for negative entries, 0 for zero, 1 for positive ones.

Arguments:
    x: A tensor or variable of a numeric dtype.

Returns:
    A tensor of the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.eval(K.sign(K.constant([-2., 0., 3.])))
    array([-1.,  0.,  1.], dtype=float32)
"""


# ---------------------------------------------------------------------------
# pow
# ---------------------------------------------------------------------------

SPECS['pow'] = ({'x': T, 'a': T}, [broadcastable('x', 'a'), integer_powers])

DOCS['pow'] = """Elementwise power, ``x ** a``.

Arguments:
    x: A tensor or variable of a float dtype.
    a: The exponent: a Python number (integer or float, possibly negative), or a
        tensor that broadcasts against ``x``.

Returns:
    A tensor of the dtype of ``x`` and the broadcast shape of ``x`` and ``a`` (the
    shape of ``x`` for a number ``a``).

Raises:
    TypeError: If ``x`` or ``a`` is not a tensor or numeric value.

Example:
    >>> K.eval(K.pow(K.constant([1., 2., 3.]), 2))
    array([1., 4., 9.], dtype=float32)
    >>> K.eval(K.pow(K.constant([1., 4., 9.]), 0.5))
    array([1., 2., 3.], dtype=float32)
    >>> K.eval(K.pow(K.constant([1., 2., 4.]), -1))
    array([1.  , 0.5 , 0.25], dtype=float32)
"""


# ---------------------------------------------------------------------------
# clip
# ---------------------------------------------------------------------------

SPECS['clip'] = ({'x': T, 'min_value': tensor(allow_none=True), 'max_value': tensor(allow_none=True)},
                 [integer_clip_bounds])

DOCS['clip'] = """Elementwise clipping of a tensor to the range ``[min_value, max_value]``.

Entries below ``min_value`` become ``min_value`` and entries above ``max_value`` become
``max_value``. As in Keras 2, a ``max_value`` smaller than ``min_value`` is raised to
``min_value``, so every entry then becomes ``min_value``.

Arguments:
    x: A tensor or variable of a numeric dtype.
    min_value: The lower bound: a number, a scalar tensor, or ``None`` (no lower bound).
    max_value: The upper bound: a number, a scalar tensor, or ``None`` (no upper bound).

Returns:
    A tensor of the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, or a bound is neither
        ``None`` nor a number or tensor.

Example:
    >>> x = K.constant([-1., 0.5, 3.])
    >>> K.eval(K.clip(x, 0., 1.))
    array([0. , 0.5, 1. ], dtype=float32)
    >>> K.eval(K.clip(x, None, 1.))
    array([-1. ,  0.5,  1. ], dtype=float32)
    >>> K.eval(K.clip(x, 2., 1.))
    array([2., 2., 2.], dtype=float32)
"""


# ---------------------------------------------------------------------------
# equal
# ---------------------------------------------------------------------------

SPECS['equal'] = ({'x': T, 'y': T}, [broadcastable()])

DOCS['equal'] = """Elementwise equality test, ``x == y``.

Arguments:
    x: A tensor, variable or number.
    y: A tensor, variable or number that broadcasts against ``x`` (a number takes the
        dtype of the tensor).

Returns:
    A boolean tensor of the broadcast shape of ``x`` and ``y``. CNTK has no boolean
    tensors and returns 1.0/0.0 in ``floatx()`` instead.

Raises:
    TypeError: If ``x`` or ``y`` is not a tensor or numeric value.
    ValueError: If the static shapes of ``x`` and ``y`` do not broadcast.

Example:
    >>> x = K.constant([1., 2., 3.])
    >>> K.eval(K.equal(x, K.constant([1., 0., 3.])))
    array([ True, False,  True])
    >>> K.eval(K.equal(x, 2.))
    array([False,  True, False])
"""


# ---------------------------------------------------------------------------
# not_equal
# ---------------------------------------------------------------------------

SPECS['not_equal'] = ({'x': T, 'y': T}, [broadcastable()])

DOCS['not_equal'] = """Elementwise inequality test, ``x != y``.

Arguments:
    x: A tensor, variable or number.
    y: A tensor, variable or number that broadcasts against ``x`` (a number takes the
        dtype of the tensor).

Returns:
    A boolean tensor of the broadcast shape of ``x`` and ``y``. CNTK has no boolean
    tensors and returns 1.0/0.0 in ``floatx()`` instead.

Raises:
    TypeError: If ``x`` or ``y`` is not a tensor or numeric value.
    ValueError: If the static shapes of ``x`` and ``y`` do not broadcast.

Example:
    >>> x = K.constant([1., 2., 3.])
    >>> K.eval(K.not_equal(x, K.constant([1., 0., 3.])))
    array([False,  True, False])
    >>> K.eval(K.not_equal(x, 2.))
    array([ True, False,  True])
"""


# ---------------------------------------------------------------------------
# greater
# ---------------------------------------------------------------------------

SPECS['greater'] = ({'x': T, 'y': T}, [broadcastable()])

DOCS['greater'] = """Elementwise comparison ``x > y``.

Arguments:
    x: A tensor, variable or number.
    y: A tensor, variable or number that broadcasts against ``x`` (a number takes the
        dtype of the tensor).

Returns:
    A boolean tensor of the broadcast shape of ``x`` and ``y``. CNTK has no boolean
    tensors and returns 1.0/0.0 in ``floatx()`` instead.

Raises:
    TypeError: If ``x`` or ``y`` is not a tensor or numeric value.
    ValueError: If the static shapes of ``x`` and ``y`` do not broadcast.

Example:
    >>> x = K.constant([1., 2., 3.])
    >>> K.eval(K.greater(x, 2.))
    array([False, False,  True])
    >>> K.eval(K.greater(x, K.constant([0., 2., 4.])))
    array([ True, False, False])
"""


# ---------------------------------------------------------------------------
# greater_equal
# ---------------------------------------------------------------------------

SPECS['greater_equal'] = ({'x': T, 'y': T}, [broadcastable()])

DOCS['greater_equal'] = """Elementwise comparison ``x >= y``.

Arguments:
    x: A tensor, variable or number.
    y: A tensor, variable or number that broadcasts against ``x`` (a number takes the
        dtype of the tensor).

Returns:
    A boolean tensor of the broadcast shape of ``x`` and ``y``. CNTK has no boolean
    tensors and returns 1.0/0.0 in ``floatx()`` instead.

Raises:
    TypeError: If ``x`` or ``y`` is not a tensor or numeric value.
    ValueError: If the static shapes of ``x`` and ``y`` do not broadcast.

Example:
    >>> x = K.constant([1., 2., 3.])
    >>> K.eval(K.greater_equal(x, 2.))
    array([False,  True,  True])
    >>> K.eval(K.greater_equal(x, K.constant([0., 2., 4.])))
    array([ True,  True, False])
"""


# ---------------------------------------------------------------------------
# less
# ---------------------------------------------------------------------------

SPECS['less'] = ({'x': T, 'y': T}, [broadcastable()])

DOCS['less'] = """Elementwise comparison ``x < y``.

Arguments:
    x: A tensor, variable or number.
    y: A tensor, variable or number that broadcasts against ``x`` (a number takes the
        dtype of the tensor).

Returns:
    A boolean tensor of the broadcast shape of ``x`` and ``y``. CNTK has no boolean
    tensors and returns 1.0/0.0 in ``floatx()`` instead.

Raises:
    TypeError: If ``x`` or ``y`` is not a tensor or numeric value.
    ValueError: If the static shapes of ``x`` and ``y`` do not broadcast.

Example:
    >>> x = K.constant([1., 2., 3.])
    >>> K.eval(K.less(x, 2.))
    array([ True, False, False])
    >>> K.eval(K.less(x, K.constant([0., 2., 4.])))
    array([False, False,  True])
"""


# ---------------------------------------------------------------------------
# less_equal
# ---------------------------------------------------------------------------

SPECS['less_equal'] = ({'x': T, 'y': T}, [broadcastable()])

DOCS['less_equal'] = """Elementwise comparison ``x <= y``.

Arguments:
    x: A tensor, variable or number.
    y: A tensor, variable or number that broadcasts against ``x`` (a number takes the
        dtype of the tensor).

Returns:
    A boolean tensor of the broadcast shape of ``x`` and ``y``. CNTK has no boolean
    tensors and returns 1.0/0.0 in ``floatx()`` instead.

Raises:
    TypeError: If ``x`` or ``y`` is not a tensor or numeric value.
    ValueError: If the static shapes of ``x`` and ``y`` do not broadcast.

Example:
    >>> x = K.constant([1., 2., 3.])
    >>> K.eval(K.less_equal(x, 2.))
    array([ True,  True, False])
    >>> K.eval(K.less_equal(x, K.constant([0., 2., 4.])))
    array([False,  True,  True])
"""


# ---------------------------------------------------------------------------
# maximum
# ---------------------------------------------------------------------------

SPECS['maximum'] = ({'x': T, 'y': T}, [broadcastable()])

DOCS['maximum'] = """Elementwise maximum of two tensors.

Arguments:
    x: A tensor, variable or number.
    y: A tensor, variable or number that broadcasts against ``x`` (a number takes the
        dtype of the tensor).

Returns:
    A tensor of the broadcast shape of ``x`` and ``y``, of their dtype.

Raises:
    TypeError: If ``x`` or ``y`` is not a tensor or numeric value.
    ValueError: If the static shapes of ``x`` and ``y`` do not broadcast.

Example:
    >>> K.eval(K.maximum(K.constant([1., 3.]), 2.))
    array([2., 3.], dtype=float32)
    >>> K.eval(K.maximum(K.constant([[1., 4.]]), K.constant([[2.], [3.]])))
    array([[2., 4.],
           [3., 4.]], dtype=float32)
"""


# ---------------------------------------------------------------------------
# minimum
# ---------------------------------------------------------------------------

SPECS['minimum'] = ({'x': T, 'y': T}, [broadcastable()])

DOCS['minimum'] = """Elementwise minimum of two tensors.

Arguments:
    x: A tensor, variable or number.
    y: A tensor, variable or number that broadcasts against ``x`` (a number takes the
        dtype of the tensor).

Returns:
    A tensor of the broadcast shape of ``x`` and ``y``, of their dtype.

Raises:
    TypeError: If ``x`` or ``y`` is not a tensor or numeric value.
    ValueError: If the static shapes of ``x`` and ``y`` do not broadcast.

Example:
    >>> K.eval(K.minimum(K.constant([1., 3.]), 2.))
    array([1., 2.], dtype=float32)
    >>> K.eval(K.minimum(K.constant([[1., 4.]]), K.constant([[2.], [3.]])))
    array([[1., 2.],
           [1., 3.]], dtype=float32)
"""


# ---------------------------------------------------------------------------
# sin
# ---------------------------------------------------------------------------

SPECS['sin'] = ({'x': T}, [float_x_on_tensorflow])

DOCS['sin'] = """Elementwise sine (of angles in radians).

Arguments:
    x: A tensor or variable of a float dtype.

Returns:
    A tensor of the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> np.round(K.eval(K.sin(K.constant([0., np.pi / 2, -np.pi / 6]))), 4)
    array([ 0. ,  1. , -0.5], dtype=float32)
"""


# ---------------------------------------------------------------------------
# cos
# ---------------------------------------------------------------------------

SPECS['cos'] = ({'x': T}, [float_x_on_tensorflow])

DOCS['cos'] = """Elementwise cosine (of angles in radians).

Arguments:
    x: A tensor or variable of a float dtype.

Returns:
    A tensor of the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> np.round(K.eval(K.cos(K.constant([0., np.pi, np.pi / 3]))), 4)
    array([ 1. , -1. ,  0.5], dtype=float32)
"""


# ---------------------------------------------------------------------------
# normalize_batch_in_training
# ---------------------------------------------------------------------------

SPECS['normalize_batch_in_training'] = ({'x': T, 'gamma': tensor(allow_none=True),
                                         'beta': tensor(allow_none=True),
                                         'reduction_axes': reduction_axes(),
                                         'epsilon': number(0)}, [kept_axes_parameters])

DOCS['normalize_batch_in_training'] = """Batch normalization with the batch's own statistics.

Computes the mean and the (population) variance of ``x`` over ``reduction_axes`` and
returns them with the normalized tensor
``(x - mean) / sqrt(var + epsilon) * gamma + beta``. This is what a
``BatchNormalization`` layer does in training; ``batch_normalization`` applies given
statistics instead.

Arguments:
    x: A float tensor of any rank, e.g. ``(batch, features)`` or
        ``(batch, rows, cols, channels)``.
    gamma: The scale: ``None`` (no scaling) or a tensor with one value per position of
        the axes that are not reduced (typically 1-D of the feature or channel size).
    beta: The offset: ``None`` (no offset) or a tensor shaped like ``gamma``.
    reduction_axes: A list of integers, the axes to compute the statistics over, e.g.
        ``[0]`` for ``(batch, features)``, ``[0, 1, 2]`` for channels_last images or
        ``[0, 2, 3]`` for channels_first ones.
    epsilon: A small float added to the variance before the square root; default
        ``1e-3``.

Returns:
    A tuple ``(normed, mean, var)``: ``normed`` has the shape and dtype of ``x``;
    ``mean`` and ``var`` have the shape of ``x`` without the reduced axes.

Raises:
    TypeError: If ``x`` is not a tensor, ``gamma`` or ``beta`` is neither ``None``
        nor a tensor, ``reduction_axes`` is not an int or a list of ints, or
        ``epsilon`` is not a number.
    ValueError: If an axis of ``reduction_axes`` is out of range for ``x`` or
        named twice, or ``epsilon`` is negative.

Example:
    >>> x = K.constant([[1., 2.], [3., 6.]])
    >>> gamma, beta = K.constant([1., 2.]), K.constant([0., 1.])
    >>> normed, mean, var = K.normalize_batch_in_training(x, gamma, beta, [0], epsilon=0.)
    >>> K.eval(mean).tolist(), K.eval(var).tolist()
    ([2.0, 4.0], [1.0, 4.0])
    >>> K.eval(normed)
    array([[-1., -1.],
           [ 1.,  3.]], dtype=float32)
    >>> outs = K.normalize_batch_in_training(K.ones((2, 3, 3, 4)), None, None, [0, 1, 2])
    >>> [K.int_shape(t) for t in outs]
    [(2, 3, 3, 4), (4,), (4,)]
"""


# ---------------------------------------------------------------------------
# batch_normalization
# ---------------------------------------------------------------------------

SPECS['batch_normalization'] = ({'x': T, 'mean': T, 'var': T, 'beta': tensor(allow_none=True),
                                 'gamma': tensor(allow_none=True), 'axis': axis('x'),
                                 'epsilon': number(0)}, [batch_norm_params])

DOCS['batch_normalization'] = """Normalize a tensor with given statistics, then scale and shift it.

Computes ``(x - mean) / sqrt(var + epsilon) * gamma + beta`` elementwise. Parameters of
the rank of ``x`` broadcast as they are; 1-D parameters are laid along ``axis`` (the
feature axis), so they hold one value per feature or channel. This is what a
``BatchNormalization`` layer does at inference, with its moving statistics.

Arguments:
    x: A float tensor of any rank.
    mean: The mean to subtract: a 1-D tensor of the size of axis ``axis`` of ``x``, or
        a tensor that broadcasts against ``x``.
    var: The variance to divide by (after adding ``epsilon`` and taking the square
        root), shaped like ``mean``.
    beta: The offset, shaped like ``mean``, or ``None`` (no offset).
    gamma: The scale, shaped like ``mean``, or ``None`` (no scaling).
    axis: An integer in ``[-ndim(x), ndim(x))``, the axis 1-D parameters lie along;
        default -1 (the last axis, as with channels_last data).
    epsilon: A small float added to the variance; default ``1e-3``.

Returns:
    A tensor of the shape and dtype of ``x``.

Raises:
    TypeError: If ``x``, ``mean`` or ``var`` is not a tensor, ``beta`` or ``gamma``
        is neither ``None`` nor a tensor, or ``axis`` is not an int.
    ValueError: If ``axis`` is out of range for ``x``, a 1-D parameter's size is
        neither 1 nor that of axis ``axis``, or ``epsilon`` is negative.

Example:
    >>> x = K.constant([[1., 2.], [3., 6.]])
    >>> mean, var = K.constant([2., 4.]), K.constant([1., 4.])
    >>> beta, gamma = K.constant([0., 1.]), K.constant([1., 2.])
    >>> K.eval(K.batch_normalization(x, mean, var, beta, gamma, epsilon=0.))
    array([[-1., -1.],
           [ 1.,  3.]], dtype=float32)
    >>> K.eval(K.batch_normalization(x, mean, var, None, None, axis=0, epsilon=0.))
    array([[-1. ,  0. ],
           [-0.5,  1. ]], dtype=float32)
"""
