"""The graph of an eager engine's adapter: nodes, their walk order, their evaluation, pending
updates, control dependencies, the session stand-in (see the package's docstring).

The functions that build nodes take the adapter's ``core`` module (the *engine*) first; each
adapter binds them (``_apply = functools.partial(graph.apply, _THIS)``). The classes are
subclassed by the adapter, which sets ``_engine`` (its ``core`` module) where a class reads
the engine.

What an engine's ``core`` module provides, by name: ``Tensor`` (a :class:`Node`),
``_flatten(args) -> (leaves, treedef)`` and ``_unflatten(treedef, leaves)``, ``_infer(fn,
leaves, treedef) -> (avals, pvals)``, ``_Multi`` (a ``Tensor`` of several outputs),
``_ONE`` (the treedef of one argument), ``_active_controls()``, ``_LEARNING_PHASE`` and
``Function``.
"""
import contextlib
import functools
import itertools

import numpy as np

from .. import shape_rules

_builtin_any = any
_builtin_all = all

#: the ids of the nodes (and the numbers of the placeholders' default names)
IDS = itertools.count(1)

#: the two sizes an unknown axis takes while a node's static shape is worked out. A size that
#: comes out the same at both is static, so the two must stay apart through the downsampling
#: of a deep model: Keras 2.0-2.1's ResNet50 takes an input of unknown height and width down
#: by 32 and then averages 7x7 windows ('valid'). At 83 and 89 both came out 3 (a static size
#: 3, and the pool refused); at these, 8 and 17 before the pool, 1 and 2 after. Both prime, so
#: that no reshape of an unknown size divides by chance.
PROBES = (257, 521)

#: the most elements a node computed from shape values alone (``K.ones(K.shape(x))``) may
#: have for its value at a probe to be computed while the graph is built; a larger one gets
#: its static shape only (at the probe sizes above such a value could take gigabytes)
PROBE_VALUE_LIMIT = 4096


class DTypeName(str):
    """A tensor's dtype: its numpy name (a ``str``, as Theano's), which also answers
    ``.name`` and ``.base_dtype`` as TensorFlow's ``DType`` does (Keras 2 code written for
    TensorFlow reads ``x.dtype.name``)."""

    @property
    def name(self):
        return str(self)

    @property
    def base_dtype(self):
        return self


class StaticShape(tuple):
    """A tensor's static shape: a tuple of sizes (None where unknown), which also answers
    ``as_list()``, ``ndims``, ``rank`` and ``is_fully_defined()`` as TensorFlow's
    ``TensorShape`` does (Keras 2 code written for TensorFlow, and Keras 2.0-2.1's backend
    tests where this adapter stands in for their TensorFlow module, read
    ``x.get_shape().as_list()``)."""

    def as_list(self):
        return list(self)

    @property
    def ndims(self):
        return len(self)

    rank = ndims

    def is_fully_defined(self):
        return None not in self


def merge_shapes(avals):
    """The static shape of the two probe shapes: a size that differs is unknown (None)."""
    a, b = avals[0].shape, avals[1].shape
    return tuple(int(x) if x == y else None for x, y in zip(a, b))


class Node(object):
    """A symbolic value of an adapter's graph (the base of its ``Tensor``).

    ``op`` is a function of the values of ``leaves`` (rebuilt into the call's arguments by
    ``treedef``); ``avals`` the two probe shapes (objects with ``shape`` and ``dtype``);
    ``pvals`` the two probe values of a shape-valued node. A subclass sets ``_label`` (the
    repr's prefix, the adapter's package) and ``_dtype_name`` (a dtype's numpy name), and
    defines the operators.
    """
    _is_placeholder = False
    _is_variable = False
    __array_priority__ = 100
    _label = 'eager_graph'

    @staticmethod
    def _dtype_name(dt):
        return np.dtype(dt).name if dt is not None else None

    def __init__(self, op, leaves, treedef, avals, pvals=None, name=None):
        self.op = op
        self.leaves = leaves
        self.treedef = treedef
        self.avals = avals
        self.pvals = pvals
        self.id = next(IDS)
        self.name = name or 'tensor_%d' % self.id

    # static facts -----------------------------------------------------
    @property
    def shape(self):
        return StaticShape(merge_shapes(self.avals))

    @property
    def ndim(self):
        return len(self.avals[0].shape)

    @property
    def dtype(self):
        return DTypeName(self._dtype_name(self.avals[0].dtype))

    def get_shape(self):
        return self.shape

    def holds_probe_values(self):
        """Whether the node has probe values, asked without computing them (an adapter may
        compute them at first need)."""
        return self.pvals is not None

    def __repr__(self):
        return '<%s.%s %r shape=%s dtype=%s>' % (
            self._label, type(self).__name__, self.name, self.shape, self.dtype)

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
        # A variable is an object that exists: Keras 2.0-2.1 layers test ``if self.bias:``
        # (truthy on TensorFlow 1's and Theano's variables alike). A computed tensor's
        # value is not known while the graph is built.
        if self._is_variable:
            return True
        raise TypeError('the truth value of a symbolic tensor is not known while the '
                        'graph is built; use K.switch')

    def __pos__(self):
        return self


# ---------------------------------------------------------------------------
# Building nodes
# ---------------------------------------------------------------------------

def apply(engine, fn, *args):
    """``fn(*args)`` at once on concrete values, else a new graph node."""
    leaves, treedef = engine._flatten(args)
    if not _builtin_any(isinstance(v, Node) for v in leaves):
        return fn(*args)
    return engine._node(fn, leaves, treedef)


def node(engine, fn, leaves, treedef, name=None, cls=None, avals=None):
    """A node of ``fn`` over ``leaves`` (of class ``cls``, the engine's ``Tensor`` by
    default); its probe shapes ``avals`` are inferred (``engine._infer``) unless given.
    Made inside ``control_dependencies``, it reads the updated variables' new values."""
    controls = engine._active_controls()
    if controls:
        # made inside ``control_dependencies(updates)``: read those variables' new values
        new = dict((u.variable.id, u.new_value) for u in controls)
        leaves = [new[v.id] if isinstance(v, Node) and v._is_variable and v.id in new else v
                  for v in leaves]
    pvals = None
    if avals is None:
        avals, pvals = engine._infer(fn, leaves, treedef)
    t = (cls or engine.Tensor)(fn, leaves, treedef, avals, pvals, name=name)
    if controls:
        t._control_updates = controls
    if _builtin_any(getattr(v, '_uses_learning_phase', False)
                    for v in leaves if isinstance(v, Node)):
        t._uses_learning_phase = True
    return t


def pick(t, i):
    return t[i]


def outputs(engine, node, n):
    """The ``n`` outputs of a node of several (``engine._Multi``), each a node. Where the
    node's probe shapes hold one entry per output, each output takes its entry: inferring
    it (an abstract run of ``t[i]`` over all ``n`` entries) made a gradient of ``n``
    variables quadratic (DenseNet121's 605: seconds, in Keras' first ``train_on_batch``)."""
    given = _builtin_all(isinstance(a, tuple) and len(a) == n for a in node.avals)
    return [engine._node(functools.partial(pick, i=i), [node], engine._ONE,
                         avals=tuple(a[i] for a in node.avals) if given else None)
            for i in range(n)]


def multi_node(engine, fn, leaves, treedef, avals):
    """An ``engine._Multi`` node whose probe shapes ``avals`` are given (a tuple per
    probe)."""
    node = engine._Multi(fn, leaves, treedef, avals)
    if _builtin_any(getattr(v, '_uses_learning_phase', False)
                    for v in leaves if isinstance(v, Node)):
        node._uses_learning_phase = True
    return node


#: the probe shapes of the ops shared by every node of their kind (an engine marks them
#: ``fn.shared``: the operators, the fixed unary ops), by the op, its tree and its leaves'
#: probe shapes and constants: an optimizer repeats the same arithmetic over weights of the
#: same shapes (Adam over DenseNet121's 605 weights: 5,000 nodes), and each inference is an
#: abstract run of the op (about a millisecond)
_INFER_CACHE = {}
INFER_CACHE_SIZE = 4096


def infer_key(fn, leaves, treedef):
    """The key of ``fn`` over ``leaves`` (flattened by ``treedef``) in the probe-shape cache,
    or None where it is not cached (an op not shared, a leaf with probe values, an array
    or another object among the leaves)."""
    if not getattr(fn, 'shared', False):
        return None
    try:
        hash(treedef)
    except TypeError:
        return None
    key = [fn, treedef]
    for v in leaves:
        if isinstance(v, Node):
            if v.holds_probe_values():
                return None
            a, b = v.avals
            key.append((a.shape, a.dtype, getattr(a, 'weak_type', False),
                        b.shape, b.dtype, getattr(b, 'weak_type', False)))
        elif v is None or type(v) in (int, float, bool):
            key.append((type(v), v))
        else:
            return None
    return tuple(key)


def cached_infer(key, infer):
    """``infer()`` (a node's ``(avals, pvals)``), kept under ``key`` (:func:`infer_key`;
    None: not kept)."""
    if key is None:
        return infer()
    known = _INFER_CACHE.get(key)
    if known is None:
        known = infer()
        if len(_INFER_CACHE) >= INFER_CACHE_SIZE:
            _INFER_CACHE.clear()
        _INFER_CACHE[key] = known
    return known


def context_op(fn):
    """Mark ``fn(ctx, *args)`` as an op that needs the evaluation context."""
    fn.needs_context = True
    return fn


# ---------------------------------------------------------------------------
# Static shapes: an unknown size meeting a known one
# ---------------------------------------------------------------------------

def collapsed(t, p, spec):
    """``t``'s aval at probe ``p`` with its unknown sizes set to 1 (``spec(shape, dtype)``
    makes an aval)."""
    a, b = t.avals
    shape = tuple(1 if x != y else x for x, y in zip(a.shape, b.shape))
    return spec(shape, t.avals[p].dtype)


def filled(t, tensors, p, align, spec):
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
    return spec(tuple(shape), t.avals[p].dtype)


def infer_broadcasting_unknowns(g, tensors, p, error, spec, evaluate):
    """An op refused at the probe sizes because an unknown size meets a known one
    (``(None, 4) * (3, 4)``): as TensorFlow's shape inference, the unknown size is taken
    to broadcast. Tries each input's unknown sizes as 1, then all of them:
    ``evaluate(g, avals)`` is the engine's abstract run of ``g``, ``spec(shape, dtype)``
    its aval; raises ``error`` when no guess runs."""
    unknown = [i for i, t in enumerate(tensors) if t.avals[0].shape != t.avals[1].shape]
    candidates = []
    for align in ('left', 'right'):
        candidates.append([filled(t, tensors, p, align, spec) for t in tensors])
    for which in [[i] for i in unknown] + ([unknown] if len(unknown) > 1 else []):
        candidates.append([collapsed(t, p, spec) if i in which else t.avals[p]
                           for i, t in enumerate(tensors)])
    for specs in candidates:
        try:
            return evaluate(g, specs)
        except Exception:
            continue
    raise error


# ---------------------------------------------------------------------------
# The graph's walk order
# ---------------------------------------------------------------------------

def walk(roots):
    """Every node reachable from ``roots`` (a list), each once, leaves first."""
    seen, order = set(), []
    stack = [(r, False) for r in roots if isinstance(r, Node)]
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
            if isinstance(v, Node) and v.id not in seen:
                stack.append((v, False))
    return order


def dependents(roots, sources):
    """The ids of the nodes among the ancestors of ``roots`` that depend on ``sources``."""
    src = set(s.id for s in sources)
    dep = set()
    for n in walk(roots):
        if n.id in src or _builtin_any(isinstance(v, Node) and v.id in dep
                                       for v in n.leaves):
            dep.add(n.id)
    return dep


def step_input_part(roots, local, step_input, rule):
    """The part of a loop body's step graph that reads the step's input and no state, where
    it can run on every time step at once (an RNN cell's ``K.dot(inputs, kernel)``: one
    matmul over the whole sequence instead of one per step, and one in its gradient).

    ``roots``: the step's outputs and new states; ``local``: the ids of the nodes the step
    computes (:func:`dependents` of the stand-ins); ``step_input``: the input's stand-in;
    ``rule(node, batched)``: the engine's answer for one node whose leaves are flagged in
    ``batched`` (True: the leaf holds every step's value, time on axis 1; False: a value
    fixed over the steps, or a constant): a tuple with one entry per leaf (None: the leaf's
    value as it is; ``'expand'``: the fixed value needs a time axis of size 1 inserted at
    axis 1), or None where the op cannot run on all steps at once.

    Returns ``(nodes, transforms, frontier)``: the nodes in evaluation order, each one's
    tuple from ``rule``, and the ids of those among them that a node outside the part reads
    (or that are roots): the values a step is seeded with. Nodes with a context of their own
    (``needs_context``, lazy leaves) never belong to it.
    """
    order = walk(roots)
    part, transforms = [], {}
    in_part = set([step_input.id])
    for n in order:
        if n.id not in local or n.op is None or n.id in in_part:
            continue
        if getattr(n.op, 'needs_context', False) or getattr(n.op, 'lazy_leaves', ()):
            continue
        batched, fixed_ok = [], True
        for v in n.leaves:
            if isinstance(v, Node):
                if v.id in in_part:
                    batched.append(True)
                elif v.id in local:
                    fixed_ok = False     # reads a state, or a step value not in the part
                    break
                else:
                    batched.append(False)
            else:
                batched.append(False)
        if not fixed_ok or not _builtin_any(batched):
            continue
        how = rule(n, tuple(batched))
        if how is None:
            continue
        in_part.add(n.id)
        part.append(n)
        transforms[n.id] = how
    if not part:
        return [], {}, set()
    ids = set(n.id for n in part)
    frontier = set(r.id for r in roots if isinstance(r, Node) and r.id in ids)
    for n in order:
        if n.id in local and n.id not in ids:
            for v in n.leaves:
                if isinstance(v, Node) and v.id in ids:
                    frontier.add(v.id)
    return part, transforms, frontier


def static_shape(x):
    if isinstance(x, Node):
        return x.shape
    return tuple(np.shape(x))


def check_broadcast(name, a, b):
    """Raise ``ValueError`` where the static shapes of the operator ``name``'s operands
    cannot broadcast (two known sizes of an axis, neither 1, that differ), before the
    engine's probe run would fail with its own error at the probe sizes."""
    sa, sb = static_shape(a), static_shape(b)
    if shape_rules.broadcast_conflict(sa, sb):
        raise ValueError('%s: operands of shapes %s and %s do not broadcast together'
                         % (name, tuple(sa), tuple(sb)))


def axis_arg(axis, ndim):
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return tuple(sorted(set(int(a) % ndim if ndim else int(a) for a in axis)))
    return int(axis) % ndim if ndim else int(axis)


# ---------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------

class Context(object):
    """One evaluation of the graph: the placeholders' feeds, the variables' values (where
    they are not the variables' own), the learning phase. A child context (a gradient, a
    loop body) evaluates its own nodes and asks its parent for the rest.

    A subclass sets ``_engine`` (the adapter's ``core``: ``_unflatten``,
    ``_LEARNING_PHASE``), and may redefine :meth:`_call` (how an op runs) and
    :meth:`_phase` (the learning phase's value)."""
    _engine = None

    def __init__(self, feeds=None, learning_phase=None, parent=None, local=None, seeds=None,
                 variables=None):
        self.feeds = feeds if feeds is not None else {}
        self.variables = variables if variables is not None else {}
        self.learning_phase = learning_phase
        self.parent = parent
        self.local = local          # the ids of the nodes this child evaluates itself
        self.memo = dict(seeds or {})

    def value(self, node):
        if not isinstance(node, Node):
            return node
        if node.id in self.memo:
            return self.memo[node.id]
        if self.parent is not None and node.id not in self.local:
            return self.parent.value(node)
        unflatten = self._engine._unflatten
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
                    if isinstance(v, Node) and v.id not in self.memo and i not in lazy:
                        stack.append((v, False))
                continue
            vals = [(self.memo.get(v.id) if i in lazy else self.memo[v.id])
                    if isinstance(v, Node) else v for i, v in enumerate(n.leaves)]
            args = unflatten(n.treedef, vals)
            if getattr(n.op, 'needs_context', False):
                out = n.op(self, *args)
            else:
                out = self._call(n, args, vals)
            self.memo[n.id] = out
        return self.memo[node.id]

    def _call(self, n, args, vals):
        """The value of node ``n`` from its arguments ``args`` (its leaves' values
        ``vals``)."""
        return n.op(*args)

    def _phase(self, phase):
        """The learning phase's value (``phase``, an int) as the ops read it."""
        return phase

    def _leaf(self, n):
        if n is self._engine._LEARNING_PHASE:
            if n in self.feeds:
                return self.feeds[n]
            return self._phase(self.learning_phase if self.learning_phase is not None
                               else 0)
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
        return type(self)(self.feeds, self.learning_phase, parent=self, local=local,
                          seeds=seeds, variables=self.variables)


class Plan(object):
    """The evaluation of ``roots`` worked out once, for a context that runs it many times
    (a loop body at every time step, a training function at every batch): the nodes in
    evaluation order, each with the memo keys its leaves' values are read from. Running it
    does what :meth:`Context.value` does for each root, without the walk, the stack and
    the questions to the parent at every node.

    ``local``: the ids of the nodes a child context evaluates itself (None: a root
    context, which evaluates every node). The plan's inputs are the nodes it does not
    compute: for a child, the nodes outside ``local`` (read from the parent, once per
    :meth:`run` or given as ``outer``) and the stand-ins inside it (given as seeds); for a
    root context, the graph's leaves (placeholders, variables, the learning phase). A
    node whose leaf is lazy (``op.lazy_leaves``: a switch's branches, a gradient's loss)
    is run with what the memo holds there; the op evaluates the rest itself.

    Example (a loop body's step graph, run per time step):
        >>> plan = Plan([out] + new_states, local)
        >>> outer = plan.outer_values(ctx)
        >>> child = plan.run(ctx, {x_in.id: x_t, s_in.id: s_t}, outer)
        >>> child.memo[out.id]

    ``fuse`` (an option): ``fuse(steps) -> steps``, the engine's rewrite of the evaluation
    order (each step ``(id, node, memo keys, lazy leaves, needs_context, reuse positions)``),
    e.g. one op in place of several that read one value: a step whose node needs the context
    may write other nodes' values into ``ctx.memo``, and a node already there is skipped.

    ``reuse`` (a root plan's option): ``reuse(node, vals, positions)``, the engine's
    in-place form of an op marked ``op.out_fn`` (an elementwise op that can write into one
    of its operands), given the leaf positions whose values the op may overwrite, returning
    None where the values do not allow it. A position qualifies when its leaf's op is marked
    ``op.fresh`` (its value is always a new buffer, never a view of a variable or of an
    input) and nothing else in the graph of ``roots`` reads that leaf (one use, not a root).
    """

    def __init__(self, roots, local=None, reuse=None, fuse=None):
        self.roots = [r for r in roots if isinstance(r, Node)]
        self.local = local
        self.reuse = reuse
        self.fuse = fuse
        self._steps = None
        self._outer = None
        self._consts = None

    def _reusable(self):
        """{node id: the leaf positions whose buffers the node may write into}."""
        uses = {}
        for r in self.roots:
            uses[r.id] = uses.get(r.id, 0) + 2     # a root's value is read after the run
        nodes = walk(self.roots)
        for n in nodes:
            for v in n.leaves:
                if isinstance(v, Node):
                    uses[v.id] = uses.get(v.id, 0) + 1
        out = {}
        for n in nodes:
            if n.op is None or not getattr(n.op, 'out_fn', None):
                continue
            positions = tuple(i for i, v in enumerate(n.leaves)
                              if isinstance(v, Node) and v.op is not None and
                              getattr(v.op, 'fresh', False) and uses.get(v.id) == 1)
            if positions:
                out[n.id] = positions
        return out

    def _build(self):
        local = self.local
        steps, outer, consts = [], [], {}
        reusable = self._reusable() if self.reuse is not None else {}
        seen = set()
        stack = [(r, False) for r in reversed(self.roots)]
        while stack:
            n, ready = stack.pop()
            if ready:
                lazy = getattr(n.op, 'lazy_leaves', ())
                keys = []
                for i, v in enumerate(n.leaves):
                    if isinstance(v, Node):
                        keys.append(v.id)
                    else:
                        k = -1 - len(consts)
                        consts[k] = v
                        keys.append(k)
                steps.append((n.id, n, tuple(keys), frozenset(lazy),
                              bool(getattr(n.op, 'needs_context', False)),
                              reusable.get(n.id)))
                continue
            if n.id in seen:
                continue
            seen.add(n.id)
            if (local is not None and n.id not in local) or n.op is None:
                # an input: the parent's value, a seed, or (root context) a graph leaf
                outer.append(n)
                continue
            stack.append((n, True))
            lazy = getattr(n.op, 'lazy_leaves', ())
            for i in range(len(n.leaves) - 1, -1, -1):
                v = n.leaves[i]
                if isinstance(v, Node) and v.id not in seen and i not in lazy:
                    stack.append((v, False))
        if self.fuse is not None:
            steps = self.fuse(steps)
        self._steps, self._outer, self._consts = steps, outer, consts

    def outer_values(self, ctx, given=()):
        """{id: value} of the plan's inputs that ``ctx`` (the parent of the contexts that
        run it; for a root plan, the context itself) provides: parent values and graph
        leaves, not the stand-ins a child is seeded with nor the ids in ``given``."""
        if self._steps is None:
            self._build()
        out = dict(self._consts)
        for n in self._outer:
            if n.id in given:
                continue
            if self.local is None:
                out[n.id] = ctx.memo[n.id] if n.id in ctx.memo else ctx._leaf(n)
            elif n.id not in self.local:
                out[n.id] = ctx.value(n)
        return out

    def run(self, ctx, seeds=None, outer=None):
        """Evaluate the plan: for a child plan in a new child of ``ctx`` seeded with
        ``seeds`` ({id: value} of the stand-ins) and ``outer`` (:meth:`outer_values`,
        read from ``ctx`` when not given); for a root plan in ``ctx`` itself. Returns the
        context that holds the values (``.memo[node.id]``)."""
        if outer is None:
            outer = self.outer_values(ctx, seeds or ())
        if self.local is None:
            run_in = ctx
            memo = ctx.memo
            for k, v in outer.items():
                if k not in memo:
                    memo[k] = v
        else:
            memo = dict(outer)
            if seeds:
                memo.update(seeds)
            run_in = ctx.child(self.local, None)
            run_in.memo = memo
        unflatten = run_in._engine._unflatten
        call = None if type(run_in)._call is Context._call else run_in._call
        reuse = self.reuse
        for nid, n, keys, lazy, needs_context, positions in self._steps:
            if nid in memo:
                continue
            if lazy:
                vals = [memo.get(k) if i in lazy else memo[k] for i, k in enumerate(keys)]
            else:
                vals = [memo[k] for k in keys]
            if positions is not None:
                out = reuse(n, vals, positions)
                if out is not None:
                    memo[nid] = out
                    continue
            args = unflatten(n.treedef, vals)
            if needs_context:
                memo[nid] = n.op(run_in, *args)
            elif call is None:
                memo[nid] = n.op(*args)
            else:
                memo[nid] = call(n, args, vals)
        return run_in


# ---------------------------------------------------------------------------
# The session stand-in, pending variable updates, control dependencies
# ---------------------------------------------------------------------------

class Session(object):
    """Session-like object: ``run(fetches, feed_dict=None)`` evaluates tensors (with the
    ``Function`` of ``engine``, the adapter's ``core``)."""

    def __init__(self, engine):
        self._engine = engine

    def run(self, fetches, feed_dict=None):
        """Evaluate ``fetches`` (a tensor or a list) with ``feed_dict`` ({placeholder:
        value}); returns numpy values in the same structure."""
        feed_dict = feed_dict or {}
        keys = list(feed_dict.keys())
        single = not isinstance(fetches, (list, tuple))
        outs = [fetches] if single else list(fetches)
        values = self._engine.Function(keys, outs)([feed_dict[k] for k in keys])
        return values[0] if single else values


class Update(object):
    """A pending variable update, applied by the ``function`` it is given to (or by
    ``eval``): ``variable`` gets ``new_value``. A subclass sets ``_engine`` (the adapter's
    ``core``: ``_active_controls``, ``Function``)."""
    _engine = None

    def __init__(self, variable, new_value):
        self.variable = variable
        self.new_value = new_value
        self._uses_learning_phase = getattr(new_value, '_uses_learning_phase', False)
        # the updates it comes after (made inside their ``control_dependencies``)
        self._controls = self._engine._active_controls()

    # Keras 2 code passes updates around as (variable, value) pairs sometimes
    def __iter__(self):
        return iter((self.variable, self.new_value))

    def __getitem__(self, i):
        return (self.variable, self.new_value)[i]

    def __len__(self):
        return 2

    def run(self):
        self._engine.Function([], [], updates=[self])([])

    @property
    def op(self):
        return self

    @property
    def shape(self):
        return self.variable.shape

    @property
    def dtype(self):
        return self.variable.dtype


def active_controls(controls):
    """The updates of the open ``control_dependencies`` blocks (``controls``: a list of
    their groups), each once."""
    out = []
    for group in controls:
        out.extend(u for u in group if u not in out)
    return out


@contextlib.contextmanager
def control_dependencies(controls, control_inputs):
    """The block of ``control_dependencies(control_inputs)``: the updates among
    ``control_inputs`` (and those they come after) form a group on ``controls`` (the
    adapter's list of open groups) while it runs."""
    if control_inputs is not None and not isinstance(control_inputs, (list, tuple)):
        raise ValueError('control_dependencies: expected None or a list, got %r'
                         % (control_inputs,))
    group = []
    for c in control_inputs or []:
        if isinstance(c, Update):
            group.extend(u for u in c._controls if u not in group)
            if c not in group:
                group.append(c)
    controls.append(group)
    try:
        yield
    finally:
        controls.pop()


def with_control_updates(outputs, pairs):
    """``pairs`` preceded by the updates that the graph of ``outputs`` and ``pairs`` was
    made after (``control_dependencies``): computing those nodes applies them."""
    extra = []
    while True:
        roots = [o for o in outputs if isinstance(o, Node)] + \
            [p.new_value for p in extra + pairs if isinstance(p.new_value, Node)]
        found = []
        for u in pairs + extra:
            found.extend(u._controls)
        for n in walk(roots):
            found.extend(getattr(n, '_control_updates', ()))
        new = [u for u in found if u not in pairs and u not in extra]
        if not new:
            return extra + pairs
        for u in new:
            if u not in extra:
                extra.append(u)


def flat_updates(updates):
    """``function``'s updates as one list (a dict's items; nested lists opened)."""
    if not updates:
        return []
    if isinstance(updates, dict):
        return list(updates.items())
    out = []
    for u in updates:
        if isinstance(u, list) and u and isinstance(u[0], (list, tuple, Update)):
            out.extend(flat_updates(u))
        else:
            out.append(u)
    return out


def depth_scope(depth):
    """A context manager function that counts, in ``depth`` (a one-item list), how deep the
    code is inside it (``_tracing_loop_body``: the ops of a loop body)."""
    @contextlib.contextmanager
    def scope():
        depth[0] += 1
        try:
            yield
        finally:
            depth[0] -= 1
    return scope


# ---------------------------------------------------------------------------
# The per-op wrapper, int_shape, decodings
# ---------------------------------------------------------------------------

def records_keras_shape(func):
    """Applied where a shape-changing op is defined (in its section's module): as Keras
    2.3.1's Theano backend (and our Theano adapter), the op's graph result carries
    ``_keras_shape``, which Keras' engine reads beside ``_uses_learning_phase``; ``reshape``
    also passes ``_uses_learning_phase`` on from its input."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        out = func(*args, **kwargs)
        if isinstance(out, Node):
            out._keras_shape = out.shape
            if func.__name__ == 'reshape':
                out._uses_learning_phase = getattr(args[0] if args else kwargs.get('x'),
                                                   '_uses_learning_phase', False)
        return out
    return wrapper


def int_shape(x):
    """The ``_keras_shape`` Keras recorded, else the node's static shape."""
    if isinstance(x, Node) and x._is_variable:
        return tuple(x.avals[0].shape)
    recorded = getattr(x, '_keras_shape', None)
    if isinstance(x, Node):
        if recorded is not None and len(recorded) == x.ndim:
            return tuple(None if d is None else int(d) for d in recorded)
        return x.shape
    if hasattr(x, 'shape'):
        return tuple(int(d) for d in x.shape)
    return tuple(np.shape(x))


def trim_decoded(dec):
    """A concrete ``(samples, steps)`` decoding (a numpy array) cut to its longest path
    (the columns holding a label), as TensorFlow's dense decodings are as wide as that
    path."""
    dec = np.asarray(dec)
    width = int(np.max(np.sum(dec >= 0, axis=1))) if dec.size else 0
    return np.array(dec[:, :width])
