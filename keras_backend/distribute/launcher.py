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

Several hosts (``-H host1:N1,host2:N2``, as ``horovodrun``; ``-n`` may then be left out):
ranks are given host by host in that order (host1 gets ranks 0 .. N1-1), local ranks and
sizes per host.

* MPI engines: ``mpiexec -H`` with the same list (OpenMPI starts the remote ranks;
  ``--network-interface IFACE`` adds ``--mca btl_tcp_if_include IFACE --mca
  oob_tcp_if_include IFACE``) and ``-x`` for the forwarded variables below;
* TensorFlow and JAX: the launcher starts each host's workers itself: on this machine
  (a host named ``localhost``, ``127.x``, this machine's host name or one of its
  addresses) as without ``-H``; on another host through ``--ssh`` (default ``ssh``) as
  ``ssh -tt HOST 'cd CWD && exec env VAR=VALUE ... PYTHON -m
  keras_backend.distribute._worker script args'``, with the forwarded variables
  (:data:`FORWARDED`: ``KERAS_BACKEND*``, ``PYTHONPATH``, ``OMP_NUM_THREADS`` ...) and
  ``TF_CONFIG`` / the coordinator. The addresses in them: a remote host's name as
  written in ``-H``; this machine's: the IPv4 address of ``--network-interface`` when
  given, else its first non-loopback address when there are several hosts (127.0.0.1
  with one). Ports are chosen free on this machine (they must be free on the other
  hosts too). ``--network-interface`` also reaches every worker as
  ``KERAS_BACKEND_DISTRIBUTE_INTERFACE``.

Losing an ssh-started worker ends the run like losing a local one: the launcher kills
the ``ssh`` process group with SIGKILL; ``-tt`` gives the remote command a terminal, so
the remote sshd hangs it up and the remote worker (the session leader there, through
``exec``) gets SIGHUP and exits. Every host needs the same Python, keras_backend and
paths (the working directory and the script), ssh without a password (keys), and the
ports open between the hosts; see the README, "Training on several processes".

With ``--restarts R`` (:func:`supervise`) a failed job is started again, at most R times,
on the same number of workers (``--restart-size same``) or one fewer per failure
(``shrink``), never below ``--min-workers``; each worker reads the attempt number in
``KERAS_BACKEND_DISTRIBUTE_RESTART`` and resumes from its last commit
(:class:`keras_backend.distribute.State`; README, "When a worker is lost").
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import shlex
import tempfile
import time

from . import (ENGINES, ENV_COORDINATOR, ENV_LOCAL_RANK, ENV_RANK, ENV_SIZE, ENV_TIMEOUT,
               _configured_engine)
from . import rendezvous as _rendezvous
from .. import engines as _engines

ENV_PIDDIR = 'KERAS_BACKEND_DISTRIBUTE_PIDDIR'
ENV_LOCAL_SIZE = 'KERAS_BACKEND_DISTRIBUTE_LOCAL_SIZE'
ENV_INTERFACE = _rendezvous.ENV_INTERFACE
#: the variables (names, or prefixes ending in ``*``) a worker on another host gets from
#: this environment (through ssh, or ``mpiexec -x``)
FORWARDED = ('KERAS_BACKEND*', 'PYTHONPATH', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS',
             'TF_CPP_MIN_LOG_LEVEL', 'XLA_FLAGS', 'PYTENSOR_FLAGS', 'THEANO_FLAGS',
             'KERAS_HOME', 'TF_CONFIG')
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


def parse_hosts(text):
    """``-H``'s host list as ``[(host, slots)]``.

    Args:
        text: ``'host1:N1,host2:N2'`` (a host without ``:N`` has 1 slot; an IPv6 address
            in brackets, ``[fd00::2]:2``).

    Returns:
        list of ``(str, int)``, in the order given.

    Raises:
        ValueError: an empty host, a count that is not an integer >= 1, or a host named
            twice.

    Example:
        >>> parse_hosts('node1:2,node2')
        [('node1', 2), ('node2', 1)]
    """
    if not isinstance(text, str):
        raise TypeError('-H must be a str like host1:2,host2:2, got %r' % (text,))
    out = []
    for item in text.split(','):
        item = item.strip()
        host, slots = item, '1'
        if item.startswith('['):
            end = item.find(']')
            host, rest = item[1:end], item[end + 1:]
            if rest:
                slots = rest[1:] if rest.startswith(':') else ''
        elif ':' in item:
            host, slots = item.rsplit(':', 1)
        if not host or _bad_slots(slots):
            raise ValueError('-H %r: %r is not HOST or HOST:N with N >= 1' % (text, item))
        if host in [h for h, _ in out]:
            raise ValueError('-H %r: host %r is named twice' % (text, host))
        out.append((host, int(slots)))
    return out


def _bad_slots(slots):
    return not slots.isdigit() or int(slots) < 1


def is_local_host(host):
    """True when ``host`` names this machine: ``localhost``, a ``127.x`` or ``::1``
    address, its host name (short or full) or one of its interfaces' addresses (or a
    name that resolves to one)."""
    if _rendezvous.is_loopback(host) or host in ('localhost', '::1'):
        return True
    if _rendezvous._is_this_host(host):
        return True
    try:     # an address of this machine is one a socket can bind to
        infos = socket.getaddrinfo(host.strip('[]'), None, 0, socket.SOCK_STREAM)
    except (socket.error, OSError, UnicodeError):
        return False
    for family, _, _, _, sockaddr in infos:
        s = socket.socket(family, socket.SOCK_STREAM)
        try:
            s.bind((sockaddr[0], 0) + tuple(sockaddr[2:]))
            return True
        except (socket.error, OSError):
            pass
        finally:
            s.close()
    return False


def _forwarded(env):
    out = {}
    for key, value in env.items():
        for pattern in FORWARDED:
            if key == pattern or (pattern.endswith('*') and key.startswith(pattern[:-1])):
                out[key] = value
    return out


def remote_command(env, script, args, cwd=None):
    """The shell command an ssh-started worker runs on its host: ``cd CWD && exec env
    VAR=VALUE ... PYTHON -m keras_backend.distribute._worker script args``, with the
    variables of ``env`` that :data:`FORWARDED` names (a str, quoted for a POSIX shell)."""
    cwd = os.getcwd() if cwd is None else cwd
    variables = sorted(_forwarded(env).items())
    words = ['exec', 'env'] + ['%s=%s' % kv for kv in variables] + \
        _worker_command(script, args)
    return 'cd %s && %s' % (shlex.quote(cwd), ' '.join(shlex.quote(w) for w in words))


def _parser():
    p = argparse.ArgumentParser(
        prog='python -m keras_backend.distribute',
        description='Run N workers of a training script on this machine (or on the hosts '
                    'of -H), each on its '
                    'engine\'s collectives (keras_backend.distribute).')
    p.add_argument('-n', '--num-workers', type=int, default=None, metavar='N',
                   help='number of worker processes (>= 1); with -H, the sum of its slots '
                        '(the default)')
    p.add_argument('-H', '--hosts', default=None, metavar='HOST1:N1,HOST2:N2',
                   help='the hosts and how many workers each runs (as horovodrun -H); '
                        'default: N workers on this machine')
    p.add_argument('--network-interface', default=None, metavar='IFACE',
                   help='the network interface the workers reach each other on (its IPv4 '
                        'address for TensorFlow / JAX; btl/oob_tcp_if_include for MPI)')
    p.add_argument('--ssh', default='ssh', metavar='COMMAND',
                   help='the command that starts workers on another host (TensorFlow, '
                        'JAX): COMMAND -tt HOST REMOTE_COMMAND (default: ssh)')
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


def _host_addresses(hosts, network_interface):
    """The address of each host in the TensorFlow / JAX rendezvous (see the module
    docstring)."""
    local_ip = None
    if network_interface:
        local_ip = _rendezvous._interface_ipv4(network_interface)
        if local_ip is None:
            raise ValueError('--network-interface %r: no such interface with an IPv4 '
                             'address here; this machine has %s' % (
                                 network_interface, ', '.join('%s (%s)' % c for c in
                                                              _rendezvous.interfaces())))
    elif len(hosts) > 1:
        local_ip = _rendezvous.host_address(warn=True)
    out = []
    for host, _ in hosts:
        if is_local_host(host):
            out.append(local_ip or '127.0.0.1')
        else:
            out.append(host)
    return out


def launch(n, script, args=(), backend=None, timeout=None, deadline=None, mpiexec=None,
           env=None, hosts=None, network_interface=None, ssh='ssh'):
    """Run ``n`` workers of ``script`` and return the launcher's exit status (see the
    module docstring). ``env``: the workers' base environment (default: this one's).
    ``hosts``: ``-H``'s text or ``[(host, slots)]`` (``n`` None: their sum);
    ``network_interface``: an interface name; ``ssh``: the command (a str, split as a
    shell would) that starts workers on other hosts."""
    if isinstance(hosts, str):
        hosts = parse_hosts(hosts)
    if hosts is not None:
        total = sum(k for _, k in hosts)
        if n is None:
            n = total
        elif n != total:
            raise ValueError('-n %d does not match -H, whose hosts run %d workers'
                             % (n, total))
    if n is None:
        raise ValueError('give -n N (the number of workers) or -H host1:N1,...')
    if n < 1:
        raise ValueError('-n must be >= 1, got %d' % n)
    engine = _engines.canonical_backend(backend or _configured_engine())
    if engine not in ENGINES:
        raise ValueError('backend must be one of %s, got %r' % (', '.join(sorted(ENGINES)),
                                                                 engine))
    if not os.path.exists(script):
        raise ValueError('no such script: %r' % script)
    base = dict(os.environ if env is None else env)
    if hosts is None:
        hosts = [('localhost', n)]
    busiest = max(k for _, k in hosts)
    if busiest > 1 and not base.get('OMP_NUM_THREADS'):
        # the workers share this machine's cores: OpenMP / MKL thread pools of a core
        # each would oversubscribe them (CNTK, Theano's BLAS), as torchrun also avoids
        base['OMP_NUM_THREADS'] = str(max(1, (os.cpu_count() or 1) // busiest))
    if backend and not base.get('KERAS_BACKEND'):
        base['KERAS_BACKEND'] = engine
    if timeout is not None:
        base[ENV_TIMEOUT] = repr(float(timeout))
    if network_interface:
        base[ENV_INTERFACE] = network_interface
    several = len(hosts) > 1 or not is_local_host(hosts[0][0])
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
                   '-x', ENV_PIDDIR] + (['-x', ENV_TIMEOUT] if ENV_TIMEOUT in e else [])
            if several:
                cmd += ['-H', ','.join('%s:%d' % hk for hk in hosts)]
                for key in sorted(_forwarded(e)):
                    if key not in cmd:
                        cmd += ['-x', key]
            if network_interface:
                cmd += ['--mca', 'btl_tcp_if_include', network_interface,
                        '--mca', 'oob_tcp_if_include', network_interface]
                if not several:
                    cmd += ['-x', ENV_INTERFACE]
            cmd += _worker_command(script, args)
            job.procs.append(subprocess.Popen(cmd, env=e, start_new_session=True))
        else:
            # TF_CONFIG: a port per worker; a coordinator (JAX): one port for all
            ports = free_ports(n if start == _engines.WORKERS_TF_CONFIG else 1)
            addresses = _host_addresses(hosts, network_interface)
            where = [(h, a, local, k) for (h, k), a in zip(hosts, addresses)
                     for local in range(k)]          # rank -> (host, address, local, size)
            ssh_argv = shlex.split(ssh or 'ssh')
            for rank in range(n):
                host, address, local, local_size = where[rank]
                e = dict(base)
                e[ENV_RANK], e[ENV_SIZE], e[ENV_LOCAL_RANK] = str(rank), str(n), str(local)
                e[ENV_LOCAL_SIZE] = str(local_size)
                if start == _engines.WORKERS_TF_CONFIG:
                    e['TF_CONFIG'] = json.dumps({
                        'cluster': {'worker': [_rendezvous._host_port(where[r][1], p)
                                               for r, p in enumerate(ports)]},
                        'task': {'type': 'worker', 'index': rank}})
                else:
                    e[ENV_COORDINATOR] = _rendezvous._host_port(where[0][1], ports[0])
                if is_local_host(host):
                    cmd = _worker_command(script, args)
                else:
                    cmd = ssh_argv + ['-tt', host, remote_command(e, script, args)]
                job.procs.append(subprocess.Popen(cmd, env=e, start_new_session=True))
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
        **kwargs: :func:`launch`'s ``backend``, ``timeout``, ``mpiexec``, ``hosts``,
            ``network_interface``, ``ssh`` (with ``hosts``, ``n`` may be None: their sum;
            ``restart_size='shrink'`` needs ``n`` without ``hosts``).

    Returns:
        0 when an attempt finishes; else the last attempt's status (124 at the deadline).

    Raises:
        ValueError: a bad ``restarts``, ``min_workers`` or ``restart_size`` (and
            :func:`launch`'s errors).

    Example:
        >>> supervise(2, 'train.py', restarts=3)       # doctest: +SKIP
        0
    """
    hosts = kwargs.get('hosts')
    if hosts is not None:
        total = sum(k for _, k in (parse_hosts(hosts) if isinstance(hosts, str) else hosts))
        if n is None:
            n = total
        if restart_size == 'shrink':
            raise ValueError('--restart-size shrink needs -n without -H (which worker of '
                             'which host to drop is not decided here); use same')
    if n is None:
        raise ValueError('give -n N (the number of workers) or -H host1:N1,...')
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
                         mpiexec=args.mpiexec, hosts=args.hosts,
                         network_interface=args.network_interface, ssh=args.ssh)
    except (ValueError, RuntimeError) as e:
        _say('error: %s' % e)
        return 2
