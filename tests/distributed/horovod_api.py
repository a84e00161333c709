"""Horovod's collective API on several workers, for the distributed tests: one run per
engine checks as much as it can.

    KERAS_BACKEND=keras_backend.<engine>_backend \\
        python -m keras_backend.distribute -n 2 tests/distributed/horovod_api.py OUT

Each worker writes OUT.<rank>.npz; the test compares every entry with numpy (the
references are :func:`join_reference`, :func:`bpps_reference` and the test's own). What
each worker computes (r = its rank):

* ``sum``, ``average``, ``average_false``: ``allreduce`` of ``(r + 1) * [1, 2, 3]`` with
  ``op=Sum``, ``op=Average``, ``average=False``; ``sum_list``: a fused list (two float32
  tensors of other shapes);
* ``fp16``, ``fp32``: ``allreduce`` of ``fp_value(r)`` with ``Compression.fp16`` and without;
  ``half_held``: whether ``Compression.fp16`` sends float16 on this engine (not where its
  collective sums float16 in float32: the MPI engines, CNTK);
* ``gather``: ``allgather`` of a (2, 3) block ``10 * r + arange(6)``, ``gather_grad``: the
  gradient of ``sum(allgather(x) * W)`` for x;
* ``bcast``: ``broadcast`` of ``(r + 1) * [1, 2]`` from rank 1, ``bcast_grad``: the gradient
  of ``sum(broadcast(v) * c_r)`` for v;
* ``gather_values_f``, ``gather_values_i``: ``allgather_values`` of uneven arrays;
* ``join_k``, ``join_k_last``: K-level SGD where rank 0 has 3 batches and rank 1 has 5
  (two epochs), with ``joinable`` and ``join``; the weights and join's return values;
* ``bpps_before``, ``bpps_after``, ``bpps_iterations``: Keras 2.3.1, SGD with
  ``backward_passes_per_step=2``, weights after the first and second ``train_on_batch``;
* ``fit_fp16``, ``fit_fp32``: one ``train_on_batch`` with the fp16 and the default
  DistributedOptimizer;
* ``join_fit``, ``join_fit_mae``, ``join_fit_last``: Keras ``fit`` with ``JoinCallback``
  on the same uneven data; weights, this worker's own epoch mae (before
  ``MetricAverageCallback``), the callback's last joined rank.
"""
import sys

import numpy as np

import keras_backend.distribute as kd

LR = 0.1
BATCH = 4
BATCHES = (3, 5)       # rank 0's and rank 1's number of batches per epoch
EPOCHS = 2
W0 = (0.1 * np.arange(5)).reshape(5, 1).astype('float32')


def data():
    rng = np.random.RandomState(0)
    x = rng.randn(BATCH * sum(BATCHES), 5).astype('float32')
    y = (x.dot(rng.randn(5, 1)) + 0.5).astype('float32')
    return x, y


def batches(rank):
    """Rank ``rank``'s batches of one epoch (its own rows of :func:`data`)."""
    x, y = data()
    start = BATCH * sum(BATCHES[:rank])
    return [(x[start + i * BATCH:start + (i + 1) * BATCH],
             y[start + i * BATCH:start + (i + 1) * BATCH]) for i in range(BATCHES[rank])]


def _grad(w, b, xb, yb):
    err = xb.dot(w) + b - yb
    return 2 * xb.T.dot(err) / len(xb), 2 * err.sum(axis=0) / len(xb), np.abs(err).mean()


def join_reference():
    """The weights (w then b) after two epochs where steps 1-3 average both ranks'
    gradients and steps 4-5 take rank 1's alone; and each rank's epoch maes (float64)."""
    w, b = W0.astype('float64'), np.zeros(1)
    parts = [batches(0), batches(1)]
    maes = [[], []]
    for _ in range(EPOCHS):
        seen = [[], []]
        for i in range(max(BATCHES)):
            grads = []
            for r in (0, 1):
                if i < BATCHES[r]:
                    xb, yb = (a.astype('float64') for a in parts[r][i])
                    gw, gb, mae = _grad(w, b, xb, yb)
                    grads.append((gw, gb))
                    seen[r].append(mae)
            w = w - LR * np.mean([g[0] for g in grads], axis=0)
            b = b - LR * np.mean([g[1] for g in grads], axis=0)
        for r in (0, 1):
            maes[r].append(np.mean(seen[r]))
    return np.concatenate([w.ravel(), b.ravel()]), np.array(maes)


def bpps_reference():
    """One SGD step on the 16 rows of both ranks' first two batches."""
    x, y = data()
    x, y = x[:16].astype('float64'), y[:16].astype('float64')
    gw, gb, _ = _grad(W0.astype('float64'), np.zeros(1), x, y)
    return np.concatenate([(W0 - LR * gw).ravel(), (-LR * gb).ravel()])


def fp_value(rank):
    """The values the fp16 check reduces: some need more than float16's 11 bits."""
    return (np.linspace(-3, 3, 7) * (rank + 1) + 1.0 / 3).astype('float32')


def main(out):
    kd.init()
    import keras_backend.keras2_compat
    keras_backend.keras2_compat.install()
    import keras
    from keras import backend as K
    import keras_backend.distribute.keras2 as hvd

    r = kd.rank()
    res = {}
    # -- allreduce: op, average, fused lists, fp16 -------------------------------------
    x = K.placeholder(shape=(3,))
    u = K.placeholder(shape=(2, 2))
    f = K.function([x, u], [kd.allreduce(x, op=kd.Sum), kd.allreduce(x, op=kd.Average),
                            kd.allreduce(x, average=False)] + kd.allreduce([x, u], op=kd.Sum))
    got = f([(r + 1) * np.array([1., 2., 3.], 'float32'),
             (r + 1) * np.ones((2, 2), 'float32')])
    res['sum'], res['average'], res['average_false'] = got[:3]
    res['sum_list'] = np.concatenate([g.ravel() for g in got[3:]])
    z = K.placeholder(shape=(7,))
    f = K.function([z], [kd.allreduce(z, compression=kd.Compression.fp16),
                         kd.allreduce(z)])
    res['fp16'], res['fp32'] = f([fp_value(r)])
    res['fp16_dtype'] = np.array(str(res['fp16'].dtype))
    res['half_held'] = np.array(K.dtype(kd.Compression.fp16.compress(z)[0]) == 'float16')
    # -- allgather and broadcast, with gradients ---------------------------------------
    g = K.placeholder(shape=(2, 3))
    weights = K.constant(np.arange(12.0).reshape(4, 3))
    gathered = kd.allgather(g)
    f = K.function([g], [gathered] + K.gradients(K.sum(gathered * weights), [g]))
    res['gather'], res['gather_grad'] = f([10 * r + np.arange(6.0).reshape(2, 3)])
    v = K.variable((r + 1) * np.array([1., 2.]))
    c = K.constant((r + 1) * np.array([1., 3.]))
    b = kd.broadcast(v, root_rank=1)
    f = K.function([], [b] + K.gradients(K.sum(b * c), [v]))
    res['bcast'], res['bcast_grad'] = f([])
    res['gather_values_f'] = kd.allgather_values(np.arange(r + 2.0) * (r + 1))
    res['gather_values_i'] = kd.allgather_values(np.full((r + 1, 2), r, np.int64))
    res['bcast_values'] = kd.broadcast_values(np.array([r + 5.0]), root=1)
    # -- join in a K-level loop ----------------------------------------------------------
    w = K.variable(W0)
    bias = K.variable(np.zeros(1, 'float32'))
    xi = K.placeholder(shape=(BATCH, 5))
    yi = K.placeholder(shape=(BATCH, 1))
    loss = K.mean(K.square(K.dot(xi, w) + bias - yi))
    gw, gb = kd.allreduce(K.gradients(loss, [w, bias]))
    step = kd.joinable(K.function([xi, yi], [loss], updates=[K.update_sub(w, LR * gw),
                                                              K.update_sub(bias, LR * gb)]))
    last = []
    for _ in range(EPOCHS):
        for xb, yb in batches(r):
            step([xb, yb])
        last.append(kd.join())
    res['join_k'] = np.concatenate([K.get_value(w).ravel(), K.get_value(bias).ravel()])
    res['join_k_last'] = np.array(last)

    # -- Keras 2.3.1: backward_passes_per_step, fp16, fit with JoinCallback -------------
    def model(optimizer, metrics=()):
        m = keras.models.Sequential([keras.layers.Dense(1, input_shape=(5,))])
        m.set_weights([W0, np.zeros(1, 'float32')])
        m.compile(optimizer, 'mse', metrics=list(metrics))
        return m

    def flat(m):
        return np.concatenate([a.ravel() for a in m.get_weights()])

    X, Y = data()
    mine = slice(8 * r, 8 * r + 8)
    m = model(hvd.DistributedOptimizer(keras.optimizers.SGD(LR), backward_passes_per_step=2))
    m.train_on_batch(X[mine][:4], Y[mine][:4])
    res['bpps_before'] = flat(m)
    it = [int(K.get_value(m.optimizer.iterations))]
    m.train_on_batch(X[mine][4:], Y[mine][4:])
    res['bpps_after'] = flat(m)
    it.append(int(K.get_value(m.optimizer.iterations)))
    res['bpps_iterations'] = np.array(it)
    for key, comp in (('fit_fp16', hvd.Compression.fp16), ('fit_fp32', hvd.Compression.none)):
        m = model(hvd.DistributedOptimizer(keras.optimizers.SGD(LR), compression=comp))
        m.train_on_batch(X[mine], Y[mine])
        res[key] = flat(m)

    class Record(keras.callbacks.Callback):
        maes = []

        def on_epoch_end(self, epoch, logs=None):
            self.maes.append(float(logs['mae']))

    m = model(hvd.DistributedOptimizer(keras.optimizers.SGD(LR)), metrics=['mae'])
    xs = np.concatenate([xb for xb, _ in batches(r)])
    ys = np.concatenate([yb for _, yb in batches(r)])
    join_cb = hvd.JoinCallback()
    m.fit(xs, ys, batch_size=BATCH, epochs=EPOCHS, shuffle=False, verbose=0,
          callbacks=[join_cb, Record(), hvd.MetricAverageCallback()])
    res['join_fit'] = flat(m)
    res['join_fit_mae'] = np.array(Record.maes)
    res['join_fit_last'] = np.array(join_cb.last_joined)
    kd.barrier()
    np.savez('%s.%d.npz' % (out, r), **res)


if __name__ == '__main__':
    main(sys.argv[1])
