"""TensorFlow's machinery: how the adapter keeps one symbolic graph, places ops in it, runs it.

Here: the module state (``_State``), the graph-placement decorators the ops carry
(``graph_aware``, ``graph_always``), the patched Python operators, tensor conversion
helpers, updates, the compiled ``_Function``, ``eval`` and the session-like object, and the
API's ``is_tensor``, ``int_shape`` and ``dtype``, which compiled functions use. The API
functions that use them are in the section modules (``tensors``, ``math``, ...) that ``ops``
gathers; nothing here imports those.

How symbolic work is organised
------------------------------
TensorFlow 2 runs eagerly.  The Keras 2 API also needs symbolic inputs
(``placeholder``) that are compiled into callables (``function``) and
differentiated (``gradients``).  This adapter keeps eager execution on and
puts every symbolic tensor in ONE module-level graph: the ``FuncGraph`` of an
empty ``tf.compat.v1.wrap_function``.  ``clear_session()`` replaces it.

* ``placeholder`` creates a ``tf.compat.v1.placeholder`` in that graph.
* ``variable`` (and ``zeros``, ``ones``, ``eye``, ``random_*_variable``)
  always creates an eager ``tf.Variable``: ``get_value`` / ``set_value`` /
  ``batch_set_value`` read and set it at once; graph ops that use it capture
  it and read it each time they run.
* Every op of the API enters the graph when one of its arguments (searched
  through lists and tuples) is a symbolic tensor OR a variable, as ops on
  variables did in Keras 2's TensorFlow graph: ``K.square(v)``, ``0.5 * v``,
  an optimiser's ``beta_1 * m`` or ``K.cast(iterations)`` are graph tensors,
  read again at every call of a ``function``, never frozen when built. Their
  values come from ``eval`` (or ``function``). With only eager / numpy
  inputs an op runs eagerly and returns an ``EagerTensor``.
* ``update``, ``update_add``, ``update_sub`` and ``moving_average_update``
  build assignments that do nothing by themselves, as Keras 2's assign ops:
  ``function(..., updates=[...])`` runs them at every call, ``eval`` of one
  runs it once.
* ``function(inputs, outputs, updates)`` prunes the graph once into a
  concrete function fed with the inputs; each call converts the numpy values
  and runs it. ``eval`` of a graph tensor compiles such a function without
  inputs, once per tensor.
* ``get_session()`` returns a small session-like object (TF2 has no
  default session); its ``run(fetches, feed_dict=None)`` evaluates tensors.
* Python operators on symbolic tensors and on this adapter's variables
  (``x * 2``, ``v + x``, ``x[:, 0]``) are made to build their op in the
  module graph when called from eager code (TensorFlow alone would fail
  with "out of scope", or compute a variable's value once); symbolic
  tensors of this adapter's graph compare and hash by identity, as in
  Keras 2 / TF1, so they can key feed dicts. This patches ``tf.Tensor`` /
  ``tf.Variable`` operators process-wide, but only changes calls on this
  adapter's tensors and variables (other ``tf.Variable``s keep TensorFlow's
  eager operators).

Example:
    >>> from keras_backend import backend as K
    >>> x = K.placeholder(shape=(None, 3))
    >>> f = K.function([x], [K.sum(x * 2, axis=1)])
    >>> f([[[1., 2., 3.]]])
    [array([12.], dtype=float32)]
"""
import contextlib
import functools
import importlib.util
import os
import sys
import tempfile

import numpy as np

from .. import checks, engines, shape_rules
from ..common import floatx

if 'TF_CPP_MIN_LOG_LEVEL' not in os.environ:
    # Hide TensorFlow's C++ INFO start-up lines (warnings and errors are kept)
    # unless the user chose a level.
    os.environ['TF_CPP_MIN_LOG_LEVEL'] = '1'

#: what ``import tensorflow`` prints from C++ on every start, whatever TF_CPP_MIN_LOG_LEVEL
#: says (absl logs them before its logging is initialised): parts of those lines
TF_STARTUP_LINES = (
    'All log messages before absl::InitializeLog() is called',
    'oneDNN custom operations are on',
    'cpu_feature_guard.cc', 'To enable the following instructions:',
    'This TensorFlow binary is optimized to use available CPU instructions',
    'Could not find cuda drivers on your machine',
    'Unable to register cuDNN factory', 'Unable to register cuFFT factory',
    'Unable to register cuBLAS factory', 'computation placer already registered',
    'TF-TRT Warning: Could not find TensorRT',
)


@contextlib.contextmanager
def _quiet_tensorflow_startup():
    """Runs the block (``import tensorflow``) with the process's stderr (file descriptor 2)
    going to a temporary file, then writes back to ``sys.stderr`` every line but TensorFlow's
    start-up lines (:data:`TF_STARTUP_LINES`). A user who set ``TF_CPP_MIN_LOG_LEVEL=0`` (all
    of TensorFlow's logging) sees everything as it comes."""
    if os.environ.get('TF_CPP_MIN_LOG_LEVEL', '').strip() == '0':
        yield
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
        captured = tempfile.TemporaryFile()
    except (OSError, ValueError, AttributeError):   # no file descriptor 2 to borrow
        yield
        return
    os.dup2(captured.fileno(), 2)
    try:
        yield
    finally:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(saved, 2)
        os.close(saved)
        captured.seek(0)
        text = captured.read().decode('utf-8', 'replace')
        captured.close()
        kept = [line for line in text.splitlines(True)
                if not any(part in line for part in TF_STARTUP_LINES)]
        if kept:
            sys.stderr.write(''.join(kept))
            sys.stderr.flush()

# ``import tensorflow`` also imports Keras 3 when it is installed, and Keras 3
# refuses a KERAS_BACKEND (or keras.json backend) it does not know, such as
# 'theano', 'cntk' or a custom module of this package. Point it at
# TensorFlow for the duration of the import only.
_KERAS3_BACKENDS = ('tensorflow', 'jax', 'torch', 'numpy', 'openvino')


def _keras2_not_imported_yet():
    """True when ``keras`` is not imported and the one on the path is Keras 2 (no
    ``keras/src``): ``import tensorflow`` (its eager import of ``keras.src.optimizers``,
    which Keras 2 lacks) would import it half, with its own TensorFlow backend, before it
    could load this adapter (``keras_backend.distribute.init()`` imports the adapter before
    ``import keras``)."""
    if 'keras' in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec('keras')
    except (ImportError, ValueError):
        return False
    places = (spec and spec.submodule_search_locations) or []
    return bool(places) and not any(os.path.isdir(os.path.join(p, 'src')) for p in places)


_saved_keras_backend = os.environ.get('KERAS_BACKEND')
_hide_keras2 = _keras2_not_imported_yet()
if _saved_keras_backend not in _KERAS3_BACKENDS:
    os.environ['KERAS_BACKEND'] = 'tensorflow'
if _hide_keras2:
    sys.modules['keras'] = None     # ``import keras`` raises ImportError, which TensorFlow skips
try:
    with _quiet_tensorflow_startup():
        import tensorflow as tf
except ImportError as _e:
    raise engines.engine_import_error('TensorFlow', 'tensorflow', 'tensorflow-cpu', _e)
finally:
    if _hide_keras2 and sys.modules.get('keras', 0) is None:
        del sys.modules['keras']
    if _saved_keras_backend is None:
        os.environ.pop('KERAS_BACKEND', None)
    else:
        os.environ['KERAS_BACKEND'] = _saved_keras_backend

ENGINE = 'tensorflow'
ENGINE_VERSION = tf.__version__

try:
    from tensorflow.python.eager import context as _tf_context
    # The type of eager tensors, named without running an op: importing the adapter
    # leaves TensorFlow's eager context uninitialised, so that a collective runtime
    # (keras_backend.distribute) can still be configured after it.
    from tensorflow.python.framework.ops import EagerTensor as _EagerTensor
except ImportError:  # pragma: no cover - a TensorFlow without the modules: the public path
    _tf_context = None
    _EagerTensor = type(tf.constant(0))


def _eager_from_numpy(arr):
    """An eager tensor holding the numpy array ``arr`` (its dtype): the eager tensor
    constructor that ``tf.convert_to_tensor`` ends in, without its conversion-registry
    lookups (about 50 us of each ``function`` input); ``tf.convert_to_tensor`` where that
    constructor refuses the value."""
    if _tf_context is not None:
        try:
            return _EagerTensor(arr, _tf_context.context().device_name, None)
        except (TypeError, ValueError):
            pass
    return tf.convert_to_tensor(arr)


_PLAIN_TYPES = frozenset([_EagerTensor, float, int, bool, str, type(None), np.ndarray,
                          np.float32, np.float64, np.int32, np.int64])


#: this module: ``checks.feed_specs`` reads ``int_shape`` and ``dtype`` from it
_THIS = sys.modules[__name__]


# ---------------------------------------------------------------------------
# The symbolic graph and the module state
# ---------------------------------------------------------------------------

class _State(object):
    """Module-level state; ``clear_session`` resets it."""
    wrapped = None            # tf.compat.v1.wrap_function holding the graph
    capture_index = None      # see ``_capture_index``
    learning_phase_tensor = None
    eval_cache = {}
    session = None


def _wrapped():
    if _State.wrapped is None:
        with tf.init_scope():
            _State.wrapped = tf.compat.v1.wrap_function(lambda: None, [])
    return _State.wrapped


def _graph():
    """The FuncGraph holding every symbolic tensor of this adapter."""
    return _wrapped().graph


def _is_symbolic(x):
    """True when ``x`` (or a tensor nested in a list/tuple) is a graph tensor."""
    t = type(x)
    if t in _PLAIN_TYPES:
        return False
    if t is list or t is tuple:
        for item in x:
            if _is_symbolic(item):
                return True
        return False
    if isinstance(x, tf.Tensor):
        return not isinstance(x, _EagerTensor)
    if isinstance(x, tf.SparseTensor):
        return _is_symbolic(x.indices)
    if isinstance(x, tf.IndexedSlices):
        return _is_symbolic(x.values)
    return False


def _has_variable(x):
    """True when ``x`` (or an item of a list/tuple ``x``) is a ``tf.Variable``."""
    if isinstance(x, tf.Variable):
        return True
    if type(x) is list or type(x) is tuple:
        for item in x:
            if _has_variable(item):
                return True
    return False


def _needs_graph(args, kwargs):
    """True when an op on ``args``/``kwargs`` must be built in the module graph:
    one of them is a symbolic tensor or a variable (searched through lists and
    tuples)."""
    for a in args:
        if _is_symbolic(a) or _has_variable(a):
            return True
    for a in kwargs.values():
        if _is_symbolic(a) or _has_variable(a):
            return True
    return False


def graph_aware(fn):
    """Run ``fn`` inside the module graph when any argument is symbolic or a
    variable (ops on variables are graph ops, read at every run, as in Keras 2).

    When TensorFlow is already building a graph (inside ``function``,
    ``tf.while_loop`` bodies, a user ``tf.function``), ``fn`` runs as is.
    """
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if tf.executing_eagerly():
            if _needs_graph(args, kwargs):
                with _graph().as_default():
                    return fn(*args, **kwargs)
        return fn(*args, **kwargs)
    return wrapper


def graph_always(fn):
    """Like :func:`graph_aware`, but ``fn`` is built in the module graph whatever its
    arguments: for the higher-order functions and ``rnn``, whose callable may read
    variables (``lambda i: K.sum(v[i])``, a layer's step), which are graph ops; their
    result is a graph tensor, which ``eval`` computes."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if tf.executing_eagerly():
            with _graph().as_default():
                return fn(*args, **kwargs)
        return fn(*args, **kwargs)
    return wrapper


# Python operators (``x * 2``, ``v + x``, ``x[:, 0]``) on symbolic tensors do
# not pass through the API functions. Called from eager code, TensorFlow would
# build them in the eager context and fail ("out of scope"). The wrappers
# below make those operators build their op in the graph of the symbolic
# operand instead, and in the module graph when an operand is a variable made
# by this adapter (``K.variable`` & co., marked by ``_keras_backend_variable``;
# other ``tf.Variable``s keep TensorFlow's eager operators, so TensorFlow code
# sharing the process is not affected). They change nothing when no symbolic
# tensor or adapter variable is involved, or when a graph is already being
# built. Symbolic tensors of this adapter's graph, and the adapter's
# variables, also get Keras 2 / TF1 identity semantics for ``==``, ``!=`` and
# ``hash`` (so they can key feed dicts and sets; TensorFlow 2 compares
# variables elementwise and refuses to hash them); use ``K.equal`` for
# elementwise comparisons.
_OPERATORS = ('__add__', '__radd__', '__sub__', '__rsub__', '__mul__', '__rmul__',
              '__truediv__', '__rtruediv__', '__floordiv__', '__rfloordiv__', '__mod__',
              '__rmod__', '__pow__', '__rpow__', '__matmul__', '__rmatmul__', '__and__',
              '__rand__', '__or__', '__ror__', '__xor__', '__rxor__', '__lt__', '__le__',
              '__gt__', '__ge__', '__neg__', '__abs__', '__invert__', '__getitem__')


def _operand_graph(items):
    """The graph of the first symbolic tensor among ``items`` (slices searched)."""
    for a in items:
        if isinstance(a, tf.Tensor):
            if not isinstance(a, _EagerTensor):
                return a.graph
        elif isinstance(a, tf.Variable):
            continue
        elif isinstance(a, (tuple, list)):
            g = _operand_graph(a)
            if g is not None:
                return g
        elif isinstance(a, slice):
            g = _operand_graph((a.start, a.stop, a.step))
            if g is not None:
                return g
    return None


def _has_our_variable(items):
    """True when one of ``items`` (slices, lists, tuples searched) is a variable
    made by this adapter."""
    for a in items:
        if isinstance(a, tf.Variable):
            if getattr(a, '_keras_backend_variable', False):
                return True
        elif isinstance(a, (tuple, list)):
            if _has_our_variable(a):
                return True
        elif isinstance(a, slice):
            if _has_our_variable((a.start, a.stop, a.step)):
                return True
    return False


#: the operators that broadcast their two operands (checked by ``_wrap_operator``)
_BROADCASTING = frozenset(n for n in _OPERATORS if n not in (
    '__matmul__', '__rmatmul__', '__neg__', '__abs__', '__invert__', '__getitem__'))


def _operand_shape(value):
    """The static shape of an operator's operand (a tensor's, a numpy value's), or None."""
    if isinstance(value, (tf.Tensor, tf.Variable)):
        shape = value.shape
        return None if shape.rank is None else tuple(shape.as_list())
    if isinstance(value, (np.ndarray, np.generic, list, tuple, int, float)):
        return np.shape(value)
    return None


def _wrap_operator(orig, name):
    broadcasting = name in _BROADCASTING

    @functools.wraps(orig)
    def operator(self, *args):
        if broadcasting and args:
            # a numpy operand of a conflicting shape made TensorFlow's operator fall back to
            # numpy's, which raised NotImplementedError on the symbolic tensor
            sa, sb = _operand_shape(self), _operand_shape(args[0])
            if sa is not None and sb is not None and shape_rules.broadcast_conflict(sa, sb):
                op = name.strip('_')
                raise ValueError('%s: operands of shapes %s and %s do not broadcast together'
                                 % (op, sb if op.startswith('r') else sa,
                                    sa if op.startswith('r') else sb))
        if tf.executing_eagerly():
            g = _operand_graph((self,) + args)
            if g is None and _has_our_variable((self,) + args):
                g = _graph()
            if g is not None:
                with g.as_default():
                    return _with_shared_constants(orig, name, self, args)
            return orig(self, *args)
        return _with_shared_constants(orig, name, self, args)
    operator._keras_backend_original = orig
    return operator


#: the operators whose Python number operand reads a shared constant of the tensor's
#: dtype in the module graph (what TensorFlow's operator converts it to)
_NUMBER_OPERATORS = frozenset(n for n in _BROADCASTING if n not in (
    '__and__', '__rand__', '__or__', '__ror__', '__xor__', '__rxor__'))


def _with_shared_constants(orig, name, self, args):
    """``orig(self, *args)`` (an operator of ``tf.Tensor`` / ``tf.Variable``), with the
    constants it would make shared in the module graph (``_shared_constant``): a Python
    number operand of a floating (or, for an int, integer) tensor, and the begin / end /
    strides of one int index of a graph tensor (``K.shape(x)[i]``), which TensorFlow's
    ``__getitem__`` turns into ``strided_slice(x, [i], [i + 1], [1], shrink_axis_mask=1)``."""
    if len(args) == 1:
        other = args[0]
        kind = type(other)
        if name in _NUMBER_OPERATORS and (kind is float or kind is int):
            dtype = self.dtype.base_dtype
            if dtype.is_floating or (kind is int and dtype.is_integer):
                shared = _shared_constant(other, dtype)
                if shared is not None:
                    return orig(self, shared)
        elif name == '__getitem__' and kind is int and isinstance(self, tf.Tensor) and \
                self.shape.rank:
            begin = _shared_constant((other,), tf.int32)
            if begin is not None:
                return tf.strided_slice(self, begin, _shared_constant((other + 1,), tf.int32),
                                        _shared_constant((1,), tf.int32), shrink_axis_mask=1)
    return orig(self, *args)


def _ours(t):
    return not isinstance(t, _EagerTensor) and _State.wrapped is not None and \
        t.graph is _State.wrapped.graph


def _our_variable(v):
    return getattr(v, '_keras_backend_variable', False)


def _wrap_eq(orig, negate, ours=_ours):
    @functools.wraps(orig)
    def eq(self, other):
        if ours(self):
            return (self is not other) if negate else (self is other)
        return orig(self, other)
    eq._keras_backend_original = orig
    return eq


def _wrap_hash(orig, ours=_ours):
    @functools.wraps(orig)
    def tensor_hash(self):
        if ours(self):
            return id(self)
        return orig(self)
    tensor_hash._keras_backend_original = orig
    return tensor_hash


def _patch_operators():
    for cls in (tf.Tensor, tf.Variable):
        for name in _OPERATORS:
            orig = cls.__dict__.get(name)
            if orig is None or hasattr(orig, '_keras_backend_original'):
                continue
            setattr(cls, name, _wrap_operator(orig, name))
    t = tf.Tensor
    if not hasattr(t.__dict__.get('__eq__'), '_keras_backend_original'):
        t.__eq__ = _wrap_eq(t.__dict__['__eq__'], False)
        t.__ne__ = _wrap_eq(t.__dict__['__ne__'], True)
        t.__hash__ = _wrap_hash(t.__dict__['__hash__'])
    v = tf.Variable
    if not hasattr(v.__dict__.get('__eq__'), '_keras_backend_original'):
        v.__eq__ = _wrap_eq(v.__dict__['__eq__'], False, _our_variable)
        v.__ne__ = _wrap_eq(v.__dict__['__ne__'], True, _our_variable)
        v.__hash__ = _wrap_hash(v.__dict__['__hash__'], _our_variable)


_patch_operators()


def _in_our_graph():
    """True while ops are being built in the module graph or a graph nested in it."""
    if tf.executing_eagerly() or _State.wrapped is None:
        return False
    ours = _State.wrapped.graph
    g = tf.compat.v1.get_default_graph()
    while g is not None:
        if g is ours:
            return True
        g = getattr(g, 'outer_graph', None)
    return False

# ---------------------------------------------------------------------------
# Tensor conversion and static shapes
# ---------------------------------------------------------------------------

#: While ``rnn`` builds a loop body: ``[graph enclosing the loop, {id(variable): (variable,
#: read)}]``, innermost last (see ``_loop_read``).
_LOOP_READS = []


def _loop_read(var):
    """The value of ``var`` read once in the graph enclosing the innermost ``rnn`` loop
    being built, or None outside one.

    A step function reads its kernels on every step (``K.dot(h, self.recurrent_kernel)``);
    read inside a ``tf.while_loop`` body each read runs once per step, forward and again in
    the gradient's loop. A loop does not assign the variables its step reads, so one read
    before the loop gives the same values; the loop captures it as a loop invariant and its
    gradient (summed over the steps by the loop's gradient) reaches the variable as before.
    """
    if not _LOOP_READS:
        return None
    outer, reads = _LOOP_READS[-1]
    if tf.compat.v1.get_default_graph() is outer:
        return None
    hit = reads.get(id(var))
    if hit is None:
        with outer.as_default(), tf.control_dependencies(None):
            hit = reads[id(var)] = (var, tf.convert_to_tensor(var))
    return hit[1]


def _to_tensor(x, dtype=None):
    """Convert ``x`` to a tensor (variables are read)."""
    if isinstance(x, tf.SparseTensor):
        return x
    if _LOOP_READS and isinstance(x, tf.Variable):
        read = _loop_read(x)
        if read is not None:
            x = read
    if dtype is not None:
        dtype = tf.as_dtype(dtype)
        if isinstance(x, (tf.Tensor, tf.Variable)):
            return x if x.dtype == dtype else tf.cast(x, dtype)
        return tf.convert_to_tensor(np.asarray(x, dtype.as_numpy_dtype) if
                                    not isinstance(x, (float, int)) else x, dtype=dtype)
    if isinstance(x, (tf.Tensor, tf.Variable)):
        return tf.convert_to_tensor(x)
    if isinstance(x, (float, np.floating)) or (
            isinstance(x, np.ndarray) and x.dtype.kind == 'f'):
        return tf.convert_to_tensor(np.asarray(x, dtype=floatx()))
    return tf.convert_to_tensor(x)


def _normalize_dtype(dtype, name='dtype'):
    """``dtype`` as a dtype name (``floatx()`` when None); ``'string'`` is allowed.

    Raises:
        TypeError: when ``dtype`` names no dtype (the message names ``name``).
    """
    if dtype is None:
        return floatx()
    if isinstance(dtype, tf.DType):
        return 'string' if dtype == tf.string else dtype.base_dtype.name
    if dtype in ('string', 'str', bytes, str) or (
            isinstance(dtype, np.dtype) and dtype.kind in 'SUO'):
        return 'string'
    try:
        out = np.dtype(getattr(dtype, 'name', dtype))
    except (TypeError, ValueError):
        try:
            return tf.as_dtype(dtype).name    # TensorFlow-only names: 'bfloat16'
        except (TypeError, ValueError):
            out = None
    if out is None or out.kind not in 'biufc':
        raise TypeError('%s: cannot interpret %r as a dtype (expected a name such as '
                        "'float32', 'int64', 'bool' or 'string')" % (name, dtype))
    return out.name


def _shape_of(x):
    """``tf.shape(x)`` (int32); for a symbolic ``x`` the same ``Shape`` op each time it
    is asked in the same graph (Keras' layers ask once per axis)."""
    if isinstance(x, _EagerTensor) or not isinstance(x, tf.Tensor):
        return tf.shape(x, out_type='int32')
    known = getattr(x, '_keras_backend_shape', None)
    if known is not None and known.graph is tf.compat.v1.get_default_graph():
        return known
    out = tf.shape(x, out_type='int32')
    try:
        x._keras_backend_shape = out
    except AttributeError:
        pass
    return out


def _keras_meta(t, learning_phase=None):
    """Attach Keras 2's metadata to ``t``: ``_keras_shape`` (its static shape)
    and, when given, ``_uses_learning_phase``. Returns ``t``."""
    if isinstance(t, (tf.Tensor, tf.Variable, tf.SparseTensor)):
        try:
            t._keras_shape = _static_shape(t)
            if learning_phase is not None:
                t._uses_learning_phase = learning_phase
        except AttributeError:
            pass
    return t


def _constant_like(x, value):
    """``value`` as a tensor of ``x``'s dtype (for python scalars in formulas)."""
    if isinstance(value, (tf.Tensor, tf.Variable)):
        return tf.cast(value, x.dtype) if value.dtype != x.dtype else value
    if type(value) in (int, float) or isinstance(value, np.number):
        shared = _shared_constant(value, x.dtype)
        if shared is not None:
            return shared
    return tf.constant(value, dtype=x.dtype)


#: the most constants one module graph shares (see ``_shared_constant``)
SHARED_CONSTANTS = 4096


def _shared_constant(value, dtype, shape=None):
    """One ``Const`` op per (dtype, value, shape) in the module graph, shared by every op
    built there that reads that number (a Python scalar, or a short tuple of ints; with
    ``shape``, the scalar filling that shape), or None where it is not shared: outside the
    module graph (eager code, a ``tf.function``, a loop body of its own graph), inside a
    TF1 control-flow context and inside ``control_dependencies`` (where TensorFlow gives a
    new constant those control inputs).

    Keras 2's layers bring the same few numbers to every layer (a BatchNormalization's
    momentum, epsilon and 1.0, the begin / end / strides of ``K.shape(x)[i]``): 28 of the
    77 ops of each BatchNormalization were constants, each costing TensorFlow's op
    creation (a tensor proto) in the build. A constant has no inputs, so sharing it
    changes no value and no order of execution."""
    if _State.wrapped is None:
        return None
    graph = tf.compat.v1.get_default_graph()
    if graph is not _State.wrapped.graph or graph._get_control_flow_context() is not None \
            or graph._control_dependencies_stack:
        # (inside ``control_dependencies`` a constant waits for those ops, as TF1's did)
        return None
    dtype = tf.as_dtype(dtype).base_dtype
    key = (dtype, type(value), value, shape)
    try:
        cache = graph._keras_backend_constants
    except AttributeError:
        cache = graph._keras_backend_constants = {}
    try:
        found = cache.get(key)
    except TypeError:       # an unhashable value
        return None
    if found is None:
        if len(cache) >= SHARED_CONSTANTS:
            return None
        with graph.name_scope(None):
            found = tf.constant(value, dtype=dtype, shape=shape, name='shared_constant')
        cache[key] = found
    return found


def _static_shape(x):
    """Tuple of ints / None, or None for unknown rank."""
    shape = x.shape
    if shape.rank is None:
        return None
    return tuple(shape.as_list())

def _set_shape(t, shape):
    """Attach a static shape in graph mode (eager tensors know theirs)."""
    if not isinstance(t, _EagerTensor) and shape is not None:
        t.set_shape(shape)
    return t


# ---------------------------------------------------------------------------
# What a tensor is: the API's is_tensor, int_shape and dtype
# ---------------------------------------------------------------------------
# (here, below the ops, because compiled functions check their inputs and outputs with them;
# the ``tensors`` section of the ops binds them under their API names)

def is_tensor(x):
    """True for ``tf.Tensor`` (eager or symbolic), ``tf.Variable``, ``tf.SparseTensor``,
    ``tf.IndexedSlices`` and anything ``tf.is_tensor`` accepts."""
    return isinstance(x, (tf.Tensor, tf.Variable, tf.SparseTensor, tf.IndexedSlices)) \
        or tf.is_tensor(x)


def int_shape(x):
    """Reads the static ``tf.TensorShape``."""
    if hasattr(x, '_keras_shape'):
        return x._keras_shape
    return _engine_int_shape(x)


def _engine_known_value(x):
    """The value of ``x`` where TensorFlow already holds it (an eager tensor: what an op on
    constants gave), else None; the argument checks read it (indices in range...)."""
    if isinstance(x, _EagerTensor):
        try:
            return x.numpy()
        except Exception:
            return None
    return None


def _engine_int_shape(x):
    """``int_shape`` as TensorFlow knows it (ignoring ``_keras_shape``); the checks
    read this one (a shape Keras recorded is not checked by the engine, and Keras
    2.3.1 records some wrongly, e.g. ConvLSTM2D's initial state in channels_first)."""
    if isinstance(x, np.ndarray):
        return x.shape
    shp = getattr(x, 'shape', None)
    if shp is None:
        raise ValueError('int_shape: expected a tensor, variable or numpy array, got %r'
                         % (x,))
    if isinstance(shp, tuple):
        return shp
    try:
        shp = tf.TensorShape(shp)
    except (TypeError, ValueError):
        raise ValueError('int_shape: cannot read the shape of %r' % (x,))
    if shp.rank is None:
        return None
    return tuple(shp.as_list())


def dtype(x):
    dt = getattr(x, 'dtype', None)
    if dt is None:
        raise ValueError('dtype: expected a tensor, variable or numpy array, got %r' % (x,))
    if isinstance(dt, tf.DType):
        return dt.base_dtype.name
    return np.dtype(dt).name


# ---------------------------------------------------------------------------
# Graph walking, updates and compiled functions
# ---------------------------------------------------------------------------

def _capture_index():
    """``{id(placeholder op): external value}`` for the captures of the module
    graph (variables, eager constants), kept up to date incrementally: the
    graph's capture list only grows while it is in use."""
    g = _graph()
    caps = g.captures
    cached = _State.capture_index
    if cached is not None and cached[0] is g and cached[1] is caps:
        return cached[2]
    start, index = 0, {}
    if cached is not None and cached[0] is g:
        old = cached[1]
        if len(caps) >= len(old) and (not old or caps[len(old) - 1][1] is old[-1][1]):
            start, index = len(old), cached[2]
    for external, internal in caps[start:]:
        index[id(internal.op)] = external
    _State.capture_index = (g, caps, index)
    return index


def _flat_fed_ops(fed):
    ops = set()
    for t in fed:
        if isinstance(t, tf.SparseTensor):
            ops.update(id(c.op) for c in (t.indices, t.values, t.dense_shape))
        elif hasattr(t, 'op'):
            ops.add(id(t.op))
    return ops


def _ancestors(roots, fed):
    """Walk the module graph up from ``roots`` (tensors / operations).

    Returns ``(ops, missing, used)``: every op the roots need (ancestors
    through data and control inputs), the Placeholder ops among them that
    are neither in ``fed`` nor captures, and the captured placeholder ops
    (variables, eager constants) they read. Cost: the size of that part of
    the graph, whatever the size of the whole graph.
    """
    index = _capture_index()
    fed_ops = _flat_fed_ops(fed)
    seen = set()
    ops, missing, used = [], [], []
    stack = [r if isinstance(r, tf.Operation) else r.op for r in roots
             if isinstance(r, tf.Operation) or hasattr(r, 'op')]
    stop_at_feeds = True
    while stack:
        op = stack.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        ops.append(op)
        if op.type == 'Placeholder':
            if id(op) in index:
                used.append(op)
            elif id(op) not in fed_ops and stop_at_feeds:
                missing.append(op)
            continue
        if id(op) in fed_ops:
            # A fed intermediate tensor: its ancestors are kept (the import
            # needs them) but the placeholders behind it need no feed.
            stop_at_feeds = False
        stack.extend(i.op for i in op.inputs)
        stack.extend(op.control_inputs)
    if not stop_at_feeds:
        missing = _placeholders_needed(roots, fed)
    return ops, missing, used


def _placeholders_needed(tensors, fed):
    """The Placeholder ops ``tensors`` depend on that are neither fed nor captures."""
    fed_ops = _flat_fed_ops(fed)
    index = _capture_index()
    seen = set()
    stack = [t if isinstance(t, tf.Operation) else t.op for t in tensors
             if isinstance(t, tf.Operation) or hasattr(t, 'op')]
    missing = []
    while stack:
        op = stack.pop()
        if id(op) in seen or id(op) in fed_ops:
            continue
        seen.add(id(op))
        if op.type == 'Placeholder' and id(op) not in index:
            missing.append(op)
            continue
        stack.extend(i.op for i in op.inputs)
        stack.extend(op.control_inputs)
    return missing


def _flat_components(t):
    """Graph tensors to fetch for ``t`` (sparse tensors are densified)."""
    if isinstance(t, tf.SparseTensor):
        return tf.sparse.to_dense(t)
    if isinstance(t, tf.IndexedSlices):
        return tf.convert_to_tensor(t)
    return t


class _Update(object):
    """An assignment to a variable, for ``function(updates=...)``.

    Built by ``update``, ``update_add``, ``update_sub`` and
    ``moving_average_update``. As Keras 2's assign ops it does nothing when
    made: a ``function`` listing it among its ``updates`` runs it once per
    call (``K.eval`` of it runs it once and returns the new value).
    """

    def __init__(self, variable, value, mode):
        self.variable = variable
        self.value = value
        self.mode = mode
        self._shared_op = None     # (graph, op) made by ``shared_op``
        self._eval_fn = None       # compiled by ``K.eval`` of the update

    def shared_op(self):
        """The assign op of this update in the current graph, made once.

        ``control_dependencies([update])`` uses it (Keras' metrics read their
        result after their update this way); ``function(updates=[update])``
        then runs that same op instead of a second assignment, as a TF1
        graph runs an op once per call.
        """
        g = tf.compat.v1.get_default_graph()
        if self._shared_op is None or self._shared_op[0] is not g:
            with tf.control_dependencies(None):
                self._shared_op = (g, self._make_op())
        return self._shared_op[1]

    def build(self):
        """The assign op in the current graph: the shared one when
        ``shared_op`` made it in this graph, else a new one."""
        if self._shared_op is not None and \
                self._shared_op[0] is tf.compat.v1.get_default_graph():
            return self._shared_op[1]
        return self._make_op()

    def _make_op(self):
        v = self.variable
        value = _to_tensor(self.value, v.dtype) if not isinstance(self.value, tf.Tensor) \
            else tf.cast(self.value, v.dtype)
        if self.mode == 'assign':
            return v.assign(value, read_value=False)
        if self.mode == 'add':
            return v.assign_add(value, read_value=False)
        return v.assign_sub(value, read_value=False)

    def run(self):
        """Apply the update once (needs no placeholder) and return the
        variable's new value as a numpy array."""
        if self._eval_fn is None or self._eval_fn[0] is not _graph():
            with _graph().as_default():
                op = self.build()
                with tf.control_dependencies([op]):
                    new_value = tf.identity(self.variable.read_value())
            missing = _placeholders_needed([new_value], [])
            if missing:
                raise ValueError('eval: the update of %s depends on placeholder(s) %s; '
                                 'run it with K.function([...], [...], updates=[...])'
                                 % (self.variable.name,
                                    ', '.join(repr(m.name) for m in missing)))
            self._eval_fn = (_graph(), _Function([], new_value))
        return self._eval_fn[1]([])

    def numpy(self):
        return self.run()

    def __repr__(self):
        return '<update %s of %s>' % (self.mode, getattr(self.variable, 'name', '?'))


def _update_ops(updates):
    """Turn ``updates`` into graph ops (called inside the graph).

    Two updates of one variable (a layer shared between two inputs updates its state
    twice) run in the order given, so an assignment given last leaves its value, as
    Keras' Theano backend keeps the last one.
    """
    ops = []
    last_op = {}    # id(variable) -> the op of its latest update so far
    # Every new value is computed before any variable is written: an update that reads a
    # variable another update writes (Adam's bias correction reads ``iterations`` while
    # ``iterations`` is incremented) sees its old value on every run, as a Theano, CNTK or
    # JAX function computes its updates from the old values. Without this the executor
    # runs the read and the write in either order, and training is not repeatable. One
    # barrier op reads every value and every write waits for the barrier: n data edges and
    # n control edges, where each write waiting for each value made n * n (1.8 million for
    # DenseNet121's 1,335 updates, which TensorFlow then took a minute to optimise). The
    # barrier takes the values as inputs (an IdentityN), not as control inputs: a fed value
    # (a placeholder) is then replaced by its feed when the function is compiled.
    values = []
    for u in updates:
        value = u.value if isinstance(u, _Update) else \
            (u[1] if isinstance(u, (list, tuple)) and len(u) == 2 else None)
        if isinstance(value, tf.Tensor) and _is_symbolic(value):
            values.append(value)
    barrier = [tf.raw_ops.IdentityN(input=values, name='updates_read')[0].op] if values else []
    with tf.control_dependencies(barrier):

        def chained(upd):
            prev = last_op.get(id(upd.variable))
            if prev is None:
                op = upd.build()
            else:
                with tf.control_dependencies([prev]):
                    op = upd._make_op()
            last_op[id(upd.variable)] = op
            return op

        for u in updates:
            if isinstance(u, _Update):
                ops.append(chained(u))
            elif isinstance(u, (list, tuple)) and len(u) == 2:
                v, new = u
                if not isinstance(v, tf.Variable):
                    raise ValueError('updates: the first item of %r must be a variable' % (u,))
                ops.append(chained(_Update(v, new, 'assign')))
            elif isinstance(u, tf.Operation):
                ops.append(u)
            elif isinstance(u, tf.Tensor) and _is_symbolic(u):
                ops.append(u.op)
            else:
                raise ValueError('updates: expected K.update results or (variable, value) '
                                 'tuples, got %r' % (u,))
        return ops


def _feed_converter(t):
    """A function turning one user input value into the flat tensors feeding ``t``."""
    if isinstance(t, tf.SparseTensor):
        vdtype = t.values.dtype

        def convert_sparse(value):
            if isinstance(value, tf.SparseTensor):
                idx, vals, shp = value.indices, value.values, value.dense_shape
            elif hasattr(value, 'tocoo'):
                coo = value.tocoo()
                idx = np.stack([coo.row, coo.col], axis=1).astype(np.int64)
                vals, shp = coo.data, coo.shape
            elif isinstance(value, (tuple, list)) and len(value) == 3:
                idx, vals, shp = value
            else:
                dense = np.asarray(value)
                idx = np.argwhere(dense != 0).astype(np.int64)
                vals, shp = dense[dense != 0], dense.shape
            return [tf.convert_to_tensor(np.asarray(idx, np.int64).reshape(-1, len(shp))),
                    tf.convert_to_tensor(np.asarray(vals, vdtype.as_numpy_dtype)),
                    tf.convert_to_tensor(np.asarray(shp, np.int64))]
        return convert_sparse, 3
    tdtype = t.dtype
    np_dtype = tdtype.as_numpy_dtype
    static = t.shape.as_list() if t.shape.rank is not None else None

    def convert(value):
        if isinstance(value, _EagerTensor) and value.dtype == tdtype:
            arr = value
            shp = tuple(value.shape)
        else:
            arr = np.asarray(value, dtype=np_dtype)
            shp = arr.shape
        if static is not None:
            if len(shp) != len(static) or any(
                    s is not None and s != d for s, d in zip(static, shp)):
                raise ValueError('function: input %r expects shape %s, got a value of shape %s'
                                 % (t.name, tuple(static), tuple(shp)))
        return [arr if isinstance(arr, _EagerTensor) else _eager_from_numpy(arr)]
    return convert, 1


def _function_names(attrs):
    """Names of the functions that a NodeDef's attributes call (loop bodies,
    cond branches, their gradients)."""
    names = []
    for value in attrs.values():
        if value.HasField('func'):
            names.append(value.func.name)
        elif value.HasField('list'):
            names.extend(f.name for f in value.list.func)
    return names


def _trim_colocation(node, keep):
    """Colocation hints of NodeDef ``node`` may name nodes left out (the forward op
    of a gradient); keep only those naming a node in ``keep``."""
    if '_class' not in node.attr:
        return
    locs = [v for v in node.attr['_class'].list.s
            if v.decode('utf-8', 'replace')[len('loc:@'):] in keep]
    if locs:
        del node.attr['_class'].list.s[:]
        node.attr['_class'].list.s.extend(locs)
    else:
        del node.attr['_class']


def _subgraph_def(ops):
    """A GraphDef of ``ops`` (an ancestor-closed set of module-graph ops) with
    the functions they call."""
    g = _graph()
    out = tf.compat.v1.GraphDef()
    out.versions.CopyFrom(g.graph_def_versions)
    keep = set(op.name for op in ops)
    for op in ops:
        node = out.node.add()
        node.CopyFrom(op.node_def)
        _trim_colocation(node, keep)
    # pylint: disable=protected-access
    found = _called_functions(out.node, lambda name: g._get_function(name).definition)
    out.library.function.extend(found.values())
    return out


def _called_functions(nodes, definition):
    """``{name: FunctionDef}`` of the functions that NodeDefs ``nodes`` call, directly or
    through the functions they call; ``definition(name)`` gives one (None: not there)."""
    found = {}
    wanted = [name for node in nodes for name in _function_names(node.attr)]
    while wanted:
        name = wanted.pop()
        if name in found:
            continue
        fdef = definition(name)
        if fdef is None:
            continue
        found[name] = fdef
        for node in fdef.node_def:
            wanted.extend(_function_names(node.attr))
    return found


def _fix_phase(sub, phase, value):
    """Specialise GraphDef ``sub`` for one value of the learning phase: the node
    named ``phase`` (the ``keras_learning_phase`` placeholder) becomes a constant
    ``value``, and each ``If`` / ``StatelessIf`` decided by it directly (Keras'
    ``in_train_phase`` conds and their gradients) becomes a call of the branch that
    value takes (``StatefulPartitionedCall`` / ``PartitionedCall``, the same
    outputs), which TensorFlow inlines. Only the branch that would have run is
    left: the values are those of the cond, and TensorFlow's graph rewrites (the
    fused batch norm with its activation, for one) now see through it."""
    names = (phase, phase + ':0')
    calls = []
    picked = []
    for node in sub.node:
        if node.op == 'Select' and len(node.input) >= 3 and node.input[0] in names:
            # in_train_phase's select (and its gradients'): the input the value picks
            chosen = node.input[1 if value else 2]
            control = [i for i in node.input[3:] if i.startswith('^')]
            node.op = 'Identity'
            del node.input[:]
            node.input.extend([chosen] + control)
            for key in list(node.attr.keys()):
                if key != 'T':
                    del node.attr[key]
            picked.append(node)
        elif node.name == phase:
            node.op = 'Const'
            del node.input[:]
            for key in list(node.attr.keys()):
                if key != 'dtype':
                    del node.attr[key]
            node.attr['value'].tensor.CopyFrom(tf.make_tensor_proto(bool(value), tf.bool))
        elif node.op in ('If', 'StatelessIf') and node.input and node.input[0] in names:
            branch = node.attr['then_branch' if value else 'else_branch'].func.name
            # copies: the attribute map is cleared below
            kept = [(key, type(node.attr[key])()) for key in ('Tin', 'Tout')]
            for key, val in kept:
                val.CopyFrom(node.attr[key])
            node.op = 'StatefulPartitionedCall' if node.op == 'If' else 'PartitionedCall'
            del node.input[0]
            node.attr.clear()
            for key, val in kept:
                node.attr[key].CopyFrom(val)
            node.attr['f'].func.name = branch
            for key in ('config', 'config_proto', 'executor_type'):
                node.attr[key].s = b''
            calls.append(node)
    _drop_zero_terms(sub, calls, picked)


def _prune_unreached(sub, roots):
    """Drop from GraphDef ``sub`` the nodes that no node named in ``roots`` needs
    (through data and control inputs), and the library functions no kept node calls;
    placeholders stay (the import maps them). After ``_fix_phase`` this is the part
    of the graph that the phase leaves out: the other branch of each select, its
    random ops included, never runs (as with a cond)."""
    nodes = dict((n.name, n) for n in sub.node)
    seen = set()
    stack = [r for r in roots if r in nodes]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        for i in nodes[name].input:
            i = i[1:] if i.startswith('^') else i
            stack.append(i.split(':')[0])
    keep = [n for n in sub.node if n.name in seen or n.op == 'Placeholder']
    if len(keep) == len(sub.node):
        return
    kept = tf.compat.v1.GraphDef()
    kept.node.extend(keep)
    names = set(n.name for n in kept.node)
    for node in kept.node:
        _trim_colocation(node, names)
    library = dict((f.signature.name, f) for f in sub.library.function)
    called = _called_functions(kept.node, library.get)
    kept.library.function.extend(f for f in sub.library.function
                                 if f.signature.name in called)
    kept.library.gradient.extend(g for g in sub.library.gradient
                                 if g.function_name in called)
    del sub.node[:]
    sub.node.extend(kept.node)
    sub.library.CopyFrom(kept.library)


def _zero_results(fdef):
    """Indices of the results of function ``fdef`` that are zeros by construction
    (``_is_zeros``)."""
    nodes = dict((n.name, n) for n in fdef.node_def)
    found = []
    for k, arg in enumerate(fdef.signature.output_arg):
        node = nodes.get(fdef.ret[arg.name].split(':')[0])
        if node is not None and _is_zeros(node, nodes):
            found.append(k)
    return found


#: Gradient ops whose every output is zero when one of the data inputs at these
#: positions is (backpropagation is linear in the incoming gradient): how a zero
#: gradient term, the untaken side of in_train_phase's select, is followed to the sum
#: that would add it.
_ZERO_IN_ZERO_OUT = {
    'Identity': (0,), 'Snapshot': (0,), 'Neg': (0,), 'Reshape': (0,), 'Transpose': (0,),
    'Squeeze': (0,), 'ExpandDims': (0,), 'Tile': (0,), 'BroadcastTo': (0,), 'Sum': (0,),
    'Mean': (0,), 'Cast': (0,), 'Pad': (0,), 'Slice': (0,), 'StridedSlice': (0,),
    'StridedSliceGrad': (4,), 'Mul': (0, 1), 'RealDiv': (0,), 'DivNoNan': (0,),
    'MatMul': (0, 1), 'BatchMatMulV2': (0, 1), 'BatchMatMulV3': (0, 1), 'Square': (0,),
    'Conv2DBackpropInput': (2,), 'Conv2DBackpropFilter': (2,),
    'Conv3DBackpropInputV2': (2,), 'Conv3DBackpropFilterV2': (2,),
    'DepthwiseConv2dNativeBackpropInput': (2,), 'DepthwiseConv2dNativeBackpropFilter': (2,),
    'BiasAddGrad': (0,), 'ReluGrad': (0,), 'Relu6Grad': (0,), 'EluGrad': (0,),
    'SeluGrad': (0,), 'LeakyReluGrad': (0,), 'SoftplusGrad': (0,), 'SoftsignGrad': (0,),
    'SigmoidGrad': (1,), 'TanhGrad': (1,), 'SqrtGrad': (1,), 'RsqrtGrad': (1,),
    'FusedBatchNormGradV3': (0,), 'MaxPoolGrad': (2,), 'AvgPoolGrad': (1,),
    'MaxPool3DGrad': (2,), 'AvgPool3DGrad': (1,), 'UnsortedSegmentSum': (0,),
}
#: Ops whose output is zero when all the inputs at these positions are (None: every
#: data input): selects between two zeros (dropout's mask), sums and joins of zeros.
_ZERO_IF_ALL_ZERO = {'Select': (1, 2), 'SelectV2': (1, 2), 'AddN': None, 'Pack': None}


def _is_zeros(node, nodes):
    """True when NodeDef ``node`` makes zeros whatever its inputs' values: ``ZerosLike``,
    an all-zero ``Const``, a ``Fill`` of a zero constant (``tf.zeros_like`` of a fully
    known shape)."""
    if node.op == 'ZerosLike':
        return True
    if node.op == 'Const':
        return not np.any(tf.make_ndarray(node.attr['value'].tensor))
    if node.op == 'Fill' and len(node.input) > 1:
        value = nodes.get(node.input[1].split(':')[0])
        return value is not None and value.op == 'Const' and not np.any(
            tf.make_ndarray(value.attr['value'].tensor))
    return False


def _drop_zero_terms(sub, calls, picked=()):
    """In GraphDef ``sub``, leave out of each gradient sum (``AddN``) the terms that
    are zeros by construction: results of the branch calls ``calls`` that
    ``_zero_results`` finds (the gradient of a cond's branch with respect to what
    only the other branch reads), and the selects ``picked`` (now ``Identity``) that
    took a zero (the gradient of a select with respect to the input the phase does
    not take), followed through the gradient ops of ``_ZERO_IN_ZERO_OUT`` (the
    backpropagation through the side not taken). A sum left with one term becomes an
    ``Identity``; a sum of zeros only is a zero in its turn. The values of a cond,
    which never differentiates its other branch: no pass over the activations for
    each zero, and no ``0 * inf`` of that side's derivatives."""
    library = dict((f.signature.name, f) for f in sub.library.function)
    nodes = dict((n.name, n) for n in sub.node)
    zero = set()        # (node name, output index), or (node name, None): every output
    todo = []

    def mark(name, k=None):
        if (name, k) not in zero and (name, None) not in zero:
            zero.add((name, k))
            todo.append((name, k))

    def is_zero(tensor):
        name, _, k = tensor.partition(':')
        if (name, None) in zero or (name, int(k or 0)) in zero:
            return True
        return name in nodes and _is_zeros(nodes[name], nodes)

    for node in calls:
        for k in _zero_results(library[node.attr['f'].func.name]):
            mark(node.name, k)
    for node in picked:
        if is_zero(node.input[0]):
            mark(node.name, 0)
    if not todo:
        return
    consumers = {}      # node name -> [(consumer, input position, output index)]
    for node in sub.node:
        for i, tensor in enumerate(node.input):
            if not tensor.startswith('^'):
                name, _, k = tensor.partition(':')
                consumers.setdefault(name, []).append((node, i, int(k or 0)))
    while todo:
        name, k = todo.pop()
        for node, i, out in consumers.get(name, ()):
            if k is not None and out != k:
                continue
            if node.op == 'IdentityN':
                mark(node.name, i)
            elif i in _ZERO_IN_ZERO_OUT.get(node.op, ()):
                mark(node.name)
            elif node.op in _ZERO_IF_ALL_ZERO:
                data = [j for j in node.input if not j.startswith('^')]
                where = _ZERO_IF_ALL_ZERO[node.op]
                if where is not None:
                    data = [data[p] for p in where]
                if all(is_zero(j) for j in data):
                    mark(node.name, 0)
    for node in sub.node:
        if node.op != 'AddN':
            continue
        data = [i for i in node.input if not i.startswith('^')]
        keep = [i for i in data if not is_zero(i)]
        if not keep or len(keep) == len(data):
            continue
        control = [i for i in node.input if i.startswith('^')]
        del node.input[:]
        node.input.extend(keep + control)
        if len(keep) == 1:
            node.op = 'Identity'
            del node.attr['N']
        else:
            node.attr['N'].i = len(keep)


def _compile(flat_feeds, outs, up_ops, ops, used, phase=None):
    """Compile the part ``ops`` of the module graph into a concrete function
    from ``flat_feeds`` to ``outs`` + ``up_ops``.

    ``WrappedFunction.prune`` of the module graph would make every eager
    value ever captured by the graph (variables, eager constants) an
    argument of the pruned function, so compiles and calls would slow down
    as the graph grows. Only the needed ops (``ops``, found by
    ``_ancestors``, at a cost that does not grow with the rest of the graph)
    are therefore imported in a fresh wrapped function taking the feeds as
    arguments, whose only captures are the values they use (``used``) and
    whose results wait for the updates; if that fails for any reason the
    plain prune is used.

    ``phase``, when given, is ``(learning phase tensor, value)``: the function is
    specialised for that value (``_fix_phase``) and does not take the phase among
    its arguments. Returns ``(function, whether phase was applied)``; the plain
    prune takes every feed.
    """
    try:
        index = _capture_index()
        out_names = [t.name for t in outs]
        up_names = [op.name for op in up_ops]
        sub = _subgraph_def(ops)
        args = flat_feeds
        if phase is not None:
            args = [t for t in flat_feeds if t is not phase[0]]
            _fix_phase(sub, phase[0].op.name, phase[1])
            _prune_unreached(sub, [n.split(':')[0] for n in out_names] + up_names)
        feed_names = [t.name for t in args]
        captured = [(op.name + ':0', index[id(op)]) for op in used]

        def _import(*args):
            inner = tf.compat.v1.get_default_graph()
            input_map = dict((name, inner.capture(value)) for name, value in captured)
            input_map.update(zip(feed_names, args))
            found = tf.graph_util.import_graph_def(
                sub, input_map=input_map, return_elements=out_names + up_names, name='')
            results, updates = found[:len(out_names)], found[len(out_names):]
            if not updates:
                return results
            # The updates run after the outputs were computed (they were
            # built so); the returned values wait for them.
            with tf.control_dependencies(updates):
                return [tf.identity(r) for r in results] or [tf.constant(0)]

        with tf.init_scope():
            return tf.compat.v1.wrap_function(
                _import, [tf.TensorSpec(t.shape, t.dtype) for t in args]), \
                phase is not None
    except Exception:  # noqa: BLE001 - any failure: the always-valid plain prune
        return _wrapped().prune(feeds=flat_feeds, fetches=list(outs) + list(up_ops)), False


def _stall_hook(ops):
    """``keras_backend.distribute.stall.entered`` when ``ops`` hold a collective
    (``CollectiveReduceV2``, made by ``keras_backend.distribute``), else None."""
    if not any(op.type.startswith('Collective') for op in ops):
        return None
    from ..distribute import stall
    return stall.entered


def _direct_caller(fn):
    """``flat inputs -> flat output tensors`` for the compiled function ``fn`` (a
    ``ConcreteFunction``), or None where this TensorFlow lacks what it uses.

    It hands the call straight to the eager runtime (``TFE_Py_Execute`` of the
    function's name, its captured variables appended), as ``ConcreteFunction._call_flat``
    ends up doing after its Python layers (argument binding, gradient-tape bookkeeping,
    output packing): 0.046 -> 0.026 ms a call here, which every Keras training step and
    every MPI allreduce pays. A K.function's outputs are turned into numpy values and
    never recorded on a tape, so those layers have nothing to do. A failed op raises
    TensorFlow's ``OpError`` as the plain call does."""
    try:
        from tensorflow.python import pywrap_tfe
        from tensorflow.python.eager import context as tf_context
        from tensorflow.python.eager import core as tf_core
        atomic = fn._inference_function
        name = atomic.name
        name = name.decode('utf-8') if isinstance(name, bytes) else str(name)
        n_out = len(atomic.function_type.flat_outputs)
        n_in = len(atomic.cached_definition.signature.input_arg)
        captured = list(fn.captured_inputs)
        execute = pywrap_tfe.TFE_Py_Execute
        not_ok = tf_core._NotOkStatusException
        to_error = tf_core._status_to_exception
        ctx = tf_context.context()
    except Exception:  # noqa: BLE001 - another TensorFlow: the plain call
        return None
    state = [None, None]       # the call options, and their attributes as TFE takes them

    def call(flat):
        if len(flat) + len(captured) != n_in:
            raise TypeError('%d inputs for a function of %d' % (len(flat), n_in))
        current = ctx.function_call_options
        if current is not state[0]:        # first call, or the options changed: re-read
            state[0] = current
            state[1] = tuple(a for item in current.as_attrs().items() for a in item)
        try:
            return execute(ctx._handle, ctx.device_name, name, list(flat) + captured,
                           state[1], n_out)
        except not_ok as e:
            raise to_error(e) from None
    return call


class _Function(object):
    """A compiled function; see ``function``."""

    def __init__(self, inputs, outputs, updates=None, name=None, fetches=None,
                 feed_dict=None):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError('function: inputs must be a list or tuple of placeholders, got %r'
                             % (inputs,))
        self.name = name
        self._single = not isinstance(outputs, (list, tuple))
        outputs = [outputs] if self._single else list(outputs)
        self.inputs = list(inputs)
        self.outputs = outputs
        updates = list(updates or [])
        extra_feeds = dict(feed_dict or {})
        g = _graph()
        feeds, converters, skip = [], [], []
        for i, t in enumerate(self.inputs):
            if isinstance(t, (int, np.integer)) and not isinstance(t, bool):
                skip.append(i)   # a learning phase fixed by set_learning_phase
                converters.append(None)
                continue
            if not _is_symbolic(t):
                raise ValueError('function: input %d must be a placeholder (symbolic tensor), '
                                 'got %r' % (i, t))
            conv, _ = _feed_converter(t)
            converters.append(conv)
            feeds.append(t)
        self._extra = []
        for t, value in extra_feeds.items():
            if not _is_symbolic(t):
                raise ValueError('feed_dict: keys must be placeholders, got %r' % (t,))
            conv, _ = _feed_converter(t)
            feeds.append(t)
            self._extra.extend(conv(value))
        self._converters = converters
        self._skip = frozenset(skip)
        self._feed_specs = checks.feed_specs(_THIS, self.inputs)
        self.api_name = 'function'
        with g.as_default():
            outs = []
            for o in outputs:
                if isinstance(o, _Update):
                    o = o.variable
                if isinstance(o, (tf.SparseTensor, tf.IndexedSlices)):
                    o = _flat_components(o)
                if isinstance(o, tf.Variable) or not _is_symbolic(o):
                    if not is_tensor(o):
                        raise ValueError('function: outputs must be tensors, got %r' % (o,))
                    o = tf.identity(o)
                outs.append(o)
            with tf.control_dependencies(outs):
                up_ops = _update_ops(updates)
                for f in (fetches or []):
                    if isinstance(f, tf.Tensor) and _is_symbolic(f):
                        up_ops.append(f.op)
                    elif isinstance(f, tf.Operation):
                        up_ops.append(f)
        flat_feeds = []
        for t in feeds:
            if isinstance(t, tf.SparseTensor):
                flat_feeds.extend([t.indices, t.values, t.dense_shape])
            else:
                flat_feeds.append(t)
        ops, missing, used = _ancestors(list(outs) + list(up_ops) + flat_feeds, feeds)
        if missing:
            raise ValueError('function: the outputs depend on placeholder(s) %s that are not '
                             'among the inputs' % ', '.join(repr(op.name) for op in missing))
        self._n_out = len(outs)
        # a function holding keras_backend.distribute's collectives tells its stall check
        # at each call (the graph's collectives run inside the compiled call)
        self._stall = _stall_hook(ops)
        # Fed the symbolic learning phase (Keras' train / test functions, which feed 1 or
        # 0 at every call), the function is compiled once per value it is given, with
        # only the conds' chosen branches (_fix_phase); else once, now.
        self._phase_at = self._phase_flat = None
        phase = _State.learning_phase_tensor
        if phase is not None and any(op is phase.op for op in ops):
            position = 0
            for i, t in enumerate(self.inputs):
                if i in self._skip:
                    continue
                if t is phase:
                    self._phase_at, self._phase_flat = i, position
                position += 3 if isinstance(t, tf.SparseTensor) else 1
        # Needing the phase without being fed it, the function only ever sees its
        # default (False: test), and is specialised for it.
        self._default_phase = None
        if (self._phase_at is None and phase is not None and any(op is phase.op for op in ops)
                and not any(t is phase for t in flat_feeds)):
            self._default_phase = (phase, False)
        self._compile_args = (flat_feeds, outs, up_ops, ops, used)
        self._variants = {}    # phase value (None: not fed) -> [fn, call, fixed]
        if self._phase_at is None:
            self._variant(None)

    def _variant(self, value):
        """The compiled function for learning phase ``value`` (None: the phase is
        not an input, or, fed with a value other than 0 / 1, an argument): ``[function,
        its caller (flat inputs -> flat outputs) or None, specialised]``."""
        found = self._variants.get(value)
        if found is None:
            if value is None:
                fn, _ = _compile(*self._compile_args, phase=self._default_phase)
                fixed = False      # no argument to leave out
            else:
                fn, fixed = _compile(*self._compile_args,
                                     phase=(self.inputs[self._phase_at], value))
            found = self._variants[value] = [fn, _direct_caller(fn), fixed]
        return found

    def _run(self, flat, value=None):
        found = self._variant(value)
        fn = found[0]
        if found[2]:
            flat = flat[:self._phase_flat] + flat[self._phase_flat + 1:]
        if found[1] is not None:
            try:
                return found[1](flat)
            except (TypeError, AttributeError):
                found[1] = None
        return fn(*flat)

    def __call__(self, inputs):
        # run eagerly also when called where the symbolic graph is the default one (inside
        # ``name_scope``: Keras makes and evaluates weights there)
        with tf.init_scope():
            return self._call_eagerly(inputs)

    def _call_eagerly(self, inputs):
        if isinstance(inputs, dict):
            inputs = [inputs[t] for t in self.inputs]
        checks.check_feeds(self._feed_specs, inputs)
        flat = []
        for i, (conv, value) in enumerate(zip(self._converters, inputs)):
            if conv is None:
                continue
            flat.extend(conv(value))
        if self._extra:
            flat.extend(self._extra)
        if self._stall is not None:
            self._stall('allreduce')
        value = None
        if self._phase_at is not None:
            value = bool(np.asarray(inputs[self._phase_at]))
        try:
            results = self._run(flat, value)
        except tf.errors.OpError as e:
            raise checks.engine_error(self.api_name, e, [np.shape(v) for v in inputs]) from e
        out = [np.asarray(r.numpy()) for r in results[:self._n_out]]
        return out[0] if self._single else out


# ---------------------------------------------------------------------------
# The session-like object, clear_session's reset and eval
# ---------------------------------------------------------------------------

class _Session(object):
    """Session-like object for TF2 (there is no default tf.Session in eager mode).

    ``run(fetches, feed_dict=None)`` evaluates tensors / variables (a single
    one, or a list, tuple or dict of them) feeding ``{placeholder: value}``;
    variables are eager and need no initialisation.
    """

    def __init__(self):
        self._cache = {}

    @property
    def graph(self):
        return _graph()

    def _make_callable_from_options(self, callable_options):
        """TensorFlow 1's ``Session._make_callable_from_options`` (Keras 2.2's tests look
        for it to tell TensorFlow 1.8+): ``callable_options`` (TensorFlow's
        ``config_pb2.CallableOptions``) names the tensors fed (``feed``), fetched
        (``fetch``) and the ops run (``target``) in the adapter's graph. Returns a callable
        of the fed values, in ``feed`` order, giving the list of fetched values (numpy);
        TensorFlow 1's ``run_metadata`` keyword is taken and left empty."""
        g = _graph()
        feeds = [g.as_graph_element(n) for n in callable_options.feed]
        fetched = [g.as_graph_element(n) for n in callable_options.fetch]
        targets = [g.as_graph_element(n) for n in callable_options.target]
        fn = _Function(feeds, fetched, fetches=targets)

        def call(*values, **unused):
            return list(fn(list(values)))
        return call

    def run(self, fetches, feed_dict=None):
        feed_dict = dict(feed_dict or {})
        if isinstance(fetches, dict):
            keys = list(fetches.keys())
            values = self.run([fetches[k] for k in keys], feed_dict)
            return dict(zip(keys, values))
        single = not isinstance(fetches, (list, tuple))
        flat = [fetches] if single else list(fetches)
        feeds = list(feed_dict.keys())
        key = (tuple(id(f) for f in flat), tuple(id(f) for f in feeds))
        fn = self._cache.get(key)
        if fn is None:
            fn = _Function(feeds, flat)
            self._cache[key] = fn
        out = fn([feed_dict[k] for k in feeds])
        if single:
            return out[0]
        return type(fetches)(out) if isinstance(fetches, tuple) else out

    def list_devices(self):
        """The devices TensorFlow sees (``tf.config.list_logical_devices``: each has ``name``,
        ``'/device:CPU:0'``, and ``device_type``), as a TensorFlow 1 session listed them (Keras
        2.0-2.2's ``multi_gpu_model`` asks)."""
        return tf.config.list_logical_devices()

    def close(self):
        self._cache = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _reset_state():
    """Forget the symbolic graph and everything made in it (``clear_session``)."""
    _State.wrapped = None
    _State.capture_index = None
    _State.learning_phase_tensor = None
    _State.eval_cache = {}
    _State.session = None


def _eval_eagerly(x):
    if isinstance(x, _Update):
        return x.run()
    if isinstance(x, tf.Variable):
        return np.asarray(x.numpy())
    if isinstance(x, (list, tuple)):
        raise ValueError('eval: expected one tensor, got a %s (use batch_get_value)'
                         % type(x).__name__)
    if not _is_symbolic(x):
        if isinstance(x, tf.SparseTensor):
            return tf.sparse.to_dense(x).numpy()
        if isinstance(x, tf.IndexedSlices):
            return tf.convert_to_tensor(x).numpy()
        if isinstance(x, tf.Tensor):
            return np.asarray(x.numpy())
        raise ValueError('eval: expected a tensor or variable, got %r' % (x,))
    key = x.ref() if isinstance(x, tf.Tensor) else id(x)
    fn = _State.eval_cache.get(key)
    if fn is None:
        missing = _placeholders_needed([x.indices if isinstance(x, tf.SparseTensor) else
                                        getattr(x, 'values', x)], [])
        if missing:
            raise ValueError('eval: x depends on placeholder(s) %s; feed them through '
                             'K.function([...], x) instead'
                             % ', '.join(repr(op.name) for op in missing))
        fn = _Function([], x)
        fn.api_name = 'eval'
        _State.eval_cache[key] = fn
    return fn([])
