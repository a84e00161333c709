"""A trained Keras 2.3.1 model moves between engines with the same predictions.

Every ordered pair of configurations: each one writes a model's files
(``tests/keras2_portability.py save``: ``save_weights``, ``save``, its predictions), each one
reads every configuration's files (``load``: ``load_weights``, ``load_weights(by_name=True)``,
``load_model``) and predicts the same inputs; the predictions must agree within 1e-5 for
every branch of the model (each layer Keras converts between kernel conventions, in both
data formats, and the layers it does not convert), and the loaded weights must be the
writer's in the reader's kernel convention. Where an engine computes a layer differently
from all others (``COMPUTED_DIFFERENTLY``: Keras' own CNTK backend's LSTM), only the weights
are compared for that branch.

Configurations: our TensorFlow, PyTensor and JAX adapters (this interpreter, with Keras 2.3.1
on its path), and, through a CPython 3.6 interpreter (``$KERAS_BACKEND_PY36``, else the
README's ``.venv36/bin/python``), our CNTK 2.7 and Theano 1.0.5 adapters and Keras 2.3.1's own
CNTK and Theano backends. A configuration that cannot run here is skipped with the reason.
The matrix runs once, from the Python 3 suite; under CPython 3.6 this module is skipped (the
Python 3 suite drives that interpreter itself).
"""
import json
import os
import subprocess
import sys
import tempfile

import pytest

from conftest import load_adapter, requested_backends
from keras_backend import engines
from test_keras2_client import DEFAULT_KERAS2_PATH, NO_KERAS2, REPO, run_keras2

if sys.version_info[:2] < (3, 8):
    pytest.skip('the engine matrix runs from the Python 3 suite, which drives CPython 3.6 '
                'itself', allow_module_level=True)

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, 'keras2_portability.py')
ATOL = 1e-5

#: the engine table's rows of the configurations that run on this interpreter, then those of
#: CPython 3.6 (CNTK 2.7, Theano 1.0.5), which Keras 2.3.1 also runs on its own backends
_PY3_ROWS = [row for row in engines.TABLE if not row.runs_on((3, 6))]
_PY36_ROWS = [row for row in engines.TABLE if row.runs_on((3, 6))]
#: configuration -> (interpreter: 'py3' or 'py36', KERAS_BACKEND, our engine or None): ours
#: under each engine's name, Keras 2.3.1's own backends under '<engine>-keras'
CONFIGS = dict([(row.engine, ('py3', row.adapter, row.name)) for row in _PY3_ROWS] +
               [(row.engine, ('py36', row.adapter, None)) for row in _PY36_ROWS] +
               [(row.engine + '-keras', ('py36', row.name, None)) for row in _PY36_ROWS])
#: what keras.backend.backend() must answer on each (Keras' own names on ours too)
ENGINE_NAME = dict([(row.engine, row.name) for row in engines.TABLE] +
                   [(row.engine + '-keras', row.name) for row in _PY36_ROWS])
#: the name the files each one writes record: Keras' own name, or the engine whose
#: conventions it follows where Keras 2.3.1 knows none (JAX's files: 'tensorflow')
RECORDED_NAME = dict((config, ENGINE_NAME[config]) for config in ENGINE_NAME)
RECORDED_NAME.update((row.engine, row.keras2_known_as) for row in engines.TABLE
                     if row.keras2_known_as)
ORDER = list(CONFIGS)
#: branches an engine computes differently from every other one, whatever the weights: their
#: predictions are not compared with that engine's (their loaded weights still are)
COMPUTED_DIFFERENTLY = {
    # Keras 2.3.1's own CNTK backend gives an LSTM's (and ConvLSTM2D's) outputs from the
    # step's last new state, the cell state c, where the other engines give h
    'cntk-keras': ('embedding_lstm', 'convlstm2d_channels_last', 'convlstm2d_channels_first'),
}


def _py36():
    path = os.environ.get('KERAS_BACKEND_PY36') or os.path.join(REPO, '.venv36', 'bin',
                                                                'python')
    return path if os.path.exists(path) else None


_STATE = {'dir': None, 'saved': {}, 'loaded': {}}


def _workdir():
    if _STATE['dir'] is None:
        _STATE['dir'] = tempfile.mkdtemp(prefix='keras2_portability_')
    return _STATE['dir']


def _run(config, args, script=SCRIPT):
    """``python SCRIPT ARGS`` on ``config``'s interpreter and Keras backend."""
    interp, backend, _ = CONFIGS[config]
    if interp == 'py3':
        return run_keras2(backend.split('.')[1].replace('_backend', ''), [script] + args)
    env = dict(os.environ, KERAS_BACKEND=backend, KERAS_BACKEND_QUIET='1',
               PYTHONPATH=REPO + (os.pathsep + os.environ['PYTHONPATH']
                                  if os.environ.get('PYTHONPATH') else ''))
    env.pop('KERAS_BACKEND_TESTS', None)
    return subprocess.run([_py36(), script] + args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, universal_newlines=True)


def _unavailable(config):
    """Why ``config`` cannot run here, or None."""
    interp, _, engine = CONFIGS[config]
    if interp == 'py3':
        if engine not in requested_backends():
            return '%s not in KERAS_BACKEND_TESTS' % engine
        module, reason = load_adapter(engine)
        if module is None:
            return '%s backend not importable here: %s' % (engine, reason)
        if not (os.path.isdir(os.environ.get('KERAS_BACKEND_KERAS2_PATH')
                              or DEFAULT_KERAS2_PATH)):
            try:
                import keras  # noqa: F401
            except ImportError:
                return NO_KERAS2
        return None
    if _py36() is None:
        return ('no CPython 3.6 environment (set KERAS_BACKEND_PY36 or build .venv36 with '
                'tools/setup_cntk_env.sh)')
    return None


def _last_json(proc, what):
    if proc.returncode != 0:
        pytest.fail('%s exited %d:\n%s' % (what, proc.returncode, proc.stderr[-6000:]))
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _saved(config):
    """The folder ``config`` wrote (written once per session)."""
    if config not in _STATE['saved']:
        folder = os.path.join(_workdir(), config)
        info = _last_json(_run(config, ['save', folder]), 'save on %s' % config)
        _STATE['saved'][config] = (folder, info)
    return _STATE['saved'][config]


def _loaded(reader):
    """``reader``'s report on every available configuration's files (one process)."""
    if reader not in _STATE['loaded']:
        writers = [c for c in ORDER if _unavailable(c) is None]
        folders = [_saved(w)[0] for w in writers]
        _STATE['loaded'][reader] = _last_json(_run(reader, ['load'] + folders),
                                              'load on %s' % reader)
    return _STATE['loaded'][reader]


def _need(*configs):
    for c in configs:
        reason = _unavailable(c)
        if reason is not None:
            pytest.skip('%s: %s' % (c, reason))


@pytest.mark.parametrize('config', ORDER)
def test_files_record_an_engine_name_keras_knows(config):
    """Keras answers the engine's own name; the files record a name whose kernel convention
    every Keras 2.3.1 knows (JAX's files: 'tensorflow', whose convention JAX shares)."""
    _need(config)
    info = _saved(config)[1]
    assert info['backend'] == ENGINE_NAME[config]
    recorded = RECORDED_NAME[config]
    assert info['weights_file_backend'] == recorded
    assert info['model_file_backend'] == recorded


@pytest.mark.parametrize('reader', ORDER)
@pytest.mark.parametrize('writer', ORDER)
def test_model_moves_between_engines(writer, reader):
    _need(writer, reader)
    report = _loaded(reader)
    assert report['backend'] == ENGINE_NAME[reader]
    entry = report['read'][_saved(writer)[0]]
    assert 'error' not in entry, entry.get('error')
    skip = set(COMPUTED_DIFFERENTLY.get(writer, ()) + COMPUTED_DIFFERENTLY.get(reader, ()))
    bad = dict(('%s/%s' % (how, branch), diff)
               for how in ('load_weights', 'load_weights_by_name', 'load_model')
               for branch, diff in entry[how].items() if branch not in skip and not diff <= ATOL)
    bad.update(('%s/%s' % (how, branch), diff)
               for how in ('weights/load_weights', 'weights/load_weights_by_name',
                           'weights/load_model')
               for branch, diff in entry[how].items() if not diff <= 1e-7)
    assert not bad, '%s -> %s: predictions or weights differ: %s' % (writer, reader, bad)
