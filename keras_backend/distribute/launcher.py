"""The launcher: ``python -m keras_backend.distribute -n N [options] script.py [args]``.

It starts N workers of ``script.py`` on this machine, each with what its engine needs
to find the others:

* TensorFlow: ``TF_CONFIG`` (a cluster of N workers on free loopback ports, this task);
* JAX: the coordinator address (a free loopback port) for ``jax.distributed``;
* Theano / PyTensor and CNTK: ``mpiexec -n N`` (OpenMPI), which gives each rank its
  ``OMPI_COMM_WORLD_*`` variables;

and, for every engine, ``KERAS_BACKEND_DISTRIBUTE_RANK/SIZE/LOCAL_RANK`` (the MPI
engines read mpiexec's), ``KERAS_BACKEND_DISTRIBUTE_TIMEOUT`` (``--timeout``) and, unless
set, ``OMP_NUM_THREADS`` = the machine's cores divided among the workers. Each
worker runs in a process group of its own. When a worker exits with a non-zero status
(or is killed), or ``--deadline`` passes, the launcher kills every other worker's process
group with SIGKILL (JAX's collectives ignore SIGTERM), reports ``WorkerLost`` naming the
worker, and exits non-zero: the failing worker's status, or 124 at the deadline. When
every worker exits with 0, so does the launcher.

With ``--restarts R`` (:func:`supervise`) a failed job is started again, at most R times,
on the same number of workers (``--restart-size same``) or one fewer per failure
(``shrink``), never below ``--min-workers``; each worker reads the attempt number in
``KERAS_BACKEND_DISTRIBUTE_RESTART`` and resumes from its last commit
(:class:`keras_backend.distribute.State`; README, "When a worker is lost").

Several machines (hostfiles, network interfaces) are not launched from here: start the
script with ``mpirun`` or ``srun`` (:mod:`keras_backend.distribute.rendezvous`); see the
README, "Training on several processes".
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from . import (ENGINES, ENV_COORDINATOR, ENV_LOCAL_RANK, ENV_RANK, ENV_SIZE, ENV_TIMEOUT,
               _configured_engine)
from .. import engines as _engines

ENV_PIDDIR = 'KERAS_BACKEND_DISTRIBUTE_PIDDIR'
#: the engines whose workers run under ``mpiexec -n N`` (the ``workers`` column of the
#: engine table, :data:`keras_backend.engines.TABLE`)
MPI_ENGINES = tuple(name for name in _engines.names()
                    if _engines.worker_start(name) == _engines.WORKERS_MPIEXEC)


def free_ports(n):
    """``n`` distinct free TCP ports on 127.0.0.1 (bound once, then released)."""
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(('127.0.0.1', 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def _parser():
    p = argparse.ArgumentParser(
        prog='python -m keras_backend.distribute',
        description='Run N workers of a training script on this machine, each on its '
                    'engine\'s collectives (keras_backend.distribute).')
    p.add_argument('-n', '--num-workers', type=int, required=True, metavar='N',
                   help='number of worker processes (>= 1)')
    p.add_argument('--backend', default=None,
                   help='engine: %s (default: KERAS_BACKEND or keras.json)'
                        % ', '.join(_engines.names()))
    p.add_argument('--timeout', type=float, default=None, metavar='SECONDS',
                   help='how long a collective waits for a slow worker before it raises '
                        'WorkerLost (default 300)')
    p.add_argument('--deadline', type=float, default=None, metavar='SECONDS',
                   help='kill every worker and exit 124 after this long (default: none)')
    p.add_argument('--mpiexec', default=None,
                   help='the mpiexec of the MPI engines (default: mpiexec on PATH)')
    _restart_arguments(p)
    p.add_argument('script', help='the Python script every worker runs')
    p.add_argument('args', nargs=argparse.REMAINDER, help='its arguments')
    return p


def _say(msg):
    sys.stderr.write('keras_backend.distribute: %s\n' % msg)
    sys.stderr.flush()


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:   # a zombie (exited, not yet reaped by its parent) counts as gone
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (IOError, OSError, IndexError):
        return True


class _Job(object):
    """The workers of one launch and how to watch and stop them."""

    def __init__(self, engine, n, piddir):
        self.engine = engine
        self.n = n
        self.piddir = piddir
        self.procs = []        # Popen: N workers, or one mpiexec

    def worker_pids(self):
        """{rank: pid} of the workers that registered (each its own process group)."""
        pids = {}
        for name in os.listdir(self.piddir):
            if name.endswith('.pid'):
                try:
                    with open(os.path.join(self.piddir, name)) as f:
                        pids[int(name[:-4])] = int(f.read().strip())
                except (ValueError, IOError, OSError):
                    pass
        return pids

    def exit_status(self, rank):
        path = os.path.join(self.piddir, '%d.exit' % rank)
        try:
            with open(path) as f:
                return int(f.read().strip())
        except (ValueError, IOError, OSError):
            return None

    def kill_all(self):
        for pid in self.worker_pids().values():
            _kill_group(pid)
        for p in self.procs:
            _kill_group(p.pid)
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        # a worker whose registration raced with the kill
        for pid in self.worker_pids().values():
            _kill_group(pid)

    def failure(self):
        """(rank or None, status) of the first failure seen, or None; ('done', 0) when
        every worker finished well."""
        if self.engine in MPI_ENGINES:
            pids = self.worker_pids()
            for rank, pid in sorted(pids.items()):
                status = self.exit_status(rank)
                if status is not None and status != 0:
                    return rank, status
                if status is None and not _alive(pid):
                    return rank, -9       # killed: it never wrote its status
            rc = self.procs[0].poll()
            if rc is not None:
                if rc != 0:
                    return None, rc
                return 'done', 0
            return None
        finished = 0
        for rank, p in enumerate(self.procs):
            rc = p.poll()
            if rc is None:
                continue
            if rc != 0:
                return rank, rc
            finished += 1
        if finished == len(self.procs):
            return 'done', 0
        return None


def _worker_command(script, args):
    return [sys.executable, '-m', 'keras_backend.distribute._worker', script] + list(args)


def launch(n, script, args=(), backend=None, timeout=None, deadline=None, mpiexec=None,
           env=None):
    """Run ``n`` workers of ``script`` and return the launcher's exit status (see the
    module docstring). ``env``: the workers' base environment (default: this one's)."""
    if n < 1:
        raise ValueError('-n must be >= 1, got %d' % n)
    engine = _engines.canonical_backend(backend or _configured_engine())
    if engine not in ENGINES:
        raise ValueError('backend must be one of %s, got %r' % (', '.join(sorted(ENGINES)),
                                                                 engine))
    if not os.path.exists(script):
        raise ValueError('no such script: %r' % script)
    base = dict(os.environ if env is None else env)
    if n > 1 and not base.get('OMP_NUM_THREADS'):
        # the workers share this machine's cores: OpenMP / MKL thread pools of a core
        # each would oversubscribe them (CNTK, Theano's BLAS), as torchrun also avoids
        base['OMP_NUM_THREADS'] = str(max(1, (os.cpu_count() or 1) // n))
    if backend and not base.get('KERAS_BACKEND'):
        base['KERAS_BACKEND'] = engine
    if timeout is not None:
        base[ENV_TIMEOUT] = repr(float(timeout))
    piddir = tempfile.mkdtemp(prefix='keras_backend_distribute_')
    base[ENV_PIDDIR] = piddir
    job = _Job(engine, n, piddir)
    started = time.time()
    try:
        start = _engines.worker_start(engine)
        if start == _engines.WORKERS_MPIEXEC:
            exe = mpiexec or shutil.which('mpiexec')
            if not exe:
                raise RuntimeError('the %s engine runs its workers under mpiexec, which is not '
                                   'on PATH: install OpenMPI (Debian: apt-get install '
                                   'openmpi-bin libopenmpi-dev)' % engine)
            e = dict(base)
            if hasattr(os, 'geteuid') and os.geteuid() == 0:
                e.setdefault('OMPI_ALLOW_RUN_AS_ROOT', '1')
                e.setdefault('OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1')
            # containers often forbid the cross-memory attach of OpenMPI's shared memory
            e.setdefault('OMPI_MCA_btl_vader_single_copy_mechanism', 'none')
            cmd = [exe, '-n', str(n), '--oversubscribe', '--bind-to', 'none',
                   '-x', ENV_PIDDIR] + (['-x', ENV_TIMEOUT] if ENV_TIMEOUT in e else []) + \
                _worker_command(script, args)
            job.procs.append(subprocess.Popen(cmd, env=e, start_new_session=True))
        else:
            # TF_CONFIG: a port per worker; a coordinator (JAX): one port for all
            ports = free_ports(n if start == _engines.WORKERS_TF_CONFIG else 1)
            for rank in range(n):
                e = dict(base)
                e[ENV_RANK], e[ENV_SIZE], e[ENV_LOCAL_RANK] = str(rank), str(n), str(rank)
                if start == _engines.WORKERS_TF_CONFIG:
                    e['TF_CONFIG'] = json.dumps({
                        'cluster': {'worker': ['127.0.0.1:%d' % p for p in ports]},
                        'task': {'type': 'worker', 'index': rank}})
                else:
                    e[ENV_COORDINATOR] = '127.0.0.1:%d' % ports[0]
                job.procs.append(subprocess.Popen(_worker_command(script, args), env=e,
                                                  start_new_session=True))
        status = _watch(job, started, deadline)
    except BaseException:
        job.kill_all()
        raise
    finally:
        shutil.rmtree(piddir, ignore_errors=True)
    return status


def _watch(job, started, deadline):
    stop = {'signal': None}

    def on_signal(signum, frame):
        stop['signal'] = signum
    old = {}
    for s in (signal.SIGINT, signal.SIGTERM):
        try:
            old[s] = signal.signal(s, on_signal)
        except ValueError:      # not the main thread
            pass
    try:
        while True:
            if stop['signal'] is not None:
                _say('stopped by signal %d; killing every worker' % stop['signal'])
                job.kill_all()
                return 128 + stop['signal']
            got = job.failure()
            if got is not None:
                rank, status = got
                if rank == 'done':
                    return 0
                who = 'a worker' if rank is None else 'worker %d' % rank
                how = 'was killed' if status < 0 else 'exited with status %d' % status
                _LAST_FAILURE.update(what='%s %s' % (who, how), restartable=True)
                _say('WorkerLost: %s of %d %s; killing the others (SIGKILL)' % (who, job.n, how))
                job.kill_all()
                return status if status > 0 else 1
            if deadline is not None and time.time() - started > deadline:
                _say('WorkerLost: the deadline of %g s passed; killing every worker (SIGKILL)'
                     % deadline)
                job.kill_all()
                return 124
            time.sleep(0.1)
    finally:
        for s, h in old.items():
            signal.signal(s, h)


# -- supervised restarts (README, "When a worker is lost") -----------------------------

ENV_RESTART = 'KERAS_BACKEND_DISTRIBUTE_RESTART'
RESTART_SIZES = ('same', 'shrink')
#: what ended the last launch: set by _watch when a worker failed
_LAST_FAILURE = {}


def _restart_arguments(p):
    p.add_argument('--restarts', type=int, default=0, metavar='R',
                   help='when a worker dies or hangs, stop every worker and start the job '
                        'again, at most R times (default 0: fail at once); each worker '
                        'finds the attempt number in $%s' % ENV_RESTART)
    p.add_argument('--min-workers', type=int, default=1, metavar='M',
                   help='never restart on fewer than M workers (default 1)')
    p.add_argument('--restart-size', choices=RESTART_SIZES, default='same',
                   help='the workers of a restart: "same" (default: the lost worker\'s slot '
                        'comes back, as for a killed process on a live machine) or "shrink" '
                        '(one fewer per lost worker: its host is gone)')


def supervise(n, script, args=(), restarts=0, min_workers=1, restart_size='same',
              deadline=None, env=None, **kwargs):
    """:func:`launch`, started again after a failure, at most ``restarts`` times.

    Each attempt gets ``$KERAS_BACKEND_DISTRIBUTE_RESTART`` (0, 1, ...), from which a
    script resumes its last commit (:class:`keras_backend.distribute.State`). A failure
    (a worker that exits non-zero, is killed, or raises WorkerLost because a peer hung)
    stops every worker as :func:`launch` does; then, while restarts remain, one line
    (``restart k of R``, what was lost, the time) goes to stderr and the job starts again
    on ``n`` workers (``restart_size='same'``) or one fewer per failure (``'shrink'``).
    The deadline, a signal to the launcher or a failure to start is not restarted.

    Args:
        n: int >= 1, the workers of the first attempt.
        script, args: as :func:`launch`.
        restarts: int >= 0.
        min_workers: int, 1 <= min_workers <= n: below it the job fails.
        restart_size: 'same' or 'shrink'.
        deadline: seconds for the whole job, every attempt included (None: none).
        env: the workers' base environment (default: this one's).
        **kwargs: :func:`launch`'s ``backend``, ``timeout``, ``mpiexec``.

    Returns:
        0 when an attempt finishes; else the last attempt's status (124 at the deadline).

    Raises:
        ValueError: a bad ``restarts``, ``min_workers`` or ``restart_size`` (and
            :func:`launch`'s errors).

    Example:
        >>> supervise(2, 'train.py', restarts=3)       # doctest: +SKIP
        0
    """
    for name, v in (('restarts', restarts), ('min_workers', min_workers)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError('--%s must be an int, got %r' % (name.replace('_', '-'), v))
    if restarts < 0:
        raise ValueError('--restarts must be >= 0, got %d' % restarts)
    if not 1 <= min_workers <= max(n, 1):
        raise ValueError('--min-workers must be in 1 .. -n (%d), got %d' % (n, min_workers))
    if restart_size not in RESTART_SIZES:
        raise ValueError('--restart-size must be one of %s, got %r'
                         % (', '.join(RESTART_SIZES), restart_size))
    base = dict(os.environ if env is None else env)
    started = time.time()
    workers, attempt = n, 0
    while True:
        base[ENV_RESTART] = str(attempt)
        _LAST_FAILURE.clear()
        left = None if deadline is None else max(0.0, deadline - (time.time() - started))
        status = launch(workers, script, args, deadline=left, env=base, **kwargs)
        if status == 0 or restarts == 0:
            return status
        if not _LAST_FAILURE.get('restartable'):
            return status
        what = _LAST_FAILURE.get('what', 'a worker was lost')
        if attempt >= restarts:
            _say('WorkerLost: %s; no restart left (%d of %d used); the job fails'
                 % (what, attempt, restarts))
            return status
        after = workers - 1 if restart_size == 'shrink' else workers
        if after < min_workers:
            _say('WorkerLost: %s; %d worker(s) would remain, fewer than --min-workers %d; '
                 'the job fails' % (what, after, min_workers))
            return status
        attempt += 1
        _say('restart %d of %d at %s (%.1f s into the job): %s; starting %d worker(s) from '
             'the last commit' % (attempt, restarts, time.strftime('%H:%M:%S'),
                                  time.time() - started, what, after))
        workers = after


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        return supervise(args.num_workers, args.script, args.args, restarts=args.restarts,
                         min_workers=args.min_workers, restart_size=args.restart_size,
                         backend=args.backend, timeout=args.timeout, deadline=args.deadline,
                         mpiexec=args.mpiexec)
    except (ValueError, RuntimeError) as e:
        _say('error: %s' % e)
        return 2
