"""TensorFlow-only behaviours of the adapter that Keras 2.3.1 relies on.

Eager variables and the one symbolic graph (see the module docstring of
``keras_backend.tensorflow_backend``): updates used as control dependencies
(Keras' stateful metrics), the Keras 2 graph mode for ops on variables,
string placeholders, numpy-drawn seeds.
"""
import sys
import types

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


def test_keras2_graph_mode_reads_variables_at_every_call(K, monkeypatch):
    # As Keras 2.3.1's Adam: t = cast(iterations) + 1 and beta_1 * m must be
    # graph values, re-read at every training step.
    monkeypatch.setitem(sys.modules, 'keras.backend.load_backend',
                        types.ModuleType('keras.backend.load_backend'))
    it, beta, m = K.variable(0., name='it'), K.variable(0.9), K.variable(2.)
    t = K.cast(it, 'float32') + 1
    decayed = beta * m
    up = K.update(m, decayed)
    f = K.function([], [t, decayed], updates=[up, K.update_add(it, 1.)])
    assert float(K.eval(m)) == 2.           # not applied at creation
    out1 = f([])
    out2 = f([])
    np.testing.assert_allclose([out1[0], out2[0]], [1., 2.])
    np.testing.assert_allclose([out1[1], out2[1]], [1.8, 1.62], rtol=1e-6)
    np.testing.assert_allclose(K.eval(t), 3.)


def test_eager_variable_ops_outside_keras2(K):
    if 'keras.backend.load_backend' in sys.modules:
        pytest.skip('Keras 2 is loaded in this process')
    v = K.variable(2.)
    assert not K.is_keras_tensor(K.cast(v, 'float32'))
    np.testing.assert_allclose(K.eval(K.square(v)), 4.)


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
