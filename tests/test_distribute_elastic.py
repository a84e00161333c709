"""Committed state and supervised restarts (keras_backend.distribute.State, --restarts).

In this process: a State's commit and restore (values, arrays, numpy's random state),
the atomic commit (a process killed inside ``commit`` leaves the previous commit whole),
bad input, and the launcher's restart loop on a script that needs no engine.

Per engine (``KERAS_BACKEND_TESTS``), Keras 2.3.1 with ``keras2_elastic.fit``
(tests/distributed/keras_elastic.py: 4 epochs of 4 global batches of 16):

* one process, shuffled, committing every 3 steps, killed in epoch 2 and started again:
  the weights of the uninterrupted run;
* two workers committing every step under ``--restarts 3``: worker 1 is SIGKILLed in
  epoch 2, then hangs in epoch 3 (the collective timeout ends that attempt), then worker
  0 is killed inside a commit (the file half written): the job ends with the weights of
  the uninterrupted run (rtol 1e-5), the restart lines and the steps redone printed;
* two workers committing every 3 steps, worker 1 killed in epoch 2, restarted on one
  worker (``--restart-size shrink``): the global batch is kept, so again the weights of
  the uninterrupted run.

The restart time (kill to the first step after the restart), the steps redone and the
final weight difference are printed (``pytest -s``).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import keras_backend.distribute as kd
from keras_backend.distribute import elastic
from conftest import requested_backends
from test_distribute import (HANG_TIMEOUT, HANG_TIMEOUT_DEFAULT, REPO,  # noqa: F401
                             SCRIPTS, _engine_or_skip, _env, _no_keras2, _processes_with,
                             single, workdir)

ENGINES = requested_backends()


# -- State in this process ----------------------------------------------------------------

def test_commit_and_restore_values_and_random_state(workdir, single):
    single.init(engine='tensorflow')
    state = kd.State(workdir, epoch=1, best=np.arange(3.0), name='run', losses=[0.5, 0.25])
    assert (state.epoch, state.batch, state.step) == (1, 0, 0)
    np.random.seed(3)
    expected_draw = np.random.rand(4)
    np.random.seed(3)
    state.commit()
    state.wait()
    assert os.path.exists(os.path.join(workdir, elastic.COMMIT_FILE))
    np.random.rand(10)
    state.epoch, state.best, state.name = 7, np.zeros(2), 'other'
    assert state.restore(verbose=False) is True
    assert (state.epoch, state.name, state.losses) == (1, 'run', [0.5, 0.25])
    np.testing.assert_array_equal(state.best, np.arange(3.0))
    np.testing.assert_array_equal(np.random.rand(4), expected_draw)
    # a new State on the same folder (a restarted process) reads the file
    fresh = kd.State(workdir)
    assert fresh.restore(verbose=False) and fresh.epoch == 1 and fresh.name == 'run'
    assert fresh.check_host_updates() is False
    # background=False: the file is written before commit() returns
    sync_dir = os.path.join(workdir, 'sync')
    now = kd.State(sync_dir, background=False, epoch=3)
    now.commit()
    assert kd.State(sync_dir).restore(verbose=False)
    # a folder without a commit: nothing restored
    empty = kd.State(os.path.join(workdir, 'empty'), epoch=4)
    assert empty.restore() is False and empty.epoch == 4 and not empty.committed()


def test_commit_mid_epoch_keeps_the_epoch_start_random_state(workdir, single):
    single.init(engine='tensorflow')
    state = kd.State(workdir)
    np.random.seed(11)
    start = np.random.get_state()
    state.record_epoch_start()
    np.random.shuffle(np.arange(10))          # the epoch's draw
    state.batch = 2
    state.commit()
    np.random.seed(0)
    state.restore(verbose=False)
    np.testing.assert_array_equal(np.random.get_state()[1], start[1])


_KILLED_COMMIT = '''
import os, signal, sys
import keras_backend.distribute.elastic as elastic
state = elastic.State(sys.argv[1], epoch=1, w=__import__('numpy').arange(5000.0))
state.commit()
state.wait()                       # on disk
state.epoch = 2
def half(fd):
    os.ftruncate(fd, os.fstat(fd).st_size // 2)
    os.kill(os.getpid(), signal.SIGKILL)
elastic._fsync = half
state.commit()
'''


def test_a_process_killed_inside_commit_leaves_the_previous_commit(workdir):
    proc = subprocess.run([sys.executable, '-c', _KILLED_COMMIT, workdir],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=_env('tensorflow'), timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    tmp = [n for n in os.listdir(workdir) if n.endswith('.tmp')]
    assert len(tmp) == 1 and tmp[0].startswith('.state.npz.')  # the half-written commit...
    state = elastic.State(workdir, epoch=0, w=np.zeros(1))
    assert not [n for n in os.listdir(workdir) if n.endswith('.tmp')]   # (removed by its
    assert state.restore(verbose=False)        # next writer) ...and the previous one is read
    assert state.epoch == 1
    np.testing.assert_array_equal(state.w, np.arange(5000.0))


def test_state_refuses_bad_input(workdir, monkeypatch):
    with pytest.raises(TypeError, match='directory'):
        kd.State(3)
    with pytest.raises(ValueError, match='directory'):
        kd.State('')
    with pytest.raises(TypeError, match='model'):
        kd.State(workdir, model=object())
    with pytest.raises(TypeError, match="value 'x'"):
        kd.State(workdir, x=object())
    with pytest.raises(TypeError, match="value 'x'"):
        kd.State(workdir, x=np.array(['a']))
    with pytest.raises(ValueError, match="'commits'"):
        kd.State(workdir, commits=1)
    state = kd.State(workdir)
    with pytest.raises(AttributeError, match='no value'):
        state.nothing
    with open(state.path, 'wb') as f:
        f.write(b'not a commit')
    with pytest.raises(ValueError, match='is not a commit'):
        state.restore()
    # the commit thread's failure comes back from wait() (and the next commit)
    gone = kd.State(os.path.join(workdir, 'gone'))
    shutil.rmtree(gone.directory)        # its lock file with it
    gone.commit()
    with pytest.raises(OSError):
        gone.wait()
    gone.wait()                       # reported once
    monkeypatch.setenv(elastic.ENV_RESTART, 'x')
    with pytest.raises(ValueError, match=elastic.ENV_RESTART):
        kd.restart_count()
    monkeypatch.setenv(elastic.ENV_RESTART, '2')
    assert kd.restart_count() == 2


# -- the launcher's restart loop, on a script that needs no engine ------------------------

_FLAKY = '''
import os, sys
attempt = int(os.environ['KERAS_BACKEND_DISTRIBUTE_RESTART'])
rank = int(os.environ['KERAS_BACKEND_DISTRIBUTE_RANK'])
size = int(os.environ['KERAS_BACKEND_DISTRIBUTE_SIZE'])
with open(os.path.join(sys.argv[1], 'ran.%d.%d' % (attempt, rank)), 'w') as f:
    f.write(str(size))
if rank == size - 1 and attempt < int(sys.argv[2]):
    sys.exit(3)
'''


@pytest.mark.parametrize('fails,restarts,size_rule,min_workers,status', [
    (2, 2, 'same', 1, 0), (2, 1, 'same', 1, 3), (1, 2, 'shrink', 1, 0),
    (1, 2, 'shrink', 3, 3)])
def test_launcher_restarts(workdir, fails, restarts, size_rule, min_workers, status):
    script = os.path.join(workdir, 'flaky.py')
    with open(script, 'w') as f:
        f.write(_FLAKY)
    cmd = [sys.executable, '-m', 'keras_backend.distribute', '-n', '3', '--backend',
           'tensorflow', '--restarts', str(restarts), '--restart-size', size_rule,
           '--min-workers', str(min_workers), script, workdir, str(fails)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=_env('tensorflow'), timeout=120)
    assert proc.returncode == status, proc.stderr
    ran = sorted(n for n in os.listdir(workdir) if n.startswith('ran.'))
    sizes = {}
    for name in ran:
        with open(os.path.join(workdir, name)) as f:
            sizes.setdefault(int(name.split('.')[1]), set()).add(int(f.read()))
    if status == 0:
        attempts = fails + 1
        expected = [3 - a if size_rule == 'shrink' else 3 for a in range(attempts)]
        assert [sizes[a] for a in range(attempts)] == [{n} for n in expected]
        for a in range(1, attempts):
            assert 'restart %d of %d' % (a, restarts) in proc.stderr
            assert 'worker %d of %d exited with status 3' % (expected[a - 1] - 1,
                                                             expected[a - 1]) in proc.stderr
    elif min_workers == 3:
        assert sorted(sizes) == [0] and 'fewer than --min-workers 3' in proc.stderr
    else:
        assert sorted(sizes) == [0, 1] and 'no restart left (1 of 1 used)' in proc.stderr
    if status:
        assert 'WorkerLost' in proc.stderr


def test_launcher_refuses_bad_restart_arguments(workdir):
    script = os.path.join(workdir, 'x.py')
    open(script, 'w').close()
    for args, expected in ((['--restarts', '-1'], '--restarts must be >= 0'),
                           (['--min-workers', '3'], '--min-workers must be in 1 .. -n (2)'),
                           (['--min-workers', '0'], '--min-workers must be in')):
        proc = subprocess.run([sys.executable, '-m', 'keras_backend.distribute', '-n', '2',
                               '--backend', 'tensorflow'] + args + [script],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=_env('tensorflow'), timeout=60)
        assert proc.returncode == 2 and expected in proc.stderr, proc.stderr


# -- Keras 2.3.1 on each engine -----------------------------------------------------------

_REFERENCE = {}


def _run(engine, cmd, env=None, limit=900):
    start = time.time()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env or _env(engine, keras2=True),
                          cwd=REPO, timeout=limit)
    if _no_keras2(proc):
        pytest.skip('Keras 2.3.1 is not installed for %s (see README)' % sys.executable)
    return proc, time.time() - start


def _script(out, statedir, interval, plan, *extra):
    return [os.path.join(SCRIPTS, 'keras_elastic.py'), out, statedir, str(interval),
            plan] + list(extra)


def _reference(engine, workdir, shuffle=False, schedules=False, boundaries=False,
               tensorboard=False):
    """The uninterrupted run: one process on the global batch, on ``engine`` (with
    ``tensorboard``, its TensorBoard events as ``'tensorboard'``)."""
    key = (engine, shuffle, schedules, boundaries, tensorboard)
    if key not in _REFERENCE:
        out = os.path.join(workdir, 'reference%d' % len(_REFERENCE))
        proc, _ = _run(engine, [sys.executable] + _script(
            out, os.path.join(workdir, 'reference_state%d' % len(_REFERENCE)), 100, 'none',
            *(['shuffle'] if shuffle else []) + (['schedules'] if schedules else [])
            + (['boundaries'] if boundaries else [])
            + (['tensorboard'] if tensorboard else [])))
        assert proc.returncode == 0, proc.stderr[-5000:]
        with np.load(out + '.0.npz') as d:
            _REFERENCE[key] = dict((k, np.array(d[k])) for k in d.files)
        if tensorboard:
            _REFERENCE[key]['tensorboard'] = _tensorboard_events(out + '.tb')
    return _REFERENCE[key]


def _needs_tensorboard():
    for name in ('tensorboardX', 'tensorboard'):
        try:
            __import__(name)
        except ImportError as e:
            pytest.skip("%s is not installed (pip install 'keras_backend[tensorboard]'): %s"
                        % (name, e))


def _tensorboard_events(folder):
    """{('scalar' or 'histogram', tag): [(step, value or sum), ...]} of the run folder
    ``folder``, read by TensorBoard's own reader (which drops what a resumed run purged)."""
    from tensorboard.backend.event_processing import event_accumulator as ea
    acc = ea.EventAccumulator(folder, size_guidance={ea.SCALARS: 0, ea.HISTOGRAMS: 0})
    acc.Reload()
    events = {}
    for tag in acc.Tags()['scalars']:
        events[('scalar', tag)] = [(e.step, e.value) for e in acc.Scalars(tag)]
    for tag in acc.Tags()['histograms']:
        events[('histogram', tag)] = [(e.step, e.histogram_value.sum)
                                      for e in acc.Histograms(tag)]
    return events


def _assert_same_events(got, ref, values=lambda key: True):
    """The same tags, the same steps in the same order, values to float32 rounding (for the
    tags ``values`` takes)."""
    assert sorted(got) == sorted(ref)
    for key, expected in ref.items():
        assert [s for s, _ in got[key]] == [s for s, _ in expected], key
        if values(key):
            np.testing.assert_allclose([v for _, v in got[key]], [v for _, v in expected],
                                       rtol=1e-5, atol=1e-6, err_msg=str(key))


def _log(out):
    with open(out + '.log') as f:
        return [json.loads(line) for line in f]


@pytest.mark.parametrize('engine', ENGINES)
def test_one_process_killed_and_started_again_ends_as_the_uninterrupted_run(engine, workdir):
    _engine_or_skip(engine)
    ref = _reference(engine, workdir, shuffle=True)
    out, statedir = os.path.join(workdir, 'one'), os.path.join(workdir, 'one_state')
    cmd = [sys.executable] + _script(out, statedir, 3, 'kill:0:6', 'shuffle')
    first, _ = _run(engine, cmd)
    assert first.returncode == -signal.SIGKILL, first.stderr[-5000:]
    env = _env(engine, keras2=True)
    env[elastic.ENV_RESTART] = '1'
    again, _ = _run(engine, cmd, env=env)
    assert again.returncode == 0, again.stderr[-5000:]
    assert 'restart 1 resumes from the commit of epoch 1 batch 2 (step 6)' in again.stderr
    with np.load(out + '.0.npz') as got:
        np.testing.assert_allclose(got['weights'], ref['weights'], rtol=1e-5, atol=1e-7)
        assert int(got['iterations']) == 16
        np.testing.assert_array_equal(got['epochs'], [1, 2, 3])
        # the resumed epoch's loss is the whole epoch's (its committed batches' sums)
        np.testing.assert_allclose(got['loss'], ref['loss'][1:], rtol=1e-5)


def _launch_elastic(engine, workdir, name, n, interval, plan, restarts, timeout, extra=(),
                    script_extra=()):
    out, statedir = os.path.join(workdir, name), os.path.join(workdir, name + '_state')
    cmd = [sys.executable, '-m', 'keras_backend.distribute', '-n', str(n), '--backend',
           engine, '--timeout', str(timeout), '--restarts', str(restarts)] + list(extra) + \
        _script(out, statedir, interval, plan, *script_extra)
    proc, took = _run(engine, cmd)
    return proc, took, out


def _event_time(out, attempt):
    with open('%s.event.%d' % (out, attempt)) as f:
        return float(f.read())


@pytest.mark.parametrize('engine', ENGINES)
def test_kill_hang_and_kill_inside_commit_restart_to_the_uninterrupted_weights(engine,
                                                                               workdir):
    _engine_or_skip(engine)
    ref = _reference(engine, workdir)
    timeout = HANG_TIMEOUT.get(engine, HANG_TIMEOUT_DEFAULT)
    # epoch 2 (steps 5-8): worker 1 killed; epoch 3: it hangs; epoch 4: worker 0 killed
    # inside the commit after step 13
    plan = 'kill:1:6,hang:1:10,commitkill:0:13'
    proc, took, out = _launch_elastic(engine, workdir, 'chain', 2, 1, plan, 3, timeout)
    assert proc.returncode == 0, proc.stderr[-8000:]
    for k in (1, 2, 3):
        assert 'restart %d of 3' % k in proc.stderr, proc.stderr[-8000:]
    lines = _log(out)
    assert [l['attempt'] for l in lines] == [0, 1, 2, 3]
    # nothing committed is lost: the commit of step k is on disk before the one of step
    # k + 1 starts, so the commit of step 5 is, when worker 1 is killed in step 7 (most
    # likely that of step 6 too: worker 1 waits 2 s first), that of step 9 when worker 1
    # hangs in step 11 (and that of 10 unless its writer thread was stalled: CNTK's
    # collective holds the GIL and its watchdog kills worker 0 at the timeout); the
    # commit of step 13 is lost, that of step 12 is read
    assert lines[0]['from_step'] == 0 and 5 <= lines[1]['from_step'] <= 6
    assert 9 <= lines[2]['from_step'] <= 10 and lines[3]['from_step'] == 12
    # step 13 was done; so may step 14 be (the commit thread writes while it runs)
    redone = lines[3]['steps_redone']
    assert redone in (1, 2)
    assert 'restart 3 resumes from the commit of epoch 3 batch 0 (step 12); %d step(s) ' \
        'redone' % redone in proc.stderr
    with np.load(out + '.0.npz') as d0, np.load(out + '.1.npz') as d1:
        got = dict((k, np.array(d0[k])) for k in d0.files)
        np.testing.assert_array_equal(got['weights'], d1['weights'])
    np.testing.assert_allclose(got['weights'], ref['weights'], rtol=1e-5, atol=1e-7)
    assert int(got['iterations']) == 16
    print('[%s] kill, hang, kill inside a commit: %d restarts, %.1f s in all'
          % (engine, 3, took))
    for line, what in zip(lines[1:], ('kill', 'hang', 'kill inside a commit')):
        print('[%s]   after the %s: attempt %d resumed from step %d, %d step(s) redone, '
              '%.1f s from the event to its first step' % (
                  engine, what, line['attempt'], line['from_step'], line['steps_redone'],
                  line['first_step_end'] - _event_time(out, line['attempt'] - 1)))
    print('[%s]   final weights: max abs difference %.3g from the uninterrupted run'
          % (engine, np.abs(got['weights'] - ref['weights']).max()))
    time.sleep(0.5)
    assert _processes_with(out) == []


@pytest.mark.parametrize('engine', ENGINES)
def test_a_restart_onto_fewer_workers_keeps_the_global_batch(engine, workdir):
    _engine_or_skip(engine)
    ref = _reference(engine, workdir)
    proc, took, out = _launch_elastic(engine, workdir, 'shrink', 2, 3, 'kill:1:6', 1,
                                         60, ['--restart-size', 'shrink'])
    assert proc.returncode == 0, proc.stderr[-8000:]
    assert 'restart 1 of 1' in proc.stderr and 'starting 1 worker(s)' in proc.stderr
    killed = _event_time(out, 0)
    lines = _log(out)
    assert [(l['attempt'], l['workers']) for l in lines] == [(0, 2), (1, 1)]
    # commits every 3 steps and at epoch ends: steps 3, 4 and 6 (that one most likely
    # before the kill in step 7: worker 1 waits 2 s first)
    assert lines[1]['from_step'] in (4, 6)
    with np.load(out + '.0.npz') as d:
        got = dict((k, np.array(d[k])) for k in d.files)
    assert int(got['iterations']) == 16
    diff = np.abs(got['weights'] - ref['weights']).max()
    print('[%s] 2 -> 1 workers, a commit every 3 steps: resumed from step %d, %d step(s) '
          'redone, %.1f s from the kill to the first step after the restart, %.1f s in all; '
          'final weights: max abs difference %.3g, last epoch loss %.6g (uninterrupted %.6g)'
          % (engine, lines[1]['from_step'], lines[1]['steps_redone'],
             lines[1]['first_step_end'] - killed, took, diff, got['loss'][-1],
             ref['loss'][-1]))
    np.testing.assert_allclose(got['weights'], ref['weights'], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('engine', ENGINES)
def test_schedules_and_accumulation_resume_at_every_step_of_an_epoch(engine, workdir):
    """One worker, a commit every step, killed once at each of the four step positions of
    epoch 2 (four restarts): SGD with momentum and backward_passes_per_step=2, a per-batch
    learning-rate schedule and ReduceLROnPlateau end as the uninterrupted run (weights,
    the rate of every step, the epochs' losses)."""
    _engine_or_skip(engine)
    ref = _reference(engine, workdir, schedules=True)
    plan = 'kill:0:4,kill:0:5,kill:0:6,kill:0:7'
    proc, took, out = _launch_elastic(engine, workdir, 'every', 1, 1, plan, 4, 60,
                                      script_extra=['schedules'])
    assert proc.returncode == 0, proc.stderr[-8000:]
    lines = _log(out)
    assert [(l['attempt'], l['from_step']) for l in lines] == [
        (0, 0), (1, 4), (2, 5), (3, 6), (4, 7)], proc.stderr[-8000:]
    with np.load(out + '.0.npz') as d:
        got = dict((k, np.array(d[k])) for k in d.files)
    assert int(got['iterations']) == 8           # 16 steps, one update every 2
    np.testing.assert_allclose(got['lrs'], ref['lrs'][-len(got['lrs']):], rtol=1e-6)
    np.testing.assert_allclose(got['loss'], ref['loss'][1:], rtol=1e-5)
    np.testing.assert_allclose(got['weights'], ref['weights'], rtol=1e-5, atol=1e-7)
    print('[%s] killed at each step of epoch 2 (4 restarts, %.1f s): rates %s; final weights '
          'max abs difference %.3g' % (engine, took, np.round(ref['lrs'], 4).tolist(),
                                       np.abs(got['weights'] - ref['weights']).max()))


#: the kill points of a run of 3 epochs of 4 steps with validation, in the order training
#: reaches them: inside every step but the first (``kill:0:S``: S steps done), inside each
#: epoch's validation (after its last step, before any on_epoch_end) and in each epoch's
#: on_epoch_end (after the other callbacks', before the epoch-end commit)
BOUNDARY_PLAN = ['kill:0:1', 'kill:0:2', 'kill:0:3', 'val:0:0', 'epochend:0:0',
                 'kill:0:4', 'kill:0:5', 'kill:0:6', 'kill:0:7', 'val:0:1', 'epochend:0:1',
                 'kill:0:8', 'kill:0:9', 'kill:0:10', 'kill:0:11', 'val:0:2', 'epochend:0:2']


@pytest.mark.parametrize('engine', ENGINES)
def test_a_resume_at_every_step_and_epoch_boundary_ends_as_the_uninterrupted_run(engine,
                                                                                 workdir):
    """One worker committing every 2 steps (so an epoch's last step is a commit step),
    killed once at each point of BOUNDARY_PLAN (17 restarts), with validation,
    backward_passes_per_step=2, and ReduceLROnPlateau, EarlyStopping(restore_best_weights)
    and ModelCheckpoint(save_best_only) deciding on val_loss, and a stateful metric (mae):
    it ends as the uninterrupted run (the weights EarlyStopping took back, the rate of every
    step, the epochs' val_loss, loss and mae, the epoch it stopped at, the checkpoint
    file's weights). A commit after an
    epoch's last step but before its end used to make the resume skip that end (every
    callback's decision, and validation); EarlyStopping's best weights were not committed
    (a crash at its stop after a resume)."""
    _engine_or_skip(engine)
    _needs_tensorboard()
    ref = _reference(engine, workdir, boundaries=True, tensorboard=True)
    assert int(ref['stopped_epoch']) == 2 and len(ref['val_loss']) == 3
    proc, took, out = _launch_elastic(engine, workdir, 'bounds', 1, 2, ','.join(BOUNDARY_PLAN),
                                      len(BOUNDARY_PLAN), 60,
                                      script_extra=['boundaries', 'tensorboard'])
    assert proc.returncode == 0, proc.stderr[-8000:]
    assert len(_log(out)) == len(BOUNDARY_PLAN) + 1, proc.stderr[-8000:]
    with np.load(out + '.0.npz') as d:
        got = dict((k, np.array(d[k])) for k in d.files)
    assert int(got['stopped_epoch']) == 2
    np.testing.assert_allclose(got['weights'], ref['weights'], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got['checkpoint'], ref['checkpoint'], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got['lrs'], ref['lrs'][-len(got['lrs']):], rtol=1e-6)
    np.testing.assert_allclose(got['val_loss'], ref['val_loss'][-len(got['val_loss']):],
                               rtol=1e-5)
    # the History of the last attempt's epochs: the loss (its epoch sums) and the stateful
    # metric (its running total and count) of the whole epoch, the resumed one included
    np.testing.assert_allclose(got['loss'], ref['loss'][-len(got['loss']):], rtol=1e-5)
    np.testing.assert_allclose(got['mae'], ref['mae'][-len(got['mae']):], rtol=1e-5)
    # Keras' TensorBoard callback (by batch, with histograms): the events that 18 attempts
    # left, as TensorBoard reads them, are the uninterrupted run's (no step lost, none twice)
    _assert_same_events(_tensorboard_events(out + '.tb'), ref['tensorboard'])
    print('[%s] killed at %d points (%.1f s): final weights max abs difference %.3g'
          % (engine, len(BOUNDARY_PLAN), took, np.abs(got['weights'] - ref['weights']).max()))


@pytest.mark.parametrize('engine', ENGINES)
def test_two_workers_take_the_callbacks_state_from_rank_0_through_sync(engine, workdir):
    """Two workers, rank 0 restores and sync() gives the other rank the callbacks' state
    (EarlyStopping's best weights among them, a list of arrays): killed in epoch 1's
    validation (worker 1) and in epoch 2's on_epoch_end (worker 0), the job ends as the
    uninterrupted run."""
    _engine_or_skip(engine)
    _needs_tensorboard()
    ref = _reference(engine, workdir, boundaries=True, tensorboard=True)
    proc, took, out = _launch_elastic(engine, workdir, 'bounds2', 2, 2,
                                      'val:1:1,epochend:0:2', 2, 60,
                                      script_extra=['boundaries', 'tensorboard'])
    assert proc.returncode == 0, proc.stderr[-8000:]
    # TensorBoard: rank 0 alone writes (one event file per attempt in OUT.tb, no rank_1
    # folder), on the uninterrupted run's axis (the job's samples: 8 rows a worker, 16 a
    # step), with its validation losses and weights; a batch's loss is rank 0's own half
    # (MetricAverageCallback averages the epoch's), so only the steps of those are compared
    assert sorted(f.startswith('events.out.tfevents.')
                  for f in os.listdir(out + '.tb')) == [True] * 3
    _assert_same_events(_tensorboard_events(out + '.tb'), ref['tensorboard'],
                        values=lambda key: key[0] == 'histogram' or
                        key[1].startswith('val_') or key[1] == 'lr')
    for rank in (0, 1):
        with np.load('%s.%d.npz' % (out, rank)) as d:
            np.testing.assert_allclose(d['weights'], ref['weights'], rtol=1e-5, atol=1e-7)
            assert int(d['stopped_epoch']) == 2
            np.testing.assert_allclose(d['lrs'], ref['lrs'][-len(d['lrs']):], rtol=1e-6)


# -- one writer per folder, damaged commits, failed writes ---------------------------------

_HOLDER = '''
import sys, time
import keras_backend.distribute.elastic as elastic
state = elastic.State(sys.argv[1], epoch=1)
state.commit(); state.wait()
print('holding', flush=True)
time.sleep(120)
'''


def _holder(workdir, env=None):
    proc = subprocess.Popen([sys.executable, '-c', _HOLDER, workdir], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, universal_newlines=True,
                            env=env or _env('tensorflow'))
    assert proc.stdout.readline().strip() == 'holding', proc.stderr.read()
    return proc


def test_a_second_job_on_a_busy_folder_fails_at_once_naming_the_holder(workdir):
    holder = _holder(workdir)
    try:
        start = time.time()
        with pytest.raises(kd.FolderInUse, match=r'%s.*pid %d' % (workdir, holder.pid)):
            kd.State(workdir)
        assert time.time() - start < 1.0
        # a worker of another rank reads it (restore) and writes nothing...
        env = _env('tensorflow')
        env['KERAS_BACKEND_DISTRIBUTE_RANK'] = '1'
        reader = subprocess.run(
            [sys.executable, '-c', 'import sys; import keras_backend.distribute.elastic as e; '
             's = e.State(sys.argv[1]); print(s.restore(verbose=False), s.epoch); s.commit()',
             workdir], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
            env=env, timeout=120)
        # ...until it takes rank 0's part (not initialised, or after kd.shutdown()): a
        # second writer in the same job, refused
        assert reader.stdout.split() == ['True', '1'], reader.stderr
        assert reader.returncode == 1 and 'FolderInUse' in reader.stderr
        assert 'pid %d' % holder.pid in reader.stderr
    finally:
        holder.kill()
        holder.wait()
    # the kernel dropped the lock with its holder: the folder is free
    state = kd.State(workdir)
    assert state.restore(verbose=False) and state.epoch == 1


def _writer_threads(other_than=()):
    """The live State writer threads, less those in ``other_than`` (a dropped State of an
    earlier test may still be ending its thread when a test starts: counts would race)."""
    import threading
    return [t for t in threading.enumerate()
            if t.name == 'keras_backend State' and t.is_alive() and t not in other_than]


def _folder_taken_by_another_process(folder):
    """True when another process gets FolderInUse on ``folder`` (its lock is held here)."""
    proc = subprocess.run(
        [sys.executable, '-c', 'import sys; import keras_backend.distribute as kd\n'
         'try:\n    kd.State(sys.argv[1])\nexcept kd.FolderInUse:\n    sys.exit(3)',
         folder], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
        env=_env('tensorflow'), timeout=120)
    assert proc.returncode in (0, 3), proc.stderr
    return proc.returncode == 3


def _wait_for(condition, seconds=10.0):
    end = time.time() + seconds
    while not condition() and time.time() < end:
        time.sleep(0.02)
    return condition()


def test_close_and_with_give_the_folder_and_the_thread_back(workdir):
    import gc
    before = set(_writer_threads())
    state = kd.State(workdir, epoch=0, w=np.arange(3.))
    state.epoch = 1
    state.commit()                       # in the writer thread
    assert len(_writer_threads(before)) == 1
    assert _folder_taken_by_another_process(workdir)
    state.close()
    assert state.closed and not _writer_threads(before)
    assert not _folder_taken_by_another_process(workdir)
    state.close()                        # again: nothing
    with pytest.raises(ValueError, match='commit after close'):
        state.commit()
    assert state.restore(verbose=False) and state.epoch == 1     # reading still works
    with kd.State(workdir, epoch=0) as again:
        again.restore(verbose=False)
        again.epoch = 2
        again.commit()
        assert _folder_taken_by_another_process(workdir)
    assert again.closed and not _writer_threads(before)
    assert not _folder_taken_by_another_process(workdir)
    del state, again
    gc.collect()
    third = kd.State(workdir, epoch=0)
    assert third.restore(verbose=False) and third.epoch == 2
    third.close()


def test_a_dropped_state_frees_its_lock_thread_and_snapshot(workdir):
    import gc
    import weakref
    before = set(_writer_threads())
    refs = []
    for k in range(3):                   # a notebook's cells, a sweep's runs
        state = kd.State(workdir, epoch=0, w=np.full(100000, float(k)))
        state.epoch = k + 1
        state.commit()
        refs.append(weakref.ref(state))
        del state
        gc.collect()
        assert refs[-1]() is None        # nothing holds it: not the writer thread
        assert _wait_for(lambda: not _writer_threads(before))
    assert not any(r() for r in refs)
    assert not _folder_taken_by_another_process(workdir)
    last = kd.State(workdir, epoch=0, w=np.zeros(100000))
    assert last.restore(verbose=False) and last.epoch == 3       # the queued commit landed
    np.testing.assert_array_equal(last.w, np.full(100000, 2.))
    last.close()


@pytest.mark.parametrize('name', [elastic.LOCK_FILE, elastic.PROGRESS_FILE])
def test_a_planted_symlink_is_never_followed(workdir, name):
    victim = os.path.join(workdir, 'victim.txt')
    with open(victim, 'w') as f:
        f.write('precious\n')
    folder = os.path.join(workdir, 'shared')
    os.mkdir(folder)
    os.symlink(victim, os.path.join(folder, name))
    with pytest.raises(OSError, match='symbolic link'):
        state = kd.State(folder, epoch=0)
        state.note_progress(5)
        state.commit()
    with open(victim) as f:
        assert f.read() == 'precious\n'
    assert os.path.islink(os.path.join(folder, name))


def test_what_a_killed_writer_leaves_is_cleaned_up(workdir):
    leftovers = ['.state.npz.123.abcdef012345.tmp', '.state.npz.123.abcdef012345.tmp.link']
    for name in leftovers:
        with open(os.path.join(workdir, name), 'wb') as f:
            f.write(b'half a commit')
    with open(os.path.join(workdir, 'notes.tmp'), 'w') as f:      # not ours: kept
        f.write('x')
    state = kd.State(workdir, epoch=0)
    assert not any(os.path.exists(os.path.join(workdir, n)) for n in leftovers)
    assert os.path.exists(os.path.join(workdir, 'notes.tmp'))
    state.close()


def _damage(path, how):
    with open(path, 'rb') as f:
        data = bytearray(f.read())
    if how == 'truncate':
        data = data[:len(data) // 2]
    else:                                 # one byte flipped in the middle
        data[len(data) // 2] ^= 0x40
    with open(path, 'wb') as f:
        f.write(bytes(data))


@pytest.mark.parametrize('how', ['truncate', 'flip'])
def test_a_damaged_latest_commit_falls_back_to_the_previous(workdir, how, capfd):
    state = kd.State(workdir, background=False, epoch=0, w=np.zeros(1000))
    for epoch in (1, 2, 3):
        state.epoch, state.w = epoch, np.full(1000, float(epoch))
        state.commit()
    names = sorted(n for n in os.listdir(workdir) if n.startswith('state.npz'))
    assert names == ['state.npz', 'state.npz.1']           # keep=2: the last two
    assert not [n for n in os.listdir(workdir) if n.endswith('.tmp')]
    _damage(state.path, how)
    fresh = kd.State(workdir, epoch=9, w=np.zeros(1))
    assert fresh.restore(verbose=False) and fresh.epoch == 2
    np.testing.assert_array_equal(fresh.w, np.full(1000, 2.0))
    err = capfd.readouterr().err
    assert err.count('\n') == 1 and 'state.npz is not a commit' in err
    assert 'reading the commit before it, state.npz.1' in err
    # none whole: ValueError naming both, and nothing changed
    _damage(state.path + '.1', how)
    with pytest.raises(ValueError, match=r'state\.npz is not a commit.*state\.npz\.1 is not'):
        fresh.restore()
    assert fresh.epoch == 2
    # keep=3 keeps three
    more = kd.State(os.path.join(workdir, 'three'), background=False, keep=3)
    for epoch in range(5):
        more.epoch = epoch
        more.commit()
    assert sorted(os.listdir(more.directory)) == ['state.lock', 'state.npz', 'state.npz.1',
                                                  'state.npz.2']
    with pytest.raises(ValueError, match='keep'):
        kd.State(workdir, keep=0)


_FULL_DISK = '''
import errno, os, sys
import keras_backend.distribute.elastic as elastic
state = elastic.State(sys.argv[1], epoch=1)
state.commit(); state.wait()
def full(f, data):
    f.write(bytes(data[:10]))
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
elastic._write_bytes = full
state.epoch = 2
state.commit()      # the last commit, written by the thread: it fails
print('end of the script', flush=True)
'''


@pytest.mark.parametrize('how', ['python', 'launcher'])
def test_a_failed_last_write_fails_the_process(workdir, how):
    """ENOSPC (simulated: the write raises it, as a full disk does) on the last commit:
    the process exits with status 1 and says so, at the interpreter's exit and under the
    launcher (whose worker leaves through os._exit); no temporary file is left; the
    previous commit is read."""
    script = os.path.join(workdir, 'full.py')
    with open(script, 'w') as f:
        f.write(_FULL_DISK)
    folder = os.path.join(workdir, 'state')
    cmd = [sys.executable, script, folder] if how == 'python' else [
        sys.executable, '-m', 'keras_backend.distribute', '-n', '1', '--backend',
        'tensorflow', script, folder]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=_env('tensorflow'), timeout=120)
    assert 'end of the script' in proc.stdout
    assert proc.returncode == 1, proc.stderr
    assert 'the last commit of State(%r) was not written: OSError' % folder in proc.stderr
    assert 'No space left on device' in proc.stderr
    assert sorted(os.listdir(folder)) == ['state.lock', 'state.npz']
    state = kd.State(folder)
    assert state.restore(verbose=False) and state.epoch == 1


@pytest.mark.parametrize('engine', ENGINES)
def test_restore_checks_the_whole_commit_and_holds_every_variable(engine, workdir):
    """Keras 2.3.1 on ``engine`` (tests/distributed/keras_state_checks.py): a commit that
    does not fit is refused with the model untouched; backward_passes_per_step's sums and
    counter and the learning rate set by K.set_value come back."""
    _engine_or_skip(engine)
    proc, _ = _run(engine, [sys.executable, os.path.join(SCRIPTS, 'keras_state_checks.py'),
                            workdir])
    assert proc.returncode == 0, proc.stderr[-5000:]
    got = json.loads(proc.stdout.strip().split('\n')[-1])
    assert got['optimizer']['error'].startswith('ValueError: State.restore: ')
    assert 'holds the state of a SGD optimizer, this State\'s optimizer is a Adam' \
        in got['optimizer']['error']
    assert got['shape']['error'].startswith('ValueError: State.restore: ')
    assert 'model weight 0' in got['shape']['error'] and '(5, 8)' in got['shape']['error'] \
        and '(5, 9)' in got['shape']['error'], got['shape']['error']
    for case in ('optimizer', 'shape'):
        assert 'nothing was changed' in got[case]['error']
        assert got[case]['changed'] == 0.0
    assert got['accumulation']['passes'] == 1.0
    assert got['accumulation']['iterations'] == 3
    assert got['accumulation']['difference'] <= 1e-6, got['accumulation']
    np.testing.assert_allclose(got['rate'], 0.025, rtol=1e-6)


@pytest.mark.parametrize('engine', ENGINES)
def test_every_worker_runs_the_same_steps_and_resumes_at_one_point(engine, workdir):
    """65 rows, a global batch of 16, 2 workers: the last global batch (one row) would
    leave worker 1 without a step; it is left out, and both take 16 steps. A commit
    restored on worker 0 only (no sync): both workers stop at once, naming the points."""
    _engine_or_skip(engine)
    proc, took, out = _launch_elastic(engine, workdir, 'odd', 2, 100, 'none', 0, 60,
                                      script_extra=['rows65'])
    assert proc.returncode == 0, proc.stderr[-8000:]
    for rank in (0, 1):
        with np.load('%s.%d.npz' % (out, rank)) as d:
            assert int(d['iterations']) == 16
    start = time.time()
    proc, _, _ = _launch_elastic(engine, workdir, 'odd', 2, 100, 'none', 0, 60,
                                 script_extra=['nosync'])
    assert proc.returncode != 0
    assert 'the workers are not at the same point of training (epoch, batch, step by ' \
        'rank: 0: (4, 0, 16), 1: (0, 0, 0))' in proc.stderr, proc.stderr[-8000:]
    assert time.time() - start < 50      # not the collective timeout


@pytest.mark.parametrize('engine', ENGINES)
def test_pending_gradient_sums_of_two_workers_survive_a_restart_onto_one(engine, workdir):
    """Two workers, backward_passes_per_step=2, a commit every step; worker 1 is killed
    after step 5 (one pass summed, not applied: the commit gathers both workers' sums) and
    the job goes on with one worker (their mean): the uninterrupted run's weights."""
    _engine_or_skip(engine)
    ref = _reference(engine, workdir, schedules=True)
    proc, took, out = _launch_elastic(engine, workdir, 'sums', 2, 1, 'kill:1:5', 1, 60,
                                      ['--restart-size', 'shrink'], script_extra=['schedules'])
    assert proc.returncode == 0, proc.stderr[-8000:]
    lines = _log(out)
    # the commit of step 5 (a pass pending); on CNTK, whose collective holds Python's GIL
    # and so stalls the writer thread, the one of step 4 when that write was in flight
    # (README, "When a worker is lost")
    resumed = [(l['attempt'], l['workers'], l['from_step']) for l in lines]
    assert resumed in ([(0, 2, 0), (1, 1, 5)], [(0, 2, 0), (1, 1, 4)]), proc.stderr[-8000:]
    if engine != 'cntk':
        assert resumed[1][2] == 5, proc.stderr[-8000:]
    with np.load(out + '.0.npz') as d:
        got = dict((k, np.array(d[k])) for k in d.files)
    assert int(got['iterations']) == 8
    np.testing.assert_allclose(got['weights'], ref['weights'], rtol=1e-5, atol=1e-6)
    print('[%s] 2 -> 1 workers, resumed from step %d%s: final weights max abs difference %.3g'
          % (engine, resumed[1][2], ' (a pass pending)' if resumed[1][2] % 2 else '',
             np.abs(got['weights'] - ref['weights']).max()))
