"""The one docstring of every public API name (and of the Keras 1 aliases).

``keras_backend.api.install`` attaches ``DOCS[name]`` to each adapter's
function at import, appending the adapter's own short engine note (which
engine op does the work, any engine limit) under ``Note:``. The format is
Keras' sections in Google style (read by Sphinx napoleon): what it computes,
``Arguments:`` with shapes and dtypes, ``Returns:``, ``Raises:``, ``Example:``.
Every example runs as a test on every engine (``tests/test_doc_examples.py``)
with ``K`` (the adapter) and ``np`` (numpy) in scope. Names are in the order
of ``api.SECTIONS``.
"""

import textwrap

from keras_backend import engines

DOCS = {}


def _backend_names_text():
    """The backend names of the engine table in words, each name served by several
    configurations followed by them: ``'theano'`` (PyTensor or Theano 1.0.5)."""
    parts = []
    for name in engines.names():
        rows = engines.configurations(name)
        text = '``%r``' % name
        if len(rows) > 1:
            text += ' (%s)' % ' or '.join(row.release for row in rows)
        parts.append(text)
    return ', '.join(parts[:-1]) + ' or ' + parts[-1]


# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------

DOCS['backend'] = """Name of the engine adapter in use.

Keras 2 code reads this string to take engine-specific paths (for example
the kernel flipping of Theano convolutions).

Returns:
""" + textwrap.fill('A ``str``, one of the backend names of the engine table '
                    '(``keras_backend.engines``): %s.' % _backend_names_text(),
                    width=76, initial_indent='    ', subsequent_indent='    ') + """

Example:
    >>> K.backend() in """ + repr(engines.names()) + """
    True
"""

DOCS['epsilon'] = """Small positive number that numeric code adds to avoid dividing by zero.

Losses, metrics, normalisation and optimizers use it as a fuzz factor. The
value comes from the ``epsilon`` key of ``keras.json`` (``1e-7`` by default)
and can be changed for the whole process with ``set_epsilon``.

Returns:
    A Python ``float``.

Example:
    >>> K.epsilon()
    1e-07
"""

DOCS['set_epsilon'] = """Change the fuzz factor that ``epsilon()`` returns, for the whole process.

Only code that reads ``epsilon()`` afterwards sees the new value; tensors
built before keep the value they were built with.

Arguments:
    e: A finite, positive ``int`` or ``float`` (``bool`` is refused); it is
        stored as a Python ``float``.

Raises:
    TypeError: If ``e`` is not a number (a ``bool`` included).
    ValueError: If ``e`` is not finite and positive.

Example:
    >>> old = K.epsilon()
    >>> K.set_epsilon(1e-5)
    >>> K.epsilon()
    1e-05
    >>> K.set_epsilon(old)
"""

DOCS['floatx'] = """Name of the default float dtype.

Every function with a ``dtype=None`` argument (``variable``, ``constant``,
``placeholder``, ``zeros``, the random functions...) creates tensors of this
dtype. The value comes from the ``floatx`` key of ``keras.json``
(``'float32'`` by default) and can be changed with ``set_floatx``.

Returns:
    A ``str``: ``'float16'``, ``'float32'`` or ``'float64'``.

Example:
    >>> K.floatx()
    'float32'
    >>> K.dtype(K.variable(1.)) == K.floatx()
    True
"""

DOCS['set_floatx'] = """Change the default float dtype that ``floatx()`` returns.

Tensors created afterwards with ``dtype=None`` take the new dtype; existing
ones keep theirs.

Arguments:
    floatx: ``'float16'``, ``'float32'`` or ``'float64'``.

Raises:
    TypeError: If ``floatx`` is not a string.
    ValueError: If ``floatx`` is any other value (integer dtypes included).

Example:
    >>> old = K.floatx()
    >>> K.set_floatx('float64')
    >>> K.floatx(), K.dtype(K.variable(1.))
    ('float64', 'float64')
    >>> K.set_floatx(old)
"""

DOCS['cast_to_floatx'] = """Convert a numpy value to a numpy array of the default float dtype.

This works on numpy data only, not on tensors: use ``cast`` for those.

Arguments:
    x: A numpy array, a (nested) list of numbers or a scalar.

Returns:
    A numpy array (not a tensor) of ``x``'s shape and dtype ``floatx()``; a
    scalar gives a 0-d array.

Raises:
    TypeError: If ``x`` is not numeric (``None``, a string, a list holding other
        objects).
    ValueError: If numpy cannot read ``x`` as an array (ragged lists).

Example:
    >>> K.cast_to_floatx([1, 2])
    array([1., 2.], dtype=float32)
    >>> K.cast_to_floatx(3).shape
    ()
"""

DOCS['image_data_format'] = """Default position of the channels axis in image tensors.

Image functions (convolutions, pooling, padding, ``resize_images``,
``bias_add``...) use it when their ``data_format`` argument is ``None``:
``'channels_last'`` means ``(batch, rows, cols, channels)`` and
``'channels_first'`` means ``(batch, channels, rows, cols)`` (and likewise for
1-D and 3-D data). The value comes from the ``image_data_format`` key of
``keras.json`` (``'channels_last'`` by default).

Returns:
    A ``str``: ``'channels_last'`` or ``'channels_first'``.

Example:
    >>> K.image_data_format()
    'channels_last'
"""

DOCS['set_image_data_format'] = """Change the default that ``image_data_format()`` returns.

Arguments:
    data_format: ``'channels_first'`` or ``'channels_last'`` (exactly these
        strings).

Raises:
    TypeError: If ``data_format`` is not a string.
    ValueError: If ``data_format`` is any other value.

Example:
    >>> old = K.image_data_format()
    >>> K.set_image_data_format('channels_first')
    >>> K.image_data_format()
    'channels_first'
    >>> K.set_image_data_format(old)
"""

DOCS['normalize_data_format'] = """Check a ``data_format`` argument; ``None`` gives the default.

The image functions call it on their ``data_format`` argument.

Arguments:
    value: ``None`` (meaning ``image_data_format()``), ``'channels_first'``
        or ``'channels_last'``; upper-case letters are accepted.

Returns:
    A ``str``: ``'channels_first'`` or ``'channels_last'``, lower-case.

Raises:
    TypeError: If ``value`` is neither ``None`` nor a string.
    ValueError: If ``value`` is not one of the two formats.

Example:
    >>> K.normalize_data_format('Channels_First')
    'channels_first'
    >>> K.normalize_data_format(None) == K.image_data_format()
    True
"""

DOCS['image_dim_ordering'] = """Default channels position in its Keras 1 spelling.

Kept for old code; it reads the same setting as ``image_data_format()``.

Returns:
    A ``str``: ``'th'`` when ``image_data_format()`` is ``'channels_first'``,
    ``'tf'`` when it is ``'channels_last'``.

Example:
    >>> K.image_dim_ordering()
    'tf'
    >>> K.image_dim_ordering() == ('th' if K.image_data_format() == 'channels_first' else 'tf')
    True
"""

DOCS['set_image_dim_ordering'] = """Change the default channels position (Keras 1 spelling).

Kept for old code: ``'th'`` sets ``image_data_format()`` to
``'channels_first'`` and ``'tf'`` sets it to ``'channels_last'``.

Arguments:
    dim_ordering: ``'th'`` or ``'tf'``.

Raises:
    TypeError: If ``dim_ordering`` is not a string.
    ValueError: If ``dim_ordering`` is any other value.

Example:
    >>> old = K.image_data_format()
    >>> K.set_image_dim_ordering('th')
    >>> K.image_data_format(), K.image_dim_ordering()
    ('channels_first', 'th')
    >>> K.set_image_data_format(old)
"""


# ---------------------------------------------------------------------------
# Session and learning phase
# ---------------------------------------------------------------------------

DOCS['get_uid'] = """Next value of a counter kept per prefix string.

Keras uses it to give default names to layers (``dense_1``, ``dense_2``...).
Each prefix counts separately, from 1, until ``reset_uids()`` or
``clear_session()`` starts every counter again.

Arguments:
    prefix: A ``str``, ``''`` by default.

Returns:
    An ``int``: 1 on the first call with ``prefix``, then 2, 3...

Raises:
    TypeError: If ``prefix`` is not a string.

Example:
    >>> n = K.get_uid('my_block')
    >>> K.get_uid('my_block') - n
    1
"""

DOCS['reset_uids'] = """Restart every ``get_uid`` counter, so that each prefix counts from 1 again.

Example:
    >>> K.get_uid('my_block') >= 1
    True
    >>> K.reset_uids()
    >>> K.get_uid('my_block'), K.get_uid('my_block')
    (1, 2)
"""

DOCS['clear_session'] = """Start over with fresh backend state.

It restarts the ``get_uid`` counters, drops a learning phase fixed with
``set_learning_phase`` (``learning_phase()`` is symbolic again) and forgets
what the adapter caches (compiled evaluation functions; on TensorFlow also
the symbolic graph and the object set with ``set_session``). Keras calls it
between models to free memory. Placeholders, symbolic tensors and functions
made before should not be used afterwards (on TensorFlow they belong to the
dropped graph); variables keep their values on every engine.

Example:
    >>> v = K.variable([1., 2.])
    >>> K.set_learning_phase(1)
    >>> K.get_uid('my_block') >= 1
    True
    >>> K.clear_session()
    >>> K.get_uid('my_block')
    1
    >>> K.is_tensor(K.learning_phase())
    True
    >>> K.eval(v)
    array([1., 2.], dtype=float32)
"""

DOCS['get_session'] = """Object that evaluates tensors, like a TensorFlow session.

The words are TensorFlow's, but every adapter offers the same contract: the
object returned has a method ``run(fetches, feed_dict=None)`` where
``fetches`` is one tensor or a list of tensors and ``feed_dict`` maps
placeholders to numpy values; it returns a numpy array for one tensor and a
list of them for a list. It is the object last given to ``set_session``, or
else one made by the adapter (TensorFlow 2 runs eagerly and Theano and CNTK
have no sessions, so this is a small session-like object that compiles and
runs the fetches as ``function`` does). Variables need no initialisation through it: every engine
initialises them when they are created.

Returns:
    An object with a ``run(fetches, feed_dict=None)`` method.

Example:
    >>> sess = K.get_session()
    >>> x = K.placeholder((2,))
    >>> sess.run(x * 2., {x: np.array([1., 2.])})
    array([2., 4.], dtype=float32)
    >>> sess.run([x + 1., x - 1.], {x: np.array([1., 2.])})
    [array([2., 3.], dtype=float32), array([0., 1.], dtype=float32)]
"""

DOCS['set_session'] = """Replace the object that ``get_session()`` returns.

It is returned until the next ``set_session`` (on TensorFlow,
``clear_session()`` also drops it). On TensorFlow a
``tf.compat.v1.Session`` is accepted, but this backend's variables are eager
and a graph-mode session cannot read them.

Arguments:
    session: Any object with a callable ``run(fetches, feed_dict=None)``
        method (see ``get_session``).

Raises:
    ValueError: If ``session`` has no ``run`` method.

Example:
    >>> sess = K.get_session()
    >>> K.set_session(sess)
    >>> K.get_session() is sess
    True
"""

DOCS['manual_variable_initialization'] = """Set Keras' flag for initialising variables by hand.

In Keras 2 on TensorFlow 1, ``True`` stopped the backend from running the
initialisers of new variables, leaving that to the user. Every engine here
initialises a variable when ``variable`` creates it, so the flag is only
recorded and changes nothing; code that sets it keeps working.

Arguments:
    value: A ``bool``; ``False`` is the default state.

Raises:
    TypeError: If ``value`` is not a bool (or 0/1).

Example:
    >>> K.manual_variable_initialization(True)
    >>> K.eval(K.variable([1., 2.]))
    array([1., 2.], dtype=float32)
    >>> K.manual_variable_initialization(False)
"""

DOCS['learning_phase'] = """Flag telling whether a graph runs in training (1) or test (0) mode.

Layers such as dropout and batch normalisation build both behaviours with
``in_train_phase`` and let this flag choose. Unless a value was fixed with
``set_learning_phase`` or ``learning_phase_scope``, the flag is a symbolic
scalar input: list it among the inputs of ``function`` and feed ``0`` or
``1``; a function whose graph uses it without listing it runs in test mode.
The same symbolic flag is returned until ``clear_session()``. Its dtype is
the engine's (``bool`` on TensorFlow, ``uint8`` on Theano, ``float32`` on
CNTK); only 0 and 1 are meant to be fed.

Returns:
    The ``int`` 0 or 1 when a value is fixed, else the symbolic scalar flag.

Example:
    >>> x = K.placeholder((2,))
    >>> f = K.function([x, K.learning_phase()], [K.in_train_phase(x * 2., x)])
    >>> f([np.array([1., 2.]), 1])[0]
    array([2., 4.], dtype=float32)
    >>> f([np.array([1., 2.]), 0])[0]
    array([1., 2.], dtype=float32)
"""

DOCS['set_learning_phase'] = """Fix the learning phase to a Python int for the whole process.

From then on ``learning_phase()`` returns ``value``, and graphs built
afterwards (``in_train_phase``, ``dropout``...) take the training or test
branch when they are built, with no flag left to feed. The setting stays
until ``clear_session()``; ``learning_phase_scope`` changes it for one block
only.

Arguments:
    value: ``0`` (test) or ``1`` (train); ``False`` and ``True`` mean the same.

Raises:
    TypeError: If ``value`` is not an int or a bool.
    ValueError: If ``value`` is not 0 or 1 (the setting is left as it was).

Example:
    >>> K.set_learning_phase(1)
    >>> K.learning_phase()
    1
    >>> K.eval(K.in_train_phase(K.constant([2.]), K.constant([1.])))
    array([2.], dtype=float32)
    >>> K.clear_session()  # back to the symbolic learning phase
    >>> K.is_tensor(K.learning_phase())
    True
"""

DOCS['learning_phase_scope'] = """Context manager fixing the learning phase in a block.

Inside the block ``learning_phase()`` returns ``value`` (as after
``set_learning_phase``); on leaving it, even by an exception, the previous
setting (a fixed int or the symbolic flag) is back.

Arguments:
    value: ``0`` (test) or ``1`` (train); ``False`` and ``True`` mean the same.

Yields:
    ``value``.

Raises:
    TypeError: If ``value`` is not an int or a bool.
    ValueError: If ``value`` is not 0 or 1.

Example:
    >>> with K.learning_phase_scope(1) as phase:
    ...     y = K.in_train_phase(K.constant([2.]), K.constant([1.]))
    ...     print(phase, K.learning_phase())
    1 1
    >>> K.eval(y)
    array([2.], dtype=float32)
    >>> K.is_tensor(K.learning_phase())
    True
"""

DOCS['name_scope'] = """Context manager prefixing the names of what a block creates.

Variables (and, depending on the engine, constants, placeholders or all
ops) created inside get names starting with ``name/``; nested scopes join
their names with ``/``. Keras saves and loads weights by these names, so
the layers of a nested model get distinct ones. TensorFlow adds its own
suffix to variable names (``:0``).

Arguments:
    name: A ``str``, the scope name.

Yields:
    The scope name (TensorFlow's form ends with ``/``).

Raises:
    TypeError: If ``name`` is not a string.

Example:
    >>> with K.name_scope('block1'):
    ...     v = K.variable(0., name='kernel')
    >>> v.name.startswith('block1/kernel')
    True
"""


# ---------------------------------------------------------------------------
# Tensors and variables
# ---------------------------------------------------------------------------

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
    ValueError: If ``shape`` holds a negative size or ``scale`` is negative.

Example:
    >>> v = K.random_normal_variable((2, 3), 0., 1., seed=1)
    >>> K.int_shape(v), K.dtype(v), K.is_variable(v)
    ((2, 3), 'float32', True)
    >>> bool(np.isfinite(K.eval(v)).all())
    True
"""

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


# ---------------------------------------------------------------------------
# Variable updates
# ---------------------------------------------------------------------------

DOCS['update'] = """Update operation ``x <- new_x``, run by a function.

As in Keras 2, building it changes nothing: pass it in the ``updates`` list
of ``function`` (optimizers return such lists) and each call of the
function performs the assignment after computing its outputs. A symbolic
``new_x`` (such as ``v * 3.``) is computed again at each call. To set a
value at once, use ``set_value``.

Arguments:
    x: A variable.
    new_x: A tensor or numpy value of ``x``'s shape; it is cast to ``x``'s
        dtype. A symbolic ``new_x`` is read when the function runs, so
        ``update(m, 0.5 * m + x)`` uses the current ``m`` at every call.

Returns:
    An update operation for ``function(..., updates=[...])`` (its form
    depends on the engine).

Raises:
    TypeError: If ``x`` is not a variable, or ``new_x`` is not a tensor or numeric
        value.
    ValueError: If ``new_x`` (unless a scalar) does not have the shape of ``x``.

Example:
    >>> v = K.variable([1., 2.])
    >>> f = K.function([], [], updates=[K.update(v, v * 3.)])
    >>> K.get_value(v)  # nothing has run yet
    array([1., 2.], dtype=float32)
    >>> _ = f([])
    >>> _ = f([])
    >>> K.get_value(v)
    array([ 9., 18.], dtype=float32)
"""

DOCS['update_add'] = """Update operation ``x <- x + increment``, run by a function.

Like ``update``, it acts only when passed in the ``updates`` list of
``function``, once per call.

Arguments:
    x: A variable.
    increment: A tensor or numpy value of ``x``'s shape.

Returns:
    An update operation for ``function(..., updates=[...])``.

Raises:
    TypeError: If ``x`` is not a variable, or ``increment`` is not a tensor or numeric
        value.
    ValueError: If ``increment`` (unless a scalar) does not have the shape of ``x``.

Example:
    >>> v = K.variable([1., 2.])
    >>> x = K.placeholder((2,))
    >>> f = K.function([x], [], updates=[K.update_add(v, x)])
    >>> _ = f([np.array([0.5, 1.])])
    >>> K.get_value(v)
    array([1.5, 3. ], dtype=float32)
"""

DOCS['update_sub'] = """Update operation ``x <- x - decrement``, run by a function.

Like ``update``, it acts only when passed in the ``updates`` list of
``function``, once per call.

Arguments:
    x: A variable.
    decrement: A tensor or numpy value of ``x``'s shape.

Returns:
    An update operation for ``function(..., updates=[...])``.

Raises:
    TypeError: If ``x`` is not a variable, or ``decrement`` is not a tensor or numeric
        value.
    ValueError: If ``decrement`` (unless a scalar) does not have the shape of ``x``.

Example:
    >>> v = K.variable([5., 5.])
    >>> f = K.function([], [], updates=[K.update_sub(v, K.constant([1., 2.]))])
    >>> _ = f([])
    >>> _ = f([])
    >>> K.get_value(v)
    array([3., 1.], dtype=float32)
"""

DOCS['moving_average_update'] = """Update operation moving a variable toward a value.

Each run performs ``x <- x * momentum + value * (1 - momentum)`` with the
current ``x`` (no zero-debiasing); batch normalisation keeps its moving
mean and variance this way. Like ``update``, it acts only when passed in
the ``updates`` list of ``function``, once per call.

Arguments:
    x: A variable.
    value: A tensor or numpy value of ``x``'s shape.
    momentum: A ``float``, usually in ``[0, 1]``: the weight kept by the
        old value.

Returns:
    An update operation for ``function(..., updates=[...])``.

Raises:
    TypeError: If ``x`` is not a variable, ``value`` is not a tensor or numeric
        value, or ``momentum`` is not a number.
    ValueError: If ``value`` does not have the shape of ``x``.

Example:
    >>> v = K.variable([0., 4.])
    >>> x = K.placeholder((2,))
    >>> f = K.function([x], [], updates=[K.moving_average_update(v, x, 0.5)])
    >>> _ = f([np.array([2., 2.])])
    >>> K.get_value(v)
    array([1., 3.], dtype=float32)
    >>> _ = f([np.array([2., 2.])])
    >>> K.get_value(v)
    array([1.5, 2.5], dtype=float32)
"""


# ---------------------------------------------------------------------------
# Math
# ---------------------------------------------------------------------------

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
        outside the rows of ``reference``.

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


# ---------------------------------------------------------------------------
# Shape manipulation
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# Values, functions and gradients
# ---------------------------------------------------------------------------

DOCS['get_value'] = """Current value of a variable, as a numpy array.

A tensor that is not a variable is evaluated, as ``eval`` does (it must not
depend on a placeholder).

Arguments:
    x: A variable (or a tensor that needs no feed).

Returns:
    A numpy array of ``x``'s shape and dtype.

Raises:
    TypeError: If ``x`` is ``None``, a string or a dict.

Example:
    >>> v = K.variable([[1., 2.], [3., 4.]])
    >>> K.get_value(v)
    array([[1., 2.],
           [3., 4.]], dtype=float32)
"""

DOCS['batch_get_value'] = """Current values of several variables, as a list of numpy arrays.

Arguments:
    ops: A list of variables (or of tensors computable without feeding
        placeholders).

Returns:
    A list of numpy arrays, one per entry of ``ops``, in the same order, each
    with that entry's shape and dtype.

Raises:
    TypeError: If ``ops`` is not a list of tensors.

Example:
    >>> a = K.variable([1., 2.])
    >>> b = K.variable(3.)
    >>> K.batch_get_value([a, b])
    [array([1., 2.], dtype=float32), array(3., dtype=float32)]
"""

DOCS['set_value'] = """Assign a numpy value to a variable.

The assignment happens at once, outside of any graph; ``value`` is converted
to the variable's dtype.

Arguments:
    x: The variable to overwrite.
    value: A numpy array, nested list or scalar with exactly the shape of
        ``x``.

Raises:
    TypeError: If ``x`` is not a variable, or ``value`` is not numeric.
    ValueError: If the shape of ``value`` differs from the variable's shape.

Example:
    >>> v = K.variable([1., 2.])
    >>> K.set_value(v, np.array([5., 6.]))
    >>> K.get_value(v)
    array([5., 6.], dtype=float32)
"""

DOCS['batch_set_value'] = """Assign numpy values to several variables at once.

Every pair is checked before any value is written, so a bad pair leaves all
the variables unchanged.

Arguments:
    tuples: A list of ``(variable, value)`` pairs; each value is a numpy
        array, nested list or scalar with the shape of its variable.

Raises:
    TypeError: If ``tuples`` is not a list of ``(variable, value)`` pairs, an entry's
        first item is not a variable, or a value is not numeric.
    ValueError: If a value's shape differs from its variable's.

Example:
    >>> a = K.variable([0., 0.])
    >>> b = K.variable(0.)
    >>> K.batch_set_value([(a, [1., 2.]), (b, 3.)])
    >>> K.batch_get_value([a, b])
    [array([1., 2.], dtype=float32), array(3., dtype=float32)]
"""

DOCS['get_variable_shape'] = """Static shape of a variable, as a tuple of integers.

The same as ``int_shape``; kept for compatibility with older Keras code.

Arguments:
    x: A variable (or any tensor).

Returns:
    A tuple with one entry per axis: an integer, or ``None`` for an axis
    whose size is only known at run time.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.get_variable_shape(K.variable(np.zeros((2, 3))))
    (2, 3)
"""

DOCS['print_tensor'] = """Return a tensor equal to ``x`` that prints ``message`` and its value.

The printing is a side effect of computing the returned tensor: it happens
each time a graph containing it is evaluated (at once for an eager value on
TensorFlow), through the engine's own output stream, so its exact layout
differs per engine. Use the returned tensor in place of ``x``: ``x`` itself
prints nothing.

Arguments:
    x: A tensor of any shape and dtype.
    message: A string printed before the value (default ``''``).

Returns:
    A tensor with the shape, dtype and values of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor, or ``message`` is not a string.

Example:
    >>> x = K.placeholder(shape=(None, 3))
    >>> y = K.print_tensor(x, message='x is: ')
    >>> K.ndim(y), K.dtype(y)
    (2, 'float32')
"""

DOCS['function'] = """Build a callable that computes ``outputs`` from fed ``inputs``.

The graph is compiled once. The returned function takes one list of numpy
values, one per entry of ``inputs`` in the same order, computes every output
and then applies the ``updates``, so the outputs see the variables' values
from before this call's updates. The learning phase (``learning_phase()``)
may be listed among the inputs to feed 0 (test) or 1 (training); a graph
that uses it without listing it runs in test mode.

Arguments:
    inputs: A list of placeholders.
    outputs: A tensor, or a list/tuple of tensors, computed from ``inputs``
        and variables.
    updates: ``None`` or a list of updates (results of ``update``,
        ``update_add``, ``update_sub``, ``moving_average_update``, or
        ``(variable, new_value)`` pairs), applied after the outputs are
        computed, on every call.
    **kwargs: ``name`` (a string) on every engine. TensorFlow also takes
        ``fetches`` (more tensors or ops run at each call, their results
        dropped) and ``feed_dict`` (more ``{placeholder: value}`` fed at
        each call); Theano takes the keywords of its own ``function``
        (``mode``, ``givens``, ``on_unused_input``...). Any other keyword
        raises ``ValueError`` naming it.

Returns:
    A callable taking a list (or tuple) of numpy arrays and returning a
    list of numpy arrays, one per output, when ``outputs`` is a list or
    tuple; a single array when ``outputs`` is a single tensor.

Raises:
    TypeError: If ``inputs`` is not a list of tensors, an output is not a tensor, or
        ``updates`` is not a list; at call time, if the values are not given as a
        list or one of them is not numeric.
    ValueError: If a keyword argument is not one the engine accepts; at call time,
        if the number of values differs from ``inputs``, a value's rank or known
        sizes differ from its placeholder's, or the engine fails to compute (its
        error is re-raised as a ``ValueError`` naming the function).

Example:
    >>> x = K.placeholder(shape=(None, 2))
    >>> total = K.variable(0.)
    >>> f = K.function([x], [K.sum(x)], updates=[K.update_add(total, 1.)])
    >>> f([np.ones((3, 2))])
    [array(6., dtype=float32)]
    >>> f([np.ones((1, 2))])
    [array(2., dtype=float32)]
    >>> float(K.get_value(total))
    2.0
"""

DOCS['gradients'] = """Symbolic gradients of a scalar loss with respect to variables.

Arguments:
    loss: A scalar tensor built with backend operations from variables
        and/or placeholders.
    variables: A list of variables or tensors that ``loss`` is computed
        from (a single one is taken as a list of one).

Returns:
    A list of tensors, one per entry of ``variables``, each with that
    entry's shape and dtype; zeros for an entry that ``loss`` does not
    depend on.

Raises:
    TypeError: If ``loss`` is not a tensor, or ``variables`` holds something that is
        not a tensor.
    ValueError: If ``loss`` is an eager (already computed) tensor on TensorFlow,
        which depends on no variable.

Example:
    >>> w = K.variable([1., 2., 3.])
    >>> grads = K.gradients(K.sum(K.square(w)), [w])
    >>> K.eval(grads[0])
    array([2., 4., 6.], dtype=float32)
"""

DOCS['stop_gradient'] = """Block gradients from flowing back through tensors.

The values pass unchanged, but gradients do not flow back through them:
``gradients`` treats the result as a constant.

Arguments:
    variables: A tensor, or a list of tensors.

Returns:
    A tensor (or a list of tensors) with the same shapes, dtypes and values.

Raises:
    TypeError: If ``variables`` is not a tensor or a list of tensors.

Example:
    >>> w = K.variable([1., 2.])
    >>> loss = K.sum(K.stop_gradient(w) * w)
    >>> K.eval(K.gradients(loss, [w])[0])
    array([1., 2.], dtype=float32)
"""

DOCS['control_dependencies'] = """Context manager: ops built inside run after ``control_inputs``.

This is how Keras 2 code reads a variable after an update of it in the same
step (stateful metrics do this). Tensors such as ``identity(v)`` built inside
the block read the value written by the updates listed in ``control_inputs``
once the update runs in the same ``function`` (listed among its
``updates``). Theano and CNTK have no control edges and emulate this for
updates only (CNTK for ``identity`` results only); other tensors in
``control_inputs`` have no effect there.

Arguments:
    control_inputs: ``None`` or a list of updates (results of ``update``,
        ``update_add``...) and tensors.

Returns:
    A context manager.

Example:
    >>> total = K.variable(0.)
    >>> x = K.placeholder(shape=(None,))
    >>> up = K.update_add(total, K.sum(x))
    >>> with K.control_dependencies([up]):
    ...     result = K.identity(total)
    >>> f = K.function([x], [result], updates=[up])
    >>> f([np.ones(3)])
    [array(3., dtype=float32)]
    >>> f([np.ones(2)])
    [array(5., dtype=float32)]
"""

DOCS['symbolic'] = """Decorator running a function while building a symbolic graph.

On TensorFlow the decorated function builds its operations in the backend's
graph (as placeholders do) rather than eagerly. Theano and CNTK are always
symbolic, so there it returns the function unchanged.

Arguments:
    func: A function.

Returns:
    A function with the same arguments and results as ``func``.

Raises:
    TypeError: If ``func`` is not callable.

Example:
    >>> @K.symbolic
    ... def double(x):
    ...     return x * 2.
    >>> x = K.placeholder(shape=(2,))
    >>> f = K.function([x], [double(x)])
    >>> f([np.array([1., 2.])])
    [array([2., 4.], dtype=float32)]
"""

DOCS['eager'] = """Decorator running a function eagerly, even while a graph is built.

On TensorFlow the decorated function runs outside any graph being built, so
its operations compute values at once. Theano and CNTK have no eager mode,
so there it returns the function unchanged.

Arguments:
    func: A function.

Returns:
    A function with the same arguments and results as ``func``.

Raises:
    TypeError: If ``func`` is not callable.

Example:
    >>> @K.eager
    ... def current(v):
    ...     return K.get_value(v)
    >>> current(K.variable([1., 2.]))
    array([1., 2.], dtype=float32)
"""


# ---------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------

DOCS['rnn'] = """Run a step function over the time axis of a tensor.

For each time step ``t`` (axis 1 of ``inputs``) the step function is called
as ``step_function(inputs[:, t], states + constants)`` and returns the step's
output and its new states, which feed the next step. The outputs of all
steps are stacked along the time axis.

Arguments:
    step_function: A function ``(x_t, states) -> (output_t, new_states)``
        written with backend operations. ``x_t`` has shape
        ``(batch, ...)`` (``inputs`` without the time axis), ``states`` is
        the list of current states followed by ``constants``; ``output_t``
        has shape ``(batch, ...)`` and ``new_states`` is a list of tensors
        with the shapes of ``initial_states``.
    inputs: A tensor of shape ``(batch, time, ...)``, rank 3 or more.
    initial_states: A list of tensors of shape ``(batch, ...)``, the
        states before the first step.
    go_backwards: If ``True``, walk the time axis in reverse; ``outputs``
        are then in walking order. Default ``False``.
    mask: ``None`` or a tensor of shape ``(batch, time)`` (or
        ``(batch, time, 1)``), bool or 0/1. A masked step keeps the
        previous states and repeats the previous output (zeros before the
        first step).
    constants: ``None`` or a list of tensors passed to every step after
        the states.
    unroll: If ``True``, unroll the loop into the graph; this needs a
        known number of time steps. Default ``False``.
    input_length: ``None`` or the (static) number of time steps, used when
        the time axis of ``inputs`` is unknown and ``unroll`` is ``True``.

Returns:
    A tuple ``(last_output, outputs, new_states)``: ``last_output`` is the
    output of the last step, shape ``(batch, ...)``; ``outputs`` has shape
    ``(batch, time, ...)``; ``new_states`` is the list of states after the
    last step. Dtypes are those the step function produces. When the steps
    use the symbolic learning phase (e.g. dropout inside the step),
    ``last_output`` and ``outputs`` carry ``_uses_learning_phase = True``,
    which Keras 2 reads.

Raises:
    TypeError: If ``step_function`` is not callable, ``initial_states`` is not a
        list, or ``go_backwards`` or ``unroll`` is not a bool.
    ValueError: If ``inputs`` has rank below 3, ``mask`` does not match its
        ``(batch, time)``, ``step_function`` returns another number of states, or
        ``unroll`` is ``True`` with an unknown number of time steps.

Example:
    >>> def step(x_t, states):
    ...     total = states[0] + x_t
    ...     return total, [total]
    >>> inputs = K.constant([[[1.], [2.], [3.]]])       # (batch=1, time=3, 1)
    >>> last, outputs, states = K.rnn(step, inputs, [K.zeros((1, 1))])
    >>> K.eval(last)
    array([[6.]], dtype=float32)
    >>> K.eval(outputs)[0, :, 0]
    array([1., 3., 6.], dtype=float32)
    >>> K.eval(states[0])
    array([[6.]], dtype=float32)
"""

DOCS['switch'] = """Choose between two tensors according to a condition.

With a scalar condition the whole of ``then_expression`` or of
``else_expression`` is chosen. A condition with axes chooses element by
element; if it has fewer axes than the expressions, size-1 axes are added
at its end so that it broadcasts.

Arguments:
    condition: A scalar tensor or Python bool, or a bool (or 0/1) tensor of
        rank not above that of the expressions.
    then_expression: A tensor, or a callable returning one, used where
        ``condition`` is true.
    else_expression: A tensor, or a callable returning one, used where
        ``condition`` is false; the same shape and dtype as
        ``then_expression``.

Returns:
    A tensor with the shape and dtype of the expressions.

Raises:
    TypeError: If ``condition`` is not a tensor or numeric value, or an expression is
        neither a tensor nor a callable.
    ValueError: If ``condition`` has more axes than the expressions.

Example:
    >>> x = K.constant([-1., 2., -3.])
    >>> K.eval(K.switch(K.greater(x, 0.), x, -x))
    array([1., 2., 3.], dtype=float32)
    >>> K.eval(K.switch(True, lambda: x * 2., lambda: x))
    array([-2.,  4., -6.], dtype=float32)
"""

DOCS['in_train_phase'] = """Select ``x`` in the training phase and ``alt`` in the test phase.

With ``training=None`` the phase is ``learning_phase()``: the value fixed by
``set_learning_phase``, or else the symbolic learning phase, fed as an input
of ``function`` (0 = test, 1 = training). A tensor chosen by the symbolic
phase has the attribute ``_uses_learning_phase`` set to ``True``, which
Keras 2's engine reads.

Arguments:
    x: A tensor, or a callable returning one, for the training phase.
    alt: A tensor, or a callable returning one, for the test phase; the
        same shape and dtype as ``x``.
    training: ``None`` (use ``learning_phase()``), a Python 0/1 or bool
        (choose at once) or a scalar tensor.

Returns:
    ``x`` or ``alt`` (or a tensor choosing between them when the phase is
    symbolic), with their shape and dtype.

Raises:
    TypeError: If ``x`` or ``alt`` is neither a tensor nor a callable, or
        ``training`` is not ``None``, 0, 1, a bool or a tensor.

Example:
    >>> x = K.constant([1., 2.])
    >>> K.eval(K.in_train_phase(x * 10., x, training=1))
    array([10., 20.], dtype=float32)
    >>> K.eval(K.in_train_phase(x * 10., x, training=0))
    array([1., 2.], dtype=float32)
    >>> p = K.placeholder(shape=(2,))
    >>> f = K.function([p, K.learning_phase()], [K.in_train_phase(p * 10., p)])
    >>> f([np.array([1., 2.]), 1])
    [array([10., 20.], dtype=float32)]
"""

DOCS['in_test_phase'] = """Select ``x`` in the test phase and ``alt`` in the training phase.

The mirror of ``in_train_phase``: ``in_test_phase(x, alt)`` is
``in_train_phase(alt, x)``.

Arguments:
    x: A tensor, or a callable returning one, for the test phase.
    alt: A tensor, or a callable returning one, for the training phase;
        the same shape and dtype as ``x``.
    training: ``None`` (use ``learning_phase()``), a Python 0/1 or bool
        (choose at once) or a scalar tensor.

Returns:
    ``x`` or ``alt`` (or a tensor choosing between them when the phase is
    symbolic), with their shape and dtype.

Raises:
    TypeError: If ``x`` or ``alt`` is neither a tensor nor a callable, or
        ``training`` is not ``None``, 0, 1, a bool or a tensor.

Example:
    >>> x = K.constant([1., 2.])
    >>> K.eval(K.in_test_phase(x, x * 10., training=0))
    array([1., 2.], dtype=float32)
    >>> p = K.placeholder(shape=(2,))
    >>> f = K.function([p, K.learning_phase()], [K.in_test_phase(p, p * 10.)])
    >>> f([np.array([1., 2.]), 1])
    [array([10., 20.], dtype=float32)]
"""


# ---------------------------------------------------------------------------
# Activations and losses
# ---------------------------------------------------------------------------

DOCS['relu'] = """Rectified linear unit, with optional leak, ceiling and threshold.

Keras 2.3.1's rule: the kept part is ``x`` where ``x > threshold`` and 0
elsewhere (``max(x, 0)`` when ``threshold`` is 0); with ``max_value`` it is
clipped to ``[0, max_value]`` (so ``max_value=0`` keeps nothing); then
``alpha * max(threshold - x, 0)`` is subtracted. Without ``max_value`` this
is ``x`` above the threshold and ``alpha * (x - threshold)`` at or below
it; a negative threshold keeps the values in ``(threshold, 0)`` as they
are.

Arguments:
    x: A tensor or variable of any shape, float dtype.
    alpha: A float, the slope below the threshold (default 0).
    max_value: ``None`` (default, no ceiling) or a non-negative float, the
        saturation value.
    threshold: A float (default 0), the value below which the unit is
        inactive.

Returns:
    A tensor with the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor, or ``alpha``, ``max_value`` or
        ``threshold`` is not a number.

Example:
    >>> x = K.constant([-2., -1., 0., 2., 8.])
    >>> K.eval(K.relu(x))
    array([0., 0., 0., 2., 8.], dtype=float32)
    >>> K.eval(K.relu(x, alpha=0.5, max_value=6.))
    array([-1. , -0.5,  0. ,  2. ,  6. ], dtype=float32)
    >>> K.eval(K.relu(x, threshold=3.))
    array([0., 0., 0., 0., 8.], dtype=float32)
"""

DOCS['elu'] = """Exponential linear unit, elementwise.

Computes ``x`` where ``x > 0`` and ``alpha * (exp(x) - 1)`` elsewhere.

Arguments:
    x: A tensor or variable of any shape, float dtype.
    alpha: A float (default 1), the scale of the negative part.

Returns:
    A tensor with the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor, or ``alpha`` is not a number.

Example:
    >>> x = K.constant([-1., 0., 2.])
    >>> np.round(K.eval(K.elu(x)), 4)
    array([-0.6321,  0.    ,  2.    ], dtype=float32)
    >>> np.round(K.eval(K.elu(x, alpha=2.)), 4)
    array([-1.2642,  0.    ,  2.    ], dtype=float32)
"""

DOCS['softmax'] = """Softmax of a tensor along one axis.

Computes ``exp(x) / sum(exp(x), axis)``, so the values along ``axis`` are
positive and sum to 1.

Arguments:
    x: A tensor or variable of any rank, float dtype.
    axis: An integer in ``[-ndim(x), ndim(x))``, the axis to normalise
        (default -1, the last axis).

Returns:
    A tensor with the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value, or ``axis`` is not an int.
    ValueError: If ``axis`` is out of range for ``x``.

Example:
    >>> x = K.constant([[1., 1., 1., 1.], [0., 0., 0., 0.]])
    >>> K.eval(K.softmax(x))
    array([[0.25, 0.25, 0.25, 0.25],
           [0.25, 0.25, 0.25, 0.25]], dtype=float32)
    >>> np.round(K.eval(K.softmax(x, axis=0)), 4)
    array([[0.7311, 0.7311, 0.7311, 0.7311],
           [0.2689, 0.2689, 0.2689, 0.2689]], dtype=float32)
"""

DOCS['softplus'] = """Softplus, ``log(1 + exp(x))``, elementwise.

It is computed stably, without overflow for large ``x``.

Arguments:
    x: A tensor or variable of any shape, float dtype.

Returns:
    A tensor with the shape and dtype of ``x``, all values positive.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> np.round(K.eval(K.softplus(K.constant([-1., 0., 1.]))), 4)
    array([0.3133, 0.6931, 1.3133], dtype=float32)
"""

DOCS['softsign'] = """Softsign, ``x / (1 + abs(x))``, elementwise.

Arguments:
    x: A tensor or variable of any shape, float dtype.

Returns:
    A tensor with the shape and dtype of ``x``, values in ``(-1, 1)``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.eval(K.softsign(K.constant([-3., 0., 1.])))
    array([-0.75,  0.  ,  0.5 ], dtype=float32)
"""

DOCS['categorical_crossentropy'] = """Categorical crossentropy between targets and predictions.

With ``from_logits=False`` the predictions are first scaled to sum to 1
along ``axis`` and clipped to ``[epsilon(), 1 - epsilon()]`` (``epsilon()`` as
it is when the loss is built), then the loss is
``-sum(target * log(output), axis)``. With ``from_logits=True`` ``output``
holds unnormalised scores and the loss is
``-sum(target * log(softmax(output, axis)), axis)``.

Arguments:
    target: A tensor of the shape of ``output``, float dtype: one-hot class
        labels or a probability distribution along ``axis``.
    output: A float tensor of any rank: probabilities along ``axis`` (for
        example the output of a softmax), or logits when ``from_logits``.
    from_logits: Whether ``output`` holds logits (default ``False``).
    axis: An integer, the class axis (default -1, the last axis).

Returns:
    A float tensor with the shape of ``output`` without ``axis``.

Raises:
    TypeError: If ``target`` or ``output`` is not a tensor, ``from_logits`` is not a
        bool, or ``axis`` is not an int.
    ValueError: If ``target`` and ``output`` differ in shape, or ``axis`` is out of
        range for ``output``.

Example:
    >>> target = K.constant([[0., 1.], [1., 0.]])
    >>> output = K.constant([[0.5, 0.5], [1., 1.]])    # rows are rescaled to sum to 1
    >>> np.round(K.eval(K.categorical_crossentropy(target, output)), 4)
    array([0.6931, 0.6931], dtype=float32)
    >>> logits = K.constant([[0., 0.], [0., 0.]])
    >>> np.round(K.eval(K.categorical_crossentropy(target, logits, from_logits=True)), 4)
    array([0.6931, 0.6931], dtype=float32)
"""

DOCS['sparse_categorical_crossentropy'] = """Categorical crossentropy with integer class targets.

The same loss as ``categorical_crossentropy``, with the target given as the
index of the true class instead of a one-hot vector. With
``from_logits=False`` the logits are ``log(clip(output, epsilon(),
1 - epsilon()))``, else ``output`` itself; the loss is minus the log-softmax
of the logits along ``axis`` at the target class (so clipped probabilities
are renormalised to sum to 1).

Arguments:
    target: A tensor of class indices (integer, or float holding whole
        numbers) with the shape of ``output`` without ``axis``; a trailing
        axis of size 1 is also accepted.
    output: A float tensor: probabilities along ``axis``, or logits when
        ``from_logits``.
    from_logits: Whether ``output`` holds logits (default ``False``).
    axis: An integer, the class axis of ``output`` (default -1).

Returns:
    A float tensor with the shape of ``output`` without ``axis``.

Raises:
    TypeError: If ``target`` or ``output`` is not a tensor, ``from_logits`` is not a
        bool, or ``axis`` is not an int.
    ValueError: If ``target`` does not have the shape of ``output`` without its
        class axis, or ``axis`` is out of range for ``output``.

Example:
    >>> target = K.constant([1., 0.])
    >>> output = K.constant([[0.5, 0.5], [0.25, 0.75]])
    >>> np.round(K.eval(K.sparse_categorical_crossentropy(target, output)), 4)
    array([0.6931, 1.3863], dtype=float32)
"""

DOCS['binary_crossentropy'] = """Binary crossentropy between targets and predictions, elementwise.

With ``from_logits=False`` the predictions are clipped to
``[epsilon(), 1 - epsilon()]`` and the loss is
``-(target * log(output) + (1 - target) * log(1 - output))``. With
``from_logits=True`` ``output`` holds logits ``z`` and the loss is computed
stably as ``max(z, 0) - z * target + log(1 + exp(-abs(z)))``.

Arguments:
    target: A float tensor of the shape of ``output``, values in ``[0, 1]``.
    output: A float tensor: probabilities in ``[0, 1]``, or logits when
        ``from_logits``.
    from_logits: Whether ``output`` holds logits (default ``False``).

Returns:
    A float tensor with the shape of ``output`` (no axis is reduced).

Raises:
    TypeError: If ``target`` or ``output`` is not a tensor, or ``from_logits`` is
        not a bool.
    ValueError: If ``target`` and ``output`` differ in shape.

Example:
    >>> target = K.constant([1., 0., 1.])
    >>> output = K.constant([0.5, 0.5, 0.25])
    >>> np.round(K.eval(K.binary_crossentropy(target, output)), 4)
    array([0.6931, 0.6931, 1.3863], dtype=float32)
    >>> np.round(K.eval(K.binary_crossentropy(target, K.zeros((3,)), from_logits=True)), 4)
    array([0.6931, 0.6931, 0.6931], dtype=float32)
"""

DOCS['sigmoid'] = """Logistic sigmoid, ``1 / (1 + exp(-x))``, elementwise.

Arguments:
    x: A tensor or variable of any shape, float dtype.

Returns:
    A tensor with the shape and dtype of ``x``, values in ``[0, 1]``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> np.round(K.eval(K.sigmoid(K.constant([-1., 0., 1.]))), 4)
    array([0.2689, 0.5   , 0.7311], dtype=float32)
"""

DOCS['hard_sigmoid'] = """Piecewise linear approximation of the sigmoid, elementwise.

Computes ``0.2 * x + 0.5`` clipped to ``[0, 1]``: 0 below -2.5, 1 above 2.5.
This is faster to compute than ``sigmoid``.

Arguments:
    x: A tensor or variable of any shape, float dtype.

Returns:
    A tensor with the shape and dtype of ``x``, values in ``[0, 1]``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> K.eval(K.hard_sigmoid(K.constant([-3., -1., 0., 1., 3.])))
    array([0. , 0.3, 0.5, 0.7, 1. ], dtype=float32)
"""

DOCS['tanh'] = """Hyperbolic tangent, elementwise.

Arguments:
    x: A tensor or variable of any shape, float dtype.

Returns:
    A tensor with the shape and dtype of ``x``, values in ``[-1, 1]``.

Raises:
    TypeError: If ``x`` is not a tensor or numeric value.

Example:
    >>> np.round(K.eval(K.tanh(K.constant([-1., 0., 1.]))), 4)
    array([-0.7616,  0.    ,  0.7616], dtype=float32)
"""

DOCS['dropout'] = """Randomly set entries to zero and scale the others (inverted dropout).

Each entry is zeroed with probability ``level``; the kept entries are
divided by ``1 - level``, so the expected value of each entry is unchanged.
Dropout is always applied: wrap it in ``in_train_phase`` to apply it only
while training.

Arguments:
    x: A tensor of any shape, float dtype.
    level: A float in ``[0, 1)``, the probability of dropping an entry.
    noise_shape: ``None`` (an independent draw per entry) or a shape that
        broadcasts to that of ``x``: a size 1 shares the draw along that
        axis.
    seed: ``None`` or an integer seed for the random draw; a compiled
        ``function`` draws a new mask at each call. With ``None`` the seed
        is drawn from numpy's global random generator, as in Keras 2.3.1.

Returns:
    A tensor with the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor, ``level`` is not a number, or ``seed`` is
        not an int.
    ValueError: If ``level`` is not in ``[0, 1)``.

Example:
    >>> x = K.constant([[1., 2.], [3., 4.]])
    >>> K.eval(K.dropout(x, 0.))
    array([[1., 2.],
           [3., 4.]], dtype=float32)
    >>> v = K.eval(K.dropout(K.ones((4, 5)), 0.5, seed=1))
    >>> v.shape, bool(np.isin(v, [0., 2.]).all())
    ((4, 5), True)
"""

DOCS['l2_normalize'] = """Scale a tensor to unit L2 norm along an axis.

Computes ``x / sqrt(max(sum(x ** 2, axis, keepdims=True), 1e-12))``, so an
all-zero slice stays zero.

Arguments:
    x: A tensor or variable of any shape, float dtype.
    axis: ``None`` (default: the norm of the whole tensor), an integer in
        ``[-ndim(x), ndim(x))`` or a list of such integers: the axes along
        which to normalise.

Returns:
    A tensor with the shape and dtype of ``x``.

Raises:
    TypeError: If ``x`` is not a tensor, or ``axis`` is not ``None``, an int or a
        list of ints.
    ValueError: If an axis is out of range for ``x`` or is named twice.

Example:
    >>> x = K.constant([[3., 4.], [0., 2.]])
    >>> K.eval(K.l2_normalize(x, axis=1))
    array([[0.6, 0.8],
           [0. , 1. ]], dtype=float32)
    >>> K.eval(K.l2_normalize(K.constant([3., 4.])))
    array([0.6, 0.8], dtype=float32)
"""

DOCS['in_top_k'] = """Whether each target class is among the ``k`` highest predictions.

For each row, the result is true when fewer than ``k`` classes have a score
strictly above the target's score, so ties with the ``k``-th score count as
in; a non-finite target score gives false.

Arguments:
    predictions: A float tensor of shape ``(batch, classes)``.
    targets: An integer tensor of shape ``(batch,)``, the class indices.
    k: A non-negative integer (or a scalar tensor), the number of top
        classes to consider.

Returns:
    A bool tensor of shape ``(batch,)``. CNTK has no bool tensors and
    returns 1.0 / 0.0 in ``floatx()`` instead.

Raises:
    TypeError: If ``predictions`` or ``targets`` is not a tensor, or ``k`` is not an
        int.
    ValueError: If ``predictions`` is not 2-D, ``targets`` is not 1-D, their batch
        sizes differ, or ``k`` is negative.

Example:
    >>> predictions = K.constant([[0.1, 0.9, 0.], [0.3, 0.3, 0.4]])
    >>> targets = K.constant([1, 0], dtype='int32')
    >>> K.eval(K.in_top_k(predictions, targets, 1)).tolist()
    [True, False]
    >>> K.eval(K.in_top_k(predictions, targets, 2)).tolist()
    [True, True]
"""


# ---------------------------------------------------------------------------
# Convolution and pooling
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# Random
# ---------------------------------------------------------------------------

DOCS['random_normal'] = """Tensor of random values drawn from a normal distribution.

Arguments:
    shape: A tuple of integers (or a 1-D integer tensor), the output shape.
    mean: A float, the mean of the distribution (default 0).
    stddev: A float, the standard deviation of the distribution
        (default 1).
    dtype: ``None`` (default: ``floatx()``) or a float dtype name.
    seed: ``None`` or an integer. With ``None`` a seed is drawn from
        numpy's global random generator, as in Keras 2.3.1. A seed makes
        the values reproducible from process start on one engine (they
        differ between engines); a compiled ``function`` draws new values
        at each call.

Returns:
    A tensor of the given shape and dtype.

Raises:
    TypeError: If ``shape`` is not a tuple of ints (or a shape tensor), ``mean``
        or ``stddev`` is not a number, ``seed`` is not an int, or ``dtype``
        names no numeric or bool dtype.
    ValueError: If ``shape`` holds a negative size or ``stddev`` is negative.

Example:
    >>> x = K.random_normal((2, 3), seed=1)
    >>> K.int_shape(x), K.dtype(x)
    ((2, 3), 'float32')
    >>> v = K.eval(K.random_normal((1000,), mean=1., stddev=0.5, seed=1))
    >>> bool(abs(v.mean() - 1.) < 0.1)
    True
"""

DOCS['random_uniform'] = """Tensor of random values drawn uniformly from ``[minval, maxval)``.

Arguments:
    shape: A tuple of integers (or a 1-D integer tensor), the output shape.
    minval: A float, the lower bound, included (default 0).
    maxval: A float, the upper bound, excluded (default 1); above
        ``minval``.
    dtype: ``None`` (default: ``floatx()``) or a float dtype name.
    seed: ``None`` or an integer. With ``None`` a seed is drawn from
        numpy's global random generator, as in Keras 2.3.1. A seed makes
        the values reproducible from process start on one engine (they
        differ between engines); a compiled ``function`` draws new values
        at each call.

Returns:
    A tensor of the given shape and dtype.

Raises:
    TypeError: If ``shape`` is not a tuple of ints (or a shape tensor),
        ``minval`` or ``maxval`` is not a number, ``seed`` is not an int, or
        ``dtype`` names no numeric or bool dtype.
    ValueError: If ``shape`` holds a negative size.

Example:
    >>> x = K.random_uniform((2, 3), minval=-1., maxval=1., seed=1)
    >>> K.int_shape(x)
    (2, 3)
    >>> v = K.eval(x)
    >>> bool((v >= -1.).all() and (v < 1.).all())
    True
"""

DOCS['random_binomial'] = """Tensor of random 0/1 values, each 1 with probability ``p``.

Arguments:
    shape: A tuple of integers (or a 1-D integer tensor), the output shape.
    p: A float in ``[0, 1]``, the probability of a 1 (default 0).
    dtype: ``None`` (default: ``floatx()``) or a dtype name.
    seed: ``None`` or an integer. With ``None`` a seed is drawn from
        numpy's global random generator, as in Keras 2.3.1. A seed makes
        the values reproducible from process start on one engine (they
        differ between engines); a compiled ``function`` draws new values
        at each call.

Returns:
    A tensor of the given shape and dtype holding zeros and ones.

Raises:
    TypeError: If ``shape`` is not a tuple of ints (or a shape tensor), ``p``
        is not a number, ``seed`` is not an int, or ``dtype`` names no numeric
        or bool dtype.
    ValueError: If ``shape`` holds a negative size or ``p`` is not in ``[0, 1]``.

Example:
    >>> v = K.eval(K.random_binomial((4, 5), p=0.5, seed=1))
    >>> v.shape, bool(np.isin(v, [0., 1.]).all())
    ((4, 5), True)
    >>> K.eval(K.random_binomial((2, 2), p=1.))
    array([[1., 1.],
           [1., 1.]], dtype=float32)
"""

DOCS['truncated_normal'] = """Tensor of random values from a truncated normal distribution.

Values are drawn from the normal distribution with the given mean and
standard deviation, restricted to ``[mean - 2 * stddev, mean + 2 * stddev]``
(values outside are drawn again).

Arguments:
    shape: A tuple of integers (or a 1-D integer tensor), the output shape.
    mean: A float, the mean of the normal distribution (default 0).
    stddev: A float, the standard deviation of the normal distribution
        before truncation (default 1).
    dtype: ``None`` (default: ``floatx()``) or a float dtype name.
    seed: ``None`` or an integer. With ``None`` a seed is drawn from
        numpy's global random generator, as in Keras 2.3.1. A seed makes
        the values reproducible from process start on one engine (they
        differ between engines); a compiled ``function`` draws new values
        at each call.

Returns:
    A tensor of the given shape and dtype.

Raises:
    TypeError: If ``shape`` is not a tuple of ints (or a shape tensor), ``mean``
        or ``stddev`` is not a number, ``seed`` is not an int, or ``dtype``
        names no numeric or bool dtype.
    ValueError: If ``shape`` holds a negative size or ``stddev`` is negative.

Example:
    >>> x = K.truncated_normal((100,), mean=1., stddev=0.5, seed=1)
    >>> K.int_shape(x)
    (100,)
    >>> v = K.eval(x)
    >>> bool((v >= 0.).all() and (v <= 2.).all())
    True
"""


# ---------------------------------------------------------------------------
# CTC
# ---------------------------------------------------------------------------

DOCS['ctc_label_dense_to_sparse'] = """Convert dense CTC label sequences to a sparse tensor.

Entry ``(i, j)`` of ``labels`` is kept when ``j < label_lengths[i]``; the
rest of each row is padding and is dropped. The kind of sparse object
returned is the engine's own (a ``tf.SparseTensor`` on TensorFlow, a sparse
matrix on Theano, a labels-with-lengths object on CNTK); ``is_sparse`` is
true for it and ``to_dense`` turns it back into a tensor with zeros past
each length.

Arguments:
    labels: An integer tensor of shape ``(batch, max_label_length)``.
    label_lengths: An integer tensor of shape ``(batch,)`` (or
        ``(batch, 1)``), the length of each label sequence.

Returns:
    A sparse tensor of dense shape ``(batch, max_label_length)`` holding
    the labels. CNTK has no integer tensors: its values are floats.

Raises:
    TypeError: If ``labels`` or ``label_lengths`` is not a tensor.
    ValueError: If ``labels`` is not 2-D.

Example:
    >>> labels = K.constant([[1, 2], [3, 4]], dtype='int32')
    >>> sp = K.ctc_label_dense_to_sparse(labels, K.constant([2, 1], dtype='int32'))
    >>> K.is_sparse(sp)
    True
    >>> K.eval(K.to_dense(sp)).tolist()
    [[1, 2], [3, 0]]
"""

DOCS['ctc_batch_cost'] = """Connectionist temporal classification (CTC) loss of each batch element.

The loss is minus the log probability of the label sequence, summed over
all alignments of it with the first ``input_length`` steps of ``y_pred``
(an alignment may repeat labels and insert blanks). The last class of
``y_pred`` is the blank. As in Keras 2.3.1 the predictions are used as
``log(y_pred + epsilon())``, normalised again by a log-softmax.

Arguments:
    y_true: An integer tensor of shape ``(batch, max_label_length)``, the
        label sequences (class ids below ``num_classes - 1``).
    y_pred: A float tensor of shape ``(batch, time, num_classes)``, softmax
        probabilities per step.
    input_length: An integer tensor of shape ``(batch, 1)``, the number of
        valid steps of each ``y_pred`` sequence.
    label_length: An integer tensor of shape ``(batch, 1)``, the number of
        valid labels of each ``y_true`` sequence.

Returns:
    A float tensor of shape ``(batch, 1)``: the CTC loss of each element.

Raises:
    TypeError: If an argument is not a tensor or numeric value.
    ValueError: If ``y_true`` is not 2-D or ``y_pred`` is not 3-D.

Example:
    >>> y_pred = K.constant(np.full((2, 2, 3), 1. / 3))    # 2 steps, 2 classes + blank
    >>> y_true = K.constant([[0, 1], [0, 0]], dtype='int32')
    >>> loss = K.ctc_batch_cost(y_true, y_pred, K.constant([[2], [2]], dtype='int32'),
    ...                         K.constant([[2], [1]], dtype='int32'))
    >>> np.round(K.eval(loss), 4)                          # -log(1/9), -log(3/9)
    array([[2.1972],
           [1.0986]], dtype=float32)
"""

DOCS['ctc_decode'] = """Decode CTC predictions into label sequences.

As in Keras 2.3.1 the predictions are used as ``log(y_pred + epsilon())``.
Greedy decoding takes the most likely class at each valid step, merges
repeated classes and then drops the blanks (the last class). Beam search is
a CTC prefix beam search over the log-softmax of those logits: it keeps the
``beam_width`` best prefixes and returns the ``top_paths`` most likely label
sequences; with a narrow beam, which sequences and scores survive may differ
between engines.

Arguments:
    y_pred: A float tensor of shape ``(batch, time, num_classes)``, softmax
        probabilities per step; the last class is the blank.
    input_length: An integer tensor of shape ``(batch,)`` (or
        ``(batch, 1)``), the number of valid steps of each sequence.
    greedy: ``True`` (default) for greedy decoding, ``False`` for beam
        search.
    beam_width: An integer, the beam size of beam search (default 100).
    top_paths: An integer in ``[1, beam_width]``, the number of sequences
        beam search returns (default 1).
    merge_repeated: Beam search only: whether to merge repeated classes of
        the results (default ``False``).

Returns:
    A tuple ``(decoded, log_prob)``. ``decoded`` is a list of
    ``top_paths`` (1 for greedy) ``int64`` tensors of shape
    ``(batch, max_decoded_length)``, padded with -1 (floats on CNTK).
    ``log_prob`` is a float tensor: for greedy decoding, of shape
    ``(batch, 1)``, minus the sum over the valid steps of the largest logit
    ``log(p + epsilon())`` (TensorFlow's convention); for beam search, of
    shape ``(batch, top_paths)``, the log probability of each sequence.

Raises:
    TypeError: If ``y_pred`` or ``input_length`` is not a tensor, ``greedy`` or
        ``merge_repeated`` is not a bool, or ``beam_width`` or ``top_paths`` is not
        an int.
    ValueError: If ``y_pred`` is not 3-D, ``beam_width`` or ``top_paths`` is below
        1, or (beam search) ``top_paths`` is above ``beam_width``.

Example:
    >>> y_pred = K.constant([[[0.5, 0.25, 0.25],      # best: class 0
    ...                       [0.5, 0.25, 0.25],      # 0 again (merged)
    ...                       [0.25, 0.25, 0.5],      # blank
    ...                       [0.25, 0.5, 0.25]]])    # class 1
    >>> decoded, log_prob = K.ctc_decode(y_pred, K.constant([4], dtype='int32'))
    >>> K.eval(decoded[0]).tolist()
    [[0, 1]]
    >>> np.round(K.eval(log_prob), 4)                 # -4 * log(0.5)
    array([[2.7726]], dtype=float32)
    >>> decoded, _ = K.ctc_decode(y_pred, K.constant([3], dtype='int32'))
    >>> K.eval(decoded[0]).tolist()
    [[0]]
"""


# ---------------------------------------------------------------------------
# Higher-order functions
# ---------------------------------------------------------------------------

DOCS['map_fn'] = """Apply a function to each element of a tensor along its first axis.

``fn`` is called on ``elems[0]``, ``elems[1]``... and the results are
stacked along a new first axis.

Arguments:
    fn: A callable taking one tensor (an element of ``elems``, shape
        ``elems.shape[1:]``) and returning a tensor, built with backend
        operations.
    elems: A tensor of rank 1 or more.
    name: ``None`` or a string, a name for the operation.
    dtype: ``None`` (the results have ``elems``' dtype) or the dtype of
        ``fn``'s results.

Returns:
    A tensor of shape ``(len(elems),) + shape of fn's result``.

Raises:
    TypeError: If ``fn`` is not callable, ``elems`` is not a tensor, or ``dtype``
        names no dtype.
    ValueError: If ``elems`` is a scalar.

Example:
    >>> x = K.constant([[1., 2.], [3., 4.]])
    >>> K.eval(K.map_fn(lambda row: K.sum(row), x))
    array([3., 7.], dtype=float32)
    >>> K.eval(K.map_fn(lambda row: row * 2., x))
    array([[2., 4.],
           [6., 8.]], dtype=float32)
"""

DOCS['foldl'] = """Reduce a tensor along its first axis with a function, from first to last.

Computes ``acc = fn(acc, elems[i])`` for ``i = 0, 1, ...`` and returns the
last ``acc``. Without ``initializer``, ``acc`` starts as ``elems[0]`` and
the fold runs over the other elements.

Arguments:
    fn: A callable ``fn(acc, x)`` returning the new accumulator, built with
        backend operations; ``x`` has shape ``elems.shape[1:]``.
    elems: A tensor of rank 1 or more.
    initializer: ``None`` or a tensor, the starting accumulator.
    name: ``None`` or a string, a name for the operation.

Returns:
    A tensor with the shape and dtype of ``initializer`` (of ``elems[0]``
    without one).

Raises:
    TypeError: If ``fn`` is not callable, or ``elems`` or ``initializer`` is not a
        tensor.
    ValueError: If ``elems`` is a scalar, or is empty without ``initializer``.

Example:
    >>> x = K.constant([1., 2., 3.])
    >>> float(K.eval(K.foldl(lambda acc, v: acc * 10. + v, x)))
    123.0
    >>> float(K.eval(K.foldl(lambda acc, v: acc + v, x, initializer=K.constant(10.))))
    16.0
"""

DOCS['foldr'] = """Reduce a tensor along its first axis with a function, from last to first.

Computes ``acc = fn(acc, elems[i])`` for ``i = n - 1, n - 2, ...`` and
returns the last ``acc``. Without ``initializer``, ``acc`` starts as
``elems[-1]`` and the fold runs over the other elements.

Arguments:
    fn: A callable ``fn(acc, x)`` returning the new accumulator, built with
        backend operations; ``x`` has shape ``elems.shape[1:]``.
    elems: A tensor of rank 1 or more.
    initializer: ``None`` or a tensor, the starting accumulator.
    name: ``None`` or a string, a name for the operation.

Returns:
    A tensor with the shape and dtype of ``initializer`` (of ``elems[-1]``
    without one).

Raises:
    TypeError: If ``fn`` is not callable, or ``elems`` or ``initializer`` is not a
        tensor.
    ValueError: If ``elems`` is a scalar, or is empty without ``initializer``.

Example:
    >>> x = K.constant([1., 2., 3.])
    >>> float(K.eval(K.foldr(lambda acc, v: acc * 10. + v, x)))
    321.0
    >>> float(K.eval(K.foldr(lambda acc, v: acc + v, x, initializer=K.constant(10.))))
    16.0
"""


# ---------------------------------------------------------------------------
# Locally connected
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# Keras 1 aliases
# ---------------------------------------------------------------------------

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
