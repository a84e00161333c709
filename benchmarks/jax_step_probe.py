"""What a Keras 2.3.1 training step costs on our JAX adapter, and how much of it is the
wait for the loss (issue 38: the device-to-host copy per step on a GPU).

For one realistic model of ``keras2_benchmark.py`` (``--model``, on ``--scale`` times its
samples' batch size), Keras 2.3.1's own train function is built, then timed per step
(median over ``--steps`` after 5 warm-ups) two ways on the same batch:

* ``sync``: ``model.train_function(ins)``, as ``fit`` calls it: the outputs come back as
  numpy values (a device-to-host copy and a wait for the step, every step);
* ``async``: the same compiled program through the Function's own dispatch
  (``_call_jitted``), the variables written back, the loss left on the device; one wait
  after the last step (JAX's asynchronous dispatch overlaps the next step's Python work
  with this step's device work).

Their difference is what a step pays for handing its loss to Keras as a number.

    PYTHONPATH=.venv/keras2:. KERAS_BACKEND=keras_backend.jax_backend \\
        .venv/bin/python benchmarks/jax_step_probe.py --model lstm256
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--model', default='lstm256')
    p.add_argument('--steps', type=int, default=30)
    args = p.parse_args()
    import keras_backend.keras2_compat
    keras_backend.keras2_compat.install()
    import keras
    import keras2_benchmark as kb
    import jax
    keras.backend.set_floatx('float32')
    keras.backend.set_image_data_format('channels_last')
    model = kb.build_realistic(args.model, keras, False)
    batch = kb.REALISTIC[args.model][1]
    x, y, loss = kb.realistic_data(args.model, batch)
    model.compile(optimizer='adam', loss=loss)
    model._make_train_function()
    f = model.train_function
    ins = [x, y, np.ones(len(x), 'float32')]
    if model._uses_dynamic_learning_phase():
        ins.append(1)

    def sync():
        f(ins)

    fed = [np.asarray(v) for v in ins[:3]]
    phase = 1 if model._uses_dynamic_learning_phase() else None
    last = []

    def async_():
        outs, news = f._call_jitted(fed, phase)
        for v, n in zip(f._updated, news):
            v._value = n
        last[:] = outs

    results = {}
    for name, step in (('sync', sync), ('async', async_), ('sync', sync), ('async', async_)):
        for _ in range(5):
            step()
        jax.block_until_ready(last) if last else None
        begin = time.perf_counter()
        for _ in range(args.steps):
            step()
        jax.block_until_ready(last) if last else None
        results.setdefault(name, []).append((time.perf_counter() - begin) / args.steps * 1e3)
    print('%s on %s, batch %d: ms per step, sync %s, async %s'
          % (args.model, jax.devices()[0].platform, batch,
             ' / '.join('%.2f' % v for v in results['sync']),
             ' / '.join('%.2f' % v for v in results['async'])))


if __name__ == '__main__':
    main()
