"""The Keras 2 releases people pinned (2.0.8, 2.1.6, 2.2.4, 2.2.5) train, save and load on
every engine, and read the files those releases saved on their own backends.

For each release and engine, ``tests/keras2_release_client.py`` runs in its own process with
the release first on ``PYTHONPATH`` and ``KERAS_BACKEND=keras_backend.<engine>_backend`` (2.0.x
and 2.1.x after ``keras_backend.keras2_compat.install()``, the line README gives them); these
tests check what it reports. A release is looked for in ``KERAS_BACKEND_KERAS_RELEASES/keras-
<release>`` (default ``.venv/keras-<release>``, where ``.ci/run`` installs it with ``pip install
--target``); without it the release's tests are skipped with that reason, never mocked.

``tests/data/keras2_releases`` holds models that each release saved on Keras' own TensorFlow
1.15 (CPython 3.7) and Theano 1.0.5 (CPython 3.6) backends, with their inputs, predictions,
weights and optimizer state (``tools/keras2_release_files.py`` wrote them): each loads on every
engine with the same predictions (atol 1e-5) and the same optimizer state.
"""
import glob
import json
import os
import subprocess
import sys

import pytest

from conftest import load_adapter, requested_backends
from keras_backend import engines
from test_keras2_client import cached_report

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
FILES = os.path.join(HERE, 'data', 'keras2_releases')

#: the releases under test; 2.2.5 is the last before 2.3 (its own loader module)
RELEASES = ('2.0.8', '2.1.6', '2.2.4', '2.2.5')
#: test accuracy each model must reach after the client's 4 epochs (Keras 2.1.6 on TensorFlow
#: reached 0.88, 0.86 and 0.53)
TARGETS = {'mlp': 0.75, 'cnn': 0.7, 'lstm': 0.3}
ATOL = 1e-5

_REPORTS = {}

#: the engines whose adapter Keras 2.0-2.1 import as their TensorFlow module (the engine
#: table's keras2_known_as)
KERAS_TENSORFLOW_MODULE = frozenset(r.name for r in engines.TABLE
                                    if (r.keras2_known_as or r.name) == 'tensorflow')


def release_path(release):
    root = os.environ.get('KERAS_BACKEND_KERAS_RELEASES') or os.path.join(REPO, '.venv')
    return os.path.join(root, 'keras-' + release)


def report(release, engine):
    """The client's JSON for ``release`` on ``engine`` (one run per process); skips without
    the release or the engine, fails with the client's stderr when it crashed."""
    return cached_report(_REPORTS, (release, engine), lambda: _run(release, engine))


def release_env(path, engine, home):
    """The environment of a client process: Keras in ``path`` first on the path, our adapter
    for ``engine`` as its backend, ``home`` as HOME (Keras 2.0/2.1 write ~/.keras/keras.json:
    never the user's), the compile folders the test run uses."""
    env = dict(os.environ, HOME=home, KERAS_HOME=os.path.join(home, '.keras'),
               KERAS_BACKEND='keras_backend.%s_backend' % engine, KERAS_BACKEND_QUIET='1',
               PYTHONPATH=os.pathsep.join(([path] if os.path.isdir(path) else []) +
                                          [REPO, HERE] + (
                   [os.environ['PYTHONPATH']] if os.environ.get('PYTHONPATH') else [])))
    for var in ('THEANO_FLAGS', 'PYTENSOR_FLAGS'):
        # the compile folder the test run uses, not one under the new HOME
        if 'base_compiledir' not in env.get(var, ''):
            base = os.path.join(os.path.expanduser('~'), '.' + var.split('_')[0].lower())
            env[var] = ','.join(f for f in (env.get(var), 'base_compiledir=' + base) if f)
    return env


def _run(release, engine):
    module, reason = load_adapter(engine)
    if module is None:
        return 'skip', '%s backend not importable here: %s' % (engine, reason)
    path = release_path(release)
    if not os.path.isdir(os.path.join(path, 'keras')):
        return 'skip', ('Keras %s is not installed in %s (pip install --no-deps --target %s '
                        'keras==%s; see README)' % (release, path, path, release))
    import tempfile
    home = tempfile.mkdtemp()
    env = release_env(path, engine, home)
    proc = subprocess.run([sys.executable, os.path.join(HERE, 'keras2_release_client.py'),
                           '--files', FILES], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=env, universal_newlines=True, cwd=home)
    if proc.returncode != 0:
        return 'fail', 'Keras %s on %s exited %d:\n%s' % (release, engine, proc.returncode,
                                                         proc.stderr[-6000:])
    return 'ok', json.loads(proc.stdout.strip().splitlines()[-1])


def _model(value, name):
    result = value['models'][name]
    assert 'error' not in result, result['error']
    return result


CASES = [(r, e) for r in RELEASES for e in requested_backends()]


@pytest.mark.parametrize('release,engine', CASES)
def test_release_loads_the_adapter_and_answers_the_engine_name(release, engine):
    value = report(release, engine)
    assert value['keras'] == release
    assert value['backend'] == engine
    if release < '2.2' and engine in KERAS_TENSORFLOW_MODULE:
        # Keras 2.0-2.1's tests ask their TensorFlow module (here the adapter) for GPUs
        assert isinstance(value['gpus'], list), value['gpus']
        assert all(g.startswith('/device:GPU:') for g in value['gpus'])


@pytest.mark.parametrize('name', sorted(TARGETS))
@pytest.mark.parametrize('release,engine', CASES)
def test_release_trains_and_its_metrics_equal_numpy(release, engine, name):
    result = _model(report(release, engine), name)
    loss, acc = result['evaluate']
    assert acc >= TARGETS[name], result
    assert result['history']['loss'][-1] < result['history']['loss'][0]
    assert abs(loss - result['numpy'][0]) <= 1e-4 * max(1.0, loss)
    assert abs(acc - result['numpy'][1]) <= 1e-6


@pytest.mark.parametrize('name', sorted(TARGETS))
@pytest.mark.parametrize('release,engine', CASES)
def test_release_save_and_load_model_keep_weights_and_optimizer_state(release, engine, name):
    result = _model(report(release, engine), name)
    assert result['load_model_max_abs_diff'] <= ATOL
    assert result['optimizer_weights'] > 1            # iterations and the moments
    assert result['optimizer_max_abs_diff'] == 0.0
    if name != 'mlp':                                 # the MLP's dropout draws anew
        first, reloaded = result['next_loss']
        assert abs(first - reloaded) <= ATOL * max(1.0, abs(first))


#: the releases whose own backends saved files into FILES, and those backends
FILE_RELEASES = ('2.0.8', '2.1.6', '2.2.4')
FILE_BACKENDS = ('tensorflow', 'theano')


@pytest.mark.parametrize('release,engine', [(r, e) for r in FILE_RELEASES
                                            for e in requested_backends()])
def test_files_the_release_saved_on_its_own_backends_load(release, engine):
    expected = ['keras-%s-%s.h5' % (release, b) for b in FILE_BACKENDS]
    assert sorted(os.path.basename(p) for p in glob.glob(
        os.path.join(FILES, 'keras-%s-*.h5' % release))) == expected
    value = report(release, engine)
    assert sorted(value['files']) == expected
    for name, result in sorted(value['files'].items()):
        assert 'error' not in result, '%s: %s' % (name, result['error'])
        assert result['predict_max_abs_diff'] <= ATOL, (name, result)
        assert result['weights_max_abs_diff'] <= ATOL, (name, result)
        found, saved = result['optimizer_weights']
        assert found == saved and saved > 1, (name, result)
        assert result['optimizer_max_abs_diff'] <= ATOL, (name, result)


@pytest.mark.parametrize('engine', requested_backends())
def test_the_pinned_example_runs_unchanged_on_keras_2_2_4(engine, tmp_path):
    """README's worked example: ``examples/keras2_pinned.py``, a Keras 2.2.4-era script, trains
    and reloads on each engine with nothing but ``KERAS_BACKEND`` naming our adapter."""
    module, reason = load_adapter(engine)
    if module is None:
        pytest.skip('%s backend not importable here: %s' % (engine, reason))
    path = release_path('2.2.4')
    if not os.path.isdir(os.path.join(path, 'keras')):
        pytest.skip('Keras 2.2.4 is not installed in %s (see README)' % path)
    pytest.importorskip('sklearn', reason='the digits data come from scikit-learn')
    env = dict(os.environ, KERAS_HOME=str(tmp_path), KERAS_BACKEND_QUIET='1', EPOCHS='5',
               KERAS_BACKEND='keras_backend.%s_backend' % engine,
               PYTHONPATH=os.pathsep.join([path, REPO] + (
                   [os.environ['PYTHONPATH']] if os.environ.get('PYTHONPATH') else [])))
    proc = subprocess.run([sys.executable, os.path.join(REPO, 'examples', 'keras2_pinned.py'),
                           str(tmp_path / 'digits_mlp.h5')], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, universal_newlines=True,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-4000:]
    first, last = proc.stdout.strip().splitlines()[-2:]
    assert first.startswith('Keras 2.2.4 on %s:' % engine), first
    accuracy, reloaded = [float(w) for w in last.replace(',', ' ').split() if w[0].isdigit()]
    assert accuracy >= 0.9 and reloaded == accuracy, last
