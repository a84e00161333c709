"""Training steps/s and K.function call overhead on TensorFlow, side by side.

Three implementations of the three digits models (examples/digits.py), all
from the same initial weights and the same batches:

* ``keras_backend``: our TensorFlow adapter, TF2 eager mode left on;
* ``tf_keras``: ``tf_keras.backend`` (TensorFlow's maintained Keras 2 backend) in
  graph mode (``tf.compat.v1.disable_eager_execution()``), the same model code;
* ``raw_tf``: the models written directly in TensorFlow (``tf.function`` +
  ``GradientTape``).

Graph mode is process-wide, so each measurement runs in its own process and
the implementations alternate round by round. Prints a table of medians and
ratios against tf_keras. Usage::

    python benchmarks/tf_benchmark.py [--rounds 3] [--steps 200]
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
sys.path.insert(0, os.path.join(ROOT, 'examples'))
sys.path.insert(0, ROOT)

MODELS = ('mlp', 'cnn', 'rnn')
IMPLS = ('keras_backend', 'tf_keras', 'raw_tf')
BATCH = 64


def batches(name, steps, K_format='channels_last'):
    import digits
    (x, y), _ = digits.load_data()
    if name == 'mlp':
        x = x.reshape(len(x), 64)
    elif name == 'cnn':
        x = x.reshape(len(x), 1, 8, 8) if K_format == 'channels_first' else x.reshape(len(x), 8, 8, 1)
    onehot = np.eye(10, dtype='float32')[y]
    rng = np.random.RandomState(0)
    out = []
    for _ in range(steps):
        idx = rng.randint(0, len(x), BATCH)
        out.append((np.ascontiguousarray(x[idx]), onehot[idx]))
    return out


def time_steps(step, data, warmup=20):
    for xb, yb in data[:warmup]:
        step(xb, yb)
    start = time.perf_counter()
    for xb, yb in data:
        step(xb, yb)
    return len(data) / (time.perf_counter() - start)


def call_overhead(fn, arg, n=2000):
    for _ in range(50):
        fn(arg)
    start = time.perf_counter()
    for _ in range(n):
        fn(arg)
    return (time.perf_counter() - start) / n * 1e6


def worker_backend_api(K, steps):
    """keras_backend and tf_keras share the model code of examples/digits.py."""
    import digits
    result = {}
    for name in MODELS:
        train_step, _, _ = digits.build(K, name)
        data = batches(name, steps)
        result[name] = time_steps(lambda xb, yb: train_step([xb, yb]), data)
    x = K.placeholder(shape=(None, 10))
    f = K.function([x], [x * 2.0])
    result['call_us'] = call_overhead(lambda a: f([a]), np.ones((1, 10), 'float32'))
    return result


def worker_raw_tf(steps):
    import tensorflow as tf
    import digits
    result = {}
    for name in MODELS:
        params = [tf.Variable(w) for w in digits.initial_weights(name)]
        lr = digits.SCHEDULES[name][1]

        def forward(x, name=name, params=params):
            if name == 'mlp':
                w1, b1, w2, b2 = params
                h = tf.nn.relu(tf.matmul(x, w1) + b1)
                return tf.matmul(h, w2) + b2
            if name == 'cnn':
                k, bk, w, b = params
                h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, k, 1, 'SAME'), bk))
                h = tf.nn.max_pool2d(h, 2, 2, 'VALID')
                return tf.matmul(tf.reshape(h, (-1, 256)), w) + b
            wx, wh, bh, w, b = params
            h = tf.zeros((tf.shape(x)[0], 32))
            for t in range(8):
                h = tf.tanh(tf.matmul(x[:, t], wx) + tf.matmul(h, wh) + bh)
            return tf.matmul(h, w) + b

        @tf.function
        def train_step(x, y, forward=forward, params=params, lr=lr):
            with tf.GradientTape() as tape:
                logits = forward(x)
                loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, logits))
            for p, g in zip(params, tape.gradient(loss, params)):
                p.assign_sub(lr * g)
            return loss

        data = batches(name, steps)
        result[name] = time_steps(lambda xb, yb: train_step(xb, yb).numpy(), data)
    double = tf.function(lambda a: a * 2.0)
    result['call_us'] = call_overhead(lambda a: double(a).numpy(), np.ones((1, 10), 'float32'))
    return result


def run_worker(impl, steps):
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
    if impl == 'keras_backend':
        os.environ['KERAS_BACKEND'] = 'tensorflow'
        os.environ['KERAS_BACKEND_QUIET'] = '1'
        from keras_backend import backend as K
        return worker_backend_api(K, steps)
    if impl == 'tf_keras':
        import tensorflow as tf
        tf.compat.v1.disable_eager_execution()
        import tf_keras.backend as K
        return worker_backend_api(K, steps)
    return worker_raw_tf(steps)


def main():
    parser = argparse.ArgumentParser(description='TensorFlow benchmark (see module docstring)')
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--steps', type=int, default=200)
    parser.add_argument('--worker', choices=IMPLS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(run_worker(args.worker, args.steps)))
        return 0
    runs = {impl: [] for impl in IMPLS}
    for r in range(args.rounds):
        for impl in IMPLS:
            out = subprocess.check_output([sys.executable, os.path.abspath(__file__),
                                           '--worker', impl, '--steps', str(args.steps)])
            runs[impl].append(json.loads(out.decode().strip().splitlines()[-1]))
            print('round %d %-13s %s' % (r + 1, impl, runs[impl][-1]), file=sys.stderr)
    med = {impl: {k: float(np.median([run[k] for run in runs[impl]]))
                  for k in MODELS + ('call_us',)} for impl in IMPLS}
    print('\nTensorFlow %s, %d rounds x %d steps, batch %d (medians)\n'
          % (_tf_version(), args.rounds, args.steps, BATCH))
    print('| metric | keras_backend | tf_keras (graph) | raw TF | keras_backend / tf_keras | keras_backend / raw TF |')
    print('|---|---|---|---|---|---|')
    for k in MODELS:
        a, b, c = med['keras_backend'][k], med['tf_keras'][k], med['raw_tf'][k]
        print('| %s steps/s | %.0f | %.0f | %.0f | %.2fx | %.2fx |' % (k, a, b, c, a / b, a / c))
    a, b, c = (med[i]['call_us'] for i in IMPLS)
    print('| K.function call (us, lower is better) | %.0f | %.0f | %.0f | %.2fx | %.2fx |'
          % (a, b, c, a / b, a / c))
    return 0


def _tf_version():
    out = subprocess.check_output([sys.executable, '-c', 'import tensorflow as tf; print(tf.__version__)'],
                                  env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3'))
    return out.decode().strip().splitlines()[-1]


if __name__ == '__main__':
    sys.exit(main())
