"""Keras 2.3.1 on our adapters: what its model library and test suite need beyond training.

Each test runs a short Keras 2.3.1 script in its own process (Keras picks its
backend once, at import) on one engine and checks what it prints against numpy:
Keras' own ``K.set_floatx`` / ``set_epsilon`` / ``set_image_data_format`` reach
the adapter, and a model saved to HDF5 (``save``, ``save_weights``) loads back
with the same predictions on today's NumPy (``keras2_compat``).
"""

import pytest

from conftest import load_adapter, requested_backends
from test_keras2_client import run_keras2_script


def _keras2(engine, code, tmp_path):
    module, reason = load_adapter(engine)
    if module is None:
        pytest.skip('%s backend not importable here: %s' % (engine, reason))
    return run_keras2_script(engine, code, tmp_path)


@pytest.mark.parametrize('engine', requested_backends())
def test_keras_config_setters_reach_the_adapter(engine, tmp_path):
    out = _keras2(engine, '''
        import json
        from keras import backend as K
        K.set_floatx('float64')
        v64 = K.dtype(K.variable([10.]))
        K.set_floatx('float16' if K.backend() != 'cntk' else 'float32')
        v16 = K.dtype(K.variable([10.]))
        K.set_floatx('float32')
        K.set_epsilon(1e-4)
        clipped = float(K.eval(K.clip(K.variable(0.), K.epsilon(), 1.)))
        K.set_image_data_format('channels_first')
        pooled = K.int_shape(K.pool2d(K.variable(__import__('numpy').ones((1, 2, 4, 4))), (2, 2), (2, 2)))
        print(json.dumps({'v64': v64, 'v16': v16, 'clipped': clipped, 'pooled': pooled}))
    ''', tmp_path)
    assert out['v64'] == 'float64'
    assert out['v16'] == ('float32' if engine == 'cntk' else 'float16')
    assert abs(out['clipped'] - 1e-4) < 1e-9
    assert out['pooled'] == [1, 2, 2, 2]


@pytest.mark.parametrize('engine', requested_backends())
def test_keras_model_save_and_load_hdf5(engine, tmp_path):
    out = _keras2(engine, '''
        import json
        import numpy as np
        from keras import layers, models
        model = models.Sequential([layers.Dense(4, activation='tanh', input_shape=(3,)),
                                   layers.Dense(2)])
        model.compile('adam', 'mse')
        x = np.random.RandomState(0).randn(5, 3).astype('float32')
        model.fit(x, np.ones((5, 2), 'float32'), epochs=1, verbose=0)
        before = model.predict(x)
        model.save('model.h5')
        loaded = models.load_model('model.h5')
        model.save_weights('weights.h5')
        fresh = models.Sequential([layers.Dense(4, activation='tanh', input_shape=(3,)),
                                   layers.Dense(2)])
        fresh.load_weights('weights.h5')
        w = [a.tolist() for a in model.get_weights()]
        print(json.dumps({'x': x.tolist(), 'w': w, 'before': before.tolist(),
                          'loaded': loaded.predict(x).tolist(),
                          'fresh': fresh.predict(x).tolist()}))
    ''', tmp_path)
    import numpy as np
    x = np.array(out['x'])
    w = [np.array(a) for a in out['w']]
    expected = np.tanh(x.dot(w[0]) + w[1]).dot(w[2]) + w[3]
    for key in ('before', 'loaded', 'fresh'):
        np.testing.assert_allclose(np.array(out[key]), expected, atol=1e-5, err_msg=key)
