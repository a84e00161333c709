"""Theano/PyTensor adapter behaviours that Keras 2.3.1 relies on (Theano only).

What Keras' model library needs from this engine beyond the common contract:
``control_dependencies`` ordering reads after updates (stateful metrics),
``name_scope`` naming (weights are saved by name), ``rnn`` moving
loop-invariant tensors such as dropout masks out of the loop (so that
gradients flow through scan), and Theano's names for batch-norm axes.
Also the layout of the adapter itself: the engine differences live in two
engine modules (``keras_backend.theano_backend.theano_engine``,
``pytensor_engine``) that provide one interface, written once in
``keras_backend/theano_backend/engine_interface.py``.
"""
import ast
import os

import numpy as np
import pytest

import reference as R
from helpers import randn
from keras_backend import api


@pytest.fixture
def TK(K):
    if K.backend() != 'theano':
        pytest.skip('Theano/PyTensor adapter only')
    return K


def test_control_dependencies_reads_updated_values(TK):
    K = TK
    total = K.variable(0.)
    count = K.variable(0.)
    x = K.placeholder(shape=(None,))
    ups = [K.update_add(total, K.sum(x)), K.update_add(count, K.cast(K.size(x), 'float32'))]
    with K.control_dependencies(ups):
        result = total / count
    before = total / count            # built outside: reads the old values
    f = K.function([x], [result, before], updates=ups)
    r, b = f([np.array([1., 2., 3.], 'float32')])
    assert float(r) == pytest.approx(2.)
    assert not np.isfinite(float(b))   # 0 / 0 before the first update
    r, b = f([np.array([7.], 'float32')])
    assert float(r) == pytest.approx(13. / 4.) and float(b) == pytest.approx(2.)
    np.testing.assert_allclose(K.get_value(total), 13.)


def test_name_scope_prefixes_names(TK):
    K = TK
    with K.name_scope('outer'):
        with K.name_scope('inner'):
            v = K.variable(np.zeros(2), name='kernel')
        p = K.placeholder(shape=(2,), name='x')
    assert v.name == 'outer/inner/kernel'
    assert p.name == 'outer/x'
    assert K.variable(0., name='plain').name == 'plain'
    with pytest.raises(TypeError):
        with K.name_scope(3):
            pass


def test_rnn_hoists_outer_dropout_mask_and_differentiates(TK):
    K = TK
    seq = K.placeholder(shape=(None, 5, 3))
    init = K.placeholder(shape=(None, 3))
    w = K.variable(randn(3, 3, seed=60) * 0.5)
    cache = {}

    def step(x, states):
        if 'mask' not in cache:     # as Keras' recurrent cells: drawn on the first call
            ones = K.ones_like(x)
            cache['mask'] = K.in_train_phase(K.dropout(ones, 0.5, seed=5), ones)
        h = K.tanh(K.dot(x * cache['mask'], w) + states[0])
        h._uses_learning_phase = True       # what Keras' cells set with dropout
        return h, [h]

    last, outputs, _ = K.rnn(step, seq, [init])
    assert last._uses_learning_phase is True
    loss = K.sum(outputs)
    grad, = K.gradients(loss, [w])
    f = K.function([seq, init, K.learning_phase()], [outputs, grad, cache['mask']])
    xs = np.ones((2, 5, 3), 'float32')
    h0 = np.zeros((2, 3), 'float32')
    out, g, mask = f([xs, h0, 1])
    assert np.isfinite(g).all() and np.abs(g).sum() > 0
    assert set(np.unique(mask)) <= {0., 2.}
    # the same mask at every step: recompute the recurrence in numpy
    h = h0.astype(np.float64)
    wv = K.get_value(w).astype(np.float64)
    for t in range(5):
        h = np.tanh((xs[:, t] * mask) @ wv + h)
        np.testing.assert_allclose(out[:, t], h, atol=1e-5)
    out_test, _, mask_test = f([xs, h0, 0])
    np.testing.assert_array_equal(mask_test, np.ones_like(mask_test))


@pytest.mark.parametrize('axes,kept', [('per-activation', [1, 2, 3]), ('spatial', [1])])
def test_normalize_batch_in_training_theano_axis_names(TK, axes, kept):
    K = TK
    x = randn(3, 4, 2, 5, seed=61) * 2 + 1
    gamma = randn(*[x.shape[i] for i in kept], seed=62)
    beta = randn(*[x.shape[i] for i in kept], seed=63)
    outs = K.normalize_batch_in_training(K.variable(x), K.variable(gamma), K.variable(beta),
                                         axes, epsilon=1e-3)
    numeric = [0] if axes == 'per-activation' else [0, 2, 3]
    want = R.normalize_batch_in_training(x, gamma, beta, numeric, 1e-3)
    for got, exp in zip(outs, want):
        np.testing.assert_allclose(K.eval(got), exp, atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match='reduction_axes'):
        K.normalize_batch_in_training(K.variable(x), None, None, 'everything')


def test_shape_ops_record_keras_shape(TK):
    K = TK
    p = K.placeholder(shape=(None, 3, 4))
    assert K.batch_flatten(p)._keras_shape == (None, 12)
    assert K.permute_dimensions(p, (0, 2, 1))._keras_shape == (None, 4, 3)
    assert K.expand_dims(p, 1)._keras_shape == (None, 1, 3, 4)
    assert K.concatenate([p, p], axis=-1)._keras_shape == (None, 3, 8)
    assert K.sum(p, axis=1)._keras_shape == (None, 4)


# ---------------------------------------------------------------------------
# The engine modules: one declared interface, no engine branches in the adapter
# ---------------------------------------------------------------------------

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       'keras_backend', 'theano_backend')
ENGINE_MODULES = {'theano_engine': 'theano', 'pytensor_engine': 'pytensor'}
#: the adapter's own modules, which reach the engine only through its engine module: its
#: machinery, its API functions (one module per section of the API, their helpers, the
#: ``ops`` that gathers them) and the names of Keras 2.3.1's own Theano module
ADAPTER_MODULES = ('core', 'helpers') + tuple(
    m.__name__.rsplit('.', 1)[1] for m in api.SECTION_MODULES) + ('ops', 'keras2')


def _tree(module):
    with open(os.path.join(PACKAGE, module + '.py')) as f:
        return ast.parse(f.read())


def _interface():
    """The engine interface module, loaded from its file (plain data: no engine needed)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        '_theano_engine_interface', os.path.join(PACKAGE, 'engine_interface.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _imported_packages(tree):
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split('.')[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module.split('.')[0])
    return out


def test_engine_interface_is_written_once():
    interface = _interface()
    names = list(interface.NAMES)
    assert names and len(set(names)) == len(names), 'a name is listed twice'
    assert all(contract for _, contract in interface.INTERFACE), 'a name without its contract'
    for module, package in sorted(ENGINE_MODULES.items()):
        tree = _tree(module)
        doc = ast.get_docstring(tree)
        assert 'engine_interface' in doc and '- ``' not in doc, \
            '%s: the docstring should point to engine_interface, not list the names' % module
        others = set(ENGINE_MODULES.values()) - {package}
        assert not (_imported_packages(tree) & others), \
            '%s imports another engine (%s)' % (module, sorted(others))


@pytest.mark.parametrize('module', sorted(ENGINE_MODULES))
def test_engine_module_provides_the_interface(module):
    """Each engine module that imports here (Theano 1.0.5 on CPython 3.6, PyTensor on
    newer Pythons) provides every name of the interface, as its ``__all__`` in order."""
    import importlib
    interface = _interface()
    try:
        engine = importlib.import_module('keras_backend.theano_backend.' + module)
    except Exception as e:   # as the adapter: any failure means this engine is not here
        pytest.skip('%s does not import here (%s: %s)' % (module, type(e).__name__, e))
    assert interface.missing(engine) == []
    assert engine.ENGINE == ENGINE_MODULES[module]


def test_adapter_reaches_the_engine_only_through_its_engine_module():
    """After choosing the engine module, the adapter (core.py, the API functions' modules) has
    no ``ENGINE ==`` / ``ENGINE !=`` branches (nor compares any ``*.ENGINE``): each engine
    difference is a function or flag of the engine module."""
    for adapter in ADAPTER_MODULES:
        tree = _tree(adapter)
        compares = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                for part in [node.left] + list(node.comparators):
                    if (isinstance(part, ast.Name) and part.id == 'ENGINE') or \
                            (isinstance(part, ast.Attribute) and part.attr == 'ENGINE'):
                        compares.append(node.lineno)
        assert compares == [], '%s.py compares ENGINE on lines %s' % (adapter, compares)
        assert not (_imported_packages(tree) & set(ENGINE_MODULES.values())), \
            '%s.py imports an engine package itself' % adapter


def test_imported_engine_module_provides_its_interface(TK):
    K = TK
    engine = K._engine
    module = engine.__name__.rsplit('.', 1)[-1]
    assert module in ENGINE_MODULES
    assert _interface().missing(engine) == []
    assert K.ENGINE == engine.ENGINE == ENGINE_MODULES[module]
    assert K.ENGINE_VERSION == engine.ENGINE_VERSION
    assert K.th is engine.th and K.T is engine.T


@pytest.mark.parametrize('n', [2, 3])
@pytest.mark.parametrize('padding,strides,dilation,k,data_format', [
    ('same', 1, 1, 3, 'channels_last'), ('same', 1, 1, 2, 'channels_first'),
    ('valid', 2, 1, 4, 'channels_last'), ('same', 2, 1, 4, 'channels_first'),
    ('same', 1, 2, 3, 'channels_last')])
def test_engine_conv_agrees_with_im2col(TK, monkeypatch, n, padding, strides, dilation, k,
                                        data_format):
    """Where the engine runs conv2d / conv3d itself (Theano 1.0.5 with a BLAS: ``CorrMM``,
    ``Corr3dMM``), values, gradients and static shapes equal those of the adapter's im2col
    (slices + tensordot); also with the first spatial size unknown ('same' at stride 1
    pads the same whatever the size, so the engine's op still takes it)."""
    K = TK
    name = 'conv%dd' % n
    rng = np.random.RandomState(3)
    x = rng.randn(*((2, 9, 10, 7)[:n + 1] + (3,))).astype('float32')
    if data_format == 'channels_first':
        x = np.moveaxis(x, -1, 1)
    w = rng.randn(*((k,) * n + (3, 5))).astype('float32')

    def run(known):
        shape = (None,) + x.shape[1:]
        if not known:
            first = 2 if data_format == 'channels_first' else 1
            shape = shape[:first] + (None,) + shape[first + 1:]
        xs, kv = K.placeholder(shape), K.variable(w)
        y = getattr(K, name)(xs, kv, strides=(strides,) * n, padding=padding,
                             data_format=data_format, dilation_rate=(dilation,) * n)
        grads = K.gradients(K.sum(K.square(y)), [kv, xs])
        f = K.function([xs], [y] + grads)
        values = f([x])
        ops = set(type(node.op).__name__ for node in f._fn.maker.fgraph.apply_nodes)
        # the engine's own op where it is on, none of them where it is not ('same' at a
        # stride over an unknown size pads by an expression: im2col there)
        symbolic_pads = not known and padding == 'same' and strides != 1
        assert bool(ops & set(['CorrMM', 'Corr3dMM'])) == (
            getattr(K._engine, name) is not None and not symbolic_pads), ops
        return K.int_shape(y), values

    op = getattr(K._engine, name)
    if op is None or op(K.placeholder((None,) + (4,) * n + (1,)),
                        K.variable(np.ones((1,) * (n + 2))),
                        (1,) * n, (1,) * n, (0,) * n) is None:
        pytest.skip('%s runs %s as im2col only (no engine op fit to run it)'
                    % (K.ENGINE, name))
    native = [run(True), run(False)]
    monkeypatch.setattr(K._engine, name, None)
    im2col = [run(True), run(False)]
    for (n_shape, n_vals), (i_shape, i_vals) in zip(native, im2col):
        assert n_shape == i_shape
        for a, b in zip(n_vals, i_vals):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * (1 + np.abs(b).max()))


# (API name, x shape (channels_last), kernel shapes, keyword arguments, the engine names
# whose op it runs, the op class that must be in its graph where they are on)
ENGINE_OP_CASES = [
    ('conv1d', (2, 9, 3), [(3, 3, 5)], dict(padding='causal', dilation_rate=2),
     ['conv2d'], 'CorrMM'),
    ('conv1d', (2, 9, 3), [(4, 3, 5)], dict(padding='same', strides=2), ['conv2d'], 'CorrMM'),
    ('conv2d_transpose', (2, 5, 6, 3), [(3, 3, 4, 3)],
     dict(output_shape=(2, 11, 13, 4), strides=(2, 2), padding='valid'),
     ['conv_transpose'], 'CorrMM_gradInputs'),
    ('conv2d_transpose', (2, 5, 6, 3), [(2, 3, 4, 3)],
     dict(output_shape=(2, 5, 6, 4), padding='same'), ['conv_transpose'], 'CorrMM_gradInputs'),
    ('conv2d_transpose', (2, 3, 5, 6), [(4, 4, 2, 3)],
     dict(output_shape=(2, 2, 10, 12), strides=(2, 2), padding='same',
          data_format='channels_first'), ['conv_transpose'], 'CorrMM_gradInputs'),
    ('conv2d_transpose', (2, 5, 6, 3), [(3, 2, 4, 3)],
     dict(output_shape=(2, 9, 8, 4), padding='valid', dilation_rate=(2, 2)),
     ['conv_transpose'], 'CorrMM_gradInputs'),
    ('conv3d_transpose', (2, 3, 4, 5, 2), [(2, 3, 2, 3, 2)],
     dict(output_shape=(2, 6, 8, 10, 3), strides=(2, 2, 2), padding='same'),
     ['conv_transpose'], 'Corr3dMM_gradInputs'),
    ('depthwise_conv2d', (2, 7, 8, 3), [(3, 3, 3, 2)], dict(padding='same', strides=(2, 2)),
     ['depthwise_conv2d'], 'CorrMM'),
    ('depthwise_conv2d', (2, 7, 8, 3), [(2, 3, 3, 2)],
     dict(padding='valid', dilation_rate=(2, 2)), ['depthwise_conv2d'], 'CorrMM'),
    ('separable_conv1d', (2, 9, 3), [(3, 3, 2), (1, 6, 4)], dict(padding='causal'),
     ['depthwise_conv2d', 'conv2d'], 'CorrMM'),
    ('separable_conv2d', (2, 7, 8, 3), [(3, 3, 3, 2), (1, 1, 6, 4)], dict(padding='same'),
     ['depthwise_conv2d', 'conv2d'], 'CorrMM'),
]


@pytest.mark.parametrize('name,xs,kernels,kwargs,engine_names,op_class', ENGINE_OP_CASES)
def test_engine_conv_ops_agree_with_im2col(TK, monkeypatch, name, xs, kernels, kwargs,
                                           engine_names, op_class):
    """1-D convolutions (a 2-D op over a unit axis), transposed convolutions (the engine's
    gradient w.r.t. the input: ``CorrMM_gradInputs``, ``Corr3dMM_gradInputs``) and depthwise
    ones (a grouped ``CorrMM``), where the engine has the op (Theano 1.0.5 with a BLAS), as
    Keras' Theano backend builds them: values, gradients and static shapes equal those of
    the adapter's own graph (slices, ``tensordot``, the gradient of im2col), uneven 'same'
    and 'causal' pads, strides, dilation and channels_first included; no graph rewrite
    fails while compiling either."""
    K = TK
    # a graph rewrite that fails raises here (the adapter would log it and compile again)
    monkeypatch.setattr(K._engine, 'rewrite_failed', lambda exc: False)
    rng = np.random.RandomState(5)
    x = rng.randn(*xs).astype('float32')
    ws = [rng.randn(*k).astype('float32') for k in kernels]

    def run():
        xp, kvs = K.placeholder((None,) + xs[1:]), [K.variable(w) for w in ws]
        y = getattr(K, name)(xp, *kvs, **kwargs)
        grads = K.gradients(K.sum(K.square(y)), kvs + [xp])
        f = K.function([xp], [y] + grads)
        ops = set(type(node.op).__name__ for node in f._fn.maker.fgraph.apply_nodes)
        return K.int_shape(y), f([x]), ops

    if any(getattr(K._engine, e) is None for e in engine_names) or \
            not getattr(K._engine, '_HAS_BLAS', False):
        pytest.skip('%s builds %s from slices only (no engine op fit to run it)'
                    % (K.ENGINE, name))
    n_shape, n_vals, n_ops = run()
    assert op_class in n_ops, n_ops
    for e in engine_names:
        monkeypatch.setattr(K._engine, e, None)
    i_shape, i_vals, i_ops = run()
    assert op_class not in i_ops, i_ops
    assert n_shape == i_shape
    for a, b in zip(n_vals, i_vals):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * (1 + np.abs(b).max()))


# ---------------------------------------------------------------------------
# padding='full' (Keras 2.3.1's Theano backend takes it for every convolution)
# ---------------------------------------------------------------------------

def _pad_full(x, ksize, dilation):
    """``x`` (channels_last) zero-padded by the dilated kernel's length - 1 on each side."""
    pads = [(0, 0)] + [((k - 1) * d, (k - 1) * d) for k, d in zip(ksize, dilation)] + [(0, 0)]
    return np.pad(x, pads, mode='constant')


def _flip(kernel, n):
    return np.ascontiguousarray(kernel[(slice(None, None, -1),) * n])


FULL_CASES = [
    ('conv1d', (2, 5, 3), (3, 3, 4), 1, 1),
    ('conv2d', (2, 5, 6, 3), (3, 2, 3, 4), (1, 1), (1, 1)),
    ('conv2d', (2, 7, 6, 3), (3, 3, 3, 4), (2, 2), (1, 1)),
    ('conv2d', (2, 7, 8, 3), (3, 3, 3, 4), (1, 1), (2, 2)),
    ('conv3d', (2, 4, 5, 3, 2), (2, 3, 2, 2, 3), (1, 1, 1), (1, 1, 1)),
]


@pytest.mark.parametrize('op,xs,ks,strides,dilation', FULL_CASES,
                         ids=['conv1d', 'conv2d', 'conv2d_s2', 'conv2d_d2', 'conv3d'])
def test_full_padding_convolutions(TK, op, xs, ks, strides, dilation):
    x, kernel = randn(*xs, seed=60), randn(*ks, seed=61)
    n = len(xs) - 2
    got = TK.eval(getattr(TK, op)(TK.constant(x), TK.constant(_flip(kernel, n)), strides,
                                  'full', dilation_rate=dilation))
    want = R.conv_nd(_pad_full(x, ks[:n], R._tup(dilation, n)), kernel, strides, 'valid',
                     dilation_rate=dilation)
    np.testing.assert_allclose(got, want, atol=1e-4)


def test_full_padding_depthwise_and_separable(TK):
    x, dk, pk = randn(2, 5, 6, 3, seed=62), randn(3, 2, 3, 2, seed=63), randn(1, 1, 6, 4, seed=64)
    padded = _pad_full(x, (3, 2), (1, 1))
    got = TK.eval(TK.depthwise_conv2d(TK.constant(x), TK.constant(dk), padding='full'))
    np.testing.assert_allclose(got, R.depthwise_conv2d(padded, dk), atol=1e-4)
    got = TK.eval(TK.separable_conv2d(TK.constant(x), TK.constant(dk), TK.constant(pk),
                                      padding='full'))
    np.testing.assert_allclose(got, R.separable_conv2d(padded, dk, pk), atol=1e-4)


@pytest.mark.parametrize('strides', [(1, 1), (2, 2)])
def test_full_padding_conv2d_transpose_is_the_adjoint(TK, strides):
    # the transpose of the 'full' convolution: the 'valid' transpose onto the padded
    # image, cropped; its output length is Keras' deconv_length for 'full'
    x, kernel = randn(2, 6, 5, 4, seed=65), randn(3, 3, 2, 4, seed=66)
    rows, cols = [n * s - (s + 3 - 2) for n, s in zip((6, 5), strides)]
    got = TK.eval(TK.conv2d_transpose(TK.constant(x), TK.constant(_flip(kernel, 2)),
                                      (2, rows, cols, 2), strides, 'full'))
    padded = R.conv2d_transpose(x, kernel, (2, rows + 4, cols + 4, 2), strides, 'valid')
    np.testing.assert_allclose(got, padded[:, 2:2 + rows, 2:2 + cols], atol=1e-4)


def test_full_padding_is_refused_by_pooling(TK):
    with pytest.raises(ValueError, match='padding'):
        TK.pool2d(TK.constant(randn(1, 4, 4, 1)), (2, 2), padding='full')


# ---------------------------------------------------------------------------
# Compiling: failed rewrites raise, PyTensor records no creation stacks (issue 33)
# ---------------------------------------------------------------------------

def _switch_rewrite(K):
    """The engine's rewrite of ``switch(c, a, a)`` and the name of its function attribute."""
    if K.ENGINE == 'pytensor':
        from pytensor.tensor.rewriting.basic import local_useless_switch
        return local_useless_switch, 'fn'
    from theano.tensor.opt import local_useless_switch
    return local_useless_switch, 'transform'


def test_function_raises_a_rewrite_failure(TK, monkeypatch):
    """An engine rewrite that fails while ``function`` compiles (here a ``MemoryError``,
    as PyTensor's rewrites raised on issue 33's model) raises from ``function``: the
    engines' own default (``on_opt_error=warn``) logs it and compiles on without it."""
    K = TK
    rewrite, attr = _switch_rewrite(K)

    def out_of_memory(*args):
        raise MemoryError('rewrite failed')
    monkeypatch.setattr(rewrite, attr, out_of_memory)
    x = K.placeholder(shape=(None, 3))
    y = K.switch(K.greater(x, 0.), x * 2., -x)
    with pytest.raises(MemoryError, match='rewrite failed'):
        K.function([x], [y])
    # the engine's flag is left as it was outside the compile
    assert str(K.th.config.on_opt_error) == 'warn'


def test_graph_variables_record_no_creation_stack(TK):
    """PyTensor: ``traceback__limit`` is 0 (the user's flags did not set it), so the
    graphs the adapter builds carry no creation stacks for PyTensor's rewrites to copy
    (they copied them into 3**k entries on issue 33's model). Theano 1.0.5 keeps its own
    default."""
    K = TK
    if K.ENGINE != 'pytensor':
        pytest.skip('PyTensor only: Theano 1.0.5 keeps its traceback.limit')
    if 'traceback__limit' in os.environ.get('PYTENSOR_FLAGS', ''):
        pytest.skip('traceback__limit set in PYTENSOR_FLAGS')
    assert K.th.config.traceback__limit == 0
    x = K.placeholder(shape=(None, 3))
    y = K.sum(K.switch(K.greater(x, 0.), K.exp(x), K.zeros_like(x)), axis=1)
    nodes = list(K._engine.ancestors([y]))
    assert len(nodes) > 4
    assert [v for v in nodes if getattr(v.tag, 'trace', [])] == []


def test_test_builds_without_gxx_optimisation_have_their_own_compile_folder(TK):
    """The engines do not key a compiled module by ``remove_gxx_opt``: where the test run
    compiles without -O3 (``tests/conftest.py``), it must do so in a folder of its own, or
    the user's later programs would load those unoptimised modules."""
    config = TK.th.config
    remove = getattr(config, 'cmodule__remove_gxx_opt', None)
    if remove is None:
        remove = config.cmodule.remove_gxx_opt
    default = 'compiledir_%(short_platform)s-%(processor)s-%(python_version)s-%(python_bitwidth)s'
    assert not remove or config.compiledir_format != default, config.compiledir


def test_keras_2_0_to_2_2_get_theano_1_variable_truth(TK, monkeypatch):
    """Keras 2.0-2.1's Conv2DTranspose, SeparableConv2D and DepthwiseConv2D ask ``if
    self.bias:``. Theano 1.0.5's variables were true; when Keras 2.0-2.2 loads the adapter, a
    PyTensor shared variable is made true too, and a computed tensor's truth is still refused
    (Theano 1.0.5 made that true as well; PyTensor's refusal is kept where Keras never asks)."""
    from keras_backend import keras2_compat
    from keras_backend.theano_backend import keras2
    from keras_backend.theano_backend.core import _engine
    K = TK
    v = K.variable(np.zeros(3, 'float32'))
    cls = type(v)
    monkeypatch.setattr(cls, '__bool__', cls.__bool__)      # restored after the test
    monkeypatch.setattr(keras2_compat, 'keras_release', lambda: (2, 3, 1))
    keras2._adopted_by_keras2()
    if _engine.ENGINE == 'pytensor':
        with pytest.raises(TypeError):
            bool(v)             # Keras 2.3.1 never asks: PyTensor's own rule stays
    monkeypatch.setattr(keras2_compat, 'keras_release', lambda: (2, 1, 6))
    keras2._adopted_by_keras2()
    assert bool(v) is True
    if _engine.ENGINE == 'pytensor':
        with pytest.raises(TypeError):
            bool(K.placeholder(shape=(3,)) * 2.)


def test_rnn_state_of_batch_one_takes_the_loop_state(TK):
    """A state variable of batch size 1 (a stateful layer's; our variables are broadcastable
    on their size-1 axes) is carried unbroadcast by the loop; the step's ops built on its
    stand-in (a DimShuffle, as ConvLSTM2D's transposes make) take the loop's state (Keras
    2.2.4's stateful ConvLSTM2D test raised Theano's broadcast-pattern TypeError)."""
    K = TK
    s0 = K.variable(np.ones((1, 3), 'float32'))
    x = K.placeholder(shape=(1, 4, 3))

    def step(xt, states):
        h = xt + K.transpose(K.transpose(states[0])) * 0.5
        return h, [h]
    last, outs, _ = K.rnn(step, x, [s0])
    xs = np.arange(12, dtype='float32').reshape(1, 4, 3)
    got_last, got_outs = K.function([x], [last, outs])([xs])
    h = np.ones((1, 3), 'float32')
    want = []
    for t in range(4):
        h = xs[:, t] + h * 0.5
        want.append(h)
    np.testing.assert_allclose(got_outs, np.stack(want, axis=1), atol=1e-5)
    np.testing.assert_allclose(got_last, want[-1], atol=1e-5)


def _deep(K, x, depth):
    """``x`` behind ``depth`` elementwise ops: a tensor with a long graph behind it."""
    for i in range(depth):
        x = K.tanh(x) * 0.5 + x
    return x


def test_sizes_of_deep_tensors_are_given_without_their_graph(TK, monkeypatch):
    """Padding, a transposed convolution's zeros and random draws of an unknown batch size
    give PyTensor's Alloc / RandomVariable the real sizes without the rewrite of a clone of
    the sizes' whole graph that these ops run to find static sizes (per layer, that made a
    deep model's build quadratic: Keras 2.1.6's InceptionV3 took over 15 min, now seconds).
    The results: the static sizes known, the values as numpy's."""
    K = TK
    x = K.placeholder(shape=(None, 4, 5, 2))
    deep = _deep(K, x, 60)
    graphs = []
    if K.ENGINE == 'pytensor':
        from pytensor.graph import fg
        init = fg.FunctionGraph.__init__

        def counting(self, *args, **kwargs):
            init(self, *args, **kwargs)
            graphs.append(len(self.apply_nodes))
        monkeypatch.setattr(fg.FunctionGraph, '__init__', counting)
    padded = K.spatial_2d_padding(deep, ((1, 2), (0, 1)))
    noise = K.random_uniform(K.shape(deep), seed=3)
    kernel = K.constant(randn(3, 3, 1, 2))
    up = K.conv2d_transpose(deep, kernel, (K.shape(deep)[0], 8, 10, 1), strides=(2, 2),
                            padding='same')
    dropped = K.dropout(deep, 0.5, seed=4)
    if K.ENGINE == 'pytensor':
        assert max(graphs or [0]) < 20, graphs      # never the 180+ nodes behind ``deep``
        monkeypatch.undo()
        assert K._engine.static_shape(padded) == (None, 7, 6, 2)
        assert K._engine.static_shape(noise) == (None, 4, 5, 2)
        assert K._engine.static_shape(up) == (None, 8, 10, 1)
    f = K.function([x], [deep, padded, noise, up, dropped])
    for batch in (2, 3):
        xv = randn(batch, 4, 5, 2)
        d, p, n, u, dr = f([xv])
        np.testing.assert_allclose(p, np.pad(d, ((0, 0), (1, 2), (0, 1), (0, 0))),
                                   atol=1e-6)
        assert n.shape == d.shape and 0 <= n.min() and n.max() < 1
        assert u.shape == (batch, 8, 10, 1)
        assert set(np.unique(np.round(dr / np.where(d == 0, 1, d), 4))) <= {0., 2.}


def _module_keys(f):
    """What keys the C modules Theano compiles for ``K.function`` ``f``: per node of the
    optimised graph, its op, its inputs' types and the values of its constant inputs."""
    keys = []
    for node in f._fn.maker.fgraph.apply_nodes:
        consts = tuple(repr(np.asarray(i.data).tolist()) for i in node.inputs
                       if hasattr(i, 'data') and not hasattr(i, 'get_value'))
        keys.append((str(node.op), tuple(str(i.type) for i in node.inputs), consts))
    return sorted(keys)


_KERNEL = np.linspace(-1, 1, 24).reshape(2, 2, 2, 3).astype('float32')

#: (name, op of (backend or reference module, x, kernel), two input shapes without the batch)
SIZE_FREE_CASES = [
    ('temporal_padding', lambda M, x, k: M.temporal_padding(x, (1, 2)), [(5, 3), (7, 3)]),
    ('spatial_2d_padding', lambda M, x, k: M.spatial_2d_padding(x, ((1, 2), (0, 1))),
     [(4, 5, 2), (6, 3, 2)]),
    ('spatial_3d_padding',
     lambda M, x, k: M.spatial_3d_padding(x, ((1, 0), (0, 2), (1, 1))),
     [(3, 4, 5, 2), (5, 3, 4, 2)]),
    ('batch_flatten', lambda M, x, k: M.batch_flatten(x), [(4, 5), (3, 6)]),
    ('pool2d_same', lambda M, x, k: M.pool2d(x, (2, 2), (2, 2), 'same', 'channels_last',
                                             'max'), [(5, 5, 2), (7, 3, 2)]),
    ('conv2d_same_even_kernel', lambda M, x, k: M.conv2d(x, k, padding='same'),
     [(5, 5, 2), (7, 3, 2)]),
]


@pytest.mark.parametrize('name,op,shapes', SIZE_FREE_CASES, ids=[c[0] for c in SIZE_FREE_CASES])
def test_other_static_sizes_compile_no_new_module(TK, name, op, shapes):
    """On Theano 1.0.5 a compiled C module is keyed by its node's op, its inputs' types (no
    sizes there) and the values of its constant inputs. Padding, flattening, 'same' pooling
    and convolution with sizes as constants compiled a module of their own (an ``Alloc``, a
    ``MakeVector``) for every input shape: 31 ``Alloc`` modules in Keras 2.3.1's
    backend_test, none on Keras' own backend, which reads sizes from the tensor's shape.
    The graphs of two inputs of other static sizes (and of their gradients) now have the same
    keys, so the second compiles nothing; the values are checked against numpy's."""
    K = TK
    # Theano's flipped kernels: conv2d convolves, the reference correlates
    kernel = K.constant(_KERNEL)
    ref_kernel = _KERNEL[::-1, ::-1]
    keys = []
    for shape in shapes:
        x = K.placeholder(shape=(None,) + shape)
        y = op(K, x, kernel)
        g = K.gradients(K.sum(y * y), [x])[0]
        f = K.function([x], [y, g])
        xv = randn(2, *shape)
        yv, gv = f([xv])
        np.testing.assert_allclose(yv, op(R, xv, ref_kernel), atol=1e-5)
        # y * y summed: its gradient is 2 y pulled back through the op (the same op's
        # adjoint); checked by central differences
        np.testing.assert_allclose(
            gv, R.numerical_gradient(lambda v: np.sum(op(R, v, ref_kernel) ** 2),
                                     xv.astype('float64')), rtol=1e-3, atol=1e-3)
        keys.append(_module_keys(f))
    if K.ENGINE != 'theano':
        return   # PyTensor's types hold static sizes: a module per shape is its design
    # the differing keys only (pytest's own diff of two long lists takes minutes)
    differing = sorted(set(keys[0]) ^ set(keys[1]))
    assert not differing, differing


def test_an_axis_of_one_value_everywhere_keeps_its_type(TK):
    """Theano 1.0.5's types hold no sizes, so an elementwise op whose input has a static size
    of 1 where another's differs gets that axis marked broadcastable (``fix_broadcast``);
    where every input holds one value on the axis nothing is broadcast and the compiled op
    reads the types as built (1x1 images compiled each elementwise module again for the
    other broadcast pattern). Values as numpy's."""
    K = TK
    image = K.placeholder(shape=(None, 2, 2, 3))
    x = K.pool2d(image, (2, 2), strides=(2, 2))    # (None, 1, 1, 3): ResNet50's last stage
    assert K.int_shape(x) == (None, 1, 1, 3)
    b = K.variable(np.array([[[[0.5, -1., 2.]]]], 'float32'))
    s = K.placeholder(shape=(None, 4))
    f = K.function([image, s], [K.relu(x * 2. - b), s - s[:, :1]])
    iv = randn(2, 2, 2, 3)
    sv = randn(2, 4)
    got = f([iv, sv])
    xv = iv.max(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(got[0], np.maximum(xv * 2. - [0.5, -1., 2.], 0), rtol=1e-6)
    np.testing.assert_allclose(got[1], sv - sv[:, :1], rtol=1e-6)
    if ENGINE_MODULES[K._engine.__name__.rsplit('.', 1)[-1]] != 'theano':
        return      # PyTensor's types hold the static sizes: nothing is re-marked there
    # the (None, 1, 1, 3) input is broadcast nowhere: no variable of the compiled graph
    # has its axes 1 and 2 marked
    marked = [v for n in f._fn.maker.fgraph.toposort() for v in n.inputs + n.outputs
              if getattr(v.type, 'broadcastable', None) == (False, True, True, False)]
    assert not marked, marked


@pytest.mark.parametrize('go_backwards', [False, True])
def test_rnn_reads_the_last_output_from_the_scan_buffer(TK, go_backwards):
    """A step that returns its output as one of its states (Keras' LSTM, GRU, SimpleRNN):
    ``rnn`` carries it once, and the last output is the last entry of the scan's buffer
    (not the last of its steps' slice: the ``scan`` memory rewrite then sizes the buffer of
    a prediction as for a plain ``[-1]``: Keras' LSTM compiles 4 C modules fewer in its first
    step and 1 in its first evaluation on Theano 1.0.5). Values and the gradient against
    numpy."""
    K = TK
    rng = np.random.RandomState(0)
    w, u = rng.randn(3, 4).astype('float32'), (rng.randn(4, 4) * .3).astype('float32')
    x = K.placeholder((None, 5, 3))
    W, U = K.variable(w), K.variable(u)

    def step(xt, states):
        h = K.tanh(K.dot(xt, W) + K.dot(states[0], U))
        return h, [h]
    last, outputs, states = K.rnn(step, x, [K.zeros((2, 4))], go_backwards=go_backwards)
    assert type(last.owner.inputs[0].owner.op).__name__ == 'Scan'
    xv = rng.randn(2, 5, 3).astype('float32')
    got_last, got_seq, got_state, got_grad = K.function(
        [x], [last, outputs, states[0], K.gradients(K.sum(last), [U])[0]])([xv])
    h, seq = np.zeros((2, 4), 'float32'), []
    for t in (range(4, -1, -1) if go_backwards else range(5)):
        h = np.tanh(xv[:, t] @ w + h @ u)
        seq.append(h)
    np.testing.assert_allclose(got_last, h, atol=1e-5)
    np.testing.assert_allclose(got_state, h, atol=1e-5)
    np.testing.assert_allclose(got_seq, np.stack(seq, axis=1), atol=1e-5)
    # d sum(h_T) / dU by the chain rule through the steps, in numpy
    hs, grad, back = [np.zeros((2, 4), 'float32')] + seq, np.zeros_like(u), np.ones((2, 4))
    for t in range(len(seq), 0, -1):
        pre = back * (1 - hs[t] ** 2)
        grad += hs[t - 1].T @ pre
        back = pre @ u.T
    np.testing.assert_allclose(got_grad, grad, atol=1e-4)


@pytest.mark.parametrize('go_backwards', [False, True])
def test_rnn_reads_every_last_step_from_the_scan_buffer(TK, go_backwards):
    """With a mask, the last output and every returned state of ``rnn`` are the last entries
    of their ``scan`` buffers (``_last_entry``), as the unmasked output is: values, the kept
    states over masked steps and the gradient against numpy."""
    K = TK
    rng = np.random.RandomState(1)
    w, u = rng.randn(3, 4).astype('float32'), (rng.randn(4, 4) * .3).astype('float32')
    x, m = K.placeholder((None, 5, 3)), K.placeholder((None, 5))
    W, U = K.variable(w), K.variable(u)

    def step(xt, states):
        h = K.tanh(K.dot(xt, W) + K.dot(states[0], U))
        c = states[1] + h
        return h, [h, c]
    last, outputs, states = K.rnn(step, x, [K.zeros((2, 4)), K.zeros((2, 4))], mask=m,
                                  go_backwards=go_backwards)
    for t in [last] + states:
        assert type(t.owner.inputs[0].owner.op).__name__ == 'Scan'
    xv = rng.randn(2, 5, 3).astype('float32')
    mv = np.array([[1, 1, 0, 1, 0], [1, 0, 1, 1, 1]], 'float32')
    got = K.function([x, m], [last, outputs, states[0], states[1],
                              K.gradients(K.sum(last) + K.sum(states[1]), [U])[0]])([xv, mv])
    h, c, out, seq = [np.zeros((2, 4), 'float32') for _ in range(3)] + [[]]
    for t in (range(4, -1, -1) if go_backwards else range(5)):
        nh = np.tanh(xv[:, t] @ w + h @ u)
        keep = mv[:, t][:, None] > 0
        out = np.where(keep, nh, out)
        h, c = np.where(keep, nh, h), np.where(keep, c + nh, c)
        seq.append(out)
    np.testing.assert_allclose(got[0], out, atol=1e-5)
    np.testing.assert_allclose(got[1], np.stack(seq, axis=1), atol=1e-5)
    np.testing.assert_allclose(got[2], h, atol=1e-5)
    np.testing.assert_allclose(got[3], c, atol=1e-5)
    # the gradient against central differences in numpy (float64)
    def loss(uu):
        hh, cc, oo = np.zeros((2, 4)), np.zeros((2, 4)), np.zeros((2, 4))
        for t in (range(4, -1, -1) if go_backwards else range(5)):
            nh = np.tanh(xv[:, t].astype('float64') @ w + hh @ uu)
            keep = mv[:, t][:, None] > 0
            oo = np.where(keep, nh, oo)
            hh, cc = np.where(keep, nh, hh), np.where(keep, cc + nh, cc)
        return oo.sum() + cc.sum()
    num, eps = np.zeros_like(u, dtype='float64'), 1e-6
    for i in np.ndindex(*u.shape):
        d = np.zeros_like(num)
        d[i] = eps
        num[i] = (loss(u.astype('float64') + d) - loss(u.astype('float64') - d)) / (2 * eps)
    np.testing.assert_allclose(got[4], num, atol=1e-3)
