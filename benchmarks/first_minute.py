"""The first minute: import, build, compile and the first calls of a Keras 2 model, per engine.

What a user waits for before training has really started, measured in a fresh process per
(side, model), phase by phase (``time.perf_counter``):

* ``import``: ``import keras`` with its engine (and ``keras_backend``);
* ``build``: the model made from Keras' layers (``keras.applications`` for the deep ones);
* ``compile``: ``model.compile('adam', 'categorical_crossentropy')``;
* ``train1``: the first ``train_on_batch`` (the training function built and compiled);
* ``eval1`` / ``predict1``: the first ``test_on_batch`` / ``predict_on_batch``;
* ``first`` = build + compile + train1 + eval1 + predict1 (``import`` is reported beside it);
* ``train2``: the second ``train_on_batch`` (steady state, for reference).

Models: the small ones of ``keras2_benchmark.py`` (``mlp``, ``cnn``, ``lstm``; batch 32 of the
digits) and Keras' applications with ``weights=None`` and 5 classes, on a batch of 8 random
images: ``densenet121`` and ``resnet50`` (32x32x3), ``inceptionv3`` (75x75x3, its smallest),
``nasnetmobile`` (32x32x3); on CNTK larger (``INPUT_SHAPES``: the smallest Keras' own CNTK
backend builds).

Sides per engine configuration (the anchors of issue 61): ``tensorflow``: ours against
``tf_keras`` (default mode: its ``tf.function``); ``jax`` / ``torch``: ours against Keras 3
on that engine;
``theano`` / ``cntk`` (CPython 3.6): ours against Keras 2.3.1's own backend of that engine;
``pytensor``: ours alone (Keras has no backend of its own for it).

``--cache cold`` (the default) gives each Theano / PyTensor process an empty compile folder,
and our JAX adapter an empty Keras config folder (where it keeps XLA's persistent compilation
cache; Keras 3 keeps none unless its user asks, and is measured so); ``--cache warm`` first
runs the same side and model once into a folder of its own and measures a second process on it
(TensorFlow keeps no compile cache between processes: warm is then the same as cold, and is not
run; for Keras 3 on JAX neither). Sides alternate round by round; medians are printed,
and the ratio ours / anchor of ``first`` (below 1.00x: ours faster), and of ``first`` +
``import`` (the whole first minute, what the user waits for); ``paired``: the median and
quartiles of each round's own ratio, whose two sides ran seconds apart (a drift of the
machine's speed moves it less). Cells are in milliseconds where every median is under a
second. ``--instructions`` counts instructions instead (valgrind's callgrind, on the main
thread, one BLAS/OpenMP thread whose waits do not spin, Python's hash seed fixed; each
phase ends at an ``os.getppid`` call where callgrind dumps): the same count in every run,
where the wall-clock time of this machine's CPUs moves by up to 1.5x within a second, so
that a change of a few percent shows, also against an anchor. It leaves out what
instructions do not show (memory stalls, other threads). ``--baseline PATH`` adds a
side ``baseline``: the keras_backend checkout at ``PATH`` (an earlier commit, ``git worktree
add``), measured as ours is, in the same rounds (a change's before and after, side by side
with the anchor on a machine whose speed drifts). Commands::

    .venv/bin/python benchmarks/first_minute.py --engine tensorflow
    .venv/bin/python benchmarks/first_minute.py --engine jax --models densenet121,mlp
    .venv36/bin/python benchmarks/first_minute.py --engine theano --cache warm
    .venv36/bin/python benchmarks/first_minute.py --engine cntk --models mlp --baseline ../old
    .venv36/bin/python benchmarks/first_minute.py --engine cntk --instructions --models lstm

Python 3.6 compatible (the CNTK and Theano runs).
"""
from __future__ import print_function

import argparse
import builtins
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

import keras2_benchmark as kb

SMALL = ('mlp', 'cnn', 'lstm')
#: Keras application -> (input shape, the name of its constructor)
APPLICATIONS = {'densenet121': ((32, 32, 3), 'DenseNet121'),
                'resnet50': ((32, 32, 3), 'ResNet50'),
                'inceptionv3': ((75, 75, 3), 'InceptionV3'),
                'nasnetmobile': ((32, 32, 3), 'NASNetMobile')}
#: engine -> application -> the input shape used there instead: Keras 2.3.1's own CNTK backend
#: cannot build the applications at the sizes above (CNTK's 'same' convolution refuses a kernel
#: larger than its input: "kernel dim 3 <= input dim 2" in ResNet50's last blocks at 32x32), so
#: on CNTK both sides build each at the smallest size the anchor takes
INPUT_SHAPES = {'cntk': {'densenet121': (96, 96, 3), 'resnet50': (96, 96, 3),
                         'inceptionv3': (139, 139, 3), 'nasnetmobile': (224, 224, 3)}}
MODELS = SMALL + ('densenet121', 'inceptionv3', 'nasnetmobile', 'resnet50')
PHASES = ('import', 'build', 'compile', 'train1', 'eval1', 'predict1', 'train2')
FIRST = ('build', 'compile', 'train1', 'eval1', 'predict1')
#: the sides that anchor an engine configuration (the first of its sides in
#: keras2_benchmark.SIDES that is one of these): tf_keras, Keras 3, Keras' own backends
ANCHOR_SIDES = ('tf_keras_default', 'keras3_jax', 'keras3_torch', 'keras_theano', 'keras_cntk')
#: the engines that keep compiled code in a cache folder (their flags' base_compiledir)
COMPILE_CACHED = ('theano', 'pytensor')
#: Python's recursion limit for the applications on Theano and PyTensor (see ``worker``)
RECURSION_LIMIT = 20000
#: the engine whose adapter keeps XLA's compiled programs under the Keras config folder
XLA_CACHED = 'jax'


def _input_shape(engine, name):
    """The input shape of application ``name`` on ``engine``."""
    return INPUT_SHAPES.get(engine, {}).get(name, APPLICATIONS[name][0])


def _data(engine, name, side):
    """(x, y) of one batch for model ``name``."""
    if name in APPLICATIONS:
        shape = _input_shape(engine, name)
        rng = np.random.RandomState(kb.SEED)
        return (rng.rand(8, *shape).astype('float32'),
                np.eye(5, dtype='float32')[np.arange(8) % 5])
    x, y = kb.load_data()
    x = kb.prepare(name, x)[:kb.BATCH]
    return x, np.eye(10, dtype='float32')[y[:kb.BATCH]]


#: set in a worker's environment by ``--instructions``: the worker calls ``os.getppid`` at
#: each phase's end, where callgrind (``--dump-before=getppid``) writes its counts, then
#: collects garbage and calls it again (a dump of the collection alone, left out): where
#: Python's full collections fall (20-30 million instructions each, after a count of
#: allocations) does not move a phase's count
MARKS_ENV = 'FIRST_MINUTE_MARKS'

#: what each of callgrind's dumps counts, in the order the worker marks them
MARKED = ('startup', 'import', 'data', 'build', 'compile', 'train1', 'eval1', 'predict1',
          'train2')


def _mark():
    if os.environ.get(MARKS_ENV):
        os.getppid()
        gc.collect()
        os.getppid()


def worker(engine, side, name):
    """Measure one (side, model) in this process; return the phases' seconds as a dict."""
    times = {}
    _mark()
    start = time.perf_counter()
    keras, layers, sequential, _, _, set_seed = kb._import_framework(side)
    times['import'] = time.perf_counter() - start
    _mark()
    if side.startswith('ours') and keras.__version__ != '2.3.1':
        raise RuntimeError('found Keras %s, this benchmark needs 2.3.1' % keras.__version__)
    np.random.seed(kb.SEED)
    if set_seed is not None:
        set_seed(kb.SEED)
    x, y = _data(engine, name, side)
    _mark()
    if engine in COMPILE_CACHED and name in APPLICATIONS:
        # Theano's gradient and its optimizer recurse once per node along the graph's depth:
        # at Python's default limit (1000) Keras' own Theano backend, like ours, raises
        # RecursionError in `T.grad` of ResNet50; its users raise the limit, as here
        sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    start = time.perf_counter()
    if name in APPLICATIONS:
        shape, ctor = _input_shape(engine, name), APPLICATIONS[name][1]
        model = getattr(keras.applications, ctor)(weights=None, input_shape=shape, classes=5)
    else:
        model = kb.build(name, layers, sequential, side.startswith('tf_keras'),
                         keras if side.startswith('keras3_') else None)
    times['build'] = time.perf_counter() - start
    _mark()
    start = time.perf_counter()
    model.compile(optimizer='adam', loss='categorical_crossentropy')
    times['compile'] = time.perf_counter() - start
    _mark()
    for phase, call in (('train1', lambda: model.train_on_batch(x, y)),
                        ('eval1', lambda: model.test_on_batch(x, y)),
                        ('predict1', lambda: model.predict_on_batch(x)),
                        ('train2', lambda: model.train_on_batch(x, y))):
        start = time.perf_counter()
        call()
        times[phase] = time.perf_counter() - start
        _mark()
    times['first'] = sum(times[p] for p in FIRST)
    times['params'] = int(model.count_params())
    times['keras'] = '%s %s' % (keras.__name__, keras.__version__)
    return times


def run_one(args, side, name):
    """One worker process (after a filling run for ``--cache warm``); its result dict."""
    cached = args.engine in COMPILE_CACHED or args.engine == XLA_CACHED
    cache_dir = tempfile.mkdtemp(prefix='first-minute-') if cached else None
    repo = args.repo
    if side == 'baseline':       # ours, from the other checkout
        side, repo = 'ours', args.baseline
    cmd = [sys.executable, '-W', 'ignore', os.path.abspath(__file__), '--engine', args.engine,
           '--worker', side, '--model', name]
    env = kb.worker_env(args.engine, side, repo, cache_dir)
    counts_dir = None
    if args.instructions:
        counts_dir = tempfile.mkdtemp(prefix='first-minute-ir-')
        cmd = ['setarch', platform.machine(), '-R',   # no address randomisation
               'valgrind', '--tool=callgrind', '--separate-threads=yes',
               '--dump-before=getppid', '--callgrind-out-file=%s' % os.path.join(
                   counts_dir, 'cg.%p')] + cmd
        env = dict(env, **dict((k, '1') for k in (
            MARKS_ENV, 'OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS')))
        env['PYTHONHASHSEED'] = '0'     # the same order of every set and dict in each run
        env['KMP_BLOCKTIME'] = '0'      # OpenMP's waits sleep at once (no spinning, whose
        # count depends on time)
    try:
        runs = 2 if (args.cache == 'warm' and cache_dir is not None) else 1
        for _ in range(runs):
            try:
                proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      universal_newlines=True, timeout=args.timeout, env=env)
            except subprocess.TimeoutExpired:
                return {'error': 'timed out after %d s' % args.timeout}
        result = kb.worker_result(proc)
        if counts_dir is not None and 'error' not in result:
            result.update(_instruction_counts(counts_dir))
    finally:
        if cache_dir is not None:
            shutil.rmtree(cache_dir, ignore_errors=True)
        if counts_dir is not None:
            shutil.rmtree(counts_dir, ignore_errors=True)
    return result


def _instruction_counts(folder):
    """The phases' instructions on the main thread (callgrind's dumps of a worker marked
    with ``MARKS_ENV``), in place of their seconds, and ``first`` their sum."""
    counts = {}
    for entry in os.listdir(folder):
        # cg.<pid>.<dump number>-<thread number>; thread 01 is the main one; dumps 1, 3, 5...
        # end the phases, the even ones are the collections between them
        tail = entry.rsplit('.', 1)[-1]
        if not tail.endswith('-01') or not tail[:-3].isdigit():
            continue
        dump = int(tail[:-3])
        number = (dump + 1) // 2
        if dump % 2 and 1 <= number <= len(MARKED):
            with open(os.path.join(folder, entry)) as f:
                for line in f:
                    if line.startswith('summary:'):
                        counts[MARKED[number - 1]] = float(line.split()[1])
                        break
    missing = [p for p in PHASES if p not in counts]
    if missing:
        return {'error': 'callgrind counted no %s' % ', '.join(missing)}
    out = dict((p, counts[p]) for p in PHASES)
    out['first'] = sum(counts[p] for p in FIRST)
    return out


def _median(values):
    values = sorted(v for v in values if v is not None)
    return float(np.median(values)) if values else None


def _paired(mine, anchor, key):
    """The median and quartiles over rounds of ``key(mine[i]) / key(anchor[i])``: each
    round's ratio of two sides measured seconds apart, which a drift of the machine's speed
    over the minutes of a run moves less than the ratio of the two sides' medians; None
    without a complete pair."""
    ratios = []
    for a, b in zip(mine, anchor):
        x, y = key(a), key(b)
        if x is not None and y:
            ratios.append(x / y)
    if not ratios:
        return None
    return tuple(float(q) for q in np.percentile(ratios, [50, 25, 75]))


def _compile_bytecode(repo):
    """Write the bytecode of ``repo``'s ``keras_backend`` for this interpreter, as ``pip
    install`` does for an installed package (and did for Keras and the engines, whose
    imports the anchors' figures include). Run from a checkout with
    ``PYTHONDONTWRITEBYTECODE`` set, ours' import otherwise compiled its modules from source
    in every measured process (CNTK 2.7: 0.05 s of its 0.08 s)."""
    import compileall
    compileall.compile_dir(os.path.join(repo, 'keras_backend'), quiet=2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--engine', required=True, choices=sorted(kb.SIDES))
    parser.add_argument('--models', default=','.join(MODELS))
    parser.add_argument('--rounds', type=int, default=2)
    parser.add_argument('--cache', choices=('cold', 'warm'), default='cold')
    parser.add_argument('--sides', help='comma-separated: ours and/or the anchor (default both)')
    parser.add_argument('--repo', default=kb.ROOT, help='the keras_backend checkout to measure')
    parser.add_argument('--baseline', metavar='PATH',
                        help='another keras_backend checkout, measured beside ours')
    parser.add_argument('--timeout', type=int, default=1800)
    parser.add_argument('--json', metavar='PATH', help='save every run and the medians here')
    parser.add_argument('--instructions', action='store_true',
                        help="count each phase's instructions (valgrind's callgrind, main "
                             "thread, one BLAS/OpenMP thread) instead of timing it")
    parser.add_argument('--worker', help=argparse.SUPPRESS)
    parser.add_argument('--model', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
        try:
            result = worker(args.engine, args.worker, args.model)
        except Exception:
            lines = traceback.format_exc().strip().splitlines()
            result = {'error': lines[-1], 'traceback': '\n'.join(lines[-20:])}
        print('\n' + json.dumps(result))
        return 0
    models = [m.strip() for m in args.models.split(',') if m.strip()]
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        sys.exit('first_minute: unknown model(s) %s; choose from %s'
                 % (', '.join(unknown), ', '.join(MODELS)))
    args.repo = os.path.abspath(args.repo)
    _compile_bytecode(args.repo)
    available, notes = kb.preflight(args.engine)
    sides = [('ours', 'keras_backend')]
    if args.baseline:
        args.baseline = os.path.abspath(args.baseline)
        _compile_bytecode(args.baseline)
        sides.append(('baseline', 'keras_backend at %s' % args.baseline))
    anchor = next((s for s in kb.SIDES[args.engine] if s[0] in ANCHOR_SIDES), None)
    if anchor is not None and anchor[0] in [s for s, _ in available]:
        sides.append(anchor)
    if args.sides:
        wanted = set(s.strip() for s in args.sides.split(','))
        sides = [s for s in sides if s[0] in wanted]
    for note in notes:
        print(note)
    runs = dict((side, dict((m, []) for m in models)) for side, _ in sides)
    started = time.time()
    for r in range(args.rounds):
        order = sides[r % len(sides):] + sides[:r % len(sides)]
        for name in models:
            for side, _ in order:
                result = run_one(args, side, name)
                runs[side][name].append(result)
                print('round %d/%d  %-12s %-16s %s' % (
                    r + 1, args.rounds, name, side, result.get('error') or ' '.join(
                        '%s %.2f' % (p, result[p]) for p in PHASES + ('first',))),
                    file=sys.stderr)
                sys.stderr.flush()
    med = dict((side, dict((m, dict((p, _median([res.get(p) for res in runs[side][m]]))
                                    for p in PHASES + ('first',))) for m in models))
               for side, _ in sides)
    # seconds, or milliseconds where every median is under a second (the small models)
    scale, unit = 1., 'seconds'
    if args.instructions:
        scale, unit = 1e-6, 'millions of instructions (callgrind)'
    elif builtins.all(v is None or v < 1. for side in med.values() for row in side.values()
                      for v in row.values()):
        scale, unit = 1000., 'milliseconds'
    print('\nThe first minute on %s (Python %s, %s cache): %d round(s), medians in %s; '
          '%.0f s in all' % (args.engine, platform.python_version(), args.cache, args.rounds,
                             unit, time.time() - started))
    for side, label in sides:
        print('  %s: %s' % (side, label))
    print('ratio: of the medians; paired: the median [quartiles] of the rounds\' own ratios '
          '(ours / anchor in the same round)')
    header = '%-12s %-16s' % ('model', 'side') + ''.join('%9s' % p for p in PHASES) + \
        '%9s %8s %12s %22s' % ('first', 'ratio', '+import', 'paired (+import)')
    print(header)

    def with_import(row):
        if row.get('first') is None or row.get('import') is None:
            return None
        return row['first'] + row['import']

    for name in models:
        anchor_side = next((side for side, _ in sides if side in ANCHOR_SIDES), None)
        anchor = med[anchor_side][name] if anchor_side else None
        for side, _ in sides:
            row = med[side][name]
            cells = ''.join('%9s' % ('-' if row[p] is None else
                                     '%.2f' % (row[p] * scale))
                            for p in PHASES + ('first',))
            ratio = ratio_all = paired = ''
            if side in ('ours', 'baseline') and anchor and anchor['first'] and \
                    row['first'] is not None:
                ratio = '%.2fx' % (row['first'] / anchor['first'])
                if with_import(row) is not None and with_import(anchor):
                    ratio_all = '%.2fx' % (with_import(row) / with_import(anchor))
                first = _paired(runs[side][name], runs[anchor_side][name],
                                lambda r: r.get('first'))
                whole = _paired(runs[side][name], runs[anchor_side][name], with_import)
                if first is not None:
                    paired = '%.2fx [%.2f-%.2f]' % first
                    if whole is not None:
                        paired += ' (%.2fx)' % whole[0]
            print('%-12s %-16s%s %8s %12s %22s' % (name, side, cells, ratio, ratio_all, paired))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'runs': runs, 'medians': med, 'engine': args.engine,
                       'cache': args.cache}, f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
