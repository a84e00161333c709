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
  Keras builds many small functions); the graph's walk order is computed once per function.
* **Gradients** are ``torch.autograd.grad`` of the part of the graph between the loss and
  the variables (or any tensors), recomputed inside the gradient's node with the sources
  requiring grad; inside another gradient (a gradient of a gradient) with ``create_graph``.
* **Random ops** draw from a ``torch.Generator`` of their own, seeded by ``seed`` (or for
  None by numpy's global generator, as Keras 2.3.1's backends seed), which advances at each
  draw, so each call draws anew (dropout) and a seed, or ``np.random.seed``, reproduces a
  run.
* **Loops.** ``rnn``, ``map_fn``, ``foldl`` and ``foldr`` build their step graph once on
  stand-in inputs, and run it in a Python loop over the steps (masks, ``go_backwards``,
  ``constants``, ``input_length``); autograd differentiates through the loop.
* **Host code.** CTC beam search is the shared search (:mod:`keras_backend.ctc_search`) on
  the log-probabilities copied to the host; its paths come back as ``torch`` tensors.
"""
import contextlib
import functools
import itertools
import sys

import numpy as np

from .. import checks, common, engines
from ..common import floatx

try:
    import torch
except ImportError as _e:  # pragma: no cover - depends on the machine
    raise engines.engine_import_error('PyTorch', 'torch', 'torch', _e)

ENGINE = 'torch'
ENGINE_VERSION = torch.__version__.split('+')[0]

_builtin_max, _builtin_min, _builtin_any, _builtin_all = max, min, any, all
_builtin_slice = slice

#: the two sizes an unknown axis takes while a node's static shape is worked out
_PROBES = (83, 89)

_IDS = itertools.count(1)

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
    """``(leaves, treedef)`` of nested lists and tuples; anything else is a leaf."""
    leaves = []

    def walk(v):
        if isinstance(v, list):
            return ('list', [walk(e) for e in v])
        if isinstance(v, tuple) and not isinstance(v, torch.Size):
            return ('tuple', [walk(e) for e in v])
        leaves.append(v)
        return None
    return leaves, walk(args)


def _unflatten(treedef, leaves):
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

class Tensor(object):
    """A symbolic value of this adapter's graph.

    ``op`` is a function of the values of ``leaves`` (rebuilt into the call's arguments by
    ``treedef``); ``avals`` the two probe :class:`_Spec` (see the module's design);
    ``pvals`` the two probe values of a shape-valued node.
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
        return '<torch_backend.%s %r shape=%s dtype=%s>' % (
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
        return _apply(_getitem, self, _index_leaf(key))

    def __neg__(self):
        return _apply(torch.neg, self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _apply(torch.abs, self)

    def __invert__(self):
        return _apply(_invert, self)


def _invert(v):
    return torch.logical_not(v) if v.dtype == torch.bool else torch.bitwise_not(v)


def _getitem(x, k):
    key = _index_key(k)
    if isinstance(key, torch.Tensor) and key.dtype != torch.bool and key.ndim > 0:
        return x[key.long()]
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
    def op(a, b):
        a, b = _as_operand(a, b), _as_operand(b, a)
        if not isinstance(a, torch.Tensor):
            a = _scalar_like(a, b)
        if not isinstance(b, torch.Tensor):
            b = _scalar_like(b, a)
        return _BINARY[name](a, b)
    op.__name__ = name

    def method(self, other):
        if not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
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


def _merge_shapes(avals):
    a, b = avals[0].shape, avals[1].shape
    return tuple(int(x) if x == y else None for x, y in zip(a, b))


def _apply(fn, *args):
    """``fn(*args)`` at once on concrete values, else a new graph node."""
    leaves, treedef = _flatten(args)
    if not _builtin_any(isinstance(v, Tensor) for v in leaves):
        return fn(*args)
    return _node(fn, leaves, treedef)


def _node(fn, leaves, treedef, name=None, cls=None, avals=None):
    controls = _active_controls()
    if controls:
        # made inside ``control_dependencies(updates)``: read those variables' new values
        new = dict((u.variable.id, u.new_value) for u in controls)
        leaves = [new[v.id] if isinstance(v, Variable) and v.id in new else v
                  for v in leaves]
    pvals = None
    if avals is None:
        avals, pvals = _infer(fn, leaves, treedef)
    t = (cls or Tensor)(fn, leaves, treedef, avals, pvals, name=name)
    if controls:
        t._control_updates = controls
    if _builtin_any(getattr(v, '_uses_learning_phase', False)
                    for v in leaves if isinstance(v, Tensor)):
        t._uses_learning_phase = True
    return t


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


def _infer(fn, leaves, treedef):
    """(avals, pvals) of ``fn`` over ``leaves`` at both probe sizes."""
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


def _collapsed(t, p):
    """``t``'s aval at probe ``p`` with its unknown sizes set to 1."""
    a, b = t.avals
    shape = tuple(1 if x != y else x for x, y in zip(a.shape, b.shape))
    return _Spec(shape, t.avals[p].dtype)


def _infer_broadcasting_unknowns(g, tensors, p, error):
    """An op refused at the probe sizes because an unknown size meets a known one
    (``(None, 4) * (3, 4)``): as TensorFlow's shape inference, the unknown size is taken
    to broadcast. Tries each input's unknown sizes as 1, then all of them."""
    if not _builtin_all(isinstance(t.avals[0], _Spec) for t in tensors):
        raise error
    unknown = [i for i, t in enumerate(tensors) if t.avals[0].shape != t.avals[1].shape]
    candidates = []
    for align in ('left', 'right'):
        candidates.append([_filled(t, tensors, p, align) for t in tensors])
    for which in [[i] for i in unknown] + ([unknown] if len(unknown) > 1 else []):
        candidates.append([_collapsed(t, p) if i in which else t.avals[p]
                           for i, t in enumerate(tensors)])
    for specs in candidates:
        try:
            return _eval_shape(g, specs)
        except Exception:
            continue
    raise error


def _filled(t, tensors, p, align):
    """``t``'s aval at probe ``p``, each unknown size taken from another input's known size
    at the same axis (counted from the ``align`` end)."""
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
    return _Spec(tuple(shape), t.avals[p].dtype)


class _Multi(Tensor):
    """A node with several outputs (a loop, a gradient bundle); read with :func:`_outputs`."""


def _outputs(node, n):
    return [_node(functools.partial(_pick, i=i), [node], _ONE) for i in range(n)]


def _pick(t, i):
    return t[i]


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
    """One evaluation of the graph: the placeholders' feeds, the learning phase. A child
    context (a gradient, a loop body) evaluates its own nodes and asks its parent for the
    rest."""

    def __init__(self, feeds=None, learning_phase=None, parent=None, local=None, seeds=None):
        self.feeds = feeds if feeds is not None else {}
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
            args = _unflatten(n.treedef, vals)
            if getattr(n.op, 'needs_context', False):
                out = n.op(self, *args)
            else:
                out = n.op(*args)
            self.memo[n.id] = out
        return self.memo[node.id]

    def _leaf(self, n):
        if n is _LEARNING_PHASE:
            if n in self.feeds:
                return self.feeds[n]
            return torch.tensor(self.learning_phase if self.learning_phase is not None
                                else 0, dtype=torch.int32)
        if n._is_variable:
            return n._value
        if n._is_placeholder:
            if n in self.feeds:
                return self.feeds[n]
            raise ValueError('the placeholder %r is needed but was not fed: give it in '
                             'the function\'s inputs' % (n.name,))
        raise ValueError('cannot evaluate %r' % (n,))

    def child(self, local, seeds):
        return _Context(self.feeds, self.learning_phase, parent=self, local=local,
                        seeds=seeds)


def _is_array_tree(v):
    """Whether ``v`` is a tensor or a (nested) tuple/list of tensors."""
    if isinstance(v, (tuple, list)):
        return _builtin_all(_is_array_tree(e) for e in v)
    return isinstance(v, torch.Tensor)


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


def _static_shape(x):
    if isinstance(x, Tensor):
        return x.shape
    return tuple(np.shape(x))


def _ndim(x):
    return x.ndim if isinstance(x, (Tensor, torch.Tensor)) else np.ndim(x)


def _normalize_dtype(dtype):
    if dtype is None:
        return floatx()
    return _dtype_name(dtype)


def _axis_arg(axis, ndim):
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return tuple(sorted(set(int(a) % ndim if ndim else int(a) for a in axis)))
    return int(axis) % ndim if ndim else int(axis)


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


class _Session(object):
    """Session-like object: ``run(fetches, feed_dict=None)`` evaluates tensors."""

    def run(self, fetches, feed_dict=None):
        """Evaluate ``fetches`` (a tensor or a list) with ``feed_dict`` ({placeholder:
        value}); returns numpy values in the same structure."""
        feed_dict = feed_dict or {}
        keys = list(feed_dict.keys())
        single = not isinstance(fetches, (list, tuple))
        outs = [fetches] if single else list(fetches)
        values = Function(keys, outs)([feed_dict[k] for k in keys])
        return values[0] if single else values


#: the session stand-in, replaced in place by ``set_session``
_SESSION = [_Session()]

#: tensor id -> the ``Function`` that ``eval`` made for it (``clear_session`` empties it)
_EVAL_CACHE = {}


# ---------------------------------------------------------------------------
# Pending variable updates
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


# ---------------------------------------------------------------------------
# Functions
# ---------------------------------------------------------------------------

#: how many gradient passes are under way (a gradient inside one keeps its graph)
_GRAD_DEPTH = [0]


class Function(object):
    """A function of the graph: the nodes it needs evaluated with eager ``torch`` ops,
    then its variable updates written in place.

    Example:
        >>> f = K.function([x], [x * 2])
        >>> f([np.ones((2, 3), 'float32')])[0].shape
        (2, 3)
    """

    def __init__(self, inputs, outputs, updates=None, name=None, **kwargs):
        self.inputs = list(inputs)
        self._single = not isinstance(outputs, (list, tuple))
        self.outputs = [outputs] if self._single else list(outputs)
        self.name = name
        self.api_name = 'function'
        self._feed_specs = None
        self._feed_dtypes = None
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
        self._updated = [p.variable for p in self.updates]
        self._update_values = [p.new_value for p in self.updates]
        # gradients first: their pass hands the forward values to the context, which the
        # other updates (BatchNormalization's moving averages) and the outputs then reuse
        self._gradient_nodes = [n for n in nodes if getattr(n.op, 'hands_forward', False)]
        self._lp_index = None
        for i, t in enumerate(self.inputs):
            if t is _LEARNING_PHASE:
                self._lp_index = i
        self._fed = [t for t in self.inputs if t is not _LEARNING_PHASE]

    def _run(self, fed, phase):
        feeds = dict(zip(self._fed, fed))
        ctx = _Context(feeds=feeds, learning_phase=phase)
        with torch.no_grad():
            for g in self._gradient_nodes:
                ctx.value(g)
            news = [ctx.value(v) for v in self._update_values]
            outs = [ctx.value(o) for o in self.outputs]
        # an update keeps its variable's dtype and shape (a (n,) value for an (n, 1) one)
        news = [_as_tensor_value(n, v.avals[0].dtype).reshape(v.avals[0].shape)
                for n, v in zip(news, self._updated)]
        return outs, news

    def __call__(self, inputs):
        inputs = checks.checked_feeds(self, _THIS, inputs)
        if self._feed_dtypes is None:
            self._feed_dtypes = [_dtype_name(t.dtype) if isinstance(t, Tensor) else None
                                 for t in self.inputs]
        phase = None
        fed = []
        for i, (dt, v) in enumerate(zip(self._feed_dtypes, inputs)):
            if i == self._lp_index:
                phase = int(np.asarray(_host(v)))
                continue
            fed.append(_feed_value(v, dt))
        fixed = common._fixed_learning_phase()
        if phase is None and fixed is not None:
            phase = fixed
        try:
            outs, news = self._run(fed, phase)
        except (TypeError, ValueError, RuntimeError, IndexError) as e:
            if isinstance(e, ValueError) and 'placeholder' in str(e):
                raise
            raise checks.engine_error(self.api_name, e, [np.shape(v) for v in inputs]) from e
        # writable numpy arrays of their own (Keras 2 code writes into what it gets back),
        # copied before the variables are written (an output may be a variable's value)
        outs = [_trim_decoded(o) if getattr(t, '_trim_decoded', False) else _output(o)
                for t, o in zip(self.outputs, outs)]
        _write(self._updated, news)
        return outs[0] if self._single else outs


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


@contextlib.contextmanager
def _tracing_loop_body():
    """Marks the ops evaluated inside it as a loop body's."""
    _LOOP_DEPTH[0] += 1
    try:
        yield
    finally:
        _LOOP_DEPTH[0] -= 1


# ---------------------------------------------------------------------------
# The per-op wrapper
# ---------------------------------------------------------------------------

def records_keras_shape(func):
    """Applied where a shape-changing op is defined (in its section's module): as Keras
    2.3.1's Theano backend (and our Theano and JAX adapters), the op's graph result carries
    ``_keras_shape``, which Keras' engine reads beside ``_uses_learning_phase``; ``reshape``
    also passes ``_uses_learning_phase`` on from its input."""
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


# ---------------------------------------------------------------------------
# What the machinery builds and reads itself: the API's int_shape, dtype, cast and stack
# ---------------------------------------------------------------------------

#: this module: ``checks.feed_specs`` reads ``int_shape`` and ``dtype`` from it
_THIS = sys.modules[__name__]


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
    """A concrete ``(samples, steps)`` decoding cut to its longest path (the columns
    holding a label), as TensorFlow's dense decodings are as wide as that path."""
    dec = _host(dec) if isinstance(dec, torch.Tensor) else np.asarray(dec)
    width = int(np.max(np.sum(dec >= 0, axis=1))) if dec.size else 0
    return np.array(dec[:, :width])
