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

from .group import _State, size
from .horovod import allgather_values, shard, shard_indices
from .elastic import State, _build_slots, _set_callback_state  # noqa: F401 (State re-exported)

#: commit every this many batches (and at each epoch end) unless told otherwise
DEFAULT_BATCHES_PER_COMMIT = 100


class CommitStateCallback(keras.callbacks.Callback):
    """Keeps ``state.epoch``, ``state.batch`` (global batches done in the epoch) and
    ``state.step`` (batches done since the start) up to date and commits ``state``
    every ``batches_per_commit`` steps and at the end of every epoch (Horovod's
    ``CommitStateCallback``, whose commit is in memory only; ours also writes the file).
    A commit is either inside an epoch or at its end, after every callback's
    ``on_epoch_end`` (validation included): when an epoch's last batch is a multiple of
    ``batches_per_commit``, only the epoch-end commit is made, so that a resume never
    starts between an epoch's last batch and its end (which would skip the end).

    Args:
        state: a :class:`keras_backend.distribute.State`.
        batches_per_commit: int >= 1 (default :data:`DEFAULT_BATCHES_PER_COMMIT`).

    Raises:
        TypeError: ``state`` is not a State, or ``batches_per_commit`` not an int.
        ValueError: ``batches_per_commit`` < 1.

    In a plain ``model.fit`` the last commit is waited for when training ends (a failed
    write raises ``OSError`` there); when ``fit`` raises, call ``state.wait()`` (:func:`fit`
    does). A plain ``fit`` commits no other callback's state (:func:`fit` does).

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
        #: the batches of an epoch of the fit call (from Keras' params; None: unknown)
        self.steps = None

    def on_epoch_begin(self, epoch, logs=None):
        self.state.epoch = int(epoch)
        if not self.epoch_recorded:
            self.state.record_epoch_start()   # before Keras' own shuffle

    def on_train_begin(self, logs=None):
        # the batches of each epoch of this fit call: the last one's commit waits for
        # the epoch's end (after every callback's on_epoch_end), so that a resume never
        # starts after an epoch's last batch and before its end
        params = self.params or {}
        steps = params.get('steps')
        if steps is None and params.get('samples') is not None and params.get('batch_size'):
            steps = -(-int(params['samples']) // int(params['batch_size']))
        self.steps = steps

    def on_batch_end(self, batch, logs=None):
        state = self.state
        values = state._values      # ints: no check needed, and this runs every step
        step = int(values['step']) + 1
        values['step'] = step
        values['batch'] = self.batch_offset + int(batch) + 1
        state.note_progress(step)
        if step % self.batches_per_commit == 0 and int(batch) + 1 != self.steps:
            state.commit()

    def on_epoch_end(self, epoch, logs=None):
        state = self.state
        state.epoch = int(epoch) + 1
        state.batch = 0
        self.batch_offset = 0
        state.commit()

    def on_train_end(self, logs=None):
        self.state.wait()         # the last commit is on disk, or OSError says why not


class _EpochSums(keras.callbacks.Callback):
    """The sums behind Keras' epoch losses (its ``BaseLogger``'s arithmetic, in the same
    order) and the variables of its stateful metrics (Keras 2.3's ``accuracy``, ``mae``...:
    a running total and count each), committed with the State, so that a resumed epoch
    ends with the losses and metrics of the whole epoch: at the epoch's end each loss in
    ``logs`` is set to its sum over the epoch's batches, the committed ones included, over
    the samples seen; the metrics go on from their committed totals (set back after Keras'
    ``reset_metrics`` at the resumed epoch's start)."""

    def __init__(self):
        super(_EpochSums, self).__init__()
        self.seen, self.totals, self.carry = 0, {}, False
        self.metric_values = None
        #: whether training resumes inside an epoch (set by fit)
        self.resumed_inside = False

    def _metric_variables(self):
        """The variables of the model's stateful metrics, in a fixed order (Keras 2.3's
        ``_get_training_eval_metrics``; none before Keras 2.3, whose metrics are batch
        values that the BaseLogger averages)."""
        get = getattr(self.model, '_get_training_eval_metrics', None)
        if not callable(get):
            return []
        return [w for m in get() for w in getattr(m, 'weights', [])]

    def get_state(self):
        state = dict(('total_' + k, v) for k, v in self.totals.items())
        state['seen'] = self.seen
        variables = self._metric_variables() if self.model is not None else []
        if variables:
            state['metrics'] = [np.array(v) for v in keras.backend.batch_get_value(variables)]
        return state

    def set_state(self, state):
        self.seen = state.get('seen', 0)
        self.totals = dict((k[len('total_'):], v) for k, v in state.items()
                           if k.startswith('total_'))
        self.metric_values = state.get('metrics')
        self.carry = self.resumed_inside

    def on_epoch_begin(self, epoch, logs=None):
        if self.carry:            # a resumed epoch: the sums of its committed batches
            self.carry = False
            variables = self._metric_variables()
            values = self.metric_values or []
            if len(values) != len(variables):
                # the totals cannot be put back: say so, never report part of an epoch
                raise ValueError(
                    'fit: the commit holds %d stateful metric variable(s), the model has %d '
                    '(compile the model with the same metrics as the run that committed)'
                    % (len(values), len(variables)))
            if variables:
                keras.backend.batch_set_value(list(zip(variables, values)))
            return
        self.seen, self.totals = 0, {}

    def on_batch_end(self, batch, logs=None):
        logs = logs or {}
        size_ = logs.get('size', 0)
        self.seen += size_
        for k, v in logs.items():
            if k == 'loss' or k.endswith('_loss'):
                self.totals[k] = self.totals[k] + v * size_ if k in self.totals else v * size_

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None and self.seen:
            for k, v in self.totals.items():
                if k in logs:
                    logs[k] = v / self.seen
        self.seen, self.totals = 0, {}


class _Continued(keras.callbacks.Callback):
    """A callback given to :func:`fit`, across the Keras ``fit`` calls :func:`fit` makes:
    ``on_train_begin`` once (then its committed state is set back), ``on_train_end``
    once, batch indices counted from the start of the epoch (a resumed epoch's first batch
    is ``state.batch``, not 0), and the ``params`` of a whole epoch (``samples``), so that
    per-batch schedules take the steps of the uninterrupted run."""

    def __init__(self, inner, index, state, samples):
        self.inner = inner          # before Callback.__init__ sets validation_data
        super(_Continued, self).__init__()
        self.index, self.state, self.samples = index, state, samples
        self.offset, self.began, self.last = 0, False, False

    @property
    def validation_data(self):
        return getattr(self.inner, 'validation_data', None)

    @validation_data.setter
    def validation_data(self, value):
        self.inner.validation_data = value

    def set_model(self, model):
        super(_Continued, self).set_model(model)
        self.inner.set_model(model)

    def set_params(self, params):
        params = dict(params)
        if params.get('samples') is not None:
            params['samples'] = self.samples
        super(_Continued, self).set_params(params)
        self.inner.set_params(params)

    def on_train_begin(self, logs=None):
        if self.began:
            return
        self.began = True
        self.inner.on_train_begin(logs)
        restored = self.state.callback_states.get(self.index)
        if restored is not None:
            _set_callback_state(self.inner, restored[1])

    def on_train_end(self, logs=None):
        if self.last:
            self.inner.on_train_end(logs)

    def on_epoch_begin(self, epoch, logs=None):
        self.inner.on_epoch_begin(epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self.inner.on_epoch_end(epoch, logs)

    def on_batch_begin(self, batch, logs=None):
        self.inner.on_batch_begin(batch + self.offset, logs)

    def on_batch_end(self, batch, logs=None):
        self.inner.on_batch_end(batch + self.offset, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self.inner.on_train_batch_begin(batch + self.offset, logs)

    def on_train_batch_end(self, batch, logs=None):
        self.inner.on_train_batch_end(batch + self.offset, logs)

    def on_test_begin(self, logs=None):
        self.inner.on_test_begin(logs)

    def on_test_end(self, logs=None):
        self.inner.on_test_end(logs)

    def on_test_batch_begin(self, batch, logs=None):
        self.inner.on_test_batch_begin(batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self.inner.on_test_batch_end(batch, logs)

    def on_predict_begin(self, logs=None):
        self.inner.on_predict_begin(logs)

    def on_predict_end(self, logs=None):
        self.inner.on_predict_end(logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self.inner.on_predict_batch_begin(batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self.inner.on_predict_batch_end(batch, logs)


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
    # every worker the same steps: a last global batch of fewer rows than workers
    # would leave some of them without a step; it is left out of every epoch
    rest = n % global_batch_size
    if 0 < rest < workers:
        n -= rest
    if n < 1:
        raise ValueError('fit: x has %d sample(s): not one global batch that each of the %d '
                         'workers has a row of' % (_length(x), workers))
    if getattr(model, 'optimizer', None) is not None:
        # built on every worker before the first collective (TensorFlow numbers its
        # collectives as they are built: a worker that restored has built it already)
        _build_slots(model, model.optimizer)
    _check_same_position(state)
    weights = kwargs.pop('sample_weight', None)
    commit = CommitStateCallback(state, batches_per_commit)
    commit.epoch_recorded = bool(shuffle)   # shuffle=True: recorded before each draw
    rank = _State.rank if _State.initialized else 0
    samples = len(shard_indices(n, global_batch_size, rank, workers))
    sums = _EpochSums()
    given = [sums] + list(callbacks or [])
    state.track_callbacks(given)
    for index, (cls, _) in sorted(state.callback_states.items()):
        if index >= len(given) or type(given[index]).__name__ != cls:
            raise ValueError('fit: the commit holds the state of a %s as callback %d; the '
                             'callbacks given now are %s (give the same callbacks, in the '
                             'same order, as the run that committed)'
                             % (cls, index - 1, [type(c).__name__ for c in given[1:]]))
    wrapped = [_Continued(cb, i, state, samples) for i, cb in enumerate(given)]
    calls = wrapped + [commit]
    history = keras.callbacks.History()
    history.history, history.epoch = {}, []

    def run(rows, first, last, offset, final):
        commit.batch_offset = offset
        for cb in wrapped:
            cb.offset, cb.last = offset, final
        sw = _rows(weights, rows)
        try:
            got = _fit(rows, first, last, sw)
        except BaseException:
            # a lost peer (WorkerLost) or an interrupt: let the commit in flight reach the
            # disk first (an engine collective that holds the GIL may have stalled it)
            try:
                state.wait()
            except Exception as e:
                import sys
                sys.stderr.write('keras_backend.distribute: the last commit was not written: '
                                 '%s: %s\n' % (type(e).__name__, e))
            raise
        history.epoch.extend(got.epoch)
        for k, v in got.history.items():
            history.history.setdefault(k, []).extend(v)
        return not getattr(model, 'stop_training', False)

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
            np.random.shuffle(np.arange(_length(x)))
        epoch, batch, start = epoch + 1, 0, 0
    sums.resumed_inside = bool(batch)
    if shuffle:
        for e in range(epoch, epochs):
            state.record_epoch_start()
            order = np.arange(_length(x))
            np.random.shuffle(order)
            skip = start if e == epoch else 0
            if not run(order[skip:n], e, e + 1, batch if e == epoch else 0, e == epochs - 1):
                break
        state.wait()
        return history
    going = True
    if batch and epoch < epochs:
        going = run(np.arange(start, n), epoch, epoch + 1, batch, epoch + 1 == epochs)
        epoch += 1
    if going and epoch < epochs:
        run(np.arange(n), epoch, epochs, 0, True)
    state.wait()          # the last commit is on disk
    return history


def _check_same_position(state):
    """Every worker resumes at the same epoch, batch and step (a collective), or each
    raises ValueError naming them."""
    if size() == 1:
        return
    mine = np.array([[int(state.epoch), int(state.batch), int(state.step)]], np.int64)
    table = allgather_values(mine)
    if (table != table[0]).any():
        raise ValueError('fit: the workers are not at the same point of training (epoch, '
                         'batch, step by rank: %s); restore() on every worker, or restore() on '
                         'rank 0 then sync() on every worker'
                         % ', '.join('%d: %s' % (r, tuple(int(v) for v in row))
                                     for r, row in enumerate(table)))
