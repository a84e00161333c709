"""The Keras 2.3.1 engine contract, on every engine (see docs/semantics.md).

What Keras' model library reads on backend tensors (``_keras_shape``,
``_uses_learning_phase``, ``is_keras_tensor``) and the backend behaviours
where Keras 2.3.1's own backends define the answer (relu's rule, ``prod`` of a
list of scalar tensors, dtypes, ``arange`` from a tensor, ``bias_add`` with a
full-rank bias, ``normalize_batch_in_training`` over Keras' axes).
"""
import numpy as np
import pytest

import reference as R
from keras_backend import engines
from helpers import assert_values, randn

X = randn(4, 3, seed=40)


# ---------------------------------------------------------------------------
# Attributes Keras' engine reads
# ---------------------------------------------------------------------------

def test_keras_shape_on_placeholders_and_variables(K):
    p = K.placeholder(shape=(None, 3, 2))
    assert p._keras_shape == (None, 3, 2) == K.int_shape(p)
    assert p._uses_learning_phase is False
    v = K.variable(np.zeros((2, 5), 'float32'))
    assert v._keras_shape == (2, 5) == K.int_shape(v)
    assert v._uses_learning_phase is False
    p2 = K.placeholder(ndim=2)
    assert p2._keras_shape == (None, None)


def test_int_shape_prefers_keras_shape(K):
    # Keras' engine sets _keras_shape on layer outputs; int_shape reports it.
    y = K.placeholder(shape=(None, 3)) * 2
    y._keras_shape = (7, 3)
    assert K.int_shape(y) == (7, 3)


def test_keras_shape_on_op_results_keeps_none(K):
    p = K.placeholder(shape=(None, 3))
    r = K.repeat_elements(p, 2, axis=1)
    assert r._keras_shape == (None, 6) == K.int_shape(r)
    ref = K.placeholder(shape=(None, 4))
    idx = K.placeholder(shape=(None,), dtype='int32')
    g = K.gather(ref, idx)
    assert K.int_shape(g) == (None, 4)
    assert getattr(g, '_keras_shape', K.int_shape(g)) == (None, 4)
    f = K.function([p, ref, idx], [r, g])
    ref_val = randn(5, 4, seed=41)
    out_r, out_g = f([X, ref_val, np.array([4, 0, 2], 'int32')])
    np.testing.assert_allclose(out_r, np.repeat(X, 2, axis=1), atol=1e-6)
    np.testing.assert_allclose(out_g, ref_val[[4, 0, 2]], atol=1e-6)


def test_is_keras_tensor_follows_keras_history(K):
    p = K.placeholder(shape=(None, 3))
    v = K.variable(X)
    assert K.is_keras_tensor(p) is False
    assert K.is_keras_tensor(v) is False
    y = p * 2
    assert K.is_keras_tensor(y) is False
    y._keras_history = (None, 0, 0)    # what a Keras layer sets on its outputs
    assert K.is_keras_tensor(y) is True
    for bad in (X, 3.0, [1, 2]):
        with pytest.raises(ValueError, match='type'):
            K.is_keras_tensor(bad)


def test_uses_learning_phase_marks_phase_dependent_results(K):
    p = K.placeholder(shape=(None, 3))
    out = K.in_train_phase(p * 2, p * 3)
    assert getattr(out, '_uses_learning_phase', False) is True
    assert getattr(p * 2, '_uses_learning_phase', False) is False
    f = K.function([p, K.learning_phase()], [out])
    np.testing.assert_allclose(f([X, 1])[0], X * 2, atol=1e-6)
    np.testing.assert_allclose(f([X, 0])[0], X * 3, atol=1e-6)


def test_reshape_carries_learning_phase(K):
    # Keras' Network reads _uses_learning_phase on every tensor that has
    # _keras_shape: TimeDistributed calls a wrapped model on K.reshape's result
    p = K.placeholder(shape=(None, 3, 2))
    phased = K.in_train_phase(p * 2, p * 3)
    outs = [K.reshape(p, (-1, 2)), K.reshape(phased, (-1, 2))]
    for out, want in zip(outs, [False, True]):
        if hasattr(out, '_keras_shape'):
            assert out._uses_learning_phase is want
    # ... but not on a plain op's result: TimeDistributed's step reads the
    # attribute, when present, against a name it never binds (Keras 2.3.1)
    w = K.variable(np.ones((2, 4), 'float32'))
    assert not hasattr(K.dot(K.reshape(p, (-1, 2)), w), '_uses_learning_phase')
    xs = randn(2, 3, 2, seed=43)
    got = K.function([p, K.learning_phase()], outs)([xs, 1])
    np.testing.assert_allclose(got[0], xs.reshape(-1, 2), atol=1e-6)
    np.testing.assert_allclose(got[1], (xs * 2).reshape(-1, 2), atol=1e-6)


def test_rnn_outputs_carry_learning_phase_of_step(K):
    seq = K.placeholder(shape=(None, 4, 3))
    init = K.placeholder(shape=(None, 3))

    def plain(x, states):
        h = x + states[0]
        return h, [h]

    def with_dropout(x, states):
        h = K.in_train_phase(K.dropout(x, 0.5) + states[0], x + states[0])
        return h, [h]

    last, outputs, _ = K.rnn(plain, seq, [init])
    assert getattr(last, '_uses_learning_phase', False) is False
    last, outputs, _ = K.rnn(with_dropout, seq, [init])
    assert last._uses_learning_phase is True
    assert outputs._uses_learning_phase is True
    xs = randn(2, 4, 3, seed=42)
    f = K.function([seq, init, K.learning_phase()], [last])
    np.testing.assert_allclose(f([xs, np.zeros((2, 3), 'float32'), 0])[0], xs.sum(axis=1),
                               atol=1e-5)


def test_rnn_step_sees_the_real_shape_of_a_mislabelled_state(K):
    # Keras 2.3.1's ConvRNN2D records its initial state's _keras_shape from the global
    # image_data_format: a channels_first layer under channels_last gets (None, 4, 4, 6)
    # for a (None, 5, 4, 4) state. Its step convolves the state channels_first.
    seq = K.placeholder(shape=(None, 3, 5, 4, 4))
    init = K.sum(K.zeros_like(seq), axis=1)
    init._keras_shape = (None, 4, 4, 5)
    kernel_val = randn(3, 3, 5, 5, seed=43) * 0.2
    # Theano convolves (Keras' convention): hand it the kernel flipped
    flipped = kernel_val[::-1, ::-1] if K.backend() == 'theano' else kernel_val
    kernel = K.variable(np.ascontiguousarray(flipped))

    def step(x, states):
        h = K.tanh(x + K.conv2d(states[0], kernel, padding='same',
                                data_format='channels_first'))
        return h, [h]

    last, _, _ = K.rnn(step, seq, [init])
    xs = randn(2, 3, 5, 4, 4, seed=44)
    got = K.function([seq], [last])([xs])[0]
    h = np.zeros((2, 5, 4, 4), 'float32')
    for t in range(3):
        h = np.tanh(xs[:, t] + R.conv2d(h, kernel_val, padding='same',
                                        data_format='channels_first'))
    np.testing.assert_allclose(got, h, atol=1e-5)


# ---------------------------------------------------------------------------
# Behaviours defined by Keras 2.3.1's backends
# ---------------------------------------------------------------------------

RELU_CASES = [(0., None, 0.), (0.1, None, 0.), (0., 0., 0.), (0.2, 0., 0.),
              (0.3, None, -0.5), (0.3, 1.0, -0.5), (0., 6., 0.), (0.1, 2.0, 0.5),
              (0., None, 0.7)]


def keras_relu(x, alpha, max_value, threshold):
    """Keras 2.3.1's relu written out: kept part, its clip, slope from the threshold."""
    x = x.astype(np.float64)
    kept = x * (x > threshold) if threshold != 0 else np.maximum(x, 0)
    if max_value is not None:
        kept = np.clip(kept, 0, max_value)
    if alpha != 0:
        kept = kept - alpha * np.maximum(threshold - x, 0)
    return kept


def test_reference_relu_is_keras_rule():
    xs = np.linspace(-2, 2, 41)
    for args in RELU_CASES:
        np.testing.assert_allclose(R.relu(xs, *args), keras_relu(xs, *args), atol=1e-12,
                                   err_msg=str(args))


def test_relu_matches_keras_rule(K):
    xs = (np.linspace(-2, 2, 16).reshape(4, 4) + 0.013).astype('float32')
    p = K.placeholder(shape=(None, 4))
    outs = [K.relu(p, *args) for args in RELU_CASES]
    values = K.function([p], outs)([xs])
    for args, got in zip(RELU_CASES, values):
        np.testing.assert_allclose(got, keras_relu(xs, *args), atol=1e-6, err_msg=str(args))


def test_prod_of_list_of_scalar_tensors(K):
    # BatchNormalization (Keras 2.3.1, external backend) computes its sample size so.
    p = K.placeholder(shape=(None, 3, 4))
    size = K.prod([K.shape(p)[0], K.shape(p)[1]])
    size_mixed = K.prod([K.shape(p)[2], 5])
    out = K.function([p], [size, size_mixed])([np.zeros((2, 3, 4), 'float32')])
    assert int(out[0]) == 6 and int(out[1]) == 20


def test_variable_dtypes_bool_and_float16(K):
    b = K.variable(np.array([True, False, True]), dtype='bool')
    assert K.dtype(b) == 'bool'
    np.testing.assert_array_equal(np.asarray(K.eval(b)).astype(bool), [True, False, True])
    h = K.variable(np.ones((2, 2)), dtype='float16')
    assert K.dtype(h) == 'float16'
    np.testing.assert_allclose(K.eval(h), np.ones((2, 2)))


@pytest.mark.parametrize('make', ['placeholder', 'variable', 'zeros', 'cast'])
def test_unknown_dtype_is_type_error(K, make):
    with pytest.raises(TypeError, match='dtype'):
        if make == 'placeholder':
            K.placeholder(shape=(2,), dtype='float31')
        elif make == 'variable':
            K.variable(np.zeros(2), dtype='float31')
        elif make == 'zeros':
            K.zeros((2,), dtype='float31')
        else:
            K.cast(K.variable(np.zeros(2)), 'float31')


def test_arange_from_scalar_tensor(K):
    start = K.placeholder(shape=(), dtype='int32')
    f = K.function([start], [K.arange(start), K.arange(start, 6)])
    a, b = f([np.array(4, 'int32')])
    np.testing.assert_array_equal(np.asarray(a), np.arange(4))
    np.testing.assert_array_equal(np.asarray(b), np.arange(4, 6))
    a, b = f([np.array(-2, 'int32')])
    assert np.asarray(a).shape == (0,)
    np.testing.assert_array_equal(np.asarray(b), np.arange(-2, 6))


@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
@pytest.mark.parametrize('x_shape', [(2, 3, 4), (2, 3, 4, 5), (2, 2, 3, 4, 5)])
def test_bias_add_full_rank_bias(K, x_shape, data_format):
    x = randn(*x_shape, seed=43)
    # Keras lays a full-rank bias out as (spatial..., channels) in both formats
    channels_last_shape = x_shape[2:] + x_shape[1:2] if data_format == 'channels_first' \
        else x_shape[1:]
    bias = randn(*channels_last_shape, seed=44)
    got = K.eval(K.bias_add(K.variable(x), K.variable(bias), data_format=data_format))
    np.testing.assert_allclose(got, R.bias_add(x, bias, data_format), atol=1e-5)


def test_reference_bias_add_full_rank_channels_first_is_keras_reshape():
    x = np.zeros((1, 2, 3, 4))
    bias = np.arange(24.).reshape(3, 4, 2)        # (spatial..., channels)
    np.testing.assert_array_equal(R.bias_add(x, bias, 'channels_first'),
                                  bias.reshape(1, 2, 3, 4))


@pytest.mark.parametrize('axes', [[0], [0, 1, 2], [0, 2, 3], [1, 2, 3], [0, 1]])
def test_normalize_batch_in_training_keras_axes(K, axes):
    x = randn(3, 4, 2, 5, seed=45) * 2 + 1
    kept = [d for i, d in enumerate(x.shape) if i not in axes]
    gamma = randn(*kept, seed=46)
    beta = randn(*kept, seed=47)
    outs = K.normalize_batch_in_training(K.variable(x), K.variable(gamma), K.variable(beta),
                                         axes, epsilon=1e-3)
    want = R.normalize_batch_in_training(x, gamma, beta, axes, 1e-3)
    for got, exp in zip(outs, want):
        np.testing.assert_allclose(K.eval(got), exp, atol=1e-4, rtol=1e-4)


def test_function_with_two_updates_of_one_variable(K):
    """A layer shared between two inputs (Keras' shared BatchNormalization) gives
    ``function`` two updates of the same variable: Keras' Theano backend kept the last
    one, and the function must build and run on every engine, leaving the last value."""
    v = K.variable(np.zeros((2,), 'float32'))
    x = K.placeholder((None, 2))
    last = K.mean(x, axis=0) * 5.
    f = K.function([x], [K.sum(x)], updates=[K.update(v, v + 1.), K.update(v, last)])
    out = f([np.ones((3, 2), 'float32')])
    assert_values(out[0], 6.)
    assert_values(K.get_value(v), np.full((2,), 5., 'float32'))


def test_gradients_at_ties_follow_tensorflow(K):
    """relu at 0, maximum/minimum at a tie and clip on a bound: TensorFlow sends the whole
    gradient one way (0 for relu, to x for maximum/minimum, 1 inside clip's closed range);
    the adapters of the engines that follow TensorFlow's conventions (the engine table's
    ``keras2_known_as``: JAX, PyTorch) follow it (Keras 2.3.1's CNN on digits, whose zero
    pixels give exact zeros before the relu, trains to TensorFlow's numbers only so)."""
    if K.backend() not in engines.following('tensorflow'):
        pytest.skip('the tie rules checked are TensorFlow\'s (the engines that follow its '
                    'conventions follow them)')
    x = K.placeholder((4,))
    y = K.placeholder((4,))
    outs = [K.relu(x), K.maximum(x, y), K.minimum(x, y), K.clip(x, 0., 1.)]
    grads = [K.gradients(K.sum(o), [x])[0] for o in outs]
    got = K.function([x, y], grads)([np.array([0., 1., -1., 2.], 'float32'),
                                      np.array([0., 0., 0., 0.], 'float32')])
    assert_values(got[0], np.array([0., 1., 0., 1.], 'float32'))
    assert_values(got[1], np.array([1., 1., 0., 1.], 'float32'))
    assert_values(got[2], np.array([1., 0., 1., 0.], 'float32'))
    assert_values(got[3], np.array([1., 1., 0., 0.], 'float32'))
