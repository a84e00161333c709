"""The Keras 2 backend API on JAX (Python 3.11+): the API functions, engine-level.

One function per API name, in ``api.SECTIONS`` order, each building graph nodes with the
machinery of :mod:`.core` (its docstring gives the design: nodes, static shapes, compiled
functions). They are unchecked and call each other directly; the package
(``keras_backend.jax_backend``) puts each behind the shared argument checks.
"""
import contextlib
import functools
import itertools
import math as _math
import os
import sys

import numpy as np

from .. import common, generic, shape_rules
from ..common import *  # noqa: F401,F403  (the shared config API)
from .core import (
    ENGINE, ENGINE_VERSION, jax, jnp,
    _builtin_max, _builtin_min, _builtin_any, _builtin_all,
    # the graph and its evaluation
    Tensor, Placeholder, Variable, _Context, _IDS, _ONE, _apply, _apply_multi, _context_op,
    _dependents, _dtype_name, _flatten, _is_array_tree, _multi_node, _node, _outputs,
    _operand, _promoting, _shaped_node, _walk,
    # conversions, random keys, session state, updates, compiled functions
    _axis_arg, _holds_graph_values, _ndim, _normalize_dtype, _size_tuple, _static_shape,
    _to_tensor, _random, _seed_key, _EVAL_CACHE, _LEARNING_PHASE, _SESSION, _CONTROLS,
    _Update, Function, _LOOP_DEPTH, _tracing_loop_body,
    records_keras_shape,
    # what the machinery builds itself (the ``int_shape``, ``dtype``, ``cast`` and ``stack``
    # of the API are bound below, in their sections)
    _make_update, _trim_decoded,
)
from . import core
from jax import lax  # noqa: E402  (core imported jax, or said how to install it)

#: this module: the engine-level functions that the generic ones (``generic``) call
_K = sys.modules[__name__]


# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------

def backend():
    """The engine's name, 'jax'."""
    return 'jax'


# ---------------------------------------------------------------------------
# Session and learning phase
# ---------------------------------------------------------------------------
def clear_session():
    """Resets uids and the fixed learning phase, drops the cached ``eval`` programs and
    JAX's compiled programs (``jax.clear_caches``): a process that builds many models
    would otherwise keep every executable mapped (XLA's CPU code can exhaust the
    kernel's memory-map limit)."""
    common._reset_session_state()
    _EVAL_CACHE.clear()
    jax.clear_caches()


def get_session():
    """JAX has no session: a stand-in whose ``run(fetches, feed_dict=None)`` evaluates
    tensors through ``function``."""
    return _SESSION[0]


def set_session(session):
    """Replaces the stand-in session; any object with a ``run(fetches, feed_dict)``."""
    if not callable(getattr(session, 'run', None)):
        raise ValueError('set_session: expected an object with a run(fetches, feed_dict) '
                         'method, got %r' % (session,))
    _SESSION[0] = session


def learning_phase():
    """The symbolic phase is an int32 scalar placeholder named ``keras_learning_phase``
    (0 when not fed); a ``function`` that is fed it compiles one program per phase."""
    fixed = common._fixed_learning_phase()
    if fixed is not None:
        return fixed
    return _LEARNING_PHASE


@contextlib.contextmanager
def name_scope(name):
    """Names the variables and placeholders made inside (``scope/name``); JAX has no
    graph names of its own."""
    with common._name_scope_stack(name):
        yield name


# ---------------------------------------------------------------------------
# Tensors and variables
# ---------------------------------------------------------------------------

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
    value = jnp.asarray(np.array(value, copy=True) if not isinstance(value, jax.Array)
                        else value, dtype=dtype)
    name = common._scoped_name(name, 'variable') or 'variable_%d' % next(_IDS)
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
    if shape is not None:
        shape = tuple(int(s) for s in shape)
        if arr.size == 1:
            arr = np.full(shape, arr.reshape(()), dtype=dtype)
        else:
            arr = arr.reshape(shape)
    return jnp.asarray(arr)


def is_keras_tensor(x):
    """True when ``x`` carries the ``_keras_history`` that Keras layers set."""
    if not is_tensor(x):
        raise ValueError('is_keras_tensor: unexpectedly found an instance of type %s; '
                         'expected a symbolic tensor' % (type(x).__name__,))
    return hasattr(x, '_keras_history')


def is_tensor(x):
    """Graph tensors, variables and ``jax.Array`` values."""
    return isinstance(x, (Tensor, jax.Array))


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    """A graph input; ``None`` sizes are unknown until fed. ``sparse=True`` takes scipy
    sparse feeds, held dense."""
    dtype = _normalize_dtype(dtype)
    if shape is None:
        if ndim is None:
            raise ValueError('placeholder: give shape or ndim (JAX needs the rank)')
        shape = (None,) * int(ndim)
    shape = tuple(None if s is None else int(s) for s in shape)
    name = common._scoped_name(name, 'placeholder') or 'placeholder_%d' % next(_IDS)
    x = Placeholder(shape, dtype, name=name, sparse=sparse)
    x._keras_shape = shape
    x._uses_learning_phase = False
    return x


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


# ---------------------------------------------------------------------------
# Variable updates
# ---------------------------------------------------------------------------

def update(x, new_x):
    return _make_update(x, new_x)


def update_add(x, increment):
    return _make_update(x, x + _to_tensor(increment))


def update_sub(x, decrement):
    return _make_update(x, x - _to_tensor(decrement))


def moving_average_update(x, value, momentum):
    """``x <- x * momentum + value * (1 - momentum)``."""
    value = _to_tensor(value)
    return _make_update(x, x * momentum + value * (1. - momentum))


# ---------------------------------------------------------------------------
# Math
# ---------------------------------------------------------------------------

def _dot(a, b):
    if b.ndim <= 2 or a.ndim <= 1:
        return jnp.tensordot(a, b, axes=([a.ndim - 1], [0])) if b.ndim <= 2 \
            else jnp.tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))
    return jnp.tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))


@records_keras_shape
def dot(x, y):
    """``jnp.tensordot`` over x's last axis and y's second-to-last (its only, 1-D)."""
    return _apply(_dot, _to_tensor(x), _to_tensor(y))


@records_keras_shape
def batch_dot(x, y, axes=None):
    """``jnp.einsum`` per sample (``lax.dot_general`` with a batch axis)."""
    x, y = _to_tensor(x), _to_tensor(y)
    ax, ay = shape_rules.batch_dot_axes(_ndim(x), _ndim(y), axes)

    def op(a, b):
        out = lax.dot_general(a, b, (((ax,), (ay,)), ((0,), (0,))))
        if out.ndim == 1:
            out = out.reshape((-1, 1))
        return out
    return _apply(op, x, y)


@records_keras_shape
def transpose(x):
    return _apply(jnp.transpose, _to_tensor(x))


@records_keras_shape
def gather(reference, indices):
    """``jnp.take`` along axis 0."""
    reference, indices = _to_tensor(reference), _to_tensor(indices)

    def op(r, i):
        if not jnp.issubdtype(jnp.asarray(i).dtype, jnp.integer):
            i = jnp.asarray(i).astype('int32')
        return jnp.take(r, i, axis=0, mode='clip')
    return _apply(op, reference, indices)


def _reduce(fn, x, axis, keepdims, to_float=False):
    x = _to_tensor(x)
    ax = _axis_arg(axis, _ndim(x))

    def op(v):
        if to_float and not jnp.issubdtype(v.dtype, jnp.floating):
            v = v.astype(floatx())
        return fn(v, axis=ax, keepdims=keepdims)
    return _apply(op, x)


@records_keras_shape
def max(x, axis=None, keepdims=False):
    return _reduce(jnp.max, x, axis, keepdims)


@records_keras_shape
def min(x, axis=None, keepdims=False):
    return _reduce(jnp.min, x, axis, keepdims)


@records_keras_shape
def sum(x, axis=None, keepdims=False):
    return _reduce(jnp.sum, x, axis, keepdims)


@records_keras_shape
def prod(x, axis=None, keepdims=False):
    return _reduce(jnp.prod, x, axis, keepdims)


def cumsum(x, axis=0):
    x = _to_tensor(x)
    return _apply(lambda v: jnp.cumsum(v, axis=_axis_arg(axis, v.ndim)), x)


def cumprod(x, axis=0):
    x = _to_tensor(x)
    return _apply(lambda v: jnp.cumprod(v, axis=_axis_arg(axis, v.ndim)), x)


@records_keras_shape
def var(x, axis=None, keepdims=False):
    return _reduce(jnp.var, x, axis, keepdims, to_float=True)


@records_keras_shape
def std(x, axis=None, keepdims=False):
    return _reduce(jnp.std, x, axis, keepdims, to_float=True)


@records_keras_shape
def mean(x, axis=None, keepdims=False):
    """``jnp.mean``; integer and bool inputs give floatx."""
    return _reduce(jnp.mean, x, axis, keepdims, to_float=True)


@records_keras_shape
def any(x, axis=None, keepdims=False):
    return _reduce(jnp.any, x, axis, keepdims)


@records_keras_shape
def all(x, axis=None, keepdims=False):
    return _reduce(jnp.all, x, axis, keepdims)


def argmax(x, axis=-1):
    x = _to_tensor(x)
    return _apply(lambda v: jnp.argmax(v, axis=_axis_arg(axis, v.ndim)), x)


def argmin(x, axis=-1):
    x = _to_tensor(x)
    return _apply(lambda v: jnp.argmin(v, axis=_axis_arg(axis, v.ndim)), x)


def _unary(fn, to_float=False):
    def api_fn(x):
        x = _to_tensor(x)
        if to_float:
            return _apply(lambda v: fn(v if jnp.issubdtype(v.dtype, jnp.inexact)
                                       else v.astype(floatx())), x)
        return _apply(fn, x)
    return api_fn


def square(x):
    return _unary(jnp.square)(x)


def abs(x):
    return _unary(jnp.abs)(x)


def sqrt(x):
    """``jnp.sqrt`` of ``max(x, 0)``, as Keras clips negative inputs."""
    return _unary(lambda v: jnp.sqrt(jnp.maximum(v, jnp.zeros((), v.dtype))),
                  to_float=True)(x)


def exp(x):
    return _unary(jnp.exp, to_float=True)(x)


def log(x):
    return _unary(jnp.log, to_float=True)(x)


def logsumexp(x, axis=None, keepdims=False):
    """``jax.nn.logsumexp`` (stable: the maximum is subtracted first)."""
    return _reduce(jax.nn.logsumexp, x, axis, keepdims, to_float=True)


def round(x):
    """``jnp.round``: halves to even."""
    return _unary(jnp.round)(x)


def sign(x):
    return _unary(jnp.sign)(x)


def pow(x, a):
    """``jnp.power``; a number exponent takes x's dtype unless x is integer and the
    exponent a float."""
    x = _to_tensor(x)
    if not isinstance(a, (Tensor, jax.Array)):
        arr = np.asarray(a)
        dt = np.dtype(dtype(x))
        if dt.kind == 'f' or arr.dtype.kind != 'f':
            arr = arr.astype(dt)
        a = arr
    return _apply(jnp.power, x, a)


def clip(x, min_value, max_value):
    """``jnp.clip``; bounds may be tensors; ``max_value`` below ``min_value`` is raised
    to it."""
    x = _to_tensor(x)
    if not isinstance(min_value, (Tensor, jax.Array)) and \
            not isinstance(max_value, (Tensor, jax.Array)):
        if min_value is None:
            min_value = -np.inf
        if max_value is None:
            max_value = np.inf
        if max_value < min_value:
            max_value = min_value

    def op(v, lo, hi):
        lo = jnp.asarray(lo).astype(v.dtype) if lo is not None else None
        hi = jnp.asarray(hi).astype(v.dtype) if hi is not None else None
        if lo is not None and hi is not None:
            hi = jnp.maximum(hi, lo)
        # where, not jnp.clip: a value on a bound keeps its gradient (tf.clip_by_value)
        if lo is not None:
            v = jnp.where(v < lo, lo, v)
        if hi is not None:
            v = jnp.where(v > hi, hi, v)
        return v
    return _apply(op, x, min_value, max_value)


def _compare(fn):
    def api_fn(x, y):
        return _apply(_promoting(fn), _to_tensor(x), _operand(y))
    return api_fn


def equal(x, y):
    return _compare(jnp.equal)(x, y)


def not_equal(x, y):
    return _compare(jnp.not_equal)(x, y)


def greater(x, y):
    return _compare(jnp.greater)(x, y)


def greater_equal(x, y):
    return _compare(jnp.greater_equal)(x, y)


def less(x, y):
    return _compare(jnp.less)(x, y)


def less_equal(x, y):
    return _compare(jnp.less_equal)(x, y)


def _ties_to_x(pick, x_wins):
    """``pick(x, y)`` (``jnp.maximum``/``jnp.minimum``) whose gradient at a tie goes
    wholly to ``x``, as TensorFlow's Maximum/Minimum gradients (``pick``'s own splits it
    0.5 / 0.5); ``x_wins(x, y)`` says where ``x`` is the result."""
    @jax.custom_jvp
    def op(x, y):
        return pick(x, y)

    @op.defjvp
    def _jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        return pick(x, y), jnp.where(x_wins(x, y), tx, ty)

    return op


_tf_maximum = _ties_to_x(jnp.maximum, jnp.greater_equal)
_tf_minimum = _ties_to_x(jnp.minimum, jnp.less_equal)


def maximum(x, y):
    """``jnp.maximum``; at a tie the gradient goes to ``x`` (TensorFlow's rule)."""
    return _compare(_tf_maximum)(x, y)


def minimum(x, y):
    """``jnp.minimum``; at a tie the gradient goes to ``x`` (TensorFlow's rule)."""
    return _compare(_tf_minimum)(x, y)


def sin(x):
    return _unary(jnp.sin, to_float=True)(x)


def cos(x):
    return _unary(jnp.cos, to_float=True)(x)


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """Mean and variance over ``reduction_axes``, then ``batch_normalization``."""
    x = _to_tensor(x)
    axes = shape_rules.batch_norm_axes(reduction_axes, _ndim(x))

    def op(v, g, b):
        m = jnp.mean(v, axis=axes, keepdims=True)
        var_ = jnp.mean(jnp.square(v - m), axis=axes, keepdims=True)
        bshape = [1 if i in axes else d for i, d in enumerate(v.shape)]
        out = (v - m) / jnp.sqrt(var_ + epsilon)
        if g is not None:
            out = out * jnp.reshape(g, bshape)
        if b is not None:
            out = out + jnp.reshape(b, bshape)
        kept = [d for i, d in enumerate(v.shape) if i not in axes]
        return out, jnp.reshape(m, kept), jnp.reshape(var_, kept)
    gamma = None if gamma is None else _to_tensor(gamma)
    beta = None if beta is None else _to_tensor(beta)
    return _apply_multi(op, 3, x, gamma, beta)


def _lay_along(p, ndim, axis):
    p = jnp.asarray(p)
    if p.ndim == 1 and ndim > 1:
        shape = [1] * ndim
        shape[axis] = p.shape[0]
        return p.reshape(shape)
    return p


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """``(x - mean) / sqrt(var + epsilon) * gamma + beta``, 1-D parameters laid along
    ``axis``."""
    x = _to_tensor(x)
    axis = shape_rules.normalize_axis(axis, _ndim(x))

    def op(v, m, s, b, g):
        out = (v - _lay_along(m, v.ndim, axis)) / jnp.sqrt(_lay_along(s, v.ndim, axis) + epsilon)
        if g is not None:
            out = out * _lay_along(g, v.ndim, axis)
        if b is not None:
            out = out + _lay_along(b, v.ndim, axis)
        return out
    return _apply(op, x, _to_tensor(mean), _to_tensor(var),
                  None if beta is None else _to_tensor(beta),
                  None if gamma is None else _to_tensor(gamma))


# ---------------------------------------------------------------------------
# Shape manipulation
# ---------------------------------------------------------------------------

@records_keras_shape
def concatenate(tensors, axis=-1):
    """``jnp.concatenate``; a negative axis counts from the first tensor's rank."""
    tensors = [_to_tensor(t) for t in tensors]
    nd = _ndim(tensors[0])
    ax = axis % nd if nd else 0
    return _apply(lambda ts: jnp.concatenate(ts, axis=ax), tensors)


@records_keras_shape
def reshape(x, shape):
    """``jnp.reshape``; sizes may be scalar tensors or a shape tensor (concrete when
    traced)."""
    x = _to_tensor(x)

    def op(v, s):
        return jnp.reshape(v, _size_tuple(s))
    if isinstance(shape, (list, tuple)):
        shape = list(shape)
    if not isinstance(x, Tensor) and not _holds_graph_values(shape if isinstance(
            shape, list) else [shape]):
        return op(x, shape)
    try:
        return _apply(op, x, shape)
    except (TypeError, ValueError):
        # the probe sizes cannot give the result (a fixed target for an input of unknown
        # batch, sizes read from another tensor): the static shape comes from the target
        target = _static_reshape_target(x, shape)
        if target is None:
            raise
        return _shaped_node(op, (x, shape), target, x.dtype)


def _static_reshape_target(x, shape):
    """The static shape of ``reshape(x, shape)`` (None where unknown), or None when
    ``shape``'s length is not known."""
    if isinstance(shape, Tensor):
        if shape.ndim != 1 or shape.shape[0] is None:
            return None
        if shape.pvals is not None:
            sizes = [int(a) if a == b else None for a, b in zip(*shape.pvals)]
        else:
            sizes = [None] * shape.shape[0]
    else:
        sizes = []
        for s in shape:
            if isinstance(s, Tensor):
                p = s.pvals
                sizes.append(int(p[0]) if p is not None and int(p[0]) == int(p[1]) else None)
            else:
                sizes.append(int(np.asarray(s)))
    if -1 in sizes:
        known = [d for d in sizes if d is not None and d != -1]
        xs = _engine_int_shape(x)
        if None in xs or None in sizes:
            sizes[sizes.index(-1)] = None
        else:
            sizes[sizes.index(-1)] = int(_math.prod(xs)) // max(1, int(_math.prod(known)))
    return tuple(sizes)


@records_keras_shape
def permute_dimensions(x, pattern):
    pattern = tuple(int(p) for p in pattern)
    return _apply(lambda v: jnp.transpose(v, pattern), _to_tensor(x))


@records_keras_shape
def resize_images(x, height_factor, width_factor, data_format, interpolation='nearest'):
    """Nearest: ``jnp.repeat`` on both axes; bilinear: ``jax.image.resize`` (half-pixel
    centres, as TensorFlow's ``resize`` with ``half_pixel_centers``)."""
    data_format = common.normalize_data_format(data_format)
    x = _to_tensor(x)
    interpolation = shape_rules.normalize_interpolation(interpolation)
    hf, wf = int(height_factor), int(width_factor)
    h_ax, w_ax = (2, 3) if data_format == 'channels_first' else (1, 2)

    def op(v):
        if interpolation == 'nearest':
            return jnp.repeat(jnp.repeat(v, hf, axis=h_ax), wf, axis=w_ax)
        shape = list(v.shape)
        shape[h_ax] *= hf
        shape[w_ax] *= wf
        return jax.image.resize(v, shape, method='bilinear').astype(v.dtype)
    return _apply(op, x)


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    data_format = common.normalize_data_format(data_format)
    x = _to_tensor(x)
    axes = (2, 3, 4) if data_format == 'channels_first' else (1, 2, 3)
    factors = (int(depth_factor), int(height_factor), int(width_factor))

    def op(v):
        for a, f in zip(axes, factors):
            v = jnp.repeat(v, f, axis=a)
        return v
    return _apply(op, x)


@records_keras_shape
def repeat_elements(x, rep, axis):
    x = _to_tensor(x)
    return _apply(lambda v, r: jnp.repeat(v, int(np.asarray(r)), axis=axis % v.ndim), x, rep)


@records_keras_shape
def repeat(x, n):
    """A 2-D ``(samples, dim)`` becomes ``(samples, n, dim)``."""
    x = _to_tensor(x)
    return _apply(lambda v, k: jnp.repeat(v[:, None, :], int(np.asarray(k)), axis=1), x, n)


def arange(start, stop=None, step=1, dtype='int32'):
    if stop is None and isinstance(start, (int, np.integer)) and start < 0:
        start = 0
    dt = _normalize_dtype(dtype)

    def op(a, b, s):
        a, b, s = [None if v is None else np.asarray(v).item() for v in (a, b, s)]
        if b is None and a < 0:
            a = 0
        return jnp.arange(a, b, s, dtype=dt)
    if _builtin_any(isinstance(v, Tensor) and v.pvals is None for v in (start, stop, step)):
        # a bound read from a fed value: the length is known when the function runs
        # (``function`` then compiles once per value of that input)
        return _shaped_node(op, (start, stop, step), (None,), dt)
    return _apply(op, start, stop, step)


@records_keras_shape
def tile(x, n):
    """``jnp.tile``; ``n`` may mix ints and scalar tensors, or be a shape tensor."""
    x = _to_tensor(x)
    if isinstance(n, (list, tuple)):
        n = list(n)
    return _apply(lambda v, k: jnp.tile(v, _size_tuple(k)), x, n)


@records_keras_shape
def flatten(x):
    return _apply(lambda v: jnp.reshape(v, (-1,)), _to_tensor(x))


@records_keras_shape
def batch_flatten(x):
    return _apply(lambda v: jnp.reshape(v, (v.shape[0], -1)), _to_tensor(x))


@records_keras_shape
def expand_dims(x, axis=-1):
    x = _to_tensor(x)
    axis = int(axis)
    return _apply(lambda v: jnp.expand_dims(v, axis if axis >= 0 else v.ndim + 1 + axis), x)


@records_keras_shape
def squeeze(x, axis):
    x = _to_tensor(x)
    axis = int(axis)
    return _apply(lambda v: jnp.squeeze(v, axis % v.ndim), x)


@records_keras_shape
def temporal_padding(x, padding=(1, 1)):
    x = _to_tensor(x)
    a, b = (int(p) for p in padding)
    return _apply(lambda v: jnp.pad(v, ((0, 0), (a, b), (0, 0))), x)


@records_keras_shape
def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    data_format = common.normalize_data_format(data_format)
    pads = shape_rules.normalize_spatial_padding(padding, 2)
    return _spatial_pad(_to_tensor(x), pads, data_format)


@records_keras_shape
def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    data_format = common.normalize_data_format(data_format)
    pads = shape_rules.normalize_spatial_padding(padding, 3)
    return _spatial_pad(_to_tensor(x), pads, data_format)


def _spatial_pad(x, pads, data_format):
    pads = [tuple(int(q) for q in p) for p in pads]
    if data_format == 'channels_first':
        full = [(0, 0), (0, 0)] + pads
    else:
        full = [(0, 0)] + pads + [(0, 0)]
    return _apply(lambda v: jnp.pad(v, full), x)


stack = core.stack


@records_keras_shape
def one_hot(indices, num_classes):
    """``jax.nn.one_hot`` over a new last axis, floatx."""
    indices = _to_tensor(indices)
    return _apply(lambda i, n: jax.nn.one_hot(i, int(np.asarray(n)), dtype=floatx()),
                  indices, num_classes)


@records_keras_shape
def reverse(x, axes):
    x = _to_tensor(x)
    if isinstance(axes, (int, np.integer)):
        axes = [axes]
    axes = tuple(int(a) for a in axes)
    return _apply(lambda v: jnp.flip(v, axis=tuple(a % v.ndim for a in axes)), x)


@records_keras_shape
def slice(x, start, size):
    """``lax.dynamic_slice`` with static sizes (a size of -1 runs to the end)."""
    x = _to_tensor(x)

    def op(v, st, sz):
        st = [int(np.asarray(s)) for s in st]
        sz = [int(np.asarray(s)) for s in sz]
        sz = [v.shape[i] - st[i] if s == -1 else s for i, s in enumerate(sz)]
        return lax.slice(v, st, [a + b for a, b in zip(st, sz)])
    return _apply(op, x, list(start), list(size))


@records_keras_shape
def pattern_broadcast(x, broadcastable):
    """Returns ``x``: JAX broadcasts size-1 axes by shape, so no pattern is needed."""
    return _to_tensor(x)


# ---------------------------------------------------------------------------
# Values, functions and gradients
# ---------------------------------------------------------------------------

def get_value(x):
    if isinstance(x, Variable):
        return np.array(x._value)
    return eval(x)


def batch_get_value(ops):
    return [get_value(x) for x in ops]


def set_value(x, value):
    if hasattr(value, 'toarray'):
        value = value.toarray()
    value = np.asarray(value, dtype=x.dtype)
    if value.shape != tuple(x.avals[0].shape) and value.size == _math.prod(x.avals[0].shape):
        value = value.reshape(x.avals[0].shape)
    x._assign(value)


batch_set_value = generic.batch_set_value(_K)

get_variable_shape = generic.get_variable_shape(_K)


def print_tensor(x, message=''):
    """``jax.debug.print`` of ``message`` and the value when it is computed."""
    x = _to_tensor(x)

    def op(v):
        jax.debug.print(message + '{v}', v=v)
        return v
    return _apply(op, x)


def function(inputs, outputs, updates=None, **kwargs):
    """One ``jax.jit`` program per input signature (see the design in
    ``jax_backend.core``); ``name`` is kept, other keywords are refused."""
    name = kwargs.pop('name', None)
    if kwargs:
        raise ValueError('function: invalid keyword argument(s) %s; accepted: name'
                         % ', '.join(sorted(kwargs)))
    return Function(inputs, outputs, updates=updates, name=name)


def gradients(loss, variables):
    """``jax.vjp`` of the graph between ``loss`` (summed when not a scalar) and
    ``variables`` (any tensors); a tensor the loss does not depend on gets zeros."""
    many = isinstance(variables, (list, tuple))
    wrt = list(variables) if many else [variables]
    loss = _to_tensor(loss)
    wrt = [_to_tensor(w) for w in wrt]
    sym = [w for w in wrt if isinstance(w, Tensor)]
    if not isinstance(loss, Tensor) or not sym:
        return [zeros_like(w) for w in wrt]
    local = _dependents([loss], sym)
    for w in sym:
        local.discard(w.id)

    @_context_op
    def op(ctx, loss_leaf, *wrt_vals):
        def f(*vals):
            child = ctx.child(local, dict((w.id, v) for w, v in zip(sym, vals)))
            total = jnp.sum(child.value(loss))
            # the forward values, handed back so that the program computes them once
            return total, dict((i, v) for i, v in child.memo.items()
                               if i in local and _is_array_tree(v))
        out, pullback, forward = jax.vjp(f, *wrt_vals, has_aux=True)
        for i, v in forward.items():
            ctx.memo.setdefault(i, v)
        return tuple(pullback(jnp.ones_like(out)))
    op.lazy_leaves = (0,)
    op.hands_forward = True   # Function evaluates these first (see Function.__init__)

    # the loss is a leaf so that graph walks see it; the op evaluates it itself (the
    # context leaves it lazy), and the function reads its value from the gradient's pass
    leaves, treedef = _flatten((loss,) + tuple(sym))
    avals = tuple(tuple(jax.ShapeDtypeStruct(w.avals[p].shape, w.avals[p].dtype) for w in sym)
                  for p in range(2))
    node = _multi_node(op, leaves, treedef, avals)
    grads = _outputs(node, len(sym))
    it = iter(grads)
    return [next(it) if isinstance(w, Tensor) else jnp.zeros_like(w) for w in wrt]


def stop_gradient(variables):
    """``lax.stop_gradient``."""
    many = isinstance(variables, (list, tuple))
    cut = [_apply(lax.stop_gradient, _to_tensor(v)) for v in (variables if many else [variables])]
    return type(variables)(cut) if many else cut[0]


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """Ops made inside the block come after the updates among ``control_inputs``: they
    read those variables' new values, and a ``function`` computing them applies the
    updates (once per call, also when they are among its ``updates``). Tensors among
    ``control_inputs`` order nothing: a function is one pure program."""
    if control_inputs is not None and not isinstance(control_inputs, (list, tuple)):
        raise ValueError('control_dependencies: expected None or a list, got %r'
                         % (control_inputs,))
    group = []
    for c in control_inputs or []:
        if isinstance(c, _Update):
            group.extend(u for u in c._controls if u not in group)
            if c not in group:
                group.append(c)
    _CONTROLS.append(group)
    try:
        yield
    finally:
        _CONTROLS.pop()


symbolic = generic.unchanged('symbolic', """Returns ``func`` unchanged.""")

eager = generic.unchanged('eager', """Returns ``func`` unchanged.""")


# ---------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------

def _step_standin(like_avals, name):
    """A stand-in input of a loop body, with the given probe shapes."""
    t = Tensor(None, [], None, tuple(like_avals), name=name)
    t._is_placeholder = True
    t._uses_learning_phase = False
    return t


def _drop_axis(avals, axis):
    return tuple(jax.ShapeDtypeStruct(a.shape[:axis] + a.shape[axis + 1:], a.dtype)
                 for a in avals)


def _cast_like(v, ref_aval):
    return jnp.asarray(v).astype(ref_aval.dtype)


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None,
        constants=None, unroll=False, input_length=None):
    """``lax.scan`` over a step graph built once on stand-in inputs (a Python loop of
    the step when ``unroll``); what the step computes without its inputs (dropout
    masks, weight slices) is computed once outside the loop. Convolutions of one input
    by slices of one loop-invariant kernel (Keras' ConvLSTM2DCell) run as one
    (``_conv_groups``); on CPU a convolution's gradients in the loop are forward
    convolutions and dots (``_conv_by_forward_convs``)."""
    inputs = _to_tensor(inputs)
    constants = list(constants or [])
    initial_states = [_to_tensor(s) for s in initial_states]
    if mask is not None:
        mask = _to_tensor(mask)
        if _ndim(mask) == 3:
            mask = mask[:, :, 0]
    steps = _static_shape(inputs)[1]
    if unroll:
        if steps is None:
            steps = input_length
        if steps is None:
            # the time length is known only here (the static shape JAX infers)
            raise ValueError('rnn: unroll=True needs a static time length or input_length')
        return generic.unrolled_rnn(_K, step_function, inputs, initial_states,
                                    go_backwards=go_backwards, mask=mask,
                                    constants=constants, steps=steps)

    # a first call on the real first step: cells that cache tensors on their first
    # call (Keras' dropout masks) build them outside the loop
    step_function(inputs[:, 0], initial_states + constants)
    x_in = _step_standin(_drop_axis(_avals_of(inputs), 1), 'rnn_input')
    s_in = [_step_standin(_avals_of(s), 'rnn_state_%d' % i)
            for i, s in enumerate(initial_states)]
    out, new_states = step_function(x_in, s_in + constants)
    new_states = list(new_states)
    out = _to_tensor(out)
    new_states = [_to_tensor(ns) for ns in new_states]
    inner = [x_in] + s_in
    local = _dependents([out] + new_states, inner)
    uses_lp = _builtin_any(getattr(v, '_uses_learning_phase', False)
                           for v in [out] + new_states)
    n_states = len(initial_states)
    out_avals = _avals_of(out)
    state_avals = [_avals_of(s) for s in initial_states]
    conv_groups = _conv_groups([out] + new_states, local)

    @_context_op
    def op(ctx, x, m, states0, body_refs):
        # the merged kernels, computed outside the loop
        merged = [jnp.concatenate([ctx.value(n.leaves[1]) for n in nodes], axis=-1)
                  for nodes in conv_groups]
        seq = jnp.swapaxes(x, 0, 1)
        mseq = None if m is None else jnp.swapaxes(m, 0, 1)
        n = seq.shape[0]
        if input_length is not None and isinstance(input_length, int):
            n = _builtin_min(n, input_length)
        if go_backwards:
            seq = seq[::-1]
            mseq = None if mseq is None else mseq[::-1]

        def body(carry, xs):
            prev_out, states = carry
            x_t, m_t = xs
            child = ctx.child(local, dict([(x_in.id, x_t)] +
                                          [(s.id, v) for s, v in zip(s_in, states)]))
            with _tracing_loop_body():
                for nodes, kernel in zip(conv_groups, merged):
                    axis = nodes[0]._conv_key[-1]
                    y = nodes[0].op(child.value(nodes[0].leaves[0]), kernel)
                    cuts = np.cumsum([n.avals[0].shape[axis] for n in nodes])[:-1]
                    for n, part in zip(nodes, jnp.split(y, [int(c) for c in cuts], axis)):
                        child.memo[n.id] = part
                o = child.value(out)
                ns = [_cast_like(child.value(v), a[0])
                      for v, a in zip(new_states, state_avals)]
            o = _cast_like(o, out_avals[0])
            if m_t is not None:
                keep = m_t.astype(bool)
                o = jnp.where(_right_pad(keep, o.ndim), o, prev_out)
                ns = [jnp.where(_right_pad(keep, s.ndim), a, s) for a, s in zip(ns, states)]
            return (o, ns), o
        batch = seq.shape[1]
        init_out = jnp.zeros((batch,) + tuple(out_avals[0].shape[1:]), out_avals[0].dtype)
        (last, states), outs = lax.scan(body, (init_out, [jnp.asarray(s) for s in states0]),
                                        (seq, mseq), unroll=_scan_unroll(n))
        return last, jnp.swapaxes(outs, 0, 1), tuple(states)

    # the body's outer tensors are leaves too, so that functions see their variables
    body_refs = [v for n in _walk([out] + new_states) if n.id in local
                 for v in n.leaves if isinstance(v, Tensor) and v.id not in local]
    leaves, treedef = _flatten((inputs, mask, list(initial_states), body_refs))
    avals = []
    in_avals = _avals_of(inputs)
    for p in range(2):
        b = in_avals[p].shape[0]
        t_len = in_avals[p].shape[1]
        o = out_avals[p]
        avals.append((jax.ShapeDtypeStruct((b,) + tuple(o.shape[1:]), o.dtype),
                      jax.ShapeDtypeStruct((b, t_len) + tuple(o.shape[1:]), o.dtype),
                      tuple(jax.ShapeDtypeStruct(s[p].shape, s[p].dtype) for s in state_avals)))
    node = _multi_node(op, leaves, treedef, tuple(avals))
    node.hidden = [out] + new_states
    last = _node(lambda r: r[0], [node], _ONE)
    outputs = _node(lambda r: r[1], [node], _ONE)
    states = [_node(functools.partial(lambda r, i: r[2][i], i=i), [node],
                    _ONE) for i in range(n_states)]
    for v in [last, outputs] + states:
        v._uses_learning_phase = uses_lp
    return last, outputs, states


def _conv_groups(roots, local):
    """The convolutions of a loop body (``local``) that read the same input with the same
    parameters and loop-invariant kernels of the same spatial and input sizes, in groups
    of two or more (Keras' ConvLSTM2DCell convolves its input, and its state, with four
    slices of one kernel). ``rnn`` computes each group as one convolution with the
    kernels concatenated along their output axis, split afterwards: one wider convolution
    and one gradient of it run several times faster per step than four narrow ones on
    XLA's CPU backend. The same values up to float rounding."""
    groups = {}
    for n in _walk(roots):
        key = getattr(n, '_conv_key', None)
        if key is None or n.id not in local or len(n.leaves) != 2:
            continue
        x, k = n.leaves
        if not (isinstance(x, Tensor) and isinstance(k, Tensor)) or k.id in local:
            continue
        shape = k.avals[0].shape
        groups.setdefault((x.id, key, tuple(shape[:-1]), str(k.avals[0].dtype)),
                          []).append(n)
    return [nodes for nodes in groups.values() if len(nodes) > 1]


def _scan_unroll(steps):
    """``lax.scan``'s unroll factor for an ``rnn`` of ``steps`` steps:
    ``KERAS_BACKEND_JAX_SCAN_UNROLL`` (default 1, a loop; 0 or a factor >= steps: straight-line
    code). Unrolling trades compile time for speed per step (benchmarks/README.md)."""
    factor = int(os.environ.get('KERAS_BACKEND_JAX_SCAN_UNROLL', '1') or 1)
    if factor <= 0 or factor >= steps:
        return True
    return factor


def _avals_of(x):
    if isinstance(x, Tensor):
        return x.avals
    a = jax.ShapeDtypeStruct(np.shape(x), np.asarray(x).dtype if not hasattr(x, 'dtype')
                             else x.dtype)
    return (a, a)


def _right_pad(m, ndim):
    return m.reshape(m.shape + (1,) * (ndim - m.ndim))


def _call_if(x):
    return x() if callable(x) else x


def switch(condition, then_expression, else_expression):
    """``jnp.where``; a lower-rank condition gets trailing broadcast axes; a scalar
    condition known while tracing (the learning phase) picks a branch."""
    cond = _to_tensor(condition)
    then_expression = _to_tensor(_call_if(then_expression))
    else_expression = _to_tensor(_call_if(else_expression))
    expr_ndim = _builtin_max(_ndim(then_expression), _ndim(else_expression))
    # the shared rule skips expressions given as callables: their ranks are known only here
    if _ndim(cond) > expr_ndim:
        raise ValueError('switch: condition of rank %d is higher than the expressions\' '
                         'rank %d' % (_ndim(cond), expr_ndim))

    def op(c, a, b):
        if not isinstance(c, jax.core.Tracer) and np.ndim(c) == 0:
            return a if bool(np.asarray(c)) else b
        c = jnp.asarray(c).astype(bool)
        if 0 < c.ndim < expr_ndim:
            c = _right_pad(c, expr_ndim)
        return jnp.where(c, a, b)
    out = _apply(op, cond, then_expression, else_expression)
    return out


def in_train_phase(x, alt, training=None):
    """``switch`` on the learning phase, which is static in each compiled program (one
    branch is traced); a Python 0/1 picks the branch at once. The result carries
    ``_uses_learning_phase`` when the phase is the symbolic one."""
    uses_lp = training is None
    if training is None:
        training = learning_phase()
    if not isinstance(training, Tensor):
        if isinstance(training, (jax.Array, np.ndarray)):
            training = bool(np.asarray(training))
        return _call_if(x) if training else _call_if(alt)
    out = switch(training, x, alt)
    if uses_lp and isinstance(out, Tensor):
        out._uses_learning_phase = True
    return out


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)


# ---------------------------------------------------------------------------
# Activations and losses
# ---------------------------------------------------------------------------

def relu(x, alpha=0., max_value=None, threshold=0.):
    """``jax.nn.relu`` (gradient 0 at 0, as TensorFlow's ``relu``; ``jnp.maximum`` would
    split it 0.5 / 0.5 at a tie), a ``max_value`` clip (gradient 1 up to and at the
    bound, as ``tf.clip_by_value``), a leak ``alpha * relu(threshold - x)``. ``alpha``,
    ``max_value`` and ``threshold`` may be tensors (broadcast against ``x``)."""
    x = _to_tensor(x)

    def param(v):
        return v if isinstance(v, Tensor) else float(np.asarray(v))

    def is_zero(v):
        return not isinstance(v, Tensor) and v == 0

    alpha, threshold = param(alpha), param(threshold)
    max_value = None if max_value is None else param(max_value)
    leaky, shifted = not is_zero(alpha), not is_zero(threshold)

    def op(v, a, top, thr):
        if shifted:
            thr = jnp.asarray(thr, v.dtype)
            kept = v * (v > thr).astype(v.dtype)
        else:
            kept = jax.nn.relu(v)
        if top is not None:
            top = jnp.asarray(top, v.dtype)
            kept = jnp.where(kept < 0, jnp.zeros((), v.dtype), jnp.where(kept > top, top, kept))
        if leaky:
            leak = jax.nn.relu(thr - v) if shifted else jax.nn.relu(-v)
            kept = kept - jnp.asarray(a, v.dtype) * leak
        return kept
    return _apply(op, x, alpha, max_value, threshold)


def elu(x, alpha=1.):
    """``jnp.expm1`` below 0; ``alpha`` may be a tensor (broadcast against ``x``)."""
    x = _to_tensor(x)
    if not isinstance(alpha, Tensor):
        alpha = float(np.asarray(alpha))
    return _apply(lambda v, a: jnp.where(v > 0, v, jnp.asarray(a, v.dtype)
                                         * jnp.expm1(jnp.minimum(v, 0))).astype(v.dtype),
                  x, alpha)


def softmax(x, axis=-1):
    """``jax.nn.softmax``."""
    x = _to_tensor(x)
    return _apply(lambda v: jax.nn.softmax(v, axis=axis), x)


def softplus(x):
    return _apply(jax.nn.softplus, _to_tensor(x))


def softsign(x):
    return _apply(jax.nn.soft_sign, _to_tensor(x))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """From logits: ``jax.nn.log_softmax``; otherwise ``output`` is renormalised and
    clipped to ``[eps, 1 - eps]``."""
    target, output = _to_tensor(target), _to_tensor(output)
    eps = common.epsilon()

    def op(t, o):
        ax = axis % o.ndim
        if from_logits:
            return -jnp.sum(t * jax.nn.log_softmax(o, axis=ax), axis=ax)
        p = o / jnp.sum(o, axis=ax, keepdims=True)
        p = jnp.clip(p, eps, 1. - eps)
        return -jnp.sum(t * jnp.log(p), axis=ax)
    return _apply(op, target, output)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Integer class ids (float ids rounded) against the log-softmax; Keras' flatten rule
    for a target of the output's rank."""
    target, output = _to_tensor(target), _to_tensor(output)
    eps = common.epsilon()

    def op(t, o):
        ax = axis % o.ndim
        if not from_logits:
            o = jnp.log(jnp.clip(o, eps, 1. - eps))
        lsm = jax.nn.log_softmax(o, axis=ax)
        if ax != o.ndim - 1:
            lsm = jnp.moveaxis(lsm, ax, -1)
        if t.ndim == lsm.ndim:
            t = jnp.reshape(t, lsm.shape[:-1])
        if jnp.issubdtype(t.dtype, jnp.floating):
            t = jnp.round(t)
        t = t.astype('int32')
        return -jnp.take_along_axis(lsm, t[..., None], axis=-1)[..., 0]
    if not isinstance(output, Tensor) and not isinstance(target, Tensor):
        return op(target, output)
    # the result has the output's shape less the class axis (the target may be flattened
    # to it, which the probe sizes of a target of unknown sizes cannot show)
    out_shape = list(_engine_int_shape(output))
    del out_shape[axis % len(out_shape)]
    return _shaped_node(op, (target, output), out_shape, dtype(output))


def binary_crossentropy(target, output, from_logits=False):
    """Clipped to ``[eps, 1 - eps]``; from logits ``max(x, 0) - x t + log1p(exp(-|x|))``."""
    target, output = _to_tensor(target), _to_tensor(output)
    eps = common.epsilon()

    def op(t, o):
        if from_logits:
            return jnp.maximum(o, 0) - o * t + jnp.log1p(jnp.exp(-jnp.abs(o)))
        p = jnp.clip(o, eps, 1. - eps)
        return -(t * jnp.log(p) + (1. - t) * jnp.log(1. - p))
    return _apply(op, target, output)


def sigmoid(x):
    return _apply(jax.nn.sigmoid, _to_tensor(x))


def hard_sigmoid(x):
    return _apply(lambda v: jnp.clip(v * jnp.asarray(0.2, v.dtype) + jnp.asarray(0.5, v.dtype),
                                     0, 1).astype(v.dtype), _to_tensor(x))


def tanh(x):
    return _apply(jnp.tanh, _to_tensor(x))


def dropout(x, level, noise_shape=None, seed=None):
    """A uniform draw from the op's key (see the design in ``jax_backend.core``) compared with
    ``level`` (a number or a tensor); always applied."""
    rate_tensor = isinstance(level, (Tensor, jax.Array))
    x = _to_tensor(x)
    if not rate_tensor:
        level = float(level)
        if level == 0.:
            return x
    if noise_shape is not None:
        noise_shape = list(noise_shape)
        # the shared rules take any noise_shape: its length against x's rank is checked here
        if len(noise_shape) != _ndim(x):
            raise ValueError('dropout: noise_shape must have %d entries, got %r'
                             % (_ndim(x), noise_shape))

    def draw(key, v, rate, ns):
        shp = v.shape if ns is None else tuple(
            v.shape[i] if d is None else int(np.asarray(d)) for i, d in enumerate(ns))
        u = jax.random.uniform(key, shp, dtype=v.dtype)
        rate = jnp.asarray(rate, v.dtype)
        keep = (u >= rate).astype(v.dtype)
        return v * keep / (1. - rate)
    return _random(draw, seed, x, level, noise_shape)


def l2_normalize(x, axis=None):
    """The sum of squares is floored at ``1e-12``."""
    x = _to_tensor(x)

    def op(v):
        ax = None if axis is None else _axis_arg(axis, v.ndim)
        ss = jnp.sum(jnp.square(v), axis=ax, keepdims=True)
        return v * lax.rsqrt(jnp.maximum(ss, 1e-12))
    return _apply(op, x)


def in_top_k(predictions, targets, k):
    """True where the target's score is among the ``k`` largest; ties with the k-th score
    count as in (TensorFlow's rule)."""
    predictions, targets = _to_tensor(predictions), _to_tensor(targets)

    def op(p, t, kk):
        kk = int(np.asarray(kk))
        p = p.astype('float32')
        n = p.shape[-1]
        if kk < 1:
            return jnp.zeros(p.shape[:-1], bool)
        if kk >= n:
            return jnp.isfinite(jnp.take_along_axis(p, t.astype('int32')[:, None], 1)[:, 0])
        kth = -jnp.sort(-p, axis=-1)[:, kk - 1]
        score = jnp.take_along_axis(p, t.astype('int32')[:, None], 1)[:, 0]
        return (score >= kth) & jnp.isfinite(score)
    return _apply(op, predictions, targets, k)


# ---------------------------------------------------------------------------
# Convolution and pooling
# ---------------------------------------------------------------------------

def _cl(v, data_format):
    """channels_first -> channels_last."""
    if data_format == 'channels_first':
        return jnp.transpose(v, shape_rules.to_channels_last_perm(v.ndim))
    return v


def _cf(v, data_format):
    """channels_last -> the data format."""
    if data_format == 'channels_first':
        return jnp.transpose(v, shape_rules.to_channels_first_perm(v.ndim))
    return v


def _dims(rank):
    sp = 'DHW'[3 - rank:] if rank <= 3 else None
    return ('N' + sp + 'C', sp + 'IO', 'N' + sp + 'C')


def _conv_padding(padding, kernel_sizes, dilations):
    if not isinstance(padding, str):
        return padding
    if padding == 'causal':
        return [((k - 1) * d, 0) for k, d in zip(kernel_sizes, dilations)]
    return padding.upper()


def _conv_cl(v, k, strides, padding, dilations, groups=1):
    rank = v.ndim - 2
    ks = k.shape[:rank]
    conv = functools.partial(
        lax.conv_general_dilated, window_strides=tuple(strides),
        padding=_conv_padding(padding, ks, dilations), rhs_dilation=tuple(dilations),
        dimension_numbers=_dims(rank), feature_group_count=groups)
    k = k.astype(v.dtype)
    if groups == 1 and jax.default_backend() == 'cpu':
        if rank == 3:
            return _conv3d_by_conv2d(v, k, strides, conv.keywords['padding'], dilations)
        if _LOOP_DEPTH[0]:
            return _conv_by_forward_convs(conv, v, k)
    return conv(v, k)


def _conv3d_by_conv2d(v, k, strides, padding, dilations):
    """A 3-D convolution (channels last) as one 2-D convolution over the frames of every
    kernel depth offset at once, the offsets then summed along the depth axis.

    XLA's CPU backend runs 3-D convolutions and their gradients 5-10x slower than the
    2-D ones doing the same arithmetic (a Conv3D's training step; TensorFlow's oneDNN has
    no such gap). The same values up to float rounding."""
    depth_k = k.shape[0]
    dilated = [(n - 1) * d + 1 for n, d in zip(k.shape[:3], dilations)]
    pads = padding
    if isinstance(pads, str):
        pads = lax.padtype_to_pads(v.shape[1:4], dilated, strides, pads)
    pads = [tuple(int(e) for e in pair) for pair in pads]
    zero = jnp.zeros((), v.dtype)
    v = lax.pad(v, zero, ((0, 0, 0), pads[0] + (0,), (0, 0, 0), (0, 0, 0), (0, 0, 0)))
    batch, depth = v.shape[:2]
    out_depth = (depth - dilated[0]) // strides[0] + 1
    # (kd, kh, kw, in, out) -> (kh, kw, in, kd * out): every depth offset's outputs
    k2 = jnp.transpose(k, (1, 2, 3, 0, 4)).reshape(tuple(k.shape[1:4]) +
                                                   (depth_k * k.shape[4],))
    y = _conv_cl(v.reshape((batch * depth,) + tuple(v.shape[2:])), k2, strides[1:],
                 pads[1:], dilations[1:])
    y = y.reshape((batch, depth) + tuple(y.shape[1:3]) + (depth_k, k.shape[4]))
    out = None
    for i in range(depth_k):
        start = i * dilations[0]
        tap = lax.slice(y, (0, start, 0, 0, i, 0),
                        (batch, start + (out_depth - 1) * strides[0] + 1) +
                        tuple(y.shape[2:4]) + (i + 1, k.shape[4]),
                        (1, strides[0], 1, 1, 1, 1))[:, :, :, :, 0]
        out = tap if out is None else out + tap
    return out


def _conv_by_forward_convs(conv, v, k):
    """``conv(v, k)`` (``lax.conv_general_dilated``, channels last, no groups) whose
    gradients are computed as forward convolutions and a ``dot``.

    On XLA's CPU backend the convolutions that JAX's own transpose rules emit (the
    kernel with its in/out axes swapped in the dimension numbers, the kernel gradient as
    a convolution over the batch) run 5-30x slower than a forward convolution of the same
    size inside a ``lax.scan`` (a ConvLSTM2D step: minutes). Here the input gradient is
    a forward convolution of the output gradient with the flipped kernel (its axes
    swapped in the array), and the kernel gradient, for each kernel offset, a ``dot`` of
    the input window it saw with the output gradient. The same values up
    to float rounding; differentiable again (the backward pass is JAX code)."""
    rank = v.ndim - 2
    p = conv.keywords
    strides, dilations = p['window_strides'], p['rhs_dilation']
    dims = p['dimension_numbers']
    sizes = tuple(k.shape[:rank])
    dilated = tuple((n - 1) * d + 1 for n, d in zip(sizes, dilations))
    pads = p['padding']
    if isinstance(pads, str):
        pads = lax.padtype_to_pads(v.shape[1:-1], dilated, strides, pads)
    pads = tuple(tuple(int(e) for e in pair) for pair in pads)

    def forward(a, w):
        return lax.conv_general_dilated(a, w, strides, pads, rhs_dilation=dilations,
                                        dimension_numbers=dims)

    @jax.custom_vjp
    def f(a, w):
        return forward(a, w)

    def fwd(a, w):
        return forward(a, w), (a, w)

    def bwd(res, g):
        a, w = res
        g = g.astype(a.dtype)
        # input gradient: the output gradient dilated by the strides, convolved with
        # the kernel flipped in space and its in/out channels swapped
        wt = jnp.swapaxes(jnp.flip(w, tuple(range(rank))), rank, rank + 1)
        back_pads = []
        for i in range(rank):
            before = dilated[i] - 1 - pads[i][0]
            out_dilated = (g.shape[i + 1] - 1) * strides[i] + 1
            after = a.shape[i + 1] + dilated[i] - 1 - out_dilated - before
            back_pads.append((before, after))
        ga = lax.conv_general_dilated(g, wt, (1,) * rank, back_pads,
                                      lhs_dilation=strides, rhs_dilation=dilations,
                                      dimension_numbers=dims)
        # kernel gradient: for each kernel offset, the input window it saw (a strided
        # slice of the padded input) contracted with the output gradient
        padded = lax.pad(a, jnp.zeros((), a.dtype),
                         ((0, 0, 0),) + tuple((lo, hi, 0) for lo, hi in pads) + ((0, 0, 0),))
        axes = list(range(rank + 1))
        taps = []
        for offset in itertools.product(*[range(n) for n in sizes]):
            start = [0] + [o * d for o, d in zip(offset, dilations)] + [0]
            limit = ([a.shape[0]] +
                     [st + (n - 1) * s + 1 for st, n, s in zip(start[1:], g.shape[1:-1],
                                                              strides)] + [a.shape[-1]])
            window = lax.slice(padded, start, limit, (1,) + tuple(strides) + (1,))
            taps.append(jnp.tensordot(window, g, axes=(axes, axes)))
        gw = jnp.stack(taps).reshape(tuple(w.shape))
        return ga, gw.astype(w.dtype)

    f.defvjp(fwd, bwd)
    return f(v, k)


def _conv(x, kernel, rank, strides, padding, data_format, dilation_rate, allow_causal=False):
    data_format = common.normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal=allow_causal)
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    dilations = shape_rules.normalize_tuple(dilation_rate, rank, 'dilation_rate')

    def op(v, k):
        return _cf(_conv_cl(_cl(v, data_format), k, strides, padding, dilations), data_format)
    out = _apply(op, _to_tensor(x), _to_tensor(kernel))
    if isinstance(out, Tensor):
        # what ``rnn`` needs to merge the convolutions of one input (``_conv_groups``)
        out._conv_key = (rank, strides, padding, dilations,
                         1 if data_format == 'channels_first' else -1)
    return out


@records_keras_shape
def conv1d(x, kernel, strides=1, padding='valid', data_format=None, dilation_rate=1):
    """``lax.conv_general_dilated``; 'causal' pads the left only."""
    return _conv(x, kernel, 1, strides, padding, data_format, dilation_rate,
                 allow_causal=True)


@records_keras_shape
def conv2d(x, kernel, strides=(1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1)):
    """``lax.conv_general_dilated``."""
    return _conv(x, kernel, 2, strides, padding, data_format, dilation_rate)


def _conv_transpose(x, kernel, output_shape, rank, strides, padding, data_format,
                    dilation_rate):
    data_format = common.normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    dilations = shape_rules.normalize_tuple(dilation_rate, rank, 'dilation_rate')
    if isinstance(output_shape, (list, tuple)):
        output_shape = list(output_shape)

    def op(v, k, out_shape):
        v = _cl(v, data_format)
        out = [None if d is None else int(np.asarray(d)) for d in _size_list(out_shape)]
        if data_format == 'channels_first':
            out = [out[i] for i in shape_rules.to_channels_last_perm(rank + 2)]
        # the forward convolution of the output to x, transposed: x dilated by the
        # strides, the kernel flipped with its channel axes swapped
        kt = jnp.swapaxes(jnp.flip(k, axis=tuple(range(rank))), rank, rank + 1)
        pads = []
        for i in range(rank):
            kd = (k.shape[i] - 1) * dilations[i] + 1
            o, n_in, s = out[i + 1], v.shape[i + 1], strides[i]
            if padding == 'same':
                total = _builtin_max((-(-o // s) - 1) * s + kd - o, 0)
                before = total // 2
            else:
                before = 0
            lo = kd - 1 - before
            hi = o - (n_in - 1) * s - 1 + before
            pads.append((lo, hi))
        y = lax.conv_general_dilated(v, kt.astype(v.dtype), window_strides=(1,) * rank,
                                     padding=pads, lhs_dilation=tuple(strides),
                                     rhs_dilation=tuple(dilations),
                                     dimension_numbers=_dims(rank))
        return _cf(y, data_format)
    return _apply(op, _to_tensor(x), _to_tensor(kernel), output_shape)


def _size_list(s):
    if isinstance(s, (jax.Array, np.ndarray)):
        return list(np.asarray(s))
    return list(s)


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """The transpose of ``conv2d``: ``lax.conv_general_dilated`` with the input dilated
    by the strides and the kernel (``(rows, cols, out_channels, in_channels)``) flipped."""
    return _conv_transpose(x, kernel, output_shape, 2, strides, padding, data_format,
                           dilation_rate)


def _depthwise_cl(v, dk, strides, padding, dilations):
    rank = v.ndim - 2
    cin, mult = dk.shape[rank], dk.shape[rank + 1]
    k = dk.reshape(dk.shape[:rank] + (1, cin * mult))
    return _conv_cl(v, k, strides, padding, dilations, groups=cin)


def _separable(x, dk, pk, rank, strides, padding, data_format, dilation_rate):
    data_format = common.normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal=(rank == 1))
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    dilations = shape_rules.normalize_tuple(dilation_rate, rank, 'dilation_rate')

    def op(v, d, p):
        y = _depthwise_cl(_cl(v, data_format), d, strides, padding, dilations)
        if p is not None:
            y = _conv_cl(y, p, (1,) * rank, 'valid', (1,) * rank)
        return _cf(y, data_format)
    return _apply(op, _to_tensor(x), _to_tensor(dk),
                  None if pk is None else _to_tensor(pk))


def separable_conv1d(x, depthwise_kernel, pointwise_kernel, strides=1, padding='valid',
                     data_format=None, dilation_rate=1):
    """A depthwise convolution (``feature_group_count`` = channels) then a 1x1 one."""
    return _separable(x, depthwise_kernel, pointwise_kernel, 1, strides, padding,
                      data_format, dilation_rate)


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """A depthwise convolution (``feature_group_count`` = channels) then a 1x1 one."""
    return _separable(x, depthwise_kernel, pointwise_kernel, 2, strides, padding,
                      data_format, dilation_rate)


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding='valid', data_format=None,
                     dilation_rate=(1, 1)):
    """``lax.conv_general_dilated`` with ``feature_group_count`` = channels."""
    return _separable(x, depthwise_kernel, None, 2, strides, padding, data_format,
                      dilation_rate)


@records_keras_shape
def conv3d(x, kernel, strides=(1, 1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1, 1)):
    """``lax.conv_general_dilated``; on CPU as 2-D convolutions summed over the kernel's
    depth (``_conv3d_by_conv2d``: XLA's CPU 3-D convolution is 5-10x slower)."""
    return _conv(x, kernel, 3, strides, padding, data_format, dilation_rate)


def conv3d_transpose(x, kernel, output_shape, strides=(1, 1, 1), padding='valid',
                     data_format=None):
    """The transpose of ``conv3d`` (see ``conv2d_transpose``)."""
    return _conv_transpose(x, kernel, output_shape, 3, strides, padding, data_format,
                           (1, 1, 1))


def _pool(x, pool_size, strides, padding, data_format, pool_mode, rank):
    data_format = common.normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    pool_mode = shape_rules.normalize_pool_mode(pool_mode)
    pool_size = shape_rules.normalize_tuple(pool_size, rank, 'pool_size')
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    window = (1,) + tuple(pool_size) + (1,)
    step = (1,) + tuple(strides) + (1,)

    def op(v):
        v = _cl(v, data_format)
        pad = padding.upper()
        if pool_mode == 'max':
            # numpy identities: JAX then lowers to its differentiable max/sum windows
            init = -np.inf if jnp.issubdtype(v.dtype, jnp.floating) else \
                np.iinfo(v.dtype).min
            y = lax.reduce_window(v, np.array(init, v.dtype), lax.max, window, step, pad)
        else:
            zero = np.array(0, v.dtype)
            total = lax.reduce_window(v, zero, lax.add, window, step, pad)
            # 'same' windows average over the entries inside x only, as Keras' engines
            count = lax.reduce_window(jnp.ones(v.shape[1:-1], v.dtype)[None, ..., None],
                                      zero, lax.add, window, step, pad)
            y = total / count
        return _cf(y, data_format)
    return _apply(op, _to_tensor(x))


@records_keras_shape
def pool2d(x, pool_size, strides=(1, 1), padding='valid', data_format=None, pool_mode='max'):
    """``lax.reduce_window``; 'avg' divides by the entries inside ``x``."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 2)


@records_keras_shape
def pool3d(x, pool_size, strides=(1, 1, 1), padding='valid', data_format=None,
           pool_mode='max'):
    """``lax.reduce_window``; 'avg' divides by the entries inside ``x``."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 3)


@records_keras_shape
def bias_add(x, bias, data_format=None):
    """A broadcast add; with channels_first a bias of rank ``ndim(x) - 1`` is reshaped
    (not transposed) to ``(1, channels, spatial...)``, as Keras 2."""
    data_format = common.normalize_data_format(data_format)
    x = _to_tensor(x)
    bias = _to_tensor(bias)

    def op(v, b):
        n = v.ndim
        b = b.astype(v.dtype)
        if b.ndim == 1:
            if data_format == 'channels_first' and n > 2:
                return v + b.reshape((1, -1) + (1,) * (n - 2))
            return v + b
        if data_format == 'channels_first' and n > 2:
            return v + b.reshape((1, b.shape[-1]) + b.shape[:-1])
        return v + b[None]
    return _apply(op, x, bias)


# ---------------------------------------------------------------------------
# Random
# ---------------------------------------------------------------------------

def _random_op(sample, shape, a, b, dtype, seed):
    dtype = _normalize_dtype(dtype)
    if isinstance(shape, (list, tuple)):
        shape = list(shape)

    def draw(key, shp, lo, hi):
        return sample(key, _size_tuple(shp), jnp.asarray(lo, dtype), jnp.asarray(hi, dtype),
                      dtype)
    return _random(draw, seed, shape, _to_tensor(a) if isinstance(a, Tensor) else a,
                   _to_tensor(b) if isinstance(b, Tensor) else b)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """``jax.random.normal`` scaled and shifted."""
    return _random_op(lambda k, s, m, sd, dt: m + sd * jax.random.normal(k, s, dt),
                      shape, mean, stddev, dtype, seed)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """``jax.random.uniform``."""
    return _random_op(lambda k, s, lo, hi, dt: jax.random.uniform(k, s, dt, lo, hi),
                      shape, minval, maxval, dtype, seed)


def random_binomial(shape, p=0.0, dtype=None, seed=None):
    """1 where a uniform draw is below ``p``, else 0."""
    return _random_op(lambda k, s, pp, _, dt: (jax.random.uniform(k, s, dt) < pp).astype(dt),
                      shape, p, 0., dtype, seed)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """``jax.random.truncated_normal`` within two standard deviations."""
    return _random_op(lambda k, s, m, sd, dt: m + sd * jax.random.truncated_normal(
        k, -2., 2., s, dt), shape, mean, stddev, dtype, seed)


# ---------------------------------------------------------------------------
# CTC
# ---------------------------------------------------------------------------

def ctc_label_dense_to_sparse(labels, label_lengths):
    """JAX has no integer sparse tensor: the labels are held dense, zero past each length
    (``is_sparse`` is True, ``to_dense`` gives them)."""
    labels, lengths = _to_tensor(labels), _to_tensor(label_lengths)

    def op(lab, ln):
        ln = jnp.reshape(ln, (-1,))
        keep = jnp.arange(lab.shape[1])[None, :] < ln[:, None]
        return jnp.where(keep, lab, jnp.zeros((), lab.dtype))
    out = _apply(op, labels, lengths)
    if not isinstance(out, Tensor):
        out = _constant_node(out)
    out._sparse = True
    return out


def _constant_node(value):
    """A graph node holding a concrete value (it can carry attributes an array cannot)."""
    return _node(lambda: value, [], jax.tree_util.tree_structure(()))


def _ctc_loss_one(lp, labels, t_len, l_len):
    """-log p(labels | lp) for one sample: lp (T, C) log-probs, blank = C - 1."""
    n_t, n_c = lp.shape
    blank = n_c - 1
    max_l = labels.shape[0]
    ext = jnp.full((2 * max_l + 1,), blank, dtype='int32')
    ext = ext.at[1::2].set(labels.astype('int32'))
    s_len = 2 * l_len + 1
    pos = jnp.arange(2 * max_l + 1)
    valid = pos < s_len
    prev2 = jnp.concatenate([jnp.full((2,), -1, 'int32'), ext[:-2]])
    skip_ok = (ext != blank) & (ext != prev2) & (pos >= 2)
    neg = jnp.asarray(-1e30, lp.dtype)
    emit0 = lp[0, ext]
    alpha0 = jnp.where((pos < 2) & valid, emit0, neg)

    def step(alpha, t):
        a1 = jnp.concatenate([jnp.full((1,), neg), alpha[:-1]])
        a2 = jnp.concatenate([jnp.full((2,), neg), alpha[:-2]])
        a2 = jnp.where(skip_ok, a2, neg)
        new = jnp.logaddexp(jnp.logaddexp(alpha, a1), a2) + lp[t, ext]
        new = jnp.where(valid, new, neg)
        new = jnp.where(t < t_len, new, alpha)
        return new, None
    alpha, _ = lax.scan(step, alpha0, jnp.arange(1, n_t))
    last = alpha[jnp.maximum(s_len - 1, 0)]
    before = jnp.where(s_len >= 2, alpha[jnp.maximum(s_len - 2, 0)], neg)
    return -jnp.logaddexp(last, before)


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """The CTC forward recursion in log space (``lax.scan``, ``vmap`` over the batch) on
    ``log_softmax(log(y_pred + epsilon))``; blank is the last class; ``(samples, 1)``."""
    eps = common.epsilon()

    def op(yt, yp, il, ll):
        lp = jax.nn.log_softmax(jnp.log(yp + eps), axis=-1)
        il = jnp.reshape(il, (-1,)).astype('int32')
        ll = jnp.reshape(ll, (-1,)).astype('int32')
        loss = jax.vmap(_ctc_loss_one)(lp, yt, il, ll)
        return loss[:, None].astype(yp.dtype)
    return _apply(op, _to_tensor(y_true), _to_tensor(y_pred), _to_tensor(input_length),
                  _to_tensor(label_length))


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1,
               merge_repeated=False):
    """Greedy: ``argmax`` per step with repeats and blanks removed, in JAX ops. Beam: the
    shared prefix search (:mod:`keras_backend.ctc_search`) through ``jax.pure_callback``.
    Decoded labels are int64, padded with -1."""
    y_pred, input_length = _to_tensor(y_pred), _to_tensor(input_length)
    eps = common.epsilon()
    if greedy:
        def op(yp, il):
            lp = jnp.log(yp + eps)
            il = jnp.reshape(il, (-1,)).astype('int32')
            n, t_max, n_c = lp.shape
            best = jnp.argmax(lp, axis=-1)
            steps = jnp.arange(t_max)[None, :]
            inside = steps < il[:, None]
            prev = jnp.concatenate([jnp.full((n, 1), -1, best.dtype), best[:, :-1]], axis=1)
            keep = inside & (best != n_c - 1) & (best != prev)
            order = jnp.argsort(~keep, axis=1, stable=True)
            dec = jnp.take_along_axis(best, order, axis=1)
            count = jnp.sum(keep, axis=1)
            dec = jnp.where(steps < count[:, None], dec, -1).astype('int64')
            score = -jnp.sum(jnp.where(inside, jnp.max(lp, axis=-1), 0.), axis=1)
            return dec, score[:, None].astype(yp.dtype)
        dec, score = _apply_multi(op, 2, y_pred, input_length)
        return [_decoded_width(dec, y_pred)], score

    def op(yp, il):
        lp = jnp.log(yp + eps)
        n, t_max, _ = lp.shape
        out_shapes = (jax.ShapeDtypeStruct((top_paths, n, t_max), np.int64),
                      jax.ShapeDtypeStruct((n, top_paths), yp.dtype))

        def host(lp_np, il_np):
            from .. import ctc_search
            lp_np = np.asarray(lp_np, np.float64)
            lp_np = lp_np - np.logaddexp.reduce(lp_np, axis=2, keepdims=True)
            lens = np.clip(np.asarray(il_np).reshape(-1).astype(int), 0, t_max)
            paths, scores = ctc_search.prefix_beam_search(lp_np, lens, beam_width, top_paths,
                                                          merge_repeated)
            dec = np.full((top_paths, n, t_max), -1, np.int64)
            for k in range(top_paths):
                for b in range(n):
                    p = paths[k][b]
                    dec[k, b, :len(p)] = p
            return dec, np.asarray(-scores, dtype=yp.dtype) * -1
        return jax.pure_callback(host, out_shapes, lp, il)
    dec, score = _apply_multi(op, 2, y_pred, input_length)
    paths = [_decoded_width(dec[k], y_pred) for k in range(top_paths)]
    return paths, score


def _decoded_width(dec, y_pred):
    """A decoding padded with -1 to the input's steps: cut to its longest path at once
    when concrete, else when the ``function`` computing it returns (its width depends
    on the values, so the graph holds it at full width and declares it unknown)."""
    if not isinstance(dec, Tensor):
        return jnp.asarray(_trim_decoded(dec))
    out = _shaped_node(lambda d: d, (dec,), (_engine_int_shape(y_pred)[0], None), 'int64')
    out._trim_decoded = True
    return out


# ---------------------------------------------------------------------------
# Higher-order functions
# ---------------------------------------------------------------------------

def _loop_body(fn, arg_avals, names):
    """Build ``fn`` once on stand-ins: (stand-ins, output, the nodes depending on them,
    the outer tensors the body reads)."""
    ins = [_step_standin(a, n) for a, n in zip(arg_avals, names)]
    out = _to_tensor(fn(*ins))
    local = _dependents([out], ins)
    refs = [v for n in _walk([out]) if n.id in local
            for v in n.leaves if isinstance(v, Tensor) and v.id not in local]
    return ins, out, local, refs


def map_fn(fn, elems, name=None, dtype=None):
    """``lax.map`` over the first axis of ``elems``, ``fn`` built once on a stand-in."""
    elems = _to_tensor(elems)
    (x_in,), out, local, refs = _loop_body(fn, [_drop_axis(_avals_of(elems), 0)], ['elem'])
    out_dt = _normalize_dtype(dtype) if dtype is not None else None

    @_context_op
    def op(ctx, xs, _refs):
        def body(x):
            with _tracing_loop_body():
                v = ctx.child(local, {x_in.id: x}).value(out)
            return jnp.asarray(v) if out_dt is None else jnp.asarray(v).astype(out_dt)
        return lax.map(body, xs)
    return _loop_node(op, (elems, refs), out, local, lead=elems, dt=out_dt)


def _loop_node(op, args, out, local, lead=None, dt=None, scalar=False):
    leaves, treedef = _flatten(args)
    avals = []
    for p in range(2):
        o = _avals_of(out)[p]
        shape = tuple(o.shape)
        if lead is not None:
            shape = (_avals_of(lead)[p].shape[0],) + shape
        avals.append(jax.ShapeDtypeStruct(shape, np.dtype(dt) if dt else o.dtype))
    node = Tensor(op, leaves, treedef, tuple(avals))
    node.hidden = [out]
    node._uses_learning_phase = getattr(out, '_uses_learning_phase', False)
    return node


def _fold(fn, elems, initializer, reverse_order):
    elems = _to_tensor(elems)
    e_av = _drop_axis(_avals_of(elems), 0)
    if initializer is None:
        init = elems[-1] if reverse_order else elems[0]
        rest = elems[:-1] if reverse_order else elems[1:]
    else:
        init, rest = _to_tensor(initializer), elems
    (acc_in, x_in), out, local, refs = _loop_body(fn, [_avals_of(init), e_av], ['acc', 'elem'])

    @_context_op
    def op(ctx, a0, xs, _refs):
        def body(acc, x):
            with _tracing_loop_body():
                v = ctx.child(local, {acc_in.id: acc, x_in.id: x}).value(out)
            v = jnp.asarray(v).astype(jnp.asarray(acc).dtype)
            return v, None
        acc, _ = lax.scan(body, jnp.asarray(a0), xs, reverse=reverse_order)
        return acc
    leaves, treedef = _flatten((init, rest, refs))
    if not _builtin_any(isinstance(v, Tensor) for v in leaves):
        ctx = _Context()
        return op(ctx, init, rest, refs)
    node = Tensor(op, leaves, treedef, _avals_of(init))
    node.hidden = [out]
    return node


def foldl(fn, elems, initializer=None, name=None):
    """``lax.scan`` from the first element; ``fn(acc, x)`` built once on stand-ins."""
    return _fold(fn, elems, initializer, False)


def foldr(fn, elems, initializer=None, name=None):
    """``lax.scan`` from the last element; ``fn(acc, x)`` built once on stand-ins."""
    return _fold(fn, elems, initializer, True)


# ---------------------------------------------------------------------------
# Locally connected
# ---------------------------------------------------------------------------

def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """One product per output position (``jnp.einsum`` over the stacked patches)."""
    data_format = common.normalize_data_format(data_format)
    k_size = shape_rules.normalize_tuple(kernel_size, 1, 'kernel_size')[0]
    stride = shape_rules.normalize_tuple(strides, 1, 'strides')[0]

    def op(v, k):
        v = _cl(v, data_format)
        n_out = k.shape[0]
        patches = jnp.stack([v[:, i * stride:i * stride + k_size, :].reshape(v.shape[0], -1)
                             for i in range(n_out)], axis=1)
        y = jnp.einsum('bpf,pfo->bpo', patches, k.astype(v.dtype))
        return _cf(y, data_format)
    return _apply(op, _to_tensor(inputs), _to_tensor(kernel))


def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """One product per output position (``jnp.einsum`` over the stacked patches); a
    channels_first patch is flattened in (channels, rows, cols) order, as Keras'."""
    data_format = common.normalize_data_format(data_format)
    kr, kc = shape_rules.normalize_tuple(kernel_size, 2, 'kernel_size')
    sr, sc = shape_rules.normalize_tuple(strides, 2, 'strides')
    rows, cols = shape_rules.normalize_tuple(output_shape, 2, 'output_shape')

    def op(v, k):
        ps = []
        for i in range(rows):
            for j in range(cols):
                if data_format == 'channels_first':
                    p = v[:, :, i * sr:i * sr + kr, j * sc:j * sc + kc]
                else:
                    p = v[:, i * sr:i * sr + kr, j * sc:j * sc + kc, :]
                ps.append(p.reshape(v.shape[0], -1))
        patches = jnp.stack(ps, axis=1)
        y = jnp.einsum('bpf,pfo->bpo', patches, k.astype(v.dtype))
        y = y.reshape(v.shape[0], rows, cols, -1)
        return _cf(y, data_format)
    return _apply(op, _to_tensor(inputs), _to_tensor(kernel))
