"""Keras 2.3.1 itself trains on keras_backend: the client test.

For each engine, ``tests/keras2_client.py`` runs in its own process with
``KERAS_BACKEND=keras_backend.<engine>_backend`` (Keras chooses its backend
once, at import) and trains six Keras models on the digits with ``adam``,
``metrics=['accuracy']`` and ``validation_split``; these tests check what it
reports. Keras 2.3.1 is found on the interpreter's path, or in the folder named
by ``KERAS_BACKEND_KERAS2_PATH`` (default ``.venv/keras2``, where the README
installs it on Python 3.8+: it cannot share a virtualenv with TensorFlow's Keras 3). Without Keras
2.3.1 the tests are skipped with that reason; they never mock it.
"""
import json
import math
import os
import subprocess
import sys

import pytest

from conftest import load_adapter, requested_backends

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

#: accuracy on the 359 held-out digits that each model must reach after 6 epochs
#: (Keras 2.3.1 on its own CNTK backend reached 0.94, 0.92, 0.70, 0.61, 0.52, 0.89)
TARGETS = {'mlp': 0.85, 'cnn': 0.85, 'lstm': 0.55, 'gru': 0.45, 'bilstm': 0.40,
           'two_inputs': 0.80}
MODELS = tuple(TARGETS)

#: where the README's install puts Keras 2.3.1 on Python 3.8+
DEFAULT_KERAS2_PATH = os.path.join(REPO, '.venv', 'keras2')

_RESULTS = {}

NO_KERAS2 = ('Keras 2.3.1 is not installed for %s (pip install keras==2.3.1, or set '
             'KERAS_BACKEND_KERAS2_PATH; see README)' % sys.executable)


def run_keras2(engine, args, cwd=None):
    """Run ``python ARGS`` with Keras 2.3.1 on our adapter for ``engine`` (its own process:
    Keras picks its backend once, at import); return the CompletedProcess."""
    env = dict(os.environ)
    path = [REPO]
    keras2_path = env.get('KERAS_BACKEND_KERAS2_PATH') or DEFAULT_KERAS2_PATH
    if os.path.isdir(keras2_path):
        path.insert(0, keras2_path)
    if env.get('PYTHONPATH'):
        path.append(env['PYTHONPATH'])
    env.update(PYTHONPATH=os.pathsep.join(path), KERAS_BACKEND='keras_backend.%s_backend' % engine,
               KERAS_BACKEND_QUIET='1')
    return subprocess.run([sys.executable] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, universal_newlines=True, cwd=cwd)


def run_keras2_script(engine, code, tmp_path):
    """Write ``code`` (dedented) to a script in ``tmp_path`` and run it with Keras 2.3.1 on our
    adapter for ``engine``; return the JSON of its last line (skip without Keras 2.3.1)."""
    import textwrap
    script = tmp_path / 'script.py'
    script.write_text(textwrap.dedent(code))
    proc = run_keras2(engine, [str(script)], cwd=str(tmp_path))
    if proc.returncode != 0 and "No module named 'keras'" in proc.stderr:
        pytest.skip(NO_KERAS2)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def script_report(engine, script, args=()):
    """Run ``script`` (a file of this folder) with Keras 2.3.1 on our adapter for ``engine``
    and return ``(status, value)``: ``('ok', its last line's JSON)``, ``('skip', reason)``
    (adapter not importable, no Keras 2.3.1, another Keras) or ``('fail', its stderr)``."""
    module, reason = load_adapter(engine)
    if module is None:
        return 'skip', '%s backend not importable here: %s' % (engine, reason)
    proc = run_keras2(engine, [os.path.join(HERE, script)] + list(args))
    if proc.returncode != 0 and "No module named 'keras'" in proc.stderr:
        return 'skip', NO_KERAS2
    if proc.returncode != 0:
        return 'fail', '%s exited %d:\n%s' % (script, proc.returncode, proc.stderr[-6000:])
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    if report['keras'] != '2.3.1':
        return 'skip', 'found Keras %s, these tests need 2.3.1' % report['keras']
    return 'ok', report


_SCRIPT_REPORTS = {}


def cached_report(cache, key, run):
    """``run()`` (a ``(status, value)`` report) once per process and ``key`` of ``cache``;
    skips or fails the calling test as the run did, else returns its value."""
    if key not in cache:
        cache[key] = run()
    status, value = cache[key]
    if status == 'skip':
        pytest.skip(value)
    if status == 'fail':
        pytest.fail(value)
    return value


def cached_script_report(engine, script):
    """``script_report(engine, script)`` run once per process and (engine, script); skips
    or fails the calling test as the run did, else returns its JSON."""
    return cached_report(_SCRIPT_REPORTS, (engine, script),
                         lambda: script_report(engine, script))


def _client_results(engine):
    """Run the client once per engine (cached); return its JSON or skip with the reason."""
    if engine not in _RESULTS:
        _RESULTS[engine] = script_report(engine, 'keras2_client.py', MODELS)
    return _RESULTS[engine]


@pytest.fixture(params=requested_backends())
def client(request):
    status, value = _client_results(request.param)
    if status == 'skip':
        pytest.skip(value)
    if status == 'fail':
        pytest.fail(value)
    # Keras answers the engine's own name (keras2_compat.adopt_engine_name)
    assert value['backend'] == request.param
    return value['models']


@pytest.mark.parametrize('name', MODELS)
def test_keras2_model_trains(client, name):
    result = client[name]
    assert 'error' not in result, result.get('error')
    history = result['history']
    assert sorted(history) == ['accuracy', 'loss', 'val_accuracy', 'val_loss']
    for key, values in history.items():
        assert len(values) == 6 and all(math.isfinite(v) for v in values), (key, values)
    # training lowered the loss
    assert history['loss'][-1] < history['loss'][0]
    assert result['predict_shape'] == [359, 10]


@pytest.mark.parametrize('name', MODELS)
def test_keras2_metrics_equal_numpy(client, name):
    result = client[name]
    assert 'error' not in result, result.get('error')
    (loss, acc), (np_loss, np_acc) = result['evaluate'], result['numpy']
    assert abs(acc - np_acc) <= 1e-6, (acc, np_acc)
    assert abs(loss - np_loss) <= 1e-4 * max(1.0, abs(np_loss)), (loss, np_loss)
    assert acc >= TARGETS[name], '%s reached %.4f < %.2f' % (name, acc, TARGETS[name])


@pytest.mark.parametrize('name', MODELS)
def test_keras2_weights_round_trip(client, name):
    result = client[name]
    assert 'error' not in result, result.get('error')
    assert result['reload_max_abs_diff'] <= 1e-6
