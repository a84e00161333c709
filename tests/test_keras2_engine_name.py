"""Code that asks Keras 2.3.1 which engine runs gets the engine's name, and what it then
imports by that name.

Each case runs Keras 2.3.1 on one of our adapters in its own process (Keras picks its backend
once, at import): ``keras.backend.backend()``, a library that dispatches on it the way
keras-contrib's ``keras_contrib.backend`` does (its modules import from
``keras.backend.<engine>_backend``), and Keras' own branches on the name.
"""
import textwrap

import numpy as np
import pytest

from conftest import requested_backends
from test_keras2_client import run_keras2_script


def keras_name(engine):
    """What keras.backend.backend() answers on our adapter of ``engine``: the engine's own
    name (its backend name), not the adapter's import path."""
    return engine


#: a library that dispatches on keras.backend.backend(), as keras-contrib's backend package
LIBRARY = {
    '__init__.py': '''
        from keras import backend as K
        if K.backend() == 'theano':
            from .theano_backend import *
        elif K.backend() == 'tensorflow':
            from .tensorflow_backend import *
        elif K.backend() == 'cntk':
            from .cntk_backend import *
        elif K.backend() == 'jax':
            from .jax_backend import *
        elif K.backend() == 'torch':
            from .torch_backend import *
        ''',
    'theano_backend.py': '''
        from theano import tensor as T
        from theano.sandbox.neighbours import images2neibs
        from theano.tensor.nnet.nnet import softsign
        from keras.backend import theano_backend as KTH
        from keras.backend.theano_backend import _preprocess_conv2d_input
        from keras.backend.theano_backend import _postprocess_conv2d_output
        ENGINE = 'theano'

        def conv2d(x, kernel, border_mode, flip):
            return T.nnet.conv2d(x, kernel, border_mode=border_mode, filter_flip=flip,
                                 filter_shape=KTH.int_shape(kernel))

        def unbroadcast_last(x):
            return T.unbroadcast(x, x.ndim - 1).broadcastable

        def to_channels_first_and_back(x, padding, strides):
            y = _preprocess_conv2d_input(x, 'channels_last')
            return KTH.permute_dimensions(
                _postprocess_conv2d_output(y, y, padding, (1, 1, 2, 2), strides,
                                           'channels_first'), (0, 2, 3, 1))
        ''',
    'tensorflow_backend.py': '''
        import tensorflow as tf
        from keras.backend import tensorflow_backend as KTF
        ENGINE = 'tensorflow'
        TF1 = KTF._is_tf_1()

        def depth_to_space(x, block):
            return tf.nn.depth_to_space(x, block)
        ''',
    'cntk_backend.py': '''
        from keras.backend import cntk_backend as KCN
        ENGINE = 'cntk'

        def moments(x, axes, shift=None, keep_dims=False):
            return KCN._moments(x, axes=axes, shift=shift, keep_dims=keep_dims)
        ''',
    'jax_backend.py': '''
        from keras.backend import jax_backend as KJ
        ENGINE = 'jax'
        ''',
    'torch_backend.py': '''
        from keras.backend import torch_backend as KT
        ENGINE = 'torch'
        ''',
}


def _keras2(engine, code, tmp_path):
    for name, text in LIBRARY.items():
        (tmp_path / 'dispatching_lib').mkdir(exist_ok=True)
        (tmp_path / 'dispatching_lib' / name).write_text(textwrap.dedent(text))
    return run_keras2_script(engine, code, tmp_path)


@pytest.mark.parametrize('engine', requested_backends())
def test_keras_backend_answers_the_engine_name(engine, tmp_path):
    out = _keras2(engine, '''
        import json, sys
        import keras
        from keras import backend as K
        import dispatching_lib
        module = sys.modules['keras.backend.%s_backend' % K.backend()]
        print(json.dumps({'backend': K.backend(), 'loader': keras.backend.load_backend.backend(),
                          'library': dispatching_lib.ENGINE, 'module': module.__name__,
                          'ours': module is sys.modules['keras_backend.%s_backend'
                                                        % K.backend()]}))
    ''', tmp_path)
    assert out == {'backend': keras_name(engine), 'loader': keras_name(engine),
                   'library': keras_name(engine),
                   'module': 'keras_backend.%s_backend' % engine, 'ours': True}


@pytest.mark.parametrize('engine', requested_backends())
def test_an_adapter_imported_before_keras_is_adopted(engine, tmp_path):
    # keras_backend.distribute.init imports the engine's collectives, a module of the adapter
    # package, before the script imports Keras
    out = _keras2(engine, '''
        import importlib, json, sys
        import keras_backend.keras2_compat
        keras_backend.keras2_compat.install()
        ours = importlib.import_module('keras_backend.%s_backend')
        import keras
        from keras import backend as K
        print(json.dumps({'backend': K.backend(),
                          'ours': sys.modules.get('keras.backend.%%s_backend' %% K.backend())
                          is ours}))
    ''' % engine, tmp_path)
    assert out == {'backend': keras_name(engine), 'ours': True}


def _theano_conv2d(x, w, pad, flip):
    """numpy: Theano's conv2d of channels-first ``x`` with (out, in, rows, cols) ``w``."""
    if flip:
        w = w[:, :, ::-1, ::-1]
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    rows, cols = xp.shape[2] - w.shape[2] + 1, xp.shape[3] - w.shape[3] + 1
    out = np.zeros((x.shape[0], w.shape[0], rows, cols))
    for i in range(rows):
        for j in range(cols):
            out[:, :, i, j] = np.einsum('bchw,ochw->bo',
                                        xp[:, :, i:i + w.shape[2], j:j + w.shape[3]], w)
    return out


@pytest.mark.parametrize('engine', requested_backends())
def test_library_functions_of_the_engine_run(engine, tmp_path):
    """The functions a dispatching library imports from Keras' module of the engine compute
    what Keras' own modules did (compared with numpy)."""
    x = np.arange(2 * 5 * 4 * 3, dtype='float32').reshape(2, 5, 4, 3) / 10.
    out = _keras2(engine, '''
        import json
        import numpy as np
        from keras import backend as K
        import dispatching_lib as lib
        x = K.variable(np.arange(2 * 5 * 4 * 3, dtype='float32').reshape(2, 5, 4, 3) / 10.)
        res = {'engine': lib.ENGINE}
        if lib.ENGINE == 'theano':
            # 'same' output of a (2, 2) kernel, stride 2: ceil(5 / 2) x ceil(4 / 2) kept
            res['same'] = K.eval(lib.to_channels_first_and_back(x, 'same', (2, 2))).tolist()
            res['valid'] = K.eval(lib.to_channels_first_and_back(x, 'valid', (1, 1))).tolist()
            # Theano's own names (PyTensor serves them when no theano is installed)
            xc = K.variable(np.random.RandomState(0).randn(2, 3, 6, 5).astype('float32'))
            kc = K.variable(np.random.RandomState(1).randn(4, 3, 2, 3).astype('float32'))
            for mode in ('valid', 'full', 'half'):
                for flip in (True, False):
                    res['conv_%s_%s' % (mode, flip)] = K.eval(lib.conv2d(xc, kc, mode,
                                                                           flip)).tolist()
            res['neibs'] = K.eval(lib.images2neibs(
                K.variable(np.arange(2 * 2 * 4 * 4.).reshape(2, 2, 4, 4)), (2, 2))).tolist()
            res['unbroadcast'] = list(lib.unbroadcast_last(K.expand_dims(K.variable([1., 2.]))))
            res['softsign'] = K.eval(lib.softsign(K.variable([1., -3.]))).tolist()
        elif lib.ENGINE == 'tensorflow':
            res['tf1'] = lib.TF1
            res['d2s'] = K.eval(lib.depth_to_space(K.variable(np.ones((1, 2, 2, 4), 'float32')),
                                                   2)).shape
        elif lib.ENGINE == 'cntk':
            m, v = lib.moments(x, axes=[0, 1, 2])
            res['mean'], res['var'] = K.eval(m).tolist(), K.eval(v).tolist()
            m, v = lib.moments(x, axes=[1], keep_dims=True)
            res['mean1'], res['var1'] = K.eval(m).tolist(), K.eval(v).tolist()
        print(json.dumps(res))
    ''', tmp_path)
    assert out['engine'] == keras_name(engine)
    if engine == 'theano':
        np.testing.assert_allclose(out['same'], x[:, :3, :2, :], atol=0)
        np.testing.assert_allclose(out['valid'], x, atol=0)
        xc = np.random.RandomState(0).randn(2, 3, 6, 5).astype('float32')
        kc = np.random.RandomState(1).randn(4, 3, 2, 3).astype('float32')
        for mode, pad in (('valid', (0, 0)), ('full', (1, 2)), ('half', (1, 1))):
            for flip in (True, False):
                np.testing.assert_allclose(out['conv_%s_%s' % (mode, flip)],
                                           _theano_conv2d(xc, kc, pad, flip), atol=1e-4)
        img = np.arange(2 * 2 * 4 * 4.).reshape(2, 2, 4, 4)
        want = img.reshape(2, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(-1, 4)
        np.testing.assert_allclose(out['neibs'], want, atol=0)
        assert out['unbroadcast'] == [False, False]
        np.testing.assert_allclose(out['softsign'], [0.5, -0.75], atol=1e-6)
    elif engine == 'tensorflow':
        assert out['tf1'] is False and out['d2s'] == [1, 4, 4, 1]
    elif engine == 'cntk':
        np.testing.assert_allclose(out['mean'], x.mean(axis=(0, 1, 2)), atol=1e-5)
        np.testing.assert_allclose(out['var'], x.var(axis=(0, 1, 2)), atol=1e-5)
        np.testing.assert_allclose(out['mean1'], x.mean(axis=1, keepdims=True), atol=1e-5)
        np.testing.assert_allclose(out['var1'], x.var(axis=1, keepdims=True), atol=1e-5)


@pytest.mark.parametrize('engine', requested_backends())
def test_keras_engine_branches_take_the_engine(engine, tmp_path):
    """Keras' own per-engine branches: Lambda's output shape is inferred on TensorFlow and
    CNTK (Keras' rule), RNN dropout is dropped on Theano with Keras' warning, and on
    TensorFlow the tf.keras-based features fail with a RuntimeError naming what is missing."""
    out = _keras2(engine, '''
        import json, warnings
        import keras
        from keras import layers as L
        from keras import backend as K
        res = {}
        inp = L.Input((6,))
        res['lambda'] = K.int_shape(L.Lambda(lambda t: t[:, :2])(inp))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            lstm = L.LSTM(3, dropout=0.5)
        res['lstm_dropout'] = lstm.cell.dropout
        res['dropout_warning'] = any('dropout' in str(w.message) for w in caught)
        try:
            keras.metrics.MeanIoU(num_classes=2)
            res['mean_iou'] = 'ok'
        except RuntimeError as e:
            res['mean_iou'] = str(e)
        print(json.dumps(res))
    ''', tmp_path)
    inferred = engine in ('tensorflow', 'cntk')
    assert out['lambda'] == ([None, 2] if inferred else [None, 6])
    if engine == 'theano':
        assert out['lstm_dropout'] == 0 and out['dropout_warning']
    else:
        assert out['lstm_dropout'] == 0.5 and not out['dropout_warning']
    if engine == 'tensorflow':
        assert 'tf.keras.metrics.MeanIoU is not available' in out['mean_iou']
    else:   # Keras' own refusal on engines other than TensorFlow
        assert 'only with TensorFlow backend' in out['mean_iou']


@pytest.mark.skipif('tensorflow' not in requested_backends(),
                    reason='tensorflow not among KERAS_BACKEND_TESTS')
def test_tensorflow_ops_inside_keras_layers(tmp_path):
    """On TensorFlow, Keras 2.3.1 takes its TensorFlow-only branches (clipnorm's
    tf.scalar_mul) and users call tf ops in layers: they build in the adapter's graph, and
    weights set inside a layer's scope (``weights=``) are read and written eagerly."""
    out = _keras2('tensorflow', '''
        import json
        import numpy as np
        import tensorflow as tf
        import keras
        from keras import layers as L
        m = keras.models.Sequential([
            L.Dense(3, input_shape=(2,), weights=[np.ones((2, 3)), np.zeros(3)]),
            L.Lambda(lambda t: tf.nn.relu(t - 2.5)),
            L.Dense(1, kernel_initializer='ones')])
        m.compile(keras.optimizers.SGD(0.1, clipnorm=0.5), 'mse')
        before = m.predict(np.array([[1., 2.]])).tolist()
        m.fit(np.array([[1., 2.]]), np.array([[0.]]), epochs=1, verbose=0)
        print(json.dumps({'before': before, 'after': m.predict(np.array([[1., 2.]])).tolist(),
                          'kernel': m.layers[0].get_weights()[0].tolist()}))
    ''', tmp_path)
    # x = [1, 2]: dense -> [3, 3, 3], relu(t - 2.5) -> 0.5 each, dense(ones) -> 1.5
    np.testing.assert_allclose(out['before'], [[1.5]], atol=1e-6)
    # one SGD step on (1.5 - 0)^2 with the global gradient norm clipped to 0.5 lowers it
    assert out['after'][0][0] < 1.5
    assert not np.allclose(out['kernel'], np.ones((2, 3)))


@pytest.mark.parametrize('engine', requested_backends())
def test_keras_import_leaves_no_import_hook_behind(engine, tmp_path):
    """Once ``import keras`` is done, every module keras2_compat patches after its import
    (saving, io_utils, callbacks) is patched, and its one post-import finder has left
    ``sys.meta_path`` (it would be asked about every later import of the process): Keras 2.3.1's
    keras.engine.topology, which holds the HDF5 code only in 2.0.x and 2.1.x, is not waited
    for once keras.engine.saving is imported."""
    out = _keras2(engine, '''
        import json, sys
        import keras
        import keras_backend.keras2_compat as compat
        import keras.engine.saving as saving
        print(json.dumps({
            'finders': [type(f).__name__ for f in sys.meta_path
                        if isinstance(f, compat._PatchAfterImport)],
            'pending': sorted(compat._POST_IMPORT.pending),
            'tensorboard': keras.callbacks.TensorBoard.__module__,
            'kernel_rule': saving._need_convert_kernel.__module__}))
    ''', tmp_path)
    assert out == {'finders': [], 'pending': [],
                   'tensorboard': 'keras_backend.tensorboard.keras2',
                   'kernel_rule': 'keras_backend.keras2_compat'}
