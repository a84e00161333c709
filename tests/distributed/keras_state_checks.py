"""Keras 2.3.1 models against the State's checks, in one process, on one engine.

    KERAS_BACKEND=keras_backend.<engine>_backend python tests/distributed/keras_state_checks.py DIR

Prints one JSON line: for each check, what was seen.

* ``optimizer``: an SGD commit restored into the same network compiled with Adam;
* ``shape``: a commit restored into a network with another layer size;
  each: the error's type and message, and whether the model's and the optimizer's
  weights stayed as they were (max abs change);
* ``accumulation``: SGD with ``DistributedOptimizer(backward_passes_per_step=2)``,
  3 steps, commit, 3 more steps; a new model restored from the commit takes the same 3
  steps: the max abs difference of the final weights, and the restored pass counter;
* ``rate``: the learning rate set by ``K.set_value`` before a commit, after a restore.
"""
import json
import os
import sys

import numpy as np

import keras_backend.distribute as kd

kd.init()
import keras_backend.keras2_compat  # noqa: E402

keras_backend.keras2_compat.install()
import keras  # noqa: E402
from keras import backend as K  # noqa: E402

folder = sys.argv[1]
rng = np.random.RandomState(0)
X = rng.randn(16, 5).astype('float32')
Y = rng.randn(16, 2).astype('float32')


def network(hidden=8):
    model = keras.models.Sequential([
        keras.layers.Dense(hidden, activation='tanh', input_shape=(5,)),
        keras.layers.Dense(2)])
    init = np.random.RandomState(1)
    model.set_weights([init.uniform(-0.5, 0.5, w.shape).astype('float32')
                       for w in model.get_weights()])
    return model


def weights_of(model):
    return [np.array(w) for w in model.get_weights()] + \
        [np.array(w) for w in model.optimizer.get_weights()]


def refused(model, where):
    model.train_on_batch(X[:4], Y[:4])        # weights and slots to compare
    before = weights_of(model)
    try:
        kd.State(where, model=model).restore(verbose=False)
        error = None
    except Exception as e:
        error = '%s: %s' % (type(e).__name__, e)
    after = weights_of(model)
    return {'error': error, 'changed': max(float(np.abs(a - b).max())
                                           for a, b in zip(before, after))}


out = {}
sgd = network()
sgd.compile(keras.optimizers.SGD(0.1, momentum=0.9), 'mse')
sgd.train_on_batch(X[:4], Y[:4])
kd.State(os.path.join(folder, 'sgd'), model=sgd, background=False).commit()
adam = network()
adam.compile(keras.optimizers.Adam(0.01), 'mse')
out['optimizer'] = refused(adam, os.path.join(folder, 'sgd'))
wide = network(hidden=9)
wide.compile(keras.optimizers.SGD(0.1, momentum=0.9), 'mse')
out['shape'] = refused(wide, os.path.join(folder, 'sgd'))


def accumulating():
    model = network()
    model.compile(kd.DistributedOptimizer(keras.optimizers.SGD(0.1, momentum=0.5),
                                          backward_passes_per_step=2), 'mse')
    return model


straight = accumulating()
for i in range(6):
    straight.train_on_batch(X[2 * i:2 * i + 2], Y[2 * i:2 * i + 2])
first = accumulating()
for i in range(3):                            # an odd step: one pass summed, not applied
    first.train_on_batch(X[2 * i:2 * i + 2], Y[2 * i:2 * i + 2])
K.set_value(first.optimizer.lr, 0.05)
K.set_value(first.optimizer.lr, 0.1)
kd.State(os.path.join(folder, 'acc'), model=first, background=False).commit()
again = accumulating()
again.train_on_batch(X[:2], Y[:2])            # other sums and counter, to be replaced
state = kd.State(os.path.join(folder, 'acc'), model=again)
state.restore(verbose=False)
passes = float(K.get_value(again.optimizer._kb_passes_done))
for i in range(3, 6):
    again.train_on_batch(X[2 * i:2 * i + 2], Y[2 * i:2 * i + 2])
out['accumulation'] = {
    'difference': max(float(np.abs(a - b).max()) for a, b in
                      zip(straight.get_weights(), again.get_weights())),
    'passes': passes,
    'iterations': int(K.get_value(again.optimizer.iterations))}
rate = network()
rate.compile(keras.optimizers.SGD(0.1), 'mse')
K.set_value(rate.optimizer.lr, 0.025)          # as ReduceLROnPlateau does
kd.State(os.path.join(folder, 'rate'), model=rate, background=False).commit()
fresh = network()
fresh.compile(keras.optimizers.SGD(0.1), 'mse')
kd.State(os.path.join(folder, 'rate'), model=fresh).restore(verbose=False)
out['rate'] = float(K.get_value(fresh.optimizer.lr))
print(json.dumps(out))
