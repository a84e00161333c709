"""MPI collectives (mpi4py) of keras_backend.distribute on the Theano adapter (Theano 1.0.5
and PyTensor).

Neither engine has CPU collectives of its own. The symbolic allreduce is an engine
``Op`` (:func:`allreduce_op`) whose ``perform`` runs ``MPI_Iallreduce`` on the buffer
and whose gradient is the same allreduce of the incoming gradient; the processes come
from ``mpiexec`` (OpenMPI), or, under the Ray executor, from the communicator its
workers built (:func:`keras_backend.distribute.rendezvous.set_mpi_communicator`). MPI's collectives have no timeout of their own: each wait
polls its non-blocking request and raises :class:`~keras_backend.distribute.WorkerLost`
when ``init``'s timeout passes (a hung peer); a peer that dies makes ``mpiexec`` end the
job (and the launcher kill every worker).
"""
import time

import numpy as np

from ..distribute import stall as _stall


class _S(object):
    comm = None
    MPI = None
    timeout = 0.0
    ops = {}


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError('keras_backend.distribute on Theano/PyTensor needs mpi4py (%s); '
                           'install OpenMPI (Debian: apt-get install openmpi-bin '
                           'libopenmpi-dev) and then pip install mpi4py' % e)
    return MPI


def start(rank, size, timeout):
    MPI = _mpi()
    _S.MPI = MPI
    # the Ray executor's workers: a communicator grown through ompi-server, not mpiexec's
    from ..distribute import rendezvous as _rendezvous
    _S.comm = _rendezvous.mpi_communicator() or MPI.COMM_WORLD
    _S.timeout = float(timeout)
    got = (_S.comm.Get_rank(), _S.comm.Get_size())
    if got[1] != size:
        raise RuntimeError('keras_backend.distribute: MPI has %d processes, the environment '
                           'says %d; start the workers with python -m keras_backend.distribute'
                           % (got[1], size))
    return got


def _wait(request, what):
    """Poll ``request`` until it completes; WorkerLost after the timeout."""
    start = time.time()
    deadline = start + _S.timeout
    spins = 0
    while not request.Test():
        spins += 1
        # busy-poll the first 5 ms (MPI makes progress only inside Test), then sleep
        if spins > 200 and time.time() - start > 0.005:
            if time.time() > deadline:
                from ..distribute import WorkerLost
                raise WorkerLost('%s waited %g s (the timeout) for a peer worker (rank %d of '
                                 '%d)' % (what, _S.timeout, _S.comm.Get_rank(),
                                          _S.comm.Get_size()))
            time.sleep(0.0002 if spins < 5000 else 0.002)


def _allreduce_numpy(x, average):
    _stall.entered('allreduce')
    x = np.ascontiguousarray(x)
    if x.dtype == np.float16:   # MPI has no float16 type: summed in float32
        return _allreduce_numpy(x.astype(np.float32), average).astype(np.float16)
    out = np.empty_like(x)
    _wait(_S.comm.Iallreduce(x, out, op=_S.MPI.SUM), 'MPI_Allreduce')
    if average:
        size = _S.comm.Get_size()
        if out.dtype.kind == 'f':
            out /= out.dtype.type(size)
        else:
            out = (np.sign(out) * (np.abs(out) // size)).astype(x.dtype)   # toward zero
    return out


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
    _stall.entered('barrier')
    _wait(_S.comm.Ibarrier(), 'MPI_Barrier')


def lost_reason(error):
    """MPI errors (``mpi4py.MPI.Exception``) mean a broken communicator."""
    if _S.MPI is not None and isinstance(error, _S.MPI.Exception):
        return 'MPI error: %s' % (str(error).strip().split('\n')[0],)
    return None


def float16_on_wire():
    """False: OpenMPI 4.1 has no float16 type, so ``_allreduce_numpy`` sums float16 in
    float32, and the engines run float16 casts without C code (PyTensor: 66 ms for the
    cast of 2730 values); ``Compression.fp16`` is therefore left out here."""
    return False
