"""Random on JAX: the engine-level functions of the names of
:mod:`keras_backend.api.random`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from ..eager_graph import sections
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


random_normal = sections.random_normal(_random_op, _normal, doc="""\
``jax.random.normal`` scaled and shifted.""")

random_uniform = sections.random_uniform(_random_op, _uniform, doc="""\
``jax.random.uniform``.""")

random_binomial = sections.random_binomial(_random_op, _binomial)

truncated_normal = sections.truncated_normal(_random_op, _truncated_normal, doc="""\
``jax.random.truncated_normal`` within two standard deviations.""")
