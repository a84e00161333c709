"""Math on CNTK 2.7: the engine-level functions of the names of
:mod:`keras_backend.api.math`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import builtins

import numpy as np

from .. import shape_rules
from .core import (C, INDEX_INPUTS, dtype, keep_nan, whole_indices, _add_axis, _coerce_pair,
                   _constant_like, _drop_axes, _drop_axis, _is_engine_tensor, _keras_meta, _nd,
                   _numpy_op, _op, _per_sample, _reshape, _shape_arg, _sqrt_clamp,
                   _static_shape, _SWIG, _to_tensor, _transpose_node, _unbatch, _var)


def dot(x, y):
    """``C.times``; an N-D ``y`` has its contracted axis moved first (``C.transpose``)."""
    x, y = _coerce_pair(x, y)
    nx, ny = _nd(x), _nd(y)
    if nx == 0 or ny == 0:
        return x * y
    if ny == 1:
        r = C.times(x, _reshape(y, _var(y).shape + (1,)))
        return _drop_axis(r, nx - 1)
    if ny == 2:
        return C.times(x, y)
    perm = [ny - 2] + list(range(ny - 2)) + [ny - 1]
    return C.times(x, _transpose_node(y, perm), output_rank=ny - 1)


def batch_dot(x, y, axes=None):
    """Each sample is a ``C.times`` on CNTK's batch axis (``C.to_batch`` and ``C.unpack_batch``).
    """
    x, y = _coerce_pair(x, y)
    nx, ny = _nd(x), _nd(y)
    ax, ay = shape_rules.batch_dot_axes(nx, ny, axes)
    xs, ys = _static_shape(x), _static_shape(y)
    out_shape = shape_rules.batch_dot_output_shape(xs, ys, ax, ay)
    xr = [a for a in range(1, nx) if a != ax]
    yr = [a for a in range(1, ny) if a != ay]
    xt = _transpose_node(x, [0] + xr + [ax]) if [0] + xr + [ax] != list(range(nx)) else x
    yt = _transpose_node(y, [0, ay] + yr) if [0, ay] + yr != list(range(ny)) else y
    xb, yb = _per_sample(xt), _per_sample(yt)
    if not xr:
        xb = _reshape(xb, (1,) + _var(xb).shape)
    if not yr:
        yb = _reshape(yb, _var(yb).shape + (1,))
    r = C.times(xb, yb, output_rank=builtins.max(len(yr), 1))
    r = _unbatch(r, x)
    # the unit axes added for a side without other axes are dropped by
    # position (CNTK's reshape takes at most one free size)
    if _nd(r) > len(out_shape) and not xr:
        r = _drop_axis(r, 1)
    if _nd(r) > len(out_shape) and not yr:
        r = _drop_axis(r, _nd(r) - 1)
    if _nd(r) == len(out_shape) and builtins.sum(d is None for d in out_shape[1:]) > 1:
        return r
    return _reshape(r, _shape_arg(out_shape[1:]), begin_axis=1)


def transpose(x):
    """``C.transpose``."""
    x = _to_tensor(x)
    n = _nd(x)
    if n < 2:
        return x
    return _transpose_node(x, list(range(n))[::-1])


def gather(reference, indices):
    """``C.gather``; the indices are held as floats: the values of constant and variable
    indices are checked to be whole numbers here, and those a ``K.function`` feeds to a
    placeholder taken as the indices when it is called (not in the graph: a check node
    would cost every Embedding step). Indices computed in the graph are not checked
    (``C.gather`` truncates them, as under Keras 2.3.1's CNTK backend)."""
    reference = _to_tensor(reference)
    if getattr(indices, 'is_constant', False) or getattr(indices, 'is_parameter', False):
        whole_indices(np.asarray(indices.value))
    elif _is_engine_tensor(indices) and _var(indices).is_input:
        INDEX_INPUTS.add(_var(indices).uid)
    indices = _to_tensor(indices, dtype=dtype(reference))
    n = _nd(indices)
    if _nd(reference) == 1:
        # CNTK's Gather backprop on a 1-D reference aborts the process
        # ("ScatterValues: Indices map out of bounds"): gather rows of (n, 1)
        return _keras_meta(_drop_axis(C.gather(_add_axis(reference, 1), indices), n))
    y = C.gather(reference, indices)
    # An identity reshape of the gathered rows: without it, Gather's backprop
    # rejects the gradient of an elementwise op that follows ("incorrect
    # Value() matrix shape ... during backprop") when the indices have a free
    # dimension.
    rows = [-1 if d is None else d for d in _static_shape(reference)[1:]]
    if rows.count(-1) <= 1:
        y = _reshape(y, tuple(rows), begin_axis=n)
    return _keras_meta(y)


def _reduce(op, x, axis, keepdims):
    x = _to_tensor(x)
    n = _nd(x)
    if n == 0:
        return x
    axes = shape_rules.normalize_axes(axis, n)
    if not axes:
        # an empty list of axes reduces nothing (numpy's axis=()); Keras 2.0-2.2's weighted
        # losses pass one when the sample weights have the loss's rank
        return x
    r = op(x, axis=axes if len(axes) > 1 else axes[0])
    if not keepdims:
        r = _drop_axes(r, axes)
    return r


def max(x, axis=None, keepdims=False):
    """``C.reduce_max``; NaN where the values reduced hold one (CNTK's own skips it)."""
    return _nan_reduced(C.reduce_max, x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    """``C.reduce_min``; NaN where the values reduced hold one (CNTK's own skips it)."""
    return _nan_reduced(C.reduce_min, x, axis, keepdims)


def _nan_reduced(op, x, axis, keepdims):
    """``op`` reduced as ``_reduce`` does, NaN wherever a NaN was among the values reduced."""
    x = _to_tensor(x)
    out = _reduce(op, x, axis, keepdims)
    nan = _reduce(C.reduce_max, C.not_equal(x, x), axis, keepdims)
    return C.element_select(nan, _constant_like(x, np.nan), out)


def sum(x, axis=None, keepdims=False):
    """``C.reduce_sum``."""
    return _reduce(C.reduce_sum, x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    """``C.reduce_prod``."""
    return _reduce(C.reduce_prod, x, axis, keepdims)


def _scan(x, axis, product):
    x = _to_tensor(x)
    n = _nd(x)
    a = shape_rules.normalize_axis(axis, n)
    length = _static_shape(x)[a]
    if length is None:
        # free length: a numpy graph node (gradient: reversed cumulative sum)
        if product:
            return _numpy_op([x], lambda v: [np.cumprod(v, axis=a)], [_static_shape(x)],
                             dtype=np.dtype(_var(x).dtype),
                             grad_fn=lambda vals, _, g: _cumprod_grad(vals[0], g, a),
                             name='cumprod')[0]
        return _numpy_op([x], lambda v: [np.cumsum(v, axis=a)], [_static_shape(x)],
                         dtype=np.dtype(_var(x).dtype),
                         grad_fn=lambda vals, _, g: np.flip(np.cumsum(np.flip(g, a), a), a),
                         name='cumsum')[0]
    if not product:
        # cumsum as a product with an upper-triangular matrix (C.times)
        perm = [i for i in range(n) if i != a] + [a]
        xt = _transpose_node(x, perm) if perm != list(range(n)) else x
        tri = C.constant(np.triu(np.ones((length, length))).astype(_var(x).dtype))
        r = C.times(xt, tri)
        inv = [int(i) for i in np.argsort(perm)]
        return _transpose_node(r, inv) if perm != list(range(n)) else r
    parts = []
    acc = None
    for i in range(length):
        s = C.slice(x, a, i, i + 1)
        acc = s if acc is None else acc * s
        parts.append(acc)
    return C.splice(*parts, axis=a) if len(parts) > 1 else parts[0]


def _cumprod_grad(x, g, a):
    """Gradient of cumprod along ``a`` (exact also with zeros in ``x``)."""
    x = np.moveaxis(x, a, 0)
    g = np.moveaxis(g, a, 0)
    n = x.shape[0]
    out = np.zeros_like(x)
    for j in range(n):
        for i in range(j, n):
            others = np.prod(np.delete(x[:i + 1], j, axis=0), axis=0)
            out[j] += g[i] * others
    return np.moveaxis(out, 0, a)


def cumsum(x, axis=0):
    """A product with an upper-triangular constant (``C.times``); a free length along ``axis`` runs
    in a numpy graph node (its gradient a reversed cumulative sum)."""
    return _scan(x, axis, False)


def cumprod(x, axis=0):
    """Running products of slices (``C.slice``), spliced; a free length along ``axis`` runs in a
    numpy graph node (its gradient exact also with zeros in ``x``)."""
    return _scan(x, axis, True)


def var(x, axis=None, keepdims=False):
    """``C.reduce_mean`` of the squared deviations (population variance)."""
    x = _to_tensor(x)
    m = mean(x, axis, keepdims=True)
    return mean(C.square(x - m), axis, keepdims)


def std(x, axis=None, keepdims=False):
    """``C.sqrt`` of ``var`` (NaN where the variance is NaN, see ``sqrt``)."""
    v = var(x, axis, keepdims)
    return keep_nan(v, C.sqrt(v))


def mean(x, axis=None, keepdims=False):
    """``C.reduce_mean``."""
    return _reduce(C.reduce_mean, x, axis, keepdims)


def any(x, axis=None, keepdims=False):
    """1.0/0.0 in ``floatx()`` (CNTK has no bool): the largest of ``C.not_equal(x, 0)``
    (a NaN counts as true, as in numpy)."""
    x = _to_tensor(x)
    return C.greater(max(C.not_equal(x, _constant_like(x, 0)), axis, keepdims),
                     _constant_like(x, 0))


def all(x, axis=None, keepdims=False):
    """1.0/0.0 in ``floatx()`` (CNTK has no bool): the smallest of ``C.not_equal(x, 0)``
    (a NaN counts as true, as in numpy)."""
    x = _to_tensor(x)
    return C.greater(min(C.not_equal(x, _constant_like(x, 0)), axis, keepdims),
                     _constant_like(x, 0))


def argmax(x, axis=-1):
    """``C.argmax``; the indices are integer values held in ``floatx()``. A NaN counts as
    the largest value (the first NaN is the answer), as in numpy: CNTK's own gave -1."""
    return _nan_first(C.argmax, x, axis)


def argmin(x, axis=-1):
    """``C.argmin``; the indices are integer values held in ``floatx()``. A NaN counts as
    the smallest value (the first NaN is the answer), as in numpy: CNTK's own gave -1."""
    return _nan_first(C.argmin, x, axis)


def _nan_first(arg_op, x, axis):
    x = _to_tensor(x)
    a = shape_rules.normalize_axis(axis, _nd(x))
    nan = C.not_equal(x, x)
    clean = C.element_select(nan, _constant_like(x, 0), x)   # CNTK's argmax of a NaN: -1
    out = C.element_select(C.reduce_max(nan, axis=a), C.argmax(nan, axis=a),
                           arg_op(clean, axis=a))
    return _drop_axis(out, a)


def square(x):
    """``C.square``."""
    return _op(_SWIG.square, _to_tensor(x))


def abs(x):
    """``C.abs``."""
    return _op(_SWIG.abs, _to_tensor(x))


def sqrt(x):
    """``C.sqrt``; negatives are clipped to 0 first (as Keras does) by ``C.relu`` (one
    primitive, where ``element_max`` is a block of three: ResNet50's Adam graph has 215
    square roots, and its first update took 0.4-0.7 s longer), a NaN stays NaN (CNTK's own
    ``sqrt`` gives 0 for it; ``core.keep_nan``). CNTK's ``sqrt`` clamps at 0 by itself: the
    ``relu`` is there for the gradient (0 below 0), and a learner's update graph, which is
    only evaluated, leaves it out (``core._sqrt_clamp``)."""
    x = _to_tensor(x)
    return keep_nan(x, _op(_SWIG.sqrt, _sqrt_clamp(x)))


def exp(x):
    """``C.exp``."""
    return _op(_SWIG.exp, _to_tensor(x))


def log(x):
    """``C.log``; -inf at 0 and NaN below it, as in numpy (CNTK's own gives -85.1, the log
    of its smallest float, for both)."""
    x = _to_tensor(x)
    zero = _constant_like(x, 0)
    out = C.element_select(C.equal(x, zero), _constant_like(x, -np.inf), C.log(x))
    return C.element_select(C.less(x, zero), _constant_like(x, np.nan), out)


def logsumexp(x, axis=None, keepdims=False):
    """``C.reduce_log_sum_exp`` (numerically stable)."""
    return _reduce(C.reduce_log_sum_exp, x, axis, keepdims)


def round(x):
    """Half to even (as numpy), built from ``C.floor``."""
    x = _to_tensor(x)
    r = C.floor(x + _constant_like(x, 0.5))
    tie = C.equal(r - x, _constant_like(x, 0.5))
    odd = C.not_equal(r - _constant_like(x, 2) * C.floor(r * _constant_like(x, 0.5)),
                      _constant_like(x, 0))
    return r - tie * odd


def sign(x):
    """``C.greater(x, 0) - C.less(x, 0)``; NaN stays NaN (``core.keep_nan``)."""
    x = _to_tensor(x)
    return keep_nan(x, C.greater(x, _constant_like(x, 0)) - C.less(x, _constant_like(x, 0)))


def pow(x, a):
    """``C.pow``."""
    x, a = _coerce_pair(x, a)
    return C.pow(x, a)


def clip(x, min_value, max_value):
    """``C.clip``; a ``max_value`` below ``min_value`` means ``min_value`` (tensor bounds too, with
    ``C.element_max``); None is unbounded."""
    x = _to_tensor(x)
    if shape_rules.nan_bound(min_value, max_value):
        return x * _constant_like(x, np.nan)
    min_value, max_value = shape_rules.clip_bounds(min_value, max_value)
    lo, hi = _coerce_pair(x, min_value)[1], _coerce_pair(x, max_value)[1]
    if _is_engine_tensor(min_value) or _is_engine_tensor(max_value):
        hi = C.element_max(hi, lo)
    return C.clip(x, lo, hi)


def equal(x, y):
    """``C.equal``; 1.0/0.0 in ``floatx()`` (CNTK has no bool)."""
    return C.equal(*_coerce_pair(x, y))


def not_equal(x, y):
    """``C.not_equal``; 1.0/0.0 in ``floatx()`` (CNTK has no bool)."""
    return C.not_equal(*_coerce_pair(x, y))


def greater(x, y):
    """``C.greater``; 1.0/0.0 in ``floatx()`` (CNTK has no bool)."""
    return C.greater(*_coerce_pair(x, y))


def greater_equal(x, y):
    """``C.greater_equal``; 1.0/0.0 in ``floatx()`` (CNTK has no bool)."""
    return C.greater_equal(*_coerce_pair(x, y))


def less(x, y):
    """``C.less``; 1.0/0.0 in ``floatx()`` (CNTK has no bool)."""
    return C.less(*_coerce_pair(x, y))


def less_equal(x, y):
    """``C.less_equal``; 1.0/0.0 in ``floatx()`` (CNTK has no bool)."""
    return C.less_equal(*_coerce_pair(x, y))


def maximum(x, y):
    """``C.element_max``, in the wider dtype of the operands."""
    return C.element_max(*_coerce_pair(x, y))


def minimum(x, y):
    """``C.element_min``, in the wider dtype of the operands."""
    return C.element_min(*_coerce_pair(x, y))


def sin(x):
    """``C.sin``."""
    return C.sin(_to_tensor(x))


def cos(x):
    """``C.cos``."""
    return C.cos(_to_tensor(x))


def _broadcast_param(p, x_ndim, axis):
    """Lay a 1-D statistic ``p`` along ``axis`` of a rank-``x_ndim`` tensor (along the last
    axis it broadcasts as it is, as in numpy: no reshape node)."""
    p = _to_tensor(p)
    if _nd(p) == 1 and x_ndim > 1 and axis != x_ndim - 1:
        shape = [1] * x_ndim
        shape[axis] = _static_shape(p)[0]
        return _reshape(p, tuple(shape))
    return p


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """Mean and (population) variance with ``C.reduce_mean``."""
    x = _to_tensor(x)
    n = _nd(x)
    axes = shape_rules.normalize_axes(reduction_axes, n)
    m = mean(x, axes, keepdims=True)
    v = mean(C.square(x - m), axes, keepdims=True)
    y = (x - m) / C.sqrt(v + _constant_like(x, epsilon))
    kept = [i for i in range(n) if i not in axes]
    def lay(p):
        p = _to_tensor(p)
        if _nd(p) == 1 and len(kept) == 1:
            return _broadcast_param(p, n, kept[0])
        if _nd(p) == len(kept) and len(kept) < n:
            return _reshape(p, tuple(1 if i in axes else _static_shape(x)[i] for i in range(n)))
        return p
    if gamma is not None:
        y = y * lay(gamma)
    if beta is not None:
        y = y + lay(beta)
    return y, _drop_axes(m, axes), _drop_axes(v, axes)


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """CNTK elementwise ops; 1-D ``mean``/``var``/``beta``/``gamma`` are reshaped along ``axis``.
    """
    x = _to_tensor(x)
    n = _nd(x)
    a = shape_rules.normalize_axis(axis, n)
    m = _broadcast_param(mean, n, a)
    v = _broadcast_param(var, n, a)
    y = (x - m) / C.sqrt(v + _constant_like(x, epsilon))
    if gamma is not None:
        y = y * _broadcast_param(gamma, n, a)
    if beta is not None:
        y = y + _broadcast_param(beta, n, a)
    return y
