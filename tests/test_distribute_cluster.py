"""keras_backend.distribute started by the cluster's own tools: mpirun and Slurm's srun.

The training script (``tests/distributed/k_sgd.py``) is the one our launcher runs in
``tests/test_distribute.py``; here nothing of ours starts it:

* ``mpirun -np 2 --oversubscribe`` (OpenMPI) runs it as a user would, on every engine
  configuration importable here: both workers end with the weights of one process on the
  global batches (rtol 1e-5). TensorFlow and JAX take their rendezvous (``TF_CONFIG``,
  the coordinator) from an MPI allgather: the addresses must be this host's
  non-loopback address when it has one;
* Slurm: no Slurm runs here, so the tests start the two processes themselves with the
  variables ``srun -n 2`` sets on one node (node list = this host's name).
  TensorFlow and JAX: two plain processes, ports from ``SLURM_STEP_RESV_PORTS``.
  Theano/PyTensor and CNTK, whose MPI_Init needs a PMI server: ``mpirun`` starts
  ``tests/distributed/as_srun.py``, which replaces mpirun's ``OMPI_COMM_WORLD_*`` with
  Slurm's variables (mpirun's PMIx server stands in for ``srun --mpi=pmix``'s);
* the pure functions: Slurm's host list and tasks-per-node syntax, the placement of
  tasks, the ports, the address choice.

Every engine is decided by its ``workers`` column of the engine table (no engine names
here). Needs OpenMPI's ``mpirun`` (and mpi4py); skipped with the reason where missing.
"""
import json
import os
import shutil
import socket
import subprocess
import sys

import pytest

from keras_backend import engines
from keras_backend.distribute import launcher, rendezvous as rv
from conftest import requested_backends
from test_distribute import (SCRIPTS, REPO, _engine_or_skip, _env,  # noqa: F401
                             check_k_sgd_weights, rendezvous_hosts, workdir)

sys.path.insert(0, SCRIPTS)
import as_srun  # noqa: E402

ENGINES = requested_backends()
TIMEOUT = 120        # the collective timeout of the runs (the CI machine is shared)
LIMIT = 600


# -- Slurm's syntax and placement --------------------------------------------------------

@pytest.mark.parametrize('text,expected', [
    ('node[01-03,07],gpu5', ['node01', 'node02', 'node03', 'node07', 'gpu5']),
    ('vm', ['vm']),
    ('a,b', ['a', 'b']),
    ('n[8-11]', ['n8', 'n9', 'n10', 'n11']),
    ('n[098-101]', ['n098', 'n099', 'n100', 'n101']),
    ('r[1-2]-n[8,10]', ['r1-n8', 'r1-n10', 'r2-n8', 'r2-n10']),
    ('gpu[1-2].cluster.org,login', ['gpu1.cluster.org', 'gpu2.cluster.org', 'login']),
])
def test_hostlist_expansion(text, expected):
    assert rv.expand_hostlist(text) == expected


@pytest.mark.parametrize('bad', ['node[01-03', 'node01]', 'node[03-01]', 'node[a-b]',
                                 'a,,b', 'node[]'])
def test_hostlist_errors(bad):
    with pytest.raises(ValueError, match='Slurm host list'):
        rv.expand_hostlist(bad)


def test_tasks_per_node_and_layout():
    assert rv.expand_tasks_per_node('2(x3),1') == [2, 2, 2, 1]
    assert rv.expand_tasks_per_node('4', nodes=3) == [4, 4, 4]
    with pytest.raises(ValueError, match='tasks per node'):
        rv.expand_tasks_per_node('2(x')
    assert rv.slurm_layout([2, 1]) == [(0, 0), (0, 1), (1, 0)]
    assert rv.slurm_layout([2, 1], 'cyclic') == [(0, 0), (1, 0), (0, 1)]
    assert rv.slurm_layout([1, 2], 'block:cyclic') == [(0, 0), (1, 0), (1, 1)]
    with pytest.raises(ValueError, match='SLURM_DISTRIBUTION'):
        rv.slurm_layout([2, 2], 'plane=2')


def _slurm_env(rank, node, local, **extra):
    env = {'SLURM_JOB_ID': '4242', 'SLURM_STEP_ID': '3', 'SLURM_PROCID': str(rank),
           'SLURM_NODEID': str(node), 'SLURM_LOCALID': str(local), 'SLURM_NTASKS': '5',
           'SLURM_STEP_NODELIST': 'gpu[07-08],cpu1', 'SLURM_STEP_TASKS_PER_NODE': '2(x2),1'}
    env.update(extra)
    return env


def test_slurm_placement_on_three_nodes():
    """Two groups of tasks that see different hosts: each gets its node's local rank and
    size, and every task's node in rank order."""
    got = [rv.placement(_slurm_env(r, n, l)) for r, (n, l) in
           enumerate([(0, 0), (0, 1), (1, 0), (1, 1), (2, 0)])]
    assert [(p.source, p.rank, p.size) for p in got] == [('slurm', r, 5) for r in range(5)]
    assert [(p.local_rank, p.local_size) for p in got] == [(0, 2), (1, 2), (0, 2), (1, 2),
                                                           (0, 1)]
    assert got[0].hosts == ['gpu07', 'gpu07', 'gpu08', 'gpu08', 'cpu1']
    assert got[0].local_ranks == [0, 1, 0, 1, 0]
    with pytest.raises(ValueError, match='expected node 0, local id 1'):
        rv.placement(_slurm_env(1, 1, 0))     # Slurm placed it cyclically, unannounced
    with pytest.raises(ValueError, match='do not add up'):
        rv.placement(_slurm_env(0, 0, 0, SLURM_NTASKS='6'))


def test_slurm_addresses_and_ports():
    place = rv.placement(_slurm_env(4, 2, 0))
    env = _slurm_env(4, 2, 0, SLURM_STEP_RESV_PORTS='12000-12001')
    assert rv.rendezvous('coordinator', place, 10.0, env) == [
        'gpu07:12000', 'gpu07:12001', 'gpu08:12000', 'gpu08:12001', 'cpu1:12000']
    assert env['KERAS_BACKEND_DISTRIBUTE_COORDINATOR'] == 'gpu07:12000'
    env = _slurm_env(4, 2, 0)
    rv.rendezvous('tf_config', place, 10.0, env)
    config = json.loads(env['TF_CONFIG'])
    assert config['task'] == {'type': 'worker', 'index': 4}
    base = rv.slurm_ports(env, 2)[0]
    assert rv.SLURM_PORT_LOW <= base < rv.SLURM_PORT_HIGH and base % rv.SLURM_PORT_BLOCK == 32
    assert config['cluster']['worker'][2:4] == ['gpu08:%d' % base, 'gpu08:%d' % (base + 1)]
    # another step of the job, or the next job, takes another block
    assert rv.slurm_ports(dict(env, SLURM_STEP_ID='4'), 2)[0] != base
    assert rv.slurm_ports(dict(env, SLURM_JOB_ID='4243'), 2)[0] != base
    assert rv.slurm_ports(dict(env, KERAS_BACKEND_DISTRIBUTE_PORT='31000'), 2) == [31000,
                                                                                  31001]
    with pytest.raises(ValueError, match='SLURM_STEP_RESV_PORTS'):
        rv.slurm_ports(dict(env, SLURM_STEP_RESV_PORTS='12000'), 2)
    # the launcher's variables are left as they are
    env = _slurm_env(4, 2, 0, TF_CONFIG='{"given": 1}')
    assert rv.rendezvous('tf_config', place, 10.0, env) is None
    assert env['TF_CONFIG'] == '{"given": 1}'
    assert rv.rendezvous('mpiexec', place, 10.0, {}) is None


def test_placement_order():
    assert rv.placement({}).source is None
    mpi = {'OMPI_COMM_WORLD_RANK': '1', 'OMPI_COMM_WORLD_SIZE': '4',
           'OMPI_COMM_WORLD_LOCAL_RANK': '1', 'OMPI_COMM_WORLD_LOCAL_SIZE': '2'}
    p = rv.placement(mpi)
    assert (p.source, p.rank, p.size, p.local_rank, p.local_size) == ('mpi', 1, 4, 1, 2)
    # mpirun inside a Slurm allocation: mpirun's placement wins
    p = rv.placement(dict(_slurm_env(0, 0, 0), **mpi))
    assert (p.source, p.rank) == ('mpi', 1)
    # a batch script run without srun (no step node list) is one process
    p = rv.placement({'SLURM_PROCID': '0', 'SLURM_NTASKS': '4', 'SLURM_JOB_ID': '7',
                      'SLURM_JOB_NODELIST': 'n[1-2]'})
    assert (p.source, p.size) == (None, 1)
    p = rv.placement(dict(mpi, KERAS_BACKEND_DISTRIBUTE_RANK='0',
                          KERAS_BACKEND_DISTRIBUTE_SIZE='3'))
    assert (p.source, p.rank, p.size) == ('launcher', 0, 3)
    with pytest.raises(ValueError, match='SLURM_PROCID must be an integer'):
        rv.placement(_slurm_env('x', 0, 0))
    with pytest.raises(ValueError, match='rank 5 of 4'):
        rv.placement(dict(mpi, OMPI_COMM_WORLD_RANK='5'))


# -- this host's address -----------------------------------------------------------------

def test_address_choice():
    assert rv.choose_address([('lo', '127.0.0.1'), ('eth0', '192.0.2.2')]) == ('192.0.2.2',
                                                                               False)
    assert rv.choose_address([('lo', '127.0.0.1'), ('x', '169.254.1.1')]) == ('127.0.0.1',
                                                                             True)
    assert rv.choose_address([]) == ('127.0.0.1', True)
    found = rv.interfaces()
    here, loopback = rv.choose_address(found)
    got = rv.host_address({}, warn=False)
    if not loopback:      # this host has a non-loopback address: it is the one chosen
        assert got == here and not rv.is_loopback(got), (found, got)
    assert rv.host_address({rv.ENV_ADDRESS: 'node7.example'}) == 'node7.example'
    assert rv.host_address({rv.ENV_INTERFACE: 'lo'}) == '127.0.0.1'
    for name, ip in found:
        assert rv.host_address({rv.ENV_INTERFACE: name}) == ip
    with pytest.raises(ValueError, match='KERAS_BACKEND_DISTRIBUTE_INTERFACE'):
        rv.host_address({rv.ENV_INTERFACE: 'no-such-if0'})


def test_loopback_fallback_says_so(monkeypatch, capsys):
    monkeypatch.setattr(rv, 'interfaces', lambda: [('lo', '127.0.0.1')])
    monkeypatch.setattr(rv.socket, 'gethostbyname_ex', lambda name: (name, [], ['127.0.1.1']))
    assert rv.host_address({}) == '127.0.0.1'
    assert 'no non-loopback' in capsys.readouterr().err


def test_reserved_port_is_held_until_released():
    port = rv.reserve_port()
    try:
        # while held, no other socket binds it: neither on the wildcard address (where
        # TensorFlow's gRPC server binds) nor on one address
        for address in ('', '127.0.0.1'):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                with pytest.raises(OSError):
                    s.bind((address, port))
            finally:
                s.close()
    finally:
        assert rv.release_ports() == 1
    assert rv.release_ports() == 0
    # released: a server binds and listens on it, as the engines' servers do
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(('', port))
        s.listen(1)
    finally:
        s.close()


def _has_non_loopback():
    return not rv.choose_address(rv.interfaces())[1]


# -- two workers, started by mpirun or as srun would -------------------------------------

def _mpirun_missing():
    if shutil.which('mpirun') is None:
        return 'mpirun not on PATH (Debian: apt-get install openmpi-bin libopenmpi-dev)'
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return 'mpi4py not installed for %s' % sys.executable
    return None


def _mpirun(engine, args, limit=LIMIT, env=None):
    """``mpirun -np 2`` of ``sys.executable args``, in ``engine``'s test environment (or
    in ``env``, the engine-free runs')."""
    env = _env(engine) if env is None else dict(env)
    env[launcher.ENV_TIMEOUT] = str(TIMEOUT)
    if hasattr(os, 'geteuid') and os.geteuid() == 0:
        env.setdefault('OMPI_ALLOW_RUN_AS_ROOT', '1')
        env.setdefault('OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1')
    env.setdefault('OMPI_MCA_btl_vader_single_copy_mechanism', 'none')
    env.setdefault('OMP_NUM_THREADS', '1')
    cmd = ['mpirun', '-np', '2', '--oversubscribe', '--bind-to', 'none',
           sys.executable] + list(args)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=REPO, timeout=limit)


def _runs_own_processes(engine):
    return engines.worker_start(engine) != engines.WORKERS_MPIEXEC


@pytest.mark.parametrize('engine', ENGINES)
def test_mpirun_two_workers_equal_one_process(engine, workdir):  # noqa: F811
    _engine_or_skip(engine)
    why = _mpirun_missing()
    if why:
        pytest.skip(why)
    out = os.path.join(workdir, 'mpirun')
    proc = _mpirun(engine, [os.path.join(SCRIPTS, 'k_sgd.py'), out])
    assert proc.returncode == 0, proc.stderr[-5000:]
    check_k_sgd_weights(out)
    hosts = rendezvous_hosts(out)
    if _runs_own_processes(engine):
        assert hosts, 'no TF_CONFIG / coordinator was set'
        if _has_non_loopback():
            assert not any(rv.is_loopback(h) for h in hosts), hosts
    else:
        assert hosts == []


def _consecutive_free_ports(n):
    for _ in range(50):
        s0 = socket.socket()
        s0.bind(('', 0))
        base = s0.getsockname()[1]
        socks = [s0]
        try:
            for i in range(1, n):
                s = socket.socket()
                socks.append(s)
                s.bind(('', base + i))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError('no %d consecutive free ports' % n)


def _slurm_processes(engine, out, job_id):
    """Start the 2 tasks of a simulated ``srun -n 2`` (TensorFlow, JAX); return their
    (returncode, stderr) after they end."""
    base = _consecutive_free_ports(2)
    procs = []
    try:
        for rank in range(2):
            env = _env(engine)
            env.update(as_srun.slurm_environment(rank, 2, job_id))
            env['SLURM_STEP_RESV_PORTS'] = '%d-%d' % (base, base + 1)
            env[launcher.ENV_TIMEOUT] = str(TIMEOUT)
            env.setdefault('OMP_NUM_THREADS', '1')
            procs.append(subprocess.Popen(
                [sys.executable, os.path.join(SCRIPTS, 'k_sgd.py'), out], env=env, cwd=REPO,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True))
        results = []
        for p in procs:
            _, err = p.communicate(timeout=LIMIT)
            results.append((p.returncode, err))
        return results
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


@pytest.mark.parametrize('engine', ENGINES)
def test_slurm_two_tasks_equal_one_process(engine, workdir):  # noqa: F811
    """Simulated srun (no Slurm here): the two tasks get the variables srun sets."""
    _engine_or_skip(engine)
    out = os.path.join(workdir, 'slurm')
    job_id = 1000 + os.getpid() % 50000
    if _runs_own_processes(engine):
        for rc, err in _slurm_processes(engine, out, job_id):
            assert rc == 0, err[-5000:]
        hosts = rendezvous_hosts(out)
        assert hosts
        if _has_non_loopback():   # this host's name from the node list -> its address
            assert not any(rv.is_loopback(h) for h in hosts), hosts
    else:
        why = _mpirun_missing()
        if why:
            pytest.skip(why)
        proc = _mpirun(engine, [os.path.join(SCRIPTS, 'as_srun.py'), str(job_id),
                                os.path.join(SCRIPTS, 'k_sgd.py'), out])
        assert proc.returncode == 0, proc.stderr[-5000:]
    check_k_sgd_weights(out)


def test_srun_stand_in_sets_what_srun_sets():
    env = as_srun.slurm_environment(1, 2, 77, host='vm')
    p = rv.placement(env)
    assert (p.source, p.rank, p.size, p.local_rank, p.local_size, p.hosts) == \
        ('slurm', 1, 2, 1, 2, ['vm', 'vm'])


@pytest.mark.parametrize('preset', [None, '4'])
def test_mpi_transport_asks_open_mpi_for_the_ring_unless_the_user_chose(preset):
    # Open MPI's MPI_Iallreduce takes a binomial tree for 2-3 processes at every size
    # (twice a ring's bytes on the slowest link: benchmarks/README.md); the transport names
    # the ring before MPI starts, and leaves a user's choice alone. Sums right either way.
    why = _mpirun_missing()
    if why:
        pytest.skip(why)
    env = dict(os.environ, PYTHONPATH=REPO)
    env.pop('OMPI_MCA_coll_libnbc_iallreduce_algorithm', None)
    if preset is not None:
        env['OMPI_MCA_coll_libnbc_iallreduce_algorithm'] = preset
    proc = _mpirun(None, [os.path.join(SCRIPTS, 'mpi_allreduce_algorithm.py')], env=env)
    assert proc.returncode == 0, proc.stderr[-5000:]
    line = [l for l in proc.stdout.splitlines() if l.startswith('RESULT ')][-1]
    got = json.loads(line[len('RESULT '):])
    assert got == {'algorithm': preset or '1', 'ok': True, 'size': 2}
