"""TensorFlow's collectives for keras_backend.distribute (its ``collectives`` interface).

Two paths (:func:`paths`; ``init``'s ``collectives`` chooses):

* ``'mpi'`` (the default on a CPU machine when the job runs under MPI): the allreduce is a
  ``tf.numpy_function`` node (``MPIAllreduce``) in the graph, whose Python body hands its
  buffer to ``MPI_Iallreduce`` (:mod:`keras_backend.distribute.mpi`, bounded by ``init``'s
  timeout); its gradient is the same node on the incoming gradient. No gRPC server, no
  ``TF_CONFIG``.
* ``'engine'``: TensorFlow's own collectives, below.

The engine path's runtime: ``tf.distribute.MultiWorkerMirroredStrategy`` made from ``TF_CONFIG`` (the
launcher writes it; under mpirun / srun ``keras_backend.distribute.rendezvous`` does), which configures the eager context for collectives, starts the
worker's gRPC server and a health check that aborts pending collectives when a peer
stops answering. The op: ``CollectiveReduceV2`` (ring), built in the adapter's graph so
that ``K.function`` compiles it into the training step; each call site takes its own
instance key, counted in build order, which is why every worker must build the same
collectives in the same order.
"""
import json
import os

import numpy as np

from ..distribute import mpi as _mpi
from ..distribute import rendezvous as _rendezvous
from ..distribute import stall as _stall
from .core import _graph

GROUP_KEY = 1


class _S(object):
    path = 'engine'
    strategy = None
    device = None
    size = 1
    timeout = 0.0
    next_key = 1
    lean_class = None    # _lean_class's class, made once


def _instance_key():
    k = _S.next_key
    _S.next_key += 1
    return k


def paths():
    return _rendezvous.own_and_mpi_paths()


def start(rank, size, timeout, path):
    _S.path = path
    if path == 'mpi':
        return _mpi.start(size, timeout)
    import tensorflow as tf
    from tensorflow.python.eager import context
    config = os.environ.get('TF_CONFIG', '')
    if not config:
        raise RuntimeError('keras_backend.distribute: TensorFlow needs TF_CONFIG (the cluster '
                           'and this task); start the workers with python -m '
                           'keras_backend.distribute -n N script.py, mpirun or srun')
    task = json.loads(config).get('task', {})
    if context.context()._initialized:
        raise RuntimeError('keras_backend.distribute.init() must run before TensorFlow runs '
                           'any op in this process (its collective runtime is configured at '
                           'program start); call it right after the imports')
    options = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.RING,
        timeout_seconds=timeout)
    try:
        _S.strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    except (tf.errors.OpError, RuntimeError) as e:
        why = lost_reason(e)
        if why is not None:
            from ..distribute import WorkerLost
            raise WorkerLost('the other workers did not join (%s)' % why)
        hint = ''
        if 'gRPC server' in str(e):
            # its bind failed: another process holds this worker's port of TF_CONFIG
            mine = json.loads(config).get('cluster', {}).get('worker', [])
            index = task.get('index', rank)
            if isinstance(index, int) and 0 <= index < len(mine):
                hint = ('; its port, %s in TF_CONFIG, is likely taken by another process'
                        % mine[index])
        raise RuntimeError('keras_backend.distribute: TensorFlow\'s collective runtime did '
                           'not start (%s: %s)%s' % (type(e).__name__, e, hint))
    _S.device = _S.strategy.extended.worker_devices[0]
    _S.size = size
    _S.timeout = float(timeout)
    return int(task.get('index', rank)), size


def _reduce(x, average, key):
    import tensorflow as tf
    return tf.raw_ops.CollectiveReduceV2(
        input=x, group_size=tf.constant(_S.size, tf.int32),
        group_key=tf.constant(GROUP_KEY, tf.int32),
        instance_key=tf.constant(key, tf.int32), ordering_token=[], merge_op='Add',
        final_op='Div' if average else 'Id', communication_hint='ring',
        timeout_seconds=_S.timeout)


def _mpi_reduce(x, average):
    """The ``tf.numpy_function`` node that allreduces ``x`` over MPI. (The buffers of one
    ``allreduce`` are chained by data, so that every worker runs them in one order:
    :func:`keras_backend.distribute.horovod.allreduce`.)"""
    import tensorflow as tf

    def body(value):
        return _mpi.allreduce_numpy(value, average)
    out = tf.numpy_function(body, [x], x.dtype, stateful=True, name='MPIAllreduce')
    out.set_shape(x.shape)
    _register_lean(out.op, body)
    return out


def _register_lean(op, body):
    """Let the ``PyFunc`` node ``op`` call ``body`` without TensorFlow's per-call Python
    layers: ``numpy_function`` registers ``body`` wrapped by autograph's
    ``do_not_convert``, and its registry converts every result through
    ``numpy_compat.np_asarray``, which parses NumPy's version string each time. Our body
    already returns a C-contiguous array of the node's dtype, so the registry's entry
    for the node's token is replaced by a callable that returns it as it is (0.20 ->
    0.175 ms a node call here, of a 0.2 ms budget for the CNN's allreduce). The graph
    keeps it alive (the registry holds weak references). Where this TensorFlow's
    internals differ, the node keeps TensorFlow's own entry."""
    try:
        from tensorflow.python.ops import script_ops
        token = op.get_attr('token')
        token = token.decode('ascii') if isinstance(token, bytes) else str(token)
        registry = script_ops._py_funcs
        if registry.get(token) is None:
            return
        lean = _lean_class(script_ops.EagerFunc)(body)
        keep = getattr(op.graph, '_keras_backend_lean_py_funcs', None)
        if keep is None:
            keep = []
            op.graph._keras_backend_lean_py_funcs = keep
        keep.append(lean)
        registry._funcs[token] = lean
    except Exception:  # noqa: BLE001 - another TensorFlow: its own entry stays
        return


def _lean_class(base):
    """A registry entry TensorFlow's ``FuncRegistry`` calls as ``entry(device, token,
    args)`` and whose result it returns unconverted (it takes ``EagerFunc``s so)."""
    if _S.lean_class is None:
        class LeanPyFunc(base):
            def __init__(self, body):     # none of EagerFunc's state is used
                self._body = body

            def __call__(self, device, token, args):
                return self._body(*args)
        _S.lean_class = LeanPyFunc
    return _S.lean_class


def allreduce_tensor(K, x, average, state):
    """The allreduce of the graph tensor ``x``: ``CollectiveReduceV2`` (engine path; an
    instance key of its own for the gradient) or the ``MPIAllreduce`` node (MPI path).
    Its gradient is the same allreduce of the incoming gradient."""
    import tensorflow as tf
    if _S.path == 'mpi':
        @tf.custom_gradient
        def reduce_(v):
            def grad(dy):
                return _mpi_reduce(dy, average)
            return _mpi_reduce(v, average), grad
    else:
        forward_key, backward_key = _instance_key(), _instance_key()

        @tf.custom_gradient
        def reduce_(v):
            def grad(dy):
                with tf.device(_S.device):
                    return _reduce(dy, average, backward_key)
            with tf.device(_S.device):
                return _reduce(v, average, forward_key), grad

    graph = getattr(x, 'graph', None)
    if graph is None or isinstance(x, tf.Variable):
        graph = _graph()
    if tf.executing_eagerly():
        with graph.as_default():
            return reduce_(tf.convert_to_tensor(x))
    return reduce_(tf.convert_to_tensor(x))


def allreduce_array(flat, average, state):
    return _allreduce_array(flat, average, state, 'allreduce')


def _allreduce_array(flat, average, state, kind):
    """``allreduce_array``, told to the stall check as a collective of ``kind``."""
    if _S.path == 'mpi':
        if kind == 'barrier':
            _mpi.barrier()
            return flat
        return _mpi.allreduce_numpy(flat, average, kind)
    import tensorflow as tf
    _stall.entered(kind)
    dtype = flat.dtype
    if dtype.kind in 'iu' and dtype.itemsize < 4:
        flat = flat.astype(np.int32)
    elif dtype.kind == 'f' and dtype.itemsize < 4:
        flat = flat.astype(np.float32)
    try:
        with tf.device(_S.device):
            out = _reduce(tf.constant(flat), average, _instance_key())
        return out.numpy().astype(dtype)
    except tf.errors.OpError as e:
        from ..distribute import _raise_if_lost
        _raise_if_lost(e)
        raise


def barrier(state):
    _allreduce_array(np.zeros(1, np.float32), False, state, 'barrier')


_LOST = ('UnavailableError', 'DeadlineExceededError', 'CancelledError', 'AbortedError')


def lost_reason(error):
    """Why ``error`` means a lost peer, or None. The collective's own timeout is a
    ``DeadlineExceededError``; a peer the health check lost, ``UnavailableError`` (or the
    ``CancelledError`` of a collective it aborted)."""
    if _S.path == 'mpi':
        return _mpi.lost_reason(error)
    name = type(error).__name__
    text = str(error).strip().split('\n')[0]
    if name in _LOST:
        return '%s: %s' % (name, text[:300])
    if name == 'InternalError' and ('ollective' in text or 'peer' in text.lower()):
        return '%s: %s' % (name, text[:300])
    return None
