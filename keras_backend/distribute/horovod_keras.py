"""The Keras 2.3.1 names of Horovod's API (``horovod.keras``): ``DistributedOptimizer`` and
the callbacks. Each loads :mod:`keras_backend.distribute.keras2` (and so ``keras``) on
first use, so that ``import keras_backend.distribute`` needs no Keras.
"""


def DistributedOptimizer(optimizer, compression=None, backward_passes_per_step=1,
                         op=None):
    """A copy of Keras 2 ``optimizer`` whose gradients are averaged over the workers
    before Keras clips them (``clipnorm`` / ``clipvalue`` see the global gradient), with
    Horovod's ``compression``, ``backward_passes_per_step`` and ``op``; see
    :func:`keras_backend.distribute.keras2.DistributedOptimizer`."""
    from . import keras2
    return keras2.DistributedOptimizer(optimizer, compression=compression,
                                       backward_passes_per_step=backward_passes_per_step,
                                       op=op)


def BroadcastGlobalVariablesCallback(root_rank=0):
    """A Keras callback that sets every worker's weights to ``root_rank``'s when training
    begins; see :class:`keras_backend.distribute.keras2.BroadcastGlobalVariablesCallback`."""
    from . import keras2
    return keras2.BroadcastGlobalVariablesCallback(root_rank)


def MetricAverageCallback():
    """A Keras callback that averages each epoch's logs over the workers; see
    :class:`keras_backend.distribute.keras2.MetricAverageCallback`."""
    from . import keras2
    return keras2.MetricAverageCallback()


def LearningRateScheduleCallback(initial_lr, multiplier, start_epoch=0, end_epoch=None,
                                 staircase=True, momentum_correction=True,
                                 steps_per_epoch=None):
    """A Keras callback that sets the learning rate to ``initial_lr * multiplier(epoch)``
    in epochs ``[start_epoch, end_epoch)`` (Horovod's); see
    :class:`keras_backend.distribute.keras2.LearningRateScheduleCallback`."""
    from . import keras2
    return keras2.LearningRateScheduleCallback(initial_lr, multiplier, start_epoch, end_epoch,
                                               staircase, momentum_correction,
                                               steps_per_epoch)


def LearningRateWarmupCallback(initial_lr, warmup_epochs=5, momentum_correction=True,
                               steps_per_epoch=None, verbose=0):
    """A Keras callback that raises the learning rate from ``initial_lr / size()`` to
    ``initial_lr`` over ``warmup_epochs`` epochs (Horovod's); see
    :class:`keras_backend.distribute.keras2.LearningRateWarmupCallback`."""
    from . import keras2
    return keras2.LearningRateWarmupCallback(initial_lr, warmup_epochs, momentum_correction,
                                             steps_per_epoch, verbose)


def JoinCallback():
    """A Keras callback for workers with uneven data: each batch takes part in a join
    round, and a worker at the end of its epoch joins (:func:`join`) until every worker
    has; see :class:`keras_backend.distribute.keras2.JoinCallback`."""
    from . import keras2
    return keras2.JoinCallback()


# committed state for supervised restarts (README, "When a worker is lost")
