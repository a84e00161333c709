"""Workers as Ray actors: ``RayExecutor``, with the names of ``horovod.ray.RayExecutor``.

::

    import ray
    from keras_backend.distribute.ray import RayExecutor

    ray.init(address='auto')                 # an existing Ray cluster (or a local one)
    executor = RayExecutor(RayExecutor.create_settings(timeout_s=300), num_workers=4,
                           cpus_per_worker=2)
    executor.start()                         # 4 actors; kd.init() has run in each
    weights = executor.run(train, args=[epochs])   # train(epochs) on every worker
    executor.shutdown()

Each worker is a Ray actor (a process of its own on some node of the cluster). Before
its engine starts, ``start()`` gives it

* its placement: ``KERAS_BACKEND_DISTRIBUTE_RANK/SIZE`` and, from the node ids Ray
  reports for the actors, ``..._LOCAL_RANK/LOCAL_SIZE`` (ranks are numbered node by
  node, in the order the nodes first appear among the actors);
* its engine's rendezvous (the ``workers`` column of the engine table,
  :data:`keras_backend.engines.TABLE`):

  - TensorFlow (``tf_config``): ``TF_CONFIG`` with a port per worker, each picked on
    that worker's own node, at the node's IP address as Ray reports it
    (``ray.util.get_node_ip_address()``; the interface of ``nics`` when given);
  - JAX (``coordinator``): the coordinator at rank 0's node address and a port picked
    there;
  - PyTensor (``mpiexec``): no ``mpiexec`` runs under Ray. ``start()`` runs OpenMPI's
    ``ompi-server`` on this (the driver's) machine and gives every worker its URI
    (``OMPI_MCA_pmix_server_uri``); each worker's MPI starts as a singleton, rank 0 opens
    a port (``MPI_Open_port``) and the group grows one worker at a time
    (``MPI_Comm_accept`` by the group, ``MPI_Comm_connect`` by the newcomer, then
    ``MPI_Intercomm_merge``, rank order kept); the collectives then use that communicator
    (:func:`keras_backend.distribute.rendezvous.set_mpi_communicator`). Needs OpenMPI's
    ``ompi-server`` on the driver's PATH and mpi4py on every node;

then runs :func:`keras_backend.distribute.init` in every actor. ``run(fn)`` calls ``fn``
in every worker and returns their results in rank order.

The forwarded environment: the driver's ``KERAS_BACKEND*``, ``PYTHONPATH``,
``OMP_NUM_THREADS``, ``TF_CPP_MIN_LOG_LEVEL``, ``XLA_FLAGS``, ``PYTENSOR_FLAGS`` and
``THEANO_FLAGS`` and the ``env_vars`` given, through Ray's ``runtime_env``; keras_backend
and the engine must be installed on every node.

CPython 3.6 (CNTK 2.7, Theano 1.0.5): Ray does not install there; importing this module
raises ImportError saying so, and asking for an engine none of whose configurations runs
on a Ray interpreter raises ValueError. Start those with the launcher or ``mpirun``.

This module needs Python 3.9+ (it is exempt from the CPython 3.6 syntax check).
"""
import sys

if sys.version_info < (3, 9):
    raise ImportError(
        'keras_backend.distribute.ray: Ray is not available on Python %d.%d (Ray installs '
        'on Python 3.9+), so CNTK 2.7 and Theano 1.0.5, which run on CPython 3.6, cannot '
        'use the Ray executor; start their workers with python -m keras_backend.distribute '
        '-n N script.py, or mpirun' % sys.version_info[:2])

import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time

try:
    import ray
except ImportError as _e:
    raise ImportError('keras_backend.distribute.ray needs Ray (%s): pip install '
                      '"keras_backend[distribute]" (or pip install ray) on the driver and '
                      'every node of the cluster' % _e)

from .. import engines as _engines
from . import (ENV_COORDINATOR, ENV_LOCAL_RANK, ENV_RANK, ENV_SIZE, WorkerLost,
               _configured_engine)
from . import _supervision
from . import rendezvous as _rendezvous
from .elastic import ENV_RESTART

__all__ = ['RayExecutor', 'Settings', 'WorkerError', 'WorkerLost']

ENV_LOCAL_SIZE = 'KERAS_BACKEND_DISTRIBUTE_LOCAL_SIZE'
#: the driver's variables every actor gets (names, and prefixes ending in ``*``)
FORWARDED = ('KERAS_BACKEND*', 'PYTHONPATH', 'OMP_NUM_THREADS', 'TF_CPP_MIN_LOG_LEVEL',
             'XLA_FLAGS', 'PYTENSOR_FLAGS', 'THEANO_FLAGS')
#: the Python versions Ray installs on (the engines of the table that run there can use it)
RAY_PYTHON = (3, 9)
#: after a worker's failure, how long ``run`` waits for the others' results before it
#: names the first to fail (a dead actor is told after the peers' errors it causes)
FAILURE_GRACE_S = 5.0


class WorkerError(RuntimeError):
    """A worker's function raised: ``rank`` is the worker's rank, ``__cause__`` (and
    ``error``) its exception; the message names both."""

    def __init__(self, message, rank=None, error=None):
        super(WorkerError, self).__init__(message)
        self.rank = rank
        self.error = error


class Settings(object):
    """What :meth:`RayExecutor.create_settings` returns.

    Attributes:
        timeout_s: seconds ``start()`` waits for the actors to be placed, their engines
            to import and the rendezvous to finish (float > 0).
        nics: None, or a set / list of network interface names; the first that a
            worker's node has gives that worker's address (else Ray's node address).
        placement_group_timeout_s: kept for Horovod's signature; the actors are placed
            within ``timeout_s``.
    """

    def __init__(self, timeout_s=300, nics=None, placement_group_timeout_s=100):
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)):
            raise TypeError('create_settings: timeout_s must be a number of seconds, got %r'
                            % (timeout_s,))
        if not timeout_s > 0:
            raise ValueError('create_settings: timeout_s must be > 0, got %r' % (timeout_s,))
        if isinstance(nics, str):
            nics = [nics]
        if nics is not None:
            nics = list(nics)
            if not all(isinstance(n, str) and n for n in nics):
                raise TypeError('create_settings: nics must be interface names (str), got %r'
                                % (nics,))
        self.timeout_s = float(timeout_s)
        self.nics = nics
        self.placement_group_timeout_s = placement_group_timeout_s


def _forwarded_env(extra):
    env = {}
    for key, value in os.environ.items():
        for pattern in FORWARDED:
            if key == pattern or (pattern.endswith('*') and key.startswith(pattern[:-1])):
                env[key] = value
    # the placement and rendezvous are the executor's, never inherited
    for key in list(env):
        if key.startswith('KERAS_BACKEND_DISTRIBUTE_'):
            del env[key]
    env.update(extra or {})
    return env


class _Worker(object):
    """One worker: the body of the Ray actor (:meth:`RayExecutor.start`)."""

    def __init__(self):
        self.comm = None
        self.executable = None

    def node(self, nics):
        """(node id, this worker's address, host name) as Ray and the host report them."""
        address = None
        for nic in nics or ():
            address = _rendezvous._interface_ipv4(nic)
            if address:
                break
        if not address:
            address = ray.util.get_node_ip_address()
        return ray.get_runtime_context().get_node_id(), address, socket.gethostname()

    def reserve_port(self):
        # held in this actor until its init starts the engine (rendezvous.reserve_port)
        return _rendezvous.reserve_port()

    def set_env(self, env):
        os.environ.update(env)

    # -- the MPI engines: the communicator, grown through ompi-server
    def mpi_open(self):
        from .mpi import module
        MPI = module()
        self.comm = MPI.COMM_SELF.Dup()
        self.port = MPI.Open_port()
        return self.port

    def mpi_accept(self, port):
        inter = self.comm.Accept(port, root=0)
        self.comm = inter.Merge(high=False)
        inter.Disconnect()
        return self.comm.Get_rank()

    def mpi_connect(self, port):
        from .mpi import module
        MPI = module()
        inter = MPI.COMM_SELF.Connect(port, root=0)
        self.comm = inter.Merge(high=True)
        inter.Disconnect()
        return self.comm.Get_rank()

    def init(self, engine, executable_cls, args, kwargs):
        if self.comm is not None:
            _rendezvous.set_mpi_communicator(self.comm)
        import keras_backend.distribute as kd
        kd.init(engine=engine)
        if executable_cls is not None:
            self.executable = executable_cls(*(args or ()), **(kwargs or {}))
        return kd.rank(), kd.size(), kd.local_rank(), kd.local_size()

    def run(self, fn, args, kwargs):
        return fn(*(args or ()), **(kwargs or {}))

    def execute(self, fn):
        return fn(self.executable)


def _check_engine(engine):
    """ValueError when no configuration of ``engine`` installs on a Python Ray runs on."""
    rows = _engines.configurations(engine)
    if not any(r.python[1] is None or r.python[1] > RAY_PYTHON for r in rows):
        raise ValueError('RayExecutor: backend %r runs on %s only, where Ray is not available '
                         '(Ray installs on Python %d.%d+); start its workers with python -m '
                         'keras_backend.distribute -n N script.py, or mpirun'
                         % (engine, ' / '.join(r.python_text() for r in rows),
                            RAY_PYTHON[0], RAY_PYTHON[1]))


class _Tail(object):
    """Reads a pipe to its end in a thread of its own, keeping its last ``keep`` bytes."""

    def __init__(self, pipe, keep=65536):
        self.pipe, self.keep, self.data = pipe, keep, b''
        self.thread = threading.Thread(target=self._read, name='keras_backend-ompi-server',
                                       daemon=True)
        self.thread.start()

    def _read(self):
        try:
            for chunk in iter(lambda: self.pipe.read1(4096) if hasattr(self.pipe, 'read1')
                              else self.pipe.read(4096), b''):
                self.data = (self.data + chunk)[-self.keep:]
        except (OSError, ValueError):
            pass

    def text(self):
        return self.data.decode('utf-8', 'replace')


class RayExecutor(object):
    """``num_workers`` workers of keras_backend.distribute as Ray actors.

    Args:
        settings: :meth:`create_settings`'s answer (default: ``create_settings()``).
        num_workers: int >= 1.
        cpus_per_worker: CPUs Ray reserves for each actor (number > 0).
        use_gpu: reserve ``gpus_per_worker`` GPUs (default 1) for each actor.
        gpus_per_worker: GPUs per actor when ``use_gpu``.
        backend: the engine (a name of :data:`keras_backend.engines.TABLE`); default: the
            driver's configured backend (``KERAS_BACKEND`` or keras.json).
        env_vars: dict of str -> str set in every actor, besides the forwarded ones.

    Raises:
        TypeError / ValueError: arguments of the wrong type or value (named), or an engine
            that Ray cannot run (CNTK 2.7 and Theano 1.0.5 need CPython 3.6).

    Example:
        >>> ex = RayExecutor(num_workers=2, backend='tensorflow')
        >>> ex.start()
        >>> ex.run(lambda: __import__('keras_backend.distribute').distribute.rank())
        [0, 1]
        >>> ex.shutdown()
    """

    def __init__(self, settings=None, num_workers=None, cpus_per_worker=1, use_gpu=False,
                 gpus_per_worker=None, backend=None, env_vars=None):
        if settings is None:
            settings = self.create_settings()
        if not isinstance(settings, Settings):
            raise TypeError('RayExecutor: settings must come from RayExecutor.create_settings,'
                            ' got %r' % (settings,))
        if isinstance(num_workers, bool) or not isinstance(num_workers, int):
            raise TypeError('RayExecutor: num_workers must be an int >= 1, got %r'
                            % (num_workers,))
        if num_workers < 1:
            raise ValueError('RayExecutor: num_workers must be >= 1, got %d' % num_workers)
        if isinstance(cpus_per_worker, bool) or not isinstance(cpus_per_worker, (int, float)) \
                or not cpus_per_worker > 0:
            raise ValueError('RayExecutor: cpus_per_worker must be a number > 0, got %r'
                             % (cpus_per_worker,))
        if env_vars is not None and not (isinstance(env_vars, dict) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in env_vars.items())):
            raise TypeError('RayExecutor: env_vars must be a dict of str to str, got %r'
                            % (env_vars,))
        engine = _engines.canonical_backend(backend or _configured_engine())
        if engine not in _engines.names():
            raise ValueError('RayExecutor: backend must be one of %s, got %r'
                             % (', '.join(_engines.names()), engine))
        _check_engine(engine)
        self.settings = settings
        self.num_workers = num_workers
        self.cpus_per_worker = cpus_per_worker
        self.gpus_per_worker = (gpus_per_worker or 1) if use_gpu else 0
        self.engine = engine
        self.env_vars = dict(env_vars or {})
        self.workers = []          # actor handles, in rank order
        self.placements = []       # (rank, size, local_rank, local_size) of each
        self._start_args = (None, None, None, {})
        self._server = None        # ompi-server (MPI engines)
        self._tmp = None

    @staticmethod
    def create_settings(timeout_s=300, ssh_identity_file=None, ssh_str=None,
                        placement_group_timeout_s=100, nics=None):
        """The executor's settings (Horovod's ``RayExecutor.create_settings``).

        Args:
            timeout_s: seconds ``start()`` waits for the actors and the rendezvous
                (default 300: the engines' imports are slow on a busy machine).
            ssh_identity_file, ssh_str: accepted for Horovod's signature; unused (Ray
                starts the actors, no ssh).
            placement_group_timeout_s: accepted for Horovod's signature.
            nics: None, or network interface names; a worker's address is the IPv4
                address of the first of them its node has.

        Returns:
            :class:`Settings`.

        Raises:
            TypeError / ValueError: ``timeout_s`` not a positive number, ``nics`` not
                names.

        Example:
            >>> RayExecutor.create_settings(timeout_s=60, nics={'eth0'}).timeout_s
            60.0
        """
        return Settings(timeout_s=timeout_s, nics=nics,
                        placement_group_timeout_s=placement_group_timeout_s)

    # -- start --------------------------------------------------------------------------

    def _get(self, refs, what):
        try:
            return ray.get(refs, timeout=self.settings.timeout_s)
        except ray.exceptions.GetTimeoutError:
            self._stop()
            raise WorkerLost('RayExecutor.start: %s did not finish within timeout_s=%g s (is '
                             'the cluster big enough for %d actors of %g CPUs?)'
                             % (what, self.settings.timeout_s, self.num_workers,
                                self.cpus_per_worker))
        except ray.exceptions.RayActorError as e:
            self._stop()
            raise WorkerLost('RayExecutor.start: an actor died during %s (%s)'
                             % (what, str(e).strip().split('\n')[0]))
        except ray.exceptions.RayTaskError as e:
            self._stop()
            cause = getattr(e, 'cause', None) or e
            raise WorkerError('RayExecutor.start: %s failed in a worker: %s: %s'
                              % (what, type(cause).__name__, cause), error=cause) from cause

    def start(self, executable_cls=None, executable_args=None, executable_kwargs=None,
              extra_env_vars=None):
        """Start the actors, give each its placement and rendezvous, and run
        :func:`keras_backend.distribute.init` in each.

        Args:
            executable_cls: optional class instantiated in every worker after ``init``
                (``executable_cls(*executable_args, **executable_kwargs)``); :meth:`execute`
                passes that instance to its function.
            executable_args, executable_kwargs: its arguments.
            extra_env_vars: dict of str -> str, added to the actors' environment.

        Returns:
            None.

        Raises:
            RuntimeError: already started, or ``ompi-server`` missing (MPI engines).
            WorkerLost: an actor died, or the start took longer than ``timeout_s``.
            WorkerError: the engine raised in a worker (e.g. not installed there).
        """
        if self.workers:
            raise RuntimeError('RayExecutor.start: already started; call shutdown() first')
        self._start_args = (executable_cls, executable_args, executable_kwargs,
                            dict(extra_env_vars or {}))
        if not ray.is_initialized():
            ray.init()
        env = _forwarded_env(dict(self.env_vars, **(extra_env_vars or {})))
        env.setdefault('KERAS_BACKEND', os.environ.get('KERAS_BACKEND') or self.engine)
        mpi = _engines.worker_start(self.engine) == _engines.WORKERS_MPIEXEC
        if mpi:
            env.update(self._start_ompi_server())
        actor = ray.remote(_Worker).options(
            num_cpus=self.cpus_per_worker, num_gpus=self.gpus_per_worker,
            runtime_env={'env_vars': env}, max_restarts=0)
        workers = [actor.remote() for _ in range(self.num_workers)]
        self.workers = workers
        nodes = self._get([w.node.remote(self.settings.nics) for w in workers],
                          'placing the actors')
        # ranks node by node, nodes in the order they first appear
        order = []
        for node_id, _, _ in nodes:
            if node_id not in order:
                order.append(node_id)
        ranked = sorted(range(len(workers)), key=lambda i: (order.index(nodes[i][0]), i))
        self.workers = workers = [workers[i] for i in ranked]
        nodes = [nodes[i] for i in ranked]
        n = len(workers)
        local = []
        for rank, (node_id, _, _) in enumerate(nodes):
            same = [r for r in range(n) if nodes[r][0] == node_id]
            local.append((same.index(rank), len(same)))
        envs = []
        for rank in range(n):
            envs.append({ENV_RANK: str(rank), ENV_SIZE: str(n),
                         ENV_LOCAL_RANK: str(local[rank][0]), ENV_LOCAL_SIZE: str(local[rank][1])})
        start = _engines.worker_start(self.engine)
        if n > 1 and start == _engines.WORKERS_TF_CONFIG:
            ports = self._get([w.reserve_port.remote() for w in workers],
                              'choosing ports')
            cluster = [_rendezvous._host_port(nodes[r][1], ports[r]) for r in range(n)]
            import json
            for rank in range(n):
                envs[rank]['TF_CONFIG'] = json.dumps({
                    'cluster': {'worker': cluster}, 'task': {'type': 'worker', 'index': rank}})
        elif n > 1 and start == _engines.WORKERS_COORDINATOR:
            port = self._get(workers[0].reserve_port.remote(), 'choosing a port')
            for rank in range(n):
                envs[rank][ENV_COORDINATOR] = _rendezvous._host_port(nodes[0][1], port)
        self._get([w.set_env.remote(envs[r]) for r, w in enumerate(workers)],
                  'setting the environment')
        if mpi and n > 1:
            port = self._get(workers[0].mpi_open.remote(), 'opening the MPI port')
            for k in range(1, n):
                got = self._get([w.mpi_accept.remote(port) for w in workers[:k]] +
                                [workers[k].mpi_connect.remote(port)],
                                'joining worker %d to the MPI communicator' % k)
                if got != list(range(k + 1)):
                    self._stop()
                    raise RuntimeError('RayExecutor.start: the MPI communicator has ranks %r '
                                       'after joining worker %d' % (got, k))
        self.placements = self._get(
            [w.init.remote(self.engine, executable_cls, executable_args, executable_kwargs)
             for w in workers], 'keras_backend.distribute.init')
        self.placements = [tuple(p) for p in self.placements]

    def _start_ompi_server(self):
        exe = shutil.which('ompi-server')
        if not exe:
            raise RuntimeError('RayExecutor: the %s engine joins its workers over MPI, which '
                               'needs OpenMPI\'s ompi-server on this machine\'s PATH '
                               '(Debian: apt-get install openmpi-bin libopenmpi-dev) and '
                               'mpi4py on every node' % self.engine)
        self._tmp = tempfile.mkdtemp(prefix='keras_backend_ray_')
        uri_file = os.path.join(self._tmp, 'ompi-server.uri')
        env = dict(os.environ)
        if hasattr(os, 'geteuid') and os.geteuid() == 0:
            env.setdefault('OMPI_ALLOW_RUN_AS_ROOT', '1')
            env.setdefault('OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1')
        # OpenMPI's TCP listener binds every interface (it takes no address): what it
        # gives out in its URI is limited to the job's own interface (the loopback on one
        # node), without IPv6; it dies with this process (the kernel's PR_SET_PDEATHSIG) and what it
        # prints is read as it comes (kept for the error below), so that it never blocks
        env['OMPI_MCA_oob_tcp_if_include'] = self._ompi_server_network()
        env['OMPI_MCA_oob_tcp_disable_ipv6_family'] = '1'
        self._server = subprocess.Popen([exe, '--no-daemonize', '-r', uri_file], env=env,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, start_new_session=True,
                                        preexec_fn=_supervision.die_with_parent())
        self._server_output = _Tail(self._server.stderr)
        deadline = time.time() + min(60.0, self.settings.timeout_s)
        uri = ''
        while time.time() < deadline:
            if os.path.exists(uri_file):
                with open(uri_file) as f:
                    uri = f.read().strip()
                if uri:
                    break
            if self._server.poll() is not None:
                break
            time.sleep(0.05)
        if not uri:
            if self._server.poll() is not None:
                self._server_output.thread.join(5)
            err = self._server_output.text()
            self._stop()
            raise RuntimeError('RayExecutor: ompi-server did not report its URI (%s)'
                               % err.strip()[-500:])
        out = {'OMPI_MCA_pmix_server_uri': uri,
               'OMPI_MCA_btl_vader_single_copy_mechanism': 'none'}
        if hasattr(os, 'geteuid') and os.geteuid() == 0:
            out.update(OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
        return out

    def _ompi_server_network(self):
        """The interface ``ompi-server`` gives out (``oob_tcp_if_include``, an interface
        name: OpenMPI matches a /32 against no interface): ``lo`` when the cluster is this
        one node, else ``nics``' first interface that has an address, else the one that
        holds this node's address as Ray reports it (``lo`` where none does)."""
        try:
            alive = [n for n in ray.nodes() if n.get('Alive')]
        except Exception:
            alive = []
        if len(alive) <= 1:
            return 'lo'
        for nic in self.settings.nics or ():
            if _rendezvous._interface_ipv4(nic):
                return nic
        address = ray.util.get_node_ip_address()
        for name, ipv4 in _rendezvous.interfaces():
            if ipv4 == address:
                return name
        return 'lo'

    # -- run ----------------------------------------------------------------------------

    def _collect(self, refs, what):
        """Results in rank order; a failure stops every worker and raises, naming the
        first worker to fail (:meth:`_first_failure`)."""
        if not self.workers:
            raise RuntimeError('RayExecutor.%s: not started; call start() first' % what)
        pending = dict((ref, rank) for rank, ref in enumerate(refs))
        results = [None] * len(refs)
        failures = []              # (rank, exception), in the order they came back
        grace_ends = None
        while pending:
            timeout = None if grace_ends is None else max(0.0, grace_ends - time.time())
            done, _ = ray.wait(list(pending), num_returns=1, timeout=timeout)
            if not done:
                break              # the grace is over: the others run on (or hang)
            for ref in done:
                rank = pending.pop(ref)
                try:
                    results[rank] = ray.get(ref)
                except (ray.exceptions.RayActorError, ray.exceptions.RayTaskError) as e:
                    failures.append((rank, e))
                    if grace_ends is None:
                        grace_ends = time.time() + FAILURE_GRACE_S
        if failures:
            self._stop()
            self._raise(what, len(refs), failures)
        return results

    @staticmethod
    def _first_failure(failures):
        """The failure to name, of ``[(rank, exception)]`` in the order Ray returned them:
        a worker whose actor died (Ray tells it later than the peers' errors that follow
        it), else one whose function raised something else than :class:`WorkerLost`,
        else one whose collectives lost a peer; among those, the first returned."""
        def kind(e):
            if isinstance(e, ray.exceptions.RayActorError):
                return 0
            cause = getattr(e, 'cause', None) or e
            return 2 if isinstance(cause, WorkerLost) else 1
        order = sorted(range(len(failures)), key=lambda i: (kind(failures[i][1]), i))
        return failures[order[0]]

    def _raise(self, what, n, failures):
        rank, e = self._first_failure(failures)
        others = sorted(r for r, _ in failures if r != rank)
        then = ('; worker(s) %s failed after it' % ', '.join(str(r) for r in others)
                if others else '')
        if isinstance(e, ray.exceptions.RayActorError):
            raise WorkerLost('RayExecutor.%s: worker %d of %d was lost (its Ray actor died: '
                             '%s)%s; the other workers were stopped'
                             % (what, rank, n, str(e).strip().split('\n')[0], then))
        cause = getattr(e, 'cause', None) or e
        text = '%s: %s' % (type(cause).__name__, str(cause).strip()[:2000])
        if isinstance(cause, WorkerLost):
            raise WorkerLost('RayExecutor.%s: worker %d of %d: %s%s; the other workers were '
                             'stopped' % (what, rank, n, text, then)) from cause
        raise WorkerError('RayExecutor.%s: worker %d of %d raised %s%s; the other workers '
                          'were stopped' % (what, rank, n, text, then),
                          rank=rank, error=cause) from cause

    def run(self, fn, args=None, kwargs=None, restarts=0, min_workers=None):
        """Call ``fn(*args, **kwargs)`` in every worker (after ``init``).

        With ``restarts`` R > 0 this is the launcher's supervised restart (README, "When a
        worker is lost"): when a worker is lost (its actor died, or its collectives lost
        a peer: :class:`WorkerLost`), every actor is stopped and the executor starts
        again, at most R times, with ``$KERAS_BACKEND_DISTRIBUTE_RESTART`` = 1, 2, ... in
        the actors (from which ``fn`` resumes its last commit,
        :class:`keras_backend.distribute.State`), on as many workers as the cluster's free
        CPUs now hold, up to ``num_workers`` (a lost node's share is gone; a killed
        process's comes back), never fewer than ``min_workers``. One line on stderr tells
        each restart. An exception ``fn`` raises itself (:class:`WorkerError`) is not
        restarted: it would raise again.

        Args:
            fn: a function Ray can pickle (defined at module level of an importable
                module, or by cloudpickle's rules).
            args: list of positional arguments; kwargs: dict of keyword arguments.
            restarts: int >= 0, the restarts allowed (default 0: a lost worker ends it).
            min_workers: int, 1 <= min_workers <= num_workers (default: num_workers):
                fewer workers available than this ends it.

        Returns:
            list of the workers' results, in rank order (of the last attempt).

        Raises:
            RuntimeError: not started.
            TypeError / ValueError: ``restarts`` or ``min_workers`` of the wrong type or
                value.
            WorkerError: ``fn`` raised in a worker (the message names its rank; the other
                workers are stopped and the executor must be started again).
            WorkerLost: a worker's actor died (or its collectives lost a peer) with no
                restart left, or fewer than ``min_workers`` workers could start again.

        The worker named (in the error and the restart line) is the first to fail: after
        a failure the others get :data:`FAILURE_GRACE_S` seconds to return, then a worker
        whose actor died comes first (Ray tells an actor's death after the errors it
        causes in its peers), then one whose ``fn`` raised, then one whose collectives
        lost a peer; among equals the first returned. Ray does not say which signal
        ended an actor.

        Example:
            >>> executor.run(lambda a, b: a + b, args=[1], kwargs={'b': 2})
            [3, 3]
            >>> executor.run(train, restarts=3, min_workers=1)   # doctest: +SKIP
        """
        if not callable(fn):
            raise TypeError('RayExecutor.run: fn must be callable, got %r' % (fn,))
        if min_workers is None:
            min_workers = self.num_workers
        for name, v in (('restarts', restarts), ('min_workers', min_workers)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError('RayExecutor.run: %s must be an int, got %r' % (name, v))
        if restarts < 0:
            raise ValueError('RayExecutor.run: restarts must be >= 0, got %d' % restarts)
        if not 1 <= min_workers <= self.num_workers:
            raise ValueError('RayExecutor.run: min_workers must be in 1 .. num_workers (%d), '
                             'got %d' % (self.num_workers, min_workers))
        attempt, began = 0, time.time()
        while True:
            try:
                return self._collect([w.run.remote(fn, args, kwargs) for w in self.workers],
                                     'run')
            except WorkerLost as lost:
                if attempt >= restarts:
                    raise
                attempt += 1
                self._restart(attempt, restarts, min_workers, lost, began)

    def _free_workers(self, wanted):
        """How many actors of ``cpus_per_worker`` the cluster's free CPUs hold now (at
        most ``wanted``), after waiting up to 10 s for the stopped actors' CPUs."""
        deadline = time.time() + 10.0
        while True:
            free = ray.available_resources().get('CPU', 0.0)
            n = int(free // self.cpus_per_worker + 1e-9)
            if n >= wanted or time.time() > deadline:
                return min(n, wanted)
            time.sleep(0.2)

    def _restart(self, attempt, restarts, min_workers, lost, began):
        """Start again after ``lost`` (the workers are stopped already)."""
        self._stop()
        size = self._free_workers(self.num_workers)
        if size < min_workers:
            raise WorkerLost('%s; only %d worker(s) could start again, fewer than '
                             'min_workers=%d' % (str(lost).split('\n')[0], size,
                                                 min_workers)) from lost
        sys.stderr.write('keras_backend.distribute.ray: restart %d of %d at %s (%.1f s into '
                         'the run): %s; starting %d worker(s) from the last commit\n'
                         % (attempt, restarts, time.strftime('%H:%M:%S'),
                            time.time() - began, str(lost).split('\n')[0], size))
        sys.stderr.flush()
        cls, cargs, ckwargs, extra = self._start_args
        wanted, self.num_workers = self.num_workers, size
        try:
            self.start(cls, cargs, ckwargs, dict(extra, **{ENV_RESTART: str(attempt)}))
        finally:
            self.num_workers = wanted

    def execute(self, fn):
        """Call ``fn(executable)`` in every worker, ``executable`` being the instance of
        ``start()``'s ``executable_cls`` there (None without one).

        Returns:
            list of the results, in rank order. Raises as :meth:`run`.
        """
        if not callable(fn):
            raise TypeError('RayExecutor.execute: fn must be callable, got %r' % (fn,))
        return self._collect([w.execute.remote(fn) for w in self.workers], 'execute')

    def execute_single(self, fn):
        """``fn(executable)`` on rank 0 only; its result."""
        if not callable(fn):
            raise TypeError('RayExecutor.execute_single: fn must be callable, got %r' % (fn,))
        return self._collect([self.workers[0].execute.remote(fn)] if self.workers else [],
                             'execute_single')[0]

    # -- stop ---------------------------------------------------------------------------

    def _stop(self):
        for w in self.workers:
            try:
                ray.kill(w, no_restart=True)
            except Exception:
                pass
        self.workers = []
        if self._server is not None:
            try:
                os.killpg(self._server.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
            self._server.wait()
            self._server = None
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def shutdown(self):
        """Stop every worker (their actors are killed: the engines' runtimes go with the
        processes) and the ``ompi-server`` of the MPI engines. The executor may be
        started again."""
        self._stop()
        self.placements = []
