"""TensorFlow-only behaviours of the adapter that Keras 2.3.1 relies on.

Eager variables and the one symbolic graph (see the module docstring of
``keras_backend.tensorflow_backend``): updates used as control dependencies
(Keras' stateful metrics), ops on variables as graph ops read at every run,
string placeholders, numpy-drawn seeds.
"""
import numpy as np
import pytest

from conftest import load_adapter, requested_backends

pytestmark = pytest.mark.skipif('tensorflow' not in requested_backends(),
                                reason='KERAS_BACKEND_TESTS excludes tensorflow')


@pytest.fixture
def K():
    module, reason = load_adapter('tensorflow')
    if module is None:
        pytest.skip('tensorflow backend not importable here: %s' % reason)
    return module


def test_result_read_after_update_and_update_runs_once(K):
    # Keras 2.3.1's Metric.__call__: result under control_dependencies(update ops),
    # the same updates also listed in the function's updates.
    x = K.placeholder(shape=(None,))
    total, count = K.variable(0.), K.variable(0.)
    ups = [K.update_add(total, K.sum(x)), K.update_add(count, K.cast(K.shape(x)[0], 'float32'))]
    with K.control_dependencies(ups):
        result = K.identity(total / count)
    f = K.function([x], [result], updates=ups)
    np.testing.assert_allclose(f([np.array([1., 2., 3.], 'float32')])[0], 2.0)
    np.testing.assert_allclose(f([np.array([5.], 'float32')])[0], 11. / 4.)
    assert float(K.eval(total)) == 11. and float(K.eval(count)) == 4.
    # a second function sharing the updates needs none of the first one's inputs
    g = K.function([x], [K.sum(x)], updates=ups)
    g([np.array([1.], 'float32')])
    assert float(K.eval(total)) == 12. and float(K.eval(count)) == 5.


def test_ops_on_variables_are_read_at_every_call(K):
    # As Keras 2.3.1's Adam: t = cast(iterations) + 1 and beta_1 * m are graph
    # values, re-read at every training step (with or without Keras loaded).
    it, beta, m = K.variable(0., name='it'), K.variable(0.9), K.variable(2.)
    t = K.cast(it, 'float32') + 1
    decayed = beta * m
    assert not K.is_keras_tensor(t) and not K.is_placeholder(decayed)
    up = K.update(m, decayed)
    f = K.function([], [t, decayed], updates=[up, K.update_add(it, 1.)])
    assert float(K.eval(m)) == 2.           # not applied at creation
    out1 = f([])
    out2 = f([])
    np.testing.assert_allclose([out1[0], out2[0]], [1., 2.])
    np.testing.assert_allclose([out1[1], out2[1]], [1.8, 1.62], rtol=1e-6)
    np.testing.assert_allclose(K.eval(t), 3.)
    np.testing.assert_allclose(K.eval(K.square(m)), 1.62 ** 2, rtol=1e-6)
    # the gradient of a loss made of variables alone
    g = K.gradients(K.sum(K.square(m)), [m])[0]
    np.testing.assert_allclose(K.eval(g), 2 * 1.62, rtol=1e-6)


def test_many_updates_read_old_values_behind_one_barrier(K):
    """Every update of a function reads the values from before any write (a rotation of
    variables, a fed value among them), and the writes wait for one barrier op: control
    edges grow with the number of updates, not with its square."""
    n = 60
    graph = K.placeholder(shape=()).graph
    before = set(op.name for op in graph.get_operations())   # other tests' writes
    vs = [K.variable(float(k)) for k in range(n)]
    p = K.placeholder(shape=())
    ups = [K.update(vs[k], vs[(k + 1) % n] * 1.) for k in range(n - 1)]
    ups.append(K.update(vs[n - 1], p))
    f = K.function([p], [K.identity(vs[0])], updates=ups)
    expected = np.arange(n, dtype='float32')
    for step in range(3):
        out = f([np.float32(100. + step)])[0]
        np.testing.assert_allclose(out, expected[0])   # read before the writes
        expected = np.concatenate([expected[1:], [100. + step]])
        np.testing.assert_allclose(K.batch_get_value(vs), expected)
    assigns = [op for op in graph.get_operations()
               if op.type == 'AssignVariableOp' and op.name not in before]
    assert len(assigns) >= n
    assert max(len(op.control_inputs) for op in assigns) <= 2


def test_fused_batch_norm_gradient_does_not_walk_the_model(K, monkeypatch):
    """The fused batch norm's gradient is its kernel's gradient op, called directly: the
    gradient of a stack of batch-normalised layers walks the graph once (one pass of
    TensorFlow's gradient builder, not one more per layer, each over every consumer of the
    layer's input: quadratic in depth), and equals the unfused formula's (numpy reference
    of d sum(normed * w))."""
    x = K.placeholder(shape=(4, 3, 3, 2))
    rng = np.random.RandomState(0)
    xv = rng.randn(4, 3, 3, 2).astype('float32')
    wv = rng.randn(4, 3, 3, 2).astype('float32')
    gamma, beta = K.variable(np.array([1.5, 0.5], 'float32')), K.variable(np.zeros(2, 'float32'))
    normed, mean, var = K.normalize_batch_in_training(x, gamma, beta, [0, 1, 2], epsilon=1e-3)
    gx = K.gradients(K.sum(normed * K.constant(wv)), [x])[0]
    got = K.function([x], [gx])([xv])[0]
    mu, v = xv.mean(axis=(0, 1, 2)), xv.var(axis=(0, 1, 2))
    m = 4 * 3 * 3
    g = wv * np.array([1.5, 0.5], "float32")
    xhat = (xv - mu) / np.sqrt(v + 1e-3)
    expected = (g - g.mean(axis=(0, 1, 2)) - xhat * (g * xhat).mean(axis=(0, 1, 2))) \
        / np.sqrt(v + 1e-3)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    from tensorflow.python.ops import gradients_util
    builder = gradients_util._GradientsHelper
    passes = []

    def counted(*args, **kwargs):
        passes.append(1)
        return builder(*args, **kwargs)
    monkeypatch.setattr(gradients_util, '_GradientsHelper', counted)
    h = inp = K.placeholder(shape=(4, 3, 3, 2))
    for _ in range(6):
        h = K.relu(K.normalize_batch_in_training(h, gamma, beta, [0, 1, 2])[0])
    K.gradients(K.sum(h), [inp])
    assert len(passes) == 1
    assert any(op.type == 'FusedBatchNormGradV3' for op in x.graph.get_operations())


def test_eval_of_an_update_runs_it_once(K):
    v = K.variable(5.)
    up = K.update_sub(v, 2.)
    assert float(K.eval(v)) == 5.
    assert float(K.eval(up)) == 3.
    assert float(K.eval(v)) == 3.
    assert float(K.eval(up)) == 1.


def test_variable_from_an_expression_of_variables(K):
    w = K.variable([1., 2.])
    v = K.variable(w * 3.)
    np.testing.assert_allclose(K.eval(v), [3., 6.])
    with pytest.raises(ValueError) as info:
        K.variable(K.placeholder((2,)) * 2.)
    assert 'placeholder' in str(info.value)


def test_plain_tf_variables_keep_eager_operators(K):
    import tensorflow as tf
    v = tf.Variable(2.)
    assert hasattr(v * 3., 'numpy') and float(v * 3.) == 6.
    assert not hasattr(K.variable(2.) * 3., 'numpy')   # a graph tensor of ours


def test_set_value_is_immediate(K):
    v = K.variable([1., 2.])
    doubled = v * 2.
    K.set_value(v, [3., 4.])
    np.testing.assert_allclose(K.get_value(v), [3., 4.])
    np.testing.assert_allclose(K.eval(doubled), [6., 8.])
    K.batch_set_value([(v, [0., 1.])])
    np.testing.assert_allclose(K.eval(doubled), [0., 2.])


def test_string_placeholder(K):
    s = K.placeholder(shape=(None,), dtype='string')
    assert K.dtype(s) == 'string' and s._keras_shape == (None,)
    out = K.function([s], [s])([np.array([b'ab', b'c'])])[0]
    assert list(out) == [b'ab', b'c']


def test_seedless_random_follows_numpy_seed(K):
    np.random.seed(3)
    a = K.eval(K.random_normal((4,)))
    b = K.eval(K.random_uniform((4,)))
    np.random.seed(3)
    np.testing.assert_array_equal(K.eval(K.random_normal((4,))), a)
    np.testing.assert_array_equal(K.eval(K.random_uniform((4,))), b)


def test_learning_phase_name_is_top_level(K):
    K.clear_session()
    with K.name_scope('block'):
        lp = K.learning_phase()
    assert lp.name == 'keras_learning_phase:0'
    assert K.is_placeholder(lp)


def _loop_bodies(graph):
    """(name, op types) of every function that the graph's While ops call, nested ones too."""
    found, todo, seen = [], [], set()
    for op in graph.get_operations():
        if op.type in ('While', 'StatelessWhile'):
            todo.extend([op.get_attr('body').name, op.get_attr('cond').name])
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        fdef = graph._get_function(name).definition
        found.append((name, [n.op for n in fdef.node_def]))
        for n in fdef.node_def:
            for value in n.attr.values():
                if value.HasField('func'):
                    todo.append(value.func.name)
    return found


def test_rnn_step_slices_have_padded_gradients(K, monkeypatch):
    # Keras' cells slice their gates (z[:, :units]); in a loop body a plain slice's gradient
    # is the incoming one padded (Pad, not StridedSliceGrad); other slices (a step of 2)
    # keep TensorFlow's. Gradients equal those of TensorFlow's own slice gradient.
    import keras_backend.tensorflow_backend.control_flow as cf
    rng = np.random.RandomState(2)
    w = K.variable(rng.randn(6, 8).astype('float32'))
    x = K.placeholder((3, 4, 6))

    def step(x_t, states):
        z = K.dot(x_t, w) + states[0][:, :1]
        h = (K.tanh(z[:, :2]) * K.sum(z[:, 2:5], 1, keepdims=True) + K.sum(z[1:, -3:]) +
             K.sum(z[::2, 1:7]))
        h = K.concatenate([h, h, h, h], 1)
        return h, [h]

    def grads():
        before = set(name for name, _ in _loop_bodies(K.get_session().graph))
        _, outs, _ = K.rnn(step, x, [K.zeros((3, 8))])
        f = K.function([x], K.gradients(K.sum(outs * outs), [w, x]))
        ops = [o for name, ops in _loop_bodies(K.get_session().graph) if name not in before
               for o in ops]
        return f([xv]), ops
    xv = rng.randn(3, 4, 6).astype('float32')
    ours, ops = grads()
    assert ops.count('Pad') == 4 and ops.count('StridedSliceGrad') == 1, ops
    monkeypatch.setattr(cf, '_SLICE_GRADIENT', 'StridedSlice')   # TensorFlow's own
    theirs, ops = grads()
    assert 'Pad' not in ops and ops.count('StridedSliceGrad') == 5, ops
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_rnn_reads_the_step_variables_once_before_the_loop(K):
    # A step function reading kernels inside the tf.while_loop body would read them on every
    # step, forward and in the gradient's loop; they are read once, before the loop, and the
    # values and gradients are those of the loop written out in numpy.
    rng = np.random.RandomState(0)
    w_np, u_np = rng.randn(3, 4).astype('float32'), rng.randn(4, 4).astype('float32')
    w, u = K.variable(w_np), K.variable(u_np)
    x = K.placeholder(shape=(None, 5, 3))

    def step(x_t, states):
        h = K.tanh(K.dot(x_t, w) + K.dot(states[0], u))
        return h, [h]
    h0 = K.zeros_like(K.dot(x[:, 0], w))
    # the graph is the session's: loops that earlier tests built are left out
    before = set(name for name, _ in _loop_bodies(K.get_session().graph))
    last, _, _ = K.rnn(step, x, [h0])
    loss = K.sum(last)
    f = K.function([x], [loss] + K.gradients(loss, [w, u]))
    bodies = [(name, ops) for name, ops in _loop_bodies(K.get_session().graph)
              if name not in before]
    assert bodies and not any('ReadVariableOp' in ops for _, ops in bodies), bodies
    xv = rng.randn(2, 5, 3).astype('float32')
    # numpy reference: forward, then back-propagation through time
    hs = [np.zeros((2, 4), 'float32')]
    for t in range(5):
        hs.append(np.tanh(xv[:, t] @ w_np + hs[-1] @ u_np))
    gw, gu, gh = np.zeros_like(w_np), np.zeros_like(u_np), np.ones((2, 4), 'float32')
    for t in range(5, 0, -1):
        gz = gh * (1 - hs[t] ** 2)
        gw += xv[:, t - 1].T @ gz
        gu += hs[t - 1].T @ gz
        gh = gz @ u_np.T
    loss_v, gw_v, gu_v = f([xv])
    np.testing.assert_allclose(loss_v, hs[-1].sum(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gw_v, gw, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gu_v, gu, rtol=1e-5, atol=1e-5)


def test_function_called_straight_through_the_eager_runtime(K):
    """K.function's compiled program is run by the direct caller (no
    ConcreteFunction._call_flat layers): the same values as the plain call, captured
    variables read at each call, a failing op still an OpError turned into our
    ValueError, and a changed call option (the config) taken at the next call."""
    import tensorflow as tf
    x = K.placeholder(shape=(None, 3))
    i = K.placeholder(shape=(None,), dtype='int32')
    w = K.variable(np.arange(3., dtype='float32'))
    f = K.function([x, i], [K.gather(x * w, i), K.sum(w)])
    xs = np.arange(6., dtype='float32').reshape(2, 3)
    got = f([xs, np.array([1, 0])])
    fn, call, _ = f._variants[None]
    assert call is not None                        # this TensorFlow has the direct path
    plain = [np.asarray(t) for t in fn(tf.constant(xs), tf.constant([1, 0]))]
    for a, b in zip(got, plain):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(got[0], (xs * np.arange(3.))[[1, 0]])
    K.set_value(w, np.ones(3, 'float32'))
    np.testing.assert_array_equal(f([xs, np.array([0])])[0], xs[[0]])
    assert float(f([xs, np.array([0])])[1]) == 3.0
    with pytest.raises(ValueError, match='indices'):
        f([xs, np.array([5])])
    from tensorflow.python.eager import context
    ctx = context.context()
    before = ctx.function_call_options
    try:
        options = context.FunctionCallOptions(
            config_proto=tf.compat.v1.ConfigProto.FromString(before.config_proto_serialized))
        ctx.function_call_options = options
        np.testing.assert_array_equal(f([xs, np.array([1])])[0], xs[[1]])
        assert f._variants[None][1] is not None
    finally:
        ctx.function_call_options = before


def test_lean_py_func_entry_runs_the_body(K):
    """The MPI allreduce node's registry entry (collectives._register_lean): the node
    calls the body directly, without TensorFlow's autograph wrapper and result
    conversion, in a K.function (which imports the graph: the token is kept)."""
    import tensorflow as tf
    from tensorflow.python.ops import script_ops
    from keras_backend.tensorflow_backend import collectives
    calls = []

    def body(value):
        calls.append(value.shape)
        return (value * 2).astype(value.dtype)
    x = K.placeholder(shape=(3,))
    with K.get_session().graph.as_default():
        out = tf.numpy_function(lambda v: v, [x], tf.float32, stateful=True)
    collectives._register_lean(out.op, body)
    token = out.op.get_attr('token')
    entry = script_ops._py_funcs.get(token.decode('ascii') if isinstance(token, bytes)
                                     else token)
    assert type(entry).__name__ == 'LeanPyFunc'
    f = K.function([x], [out + 1.0])
    np.testing.assert_array_equal(f([np.array([1., 2., 3.], 'float32')])[0], [3., 5., 7.])
    assert calls == [(3,)]


@pytest.mark.parametrize('name', ['equal', 'not_equal', 'greater', 'greater_equal', 'less',
                                  'less_equal', 'maximum', 'minimum'])
def test_two_tensors_of_two_dtypes_raise_type_error(K, name):
    """TensorFlow's binary ops take one dtype: a float32 and an int32 tensor are refused
    with our TypeError naming both arguments (TensorFlow's eager InvalidArgumentError
    before; found by tests/fuzz_api.py); a number takes the tensor's dtype."""
    x = K.constant(np.array([1., 2.], 'float32'))
    y = K.constant(np.array([2, 1], 'int32'), dtype='int32')
    with pytest.raises(TypeError, match=r"%s: arguments 'x' and 'y' must have the same dtype "
                                        r"on TensorFlow; got float32 and int32" % name):
        getattr(K, name)(x, y)
    want = getattr(np, name)(np.array([1., 2.]), 2.)
    np.testing.assert_array_equal(K.eval(getattr(K, name)(x, 2)), want)


def test_variable_from_a_graph_constant_takes_its_value_without_a_program(K, monkeypatch):
    """Keras' zeros / ones initialisers run inside the layer's name scope, where
    K.constant is a graph constant: the variable takes the constant's value from the op
    itself (no function compiled and run for it)."""
    import sys
    tensors = sys.modules['keras_backend.tensorflow_backend.tensors']

    def no_eval(x):
        raise AssertionError('eval compiled a function for a constant')
    values = np.arange(6, dtype='float32').reshape(2, 3)
    with K.name_scope('dense_1'):
        c = K.constant(values)
        monkeypatch.setattr(tensors, 'eval', no_eval)
        v = K.variable(c, dtype='float64')
    monkeypatch.undo()
    np.testing.assert_array_equal(K.get_value(v), values)
    assert K.dtype(v) == 'float64'


def _compiled_op_types(f, value):
    """Op types of the program ``K.function`` ``f`` compiled for phase ``value``."""
    fn = f._variants[value][0]
    return [n.op for n in fn.graph.as_graph_def().node]


def test_in_train_phase_compiles_only_the_phase_taken(K):
    """Decided by the learning phase, in_train_phase builds a select (no cond: a cond's
    branch and gradient functions cost far more to build and compile in a deep model),
    and each compiled phase keeps only its own side: the test phase has no random op
    of the dropout, the train phase none of the test expression; values and gradients
    are those of the phase, the side not taken not differentiated (no ``0 * inf``).
    A function that needs the phase but is not fed it has the test phase (the placeholder's default) and its random op is gone too. Branches of
    different shapes keep the cond."""
    K.clear_session()
    x = K.placeholder(shape=(None, 4))
    w = K.variable(np.full((4,), 2., 'float32'))
    dropped = K.in_train_phase(lambda: K.dropout(x * w, 0.5, seed=3), lambda: x * w + 100.,
                               training=K.learning_phase())
    assert dropped.op.type == 'Select'
    loss = K.sum(dropped)
    grad = K.gradients(loss, [w])[0]
    f = K.function([x, K.learning_phase()], [dropped, grad])
    xs = np.arange(1., 9., dtype='float32').reshape(2, 4)
    out, g = f([xs, 0])
    np.testing.assert_allclose(out, xs * 2. + 100.)
    np.testing.assert_allclose(g, xs.sum(axis=0))
    test_ops = _compiled_op_types(f, False)
    assert 'If' not in test_ops and 'Select' not in test_ops
    assert not [t for t in test_ops if t.startswith('Random')], test_ops
    out, g = f([xs, 1])
    kept = out != 0
    np.testing.assert_allclose(out[kept], (xs * 2. * 2.)[kept])     # scaled by 1 / 0.5
    np.testing.assert_allclose(g, (kept * xs * 2.).sum(axis=0))
    train_ops = _compiled_op_types(f, True)
    assert [t for t in train_ops if t.startswith('Random')]
    assert 'Select' not in train_ops
    # not fed: the default (test) phase, specialised
    unfed = K.function([x], [dropped])
    np.testing.assert_allclose(unfed([xs])[0], xs * 2. + 100.)
    assert not [t for t in _compiled_op_types(unfed, None) if t.startswith('Random')]
    # the side not taken is not differentiated (as with a cond): no 0 * inf of its
    # derivatives (sqrt's at 0) in the gradient of the side taken
    y = K.placeholder(shape=(None, 3))
    root = K.in_train_phase(lambda: y * 3., lambda: K.sqrt(y), training=K.learning_phase())
    f3 = K.function([y, K.learning_phase()], K.gradients(K.sum(root), [y]))
    ys = np.array([[0., 1., 4.]], 'float32')
    np.testing.assert_allclose(f3([ys, 1])[0], np.full((1, 3), 3.))
    ys = ys + 1.
    np.testing.assert_allclose(f3([ys, 0])[0], 0.5 / np.sqrt(ys), rtol=1e-6)
    # branches of different shapes: the cond, each phase its own shape
    odd = K.in_train_phase(lambda: K.sum(x, axis=1), lambda: x, training=K.learning_phase())
    assert odd.op.type != 'Select'
    f2 = K.function([x, K.learning_phase()], [odd])
    np.testing.assert_allclose(f2([xs, 1])[0], xs.sum(axis=1))
    np.testing.assert_allclose(f2([xs, 0])[0], xs)


def test_session_callable_from_options(K):
    """The session stand-in answers TensorFlow 1's _make_callable_from_options (Keras 2.2's
    tests check for it): fed values in feed order, fetched values back (a variable read at
    the call), target ops accepted."""
    from tensorflow.core.protobuf import config_pb2
    K.clear_session()
    x = K.placeholder(shape=(None, 2), name='cx')
    v = K.variable(np.array([1., 10.], 'float32'))
    out = K.sum(x * 3., axis=1)
    scaled = x * v
    options = config_pb2.CallableOptions()
    options.feed.append(x.name)
    options.fetch.extend([out.name, scaled.name])
    options.target.append(scaled.op.name)
    call = K.get_session()._make_callable_from_options(options)
    xs = np.array([[1., 2.], [3., 4.]], 'float32')
    got = call(xs, run_metadata=None)
    assert isinstance(got, list) and len(got) == 2
    np.testing.assert_allclose(got[0], [9., 21.])
    np.testing.assert_allclose(got[1], xs * [1., 10.])
    K.set_value(v, np.array([2., 2.], 'float32'))
    np.testing.assert_allclose(call(xs)[1], xs * 2.)


def test_numbers_layers_bring_are_one_constant_each_in_the_graph(K):
    """The numbers Keras 2's layers bring to every layer (a BatchNormalization's momentum,
    epsilon and 1.0, the indices of ``K.shape(x)[i]``, an initialiser's shape and bounds,
    a concatenation's axis, the zeros of a ``Zeros`` initialiser) are one shared ``Const``
    each in the module graph: a second identical block adds none, and the values are
    numpy's."""
    x = K.placeholder(shape=(None, 3, 3, 2))
    gamma = K.variable(np.array([1.5, 0.5], 'float32'))
    beta = K.variable(np.array([0.1, -0.2], 'float32'))

    def block():
        with K.name_scope('block'):
            normed, mean, var = K.normalize_batch_in_training(x, gamma, beta, [0, 1, 2],
                                                              epsilon=1e-3)
            n = K.cast(K.prod([K.shape(x)[i] for i in (0, 1, 2)]), 'float32')
            corrected = var * n / (n - 1.001)
            out = K.concatenate([normed * 0.5 + 1.0, normed - 2], axis=-1)
            zeros = K.constant(0., shape=(2,))
            draw = K.random_uniform([3, 2], -0.5, 0.5, seed=3)
            # Keras' BatchNormalization(scale=False, center=False): no gamma, no beta
            bare = K.normalize_batch_in_training(x, None, None, [0, 1, 2], epsilon=1e-3)[0]
            return out, corrected, zeros, draw, K.shape(x)[-1], mean, bare

    graph = x.graph

    def consts():
        return sum(1 for op in graph.get_operations() if op.type == 'Const')

    block()
    before = consts()
    out, corrected, zeros, draw, channels, mean, bare = block()
    assert consts() == before
    xv = np.random.RandomState(0).randn(4, 3, 3, 2).astype('float32')
    got = K.function([x], [out, corrected, zeros, draw, channels, mean, bare])([xv])
    mu, v = xv.mean(axis=(0, 1, 2)), xv.var(axis=(0, 1, 2))
    normed = (xv - mu) / np.sqrt(v + 1e-3) * [1.5, 0.5] + [0.1, -0.2]
    np.testing.assert_allclose(got[0], np.concatenate([normed * 0.5 + 1.0, normed - 2], -1),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[1], v * 36 / (36 - 1.001), rtol=1e-5)
    np.testing.assert_array_equal(got[2], np.zeros(2, 'float32'))
    assert got[3].shape == (3, 2) and np.all(np.abs(got[3]) <= 0.5) and np.ptp(got[3]) > 0
    assert int(got[4]) == 2
    np.testing.assert_allclose(got[5], mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[6], (xv - mu) / np.sqrt(v + 1e-3), rtol=1e-4, atol=1e-4)
    # eager code keeps its own constants
    assert K.eval(K.constant(1., shape=(2,)) * 0.5).tolist() == [0.5, 0.5]
