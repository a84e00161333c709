"""Tensors and variables on Theano 1.0.5 / PyTensor: the engine-level functions of the names of
:mod:`keras_backend.api.tensors`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from __future__ import absolute_import, division, print_function

import numpy as np

from .. import common, shape_rules
from . import core
from .core import (is_sparse_tensor, records_keras_shape, T, _engine, _is_engine_tensor,
                   _known_shape, _normalize_dtype, _op_seed, _to_tensor, _with_shape)


def is_sparse(tensor):
    """True for the engine's sparse (csr/csc) tensor types."""
    return is_sparse_tensor(tensor)


def to_dense(tensor):
    """The engine's ``dense_from_sparse``."""
    if is_sparse(tensor):
        out = _engine.sparse.dense_from_sparse(tensor)
        shape = getattr(tensor, '_keras_shape', None)
        if shape is not None:
            out = _with_shape(out, shape)
        return out
    return tensor


def variable(value, dtype=None, name=None, constraint=None):
    """An engine shared variable (a scipy sparse matrix gives a sparse one); on
    Theano 1.0.5 its size-1 axes are broadcastable."""
    dtype = _normalize_dtype(dtype, 'variable')
    name = common._scoped_name(name, 'variable')
    if hasattr(value, 'tocoo'):
        v = _engine.sparse.shared(value.astype(dtype), name=name)
        v._keras_shape = tuple(value.shape)
    else:
        if _is_engine_tensor(value):
            value = eval(value)
        arr = np.array(value, dtype=dtype)
        v = _engine.shared(arr, name=name)
        v._keras_shape = tuple(arr.shape)
    v.constraint = constraint
    v._uses_learning_phase = False
    return v


def is_variable(x):
    """True for the engine's shared variables."""
    return isinstance(x, _engine.SharedVariable)


def constant(value, dtype=None, shape=None, name=None):
    """``T.constant``."""
    dtype = _normalize_dtype(dtype, 'constant')
    name = common._scoped_name(name, 'constant')
    if _is_engine_tensor(value):      # a tensor: cast (and reshaped), as on TensorFlow
        out = T.cast(value, dtype)
        shape = shape_rules.constant_shape(shape)
        return out if shape is None else T.reshape(out, shape)
    arr = np.asarray(value, dtype=dtype)
    arr = shape_rules.constant_array(arr, shape_rules.constant_shape(shape))
    c = T.constant(arr, name=name, dtype=dtype)
    c._keras_shape = tuple(arr.shape)
    c._uses_learning_phase = False
    return c


def is_keras_tensor(x):
    """True when ``x`` carries the ``_keras_history`` that Keras layers set, as
    Keras 2.3.1 checks."""
    if not is_tensor(x):
        raise ValueError('is_keras_tensor: unexpectedly found an instance of type %s; '
                         'expected a symbolic tensor' % (type(x).__name__,))
    return hasattr(x, '_keras_history')


def is_tensor(x):
    """True for every engine graph variable: tensors, shared and sparse variables."""
    return _is_engine_tensor(x)


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    """An engine symbolic input; ``sparse=True`` gives a csr matrix input, 2-D only.
    Theano 1.0.5's types hold only size-1 axes: the shape is kept as ``_keras_shape``."""
    dtype = _normalize_dtype(dtype, 'placeholder')
    name = common._scoped_name(name, 'placeholder')
    if shape is None:
        if ndim is None:   # the shared rules check each argument alone
            raise ValueError('placeholder: give shape or ndim')
        shape = (None,) * int(ndim)
    shape = tuple(None if s is None else int(s) for s in shape_rules.as_dims(shape))
    if sparse:
        if len(shape) != 2:   # this engine's sparse inputs are matrices only
            raise ValueError('placeholder: a sparse placeholder must be 2-D, got shape %r'
                             % (shape,))
        x = _engine.sparse.csr_matrix(name=name, dtype=dtype)
    else:
        x = _engine.input_tensor(dtype, shape, name)
    x._keras_shape = shape
    x._keras_placeholder = True
    x._uses_learning_phase = False
    return x


def is_placeholder(x):
    return bool(getattr(x, '_keras_placeholder', False))


def shape(x):
    """``x.shape`` cast to int32."""
    x = _to_tensor(x)
    return T.cast(x.shape, 'int32')


int_shape = core.int_shape


def ndim(x):
    if not _is_engine_tensor(x):
        return np.ndim(x)
    return x.ndim


def size(x, name=None):
    """The product of the sizes (static where known, else ``x.shape[i]``), cast to int32:
    a 1-D tensor's size is its one ``Shape_i`` (``T.prod(x.shape)`` stays a ``Prod`` of a
    ``MakeVector`` through the optimizer)."""
    x = _to_tensor(x)
    known, dims = 1, []
    for i, d in enumerate(_known_shape(x)):
        if d is None:
            dims.append(x.shape[i])
        else:
            known *= int(d)
    if known != 1 or not dims:
        dims.append(T.constant(np.int64(known)))
    out = dims[0]
    for d in dims[1:]:
        out = out * d
    return T.cast(out, 'int32')


dtype = core.dtype


eval = core.eval


def _int_tuple(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def zeros(shape, dtype=None, name=None):
    """An engine shared variable (see ``variable``)."""
    dtype = _normalize_dtype(dtype, 'zeros')
    return variable(np.zeros(_int_tuple(shape), dtype=dtype), dtype, name)


def ones(shape, dtype=None, name=None):
    """An engine shared variable (see ``variable``)."""
    dtype = _normalize_dtype(dtype, 'ones')
    return variable(np.ones(_int_tuple(shape), dtype=dtype), dtype, name)


def eye(size, dtype=None, name=None):
    """An engine shared variable (see ``variable``)."""
    dtype = _normalize_dtype(dtype, 'eye')
    if isinstance(size, (tuple, list)):
        if len(size) != 2:   # the shared rule lets a one-entry list through
            raise ValueError('eye: size must be an int or (rows, cols), got %r' % (size,))
        n, m = int(size[0]), int(size[1])
    else:
        n = m = int(size)
    return variable(np.eye(n, m, dtype=dtype), dtype, name)


def zeros_like(x, dtype=None, name=None):
    """``T.zeros_like``."""
    x = _to_tensor(x)
    dtype = x.dtype if dtype is None else _normalize_dtype(dtype, 'zeros_like')
    return T.zeros_like(x, dtype=dtype)


def ones_like(x, dtype=None, name=None):
    """``T.ones_like``."""
    x = _to_tensor(x)
    dtype = x.dtype if dtype is None else _normalize_dtype(dtype, 'ones_like')
    return T.ones_like(x, dtype=dtype)


@records_keras_shape
def identity(x, name=None):
    """The engine's ``tensor_copy``."""
    x = _to_tensor(x)
    out = T.tensor_copy(x)
    if hasattr(x, '_keras_shape'):
        out._keras_shape = x._keras_shape
    return out


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    """Drawn by numpy's ``RandomState(seed)``, held by an engine shared variable."""
    dtype = _normalize_dtype(dtype, 'random_uniform_variable')
    rs = np.random.RandomState(_op_seed(seed))
    return variable(rs.uniform(low, high, size=_int_tuple(shape)).astype(dtype),
                    dtype, name)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    """Drawn by numpy's ``RandomState(seed)``, held by an engine shared variable."""
    dtype = _normalize_dtype(dtype, 'random_normal_variable')
    rs = np.random.RandomState(_op_seed(seed))
    return variable(rs.normal(mean, scale, size=_int_tuple(shape)).astype(dtype),
                    dtype, name)


def count_params(x):
    return int(np.prod(_known_shape(x), dtype=np.int64))


@records_keras_shape
def cast(x, dtype):
    """``T.cast``."""
    x = _to_tensor(x)
    return T.cast(x, _normalize_dtype(dtype, 'cast'))
