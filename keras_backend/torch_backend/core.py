"""PyTorch's machinery for the Keras 2 backend API: how this adapter holds a graph and runs it.

The symbolic :class:`Tensor` and its operators, the graph nodes (``_apply``, ``_node``,
static shapes by probing on PyTorch's ``meta`` device), their evaluation (``_Context``), the
random generators, the learning phase and the session stand-in, pending variable updates, the
:class:`Function` of ``K.function``, the per-op wrapper :func:`records_keras_shape`, and the
API's ``int_shape``, ``dtype``, ``cast`` and ``stack``, which the machinery uses. The API
functions are in the section modules (``tensors``, ``math``, ...) that ``ops`` gathers;
nothing here imports those.

Design
======
PyTorch, as JAX, is eager: it has no graph of its own, and Keras 2 code builds graphs
(placeholders, ops on them, ``gradients``, ``function(inputs, outputs, updates)``, a
learning phase, variables updated in place). This adapter follows the JAX adapter's design
(``keras_backend.jax_backend.core``) with PyTorch's tools:

* **Nodes.** An op whose arguments include a symbolic :class:`Tensor` (a placeholder, a
  variable, or a node built on them) returns a new node that records the op (a function of
  ``torch`` ops) and its arguments. An op on concrete values only (numpy arrays,
  ``torch.Tensor``) runs at once and returns a ``torch.Tensor``. Variables are graph
  leaves, so ``p - lr * g`` in an optimizer stays a node that reads the variable's value
  at each call.
* **Static shapes.** Each node knows its shape and dtype when it is built: the op runs on
  tensors of PyTorch's ``meta`` device (shapes and dtypes, no data, no arithmetic) twice,
  with every unknown size (``None``) of the placeholders replaced by two different probe
  sizes; a size that comes out the same both times is static, one that differs is
  ``None``. Shape values (``K.shape(x)`` and arithmetic on it) are computed concretely at
  both probes, so ``K.reshape(x, (K.shape(x)[0], -1))`` has a static rank and known sizes.
* **Functions.** ``K.function`` returns one callable (:class:`Function`) that evaluates the
  nodes it needs, and only those, with eager ``torch`` ops under ``torch.no_grad``: the
  gradients first (each one's forward pass is handed to the outputs, so a Keras train step
  computes its forward once), then the updates' new values and the outputs, all from the
  variables' old values; then the variables are written in place (``Tensor.copy_``). Nothing
  is compiled (no ``torch.compile``: its first call costs seconds to minutes on a CPU, and
  Keras builds many small functions); the evaluation order is worked out once per function
  (:class:`keras_backend.eager_graph.graph.Plan`: the nodes in order, each with where its
  arguments come from). Where the optimizer's arithmetic makes a large tensor that the
  graph reads only once (Adam's ``beta_1 * m`` before ``+ (1 - beta_1) * g``), the next op
  writes into its buffer (:func:`_reuse_buffer`), as Keras 3's optimizers on PyTorch update
  in place; autograd's part never does.
* **Gradients** are ``torch.autograd.grad`` of the part of the graph between the loss and
  the variables (or any tensors), recomputed inside the gradient's node with the sources
  requiring grad; inside another gradient (a gradient of a gradient) with ``create_graph``.
* **Random ops** draw from a ``torch.Generator`` of their own, seeded by ``seed`` (or for
  None by numpy's global generator, as Keras 2.3.1's backends seed), which advances at each
  draw, so each call draws anew (dropout) and a seed, or ``np.random.seed``, reproduces a
  run.
* **Loops.** ``rnn``, ``map_fn``, ``foldl`` and ``foldr`` build their step graph once on
  stand-in inputs, and run it in a Python loop over the steps (masks, ``go_backwards``,
  ``constants``, ``input_length``) from its plan, what the step reads from outside (weights,
  dropout masks) computed once per call, the steps of the input taken by one
  ``torch.unbind`` (whose gradient is one stack); autograd differentiates through the loop.
* **Host code.** CTC beam search is the shared search (:mod:`keras_backend.ctc_search`) on
  the log-probabilities copied to the host; its paths come back as ``torch`` tensors.
"""
import contextlib
import functools
import operator
import sys

import numpy as np

from .. import checks, common, engines
from ..common import floatx
from ..eager_graph import function as eager_function, graph

try:
    import torch
except ImportError as _e:  # pragma: no cover - depends on the machine
    raise engines.engine_import_error('PyTorch', 'torch', 'torch', _e)

ENGINE = 'torch'
ENGINE_VERSION = torch.__version__.split('+')[0]

_builtin_max, _builtin_min, _builtin_any, _builtin_all = max, min, any, all
_builtin_slice = slice
_builtin_sum = sum

_PROBES = graph.PROBES

_IDS = graph.IDS

#: this module: the engine the shared graph layer (``keras_backend.eager_graph``) reads, and
#: ``checks.feed_specs`` reads ``int_shape`` and ``dtype`` from
_THIS = sys.modules[__name__]

#: whether the ops run now on probe tensors (``meta``) to learn a node's shape
_PROBING = [0]

#: the device the values live on
_DEVICE = torch.device('cpu')


# ---------------------------------------------------------------------------
# Dtypes
# ---------------------------------------------------------------------------

_TORCH_DTYPES = {
    'float16': torch.float16, 'bfloat16': torch.bfloat16, 'float32': torch.float32,
    'float64': torch.float64, 'int8': torch.int8, 'int16': torch.int16,
    'int32': torch.int32, 'int64': torch.int64, 'uint8': torch.uint8, 'bool': torch.bool,
    'complex64': torch.complex64, 'complex128': torch.complex128,
}
for _n in ('uint16', 'uint32', 'uint64'):
    if hasattr(torch, _n):
        _TORCH_DTYPES[_n] = getattr(torch, _n)
_NAMES = dict((v, k) for k, v in _TORCH_DTYPES.items())


def _dtype_name(dt):
    """The numpy name of a dtype (a ``torch.dtype``, a numpy dtype or a name)."""
    if dt is None:
        return None
    if isinstance(dt, torch.dtype):
        return _NAMES[dt]
    if hasattr(dt, 'name') and not isinstance(dt, (str, np.dtype)):
        dt = dt.name
    if str(dt) == 'bfloat16':
        return 'bfloat16'
    return np.dtype(dt).name


checks.register_dtype_names(
    lambda v: _NAMES.get(v) if isinstance(v, torch.dtype) else None)


def _torch_dtype(dt):
    """The ``torch.dtype`` of a dtype given any way (None: floatx)."""
    if isinstance(dt, torch.dtype):
        return dt
    name = _dtype_name(dt if dt is not None else floatx())
    try:
        return _TORCH_DTYPES[name]
    except KeyError:
        raise TypeError('PyTorch has no dtype %r' % (name,))


def _is_float(dt):
    return _torch_dtype(dt).is_floating_point


def _is_int(dt):
    dt = _torch_dtype(dt)
    return not dt.is_floating_point and not dt.is_complex and dt is not torch.bool


_DTypeName = graph.DTypeName


class _Spec(object):
    """The shape and dtype of a value at one probe size (``jax.ShapeDtypeStruct``'s role)."""
    __slots__ = ('shape', 'dtype')

    def __init__(self, shape, dtype):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = _torch_dtype(dtype)

    @property
    def ndim(self):
        return len(self.shape)

    def meta(self):
        return torch.empty(self.shape, dtype=self.dtype, device='meta')

    def __repr__(self):
        return '_Spec(%s, %s)' % (self.shape, self.dtype)


def _meta_of(a):
    """A probe value of a :class:`_Spec` (a tuple of them for a node of several
    outputs); anything else as it is."""
    if isinstance(a, _Spec):
        return a.meta()
    if isinstance(a, tuple):
        return tuple(_meta_of(e) for e in a)
    return a


def _spec_of(v):
    """The :class:`_Spec` of a value, or a tuple of them for a tuple of values."""
    if isinstance(v, (tuple, list)):
        return tuple(_spec_of(e) for e in v)
    if isinstance(v, torch.Tensor):
        return _Spec(v.shape, v.dtype)
    a = np.asarray(v)
    return _Spec(a.shape, _dtype_name(a.dtype) if a.dtype != np.float64 or
                 isinstance(v, (np.ndarray, np.generic)) else 'float64')


# ---------------------------------------------------------------------------
# Small pytrees (nested lists and tuples)
# ---------------------------------------------------------------------------

def _flatten(args):
    """``(leaves, treedef)`` of nested lists and tuples; anything else is a leaf. A tuple
    of leaves only (an op's plain positional arguments, most nodes) has the treedef
    ``_FLAT``, which ``_unflatten`` turns back without a walk: a graph evaluated op by op
    (a recurrent step at every time step) pays it at every node."""
    leaves = []

    def walk(v):
        if isinstance(v, list):
            return ('list', [walk(e) for e in v])
        if isinstance(v, tuple) and not isinstance(v, torch.Size):
            return ('tuple', [walk(e) for e in v])
        leaves.append(v)
        return None
    treedef = walk(args)
    if treedef is not None and treedef[0] == 'tuple' and \
            all(c is None for c in treedef[1]):
        return leaves, _FLAT
    return leaves, treedef


#: the treedef of a tuple of leaves
_FLAT = object()


def _unflatten(treedef, leaves):
    if treedef is _FLAT:
        return leaves
    it = iter(leaves)

    def build(d):
        if d is None:
            return next(it)
        kind, children = d
        out = [build(c) for c in children]
        return out if kind == 'list' else tuple(out)
    return build(treedef)


#: the treedef of one positional argument
_ONE = _flatten((0,))[1]


# ---------------------------------------------------------------------------
# The graph
# ---------------------------------------------------------------------------

class Tensor(graph.Node):
    """A symbolic value of this adapter's graph (:class:`keras_backend.eager_graph.graph.Node`):
    ``op`` is a function of the values of ``leaves``; ``avals`` the two probe
    :class:`_Spec`."""
    _label = 'torch_backend'
    _dtype_name = staticmethod(_dtype_name)

    # operators ----------------------------------------------------------
    def __getitem__(self, key):
        static = _static_key(key)
        if static is not _NOT_STATIC and not _has_negative_step(static):
            # ints and slices of ints: the key is made once (Keras' gate slices, a loop's
            # x[:, t]), not rebuilt at every evaluation
            return _apply(_StaticItem(static), self)
        return _apply(_getitem, self, _index_leaf(key))

    def __neg__(self):
        return _apply(torch.neg, self)

    def __abs__(self):
        return _apply(torch.abs, self)

    def __invert__(self):
        return _apply(_invert, self)


def _invert(v):
    return torch.logical_not(v) if v.dtype == torch.bool else torch.bitwise_not(v)


def _has_negative_step(key):
    parts = key if isinstance(key, tuple) else (key,)
    return _builtin_any(isinstance(p, _builtin_slice) and p.step is not None and
                        not isinstance(p.step, torch.Tensor) and p.step < 0 for p in parts)


def _negative_step_getitem(x, key):
    """``x[key]`` where slices step backwards (``x[..., ::-1]``, Keras' RGB to BGR),
    which PyTorch's indexing refuses: those axes are kept whole by the indexing, then
    taken in the slice's order by ``index_select`` (its gradient flows)."""
    parts = list(key) if isinstance(key, tuple) else [key]
    used = _builtin_sum(1 for p in parts if p is not None and p is not Ellipsis)
    if Ellipsis in parts:
        i = parts.index(Ellipsis)
        parts[i:i + 1] = [_builtin_slice(None)] * (x.ndim - used)
    kept, later, out_axis, in_axis = [], [], 0, 0
    for p in parts:
        if p is None:
            kept.append(p)
            out_axis += 1
            continue
        if isinstance(p, _builtin_slice) and p.step is not None and p.step < 0:
            later.append((out_axis, range(*p.indices(x.shape[in_axis]))))
            p = _builtin_slice(None)
        kept.append(p)
        if isinstance(p, _builtin_slice):
            out_axis += 1
        in_axis += 1
    out = x[tuple(kept)]
    for axis, positions in later:
        index = torch.as_tensor(list(positions), dtype=torch.long, device=out.device)
        out = out.index_select(axis, index)
    return out


def _getitem(x, k):
    key = _index_key(k)
    if _has_negative_step(key):
        return _negative_step_getitem(x, key)
    if isinstance(key, torch.Tensor) and key.dtype != torch.bool:
        if key.ndim > 0:
            return x[key.long()]
        if not key.is_floating_point():
            # an index computed in the graph (``x[K.argmin(...)]``, a loop's counter):
            # indexing with a 0-d tensor reads its value (``item()``), which no probe on
            # ``meta`` has; ``index_select`` of the one position keeps it an op
            i = key.long().reshape(1)
            i = torch.where(i < 0, i + x.shape[0], i)
            return x.index_select(0, i).squeeze(0)
    return x[key]


def _as_operand(v, other):
    """``v`` as an operand beside ``other``: numpy values become tensors, a 0-d tensor of
    a kind ``other`` has keeps ``other``'s dtype as a Python number would."""
    if isinstance(v, np.ndarray) or isinstance(v, np.generic):
        v = torch.as_tensor(np.array(v))
        if isinstance(other, torch.Tensor):
            v = v.to(other.device)
    return v


def _binary(name, reflected=False):
    fn = _BINARY[name]

    def op(a, b):
        if type(a) is torch.Tensor and type(b) is torch.Tensor:
            return fn(a, b)
        a, b = _as_operand(a, b), _as_operand(b, a)
        if not isinstance(a, torch.Tensor):
            a = _scalar_like(a, b)
        if not isinstance(b, torch.Tensor):
            b = _scalar_like(b, a)
        return fn(a, b)
    op.__name__ = name
    op.fresh = True     # a new tensor every time
    op.out_fn = _OUT_FORMS.get(name)
    op.shared = True    # one op for every node of the operator (its probes are cached)
    op.elementwise = name != 'matmul'

    def method(self, other):
        if not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        if name != 'matmul':
            graph.check_broadcast(name, self, other)
        if reflected:
            return _apply(op, _operand(other), self)
        return _apply(op, self, _operand(other))
    return method


#: what the operators of :class:`Tensor` take beside a tensor (else Python's TypeError)
_OPERAND_TYPES = (Tensor, torch.Tensor, int, float, bool, complex, np.ndarray, np.generic, list,
                  tuple)


def _scalar_like(v, other):
    """A Python number as a 0-d tensor of ``other``'s dtype (a float beside an integer
    tensor: floatx), so that the operation keeps the tensor's dtype."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return torch.as_tensor(v, device=other.device)
    dt = other.dtype
    if isinstance(v, float) and not (dt.is_floating_point or dt.is_complex):
        dt = _torch_dtype(floatx())
    if dt is torch.bool:
        dt = torch.int64 if isinstance(v, int) else _torch_dtype(floatx())
    return torch.as_tensor(v, dtype=dt, device=other.device)


def _floordiv(a, b):
    return torch.floor_divide(a, b)


def _truediv(a, b):
    return torch.true_divide(a, b)


_BINARY = {
    'add': torch.add, 'sub': torch.sub, 'mul': torch.mul, 'truediv': _truediv,
    'floordiv': _floordiv, 'mod': torch.remainder, 'pow': torch.pow,
    'and': lambda a, b: a & b, 'or': lambda a, b: a | b, 'xor': lambda a, b: a ^ b,
    'matmul': torch.matmul, 'lt': torch.lt, 'le': torch.le, 'gt': torch.gt, 'ge': torch.ge,
}

#: the binary ops whose result a K.function may write into a fresh operand's buffer
#: (:func:`_reuse_buffer`)
_OUT_FORMS = {'add': torch.add, 'sub': torch.sub, 'mul': torch.mul,
              'truediv': torch.true_divide}

for _name in ('add', 'sub', 'mul', 'truediv', 'floordiv', 'mod', 'pow', 'and', 'or', 'xor',
              'matmul'):
    setattr(Tensor, '__%s__' % _name, _binary(_name))
    setattr(Tensor, '__r%s__' % _name, _binary(_name, reflected=True))
for _name in ('lt', 'le', 'gt', 'ge'):
    setattr(Tensor, '__%s__' % _name, _binary(_name))


def _operand(y):
    """An operand as given; a list or tuple becomes a tensor first."""
    if isinstance(y, (Tensor, torch.Tensor, np.ndarray)):
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


class _StaticItem(object):
    """The op ``v[key]`` of a key made once (Python ints, slices of them, None, ``...``);
    ``key`` is read by :func:`_fuse_slices`."""
    __slots__ = ('key', '_get')
    __name__ = 'getitem'

    def __init__(self, key):
        self.key = key
        self._get = operator.itemgetter(key)

    def __call__(self, v):
        return self._get(v)


def _slice_of_one_axis(key, shape):
    """``(axis, start, stop, parts)`` where ``key`` takes ``[start, stop)`` of one axis of a
    value of static ``shape`` and the whole of the others it names (Keras' gate slices
    ``z[:, :units]``), else None."""
    parts = key if isinstance(key, tuple) else (key,)
    if len(parts) > len(shape) or \
            not _builtin_all(isinstance(p, _builtin_slice) for p in parts):
        return None
    found = None
    for axis, p in enumerate(parts):
        if p.step not in (None, 1) or (shape[axis] is None and p != _builtin_slice(None)):
            return None
        if p == _builtin_slice(None):
            continue
        start, stop, _ = p.indices(shape[axis])
        if (start, stop) == (0, shape[axis]):
            continue
        if found is not None or stop <= start:
            return None
        found = (axis, start, stop)
    return None if found is None else found + (len(parts),)


def _fuse_slices(steps):
    """A plan's rewrite (``graph.Plan``'s ``fuse``): static slices of one value that take
    disjoint ranges of one axis (Keras 2's LSTM and GRU gates, ``z[:, :units]``,
    ``z[:, units:2 * units]``, ...) come from one ``torch.split``, run where the first of
    them was. Same views, and one gradient (a concatenation) where each slice's gradient was
    a zero-filled tensor of the whole value, summed."""
    groups = {}
    for i, st in enumerate(steps):
        n, keys = st[1], st[2]
        if type(n.op) is not _StaticItem or len(keys) != 1 or not isinstance(n.leaves[0],
                                                                            Tensor):
            continue
        found = _slice_of_one_axis(n.op.key, n.leaves[0].shape)
        if found is not None:
            axis, start, stop, nparts = found
            groups.setdefault((keys[0], axis, nparts), []).append((start, stop, i))
    if not _builtin_any(len(g) > 1 for g in groups.values()):
        return steps
    steps = list(steps)
    for (_, axis, _), members in groups.items():
        if len(members) < 2:
            continue
        members.sort()
        taken = members[:1]
        for m in members[1:]:
            if m[0] >= taken[-1][1]:
                taken.append(m)     # a range overlapping a taken one stays a slice
        if len(taken) < 2:
            continue
        members = taken
        first = min(i for _, _, i in members)
        size = steps[first][1].leaves[0].shape[axis]
        sizes, targets, at = [], [], 0
        for start, stop, i in members:
            if start > at:
                sizes.append(start - at)
            targets.append((len(sizes), steps[i][0]))
            sizes.append(stop - start)
            at = stop
        if at < size:
            sizes.append(size - at)
        nid, n, keys = steps[first][:3]
        own = [j for j, t in targets if t == nid][0]
        steps[first] = (nid, _SplitStep(n.treedef, tuple(sizes), axis, tuple(targets), own),
                        keys, frozenset(), True, None)
    return steps


class _SplitStep(object):
    """A plan step of :func:`_fuse_slices`: splits the value, writes each slice's memo
    entry, returns its own."""
    __slots__ = ('treedef', 'sizes', 'axis', 'targets', 'own')

    def __init__(self, treedef, sizes, axis, targets, own):
        self.treedef, self.sizes, self.axis = treedef, sizes, axis
        self.targets, self.own = targets, own

    def op(self, ctx, v):
        pieces = torch.split(v, self.sizes, dim=self.axis)
        memo = ctx.memo
        for j, nid in self.targets:
            if nid not in memo:
                memo[nid] = pieces[j]
        return pieces[self.own]


def _static_key(key):
    """``key`` with Python ints where it holds only ints, None, ``...`` and slices of
    ints (numpy ints included); else ``_NOT_STATIC``."""
    if isinstance(key, tuple):
        parts = tuple(_static_key(k) for k in key)
        return _NOT_STATIC if _builtin_any(p is _NOT_STATIC for p in parts) else parts
    if isinstance(key, _builtin_slice):
        ends = (key.start, key.stop, key.step)
        if not _builtin_all(e is None or _is_python_int(e) for e in ends):
            return _NOT_STATIC
        return _builtin_slice(*[None if e is None else int(e) for e in ends])
    if _is_python_int(key):
        return int(key)
    if key is Ellipsis or key is None:
        return key
    return _NOT_STATIC


_NOT_STATIC = object()


def _is_python_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _index_key(leaf):
    kind, v = leaf
    if kind == 'tuple':
        return tuple(_index_key(k) for k in v)
    if kind == 'slice':
        return _builtin_slice(*[_static_int(s) for s in v])
    if _is_concrete_int(v):
        return int(_host(v))
    if isinstance(v, (list, np.ndarray)):
        return torch.as_tensor(np.asarray(v))
    return v


def _host(v):
    """A concrete value on the host (numpy), for sizes and indices read in Python."""
    if isinstance(v, torch.Tensor):
        return v.detach().cpu().numpy()
    return np.asarray(v)


def _engine_known_value(x):
    """The value of ``x`` where it is concrete (a ``torch.Tensor``: what ``K.constant`` and
    ops on it give), else None; the argument checks read it (indices in range...)."""
    if isinstance(x, torch.Tensor) and x.device.type != 'meta':
        try:
            return _host(x)
        except Exception:
            return None
    return None


def _is_concrete_int(v):
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return True
    if isinstance(v, (np.ndarray, torch.Tensor)) and np.ndim(v) == 0 and \
            not (isinstance(v, torch.Tensor) and v.device.type == 'meta'):
        return _is_int(v.dtype)
    return False


def _static_int(v):
    if v is None:
        return None
    if _is_concrete_int(v):
        return int(_host(v))
    return v


class Placeholder(Tensor):
    """A graph input: its value comes from a ``function`` call's feed."""
    _is_placeholder = True

    def __init__(self, shape, dtype, name=None, sparse=False):
        avals = tuple(_Spec(tuple(p if d is None else d for d in shape), dtype)
                      for p in _PROBES)
        Tensor.__init__(self, None, [], None, avals, name=name)
        self.sparse = sparse
        self._sparse = bool(sparse)


class Variable(Tensor):
    """A variable: a graph leaf whose value (a ``torch.Tensor``) functions read and
    update."""
    _is_variable = True

    def __init__(self, value, name=None, constraint=None, trainable=True):
        aval = _Spec(value.shape, value.dtype)
        Tensor.__init__(self, None, [], None, (aval, aval), name=name)
        self._value = value
        self.constraint = constraint
        self.trainable = trainable
        self._keras_shape = tuple(value.shape)

    @property
    def value(self):
        return self._value

    def _assign(self, value):
        if isinstance(value, torch.Tensor):
            value = value.detach().to(device=_DEVICE, dtype=self.avals[0].dtype)
        else:
            value = torch.tensor(np.asarray(value), dtype=self.avals[0].dtype, device=_DEVICE)
        if tuple(value.shape) != tuple(self.avals[0].shape):
            aval = _Spec(value.shape, value.dtype)
            self.avals = (aval, aval)
            self._keras_shape = tuple(value.shape)
            self._value = value.clone()
        else:
            self._value.copy_(value)

    def numpy(self):
        return np.array(_host(self._value))

    def __array__(self, dtype=None, copy=None):
        return np.asarray(_host(self._value), dtype=dtype)


_merge_shapes = graph.merge_shapes


#: ``fn(*args)`` at once on concrete values, else a new graph node
_apply = functools.partial(graph.apply, _THIS)
_node = functools.partial(graph.node, _THIS)


def _shaped_node(fn, args, shape, dtype):
    """A node of ``fn(*args)`` whose static ``shape`` (None where unknown) and ``dtype``
    the caller knows, for ops whose sizes the probes cannot give (a size read from a
    fed value) or that have no ``meta`` kernel."""
    leaves, treedef = _flatten(args)
    avals = tuple(_Spec(tuple(p if d is None else int(d) for d in shape), dtype)
                  for p in _PROBES)
    return _node(fn, leaves, treedef, avals=avals)


@contextlib.contextmanager
def _probing():
    _PROBING[0] += 1
    try:
        with torch.no_grad():
            yield
    finally:
        _PROBING[0] -= 1


def _device():
    """The device new tensors of an op go to: ``meta`` while probing."""
    return torch.device('meta') if _PROBING[0] else _DEVICE


def _probe_value(v, keep_concrete):
    """A concrete leaf as a probe sees it: a non-scalar tensor on ``meta`` (ops refuse to
    mix a CPU tensor with a meta one) unless ``keep_concrete`` (its values are read)."""
    if isinstance(v, torch.Tensor) and v.ndim > 0 and v.device.type != 'meta' and \
            not keep_concrete:
        return torch.empty(v.shape, dtype=v.dtype, device='meta')
    return v


def _infer_elementwise(fn, leaves):
    """(avals, None) of the elementwise op ``fn`` (``fn.elementwise``: the operators, the
    fresh unary ops) without PyTorch's ``meta`` dispatch (a Python reference per op, about a
    millisecond): the shape is the leaves' shapes broadcast, the dtype that of ``fn`` on
    one-element tensors of the leaves' dtypes and ranks (PyTorch's promotion reads those,
    not the sizes). None where that does not apply (a shape value, a concrete tensor, shapes
    that do not broadcast at a probe: the probes then decide)."""
    avals = []
    for p in range(2):
        shapes, small = [], []
        for v in leaves:
            if isinstance(v, Tensor):
                a = v.avals[p]
                if v.pvals is not None or not isinstance(a, _Spec):
                    return None
                shapes.append(a.shape)
                small.append(torch.ones((1,) * len(a.shape), dtype=a.dtype))
            elif v is None or type(v) in (int, float, bool):
                small.append(v)
            else:
                return None
        try:
            shape = torch.broadcast_shapes(*shapes)
            with torch.no_grad():
                out = fn(*small)
        except (RuntimeError, TypeError, ValueError):
            return None
        if not isinstance(out, torch.Tensor):
            return None
        avals.append(_Spec(shape, out.dtype))
    return tuple(avals), None


def _infer(fn, leaves, treedef):
    """(avals, pvals) of ``fn`` over ``leaves`` at both probe sizes."""
    key = graph.infer_key(fn, leaves, treedef) if treedef is _FLAT else None
    if key is None:
        return _infer_probes(fn, leaves, treedef)

    def infer():
        known = _infer_elementwise(fn, leaves) if getattr(fn, 'elementwise', False) else None
        return known if known is not None else _infer_probes(fn, leaves, treedef)
    return graph.cached_infer(key, infer)


def _infer_probes(fn, leaves, treedef):
    avals, pvals = [], []
    if getattr(fn, 'shape_only', False):
        # the value depends on the inputs' shapes alone: known at both probes
        for p in range(2):
            vals = [v.avals[p] if isinstance(v, Tensor) else v for v in leaves]
            out = fn(*_unflatten(treedef, vals))
            avals.append(_spec_of(out))
            pvals.append(out)
        return tuple(avals), tuple(pvals)
    stateful = getattr(fn, 'stateful', False)
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
        if not abstract and not stateful:
            try:
                with _probing():    # new tensors on meta: the size before any memory
                    spec = _spec_of(fn(*_unflatten(treedef, vals)))
            except Exception:
                spec = None
            if spec is not None and int(np.prod(spec.shape)) > graph.PROBE_VALUE_LIMIT:
                avals.append(spec)      # a tensor made from shape values: no probe value
                continue
            with torch.no_grad():
                out = fn(*_unflatten(treedef, vals))
            if isinstance(out, (tuple, list)):
                raise TypeError('shape-valued ops return one array')
            if not isinstance(out, torch.Tensor):
                out = torch.as_tensor(np.asarray(out))
            avals.append(_spec_of(out))
            pvals.append(out)
            continue

        def g(abstract_vals, keep_concrete=False):
            v = [_probe_value(e, keep_concrete) for e in vals]
            for i, a in zip(abstract, abstract_vals):
                v[i] = _meta_of(a)
            with _probing():
                return _spec_of(fn(*_unflatten(treedef, v)))
        specs = [leaves[i].avals[p] for i in abstract]
        try:
            out = _eval_shape(g, specs)
        except Exception as first:
            out = _infer_broadcasting_unknowns(g, [leaves[i] for i in abstract], p, first)
        avals.append(out)
    return tuple(avals), (tuple(pvals) if len(pvals) == 2 else None)


def _eval_shape(g, specs):
    """``g`` on probe ``specs``; again with the concrete leaves kept on the CPU when the
    op read one's values (a shape given as a tensor)."""
    try:
        return g(specs)
    except (NotImplementedError, RuntimeError, TypeError, ValueError, IndexError) as e:
        try:
            return g(specs, keep_concrete=True)
        except Exception:
            raise e


def _infer_broadcasting_unknowns(g, tensors, p, error):
    if not _builtin_all(isinstance(t.avals[0], _Spec) for t in tensors):
        raise error
    return graph.infer_broadcasting_unknowns(g, tensors, p, error, _Spec, _eval_shape)


class _Multi(Tensor):
    """A node with several outputs (a loop, a gradient bundle); read with :func:`_outputs`."""


_outputs = functools.partial(graph.outputs, _THIS)
_pick = graph.pick


def _apply_multi(fn, n, *args):
    """``fn(*args)`` returning ``n`` tensors: at once on concrete values, else ``n`` nodes
    reading one :class:`_Multi` node."""
    leaves, treedef = _flatten(args)
    if not _builtin_any(isinstance(v, Tensor) for v in leaves):
        return tuple(fn(*args))
    avals = []
    for p in range(2):
        idx = [i for i, v in enumerate(leaves) if isinstance(v, Tensor)]

        def g(abstract, keep_concrete=False, p=p, idx=idx):
            vals = [_probe_value(v, keep_concrete) for v in leaves]
            for i, a in zip(idx, abstract):
                vals[i] = _meta_of(a)
            with _probing():
                return tuple(_spec_of(o) for o in fn(*_unflatten(treedef, vals)))
        avals.append(_eval_shape(g, [leaves[i].pvals[p] if leaves[i].pvals is not None
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
    variables' values are their own tensors; the learning phase is an int32 tensor."""
    _engine = _THIS


    def _phase(self, phase):
        return torch.tensor(phase, dtype=torch.int32)


def _is_array_tree(v):
    """Whether ``v`` is a tensor or a (nested) tuple/list of tensors."""
    if isinstance(v, (tuple, list)):
        return _builtin_all(_is_array_tree(e) for e in v)
    return isinstance(v, torch.Tensor)


_context_op = graph.context_op
_walk = graph.walk
#: every evaluation plan (functions, loop bodies, gradients' forward passes): gate slices of
#: one value split once
_Plan = functools.partial(graph.Plan, fuse=_fuse_slices)
_dependents = graph.dependents
_step_input_part = graph.step_input_part


# ---------------------------------------------------------------------------
# Helpers shared by the ops
# ---------------------------------------------------------------------------

def _to_tensor(x, dtype=None):
    """A Tensor or ``torch.Tensor``; Python and numpy values become tensors of ``dtype``
    (floatx for Python floats, int32 for Python ints)."""
    if isinstance(x, Tensor):
        if dtype is not None and x.dtype != _dtype_name(dtype):
            return cast(x, dtype)
        return x
    if isinstance(x, torch.Tensor):
        return x if dtype is None else x.to(_torch_dtype(dtype))
    if isinstance(x, (list, tuple)) and _holds_graph_values(x):
        # e.g. ``K.prod([K.shape(x)[a] for a in axes])``: stack the parts in the graph
        return stack([_to_tensor(e, dtype) for e in x])
    if hasattr(x, 'toarray'):
        x = x.toarray()
    arr = np.asarray(x)
    if dtype is None:
        if arr.dtype.kind == 'f' and not isinstance(x, (np.ndarray, np.generic)):
            dtype = floatx()
        elif arr.dtype.kind in 'iu' and not isinstance(x, (np.ndarray, np.generic)):
            dtype = 'int32'
        else:
            dtype = arr.dtype
    return _from_numpy(arr, dtype)


def _from_numpy(arr, dtype=None):
    """A CPU tensor holding a copy of ``arr`` (as ``dtype``)."""
    arr = np.asarray(arr)
    name = _dtype_name(dtype if dtype is not None else arr.dtype)
    if name == 'bfloat16':
        return torch.tensor(arr.astype(np.float32)).to(torch.bfloat16)
    if arr.dtype.kind in 'US' or arr.dtype == object:
        raise TypeError('PyTorch has no tensor of %s values' % (arr.dtype,))
    return torch.from_numpy(np.array(arr, dtype=name, copy=True, order='C')).to(_DEVICE)


def _holds_graph_values(x):
    """Whether a (nested) list or tuple holds a Tensor or ``torch.Tensor``."""
    return _builtin_any(isinstance(e, (Tensor, torch.Tensor)) or
                        (isinstance(e, (list, tuple)) and _holds_graph_values(e)) for e in x)


_static_shape = graph.static_shape


def _ndim(x):
    return x.ndim if isinstance(x, (Tensor, torch.Tensor)) else np.ndim(x)


def _normalize_dtype(dtype):
    if dtype is None:
        return floatx()
    return _dtype_name(dtype)


_axis_arg = graph.axis_arg


def _size_tuple(shape):
    """A shape argument (ints, numpy ints, scalar tensors, a shape tensor) as a tuple of
    Python ints; evaluated inside ops, where every size is concrete."""
    if isinstance(shape, (torch.Tensor, np.ndarray)) and np.ndim(shape) == 1:
        return tuple(int(s) for s in _host(shape))
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    if isinstance(shape, (torch.Tensor, np.ndarray)) and np.ndim(shape) == 0:
        return (int(_host(shape)),)
    return tuple(int(_host(s)) if s is not None and not isinstance(s, int) else s
                 for s in shape)


# ---------------------------------------------------------------------------
# Random generators
# ---------------------------------------------------------------------------

def _seed_value(seed):
    """``seed`` as an int; None draws it from numpy's global generator, as Keras 2.3.1's
    backends do (``np.random.seed(n)`` then reproduces a model's initial weights and
    dropout masks)."""
    if seed is None:
        return int(np.random.randint(1, 10 ** 7))
    return int(_host(seed))


def _generator(seed):
    """A CPU ``torch.Generator`` seeded by ``seed`` (None: from numpy's generator)."""
    g = torch.Generator(device='cpu')
    g.manual_seed(_seed_value(seed))
    return g


def _random(draw, seed, *args):
    """A random node: ``draw(generator, *args)`` with the op's own generator (seeded now);
    every evaluation draws anew. While probing ``draw`` gets None (and ``_device()`` is
    ``meta``)."""
    gen = _generator(seed)

    def op(*a):
        return draw(None if _PROBING[0] else gen, *a)
    op.stateful = True
    leaves, treedef = _flatten(args)
    return _node(op, leaves, treedef)


# ---------------------------------------------------------------------------
# The learning phase, the session stand-in, the eval cache
# ---------------------------------------------------------------------------

_LEARNING_PHASE = Placeholder((), 'int32', name='keras_learning_phase')


#: the session stand-in, replaced in place by ``set_session``
_SESSION = [graph.Session(_THIS)]

#: tensor id -> the ``Function`` that ``eval`` made for it (``clear_session`` empties it)
_EVAL_CACHE = {}


# ---------------------------------------------------------------------------
# Pending variable updates
# ---------------------------------------------------------------------------

class _Update(graph.Update):
    _engine = _THIS

_CONTROLS = []    # the update groups of the open ``control_dependencies`` blocks
_active_controls = functools.partial(graph.active_controls, _CONTROLS)


# ---------------------------------------------------------------------------
# Functions
# ---------------------------------------------------------------------------

#: how many gradient passes are under way (a gradient inside one keeps its graph)
_GRAD_DEPTH = [0]


class Function(eager_function.Function):
    """A function of the graph: the nodes it needs evaluated with eager ``torch`` ops,
    then its variable updates written in place.

    Example:
        >>> f = K.function([x], [x * 2])
        >>> f([np.ones((2, 3), 'float32')])[0].shape
        (2, 3)
    """
    _engine = _THIS
    _errors = (TypeError, ValueError, RuntimeError, IndexError)

    def _feed_dtype(self, t):
        return _dtype_name(t.dtype)

    def _phase_of(self, v):
        return int(np.asarray(_host(v)))

    def _prepare(self, nodes, **kwargs):
        # the gradients first (their pass hands the forward values on), then the rest
        self._plan = _Plan(self._gradient_nodes + self._update_values + self.outputs,
                           reuse=_reuse_buffer)

    def _run(self, fed, phase):
        feeds = dict(zip(self._fed, fed))
        ctx = _Context(feeds=feeds, learning_phase=phase)
        with torch.no_grad():
            self._plan.run(ctx)
            news = [ctx.value(v) for v in self._update_values]
            outs = [ctx.value(o) for o in self.outputs]
        # an update keeps its variable's dtype and shape (a (n,) value for an (n, 1) one)
        news = [_as_tensor_value(n, v.avals[0].dtype).reshape(v.avals[0].shape)
                for n, v in zip(news, self._updated)]
        return outs, news

    def _finish(self, outs, news):
        # writable numpy arrays of their own (Keras 2 code writes into what it gets back),
        # copied before the variables are written (an output may be a variable's value)
        outs = [_trim_decoded(o) if getattr(t, '_trim_decoded', False) else _output(o)
                for t, o in zip(self.outputs, outs)]
        _write(self._updated, news)
        return outs


#: the fewest elements of a tensor whose buffer a K.function's arithmetic reuses: below it
#: a new tensor costs less than the checks
_REUSE_MIN_SIZE = 1 << 15


def _reuse_buffer(n, vals, positions):
    """The value of the binary op ``n`` (``n.op.out_fn``: add, sub, mul, true_divide)
    written into the buffer of one of its operands (``positions``: those the graph reads
    nowhere else, each the fresh result of another op), as Keras 3's optimizers on PyTorch
    update in place: an optimizer's arithmetic over a large weight (Adam over an
    embedding) then makes no new tensor at every step. None (a new tensor, as usual) where
    autograd records, or the operand is small, needs a grad, or is not of the result's
    shape and dtype."""
    if torch.is_grad_enabled():
        return None
    for k in positions:
        t = vals[k]
        if type(t) is not torch.Tensor or t.requires_grad or not t.is_floating_point() or \
                t.numel() < _REUSE_MIN_SIZE:
            continue
        other = vals[1 - k]
        if type(other) is torch.Tensor:
            if other.dtype != t.dtype or other.device != t.device or other.requires_grad:
                continue
            if other.shape != t.shape and \
                    torch.broadcast_shapes(other.shape, t.shape) != t.shape:
                continue
        elif not isinstance(other, (int, float)) or isinstance(other, bool):
            continue
        return n.op.out_fn(vals[0], vals[1], out=t)
    return None


def _output(v):
    if isinstance(v, torch.Tensor):
        v = v.detach()
        if v.dtype is torch.bfloat16:
            v = v.float()
        return np.array(v.cpu().numpy())
    return np.array(v)


def _as_tensor_value(v, dt):
    if isinstance(v, torch.Tensor):
        return v.detach().to(dt)
    return torch.as_tensor(np.asarray(v)).to(dt)


def _write(variables, news):
    """Each variable gets its new value in place (all computed from the old values
    first); a new value that shares storage with an updated variable is copied first."""
    ptrs = set(v._value.untyped_storage().data_ptr() for v in variables)
    news = [n.clone() if n.untyped_storage().data_ptr() in ptrs else n for n in news]
    for v, n in zip(variables, news):
        if tuple(n.shape) == tuple(v._value.shape) and n.dtype == v._value.dtype:
            v._value.copy_(n)
        else:
            v._value = n.clone()


_with_control_updates = graph.with_control_updates
_flat_updates = graph.flat_updates


def _feed_value(v, dt):
    """A fed value as a CPU tensor of the placeholder's dtype."""
    if hasattr(v, 'toarray'):
        v = v.toarray()
    if isinstance(v, torch.Tensor):
        v = v.detach()
        return v if dt is None or v.dtype == _torch_dtype(dt) else v.to(_torch_dtype(dt))
    if isinstance(v, Variable):
        v = v._value
        return v if dt is None else v.to(_torch_dtype(dt))
    return _from_numpy(np.asarray(v), dt)


# ---------------------------------------------------------------------------
# Loop bodies being built
# ---------------------------------------------------------------------------

#: how deep the evaluation is inside loop bodies (``rnn``, ``map_fn``, the folds) just now
_LOOP_DEPTH = [0]

#: marks the ops evaluated inside it as a loop body's
_tracing_loop_body = graph.depth_scope(_LOOP_DEPTH)


# ---------------------------------------------------------------------------
# The per-op wrapper
# ---------------------------------------------------------------------------

records_keras_shape = graph.records_keras_shape


# ---------------------------------------------------------------------------
# What the machinery builds and reads itself: the API's int_shape, dtype, cast and stack
# ---------------------------------------------------------------------------


int_shape = graph.int_shape


def dtype(x):
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, torch.Tensor):
        return _DTypeName(_dtype_name(x.dtype))
    return _dtype_name(getattr(x, 'dtype', None) or np.asarray(x).dtype)


def _cast_value(v, dt):
    if isinstance(v, torch.Tensor):
        return v.to(dt)
    return torch.as_tensor(np.asarray(v), device=_device()).to(dt)


@records_keras_shape
def cast(x, dtype):
    dt = _torch_dtype(_normalize_dtype(dtype))
    return _apply(lambda v: _cast_value(v, dt), _to_tensor(x))


def _stack_values(ts, axis):
    ts = [t if isinstance(t, torch.Tensor) else torch.as_tensor(np.asarray(t)) for t in ts]
    dev = [t.device for t in ts if t.device.type == 'meta']
    if dev:
        ts = [t.to('meta') for t in ts]
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = torch.promote_types(dt, t.dtype)
    return torch.stack([t.to(dt) for t in ts], dim=axis)


@records_keras_shape
def stack(x, axis=0):
    tensors = [_to_tensor(t) for t in x]
    return _apply(lambda ts: _stack_values(ts, axis), tensors)


def _make_update(x, new_x):
    # also reached by ``function``'s (variable, value) pairs, which the shared checks do not open
    if not isinstance(x, Variable):
        raise TypeError("update: argument 'x' must be a variable, got %s"
                        % type(x).__name__)
    new_x = _to_tensor(new_x)
    if not isinstance(new_x, Tensor):
        new_x = new_x.to(x.avals[0].dtype)
    return _Update(x, cast(new_x, x.dtype) if dtype(new_x) != x.dtype else new_x)


def _trim_decoded(dec):
    """A concrete decoding cut to its longest path (``graph.trim_decoded``)."""
    return graph.trim_decoded(_host(dec))
