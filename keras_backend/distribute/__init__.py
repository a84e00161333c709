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
"""
import os
import sys

import numpy as np

from .. import engines as _engines
from . import rendezvous as _rendezvous

__all__ = ['init', 'shutdown', 'is_initialized', 'rank', 'size', 'local_rank', 'local_size',
           'engine', 'allreduce', 'allreduce_values', 'broadcast_values',
           'broadcast_variables', 'barrier', 'shard', 'shard_indices', 'WorkerLost',
           'DistributedOptimizer', 'BroadcastGlobalVariablesCallback', 'MetricAverageCallback']

#: engine name -> the module that drives its collectives (the ``collectives`` column of the
#: engine table, :data:`keras_backend.engines.TABLE`), which provides the interface of
#: :mod:`keras_backend.distribute.collectives`
ENGINES = dict((name, _engines.collectives_module(name)) for name in _engines.names())

#: the environment the launcher gives each worker (MPI engines: mpiexec's own variables)
ENV_RANK = 'KERAS_BACKEND_DISTRIBUTE_RANK'
ENV_SIZE = 'KERAS_BACKEND_DISTRIBUTE_SIZE'
ENV_LOCAL_RANK = 'KERAS_BACKEND_DISTRIBUTE_LOCAL_RANK'
ENV_TIMEOUT = 'KERAS_BACKEND_DISTRIBUTE_TIMEOUT'
ENV_COORDINATOR = 'KERAS_BACKEND_DISTRIBUTE_COORDINATOR'
DEFAULT_TIMEOUT = 300.0


class WorkerLost(RuntimeError):
    """A peer process died, or a collective waited longer than ``init``'s ``timeout``.

    Raised in place of the engine's own error (TensorFlow's ``UnavailableError``, JAX's
    ``XlaRuntimeError``, an MPI wait that never ends) by ``K.function`` calls that hold a
    collective and by every function of this module. The training cannot go on: the
    launcher stops every worker when one exits with it.
    """


class _State(object):
    initialized = False
    engine = None
    impl = None          # the engine module (ENGINES), None with one process
    rank = 0
    size = 1
    local_rank = 0
    local_size = 1
    timeout = DEFAULT_TIMEOUT


def _configured_engine():
    """The engine of the adapter in use: one already imported, else the configuration's
    (KERAS_BACKEND, keras.json), read without importing an engine."""
    loaded = [e for e in _engines.names() if _engines.adapter_module(e) in sys.modules]
    if len(loaded) == 1:
        return loaded[0]
    from ..config_file import resolve_settings
    settings = resolve_settings(write_default=False)[0]
    return _engines.canonical_backend(settings['backend'])


def init(timeout=None, engine=None):
    """Join the other workers: read this process's rank and the number of workers, and
    start the engine's collective runtime.

    Call it once, first thing: on TensorFlow before anything runs a TensorFlow op (its
    collective runtime must be configured at program start). Started by the launcher
    (``python -m keras_backend.distribute -n N``), by ``mpirun`` / ``mpiexec`` (OpenMPI)
    or by Slurm's ``srun``, it joins the others with no change to the script; started
    alone, it sets ``size() == 1`` and starts nothing.

    Where rank, size, local rank and the rendezvous come from
    (:mod:`keras_backend.distribute.rendezvous`): the launcher's variables; else
    ``OMPI_COMM_WORLD_*`` (TensorFlow and JAX then share each rank's ``host:port`` over
    MPI: mpi4py); else a Slurm step's ``SLURM_*`` (TensorFlow and JAX take the nodes from
    ``SLURM_STEP_NODELIST`` and the ports from ``SLURM_STEP_RESV_PORTS`` or the job id).
    This host's address: ``$KERAS_BACKEND_DISTRIBUTE_ADDRESS``, else the IPv4 address of
    ``$KERAS_BACKEND_DISTRIBUTE_INTERFACE``, else its first non-loopback address
    (127.0.0.1 only where it has none, with a warning).

    Args:
        timeout: seconds a collective may wait for the slowest worker before it raises
            :class:`WorkerLost` (float > 0). Default: ``$KERAS_BACKEND_DISTRIBUTE_TIMEOUT``
            (the launcher's ``--timeout``), else 300.
        engine: a backend name of the engine table (:data:`ENGINES`: 'tensorflow',
            'theano', 'cntk' or 'jax'); default: the configured backend
            (``KERAS_BACKEND`` or keras.json, as ``keras_backend.backend`` reads them).

    Returns:
        None. Calling it again with the same arguments does nothing.

    Raises:
        ValueError: ``timeout`` is not a positive number, ``engine`` is unknown, or the
            placement variables are not integers, out of range or inconsistent.
        RuntimeError: the engine's runtime cannot start (TensorFlow already ran ops, or
            ``mpi4py`` is missing for an MPI engine or for TensorFlow / JAX under
            mpirun); the message says what to do.
        WorkerLost: the other workers did not join within ``timeout``.

    Example:
        >>> import keras_backend.distribute as kd
        >>> kd.init()
        >>> kd.rank(), kd.size()      # started alone
        (0, 1)
    """
    if timeout is None:
        env = os.environ.get(ENV_TIMEOUT, '').strip()
        try:
            timeout = float(env) if env else DEFAULT_TIMEOUT
        except ValueError:
            raise ValueError('%s must be a number of seconds, got %r' % (ENV_TIMEOUT, env))
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float, np.integer,
                                                            np.floating)):
        raise TypeError('init: timeout must be a number of seconds, got %r' % (timeout,))
    if not timeout > 0:
        raise ValueError('init: timeout must be > 0 seconds, got %r' % (timeout,))
    if engine is None:
        engine = _configured_engine()
    if os.environ.get('KERAS_BACKEND', '').startswith('keras_backend.'):
        # Keras 2.3.1 will load our adapter; this package was imported before it, so the
        # restorations it needs on today's Python (keras2_compat) are made here
        from .. import keras2_compat
        keras2_compat.install()
    if engine not in ENGINES:
        raise ValueError('init: engine must be one of %s, got %r'
                         % (', '.join(sorted(ENGINES)), engine))
    if _State.initialized:
        if engine != _State.engine:
            raise ValueError('init: already initialised for %r, asked for %r'
                             % (_State.engine, engine))
        return
    place = _rendezvous.placement()
    rank_, size_ = place.rank, place.size
    local_rank_, local_size_ = place.local_rank, place.local_size
    impl = None
    if size_ > 1:
        import importlib
        impl = importlib.import_module(ENGINES[engine])
        # TensorFlow's TF_CONFIG, JAX's coordinator: from mpirun's ranks over MPI, or from
        # Slurm's node list, unless our launcher set them (rendezvous.rendezvous)
        _rendezvous.rendezvous(_engines.worker_start(engine), place, float(timeout))
        got = impl.start(rank_, size_, float(timeout))
        if got is not None:
            rank_, size_ = got
    _State.engine = engine
    _State.impl = impl
    _State.rank, _State.size = rank_, size_
    _State.local_rank, _State.local_size = local_rank_, local_size_
    _State.timeout = float(timeout)
    _State.initialized = True


def shutdown():
    """Leave the group: stop the engine's collective runtime (MPI: nothing; it finalises
    at exit). After it, ``is_initialized()`` is False and ``init`` may be called again
    with one process."""
    impl = _State.impl
    _State.initialized = False
    _State.impl = None
    _State.rank, _State.size, _State.local_rank, _State.local_size = 0, 1, 0, 1
    if impl is not None and hasattr(impl, 'stop'):
        impl.stop()


def is_initialized():
    """True once :func:`init` ran (and :func:`shutdown` did not)."""
    return _State.initialized


def _need_init(fname):
    if not _State.initialized:
        raise ValueError('%s: call keras_backend.distribute.init() first' % fname)


def rank():
    """This worker's index, 0 .. ``size() - 1`` (int). Raises ``ValueError`` before
    :func:`init`."""
    _need_init('rank')
    return _State.rank


def size():
    """The number of workers (int; 1 when started alone). Raises ``ValueError`` before
    :func:`init`."""
    _need_init('size')
    return _State.size


def local_rank():
    """This worker's index among the workers of its machine (int)."""
    _need_init('local_rank')
    return _State.local_rank


def local_size():
    """The number of workers on this machine (int)."""
    _need_init('local_size')
    return _State.local_size


def engine():
    """The engine whose collectives are in use: 'tensorflow', 'theano', 'cntk' or 'jax'."""
    _need_init('engine')
    return _State.engine


def _adapter():
    """The adapter module of the engine in use (imported on first use)."""
    import importlib
    return importlib.import_module(_engines.adapter_module(_State.engine))


def _dtype_name(K, t):
    return str(K.dtype(t))


def allreduce(tensors, average=True):
    """The sum (or mean) over every worker of each symbolic tensor, in the engine's graph.

    Tensors of one dtype go through one fused collective: flattened, concatenated,
    reduced, split back. So a training step that averages its gradients stays one
    compiled function, with one collective per dtype.

    Args:
        tensors: a symbolic tensor or variable of the active adapter, or a list/tuple of
            them (any shapes; float or int dtypes).
        average: True: the mean over workers; False: the sum.

    Returns:
        A tensor (or list) of the same shapes and dtypes. With one worker, ``tensors``
        itself. The gradient of the result is the same allreduce of the incoming
        gradient (TensorFlow, Theano/PyTensor, JAX).

    Raises:
        ValueError: before :func:`init`.
        TypeError: ``tensors`` holds something that is not a tensor.
        WorkerLost: (when the compiled function runs) a peer died or timed out.

    Example:
        >>> g = K.placeholder(shape=(3,))
        >>> f = K.function([g], [kd.allreduce(g)])
        >>> f([np.ones(3) * (kd.rank() + 1)])   # on 2 workers   # doctest: +SKIP
        [array([1.5, 1.5, 1.5], dtype=float32)]
    """
    _need_init('allreduce')
    single = not isinstance(tensors, (list, tuple))
    items = [tensors] if single else list(tensors)
    if _State.size == 1:
        return tensors if single else items
    K = _adapter()
    for i, t in enumerate(items):
        if not K.is_tensor(t) and not _is_variable(K, t):
            raise TypeError('allreduce: item %d must be a tensor or variable of the %s '
                            'adapter, got %r' % (i, _State.engine, type(t).__name__))
    out = [None] * len(items)
    groups = {}
    for i, t in enumerate(items):
        shape = K.int_shape(t)
        if shape is None or any(d is None for d in shape):
            out[i] = _reduce_one(K, t, average)   # a collective of its own
        else:
            groups.setdefault(_dtype_name(K, t), []).append((i, tuple(shape)))
    for dt, members in groups.items():
        if len(members) == 1:
            i, _ = members[0]
            out[i] = _reduce_one(K, items[i], average)
            continue
        flat = K.concatenate([K.reshape(items[i], (-1,)) for i, _ in members], axis=0)
        red = _State.impl.allreduce_tensor(K, flat, average, _State)
        start = 0
        for i, shape in members:
            n = int(np.prod(shape, dtype=np.int64))
            out[i] = K.reshape(red[start:start + n], shape)
            start += n
    return out[0] if single else out


def _reduce_one(K, t, average):
    out = _State.impl.allreduce_tensor(K, t, average, _State)
    shape = getattr(t, '_keras_shape', None)   # the sizes Theano 1.0.5's types cannot hold
    if shape is not None and getattr(out, '_keras_shape', None) is None:
        try:
            out._keras_shape = shape
        except AttributeError:
            pass
    return out


def _is_variable(K, t):
    try:
        return bool(K.is_variable(t))
    except Exception:
        return False


def allreduce_values(values, average=True):
    """The sum (or mean) over every worker of numpy values, as numpy (for metrics).

    Args:
        values: an array-like or number, or a list/tuple of them; numbers of one dtype
            go through one collective.
        average: True: the mean; False: the sum.

    Returns:
        numpy arrays of the same shapes (a list when ``values`` is a list). The mean of
        integers is a float64 array.

    Raises:
        ValueError: before :func:`init`; a value that is not numeric.
        WorkerLost: a peer died or timed out.

    Example:
        >>> kd.allreduce_values(float(kd.rank()))      # on 2 workers   # doctest: +SKIP
        array(0.5)
    """
    _need_init('allreduce_values')
    single = not isinstance(values, (list, tuple))
    arrays = []
    for i, v in enumerate([values] if single else values):
        a = np.asarray(v)
        if a.dtype.kind not in 'biuf':
            raise ValueError('allreduce_values: item %d must be numeric, got dtype %s'
                             % (i, a.dtype))
        if a.dtype.kind == 'b':
            a = a.astype(np.int32)
        if average and a.dtype.kind in 'iu':
            a = a.astype(np.float64)
        arrays.append(a)
    if _State.size > 1:
        arrays = _reduce_arrays(arrays, average)
    elif average:
        arrays = [np.array(a) for a in arrays]
    return arrays[0] if single else arrays


def _reduce_arrays(arrays, average):
    """One engine collective per dtype over the concatenated arrays."""
    out = [None] * len(arrays)
    groups = {}
    for i, a in enumerate(arrays):
        groups.setdefault(a.dtype.str, []).append(i)
    for _, members in sorted(groups.items()):
        flat = np.concatenate([arrays[i].ravel() for i in members]) if members else None
        red = np.asarray(_State.impl.allreduce_array(flat, average, _State))
        start = 0
        for i in members:
            n = arrays[i].size
            out[i] = red[start:start + n].reshape(arrays[i].shape).astype(arrays[i].dtype)
            start += n
    return out


def broadcast_values(values, root=0):
    """Every worker gets worker ``root``'s numpy values (a value or a list of them).

    Built on the engine's allreduce: the root's values plus zeros from the others,
    which is exact for every finite or infinite value.

    Raises:
        ValueError: before :func:`init`; ``root`` not in 0 .. size() - 1; workers whose
            values differ in shape.
        WorkerLost: a peer died or timed out.
    """
    _need_init('broadcast_values')
    _check_root('broadcast_values', root)
    single = not isinstance(values, (list, tuple))
    arrays = [np.asarray(v) for v in ([values] if single else values)]
    if _State.size > 1:
        kinds = [a.dtype for a in arrays]
        sent = [(a if _State.rank == root else np.zeros_like(a)).astype(
            np.int32 if a.dtype.kind == 'b' else a.dtype) for a in arrays]
        arrays = [r.astype(k) for r, k in zip(_reduce_arrays(sent, False), kinds)]
    return arrays[0] if single else arrays


def _check_root(fname, root):
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)):
        raise TypeError('%s: root must be an int rank, got %r' % (fname, root))
    if not 0 <= int(root) < _State.size:
        raise ValueError('%s: root must be in 0 .. %d, got %d'
                         % (fname, _State.size - 1, root))


def broadcast_variables(variables, root=0):
    """Set every worker's ``variables`` (adapter variables: a model's weights, an
    optimizer's slots) to worker ``root``'s values, so that all start equal.

    Raises:
        ValueError: before :func:`init`; ``root`` out of range.
        WorkerLost: a peer died or timed out.

    Example:
        >>> kd.broadcast_variables(model.weights, root=0)   # doctest: +SKIP
    """
    _need_init('broadcast_variables')
    _check_root('broadcast_variables', root)
    variables = list(variables)
    if _State.size == 1 or not variables:
        return
    K = _adapter()
    values = broadcast_values(K.batch_get_value(variables), root)
    K.batch_set_value(list(zip(variables, values)))


def barrier():
    """Wait until every worker reaches this call.

    Raises:
        WorkerLost: a peer died, or did not arrive within ``init``'s timeout.
    """
    _need_init('barrier')
    if _State.size > 1:
        _State.impl.barrier(_State)


def shard(data, global_batch_size):
    """This worker's rows of every global batch of ``data``.

    Training on ``shard(x, B)`` with ``batch_size=B // size()`` and ``shuffle=False``
    makes each of Keras' batches on worker ``r`` the ``r``-th part of the global batch
    that one process would take with ``batch_size=B``; with gradients averaged
    (:func:`DistributedOptimizer`) the workers take the same steps as that process
    whenever each global batch splits evenly (a last, shorter batch split into unequal
    parts weighs its samples unequally).

    Args:
        data: a numpy array (or a list of them, Keras' multi-input form), samples first.
        global_batch_size: int >= size(), the batch one process would take.

    Returns:
        The same type, holding this worker's rows (global batch by global batch, each
        split into ``size()`` parts as ``np.array_split`` does).

    Raises:
        ValueError: ``global_batch_size`` < size(), or arrays of different lengths.

    Example:
        >>> kd.shard(np.arange(8), 4)      # worker 1 of 2   # doctest: +SKIP
        array([2, 3, 6, 7])
    """
    _need_init('shard')
    if isinstance(global_batch_size, bool) or not isinstance(global_batch_size,
                                                             (int, np.integer)):
        raise TypeError('shard: global_batch_size must be an int, got %r'
                        % (global_batch_size,))
    if global_batch_size < _State.size:
        raise ValueError('shard: global_batch_size must be >= size() = %d, got %d'
                         % (_State.size, global_batch_size))
    if isinstance(data, (list, tuple)):
        lengths = set(len(d) for d in data)
        if len(lengths) > 1:
            raise ValueError('shard: the arrays have different numbers of samples: %s'
                             % sorted(lengths))
        return type(data)(shard(d, global_batch_size) for d in data)
    data = np.asarray(data)
    if _State.size == 1:
        return data
    return data[shard_indices(len(data), global_batch_size, _State.rank, _State.size)]


def shard_indices(n, global_batch_size, rank, size):
    """The sample indices that :func:`shard` gives worker ``rank`` of ``size`` out of
    ``n`` samples: for each global batch ``[k * B, min((k + 1) * B, n))``, its ``rank``-th
    part as ``np.array_split`` makes ``size`` parts (an int64 array)."""
    parts = [np.array_split(np.arange(start, min(start + global_batch_size, n)), size)[rank]
             for start in range(0, n, global_batch_size)]
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros((0,), np.int64)


def _raise_if_lost(error):
    """Raise the :class:`WorkerLost` that stands for ``error`` (from it) when it means a
    lost peer; the engine modules call it around their eager collectives."""
    lost = _worker_lost(error)
    if lost is not None:
        raise lost from error


def _worker_lost(error):
    """The :class:`WorkerLost` that stands for the engine error ``error``, or None
    (``keras_backend.checks.engine_error`` asks here while several workers run)."""
    if isinstance(error, WorkerLost):
        # an engine may have appended its own report (Theano: the Apply node) to the text
        return WorkerLost(str(error).strip().split('\n')[0])
    if _State.impl is None:
        return None
    why = _State.impl.lost_reason(error)
    if why is None:
        return None
    return WorkerLost('a peer worker was lost (rank %d of %d, %s): %s'
                      % (_State.rank, _State.size, _State.engine, why))


# -- Keras 2.3.1 (keras_backend.distribute.keras2 holds them; imported on first use) --

def DistributedOptimizer(optimizer):
    """A copy of Keras 2 ``optimizer`` whose gradients are averaged over the workers
    before Keras clips them (``clipnorm`` / ``clipvalue`` see the global gradient); see
    :func:`keras_backend.distribute.keras2.DistributedOptimizer`."""
    from . import keras2
    return keras2.DistributedOptimizer(optimizer)


def BroadcastGlobalVariablesCallback(root_rank=0):
    """A Keras callback that sets every worker's weights to ``root_rank``'s when training
    begins; see :class:`keras_backend.distribute.keras2.BroadcastGlobalVariablesCallback`."""
    from . import keras2
    return keras2.BroadcastGlobalVariablesCallback(root_rank)


def MetricAverageCallback():
    """A Keras callback that averages each epoch's logs over the workers; see
    :class:`keras_backend.distribute.keras2.MetricAverageCallback`."""
    from . import keras2
    return keras2.MetricAverageCallback()


# committed state for supervised restarts (README, "When a worker is lost")
from .elastic import State, restart_count  # noqa: E402
__all__ += ['State', 'restart_count']
