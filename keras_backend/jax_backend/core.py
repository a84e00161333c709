"""JAX's machinery for the Keras 2 backend API: how this adapter holds a graph and runs it.

The symbolic :class:`Tensor` and its operators, the graph nodes (``_apply``, ``_node``,
static shapes by probing), their evaluation (``_Context``), the random keys, the learning
phase and the session stand-in, pending variable updates, the compiled :class:`Function`,
the per-op wrapper :func:`records_keras_shape`, and the API's ``int_shape``, ``dtype``,
``cast`` and ``stack``, which the machinery uses. The API functions are in the section modules
(``tensors``, ``math``, ...) that ``ops`` gathers; nothing here imports those.

Design
======
Keras 2 code builds graphs: placeholders, ops on them, ``gradients``,
``function(inputs, outputs, updates)``, a learning phase, variables updated in
place. JAX has no graph; it traces pure functions. This adapter keeps a small
graph of its own and hands JAX one pure function per ``K.function``:

* **Nodes.** An op whose arguments include a symbolic :class:`Tensor` (a
  placeholder, a variable, or a node built on them) returns a new node that
  records the op (a pure ``jax.numpy``/``lax`` function) and its arguments.
  An op on concrete values only (numpy arrays, ``jax.Array``) runs at once and
  returns a ``jax.Array``, as ops on constants do on the TensorFlow adapter.
  Variables are graph leaves, so ``p - lr * g`` in an optimizer stays a node
  that reads the variable's value at each call.
* **Static shapes.** Each node knows its shape and dtype when it is built:
  ``jax.eval_shape`` runs the op abstractly twice, with every unknown size
  (``None``) of the placeholders replaced by two different probe sizes; a size
  that comes out the same both times is static, one that differs is ``None``.
  Shape values (``K.shape(x)`` and arithmetic on it) are computed concretely
  while tracing (``jax.ensure_compile_time_eval``): under ``jit`` every shape
  is static, so ``K.reshape(x, (K.shape(x)[0], -1))`` traces. Arithmetic on
  shape values that nothing reads as a size (a batch normalization's sample
  size) keeps its probe values as a recipe and is traced as any other op
  (``_PendingProbes``): run on the host, each such op compiled a program.
* **Host values** (initial values, constants, random keys) reach the device
  by ``jax.device_put`` of a private copy, which compiles nothing
  (``_device_array``, ``_raw_key``).
* **Functions.** ``K.function`` compiles one ``jax.jit`` program per call
  signature: a pure function of (the variables' values, the inputs, the random
  keys) returning (the outputs, the updated variables' new values, the new
  keys). The updated variables' buffers are donated and replaced after each
  call, so a Keras train step (forward, gradients, optimizer updates) is one
  XLA call. The learning phase, when fed, is a static argument (one program
  for training, one for inference).
* **Gradients** are JAX's reverse-mode autodiff (``jax.vjp``) of the part of
  the graph between the loss and the variables (or any tensors), evaluated
  inside the same program; nothing is numerical.
* **Random ops** draw from a key held as a variable of their own (seeded by
  ``seed``, or for None by numpy's global generator, as Keras 2.3.1's backends
  seed) and split on every call of a function, so each call draws anew
  (dropout) and a seed, or ``np.random.seed``, reproduces a run.
* **Loops.** ``rnn`` is a ``lax.scan`` over a step graph that is built once on
  stand-in inputs (masks, ``go_backwards``, ``constants``, ``unroll``,
  ``input_length``); ``map_fn``/``foldl``/``foldr`` are ``lax`` loops built
  the same way.
* **Host code.** CTC beam search has no JAX op: it runs the shared search
  (:mod:`keras_backend.ctc_search`) through ``jax.pure_callback``.
"""
import functools
import importlib
import logging
import sys

import os

import numpy as np

from .. import checks, common, engines
from ..common import floatx
from ..eager_graph import function as eager_function, graph


#: the variables that say this process is one of several workers (our launcher's, MPI's)
_WORKER_VARIABLES = ('KERAS_BACKEND_DISTRIBUTE_SIZE', 'KERAS_BACKEND_DISTRIBUTE_CPUS',
                     'OMPI_COMM_WORLD_SIZE', 'PMI_SIZE')


def _callback_pool_threads():
    """XLA's CPU client sizes its thread pool from the CPUs this process may use (or
    ``$NPROC``). ``jax.pure_callback`` and ``io_callback`` put their arguments back onto a
    CPU device, a copy that pool makes, and the host function waits for it (over 100
    KiB): with one thread, busy in the callback while other work of the program was
    queued, the program never finished (keras_backend.distribute's MPI allreduce, two
    workers bound to a core each, a 25M-weight model: 2 runs in 3). The MPI path's
    callbacks are now primitives of ours that hand the host XLA's buffers as they are
    (``collectives._host_primitive``): no copy, no wait, and a second thread on the
    core costs a bound worker 3-7% (JAX ResNet at 2 workers: 131.1 against 121.4 ms a
    step). So only where this JAX lacks what those primitives use does a worker of
    several limited to one CPU get ``NPROC=2`` (unless it is set; read when the client
    starts). Not every process: two threads on one core cost a scan-heavy program up to
    a quarter of its speed (LSTM(256): 276 against 219 ms a step)."""
    if os.environ.get('NPROC', '').strip() or not hasattr(os, 'sched_getaffinity'):
        return
    if not [v for v in _WORKER_VARIABLES if os.environ.get(v, '').strip()]:
        return
    try:
        callback = importlib.import_module('jax._src.callback')
        callback.emit_python_callback, callback._OrderedIOEffect
        importlib.import_module('jax._src.dispatch').apply_primitive
        return                         # the MPI path's own callbacks copy nothing
    except (ImportError, AttributeError):
        pass
    try:
        if len(os.sched_getaffinity(0)) < 2:
            os.environ['NPROC'] = '2'
    except OSError:
        pass


_callback_pool_threads()

try:
    import jax
    import jax.numpy as jnp
except ImportError as _e:  # pragma: no cover - depends on the machine
    raise engines.engine_import_error('JAX', 'jax', 'jax', _e)

jax.config.update('jax_enable_x64', True)


def _persistent_compile_cache():
    """XLA's persistent compilation cache, as Keras' Theano backend kept its compiled code
    in ``~/.theano``: the programs that take JAX's threshold (a second) or more to compile
    are kept in ``<keras config folder>/jax-cache`` and loaded by the next process that
    builds the same program (a deep model's training function: most of its first step).
    Left as it is when the user chose a folder (``jax_compilation_cache_dir``,
    ``JAX_COMPILATION_CACHE_DIR``); ``KERAS_BACKEND_JAX_CACHE=0`` turns it off."""
    if os.environ.get('KERAS_BACKEND_JAX_CACHE', '1').strip().lower() in ('0', 'false', 'no',
                                                                            'off'):
        return
    if jax.config.jax_compilation_cache_dir or os.environ.get('JAX_COMPILATION_CACHE_DIR'):
        return
    from ..config_file import config_dir
    try:
        jax.config.update('jax_compilation_cache_dir', os.path.join(config_dir(), 'jax-cache'))
    except Exception:  # noqa: BLE001 - a JAX without the option: no cache, as before
        pass


_persistent_compile_cache()

ENGINE = 'jax'
ENGINE_VERSION = jax.__version__

#: what a compiled computation raises at run time (a failed host callback among others)
_RUNTIME_ERROR = getattr(jax.errors, 'JaxRuntimeError', None) or \
    getattr(jax.errors, 'XlaRuntimeError', RuntimeError)


class _QuietChecks(logging.Filter):
    """JAX logs the traceback of a host callback that raised before it raises again: for
    one of our run-time checks (its ValueError becomes the user's) that is noise."""

    def filter(self, record):
        error = record.exc_info[1] if record.exc_info else None
        return error is None or checks.RUNTIME_CHECK not in str(error)


logging.getLogger('jax._src.callback').addFilter(_QuietChecks())

_builtin_max, _builtin_min, _builtin_any, _builtin_all = max, min, any, all
_builtin_slice = slice

_PROBES = graph.PROBES

_IDS = graph.IDS

#: this module: the engine the shared graph layer (``keras_backend.eager_graph``) reads, and
#: ``checks.feed_specs`` reads ``int_shape`` and ``dtype`` from
_THIS = sys.modules[__name__]

#: the treedef of one positional argument
_ONE = jax.tree_util.tree_structure((0,))
_unflatten = jax.tree_util.tree_unflatten


# ---------------------------------------------------------------------------
# The graph
# ---------------------------------------------------------------------------

def _dtype_name(dt):
    return np.dtype(dt).name if dt is not None else None


_DTypeName = graph.DTypeName


class Tensor(graph.Node):
    """A symbolic value of this adapter's graph (:class:`keras_backend.eager_graph.graph.Node`):
    ``op`` is a pure function of the values of ``leaves``."""
    _label = 'jax_backend'
    _dtype_name = staticmethod(_dtype_name)

    # probe values ---------------------------------------------------------
    # A shape-valued node of an op marked ``abstract_shapes`` keeps a recipe for its probe
    # values (:class:`_PendingProbes`) and computes them when something reads ``pvals``:
    # a size of a reshape, a range, a fill. Until then a compiled program traces the node
    # as any other op (XLA folds it) instead of running it on the host while tracing;
    # each of those runs compiled a small program of its own (5-20 ms: a batch
    # normalization's sample-size arithmetic took six).
    _pvals = None

    @property
    def pvals(self):
        known = self._pvals
        if isinstance(known, _PendingProbes):
            known = self._pvals = known.compute()
        return known

    @pvals.setter
    def pvals(self, value):
        self._pvals = value

    def holds_probe_values(self):
        return self._pvals is not None

    @property
    def probes_pending(self):
        """Whether the probe values are still a recipe (read without computing them)."""
        return isinstance(self._pvals, _PendingProbes)

    # operators ----------------------------------------------------------
    def __getitem__(self, key):
        return _apply(lambda x, k: x[_index_key(k)], self, _index_leaf(key))

    def __neg__(self):
        return _apply(jnp.negative, self)

    def __abs__(self):
        return _apply(jnp.abs, self)

    def __invert__(self):
        return _apply(jnp.logical_not, self)


def _binary(fn, reflected=False, name=None):
    # a list operand (``x - [[...]]``, as TensorFlow takes) becomes an array first
    def method(self, other):
        other = _operand(other)
        if name != 'matmul':
            graph.check_broadcast(name, self, other)
        if reflected:
            return _apply(_promoting(fn), other, self)
        return _apply(_promoting(fn), self, other)
    return method


_PROMOTING = {}


def _promoting(fn):
    """``fn`` on two operands, a Python number taking the other operand's dtype: one op per
    ``fn``, shared by every node of it (its probe shapes are cached,
    ``graph.cached_infer``)."""
    op = _PROMOTING.get(fn)
    if op is None:
        def op(a, b):
            a, b = _weak(a, b), _weak(b, a)
            return fn(a, b)
        op.__name__ = getattr(fn, '__name__', 'op')
        op.shared = op.abstract_shapes = True
        _PROMOTING[fn] = op
    return op


def _weak(v, other):
    if isinstance(v, (bool, int, float)) and not isinstance(v, np.generic):
        dt = getattr(other, 'dtype', None)
        if dt is not None and not (isinstance(v, float) and
                                   not jnp.issubdtype(dt, jnp.inexact)):
            return jnp.asarray(v, dtype=dt) if not isinstance(other, np.ndarray) \
                else np.asarray(v, dtype=dt)
    return v


for _name, _fn in (('add', jnp.add), ('sub', jnp.subtract), ('mul', jnp.multiply),
                   ('truediv', jnp.true_divide), ('floordiv', jnp.floor_divide),
                   ('mod', jnp.mod), ('pow', jnp.power), ('and', jnp.logical_and),
                   ('or', jnp.logical_or), ('xor', jnp.logical_xor),
                   ('matmul', jnp.matmul)):
    setattr(Tensor, '__%s__' % _name, _binary(_fn, name=_name))
    setattr(Tensor, '__r%s__' % _name, _binary(_fn, reflected=True, name=_name))
for _name, _fn in (('lt', jnp.less), ('le', jnp.less_equal), ('gt', jnp.greater),
                   ('ge', jnp.greater_equal)):
    setattr(Tensor, '__%s__' % _name, _binary(_fn, name=_name))


def _operand(y):
    """An operand as given; a list or tuple becomes an array first."""
    if isinstance(y, (Tensor, jax.Array, np.ndarray)):
        return y
    if isinstance(y, (list, tuple)):
        return _to_tensor(y)
    return y


def _index_leaf(key):
    """A getitem key as a pytree: slices become tuples, so tensors inside are leaves."""
    if isinstance(key, tuple):
        return ('tuple', tuple(_index_leaf(k) for k in key))
    if isinstance(key, _builtin_slice):
        return ('slice', (key.start, key.stop, key.step))
    return ('item', key)


def _index_key(leaf):
    kind, v = leaf
    if kind == 'tuple':
        return tuple(_index_key(k) for k in v)
    if kind == 'slice':
        return _builtin_slice(*[_static_int(s) for s in v])
    return v if not _is_concrete_int(v) else int(np.asarray(v))


def _engine_known_value(x):
    """The value of ``x`` where it is concrete (a ``jax.Array`` that is no tracer: what
    ``K.constant`` and ops on it give), else None; the argument checks read it (indices in
    range...)."""
    if isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer):
        try:
            return np.asarray(x)
        except Exception:
            return None
    return None


def _is_concrete_int(v):
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return True
    if isinstance(v, (np.ndarray, jax.Array)) and np.ndim(v) == 0 and \
            not isinstance(v, jax.core.Tracer) and jnp.issubdtype(v.dtype, jnp.integer):
        return True
    return False


def _static_int(v):
    if v is None:
        return None
    if _is_concrete_int(v):
        return int(np.asarray(v))
    return v


class Placeholder(Tensor):
    """A graph input: its value comes from a ``function`` call's feed."""
    _is_placeholder = True

    def __init__(self, shape, dtype, name=None, sparse=False):
        avals = tuple(jax.ShapeDtypeStruct(tuple(p if d is None else d for d in shape),
                                           np.dtype(dtype)) for p in _PROBES)
        Tensor.__init__(self, None, [], None, avals, name=name)
        self.sparse = sparse
        self._sparse = bool(sparse)


def _device_array(value, dtype=None):
    """``value`` (a number, a list or a numpy array) as a ``jax.Array`` of ``dtype`` (its own
    where None) in JAX's canonical form (int64 held as int32 unless x64 is on), moved by
    ``jax.device_put``. JAX 0.10's ``jnp.asarray`` of a host value runs a program of its
    own, compiled once per shape and dtype ('stage', or 'convert_element_type' where the
    dtype changes: 5-20 ms each; ten of them in a small model's build); a transfer compiles
    nothing. The host array is a private copy: on a CPU the device array may share its
    buffer."""
    arr = np.asarray(value) if dtype is None else np.asarray(value, dtype=np.dtype(dtype))
    return jax.device_put(np.array(arr, dtype=jax.dtypes.canonicalize_dtype(arr.dtype),
                                   copy=True))


def _raw_key(seed):
    """``jax.random.PRNGKey(seed)`` (an int ``seed``): the raw Threefry key, made on the host
    (JAX's layout for its default ``threefry2x32``: the 64-bit seed's high word, zero
    without x64, and its low word), with no program: ``PRNGKey`` compiles two, 30 ms in
    all, once per process. Another implementation, or a seed beyond 64 bits, gets
    ``PRNGKey`` itself."""
    config = jax.config
    seed = int(seed)
    if str(getattr(config, 'jax_default_prng_impl', '')) != 'threefry2x32' or \
            getattr(config, 'jax_enable_custom_prng', True) or not -2 ** 63 <= seed < 2 ** 63:
        return jax.random.PRNGKey(seed)
    high = (seed >> 32) & 0xFFFFFFFF if config.jax_enable_x64 else 0
    return _device_array(np.array([high, seed & 0xFFFFFFFF], dtype=np.uint32))


class Variable(Tensor):
    """A variable: a graph leaf whose value (a ``jax.Array``) functions read and update."""
    _is_variable = True

    def __init__(self, value, name=None, constraint=None, trainable=True):
        if not isinstance(value, jax.Array):
            value = _device_array(value)
        aval = jax.ShapeDtypeStruct(value.shape, value.dtype)
        Tensor.__init__(self, None, [], None, (aval, aval), name=name)
        self._value = value
        self.constraint = constraint
        self.trainable = trainable
        self._keras_shape = tuple(value.shape)

    @property
    def value(self):
        return self._value

    def _assign(self, value):
        if isinstance(value, jax.Array):
            value = jnp.asarray(value, dtype=self.avals[0].dtype)
        else:
            value = _device_array(value, self.avals[0].dtype)
        if tuple(value.shape) != tuple(self.avals[0].shape):
            aval = jax.ShapeDtypeStruct(value.shape, value.dtype)
            self.avals = (aval, aval)
            self._keras_shape = tuple(value.shape)
        self._value = value

    def numpy(self):
        return np.asarray(self._value)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._value, dtype=dtype)


_merge_shapes = graph.merge_shapes


def _flatten(args):
    return jax.tree_util.tree_flatten(args, is_leaf=lambda v: isinstance(v, Tensor) or v is None)


#: ``fn(*args)`` at once on concrete values, else a new graph node
_apply = functools.partial(graph.apply, _THIS)
_node = functools.partial(graph.node, _THIS)


def _shaped_node(fn, args, shape, dtype):
    """A node of ``fn(*args)`` whose static ``shape`` (None where unknown) and ``dtype``
    the caller knows, for ops whose sizes the probes cannot give (a size read from a
    fed value)."""
    leaves, treedef = _flatten(args)
    avals = tuple(jax.ShapeDtypeStruct(tuple(p if d is None else int(d) for d in shape),
                                       np.dtype(dtype)) for p in _PROBES)
    return _node(fn, leaves, treedef, avals=avals)


class _PendingProbes(object):
    """The recipe of a node's probe values: ``fn`` over ``leaves`` at both probes, run
    while tracing (``jax.ensure_compile_time_eval``), when first read (``Tensor.pvals``)."""

    def __init__(self, fn, leaves, treedef):
        self.fn, self.leaves, self.treedef = fn, leaves, treedef

    def compute(self):
        out = []
        for p in range(2):
            vals = [v.pvals[p] if isinstance(v, Tensor) else v for v in self.leaves]
            with jax.ensure_compile_time_eval():
                out.append(np.asarray(self.fn(*jax.tree_util.tree_unflatten(self.treedef,
                                                                            vals))))
        return tuple(out)


def _partly_abstract(fn, leaves, treedef, p, abstract_if):
    """``(g, tensors)``: ``fn`` over ``leaves`` at probe ``p`` as a function ``g`` of the
    values of ``tensors``, the tensor leaves for which ``abstract_if`` holds (for an
    abstract run of ``g`` over their probe shapes); the other tensor leaves give their
    probe values."""
    vals, abstract = [], []
    for i, v in enumerate(leaves):
        if isinstance(v, Tensor) and abstract_if(v):
            vals.append(None)
            abstract.append(i)
        else:
            vals.append(v.pvals[p] if isinstance(v, Tensor) else v)

    def g(*abstract_vals):
        v = list(vals)
        for i, a in zip(abstract, abstract_vals):
            v[i] = a
        return fn(*jax.tree_util.tree_unflatten(treedef, v))
    return g, [leaves[i] for i in abstract]


def _infer_pending(fn, leaves, treedef):
    """(avals, pvals) of an op marked ``fn.abstract_shapes`` (its result's shape and dtype
    follow from its inputs' shapes and dtypes, never their values) over leaves with probe
    values: the shapes from an abstract run (pending values left abstract), the values a
    recipe where every tensor leaf has probe values (:class:`_PendingProbes`). Raises what
    the abstract run raises."""
    avals = []
    for p in range(2):
        g, tensors = _partly_abstract(fn, leaves, treedef, p,
                                      lambda v: v.probes_pending or v.pvals is None)
        avals.append(jax.eval_shape(g, *[t.avals[p] for t in tensors]))
    if _builtin_all(v.holds_probe_values() for v in leaves if isinstance(v, Tensor)) and \
            _builtin_all(getattr(a, 'size', 0) <= graph.PROBE_VALUE_LIMIT for a in avals):
        return tuple(avals), _PendingProbes(fn, leaves, treedef)
    return tuple(avals), None


def _infer(fn, leaves, treedef):
    """(avals, pvals) of ``fn`` over ``leaves`` at both probe sizes (kept for a shared op,
    ``graph.cached_infer``)."""
    return graph.cached_infer(graph.infer_key(fn, leaves, treedef),
                              lambda: _infer_probes(fn, leaves, treedef))


def _infer_probes(fn, leaves, treedef):
    if getattr(fn, 'abstract_shapes', False) and _builtin_any(
            isinstance(v, Tensor) and v.holds_probe_values() for v in leaves):
        try:
            return _infer_pending(fn, leaves, treedef)
        except Exception:
            pass        # a value was needed after all: computed below
    avals, pvals = [], []
    if getattr(fn, 'shape_only', False):
        # the value depends on the inputs' shapes alone: known at both probes
        for p in range(2):
            vals = [v.avals[p] if isinstance(v, Tensor) else v for v in leaves]
            out = np.asarray(fn(*jax.tree_util.tree_unflatten(treedef, vals)))
            avals.append(jax.ShapeDtypeStruct(out.shape, out.dtype))
            pvals.append(out)
        return tuple(avals), tuple(pvals)
    for p in range(2):
        g, tensors = _partly_abstract(fn, leaves, treedef, p, lambda v: v.pvals is None)
        if not tensors:
            aval = jax.eval_shape(g)
            if getattr(aval, 'size', 0) > graph.PROBE_VALUE_LIMIT:
                avals.append(aval)      # a tensor made from shape values: no probe value
                continue
            with jax.ensure_compile_time_eval():
                out = g()
            if isinstance(out, (tuple, list)):
                raise TypeError('shape-valued ops return one array')
            out = np.asarray(out)
            avals.append(jax.ShapeDtypeStruct(out.shape, out.dtype))
            pvals.append(out)
            continue
        try:
            out = jax.eval_shape(g, *[t.avals[p] for t in tensors])
        except Exception as first:
            out = _infer_broadcasting_unknowns(g, tensors, p, first)
        avals.append(out)
    return tuple(avals), (tuple(pvals) if len(pvals) == 2 else None)


def _eval_specs(g, specs):
    return jax.eval_shape(g, *specs)


def _infer_broadcasting_unknowns(g, tensors, p, error):
    return graph.infer_broadcasting_unknowns(g, tensors, p, error, jax.ShapeDtypeStruct,
                                             _eval_specs)


class _Multi(Tensor):
    """A node with several outputs (a loop, a gradient bundle); read with :func:`_outputs`."""


_outputs = functools.partial(graph.outputs, _THIS)
_pick = graph.pick


def _apply_multi(fn, n, *args):
    """``fn(*args)`` returning ``n`` arrays: at once on concrete values, else ``n`` nodes
    reading one :class:`_Multi` node."""
    leaves, treedef = _flatten(args)
    if not _builtin_any(isinstance(v, Tensor) for v in leaves):
        return tuple(fn(*args))
    avals = []
    for p in range(2):
        idx = [i for i, v in enumerate(leaves) if isinstance(v, Tensor)]

        def g(*abstract, p=p, idx=idx):
            vals = list(leaves)
            for i, a in zip(idx, abstract):
                vals[i] = a
            return tuple(fn(*jax.tree_util.tree_unflatten(treedef, vals)))
        avals.append(jax.eval_shape(g, *[leaves[i].pvals[p] if leaves[i].pvals is not None
                                         else leaves[i].avals[p] for i in idx]))
    node = _multi_node(fn, leaves, treedef, tuple(avals))
    return tuple(_outputs(node, n))


#: a :class:`_Multi` whose probe shapes ``avals`` are given (a tuple per probe)
_multi_node = functools.partial(graph.multi_node, _THIS)


# ---------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------

class _Context(graph.Context):
    """One evaluation of the graph (:class:`keras_backend.eager_graph.graph.Context`): the
    variables' values are the program's arguments; an op of concrete values (a shape)
    runs at compile time."""
    _engine = _THIS

    def __init__(self, *args, **kwargs):
        graph.Context.__init__(self, *args, **kwargs)
        #: the ids of the random keys this evaluation read (a child's go to its root's)
        self.keys_read = self.parent.keys_read if self.parent is not None else set()

    def _leaf(self, n):
        if isinstance(n, _KeyVariable):
            self.keys_read.add(n.id)
        return graph.Context._leaf(self, n)

    def _call(self, n, args, vals):
        if n.probes_pending:
            return n.op(*args)      # nothing read its value as a size: traced as it is
        if n.pvals is not None or not _builtin_any(
                isinstance(v, jax.core.Tracer) for v in vals):
            with jax.ensure_compile_time_eval():
                return n.op(*args)
        return n.op(*args)
        return c


def _is_array_tree(v):
    """Whether ``v`` is an array or a (nested) tuple/list of arrays."""
    if isinstance(v, (tuple, list)):
        return _builtin_all(_is_array_tree(e) for e in v)
    return isinstance(v, (jax.Array, np.ndarray, np.generic))


_context_op = graph.context_op
_walk = graph.walk
_dependents = graph.dependents


# ---------------------------------------------------------------------------
# Helpers shared by the ops
# ---------------------------------------------------------------------------

def _to_tensor(x, dtype=None):
    """A Tensor or ``jax.Array``; Python and numpy values become arrays of
    ``dtype`` (floatx for floats)."""
    if isinstance(x, Tensor):
        if dtype is not None and x.dtype != _dtype_name(dtype):
            return cast(x, dtype)
        return x
    if isinstance(x, jax.Array):
        return x if dtype is None else x.astype(dtype)
    if isinstance(x, (list, tuple)) and _holds_graph_values(x):
        # e.g. ``K.prod([K.shape(x)[a] for a in axes])``: stack the parts in the graph
        return stack([_to_tensor(e, dtype) for e in x])
    if hasattr(x, 'toarray'):
        x = x.toarray()
    arr = np.asarray(x)
    if dtype is None:
        if arr.dtype.kind == 'f' and not isinstance(x, (np.ndarray, np.generic)):
            dtype = floatx()
        elif arr.dtype == np.float64 and not isinstance(x, (np.ndarray, np.generic)):
            dtype = floatx()
        elif arr.dtype.kind in 'iu' and not isinstance(x, (np.ndarray, np.generic)):
            dtype = 'int32'
    return _device_array(arr, dtype)


def _holds_graph_values(x):
    """Whether a (nested) list or tuple holds a Tensor or ``jax.Array``."""
    return _builtin_any(isinstance(e, (Tensor, jax.Array)) or
                        (isinstance(e, (list, tuple)) and _holds_graph_values(e)) for e in x)


_static_shape = graph.static_shape


def _ndim(x):
    return x.ndim if isinstance(x, Tensor) else np.ndim(x)


def _normalize_dtype(dtype):
    if dtype is None:
        return floatx()
    if hasattr(dtype, 'name') and not isinstance(dtype, str):
        dtype = dtype.name
    return np.dtype(dtype).name


_axis_arg = graph.axis_arg


def _size_tuple(shape):
    """A shape argument (ints, numpy ints, scalar tensors, a shape tensor) as a
    tuple of Python ints; evaluated inside ops, where every size is concrete."""
    if isinstance(shape, (jax.Array, np.ndarray)) and np.ndim(shape) == 1:
        return tuple(int(s) for s in np.asarray(shape))
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(np.asarray(s)) if s is not None and not isinstance(s, int) else s
                 for s in shape)


# ---------------------------------------------------------------------------
# Random keys
# ---------------------------------------------------------------------------

class _KeyVariable(Variable):
    """A random key held as a variable; every ``function`` that draws from it splits it
    on each call."""


def _key_variable(seed):
    """A key variable of the op's own, from ``seed``; None draws the seed from numpy's
    global generator, as Keras 2.3.1's backends do (``np.random.seed(n)`` then reproduces
    a model's initial weights and dropout masks). The op's draws repeat run after run."""
    if seed is None:
        seed = np.random.randint(1, 10 ** 7)
    seed = int(np.asarray(seed))
    return _KeyVariable(_raw_key(seed), name='rng_key_seed_%d' % seed)


def _seed_key(seed):
    if seed is None:
        seed = np.random.randint(0, 2 ** 31 - 1)
    return _raw_key(int(np.asarray(seed)))


#: id(key) -> (key, its next key) for the keys of eager draws (``_random``), whose program
#: computed the next key beside the values: advancing the key variable after such a draw
#: then compiles no split of its own (Threefry's compile, about 0.1 s per process)
_NEXT_KEYS = {}


def _next_key(key):
    known = _NEXT_KEYS.pop(id(key), None)
    if known is not None and known[0] is key:
        return known[1]
    return jax.random.split(key)[0]


def _draw_key(key):
    return jax.random.split(key)[1]


#: (kind, length or shape) -> the compiled draw that evaluates a random node eagerly
#: (``_random``)
_EAGER_DRAWS = {}
#: the shortest flat draw of ``_random``: every weight up to this size shares one compiled
#: program per distribution (compiling Threefry takes about 0.3 s on a CPU; drawing 2**16
#: values, about a tenth of a millisecond)
_MIN_EAGER_DRAW = 1 << 16


def _eager_flat():
    """Whether eager draws may be flat prefixes (``_random``): JAX's partitionable Threefry
    (its default since 0.5) gives every element from the key and its flat index alone."""
    config = jax.config
    return bool(getattr(config, 'jax_threefry_partitionable', False)) and \
        str(getattr(config, 'jax_default_prng_impl', 'threefry2x32')) == 'threefry2x32'


def _random(draw, seed, *args, **kwargs):
    """A random node: ``draw(key, *args)`` with a key from ``seed``'s key variable.

    ``kind`` (keyword; a hashable naming the distribution and dtype) marks a ``draw(key,
    shape, *params)``: evaluated outside a trace (a weight's initial value, ``K.eval``),
    the key's split and the draw then run as one program, rather than op by op (a split,
    the sampler and each scaling op compiled apart, for every shape: about a second of a
    model's build). That program draws a flat vector whose length is the next power of two
    (at least ``_MIN_EAGER_DRAW``), so one compiled program serves every shape up to it
    (DenseNet121's 121 kernel shapes took 117 compiles, 13 s; now about 12; a small model's
    weights, one): with JAX's partitionable Threefry each element
    depends only on the key and its flat index, so the vector's first ``size`` elements,
    laid out in ``shape``, are the very values a draw of ``shape`` gives."""
    kind = kwargs.pop('kind', None)
    keyvar = _key_variable(seed)

    def op(key, *a):
        if kind is not None and not _builtin_any(isinstance(v, jax.core.Tracer)
                                                 for v in (key,) + a[1:]):
            shape = _size_tuple(a[0])
            size = int(np.prod(shape, dtype=np.int64))
            flat = size > 0 and _eager_flat()
            length = max(1 << (size - 1).bit_length(), _MIN_EAGER_DRAW) if flat else None
            fn = _EAGER_DRAWS.get((kind, length if flat else shape))
            if fn is None:
                drawn = (length,) if flat else shape
                fn = _EAGER_DRAWS[(kind, length if flat else shape)] = jax.jit(
                    lambda k, *params: (draw(_draw_key(k), drawn, *params), _next_key(k)))
            out, after = fn(key, *a[1:])
            if len(_NEXT_KEYS) > 1024:      # keys whose variable was not advanced after all
                _NEXT_KEYS.clear()
            _NEXT_KEYS[id(key)] = (key, after)
            if not flat:
                return out
            # the prefix, laid out in ``shape`` (a host view: no program per shape)
            return _device_array(np.asarray(out)[:size].reshape(shape))
        return draw(_draw_key(key), *a)
    leaves, treedef = _flatten((keyvar,) + args)
    return _node(op, leaves, treedef)


# ---------------------------------------------------------------------------
# The learning phase, the session stand-in, the eval cache
# ---------------------------------------------------------------------------

_LEARNING_PHASE = Placeholder((), 'int32', name='keras_learning_phase')


#: the session stand-in, replaced in place by ``set_session``
_SESSION = [graph.Session(_THIS)]

#: tensor id -> the ``Function`` that ``eval`` compiled for it (``clear_session`` empties it)
_EVAL_CACHE = {}


# ---------------------------------------------------------------------------
# Pending variable updates
# ---------------------------------------------------------------------------

class _Update(graph.Update):
    _engine = _THIS

_CONTROLS = []    # the update groups of the open ``control_dependencies`` blocks
_active_controls = functools.partial(graph.active_controls, _CONTROLS)


class _HostCollectives(object):
    """The host collectives (keras_backend.distribute's MPI path; ops marked
    ``host_collective``) of the program being traced: ``unordered``, the ops that may run
    as plain host callbacks (``jax.pure_callback``: no ordered effect, so the program
    keeps JAX's C++ dispatch) because the graph's data already orders them
    (:func:`_data_ordered_collectives`); the others run as ordered callbacks. The counts
    let a trace that met both kinds (a collective hidden in a loop body) be redone with
    every collective ordered: two kinds in one program could run in different orders on
    different workers."""
    unordered = frozenset()
    unordered_calls = 0
    ordered_calls = 0


class _MixedCollectives(Exception):
    """A trace met data-ordered and ordered host collectives together."""


def _data_ordered_collectives(nodes, gradient_nodes):
    """The ops of the host collectives among ``nodes`` (leaves first) when data orders
    them all (each one's inputs depend on the one before it: every worker runs them in
    one order however XLA schedules the program) and none is differentiated here (none
    is an ancestor of a gradient node, whose pass would trace it inside ``jax.vjp``);
    else an empty set."""
    found = [n for n in nodes if getattr(n.op, 'host_collective', False)]
    if not found:
        return frozenset()
    differentiated = set(n.id for n in _walk(list(gradient_nodes)))
    if _builtin_any(n.id in differentiated for n in found):
        return frozenset()
    index = dict((n.id, i) for i, n in enumerate(found))
    latest = {}       # node id -> the highest collective index among it and its ancestors
    for n in nodes:
        above = max([latest.get(v.id, -1) for v in n.leaves if isinstance(v, Tensor)] or [-1])
        if n.id in index:
            if above != index[n.id] - 1:
                return frozenset()      # not after the collective before it
            above = index[n.id]
        latest[n.id] = above
    return frozenset(n.op for n in found)


# ---------------------------------------------------------------------------
# Compiled functions
# ---------------------------------------------------------------------------

class Function(eager_function.Function):
    """A compiled function of the graph: one ``jax.jit`` program per input signature
    and learning phase, the updated variables' buffers donated.

    Example:
        >>> f = K.function([x], [x * 2])
        >>> f([np.ones((2, 3), 'float32')])[0].shape
        (2, 3)
    """
    _engine = _THIS

    def _prepare(self, nodes, **kwargs):
        self._eager_calls = int(kwargs.pop('eager_calls', 0))
        variables = [n for n in nodes if n._is_variable]
        updated = set(p.variable.id for p in self.updates)
        keys = [v for v in variables if isinstance(v, _KeyVariable) and v.id not in updated]
        self._updated = self._updated + keys
        self._n_keys = len(keys)
        upd_ids = set(v.id for v in self._updated)
        self._read = [v for v in variables if v.id not in upd_ids]
        # indices (in ``_fed``) of scalar inputs passed as static values: set when a
        # traced program needed a fed value as a size (``K.arange(n)`` of a fed ``n``);
        # the program is then compiled once per value of those inputs
        self._static_fed = ()
        # a node whose op needs the program in another form (a collective of
        # keras_backend.distribute: the program runs on every worker under shard_map)
        # names the wrapper that makes it
        wrappers = [n.op.program_wrapper for n in nodes
                    if getattr(n.op, 'program_wrapper', None) is not None]
        self._unordered = _data_ordered_collectives(nodes, self._gradient_nodes)
        # a call returns when its host collectives are done (set again while tracing, for
        # one hidden in a loop body): the caller's next MPI call must not overtake them
        self._host_collectives = _builtin_any(getattr(n.op, 'host_collective', False)
                                              for n in nodes)
        if wrappers:
            self._eager_calls = 0
            self._jitted = wrappers[0](self._pure)
        else:
            self._jitted = jax.jit(self._pure, static_argnums=(3, 4), donate_argnums=(0,))

    def _pure(self, updated_vals, read_vals, fed_vals, phase, static_vals=()):
        state = _HostCollectives
        saved = (state.unordered, state.unordered_calls, state.ordered_calls)
        state.unordered, state.unordered_calls, state.ordered_calls = self._unordered, 0, 0
        try:
            result = self._program(updated_vals, read_vals, fed_vals, phase, static_vals)
            if state.unordered_calls and state.ordered_calls:
                raise _MixedCollectives()
            if state.unordered_calls or state.ordered_calls:
                self._host_collectives = True
            return result
        finally:
            state.unordered, state.unordered_calls, state.ordered_calls = saved

    def _program(self, updated_vals, read_vals, fed_vals, phase, static_vals):
        variables = dict(zip(self._updated, updated_vals))
        variables.update(zip(self._read, read_vals))
        fed_vals = list(fed_vals)
        for i, v in zip(self._static_fed, static_vals):
            fed_vals.insert(i, np.asarray(v, dtype=self._fed[i].dtype))
        feeds = dict(zip(self._fed, fed_vals))
        ctx = _Context(feeds=feeds, variables=variables, learning_phase=phase)
        # the updates first: a gradient's pass hands the forward values it computed to
        # the context, so that outputs such as the loss reuse them (one forward pass)
        for g in self._gradient_nodes:
            ctx.value(g)
        news = [ctx.value(v) for v in self._update_values]
        outs = [ctx.value(o) for o in self.outputs]
        # an update keeps its variable's dtype and shape (a (n,) value for an (n, 1) one)
        news = [jnp.reshape(jnp.asarray(n, dtype=v.avals[0].dtype), v.avals[0].shape)
                for n, v in zip(news, self._updated)]
        # a key advances where this program drew from it: a program that draws nothing from
        # a key (a prediction, past a dropout switched off) hands it back unchanged, without
        # the Threefry split that was a third of a small model's prediction program
        drawn = ctx.keys_read
        news += [_next_key(variables[k]) if k.id in drawn else variables[k]
                 for k in self._updated[len(news):]]
        return outs, news

    _errors = (TypeError, ValueError, _RUNTIME_ERROR)

    def _feed_dtype(self, t):
        return np.dtype(t.dtype)

    def _run(self, fed, phase):
        try:
            return self._call_jitted(fed, phase)
        except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                jax.errors.TracerIntegerConversionError):
            scalars = tuple(i for i, t in enumerate(self._fed) if t.ndim == 0)
            if self._static_fed or not scalars:
                raise
            self._static_fed = scalars
            return self._call_jitted(fed, phase)

    def _finish(self, outs, news):
        for v, n in zip(self._updated, news):
            v._value = n
        # writable numpy arrays (a view of a jax.Array is read-only; Keras 2 code writes
        # into what it gets back, e.g. convert_dense_weights_data_format)
        trim = _trim_decoded
        return [trim(o) if getattr(t, '_trim_decoded', False) else np.array(o)
                for t, o in zip(self.outputs, outs)]


    def _call_jitted(self, fed, phase):
        static = tuple(np.asarray(fed[i]).item() for i in self._static_fed)
        dynamic = [v for i, v in enumerate(fed) if i not in self._static_fed]
        run = self._jitted
        if self._eager_calls:
            # e.g. ``K.eval`` of an initial value, run once: op by op beats compiling
            self._eager_calls -= 1
            run = self._pure
        try:
            result = run([v._value for v in self._updated],
                         [v._value for v in self._read], dynamic, phase, static)
        except _MixedCollectives:
            self._unordered = frozenset()      # every collective ordered, traced again
            result = run([v._value for v in self._updated],
                         [v._value for v in self._read], dynamic, phase, static)
        if self._host_collectives:
            jax.block_until_ready(result)
        return result


_with_control_updates = graph.with_control_updates
_flat_updates = graph.flat_updates


def _feed_value(v, dt):
    """A fed value as a numpy array of the placeholder's dtype (``jit`` moves numpy
    arguments to the device itself, faster than a ``jnp.asarray`` dispatch)."""
    if hasattr(v, 'toarray'):
        v = v.toarray()
    if isinstance(v, jax.Array):
        return v if v.dtype == dt else v.astype(dt)
    return np.asarray(v, dtype=dt)


# ---------------------------------------------------------------------------
# Loop bodies being traced
# ---------------------------------------------------------------------------

#: how deep the trace is inside loop bodies (``rnn``, ``map_fn``, the folds) just now
_LOOP_DEPTH = [0]

#: marks the ops traced inside it as a loop body's (``rnn``, ``map_fn`` and the folds enter
#: it; the convolutions read ``_LOOP_DEPTH``: see ``convolution._conv_cl``)
_tracing_loop_body = graph.depth_scope(_LOOP_DEPTH)


# ---------------------------------------------------------------------------
# The per-op wrapper
# ---------------------------------------------------------------------------

records_keras_shape = graph.records_keras_shape


# ---------------------------------------------------------------------------
# What the machinery builds and reads itself: the API's int_shape, dtype, cast and stack
# ---------------------------------------------------------------------------
# (here, below the ops: conversions build casts and stacks, compiled functions check their
# feeds with int_shape and dtype and make updates of (variable, value) pairs; the ops bind
# the API names in their sections)


int_shape = graph.int_shape


def dtype(x):
    if isinstance(x, Tensor):
        return x.dtype
    return _dtype_name(getattr(x, 'dtype', None) or np.asarray(x).dtype)


@records_keras_shape
def cast(x, dtype):
    dtype = _normalize_dtype(dtype)

    def op(v):
        return jnp.asarray(v).astype(dtype)
    op.abstract_shapes = True
    return _apply(op, _to_tensor(x))


@records_keras_shape
def stack(x, axis=0):
    tensors = [_to_tensor(t) for t in x]

    def op(ts):
        return jnp.stack(ts, axis=axis)
    op.abstract_shapes = True
    return _apply(op, tensors)


def _make_update(x, new_x):
    # also reached by ``function``'s (variable, value) pairs, which the shared checks do not open
    if not isinstance(x, Variable):
        raise TypeError("update: argument 'x' must be a variable, got %s"
                        % type(x).__name__)
    new_x = _to_tensor(new_x)
    if not isinstance(new_x, Tensor):
        new_x = jnp.asarray(new_x, dtype=x.avals[0].dtype)
    return _Update(x, cast(new_x, x.dtype) if dtype(new_x) != x.dtype else new_x)


_trim_decoded = graph.trim_decoded
