"""Random on PyTorch: the engine-level functions of the names of
:mod:`keras_backend.api.random`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import math

from ..eager_graph import sections
from .core import (torch, Tensor, _device, _normalize_dtype, _random, _size_tuple,
                   _to_tensor, _torch_dtype)


def _param(v, dt):
    if isinstance(v, torch.Tensor):
        return v.to(dt)
    return float(v)


# the samplers: (generator, shape, two parameters, dtype) -> draw
def _normal(g, s, m, sd, dt):
    return m + sd * torch.randn(s, generator=g, dtype=dt, device=_device())


def _uniform(g, s, lo, hi, dt):
    return lo + (hi - lo) * torch.rand(s, generator=g, dtype=dt, device=_device())


def _binomial(g, s, p, _, dt):
    return (torch.rand(s, generator=g, dtype=dt, device=_device()) < p).to(dt)


def _truncated_normal(g, s, m, sd, dt):
    # the inverse CDF of the normal restricted to [-2, 2], from uniform draws
    lo = 0.5 * (1. + math.erf(-2. / math.sqrt(2.)))
    hi = 0.5 * (1. + math.erf(2. / math.sqrt(2.)))
    u = lo + (hi - lo) * torch.rand(s, generator=g, dtype=torch.float64, device=_device())
    z = math.sqrt(2.) * torch.erfinv(2. * u - 1.)
    return m + sd * torch.clamp(z, -2., 2.).to(dt)


def _random_op(sample, shape, a, b, dtype, seed):
    dt = _torch_dtype(_normalize_dtype(dtype))
    if isinstance(shape, (list, tuple)):
        shape = list(shape)

    def draw(g, shp, lo, hi):
        size = _size_tuple(shp)
        if g is None:
            # a probe (``_random``): the draw's shape (the size broadcast with tensor
            # parameters) and dtype, without running the sampler's arithmetic on ``meta``,
            # where each op is a Python reference (ResNet50's build: 2.3 -> 1.9 s)
            sizes = [tuple(v.shape) for v in (lo, hi) if isinstance(v, torch.Tensor)]
            return torch.empty(torch.broadcast_shapes(size, *sizes), dtype=dt,
                               device=_device())
        return sample(g, size, _param(lo, dt), _param(hi, dt), dt).to(dt)
    return _random(draw, seed, shape, _to_tensor(a) if isinstance(a, Tensor) else a,
                   _to_tensor(b) if isinstance(b, Tensor) else b)


random_normal = sections.random_normal(_random_op, _normal, doc="""\
``torch.randn`` from the op's ``torch.Generator``, scaled and shifted.""")

random_uniform = sections.random_uniform(_random_op, _uniform, doc="""\
``torch.rand`` from the op's ``torch.Generator``, scaled and shifted.""")

random_binomial = sections.random_binomial(_random_op, _binomial)

truncated_normal = sections.truncated_normal(_random_op, _truncated_normal, doc="""\
The normal's inverse CDF (``torch.erfinv``) of uniform draws within two standard
    deviations.""")
