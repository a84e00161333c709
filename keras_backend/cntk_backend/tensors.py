"""Tensors and variables on CNTK 2.7: the engine-level functions of the names of
:mod:`keras_backend.api.tensors`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import builtins

import numpy as np

from .. import checks, common, shape_rules
from . import core
from .core import (C, _after_control_updates, _constant, _constant_like, _dtype_of, _evaluate,
                   _INT_DTYPES, _is_engine_tensor, _keras_meta, _normalize_dtype, _np_dtype,
                   _numpy_op, _parameter, _reshape, _shape_arg, _SHAPE_SOURCES, _SparseLabels,
                   _State, _static_shape, _storage_dtype, _to_tensor, _var)


def is_sparse(tensor):
    """True for a sparse CNTK input (``placeholder(sparse=True)``) and for
    ``ctc_label_dense_to_sparse`` results."""
    if isinstance(tensor, _SparseLabels):
        return True
    return _is_engine_tensor(tensor) and bool(_var(tensor).is_sparse)


def to_dense(tensor):
    """A sparse placeholder (one-hot rows, CNTK's CSR input) is densified with ``C.times`` by the
    identity matrix and its batch axis made static; CTC sparse labels give ``(batch, max_len)``
    labels with zeros past each length."""
    if isinstance(tensor, _SparseLabels):
        dense = tensor.dense
        n = _static_shape(dense)[1]
        pos = C.constant(np.arange(n, dtype=_var(dense).dtype))
        keep = C.less(pos, _reshape(tensor.lengths, (1,), begin_axis=1, end_axis=1))
        return C.element_select(keep, dense, _constant_like(dense, 0))
    x = _to_tensor(tensor)
    v = _var(x)
    if v.is_sparse:
        dim = v.shape[-1]
        d = C.times(x, C.constant(np.eye(dim, dtype=v.dtype)))
        return C.unpack_batch(d) if v.dynamic_axes else d
    return x


def _holdable(fname, arg, shape):
    """CNTK aborts the process (SIGFPE) building a tensor whose last axis holds 0 values
    (a 1-D one of size 0 too): refused with our ValueError instead."""
    if len(shape) and shape[-1] == 0:
        raise ValueError("%s: argument '%s' has shape %s: CNTK cannot hold a tensor whose last "
                         "axis has 0 values" % (fname, arg, tuple(shape)))


def variable(value, dtype=None, name=None, constraint=None):
    """A CNTK ``Parameter`` (``core._parameter``); float16 is held as is, integer dtypes in
    ``floatx()`` and bool as 0/1 in ``floatx()`` (``K.dtype`` reports ``'bool'``). ``name`` is
    prefixed by the open name scopes; ``constraint`` is kept as ``.constraint``."""
    held, reported = _storage_dtype(dtype, 'variable')
    if _is_engine_tensor(value):
        value = eval(value)
    if hasattr(value, 'tocoo'):
        # CNTK has no sparse parameters: a scipy sparse matrix is held dense
        value = value.toarray()
    value = np.asarray(value)
    if reported == 'bool':
        value = value.astype(bool)
    value = value.astype(held)
    _holdable('variable', 'value', value.shape)
    p = _parameter(value, common._scoped_name(name, 'variable', '_') or '')
    try:
        p.constraint = constraint
        if reported is not None:
            p._keras_dtype = reported
    except AttributeError:
        pass
    return _keras_meta(p, uses_learning_phase=False)


is_variable = core.is_variable


def constant(value, dtype=None, shape=None, name=None):
    """A CNTK ``C.constant``; integer dtypes are held in ``floatx()`` and bool as 0/1 (``K.dtype``
    reports ``'bool'``)."""
    dt, reported = _storage_dtype(dtype, 'constant')
    if _is_engine_tensor(value):     # a tensor: cast (and reshaped), as on TensorFlow
        out = cast(value, dtype or common.floatx())
        shape = shape_rules.constant_shape(shape)
        return out if shape is None else _reshape(out, shape)
    value = np.asarray(value)
    if reported == 'bool':
        value = value.astype(bool)
    value = value.astype(dt)
    value = shape_rules.constant_array(value, shape_rules.constant_shape(shape))
    _holdable('constant', 'value', value.shape)
    c = _constant(value, common._scoped_name(name, 'constant', '_') or '')
    if reported is not None:
        c._keras_dtype = reported
    return _keras_meta(c, uses_learning_phase=False)


def is_keras_tensor(x):
    if not is_tensor(x):
        raise ValueError('is_keras_tensor: expected a symbolic tensor, got an object of type '
                         '%s' % type(x).__name__)
    return hasattr(x, '_keras_history')


def is_tensor(x):
    """True for any CNTK ``Variable`` or ``Function`` and for ``ctc_label_dense_to_sparse``
    results."""
    return _is_engine_tensor(x) or isinstance(x, _SparseLabels)


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    """``C.input_variable`` without dynamic axes; ``None`` dims are CNTK free dimensions.
    ``sparse=True``: CNTK's sparse (CSR) input of one-hot rows on its dynamic batch axis. Integer,
    bool and float16 dtypes are fed as ``floatx()`` (``K.dtype`` reports bool and float16)."""
    if shape is None:
        if ndim is None:
            raise ValueError('placeholder: give shape or ndim')
        shape = (None,) * int(ndim)
    shape = shape_rules.as_dims(shape)
    if 0 in shape:
        # CNTK's input variables reject a dimension of size 0 (its own error and C++ stack)
        raise ValueError('placeholder: CNTK cannot hold a dimension of size 0 in an input; '
                         'got shape=%r' % (shape,))
    dt, reported = _storage_dtype(dtype, 'placeholder')
    if dt == np.float16:
        dt, reported = _np_dtype(), 'float16'
    if sparse:
        if len(shape) < 2 or builtins.any(d is None for d in shape[1:]):
            raise ValueError('placeholder: a sparse placeholder needs shape (None, dims...) '
                             'with known dims, got %r' % (shape,))
        x = C.input_variable(shape[1:], dtype=dt, is_sparse=True, name=name or '')
    else:
        # needs_gradient=False: CNTK would otherwise compute the input's
        # gradient in every backward pass (for a convolution, a second full
        # convolution); ``gradients`` with respect to a placeholder
        # differentiates a clone whose inputs ask for it.
        x = C.input_variable(_shape_arg(shape), dtype=dt, dynamic_axes=[],
                             needs_gradient=False, name=name or '')
    if reported is not None:
        x._keras_dtype = reported
    _keras_meta(x, uses_learning_phase=False)
    if sparse:
        x._keras_shape = shape
    return x


def is_placeholder(x):
    """True for CNTK input variables other than the learning phase."""
    return _is_engine_tensor(x) and bool(_var(x).is_input) and not _var(x) is _State.learning_phase


def shape(x):
    """Integer values held in ``floatx()``: a constant for a static shape; free dims are read at
    run time by a numpy graph node (``UserFunction``)."""
    s = int_shape(x)
    if not s:          # CNTK holds no tensor of 0 values (its constant aborts the process)
        raise ValueError("shape: argument 'x' is a scalar, whose shape () would be a tensor "
                         "of 0 values, which CNTK cannot hold (K.int_shape(x) gives ())")
    if builtins.all(d is not None for d in s):
        return C.constant(np.asarray(s, dtype=_np_dtype()))
    out = _numpy_op([x], lambda v: [np.asarray(v.shape)], [(len(s),)], name='shape')[0]
    _SHAPE_SOURCES[out.uid] = _to_tensor(x)
    return out


int_shape = core.int_shape


def ndim(x):
    return len(int_shape(x))


def size(x, name=None):
    """A scalar in ``floatx()``; ``name`` is ignored.

    A constant for a static shape (or one with a static 0). With free dimensions, the graph
    counts them: every static axis of ``x`` is sliced to one entry (out of the gradient), the
    ones of what is left are summed and scaled by the static axes' product. That reads only
    the free axes' extent (the batch, for Keras 2.3.1's loss reduction, which divides by
    ``size`` at every training step); a numpy node in its place (a ``UserFunction``) cost
    every step a Python call (0.75 against 0.61 ms a ``train_on_batch`` of a 64-64-10 MLP,
    batch 32). A tensor on CNTK's dynamic axes keeps the numpy node."""
    s = int_shape(x)
    known = [d for d in s if d is not None]
    dt = _np_dtype()
    if len(known) == len(s) or 0 in known:
        return C.constant(np.asarray(np.prod(known) if len(known) == len(s) else 0, dtype=dt))
    v = _var(_to_tensor(x))
    if v.dynamic_axes:
        return _numpy_op([x], lambda a: [np.asarray(a.size)], [()], name='size')[0]
    free = C.stop_gradient(v)
    for axis, d in enumerate(s):
        if d is not None and d > 1:
            free = C.slice(free, axis, 0, 1)
    if np.dtype(free.dtype) != dt:
        free = C.cast(free, dt)
    count = _reshape(C.reduce_sum(C.ones_like(free), axis=C.Axis.all_static_axes()), ())
    scale = int(np.prod(known))
    return count if scale == 1 else count * C.constant(np.asarray(scale, dtype=dt))


dtype = core.dtype


def eval(x):
    """Runs CNTK's ``Function.eval``; ValueError (from CNTK) when ``x`` depends on a placeholder.
    """
    if isinstance(x, _SparseLabels):
        x = to_dense(x)
    if not _is_engine_tensor(x):
        return np.asarray(x)
    try:
        return _evaluate([x])[0]
    except (RuntimeError, ValueError) as e:
        # CNTK's own ValueError: a placeholder the tensor depends on was not fed
        raise checks.engine_error('eval', e) from e


def zeros(shape, dtype=None, name=None):
    """A CNTK parameter; dtypes are held as ``variable`` holds them."""
    return variable(np.zeros(tuple(shape) if not isinstance(shape, int) else (shape,)),
                    dtype, name)


def ones(shape, dtype=None, name=None):
    """A CNTK parameter; dtypes are held as ``variable`` holds them."""
    return variable(np.ones(tuple(shape) if not isinstance(shape, int) else (shape,)),
                    dtype, name)


def eye(size, dtype=None, name=None):
    """A CNTK parameter; dtypes are held as ``variable`` holds them."""
    value = np.eye(*size) if isinstance(size, (tuple, list)) else np.eye(size)
    _holdable('eye', 'size', value.shape)
    return variable(value, dtype, name)


def zeros_like(x, dtype=None, name=None):
    """``C.zeros_like``; ``name`` is ignored."""
    z = C.zeros_like(_to_tensor(x))
    return cast(z, dtype) if dtype is not None else z


def ones_like(x, dtype=None, name=None):
    """``C.ones_like``; ``name`` is ignored."""
    o = C.ones_like(_to_tensor(x))
    return cast(o, dtype) if dtype is not None else o


def identity(x, name=None):
    """Computed as ``x + 0``. Inside ``with K.control_dependencies(updates):`` every variable of
    ``x``'s graph that one of those updates assigns is replaced by the assigned value, so the copy
    reads the new values (Keras' stateful metrics)."""
    x = _to_tensor(x)
    x = _after_control_updates(x)
    return C.plus(x, _constant_like(x, 0), name=name or '')


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    """Drawn with numpy ``RandomState(seed)`` into a CNTK parameter."""
    rng = np.random.RandomState(shape_rules.op_seed(seed))
    return variable(rng.uniform(low, high, size=shape_rules.as_dims(shape)), dtype, name)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    """Drawn with numpy ``RandomState(seed)`` into a CNTK parameter."""
    rng = np.random.RandomState(shape_rules.op_seed(seed))
    return variable(rng.normal(mean, scale, size=shape_rules.as_dims(shape)), dtype, name)


def count_params(x):
    """The product of the static shape (TypeError for a free dim)."""
    return int(np.prod([d for d in int_shape(x)]))


def cast(x, dtype):
    """Float dtypes use ``C.cast``; integer dtypes truncate toward zero and bool gives 0/1, both
    held in ``floatx()`` (CNTK has float tensors only)."""
    name = _normalize_dtype(dtype, 'cast')
    x = _to_tensor(x)
    if name in _INT_DTYPES:
        return C.element_select(C.less(x, _constant_like(x, 0)), C.negate(C.floor(C.negate(x))),
                                C.floor(x))
    if name == 'bool':
        return C.not_equal(x, _constant_like(x, 0))
    target = _np_dtype(name)
    if _dtype_of(x) != target:
        return C.cast(x, target)
    return x
