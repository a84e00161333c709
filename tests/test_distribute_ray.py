"""keras_backend.distribute.ray: workers as Ray actors (``RayExecutor``).

One real local Ray cluster serves the whole module: ``ray start --head --block`` in a
temporary folder, on free ports, with this host's address (``--node-ip-address``), in a
process group of its own that the module kills at its end (every Ray process of that
cluster, its actors included, is in that group; no ``ray stop``, which would stop every
Ray cluster of the machine). For each engine configuration that runs on Ray, a driver
process (``tests/distributed/ray_driver.py``) connects to it with ``ray.init(address=...)``
and starts 2 workers:

* the training of ``tests/distributed/k_sgd.py`` in both (``run``): both workers' weights
  equal the numpy reference (rtol 1e-5); the placements are ranks 0 and 1, local ranks 0
  and 1 of 2 (one node); TensorFlow's ``TF_CONFIG`` and JAX's coordinator are at the
  node's address (not 127.0.0.1 when the host has another); PyTensor's communicator was
  grown through ``ompi-server`` (no mpiexec);
* a function that raises on worker 1: ``WorkerError`` naming rank 1 and the ValueError;
* a worker whose process exits: ``WorkerLost`` naming it;
* worker 1 SIGKILLed while both allreduce: ``WorkerLost`` naming worker 1, the first to
  fail (worker 0's WorkerLost follows it; Ray does not say which signal ended an actor).

On CPython 3.6 (CNTK 2.7, Theano 1.0.5), where Ray does not install, importing the module
raises ImportError saying so. Skipped with the reason where Ray is not importable.
"""
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

from keras_backend import engines
from keras_backend.distribute import rendezvous as rv
from conftest import requested_backends
from test_distribute import REPO, SCRIPTS, _engine_or_skip, _env, _load_script

ENGINES = requested_backends()
RAY_PYTHON = (3, 9)
LIMIT = 600


def _ray_missing():
    if sys.version_info < RAY_PYTHON:
        return 'Ray does not install on Python %d.%d' % sys.version_info[:2]
    if importlib.util.find_spec('ray') is None:
        return 'ray is not installed for %s (pip install "keras_backend[distribute]")' \
            % sys.executable
    return None


def _ray_runs(engine):
    """Whether a configuration of ``engine`` installs on a Python that Ray runs on."""
    return any(r.python[1] is None or r.python[1] > RAY_PYTHON
               for r in engines.configurations(engine))


@pytest.mark.skipif(sys.version_info >= RAY_PYTHON, reason='Ray installs on this Python')
def test_ray_is_unavailable_on_this_python():
    with pytest.raises(ImportError, match='Ray is not available on Python 3'):
        import keras_backend.distribute.ray  # noqa: F401


def _free_ports(n):
    import socket
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(('', 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _group_members(pgid):
    found = []
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % name) as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except (IOError, OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != 'Z':
            found.append(int(name))
    return found


@pytest.fixture(scope='module')
def cluster():
    """The address of a local Ray cluster of 2 CPUs (one for the module)."""
    why = _ray_missing()
    if why:
        pytest.skip(why)
    tmp = tempfile.mkdtemp(prefix='kbray_')
    gcs, client = _free_ports(2)
    ip = rv.host_address(warn=False)
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED='0',
               PYTHONPATH=os.pathsep.join([REPO, SCRIPTS] + (
                   [os.environ['PYTHONPATH']] if os.environ.get('PYTHONPATH') else [])))
    ray_cli = os.path.join(os.path.dirname(sys.executable), 'ray')
    log = open(os.path.join(tmp, 'ray.log'), 'w')
    proc = subprocess.Popen(
        [ray_cli, 'start', '--head', '--block', '--num-cpus', '2', '--port', str(gcs),
         '--ray-client-server-port', str(client), '--node-ip-address', ip,
         '--temp-dir', os.path.join(tmp, 't'), '--disable-usage-stats',
         '--include-dashboard=false'], stdout=log, stderr=subprocess.STDOUT, env=env,
        start_new_session=True, cwd=tmp)
    try:
        deadline = time.time() + 180
        while True:
            with open(log.name) as f:
                text = f.read()
            if 'Ray runtime started' in text:
                break
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail('ray start did not start a cluster:\n%s' % text[-3000:])
            time.sleep(0.5)
        yield {'address': '%s:%d' % (ip, gcs), 'ip': ip, 'tmp': tmp}
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        for _ in range(20):        # whatever of the cluster outlived SIGTERM
            left = _group_members(proc.pid)
            if not left:
                break
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                break
            time.sleep(0.5)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)


def test_bad_arguments():
    why = _ray_missing()
    if why:
        pytest.skip(why)
    from keras_backend.distribute.ray import RayExecutor
    first = engines.names()[0]
    with pytest.raises(ValueError, match='num_workers'):
        RayExecutor(num_workers=0, backend=first)
    with pytest.raises(TypeError, match='num_workers'):
        RayExecutor(num_workers='2', backend=first)
    with pytest.raises(ValueError, match='cpus_per_worker'):
        RayExecutor(num_workers=2, cpus_per_worker=0, backend=first)
    with pytest.raises(TypeError, match='env_vars'):
        RayExecutor(num_workers=2, backend=first, env_vars={'A': 1})
    with pytest.raises(ValueError, match='timeout_s'):
        RayExecutor.create_settings(timeout_s=0)
    with pytest.raises(TypeError, match='nics'):
        RayExecutor.create_settings(nics=[3])
    with pytest.raises(ValueError, match='backend must be one of'):
        RayExecutor(num_workers=2, backend='mxnet')
    with pytest.raises(RuntimeError, match='not started'):
        RayExecutor(num_workers=2, backend=first).run(len)
    # the engines that run only where Ray does not (CNTK 2.7: CPython 3.6)
    for name in engines.names():
        if not _ray_runs(name):
            with pytest.raises(ValueError, match='where Ray is not available'):
                RayExecutor(num_workers=2, backend=name)


@pytest.mark.parametrize('engine', [e for e in ENGINES if _ray_runs(e)])
def test_two_actors_train_as_one_process(engine, cluster):
    _engine_or_skip(engine)
    out = os.path.join(cluster['tmp'], engine)
    env = _env(engine)
    env['PYTHONPATH'] = os.pathsep.join([REPO, SCRIPTS, env.get('PYTHONPATH', '')])
    env['KERAS_BACKEND_DISTRIBUTE_TIMEOUT'] = '120'
    start = time.time()
    proc = subprocess.run([sys.executable, os.path.join(SCRIPTS, 'ray_driver.py'),
                           cluster['address'], engine, out], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, env=env,
                          cwd=REPO, timeout=LIMIT)
    took = time.time() - start
    assert proc.returncode == 0, proc.stdout[-5000:]
    with open(out + '.json') as f:
        report = json.load(f)
    expected = _load_script('k_sgd').numpy_reference()
    train = report['train']
    assert [t['placement'] for t in train] == [[0, 2, 0, 2], [1, 2, 1, 2]]
    assert [list(p) for p in report['placements']] == [[0, 2, 0, 2], [1, 2, 1, 2]]
    assert train[0]['pid'] != train[1]['pid']
    for t in train:
        np.testing.assert_allclose(t['weights'], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(train[0]['weights'], train[1]['weights'])
    workers = engines.worker_start(engine)
    if workers == engines.WORKERS_TF_CONFIG:
        hosts = [json.loads(t['rendezvous'])['cluster']['worker'] for t in train]
        assert hosts[0] == hosts[1] and len(set(hosts[0])) == 2
        assert [h.rsplit(':', 1)[0] for h in hosts[0]] == [cluster['ip']] * 2
        assert [json.loads(t['rendezvous'])['task']['index'] for t in train] == [0, 1]
    elif workers == engines.WORKERS_COORDINATOR:
        assert [t['rendezvous'].rsplit(':', 1)[0] for t in train] == [cluster['ip']] * 2
        assert train[0]['rendezvous'] == train[1]['rendezvous']
    else:
        assert [t['rendezvous'] for t in train] == ['', '']     # no TF_CONFIG, no mpiexec
    kind, message, rank, cause = report['fail']
    assert (kind, rank, cause) == ('WorkerError', 1, 'ValueError')
    assert 'worker 1 of 2 raised ValueError: worker one fails on purpose' in message
    kind, message = report['die']
    assert kind == 'WorkerLost' and 'worker 1 of 2 was lost' in message
    # worker 1 SIGKILLed mid-collectives: named, not worker 0 whose collectives lost it
    kind, message = report['sigkill']
    assert kind == 'WorkerLost' and 'run: worker 1 of 2 was lost (its Ray actor died' in \
        message, message
    # run(restarts=1): worker 1's actor died mid-training; the restart trained to the end
    again = report['restart']
    assert [(r['restart'], r['size']) for r in again] == [(1, 2), (1, 2)]
    for r in again:
        np.testing.assert_allclose(r['weights'], expected, rtol=1e-5, atol=1e-6)
    assert 'keras_backend.distribute.ray: restart 1 of 1 at ' in proc.stdout
    assert 'starting 2 worker(s) from the last commit' in proc.stdout
    print('%s: %.1f s for 4 starts, the training, the errors and a restart' % (engine, took))


_OMPI_DRIVER = '''
import sys, time
import ray
ray.init(address=sys.argv[1])
from keras_backend.distribute.ray import RayExecutor
executor = RayExecutor(num_workers=1, backend='theano')
env = executor._start_ompi_server()
print(executor._server.pid, env['OMPI_MCA_pmix_server_uri'], flush=True)
time.sleep(600)
'''


def test_the_mpi_engines_ompi_server_gives_the_loopback_and_dies_with_the_driver(cluster):
    """On a one-node cluster ompi-server's URI names 127.0.0.1 only (no other address, no
    IPv6), and it ends when the driver is killed (SIGKILL: nothing of the driver runs)."""
    import shutil
    if not shutil.which('ompi-server'):
        pytest.skip('OpenMPI\'s ompi-server is not installed here')
    env = _env('theano')
    env['PYTHONPATH'] = os.pathsep.join([REPO, env.get('PYTHONPATH', '')])
    driver = subprocess.Popen([sys.executable, '-c', _OMPI_DRIVER, cluster['address']],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=env, cwd=REPO)
    try:
        line = driver.stdout.readline().split()
        assert len(line) == 2, driver.stderr.read()[-3000:]
        pid, uri = int(line[0]), line[1]
        addresses = [part.split('//', 1)[1].rsplit(':', 1)[0] for part in uri.split(';')[1:]]
        assert addresses == ['127.0.0.1'], uri
        driver.kill()
        driver.wait()
        end = time.time() + 10
        while time.time() < end and os.path.exists('/proc/%d' % pid):
            with open('/proc/%d/stat' % pid) as f:
                if f.read().rsplit(')', 1)[1].split()[0] == 'Z':
                    break
            time.sleep(0.05)
        gone = not os.path.exists('/proc/%d' % pid)
        if not gone:
            with open('/proc/%d/stat' % pid) as f:
                gone = f.read().rsplit(')', 1)[1].split()[0] == 'Z'
        assert gone, 'ompi-server %d outlived its driver' % pid
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
