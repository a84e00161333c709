"""Keras 2.3.1 ``fit`` on several workers, for the distributed tests.

    KERAS_BACKEND=keras_backend.<engine>_backend \\
        python -m keras_backend.distribute -n N tests/distributed/keras_fit.py OUT

A small regression model, Adam with ``clipnorm`` (the gradients are averaged before the
clipping), the global batch split with ``kd.shard``; worker 1 starts from other weights,
which BroadcastGlobalVariablesCallback replaces with worker 0's. Writes OUT.<rank>.npz
(the final weights, the epoch losses averaged by MetricAverageCallback); worker 0 also
saves the model to OUT.h5. Where tensorboard and tensorboardX are installed, Keras'
TensorBoard callback writes every rank's epochs (``ranks='all'``): rank 0 into OUT.tb, rank r
into OUT.tb/rank_<r>.
"""
import sys

import numpy as np

import keras_backend.distribute as kd

kd.init()
import keras_backend.keras2_compat  # noqa: E402

keras_backend.keras2_compat.install()   # Keras 2.3.1 on Python 3.10+
import keras  # noqa: E402

out = sys.argv[1]
GLOBAL_BATCH, EPOCHS = 16, 3
rng = np.random.RandomState(0)
X = rng.randn(64, 5).astype('float32')
Y = np.tanh(X.dot(rng.randn(5, 2))).astype('float32')

model = keras.models.Sequential([
    keras.layers.Dense(8, activation='tanh', input_shape=(5,)),
    keras.layers.Dense(2)])
init = np.random.RandomState(1 if kd.rank() == 0 else 2)
model.set_weights([init.uniform(-0.5, 0.5, w.shape).astype('float32')
                   for w in model.get_weights()])
model.compile(kd.DistributedOptimizer(keras.optimizers.Adam(0.05, clipnorm=0.5)), 'mse',
              metrics=['mae'])
boards = []
try:
    import tensorboard  # noqa: F401
    import tensorboardX  # noqa: F401
    boards = [keras.callbacks.TensorBoard(out + '.tb', ranks='all', write_graph=False)]
except ImportError:
    pass
history = model.fit(kd.shard(X, GLOBAL_BATCH), kd.shard(Y, GLOBAL_BATCH),
                    batch_size=GLOBAL_BATCH // kd.size(), epochs=EPOCHS, shuffle=False,
                    verbose=0, callbacks=[kd.MetricAverageCallback(),
                                          kd.BroadcastGlobalVariablesCallback(0)] + boards)
np.savez('%s.%d.npz' % (out, kd.rank()),
         weights=np.concatenate([w.ravel() for w in model.get_weights()]),
         loss=np.array(history.history['loss']), mae=np.array(history.history['mae']))
if kd.rank() == 0:
    model.save(out + '.h5')
kd.barrier()
