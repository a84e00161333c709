"""keras_backend.distribute: one allreduce of a model's gradients against its train step.

For one engine (``--engine``), for 1 and 2 workers (``--workers``) started by the
launcher (``python -m keras_backend.distribute -n N``) on this machine's loopback, and
for each Keras 2.3.1 model of ``keras2_benchmark.py`` (``--models``; Adam wrapped in
``DistributedOptimizer``, global batch 32 split over the workers with ``kd.shard``):

* ``step ms``: the median time of ``model.train_on_batch`` on this worker's part of a
  global batch (forward, backward, the gradients' allreduce, the update: one compiled
  function), after 3 warm-up steps;
* ``allreduce ms``: the median time of a ``K.function`` that does nothing but the
  fused allreduce of tensors shaped like the model's gradients (its trainable
  weights), i.e. the collective's own cost with the function-call overhead;
* ``grads``: the number of gradient values (float32) each step reduces.

With one worker the allreduce is the identity, so its column is the bare call overhead.
Run it with the engine's interpreter (CPython 3.6 for ``cntk`` and ``theano``: Theano
1.0.5; ``pytensor`` is ``theano`` on Python 3.11):

    .venv/bin/python benchmarks/distribute_benchmark.py --engine tensorflow
    .venv36/bin/python benchmarks/distribute_benchmark.py --engine cntk

Each (workers) configuration runs in fresh processes once per round (``--rounds``); the
medians over rounds are printed. On this 2-core machine two workers share the cores, so
the 2-worker step time also carries that contention.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = ('mlp', 'cnn', 'lstm', 'gru', 'bilstm')
ADAPTERS = {'tensorflow': 'tensorflow', 'pytensor': 'theano', 'theano': 'theano',
            'cntk': 'cntk', 'jax': 'jax'}
GLOBAL_BATCH = 32


def worker(models, steps):
    """Run inside the launcher: time every model; worker 0 prints one JSON line."""
    import keras_backend.distribute as kd
    kd.init()
    sys.path.insert(0, HERE)
    import keras_backend.keras2_compat
    keras_backend.keras2_compat.install()
    import keras
    from keras import backend as K
    import keras2_benchmark as kb

    x_all = kb.load_data()
    x_all, y_all = x_all[0], x_all[1]
    y_onehot = np.eye(10, dtype='float32')[y_all]
    local = GLOBAL_BATCH // kd.size()
    results = {}
    for name in models:
        model = kb.build(name, keras.layers, keras.models.Sequential, tf_keras=False)
        for layer, values in kb.initial_weights(model):
            layer.set_weights(values)
        model.compile(kd.DistributedOptimizer(keras.optimizers.Adam()),
                      'categorical_crossentropy')
        x = kd.shard(kb.prepare(name, x_all), GLOBAL_BATCH)
        y = kd.shard(y_onehot, GLOBAL_BATCH)
        batches = [(x[i:i + local], y[i:i + local])
                   for i in range(0, len(x) - local + 1, local)]
        for b in range(3):
            model.train_on_batch(*batches[b % len(batches)])
        kd.barrier()
        times = []
        for s in range(steps):
            t0 = time.perf_counter()
            model.train_on_batch(*batches[s % len(batches)])
            times.append(time.perf_counter() - t0)
        weights = model.trainable_weights
        reduce_fn = K.function([], kd.allreduce(list(weights)))
        reduce_fn([])
        kd.barrier()
        rtimes = []
        for s in range(steps):
            t0 = time.perf_counter()
            reduce_fn([])
            rtimes.append(time.perf_counter() - t0)
        step_ms = float(np.median(kd.allreduce_values(np.array(times)))) * 1e3
        reduce_ms = float(np.median(kd.allreduce_values(np.array(rtimes)))) * 1e3
        results[name] = {'step_ms': step_ms, 'allreduce_ms': reduce_ms,
                         'grads': int(sum(np.prod(K.int_shape(w)) for w in weights))}
    if kd.rank() == 0:
        print('RESULT ' + json.dumps(results))
        sys.stdout.flush()


def run(engine, n, models, steps):
    adapter = ADAPTERS[engine]
    env = dict(os.environ)
    path = [ROOT]
    keras2 = os.path.join(ROOT, '.venv', 'keras2')
    if sys.version_info >= (3, 8) and os.path.isdir(keras2):
        path.insert(0, keras2)
    if env.get('PYTHONPATH'):
        path.append(env['PYTHONPATH'])
    env.update(PYTHONPATH=os.pathsep.join(path), KERAS_BACKEND_QUIET='1',
               TF_CPP_MIN_LOG_LEVEL='2', KERAS_BACKEND='keras_backend.%s_backend' % adapter)
    cmd = [sys.executable, '-m', 'keras_backend.distribute', '-n', str(n), '--backend',
           adapter, '--timeout', '600', os.path.abspath(__file__), '--worker',
           '--models', ','.join(models), '--steps', str(steps)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=ROOT)
    for line in proc.stdout.splitlines():
        if line.startswith('RESULT '):
            return json.loads(line[len('RESULT '):])
    raise RuntimeError('the %d-worker run failed (exit %d):\n%s'
                       % (n, proc.returncode, proc.stderr[-4000:]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--engine', choices=sorted(ADAPTERS), default='tensorflow')
    p.add_argument('--models', default=','.join(MODELS))
    p.add_argument('--workers', default='1,2')
    p.add_argument('--steps', type=int, default=30)
    p.add_argument('--rounds', type=int, default=3)
    p.add_argument('--worker', action='store_true', help=argparse.SUPPRESS)
    args = p.parse_args()
    models = [m for m in args.models.split(',') if m]
    if args.worker:
        worker(models, args.steps)
        return
    counts = [int(n) for n in args.workers.split(',')]
    runs = dict((n, []) for n in counts)
    for r in range(args.rounds):
        for n in (counts if r % 2 == 0 else counts[::-1]):
            runs[n].append(run(args.engine, n, models, args.steps))
    print('engine %s (Python %d.%d), %d rounds x %d steps, global batch %d'
          % (args.engine, sys.version_info[0], sys.version_info[1], args.rounds, args.steps,
             GLOBAL_BATCH))
    print('| model | grads | workers | step ms | allreduce ms | allreduce / step |')
    print('|---|---|---|---|---|---|')
    for m in models:
        for n in counts:
            step = float(np.median([r[m]['step_ms'] for r in runs[n]]))
            red = float(np.median([r[m]['allreduce_ms'] for r in runs[n]]))
            print('| %s | %d | %d | %.2f | %.3f | %.0f%% |'
                  % (m, runs[n][0][m]['grads'], n, step, red, 100.0 * red / step))


if __name__ == '__main__':
    main()
