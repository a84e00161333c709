"""Control flow: rnn, switch and the learning-phase switches.

The contract of each name of this section of the API reference, side by side: its
argument rules (``SPECS[name]``: ``({argument: checker}, [checks across arguments])``,
in the vocabulary of :mod:`keras_backend.checks`) and its one docstring
(``DOCS[name]``). :mod:`keras_backend.api` gathers the sections in order.
"""
from ..checks import BOOL, T, callable_, phase_alternatives, rnn_inputs, switch_ranks

TITLE = 'Control flow'
NAMES = ('rnn', 'switch', 'in_train_phase', 'in_test_phase')
SPECS = {}
DOCS = {}


# ---------------------------------------------------------------------------
# rnn
# ---------------------------------------------------------------------------

SPECS['rnn'] = ({'step_function': callable_(), 'go_backwards': BOOL, 'unroll': BOOL},
                [rnn_inputs])

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


# ---------------------------------------------------------------------------
# switch
# ---------------------------------------------------------------------------

SPECS['switch'] = ({'condition': T}, [switch_ranks])

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


# ---------------------------------------------------------------------------
# in_train_phase
# ---------------------------------------------------------------------------

SPECS['in_train_phase'] = ({}, [phase_alternatives])

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


# ---------------------------------------------------------------------------
# in_test_phase
# ---------------------------------------------------------------------------

SPECS['in_test_phase'] = ({}, [phase_alternatives])

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
