"""JAX-only behaviours of the adapter (see the design in the module docstring of
``keras_backend.jax_backend.core``) that hold its first minute: building a graph compiles no
XLA program (host values reach the device by transfer, random keys are made on the host,
shape arithmetic waits until a size is read), and a program traces only the branch of the
learning phase it runs, so that a prediction neither draws from nor advances a dropout's key.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import load_adapter, requested_backends

pytestmark = pytest.mark.skipif('jax' not in requested_backends(),
                                reason='KERAS_BACKEND_TESTS excludes jax')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def K():
    module, reason = load_adapter('jax')
    if module is None:
        pytest.skip('jax backend not importable here: %s' % reason)
    return module


#: builds a small graph in a fresh process (JAX caches compiled programs per process) and
#: prints, as JSON, the programs JAX compiled while building it and while running it
_BUILD_THEN_RUN = textwrap.dedent('''
    import json, logging
    import numpy as np
    import jax
    from keras_backend import backend as K

    compiled = []

    class Seen(logging.Handler):
        def emit(self, record):
            text = record.getMessage()
            if text.startswith('Compiling '):
                compiled.append(text.split(' with ')[0][len('Compiling '):])

    logging.getLogger('jax').addHandler(Seen())
    with jax.log_compiles():
        x = K.placeholder((None, 3))
        steps = K.variable(0, dtype='int64')            # int64 held as JAX holds it
        weights = K.variable(np.arange(6.).reshape(3, 2), dtype='float32')   # from float64
        offset = K.constant(0.5)
        dropped = K.in_train_phase(K.dropout(x, 0.5, seed=1), x)   # a key of its own
        # a batch normalization's sample-size arithmetic (Keras 2.3.1's BatchNormalization)
        n = K.cast(K.prod(K.stack([K.shape(x)[0], K.shape(x)[1]])), 'float32')
        scaled = K.sum(K.dot(dropped, weights)) * (n / (n - 1.0)) + offset
        f = K.function([x, K.learning_phase()], [scaled], updates=[K.update_add(steps, 1)])
        built = list(compiled)
        out = f([np.ones((4, 3), 'float32'), 0])[0]
    print(json.dumps({'built': built, 'ran': compiled[len(built):],
                      'out': float(out), 'steps': int(K.get_value(steps))}))
''')


def test_building_a_graph_compiles_no_program():
    env = dict(os.environ, KERAS_BACKEND='keras_backend.jax_backend',
               PYTHONPATH=os.pathsep.join([ROOT, os.environ.get('PYTHONPATH', '')]))
    import tempfile
    with tempfile.TemporaryDirectory() as cache:
        env['JAX_COMPILATION_CACHE_DIR'] = cache    # nothing compiled by an earlier run
        done = subprocess.run([sys.executable, '-c', _BUILD_THEN_RUN], env=env, cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen['built'] == []
    assert len(seen['ran']) == 1, seen['ran']          # the function's own program
    ones = np.ones((4, 3))
    expected = (ones @ np.arange(6.).reshape(3, 2)).sum() * (12. / 11.) + 0.5
    np.testing.assert_allclose(seen['out'], expected, rtol=1e-6)
    assert seen['steps'] == 1


def test_shape_arithmetic_gives_numpy_values_whether_or_not_a_size_reads_it(K):
    x = K.placeholder((None, 3))
    m = K.prod(K.shape(x))                               # not yet read as a size
    mean = K.function([x], [K.sum(x) / K.cast(m, 'float32')])
    for rows in (4, 7):
        data = np.arange(rows * 3, dtype='float32').reshape(rows, 3)
        np.testing.assert_allclose(mean([data])[0], data.mean(), rtol=1e-6)
    flat = K.reshape(x, (m,))                            # now a size: its value is read
    assert K.int_shape(flat) == (None,)
    data = np.arange(12, dtype='float32').reshape(4, 3)
    np.testing.assert_array_equal(K.function([x], [flat])([data])[0], data.ravel())
    again = K.function([x], [K.sum(x) / K.cast(m, 'float32')])
    np.testing.assert_allclose(again([data])[0], data.mean(), rtol=1e-6)
    np.testing.assert_allclose(mean([data])[0], data.mean(), rtol=1e-6)


def test_a_prediction_leaves_the_dropout_key_where_it_was(K):
    """Two seeded runs of a training-phase dropout, one with a prediction between its
    calls: the masks are the same (the prediction draws nothing, so its program neither
    reads the key nor advances it), and the prediction is the input itself."""
    data = np.arange(1, 41, dtype='float32').reshape(4, 10)

    def run(predict_between):
        x = K.placeholder((None, 10))
        f = K.function([x, K.learning_phase()], [K.in_train_phase(K.dropout(x, 0.5, seed=7),
                                                                  x)])
        first = f([data, 1])[0]
        if predict_between:
            np.testing.assert_array_equal(f([data, 0])[0], data)
        return first, f([data, 1])[0]

    plain, between = run(False), run(True)
    for a, b in zip(plain, between):
        np.testing.assert_array_equal(a, b)
    kept = plain[0] != 0
    np.testing.assert_allclose(plain[0][kept], 2 * data[kept], rtol=1e-6)
    assert 0 < kept.sum() < data.size and not np.array_equal(plain[0], plain[1])


def test_keys_made_on_the_host_are_jaxs_own(K):
    import jax
    core = sys.modules['keras_backend.jax_backend.core']
    seeds = (0, 1, 5, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32 + 5, 2 ** 62, 2 ** 63 - 1,
             -1, -5, -2 ** 31, -2 ** 63)
    x64 = jax.config.jax_enable_x64
    try:
        for enabled in (True, False):
            jax.config.update('jax_enable_x64', enabled)
            for seed in seeds:
                ours = core._raw_key(seed)
                assert ours.dtype == np.uint32 and ours.shape == (2,)
                np.testing.assert_array_equal(np.asarray(ours),
                                              np.asarray(jax.random.PRNGKey(seed)))
    finally:
        jax.config.update('jax_enable_x64', x64)


def test_host_values_are_copied_to_the_device(K):
    a = np.ones((2, 3), 'float32')
    v, c = K.variable(a), K.constant(a)
    b = np.full((2, 3), 2., 'float32')
    K.set_value(v, b)
    a[:] = 7.
    b[:] = 9.
    np.testing.assert_array_equal(K.get_value(v), np.full((2, 3), 2.))
    np.testing.assert_array_equal(K.eval(c), np.ones((2, 3)))
    assert K.dtype(K.variable(np.arange(3), dtype='int64')) == 'int64'
    np.testing.assert_array_equal(K.get_value(K.variable([1.5, 2.5], dtype='int32')),
                                  np.array([1.5, 2.5]).astype('int32'))
