"""Tensors and variables on PyTorch: the engine-level functions of the names of
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
from .core import (Function, torch, Placeholder, records_keras_shape, Tensor, Variable,
                   _apply, _builtin_all, _EVAL_CACHE, _from_numpy, _generator, _host,
                   _LEARNING_PHASE, _ndim, _node, _normalize_dtype, _ONE, _to_tensor,
                   _torch_dtype, _Update, _walk, _device)


def is_sparse(tensor):
    """Sparse values (``sparse=True`` placeholders, ``ctc_label_dense_to_sparse``) are held
    dense and flagged; this reads the flag."""
    return bool(getattr(tensor, '_sparse', False))


def to_dense(tensor):
    """The dense value (a scipy sparse matrix becomes a tensor)."""
    if hasattr(tensor, 'toarray'):
        return _to_tensor(tensor.toarray())
    if is_sparse(tensor):
        return identity(tensor)
    return tensor


def variable(value, dtype=None, name=None, constraint=None):
    """A graph leaf holding a CPU ``torch.Tensor`` of its own; a scipy sparse matrix is
    held dense."""
    if dtype is None and isinstance(value, (Tensor, torch.Tensor)):
        dtype = core._dtype_name(value.dtype)
    dtype = _normalize_dtype(dtype)
    if isinstance(value, Tensor):
        value = eval(value)
    if hasattr(value, 'toarray'):
        value = value.toarray()
    if isinstance(value, torch.Tensor):
        value = value.detach().to(dtype=_torch_dtype(dtype)).clone()
    else:
        value = _from_numpy(np.asarray(value), dtype)
    name = common._variable_name(name)
    v = Variable(value, name=name, constraint=constraint)
    v._uses_learning_phase = False
    return v


def is_variable(x):
    return isinstance(x, Variable)


def constant(value, dtype=None, shape=None, name=None):
    """A ``torch.Tensor`` (concrete: ops on it run at once)."""
    dtype = _normalize_dtype(dtype)
    if isinstance(value, Tensor):
        value = eval(value)
    if isinstance(value, torch.Tensor):
        value = _host(value)
    arr = np.asarray(value, dtype=np.float32 if dtype == 'bfloat16' else dtype)
    arr = shape_rules.constant_array(arr, shape_rules.constant_shape(shape))
    return _from_numpy(arr, dtype)


is_keras_tensor = sections.is_keras_tensor(sys.modules[__name__])


def is_tensor(x):
    """Graph tensors, variables and ``torch.Tensor`` values."""
    return isinstance(x, (Tensor, torch.Tensor))


placeholder = sections.placeholder(core)


def is_placeholder(x):
    return isinstance(x, Placeholder)


def shape(x):
    """An int32 vector (a shape value: known at both probe sizes while the graph is
    built)."""
    if isinstance(x, Tensor):
        if _is_fully_static(x):
            return torch.tensor(x.shape, dtype=torch.int32)
        return _node(_shape_op, [x], _ONE)
    return torch.tensor(tuple(np.shape(x)), dtype=torch.int32)


def _shape_op(x):
    return torch.tensor(tuple(x.shape), dtype=torch.int32)


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
    """The element count, an int32 scalar (a shape value)."""
    if isinstance(x, Tensor):
        if _is_fully_static(x):
            return torch.tensor(_math.prod(x.shape), dtype=torch.int32)
        return _node(_size_op, [x], _ONE)
    return torch.tensor(int(np.prod(np.shape(x))), dtype=torch.int32)


def _size_op(x):
    return torch.tensor(_math.prod(tuple(x.shape)), dtype=torch.int32)


_size_op.shape_only = True


dtype = core.dtype


def eval(x):
    """A graph tensor is computed by a ``function`` kept per tensor (reading the
    variables' current values, drawing new random numbers); an update is applied and the
    variable's new value returned."""
    if isinstance(x, _Update):
        x.run()
        return np.array(_host(x.variable._value))
    if isinstance(x, (list, tuple)):
        raise ValueError('eval: expected one tensor, got a %s (use batch_get_value)'
                         % type(x).__name__)
    if isinstance(x, Variable):
        return core._output(x._value)
    if isinstance(x, Tensor):
        needed = [n for n in _walk([x]) if n._is_placeholder and n is not _LEARNING_PHASE]
        if needed:
            raise ValueError("eval: argument 'x' depends on the placeholder %r; feed it "
                             "through K.function([...], x) instead" % (needed[0].name,))
        fn = _EVAL_CACHE.get(x.id)
        if fn is None:
            fn = _EVAL_CACHE[x.id] = Function([], [x], name='eval')
        return fn([])[0]
    if isinstance(x, torch.Tensor):
        return core._output(x)
    if hasattr(x, 'toarray'):
        return np.asarray(x.toarray())
    return np.asarray(x)


def zeros(shape, dtype=None, name=None):
    dtype = _normalize_dtype(dtype)
    return variable(torch.zeros(_int_tuple(shape), dtype=_torch_dtype(dtype)), dtype=dtype,
                    name=name)


def ones(shape, dtype=None, name=None):
    dtype = _normalize_dtype(dtype)
    return variable(torch.ones(_int_tuple(shape), dtype=_torch_dtype(dtype)), dtype=dtype,
                    name=name)


def eye(size, dtype=None, name=None):
    dtype = _normalize_dtype(dtype)
    if isinstance(size, (list, tuple)):
        n, m = int(size[0]), int(size[1])
    else:
        n = m = int(size)
    return variable(torch.eye(n, m, dtype=_torch_dtype(dtype)), dtype=dtype, name=name)


def _int_tuple(shape):
    if isinstance(shape, Tensor):
        return tuple(int(s) for s in eval(shape))
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    if isinstance(shape, torch.Tensor):
        return tuple(int(s) for s in _host(shape).reshape(-1))
    out = []
    for s in shape:
        if isinstance(s, Tensor):
            s = eval(s)
        out.append(int(_host(s)))
    return tuple(out)


def _like(fill):
    def op(v, dt):
        dt = v.dtype if dt is None else dt
        if isinstance(v, torch.Tensor):
            return fill(v.shape, dtype=dt, device=v.device)
        return fill(np.shape(v), dtype=dt, device=_device())
    return op


def zeros_like(x, dtype=None, name=None):
    dt = _torch_dtype(_normalize_dtype(dtype)) if dtype is not None else None
    return _apply(_like(torch.zeros), _to_tensor(x), dt)


def ones_like(x, dtype=None, name=None):
    dt = _torch_dtype(_normalize_dtype(dtype)) if dtype is not None else None
    return _apply(_like(torch.ones), _to_tensor(x), dt)


@records_keras_shape
def identity(x, name=None):
    """A copy of ``x`` (a new node, or ``torch.clone``)."""
    x = _to_tensor(x)
    if isinstance(x, Tensor):
        return _node(lambda v: v, [x], _ONE, name=name)
    return x.clone()


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    """``torch.rand`` from a ``torch.Generator`` seeded by ``seed``."""
    dtype = _normalize_dtype(dtype)
    g = _generator(seed)
    value = torch.rand(_int_tuple(shape), generator=g, dtype=torch.float64) * \
        (float(high) - float(low)) + float(low)
    return variable(value.to(_torch_dtype(dtype)), dtype=dtype, name=name)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    """``torch.randn`` from a ``torch.Generator`` seeded by ``seed``."""
    dtype = _normalize_dtype(dtype)
    g = _generator(seed)
    value = float(mean) + float(scale) * torch.randn(_int_tuple(shape), generator=g,
                                                     dtype=torch.float64)
    return variable(value.to(_torch_dtype(dtype)), dtype=dtype, name=name)


def count_params(x):
    return int(np.prod(int_shape(x)))


cast = core.cast
