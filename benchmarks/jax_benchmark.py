"""Training steps/s and K.function call overhead on JAX, side by side.

Two implementations, from the same initial weights and the same batches:

* ``keras_backend``: our JAX adapter (``KERAS_BACKEND=jax``), the model code of
  tf_benchmark.py: the three digits models of examples/digits.py
  (``digits.build``) and the three compute-bound ``LARGE`` ones (MLP
  784-1024-1024-10 at batch 256, CNN on 32x32x3 at batch 64, a 256-unit RNN
  over 50 steps at batch 64, ``tf_benchmark._large_step``) on random data;
* ``raw_jax``: the same models written directly in JAX: a ``jax.jit`` train
  step (parameters donated) of ``jax.value_and_grad`` of the same loss (mean
  categorical crossentropy of the softmax, renormalised and clipped to
  ``[eps, 1 - eps]`` as ``K.categorical_crossentropy``) and plain SGD at the
  same learning rate.

Every step blocks on its result (the K side returns numpy; raw_jax converts
its loss with ``float``). Both sides report their first-step loss per
workload; a line is printed where they differ by more than 1e-4 (the same
computation from the same weights on the same batch). Call overhead: a
one-op ``K.function`` against ``jax.jit(lambda a: a * 2.0)`` with the result
converted by ``np.asarray``, both called with a numpy array. JAX runs on its
default device.

Each measurement runs in its own process and the implementations alternate
round by round. Prints a table of medians and ratios keras_backend / raw_jax
(steps/s: above 1.00x ours is faster). Anchor (issue 18): every K workload
within 1.1x of the hand-written ``jax.jit`` step. Usage::

    python benchmarks/jax_benchmark.py [--rounds 3] [--steps 200]
"""
from __future__ import print_function

import functools
import json
import os
import sys

import numpy as np

import harness
from harness import MODELS, batches, call_overhead, time_steps
from tf_benchmark import LARGE, _large_step, large_batches

IMPLS = ('keras_backend', 'raw_jax')
WORKLOADS = MODELS + tuple(LARGE)
LOSS_TOL = 1e-4


def large_weights(name):
    """The initial weights of ``tf_benchmark._large_step(K, name)`` as numpy arrays: its
    ``var()`` draws (kernels: scaled normal from RandomState(0); biases: zeros) in the
    same order."""
    rng = np.random.RandomState(0)

    def var(*shape):
        if len(shape) == 1:
            return np.zeros(shape, 'float32')
        return (rng.randn(*shape) * np.sqrt(1.0 / shape[-2])).astype('float32')
    if name == 'mlp_large':
        return [var(784, 1024), var(1024), var(1024, 1024), var(1024), var(1024, 10), var(10)]
    if name == 'cnn_large':
        return [var(3, 3, 3, 32), var(32), var(16 * 16 * 32, 10), var(10)]
    return [var(256, 256), var(256, 256), var(256), var(256, 10), var(10)]


def worker_keras_backend(steps):
    os.environ['KERAS_BACKEND'] = 'jax'
    os.environ['KERAS_BACKEND_QUIET'] = '1'
    from keras_backend import backend as K
    import digits
    result = {}
    for name in WORKLOADS:
        if name in MODELS:
            train_step = digits.build(K, name)[0]
            data, warmup = batches(name, steps), 20
        else:
            train_step = _large_step(K, name)
            data, warmup = large_batches(name, steps), 3
        xb, yb = data[0]
        result[name + '_loss0'] = float(train_step([xb, yb])[0])
        result[name] = time_steps(lambda xb, yb: train_step([xb, yb]), data, warmup=warmup)[0]
    x = K.placeholder(shape=(None, 10))
    f = K.function([x], [x * 2.0])
    result['call_us'] = call_overhead(lambda a: f([a]), np.ones((1, 10), 'float32'))
    return result


def _raw_forward(name):
    """The logits of workload ``name`` as a function of (params, x), in plain JAX."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def conv_same(x, k):
        return lax.conv_general_dilated(x, k, (1, 1), 'SAME',
                                        dimension_numbers=('NHWC', 'HWIO', 'NHWC'))

    def maxpool2(h):
        return lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), 'VALID')

    def mlp(params, x):
        h = x
        for w, b in zip(params[:-2:2], params[1:-2:2]):
            h = jax.nn.relu(jnp.dot(h, w) + b)
        return jnp.dot(h, params[-2]) + params[-1]

    def cnn(params, x):
        k, bk, w, b = params
        h = maxpool2(jax.nn.relu(conv_same(x, k) + bk))
        return jnp.dot(h.reshape(h.shape[0], -1), w) + b

    def rnn_loop(params, x):         # digits: 8 steps, unrolled by the trace
        wx, wh, bh, w, b = params
        h = jnp.zeros((x.shape[0], wh.shape[0]), x.dtype)
        for t in range(x.shape[1]):
            h = jnp.tanh(jnp.dot(x[:, t], wx) + jnp.dot(h, wh) + bh)
        return jnp.dot(h, w) + b

    def rnn_scan(params, x):         # LARGE: 50 steps
        wx, wh, bh, w, b = params

        def step(h, x_t):
            h = jnp.tanh(jnp.dot(x_t, wx) + jnp.dot(h, wh) + bh)
            return h, None
        h0 = jnp.zeros((x.shape[0], wh.shape[0]), x.dtype)
        last, _ = lax.scan(step, h0, jnp.swapaxes(x, 0, 1))
        return jnp.dot(last, w) + b

    return {'mlp': mlp, 'cnn': cnn, 'rnn': rnn_loop,
            'mlp_large': mlp, 'cnn_large': cnn, 'rnn_large': rnn_scan}[name]


def worker_raw_jax(steps):
    import jax
    import jax.numpy as jnp
    import digits
    eps = 1e-7   # keras_backend.common.epsilon()'s default, as K.categorical_crossentropy

    def make_step(forward, lr):
        def loss_fn(params, x, y):
            p = jax.nn.softmax(forward(params, x), axis=-1)
            p = jnp.clip(p / jnp.sum(p, axis=-1, keepdims=True), eps, 1. - eps)
            return jnp.mean(-jnp.sum(y * jnp.log(p), axis=-1))

        @functools.partial(jax.jit, donate_argnums=(0,))
        def train_step(params, x, y):
            loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
            return [p - lr * g for p, g in zip(params, grads)], loss
        return train_step

    result = {}
    for name in WORKLOADS:
        if name in MODELS:
            weights, lr = digits.initial_weights(name), digits.SCHEDULES[name][1]
            data, warmup = batches(name, steps), 20
        else:
            weights, lr = large_weights(name), 0.01
            data, warmup = large_batches(name, steps), 3
        train_step = make_step(_raw_forward(name), lr)
        state = [[jnp.asarray(w) for w in weights]]

        def step(xb, yb, state=state, train_step=train_step):
            state[0], loss = train_step(state[0], xb, yb)
            return float(loss)
        result[name + '_loss0'] = step(*data[0])
        result[name] = time_steps(step, data, warmup=warmup)[0]
    double = jax.jit(lambda a: a * 2.0)
    result['call_us'] = call_overhead(lambda a: np.asarray(double(a)),
                                      np.ones((1, 10), 'float32'))
    return result


def run_worker(impl, steps):
    if impl == 'keras_backend':
        return worker_keras_backend(steps)
    return worker_raw_jax(steps)


def main():
    args = harness.parse_args('JAX benchmark (see module docstring)', IMPLS)
    if args.worker:
        print(json.dumps(run_worker(args.worker, args.steps)))
        return 0
    runs = dict((impl, []) for impl in IMPLS)
    for _ in range(args.rounds):
        for impl in IMPLS:
            runs[impl].append(harness.run_worker(__file__, impl, args.steps))
    keys = WORKLOADS + ('call_us',) + tuple(k + '_loss0' for k in WORKLOADS)
    med = dict((impl, harness.medians(runs[impl], keys)) for impl in IMPLS)
    print('\nJAX %s, %d rounds x %d steps, digits batch %d (medians)\n'
          % (harness.engine_version('jax'), args.rounds, args.steps, harness.BATCH))
    print('| workload | keras_backend | raw_jax | keras_backend / raw_jax |')
    print('|---|---|---|---|')
    for k in MODELS:
        a, b = med['keras_backend'][k], med['raw_jax'][k]
        print('| %s steps/s | %.0f | %.0f | %.2fx |' % (k, a, b, a / b))
    for k in WORKLOADS[len(MODELS):]:
        a, b = med['keras_backend'][k], med['raw_jax'][k]
        print('| %s steps/s (batch %d) | %.1f | %.1f | %.2fx |' % (k, LARGE[k][1], a, b, a / b))
    a, b = med['keras_backend']['call_us'], med['raw_jax']['call_us']
    print('| K.function call (us, lower is better) | %.0f | %.0f | %.2fx |' % (a, b, a / b))
    print()
    differ = False
    for k in WORKLOADS:
        a, b = med['keras_backend'][k + '_loss0'], med['raw_jax'][k + '_loss0']
        if abs(a - b) > LOSS_TOL:
            differ = True
            print('%s: first-step losses differ: keras_backend %.6f, raw_jax %.6f'
                  % (k, a, b))
    if not differ:
        print('First-step losses agree within %g on every workload.' % LOSS_TOL)
    return 0


if __name__ == '__main__':
    sys.exit(main())
