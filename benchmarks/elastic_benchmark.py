"""What committing the training state costs (keras_backend.distribute.State).

For the ``mlp``, ``cnn`` and ``lstm`` models of ``keras2_benchmark.py`` (Adam,
categorical cross-entropy, scikit-learn's digits, batch 32: 45 steps an epoch), on one
process of each engine asked for, Keras 2.3.1 on our adapter:

* ``step ms``: the median time of one training step (a Keras ``fit`` epoch, divided by
  its steps; epochs after the first);
* ``commit ms``: the median time of ``State.commit()`` (the model's and the optimizer's
  weights fetched and copied: what the training waits for), 20 commits;
* ``write ms``: the median time of the file's write that follows in the commit thread
  (a temporary file, fsync, ``os.replace``, fsync of the folder), while training goes on;
* ``default %``: the commits of an epoch at the default interval
  (``keras2_elastic.DEFAULT_BATCHES_PER_COMMIT`` = 100 steps, and one at each epoch end)
  times ``commit ms``, over the epoch's steps times ``step ms``;
* ``fit +% (k=1)`` / ``fit +% (default)``: the measured growth of a 3-epoch
  ``keras2_elastic.fit`` committing every step / at the default interval, against plain
  ``fit`` of the same epochs (calls taken in turn, 7 rounds, the median; noisy on a loaded
  machine: with steps of about a millisecond, every per-step cost shows).

    PYTHONPATH=.:.venv/keras2 .venv/bin/python benchmarks/elastic_benchmark.py \\
        --engines tensorflow,theano,jax [--dir /shared/folder]
    PYTHONPATH=. .venv36/bin/python benchmarks/elastic_benchmark.py --engines cntk,theano

``--dir`` is where the commits go (default: a temporary folder on this machine's disk;
a network file system makes them slower).
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

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = ('mlp', 'cnn', 'lstm')
BATCH = 32
#: the epochs of each measured fit call
EPOCHS = 3


def _median_epochs(fits, rounds=7):
    """The median time of each of ``fits``, run in turn ``rounds`` times (so that
    a machine's load drifts over all of them alike); the first round is not counted."""
    times = [[] for _ in fits]
    for _ in range(rounds):
        for i, fit in enumerate(fits):
            start = time.time()
            fit()
            times[i].append(time.time() - start)
    return [float(np.median(t[1:])) for t in times]


def worker(name, folder):
    sys.path.insert(0, HERE)
    import keras2_benchmark as kb
    import keras_backend.distribute as kd
    kd.init()
    import keras_backend.keras2_compat
    keras_backend.keras2_compat.install()
    import keras
    import keras_backend.distribute.keras2_elastic as kde
    x, y = kb.load_data()
    x = kb.prepare(name, x)
    y = keras.utils.to_categorical(y, 10)
    np.random.seed(kb.SEED)
    model = kb.build(name, keras.layers, keras.models.Sequential, False)
    for layer, values in kb.initial_weights(model):
        layer.set_weights(values)
    model.compile(keras.optimizers.Adam(1e-3), 'categorical_crossentropy')
    steps = int(np.ceil(len(x) / float(BATCH)))
    model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)   # compile
    state = kd.State(folder, model=model)
    commits, writes = [], []
    for _ in range(20):
        start = time.time()
        state.commit()
        mid = time.time()
        state.wait()
        commits.append(mid - start)
        writes.append(time.time() - mid)
    commit, write = float(np.median(commits)), float(np.median(writes))
    size = os.path.getsize(state.path)

    def elastic_epochs(k):
        def run():
            state.epoch, state.batch = 0, 0
            kde.fit(model, state, x, y, BATCH, EPOCHS, batches_per_commit=k)
        return run
    plain, every, default = (t / EPOCHS for t in _median_epochs([
        lambda: model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, shuffle=False, verbose=0),
        elastic_epochs(1), elastic_epochs(kde.DEFAULT_BATCHES_PER_COMMIT)]))
    per_epoch = steps // kde.DEFAULT_BATCHES_PER_COMMIT + 1
    return {'model': name, 'step_ms': 1e3 * plain / steps, 'commit_ms': 1e3 * commit,
            'write_ms': 1e3 * write,
            'bytes': size, 'default_pct': 100.0 * per_epoch * commit / plain,
            'every_pct': 100.0 * (every - plain) / plain,
            'measured_default_pct': 100.0 * (default - plain) / plain}


def run_one(engine, name, folder):
    env = dict(os.environ)
    env['KERAS_BACKEND'] = 'keras_backend.%s_backend' % engine
    env.setdefault('KERAS_BACKEND_QUIET', '1')
    env.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
    for k in list(env):
        if k.startswith('KERAS_BACKEND_DISTRIBUTE_'):
            del env[k]
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), '--worker', name,
                           '--dir', folder], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=ROOT)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith('{'):
            return json.loads(line)
    sys.stderr.write('%s %s failed:\n%s\n' % (engine, name, proc.stderr[-3000:]))
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--engines', default='tensorflow')
    p.add_argument('--models', default=','.join(MODELS))
    p.add_argument('--dir', default=None)
    p.add_argument('--worker', default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.dir)))
        return 0
    print('%-11s %-5s %9s %10s %9s %7s %10s %13s %17s' % (
        'engine', 'model', 'step ms', 'commit ms', 'write ms', 'kB', 'default %',
        'fit +% (k=1)', 'fit +% (default)'))
    for engine in args.engines.split(','):
        for name in args.models.split(','):
            folder = tempfile.mkdtemp(prefix='elastic_bench_', dir=args.dir)
            try:
                r = run_one(engine, name, folder)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            if r is None:
                print('%-11s %-5s %s' % (engine, name, 'error'))
                continue
            print('%-11s %-5s %9.2f %10.2f %9.2f %7.1f %10.2f %13.1f %17.1f' % (
                engine, name, r['step_ms'], r['commit_ms'], r['write_ms'], r['bytes'] / 1e3,
                r['default_pct'], r['every_pct'], r['measured_default_pct']))
            sys.stdout.flush()
    return 0


if __name__ == '__main__':
    sys.exit(main())
