"""Training steps/s and K.function call overhead on CNTK, side by side.

Two implementations of the three digits models (examples/digits.py), from the
same initial weights and the same batches:

* ``keras_backend``: our CNTK adapter, the model code of ``examples/digits.build``
  (plain SGD from ``K.gradients`` and ``K.function(..., updates=...)``);
* ``raw_cntk``: the models written directly in CNTK 2.7: inputs on CNTK's
  dynamic batch axis, ``C.cross_entropy_with_softmax`` and ``C.Trainer`` with
  a ``C.sgd`` learner at the digits learning rate (CNTK's default learning
  parameter schedule steps with the batch-mean gradient, as the digits models
  do: the final losses printed side by side agree).

Each measurement runs in its own process and the implementations alternate
round by round. Prints a markdown table of medians and the ratio of step
times (keras_backend / raw CNTK; 1.00x means equal, lower is better), and the
final loss of each so that the two can be seen computing the same thing.
Run it with the CNTK interpreter (tools/setup_cntk_env.sh)::

    /opt/cntk-venv/bin/python benchmarks/cntk_benchmark.py [--rounds 3] [--steps 200]
"""
from __future__ import print_function

import json
import os
import sys
import warnings

import numpy as np

import harness
from harness import MODELS, batches, call_overhead, time_steps

IMPLS = ('keras_backend', 'raw_cntk')


def _rate_and_loss(step, data):
    rate, loss = time_steps(step, data)
    return rate, float(loss)


def worker_keras_backend(steps):
    os.environ['KERAS_BACKEND'] = 'cntk'
    os.environ['KERAS_BACKEND_QUIET'] = '1'
    from keras_backend import backend as K
    K.set_image_data_format('channels_last')
    import digits
    result = {}
    for name in MODELS:
        train_step, _, _ = digits.build(K, name)
        data = batches(name, steps)
        result[name], result[name + '_loss'] = _rate_and_loss(
            lambda xb, yb: train_step([xb, yb])[0], data)
    x = K.placeholder(shape=(None, 10))
    f = K.function([x], [x * 2.0])
    result['call_us'] = call_overhead(lambda a: f([a]), np.ones((1, 10), 'float32'))
    return result


def raw_model(C, name, params):
    """(features input, logits) of model ``name`` written directly in CNTK."""
    if name == 'mlp':
        w1, b1, w2, b2 = params
        x = C.input_variable(64)
        h = C.relu(C.times(x, w1) + b1)
        return x, C.times(h, w2) + b2
    if name == 'cnn':
        k, bk, w, b = params  # k: (16, 1, 3, 3), CNTK's (out, in, rows, cols)
        x = C.input_variable((8, 8, 1))
        h = C.convolution(k, C.transpose(x, (2, 0, 1)), auto_padding=[False, True, True])
        h = C.relu(h + C.reshape(bk, (16, 1, 1)))
        h = C.pooling(h, C.MAX_POOLING, (2, 2), strides=(2, 2))
        h = C.reshape(C.transpose(h, (1, 2, 0)), (256,))  # (rows, cols, channels) order
        return x, C.times(h, w) + b
    wx, wh, bh, w, b = params
    x = C.input_variable((8, 8))
    h = None
    for t in range(8):
        z = C.times(x[t], wx) + bh
        h = C.tanh(z if h is None else z + C.times(h, wh))
    return x, C.times(h, w) + b


def worker_raw_cntk(steps):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        import cntk as C
    import digits
    result = {}
    for name in MODELS:
        init = digits.initial_weights(name)
        if name == 'cnn':
            init[0] = np.ascontiguousarray(init[0].transpose(3, 2, 0, 1))
        params = [C.parameter(init=v) for v in init]
        x, logits = raw_model(C, name, params)
        y = C.input_variable(10)
        loss = C.cross_entropy_with_softmax(logits, y)
        lr = C.learning_parameter_schedule(digits.SCHEDULES[name][1])
        trainer = C.Trainer(logits, (loss, None), [C.sgd(params, lr)])

        def step(xb, yb, trainer=trainer, x=x, y=y):
            trainer.train_minibatch({x: xb, y: yb})
            return trainer.previous_minibatch_loss_average
        result[name], result[name + '_loss'] = _rate_and_loss(step, batches(name, steps))
    a = C.input_variable(10, dynamic_axes=[])
    double = a * 2.0
    result['call_us'] = call_overhead(lambda v: double.eval({a: v}), np.ones((1, 10), 'float32'))
    return result


def run_worker(impl, steps):
    if impl == 'keras_backend':
        return worker_keras_backend(steps)
    return worker_raw_cntk(steps)


def main():
    args = harness.parse_args('CNTK benchmark (see module docstring)', IMPLS)
    if args.worker:
        print(json.dumps(run_worker(args.worker, args.steps)))
        return 0
    runs = dict((impl, []) for impl in IMPLS)
    for _ in range(args.rounds):
        for impl in IMPLS:
            runs[impl].append(harness.run_worker(__file__, impl, args.steps))
    keys = MODELS + tuple(m + '_loss' for m in MODELS) + ('call_us',)
    med = dict((impl, harness.medians(runs[impl], keys)) for impl in IMPLS)
    ours, raw = med['keras_backend'], med['raw_cntk']
    print('\nCNTK %s, %d rounds x %d steps, batch %d (medians)\n'
          % (harness.engine_version('cntk'), args.rounds, args.steps, harness.BATCH))
    print('| metric | keras_backend | raw CNTK | step time keras_backend / raw CNTK |')
    print('|---|---|---|---|')
    for k in MODELS:
        print('| %s steps/s (final loss) | %.0f (%.4f) | %.0f (%.4f) | %.2fx |'
              % (k, ours[k], ours[k + '_loss'], raw[k], raw[k + '_loss'], raw[k] / ours[k]))
    print('| function call (us, lower is better) | %.0f | %.0f | %.2fx |'
          % (ours['call_us'], raw['call_us'], ours['call_us'] / raw['call_us']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
