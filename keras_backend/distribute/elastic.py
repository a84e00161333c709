"""Committed training state, for a supervised restart after a worker is lost.

A worker that dies or hangs ends the run (:class:`keras_backend.distribute.WorkerLost`,
every worker stopped). The launcher's ``--restarts R`` then starts the job again
(:func:`keras_backend.distribute.launcher.supervise`), and the new workers resume from
the last *commit* of a :class:`State`: the model's weights, the optimizer's weights
(its ``iterations`` included), the epoch and batch position, numpy's global random state
(what Keras 2.3.1's ``fit`` shuffles with) and the user's own values. The names are
Horovod's elastic ones (``commit``, ``restore``, ``sync``, ``check_host_updates``)::

    import keras_backend.distribute as kd
    import keras_backend.distribute.keras2_elastic as kde
    kd.init()
    ...
    state = kd.State('/shared/run1', model=model, epoch=0, batch=0)
    state.restore()                    # the last commit, if there is one
    kde.fit(model, state, x, y, global_batch_size=64, epochs=10,
            callbacks=[kd.BroadcastGlobalVariablesCallback(0)])

A commit is written by rank 0 only, atomically (a temporary file, ``fsync``,
``os.replace``, ``fsync`` of the folder): a worker killed while it commits leaves the
previous commit whole. Every rank keeps the last commit in memory too.

The launcher tells each worker which attempt it is in ``$KERAS_BACKEND_DISTRIBUTE_RESTART``
(0 the first time; :func:`restart_count`).
"""
import atexit
import errno
import hashlib
import io
import json
import numbers
import os
import queue
import shutil
import socket
import sys
import threading
import uuid
import weakref
import zipfile

import numpy as np

try:
    import fcntl
except ImportError:     # no POSIX locks on this platform: one writer is not enforced
    fcntl = None

#: the launcher's attempt number (0: the first start, k: the k-th restart)
ENV_RESTART = 'KERAS_BACKEND_DISTRIBUTE_RESTART'
#: the latest commit's file in ``State.directory``; older ones are ``state.npz.1``, ...
COMMIT_FILE = 'state.npz'
#: the lock file in ``State.directory``: its holder (host and pid) is the folder's writer
LOCK_FILE = 'state.lock'
#: rank 0's last finished step (``State.note_progress``), read to count the steps redone
PROGRESS_FILE = 'progress'
#: commits kept unless ``State(keep=...)`` says otherwise (the latest and the one before)
DEFAULT_KEEP = 2
#: the endings of the temporary names a commit writes (``.state.npz.<pid>.<id>.tmp`` and,
#: while the kept commits move back, that name + ``.link``): what a killed writer leaves
_TEMPORARY_ENDINGS = ('.tmp', '.tmp.link')
_FORMAT = 2
_RESERVED = ('directory', 'model', 'optimizer', 'background', 'keep', 'steps_redone',
             'restored', 'commits', 'closed')
#: the rank variables of the launchers that start workers (read before ``init``)
_RANK_VARIABLES = ('KERAS_BACKEND_DISTRIBUTE_RANK', 'OMPI_COMM_WORLD_RANK', 'PMI_RANK',
                   'SLURM_PROCID')


class FolderInUse(RuntimeError):
    """A :class:`State` folder is held by another writer (another job, or another worker
    of this one): the message names the folder and the holder's host and pid."""


def restart_count():
    """Which attempt of the launcher this process belongs to: 0 for the first start,
    ``k`` for the ``k``-th restart (``$KERAS_BACKEND_DISTRIBUTE_RESTART``; 0 when unset).

    Raises:
        ValueError: the variable is not an integer >= 0.

    Example:
        >>> restart_count()        # started without --restarts
        0
    """
    raw = os.environ.get(ENV_RESTART, '').strip()
    if not raw:
        return 0
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError('%s must be an integer >= 0, got %r' % (ENV_RESTART, raw))
    return value


def _open_no_follow(path, flags):
    # imported here: the package's import must not import _supervision, which the
    # launcher runs as ``python -m keras_backend.distribute._supervision``
    from ._supervision import open_no_follow
    return open_no_follow(path, flags)


def _fsync(fd):
    """``os.fsync`` (a module function, so that a test can stop a commit half-way)."""
    os.fsync(fd)


def _write_bytes(f, data):
    """Write a commit's bytes to the open file ``f`` (a module function, so that a test can
    make the disk full)."""
    f.write(data)


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:    # some file systems cannot sync a folder
        pass
    finally:
        os.close(fd)


def _rank():
    from .group import _State
    return _State.rank if _State.initialized else 0


def _size():
    from .group import _State
    return _State.size if _State.initialized else 1


def _may_write():
    """Whether this process is its job's writer: rank 0 after ``init``; before it, the
    rank a launcher gave it (0 when started alone)."""
    from .group import _State
    if _State.initialized:
        return _State.rank == 0
    for name in _RANK_VARIABLES:
        value = os.environ.get(name, '').strip()
        if value:
            return value == '0'
    return True


# -- one writer per folder: an OS lock the kernel drops when its holder dies ---------------

_LOCKS = {}            # real path of a folder -> [fd of its lock file, States holding it]
_LOCKS_GUARD = threading.Lock()


def _lock_folder(directory):
    """Hold ``directory``'s lock for this process (shared by its States on that folder);
    the first time, remove the temporary files a killed writer left there.

    Raises:
        FolderInUse: another process holds it.
    """
    key = os.path.realpath(directory)
    with _LOCKS_GUARD:
        held = _LOCKS.get(key)
        if held is not None:
            held[1] += 1
            return key
        path = os.path.join(directory, LOCK_FILE)
        fd = _open_no_follow(path, os.O_RDWR | os.O_CREAT)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                try:
                    holder = os.pread(fd, 200, 0).decode('utf-8', 'replace').strip()
                finally:
                    os.close(fd)
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
                raise FolderInUse(
                    'State: the folder %s is in use by another writer (%s); one job (its '
                    'rank 0) writes a State folder: give this job a folder of its own, or '
                    'stop the other one' % (directory, holder or 'holder unknown'))
        os.ftruncate(fd, 0)
        os.pwrite(fd, ('host %s pid %d\n' % (socket.gethostname(), os.getpid()))
                  .encode('utf-8'), 0)
        _LOCKS[key] = [fd, 1]
    for name in os.listdir(directory):    # a killed writer's half-written commits
        if name.startswith('.' + COMMIT_FILE) and name.endswith(_TEMPORARY_ENDINGS):
            try:
                os.unlink(os.path.join(directory, name))
            except OSError:
                pass
    return key


def _unlock_folder(key):
    with _LOCKS_GUARD:
        held = _LOCKS.get(key)
        if held is None:
            return
        held[1] -= 1
        if held[1] <= 0:
            del _LOCKS[key]
            try:
                os.close(held[0])      # the kernel drops the lock with its last fd
            except OSError:
                pass


# -- the end of the process: every commit reaches the disk, or the exit status says not ----

_LIVE = set()                 # the _Writers whose thread runs
_LIVE_GUARD = threading.Lock()
_EXIT_HOOK = []


def flush_all():
    """Wait for every State's last commit of this process to be on disk.

    Returns:
        A list of ``(State, exception)`` for the commits whose write failed (the State's
        writer in its place where the State itself was dropped) (empty when
        every one is on disk); a line naming the folder and the error is printed to stderr
        for each. The launcher's worker and the end of the interpreter call it, and exit
        with status 1 when the list is not empty.
    """
    failed = []
    with _LIVE_GUARD:
        writers = list(_LIVE)
    for writer in writers:
        try:
            writer.wait()
        except Exception as e:     # OSError from the writer thread, most likely
            failed.append((writer.state() or writer, e))
            sys.stderr.write('keras_backend.distribute: the last commit of State(%r) was not '
                             'written: %s: %s\n' % (writer.directory, type(e).__name__, e))
    if failed:
        sys.stderr.flush()
    return failed


def _flush_at_exit():
    if flush_all():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)          # an atexit hook cannot change the status any other way


def _register_exit_hook():
    if not _EXIT_HOOK:
        atexit.register(_flush_at_exit)
        _EXIT_HOOK.append(True)


# -- what a commit holds besides the weights ---------------------------------------------

def _adapter_module():
    """The adapter whose variables the model holds (the one in use; imported if needed)."""
    import importlib
    from .group import _State, _configured_engine
    from .. import engines
    engine = _State.engine if _State.initialized else _configured_engine()
    return importlib.import_module(engines.adapter_module(engine))


def _is_adapter_variable(K, value):
    try:
        return bool(K.is_variable(value))
    except Exception:
        return False


def _optimizer_variables(optimizer):
    """[(name, variable)]: the adapter variables of ``optimizer`` outside its ``weights``
    that decide its next step (Keras 2.3.1 keeps ``learning_rate``, ``momentum``,
    ``decay``, ``beta_1``, ... as attributes; ``DistributedOptimizer`` its pass counter),
    by attribute name."""
    if optimizer is None:
        return []
    K = None
    known = set(id(w) for w in optimizer.weights)
    out = []
    for name, value in sorted(vars(optimizer).items()):
        if id(value) in known or isinstance(value, (list, tuple, dict, str, numbers.Number)):
            continue
        if K is None:
            K = _adapter_module()
        if _is_adapter_variable(K, value):
            out.append((name, value))
    return out


def _accumulators(optimizer):
    """The gradient sums of ``DistributedOptimizer(backward_passes_per_step=k)`` (one per
    trainable weight; each worker's own), or []."""
    return list(getattr(optimizer, '_kb_accumulated', None) or [])


def _pack(value):
    """(value as arrays, kind) of a callback's attribute: 'py' for a Python number, 'np'
    for a numpy scalar (its dtype kept, so that the restored arithmetic rounds as before)
    (a 0-d array each); 'arrays' for a list of numpy arrays (EarlyStopping's
    ``best_weights``: the list); 'none' for None (an empty array)."""
    if value is None:
        return np.zeros(0, np.int8), 'none'
    if isinstance(value, (list, tuple)) and all(isinstance(a, np.ndarray) for a in value):
        return [np.array(a) for a in value], 'arrays'
    if isinstance(value, np.generic):
        return np.asarray(value), 'np'
    return np.asarray(value), 'py'


def _unpack(array, kind):
    if kind == 'none':
        return None
    if kind == 'arrays':
        return [np.array(a) for a in array]
    return array[()] if kind == 'np' else array.item()


#: the attributes of Keras 2.3.1's callbacks that decide what they do next
CALLBACK_ATTRIBUTES = {
    'ReduceLROnPlateau': ('best', 'wait', 'cooldown_counter'),
    'EarlyStopping': ('best', 'wait', 'stopped_epoch', 'best_weights'),
    'ModelCheckpoint': ('best', 'epochs_since_last_save'),
}


def _callback_state(callback):
    """{attribute: number} of ``callback`` that a commit keeps: its ``get_state()`` when
    it has one (a dict of numbers), else the attributes of
    :data:`CALLBACK_ATTRIBUTES` for its class; None for other callbacks."""
    getter = getattr(callback, 'get_state', None)
    if callable(getter):
        return dict(getter())
    names = CALLBACK_ATTRIBUTES.get(type(callback).__name__)
    if names is None:
        return None
    return dict((n, getattr(callback, n)) for n in names if hasattr(callback, n))


def _set_callback_state(callback, values):
    setter = getattr(callback, 'set_state', None)
    if callable(setter):
        setter(dict(values))
        return
    for n, v in values.items():
        setattr(callback, n, v)


def _read_callback_value(arrays, j, name, kind):
    """(value as arrays, kind) of attribute ``name`` of the ``j``-th callback of a commit
    file's ``arrays``."""
    if kind.startswith('arrays:'):
        return [arrays['callback_%d_%s_%d' % (j, name, k)]
                for k in range(int(kind[len('arrays:'):]))], 'arrays'
    return arrays['callback_%d_%s' % (j, name)], kind


def _checksum(arrays):
    """sha256 of every array of a commit but ``meta`` (names, dtypes, shapes and bytes)."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        if name == 'meta':
            continue
        a = np.ascontiguousarray(arrays[name])
        h.update(('%s|%s|%s|' % (name, a.dtype.str, a.shape)).encode('utf-8'))
        h.update(a.tobytes())
    return h.hexdigest()


def _check_value(name, value):
    """A user value as committed: JSON for numbers, strings, None and lists of them;
    a numpy array otherwise (numbers only)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in 'biuf':
            raise TypeError('State: value %r must hold numbers, got an array of dtype %s'
                            % (name, value.dtype))
        return value
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, str, numbers.Number)):
        if isinstance(value, numbers.Number) and not isinstance(value, (bool, int, float)):
            raise TypeError('State: value %r must be an int, float, str, bool, None, a '
                            'list of them or a numpy array, got %r' % (name, type(value).__name__))
        return value
    if isinstance(value, (list, tuple)):
        try:
            json.dumps(list(value))
        except (TypeError, ValueError):
            raise TypeError('State: value %r must be a list of numbers or strings, got %r'
                            % (name, value))
        return list(value)
    raise TypeError('State: value %r must be an int, float, str, bool, None, a list of them '
                    'or a numpy array, got %r' % (name, type(value).__name__))


def _signed(a):
    """``a`` in a dtype every engine's collective takes (unsigned -> int64, bool -> int32)."""
    if a.dtype.kind == 'u':
        return a.astype(np.int64)
    return a


def _build_slots(model, optimizer):
    """Keras 2.3.1 makes an optimizer's weights (``iterations``, the slots) when it builds
    the training function: build it when they are not made yet."""
    if not optimizer.weights and hasattr(model, '_make_train_function'):
        model._make_train_function()


class _Writer(object):
    """Rank 0's writer of one State's commits: a thread that writes them in commit order
    while training goes on. It holds the folder, ``keep`` and the commits queued, never the
    State itself: a State dropped by its user is freed, its queued commits still reach the
    disk, and the thread ends and gives the folder's lock back after the last one.
    """

    _STOP = object()

    def __init__(self, state, directory, keep):
        self.state = weakref.ref(state)
        self.directory = directory
        self.keep = keep
        self.jobs = queue.Queue()
        self.written = threading.Event()
        self.written.set()
        self.error = None
        self.lock_key = None     # given by the State when it goes: released at the end
        self.thread = threading.Thread(target=self._loop, name='keras_backend State',
                                       daemon=True)
        with _LIVE_GUARD:
            _LIVE.add(self)
        _register_exit_hook()
        self.thread.start()

    def put(self, snap):
        self.written.clear()
        self.jobs.put(snap)

    def wait(self):
        self.written.wait()
        error, self.error = self.error, None
        if error is not None:
            raise error

    def stop(self, lock_key=None):
        """End the thread after the commits queued; it then releases ``lock_key``."""
        self.lock_key = lock_key
        self.jobs.put(self._STOP)

    def _loop(self):
        try:
            while True:
                snap = self.jobs.get()
                if snap is self._STOP:
                    return
                try:
                    _write_commit(self.directory, self.keep, snap)
                except Exception as e:    # raised again by wait()
                    self.error = e
                finally:
                    self.written.set()
        finally:
            if self.error is None:
                with _LIVE_GUARD:
                    _LIVE.discard(self)
            if self.lock_key is not None:
                _unlock_folder(self.lock_key)


class State(object):
    """The training state that a restarted job resumes from (Horovod's
    ``hvd.elastic.KerasState``, with a folder that every host can reach).

    Holds a Keras 2 model's weights, its optimizer's weights (``iterations``, Adam's
    moments...), the values given as keywords (``epoch`` and ``batch``, 0 unless given,
    and any others: numbers, strings, lists of them, numpy arrays), read and set as
    attributes (``state.epoch += 1``), and numpy's global random state at the start of
    epoch ``epoch``. ``batch`` counts the (global) batches of ``epoch`` already done;
    ``step`` (0 unless given) the batches done since the start of training.

    A commit also holds what decides the next step beyond the weights: the optimizer's
    variables that Keras 2.3.1 keeps outside ``optimizer.weights`` (``learning_rate``,
    ``momentum``, ``decay``, ``beta_1``...), the gradient sums and pass counter of
    ``DistributedOptimizer(backward_passes_per_step=k)`` (each worker's own), and the
    state of the callbacks ``keras2_elastic.fit`` runs (ReduceLROnPlateau's and
    EarlyStopping's counters, the epoch's running loss sums).

    Rank 0 is the folder's one writer: it holds an OS lock on ``directory/state.lock``
    until :meth:`close` (``with State(...) as state:``), or until the State is dropped
    (the kernel drops it when the process dies), so a second job on the folder fails at
    once (:class:`FolderInUse`). Its files are never opened through a symbolic link.

    Args:
        directory: the folder of the committed file (str or path; created when missing).
            With several hosts it must be on a file system every host reaches.
        model: a Keras 2 model (anything with ``get_weights`` / ``set_weights``), or None.
        optimizer: its optimizer; default ``model.optimizer`` when the model is compiled.
        background: True: rank 0 writes each commit in a writer thread while training
            goes on (:meth:`commit`); False: ``commit`` returns once the file is on disk.
            (An engine collective that holds Python's GIL, CNTK's, stalls the thread
            while it waits: a commit in flight when a peer dies may then be lost.)
        keep: int >= 1, the commits kept in the folder (default 2: the latest,
            ``state.npz``, and the one before, ``state.npz.1``); a damaged latest one is
            passed over for the newest whole one.
        **values: the user's values, committed and restored with the weights.

    Raises:
        TypeError: ``directory`` is not a str or path, a model without ``get_weights``
            and ``set_weights``, ``keep`` not an int, or a value of another type than
            those above.
        ValueError: a value named like one of State's own attributes (directory, model,
            optimizer, keep, steps_redone, restored, commits, closed); ``keep`` < 1.
        FolderInUse: this process is its job's writer (rank 0) and another process
            holds the folder (another job on it, or workers of an earlier one still
            alive): the message names the holder's host and pid.

    Example:
        >>> import tempfile
        >>> s = State(tempfile.mkdtemp(), epoch=0, best=np.zeros(3))
        >>> s.epoch = 2; s.commit()
        >>> s.epoch = 5; s.restore()
        True
        >>> s.epoch
        2
    """

    def __init__(self, directory, model=None, optimizer=None, background=True,
                 keep=DEFAULT_KEEP, **values):
        if isinstance(directory, bytes) or not isinstance(directory, (str, os.PathLike)):
            raise TypeError('State: directory must be a str or path, got %r'
                            % (type(directory).__name__,))
        directory = os.fspath(directory)
        if not directory:
            raise ValueError('State: directory must not be empty')
        for what, obj in (('model', model), ('optimizer', optimizer)):
            if obj is not None and not (hasattr(obj, 'get_weights')
                                        and hasattr(obj, 'set_weights')):
                raise TypeError('State: %s must be a Keras 2 %s (with get_weights and '
                                'set_weights), got %r' % (what, what, type(obj).__name__))
        if isinstance(keep, bool) or not isinstance(keep, (int, np.integer)):
            raise TypeError('State: keep must be an int, got %r' % (keep,))
        if keep < 1:
            raise ValueError('State: keep must be >= 1, got %d' % keep)
        if optimizer is None and model is not None:
            optimizer = getattr(model, 'optimizer', None)
        for name in values:
            if name in _RESERVED or name.startswith('_'):
                raise ValueError('State: %r cannot be a value name (State\'s own attribute '
                                 'or a leading underscore)' % (name,))
        object.__setattr__(self, '_lock', None)
        object.__setattr__(self, '_directory', directory)
        object.__setattr__(self, '_model', model)
        object.__setattr__(self, '_optimizer', optimizer)
        object.__setattr__(self, '_keep', int(keep))
        object.__setattr__(self, '_values', {})
        object.__setattr__(self, '_memory', None)
        object.__setattr__(self, '_epoch_rng', None)
        object.__setattr__(self, 'steps_redone', 0)
        object.__setattr__(self, 'restored', False)
        object.__setattr__(self, 'commits', 0)
        object.__setattr__(self, '_progress_fd', None)
        object.__setattr__(self, '_background', bool(background))
        object.__setattr__(self, '_writer', None)     # rank 0's _Writer, once it commits
        object.__setattr__(self, '_closed', False)
        #: the callbacks whose state commits hold (keras2_elastic.fit sets them)
        object.__setattr__(self, '_callbacks', None)
        #: {index: (class name, {attribute: value})} restored, for those callbacks
        object.__setattr__(self, 'callback_states', {})
        for name in ('epoch', 'batch', 'step'):
            values.setdefault(name, 0)
        for name, value in values.items():
            setattr(self, name, value)
        os.makedirs(directory, exist_ok=True)
        if _may_write():
            self._hold_lock()

    def _hold_lock(self):
        if self._lock is None:
            object.__setattr__(self, '_lock', _lock_folder(self._directory))

    # -- values as attributes --------------------------------------------------------

    @property
    def directory(self):
        """The folder of the committed files (str)."""
        return self._directory

    @property
    def model(self):
        """The model whose weights are committed, or None."""
        return self._model

    @property
    def optimizer(self):
        """The optimizer whose weights are committed, or None."""
        if self._optimizer is None and self._model is not None:
            return getattr(self._model, 'optimizer', None)
        return self._optimizer

    @property
    def keep(self):
        """The number of commits kept in the folder (int >= 1)."""
        return self._keep

    @property
    def path(self):
        """The latest commit's file: ``directory/state.npz``."""
        return os.path.join(self._directory, COMMIT_FILE)

    def _paths(self):
        """The commit files in the folder, newest first: ``state.npz``, ``state.npz.1``..."""
        older = []
        for name in os.listdir(self._directory):
            tail = name[len(COMMIT_FILE) + 1:]
            if name.startswith(COMMIT_FILE + '.') and tail.isdigit():
                older.append(int(tail))
        return [self.path] + ['%s.%d' % (self.path, k) for k in sorted(older)]

    def __getattr__(self, name):
        values = self.__dict__.get('_values', {})
        if name in values:
            return values[name]
        raise AttributeError('State has no value %r' % (name,))

    def __setattr__(self, name, value):
        if name.startswith('_') or name in ('steps_redone', 'restored', 'commits'):
            object.__setattr__(self, name, value)
            return
        if name in _RESERVED:
            raise ValueError('State: %r is State\'s own attribute, not a value' % (name,))
        self._values[name] = _check_value(name, value)

    def values(self):
        """A copy of the user's values (a dict: epoch, batch, step and the others)."""
        return dict((k, np.array(v) if isinstance(v, np.ndarray) else v)
                    for k, v in self._values.items())

    # -- commit ----------------------------------------------------------------------

    def record_epoch_start(self):
        """Remember numpy's global random state as the start of the current epoch (the
        state committed with ``batch > 0``). ``keras2_elastic``'s callback and ``fit``
        call it before the epoch's shuffle; a commit with ``batch == 0`` takes the
        state of that moment instead."""
        object.__setattr__(self, '_epoch_rng', np.random.get_state())

    def track_callbacks(self, callbacks):
        """Commit the state of ``callbacks`` (a list of Keras callbacks) from now on:
        ReduceLROnPlateau's and EarlyStopping's counters, and ``get_state()`` of any
        callback that has ``get_state`` / ``set_state``. ``keras2_elastic.fit`` calls it;
        the restored states are in :attr:`callback_states`."""
        object.__setattr__(self, '_callbacks', list(callbacks))

    def _snapshot(self, gather=False):
        model, optimizer = self._model, self.optimizer
        if model is not None and optimizer is not None:
            _build_slots(model, optimizer)
        weights = [np.array(w) for w in model.get_weights()] if model is not None else []
        opt = [np.array(w) for w in optimizer.get_weights()] if optimizer is not None else []
        hyper, accumulated = [], []
        named = _optimizer_variables(optimizer)
        sums = _accumulators(optimizer)
        if named or sums:
            K = _adapter_module()
            got = K.batch_get_value([v for _, v in named] + sums)
            hyper = [(n, np.array(a)) for (n, _), a in zip(named, got[:len(named)])]
            accumulated = [np.array(a)[None] for a in got[len(named):]]
            if gather and accumulated and _size() > 1:
                # each worker sums its own gradients: the commit holds every worker's
                from .horovod import allgather_values
                accumulated = [allgather_values(a) for a in accumulated]
        callbacks = None
        if self._callbacks is not None:
            callbacks = []
            for i, cb in enumerate(self._callbacks):
                got = _callback_state(cb)
                if got is not None:
                    callbacks.append((i, type(cb).__name__,
                                      dict((k, _pack(v)) for k, v in got.items())))
        rng = np.random.get_state() if (self._values.get('batch', 0) == 0
                                        or self._epoch_rng is None) else self._epoch_rng
        return {'weights': weights, 'optimizer': opt, 'values': self.values(),
                'rng': (rng[0], np.array(rng[1]), int(rng[2]), int(rng[3]), float(rng[4])),
                'hyper': hyper, 'accumulated': accumulated, 'callbacks': callbacks,
                'optimizer_class': type(optimizer).__name__ if optimizer is not None
                else None}

    def commit(self):
        """Save the state: every rank keeps it in memory, rank 0 also writes it to
        ``directory/state.npz`` atomically (a temporary file of a name of its own in the
        same folder, fsync, ``os.replace``, fsync of the folder; the previous commits
        move to ``state.npz.1``, ... first), so that a process killed while it commits
        leaves the previous commit readable. Every worker calls it at the same step: no
        collective, except when ``DistributedOptimizer(backward_passes_per_step=k)``
        holds gradient sums of a step not yet applied on several workers (each worker's
        sums are gathered into the commit).

        The weights are fetched here; the file is written by a thread while training
        goes on (:meth:`wait` waits for it; the next commit waits for the previous one):
        a commit is on disk a few milliseconds after ``commit`` returns, and a job killed
        in between resumes from the commit before it.

        Returns:
            None.

        Raises:
            OSError: the previous commit's file could not be written (rank 0).
            FolderInUse: another process holds the folder (rank 0; e.g. every worker
                after ``shutdown()``, where each one is rank 0).

        Example:
            >>> state.batch += 1; state.commit()     # doctest: +SKIP
        """
        self._check_open('commit')
        snap = self._snapshot(gather=True)
        object.__setattr__(self, '_memory', snap)
        object.__setattr__(self, 'commits', self.commits + 1)
        if _rank() != 0:
            return
        self._hold_lock()
        self.wait()               # one write at a time, in commit order
        if not self._background:
            _write_commit(self._directory, self._keep, snap)
            return
        if self._writer is None:  # one thread for every commit (starting one costs ~1 ms)
            object.__setattr__(self, '_writer', _Writer(self, self._directory, self._keep))
        self._writer.put(snap)

    def wait(self):
        """Block until rank 0's last commit is on disk (``commit`` writes the file in a
        thread of its own while training goes on; the next ``commit``, ``restore``,
        ``committed`` and the end of the process wait for it).

        Raises:
            OSError: the last write failed (the previous commit is still the one read).
        """
        if self._writer is not None:
            self._writer.wait()

    def close(self):
        """Wait for the last commit to be on disk, then end the writer thread, close the
        progress file and give the folder's lock back (another job, or a new State,
        may then write there). Called again, it does nothing; ``with State(...) as s:``
        calls it at the block's end. A State dropped without it frees the same (its
        queued commits are written first). After it, :meth:`commit` raises ValueError;
        :meth:`restore` still reads the folder.

        Raises:
            OSError: the last commit's write failed (everything is released all the same).

        Example:
            >>> import tempfile
            >>> with State(tempfile.mkdtemp(), epoch=1) as s:
            ...     s.commit()
            >>> s.closed
            True
        """
        if self._closed:
            return
        object.__setattr__(self, '_closed', True)
        writer, key = self._writer, self._lock
        object.__setattr__(self, '_writer', None)
        object.__setattr__(self, '_lock', None)
        try:
            if writer is not None:
                writer.stop()
                writer.thread.join()
                with _LIVE_GUARD:
                    _LIVE.discard(writer)
                writer.wait()
        finally:
            self._close_progress()
            if key is not None:
                _unlock_folder(key)

    @property
    def closed(self):
        """True after :meth:`close`."""
        return self._closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _check_open(self, what):
        if self._closed:
            raise ValueError('State(%r): %s after close()' % (self._directory, what))

    def _close_progress(self):
        fd = self.__dict__.get('_progress_fd')
        if fd is not None:
            object.__setattr__(self, '_progress_fd', None)
            try:
                os.close(fd)
            except OSError:
                pass


    def note_progress(self, step):
        """Rank 0 records ``step`` (int: the global steps done) in
        ``directory/progress`` without syncing (a few microseconds), so that the next
        restart can count the steps it redoes (``steps_redone``). Other ranks: nothing."""
        if _rank() != 0:
            return
        fd = self._progress_fd
        if fd is None:
            fd = _open_no_follow(os.path.join(self._directory, PROGRESS_FILE),
                                             os.O_WRONLY | os.O_CREAT)
            object.__setattr__(self, '_progress_fd', fd)
        os.pwrite(fd, ('%20d\n' % int(step)).encode('ascii'), 0)

    # -- restore ---------------------------------------------------------------------

    def committed(self):
        """True when a commit exists (in memory or in ``directory``)."""
        self.wait()
        return self._memory is not None or any(os.path.exists(p) for p in self._paths())

    def _read_file(self, path):
        """The commit in ``path``; ValueError when it is not a whole one."""
        try:
            with open(path, 'rb') as f:
                raw = io.BytesIO(f.read())
            zipfile.ZipFile(raw).close()   # not a zip: said here, not by numpy's __del__
            raw.seek(0)
            with np.load(raw, allow_pickle=False) as data:
                meta = json.loads(str(data['meta']))
                if meta.get('format') != _FORMAT:
                    raise ValueError('format %r, this version reads %d'
                                     % (meta.get('format'), _FORMAT))
                arrays = dict((k, np.array(data[k])) for k in data.files if k != 'meta')
        except FileNotFoundError:
            raise
        except Exception as e:       # zipfile.BadZipFile, a bad CRC, a short file...
            raise ValueError('State: %s is not a commit of keras_backend.distribute.State '
                             '(%s: %s)' % (path, type(e).__name__, e))
        if _checksum(arrays) != meta.get('sha256'):
            raise ValueError('State: %s is not a commit of keras_backend.distribute.State '
                             '(its checksum does not match: damaged)' % path)
        try:
            values = dict(meta['values'])
            for i, k in enumerate(meta['array_values']):
                values[k] = arrays['value_%d' % i]
            name, pos, has_gauss, cached = meta['rng']
            callbacks = None
            if meta['callbacks'] is not None:
                callbacks = [(index, cls, dict((n, _read_callback_value(arrays, j, n, kind))
                                               for n, kind in kinds.items()))
                             for j, (index, cls, kinds) in enumerate(meta['callbacks'])]
            return {
                'weights': [arrays['weight_%d' % i] for i in range(meta['weights'])],
                'optimizer': [arrays['optimizer_%d' % i] for i in range(meta['optimizer'])],
                'values': values,
                'rng': (str(name), arrays['rng_keys'], int(pos), int(has_gauss),
                        float(cached)),
                'hyper': [(n, arrays['hyper_%d' % i]) for i, n in enumerate(meta['hyper'])],
                'accumulated': [arrays['accumulated_%d' % i]
                                for i in range(meta['accumulated'])],
                'callbacks': callbacks, 'optimizer_class': meta['optimizer_class']}
        except (KeyError, ValueError, TypeError) as e:
            raise ValueError('State: %s is not a commit of keras_backend.distribute.State '
                             '(%s: %s)' % (path, type(e).__name__, e))

    def _read(self):
        """The newest whole commit in the folder (one line on stderr for each damaged one
        passed over), or None when there is none.

        Raises:
            ValueError: commit files exist and none is whole.
        """
        damaged = []
        for path in self._paths():
            try:
                snap = self._read_file(path)
            except FileNotFoundError:
                continue
            except ValueError as e:
                damaged.append(str(e))
                continue
            for why in damaged:
                sys.stderr.write('keras_backend.distribute: %s; reading the commit before it, '
                                 '%s\n' % (why, os.path.basename(path)))
            return snap
        if damaged:
            raise ValueError('; '.join(damaged) + ' (no whole commit is left in %s)'
                             % self._directory)
        return None

    def _progress(self):
        try:
            with open(os.path.join(self._directory, PROGRESS_FILE)) as f:
                return int(f.read().strip() or 0)
        except (IOError, OSError, ValueError):
            return None

    def restore(self, verbose=True):
        """Load the last commit: the newest whole one in ``directory`` (every rank reads
        the file; a damaged latest one is passed over for the one before, with a line on
        stderr), else the one in memory. The whole commit is checked against the model
        and the optimizer first (the optimizer's class, the number, shapes and dtypes of
        the weights, the optimizer's other variables and gradient sums), and nothing is
        changed when it does not fit. Then the model's and the optimizer's weights
        (building Keras' training function first when the optimizer has no weights yet),
        the optimizer's other variables, this worker's gradient sums (with another number
        of workers than the commit's, each worker takes their mean), the values, the
        callbacks' state (:attr:`callback_states`) and numpy's global random state are set.

        Args:
            verbose: rank 0 prints one line to stderr when it resumes (the restart count,
                the epoch, batch and step resumed from, the steps redone).

        Returns:
            True when a commit was restored; False when there is none (nothing changed).

        Raises:
            ValueError: no commit file in the folder is whole (naming them), or the commit
                does not fit the model or the optimizer (naming the first difference).

        Example:
            >>> if state.restore():                  # doctest: +SKIP
            ...     print('resuming at epoch', state.epoch, 'batch', state.batch)
        """
        self.wait()
        snap = self._read()
        source = self.path
        if snap is None:
            snap, source = self._memory, 'the commit in memory'
        if snap is None:
            return False
        named = self._check_fits(snap, source)
        self._apply(snap, named)
        seen = self._progress()
        step = self._values.get('step', 0)
        redone = max(0, seen - step) if (seen is not None and isinstance(step, int)) else 0
        object.__setattr__(self, 'steps_redone', redone)
        object.__setattr__(self, 'restored', True)
        if verbose and _rank() == 0:
            sys.stderr.write('keras_backend.distribute: restart %d resumes from the commit of '
                             'epoch %s batch %s (step %s); %d step(s) redone\n'
                             % (restart_count(), self._values.get('epoch'),
                                self._values.get('batch'), step, redone))
            sys.stderr.flush()
        return True

    def _check_fits(self, snap, source):
        """Raise ValueError naming the first way ``snap`` does not fit the model and the
        optimizer; return the optimizer's other variables ([(name, variable)])."""
        model, optimizer = self._model, self.optimizer

        def compare(what, committed, current, labels):
            if len(committed) != len(current):
                raise ValueError('State.restore: %s holds %d %s, the %s has %d (another '
                                 'model?); nothing was changed'
                                 % (source, len(committed), what[1], what[0], len(current)))
            for i, (a, b) in enumerate(zip(committed, current)):
                if a.shape != b.shape or a.dtype != b.dtype:
                    raise ValueError(
                        'State.restore: %s does not fit: %s %d (%s) is %s %s there, %s %s '
                        'here; nothing was changed' % (source, what[2], i, labels[i],
                                                       a.dtype, a.shape, b.dtype, b.shape))

        if model is not None:
            compare(('model', 'model weights', 'model weight'), snap['weights'],
                    [np.asarray(w) for w in model.get_weights()],
                    [getattr(w, 'name', '?') for w in model.weights])
        elif snap['weights']:
            raise ValueError('State.restore: %s holds model weights and this State has no '
                             'model' % source)
        named = []
        if snap['optimizer'] or snap['hyper'] or snap['accumulated']:
            if optimizer is None:
                raise ValueError('State.restore: %s holds optimizer weights and this State '
                                 'has no optimizer' % source)
            cls = snap.get('optimizer_class')
            if cls and cls != type(optimizer).__name__:
                raise ValueError('State.restore: %s holds the state of a %s optimizer, this '
                                 'State\'s optimizer is a %s; nothing was changed'
                                 % (source, cls, type(optimizer).__name__))
            _build_slots(model, optimizer)
            compare(('optimizer', 'optimizer weights', 'optimizer weight'), snap['optimizer'],
                    [np.asarray(w) for w in optimizer.get_weights()],
                    [getattr(w, 'name', '?') for w in optimizer.weights])
            named = _optimizer_variables(optimizer)
            names = [n for n, _ in snap['hyper']]
            if names != [n for n, _ in named]:
                raise ValueError('State.restore: %s holds the optimizer variables %s, the '
                                 'optimizer has %s; nothing was changed'
                                 % (source, names, [n for n, _ in named]))
            sums = _accumulators(optimizer)
            if named or sums:
                current = [np.asarray(a) for a in
                           _adapter_module().batch_get_value([v for _, v in named] + sums)]
                compare(('optimizer', 'optimizer variables', 'optimizer variable'),
                        [a for _, a in snap['hyper']], current[:len(named)], names)
                compare(('optimizer', 'gradient sums (backward_passes_per_step)',
                         'gradient sum'), [a[0] for a in snap['accumulated']],
                        current[len(named):], ['?'] * len(sums))
        return named

    def _apply(self, snap, named):
        model, optimizer = self._model, self.optimizer
        if model is not None:
            model.set_weights(snap['weights'])
        if snap['optimizer']:
            optimizer.set_weights(snap['optimizer'])
        pairs = [(v, a) for (_, v), (_, a) in zip(named, snap['hyper'])]
        sums = _accumulators(optimizer) if optimizer is not None else []
        for v, rows in zip(sums, snap['accumulated']):
            mine = rows[_rank()] if rows.shape[0] == _size() else rows.mean(axis=0)
            pairs.append((v, mine.astype(rows.dtype)))
        if pairs:
            _adapter_module().batch_set_value(pairs)
        self._values.clear()
        for k, v in snap['values'].items():
            self._values[k] = np.array(v) if isinstance(v, np.ndarray) else v
        np.random.set_state(snap['rng'])
        object.__setattr__(self, '_epoch_rng', snap['rng'])
        object.__setattr__(self, '_memory', snap)
        states = {}
        for index, cls, attrs in snap['callbacks'] or []:
            states[index] = (cls, dict((n, _unpack(a, kind)) for n, (a, kind) in attrs.items()))
        object.__setattr__(self, 'callback_states', states)

    def sync(self):
        """Give every worker rank 0's state: its model and optimizer weights and the
        optimizer's other variables (:func:`broadcast_variables`), its values, its
        callbacks' restored state and its random state (:func:`broadcast_values`), and
        each worker its own row of the gradient sums rank 0 restored. For a folder that
        only rank 0 reaches: rank 0 restores, then every rank calls ``sync()``. A
        collective: every worker calls it.

        Raises:
            ValueError: before ``init``; values of different names or shapes on the workers.
            WorkerLost: a peer died or timed out.
        """
        from .group import size
        from .horovod import broadcast_values, broadcast_variables
        if size() == 1:
            return
        model, optimizer = self._model, self.optimizer
        variables = list(model.weights) if model is not None else []
        if optimizer is not None:
            _build_slots(model, optimizer)     # the same variables on every worker
            variables += [v for v in optimizer.weights if all(v is not w for w in variables)]
            variables += [v for _, v in _optimizer_variables(optimizer)]
        broadcast_variables(variables, root=0)
        snap = self._snapshot()
        memory = self._memory if self.restored else None
        rows = memory['accumulated'] if memory is not None else []
        callbacks, listed = {}, []     # listed: the arrays of 'arrays' values, in order
        for index, cls, attrs in (memory['callbacks'] or []) if memory is not None else []:
            entry = {}
            for n, (a, kind) in sorted(attrs.items()):
                if kind == 'arrays':
                    entry[n] = [[list(v.shape) for v in a], kind, [v.dtype.str for v in a]]
                    listed.extend(a)
                elif kind == 'none':
                    entry[n] = [None, kind, '']
                else:
                    entry[n] = [a.item(), kind, a.dtype.str]
            callbacks[str(index)] = [cls, entry]
        meta = json.dumps({'values': dict((k, v) for k, v in snap['values'].items()
                                          if not isinstance(v, np.ndarray)),
                           'rng': [snap['rng'][0]] + list(snap['rng'][2:]),
                           'rows': [list(r.shape) for r in rows],
                           'callbacks': callbacks}).encode('utf-8')
        length = int(broadcast_values(np.array(len(meta), np.int64), root=0))
        # int32 / int64: TensorFlow's collective takes no unsigned integers
        buf = np.zeros(length, np.int32)
        if _rank() == 0:
            buf[:] = np.frombuffer(meta, np.uint8)
        buf = broadcast_values(buf, root=0)
        got = json.loads(buf.astype(np.uint8).tobytes().decode('utf-8'))
        arrays = sorted(k for k, v in snap['values'].items() if isinstance(v, np.ndarray))
        sent = broadcast_values([_signed(snap['values'][k]) for k in arrays]
                                + [snap['rng'][1].astype(np.int64)], root=0)
        self._values.clear()
        self._values.update(got['values'])
        for k, v in zip(arrays, sent[:-1]):
            self._values[k] = v.astype(snap['values'][k].dtype)
        name, pos, has_gauss, cached = got['rng']
        rng = (name, sent[-1].astype(np.uint32), pos, has_gauss, cached)
        np.random.set_state(rng)
        object.__setattr__(self, '_epoch_rng', rng)
        if got['rows']:
            sums = _accumulators(optimizer)
            K = _adapter_module()
            if _rank() != 0:
                rows = [np.zeros(shape, np.dtype(K.dtype(v)))
                        for shape, v in zip(got['rows'], sums)]
            rows = broadcast_values(rows, root=0)
            pairs = []
            for v, r in zip(sums, rows):
                mine = r[_rank()] if r.shape[0] == _size() else r.mean(axis=0)
                pairs.append((v, mine.astype(np.dtype(K.dtype(v)))))
            K.batch_set_value(pairs)
        if _rank() != 0:             # the arrays of 'arrays' values, from rank 0
            listed = [np.zeros(shape, np.dtype(dt))
                      for index in sorted(got['callbacks'], key=int)
                      for n, (shapes, kind, dts) in sorted(got['callbacks'][index][1].items())
                      if kind == 'arrays' for shape, dt in zip(shapes, dts)]
        listed = list(broadcast_values(listed, root=0)) if listed else []
        states = {}
        for index in sorted(got['callbacks'], key=int):
            cls, attrs = got['callbacks'][index]
            values = {}
            for n, (value, kind, dt) in sorted(attrs.items()):
                if kind == 'arrays':
                    values[n] = [np.array(a) for a in listed[:len(value)]]
                    listed = listed[len(value):]
                elif kind == 'np':
                    values[n] = np.dtype(dt).type(value)
                else:
                    values[n] = value      # 'py', or None for 'none'
            states[int(index)] = (cls, values)
        object.__setattr__(self, 'callback_states', states)

    def check_host_updates(self):
        """Horovod's check for hosts added or removed during the run: always False here.
        The workers of a job never change while it runs; a lost worker ends the job and
        the launcher's ``--restarts`` starts it again (README, "When a worker is lost")."""
        return False

    def __del__(self):
        # a State dropped without close(): its writer writes what is queued, then gives
        # the lock back; nothing here may raise
        if self.__dict__.get('_closed', True):
            return
        self.__dict__['_closed'] = True
        self._close_progress()
        writer, key = self.__dict__.get('_writer'), self.__dict__.get('_lock')
        if writer is not None:
            writer.stop(key)
        elif key is not None:
            _unlock_folder(key)


def _write_commit(directory, keep, snap):
    """Write the commit ``snap`` to ``directory/state.npz`` (rank 0's writer: the thread of
    :class:`_Writer`, or ``State.commit`` itself without ``background``)."""
    arrays = {}
    json_values, array_values = {}, []
    for k, v in sorted(snap['values'].items()):
        if isinstance(v, np.ndarray):
            arrays['value_%d' % len(array_values)] = v
            array_values.append(k)
        else:
            json_values[k] = v
    for i, w in enumerate(snap['weights']):
        arrays['weight_%d' % i] = w
    for i, w in enumerate(snap['optimizer']):
        arrays['optimizer_%d' % i] = w
    for i, (_, a) in enumerate(snap['hyper']):
        arrays['hyper_%d' % i] = a
    for i, a in enumerate(snap['accumulated']):
        arrays['accumulated_%d' % i] = a
    callbacks = None
    if snap['callbacks'] is not None:
        callbacks = []
        for j, (index, cls, attrs) in enumerate(snap['callbacks']):
            kinds = {}
            for n, (a, kind) in sorted(attrs.items()):
                if kind == 'arrays':        # one array each, the count in the kind
                    for k, item in enumerate(a):
                        arrays['callback_%d_%s_%d' % (j, n, k)] = item
                    kinds[n] = 'arrays:%d' % len(a)
                else:
                    arrays['callback_%d_%s' % (j, n)] = a
                    kinds[n] = kind
            callbacks.append([index, cls, kinds])
    name, keys, pos, has_gauss, cached = snap['rng']
    arrays['rng_keys'] = keys
    meta = {'format': _FORMAT, 'weights': len(snap['weights']),
            'optimizer': len(snap['optimizer']), 'values': json_values,
            'array_values': array_values, 'rng': [name, pos, has_gauss, cached],
            'hyper': [n for n, _ in snap['hyper']],
            'accumulated': len(snap['accumulated']), 'callbacks': callbacks,
            'optimizer_class': snap['optimizer_class'],
            'restart': restart_count(), 'sha256': _checksum(arrays)}
    arrays['meta'] = np.array(json.dumps(meta))
    buf = io.BytesIO()        # one write(): np.savez writes a file in small pieces
    np.savez(buf, **arrays)
    path = os.path.join(directory, COMMIT_FILE)
    tmp = os.path.join(directory, '.%s.%d.%s.tmp'
                       % (COMMIT_FILE, os.getpid(), uuid.uuid4().hex[:12]))
    try:
        with os.fdopen(_open_no_follow(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL), 'wb') as f:
            _write_bytes(f, buf.getbuffer())
            f.flush()
            _fsync(f.fileno())
        _rotate(directory, keep, tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(directory)

def _rotate(directory, keep, tmp):
    """Move the kept commits one place back (``state.npz`` -> ``state.npz.1`` ...),
    each by a hard link and ``os.replace``, so that every name always holds a whole
    commit; the newest stays in ``state.npz`` until ``tmp`` replaces it."""
    path = os.path.join(directory, COMMIT_FILE)
    names = [path] + ['%s.%d' % (path, k) for k in range(1, keep)]
    for k in range(len(names) - 1, 0, -1):
        src, dst = names[k - 1], names[k]
        if not os.path.exists(src):
            continue
        link = tmp + '.link'   # a name of this write's own (_TEMPORARY_ENDINGS)
        try:
            os.link(src, link)
        except OSError:        # no hard links here: a copy
            with open(src, 'rb') as fsrc, os.fdopen(_open_no_follow(
                    link, os.O_WRONLY | os.O_CREAT | os.O_EXCL), 'wb') as fdst:
                shutil.copyfileobj(fsrc, fdst)
        os.replace(link, dst)
    for k in range(keep, keep + 64):     # a larger keep before
        try:
            os.unlink('%s.%d' % (path, k))
        except OSError:
            break
