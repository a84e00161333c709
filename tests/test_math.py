"""Elementwise math, reductions, comparisons, dot/batch_dot against the reference.

Every op is checked eagerly (one test per name); the symbolic path (placeholders
with a None batch -> K.function) runs the same specs grouped a few names per
compiled function to keep Theano compile time low.
"""
import numpy as np
import pytest

import reference as R
from helpers import bind, randn, randu, run_cases, select, spec, spec_names


def chunks(names, n):
    return [tuple(names[i:i + n]) for i in range(0, len(names), n)]


X = randn(3, 4)
X3 = randn(2, 3, 4, seed=2)
POS = randu(3, 4, low=0.2, high=2.)
Y = randn(3, 4, seed=1)
# integer-valued floats so that equality happens
A = np.array([[0., 1., 2., 3.], [1., 1., -1., 0.], [2., -2., 3., 3.]], dtype=np.float32)
B = np.array([[0., 2., 2., 1.], [1., 0., -1., 5.], [2., -2., 0., 3.]], dtype=np.float32)
HALF = np.array([[0.5, 1.5, 2.5, -0.5], [-1.5, 0.49, -2.51, 3.]], dtype=np.float32)
SIGNED = np.array([[-2., 0., 3.], [0.5, -0.1, 0.]], dtype=np.float32)
RELU_X = np.array([[-3., -1., 0., 0.4, 0.5], [1., 2., 5., 6., 7.]], dtype=np.float32)
ZEROS_SOME = np.array([[0., 1., 0.], [0., 0., 0.], [2., 3., -1.]], dtype=np.float32)
IDX = np.array([[2, 0], [1, 1], [0, 2]], dtype=np.int32)

NB = (0, 1)  # both inputs have a None batch in the symbolic path

SPECS = [
    # --- unary elementwise
    spec('square', lambda K, x: K.square(x), [X], R.square(X)),
    spec('abs', lambda K, x: K.abs(x), [X], R.abs(X)),
    spec('sqrt', lambda K, x: K.sqrt(x), [X], R.sqrt(X)),  # negatives clipped to 0
    spec('exp', lambda K, x: K.exp(x), [X], R.exp(X)),
    spec('log', lambda K, x: K.log(x), [POS], R.log(POS)),
    spec('round', lambda K, x: K.round(x), [HALF], R.round(HALF)),
    spec('sign', lambda K, x: K.sign(x), [SIGNED], R.sign(SIGNED)),
    spec('sin', lambda K, x: K.sin(x), [X], R.sin(X)),
    spec('cos', lambda K, x: K.cos(x), [X], R.cos(X)),
    spec('sigmoid', lambda K, x: K.sigmoid(x), [X * 4], R.sigmoid(X * 4)),
    spec('tanh', lambda K, x: K.tanh(x), [X], R.tanh(X)),
    spec('hard_sigmoid', lambda K, x: K.hard_sigmoid(x), [X * 4], R.hard_sigmoid(X * 4)),
    spec('softplus', lambda K, x: K.softplus(x), [X * 5], R.softplus(X * 5)),
    spec('softsign', lambda K, x: K.softsign(x), [X], R.softsign(X)),
    spec('elu', lambda K, x: K.elu(x), [X], R.elu(X)),
    spec('elu:alpha', lambda K, x: K.elu(x, 0.5), [X], R.elu(X, 0.5)),
    spec('relu', lambda K, x: K.relu(x), [RELU_X], R.relu(RELU_X)),
    spec('relu:alpha', lambda K, x: K.relu(x, alpha=0.1), [RELU_X], R.relu(RELU_X, 0.1)),
    spec('relu:max', lambda K, x: K.relu(x, max_value=5.), [RELU_X], R.relu(RELU_X, 0., 5.)),
    spec('relu:threshold', lambda K, x: K.relu(x, threshold=0.5), [RELU_X],
         R.relu(RELU_X, 0., None, 0.5)),
    spec('relu:all', lambda K, x: K.relu(x, alpha=0.2, max_value=6., threshold=1.), [RELU_X],
         R.relu(RELU_X, 0.2, 6., 1.)),
    spec('pow', lambda K, x: K.pow(x, 2), [X], R.pow(X, 2)),
    spec('pow:half', lambda K, x: K.pow(x, 0.5), [POS], R.pow(POS, 0.5)),
    spec('pow:neg', lambda K, x: K.pow(x, -1.), [POS], R.pow(POS, -1.)),
    spec('clip', lambda K, x: K.clip(x, -0.5, 0.7), [X], R.clip(X, -0.5, 0.7)),
    spec('clip:hi_below_lo', lambda K, x: K.clip(x, 0.3, -1.), [X], R.clip(X, 0.3, -1.)),
    spec('softmax', lambda K, x: K.softmax(x), [X], R.softmax(X)),
    spec('softmax:axis1', lambda K, x: K.softmax(x, axis=1), [X3], R.softmax(X3, 1)),
    spec('l2_normalize', lambda K, x: K.l2_normalize(x, axis=1), [X], R.l2_normalize(X, 1)),
    spec('l2_normalize:none', lambda K, x: K.l2_normalize(x), [X3], R.l2_normalize(X3)),
    spec('l2_normalize:list', lambda K, x: K.l2_normalize(x, axis=[1, 2]), [X3],
         R.l2_normalize(X3, [1, 2])),
    spec('l2_normalize:zero', lambda K, x: K.l2_normalize(x, axis=-1), [ZEROS_SOME],
         R.l2_normalize(ZEROS_SOME, -1)),
    spec('identity', lambda K, x: K.identity(x), [X], X),
    spec('cast', lambda K, x: K.cast(x, 'float64'), [X], X, dtype='float64'),
    spec('cast:to_int', lambda K, x: K.cast(x, 'int32'), [A], A.astype(np.int32)),
    spec('cast:from_int', lambda K, i: K.cast(i, 'float32'), [IDX], IDX.astype(np.float32)),
    spec('transpose', lambda K, x: K.transpose(x), [X3], R.transpose(X3), none_out=(2,)),
    spec('cumsum', lambda K, x: K.cumsum(x, axis=1), [X3], R.cumsum(X3, 1)),
    spec('cumsum:axis0', lambda K, x: K.cumsum(x), [X], R.cumsum(X, 0)),
    spec('cumprod', lambda K, x: K.cumprod(x, axis=-1), [X3], R.cumprod(X3, -1)),
    spec('cumprod:axis0', lambda K, x: K.cumprod(x), [X], R.cumprod(X, 0)),
    # --- reductions
    spec('max', lambda K, x: K.max(x, axis=1), [X3], R.max(X3, 1)),
    spec('max:all', lambda K, x: K.max(x), [X3], R.max(X3), none_out=()),
    spec('min', lambda K, x: K.min(x, axis=-1, keepdims=True), [X3], R.min(X3, -1, True)),
    spec('min:list', lambda K, x: K.min(x, axis=[1, 2]), [X3], R.min(X3, [1, 2])),
    spec('sum', lambda K, x: K.sum(x, axis=[0, 2]), [X3], R.sum(X3, [0, 2]), none_out=()),
    spec('sum:all', lambda K, x: K.sum(x), [X3], R.sum(X3), none_out=()),
    spec('sum:keep', lambda K, x: K.sum(x, axis=-1, keepdims=True), [X3],
         R.sum(X3, -1, True)),
    spec('prod', lambda K, x: K.prod(x, axis=1), [X3], R.prod(X3, 1)),
    spec('prod:all_keep', lambda K, x: K.prod(x, keepdims=True), [X], R.prod(X, None, True),
         none_out=()),
    spec('mean', lambda K, x: K.mean(x, axis=1), [X3], R.mean(X3, 1)),
    spec('mean:all', lambda K, x: K.mean(x), [X3], R.mean(X3), none_out=()),
    spec('var', lambda K, x: K.var(x, axis=-1), [X3], R.var(X3, -1)),
    spec('var:keep_list', lambda K, x: K.var(x, axis=[1, 2], keepdims=True), [X3],
         R.var(X3, [1, 2], True)),
    spec('std', lambda K, x: K.std(x, axis=1), [X3], R.std(X3, 1)),
    spec('std:all', lambda K, x: K.std(x), [X], R.std(X), none_out=()),
    spec('logsumexp', lambda K, x: K.logsumexp(x, axis=-1), [X3 * 30], R.logsumexp(X3 * 30, -1),
         rtol=1e-5, atol=1e-4),
    spec('logsumexp:all_keep', lambda K, x: K.logsumexp(x, keepdims=True), [X],
         R.logsumexp(X, None, True), none_out=()),
    spec('any', lambda K, x: K.any(x, axis=1), [ZEROS_SOME], R.any(ZEROS_SOME, 1)),
    spec('any:all', lambda K, x: K.any(x), [ZEROS_SOME], R.any(ZEROS_SOME), none_out=()),
    spec('all', lambda K, x: K.all(x, axis=-1, keepdims=True), [ZEROS_SOME],
         R.all(ZEROS_SOME, -1, True)),
    spec('all:axis0', lambda K, x: K.all(x + 1., axis=0), [ZEROS_SOME],
         R.all(ZEROS_SOME + 1, 0), none_out=()),
    spec('argmax', lambda K, x: K.argmax(x), [X3], R.argmax(X3)),
    spec('argmax:axis1', lambda K, x: K.argmax(x, axis=1), [X3], R.argmax(X3, 1)),
    spec('argmin', lambda K, x: K.argmin(x), [X3], R.argmin(X3)),
    spec('argmin:axis0', lambda K, x: K.argmin(x, axis=0), [X], R.argmin(X, 0), none_out=()),
    # --- binary
    spec('equal', lambda K, x, y: K.equal(x, y), [A, B], R.equal(A, B), none_in=NB),
    spec('not_equal', lambda K, x, y: K.not_equal(x, y), [A, B], R.not_equal(A, B), none_in=NB),
    spec('greater', lambda K, x, y: K.greater(x, y), [A, B], R.greater(A, B), none_in=NB),
    spec('greater_equal', lambda K, x, y: K.greater_equal(x, y), [A, B], R.greater_equal(A, B),
         none_in=NB),
    spec('less', lambda K, x, y: K.less(x, y), [A, B], R.less(A, B), none_in=NB),
    spec('less_equal', lambda K, x, y: K.less_equal(x, y), [A, B], R.less_equal(A, B),
         none_in=NB),
    spec('maximum', lambda K, x, y: K.maximum(x, y), [X, Y], R.maximum(X, Y), none_in=NB),
    spec('minimum', lambda K, x, y: K.minimum(x, y), [X, Y], R.minimum(X, Y), none_in=NB),
    spec('dot', lambda K, x, w: K.dot(x, w), [X, randn(4, 5, seed=3)], R.dot(X, randn(4, 5, seed=3))),
    spec('dot:3d_2d', lambda K, x, w: K.dot(x, w), [X3, randn(4, 5, seed=3)],
         R.dot(X3, randn(4, 5, seed=3))),
    spec('dot:3d_3d', lambda K, x, w: K.dot(x, w), [X3, randn(3, 4, 2, seed=4)],
         R.dot(X3, randn(3, 4, 2, seed=4))),
    spec('dot:2d_1d', lambda K, x, w: K.dot(x, w), [X, randn(4, seed=5)],
         R.dot(X, randn(4, seed=5))),
    spec('batch_dot', lambda K, x, y: K.batch_dot(x, y), [X3, randn(2, 4, 5, seed=6)],
         R.batch_dot(X3, randn(2, 4, 5, seed=6)), none_in=NB),
    spec('batch_dot:2d_2d', lambda K, x, y: K.batch_dot(x, y), [X, Y], R.batch_dot(X, Y),
         none_in=NB),
    spec('batch_dot:axes1', lambda K, x, y: K.batch_dot(x, y, axes=1), [X, Y],
         R.batch_dot(X, Y, 1), none_in=NB),
    spec('batch_dot:axes22', lambda K, x, y: K.batch_dot(x, y, axes=(2, 2)),
         [X3, randn(2, 5, 4, seed=7)], R.batch_dot(X3, randn(2, 5, 4, seed=7), (2, 2)),
         none_in=NB),
    spec('batch_dot:axes12', lambda K, x, y: K.batch_dot(x, y, axes=[1, 2]),
         [X3, randn(2, 5, 3, seed=8)], R.batch_dot(X3, randn(2, 5, 3, seed=8), (1, 2)),
         none_in=NB),
    spec('batch_dot:3d_2d', lambda K, x, y: K.batch_dot(x, y), [X3, randn(2, 4, seed=9)],
         R.batch_dot(X3, randn(2, 4, seed=9)), none_in=NB),
    spec('batch_dot:4d_3d', lambda K, x, y: K.batch_dot(x, y, axes=(3, 1)),
         [randn(2, 3, 2, 4, seed=10), randn(2, 4, 3, seed=11)],
         R.batch_dot(randn(2, 3, 2, 4, seed=10), randn(2, 4, 3, seed=11), (3, 1)), none_in=NB),
    spec('gather', lambda K, r, i: K.gather(r, i), [randn(5, 3), IDX],
         R.gather(randn(5, 3), IDX), none_in=(1,)),
    spec('gather:1d', lambda K, r, i: K.gather(r, i), [randn(6, 2, 3), IDX[:, 0]],
         R.gather(randn(6, 2, 3), IDX[:, 0]), none_in=(1,)),
]

NAMES = spec_names(SPECS)


@pytest.mark.parametrize('name', NAMES)
def test_eager(K, name):
    run_cases(K, bind(K, select(SPECS, name), symbolic=False))


@pytest.mark.parametrize('names', chunks(NAMES, 12), ids=lambda n: n[0] + '..')
def test_symbolic_grouped(K, names):
    specs = [s for n in names for s in select(SPECS, n)]
    run_cases(K, bind(K, specs, eager=False))


def test_math_on_variable_float64(K):
    """floatx float64: variables and results follow it."""
    K.set_floatx('float64')
    x = R.f64(X)
    v = K.variable(x)
    assert K.dtype(v) == 'float64'
    out = K.eval(K.exp(v) + K.square(v))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, np.exp(x) + x ** 2, rtol=1e-12)


def test_operator_overloads(K):
    x, y = K.variable(X), K.variable(Y)
    np.testing.assert_allclose(K.eval(x * y + x - y / (K.abs(y) + 1.)),
                               X * Y + X - Y / (np.abs(Y) + 1.), atol=1e-5)


def test_nan_stays_nan_through_every_engine(K):
    """A NaN in stays NaN out (and is true for any / all), as in numpy: CNTK's own sqrt,
    element_max and comparisons turn it into 0 (docs/semantics.md)."""
    x = np.array([np.nan, -1., 0., 2.], dtype='float32')
    xt = K.constant(x)
    for name in ('sqrt', 'sign', 'elu', 'std', 'any', 'all'):
        got = np.asarray(K.eval(getattr(K, name)(xt)), dtype='float64')
        want = np.asarray(getattr(R, name)(x), dtype='float64')
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, equal_nan=True,
                                   err_msg=name)
    # the gradient of sqrt where x is a number is unchanged
    v = K.variable(np.array([4., 9.], dtype='float32'))
    g = K.eval(K.gradients(K.sum(K.sqrt(v)), [v])[0])
    np.testing.assert_allclose(g, [0.25, 1. / 6.], rtol=1e-5)
