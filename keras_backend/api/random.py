"""Random: random tensors.

The contract of each name of this section of the API reference, side by side: its
argument rules (``SPECS[name]``: ``({argument: checker}, [checks across arguments])``,
in the vocabulary of :mod:`keras_backend.checks`) and its one docstring
(``DOCS[name]``). :mod:`keras_backend.api` gathers the sections in order.
"""
from ..checks import DT, SEED, broadcast_to_shape, float_dtype, number, shape_arg

TITLE = 'Random'
NAMES = ('random_normal', 'random_uniform', 'random_binomial', 'truncated_normal')
SPECS = {}
DOCS = {}


# ---------------------------------------------------------------------------
# random_normal
# ---------------------------------------------------------------------------

SPECS['random_normal'] = ({'shape': shape_arg(), 'mean': number(), 'stddev': number(0), 'dtype': float_dtype(),
                           'seed': SEED}, [broadcast_to_shape('mean', 'stddev')])

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
    ValueError: If ``shape`` holds a negative size or ``stddev`` is negative, or ``dtype`` is not a
        floating-point dtype (``'int32'``: a normal distribution is drawn in floats).

Example:
    >>> x = K.random_normal((2, 3), seed=1)
    >>> K.int_shape(x), K.dtype(x)
    ((2, 3), 'float32')
    >>> v = K.eval(K.random_normal((1000,), mean=1., stddev=0.5, seed=1))
    >>> bool(abs(v.mean() - 1.) < 0.1)
    True
"""


# ---------------------------------------------------------------------------
# random_uniform
# ---------------------------------------------------------------------------

SPECS['random_uniform'] = ({'shape': shape_arg(), 'minval': number(), 'maxval': number(),
                            'dtype': DT, 'seed': SEED}, [broadcast_to_shape('minval', 'maxval')])

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


# ---------------------------------------------------------------------------
# random_binomial
# ---------------------------------------------------------------------------

SPECS['random_binomial'] = ({'shape': shape_arg(), 'p': number(0, 1), 'dtype': DT, 'seed': SEED},
                            [])

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


# ---------------------------------------------------------------------------
# truncated_normal
# ---------------------------------------------------------------------------

SPECS['truncated_normal'] = ({'shape': shape_arg(), 'mean': number(), 'stddev': number(0),
                              'dtype': float_dtype(), 'seed': SEED},
                             [broadcast_to_shape('mean', 'stddev')])

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
    ValueError: If ``shape`` holds a negative size or ``stddev`` is negative, or ``dtype`` is not a
        floating-point dtype (``'int32'``: a normal distribution is drawn in floats).

Example:
    >>> x = K.truncated_normal((100,), mean=1., stddev=0.5, seed=1)
    >>> K.int_shape(x)
    (100,)
    >>> v = K.eval(x)
    >>> bool((v >= 0.).all() and (v <= 2.).all())
    True
"""
