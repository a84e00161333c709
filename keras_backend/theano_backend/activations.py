"""Activations and losses on Theano 1.0.5 / PyTensor: the engine-level functions of the names of
:mod:`keras_backend.api.activations`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from __future__ import absolute_import, division, print_function

import numpy as np

from .. import common, shape_rules
from .core import (T, _axis_arg, _constant_like, _engine, _is_engine_tensor, _is_zero_number,
                   _param_like, _to_tensor)
from .helpers import _log_softmax
from .math import abs
from .random import random_uniform


def relu(x, alpha=0., max_value=None, threshold=0.):
    """Elementwise ``T.maximum`` / ``T.minimum``; ``alpha``, ``max_value`` and ``threshold``
    may be tensors (broadcast against ``x``, as Keras' Theano backend took them)."""
    x = _to_tensor(x)
    if x.dtype.startswith(('int', 'uint')) and any(
            isinstance(v, float) and not float(v).is_integer()
            for v in (alpha, max_value, threshold) if v is not None):
        # integers with a fractional bound: computed in floatx (Keras' Theano backend's
        # T.clip upcast them), never the bound truncated to an integer
        x = T.cast(x, common.floatx())
    zero = _constant_like(x, 0.)
    thr = None if _is_zero_number(threshold) else _param_like(x, threshold)
    if thr is not None:
        kept = x * T.cast(T.gt(x, thr), x.dtype)
    else:
        kept = T.maximum(x, zero)
    if max_value is not None:
        kept = T.minimum(T.maximum(kept, zero), _param_like(x, max_value))
    if not _is_zero_number(alpha):
        leak = T.maximum((thr if thr is not None else zero) - x, zero)
        kept = kept - _param_like(x, alpha) * leak
    return kept


def elu(x, alpha=1.):
    """``T.switch`` between ``x`` and ``alpha * (exp(min(x, 0)) - 1)``; ``alpha`` may be a
    tensor (broadcast against ``x``)."""
    x = _to_tensor(x)
    neg = _param_like(x, alpha) * (T.exp(T.minimum(x, _constant_like(x, 0.)))
                                      - _constant_like(x, 1.))
    return T.switch(T.gt(x, _constant_like(x, 0.)), x, neg)


def softmax(x, axis=-1):
    """``T.special.softmax`` on PyTensor; on Theano 1.0.5 ``T.nnet.softmax`` for a matrix
    along its last axis, else ``exp`` and ``sum`` along ``axis``."""
    x = _to_tensor(x)
    return _engine.softmax(x, shape_rules.normalize_axis(axis, x.ndim))


def softplus(x):
    """The engine's ``softplus`` (stable)."""
    return _engine.softplus(_to_tensor(x))


def softsign(x):
    x = _to_tensor(x)
    return x / (_constant_like(x, 1.) + abs(x))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """From logits: the engine's log-softmax; otherwise ``output`` is renormalised
    and clipped to ``[eps, 1 - eps]``."""
    target = _to_tensor(target)
    output = _to_tensor(output)
    axis = shape_rules.normalize_axis(axis, output.ndim)
    if from_logits:
        return -T.sum(target * _log_softmax(output, axis), axis=axis)
    eps = common.epsilon()
    p = output / T.sum(output, axis=axis, keepdims=True)
    p = T.clip(p, _constant_like(p, eps), _constant_like(p, 1. - eps))
    return -T.sum(target * T.log(p), axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """A one-hot mask (``T.eq``) against the log-softmax; float ``target`` ids
    are truncated to integers, as Keras' backends cast them."""
    target = _to_tensor(target)
    output = _to_tensor(output)
    axis = shape_rules.normalize_axis(axis, output.ndim)
    if not from_logits:
        eps = common.epsilon()
        output = T.log(T.clip(output, _constant_like(output, eps),
                              _constant_like(output, 1. - eps)))
    lsm = _log_softmax(output, axis)
    if axis != output.ndim - 1:
        perm = [i for i in range(output.ndim) if i != axis] + [axis]
        lsm = lsm.dimshuffle(perm)
    if target.ndim == lsm.ndim:
        # Keras' rule: the class ids in their order (a size-1 class axis anywhere, e.g.
        # (batch, 1, h, w) against channels_first scores), one per position of the output
        target = T.reshape(target, [lsm.shape[i] for i in range(lsm.ndim - 1)],
                           ndim=lsm.ndim - 1)
    t = T.cast(target, 'int64')      # a float id truncated, as Keras' own T.cast did
    classes = T.arange(lsm.shape[-1])
    onehot = T.cast(T.eq(t.dimshuffle(list(range(t.ndim)) + ['x']), classes), lsm.dtype)
    return -T.sum(onehot * lsm, axis=-1)


def binary_crossentropy(target, output, from_logits=False):
    """Clipped to ``[eps, 1 - eps]``; from logits
    ``max(x, 0) - x t + log1p(exp(-|x|))``."""
    target = _to_tensor(target)
    output = _to_tensor(output)
    if from_logits:
        x = output
        return (T.maximum(x, _constant_like(x, 0.)) - x * target
                + T.log1p(T.exp(-abs(x))))
    eps = common.epsilon()
    if np.dtype(output.dtype).kind in 'iub':     # probabilities of an integer tensor: floatx
        output = T.cast(output, common.floatx())
    p = T.clip(output, _constant_like(output, eps), _constant_like(output, 1. - eps))
    one = _constant_like(p, 1.)
    return -(target * T.log(p) + (one - target) * T.log(one - p))


def sigmoid(x):
    """The engine's ``sigmoid`` (Theano 1.0.5: ``T.nnet.sigmoid``)."""
    return _engine.sigmoid(_to_tensor(x))


def hard_sigmoid(x):
    """``T.clip`` of ``0.2 x + 0.5`` (of an integer ``x``, in ``floatx()``)."""
    x = _to_tensor(x)
    if np.dtype(x.dtype).kind in 'iub':
        x = T.cast(x, common.floatx())
    return T.clip(x * _constant_like(x, 0.2) + _constant_like(x, 0.5),
                  _constant_like(x, 0.), _constant_like(x, 1.))


def tanh(x):
    """``T.tanh``."""
    return T.tanh(_to_tensor(x))


def dropout(x, level, noise_shape=None, seed=None):
    """A seeded engine uniform draw (see ``random_uniform``) compared with ``level``
    (a number, or a rate computed in the graph); always applied."""
    rate_tensor = _is_engine_tensor(level)
    x = _to_tensor(x)
    if rate_tensor:
        level = T.cast(level, x.dtype)
    else:
        level = float(level)
        if level == 0.:
            return x
    if noise_shape is None:
        shape_ = x.shape
        bcast = []
    else:
        noise_shape = list(noise_shape)
        if len(noise_shape) != x.ndim:   # the shared rules take any noise_shape
            raise ValueError('dropout: noise_shape must have %d entries, got %r'
                             % (x.ndim, noise_shape))
        # Keras' Dropout fills its None entries with K.shape(x)[i] (scalar tensors)
        shape_ = [x.shape[i] if d is None else d if _is_engine_tensor(d) else int(d)
                  for i, d in enumerate(noise_shape)]
        bcast = [i for i, d in enumerate(noise_shape)
                 if not _is_engine_tensor(d) and d is not None and int(d) == 1]
    u = random_uniform(shape_, 0., 1., dtype=x.dtype, seed=seed)
    keep = T.cast(T.ge(u, level if rate_tensor else _constant_like(u, level)), x.dtype)
    if bcast:
        keep = _engine.broadcastable_axes(keep, bcast)
    if rate_tensor:
        return x * keep / (_constant_like(x, 1.) - level)
    return x * keep * _constant_like(x, 1. / (1. - level))


def l2_normalize(x, axis=None):
    """The sum of squares is floored at ``1e-12``."""
    x = _to_tensor(x)
    ss = T.sum(T.sqr(x), axis=_axis_arg(axis, x.ndim), keepdims=True)
    return x / T.sqrt(T.maximum(ss, _constant_like(x, 1e-12)))


def in_top_k(predictions, targets, k):
    """Counts the classes scoring strictly higher than the target (ties count as in);
    a non-finite target score gives False."""
    predictions = _to_tensor(predictions)
    targets = T.cast(_to_tensor(targets, 'int64'), 'int64')
    rows = T.arange(predictions.shape[0])
    score = predictions[rows, targets]
    higher = T.sum(T.cast(T.gt(predictions, score.dimshuffle(0, 'x')), 'int64'), axis=1)
    finite = T.and_(T.invert(T.isnan(score)), T.invert(T.isinf(score)))
    return T.and_(T.lt(higher, int(k)), finite)
