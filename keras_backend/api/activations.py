"""Activations and losses: activations, crossentropies, dropout, normalisation, in_top_k.

The contract of each name of this section of the API reference, side by side: its
argument rules (``SPECS[name]``: ``({argument: checker}, [checks across arguments])``,
in the vocabulary of :mod:`keras_backend.checks`) and its one docstring
(``DOCS[name]``). :mod:`keras_backend.api` gathers the sections in order.
"""
from ..checks import (BOOL, SEED, T, anything, axes, axis, crossentropy_shapes,
    float_x_on_tensorflow, in_top_k_shapes, integer, number)

TITLE = 'Activations and losses'
NAMES = ('relu', 'elu', 'softmax', 'softplus', 'softsign', 'categorical_crossentropy',
         'sparse_categorical_crossentropy', 'binary_crossentropy', 'sigmoid', 'hard_sigmoid',
         'tanh', 'dropout', 'l2_normalize', 'in_top_k')
SPECS = {}
DOCS = {}


# ---------------------------------------------------------------------------
# relu
# ---------------------------------------------------------------------------

SPECS['relu'] = ({'x': T, 'alpha': number(), 'max_value': number(allow_none=True),
                  'threshold': number()}, [float_x_on_tensorflow])

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


# ---------------------------------------------------------------------------
# elu
# ---------------------------------------------------------------------------

SPECS['elu'] = ({'x': T, 'alpha': number()}, [float_x_on_tensorflow])

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


# ---------------------------------------------------------------------------
# softmax
# ---------------------------------------------------------------------------

SPECS['softmax'] = ({'x': T, 'axis': axis('x')}, [float_x_on_tensorflow])

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


# ---------------------------------------------------------------------------
# softplus
# ---------------------------------------------------------------------------

SPECS['softplus'] = ({'x': T}, [float_x_on_tensorflow])

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


# ---------------------------------------------------------------------------
# softsign
# ---------------------------------------------------------------------------

SPECS['softsign'] = ({'x': T}, [float_x_on_tensorflow])

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


# ---------------------------------------------------------------------------
# categorical_crossentropy
# ---------------------------------------------------------------------------

SPECS['categorical_crossentropy'] = ({'target': T, 'output': T, 'from_logits': BOOL,
                                      'axis': axis('output')}, [crossentropy_shapes()])

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


# ---------------------------------------------------------------------------
# sparse_categorical_crossentropy
# ---------------------------------------------------------------------------

SPECS['sparse_categorical_crossentropy'] = ({'target': T, 'output': T, 'from_logits': BOOL,
                                             'axis': axis('output')},
                                            [crossentropy_shapes(sparse=True)])

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


# ---------------------------------------------------------------------------
# binary_crossentropy
# ---------------------------------------------------------------------------

SPECS['binary_crossentropy'] = ({'target': T, 'output': T, 'from_logits': BOOL},
                                [crossentropy_shapes(), float_x_on_tensorflow])

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


# ---------------------------------------------------------------------------
# sigmoid
# ---------------------------------------------------------------------------

SPECS['sigmoid'] = ({'x': T}, [float_x_on_tensorflow])

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


# ---------------------------------------------------------------------------
# hard_sigmoid
# ---------------------------------------------------------------------------

SPECS['hard_sigmoid'] = ({'x': T}, [float_x_on_tensorflow])

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


# ---------------------------------------------------------------------------
# tanh
# ---------------------------------------------------------------------------

SPECS['tanh'] = ({'x': T}, [float_x_on_tensorflow])

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


# ---------------------------------------------------------------------------
# dropout
# ---------------------------------------------------------------------------

SPECS['dropout'] = ({'x': T, 'level': number(0, 1, open_max=True), 'noise_shape': anything(),
                     'seed': SEED}, [float_x_on_tensorflow])

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


# ---------------------------------------------------------------------------
# l2_normalize
# ---------------------------------------------------------------------------

SPECS['l2_normalize'] = ({'x': T, 'axis': axes('x')}, [float_x_on_tensorflow])

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


# ---------------------------------------------------------------------------
# in_top_k
# ---------------------------------------------------------------------------

SPECS['in_top_k'] = ({'predictions': T, 'targets': T, 'k': integer(0, allow_tensor=True)},
                     [in_top_k_shapes])

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
