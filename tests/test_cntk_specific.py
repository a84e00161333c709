"""CNTK-only behaviours of the adapter that Keras 2.3.1's engine relies on.

CNTK has no control edges, no zero-element values and no name scopes; these
tests pin down what the adapter does instead (see the docstrings of
``identity``/``control_dependencies``, ``Function``, ``arange`` and
``name_scope`` in keras_backend/cntk_backend/).
"""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import load_adapter, requested_backends

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

if 'cntk' not in requested_backends():
    pytest.skip('CNTK is not among KERAS_BACKEND_TESTS', allow_module_level=True)

K, _REASON = load_adapter('cntk')
if K is None:
    pytest.skip('cntk backend not importable here: %s' % _REASON, allow_module_level=True)


def test_engine_attributes():
    import cntk
    assert K.ENGINE == 'cntk'
    assert K.ENGINE_VERSION == cntk.__version__


def test_identity_under_control_dependencies_reads_the_update():
    # Keras' stateful metrics: result = identity(total / count) after update_add
    total, count = K.variable(0.), K.variable(0.)
    x = K.placeholder(shape=(None,))
    ups = [K.update_add(total, K.sum(x)), K.update_add(count, K.cast(K.size(x), 'float32'))]
    with K.control_dependencies(ups):
        mean = K.identity(total / count)
    plain = total / count + 0.
    f = K.function([x], [mean, plain], updates=ups)
    got_mean, _ = f([np.array([1., 2., 3.], 'float32')])
    assert got_mean == pytest.approx(2.)
    got_mean, got_plain = f([np.array([7.], 'float32')])
    assert got_mean == pytest.approx(13. / 4.)       # after this batch's update
    assert got_plain == pytest.approx(2.)            # outputs otherwise read old values
    assert K.get_value(total) == pytest.approx(13.)
    assert K.get_value(count) == pytest.approx(4.)


def test_training_step_with_input_reading_updates():
    # a gradient step (learner path) plus updates that read inputs (batch
    # statistics, metric totals) in one function: every update applied once
    x = K.placeholder(shape=(None, 2))
    w = K.variable(np.array([[1.], [2.]], 'float32'))
    seen = K.variable(0.)
    running = K.variable(np.zeros(2, 'float32'))
    loss = K.mean(K.square(K.dot(x, w)))
    g = K.gradients(loss, [w])[0]
    ups = [K.update(w, w - 0.1 * g), K.update_add(seen, K.cast(K.shape(x)[0], 'float32')),
           K.moving_average_update(running, K.mean(x, axis=0), 0.5)]
    f = K.function([x], [loss], updates=ups)
    xv = np.array([[1., 0.], [0., 1.]], 'float32')
    out = f([xv])[0]
    assert out == pytest.approx(np.mean((xv @ np.array([[1.], [2.]])) ** 2))
    grad = 2 * xv.T @ (xv @ np.array([[1.], [2.]])) / 2
    np.testing.assert_allclose(K.get_value(w), np.array([[1.], [2.]]) - 0.1 * grad, atol=1e-6)
    assert K.get_value(seen) == pytest.approx(2.)
    np.testing.assert_allclose(K.get_value(running), [0.25, 0.25], atol=1e-6)


def test_name_scope_prefixes_variable_names():
    with K.name_scope('outer'):
        with K.name_scope('inner'):
            v = K.variable(1., name='kernel')
        c = K.constant(1.)
    assert v.name == 'outer_inner/kernel'
    assert c.name == 'outer/constant'
    assert K.variable(1., name='free').name == 'free'


def test_empty_runtime_range_read_by_an_op_raises():
    n = K.placeholder(shape=())
    f = K.function([n], [K.sum(K.arange(n)) + 1.])
    assert float(f([np.array(3., 'float32')])[0]) == pytest.approx(4.)
    with pytest.raises(Exception, match='empty'):
        f([np.array(-1., 'float32')])


@pytest.mark.parametrize('name', ['depthwise_conv2d', 'separable_conv2d', 'conv2d'])
def test_conv_kernel_channel_mismatch_is_value_error(name):
    x = K.placeholder(shape=(None, 8, 8, 3))
    dk = K.variable(np.ones((3, 3, 4, 2), 'float32'))
    args = {'depthwise_conv2d': (dk,), 'conv2d': (dk,),
            'separable_conv2d': (dk, K.variable(np.ones((1, 1, 8, 5), 'float32')))}[name]
    with pytest.raises(ValueError, match=name):
        getattr(K, name)(x, *args)


def test_int_shape_keeps_sizes_cntk_knows_over_a_wrong_keras_shape():
    # Keras 2.3.1's ConvLSTM2D.get_initial_state follows image_data_format(), not
    # the layer's data_format, and sets _keras_shape (batch, 0, 3, 5) on a
    # channels_first state of shape (batch, 2, 3, 3); the recurrent conv2d then
    # reads the channels from int_shape.
    import reference as R
    x = K.placeholder((None, 2, 3, 3))
    state = x * 1.
    state._keras_shape = (None, 0, 3, 5)
    assert K.int_shape(state) == (None, 2, 3, 3)
    kv = np.random.RandomState(0).randn(3, 3, 2, 2).astype('float32')
    xv = np.random.RandomState(1).randn(4, 2, 3, 3).astype('float32')
    y = K.conv2d(state, K.variable(kv), padding='same', data_format='channels_first')
    got = K.function([x], [y])([xv])[0]
    np.testing.assert_allclose(got, R.conv2d(xv, kv, padding='same',
                                             data_format='channels_first'),
                               rtol=1e-4, atol=1e-5)


_OPERATOR_NAMES = ('__pow__', '__rpow__', '__floordiv__', '__rfloordiv__', '__mod__',
                   '__rmod__', '__lt__', '__le__', '__gt__', '__ge__')


def test_operators_exist_only_once_the_adapter_is_imported():
    # CNTK 2.7 alone has no **, //, % or <; importing the adapter adds them
    code = '\n'.join([
        'import warnings; warnings.simplefilter("ignore")',
        'import cntk as C',
        'x = C.input_variable((3,), dynamic_axes=[])',
        'for op in (lambda: x ** 2, lambda: 2 % x, lambda: x // 2, lambda: x < 1):',
        '    try:',
        '        op(); print("operator before import")',
        '    except TypeError:',
        '        pass',
        'import keras_backend.cntk_backend as K',
        'print(type(x ** 2).__name__, type(2 % x).__name__, type(x // 2).__name__,',
        '      type(x < 1).__name__)',
    ])
    env = dict(os.environ, KERAS_BACKEND_QUIET='1')
    env['PYTHONPATH'] = ROOT + os.pathsep + env.get('PYTHONPATH', '')
    out = subprocess.check_output([sys.executable, '-c', code], env=env, cwd=ROOT,
                                  stderr=subprocess.DEVNULL, universal_newlines=True)
    assert out.strip().splitlines()[-1] == 'Function Function Function Function', out


def test_operators_add_only_what_cntk_lacks():
    import cntk as C
    from cntk.tensor import TensorOpsMixin
    from cntk.variables import Constant, Parameter, Variable
    for cls in (C.Function, Variable, Parameter, Constant):
        for name in _OPERATOR_NAMES + ('__array_ufunc__',):
            assert getattr(getattr(cls, name), '_keras_backend_operator', False), (cls, name)
        # CNTK's own operators, equality and hash are CNTK's; its elementwise arithmetic runs
        # after a check of the static shapes (CNTK's own method, called unchanged)
        for name in ('__matmul__', '__neg__', '__abs__', '__getitem__'):
            assert not hasattr(getattr(cls, name), '_keras_backend_operator'), (cls, name)
        for name in ('__add__', '__radd__', '__sub__', '__rsub__', '__mul__', '__rmul__',
                     '__truediv__', '__rtruediv__'):
            original = getattr(getattr(cls, name), '_keras_backend_original')
            assert original is TensorOpsMixin.__dict__[name] or cls is C.Function, (cls, name)
    assert Variable.__eq__ is C.cntk_py.Variable.__eq__        # CNTK's Variable_eq
    assert C.Function.__eq__ is object.__eq__


def test_numpy_on_the_left_of_other_operators_is_unchanged():
    # numpy applies its ufunc to a CNTK tensor as an opaque object, as without
    # the adapter (an object array); the adapter's operators give tensors
    x = K.placeholder(shape=(None, 3))
    plus = np.ones(3, 'float32') + x
    assert isinstance(plus, np.ndarray) and plus.dtype == object and plus.shape == (3,)
    assert K.is_tensor(np.float32(1) + x)
    with pytest.raises(TypeError):
        np.sin(x)
    for out in (np.ones(3, 'float32') < x, np.float32(2) ** x, np.float32(2) % x,
                np.less(np.float32(1), x)):
        assert K.is_tensor(out) and K.int_shape(out) == (None, 3)


@pytest.mark.parametrize('shape, value', [((None, 3), (4, 3)), ((None,), (7,)),
                                          ((None, None, 5), (2, 6, 5)), ((None, 1, 4), (3, 1, 4)),
                                          ((2, None), (2, 9))])
def test_size_of_free_dimensions_is_counted_in_the_graph(shape, value):
    # Keras 2.3.1 divides every training loss by K.size (losses_utils): counted by graph
    # ops, not a numpy node (a Python call at every step)
    import cntk as C
    x = K.placeholder(shape)
    n = K.size(x)
    nodes = C.logging.graph.depth_first_search(
        C.combine([n]), lambda f: isinstance(f, C.Function), depth=-1)
    assert not [f for f in nodes if f.op_name == 'UserFunction' or
                type(f).__name__.endswith('UserFunction')]
    got = K.function([x], [n])([np.random.RandomState(0).rand(*value).astype('float32')])[0]
    assert got.dtype == np.float32 and float(got) == np.prod(value)


def test_a_loss_over_size_has_the_gradient_of_the_mean():
    x = K.placeholder((None, 3))
    w = K.variable(np.array([1., 2., 3.], 'float32'))
    loss = K.sum(x * w) / K.size(x * w)
    xv = np.arange(12, dtype='float32').reshape(4, 3)
    got_loss, got_grad = K.function([x], [loss, K.gradients(loss, [w])[0]])([xv])
    np.testing.assert_allclose(got_loss, (xv * [1., 2., 3.]).mean(), rtol=1e-6)
    np.testing.assert_allclose(got_grad, xv.sum(0) / 12., rtol=1e-6)


def test_a_placeholder_with_a_dimension_of_size_0_is_a_clear_value_error():
    with pytest.raises(ValueError, match=r"placeholder: argument 'shape' has a size of 0, which "
                                         r'CNTK cannot hold'):
        K.placeholder((None, 0, 2))


def _forward_values_kept_mb(f, feed):
    """MB of resident memory a function's first call keeps (CNTK allocates its network's
    buffers in the first forward pass and keeps them)."""
    def rss():
        with open('/proc/self/statm') as fh:
            return int(fh.read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 1e6
    before = rss()
    out = f(feed)
    return rss() - before, out


def _thirty_relus(x, rng):
    """30 nodes of ``relu(h + b)`` on placeholder ``x`` (None, 64, 64, 16): the tensor, an
    (8, 64, 64, 16) feed and numpy's values of the tensor for it."""
    h, ref = x, rng.rand(8, 64, 64, 16).astype('float32')
    xv = ref.copy()
    for i in range(30):
        b = np.float32(0.01 * (i - 15))
        h = K.relu(h + b)
        ref = np.maximum(ref + b, 0.)
    return h, xv, ref


def test_prediction_reads_placeholders_on_the_batch_axis_and_shares_buffers():
    # A graph whose inputs have no dynamic axis gets a buffer per node from CNTK (its memory
    # sharing recycles only the buffers of nodes below a batch-axis input); functions
    # without a training plan read each placeholder of unknown leading size through
    # unpack_batch of a batch-axis input: same numbers, CNTK's sharing.
    rng = np.random.RandomState(0)
    x = K.placeholder(shape=(None, 64, 64, 16))
    phase = K.learning_phase()
    h, xv, ref = _thirty_relus(x, rng)
    out = K.in_train_phase(h * 2., h, training=phase)
    f = K.function([x, phase], [K.sum(out, axis=(1, 2, 3)), K.shape(out)])
    kept, (got, shape) = _forward_values_kept_mb(f, [xv, 0])
    np.testing.assert_allclose(got, ref.sum(axis=(1, 2, 3)), rtol=1e-5)
    np.testing.assert_allclose(shape, [8, 64, 64, 16])
    # 30 nodes of 2 MB each kept their own buffer before (about 120 MB with the adds)
    assert kept < 40, kept
    graph, batch_inputs = f._batched
    assert [a.uid for a in graph.arguments if a.dynamic_axes] == \
        [b.uid for b in batch_inputs.values()]
    got, shape = f([xv[:3], 1])
    np.testing.assert_allclose(got, 2. * ref[:3].sum(axis=(1, 2, 3)), rtol=1e-5)
    np.testing.assert_allclose(shape, [3, 64, 64, 16])


def test_a_training_step_reads_placeholders_on_the_batch_axis_and_shares_buffers():
    # The training plan runs its forward and backward passes on the batch-axis form too:
    # the forward values the backward pass does not read share CNTK's buffers (ResNet50's
    # first step: 4.1 GB resident before, 3.4 GB after, Keras' CNTK backend 3.3 GB).
    rng = np.random.RandomState(1)
    x = K.placeholder(shape=(None, 64, 64, 16))
    w = K.variable(rng.rand(16).astype('float32'))
    w0 = K.get_value(w)
    h, xv, ref = _thirty_relus(x, rng)
    loss = K.mean(K.sum(h * w, axis=-1))
    grad = K.gradients(loss, [w])[0]
    f = K.function([x], [loss], updates=[K.update_sub(w, 0.5 * grad)])
    assert f._train is None and f([xv[:1]]) is not None and f._train is not None
    K.set_value(w, w0)
    kept, (got,) = _forward_values_kept_mb(f, [xv])
    np.testing.assert_allclose(got, (ref * w0).sum(-1).mean(), rtol=1e-5)
    np.testing.assert_allclose(K.get_value(w), w0 - 0.5 * ref.mean(axis=(0, 1, 2), dtype=np.float64),
                               rtol=1e-5)
    # 30 nodes of 2 MB kept their own buffer before (about 130 MB with the adds)
    assert kept < 40, kept
    graph, batch_inputs = f._batched
    assert [a.uid for a in graph.arguments if a.dynamic_axes] == \
        [b.uid for b in batch_inputs.values()]


def test_a_training_step_the_batch_axis_form_refuses_runs_on_the_graph_as_built(monkeypatch):
    # where CNTK refuses a graph's batch-axis form, the step runs the graph as built (its
    # forward pass wrote nothing) and keeps to it
    from keras_backend.cntk_backend import core
    forward = core._CFunction._forward

    def refusing(graph, *args):
        if any(a.dynamic_axes for a in graph.arguments):
            raise RuntimeError('refused')
        return forward(graph, *args)
    monkeypatch.setattr(core._CFunction, '_forward', staticmethod(refusing))
    monkeypatch.setattr(core, '_BATCH_AXIS_MIN_VALUES', 0)   # tried for a graph this small
    x = K.placeholder(shape=(None, 3))
    w = K.variable(np.array([1., 2., 3.], 'float32'))
    loss = K.mean(K.sum(x * w, axis=1))
    f = K.function([x], [loss], updates=[K.update_sub(w, 0.5 * K.gradients(loss, [w])[0])])
    xv = np.arange(12., dtype='float32').reshape(4, 3)
    got = f([xv])[0]
    assert got == pytest.approx((xv * [1., 2., 3.]).sum(1).mean())
    np.testing.assert_allclose(K.get_value(w), [1., 2., 3.] - 0.5 * xv.mean(0), rtol=1e-6)
    assert f._batched is False


def test_a_small_function_runs_its_graph_as_built_until_a_call_holds_enough_values():
    # the batch-axis form is a clone of the graph (0.5-1 ms in CNTK): a function whose
    # outputs hold few values for the rows fed runs the graph as built, and a later call
    # with enough rows takes the batch-axis form; the numbers are the same either way
    from keras_backend.cntk_backend import core
    rng = np.random.RandomState(2)
    x = K.placeholder(shape=(None, 16))
    w = K.variable(rng.rand(16, 8).astype('float32'))
    h = K.relu(K.dot(x, w) - 1.)
    f = K.function([x], [K.sum(h, axis=1), h * 2.])
    small = rng.rand(4, 16).astype('float32')
    ref = np.maximum(small.dot(K.get_value(w)) - 1., 0.)
    got, twice = f([small])
    np.testing.assert_allclose(got, ref.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(twice, 2. * ref, rtol=1e-5)
    assert f._batched is None and 0 < f._row_values < 100, f._row_values
    rows = core._BATCH_AXIS_MIN_VALUES // f._row_values + 1
    big = rng.rand(rows, 16).astype('float32')
    ref = np.maximum(big.dot(K.get_value(w)) - 1., 0.)
    got, twice = f([big])
    assert f._batched
    np.testing.assert_allclose(got, ref.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(twice, 2. * ref, rtol=1e-5)
    got, twice = f([small])              # the batch-axis form from now on: same numbers
    np.testing.assert_allclose(got, np.maximum(small.dot(K.get_value(w)) - 1., 0.).sum(1),
                               rtol=1e-5)


def test_placeholders_fed_different_row_counts_still_evaluate(monkeypatch):
    # CNTK's batch axis holds one size for all inputs: other counts take the graph as built
    from keras_backend.cntk_backend import core
    monkeypatch.setattr(core, '_BATCH_AXIS_MIN_VALUES', 0)   # tried for a graph this small
    a, b = K.placeholder(shape=(None, 3)), K.placeholder(shape=(None, 2))
    f = K.function([a, b], [K.sum(a) + K.sum(b), K.sum(a, axis=1)])
    av, bv = np.arange(12., dtype='float32').reshape(4, 3), np.ones((5, 2), 'float32')
    total, rows = f([av, bv])
    assert total == pytest.approx(av.sum() + bv.sum())
    np.testing.assert_allclose(rows, av.sum(axis=1))
    total, rows = f([av, bv[:4]])             # same counts: the batch-axis form
    assert f._batched
    assert total == pytest.approx(av.sum() + 8.)
    np.testing.assert_allclose(rows, av.sum(axis=1))


def _op_names(tensors):
    import cntk as C
    nodes = C.logging.graph.depth_first_search(
        C.combine(list(tensors)), lambda f: isinstance(f, C.Function), depth=-1)
    return [f.op_name for f in nodes]


def test_batch_norm_lays_its_parameters_along_the_last_axis_without_reshapes():
    # a 1-D statistic along the last axis broadcasts as in numpy, and the statistics drop
    # the reduced axes 0, 1, 2 in one reshape each (ResNet50's training graph: 641 reshape
    # nodes before, 110 after)
    rng = np.random.RandomState(2)
    x = K.placeholder(shape=(None, 4, 5, 3))
    xv = rng.rand(6, 4, 5, 3).astype('float32')
    gamma, beta = K.variable(rng.rand(3)), K.variable(rng.rand(3))
    y, m, v = K.normalize_batch_in_training(x, gamma, beta, [0, 1, 2], epsilon=1e-3)
    assert _op_names([y, m, v]).count('Reshape') == 2
    rm, rv = xv.mean(axis=(0, 1, 2)), xv.var(axis=(0, 1, 2))
    ry = (xv - rm) / np.sqrt(rv + 1e-3) * K.get_value(gamma) + K.get_value(beta)
    got = K.function([x], [y, m, v])([xv])
    for g, r in zip(got, (ry, rm, rv)):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5)
    z = K.batch_normalization(x, K.variable(rm), K.variable(rv), beta, gamma, axis=-1,
                              epsilon=1e-3)
    assert 'Reshape' not in _op_names([z])
    np.testing.assert_allclose(K.function([x], [z])([xv])[0], ry, rtol=1e-5, atol=1e-5)
    # along another axis the statistic is laid out by a reshape
    z1 = K.batch_normalization(x, K.variable(xv.mean(axis=(0, 2, 3))),
                               K.variable(xv.var(axis=(0, 2, 3))), None, None, axis=1)
    r1 = (xv - xv.mean(axis=(0, 2, 3))[:, None, None]) / \
        np.sqrt(xv.var(axis=(0, 2, 3))[:, None, None] + 1e-3)
    np.testing.assert_allclose(K.function([x], [z1])([xv])[0], r1, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_operators_built_through_swig_give_cntks_own_nodes_and_numpy_values(dtype):
    # ``+ - * /`` of two tensors of one dtype, or of a tensor and a Python / numpy number,
    # are built by CNTK's SWIG ops directly (core._direct_binary): the node CNTK's own
    # operator builds (the same op, a scalar constant of the tensor's dtype for a number)
    import cntk as C
    from keras_backend.cntk_backend import core
    rng = np.random.RandomState(3)
    xv, yv = rng.rand(4, 3).astype(dtype) + 0.5, rng.rand(4, 3).astype(dtype) + 0.5
    x = K.placeholder(shape=(None, 3), dtype=dtype)
    y = K.variable(yv, dtype=dtype)
    cases = [(x + y, xv + yv), (x - y, xv - yv), (x * y, xv * yv), (x / y, xv / yv),
             (x * 0.9, xv * 0.9), (0.9 * x, 0.9 * xv), (2 - x, 2 - xv), (x - np.float64(2.5),
             xv - 2.5), (3 / x, 3 / xv), (x / np.int64(4), xv / 4), (y + 1, yv + 1)]
    for node, _ in cases:
        assert type(node) is C.Function
        assert np.dtype(node.output.dtype) == np.dtype(dtype)
    names = [C.plus, C.minus, C.element_times, C.element_divide]
    own = [names[i % 4](x, y) for i in range(4)]   # CNTK's own functions, for their op names
    assert [n.root_function.op_name for n, _ in cases[:4]] == \
        [o.root_function.op_name for o in own]
    scalar, = cases[4][0].constants
    assert scalar.shape == () and np.dtype(scalar.dtype) == np.dtype(dtype)
    assert float(scalar.value) == pytest.approx(0.9, rel=1e-7)
    got = K.function([x], [n for n, _ in cases])([xv])
    for g, (_, r) in zip(got, cases):
        np.testing.assert_allclose(g, r, rtol=1e-6)
    # the cases CNTK's own operator still builds: a numpy array, a list, a bool
    arr = x * np.full((3,), 2., dtype)
    lst = x + [1., 2., 3.]
    flag = x * True
    got = K.function([x], [arr, lst, flag])([xv])
    np.testing.assert_allclose(got[0], xv * 2, rtol=1e-6)
    np.testing.assert_allclose(got[1], xv + [1., 2., 3.], rtol=1e-6)
    np.testing.assert_allclose(got[2], xv, rtol=1e-6)
    assert core._direct_binary(core._SWIG.plus, x, np.ones(3), False) is None
    assert core._direct_binary(core._SWIG.plus, x, True, False) is None


def test_operators_of_mixed_dtypes_or_several_outputs_are_left_to_cntk():
    # what CNTK's own operator does with them is unchanged: mixed dtypes and a Function of
    # several outputs are not built directly
    import cntk as C
    from keras_backend.cntk_backend import core
    x32 = K.placeholder(shape=(None, 2), dtype='float32')
    x64 = K.placeholder(shape=(None, 2), dtype='float64')
    assert core._direct_binary(core._SWIG.plus, x32, x64, False) is None
    two = C.combine([C.plus(x32, x32), C.minus(x32, x32)])
    assert core._direct_binary(core._SWIG.plus, two, 1.0, False) is None
    with pytest.raises(Exception) as own:
        C.plus(two, 1.0)
    with pytest.raises(type(own.value)):
        two + 1.0
    # a shape conflict is still our ValueError
    with pytest.raises(ValueError, match='broadcast'):
        x32 + K.variable(np.ones((3,), 'float32'))


@pytest.mark.parametrize('value', [np.arange(6.).reshape(2, 3), np.arange(6.).reshape(3, 2).T,
                                   np.float64(1.5), np.ones((1,)), np.arange(24.).reshape(2, 3, 4)])
def test_variables_and_constants_hold_a_copy_of_their_value_in_its_shape(value):
    # core._parameter / core._constant: CNTK's SWIG constructors, a C-contiguous copy; a
    # 0-d value keeps its shape ()
    src = np.array(value)
    c = K.constant(src)
    assert K.int_shape(c) == src.shape and K.dtype(c) == 'float32'
    c64 = K.constant(src, dtype='float64')
    src[...] = -3.
    np.testing.assert_array_equal(K.eval(c), np.array(value).astype('float32'))
    np.testing.assert_array_equal(K.eval(c64), np.array(value))
    src = np.array(value)
    v = K.variable(src)
    assert K.int_shape(v) == src.shape
    assert tuple(v.shape) == src.shape
    assert K.dtype(v) == 'float32'
    np.testing.assert_array_equal(K.get_value(v), src.astype('float32'))
    src[...] = -7.
    np.testing.assert_array_equal(K.get_value(v), np.array(value).astype('float32'))
    w = K.variable(np.array(value), dtype='float64')
    assert K.dtype(w) == 'float64'
    np.testing.assert_array_equal(K.get_value(w), np.array(value))
    K.set_value(v, np.full(src.shape, 2.))
    np.testing.assert_array_equal(K.get_value(v), np.full(src.shape, 2., 'float32'))


def test_values_per_row_read_from_the_walks_before_equal_a_fresh_walk(monkeypatch):
    # core._ROW_VALUES: the functions of one model share their graphs; a later walk reads
    # the Functions an earlier one learnt. The answer is what a walk with nothing learnt
    # gives: the free-axis outputs' known sizes, each Function counted once
    import cntk as C
    from keras_backend.cntk_backend import core
    x = K.placeholder(shape=(None, 5))
    w = K.variable(np.ones((5, 3), 'float32'))
    h = K.relu(K.dot(x, w))                  # (None, 3)
    pred = K.softmax(h * 2.)                 # (None, 3) each
    loss = K.mean(K.square(pred - h))        # shared h; a scalar
    small, large = C.combine([core._var(pred)]), C.combine([core._var(pred), core._var(loss)])
    fresh = {}
    for name, graph in (('small', small), ('large', large)):
        monkeypatch.setattr(core, '_ROW_VALUES', {})
        fresh[name] = core._values_per_row(graph)
    assert fresh['small'] >= 3 * 4       # dot, relu, times, softmax: 3 values a row each
    monkeypatch.setattr(core, '_ROW_VALUES', {})
    assert core._values_per_row(large) == fresh['large']
    learnt = len(core._ROW_VALUES)
    assert learnt > 0
    assert core._values_per_row(small) == fresh['small']     # read from the memo
    assert len(core._ROW_VALUES) == learnt
    assert core._values_per_row(large) == fresh['large']
    # past the bound the memo starts again, with the same answers
    monkeypatch.setattr(core, '_ROW_VALUES_MAX', 1)
    assert core._values_per_row(small) == fresh['small']
    assert core._values_per_row(large) == fresh['large']


def test_reshape_and_transpose_built_through_swig_equal_cntks_own():
    # core._reshape / core._transpose_node: CNTK's SWIG reshape and transpose with their Axis
    # objects made once; each (begin_axis, end_axis) and permutation gives CNTK's own node
    import itertools
    import cntk as C
    from keras_backend.cntk_backend import core
    x = C.input_variable((2, 3, 4, 5), dynamic_axes=[])
    value = np.arange(120, dtype='float32').reshape(2, 3, 4, 5)
    compared = 0
    for begin, end in itertools.product([None, 0, 1, 2, 4, -1, -2], [None, 0, 1, 3, 4, -1]):
        for shape in [(1,), (), (-1,), (2, 1)]:
            try:
                ref = C.reshape(x, shape, begin_axis=begin, end_axis=end)
            except Exception as e:      # CNTK refuses it: so must the SWIG path
                with pytest.raises(type(e)):
                    core._reshape(x, shape, begin, end)
                continue
            got = core._reshape(x, shape, begin, end)
            assert isinstance(got, C.Function)
            assert got.root_function.op_name == ref.root_function.op_name == 'Reshape'
            assert got.shape == ref.shape, (begin, end, shape)
            np.testing.assert_array_equal(got.eval({x: value}), ref.eval({x: value}))
            compared += 1
    assert compared >= 40
    for perm in itertools.permutations(range(4)):
        got = core._transpose_node(x, perm)
        assert got.root_function.op_name == 'TransposeAxes'
        assert got.shape == tuple(value.shape[p] for p in perm)
        np.testing.assert_array_equal(got.eval({x: value}), np.transpose(value, perm))
    with pytest.raises(ValueError):
        core._transpose_node(x, (0, 0, 1, 2))           # CNTK's own check of a permutation
    # a numpy operand is CNTK's own function's to take
    np.testing.assert_array_equal(core._reshape(value, (6, 20)).eval(), value.reshape(6, 20))


@pytest.mark.parametrize('pool_mode', ['max', 'avg'])
def test_channels_last_conv_bias_relu_pool_runs_channels_first_on_the_batch_axis(pool_mode):
    # core._per_sample_transposed: the pooling reads the convolution's output on CNTK's batch
    # axis, its bias and relu rebuilt there once; no transpose or batch-axis conversion lies
    # between the two, and the values are numpy's
    import cntk as C
    import reference as ref
    from keras_backend.cntk_backend import core
    rng = np.random.RandomState(0)
    xv = rng.randn(3, 6, 6, 2).astype('float32')
    kv = rng.randn(3, 3, 2, 4).astype('float32')
    bv = rng.randn(4).astype('float32')
    x = K.placeholder((None, 6, 6, 2))
    h = K.relu(K.bias_add(K.conv2d(x, K.variable(kv), padding='same'), K.variable(bv)))
    y = K.pool2d(h, (2, 2), strides=(2, 2), pool_mode=pool_mode)
    expected = ref.pool2d(ref.relu(ref.bias_add(ref.conv2d(xv, kv, padding='same'), bv)),
                          (2, 2), strides=(2, 2), pool_mode=pool_mode)
    np.testing.assert_allclose(K.function([x], [y])([xv])[0], expected, rtol=1e-5, atol=1e-5)
    # the path of x's values from the pooling down to the convolution; the bias beside it
    # is one reshape of the parameter
    path, f, beside = [], core._var(y).owner, {}
    while f.op_name != 'Convolution':
        path.append(f.op_name)
        fed = [i for i in f.inputs if i.is_output and C.as_composite(i.owner).arguments]
        assert len(fed) == 1, path
        beside[f.op_name] = [i for i in f.inputs if i.uid != fed[0].uid]
        f = fed[0].owner
    assert path[path.index('Pooling'):] == ['Pooling', 'ReLU', 'Plus'], path
    bias = beside['Plus'][0]
    assert bias.owner.op_name == 'Reshape' and bias.owner.inputs[0].is_parameter
    assert bias.shape == (4, 1, 1)


def test_a_training_plans_walk_keeps_the_row_values_its_step_reads(monkeypatch):
    # _GraphIndex.walk(row_values=True): the walk of the outputs' and the loss's graphs
    # keeps what _values_per_row reads, so that the step's own walk asks CNTK nothing; the
    # answer is a fresh walk's, and each Function's outputs' free sizes counted once
    import cntk as C
    from keras_backend.cntk_backend import core
    monkeypatch.setattr(core, '_ROW_VALUES', {})
    x, t = K.placeholder((None, 5)), K.placeholder((None, 3))
    w, b = K.variable(np.ones((5, 3), 'float32')), K.variable(np.zeros(3, 'float32'))
    pred = K.softmax(K.dot(x, w) + b)
    loss = K.mean(K.categorical_crossentropy(t, pred))
    grads = K.gradients(loss, [w, b])
    f = K.function([x, t], [loss], updates=[K.update_sub(p, 0.1 * g) for p, g in zip([w, b], grads)])
    f._build()
    f._plan()
    assert f._train is not None
    kept = dict(core._ROW_VALUES)
    assert kept
    value = core._values_per_row(f._graph)
    assert core._ROW_VALUES == kept                   # nothing left to read from CNTK
    monkeypatch.setattr(core, '_ROW_VALUES', {})
    assert core._values_per_row(f._graph) == value
    # each Function of the graph once: the known sizes of its outputs with a free axis
    expected, seen, stack = 0, set(), [o.owner for o in f._graph.outputs]
    while stack:
        fn = stack.pop()
        if fn.uid in seen:
            continue
        seen.add(fn.uid)
        for o in fn.outputs:
            if any(d < 0 for d in o.shape):
                expected += int(np.prod([d for d in o.shape if d >= 0]))
        stack.extend(i.owner for i in fn.inputs if i.is_output)
    assert value == expected > 0
    xv = np.random.RandomState(0).rand(4, 5).astype('float32')
    tv = np.eye(3, dtype='float32')[[0, 1, 2, 0]]
    # equal logits (w of ones, b of zeros): each class 1/3
    np.testing.assert_allclose(f([xv, tv])[0], np.log(3.), rtol=1e-6)


def test_the_learner_leaves_out_the_relu_under_sqrt(monkeypatch):
    # K.sqrt puts a relu under CNTK's sqrt for the gradient only (CNTK's sqrt clamps at 0
    # itself): the learner's update graph, which is only evaluated, reads the relu's input,
    # also where it is a gradient; the values stay numpy's, NaN included (the guard stays)
    import cntk as C
    from keras_backend.cntk_backend import core
    graphs = []
    real = C.cntk_py.universal_learner

    def spy(params, slots, graph):
        graphs.append(graph)
        return real(params, slots, graph)

    monkeypatch.setattr(C.cntk_py, 'universal_learner', spy)
    x = K.placeholder((None, 3))
    w0, a0 = np.array([1., -2., .5], 'float32'), np.zeros(3, 'float32')
    w, a = K.variable(w0), K.variable(a0)
    loss = K.sum(x * w)
    g = K.gradients(loss, [w])[0]
    f = K.function([x], [loss], updates=[K.update(w, w - 0.1 * K.sqrt(g)),
                                         K.update(a, a + K.sqrt(g - 1.))])
    xv = np.array([[3., -1., 1.], [1., -1., np.nan]], 'float32')
    f([xv])
    assert f._train is not None and len(graphs) == 1
    ops, seen, stack = [], set(), [o.owner for o in graphs[0].outputs]
    while stack:
        fn = stack.pop()
        if fn.uid not in seen:
            seen.add(fn.uid)
            ops.append(fn.op_name)
            stack.extend(i.owner for i in fn.inputs if i.is_output)
    assert ops.count('Sqrt') == 2 and 'ReLU' not in ops, ops
    gv = xv.sum(axis=0)                                  # [4, -2, nan]
    with np.errstate(invalid='ignore'):
        np.testing.assert_allclose(K.get_value(w), w0 - 0.1 * np.sqrt(np.maximum(gv, 0)),
                                   rtol=1e-6, equal_nan=True)
        np.testing.assert_allclose(K.get_value(a), a0 + np.sqrt(np.maximum(gv - 1., 0)),
                                   rtol=1e-6, equal_nan=True)
    assert np.isnan(K.get_value(w)[2]) and np.isnan(K.get_value(a)[2])
    # a gradient through K.sqrt is still 0 below 0
    v = K.variable(np.array([-1., 4.], 'float32'))
    np.testing.assert_allclose(K.eval(K.gradients(K.sum(K.sqrt(v)), [v])[0]), [0., .25])


def test_engine_int_shape_reads_the_batch_axis_as_the_dynamic_axes_say():
    # _engine_int_shape asks CNTK whether a tensor has a batch or a sequence axis (two
    # bools) before it asks for its dynamic axes: the answer is the one the axes give, a
    # placeholder's unknown axes included
    import cntk as C
    from keras_backend.cntk_backend import core

    def from_axes(t):
        v = t.output if isinstance(t, C.Function) else t
        s = tuple(None if d < 0 else d for d in v.shape)
        axes = v.dynamic_axes
        if not axes or any(a.is_sequence_axis for a in axes):
            return s
        return (None,) * len(axes) + s

    free = K.placeholder((None, 3))
    batch = C.input_variable((4,))
    seq = C.sequence.input_variable((2, 5))
    cases = {'free': (free, (None, 3)), 'free op': (K.exp(free), (None, 3)),
             'batch': (batch, (None, 4)), 'batch op': (C.relu(batch), (None, 4)),
             'sequence': (seq, (2, 5)), 'sequence op': (C.tanh(seq), (2, 5)),
             'unknown axes': (C.placeholder(shape=(3,)), (None, 3)),
             'constant': (K.constant(np.ones((2, 2), 'float32')), (2, 2))}
    for name, (t, want) in cases.items():
        assert core._engine_int_shape(t) == from_axes(t) == want, name
        assert core._engine_int_shape(t) == want, name          # asked again (kept)
