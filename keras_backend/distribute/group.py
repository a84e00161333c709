"""The process group of a data-parallel job: which worker this process is, how many there
are, the engine whose collectives join them, and how they start (:func:`init`) and stop
(:func:`shutdown`); :class:`WorkerLost` when one of them is gone.

The public names are gathered in :mod:`keras_backend.distribute`; the collectives over the
group are in :mod:`keras_backend.distribute.horovod`.
"""
import os
import sys

import numpy as np

from .. import engines as _engines
from . import rendezvous as _rendezvous
from . import stall as _stall

ENGINES = dict((name, _engines.collectives_module(name)) for name in _engines.names())

#: the environment the launcher gives each worker (MPI engines: mpiexec's own variables)
ENV_RANK = 'KERAS_BACKEND_DISTRIBUTE_RANK'
ENV_SIZE = 'KERAS_BACKEND_DISTRIBUTE_SIZE'
ENV_LOCAL_RANK = 'KERAS_BACKEND_DISTRIBUTE_LOCAL_RANK'
ENV_TIMEOUT = 'KERAS_BACKEND_DISTRIBUTE_TIMEOUT'
ENV_COORDINATOR = 'KERAS_BACKEND_DISTRIBUTE_COORDINATOR'
ENV_COLLECTIVES = 'KERAS_BACKEND_DISTRIBUTE_COLLECTIVES'
#: the values of ``init``'s ``collectives`` (and of $KERAS_BACKEND_DISTRIBUTE_COLLECTIVES)
COLLECTIVES = ('auto', 'engine', 'mpi')
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
    path = None          # the collective path in use ('engine' or 'mpi'; None alone)
    rank = 0
    size = 1
    local_rank = 0
    local_size = 1
    timeout = DEFAULT_TIMEOUT
    active = None        # the adapter variable of this worker's active flag (join)
    rounds = 0           # join rounds so far (the same count on every worker)
    last_step = None     # (callable, inputs) of the last joinable step
    one_hot = None       # the adapter variable one_hot(rank) (broadcast, allgather)


def _configured_engine():
    """The engine of the adapter in use: one already imported, else the configuration's
    (KERAS_BACKEND, keras.json), read without importing an engine."""
    loaded = [e for e in _engines.names() if _engines.adapter_module(e) in sys.modules]
    if len(loaded) == 1:
        return loaded[0]
    from ..config_file import resolve_settings
    settings = resolve_settings(write_default=False)[0]
    return _engines.canonical_backend(settings['backend'])


def requested_collectives(collectives=None, fname='init'):
    """``collectives`` checked, else $KERAS_BACKEND_DISTRIBUTE_COLLECTIVES, else 'auto'
    (one of :data:`COLLECTIVES`); ValueError / TypeError name the argument."""
    where = 'collectives'
    if collectives is None:
        collectives = os.environ.get(ENV_COLLECTIVES, '').strip().lower() or 'auto'
        where = ENV_COLLECTIVES
    if not isinstance(collectives, str):
        raise TypeError('%s: collectives must be one of %s, got %r'
                        % (fname, ', '.join(COLLECTIVES), collectives))
    if collectives not in COLLECTIVES:
        raise ValueError('%s: %s must be one of %s, got %r'
                         % (fname, where, ', '.join(COLLECTIVES), collectives))
    return collectives


def choose_path(offered, requested, fname='init'):
    """The collective path of a job: ``requested`` ('auto', 'engine' or 'mpi') among the
    engine's ``offered`` paths (its ``paths()``, the preferred first). 'auto' takes MPI
    where the engine offers only MPI, or prefers it and the process runs under MPI with
    mpi4py importable; else the engine's own. 'engine' on an engine whose only path is
    MPI (Theano/PyTensor, CNTK: MPI is their own) is that path."""
    if requested == 'auto':
        if offered == ('mpi',):
            return 'mpi'
        if offered[0] == 'mpi' and _rendezvous.under_mpi() and _rendezvous.available() is None:
            return 'mpi'
        return 'engine' if 'engine' in offered else offered[0]
    if requested == 'engine' and 'engine' not in offered:
        return offered[0]      # an engine whose own collectives are MPI's (Theano, CNTK)
    if requested not in offered:
        raise ValueError('%s: collectives=%r, but this engine offers %s'
                         % (fname, requested, ', '.join(offered)))
    return requested


def init(timeout=None, engine=None, stall_check=None, collectives=None):
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
        stall_check: seconds after which worker 0 writes one line on stderr naming the
            workers that have not reached a collective the others wait in (float >= 0;
            0: no check). Default: ``$KERAS_BACKEND_DISTRIBUTE_STALL_CHECK_SECONDS``,
            else 60. Worker 0's value decides for all
            (:mod:`keras_backend.distribute.stall`).
        collectives: the collective path (str): ``'engine'`` (the engine's own:
            TensorFlow's ``CollectiveReduceV2``, JAX's ``lax.psum`` over gloo), ``'mpi'``
            (MPI through mpi4py; the only path of Theano/PyTensor and CNTK) or ``'auto'``:
            MPI on a CPU machine when the job runs under MPI (``mpirun``, ``srun
            --mpi=pmix``, the launcher with ``--collectives mpi``, which ``auto`` picks
            where ``mpiexec`` and mpi4py are installed), the engine's own elsewhere (a
            GPU: NCCL). Default: ``$KERAS_BACKEND_DISTRIBUTE_COLLECTIVES``, else
            ``'auto'``. :func:`collective_path` says which one runs.

    Returns:
        None. Calling it again with the same arguments does nothing.

    Raises:
        ValueError: ``timeout`` is not a positive number, ``stall_check`` (or its
            variable) is negative, ``engine`` is unknown, ``collectives`` (or its
            variable) is not one of 'auto', 'engine', 'mpi' or not a path the engine
            offers, or the placement variables are not integers, out of range or
            inconsistent.
        TypeError: ``timeout`` or ``stall_check`` is not a number, ``collectives`` not a
            string.
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
    stall_check = _stall.stall_seconds(stall_check)
    requested = requested_collectives(collectives)
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
    impl = path = None
    if size_ > 1:
        import importlib
        impl = importlib.import_module(ENGINES[engine])
        path = choose_path(tuple(impl.paths()), requested)
        try:
            if path == 'engine':
                # TensorFlow's TF_CONFIG, JAX's coordinator: from mpirun's ranks over MPI,
                # or from Slurm's node list, unless our launcher set them
                # (rendezvous.rendezvous)
                _rendezvous.rendezvous(_engines.worker_start(engine), place, float(timeout))
            elif not _rendezvous.under_mpi():
                raise RuntimeError(
                    'keras_backend.distribute: the MPI collectives need the workers started '
                    'by MPI: mpirun -n N, srun --mpi=pmix, or python -m '
                    'keras_backend.distribute -n N --collectives mpi')
        finally:
            # the port this worker reserved for its server (the rendezvous over MPI, Ray's
            # actors) is let go only now, with the engine imported: it binds it next
            _rendezvous.release_ports()
        got = impl.start(rank_, size_, float(timeout), path)
        if got is not None:
            rank_, size_ = got
    _State.engine = engine
    _State.impl = impl
    _State.path = path
    _State.rank, _State.size = rank_, size_
    _State.local_rank, _State.local_size = local_rank_, local_size_
    _State.timeout = float(timeout)
    _State.initialized = True
    if impl is not None:
        # the stall check's side channel: one broadcast of worker 0's monitor address
        _stall.start(rank_, size_, stall_check, place,
                     lambda flat: impl.allreduce_array(flat, False, _State))


def shutdown():
    """Leave the group: stop the engine's collective runtime (MPI: nothing; it finalises
    at exit). After it, ``is_initialized()`` is False and ``init`` may be called again
    with one process."""
    impl = _State.impl
    _stall.stop()
    _State.initialized = False
    _State.impl = None
    _State.path = None
    _State.active, _State.rounds, _State.last_step, _State.one_hot = None, 0, None, None
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


def collective_path():
    """The collective path in use: 'engine' (the engine's own collectives), 'mpi', or None
    with one process. Raises ``ValueError`` before :func:`init`."""
    _need_init('collective_path')
    return _State.path


def _adapter():
    """The adapter module of the engine in use (imported on first use)."""
    import importlib
    return importlib.import_module(_engines.adapter_module(_State.engine))



def barrier():
    """Wait until every worker reaches this call.

    Raises:
        WorkerLost: a peer died, or did not arrive within ``init``'s timeout.
    """
    _need_init('barrier')
    if _State.size > 1:
        _State.impl.barrier(_State)



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


