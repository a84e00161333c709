"""Math on Theano 1.0.5 / PyTensor: the engine-level functions of the names of
:mod:`keras_backend.api.math`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from __future__ import absolute_import, division, print_function

import builtins

import numpy as np

from .. import common, shape_rules
from .core import (records_keras_shape, T, _axis_arg, _broadcast_param, _constant_like,
                   _engine, _is_engine_tensor, _known_shape, _to_tensor, _with_shape)
from .tensors import is_sparse


@records_keras_shape
def dot(x, y):
    """``T.dot`` up to 2-D operands, else ``tensordot``; a sparse ``x`` uses the
    engine's ``structured_dot``."""
    if is_sparse(x):
        return _engine.sparse.structured_dot(x, y)
    x = _to_tensor(x)
    y = _to_tensor(y)
    if x.ndim <= 2 and y.ndim <= 2:
        return T.dot(x, y)
    if y.ndim == 1:
        return T.tensordot(x, y, axes=[[x.ndim - 1], [0]])
    return T.tensordot(x, y, axes=[[x.ndim - 1], [y.ndim - 2]])


@records_keras_shape
def batch_dot(x, y, axes=None):
    """Reshaped to 3-D around a batched product: PyTensor ``matmul``; Theano 1.0.5
    ``batched_dot``, or a broadcast product and sum without ``blas.ldflags``."""
    x = _to_tensor(x)
    y = _to_tensor(y)
    ax, ay = shape_rules.batch_dot_axes(x.ndim, y.ndim, axes)
    xs, ys = _known_shape(x), _known_shape(y)
    x_rest = [i for i in range(1, x.ndim) if i != ax]
    y_rest = [i for i in range(1, y.ndim) if i != ay]
    xt = x.dimshuffle([0] + x_rest + [ax])
    yt = y.dimshuffle([0, ay] + y_rest)
    b = x.shape[0]
    n = x.shape[ax]
    p = T.prod([x.shape[i] for i in x_rest]) if x_rest else 1
    q = T.prod([y.shape[i] for i in y_rest]) if y_rest else 1
    x3 = T.reshape(xt, T.stack([b, p, n]), ndim=3)
    y3 = T.reshape(yt, T.stack([b, n, q]), ndim=3)
    out = _engine.batched_dot(x3, y3)
    out_dims = [b] + [x.shape[i] for i in x_rest] + [y.shape[i] for i in y_rest]
    if len(out_dims) == 1:
        out_dims.append(1)
    out = T.reshape(out, T.stack(out_dims), ndim=len(out_dims))
    return _with_shape(out, shape_rules.batch_dot_output_shape(xs, ys, ax, ay))


@records_keras_shape
def transpose(x):
    """``T.transpose``."""
    x = _to_tensor(x)
    return T.transpose(x)


@records_keras_shape
def gather(reference, indices):
    """Advanced indexing ``reference[indices]`` (integer indices)."""
    reference = _to_tensor(reference)
    indices = _to_tensor(indices, 'int64')
    if indices.dtype not in ('int8', 'int16', 'int32', 'int64', 'uint8', 'uint16',
                             'uint32', 'uint64'):
        indices = T.cast(indices, 'int64')
    return reference[indices]


@records_keras_shape
def max(x, axis=None, keepdims=False):
    """``T.max``."""
    x = _to_tensor(x)
    return T.max(x, axis=_axis_arg(axis, x.ndim), keepdims=keepdims)


@records_keras_shape
def min(x, axis=None, keepdims=False):
    """``T.min``."""
    x = _to_tensor(x)
    return T.min(x, axis=_axis_arg(axis, x.ndim), keepdims=keepdims)


@records_keras_shape
def sum(x, axis=None, keepdims=False):
    """``T.sum``."""
    x = _to_tensor(x)
    return T.sum(x, axis=_axis_arg(axis, x.ndim), keepdims=keepdims)


@records_keras_shape
def prod(x, axis=None, keepdims=False):
    """``T.prod``."""
    x = _to_tensor(x)
    return T.prod(x, axis=_axis_arg(axis, x.ndim), keepdims=keepdims)


def cumsum(x, axis=0):
    """``T.cumsum``."""
    x = _to_tensor(x)
    return T.cumsum(x, axis=_axis_arg(axis, x.ndim))


def cumprod(x, axis=0):
    """``T.cumprod``."""
    x = _to_tensor(x)
    return T.cumprod(x, axis=_axis_arg(axis, x.ndim))


@records_keras_shape
def var(x, axis=None, keepdims=False):
    """``T.mean`` of squared deviations; integer inputs are cast to ``floatx()``."""
    x = _to_tensor(x)
    if x.dtype not in ('float16', 'float32', 'float64'):
        x = T.cast(x, common.floatx())
    ax = _axis_arg(axis, x.ndim)
    if x.ndim == 0 or (isinstance(ax, list) and not ax):
        # nothing reduced: 0, and NaN for a NaN (the engine's rewrite of x - x into 0
        # would hide it)
        return T.switch(T.isnan(x), x, T.zeros_like(x))
    m = T.mean(x, axis=ax, keepdims=True)
    return T.mean(T.sqr(x - m), axis=ax, keepdims=keepdims)


@records_keras_shape
def std(x, axis=None, keepdims=False):
    """``T.sqrt`` of ``var``."""
    return T.sqrt(var(x, axis, keepdims))


@records_keras_shape
def mean(x, axis=None, keepdims=False):
    """``T.mean``; integer inputs are cast to ``floatx()``."""
    x = _to_tensor(x)
    if x.dtype not in ('float16', 'float32', 'float64'):
        x = T.cast(x, common.floatx())
    return T.mean(x, axis=_axis_arg(axis, x.ndim), keepdims=keepdims)


@records_keras_shape
def any(x, axis=None, keepdims=False):
    """``T.any`` of ``x != 0``, as bool."""
    x = _to_tensor(x)
    return T.cast(T.any(T.neq(x, 0), axis=_axis_arg(axis, x.ndim), keepdims=keepdims), 'bool')


@records_keras_shape
def all(x, axis=None, keepdims=False):
    """``T.all`` of ``x != 0``, as bool."""
    x = _to_tensor(x)
    return T.cast(T.all(T.neq(x, 0), axis=_axis_arg(axis, x.ndim), keepdims=keepdims), 'bool')


def argmax(x, axis=-1):
    """``T.argmax``, as int64."""
    x = _to_tensor(x)
    return T.cast(T.argmax(x, axis=_axis_arg(axis, x.ndim)), 'int64')


def argmin(x, axis=-1):
    """``T.argmin``, as int64."""
    x = _to_tensor(x)
    return T.cast(T.argmin(x, axis=_axis_arg(axis, x.ndim)), 'int64')


def _elementwise_unary(name, engine_op, note):
    """API function ``name``: ``engine_op`` of ``x`` as an engine tensor."""
    def op(x):
        return engine_op(_to_tensor(x))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = note
    return op


square = _elementwise_unary('square', T.sqr, '``T.sqr``.')


def abs(x):
    """The engine's ``abs`` (Theano 1.0.5: ``abs_``)."""
    return _engine.absolute(_to_tensor(x))


def sqrt(x):
    """``T.sqrt`` of ``max(x, 0)``: negatives give 0."""
    x = _to_tensor(x)
    return T.sqrt(T.maximum(x, T.zeros_like(x)))


exp = _elementwise_unary('exp', T.exp, '``T.exp``.')


log = _elementwise_unary('log', T.log, '``T.log``.')


def logsumexp(x, axis=None, keepdims=False):
    """The maximum (held out of the gradient, infinite ones as 0) is subtracted first."""
    x = _to_tensor(x)
    ax = _axis_arg(axis, x.ndim)
    m = _engine.disconnected_grad(T.max(x, axis=ax, keepdims=True))
    m = T.switch(T.isinf(m), T.zeros_like(m), m)
    out = T.log(T.sum(T.exp(x - m), axis=ax, keepdims=True)) + m
    if not keepdims:
        out = T.sum(out, axis=ax) if ax is not None else T.sum(out)
    return out


def round(x):
    """``T.round`` with ``mode='half_to_even'``; integers are their own rounding."""
    x = _to_tensor(x)
    if np.dtype(x.dtype).kind in 'iub':
        return x
    return T.round(x, mode='half_to_even')


def sign(x):
    """The engine's ``sign`` (Theano 1.0.5: ``sgn``)."""
    return _engine.sign(_to_tensor(x))


def pow(x, a):
    """``T.pow``; a number exponent takes ``x``'s dtype unless ``x`` is integer and
    the exponent a float."""
    x = _to_tensor(x)
    if not _is_engine_tensor(a):
        arr = np.asarray(a)
        if x.dtype.startswith('float') or arr.dtype.kind != 'f':
            arr = arr.astype(x.dtype)
        a = T.constant(arr)
    return T.pow(x, a)


def clip(x, min_value, max_value):
    """``T.clip``; a None bound is infinite (an integer dtype's extreme). An integer ``x``
    with a bound that is not a whole number is clipped in ``floatx()``, as numpy does
    (the bound was truncated)."""
    x = _to_tensor(x)
    if shape_rules.nan_bound(min_value, max_value):
        return x * _constant_like(x, np.nan)
    if np.dtype(x.dtype).kind in 'iu' and builtins.any(
            isinstance(v, float) and not float(v).is_integer() for v in (min_value, max_value)):
        x = T.cast(x, common.floatx())
    min_value, max_value = shape_rules.clip_bounds(min_value, max_value, x.dtype)
    if not _is_engine_tensor(min_value) and not _is_engine_tensor(max_value):
        lo = T.constant(np.asarray(min_value, dtype=x.dtype))
        hi = T.constant(np.asarray(max_value, dtype=x.dtype))
    else:
        lo = T.cast(_to_tensor(min_value), x.dtype)
        hi = T.maximum(T.cast(_to_tensor(max_value), x.dtype), lo)
    return T.clip(x, lo, hi)


def _coerce_pair(x, y):
    """The operands of a comparison as engine tensors; a float number takes the
    dtype of the tensor it meets."""
    x = _to_tensor(x) if _is_engine_tensor(x) else x
    y = _to_tensor(y) if _is_engine_tensor(y) else y
    if not _is_engine_tensor(x) and not _is_engine_tensor(y):   # two numbers
        x = _to_tensor(x)
    if not _is_engine_tensor(x):
        x = _to_tensor(x, y.dtype if np.asarray(x).dtype.kind == 'f' else None)
    if not _is_engine_tensor(y):
        y = _to_tensor(y, x.dtype if np.asarray(y).dtype.kind == 'f' else None)
    return x, y


def _elementwise_pair(name, engine_op, note):
    """API function ``name``: both operands through ``_coerce_pair``, then ``engine_op``."""
    def op(x, y):
        x, y = _coerce_pair(x, y)
        return engine_op(x, y)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = note
    return records_keras_shape(op)


equal = _elementwise_pair('equal', T.eq, '``T.eq``.')


not_equal = _elementwise_pair('not_equal', T.neq, '``T.neq``.')


greater = _elementwise_pair('greater', T.gt, '``T.gt``.')


greater_equal = _elementwise_pair('greater_equal', T.ge, '``T.ge``.')


less = _elementwise_pair('less', T.lt, '``T.lt``.')


less_equal = _elementwise_pair('less_equal', T.le, '``T.le``.')


maximum = _elementwise_pair('maximum', T.maximum, '``T.maximum``.')


minimum = _elementwise_pair('minimum', T.minimum, '``T.minimum``.')


sin = _elementwise_unary('sin', T.sin, '``T.sin``.')


cos = _elementwise_unary('cos', T.cos, '``T.cos``.')


def _reshape_to_kept(p, x, axes):
    if p.ndim == x.ndim:
        return p
    pattern = []
    j = 0
    for i in range(x.ndim):
        if i in axes:
            pattern.append('x')
        else:
            pattern.append(j)
            j += 1
    if j != p.ndim:   # the shared rules do not relate gamma/beta to the kept axes
        raise ValueError('normalize_batch_in_training: gamma/beta of rank %d do not match '
                         'the %d kept axes' % (p.ndim, j))
    return p.dimshuffle(pattern)


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """``reduction_axes`` also takes Theano's names, as Keras' Theano backend
    does: ``'per-activation'`` (= ``[0]``) and ``'spatial'`` (= ``[0, 2, 3, ...]``)."""
    x = _to_tensor(x)
    axes = shape_rules.batch_norm_axes(reduction_axes, x.ndim)
    m = T.mean(x, axis=axes, keepdims=True)
    v = T.mean(T.sqr(x - m), axis=axes, keepdims=True)
    kept = [i for i in range(x.ndim) if i not in axes]
    # one factor per kept position, then one multiply per element (Theano's own
    # batch_normalization_train expands to the same form on the CPU)
    scale = _constant_like(v, 1.) / T.sqrt(v + _constant_like(v, epsilon))
    if gamma is not None:
        g = _to_tensor(gamma)
        scale = scale * (_broadcast_param(g, x.ndim, kept[0]) if (g.ndim == 1 and len(kept) == 1)
                         else _reshape_to_kept(g, x, axes))
    normed = (x - m) * scale
    if beta is not None:
        b = _to_tensor(beta)
        normed = normed + (_broadcast_param(b, x.ndim, kept[0]) if (b.ndim == 1 and len(kept) == 1)
                           else _reshape_to_kept(b, x, axes))
    return normed, T.mean(x, axis=axes), T.mean(T.sqr(x - m), axis=axes)


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    x = _to_tensor(x)
    axis = shape_rules.normalize_axis(axis, x.ndim)
    m = _broadcast_param(mean, x.ndim, axis)
    v = _broadcast_param(var, x.ndim, axis)
    out = (x - m) / T.sqrt(v + epsilon)
    if gamma is not None:
        out = out * _broadcast_param(gamma, x.ndim, axis)
    if beta is not None:
        out = out + _broadcast_param(beta, x.ndim, axis)
    return out
