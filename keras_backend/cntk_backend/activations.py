"""Activations and losses on CNTK 2.7: the engine-level functions of the names of
:mod:`keras_backend.api.activations`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import numpy as np

from .. import shape_rules
from ..common import epsilon
from .core import (C, dtype, keep_nan, _coerce_pair, _constant_like, _drop_axis, _is_engine_tensor,
                   _log_softmax, _nd, _one_hot, _op, _op_seed, _param_like, _static_shape, _SWIG,
                   _to_tensor, _transpose_node)
from .math import sum


def relu(x, alpha=0., max_value=None, threshold=0.):
    """Built from ``C.relu``, ``C.greater`` and ``C.clip``; gradients flow through every part.
    ``alpha``, ``max_value`` and ``threshold`` may be tensors (broadcast against ``x``)."""
    x = _to_tensor(x)

    def is_zero(v):
        return not _is_engine_tensor(v) and np.all(np.asarray(v) == 0)

    thr = None if is_zero(threshold) else _param_like(x, threshold)
    if thr is not None:
        kept = x * C.greater(x, thr)
    else:
        kept = _op(_SWIG.re_lu, x)
    if max_value is not None:
        kept = C.clip(kept, _constant_like(x, 0.), _param_like(x, max_value))
    if not is_zero(alpha):
        kept = kept - _param_like(x, alpha) * C.relu((thr if thr is not None else _param_like(x, 0.)) - x)
    return kept


def elu(x, alpha=1.):
    """``C.element_select`` between ``x`` and ``alpha * (exp(x) - 1)``; ``alpha`` may be a
    tensor (broadcast against ``x``); NaN stays NaN (``core.keep_nan``)."""
    x = _to_tensor(x)
    neg = ((C.exp(C.element_min(x, _constant_like(x, 0))) - _constant_like(x, 1))
           * _param_like(x, alpha))
    return keep_nan(x, C.element_select(C.greater(x, _constant_like(x, 0)), x, neg))


def softmax(x, axis=-1):
    """``C.softmax``."""
    x = _to_tensor(x)
    return C.softmax(x, axis=shape_rules.normalize_axis(axis, _nd(x)))


def softplus(x):
    """``C.softplus`` (stable)."""
    return C.softplus(_to_tensor(x))


def softsign(x):
    """``x / (1 + C.abs(x))``."""
    x = _to_tensor(x)
    return x / (_constant_like(x, 1) + C.abs(x))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Probabilities are normalised along ``axis`` and clipped to ``[epsilon, 1 - epsilon]``;
    logits go through a log-softmax (``C.reduce_log_sum_exp``). See docs/semantics.md."""
    target, output = _coerce_pair(target, output)
    a = shape_rules.normalize_axis(axis, _nd(output))
    if from_logits:
        return -_drop_axis(C.reduce_sum(target * _log_softmax(output, a), axis=a), a)
    p = output / C.reduce_sum(output, axis=a)
    eps = epsilon()
    p = C.clip(p, _constant_like(p, eps), _constant_like(p, 1. - eps))
    return -_drop_axis(C.reduce_sum(target * C.log(p), axis=a), a)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Targets are one-hot encoded with ``C.equal`` (class ids held as floats, a fractional id
    truncated as Keras' backends cast it: ``C.floor`` of a non-negative id); probabilities are
    clipped to ``[epsilon, 1 - epsilon]`` before the log-softmax."""
    output = _to_tensor(output)
    n = _nd(output)
    a = shape_rules.normalize_axis(axis, n)
    if a != n - 1:
        perm = [i for i in range(n) if i != a] + [a]
        output = _transpose_node(output, perm)
    if not from_logits:
        eps = epsilon()
        output = C.log(C.clip(output, _constant_like(output, eps),
                              _constant_like(output, 1. - eps)))
    classes = _static_shape(output)[-1]
    target = C.floor(_to_tensor(target, dtype=dtype(output)))
    if _nd(target) == n:
        # targets laid out as the output, with a unit class axis at ``axis``
        target = _drop_axis(target, a)
    oh = _one_hot(target, classes)
    ls = _log_softmax(output, n - 1)
    return -_drop_axis(C.reduce_sum(C.element_select(oh, ls, _constant_like(ls, 0)), axis=n - 1),
                       n - 1)


def binary_crossentropy(target, output, from_logits=False):
    """Probabilities are clipped to ``[epsilon, 1 - epsilon]``; logits use ``max(x, 0) - x * z +
    log(1 + exp(-|x|))``. See docs/semantics.md."""
    target, output = _coerce_pair(target, output)
    one = _constant_like(output, 1)
    if from_logits:
        return (C.element_max(output, _constant_like(output, 0)) - output * target
                + C.log(one + C.exp(-C.abs(output))))
    eps = epsilon()
    p = C.clip(output, _constant_like(output, eps), _constant_like(output, 1. - eps))
    return -(target * C.log(p) + (one - target) * C.log(one - p))


def sigmoid(x):
    """``C.sigmoid``."""
    return _op(_SWIG.sigmoid, _to_tensor(x))


def hard_sigmoid(x):
    """``C.clip(0.2 * x + 0.5, 0, 1)``."""
    x = _to_tensor(x)
    return C.clip(x * _constant_like(x, 0.2) + _constant_like(x, 0.5), _constant_like(x, 0),
                  _constant_like(x, 1))


def tanh(x):
    """``C.tanh``."""
    return _op(_SWIG.tanh, _to_tensor(x))


def dropout(x, level, noise_shape=None, seed=None):
    """A ``C.random.bernoulli_like`` keep mask, kept values scaled by ``1 / (1 - level)``; a
    rate computed in the graph (a tensor ``level``) keeps where a uniform draw is >= it."""
    rate_tensor = _is_engine_tensor(level)
    x = _to_tensor(x)
    if not rate_tensor and level == 0:
        return x
    like = x
    if noise_shape is not None:
        ns = tuple(noise_shape)
        if len(ns) != _nd(x):
            raise ValueError('dropout: noise_shape %r must have rank %d' % (ns, _nd(x)))
        axes = [i for i, d in enumerate(ns) if d == 1 and _static_shape(x)[i] != 1]
        if axes:
            like = C.reduce_mean(x, axis=axes if len(axes) > 1 else axes[0])
    if rate_tensor:
        level = _to_tensor(level)
        keep = C.greater_equal(C.random.uniform_like(like, seed=_op_seed(seed)), level)
        return x * keep / (_constant_like(x, 1.) - level)
    keep = C.random.bernoulli_like(like, mean=1. - level, seed=_op_seed(seed))
    return x * keep * _constant_like(x, 1. / (1. - level))


def l2_normalize(x, axis=None):
    """``x / C.sqrt(C.element_max(sum(x ** 2), 1e-12))``; NaN where the sum is NaN
    (``core.keep_nan``)."""
    x = _to_tensor(x)
    s = sum(C.square(x), axis, keepdims=True)
    return x / keep_nan(s, C.sqrt(C.element_max(s, _constant_like(x, 1e-12))))


def in_top_k(predictions, targets, k):
    """Counts the classes scoring strictly above the target; 1.0/0.0 in ``floatx()`` (CNTK has no
    bool), 0 for a non-finite target score."""
    predictions = _to_tensor(predictions)
    classes = _static_shape(predictions)[-1]
    targets = _to_tensor(targets, dtype=dtype(predictions))
    if _nd(targets) == 2:
        targets = _drop_axis(targets, 1)
    oh = _one_hot(targets, classes)
    t = C.reduce_sum(C.element_select(oh, predictions, _constant_like(predictions, 0)), axis=1)
    above = C.reduce_sum(C.greater(predictions, t), axis=1)
    finite = C.equal(t - t, _constant_like(t, 0))
    ok = C.less(above, _constant_like(above, k)) * finite
    return _drop_axis(ok, 1)
