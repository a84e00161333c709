"""CNTK 2.7's collectives for :mod:`keras_backend.distribute` (the engine table's
``collectives`` module of CNTK; the interface of :mod:`keras_backend.distribute.collectives`).

The runtime: CNTK's MPI communicator (``cntk.train.distributed.mpi_communicator()``,
which calls ``MPI_Init``) under ``mpiexec``. The op: ``_Allreduce``, a CNTK
``UserFunction`` whose forward pass sums its input over the workers with
``Communicator.aggregate_in_place`` on a copy of the input's ``NDArrayView`` and whose
backward pass does the same to the incoming gradient; the mean is that sum times
``1 / size`` (``C.element_times``), so CNTK differentiates it as a graph op.

Timeouts: CNTK's communicator has none, and it holds the GIL while it waits, so no
thread of this process can stop it. A watchdog process (started before ``MPI_Init``,
in the worker's process group) is told when each collective begins and ends; when one
runs longer than ``timeout`` it writes ``WorkerLost`` to stderr and kills the worker
with SIGKILL, and ``mpiexec`` (and the launcher) stop the others.
"""
import atexit
import os
import subprocess
import sys
import warnings

import numpy as np

from ..distribute import stall as _stall


class _S(object):
    comm = None
    workers = None
    size = 1
    rank = 0
    timeout = 0.0
    watchdog = None
    finalized = False


# -- the watchdog ---------------------------------------------------------------

#: the watchdog process: reads 'arm SECONDS WHAT' / 'off' lines on stdin; when an armed
#: collective outlives its seconds it writes the message (argv[2] % (WHAT, SECONDS)) to
#: stderr and kills the worker (argv[1]) with SIGKILL; it exits when the worker is gone
_WATCHDOG = r'''
import os, select, signal, sys, time
worker, message = int(sys.argv[1]), sys.argv[2]
deadline, what, buf = None, '', b''
while True:
    wait = None if deadline is None else max(0.0, deadline - time.monotonic())
    ready = select.select([0], [], [], wait)[0]
    if ready:
        data = os.read(0, 4096)
        if not data:
            sys.exit(0)
        lines = (buf + data).split(b'\n')
        buf = lines.pop()
        for line in lines:
            words = line.decode('utf-8', 'replace').split(' ', 2)
            if words[0] == 'arm' and len(words) == 3:
                seconds, what = float(words[1]), words[2]
                deadline = time.monotonic() + seconds
            else:
                deadline = None
    elif deadline is not None and time.monotonic() >= deadline:
        os.write(2, (message % (what, seconds) + '\n').encode('utf-8', 'replace'))
        try:
            os.kill(worker, signal.SIGKILL)
        except OSError:
            pass
        sys.exit(0)
'''


def _start_watchdog(rank, size):
    message = ('keras_backend.distribute.WorkerLost: a peer worker was lost (rank %d of %d, '
               'cntk): %%s did not complete within %%g s (CNTK\'s MPI communicator has no '
               'timeout; a peer is hung or dead); this worker is stopped' % (rank, size))
    _S.watchdog = subprocess.Popen(
        [sys.executable, '-S', '-E', '-c', _WATCHDOG, str(os.getpid()), message],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)


def _tell(line):
    w = _S.watchdog
    if w is None:
        return
    try:
        os.write(w.stdin.fileno(), line.encode('utf-8') + b'\n')
    except OSError:       # the watchdog is gone: collectives run without a bound
        _S.watchdog = None


class _Bounded(object):
    """``with _Bounded(what, timeout):`` the watchdog kills this worker if the block
    outlives ``timeout`` seconds."""

    def __init__(self, what, timeout=None):
        self.what = what
        self.timeout = _S.timeout if timeout is None else timeout

    def __enter__(self):
        _tell('arm %r %s' % (float(self.timeout), self.what))

    def __exit__(self, *exc):
        _tell('off')
        return False


# -- the runtime ----------------------------------------------------------------

def paths():
    """MPI only: CNTK's communicator is MPI (its own ``MPICommunicator``)."""
    return ('mpi',)


def start(rank, size, timeout, path):
    if os.name != 'posix':
        raise RuntimeError('keras_backend.distribute: the CNTK engine runs its workers under '
                           'OpenMPI\'s mpiexec (POSIX only)')
    _S.timeout = float(timeout)
    _start_watchdog(rank, size)
    with _Bounded('starting CNTK\'s MPI communicator (MPI_Init)'):
        try:
            with warnings.catch_warnings():   # CNTK's import warnings, as the adapter does
                warnings.simplefilter('ignore')
                from cntk.train import distributed
            comm = distributed.mpi_communicator()
        except (OSError, RuntimeError) as e:
            raise RuntimeError('keras_backend.distribute: CNTK\'s MPI communicator did not '
                               'start (%s: %s); start the workers with python -m '
                               'keras_backend.distribute -n N script.py (mpiexec from '
                               'OpenMPI)' % (type(e).__name__, str(e).strip().split('\n')[0]))
        atexit.register(_finalize)
        comm.barrier()
    got_rank, got_size = int(distributed.Communicator.rank()), \
        int(distributed.Communicator.num_workers())
    if got_size != size:
        raise RuntimeError('keras_backend.distribute: mpiexec started %d workers, CNTK\'s '
                           'MPI communicator sees %d (is CNTK\'s libmpi.so.12 the MPI of '
                           'mpiexec?)' % (size, got_size))
    _S.comm, _S.workers = comm, comm.workers()
    _S.rank, _S.size = got_rank, got_size
    return got_rank, got_size


def _finalize():
    """``MPI_Finalize`` at exit (bounded: it waits for every worker)."""
    if _S.finalized:
        return
    _S.finalized = True
    from cntk.train import distributed
    with _Bounded('MPI_Finalize at exit'):
        distributed.Communicator.finalize()


def _aggregate(view, what):
    """Sum the ``NDArrayView`` ``view`` over the workers, in place."""
    from cntk import cntk_py
    if cntk_py.NDArrayView.shape(view).total_size() == 0:
        return view
    _stall.entered('allreduce')
    with _Bounded(what):
        _S.comm.aggregate_in_place([view], _S.workers)
    return view


# -- the graph op ---------------------------------------------------------------

def _user_function_class():
    from . import core
    C = core.C

    class _Allreduce(core._UserFunction):
        """Sum over the workers (``Communicator.aggregate_in_place``); its gradient is
        the same sum of the incoming gradient."""

        def __init__(self, x, name='allreduce', aliased=False):
            self._keep = [x if aliased else core._input_like(x)]
            super(_Allreduce, self).__init__([core._var(self._keep[0])], as_numpy=False,
                                             name=name)

        def _run(self, value, what):
            try:
                view = _aggregate(value.data().deep_clone(False), what)
                return C.cntk_py.Value(view)
            except Exception as e:
                core._PENDING_ERRORS.append(e)   # CNTK reports "SWIG director method error"
                raise

        def forward(self, argument, device=None, outputs_to_retain=None):
            return None, self._run(argument, 'allreduce')

        def backward(self, state, root_gradients):
            return self._run(root_gradients, 'allreduce (gradient)')

        def infer_outputs(self):
            i = self.inputs[0]
            return [C.output_variable(i.shape, i.dtype, i.dynamic_axes,
                                      needs_gradient=True)]

        def clone(self, cloned_inputs):
            return _Allreduce(cloned_inputs[0], self.name, aliased=True)

    return _Allreduce


_ALLREDUCE = []


def allreduce_tensor(K, x, average, state):
    """``_Allreduce`` (CNTK's ``aggregate_in_place``) of ``x``; the mean multiplies the
    sum by ``1 / size`` in the graph; float16 is summed in float32 (``C.cast``). ``K``, the
    adapter, is not needed: the engine's helpers are ``core``'s."""
    from . import core
    if not _ALLREDUCE:
        _ALLREDUCE.append(_user_function_class())
    C = core.C
    x = core._to_tensor(x)
    half = core._var(x).dtype == np.float16   # the communicator sums float32/float64 only
    if half:
        x = C.cast(x, np.float32)
    total = C.user_function(_ALLREDUCE[0](x)).output
    if average:
        total = C.element_times(total, core._constant_like(total, 1.0 / state.size))
    return C.cast(total, np.float16) if half else total


def allreduce_array(flat, average, state):
    """``aggregate_in_place`` of ``flat`` as an ``NDArrayView``: float32 for float32 and
    float16, float64 otherwise (CNTK's communicator sums float32/float64 only; integers
    are exact up to 2**53)."""
    import cntk as C
    dtype = flat.dtype
    work = np.float32 if dtype in (np.float32, np.float16) else np.float64
    view = C.NDArrayView.from_dense(np.ascontiguousarray(flat, dtype=work), device=C.cpu())
    try:
        out = _aggregate(view, 'allreduce of values').asarray()
    except RuntimeError as e:
        from ..distribute import _raise_if_lost
        _raise_if_lost(e)
        raise
    if average:
        out = out / state.size
    if dtype.kind in 'iu':
        out = np.rint(out)
    return out.astype(dtype)


def barrier(state):
    """``Communicator.barrier`` (MPI_Barrier)."""
    _stall.entered('barrier')
    with _Bounded('barrier'):
        _S.comm.barrier()


def lost_reason(error):
    """Why ``error`` means a lost peer, or None: an MPI failure CNTK reports (a hung
    peer never raises: the watchdog stops the worker)."""
    text = str(error).strip().split('\n')[0]
    if 'MPI' in text and ('error' in text.lower() or 'fail' in text.lower()):
        return '%s: %s' % (type(error).__name__, text[:300])
    return None


def float16_on_wire():
    """False: CNTK's communicator sums float32/float64 only, and the adapter holds a
    float16 cast in float32; ``Compression.fp16`` is left out here."""
    return False


def stop():
    """Nothing: MPI cannot start again once finalised, so ``MPI_Finalize`` runs at exit."""
