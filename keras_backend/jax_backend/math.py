"""Math on JAX: the engine-level functions of the names of
:mod:`keras_backend.api.math`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import numpy as np

from .. import shape_rules
from ..common import floatx
from .core import (dtype, jax, jnp, records_keras_shape, Tensor, _apply, _apply_multi,
                   _axis_arg, _ndim, _operand, _promoting, _to_tensor)

from jax import lax  # noqa: E402  (core imported it, or said how to install it)


def _dot(a, b):
    if b.ndim <= 2 or a.ndim <= 1:
        return jnp.tensordot(a, b, axes=([a.ndim - 1], [0])) if b.ndim <= 2 \
            else jnp.tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))
    return jnp.tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))


@records_keras_shape
def dot(x, y):
    """``jnp.tensordot`` over x's last axis and y's second-to-last (its only, 1-D)."""
    return _apply(_dot, _to_tensor(x), _to_tensor(y))


@records_keras_shape
def batch_dot(x, y, axes=None):
    """``jnp.einsum`` per sample (``lax.dot_general`` with a batch axis)."""
    x, y = _to_tensor(x), _to_tensor(y)
    ax, ay = shape_rules.batch_dot_axes(_ndim(x), _ndim(y), axes)

    def op(a, b):
        out = lax.dot_general(a, b, (((ax,), (ay,)), ((0,), (0,))))
        if out.ndim == 1:
            out = out.reshape((-1, 1))
        return out
    return _apply(op, x, y)


@records_keras_shape
def transpose(x):
    return _apply(jnp.transpose, _to_tensor(x))


@records_keras_shape
def gather(reference, indices):
    """``jnp.take`` along axis 0."""
    reference, indices = _to_tensor(reference), _to_tensor(indices)

    def op(r, i):
        if not jnp.issubdtype(jnp.asarray(i).dtype, jnp.integer):
            i = jnp.asarray(i).astype('int32')
        return jnp.take(r, i, axis=0, mode='clip')
    return _apply(op, reference, indices)


def _reduce(fn, x, axis, keepdims, to_float=False):
    x = _to_tensor(x)
    ax = _axis_arg(axis, _ndim(x))

    def op(v):
        if to_float and not jnp.issubdtype(v.dtype, jnp.floating):
            v = v.astype(floatx())
        return fn(v, axis=ax, keepdims=keepdims)
    op.abstract_shapes = True
    return _apply(op, x)


@records_keras_shape
def max(x, axis=None, keepdims=False):
    return _reduce(jnp.max, x, axis, keepdims)


@records_keras_shape
def min(x, axis=None, keepdims=False):
    return _reduce(jnp.min, x, axis, keepdims)


@records_keras_shape
def sum(x, axis=None, keepdims=False):
    return _reduce(jnp.sum, x, axis, keepdims)


@records_keras_shape
def prod(x, axis=None, keepdims=False):
    return _reduce(jnp.prod, x, axis, keepdims)


def cumsum(x, axis=0):
    x = _to_tensor(x)
    return _apply(lambda v: jnp.cumsum(v, axis=_axis_arg(axis, v.ndim)), x)


def cumprod(x, axis=0):
    x = _to_tensor(x)
    return _apply(lambda v: jnp.cumprod(v, axis=_axis_arg(axis, v.ndim)), x)


@records_keras_shape
def var(x, axis=None, keepdims=False):
    return _reduce(jnp.var, x, axis, keepdims, to_float=True)


@records_keras_shape
def std(x, axis=None, keepdims=False):
    return _reduce(jnp.std, x, axis, keepdims, to_float=True)


@records_keras_shape
def mean(x, axis=None, keepdims=False):
    """``jnp.mean``; integer and bool inputs give floatx."""
    return _reduce(jnp.mean, x, axis, keepdims, to_float=True)


@records_keras_shape
def any(x, axis=None, keepdims=False):
    return _reduce(jnp.any, x, axis, keepdims)


@records_keras_shape
def all(x, axis=None, keepdims=False):
    return _reduce(jnp.all, x, axis, keepdims)


def argmax(x, axis=-1):
    x = _to_tensor(x)
    return _apply(lambda v: jnp.argmax(v, axis=_axis_arg(axis, v.ndim)), x)


def argmin(x, axis=-1):
    x = _to_tensor(x)
    return _apply(lambda v: jnp.argmin(v, axis=_axis_arg(axis, v.ndim)), x)


#: (fn, the float dtype an integer input takes or None) -> the op of ``_unary``
_UNARY_OPS = {}


def _unary(fn, to_float=False):
    """The API function of the elementwise ``fn`` (integer inputs cast to ``floatx()`` first
    when ``to_float``): one op per ``fn``, shared by its nodes (their probe shapes are
    cached, ``graph.cached_infer``). ``fn`` is a module-level function."""
    def api_fn(x):
        x = _to_tensor(x)
        key = (fn, floatx() if to_float else None)
        op = _UNARY_OPS.get(key)
        if op is None:
            if to_float:
                float_dtype = key[1]

                def op(v):
                    return fn(v if jnp.issubdtype(v.dtype, jnp.inexact)
                              else v.astype(float_dtype))
            else:
                def op(v):
                    return fn(v)
            op.shared = op.abstract_shapes = True
            _UNARY_OPS[key] = op
        return _apply(op, x)
    return api_fn


def _clipped_sqrt(v):
    return jnp.sqrt(jnp.maximum(v, jnp.zeros((), v.dtype)))


def square(x):
    return _unary(jnp.square)(x)


def abs(x):
    return _unary(jnp.abs)(x)


def sqrt(x):
    """``jnp.sqrt`` of ``max(x, 0)``, as Keras clips negative inputs."""
    return _unary(_clipped_sqrt, to_float=True)(x)


def exp(x):
    return _unary(jnp.exp, to_float=True)(x)


def log(x):
    return _unary(jnp.log, to_float=True)(x)


def logsumexp(x, axis=None, keepdims=False):
    """``jax.nn.logsumexp`` (stable: the maximum is subtracted first)."""
    return _reduce(jax.nn.logsumexp, x, axis, keepdims, to_float=True)


def round(x):
    """``jnp.round``: halves to even."""
    return _unary(jnp.round)(x)


def sign(x):
    return _unary(jnp.sign)(x)


def pow(x, a):
    """``jnp.power``; a number exponent takes x's dtype unless x is integer and the
    exponent a float."""
    x = _to_tensor(x)
    if not isinstance(a, (Tensor, jax.Array)):
        arr = np.asarray(a)
        dt = np.dtype(dtype(x))
        if dt.kind == 'f' or arr.dtype.kind != 'f':
            arr = arr.astype(dt)
        a = arr
    return _apply(jnp.power, x, a)


def clip(x, min_value, max_value):
    """``jnp.clip``; bounds may be tensors; ``max_value`` below ``min_value`` is raised
    to it."""
    x = _to_tensor(x)
    if not isinstance(min_value, (Tensor, jax.Array)) and \
            not isinstance(max_value, (Tensor, jax.Array)):
        min_value, max_value = shape_rules.clip_bounds(min_value, max_value, str(x.dtype))

    def op(v, lo, hi):
        lo = jnp.asarray(lo).astype(v.dtype) if lo is not None else None
        hi = jnp.asarray(hi).astype(v.dtype) if hi is not None else None
        if lo is not None and hi is not None:
            hi = jnp.maximum(hi, lo)
        # where, not jnp.clip: a value on a bound keeps its gradient (tf.clip_by_value)
        # a NaN bound gives NaN (lo != lo), as numpy's and TensorFlow's clip
        if lo is not None:
            v = jnp.where((v < lo) | (lo != lo), lo, v)
        if hi is not None:
            v = jnp.where((v > hi) | (hi != hi), hi, v)
        return v
    return _apply(op, x, min_value, max_value)


def _compare(fn):
    def api_fn(x, y):
        return _apply(_promoting(fn), _to_tensor(x), _operand(y))
    return api_fn


def equal(x, y):
    return _compare(jnp.equal)(x, y)


def not_equal(x, y):
    return _compare(jnp.not_equal)(x, y)


def greater(x, y):
    return _compare(jnp.greater)(x, y)


def greater_equal(x, y):
    return _compare(jnp.greater_equal)(x, y)


def less(x, y):
    return _compare(jnp.less)(x, y)


def less_equal(x, y):
    return _compare(jnp.less_equal)(x, y)


def _ties_to_x(pick, x_wins):
    """``pick(x, y)`` (``jnp.maximum``/``jnp.minimum``) whose gradient at a tie goes
    wholly to ``x``, as TensorFlow's Maximum/Minimum gradients (``pick``'s own splits it
    0.5 / 0.5); ``x_wins(x, y)`` says where ``x`` is the result."""
    @jax.custom_jvp
    def op(x, y):
        return pick(x, y)

    @op.defjvp
    def _jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        return pick(x, y), jnp.where(x_wins(x, y), tx, ty)

    return op


_tf_maximum = _ties_to_x(jnp.maximum, jnp.greater_equal)


_tf_minimum = _ties_to_x(jnp.minimum, jnp.less_equal)


def maximum(x, y):
    """``jnp.maximum``; at a tie the gradient goes to ``x`` (TensorFlow's rule)."""
    return _compare(_tf_maximum)(x, y)


def minimum(x, y):
    """``jnp.minimum``; at a tie the gradient goes to ``x`` (TensorFlow's rule)."""
    return _compare(_tf_minimum)(x, y)


def sin(x):
    return _unary(jnp.sin, to_float=True)(x)


def cos(x):
    return _unary(jnp.cos, to_float=True)(x)


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """Mean and variance over ``reduction_axes``; the output is ``(x - mean) * (gamma /
    sqrt(var + epsilon)) + beta`` with the factor computed once per kept position
    (``lax.rsqrt``), one multiply per element (as Keras 3 does on JAX)."""
    x = _to_tensor(x)
    axes = shape_rules.batch_norm_axes(reduction_axes, _ndim(x))

    def op(v, g, b):
        m = jnp.mean(v, axis=axes, keepdims=True)
        var_ = jnp.mean(jnp.square(v - m), axis=axes, keepdims=True)
        bshape = [1 if i in axes else d for i, d in enumerate(v.shape)]
        # one factor per kept position (the statistics' shape), then one multiply per element
        scale = lax.rsqrt(var_ + epsilon)
        if g is not None:
            scale = scale * jnp.reshape(g, bshape)
        out = (v - m) * scale
        if b is not None:
            out = out + jnp.reshape(b, bshape)
        kept = [d for i, d in enumerate(v.shape) if i not in axes]
        return out, jnp.reshape(m, kept), jnp.reshape(var_, kept)
    gamma = None if gamma is None else _to_tensor(gamma)
    beta = None if beta is None else _to_tensor(beta)
    return _apply_multi(op, 3, x, gamma, beta)


def _lay_along(p, ndim, axis):
    p = jnp.asarray(p)
    if p.ndim == 1 and ndim > 1:
        shape = [1] * ndim
        shape[axis] = p.shape[0]
        return p.reshape(shape)
    return p


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """``(x - mean) * (gamma / sqrt(var + epsilon)) + beta`` (``lax.rsqrt``: one multiply per
    element), 1-D parameters laid along ``axis``."""
    x = _to_tensor(x)
    axis = shape_rules.normalize_axis(axis, _ndim(x))

    def op(v, m, s, b, g):
        # the factor over the parameters' shape, then one multiply per element
        scale = lax.rsqrt(_lay_along(s, v.ndim, axis) + epsilon)
        if g is not None:
            scale = scale * _lay_along(g, v.ndim, axis)
        out = (v - _lay_along(m, v.ndim, axis)) * scale
        if b is not None:
            out = out + _lay_along(b, v.ndim, axis)
        return out
    return _apply(op, x, _to_tensor(mean), _to_tensor(var),
                  None if beta is None else _to_tensor(beta),
                  None if gamma is None else _to_tensor(gamma))
