"""keras_backend.distribute: data-parallel training on several processes.

The multi-process tests start the launcher (``python -m keras_backend.distribute -n 2``)
on this machine's loopback with the scripts in ``tests/distributed/``, one engine at a
time (``KERAS_BACKEND_TESTS``), and check:

* ``K``-level SGD on gradients averaged by ``allreduce``: both workers end with the
  weights of the numpy reference (one process on the global batches), rtol 1e-5;
* Keras 2.3.1 ``fit`` with ``DistributedOptimizer`` (Adam, ``clipnorm``), the
  broadcast and metric-average callbacks and ``shard``: the same weights and epoch
  losses as one process on the global batch, rtol 1e-5; the saved model loads in a
  process that never imports keras_backend.distribute;
* a worker that exits mid-training: the launcher exits non-zero within 60 s naming
  ``WorkerLost``, no process left behind;
* a worker that hangs: caught within the collective timeout plus 30 s;
* the stall check: a worker 5 s late with a 2 s check is named once on stderr, with the
  collective's number; ``init(stall_check=0)`` writes nothing (and the monitor's rules,
  in this process);
* Horovod's learning-rate callbacks: the rates, momenta and SGD-with-momentum weights of
  their formulas, alone and on two workers.

The MPI engines (Theano/PyTensor, CNTK) need OpenMPI's ``mpiexec`` and mpi4py; where
they are missing the tests are skipped with that reason.
"""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

import keras_backend.distribute as kd
from keras_backend.distribute import launcher
from conftest import load_adapter, requested_backends

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SCRIPTS = os.path.join(HERE, 'distributed')
KERAS2_PATH = os.environ.get('KERAS_BACKEND_KERAS2_PATH') or os.path.join(REPO, '.venv',
                                                                          'keras2')
#: the collective timeout of the hang test; it must outlast the workers' compile-time skew
#: (both compile, and Theano 1.0.5 / PyTensor serialise it on their compile lock)
HANG_TIMEOUT = {'theano': 40}
HANG_TIMEOUT_DEFAULT = 15


def _load_script(name):
    spec = importlib.util.spec_from_file_location('dist_' + name,
                                                  os.path.join(SCRIPTS, name + '.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_k_sgd_weights(out):
    """Both workers of a k_sgd.py run (OUT.0.npy, OUT.1.npy) hold the same weights, those
    of the numpy reference (rtol 1e-5)."""
    expected = _load_script('k_sgd').numpy_reference()
    w0, w1 = np.load(out + '.0.npy'), np.load(out + '.1.npy')
    np.testing.assert_array_equal(w0, w1)
    np.testing.assert_allclose(w0, expected, rtol=1e-5, atol=1e-6)


def rendezvous_hosts(out):
    """The hosts in the rendezvous each worker of a k_sgd.py run used (TF_CONFIG's
    workers or the coordinator; empty for the MPI engines)."""
    hosts = []
    for r in (0, 1):
        with open('%s.%d.rendezvous' % (out, r)) as f:
            text = f.read().strip()
        if text.startswith('{'):
            hosts.extend(a.rsplit(':', 1)[0] for a in json.loads(text)['cluster']['worker'])
        elif text:
            hosts.append(text.rsplit(':', 1)[0])
    return hosts


def _mpi_missing():
    if shutil.which('mpiexec') is None:
        return 'mpiexec not on PATH (Debian: apt-get install openmpi-bin libopenmpi-dev)'
    if importlib.util.find_spec('mpi4py') is None:
        return 'mpi4py not installed for %s (pip install "keras_backend[distribute]")' \
            % sys.executable
    return None


def _engine_or_skip(engine):
    module, reason = load_adapter(engine)
    if module is None:
        pytest.skip('%s backend not importable here: %s' % (engine, reason))
    if engine in launcher.MPI_ENGINES:
        why = _mpi_missing()
        if why:
            pytest.skip('%s collectives need MPI: %s' % (engine, why))
    return module


#: the collective path of TensorFlow and JAX in the tests that do not name one:
#: $KERAS_BACKEND_TEST_COLLECTIVES (e.g. mpi: every multi-process test on the MPI path),
#: else the engines' own
TEST_COLLECTIVES = os.environ.get('KERAS_BACKEND_TEST_COLLECTIVES') or 'engine'


def _env(engine, keras2=False, collectives=None):
    """The launcher's environment for ``engine``; TensorFlow and JAX on the collective
    path ``collectives`` (default :data:`TEST_COLLECTIVES`; the tests of the MPI path ask
    for 'mpi'; the MPI engines take it whatever this says)."""
    collectives = collectives or TEST_COLLECTIVES
    env = dict(os.environ)
    env.pop('TF_CONFIG', None)
    for k in list(env):   # the workers' placement is the test's, even inside mpirun or srun
        if k.startswith(('KERAS_BACKEND_DISTRIBUTE_', 'SLURM_', 'OMPI_COMM_WORLD_', 'PMI_')):
            del env[k]
    path = [REPO] + ([KERAS2_PATH] if keras2 and os.path.isdir(KERAS2_PATH) else [])
    if env.get('PYTHONPATH'):
        path.append(env['PYTHONPATH'])
    env.update(PYTHONPATH=os.pathsep.join(path), KERAS_BACKEND_QUIET='1',
               TF_CPP_MIN_LOG_LEVEL='2',
               KERAS_BACKEND=('keras_backend.%s_backend' % engine) if keras2 else engine,
               KERAS_BACKEND_DISTRIBUTE_COLLECTIVES=collectives)
    return env


def _launch(engine, n, script, args, keras2=False, timeout=60, limit=600, env=None,
            collectives=None):
    """Run the launcher (``env``: variables added to the workers'; ``collectives``: the
    path of TensorFlow and JAX); return (CompletedProcess, seconds)."""
    cmd = [sys.executable, '-m', 'keras_backend.distribute', '-n', str(n), '--backend',
           engine, '--timeout', str(timeout), os.path.join(SCRIPTS, script)] + list(args)
    start = time.time()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True,
                          env=dict(_env(engine, keras2, collectives), **(env or {})),
                          cwd=REPO, timeout=limit)
    return proc, time.time() - start


def _processes_with(token):
    """pids of the processes (not this one) whose command line holds ``token``."""
    found = []
    for name in os.listdir('/proc'):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open('/proc/%s/cmdline' % name, 'rb') as f:
                cmd = f.read().decode('utf-8', 'replace')
            with open('/proc/%s/stat' % name) as f:
                state = f.read().rsplit(')', 1)[1].split()[0]
        except (IOError, OSError, IndexError):
            continue
        if token in cmd and state != 'Z':
            found.append(int(name))
    return found


def _no_keras2(proc):
    return proc.returncode != 0 and "No module named 'keras'" in proc.stderr


@pytest.fixture
def workdir():
    d = tempfile.mkdtemp(prefix='kb_distribute_test_')
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def single():
    """keras_backend.distribute initialised in this (one) process."""
    kd.shutdown()
    saved = dict((k, os.environ.pop(k)) for k in list(os.environ)
                 if k.startswith(('KERAS_BACKEND_DISTRIBUTE_', 'OMPI_COMM_', 'SLURM_', 'PMI_')))
    yield kd
    kd.shutdown()
    os.environ.update(saved)


# -- one process: everything is the identity -------------------------------------------

def test_one_process_is_the_identity(K, single):
    single.init(engine=K.backend())
    assert (single.rank(), single.size(), single.local_rank()) == (0, 1, 0)
    x = K.placeholder(shape=(None, 3))
    assert single.allreduce(x) is x
    v = K.variable(np.arange(3.0))
    assert single.allreduce([x, v], average=False) == [x, v]
    got = single.allreduce_values([np.arange(4), 2.5])
    np.testing.assert_array_equal(got[0], np.arange(4.0))
    assert got[0].dtype == np.float64 and float(got[1]) == 2.5
    np.testing.assert_array_equal(single.broadcast_values(np.ones(2), root=0), np.ones(2))
    single.broadcast_variables([v], root=0)
    np.testing.assert_array_equal(K.get_value(v), np.arange(3.0))
    single.barrier()
    data = np.arange(10)
    np.testing.assert_array_equal(single.shard(data, 4), data)


@pytest.mark.parametrize('n,batch,size', [(64, 16, 2), (10, 4, 2), (10, 4, 3), (7, 7, 4),
                                          (5, 8, 2), (0, 4, 2)])
def test_shards_rebuild_every_global_batch(n, batch, size):
    parts = [kd.shard_indices(n, batch, r, size) for r in range(size)]
    rebuilt = []
    for start in range(0, n, batch):
        for r in range(size):
            rebuilt.extend(i for i in parts[r] if start <= i < start + batch)
    np.testing.assert_array_equal(rebuilt, np.arange(n))
    for r in range(size):   # each worker's part of a batch is contiguous and in order
        assert list(parts[r]) == sorted(parts[r])


def test_bad_arguments(single):
    with pytest.raises(ValueError, match='init'):
        single.rank()
    with pytest.raises(ValueError, match='timeout'):
        single.init(timeout=-1, engine='tensorflow')
    with pytest.raises(TypeError, match='timeout'):
        single.init(timeout='soon', engine='tensorflow')
    with pytest.raises(ValueError, match='engine must be one of'):
        single.init(engine='mxnet')
    single.init(engine='tensorflow')
    with pytest.raises(ValueError, match='already initialised'):
        single.init(engine='jax')
    with pytest.raises(ValueError, match='global_batch_size'):
        single.shard(np.arange(4), 0)
    with pytest.raises(TypeError, match='global_batch_size'):
        single.shard(np.arange(4), 2.0)
    with pytest.raises(ValueError, match='different numbers of samples'):
        single.shard([np.arange(4), np.arange(5)], 2)
    with pytest.raises(ValueError, match='root'):
        single.broadcast_values(np.ones(2), root=1)
    with pytest.raises(ValueError, match='numeric'):
        single.allreduce_values(np.array(['a']))


def test_bad_environment(single, monkeypatch):
    monkeypatch.setenv(kd.ENV_SIZE, 'two')
    with pytest.raises(ValueError, match=kd.ENV_SIZE):
        single.init(engine='tensorflow')
    monkeypatch.setenv(kd.ENV_SIZE, '2')
    monkeypatch.setenv(kd.ENV_RANK, '2')
    with pytest.raises(ValueError, match='rank 2 of 2'):
        single.init(engine='tensorflow')


# -- the launcher, on scripts that need no engine ---------------------------------------

_SLEEPER = '''
import os, subprocess, sys, time
rank = int(os.environ.get('KERAS_BACKEND_DISTRIBUTE_RANK', '0'))
child = subprocess.Popen(['sleep', '300'])
with open(os.path.join(sys.argv[1], 'pids.%d' % rank), 'w') as f:
    f.write('%d %d' % (os.getpid(), child.pid))
time.sleep(1.0)
if rank == 1 and sys.argv[2] == 'fail':
    sys.exit(3)
time.sleep(300)
'''


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (IOError, OSError):
        return False


@pytest.mark.parametrize('how', ['fail', 'deadline'])
def test_launcher_kills_every_worker(workdir, how):
    script = os.path.join(workdir, 'sleeper.py')
    with open(script, 'w') as f:
        f.write(_SLEEPER)
    cmd = [sys.executable, '-m', 'keras_backend.distribute', '-n', '3', '--backend',
           'tensorflow'] + (['--deadline', '4'] if how == 'deadline' else []) + \
        [script, workdir, how]
    start = time.time()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=_env('tensorflow'), timeout=120)
    took = time.time() - start
    assert proc.returncode == (3 if how == 'fail' else 124), proc.stderr
    assert 'WorkerLost' in proc.stderr
    assert took < 60
    pids = []
    for r in range(3):
        with open(os.path.join(workdir, 'pids.%d' % r)) as f:
            pids.extend(int(p) for p in f.read().split())
    time.sleep(0.5)
    assert [p for p in pids if _alive(p)] == []


def test_launcher_refuses_bad_arguments(workdir):
    script = os.path.join(workdir, 'hello.py')
    with open(script, 'w') as f:
        f.write('print("hello")\n')
    for args, expected in ((['-n', '0', 'x.py'], '-n must be >= 1'),
                           (['-n', '2', '--backend', 'mxnet', 'x.py'], 'backend must be'),
                           (['-n', '2', '--backend', 'jax', os.path.join(workdir, 'no.py')],
                            'no such script'),
                           # a second host through an ssh that does not exist (192.0.2.0/24:
                           # TEST-NET-1, never a real host)
                           (['-n', '2', '--backend', 'jax', '--collectives', 'engine',
                             '-H', 'localhost:1,192.0.2.77:1', '--ssh', '/nonexistent/ssh',
                             script], 'error: cannot start /nonexistent/ssh: No such file')):
        proc = subprocess.run([sys.executable, '-m', 'keras_backend.distribute'] + args,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=_env('jax'), timeout=60)
        assert proc.returncode == 2 and expected in proc.stderr, proc.stderr
        assert 'Traceback' not in proc.stderr and len(proc.stderr.splitlines()) == 1, \
            proc.stderr


# -- two workers on each engine ---------------------------------------------------------

ENGINES = requested_backends()


@pytest.mark.parametrize('engine', ENGINES)
def test_k_training_on_two_workers_equals_one_process(engine, workdir):
    """Also: worker 1 stalls 3 s; the environment asks for a 2 s stall check, but
    ``init(stall_check=0)`` turns it off: no stall line."""
    _engine_or_skip(engine)
    out = os.path.join(workdir, 'k')
    proc, _ = _launch(engine, 2, 'k_sgd.py', [out, 'stall-off'], env=STALL_ENV)
    assert proc.returncode == 0, proc.stderr[-5000:]
    check_k_sgd_weights(out)
    assert 'distribute: stall' not in proc.stderr, proc.stderr[-5000:]


#: the stall check of the stall tests: 2 s
STALL_ENV = {'KERAS_BACKEND_DISTRIBUTE_STALL_CHECK_SECONDS': '2'}
STALL_LINE = re.compile(r'^keras_backend\.distribute: stall: ranks \[(\d+(?:, \d+)*)\] have '
                        r'not reached (\w+) #(\d+) after 2 s \(ranks \[(\d+(?:, \d+)*)\] '
                        r'are waiting\)$')


@pytest.mark.parametrize('engine', ENGINES)
def test_the_stall_check_names_the_late_worker(engine, workdir):
    """Worker 1 sleeps 5 s before its third training step, with a 2 s stall check:
    the training ends with the right weights, and worker 0's stderr has the stall line
    naming rank 1 and the collective worker 0 waits in (the 4th: broadcast_variables'
    allreduce, then one per step), once. Other stall lines (the workers' compile times
    may differ by more than 2 s under load) must have the same form."""
    _engine_or_skip(engine)
    out = os.path.join(workdir, 'stall')
    proc, _ = _launch(engine, 2, 'k_sgd.py', [out, 'stall'], env=STALL_ENV)
    assert proc.returncode == 0, proc.stderr[-5000:]
    check_k_sgd_weights(out)
    lines = [line for line in proc.stderr.splitlines() if 'distribute: stall' in line]
    found = [STALL_LINE.match(line) for line in lines]
    assert lines and all(found), proc.stderr[-5000:]
    late = [m.groups() for m in found if m.group(3) == '4']
    assert late == [('1', 'allreduce', '4', '0')], lines


@pytest.mark.parametrize('engine', ENGINES)
def test_keras_fit_on_two_workers_equals_one_process(engine, workdir):
    _engine_or_skip(engine)
    two, r0 = _keras_fit_equals_one_process(engine, workdir)
    # the saved model loads, with a plain Keras optimizer, where distribute is not imported
    check = ('import sys, numpy as np, keras_backend.keras2_compat as c; c.install(); '
             'import keras; m = keras.models.load_model(sys.argv[1]); '
             'assert "keras_backend.distribute" not in sys.modules; '
             'print(type(m.optimizer).__module__, type(m.optimizer).__name__, '
             'np.concatenate([w.ravel() for w in m.get_weights()]).tolist())')
    load = subprocess.run([sys.executable, '-c', check, two + '.h5'], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          env=_env(engine, keras2=True), timeout=600)
    assert load.returncode == 0, load.stderr[-5000:]
    module, name, weights = load.stdout.strip().splitlines()[-1].split(' ', 2)
    assert (module, name) == ('keras.optimizers', 'Adam')
    np.testing.assert_allclose(eval(weights), r0['weights'], rtol=1e-6)


def _keras_fit_equals_one_process(engine, workdir, collectives=None, env=None):
    """keras_fit.py on 2 workers: both end with the weights and losses of one process;
    returns (the 2-worker run's output prefix, worker 0's results)."""
    two, one = os.path.join(workdir, 'two'), os.path.join(workdir, 'one')
    proc, _ = _launch(engine, 2, 'keras_fit.py', [two], keras2=True, collectives=collectives,
                      env=env)
    if _no_keras2(proc):
        pytest.skip('Keras 2.3.1 is not installed for %s (see README)' % sys.executable)
    assert proc.returncode == 0, proc.stderr[-5000:]
    ref = subprocess.run([sys.executable, os.path.join(SCRIPTS, 'keras_fit.py'), one],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, env=_env(engine, keras2=True), timeout=600)
    assert ref.returncode == 0, ref.stderr[-5000:]
    r0, r1, r = (np.load(p) for p in (two + '.0.npz', two + '.1.npz', one + '.0.npz'))
    for key in ('weights', 'loss', 'mae'):
        np.testing.assert_array_equal(r0[key], r1[key])
        np.testing.assert_allclose(r0[key], r[key], rtol=1e-5, atol=1e-6, err_msg=key)
    if os.path.isdir(one + '.tb'):
        # Keras' TensorBoard callback with ranks='all': each rank's folder holds the epochs'
        # averaged loss and mae of the one-process run
        for folder in (two + '.tb', os.path.join(two + '.tb', 'rank_1')):
            got = _epoch_scalars(folder)
            for key in ('loss', 'mae'):
                np.testing.assert_allclose(got[key], r[key], rtol=1e-5, atol=1e-6,
                                           err_msg='%s in %s' % (key, folder))
        assert not os.path.exists(os.path.join(one + '.tb', 'rank_1'))
    return two, r0


def _epoch_scalars(folder):
    """{tag: values at steps 0, 1, 2} of a TensorBoard run folder, by tensorboard's reader."""
    from tensorboard.backend.event_processing import event_accumulator as ea
    acc = ea.EventAccumulator(folder, size_guidance={ea.SCALARS: 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags()['scalars']:
        events = acc.Scalars(tag)
        assert [e.step for e in events] == list(range(len(events))), (folder, tag)
        out[tag] = [e.value for e in events]
    return out


@pytest.mark.parametrize('engine', ENGINES)
def test_a_worker_that_exits_stops_the_job(engine, workdir):
    _engine_or_skip(engine)
    out = os.path.join(workdir, 'exit')
    proc, took = _launch(engine, 2, 'k_sgd.py', [out, 'exit'], limit=300)
    assert proc.returncode != 0
    assert 'WorkerLost' in proc.stderr, proc.stderr[-5000:]
    assert took < 60, took
    time.sleep(0.5)
    assert _processes_with(out) == []


@pytest.mark.parametrize('engine', ENGINES)
def test_a_hung_worker_is_caught_within_its_timeout(engine, workdir):
    _engine_or_skip(engine)
    _hung_worker_is_caught(engine, workdir, HANG_TIMEOUT.get(engine, HANG_TIMEOUT_DEFAULT))


def _hung_worker_is_caught(engine, workdir, timeout, collectives=None):
    out = os.path.join(workdir, 'hang')
    proc, _ = _launch(engine, 2, 'k_sgd.py', [out, 'hang'], timeout=timeout, limit=300,
                      collectives=collectives)
    ended = time.time()
    assert proc.returncode != 0
    assert 'WorkerLost' in proc.stderr, proc.stderr[-5000:]
    with open(out + '.hang') as f:
        hung_at = float(f.read())
    assert ended - hung_at < timeout + 30, ended - hung_at
    time.sleep(0.5)
    assert _processes_with(out) == []


# -- TensorFlow and JAX on their MPI path (issue 41) ----------------------------------------

#: the engines with collectives of their own beside MPI (TensorFlow, JAX)
MPI_PATH_ENGINES = [e for e in ENGINES if e not in launcher.MPI_ENGINES]


def _mpi_path_or_skip(engine):
    _engine_or_skip(engine)
    why = _mpi_missing()
    if why:
        pytest.skip('the MPI path needs MPI: %s' % why)


@pytest.mark.parametrize('engine', MPI_PATH_ENGINES)
def test_mpi_path_k_training_equals_one_process(engine, workdir):
    """The launcher with --collectives mpi: the workers start under mpiexec, say they run
    on the MPI path, and end with the reference's weights (the allreduce and its gradient
    through MPI); no TF_CONFIG / coordinator."""
    _mpi_path_or_skip(engine)
    out = os.path.join(workdir, 'k')
    proc, _ = _launch(engine, 2, 'k_sgd.py', [out], collectives='mpi')
    assert proc.returncode == 0, proc.stderr[-5000:]
    check_k_sgd_weights(out)
    for r in (0, 1):
        with open('%s.%d.placement' % (out, r)) as f:
            assert json.load(f)['collective_path'] == 'mpi'
        with open('%s.%d.rendezvous' % (out, r)) as f:
            assert f.read() == ''


@pytest.mark.parametrize('engine', MPI_PATH_ENGINES)
def test_auto_takes_the_mpi_path_where_mpi_is_installed(engine, workdir):
    """--collectives auto (the default) on this CPU machine: MPI when mpiexec and mpi4py
    are here; and the workers of 'engine' run on the engine's own."""
    _mpi_path_or_skip(engine)
    for asked, expected in (('auto', 'mpi'), ('engine', 'engine')):
        out = os.path.join(workdir, asked)
        proc, _ = _launch(engine, 2, 'k_sgd.py', [out], collectives=asked,
                          env={'CUDA_VISIBLE_DEVICES': ''})
        assert proc.returncode == 0, proc.stderr[-5000:]
        check_k_sgd_weights(out)
        with open(out + '.0.placement') as f:
            assert json.load(f)['collective_path'] == expected


@pytest.mark.parametrize('engine', MPI_PATH_ENGINES)
def test_mpi_path_keras_fit_equals_one_process(engine, workdir):
    """Also Horovod's tensor fusion off (threshold 0): one collective per gradient, several
    MPI nodes in one step, which every worker must run in the same order (TensorFlow runs
    independent nodes in any order: the buffers are chained by data), also with one
    inter-op thread."""
    _mpi_path_or_skip(engine)
    _keras_fit_equals_one_process(engine, workdir, collectives='mpi',
                                  env={'KERAS_BACKEND_DISTRIBUTE_FUSION_THRESHOLD': '0',
                                       'TF_NUM_INTEROP_THREADS': '1'})


@pytest.mark.parametrize('engine', MPI_PATH_ENGINES)
def test_mpi_path_a_worker_that_exits_stops_the_job(engine, workdir):
    _mpi_path_or_skip(engine)
    out = os.path.join(workdir, 'exit')
    proc, took = _launch(engine, 2, 'k_sgd.py', [out, 'exit'], limit=300, collectives='mpi')
    assert proc.returncode != 0
    assert 'WorkerLost' in proc.stderr, proc.stderr[-5000:]
    assert took < 60, took
    time.sleep(0.5)
    assert _processes_with(out) == []


@pytest.mark.parametrize('engine', MPI_PATH_ENGINES)
def test_mpi_path_a_hung_worker_is_caught_within_its_timeout(engine, workdir):
    """MPI has no timeout: the wait in the graph's MPI node raises WorkerLost."""
    _mpi_path_or_skip(engine)
    _hung_worker_is_caught(engine, workdir, HANG_TIMEOUT_DEFAULT, collectives='mpi')


def test_collectives_argument_is_checked(single):
    with pytest.raises(ValueError, match='collectives'):
        kd.init(collectives='nccl')
    with pytest.raises(TypeError, match='collectives'):
        kd.init(collectives=1)
    os.environ['KERAS_BACKEND_DISTRIBUTE_COLLECTIVES'] = 'gloo'
    try:
        with pytest.raises(ValueError, match='KERAS_BACKEND_DISTRIBUTE_COLLECTIVES'):
            kd.init()
    finally:
        del os.environ['KERAS_BACKEND_DISTRIBUTE_COLLECTIVES']
    kd.init(collectives='mpi')       # one process: nothing starts, no path
    assert kd.collective_path() is None


def test_fusion_buffers():
    from keras_backend.distribute import horovod
    members = [(0, (10,)), (1, (4, 5)), (2, (30,)), (3, (2,))]      # float32: 40, 80, 120, 8 B
    assert horovod._buckets(members, 4, 64 * 2 ** 20) == [members]
    assert horovod._buckets(members, 4, 0) == [[m] for m in members[::-1]]
    # filled from the last tensor backwards, each buffer in the tensors' order
    assert horovod._buckets(members, 4, 130) == [[(2, (30,)), (3, (2,))],
                                                 [(0, (10,)), (1, (4, 5))]]
    # a tensor over the threshold travels alone
    assert horovod._buckets(members, 4, 100) == [[(3, (2,))], [(2, (30,))], [(1, (4, 5))],
                                                 [(0, (10,))]]
    os.environ['KERAS_BACKEND_DISTRIBUTE_FUSION_THRESHOLD'] = '-3'
    try:
        with pytest.raises(ValueError, match='FUSION_THRESHOLD'):
            horovod.fusion_threshold()
        os.environ['KERAS_BACKEND_DISTRIBUTE_FUSION_THRESHOLD'] = '1024'
        assert horovod.fusion_threshold() == 1024
    finally:
        del os.environ['KERAS_BACKEND_DISTRIBUTE_FUSION_THRESHOLD']
    assert horovod.fusion_threshold() == 64 * 2 ** 20


def test_jax_host_collectives_run_unordered_only_where_data_orders_them():
    """JAX's MPI path: a K.function whose host collectives its data orders (each after
    the one before, none differentiated) runs them as plain callbacks; two independent
    ones, or one under a gradient, make every collective ordered; a trace that meets both
    kinds (one hidden in a loop body) is redone with all of them ordered. No MPI here:
    the collectives are ops that double their input and note how they ran."""
    _engine_or_skip('jax')
    K = load_adapter('jax')[0]
    from keras_backend.jax_backend import core
    calls = []

    def collective(name, marked=True):
        def op(v):
            state = core._HostCollectives
            if op in state.unordered:
                state.unordered_calls += 1
                calls.append((name, 'unordered'))
            else:
                state.ordered_calls += 1
                calls.append((name, 'ordered'))
            return v * 2
        op.host_collective = marked        # unmarked: a collective the graph walk misses
        return op

    def node(op, t):
        leaves, treedef = core._flatten((t,))
        return core._node(op, leaves, treedef, avals=t.avals)
    x = K.placeholder(shape=(3,))
    one = np.ones(3, 'float32')
    a = node(collective('a'), x)
    b = node(collective('b'), a + 1)
    f = K.function([x], [b])
    np.testing.assert_allclose(f([one])[0], (2 * one + 1) * 2)
    assert calls == [('a', 'unordered'), ('b', 'unordered')]
    del calls[:]
    c, d = node(collective('c'), x), node(collective('d'), x)
    np.testing.assert_allclose(K.function([x], [c + d])([one])[0], 4 * one)
    assert sorted(calls) == [('c', 'ordered'), ('d', 'ordered')]
    del calls[:]
    w = K.variable(np.full(3, 3.0, 'float32'))
    e = node(collective('e'), w * x)
    grads = K.gradients(K.sum(e), [w])
    np.testing.assert_allclose(K.function([x], grads)([one])[0], 2 * one)
    assert set(calls) == {('e', 'ordered')}
    del calls[:]
    m = node(collective('m'), x)
    hidden = node(collective('hidden', marked=False), m)
    g = K.function([x], [hidden])
    np.testing.assert_allclose(g([one])[0], 4 * one)
    assert calls == [('m', 'unordered'), ('hidden', 'ordered'),
                     ('m', 'ordered'), ('hidden', 'ordered')]
    assert g._unordered == frozenset()


def test_jax_plain_host_callback_primitive():
    """The plain callback of JAX's MPI path (collectives._plain_callback): our primitive
    lowered to a host callback, on this JAX (not the jax.pure_callback fallback). In a
    jit program, the host function gets the operand as a numpy array, its result comes
    back in the program (each call runs it: no caching of a pure call), and the
    primitive also evaluates outside jit. No MPI here: the host function scales."""
    _engine_or_skip('jax')
    load_adapter('jax')
    import jax
    import jax.numpy as jnp
    from keras_backend.jax_backend import collectives
    assert collectives._host_primitive() is not None
    seen = []

    def host(a):
        seen.append((type(a), a.dtype, a.shape))
        return (np.asarray(a) * 3).astype(a.dtype)
    spec = jax.ShapeDtypeStruct((4,), jnp.float32)
    f = jax.jit(lambda v: collectives._plain_callback(host, spec, v + 1) - 1)
    x = np.arange(4, dtype='float32')
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(f(x)), (x + 1) * 3 - 1)
    assert seen == [(np.ndarray, np.dtype('float32'), (4,))] * 3
    out = collectives._plain_callback(host, spec, jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x * 3)
    assert len(seen) == 4


@pytest.mark.skipif(not hasattr(os, 'sched_setaffinity'), reason='no CPU affinity here')
def test_jax_on_one_cpu_gets_a_callback_pool_of_two_threads():
    """A worker limited to one CPU (bound by the launcher) that imports the JAX adapter
    gets NPROC=2 for XLA's CPU thread pool only where JAX lacks what the MPI path's own
    host callbacks use (jax.pure_callback's copy of its arguments waits for that pool;
    ours copy nothing): here it has them, and a JAX without emit_python_callback is
    shown by deleting it in the child before the adapter's import. An NPROC already
    set, two CPUs, or a process that is no worker are left alone."""
    _engine_or_skip('jax')
    one = [sorted(os.sched_getaffinity(0))[0]]
    code = ('import os, sys; os.sched_setaffinity(0, [int(c) for c in sys.argv[1:]]); '
            'import keras_backend.jax_backend; print(repr(os.environ.get("NPROC")))')
    without = ('import jax._src.callback as c; del c.emit_python_callback; ' + code)

    def run(cpus, env, source=code):
        e = dict(os.environ, PYTHONPATH=REPO, KERAS_BACKEND_QUIET='1')
        e.pop('NPROC', None)
        e.update(env)
        return subprocess.run([sys.executable, '-c', source] + [str(c) for c in cpus],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=e, timeout=120
                              ).stdout.strip().splitlines()[-1]
    worker = {'KERAS_BACKEND_DISTRIBUTE_SIZE': '2'}
    assert run(one, worker) == 'None'
    assert run(one, worker, without) == "'2'"
    assert run(one, {'OMPI_COMM_WORLD_SIZE': '2'}, without) == "'2'"
    assert run(one, dict(worker, NPROC='3'), without) == "'3'"
    assert run(one, {}, without) == 'None'
    mine = sorted(os.sched_getaffinity(0))
    if len(mine) >= 2:
        assert run(mine[:2], worker, without) == 'None'


def test_choose_path():
    from keras_backend.distribute import group
    assert group.choose_path(('mpi',), 'auto') == 'mpi'
    assert group.choose_path(('engine', 'mpi'), 'auto') == 'engine'    # a GPU: NCCL
    assert group.choose_path(('engine', 'mpi'), 'mpi') == 'mpi'
    assert group.choose_path(('mpi',), 'engine') == 'mpi'      # MPI is Theano's own
    with pytest.raises(ValueError, match="offers engine"):
        group.choose_path(('engine',), 'mpi')


def _tensorflow_init_refused(code):
    """Run ``code`` (a TensorFlow worker of 2 that calls init) in a fresh Python; its
    completed process, asserting it exited 0."""
    proc = subprocess.run([sys.executable, '-c', code], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          env=_env('tensorflow'), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def test_tensorflow_refuses_a_late_init():
    """TensorFlow's collective runtime is configured at program start: an init() after a
    TensorFlow op raises our RuntimeError saying so (not TensorFlow's own error)."""
    _engine_or_skip('tensorflow')
    code = ('import json, os\n'
            'os.environ["TF_CONFIG"] = json.dumps({"cluster": {"worker": '
            '["127.0.0.1:1", "127.0.0.1:2"]}, "task": {"type": "worker", "index": 0}})\n'
            'os.environ["KERAS_BACKEND_DISTRIBUTE_SIZE"] = "2"\n'
            'from keras_backend import backend as K\n'
            'K.eval(K.ones((2,)))\n'
            'import keras_backend.distribute as kd\n'
            'try:\n'
            '    kd.init(engine="tensorflow")\n'
            'except RuntimeError as e:\n'
            '    print("REFUSED", e)\n')
    proc = _tensorflow_init_refused(code)
    assert 'REFUSED' in proc.stdout and 'must run before TensorFlow runs' in proc.stdout


def test_tensorflow_names_a_taken_port():
    """A port of TF_CONFIG that another process listens on: init() raises our
    RuntimeError naming that port, not only TensorFlow's "Could not start gRPC server"."""
    _engine_or_skip('tensorflow')
    code = ('import json, os, socket\n'
            'taken = socket.socket()\n'
            'taken.bind(("127.0.0.1", 0))\n'
            'taken.listen(1)\n'
            'port = taken.getsockname()[1]\n'
            'os.environ["TF_CONFIG"] = json.dumps({"cluster": {"worker": '
            '["127.0.0.1:%d" % port, "127.0.0.1:1"]}, "task": {"type": "worker", '
            '"index": 0}})\n'
            'os.environ["KERAS_BACKEND_DISTRIBUTE_SIZE"] = "2"\n'
            'import keras_backend.distribute as kd\n'
            'try:\n'
            '    kd.init(engine="tensorflow", timeout=30)\n'
            'except RuntimeError as e:\n'
            '    print("REFUSED", port, e)\n')
    proc = _tensorflow_init_refused(code)
    words = proc.stdout.split()
    assert words[:1] == ['REFUSED'], proc.stdout + proc.stderr[-3000:]
    assert ('its port, 127.0.0.1:%s in TF_CONFIG, is likely taken' % words[1]) in proc.stdout


# -- Horovod's learning-rate callbacks (Keras 2.3.1) --------------------------------------

def _lr_reference(size, correction):
    """What Horovod's callbacks (horovod/_keras/callbacks.py, 0.28.1) set before each
    batch of tests/distributed/keras_lr.py, and the weights Keras 2.3.1's SGD with
    momentum reaches with them on the global batches, in float64 numpy.

    Returns (lr per batch, momentum per batch, weights)."""
    s = _load_script('keras_lr')
    x, y = s.data()
    x, y = x.astype('float64'), y.astype('float64')
    lr, lrs, moms = s.LR0, [], []
    for epoch in range(s.EPOCHS):
        for batch in range(s.STEPS):
            new = None
            if epoch < s.WARMUP:        # warmup: epoch + (batch + 1) / steps
                t = epoch + (batch + 1.0) / s.STEPS
                new = s.PEAK / size * (t * (size - 1) / s.WARMUP + 1)
            elif epoch == 2 and batch == 0:   # staircase, 0.5 ** epoch
                new = s.PEAK * 0.5 ** epoch
            elif epoch >= 3:            # per batch, 1 / (1 + fractional epoch)
                new = s.PEAK / (1.0 + epoch + float(batch) / s.STEPS)
            momentum = s.MOMENTUM
            if new is not None:
                if correction:
                    momentum = s.MOMENTUM * new / np.float32(lr)
                lr = new
            lrs.append(lr)
            moms.append(momentum)
    w, b = np.zeros((3, 1)), np.zeros((1,))
    vw, vb = np.zeros_like(w), np.zeros_like(b)
    for i, (rate, momentum) in enumerate(zip(lrs, moms)):
        start = (i % s.STEPS) * s.GLOBAL_BATCH
        xb, yb = x[start:start + s.GLOBAL_BATCH], y[start:start + s.GLOBAL_BATCH]
        err = xb.dot(w) + b - yb
        gw, gb = 2 * xb.T.dot(err) / len(xb), 2 * err.sum(axis=0) / len(xb)
        vw, vb = momentum * vw - rate * gw, momentum * vb - rate * gb
        w, b = w + vw, b + vb
    return np.array(lrs), np.array(moms), np.concatenate([w.ravel(), b.ravel()])


def _check_lr_results(results, size):
    s = _load_script('keras_lr')
    assert int(results['size']) == size
    assert list(results['raised']) == [e for _, e in s.BAD]
    for name, correction in (('on', True), ('off', False)):
        lrs, moms, weights = _lr_reference(size, correction)
        np.testing.assert_allclose(results['lr_' + name], lrs, rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(results['momentum_' + name], moms, rtol=1e-6,
                                   err_msg=name)
        np.testing.assert_allclose(results['momentum_after_' + name],
                                   np.full(len(lrs), s.MOMENTUM), rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(results['epoch_lr_' + name], lrs[s.STEPS - 1::s.STEPS],
                                   rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(results['weights_' + name], weights, rtol=2e-5,
                                   atol=1e-6, err_msg=name)
    # the correction changes the training (else the test of the weights proves nothing)
    assert np.abs(results['weights_on'] - results['weights_off']).max() > 1e-3


@pytest.mark.parametrize('engine', ENGINES)
def test_lr_callbacks_in_one_process(engine, workdir):
    """Started alone (size 1: the warmup's multiplier is 1): the rates, the momentum
    (corrected for the batch at which the rate changes, restored after it) and the
    weights are Horovod's formulas and Keras' SGD in numpy."""
    _engine_or_skip(engine)
    out = os.path.join(workdir, 'lr1')
    proc = subprocess.run([sys.executable, os.path.join(SCRIPTS, 'keras_lr.py'), out],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=_env(engine, keras2=True), cwd=REPO,
                          timeout=600)
    if _no_keras2(proc):
        pytest.skip('Keras 2.3.1 is not installed for %s (see README)' % sys.executable)
    assert proc.returncode == 0, proc.stderr[-5000:]
    _check_lr_results(np.load(out + '.0.npz'), 1)


@pytest.mark.parametrize('engine', ENGINES)
def test_lr_callbacks_on_two_workers(engine, workdir):
    """Two workers: the warmup goes from PEAK / 2 to PEAK; both workers set the same
    rates and reach the weights of one process on the global batches."""
    _engine_or_skip(engine)
    out = os.path.join(workdir, 'lr2')
    proc, _ = _launch(engine, 2, 'keras_lr.py', [out], keras2=True)
    if _no_keras2(proc):
        pytest.skip('Keras 2.3.1 is not installed for %s (see README)' % sys.executable)
    assert proc.returncode == 0, proc.stderr[-5000:]
    r0, r1 = np.load(out + '.0.npz'), np.load(out + '.1.npz')
    for key in r0.files:
        np.testing.assert_array_equal(r0[key], r1[key], err_msg=key)
    _check_lr_results(r0, 2)


# -- the stall check's parts, in this process ----------------------------------------------

def test_stall_seconds_and_worker_0_host():
    from keras_backend.distribute import stall, rendezvous
    env = {stall.ENV_STALL_CHECK: '2.5'}
    assert stall.stall_seconds(None, {}) == stall.DEFAULT_STALL_CHECK == 60.0
    assert stall.stall_seconds(None, env) == 2.5
    assert stall.stall_seconds(0, env) == 0.0           # the argument wins
    for bad, error in ((-1, ValueError), ('2', TypeError), (True, TypeError)):
        with pytest.raises(error, match='stall_check'):
            stall.stall_seconds(bad, {})
    for text in ('soon', '-3'):
        with pytest.raises(ValueError, match=stall.ENV_STALL_CHECK):
            stall.stall_seconds(None, {stall.ENV_STALL_CHECK: text})
    launched = rendezvous.Placement(rendezvous.LAUNCHER, 1, 2, 1, 2)
    mpi = rendezvous.Placement(rendezvous.MPI, 1, 2, 1, 2)
    tf_config = '{"cluster": {"worker": ["10.0.0.7:2222", "10.0.0.8:2222"]}, ' \
                '"task": {"type": "worker", "index": 1}}'
    assert stall.rank0_host(launched, {'TF_CONFIG': tf_config}) == '10.0.0.7'
    assert stall.rank0_host(mpi, {'KERAS_BACKEND_DISTRIBUTE_COORDINATOR':
                                  '[fd00::2]:4000'}) == 'fd00::2'
    assert stall.rank0_host(launched, {}) == '127.0.0.1'
    assert stall.rank0_host(mpi, {rendezvous.ENV_ADDRESS: 'node7'}) == 'node7'


def test_stall_monitor_reports_each_stall_once(capfd):
    """The monitor with three workers: worker 0 through stall.start / stall.entered,
    workers 1 and 2 as raw sockets speaking its protocol. Stall time 0.6 s."""
    import socket
    from keras_backend.distribute import rendezvous, stall
    place = rendezvous.Placement(rendezvous.LAUNCHER, 0, 3, 0, 3)
    sent = []

    def broadcast(flat):          # the sum over one worker: worker 0's own array
        sent.append(flat.copy())
        return flat
    try:
        assert stall.start(0, 3, 0.6, place, broadcast)
        host, port, secret = stall._decode(sent[0])
        assert host == '127.0.0.1' and port > 0 and len(secret) == 64
        assert stall._S.address == ('127.0.0.1', port)      # the loopback only
        others = []
        for r in (1, 2):
            s = socket.create_connection(('127.0.0.1', port), timeout=10)
            s.sendall(stall.hello(r, secret))
            others.append(s)

        def report(s, k, kind=0):
            s.sendall(stall._MESSAGE.pack(k, kind))
        stall.entered('allreduce')                 # #1: everybody arrives
        report(others[0], 1)
        report(others[1], 1)
        time.sleep(1.5)
        stall.entered('barrier')                   # #2: worker 2 stays behind
        report(others[0], 2)
        time.sleep(2.5)                            # several looks: one line
        report(others[1], 2)
        stall.entered('allreduce')                 # #3: workers 1 and 2 behind
        time.sleep(2.0)
        report(others[0], 3)
        report(others[1], 3)
        time.sleep(1.0)
        for s in others:
            s.close()
    finally:
        stall.stop()
    time.sleep(0.3)
    lines = [line for line in capfd.readouterr().err.splitlines()
             if 'distribute: stall' in line]
    assert lines == [
        'keras_backend.distribute: stall: ranks [2] have not reached barrier #2 after '
        '0.6 s (ranks [0, 1] are waiting)',
        'keras_backend.distribute: stall: ranks [1, 2] have not reached allreduce #3 after '
        '0.6 s (ranks [0] are waiting)'], lines


def test_stall_monitor_reads_in_batches(capfd):
    """Once every worker is admitted, the monitor does not wake at each message: 4,000
    collectives entered 0.25 ms apart by two workers (worker 0 through stall.entered,
    worker 1 as a raw socket) cost it a few dozen wakes (its voluntary context switches),
    not one per message; a stall is still reported after that (the counts were read)."""
    import socket
    from keras_backend.distribute import rendezvous, stall
    if not os.path.exists('/proc/self/status'):
        pytest.skip('no /proc here: the monitor\'s context switches cannot be read')
    place = rendezvous.Placement(rendezvous.LAUNCHER, 0, 2, 0, 2)
    sent = []

    def broadcast(flat):
        sent.append(flat.copy())
        return flat

    def switches(pid):
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                if line.startswith('voluntary_ctxt_switches'):
                    return int(line.split()[1])
    try:
        assert stall.start(0, 2, 0.6, place, broadcast)
        host, port, secret = stall._decode(sent[0])
        other = socket.create_connection(('127.0.0.1', port), timeout=10)
        other.sendall(stall.hello(1, secret))
        time.sleep(0.5)                            # admitted
        pid = stall._S.monitor.pid
        before = switches(pid)
        for k in range(1, 4001):
            stall.entered('allreduce')
            other.sendall(stall._MESSAGE.pack(k, 0))
            until = time.perf_counter() + 0.00025
            while time.perf_counter() < until:
                pass
        woken = switches(pid) - before
        assert woken < 400, woken
        stall.entered('allreduce')                 # #4001: worker 1 stays behind
        time.sleep(2.0)
        other.close()
    finally:
        stall.stop()
    time.sleep(0.3)
    lines = [line for line in capfd.readouterr().err.splitlines()
             if 'distribute: stall' in line]
    assert lines == ['keras_backend.distribute: stall: ranks [1] have not reached '
                     'allreduce #4001 after 0.6 s (ranks [0] are waiting)'], lines


def test_stall_monitor_admits_only_the_job(capfd, monkeypatch):
    """Connections from outside the job (no secret, a wrong one, a rank outside the job,
    the issue's 13-byte packet claiming rank 1 at collective #1000, a flood of 400
    connections, 300 of them left open) are dropped without a word: no false stall line,
    the real one (worker 2 late at #2, connecting after the flood) is still written, and
    the monitor is alive at the end. The secret is the launcher's when it gives one."""
    import socket
    from keras_backend.distribute import rendezvous, stall
    given = 'ab' * 32
    monkeypatch.setenv(rendezvous.ENV_SECRET, given)
    place = rendezvous.Placement(rendezvous.LAUNCHER, 0, 3, 0, 3)
    sent = []

    def broadcast(flat):
        sent.append(flat.copy())
        return flat
    strangers = []
    try:
        assert stall.start(0, 3, 0.6, place, broadcast)
        host, port, secret = stall._decode(sent[0])
        assert (host, secret) == ('127.0.0.1', given)
        address = ('127.0.0.1', port)

        def stranger(data=b''):
            s = socket.create_connection(address, timeout=10)
            if data:
                s.sendall(data)
            strangers.append(s)
            return s
        one = socket.create_connection(address, timeout=10)
        one.sendall(stall.hello(1, secret))
        stall.entered('allreduce')                 # #1: workers 0 and 1
        one.sendall(stall._MESSAGE.pack(1, 0))
        # from outside the job: the old protocol's hello and a message far ahead ...
        stranger(stall._HELLO.pack(1) + stall._MESSAGE.pack(1000, 0))
        stranger(stall._HELLO.pack(2) + stall._MESSAGE.pack(1000, 1) * 3)
        # ... a wrong secret of the right length, a rank outside the job, half a secret
        stranger(stall.hello(1, 'cd' * 32) + stall._MESSAGE.pack(1000, 0))
        stranger(stall.hello(7, secret) + stall._MESSAGE.pack(1000, 0))
        stranger(secret[:20].encode('ascii'))
        for _ in range(300):                       # a flood left open ...
            stranger()
        for _ in range(100):                       # ... and one that comes and goes
            socket.create_connection(address, timeout=10).close()
        two = socket.create_connection(address, timeout=10)   # the job's, after it
        two.sendall(stall.hello(2, secret) + stall._MESSAGE.pack(1, 0))
        time.sleep(1.5)
        stall.entered('barrier')                   # #2: worker 2 stays behind
        one.sendall(stall._MESSAGE.pack(2, 1))
        time.sleep(2.5)
        two.sendall(stall._MESSAGE.pack(2, 1))
        time.sleep(1.0)
        assert stall._S.monitor.poll() is None, 'the monitor died'
        one.close()
        two.close()
    finally:
        for s in strangers:
            s.close()
        stall.stop()
    time.sleep(0.3)
    lines = [line for line in capfd.readouterr().err.splitlines()
             if 'distribute: stall' in line]
    assert lines == [
        'keras_backend.distribute: stall: ranks [2] have not reached barrier #2 after '
        '0.6 s (ranks [0, 1] are waiting)'], lines


def test_the_monitor_binds_the_address_it_is_reached_at(monkeypatch):
    """The address the monitor listens on: worker 0's as the rendezvous gives it (an IP
    address: only there), 127.0.0.1 for localhost; a secret drawn when none is given."""
    from keras_backend.distribute import rendezvous, stall
    monkeypatch.delenv(rendezvous.ENV_SECRET, raising=False)
    assert rendezvous.listen_address('127.0.0.1') == '127.0.0.1'
    assert rendezvous.listen_address('localhost') == '127.0.0.1'
    assert rendezvous.listen_address('[fd00::2]') == 'fd00::2'
    assert rendezvous.listen_address('no-such-host.invalid') == ''
    one, two = stall.job_secret(), stall.job_secret()
    assert one != two and len(one) == 64 and int(one, 16) >= 0
    assert stall.job_secret({rendezvous.ENV_SECRET: 'F' * 32}) == 'f' * 32
    assert stall.job_secret({rendezvous.ENV_SECRET: 'x y'}) != 'x y'
    mpi = rendezvous.Placement(rendezvous.MPI, 0, 2, 0, 2)
    monkeypatch.setenv(rendezvous.ENV_ADDRESS, '127.0.0.1')    # the one-host launcher's
    sent = []
    try:
        assert stall.start(0, 2, 5.0, mpi, lambda flat: sent.append(flat) or flat)
        bound, port = stall._S.address
        assert bound == '127.0.0.1'
        assert _listening(port) == ['127.0.0.1'], _listening(port)
    finally:
        stall.stop()


def _listening(port):
    """The local addresses of the TCP sockets in LISTEN state on ``port`` (this host's
    /proc/net/tcp and tcp6; an IPv4-mapped IPv6 address as the IPv4 address: gRPC binds
    127.0.0.1 so)."""
    import socket
    import struct
    found = []
    for name, family in (('tcp', socket.AF_INET), ('tcp6', socket.AF_INET6)):
        try:
            with open('/proc/net/%s' % name) as f:
                rows = f.read().splitlines()[1:]
        except IOError:
            continue
        for row in rows:
            fields = row.split()
            local, state = fields[1], fields[3]
            address, hexport = local.split(':')
            if state != '0A' or int(hexport, 16) != port:
                continue
            raw = bytes.fromhex(address)
            # the kernel writes each 32-bit word in host order
            raw = b''.join(struct.pack('=I', struct.unpack('>I', raw[i:i + 4])[0])
                           for i in range(0, len(raw), 4))
            text = socket.inet_ntop(family, raw)
            found.append(text[7:] if text.startswith('::ffff:') and '.' in text else text)
    return sorted(found)


def test_stall_check_off_on_worker_0_turns_it_off():
    from keras_backend.distribute import rendezvous, stall
    place = rendezvous.Placement(rendezvous.LAUNCHER, 0, 2, 0, 2)
    sent = []
    assert not stall.start(0, 2, 0.0, place, lambda flat: sent.append(flat) or flat)
    assert stall._decode(sent[0])[1] == 0 and stall._S.sock is None
    assert stall._S.address is None
    stall.entered('allreduce')          # nothing to tell: no error
    assert stall._S.count == 0
