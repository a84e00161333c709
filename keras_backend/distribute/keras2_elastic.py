"""Keras 2.3.1 training that commits its state and resumes from it after a restart.

Importing this module imports ``keras`` (Keras 2.3.1 on one of our adapters). With
:class:`keras_backend.distribute.State` (:mod:`keras_backend.distribute.elastic`)::

    import keras_backend.distribute as kd
    import keras_backend.distribute.keras2_elastic as kde
    kd.init()
    model = ...; model.compile(kd.DistributedOptimizer(opt), loss)
    state = kd.State('/shared/run1', model=model)
    state.restore()                    # after a restart: the last commit
    kde.fit(model, state, x, y, global_batch_size=64, epochs=10,
            callbacks=[kd.BroadcastGlobalVariablesCallback(0), kd.MetricAverageCallback()])

``fit`` takes every worker's *whole* data (the same arrays on each worker), the global
batch and the epochs, and runs Keras' ``fit`` on this worker's shard
(:func:`keras_backend.distribute.shard`) of the rows not yet trained on: a job that
resumes at epoch ``e``, batch ``b`` trains the rest of epoch ``e`` on global batches
``b, b + 1, ...`` (one Keras ``fit`` call), then the remaining epochs. The global batch
is kept whatever the number of workers (each takes ``global_batch_size // size()``), so
a restart onto fewer workers takes the same steps, with the same learning rate.
"""
import numpy as np

import keras

from . import shard, size
from .elastic import State  # noqa: F401 (re-exported)

#: commit every this many batches (and at each epoch end) unless told otherwise
DEFAULT_BATCHES_PER_COMMIT = 100


class CommitStateCallback(keras.callbacks.Callback):
    """Keeps ``state.epoch``, ``state.batch`` (global batches done in the epoch) and
    ``state.step`` (batches done since the start) up to date and commits ``state``
    every ``batches_per_commit`` steps and at the end of every epoch (Horovod's
    ``CommitStateCallback``, whose commit is in memory only; ours also writes the file).

    Args:
        state: a :class:`keras_backend.distribute.State`.
        batches_per_commit: int >= 1 (default :data:`DEFAULT_BATCHES_PER_COMMIT`).

    Raises:
        TypeError: ``state`` is not a State, or ``batches_per_commit`` not an int.
        ValueError: ``batches_per_commit`` < 1.

    In a plain ``model.fit``, call ``state.wait()`` when it ends or raises (:func:`fit`
    does), so that the last commit reaches the disk.

    Example:
        >>> model.fit(x, y, callbacks=[kde.CommitStateCallback(state, 10)])
        ...                                                     # doctest: +SKIP
    """

    def __init__(self, state, batches_per_commit=DEFAULT_BATCHES_PER_COMMIT):
        super(CommitStateCallback, self).__init__()
        if not isinstance(state, State):
            raise TypeError('CommitStateCallback: state must be a keras_backend.distribute.'
                            'State, got %r' % (type(state).__name__,))
        if isinstance(batches_per_commit, bool) or not isinstance(batches_per_commit,
                                                                  (int, np.integer)):
            raise TypeError('CommitStateCallback: batches_per_commit must be an int, got %r'
                            % (batches_per_commit,))
        if batches_per_commit < 1:
            raise ValueError('CommitStateCallback: batches_per_commit must be >= 1, got %d'
                             % batches_per_commit)
        self.state = state
        self.batches_per_commit = int(batches_per_commit)
        #: the batches of the epoch done before this fit call (a resumed epoch)
        self.batch_offset = 0
        #: set by :func:`fit`, which records the epoch's random state itself
        self.epoch_recorded = False

    def on_epoch_begin(self, epoch, logs=None):
        self.state.epoch = int(epoch)
        if not self.epoch_recorded:
            self.state.record_epoch_start()   # before Keras' own shuffle

    def on_batch_end(self, batch, logs=None):
        state = self.state
        values = state._values      # ints: no check needed, and this runs every step
        step = int(values['step']) + 1
        values['step'] = step
        values['batch'] = self.batch_offset + int(batch) + 1
        state.note_progress(step)
        if step % self.batches_per_commit == 0:
            state.commit()

    def on_epoch_end(self, epoch, logs=None):
        state = self.state
        state.epoch = int(epoch) + 1
        state.batch = 0
        self.batch_offset = 0
        state.commit()


def _rows(data, rows):
    if isinstance(data, (list, tuple)):
        return type(data)(np.asarray(d)[rows] for d in data)
    return None if data is None else np.asarray(data)[rows]


def _length(data):
    if isinstance(data, (list, tuple)):
        return len(data[0]) if data else 0
    return len(data)


def fit(model, state, x, y, global_batch_size, epochs, shuffle=False, callbacks=None,
        batches_per_commit=DEFAULT_BATCHES_PER_COMMIT, verbose=0, **kwargs):
    """Keras' ``fit`` from ``state``'s epoch and batch to ``epochs``, committing ``state``
    as it goes (:class:`CommitStateCallback`).

    Each epoch takes the rows of ``x`` in order (``shuffle=False``) or in a permutation
    drawn from numpy's global random state at the epoch's start (``shuffle=True``: one
    ``np.random.shuffle`` of ``arange(len(x))`` per epoch, the same on every worker when
    their random states are equal, as after :meth:`State.restore` or :meth:`State.sync`),
    cut into global batches of ``global_batch_size``; this worker trains on its part of
    each (:func:`shard`). A resumed epoch starts at global batch ``state.batch``. So a
    run that is stopped and resumed takes exactly the steps of one that is not.

    ``shuffle=False`` runs one Keras ``fit`` for the rest of a resumed epoch and one for
    the remaining epochs; ``shuffle=True`` one per epoch (callbacks see
    ``on_train_begin`` once per call).

    Args:
        model: a compiled Keras 2 model (with :func:`DistributedOptimizer` on several
            workers).
        state: the :class:`State` of ``model``.
        x, y: every sample (numpy arrays, or lists of them), the same on every worker.
        global_batch_size: int, a multiple of ``size()``.
        epochs: int, the epoch to stop at (as Keras' ``epochs``).
        shuffle: bool.
        callbacks: Keras callbacks, run before the commit callback.
        batches_per_commit: int >= 1.
        verbose: Keras' verbosity.
        **kwargs: passed to Keras' ``fit`` (``sample_weight`` is cut like ``x``); not
            ``batch_size``, ``initial_epoch``, ``validation_split`` or ``steps_per_epoch``.

    Returns:
        A ``keras.callbacks.History`` whose ``history`` holds every epoch of this call
        (a resumed epoch's figures are those of its remaining batches).

    Raises:
        TypeError: ``state`` is not a State; ``global_batch_size`` or ``epochs`` not ints.
        ValueError: ``global_batch_size`` not a positive multiple of ``size()``;
            ``shuffle='batch'``; a refused keyword; ``x`` and ``y`` of different lengths.

    Example:
        >>> kde.fit(model, state, x, y, global_batch_size=32, epochs=4)  # doctest: +SKIP
    """
    if not isinstance(state, State):
        raise TypeError('fit: state must be a keras_backend.distribute.State, got %r'
                        % (type(state).__name__,))
    for name, v in (('global_batch_size', global_batch_size), ('epochs', epochs)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError('fit: %s must be an int, got %r' % (name, v))
    workers = size()
    if global_batch_size < 1 or global_batch_size % workers:
        raise ValueError('fit: global_batch_size must be a positive multiple of size() = %d, '
                         'got %d' % (workers, global_batch_size))
    if shuffle not in (True, False):
        raise ValueError('fit: shuffle must be True or False, got %r' % (shuffle,))
    for name in ('batch_size', 'initial_epoch', 'validation_split', 'steps_per_epoch'):
        if name in kwargs:
            raise ValueError('fit: %s is not taken (the rows are cut from state.epoch and '
                             'state.batch)' % name)
    n = _length(x)
    if y is not None and _length(y) != n:
        raise ValueError('fit: x and y have different numbers of samples: %d and %d'
                         % (n, _length(y)))
    weights = kwargs.pop('sample_weight', None)
    commit = CommitStateCallback(state, batches_per_commit)
    commit.epoch_recorded = bool(shuffle)   # shuffle=True: recorded before each draw
    calls = list(callbacks or []) + [commit]
    history = keras.callbacks.History()
    history.history, history.epoch = {}, []

    def run(rows, first, last, offset):
        commit.batch_offset = offset
        sw = _rows(weights, rows)
        try:
            got = _fit(rows, first, last, sw)
        except BaseException:
            # a lost peer (WorkerLost) or an interrupt: let the commit in flight reach the
            # disk first (an engine collective that holds the GIL may have stalled it)
            try:
                state.wait()
            except Exception:
                pass
            raise
        history.epoch.extend(got.epoch)
        for k, v in got.history.items():
            history.history.setdefault(k, []).extend(v)

    def _fit(rows, first, last, sw):
        return model.fit(shard(_rows(x, rows), global_batch_size),
                         None if y is None else shard(_rows(y, rows), global_batch_size),
                         batch_size=global_batch_size // workers, epochs=last,
                         initial_epoch=first, shuffle=False, callbacks=calls, verbose=verbose,
                         sample_weight=None if sw is None else shard(sw, global_batch_size),
                         **kwargs)

    epoch, batch = int(state.epoch), int(state.batch)
    start = batch * global_batch_size
    if batch and start >= n:     # committed after the epoch's last batch, before its end
        if shuffle:              # the random state after that epoch's draw
            np.random.shuffle(np.arange(n))
        epoch, batch, start = epoch + 1, 0, 0
    if shuffle:
        for e in range(epoch, epochs):
            state.record_epoch_start()
            order = np.arange(n)
            np.random.shuffle(order)
            skip = start if e == epoch else 0
            run(order[skip:], e, e + 1, batch if e == epoch else 0)
        state.wait()
        return history
    if batch and epoch < epochs:
        run(np.arange(start, n), epoch, epoch + 1, batch)
        epoch += 1
    if epoch < epochs:
        run(np.arange(n), epoch, epochs, 0)
    state.wait()          # the last commit is on disk
    return history
