"""What Keras 2.3.1 and the Keras 2 ecosystem pass to the backend, on every engine.

Each test is a call that Keras 2.3.1's own backends accepted (numpy scalars and
0-d arrays where a number goes, scalar tensors and unknown sizes where a size
goes, repeated name scopes) and that an earlier version of the check layer or
an adapter refused; each asserts the values against numpy.
"""
import numpy as np
import pytest

from helpers import assert_values


def _run(K, inputs, outputs, values):
    return K.function(inputs, outputs)(values)


# ---------------------------------------------------------------------------
# Numbers: numpy scalars and 0-d arrays (Keras' layers store alpha/theta so)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize('alpha', [np.array(0.3, 'float32'), np.float32(0.3), np.float64(0.3)],
                         ids=['0d-array', 'float32', 'float64'])
def test_relu_elu_alpha_numpy(K, alpha):
    x = np.array([[-2., -0.5, 0., 1.5]], 'float32')
    xp = K.placeholder((None, 4))
    relu, elu = _run(K, [xp], [K.relu(xp, alpha=alpha), K.elu(xp, alpha=alpha)], [x])
    assert_values(relu, np.where(x > 0, x, 0.3 * x))
    assert_values(elu, np.where(x > 0, x, 0.3 * (np.exp(x) - 1)))


@pytest.mark.parametrize('setter,value', [('set_floatx', 123), ('set_floatx', None),
                                          ('set_image_data_format', 123)])
def test_config_setters_refuse_non_strings_with_value_error(K, setter, value):
    before = (K.floatx(), K.image_data_format())
    with pytest.raises(ValueError):
        getattr(K, setter)(value)
    assert (K.floatx(), K.image_data_format()) == before


# ---------------------------------------------------------------------------
# Sizes: scalar tensors (K.shape(x)[i]) mixed with ints, unknown sizes
# ---------------------------------------------------------------------------

def test_tile_with_batch_size_tensor(K):
    """``K.tile(K.expand_dims(e, 0), [K.shape(x)[0], 1, 1])``: one copy of ``e`` per sample."""
    e_value = np.arange(6, dtype='float32').reshape(2, 3)
    e = K.variable(e_value)
    x = K.placeholder((None, 3))
    out = K.tile(K.expand_dims(e, 0), [K.shape(x)[0], 1, 1])
    got, = _run(K, [x], [out], [np.zeros((4, 3), 'float32')])
    assert_values(got, np.tile(e_value[None], (4, 1, 1)))


def test_tile_with_numpy_ints(K):
    e_value = np.arange(6, dtype='float32').reshape(2, 3)
    out = K.tile(K.variable(e_value), (np.int64(2), np.array(3)))
    assert_values(K.eval(out), np.tile(e_value, (2, 3)))


def test_reshape_to_sizes_of_an_unknown_shape(K):
    """``K.reshape(y, (K.shape(x)[0], K.shape(x)[1]))`` with axis 1 of x unknown."""
    x = K.placeholder((None, None))
    y = K.placeholder((None, None))
    out = K.reshape(y, (K.shape(x)[0], K.shape(x)[1]))
    yv = np.arange(6, dtype='float32').reshape(3, 2)
    got, = _run(K, [x, y], [out], [np.zeros((2, 3), 'float32'), yv])
    assert_values(got, yv.reshape(2, 3))


@pytest.mark.parametrize('rate', [0.0, 1.0])
def test_random_binomial_with_a_rate_tensor(K, rate):
    """``p`` computed in the graph: p = 0 gives zeros, p = 1 ones, in the shape of ``x``."""
    x = K.placeholder((None, 3))
    p = K.mean(x) * 0 + rate
    out = K.random_binomial(K.shape(x), p=p)
    got, = _run(K, [x], [out], [np.ones((5, 3), 'float32')])
    assert_values(got, np.full((5, 3), rate, 'float32'))


def test_random_binomial_rate_tensor_draws(K):
    x = K.placeholder((None, 100))
    out = K.random_binomial(K.shape(x), p=K.mean(x) * 0.25, seed=1)
    got, = _run(K, [x], [out], [np.ones((200, 100), 'float32')])
    assert set(np.unique(got)) <= {0.0, 1.0}
    assert abs(got.mean() - 0.25) < 0.02


def test_repeat_with_a_count_tensor(K):
    x_value = np.arange(6, dtype='float32').reshape(2, 3)
    x = K.placeholder((None, 3))
    n = K.shape(x)[0] + 1          # 3 for a batch of 2
    got, = _run(K, [x], [K.repeat(x, n)], [x_value])
    assert_values(got, np.repeat(x_value[:, None, :], 3, axis=1))


def test_random_uniform_and_normal_with_tensor_shape_items(K):
    x = K.placeholder((None, 4))
    u = K.random_uniform((K.shape(x)[0], 4), 2.0, 3.0, seed=3)
    n = K.random_normal([K.shape(x)[0], np.int32(4)], seed=3)
    got_u, got_n = _run(K, [x], [u, n], [np.zeros((6, 4), 'float32')])
    assert got_u.shape == (6, 4) and got_n.shape == (6, 4)
    assert np.all((got_u >= 2.0) & (got_u < 3.0))
    assert np.isfinite(got_n).all() and got_n.std() > 0.1


@pytest.mark.parametrize('batch', [2, None], ids=['static-batch', 'unknown-batch'])
def test_conv2d_transpose_output_padding_sizes_from_the_input_shape(K, batch):
    """Keras' Conv2DTranspose(output_padding=1, strides=2, padding='valid'): its sizes
    are ``(K.shape(x)[i] - 1) * 2 + 3 + 1``, one past the plain transposed length."""
    import reference as R
    x_value = np.random.RandomState(50).randn(2, 3, 4, 2).astype('float32')
    kernel_value = np.random.RandomState(51).randn(3, 3, 2, 2).astype('float32')
    x = K.placeholder((batch, 3, 4, 2))
    shape = K.shape(x)
    sizes = [(shape[i] - 1) * 2 + 3 + 1 for i in (1, 2)]
    flipped = kernel_value[::-1, ::-1] if K.backend() == 'theano' else kernel_value
    kernel = K.variable(np.ascontiguousarray(flipped))
    out = K.conv2d_transpose(x, kernel, (shape[0], sizes[0], sizes[1], 2), strides=(2, 2),
                             padding='valid')
    got, = _run(K, [x], [out], [x_value])
    assert_values(got, R.conv2d_transpose(x_value, kernel_value, (2, 8, 10, 2), (2, 2),
                                          'valid'))


# ---------------------------------------------------------------------------
# Graph names: what Keras' loss utilities do for every loss
# ---------------------------------------------------------------------------

def test_repeated_name_scopes_with_named_ops(K):
    x = K.placeholder((None, 3))
    sizes = []
    for _ in range(2):
        with K.name_scope('loss'):
            with K.name_scope('num_elements') as scope:
                sizes.append(K.size(x, name=scope))
    got = _run(K, [x], sizes, [np.zeros((4, 3), 'float32')])
    assert [float(g) for g in got] == [12.0, 12.0]


# ---------------------------------------------------------------------------
# Higher-order functions whose callable reads a variable (Keras' backend_test)
# ---------------------------------------------------------------------------

def test_map_fn_closure_over_a_variable(K):
    v = np.arange(30, dtype='float32').reshape(10, 3)
    vx = K.variable(v)
    # Keras' backend_test writes vx[i]; K.gather is the same read on every engine
    # (CNTK's own Variable.__getitem__ takes no tensor index)
    out = K.map_fn(lambda i: K.sum(K.gather(vx, i)), K.arange(10), dtype=K.floatx())
    assert_values(K.eval(out), v.sum(axis=1))


def test_foldl_closure_over_a_variable(K):
    v = np.arange(5, dtype='float32')
    vx = K.variable(v)
    out = K.foldl(lambda acc, i: acc + K.gather(vx, i) * 2., K.arange(5),
                  initializer=K.constant(0.))
    assert_values(K.eval(out), v.sum() * 2)


# ---------------------------------------------------------------------------
# Shapes Keras recorded, and sparse values (Keras' engine and backend tests)
# ---------------------------------------------------------------------------

def test_checks_read_the_engines_shape_not_a_recorded_one(K):
    """Keras 2.3.1's ConvLSTM2D records a wrong ``_keras_shape`` on its initial state
    (the input's channels, not the layer's filters; in channels_first its axes too); Keras'
    TensorFlow and CNTK backends never read it, its Theano backend passed it to Theano's
    conv2d as an unchecked hint, and every engine computes with the real shape."""
    x_value = np.random.RandomState(0).rand(2, 3, 5, 5).astype('float32')
    w_value = np.random.RandomState(1).rand(3, 3, 3, 4).astype('float32')
    x = K.placeholder((None, 3, 5, 5))
    state = x * 1.
    state._keras_shape = (None, 5, 5, 6)          # what Keras recorded, wrongly
    # Theano's conv2d is a true convolution (Keras' convention there): the flipped kernel
    # gives the cross-correlation computed below
    w_used = w_value[::-1, ::-1] if K.backend() == 'theano' else w_value
    out = K.conv2d(state, K.variable(np.ascontiguousarray(w_used)), data_format='channels_first')
    got, = _run(K, [x], [out], [x_value])
    xs = x_value.transpose(0, 2, 3, 1)
    want = np.zeros((2, 3, 3, 4), 'float32')
    for i in range(3):
        for j in range(3):
            want[:, i, j, :] = np.tensordot(xs[:, i:i + 3, j:j + 3, :], w_value, 3)
    assert_values(got, want.transpose(0, 3, 1, 2), atol=1e-4)


def test_variable_from_a_scipy_sparse_matrix(K):
    sparse = pytest.importorskip('scipy.sparse')
    x = sparse.csr_matrix((np.array([1., 7., 2., 3.], 'float32'),
                           (np.array([0, 2, 2, 3]), np.array([4, 3, 2, 3]))), shape=(4, 5))
    w = np.random.RandomState(0).rand(5, 3).astype('float32')
    v = K.variable(x)
    assert K.int_shape(v) == (4, 5)
    assert_values(K.eval(K.dot(v, K.variable(w))), x.toarray().dot(w), atol=1e-5)
    assert_values(K.eval(K.to_dense(v)) if K.is_sparse(v) else K.eval(v), x.toarray())


def test_eval_of_a_sparse_tensor_is_dense(K):
    """Keras 2.3.1's ``eval`` is ``to_dense(x).eval()`` (Theano) and densifies on TF too;
    its backend_test compares ``K.eval`` of a sparse concatenation with a dense array."""
    sparse = pytest.importorskip('scipy.sparse')
    a = sparse.csr_matrix((np.array([1., 7., 2., 3.], 'float32'),
                           (np.array([0, 2, 2, 3]), np.array([4, 3, 2, 3]))), shape=(4, 5))
    b = sparse.csr_matrix((np.array([5., 6.], 'float32'),
                           (np.array([1, 3]), np.array([0, 4]))), shape=(4, 5))
    for got, want in ((K.eval(K.variable(a)), a.toarray()),
                      (K.eval(K.concatenate([K.variable(a), K.variable(b)])),
                       np.concatenate([a.toarray(), b.toarray()], axis=-1))):
        assert isinstance(got, np.ndarray)
        assert_values(got, want)


def test_rnn_on_concrete_inputs_with_a_step_over_a_variable(K):
    """Keras layers called on ``K.constant`` inputs: the step reads the layer's weights."""
    x = np.random.RandomState(0).rand(2, 4, 3).astype('float32')
    w = np.random.RandomState(1).rand(3, 3).astype('float32')
    wv = K.variable(w)

    def step(inputs, states):
        h = K.tanh(K.dot(inputs, wv) + states[0])
        return h, [h]

    last, outputs, _ = K.rnn(step, K.constant(x), [K.constant(np.zeros((2, 3)))])
    h = np.zeros((2, 3), 'float32')
    want = []
    for t in range(4):
        h = np.tanh(x[:, t].dot(w) + h)
        want.append(h)
    assert_values(K.eval(outputs), np.stack(want, 1), atol=1e-5)
    assert_values(K.eval(last), want[-1], atol=1e-5)


def test_one_hot_with_a_class_count_tensor(K):
    x = K.placeholder((None, 4))
    idx = np.array([0, 3, 1], 'int32')
    out = K.one_hot(K.constant(idx, dtype='int32'), K.shape(x)[1])
    got, = _run(K, [x], [out], [np.zeros((2, 4), 'float32')])
    assert_values(got, np.eye(4, dtype='float32')[idx])


def test_random_draws_with_parameter_tensors(K):
    x = K.placeholder((None, 50))
    hi = K.max(x) + 1.                       # 3 for the batch below
    u = K.random_uniform(K.shape(x), 2., hi, seed=2)
    n = K.random_normal(K.shape(x), K.max(x), K.max(x) * 0 + 0.01, seed=2)
    got_u, got_n = _run(K, [x], [u, n], [np.full((40, 50), 2., 'float32')])
    assert np.all((got_u >= 2.) & (got_u < 3.)) and got_u.std() > 0.1
    assert abs(got_n.mean() - 2.) < 0.01 and got_n.std() < 0.02


def test_axes_as_numpy_integers(K):
    x_value = np.arange(6, dtype='float32').reshape(2, 3)
    x = K.variable(x_value)
    assert_values(K.eval(K.expand_dims(x, np.int64(1))), x_value[:, None])
    assert_values(K.eval(K.concatenate([x, x], axis=np.int64(-1))),
                  np.concatenate([x_value, x_value], -1))
    assert_values(K.eval(K.sum(x, axis=np.int32(1))), x_value.sum(1))


def test_dropout_with_a_rate_tensor(K):
    x = K.placeholder((None, 200))
    out = K.dropout(x, K.max(x) * 0.25, seed=3)       # rate 0.25 for a batch of ones
    got, = _run(K, [x], [out], [np.ones((50, 200), 'float32')])
    kept = got != 0
    assert abs(kept.mean() - 0.75) < 0.02
    assert_values(got[kept], np.full(kept.sum(), 1. / 0.75, 'float32'))


def test_tile_by_the_size_of_a_tensor_of_unknown_batch(K):
    """keras/utils/metrics_utils.py: thresholds tiled K.stack([1, K.size(y_pred)]) times,
    y_pred of unknown batch; a list operand of an op (a Lambda's restored argument)."""
    y = K.placeholder((None, 3))
    t = K.tile(K.expand_dims(K.constant([0.25, 0.75]), 1),
               K.cast(K.stack([1, K.size(y)]), dtype='int32'))
    shifted = y - [[1., 2., 3.]]
    yv = np.arange(6, dtype='float32').reshape(2, 3)
    got_t, got_s = K.function([y], [t, shifted])([yv])
    assert_values(got_t, np.tile(np.array([[0.25], [0.75]], 'float32'), (1, 6)))
    assert_values(got_s, yv - np.array([[1., 2., 3.]], 'float32'))


def test_get_value_is_a_writable_array(K):
    """keras/utils/layer_utils.py convert_dense_weights_data_format writes into the arrays
    that get_weights (K.batch_get_value) returns."""
    v = K.variable(np.zeros((2, 2), 'float32'))
    w = K.batch_get_value([v])[0]
    w[0, 0] = 5.
    assert w[0, 0] == 5.
    assert_values(K.get_value(v), np.zeros((2, 2), 'float32'))


def test_a_variable_is_true_in_an_if_on_the_eager_engines(K):
    """Keras 2.0-2.1 layers ask ``if self.bias:`` (Conv2DTranspose, SeparableConv2D): on the
    engines whose graph is ours (JAX, PyTorch) a variable is true, as Theano's and TensorFlow
    1's variables were; a computed tensor's truth is refused with a TypeError."""
    from keras_backend.eager_graph import graph
    v = K.variable(np.zeros(3, 'float32'))
    if not isinstance(v, graph.Node):
        pytest.skip("%s's variables are its engine's own (their truth is the engine's rule; "
                    "Keras 2.0-2.2 on TensorFlow get TensorFlow 1's)" % K.backend())
    assert bool(v) is True
    x = K.placeholder(shape=(3,))
    with pytest.raises(TypeError):
        bool(x * 2.)


def test_static_shape_answers_tensorflow_shape_methods(K):
    """Keras 2 code written for TensorFlow reads ``x.get_shape().as_list()`` (and Keras
    2.0-2.1's backend tests do, where the adapter stands in for their TensorFlow module): on
    TensorFlow and on the engines whose graph is ours (JAX, PyTorch) the static shape answers
    it, None where a size is unknown."""
    x = K.placeholder(shape=(None, 3))
    y = K.repeat_elements(x, 2, axis=1)
    if not hasattr(y, 'get_shape'):
        pytest.skip("%s's tensors have no get_shape (Keras' own backend for it had none)"
                    % K.backend())
    s = y.get_shape()
    assert s.as_list() == [None, 6]
    assert s.ndims == 2 and not s.is_fully_defined()
    assert tuple(s) == K.int_shape(y) == (None, 6)
    v = K.variable(np.zeros((2, 4), 'float32'))
    assert v.get_shape().as_list() == [2, 4] and v.get_shape().is_fully_defined()


def test_sparse_categorical_crossentropy_truncates_float_ids(K):
    """Keras' metrics tests feed random floats in [0, 1) as class ids
    (``metrics_training_test``'s SparseCategoricalCrossentropy on a one-unit output): Keras'
    backends cast them to integers (truncation: every id 0 there), on every engine."""
    target = np.array([0.7, 1.2, 2.9, 0.], 'float32')
    output = np.array([[.2, .3, .5], [.6, .3, .1], [.1, .1, .8], [.3, .3, .4]], 'float32')
    t, o = K.placeholder((None,)), K.placeholder((None, 3))
    got = _run(K, [t, o], [K.sparse_categorical_crossentropy(t, o)], [target, output])[0]
    assert_values(got, -np.log(output[np.arange(4), target.astype('int64')]))
    one = K.placeholder((None, 1))
    got = _run(K, [t, one], [K.sparse_categorical_crossentropy(t, one)],
               [np.array([0.3, 0.9], 'float32'), np.array([[1.], [1.]], 'float32')])[0]
    assert_values(got, np.zeros(2, 'float32'))
