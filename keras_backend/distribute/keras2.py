"""Keras 2.3.1 on several workers: the optimizer wrapper and the callbacks, Horovod's names.

Importing this module imports ``keras`` (Keras 2.3.1, whose backend is one of our
adapters: ``KERAS_BACKEND=keras_backend.<engine>_backend``). Horovod users may write
``import keras_backend.distribute.keras2 as hvd``: it also re-exports ``init``, ``rank``,
``size``, ``local_rank``, ``allreduce``, ``allreduce_values``, ``allgather``,
``allgather_values``, ``broadcast``, ``broadcast_values``, ``broadcast_variables``,
``barrier``, ``join``, ``joinable``, ``shard``, ``Average``, ``Sum``, ``Compression`` and
``WorkerLost``.
"""
import numpy as np

import keras
from keras import backend as K

from .group import (WorkerLost, barrier, init, local_rank, rank,  # noqa: F401 (re-exported)
                    size)
from .horovod import (Average, Compression, Sum, allgather,  # noqa: F401 (re-exported)
                      allgather_values, allreduce, allreduce_values, broadcast,
                      broadcast_values, broadcast_variables, join, joinable, shard)
from .horovod import _check_compression, _join, _join_round, _reduce_op


def _distributed_get_gradients(self, loss, params):
    """Keras' ``get_gradients`` with the gradients averaged over the workers *before*
    ``clipnorm`` / ``clipvalue`` act, so that every worker clips the global gradient
    (Horovod clipped each worker's own gradient, then averaged)."""
    op = Average if getattr(self, '_kb_average', True) else Sum
    compression = getattr(self, '_kb_compression', Compression.none)
    grads = getattr(self, '_kb_local_gradients', None)   # backward_passes_per_step > 1
    if grads is None:
        grads = allreduce(_local_gradients(loss, params), op=op, compression=compression)
    else:
        grads = _reduced_when(self._kb_fire, grads, op, compression)
    clipnorm = getattr(self, 'clipnorm', 0)
    if clipnorm and clipnorm > 0:
        total = K.sqrt(sum([K.sum(K.square(g)) for g in grads]))
        grads = [keras.optimizers.clip_norm(g, clipnorm, total) for g in grads]
    clipvalue = getattr(self, 'clipvalue', 0)
    if clipvalue and clipvalue > 0:
        grads = [K.clip(g, -clipvalue, clipvalue) for g in grads]
    return grads


def _local_gradients(loss, params):
    grads = K.gradients(loss, params)
    if any(g is None for g in grads):
        raise ValueError('DistributedOptimizer: a parameter has no gradient (an op without '
                         'one, e.g. K.argmax, K.round, K.eval, lies between it and the loss)')
    return list(grads)


def _reduced_when(fire, grads, op, compression):
    """The allreduce of ``grads`` as one fused collective under ``K.switch(fire, ...)``, so
    that an engine whose ``switch`` on a scalar runs only the chosen branch (TensorFlow:
    ``tf.cond``) runs the collective only on the steps where ``fire`` holds; on the others
    the local values come out (the gated updates ignore them). Gradients of several
    dtypes, or of sizes known only at run time, are reduced on every step."""
    shapes = [K.int_shape(g) for g in grads]
    dtypes = set(K.dtype(g) for g in grads)
    if len(dtypes) != 1 or any(s is None or None in s for s in shapes):
        return allreduce(list(grads), op=op, compression=compression)
    flat = K.concatenate([K.reshape(g, (-1,)) for g in grads], axis=0)
    flat = K.switch(fire, lambda: allreduce(flat, op=op, compression=compression), flat)
    out, start = [], 0
    for shape in shapes:
        n = int(np.prod(shape, dtype=np.int64))
        out.append(K.reshape(flat[start:start + n], shape))
        start += n
    return out


def _distributed_get_updates(self, loss, params):
    """Keras' ``get_updates``; with ``backward_passes_per_step`` k > 1, the local gradients
    are summed in variables and every k-th step their mean over the k passes is
    allreduced and applied; on the other steps every update of the optimizer (weights,
    slots, ``iterations``) keeps the variable's value."""
    base = self._kb_base
    k = getattr(self, '_kb_passes', 1)
    if k == 1:
        return base.get_updates(self, loss, params)
    grads = _local_gradients(loss, params)
    accumulated = [K.zeros(K.int_shape(p), dtype=K.dtype(p), name='accumulated_%d' % i)
                   for i, p in enumerate(params)]
    passes = K.variable(0.0, dtype='float32', name='backward_passes')
    # a State commits both (each worker's sums; the counter, equal on every worker)
    self._kb_accumulated = accumulated
    self._kb_passes_done = passes
    fire = K.equal(passes, float(k - 1))
    totals = [a + g for a, g in zip(accumulated, grads)]
    update, update_add, update_sub = K.update, K.update_add, K.update_sub

    def gated(x, new_x):
        return update(x, K.switch(fire, new_x, x))

    def gated_add(x, increment):
        return gated(x, x + increment)

    def gated_sub(x, decrement):
        return gated(x, x - decrement)

    self._kb_local_gradients = [t / float(k) for t in totals]
    self._kb_fire = fire
    K.update, K.update_add, K.update_sub = gated, gated_add, gated_sub
    try:
        updates = list(base.get_updates(self, loss, params))
    finally:
        K.update, K.update_add, K.update_sub = update, update_add, update_sub
        self._kb_local_gradients = None
        self._kb_fire = None
    updates += [update(a, K.switch(fire, K.zeros_like(t), t))
                for a, t in zip(accumulated, totals)]
    updates.append(update(passes, K.switch(fire, passes * 0.0, passes + 1.0)))
    self.updates = updates
    return updates


_CLASSES = {}


def DistributedOptimizer(optimizer, compression=None, backward_passes_per_step=1, op=None):
    """A new optimizer of ``optimizer``'s class and configuration whose gradients are
    averaged (or summed) over every worker (one fused collective per dtype in the training
    step) before Keras clips them.

    The class keeps its name (``Adam`` stays ``Adam``), so a model saved from a
    distributed run records a plain Keras optimizer and loads without this package.

    Args:
        optimizer: a Keras 2 optimizer instance (``keras.optimizers.Optimizer``).
        compression: ``Compression.none`` (default) or ``Compression.fp16`` (the gradients
            travel as float16).
        backward_passes_per_step: int k >= 1. With k > 1 each worker sums k steps' local
            gradients in variables, and every k-th step the mean over those k passes is
            reduced over the workers and applied; on the other steps the weights and the
            optimizer's state (``iterations`` included) do not change. The fused
            collective sits under ``K.switch(kth_step, ...)``: on TensorFlow (``tf.cond``)
            it runs only on the k-th step; on the other engines it runs every step and
            only the k-th step's result is used.
        op: :data:`~keras_backend.distribute.Average` (default) or
            :data:`~keras_backend.distribute.Sum` over the workers.

    Returns:
        The wrapped optimizer (a new instance; ``optimizer`` itself is not changed).

    Raises:
        TypeError: ``optimizer`` is not a Keras 2 optimizer; ``compression``, ``op`` or
            ``backward_passes_per_step`` of the wrong type.
        ValueError: ``backward_passes_per_step`` < 1.

    Example:
        >>> model.compile(kd.DistributedOptimizer(keras.optimizers.SGD(0.1),
        ...               compression=kd.Compression.fp16, backward_passes_per_step=2),
        ...               'mse')                                # doctest: +SKIP
    """
    if not isinstance(optimizer, keras.optimizers.Optimizer):
        raise TypeError('DistributedOptimizer: optimizer must be a Keras 2 optimizer '
                        '(keras.optimizers.Optimizer), got %r' % (type(optimizer).__name__,))
    compression = _check_compression('DistributedOptimizer', compression)
    average = _reduce_op('DistributedOptimizer', None, op)
    k = backward_passes_per_step
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError('DistributedOptimizer: backward_passes_per_step must be an int, got '
                        '%r' % (k,))
    if k < 1:
        raise ValueError('DistributedOptimizer: backward_passes_per_step must be >= 1, got %d'
                         % k)
    base = type(optimizer)
    if getattr(base, '_keras_backend_distributed', False):
        base = base._kb_base
    cls = _CLASSES.get(base)
    if cls is None:
        cls = type(base.__name__, (base,), {
            'get_gradients': _distributed_get_gradients,
            'get_updates': _distributed_get_updates,
            '_keras_backend_distributed': True,
            '_kb_base': base,
            '__doc__': 'Keras\' %s with gradients averaged over the workers '
                       '(keras_backend.distribute).' % base.__name__})
        cls.__module__ = base.__module__
        _CLASSES[base] = cls
    new = cls.from_config(optimizer.get_config())
    new._kb_compression = compression
    new._kb_average = average
    new._kb_passes = int(k)
    return new


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


# -- learning-rate schedules (Horovod's LearningRateScheduleCallback / ...WarmupCallback) --

def _is_number(v):
    return not isinstance(v, bool) and isinstance(v, (int, float, np.integer, np.floating))


class LearningRateScheduleCallback(keras.callbacks.Callback):
    """Sets the optimizer's learning rate to ``initial_lr * multiplier(epoch)`` during
    the epochs ``start_epoch <= epoch < end_epoch``, Horovod's schedule.

    With ``staircase=True`` the rate is set at the first batch of each epoch, with
    ``epoch`` the (0-based) epoch number; with ``staircase=False`` it is set before every
    batch, with ``epoch`` the fractional epoch ``epoch + batch / steps_per_epoch``.
    A number ``multiplier`` means ``multiplier ** epoch`` (exponential decay; the
    absolute epoch, not the one since ``start_epoch``). Outside the epochs the rate is
    left as it is (the last one set). At the end of each epoch ``logs['lr']`` is the rate.

    Momentum correction (Goyal et al. 2017): when the optimizer has a ``momentum``
    variable (Keras' ``SGD``), for the batch at which the rate changes from ``old`` to
    ``new`` its momentum is multiplied by ``new / old``, and restored after that batch
    (nothing is done where ``old`` is 0).

    Args:
        initial_lr: the base rate (a number > 0; required, as in Horovod 0.28).
        multiplier: a number, or a function of the (fractional) epoch returning a number.
        start_epoch: int >= 0, the first epoch of the schedule.
        end_epoch: int > start_epoch, the first epoch after it; None: to the end.
        staircase: True: once per epoch; False: every batch.
        momentum_correction: bool, see above.
        steps_per_epoch: int > 0, the batches per epoch of ``staircase=False``;
            None: Keras' ``params['steps']``, else ``params['samples'] //
            params['batch_size']`` (Horovod's rule: the floor), read when training begins.

    Raises:
        TypeError: a number or int that is not one; ``multiplier`` neither a number nor
            callable.
        ValueError: ``initial_lr`` None or <= 0, epochs out of order,
            ``steps_per_epoch`` <= 0; when training begins, no way to find
            ``steps_per_epoch``.

    Example:
        >>> # 1/10 of the rate from epoch 30 on, as in Horovod's ImageNet example
        >>> cb = kd.LearningRateScheduleCallback(0.1 * kd.size(), lambda epoch: 0.1,
        ...                                     start_epoch=30)   # doctest: +SKIP
    """

    def __init__(self, initial_lr, multiplier, start_epoch=0, end_epoch=None, staircase=True,
                 momentum_correction=True, steps_per_epoch=None):
        super(LearningRateScheduleCallback, self).__init__()
        name = type(self).__name__
        if initial_lr is None:
            raise ValueError('%s: initial_lr is required (a number > 0)' % name)
        if not _is_number(initial_lr):
            raise TypeError('%s: initial_lr must be a number, got %r' % (name, initial_lr))
        if not initial_lr > 0:
            raise ValueError('%s: initial_lr must be > 0, got %r' % (name, initial_lr))
        if callable(multiplier):
            self.multiplier = multiplier
        elif _is_number(multiplier):
            factor = float(multiplier)
            self.multiplier = lambda epoch: factor ** epoch
        else:
            raise TypeError('%s: multiplier must be a number or a function of the epoch, '
                            'got %r' % (name, multiplier))
        for arg, value in (('start_epoch', start_epoch), ('end_epoch', end_epoch),
                           ('steps_per_epoch', steps_per_epoch)):
            if value is not None and (isinstance(value, bool) or
                                      not isinstance(value, (int, np.integer))):
                raise TypeError('%s: %s must be an int, got %r' % (name, arg, value))
        if start_epoch is None or start_epoch < 0:
            raise ValueError('%s: start_epoch must be an int >= 0, got %r'
                             % (name, start_epoch))
        if end_epoch is not None and end_epoch <= start_epoch:
            raise ValueError('%s: end_epoch must be None or > start_epoch = %d, got %r'
                             % (name, start_epoch, end_epoch))
        if steps_per_epoch is not None and steps_per_epoch <= 0:
            raise ValueError('%s: steps_per_epoch must be None or > 0, got %r'
                             % (name, steps_per_epoch))
        self.initial_lr = float(initial_lr)
        self.start_epoch, self.end_epoch = int(start_epoch), end_epoch
        self.staircase = bool(staircase)
        self.momentum_correction = bool(momentum_correction)
        self.steps_per_epoch = steps_per_epoch
        self.current_epoch = None
        self._saved_momentum = None

    def _find_steps_per_epoch(self):
        params = self.params or {}
        if params.get('steps'):
            return int(params['steps'])
        if params.get('samples') and params.get('batch_size'):
            steps = int(params['samples']) // int(params['batch_size'])
            if steps > 0:
                return steps
        raise ValueError('%s: cannot tell the number of batches per epoch from Keras\' '
                         'params (%r); pass steps_per_epoch' % (type(self).__name__, params))

    def _set_rate(self, epoch):
        optimizer = self.model.optimizer
        old = float(K.get_value(optimizer.lr))
        new = self.initial_lr * float(self.multiplier(epoch))
        K.set_value(optimizer.lr, new)
        if self.momentum_correction and hasattr(optimizer, 'momentum') and old != 0:
            momentum = float(K.get_value(optimizer.momentum))
            if self._saved_momentum is None:
                self._saved_momentum = momentum
            K.set_value(optimizer.momentum, momentum * new / old)

    def on_train_begin(self, logs=None):
        if not self.staircase and not self.steps_per_epoch:
            self.steps_per_epoch = self._find_steps_per_epoch()

    def on_epoch_begin(self, epoch, logs=None):
        self.current_epoch = epoch

    def on_batch_begin(self, batch, logs=None):
        epoch = self.current_epoch
        if epoch < self.start_epoch or (self.end_epoch is not None and
                                        epoch >= self.end_epoch):
            return
        if self.staircase:
            if batch == 0:
                self._set_rate(epoch)
        else:
            self._set_rate(epoch + float(batch) / self.steps_per_epoch)

    def on_batch_end(self, batch, logs=None):
        if self._saved_momentum is not None:
            K.set_value(self.model.optimizer.momentum, self._saved_momentum)
            self._saved_momentum = None

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs['lr'] = float(K.get_value(self.model.optimizer.lr))


class LearningRateWarmupCallback(LearningRateScheduleCallback):
    """Raises the learning rate from ``initial_lr / size()`` to ``initial_lr`` over the
    first ``warmup_epochs`` epochs, batch by batch (Goyal et al. 2017; Horovod's warmup).

    Before batch ``b`` of epoch ``e`` (``e < warmup_epochs``) the rate is
    ``initial_lr * multiplier(t)`` with ``t = e + (b + 1) / steps_per_epoch`` and
    ``multiplier(t) = 1 / size * (t * (size - 1) / warmup_epochs + 1)``, so the last
    batch of the warmup runs at ``initial_lr`` (with one worker, always ``initial_lr``).
    It is a :class:`LearningRateScheduleCallback` with ``staircase=False``, epochs
    ``[0, warmup_epochs)``, and the same momentum correction. Put a schedule for the
    later epochs (``start_epoch=warmup_epochs``) after it in ``callbacks``.

    Args:
        initial_lr: the rate at the end of the warmup (a number > 0), usually the single
            process's rate times ``size()``.
        warmup_epochs: int > 0.
        momentum_correction: bool.
        steps_per_epoch: int > 0 or None (found as :class:`LearningRateScheduleCallback`
            finds it).
        verbose: > 0: worker 0 prints a line when the warmup ends.

    Raises:
        TypeError, ValueError: as :class:`LearningRateScheduleCallback`;
            ``warmup_epochs`` not an int > 0.

    Example:
        >>> model.fit(x, y, callbacks=[kd.LearningRateWarmupCallback(
        ...     0.1 * kd.size(), warmup_epochs=5)])           # doctest: +SKIP
    """

    def __init__(self, initial_lr, warmup_epochs=5, momentum_correction=True,
                 steps_per_epoch=None, verbose=0):
        if isinstance(warmup_epochs, bool) or not isinstance(warmup_epochs, (int, np.integer)):
            raise TypeError('LearningRateWarmupCallback: warmup_epochs must be an int, got %r'
                            % (warmup_epochs,))
        if warmup_epochs <= 0:
            raise ValueError('LearningRateWarmupCallback: warmup_epochs must be > 0, got %r'
                             % (warmup_epochs,))
        self.warmup_epochs = int(warmup_epochs)
        self.verbose = verbose
        super(LearningRateWarmupCallback, self).__init__(
            initial_lr, self._warmup, start_epoch=0, end_epoch=self.warmup_epochs,
            staircase=False, momentum_correction=momentum_correction,
            steps_per_epoch=steps_per_epoch)

    def _warmup(self, epoch):
        n = size()
        t = epoch + 1.0 / self.steps_per_epoch   # the epoch at this batch's end
        return (t * (n - 1) / self.warmup_epochs + 1.0) / n

    def on_epoch_end(self, epoch, logs=None):
        super(LearningRateWarmupCallback, self).on_epoch_end(epoch, logs)
        if epoch == self.warmup_epochs - 1 and self.verbose and rank() == 0:
            print('\nEpoch %d: finished gradual learning rate warmup to %g.'
                  % (epoch + 1, float(K.get_value(self.model.optimizer.lr))))

class JoinCallback(keras.callbacks.Callback):
    """Lets workers with uneven data train together (Horovod's ``join`` for ``fit``): at
    each batch this worker takes part in a join round; at the end of its epoch (it is out
    of data) it calls :func:`~keras_backend.distribute.join` with the model's training
    step on zero-filled inputs of its last batch's size (sample weights 1), repeated until
    every worker has joined. Those repeated steps contribute zeros to the gradient
    allreduce and are left out of its mean, so the others' steps go on with their own
    gradients and every worker applies the same updates; the metric states and the
    model's non-trainable weights (BatchNormalization's moving statistics) are restored
    after each repeated step.

    Put it first in ``callbacks`` (before ``MetricAverageCallback``), on every worker.
    The model must be compiled with ``DistributedOptimizer``. On JAX every worker's batches
    must have the same size (a compiled step has static shapes).

    Example:
        >>> model.fit(x_mine, y_mine, batch_size=32,        # doctest: +SKIP
        ...           callbacks=[kd.JoinCallback(), kd.MetricAverageCallback()])
    """

    def __init__(self):
        super(JoinCallback, self).__init__()
        self.rows = None
        self.last_joined = None

    def on_batch_begin(self, batch, logs=None):
        if size() == 1:
            return
        rows = (logs or {}).get('size')
        if rows:
            self.rows = int(rows)
        _join_round(True)

    def _zero_inputs(self):
        model = self.model
        rows = self.rows or int(self.params.get('batch_size') or 1)
        ins = []
        for p in model._feed_inputs:
            shape = tuple(rows if d is None else d for d in K.int_shape(p))
            ins.append(np.zeros((rows,) + shape[1:], K.dtype(p)))
        target_shapes = []
        for p, shape, loss_fn in zip(model._feed_targets, model._feed_output_shapes,
                                     model._feed_loss_fns):
            fn = getattr(loss_fn, 'fn', loss_fn)
            if fn is keras.losses.sparse_categorical_crossentropy or isinstance(
                    loss_fn, getattr(keras.losses, 'SparseCategoricalCrossentropy', ())):
                shape = tuple(shape[:-1]) + (1,)
            shape = (rows,) + tuple(1 if d is None else d for d in shape[1:])
            target_shapes.append(shape)
            ins.append(np.zeros(shape, K.dtype(p)))
        for i, p in enumerate(model._feed_sample_weights):
            ndim = len(K.int_shape(p))
            shape = (rows,) if ndim < 2 or i >= len(target_shapes) else \
                tuple(target_shapes[i][:2])
            ins.append(np.ones(shape, K.dtype(p)))
        if model._uses_dynamic_learning_phase():
            ins.append(1)
        return ins

    def on_epoch_end(self, epoch, logs=None):
        if size() == 1:
            return
        model = self.model
        if getattr(model, 'train_function', None) is None:
            model._make_train_function()
        step = model.train_function
        ins = self._zero_inputs()
        seen = set()
        protect = []
        optimizer_weights = [w for w in getattr(model.optimizer, 'weights', [])]
        candidates = [w for m in model.metrics for w in getattr(m, 'weights', [])]
        candidates += [w for w in model.non_trainable_weights
                       if all(w is not o for o in optimizer_weights)]
        for w in candidates:
            if id(w) not in seen:
                seen.add(id(w))
                protect.append(w)
        self.last_joined = _join(lambda: step(ins), protect)
