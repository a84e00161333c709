"""Keras 2.3.1 on today's stack (``tests/keras2_today.py`` on each requested engine): its
scikit-learn wrappers in ``GridSearchCV`` with today's scikit-learn (tags API), ``import
keras`` without TensorFlow on the other engines, and a quiet TensorFlow start."""
import os
import subprocess
import sys

import pytest

from conftest import requested_backends
from test_keras2_client import cached_script_report


@pytest.fixture(params=requested_backends())
def report(request):
    return cached_script_report(request.param, 'keras2_today.py')


def test_grid_search_with_keras_wrappers(report):
    grid = report['grid_search']
    if 'skip' in grid:
        pytest.skip(grid['skip'])
    assert 'error' not in grid, grid.get('error')
    clf, reg = grid['classifier'], grid['regressor']
    assert clf['candidates'] == 2 and clf['best_params']['units'] in (3, 5)
    assert 0. <= clf['best_score'] <= 1.
    assert clf['predict_matches_proba']
    assert clf['proba_rows_sum_to_one'] < 1e-5
    assert reg['candidates'] == 2 and reg['predictions'] == 60
    if tuple(int(p) for p in grid['sklearn'].split('.')[:2]) >= (1, 6):
        # scikit-learn >= 1.6 reads the kind of estimator from its tags (older ones from
        # ``_estimator_type``, which Keras 2.3.1's wrappers never had)
        assert clf['is_classifier'] and reg['is_regressor']
    assert reg['best_score'] == reg['best_score']   # a number (R^2 may be negative), not NaN


def test_import_keras_leaves_tensorflow_alone_on_other_engines(report):
    if report['backend'] == 'tensorflow':
        pytest.skip('the TensorFlow engine imports TensorFlow')
    assert not report['tensorflow_imported'], 'import keras imported TensorFlow'
    assert not report['tensorflow_imported_at_end'], 'TensorFlow was imported later'


def test_gs_path_without_tensorflow_names_what_it_needs(report):
    if report['gs'] is None:
        pytest.skip('TensorFlow is imported on this engine: its file_io serves gs://')
    kind, message = report['gs']
    assert kind in ('ImportError', 'ModuleNotFoundError'), report['gs']
    assert 'gs://' in message or 'Google Cloud Storage' in message, message
    assert 'tensorflow' in message.lower(), message


def _import_stderr(env_extra):
    env = dict(os.environ)
    env.pop('TF_CPP_MIN_LOG_LEVEL', None)
    env.update(env_extra)
    proc = subprocess.run([sys.executable, '-c', 'import keras_backend.tensorflow_backend as K;'
                           'print(K.eval(K.constant(2.) * 3))'],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == '6.0'
    return proc.stderr


def test_tensorflow_import_is_quiet_unless_the_user_asks():
    if 'tensorflow' not in requested_backends():
        pytest.skip('tensorflow not among the requested backends')
    pytest.importorskip('tensorflow')
    from keras_backend.tensorflow_backend.core import TF_STARTUP_LINES
    noisy = lambda text: [l for l in text.splitlines()  # noqa: E731
                          if any(p in l for p in TF_STARTUP_LINES)]
    assert noisy(_import_stderr({})) == []
    assert noisy(_import_stderr({'TF_CPP_MIN_LOG_LEVEL': '3'})) == []
    # the user's own setting wins: level 0 asks for all of TensorFlow's start-up lines
    assert noisy(_import_stderr({'TF_CPP_MIN_LOG_LEVEL': '0'})) != []
