"""What every benchmark script shares: the batches, the timing, the worker processes.

Each script runs its implementations in separate processes (``--worker IMPL``),
alternating them round by round, and prints medians. Python 3.6 compatible
(the CNTK benchmark runs under that interpreter).
"""
from __future__ import print_function

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for _path in (os.path.join(ROOT, 'examples'), ROOT):
    if _path not in sys.path:
        sys.path.insert(0, _path)

MODELS = ('mlp', 'cnn', 'rnn')
BATCH = 64


def batches(name, steps):
    """``steps`` (x, y_onehot) batches of BATCH digits for model ``name`` (channels_last)."""
    import digits
    (x, y), _ = digits.load_data()
    if name == 'mlp':
        x = x.reshape(len(x), 64)
    elif name == 'cnn':
        x = x.reshape(len(x), 8, 8, 1)
    onehot = np.eye(10, dtype='float32')[y]
    rng = np.random.RandomState(0)
    out = []
    for _ in range(steps):
        idx = rng.randint(0, len(x), BATCH)
        out.append((np.ascontiguousarray(x[idx]), onehot[idx]))
    return out


def time_steps(step, data, warmup=20):
    """Return (steps per second of ``step(x, y)`` over ``data``, its last result)."""
    for xb, yb in data[:warmup]:
        step(xb, yb)
    last = None
    start = time.perf_counter()
    for xb, yb in data:
        last = step(xb, yb)
    return len(data) / (time.perf_counter() - start), last


def call_overhead(fn, arg, n=2000):
    """Microseconds per call of ``fn(arg)``."""
    for _ in range(50):
        fn(arg)
    start = time.perf_counter()
    for _ in range(n):
        fn(arg)
    return (time.perf_counter() - start) / n * 1e6


def parse_args(description, impls):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--steps', type=int, default=200)
    parser.add_argument('--worker', choices=impls)
    return parser.parse_args()


def run_worker(script, impl, steps, env=None):
    """Run ``script --worker impl`` in a fresh interpreter; return its JSON result."""
    out = subprocess.check_output([sys.executable, '-W', 'ignore', os.path.abspath(script),
                                   '--worker', impl, '--steps', str(steps)], env=env)
    result = json.loads(out.decode().strip().splitlines()[-1])
    print('%-13s %s' % (impl, result), file=sys.stderr)
    return result


def medians(runs, keys):
    """{key: median over ``runs`` (a list of result dicts)} for each of ``keys``."""
    return dict((k, float(np.median([run[k] for run in runs]))) for k in keys)


def engine_version(module):
    """The ``__version__`` of ``module`` as a fresh interpreter imports it."""
    out = subprocess.check_output([sys.executable, '-W', 'ignore', '-c',
                                   'import %s; print(%s.__version__)' % (module, module)],
                                  env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3'))
    return out.decode().strip().splitlines()[-1]
