"""Math on PyTorch: the engine-level functions of the names of
:mod:`keras_backend.api.math`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import numpy as np

from .. import shape_rules
from ..common import floatx
from .core import (dtype, torch, records_keras_shape, Tensor, _apply, _apply_multi,
                   _as_operand, _axis_arg, _host, _ndim, _operand, _scalar_like, _to_tensor,
                   _torch_dtype)


def _pair(a, b):
    """Two operands as tensors of one dtype: a Python number takes the tensor's dtype (a
    float beside an integer tensor: floatx), two tensors their promoted dtype."""
    a, b = _as_operand(a, b), _as_operand(b, a)
    if not isinstance(a, torch.Tensor):
        a = _scalar_like(a, b) if isinstance(b, torch.Tensor) else torch.as_tensor(a)
    if not isinstance(b, torch.Tensor):
        b = _scalar_like(b, a)
    if a.dtype != b.dtype:
        dt = torch.promote_types(a.dtype, b.dtype)
        a, b = a.to(dt), b.to(dt)
    if a.device != b.device:
        if a.device.type == 'meta' or b.device.type == 'meta':
            a, b = a.to('meta'), b.to('meta')
    return a, b


def _dot(a, b):
    if not (type(a) is torch.Tensor and type(b) is torch.Tensor and a.dtype == b.dtype and
            a.device == b.device):
        a, b = _pair(a, b)
    if b.ndim <= 2 and a.ndim >= 1:
        # x's last axis with y's first: matmul's own rule (one mm over x's leading axes)
        return torch.matmul(a, b)
    if b.ndim <= 2 or a.ndim <= 1:
        return torch.tensordot(a, b, dims=([a.ndim - 1], [0])) if b.ndim <= 2 \
            else torch.tensordot(a, b, dims=([a.ndim - 1], [b.ndim - 2]))
    return torch.tensordot(a, b, dims=([a.ndim - 1], [b.ndim - 2]))


# a loop body's ``K.dot(x_t, kernel)`` runs on every time step at once (control_flow.rnn)
_dot.time_batched = 'dot'


@records_keras_shape
def dot(x, y):
    """``torch.tensordot`` over x's last axis and y's second-to-last (its only, 1-D)."""
    return _apply(_dot, _to_tensor(x), _to_tensor(y))


_LETTERS = 'abcdefghijklmnopqrstuvwxyz'


@records_keras_shape
def batch_dot(x, y, axes=None):
    """``torch.einsum`` per sample (axis 0 a batch axis)."""
    x, y = _to_tensor(x), _to_tensor(y)
    ax, ay = shape_rules.batch_dot_axes(_ndim(x), _ndim(y), axes)

    def op(a, b):
        a, b = _pair(a, b)
        xs = ['z'] + [_LETTERS[i] for i in range(a.ndim - 1)]
        ys = ['z'] + [_LETTERS[12 + i] for i in range(b.ndim - 1)]
        ys[ay] = xs[ax]
        out = [c for i, c in enumerate(xs) if i != ax] + \
            [c for i, c in enumerate(ys) if i not in (0, ay)]
        res = torch.einsum('%s,%s->%s' % (''.join(xs), ''.join(ys), ''.join(out)), a, b)
        if res.ndim == 1:
            res = res.reshape((-1, 1))
        return res
    return _apply(op, x, y)


@records_keras_shape
def transpose(x):
    return _apply(lambda v: v.permute(tuple(reversed(range(v.ndim)))), _to_tensor(x))


@records_keras_shape
def gather(reference, indices):
    """Indexing along axis 0 (indices clipped into range)."""
    reference, indices = _to_tensor(reference), _to_tensor(indices)

    def op(r, i):
        if not isinstance(i, torch.Tensor):
            i = torch.as_tensor(np.asarray(i), device=r.device)
        i = i.long()
        if i.device.type == 'meta' or r.device.type == 'meta':
            i, r = i.to('meta'), r.to('meta')
        else:
            i = i.clamp(0, max(r.shape[0] - 1, 0))
        # index_select, not r[i]: a 0-d index would be read on the host (a probe has none)
        return torch.index_select(r, 0, i.reshape(-1)).reshape(tuple(i.shape) +
                                                               tuple(r.shape[1:]))
    return _apply(op, reference, indices)


def _dims(ax, ndim):
    if ax is None:
        return tuple(range(ndim))
    return ax if isinstance(ax, tuple) else (ax,)


def _reduce(fn, x, axis, keepdims, to_float=False):
    x = _to_tensor(x)
    ax = _axis_arg(axis, _ndim(x))

    def op(v):
        if to_float and not (v.is_floating_point() or v.is_complex()):
            v = v.to(_torch_dtype(floatx()))
        return fn(v, _dims(ax, v.ndim), keepdims)
    return _apply(op, x)


def _amax(v, dims, keep):
    if v.dtype == torch.bool:
        return _any(v, dims, keep)
    return torch.amax(v, dim=dims, keepdim=keep) if dims else v


def _amin(v, dims, keep):
    if v.dtype == torch.bool:
        return _all(v, dims, keep)
    return torch.amin(v, dim=dims, keepdim=keep) if dims else v


def _sum(v, dims, keep):
    return torch.sum(v, dim=dims, keepdim=keep) if dims else v.clone()


def _prod(v, dims, keep):
    for d in sorted(dims, reverse=True):
        v = torch.prod(v, dim=d, keepdim=keep)
    return v


def _var(v, dims, keep):
    m = torch.mean(v, dim=dims, keepdim=True) if dims else v
    out = torch.mean(torch.square(v - m), dim=dims, keepdim=keep) if dims else v * 0
    return out


def _any(v, dims, keep):
    v = v.to(torch.bool)
    for d in sorted(dims, reverse=True):
        v = torch.any(v, dim=d, keepdim=keep)
    return v


def _all(v, dims, keep):
    v = v.to(torch.bool)
    for d in sorted(dims, reverse=True):
        v = torch.all(v, dim=d, keepdim=keep)
    return v


@records_keras_shape
def max(x, axis=None, keepdims=False):
    return _reduce(_amax, x, axis, keepdims)


@records_keras_shape
def min(x, axis=None, keepdims=False):
    return _reduce(_amin, x, axis, keepdims)


@records_keras_shape
def sum(x, axis=None, keepdims=False):
    return _reduce(_sum, x, axis, keepdims)


@records_keras_shape
def prod(x, axis=None, keepdims=False):
    return _reduce(_prod, x, axis, keepdims)


def cumsum(x, axis=0):
    x = _to_tensor(x)
    return _apply(lambda v: torch.cumsum(v, dim=_axis_arg(axis, v.ndim)), x)


def cumprod(x, axis=0):
    x = _to_tensor(x)
    return _apply(lambda v: torch.cumprod(v, dim=_axis_arg(axis, v.ndim)), x)


@records_keras_shape
def var(x, axis=None, keepdims=False):
    return _reduce(_var, x, axis, keepdims, to_float=True)


@records_keras_shape
def std(x, axis=None, keepdims=False):
    return _reduce(lambda v, d, k: torch.sqrt(_var(v, d, k)), x, axis, keepdims, to_float=True)


@records_keras_shape
def mean(x, axis=None, keepdims=False):
    """``torch.mean``; integer and bool inputs give floatx."""
    return _reduce(lambda v, d, k: torch.mean(v, dim=d, keepdim=k) if d else v.clone(),
                   x, axis, keepdims, to_float=True)


@records_keras_shape
def any(x, axis=None, keepdims=False):
    return _reduce(_any, x, axis, keepdims)


@records_keras_shape
def all(x, axis=None, keepdims=False):
    return _reduce(_all, x, axis, keepdims)


def argmax(x, axis=-1):
    x = _to_tensor(x)
    return _apply(lambda v: torch.argmax(v.to(torch.uint8) if v.dtype == torch.bool else v,
                                         dim=_axis_arg(axis, v.ndim)), x)


def argmin(x, axis=-1):
    x = _to_tensor(x)
    return _apply(lambda v: torch.argmin(v.to(torch.uint8) if v.dtype == torch.bool else v,
                                         dim=_axis_arg(axis, v.ndim)), x)


def _unary(fn, to_float=False, fresh=False):
    """The API function of the elementwise ``fn``; ``fresh``: ``fn`` always returns a
    new tensor (never its input), which a K.function may then reuse (``_reuse_buffer``),
    and its op is made once, shared by every node (its probe shapes cached)."""
    key = (fn, to_float, fresh)
    op = _UNARY_OPS.get(key)
    if op is None:
        if to_float:
            def op(v):
                return fn(v if v.is_floating_point() or v.is_complex()
                          else v.to(_torch_dtype(floatx())))
        elif fresh:
            def op(v):
                return fn(v)
        else:
            op = fn
        if fresh:
            # fresh ops are module-level functions: one op each, kept
            op.fresh = op.shared = op.elementwise = True
            _UNARY_OPS[key] = op

    def api_fn(x):
        return _apply(op, _to_tensor(x))
    return api_fn


#: (fn, to_float, fresh) -> the op of :func:`_unary` for a fresh ``fn``
_UNARY_OPS = {}


def _square(v):
    return v * v


def _clipped_sqrt(v):
    return torch.sqrt(torch.clamp(v, min=0))


def square(x):
    return _unary(_square, fresh=True)(x)


def abs(x):
    return _unary(torch.abs, fresh=True)(x)


def sqrt(x):
    """``torch.sqrt`` of ``max(x, 0)``, as Keras clips negative inputs."""
    return _unary(_clipped_sqrt, to_float=True, fresh=True)(x)


def exp(x):
    return _unary(torch.exp, to_float=True, fresh=True)(x)


def log(x):
    return _unary(torch.log, to_float=True, fresh=True)(x)


def logsumexp(x, axis=None, keepdims=False):
    """``torch.logsumexp`` (stable: the maximum is subtracted first)."""
    return _reduce(lambda v, d, k: torch.logsumexp(v, dim=d, keepdim=k) if d else v.clone(),
                   x, axis, keepdims, to_float=True)


def round(x):
    """``torch.round``: halves to even."""
    return _unary(lambda v: torch.round(v) if v.is_floating_point() else v)(x)


def sign(x):
    """``torch.sign``; NaN stays NaN (``torch.sign`` alone gives 0)."""
    return _unary(lambda v: torch.where(v != v, v, torch.sign(v))
                  if v.is_floating_point() else torch.sign(v))(x)


def pow(x, a):
    """``torch.pow``; a number exponent takes x's dtype unless x is integer and the
    exponent a float."""
    x = _to_tensor(x)
    if not isinstance(a, (Tensor, torch.Tensor)):
        arr = np.asarray(a)
        dt = np.dtype(dtype(x)) if dtype(x) != 'bfloat16' else np.dtype('float32')
        if dt.kind == 'f' or arr.dtype.kind != 'f':
            arr = arr.astype(dt)
        a = arr.item() if arr.ndim == 0 else torch.as_tensor(arr)

    def op(v, e):
        if isinstance(e, torch.Tensor):
            v, e = _pair(v, e)
        elif isinstance(e, float) and not v.is_floating_point():
            v = v.to(_torch_dtype(floatx()))
        return torch.pow(v, e)
    return _apply(op, x, a)


def clip(x, min_value, max_value):
    """``torch.where`` on each bound (a value on a bound keeps its gradient, as
    ``tf.clip_by_value``); bounds may be tensors; ``max_value`` below ``min_value`` is raised
    to it."""
    x = _to_tensor(x)
    if not isinstance(min_value, (Tensor, torch.Tensor)) and \
            not isinstance(max_value, (Tensor, torch.Tensor)):
        min_value, max_value = shape_rules.clip_bounds(min_value, max_value, str(dtype(x)))

    def bound(b, v):
        if b is None:
            return None
        if isinstance(b, torch.Tensor):
            return b.to(v.dtype)
        return torch.as_tensor(np.asarray(b), device=v.device).to(v.dtype)

    def op(v, lo, hi):
        lo, hi = bound(lo, v), bound(hi, v)
        if lo is not None and hi is not None:
            hi = torch.maximum(hi, lo)
        # a NaN bound gives NaN (lo != lo), as numpy's and TensorFlow's clip
        if lo is not None:
            v = torch.where((v < lo) | (lo != lo), lo, v)
        if hi is not None:
            v = torch.where((v > hi) | (hi != hi), hi, v)
        return v
    return _apply(op, x, min_value, max_value)


def _compare(fn):
    def op(a, b):
        return fn(*_pair(a, b))

    def api_fn(x, y):
        return _apply(op, _to_tensor(x), _operand(y))
    return api_fn


def equal(x, y):
    return _compare(torch.eq)(x, y)


def not_equal(x, y):
    return _compare(torch.ne)(x, y)


def greater(x, y):
    return _compare(torch.gt)(x, y)


def greater_equal(x, y):
    return _compare(torch.ge)(x, y)


def less(x, y):
    return _compare(torch.lt)(x, y)


def less_equal(x, y):
    return _compare(torch.le)(x, y)


def _tf_maximum(x, y):
    # where, not torch.maximum: at a tie the gradient goes wholly to x (TensorFlow's rule;
    # torch.maximum splits it 0.5 / 0.5); a NaN in either gives NaN
    return torch.where((x >= y) | (x != x), x, y)


def _tf_minimum(x, y):
    return torch.where((x <= y) | (x != x), x, y)


def maximum(x, y):
    """``torch.where(x >= y, x, y)``: at a tie the gradient goes to ``x`` (TensorFlow's
    rule)."""
    return _compare(_tf_maximum)(x, y)


def minimum(x, y):
    """``torch.where(x <= y, x, y)``: at a tie the gradient goes to ``x`` (TensorFlow's
    rule)."""
    return _compare(_tf_minimum)(x, y)


def sin(x):
    return _unary(torch.sin, to_float=True, fresh=True)(x)


def cos(x):
    return _unary(torch.cos, to_float=True, fresh=True)(x)


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """Mean and variance over ``reduction_axes``; the output is ``(x - mean) * (gamma /
    sqrt(var + epsilon)) + beta`` with the factor computed once per kept position
    (``torch.rsqrt``), one multiply per element."""
    x = _to_tensor(x)
    axes = shape_rules.batch_norm_axes(reduction_axes, _ndim(x))

    def op(v, g, b):
        fused = _fused_batch_norm(v, g, b, axes, epsilon)
        if fused is not None:
            return fused
        m = torch.mean(v, dim=tuple(axes), keepdim=True)
        var_ = torch.mean(torch.square(v - m), dim=tuple(axes), keepdim=True)
        bshape = [1 if i in axes else d for i, d in enumerate(v.shape)]
        scale = torch.rsqrt(var_ + epsilon)
        if g is not None:
            scale = scale * torch.reshape(g, bshape)
        out = (v - m) * scale
        if b is not None:
            out = out + torch.reshape(b, bshape)
        kept = [d for i, d in enumerate(v.shape) if i not in axes]
        return out, torch.reshape(m, kept), torch.reshape(var_, kept)
    gamma = None if gamma is None else _to_tensor(gamma)
    beta = None if beta is None else _to_tensor(beta)
    return _apply_multi(op, 3, x, gamma, beta)


def _fused_batch_norm(v, g, b, axes, epsilon):
    """Training-mode batch normalization over every axis but one (Keras' layers: the
    channels), by PyTorch's own kernel (``torch.nn.functional.batch_norm``, its fused
    gradient; the channels moved to axis 1 as a view, which it reads as channels_last
    memory), the batch's mean and (biased) variance by ``torch.var_mean``; None where
    that does not apply (several kept axes, a non-float dtype, parameters not of one value
    per channel, one value per channel, an epsilon of 0)."""
    kept = [i for i in range(v.ndim) if i not in axes]
    if len(kept) != 1 or v.ndim < 2 or v.dtype not in (torch.float32, torch.float64) or \
            not (isinstance(epsilon, (int, float)) and epsilon > 0):
        return None     # (the kernel refuses an epsilon of 0)
    c = kept[0]
    n = v.shape[c]
    if v.numel() <= n:
        return None     # one value per channel: the kernel refuses it, its variance is 0
    params = []
    for p in (g, b):
        if p is None:
            params.append(None)
        elif not isinstance(p, torch.Tensor) or p.dtype != v.dtype or p.numel() != n:
            return None
        else:
            params.append(p.reshape(n))
    var_, m = torch.var_mean(v, dim=tuple(axes), unbiased=False)
    out = torch.nn.functional.batch_norm(torch.movedim(v, c, 1), None, None, params[0],
                                         params[1], training=True, eps=epsilon)
    return torch.movedim(out, 1, c), m, var_


def _lay_along(p, ndim, axis):
    if not isinstance(p, torch.Tensor):
        p = torch.as_tensor(np.asarray(p))
    if p.ndim == 1 and ndim > 1:
        shape = [1] * ndim
        shape[axis] = p.shape[0]
        return p.reshape(shape)
    return p


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """``(x - mean) * (gamma / sqrt(var + epsilon)) + beta`` (``torch.rsqrt``: one multiply
    per element), 1-D parameters laid along ``axis``."""
    x = _to_tensor(x)
    axis = shape_rules.normalize_axis(axis, _ndim(x))

    def op(v, m, s, b, g):
        scale = torch.rsqrt(_lay_along(s, v.ndim, axis) + epsilon)
        if g is not None:
            scale = scale * _lay_along(g, v.ndim, axis)
        out = (v - _lay_along(m, v.ndim, axis)) * scale
        if b is not None:
            out = out + _lay_along(b, v.ndim, axis)
        return out
    return _apply(op, x, _to_tensor(mean), _to_tensor(var),
                  None if beta is None else _to_tensor(beta),
                  None if gamma is None else _to_tensor(gamma))
