"""Theano/PyTensor: steps/s and first-call compile time, ours against raw PyTensor.

* ``keras_backend``: the digits models of examples/digits.py on our Theano
  adapter (``KERAS_BACKEND=theano``);
* ``raw_pytensor``: the same models written directly in PyTensor (``shared``,
  ``grad``, ``function`` with updates; the CNN as strided-slice patches and
  ``tensordot``, since PyTensor has no CNN op), compiled with the C linker,
  with the BLAS PyTensor finds by itself (none, from PyPI);
* ``raw_pytensor_blas``: the same raw PyTensor, linked to the OpenBLAS that
  keras_backend gives PyTensor (:mod:`keras_backend.theano_backend.blas`), so that the
  comparison with ours is like for like.

Both start from the same weights and run the same batches. Compile time is
measured cold (a fresh, empty compile cache per process) and warm (a second
process reusing that cache). Implementations alternate, each in its own
process. Usage::

    python benchmarks/theano_benchmark.py [--rounds 3] [--steps 200]
"""
from __future__ import print_function

import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

import harness
from harness import MODELS, batches, time_steps

IMPLS = ('keras_backend', 'raw_pytensor', 'raw_pytensor_blas')


def raw_pytensor_build(name):
    """Return (train_step, compile_seconds) for the raw PyTensor version of ``name``."""
    import pytensor
    import pytensor.tensor as pt
    import digits
    params = [pytensor.shared(w) for w in digits.initial_weights(name)]
    lr = np.float32(digits.SCHEDULES[name][1])
    y = pt.matrix('y', dtype='float32')
    if name == 'mlp':
        x = pt.matrix('x', dtype='float32')
        w1, b1, w2, b2 = params
        logits = pt.dot(pt.maximum(pt.dot(x, w1) + b1, 0), w2) + b2
    elif name == 'cnn':
        x = pt.tensor4('x', dtype='float32')                       # (batch, 8, 8, 1)
        k, bk, w, b = params
        xp = pt.zeros((x.shape[0], 10, 10, 1), dtype='float32')
        xp = pt.set_subtensor(xp[:, 1:9, 1:9, :], x)
        patches = pt.stack([xp[:, i:i + 8, j:j + 8, :] for i in range(3) for j in range(3)],
                           axis=3)                 # (batch, 8, 8, 9, 1)
        h = pt.tensordot(patches, k.reshape((9, 1, 16)), axes=[[3, 4], [0, 1]]) + bk
        h = pt.maximum(h, 0)                       # (batch, 8, 8, 16)
        h = pt.maximum(pt.maximum(h[:, 0::2, 0::2], h[:, 0::2, 1::2]),
                       pt.maximum(h[:, 1::2, 0::2], h[:, 1::2, 1::2]))
        logits = pt.dot(h.reshape((h.shape[0], 256)), w) + b
    else:
        x = pt.tensor3('x', dtype='float32')
        wx, wh, bh, w, b = params

        def step(x_t, h):
            return pt.tanh(pt.dot(x_t, wx) + pt.dot(h, wh) + bh)
        h0 = pt.zeros((x.shape[0], 32), dtype='float32')
        hs = pytensor.scan(step, sequences=[x.dimshuffle(1, 0, 2)], outputs_info=[h0],
                           return_updates=False)
        logits = pt.dot(hs[-1], w) + b
    probs = pt.special.softmax(logits, axis=-1)
    # Keras' categorical crossentropy, as the model computes it: renormalise, clip, log.
    probs = probs / pt.sum(probs, axis=-1, keepdims=True)
    loss = -pt.mean(pt.sum(y * pt.log(pt.clip(probs, 1e-7, 1 - 1e-7)), axis=-1))
    grads = pytensor.grad(loss, params)
    mode = pytensor.compile.mode.Mode(linker='cvm', optimizer='fast_run')
    start = time.perf_counter()
    fn = pytensor.function([x, y], [loss], updates=[(p, p - lr * g) for p, g in zip(params, grads)],
                           mode=mode)
    return (lambda xb, yb: fn(xb, yb)), start


def run_worker(impl, steps):
    result = {}
    if impl == 'keras_backend':
        os.environ['KERAS_BACKEND'] = 'theano'
        os.environ['KERAS_BACKEND_QUIET'] = '1'
        from keras_backend import backend as K
        import digits
    elif impl == 'raw_pytensor_blas':
        import pytensor
        floatx = pytensor.config.floatX
        # links the OpenBLAS (importing it loads the adapter, which sets floatX: put it back)
        from keras_backend.theano_backend import pytensor_engine   # noqa: F401
        pytensor.config.floatX = floatx
    for name in MODELS:
        data = batches(name, steps)
        if impl == 'keras_backend':
            start = time.perf_counter()
            train, _, _ = digits.build(K, name)
            step = lambda xb, yb, train=train: train([xb, yb])
        else:
            step, start = raw_pytensor_build(name)
        step(*data[0])
        result[name + '_compile_s'] = time.perf_counter() - start
        result[name] = time_steps(step, data)[0]
    return result


def main():
    args = harness.parse_args('Theano benchmark (see module docstring)', IMPLS)
    if args.worker:
        print(json.dumps(run_worker(args.worker, args.steps)))
        return 0
    runs = dict(((impl, c), []) for impl in IMPLS for c in ('cold', 'warm'))
    for _ in range(args.rounds):
        for impl in IMPLS:
            cache = tempfile.mkdtemp(prefix='ptcache-')
            env = dict(os.environ, PYTENSOR_FLAGS='compiledir=%s' % cache)
            try:
                for cond in ('cold', 'warm'):
                    runs[(impl, cond)].append(harness.run_worker(__file__, impl, args.steps, env))
            finally:
                shutil.rmtree(cache, ignore_errors=True)
    keys = MODELS + tuple(m + '_compile_s' for m in MODELS)
    med = dict((key, harness.medians(r, keys)) for key, r in runs.items())
    print('\nPyTensor %s, %d rounds x %d steps, batch %d (medians)\n'
          % (harness.engine_version('pytensor'), args.rounds, args.steps, harness.BATCH))
    print('| model | keras_backend steps/s | raw PyTensor steps/s (no BLAS / BLAS) '
          '| step time ratio ours / raw (no BLAS / BLAS) '
          '| compile cold ours / raw / raw BLAS (s) | compile warm ours / raw / raw BLAS (s) |')
    print('|---|---|---|---|---|---|')
    ours_c, raw_c, rawb_c = [med[(i, 'cold')] for i in IMPLS]
    ours_w, raw_w, rawb_w = [med[(i, 'warm')] for i in IMPLS]
    for m in MODELS:
        c = m + '_compile_s'
        print('| %s | %.0f | %.0f / %.0f | %.2fx / %.2fx | %.1f / %.1f / %.1f | %.1f / %.1f / %.1f |'
              % (m, ours_w[m], raw_w[m], rawb_w[m], raw_w[m] / ours_w[m], rawb_w[m] / ours_w[m],
                 ours_c[c], raw_c[c], rawb_c[c], ours_w[c], raw_w[c], rawb_w[c]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
