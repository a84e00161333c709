"""Random on JAX: the engine-level functions of the names of
:mod:`keras_backend.api.random`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from .core import jax, jnp, Tensor, _normalize_dtype, _random, _size_tuple, _to_tensor


# the samplers: (key, shape, two parameters, dtype) -> draw; module-level functions, so
# that ``_random``'s eager draws of one distribution share their compiled programs
def _normal(k, s, m, sd, dt):
    return m + sd * jax.random.normal(k, s, dt)


def _uniform(k, s, lo, hi, dt):
    return jax.random.uniform(k, s, dt, lo, hi)


def _binomial(k, s, p, _, dt):
    return (jax.random.uniform(k, s, dt) < p).astype(dt)


def _truncated_normal(k, s, m, sd, dt):
    return m + sd * jax.random.truncated_normal(k, -2., 2., s, dt)


def _random_op(sample, shape, a, b, dtype, seed):
    dtype = _normalize_dtype(dtype)
    if isinstance(shape, (list, tuple)):
        shape = list(shape)

    def draw(key, shp, lo, hi):
        return sample(key, _size_tuple(shp), jnp.asarray(lo, dtype), jnp.asarray(hi, dtype),
                      dtype)
    return _random(draw, seed, shape, _to_tensor(a) if isinstance(a, Tensor) else a,
                   _to_tensor(b) if isinstance(b, Tensor) else b, kind=(sample, dtype))


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """``jax.random.normal`` scaled and shifted."""
    return _random_op(_normal, shape, mean, stddev, dtype, seed)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """``jax.random.uniform``."""
    return _random_op(_uniform, shape, minval, maxval, dtype, seed)


def random_binomial(shape, p=0.0, dtype=None, seed=None):
    """1 where a uniform draw is below ``p``, else 0."""
    return _random_op(_binomial, shape, p, 0., dtype, seed)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """``jax.random.truncated_normal`` within two standard deviations."""
    return _random_op(_truncated_normal, shape, mean, stddev, dtype, seed)
