"""The Keras 2 backend API on JAX (Python 3.11+).

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
  is static, so ``K.reshape(x, (K.shape(x)[0], -1))`` traces.
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
import contextlib
import functools
import itertools
import math as _math
import os

import numpy as np

from . import api, checks, common, engines, shape_rules
from .common import *  # noqa: F401,F403  (the shared config API)

try:
    import jax
    import jax.numpy as jnp
    from jax import lax
except ImportError as _e:  # pragma: no cover - depends on the machine
    raise engines.engine_import_error('JAX', 'jax', 'jax', _e)

jax.config.update('jax_enable_x64', True)

ENGINE = 'jax'
ENGINE_VERSION = jax.__version__

_builtin_max, _builtin_min, _builtin_any, _builtin_all = max, min, any, all
_builtin_slice = slice

#: the two sizes an unknown axis takes while a node's static shape is worked out
_PROBES = (83, 89)

_IDS = itertools.count(1)

#: the treedef of one positional argument
_ONE = jax.tree_util.tree_structure((0,))


# ---------------------------------------------------------------------------
# The graph
# ---------------------------------------------------------------------------

def _dtype_name(dt):
    return np.dtype(dt).name if dt is not None else None


class _DTypeName(str):
    """A tensor's dtype: its numpy name (a ``str``, as Theano's), which also answers
    ``.name`` and ``.base_dtype`` as TensorFlow's ``DType`` does (Keras 2 code written for
    TensorFlow reads ``x.dtype.name``)."""

    @property
    def name(self):
        return str(self)

    @property
    def base_dtype(self):
        return self


class Tensor(object):
    """A symbolic value of this adapter's graph.

    ``op`` is a pure function of the values of ``leaves`` (rebuilt into the
    call's arguments by ``treedef``); ``avals`` the two probe shapes (see the
    module's design); ``pvals`` the two probe values of a shape-valued node.
    """
    _is_placeholder = False
    _is_variable = False
    __array_priority__ = 100

    def __init__(self, op, leaves, treedef, avals, pvals=None, name=None):
        self.op = op
        self.leaves = leaves
        self.treedef = treedef
        self.avals = avals
        self.pvals = pvals
        self.id = next(_IDS)
        self.name = name or 'tensor_%d' % self.id

    # static facts -----------------------------------------------------
    @property
    def shape(self):
        return _merge_shapes(self.avals)

    @property
    def ndim(self):
        return len(self.avals[0].shape)

    @property
    def dtype(self):
        return _DTypeName(_dtype_name(self.avals[0].dtype))

    def get_shape(self):
        return self.shape

    def __repr__(self):
        return '<jax_backend.%s %r shape=%s dtype=%s>' % (
            type(self).__name__, self.name, self.shape, self.dtype)

    def __hash__(self):
        return id(self)

    def __len__(self):
        n = self.shape[0] if self.ndim else None
        if n is None:
            raise TypeError('len() of a tensor whose first axis is unknown')
        return n

    def __iter__(self):
        n = self.shape[0] if self.ndim else None
        if n is None:
            raise TypeError('iterating over a tensor whose first axis is unknown')
        return (self[i] for i in range(n))

    def __bool__(self):
        raise TypeError('the truth value of a symbolic tensor is not known while the '
                        'graph is built; use K.switch')

    # operators ----------------------------------------------------------
    def __getitem__(self, key):
        return _apply(lambda x, k: x[_index_key(k)], self, _index_leaf(key))

    def __neg__(self):
        return _apply(jnp.negative, self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _apply(jnp.abs, self)

    def __invert__(self):
        return _apply(jnp.logical_not, self)


def _binary(fn, reflected=False):
    # a list operand (``x - [[...]]``, as TensorFlow takes) becomes an array first
    if reflected:
        return lambda self, other: _apply(_promoting(fn), _operand(other), self)
    return lambda self, other: _apply(_promoting(fn), self, _operand(other))


def _promoting(fn):
    """``fn`` on two operands, a Python number taking the other operand's dtype."""
    def op(a, b):
        a, b = _weak(a, b), _weak(b, a)
        return fn(a, b)
    op.__name__ = getattr(fn, '__name__', 'op')
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
    setattr(Tensor, '__%s__' % _name, _binary(_fn))
    setattr(Tensor, '__r%s__' % _name, _binary(_fn, reflected=True))
for _name, _fn in (('lt', jnp.less), ('le', jnp.less_equal), ('gt', jnp.greater),
                   ('ge', jnp.greater_equal)):
    setattr(Tensor, '__%s__' % _name, _binary(_fn))


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


class Variable(Tensor):
    """A variable: a graph leaf whose value (a ``jax.Array``) functions read and update."""
    _is_variable = True

    def __init__(self, value, name=None, constraint=None, trainable=True):
        value = jnp.asarray(value)
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
        if isinstance(value, np.ndarray):
            value = np.array(value, copy=True)   # the device copy may read it later
        value = jnp.asarray(value, dtype=self.avals[0].dtype)
        if tuple(value.shape) != tuple(self.avals[0].shape):
            aval = jax.ShapeDtypeStruct(value.shape, value.dtype)
            self.avals = (aval, aval)
            self._keras_shape = tuple(value.shape)
        self._value = value

    def numpy(self):
        return np.asarray(self._value)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._value, dtype=dtype)


def _merge_shapes(avals):
    a, b = avals[0].shape, avals[1].shape
    return tuple(int(x) if x == y else None for x, y in zip(a, b))


def _flatten(args):
    return jax.tree_util.tree_flatten(args, is_leaf=lambda v: isinstance(v, Tensor) or v is None)


def _apply(fn, *args):
    """``fn(*args)`` at once on concrete values, else a new graph node."""
    leaves, treedef = _flatten(args)
    if not _builtin_any(isinstance(v, Tensor) for v in leaves):
        return fn(*args)
    return _node(fn, leaves, treedef)


def _node(fn, leaves, treedef, name=None, cls=Tensor, avals=None):
    controls = _active_controls()
    if controls:
        # made inside ``control_dependencies(updates)``: read those variables' new values
        new = dict((u.variable.id, u.new_value) for u in controls)
        leaves = [new[v.id] if isinstance(v, Variable) and v.id in new else v
                  for v in leaves]
    pvals = None
    if avals is None:
        avals, pvals = _infer(fn, leaves, treedef)
    t = cls(fn, leaves, treedef, avals, pvals, name=name)
    if controls:
        t._control_updates = controls
    if _builtin_any(getattr(v, '_uses_learning_phase', False)
                    for v in leaves if isinstance(v, Tensor)):
        t._uses_learning_phase = True
    return t


def _shaped_node(fn, args, shape, dtype):
    """A node of ``fn(*args)`` whose static ``shape`` (None where unknown) and ``dtype``
    the caller knows, for ops whose sizes the probes cannot give (a size read from a
    fed value)."""
    leaves, treedef = _flatten(args)
    avals = tuple(jax.ShapeDtypeStruct(tuple(p if d is None else int(d) for d in shape),
                                       np.dtype(dtype)) for p in _PROBES)
    return _node(fn, leaves, treedef, avals=avals)


def _infer(fn, leaves, treedef):
    """(avals, pvals) of ``fn`` over ``leaves`` at both probe sizes."""
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
        vals, abstract = [], []
        for i, v in enumerate(leaves):
            if isinstance(v, Tensor):
                if v.pvals is not None:
                    vals.append(v.pvals[p])
                else:
                    vals.append(None)
                    abstract.append(i)
            else:
                vals.append(v)
        if not abstract:
            with jax.ensure_compile_time_eval():
                out = fn(*jax.tree_util.tree_unflatten(treedef, vals))
            if isinstance(out, (tuple, list)):
                raise TypeError('shape-valued ops return one array')
            out = np.asarray(out)
            avals.append(jax.ShapeDtypeStruct(out.shape, out.dtype))
            pvals.append(out)
            continue

        def g(*abstract_vals):
            v = list(vals)
            for i, a in zip(abstract, abstract_vals):
                v[i] = a
            return fn(*jax.tree_util.tree_unflatten(treedef, v))
        specs = [leaves[i].avals[p] for i in abstract]
        try:
            out = jax.eval_shape(g, *specs)
        except Exception as first:
            out = _infer_broadcasting_unknowns(g, [leaves[i] for i in abstract], p, first)
        avals.append(out)
    return tuple(avals), (tuple(pvals) if len(pvals) == 2 else None)


def _collapsed(t, p):
    """``t``'s aval at probe ``p`` with its unknown sizes set to 1."""
    a, b = t.avals
    shape = tuple(1 if x != y else x for x, y in zip(a.shape, b.shape))
    return jax.ShapeDtypeStruct(shape, t.avals[p].dtype)


def _infer_broadcasting_unknowns(g, tensors, p, error):
    """An op refused at the probe sizes because an unknown size meets a known one
    (``(None, 4) * (3, 4)``): as TensorFlow's shape inference, the unknown size is taken
    to broadcast. Tries each input's unknown sizes as 1, then all of them."""
    unknown = [i for i, t in enumerate(tensors) if t.avals[0].shape != t.avals[1].shape]
    candidates = []
    for align in ('left', 'right'):
        candidates.append([_filled(t, tensors, p, align) for t in tensors])
    for which in [[i] for i in unknown] + ([unknown] if len(unknown) > 1 else []):
        candidates.append([_collapsed(t, p) if i in which else t.avals[p]
                           for i, t in enumerate(tensors)])
    for specs in candidates:
        try:
            return jax.eval_shape(g, *specs)
        except Exception:
            continue
    raise error


def _filled(t, tensors, p, align):
    """``t``'s aval at probe ``p``, each unknown size taken from another input's known size
    at the same axis (counted from the ``align`` end): an unknown size meeting a known one
    in a batched product or a mapped axis must equal it."""
    a, b = t.avals
    shape = list(a.shape if p == 0 else b.shape)
    n = len(shape)
    for i in range(n):
        if a.shape[i] == b.shape[i]:
            continue
        for o in tensors:
            if o is t:
                continue
            m = len(o.avals[0].shape)
            j = i if align == 'left' else m - n + i
            if 0 <= j < m and o.avals[0].shape[j] == o.avals[1].shape[j]:
                shape[i] = o.avals[0].shape[j]
                break
    return jax.ShapeDtypeStruct(tuple(shape), t.avals[p].dtype)


class _Multi(Tensor):
    """A node with several outputs (a loop, a gradient bundle); read with :func:`_outputs`."""


def _outputs(node, n):
    return [_node(functools.partial(_pick, i=i), [node], _ONE)
            for i in range(n)]


def _pick(t, i):
    return t[i]


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


def _multi_node(fn, leaves, treedef, avals):
    """A :class:`_Multi` whose probe shapes ``avals`` are given (a tuple per probe)."""
    node = _Multi(fn, leaves, treedef, avals)
    if _builtin_any(getattr(v, '_uses_learning_phase', False)
                    for v in leaves if isinstance(v, Tensor)):
        node._uses_learning_phase = True
    return node


# ---------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------

class _Context(object):
    """One evaluation of the graph: the placeholders' feeds, the variables'
    values, the learning phase, the random keys. A child context (a gradient,
    a loop body) evaluates its own nodes and asks its parent for the rest."""

    def __init__(self, feeds=None, variables=None, learning_phase=None, parent=None,
                 local=None, seeds=None):
        self.feeds = feeds if feeds is not None else {}
        self.variables = variables if variables is not None else {}
        self.learning_phase = learning_phase
        self.parent = parent
        self.local = local          # the ids of the nodes this child evaluates itself
        self.memo = dict(seeds or {})

    def value(self, node):
        if not isinstance(node, Tensor):
            return node
        if node.id in self.memo:
            return self.memo[node.id]
        if self.parent is not None and node.id not in self.local:
            return self.parent.value(node)
        # iterative post-order over the nodes this context evaluates
        stack = [(node, False)]
        while stack:
            n, ready = stack.pop()
            if n.id in self.memo:
                continue
            if self.parent is not None and n.id not in self.local:
                self.memo[n.id] = self.parent.value(n)
                continue
            if n.op is None:
                self.memo[n.id] = self._leaf(n)
                continue
            lazy = getattr(n.op, 'lazy_leaves', ())
            if not ready:
                stack.append((n, True))
                for i, v in enumerate(n.leaves):
                    if isinstance(v, Tensor) and v.id not in self.memo and i not in lazy:
                        stack.append((v, False))
                continue
            vals = [(self.memo.get(v.id) if i in lazy else self.memo[v.id])
                    if isinstance(v, Tensor) else v for i, v in enumerate(n.leaves)]
            args = jax.tree_util.tree_unflatten(n.treedef, vals)
            if getattr(n.op, 'needs_context', False):
                out = n.op(self, *args)
            elif n.pvals is not None or not _builtin_any(
                    isinstance(v, jax.core.Tracer) for v in vals):
                with jax.ensure_compile_time_eval():
                    out = n.op(*args)
            else:
                out = n.op(*args)
            self.memo[n.id] = out
        return self.memo[node.id]

    def _leaf(self, n):
        if n is _LEARNING_PHASE:
            if n in self.feeds:
                return self.feeds[n]
            return self.learning_phase if self.learning_phase is not None else 0
        if n._is_variable:
            v = self.variables.get(n)
            return n._value if v is None else v
        if n._is_placeholder:
            if n in self.feeds:
                return self.feeds[n]
            raise ValueError('the placeholder %r is needed but was not fed: give it in '
                             'the function\'s inputs' % (n.name,))
        raise ValueError('cannot evaluate %r' % (n,))

    def child(self, local, seeds):
        c = _Context(self.feeds, self.variables, self.learning_phase, parent=self,
                     local=local, seeds=seeds)
        return c


def _is_array_tree(v):
    """Whether ``v`` is an array or a (nested) tuple/list of arrays."""
    if isinstance(v, (tuple, list)):
        return _builtin_all(_is_array_tree(e) for e in v)
    return isinstance(v, (jax.Array, np.ndarray, np.generic))


def _context_op(fn):
    """Mark ``fn(ctx, *args)`` as an op that needs the evaluation context."""
    fn.needs_context = True
    return fn


def _walk(roots):
    """Every node reachable from ``roots`` (a list), each once, leaves first."""
    seen, order = set(), []
    stack = [(r, False) for r in roots if isinstance(r, Tensor)]
    while stack:
        n, ready = stack.pop()
        if ready:
            order.append(n)
            continue
        if n.id in seen:
            continue
        seen.add(n.id)
        stack.append((n, True))
        for v in n.leaves:
            if isinstance(v, Tensor) and v.id not in seen:
                stack.append((v, False))
    return order


def _dependents(roots, sources):
    """The ids of the nodes among the ancestors of ``roots`` that depend on ``sources``."""
    src = set(s.id for s in sources)
    dep = set()
    for n in _walk(roots):
        if n.id in src or _builtin_any(isinstance(v, Tensor) and v.id in dep
                                       for v in n.leaves):
            dep.add(n.id)
    return dep


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
    return jnp.asarray(arr, dtype=dtype)


def _holds_graph_values(x):
    """Whether a (nested) list or tuple holds a Tensor or ``jax.Array``."""
    return _builtin_any(isinstance(e, (Tensor, jax.Array)) or
                        (isinstance(e, (list, tuple)) and _holds_graph_values(e)) for e in x)


def _static_shape(x):
    if isinstance(x, Tensor):
        return x.shape
    return tuple(np.shape(x))


def _ndim(x):
    return x.ndim if isinstance(x, Tensor) else np.ndim(x)


def _normalize_dtype(dtype):
    if dtype is None:
        return floatx()
    if hasattr(dtype, 'name') and not isinstance(dtype, str):
        dtype = dtype.name
    return np.dtype(dtype).name


def _axis_arg(axis, ndim):
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return tuple(sorted(set(int(a) % ndim if ndim else int(a) for a in axis)))
    return int(axis) % ndim if ndim else int(axis)


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
    return _KeyVariable(jax.random.PRNGKey(seed), name='rng_key_seed_%d' % seed)


def _seed_key(seed):
    if seed is None:
        seed = np.random.randint(0, 2 ** 31 - 1)
    return jax.random.PRNGKey(int(np.asarray(seed)))


def _next_key(key):
    return jax.random.split(key)[0]


def _draw_key(key):
    return jax.random.split(key)[1]


def _random(draw, seed, *args):
    """A random node: ``draw(key, *args)`` with a key from ``seed``'s key variable."""
    keyvar = _key_variable(seed)

    def op(key, *a):
        return draw(_draw_key(key), *a)
    leaves, treedef = _flatten((keyvar,) + args)
    return _node(op, leaves, treedef)


# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------

def backend():
    """The engine's name, 'jax'."""
    return 'jax'


# ---------------------------------------------------------------------------
# Session and learning phase
# ---------------------------------------------------------------------------

_LEARNING_PHASE = Placeholder((), 'int32', name='keras_learning_phase')


class _Session(object):
    """Session-like object: ``run(fetches, feed_dict=None)`` evaluates tensors."""

    def run(self, fetches, feed_dict=None):
        """Evaluate ``fetches`` (a tensor or a list) with ``feed_dict`` ({placeholder:
        value}); returns numpy values in the same structure."""
        feed_dict = feed_dict or {}
        keys = list(feed_dict.keys())
        single = not isinstance(fetches, (list, tuple))
        outs = [fetches] if single else list(fetches)
        values = function(keys, outs)([feed_dict[k] for k in keys])
        return values[0] if single else values


_SESSION = [_Session()]


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
    if not isinstance(name, str):
        raise ValueError('name: expected a str, got %r' % (name,))
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


def int_shape(x):
    """The ``_keras_shape`` Keras recorded, else the node's static shape."""
    if isinstance(x, Variable):
        return tuple(x.avals[0].shape)
    recorded = getattr(x, '_keras_shape', None)
    if isinstance(x, Tensor):
        if recorded is not None and len(recorded) == x.ndim:
            return tuple(None if d is None else int(d) for d in recorded)
        return x.shape
    if hasattr(x, 'shape'):
        return tuple(int(d) for d in x.shape)
    return tuple(np.shape(x))


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


def dtype(x):
    if isinstance(x, Tensor):
        return x.dtype
    return _dtype_name(getattr(x, 'dtype', None) or np.asarray(x).dtype)


_EVAL_CACHE = {}


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


def cast(x, dtype):
    dtype = _normalize_dtype(dtype)
    return _apply(lambda v: jnp.asarray(v).astype(dtype), _to_tensor(x))


# ---------------------------------------------------------------------------
# Variable updates
# ---------------------------------------------------------------------------

class _Update(object):
    """A pending variable update, applied by the ``function`` it is given to (or by
    ``eval``): ``variable`` gets ``new_value``."""

    def __init__(self, variable, new_value):
        self.variable = variable
        self.new_value = new_value
        self._uses_learning_phase = getattr(new_value, '_uses_learning_phase', False)
        # the updates it comes after (made inside their ``control_dependencies``)
        self._controls = _active_controls()

    # Keras 2 code passes updates around as (variable, value) pairs sometimes
    def __iter__(self):
        return iter((self.variable, self.new_value))

    def __getitem__(self, i):
        return (self.variable, self.new_value)[i]

    def __len__(self):
        return 2

    def run(self):
        Function([], [], updates=[self])([])

    @property
    def op(self):
        return self

    @property
    def shape(self):
        return self.variable.shape

    @property
    def dtype(self):
        return self.variable.dtype


_CONTROLS = []    # the update groups of the open ``control_dependencies`` blocks


def _active_controls():
    out = []
    for group in _CONTROLS:
        out.extend(u for u in group if u not in out)
    return out


def _make_update(x, new_x):
    if not isinstance(x, Variable):
        raise TypeError("update: argument 'x' must be a variable, got %s"
                        % type(x).__name__)
    new_x = _to_tensor(new_x)
    if not isinstance(new_x, Tensor):
        new_x = jnp.asarray(new_x, dtype=x.avals[0].dtype)
    return _Update(x, cast(new_x, x.dtype) if dtype(new_x) != x.dtype else new_x)


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


def dot(x, y):
    """``jnp.tensordot`` over x's last axis and y's second-to-last (its only, 1-D)."""
    return _apply(_dot, _to_tensor(x), _to_tensor(y))


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


def transpose(x):
    return _apply(jnp.transpose, _to_tensor(x))


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


def max(x, axis=None, keepdims=False):
    return _reduce(jnp.max, x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    return _reduce(jnp.min, x, axis, keepdims)


def sum(x, axis=None, keepdims=False):
    return _reduce(jnp.sum, x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    return _reduce(jnp.prod, x, axis, keepdims)


def cumsum(x, axis=0):
    x = _to_tensor(x)
    return _apply(lambda v: jnp.cumsum(v, axis=_axis_arg(axis, v.ndim)), x)


def cumprod(x, axis=0):
    x = _to_tensor(x)
    return _apply(lambda v: jnp.cumprod(v, axis=_axis_arg(axis, v.ndim)), x)


def var(x, axis=None, keepdims=False):
    return _reduce(jnp.var, x, axis, keepdims, to_float=True)


def std(x, axis=None, keepdims=False):
    return _reduce(jnp.std, x, axis, keepdims, to_float=True)


def mean(x, axis=None, keepdims=False):
    """``jnp.mean``; integer and bool inputs give floatx."""
    return _reduce(jnp.mean, x, axis, keepdims, to_float=True)


def any(x, axis=None, keepdims=False):
    return _reduce(jnp.any, x, axis, keepdims)


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


def _operand(y):
    if isinstance(y, (Tensor, jax.Array, np.ndarray)):
        return y
    if isinstance(y, (list, tuple)):
        return _to_tensor(y)
    return y


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

def concatenate(tensors, axis=-1):
    """``jnp.concatenate``; a negative axis counts from the first tensor's rank."""
    tensors = [_to_tensor(t) for t in tensors]
    nd = _ndim(tensors[0])
    ax = axis % nd if nd else 0
    return _apply(lambda ts: jnp.concatenate(ts, axis=ax), tensors)


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


def permute_dimensions(x, pattern):
    pattern = tuple(int(p) for p in pattern)
    return _apply(lambda v: jnp.transpose(v, pattern), _to_tensor(x))


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


def repeat_elements(x, rep, axis):
    x = _to_tensor(x)
    return _apply(lambda v, r: jnp.repeat(v, int(np.asarray(r)), axis=axis % v.ndim), x, rep)


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


def tile(x, n):
    """``jnp.tile``; ``n`` may mix ints and scalar tensors, or be a shape tensor."""
    x = _to_tensor(x)
    if isinstance(n, (list, tuple)):
        n = list(n)
    return _apply(lambda v, k: jnp.tile(v, _size_tuple(k)), x, n)


def flatten(x):
    return _apply(lambda v: jnp.reshape(v, (-1,)), _to_tensor(x))


def batch_flatten(x):
    return _apply(lambda v: jnp.reshape(v, (v.shape[0], -1)), _to_tensor(x))


def expand_dims(x, axis=-1):
    x = _to_tensor(x)
    axis = int(axis)
    return _apply(lambda v: jnp.expand_dims(v, axis if axis >= 0 else v.ndim + 1 + axis), x)


def squeeze(x, axis):
    x = _to_tensor(x)
    axis = int(axis)
    return _apply(lambda v: jnp.squeeze(v, axis % v.ndim), x)


def temporal_padding(x, padding=(1, 1)):
    x = _to_tensor(x)
    a, b = (int(p) for p in padding)
    return _apply(lambda v: jnp.pad(v, ((0, 0), (a, b), (0, 0))), x)


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    data_format = common.normalize_data_format(data_format)
    pads = shape_rules.normalize_spatial_padding(padding, 2)
    return _spatial_pad(_to_tensor(x), pads, data_format)


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


def stack(x, axis=0):
    tensors = [_to_tensor(t) for t in x]
    return _apply(lambda ts: jnp.stack(ts, axis=axis), tensors)


def one_hot(indices, num_classes):
    """``jax.nn.one_hot`` over a new last axis, floatx."""
    indices = _to_tensor(indices)
    return _apply(lambda i, n: jax.nn.one_hot(i, int(np.asarray(n)), dtype=floatx()),
                  indices, num_classes)


def reverse(x, axes):
    x = _to_tensor(x)
    if isinstance(axes, (int, np.integer)):
        axes = [axes]
    axes = tuple(int(a) for a in axes)
    return _apply(lambda v: jnp.flip(v, axis=tuple(a % v.ndim for a in axes)), x)


def slice(x, start, size):
    """``lax.dynamic_slice`` with static sizes (a size of -1 runs to the end)."""
    x = _to_tensor(x)

    def op(v, st, sz):
        st = [int(np.asarray(s)) for s in st]
        sz = [int(np.asarray(s)) for s in sz]
        sz = [v.shape[i] - st[i] if s == -1 else s for i, s in enumerate(sz)]
        return lax.slice(v, st, [a + b for a, b in zip(st, sz)])
    return _apply(op, x, list(start), list(size))


def pattern_broadcast(x, broadcastable):
    """Returns ``x``: JAX broadcasts size-1 axes by shape, so no pattern is needed."""
    return _to_tensor(x)


# ---------------------------------------------------------------------------
# Values, functions and gradients
# ---------------------------------------------------------------------------

class Function(object):
    """A compiled function of the graph: one ``jax.jit`` program per input signature
    and learning phase, the updated variables' buffers donated.

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
        self.outputs = [outputs] if self._single else list(outputs)
        self.name = name
        self.api_name = 'function'
        self._feed_specs = None
        self._feed_dtypes = None
        self._eager_calls = int(kwargs.pop('eager_calls', 0))
        pairs = []
        for u in _flat_updates(updates):
            if isinstance(u, _Update):
                pairs.append(u)
            elif isinstance(u, (list, tuple)) and len(u) == 2:
                pairs.append(_make_update(u[0], u[1]))
            else:
                raise ValueError('function: each update must be a (variable, new_value) '
                                 'pair, got %r' % (u,))
        pairs = _with_control_updates(self.outputs, pairs)
        # later updates of the same variable win
        by_var = {}
        for p in pairs:
            by_var[p.variable.id] = p
        self.updates = list(by_var.values())
        roots = [o for o in self.outputs if isinstance(o, Tensor)] + \
            [p.new_value for p in self.updates if isinstance(p.new_value, Tensor)]
        nodes = _walk(roots)
        variables = [n for n in nodes if n._is_variable]
        updated = set(p.variable.id for p in self.updates)
        keys = [v for v in variables if isinstance(v, _KeyVariable) and v.id not in updated]
        self._updated = [p.variable for p in self.updates] + keys
        self._update_values = [p.new_value for p in self.updates]
        self._n_keys = len(keys)
        upd_ids = set(v.id for v in self._updated)
        self._read = [v for v in variables if v.id not in upd_ids]
        self._lp_index = None
        for i, t in enumerate(self.inputs):
            if t is _LEARNING_PHASE:
                self._lp_index = i
        self._fed = [t for t in self.inputs if t is not _LEARNING_PHASE]
        # indices (in ``_fed``) of scalar inputs passed as static values: set when a
        # traced program needed a fed value as a size (``K.arange(n)`` of a fed ``n``);
        # the program is then compiled once per value of those inputs
        self._static_fed = ()
        # a node whose op needs the program in another form (a collective of
        # keras_backend.distribute: the program runs on every worker under shard_map)
        # names the wrapper that makes it
        wrappers = [n.op.program_wrapper for n in nodes
                    if getattr(n.op, 'program_wrapper', None) is not None]
        if wrappers:
            self._eager_calls = 0
            self._jitted = wrappers[0](self._pure)
        else:
            self._jitted = jax.jit(self._pure, static_argnums=(3, 4), donate_argnums=(0,))

    def _pure(self, updated_vals, read_vals, fed_vals, phase, static_vals=()):
        variables = dict(zip(self._updated, updated_vals))
        variables.update(zip(self._read, read_vals))
        fed_vals = list(fed_vals)
        for i, v in zip(self._static_fed, static_vals):
            fed_vals.insert(i, np.asarray(v, dtype=self._fed[i].dtype))
        feeds = dict(zip(self._fed, fed_vals))
        ctx = _Context(feeds=feeds, variables=variables, learning_phase=phase)
        # the updates first: a gradient's pass hands the forward values it computed to
        # the context, so that outputs such as the loss reuse them (one forward pass)
        news = [ctx.value(v) for v in self._update_values]
        outs = [ctx.value(o) for o in self.outputs]
        # an update keeps its variable's dtype and shape (a (n,) value for an (n, 1) one)
        news = [jnp.reshape(jnp.asarray(n, dtype=v.avals[0].dtype), v.avals[0].shape)
                for n, v in zip(news, self._updated)]
        news += [_next_key(variables[k]) for k in self._updated[len(news):]]
        return outs, news

    def __call__(self, inputs):
        if isinstance(inputs, dict):
            inputs = [inputs[i] for i in self.inputs]
        if self._feed_specs is None:
            import sys
            self._feed_specs = checks.feed_specs(sys.modules[__name__], self.inputs)
        checks.check_feeds(self._feed_specs, inputs)
        if self._feed_dtypes is None:
            self._feed_dtypes = [np.dtype(t.dtype) if isinstance(t, Tensor) else None
                                 for t in self.inputs]
        phase = None
        fed = []
        for i, (dt, v) in enumerate(zip(self._feed_dtypes, inputs)):
            if i == self._lp_index:
                phase = int(np.asarray(v))
                continue
            fed.append(_feed_value(v, dt))
        fixed = common._fixed_learning_phase()
        if phase is None and fixed is not None:
            phase = fixed
        try:
            try:
                outs, news = self._call_jitted(fed, phase)
            except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                    jax.errors.TracerIntegerConversionError):
                scalars = tuple(i for i, t in enumerate(self._fed) if t.ndim == 0)
                if self._static_fed or not scalars:
                    raise
                self._static_fed = scalars
                outs, news = self._call_jitted(fed, phase)
        except (TypeError, ValueError) as e:
            if isinstance(e, ValueError) and 'placeholder' in str(e):
                raise
            raise checks.engine_error(self.api_name, e, [np.shape(v) for v in inputs]) from e
        for v, n in zip(self._updated, news):
            v._value = n
        # writable numpy arrays (a view of a jax.Array is read-only; Keras 2 code writes
        # into what it gets back, e.g. convert_dense_weights_data_format)
        outs = [_trim_decoded(o) if getattr(t, '_trim_decoded', False) else np.array(o)
                for t, o in zip(self.outputs, outs)]
        return outs[0] if self._single else outs


    def _call_jitted(self, fed, phase):
        static = tuple(np.asarray(fed[i]).item() for i in self._static_fed)
        dynamic = [v for i, v in enumerate(fed) if i not in self._static_fed]
        run = self._jitted
        if self._eager_calls:
            # e.g. ``K.eval`` of an initial value, run once: op by op beats compiling
            self._eager_calls -= 1
            run = self._pure
        return run([v._value for v in self._updated],
                   [v._value for v in self._read], dynamic, phase, static)


def _with_control_updates(outputs, pairs):
    """``pairs`` preceded by the updates that the graph of ``outputs`` and ``pairs`` was
    made after (``control_dependencies``): computing those nodes applies them."""
    extra = []
    while True:
        roots = [o for o in outputs if isinstance(o, Tensor)] + \
            [p.new_value for p in extra + pairs if isinstance(p.new_value, Tensor)]
        found = []
        for u in pairs + extra:
            found.extend(u._controls)
        for n in _walk(roots):
            found.extend(getattr(n, '_control_updates', ()))
        new = [u for u in found if u not in pairs and u not in extra]
        if not new:
            return extra + pairs
        for u in new:
            if u not in extra:
                extra.append(u)


def _flat_updates(updates):
    if not updates:
        return []
    if isinstance(updates, dict):
        return list(updates.items())
    out = []
    for u in updates:
        if isinstance(u, list) and u and isinstance(u[0], (list, tuple, _Update)):
            out.extend(_flat_updates(u))
        else:
            out.append(u)
    return out


def _feed_value(v, dt):
    """A fed value as a numpy array of the placeholder's dtype (``jit`` moves numpy
    arguments to the device itself, faster than a ``jnp.asarray`` dispatch)."""
    if hasattr(v, 'toarray'):
        v = v.toarray()
    if isinstance(v, jax.Array):
        return v if v.dtype == dt else v.astype(dt)
    return np.asarray(v, dtype=dt)


def get_value(x):
    if isinstance(x, Variable):
        return np.array(x._value)
    return eval(x)


def batch_get_value(ops):
    return [get_value(x) for x in ops]


def set_value(x, value):
    if not isinstance(x, Variable):
        raise TypeError("set_value: argument 'x' must be a variable, got %s"
                        % type(x).__name__)
    if hasattr(value, 'toarray'):
        value = value.toarray()
    value = np.asarray(value, dtype=x.dtype)
    if value.shape != tuple(x.avals[0].shape) and value.size == _math.prod(x.avals[0].shape):
        value = value.reshape(x.avals[0].shape)
    x._assign(value)


def batch_set_value(tuples):
    for x, value in tuples:
        set_value(x, value)


def get_variable_shape(x):
    return int_shape(x)


def print_tensor(x, message=''):
    """``jax.debug.print`` of ``message`` and the value when it is computed."""
    x = _to_tensor(x)

    def op(v):
        jax.debug.print(message + '{v}', v=v)
        return v
    return _apply(op, x)


def function(inputs, outputs, updates=None, **kwargs):
    """One ``jax.jit`` program per input signature (see the module's design); ``name``
    is kept, other keywords are refused."""
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


def symbolic(func):
    """Returns ``func`` unchanged."""
    return func


def eager(func):
    """Returns ``func`` unchanged."""
    return func


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
    masks, weight slices) is computed once outside the loop."""
    inputs = _to_tensor(inputs)
    nd = _ndim(inputs)
    if nd < 3:
        raise ValueError('rnn: inputs must be at least 3-D (batch, time, ...), got rank %d'
                         % nd)
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
            raise ValueError('rnn: unroll=True needs a static time length or input_length')
        order = range(steps - 1, -1, -1) if go_backwards else range(steps)
        states = list(initial_states)
        outputs, prev = [], None
        for t in order:
            out, new_states = step_function(inputs[:, t], states + constants)
            new_states = list(new_states)
            if mask is not None:
                m = mask[:, t]
                if prev is None:
                    prev = zeros_like(out)
                out = switch(m, out, prev)
                new_states = [switch(m, ns, s) for s, ns in zip(states, new_states)]
            outputs.append(out)
            prev = out
            states = new_states
        return outputs[-1], stack(outputs, axis=1), list(states)

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

    @_context_op
    def op(ctx, x, m, states0, body_refs):
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
            o = child.value(out)
            ns = [_cast_like(child.value(v), a[0]) for v, a in zip(new_states, state_avals)]
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
        if training in (0, 1):
            return _call_if(x) if training else _call_if(alt)
        raise ValueError('in_train_phase: training must be None, 0, 1 or a tensor, got %r'
                         % (training,))
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
    """A uniform draw from the op's key (see the module's design) compared with
    ``level`` (a number or a tensor); always applied."""
    rate_tensor = isinstance(level, (Tensor, jax.Array))
    if not rate_tensor and not 0. <= float(level) < 1.:
        raise ValueError('dropout: level must be a number in [0, 1), got %r' % (level,))
    x = _to_tensor(x)
    if not rate_tensor:
        level = float(level)
        if level == 0.:
            return x
    if noise_shape is not None:
        noise_shape = list(noise_shape)
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
    if padding == 'causal':
        return [((k - 1) * d, 0) for k, d in zip(kernel_sizes, dilations)]
    return padding.upper()


def _conv_cl(v, k, strides, padding, dilations, groups=1):
    rank = v.ndim - 2
    ks = k.shape[:rank]
    return lax.conv_general_dilated(
        v, k.astype(v.dtype), window_strides=tuple(strides),
        padding=_conv_padding(padding, ks, dilations), rhs_dilation=tuple(dilations),
        dimension_numbers=_dims(rank), feature_group_count=groups)


def _conv(x, kernel, rank, strides, padding, data_format, dilation_rate, allow_causal=False):
    data_format = common.normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal=allow_causal)
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    dilations = shape_rules.normalize_tuple(dilation_rate, rank, 'dilation_rate')

    def op(v, k):
        return _cf(_conv_cl(_cl(v, data_format), k, strides, padding, dilations), data_format)
    return _apply(op, _to_tensor(x), _to_tensor(kernel))


def conv1d(x, kernel, strides=1, padding='valid', data_format=None, dilation_rate=1):
    """``lax.conv_general_dilated``; 'causal' pads the left only."""
    return _conv(x, kernel, 1, strides, padding, data_format, dilation_rate,
                 allow_causal=True)


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


def conv3d(x, kernel, strides=(1, 1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1, 1)):
    """``lax.conv_general_dilated``."""
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


def pool2d(x, pool_size, strides=(1, 1), padding='valid', data_format=None, pool_mode='max'):
    """``lax.reduce_window``; 'avg' divides by the entries inside ``x``."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 2)


def pool3d(x, pool_size, strides=(1, 1, 1), padding='valid', data_format=None,
           pool_mode='max'):
    """``lax.reduce_window``; 'avg' divides by the entries inside ``x``."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 3)


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
            from . import ctc_search
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


def _trim_decoded(dec):
    """A concrete ``(samples, steps)`` decoding cut to its longest path (the columns
    holding a label), as TensorFlow's dense decodings are as wide as that path."""
    dec = np.asarray(dec)
    width = int(np.max(np.sum(dec >= 0, axis=1))) if dec.size else 0
    return np.array(dec[:, :width])


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


api.install(globals(), ENGINE)


# As Keras 2.3.1's Theano backend (and our Theano adapter), the graph results of the
# shape-changing ops carry ``_keras_shape``; Keras' engine reads it beside
# ``_uses_learning_phase``, which ``reshape`` passes on from its input.
_KERAS_SHAPE_OPS = (
    'identity', 'cast', 'dot', 'batch_dot', 'transpose', 'gather', 'max', 'min', 'sum',
    'prod', 'var', 'std', 'mean', 'any', 'all', 'concatenate', 'reshape',
    'permute_dimensions', 'resize_images', 'repeat_elements', 'repeat', 'tile', 'flatten',
    'batch_flatten', 'expand_dims', 'squeeze', 'temporal_padding', 'spatial_2d_padding',
    'spatial_3d_padding', 'stack', 'one_hot', 'reverse', 'slice', 'pattern_broadcast',
    'conv1d', 'conv2d', 'conv3d', 'pool2d', 'pool3d', 'bias_add')


def _records_keras_shape(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        out = func(*args, **kwargs)
        if isinstance(out, Tensor):
            out._keras_shape = out.shape
            if func.__name__ == 'reshape':
                out._uses_learning_phase = getattr(args[0] if args else kwargs.get('x'),
                                                   '_uses_learning_phase', False)
        return out
    return wrapper


for _name in _KERAS_SHAPE_OPS:
    globals()[_name] = _records_keras_shape(globals()[_name])
del _name
