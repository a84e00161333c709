"""The launcher's hold on its workers, and who may talk to the job's side channels.

Supervision (``launcher.py``, ``_supervision.py``), on scripts that need no engine, for
each engine's way of starting workers (``TF_CONFIG`` and coordinator engines: the
launcher's children; MPI engines: ``mpiexec``'s):

* the launcher killed with SIGKILL, or sent SIGHUP / SIGTERM, while its workers run: no
  worker and no child of a worker is left 10 s later (checked by pid), with every layer
  and with each alone: the kernel's (``PR_SET_PDEATHSIG``), the workers' watch of their
  channel to the launcher, the reaper; SIGHUP and SIGTERM are handled (exit 128 + the
  signal, one line);
* SIGHUP between two attempts of ``--restarts`` (after an attempt failed, and after the
  restart line): the job stops there (exit 129), no further attempt starts;
* the worker named is the first to fail: worker 1 SIGKILLed while worker 0 exits with
  status 1 within a millisecond of seeing it gone (the race the 0.1 s look lost) is
  named "worker 1 of 2 was killed by SIGKILL", in the WorkerLost line and the restart line.

Per engine (``KERAS_BACKEND_TESTS``; ``tests/distributed/supervised.py``, collectives in
a loop): worker 1 SIGKILLed mid-run is named with its signal (and the restart on 2
workers ends well); the launcher SIGKILLed or SIGHUPed leaves no worker after 10 s.

Listening (``stall.py``, ``rendezvous.py``, JAX's coordinator): under the launcher on
one host the stall check's monitor and JAX's coordinator listen on 127.0.0.1 only (read
from /proc/net/tcp, tcp6); ``-H`` refuses host names that ssh or mpiexec would read as
options, and ssh gets ``--`` before the host; the job's secret stays off ssh's command
line. (The monitor's admission of the job's connections only: tests/test_distribute.py.)
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from keras_backend import engines
from keras_backend.distribute import _supervision, launcher
from conftest import requested_backends
from test_distribute import (REPO, SCRIPTS, _engine_or_skip, _env, _mpi_missing,  # noqa: F401
                             _listening, workdir)

ENGINES = requested_backends()
#: the workers must be gone this long after the launcher is
GONE_WITHIN = 10.0


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] not in ('Z', 'X')
    except (IOError, OSError):
        return False


def _mpi_or_skip(engine):
    if engine in launcher.MPI_ENGINES:
        why = _mpi_missing()
        if why:
            pytest.skip('%s workers start under mpiexec: %s' % (engine, why))


def _wait_for(paths, limit, proc=None):
    deadline = time.time() + limit
    while not all(os.path.exists(p) for p in paths):
        if proc is not None and proc.poll() is not None:
            err = proc.communicate()[1] if proc.stderr is not None else ''
            pytest.fail('the launcher ended early (%s): %s' % (proc.returncode,
                                                               (err or '')[-5000:]))
        if time.time() > deadline:
            pytest.fail('not there after %g s: %s' % (limit, [p for p in paths
                                                                if not os.path.exists(p)]))
        time.sleep(0.1)


def _gone_within(pids, limit):
    """The pids still alive ``limit`` seconds from now (looking every 0.1 s)."""
    deadline = time.time() + limit
    left = list(pids)
    while left and time.time() < deadline:
        time.sleep(0.1)
        left = [p for p in left if _alive(p)]
    return left


def _kill_left(pids):
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


# -- on scripts that need no engine ---------------------------------------------------------

_SLEEPER = '''
import os, subprocess, sys, time
rank = int(os.environ.get('KERAS_BACKEND_DISTRIBUTE_RANK') or
           os.environ.get('OMPI_COMM_WORLD_RANK') or 0)
child = subprocess.Popen(['sleep', '300'])
with open(os.path.join(sys.argv[1], 'piddir'), 'w') as f:
    f.write(os.environ['KERAS_BACKEND_DISTRIBUTE_PIDDIR'])
with open(os.path.join(sys.argv[1], 'pids.%d.tmp' % rank), 'w') as f:
    f.write('%d %d' % (os.getpid(), child.pid))
os.rename(os.path.join(sys.argv[1], 'pids.%d.tmp' % rank),
          os.path.join(sys.argv[1], 'pids.%d' % rank))
time.sleep(300)
'''

#: the launcher with some of its layers taken away (argv: LAYER launcher-args...)
_ONE_LAYER = '''
import sys
from keras_backend.distribute import _supervision, launcher
layer = sys.argv.pop(1)
class NoReaper(object):
    def __init__(self, folder):
        pass
    def done(self):
        pass
plain = launcher._worker_command
if layer != 'kernel':              # no PR_SET_PDEATHSIG
    _supervision.die_with_parent = lambda: None
if layer != 'reaper':
    _supervision.Reaper = NoReaper
if layer != 'watch':               # the workers without their channel to the launcher
    launcher._worker_command = lambda script, args, remote=False: plain(script, args, True)
sys.exit(launcher.main(sys.argv[1:]))
'''


def _start_sleepers(engine, workdir, layer='all', n=2):
    script = os.path.join(workdir, 'sleeper.py')
    with open(script, 'w') as f:
        f.write(_SLEEPER)
    args = ['-n', str(n), '--backend', engine, script, workdir]
    if layer == 'all':
        cmd = [sys.executable, '-m', 'keras_backend.distribute'] + args
    else:
        cmd = [sys.executable, '-c', _ONE_LAYER, layer] + args
    # files, not pipes: what outlives the launcher would hold a pipe open
    with open(os.path.join(workdir, 'launcher.err'), 'w') as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err,
                                env=_env(engine), cwd=REPO)
    _wait_for([os.path.join(workdir, 'pids.%d' % r) for r in range(n)], 120, proc)
    workers, children = [], []
    for r in range(n):
        with open(os.path.join(workdir, 'pids.%d' % r)) as f:
            worker, child = (int(p) for p in f.read().split())
        workers.append(worker)
        children.append(child)
    return proc, workers, children


@pytest.mark.parametrize('how,layer', [
    ('SIGKILL', 'all'), ('SIGHUP', 'all'), ('SIGTERM', 'all'),
    ('SIGKILL', 'kernel'), ('SIGKILL', 'watch'), ('SIGKILL', 'reaper')])
@pytest.mark.parametrize('engine', ENGINES)
def test_the_workers_die_with_the_launcher(engine, how, layer, workdir):
    """Workers and their children gone within 10 s of the launcher's death or signal,
    with every layer and with each alone. The kernel's layer alone kills the processes
    the launcher started, not what they started: for it only the workers are checked,
    and not on the MPI engines (mpiexec's ranks; OpenMPI ends those that called MPI_Init
    when mpiexec dies, these scripts do not)."""
    _mpi_or_skip(engine)
    if layer == 'kernel' and engine in launcher.MPI_ENGINES:
        pytest.skip('the kernel layer alone covers the launcher\'s children, not '
                    'mpiexec\'s')
    proc, workers, children = _start_sleepers(engine, workdir, layer)
    os.kill(proc.pid, getattr(signal, how))
    try:
        proc.wait(timeout=60)
        with open(os.path.join(workdir, 'launcher.err')) as f:
            err = f.read()
        checked = workers if layer == 'kernel' else workers + children
        left = _gone_within(checked, GONE_WITHIN)
        assert left == [], (left, err[-3000:])
        if how == 'SIGKILL':
            assert proc.returncode == -signal.SIGKILL
        else:
            signum = getattr(signal, how)
            assert proc.returncode == 128 + signum, err[-3000:]
            assert 'keras_backend.distribute: stopped by %s; killing every worker' % how \
                in err, err[-3000:]
    finally:
        _kill_left(workers + children)
        # the launcher's folder: without the reaper (its layer taken away) nobody removes it
        with open(os.path.join(workdir, 'piddir')) as f:
            shutil.rmtree(f.read(), ignore_errors=True)


# the script of the restart tests: worker 1 fails in attempt 0 (once worker 0 ran)
_FLAKY = '''
import os, sys, time
attempt = int(os.environ['KERAS_BACKEND_DISTRIBUTE_RESTART'])
rank = int(os.environ.get('KERAS_BACKEND_DISTRIBUTE_RANK') or
           os.environ.get('OMPI_COMM_WORLD_RANK') or 0)
with open(os.path.join(sys.argv[1], 'ran.%d.%d' % (attempt, rank)), 'w') as f:
    f.write(str(os.getpid()))
if rank == 1 and attempt == 0:
    while not os.path.exists(os.path.join(sys.argv[1], 'ran.0.0')):
        time.sleep(0.01)
    sys.exit(3)
'''

#: supervise() with a SIGHUP to itself at one point between two attempts (argv: WHEN
#: launcher-args...): 'after-attempt' right after attempt 0 returned, 'after-line' right
#: after the restart line was written
_HUP_BETWEEN = '''
import os, signal, sys
from keras_backend.distribute import _supervision, launcher
when = sys.argv.pop(1)
if when == 'after-attempt':
    real_launch = launcher.launch
    def launch(*args, **kwargs):
        status = real_launch(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGHUP)
        return status
    launcher.launch = launch
else:
    real_say = launcher._say
    def say(msg):
        real_say(msg)
        if msg.startswith('restart '):
            os.kill(os.getpid(), signal.SIGHUP)
    launcher._say = say
sys.exit(launcher.main(sys.argv[1:]))
'''


@pytest.mark.parametrize('when', ['after-attempt', 'after-line'])
@pytest.mark.parametrize('engine', ENGINES)
def test_sighup_between_restart_attempts_stops_the_job(engine, when, workdir):
    _mpi_or_skip(engine)
    script = os.path.join(workdir, 'flaky.py')
    with open(script, 'w') as f:
        f.write(_FLAKY)
    cmd = [sys.executable, '-c', _HUP_BETWEEN, when, '-n', '2', '--backend', engine,
           '--restarts', '3', script, workdir]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=_env(engine), cwd=REPO, timeout=300)
    assert proc.returncode == 128 + signal.SIGHUP, proc.stderr[-3000:]
    ran = sorted(n for n in os.listdir(workdir) if n.startswith('ran.'))
    assert ran == ['ran.0.0', 'ran.0.1'], ran       # no second attempt
    if when == 'after-attempt':
        assert 'stopped by SIGHUP; no restart' in proc.stderr, proc.stderr[-3000:]
        assert 'restart 1 of 3' not in proc.stderr
    else:
        assert 'restart 1 of 3' in proc.stderr
        assert 'stopped by SIGHUP before the workers started' in proc.stderr, \
            proc.stderr[-3000:]


# worker 1 dies by SIGKILL; worker 0 exits with status 1 the moment its connection to
# worker 1 closes (as a collective's peer would, only faster: no error to handle). In a
# restart both exit 0.
_RACER = '''
import os, signal, socket, sys, time
rank = int(os.environ.get('KERAS_BACKEND_DISTRIBUTE_RANK') or
           os.environ.get('OMPI_COMM_WORLD_RANK') or 0)
if int(os.environ.get('KERAS_BACKEND_DISTRIBUTE_RESTART') or 0) > 0:
    sys.exit(0)
path = os.path.join(sys.argv[1], 'peer.%s.sock' % os.environ['KERAS_BACKEND_DISTRIBUTE_PIDDIR'][-8:])
if rank == 0:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path + '.tmp')
    server.listen(1)
    os.rename(path + '.tmp', path)
    peer = server.accept()[0]
    peer.recv(1)
    sys.exit(1)
while not os.path.exists(path):
    time.sleep(0.01)
peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
peer.connect(path)
time.sleep(0.5)
os.kill(os.getpid(), signal.SIGKILL)
'''


@pytest.mark.parametrize('engine', ENGINES)
def test_the_first_worker_to_fail_is_named(engine, workdir):
    _mpi_or_skip(engine)
    script = os.path.join(workdir, 'racer.py')
    with open(script, 'w') as f:
        f.write(_RACER)
    base = [sys.executable, '-m', 'keras_backend.distribute', '-n', '2', '--backend', engine]
    proc = subprocess.run(base + [script, workdir], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=_env(engine),
                          cwd=REPO, timeout=300)
    assert proc.returncode == 128 + signal.SIGKILL, proc.stderr[-3000:]
    assert 'WorkerLost: worker 1 of 2 was killed by SIGKILL; killing the others' in \
        proc.stderr, proc.stderr[-3000:]
    assert 'worker 0 of 2' not in proc.stderr
    again = subprocess.run(base + ['--restarts', '1', script, workdir],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, env=_env(engine), cwd=REPO, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert 'restart 1 of 1 at ' in again.stderr
    assert '): worker 1 was killed by SIGKILL; starting 2 worker(s) from the last commit' in \
        again.stderr, again.stderr[-3000:]


# Two independent failures a few milliseconds apart, neither caused by the other: worker 0
# exits with status 1, worker 1 is killed by SIGKILL; FIRST fails at a moment both agree
# on (this host's monotonic clock), the other GAP seconds later. Each notes the moment it
# failed just before failing (the truth the launcher's choice is held to).
_TWO_FAILURES = '''
import os, signal, sys, time
rank = int(os.environ.get('KERAS_BACKEND_DISTRIBUTE_RANK') or
           os.environ.get('OMPI_COMM_WORLD_RANK') or 0)
out, first, gap = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
go = os.path.join(out, 'go')
if rank == 0:
    with open(go + '.tmp', 'w') as f:
        f.write(repr(time.monotonic() + 1.5))
    os.rename(go + '.tmp', go)
while not os.path.exists(go):
    time.sleep(0.005)
with open(go) as f:
    at = float(f.read()) + (0 if rank == first else gap)
while time.monotonic() < at - 0.003:
    time.sleep(0.001)
while time.monotonic() < at:
    pass
with open(os.path.join(out, 'failed.%d' % rank), 'w') as f:
    f.write(repr(time.monotonic()))
if rank == 0:
    sys.exit(1)
os.kill(os.getpid(), signal.SIGKILL)
'''


@pytest.mark.parametrize('first', [0, 1])
@pytest.mark.parametrize('engine', ENGINES)
def test_of_two_failures_the_earlier_is_named(engine, first, workdir):
    """The launcher names the worker that failed first on the host's clock (its own report,
    or its process's end), not the first end it saw: at 5-20 ms apart the end of a
    worker killed by a signal used to be taken first, whatever the order (15 ms here)."""
    _mpi_or_skip(engine)
    script = os.path.join(workdir, 'two.py')
    with open(script, 'w') as f:
        f.write(_TWO_FAILURES)
    proc = subprocess.run([sys.executable, '-m', 'keras_backend.distribute', '-n', '2',
                           '--backend', engine, script, workdir, str(first), '0.015'],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=_env(engine), cwd=REPO, timeout=300)
    times = {}
    for rank in (0, 1):
        with open(os.path.join(workdir, 'failed.%d' % rank)) as f:
            times[rank] = float(f.read())
    earlier = min(times, key=times.get)
    gap = abs(times[1] - times[0])
    named = {0: 'worker 0 of 2 exited with status 1', 1: 'worker 1 of 2 was killed by SIGKILL'}
    print('planned first %d, failed first %d, %.2f ms apart' % (first, earlier, gap * 1e3))
    assert 'WorkerLost: ' in proc.stderr and 'Warning' not in proc.stderr, proc.stderr[-3000:]
    if gap >= 0.003:      # closer than that (a busy machine's scheduling): either is right
        assert 'WorkerLost: %s; killing the others' % named[earlier] in proc.stderr, \
            (times, proc.stderr[-3000:])
        assert proc.returncode == (1 if earlier == 0 else 128 + signal.SIGKILL)


def test_what_ended_a_worker_reads_as_it_should():
    assert launcher.describe(3) == 'exited with status 3'
    assert launcher.describe(-signal.SIGKILL) == 'was killed by SIGKILL'
    assert launcher.describe(-signal.SIGHUP) == 'was killed by SIGHUP'
    assert launcher.describe(launcher.KILLED) == 'was killed by a signal'
    assert launcher.exit_status(-signal.SIGKILL) == 137
    assert launcher.exit_status(3) == 3
    assert launcher.signal_name(200) == 'signal 200'


def _group_leader():
    """A process in a session (and process group) of its own, sleeping."""
    return subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],
                            start_new_session=True)


@pytest.mark.skipif(not os.path.exists('/proc/self/stat'), reason='no /proc here')
def test_a_group_whose_pid_names_another_process_by_now_is_not_killed():
    """kill_all and the reaper kill a registered group only while its pid still names the
    process registered: a reaped worker's pid given to a new process is left alone."""
    proc = _group_leader()
    try:
        pid, start = _supervision.parse_identity(_supervision.identity(proc.pid))
        assert pid == proc.pid and start == _supervision.start_time(proc.pid) is not None
        other = str(int(start) + 1)          # what a reaped worker of that pid registered
        assert not _supervision.kill_group(pid, other)
        time.sleep(0.2)
        assert proc.poll() is None
        assert _supervision.kill_group(pid, start)
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with pytest.raises(ValueError):
        _supervision.parse_identity('12 34 56')


@pytest.mark.skipif(not os.path.exists('/proc/self/stat'), reason='no /proc here')
def test_the_reaper_leaves_a_pid_that_names_another_process_by_now(workdir):
    folder = os.path.join(workdir, 'launcher')
    os.mkdir(folder)
    reused, ours, worker = _group_leader(), _group_leader(), _group_leader()
    try:
        start = _supervision.start_time(reused.pid)
        with open(os.path.join(folder, '0.pid'), 'w') as f:
            f.write('%d %d' % (reused.pid, int(start) + 1))   # a reaped worker's pid
        with open(os.path.join(folder, '1.pid'), 'w') as f:
            f.write(_supervision.identity(worker.pid))          # a live worker's
        _supervision.register_group(folder, 'proc0', ours.pid)
        reaper = _supervision.Reaper(folder)
        reaper.proc.stdin.close()            # the launcher dies without saying 'done'
        reaper.proc.wait(timeout=30)
        assert ours.wait(timeout=10) == -signal.SIGKILL
        assert worker.wait(timeout=10) == -signal.SIGKILL
        time.sleep(0.2)
        assert reused.poll() is None
        assert not os.path.exists(folder)
    finally:
        for p in (reused, ours, worker):
            if p.poll() is None:
                p.kill()
                p.wait()


# -- per engine: collectives running ----------------------------------------------------------

def _launch_supervised(engine, workdir, mode, extra=()):
    cmd = [sys.executable, '-m', 'keras_backend.distribute', '-n', '2', '--backend', engine,
           '--timeout', '60'] + list(extra) + \
        [os.path.join(SCRIPTS, 'supervised.py'), workdir, mode]
    return cmd


@pytest.mark.parametrize('engine', ENGINES)
def test_a_worker_killed_mid_collectives_is_named_with_its_signal(engine, workdir):
    _engine_or_skip(engine)
    cmd = _launch_supervised(engine, workdir, 'kill1', ['--restarts', '1'])
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=_env(engine), cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr[-5000:]
    lost = [line for line in proc.stderr.splitlines()
            if line.startswith('keras_backend.distribute: WorkerLost: worker ')]
    assert lost == ['keras_backend.distribute: WorkerLost: worker 1 of 2 was killed by '
                    'SIGKILL; killing the others (SIGKILL)'], proc.stderr[-5000:]
    assert '): worker 1 was killed by SIGKILL; starting 2 worker(s) from the last commit' in \
        proc.stderr, proc.stderr[-5000:]


@pytest.mark.parametrize('how', ['SIGKILL', 'SIGHUP'])
@pytest.mark.parametrize('engine', ENGINES)
def test_no_worker_outlives_the_launcher(engine, how, workdir):
    _engine_or_skip(engine)
    proc = subprocess.Popen(_launch_supervised(engine, workdir, 'loop'),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True, env=_env(engine), cwd=REPO)
    try:
        _wait_for([os.path.join(workdir, 'ready.%d' % r) for r in (0, 1)], 400, proc)
        pids = []
        for r in (0, 1):
            with open(os.path.join(workdir, 'pid.%d' % r)) as f:
                pids.append(int(f.read()))
        os.kill(proc.pid, getattr(signal, how))
        out, err = proc.communicate(timeout=60)
        left = _gone_within(pids, GONE_WITHIN)
        assert left == [], (left, err[-3000:])
        if how == 'SIGHUP':
            assert proc.returncode == 128 + signal.SIGHUP, err[-3000:]
            assert 'stopped by SIGHUP' in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


# -- where the job listens, and to whom ---------------------------------------------------------

@pytest.mark.parametrize('engine', ENGINES)
def test_side_channels_listen_on_the_loopback_under_one_host(engine, workdir):
    """The stall check's monitor (every engine) and JAX's coordinator listen on 127.0.0.1
    only; the job's secret reached worker 0. (TensorFlow's own gRPC servers listen on
    every interface: TensorFlow takes no address to bind; README.)"""
    _engine_or_skip(engine)
    out = os.path.join(workdir, 'listen')
    proc = subprocess.Popen(
        [sys.executable, '-m', 'keras_backend.distribute', '-n', '2', '--backend', engine,
         '--timeout', '120', os.path.join(SCRIPTS, 'listening.py'), out],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
        env=_env(engine), cwd=REPO)
    try:
        _wait_for([out + '.json'], 400, proc)
        with open(out + '.json') as f:
            report = json.load(f)
        assert report['secret']
        bound, port = report['monitor']
        assert bound == '127.0.0.1'
        assert _listening(port) == ['127.0.0.1'], _listening(port)
        if engines.worker_start(engine) == engines.WORKERS_COORDINATOR:
            host, _, cport = report['coordinator'].rpartition(':')
            assert host == '127.0.0.1'
            assert _listening(int(cport)) == ['127.0.0.1'], _listening(int(cport))
        with open(out + '.done', 'w'):
            pass
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-5000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_host_names_that_are_not_hosts_are_refused(workdir):
    for bad in ('-oProxyCommand=x', '-oProxyCommand=x:2', 'a;b', 'a b', '$(touch x)',
                '[not:an:address]:2', '[fd00::2', 'user@host', '.hidden', 'a,-p'):
        with pytest.raises(ValueError, match='-H'):
            launcher.parse_hosts(bad)
    assert launcher.parse_hosts('n-1.example.org:2,10.0.0.1,[fd00::2]:3,node_7') == [
        ('n-1.example.org', 2), ('10.0.0.1', 1), ('fd00::2', 3), ('node_7', 1)]
    script = os.path.join(workdir, 'x.py')
    open(script, 'w').close()
    proc = subprocess.run([sys.executable, '-m', 'keras_backend.distribute',
                           '--hosts=-oProxyCommand=touch x', '--backend', 'tensorflow',
                           script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=_env('tensorflow'), cwd=workdir,
                          timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "error: -H '-oProxyCommand=touch x': '-oProxyCommand=touch x' is not a host name" \
        in proc.stderr, proc.stderr
    assert not os.path.exists(os.path.join(workdir, 'x'))


_ENV_REPORT = '''
import json, os, sys
rank = os.environ['KERAS_BACKEND_DISTRIBUTE_RANK']
with open(os.path.join(sys.argv[1], 'env.%s' % rank), 'w') as f:
    json.dump(dict(os.environ), f)
'''


def test_ssh_gets_double_dash_and_never_the_secret(workdir):
    """The ssh path (127.0.0.1 taken for another host, tests/distributed/fake_ssh.py for
    ssh; no engine): ``-tt -- HOST COMMAND``; the job's secret reaches the local worker in
    its environment and is on no command line."""
    script = os.path.join(workdir, 'env.py')
    with open(script, 'w') as f:
        f.write(_ENV_REPORT)
    log = os.path.join(workdir, 'ssh.log')
    ssh = '%s %s %s' % (sys.executable, os.path.join(SCRIPTS, 'fake_ssh.py'), log)
    proc = subprocess.run(
        [sys.executable, os.path.join(SCRIPTS, 'launch_as_two_hosts.py'), '127.0.0.1',
         '-H', 'localhost:1,127.0.0.1:1', '--ssh', ssh, '--backend', 'tensorflow', script,
         workdir], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
        env=_env('tensorflow'), cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(log) as f:
        calls = [json.loads(line) for line in f]
    assert len(calls) == 1 and calls[0][:3] == ['-tt', '--', '127.0.0.1'], calls
    command = calls[0][3]
    assert 'KERAS_BACKEND_DISTRIBUTE_RANK=1' in command
    assert launcher.ENV_SECRET not in command
    with open(os.path.join(workdir, 'env.0')) as f:
        local = json.load(f)
    secret = local[launcher.ENV_SECRET]
    assert len(secret) == 64 and secret not in command
    with open(os.path.join(workdir, 'env.1')) as f:
        assert launcher.ENV_SECRET not in json.load(f)


# -- CPU binding (--bind-to) ---------------------------------------------------------------

_AFFINITY = '''
import json, os, sys
rank = int(os.environ.get('KERAS_BACKEND_DISTRIBUTE_RANK') or
           os.environ.get('OMPI_COMM_WORLD_RANK') or 0)
with open(os.path.join(sys.argv[1], 'cpus.%d' % rank), 'w') as f:
    json.dump(sorted(os.sched_getaffinity(0)), f)
'''


def test_cpu_lists_and_shares():
    assert _supervision.parse_cpus('3,0-1, 1') == [0, 1, 3]
    assert _supervision.parse_cpus('') == []
    for bad in ('a', '1-', '2-1', '0,,x', '-1'):
        with pytest.raises(ValueError, match=_supervision.ENV_CPUS):
            _supervision.parse_cpus(bad)
    cpus = list(range(8))
    assert [_supervision.cpu_share(cpus, r, 3) for r in range(3)] == \
        [[0, 1], [2, 3], [4, 5]]
    assert _supervision.cpu_share([0, 1], 0, 3) is None       # fewer CPUs than workers
    assert _supervision.cpu_share([4, 6], 1, 2) == [6]
    env = {launcher.ENV_CPUS: '0-3'}
    assert launcher.cpu_list(env, 'core', 1, False) == '0,1,2,3'   # given: one worker too
    assert launcher.cpu_list(env, 'none', 2, False) is None
    assert launcher.cpu_list({}, 'core', 1, False) is None
    assert launcher.cpu_list({}, 'core', 2, True) is None           # several hosts
    mine = sorted(os.sched_getaffinity(0))
    assert launcher.cpu_list({}, 'core', 2, False) == (
        ','.join(str(c) for c in mine) if len(mine) >= 2 else None)
    assert launcher.cpu_list({}, 'core', len(mine) + 1, False) is None
    with pytest.raises(ValueError, match='bind_to'):
        launcher.cpu_list({}, 'socket', 2, False)
    with pytest.raises(ValueError, match=_supervision.ENV_CPUS):
        launcher.cpu_list({launcher.ENV_CPUS: 'x'}, 'core', 2, False)


def _affinities(engine, workdir, n, extra=(), env=None):
    script = os.path.join(workdir, 'affinity.py')
    with open(script, 'w') as f:
        f.write(_AFFINITY)
    proc = subprocess.run([sys.executable, '-m', 'keras_backend.distribute', '-n', str(n),
                           '--backend', engine] + list(extra) + [script, workdir],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=dict(_env(engine), **(env or {})),
                          cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = []
    for r in range(n):
        with open(os.path.join(workdir, 'cpus.%d' % r)) as f:
            got.append(json.load(f))
    return got, proc


@pytest.mark.skipif(not hasattr(os, 'sched_setaffinity'), reason='no CPU affinity here')
@pytest.mark.parametrize('engine', sorted(set(['tensorflow'] + [
    e for e in ENGINES if e in launcher.MPI_ENGINES][:1])))
def test_workers_run_on_cpu_shares_of_their_own(engine, workdir):
    """Two workers (the launcher's children for TensorFlow; mpiexec's ranks, through
    their parent, for an MPI engine) each run on their half of the CPUs, disjoint; with
    ``--bind-to none`` on all of them; one worker on the CPUs that
    KERAS_BACKEND_DISTRIBUTE_CPUS names. No engine is imported."""
    _mpi_or_skip(engine)
    mine = sorted(os.sched_getaffinity(0))
    got, _ = _affinities(engine, workdir, 2)
    if len(mine) >= 2:
        half = len(mine) // 2
        assert got == [mine[:half], mine[half:2 * half]], got
    else:
        assert got == [mine, mine], got
    got, _ = _affinities(engine, workdir, 2, ['--bind-to', 'none'])
    assert got == [mine, mine], got
    got, _ = _affinities(engine, workdir, 1, env={launcher.ENV_CPUS: str(mine[-1])})
    assert got == [[mine[-1]]], got
    script = os.path.join(workdir, 'affinity.py')
    proc = subprocess.run([sys.executable, '-m', 'keras_backend.distribute', '-n', '2',
                           '--backend', engine, script, workdir], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          env=dict(_env(engine), **{launcher.ENV_CPUS: '0-'}), cwd=REPO,
                          timeout=60)
    assert proc.returncode == 2 and 'KERAS_BACKEND_DISTRIBUTE_CPUS: expected CPU numbers' \
        in proc.stderr, proc.stderr
