"""Variables, placeholders, values, updates, function, gradients, learning phase,
and the small utility names of the contract."""

import numpy as np
import pytest

import reference as R
from keras_backend import engines
from helpers import assert_dtype, assert_values, eval_sym, randn

X = randn(3, 4)


# ---------------------------------------------------------------------------
# variables / constants / placeholders
# ---------------------------------------------------------------------------

def test_variable_and_dtype(K):
    v = K.variable(X)
    assert K.is_variable(v)
    assert K.is_tensor(v)
    assert K.dtype(v) == K.floatx() == 'float32'
    assert K.int_shape(v) == (3, 4) and K.ndim(v) == 2
    np.testing.assert_array_equal(K.get_value(v), X)
    assert K.get_value(v).dtype == np.float32
    v64 = K.variable([[1, 2]], dtype='float64', name='v64')
    assert K.dtype(v64) == 'float64'
    assert K.eval(v64).dtype == np.float64
    s = K.variable(3.)
    assert K.int_shape(s) == () and float(K.eval(s)) == 3.
    # a copy: changing the source array does not change the variable
    src = X.copy()
    v2 = K.variable(src)
    src[0, 0] = 100.
    assert K.get_value(v2)[0, 0] == X[0, 0]


def test_variable_follows_floatx(K):
    K.set_floatx('float64')
    v = K.variable(X)
    assert K.dtype(v) == 'float64'
    assert K.eval(K.zeros((2,))).dtype == np.float64
    assert K.dtype(K.constant(1.)) == 'float64'


def test_constant(K):
    c = K.constant(X)
    assert K.dtype(c) == 'float32'
    assert not K.is_variable(c)
    np.testing.assert_array_equal(K.eval(c), X)
    filled = K.constant(2.5, shape=(2, 3))
    assert K.int_shape(filled) == (2, 3)
    np.testing.assert_array_equal(K.eval(filled), np.full((2, 3), 2.5, np.float32))
    ci = K.constant([1, 2, 3], dtype='int32')
    assert_dtype(K, K.dtype(ci), 'int32', 'constant int32')
    assert_values(K.eval(ci), np.array([1, 2, 3], np.int32))


def test_placeholder_shapes_and_predicates(K):
    p = K.placeholder(shape=(None, 4, 3))
    assert K.int_shape(p) == (None, 4, 3)
    assert K.ndim(p) == 3
    assert K.dtype(p) == 'float32'
    assert K.is_placeholder(p) and K.is_tensor(p)
    assert not K.is_keras_tensor(p)   # Keras 2.3.1: only tensors with _keras_history
    q = K.placeholder(ndim=2)
    assert K.int_shape(q) == (None, None)
    r = K.placeholder(shape=(2, 3), dtype='float64', name='r')
    assert K.dtype(r) == 'float64' and K.int_shape(r) == (2, 3)
    op = K.exp(p) + 1.
    assert not K.is_keras_tensor(op)
    assert not K.is_placeholder(op)
    v = K.variable(X)
    assert not K.is_keras_tensor(v)
    assert not K.is_keras_tensor(K.constant(X))
    assert not K.is_placeholder(v)
    with pytest.raises(ValueError):
        K.is_keras_tensor(X)
    with pytest.raises(ValueError):
        K.is_keras_tensor(3.)
    assert not K.is_tensor(X)
    assert not K.is_tensor(3.)
    assert not K.is_variable(X)


def test_sparse_placeholder(K):
    p = K.placeholder(shape=(None, 5), sparse=True)
    assert K.is_sparse(p)
    assert not K.is_sparse(K.placeholder(shape=(None, 5)))
    assert not K.is_sparse(K.variable(X))
    d = K.to_dense(p)
    assert not K.is_sparse(d)


def test_shape_int_shape_ndim_count_params(K):
    v = K.variable(np.zeros((2, 3, 4), np.float32))
    s = K.shape(v)
    val = K.eval(s)
    np.testing.assert_array_equal(val, [2, 3, 4])
    assert_dtype(K, val.dtype, 'int32', 'shape')
    assert K.int_shape(v) == (2, 3, 4)
    assert K.int_shape(X) == (3, 4)
    assert K.get_variable_shape(v) == (2, 3, 4)
    assert K.count_params(v) == 24
    assert isinstance(K.count_params(v), (int, np.integer))
    assert K.ndim(v) == 3
    assert K.dtype(v) == 'float32'
    # runtime shape of a placeholder
    (out,) = eval_sym(K, lambda p: K.shape(p), [np.zeros((5, 2), np.float32)])
    np.testing.assert_array_equal(out, [5, 2])


def test_size(K):
    v = K.variable(np.zeros((2, 3, 4), np.float32))
    val = np.asarray(K.eval(K.size(v)))
    assert val.shape == ()
    assert int(val) == 24
    assert np.asarray(val).dtype.kind in ('i', 'u') or K.backend() == 'cntk'
    (out,) = eval_sym(K, lambda p: K.size(p), [np.zeros((5, 3), np.float32)])
    assert int(out) == 15


def test_zeros_ones_eye_like(K):
    z = K.zeros((2, 3))
    o = K.ones((3,), dtype='float64')
    assert K.is_variable(z) and K.is_variable(o)
    np.testing.assert_array_equal(K.eval(z), np.zeros((2, 3)))
    assert K.eval(z).dtype == np.float32
    np.testing.assert_array_equal(K.eval(o), np.ones(3))
    assert K.dtype(o) == 'float64'
    e = K.eye(3)
    assert K.is_variable(e)
    np.testing.assert_array_equal(K.eval(e), np.eye(3))
    e2 = K.eye((2, 4))
    np.testing.assert_array_equal(K.eval(e2), np.eye(2, 4))
    v = K.variable(X)
    zl, ol = K.zeros_like(v), K.ones_like(v, dtype='float64')
    np.testing.assert_array_equal(K.eval(zl), np.zeros_like(X))
    np.testing.assert_array_equal(K.eval(ol), np.ones_like(X))
    assert K.dtype(ol) == 'float64' and K.dtype(zl) == 'float32'
    idv = K.identity(v)
    np.testing.assert_array_equal(K.eval(idv), X)
    # zeros_like of a placeholder follows the runtime shape
    (zz, oo) = eval_sym(K, lambda p: [K.zeros_like(p), K.ones_like(p)], [X])
    np.testing.assert_array_equal(zz, np.zeros_like(X))
    np.testing.assert_array_equal(oo, np.ones_like(X))


def test_random_variables(K):
    u = K.random_uniform_variable((100, 100), -2., 3., seed=1)
    n = K.random_normal_variable((100, 100), 1., 2., seed=2)
    assert K.is_variable(u) and K.is_variable(n)
    assert K.dtype(u) == 'float32'
    uv, nv = K.get_value(u), K.get_value(n)
    assert uv.shape == (100, 100) and nv.shape == (100, 100)
    assert uv.min() >= -2. and uv.max() < 3.
    assert abs(uv.mean() - 0.5) < 0.1 and abs(uv.std() - 5. / np.sqrt(12.)) < 0.1
    assert abs(nv.mean() - 1.) < 0.1 and abs(nv.std() - 2.) < 0.1
    d = K.random_uniform_variable((3,), 0., 1., dtype='float64')
    assert K.dtype(d) == 'float64'


def test_cast_to_floatx(K):
    out = K.cast_to_floatx(np.array([1, 2], dtype=np.int64))
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    K.set_floatx('float64')
    assert K.cast_to_floatx([1.5]).dtype == np.float64


# ---------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------

def test_get_set_values(K):
    a, b = K.variable(X), K.variable(np.zeros((2,), np.float32))
    K.set_value(a, X * 2)
    np.testing.assert_allclose(K.get_value(a), X * 2)
    K.batch_set_value([(a, X * 3), (b, np.array([1., 2.]))])
    va, vb = K.batch_get_value([a, b])
    np.testing.assert_allclose(va, X * 3)
    np.testing.assert_allclose(vb, [1., 2.])
    assert isinstance(K.batch_get_value([a, b]), list)
    assert K.batch_get_value([]) == []
    with pytest.raises(ValueError):
        K.set_value(a, np.zeros((4, 3)))
    with pytest.raises(ValueError):
        K.batch_set_value([(b, np.zeros((3,)))])
    np.testing.assert_allclose(K.get_value(b), [1., 2.])


def test_eval_returns_numpy(K):
    out = K.eval(K.variable(X) * 2.)
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, X * 2)


# ---------------------------------------------------------------------------
# updates and function
# ---------------------------------------------------------------------------

def test_function_updates_after_outputs(K):
    v = K.variable(np.array([1., 2.], np.float32))
    w = K.variable(np.array([10.], np.float32))
    c = K.variable(np.array([5.], np.float32))
    m = K.variable(np.array([4., 8.], np.float32))
    p = K.placeholder(shape=(2,))
    # outputs: a variable itself, and expressions of variables and the input
    f = K.function([p], [v, w + K.sum(p) * 0., c + K.sum(p) * 0.],
                   updates=[K.update(v, v + p), K.update_add(w, K.sum(p, keepdims=True)),
                            K.update_sub(c, K.sum(p, keepdims=True) * 0.5),
                            K.moving_average_update(m, p, 0.9)])
    outs = f([np.array([1., 1.], np.float32)])
    assert isinstance(outs, list) and len(outs) == 3
    np.testing.assert_allclose(outs[0], [1., 2.])     # old value seen by the outputs
    np.testing.assert_allclose(outs[1], [10.])
    np.testing.assert_allclose(outs[2], [5.])
    np.testing.assert_allclose(K.get_value(v), [2., 3.])
    np.testing.assert_allclose(K.get_value(w), [12.])
    np.testing.assert_allclose(K.get_value(c), [4.])
    np.testing.assert_allclose(K.get_value(m),
                               R.moving_average_update([4., 8.], [1., 1.], 0.9), rtol=1e-6)
    outs = f([np.array([0., 2.], np.float32)])
    np.testing.assert_allclose(outs[0], [2., 3.])
    np.testing.assert_allclose(K.get_value(v), [2., 5.])


def test_function_accepts_tuple_updates_and_single_output(K):
    v = K.variable(np.array([1., 2.], np.float32))
    p = K.placeholder(shape=(None, 2))
    f = K.function([p], K.sum(p, axis=0) + v, updates=[(v, v * 2.)], name='f')
    out = f([np.ones((3, 2), np.float32)])
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, [4., 5.])
    np.testing.assert_allclose(K.get_value(v), [2., 4.])
    g = K.function([p], (p * 2., p + 1.))
    res = g([np.ones((1, 2), np.float32)])
    assert isinstance(res, list) and len(res) == 2


def test_function_unknown_kwarg_raises(K):
    p = K.placeholder(shape=(2,))
    with pytest.raises(ValueError) as info:
        K.function([p], [p * 2.], no_such_option_xyz=1)
    assert 'no_such_option_xyz' in str(info.value)


def test_updates_wait_for_a_function(K):
    # Keras 2: update ops do nothing until a function runs them (on every engine).
    v = K.variable(np.array([1., 2.], np.float32))
    ups = [K.update_add(v, np.array([1., 1.], np.float32)),
           K.update(v, np.array([0., 0.], np.float32)),
           K.update_sub(v, np.array([1., 2.], np.float32)),
           K.moving_average_update(v, np.array([1., 0.], np.float32), 0.5)]
    np.testing.assert_allclose(K.get_value(v), [1., 2.])
    p = K.placeholder(shape=(2,))
    K.function([p], [p * 1.], updates=ups[:1])([np.zeros(2, np.float32)])
    np.testing.assert_allclose(K.get_value(v), [2., 3.])
    K.function([p], [p * 1.], updates=ups[3:])([np.zeros(2, np.float32)])
    np.testing.assert_allclose(K.get_value(v), [1.5, 1.5])


def test_update_value_of_variables_is_read_at_every_call(K):
    # m <- 0.5 m + x, three times: 0.5, 1.25, 1.75 (Keras 2 on every engine)
    m = K.variable(np.zeros(2))
    x = K.placeholder((2,))
    f = K.function([x], [m], updates=[K.update(m, 0.5 * m + x)])
    seen = [f([np.ones(2, 'float32')])[0] for _ in range(3)]
    np.testing.assert_allclose(K.get_value(m), [1.75, 1.75])
    np.testing.assert_allclose(np.array(seen)[:, 0], [0., 1., 1.5])   # old values


def test_updates_read_the_old_values_of_variables_other_updates_write(K):
    # Keras 2.3.1's Adam reads ``iterations`` in the updates that increment it: every
    # update is computed from the old values, then all are written (Theano's function
    # semantics), on every call; w <- w + it, it <- it + 1: w = 0 + 1 + ... + (k - 1)
    it = K.variable(np.float32(0.))
    w = K.variable(np.float32(0.))
    scale = K.variable(np.ones(64, np.float32))
    f = K.function([], [w], updates=[K.update_add(it, np.float32(1.)),
                                     K.update(w, w + it),
                                     K.update(scale, scale * 1.0 + K.zeros_like(scale))])
    seen = [float(f([])[0]) for _ in range(100)]
    assert seen == [k * (k - 1) / 2.0 for k in range(100)]
    assert float(K.get_value(w)) == 4950.0 and float(K.get_value(it)) == 100.0


def test_outputs_of_variables_alone_are_read_at_every_call(K):
    w = K.variable(np.array([1., 2.], np.float32))
    doubled = w * 2.
    total = K.sum(K.square(w))
    p = K.placeholder(shape=(2,))
    f = K.function([p], [doubled, total, K.sum(p)], updates=[K.update_add(w, p)])
    out1 = f([np.ones(2, np.float32)])
    out2 = f([np.ones(2, np.float32)])
    np.testing.assert_allclose(out1[0], [2., 4.])
    np.testing.assert_allclose(out2[0], [4., 6.])
    np.testing.assert_allclose([out1[1], out2[1]], [5., 13.])
    np.testing.assert_allclose(K.eval(doubled), [6., 8.])
    np.testing.assert_allclose(K.eval(total), 25.)


def test_gradients_and_stop_gradient(K):
    x = K.placeholder(shape=(None, 3))
    w = K.variable(np.array([1., -2., 3.], np.float32))
    loss = K.sum(K.square(x * w)) + K.sum(K.stop_gradient(x * w) * w)
    gx, gw = K.gradients(loss, [x, w])
    assert K.int_shape(gw) == (3,)
    xv = randn(2, 3)
    f = K.function([x], [gx, gw])
    gxv, gwv = f([xv])
    wv = np.array([1., -2., 3.])
    np.testing.assert_allclose(gxv, 2 * xv * wv ** 2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gwv, (2 * xv ** 2 * wv).sum(0) + (xv * wv).sum(0),
                               rtol=1e-5, atol=1e-5)
    # stop_gradient accepts a list and returns a list
    a, b = K.stop_gradient([x * 2., x * 3.])
    loss2 = K.sum(a * x) + K.sum(b)
    (g2,) = K.gradients(loss2, [x])
    np.testing.assert_allclose(K.function([x], [g2])([xv])[0], 2 * xv, rtol=1e-6)
    sg = K.stop_gradient([x])
    assert isinstance(sg, list) and len(sg) == 1


# ---------------------------------------------------------------------------
# learning phase
# ---------------------------------------------------------------------------

def test_learning_phase_fed_switches_in_train_phase_and_dropout(K):
    x = K.placeholder(shape=(None, 4))
    lp = K.learning_phase()
    out = K.in_train_phase(x * 2., x * 3.)
    out2 = K.in_test_phase(x * 2., x * 3.)
    dropped = K.in_train_phase(lambda: K.dropout(x, 0.5), x)
    f = K.function([x, lp], [out, out2, dropped])
    xv = np.ones((200, 4), np.float32)
    tr = f([xv, 1])
    te = f([xv, 0])
    np.testing.assert_allclose(tr[0], xv * 2.)
    np.testing.assert_allclose(tr[1], xv * 3.)
    np.testing.assert_allclose(te[0], xv * 3.)
    np.testing.assert_allclose(te[1], xv * 2.)
    # dropout only in training: kept values scaled by 1 / (1 - 0.5)
    assert set(np.unique(tr[2])).issubset({0., 2.})
    assert 0.3 < np.mean(tr[2] == 0.) < 0.7
    np.testing.assert_allclose(te[2], xv)

def test_gradients_through_in_train_phase_fed_both_phases(K):
    # BatchNormalization's pattern: the training value is computed before the choice,
    # the test value inside it, and both read the same input and weights; one function
    # fed phase 1, then 0, then 1 (TensorFlow compiles one program per value given)
    rng = np.random.RandomState(3)
    xv = rng.randn(5, 4).astype(np.float32)
    av, bv = rng.randn(4).astype(np.float32), rng.randn(4).astype(np.float32)
    x = K.placeholder(shape=(None, 4))
    a, b = K.variable(av), K.variable(bv)
    train_value = x * a
    out = K.in_train_phase(train_value, lambda: x * b + a)
    loss = K.sum(K.square(out)) + K.sum(x * b)
    f = K.function([x, K.learning_phase()], [loss] + K.gradients(loss, [x, a, b]))
    for phase in (1, 0, 1):
        got = f([xv, phase])
        o = xv * av if phase else xv * bv + av
        ga = (2 * o * xv).sum(0) if phase else (2 * o).sum(0)
        gb = xv.sum(0) + (0 if phase else (2 * o * xv).sum(0))
        gx = 2 * o * (av if phase else bv) + bv
        np.testing.assert_allclose(got[0], np.sum(o ** 2) + np.sum(xv * bv), rtol=1e-5)
        for g, want in zip(got[1:], (gx, ga, gb)):
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)



def test_in_train_phase_static_training(K):
    x = K.variable(X)
    np.testing.assert_allclose(K.eval(K.in_train_phase(x * 2., x * 3., training=1)), X * 2)
    np.testing.assert_allclose(K.eval(K.in_train_phase(x * 2., x * 3., training=0)), X * 3)
    np.testing.assert_allclose(K.eval(K.in_test_phase(x * 2., x * 3., training=1)), X * 3)
    np.testing.assert_allclose(K.eval(K.in_train_phase(lambda: x + 1., lambda: x - 1.,
                                                       training=True)), X + 1)
    np.testing.assert_allclose(K.eval(K.in_test_phase(lambda: x + 1., lambda: x - 1.,
                                                      training=False)), X + 1)


def test_set_learning_phase_and_scope(K):
    try:
        K.set_learning_phase(1)
        assert K.learning_phase() == 1
        x = K.variable(X)
        np.testing.assert_allclose(K.eval(K.in_train_phase(x * 2., x * 3.)), X * 2)
        K.set_learning_phase(0)
        assert K.learning_phase() == 0
        np.testing.assert_allclose(K.eval(K.in_train_phase(x * 2., x * 3.)), X * 3)
        with pytest.raises(ValueError):
            K.set_learning_phase(2)
    finally:
        K.clear_session()
    with K.learning_phase_scope(1):
        assert K.learning_phase() == 1
    assert not isinstance(K.learning_phase(), int) or K.learning_phase() not in (1,)


def test_clear_session_resets_uids_and_learning_phase(K):
    K.get_uid('dense_t')
    K.get_uid('dense_t')
    K.set_learning_phase(1)
    K.clear_session()
    assert K.get_uid('dense_t') == 1
    assert K.get_uid('dense_t') == 2
    K.reset_uids()
    assert K.get_uid('dense_t') == 1
    assert K.get_uid() == 1
    assert not (isinstance(K.learning_phase(), int) and K.learning_phase() == 1)
    K.clear_session()


# ---------------------------------------------------------------------------
# small utilities
# ---------------------------------------------------------------------------

def test_print_tensor_returns_value(K):
    x = K.variable(X)
    out = K.print_tensor(x, message='value: ')
    np.testing.assert_allclose(K.eval(out), X)
    (sym,) = eval_sym(K, lambda p: K.print_tensor(p * 2., 'sym: '), [X])
    np.testing.assert_allclose(sym, X * 2)


def test_sessions(K):
    sess = K.get_session()
    x = K.variable(X)
    out = sess.run(x * 2.)
    np.testing.assert_allclose(out, X * 2)
    K.set_session(sess)
    assert K.get_session() is sess


def test_name_scope_and_control_dependencies(K):
    with K.name_scope('block'):
        v = K.variable(X) * 2.
    np.testing.assert_allclose(K.eval(v), X * 2)
    w = K.variable(np.zeros(2, np.float32))
    with K.control_dependencies([]):
        z = K.identity(w)
    np.testing.assert_allclose(K.eval(z), [0., 0.])


def test_symbolic_and_eager_decorators(K):
    @K.symbolic
    def f(a):
        return a * 2.

    @K.eager
    def g(a):
        return a + 1.

    np.testing.assert_allclose(K.eval(f(K.variable(X))), X * 2)
    np.testing.assert_allclose(K.eval(g(K.variable(X))), X + 1)
    assert f.__name__ == 'f' and g.__name__ == 'g'


def test_pattern_broadcast(K):
    x = K.variable(np.ones((1, 3), np.float32))
    y = K.pattern_broadcast(x, [True, False])
    np.testing.assert_allclose(K.eval(y + K.variable(np.zeros((4, 3), np.float32))),
                               np.ones((4, 3)))
    if K.backend() != 'theano':
        # the contract: off Theano the pattern is checked against ndim
        with pytest.raises(ValueError):
            K.pattern_broadcast(x, [True, False, False])


def test_manual_variable_initialization(K):
    try:
        K.manual_variable_initialization(True)
        v = K.variable(X)
        np.testing.assert_allclose(K.get_value(v), X)
    finally:
        K.manual_variable_initialization(False)


def test_backend_name(K):
    assert K.backend() in engines.names()
    assert K.__name__.endswith(K.backend() + '_backend')


def test_config_names_are_shared_with_common(K):
    """epsilon/floatx/data-format state is the process-wide one of common."""
    from keras_backend import common
    K.set_epsilon(1e-4)
    assert K.epsilon() == common.epsilon() == 1e-4
    K.set_floatx('float16')
    assert K.floatx() == 'float16'
    K.set_image_data_format('channels_first')
    assert K.image_data_format() == 'channels_first'
    assert K.image_dim_ordering() == 'th'
    K.set_image_dim_ordering('tf')
    assert K.image_data_format() == 'channels_last'
    assert K.normalize_data_format(None) == 'channels_last'
    assert K.normalize_data_format('Channels_First') == 'channels_first'
    with pytest.raises(ValueError):
        K.normalize_data_format('nchw')
    with pytest.raises(ValueError):
        K.set_floatx('int8')


def test_get_uid_prefixes(K):
    K.reset_uids()
    assert [K.get_uid('a'), K.get_uid('a'), K.get_uid('b')] == [1, 2, 1]


def test_set_value_takes_array_likes(K, tmp_path):
    """Values that numpy reads through their array interface (an h5py dataset: keras-contrib's
    save_load_utils passes them straight to batch_set_value) are taken, as Keras' backends
    took them."""
    h5py = pytest.importorskip('h5py')
    path = str(tmp_path / 'values.h5')
    with h5py.File(path, 'w') as f:
        f['w'] = np.arange(6.).reshape(2, 3)
        f['b'] = np.array([4., 5.])
    v, b = K.variable(np.zeros((2, 3))), K.variable(np.zeros(2))
    with h5py.File(path, 'r') as f:
        K.batch_set_value([(v, f['w'])])
        K.set_value(b, f['b'])
    np.testing.assert_array_equal(K.get_value(v), np.arange(6.).reshape(2, 3))
    np.testing.assert_array_equal(K.get_value(b), [4., 5.])


def test_variables_made_without_a_name(K):
    """On TensorFlow and the engines that follow its conventions (JAX) a variable made without
    a name gets a unique one, as TensorFlow 1's graph named it (Keras 2.0-2.2 save an
    optimizer's slots by these names); on Theano and CNTK each is '<scopes>/variable', as Keras'
    own backends named it (Keras numbers them itself there). clear_session starts again."""
    row = engines.configurations(K.backend())[0]

    def made():
        with K.name_scope('training'):
            with K.name_scope('Adam'):
                return [str(K.variable(np.zeros(2)).name).split(':')[0] for _ in range(3)]
    K.clear_session()
    first = made()
    if (row.keras2_known_as or row.name) == 'tensorflow':
        assert first == ['training/Adam/variable', 'training/Adam/variable_1',
                         'training/Adam/variable_2']
        again = made()       # TensorFlow also numbers a scope opened again ('training_1')
        assert len(set(first + again)) == 6
        K.clear_session()
        assert made()[0] == 'training/Adam/variable'
    else:
        assert len(set(first)) == 1 and first[0].endswith('variable') and 'Adam' in first[0]
    named = K.variable(np.zeros(2), name='kernel')
    assert str(named.name).split(':')[0] == 'kernel'
