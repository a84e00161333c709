"""Random on CNTK 2.7: the engine-level functions of the names of
:mod:`keras_backend.api.random`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import builtins

import numpy as np

from .core import (C, int_shape, _is_engine_tensor, _nd, _np_dtype, _numpy_op, _op_seed, _reshape,
                   _SHAPE_SOURCES, _static_shape, _to_tensor, _var)
from .tensors import eval


def _random_shape(shape, name):
    """Normalise a random op's ``shape``.

    Returns ``(static, like)``: ``static`` a tuple of ints when the shape is
    known while building the graph (numbers, or a tensor without inputs),
    else None and ``like`` a tensor whose runtime shape is the requested one:
    the tensor itself when the shape came from ``K.shape(x)``, else a zeros
    tensor shaped at run time by the shape's value (a numpy graph node).
    """
    if isinstance(shape, (tuple, list)) and builtins.any(_is_engine_tensor(d) for d in shape):
        parts = [_reshape(_to_tensor(d), (1,)) if _is_engine_tensor(d) else
                 C.constant(np.asarray([d], dtype=_np_dtype())) for d in shape]
        shape = C.splice(*parts, axis=0) if len(parts) > 1 else parts[0]
    if _is_engine_tensor(shape):
        v = _var(shape)
        if v.uid in _SHAPE_SOURCES:
            return None, _SHAPE_SOURCES[v.uid]
        if v.is_constant or v.is_parameter or not C.combine([v]).arguments:
            shape = eval(shape)
        else:
            if _nd(shape) != 1 or _static_shape(shape)[0] is None:
                raise ValueError('%s: a shape tensor must be 1-D of static length, got '
                                 'shape %r' % (name, int_shape(shape)))
            rank = _static_shape(shape)[0]
            like = _numpy_op([shape], lambda s: [np.zeros(tuple(int(d) for d in s.reshape(-1)))],
                             [(None,) * rank], name='zeros_of_shape')[0]
            return None, like
    shape = tuple(np.asarray(shape).reshape(-1)) if not isinstance(shape, (tuple, list)) \
        else tuple(shape)
    if builtins.any(d is None for d in shape):
        raise ValueError('%s: shape %r holds None; give ints or a shape tensor such as '
                         'K.shape(x)' % (name, shape))
    return tuple(int(d) for d in shape), None


def _like_dtype(like, dtype):
    target = _np_dtype(dtype)
    return like if _var(like).dtype == target else C.cast(like, target)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """``C.random.normal``, or ``C.random.normal_like`` for a shape tensor such as ``K.shape(x)``
    (read at run time); new values at each evaluation, the same seed giving the same sequence of
    draws."""
    static, like = _random_shape(shape, 'random_normal')
    if _is_engine_tensor(mean) or _is_engine_tensor(stddev):
        # parameters computed in the graph: a standard draw, shifted and scaled
        return _to_tensor(mean) + _to_tensor(stddev) * random_normal(shape, 0., 1., dtype, seed)
    if static is None:
        return C.random.normal_like(_like_dtype(like, dtype), mean=mean, scale=stddev,
                                    seed=_op_seed(seed))
    return C.random.normal(static, dtype=_np_dtype(dtype), mean=mean, scale=stddev,
                           seed=_op_seed(seed))


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """``C.random.uniform``, or ``C.random.uniform_like`` for a shape tensor (read at run time);
    new values at each evaluation."""
    static, like = _random_shape(shape, 'random_uniform')
    if _is_engine_tensor(minval) or _is_engine_tensor(maxval):
        # bounds computed in the graph: a draw in [0, 1), scaled and shifted
        lo = _to_tensor(minval)
        return lo + (_to_tensor(maxval) - lo) * random_uniform(shape, 0., 1., dtype, seed)
    if static is None:
        return C.random.uniform_like(_like_dtype(like, dtype), low=minval, high=maxval,
                                     seed=_op_seed(seed))
    return C.random.uniform(static, dtype=_np_dtype(dtype), low=minval, high=maxval,
                            seed=_op_seed(seed))


def random_binomial(shape, p=0.0, dtype=None, seed=None):
    """``C.random.bernoulli``, or ``C.random.bernoulli_like`` for a shape tensor; integer and bool
    dtypes are held in ``floatx()``. A rate tensor ``p``: uniform draws compared with it."""
    static, like = _random_shape(shape, 'random_binomial')
    if _is_engine_tensor(p):
        # CNTK's bernoulli takes a Python mean only: compare uniform draws in
        # [0, 1) with the rate tensor instead (1 where u < p)
        if static is None:
            u = C.random.uniform_like(_like_dtype(like, dtype), seed=_op_seed(seed))
        else:
            u = C.random.uniform(static, dtype=_np_dtype(dtype), seed=_op_seed(seed))
        rate = _to_tensor(p)
        if _var(rate).dtype != _var(u).dtype:
            rate = C.cast(rate, _var(u).dtype)
        return C.less(u, rate)
    if static is None:
        return C.random.bernoulli_like(_like_dtype(like, dtype), mean=p, seed=_op_seed(seed))
    return C.random.bernoulli(static, dtype=_np_dtype(dtype), mean=p, seed=_op_seed(seed))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """CNTK has no truncated normal: a numpy graph node (``UserFunction``) draws standard
    normals from a ``Generator`` (PCG64) seeded with ``seed``, in float32 (float64 for that
    dtype), and draws again only where a value fell outside two standard deviations; new
    values at each evaluation."""
    static, like = _random_shape(shape, 'truncated_normal')
    rng = np.random.Generator(np.random.PCG64(_op_seed(seed)))
    draw = np.float64 if _np_dtype(dtype) == np.float64 else np.float32

    def run(shape):
        out = rng.standard_normal(size=shape, dtype=draw)
        flat = out.reshape(-1)
        outside = np.flatnonzero(np.abs(flat) > 2)
        while outside.size:
            again = rng.standard_normal(size=outside.size, dtype=draw)
            flat[outside] = again
            outside = outside[np.abs(again) > 2]
        if stddev != 1:
            out *= stddev
        if mean != 0:
            out += mean
        return [out]
    if static is None:
        return _numpy_op([like], lambda v: run(v.shape), [_static_shape(like)],
                         dtype=_np_dtype(dtype), name='truncated_normal')[0]
    return _numpy_op([], lambda _: run(static), [static], dtype=_np_dtype(dtype),
                     name='truncated_normal')[0]
