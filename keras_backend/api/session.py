"""Session and learning phase: uids, sessions, the learning phase, name scopes.

The contract of each name of this section of the API reference, side by side: its
argument rules (``SPECS[name]``: ``({argument: checker}, [checks across arguments])``,
in the vocabulary of :mod:`keras_backend.checks`) and its one docstring
(``DOCS[name]``). :mod:`keras_backend.api` gathers the sections in order.
"""
from ..checks import BOOL, phase, string

TITLE = 'Session and learning phase'
NAMES = ('get_uid', 'reset_uids', 'clear_session', 'get_session', 'set_session',
         'manual_variable_initialization', 'learning_phase', 'set_learning_phase',
         'learning_phase_scope', 'name_scope')
SPECS = {}
DOCS = {}


# ---------------------------------------------------------------------------
# get_uid
# ---------------------------------------------------------------------------

SPECS['get_uid'] = ({'prefix': string(allow_none=False)}, [])

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


# ---------------------------------------------------------------------------
# reset_uids
# ---------------------------------------------------------------------------

SPECS['reset_uids'] = ({}, [])

DOCS['reset_uids'] = """Restart every ``get_uid`` counter, so that each prefix counts from 1 again.

Example:
    >>> K.get_uid('my_block') >= 1
    True
    >>> K.reset_uids()
    >>> K.get_uid('my_block'), K.get_uid('my_block')
    (1, 2)
"""


# ---------------------------------------------------------------------------
# clear_session
# ---------------------------------------------------------------------------

SPECS['clear_session'] = ({}, [])

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


# ---------------------------------------------------------------------------
# get_session
# ---------------------------------------------------------------------------

SPECS['get_session'] = ({}, [])

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


# ---------------------------------------------------------------------------
# set_session
# ---------------------------------------------------------------------------

SPECS['set_session'] = ({}, [])

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


# ---------------------------------------------------------------------------
# manual_variable_initialization
# ---------------------------------------------------------------------------

SPECS['manual_variable_initialization'] = ({'value': BOOL}, [])

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


# ---------------------------------------------------------------------------
# learning_phase
# ---------------------------------------------------------------------------

SPECS['learning_phase'] = ({}, [])

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


# ---------------------------------------------------------------------------
# set_learning_phase
# ---------------------------------------------------------------------------

SPECS['set_learning_phase'] = ({'value': phase()}, [])

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


# ---------------------------------------------------------------------------
# learning_phase_scope
# ---------------------------------------------------------------------------

SPECS['learning_phase_scope'] = ({'value': phase()}, [])

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


# ---------------------------------------------------------------------------
# name_scope
# ---------------------------------------------------------------------------

SPECS['name_scope'] = ({'name': string(allow_none=False)}, [])

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
