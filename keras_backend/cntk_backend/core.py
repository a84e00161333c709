"""How the CNTK 2.7 adapter runs a graph: its machinery, below the API's op bodies (``ops``).

Dtypes and tensor conversion, static shapes and sizes read while the graph is built, the layout
round trips it cancels, the numpy ``UserFunction`` nodes, evaluation and the compiled
``Function``, the adapter's state (``State``: the learning phase, the session) and the Python
operators it adds to CNTK's tensor classes.

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
none of them), built from the adapter's functions (``_attach_operators``), and
CNTK's own ``+``, ``-``, ``*`` and ``/`` raise ValueError for operands whose static
shapes cannot broadcast (CNTK's RuntimeError came with its C++ call stack).

Operations CNTK lacks (symbolic gradients, runtime shapes, the CTC loss and
decoders, ``print_tensor``) are added to the graph as CNTK ``UserFunction``
nodes, CNTK's extension point; their forward passes run numpy code.
"""
import builtins
import contextlib
import sys
import warnings

import numpy as np

from .. import checks, engines, shape_rules
from ..common import floatx

try:
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        import cntk as C
        from cntk.ops.functions import UserFunction as _UserFunction
        from cntk.internal import sanitize_var_map as _sanitize_var_map
        from cntk.internal import _value_as_sequence_or_array as _value_as_array
        from cntk.cntk_py import Function as _CFunction
        from cntk.cntk_py import _cntk_py as _SWIG
        from cntk.internal.swig_helper import map_if_possible as _as_cntk_class
except ImportError as e:  # pragma: no cover - depends on the interpreter
    # the advice names this interpreter and what works on it (README "CNTK backend")
    raise engines.engine_import_error('CNTK', 'cntk', 'cntk', e)

#: this module: ``checks.feed_specs`` reads ``int_shape`` and ``dtype`` from it
_THIS = sys.modules[__name__]

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


#: CNTK's tensor classes (``_is_engine_tensor`` asks of most values an op reads)
_TENSOR_CLASSES = (C.cntk_py.Variable, C.Function)


def _is_engine_tensor(x):
    return isinstance(x, _TENSOR_CLASSES)


def _own_attr(x, name):
    """Attribute ``name`` that Keras or we set on CNTK tensor ``x`` (kept in its
    ``__dict__``), None where unset: what ``getattr(x, name, None)`` finds, without the
    AttributeError that SWIG's and CNTK's ``__getattr__`` raise for an unset one (1.2 us
    against 0.25; ``dtype`` and ``int_shape`` ask this of most tensors an op reads)."""
    found = getattr(x, '__dict__', None)
    return None if found is None else found.get(name)


def _var(x):
    """The single output Variable of a tensor."""
    if isinstance(x, C.Function):
        return x.output
    return x


# ---------------------------------------------------------------------------
# Nodes built through CNTK's SWIG layer
# ---------------------------------------------------------------------------
# CNTK's Python op functions (``C.plus``, ``C.constant``, ...) sanitise their arguments and
# map their results to CNTK's Python classes on every call: ``x * 0.9`` took 94 us, ``x + y``
# 33, a scalar ``C.constant`` 47, of which the SWIG function building the node took 4-8. A
# model's first minute builds a few hundred nodes (Adam's update graph alone, 150 for a
# small model). The helpers below call CNTK's SWIG functions themselves where the operands
# are already what CNTK's sanitising would make of them (CNTK tensors of one float dtype,
# real numbers as scalar constants of that dtype): the same nodes, the same graph.

#: CNTK's data types of float32 and float64 (the dtypes the direct paths build)
_SWIG_FLOATS = (C.cntk_py.DataType_Float, C.cntk_py.DataType_Double)

#: Python and numpy real numbers (``bool`` excepted, ``_is_real``): a scalar operand CNTK
#: makes a constant of
_REALS = (float, int, np.floating, np.integer)


def _is_real(value):
    """Whether ``value`` is a Python or numpy real number (not a bool)."""
    return isinstance(value, _REALS) and not isinstance(value, bool)


def _raw(x):
    """The SWIG Variable a CNTK tensor stands for (a Function's single output; one of
    several outputs raises CNTK's RuntimeError)."""
    return _SWIG.Function_output(x) if isinstance(x, C.Function) else x


#: CNTK's data types -> numpy dtypes
_SWIG_NP_DTYPES = {C.cntk_py.DataType_Float: np.dtype('float32'),
                   C.cntk_py.DataType_Double: np.dtype('float64'),
                   C.cntk_py.DataType_Float16: np.dtype('float16')}


def _dtype_of(x):
    """The numpy dtype CNTK holds tensor ``x`` in (``_var(x).dtype``, through SWIG's own
    call: CNTK's Python property maps its answer through three classes)."""
    found = _SWIG_NP_DTYPES.get(_SWIG.Variable_get_data_type(_raw(x)))
    return found if found is not None else np.dtype(_var(x).dtype)


def _op(swig_op, *operands):
    """The node ``swig_op(*operands)`` as a ``C.Function``: ``swig_op`` is CNTK's SWIG
    function of an op (``_SWIG.sqrt``, ``_SWIG.element_select``, ...), ``operands`` CNTK
    tensors of one dtype (the caller's to see to) and, after them, the op's other arguments
    in the SWIG function's order (numbers, strings: passed as they are), the node unnamed.
    What ``C.sqrt(x)`` builds, without its sanitising."""
    node = swig_op(*([_raw(t) for t in operands] + ['']))
    node.__class__ = C.Function
    return node


def _scalar_constant(value, swig_dtype):
    """A scalar ``C.Constant`` of the real number ``value`` in CNTK data type
    ``swig_dtype`` (what CNTK's operators make of a number operand, through CNTK's scalar
    constructor)."""
    c = C.cntk_py.Constant((), swig_dtype, float(value),
                           C.cntk_py.DeviceDescriptor.use_default_device(), '')
    c.__class__ = C.Constant
    return c


def _array_view(value):
    """A CNTK ``NDArrayView`` holding a copy of numpy array ``value`` (float16, float32 or
    float64; C order: what CNTK's ``NDArrayView.from_dense`` makes of it)."""
    if not value.flags['C_CONTIGUOUS']:
        value = np.ascontiguousarray(value)    # (a 0-d array is contiguous: it stays 0-d)
    return C.cntk_py.NDArrayView(value, C.cntk_py.DeviceDescriptor.use_default_device(),
                                 False, False)


def _parameter(value, name):
    """``C.parameter(shape=value.shape, init=value, dtype=value.dtype, name=name)`` for a
    numpy array ``value`` of float16, float32 or float64, built by CNTK's SWIG constructors
    (CNTK's own ``Parameter`` asks ``inspect`` for its default options at every call: a
    third of its time). The parameter holds a copy of ``value``."""
    p = C.Parameter.__new__(C.Parameter)
    C.cntk_py.Parameter.__init__(p, _array_view(value), name)
    return p


def _constant(value, name=''):
    """``C.constant(value, name=name)`` for a numpy array ``value`` of float16, float32 or
    float64, built by CNTK's SWIG constructors (as ``_parameter``); it holds a copy."""
    c = C.Constant.__new__(C.Constant)
    C.cntk_py.Constant.__init__(c, _array_view(value), name)
    return c


def _direct_binary(swig_op, a, b, swapped):
    """``swig_op(a, b)`` (``swig_op(b, a)`` where ``swapped``) for a CNTK tensor ``a`` of
    float32 or float64 and ``b`` a CNTK tensor of the same dtype or a real number (a scalar
    constant of ``a``'s dtype, as CNTK's own operators make it); None in every other case
    (a placeholder of unknown dtype, mixed dtypes, arrays, a Function of several outputs),
    which CNTK's own operator builds or refuses as before."""
    try:
        ra = _raw(a)
        dt = _SWIG.Variable_get_data_type(ra)
        if dt not in _SWIG_FLOATS:
            return None
        if isinstance(b, _TENSOR_CLASSES):
            rb = _raw(b)
            if _SWIG.Variable_get_data_type(rb) != dt:
                return None
        elif _is_real(b):
            rb = _scalar_constant(b, dt)
        else:
            return None
    except (RuntimeError, OverflowError):
        return None
    return _op(swig_op, rb, ra) if swapped else _op(swig_op, ra, rb)


#: (begin_axis, end_axis) -> the pair of ``Axis`` objects CNTK's SWIG ``reshape`` takes for
#: them (``_reshape``)
_RESHAPE_AXES = {}
#: a permutation -> the list of ``Axis`` objects CNTK's SWIG ``transpose`` takes for it
#: (``_transpose_node``)
_PERMUTATION_AXES = {}


def _swig_reshape_axis(axis, default):
    """The ``Axis`` CNTK's SWIG ``reshape`` reads for Python axis ``axis`` (an int, or None
    for ``default``: 0 for a beginning, the end of the shape for an end); CNTK's Python
    ``reshape`` maps them so, its axes counted from the other end."""
    if axis is None:
        axis = default
    if axis == 'end':
        return C.Axis(0)
    return C.Axis.new_leading_axis() if axis == 0 else C.Axis(-axis)


def _reshape(x, shape, begin_axis=None, end_axis=None):
    """``C.reshape(x, shape, begin_axis, end_axis)`` of a CNTK tensor ``x`` with integer (or
    None) axes, built through CNTK's SWIG ``reshape`` with the axes' ``Axis`` objects made
    once: 8 us against the 54 of CNTK's Python function, which sanitises and converts each
    argument on every call (``_add_axis`` and ``_drop_axis`` build one node each for most
    layout changes). Anything else goes to ``C.reshape``."""
    key = (begin_axis, end_axis)
    axes = _RESHAPE_AXES.get(key)
    if axes is None:
        if not (isinstance(x, _TENSOR_CLASSES) and
                builtins.all(a is None or isinstance(a, int) for a in key)):
            return C.reshape(x, shape, begin_axis=begin_axis, end_axis=end_axis)
        # CNTK's SWIG call takes the end axis first (its shapes run the other way)
        axes = _RESHAPE_AXES[key] = (_swig_reshape_axis(end_axis, 'end'),
                                     _swig_reshape_axis(begin_axis, 0))
    elif not isinstance(x, _TENSOR_CLASSES):
        return C.reshape(x, shape, begin_axis=begin_axis, end_axis=end_axis)
    node = _SWIG.reshape(_raw(x), tuple(shape), axes[0], axes[1], '')
    node.__class__ = C.Function
    return node


def _transpose_node(x, perm):
    """``C.transpose(x, perm)`` of a CNTK tensor ``x`` and a permutation of ints, built
    through CNTK's SWIG ``transpose`` with the permutation's ``Axis`` objects made once (9 us
    against 36). Anything else goes to ``C.transpose``."""
    key = tuple(perm) if isinstance(perm, (list, tuple)) else None
    axes = _PERMUTATION_AXES.get(key) if key is not None else None
    if axes is None:
        if key is None or not isinstance(x, _TENSOR_CLASSES) or not builtins.all(
                isinstance(p, (int, np.integer)) for p in key):
            return C.transpose(x, perm)
        from cntk.internal.sanitize import sanitize_permutation   # raises for a bad perm
        axes = _PERMUTATION_AXES[key] = [C.Axis(p) for p in sanitize_permutation(key)]
    elif not isinstance(x, _TENSOR_CLASSES):
        return C.transpose(x, perm)
    node = _SWIG.transpose(_raw(x), axes, '')
    node.__class__ = C.Function
    return node


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
    return _constant(np.asarray(x, dtype=_np_dtype(dtype)))


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
            t = _reshape(t, ())
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
        flat = _reshape(sizes, (len(vals),)) if _nd(sizes) != 1 else sizes
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
    """A CNTK constant of ``value`` in ``x``'s dtype (a real number of a float32 or float64
    ``x`` through CNTK's scalar constructor: ``_scalar_constant``)."""
    if _is_real(value):
        dt = _SWIG.Variable_get_data_type(_raw(x))
        if dt in _SWIG_FLOATS:
            try:
                return _scalar_constant(value, dt)
            except OverflowError:
                pass
    return _constant(np.asarray(value, dtype=_dtype_of(x)))


def keep_nan(x, result):
    """``result`` where ``x`` is a number, and ``x``'s NaN where ``x`` is NaN. CNTK's
    ``sqrt``, ``element_max`` / ``element_min`` and comparisons turn a NaN into 0 (or
    false), which would hide a diverged value behind a number (``K.sqrt``, ``K.std``,
    ``K.sign``, ``K.elu`` of NaN are NaN on every other engine and in numpy);
    ``C.element_select`` on ``x == x`` (false only for NaN) puts it back, and the gradient
    flows to ``result`` wherever ``x`` is a number."""
    return _op(_SWIG.element_select, _op(_SWIG.equal, x, x), result, x)


#: uids of the ``C.relu`` Functions that ``K.sqrt`` puts under CNTK's ``sqrt`` for the
#: gradient (0 below 0, where ``sqrt``'s own is infinite). CNTK's ``sqrt`` clamps at 0
#: itself (``sqrt(max(0, y))``, a NaN included), so ``sqrt(relu(y))`` and ``sqrt(y)`` give
#: the same values for every ``y``, and in a graph that is only evaluated (a learner's update
#: graph) ``_universal_learner`` reads ``y`` directly: one node less per square root (Adam
#: takes one per parameter, and each node of an update graph adds 0.1-0.2 ms to the first
#: update). Uids only (no graph is kept alive); emptied past ``_SQRT_CLAMPS_MAX``.
_SQRT_CLAMPS = set()
_SQRT_CLAMPS_MAX = 200000


def _sqrt_clamp(x):
    """``C.relu(x)`` for ``K.sqrt``, its uid kept in ``_SQRT_CLAMPS``."""
    clamp = _op(_SWIG.re_lu, x)
    if len(_SQRT_CLAMPS) >= _SQRT_CLAMPS_MAX:
        _SQRT_CLAMPS.clear()
    _SQRT_CLAMPS.add(_owner_uid(_SWIG.Function_output(clamp)))   # the primitive's, not the
    # composite's around it
    return clamp


def _param_like(x, value):
    """A parameter of an op on ``x`` (a number or a CNTK tensor) in ``x``'s dtype."""
    if _is_engine_tensor(value):
        held = _dtype_of(x)
        return value if _dtype_of(value) == held else C.cast(value, held)
    return _constant_like(x, value)


def _coerce_pair(x, y):
    """Two tensors of a common dtype (numbers follow the tensor's dtype)."""
    if _is_engine_tensor(x) and not _is_engine_tensor(y):
        return x, _constant_like(x, y)
    if _is_engine_tensor(y) and not _is_engine_tensor(x):
        return _constant_like(y, x), y
    x, y = _to_tensor(x), _to_tensor(y)
    dx, dy = _dtype_of(x), _dtype_of(y)
    if dx != dy:
        wide = np.float64 if np.float64 in (dx, dy) else dx
        x, y = C.cast(x, wide) if dx != wide else x, C.cast(y, wide) if dy != wide else y
    return x, y


def _static_shape(x):
    """``x``'s static shape, None for a free or unknown size. Asked through SWIG's own calls
    (the Python properties wrap each answer in classes): the checks, the shape rules and the
    ops ask this of most tensors an op reads, often twice or more. A CNTK tensor keeps its
    answer (in its ``__dict__``, beside Keras' ``_keras_shape``) where no size is left to
    CNTK's inference, which alone could still change it."""
    if isinstance(x, _TENSOR_CLASSES):
        return _held_static_shape(x, None)
    return tuple(None if d < 0 else int(d) for d in x.shape)


def _held_static_shape(x, v):
    """``_static_shape`` of CNTK tensor ``x``, whose Variable (``_raw(x)``) is ``v`` where
    the caller has it already (None: made here when needed)."""
    held = x.__dict__
    known = held.get('_kb_static_shape')
    if known is not None:
        return known
    if v is None:
        v = _SWIG.Function_output(x) if isinstance(x, C.Function) else x
    dims = _SWIG.NDShape_dimensions(_SWIG.Variable_shape(v))
    shape = tuple(None if d < 0 else int(d) for d in dims)
    if builtins.all(d >= 0 or d == _FREE for d in dims):
        held['_kb_static_shape'] = shape
    return shape


def _nd(x):
    return len(_var(x).shape)


def _shape_arg(shape):
    return tuple(_FREE if d is None else int(d) for d in shape)


def _engine_known_value(x):
    """The value of ``x`` where CNTK holds it (a ``C.Constant``), else None; the argument
    checks read it (indices in range...)."""
    if isinstance(x, C.Constant):
        try:
            return np.asarray(x.value)
        except Exception:
            return None
    return None


def _engine_int_shape(x):
    """``int_shape`` as CNTK knows it (ignoring ``_keras_shape``)."""
    if isinstance(x, _SparseLabels):
        x = x.dense
    if not _is_engine_tensor(x):
        return tuple(np.shape(x))
    # SWIG's own calls (every checked op asks this of each tensor argument), one Python
    # object made for a Function's output, and none for its dynamic axes where it has none
    # (CNTK's two booleans say so: our tensors, but a recurrence's own and sparse inputs)
    v = _raw(x)
    s = _held_static_shape(x, v)
    if not _SWIG.Variable_has_batch_axis(v) and not _SWIG.Variable_has_sequence_axis(v):
        return s
    axes = _SWIG.Variable_dynamic_axes(v)
    if builtins.any(_SWIG.Axis_is_sequence_axis(a) for a in axes):
        # a step of a recurrence (rnn, foldl/foldr): its static shape is its Keras shape
        return s
    return (None,) * len(axes) + s


# The API's ``int_shape`` and ``dtype`` (bound under their names in the ``tensors`` section of
# the ops): the machinery reads sizes Keras recorded and checks compiled functions' feeds.

def int_shape(x):
    """CNTK free dimensions (the batch axis of placeholders) are None; a tensor's ``_keras_shape``
    (set by Keras' engine) fills in the sizes CNTK leaves free. Sizes CNTK knows win: Keras 2.3.1
    sets a wrong ``_keras_shape`` on ConvLSTM2D's initial state for ``channels_first`` layers
    (it follows ``image_data_format()``, not the layer's)."""
    ks = _own_attr(x, '_keras_shape') if _is_engine_tensor(x) else None
    if ks is None:
        return _engine_int_shape(x)
    ks = tuple(ks)
    es = _engine_int_shape(x)
    if len(es) != len(ks):
        return ks
    return tuple(k if e is None else e for k, e in zip(ks, es))


def dtype(x):
    """``'float32'`` or ``'float64'`` (CNTK holds integer and bool tensors as floats); tensors made
    with dtype ``'bool'`` report ``'bool'``, float16 variables and placeholders made with
    ``'float16'`` report ``'float16'``."""
    if isinstance(x, _SparseLabels):
        x = x.dense
    if not _is_engine_tensor(x):
        return np.asarray(x).dtype.name
    reported = _own_attr(x, '_keras_dtype')
    if reported is not None:
        return reported
    return _dtype_of(x).name


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
    return _reshape(x, (), begin_axis=axis, end_axis=axis + 1)


def _add_axis(x, axis):
    """Insert a unit axis at ``axis`` (0..ndim)."""
    return _reshape(x, (1,), begin_axis=axis, end_axis=axis)


def _drop_axes(x, axes):
    """Remove unit ``axes``: one reshape per run of neighbouring axes (a batch norm's
    statistics over axes 0, 1 and 2 take one node, not three)."""
    runs = []
    for a in sorted(set(axes)):
        if runs and runs[-1][1] == a:
            runs[-1][1] = a + 1
        else:
            runs.append([a, a + 1])
    for begin, end in reversed(runs):
        x = _reshape(x, (), begin_axis=begin, end_axis=end)
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


_op_seed = shape_rules.op_seed


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
    if _SWIG.Variable_dynamic_axes(_raw(x)) and _static_shape(x)[:1] == (1,):
        return _drop_axis(x, 0)
    y = _rebuild(x, _nd(x), _batched_leaf, _batched_side)
    return y if y is not None else _op(_SWIG.to_batch, x)


def _per_sample_transposed(x, perm):
    """``_per_sample(_transpose(x, perm))`` in one step. Where ``x`` was computed elementwise
    (``_rebuild``) from an ``_unbatch`` result laid out by a ``_transpose`` that ``perm``
    undoes (a channels_last convolution's output, with its bias and activation, read by the
    next convolution or pooling), those ops are built once more on the batched result
    itself, rather than once in each of the two layouts on the way. Otherwise the two
    steps."""
    perm = tuple(int(p) for p in perm)
    if not _SWIG.Variable_dynamic_axes(_raw(x)):
        y = _rebuild(x, len(perm), lambda v: _batched_transposed_leaf(v, perm),
                     lambda v, n: _batched_transposed_side(v, n, perm))
        if y is not None:
            return y
    return _per_sample(_transpose(x, perm))


def _unbatch(y, like):
    """``C.unpack_batch`` of ``y``, keeping ``like``'s static leading dim (inside a recurrence,
    where ``like`` has dynamic axes: the unit axis 0 that ``_per_sample`` dropped, restored)."""
    if _is_engine_tensor(like) and _SWIG.Variable_dynamic_axes(_raw(like)):
        return _add_axis(y, 0)
    batched = y
    y = _op(_SWIG.unpack_batch, y)
    n = _static_shape(like)[0] if _is_engine_tensor(like) else like
    if n is not None:
        y = _reshape(y, (n,), begin_axis=0, end_axis=1)
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
        y = _transpose_node(x, perm)
    _TRANSPOSED[_var(y).uid] = (_var(x), perm, _var(y))
    return y


#: uid of an ``_unbatch`` result -> (the batched Variable, the result); uid of a
#: ``_transpose`` result -> (its input, perm, the result). Read by ``_rebuild``
#: (the results are kept so that their uids stay unique while they are listed).
_UNBATCHED = {}
_TRANSPOSED = {}


#: elementwise CNTK ops that ``_rebuild`` may re-create in another layout
#: (op name -> CNTK's SWIG function building it: ``_op``)
_UNARY = {'ReLU': _SWIG.re_lu, 'Tanh': _SWIG.tanh, 'StableSigmoid': _SWIG.sigmoid,
          'Exp': _SWIG.exp, 'Log': _SWIG.log, 'Abs': _SWIG.abs, 'Negate': _SWIG.negate,
          'Sqrt': _SWIG.sqrt, 'Softplus': _SWIG.softplus}
_BINARY = {'Plus': _SWIG.plus, 'Minus': _SWIG.minus, 'ElementTimes': _SWIG.element_times}


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
    if (op not in _UNARY and op not in _BINARY) or len(v.shape) != n:
        return None
    inputs = f.inputs
    if op in _UNARY:
        inner = _rebuild(inputs[0], n, leaf, side, depth - 1)
        return None if inner is None else _op(_UNARY[op], inner)
    fixed = [_input_free(i) for i in inputs]
    if builtins.all(fixed):
        return None
    parts = []
    for i, fx in zip(inputs, fixed):
        if fx:
            r = side(i, n)
        elif len(i.shape) == n:
            r = _rebuild(i, n, leaf, side, depth - 1)
        else:
            r = None
        if r is None:
            return None
        parts.append(r)
    return _op(_BINARY[op], parts[0], parts[1])


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
    return src if total == tuple(range(len(total))) else _transpose_node(src, total)


def _transposed_side(v, n, perm):
    """A constant/parameter operand laid out by ``perm`` (broadcast dims kept)."""
    if builtins.any(d < 0 for d in v.shape) or len(v.shape) > n:
        return None
    full = _reshape(v, (1,) * (n - len(v.shape)) + tuple(v.shape)) \
        if len(v.shape) < n else v
    return _transpose_node(full, perm)


def _batched_transposed_leaf(v, perm):
    """The batched Variable that ``_per_sample(_transpose(v, perm))`` reads, where ``v`` is
    a ``_transpose`` of an ``_unbatch`` result that ``perm`` undoes; else None."""
    entry = _TRANSPOSED.get(v.uid)
    if entry is None or len(entry[1]) != len(perm):
        return None
    src, inner, _ = entry
    if tuple(inner[p] for p in perm) != tuple(range(len(perm))):
        return None
    return _batched_leaf(src)


def _batched_transposed_side(v, n, perm):
    """A constant/parameter operand laid out by ``perm``, its leading (batch) axis removed
    (a unit axis, else None): one reshape where ``perm`` keeps the order of its axes of
    more than one value (a bias), else the transpose and the reshape."""
    shape = tuple(v.shape)
    if builtins.any(d < 0 for d in shape) or len(shape) > n:
        return None
    full = (1,) * (n - len(shape)) + shape
    laid = tuple(full[p] for p in perm)
    if laid[0] != 1:
        return None
    moved = [perm.index(i) for i, d in enumerate(full) if d != 1]
    if moved == sorted(moved):
        return _reshape(v, laid[1:])
    return _drop_axis(_transposed_side(v, n, perm), 0)


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
    v = _raw(x)
    if not _SWIG.Variable_is_output(v):   # an input, parameter, constant or placeholder
        return _op(_SWIG.plus, v, _constant_like(v, 0))
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
            if checks.RUNTIME_CHECK in str(err):   # one of our checks: its own message
                raise checks.engine_error('function', err) from err
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
        try:
            self._callback(np.asarray(argument))
        except Exception as e:
            _PENDING_ERRORS.append(e)   # CNTK reports only "SWIG director method error"
            raise
        return None, argument

    def backward(self, state, root_gradients):
        return root_gradients

    def infer_outputs(self):
        i = self.inputs[0]
        return [C.output_variable(i.shape, i.dtype, i.dynamic_axes)]

    def clone(self, cloned_inputs):
        return _PassThrough(cloned_inputs[0], self._callback, self.name, aliased=True)


# ---------------------------------------------------------------------------
# Engine plumbing: graph caches and evaluation
# ---------------------------------------------------------------------------

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
    if not _MAYBE_EMPTY:        # no run-time range built: nothing to ask of ``var``
        return value
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
        uid = v.uid
        if uid not in seen:
            seen[uid] = len(outs)
            # ``C.combine`` of output Variables has those very Variables as its outputs
            outs.append(C.plus(v, _constant_like(v, 0)).output if v.is_input else v)
        pos.append(('out', seen[uid]))
    values = []
    if outs:
        _note_consumed_ranges(outs)
        f = C.combine(outs)
        args = f.arguments
        lp = _State.learning_phase
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
# operators on tensors"). CNTK's own elementwise +, -, * and / check the operands'
# static shapes first (``_checked_operator``: a ValueError, not CNTK's C++ stack), then
# run unchanged. Every other operator and ufunc is CNTK's and numpy's as before.

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


def _operator_function(fn_name):
    """The function an operator runs: ``fn_name`` of the adapter package, looked up at each
    call, so that an operator is checked as the public function is and gives its errors (an
    operator is a user's entry point, like a call of the function); core's own helpers
    (``_floor_divide``, ``_floor_mod``) from here."""
    if fn_name.startswith('_'):
        return globals()[fn_name]
    return getattr(sys.modules[__package__], fn_name)


def _operator(name, fn_name, reflected):
    """The method ``name`` of CNTK tensors: the adapter function ``fn_name``
    (``_operator_function``) of the tensor and the other operand, in the order
    Python means."""
    def operator(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        fn = _operator_function(fn_name)
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
            return _operator_function(_UFUNCS[ufunc])(a, b)
    out = kwargs.get('out', ())
    if builtins.any(_is_engine_tensor(o) for o in (out if isinstance(out, tuple) else (out,))):
        raise TypeError('%s: a CNTK tensor cannot be the output of a numpy ufunc' % ufunc.__name__)
    return getattr(ufunc, method)(*[_opaque(v) for v in inputs], **kwargs)


_array_ufunc._keras_backend_operator = True


#: CNTK's own elementwise operators, checked before CNTK builds them (``_checked_operator``)
_ELEMENTWISE = ('__add__', '__radd__', '__sub__', '__rsub__', '__mul__', '__rmul__',
                '__truediv__', '__rtruediv__')

#: those operators as CNTK's SWIG op each builds (what CNTK's own operator calls after
#: sanitising its operands; ``_direct_binary``)
_DIRECT_OPERATORS = {'__add__': 'plus', '__radd__': 'plus', '__sub__': 'minus',
                     '__rsub__': 'minus', '__mul__': 'element_times',
                     '__rmul__': 'element_times', '__truediv__': 'element_divide',
                     '__rtruediv__': 'element_divide'}


def _static_sizes(value):
    """The static sizes CNTK broadcasts (its dynamic axes apart), None where unknown."""
    if _is_engine_tensor(value):
        return _static_shape(value)
    return tuple(d if d >= 0 else None for d in np.shape(value))


def _checked_operator(name, original):
    """CNTK's own operator ``name`` (``original``) after a check of the operands' static
    sizes: two known sizes of an axis (aligned from the last), neither 1, that differ raise
    ValueError, where CNTK prints its C++ call stack and raises RuntimeError (the rule of
    ``shape_rules.broadcast_conflict``, as the other engines' operators check it). Where
    ``_direct_binary`` applies (the operands CNTK's own operator would pass on unchanged, or
    a number it would make a scalar constant of) the node is built by CNTK's SWIG op itself:
    the same node, a fifth of the time."""
    direct = _DIRECT_OPERATORS.get(name)
    swig_op = getattr(_SWIG, direct) if direct else None
    swapped = name.startswith('__r')

    def operator(self, other):
        if _is_engine_tensor(other) or isinstance(other, (np.ndarray, list, tuple)):
            sa, sb = _static_sizes(self), _static_sizes(other)
            if shape_rules.broadcast_conflict(sa, sb):
                shapes = (sb, sa) if swapped else (sa, sb)
                raise ValueError('%s: operands of shapes %s and %s do not broadcast '
                                 'together' % ((name.strip('_'),) + shapes))
        if swig_op is not None:
            node = _direct_binary(swig_op, self, other, swapped)
            if node is not None:
                return node
        return original(self, other)
    operator.__name__ = name
    operator.__qualname__ = name
    operator.__doc__ = original.__doc__
    operator._keras_backend_operator = True
    operator._keras_backend_original = original
    return operator


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
        for name in _ELEMENTWISE:
            current = _defines(cls, name)
            if current is not None:
                original = getattr(current, '_keras_backend_original', current)
                setattr(cls, name, _checked_operator(name, original))
        current = _defines(cls, '__array_ufunc__')
        if current is None or getattr(current, '_keras_backend_operator', False):
            cls.__array_ufunc__ = _array_ufunc


# ---------------------------------------------------------------------------
# Engine plumbing: the session and the adapter's state
# ---------------------------------------------------------------------------

#: uids of the inputs (placeholders) that ``gather`` takes as its indices: CNTK holds
#: indices as floats, so a K.function checks the values fed there (whole numbers only)
INDEX_INPUTS = set()


def whole_indices(value):
    """gather's check of indices CNTK holds as floats: whole numbers only (a value fed
    to a placeholder, or a constant's).

    Raises:
        ValueError: a value with a fractional part (named, with up to 4 of them).
    """
    value = np.asarray(value)
    if value.dtype.kind not in 'fc':
        return
    frac = np.mod(value, 1) != 0
    if np.any(frac):
        odd = np.unique(value[frac])[:4].tolist()
        raise ValueError("gather: argument 'indices' must hold whole numbers (CNTK holds them "
                         "as floats); got %s" % odd)


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


def _new_learning_phase():
    return C.input_variable((), dtype=np.float32, dynamic_axes=[], needs_gradient=False,
                            name='keras_learning_phase')


class _State(object):
    """The adapter's state that its API calls replace, held here once (class attributes, read
    as ``_State.<name>`` wherever they are used, so that no module keeps a stale copy):

    * ``learning_phase``: the scalar float32 input fed 0 or 1 (``learning_phase``; a fresh one
      after ``clear_session``);
    * ``session``: what ``get_session`` returns (``set_session`` replaces it).
    """
    learning_phase = _new_learning_phase()
    session = _Session()


# ---------------------------------------------------------------------------
# Engine plumbing: control dependencies, updates and the compiled Function
# ---------------------------------------------------------------------------

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


# The API's ``is_variable`` and ``update`` (bound under their names in the ``tensors`` and
# ``updates`` sections of the ops): compiled functions take (variable, value) pairs too.

def is_variable(x):
    """True for CNTK parameters (what ``variable`` returns)."""
    return _is_engine_tensor(x) and bool(_var(x).is_parameter)


def update(x, new_x):
    """A ``C.assign`` node; ValueError when ``new_x``'s shape neither broadcasts to ``x``'s nor
    holds its number of elements (a ``(1,)`` value is assigned to a scalar variable)."""
    if not is_variable(x):   # also reached from ``function``'s (variable, value) update pairs
        raise ValueError('update: x must be a variable, got %r' % (x,))
    held = _dtype_of(x)
    if not _is_engine_tensor(new_x):
        new_x = _to_tensor(new_x, dtype=dtype(x))
    if _dtype_of(new_x) != held:
        new_x = C.cast(new_x, held)
    xs, ns = _static_shape(x), _static_shape(new_x)
    if ns != xs:
        if None not in ns and int(np.prod(ns)) == int(np.prod(xs)) and \
                (int(np.prod(ns)) == 1 or [d for d in ns if d != 1] == [d for d in xs if d != 1]):
            new_x = _reshape(new_x, xs)      # e.g. a (1,) value for a scalar variable
        elif len(ns) <= len(xs) and builtins.all(
                n in (1, d) for n, d in zip(ns[::-1], xs[::-1])):
            new_x = new_x + C.constant(0., shape=xs, dtype=held)
        elif len(ns) == len(xs) and builtins.all(n is None or n == d for n, d in zip(ns, xs)):
            # free sizes known only at run time, which must be the variable's
            new_x = _reshape(new_x, xs)
        else:
            raise ValueError('update: a value of shape %s cannot be assigned to a variable of '
                             'shape %s' % (ns, xs))
    a = _op(_SWIG.assign, x, new_x)
    a._keras_target = x
    return a


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


def _owner_uid(v):
    """The uid of the Function whose output Variable ``v`` is (SWIG's own calls)."""
    return _SWIG.Function_uid(_SWIG.Variable_owner(v))


def _each_function(stack, found):
    """Each CNTK Function popped from ``stack`` whose uid is not in ``found``, as
    ``(function, uid)``, once (its uid is added to ``found``); the caller pushes the
    Functions to go on to onto ``stack`` (a depth-first walk)."""
    f_uid = _SWIG.Function_uid
    while stack:
        f = stack.pop()
        uid = f_uid(f)
        if uid not in found:
            found.add(uid)
            yield f, uid


#: the values (summed over a graph's outputs, for the rows of a call) from which a function
#: reads its placeholders on CNTK's batch axis (``Function._batch_axis_feed``): about 4 MB
#: in float32, where the buffers CNTK then shares outweigh the clone of the graph
_BATCH_AXIS_MIN_VALUES = 1 << 20


#: Function uid -> (the Variables it reads that other Functions output, as pairs (Variable
#: uid, the values it holds for one row: 0 without a free axis), the uids of those
#: Functions): what ``_values_per_row`` and the training plan's walk (``_GraphIndex``) read
#: of each Function. The functions Keras compiles for one model (training, evaluation,
#: prediction) share most of their graphs; a later walk reads those Functions here, without
#: asking CNTK. A Function is entered only with everything below it (a walk is finished
#: before its entries are kept), and the whole memo is dropped past ``_ROW_VALUES_MAX``
#: entries (uids and numbers only: no graph is kept alive by it).
_ROW_VALUES = {}
_ROW_VALUES_MAX = 200000


def _free_values(v):
    """The product of the known sizes of Variable ``v`` (SWIG's own object) when one of its
    axes is free (the leading size of our placeholders, which the rows of a call fill), else
    0."""
    size, free = 1, False
    for d in _SWIG.NDShape_dimensions(_SWIG.Variable_shape(v)):
        if d < 0:
            free = True
        else:
            size *= d
    return size if free else 0


def _keep_row_entries(learnt):
    """Add ``learnt`` (uid -> entry, each with everything below it in ``learnt`` or in
    ``_ROW_VALUES``) to ``_ROW_VALUES``; past its bound the memo starts again, empty (entries
    of ``learnt`` may name Functions that only the old memo knew)."""
    if len(_ROW_VALUES) + len(learnt) > _ROW_VALUES_MAX:
        _ROW_VALUES.clear()
    else:
        _ROW_VALUES.update(learnt)


def _values_per_row(graph):
    """The values that the Functions of ``graph`` compute for one row of the batch: for each
    Variable with a free axis that one of them outputs and another reads, or that ``graph``
    outputs, the product of its known sizes, summed; CNTK keeps a buffer for each. One walk
    through CNTK's SWIG functions over the Functions that ``_ROW_VALUES`` does not know yet,
    reading the shapes of the Variables each Function reads (asking a Function for its
    outputs costs CNTK 10-20 microseconds, a Variable's shape 1-2)."""
    inputs_of, f_uid = _SWIG.Function_inputs, _SWIG.Function_uid
    v_owner, is_output, v_uid = _SWIG.Variable_owner, _SWIG.Variable_is_output, \
        _SWIG.Variable_uid
    known, learnt = _ROW_VALUES, {}
    counted, found, stack = {}, set(), []
    for o in _SWIG.Function_outputs(graph):
        if is_output(o):
            counted[v_uid(o)] = _free_values(o)
            f = v_owner(o)
            stack.append((f_uid(f), f))
    while stack:
        uid, f = stack.pop()
        if uid in found:
            continue
        found.add(uid)
        entry = known.get(uid)
        if entry is None:
            read, below = [], []
            for i in inputs_of(f, True):
                if is_output(i):
                    read.append((v_uid(i), _free_values(i)))
                    below.append(v_owner(i))
            entry = learnt[uid] = (tuple(read), tuple(f_uid(b) for b in below))
            stack.extend(zip(entry[1], below))
        else:
            stack.extend((b, None) for b in entry[1])   # known, with all below it
        counted.update(entry[0])
    _keep_row_entries(learnt)
    return builtins.sum(counted.values())


class _GraphIndex(object):
    """One walk over the graphs of some Variables, for a training plan's questions: which
    Functions read a ``gradients`` output or an argument (an input or a placeholder),
    directly or through other Functions, which ``gradients`` outputs and parameters a
    graph reaches, and which Functions a graph holds.

    The walk stops at ``gradients`` outputs (their own graphs are the loss's, which the
    plan asks about apart) and reads each Function's inputs once: CNTK's Python bindings
    cost a few microseconds a call, and asking each question of each update by its own
    walk (``C.combine(...).arguments`` per update, a walk per question) took 0.5 s of
    ResNet50's first step. ``walk`` adds graphs; the answers are of everything walked.
    """

    def __init__(self):
        #: Function uid -> uids of the Functions it reads; -> its gradients outputs;
        #: -> its parameters
        self.reads, self.grads, self.params = {}, {}, {}
        self.consumers, self._owners = {}, {}
        self.direct_grad, self.direct_arg = set(), set()
        self._closures = {}

    def walk(self, variables, row_values=False):
        """Add the graphs of ``variables``; return the uids of their Functions.

        Asks CNTK through its SWIG functions (``_SWIG.Function_inputs`` ...) rather than the
        Python properties, which wrap each answer in Python classes: a third of the time.
        Only the ``gradients`` outputs and parameters kept are given their Python classes.
        With ``row_values``, what ``_values_per_row`` reads of each Function is read on the
        way and kept in ``_ROW_VALUES`` for the Functions that read no ``gradients`` output
        (the walk stops there), so that the step's own walk finds it there: the graphs of
        the outputs and the loss, not the optimizer's updates, whose shapes no call reads.
        """
        inputs_of, f_uid = _SWIG.Function_inputs, _SWIG.Function_uid
        v_uid, v_owner, is_output = _SWIG.Variable_uid, _SWIG.Variable_owner, \
            _SWIG.Variable_is_output
        is_parameter, is_input, is_placeholder = _SWIG.Variable_is_parameter, \
            _SWIG.Variable_is_input, _SWIG.Variable_is_placeholder
        found, stack = set(), []
        for v in variables:
            v = _var(v)
            if v.is_output and v.uid not in _GRADIENT_OF:
                stack.append(v.owner)
        reads, consumers, owners = self.reads, self.consumers, self._owners
        rows = {}
        for f, uid in _each_function(stack, found):
            if uid in reads:
                stack.extend(owners[o] for o in reads[uid] if o not in found)
                continue
            mine, grads, params, read = [], [], [], []
            for i in inputs_of(f, True):
                if is_output(i):
                    iv = v_uid(i)
                    if iv in _GRADIENT_OF:
                        _as_cntk_class(i)
                        grads.append(i)
                        continue
                    if row_values:
                        read.append((iv, _free_values(i)))
                    owner = v_owner(i)
                    o = f_uid(owner)
                    mine.append(o)
                    consumers.setdefault(o, []).append(uid)
                    owners.setdefault(o, owner)
                    if o not in found:
                        stack.append(owner)
                elif is_parameter(i):
                    _as_cntk_class(i)
                    params.append(i)
                elif is_input(i) or is_placeholder(i):
                    self.direct_arg.add(uid)
            reads[uid], self.grads[uid], self.params[uid] = mine, grads, params
            if grads:
                self.direct_grad.add(uid)
            elif row_values:
                rows[uid] = (tuple(read), tuple(mine))
        self._closures = {}
        if rows:
            self._keep_rows(rows)
        return found

    def _keep_rows(self, rows):
        """Keep in ``_ROW_VALUES`` the ``rows`` (uid -> entry) of the Functions whose graphs
        were read whole, with row values: not those that read a ``gradients`` output, nor
        those above a Function that an earlier walk without row values read first."""
        # each Function's graph is walked whole by now (here or before)
        below_grad = self._closure('grad')
        keep = dict((u, e) for u, e in rows.items() if u not in below_grad)
        todo = [c for e in keep.values() for c in e[1]
                if c not in keep and c not in _ROW_VALUES]
        while todo:
            for u in self.consumers.get(todo.pop(), ()):
                if keep.pop(u, None) is not None:
                    todo.append(u)
        _keep_row_entries(keep)

    def _closure(self, kind):
        """The uids of the Functions that read, through other Functions, one of ``kind``."""
        if kind not in self._closures:
            marked = set(self.direct_grad if kind == 'grad' else self.direct_arg)
            todo = list(marked)
            while todo:
                for c in self.consumers.get(todo.pop(), ()):
                    if c not in marked:
                        marked.add(c)
                        todo.append(c)
            self._closures[kind] = marked
        return self._closures[kind]

    def function(self, uid):
        """The walked Function of ``uid`` that another walked Function reads (SWIG's own
        object)."""
        return self._owners[uid]

    def reads_gradient(self, v):
        """Whether Variable ``v``'s graph (walked) reads a ``gradients`` output."""
        v = _var(v)
        return _SWIG.Variable_uid(v) in _GRADIENT_OF or (
            _SWIG.Variable_is_output(v) and _owner_uid(v) in self._closure('grad'))

    def reads_argument(self, v):
        """Whether Variable ``v``'s graph (walked), short of any ``gradients`` output, reads
        an input or a placeholder."""
        v = _var(v)
        if _SWIG.Variable_is_input(v) or _SWIG.Variable_is_placeholder(v):
            return True
        return (_SWIG.Variable_is_output(v) and _SWIG.Variable_uid(v) not in _GRADIENT_OF and
                _owner_uid(v) in self._closure('arg'))

    def reached(self, variables):
        """(``gradients`` outputs, parameters) that the walked graphs of ``variables``
        reach, each a list in the order found."""
        grads, params, seen, stack = {}, {}, set(), []
        for v in variables:
            v = _var(v)
            if v.uid in _GRADIENT_OF:
                grads[v.uid] = v
            elif v.is_parameter:
                params[v.uid] = v
            elif v.is_output:
                stack.append(v.owner.uid)
        while stack:
            uid = stack.pop()
            if uid in seen:
                continue
            seen.add(uid)
            for g in self.grads[uid]:
                grads[g.uid] = g
            for p in self.params[uid]:
                params[p.uid] = p
            stack.extend(o for o in self.reads[uid] if o not in seen)
        return list(grads.values()), list(params.values())


def _universal_learner(update_graph, grads, params, clamps=()):
    """CNTK's universal learner running ``update_graph`` (the updates that read ``grads``,
    the ``gradients`` outputs of ``params``), as ``C.universal`` builds it: a constant of
    zeros per parameter stands for its gradient (the learner feeds it the values of the
    backward pass), in place of each ``gradients`` output in a clone of the graph. The
    constants come from CNTK's SWIG constructor (``C.universal`` reads the update function's
    signature through ``inspect`` and makes each constant through CNTK's Python function).
    ``clamps``: ``K.sqrt``'s ``relu`` Functions (``_SQRT_CLAMPS``) found in the graph; the
    clone reads each one's input in its place (the learner only evaluates the graph).

    Raises:
        ValueError: for a parameter whose shape CNTK has not inferred yet.
    """
    dev = C.cntk_py.DeviceDescriptor.use_default_device()
    slots = []
    for p in params:
        shape = tuple(p.shape)
        if builtins.any(d < 0 for d in shape):
            raise ValueError('parameter %s has inferred dimensions' % (p,))
        c = C.cntk_py.Constant(shape, _SWIG.Variable_get_data_type(_raw(p)), 0., dev, 'grad')
        c.__class__ = C.Constant
        slots.append(c)
    by_param = dict((p.uid, c) for p, c in zip(params, slots))
    subs = dict((g, by_param[_GRADIENT_OF[g.uid][1].uid]) for g in grads)
    v_uid = _SWIG.Variable_uid
    for f in clamps:
        y = _SWIG.Function_inputs(f, True)[0]
        of = _GRADIENT_OF.get(v_uid(y))
        if of is not None:
            # a square root of a gradient: its relu reads the gradient's constant (CNTK does
            # not substitute twice)
            y = by_param.get(of[1].uid)
            if y is None:
                continue
        subs[_SWIG.Function_output(f)] = y
    graph = update_graph.clone(C.CloneMethod.share, subs)
    learner = C.cntk_py.universal_learner(params, slots, graph)
    _as_cntk_class(learner)     # CNTK's Python class, as C.universal gives it (in place)
    return learner


def _forward_values(graph, args, feed):
    """The numpy value of each output of CNTK Function ``graph`` for ``feed`` (argument ->
    array), keyed by ``graph``'s output Variables: CNTK's own ``_forward`` with the maps
    prepared as ``Function.eval`` prepares them (``args``: ``graph.arguments``, which
    ``eval`` asks CNTK for again at every call)."""
    dev = C.DeviceDescriptor.use_default_device()
    in_map = _sanitize_var_map(args, feed, None, dev) if feed else {}
    out_map = dict.fromkeys(graph.outputs)
    _CFunction._forward(graph, in_map, out_map, dev, set())
    return dict((o, _value_as_array(v, o)) for o, v in out_map.items())


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
        self._feed_specs = checks.feed_specs(_THIS, self.inputs)

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
        index = _GraphIndex()
        in_heads = index.walk(heads, row_values=True)
        in_updates = index.walk([_var(u) for u in self.updates])
        upd, forward_updates = [], []
        for u in self.updates:
            v = _var(u)
            if not index.reads_gradient(v) and (index.reads_argument(v) or
                                                _owner_uid(v) in in_heads):
                forward_updates.append(v)
            else:
                upd.append(v)
        if not upd:
            return None
        grads = index.reached(upd)[0]
        if not grads or builtins.any(index.reads_gradient(v) for v in heads + forward_updates):
            return None
        losses = dict((_GRADIENT_OF[g.uid][0].uid, _GRADIENT_OF[g.uid][0]) for g in grads)
        if len(losses) != 1:
            return None
        loss = list(losses.values())[0]
        if not (loss.is_output and _owner_uid(loss) in index.reads):
            # a loss no output reads (else its graph is walked)
            index.walk([loss], row_values=True)
        reachable = set(p.uid for p in index.reached([loss])[1])
        params = {}
        for g in grads:
            w = _GRADIENT_OF[g.uid][1]
            if not w.is_parameter or w.uid not in reachable:
                return None
            params[w.uid] = w
        params = list(params.values())
        if builtins.any(index.reads_argument(v) for v in upd):
            return None  # an update reads an input: use the general path
        try:
            learner = _universal_learner(C.combine(upd), grads, params,
                                         [index.function(u) for u in in_updates & _SQRT_CLAMPS])
        except Exception:  # an update graph CNTK's learner cannot take
            return None
        return {'loss': loss, 'params': set(params), 'learner': learner,
                'forward_updates': forward_updates}

    def _plan(self):
        """Which graph argument each input feeds (inputs the graph does not use
        are dropped); learning-phase arguments that no input feeds get 0; which inputs
        ``gather`` takes as its indices (their values are checked to be whole numbers)."""
        by_uid = dict((a.uid, a) for a in self._graph.arguments)
        self._feed_plan = []
        self._index_feeds = []
        fed = set()
        for pos, var in enumerate(self.inputs):
            if isinstance(var, int):
                continue
            uid = _var(var).uid
            if uid in by_uid:
                a = by_uid[uid]
                self._feed_plan.append((pos, a, None if a.is_sparse else np.dtype(a.dtype)))
                fed.add(uid)
                if uid in INDEX_INPUTS:
                    self._index_feeds.append(pos)
        self._defaults = dict((a, np.asarray(0., np.dtype(a.dtype))) for a in by_uid.values()
                              if a.uid not in fed and a.name == 'keras_learning_phase')
        self._heads = self._graph.outputs
        self._args = list(by_uid.values())
        self._batched = None
        self._batched_args = None
        self._row_values = None

    def _batch_axis_graph(self):
        """The graph with each fed placeholder of unknown leading size read from an input on
        CNTK's batch axis (``C.unpack_batch`` of it), as ``(graph, {placeholder uid: input})``;
        False where no placeholder qualifies or CNTK cannot clone the graph.

        Our placeholders hold the batch as a free static axis (no dynamic axis), and CNTK keeps
        a buffer of its own for every node of a graph whose inputs have no dynamic axis (its
        memory sharing only recycles the buffers of nodes that depend on an input with one):
        ResNet50's prediction on 8 images of 96x96 took 1.3 GB and 0.6 s of page faults in its
        first call, against 0.18 GB for Keras' CNTK backend, whose inputs are on the batch
        axis. Reading the same values through ``unpack_batch`` gives the same graph and numbers
        with CNTK's memory sharing. Used for functions without a training plan (a training
        step keeps its forward values for the backward pass anyway), and only when every
        substituted input is fed the same number of rows (CNTK's batch axis holds one size).
        """
        # every other argument maps to itself (CNTK's clone would otherwise copy it)
        subs = dict((a, a) for a in self._graph.arguments)
        batch_inputs = {}
        for _, arg, dt in self._feed_plan:
            shape = arg.shape
            if dt is None or arg.dynamic_axes or not shape or shape[0] != _FREE:
                continue
            b = C.input_variable(shape[1:], dtype=arg.dtype, needs_gradient=False,
                                 name=arg.name)
            subs[arg] = C.unpack_batch(b).output
            batch_inputs[arg.uid] = b
        if not batch_inputs:
            return False
        try:
            graph = self._graph.clone(C.CloneMethod.share, subs)
        except Exception:   # an op CNTK cannot clone this way: keep the graph as it is
            return False
        if [o.shape for o in graph.outputs] != [o.shape for o in self._heads]:
            return False
        return graph, batch_inputs

    def _batch_axis_feed(self, feed):
        """``(graph, feed)`` of :meth:`_batch_axis_graph` for ``feed`` (argument -> array),
        or None where it does not apply (no placeholder qualifies, or the substituted inputs
        are not fed one common, nonzero number of rows), or where it does not pay: CNTK's
        clone of a graph takes 0.5-1 ms, which a graph whose outputs hold fewer than
        ``_BATCH_AXIS_MIN_VALUES`` values for ``feed``'s rows (a small model's function)
        does not win back by sharing buffers; the next call with more rows asks again."""
        if self._batched is None:
            rows = builtins.max([np.shape(v)[0] for v in feed.values() if np.ndim(v)] or [0])
            if self._row_values is None:
                self._row_values = _values_per_row(self._graph)
            if rows * self._row_values < _BATCH_AXIS_MIN_VALUES:
                return None
            self._batched = self._batch_axis_graph()
        if not self._batched:
            return None
        graph, batch_inputs = self._batched
        sizes = set(np.shape(v)[0] for a, v in feed.items() if a.uid in batch_inputs)
        if len(sizes) != 1 or 0 in sizes:
            return None
        return graph, dict((batch_inputs.get(a.uid, a), v) for a, v in feed.items())

    def _evaluate(self, feed):
        """The graph's outputs for ``feed`` (argument -> array) as a dict keyed by
        ``self._heads``, through :meth:`_batch_axis_graph` where it applies."""
        batched = self._batch_axis_feed(feed)
        if batched is not None:
            graph, bfeed = batched
            if self._batched_args is None:
                self._batched_args = graph.arguments
            try:
                res = _forward_values(graph, self._batched_args, bfeed)
            except Exception:
                # CNTK refused the batch-axis form: the original graph from now on
                # (it raises the error of a bad feed itself)
                self._batched = False
            else:
                return dict((h, res[o]) for h, o in zip(self._heads, graph.outputs))
        res = _forward_values(self._graph, self._args, feed)
        return dict((h, res[o]) for h, o in zip(self._heads, self._graph.outputs))

    def _train_step(self, feed):
        """Forward, backward and learner update (see ``_training_plan``), on the graph of
        :meth:`_batch_axis_graph` where it applies (CNTK then recycles the buffers of the
        forward values the backward pass does not read: ResNet50's first step peaks 0.7 GB
        lower), else on the graph as built.

        Calls CNTK's ``_forward``/``_backward`` directly with prepared maps
        (what ``Function.forward``/``backward`` do after re-sanitising their
        arguments on every call); the root gradient of a static-shaped loss
        is made once per graph.
        """
        plan = self._train
        dev = C.DeviceDescriptor.use_default_device()

        def forward(graph, run, feed):
            in_map = _sanitize_var_map(run['args'], feed, None, dev) if feed else {}
            out_map = dict.fromkeys(graph.outputs)
            return _CFunction._forward(graph, in_map, out_map, dev, set([run['loss']])), out_map

        state = None
        batched = self._batch_axis_feed(feed)
        if batched is not None:
            graph, bfeed = batched
            if 'batched' not in plan:
                at = [o.uid for o in self._heads].index(plan['loss'].uid)
                plan['batched'] = {'loss': graph.outputs[at], 'args': graph.arguments}
            run = plan['batched']
            try:
                state, out_map = forward(graph, run, bfeed)
            except Exception:
                # CNTK refused the batch-axis form (a forward pass writes nothing): the
                # original graph from now on, which raises the error of a bad feed itself
                self._batched = False
        if state is None:
            graph, run = self._graph, plan
            state, out_map = forward(graph, run, feed)
        loss = run['loss']
        values = dict((o, _value_as_array(v, o)) for o, v in out_map.items())
        root = run.get('root')
        if root is None:
            root = _sanitize_var_map(graph.outputs, {loss: np.ones_like(values[loss])}, None,
                                     state.device())
            if builtins.all(d >= 0 for d in loss.shape):
                run['root'] = root
        grads = dict.fromkeys(plan['params'])
        _CFunction._backward(graph, state, root, grads)
        C.cntk_py.Learner._update(plan['learner'],
                                  dict((p, C.cntk_py.Value.data(g)) for p, g in grads.items()),
                                  1, False)
        return dict((h, values[o]) for h, o in zip(self._heads, graph.outputs))

    def __call__(self, inputs):
        if self._graph is None and (self.outputs or self.updates):
            self._build()
            if self._graph is not None:
                self._plan()
        checks.check_feeds(self._feed_specs, inputs)
        for pos in getattr(self, '_index_feeds', ()):
            whole_indices(inputs[pos])
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
                        res = self._evaluate(feed)
            except RuntimeError as e:
                raise checks.engine_error('function', e, [np.shape(v) for v in inputs]) from e
            heads = self._heads
            out = [_empty_if_ranged(heads[p], res[heads[p]]) if kind == 'out' else v
                   for (kind, p), v in zip(self._slots, out)]
        return out[0] if self._single else out


_attach_operators()
