"""The launcher: ``python -m keras_backend.distribute -n N [options] script.py [args]``.

It starts N workers of ``script.py`` on this machine, each with what its engine needs
to find the others:

* TensorFlow: ``TF_CONFIG`` (a cluster of N workers on free loopback ports, this task);
* JAX: the coordinator address (a free loopback port) for ``jax.distributed``;
* Theano / PyTensor and CNTK: ``mpiexec -n N`` (OpenMPI), which gives each rank its
  ``OMPI_COMM_WORLD_*`` variables;
* TensorFlow and JAX on their MPI path (``--collectives mpi``; ``auto``, the default,
  takes it where ``mpiexec`` and mpi4py are installed and the machine has no GPU):
  ``mpiexec -n N`` as for the MPI engines, and
  ``KERAS_BACKEND_DISTRIBUTE_COLLECTIVES`` = the path chosen, for ``init`` to take;

and, for every engine, ``KERAS_BACKEND_DISTRIBUTE_RANK/SIZE/LOCAL_RANK`` (the MPI
engines read mpiexec's), ``KERAS_BACKEND_DISTRIBUTE_TIMEOUT`` (``--timeout``),
``KERAS_BACKEND_DISTRIBUTE_SECRET`` (the job's secret, drawn for each launch: the stall
check's side channel admits only its holders; never on a command line), on one host
``KERAS_BACKEND_DISTRIBUTE_ADDRESS=127.0.0.1`` unless set (the side channels listen on
the loopback only) and, unless set, ``OMP_NUM_THREADS`` = the machine's cores divided
among the workers.

CPU binding (``--bind-to core``, the default): on one host, two or more workers each run
on their own share of the CPUs the launcher may use (``cpus // workers`` consecutive ones;
``KERAS_BACKEND_DISTRIBUTE_CPUS``, a list such as ``0-7``, sets the CPUs to divide, also
for one worker), set between fork and exec (an MPI rank's parent binds itself, and its
worker inherits it). TensorFlow's and XLA's CPU thread pools are sized from the CPUs a
process may use, which ``OMP_NUM_THREADS`` does not reach: unbound, two JAX workers on 2
cores each ran a pool of 2 threads. With more workers than CPUs, or ``--bind-to none``,
nothing is bound.

Supervision (:mod:`keras_backend.distribute._supervision`). Each worker runs in a process
group (and session) of its own. Workers die with the launcher however it dies: every
process it starts gets ``PR_SET_PDEATHSIG`` = SIGKILL (Linux); every worker on this
machine holds a connection to the launcher's Unix socket and kills its own process group
when the launcher's end closes; and a reaper process, in a session of its own, kills
every registered process group when the launcher vanishes without saying it is done.
SIGINT, SIGTERM and SIGHUP make the launcher kill every worker and exit with 128 + the
signal, also between two attempts of ``--restarts`` (no further attempt starts). When a
worker exits with a non-zero status (or is killed), or ``--deadline`` passes, the
launcher kills every other worker's process group with SIGKILL (JAX's collectives ignore
SIGTERM), reports ``WorkerLost`` naming the worker, and exits non-zero: the failing
worker's status (128 + its signal when a signal ended it), or 124 at the deadline. The
worker named is the first to end badly: the workers' connections close the moment their
processes end (each worker's sits on a high descriptor, which the kernel releases before
the worker's other connections), so the launcher sees the ends in the order they
happened (not the lowest rank dead at its next look); among the ends seen within 20 ms
of the first failure, a worker killed by a signal other than SIGTERM, SIGINT or SIGHUP
(which supervisors send to stop one) comes first (a peer that exits by itself after the
loss took time to notice it), then the order seen. An MPI rank runs as the child of a small parent process that mpiexec starts,
which tells the launcher the rank's status and signal (mpiexec reaps its ranks). When
every worker exits with 0, so does the launcher.

Several hosts (``-H host1:N1,host2:N2``, as ``horovodrun``; ``-n`` may then be left out):
ranks are given host by host in that order (host1 gets ranks 0 .. N1-1), local ranks and
sizes per host.

Each host of ``-H`` is a host name (letters, digits, ``-``, ``_``, ``.``; not starting
with ``-``), an IPv4 address or an IPv6 address in brackets: a name such as
``-oProxyCommand=...`` is refused before anything starts.

* MPI engines: ``mpiexec -H`` with the same list (OpenMPI starts the remote ranks;
  ``--network-interface IFACE`` adds ``--mca btl_tcp_if_include IFACE --mca
  oob_tcp_if_include IFACE``) and ``-x`` for the forwarded variables below;
* TensorFlow and JAX: the launcher starts each host's workers itself: on this machine
  (a host named ``localhost``, ``127.x``, this machine's host name or one of its
  addresses) as without ``-H``; on another host through ``--ssh`` (default ``ssh``) as
  ``ssh -tt -- HOST 'cd CWD && exec env VAR=VALUE ... PYTHON -m
  keras_backend.distribute._worker script args'``, with the forwarded variables
  (:data:`FORWARDED`: ``KERAS_BACKEND*``, ``PYTHONPATH``, ``OMP_NUM_THREADS`` ...; not the
  job's secret, which would show on the command line) and ``TF_CONFIG`` / the
  coordinator. The addresses in them: a remote host's name as
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
import binascii
import json
import os
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import shlex
import tempfile
import threading
import time

from . import (ENGINES, ENV_COORDINATOR, ENV_LOCAL_RANK, ENV_RANK, ENV_SIZE, ENV_TIMEOUT,
               _configured_engine)
from . import _supervision
from . import group as _group
from . import rendezvous as _rendezvous
from .. import engines as _engines

ENV_PIDDIR = _supervision.ENV_PIDDIR
ENV_SECRET = _rendezvous.ENV_SECRET
ENV_LOCAL_SIZE = 'KERAS_BACKEND_DISTRIBUTE_LOCAL_SIZE'
ENV_CPUS = _supervision.ENV_CPUS
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


#: ``n`` distinct TCP ports free on every address of this host (:func:`rendezvous.free_ports`)
free_ports = _rendezvous.free_ports


def parse_hosts(text):
    """``-H``'s host list as ``[(host, slots)]``.

    Args:
        text: ``'host1:N1,host2:N2'`` (a host without ``:N`` has 1 slot; an IPv6 address
            in brackets, ``[fd00::2]:2``). A host is a host name (letters, digits, ``-``,
            ``_`` and ``.``, not starting with ``-`` or ``.``), an IPv4 address or an IPv6
            address in brackets: nothing else reaches ssh's or mpiexec's command line.

    Returns:
        list of ``(str, int)``, in the order given.

    Raises:
        ValueError: an empty host, a host that is not one of the above (``-oProxyCommand=x``),
            a count that is not an integer >= 1, or a host named twice.

    Example:
        >>> parse_hosts('node1:2,node2')
        [('node1', 2), ('node2', 1)]
        >>> parse_hosts('-oProxyCommand=x')
        Traceback (most recent call last):
        ...
        ValueError: -H '-oProxyCommand=x': '-oProxyCommand=x' is not a host name, an IPv4 address or an IPv6 address in brackets (a host name holds letters, digits, "-", "_" and "." only and does not start with "-" or ".")
    """
    if not isinstance(text, str):
        raise TypeError('-H must be a str like host1:2,host2:2, got %r' % (text,))
    out = []
    for item in text.split(','):
        item = item.strip()
        host, slots, bracketed = item, '1', False
        if item.startswith('['):
            end = item.find(']')
            if end < 0:
                raise ValueError('-H %r: %r opens "[" without its "]"' % (text, item))
            host, rest, bracketed = item[1:end], item[end + 1:], True
            if rest:
                slots = rest[1:] if rest.startswith(':') else ''
        elif ':' in item:
            host, slots = item.rsplit(':', 1)
        if not host or _bad_slots(slots):
            raise ValueError('-H %r: %r is not HOST or HOST:N with N >= 1' % (text, item))
        if not (_is_ipv6(host) if bracketed else _HOST_NAME.match(host)):
            raise ValueError('-H %r: %r is not a host name, an IPv4 address or an IPv6 '
                             'address in brackets (a host name holds letters, digits, "-", '
                             '"_" and "." only and does not start with "-" or ".")'
                             % (text, host))
        if host in [h for h, _ in out]:
            raise ValueError('-H %r: host %r is named twice' % (text, host))
        out.append((host, int(slots)))
    return out


#: a host name or an IPv4 address as -H takes it (RFC 952/1123 labels, "_" tolerated)
_HOST_NAME = re.compile(r'^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_.])?$')


def _is_ipv6(host):
    address, _, zone = host.partition('%')
    if zone and not re.match(r'^[A-Za-z0-9_.-]+$', zone):
        return False
    try:
        socket.inet_pton(socket.AF_INET6, address)
    except (socket.error, OSError, ValueError):
        return False
    return True


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
    variables of ``env`` that :data:`FORWARDED` names but the job's secret (a str, quoted
    for a POSIX shell)."""
    cwd = os.getcwd() if cwd is None else cwd
    # the job's secret stays off command lines (every user of a host may read them); the
    # stall check's side channel takes worker 0's from its broadcast
    variables = sorted((k, v) for k, v in _forwarded(env).items() if k != ENV_SECRET)
    words = ['exec', 'env'] + ['%s=%s' % kv for kv in variables] + \
        _worker_command(script, args, remote=True)
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
                        'JAX): COMMAND -tt -- HOST REMOTE_COMMAND (default: ssh)')
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
    p.add_argument('--collectives', default=None, choices=_group.COLLECTIVES,
                   help='TensorFlow and JAX: their own collectives (engine), MPI (mpi, the '
                        'workers start under mpiexec), or auto: MPI where mpiexec and mpi4py '
                        'are installed and there is no GPU (default: '
                        '$KERAS_BACKEND_DISTRIBUTE_COLLECTIVES, else auto)')
    p.add_argument('--bind-to', default='core', choices=BIND_TO,
                   help='core: each worker on this machine runs on its own share of the '
                        'CPUs (the CPUs it may use divided among the workers, when there '
                        'are at least as many; $%s sets the list), so that the engines\' '
                        'thread pools do not compete; none: no binding (default: core)'
                        % ENV_CPUS)
    _restart_arguments(p)
    p.add_argument('script', help='the Python script every worker runs')
    p.add_argument('args', nargs=argparse.REMAINDER, help='its arguments')
    return p


def _say(msg):
    try:       # after SIGHUP the terminal may be gone: the workers are stopped all the same
        sys.stderr.write('keras_backend.distribute: %s\n' % msg)
        sys.stderr.flush()
    except (IOError, OSError, ValueError):
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


def signal_name(signum):
    """``'SIGKILL'`` for 9 (``'signal 42'`` where Python has no name for it)."""
    try:
        return signal.Signals(signum).name
    except (ValueError, AttributeError):
        return 'signal %d' % signum


#: a worker killed by a signal whose number is not known (an MPI rank: mpiexec reaps it)
KILLED = -1000
#: how long an end that its channel announced may take to show in the process's status
_SETTLE = 5.0
#: the ends seen this soon after the first failure are weighed with it (who failed first)
_TIE = 0.02
#: the signals a supervisor sends to stop a process (mpiexec when a rank failed, the
#: launcher, a user): a worker they ended did not fail first
_STOP_SIGNALS = frozenset(getattr(signal, name) for name in ('SIGTERM', 'SIGINT', 'SIGHUP')
                          if hasattr(signal, name))


def describe(status):
    """What ended a worker, for the launcher's lines: ``'exited with status 3'``, ``'was
    killed by SIGKILL'`` (a negative status: minus the signal), or ``'was killed by a
    signal'`` (:data:`KILLED`)."""
    if status == KILLED:
        return 'was killed by a signal'
    if status < 0:
        return 'was killed by %s' % signal_name(-status)
    return 'exited with status %d' % status


def exit_status(status):
    """The launcher's exit status for a worker's: its status, 128 + its signal (as a shell
    gives), 137 for :data:`KILLED`."""
    if status == KILLED:
        return 128 + signal.SIGKILL
    if status < 0:
        return 128 + (-status)
    return status


class _Job(object):
    """The workers of one launch, how to watch them and how to stop them.

    Every worker on this machine connects to the launcher's Unix socket
    (:mod:`keras_backend.distribute._supervision`; an MPI rank's parent connects too, to
    report the rank's status); a worker's connection closes when its process ends, so the
    order of the ends is the order they happened in (the first to fail is named, not the
    lowest rank dead at the next look). The processes are also looked at every 0.1 s, for
    the workers that never connected (other hosts, no socket)."""

    def __init__(self, engine, n, piddir, mpi):
        self.engine = engine
        self.mpi = mpi
        self.n = n
        self.piddir = piddir
        self.procs = []        # Popen: N workers, or one mpiexec
        self.starts = {}       # pid -> start time (_supervision.identity) of those
        self.ended = []        # ranks, in the order their ends were seen
        self.seen = {}         # rank -> time.monotonic() its end was seen
        self.reported = {}     # rank -> status its parent reported (MPI ranks)
        self.died = {}         # rank -> time.monotonic() its process ended (seen by the
        #                        kernel's wait: a thread per child, or an MPI rank's parent)
        self.parents = set()   # ranks whose parent's channel is open (MPI ranks)
        self.selector = None
        self.server = None
        self.channels = {}     # socket -> [rank or None, bytes read, role]
        path = _supervision.socket_path(piddir)
        if path is not None:
            try:
                server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                server.bind(path)
                server.listen(max(16, n))
                server.setblocking(False)
            except (socket.error, OSError):
                server = None
            if server is not None:
                self.server = server
                self.selector = selectors.DefaultSelector()
                self.selector.register(server, selectors.EVENT_READ)

    def start(self, cmd, env, cpus=None):
        """Start one process (a worker, mpiexec or ssh) in a session of its own, dying
        with the launcher where the kernel allows (:func:`_supervision.die_with_parent`),
        bound to the CPUs ``cpus`` (None: not bound), and register it for the reaper.

        Raises:
            RuntimeError: the program could not be started (``--ssh`` or ``--mpiexec``
                naming no program, say), naming it and why.
        """
        die = _supervision.die_with_parent()

        def preexec():
            if die is not None:
                die()
            _supervision.bind(cpus)
        try:
            proc = subprocess.Popen(cmd, env=env, start_new_session=True,
                                    preexec_fn=preexec if die is not None or cpus else None)
        except OSError as e:      # one line, never a traceback (main says it, exit 2)
            raise RuntimeError('cannot start %s: %s' % (cmd[0], e.strerror or e))
        self.procs.append(proc)
        self.starts[proc.pid] = _supervision.start_time(proc.pid)   # not reaped yet: ours
        if not self.mpi:       # procs[rank] is worker rank's process (or its ssh)
            threading.Thread(target=self._note_death, args=(len(self.procs) - 1, proc.pid),
                             name='keras_backend-launcher-wait', daemon=True).start()
        try:
            _supervision.register_group(self.piddir, 'proc%d' % (len(self.procs) - 1),
                                        proc.pid)
        except (IOError, OSError):
            pass
        return proc

    def worker_pids(self):
        """{rank: pid} of the workers that registered (each its own process group)."""
        return dict((rank, pid) for rank, (pid, _) in self.worker_identities().items())

    def worker_identities(self):
        """{rank: (pid, start time or None)} of the workers that registered."""
        found = {}
        for name in os.listdir(self.piddir):
            if name.endswith('.pid'):
                try:
                    with open(os.path.join(self.piddir, name)) as f:
                        found[int(name[:-4])] = _supervision.parse_identity(f.read())
                except (ValueError, IOError, OSError):
                    pass
        return found

    def _note_death(self, rank, pid):
        """Wait (without reaping: ``Popen.poll`` still does) for the end of worker
        ``rank``'s process and note its time: the moment the kernel ended it, whatever the
        order its connections' ends reach the launcher in."""
        try:
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        except (OSError, AttributeError):     # reaped already, or no waitid here
            return
        self.died.setdefault(rank, time.monotonic())

    def _exit_file(self, rank):
        """(status, failure time or None, [ranks ended before it failed]) from
        ``<rank>.exit`` (the worker's own report, :mod:`_worker`), or None."""
        try:
            with open(os.path.join(self.piddir, '%d.exit' % rank)) as f:
                words = f.read().split()
            ended = [int(r) for r in words[2].split(',')] if len(words) > 2 and \
                words[2] != '-' else []
            return int(words[0]), (float(words[1]) if len(words) > 1 else None), ended
        except (ValueError, IndexError, IOError, OSError):
            return None

    def exit_status(self, rank):
        got = self._exit_file(rank)
        return None if got is None else got[0]

    def failure_time(self, rank, report=None):
        """When worker ``rank`` failed, on this host's monotonic clock: its own report
        (``report``, its :meth:`_exit_file`: the moment its script raised or exited with a
        non-zero status), else the moment its process ended (a signal), else the moment
        the launcher saw it end."""
        if report is not None and report[1] is not None:
            return report[1]
        return self.died.get(rank, self.seen.get(rank))

    def close(self):
        if self.selector is not None:
            for sock in list(self.channels):
                sock.close()
            self.channels = {}
            self.selector.close()
            self.selector = None
        if self.server is not None:
            self.server.close()
            self.server = None

    def kill_all(self):
        """SIGKILL the process groups of the job: the workers that registered and the
        processes the launcher started, each only while its pid still names the process
        registered (a worker reaped long before may have left its pid to another one)."""
        for pid, start in self.worker_identities().values():
            _supervision.kill_group(pid, start)
        for p in self.procs:
            _supervision.kill_group(p.pid, self.starts.get(p.pid))
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        # a worker whose registration raced with the kill
        for pid, start in self.worker_identities().values():
            _supervision.kill_group(pid, start)
        self.close()

    # -- watching ------------------------------------------------------------------------

    def _ended(self, rank):
        if rank is not None and 0 <= rank < self.n and rank not in self.seen:
            self.seen[rank] = time.monotonic()
            self.ended.append(rank)

    def listen(self, timeout):
        """Wait up to ``timeout`` seconds for the workers' channels; note the ends."""
        if self.selector is None:
            time.sleep(timeout)
            return
        for key, _ in self.selector.select(timeout):
            sock = key.fileobj
            if sock is self.server:
                try:
                    conn = self.server.accept()[0]
                except (socket.error, OSError):
                    continue
                conn.setblocking(False)
                self.channels[conn] = [None, b'', b'']   # rank, bytes, role
                self.selector.register(conn, selectors.EVENT_READ)
                continue
            state = self.channels.get(sock)
            if state is None:
                continue
            try:
                data = sock.recv(4096)
            except (BlockingIOError, InterruptedError):
                continue
            except (socket.error, OSError):
                data = b''
            if data:
                state[1] += data
                while b'\n' in state[1]:
                    line, state[1] = state[1].split(b'\n', 1)
                    if not self._said(state, line):
                        data = b''          # not a worker of this launch
                        break
                if len(state[1]) > 64:
                    data = b''
            if not data:                    # the worker's process (its parent) ended
                self.selector.unregister(sock)
                sock.close()
                del self.channels[sock]
                if state[2] == b'parent':
                    self.parents.discard(state[0])
                elif not state[2]:
                    self._ended(state[0])

    def _said(self, state, line):
        """A line on a channel: first the rank (a worker's own channel, whose end is the
        worker's), or the rank and its role: ``watch`` (the one a worker's thread waits
        on; its end means nothing here) or ``parent`` (an MPI rank's parent), then on a
        parent's ``status N``. False for anything else."""
        words = line.split()
        try:
            if state[0] is None and len(words) in (1, 2):
                if len(words) == 2:
                    if words[1] not in (b'parent', b'watch'):
                        return False
                    state[2] = words[1]
                    if words[1] == b'parent':
                        self.parents.add(int(words[0]))
                state[0] = int(words[0])
                return True
            if state[2] == b'parent' and len(words) in (2, 3) and words[0] == b'status':
                self.reported[state[0]] = int(words[1])
                if len(words) == 3:         # when its parent's wait returned
                    self.died.setdefault(state[0], float(words[2]))
                self._ended(state[0])
                return True
        except ValueError:
            pass
        return False

    def _look(self):
        """Note the ends the processes show (the workers that have no channel)."""
        if self.mpi:
            for rank, pid in sorted(self.worker_pids().items()):
                if rank not in self.seen and (self.exit_status(rank) is not None or
                                              not _alive(pid)):
                    self._ended(rank)
            return
        for rank, p in enumerate(self.procs):
            if rank not in self.seen and p.poll() is not None:
                self._ended(rank)
                try:
                    os.unlink(os.path.join(self.piddir, 'proc%d.group' % rank))
                except OSError:
                    pass

    def _status(self, rank):
        """The status of an ended worker (negative: minus its signal; :data:`KILLED`), or
        None while its process has not finished ending."""
        if self.mpi:
            if rank in self.reported:
                return self.reported[rank]
            if rank in self.parents:
                return None        # its parent reports the status
            status = self.exit_status(rank)
            if status is not None:
                return status
            pid = self.worker_pids().get(rank)
            return None if pid is not None and _alive(pid) else KILLED
        return self.procs[rank].poll()

    def failure(self):
        """(rank or None, status) of the first worker that failed, or None; ('done', 0)
        when every worker finished well.

        The ends seen up to :data:`_TIE` after the first one with a non-zero status are
        weighed together, once every earlier end has its status: the worker that failed
        first on this host's clock (:meth:`failure_time`: its own report, or when its
        process ended) is named, not the first the launcher happened to see (a process's
        connections close in some order at its end); but a worker whose report says a
        peer's process had ended when it failed (it failed because of the loss, or at
        the same moment) comes after that peer. A worker stopped by a supervisor's signal
        (:data:`_STOP_SIGNALS`) comes after every other failure."""
        self._look()
        now = time.monotonic()
        first, failed = None, []
        for order, rank in enumerate(list(self.ended)):
            if first is not None and self.seen[rank] - first > _TIE:
                break
            status = self._status(rank)
            if status is None:
                if now - self.seen[rank] < _SETTLE:
                    return None            # an earlier end decides first
                self.ended.remove(rank)    # it closed its channel, but runs on
                del self.seen[rank]
                continue
            if status != 0:
                if first is None:
                    first = self.seen[rank]
                stopped = status < 0 and -status in _STOP_SIGNALS
                report = self._exit_file(rank)
                when = self.failure_time(rank, report)
                failed.append((stopped, when if when is not None else now, order, rank,
                               status, report[2] if report is not None else []))
        if failed:
            if now - first < _TIE and len(self.ended) < self.n:
                return None                # what ends in the next moments may weigh more
            failed.sort()
            named, seen = failed[0], set()
            while True:          # it failed after a peer's process ended: that peer first
                seen.add(named[3])
                before = [f for f in failed if f[3] in named[5] and f[3] not in seen]
                if not before:
                    break
                named = before[0]
            return named[3], named[4]
        if self.mpi:
            rc = self.procs[0].poll()
            if rc is None:
                return None
            return ('done', 0) if rc == 0 else (None, rc)
        if len(self.ended) == len(self.procs) and \
                all(p.poll() is not None for p in self.procs):
            return 'done', 0
        return None

    def mpiexec_signal(self, wait):
        """The signal of the rank mpiexec saw killed first, from mpiexec's own status (128
        + that signal), when a rank's parent could not say it; None when mpiexec did not
        end with such a status within ``wait`` seconds."""
        try:
            rc = self.procs[0].wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None
        return rc - 128 if 128 < rc < 128 + 65 else None


def _worker_command(script, args, remote=False):
    """The command of one worker: on this machine through ``_supervision`` (its channel
    to the launcher), on another host ``_worker`` itself."""
    module = '_worker' if remote else '_supervision'
    return [sys.executable, '-m', 'keras_backend.distribute.' + module, script] + list(args)


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


def collective_path(engine, requested, mpiexec=None):
    """The collective path the workers of ``engine`` take: 'mpi' (they start under
    ``mpiexec``) or 'engine'. ``requested``: 'auto', 'engine' or 'mpi'. The MPI engines
    always take 'mpi'; TensorFlow and JAX take it when asked, or under 'auto' where
    ``mpiexec`` (or the given one) and mpi4py are installed and the machine has no GPU
    (:func:`keras_backend.distribute.rendezvous.gpu_present`)."""
    if engine in MPI_ENGINES:
        return 'mpi'
    if requested == 'auto':
        found = (mpiexec or shutil.which('mpiexec')) and _rendezvous.available() is None
        return 'mpi' if found and not _rendezvous.gpu_present() else 'engine'
    return requested


def launch(n, script, args=(), backend=None, timeout=None, deadline=None, mpiexec=None,
           env=None, hosts=None, network_interface=None, ssh='ssh', collectives=None,
           bind_to='core'):
    """Run ``n`` workers of ``script`` and return the launcher's exit status (see the
    module docstring). ``env``: the workers' base environment (default: this one's).
    ``collectives``: 'auto', 'engine' or 'mpi' (:func:`collective_path`; default
    ``$KERAS_BACKEND_DISTRIBUTE_COLLECTIVES`` of ``env``, else 'auto').
    ``hosts``: ``-H``'s text or ``[(host, slots)]`` (``n`` None: their sum);
    ``network_interface``: an interface name; ``ssh``: the command (a str, split as a
    shell would) that starts workers on other hosts. ``bind_to``: 'core' (each worker on
    this machine bound to its share of the CPUs, :func:`cpu_list`) or 'none'."""
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
    if collectives is None:
        collectives = base.get(_group.ENV_COLLECTIVES, '').strip().lower() or 'auto'
    if collectives not in _group.COLLECTIVES:
        raise ValueError('collectives must be one of %s, got %r'
                         % (', '.join(_group.COLLECTIVES), collectives))
    path = collective_path(engine, collectives, mpiexec)
    base[_group.ENV_COLLECTIVES] = path
    if hosts is None:
        hosts = [('localhost', n)]
    busiest = max(k for _, k in hosts)
    if busiest > 1 and not base.get('OMP_NUM_THREADS'):
        # the workers share this machine's cores: OpenMP / MKL thread pools of a core
        # each would oversubscribe them (CNTK, Theano's BLAS), as torchrun also avoids
        base['OMP_NUM_THREADS'] = str(max(1, (os.cpu_count() or 1) // busiest))
    several = len(hosts) > 1 or not is_local_host(hosts[0][0])
    cpus = cpu_list(base, bind_to, busiest, several)
    if cpus:
        base[ENV_CPUS] = cpus
    else:
        base.pop(ENV_CPUS, None)
    if backend and not base.get('KERAS_BACKEND'):
        base['KERAS_BACKEND'] = engine
    if timeout is not None:
        base[ENV_TIMEOUT] = repr(float(timeout))
    if network_interface:
        base[ENV_INTERFACE] = network_interface
    if not several:
        # one host: every side channel a worker opens (the stall check's monitor) listens
        # on the loopback only; the MPI engines' ranks read their host's address here
        base.setdefault(_rendezvous.ENV_ADDRESS, '127.0.0.1')
    base[ENV_SECRET] = binascii.hexlify(os.urandom(32)).decode('ascii')
    with _SIGNALS:
        if _SIGNALS.got is not None:      # between two attempts of supervise()
            _say('stopped by %s before the workers started' % signal_name(_SIGNALS.got))
            return 128 + _SIGNALS.got
        piddir = tempfile.mkdtemp(prefix='keras_backend_distribute_')
        base[ENV_PIDDIR] = piddir
        reaper = _supervision.Reaper(piddir)
        job = _Job(engine, n, piddir, path == 'mpi')
        started = time.time()
        try:
            _start_workers(job, engine, n, hosts, several, base, script, args, mpiexec,
                           network_interface, ssh)
            status = _watch(job, started, deadline)
        except BaseException:
            job.kill_all()
            raise
        finally:
            job.close()
            reaper.done()
            shutil.rmtree(piddir, ignore_errors=True)
    return status


#: the launcher's ``--bind-to`` choices
BIND_TO = ('core', 'none')


def cpu_list(env, bind_to, busiest, several):
    """The CPU list (``0,1,...``) the workers of a host divide among themselves
    (:data:`_supervision.ENV_CPUS`), or None: no binding.

    With ``bind_to='core'`` on one host: ``env``'s own ``ENV_CPUS`` when set (checked;
    with one worker too: a benchmark's "same cores"), else, for two or more workers, the
    CPUs this process may run on, when there are at least as many as workers (each then
    gets ``cpus // workers`` of them, as ``OMP_NUM_THREADS``; with more workers than
    CPUs they share all of them). On several hosts only a list set in ``env`` binds
    (it reaches every host). ``busiest``: the most workers on one host.

    Raises:
        ValueError: ``bind_to`` not 'core' or 'none'; a malformed ``ENV_CPUS``.

    Example:
        >>> cpu_list({ENV_CPUS: '0-3'}, 'core', 2, False)
        '0,1,2,3'
    """
    if bind_to not in BIND_TO:
        raise ValueError('bind_to must be one of %s, got %r' % (', '.join(BIND_TO), bind_to))
    if bind_to == 'none':
        return None
    given = env.get(ENV_CPUS, '').strip()
    if given:
        return ','.join(str(c) for c in _supervision.parse_cpus(given)) or None
    if several or busiest < 2 or not hasattr(os, 'sched_getaffinity'):
        return None
    mine = sorted(os.sched_getaffinity(0))
    return ','.join(str(c) for c in mine) if len(mine) >= busiest else None


def _start_workers(job, engine, n, hosts, several, base, script, args, mpiexec,
                   network_interface, ssh):
    start = _engines.worker_start(engine)
    if job.mpi:
        exe = mpiexec or shutil.which('mpiexec')
        if not exe:
            raise RuntimeError('the %s engine runs its workers under mpiexec (its MPI '
                               'collectives), which is not on PATH: install OpenMPI '
                               '(Debian: apt-get install openmpi-bin libopenmpi-dev)'
                               % engine)
        e = dict(base)
        if hasattr(os, 'geteuid') and os.geteuid() == 0:
            e.setdefault('OMPI_ALLOW_RUN_AS_ROOT', '1')
            e.setdefault('OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1')
        # containers often forbid the cross-memory attach of OpenMPI's shared memory
        e.setdefault('OMPI_MCA_btl_vader_single_copy_mechanism', 'none')
        cmd = [exe, '-n', str(n), '--oversubscribe', '--bind-to', 'none',
               '-x', ENV_PIDDIR, '-x', _group.ENV_COLLECTIVES] + \
            (['-x', ENV_TIMEOUT] if ENV_TIMEOUT in e else [])
        if several:
            cmd += ['-H', ','.join('%s:%d' % hk for hk in hosts)]
            for key in sorted(_forwarded(e)):
                if key not in cmd:
                    cmd += ['-x', key]      # a name: mpiexec sends the value itself
        if network_interface:
            cmd += ['--mca', 'btl_tcp_if_include', network_interface,
                    '--mca', 'oob_tcp_if_include', network_interface]
            if not several:
                cmd += ['-x', ENV_INTERFACE]
        cmd += _supervision.parent_command(script, args)
        job.start(cmd, e)
        return
    # TF_CONFIG: a port per worker; a coordinator (JAX): one port for all
    ports = free_ports(n if start == _engines.WORKERS_TF_CONFIG else 1)
    addresses = _host_addresses(hosts, network_interface)
    where = [(h, a, local, k) for (h, k), a in zip(hosts, addresses)
             for local in range(k)]          # rank -> (host, address, local, size)
    ssh_argv = shlex.split(ssh or 'ssh')
    for rank in range(n):
        if _SIGNALS.got is not None:
            return                           # _watch stops the ones started
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
        share = None
        if is_local_host(host):
            cmd = _worker_command(script, args)
            share = _supervision.env_share(e, local, local_size)
        else:
            # '--': the host (checked by parse_hosts) can never be read as an option
            cmd = ssh_argv + ['-tt', '--', host, remote_command(e, script, args)]
        job.start(cmd, e, share)


class _Signals(object):
    """SIGINT, SIGTERM and SIGHUP caught while a launch (or the whole of ``supervise``,
    between its attempts too) runs: ``got`` is the first one received; the launcher then
    kills every worker and exits with 128 + its number. Only the main thread can catch
    signals; elsewhere they keep their handlers."""

    NAMES = ('SIGINT', 'SIGTERM', 'SIGHUP')

    def __init__(self):
        self.got = None
        self.depth = 0
        self.old = {}

    def _on(self, signum, frame):
        if self.got is None:
            self.got = signum

    def __enter__(self):
        if self.depth == 0:
            self.got = None
            for name in self.NAMES:
                signum = getattr(signal, name, None)
                if signum is None:
                    continue
                try:
                    self.old[signum] = signal.signal(signum, self._on)
                except (ValueError, OSError):     # not the main thread
                    pass
        self.depth += 1
        return self

    def __exit__(self, *exc):
        self.depth -= 1
        if self.depth == 0:
            for signum, handler in self.old.items():
                signal.signal(signum, handler)
            self.old = {}
        return False


_SIGNALS = _Signals()


def _watch(job, started, deadline):
    while True:
        if _SIGNALS.got is not None:
            _say('stopped by %s; killing every worker' % signal_name(_SIGNALS.got))
            job.kill_all()
            return 128 + _SIGNALS.got
        got = job.failure()
        if got is not None:
            rank, status = got
            if rank == 'done':
                return 0
            if rank is None and job.mpi and 128 < status < 128 + 65:
                status = -(status - 128)         # mpiexec's: a rank killed by a signal
            elif status == KILLED and job.mpi:
                signum = job.mpiexec_signal(wait=_SETTLE)
                if signum:
                    status = -signum
            who = 'a worker' if rank is None else 'worker %d' % rank
            how = describe(status)
            _LAST_FAILURE.update(what='%s %s' % (who, how), restartable=True)
            _say('WorkerLost: %s of %d %s; killing the others (SIGKILL)' % (who, job.n, how))
            job.kill_all()
            return exit_status(status)
        if deadline is not None and time.time() - started > deadline:
            _say('WorkerLost: the deadline of %g s passed; killing every worker (SIGKILL)'
                 % deadline)
            job.kill_all()
            return 124
        job.listen(0.1)


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
    with _SIGNALS:       # a signal between two attempts stops the job too
        while True:
            base[ENV_RESTART] = str(attempt)
            _LAST_FAILURE.clear()
            left = None if deadline is None else max(0.0, deadline - (time.time() - started))
            status = launch(workers, script, args, deadline=left, env=base, **kwargs)
            if status == 0 or restarts == 0:
                return status
            if _SIGNALS.got is not None:
                if status != 128 + _SIGNALS.got:     # it came after the attempt failed
                    _say('stopped by %s; no restart' % signal_name(_SIGNALS.got))
                return 128 + _SIGNALS.got
            if not _LAST_FAILURE.get('restartable'):
                return status
            what = _LAST_FAILURE.get('what', 'a worker was lost')
            if attempt >= restarts:
                _say('WorkerLost: %s; no restart left (%d of %d used); the job fails'
                     % (what, attempt, restarts))
                return status
            after = workers - 1 if restart_size == 'shrink' else workers
            if after < min_workers:
                _say('WorkerLost: %s; %d worker(s) would remain, fewer than --min-workers '
                     '%d; the job fails' % (what, after, min_workers))
                return status
            attempt += 1
            _say('restart %d of %d at %s (%.1f s into the job): %s; starting %d worker(s) '
                 'from the last commit' % (attempt, restarts, time.strftime('%H:%M:%S'),
                                           time.time() - started, what, after))
            workers = after


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        return supervise(args.num_workers, args.script, args.args, restarts=args.restarts,
                         min_workers=args.min_workers, restart_size=args.restart_size,
                         backend=args.backend, timeout=args.timeout, deadline=args.deadline,
                         mpiexec=args.mpiexec, hosts=args.hosts,
                         network_interface=args.network_interface, ssh=args.ssh,
                         collectives=args.collectives, bind_to=args.bind_to)
    except (ValueError, RuntimeError) as e:
        _say('error: %s' % e)
        return 2
