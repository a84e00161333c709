"""keras_backend.distribute: scaling of Keras 2.3.1 training over 1, 2, 4 ... workers.

For one engine (``--engine``), for each worker count (``--workers``, default 1,2,4)
started by the launcher (``python -m keras_backend.distribute -n N --collectives C``,
``--collectives``: auto, engine or mpi, the path of TensorFlow and JAX) on this machine's
loopback, and for each Keras 2.3.1 model (``--models``, default cnn,lstm; Adam wrapped in
``DistributedOptimizer``): weak scaling as Horovod measured it, every worker trains on its
own batch of ``--per-worker-batch`` samples (default 32), so the global batch is N times
that. Models: the digit models of ``keras2_benchmark.py`` (mlp, cnn, lstm, gru, bilstm),
its compute-bound ones (``resnet``: 0.7M weights; ``lstm256``: 2.2M) and ``wide25m``
(Dense 1024-4096-4096-1024-10, 25.2M weights: bytes matter there). The table names the
collective path that ran (``kd.collective_path()``).

* ``step ms``: the median time of ``model.train_on_batch`` (forward, backward, the
  gradients' allreduce, the update: one compiled function), after 3 warm-up steps, the
  median over the workers of each worker's median;
* ``samples/s``: the global batch over the step time (all workers together);
* ``allreduce ms``: the median time of a ``K.function`` that does nothing but the fused
  allreduce of tensors shaped like the model's gradients (its trainable weights), i.e.
  the collective's own cost with the function-call overhead; ``allreduce / step`` its
  share of the step (with one worker the allreduce is the identity: the bare call);
* ``fp16 allreduce ms``: the same allreduce with ``compression=kd.Compression.fp16``
  (float16 on the wire), and ``fp16 / fp32`` its ratio to the uncompressed one;
* ``efficiency``: samples/s of N workers over N times samples/s of one worker.

Cores are split evenly: each worker gets ``--threads`` threads, default the machine's
cores divided by N (at least 1), through ``OMP_NUM_THREADS``, TensorFlow's
``TF_NUM_INTRAOP_THREADS`` / ``TF_NUM_INTEROP_THREADS`` (``--interop-threads``, default
1) and XLA's CPU flags, and runs bound to that many CPUs of its own (the launcher's
``--bind-to core`` with ``KERAS_BACKEND_DISTRIBUTE_CPUS`` = the first N x threads CPUs),
one worker too: XLA and TensorFlow size their thread pools from the CPUs a process may
use, so an unbound single worker given "1 thread" still computed on every core. Where N
x threads exceeds the cores (4 workers on a 2-core machine) nothing is bound, the workers
share cores and the step time carries that contention: the table says how many cores the
machine has.

``--fusion-threshold BYTES`` sets Horovod's fusion buffer size
(``KERAS_BACKEND_DISTRIBUTE_FUSION_THRESHOLD``; default 64 MiB: one buffer for every model
here but ``wide25m``): a small one splits the gradients into buffers that start as the
backward pass makes them (overlap, where the engine runs two ops at once: TensorFlow with
``--interop-threads 2``).

Run it with the engine's interpreter (CPython 3.6 for ``cntk`` and ``theano``: Theano
1.0.5; ``pytensor`` is ``theano`` on Python 3.11):

    .venv/bin/python benchmarks/distribute_benchmark.py --engine tensorflow
    .venv36/bin/python benchmarks/distribute_benchmark.py --engine cntk --workers 1,2

Each worker count runs in fresh processes once per round (``--rounds``; the order of
the counts alternates between rounds); the medians over rounds are printed.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

from engine_table import engines

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = ('mlp', 'cnn', 'lstm', 'gru', 'bilstm')
#: compute-bound models (keras2_benchmark.py's realistic ones) and one where bytes matter
REALISTIC = ('resnet', 'lstm256')
WIDE = 'wide25m'
ALL_MODELS = MODELS + REALISTIC + (WIDE,)
#: engine configuration (the table's ``engine``) -> its backend name
ADAPTERS = dict((row.engine, row.name) for row in engines.TABLE)


def _median_over_workers(kd, values):
    """The median over the workers of each worker's median of ``values``."""
    mine = np.array([float(np.median(values))])
    if kd.size() == 1:
        return float(mine[0])
    everyone = kd.allgather_values(mine) if hasattr(kd, 'allgather_values') else None
    if everyone is None:
        return float(kd.allreduce_values(mine)[0])     # the mean, without allgather
    return float(np.median(everyone))


def _timed(fn, steps):
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def _model_and_data(name, kb, keras, batch, size):
    """(model, x, y, loss) of ``name``: a digit model, a realistic one (``batch * size *
    4`` seeded samples) or ``wide25m``: Dense 1024-4096-4096-1024-10 (25.2M weights) on
    seeded random vectors."""
    if name in MODELS:
        x_all, y_all = kb.load_data()[:2]
        model = kb.build(name, keras.layers, keras.models.Sequential, tf_keras=False)
        return (model, kb.prepare(name, x_all), np.eye(10, dtype='float32')[y_all],
                'categorical_crossentropy')
    samples = batch * size * 4
    if name == WIDE:
        rng = np.random.RandomState(kb.SEED)
        inp = keras.layers.Input(shape=(1024,))
        h = inp
        for units in (4096, 4096, 1024):
            h = keras.layers.Dense(units, activation='relu')(h)
        model = keras.models.Model(inp, keras.layers.Dense(10, activation='softmax')(h))
        return (model, rng.rand(samples, 1024).astype('float32'),
                np.eye(10, dtype='float32')[rng.randint(0, 10, size=samples)],
                'categorical_crossentropy')
    model = kb.build_realistic(name, keras, False)
    x, y, loss = kb.realistic_data(name, samples)
    return model, x, y, loss


def worker(models, steps, batch):
    """Run inside the launcher: time every model; worker 0 prints one JSON line."""
    import keras_backend.distribute as kd
    kd.init()
    sys.path.insert(0, HERE)
    import keras_backend.keras2_compat
    keras_backend.keras2_compat.install()
    import keras
    from keras import backend as K
    import keras2_benchmark as kb

    fp16 = getattr(getattr(kd, 'Compression', None), 'fp16', None)
    results = {}
    path = kd.collective_path() if hasattr(kd, 'collective_path') else None
    for name in models:
        model, x_all, y_all, loss = _model_and_data(name, kb, keras, batch, kd.size())
        for layer, values in kb.initial_weights(model):
            layer.set_weights(values)
        model.compile(kd.DistributedOptimizer(keras.optimizers.Adam()), loss)
        x = kd.shard(x_all, batch * kd.size())
        y = kd.shard(y_all, batch * kd.size())
        batches = [(x[i:i + batch], y[i:i + batch])
                   for i in range(0, len(x) - batch + 1, batch)]
        for b in range(3):
            model.train_on_batch(*batches[b % len(batches)])
        kd.barrier()
        counter = [0]

        def step():
            model.train_on_batch(*batches[counter[0] % len(batches)])
            counter[0] += 1
        times = _timed(step, steps)
        weights = model.trainable_weights
        row = {'step_ms': _median_over_workers(kd, times) * 1e3,
               'grads': int(sum(np.prod(K.int_shape(w)) for w in weights)),
               'path': path or 'none'}
        variants = [('allreduce_ms', {})]
        if fp16 is not None:
            variants.append(('fp16_allreduce_ms', {'compression': fp16}))
        for key, kwargs in variants:
            reduce_fn = K.function([], kd.allreduce(list(weights), **kwargs))
            reduce_fn([])
            kd.barrier()
            row[key] = _median_over_workers(kd, _timed(lambda: reduce_fn([]), steps)) * 1e3
        results[name] = row
    if kd.rank() == 0:
        print('RESULT ' + json.dumps(results))
        sys.stdout.flush()


def thread_env(threads, n, interop=1):
    """The variables that give each of ``n`` workers ``threads`` threads, on every engine,
    and (where the machine has ``n * threads`` CPUs) the CPUs the launcher divides among
    them."""
    t = str(threads)
    env = {'OMP_NUM_THREADS': t, 'MKL_NUM_THREADS': t, 'TF_NUM_INTRAOP_THREADS': t,
           'TF_NUM_INTEROP_THREADS': str(interop),
           'XLA_FLAGS': '--xla_cpu_multi_thread_eigen=%s'
                        % ('true' if threads > 1 else 'false')}
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else []
    if n * threads <= len(cpus):
        env['KERAS_BACKEND_DISTRIBUTE_CPUS'] = ','.join(str(c) for c in cpus[:n * threads])
    return env


def run(engine, n, models, steps, batch, threads, collectives='auto', fusion=None,
        interop=1):
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
    env.pop('KERAS_BACKEND_DISTRIBUTE_CPUS', None)
    env.update(thread_env(threads, n, interop))
    if fusion is not None:
        env['KERAS_BACKEND_DISTRIBUTE_FUSION_THRESHOLD'] = str(fusion)
    cmd = [sys.executable, '-m', 'keras_backend.distribute', '-n', str(n), '--backend',
           adapter, '--timeout', '600', '--collectives', collectives,
           os.path.abspath(__file__), '--worker',
           '--models', ','.join(models), '--steps', str(steps), '--per-worker-batch',
           str(batch)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=ROOT)
    for line in proc.stdout.splitlines():
        if line.startswith('RESULT '):
            return json.loads(line[len('RESULT '):])
    raise RuntimeError('the %d-worker run failed (exit %d):\n%s'
                       % (n, proc.returncode, proc.stderr[-4000:]))


def _med(runs, model, key):
    values = [r[model][key] for r in runs if key in r[model]]
    return float(np.median(values)) if values else None


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--engine', choices=sorted(ADAPTERS), default='tensorflow')
    p.add_argument('--models', default='cnn,lstm')
    p.add_argument('--workers', default='1,2,4')
    p.add_argument('--steps', type=int, default=30)
    p.add_argument('--rounds', type=int, default=3)
    p.add_argument('--per-worker-batch', type=int, default=32)
    p.add_argument('--collectives', default='auto', choices=('auto', 'engine', 'mpi'),
                   help='the collective path of TensorFlow and JAX (the launcher\'s '
                        '--collectives; default auto)')
    p.add_argument('--threads', type=int, default=None,
                   help='threads per worker (default: cores // workers, at least 1)')
    p.add_argument('--fusion-threshold', type=int, default=None, metavar='BYTES',
                   help='the fusion buffer size (default: the library\'s, 64 MiB)')
    p.add_argument('--interop-threads', type=int, default=1,
                   help='TensorFlow\'s inter-op threads per worker (default 1)')
    p.add_argument('--worker', action='store_true', help=argparse.SUPPRESS)
    args = p.parse_args()
    models = [m for m in args.models.split(',') if m]
    unknown = [m for m in models if m not in ALL_MODELS]
    if unknown:
        p.error('unknown model(s) %s; choose from %s' % (unknown, ', '.join(ALL_MODELS)))
    if args.worker:
        worker(models, args.steps, args.per_worker_batch)
        return
    counts = [int(n) for n in args.workers.split(',')]
    cores = os.cpu_count() or 1
    runs = dict((n, []) for n in counts)
    for r in range(args.rounds):
        for n in (counts if r % 2 == 0 else counts[::-1]):
            threads = args.threads or max(1, cores // n)
            runs[n].append(run(args.engine, n, models, args.steps, args.per_worker_batch,
                               threads, args.collectives, args.fusion_threshold,
                               args.interop_threads))
    print('engine %s (Python %d.%d), %d cores, %d rounds x %d steps, %d samples per worker '
          'per step, fusion threshold %s, %d inter-op thread(s)'
          % (args.engine, sys.version_info[0], sys.version_info[1], cores, args.rounds,
             args.steps, args.per_worker_batch,
             'default' if args.fusion_threshold is None else args.fusion_threshold,
             args.interop_threads))
    print('| model | grads | workers | path | threads/worker | step ms | samples/s | '
          'efficiency | allreduce ms | allreduce / step | fp16 allreduce ms | fp16 / fp32 |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|')
    for m in models:
        base = None
        for n in counts:
            step = _med(runs[n], m, 'step_ms')
            red = _med(runs[n], m, 'allreduce_ms')
            half = _med(runs[n], m, 'fp16_allreduce_ms')
            rate = n * args.per_worker_batch / (step / 1e3)
            if n == 1:
                base = rate
            eff = '%.0f%%' % (100.0 * rate / (n * base)) if base else 'n/a'
            print('| %s | %d | %d | %s | %d | %.2f | %.0f | %s | %.3f | %.1f%% | %s | %s |'
                  % (m, runs[n][0][m]['grads'], n, runs[n][0][m].get('path', '?'),
                     args.threads or max(1, cores // n),
                     step, rate, eff, red, 100.0 * red / step,
                     'n/a' if half is None else '%.3f' % half,
                     'n/a' if half is None or n == 1 else '%.2fx' % (half / red)))


if __name__ == '__main__':
    main()
