"""A K-level training run for the distributed tests: linear regression, plain SGD on
the gradients averaged by keras_backend.distribute.allreduce.

    python -m keras_backend.distribute -n N tests/distributed/k_sgd.py OUT [MODE]

Writes the final weights of this worker to OUT.<rank>.npy. MODE: 'ok' (default),
'exit' (worker 1 exits with status 3 after its second step), 'hang' (worker 1 writes
the time to OUT.hang after its second step, then sleeps for ever), 'stall' (worker 1 sleeps
5 s before its third step: the stall check, set by the environment, names it) or
'stall-off' (the same with 3 s, and ``init(stall_check=0)``: no stall line). Each worker also writes
the rendezvous its engine used to OUT.<rank>.rendezvous (TF_CONFIG or the coordinator
address; empty for the MPI engines) and to OUT.<rank>.placement its placement and what it
was started with (JSON: rank, size, local_rank, local_size, the network interface variables,
HOSTNAME, the working directory, the collective path).
:func:`numpy_reference` gives the weights one process reaches on the global batches.
"""
import sys
import time

import numpy as np

GLOBAL_BATCH, EPOCHS, LR = 16, 3, 0.1


def data():
    rng = np.random.RandomState(0)
    x = rng.randn(64, 5).astype('float32')
    y = (x.dot(rng.randn(5, 1)) + 0.5).astype('float32')
    return x, y


def numpy_reference():
    """The weights (w then b, flat) after the same SGD in one process, in float64."""
    x, y = data()
    x, y = x.astype('float64'), y.astype('float64')
    w, b = np.zeros((5, 1)), np.zeros((1,))
    for _ in range(EPOCHS):
        for i in range(0, len(x), GLOBAL_BATCH):
            xb, yb = x[i:i + GLOBAL_BATCH], y[i:i + GLOBAL_BATCH]
            err = xb.dot(w) + b - yb                       # d mean(err^2) = 2 err / n
            w = w - LR * 2 * xb.T.dot(err) / len(xb)
            b = b - LR * 2 * err.sum(axis=0) / len(xb)
    return np.concatenate([w.ravel(), b.ravel()])


def main(out, mode):
    import keras_backend.distribute as kd
    kd.init(stall_check=0 if mode == 'stall-off' else None)
    import os
    with open('%s.%d.rendezvous' % (out, kd.rank()), 'w') as f:
        f.write(os.environ.get('TF_CONFIG', '') or
                os.environ.get('KERAS_BACKEND_DISTRIBUTE_COORDINATOR', ''))
    import json
    with open('%s.%d.placement' % (out, kd.rank()), 'w') as f:
        json.dump({'rank': kd.rank(), 'size': kd.size(), 'local_rank': kd.local_rank(),
                   'local_size': kd.local_size(),
                   'interface': os.environ.get('KERAS_BACKEND_DISTRIBUTE_INTERFACE'),
                   'btl_tcp_if_include': os.environ.get('OMPI_MCA_btl_tcp_if_include'),
                   'oob_tcp_if_include': os.environ.get('OMPI_MCA_oob_tcp_if_include'),
                   'hostname': os.environ.get('HOSTNAME'), 'cwd': os.getcwd(),
                   'collective_path': kd.collective_path()}, f)
    from keras_backend import backend as K

    X, Y = data()
    # worker 1 starts elsewhere: broadcast_variables gives it worker 0's values
    start = 0.0 if kd.rank() == 0 else 1.0
    w = K.variable(np.full((5, 1), start), dtype='float32')
    b = K.variable(np.full((1,), start), dtype='float32')
    kd.broadcast_variables([w, b], root=0)
    x = K.placeholder(shape=(None, 5))
    y = K.placeholder(shape=(None, 1))
    loss = K.mean(K.square(K.dot(x, w) + b - y))
    gw, gb = kd.allreduce(K.gradients(loss, [w, b]), average=True)
    step = K.function([x, y], [loss], updates=[K.update_sub(w, LR * gw),
                                               K.update_sub(b, LR * gb)])
    xs, ys = kd.shard(X, GLOBAL_BATCH), kd.shard(Y, GLOBAL_BATCH)
    local = GLOBAL_BATCH // kd.size()
    steps = 0
    for _ in range(EPOCHS):
        losses = []
        for i in range(0, len(xs), local):
            if steps == 2 and kd.rank() == 1 and mode in ('stall', 'stall-off'):
                time.sleep(5.0 if mode == 'stall' else 3.0)   # the others wait in step 3
            losses.append(step([xs[i:i + local], ys[i:i + local]])[0])
            steps += 1
            if steps == 2 and kd.rank() == 1 and mode == 'exit':
                sys.exit(3)
            if steps == 2 and kd.rank() == 1 and mode == 'hang':
                with open(out + '.hang', 'w') as f:
                    f.write(repr(time.time()))
                while True:
                    time.sleep(1)
        kd.allreduce_values(float(np.mean(losses)))
    kd.barrier()
    np.save('%s.%d.npy' % (out, kd.rank()),
            np.concatenate([K.get_value(w).ravel(), K.get_value(b).ravel()]))


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else 'ok')
