"""Keras 2.3.1 on several workers: the optimizer wrapper and the callbacks, Horovod's names.

Importing this module imports ``keras`` (Keras 2.3.1, whose backend is one of our
adapters: ``KERAS_BACKEND=keras_backend.<engine>_backend``). Horovod users may write
``import keras_backend.distribute.keras2 as hvd``: it also re-exports ``init``, ``rank``,
``size``, ``local_rank``, ``allreduce``, ``allreduce_values``, ``broadcast_variables``,
``barrier``, ``shard`` and ``WorkerLost``.
"""
import numpy as np

import keras
from keras import backend as K

from . import (WorkerLost, allreduce, allreduce_values, barrier,  # noqa: F401 (re-exported)
               broadcast_variables, init, local_rank, rank, shard, size)


def _distributed_get_gradients(self, loss, params):
    """Keras' ``get_gradients`` with the gradients averaged over the workers *before*
    ``clipnorm`` / ``clipvalue`` act, so that every worker clips the global gradient
    (Horovod clipped each worker's own gradient, then averaged)."""
    grads = K.gradients(loss, params)
    if any(g is None for g in grads):
        raise ValueError('DistributedOptimizer: a parameter has no gradient (an op without '
                         'one, e.g. K.argmax, K.round, K.eval, lies between it and the loss)')
    grads = allreduce(list(grads), average=True)
    clipnorm = getattr(self, 'clipnorm', 0)
    if clipnorm and clipnorm > 0:
        total = K.sqrt(sum([K.sum(K.square(g)) for g in grads]))
        grads = [keras.optimizers.clip_norm(g, clipnorm, total) for g in grads]
    clipvalue = getattr(self, 'clipvalue', 0)
    if clipvalue and clipvalue > 0:
        grads = [K.clip(g, -clipvalue, clipvalue) for g in grads]
    return grads


_CLASSES = {}


def DistributedOptimizer(optimizer):
    """A new optimizer of ``optimizer``'s class and configuration whose gradients are
    averaged over every worker (one fused collective per dtype in the training step)
    before Keras clips them.

    The class keeps its name (``Adam`` stays ``Adam``), so a model saved from a
    distributed run records a plain Keras optimizer and loads without this package.

    Args:
        optimizer: a Keras 2 optimizer instance (``keras.optimizers.Optimizer``).

    Returns:
        The wrapped optimizer (a new instance; ``optimizer`` itself is not changed).

    Raises:
        TypeError: ``optimizer`` is not a Keras 2 optimizer.

    Example:
        >>> model.compile(kd.DistributedOptimizer(keras.optimizers.SGD(0.1)), 'mse')
        ...                                                     # doctest: +SKIP
    """
    if not isinstance(optimizer, keras.optimizers.Optimizer):
        raise TypeError('DistributedOptimizer: optimizer must be a Keras 2 optimizer '
                        '(keras.optimizers.Optimizer), got %r' % (type(optimizer).__name__,))
    base = type(optimizer)
    if getattr(base, '_keras_backend_distributed', False):
        return base.from_config(optimizer.get_config())
    cls = _CLASSES.get(base)
    if cls is None:
        cls = type(base.__name__, (base,), {
            'get_gradients': _distributed_get_gradients,
            '_keras_backend_distributed': True,
            '__doc__': 'Keras\' %s with gradients averaged over the workers '
                       '(keras_backend.distribute).' % base.__name__})
        cls.__module__ = base.__module__
        _CLASSES[base] = cls
    return cls.from_config(optimizer.get_config())


class BroadcastGlobalVariablesCallback(keras.callbacks.Callback):
    """Sets every worker's model weights and optimizer state to worker ``root_rank``'s
    when training begins (once per callback), so that all workers start equal.

    Example:
        >>> model.fit(x, y, callbacks=[kd.BroadcastGlobalVariablesCallback(0)])
        ...                                                     # doctest: +SKIP
    """

    def __init__(self, root_rank=0):
        super(BroadcastGlobalVariablesCallback, self).__init__()
        self.root_rank = root_rank
        self.done = False

    def on_train_begin(self, logs=None):
        if self.done:
            return
        variables = list(self.model.weights)
        optimizer = getattr(self.model, 'optimizer', None)
        if optimizer is not None:
            variables += [v for v in getattr(optimizer, 'weights', [])
                          if all(v is not w for w in variables)]
        broadcast_variables(variables, root=self.root_rank)
        self.done = True


class MetricAverageCallback(keras.callbacks.Callback):
    """Replaces each numeric entry of an epoch's logs (loss, metrics, validation
    metrics) with its mean over the workers, before the callbacks after it read them:
    put it first in ``callbacks``.

    Example:
        >>> model.fit(x, y, callbacks=[kd.MetricAverageCallback()])   # doctest: +SKIP
    """

    def on_epoch_end(self, epoch, logs=None):
        if logs is None or size() == 1:
            return
        keys = sorted(k for k, v in logs.items()
                      if isinstance(v, (int, float, np.integer, np.floating, np.ndarray))
                      and np.ndim(v) == 0)
        if not keys:
            return
        means = allreduce_values(np.array([float(logs[k]) for k in keys]), average=True)
        for k, v in zip(keys, means):
            logs[k] = float(v)
