"""The machinery of the Theano adapter: how it picks its engine, holds its state and
builds, compiles and runs a graph.

The engine (Theano 1.0.5 where it imports and works, else PyTensor) is reached through one
engine module, ``_engine`` (:mod:`.theano_engine` or :mod:`.pytensor_engine`, one interface:
:mod:`.engine_interface`). Here: the engine's flags and compile mode, the adapter's state
(learning phase, ``eval`` cache, ``control_dependencies`` scopes, session stand-in), tensor
conversion helpers, the per-op decorator :func:`records_keras_shape`, the compiled
:class:`Function` and the graph copying that ``rnn`` hoists loop-invariant parts with.

Compile mode: when the user has not chosen a mode or linker in the engine's flags,
``function`` compiles PyTensor graphs with the C ``cvm`` linker and the ``fast_run``
rewrites (the numba default takes minutes on a first CNN call). When the user has not set
``floatX`` in the flags, the engine's ``floatX`` is set to ``'float32'`` at import so that
Python float constants do not upcast float32 tensors.

Original Theano (1.0.5): its tensor types hold broadcastable flags but no sizes, so
``int_shape`` runs the engine's per-op ``infer_shape`` from the known sizes of
placeholders, variables and constants; ``function``, ``eval``, ``gradients`` and scan steps
rebuild elementwise ops so that axes of static size 1 broadcast (as they do with PyTensor's
static shapes); variables' size-1 axes are broadcastable; without ``blas.ldflags`` batched
products avoid Theano's BLAS-only ``BatchedDot``.
"""
from __future__ import absolute_import, division, print_function

import functools
import inspect
import logging
import os
import sys

import numpy as np

from .. import api, checks, common, engines, shape_rules

try:
    import builtins as _builtins
except ImportError:  # pragma: no cover
    import __builtin__ as _builtins

# Python builtins that the API names of the ops shadow.
_ball = _builtins.all
_bmax = _builtins.max
_bmin = _builtins.min
_bany = _builtins.any
_bslice = _builtins.slice


# ---------------------------------------------------------------------------
# Engine resolution: Theano 1.0.5 where it works, else PyTensor
# ---------------------------------------------------------------------------

def _quiet_blas_warning(package):
    """Hide the engine's "Using NumPy C-API based implementation for BLAS functions"
    start-up warning (README: "How each engine is driven" explains it), unless
    the user configured that logger or named a BLAS in the flags."""
    flags = os.environ.get('PYTENSOR_FLAGS', '') + ',' + os.environ.get('THEANO_FLAGS', '')
    if 'ldflags' in flags:
        return
    logger = logging.getLogger('%s.tensor.blas' % package)
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.ERROR)


def _load_engine():
    """Return the engine module: ``theano_engine`` where the original Theano
    imports and works, else ``pytensor_engine`` (both provide
    :mod:`.engine_interface`)."""
    _quiet_blas_warning('theano')
    _quiet_blas_warning('pytensor')
    try:
        from . import theano_engine as engine
        return engine
    except Exception:  # any failure means: try PyTensor
        pass
    try:
        from . import pytensor_engine as engine
    except Exception as err:
        raise engines.engine_import_error('Theano', 'pytensor', 'theano', err)
    return engine


_engine = _load_engine()
th, T = _engine.th, _engine.T
ENGINE = _engine.ENGINE
ENGINE_VERSION = _engine.ENGINE_VERSION


# ---------------------------------------------------------------------------
# Engine flags, compile mode, dtypes
# ---------------------------------------------------------------------------

def _flag_set_by_user(*names):
    """True when the engine's flags variable (``key=value,...``) or its rc
    files (``key = value`` lines) set one of the keys ``names``."""
    keys = set()
    for item in os.environ.get(_engine.FLAGS_ENV, '').split(','):
        if '=' in item:
            keys.add(item.split('=', 1)[0].strip().lower())
    rc_paths = [os.path.expanduser(rc) for rc in _engine.RC_FILES]
    rc_env = os.environ.get(_engine.FLAGS_ENV.replace('_FLAGS', 'RC'))
    if rc_env:
        rc_paths.extend(rc_env.split(os.pathsep))
    for path in rc_paths:
        if os.path.isfile(path):
            try:
                with open(path) as f:
                    for line in f:
                        if '=' in line and not line.lstrip().startswith(('#', ';')):
                            keys.add(line.split('=', 1)[0].strip().lower())
            except (IOError, OSError):
                pass
    return _bany(n.lower() in keys for n in names)


if not _flag_set_by_user('floatx'):
    th.config.floatX = 'float32'


def _announce_first_compile():
    """Say once, on stderr, that a first run compiles C code (a minute or more).

    Only when the engine's compile cache holds no compiled module yet, and not
    with ``KERAS_BACKEND_QUIET=1``.
    """
    if _ANNOUNCED:
        return
    _ANNOUNCED.append(True)
    if os.environ.get('KERAS_BACKEND_QUIET', '') in ('1', 'true', 'True', 'yes'):
        return
    compiledir = str(getattr(th.config, 'compiledir', '') or '')
    try:
        cached = _bany(name.startswith("tmp") for name in os.listdir(compiledir))
    except OSError:
        cached = False
    if not cached:
        sys.stderr.write('keras_backend: %s compiles the C code of each new function into %s; '
                         'this first run takes longer (a minute or more), later runs reuse it.\n'
                         % (api.ENGINE_TITLES[ENGINE], compiledir))


_ANNOUNCED = []


def _default_mode():
    """The compile mode ``function`` uses when the caller gives none: the
    engine module's ``default_mode()`` (PyTensor: the C ``cvm`` linker with
    ``fast_run`` rewrites; Theano: None), or None (the engine's default) when
    the user set a mode or linker in the flags."""
    _announce_first_compile()
    mode = _engine.default_mode()
    if mode is None or _flag_set_by_user('mode', 'linker'):
        return None
    return mode


def _compile(inputs, outputs, **kwargs):
    """``th.function`` in the engine module's ``compiling()`` flags: a rewrite that runs
    out of memory while compiling raises ``MemoryError`` rather than being skipped (it
    leaves the time and memory it spent), unless the user's flags chose ``on_opt_error``.
    Another rewrite that fails compiles the graph again with the engine's own flags, which
    log and skip it, as Keras' own Theano backend compiled: Theano 1.0.5's scan rewrite
    ``PushOutScanOutput`` fails so ("Trying to reintroduce a removed node") on Keras 2.3.1's
    stacked custom RNN cells."""
    with _engine.compiling():
        try:
            return th.function(inputs, outputs, **kwargs)
        except MemoryError:
            raise
        except Exception as e:   # noqa: B902 - the engine's own exception types
            if not _engine.rewrite_failed(e):
                raise
    return th.function(inputs, outputs, **kwargs)


def _normalize_dtype(dtype, where='dtype'):
    """``dtype`` as a numpy dtype name (``floatx()`` when None).

    Raises:
        TypeError: naming the function ``where`` and its ``dtype`` argument
            when ``dtype`` is not a dtype of the engine (strings, objects).
    """
    if dtype is None:
        return common.floatx()
    try:
        name = np.dtype(getattr(dtype, 'name', dtype)).name
    except TypeError:
        name = None
    if name not in _ENGINE_DTYPES:
        raise TypeError('%s: argument dtype=%r is not a dtype this engine has (%s)'
                        % (where, dtype, ', '.join(_ENGINE_DTYPES)))
    return name


#: the tensor dtypes Theano and PyTensor offer (no strings or objects)
_ENGINE_DTYPES = ('bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32',
                  'uint64', 'float16', 'float32', 'float64', 'complex64', 'complex128')


# ---------------------------------------------------------------------------
# The adapter's state (containers: changed in place, never rebound)
# ---------------------------------------------------------------------------

_LEARNING_PHASE = T.scalar(dtype='uint8', name='keras_learning_phase')
_EVAL_CACHE = {}
_CONTROL_SCOPES = []  # [first serial, end serial, {variable: value it is updated to}]


_op_seed = shape_rules.op_seed


# ---------------------------------------------------------------------------
# Private helper vocabulary: tensors, shapes, constants, graphs
# ---------------------------------------------------------------------------

def _is_engine_tensor(x):
    return isinstance(x, _engine.Variable)


def is_sparse_tensor(x):
    """True for the engine's sparse (csr/csc) tensor types (the API's ``is_sparse``)."""
    return isinstance(getattr(x, 'type', None), _engine.SparseType)


def records_keras_shape(func):
    """The adapter's per-op decorator, applied where an op is defined (in its section's
    module): the engine tensor ``func`` returns gets ``_keras_shape`` (its ``int_shape``), as
    Keras 2.3.1's Theano backend sets on the results of its shape-changing ops."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        out = func(*args, **kwargs)
        if _is_engine_tensor(out) and not is_sparse_tensor(out):
            try:
                out._keras_shape = int_shape(out)
            except (AttributeError, TypeError):
                pass
        return out
    return wrapper


# The API's ``int_shape`` and ``dtype`` (bound under their names in the ``tensors`` section of
# the ops): ``records_keras_shape`` records the one, compiled functions check their feeds
# with both. Beside ``int_shape``, the static shape every op computes with (``_known_shape``)
# and the one the argument checks read (``_engine_int_shape``).

#: this module: ``checks.feed_specs`` reads ``int_shape`` and ``dtype`` from it
_THIS = sys.modules[__name__]


def int_shape(x):
    """The ``_keras_shape`` that ``x`` carries, as Keras 2.3.1's Theano backend reads it;
    else PyTensor's ``type.shape``, or Theano 1.0.5's per-op ``infer_shape``. The ops
    themselves compute with :func:`_known_shape`."""
    if not _is_engine_tensor(x):
        return tuple(np.shape(x))
    recorded = getattr(x, '_keras_shape', None)
    if is_sparse_tensor(x):
        return tuple(recorded) if recorded is not None else (None, None)
    if isinstance(x, _engine.SharedVariable):
        return tuple(x.get_value(borrow=True, return_internal_type=True).shape)
    if recorded is not None and len(recorded) == x.ndim:
        return tuple(None if d is None else int(d) for d in recorded)
    return _engine.static_shape(x)


def _size_argument(size):
    """A static ``size`` (int or None) as an op's size argument: the int where the engine's
    types hold sizes (PyTensor), else None, for the caller to read it from the tensor (or
    leave it to the op) as Keras' Theano backend did: Theano 1.0.5 keys a compiled module by
    the values of its constant inputs, so an int size compiles a module of its own (an
    ``Alloc``, a ``MakeVector``) for every shape, where one read from the tensor is shared."""
    return size if _engine.HAS_STATIC_SHAPES else None


def _known_shape(x):
    """The static shape the ops compute with: the engine's own sizes (PyTensor's
    ``type.shape``, Theano 1.0.5's per-op ``infer_shape``), and where the engine knows none,
    the ``_keras_shape`` that ``x`` carries. A recorded size that contradicts the engine's
    is not taken: Keras 2.3.1's ConvLSTM2D records its initial state with the input's
    channels instead of the layer's filters (Keras' own Theano backend passed that shape to
    ``conv2d`` only as a hint, which Theano does not check)."""
    if not _is_engine_tensor(x) or is_sparse_tensor(x) or isinstance(x, _engine.SharedVariable):
        return int_shape(x)
    recorded = getattr(x, '_keras_shape', None)
    own = _engine.static_shape(x)
    if recorded is None or len(recorded) != x.ndim:
        return own
    if own is None or len(own) != x.ndim:
        return tuple(None if d is None else int(d) for d in recorded)
    return tuple(o if o is not None else (None if r is None else int(r))
                 for o, r in zip(own, recorded))


def _engine_known_value(x):
    """The value of ``x`` where the graph holds it (a constant), else None; the argument
    checks read it (indices in range...)."""
    if isinstance(x, _engine.Constant) and not is_sparse_tensor(x):
        return np.asarray(x.data)
    return None


def _engine_int_shape(x):
    """The engine's own static shape, ignoring a ``_keras_shape`` that Keras recorded (the
    argument checks read this: Keras 2.3.1 records a wrong one on ConvLSTM2D's channels_first
    initial state)."""
    if not _is_engine_tensor(x) or is_sparse_tensor(x) or isinstance(x, _engine.SharedVariable):
        return _known_shape(x)
    return _engine.static_shape(x)


def dtype(x):
    if not _is_engine_tensor(x):
        return np.asarray(x).dtype.name
    return str(x.dtype)


def _with_shape(x, shape):
    """Record the static ``shape`` (ints / None) of ``x`` (SpecifyShape on PyTensor)."""
    shape = tuple(None if s is None else int(s) for s in shape)
    if not is_sparse_tensor(x):
        x = _engine.specify_shape(x, shape)
    try:
        x._keras_shape = shape
    except AttributeError:
        pass
    return x


def _to_tensor(x, dtype=None):
    """``x`` (number, list, numpy array, tensor or variable) as an engine tensor:
    numbers and arrays as constants of ``dtype`` (when None, float ones take
    ``floatx()``), lists holding tensors stacked in the graph (``_stack_mixed``)."""
    if _is_engine_tensor(x):
        return x
    if isinstance(x, (list, tuple)) and _holds_engine_tensor(x):
        return _stack_mixed(x, dtype)
    if dtype is None:
        arr = np.asarray(x)
        dtype = common.floatx() if arr.dtype.kind == 'f' or arr.dtype == object else arr.dtype
    return T.as_tensor_variable(np.asarray(x, dtype=dtype))


def _holds_engine_tensor(items):
    return _bany(_is_engine_tensor(e) or (isinstance(e, (list, tuple)) and _holds_engine_tensor(e))
                 for e in items)


def _stack_mixed(items, dtype=None):
    """A (nested) list/tuple of engine tensors and numbers as one tensor, built
    in the graph (``T.stack``): e.g. ``[K.shape(x)[0], 5]``.  Numbers take the
    tensors' common dtype (``floatx()`` when a float number meets integer
    tensors) unless ``dtype`` is given."""
    parts = [_stack_mixed(e, dtype) if isinstance(e, (list, tuple)) and _holds_engine_tensor(e)
             else e for e in items]
    tensors = [p for p in parts if _is_engine_tensor(p)]
    if dtype is None:
        dt = np.result_type(*[np.dtype(t.dtype) for t in tensors])
        if dt.kind in 'biu' and _bany(
                np.asarray(p).dtype.kind == 'f' for p in parts if not _is_engine_tensor(p)):
            dt = np.dtype(common.floatx())
        dtype = dt.name
    cast = []
    for p in parts:
        if not _is_engine_tensor(p):
            p = T.constant(np.asarray(p, dtype=dtype))
        elif p.dtype != dtype:
            p = T.cast(p, dtype)
        cast.append(p)
    return T.stack(cast)


def _constant_like(x, value):
    """The number ``value`` as a constant of ``x``'s dtype."""
    return T.constant(np.asarray(value, dtype=x.dtype))


def _param_like(x, value):
    """A parameter of an op on ``x`` (a number or an engine tensor) in ``x``'s dtype."""
    if _is_engine_tensor(value):
        return value if value.dtype == x.dtype else T.cast(value, x.dtype)
    return _constant_like(x, value)


def _is_zero_number(value):
    """True for the number 0 (a tensor is never taken for 0: its value is not known here)."""
    return not _is_engine_tensor(value) and np.all(np.asarray(value) == 0)


def _axis_arg(axis, ndim):
    """``axis`` (None, an int or a list of ints, negative allowed) as the
    engine's reductions take it: None, or axes in ``[0, ndim)``."""
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return [int(a) % ndim if ndim else int(a) for a in axis]
    return int(axis) % ndim if ndim else int(axis)


def _broadcast_param(p, x_ndim, axis):
    """Lay a 1-D parameter along ``axis`` of an ``x_ndim`` tensor."""
    p = _to_tensor(p)
    if p.ndim == 1 and x_ndim > 1:
        pattern = ['x'] * x_ndim
        pattern[axis] = 0
        return p.dimshuffle(pattern)
    return p


# ---------------------------------------------------------------------------
# Graphs: the learning phase fed, nodes in order, copies with replacements
# ---------------------------------------------------------------------------

def _givens_for(outputs, inputs):
    """Feed the learning phase 0 when the graph uses it and it is not an input."""
    if _bany(i is _LEARNING_PHASE for i in inputs):
        return {}
    roots = [o for o in outputs if _is_engine_tensor(o)]
    if roots and _bany(a is _LEARNING_PHASE for a in _engine.ancestors(roots)):
        return {_LEARNING_PHASE: T.constant(np.uint8(0), dtype='uint8')}
    return {}


def _toposort(outputs, stop=()):
    """Apply nodes of the graph of ``outputs``, inputs before users; the
    graphs above the variables whose ids are in ``stop`` are left out."""
    order, seen = [], set()
    stack = [(o.owner, False) for o in outputs
             if _is_engine_tensor(o) and o.owner is not None and id(o) not in stop]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((i.owner, False) for i in node.inputs
                     if i.owner is not None and id(i.owner) not in seen and id(i) not in stop)
    return order


# ---------------------------------------------------------------------------
# Evaluating a tensor: the API's eval (bound under its name in the ``tensors`` section of the
# ops; the session stand-in runs it)
# ---------------------------------------------------------------------------

def eval(x):
    """Compiles one engine function per tensor, cached until ``clear_session``; a sparse
    tensor comes back dense, as from Keras' Theano backend (``to_dense(x).eval()``)."""
    if not _is_engine_tensor(x):
        return np.asarray(x)
    if isinstance(x, _engine.SharedVariable):
        value = x.get_value()
        # a sparse variable comes back dense, as Keras' Theano backend's eval (to_dense) gave
        return value.toarray() if hasattr(value, 'toarray') else np.array(value)
    if isinstance(x, _engine.Constant):
        return np.array(x.data)
    fn = _EVAL_CACHE.get(x)
    if fn is None:
        y = _engine.fix_broadcast([x])[0]
        try:
            fn = _compile([], y, givens=_givens_for([y], []), mode=_default_mode(),
                             updates=_engine.rng_updates([y], []), on_unused_input='ignore')
        except Exception as e:
            if type(e).__name__ != 'MissingInputError':
                raise
            raise ValueError("eval: argument 'x' depends on a placeholder; feed it through "
                             "K.function([...], x) instead (%s)" % str(e).split('\n')[0]) from e
        _EVAL_CACHE[x] = fn
    try:
        out = fn()
    except (ValueError, TypeError, RuntimeError, IndexError, MemoryError, AssertionError) as e:
        raise checks.engine_error('eval', e) from e
    if hasattr(out, 'toarray'):
        return out.toarray()
    return np.asarray(out)


# ---------------------------------------------------------------------------
# The session stand-in
# ---------------------------------------------------------------------------

class _Session(object):
    """Session-like object: ``run(fetches, feed_dict=None)`` evaluates tensors."""

    def run(self, fetches, feed_dict=None):
        """Evaluate ``fetches`` (a tensor or a list of them) with ``feed_dict``
        ({placeholder: numpy value}); returns numpy values in the same structure."""
        feed_dict = feed_dict or {}
        keys = list(feed_dict.keys())
        single = not isinstance(fetches, (list, tuple))
        outs = [fetches] if single else list(fetches)
        if not keys:
            values = [eval(o) for o in outs]
        else:
            values = Function(keys, outs)([feed_dict[k] for k in keys])
        return values[0] if single else values


_SESSION = [_Session()]   # the one session (``set_session`` replaces its entry)


# ---------------------------------------------------------------------------
# Compiled functions: updates, control dependencies, feeds
# ---------------------------------------------------------------------------

def update_pair(x, new_x):
    """The ``(variable, new_value)`` pair that the engine's ``function`` applies (what the
    API's ``update`` returns): ``new_value`` cast to the variable's dtype and given its
    broadcast pattern."""
    new_x = _to_tensor(new_x)
    if new_x.dtype != x.dtype:
        new_x = T.cast(new_x, x.dtype)
    if new_x.ndim == x.ndim and new_x.broadcastable != x.broadcastable:
        # a value whose sizes are free in the graph for a variable with size-1 axes
        # (Keras' metrics add K.sum(..., 1) to (1,) accumulators): the engine checks
        # those sizes when the function runs
        new_x = _engine.pattern_broadcast(new_x, x.broadcastable)
    return (x, new_x)


def _serial_now():
    """The engine's running count of created graph variables (advances it by one)."""
    return next(_engine.Variable.__count__)


def _serial(v):
    name = getattr(v, 'auto_name', '')
    try:
        return int(name[5:]) if name.startswith('auto_') else -1
    except ValueError:
        return -1


def _after_control_updates(outputs):
    """Rebuild ``outputs`` so that ops created inside a ``control_dependencies``
    block read the new values of the variables its updates write."""
    if not _CONTROL_SCOPES:
        return outputs
    lo = _bmin(sc[0] for sc in _CONTROL_SCOPES)
    mapping = {}
    for node in _toposort(outputs):
        new_ins = [mapping.get(i, i) for i in node.inputs]
        serial = _serial(node.outputs[0])
        if serial >= lo:
            for sc in _CONTROL_SCOPES:
                if sc[0] < serial < sc[1]:
                    new_ins = [sc[2][i] if isinstance(i, _engine.SharedVariable) and i in sc[2]
                               else n for i, n in zip(node.inputs, new_ins)]
        if _ball(n is i for n, i in zip(new_ins, node.inputs)):
            continue
        new_ins = [T.cast(n, i.dtype) if getattr(n, 'dtype', None) != i.dtype
                   and isinstance(i.type, T.TensorType) else n
                   for n, i in zip(new_ins, node.inputs)]
        new_node = node.clone_with_new_inputs(new_ins, strict=False)
        for old, new in zip(node.outputs, new_node.outputs):
            for attr in ('_keras_shape', '_uses_learning_phase'):
                if hasattr(old, attr):
                    setattr(new, attr, getattr(old, attr))
            mapping[old] = new
    return [mapping.get(o, o) if _is_engine_tensor(o) else o for o in outputs]


_FUNCTION_KWARGS = tuple(
    p for p in inspect.signature(th.function).parameters
    if p not in ('inputs', 'outputs', 'updates', 'name'))


class Function(object):
    """A compiled engine function (what ``function`` returns).

    Calling it with a list of numpy arrays (one per input) returns a list of
    numpy arrays (or one array when built with a single output tensor).

    Raises:
        ValueError: when called with the wrong number of input values.

    Example:
        >>> f = K.function([x], [x * 2])
        >>> f([np.ones((2, 3), 'float32')])[0].shape
        (2, 3)
    """

    def __init__(self, inputs, outputs, updates=None, name=None, **kwargs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError('function: inputs must be a list or tuple of tensors')
        self.inputs = list(inputs)
        self._single = not isinstance(outputs, (list, tuple))
        self._feed_specs = None
        self.api_name = 'function'
        self.outputs = [outputs] if self._single else list(outputs)
        pairs = []
        if updates:
            items = updates.items() if isinstance(updates, dict) else updates
            for u in items:
                if not isinstance(u, (list, tuple)) or len(u) != 2:
                    raise ValueError('function: each update must be a (variable, new_value) '
                                     'pair, got %r' % (u,))
                pairs.append(update_pair(u[0], u[1]))
        # one update per variable, the last one given winning (as Keras' Theano backend:
        # a layer shared between two inputs, e.g. BatchNormalization, updates twice)
        last = dict((id(p[0]), i) for i, p in enumerate(pairs))
        pairs = [p for i, p in enumerate(pairs) if last[id(p[0])] == i]
        n_out = len(self.outputs)
        fixed = _engine.fix_broadcast(_after_control_updates(self.outputs + [p[1] for p in pairs]))
        outputs = fixed[:n_out]
        pairs = [(p[0], f) for p, f in zip(pairs, fixed[n_out:])]
        if not kwargs.get('no_default_updates'):
            pairs.extend(_engine.rng_updates(outputs + [p[1] for p in pairs],
                                             [p[0] for p in pairs]))
        givens = dict(kwargs.pop('givens', None) or {})
        givens.update(_givens_for(outputs + [p[1] for p in pairs], self.inputs))
        kwargs.setdefault('on_unused_input', 'ignore')
        kwargs.setdefault('allow_input_downcast', True)
        if kwargs.get('mode') is None:
            kwargs['mode'] = _default_mode()
        self._fn = _compile(self.inputs, outputs, updates=pairs, givens=givens,
                            name=name, **kwargs)

    def __call__(self, inputs):
        inputs = checks.checked_feeds(self, _THIS, inputs)
        try:
            values = self._fn(*inputs)
        except (ValueError, TypeError, RuntimeError, IndexError, MemoryError, AssertionError) as e:
            raise checks.engine_error(self.api_name, e, [np.shape(v) for v in inputs]) from e
        values = [np.asarray(v) if not hasattr(v, 'toarray') else v for v in values]
        return values[0] if self._single else values


# ---------------------------------------------------------------------------
# Loop bodies: what ``rnn`` moves out of the engine's scan
# ---------------------------------------------------------------------------

def _stand_in(x, static_shape):
    """A fresh symbolic input of ``x``'s type (static shape ``static_shape``)."""
    v = x.type()
    v._keras_shape = tuple(static_shape)
    return v

def _clone(outputs, replace):
    """Copy the graph of ``outputs`` with the variables of ``replace`` swapped
    for their values (used as they are: their own graphs are not copied)."""
    rep = dict((id(k), v) for k, v in replace.items())
    mapping = {}

    def get(v):
        return rep[id(v)] if id(v) in rep else mapping.get(id(v), v)

    for node in _toposort(outputs, stop=rep):
        new_ins = [get(i) for i in node.inputs]
        if _ball(n is i for n, i in zip(new_ins, node.inputs)):
            continue
        new_node = node.clone_with_new_inputs(new_ins, strict=False)
        for old, new in zip(node.outputs, new_node.outputs):
            mapping[id(old)] = new
    return [get(o) for o in outputs]


def _outer_parts(outputs, inner):
    """The largest computed tensors in the graph of ``outputs`` that do not
    depend on the variables ``inner`` but feed ones that do (what a loop body
    may compute once, before the loop)."""
    inner_ids = set(id(v) for v in inner)
    dep = {}
    found = []
    found_ids = set()
    stack = [(o, False) for o in outputs if _is_engine_tensor(o)]
    while stack:
        v, expanded = stack.pop()
        if id(v) in dep:
            continue
        if id(v) in inner_ids or v.owner is None:
            dep[id(v)] = id(v) in inner_ids
            continue
        if not expanded:
            stack.append((v, True))
            stack.extend((i, False) for i in v.owner.inputs if id(i) not in dep)
            continue
        d = _bany(dep[id(i)] for i in v.owner.inputs)
        for o in v.owner.outputs:
            dep[id(o)] = d
        if not d:
            continue
        for i in v.owner.inputs:
            i = _view_base(i)
            if not dep.get(id(i), False) and i.owner is not None and id(i) not in found_ids \
                    and isinstance(i.type, T.TensorType):
                found.append(i)
                found_ids.add(id(i))
    return found


_VIEW_OPS = (T.subtensor.Subtensor, T.elemwise.DimShuffle)


def _view_base(v):
    """The variable that ``v`` is a constant-index slice / dimshuffle of (through several),
    when that is a shared variable, else ``v``. A loop body keeps such views of its weights
    (a recurrent kernel's gate columns) inside, as Keras' own Theano backend has them: the
    engine's scan then accumulates the weight's gradient in its loop, where a view passed in
    from outside would make the optimizer push one more dot (and its reshapes) out of the
    gradient's loop per view."""
    base = v
    while base.owner is not None and isinstance(base.owner.op, _VIEW_OPS) \
            and _ball(isinstance(i, _engine.Constant) for i in base.owner.inputs[1:]):
        base = base.owner.inputs[0]
    return base if isinstance(base, _engine.SharedVariable) else v
