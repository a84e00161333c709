"""Higher-order functions: map_fn, foldl, foldr.

The contract of each name of this section of the API reference, side by side: its
argument rules (``SPECS[name]``: ``({argument: checker}, [checks across arguments])``,
in the vocabulary of :mod:`keras_backend.checks`) and its one docstring
(``DOCS[name]``). :mod:`keras_backend.api` gathers the sections in order.
"""
from ..checks import DT, NAME, callable_, map_elems, tensor

TITLE = 'Higher-order functions'
NAMES = ('map_fn', 'foldl', 'foldr')
SPECS = {}
DOCS = {}


# ---------------------------------------------------------------------------
# map_fn
# ---------------------------------------------------------------------------

SPECS['map_fn'] = ({'fn': callable_(), 'name': NAME, 'dtype': DT}, [map_elems])

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


# ---------------------------------------------------------------------------
# foldl
# ---------------------------------------------------------------------------

SPECS['foldl'] = ({'fn': callable_(), 'initializer': tensor(allow_none=True), 'name': NAME},
                  [map_elems])

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


# ---------------------------------------------------------------------------
# foldr
# ---------------------------------------------------------------------------

SPECS['foldr'] = ({'fn': callable_(), 'initializer': tensor(allow_none=True), 'name': NAME},
                  [map_elems])

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
