"""The eager-graph engines (JAX, PyTorch: ``keras_backend.eager_graph``): a node's static
shapes come from abstract runs of its op at two probe sizes (``_infer_probes``); these tests
hold how many such runs a Keras training graph costs, and the values against numpy."""
import importlib
import importlib.util
import os

import numpy as np
import pytest

from conftest import load_adapter, requested_backends
from keras_backend import engines


def _eager_graph_engines():
    """The requested backends whose adapter is built on ``keras_backend.eager_graph``."""
    found = []
    for name in requested_backends():
        spec = importlib.util.find_spec(engines.adapter_module(name))
        core = os.path.join(os.path.dirname(spec.origin), 'core.py')
        if os.path.exists(core):
            with open(core) as fh:
                if 'eager_graph' in fh.read():
                    found.append(name)
    return found


ENGINES = _eager_graph_engines()
pytestmark = pytest.mark.skipif(not ENGINES, reason='KERAS_BACKEND_TESTS has no engine '
                                                    'built on keras_backend.eager_graph')


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch):
    """(K, the list that records each probe inference) of one engine, the shared cache of
    probe shapes emptied."""
    K, reason = load_adapter(request.param)
    if K is None:
        pytest.skip('%s backend not importable here: %s' % (request.param, reason))
    core = importlib.import_module(engines.adapter_module(request.param) + '.core')
    graph = importlib.import_module('keras_backend.eager_graph.graph')
    monkeypatch.setattr(graph, '_INFER_CACHE', {}, raising=False)
    runs, probes = [], core._infer_probes

    def counted(fn, leaves, treedef):
        runs.append(fn)
        return probes(fn, leaves, treedef)
    monkeypatch.setattr(core, '_infer_probes', counted)
    return K, runs


def test_a_gradient_of_many_variables_gives_its_outputs_their_shapes(engine):
    # each output of the gradient bundle takes its probe shapes from the bundle: inferring
    # them (an abstract run over all n entries, n times) was quadratic in the variables
    K, runs = engine
    rng = np.random.RandomState(0)
    consts = [rng.rand(i % 3 + 1, 2).astype('float32') for i in range(150)]
    ws = [K.variable(np.ones_like(c)) for c in consts]
    x = K.placeholder(shape=(None, 2))
    loss = K.sum(x) * 0.
    for w, c in zip(ws, consts):
        loss = loss + K.sum(w * K.constant(c))
    del runs[:]
    grads = K.gradients(loss, ws)
    assert len(runs) == 0
    assert [K.int_shape(g) for g in grads] == [c.shape for c in consts]
    got = K.function([x], grads)([np.ones((3, 2), 'float32')])
    for g, c in zip(got, consts):
        np.testing.assert_allclose(g, c, rtol=1e-6)


def _adam_like(K, shapes, rng):
    """Adam's arithmetic (as Keras 2.3.1 writes it) over variables of ``shapes``: the
    updates, the variables and numpy's new values for gradient ``g``."""
    updates, ws, expected = [], [], []
    lr = K.variable(0.01)
    for shape in shapes:
        w0, g0 = rng.rand(*shape).astype('float32'), rng.rand(*shape).astype('float32')
        p, m, v = K.variable(w0), K.zeros(shape), K.zeros(shape)
        g = K.variable(g0)      # a node, as a gradient is
        m_t = (0.9 * m) + (1. - 0.9) * g
        v_t = (0.999 * v) + (1. - 0.999) * K.square(g)
        p_t = p - lr * m_t / (K.sqrt(v_t) + 1e-7)
        updates += [K.update(m, m_t), K.update(v, v_t), K.update(p, p_t)]
        ws.append(p)
        m_n, v_n = 0.1 * g0, 0.001 * g0 ** 2
        expected.append(w0 - 0.01 * m_n / (np.sqrt(v_n) + 1e-7))
    return updates, ws, expected


def test_an_optimizers_arithmetic_is_inferred_once_per_shape(engine):
    # the operators and the fixed unary ops are shared by their nodes, and their probe
    # shapes are kept by the op and its leaves' shapes: 40 weights of two shapes cost the
    # inferences of two
    K, runs = engine
    rng = np.random.RandomState(1)
    _adam_like(K, [(3, 2), (4,)], rng)
    two = len(runs)
    del runs[:]
    updates, ws, expected = _adam_like(K, [(3, 2), (4,)] * 20, rng)
    assert len(runs) <= two // 2, (len(runs), two)
    K.function([], [], updates=updates)([])
    for w, e in zip(ws, expected):
        np.testing.assert_allclose(K.get_value(w), e, rtol=1e-5, atol=1e-6)
