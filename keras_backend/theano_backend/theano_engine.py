"""Theano 1.0.5 (the original ``theano`` package, CPython 3.6) as the engine
of :mod:`keras_backend.theano_backend`.

The adapter (:mod:`.core`) imports this module first; the import fails (and the
adapter takes :mod:`.pytensor_engine`) where ``theano`` does not
import or cannot build a tiny graph (Theano 1.0 imports on new numpy only to
fail later). This module never imports ``pytensor``.

What differs from PyTensor: Theano's tensor types hold broadcastable flags but
no sizes, so :func:`static_shape` runs the engine's per-op ``infer_shape``
from the known sizes of placeholders, variables and constants;
:func:`fix_broadcast` rebuilds elementwise ops so that axes of static size 1
broadcast (as they do with PyTensor's static shapes), and :func:`scan` gives
a step's inner inputs the static shapes of their outer tensors and applies
that fix to its outputs; shared variables' size-1 axes are broadcastable;
random draws come from ``RandomStreams``, whose states the engine's
``function`` advances itself; without ``blas.ldflags`` :func:`batched_dot`
avoids Theano's BLAS-only ``BatchedDot``; and Theano's tensors, which
have no ``@``, get the adapter's ``dot`` as ``@`` (``_add_matmul``).

It provides every name of :mod:`.engine_interface` (its ``__all__``), with the
contracts written there; the above is what differs.
"""
from __future__ import absolute_import, division, print_function

import os
import sys
import traceback

import numpy as np

from . import blas as _blas
from . import engine_interface as _engine_interface
from .. import shape_rules

import theano as th
import theano.tensor as T

# Theano 1.0 imports on new numpy only to fail later; build a tiny graph to be
# sure it works here (an error here makes the adapter take PyTensor).
T.as_tensor_variable(np.zeros((2,), dtype='float32')).sum()

from theano import sparse  # noqa: E402
from theano.compile.ops import Shape as _ShapeOp, Shape_i as _ShapeI  # noqa: E402
from theano.compile.sharedvalue import SharedVariable  # noqa: E402
from theano.gof import Apply, Constant, Op, Variable  # noqa: E402
from theano.gof.graph import NoParams as _NoParams, ancestors  # noqa: E402
from theano.gradient import disconnected_grad  # noqa: E402
from theano.printing import Print  # noqa: E402
from theano.scalar import Scalar as _ScalarType  # noqa: E402
from theano.tensor.shared_randomstreams import RandomStreams as _RandomStreams  # noqa: E402
from theano.tensor.subtensor import Subtensor as _Subtensor  # noqa: E402

__all__ = list(_engine_interface.NAMES)

ENGINE = 'theano'
ENGINE_VERSION = str(getattr(th, '__version__', 'unknown'))
FLAGS_ENV = 'THEANO_FLAGS'
RC_FILES = ('~/.theanorc', '~/.theanorc.txt')
HAS_STATIC_SHAPES = False
SparseType = sparse.SparseType


def _configure_blas():
    """Link the OpenBLAS of the numpy / scipy wheels where Theano has no BLAS
    (:func:`.blas.configure`); return the ldflags in force."""
    from theano.configdefaults import try_blas_flag
    # a value from the user's flags or rc file was applied (is_default False) at import
    param = [p for p in th.configparser._config_var_list if p.fullname == 'blas.ldflags'][0]
    user_set = not param.is_default

    def _set(flags):
        th.config.blas.ldflags = flags
    return _blas.configure(ENGINE, (lambda: th.config.blas.ldflags, _set), user_set,
                           th.config.compiledir, th.config.cxx, try_blas_flag)


_configure_blas()


def _version_parameterless_ops():
    """Let Theano's compiledir keep the C modules of ops without parameters across processes.

    Theano 1.0.5 keys a C module by its ops' and types' ``c_code_cache_version`` and reuses
    it in later processes only when the key is versioned; ``CLinker.cmodule_key_`` also puts
    each op's ``__props__`` among the versions, so an op with no parameters (``__props__ =
    ()``: ``Dot22``, ``Dot22Scalar``, ``Alloc``, ``ScalarFromTensor``, ``Softmax``,
    ``SoftmaxWithBias``, ``SoftmaxGrad``, ...) reads as unversioned although its C code has
    a version, and its module is compiled again in every process. Here a key that came out
    unversioned is versioned again when only empty ``__props__`` made it so (every op and
    type of the module has its code version; the key's signature, which names the ops, the
    compile flags, the libraries and the config hash, is Theano's own)."""
    from theano.gof.cc import CLinker
    original = CLinker.cmodule_key_
    if getattr(original, '_keras_backend', False):
        return

    def cmodule_key_(self, fgraph, no_recycling, *args, **kwargs):
        key = original(self, fgraph, no_recycling, *args, **kwargs)
        if key is None or key[0] != ():
            return key
        version = []
        for node in self.schedule(fgraph):
            op = node.op
            if hasattr(op, 'c_code_cache_version_apply'):
                version.append(op.c_code_cache_version_apply(node))
            if getattr(op, '__props__', None):
                version.append(op.__props__)
            version.extend(v.type.c_code_cache_version() for v in node.inputs + node.outputs)
        if not version or not all(version):
            return key
        return tuple(version), key[1]
    cmodule_key_._keras_backend = True
    cmodule_key_.__doc__ = original.__doc__
    CLinker.cmodule_key_ = cmodule_key_


def _stable_cop_versions():
    """Give Theano's ``COp`` (ops whose C code is in files, ``DimShuffle`` among them) a code
    version that is the same in every process.

    Theano 1.0.5 versions a ``COp`` by ``hash(tuple(self.func_codes))``, Python's hash of
    its C source strings, which string hash randomisation changes from process to process:
    the module keys differ each time and every ``DimShuffle`` module (``InplaceDimShuffle
    {x,x}``, ...) is compiled again in each process. Here the version is a SHA-256 digest of
    the same sources (and the params type's version, as Theano's)."""
    import hashlib
    from theano.gof.op import COp
    if getattr(COp.c_code_cache_version, '_keras_backend', False):
        return

    def c_code_cache_version(self):
        digest = hashlib.sha256('\0'.join(self.func_codes).encode('utf-8')).hexdigest()
        version = (int(digest[:15], 16),)
        if hasattr(self, 'params_type'):
            version += (self.params_type.c_code_cache_version(),)
        return version
    c_code_cache_version._keras_backend = True
    COp.c_code_cache_version = c_code_cache_version


_version_parameterless_ops()
_stable_cop_versions()


def _is_var(x):
    return isinstance(x, Variable)


def _is_sparse(x):
    return isinstance(getattr(x, 'type', None), SparseType)


# ---------------------------------------------------------------------------
# Tensors and their static shapes
# ---------------------------------------------------------------------------

def input_tensor(dtype, shape, name=None):
    """A symbolic input of ``dtype``; ``shape`` only fixes broadcastable dims."""
    return T.TensorType(dtype, tuple(d == 1 for d in shape))(name)


def shared(value, name=None):
    """A shared variable; its size-1 axes broadcast, as PyTensor's static
    shape makes them do."""
    if isinstance(value, np.ndarray):
        return th.shared(value, name=name, strict=False,
                         broadcastable=tuple(d == 1 for d in value.shape))
    return th.shared(value, name=name, strict=False)


def specify_shape(x, shape):
    """``x`` unchanged: Theano's types cannot hold sizes (``static_shape`` infers them)."""
    return x


def broadcastable_axes(x, axes):
    """``x`` with ``axes`` added to its broadcastable ones."""
    pattern = list(x.broadcastable)
    for a in axes:
        pattern[a] = True
    return T.patternbroadcast(x, pattern)


def pattern_broadcast(x, pattern):
    """``x`` with exactly the broadcastable flags ``pattern``."""
    return T.patternbroadcast(x, pattern)


def unbroadcast(x):
    """``x`` with none of its axes broadcastable (``T.unbroadcast``)."""
    axes = [i for i, b in enumerate(x.broadcastable) if b]
    return T.unbroadcast(x, *axes) if axes else x


def flatten(x):
    """``x`` as a 1-D tensor (``T.flatten(x, 1)``)."""
    return T.flatten(x, 1)


# Theano tensor types carry only broadcastable flags, not sizes.  Static
# sizes are inferred here instead: every node's ``infer_shape`` is asked
# for its output shape given the known input sizes (as int64 constants;
# unknown ones stay ``Shape_i`` of the input), then each dimension
# expression is folded.  Results are memoised in ``var.tag``.
_TAG = 'keras_backend_static_shape'
_FOLD_MAX_SIZE = 256


def _leaf_shape(v):
    nd = getattr(v.type, 'ndim', None)
    if nd is None:
        return None
    if isinstance(v, SharedVariable):
        return tuple(int(d) for d in
                     v.get_value(borrow=True, return_internal_type=True).shape)
    if isinstance(v, Constant) and hasattr(v.data, 'shape'):
        return tuple(int(d) for d in v.data.shape)
    bc = getattr(v.type, 'broadcastable', (False,) * nd)
    return tuple(1 if b else None for b in bc)


def _merge(shape, v):
    recorded = getattr(v, '_keras_shape', None)
    if shape is None or recorded is None or len(recorded) != len(shape):
        return shape
    return tuple(s if s is not None else (None if r is None else int(r))
                 for s, r in zip(shape, recorded))


def _cached(v):
    if isinstance(v, SharedVariable):
        return True  # computed on demand (its value may be replaced)
    return hasattr(v.tag, _TAG)


def _get(v):
    if isinstance(v, SharedVariable):
        return _leaf_shape(v)
    return getattr(v.tag, _TAG)


def _dim_inputs(v):
    shape = _merge(_get(v), v)
    if shape is None:
        return None
    return tuple(T.constant(d, dtype='int64') if d is not None else _ShapeI(k)(v)
                 for k, d in enumerate(shape))


def _fold(e, memo, depth=0):
    """Value of the small integer expression ``e``: an ndarray when known,
    a tuple with None entries for a partly known vector, else None."""
    if isinstance(e, (int, np.integer)):
        return np.asarray(e)
    if not isinstance(e, Variable):
        return None
    key = id(e)
    if key in memo:
        return memo[key]
    memo[key] = None
    val = None
    if isinstance(e, Constant):
        data = np.asarray(e.data)
        if data.size <= _FOLD_MAX_SIZE:
            val = np.array(data)
    elif e.owner is not None and depth < 64:
        val = _fold_node(e, memo, depth + 1)
    if isinstance(val, tuple) and all(v is not None for v in val):
        val = np.asarray(val, dtype=e.dtype)
    memo[key] = val
    return val


def _as_partial(val, var):
    """A 1-D folded value as a tuple (None entries unknown), or None."""
    if isinstance(val, tuple):
        return val
    if isinstance(val, np.ndarray) and val.ndim == 1:
        return tuple(int(v) for v in val)
    if val is None and getattr(var, 'ndim', None) == 1:
        n = static_shape(var)
        if n is not None and n[0] is not None:
            return (None,) * n[0]
    return None


def _fold_node(e, memo, depth):
    node = e.owner
    op = node.op
    ins = node.inputs
    if isinstance(op, _ShapeI):
        d = static_shape(ins[0])
        if d is not None and d[op.i] is not None:
            return np.asarray(d[op.i], dtype='int64')
        return None
    if isinstance(op, _ShapeOp):
        d = static_shape(ins[0])
        return None if d is None else tuple(d)
    if isinstance(op, T.opt.MakeVector):
        vals = [_fold(i, memo, depth) for i in ins]
        return tuple(None if v is None or np.ndim(v) else int(v) for v in vals)
    if isinstance(op, T.Join) and e.ndim == 1:
        axis = _fold(ins[0], memo, depth)
        if axis is None or int(axis) != 0:
            return None
        out = ()
        for part in ins[1:]:
            pv = _as_partial(_fold(part, memo, depth), part)
            if pv is None:
                return None
            out += pv
        return out
    if isinstance(op, _Subtensor) and ins[0].ndim == 1 and len(op.idx_list) == 1:
        base = _fold(ins[0], memo, depth)
        if isinstance(base, tuple):
            idx = T.subtensor.get_idx_list(ins, op.idx_list)[0]
            if isinstance(idx, slice):
                parts = [_fold(p, memo, depth) if p is not None else None
                         for p in (idx.start, idx.stop, idx.step)]
                if any(p is None and q is not None
                       for p, q in zip(parts, (idx.start, idx.stop, idx.step))):
                    return None
                return base[slice(*[None if p is None else int(p) for p in parts])]
            k = _fold(idx, memo, depth)
            if k is None or np.ndim(k):
                return None
            try:
                item = base[int(k)]
            except IndexError:
                return None
            return None if item is None else np.asarray(item, dtype=e.dtype)
    if isinstance(op, T.Elemwise) and e.ndim == 1 and e.dtype.startswith(('int', 'uint')):
        # integer arithmetic on a partly known shape vector (``K.shape(x)`` is
        # cast before it is indexed): element-wise, so the unknown entries stay
        # unknown and the others are computed
        vals = [_fold(i, memo, depth) for i in ins]
        if all(v is not None for v in vals) and any(isinstance(v, tuple) for v in vals):
            unknown = set(k for v in vals if isinstance(v, tuple)
                          for k, d in enumerate(v) if d is None)
            filled = [np.asarray([1 if d is None else d for d in v], dtype=i.dtype)
                      if isinstance(v, tuple) else v for v, i in zip(vals, ins)]
            out = _perform_on(node, e, filled)
            if out is None or out.ndim != 1:
                return None
            return tuple(None if k in unknown else int(d) for k, d in enumerate(out))
    scalar_op = getattr(op, 'scalar_op', op)
    if isinstance(scalar_op, th.scalar.Switch) and e.ndim == 0:
        cond = _fold(ins[0], memo, depth)
        if cond is None or np.ndim(cond):
            return None
        chosen = _fold(ins[1] if cond else ins[2], memo, depth)
        if chosen is None or isinstance(chosen, tuple) or np.ndim(chosen):
            return None
        return np.asarray(chosen, dtype=e.dtype)
    return _perform(node, e, memo, depth)


def _perform(node, e, memo, depth):
    op = node.op
    if isinstance(op, Print) or getattr(op, 'destroy_map', None):
        return None
    # only the small integer arithmetic of shape expressions is folded
    small_types = (T.TensorType, _ScalarType)
    if not all(isinstance(v.type, small_types) for v in node.inputs + node.outputs):
        return None
    if any(getattr(o, 'ndim', 0) > 1 for o in node.outputs):
        return None
    return _perform_on(node, e, [_fold(i, memo, depth) for i in node.inputs])


def _perform_on(node, e, values):
    """``e``'s value from ``node.op.perform`` on the folded ``values`` of the node's
    inputs, or None."""
    op = node.op
    vals = []
    for i, iv in zip(node.inputs, values):
        if not isinstance(iv, np.ndarray) or iv.size > _FOLD_MAX_SIZE:
            return None
        try:
            vals.append(i.type.filter(np.array(iv), allow_downcast=True))
        except Exception:
            return None
    storage = [[None] for _ in node.outputs]
    try:
        params = node.run_params()
        if params is _NoParams:
            op.perform(node, vals, storage)
        else:
            op.perform(node, vals, storage, params)
    except Exception:
        return None
    out = storage[node.outputs.index(e)][0]
    if out is None or np.size(out) > _FOLD_MAX_SIZE:
        return None
    return np.asarray(out)


def _dim(e, memo):
    val = _fold(e, memo)
    if not isinstance(val, np.ndarray) or val.ndim != 0:
        return None
    return int(val)


def _node_shapes(node):
    fallback = [_leaf_shape(o) for o in node.outputs]
    in_shapes = [_dim_inputs(i) for i in node.inputs]
    try:
        out_shapes = node.op.infer_shape(node, in_shapes)
    except Exception:  # no infer_shape or it cannot handle these inputs
        return fallback
    if out_shapes is None or len(out_shapes) != len(node.outputs):
        return fallback
    memo = {}
    result = []
    for o, shp, fb in zip(node.outputs, out_shapes, fallback):
        if shp is None or fb is None or len(shp) != len(fb):
            result.append(fb)
            continue
        dims = []
        for d, b in zip(shp, fb):
            got = _dim(d, memo)
            dims.append(b if got is None else got)
        result.append(tuple(dims))
    return result


def alloc(value, *sizes):
    """``T.alloc(value, *sizes)``."""
    return T.alloc(value, *sizes)


def static_int(e):
    """The value of the integer scalar expression ``e`` when the static sizes it reads
    determine it (``K.shape(x)[1] * 2`` of an ``x`` of known width), else None."""
    return _dim(e, {})


# outputs of the nodes whose shapes are being inferred: an ``infer_shape``
# may answer a dimension it cannot express by ``Shape_i`` of the node's own
# output (Scan does, for an output whose inner shape depends on inner
# variables); folding that must not ask for the same shape again
_IN_PROGRESS = set()


def static_shape(x):
    """Static shape of ``x`` (ints / None) from the engine's shape inference."""
    if _cached(x):
        return _merge(_get(x), x)
    if id(x) in _IN_PROGRESS:
        return _merge(_leaf_shape(x), x)
    stack = [(x, False)]
    while stack:
        v, expanded = stack.pop()
        if _cached(v):
            continue
        node = v.owner
        if node is None:
            setattr(v.tag, _TAG, _merge(_leaf_shape(v), v))
            continue
        if not expanded:
            stack.append((v, True))
            stack.extend((i, False) for i in node.inputs if not _cached(i))
            continue
        ids = set(id(o) for o in node.outputs) - _IN_PROGRESS
        _IN_PROGRESS.update(ids)
        try:
            shapes = _node_shapes(node)
        finally:
            _IN_PROGRESS.difference_update(ids)
        for o, shp in zip(node.outputs, shapes):
            if not _cached(o):
                setattr(o.tag, _TAG, _merge(shp, o))
    return _merge(_get(x), x)


def _broadcast_needed(inputs, statics, k, axis):
    """Whether input ``k`` of an elementwise op (static size 1 on ``axis``) is broadcast
    there: some other input's size on ``axis`` is not 1, or not known. Where every input
    holds one value on the axis nothing is broadcast, and the input keeps its type: marking
    it made ResNet50's last stage (1x1 images) compile each of its elementwise modules
    again for the other broadcast pattern (Theano keys a module by its inputs' types)."""
    for j, other in enumerate(inputs):
        if j == k or other.broadcastable[axis]:
            continue
        static = statics[j]
        if static is None or len(static) != other.ndim or static[axis] != 1:
            return True
    return False


def fix_broadcast(outs):
    """Rebuild the graph of ``outs`` so that elementwise ops see every axis
    whose static size is 1 as broadcastable.

    Theano tensor types know sizes only through broadcastable flags, so
    e.g. ``h - s[:, :1]`` compiles as a same-shape elementwise op and
    fails at run time; PyTensor (static shapes) broadcasts it.  The
    outputs keep their original types."""
    targets = [o for o in outs if _is_var(o)]
    if not targets:
        return outs
    mapping = {}
    for node in th.gof.graph.io_toposort(th.gof.graph.inputs(targets), targets):
        new_ins = [mapping.get(i, i) for i in node.inputs]
        if isinstance(node.op, T.Elemwise) and len(node.inputs) > 1:
            statics = [static_shape(old) for old in node.inputs]
            for k, new in enumerate(list(new_ins)):
                static = statics[k]
                if static is None or len(static) != new.ndim:
                    continue
                pattern = tuple(b or (d == 1 and _broadcast_needed(new_ins, statics, k, a))
                                for a, (b, d) in enumerate(zip(new.broadcastable, static)))
                if pattern != tuple(new.broadcastable):
                    new_ins[k] = T.patternbroadcast(new, pattern)
        if all(n is o for n, o in zip(new_ins, node.inputs)):
            continue
        try:
            new_node = node.clone_with_new_inputs(new_ins, strict=False)
        except Exception:  # the op insists on its input types: keep them
            new_ins = [T.patternbroadcast(n, o.broadcastable)
                       if n.broadcastable != o.broadcastable else n
                       for n, o in zip(new_ins, node.inputs)]
            new_node = node.clone_with_new_inputs(new_ins, strict=True)
        for old_out, new_out in zip(node.outputs, new_node.outputs):
            static = getattr(old_out.tag, _TAG, None)
            if static is not None:
                setattr(new_out.tag, _TAG, static)
            mapping[old_out] = new_out
    result = []
    for o in outs:
        n = mapping.get(o, o) if _is_var(o) else o
        if n is not o and n.broadcastable != o.broadcastable:
            n = T.patternbroadcast(n, o.broadcastable)
        if n is not o and hasattr(o, '_keras_shape'):
            n._keras_shape = o._keras_shape
        result.append(n)
    return result


# ---------------------------------------------------------------------------
# Ops
# ---------------------------------------------------------------------------

_HAS_BLAS = bool(str(th.config.blas.ldflags).strip())


def batched_dot(a, b):
    """(B, n, k) x (B, k, m) -> (B, n, m)."""
    if _HAS_BLAS:
        return T.batched_dot(a, b)
    # Without ``blas.ldflags`` Theano's BatchedDot C code still calls
    # ?gemm_ (no NumPy C-API fallback, unlike Dot22/Gemm), so the module
    # fails to load: contract with a broadcast product instead.
    return T.sum(a.dimshuffle(0, 1, 2, 'x') * b.dimshuffle(0, 'x', 1, 2), axis=2)


def _border(n, pads, kernel_size, dilation):
    """Symmetric int ``pads`` as Theano's ``border_mode``: its name ('valid', 'half',
    'full') where they are one, as Keras' Theano backend gives them (the op's output shape
    is then a simpler expression, the input's own for 'half' at stride 1), else the ints."""
    pads = tuple(int(p) for p in pads)
    if kernel_size is not None and all(k is not None for k in kernel_size[:n]):
        dk = [(int(k) - 1) * int(d) + 1 for k, d in zip(kernel_size[:n], dilation)]
        for name, want in (('valid', (0,) * n), ('half', tuple(k // 2 for k in dk)),
                           ('full', tuple(k - 1 for k in dk))):
            if pads == want:
                return name
    return pads


def _channels_first(n):
    """The axes taking a channels_last ``n``-D image to channels_first, and back."""
    return [0, n + 1] + list(range(1, n + 1)), [0] + list(range(2, n + 2)) + [1]


def _abstract_conv(n, x_cl, kernel, strides, dilation, pads, flip):
    """Theano's ``conv2d`` / ``conv3d`` (``AbstractConv2d`` / ``AbstractConv3d``; with a
    BLAS they run as ``CorrMM`` / ``Corr3dMM``, im2col and ``gemm`` in C) of channels_last
    ``x_cl`` ``(B, *S, C)`` with ``kernel`` ``(*K, C, out)``, a correlation or (``flip``) a
    convolution (``filter_flip``); None without a BLAS, where Theano would lower it to its
    legacy ops, which take neither padding nor dilation."""
    if not _HAS_BLAS:
        return None
    ks = static_shape(kernel)
    # the static shapes, as Keras' Theano backend gives them: the op's shape inference
    # then answers constants, not expressions of the input's shape the graph must compute
    to_cf, to_cl = _channels_first(n)
    w_axes = [n + 1, n] + list(range(n))
    xs = static_shape(x_cl)
    imshp = None if xs is None else tuple(xs[a] for a in to_cf)
    kshp = None if ks is None or any(d is None for d in ks) else tuple(ks[a] for a in w_axes)
    conv = T.nnet.conv2d if n == 2 else T.nnet.conv3d
    out = conv(x_cl.dimshuffle(to_cf), kernel.dimshuffle(w_axes),
               input_shape=imshp, filter_shape=kshp,
               border_mode=_border(n, pads, ks, dilation),
               subsample=tuple(int(s) for s in strides), filter_flip=bool(flip),
               filter_dilation=tuple(int(d) for d in dilation))
    return out.dimshuffle(to_cl)


def conv2d(x_cl, kernel, strides, dilation, pads, flip=False):
    """Theano's own 2-D correlation (``CorrMM`` with a BLAS), or None: see
    :func:`_abstract_conv`."""
    return _abstract_conv(2, x_cl, kernel, strides, dilation, pads, flip)


def conv3d(x_cl, kernel, strides, dilation, pads, flip=False):
    """Theano's own 3-D correlation (``Corr3dMM`` with a BLAS), or None: see
    :func:`_abstract_conv`."""
    return _abstract_conv(3, x_cl, kernel, strides, dilation, pads, flip)


def conv_transpose(x_cl, kernel, out_shape, strides, dilation, pads, flip=False):
    """Theano's ``conv2d_grad_wrt_inputs`` / ``conv3d_grad_wrt_inputs``
    (``AbstractConv2d_gradInputs``, with a BLAS ``CorrMM_gradInputs`` / ``Corr3dMM_gradInputs``:
    one op, as Keras' Theano backend builds its transposed convolutions) of channels_last
    ``x_cl`` ``(B, *S, in)``: the image of channels_last ``out_shape`` whose correlation
    (convolution when ``flip``) with ``kernel`` ``(*K, out, in)`` is ``x_cl``'s adjoint.
    None without a BLAS or without the kernel's sizes."""
    n = x_cl.ndim - 2
    ks = static_shape(kernel)
    if not _HAS_BLAS or ks is None or any(d is None for d in ks):
        return None
    to_cf, to_cl = _channels_first(n)
    w_axes = [n + 1, n] + list(range(n))
    grad = (T.nnet.abstract_conv.conv2d_grad_wrt_inputs if n == 2 else
            T.nnet.abstract_conv.conv3d_grad_wrt_inputs)
    imshp = tuple(out_shape[a] for a in to_cf)
    out = grad(x_cl.dimshuffle(to_cf), kernel.dimshuffle(w_axes), imshp,
               filter_shape=tuple(ks[a] for a in w_axes),
               border_mode=_border(n, pads, ks, dilation),
               subsample=tuple(int(s) for s in strides), filter_flip=bool(flip),
               filter_dilation=tuple(int(d) for d in dilation))
    return out.dimshuffle(to_cl)


def depthwise_conv2d(x_cl, kernel, strides, dilation, pads):
    """Theano's grouped ``conv2d`` (``num_groups`` the channels; with a BLAS ``CorrMM``, as
    Keras' Theano backend builds its depthwise convolutions) of channels_last ``x_cl``
    ``(B, H, W, C)`` with ``kernel`` ``(kh, kw, C, M)``, a correlation; output channel
    ``c * M + m``. None without a BLAS or without the kernel's sizes."""
    ks = static_shape(kernel)
    if not _HAS_BLAS or ks is None or any(d is None for d in ks):
        return None
    kh, kw, c, m = (int(d) for d in ks)
    to_cf, to_cl = _channels_first(2)
    # (kh, kw, C, M) -> (C * M, 1, kh, kw): filter c * M + m is group c's m-th
    w = T.reshape(kernel, (kh, kw, 1, c * m), ndim=4).dimshuffle(3, 2, 0, 1)
    xs = static_shape(x_cl)
    imshp = None if xs is None else tuple(xs[a] for a in to_cf)
    out = T.nnet.conv2d(x_cl.dimshuffle(to_cf), w, input_shape=imshp,
                        filter_shape=(c * m, 1, kh, kw),
                        border_mode=_border(2, pads, ks, dilation),
                        subsample=tuple(int(s) for s in strides), filter_flip=False,
                        filter_dilation=tuple(int(d) for d in dilation), num_groups=c)
    return out.dimshuffle(to_cl)


def pool(x_cl, pool_size, strides, mode):
    """Theano's ``Pool`` (what ``pool_2d`` / ``pool_3d`` build, one C op, ``MaxPoolGrad`` /
    ``AveragePoolGrad`` as its gradient) over the spatial axes of channels_last ``x_cl``,
    windows that fit only (``ignore_border``, no padding)."""
    from theano.tensor.signal.pool import Pool
    n = len(pool_size)
    to_cf, to_cl = _channels_first(n)
    out = Pool(ignore_border=True, mode='max' if mode == 'max' else 'average_exc_pad',
               ndim=n)(x_cl.dimshuffle(to_cf), tuple(int(k) for k in pool_size),
                       tuple(int(s) for s in strides), (0,) * n)
    return out.dimshuffle(to_cl)


absolute = T.abs_
sign = T.sgn
sigmoid = T.nnet.sigmoid
softplus = T.nnet.softplus


def softmax(x, axis):
    """Softmax along ``axis``: of a matrix along its last axis Theano's own ``Softmax`` op
    (``T.nnet.softmax``, the maximum subtracted; the optimizer fuses a bias added before
    it into ``SoftmaxWithBias``), otherwise built from ``exp`` and ``sum``."""
    if x.ndim == 2 and axis == 1:
        return T.nnet.softmax(x)
    e = T.exp(x - T.max(x, axis=axis, keepdims=True))
    return e / T.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis):
    """Log-softmax along ``axis``, the maximum subtracted first (out of the gradient)."""
    m = disconnected_grad(T.max(x, axis=axis, keepdims=True))
    y = x - m
    return y - T.log(T.sum(T.exp(y), axis=axis, keepdims=True))


def scan(fn, shape_of, **kwargs):
    """The outputs of ``th.scan`` of ``fn`` wrapped by ``_scan_body``
    (``shape_of(v)``: the static shape of outer tensor ``v``)."""
    outputs, _updates = th.scan(_scan_body(fn, kwargs, shape_of), **kwargs)
    return outputs


def _scan_body(fn, kwargs, shape_of):
    """Wrap a scan step: its inner inputs get the static shapes of their
    outer tensors, and its outputs the broadcast fix (``fix_broadcast``)."""
    def as_list(v):
        if v is None:
            return []
        return list(v) if isinstance(v, (list, tuple)) else [v]
    seqs = as_list(kwargs.get('sequences'))
    infos = [o for o in as_list(kwargs.get('outputs_info')) if o is not None]
    consts = as_list(kwargs.get('non_sequences'))
    shapes = None
    if not any(isinstance(v, dict) for v in seqs + infos):
        shapes = ([shape_of(v)[1:] for v in seqs] + [shape_of(v) for v in infos] +
                  [shape_of(v) if _is_var(v) else None for v in consts])

    def body(*args):
        if shapes is not None and len(shapes) == len(args):
            for a, shp in zip(args, shapes):
                if shp is not None and _is_var(a) and not _is_sparse(a) \
                        and getattr(a, 'ndim', None) == len(shp) \
                        and not isinstance(a, (SharedVariable, Constant)):
                    a._keras_shape = tuple(shp)
        out = fn(*args)
        if isinstance(out, (list, tuple)):
            return type(out)(fix_broadcast(list(out)))
        if _is_var(out):
            return fix_broadcast([out])[0]
        return out
    return body


# ---------------------------------------------------------------------------
# Compiling
# ---------------------------------------------------------------------------

def default_mode():
    """None: Theano compiles with its own default mode."""
    return None


def compiling():
    """``change_flags(on_opt_error='raise')`` unless the user chose
    ``on_opt_error`` (flags, rc file or code): an optimization that fails
    during the compile (a ``MemoryError`` included) raises instead of being
    logged and skipped. Else no change."""
    from theano.configparser import change_flags
    param = [p for p in th.configparser._config_var_list if p.fullname == 'on_opt_error'][0]
    if not param.is_default or str(th.config.on_opt_error) != 'warn':
        return change_flags()
    return change_flags(on_opt_error='raise')


def rewrite_failed(exc):
    """True when the traceback of ``exc`` passes through ``theano.gof.opt``: a graph rewrite
    that failed while compiling, re-raised under ``on_opt_error='raise'``."""
    tail = os.path.join('theano', 'gof', 'opt.py')
    return any(frame.filename.endswith(tail)
               for frame in traceback.extract_tb(exc.__traceback__))


# ---------------------------------------------------------------------------
# Random draws (``RandomStreams``: ``function`` advances their states itself)
# ---------------------------------------------------------------------------

_STREAMS = []  # the RandomStreams of the draws made so far


def random_draw(kind, seed, size, dtype, **params):
    """A draw from a new ``RandomStreams`` seeded with ``seed``: 'normal'
    (``loc``, ``scale``) or 'uniform' (``low``, ``high``)."""
    srng = _RandomStreams(seed=seed)
    _STREAMS.append(srng)
    kw = {}
    if _is_var(size):
        # Theano finds the rank of a symbolic size vector only through a
        # few ops (not e.g. a cast of ``x.shape``): give it explicitly.
        size = T.cast(size, 'int64')
        length = static_shape(size)
        if length is not None and length[0] is not None:
            kw['ndim'] = int(length[0])
    if kind == 'normal':
        return srng.normal(size=size, avg=params['loc'], std=params['scale'],
                           dtype=dtype, **kw)
    return srng.uniform(size=size, low=params['low'], high=params['high'],
                        dtype=dtype, **kw)


def rng_mark():
    """The number of draws made so far."""
    return len(_STREAMS)


def rng_updates_since(mark):
    """(state, its ``default_update`` or None) of the draws made since ``mark``."""
    return [(state, getattr(state, 'default_update', None))
            for srng in _STREAMS[mark:] for state, _ in srng.state_updates]


def rng_updates(roots, updated):
    """None to add: each state's ``default_update`` is applied by the engine's ``function``."""
    return []


def freeze_rng(rng):
    """Drop the ``default_update`` of state ``rng``."""
    if hasattr(rng, 'default_update'):
        del rng.default_update


def forget_draws():
    """Forget the draws made so far (``clear_session``)."""
    del _STREAMS[:]


def assert_true(value, condition, message):
    """``value``, behind a run-time check that the scalar ``condition`` holds (the
    engine's ``Assert``: the function raises ``message`` when it does not)."""
    from theano.tensor.opt import Assert
    return Assert(message)(value, condition)


def _operand(value):
    """``value`` as the other operand of ``@``, or None where ``@`` must answer
    ``NotImplemented``: Theano tensors (not sparse ones) as they are, numbers,
    numpy arrays and lists of numbers as numpy arrays."""
    if isinstance(value, Variable):
        return value if isinstance(value.type, T.TensorType) else None
    return shape_rules.numeric_operand(value)


def _matmul(reflected):
    """``x @ y`` of Theano tensors: the adapter's public ``dot(x, y)``, checked as a
    user's call (looked up at the call in the adapter package, which imports this module
    first; the CNTK adapter's operators reach its public functions the same way)."""
    def operator(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        dot = sys.modules[__package__].dot
        return dot(other, self) if reflected else dot(self, other)
    operator.__name__ = operator.__qualname__ = '__rmatmul__' if reflected else '__matmul__'
    operator._keras_backend_operator = True
    return operator


def _add_matmul():
    """Theano 1.0.5's tensors have no ``@`` (its ``_tensor_py_operators`` predates
    Python 3.5's ``__matmul__``); PyTensor's and the other engines' tensors have
    it. Give Theano's tensor variables, constants and shared variables the
    adapter's ``dot`` as ``@``, where Theano defines none itself."""
    from theano.tensor.var import _tensor_py_operators as ops
    for name, reflected in (('__matmul__', False), ('__rmatmul__', True)):
        current = ops.__dict__.get(name)
        if current is None or getattr(current, '_keras_backend_operator', False):
            setattr(ops, name, _matmul(reflected))


_add_matmul()


def provide_theano_names():
    """Keras 2.3.1 loads the adapter: nothing to do, this engine is ``theano`` itself."""
    return False


def theano_1_variable_truth():
    """Keras 2.0-2.2 loads the adapter: nothing to do, Theano 1.0.5's variables are true."""
    return None
