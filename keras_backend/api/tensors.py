"""Tensors and variables: making and inspecting tensors, variables and placeholders.

The contract of each name of this section of the API reference, side by side: its
argument rules (``SPECS[name]``: ``({argument: checker}, [checks across arguments])``,
in the vocabulary of :mod:`keras_backend.checks`) and its one docstring
(``DOCS[name]``). :mod:`keras_backend.api` gathers the sections in order.
"""
from ..checks import (BOOL, DT, NAME, SEED, T, dtype, evaluable, eye_size, float_dtype, integer,
    known_shape, number, shape_arg, tensor)

TITLE = 'Tensors and variables'
NAMES = ('is_sparse', 'to_dense', 'variable', 'is_variable', 'constant', 'is_keras_tensor',
         'is_tensor', 'placeholder', 'is_placeholder', 'shape', 'int_shape', 'ndim', 'size',
         'dtype', 'eval', 'zeros', 'ones', 'eye', 'zeros_like', 'ones_like', 'identity',
         'random_uniform_variable', 'random_normal_variable', 'count_params', 'cast')
SPECS = {}
DOCS = {}


# ---------------------------------------------------------------------------
# is_sparse
# ---------------------------------------------------------------------------

SPECS['is_sparse'] = ({}, [])

DOCS['is_sparse'] = """Whether a tensor is sparse.

Arguments:
    tensor: Any object; a tensor made by ``placeholder(..., sparse=True)`` is
        sparse.

Returns:
    A ``bool``: ``True`` for sparse tensors, ``False`` for dense tensors,
    variables and anything that is not a tensor.

Example:
    >>> K.is_sparse(K.placeholder((None, 3), sparse=True))
    True
    >>> K.is_sparse(K.placeholder((None, 3))), K.is_sparse(np.ones(2))
    (False, False)
"""


# ---------------------------------------------------------------------------
# to_dense
# ---------------------------------------------------------------------------

SPECS['to_dense'] = ({'tensor': T}, [])

DOCS['to_dense'] = """Dense tensor holding the values of a sparse tensor (zeros elsewhere).

A tensor that is already dense is returned as it is, so the function can be
applied to any input.

Arguments:
    tensor: A sparse tensor (a ``placeholder(..., sparse=True)`` of shape
        ``(batch, dim)``, or what ``ctc_label_dense_to_sparse`` returns), or
        any dense tensor.

Returns:
    A dense tensor with the dense shape and the dtype of ``tensor``; the
    very object ``tensor`` when it is dense.

Raises:
    TypeError: If ``tensor`` is not a tensor or numeric value.

Example:
    >>> import scipy.sparse
    >>> sp = K.placeholder((None, 3), sparse=True)
    >>> f = K.function([sp], [K.to_dense(sp)])
    >>> f([scipy.sparse.csr_matrix(np.array([[0., 2., 0.], [1., 0., 3.]]))])[0]
    array([[0., 2., 0.],
           [1., 0., 3.]], dtype=float32)
    >>> x = K.placeholder((None, 3))
    >>> K.to_dense(x) is x
    True
"""


# ---------------------------------------------------------------------------
# variable
# ---------------------------------------------------------------------------

SPECS['variable'] = ({'value': tensor(allow_scipy_sparse=True), 'dtype': DT, 'name': NAME}, [])

DOCS['variable'] = """Create a variable: a tensor whose value is kept and can be changed.

The variable holds a copy of ``value`` and is initialised at once.
Optimizers update it through ``update``-family ops; ``get_value``,
``set_value`` and ``eval`` read and write it directly. CNTK has no integer
tensors: there a variable asked for with an integer dtype holds its values
in ``floatx()``.

Arguments:
    value: A numpy array, a (nested) list of numbers or a scalar; a tensor
        that needs no placeholder feed is also accepted and its current value
        copied.
    dtype: The dtype name (such as ``'float32'``, ``'int32'`` or ``'bool'``);
        ``None`` (default) means ``floatx()``.
    name: Optional ``str``, prefixed by the open ``name_scope`` blocks.
    constraint: Optional callable that optimizers apply to the new value
        after each update (a projection); stored as the variable's
        ``constraint`` attribute.

Returns:
    A variable of ``value``'s shape and dtype ``dtype``. It carries the
    metadata Keras 2 reads: ``_keras_shape`` (the shape tuple) and
    ``_uses_learning_phase`` (``False``).

Raises:
    TypeError: If ``value`` is not numeric (``None``, a string...), ``dtype`` names no
        numeric or bool dtype, or ``name`` is not a string.
    ValueError: If ``value`` cannot be converted to ``dtype``, or depends on a
        placeholder.

Example:
    >>> v = K.variable([[1, 2], [3, 4]])
    >>> K.eval(v)
    array([[1., 2.],
           [3., 4.]], dtype=float32)
    >>> K.int_shape(v), K.dtype(v), K.is_variable(v)
    ((2, 2), 'float32', True)
"""


# ---------------------------------------------------------------------------
# is_variable
# ---------------------------------------------------------------------------

SPECS['is_variable'] = ({}, [])

DOCS['is_variable'] = """Whether an object is a backend variable.

Arguments:
    x: Any object.

Returns:
    A ``bool``: ``True`` for what ``variable``, ``zeros``, ``ones``, ``eye``
    and the ``random_*_variable`` functions create; ``False`` for constants,
    placeholders, results of operations and non-tensors.

Example:
    >>> K.is_variable(K.variable(1.)), K.is_variable(K.constant(1.))
    (True, False)
    >>> K.is_variable(K.variable(1.) * 2.), K.is_variable(np.ones(2))
    (False, False)
"""


# ---------------------------------------------------------------------------
# constant
# ---------------------------------------------------------------------------

SPECS['constant'] = ({'value': T, 'dtype': DT, 'shape': shape_arg(allow_tensor=False, allow_none=True), 'name': NAME},
                     [])

DOCS['constant'] = """Create a constant tensor from a numpy value.

Unlike a variable, its value is fixed in the graph.

Arguments:
    value: A numpy array, a (nested) list of numbers or a scalar.
    dtype: The dtype name; ``None`` (default) means ``floatx()``.
    shape: Optional tuple of ints. A single value is repeated to fill it;
        otherwise ``value`` must have as many elements, which are laid out
        in this shape (row-major order). ``None`` keeps ``value``'s shape.
    name: Optional ``str``.

Returns:
    A tensor of dtype ``dtype`` and shape ``shape`` (``value``'s shape when
    ``shape`` is ``None``).

Raises:
    TypeError: If ``value`` is not numeric, ``shape`` is not a tuple of ints, or
        ``dtype`` names no numeric or bool dtype.
    ValueError: If ``shape`` holds a negative size, or ``value`` cannot fill
        ``shape``.

Example:
    >>> K.eval(K.constant(2., shape=(2, 2)))
    array([[2., 2.],
           [2., 2.]], dtype=float32)
    >>> K.eval(K.constant([1, 2, 3, 4], shape=(2, 2)))
    array([[1., 2.],
           [3., 4.]], dtype=float32)
"""


# ---------------------------------------------------------------------------
# is_keras_tensor
# ---------------------------------------------------------------------------

SPECS['is_keras_tensor'] = ({}, [])

DOCS['is_keras_tensor'] = """Whether a tensor is the output of a Keras layer or ``Input``.

Keras layers mark the tensors they return with a ``_keras_history``
attribute, and this function looks for it. As in Keras 2.3.1, placeholders,
variables, constants and results of backend operations are not Keras
tensors.

Arguments:
    x: A tensor, variable or sparse tensor.

Returns:
    A ``bool``.

Raises:
    ValueError: If ``x`` is not a tensor at all (a numpy array, a list, a
        number); the message names its type.

Example:
    >>> x = K.placeholder((2,))
    >>> K.is_keras_tensor(x), K.is_keras_tensor(K.variable(1.))
    (False, False)
    >>> x._keras_history = (None, 0, 0)  # what a Keras layer sets
    >>> K.is_keras_tensor(x)
    True
"""


# ---------------------------------------------------------------------------
# is_tensor
# ---------------------------------------------------------------------------

SPECS['is_tensor'] = ({}, [])

DOCS['is_tensor'] = """Whether an object is a tensor of the engine.

Arguments:
    x: Any object.

Returns:
    A ``bool``: ``True`` for tensors, variables, placeholders and sparse
    tensors; ``False`` for numpy arrays, lists and numbers.

Example:
    >>> K.is_tensor(K.variable(1.)), K.is_tensor(K.placeholder((2,)))
    (True, True)
    >>> K.is_tensor(np.ones(2)), K.is_tensor([1.])
    (False, False)
"""


# ---------------------------------------------------------------------------
# placeholder
# ---------------------------------------------------------------------------

SPECS['placeholder'] = ({'shape': shape_arg(allow_none_dims=True, allow_tensor=False,
                                             allow_none=True),
                         'ndim': integer(0, allow_none=True), 'dtype': DT, 'sparse': BOOL,
                         'name': NAME}, [])

DOCS['placeholder'] = """Create a placeholder: a symbolic input whose value is fed at call time.

Feed it through ``function`` (or ``get_session().run``). Dimensions given as
``None`` take any size when fed. With neither ``shape`` nor ``ndim``,
TensorFlow makes a placeholder of unknown rank where Theano and CNTK raise
``ValueError``. CNTK holds integer and bool placeholders as ``floatx()``.

Arguments:
    shape: Optional tuple of ints and ``None`` (free dimensions).
    ndim: Optional ``int``, used when ``shape`` is ``None``: the shape is
        then ``(None,) * ndim``.
    dtype: The dtype name; ``None`` (default) means ``floatx()``. TensorFlow
        also takes ``'string'``.
    sparse: If ``True``, a sparse placeholder; the 2-D form
        ``(batch, dim)`` is supported on every engine.
    name: Optional ``str``.

Returns:
    A symbolic tensor of dtype ``dtype``; ``int_shape`` gives ``shape``, and
    it carries Keras 2's ``_keras_shape`` and ``_uses_learning_phase``
    (``False``).

Raises:
    TypeError: If ``shape`` is not a tuple of ints and ``None``, ``ndim`` is not an
        int, ``sparse`` is not a bool, or ``dtype`` names no dtype.
    ValueError: If ``shape`` holds a negative size or ``ndim`` is negative (on
        Theano and CNTK also when both are missing).

Example:
    >>> x = K.placeholder(shape=(None, 3))
    >>> K.int_shape(x), K.dtype(x)
    ((None, 3), 'float32')
    >>> K.int_shape(K.placeholder(ndim=2))
    (None, None)
    >>> f = K.function([x], [K.sum(x, axis=1)])
    >>> f([np.array([[1., 2., 3.]])])[0]
    array([6.], dtype=float32)
"""


# ---------------------------------------------------------------------------
# is_placeholder
# ---------------------------------------------------------------------------

SPECS['is_placeholder'] = ({}, [])

DOCS['is_placeholder'] = """Whether a tensor was made by ``placeholder``.

Arguments:
    x: Any object.

Returns:
    A ``bool``: ``True`` for dense and sparse placeholders; ``False`` for
    variables, constants, results of operations and non-tensors.

Example:
    >>> K.is_placeholder(K.placeholder((2,))), K.is_placeholder(K.variable(1.))
    (True, False)
    >>> K.is_placeholder(K.placeholder((2,)) * 2.)
    False
"""


# ---------------------------------------------------------------------------
# shape
# ---------------------------------------------------------------------------

SPECS['shape'] = ({'x': T}, [])

DOCS['shape'] = """Shape of a tensor as a symbolic 1-D integer tensor, known when the graph runs.

Unlike ``int_shape``, which gives the static shape with ``None`` for free
dimensions, this gives the actual sizes of the value being computed, so it
can be used to build shapes in the graph. On CNTK, which has no integer
tensors, the sizes come as ``floatx()`` values.

Arguments:
    x: A tensor or variable of any rank.

Returns:
    A 1-D tensor of shape ``(ndim(x),)``, dtype ``int32``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.eval(K.shape(K.zeros((2, 3)))).tolist()
    [2, 3]
    >>> x = K.placeholder((None, 3))
    >>> f = K.function([x], [K.shape(x)])
    >>> [int(d) for d in f([np.zeros((4, 3))])[0]]
    [4, 3]
"""


# ---------------------------------------------------------------------------
# int_shape
# ---------------------------------------------------------------------------

SPECS['int_shape'] = ({'x': T}, [])

DOCS['int_shape'] = """Static shape of a tensor, variable or numpy array, as a Python tuple.

Dimensions not known before the graph runs (such as the batch size of a
placeholder) are ``None``. When ``x`` has a ``_keras_shape`` attribute (Keras
layers set it on their outputs), that tuple is returned, as in Keras 2.

Arguments:
    x: A tensor, variable, sparse tensor or numpy array.

Returns:
    A tuple of ints and ``None``, of length ``ndim(x)``; ``None`` instead of
    a tuple when the rank is unknown (TensorFlow placeholders made without
    ``shape`` or ``ndim``).

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.int_shape(K.placeholder((None, 4)))
    (None, 4)
    >>> K.int_shape(K.zeros((2, 3))), K.int_shape(np.zeros((5,)))
    ((2, 3), (5,))
"""


# ---------------------------------------------------------------------------
# ndim
# ---------------------------------------------------------------------------

SPECS['ndim'] = ({'x': T}, [])

DOCS['ndim'] = """Number of axes (rank) of a tensor, variable or numpy array.

Arguments:
    x: A tensor, variable or numpy array.

Returns:
    An ``int`` (0 for a scalar); ``None`` when the rank is unknown
    (TensorFlow placeholders made without ``shape`` or ``ndim``).

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.ndim(K.placeholder((None, 3)))
    2
    >>> K.ndim(K.variable(1.))
    0
"""


# ---------------------------------------------------------------------------
# size
# ---------------------------------------------------------------------------

SPECS['size'] = ({'x': T, 'name': NAME}, [])

DOCS['size'] = """Number of elements of a tensor, as a symbolic scalar known when the graph runs.

It is the product of the entries of ``shape(x)``, so free dimensions count
with their actual size. On CNTK, which has no integer tensors, the count
comes as a ``floatx()`` value.

Arguments:
    x: A tensor or variable of any rank.
    name: Optional ``str``, a name for the operation (not used by every
        engine).

Returns:
    A scalar tensor, dtype ``int32``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, or ``name`` is not a
        string.

Example:
    >>> int(K.eval(K.size(K.zeros((2, 3)))))
    6
    >>> x = K.placeholder((None, 3))
    >>> f = K.function([x], [K.size(x)])
    >>> int(f([np.zeros((4, 3))])[0])
    12
"""


# ---------------------------------------------------------------------------
# dtype
# ---------------------------------------------------------------------------

SPECS['dtype'] = ({'x': T}, [])

DOCS['dtype'] = """Dtype of a tensor, variable or numpy array, as a string.

On CNTK, which holds only float tensors, a tensor asked for with an integer
dtype reports the float dtype that holds it (variables and placeholders asked
for as ``'bool'`` or ``'float16'`` report that dtype).

Arguments:
    x: A tensor, variable or numpy array.

Returns:
    A ``str`` such as ``'float32'``, ``'int32'`` or ``'bool'``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.dtype(K.variable(1.))
    'float32'
    >>> K.dtype(K.placeholder((2,), dtype='float64')), K.dtype(np.zeros(2))
    ('float64', 'float64')
"""


# ---------------------------------------------------------------------------
# eval
# ---------------------------------------------------------------------------

SPECS['eval'] = ({'x': evaluable()}, [])

DOCS['eval'] = """Compute the current value of a tensor and return it as a numpy array.

It works for anything that needs no placeholder feed: variables, constants
and operations on them (compiled once, then the current values of the
variables are read at each call). Tensors that depend on placeholders are
evaluated with ``function`` instead.

Arguments:
    x: A tensor or variable that depends on no placeholder.

Returns:
    A numpy array of ``x``'s shape and dtype (a sparse tensor comes back
    dense).

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.
    ValueError: If ``x`` depends on a placeholder.

Example:
    >>> v = K.variable([1., 2.])
    >>> y = v * 2.
    >>> K.eval(y)
    array([2., 4.], dtype=float32)
    >>> K.set_value(v, [3., 4.])
    >>> K.eval(y)
    array([6., 8.], dtype=float32)
"""


# ---------------------------------------------------------------------------
# zeros
# ---------------------------------------------------------------------------

SPECS['zeros'] = ({'shape': shape_arg(), 'dtype': DT, 'name': NAME}, [])

DOCS['zeros'] = """Create a variable filled with zeros.

As in Keras 2 the result is a variable (it can be updated), not a constant.

Arguments:
    shape: A tuple of non-negative ints.
    dtype: The dtype name; ``None`` (default) means ``floatx()``.
    name: Optional ``str``.

Returns:
    A variable of shape ``shape`` and dtype ``dtype``.

Raises:
    TypeError: If ``shape`` is not a tuple of ints, or ``dtype`` names no numeric or
        bool dtype.
    ValueError: If ``shape`` holds a negative size.

Example:
    >>> v = K.zeros((2, 3))
    >>> K.eval(v)
    array([[0., 0., 0.],
           [0., 0., 0.]], dtype=float32)
    >>> K.is_variable(v)
    True
"""


# ---------------------------------------------------------------------------
# ones
# ---------------------------------------------------------------------------

SPECS['ones'] = ({'shape': shape_arg(), 'dtype': DT, 'name': NAME}, [])

DOCS['ones'] = """Create a variable filled with ones.

As in Keras 2 the result is a variable (it can be updated), not a constant.

Arguments:
    shape: A tuple of non-negative ints.
    dtype: The dtype name; ``None`` (default) means ``floatx()``.
    name: Optional ``str``.

Returns:
    A variable of shape ``shape`` and dtype ``dtype``.

Raises:
    TypeError: If ``shape`` is not a tuple of ints, or ``dtype`` names no numeric or
        bool dtype.
    ValueError: If ``shape`` holds a negative size.

Example:
    >>> v = K.ones((2, 3))
    >>> K.eval(v)
    array([[1., 1., 1.],
           [1., 1., 1.]], dtype=float32)
    >>> K.is_variable(v)
    True
"""


# ---------------------------------------------------------------------------
# eye
# ---------------------------------------------------------------------------

SPECS['eye'] = ({'size': eye_size(), 'dtype': DT, 'name': NAME}, [])

DOCS['eye'] = """Create a variable holding an identity matrix.

Ones are on the main diagonal and zeros elsewhere; a rectangular matrix has
its diagonal starting at the top-left corner.

Arguments:
    size: An ``int`` ``n`` for an ``(n, n)`` matrix, or a pair
        ``(rows, cols)``.
    dtype: The dtype name; ``None`` (default) means ``floatx()``.
    name: Optional ``str``.

Returns:
    A 2-D variable of shape ``(size, size)`` or ``(rows, cols)``, dtype
    ``dtype``.

Raises:
    TypeError: If ``dtype`` names no numeric or bool dtype.
    ValueError: If ``size`` is not an int or a pair of ints.

Example:
    >>> K.eval(K.eye(2))
    array([[1., 0.],
           [0., 1.]], dtype=float32)
    >>> K.eval(K.eye((2, 3)))
    array([[1., 0., 0.],
           [0., 1., 0.]], dtype=float32)
"""


# ---------------------------------------------------------------------------
# zeros_like
# ---------------------------------------------------------------------------

SPECS['zeros_like'] = ({'x': T, 'dtype': DT, 'name': NAME}, [])

DOCS['zeros_like'] = """Tensor of zeros with the shape of another tensor.

The shape is taken when the graph runs, so free dimensions of a placeholder
are followed. The result is a tensor, not a variable.

Arguments:
    x: A tensor or variable.
    dtype: The dtype name of the result; ``None`` (default) means ``x``'s
        dtype.
    name: Optional ``str``.

Returns:
    A tensor of ``x``'s shape, dtype ``dtype``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, or ``dtype`` names no
        numeric or bool dtype.

Example:
    >>> K.eval(K.zeros_like(K.constant([[1., 2.], [3., 4.]])))
    array([[0., 0.],
           [0., 0.]], dtype=float32)
    >>> x = K.placeholder((None, 2))
    >>> K.function([x], [K.zeros_like(x)])([np.ones((3, 2))])[0].shape
    (3, 2)
"""


# ---------------------------------------------------------------------------
# ones_like
# ---------------------------------------------------------------------------

SPECS['ones_like'] = ({'x': T, 'dtype': DT, 'name': NAME}, [])

DOCS['ones_like'] = """Tensor of ones with the shape of another tensor.

The shape is taken when the graph runs, so free dimensions of a placeholder
are followed. The result is a tensor, not a variable.

Arguments:
    x: A tensor or variable.
    dtype: The dtype name of the result; ``None`` (default) means ``x``'s
        dtype.
    name: Optional ``str``.

Returns:
    A tensor of ``x``'s shape, dtype ``dtype``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, or ``dtype`` names no
        numeric or bool dtype.

Example:
    >>> K.eval(K.ones_like(K.constant([[1., 2.], [3., 4.]])))
    array([[1., 1.],
           [1., 1.]], dtype=float32)
    >>> x = K.placeholder((None, 2))
    >>> K.function([x], [K.ones_like(x)])([np.zeros((3, 2))])[0].shape
    (3, 2)
"""


# ---------------------------------------------------------------------------
# identity
# ---------------------------------------------------------------------------

SPECS['identity'] = ({'x': T, 'name': NAME}, [])

DOCS['identity'] = """New tensor with the same value as the input.

It is a distinct tensor (never a variable), useful to give a value its own
node or name in the graph.

Arguments:
    x: A tensor or variable (TensorFlow also takes a sparse tensor).
    name: Optional ``str``.

Returns:
    A tensor of ``x``'s shape and dtype.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> v = K.variable([1., 2.])
    >>> y = K.identity(v)
    >>> K.eval(y)
    array([1., 2.], dtype=float32)
    >>> K.is_variable(y)
    False
"""


# ---------------------------------------------------------------------------
# random_uniform_variable
# ---------------------------------------------------------------------------

SPECS['random_uniform_variable'] = ({'shape': shape_arg(allow_tensor=False),
                                     'low': number(allow_tensor=False),
                                     'high': number(allow_tensor=False), 'dtype': DT, 'name': NAME, 'seed': SEED}, [])

DOCS['random_uniform_variable'] = """Create a variable of samples of a uniform distribution.

The samples are drawn once, when the variable is created.

Arguments:
    shape: A tuple of non-negative ints.
    low: A ``float``, the lower bound (included).
    high: A ``float``, the upper bound (excluded).
    dtype: The dtype name; ``None`` (default) means ``floatx()``.
    name: Optional ``str``.
    seed: Optional ``int``; the same seed gives the same values on the same
        engine. ``None`` draws a seed at random.

Returns:
    A variable of shape ``shape`` and dtype ``dtype``, with values in
    ``[low, high)``.

Raises:
    TypeError: If ``shape`` is not a tuple of ints, ``low`` or ``high`` is not a
        number, ``seed`` is not an int, or ``dtype`` names no numeric or bool dtype.
    ValueError: If ``shape`` holds a negative size.

Example:
    >>> v = K.random_uniform_variable((2, 3), 0., 1., seed=1)
    >>> K.int_shape(v), K.is_variable(v)
    ((2, 3), True)
    >>> w = K.eval(v)
    >>> bool(((w >= 0.) & (w < 1.)).all())
    True
"""


# ---------------------------------------------------------------------------
# random_normal_variable
# ---------------------------------------------------------------------------

SPECS['random_normal_variable'] = ({'shape': shape_arg(allow_tensor=False),
                                    'mean': number(allow_tensor=False),
                                    'scale': number(0, allow_tensor=False), 'dtype': float_dtype(), 'name': NAME, 'seed': SEED}, [])

DOCS['random_normal_variable'] = """Create a variable of samples of a normal distribution.

The samples are drawn once, when the variable is created.

Arguments:
    shape: A tuple of non-negative ints.
    mean: A ``float``, the mean of the distribution.
    scale: A ``float``, its standard deviation.
    dtype: The dtype name; ``None`` (default) means ``floatx()``.
    name: Optional ``str``.
    seed: Optional ``int``; the same seed gives the same values on the same
        engine. ``None`` draws a seed at random.

Returns:
    A variable of shape ``shape`` and dtype ``dtype``.

Raises:
    TypeError: If ``shape`` is not a tuple of ints, ``mean`` or ``scale`` is not a
        number, ``seed`` is not an int, or ``dtype`` names no numeric or bool dtype.
    ValueError: If ``shape`` holds a negative size or ``scale`` is negative, or ``dtype`` is not a
        floating-point dtype (``'int32'``: a normal distribution is drawn in floats).

Example:
    >>> v = K.random_normal_variable((2, 3), 0., 1., seed=1)
    >>> K.int_shape(v), K.dtype(v), K.is_variable(v)
    ((2, 3), 'float32', True)
    >>> bool(np.isfinite(K.eval(v)).all())
    True
"""


# ---------------------------------------------------------------------------
# count_params
# ---------------------------------------------------------------------------

SPECS['count_params'] = ({'x': T}, [known_shape])

DOCS['count_params'] = """Number of scalars in a tensor or variable, from its static shape.

Keras uses it to count the weights of a model.

Arguments:
    x: A tensor or variable whose static shape is fully known (usually a
        variable).

Returns:
    An ``int``: the product of the dimensions of ``int_shape(x)`` (1 for a
    scalar).

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.
    ValueError: If a dimension of the static shape is unknown (``None``).

Example:
    >>> K.count_params(K.zeros((2, 3)))
    6
    >>> K.count_params(K.variable(1.))
    1
"""


# ---------------------------------------------------------------------------
# cast
# ---------------------------------------------------------------------------

SPECS['cast'] = ({'x': T, 'dtype': dtype(allow_none=False)}, [])

DOCS['cast'] = """Convert a tensor to another dtype.

Casting floats to integers drops the fractional part (rounding toward
zero). CNTK has no integer tensors: there an integer cast rounds the same
way but the result stays a float tensor.

Arguments:
    x: A tensor, variable or numpy value.
    dtype: The target dtype name, such as ``'float16'``, ``'float64'``,
        ``'int32'`` or ``'bool'``.

Returns:
    A tensor of ``x``'s shape and dtype ``dtype``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, or ``dtype`` is ``None``
        or names no numeric or bool dtype.

Example:
    >>> K.eval(K.cast(K.constant([1.7, -1.7, 2.5]), 'int32')).tolist()
    [1, -1, 2]
    >>> K.dtype(K.cast(K.constant([1.]), 'float64'))
    'float64'
"""
