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
import io
import json
import numbers
import os
import queue
import sys
import threading

import numpy as np

#: the launcher's attempt number (0: the first start, k: the k-th restart)
ENV_RESTART = 'KERAS_BACKEND_DISTRIBUTE_RESTART'
#: the committed state's file in ``State.directory``
COMMIT_FILE = 'state.npz'
#: rank 0's last finished step (``State.note_progress``), read to count the steps redone
PROGRESS_FILE = 'progress'
_FORMAT = 1
_RESERVED = ('directory', 'model', 'optimizer', 'background', 'steps_redone', 'restored',
             'commits')


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


def _fsync(fd):
    """``os.fsync`` (a module function, so that a test can stop a commit half-way)."""
    os.fsync(fd)


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
    from . import _State
    return _State.rank if _State.initialized else 0


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


class State(object):
    """The training state that a restarted job resumes from (Horovod's
    ``hvd.elastic.KerasState``, with a folder that every host can reach).

    Holds a Keras 2 model's weights, its optimizer's weights (``iterations``, Adam's
    moments...), the values given as keywords (``epoch`` and ``batch``, 0 unless given,
    and any others: numbers, strings, lists of them, numpy arrays), read and set as
    attributes (``state.epoch += 1``), and numpy's global random state at the start of
    epoch ``epoch``. ``batch`` counts the (global) batches of ``epoch`` already done;
    ``step`` (0 unless given) the batches done since the start of training.

    Args:
        directory: the folder of the committed file (str or path; created when missing).
            With several hosts it must be on a file system every host reaches.
        model: a Keras 2 model (anything with ``get_weights`` / ``set_weights``), or None.
        optimizer: its optimizer; default ``model.optimizer`` when the model is compiled.
        background: True: rank 0 writes each commit in a writer thread while training
            goes on (:meth:`commit`); False: ``commit`` returns once the file is on disk.
            (An engine collective that holds Python's GIL, CNTK's, stalls the thread
            while it waits: a commit in flight when a peer dies may then be lost.)
        **values: the user's values, committed and restored with the weights.

    Raises:
        TypeError: ``directory`` is not a str or path, a model without ``get_weights``
            and ``set_weights``, or a value of another type than those above.
        ValueError: a value named like one of State's own attributes (directory, model,
            optimizer, steps_redone, restored, commits).

    Example:
        >>> import tempfile
        >>> s = State(tempfile.mkdtemp(), epoch=0, best=np.zeros(3))
        >>> s.epoch = 2; s.commit()
        >>> s.epoch = 5; s.restore()
        True
        >>> s.epoch
        2
    """

    def __init__(self, directory, model=None, optimizer=None, background=True, **values):
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
        if optimizer is None and model is not None:
            optimizer = getattr(model, 'optimizer', None)
        object.__setattr__(self, '_directory', directory)
        object.__setattr__(self, '_model', model)
        object.__setattr__(self, '_optimizer', optimizer)
        object.__setattr__(self, '_values', {})
        object.__setattr__(self, '_memory', None)
        object.__setattr__(self, '_epoch_rng', None)
        object.__setattr__(self, 'steps_redone', 0)
        object.__setattr__(self, 'restored', False)
        object.__setattr__(self, 'commits', 0)
        object.__setattr__(self, '_progress_fd', None)
        object.__setattr__(self, '_background', bool(background))
        object.__setattr__(self, '_writer', None)
        object.__setattr__(self, '_queue', None)
        object.__setattr__(self, '_written', threading.Event())
        self._written.set()
        object.__setattr__(self, '_write_error', None)
        for name in values:
            if name in _RESERVED or name.startswith('_'):
                raise ValueError('State: %r cannot be a value name (State\'s own attribute '
                                 'or a leading underscore)' % (name,))
        for name in ('epoch', 'batch', 'step'):
            values.setdefault(name, 0)
        for name, value in values.items():
            setattr(self, name, value)
        os.makedirs(directory, exist_ok=True)

    # -- values as attributes --------------------------------------------------------

    @property
    def directory(self):
        """The folder of the committed file (str)."""
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
    def path(self):
        """The committed file: ``directory/state.npz``."""
        return os.path.join(self._directory, COMMIT_FILE)

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

    def _snapshot(self):
        model, optimizer = self._model, self.optimizer
        weights = [np.array(w) for w in model.get_weights()] if model is not None else []
        opt = [np.array(w) for w in optimizer.get_weights()] if optimizer is not None else []
        rng = np.random.get_state() if (self._values.get('batch', 0) == 0
                                        or self._epoch_rng is None) else self._epoch_rng
        return {'weights': weights, 'optimizer': opt, 'values': self.values(),
                'rng': (rng[0], np.array(rng[1]), int(rng[2]), int(rng[3]), float(rng[4]))}

    def commit(self):
        """Save the state: every rank keeps it in memory, rank 0 also writes it to
        ``directory/state.npz`` atomically (a temporary file in the same folder, fsync,
        ``os.replace``, fsync of the folder), so that a process killed while it commits
        leaves the previous commit readable. No collective: every worker holds the same
        weights after a synchronous step, and rank 0's are written.

        The weights are fetched here; the file is written by a thread while training
        goes on (:meth:`wait` waits for it; the next commit waits for the previous one):
        a commit is on disk a few milliseconds after ``commit`` returns, and a job killed
        in between resumes from the commit before it.

        Returns:
            None.

        Raises:
            OSError: the previous commit's file could not be written (rank 0).

        Example:
            >>> state.batch += 1; state.commit()     # doctest: +SKIP
        """
        snap = self._snapshot()
        object.__setattr__(self, '_memory', snap)
        object.__setattr__(self, 'commits', self.commits + 1)
        if _rank() != 0:
            return
        self.wait()               # one write at a time, in commit order
        if not self._background:
            self._write(snap)
            return
        if self._writer is None:  # one thread for every commit (starting one costs ~1 ms)
            writer = threading.Thread(target=self._write_loop, name='keras_backend State',
                                      daemon=True)
            object.__setattr__(self, '_writer', writer)
            object.__setattr__(self, '_queue', queue.Queue())
            writer.start()
            atexit.register(self._flush_at_exit)
        self._written.clear()
        self._queue.put(snap)

    def wait(self):
        """Block until rank 0's last commit is on disk (``commit`` writes the file in a
        thread of its own while training goes on; the next ``commit``, ``restore``,
        ``committed`` and the end of the process wait for it).

        Raises:
            OSError: the last write failed (the previous commit is still the one read).
        """
        self._written.wait()
        error = self._write_error
        if error is not None:
            object.__setattr__(self, '_write_error', None)
            raise error

    def _write_loop(self):
        while True:
            snap = self._queue.get()
            try:
                self._write(snap)
            except Exception as e:    # raised again by wait()
                object.__setattr__(self, '_write_error', e)
            finally:
                self._written.set()

    def _flush_at_exit(self):
        try:
            self._written.wait()
        except Exception:
            pass

    def _write(self, snap):
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
        name, keys, pos, has_gauss, cached = snap['rng']
        arrays['rng_keys'] = keys
        meta = {'format': _FORMAT, 'weights': len(snap['weights']),
                'optimizer': len(snap['optimizer']), 'values': json_values,
                'array_values': array_values, 'rng': [name, pos, has_gauss, cached],
                'restart': restart_count()}
        arrays['meta'] = np.array(json.dumps(meta))
        buf = io.BytesIO()        # one write(): np.savez writes a file in small pieces
        np.savez(buf, **arrays)
        path = self.path
        tmp = path + '.tmp'
        with open(tmp, 'wb') as f:
            f.write(buf.getbuffer())
            f.flush()
            _fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_dir(self._directory)

    def note_progress(self, step):
        """Rank 0 records ``step`` (int: the global steps done) in
        ``directory/progress`` without syncing (a few microseconds), so that the next
        restart can count the steps it redoes (``steps_redone``). Other ranks: nothing."""
        if _rank() != 0:
            return
        fd = self._progress_fd
        if fd is None:
            fd = os.open(os.path.join(self._directory, PROGRESS_FILE),
                         os.O_WRONLY | os.O_CREAT, 0o644)
            object.__setattr__(self, '_progress_fd', fd)
        os.pwrite(fd, ('%20d\n' % int(step)).encode('ascii'), 0)

    # -- restore ---------------------------------------------------------------------

    def committed(self):
        """True when a commit exists (in memory or in ``directory``)."""
        self.wait()
        return self._memory is not None or os.path.exists(self.path)

    def _read(self):
        path = self.path
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data['meta']))
                if meta.get('format') != _FORMAT:
                    raise ValueError('format %r' % (meta.get('format'),))
                values = dict(meta['values'])
                for i, k in enumerate(meta['array_values']):
                    values[k] = np.array(data['value_%d' % i])
                weights = [np.array(data['weight_%d' % i]) for i in range(meta['weights'])]
                opt = [np.array(data['optimizer_%d' % i]) for i in range(meta['optimizer'])]
                name, pos, has_gauss, cached = meta['rng']
                rng = (str(name), np.array(data['rng_keys']), int(pos), int(has_gauss),
                       float(cached))
        except (KeyError, ValueError, TypeError, OSError, EOFError) as e:
            if isinstance(e, FileNotFoundError):
                raise
            raise ValueError('State: %s is not a commit of keras_backend.distribute.State '
                             '(%s: %s)' % (path, type(e).__name__, e))
        return {'weights': weights, 'optimizer': opt, 'values': values, 'rng': rng}

    def _progress(self):
        try:
            with open(os.path.join(self._directory, PROGRESS_FILE)) as f:
                return int(f.read().strip() or 0)
        except (IOError, OSError, ValueError):
            return None

    def restore(self, verbose=True):
        """Load the last commit: from ``directory`` (every rank reads the file), else
        from memory; set the model's and the optimizer's weights (building Keras' training
        function first when the optimizer has no weights yet), the values and numpy's
        global random state.

        Args:
            verbose: rank 0 prints one line to stderr when it resumes (the restart count,
                the epoch, batch and step resumed from, the steps redone).

        Returns:
            True when a commit was restored; False when there is none (nothing changed).

        Raises:
            ValueError: the file is not a commit, or its weights do not fit the model or
                the optimizer (another model).

        Example:
            >>> if state.restore():                  # doctest: +SKIP
            ...     print('resuming at epoch', state.epoch, 'batch', state.batch)
        """
        self.wait()
        if os.path.exists(self.path):
            snap = self._read()
        elif self._memory is not None:
            snap = self._memory
        else:
            return False
        model, optimizer = self._model, self.optimizer
        if model is not None:
            if len(snap['weights']) != len(model.weights):
                raise ValueError('State.restore: %s holds %d model weights, the model has %d'
                                 % (self.path, len(snap['weights']), len(model.weights)))
            model.set_weights(snap['weights'])
        elif snap['weights']:
            raise ValueError('State.restore: %s holds model weights and this State has no '
                             'model' % self.path)
        if snap['optimizer']:
            if optimizer is None:
                raise ValueError('State.restore: %s holds optimizer weights and this State '
                                 'has no optimizer' % self.path)
            _build_slots(model, optimizer)
            if len(optimizer.weights) != len(snap['optimizer']):
                raise ValueError('State.restore: %s holds %d optimizer weights, the optimizer '
                                 'has %d' % (self.path, len(snap['optimizer']),
                                             len(optimizer.weights)))
            optimizer.set_weights(snap['optimizer'])
        self._values.clear()
        for k, v in snap['values'].items():
            self._values[k] = np.array(v) if isinstance(v, np.ndarray) else v
        np.random.set_state(snap['rng'])
        object.__setattr__(self, '_epoch_rng', snap['rng'])
        object.__setattr__(self, '_memory', snap)
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

    def sync(self):
        """Give every worker rank 0's state: its model and optimizer weights
        (:func:`broadcast_variables`), its values and its random state
        (:func:`broadcast_values`). For a folder that only rank 0 reaches: rank 0
        restores, then every rank calls ``sync()``. A collective: every worker calls it.

        Raises:
            ValueError: before ``init``; values of different names or shapes on the workers.
            WorkerLost: a peer died or timed out.
        """
        from . import broadcast_values, broadcast_variables, size
        if size() == 1:
            return
        model, optimizer = self._model, self.optimizer
        variables = list(model.weights) if model is not None else []
        if optimizer is not None:
            _build_slots(model, optimizer)     # the same variables on every worker
            variables += [v for v in optimizer.weights if all(v is not w for w in variables)]
        broadcast_variables(variables, root=0)
        snap = self._snapshot()
        meta = json.dumps({'values': dict((k, v) for k, v in snap['values'].items()
                                          if not isinstance(v, np.ndarray)),
                           'rng': [snap['rng'][0]] + list(snap['rng'][2:])}).encode('utf-8')
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

    def check_host_updates(self):
        """Horovod's check for hosts added or removed during the run: always False here.
        The workers of a job never change while it runs; a lost worker ends the job and
        the launcher's ``--restarts`` starts it again (README, "When a worker is lost")."""
        return False

    def __del__(self):
        fd = self.__dict__.get('_progress_fd')
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
