"""Values, functions and gradients: reading and writing values, compiled functions, gradients.

The contract of each name of this section of the API reference, side by side: its
argument rules (``SPECS[name]``: ``({argument: checker}, [checks across arguments])``,
in the vocabulary of :mod:`keras_backend.checks`) and its one docstring
(``DOCS[name]``). :mod:`keras_backend.api` gathers the sections in order.
"""
from ..checks import (T, callable_, evaluable, function_args, gradients_args, set_value_shape,
    string, tensor_list, tensors_or_list, value_tuples)

TITLE = 'Values, functions and gradients'
NAMES = ('get_value', 'batch_get_value', 'set_value', 'batch_set_value', 'get_variable_shape',
         'print_tensor', 'function', 'gradients', 'stop_gradient', 'control_dependencies',
         'symbolic', 'eager')
SPECS = {}
DOCS = {}


# ---------------------------------------------------------------------------
# get_value
# ---------------------------------------------------------------------------

SPECS['get_value'] = ({'x': evaluable()}, [])

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


# ---------------------------------------------------------------------------
# batch_get_value
# ---------------------------------------------------------------------------

SPECS['batch_get_value'] = ({'ops': tensor_list(min_len=0)}, [])

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


# ---------------------------------------------------------------------------
# set_value
# ---------------------------------------------------------------------------

SPECS['set_value'] = ({}, [set_value_shape])

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


# ---------------------------------------------------------------------------
# batch_set_value
# ---------------------------------------------------------------------------

SPECS['batch_set_value'] = ({}, [value_tuples])

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


# ---------------------------------------------------------------------------
# get_variable_shape
# ---------------------------------------------------------------------------

SPECS['get_variable_shape'] = ({'x': T}, [])

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


# ---------------------------------------------------------------------------
# print_tensor
# ---------------------------------------------------------------------------

SPECS['print_tensor'] = ({'x': T, 'message': string(allow_none=False)}, [])

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


# ---------------------------------------------------------------------------
# function
# ---------------------------------------------------------------------------

SPECS['function'] = ({}, [function_args])

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


# ---------------------------------------------------------------------------
# gradients
# ---------------------------------------------------------------------------

SPECS['gradients'] = ({}, [gradients_args])

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


# ---------------------------------------------------------------------------
# stop_gradient
# ---------------------------------------------------------------------------

SPECS['stop_gradient'] = ({}, [tensors_or_list])

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


# ---------------------------------------------------------------------------
# control_dependencies
# ---------------------------------------------------------------------------

SPECS['control_dependencies'] = ({}, [])

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


# ---------------------------------------------------------------------------
# symbolic
# ---------------------------------------------------------------------------

SPECS['symbolic'] = ({'func': callable_()}, [])

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


# ---------------------------------------------------------------------------
# eager
# ---------------------------------------------------------------------------

SPECS['eager'] = ({'func': callable_()}, [])

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
