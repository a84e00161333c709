"""Activations and losses on PyTorch: the engine-level functions of the names of
:mod:`keras_backend.api.activations`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import numpy as np

from .. import common
from .core import (dtype, torch, Tensor, _apply, _axis_arg, _host, _ndim, _random,
                   _shaped_node, _to_tensor)
from .math import _pair
from .tensors import _engine_int_shape

F = torch.nn.functional


def _num(v, like):
    """A parameter (a number or a tensor) as a tensor of ``like``'s dtype."""
    if isinstance(v, torch.Tensor):
        return v.to(like.dtype)
    return torch.as_tensor(v, dtype=like.dtype, device=like.device)


def relu(x, alpha=0., max_value=None, threshold=0.):
    """``torch.relu`` (gradient 0 at 0, as TensorFlow's ``relu``), a ``max_value`` clip
    (gradient 1 up to and at the bound, as ``tf.clip_by_value``), a leak ``alpha *
    relu(threshold - x)``. ``alpha``, ``max_value`` and ``threshold`` may be tensors."""
    x = _to_tensor(x)

    def param(v):
        return v if isinstance(v, Tensor) else float(_host(v))

    def is_zero(v):
        return not isinstance(v, Tensor) and v == 0

    alpha, threshold = param(alpha), param(threshold)
    max_value = None if max_value is None else param(max_value)
    leaky, shifted = not is_zero(alpha), not is_zero(threshold)

    def op(v, a, top, thr):
        zero = torch.zeros((), dtype=v.dtype, device=v.device)
        if shifted:
            thr = _num(thr, v)
            # where, not v * (v > thr): -inf below the threshold gives 0, NaN stays NaN
            kept = torch.where(v <= thr, zero, v)
        else:
            kept = torch.relu(v)
        if top is not None:
            top = _num(top, v)
            kept = torch.where(kept < 0, zero, torch.where(kept > top, top, kept))
        if leaky:
            leak = torch.relu(thr - v) if shifted else torch.relu(-v)
            kept = kept - _num(a, v) * leak
        return kept
    return _apply(op, x, alpha, max_value, threshold)


def elu(x, alpha=1.):
    """``torch.expm1`` below 0; ``alpha`` may be a tensor (broadcast against ``x``)."""
    x = _to_tensor(x)
    if not isinstance(alpha, Tensor):
        alpha = float(_host(alpha))
    return _apply(lambda v, a: torch.where(v > 0, v, _num(a, v) *
                                           torch.expm1(torch.clamp(v, max=0))), x, alpha)


def softmax(x, axis=-1):
    """``torch.softmax``."""
    x = _to_tensor(x)
    return _apply(lambda v: torch.softmax(v, dim=axis), x)


def softplus(x):
    """``log1p(exp(-|x|)) + max(x, 0)`` (stable for large ``|x|``)."""
    return _apply(lambda v: torch.log1p(torch.exp(-torch.abs(v))) + torch.relu(v),
                  _to_tensor(x))


def softsign(x):
    return _apply(F.softsign, _to_tensor(x))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """From logits: ``torch.log_softmax``; otherwise ``output`` is renormalised and
    clipped to ``[eps, 1 - eps]``."""
    target, output = _to_tensor(target), _to_tensor(output)
    eps = common.epsilon()

    def op(t, o):
        t, o = _pair(t, o)
        ax = axis % o.ndim
        if from_logits:
            return -torch.sum(t * torch.log_softmax(o, dim=ax), dim=ax)
        p = o / torch.sum(o, dim=ax, keepdim=True)
        p = torch.clamp(p, eps, 1. - eps)
        return -torch.sum(t * torch.log(p), dim=ax)
    return _apply(op, target, output)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Integer class ids (float ids truncated, as Keras' backends cast them) against the
    log-softmax; Keras' flatten rule for a target of the output's rank."""
    target, output = _to_tensor(target), _to_tensor(output)
    eps = common.epsilon()

    def op(t, o):
        ax = axis % o.ndim
        if not from_logits:
            o = torch.log(torch.clamp(o, eps, 1. - eps))
        lsm = torch.log_softmax(o, dim=ax)
        if ax != o.ndim - 1:
            lsm = torch.movedim(lsm, ax, -1)
        if t.ndim == lsm.ndim:
            t = torch.reshape(t, lsm.shape[:-1])
        t = t.long()                # a float id truncated, as tf.cast did in Keras
        if t.device != lsm.device:
            t = t.to(lsm.device)
        return -torch.gather(lsm, -1, t[..., None])[..., 0]
    if not isinstance(output, Tensor) and not isinstance(target, Tensor):
        return op(target, output)
    out_shape = list(_engine_int_shape(output))
    del out_shape[axis % len(out_shape)]
    return _shaped_node(op, (target, output), out_shape, dtype(output))


def binary_crossentropy(target, output, from_logits=False):
    """Clipped to ``[eps, 1 - eps]``; from logits ``max(x, 0) - x t + log1p(exp(-|x|))``."""
    target, output = _to_tensor(target), _to_tensor(output)
    eps = common.epsilon()

    def op(t, o):
        t, o = _pair(t, o)
        if from_logits:
            return torch.relu(o) - o * t + torch.log1p(torch.exp(-torch.abs(o)))
        p = torch.clamp(o, eps, 1. - eps)
        return -(t * torch.log(p) + (1. - t) * torch.log(1. - p))
    return _apply(op, target, output)


def sigmoid(x):
    return _apply(torch.sigmoid, _to_tensor(x))


def hard_sigmoid(x):
    return _apply(lambda v: torch.clamp(v * 0.2 + 0.5, 0., 1.), _to_tensor(x))


def tanh(x):
    return _apply(torch.tanh, _to_tensor(x))


def dropout(x, level, noise_shape=None, seed=None):
    """A uniform draw from the op's ``torch.Generator`` (see the design in
    ``torch_backend.core``) compared with ``level`` (a number or a tensor); always
    applied."""
    rate_tensor = isinstance(level, (Tensor, torch.Tensor))
    x = _to_tensor(x)
    if not rate_tensor:
        level = float(level)
        if level == 0.:
            return x
    if noise_shape is not None:
        noise_shape = list(noise_shape)
        if len(noise_shape) != _ndim(x):
            raise ValueError('dropout: noise_shape must have %d entries, got %r'
                             % (_ndim(x), noise_shape))

    def draw(g, v, rate, ns):
        shp = tuple(v.shape) if ns is None else tuple(
            v.shape[i] if d is None else int(_host(d)) for i, d in enumerate(ns))
        u = torch.rand(shp, generator=g, dtype=v.dtype, device=v.device)
        rate = _num(rate, v)
        keep = (u >= rate).to(v.dtype)
        return v * keep / (1. - rate)
    return _random(draw, seed, x, level, noise_shape)


def l2_normalize(x, axis=None):
    """The sum of squares is floored at ``1e-12``."""
    x = _to_tensor(x)

    def op(v):
        ax = tuple(range(v.ndim)) if axis is None else _axis_arg(axis, v.ndim)
        ss = torch.sum(torch.square(v), dim=ax, keepdim=True)
        return v * torch.rsqrt(torch.clamp(ss, min=1e-12))
    return _apply(op, x)


def in_top_k(predictions, targets, k):
    """True where the target's score is among the ``k`` largest; ties with the k-th score
    count as in (TensorFlow's rule)."""
    predictions, targets = _to_tensor(predictions), _to_tensor(targets)

    def op(p, t, kk):
        kk = int(_host(kk))
        p = p.to(torch.float32)
        n = p.shape[-1]
        t = t.long()
        if t.device != p.device:
            t = t.to(p.device)
        if kk < 1:
            return torch.zeros(p.shape[:-1], dtype=torch.bool, device=p.device)
        score = torch.gather(p, 1, t[:, None])[:, 0]
        if kk >= n:
            return torch.isfinite(score)
        kth = torch.sort(p, dim=-1, descending=True)[0][:, kk - 1]
        return (score >= kth) & torch.isfinite(score)
    return _apply(op, predictions, targets, k)
