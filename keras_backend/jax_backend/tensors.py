"""Tensors and variables on JAX: the engine-level functions of the names of
:mod:`keras_backend.api.tensors`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import math as _math
import sys

import numpy as np

from .. import common, shape_rules
from ..eager_graph import sections
from . import core
from .core import (Function, jax, jnp, Placeholder, records_keras_shape, Tensor, Variable,
                   _apply, _builtin_all, _EVAL_CACHE, _LEARNING_PHASE, _ndim, _node,
                   _normalize_dtype, _ONE, _seed_key, _device_array, _to_tensor, _Update, _walk)


def is_sparse(tensor):
    """JAX has no sparse tensor here: sparse values (``sparse=True`` placeholders,
    ``ctc_label_dense_to_sparse``) are held dense and flagged; this reads the flag."""
    return bool(getattr(tensor, '_sparse', False))


def to_dense(tensor):
    """The dense value (a scipy sparse matrix becomes an array)."""
    if hasattr(tensor, 'toarray'):
        return _to_tensor(tensor.toarray())
    if is_sparse(tensor):
        return identity(tensor)
    return tensor


def variable(value, dtype=None, name=None, constraint=None):
    """A graph leaf holding a ``jax.Array``; a scipy sparse matrix is held dense."""
    if dtype is None and isinstance(value, (Tensor, jax.Array, np.ndarray)) and \
            not isinstance(value, np.ndarray):
        dtype = value.dtype
    dtype = _normalize_dtype(dtype)
    if isinstance(value, Tensor):
        value = eval(value)
    if hasattr(value, 'toarray'):
        value = value.toarray()
    # a private copy of a host array: the transfer to the device may still be reading it
    # after this returns, while the caller changes its array
    value = _device_array(value, dtype) if not isinstance(value, jax.Array) \
        else jnp.asarray(value, dtype=dtype)
    name = common._variable_name(name)
    v = Variable(value, name=name, constraint=constraint)
    v._uses_learning_phase = False
    return v


def is_variable(x):
    return isinstance(x, Variable)


def constant(value, dtype=None, shape=None, name=None):
    """A ``jax.Array`` (concrete: ops on it run at once)."""
    dtype = _normalize_dtype(dtype)
    if isinstance(value, Tensor):
        value = eval(value)
    arr = np.asarray(value, dtype=dtype)
    arr = shape_rules.constant_array(arr, shape_rules.constant_shape(shape))
    return _device_array(arr)


is_keras_tensor = sections.is_keras_tensor(sys.modules[__name__])


def is_tensor(x):
    """Graph tensors, variables and ``jax.Array`` values."""
    return isinstance(x, (Tensor, jax.Array))


placeholder = sections.placeholder(core)


def is_placeholder(x):
    return isinstance(x, Placeholder)


def shape(x):
    """An int32 vector; computed while tracing (every size is static under ``jit``)."""
    if isinstance(x, Tensor):
        return _node(_shape_op, [x], _ONE,
                     name=None) if not _is_fully_static(x) else \
            jnp.asarray(x.shape, dtype='int32')
    return jnp.asarray(np.shape(x), dtype='int32')


def _shape_op(x):
    return np.asarray(np.shape(x), dtype='int32')


_shape_op.shape_only = True


def _is_fully_static(x):
    return _builtin_all(d is not None for d in x.shape)


def _engine_int_shape(x):
    if isinstance(x, Tensor):
        return x.shape
    return tuple(np.shape(x))


int_shape = core.int_shape


def ndim(x):
    return _ndim(x)


def size(x, name=None):
    """The element count, an int32 scalar; a shape value (known while tracing), so that
    sizes computed from it (``K.tile(t, K.stack([1, K.size(y)]))``) work."""
    if isinstance(x, Tensor):
        if _is_fully_static(x):
            return jnp.asarray(_math.prod(x.shape), dtype='int32')
        return _node(_size_op, [x], _ONE)
    return jnp.asarray(np.size(x), dtype='int32')


def _size_op(x):
    return np.asarray(_math.prod(np.shape(x)), dtype='int32')


_size_op.shape_only = True


dtype = core.dtype


def eval(x):
    """A graph tensor is computed by a ``function`` compiled once per tensor (reading
    the variables' current values, drawing new random numbers); an update is applied
    and the variable's new value returned."""
    if isinstance(x, _Update):
        x.run()
        return np.asarray(x.variable._value)
    if isinstance(x, (list, tuple)):
        raise ValueError('eval: expected one tensor, got a %s (use batch_get_value)'
                         % type(x).__name__)
    if isinstance(x, Variable):
        return np.array(x._value)
    if isinstance(x, Tensor):
        needed = [n for n in _walk([x]) if n._is_placeholder and n is not _LEARNING_PHASE]
        if needed:
            raise ValueError("eval: argument 'x' depends on the placeholder %r; feed it "
                             "through K.function([...], x) instead" % (needed[0].name,))
        fn = _EVAL_CACHE.get(x.id)
        if fn is None:
            fn = _EVAL_CACHE[x.id] = Function([], [x], name='eval', eager_calls=1)
        return fn([])[0]
    if hasattr(x, 'toarray'):
        return np.asarray(x.toarray())
    return np.asarray(x)


def zeros(shape, dtype=None, name=None):
    dtype = _normalize_dtype(dtype)
    return variable(np.zeros(_int_tuple(shape), dtype=dtype), dtype=dtype, name=name)


def ones(shape, dtype=None, name=None):
    dtype = _normalize_dtype(dtype)
    return variable(np.ones(_int_tuple(shape), dtype=dtype), dtype=dtype, name=name)


def eye(size, dtype=None, name=None):
    dtype = _normalize_dtype(dtype)
    if isinstance(size, (list, tuple)):
        n, m = int(size[0]), int(size[1])
    else:
        n = m = int(size)
    return variable(np.eye(n, m, dtype=dtype), dtype=dtype, name=name)


def _int_tuple(shape):
    if isinstance(shape, Tensor):
        return tuple(int(s) for s in eval(shape))
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    out = []
    for s in shape:
        if isinstance(s, Tensor):
            s = eval(s)
        out.append(int(np.asarray(s)))
    return tuple(out)


def zeros_like(x, dtype=None, name=None):
    dt = _normalize_dtype(dtype) if dtype is not None else None
    return _apply(lambda v: jnp.zeros_like(v, dtype=dt), _to_tensor(x))


def ones_like(x, dtype=None, name=None):
    dt = _normalize_dtype(dtype) if dtype is not None else None
    return _apply(lambda v: jnp.ones_like(v, dtype=dt), _to_tensor(x))


@records_keras_shape
def identity(x, name=None):
    """A copy of ``x`` (a new node, or ``jnp.array(x)``)."""
    x = _to_tensor(x)
    if isinstance(x, Tensor):
        return _node(lambda v: v, [x], _ONE, name=name)
    return jnp.array(x)


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    dtype = _normalize_dtype(dtype)
    key = _seed_key(seed)
    value = jax.random.uniform(key, _int_tuple(shape), minval=low, maxval=high,
                               dtype=dtype)
    return variable(value, dtype=dtype, name=name)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    dtype = _normalize_dtype(dtype)
    key = _seed_key(seed)
    value = mean + scale * jax.random.normal(key, _int_tuple(shape), dtype=dtype)
    return variable(value, dtype=dtype, name=name)


def count_params(x):
    return int(np.prod(int_shape(x)))


cast = core.cast
