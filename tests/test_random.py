"""Random ops: statistics on ~10^4 samples, ranges, dtypes, dropout scaling."""
import numpy as np
import pytest

from helpers import eval_sym

SHAPE = (100, 100)


def test_random_normal(K):
    x = K.random_normal(SHAPE, mean=1.5, stddev=2., seed=1)
    assert K.int_shape(x) == SHAPE
    assert K.dtype(x) == K.floatx()
    v = K.eval(x)
    assert v.dtype == np.float32 and v.shape == SHAPE
    assert abs(v.mean() - 1.5) < 0.08
    assert abs(v.std() - 2.) < 0.08
    v64 = K.eval(K.random_normal((10,), dtype='float64'))
    assert v64.dtype == np.float64


def test_random_uniform(K):
    v = K.eval(K.random_uniform(SHAPE, minval=-1., maxval=3., seed=2))
    assert v.shape == SHAPE and v.dtype == np.float32
    assert v.min() >= -1. and v.max() < 3.
    assert abs(v.mean() - 1.) < 0.06
    assert abs(v.std() - 4. / np.sqrt(12.)) < 0.05
    # roughly uniform: each quarter of the range holds about a quarter of the samples
    hist = np.histogram(v, bins=4, range=(-1., 3.))[0] / float(v.size)
    assert np.all(np.abs(hist - 0.25) < 0.03)


def test_random_binomial(K):
    v = K.eval(K.random_binomial(SHAPE, p=0.3, seed=3))
    assert v.shape == SHAPE and v.dtype == np.float32
    assert set(np.unique(v)).issubset({0., 1.})
    assert abs(v.mean() - 0.3) < 0.03   # 1 with probability p
    assert K.eval(K.random_binomial((50,), p=0.)).sum() == 0.
    assert K.eval(K.random_binomial((50,), p=1.)).sum() == 50.


def test_truncated_normal(K):
    v = K.eval(K.truncated_normal(SHAPE, mean=-1., stddev=0.5, seed=4))
    assert v.shape == SHAPE and v.dtype == np.float32
    assert v.min() >= -1. - 2 * 0.5 - 1e-6 and v.max() <= -1. + 2 * 0.5 + 1e-6
    assert abs(v.mean() + 1.) < 0.03
    # std of a normal truncated at 2 sigma: 0.8796 sigma
    assert abs(v.std() - 0.8796 * 0.5) < 0.03


def test_random_with_symbolic_shape_inside_function(K):
    """Random ops built from a placeholder's runtime shape draw new values per call."""
    (a,) = eval_sym(K, lambda p: p + K.random_uniform(K.shape(p)), [np.zeros((50, 40), np.float32)])
    (b,) = eval_sym(K, lambda p: p + K.random_uniform(K.shape(p)), [np.zeros((50, 40), np.float32)])
    assert a.shape == (50, 40)
    assert 0. <= a.min() and a.max() < 1.
    assert not np.allclose(a, b)


def test_dropout_scaling_and_rate(K):
    x = np.ones(SHAPE, np.float32) * 2.
    v = K.eval(K.dropout(K.variable(x), 0.25, seed=5))
    assert v.shape == SHAPE
    vals = set(np.unique(v))
    assert vals.issubset({0., np.float32(2. / 0.75)})
    assert abs(np.mean(v == 0.) - 0.25) < 0.03
    assert abs(v.mean() - 2.) < 0.1   # inverted dropout keeps the mean


def test_dropout_noise_shape(K):
    x = np.ones((200, 30), np.float32)
    v = K.eval(K.dropout(K.variable(x), 0.5, noise_shape=(200, 1), seed=6))
    # whole rows are kept or dropped together
    assert np.all((v == 0.).all(axis=1) | (v == 2.).all(axis=1))
    assert 0.3 < np.mean(v[:, 0] == 0.) < 0.7


def test_dropout_noise_shape_with_tensor_entry(K):
    # Keras' Dropout layer fills a None entry of noise_shape with K.shape(x)[i]
    p = K.placeholder(shape=(None, 30))
    out = K.dropout(p, 0.5, noise_shape=[K.shape(p)[0], 1], seed=7)
    v = K.function([p], [out])([np.ones((200, 30), np.float32)])[0]
    assert v.shape == (200, 30)
    assert np.all((v == 0.).all(axis=1) | (v == 2.).all(axis=1))
    assert 0.3 < np.mean(v[:, 0] == 0.) < 0.7


def test_dropout_level_out_of_range(K):
    x = K.variable(np.ones((3, 3), np.float32))
    for level in (1., 1.5, -0.1):
        with pytest.raises(ValueError):
            K.dropout(x, level)


def test_dropout_symbolic(K):
    (v,) = eval_sym(K, lambda p: K.dropout(p, 0.5), [np.ones(SHAPE, np.float32)])
    assert set(np.unique(v)).issubset({0., 2.})
    assert abs(np.mean(v == 0.) - 0.5) < 0.03


@pytest.mark.parametrize('op', ['random_normal', 'random_uniform', 'random_binomial',
                                'truncated_normal'])
def test_unseeded_draws_follow_numpys_global_seed(K, op):
    # Keras 2.3.1's backends seed an op given seed=None from np.random, so that
    # np.random.seed(n) reproduces a model's initial weights (Keras' own
    # optimizers_test relies on it); a different global seed draws differently.
    def draw(global_seed):
        np.random.seed(global_seed)
        kwargs = {'p': 0.5} if op == 'random_binomial' else {}
        return K.eval(getattr(K, op)((20, 30), **kwargs))

    first, again, other = draw(7), draw(7), draw(8)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


@pytest.mark.parametrize('op, args, check', [
    ('random_uniform', (-0.5, 0.5), lambda v: v.min() >= -0.5 and v.max() < 0.5
     and abs(v.std() - 1. / np.sqrt(12.)) < 0.01),
    ('random_normal', (0.5, 2.), lambda v: abs(v.mean() - 0.5) < 0.08
     and abs(v.std() - 2.) < 0.08),
    ('truncated_normal', (0., 1.), lambda v: np.abs(v).max() <= 2. + 1e-6
     and abs(v.std() - 0.8796) < 0.03),
])
def test_weights_drawn_in_a_layers_name_scope(K, op, args, check):
    # Keras 2.3.1's add_weight: K.variable(initializer(shape)) inside K.name_scope(layer):
    # the variable holds one draw from the distribution, the same draw for the same seed
    def weight(seed):
        with K.name_scope('dense_1'):
            return K.get_value(K.variable(getattr(K, op)(SHAPE, *args, seed=seed)))

    first, again, other = weight(11), weight(11), weight(12)
    assert first.shape == SHAPE and first.dtype == np.float32
    assert check(first)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


@pytest.mark.parametrize('name,args', [('random_normal', ((2, 3),)),
                                       ('truncated_normal', ((2, 3),)),
                                       ('random_normal_variable', ((2, 3), 0., 1.))])
def test_a_normal_draw_refuses_an_integer_dtype(K, name, args):
    """A ValueError naming 'dtype' on every engine (Keras 2's TensorFlow backend raised one;
    engines gave their own errors, or an integer variable); 'double' is float64."""
    with pytest.raises(ValueError, match='dtype'):
        getattr(K, name)(*args, dtype='int32')
    assert K.dtype(getattr(K, name)(*args, dtype='double')) == 'float64'


@pytest.mark.parametrize('op, args', [('random_normal', (0., 2.)), ('random_uniform', (-1., 3.)),
                                      ('truncated_normal', (1., 0.5)),
                                      ('random_binomial', (0.3,))])
def test_jax_eager_draw_equals_the_traced_draw(K, op, args):
    """JAX: a random node evaluated outside a function (a weight's initial value; drawn as
    a flat prefix by one program per power-of-two length) gives the values the same
    seeded node gives inside a compiled function (drawn in its own shape)."""
    if K.backend() != 'jax':
        pytest.skip('the flat-prefix eager draw is the JAX adapter\'s')
    shape = (3, 5, 7)
    eager = K.eval(getattr(K, op)(shape, *args, seed=11))
    traced = K.function([], [getattr(K, op)(shape, *args, seed=11)])([])[0]
    assert eager.shape == shape
    np.testing.assert_array_equal(eager, traced)
    assert len(np.unique(eager)) > 1
    # shapes of 65..128 elements share one compiled draw
    import sys
    draws = sys.modules['keras_backend.jax_backend.core']._EAGER_DRAWS
    before = len(draws)
    for other in ((11, 11), (2, 60), (100,)):
        assert K.eval(getattr(K, op)(other, *args, seed=3)).shape == other
    assert len(draws) - before <= 1


@pytest.mark.parametrize('op, args', [('random_uniform', (-1., 3.)), ('random_normal', (0., 2.))])
def test_jax_eager_draws_advance_the_key_as_the_traced_draws(K, op, args):
    """JAX: the eager draw's program also gives the key's next value (no split compiled
    apart); evaluating a node again draws what a compiled function's second call draws,
    for a small shape (a prefix of the shortest draw) and one above it."""
    if K.backend() != 'jax':
        pytest.skip('the flat-prefix eager draw is the JAX adapter\'s')
    for shape in ((4, 6), (300, 257)):
        eager_node = getattr(K, op)(shape, *args, seed=5)
        first, second = K.eval(eager_node), K.eval(eager_node)
        f = K.function([], [getattr(K, op)(shape, *args, seed=5)])
        np.testing.assert_array_equal(first, f([])[0])
        np.testing.assert_array_equal(second, f([])[0])
        assert not np.array_equal(first, second)
