"""A K-level training run for the distributed tests: linear regression, plain SGD on
the gradients averaged by keras_backend.distribute.allreduce.

    python -m keras_backend.distribute -n N tests/distributed/k_sgd.py OUT [MODE]

Writes the final weights of this worker to OUT.<rank>.npy. MODE: 'ok' (default),
'exit' (rank 1 exits with status 3 after the second step), 'hang' (rank 1 sleeps
forever after the second step).
"""
import sys
import time

import numpy as np

import keras_backend.distribute as kd

kd.init()
from keras_backend import backend as K  # noqa: E402

out = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 else 'ok'
GLOBAL_BATCH, EPOCHS = 16, 3
rng = np.random.RandomState(0)
X = rng.randn(64, 5).astype('float32')
Y = (X.dot(rng.randn(5, 1)) + 0.5).astype('float32')

w = K.variable(np.zeros((5, 1)), dtype='float32')
b = K.variable(np.zeros((1,)), dtype='float32')
kd.broadcast_variables([w, b], root=0)
x = K.placeholder(shape=(None, 5))
y = K.placeholder(shape=(None, 1))
loss = K.mean(K.square(K.dot(x, w) + b - y))
gw, gb = kd.allreduce(K.gradients(loss, [w, b]), average=True)
step = K.function([x, y], [loss], updates=[K.update_sub(w, 0.1 * gw),
                                           K.update_sub(b, 0.1 * gb)])
xs, ys = kd.shard(X, GLOBAL_BATCH), kd.shard(Y, GLOBAL_BATCH)
local = GLOBAL_BATCH // kd.size()
steps = 0
for epoch in range(EPOCHS):
    losses = []
    for i in range(0, len(xs), local):
        losses.append(step([xs[i:i + local], ys[i:i + local]])[0])
        steps += 1
        if steps == 2 and kd.rank() == 1 and mode == 'exit':
            sys.exit(3)
        if steps == 2 and kd.rank() == 1 and mode == 'hang':
            while True:
                time.sleep(1)
    mean_loss = kd.allreduce_values(float(np.mean(losses)))
kd.barrier()
np.save('%s.%d.npy' % (out, kd.rank()),
        np.concatenate([K.get_value(w).ravel(), K.get_value(b).ravel()]))
