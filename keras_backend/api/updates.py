"""Variable updates: the update ops that functions run.

The contract of each name of this section of the API reference, side by side: its
argument rules (``SPECS[name]``: ``({argument: checker}, [checks across arguments])``,
in the vocabulary of :mod:`keras_backend.checks`) and its one docstring
(``DOCS[name]``). :mod:`keras_backend.api` gathers the sections in order.
"""
from ..checks import T, number, same_shape, update_shapes, variable_arg

TITLE = 'Variable updates'
NAMES = ('update', 'update_add', 'update_sub', 'moving_average_update')
SPECS = {}
DOCS = {}


# ---------------------------------------------------------------------------
# update
# ---------------------------------------------------------------------------

SPECS['update'] = ({'x': T, 'new_x': T}, [update_shapes('new_x')])

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


# ---------------------------------------------------------------------------
# update_add
# ---------------------------------------------------------------------------

SPECS['update_add'] = ({'x': T, 'increment': T}, [update_shapes('increment')])

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


# ---------------------------------------------------------------------------
# update_sub
# ---------------------------------------------------------------------------

SPECS['update_sub'] = ({'x': T, 'decrement': T}, [update_shapes('decrement')])

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


# ---------------------------------------------------------------------------
# moving_average_update
# ---------------------------------------------------------------------------

SPECS['moving_average_update'] = ({'x': T, 'value': T, 'momentum': number()},
                                  [variable_arg('x'), same_shape('x', 'value')])

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
