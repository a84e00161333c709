"""Activations and losses on JAX: the engine-level functions of the names of
:mod:`keras_backend.api.activations`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import numpy as np

from .. import common
from .core import (dtype, jax, jnp, Tensor, _apply, _axis_arg, _ndim, _random, _shaped_node,
                   _to_tensor)
from .tensors import _engine_int_shape

from jax import lax  # noqa: E402  (core imported it, or said how to install it)


def relu(x, alpha=0., max_value=None, threshold=0.):
    """``jax.nn.relu`` (gradient 0 at 0, as TensorFlow's ``relu``; ``jnp.maximum`` would
    split it 0.5 / 0.5 at a tie), a ``max_value`` clip (gradient 1 up to and at the
    bound, as ``tf.clip_by_value``), a leak ``alpha * relu(threshold - x)``. ``alpha``,
    ``max_value`` and ``threshold`` may be tensors (broadcast against ``x``)."""
    x = _to_tensor(x)

    def param(v):
        return v if isinstance(v, Tensor) else float(np.asarray(v))

    def is_zero(v):
        return not isinstance(v, Tensor) and v == 0

    alpha, threshold = param(alpha), param(threshold)
    max_value = None if max_value is None else param(max_value)
    leaky, shifted = not is_zero(alpha), not is_zero(threshold)

    def op(v, a, top, thr):
        if shifted:
            thr = jnp.asarray(thr, v.dtype)
            # where, not v * (v > thr): -inf below the threshold gives 0, NaN stays NaN
            kept = jnp.where(v <= thr, jnp.zeros((), v.dtype), v)
        else:
            kept = jax.nn.relu(v)
        if top is not None:
            top = jnp.asarray(top, v.dtype)
            kept = jnp.where(kept < 0, jnp.zeros((), v.dtype), jnp.where(kept > top, top, kept))
        if leaky:
            leak = jax.nn.relu(thr - v) if shifted else jax.nn.relu(-v)
            kept = kept - jnp.asarray(a, v.dtype) * leak
        return kept
    return _apply(op, x, alpha, max_value, threshold)


def elu(x, alpha=1.):
    """``jnp.expm1`` below 0; ``alpha`` may be a tensor (broadcast against ``x``)."""
    x = _to_tensor(x)
    if not isinstance(alpha, Tensor):
        alpha = float(np.asarray(alpha))
    return _apply(lambda v, a: jnp.where(v > 0, v, jnp.asarray(a, v.dtype)
                                         * jnp.expm1(jnp.minimum(v, 0))).astype(v.dtype),
                  x, alpha)


def softmax(x, axis=-1):
    """``jax.nn.softmax``."""
    x = _to_tensor(x)
    return _apply(lambda v: jax.nn.softmax(v, axis=axis), x)


def softplus(x):
    return _apply(jax.nn.softplus, _to_tensor(x))


def softsign(x):
    return _apply(jax.nn.soft_sign, _to_tensor(x))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """From logits: ``jax.nn.log_softmax``; otherwise ``output`` is renormalised and
    clipped to ``[eps, 1 - eps]``."""
    target, output = _to_tensor(target), _to_tensor(output)
    eps = common.epsilon()

    def op(t, o):
        ax = axis % o.ndim
        if from_logits:
            return -jnp.sum(t * jax.nn.log_softmax(o, axis=ax), axis=ax)
        p = o / jnp.sum(o, axis=ax, keepdims=True)
        p = jnp.clip(p, eps, 1. - eps)
        return -jnp.sum(t * jnp.log(p), axis=ax)
    return _apply(op, target, output)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Integer class ids (float ids truncated, as Keras' backends cast them) against the
    log-softmax; Keras' flatten rule for a target of the output's rank."""
    target, output = _to_tensor(target), _to_tensor(output)
    eps = common.epsilon()

    def op(t, o):
        ax = axis % o.ndim
        if not from_logits:
            o = jnp.log(jnp.clip(o, eps, 1. - eps))
        lsm = jax.nn.log_softmax(o, axis=ax)
        if ax != o.ndim - 1:
            lsm = jnp.moveaxis(lsm, ax, -1)
        if t.ndim == lsm.ndim:
            t = jnp.reshape(t, lsm.shape[:-1])
        t = t.astype('int32')       # a float id truncated, as tf.cast did in Keras
        return -jnp.take_along_axis(lsm, t[..., None], axis=-1)[..., 0]
    if not isinstance(output, Tensor) and not isinstance(target, Tensor):
        return op(target, output)
    # the result has the output's shape less the class axis (the target may be flattened
    # to it, which the probe sizes of a target of unknown sizes cannot show)
    out_shape = list(_engine_int_shape(output))
    del out_shape[axis % len(out_shape)]
    return _shaped_node(op, (target, output), out_shape, dtype(output))


def binary_crossentropy(target, output, from_logits=False):
    """Clipped to ``[eps, 1 - eps]``; from logits ``max(x, 0) - x t + log1p(exp(-|x|))``."""
    target, output = _to_tensor(target), _to_tensor(output)
    eps = common.epsilon()

    def op(t, o):
        if from_logits:
            return jnp.maximum(o, 0) - o * t + jnp.log1p(jnp.exp(-jnp.abs(o)))
        p = jnp.clip(o, eps, 1. - eps)
        return -(t * jnp.log(p) + (1. - t) * jnp.log(1. - p))
    return _apply(op, target, output)


def sigmoid(x):
    return _apply(jax.nn.sigmoid, _to_tensor(x))


def hard_sigmoid(x):
    return _apply(lambda v: jnp.clip(v * jnp.asarray(0.2, v.dtype) + jnp.asarray(0.5, v.dtype),
                                     0, 1).astype(v.dtype), _to_tensor(x))


def tanh(x):
    return _apply(jnp.tanh, _to_tensor(x))


def dropout(x, level, noise_shape=None, seed=None):
    """A uniform draw from the op's key (see the design in ``jax_backend.core``) compared with
    ``level`` (a number or a tensor); always applied."""
    rate_tensor = isinstance(level, (Tensor, jax.Array))
    x = _to_tensor(x)
    if not rate_tensor:
        level = float(level)
        if level == 0.:
            return x
    if noise_shape is not None:
        noise_shape = list(noise_shape)
        # the shared rules take any noise_shape: its length against x's rank is checked here
        if len(noise_shape) != _ndim(x):
            raise ValueError('dropout: noise_shape must have %d entries, got %r'
                             % (_ndim(x), noise_shape))

    def draw(key, v, rate, ns):
        shp = v.shape if ns is None else tuple(
            v.shape[i] if d is None else int(np.asarray(d)) for i, d in enumerate(ns))
        u = jax.random.uniform(key, shp, dtype=v.dtype)
        rate = jnp.asarray(rate, v.dtype)
        keep = (u >= rate).astype(v.dtype)
        return v * keep / (1. - rate)
    return _random(draw, seed, x, level, noise_shape)


def l2_normalize(x, axis=None):
    """The sum of squares is floored at ``1e-12``."""
    x = _to_tensor(x)

    def op(v):
        ax = None if axis is None else _axis_arg(axis, v.ndim)
        ss = jnp.sum(jnp.square(v), axis=ax, keepdims=True)
        return v * lax.rsqrt(jnp.maximum(ss, 1e-12))
    return _apply(op, x)


def in_top_k(predictions, targets, k):
    """True where the target's score is among the ``k`` largest; ties with the k-th score
    count as in (TensorFlow's rule)."""
    predictions, targets = _to_tensor(predictions), _to_tensor(targets)

    def op(p, t, kk):
        kk = int(np.asarray(kk))
        p = p.astype('float32')
        n = p.shape[-1]
        if kk < 1:
            return jnp.zeros(p.shape[:-1], bool)
        if kk >= n:
            return jnp.isfinite(jnp.take_along_axis(p, t.astype('int32')[:, None], 1)[:, 0])
        kth = -jnp.sort(-p, axis=-1)[:, kk - 1]
        score = jnp.take_along_axis(p, t.astype('int32')[:, None], 1)[:, 0]
        return (score >= kth) & jnp.isfinite(score)
    return _apply(op, predictions, targets, k)
