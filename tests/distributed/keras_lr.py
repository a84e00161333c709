"""Keras 2.3.1 ``fit`` with Horovod's learning-rate callbacks, for the distributed tests.

    KERAS_BACKEND=keras_backend.<engine>_backend \\
        python [-m keras_backend.distribute -n N] tests/distributed/keras_lr.py OUT

A linear model (Dense(1), zeros), mse, ``DistributedOptimizer(SGD(0.05, momentum=0.9))``,
64 samples in global batches of 16 (4 steps per epoch on every worker), 4 epochs under
Horovod's schedules: a warmup over epochs 0-1, a staircase exponential decay in epoch 2,
a per-batch schedule from epoch 3. Run twice: with and without momentum correction.
A recorder after them notes the rate and the momentum at each batch's start (after the
callbacks set them) and the momentum at its end (after they restore it). Writes
OUT.<rank>.npz: ``size``, and per run (suffix ``_on`` / ``_off``) ``lr``, ``momentum``,
``momentum_after`` (one per batch), ``epoch_lr`` (the logs' ``lr``) and ``weights``;
``raised``: the exception class each of :data:`BAD`'s constructions raised.
Started alone it is one worker (the warmup's multiplier is then 1).
"""
import sys

import numpy as np

GLOBAL_BATCH, EPOCHS, LR0, MOMENTUM, PEAK = 16, 4, 0.05, 0.9, 0.2
WARMUP, STEPS = 2, 4          # warmup epochs; batches per epoch on every worker


def data():
    rng = np.random.RandomState(0)
    x = rng.randn(64, 3).astype('float32')
    y = (x.dot(rng.randn(3, 1)) + 0.3).astype('float32')
    return x, y


#: bad arguments and the exception each must raise
BAD = (("kd.LearningRateScheduleCallback(None, 0.5)", 'ValueError'),
       ("kd.LearningRateScheduleCallback('0.1', 0.5)", 'TypeError'),
       ("kd.LearningRateScheduleCallback(0.1, 'half')", 'TypeError'),
       ("kd.LearningRateScheduleCallback(0.1, 0.5, start_epoch=3, end_epoch=3)", 'ValueError'),
       ("kd.LearningRateScheduleCallback(0.1, 0.5, steps_per_epoch=0)", 'ValueError'),
       ("kd.LearningRateScheduleCallback(0.1, 0.5, start_epoch=1.5)", 'TypeError'),
       ("kd.LearningRateWarmupCallback(0.1, warmup_epochs=0)", 'ValueError'),
       ("kd.LearningRateWarmupCallback(0.1, warmup_epochs=2.0)", 'TypeError'))


def main(out):
    import keras_backend.distribute as kd
    kd.init()
    import keras_backend.keras2_compat
    keras_backend.keras2_compat.install()   # Keras 2.3.1 on Python 3.10+
    import keras
    from keras import backend as K

    def callbacks(correction):
        """The schedules (Horovod's usual order: warmup, then the others)."""
        return [kd.LearningRateWarmupCallback(PEAK, warmup_epochs=WARMUP,
                                              momentum_correction=correction),
                kd.LearningRateScheduleCallback(PEAK, 0.5, start_epoch=2, end_epoch=3,
                                                momentum_correction=correction),
                kd.LearningRateScheduleCallback(PEAK, lambda epoch: 1.0 / (1.0 + epoch),
                                                start_epoch=3, staircase=False,
                                                momentum_correction=correction)]

    class Recorder(keras.callbacks.Callback):
        def __init__(self):
            super(Recorder, self).__init__()
            self.lr, self.momentum, self.momentum_after = [], [], []

        def on_batch_begin(self, batch, logs=None):
            self.lr.append(float(K.get_value(self.model.optimizer.lr)))
            self.momentum.append(float(K.get_value(self.model.optimizer.momentum)))

        def on_batch_end(self, batch, logs=None):
            self.momentum_after.append(float(K.get_value(self.model.optimizer.momentum)))

    def run(correction):
        x, y = data()
        model = keras.models.Sequential([keras.layers.Dense(1, input_shape=(3,))])
        model.set_weights([np.zeros(w.shape, 'float32') for w in model.get_weights()])
        model.compile(kd.DistributedOptimizer(keras.optimizers.SGD(LR0, momentum=MOMENTUM)),
                      'mse')
        recorder = Recorder()
        history = model.fit(kd.shard(x, GLOBAL_BATCH), kd.shard(y, GLOBAL_BATCH),
                            batch_size=GLOBAL_BATCH // kd.size(), epochs=EPOCHS,
                            shuffle=False, verbose=0,
                            callbacks=callbacks(correction) + [recorder])
        return dict(lr=recorder.lr, momentum=recorder.momentum,
                    momentum_after=recorder.momentum_after,
                    epoch_lr=history.history['lr'],
                    weights=np.concatenate([w.ravel() for w in model.get_weights()]))

    results = {'size': kd.size()}
    for name, correction in (('on', True), ('off', False)):
        for key, value in run(correction).items():
            results['%s_%s' % (key, name)] = np.asarray(value)
    raised = []
    for code, _ in BAD:
        try:
            eval(code)
            raised.append('nothing')
        except Exception as e:   # noqa: BLE001 - the test compares the class names
            raised.append(type(e).__name__)
    results['raised'] = np.array(raised)
    np.savez('%s.%d.npz' % (out, kd.rank()), **results)
    kd.barrier()


if __name__ == '__main__':
    main(sys.argv[1])
