"""Keras 2.3.1's train function on our Theano adapter is no bigger than on Keras' own
Theano backend (issue 20).

For each model of ``benchmarks/keras2_benchmark.py`` (mlp, cnn, lstm, gru, bilstm, built by
its ``build``), one process per side builds the model with Keras 2.3.1, compiles it with
``adam`` / ``categorical_crossentropy`` and its train function
(``model._make_train_function()``), and reports the nodes of the compiled graph
(``fn.maker.fgraph.apply_nodes``): ``KERAS_BACKEND=keras_backend.theano_backend`` (ours)
against ``KERAS_BACKEND=theano`` (Keras' own backend), on Theano 1.0.5.

The GRU of the benchmark has ``dropout=0.1, recurrent_dropout=0.1``, which Keras 2.3.1 drops
on its own Theano backend (a warning, both rates set to 0): the GRU compared is that one,
built without dropout on our side too; ours with its dropout (random masks and their
products: more nodes) is reported beside, not compared.

What is counted: the nodes of the outer compiled graph, a ``Scan`` counting as one node.
The nodes of the scans' inner graphs (each loop body, also optimised and compiled) are
reported beside and checked the same way, summed over the scans of the graph: a loop body
runs once per step, so a bigger one costs more than its count says.

Needs Theano 1.0.5 and Keras 2.3.1 on this interpreter (the CPython 3.6 environment of
``tools/setup_cntk_env.sh``); elsewhere (PyTensor on Python 3.11: Keras 2.3.1 has no backend
for PyTensor) the test is skipped with the reason. The processes compile in the engine's
compiledir (``THEANO_FLAGS`` as set, e.g. CI's shared ``base_compiledir``), so a warm cache
makes the test quick; with an empty one both sides compile their C modules first.
"""
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import requested_backends

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

MODELS = ('mlp', 'cnn', 'lstm', 'gru', 'bilstm')

#: the worker: build, compile, count; one JSON line {model: [outer nodes, inner nodes]}
_WORKER = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import keras_benchmark_models as kb
import keras
from keras import layers
from keras.models import Sequential
keras.backend.set_floatx('float32')
keras.backend.set_image_data_format('channels_last')


def inner_nodes(fgraph):
    total = 0
    for node in fgraph.apply_nodes:
        fn = getattr(node.op, 'fn', None)   # a Scan's compiled inner function
        inner = getattr(getattr(fn, 'maker', None), 'fgraph', None)
        if inner is not None:
            total += len(inner.apply_nodes) + inner_nodes(inner)
    return total


out = {}
for name in sys.argv[2:]:
    if name == 'gru_nodropout':   # the benchmark's GRU as Keras' own Theano backend builds it
        model = Sequential([layers.GRU(32, input_shape=(8, 8)),
                            layers.Dense(10, activation='softmax')])
    else:
        model = kb.build(name, layers, Sequential, False)
    model.compile(optimizer='adam', loss='categorical_crossentropy')
    model._make_train_function()
    f = model.train_function
    fn = getattr(f, 'function', None) or getattr(f, '_fn')   # Keras' own / ours
    fgraph = fn.maker.fgraph
    out[name] = [len(fgraph.apply_nodes), inner_nodes(fgraph)]
print(json.dumps({'keras': keras.__version__, 'backend': keras.backend.backend(),
                  'counts': out}))
'''


def _skip_reason():
    if 'theano' not in requested_backends():
        return 'theano not among KERAS_BACKEND_TESTS'
    try:
        import theano
    except Exception as e:   # PyTensor runs (Python 3.11): no Theano
        return 'Theano 1.0.5 not importable here (%s: %s)' % (type(e).__name__, e)
    if getattr(theano, '__version__', '') != '1.0.5':
        return 'found Theano %s, this test needs 1.0.5' % getattr(theano, '__version__', '?')
    from importlib.util import find_spec
    spec = find_spec('keras')
    if spec is None or spec.origin is None:
        return 'Keras 2.3.1 not installed for %s' % sys.executable
    with open(spec.origin) as f:
        if "__version__ = '2.3.1'" not in f.read():
            return 'found a Keras other than 2.3.1 at %s' % spec.origin
    return None


def _counts(backend, tmp):
    """{model: (outer nodes, inner nodes)} of Keras 2.3.1's train functions on ``backend``."""
    env = dict(os.environ)
    # benchmarks/ too: the benchmark reads the engine table through its engine_table module
    env['PYTHONPATH'] = os.pathsep.join([REPO, os.path.join(REPO, 'benchmarks')] + (
        [env['PYTHONPATH']] if env.get('PYTHONPATH') else []))
    env.update(KERAS_BACKEND=backend, KERAS_BACKEND_QUIET='1', KERAS_HOME=str(tmp))
    # the benchmark's model builders, importable under a module name of their own
    link = os.path.join(str(tmp), 'keras_benchmark_models.py')
    if not os.path.exists(link):
        with open(os.path.join(REPO, 'benchmarks', 'keras2_benchmark.py')) as src, \
                open(link, 'w') as dst:
            dst.write(src.read())
    models = list(MODELS) + (['gru_nodropout'] if backend != 'theano' else [])
    proc = subprocess.run([sys.executable, '-c', _WORKER, str(tmp)] + models,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                          universal_newlines=True, cwd=str(tmp))
    assert proc.returncode == 0, '%s: worker exited %d:\n%s' % (backend, proc.returncode,
                                                               proc.stderr[-6000:])
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report['keras'] == '2.3.1'
    return dict((k, tuple(v)) for k, v in report['counts'].items())


def test_train_graph_no_bigger_than_keras_own(tmp_path):
    reason = _skip_reason()
    if reason:
        print('skipped: ' + reason)
        pytest.skip(reason)
    start = time.time()
    ours = _counts('keras_backend.theano_backend', tmp_path)
    theirs = _counts('theano', tmp_path)
    # Keras' own Theano backend drops the GRU's dropout (it warns, and sets both rates to 0):
    # its GRU is compared with ours built the same way; ours with dropout is shown beside
    pairs = [(m, 'gru_nodropout' if m == 'gru' else m) for m in MODELS]
    lines = ['%-7s ours %4d (+%4d in scans)  Keras own %4d (+%4d in scans)'
             % (m, ours[o][0], ours[o][1], theirs[m][0], theirs[m][1]) for m, o in pairs]
    print('\n'.join(lines + ['gru with dropout (ours only): %d (+%d in scans)' % ours['gru'],
                             '(%.0f s)' % (time.time() - start)]))
    bigger = [line for (m, o), line in zip(pairs, lines)
              if ours[o][0] > theirs[m][0] or ours[o][1] > theirs[m][1]]
    assert not bigger, 'train graphs bigger than Keras\' own:\n' + '\n'.join(bigger)
