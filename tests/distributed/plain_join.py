"""Horovod's form of join: plain ``K.function`` steps holding an allreduce, then
``kd.join()`` on a worker with fewer batches (rank 1: 2 steps, rank 0: 5).

    python -m keras_backend.distribute -n 2 tests/distributed/plain_join.py OUT

Each worker writes OUT.<rank>.join (the time it called join) before calling it.
"""
import sys
import time

import numpy as np

import keras_backend.distribute as kd

kd.init()
from keras_backend import backend as K  # noqa: E402

out = sys.argv[1]
w = K.variable(np.ones((3, 1), 'float32'))
x = K.placeholder(shape=(2, 3))
loss = K.sum(K.dot(x, w))
grad = kd.allreduce(K.gradients(loss, [w]))[0]
step = K.function([x], [loss], updates=[K.update_sub(w, 0.1 * grad)])
for _ in range(2 if kd.rank() == 1 else 5):
    step([np.ones((2, 3), 'float32')])
with open('%s.%d.join' % (out, kd.rank()), 'w') as f:
    f.write(repr(time.time()))
kd.join()
