"""MPI collectives (mpi4py) of keras_backend.distribute on the Theano adapter (Theano 1.0.5
and PyTensor).

Neither engine has CPU collectives of its own. The symbolic allreduce is an engine
``Op`` (:func:`allreduce_op`) whose ``perform`` runs ``MPI_Iallreduce`` on the buffer
(:mod:`keras_backend.distribute.mpi`: the communicator, the wait bounded by ``init``'s
timeout) and whose gradient is the same allreduce of the incoming gradient.
"""
import numpy as np

from ..distribute import mpi as _mpi


class _S(object):
    ops = {}


def paths():
    """MPI only: neither engine has CPU collectives of its own."""
    return ('mpi',)


def start(rank, size, timeout, path):
    return _mpi.start(size, timeout)


def _allreduce_numpy(x, average):
    if x.dtype == np.float16:   # summed in float32 (float16_on_wire)
        return _mpi.allreduce_numpy(x.astype(np.float32), average).astype(np.float16)
    return _mpi.allreduce_numpy(x, average)


def allreduce_op(K, average):
    """The engine ``Op`` (of the adapter ``K``'s engine) that sums (``average``: averages)
    its input over the workers."""
    key = (K._engine.ENGINE, bool(average))
    op = _S.ops.get(key)
    if op is not None:
        return op
    T = K.T

    class MPIAllreduce(K._engine.Op):
        """``MPI_Allreduce`` (sum, or mean) of one tensor over the workers; its gradient is
        the same allreduce. Never constant-folded: it must run on every step."""
        __props__ = ('average',)

        def __init__(self, average):
            self.average = bool(average)
            super(MPIAllreduce, self).__init__()

        def make_node(self, x):
            x = T.as_tensor_variable(x)
            return K._engine.Apply(self, [x], [x.type()])

        def perform(self, node, inputs, output_storage, params=None):
            output_storage[0][0] = _allreduce_numpy(inputs[0], self.average)

        def infer_shape(self, *args):
            return [args[-1][0]]

        def grad(self, inputs, output_grads):
            return [self(output_grads[0])]

        def do_constant_folding(self, *args):
            return False

    op = MPIAllreduce(average)
    _S.ops[key] = op
    return op


def allreduce_tensor(K, x, average, state):
    return allreduce_op(K, average)(x)


def allreduce_array(flat, average, state):
    return _allreduce_numpy(flat, average)


def barrier(state):
    _mpi.barrier()


def lost_reason(error):
    """MPI errors (``mpi4py.MPI.Exception``) mean a broken communicator."""
    return _mpi.lost_reason(error)


def float16_on_wire():
    """False: OpenMPI 4.1 has no float16 type, so ``_allreduce_numpy`` sums float16 in
    float32, and the engines run float16 casts without C code (PyTensor: 66 ms for the
    cast of 2730 values); ``Compression.fp16`` is therefore left out here."""
    return False
