"""Keras 2.3.1 training that commits its state and is killed, for the restart tests.

    KERAS_BACKEND=keras_backend.<engine>_backend python -m keras_backend.distribute -n 2 \\
        --restarts R tests/distributed/keras_elastic.py OUT STATEDIR INTERVAL PLAN [SHUFFLE]

The model and data of keras_fit.py (64 rows, a global batch of 16: 4 steps an epoch, 4
epochs), trained with ``keras2_elastic.fit`` from a ``kd.State`` in STATEDIR committed
every INTERVAL steps. PLAN is a comma-separated list of events, the i-th one for attempt
i ($KERAS_BACKEND_DISTRIBUTE_RESTART), or 'none':

* ``kill:R:S``: worker R sends itself SIGKILL when S steps are done (inside step S + 1,
  after 2 s);
* ``hang:R:S``: worker R sleeps for ever there (the collective timeout catches it);
* ``commitkill:R:S``: worker R (0: the one that writes) is killed inside the commit made
  after step S, once half of the temporary file is written (before ``os.replace``);
* ``val:R:E``: worker R sends itself SIGKILL inside epoch E's validation (its first batch:
  after the epoch's last step, before any ``on_epoch_end``);
* ``epochend:R:E``: the same in epoch E's ``on_epoch_end``, after every other callback's
  and before the epoch-end commit.

With BOUNDARIES (``boundaries``): SGD with momentum through
``DistributedOptimizer(backward_passes_per_step=2)``, validation data (32 rows), and the
callbacks whose state decides what happens next, each on ``val_loss`` with ``mode='max'``
(so that no epoch after the first is a new best: their counters and best values matter):
``ReduceLROnPlateau`` (patience 1: the rate halves at the end of epochs 1, 2...),
``EarlyStopping(restore_best_weights=True)`` (patience 2: training stops at the end of
epoch 2 and takes epoch 0's weights back) and ``ModelCheckpoint(save_best_only=True)``
(OUT.best.<rank>.h5: epoch 0's weights, written once). OUT.<rank>.npz then also holds
``val_loss``, the checkpoint's weights (``checkpoint``) and EarlyStopping's
``stopped_epoch``.

With TENSORBOARD (``tensorboard``), Keras' TensorBoard callback (``update_freq='batch'``,
histograms with BOUNDARIES) writes OUT.tb, before the callback that kills.

With SCHEDULES (``schedules`` among the last arguments) the optimizer is SGD with momentum
through ``DistributedOptimizer(backward_passes_per_step=2)``, a per-batch learning-rate
schedule (``LearningRateScheduleCallback(staircase=False)``, epochs 0-1) and
``ReduceLROnPlateau`` on the loss (two epochs without a new best halve the rate) run,
and OUT.<rank>.npz also holds the rate at every step (``lrs``). ``rows65`` adds a 65th
row (a last global batch of one row); ``nosync``: only worker 0 restores (no ``sync()``).

Each attempt's worker 0 appends a JSON line to OUT.log (attempt, workers, the step it
resumed from, the steps redone, when it started and when its first step ended); an event
writes its time to OUT.event.<attempt>. Every worker of the attempt that finishes writes
OUT.<rank>.npz (the final weights, the epoch losses seen by this attempt).
"""
import json
import os
import signal
import sys
import time

import numpy as np

import keras_backend.distribute as kd

kd.init()
import keras_backend.keras2_compat  # noqa: E402

keras_backend.keras2_compat.install()   # Keras 2.3.1 on Python 3.10+
import keras  # noqa: E402

import keras_backend.distribute.elastic as elastic  # noqa: E402
import keras_backend.distribute.keras2_elastic as kde  # noqa: E402

STARTED = time.time()
out, statedir, interval, plan = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
shuffle = 'shuffle' in sys.argv[5:]
schedules = 'schedules' in sys.argv[5:]
odd_rows = 'rows65' in sys.argv[5:]          # one row more: a last global batch of one
no_sync = 'nosync' in sys.argv[5:]           # rank 0 restores, the others do not
boundaries = 'boundaries' in sys.argv[5:]
tensorboard = 'tensorboard' in sys.argv[5:]
GLOBAL_BATCH, EPOCHS = 16, 4
rng = np.random.RandomState(0)
X = rng.randn(64, 5).astype('float32')
Y = np.tanh(X.dot(rng.randn(5, 2))).astype('float32')
if odd_rows:
    X, Y = np.concatenate([X, X[:1]]), np.concatenate([Y, Y[:1]])
np.random.seed(5)     # the shuffle's random state, the same on every worker

model = keras.models.Sequential([
    keras.layers.Dense(8, activation='tanh', input_shape=(5,)),
    keras.layers.Dense(2)])
init = np.random.RandomState(1)
model.set_weights([init.uniform(-0.5, 0.5, w.shape).astype('float32')
                   for w in model.get_weights()])
if schedules or boundaries:
    # boundaries: a stateful metric (Keras 2.3's mae: a running total and count per epoch)
    model.compile(kd.DistributedOptimizer(keras.optimizers.SGD(0.1, momentum=0.9),
                                          backward_passes_per_step=2), 'mse',
                  metrics=['mae'] if boundaries else None)
else:
    model.compile(kd.DistributedOptimizer(keras.optimizers.Adam(0.05, clipnorm=0.5)), 'mse')

attempt = kd.restart_count()
events = [] if plan == 'none' else [e.split(':') for e in plan.split(',')]
kind, who, at = (events[attempt][0], int(events[attempt][1]), int(events[attempt][2])) \
    if attempt < len(events) else (None, -1, -1)
state = kd.State(statedir, model=model)
# worker 0 reads the commit and sync() gives it to the others (the folder is shared here,
# so each could read it: restore() on every worker; this way exercises sync())
resumed = state.restore() if kd.rank() == 0 else False
if not no_sync:
    state.sync()


def _note_event():
    with open('%s.event.%d' % (out, attempt), 'w') as f:
        f.write(repr(time.time()))


if kind == 'commitkill' and kd.rank() == who:
    real_fsync, real_write = elastic._fsync, elastic._write_commit
    armed = []

    def _write(directory, keep, snap):     # the commit thread, with that commit's values
        if snap['values']['step'] == at:
            armed.append(True)
        real_write(directory, keep, snap)

    def _fsync(fd):
        if armed:                  # half of the temporary file, then gone
            os.ftruncate(fd, os.fstat(fd).st_size // 2)
            _note_event()
            os.kill(os.getpid(), signal.SIGKILL)
        real_fsync(fd)
    elastic._fsync = _fsync
    elastic._write_commit = _write


def _kill_here():
    time.sleep(2.0 if kd.size() > 1 else 0.3)   # the commit in flight lands first
    _note_event()
    os.kill(os.getpid(), signal.SIGKILL)


class Events(keras.callbacks.Callback):
    first = None

    def on_test_batch_begin(self, batch, logs=None):
        if kind == 'val' and kd.rank() == who and state.epoch == at and batch == 0:
            _kill_here()

    def on_epoch_end(self, epoch, logs=None):
        if kind == 'epochend' and kd.rank() == who and epoch == at:
            _kill_here()

    def on_batch_begin(self, batch, logs=None):
        if kd.rank() != who or state.step != at:
            return
        if kind == 'kill':
            # worker 0 ends its commit and waits in this step's collective
            time.sleep(2.0 if kd.size() > 1 else 0.3)
            _note_event()
            os.kill(os.getpid(), signal.SIGKILL)
        elif kind == 'hang':
            _note_event()
            time.sleep(10 ** 6)

    def on_batch_end(self, batch, logs=None):
        LRS.append(float(keras.backend.get_value(model.optimizer.lr)))
        if self.first is None:
            self.first = time.time()
            if kd.rank() == 0:
                with open(out + '.log', 'a') as f:
                    f.write(json.dumps({
                        'attempt': attempt, 'workers': kd.size(), 'resumed': resumed,
                        'epoch': state.epoch, 'from_step': state.step,
                        'steps_redone': state.steps_redone, 'started': STARTED,
                        'first_step_end': self.first}) + '\n')


LRS = []
extra = []
if schedules:
    extra = [kd.LearningRateScheduleCallback(0.1, lambda epoch: 1.0 / (1.0 + epoch), end_epoch=2,
                                             staircase=False),
             # no epoch is better by 1: the rate halves at the end of epoch 3 (its
             # counter of epochs 2 and 3; the schedule sets it during epochs 1 and 2)
             keras.callbacks.ReduceLROnPlateau(monitor='loss', factor=0.5, patience=2,
                                               min_delta=1.0, min_lr=1e-4)]
fit_extra, saved = {}, {}
CHECKPOINT = '%s.best.%d.h5' % (out, kd.rank())
if boundaries:
    val = np.random.RandomState(2)
    XV = val.randn(32, 5).astype('float32')
    fit_extra['validation_data'] = (XV, np.tanh(XV.dot(rng.randn(5, 2))).astype('float32'))
    stopper = keras.callbacks.EarlyStopping(monitor='val_loss', mode='max', patience=2,
                                            restore_best_weights=True)
    extra = [keras.callbacks.ReduceLROnPlateau(monitor='val_loss', mode='max', factor=0.5,
                                               patience=1, min_lr=1e-4),
             stopper,
             # every worker runs the same callbacks (a file each: HDF5 locks it)
             keras.callbacks.ModelCheckpoint(CHECKPOINT, monitor='val_loss', mode='max',
                                             save_best_only=True, save_weights_only=True)]
if tensorboard:
    # Keras' TensorBoard callback on the samples axis (each batch), with histograms when
    # there is validation data: the events a resumed job leaves in OUT.tb (rank 0 writes)
    # are those of the uninterrupted run
    extra.append(keras.callbacks.TensorBoard(out + '.tb', update_freq='batch',
                                             histogram_freq=1 if boundaries else 0,
                                             write_graph=False))
history = kde.fit(model, state, X, Y, GLOBAL_BATCH, EPOCHS, shuffle=shuffle,
                  batches_per_commit=interval,
                  callbacks=[kd.MetricAverageCallback(), kd.BroadcastGlobalVariablesCallback(0)]
                  + extra + [Events()], **fit_extra)
if boundaries:
    weights_now = model.get_weights()
    model.load_weights(CHECKPOINT)
    saved['checkpoint'] = np.concatenate([w.ravel() for w in model.get_weights()])
    model.set_weights(weights_now)
    saved['val_loss'] = np.array(history.history['val_loss'])
    saved['mae'] = np.array(history.history['mae'])
    saved['stopped_epoch'] = np.array(stopper.stopped_epoch)
np.savez('%s.%d.npz' % (out, kd.rank()), lrs=np.array(LRS),
         weights=np.concatenate([w.ravel() for w in model.get_weights()]),
         loss=np.array(history.history['loss']), epochs=np.array(history.epoch),
         iterations=np.array(int(keras.backend.get_value(model.optimizer.iterations))),
         **saved)
kd.barrier()
