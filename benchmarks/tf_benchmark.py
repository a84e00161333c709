"""Training steps/s and K.function call overhead on TensorFlow, side by side.

Three implementations of the three digits models (examples/digits.py), all
from the same initial weights and the same batches:

* ``keras_backend``: our TensorFlow adapter, TF2 eager mode left on;
* ``tf_keras``: ``tf_keras.backend`` (TensorFlow's maintained Keras 2 backend) in
  graph mode (``tf.compat.v1.disable_eager_execution()``), the same model code;
* ``raw_tf``: the models written directly in TensorFlow (``tf.function`` +
  ``GradientTape``).

keras_backend and tf_keras also train three compute-bound variants written
with ``K`` (``LARGE``: MLP 784-1024-1024-10 at batch 256, CNN on 32x32x3 at
batch 64, a 256-unit RNN over 50 steps at batch 64) on random data.

Graph mode is process-wide, so each measurement runs in its own process and
the implementations alternate round by round. Prints a table of medians and
ratios against tf_keras. Usage::

    python benchmarks/tf_benchmark.py [--rounds 3] [--steps 200]
"""
from __future__ import print_function

import json
import os
import sys

import numpy as np

import harness
from harness import MODELS, batches, call_overhead, time_steps

IMPLS = ('keras_backend', 'tf_keras', 'raw_tf')


#: compute-bound variants (issue 12): name -> (input shape, batch)
LARGE = {'mlp_large': ((784,), 256), 'cnn_large': ((32, 32, 3), 64),
         'rnn_large': ((50, 256), 64)}


def _large_step(K, name):
    """A plain-SGD train step of a compute-bound model written with ``K`` (channels_last):
    MLP 784-1024-1024-10; CNN conv 3x3x32 (same) - relu - maxpool 2 - dense 10 on 32x32x3;
    RNN (tanh, 256 units) over 50 steps of 256 features - dense 10."""
    rng = np.random.RandomState(0)

    def var(*shape):   # kernels: scaled normal; biases: zeros
        if len(shape) == 1:
            return K.variable(np.zeros(shape, 'float32'))
        return K.variable((rng.randn(*shape) * np.sqrt(1.0 / shape[-2])).astype('float32'))
    shape, _ = LARGE[name]
    x, y = K.placeholder(shape=(None,) + shape), K.placeholder(shape=(None, 10))
    if name == 'mlp_large':
        params = [var(784, 1024), var(1024), var(1024, 1024), var(1024), var(1024, 10), var(10)]
        h = K.relu(K.bias_add(K.dot(x, params[0]), params[1]))
        h = K.relu(K.bias_add(K.dot(h, params[2]), params[3]))
        logits = K.bias_add(K.dot(h, params[4]), params[5])
    elif name == 'cnn_large':
        params = [var(3, 3, 3, 32), var(32), var(16 * 16 * 32, 10), var(10)]
        h = K.relu(K.bias_add(K.conv2d(x, params[0], padding='same',
                                       data_format='channels_last'), params[1],
                              data_format='channels_last'))
        h = K.pool2d(h, (2, 2), strides=(2, 2), data_format='channels_last', pool_mode='max')
        logits = K.bias_add(K.dot(K.batch_flatten(h), params[2]), params[3])
    else:
        params = [var(256, 256), var(256, 256), var(256), var(256, 10), var(10)]
        wx, wh, bh = params[:3]

        def step(x_t, states):
            h_t = K.tanh(K.dot(x_t, wx) + K.dot(states[0], wh) + bh)
            return h_t, [h_t]
        h0 = K.dot(K.zeros_like(K.sum(x, axis=2)), K.zeros((50, 256)))
        last, _, _ = K.rnn(step, x, [h0])
        logits = K.bias_add(K.dot(last, params[3]), params[4])
    loss = K.mean(K.categorical_crossentropy(y, K.softmax(logits)))
    grads = K.gradients(loss, params)
    return K.function([x, y], [loss], updates=[K.update_sub(p, 0.01 * g)
                                               for p, g in zip(params, grads)])


def large_batches(name, steps):
    shape, batch = LARGE[name]
    rng = np.random.RandomState(1)
    return [(rng.rand(batch, *shape).astype('float32'),
             np.eye(10, dtype='float32')[rng.randint(0, 10, batch)])
            for _ in range(max(5, steps // 10))]


def worker_backend_api(K, steps):
    """keras_backend and tf_keras share the model code of examples/digits.py."""
    import digits
    result = {}
    for name in MODELS:
        train_step, _, _ = digits.build(K, name)
        data = batches(name, steps)
        result[name] = time_steps(lambda xb, yb: train_step([xb, yb]), data)[0]
    for name in LARGE:
        train_step = _large_step(K, name)
        data = large_batches(name, steps)
        result[name] = time_steps(lambda xb, yb: train_step([xb, yb]), data, warmup=3)[0]
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
        result[name] = time_steps(lambda xb, yb: train_step(xb, yb).numpy(), data)[0]
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
    args = harness.parse_args('TensorFlow benchmark (see module docstring)', IMPLS)
    if args.worker:
        print(json.dumps(run_worker(args.worker, args.steps)))
        return 0
    runs = dict((impl, []) for impl in IMPLS)
    for _ in range(args.rounds):
        for impl in IMPLS:
            runs[impl].append(harness.run_worker(__file__, impl, args.steps))
    med = dict((impl, harness.medians(runs[impl], [k for k in MODELS + tuple(LARGE) + ('call_us',)
                                                     if k in runs[impl][0]]))
               for impl in IMPLS)
    print('\nTensorFlow %s, %d rounds x %d steps, batch %d (medians)\n'
          % (harness.engine_version('tensorflow'), args.rounds, args.steps, harness.BATCH))
    print('| metric | keras_backend | tf_keras (graph) | raw TF | keras_backend / tf_keras | keras_backend / raw TF |')
    print('|---|---|---|---|---|---|')
    for k in MODELS:
        a, b, c = med['keras_backend'][k], med['tf_keras'][k], med['raw_tf'][k]
        print('| %s steps/s | %.0f | %.0f | %.0f | %.2fx | %.2fx |' % (k, a, b, c, a / b, a / c))
    for k in LARGE:
        a, b = med['keras_backend'][k], med['tf_keras'][k]
        print('| %s steps/s (batch %d) | %.1f | %.1f | n/a | %.2fx | n/a |'
              % (k, LARGE[k][1], a, b, a / b))
    a, b, c = (med[i]['call_us'] for i in IMPLS)
    print('| K.function call (us, lower is better) | %.0f | %.0f | %.0f | %.2fx | %.2fx |'
          % (a, b, c, a / b, a / c))
    return 0


if __name__ == '__main__':
    sys.exit(main())
