"""The Keras 2 backend API on CNTK 2.7 (CPU).

Representation
--------------
Every tensor is a CNTK ``Variable`` or ``Function`` whose axes are all
*static*: the batch axis of a placeholder is a CNTK free dimension
(``C.FreeDimension``) rather than CNTK's dynamic batch axis, so Keras axis
numbers map one to one onto CNTK axes and ``int_shape`` reports the free
dimension as ``None``. Operations that CNTK only runs per sample
(convolution, pooling, per-sample matrix products) move the leading axis
onto CNTK's batch axis with ``C.to_batch`` and back with ``C.unpack_batch``;
layout round trips between such ops (a transpose back and forth, or an
unpack and re-pack, with only elementwise ops in between) are cancelled when
the graph is built (``_transpose``, ``_per_sample``), so a channels_last
conv -> bias -> relu -> pool chain costs what the channels_first one does.
Placeholders do not ask CNTK for their own gradient (``gradients`` with
respect to one differentiates a clone that does).

CNTK has float tensors only: integer and boolean results (``argmax``,
comparisons, ``cast(x, 'int32')``, ``arange``, ``shape``, decoded CTC
labels) hold integer values in ``floatx()``.

While this adapter is imported, CNTK's tensor classes also have the Python
operators ``**``, ``//``, ``%``, ``<``, ``<=``, ``>`` and ``>=`` (CNTK 2.7 has
none of them), built from the adapter's functions (``_attach_operators``).

Operations CNTK lacks (symbolic gradients, runtime shapes, the CTC loss and
decoders, ``print_tensor``) are added to the graph as CNTK ``UserFunction``
nodes, CNTK's extension point; their forward passes run numpy code.

Layout: the engine plumbing (the helper vocabulary shared with the other
adapters: ``_to_tensor``, ``_constant_like``, ``_coerce_pair``,
``_static_shape``, ...) comes first; the API follows in the order of
``api.SECTIONS``, one banner per section. A public function's own docstring
is a short CNTK note; ``api.install`` (last line) attaches the shared text.
"""
import builtins
import contextlib
import sys
import warnings

import numpy as np

from . import api, checks, common, engines
from .common import *  # noqa: F401,F403  (config names)
from . import ctc_search, shape_rules

try:
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        import cntk as C
        from cntk.ops.functions import UserFunction as _UserFunction
        from cntk.internal import sanitize_var_map as _sanitize_var_map
        from cntk.internal import _value_as_sequence_or_array as _value_as_array
        from cntk.cntk_py import Function as _CFunction
except ImportError as e:  # pragma: no cover - depends on the interpreter
    # the advice names this interpreter and what works on it (README "CNTK backend")
    raise engines.engine_import_error('CNTK', 'cntk', 'cntk', e)

#: the engine serving this adapter and its version (``python -m keras_backend`` prints them)
ENGINE = 'cntk'
ENGINE_VERSION = str(getattr(C, '__version__', 'unknown'))

_FREE = C.FreeDimension
_INT_DTYPES = ('int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64')


# ---------------------------------------------------------------------------
# Engine plumbing: dtypes, tensors and static shapes
# ---------------------------------------------------------------------------

def _normalize_dtype(dtype, where='dtype'):
    """A Keras dtype as a numpy dtype name (``floatx()`` for None).

    Raises:
        TypeError: naming ``where`` when ``dtype`` is not a dtype, or names a
            dtype CNTK cannot represent (strings, complex, objects).
    """
    if dtype is None:
        return floatx()
    try:
        dt = np.dtype(getattr(dtype, 'name', dtype))
    except (TypeError, ValueError):
        raise TypeError('%s: argument dtype=%r is not a known dtype' % (where, dtype))
    if dt.kind not in 'biuf':
        raise TypeError('%s: argument dtype=%r: CNTK has no %s tensors (float, integer and '
                        'bool dtypes only)' % (where, dtype, dt.name))
    return dt.name


def _np_dtype(dtype=None, where='dtype'):
    """numpy float dtype CNTK computes in for a requested Keras dtype.

    float32/float64 as asked; everything else (integer and bool dtypes, and a
    float16 floatx) is held in float32. ``variable``/``constant`` keep an
    explicit float16 (see ``_storage_dtype``).
    """
    name = _normalize_dtype(dtype, where)
    if name in ('float32', 'float64'):
        return np.dtype(name)
    return np.dtype(floatx() if floatx() in ('float32', 'float64') else 'float32')


def _storage_dtype(dtype, where):
    """(numpy dtype held by CNTK, Keras dtype reported by ``K.dtype`` or None).

    An explicit ``'float16'`` is held as float16 (CNTK computes in it); bool
    and integer dtypes are held in ``floatx()`` (CNTK has float tensors only),
    bool being reported as ``'bool'``.
    """
    name = _normalize_dtype(dtype, where)
    if name == 'float16':
        return np.dtype('float16'), None
    if name == 'bool':
        return _np_dtype(name, where), 'bool'
    return _np_dtype(name, where), None


def _is_engine_tensor(x):
    return isinstance(x, (C.cntk_py.Variable, C.Function))


def _var(x):
    """The single output Variable of a tensor."""
    if isinstance(x, C.Function):
        return x.output
    return x


class _SparseLabels(object):
    """CTC labels in sparse form: ``dense`` (batch, max_len) and ``lengths`` (batch,).

    CNTK's sparse tensors are one-hot (CSR) matrices and hold no integer
    label ids, so ``ctc_label_dense_to_sparse`` returns this pair; entries
    past each length are not part of it (``to_dense`` zeroes them).
    """

    def __init__(self, dense, lengths):
        self.dense = dense
        self.lengths = lengths
        self.shape = _var(dense).shape


def _to_tensor(x, dtype=None):
    """A CNTK tensor for ``x`` (numpy values become constants).

    A list/tuple holding tensors (``[K.shape(x)[0], K.shape(x)[1], 5]``) is
    stacked along a new leading axis in the graph (see ``_stack_mixed``).
    """
    if _is_engine_tensor(x):
        return x
    if isinstance(x, _SparseLabels):
        return x.dense
    if isinstance(x, (list, tuple)) and _holds_engine_tensor(x):
        return _stack_mixed(x, dtype)
    return C.constant(np.asarray(x, dtype=_np_dtype(dtype)))


def _holds_engine_tensor(x):
    """True when a (nested) list/tuple contains a CNTK tensor."""
    for e in x:
        if _is_engine_tensor(e) or isinstance(e, _SparseLabels):
            return True
        if isinstance(e, (list, tuple)) and _holds_engine_tensor(e):
            return True
    return False


def _stack_mixed(items, dtype=None):
    """Stack a list mixing tensors and numbers along a new axis 0, in the graph.

    Numbers take the tensors' dtype; a one-element tensor (``K.shape(x)[0]``
    is ``(1,)`` on CNTK) counts as a scalar when the other items are scalars.
    """
    parts = [_to_tensor(e) if isinstance(e, (list, tuple)) else e for e in items]
    tensors = [e for e in parts if _is_engine_tensor(e)]
    dt = np.dtype(dtype) if dtype is not None and not isinstance(dtype, str) else None
    if dt is None:
        dt = np.float64 if builtins.any(_var(t).dtype == np.float64 for t in tensors) \
            else _var(tensors[0]).dtype
    shapes = [_static_shape(t) for t in tensors] + [np.shape(e) for e in parts if not _is_engine_tensor(e)]
    scalars = builtins.all(int(np.prod([d for d in sh if d is not None] or [1])) == 1 and
                           None not in sh for sh in shapes)
    out = []
    for e in parts:
        t = e if _is_engine_tensor(e) else C.constant(np.asarray(e, dtype=dt))
        if _var(t).dtype != dt:
            t = C.cast(t, dt)
        if scalars:
            t = C.reshape(t, ())
        out.append(_add_axis(t, 0))
    return C.splice(*out, axis=0) if len(out) > 1 else out[0]


class _FreeAxis(object):
    """A size read from ``K.shape(src)[axis]`` where that axis of ``src`` is free
    (known only at run time)."""

    def __init__(self, src, axis):
        self.src = src
        self.axis = axis

    def of(self, x):
        """True when this is a free axis of ``x`` itself."""
        return _var(self.src).uid == _var(x).uid


#: stands for a size that is known only at run time and whose origin is not
#: a free axis of some tensor (a product of two free sizes, a placeholder's value)
_RUNTIME = object()


class _RunTime(object):
    """A size known only at run time (see ``_RUNTIME``): ``value`` is its scalar tensor."""

    def __init__(self, value):
        self.value = value

#: ``K.shape(src)`` values of free axes are stood in by ``-(_SENTINEL + 64 * k + i)``
#: (exact in float32) when a size tensor is evaluated while building the graph
_SENTINEL = 2 ** 20


def _shape_reads(root):
    """The ``K.shape(...)`` outputs that the graph of ``root`` (a Function) reads."""
    nodes = C.logging.graph.depth_first_search(root, lambda n: isinstance(n, C.Function),
                                               depth=-1)
    seen, out = set(), []
    for n in nodes:
        for o in n.outputs:
            if o.uid in _SHAPE_SOURCES and o.uid not in seen:
                seen.add(o.uid)
                out.append(o)
    return out


def _size_values(t):
    """The flat values of a size tensor, resolved while building the graph.

    Each entry is an int when the value is known now (a constant, or
    ``K.shape(x)[i]`` of a static axis, and arithmetic on those), a
    ``_FreeAxis`` when it is ``K.shape(src)[i]`` of a free axis, else
    ``_RUNTIME``. The graph is cloned with every ``K.shape(src)`` replaced by a
    constant (free axes stood in by sentinels) and evaluated by CNTK.
    """
    v = _var(t)
    n = int(np.prod([d for d in _static_shape(v)])) if None not in _static_shape(v) else None
    if n is None:
        return None
    if v.is_constant or v.is_parameter:
        vals = np.asarray(v.value).reshape(-1)
        return [int(round(e)) for e in vals]
    root = t if isinstance(t, C.Function) else v.owner
    if root is None:
        return [_RUNTIME] * n
    reads = _shape_reads(root)
    subs, sentinels = {}, {}
    for k, o in enumerate(reads):
        src = _SHAPE_SOURCES[o.uid]
        dims = list(int_shape(src))
        for i, d in enumerate(dims):
            if d is None:
                code = -float(_SENTINEL + 64 * k + i) if k < 4096 and i < 64 else np.nan
                sentinels[code] = _FreeAxis(src, i)
                dims[i] = code
        subs[o] = C.constant(np.asarray(dims, dtype=o.dtype))
    g = root.clone(C.CloneMethod.share, subs) if subs else root
    if g.arguments:
        return [_RUNTIME] * n
    if len(g.outputs) > 1:
        g = C.combine([g.outputs[[o.uid for o in root.outputs].index(v.uid)]])
    vals = np.asarray(g.eval(), dtype=np.float64).reshape(-1)
    out = []
    for e in vals:
        if np.isfinite(e) and e >= 0 and e == np.round(e):
            out.append(int(e))
        elif e in sentinels:
            out.append(sentinels[e])
        else:
            out.append(_RUNTIME)
    return out


def _resolve_sizes(sizes, name, arg):
    """``sizes`` (ints, None, 0-d or one-element tensors, or a 1-D tensor) as a
    list of int / None / ``_FreeAxis`` / ``_RunTime`` (see ``_size_values``)."""
    if _is_engine_tensor(sizes):
        if _nd(sizes) > 1:
            raise ValueError('%s: %s must be 1-D, got a tensor of shape %r'
                             % (name, arg, _static_shape(sizes)))
        vals = _size_values(sizes)
        if vals is None:
            raise ValueError('%s: %s must have a static length, got a tensor of shape %r'
                             % (name, arg, _static_shape(sizes)))
        flat = C.reshape(sizes, (len(vals),)) if _nd(sizes) != 1 else sizes
        return [_RunTime(C.slice(flat, 0, j, j + 1)) if d is _RUNTIME else d
                for j, d in enumerate(vals)]
    out = []
    for j, d in enumerate(shape_rules.sizes(sizes, _is_engine_tensor, '%s: %s' % (name, arg))):
        if _is_engine_tensor(d):
            vals = _size_values(d)
            if vals is None or len(vals) != 1:
                raise ValueError('%s: %s[%d] must be a scalar or one-element tensor, got '
                                 'shape %r' % (name, arg, j, _static_shape(d)))
            d = _RunTime(d) if vals[0] is _RUNTIME else vals[0]
        out.append(d)
    return out


def _constant_like(x, value):
    """A CNTK constant of ``value`` in ``x``'s dtype."""
    return C.constant(np.asarray(value, dtype=_var(x).dtype))


def _param_like(x, value):
    """A parameter of an op on ``x`` (a number or a CNTK tensor) in ``x``'s dtype."""
    if _is_engine_tensor(value):
        return value if _var(value).dtype == _var(x).dtype else C.cast(value, _var(x).dtype)
    return _constant_like(x, value)


def _coerce_pair(x, y):
    """Two tensors of a common dtype (numbers follow the tensor's dtype)."""
    if _is_engine_tensor(x) and not _is_engine_tensor(y):
        return x, _constant_like(x, y)
    if _is_engine_tensor(y) and not _is_engine_tensor(x):
        return _constant_like(y, x), y
    x, y = _to_tensor(x), _to_tensor(y)
    dx, dy = _var(x).dtype, _var(y).dtype
    if dx != dy:
        wide = np.float64 if np.float64 in (dx, dy) else dx
        x, y = C.cast(x, wide) if dx != wide else x, C.cast(y, wide) if dy != wide else y
    return x, y


def _static_shape(x):
    return tuple(None if d < 0 else int(d) for d in _var(x).shape)


def _nd(x):
    return len(_var(x).shape)


def _shape_arg(shape):
    return tuple(_FREE if d is None else int(d) for d in shape)


def _engine_int_shape(x):
    """``int_shape`` as CNTK knows it (ignoring ``_keras_shape``)."""
    if isinstance(x, _SparseLabels):
        x = x.dense
    if not _is_engine_tensor(x):
        return tuple(np.shape(x))
    v = _var(x)
    s = _static_shape(v)
    if builtins.any(a.is_sequence_axis for a in v.dynamic_axes):
        # a step of a recurrence (rnn, foldl/foldr): its static shape is its Keras shape
        return s
    return (None,) * len(v.dynamic_axes) + s


def _keras_meta(x, keras_shape=True, uses_learning_phase=None):
    """Set the attributes Keras' engine reads on a tensor we return.

    ``_keras_shape`` (the engine's static shape, None for free dims) and
    ``_uses_learning_phase`` when given; CNTK's Python wrappers accept new
    attributes, anything else is returned unchanged.
    """
    try:
        if keras_shape:
            x._keras_shape = _engine_int_shape(x)
        if uses_learning_phase is not None:
            x._uses_learning_phase = bool(uses_learning_phase)
    except AttributeError:
        pass
    return x


def _drop_axis(x, axis):
    """Remove a unit axis without naming the other (possibly free) dims."""
    return C.reshape(x, (), begin_axis=axis, end_axis=axis + 1)


def _add_axis(x, axis):
    """Insert a unit axis at ``axis`` (0..ndim)."""
    return C.reshape(x, (1,), begin_axis=axis, end_axis=axis)


def _drop_axes(x, axes):
    for a in sorted(axes, reverse=True):
        x = _drop_axis(x, a)
    return x


def _pad(x, pairs, value=0.):
    if builtins.all(p == (0, 0) for p in pairs):
        return x
    if value == 0.:
        return C.pad(x, [tuple(p) for p in pairs])
    return C.pad(x, [tuple(p) for p in pairs], constant_value=value)


def _one_hot(indices, classes):
    """0/1 of ``indices == class`` with a new last axis of ``classes`` entries.

    Built with ``C.equal`` against a constant range rather than ``C.one_hot``:
    it has a (zero) gradient, so graphs that differentiate through integer
    targets held in placeholders do not hit CNTK's one-hot backprop.
    """
    ids = _add_axis(indices, _nd(indices))
    return C.equal(ids, C.constant(np.arange(int(classes), dtype=_var(indices).dtype)))


def _log_softmax(x, axis):
    return x - C.reduce_log_sum_exp(x, axis=axis)


def _op_seed(seed):
    return int(seed) if seed is not None else int(np.random.randint(1, 10 ** 7))


# ---------------------------------------------------------------------------
# Engine plumbing: layout round trips (batch axis, transposes)
# ---------------------------------------------------------------------------

def _per_sample(x):
    """Move the leading axis onto CNTK's batch axis.

    When ``x`` was unpacked from the batch axis by ``_unbatch`` (possibly
    followed by elementwise ops, see ``_rebuild``), the batched tensor is
    reused instead of round-tripping through a ``to_batch`` node. Inside a recurrence (``rnn``)
    the batch already is CNTK's batch axis and ``x`` holds one sample on a unit axis 0: that axis
    is dropped.
    """
    if _var(x).dynamic_axes and _static_shape(x)[:1] == (1,):
        return _drop_axis(x, 0)
    y = _rebuild(x, _nd(x), _batched_leaf, _batched_side)
    return y if y is not None else C.to_batch(x)


def _unbatch(y, like):
    """``C.unpack_batch`` of ``y``, keeping ``like``'s static leading dim (inside a recurrence,
    where ``like`` has dynamic axes: the unit axis 0 that ``_per_sample`` dropped, restored)."""
    if _is_engine_tensor(like) and _var(like).dynamic_axes:
        return _add_axis(y, 0)
    batched = y
    y = C.unpack_batch(y)
    n = _static_shape(like)[0] if _is_engine_tensor(like) else like
    if n is not None:
        y = C.reshape(y, (n,), begin_axis=0, end_axis=1)
    _UNBATCHED[_var(y).uid] = (_var(batched), _var(y))
    return y


def _transpose(x, perm):
    """``C.transpose(x, perm)``, cancelling earlier transposes where it can.

    When ``x`` is a transpose made here (possibly followed by elementwise ops,
    see ``_rebuild``), the permutations are composed instead of stacking a
    second ``TransposeAxes`` node: a channels_last convolution followed by
    ``bias_add``, an activation and pooling then runs in channels_first from
    end to end, with no layout round trip in between.
    """
    perm = tuple(int(p) for p in perm)
    if perm == tuple(range(len(perm))):
        return x
    y = _rebuild(x, len(perm), lambda v: _transposed_leaf(v, perm),
                 lambda v, n: _transposed_side(v, n, perm))
    if y is None:
        y = C.transpose(x, perm)
    _TRANSPOSED[_var(y).uid] = (_var(x), perm, _var(y))
    return y


#: uid of an ``_unbatch`` result -> (the batched Variable, the result); uid of a
#: ``_transpose`` result -> (its input, perm, the result). Read by ``_rebuild``
#: (the results are kept so that their uids stay unique while they are listed).
_UNBATCHED = {}
_TRANSPOSED = {}


#: elementwise CNTK ops that ``_rebuild`` may re-create in another layout
_UNARY = {'ReLU': C.relu, 'Tanh': C.tanh, 'StableSigmoid': C.sigmoid, 'Exp': C.exp,
          'Log': C.log, 'Abs': C.abs, 'Negate': C.negate, 'Sqrt': C.sqrt,
          'Softplus': C.softplus}
_BINARY = {'Plus': C.plus, 'Minus': C.minus, 'ElementTimes': C.element_times}


def _rebuild(x, n, leaf, side, depth=6):
    """``x`` re-created in another layout, or None when it cannot be.

    Walks up through elementwise ops (``_UNARY``, ``_BINARY``) from ``x``
    (rank ``n``) to a ``leaf`` (``leaf(v)`` gives the leaf in the new layout
    or None) and re-creates those ops on it; a binary op's other operand must
    be ``side``-able: a parameter or constant (``side(v, n)`` lays it out, it
    may broadcast) or a chain with a leaf itself. Elementwise results do not
    depend on the layout, so the values are identical.
    """
    v = _var(x)
    found = leaf(v)
    if found is not None or depth == 0 or not v.is_output:
        return found
    f = v.owner
    op = f.op_name
    if op in _UNARY and len(v.shape) == n:
        inner = _rebuild(f.inputs[0], n, leaf, side, depth - 1)
        return None if inner is None else _UNARY[op](inner)
    if op in _BINARY and len(v.shape) == n:
        fixed = [_input_free(i) for i in f.inputs]
        if builtins.all(fixed):
            return None
        parts = []
        for i, fx in zip(f.inputs, fixed):
            if fx:
                r = side(i, n)
            elif len(i.shape) == n:
                r = _rebuild(i, n, leaf, side, depth - 1)
            else:
                r = None
            if r is None:
                return None
            parts.append(r)
        return _BINARY[op](parts[0], parts[1])
    return None


def _input_free(v):
    """True when ``v`` (a Variable) has a static shape and reads no input."""
    if v.is_parameter or v.is_constant:
        return True
    if not v.is_output or builtins.any(d < 0 for d in v.shape) or v.dynamic_axes:
        return False
    return not C.as_composite(v.owner).arguments


def _transposed_leaf(v, perm):
    entry = _TRANSPOSED.get(v.uid)
    if entry is None or len(entry[1]) != len(perm):
        return None
    src, inner, _ = entry
    total = tuple(inner[p] for p in perm)
    return src if total == tuple(range(len(total))) else C.transpose(src, total)


def _transposed_side(v, n, perm):
    """A constant/parameter operand laid out by ``perm`` (broadcast dims kept)."""
    if builtins.any(d < 0 for d in v.shape) or len(v.shape) > n:
        return None
    full = C.reshape(v, (1,) * (n - len(v.shape)) + tuple(v.shape)) \
        if len(v.shape) < n else v
    return C.transpose(full, perm)


def _batched_leaf(v):
    entry = _UNBATCHED.get(v.uid)
    return None if entry is None else entry[0]


def _batched_side(v, n):
    """A constant/parameter operand with the leading (batch) axis removed."""
    if len(v.shape) < n:
        return v
    if v.shape[0] == 1:
        return _drop_axis(v, 0)
    return None


# ---------------------------------------------------------------------------
# Engine plumbing: UserFunction nodes (numpy forward passes)
# ---------------------------------------------------------------------------

def _input_like(x):
    """UserFunction inputs must be computed tensors: alias plain inputs."""
    v = _var(x)
    if v.is_input or v.is_parameter or v.is_constant or v.is_placeholder:
        return C.plus(x, _constant_like(x, 0))
    return x


def _out_var(shape, dtype, needs_gradient=False):
    return C.output_variable(_shape_arg(shape), C.sanitize_dtype_cntk(dtype), [],
                             needs_gradient=needs_gradient)


class _NumpyOp(_UserFunction):
    """A graph node whose forward pass is a numpy function.

    ``fn(*input_values) -> list of arrays`` (one per entry of ``out_shapes``).
    No gradient flows through it unless ``grad_fn`` is given:
    ``grad_fn(input_values, output_values, root_gradient) -> gradient of input 0``.
    """

    def __init__(self, inputs, fn, out_shapes, dtype, grad_fn=None, name='numpy_op',
                 aliased=False):
        self._fn = fn
        self._out_shapes = out_shapes
        self._dtype = np.dtype(dtype)
        self._grad_fn = grad_fn
        # keep the aliasing Functions alive: CNTK only holds weak references
        # (a clone's inputs are the clones of the aliases already)
        self._keep = list(inputs) if aliased else [_input_like(i) for i in inputs]
        super(_NumpyOp, self).__init__([_var(i) for i in self._keep], name=name)

    def forward(self, arguments, outputs=None, device=None, outputs_to_retain=None):
        # CNTK calls forward(args, device, retain) for one output and
        # forward(args, outputs, device, retain) for several.
        values = list(arguments) if isinstance(arguments, (list, tuple)) else [arguments]
        values = [np.asarray(v) for v in values]
        try:
            results = [np.ascontiguousarray(np.asarray(r, dtype=self._dtype))
                       for r in self._fn(*values)]
        except Exception as e:
            _PENDING_ERRORS.append(e)   # CNTK reports only "SWIG director method error"
            raise
        if len(self._out_shapes) == 1:
            return values, results[0]
        for var, res in zip(self.outputs, results):
            outputs[var] = res
        return values

    def backward(self, state, root_gradients, variables=None):
        # CNTK passes one array for a single output, else a dict; ``variables``
        # (the inputs wanting a gradient) only when there are several inputs.
        if self._grad_fn is None:
            raise ValueError('%s: this operation has no gradient' % self.name)
        root = list(root_gradients.values())[0] if isinstance(root_gradients, dict) \
            else root_gradients
        g = np.ascontiguousarray(np.asarray(self._grad_fn(state, None, np.asarray(root)),
                                            dtype=self._dtype))
        if variables is None:
            return g
        for var in variables:
            variables[var] = np.ascontiguousarray(np.asarray(g, dtype=self._dtype)) \
                if var.uid == self.inputs[0].uid else \
                np.zeros_like(state[[i.uid for i in self.inputs].index(var.uid)],
                              dtype=self._dtype)
        return None

    def infer_outputs(self):
        return [_out_var(s, self._dtype, self._grad_fn is not None) for s in self._out_shapes]

    def clone(self, cloned_inputs):
        return _NumpyOp(cloned_inputs, self._fn, self._out_shapes, self._dtype,
                        self._grad_fn, self.name, aliased=True)


#: exceptions raised by numpy ops during the engine call now running
_PENDING_ERRORS = []


@contextlib.contextmanager
def _numpy_op_errors():
    """Re-raise the exception of a numpy op that failed inside a CNTK call
    (CNTK turns it into ``RuntimeError: SWIG director method error``)."""
    del _PENDING_ERRORS[:]
    try:
        yield
    except RuntimeError:
        if _PENDING_ERRORS:
            err = _PENDING_ERRORS[0]
            del _PENDING_ERRORS[:]
            raise err
        raise


def _numpy_op(inputs, fn, out_shapes, dtype=None, grad_fn=None, name='numpy_op'):
    """Add a numpy-computed node to the graph; returns its list of outputs."""
    dtype = _np_dtype(dtype) if dtype is None or not isinstance(dtype, np.dtype) else dtype
    if not inputs:
        inputs = [C.constant(np.zeros((), dtype))]
    f = C.user_function(_NumpyOp([_to_tensor(i) for i in inputs], fn, out_shapes,
                                 dtype, grad_fn, name))
    return [f.outputs[i] for i in range(len(out_shapes))]


class _PassThrough(_UserFunction):
    """Identity node calling ``callback(value)`` in its forward pass."""

    def __init__(self, x, callback, name='print_tensor', aliased=False):
        self._callback = callback
        self._keep = [x if aliased else _input_like(x)]
        super(_PassThrough, self).__init__([_var(self._keep[0])], name=name)

    def forward(self, argument, device=None, outputs_to_retain=None):
        self._callback(np.asarray(argument))
        return None, argument

    def backward(self, state, root_gradients):
        return root_gradients

    def infer_outputs(self):
        i = self.inputs[0]
        return [C.output_variable(i.shape, i.dtype, i.dynamic_axes)]

    def clone(self, cloned_inputs):
        return _PassThrough(cloned_inputs[0], self._callback, self.name, aliased=True)


# ---------------------------------------------------------------------------
# Engine plumbing: module state and evaluation
# ---------------------------------------------------------------------------

def _new_learning_phase():
    return C.input_variable((), dtype=np.float32, dynamic_axes=[], needs_gradient=False,
                            name='keras_learning_phase')


_LEARNING_PHASE_PLACEHOLDER = _new_learning_phase()


#: uid of a ``shape(x)`` result -> ``x``: random ops given ``K.shape(x)`` draw
#: with CNTK's ``*_constant_like`` ops on ``x`` instead of reading the shape's value.
_SHAPE_SOURCES = {}


#: the ``C.assign`` nodes of the open ``control_dependencies`` blocks (a stack)
_CONTROL_UPDATES = []


#: uid of a run-time ``arange`` output -> its state: ``empty`` (the last run gave
#: an empty range, a one-element stand-in was passed on) and ``consumed`` (some
#: ``function``'s graph reads it from another op: an empty range then raises).
_MAYBE_EMPTY = {}


def _note_consumed_ranges(heads):
    """Mark the run-time ``arange`` outputs that the graphs of ``heads`` read in an op."""
    if not _MAYBE_EMPTY:
        return
    seen, stack = set(), [_var(h).owner for h in heads if _var(h).is_output]
    while stack:
        f = stack.pop()
        if f is None or f.uid in seen:
            continue
        seen.add(f.uid)
        for i in f.inputs:
            if i.uid in _MAYBE_EMPTY:
                _MAYBE_EMPTY[i.uid]['consumed'] = True
            if i.is_output and i.owner.uid not in seen:
                stack.append(i.owner)


def _empty_if_ranged(var, value):
    """An empty array for a run-time ``arange`` output whose last range was empty."""
    state = _MAYBE_EMPTY.get(_var(var).uid)
    if state is not None and state['empty']:
        return np.zeros((0,), dtype=np.asarray(value).dtype)
    return value


def _empty(shape, dtype):
    """A constant with a zero-size static ``shape``.

    CNTK cannot store or compute zero-element values (reading one aborts the
    process), so the constant is built from a scalar and never read: ``eval``
    and ``function`` return ``np.zeros(shape)`` for it (see ``_leaf_value``).
    """
    return C.constant(0., shape=tuple(shape), dtype=np.dtype(dtype))


def _leaf_value(v):
    """numpy value of a parameter or constant (zero-size ones are not read)."""
    if builtins.any(d == 0 for d in v.shape):
        return np.zeros(tuple(v.shape), dtype=v.dtype)
    return np.array(v.value)


def _evaluate(tensors, feed=None):
    """Evaluate a list of tensors; returns a list of numpy arrays."""
    feed = dict(feed or {})
    outs = []
    pos = []
    seen = {}
    for t in tensors:
        t = _to_tensor(t)
        v = _var(t)
        if v.is_parameter or v.is_constant:
            pos.append(('value', v))
            continue
        if v.uid not in seen:
            seen[v.uid] = len(outs)
            outs.append(C.combine([v]).output if not v.is_input
                        else C.plus(v, _constant_like(v, 0)).output)
        pos.append(('out', seen[v.uid]))
    values = []
    if outs:
        _note_consumed_ranges(outs)
        f = C.combine(outs)
        args = f.arguments
        lp = _LEARNING_PHASE_PLACEHOLDER
        for a in args:
            if a.uid == lp.uid and not builtins.any(k.uid == lp.uid for k in feed):
                feed[a] = np.asarray(0., np.float32)
        with _numpy_op_errors():
            res = f.eval(feed, as_numpy=True) if args else f.eval(as_numpy=True)
        if not isinstance(res, dict):
            res = {f.outputs[0]: res}
        for o in f.outputs:
            values.append(_empty_if_ranged(o, np.asarray(res[o])))
    result = []
    for kind, p in pos:
        if kind == 'value':
            result.append(_leaf_value(p))
        else:
            result.append(values[p])
    return result


# ---------------------------------------------------------------------------
# Engine plumbing: sequences (foldl/foldr over unknown lengths; rnn: _rnn_recurrence)
# ---------------------------------------------------------------------------

def _to_seq(x):
    """A static ``(T, ...)`` tensor as a CNTK sequence of its ``T`` slices.

    The slices travel on a sequence axis (``C.to_sequence``) with a batch
    axis of one, so ``T`` may be unknown (a free dimension); each element
    keeps the static shape ``x.shape[1:]``, which the K ops inside a loop
    body see as usual (``int_shape``).
    """
    return C.to_sequence(C.to_batch(_add_axis(x, 0)))


def _seq_last(s):
    """The last element of a sequence made by ``_to_seq``, as a static tensor."""
    return _drop_axis(C.unpack_batch(C.sequence.last(s)), 0)


def _seq_start(init, seq):
    """``init`` (no dynamic axes) repeated at every step of ``seq``."""
    return C.sequence.broadcast_as(C.to_batch(_add_axis(_to_tensor(init), 0)), seq)


def _seq_previous(init, seq):
    """A recurrence slot: ``(placeholder, prev)`` where ``prev`` is ``init``
    at the first step of ``seq`` and the placeholder's value one step back
    afterwards (``C.sequence.past_value``). Bind the placeholder with
    ``replace_placeholders`` once the new value is built."""
    init = _to_tensor(init)
    ph = C.placeholder(shape=_var(init).shape, dynamic_axes=_var(seq).dynamic_axes)
    prev = C.element_select(C.sequence.is_first(seq), _seq_start(init, seq),
                            C.sequence.past_value(ph))
    return ph, prev


# ---------------------------------------------------------------------------
# Engine plumbing: Python operators on CNTK tensors
# ---------------------------------------------------------------------------
# CNTK 2.7's classes have +, -, *, /, @, unary -, abs() and [] (its
# ``TensorOpsMixin``) but no **, //, % or ordered comparisons. While this
# adapter is imported they have them, built from the adapter's own functions
# (``pow``, ``less``, ...) so that an operator gives what the function gives;
# a numpy value on the left goes through numpy's ``__array_ufunc__`` hook.
# ``==``, ``!=`` and ``hash`` stay CNTK's (identity of the tensor); the other
# engines' tensors compare by identity too (docs/semantics.md, "Python
# operators on tensors"). Every other operator and ufunc is CNTK's and
# numpy's as before.

def _operand(value):
    """``value`` as the other operand of an operator, or None where the
    operator must answer ``NotImplemented`` (so that Python tries the other
    operand's method or raises its TypeError): CNTK tensors as they are;
    Python and numpy numbers, numpy arrays and (nested) lists of numbers as
    numpy arrays; anything else (strings, None, complex numbers, lists
    holding tensors, other libraries' tensors) is not an operand."""
    if _is_engine_tensor(value):
        return value
    return shape_rules.numeric_operand(value)


def _floor_divide(x, y):
    """``floor(x / y)`` (Python's and numpy's ``//``), with ``C.floor``."""
    x, y = _coerce_pair(x, y)
    return C.floor(C.element_divide(x, y))


def _floor_mod(x, y):
    """``x - floor(x / y) * y`` (Python's and numpy's ``%``: the sign of ``y``)."""
    x, y = _coerce_pair(x, y)
    return C.minus(x, C.element_times(C.floor(C.element_divide(x, y)), y))


#: operator -> (name of the adapter function computing it, operands swapped)
_OPERATORS = (
    ('__pow__', 'pow', False), ('__rpow__', 'pow', True),
    ('__floordiv__', '_floor_divide', False), ('__rfloordiv__', '_floor_divide', True),
    ('__mod__', '_floor_mod', False), ('__rmod__', '_floor_mod', True),
    ('__lt__', 'less', False), ('__le__', 'less_equal', False),
    ('__gt__', 'greater', False), ('__ge__', 'greater_equal', False),
)


def _operator(name, fn_name, reflected):
    """The method ``name`` of CNTK tensors: the adapter function ``fn_name``
    (looked up at each call, so the checked public function runs) of the
    tensor and the other operand, in the order Python means."""
    def operator(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        fn = globals()[fn_name]
        return fn(other, self) if reflected else fn(self, other)
    operator.__name__ = name
    operator.__qualname__ = name
    operator.__doc__ = '``%s`` of the Keras backend adapter (keras_backend.cntk_backend.%s).' % (
        name, fn_name)
    operator._keras_backend_operator = True
    return operator


#: numpy ufunc -> the adapter function computing it where a CNTK tensor is an operand
_UFUNCS = {np.power: 'pow', np.floor_divide: '_floor_divide', np.remainder: '_floor_mod',
           np.less: 'less', np.less_equal: 'less_equal', np.greater: 'greater',
           np.greater_equal: 'greater_equal'}


def _opaque(value):
    """A CNTK tensor as a 0-d numpy object array (how numpy sees an object it
    cannot convert); other values as they are."""
    if _is_engine_tensor(value):
        box = np.empty((), dtype=object)
        box[()] = value
        return box
    return value


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """numpy's hook for a ufunc with a CNTK tensor among its operands.

    With a numpy value on the left (``np.float32(1) < x``, ``np.ones(3) ** x``)
    numpy applies its ufunc before Python tries the tensor's reflected method;
    numpy would apply ``<`` to the tensor as an opaque object and turn the
    resulting tensor into ``True``. The ufuncs of the operators above give the
    adapter's tensor instead; every other ufunc, method or keyword runs as
    numpy ran it without this hook (``np.ones(3) + x`` is still numpy's object
    array: CNTK's own ``+`` is unchanged).
    """
    if method == '__call__' and not kwargs and len(inputs) == 2 and ufunc in _UFUNCS:
        a, b = _operand(inputs[0]), _operand(inputs[1])
        if a is not None and b is not None:
            return globals()[_UFUNCS[ufunc]](a, b)
    out = kwargs.get('out', ())
    if builtins.any(_is_engine_tensor(o) for o in (out if isinstance(out, tuple) else (out,))):
        raise TypeError('%s: a CNTK tensor cannot be the output of a numpy ufunc' % ufunc.__name__)
    return getattr(ufunc, method)(*[_opaque(v) for v in inputs], **kwargs)


_array_ufunc._keras_backend_operator = True


def _defines(cls, name):
    """The method ``name`` of ``cls`` from a class other than ``object``, or None."""
    for klass in cls.__mro__:
        if klass is not object and name in klass.__dict__:
            return klass.__dict__[name]
    return None


def _attach_operators():
    """Give CNTK's tensor classes the operators of ``_OPERATORS`` that they lack,
    and numpy's ``__array_ufunc__`` hook for those operators with a numpy value
    on the left (one CNTK already defines is left alone; ours are replaced when
    the adapter is imported again)."""
    from cntk.variables import Constant, Parameter, Variable
    for cls in (C.Function, Variable, Parameter, Constant):
        for name, fn_name, reflected in _OPERATORS:
            current = _defines(cls, name)
            if current is None or getattr(current, '_keras_backend_operator', False):
                setattr(cls, name, _operator(name, fn_name, reflected))
        current = _defines(cls, '__array_ufunc__')
        if current is None or getattr(current, '_keras_backend_operator', False):
            cls.__array_ufunc__ = _array_ufunc


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
    global _LEARNING_PHASE_PLACEHOLDER
    common._reset_session_state()
    _SHAPE_SOURCES.clear()
    _UNBATCHED.clear()
    _TRANSPOSED.clear()
    _LEARNING_PHASE_PLACEHOLDER = _new_learning_phase()


def _feed_value(var, value):
    v = _var(var)
    if v.is_sparse:
        return value
    return np.asarray(value, dtype=v.dtype)


class _Session(object):
    """Session-like object: ``run(fetches, feed_dict)`` evaluates tensors."""

    def run(self, fetches, feed_dict=None):
        single = not isinstance(fetches, (list, tuple))
        items = [fetches] if single else list(fetches)
        feed = {}
        for k, v in (feed_dict or {}).items():
            feed[_var(k)] = _feed_value(k, v)
        res = _evaluate(items, feed)
        return res[0] if single else res


_SESSION = _Session()


def get_session():
    """CNTK has no sessions: a session-like object whose ``run(fetches, feed_dict=None)`` evaluates
    tensors."""
    return _SESSION


def set_session(session):
    """CNTK has no sessions: ``session`` is any object with a ``run(fetches, feed_dict)`` method
    (ValueError otherwise)."""
    global _SESSION
    if not hasattr(session, 'run'):
        raise ValueError('set_session: expected an object with a run method, got %r'
                         % (session,))
    _SESSION = session


def learning_phase():
    """A scalar float32 CNTK input (``C.input_variable``) fed 0 or 1; the Python int 0/1 after
    ``set_learning_phase``. A ``function`` whose graph uses it without listing it as an input feeds
    0."""
    return common._learning_phase_or(lambda: _LEARNING_PHASE_PLACEHOLDER)


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


def is_variable(x):
    """True for CNTK parameters (what ``variable`` returns)."""
    return _is_engine_tensor(x) and bool(_var(x).is_parameter)


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
    return _is_engine_tensor(x) and bool(_var(x).is_input) and not _var(x) is _LEARNING_PHASE_PLACEHOLDER


def shape(x):
    """Integer values held in ``floatx()``: a constant for a static shape; free dims are read at
    run time by a numpy graph node (``UserFunction``)."""
    s = int_shape(x)
    if builtins.all(d is not None for d in s):
        return C.constant(np.asarray(s, dtype=_np_dtype()))
    out = _numpy_op([x], lambda v: [np.asarray(v.shape)], [(len(s),)], name='shape')[0]
    _SHAPE_SOURCES[out.uid] = _to_tensor(x)
    return out


def int_shape(x):
    """CNTK free dimensions (the batch axis of placeholders) are None; a tensor's ``_keras_shape``
    (set by Keras' engine) fills in the sizes CNTK leaves free. Sizes CNTK knows win: Keras 2.3.1
    sets a wrong ``_keras_shape`` on ConvLSTM2D's initial state for ``channels_first`` layers
    (it follows ``image_data_format()``, not the layer's)."""
    ks = getattr(x, '_keras_shape', None) if _is_engine_tensor(x) else None
    if ks is None:
        return _engine_int_shape(x)
    ks = tuple(ks)
    es = _engine_int_shape(x)
    if len(es) != len(ks):
        return ks
    return tuple(k if e is None else e for k, e in zip(ks, es))


def ndim(x):
    return len(int_shape(x))


def size(x, name=None):
    """A scalar in ``floatx()``: a constant for a static shape, else a numpy graph node; ``name``
    is ignored."""
    s = int_shape(x)
    if builtins.all(d is not None for d in s):
        return C.constant(np.asarray(np.prod(s), dtype=_np_dtype()))
    return _numpy_op([x], lambda v: [np.asarray(v.size)], [()], name='size')[0]


def dtype(x):
    """``'float32'`` or ``'float64'`` (CNTK holds integer and bool tensors as floats); tensors made
    with dtype ``'bool'`` report ``'bool'``, float16 variables and placeholders made with
    ``'float16'`` report ``'float16'``."""
    if isinstance(x, _SparseLabels):
        x = x.dense
    if not _is_engine_tensor(x):
        return np.asarray(x).dtype.name
    reported = getattr(x, '_keras_dtype', None)
    if reported is not None:
        return reported
    return np.dtype(_var(x).dtype).name


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
        if len(size) != 2:
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


def _after_control_updates(x):
    """``x`` with the variables assigned by the active control updates replaced
    by their assigned values (the outputs of the ``C.assign`` nodes)."""
    written = {}
    for group in _CONTROL_UPDATES:
        for a in group:
            written[_var(a._keras_target).uid] = a
    if not written:
        return x
    v = _var(x)
    if v.uid in written:
        return written[v.uid].output
    if not v.is_output:
        return x
    graph = C.combine([v])
    subst = dict((p, written[p.uid].output) for p in graph.parameters if p.uid in written)
    if not subst:
        return x
    return graph.clone(C.CloneMethod.share, subst).outputs[0]


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

def update(x, new_x):
    """A ``C.assign`` node; ValueError when ``new_x``'s shape neither broadcasts to ``x``'s nor
    holds its number of elements (a ``(1,)`` value is assigned to a scalar variable)."""
    if not is_variable(x):
        raise ValueError('update: x must be a variable, got %r' % (x,))
    new_x = _to_tensor(new_x, dtype=dtype(x))
    if _var(new_x).dtype != _var(x).dtype:
        new_x = C.cast(new_x, _var(x).dtype)
    xs, ns = _static_shape(x), _static_shape(new_x)
    if ns != xs:
        if None not in ns and int(np.prod(ns)) == int(np.prod(xs)) and \
                (int(np.prod(ns)) == 1 or [d for d in ns if d != 1] == [d for d in xs if d != 1]):
            new_x = C.reshape(new_x, xs)      # e.g. a (1,) value for a scalar variable
        elif len(ns) <= len(xs) and builtins.all(
                n in (1, d) for n, d in zip(ns[::-1], xs[::-1])):
            new_x = new_x + C.constant(0., shape=xs, dtype=_var(x).dtype)
        elif len(ns) == len(xs) and builtins.all(n is None or n == d for n, d in zip(ns, xs)):
            # free sizes known only at run time, which must be the variable's
            new_x = C.reshape(new_x, xs)
        else:
            raise ValueError('update: a value of shape %s cannot be assigned to a variable of '
                             'shape %s' % (ns, xs))
    a = C.assign(x, new_x)
    a._keras_target = x
    return a


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
    for d in rest:
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
    if sorted(pattern) != list(range(_nd(x))):
        raise ValueError('permute_dimensions: pattern %r is not a permutation of %d axes'
                         % (pattern, _nd(x)))
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
    shape_rules.check_ndim(_nd(x), (4,), 'resize_images', '4-D')
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
    shape_rules.check_ndim(_nd(x), (5,), 'resize_volumes', '5-D')
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
    shape_rules.check_ndim(_nd(x), (2,), 'repeat', '2-D')
    e = _add_axis(x, 1)
    count = _resolve_sizes([n], 'repeat', 'n')[0]
    if isinstance(count, (_FreeAxis, _RunTime)):
        return _repeat_axis(e, 1, _ones_of_length(count, _var(x).dtype))
    if count is None or count < 0:
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
        if r < 0:
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
    a = axis + n + 1 if axis < 0 else axis
    if not 0 <= a <= n:
        raise ValueError('expand_dims: axis %r out of range for rank %d' % (axis, n))
    return _add_axis(x, a)


def squeeze(x, axis):
    """``C.reshape`` removing the axis; an axis of unknown (free) size is not checked."""
    x = _to_tensor(x)
    a = shape_rules.normalize_axis(axis, _nd(x))
    if _static_shape(x)[a] not in (1, None):
        raise ValueError('squeeze: axis %d has size %d, not 1' % (axis, _static_shape(x)[a]))
    return _drop_axis(x, a)


def temporal_padding(x, padding=(1, 1)):
    """``C.pad``."""
    x = _to_tensor(x)
    shape_rules.check_ndim(_nd(x), (3,), 'temporal_padding', '3-D')
    p = shape_rules.normalize_tuple(padding, 2, 'padding')
    return _pad(x, [(0, 0), p, (0, 0)])


def _spatial_padding(x, padding, n, data_format):
    x = _to_tensor(x)
    fmt = normalize_data_format(data_format)
    shape_rules.check_ndim(_nd(x), (n + 2,), 'spatial padding', '%d-D' % (n + 2))
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
    if len(start) != _nd(x) or len(size) != _nd(x):
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
    """CNTK has no broadcast patterns: the pattern's length is checked against ``ndim(x)`` and
    ``x`` is returned unchanged."""
    if len(broadcastable) != ndim(x):
        raise ValueError('pattern_broadcast: pattern of length %d for a tensor of rank %d'
                         % (len(broadcastable), ndim(x)))
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
    if not is_variable(x):
        raise ValueError('set_value: x must be a variable, got %r' % (x,))
    v = _var(x)
    value = np.asarray(value, dtype=v.dtype)
    if value.shape != tuple(v.shape):
        raise ValueError('set_value: value of shape %s does not match the variable shape %s'
                         % (value.shape, tuple(v.shape)))
    v.value = value


def batch_set_value(tuples):
    """Every pair is checked before any value is written."""
    tuples = list(tuples)
    for x, value in tuples:
        if not is_variable(x):
            raise ValueError('batch_set_value: %r is not a variable' % (x,))
        if np.shape(value) != tuple(_var(x).shape):
            raise ValueError('batch_set_value: value of shape %s does not match the variable '
                             'shape %s' % (np.shape(value), tuple(_var(x).shape)))
    for x, value in tuples:
        set_value(x, value)


def get_variable_shape(x):
    """Same as ``int_shape``."""
    return int_shape(x)


def print_tensor(x, message=''):
    """An identity ``UserFunction`` node that prints ``message`` and the value whenever it is
    evaluated."""
    x = _to_tensor(x)

    def show(value):
        print(message, value)
        sys.stdout.flush()
    return C.user_function(_PassThrough(x, show))


def _as_assign(u):
    if isinstance(u, (tuple, list)):
        if len(u) != 2:
            raise ValueError('updates: expected (variable, new_value) pairs, got %r' % (u,))
        return update(u[0], u[1])
    if isinstance(u, C.Function) and u.root_function.op_name == 'Assign':
        return u
    raise ValueError('updates: expected K.update results or (variable, new_value) pairs, '
                     'got %r' % (u,))


#: uid of a ``gradients`` output -> (loss Variable, the Variable it differentiates
#: against). ``function`` uses it to run training steps natively (see
#: ``Function._training_plan``).
_GRADIENT_OF = {}


def _gradient_vars(heads):
    """The ``gradients`` outputs that the graphs of ``heads`` read."""
    found, seen, stack = {}, set(), []
    for v in heads:
        v = _var(v)
        if v.uid in _GRADIENT_OF:
            found[v.uid] = v
        elif v.is_output:
            stack.append(v.owner)
    while stack:
        f = stack.pop()
        if f.uid in seen:
            continue
        seen.add(f.uid)
        for i in f.inputs:
            if i.uid in _GRADIENT_OF:
                found[i.uid] = i
            elif i.is_output and i.owner.uid not in seen:
                stack.append(i.owner)
    return list(found.values())


class Function(object):
    """A compiled CNTK graph (``C.combine`` of the outputs and the updates).

    Calling it with one numpy array per input returns the outputs; the
    ``C.assign`` updates run in the same pass and write after every output
    has read the old values. A training step (updates built from one loss's
    ``gradients``) runs as one CNTK forward pass, one backward pass and a
    ``C.universal`` learner (see ``_training_plan``).

    Args:
        inputs: list of placeholders (the learning phase may be one).
        outputs: a tensor or a list/tuple of tensors.
        updates: list of ``K.update`` results or ``(variable, value)`` pairs.
        name: optional, stored.

    Returns:
        calling it returns a numpy array per output (a list, or one array
        when ``outputs`` was a single tensor).

    Raises:
        ValueError: at construction for a non-placeholder input or a bad
            update; at call time when the inputs are not a list/tuple of the
            right length.

    Example:
        >>> x = K.placeholder((None, 2)); v = K.variable([1., 1.])
        >>> f = K.function([x], [K.sum(x * v)], updates=[K.update_add(v, [1., 1.])])
        >>> f([np.ones((1, 2))])
        [array(2., dtype=float32)]
    """

    def __init__(self, inputs, outputs, updates=None, name=None):
        self.inputs = list(inputs)
        self._single = not isinstance(outputs, (list, tuple))
        self.outputs = [outputs] if self._single else list(outputs)
        self.updates = [_as_assign(u) for u in (updates or [])]
        for i in self.inputs:
            if not (_is_engine_tensor(i) and _var(i).is_input) and not isinstance(i, int):
                raise ValueError('function: inputs must be placeholders, got %r' % (i,))
        self._graph = None
        self._train = None
        self.name = name
        self._feed_specs = checks.feed_specs(sys.modules[__name__], self.inputs)

    def _build(self):
        heads, self._slots = [], []
        seen = {}
        for t in self.outputs:
            t = _to_tensor(t)
            v = _var(t)
            if v.is_parameter or v.is_constant:
                self._slots.append(('value', v))
                continue
            if v.uid not in seen:
                seen[v.uid] = len(heads)
                heads.append(v if not v.is_input else C.plus(v, _constant_like(v, 0)).output)
            self._slots.append(('out', seen[v.uid]))
        self._n_heads = len(heads)
        _note_consumed_ranges(heads + [_var(u) for u in self.updates])
        self._train = self._training_plan(heads)
        if self._train is not None:
            # outputs, the loss and the updates that read inputs in one forward
            # pass (CNTK writes assigned values after the backward pass); the
            # other updates run in the learner
            loss = self._train['loss']
            if loss.uid not in set(h.uid for h in heads):
                heads = heads + [loss]
            known = set(h.uid for h in heads)
            heads = heads + [u for u in self._train['forward_updates'] if u.uid not in known]
            self._graph = C.combine(heads)
            self._train['loss'] = [o for o in self._graph.outputs if o.uid == loss.uid][0]
            self._train['keep'] = set([self._train['loss']])
            self._train['args'] = self._graph.arguments
            return
        heads += [_var(u) for u in self.updates]
        self._graph = C.combine(heads) if heads else None

    def _training_plan(self, heads):
        """A native plan for the usual training step, or None.

        When every update that reads a ``gradients`` output differentiates one
        loss with respect to parameters, and no such update reads an input, the
        step runs as one forward pass (outputs, loss, and the updates that read
        inputs but no gradient, e.g. batch statistics and metric totals), one
        backward pass (CNTK's ``Function.backward``) and the other updates as
        a CNTK ``universal`` learner whose update graph is ours with the
        gradient nodes replaced by the learner's gradients. Nothing is
        computed twice, and the outputs still see the values from before the
        updates.
        """
        if not self.updates:
            return None
        # updates an output already reads (``K.identity`` under
        # ``control_dependencies``: a stateful metric's result) run in the
        # forward pass anyway; the learner must not apply them a second time
        in_heads = set()
        if heads:
            for n in C.logging.graph.depth_first_search(
                    C.combine(heads), lambda n: isinstance(n, C.Function), depth=-1):
                in_heads.add(n.uid)
        upd, forward_updates = [], []
        for u in self.updates:
            v = _var(u)
            if not _gradient_vars([v]) and (C.combine([v]).arguments or
                                            v.owner.uid in in_heads):
                forward_updates.append(v)
            else:
                upd.append(v)
        if not upd:
            return None
        grads = _gradient_vars(upd)
        if not grads or _gradient_vars(heads + forward_updates):
            return None
        losses = dict((_GRADIENT_OF[g.uid][0].uid, _GRADIENT_OF[g.uid][0]) for g in grads)
        if len(losses) != 1:
            return None
        loss = list(losses.values())[0]
        reachable = set(p.uid for p in C.combine([loss]).parameters)
        params = {}
        for g in grads:
            w = _GRADIENT_OF[g.uid][1]
            if not w.is_parameter or w.uid not in reachable:
                return None
            params[w.uid] = w
        params = list(params.values())
        update_graph = C.combine(upd)
        stand_ins = dict((g, C.placeholder(shape=g.shape, dynamic_axes=[])) for g in grads)
        probe = update_graph.clone(C.CloneMethod.share, stand_ins)
        if builtins.any(not a.is_placeholder for a in probe.arguments):
            return None  # an update reads an input: use the general path

        def update_fn(ps, gs):
            by_param = dict((p.uid, gv) for p, gv in zip(ps, gs))
            return update_graph.clone(C.CloneMethod.share, dict(
                (g, by_param[_GRADIENT_OF[g.uid][1].uid]) for g in grads))
        try:
            learner = C.universal(update_fn, params)
        except Exception:  # an update graph CNTK's learner cannot take
            return None
        return {'loss': loss, 'params': set(params), 'learner': learner,
                'forward_updates': forward_updates}

    def _plan(self):
        """Which graph argument each input feeds (inputs the graph does not use
        are dropped); learning-phase arguments that no input feeds get 0."""
        by_uid = dict((a.uid, a) for a in self._graph.arguments)
        self._feed_plan = []
        fed = set()
        for pos, var in enumerate(self.inputs):
            if isinstance(var, int):
                continue
            uid = _var(var).uid
            if uid in by_uid:
                a = by_uid[uid]
                self._feed_plan.append((pos, a, None if a.is_sparse else np.dtype(a.dtype)))
                fed.add(uid)
        self._defaults = dict((a, np.asarray(0., np.dtype(a.dtype))) for a in by_uid.values()
                              if a.uid not in fed and a.name == 'keras_learning_phase')
        self._heads = self._graph.outputs

    def _train_step(self, feed):
        """Forward, backward and learner update (see ``_training_plan``).

        Calls CNTK's ``_forward``/``_backward`` directly with prepared maps
        (what ``Function.forward``/``backward`` do after re-sanitising their
        arguments on every call); the root gradient of a static-shaped loss
        is made once.
        """
        plan = self._train
        loss = plan['loss']
        graph = self._graph
        dev = C.DeviceDescriptor.use_default_device()
        in_map = _sanitize_var_map(plan['args'], feed, None, dev) if feed else {}
        out_map = dict.fromkeys(self._heads)
        state = _CFunction._forward(graph, in_map, out_map, dev, plan['keep'])
        res = dict((k, _value_as_array(v, k)) for k, v in out_map.items())
        root = plan.get('root')
        if root is None:
            root = _sanitize_var_map(graph.outputs, {loss: np.ones_like(res[loss])}, None,
                                     state.device())
            if builtins.all(d >= 0 for d in loss.shape):
                plan['root'] = root
        grads = dict.fromkeys(plan['params'])
        _CFunction._backward(graph, state, root, grads)
        C.cntk_py.Learner._update(plan['learner'],
                                  dict((p, C.cntk_py.Value.data(g)) for p, g in grads.items()),
                                  1, False)
        return res

    def __call__(self, inputs):
        if self._graph is None and (self.outputs or self.updates):
            self._build()
            if self._graph is not None:
                self._plan()
        checks.check_feeds(self._feed_specs, inputs)
        # variables returned as outputs are read before the updates run
        out = [_leaf_value(p) if kind == 'value' else p for kind, p in self._slots]
        if self._graph is not None:
            feed = dict(self._defaults)
            for pos, arg, dt in self._feed_plan:
                value = inputs[pos]
                feed[arg] = value if dt is None else np.asarray(value, dtype=dt)
            try:
                with _numpy_op_errors():
                    if self._train is not None:
                        res = self._train_step(feed)
                    else:
                        res = self._graph.eval(feed, as_numpy=True) if feed else \
                            self._graph.eval(as_numpy=True)
            except RuntimeError as e:
                raise checks.engine_error('function', e, [np.shape(v) for v in inputs]) from e
            if self._train is None:
                if not isinstance(res, dict):
                    res = {self._heads[0]: res}
            heads = self._heads
            out = [_empty_if_ranged(heads[p], res[heads[p]]) if kind == 'out' else v
                   for (kind, p), v in zip(self._slots, out)]
        return out[0] if self._single else out


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


def symbolic(func):
    """Returns ``func`` unchanged (CNTK is always symbolic)."""
    return func


def eager(func):
    """Returns ``func`` unchanged (CNTK has no eager mode)."""
    return func


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
    if _nd(inputs) < 3:
        raise ValueError('rnn: inputs must be at least 3-D (batch, time, ...), got rank %d'
                         % _nd(inputs))
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
    if not rate_tensor and (level < 0. or level >= 1):
        raise ValueError('dropout: level must be in [0, 1), got %r' % (level,))
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
    # the symmetric padding asked for, without a separate Pad node
    auto = [s == 1 and k % 2 == 1 and p == ((k - 1) // 2, (k - 1) // 2) and p != (0, 0)
            for p, k, s in zip(pads, kernel, strides)]
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
    shape_rules.check_ndim(_nd(x), (nsp + 2,), name, '%d-D' % (nsp + 2))
    shape_rules.check_ndim(_nd(kernel), (nsp + 2,), name + ' kernel', '%d-D' % (nsp + 2))
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
    shape_rules.check_ndim(_nd(x), (nsp + 2,), name, '%d-D' % (nsp + 2))
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
    if len(ks) != nsp + 2:
        raise ValueError('%s: depthwise_kernel must be %d-D (kernel..., in, multiplier), got '
                         'shape %s' % (name, nsp + 2, ks))
    cin = _static_shape(x_cf)[1]
    if cin is not None and cin != ks[nsp]:
        raise ValueError('%s: depthwise_kernel %s expects %d input channels but x has %d'
                         % (name, ks, ks[nsp], cin))
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
    shape_rules.check_ndim(_nd(x), (nsp + 2,), name, '%d-D' % (nsp + 2))
    strides = shape_rules.normalize_tuple(strides, nsp, 'strides')
    dilation = shape_rules.normalize_tuple(dilation_rate, nsp, 'dilation_rate')
    shape_rules.check_ndim(_nd(pk), (nsp + 2,), name + ' pointwise_kernel', '%d-D' % (nsp + 2))
    dks, pks = _static_shape(dk), _static_shape(pk)
    if len(dks) == nsp + 2 and pks[nsp] != dks[nsp] * dks[nsp + 1]:
        raise ValueError('%s: pointwise_kernel %s expects %d input channels but the depthwise '
                         'step gives %d (depthwise_kernel %s)'
                         % (name, pks, pks[nsp], dks[nsp] * dks[nsp + 1], dks))
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
    shape_rules.check_ndim(_nd(x), (4,), 'depthwise_conv2d', '4-D')
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
    shape_rules.check_ndim(_nd(x), (nsp + 2,), name, '%d-D' % (nsp + 2))
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
    elif not 1 <= int(top_paths) <= int(beam_width):
        raise ValueError('ctc_decode: top_paths must be in 1..beam_width, got %r' % (top_paths,))
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
    if n == 0 and initializer is None:
        raise ValueError('foldl/foldr: elems is empty and no initializer was given')
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


_attach_operators()
api.install(globals(), ENGINE)
