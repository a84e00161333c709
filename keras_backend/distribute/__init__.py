"""Data-parallel training on several processes, on each engine's own collectives.

The names are Horovod's (``horovod.keras``), so that a Keras 2 user who scaled with
Horovod knows them::

    import keras_backend.distribute as kd
    kd.init()                                  # before anything runs an engine op
    import keras
    model = ...
    model.compile(kd.DistributedOptimizer(keras.optimizers.Adam(1e-3)), 'mse')
    x_mine, y_mine = kd.shard(x, 64), kd.shard(y, 64)   # this worker's rows of each
    model.fit(x_mine, y_mine, batch_size=64 // kd.size(), shuffle=False,   # global batch
              callbacks=[kd.BroadcastGlobalVariablesCallback(0),
                         kd.MetricAverageCallback()],
              verbose=1 if kd.rank() == 0 else 0)

and it runs as ``python -m keras_backend.distribute -n 2 train.py`` (the launcher,
:mod:`keras_backend.distribute.launcher`), ``mpirun -np 2 python train.py`` or ``srun -n 2
python train.py`` (:mod:`keras_backend.distribute.rendezvous`: rank, size and, for
TensorFlow and JAX, the workers' addresses). Started without the launcher (one process),
every function here is the identity: ``size() == 1``, ``allreduce(x) is x``.

Which engine collective does the work (``docs/semantics.md``, "Training on several
processes"):

* TensorFlow: ``CollectiveReduceV2`` in the adapter's graph, its runtime started by
  ``tf.distribute.MultiWorkerMirroredStrategy`` from ``TF_CONFIG``;
* Theano 1.0.5 / PyTensor: ``MPI_Allreduce`` (mpi4py) inside an engine ``Op`` whose
  gradient is the same allreduce, under ``mpiexec``;
* CNTK 2.7: its own MPI communicator (``Communicator.aggregate_in_place``) inside a
  ``UserFunction``, under ``mpiexec``;
* JAX: ``lax.psum`` over the processes of ``jax.distributed`` (gloo CPU collectives).

Every worker must make the same collective calls in the same order (build the same
model, call ``allreduce_values`` as often); a worker that dies or hangs makes the others
raise :class:`WorkerLost` (after at most ``timeout`` seconds for a hung one).

The package is laid out by what each module holds: :mod:`.group` (the process group:
``init``, ``rank``, ``size``, ``WorkerLost``), :mod:`.horovod` (the collectives, ``join``,
``shard``), :mod:`.horovod_keras` (``DistributedOptimizer`` and the callbacks, in
:mod:`.keras2`), :mod:`.elastic` (``State``), :mod:`.launcher`, :mod:`.rendezvous`,
:mod:`.stall`, :mod:`.ray`.
"""
from .group import (COLLECTIVES, DEFAULT_TIMEOUT, ENGINES, ENV_COLLECTIVES,  # noqa: F401
                    ENV_COORDINATOR, ENV_LOCAL_RANK, ENV_RANK, ENV_SIZE, ENV_TIMEOUT,
                    WorkerLost, barrier, collective_path, engine, init, is_initialized,
                    local_rank, local_size, rank, shutdown, size)
from .group import (_State, _adapter, _configured_engine, _need_init,  # noqa: F401
                    _raise_if_lost, _worker_lost)
from .horovod import (Average, Compression, FP16Compressor, NoneCompressor,  # noqa: F401
                      ReduceOp, Sum, allgather, allgather_values, allreduce, allreduce_values,
                      broadcast, broadcast_values, broadcast_variables, join, joinable, shard,
                      shard_indices)
from .horovod_keras import (BroadcastGlobalVariablesCallback,  # noqa: F401
                            DistributedOptimizer, JoinCallback, LearningRateScheduleCallback,
                            LearningRateWarmupCallback, MetricAverageCallback)
from .elastic import FolderInUse, State, restart_count  # noqa: F401

__all__ = ['init', 'shutdown', 'is_initialized', 'rank', 'size', 'local_rank', 'local_size',
           'engine', 'collective_path', 'allreduce', 'allreduce_values', 'allgather', 'allgather_values',
           'broadcast', 'broadcast_values', 'broadcast_variables', 'barrier', 'join',
           'joinable', 'shard', 'shard_indices', 'WorkerLost', 'Average', 'Sum', 'ReduceOp',
           'Compression', 'DistributedOptimizer', 'BroadcastGlobalVariablesCallback',
           'MetricAverageCallback', 'JoinCallback', 'LearningRateScheduleCallback',
           'LearningRateWarmupCallback', 'FolderInUse', 'State', 'restart_count']
