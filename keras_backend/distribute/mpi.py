"""MPI (mpi4py) as the transport of keras_backend.distribute's collectives: what every
engine that sends its values over MPI shares (Theano/PyTensor always; TensorFlow and JAX
on their MPI path, :func:`keras_backend.distribute.init`'s ``collectives``).

The engines keep their own graph nodes (an engine ``Op``, a ``tf.numpy_function``, a
JAX host callback) and call :func:`allreduce_numpy` on the buffer those nodes hand
over. The processes come from ``mpiexec`` (OpenMPI), or, under the Ray executor, from
the communicator its workers built
(:func:`keras_backend.distribute.rendezvous.set_mpi_communicator`).

MPI's collectives have no timeout of their own: each wait polls its non-blocking
request and raises :class:`~keras_backend.distribute.WorkerLost` when ``init``'s
timeout passes (a hung peer); a peer that dies makes ``mpiexec`` end the job (and the
launcher stop every worker).

float16 has no MPI type in OpenMPI 4.1: it travels as 16-bit words and is summed by a
reduction of our own (:func:`_float16_sum`, numpy on each received block), so that
``Compression.fp16`` halves the bytes on MPI too.

The allreduce is ``MPI_Iallreduce``, which Open MPI runs in its non-blocking collectives
(``coll/libnbc``). Unless told otherwise, that component reduces onto one process and
broadcasts back (a binomial tree) for 2 and 3 processes at any size: twice the bytes of a
ring on the slowest link. :func:`module` therefore sets Open MPI's
``OMPI_MCA_coll_libnbc_iallreduce_algorithm`` to 1 (the ring) before MPI starts in this
process, unless the environment names an algorithm (benchmarks/README.md, "Open MPI's
non-blocking allreduce"). Other MPI libraries ignore the variable.
"""
import time

import numpy as np

from . import stall as _stall


class _S(object):
    comm = None
    MPI = None
    timeout = 0.0
    half_sum = None     # the MPI.Op that sums float16 words


def module():
    """``mpi4py.MPI`` (importing it starts MPI, with
    :data:`~keras_backend.distribute.rendezvous.IALLREDUCE_ALGORITHM` in the environment
    unless it names another algorithm); RuntimeError (saying what to install) when mpi4py
    is missing."""
    from .rendezvous import name_iallreduce_algorithm
    name_iallreduce_algorithm()
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError('keras_backend.distribute\'s MPI collectives need mpi4py (%s); '
                           'install OpenMPI (Debian: apt-get install openmpi-bin '
                           'libopenmpi-dev) and then pip install mpi4py' % e)
    return MPI


def start(size, timeout):
    """Take MPI's communicator (the Ray executor's, else ``COMM_WORLD``); return its
    ``(rank, size)``. RuntimeError when its size is not ``size``."""
    MPI = module()
    _S.MPI = MPI
    from . import rendezvous as _rendezvous
    _S.comm = _rendezvous.mpi_communicator() or MPI.COMM_WORLD
    _S.timeout = float(timeout)
    got = (_S.comm.Get_rank(), _S.comm.Get_size())
    if got[1] != size:
        raise RuntimeError('keras_backend.distribute: MPI has %d processes, the environment '
                           'says %d; start the workers with python -m keras_backend.distribute'
                           % (got[1], size))
    return got


#: how long a wait polls MPI without pause: 5 ms, plus the time these bytes take at this
#: rate (MPI moves a message only inside a call; a sleep between the calls stalls a large
#: one: 100 MB took 4.1 s with 2 ms pauses, 35 ms polled without pause)
SPIN_S = 0.005
SPIN_BYTES_PER_S = 2e8


def wait(request, what, nbytes=0):
    """Poll ``request`` until it completes (``nbytes``: the size of its buffer): without
    pause for :data:`SPIN_S` plus ``nbytes`` at :data:`SPIN_BYTES_PER_S`, then with short
    sleeps; WorkerLost after the timeout."""
    if request.Test():
        return
    start_ = time.time()
    spin_until = start_ + SPIN_S + nbytes / SPIN_BYTES_PER_S
    deadline = start_ + _S.timeout
    while not request.Test():
        now = time.time()
        if now > spin_until:
            if now > deadline:
                from .group import WorkerLost
                raise WorkerLost('%s waited %g s (the timeout) for a peer worker (rank %d of '
                                 '%d)' % (what, _S.timeout, _S.comm.Get_rank(),
                                          _S.comm.Get_size()))
            time.sleep(0.0002 if now - start_ < 1.0 else 0.002)


def _float16_sum(inbuf, outbuf, datatype):
    """MPI reduction: ``outbuf += inbuf``, both float16 words (sent as 16-bit ints)."""
    a = np.frombuffer(inbuf, dtype=np.float16)
    b = np.frombuffer(outbuf, dtype=np.float16)
    np.add(a, b, out=b)


def allreduce_numpy(x, average, kind='allreduce'):
    """The sum (``average``: mean) over the workers of the numpy array ``x``, now, in
    ``x``'s dtype; integer means are rounded toward zero. ``kind`` names the collective to
    the stall check."""
    _stall.entered(kind)
    x = np.ascontiguousarray(x)
    out = np.empty_like(x)
    MPI = _S.MPI
    comm = _S.comm
    if x.dtype == np.float16:
        if _S.half_sum is None:
            _S.half_sum = MPI.Op.Create(_float16_sum, commute=True)
        request = comm.Iallreduce([x.view(np.int16), MPI.SHORT],
                                  [out.view(np.int16), MPI.SHORT], op=_S.half_sum)
    else:
        request = comm.Iallreduce(x, out, op=MPI.SUM)
    wait(request, 'MPI_Allreduce', x.nbytes)
    if average:
        size = _S.comm.Get_size()
        if out.dtype.kind == 'f':
            out /= out.dtype.type(size)
        else:
            out = (np.sign(out) * (np.abs(out) // size)).astype(x.dtype)   # toward zero
    return out


def barrier():
    """Return once every worker called it (WorkerLost after the timeout)."""
    _stall.entered('barrier')
    wait(_S.comm.Ibarrier(), 'MPI_Barrier')


def lost_reason(error):
    """Why ``error`` means a broken communicator or a peer lost in an MPI wait (also as
    the text of an engine error that wrapped it), or None."""
    if _S.MPI is not None and isinstance(error, _S.MPI.Exception):
        return 'MPI error: %s' % (str(error).strip().split('\n')[0],)
    text = str(error)
    if 'for a peer worker (rank' in text and 'waited' in text:
        line = [l for l in text.splitlines() if 'for a peer worker' in l][0].strip()
        return 'MPI wait: %s' % line[:300]
    return None
