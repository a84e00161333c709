"""Peak memory and compile time of Keras 2.3.1's train function, per engine (issue 33).

For each model, one fresh process builds it with Keras 2.3.1 on our adapter for
``--engine``, compiles it (``adam``) and builds its train function
(``model._make_train_function()``, timed: graph building, the engine's rewrites and
C compile or tracing), then trains ``--batches`` batches of 32 with ``train_on_batch``
(the first one is where TensorFlow and JAX trace and compile: timed apart). Reported:

* ``make_s``: seconds of ``_make_train_function()``;
* ``first_s``: seconds of the first ``train_on_batch``;
* ``maxrss``: the process's peak resident memory (``ru_maxrss``) at the end, and
  ``import_rss``: the same read after importing Keras and the engine, before the model;
* on Theano / PyTensor, the nodes of the compiled train graph (a ``Scan`` counting as
  one) and of the scans' compiled inner graphs, summed.

Models: the five of ``benchmarks/keras2_benchmark.py`` (its ``build``: mlp, cnn, lstm,
gru, bilstm; ``categorical_crossentropy``) and the model of issue 33 with 1 and 5 heads
(``heads1``, ``heads5``: ``Embedding(5, 3, mask_zero=True)`` feeding that many
``Bidirectional(LSTM(16, return_sequences=True))`` in parallel, concatenated,
``GlobalMaxPooling1D``, ``Dense(1, sigmoid)``, ``binary_crossentropy``, sequences of 8
tokens 0..3, 0 masked); ``--heads 1,2,3,5`` chooses the head counts.

Engines and interpreters: ``tensorflow``, ``pytensor`` and ``jax`` with ``.venv``
(Python 3.11; Keras 2.3.1 from ``$KERAS_BACKEND_KERAS2_PATH``, default ``.venv/keras2``),
``theano`` (Theano 1.0.5) and ``cntk`` with ``.venv36``::

    .venv/bin/python benchmarks/memory_benchmark.py --engine pytensor
    PYTHONPATH=$PWD .venv36/bin/python benchmarks/memory_benchmark.py --engine theano

Theano and PyTensor compile into their compiledir as for any user (warm after a first
run); ``--cold`` gives each process an empty one. ``--limit-gb N`` runs each process
under an address-space limit (``RLIMIT_AS``, for the Theano engines and CNTK; default
16): a process that exceeds it reports the ``MemoryError`` instead of taking the
machine. Python 3.6 compatible.
"""
from __future__ import print_function

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import keras2_benchmark as kb  # noqa: E402
from harness import engine_version  # noqa: E402

BENCH_MODELS = ('mlp', 'cnn', 'lstm', 'gru', 'bilstm')
BACKEND = dict(kb.OUR_BACKEND)
#: the engine configurations whose process runs under RLIMIT_AS (TensorFlow and JAX reserve
#: more address space than the cap at import), as in tests/test_keras2_memory.py
ADDRESS_SPACE_LIMITED = tuple(row.engine for row in kb.engines.TABLE
                              if row.name in ('theano', 'cntk'))


def _rss_gib():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024. ** 2


def _inner_nodes(fgraph):
    """Nodes of the compiled inner graphs of the scans of ``fgraph``, summed (recursive)."""
    total = 0
    for node in fgraph.apply_nodes:
        if type(node.op).__name__ != 'Scan':
            continue
        inner = getattr(getattr(getattr(node.op, 'fn', None), 'maker', None), 'fgraph', None)
        if inner is not None:
            total += len(inner.apply_nodes) + _inner_nodes(inner)
    return total


def build_heads(keras, heads):
    """The model of issue 33 with ``heads`` parallel masked BiLSTMs."""
    L = keras.layers
    inp = L.Input((None,))
    e = L.Embedding(5, 3, mask_zero=True)(inp)
    outs = [L.Bidirectional(L.LSTM(16, return_sequences=True))(e) for _ in range(heads)]
    h = L.Concatenate()(outs) if heads > 1 else outs[0]
    out = L.Dense(1, activation='sigmoid')(L.GlobalMaxPooling1D()(L.Lambda(lambda t: t)(h)))
    return keras.models.Model(inp, out)


def worker(engine, name, batches, limit_gb):
    if limit_gb and engine in ADDRESS_SPACE_LIMITED:
        import resource
        limit = int(limit_gb * 1024 ** 3)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import numpy as np
    import keras_backend.keras2_compat
    keras_backend.keras2_compat.install()   # Keras 2.3.1 on Python 3.10+ (no-op on 3.6)
    import keras
    from keras.models import Sequential
    from keras.utils import to_categorical
    keras.backend.set_floatx('float32')
    keras.backend.set_image_data_format('channels_last')
    import_rss = _rss_gib()
    rs = np.random.RandomState(0)
    if name.startswith('heads'):
        model = build_heads(keras, int(name[5:]))
        loss = 'binary_crossentropy'

        def batch():
            return rs.randint(0, 4, (32, 8)), rs.randint(0, 2, 32)
    else:
        x, y = kb.load_data()
        x, y = kb.prepare(name, x), to_categorical(y, 10).astype('float32')
        model = kb.build(name, keras.layers, Sequential, False)
        loss = 'categorical_crossentropy'

        def batch():
            i = rs.randint(0, len(x) - 32)
            return x[i:i + 32], y[i:i + 32]
    model.compile(optimizer='adam', loss=loss)
    start = time.perf_counter()
    model._make_train_function()
    make_s = time.perf_counter() - start
    start = time.perf_counter()
    values = [float(np.asarray(model.train_on_batch(*batch())))]
    first_s = time.perf_counter() - start
    for _ in range(batches - 1):
        values.append(float(np.asarray(model.train_on_batch(*batch()))))
    out = {'make_s': make_s, 'first_s': first_s, 'import_rss': import_rss,
           'maxrss': _rss_gib(), 'loss': values[-1], 'backend': keras.backend.backend()}
    fn = getattr(model.train_function, '_fn', None)
    fgraph = getattr(getattr(fn, 'maker', None), 'fgraph', None)
    if fgraph is not None:
        out['nodes'] = len(fgraph.apply_nodes)
        out['inner_nodes'] = _inner_nodes(fgraph)
        out['scans'] = sum(1 for n in fgraph.apply_nodes if type(n.op).__name__ == 'Scan')
    return out


def run_one(args, name):
    cold = tempfile.mkdtemp(prefix='memory_benchmark_') if args.cold else None
    env = kb.worker_env(args.engine, 'ours', ROOT, cold)
    cmd = [sys.executable, '-W', 'ignore', os.path.abspath(__file__), '--engine', args.engine,
           '--worker', name, '--batches', str(args.batches), '--limit-gb', str(args.limit_gb)]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                              universal_newlines=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {'error': 'timed out after %d s' % args.timeout}
    finally:
        if cold:
            shutil.rmtree(cold, ignore_errors=True)
    lines = proc.stdout.strip().splitlines()
    result = None
    if lines:
        try:
            result = json.loads(lines[-1])
        except ValueError:
            result = None
    if result is None:
        result = {'error': 'exit %d: %s' % (proc.returncode, proc.stderr.strip()[-600:])}
    if 'MemoryError' in proc.stderr:   # raised and swallowed on the way (a logged rewrite)
        result['memory_error_in_stderr'] = True
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--engine', required=True, choices=sorted(BACKEND))
    p.add_argument('--models', default=','.join(BENCH_MODELS))
    p.add_argument('--heads', default='1,5')
    p.add_argument('--batches', type=int, default=3)
    p.add_argument('--limit-gb', type=float, default=16)
    p.add_argument('--cold', action='store_true')
    p.add_argument('--timeout', type=int, default=1800)
    p.add_argument('--json')
    p.add_argument('--worker')
    args = p.parse_args()
    if args.worker:
        os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
        try:
            result = worker(args.engine, args.worker, args.batches, args.limit_gb)
        except MemoryError as e:
            result = {'error': 'MemoryError: %s' % e, 'maxrss': _rss_gib()}
        sys.stdout.flush()
        print(json.dumps(result))
        return
    names = [m for m in args.models.split(',') if m] + \
        ['heads%d' % int(h) for h in args.heads.split(',') if h]
    print('engine %s %s, Python %s, %s compiledir' % (
        args.engine, engine_version(kb.ENGINE_MODULE[args.engine]),
        sys.version.split()[0], 'cold' if args.cold else 'warm'))
    header = '%-8s %9s %8s %8s %9s %8s %7s %10s' % (
        'model', 'make_s', 'first_s', 'maxrss', 'import', 'nodes', 'scans', 'inner')
    print(header)
    results = {}
    for name in names:
        r = run_one(args, name)
        results[name] = r
        if 'error' in r:
            print('%-8s error: %s' % (name, r['error'][-300:]))
            continue
        print('%-8s %9.1f %8.2f %7.2fG %8.2fG %8s %7s %10s%s' % (
            name, r['make_s'], r['first_s'], r['maxrss'], r['import_rss'],
            r.get('nodes', '-'), r.get('scans', '-'), r.get('inner_nodes', '-'),
            '  (MemoryError in stderr)' if r.get('memory_error_in_stderr') else ''))
        sys.stdout.flush()
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'engine': args.engine, 'cold': args.cold, 'results': results}, f,
                      indent=1)


if __name__ == '__main__':
    main()
