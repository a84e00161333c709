"""Random on Theano 1.0.5 / PyTensor: the engine-level functions of the names of
:mod:`keras_backend.api.random`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from __future__ import absolute_import, division, print_function

import numpy as np

from .. import shape_rules
from .core import T, _engine, _is_engine_tensor, _normalize_dtype, _op_seed


def _random_shape(shape):
    """A random op's ``shape`` (an int, a tuple of ints / scalar tensors, or a
    shape tensor) as the engine's draws take it."""
    shape = shape_rules.sizes(shape, _is_engine_tensor)
    return shape if _is_engine_tensor(shape) else tuple(shape)


def _draw_param(value, dtype):
    """A draw's parameter: a number as a numpy scalar of ``dtype``, a tensor (a rate
    computed in the graph) cast to it."""
    return T.cast(value, dtype) if _is_engine_tensor(value) else np.asarray(value, dtype)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """A seeded engine draw: PyTensor a shared numpy ``Generator`` that ``function``
    advances, Theano 1.0.5 a ``RandomStreams``."""
    dtype = _normalize_dtype(dtype, 'random_normal')
    return _engine.random_draw('normal', _op_seed(seed), _random_shape(shape), dtype,
                               loc=_draw_param(mean, dtype), scale=_draw_param(stddev, dtype))


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """A seeded engine draw: PyTensor a shared numpy ``Generator`` that ``function``
    advances, Theano 1.0.5 a ``RandomStreams``."""
    dtype = _normalize_dtype(dtype, 'random_uniform')
    return _engine.random_draw('uniform', _op_seed(seed), _random_shape(shape), dtype,
                               low=_draw_param(minval, dtype), high=_draw_param(maxval, dtype))


def random_binomial(shape, p=0.0, dtype=None, seed=None):
    """``random_uniform(shape) < p``, cast to ``dtype``."""
    dtype = _normalize_dtype(dtype, 'random_binomial')
    u = random_uniform(shape, 0., 1., dtype='float32', seed=seed)
    p = T.cast(p, 'float32') if _is_engine_tensor(p) else np.float32(p)
    return T.cast(T.lt(u, p), dtype)


def _math_erf(v):
    import math
    return math.erf(v)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Inverse CDF (``T.erfinv``) of a uniform draw restricted to
    ``[Phi(-2), Phi(2)]``."""
    dtype = _normalize_dtype(dtype, 'truncated_normal')
    lo = 0.5 * (1. + _math_erf(-2. / np.sqrt(2.)))
    hi = 1. - lo
    u = random_uniform(shape, lo, hi, dtype='float64', seed=seed)
    z = np.sqrt(2.) * T.erfinv(2. * u - 1.)
    z = T.clip(z, -2., 2.)
    return T.cast(mean + stddev * z, dtype)
