"""The Keras 2 backend API on CNTK 2.7: the op bodies, in the order of ``api.SECTIONS``.

Engine-level and unchecked: they call each other directly, and the package (``__init__``)
puts each behind its shared checks and docstring. How the graph is held, evaluated and
compiled, and the helper vocabulary they use (``_to_tensor``, ``_constant_like``, ...), are
in ``core``. A public function's own docstring is a short CNTK note.
"""
import builtins
import contextlib
import sys

import numpy as np

from .. import checks, common, ctc_search, generic, shape_rules
from ..common import *  # noqa: F401,F403  (config names)
from . import core
from .core import ENGINE, ENGINE_VERSION  # noqa: F401  (what api.install and the CLI read)
from .core import (C, Function, _CONTROL_UPDATES, _FreeAxis,
                   _GRADIENT_OF, _INT_DTYPES, _MAYBE_EMPTY, _PassThrough, _RunTime,
                   _SHAPE_SOURCES, _SparseLabels, _State, _TRANSPOSED, _UNBATCHED, _add_axis,
                   _after_control_updates, _coerce_pair, _constant_like, _drop_axes,
                   _drop_axis, _empty, _engine_int_shape, _evaluate, _is_engine_tensor,
                   _keras_meta, _log_softmax, _nd, _new_learning_phase, _normalize_dtype,
                   _np_dtype, _numpy_op, _one_hot, _op_seed, _pad, _param_like, _per_sample,
                   _resolve_sizes, _seq_last, _seq_previous, _shape_arg, _stack_mixed,
                   _static_shape, _storage_dtype, _to_seq, _to_tensor, _transpose, _unbatch,
                   _var)

#: this module, whose engine-level functions the functions of ``generic`` call
_K = sys.modules[__name__]


# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------

def backend():
    return 'cntk'


# ---------------------------------------------------------------------------
# Session and learning phase
# ---------------------------------------------------------------------------

def clear_session():
    """CNTK keeps no global graph: only the uids, the learning phase (a fresh placeholder) and the
    adapter's cached graph state are reset."""
    common._reset_session_state()
    _SHAPE_SOURCES.clear()
    _UNBATCHED.clear()
    _TRANSPOSED.clear()
    _State.learning_phase = _new_learning_phase()


def get_session():
    """CNTK has no sessions: a session-like object whose ``run(fetches, feed_dict=None)`` evaluates
    tensors."""
    return _State.session


def set_session(session):
    """CNTK has no sessions: ``session`` is any object with a ``run(fetches, feed_dict)`` method
    (ValueError otherwise)."""
    if not hasattr(session, 'run'):
        raise ValueError('set_session: expected an object with a run method, got %r'
                         % (session,))
    _State.session = session


def learning_phase():
    """A scalar float32 CNTK input (``C.input_variable``) fed 0 or 1; the Python int 0/1 after
    ``set_learning_phase``. A ``function`` whose graph uses it without listing it as an input feeds
    0."""
    return common._learning_phase_or(lambda: _State.learning_phase)


@contextlib.contextmanager
def name_scope(name):
    """CNTK has no name scopes: as in Keras 2.3.1's CNTK backend, the open scopes (joined with
    ``_``) prefix the names given to ``variable`` and ``constant`` (``'<scopes>/<name>'``), so
    nested layers get distinct weight names."""
    with common._name_scope_stack(name):
        yield name


# ---------------------------------------------------------------------------
# Tensors and variables
# ---------------------------------------------------------------------------

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
        keep = C.less(pos, C.reshape(tensor.lengths, (1,), begin_axis=1, end_axis=1))
        return C.element_select(keep, dense, _constant_like(dense, 0))
    x = _to_tensor(tensor)
    v = _var(x)
    if v.is_sparse:
        dim = v.shape[-1]
        d = C.times(x, C.constant(np.eye(dim, dtype=v.dtype)))
        return C.unpack_batch(d) if v.dynamic_axes else d
    return x


def variable(value, dtype=None, name=None, constraint=None):
    """A CNTK ``C.parameter``; float16 is held as is, integer dtypes in ``floatx()`` and bool as
    0/1 in ``floatx()`` (``K.dtype`` reports ``'bool'``). ``name`` is prefixed by the open name
    scopes; ``constraint`` is kept as ``.constraint``."""
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
    p = C.parameter(shape=value.shape, init=value, dtype=value.dtype,
                    name=common._scoped_name(name, 'variable', '_') or '')
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
    value = np.asarray(value)
    if reported == 'bool':
        value = value.astype(bool)
    value = value.astype(dt)
    if shape is not None:
        shape = tuple(int(s) for s in shape)
        if value.ndim == 0 or value.size == 1:
            value = np.full(shape, value.reshape(()), dtype=dt)
        else:
            value = value.reshape(shape)
    c = C.constant(value, dtype=dt, name=common._scoped_name(name, 'constant', '_') or '')
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
    shape = tuple(shape)
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
    if builtins.all(d is not None for d in s):
        return C.constant(np.asarray(s, dtype=_np_dtype()))
    out = _numpy_op([x], lambda v: [np.asarray(v.shape)], [(len(s),)], name='shape')[0]
    _SHAPE_SOURCES[out.uid] = _to_tensor(x)
    return out


int_shape = core.int_shape


def ndim(x):
    return len(int_shape(x))


def size(x, name=None):
    """A scalar in ``floatx()``: a constant for a static shape, else a numpy graph node; ``name``
    is ignored."""
    s = int_shape(x)
    if builtins.all(d is not None for d in s):
        return C.constant(np.asarray(np.prod(s), dtype=_np_dtype()))
    return _numpy_op([x], lambda v: [np.asarray(v.size)], [()], name='size')[0]


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
    except RuntimeError as e:
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
    if isinstance(size, (tuple, list)):
        if len(size) != 2:   # the shared rules take a one-element size too
            raise ValueError('eye: size must be an int or (rows, cols), got %r' % (size,))
        return variable(np.eye(size[0], size[1]), dtype, name)
    return variable(np.eye(size), dtype, name)


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
    rng = np.random.RandomState(seed if seed is not None else np.random.randint(10 ** 7))
    return variable(rng.uniform(low, high, size=tuple(shape)), dtype, name)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    """Drawn with numpy ``RandomState(seed)`` into a CNTK parameter."""
    rng = np.random.RandomState(seed if seed is not None else np.random.randint(10 ** 7))
    return variable(rng.normal(mean, scale, size=tuple(shape)), dtype, name)


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
    if _var(x).dtype != target:
        return C.cast(x, target)
    return x


# ---------------------------------------------------------------------------
# Variable updates
# ---------------------------------------------------------------------------

update = core.update


def update_add(x, increment):
    """A ``C.assign`` of ``C.plus(x, increment)``."""
    x_, inc = _coerce_pair(x, increment)
    return update(x, C.plus(x_, inc))


def update_sub(x, decrement):
    """A ``C.assign`` of ``C.minus(x, decrement)``."""
    x_, dec = _coerce_pair(x, decrement)
    return update(x, C.minus(x_, dec))


def moving_average_update(x, value, momentum):
    """A ``C.assign`` node."""
    x_, value = _coerce_pair(x, value)
    return update(x, x_ * _constant_like(x_, momentum) + value * _constant_like(x_, 1. - momentum))


# ---------------------------------------------------------------------------
# Math
# ---------------------------------------------------------------------------

def dot(x, y):
    """``C.times``; an N-D ``y`` has its contracted axis moved first (``C.transpose``)."""
    x, y = _coerce_pair(x, y)
    nx, ny = _nd(x), _nd(y)
    if nx == 0 or ny == 0:
        return x * y
    if ny == 1:
        r = C.times(x, C.reshape(y, _var(y).shape + (1,)))
        return _drop_axis(r, nx - 1)
    if ny == 2:
        return C.times(x, y)
    perm = [ny - 2] + list(range(ny - 2)) + [ny - 1]
    return C.times(x, C.transpose(y, perm), output_rank=ny - 1)


def batch_dot(x, y, axes=None):
    """Each sample is a ``C.times`` on CNTK's batch axis (``C.to_batch`` and ``C.unpack_batch``).
    """
    x, y = _coerce_pair(x, y)
    nx, ny = _nd(x), _nd(y)
    ax, ay = shape_rules.batch_dot_axes(nx, ny, axes)
    xs, ys = _static_shape(x), _static_shape(y)
    out_shape = shape_rules.batch_dot_output_shape(xs, ys, ax, ay)
    xr = [a for a in range(1, nx) if a != ax]
    yr = [a for a in range(1, ny) if a != ay]
    xt = C.transpose(x, [0] + xr + [ax]) if [0] + xr + [ax] != list(range(nx)) else x
    yt = C.transpose(y, [0, ay] + yr) if [0, ay] + yr != list(range(ny)) else y
    xb, yb = _per_sample(xt), _per_sample(yt)
    if not xr:
        xb = C.reshape(xb, (1,) + _var(xb).shape)
    if not yr:
        yb = C.reshape(yb, _var(yb).shape + (1,))
    r = C.times(xb, yb, output_rank=builtins.max(len(yr), 1))
    r = _unbatch(r, x)
    # the unit axes added for a side without other axes are dropped by
    # position (CNTK's reshape takes at most one free size)
    if _nd(r) > len(out_shape) and not xr:
        r = _drop_axis(r, 1)
    if _nd(r) > len(out_shape) and not yr:
        r = _drop_axis(r, _nd(r) - 1)
    if _nd(r) == len(out_shape) and builtins.sum(d is None for d in out_shape[1:]) > 1:
        return r
    return C.reshape(r, _shape_arg(out_shape[1:]), begin_axis=1)


def transpose(x):
    """``C.transpose``."""
    x = _to_tensor(x)
    n = _nd(x)
    if n < 2:
        return x
    return C.transpose(x, list(range(n))[::-1])


def gather(reference, indices):
    """``C.gather``; the indices are held as floats."""
    reference = _to_tensor(reference)
    indices = _to_tensor(indices, dtype=dtype(reference))
    n = _nd(indices)
    if _nd(reference) == 1:
        # CNTK's Gather backprop on a 1-D reference aborts the process
        # ("ScatterValues: Indices map out of bounds"): gather rows of (n, 1)
        return _keras_meta(_drop_axis(C.gather(_add_axis(reference, 1), indices), n))
    y = C.gather(reference, indices)
    # An identity reshape of the gathered rows: without it, Gather's backprop
    # rejects the gradient of an elementwise op that follows ("incorrect
    # Value() matrix shape ... during backprop") when the indices have a free
    # dimension.
    rows = [-1 if d is None else d for d in _static_shape(reference)[1:]]
    if rows.count(-1) <= 1:
        y = C.reshape(y, tuple(rows), begin_axis=n)
    return _keras_meta(y)


def _reduce(op, x, axis, keepdims):
    x = _to_tensor(x)
    n = _nd(x)
    if n == 0:
        return x
    axes = shape_rules.normalize_axes(axis, n)
    r = op(x, axis=axes if len(axes) > 1 else axes[0])
    if not keepdims:
        r = _drop_axes(r, axes)
    return r


def max(x, axis=None, keepdims=False):
    """``C.reduce_max``."""
    return _reduce(C.reduce_max, x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    """``C.reduce_min``."""
    return _reduce(C.reduce_min, x, axis, keepdims)


def sum(x, axis=None, keepdims=False):
    """``C.reduce_sum``."""
    return _reduce(C.reduce_sum, x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    """``C.reduce_prod``."""
    return _reduce(C.reduce_prod, x, axis, keepdims)


def _scan(x, axis, product):
    x = _to_tensor(x)
    n = _nd(x)
    a = shape_rules.normalize_axis(axis, n)
    length = _static_shape(x)[a]
    if length is None:
        # free length: a numpy graph node (gradient: reversed cumulative sum)
        if product:
            return _numpy_op([x], lambda v: [np.cumprod(v, axis=a)], [_static_shape(x)],
                             dtype=np.dtype(_var(x).dtype),
                             grad_fn=lambda vals, _, g: _cumprod_grad(vals[0], g, a),
                             name='cumprod')[0]
        return _numpy_op([x], lambda v: [np.cumsum(v, axis=a)], [_static_shape(x)],
                         dtype=np.dtype(_var(x).dtype),
                         grad_fn=lambda vals, _, g: np.flip(np.cumsum(np.flip(g, a), a), a),
                         name='cumsum')[0]
    if not product:
        # cumsum as a product with an upper-triangular matrix (C.times)
        perm = [i for i in range(n) if i != a] + [a]
        xt = C.transpose(x, perm) if perm != list(range(n)) else x
        tri = C.constant(np.triu(np.ones((length, length))).astype(_var(x).dtype))
        r = C.times(xt, tri)
        inv = [int(i) for i in np.argsort(perm)]
        return C.transpose(r, inv) if perm != list(range(n)) else r
    parts = []
    acc = None
    for i in range(length):
        s = C.slice(x, a, i, i + 1)
        acc = s if acc is None else acc * s
        parts.append(acc)
    return C.splice(*parts, axis=a) if len(parts) > 1 else parts[0]


def _cumprod_grad(x, g, a):
    """Gradient of cumprod along ``a`` (exact also with zeros in ``x``)."""
    x = np.moveaxis(x, a, 0)
    g = np.moveaxis(g, a, 0)
    n = x.shape[0]
    out = np.zeros_like(x)
    for j in range(n):
        for i in range(j, n):
            others = np.prod(np.delete(x[:i + 1], j, axis=0), axis=0)
            out[j] += g[i] * others
    return np.moveaxis(out, 0, a)


def cumsum(x, axis=0):
    """A product with an upper-triangular constant (``C.times``); a free length along ``axis`` runs
    in a numpy graph node (its gradient a reversed cumulative sum)."""
    return _scan(x, axis, False)


def cumprod(x, axis=0):
    """Running products of slices (``C.slice``), spliced; a free length along ``axis`` runs in a
    numpy graph node (its gradient exact also with zeros in ``x``)."""
    return _scan(x, axis, True)


def var(x, axis=None, keepdims=False):
    """``C.reduce_mean`` of the squared deviations (population variance)."""
    x = _to_tensor(x)
    m = mean(x, axis, keepdims=True)
    return mean(C.square(x - m), axis, keepdims)


def std(x, axis=None, keepdims=False):
    """``C.sqrt`` of ``var``."""
    return C.sqrt(var(x, axis, keepdims))


def mean(x, axis=None, keepdims=False):
    """``C.reduce_mean``."""
    return _reduce(C.reduce_mean, x, axis, keepdims)


def any(x, axis=None, keepdims=False):
    """1.0/0.0 in ``floatx()`` (CNTK has no bool)."""
    x = _to_tensor(x)
    return C.greater(max(C.abs(x), axis, keepdims), _constant_like(x, 0))


def all(x, axis=None, keepdims=False):
    """1.0/0.0 in ``floatx()`` (CNTK has no bool)."""
    x = _to_tensor(x)
    return C.greater(min(C.abs(x), axis, keepdims), _constant_like(x, 0))


def argmax(x, axis=-1):
    """``C.argmax``; the indices are integer values held in ``floatx()``."""
    x = _to_tensor(x)
    a = shape_rules.normalize_axis(axis, _nd(x))
    return _drop_axis(C.argmax(x, axis=a), a)


def argmin(x, axis=-1):
    """``C.argmin``; the indices are integer values held in ``floatx()``."""
    x = _to_tensor(x)
    a = shape_rules.normalize_axis(axis, _nd(x))
    return _drop_axis(C.argmin(x, axis=a), a)


def square(x):
    """``C.square``."""
    return C.square(_to_tensor(x))


def abs(x):
    """``C.abs``."""
    return C.abs(_to_tensor(x))


def sqrt(x):
    """``C.sqrt``; negatives are clipped to 0 first."""
    x = _to_tensor(x)
    return C.sqrt(C.element_max(x, _constant_like(x, 0)))


def exp(x):
    """``C.exp``."""
    return C.exp(_to_tensor(x))


def log(x):
    """``C.log``."""
    return C.log(_to_tensor(x))


def logsumexp(x, axis=None, keepdims=False):
    """``C.reduce_log_sum_exp`` (numerically stable)."""
    return _reduce(C.reduce_log_sum_exp, x, axis, keepdims)


def round(x):
    """Half to even (as numpy), built from ``C.floor``."""
    x = _to_tensor(x)
    r = C.floor(x + _constant_like(x, 0.5))
    tie = C.equal(r - x, _constant_like(x, 0.5))
    odd = C.not_equal(r - _constant_like(x, 2) * C.floor(r * _constant_like(x, 0.5)),
                      _constant_like(x, 0))
    return r - tie * odd


def sign(x):
    """``C.greater(x, 0) - C.less(x, 0)``."""
    x = _to_tensor(x)
    return C.greater(x, _constant_like(x, 0)) - C.less(x, _constant_like(x, 0))


def pow(x, a):
    """``C.pow``."""
    x, a = _coerce_pair(x, a)
    return C.pow(x, a)


def clip(x, min_value, max_value):
    """``C.clip``; a ``max_value`` below ``min_value`` means ``min_value`` (tensor bounds too, with
    ``C.element_max``); None is unbounded."""
    x = _to_tensor(x)
    min_value, max_value = shape_rules.clip_bounds(min_value, max_value)
    lo, hi = _coerce_pair(x, min_value)[1], _coerce_pair(x, max_value)[1]
    if _is_engine_tensor(min_value) or _is_engine_tensor(max_value):
        hi = C.element_max(hi, lo)
    return C.clip(x, lo, hi)


def equal(x, y):
    """``C.equal``; 1.0/0.0 in ``floatx()`` (CNTK has no bool)."""
    return C.equal(*_coerce_pair(x, y))


def not_equal(x, y):
    """``C.not_equal``; 1.0/0.0 in ``floatx()`` (CNTK has no bool)."""
    return C.not_equal(*_coerce_pair(x, y))


def greater(x, y):
    """``C.greater``; 1.0/0.0 in ``floatx()`` (CNTK has no bool)."""
    return C.greater(*_coerce_pair(x, y))


def greater_equal(x, y):
    """``C.greater_equal``; 1.0/0.0 in ``floatx()`` (CNTK has no bool)."""
    return C.greater_equal(*_coerce_pair(x, y))


def less(x, y):
    """``C.less``; 1.0/0.0 in ``floatx()`` (CNTK has no bool)."""
    return C.less(*_coerce_pair(x, y))


def less_equal(x, y):
    """``C.less_equal``; 1.0/0.0 in ``floatx()`` (CNTK has no bool)."""
    return C.less_equal(*_coerce_pair(x, y))


def maximum(x, y):
    """``C.element_max``, in the wider dtype of the operands."""
    return C.element_max(*_coerce_pair(x, y))


def minimum(x, y):
    """``C.element_min``, in the wider dtype of the operands."""
    return C.element_min(*_coerce_pair(x, y))


def sin(x):
    """``C.sin``."""
    return C.sin(_to_tensor(x))


def cos(x):
    """``C.cos``."""
    return C.cos(_to_tensor(x))


def _broadcast_param(p, x_ndim, axis):
    """Lay a 1-D statistic ``p`` along ``axis`` of a rank-``x_ndim`` tensor."""
    p = _to_tensor(p)
    if _nd(p) == 1 and x_ndim > 1:
        shape = [1] * x_ndim
        shape[axis] = _static_shape(p)[0]
        return C.reshape(p, tuple(shape))
    return p


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """Mean and (population) variance with ``C.reduce_mean``."""
    x = _to_tensor(x)
    n = _nd(x)
    axes = shape_rules.normalize_axes(reduction_axes, n)
    m = mean(x, axes, keepdims=True)
    v = mean(C.square(x - m), axes, keepdims=True)
    y = (x - m) / C.sqrt(v + _constant_like(x, epsilon))
    kept = [i for i in range(n) if i not in axes]
    def lay(p):
        p = _to_tensor(p)
        if _nd(p) == 1 and len(kept) == 1:
            return _broadcast_param(p, n, kept[0])
        if _nd(p) == len(kept) and len(kept) < n:
            return C.reshape(p, tuple(1 if i in axes else _static_shape(x)[i] for i in range(n)))
        return p
    if gamma is not None:
        y = y * lay(gamma)
    if beta is not None:
        y = y + lay(beta)
    return y, _drop_axes(m, axes), _drop_axes(v, axes)


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """CNTK elementwise ops; 1-D ``mean``/``var``/``beta``/``gamma`` are reshaped along ``axis``.
    """
    x = _to_tensor(x)
    n = _nd(x)
    a = shape_rules.normalize_axis(axis, n)
    m = _broadcast_param(mean, n, a)
    v = _broadcast_param(var, n, a)
    y = (x - m) / C.sqrt(v + _constant_like(x, epsilon))
    if gamma is not None:
        y = y * _broadcast_param(gamma, n, a)
    if beta is not None:
        y = y + _broadcast_param(beta, n, a)
    return y


# ---------------------------------------------------------------------------
# Shape manipulation
# ---------------------------------------------------------------------------

def concatenate(tensors, axis=-1):
    """``C.splice``; zero-size parts are dropped (CNTK cannot compute them) and sparse inputs are
    densified first."""
    tensors = [to_dense(t) if is_sparse(t) else _to_tensor(t) for t in tensors]
    a = shape_rules.normalize_axis(axis, _nd(tensors[0]))
    # zero-size parts add nothing (and CNTK cannot compute them)
    kept = [t for t in tensors if _static_shape(t)[a] != 0]
    if kept and len(kept) < len(tensors):
        tensors = kept
    if len(tensors) == 1:
        return tensors[0]
    return C.splice(*tensors, axis=a)


def reshape(x, shape):
    """``C.reshape``; ``None`` in ``shape`` means -1. Sizes may be tensors (``K.shape(y)[i]``):
    those known while building the graph are used as numbers, leading ``K.shape(x)[i]`` of
    ``x`` itself keep those axes, and one size known only at run time is inferred (-1); with
    more, a graph node reshapes at run time (``UserFunction``, gradient reshaped back)."""
    x = _to_tensor(x)
    sizes = _resolve_sizes(shape, 'reshape', 'shape')
    nd_ = _nd(x)
    keep = 0
    while keep < builtins.min(len(sizes), nd_) and isinstance(sizes[keep], _FreeAxis) \
            and sizes[keep].of(x) and sizes[keep].axis == keep:
        keep += 1
    rest = [-1 if d is None or (not isinstance(d, int)) else d for d in sizes[keep:]]
    for d in rest:   # sizes held in a shape tensor, which the shared rules do not read
        if d < -1:
            raise ValueError('reshape: shape %r holds a negative size other than -1' % (shape,))
    if rest.count(-1) <= 1:
        if keep == 0:
            return C.reshape(x, tuple(rest))
        if not rest:
            return x
        return C.reshape(x, tuple(rest), begin_axis=keep)
    if builtins.all(d is None or isinstance(d, int) for d in sizes):
        raise ValueError('reshape: shape %r has more than one unknown (-1 or None) size'
                         % (shape,))
    if _is_engine_tensor(shape):
        target = shape
    else:
        target = _stack_mixed([-1 if d is None else d for d in shape])
    target = C.reshape(target, (len(sizes),))
    static = [d if isinstance(d, int) and d >= 0 else None for d in sizes]

    def run(v, t):
        return [v.reshape(tuple(int(e) for e in t.reshape(-1)))]

    def grad(values, _, g):
        return g.reshape(values[0].shape)
    return _numpy_op([x, target], run, [tuple(static)], dtype=_var(x).dtype, grad_fn=grad,
                     name='reshape')[0]


def permute_dimensions(x, pattern):
    """``C.transpose``."""
    x = _to_tensor(x)
    pattern = tuple(int(p) for p in pattern)
    if pattern == tuple(range(_nd(x))):
        return x
    return C.transpose(x, pattern)


def _bilinear_matrix(n_in, n_out):
    """(n_out, n_in) weights of TF's half-pixel bilinear resize along one axis."""
    m = np.zeros((n_out, n_in))
    scale = n_in / float(n_out)
    for i in range(n_out):
        src = (i + 0.5) * scale - 0.5
        src = np.clip(src, 0, n_in - 1)
        lo = int(np.floor(src))
        hi = lo + 1 if lo + 1 < n_in else lo
        w = src - lo
        m[i, lo] += 1 - w
        m[i, hi] += w
    return m


def resize_images(x, height_factor, width_factor, data_format, interpolation='nearest'):
    """'nearest' repeats pixels (``repeat_elements``); 'bilinear' follows TensorFlow's resize with
    half-pixel centres (interpolation matrices applied with ``C.times``) and needs static spatial
    sizes."""
    x = _to_tensor(x)
    fmt = normalize_data_format(data_format)
    interpolation = shape_rules.normalize_interpolation(interpolation)
    ha, wa = (2, 3) if fmt == 'channels_first' else (1, 2)
    fh, fw = int(height_factor), int(width_factor)
    if interpolation == 'nearest':
        return repeat_elements(repeat_elements(x, fh, ha), fw, wa)
    for a, f in ((ha, fh), (wa, fw)):
        n = _static_shape(x)[a]
        if n is None:
            raise ValueError('resize_images: bilinear needs static spatial sizes')
        m = _bilinear_matrix(n, n * f).astype(_var(x).dtype)
        perm = [i for i in range(4) if i != a] + [a]
        xt = C.transpose(x, perm)
        r = C.times(xt, C.constant(m.T))
        x = C.transpose(r, [int(i) for i in np.argsort(perm)])
    return x


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    """Nearest upsampling with ``repeat_elements``."""
    x = _to_tensor(x)
    fmt = normalize_data_format(data_format)
    axes = (2, 3, 4) if fmt == 'channels_first' else (1, 2, 3)
    for a, f in zip(axes, (depth_factor, height_factor, width_factor)):
        x = repeat_elements(x, f, a)
    return x


def repeat_elements(x, rep, axis):
    """``C.splice`` of ``rep`` copies along a new axis, then ``C.reshape``."""
    x = _to_tensor(x)
    a = shape_rules.normalize_axis(axis, _nd(x))
    rep = int(rep)
    if rep == 1:
        return x
    e = _add_axis(x, a + 1)
    e = C.splice(*([e] * rep), axis=a + 1)
    return _keras_meta(C.reshape(e, (-1,), begin_axis=a, end_axis=a + 2)
                 if _static_shape(x)[a] is None else
                 C.reshape(e, (_static_shape(x)[a] * rep,), begin_axis=a, end_axis=a + 2))


def repeat(x, n):
    """``C.splice`` of ``n`` copies along a new axis 1; a count known only at run time
    (a tensor) broadcasts ``x`` against ones of that length."""
    x = _to_tensor(x)
    e = _add_axis(x, 1)
    count = _resolve_sizes([n], 'repeat', 'n')[0]
    if isinstance(count, (_FreeAxis, _RunTime)):
        return _repeat_axis(e, 1, _ones_of_length(count, _var(x).dtype))
    if count is None or count < 0:   # a count held in a tensor, which the shared rules do not read
        raise ValueError('repeat: n must be a count >= 0, got %r' % (n,))
    if count == 0:
        return tile(e, [1, 0, 1])
    return C.splice(*([e] * count), axis=1) if count > 1 else e


def arange(start, stop=None, step=1, dtype='int32'):
    """Integer values held in ``floatx()``. Scalar tensor arguments are read at run time by a numpy
    graph node (free length). CNTK holds no zero-element value: a range empty at run time is an
    empty array as an output of ``function``/``eval``, a ValueError when another op reads it."""
    if not builtins.any(_is_engine_tensor(v) for v in (start, stop, step)):
        values = np.arange(start, stop, step).astype(_np_dtype(dtype))
        if values.size == 0:
            return _empty((0,), values.dtype)
        return C.constant(values)
    dt = _np_dtype(dtype, 'arange')
    like = [v for v in (start, stop, step) if _is_engine_tensor(v)][0]
    ins = [_to_tensor(v, dtype=_var(like).dtype)
           for v in (start, stop if stop is not None else _constant_like(like, 0), step)]
    has_stop = stop is not None
    state = {'empty': False, 'consumed': False}

    def run(a, b, s):
        a, b, s = a.reshape(-1)[0], b.reshape(-1)[0], s.reshape(-1)[0]
        values = np.arange(a, b, s) if has_stop else np.arange(0, a, s)
        state['empty'] = values.size == 0
        if state['empty']:
            if state['consumed']:
                raise ValueError('arange: the range (start=%r, stop=%r, step=%r) is empty at '
                                 'run time; CNTK cannot pass an empty tensor to another op'
                                 % ((a, b, s) if has_stop else (0, a, s)))
            values = np.zeros((1,))   # stands in; function/eval return an empty array
        return [values]
    out = _numpy_op(ins, run, [(None,)], dtype=dt, name='arange')[0]
    _MAYBE_EMPTY[out.uid] = state
    return out


def tile(x, n):
    """``C.splice`` of copies per axis; zero repetitions need a static shape (CNTK cannot compute
    zero-size values)."""
    x = _to_tensor(x)
    reps = _resolve_sizes(n, 'tile', 'n')
    nd_ = _nd(x)
    if len(reps) > nd_:
        for _ in range(len(reps) - nd_):
            x = _add_axis(x, 0)
        nd_ = len(reps)
    reps = [1] * (nd_ - len(reps)) + reps
    for a, r in enumerate(reps):
        if isinstance(r, (_FreeAxis, _RunTime)):
            x = _repeat_axis(x, a, _ones_of_length(r, _var(x).dtype))
            continue
        if r is None:
            raise ValueError('tile: n must hold numbers or scalar tensors, got %r' % (n,))
        if r < 0:   # a repetition count held in a tensor
            raise ValueError('tile: repetitions must be >= 0, got %r' % (n,))
        if r > 1:
            x = C.splice(*([x] * r), axis=a)
        elif r == 0:
            shp = list(_static_shape(x))
            shp[a] = 0
            if builtins.any(d is None for d in shp):
                raise ValueError('tile: zero repetitions need a static shape on CNTK '
                                 '(it cannot compute zero-size values), got %r' % (shp,))
            x = _empty(shp, _var(x).dtype)
    return x


def _ones_of_length(r, dtype):
    """A 1-D tensor of ones as long as the run-time size ``r``: for a free axis of a tensor,
    ``C.ones_like`` of it reduced over its other axes; for another run-time value, a graph
    node (``UserFunction``) that shapes ones by it."""
    if isinstance(r, _FreeAxis):
        src = _to_tensor(r.src)
        others = tuple(j for j in range(_nd(src)) if j != r.axis)
        ones = C.ones_like(src)
        if others:
            ones = _drop_axes(C.reduce_max(ones, axis=others), others)
    else:
        def run(v):
            count = float(np.asarray(v).reshape(-1)[0])
            if count < 1 or count != int(count):
                raise ValueError('a repetition count known at run time must be an integer '
                                 '>= 1 on CNTK (it holds no zero-size values), got %r' % count)
            return [np.ones((int(count),))]
        ones = _numpy_op([r.value], run, [(None,)], dtype=dtype, name='ones_of_length')[0]
    if _var(ones).dtype != dtype:
        ones = C.cast(ones, dtype)
    return ones


def _repeat_axis(x, a, ones):
    """Repeat ``x`` along axis ``a`` as many times as ``ones`` (1-D) is long: ``x`` is
    broadcast against the ones, and the two axes are merged when ``x``'s is not 1."""
    nd_ = _nd(x)
    d = _static_shape(x)[a]
    if d == 1:
        return C.element_times(x, C.reshape(ones, (-1,) + (1,) * (nd_ - a - 1)))
    y = C.element_times(_add_axis(x, a), C.reshape(ones, (-1,) + (1,) * (nd_ - a)))
    return C.reshape(y, (-1,), begin_axis=a, end_axis=a + 2)


def flatten(x):
    """``C.reshape``."""
    return C.reshape(_to_tensor(x), (-1,))


def batch_flatten(x):
    """``C.reshape`` of the axes after the first."""
    x = _to_tensor(x)
    s = _static_shape(x)
    if len(s) == 1:
        return _add_axis(x, 1)
    if builtins.all(d is not None for d in s[1:]):
        return C.reshape(x, (int(np.prod(s[1:])),), begin_axis=1)
    return C.reshape(x, (-1,), begin_axis=1)


def expand_dims(x, axis=-1):
    """``C.reshape`` inserting a unit axis."""
    x = _to_tensor(x)
    n = _nd(x)
    axis = int(axis)
    return _add_axis(x, axis + n + 1 if axis < 0 else axis)


def squeeze(x, axis):
    """``C.reshape`` removing the axis; an axis of unknown (free) size is not checked."""
    x = _to_tensor(x)
    a = shape_rules.normalize_axis(axis, _nd(x))
    if _static_shape(x)[a] not in (1, None):   # the shared rules check the axis, not its size
        raise ValueError('squeeze: axis %d has size %d, not 1' % (axis, _static_shape(x)[a]))
    return _drop_axis(x, a)


def temporal_padding(x, padding=(1, 1)):
    """``C.pad``."""
    x = _to_tensor(x)
    p = shape_rules.normalize_tuple(padding, 2, 'padding')
    return _pad(x, [(0, 0), p, (0, 0)])


def _spatial_padding(x, padding, n, data_format):
    x = _to_tensor(x)
    fmt = normalize_data_format(data_format)
    pairs = list(shape_rules.normalize_spatial_padding(padding, n))
    full = [(0, 0)] + ([(0, 0)] + pairs if fmt == 'channels_first' else pairs + [(0, 0)])
    return _pad(x, full)


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    """``C.pad``."""
    return _spatial_padding(x, padding, 2, data_format)


def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    """``C.pad``."""
    return _spatial_padding(x, padding, 3, data_format)


def stack(x, axis=0):
    """``C.splice`` along a new unit axis."""
    x = [_to_tensor(t) for t in x]
    n = _nd(x[0])
    a = axis + n + 1 if axis < 0 else axis
    parts = [_add_axis(t, a) for t in x]
    return C.splice(*parts, axis=a) if len(parts) > 1 else parts[0]


def one_hot(indices, num_classes):
    """``C.equal`` against a constant range rather than ``C.one_hot``: it has a (zero) gradient, so
    graphs that differentiate through integer targets do not hit CNTK's one-hot backprop. 1.0/0.0
    in ``floatx()``."""
    indices = _to_tensor(indices)
    if _is_engine_tensor(num_classes):
        # a count tensor (K.shape(x)[i]): CNTK needs its value while building the graph
        n = _resolve_sizes([num_classes], 'one_hot', 'num_classes')[0]
        if not isinstance(n, int):
            raise ValueError('one_hot: num_classes must be known while the graph is built on '
                             'CNTK (a constant, or K.shape(x)[i] of a static axis); got %r'
                             % (num_classes,))
        num_classes = n
    return _one_hot(indices, int(num_classes))


def reverse(x, axes):
    """A product with a flipped identity (``C.times``); a free length runs in a numpy graph node
    whose gradient is the reversed gradient."""
    x = _to_tensor(x)
    n = _nd(x)
    axes = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    for a in axes:
        a = shape_rules.normalize_axis(a, n)
        length = _static_shape(x)[a]
        if length is None:
            # free length: a numpy graph node whose gradient is the reversed gradient
            x = _numpy_op([x], lambda v, a=a: [np.flip(v, a)], [_static_shape(x)],
                          dtype=np.dtype(_var(x).dtype),
                          grad_fn=lambda vals, _, g, a=a: np.flip(g, a), name='reverse')[0]
            continue
        perm = [i for i in range(n) if i != a] + [a]
        xt = C.transpose(x, perm) if perm != list(range(n)) else x
        flip = C.constant(np.eye(length)[::-1].astype(_var(x).dtype))
        r = C.times(xt, flip)
        x = C.transpose(r, [int(i) for i in np.argsort(perm)]) if perm != list(range(n)) else r
    return x


def slice(x, start, size):
    """``C.slice``."""
    x = _to_tensor(x)
    start = _resolve_sizes(start, 'slice', 'start')
    size = [-1 if d == -1 else d for d in _resolve_sizes(size, 'slice', 'size')]
    if len(start) != _nd(x) or len(size) != _nd(x):   # start/size given as tensors
        raise ValueError('slice: start and size need %d entries' % _nd(x))
    axes, begins, ends = [], [], []
    for a, (b, s) in enumerate(zip(start, size)):
        if not isinstance(b, int) or not isinstance(s, int):
            raise ValueError('slice: on CNTK, start and size must be known while the graph is '
                             'built (ints, or K.shape(x)[i] of static axes); got %r, %r'
                             % (start, size))
        if s == -1:
            e = 0
        else:
            e = b + s
        axes.append(a)
        begins.append(b)
        ends.append(e)
    return C.slice(x, axes, begins, ends)


def pattern_broadcast(x, broadcastable):
    """CNTK has no broadcast patterns: ``x`` is returned unchanged."""
    return x


# ---------------------------------------------------------------------------
# Values, functions and gradients
# ---------------------------------------------------------------------------

def get_value(x):
    """Same as ``eval`` (any tensor without inputs works)."""
    return eval(x)


def batch_get_value(ops):
    """Evaluated in one CNTK pass."""
    return _evaluate(list(ops)) if ops else []


def set_value(x, value):
    """Writes the CNTK parameter's ``value``."""
    v = _var(x)
    v.value = np.asarray(value, dtype=v.dtype)


batch_set_value = generic.batch_set_value(_K)
get_variable_shape = generic.get_variable_shape(_K)


def print_tensor(x, message=''):
    """An identity ``UserFunction`` node that prints ``message`` and the value whenever it is
    evaluated."""
    x = _to_tensor(x)

    def show(value):
        print(message, value)
        sys.stdout.flush()
    return C.user_function(_PassThrough(x, show))


def function(inputs, outputs, updates=None, **kwargs):
    """``C.combine`` of the outputs and the ``C.assign`` updates, which write after every output
    has read the old values; a training step (updates from one loss's ``gradients``) runs as one
    forward pass, one backward pass and a ``C.universal`` learner. ``name`` is the only keyword."""
    for k in kwargs:
        if k != 'name':
            raise ValueError('function: unexpected keyword argument %r (CNTK accepts only '
                             '"name")' % (k,))
    return Function(inputs, outputs, updates=updates, name=kwargs.get('name'))


def gradients(loss, variables):
    """CNTK has no symbolic gradient: each gradient is a numpy graph node (``UserFunction``)
    running CNTK's backward pass (``Function.grad``) of ``loss`` (summed when not scalar); no
    gradients of gradients (ValueError); ``variables`` must be variables or placeholders."""
    single = not isinstance(variables, (list, tuple))
    variables = [variables] if single else list(variables)
    for v in variables:
        vv = _var(v) if _is_engine_tensor(v) else None
        if vv is None or not (vv.is_parameter or vv.is_input):
            raise ValueError('gradients: every variable must be a K.variable or a placeholder '
                             '(CNTK differentiates with respect to graph leaves), got %r' % (v,))
    loss = _to_tensor(loss)
    loss_f = C.combine([_var(loss)]) if not isinstance(loss, C.Function) else loss
    args = list(loss_f.arguments)
    wrt = [_var(v) for v in variables]
    loss_uids = set(p.uid for p in loss_f.parameters) | set(a.uid for a in args)
    dt = _var(loss).dtype
    wrt_uids = set(w.uid for w in wrt)
    grad_f, grad_args, grad_wrt = loss_f, args, dict((w.uid, w) for w in wrt)
    if builtins.any(a.uid in wrt_uids and not a.needs_gradient for a in args):
        # inputs are built without gradients: differentiate a clone whose
        # inputs (all of them, so that each keeps a known counterpart) do
        fresh = [C.input_variable(a.shape, dtype=a.dtype, dynamic_axes=a.dynamic_axes,
                                  needs_gradient=a.uid in wrt_uids, name=a.name)
                 for a in args]
        grad_f = loss_f.clone(C.CloneMethod.share, dict(zip(args, fresh)))
        grad_args = fresh
        grad_wrt.update((a.uid, f) for a, f in zip(args, fresh) if a.uid in wrt_uids)

    def run(*values):
        used = [w for w in wrt if w.uid in loss_uids]
        grads = {}
        if used:
            feed = dict(zip(grad_args, values[:len(args)]))
            targets = [grad_wrt[w.uid] for w in used]
            g = grad_f.grad(feed, wrt=targets, as_numpy=True) if feed else \
                grad_f.grad({}, wrt=targets, as_numpy=True)
            if not isinstance(g, dict):
                g = {targets[0]: g}
            for w, t in zip(used, targets):
                grads[w.uid] = g[t]
        out = []
        for w, v in zip(wrt, variables):
            if w.uid in grads:
                out.append(np.asarray(grads[w.uid]))
            else:
                shp = tuple(values[args.index(w)].shape) if w.is_input and w in args \
                    else tuple(w.shape)
                out.append(np.zeros(shp))
        return out

    outs = _numpy_op(args, run, [_static_shape(w) for w in wrt], dtype=np.dtype(dt),
                     name='gradients')
    for o, w in zip(outs, wrt):
        _GRADIENT_OF[o.uid] = (_var(loss), w)
    return outs


def stop_gradient(variables):
    """``C.stop_gradient`` (of each tensor of a list or tuple)."""
    if isinstance(variables, (list, tuple)):
        return type(variables)(C.stop_gradient(_to_tensor(v)) for v in variables)
    return C.stop_gradient(_to_tensor(variables))


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """CNTK has no control edges: the updates among ``control_inputs`` are recorded while the block
    is open, and ``identity(t)`` built inside it reads the values they write (see ``identity``);
    other ops and inputs are unaffected."""
    if control_inputs is not None and not isinstance(control_inputs, (list, tuple)):
        control_inputs = [control_inputs]
    group = [u for u in (control_inputs or [])
             if isinstance(u, C.Function) and hasattr(u, '_keras_target')]
    _CONTROL_UPDATES.append(group)
    try:
        yield
    finally:
        _CONTROL_UPDATES.pop()


symbolic = generic.unchanged('symbolic', 'Returns ``func`` unchanged (CNTK is always symbolic).')
eager = generic.unchanged('eager', 'Returns ``func`` unchanged (CNTK has no eager mode).')


# ---------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------

def _mask_like(m, target):
    """Reshape a (batch,) mask to broadcast against ``target`` (batch, ...)."""
    n = _nd(target)
    return C.reshape(m, (1,) * (n - 1), begin_axis=1, end_axis=1) if n > 1 else m


def _as_tensor_list(states):
    if isinstance(states, (list, tuple)):
        return [_to_tensor(s) for s in states]
    return [_to_tensor(states)]


def _rnn_unrolled(step_function, inputs, states, constants, mask, go_backwards, steps):
    """The loop written out step by step (static time length)."""
    order = range(steps - 1, -1, -1) if go_backwards else range(steps)
    outputs = []
    prev = None
    for t in order:
        x_t = _drop_axis(C.slice(inputs, 1, t, t + 1), 1)
        out, new_states = step_function(x_t, states + constants)
        out = _to_tensor(out)
        new_states = _as_tensor_list(new_states)
        if mask is not None:
            m = _drop_axis(C.slice(mask, 1, t, t + 1), 1)
            if prev is None:
                prev = C.zeros_like(out)
            out = C.element_select(_mask_like(m, out), out, prev)
            new_states = [C.element_select(_mask_like(m, ns), ns, s)
                          for ns, s in zip(new_states, states)]
        prev = out
        states = new_states
        outputs.append(_add_axis(out, 1))
    stacked = C.splice(*outputs, axis=1) if len(outputs) > 1 else outputs[0]
    return prev, stacked, states


def _batch_items(x):
    """A static ``(B, ...)`` tensor as ``B`` items on CNTK's dynamic batch axis, each of shape
    ``(1, ...)`` (``C.to_batch``): the unit axis keeps the Keras batch axis in place for the ops of
    a step function."""
    return C.to_batch(_add_axis(x, 1))


def _unbatch_items(x, sizes):
    """Back from ``_batch_items``-style items (``C.unpack_batch``): the leading axes get the
    static ``sizes`` (batch first, None for free), which replace the items' leading axes up to
    their unit axis (one reshape)."""
    u = C.unpack_batch(x)
    n = len(sizes)
    shp = _static_shape(u)
    end = n + 1 if len(shp) > n and shp[n] == 1 else n
    if list(sizes).count(None) > 1:   # CNTK's reshape takes one free dimension at most
        return _drop_axis(u, n) if end > n else u
    return C.reshape(u, _shape_arg(sizes), begin_axis=0, end_axis=end)


def _batch_sizes(inputs, states, mask):
    """The sizes that axis 0 of a tensor carrying the batch of ``rnn``'s inputs may have: free
    (None: the batch of placeholders), the inputs' and the static sizes of the initial states'
    and the mask's axis 0 (``rnn`` on a free-batch input with a fully shaped initial state)."""
    sizes = set([None, _static_shape(inputs)[0]])
    for t in states + ([mask] if mask is not None else []):
        if _nd(t) >= 1 and _static_shape(t)[0] is not None:
            sizes.add(_static_shape(t)[0])
    return sizes


def _rnn_recurrence(step_function, inputs, states, constants, mask, go_backwards):
    """The loop as a CNTK recurrence (any time length, static or not).

    Inside the recurrence the Keras batch is CNTK's dynamic batch axis and time its sequence
    axis, so each step's tensors have a static shape ``(1, ...)`` whatever the batch fed
    (``_batch_items``, ``C.to_sequence``); the initial states (``C.to_batch``) start
    ``C.sequence.past_value`` recurrences, constants whose axis 0 is the batch are spread over
    the steps (``C.sequence.broadcast_as``; axis 0 free, or the static size of the inputs',
    initial states' or mask's axis 0), others stay as they are. ``step_function`` is
    called once; CNTK runs it for the fed length and back-propagates through time. A mask keeps
    the previous state and repeats the previous output (zeros before the first kept step).
    """
    if go_backwards:
        inputs = reverse(inputs, 1)
        mask = reverse(mask, 1) if mask is not None else None
    batch = _static_shape(inputs)[0]
    sizes = _batch_sizes(inputs, states, mask)
    xs = C.to_sequence(C.to_batch(_add_axis(inputs, 2)))
    consts = []
    for c in constants:
        if _nd(c) >= 1 and _static_shape(c)[0] in sizes:
            c = C.sequence.broadcast_as(_batch_items(c), xs)
        consts.append(c)
    inits = [_batch_items(s) for s in states]
    slots = [C.placeholder(shape=_var(i).shape, dynamic_axes=_var(xs).dynamic_axes)
             for i in inits]
    # the steps' layout, stated: CNTK would otherwise give a delayed value the layout of its
    # initial state (one step) when an op reads it before any other sequence tensor
    prevs = [C.reconcile_dynamic_axes(C.sequence.past_value(ph, initial_state=i), xs)
             for ph, i in zip(slots, inits)]
    out, new_states = step_function(xs, prevs + consts)
    out = _to_tensor(out)
    new_states = _as_tensor_list(new_states)
    if len(new_states) != len(states):
        raise ValueError('rnn: step_function returned %d states, expected %d'
                         % (len(new_states), len(states)))
    binding = {}
    if mask is not None:
        ms = C.to_sequence_like(C.to_batch(_add_axis(mask, 2)), xs)
        out_ph = C.placeholder(shape=_var(out).shape, dynamic_axes=_var(xs).dynamic_axes)
        # past_value starts from zeros: the output repeated before the first kept step
        out = C.element_select(_mask_like(ms, out), out, C.sequence.past_value(out_ph))
        new_states = [C.element_select(_mask_like(ms, ns), ns, pv)
                      for ns, pv in zip(new_states, prevs)]
        binding[out_ph] = _var(out)
    for ph, ns in zip(slots, new_states):
        binding[ph] = _var(ns)
    body = C.combine([_var(out)] + [_var(ns) for ns in new_states])
    read = set(ph.uid for ph in body.placeholders)   # a state the step never reads is unbound
    binding = dict((ph, v) for ph, v in binding.items() if ph.uid in read)
    if binding:
        body.replace_placeholders(binding)
    steps = _static_shape(inputs)[1]
    outputs = _unbatch_items(C.sequence.unpack(out, 0., no_mask_output=True), (batch, steps))
    last = _unbatch_items(C.sequence.last(out), (batch,))
    return last, outputs, [_unbatch_items(C.sequence.last(ns), (batch,)) for ns in new_states]


#: static time lengths up to this are written out even with ``unroll=False``: a Keras 2.3.1
#: LSTM / BiLSTM training step took 0.8-0.9x the recurrence's time unrolled at 1-2 steps (a GRU
#: the same time), and the same or more from 3-4 steps on (benchmarks/README.md)
_UNROLL_MAX_STEPS = 2


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None,
        constants=None, unroll=False, input_length=None):
    """A CNTK recurrence (``unroll=False``, static or unknown time length): the batch moves to
    CNTK's batch axis and time to a sequence axis (``C.to_batch``, ``C.to_sequence``), each state
    is a ``C.sequence.past_value`` started from its initial state, masks select with
    ``C.element_select``, and the results come back with ``C.sequence.last`` /
    ``C.sequence.unpack`` and ``C.unpack_batch``; ``step_function`` is called once, on per-sample
    tensors of static shape ``(1, ...)``, and CNTK back-propagates through time. ``unroll=True``
    with a static length (or an int ``input_length`` for an unknown one), and a static length of
    1 or 2 steps (faster so), write the steps out."""
    inputs = _to_tensor(inputs)
    constants = [_to_tensor(c) for c in (constants or [])]
    states = [_to_tensor(s) for s in initial_states]
    if mask is not None:
        mask = _to_tensor(mask, dtype=dtype(inputs))
        if _nd(mask) == 3:
            mask = _drop_axis(mask, 2)
    steps = _static_shape(inputs)[1]
    if steps is None and unroll and isinstance(input_length, (int, np.integer)):
        steps = int(input_length)
        inputs = C.reshape(inputs, (steps,), begin_axis=1, end_axis=2)
        if mask is not None and _static_shape(mask)[1] is None:
            mask = C.reshape(mask, (steps,), begin_axis=1, end_axis=2)
    seen = []

    def step(x_t, step_states):
        out, new_states = step_function(x_t, step_states)
        parts = [out] + (list(new_states) if isinstance(new_states, (list, tuple))
                         else [new_states])
        if builtins.any(getattr(t, '_uses_learning_phase', False) for t in parts):
            seen.append(True)
        return out, new_states
    if steps is None or not (unroll or steps <= _UNROLL_MAX_STEPS):
        last, outputs, new_states = _rnn_recurrence(step, inputs, states, constants, mask,
                                                    go_backwards)
    else:
        last, outputs, new_states = _rnn_unrolled(step, inputs, states, constants, mask,
                                                  go_backwards, steps)
    if seen:
        _keras_meta(last, keras_shape=False, uses_learning_phase=True)
        _keras_meta(outputs, keras_shape=False, uses_learning_phase=True)
    return last, outputs, new_states


def switch(condition, then_expression, else_expression):
    """``C.element_select``; a ``condition`` of lower rank gets trailing unit axes."""
    if callable(then_expression) and not _is_engine_tensor(then_expression):
        then_expression = then_expression()
    if callable(else_expression) and not _is_engine_tensor(else_expression):
        else_expression = else_expression()
    t, e = _coerce_pair(then_expression, else_expression)
    cond = _to_tensor(condition, dtype=dtype(t))
    nc, nt = _nd(cond), builtins.max(_nd(t), _nd(e))
    if 0 < nc < nt:
        cond = C.reshape(cond, (1,) * (nt - nc), begin_axis=nc, end_axis=nc)
    return C.element_select(cond, t, e)


def in_train_phase(x, alt, training=None):
    """Chosen when the graph is built for ``training`` 0/1, else at run time with ``switch``
    (``C.element_select``)."""
    uses = training is None
    if training is None:
        training = learning_phase()
    if isinstance(training, (int, bool, np.integer)) and not _is_engine_tensor(training):
        chosen = x if training else alt
        return chosen() if callable(chosen) and not _is_engine_tensor(chosen) else chosen
    out = switch(training, x, alt)
    return _keras_meta(out, keras_shape=False, uses_learning_phase=True) if uses else out


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)


# ---------------------------------------------------------------------------
# Activations and losses
# ---------------------------------------------------------------------------

def relu(x, alpha=0., max_value=None, threshold=0.):
    """Built from ``C.relu``, ``C.greater`` and ``C.clip``; gradients flow through every part.
    ``alpha``, ``max_value`` and ``threshold`` may be tensors (broadcast against ``x``)."""
    x = _to_tensor(x)

    def is_zero(v):
        return not _is_engine_tensor(v) and np.all(np.asarray(v) == 0)

    thr = None if is_zero(threshold) else _param_like(x, threshold)
    if thr is not None:
        kept = x * C.greater(x, thr)
    else:
        kept = C.relu(x)
    if max_value is not None:
        kept = C.clip(kept, _constant_like(x, 0.), _param_like(x, max_value))
    if not is_zero(alpha):
        kept = kept - _param_like(x, alpha) * C.relu((thr if thr is not None else _param_like(x, 0.)) - x)
    return kept


def elu(x, alpha=1.):
    """``C.element_select`` between ``x`` and ``alpha * (exp(x) - 1)``; ``alpha`` may be a
    tensor (broadcast against ``x``)."""
    x = _to_tensor(x)
    neg = ((C.exp(C.element_min(x, _constant_like(x, 0))) - _constant_like(x, 1))
           * _param_like(x, alpha))
    return C.element_select(C.greater(x, _constant_like(x, 0)), x, neg)


def softmax(x, axis=-1):
    """``C.softmax``."""
    x = _to_tensor(x)
    return C.softmax(x, axis=shape_rules.normalize_axis(axis, _nd(x)))


def softplus(x):
    """``C.softplus`` (stable)."""
    return C.softplus(_to_tensor(x))


def softsign(x):
    """``x / (1 + C.abs(x))``."""
    x = _to_tensor(x)
    return x / (_constant_like(x, 1) + C.abs(x))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Probabilities are normalised along ``axis`` and clipped to ``[epsilon, 1 - epsilon]``;
    logits go through a log-softmax (``C.reduce_log_sum_exp``). See docs/semantics.md."""
    target, output = _coerce_pair(target, output)
    a = shape_rules.normalize_axis(axis, _nd(output))
    if from_logits:
        return -_drop_axis(C.reduce_sum(target * _log_softmax(output, a), axis=a), a)
    p = output / C.reduce_sum(output, axis=a)
    eps = epsilon()
    p = C.clip(p, _constant_like(p, eps), _constant_like(p, 1. - eps))
    return -_drop_axis(C.reduce_sum(target * C.log(p), axis=a), a)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Targets are one-hot encoded with ``C.equal`` (class ids held as floats); probabilities are
    clipped to ``[epsilon, 1 - epsilon]`` before the log-softmax."""
    output = _to_tensor(output)
    n = _nd(output)
    a = shape_rules.normalize_axis(axis, n)
    if a != n - 1:
        perm = [i for i in range(n) if i != a] + [a]
        output = C.transpose(output, perm)
    if not from_logits:
        eps = epsilon()
        output = C.log(C.clip(output, _constant_like(output, eps),
                              _constant_like(output, 1. - eps)))
    classes = _static_shape(output)[-1]
    target = _to_tensor(target, dtype=dtype(output))
    if _nd(target) == n:
        # targets laid out as the output, with a unit class axis at ``axis``
        target = _drop_axis(target, a)
    oh = _one_hot(target, classes)
    ls = _log_softmax(output, n - 1)
    return -_drop_axis(C.reduce_sum(C.element_select(oh, ls, _constant_like(ls, 0)), axis=n - 1),
                       n - 1)


def binary_crossentropy(target, output, from_logits=False):
    """Probabilities are clipped to ``[epsilon, 1 - epsilon]``; logits use ``max(x, 0) - x * z +
    log(1 + exp(-|x|))``. See docs/semantics.md."""
    target, output = _coerce_pair(target, output)
    one = _constant_like(output, 1)
    if from_logits:
        return (C.element_max(output, _constant_like(output, 0)) - output * target
                + C.log(one + C.exp(-C.abs(output))))
    eps = epsilon()
    p = C.clip(output, _constant_like(output, eps), _constant_like(output, 1. - eps))
    return -(target * C.log(p) + (one - target) * C.log(one - p))


def sigmoid(x):
    """``C.sigmoid``."""
    return C.sigmoid(_to_tensor(x))


def hard_sigmoid(x):
    """``C.clip(0.2 * x + 0.5, 0, 1)``."""
    x = _to_tensor(x)
    return C.clip(x * _constant_like(x, 0.2) + _constant_like(x, 0.5), _constant_like(x, 0),
                  _constant_like(x, 1))


def tanh(x):
    """``C.tanh``."""
    return C.tanh(_to_tensor(x))


def dropout(x, level, noise_shape=None, seed=None):
    """A ``C.random.bernoulli_like`` keep mask, kept values scaled by ``1 / (1 - level)``; a
    rate computed in the graph (a tensor ``level``) keeps where a uniform draw is >= it."""
    rate_tensor = _is_engine_tensor(level)
    x = _to_tensor(x)
    if not rate_tensor and level == 0:
        return x
    like = x
    if noise_shape is not None:
        ns = tuple(noise_shape)
        if len(ns) != _nd(x):
            raise ValueError('dropout: noise_shape %r must have rank %d' % (ns, _nd(x)))
        axes = [i for i, d in enumerate(ns) if d == 1 and _static_shape(x)[i] != 1]
        if axes:
            like = C.reduce_mean(x, axis=axes if len(axes) > 1 else axes[0])
    if rate_tensor:
        level = _to_tensor(level)
        keep = C.greater_equal(C.random.uniform_like(like, seed=_op_seed(seed)), level)
        return x * keep / (_constant_like(x, 1.) - level)
    keep = C.random.bernoulli_like(like, mean=1. - level, seed=_op_seed(seed))
    return x * keep * _constant_like(x, 1. / (1. - level))


def l2_normalize(x, axis=None):
    """``x / C.sqrt(C.element_max(sum(x ** 2), 1e-12))``."""
    x = _to_tensor(x)
    s = sum(C.square(x), axis, keepdims=True)
    return x / C.sqrt(C.element_max(s, _constant_like(x, 1e-12)))


def in_top_k(predictions, targets, k):
    """Counts the classes scoring strictly above the target; 1.0/0.0 in ``floatx()`` (CNTK has no
    bool), 0 for a non-finite target score."""
    predictions = _to_tensor(predictions)
    classes = _static_shape(predictions)[-1]
    targets = _to_tensor(targets, dtype=dtype(predictions))
    if _nd(targets) == 2:
        targets = _drop_axis(targets, 1)
    oh = _one_hot(targets, classes)
    t = C.reduce_sum(C.element_select(oh, predictions, _constant_like(predictions, 0)), axis=1)
    above = C.reduce_sum(C.greater(predictions, t), axis=1)
    finite = C.equal(t - t, _constant_like(t, 0))
    ok = C.less(above, _constant_like(above, k)) * finite
    return _drop_axis(ok, 1)


# ---------------------------------------------------------------------------
# Convolution and pooling
# ---------------------------------------------------------------------------

def _to_channels_first(x, fmt):
    """Return ``x`` channels_first."""
    if fmt == 'channels_last':
        return _transpose(x, shape_rules.to_channels_first_perm(_nd(x)))
    return x


def _from_channels_first(x, fmt):
    if fmt == 'channels_last':
        return _transpose(x, shape_rules.to_channels_last_perm(_nd(x)))
    return x


def _spatial_pads(x_cf, kernel, strides, dilation, padding, name):
    sizes = _static_shape(x_cf)[2:]
    pads = []
    for n, k, s, d in zip(sizes, kernel, strides, dilation):
        if padding != 'valid' and n is None:
            raise ValueError('%s: %r padding needs static spatial sizes on CNTK' % (name, padding))
        pads.append(shape_rules.padding_amounts(n, k, s, d, padding))
    return pads


def _dilate_kernel(w, nsp, dilation):
    """Insert zeros between taps of a CNTK kernel (.., .., k...) along each spatial axis."""
    for j, d in enumerate(dilation):
        if d == 1:
            continue
        axis = 2 + j
        k = _static_shape(w)[axis]
        dk = (k - 1) * d + 1
        e = np.zeros((k, dk), dtype=_var(w).dtype)
        e[np.arange(k), np.arange(k) * d] = 1
        n = nsp + 2
        perm = [i for i in range(n) if i != axis] + [axis]
        w = C.transpose(C.times(C.transpose(w, perm), C.constant(e)), [int(i) for i in np.argsort(perm)])
    return w


def _conv_cf(x_cf, w_cntk, nsp, strides, dilation, padding, name, groups=1):
    """Channels-first convolution; ``w_cntk`` is (out, in/groups, k...).

    Raises:
        ValueError: when the kernel's input channels do not match ``x_cf``'s.
    """
    cin, w_in = _static_shape(x_cf)[1], _static_shape(w_cntk)[1] * groups
    if cin is not None and cin != w_in:
        raise ValueError('%s: the kernel expects %d input channels but x has %d'
                         % (name, w_in, cin))
    kernel = _static_shape(w_cntk)[2:]
    pads = _spatial_pads(x_cf, kernel, strides, dilation, padding, name)
    if builtins.any(d != 1 for d in dilation):
        # CNTK's CPU engine has no dilated convolution: spread the taps instead
        w_cntk = _dilate_kernel(w_cntk, nsp, dilation)
        dilation = (1,) * nsp
    x0 = x_cf
    kernel = _static_shape(w_cntk)[2:]
    # CNTK's own padding centres an odd kernel: at stride 1 that is exactly
    # the symmetric padding asked for, without a separate Pad node; it refuses a kernel
    # longer than the input ('same' on a small image: ConvLSTM2D's recurrent convolution
    # of a 'valid' state), which the explicit Pad takes
    sizes = _static_shape(x_cf)[2:]
    auto = [s == 1 and k % 2 == 1 and p == ((k - 1) // 2, (k - 1) // 2) and p != (0, 0)
            and (d is None or d >= k)
            for p, k, s, d in zip(pads, kernel, strides, sizes)]
    x_cf = _pad(x_cf, [(0, 0), (0, 0)] + [(0, 0) if a else p for a, p in zip(auto, pads)])
    xb = _per_sample(x_cf)
    kw = dict(strides=(1,) + tuple(strides), auto_padding=[False] + auto,
              dilation=(1,) + tuple(dilation))
    if groups > 1:
        kw['groups'] = groups
    y = C.convolution(w_cntk, xb, **kw)
    return _unbatch(y, x0)


def _kernel_to_cntk(kernel, nsp):
    """Keras (k..., in, out) -> CNTK (out, in, k...)."""
    return C.transpose(kernel, (nsp + 1, nsp) + tuple(range(nsp)))


def _conv_nd(x, kernel, nsp, strides, padding, data_format, dilation_rate, name):
    x, kernel = _coerce_pair(x, kernel)
    fmt = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal=(nsp == 1))
    strides = shape_rules.normalize_tuple(strides, nsp, 'strides')
    dilation = shape_rules.normalize_tuple(dilation_rate, nsp, 'dilation_rate')
    y = _conv_cf(_to_channels_first(x, fmt), _kernel_to_cntk(kernel, nsp), nsp, strides, dilation,
                 padding, name)
    return _from_channels_first(y, fmt)


def conv1d(x, kernel, strides=1, padding='valid', data_format=None, dilation_rate=1):
    """``C.convolution`` over CNTK's batch axis with explicit padding (TensorFlow's 'same' rule);
    dilation spreads the kernel taps (CNTK's CPU engine has no dilated convolution)."""
    return _conv_nd(x, kernel, 1, strides, padding, data_format, dilation_rate, 'conv1d')


def conv2d(x, kernel, strides=(1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1)):
    """``C.convolution`` over CNTK's batch axis with explicit padding (TensorFlow's 'same' rule);
    dilation spreads the kernel taps (CNTK's CPU engine has no dilated convolution)."""
    return _conv_nd(x, kernel, 2, strides, padding, data_format, dilation_rate, 'conv2d')


def _conv_transpose(x, kernel, output_shape, nsp, strides, padding, data_format,
                    dilation_rate, name):
    x, kernel = _coerce_pair(x, kernel)
    fmt = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    strides = shape_rules.normalize_tuple(strides, nsp, 'strides')
    dilation = shape_rules.normalize_tuple(dilation_rate, nsp, 'dilation_rate')
    given = output_shape
    output_shape = _resolve_sizes(output_shape, name, 'output_shape')
    if len(output_shape) != nsp + 2:
        raise ValueError('%s: output_shape must have %d entries, got %r'
                         % (name, nsp + 2, given))
    # the batch entry is not used (the batch follows x); the others must be
    # known while building the graph (sizes of K.shape(x)'s static axes are)
    for j, d in enumerate(output_shape[1:], 1):
        if not isinstance(d, int):
            raise ValueError('%s: output_shape[%d] must be known while building the graph '
                             '(a number, or computed from static sizes of K.shape(x)); got %r'
                             % (name, j, given))
    output_shape = tuple(d if isinstance(d, int) else None for d in output_shape)
    out_cf = (output_shape[0], output_shape[-1]) + output_shape[1:-1] \
        if fmt == 'channels_last' else output_shape
    x_cf = _to_channels_first(x, fmt)
    in_sizes = _static_shape(x_cf)[2:]
    ks = _static_shape(kernel)
    w = C.transpose(kernel, (nsp + 1, nsp) + tuple(range(nsp)))  # (in, out, k...)
    w = _dilate_kernel(w, nsp, dilation)
    dks = [(k - 1) * d + 1 for k, d in zip(ks[:nsp], dilation)]
    full = [(n - 1) * s + dk for n, s, dk in zip(in_sizes, strides, dks)]
    cout = ks[nsp]
    y = C.convolution_transpose(w, _per_sample(x_cf), strides=(1,) + strides,
                                auto_padding=[False] * (nsp + 1),
                                output_shape=(cout,) + tuple(full))
    y = _unbatch(y, x_cf)
    pads, axes, begins, ends = [(0, 0), (0, 0)], [], [], []
    for j in range(nsp):
        before, after = shape_rules.deconv_crop(out_cf[2 + j], in_sizes[j], ks[j], strides[j], padding,
                                     dilation[j])
        total = before + out_cf[2 + j] + after
        pads.append((0, builtins.max(total - full[j], 0)))
        axes.append(2 + j)
        begins.append(before)
        ends.append(before + out_cf[2 + j])
    y = _pad(y, pads)
    y = C.slice(y, axes, begins, ends)
    return _from_channels_first(y, fmt)


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """``C.convolution_transpose`` computes the full result, which is then cropped per
    ``shape_rules.deconv_crop``."""
    return _conv_transpose(x, kernel, output_shape, 2, strides, padding, data_format,
                           dilation_rate, 'conv2d_transpose')


def _depthwise_conv(x_cf, depthwise_kernel, nsp, strides, dilation, padding, name):
    ks = _static_shape(depthwise_kernel)
    if nsp == 1:
        # MKL rejects grouped 1-D convolutions: run it as 2-D with a unit row axis
        pads = _spatial_pads(x_cf, _static_shape(depthwise_kernel)[:1], strides, dilation,
                             padding, name)
        x2 = _add_axis(_pad(x_cf, [(0, 0), (0, 0)] + pads), 2)
        k2 = _add_axis(depthwise_kernel, 0)
        y = _depthwise_conv(x2, k2, 2, (1,) + tuple(strides), (1,) + tuple(dilation),
                          'valid', name)
        return _drop_axis(y, 2)
    ks = _static_shape(depthwise_kernel)
    cin, mult = ks[nsp], ks[nsp + 1]
    w = C.reshape(depthwise_kernel, tuple(ks[:nsp]) + (cin * mult,))
    w = C.transpose(w, (nsp,) + tuple(range(nsp)))
    w = C.reshape(w, (cin * mult, 1) + tuple(ks[:nsp]))
    return _conv_cf(x_cf, w, nsp, strides, dilation, padding, name, groups=cin)


def _separable(x, dk, pk, nsp, strides, padding, data_format, dilation_rate, name):
    x, dk = _coerce_pair(x, dk)
    pk = _to_tensor(pk, dtype=dtype(x))
    fmt = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal=(nsp == 1))
    strides = shape_rules.normalize_tuple(strides, nsp, 'strides')
    dilation = shape_rules.normalize_tuple(dilation_rate, nsp, 'dilation_rate')
    y = _depthwise_conv(_to_channels_first(x, fmt), dk, nsp, strides, dilation, padding, name)
    y = _conv_cf(y, _kernel_to_cntk(pk, nsp), nsp, (1,) * nsp, (1,) * nsp, 'valid', name)
    return _from_channels_first(y, fmt)


def separable_conv1d(x, depthwise_kernel, pointwise_kernel, strides=1, padding='valid',
                     data_format=None, dilation_rate=1):
    """A grouped ``C.convolution`` (``groups=in``, run as 2-D with a unit row axis: MKL rejects
    grouped 1-D convolutions), then a pointwise ``C.convolution``."""
    return _separable(x, depthwise_kernel, pointwise_kernel, 1, strides, padding,
                      data_format, dilation_rate, 'separable_conv1d')


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """A grouped ``C.convolution`` (``groups=in``), then a pointwise ``C.convolution``."""
    return _separable(x, depthwise_kernel, pointwise_kernel, 2, strides, padding,
                      data_format, dilation_rate, 'separable_conv2d')


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """``C.convolution`` with ``groups=in``; output channel ``c * multiplier + m``."""
    x, depthwise_kernel = _coerce_pair(x, depthwise_kernel)
    fmt = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    strides = shape_rules.normalize_tuple(strides, 2, 'strides')
    dilation = shape_rules.normalize_tuple(dilation_rate, 2, 'dilation_rate')
    y = _depthwise_conv(_to_channels_first(x, fmt), depthwise_kernel, 2, strides, dilation, padding,
                      'depthwise_conv2d')
    return _from_channels_first(y, fmt)


def conv3d(x, kernel, strides=(1, 1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1, 1)):
    """``C.convolution`` over CNTK's batch axis with explicit padding (TensorFlow's 'same' rule);
    dilation spreads the kernel taps (CNTK's CPU engine has no dilated convolution)."""
    return _conv_nd(x, kernel, 3, strides, padding, data_format, dilation_rate, 'conv3d')


def conv3d_transpose(x, kernel, output_shape, strides=(1, 1, 1), padding='valid',
                     data_format=None):
    """``C.convolution_transpose`` computes the full result, which is then cropped per
    ``shape_rules.deconv_crop``."""
    return _conv_transpose(x, kernel, output_shape, 3, strides, padding, data_format,
                           (1, 1, 1), 'conv3d_transpose')


def _pool(x, pool_size, strides, padding, data_format, pool_mode, nsp, name):
    x = _to_tensor(x)
    fmt = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    pool_mode = shape_rules.normalize_pool_mode(pool_mode)
    pool_size = shape_rules.normalize_tuple(pool_size, nsp, 'pool_size')
    strides = shape_rules.normalize_tuple(strides, nsp, 'strides')
    x_cf = _to_channels_first(x, fmt)
    pads = _spatial_pads(x_cf, pool_size, strides, (1,) * nsp, padding, name)
    full_pads = [(0, 0), (0, 0)] + pads
    kw = dict(strides=tuple(strides), auto_padding=[False] * nsp)
    if pool_mode == 'max':
        low = float(np.finfo(_var(x).dtype).min)
        xp = _pad(x_cf, full_pads, value=low)
        y = _unbatch(C.pooling(_per_sample(xp), C.MAX_POOLING, pool_size, **kw), x_cf)
    else:
        xp = _pad(x_cf, full_pads)
        y = _unbatch(C.pooling(_per_sample(xp), C.AVG_POOLING, pool_size, **kw), x_cf)
        if builtins.any(p != (0, 0) for p in pads):
            sizes = _static_shape(x_cf)[2:]
            mask = np.pad(np.ones(sizes), pads, mode='constant')
            counts = np.zeros([shape_rules.conv_output_length(n, k, padding, s)
                               for n, k, s in zip(sizes, pool_size, strides)])
            for idx in np.ndindex(*counts.shape):
                sl = tuple(builtins.slice(i * s, i * s + k)
                           for i, s, k in zip(idx, strides, pool_size))
                counts[idx] = mask[sl].mean()
            y = y / C.constant(counts.astype(_var(x).dtype))
    return _from_channels_first(y, fmt)


def pool2d(x, pool_size, strides=(1, 1), padding='valid', data_format=None, pool_mode='max'):
    """``C.pooling`` with explicit padding; 'same' average pooling divides by the real (unpadded)
    cells."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 2, 'pool2d')


def pool3d(x, pool_size, strides=(1, 1, 1), padding='valid', data_format=None,
           pool_mode='max'):
    """``C.pooling`` with explicit padding; 'same' average pooling divides by the real (unpadded)
    cells."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 3, 'pool3d')


def bias_add(x, bias, data_format=None):
    """Broadcast addition; for channels_first inputs of rank 3 to 5, a bias of rank ``ndim(x) - 1``
    is read as ``(spatial..., channels)`` and reshaped (not transposed) to ``(channels,
    spatial...)``, as in Keras 2.3.1."""
    x, bias = _coerce_pair(x, bias)
    fmt = normalize_data_format(data_format)
    n, bn = _nd(x), _nd(bias)
    bs = _static_shape(bias)
    if bn != 1 and bn != n - 1:
        raise ValueError('bias_add: bias must be 1-D or of rank %d, got rank %d' % (n - 1, bn))
    xs = _static_shape(x)
    if fmt == 'channels_first' and 3 <= n <= 5:
        laid = (bs[0],) + (1,) * (n - 2) if bn == 1 else (bs[-1],) + tuple(bs[:-1])
    else:
        laid = (1,) * (n - 1 - bn) + tuple(bs)
    for d, b in zip(xs[1:], laid):
        if b != 1 and d is not None and d != b:
            raise ValueError('bias_add: a bias of shape %s (laid out as %s for %s) does not '
                             'match x of shape %s' % (bs, laid, fmt, xs))
    if fmt == 'channels_first' and 3 <= n <= 5:
        return x + C.reshape(bias, laid)
    return x + bias


# ---------------------------------------------------------------------------
# Random
# ---------------------------------------------------------------------------

def _random_shape(shape, name):
    """Normalise a random op's ``shape``.

    Returns ``(static, like)``: ``static`` a tuple of ints when the shape is
    known while building the graph (numbers, or a tensor without inputs),
    else None and ``like`` a tensor whose runtime shape is the requested one:
    the tensor itself when the shape came from ``K.shape(x)``, else a zeros
    tensor shaped at run time by the shape's value (a numpy graph node).
    """
    if isinstance(shape, (tuple, list)) and builtins.any(_is_engine_tensor(d) for d in shape):
        parts = [C.reshape(_to_tensor(d), (1,)) if _is_engine_tensor(d) else
                 C.constant(np.asarray([d], dtype=_np_dtype())) for d in shape]
        shape = C.splice(*parts, axis=0) if len(parts) > 1 else parts[0]
    if _is_engine_tensor(shape):
        v = _var(shape)
        if v.uid in _SHAPE_SOURCES:
            return None, _SHAPE_SOURCES[v.uid]
        if v.is_constant or v.is_parameter or not C.combine([v]).arguments:
            shape = eval(shape)
        else:
            if _nd(shape) != 1 or _static_shape(shape)[0] is None:
                raise ValueError('%s: a shape tensor must be 1-D of static length, got '
                                 'shape %r' % (name, int_shape(shape)))
            rank = _static_shape(shape)[0]
            like = _numpy_op([shape], lambda s: [np.zeros(tuple(int(d) for d in s.reshape(-1)))],
                             [(None,) * rank], name='zeros_of_shape')[0]
            return None, like
    shape = tuple(np.asarray(shape).reshape(-1)) if not isinstance(shape, (tuple, list)) \
        else tuple(shape)
    if builtins.any(d is None for d in shape):
        raise ValueError('%s: shape %r holds None; give ints or a shape tensor such as '
                         'K.shape(x)' % (name, shape))
    return tuple(int(d) for d in shape), None


def _like_dtype(like, dtype):
    target = _np_dtype(dtype)
    return like if _var(like).dtype == target else C.cast(like, target)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """``C.random.normal``, or ``C.random.normal_like`` for a shape tensor such as ``K.shape(x)``
    (read at run time); new values at each evaluation, the same seed giving the same sequence of
    draws."""
    static, like = _random_shape(shape, 'random_normal')
    if _is_engine_tensor(mean) or _is_engine_tensor(stddev):
        # parameters computed in the graph: a standard draw, shifted and scaled
        return _to_tensor(mean) + _to_tensor(stddev) * random_normal(shape, 0., 1., dtype, seed)
    if static is None:
        return C.random.normal_like(_like_dtype(like, dtype), mean=mean, scale=stddev,
                                    seed=_op_seed(seed))
    return C.random.normal(static, dtype=_np_dtype(dtype), mean=mean, scale=stddev,
                           seed=_op_seed(seed))


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """``C.random.uniform``, or ``C.random.uniform_like`` for a shape tensor (read at run time);
    new values at each evaluation."""
    static, like = _random_shape(shape, 'random_uniform')
    if _is_engine_tensor(minval) or _is_engine_tensor(maxval):
        # bounds computed in the graph: a draw in [0, 1), scaled and shifted
        lo = _to_tensor(minval)
        return lo + (_to_tensor(maxval) - lo) * random_uniform(shape, 0., 1., dtype, seed)
    if static is None:
        return C.random.uniform_like(_like_dtype(like, dtype), low=minval, high=maxval,
                                     seed=_op_seed(seed))
    return C.random.uniform(static, dtype=_np_dtype(dtype), low=minval, high=maxval,
                            seed=_op_seed(seed))


def random_binomial(shape, p=0.0, dtype=None, seed=None):
    """``C.random.bernoulli``, or ``C.random.bernoulli_like`` for a shape tensor; integer and bool
    dtypes are held in ``floatx()``. A rate tensor ``p``: uniform draws compared with it."""
    static, like = _random_shape(shape, 'random_binomial')
    if _is_engine_tensor(p):
        # CNTK's bernoulli takes a Python mean only: compare uniform draws in
        # [0, 1) with the rate tensor instead (1 where u < p)
        if static is None:
            u = C.random.uniform_like(_like_dtype(like, dtype), seed=_op_seed(seed))
        else:
            u = C.random.uniform(static, dtype=_np_dtype(dtype), seed=_op_seed(seed))
        rate = _to_tensor(p)
        if _var(rate).dtype != _var(u).dtype:
            rate = C.cast(rate, _var(u).dtype)
        return C.less(u, rate)
    if static is None:
        return C.random.bernoulli_like(_like_dtype(like, dtype), mean=p, seed=_op_seed(seed))
    return C.random.bernoulli(static, dtype=_np_dtype(dtype), mean=p, seed=_op_seed(seed))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """CNTK has no truncated normal: a numpy graph node (``UserFunction``) draws from
    ``RandomState(seed)``, new values at each evaluation."""
    static, like = _random_shape(shape, 'truncated_normal')
    rng = np.random.RandomState(_op_seed(seed))

    def run(v):
        out = rng.normal(size=v.shape)
        bad = np.abs(out) > 2
        while bad.any():
            out[bad] = rng.normal(size=int(bad.sum()))
            bad = np.abs(out) > 2
        return [out * stddev + mean]
    if static is None:
        return _numpy_op([like], run, [_static_shape(like)], dtype=_np_dtype(dtype),
                         name='truncated_normal')[0]
    return _numpy_op([], lambda _: run(np.zeros(static)), [static], dtype=_np_dtype(dtype),
                     name='truncated_normal')[0]


# ---------------------------------------------------------------------------
# CTC
# ---------------------------------------------------------------------------

# Blank is the last class; the loss and the decoders are numpy graph nodes.

def ctc_label_dense_to_sparse(labels, label_lengths):
    """CNTK has no integer sparse tensor: the result pairs the dense labels with their lengths
    (``is_sparse`` is True; ``to_dense`` zeroes the entries past each length)."""
    labels = _to_tensor(labels)
    lengths = _to_tensor(label_lengths, dtype=dtype(labels))
    if _nd(lengths) == 2:
        lengths = _drop_axis(lengths, 1)
    return _SparseLabels(labels, lengths)


def _ctc_alpha_beta(lp, labels):
    """log alpha/beta over the extended label sequence; lp (T, C) log-probs."""
    T, nc = lp.shape
    blank = nc - 1
    ext = [blank]
    for l in labels:
        ext += [int(l), blank]
    S = len(ext)
    ninf = -np.inf
    a = np.full((T, S), ninf)
    b = np.full((T, S), ninf)
    a[0, 0] = lp[0, blank]
    if S > 1:
        a[0, 1] = lp[0, ext[1]]
    for t in range(1, T):
        for s in range(S):
            v = [a[t - 1, s]]
            if s > 0:
                v.append(a[t - 1, s - 1])
            if s > 1 and ext[s] != blank and ext[s] != ext[s - 2]:
                v.append(a[t - 1, s - 2])
            a[t, s] = np.logaddexp.reduce(v) + lp[t, ext[s]]
    b[T - 1, S - 1] = lp[T - 1, ext[S - 1]]
    if S > 1:
        b[T - 1, S - 2] = lp[T - 1, ext[S - 2]]
    for t in range(T - 2, -1, -1):
        for s in range(S):
            v = [b[t + 1, s]]
            if s < S - 1:
                v.append(b[t + 1, s + 1])
            if s < S - 2 and ext[s] != blank and ext[s] != ext[s + 2]:
                v.append(b[t + 1, s + 2])
            b[t, s] = np.logaddexp.reduce(v) + lp[t, ext[s]]
    logp = np.logaddexp(a[T - 1, S - 1], a[T - 1, S - 2] if S > 1 else ninf)
    return a, b, ext, logp


def _ctc_items(lp, y_true, in_len, lab_len):
    for i in range(lp.shape[0]):
        T = int(np.asarray(in_len).reshape(lp.shape[0], -1)[i, 0])
        L = int(np.asarray(lab_len).reshape(lp.shape[0], -1)[i, 0])
        yield i, T, [int(v) for v in y_true[i, :L]]


def _ctc_loss_np(lp, y_true, in_len, lab_len):
    out = np.zeros((lp.shape[0], 1))
    for i, T, labels in _ctc_items(lp, y_true, in_len, lab_len):
        with np.errstate(divide='ignore', invalid='ignore'):
            out[i, 0] = -_ctc_alpha_beta(lp[i, :T], labels)[3]
    return [out]


def _ctc_grad_np(values, _, root):
    lp, y_true, in_len, lab_len = values
    g = np.zeros_like(lp, dtype=np.float64)
    for i, T, labels in _ctc_items(lp, y_true, in_len, lab_len):
        with np.errstate(divide='ignore', invalid='ignore'):
            a, b, ext, logp = _ctc_alpha_beta(lp[i, :T].astype(np.float64), labels)
            if not np.isfinite(logp):
                continue
            ab = a + b
            for k in set(ext):
                cols = [s for s, e in enumerate(ext) if e == k]
                occ = np.logaddexp.reduce(ab[:, cols], axis=1)
                g[i, :T, k] = -np.exp(occ - lp[i, :T, k] - logp)
        g[i] *= np.asarray(root).reshape(lp.shape[0], -1)[i, 0]
    return g


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """``log(y_pred + epsilon)`` is renormalised by a log-softmax in the graph; the CTC
    forward-backward runs in a numpy graph node (``UserFunction``) that also supplies the gradient.
    Blank is the last class."""
    y_pred = _to_tensor(y_pred)
    logits = C.log(y_pred + _constant_like(y_pred, epsilon()))
    lp = _log_softmax(logits, _nd(logits) - 1)
    ins = [lp, _to_tensor(y_true, dtype=dtype(y_pred)),
           _to_tensor(input_length, dtype=dtype(y_pred)),
           _to_tensor(label_length, dtype=dtype(y_pred))]
    return _numpy_op(ins, _ctc_loss_np, [(_static_shape(lp)[0], 1)],
                     dtype=np.dtype(_var(lp).dtype),
                     grad_fn=_ctc_grad_np, name='ctc_batch_cost')[0]


def _greedy_decode(logits, lengths):
    paths, scores = [], []
    blank = logits.shape[2] - 1
    for i in range(logits.shape[0]):
        T = int(lengths[i])
        best = logits[i, :T].argmax(axis=1)
        scores.append(-logits[i, :T].max(axis=1).sum())
        out, prev = [], None
        for c in best:
            if c != prev and c != blank:
                out.append(int(c))
            prev = c
        paths.append(out)
    return [paths], np.asarray(scores).reshape(-1, 1)


def _beam_decode(logits, lengths, beam_width, top_paths, merge_repeated):
    log_probs = logits - np.logaddexp.reduce(logits, axis=2, keepdims=True)
    return ctc_search.prefix_beam_search(log_probs, lengths, beam_width, top_paths,
                                          merge_repeated)


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1,
               merge_repeated=False):
    """A numpy graph node does the search; decoded labels are integer values held in ``floatx()``,
    padded with -1 to at least one column (CNTK holds no zero-size value)."""
    if greedy:
        top_paths = 1
    top_paths, beam_width = int(top_paths), int(beam_width)
    y_pred = _to_tensor(y_pred)
    logits = C.log(y_pred + _constant_like(y_pred, epsilon()))
    lengths = _to_tensor(input_length, dtype=dtype(y_pred))

    def run(lg, ln):
        ln = ln.reshape(-1)
        if greedy:
            paths, scores = _greedy_decode(lg, ln)
        else:
            paths, scores = _beam_decode(lg, ln, beam_width, top_paths, merge_repeated)
        # CNTK aborts on zero-size values: keep at least one (-1) column.
        outs = [ctc_search.pad_labellings(plist, np.float64, min_width=1) for plist in paths]
        return outs + [scores]
    nb = _static_shape(y_pred)[0]
    shapes = [(nb, None)] * top_paths + [(nb, 1 if greedy else top_paths)]
    outs = _numpy_op([logits, lengths], run, shapes, dtype=np.dtype(_var(logits).dtype),
                     name='ctc_decode')
    return list(outs[:top_paths]), outs[top_paths]


# ---------------------------------------------------------------------------
# Higher-order functions
# ---------------------------------------------------------------------------

def map_fn(fn, elems, name=None, dtype=None):
    """The slices travel on CNTK's batch axis (``C.to_batch``): ``fn`` sees one element and the
    length may be unknown. ``name`` and ``dtype`` are ignored."""
    elems = _to_tensor(elems)
    y = fn(_per_sample(elems))
    return _unbatch(_to_tensor(y), elems)


def _fold(fn, elems, initializer, backwards):
    elems = _to_tensor(elems)
    n = _static_shape(elems)[0]
    if n is None:
        # unknown length: a CNTK recurrence over a sequence axis
        if backwards:
            elems = reverse(elems, 0)
        xs = _to_seq(elems)
        if initializer is None:
            ph = C.placeholder(shape=_var(xs).shape, dynamic_axes=_var(xs).dynamic_axes)
            acc = C.element_select(C.sequence.is_first(xs), xs,
                                   _to_tensor(fn(C.sequence.past_value(ph), xs)))
        else:
            ph, prev = _seq_previous(initializer, xs)
            acc = _to_tensor(fn(prev, xs))
        C.combine([_var(acc)]).replace_placeholders({ph: _var(acc)})
        return _seq_last(acc)
    idx = list(range(n))[::-1] if backwards else list(range(n))
    items = [_drop_axis(C.slice(elems, 0, i, i + 1), 0) for i in idx]
    if initializer is None:
        acc, items = items[0], items[1:]
    else:
        acc = _to_tensor(initializer)
    for it in items:
        acc = fn(acc, it)
    return _to_tensor(acc)


def foldl(fn, elems, initializer=None, name=None):
    """A static length is unrolled; an unknown one runs as a CNTK recurrence over a sequence axis
    (``C.sequence.past_value``)."""
    return _fold(fn, elems, initializer, False)


def foldr(fn, elems, initializer=None, name=None):
    """A static length is unrolled; an unknown one runs as a CNTK recurrence over a sequence axis
    (``C.sequence.past_value``)."""
    return _fold(fn, elems, initializer, True)


# ---------------------------------------------------------------------------
# Locally connected
# ---------------------------------------------------------------------------

def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """One ``C.times`` per output step on the flattened patch, spliced."""
    inputs, kernel = _coerce_pair(inputs, kernel)
    fmt = normalize_data_format(data_format)
    k = shape_rules.normalize_tuple(kernel_size, 1, 'kernel_size')[0]
    s = shape_rules.normalize_tuple(strides, 1, 'strides')[0]
    x = inputs if fmt == 'channels_last' else C.transpose(inputs, (0, 2, 1))
    steps = _static_shape(kernel)[0]
    outs = []
    for i in range(steps):
        patch = batch_flatten(C.slice(x, 1, i * s, i * s + k))
        w = _drop_axis(C.slice(kernel, 0, i, i + 1), 0)
        outs.append(_add_axis(C.times(patch, w), 1))
    y = C.splice(*outs, axis=1) if len(outs) > 1 else outs[0]
    return y if fmt == 'channels_last' else C.transpose(y, (0, 2, 1))


def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """One ``C.times`` per output position on the flattened patch, spliced; patches flatten as
    ``(kh, kw, in)`` for channels_last and ``(in, kh, kw)`` for channels_first."""
    inputs, kernel = _coerce_pair(inputs, kernel)
    fmt = normalize_data_format(data_format)
    kh, kw = shape_rules.normalize_tuple(kernel_size, 2, 'kernel_size')
    sh, sw = shape_rules.normalize_tuple(strides, 2, 'strides')
    rows, cols = shape_rules.normalize_tuple(output_shape, 2, 'output_shape')
    ha, wa = (2, 3) if fmt == 'channels_first' else (1, 2)
    outs = []
    for r in range(rows):
        for c in range(cols):
            patch = C.slice(inputs, [ha, wa], [r * sh, c * sw], [r * sh + kh, c * sw + kw])
            w = _drop_axis(C.slice(kernel, 0, r * cols + c, r * cols + c + 1), 0)
            outs.append(_add_axis(C.times(batch_flatten(patch), w), 1))
    y = C.splice(*outs, axis=1) if len(outs) > 1 else outs[0]
    filters = _static_shape(kernel)[-1]
    y = C.reshape(y, (rows, cols, filters), begin_axis=1)
    return y if fmt == 'channels_last' else C.transpose(y, (0, 3, 1, 2))


# ---------------------------------------------------------------------------
# Names of Keras 2.3.1's own CNTK module that Keras 2 libraries import from it
# (keras-contrib's ``KCN._moments``): this adapter is ``keras.backend.cntk_backend`` when
# Keras runs on it (keras2_compat.adopt_engine_name).
# ---------------------------------------------------------------------------

#: the device CNTK computes on (Keras' own CNTK module had it; Keras' tests read
#: ``load_backend.dev.type()`` to skip what CNTK runs only on a GPU)
dev = C.device.use_default_device()


def _moments(x, axes=None, shift=None, keep_dims=False):
    """Mean and population variance of ``x`` over ``axes`` (a list of ints), computed on data
    shifted by ``shift`` (default: the mean itself, held constant for the gradient), which
    keeps the variance's difference of squares small. Returns ``(mean, variance)``, with the
    reduced axes kept as size 1 when ``keep_dims``."""
    x = _to_tensor(x)
    axes = list(range(_nd(x))) if axes is None else [int(a) for a in axes]
    if shift is None:
        shift = mean(x, axes, keepdims=True)
    shift = C.stop_gradient(_param_like(x, shift))
    shifted = x - shift
    shifted_mean = mean(shifted, axes, keepdims=True)
    variance = mean(C.square(shifted), axes, keepdims=True) - C.square(shifted_mean)
    average = shifted_mean + shift
    if not keep_dims:
        average, variance = _squeeze_axes(average, axes), _squeeze_axes(variance, axes)
    return average, variance


def _squeeze_axes(x, axes):
    """``x`` without its size-1 ``axes`` (the highest first, so the others keep their place)."""
    for a in sorted((shape_rules.normalize_axis(a, _nd(x)) for a in axes), reverse=True):
        x = squeeze(x, a)
    return x


