"""The Keras 2 backend API on Theano 1.0.5 / PyTensor: the API functions, engine-level.

One function per API name, in ``api.SECTIONS`` order, unchecked (the package
``__init__`` puts each behind its argument checks); they call each other directly.
How the engine is chosen, holds state and compiles and runs a graph is in
:mod:`.core`; the engine's own differences in its engine module (``core._engine``).
Both engines lack (PyTensor) or only partly offer CNN and CTC ops, so convolution,
pooling and CTC are built here from the engine's own primitives (strided slices,
``tensordot``, ``scan``) and one custom ``Op`` (CTC beam search).
"""
from __future__ import absolute_import, division, print_function

import contextlib
import itertools
import sys

import numpy as np

from .. import checks, common, generic
from ..common import *  # noqa: F401,F403  (public config names)
from .. import ctc_search, shape_rules
from . import core
from .core import (  # noqa: F401  (ENGINE, ENGINE_VERSION, th, T: the adapter's names too)
    ENGINE, ENGINE_VERSION, T, th, _engine, records_keras_shape,
    _ball, _bany, _bmax, _bmin, _bslice,
    _normalize_dtype, _compile, _default_mode, _op_seed,
    _LEARNING_PHASE, _EVAL_CACHE, _CONTROL_SCOPES, _SESSION,
    _is_engine_tensor, is_sparse_tensor, _with_shape, _to_tensor, _constant_like, _param_like,
    _is_zero_number, _axis_arg, _broadcast_param, _givens_for, update_pair, Function,
    _FUNCTION_KWARGS, _serial_now, _stand_in, _clone, _outer_parts, _known_shape,
    _engine_int_shape)

_K = sys.modules[__name__]   # this module's engine-level functions, for ``generic``


# ---------------------------------------------------------------------------
# Helpers of the ops: padding, scan, shapes
# ---------------------------------------------------------------------------

def _pad(x, pads, value=0.):
    """Pad ``x`` (any rank) by ``pads``: a list of (before, after) per axis
    (ints or scalar tensors), filled with ``value``."""
    if _ball(not _is_engine_tensor(b) and not _is_engine_tensor(a) and b == 0 and a == 0
             for b, a in pads):
        return x
    s = _known_shape(x)
    dims = []
    idx = []
    static = []
    for i, (b, a) in enumerate(pads):
        d = s[i] if s[i] is not None else x.shape[i]
        dims.append(d + b + a)
        idx.append(_bslice(b, b + d))
        static.append(s[i] + b + a if (s[i] is not None and not _is_engine_tensor(b)
                                       and not _is_engine_tensor(a)) else None)
    fill = T.constant(np.asarray(value, dtype=x.dtype))
    out = T.alloc(fill, *dims)
    out = T.set_subtensor(out[tuple(idx)], x)
    return _with_shape(out, static)


def _log_softmax(x, axis):
    """Log-softmax of ``x`` along the int ``axis`` (numerically stable)."""
    return _engine.log_softmax(x, axis)


def _scan(fn, **kwargs):
    """The outputs of the engine's ``scan`` of ``fn`` (its updates dropped);
    ``int_shape`` gives the static shapes of the outer tensors."""
    return _engine.scan(fn, _known_shape, **kwargs)


# ---------------------------------------------------------------------------
# Helpers of the convolution, pooling and locally connected sections
# ---------------------------------------------------------------------------

def _to_channels_last(x, data_format):
    if data_format == 'channels_first':
        return x.dimshuffle(shape_rules.to_channels_last_perm(x.ndim))
    return x


def _from_channels_last(x, data_format):
    if data_format == 'channels_first':
        return x.dimshuffle(shape_rules.to_channels_first_perm(x.ndim))
    return x


def _check_kernel(kernel, rank, name):
    ks = _known_shape(kernel)
    # the im2col build needs every kernel size; the shared rules allow unknown ones
    if len(ks) != rank or _bany(d is None for d in ks):
        raise ValueError('%s: expected a kernel of rank %d with a fully known static shape, '
                         'got %r' % (name, rank, ks))
    return ks


def _patches(x_cl, kernel_size, strides, dilation, pads, fill=0.):
    """Strided windows of a channels_last tensor ``(batch, *spatial, C)``.

    Returns the list (kernel offsets in row-major order) of tensors
    ``(batch, *out_spatial, C)``: element ``o`` of entry ``k`` is input cell
    ``o * stride + k * dilation`` of the padded input.
    """
    n = len(kernel_size)
    xp = _pad(x_cl, [(0, 0)] + list(pads) + [(0, 0)], fill)
    s_in = _known_shape(x_cl)
    out_static = [None] * n
    for i in range(n):
        b, a = pads[i]
        if s_in[i + 1] is not None and not _is_engine_tensor(b) and not _is_engine_tensor(a):
            dk = (kernel_size[i] - 1) * dilation[i] + 1
            out_static[i] = _bmax(0, (s_in[i + 1] + b + a - dk) // strides[i] + 1)
    result = []
    for offs in itertools.product(*[range(k) for k in kernel_size]):
        idx = [_bslice(None)]
        for i in range(n):
            dk = (kernel_size[i] - 1) * dilation[i] + 1
            start = offs[i] * dilation[i]
            tail = dk - 1 - start
            if start == 0 and tail == 0 and strides[i] == 1:
                # the whole axis: a plain ``:`` (Theano 1.0.5's local_dimshuffle_subtensor
                # breaks a ``0::1`` slice of a broadcastable axis that a DimShuffle then
                # drops: Keras' 1-D pooling on an expand_dims)
                idx.append(_bslice(None))
            else:
                idx.append(_bslice(start, -tail if tail > 0 else None, strides[i]))
        idx.append(_bslice(None))
        piece = xp[tuple(idx)]
        result.append(_with_shape(piece, (s_in[0],) + tuple(out_static) + (s_in[-1],)))
    return result


# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------

def backend():
    """``'theano'`` on both engines; ``ENGINE`` names the one serving it."""
    return 'theano'


# ---------------------------------------------------------------------------
# Session and learning phase
# ---------------------------------------------------------------------------

def clear_session():
    """Also drops the functions that ``eval`` compiled and cached."""
    common._reset_session_state()
    _EVAL_CACHE.clear()
    del _CONTROL_SCOPES[:]
    _engine.forget_draws()


def get_session():
    """The engine has no session: a stand-in whose ``run(fetches, feed_dict=None)``
    evaluates tensors with ``eval`` / ``function``."""
    return _SESSION[0]


def set_session(session):
    """Replaces the stand-in session; any object with a ``run(fetches, feed_dict)``
    method."""
    if not callable(getattr(session, 'run', None)):
        raise ValueError('set_session: expected an object with a run(fetches, feed_dict) '
                         'method, got %r' % (session,))
    _SESSION[0] = session


def learning_phase():
    """The symbolic uint8 scalar input ``keras_learning_phase``; a ``function``
    that is not fed it sees 0."""
    return common._learning_phase_or(lambda: _LEARNING_PHASE)


@contextlib.contextmanager
def name_scope(name):
    """Prefixes the names of variables, constants and placeholders, as Keras'
    Theano backend does (Keras saves weights by these names)."""
    with common._name_scope_stack(name):
        yield name


# ---------------------------------------------------------------------------
# Tensors and variables
# ---------------------------------------------------------------------------

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
    arr = np.asarray(value, dtype=dtype)
    if shape is not None:
        shape = tuple(int(s) for s in shape)
        if arr.size == 1:
            arr = np.full(shape, arr.reshape(()), dtype=dtype)
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:   # the shared rules do not compare the value's size with the shape
            raise ValueError('constant: value of %d elements cannot fill shape %r'
                             % (arr.size, shape))
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
    shape = tuple(None if s is None else int(s) for s in shape)
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


# ---------------------------------------------------------------------------
# Variable updates
# ---------------------------------------------------------------------------

def update(x, new_x):
    """A ``(variable, new_value)`` pair that ``function(updates=...)`` applies;
    ``new_value`` is cast to the variable's dtype."""
    return update_pair(x, new_x)


def update_add(x, increment):
    """An update pair (see ``update``)."""
    return update(x, x + increment)


def update_sub(x, decrement):
    """An update pair (see ``update``)."""
    return update(x, x - decrement)


def moving_average_update(x, value, momentum):
    """An update pair (see ``update``), without debiasing."""
    return update(x, x * momentum + value * (1. - momentum))


# ---------------------------------------------------------------------------
# Math
# ---------------------------------------------------------------------------

@records_keras_shape
def dot(x, y):
    """``T.dot`` up to 2-D operands, else ``tensordot``; a sparse ``x`` uses the
    engine's ``structured_dot``."""
    if is_sparse(x):
        return _engine.sparse.structured_dot(x, y)
    x = _to_tensor(x)
    y = _to_tensor(y)
    if x.ndim <= 2 and y.ndim <= 2:
        return T.dot(x, y)
    if y.ndim == 1:
        return T.tensordot(x, y, axes=[[x.ndim - 1], [0]])
    return T.tensordot(x, y, axes=[[x.ndim - 1], [y.ndim - 2]])


@records_keras_shape
def batch_dot(x, y, axes=None):
    """Reshaped to 3-D around a batched product: PyTensor ``matmul``; Theano 1.0.5
    ``batched_dot``, or a broadcast product and sum without ``blas.ldflags``."""
    x = _to_tensor(x)
    y = _to_tensor(y)
    ax, ay = shape_rules.batch_dot_axes(x.ndim, y.ndim, axes)
    xs, ys = _known_shape(x), _known_shape(y)
    x_rest = [i for i in range(1, x.ndim) if i != ax]
    y_rest = [i for i in range(1, y.ndim) if i != ay]
    xt = x.dimshuffle([0] + x_rest + [ax])
    yt = y.dimshuffle([0, ay] + y_rest)
    b = x.shape[0]
    n = x.shape[ax]
    p = T.prod([x.shape[i] for i in x_rest]) if x_rest else 1
    q = T.prod([y.shape[i] for i in y_rest]) if y_rest else 1
    x3 = T.reshape(xt, T.stack([b, p, n]), ndim=3)
    y3 = T.reshape(yt, T.stack([b, n, q]), ndim=3)
    out = _engine.batched_dot(x3, y3)
    out_dims = [b] + [x.shape[i] for i in x_rest] + [y.shape[i] for i in y_rest]
    if len(out_dims) == 1:
        out_dims.append(1)
    out = T.reshape(out, T.stack(out_dims), ndim=len(out_dims))
    return _with_shape(out, shape_rules.batch_dot_output_shape(xs, ys, ax, ay))


@records_keras_shape
def transpose(x):
    """``T.transpose``."""
    x = _to_tensor(x)
    return T.transpose(x)


@records_keras_shape
def gather(reference, indices):
    """Advanced indexing ``reference[indices]`` (integer indices)."""
    reference = _to_tensor(reference)
    indices = _to_tensor(indices, 'int64')
    if indices.dtype not in ('int8', 'int16', 'int32', 'int64', 'uint8', 'uint16',
                             'uint32', 'uint64'):
        indices = T.cast(indices, 'int64')
    return reference[indices]


@records_keras_shape
def max(x, axis=None, keepdims=False):
    """``T.max``."""
    x = _to_tensor(x)
    return T.max(x, axis=_axis_arg(axis, x.ndim), keepdims=keepdims)


@records_keras_shape
def min(x, axis=None, keepdims=False):
    """``T.min``."""
    x = _to_tensor(x)
    return T.min(x, axis=_axis_arg(axis, x.ndim), keepdims=keepdims)


@records_keras_shape
def sum(x, axis=None, keepdims=False):
    """``T.sum``."""
    x = _to_tensor(x)
    return T.sum(x, axis=_axis_arg(axis, x.ndim), keepdims=keepdims)


@records_keras_shape
def prod(x, axis=None, keepdims=False):
    """``T.prod``."""
    x = _to_tensor(x)
    return T.prod(x, axis=_axis_arg(axis, x.ndim), keepdims=keepdims)


def cumsum(x, axis=0):
    """``T.cumsum``."""
    x = _to_tensor(x)
    return T.cumsum(x, axis=_axis_arg(axis, x.ndim))


def cumprod(x, axis=0):
    """``T.cumprod``."""
    x = _to_tensor(x)
    return T.cumprod(x, axis=_axis_arg(axis, x.ndim))


@records_keras_shape
def var(x, axis=None, keepdims=False):
    """``T.mean`` of squared deviations; integer inputs are cast to ``floatx()``."""
    x = _to_tensor(x)
    if x.dtype not in ('float16', 'float32', 'float64'):
        x = T.cast(x, common.floatx())
    ax = _axis_arg(axis, x.ndim)
    m = T.mean(x, axis=ax, keepdims=True)
    return T.mean(T.sqr(x - m), axis=ax, keepdims=keepdims)


@records_keras_shape
def std(x, axis=None, keepdims=False):
    """``T.sqrt`` of ``var``."""
    return T.sqrt(var(x, axis, keepdims))


@records_keras_shape
def mean(x, axis=None, keepdims=False):
    """``T.mean``; integer inputs are cast to ``floatx()``."""
    x = _to_tensor(x)
    if x.dtype not in ('float16', 'float32', 'float64'):
        x = T.cast(x, common.floatx())
    return T.mean(x, axis=_axis_arg(axis, x.ndim), keepdims=keepdims)


@records_keras_shape
def any(x, axis=None, keepdims=False):
    """``T.any`` of ``x != 0``, as bool."""
    x = _to_tensor(x)
    return T.cast(T.any(T.neq(x, 0), axis=_axis_arg(axis, x.ndim), keepdims=keepdims), 'bool')


@records_keras_shape
def all(x, axis=None, keepdims=False):
    """``T.all`` of ``x != 0``, as bool."""
    x = _to_tensor(x)
    return T.cast(T.all(T.neq(x, 0), axis=_axis_arg(axis, x.ndim), keepdims=keepdims), 'bool')


def argmax(x, axis=-1):
    """``T.argmax``, as int64."""
    x = _to_tensor(x)
    return T.cast(T.argmax(x, axis=_axis_arg(axis, x.ndim)), 'int64')


def argmin(x, axis=-1):
    """``T.argmin``, as int64."""
    x = _to_tensor(x)
    return T.cast(T.argmin(x, axis=_axis_arg(axis, x.ndim)), 'int64')


def _elementwise_unary(name, engine_op, note):
    """API function ``name``: ``engine_op`` of ``x`` as an engine tensor."""
    def op(x):
        return engine_op(_to_tensor(x))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = note
    return op


square = _elementwise_unary('square', T.sqr, '``T.sqr``.')


def abs(x):
    """The engine's ``abs`` (Theano 1.0.5: ``abs_``)."""
    return _engine.absolute(_to_tensor(x))


def sqrt(x):
    """``T.sqrt`` of ``max(x, 0)``: negatives give 0."""
    x = _to_tensor(x)
    return T.sqrt(T.maximum(x, T.zeros_like(x)))


exp = _elementwise_unary('exp', T.exp, '``T.exp``.')


log = _elementwise_unary('log', T.log, '``T.log``.')


def logsumexp(x, axis=None, keepdims=False):
    """The maximum (held out of the gradient, infinite ones as 0) is subtracted first."""
    x = _to_tensor(x)
    ax = _axis_arg(axis, x.ndim)
    m = _engine.disconnected_grad(T.max(x, axis=ax, keepdims=True))
    m = T.switch(T.isinf(m), T.zeros_like(m), m)
    out = T.log(T.sum(T.exp(x - m), axis=ax, keepdims=True)) + m
    if not keepdims:
        out = T.sum(out, axis=ax) if ax is not None else T.sum(out)
    return out


def round(x):
    """``T.round`` with ``mode='half_to_even'``."""
    return T.round(_to_tensor(x), mode='half_to_even')


def sign(x):
    """The engine's ``sign`` (Theano 1.0.5: ``sgn``)."""
    return _engine.sign(_to_tensor(x))


def pow(x, a):
    """``T.pow``; a number exponent takes ``x``'s dtype unless ``x`` is integer and
    the exponent a float."""
    x = _to_tensor(x)
    if not _is_engine_tensor(a):
        arr = np.asarray(a)
        if x.dtype.startswith('float') or arr.dtype.kind != 'f':
            arr = arr.astype(x.dtype)
        a = T.constant(arr)
    return T.pow(x, a)


def clip(x, min_value, max_value):
    """``T.clip``; a None bound is infinite."""
    x = _to_tensor(x)
    min_value, max_value = shape_rules.clip_bounds(min_value, max_value)
    if not _is_engine_tensor(min_value) and not _is_engine_tensor(max_value):
        lo = T.constant(np.asarray(min_value, dtype=x.dtype))
        hi = T.constant(np.asarray(max_value, dtype=x.dtype))
    else:
        lo = T.cast(_to_tensor(min_value), x.dtype)
        hi = T.maximum(T.cast(_to_tensor(max_value), x.dtype), lo)
    return T.clip(x, lo, hi)


def _coerce_pair(x, y):
    """The operands of a comparison as engine tensors; a float number takes the
    dtype of the tensor it meets."""
    x = _to_tensor(x) if _is_engine_tensor(x) else x
    y = _to_tensor(y) if _is_engine_tensor(y) else y
    if not _is_engine_tensor(x):
        x = _to_tensor(x, y.dtype if np.asarray(x).dtype.kind == 'f' else None)
    if not _is_engine_tensor(y):
        y = _to_tensor(y, x.dtype if np.asarray(y).dtype.kind == 'f' else None)
    return x, y


def _elementwise_pair(name, engine_op, note):
    """API function ``name``: both operands through ``_coerce_pair``, then ``engine_op``."""
    def op(x, y):
        x, y = _coerce_pair(x, y)
        return engine_op(x, y)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = note
    return records_keras_shape(op)


equal = _elementwise_pair('equal', T.eq, '``T.eq``.')
not_equal = _elementwise_pair('not_equal', T.neq, '``T.neq``.')
greater = _elementwise_pair('greater', T.gt, '``T.gt``.')
greater_equal = _elementwise_pair('greater_equal', T.ge, '``T.ge``.')
less = _elementwise_pair('less', T.lt, '``T.lt``.')
less_equal = _elementwise_pair('less_equal', T.le, '``T.le``.')
maximum = _elementwise_pair('maximum', T.maximum, '``T.maximum``.')
minimum = _elementwise_pair('minimum', T.minimum, '``T.minimum``.')


sin = _elementwise_unary('sin', T.sin, '``T.sin``.')


cos = _elementwise_unary('cos', T.cos, '``T.cos``.')


def _reshape_to_kept(p, x, axes):
    if p.ndim == x.ndim:
        return p
    pattern = []
    j = 0
    for i in range(x.ndim):
        if i in axes:
            pattern.append('x')
        else:
            pattern.append(j)
            j += 1
    if j != p.ndim:   # the shared rules do not relate gamma/beta to the kept axes
        raise ValueError('normalize_batch_in_training: gamma/beta of rank %d do not match '
                         'the %d kept axes' % (p.ndim, j))
    return p.dimshuffle(pattern)


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """``reduction_axes`` also takes Theano's names, as Keras' Theano backend
    does: ``'per-activation'`` (= ``[0]``) and ``'spatial'`` (= ``[0, 2, 3, ...]``)."""
    x = _to_tensor(x)
    axes = shape_rules.batch_norm_axes(reduction_axes, x.ndim)
    m = T.mean(x, axis=axes, keepdims=True)
    v = T.mean(T.sqr(x - m), axis=axes, keepdims=True)
    kept = [i for i in range(x.ndim) if i not in axes]
    normed = (x - m) / T.sqrt(v + _constant_like(v, epsilon))
    if gamma is not None:
        g = _to_tensor(gamma)
        normed = normed * (_broadcast_param(g, x.ndim, kept[0]) if (g.ndim == 1 and len(kept) == 1)
                           else _reshape_to_kept(g, x, axes))
    if beta is not None:
        b = _to_tensor(beta)
        normed = normed + (_broadcast_param(b, x.ndim, kept[0]) if (b.ndim == 1 and len(kept) == 1)
                           else _reshape_to_kept(b, x, axes))
    return normed, T.mean(x, axis=axes), T.mean(T.sqr(x - m), axis=axes)


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    x = _to_tensor(x)
    axis = shape_rules.normalize_axis(axis, x.ndim)
    m = _broadcast_param(mean, x.ndim, axis)
    v = _broadcast_param(var, x.ndim, axis)
    out = (x - m) / T.sqrt(v + epsilon)
    if gamma is not None:
        out = out * _broadcast_param(gamma, x.ndim, axis)
    if beta is not None:
        out = out + _broadcast_param(beta, x.ndim, axis)
    return out


# ---------------------------------------------------------------------------
# Shape manipulation
# ---------------------------------------------------------------------------

@records_keras_shape
def concatenate(tensors, axis=-1):
    """``T.concatenate``; 2-D sparse tensors use the engine's sparse ``vstack``
    (axis 0) or ``hstack`` (axis 1)."""
    if _ball(is_sparse(t) for t in tensors):
        nd = 2
        axis = shape_rules.normalize_axis(axis, nd)
        if axis == 0:
            return _engine.sparse.vstack(tensors, format='csr')
        return _engine.sparse.hstack(tensors, format='csr')
    tensors = [to_dense(_to_tensor(t)) for t in tensors]
    axis = shape_rules.normalize_axis(axis, tensors[0].ndim)
    return T.concatenate(tensors, axis=axis)


@records_keras_shape
def reshape(x, shape):
    """``T.reshape``."""
    x = _to_tensor(x)
    if isinstance(shape, (list, tuple)):
        shape = tuple(-1 if s is None else s
                      for s in shape_rules.sizes(shape, _is_engine_tensor, 'shape'))
        out = T.reshape(x, shape, ndim=len(shape))
        static = shape_rules.static_sizes(shape)
        known_in = _known_shape(x)
        if static.count(-1) == 1 and _ball(d is not None for d in known_in) and \
                _ball(s is not None for s in static):
            total = int(np.prod(known_in))
            rest = int(np.prod([s for s in static if s != -1]))
            static[static.index(-1)] = total // rest if rest else 0
        static = [None if s == -1 else s for s in static]
        out = _with_shape(out, static)
    else:
        length = _known_shape(shape)
        if length and length[0] is not None:
            # a shape tensor of known length (K.shape(y)): Theano 1.0.5 needs the rank
            out = T.reshape(x, shape, ndim=length[0])
        else:
            out = T.reshape(x, shape)
    # as Keras 2.3.1's Theano backend: Keras' Network reads it beside
    # _keras_shape (TimeDistributed calls a wrapped model on this result)
    out._uses_learning_phase = getattr(x, '_uses_learning_phase', False)
    return out


@records_keras_shape
def permute_dimensions(x, pattern):
    """``dimshuffle``."""
    x = _to_tensor(x)
    return x.dimshuffle(tuple(int(p) for p in pattern))


def _repeat_axis(x, factor, axis):
    return repeat_elements(x, factor, axis) if factor != 1 else x


def _bilinear_axis(x, factor, axis):
    """Upsample ``x`` by an integer ``factor`` along ``axis`` with
    tf.image.resize's bilinear rule (half-pixel centres, edges clamped)."""
    if factor == 1:
        return x
    nd = x.ndim
    s = _known_shape(x)

    def shifted(step):
        # neighbour at i + step, clamped at the edges
        if step > 0:
            body = x[tuple([_bslice(None)] * axis + [_bslice(1, None)])]
            edge = x[tuple([_bslice(None)] * axis + [_bslice(-1, None)])]
            return T.concatenate([body, edge], axis=axis)
        body = x[tuple([_bslice(None)] * axis + [_bslice(None, -1)])]
        edge = x[tuple([_bslice(None)] * axis + [_bslice(0, 1)])]
        return T.concatenate([edge, body], axis=axis)

    up = shifted(1)
    down = shifted(-1)
    phases = []
    for r in range(factor):
        delta = (r + 0.5) / factor - 0.5
        if delta >= 0:
            phases.append(x * _constant_like(x, 1. - delta) + up * _constant_like(x, delta))
        else:
            phases.append(down * _constant_like(x, -delta) + x * _constant_like(x, 1. + delta))
    stacked = T.stack(phases, axis=axis + 1)
    dims = [x.shape[i] for i in range(nd)]
    dims[axis] = dims[axis] * factor
    out = T.reshape(stacked, T.stack(dims), ndim=nd)
    new = list(s)
    if new[axis] is not None:
        new[axis] *= factor
    return _with_shape(out, new)


@records_keras_shape
def resize_images(x, height_factor, width_factor, data_format, interpolation='nearest'):
    """'nearest' repeats pixels (``T.repeat``); 'bilinear' blends neighbours with
    ``tf.image.resize``'s rule (half-pixel centres, no antialias)."""
    x = _to_tensor(x)
    data_format = normalize_data_format(data_format)
    interpolation = shape_rules.normalize_interpolation(interpolation)
    hf, wf = int(height_factor), int(width_factor)
    axes = (2, 3) if data_format == 'channels_first' else (1, 2)
    fn = _repeat_axis if interpolation == 'nearest' else _bilinear_axis
    return fn(fn(x, hf, axes[0]), wf, axes[1])


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    """``T.repeat`` along each spatial axis (nearest neighbour)."""
    x = _to_tensor(x)
    data_format = normalize_data_format(data_format)
    factors = (int(depth_factor), int(height_factor), int(width_factor))
    axes = (2, 3, 4) if data_format == 'channels_first' else (1, 2, 3)
    for f, a in zip(factors, axes):
        x = _repeat_axis(x, f, a)
    return x


@records_keras_shape
def repeat_elements(x, rep, axis):
    """``T.repeat``."""
    x = _to_tensor(x)
    axis = shape_rules.normalize_axis(axis, x.ndim)
    out = T.repeat(x, int(rep), axis=axis)
    s = list(_known_shape(x))
    if s[axis] is not None:
        s[axis] *= int(rep)
    return _with_shape(out, s)


@records_keras_shape
def repeat(x, n):
    """``T.repeat`` along a new axis 1."""
    x = _to_tensor(x)
    n = shape_rules.sizes([n], _is_engine_tensor, 'n')[0]
    out = T.repeat(x.dimshuffle(0, 'x', 1), n, axis=1)
    s = _known_shape(x)
    return _with_shape(out, (s[0], n if isinstance(n, int) else None, s[1]))


def arange(start, stop=None, step=1, dtype='int32'):
    """``T.arange``, cast to ``dtype``."""
    if stop is None:
        start, stop = 0, start
    return T.cast(T.arange(start, stop, step), _normalize_dtype(dtype, 'arange'))


@records_keras_shape
def tile(x, n):
    """``T.tile``."""
    x = _to_tensor(x)
    n = shape_rules.sizes(n, _is_engine_tensor, 'n')
    if not isinstance(n, list):
        # a shape tensor (K.shape(y)): one repeat count per axis of x
        n = [n[i] for i in range(x.ndim)]
    reps = [1] * (x.ndim - len(n)) + n
    if len(reps) > x.ndim:
        extra = len(reps) - x.ndim
        x = x.dimshuffle(['x'] * extra + list(range(x.ndim)))
    s = _known_shape(x)
    out = T.tile(x, reps)      # a list of ints and scalar tensors (both engines take it)
    return _with_shape(out, [d * r if d is not None and isinstance(r, int) else None
                             for d, r in zip(s, reps)])


@records_keras_shape
def flatten(x):
    """The engine's ``flatten``."""
    x = _to_tensor(x)
    s = _known_shape(x)
    out = _engine.flatten(x)
    return _with_shape(out, (int(np.prod(s)) if _ball(d is not None for d in s) else None,))


@records_keras_shape
def batch_flatten(x):
    """``T.reshape`` to ``(batch, -1)``."""
    x = _to_tensor(x)
    s = _known_shape(x)
    rest = s[1:]
    if _ball(d is not None for d in rest):
        n = int(np.prod(rest))
        out = T.reshape(x, (x.shape[0], n), ndim=2)
    else:
        n = None
        out = T.reshape(x, (x.shape[0], -1), ndim=2)
    return _with_shape(out, (s[0], n))


@records_keras_shape
def expand_dims(x, axis=-1):
    """``dimshuffle`` adding a broadcastable axis."""
    x = _to_tensor(x)
    if axis < 0:
        axis = x.ndim + 1 + axis
    pattern = list(range(x.ndim))
    pattern.insert(axis, 'x')
    return x.dimshuffle(pattern)


@records_keras_shape
def squeeze(x, axis):
    """``dimshuffle`` when the axis is broadcastable, else ``T.reshape``."""
    x = _to_tensor(x)
    axis = shape_rules.normalize_axis(axis, x.ndim)
    s = list(_known_shape(x))
    if s[axis] not in (None, 1):   # the shared rules check the axis, not its size
        raise ValueError('squeeze: axis %d has size %d, expected 1' % (axis, s[axis]))
    if s[axis] == 1 and x.broadcastable[axis]:
        return x.dimshuffle([i for i in range(x.ndim) if i != axis])
    dims = [x.shape[i] for i in range(x.ndim) if i != axis]
    out = T.reshape(x, T.stack(dims) if dims else (), ndim=x.ndim - 1)
    del s[axis]
    return _with_shape(out, s)


@records_keras_shape
def temporal_padding(x, padding=(1, 1)):
    """``set_subtensor`` of ``x`` into zeros (``T.alloc``)."""
    x = _to_tensor(x)
    padding = shape_rules.normalize_tuple(padding, 2, 'padding')
    return _pad(x, [(0, 0), padding, (0, 0)])


def _spatial_padding(x, padding, n, data_format, name):
    x = _to_tensor(x)
    pairs = shape_rules.normalize_spatial_padding(padding, n)
    data_format = normalize_data_format(data_format)
    if data_format == 'channels_first':
        pads = [(0, 0), (0, 0)] + list(pairs)
    else:
        pads = [(0, 0)] + list(pairs) + [(0, 0)]
    return _pad(x, pads)


@records_keras_shape
def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    """``set_subtensor`` of ``x`` into zeros (``T.alloc``)."""
    return _spatial_padding(x, padding, 2, data_format, 'spatial_2d_padding')


@records_keras_shape
def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    """``set_subtensor`` of ``x`` into zeros (``T.alloc``)."""
    return _spatial_padding(x, padding, 3, data_format, 'spatial_3d_padding')


@records_keras_shape
def stack(x, axis=0):
    """``T.stack``."""
    xs = [_to_tensor(t) for t in x]
    nd = xs[0].ndim + 1
    axis = shape_rules.normalize_axis(axis, nd)
    return T.stack(xs, axis=axis)


@records_keras_shape
def one_hot(indices, num_classes):
    """``T.eq`` of the indices against ``arange(num_classes)``, cast to ``floatx()``."""
    indices = _to_tensor(indices, 'int64')
    classes = T.arange(num_classes)
    pattern = list(range(indices.ndim)) + ['x']
    out = T.cast(T.eq(indices.dimshuffle(pattern), classes), common.floatx())
    if not _is_engine_tensor(num_classes):
        out = _with_shape(out, tuple(_known_shape(indices)) + (int(num_classes),))
    return out


@records_keras_shape
def reverse(x, axes):
    """A ``::-1`` slice along each of ``axes``."""
    x = _to_tensor(x)
    if isinstance(axes, (int, np.integer)):
        axes = [axes]
    axes = [shape_rules.normalize_axis(int(a), x.ndim, 'axes') for a in axes]
    idx = [_bslice(None, None, -1) if i in axes else _bslice(None) for i in range(x.ndim)]
    return x[tuple(idx)]


@records_keras_shape
def slice(x, start, size):
    """Basic indexing, one slice per axis."""
    x = _to_tensor(x)
    start = list(start)
    size = list(size)
    idx = []
    static = []
    for d, b, n in zip(_known_shape(x), start, size):
        symbolic_ = _is_engine_tensor(n) or _is_engine_tensor(b)
        if not _is_engine_tensor(n) and int(n) == -1:
            idx.append(_bslice(b, None))
            static.append(d - int(b) if (d is not None and not symbolic_) else None)
        else:
            idx.append(_bslice(b, b + n))
            static.append(None if symbolic_ else int(n))
    return _with_shape(x[tuple(idx)], static)


@records_keras_shape
def pattern_broadcast(x, broadcastable):
    """Engine-dependent: Theano 1.0.5's ``patternbroadcast`` sets the whole pattern;
    PyTensor's ``specify_broadcastable`` marks the axes marked True, the others unchanged."""
    x = _to_tensor(x)
    pattern = tuple(bool(b) for b in broadcastable)
    return _engine.pattern_broadcast(x, pattern)


# ---------------------------------------------------------------------------
# Values, functions and gradients
# ---------------------------------------------------------------------------

def get_value(x):
    """The shared variable's ``get_value()`` (a scipy matrix when sparse); other
    tensors are evaluated with ``eval``."""
    if isinstance(x, _engine.SharedVariable):
        return np.array(x.get_value()) if not is_sparse(x) else x.get_value()
    return eval(x)


def batch_get_value(ops):
    return [get_value(x) for x in ops]


def set_value(x, value):
    """The shared variable's ``set_value``, with the value cast to its dtype (its shape
    is checked against the variable's by ``checks``)."""
    x.set_value(np.asarray(value, dtype=x.dtype))


batch_set_value = generic.batch_set_value(_K)


get_variable_shape = generic.get_variable_shape(_K)


def print_tensor(x, message=''):
    """The engine's ``Print`` op: prints ``message`` and the value when evaluated."""
    x = _to_tensor(x)
    return _engine.Print(message)(x)


def function(inputs, outputs, updates=None, **kwargs):
    """The engine's ``function``, whose own keywords (``mode``, ``givens``,
    ``no_default_updates``, ...) it takes; PyTensor compiles with the C ``cvm``
    linker and ``fast_run`` rewrites unless the engine's flags set a mode or linker."""
    name = kwargs.pop('name', None)
    unknown = sorted(k for k in kwargs if k not in _FUNCTION_KWARGS)
    if unknown:
        raise ValueError('function: invalid keyword argument(s) %s; accepted: name, %s'
                         % (', '.join(unknown), ', '.join(_FUNCTION_KWARGS)))
    return Function(inputs, outputs, updates=updates, name=name, **kwargs)


def gradients(loss, variables):
    """``T.grad``; variables the loss does not depend on get zeros."""
    vs = list(variables) if isinstance(variables, (list, tuple)) else [variables]
    fixed = _engine.fix_broadcast([loss])[0]
    if fixed is not loss:
        # differentiate the broadcast-fixed graph unless that loses a variable
        # taken inside the rebuilt part of the graph
        before = set(_engine.ancestors([loss]))
        after = set(_engine.ancestors([fixed]))
        if _ball(v in after for v in vs if v in before):
            loss = fixed
    return list(T.grad(loss, vs, disconnected_inputs='ignore'))


def stop_gradient(variables):
    """The engine's ``disconnected_grad``."""
    many = isinstance(variables, (list, tuple))
    cut = [_engine.disconnected_grad(_to_tensor(v)) for v in (variables if many else [variables])]
    return type(variables)(cut) if many else cut[0]


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """The graph has no control edges: ops built inside the block that read a
    variable updated by ``control_inputs`` read its new value once compiled into a
    ``function`` (which still applies the update); tensors among them only order."""
    if control_inputs is not None and not isinstance(control_inputs, (list, tuple)):
        raise ValueError('control_dependencies: expected None or a list, got %r'
                         % (control_inputs,))
    writes = {}
    for u in control_inputs or []:
        if isinstance(u, tuple) and len(u) == 2 and isinstance(u[0], _engine.SharedVariable):
            writes[u[0]] = u[1]
    scope = [_serial_now(), None, writes]
    try:
        yield
    finally:
        scope[1] = _serial_now()
        if writes:
            _CONTROL_SCOPES.append(scope)


symbolic = generic.unchanged('symbolic', 'Returns ``func`` unchanged: every call is symbolic on '
                                         'this engine.')


eager = generic.unchanged('eager', 'Returns ``func`` unchanged: this engine is graph-only.')


# ---------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------

def _mask_like(m, target):
    """A (batch,) bool/number mask as a bool tensor broadcasting against ``target``
    (batch, ...)."""
    return T.neq(m, 0).dimshuffle([0] + ['x'] * (target.ndim - 1))


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None,
        constants=None, unroll=False, input_length=None):
    """Engine ``scan`` (a Python loop when ``unroll``). What the step computes without its
    inputs (dropout masks drawn on a first call outside the loop, weight slices) is hoisted out
    of ``scan``, so gradients flow with random masks; results carry ``_uses_learning_phase``."""
    inputs = _to_tensor(inputs)
    constants = list(constants or [])
    initial_states = list(initial_states)
    if mask is not None:
        mask = _to_tensor(mask)
        if mask.ndim == 3:
            mask = mask[:, :, 0]
    if unroll:
        steps = _known_shape(inputs)[1]
        if steps is None:
            steps = input_length
        if steps is None:
            raise ValueError('rnn: unroll=True needs a static time length or input_length')
        # the mask as the engine's bool (nonzero = keep); ``switch`` lays it along the
        # leading axis of each step's output and state
        return generic.unrolled_rnn(_K, step_function, inputs, initial_states, go_backwards,
                                    None if mask is None else T.neq(mask, 0), constants, steps)

    axes = [1, 0] + list(range(2, inputs.ndim))
    seq = inputs.dimshuffle(axes)  # (time, batch, ...)
    if mask is not None:
        mask_seq = mask.dimshuffle(1, 0)
    n_states = len(initial_states)
    if go_backwards:
        seq = seq[::-1]
        if mask is not None:
            mask_seq = mask_seq[::-1]

    # Build the step once on stand-in inputs, then move every part of it that
    # does not depend on the step's inputs (dropout masks drawn before the
    # loop, weight slices, ...) out of the loop as explicit non-sequences: the
    # engine's scan would otherwise rebuild those graphs inside the loop,
    # random generators included, and cannot differentiate through them.
    # A first call on the real first step (as Keras' TensorFlow backend does)
    # lets a step that caches tensors on its first call (Keras' recurrent
    # cells draw their dropout masks so) build them outside the loop.
    out0, _ = step_function(seq[0], initial_states + constants)
    x_in = _stand_in(seq[0], tuple(_known_shape(seq))[1:])
    s_in = [_stand_in(s, _known_shape(s)) for s in initial_states]
    draws_before = _engine.rng_mark()
    out, new_states = step_function(x_in, s_in + constants)
    new_states = [T.cast(ns, s.dtype) for s, ns in zip(initial_states, list(new_states))]
    uses_lp = _bany(getattr(v, '_uses_learning_phase', False) for v in [out] + new_states)
    inner = [x_in] + s_in
    inner_ids = set(id(v) for v in inner)
    for rng, nxt in _engine.rng_updates_since(draws_before):
        # a draw made inside the step from its inputs: as with Keras' Theano
        # backend, its generator is not advanced (same draw at every step)
        if nxt is not None and _bany(id(a) in inner_ids for a in _engine.ancestors([nxt])):
            _engine.freeze_rng(rng)
    hoisted = _outer_parts([out] + new_states, inner)
    n_h = len(hoisted)

    def _rebuild(x_t, states, hoisted_in):
        replace = dict(zip(inner, [x_t] + list(states)))
        replace.update(zip(hoisted, hoisted_in))
        return _clone([out] + new_states, replace)

    # Keras' cells return their output as one of their new states (LSTM, GRU
    # and SimpleRNN: h): without a mask, scan then carries it once and the
    # output sequence is that state's sequence
    alias = [i for i, ns in enumerate(new_states) if ns is out]
    if mask is None and alias:
        def _step(x_t, *args):
            return _rebuild(x_t, args[:n_states], args[n_states:n_states + n_h])[1:]

        results = _scan(_step, sequences=[seq], outputs_info=initial_states,
                        non_sequences=hoisted)
        results = list(results) if isinstance(results, (list, tuple)) else [results]
        results = [results[alias[0]]] + results
    elif mask is None:
        def _step(x_t, *args):
            states = args[:n_states]
            return _rebuild(x_t, states, args[n_states:n_states + n_h])

        results = _scan(_step, sequences=[seq], outputs_info=[None] + initial_states,
                        non_sequences=hoisted)
    else:
        init_out = T.zeros_like(out0)

        def _step(x_t, m_t, prev_out, *args):
            states = list(args[:n_states])
            res = _rebuild(x_t, states, args[n_states:n_states + n_h])
            out_t = T.switch(_mask_like(m_t, res[0]), res[0], prev_out)
            kept = [T.cast(T.switch(_mask_like(m_t, st), ns, st), st.dtype)
                    for st, ns in zip(states, res[1:])]
            return [out_t] + kept

        results = _scan(_step, sequences=[seq, mask_seq],
                        outputs_info=[init_out] + initial_states, non_sequences=hoisted)
    if not isinstance(results, (list, tuple)):
        results = [results]
    outputs = results[0]
    states = [_with_shape(s[-1], _known_shape(s0)) for s, s0 in zip(results[1:], initial_states)]
    last = outputs[-1]
    outputs = outputs.dimshuffle([1, 0] + list(range(2, outputs.ndim)))
    out_s = list(_known_shape(outputs))
    out_s[1] = _known_shape(inputs)[1]
    if out_s[0] is None:
        out_s[0] = _known_shape(inputs)[0]
    # sizes the scan's shape inference loses are those of one step's output
    step_s = _known_shape(out)
    if step_s is not None and len(step_s) == len(out_s) - 1:
        out_s[2:] = [s if s is not None else t for s, t in zip(out_s[2:], step_s[1:])]
    outputs = _with_shape(outputs, out_s)
    last = _with_shape(last, [out_s[0]] + out_s[2:])
    for v in [last, outputs] + states:
        v._uses_learning_phase = uses_lp
    return last, outputs, states


def _call_if(x):
    """``x()`` for a callable (Keras passes branches as functions), else ``x``."""
    return x() if callable(x) else x


def switch(condition, then_expression, else_expression):
    """``T.switch``; a lower-rank condition gets trailing broadcast axes."""
    cond = _to_tensor(condition)
    then_expression = _to_tensor(_call_if(then_expression))
    else_expression = _to_tensor(_call_if(else_expression))
    expr_ndim = _bmax(then_expression.ndim, else_expression.ndim)
    if 0 < cond.ndim < expr_ndim:
        cond = cond.dimshuffle(list(range(cond.ndim)) + ['x'] * (expr_ndim - cond.ndim))
    return T.switch(cond, then_expression, else_expression)


def in_train_phase(x, alt, training=None):
    """``T.switch`` on the learning phase; the result carries ``_uses_learning_phase``."""
    if training is None:
        training = learning_phase()
        uses_lp = True
    else:
        uses_lp = False
    if not _is_engine_tensor(training):
        return _call_if(x) if training in (1, True) else _call_if(alt)
    x = _to_tensor(_call_if(x))
    alt = _to_tensor(_call_if(alt))
    out = T.switch(T.neq(training, 0), x, alt)
    if uses_lp:
        out._uses_learning_phase = True
    return out


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)


# ---------------------------------------------------------------------------
# Activations and losses
# ---------------------------------------------------------------------------

def relu(x, alpha=0., max_value=None, threshold=0.):
    """Elementwise ``T.maximum`` / ``T.minimum``; ``alpha``, ``max_value`` and ``threshold``
    may be tensors (broadcast against ``x``, as Keras' Theano backend took them)."""
    x = _to_tensor(x)
    zero = _constant_like(x, 0.)
    thr = None if _is_zero_number(threshold) else _param_like(x, threshold)
    if thr is not None:
        kept = x * T.cast(T.gt(x, thr), x.dtype)
    else:
        kept = T.maximum(x, zero)
    if max_value is not None:
        kept = T.minimum(T.maximum(kept, zero), _param_like(x, max_value))
    if not _is_zero_number(alpha):
        leak = T.maximum((thr if thr is not None else zero) - x, zero)
        kept = kept - _param_like(x, alpha) * leak
    return kept


def elu(x, alpha=1.):
    """``T.switch`` between ``x`` and ``alpha * (exp(min(x, 0)) - 1)``; ``alpha`` may be a
    tensor (broadcast against ``x``)."""
    x = _to_tensor(x)
    neg = _param_like(x, alpha) * (T.exp(T.minimum(x, _constant_like(x, 0.)))
                                      - _constant_like(x, 1.))
    return T.switch(T.gt(x, _constant_like(x, 0.)), x, neg)


def softmax(x, axis=-1):
    """``T.special.softmax`` on PyTensor; on Theano 1.0.5 ``T.nnet.softmax`` for a matrix
    along its last axis, else ``exp`` and ``sum`` along ``axis``."""
    x = _to_tensor(x)
    return _engine.softmax(x, shape_rules.normalize_axis(axis, x.ndim))


def softplus(x):
    """The engine's ``softplus`` (stable)."""
    return _engine.softplus(_to_tensor(x))


def softsign(x):
    x = _to_tensor(x)
    return x / (_constant_like(x, 1.) + abs(x))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """From logits: the engine's log-softmax; otherwise ``output`` is renormalised
    and clipped to ``[eps, 1 - eps]``."""
    target = _to_tensor(target)
    output = _to_tensor(output)
    axis = shape_rules.normalize_axis(axis, output.ndim)
    if from_logits:
        return -T.sum(target * _log_softmax(output, axis), axis=axis)
    eps = common.epsilon()
    p = output / T.sum(output, axis=axis, keepdims=True)
    p = T.clip(p, _constant_like(p, eps), _constant_like(p, 1. - eps))
    return -T.sum(target * T.log(p), axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """A one-hot mask (``T.eq``) against the log-softmax; float ``target`` ids
    are rounded."""
    target = _to_tensor(target)
    output = _to_tensor(output)
    axis = shape_rules.normalize_axis(axis, output.ndim)
    if not from_logits:
        eps = common.epsilon()
        output = T.log(T.clip(output, _constant_like(output, eps),
                              _constant_like(output, 1. - eps)))
    lsm = _log_softmax(output, axis)
    if axis != output.ndim - 1:
        perm = [i for i in range(output.ndim) if i != axis] + [axis]
        lsm = lsm.dimshuffle(perm)
    if target.ndim == lsm.ndim:
        # Keras' rule: the class ids in their order (a size-1 class axis anywhere, e.g.
        # (batch, 1, h, w) against channels_first scores), one per position of the output
        target = T.reshape(target, [lsm.shape[i] for i in range(lsm.ndim - 1)],
                           ndim=lsm.ndim - 1)
    t = T.cast(T.round(target) if target.dtype.startswith('float') else target, 'int64')
    classes = T.arange(lsm.shape[-1])
    onehot = T.cast(T.eq(t.dimshuffle(list(range(t.ndim)) + ['x']), classes), lsm.dtype)
    return -T.sum(onehot * lsm, axis=-1)


def binary_crossentropy(target, output, from_logits=False):
    """Clipped to ``[eps, 1 - eps]``; from logits
    ``max(x, 0) - x t + log1p(exp(-|x|))``."""
    target = _to_tensor(target)
    output = _to_tensor(output)
    if from_logits:
        x = output
        return (T.maximum(x, _constant_like(x, 0.)) - x * target
                + T.log1p(T.exp(-abs(x))))
    eps = common.epsilon()
    p = T.clip(output, _constant_like(output, eps), _constant_like(output, 1. - eps))
    one = _constant_like(p, 1.)
    return -(target * T.log(p) + (one - target) * T.log(one - p))


def sigmoid(x):
    """The engine's ``sigmoid`` (Theano 1.0.5: ``T.nnet.sigmoid``)."""
    return _engine.sigmoid(_to_tensor(x))


def hard_sigmoid(x):
    """``T.clip`` of ``0.2 x + 0.5``."""
    x = _to_tensor(x)
    return T.clip(x * _constant_like(x, 0.2) + _constant_like(x, 0.5),
                  _constant_like(x, 0.), _constant_like(x, 1.))


def tanh(x):
    """``T.tanh``."""
    return T.tanh(_to_tensor(x))


def dropout(x, level, noise_shape=None, seed=None):
    """A seeded engine uniform draw (see ``random_uniform``) compared with ``level``
    (a number, or a rate computed in the graph); always applied."""
    rate_tensor = _is_engine_tensor(level)
    x = _to_tensor(x)
    if rate_tensor:
        level = T.cast(level, x.dtype)
    else:
        level = float(level)
        if level == 0.:
            return x
    if noise_shape is None:
        shape_ = x.shape
        bcast = []
    else:
        noise_shape = list(noise_shape)
        if len(noise_shape) != x.ndim:   # the shared rules take any noise_shape
            raise ValueError('dropout: noise_shape must have %d entries, got %r'
                             % (x.ndim, noise_shape))
        # Keras' Dropout fills its None entries with K.shape(x)[i] (scalar tensors)
        shape_ = [x.shape[i] if d is None else d if _is_engine_tensor(d) else int(d)
                  for i, d in enumerate(noise_shape)]
        bcast = [i for i, d in enumerate(noise_shape)
                 if not _is_engine_tensor(d) and d is not None and int(d) == 1]
    u = random_uniform(shape_, 0., 1., dtype=x.dtype, seed=seed)
    keep = T.cast(T.ge(u, level if rate_tensor else _constant_like(u, level)), x.dtype)
    if bcast:
        keep = _engine.broadcastable_axes(keep, bcast)
    if rate_tensor:
        return x * keep / (_constant_like(x, 1.) - level)
    return x * keep * _constant_like(x, 1. / (1. - level))


def l2_normalize(x, axis=None):
    """The sum of squares is floored at ``1e-12``."""
    x = _to_tensor(x)
    ss = T.sum(T.sqr(x), axis=_axis_arg(axis, x.ndim), keepdims=True)
    return x / T.sqrt(T.maximum(ss, _constant_like(x, 1e-12)))


def in_top_k(predictions, targets, k):
    """Counts the classes scoring strictly higher than the target (ties count as in);
    a non-finite target score gives False."""
    predictions = _to_tensor(predictions)
    targets = T.cast(_to_tensor(targets, 'int64'), 'int64')
    rows = T.arange(predictions.shape[0])
    score = predictions[rows, targets]
    higher = T.sum(T.cast(T.gt(predictions, score.dimshuffle(0, 'x')), 'int64'), axis=1)
    finite = T.and_(T.invert(T.isnan(score)), T.invert(T.isinf(score)))
    return T.and_(T.lt(higher, int(k)), finite)


# ---------------------------------------------------------------------------
# Convolution and pooling
# ---------------------------------------------------------------------------

def _sym_same_padding(length, kernel, stride, dilation):
    """Symbolic (before, after) of TensorFlow's 'same' rule for an unknown length."""
    dk = (kernel - 1) * dilation + 1
    out = (length + stride - 1) // stride
    total = T.maximum((out - 1) * stride + dk - length, 0)
    return total // 2, total - total // 2


def _spatial_pads(x_cl, kernel_size, strides, dilation, padding):
    """(before, after) per spatial axis of a channels_last tensor."""
    s = _known_shape(x_cl)
    pads = []
    for i, k in enumerate(kernel_size):
        length = s[i + 1]
        if padding == 'same' and length is None:
            pads.append(_sym_same_padding(x_cl.shape[i + 1], k, strides[i], dilation[i]))
        else:
            pads.append(shape_rules.padding_amounts(length, k, strides[i], dilation[i], padding))
    return pads


def _conv_core(x_cl, kernel, strides, dilation, pads):
    """N-d convolution (im2col): channels_last ``x`` ``(batch, *S, in)``,
    kernel ``(*K, in, out)``; gathers the strided windows and contracts them
    with the reshaped kernel through ``tensordot``."""
    n = x_cl.ndim - 2
    ks = _known_shape(kernel)
    cin, cout = ks[-2], ks[-1]
    cols = _patches(x_cl, ks[:n], strides, dilation, pads)
    col = cols[0] if len(cols) == 1 else T.concatenate(cols, axis=n + 1)
    w = T.reshape(kernel, (int(np.prod(ks[:n])) * cin, cout), ndim=2)
    out = T.tensordot(col, w, axes=[[n + 1], [0]])
    s = _known_shape(cols[0])
    return _with_shape(out, s[:-1] + (cout,))


def _native_conv2d(x_cl, kernel, strides, dilation, pads, flip=False):
    """The engine's own 2-D correlation (``_engine.conv2d``) of channels_last ``x`` with
    ``kernel`` ``(kh, kw, in, out)`` (its spatial axes reversed first when ``flip``: a true
    convolution), or None where the engine has none fit to run it or a pad is symbolic.
    Uneven pads (TensorFlow's 'same') pad ``x`` by the difference first."""
    if _engine.conv2d is None or _bany(_is_engine_tensor(p) for pair in pads for p in pair):
        return None
    even = [_bmin(int(b), int(a)) for b, a in pads]
    extra = [(int(b) - m, int(a) - m) for (b, a), m in zip(pads, even)]
    xp = x_cl
    if _bany(b or a for b, a in extra):
        xp = _pad(x_cl, [(0, 0)] + extra + [(0, 0)], 0.)
    out = _engine.conv2d(xp, kernel, strides, dilation, even, flip)
    if out is None:
        return None
    s_in, ks = _known_shape(x_cl), _known_shape(kernel)
    spatial = tuple(shape_rules.conv_output_length(
        None if s_in[i + 1] is None else s_in[i + 1] + int(pads[i][0]) + int(pads[i][1]),
        ks[i], 'valid', strides[i], dilation[i]) for i in range(2))
    return _with_shape(out, (s_in[0],) + spatial + (ks[-1],))


def _depthwise_conv(x_cl, kernel, strides, dilation, pads):
    """N-d depthwise convolution: kernel ``(*K, in, mult)`` gives ``in * mult``
    channels, channel ``c * mult + m``."""
    n = x_cl.ndim - 2
    ks = _known_shape(kernel)
    cin, mult = ks[-2], ks[-1]
    cols = _patches(x_cl, ks[:n], strides, dilation, pads)
    stacked = T.stack(cols, axis=n + 1)  # (B, *O, nK, C)
    w = T.reshape(kernel, (int(np.prod(ks[:n])), cin, mult), ndim=3)
    prod_ = stacked.dimshuffle(list(range(n + 3)) + ['x']) * w
    out = T.sum(prod_, axis=n + 1)  # (B, *O, C, M)
    dims = [out.shape[i] for i in range(n + 1)] + [cin * mult]
    out = T.reshape(out, T.stack(dims), ndim=n + 2)
    s = _known_shape(cols[0])
    return _with_shape(out, s[:-1] + (cin * mult,))


#: Theano's 'full' convolution (zero padding of the dilated kernel's length - 1 on each
#: side), which Keras 2.3.1's Theano backend accepts for every convolution (not pooling)
_EXTRA_CONV_PADDINGS = ('full',)


def _conv_args(x, kernel, n, strides, padding, data_format, dilation_rate, name,
               allow_causal=False):
    x = _to_tensor(x)
    kernel = _to_tensor(kernel)
    data_format = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal, _EXTRA_CONV_PADDINGS)
    strides = shape_rules.normalize_tuple(strides, n, 'strides')
    dilation = shape_rules.normalize_tuple(dilation_rate, n, 'dilation_rate')
    return x, kernel, data_format, padding, strides, dilation


def _flip_kernel(kernel, n):
    """``kernel`` reversed along its ``n`` leading (spatial) axes, in the graph.

    Keras' Theano backend computes ``conv1d/2d/3d`` (and their transposes)
    as true convolutions (Theano's ``filter_flip=True``): the spatial axes
    of the kernel are flipped relative to TensorFlow's and CNTK's
    cross-correlation.  ``keras_backend.utils.convert_kernel`` converts
    kernels between the two conventions."""
    idx = tuple([_bslice(None, None, -1)] * n + [_bslice(None)] * (kernel.ndim - n))
    return _with_shape(kernel[idx], _known_shape(kernel))


def _conv_nd(x, kernel, n, strides, padding, data_format, dilation_rate, name):
    x, kernel, data_format, padding, strides, dilation = _conv_args(
        x, kernel, n, strides, padding, data_format, dilation_rate, name, n == 1)
    ks = _check_kernel(kernel, n + 2, name)
    x_cl = _to_channels_last(x, data_format)
    pads = _spatial_pads(x_cl, ks[:n], strides, dilation, padding)
    # the engine's op flips the kernel itself (as Keras' Theano backend has it do): the
    # reversed kernel's gradient is then a reversed slice, not a scatter into a new array
    out = _native_conv2d(x_cl, kernel, strides, dilation, pads, True) if n == 2 else None
    if out is None:
        out = _conv_core(x_cl, _flip_kernel(kernel, n), strides, dilation, pads)
    return _from_channels_last(out, data_format)


@records_keras_shape
def conv1d(x, kernel, strides=1, padding='valid', data_format=None, dilation_rate=1):
    """im2col: strided slices and ``tensordot``. A true convolution, as in Keras' Theano
    backend: the kernel is flipped relative to TensorFlow's and CNTK's
    cross-correlation (``keras_backend.utils.convert_kernel`` converts between them)."""
    return _conv_nd(x, kernel, 1, strides, padding, data_format, dilation_rate, 'conv1d')


@records_keras_shape
def conv2d(x, kernel, strides=(1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1)):
    """im2col: strided slices and ``tensordot``; on Theano 1.0.5 with a BLAS, Theano's own
    ``conv2d`` (``CorrMM``). A true convolution, as in Keras' Theano
    backend: the kernel is flipped relative to TensorFlow's and CNTK's
    cross-correlation (``keras_backend.utils.convert_kernel`` converts between them)."""
    return _conv_nd(x, kernel, 2, strides, padding, data_format, dilation_rate, 'conv2d')


def _conv_transpose(x, kernel, output_shape, n, strides, padding, data_format,
                    dilation_rate, name):
    x, kernel, data_format, padding, strides, dilation = _conv_args(
        x, kernel, n, strides, padding, data_format, dilation_rate, name)
    ks = _check_kernel(kernel, n + 2, name)
    if _is_engine_tensor(output_shape):
        raise ValueError('%s: output_shape must be a tuple of ints (batch may be None)' % name)
    output_shape = shape_rules.sizes(output_shape, _is_engine_tensor, 'output_shape')
    if data_format == 'channels_first':
        given = [output_shape[0]] + output_shape[2:] + [output_shape[1]]
    else:
        given = list(output_shape)
    x_cl = _to_channels_last(x, data_format)
    in_s = _known_shape(x_cl)
    # Sizes given as tensors (Keras' Conv2DTranspose computes them from K.shape(x)):
    # the transposed conv's length for x's static size, checked against the tensor
    # when the function runs.
    # With 'valid' and 'full' padding a spatial size given as a tensor is used as it is (the
    # forward convolution's padding does not depend on it), so Keras' output_padding works. PyTensor
    # only: Theano 1.0.5 (no static sizes in its types) did not finish compiling that graph;
    # there a size that folds to an int from the static sizes it reads is used as that int.
    out_cl, run_checks = [given[0] if isinstance(given[0], int) else None], []
    z_sizes = {}
    for i, d in enumerate(given[1:]):
        if _is_engine_tensor(d) and not _engine.HAS_STATIC_SHAPES:
            # Theano 1.0.5: a size computed from static sizes (Keras' Conv2DTranspose
            # computes it from K.shape(x), output_padding included) is used as that int
            folded = _engine.static_int(d)
            d = d if folded is None else folded
        if not _is_engine_tensor(d):
            out_cl.append(d)
            continue
        if i < n and padding in ('valid', 'full') and _engine.HAS_STATIC_SHAPES:
            out_cl.append(None)
            z_sizes[i] = d
            continue
        if i == n:
            static = ks[-2]
        elif in_s[i + 1] is not None:
            static = shape_rules.deconv_length(in_s[i + 1], ks[i], strides[i], padding,
                                               dilation[i])
        else:
            static = None
        out_cl.append(static)
        if static is not None:
            run_checks.append((T.eq(d, static), static))
    out_cl = tuple(out_cl)
    # sizes given as tensors are known only here, once the engine has folded them
    if _bany(d is None for i, d in enumerate(out_cl[1:]) if i not in z_sizes):
        raise ValueError('%s: output_shape spatial and channel sizes must be ints, got %r'
                         % (name, output_shape))
    if out_cl[-1] != ks[-2]:
        raise ValueError('%s: output_shape has %d channels, kernel (k..., out, in) has %d'
                         % (name, out_cl[-1], ks[-2]))
    pads = []
    for i in range(n):
        if i in z_sizes:   # the forward convolution's padding, whatever the length
            pads.append(shape_rules.padding_amounts(None, ks[i], strides[i], dilation[i],
                                                    padding))
        elif in_s[i + 1] is not None:
            pads.append(shape_rules.deconv_crop(out_cl[i + 1], in_s[i + 1], ks[i], strides[i],
                                                padding, dilation[i]))
        else:
            pads.append(shape_rules.padding_amounts(out_cl[i + 1], ks[i], strides[i], dilation[i],
                                                    padding))
    batch = x_cl.shape[0]
    # The transposed convolution is the gradient (adjoint) of the forward
    # convolution taking an ``output_shape`` image to ``x``'s shape.
    z = T.zeros([batch] + [z_sizes.get(i, d) for i, d in enumerate(out_cl[1:])],
                dtype=x.dtype)
    forward = _conv_core(z, _flip_kernel(kernel, n), strides, dilation, pads)
    out = T.grad(T.sum(forward * x_cl), z)
    for condition, static in run_checks:
        out = _engine.assert_true(out, condition, '%s: an output_shape size given as a tensor '
                                  'differs from %d, the length for the input size' % (name, static))
    out = _with_shape(out, (in_s[0] if out_cl[0] is None else out_cl[0],) + out_cl[1:])
    return _from_channels_last(out, data_format)


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """The gradient (adjoint) of ``conv2d`` w.r.t. its input, so the kernel is
    flipped relative to TensorFlow and CNTK, as in ``conv2d``."""
    return _conv_transpose(x, kernel, output_shape, 2, strides, padding, data_format,
                           dilation_rate, 'conv2d_transpose')


def _depthwise(x, kernel, n, strides, padding, data_format, dilation_rate, name):
    x, kernel, data_format, padding, strides, dilation = _conv_args(
        x, kernel, n, strides, padding, data_format, dilation_rate, name, n == 1)
    ks = _check_kernel(kernel, n + 2, name)
    x_cl = _to_channels_last(x, data_format)
    pads = _spatial_pads(x_cl, ks[:n], strides, dilation, padding)
    return x_cl, _depthwise_conv(x_cl, kernel, strides, dilation, pads), data_format


def _pointwise(x_cl, pointwise_kernel, name):
    pk = _to_tensor(pointwise_kernel)
    ks = _known_shape(pk)
    # the 1x1 shape and known sizes this build needs; the shared rules check the channels
    if _bany(d != 1 for d in ks[:-2]) or ks[-2] is None or ks[-1] is None:
        raise ValueError('%s: pointwise_kernel must be (1, ..., in * multiplier, out), got %r'
                         % (name, ks))
    w = T.reshape(pk, (ks[-2], ks[-1]), ndim=2)
    out = T.tensordot(x_cl, w, axes=[[x_cl.ndim - 1], [0]])
    return _with_shape(out, _known_shape(x_cl)[:-1] + (ks[-1],))


def separable_conv1d(x, depthwise_kernel, pointwise_kernel, strides=1, padding='valid',
                     data_format=None, dilation_rate=1):
    """The depthwise step of ``depthwise_conv2d``, then ``tensordot`` with the
    pointwise kernel."""
    _, out, data_format = _depthwise(x, depthwise_kernel, 1, strides, padding, data_format,
                                     dilation_rate, 'separable_conv1d')
    return _from_channels_last(_pointwise(out, pointwise_kernel, 'separable_conv1d'), data_format)


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """The depthwise step of ``depthwise_conv2d``, then ``tensordot`` with the
    pointwise kernel."""
    _, out, data_format = _depthwise(x, depthwise_kernel, 2, strides, padding, data_format,
                                     dilation_rate, 'separable_conv2d')
    return _from_channels_last(_pointwise(out, pointwise_kernel, 'separable_conv2d'), data_format)


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """Strided slices and a broadcast product: a cross-correlation (no kernel flip), as
    Keras' Theano backend, which pre-flips its depthwise kernels."""
    _, out, data_format = _depthwise(x, depthwise_kernel, 2, strides, padding, data_format,
                                     dilation_rate, 'depthwise_conv2d')
    return _from_channels_last(out, data_format)


@records_keras_shape
def conv3d(x, kernel, strides=(1, 1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1, 1)):
    """im2col: strided slices and ``tensordot``. A true convolution, as in Keras' Theano
    backend: the kernel is flipped relative to TensorFlow's and CNTK's
    cross-correlation (``keras_backend.utils.convert_kernel`` converts between them)."""
    return _conv_nd(x, kernel, 3, strides, padding, data_format, dilation_rate, 'conv3d')


def conv3d_transpose(x, kernel, output_shape, strides=(1, 1, 1), padding='valid',
                     data_format=None):
    """The gradient (adjoint) of ``conv3d`` w.r.t. its input, so the kernel is
    flipped relative to TensorFlow and CNTK, as in ``conv3d``."""
    return _conv_transpose(x, kernel, output_shape, 3, strides, padding, data_format,
                           (1, 1, 1), 'conv3d_transpose')


def _pool(x, pool_size, strides, padding, data_format, pool_mode, n, name):
    x = _to_tensor(x)
    data_format = normalize_data_format(data_format)
    pool_size = shape_rules.normalize_tuple(pool_size, n, 'pool_size')
    strides = shape_rules.normalize_tuple(strides if strides is not None else pool_size, n, 'strides')
    padding = shape_rules.normalize_padding(padding)
    pool_mode = shape_rules.normalize_pool_mode(pool_mode)
    ones = (1,) * n
    x_cl = _to_channels_last(x, data_format)
    pads = _spatial_pads(x_cl, pool_size, strides, ones, padding)
    static = _ball(not _is_engine_tensor(b) and not _is_engine_tensor(a) for b, a in pads)
    s_pad = [None if d is None else d + int(b) + int(a) if static else None
             for d, (b, a) in zip(_known_shape(x_cl)[1:-1], pads)]
    if static and _engine.pool is not None and _bmax(pool_size) > 1 and \
            _ball(d is None or d >= k for d, k in zip(s_pad, pool_size)):
        # the engine's own op: one node (and its gradient one) where the slices below are
        # a slice per window offset, their stack and maximum / sum; 'same' pads first
        fill = -np.inf if pool_mode == 'max' else 0.
        if pool_mode == 'max' or _ball(b == 0 and a == 0 for b, a in pads):
            xp = _pad(x_cl, [(0, 0)] + [(int(b), int(a)) for b, a in pads] + [(0, 0)], fill)
            out = _engine.pool(xp, pool_size, strides, pool_mode)
            if out is not None:
                s = _known_shape(xp)
                spatial = tuple(None if s[i + 1] is None else
                                (s[i + 1] - pool_size[i]) // strides[i] + 1 for i in range(n))
                out = _with_shape(out, (s[0],) + spatial + (s[-1],))
                return _from_channels_last(out, data_format)
    if pool_mode == 'max':
        cols = _patches(x_cl, pool_size, strides, ones, pads, fill=-np.inf)
        out = cols[0] if len(cols) == 1 else T.max(T.stack(cols, axis=0), axis=0)
    else:
        cols = _patches(x_cl, pool_size, strides, ones, pads, fill=0.)
        total = cols[0]
        for c in cols[1:]:
            total = total + c
        if _ball(not _is_engine_tensor(b) and not _is_engine_tensor(a) and b == 0 and a == 0
                 for b, a in pads):
            out = total / _constant_like(total, float(np.prod(pool_size)))
        else:
            corner = [_bslice(None, 1)] + [_bslice(None)] * n + [_bslice(None, 1)]
            ones_t = T.ones_like(x_cl[tuple(corner)])
            counts = _patches(ones_t, pool_size, strides, ones, pads, fill=0.)
            count = counts[0]
            for c in counts[1:]:
                count = count + c
            count = _engine.broadcastable_axes(count, [0, n + 1])
            out = total / count
    out = _with_shape(out, _known_shape(cols[0]))
    return _from_channels_last(out, data_format)


@records_keras_shape
def pool2d(x, pool_size, strides=(1, 1), padding='valid', data_format=None, pool_mode='max'):
    """The engine's pooling op where it has one (Theano 1.0.5: ``Pool``; 'same' max pooling
    pads with -inf first), else strided slices; 'same' average pooling divides by the count
    of real cells (strided slices)."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 2, 'pool2d')


@records_keras_shape
def pool3d(x, pool_size, strides=(1, 1, 1), padding='valid', data_format=None,
           pool_mode='max'):
    """As ``pool2d``, over three spatial axes."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 3, 'pool3d')


@records_keras_shape
def bias_add(x, bias, data_format=None):
    x = _to_tensor(x)
    bias = _to_tensor(bias)
    data_format = normalize_data_format(data_format)
    bs = _known_shape(bias)
    channel_axis = 1 if (data_format == 'channels_first' and x.ndim > 2) else x.ndim - 1
    if len(bs) == 1:
        return x + _broadcast_param(bias, x.ndim, channel_axis)
    if channel_axis == 1:
        b = T.reshape(bias, (1, bs[-1]) + tuple(bs[:-1]), ndim=x.ndim)
    else:
        b = bias.dimshuffle(['x'] + list(range(bias.ndim)))
    return x + b


# ---------------------------------------------------------------------------
# Random
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# CTC
# ---------------------------------------------------------------------------

def ctc_label_dense_to_sparse(labels, label_lengths):
    """The engine's csr sparse matrix (int32)."""
    labels = T.cast(_to_tensor(labels, 'int32'), 'int32')
    lengths = T.cast(T.flatten(_to_tensor(label_lengths, 'int32')), 'int64')
    width = labels.shape[1]
    lengths = T.minimum(lengths, width)
    mask = T.lt(T.arange(width).dimshuffle('x', 0), lengths.dimshuffle(0, 'x'))
    rows, cols = T.nonzero(mask)
    data = labels[rows, cols]
    indptr = T.concatenate([T.zeros((1,), dtype='int64'), T.cumsum(lengths)])
    out = _engine.sparse.CSR(data, T.cast(cols, 'int32'), T.cast(indptr, 'int32'),
                             T.cast(labels.shape, 'int32'))
    out._keras_shape = tuple(_known_shape(labels))
    return out


_NEG = -1e30


def _lse2(a, b):
    m = T.maximum(a, b)
    return m + T.log(T.exp(a - m) + T.exp(b - m))


def _last_or(seq, init):
    """Last entry of a scan result, or ``init`` when the scan ran 0 steps."""
    padded = T.concatenate([init.dimshuffle(['x'] + list(range(init.ndim))), seq], axis=0)
    return padded[-1]


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """Log-space forward recursion in engine ``scan``."""
    y_pred = _to_tensor(y_pred)
    labels = T.cast(_to_tensor(y_true, 'int32'), 'int64')
    in_len = T.cast(T.flatten(_to_tensor(input_length, 'int32')), 'int64')
    lab_len = T.cast(T.flatten(_to_tensor(label_length, 'int32')), 'int64')
    dt = y_pred.dtype
    logp = _log_softmax(T.log(y_pred + _constant_like(y_pred, common.epsilon())), 2)
    n_classes = y_pred.shape[2]
    blank = n_classes - 1
    batch = y_pred.shape[0]
    max_lab = labels.shape[1]
    labels = T.clip(labels, 0, blank)
    ext_len = 2 * max_lab + 1
    ext = T.alloc(T.cast(blank, 'int64'), batch, ext_len)
    ext = T.set_subtensor(ext[:, 1::2], labels)
    # skip transitions s-2 -> s: allowed when ext[s] is not blank and differs from ext[s-2]
    prev2 = T.concatenate([T.alloc(T.cast(-1, 'int64'), batch, 2), ext[:, :-2]], axis=1)
    skip = T.and_(T.neq(ext, blank), T.neq(ext, prev2))
    neg = _constant_like(logp, _NEG)
    rows = T.arange(batch).dimshuffle(0, 'x')
    lp_seq = logp.dimshuffle(1, 0, 2)  # (T, B, C)
    s_idx = T.arange(ext_len).dimshuffle('x', 0)
    init = T.switch(T.lt(s_idx, 2), lp_seq[0][rows, ext], neg)
    init = T.switch(T.gt(in_len, 0).dimshuffle(0, 'x'), init,
                    T.switch(T.eq(s_idx, 0), T.zeros_like(init), neg))

    def _step(lp_t, t, alpha):
        e = lp_t[rows, ext]
        a1 = T.concatenate([T.alloc(neg, batch, 1), alpha[:, :-1]], axis=1)
        a2 = T.concatenate([T.alloc(neg, batch, 2), alpha[:, :-2]], axis=1)
        a2 = T.switch(skip, a2, neg)
        m = T.maximum(T.maximum(alpha, a1), a2)
        total = m + T.log(T.exp(alpha - m) + T.exp(a1 - m) + T.exp(a2 - m))
        new = T.maximum(total + e, neg)
        active = T.lt(t, in_len).dimshuffle(0, 'x')
        return T.switch(active, new, alpha)

    steps = T.arange(1, lp_seq.shape[0])
    alphas = _scan(_step, sequences=[lp_seq[1:], steps], outputs_info=[init])
    final = _last_or(alphas, init)
    b_idx = T.arange(batch)
    end = final[b_idx, 2 * lab_len]
    end_m1 = final[b_idx, T.maximum(2 * lab_len - 1, 0)]
    end_m1 = T.switch(T.gt(lab_len, 0), end_m1, neg)
    loglik = _lse2(end, end_m1)
    return T.cast(-loglik, dt).dimshuffle(0, 'x')


class _CTCBeamSearchOp(_engine.Op):
    """Graph op: CTC prefix beam search over log-probabilities.

    Inputs: ``log_probs`` (batch, T, C) float (already log-softmax-normalised),
    ``lengths`` (batch,) int.  Outputs: ``top_paths`` int64 matrices
    (batch, max_len_i) padded with -1, then ``log_prob`` (batch, top_paths).
    Blank is class C - 1.  ``perform`` runs the search with numpy: this Op is
    the engine-level implementation (no engine offers one).
    """

    __props__ = ('beam_width', 'top_paths', 'merge_repeated')

    def __init__(self, beam_width, top_paths, merge_repeated):
        self.beam_width = int(beam_width)
        self.top_paths = int(top_paths)
        self.merge_repeated = bool(merge_repeated)
        super(_CTCBeamSearchOp, self).__init__()

    def make_node(self, log_probs, lengths):
        log_probs = T.as_tensor_variable(log_probs)
        lengths = T.as_tensor_variable(lengths)
        batch = (_engine.static_shape(log_probs) or (None,))[0]
        outs = [_engine.input_tensor('int64', (batch, None)) for _ in range(self.top_paths)]
        outs.append(_engine.input_tensor(log_probs.dtype, (batch, self.top_paths)))
        if not _engine.HAS_STATIC_SHAPES:  # sizes the engine's types cannot hold
            for o in outs[:-1]:
                o._keras_shape = (batch, None)
            outs[-1]._keras_shape = (batch, self.top_paths)
        return _engine.Apply(self, [log_probs, lengths], outs)

    def perform(self, node, inputs, output_storage, params=None):
        log_probs, lengths = inputs
        paths, scores = ctc_search.prefix_beam_search(
            log_probs, lengths, self.beam_width, self.top_paths, self.merge_repeated)
        for k in range(self.top_paths):
            output_storage[k][0] = ctc_search.pad_labellings(paths[k], np.int64)
        output_storage[self.top_paths][0] = scores.astype(log_probs.dtype)

    def grad(self, inputs, output_grads):
        from_grad = th.gradient.grad_undefined
        return [from_grad(self, 0, inputs[0]), from_grad(self, 1, inputs[1])]


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1,
               merge_repeated=False):
    """Greedy: engine tensor ops; beam search: a custom graph ``Op`` (no engine offers
    one) running ``ctc_search.prefix_beam_search``."""
    y_pred = _to_tensor(y_pred)
    lengths = T.cast(T.flatten(_to_tensor(input_length, 'int32')), 'int64')
    logits = T.log(y_pred + _constant_like(y_pred, common.epsilon()))
    if greedy:
        best = T.argmax(logits, axis=2)  # (B, T)
        best_val = T.max(logits, axis=2)
        n_t = y_pred.shape[1]
        t_idx = T.arange(n_t).dimshuffle('x', 0)
        valid = T.lt(t_idx, lengths.dimshuffle(0, 'x'))
        log_prob = -T.sum(T.switch(valid, best_val, T.zeros_like(best_val)), axis=1,
                          keepdims=True)
        blank = y_pred.shape[2] - 1
        prev = T.concatenate([T.alloc(T.cast(-1, 'int64'), best.shape[0], 1), best[:, :-1]],
                             axis=1)
        keep = T.and_(T.and_(T.neq(best, blank), T.neq(best, prev)), valid)
        keep_i = T.cast(keep, 'int64')
        pos = T.cumsum(keep_i, axis=1) - 1
        width = T.maximum(T.max(T.sum(keep_i, axis=1)), 0)
        col = T.switch(keep, pos, width)
        rows = T.arange(best.shape[0]).dimshuffle(0, 'x') + T.zeros_like(best)
        out = T.alloc(T.cast(-1, 'int64'), best.shape[0], width + 1)
        out = T.set_subtensor(out[rows.flatten(), col.flatten()],
                              T.switch(keep, best, -1).flatten())
        return [out[:, :width]], log_prob
    beam_width = int(beam_width)
    top_paths = int(top_paths)
    log_probs = _log_softmax(logits, 2)
    outs = _CTCBeamSearchOp(beam_width, top_paths, merge_repeated)(log_probs, lengths)
    return list(outs[:top_paths]), outs[top_paths]


# ---------------------------------------------------------------------------
# Higher-order functions
# ---------------------------------------------------------------------------

def map_fn(fn, elems, name=None, dtype=None):
    """Engine ``scan``."""
    elems = _to_tensor(elems)
    out = _scan(fn, sequences=[elems])
    if dtype is not None:
        out = T.cast(out, _normalize_dtype(dtype, 'map_fn'))
    s = list(_known_shape(out))
    s[0] = _known_shape(elems)[0]
    return _with_shape(out, s)


def _fold(fn, elems, initializer, backwards):
    elems = _to_tensor(elems)
    if backwards:
        elems = elems[::-1]
    if initializer is None:
        initializer = elems[0]
        elems = elems[1:]
    else:
        initializer = _to_tensor(initializer)

    def _step(x, acc):
        res = fn(acc, x)
        return T.cast(res, acc.dtype)

    out = _scan(_step, sequences=[elems], outputs_info=[initializer])
    return out[-1]


def foldl(fn, elems, initializer=None, name=None):
    """Engine ``scan``; each result is cast to the accumulator's dtype."""
    return _fold(fn, elems, initializer, False)


def foldr(fn, elems, initializer=None, name=None):
    """Engine ``scan``; each result is cast to the accumulator's dtype."""
    return _fold(fn, elems, initializer, True)


# ---------------------------------------------------------------------------
# Locally connected
# ---------------------------------------------------------------------------

def _local_patches(inputs, kernel_size, strides, data_format, n, name):
    inputs = _to_tensor(inputs)
    data_format = normalize_data_format(data_format)
    kernel_size = shape_rules.normalize_tuple(kernel_size, n, 'kernel_size')
    strides = shape_rules.normalize_tuple(strides, n, 'strides')
    x_cl = _to_channels_last(inputs, data_format)
    cols = _patches(x_cl, kernel_size, strides, (1,) * n, [(0, 0)] * n)
    return T.stack(cols, axis=n + 1), data_format  # (B, *O, nK, C)


def _local_apply(patches, kernel, n_locations, feat):
    """patches (B, L, feat), kernel (L, feat, F) -> (B, L, F) (batched dot over L)."""
    p = patches.dimshuffle(1, 0, 2)
    out = _engine.batched_dot(p, kernel)
    return out.dimshuffle(1, 0, 2)


def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """Strided slices and a batched product per output location."""
    kernel = _to_tensor(kernel)
    ks = _check_kernel(kernel, 3, 'local_conv1d')
    stacked, data_format = _local_patches(inputs, kernel_size, strides, data_format, 1,
                                          'local_conv1d')
    b = stacked.shape[0]
    p = T.reshape(stacked, T.stack([b, ks[0], ks[1]]), ndim=3)
    out = _local_apply(p, kernel, ks[0], ks[1])
    out = _with_shape(out, (_known_shape(inputs)[0], ks[0], ks[2]))
    return _from_channels_last(out, data_format)


def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """Strided slices and a batched product per output location."""
    kernel = _to_tensor(kernel)
    ks = _check_kernel(kernel, 3, 'local_conv2d')
    rows, cols_ = shape_rules.normalize_tuple(output_shape, 2, 'output_shape')
    stacked, data_format = _local_patches(inputs, kernel_size, strides, data_format, 2,
                                          'local_conv2d')
    if data_format == 'channels_first':
        stacked = stacked.dimshuffle(0, 1, 2, 4, 3)  # (B, O1, O2, C, nK)
    b = stacked.shape[0]
    p = T.reshape(stacked, T.stack([b, rows * cols_, ks[1]]), ndim=3)
    out = _local_apply(p, kernel, ks[0], ks[1])  # (B, L, F)
    out = T.reshape(out, T.stack([b, rows, cols_, ks[2]]), ndim=4)
    out = _with_shape(out, (_known_shape(inputs)[0], rows, cols_, ks[2]))
    return _from_channels_last(out, data_format)


# ---------------------------------------------------------------------------
# Names of Keras 2.3.1's own Theano module that Keras 2 libraries import from it
# (``from keras.backend.theano_backend import _preprocess_conv2d_input``, keras-contrib):
# this adapter is ``keras.backend.theano_backend`` when Keras runs on it
# (keras2_compat.adopt_engine_name).
# ---------------------------------------------------------------------------

def _adopted_by_keras2():
    """Keras 2.3.1 is loading this adapter as its backend: the Theano names Keras 2 libraries
    import (``from theano import tensor as T``) are made importable (on PyTensor, served by
    PyTensor unless a real ``theano`` imports)."""
    _engine.provide_theano_names()


def _preprocess_conv2d_input(x, data_format):
    """A 4-D image batch in the engine's own layout, channels first: ``x`` as it is for
    ``'channels_first'``, transposed ``(0, 3, 1, 2)`` for ``'channels_last'``."""
    x = _to_tensor(x)
    return x.dimshuffle(0, 3, 1, 2) if data_format == 'channels_last' else x


def _postprocess_conv2d_output(conv_out, x, padding, kernel_shape, strides, data_format):
    """A channels-first 2-D convolution's output ``conv_out`` of input ``x`` (channels first)
    brought back to Keras' layout: for ``'same'`` padding cut to ``ceil(size / stride)`` rows
    and columns (a 'half' border with an even kernel gives one more), then transposed back to
    channels_last when ``data_format`` says so. ``kernel_shape`` (channels-first, ints or
    symbolic) is accepted for the signature's sake: the cut does not depend on it."""
    if padding == 'same':
        rows = (x.shape[2] + strides[0] - 1) // strides[0]
        cols = (x.shape[3] + strides[1] - 1) // strides[1]
        conv_out = conv_out[:, :, :rows, :cols]
    return conv_out.dimshuffle(0, 2, 3, 1) if data_format == 'channels_last' else conv_out
