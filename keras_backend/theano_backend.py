"""The Keras 2 backend API on Theano (or its maintained successor PyTensor).

Everything here is symbolic: ``variable`` makes an engine shared variable,
``placeholder`` a symbolic input, every other function adds nodes to the
engine's graph and ``function`` / ``eval`` compile and run it.

Engine resolution at import: the original ``theano`` package where it imports
and works (the Python 3.6 / numpy 1.19 era), else ``pytensor``.  The module
attributes ``ENGINE`` ('theano' or 'pytensor') and ``ENGINE_VERSION`` say
which one serves this backend.  Both engines lack (PyTensor) or only partly
offer CNN and CTC ops, so convolution, pooling and CTC are built here from
the engine's own primitives (strided slices, ``tensordot``, ``scan``) and one
custom ``Op`` (CTC beam search).

Compile mode: when the user has not chosen a mode or linker in the engine's
flags, ``function`` compiles PyTensor graphs with the C ``cvm`` linker and the
``fast_run`` rewrites (the numba default takes minutes on a first CNN call).
When the user has not set ``floatX`` in the flags, the engine's ``floatX`` is
set to ``'float32'`` at import so that Python float constants do not upcast
float32 tensors.

Original Theano (1.0.5): its tensor types hold broadcastable flags but no
sizes, so ``int_shape`` runs the engine's per-op ``infer_shape`` from the
known sizes of placeholders, variables and constants; ``function``, ``eval``,
``gradients`` and scan steps rebuild elementwise ops so that axes of static
size 1 broadcast (as they do with PyTensor's static shapes); variables'
size-1 axes are broadcastable; without ``blas.ldflags`` batched products
avoid Theano's BLAS-only ``BatchedDot``.
"""
from __future__ import absolute_import, division, print_function

import contextlib
import functools
import inspect
import itertools
import logging
import os
import sys
import warnings

import numpy as np

from . import api, common, engines

try:
    import builtins as _builtins
except ImportError:  # pragma: no cover
    import __builtin__ as _builtins

# Python builtins that this module's API names shadow.
_ball = _builtins.all
_bmax = _builtins.max
_bmin = _builtins.min
_bany = _builtins.any
_bslice = _builtins.slice
from .common import *  # noqa: F401,F403  (public config names)
from . import ctc_search, shape_rules


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
# Engine resolution and the small compatibility block
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
    """Return (package, tensor module, engine name)."""
    _quiet_blas_warning('theano')
    _quiet_blas_warning('pytensor')
    try:
        import theano as engine
        import theano.tensor as tensor
        # Theano 1.0 imports on new numpy only to fail later; build a tiny graph
        # to be sure it works here.
        tensor.as_tensor_variable(np.zeros((2,), dtype='float32')).sum()
        return engine, tensor, 'theano'
    except Exception:  # any failure means: try PyTensor
        pass
    try:
        import pytensor as engine
        import pytensor.tensor as tensor
    except Exception as err:
        raise engines.engine_import_error('Theano', 'pytensor', 'theano', err)
    return engine, tensor, 'pytensor'


th, T, ENGINE = _load_engine()
ENGINE_VERSION = str(getattr(th, '__version__', 'unknown'))

if ENGINE == 'theano':
    from theano.gof import Op as _Op, Apply as _Apply, Variable as _Variable
    from theano.gof import Constant as _Constant
    from theano.gof.graph import ancestors as _ancestors
    from theano.compile.sharedvalue import SharedVariable as _SharedVariable
    from theano import sparse as _sparse
    from theano.gradient import disconnected_grad as _disconnected_grad
    from theano.printing import Print as _Print
    from theano.tensor.shared_randomstreams import RandomStreams as _RandomStreams
    _FLAGS_ENV = 'THEANO_FLAGS'
    _RC_FILES = ('~/.theanorc', '~/.theanorc.txt')
    _sigmoid = T.nnet.sigmoid
    _softplus = T.nnet.softplus
    _SparseType = _sparse.SparseType

    def _tensor(dtype, shape, name=None):
        """A symbolic input of ``dtype``; ``shape`` only fixes broadcastable dims."""
        return T.TensorType(dtype, tuple(d == 1 for d in shape))(name)

    def _shared(value, name=None):
        # Size-1 axes broadcast, as PyTensor's static shape makes them do.
        if isinstance(value, np.ndarray):
            return th.shared(value, name=name, strict=False,
                             broadcastable=tuple(d == 1 for d in value.shape))
        return th.shared(value, name=name, strict=False)

    def _specify_shape(x, shape):
        return x

    def _broadcastable_axes(x, axes):
        pattern = list(x.broadcastable)
        for a in axes:
            pattern[a] = True
        return T.patternbroadcast(x, pattern)

    def _scan(fn, **kwargs):
        outputs, _updates = th.scan(_th_scan_body(fn, kwargs), **kwargs)
        return outputs

    def _th_scan_body(fn, kwargs):
        """Wrap a scan step: its inner inputs get the static shapes of their
        outer tensors, and its outputs the broadcast fix (``_fix_broadcast``)."""
        def as_list(v):
            if v is None:
                return []
            return list(v) if isinstance(v, (list, tuple)) else [v]
        seqs = as_list(kwargs.get('sequences'))
        infos = [o for o in as_list(kwargs.get('outputs_info')) if o is not None]
        consts = as_list(kwargs.get('non_sequences'))
        shapes = None
        if not _bany(isinstance(v, dict) for v in seqs + infos):
            shapes = ([int_shape(v)[1:] for v in seqs] + [int_shape(v) for v in infos] +
                      [int_shape(v) if _is_engine_var(v) else None for v in consts])

        def body(*args):
            if shapes is not None and len(shapes) == len(args):
                for a, shp in zip(args, shapes):
                    if shp is not None and _is_engine_var(a) and not is_sparse(a) \
                            and getattr(a, 'ndim', None) == len(shp) \
                            and not isinstance(a, (_SharedVariable, _Constant)):
                        a._keras_shape = tuple(shp)
            out = fn(*args)
            if isinstance(out, (list, tuple)):
                return type(out)(_fix_broadcast(list(out)))
            if _is_engine_var(out):
                return _fix_broadcast([out])[0]
            return out
        return body

    def _fix_broadcast(outs):
        """Rebuild the graph of ``outs`` so that elementwise ops see every axis
        whose static size is 1 as broadcastable.

        Theano tensor types know sizes only through broadcastable flags, so
        e.g. ``h - s[:, :1]`` compiles as a same-shape elementwise op and
        fails at run time; PyTensor (static shapes) broadcasts it.  The
        outputs keep their original types."""
        targets = [o for o in outs if _is_engine_var(o)]
        if not targets:
            return outs
        mapping = {}
        for node in th.gof.graph.io_toposort(th.gof.graph.inputs(targets), targets):
            new_ins = [mapping.get(i, i) for i in node.inputs]
            if isinstance(node.op, T.Elemwise) and len(node.inputs) > 1:
                for k, (old, new) in enumerate(zip(node.inputs, new_ins)):
                    static = _th_static_shape(old)
                    if static is None or len(static) != new.ndim:
                        continue
                    pattern = tuple(b or d == 1 for b, d in zip(new.broadcastable, static))
                    if pattern != tuple(new.broadcastable):
                        new_ins[k] = T.patternbroadcast(new, pattern)
            if _ball(n is o for n, o in zip(new_ins, node.inputs)):
                continue
            try:
                new_node = node.clone_with_new_inputs(new_ins, strict=False)
            except Exception:  # the op insists on its input types: keep them
                new_ins = [T.patternbroadcast(n, o.broadcastable)
                           if n.broadcastable != o.broadcastable else n
                           for n, o in zip(new_ins, node.inputs)]
                new_node = node.clone_with_new_inputs(new_ins, strict=True)
            for old_out, new_out in zip(node.outputs, new_node.outputs):
                static = getattr(old_out.tag, _TH_TAG, None)
                if static is not None:
                    setattr(new_out.tag, _TH_TAG, static)
                mapping[old_out] = new_out
        result = []
        for o in outs:
            n = mapping.get(o, o) if _is_engine_var(o) else o
            if n is not o and n.broadcastable != o.broadcastable:
                n = T.patternbroadcast(n, o.broadcastable)
            if n is not o and hasattr(o, '_keras_shape'):
                n._keras_shape = o._keras_shape
            result.append(n)
        return result

    def _softmax(x, axis):
        e = T.exp(x - T.max(x, axis=axis, keepdims=True))
        return e / T.sum(e, axis=axis, keepdims=True)

    def _log_softmax(x, axis):
        m = _disconnected_grad(T.max(x, axis=axis, keepdims=True))
        y = x - m
        return y - T.log(T.sum(T.exp(y), axis=axis, keepdims=True))

    def _random_draw(kind, seed, size, dtype, **params):
        srng = _RandomStreams(seed=seed)
        _TH_STREAMS.append(srng)
        kw = {}
        if _is_engine_var(size):
            # Theano finds the rank of a symbolic size vector only through a
            # few ops (not e.g. a cast of ``x.shape``): give it explicitly.
            size = T.cast(size, 'int64')
            length = _th_static_shape(size)
            if length is not None and length[0] is not None:
                kw['ndim'] = int(length[0])
        if kind == 'normal':
            return srng.normal(size=size, avg=params['loc'], std=params['scale'],
                               dtype=dtype, **kw)
        return srng.uniform(size=size, low=params['low'], high=params['high'],
                            dtype=dtype, **kw)

    _HAS_BLAS = bool(str(th.config.blas.ldflags).strip())

    def _batched_dot(a, b):
        """(B, n, k) x (B, k, m) -> (B, n, m)."""
        if _HAS_BLAS:
            return T.batched_dot(a, b)
        # Without ``blas.ldflags`` Theano's BatchedDot C code still calls
        # ?gemm_ (no NumPy C-API fallback, unlike Dot22/Gemm), so the module
        # fails to load: contract with a broadcast product instead.
        return T.sum(a.dimshuffle(0, 1, 2, 'x') * b.dimshuffle(0, 'x', 1, 2), axis=2)

    def _copy(x, name=None):
        return T.tensor_copy(x)

    # Theano tensor types carry only broadcastable flags, not sizes.  Static
    # sizes are inferred here instead: every node's ``infer_shape`` is asked
    # for its output shape given the known input sizes (as int64 constants;
    # unknown ones stay ``Shape_i`` of the input), then each dimension
    # expression is folded.  Results are memoised in ``var.tag``.
    from theano.compile.ops import Shape as _ShapeOp, Shape_i as _ShapeI
    from theano.gof.graph import NoParams as _NoParams
    from theano.tensor.subtensor import Subtensor as _Subtensor
    from theano.scalar import Scalar as _ScalarType
    _TH_TAG = 'keras_backend_static_shape'
    _FOLD_MAX_SIZE = 256

    def _th_leaf_shape(v):
        nd = getattr(v.type, 'ndim', None)
        if nd is None:
            return None
        if isinstance(v, _SharedVariable):
            return tuple(int(d) for d in
                         v.get_value(borrow=True, return_internal_type=True).shape)
        if isinstance(v, _Constant) and hasattr(v.data, 'shape'):
            return tuple(int(d) for d in v.data.shape)
        bc = getattr(v.type, 'broadcastable', (False,) * nd)
        return tuple(1 if b else None for b in bc)

    def _th_merge(shape, v):
        recorded = getattr(v, '_keras_shape', None)
        if shape is None or recorded is None or len(recorded) != len(shape):
            return shape
        return tuple(s if s is not None else (None if r is None else int(r))
                     for s, r in zip(shape, recorded))

    def _th_cached(v):
        if isinstance(v, _SharedVariable):
            return True  # computed on demand (its value may be replaced)
        return hasattr(v.tag, _TH_TAG)

    def _th_get(v):
        if isinstance(v, _SharedVariable):
            return _th_leaf_shape(v)
        return getattr(v.tag, _TH_TAG)

    def _th_dim_inputs(v):
        shape = _th_merge(_th_get(v), v)
        if shape is None:
            return None
        return tuple(T.constant(d, dtype='int64') if d is not None else _ShapeI(k)(v)
                     for k, d in enumerate(shape))

    def _th_fold(e, memo, depth=0):
        """Value of the small integer expression ``e``: an ndarray when known,
        a tuple with None entries for a partly known vector, else None."""
        if isinstance(e, (int, np.integer)):
            return np.asarray(e)
        if not isinstance(e, _Variable):
            return None
        key = id(e)
        if key in memo:
            return memo[key]
        memo[key] = None
        val = None
        if isinstance(e, _Constant):
            data = np.asarray(e.data)
            if data.size <= _FOLD_MAX_SIZE:
                val = np.array(data)
        elif e.owner is not None and depth < 64:
            val = _th_fold_node(e, memo, depth + 1)
        if isinstance(val, tuple) and _ball(v is not None for v in val):
            val = np.asarray(val, dtype=e.dtype)
        memo[key] = val
        return val

    def _th_as_partial(val, var):
        """A 1-D folded value as a tuple (None entries unknown), or None."""
        if isinstance(val, tuple):
            return val
        if isinstance(val, np.ndarray) and val.ndim == 1:
            return tuple(int(v) for v in val)
        if val is None and getattr(var, 'ndim', None) == 1:
            n = _th_static_shape(var)
            if n is not None and n[0] is not None:
                return (None,) * n[0]
        return None

    def _th_fold_node(e, memo, depth):
        node = e.owner
        op = node.op
        ins = node.inputs
        if isinstance(op, _ShapeI):
            d = _th_static_shape(ins[0])
            if d is not None and d[op.i] is not None:
                return np.asarray(d[op.i], dtype='int64')
            return None
        if isinstance(op, _ShapeOp):
            d = _th_static_shape(ins[0])
            return None if d is None else tuple(d)
        if isinstance(op, T.opt.MakeVector):
            vals = [_th_fold(i, memo, depth) for i in ins]
            return tuple(None if v is None or np.ndim(v) else int(v) for v in vals)
        if isinstance(op, T.Join) and e.ndim == 1:
            axis = _th_fold(ins[0], memo, depth)
            if axis is None or int(axis) != 0:
                return None
            out = ()
            for part in ins[1:]:
                pv = _th_as_partial(_th_fold(part, memo, depth), part)
                if pv is None:
                    return None
                out += pv
            return out
        if isinstance(op, _Subtensor) and ins[0].ndim == 1 and len(op.idx_list) == 1:
            base = _th_fold(ins[0], memo, depth)
            if isinstance(base, tuple):
                idx = T.subtensor.get_idx_list(ins, op.idx_list)[0]
                if isinstance(idx, _bslice):
                    parts = [_th_fold(p, memo, depth) if p is not None else None
                             for p in (idx.start, idx.stop, idx.step)]
                    if _bany(p is None and q is not None
                             for p, q in zip(parts, (idx.start, idx.stop, idx.step))):
                        return None
                    return base[_bslice(*[None if p is None else int(p) for p in parts])]
                k = _th_fold(idx, memo, depth)
                if k is None or np.ndim(k):
                    return None
                try:
                    item = base[int(k)]
                except IndexError:
                    return None
                return None if item is None else np.asarray(item, dtype=e.dtype)
        scalar_op = getattr(op, 'scalar_op', op)
        if isinstance(scalar_op, th.scalar.Switch) and e.ndim == 0:
            cond = _th_fold(ins[0], memo, depth)
            if cond is None or np.ndim(cond):
                return None
            chosen = _th_fold(ins[1] if cond else ins[2], memo, depth)
            if chosen is None or isinstance(chosen, tuple) or np.ndim(chosen):
                return None
            return np.asarray(chosen, dtype=e.dtype)
        return _th_perform(node, e, memo, depth)

    def _th_perform(node, e, memo, depth):
        op = node.op
        if isinstance(op, _Print) or getattr(op, 'destroy_map', None):
            return None
        # only the small integer arithmetic of shape expressions is folded
        small_types = (T.TensorType, _ScalarType)
        if not _ball(isinstance(v.type, small_types) for v in node.inputs + node.outputs):
            return None
        if _bany(getattr(o, 'ndim', 0) > 1 for o in node.outputs):
            return None
        vals = []
        for i in node.inputs:
            iv = _th_fold(i, memo, depth)
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

    def _th_dim(e, memo):
        val = _th_fold(e, memo)
        if not isinstance(val, np.ndarray) or val.ndim != 0:
            return None
        return int(val)

    def _th_node_shapes(node):
        fallback = [_th_leaf_shape(o) for o in node.outputs]
        in_shapes = [_th_dim_inputs(i) for i in node.inputs]
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
                got = _th_dim(d, memo)
                dims.append(b if got is None else got)
            result.append(tuple(dims))
        return result

    def _th_static_shape(x):
        """Static shape of ``x`` (ints / None) from the engine's shape inference."""
        if _th_cached(x):
            return _th_merge(_th_get(x), x)
        stack = [(x, False)]
        while stack:
            v, expanded = stack.pop()
            if _th_cached(v):
                continue
            node = v.owner
            if node is None:
                setattr(v.tag, _TH_TAG, _th_merge(_th_leaf_shape(v), v))
                continue
            if not expanded:
                stack.append((v, True))
                stack.extend((i, False) for i in node.inputs if not _th_cached(i))
                continue
            for o, shp in zip(node.outputs, _th_node_shapes(node)):
                if not _th_cached(o):
                    setattr(o.tag, _TH_TAG, _th_merge(shp, o))
        return _th_merge(_th_get(x), x)
else:
    from pytensor.graph.op import Op as _Op
    from pytensor.graph.basic import Apply as _Apply, Variable as _Variable
    from pytensor.graph.basic import Constant as _Constant
    try:
        from pytensor.graph.traversal import ancestors as _ancestors
    except ImportError:  # older PyTensor
        from pytensor.graph.basic import ancestors as _ancestors
    from pytensor.compile.sharedvalue import SharedVariable as _SharedVariable
    import pytensor.sparse as _sparse
    from pytensor.gradient import disconnected_grad as _disconnected_grad
    from pytensor.printing import Print as _Print
    import pytensor.tensor.random  # noqa: F401  (pt.random)
    _FLAGS_ENV = 'PYTENSOR_FLAGS'
    _RC_FILES = ('~/.pytensorrc', '~/.pytensorrc.txt')
    _sigmoid = T.sigmoid
    _softplus = T.softplus
    _SparseType = _sparse.SparseTensorType

    def _tensor(dtype, shape, name=None):
        """A symbolic input of ``dtype`` with static ``shape`` (None = unknown)."""
        return T.tensor(name=name, dtype=dtype, shape=tuple(shape))

    def _shared(value, name=None):
        return th.shared(value, name=name, shape=np.shape(value))

    def _specify_shape(x, shape):
        known = tuple(x.type.shape)
        if len(known) != len(shape):
            return x
        if _ball(s is None or k is not None for s, k in zip(shape, known)):
            return x
        return T.specify_shape(x, tuple(shape))

    def _broadcastable_axes(x, axes):
        return T.specify_broadcastable(x, *axes) if axes else x

    _SCAN_HAS_RETURN_UPDATES = 'return_updates' in inspect.signature(th.scan).parameters

    def _scan(fn, **kwargs):
        if _SCAN_HAS_RETURN_UPDATES:
            return th.scan(fn, return_updates=False, **kwargs)
        outputs, _updates = th.scan(fn, **kwargs)
        return outputs

    def _softmax(x, axis):
        return T.special.softmax(x, axis=axis)

    def _log_softmax(x, axis):
        return T.special.log_softmax(x, axis=axis)

    _RNG_KW = {}
    from pytensor.tensor.random.op import RandomVariable as _RandomVariable
    if 'return_next_rng' in inspect.signature(_RandomVariable.__call__).parameters:
        _RNG_KW['return_next_rng'] = True

    def _random_draw(kind, seed, size, dtype, **params):
        # Each draw owns a seeded shared Generator; ``function`` / ``eval``
        # add the update rng <- next_rng (see _rng_updates).
        rng = th.shared(np.random.default_rng(seed))
        if kind == 'normal':
            out = T.random.normal(params['loc'], params['scale'], size=size, rng=rng,
                                  dtype=dtype, **_RNG_KW)
        else:
            out = T.random.uniform(params['low'], params['high'], size=size, rng=rng,
                                   dtype=dtype, **_RNG_KW)
        if isinstance(out, (list, tuple)):
            next_rng, out = out
        else:
            next_rng = out.owner.outputs[0]
        _RNG_NEXT[rng] = next_rng
        return out

    def _batched_dot(a, b):
        return T.matmul(a, b)

    def _copy(x, name=None):
        return T.tensor_copy(x)

    def _fix_broadcast(outs):
        return outs  # static shapes already decide broadcasting


def _flag_set_by_user(*names):
    """True when the engine's flags variable (``key=value,...``) or its rc
    files (``key = value`` lines) set one of the keys ``names``."""
    keys = set()
    for item in os.environ.get(_FLAGS_ENV, '').split(','):
        if '=' in item:
            keys.add(item.split('=', 1)[0].strip().lower())
    rc_paths = [os.path.expanduser(rc) for rc in _RC_FILES]
    rc_env = os.environ.get(_FLAGS_ENV.replace('_FLAGS', 'RC'))
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
                         % ('PyTensor' if ENGINE == 'pytensor' else 'Theano', compiledir))


_ANNOUNCED = []


def _default_mode():
    """The compile mode ``function`` uses when the caller gives none.

    PyTensor: the C ``cvm`` linker with ``fast_run`` rewrites, unless the user
    set a mode or linker in the flags (then the engine's default, None).
    Theano: always the engine default.
    """
    _announce_first_compile()
    if ENGINE != 'pytensor':
        return None
    if _flag_set_by_user('mode', 'linker'):
        return None
    if str(th.config.mode) != 'Mode' or str(getattr(th.config, 'linker', 'auto')) != 'auto':
        return None  # set in code after import: leave it to the engine
    if _MODE_CACHE:
        return _MODE_CACHE[0]
    try:
        from pytensor.compile.mode import Mode
        mode = Mode(linker='cvm', optimizer='fast_run')
    except Exception:  # no C compiler support at all: engine default
        mode = None
    _MODE_CACHE.append(mode)
    return mode


_MODE_CACHE = []
_RNG_NEXT = {}  # PyTensor: shared Generator -> its next state
_TH_STREAMS = []  # Theano: the RandomStreams of the draws made so far


def _new_rng_updates(streams_before, rngs_before):
    """(generator, its next state) of the draws made since the counts given."""
    if ENGINE == 'theano':
        return [(state, getattr(state, 'default_update', None))
                for srng in _TH_STREAMS[streams_before:] for state, _ in srng.state_updates]
    return [(rng, _RNG_NEXT[rng]) for rng in set(_RNG_NEXT) - rngs_before]


def _freeze_rng(rng):
    """Stop advancing ``rng`` (its next state is built from a loop body's inputs)."""
    if ENGINE == 'theano':
        if hasattr(rng, 'default_update'):
            del rng.default_update
    else:
        _RNG_NEXT.pop(rng, None)


def _rng_updates(roots, updated):
    """Updates advancing every random generator the graph of ``roots`` uses."""
    if not _RNG_NEXT:
        return []
    roots = [r for r in roots if _is_engine_var(r)]
    if not roots:
        return []
    done = set(id(v) for v in updated)
    out = []
    for a in _ancestors(roots):
        if id(a) not in done and a in _RNG_NEXT:
            out.append((a, _RNG_NEXT[a]))
            done.add(id(a))
    return out


# ---------------------------------------------------------------------------
# Module state
# ---------------------------------------------------------------------------

_LEARNING_PHASE = T.scalar(dtype='uint8', name='keras_learning_phase')
_EVAL_CACHE = {}
_SEED_GENERATOR = np.random.RandomState(1337)


def _next_seed(seed):
    if seed is None:
        return int(_SEED_GENERATOR.randint(1, 10 ** 7))
    return int(seed)


def backend():
    """Return the name of this backend.

    Returns:
        str: ``'theano'`` (served by the engine named in ``ENGINE``).

    Example:
        >>> K.backend()
        'theano'
    """
    return 'theano'


def learning_phase():
    """Return the learning phase: a symbolic uint8 scalar, or the fixed int.

    Returns:
        the scalar input ``keras_learning_phase`` (feed it to ``function`` as
        0 = test, 1 = train; unfed it counts as 0), or the Python int set with
        ``set_learning_phase`` / ``learning_phase_scope``.

    Example:
        >>> f = K.function([x, K.learning_phase()], [y]); f([x_value, 1])
    """
    fixed = common._fixed_learning_phase()
    if fixed is not None:
        return fixed
    return _LEARNING_PHASE


def clear_session():
    """Reset uids, the learning phase and the cached compiled graphs.

    Example:
        >>> K.clear_session()
    """
    common._reset_session_state()
    _EVAL_CACHE.clear()
    del _CONTROL_SCOPES[:]
    del _TH_STREAMS[:]


@contextlib.contextmanager
def name_scope(name):
    """Context manager prefixing the names of the variables, constants and
    placeholders made inside it with ``name/`` (nested scopes join with
    ``/``), as Keras' Theano backend does; Keras saves weights by these names.

    Args:
        name: str.

    Raises:
        ValueError: when ``name`` is not a string.

    Example:
        >>> with K.name_scope('block1'):
        ...     v = K.variable(0., name='kernel')
        >>> v.name
        'block1/kernel'
    """
    with common._name_scope_stack(name):
        yield name


_CONTROL_SCOPES = []  # [first serial, end serial, {variable: value it is updated to}]


def _serial_now():
    """The engine's running count of created graph variables (advances it by one)."""
    return next(_Variable.__count__)


def _serial(v):
    name = getattr(v, 'auto_name', '')
    try:
        return int(name[5:]) if name.startswith('auto_') else -1
    except ValueError:
        return -1


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """Context manager: what is built inside reads the values that the updates
    among ``control_inputs`` write, as TensorFlow's control edges order it.

    A pure symbolic graph has no control edges. Here every op created inside
    the block that reads a variable updated by one of ``control_inputs``
    (``(variable, new_value)`` pairs from the ``update`` family) reads that
    update's new value instead, once compiled into a ``function`` (the
    update itself is still applied by that function's ``updates``). This is
    how Keras' stateful metrics return their value after this batch's
    update. Other entries of ``control_inputs`` (tensors) only order, and
    outputs already run after what they depend on.

    Args:
        control_inputs: None, or a list of updates and tensors.

    Raises:
        ValueError: when ``control_inputs`` is neither None nor a list/tuple.

    Example:
        >>> total = K.variable(0.); x = K.placeholder((None,))
        >>> up = K.update_add(total, K.sum(x))
        >>> with K.control_dependencies([up]):
        ...     result = total * 1.
        >>> K.function([x], [result], updates=[up])([np.ones(3)])
        [array(3., dtype=float32)]
    """
    if control_inputs is not None and not isinstance(control_inputs, (list, tuple)):
        raise ValueError('control_dependencies: expected None or a list, got %r'
                         % (control_inputs,))
    writes = {}
    for u in control_inputs or []:
        if isinstance(u, tuple) and len(u) == 2 and isinstance(u[0], _SharedVariable):
            writes[u[0]] = u[1]
    scope = [_serial_now(), None, writes]
    try:
        yield
    finally:
        scope[1] = _serial_now()
        if writes:
            _CONTROL_SCOPES.append(scope)


def _toposort(outputs, stop=()):
    """Apply nodes of the graph of ``outputs``, inputs before users; the
    graphs above the variables whose ids are in ``stop`` are left out."""
    order, seen = [], set()
    stack = [(o.owner, False) for o in outputs
             if _is_engine_var(o) and o.owner is not None and id(o) not in stop]
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
                    new_ins = [sc[2][i] if isinstance(i, _SharedVariable) and i in sc[2]
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
    return [mapping.get(o, o) if _is_engine_var(o) else o for o in outputs]


def symbolic(func):
    """Decorator: run ``func`` in graph mode (every call is symbolic here).

    Example:
        >>> @K.symbolic
        ... def f(x): return K.relu(x)
    """
    return func


def eager(func):
    """Decorator: run ``func`` eagerly where the engine can; this engine is
    graph-only, so ``func`` is returned unchanged.

    Example:
        >>> @K.eager
        ... def f(x): return K.relu(x)
    """
    return func


# ---------------------------------------------------------------------------
# Tensors, variables, placeholders
# ---------------------------------------------------------------------------

def _is_engine_var(x):
    return isinstance(x, _Variable)


def _records_keras_shape(func):
    """Decorator: the engine tensor ``func`` returns gets ``_keras_shape``
    (its ``int_shape``), as Keras 2.3.1's Theano backend sets on the results
    of its shape-changing ops."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        out = func(*args, **kwargs)
        if _is_engine_var(out) and not is_sparse(out):
            try:
                out._keras_shape = int_shape(out)
            except (AttributeError, TypeError):
                pass
        return out
    return wrapper


def is_sparse(tensor):
    """Return True when ``tensor`` is an engine sparse (csr/csc) tensor.

    Example:
        >>> K.is_sparse(K.placeholder((2, 3), sparse=True))
        True
    """
    return isinstance(getattr(tensor, 'type', None), _SparseType)


def to_dense(tensor):
    """Convert a sparse tensor to a dense one (``dense_from_sparse``); dense
    inputs are returned as they are.

    Returns:
        dense tensor of the same shape and dtype.

    Example:
        >>> K.to_dense(K.placeholder((2, 3), sparse=True))
    """
    if is_sparse(tensor):
        out = _sparse.dense_from_sparse(tensor)
        shape = getattr(tensor, '_keras_shape', None)
        if shape is not None:
            out = _with_shape(out, shape)
        return out
    return tensor


def _with_shape(x, shape):
    """Record the static ``shape`` (ints / None) of ``x`` (SpecifyShape on PyTensor)."""
    shape = tuple(None if s is None else int(s) for s in shape)
    if not is_sparse(x):
        x = _specify_shape(x, shape)
    try:
        x._keras_shape = shape
    except AttributeError:
        pass
    return x


def variable(value, dtype=None, name=None, constraint=None):
    """Create an engine shared variable holding a copy of ``value``.

    Args:
        value: numpy array, list or scalar (a scipy sparse matrix gives a
            sparse shared variable).
        dtype: dtype string; ``floatx()`` when None.
        name: optional name.
        constraint: optional projection function, stored as ``x.constraint``.

    The name is prefixed by the open ``name_scope``s.

    Returns:
        shared variable of ``value``'s shape; ``int_shape`` is that shape.

    Example:
        >>> v = K.variable(np.ones((2, 3))); K.int_shape(v)
        (2, 3)
    """
    dtype = _normalize_dtype(dtype, 'variable')
    name = common._scoped_name(name, 'variable')
    if hasattr(value, 'tocoo'):
        v = _sparse.shared(value.astype(dtype), name=name)
        v._keras_shape = tuple(value.shape)
    else:
        if _is_engine_var(value):
            value = eval(value)
        arr = np.array(value, dtype=dtype)
        v = _shared(arr, name=name)
        v._keras_shape = tuple(arr.shape)
    v.constraint = constraint
    v._uses_learning_phase = False
    return v


def is_variable(x):
    """True when ``x`` is an engine shared variable (made by ``variable``).

    Example:
        >>> K.is_variable(K.variable(1.))
        True
    """
    return isinstance(x, _SharedVariable)


def constant(value, dtype=None, shape=None, name=None):
    """Create a constant tensor.

    Args:
        value: numpy array, list or scalar; with ``shape``, a scalar fills it.
        dtype: dtype string; ``floatx()`` when None.
        shape: optional tuple of ints.
        name: optional name.

    Returns:
        engine constant of that dtype and shape.

    Raises:
        ValueError: when ``value`` cannot take ``shape``.

    Example:
        >>> K.eval(K.constant(2., shape=(2,)))
        array([2., 2.], dtype=float32)
    """
    dtype = _normalize_dtype(dtype, 'constant')
    name = common._scoped_name(name, 'constant')
    arr = np.asarray(value, dtype=dtype)
    if shape is not None:
        shape = tuple(int(s) for s in shape)
        if arr.size == 1:
            arr = np.full(shape, arr.reshape(()), dtype=dtype)
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise ValueError('constant: value of %d elements cannot fill shape %r'
                             % (arr.size, shape))
    c = T.constant(arr, name=name, dtype=dtype)
    c._keras_shape = tuple(arr.shape)
    c._uses_learning_phase = False
    return c


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    """Create a symbolic input.

    Args:
        shape: tuple of ints / None (unknown dims).
        ndim: rank, when ``shape`` is None (all dims unknown).
        dtype: dtype string; ``floatx()`` when None.
        sparse: True for the engine's csr sparse matrix input (2-D).
        name: optional name.

    Returns:
        symbolic tensor; ``int_shape`` returns ``shape`` with its None dims.

    Raises:
        ValueError: when neither ``shape`` nor ``ndim`` is given, or a sparse
            placeholder is not 2-D.

    Example:
        >>> x = K.placeholder(shape=(None, 4)); K.int_shape(x)
        (None, 4)
    """
    dtype = _normalize_dtype(dtype, 'placeholder')
    name = common._scoped_name(name, 'placeholder')
    if shape is None:
        if ndim is None:
            raise ValueError('placeholder: give shape or ndim')
        shape = (None,) * int(ndim)
    shape = tuple(None if s is None else int(s) for s in shape)
    if sparse:
        if len(shape) != 2:
            raise ValueError('placeholder: a sparse placeholder must be 2-D, got shape %r'
                             % (shape,))
        x = _sparse.csr_matrix(name=name, dtype=dtype)
    else:
        x = _tensor(dtype, shape, name)
    x._keras_shape = shape
    x._keras_placeholder = True
    x._uses_learning_phase = False
    return x


def is_placeholder(x):
    """True only for tensors made by ``placeholder``.

    Example:
        >>> K.is_placeholder(K.placeholder((2,)))
        True
    """
    return bool(getattr(x, '_keras_placeholder', False))


def is_keras_tensor(x):
    """True when ``x`` is a Keras tensor: an engine tensor carrying the
    ``_keras_history`` that Keras layers set on their outputs (as Keras 2.3.1).
    Placeholders, variables and plain op results give False.

    Raises:
        ValueError: naming the type of ``x`` when it is not an engine tensor.

    Example:
        >>> K.is_keras_tensor(K.placeholder((2,)))
        False
        >>> K.is_keras_tensor(keras.layers.Input((2,)))
        True
    """
    if not is_tensor(x):
        raise ValueError('is_keras_tensor: unexpectedly found an instance of type %s; '
                         'expected a symbolic tensor' % (type(x).__name__,))
    return hasattr(x, '_keras_history')


def is_tensor(x):
    """True for any engine tensor, variable or sparse tensor; False otherwise.

    Example:
        >>> K.is_tensor(np.zeros(2)), K.is_tensor(K.variable(1.))
        (False, True)
    """
    return _is_engine_var(x)


def _as_tensor(x, dtype=None):
    if _is_engine_var(x):
        return x
    if isinstance(x, (list, tuple)) and _holds_engine_var(x):
        return _stack_mixed(x, dtype)
    if dtype is None:
        arr = np.asarray(x)
        dtype = common.floatx() if arr.dtype.kind == 'f' or arr.dtype == object else arr.dtype
    return T.as_tensor_variable(np.asarray(x, dtype=dtype))


def _holds_engine_var(items):
    return _bany(_is_engine_var(e) or (isinstance(e, (list, tuple)) and _holds_engine_var(e))
                 for e in items)


def _stack_mixed(items, dtype=None):
    """A (nested) list/tuple of engine tensors and numbers as one tensor, built
    in the graph (``T.stack``): e.g. ``[K.shape(x)[0], 5]``.  Numbers take the
    tensors' common dtype (``floatx()`` when a float number meets integer
    tensors) unless ``dtype`` is given."""
    parts = [_stack_mixed(e, dtype) if isinstance(e, (list, tuple)) and _holds_engine_var(e)
             else e for e in items]
    tensors = [p for p in parts if _is_engine_var(p)]
    if dtype is None:
        dt = np.result_type(*[np.dtype(t.dtype) for t in tensors])
        if dt.kind in 'biu' and _bany(
                np.asarray(p).dtype.kind == 'f' for p in parts if not _is_engine_var(p)):
            dt = np.dtype(common.floatx())
        dtype = dt.name
    cast = []
    for p in parts:
        if not _is_engine_var(p):
            p = T.constant(np.asarray(p, dtype=dtype))
        elif p.dtype != dtype:
            p = T.cast(p, dtype)
        cast.append(p)
    return T.stack(cast)


def shape(x):
    """Symbolic int32 vector holding the runtime shape of ``x``.

    Example:
        >>> K.eval(K.shape(K.ones((2, 3))))
        array([2, 3], dtype=int32)
    """
    x = _as_tensor(x)
    return T.cast(x.shape, 'int32')


def int_shape(x):
    """Static shape as a tuple of ints, None for unknown dims.

    When ``x`` carries a ``_keras_shape`` (placeholders, variables, the
    results of the shape ops, and the outputs Keras layers label) that tuple
    is returned, as Keras 2.3.1's Theano backend does; otherwise the engine's
    static shape (PyTensor's ``type.shape``, Theano's shape inference).

    Args:
        x: engine tensor/variable or numpy array.

    Example:
        >>> K.int_shape(K.placeholder((None, 3)))
        (None, 3)
    """
    if not _is_engine_var(x):
        return tuple(np.shape(x))
    recorded = getattr(x, '_keras_shape', None)
    if is_sparse(x):
        return tuple(recorded) if recorded is not None else (None, None)
    if isinstance(x, _SharedVariable):
        return tuple(x.get_value(borrow=True, return_internal_type=True).shape)
    if recorded is not None and len(recorded) == x.ndim:
        return tuple(None if d is None else int(d) for d in recorded)
    if ENGINE == 'pytensor':
        return tuple(None if s is None else int(s) for s in x.type.shape)
    return _th_static_shape(x)


def get_variable_shape(x):
    """Alias of ``int_shape`` for variables.

    Example:
        >>> K.get_variable_shape(K.zeros((2, 3)))
        (2, 3)
    """
    return int_shape(x)


def ndim(x):
    """Rank of ``x`` as an int.

    Example:
        >>> K.ndim(K.placeholder((None, 3)))
        2
    """
    if not _is_engine_var(x):
        return np.ndim(x)
    return x.ndim


def dtype(x):
    """dtype of ``x`` as a string such as 'float32'.

    Example:
        >>> K.dtype(K.variable(1.))
        'float32'
    """
    if not _is_engine_var(x):
        return np.asarray(x).dtype.name
    return str(x.dtype)


def count_params(x):
    """Number of scalars in ``x`` (product of its static shape) as an int.

    Raises:
        ValueError: when the static shape has unknown dims.

    Example:
        >>> K.count_params(K.zeros((2, 3)))
        6
    """
    s = int_shape(x)
    if _bany(d is None for d in s):
        raise ValueError('count_params: the static shape %r has unknown dims' % (s,))
    return int(np.prod(s, dtype=np.int64))


def size(x, name=None):
    """Number of elements of ``x`` as a symbolic int32 scalar.

    Example:
        >>> K.eval(K.size(K.ones((2, 3))))
        6
    """
    x = _as_tensor(x)
    return T.cast(T.prod(x.shape), 'int32')


def _givens_for(outputs, inputs):
    """Feed the learning phase 0 when the graph uses it and it is not an input."""
    if _bany(i is _LEARNING_PHASE for i in inputs):
        return {}
    roots = [o for o in outputs if _is_engine_var(o)]
    if roots and _bany(a is _LEARNING_PHASE for a in _ancestors(roots)):
        return {_LEARNING_PHASE: T.constant(np.uint8(0), dtype='uint8')}
    return {}


def eval(x):
    """Evaluate ``x`` and return a numpy array (compiled once, then cached).

    Example:
        >>> K.eval(K.ones((2,)) * 3)
        array([3., 3.], dtype=float32)
    """
    if not _is_engine_var(x):
        return np.asarray(x)
    if isinstance(x, _SharedVariable):
        return np.array(x.get_value())
    if isinstance(x, _Constant):
        return np.array(x.data)
    fn = _EVAL_CACHE.get(x)
    if fn is None:
        y = _fix_broadcast([x])[0]
        fn = th.function([], y, givens=_givens_for([y], []), mode=_default_mode(),
                         updates=_rng_updates([y], []), on_unused_input='ignore')
        _EVAL_CACHE[x] = fn
    out = fn()
    if hasattr(out, 'toarray'):
        return out
    return np.asarray(out)


def zeros(shape, dtype=None, name=None):
    """Variable of zeros.

    Args:
        shape: tuple of ints; dtype: default ``floatx()``.

    Example:
        >>> K.eval(K.zeros((2,)))
        array([0., 0.], dtype=float32)
    """
    dtype = _normalize_dtype(dtype, 'zeros')
    return variable(np.zeros(_normalize_shape(shape), dtype=dtype), dtype, name)


def ones(shape, dtype=None, name=None):
    """Variable of ones (``shape`` tuple of ints, dtype default ``floatx()``).

    Example:
        >>> K.eval(K.ones((2,)))
        array([1., 1.], dtype=float32)
    """
    dtype = _normalize_dtype(dtype, 'ones')
    return variable(np.ones(_normalize_shape(shape), dtype=dtype), dtype, name)


def _normalize_shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(s) for s in shape)
    except TypeError:
        raise ValueError('shape: expected a tuple of ints, got %r' % (shape,))


def eye(size, dtype=None, name=None):
    """Identity-matrix variable.

    Args:
        size: int n (n x n) or (rows, cols).

    Example:
        >>> K.eval(K.eye((2, 3)))
        array([[1., 0., 0.], [0., 1., 0.]], dtype=float32)
    """
    dtype = _normalize_dtype(dtype, 'eye')
    if isinstance(size, (tuple, list)):
        if len(size) != 2:
            raise ValueError('eye: size must be an int or (rows, cols), got %r' % (size,))
        n, m = int(size[0]), int(size[1])
    else:
        n = m = int(size)
    return variable(np.eye(n, m, dtype=dtype), dtype, name)


def zeros_like(x, dtype=None, name=None):
    """Tensor of zeros with the shape of ``x`` (dtype of ``x`` when None).

    Example:
        >>> K.eval(K.zeros_like(K.ones((2,))))
        array([0., 0.], dtype=float32)
    """
    x = _as_tensor(x)
    dtype = x.dtype if dtype is None else _normalize_dtype(dtype, 'zeros_like')
    return T.zeros_like(x, dtype=dtype)


def ones_like(x, dtype=None, name=None):
    """Tensor of ones with the shape of ``x`` (dtype of ``x`` when None).

    Example:
        >>> K.eval(K.ones_like(K.zeros((2,))))
        array([1., 1.], dtype=float32)
    """
    x = _as_tensor(x)
    dtype = x.dtype if dtype is None else _normalize_dtype(dtype, 'ones_like')
    return T.ones_like(x, dtype=dtype)


@_records_keras_shape
def identity(x, name=None):
    """A new tensor with the content of ``x`` (engine ``tensor_copy``).

    Example:
        >>> K.eval(K.identity(K.ones((2,))))
        array([1., 1.], dtype=float32)
    """
    x = _as_tensor(x)
    out = _copy(x)
    if hasattr(x, '_keras_shape'):
        out._keras_shape = x._keras_shape
    return out


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    """Variable initialised from U(low, high) (numpy generator seeded by ``seed``).

    Example:
        >>> v = K.random_uniform_variable((2, 3), 0, 1, seed=1)
    """
    dtype = _normalize_dtype(dtype, 'random_uniform_variable')
    rs = np.random.RandomState(_next_seed(seed))
    return variable(rs.uniform(low, high, size=_normalize_shape(shape)).astype(dtype),
                    dtype, name)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    """Variable initialised from N(mean, scale^2) (numpy generator seeded by ``seed``).

    Example:
        >>> v = K.random_normal_variable((2, 3), 0, 1, seed=1)
    """
    dtype = _normalize_dtype(dtype, 'random_normal_variable')
    rs = np.random.RandomState(_next_seed(seed))
    return variable(rs.normal(mean, scale, size=_normalize_shape(shape)).astype(dtype),
                    dtype, name)


@_records_keras_shape
def cast(x, dtype):
    """Cast ``x`` to ``dtype`` (a string such as 'float16', 'int32', 'bool').

    Example:
        >>> K.dtype(K.cast(K.ones((2,)), 'int32'))
        'int32'
    """
    x = _as_tensor(x)
    return T.cast(x, _normalize_dtype(dtype, 'cast'))


# ---------------------------------------------------------------------------
# Updates, values, functions, gradients
# ---------------------------------------------------------------------------

def update(x, new_x):
    """Update pair ``(x, new_x)`` for ``function(updates=...)``.

    Example:
        >>> f = K.function([], [], updates=[K.update(v, v * 2)])
    """
    new_x = _as_tensor(new_x)
    if new_x.dtype != x.dtype:
        new_x = T.cast(new_x, x.dtype)
    return (x, new_x)


def update_add(x, increment):
    """Update pair ``(x, x + increment)``.

    Example:
        >>> f = K.function([], [], updates=[K.update_add(v, 1.)])
    """
    return update(x, x + increment)


def update_sub(x, decrement):
    """Update pair ``(x, x - decrement)``.

    Example:
        >>> f = K.function([], [], updates=[K.update_sub(v, 1.)])
    """
    return update(x, x - decrement)


def moving_average_update(x, value, momentum):
    """Update pair ``x <- x * momentum + value * (1 - momentum)`` (no debiasing).

    Example:
        >>> f = K.function([], [], updates=[K.moving_average_update(m, batch_mean, 0.9)])
    """
    return update(x, x * momentum + value * (1. - momentum))


def get_value(x):
    """Value of a variable as a numpy array (other tensors are evaluated).

    Example:
        >>> K.get_value(K.variable([1., 2.]))
        array([1., 2.], dtype=float32)
    """
    if isinstance(x, _SharedVariable):
        return np.array(x.get_value()) if not is_sparse(x) else x.get_value()
    return eval(x)


def batch_get_value(ops):
    """Values of several variables/tensors: a list of numpy arrays.

    Example:
        >>> K.batch_get_value([v1, v2])
    """
    return [get_value(x) for x in ops]


def set_value(x, value):
    """Set a variable from a numpy value.

    Raises:
        ValueError: when ``x`` is not a variable or ``value``'s shape differs
            from the variable's.

    Example:
        >>> K.set_value(v, np.zeros((2, 3)))
    """
    if not isinstance(x, _SharedVariable):
        raise ValueError('set_value: x must be a variable, got %r' % (x,))
    value = np.asarray(value, dtype=x.dtype)
    current = x.get_value(borrow=True, return_internal_type=True).shape
    if tuple(value.shape) != tuple(current):
        raise ValueError('set_value: value of shape %r does not match the variable shape %r'
                         % (tuple(value.shape), tuple(current)))
    x.set_value(value)


def batch_set_value(tuples):
    """Set several variables: ``[(variable, numpy value), ...]``.

    Raises:
        ValueError: as ``set_value``.

    Example:
        >>> K.batch_set_value([(v1, a1), (v2, a2)])
    """
    for x, value in tuples:
        set_value(x, value)


def print_tensor(x, message=''):
    """Return ``x``; when evaluated, the engine's Print op prints ``message``
    and the value.

    Example:
        >>> y = K.print_tensor(x, message='x is')
    """
    x = _as_tensor(x)
    return _Print(message)(x)


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
        self.outputs = [outputs] if self._single else list(outputs)
        pairs = []
        if updates:
            items = updates.items() if isinstance(updates, dict) else updates
            for u in items:
                if not isinstance(u, (list, tuple)) or len(u) != 2:
                    raise ValueError('function: each update must be a (variable, new_value) '
                                     'pair, got %r' % (u,))
                pairs.append(update(u[0], u[1]))
        n_out = len(self.outputs)
        fixed = _fix_broadcast(_after_control_updates(self.outputs + [p[1] for p in pairs]))
        outputs = fixed[:n_out]
        pairs = [(p[0], f) for p, f in zip(pairs, fixed[n_out:])]
        if not kwargs.get('no_default_updates'):
            pairs.extend(_rng_updates(outputs + [p[1] for p in pairs],
                                      [p[0] for p in pairs]))
        givens = dict(kwargs.pop('givens', None) or {})
        givens.update(_givens_for(outputs + [p[1] for p in pairs], self.inputs))
        kwargs.setdefault('on_unused_input', 'ignore')
        kwargs.setdefault('allow_input_downcast', True)
        if kwargs.get('mode') is None:
            kwargs['mode'] = _default_mode()
        self._fn = th.function(self.inputs, outputs, updates=pairs, givens=givens,
                               name=name, **kwargs)

    def __call__(self, inputs):
        if isinstance(inputs, dict):
            inputs = [inputs[i] for i in self.inputs]
        if not isinstance(inputs, (list, tuple)):
            raise ValueError('function call: expected a list of input values')
        if len(inputs) != len(self.inputs):
            raise ValueError('function call: expected %d input values, got %d'
                             % (len(self.inputs), len(inputs)))
        values = self._fn(*inputs)
        values = [np.asarray(v) if not hasattr(v, 'toarray') else v for v in values]
        return values[0] if self._single else values


def function(inputs, outputs, updates=None, **kwargs):
    """Compile a function from input tensors to output tensors (engine ``function``).

    Args:
        inputs: list of placeholders (the learning phase may be one of them;
            when it is not, the graph sees 0).
        outputs: a tensor or a list/tuple of tensors.
        updates: list of ``(variable, new_value)`` pairs (e.g. from ``update``);
            they are applied after the outputs are computed.
        **kwargs: ``name`` and the engine function's own keywords (``mode``,
            ``givens``, ``no_default_updates``, ``accept_inplace``,
            ``rebuild_strict``, ``allow_input_downcast``, ``profile``,
            ``on_unused_input``, ``trust_input``).

    Returns:
        ``Function``: call it with a list of numpy arrays.

    Raises:
        ValueError: naming any other keyword argument.

    Example:
        >>> f = K.function([x], [x * 2]); f([np.ones(3)])
    """
    name = kwargs.pop('name', None)
    unknown = sorted(k for k in kwargs if k not in _FUNCTION_KWARGS)
    if unknown:
        raise ValueError('function: invalid keyword argument(s) %s; accepted: name, %s'
                         % (', '.join(unknown), ', '.join(_FUNCTION_KWARGS)))
    return Function(inputs, outputs, updates=updates, name=name, **kwargs)


def gradients(loss, variables):
    """Symbolic gradients of the scalar ``loss`` w.r.t. each of ``variables``
    (engine ``grad``; disconnected variables get zeros; a single variable is
    taken as a list of one).

    Returns:
        list of tensors, one per variable, same shapes.

    Example:
        >>> g, = K.gradients(K.sum(v ** 2), [v])
    """
    vs = list(variables) if isinstance(variables, (list, tuple)) else [variables]
    fixed = _fix_broadcast([loss])[0]
    if fixed is not loss:
        # differentiate the broadcast-fixed graph unless that loses a variable
        # taken inside the rebuilt part of the graph
        before = set(_ancestors([loss]))
        after = set(_ancestors([fixed]))
        if _ball(v in after for v in vs if v in before):
            loss = fixed
    return list(T.grad(loss, vs, disconnected_inputs='ignore'))


def stop_gradient(variables):
    """``variables`` (a tensor or a list of tensors) with gradients blocked
    (engine ``disconnected_grad``); returns the same structure.

    Example:
        >>> y = K.stop_gradient(x)
    """
    if isinstance(variables, (list, tuple)):
        return type(variables)(_disconnected_grad(_as_tensor(v)) for v in variables)
    return _disconnected_grad(_as_tensor(variables))


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
            values = function(keys, outs)([feed_dict[k] for k in keys])
        return values[0] if single else values


_SESSION = [_Session()]


def get_session():
    """Return the session-like object (this engine has no session): its
    ``run(fetches, feed_dict=None)`` evaluates tensors.

    Example:
        >>> K.get_session().run(x * 2, {x: np.ones(2)})
    """
    return _SESSION[0]


def set_session(session):
    """Replace the session-like object.

    Raises:
        ValueError: when ``session`` has no ``run`` method.

    Example:
        >>> K.set_session(K.get_session())
    """
    if not callable(getattr(session, 'run', None)):
        raise ValueError('set_session: expected an object with a run(fetches, feed_dict) '
                         'method, got %r' % (session,))
    _SESSION[0] = session


# ---------------------------------------------------------------------------
# Math
# ---------------------------------------------------------------------------

@_records_keras_shape
def dot(x, y):
    """Multiply ``x`` by ``y``: contracts the last axis of ``x`` with the
    second-to-last of ``y`` (the last when ``y`` is 1-D).

    Returns:
        tensor of shape ``x.shape[:-1] + y.shape[:-2] + y.shape[-1:]``.

    Example:
        >>> K.int_shape(K.dot(K.placeholder((2, 3)), K.placeholder((4, 3, 5))))
        (2, 4, 5)
    """
    if is_sparse(x):
        return _sparse.structured_dot(x, y)
    x = _as_tensor(x)
    y = _as_tensor(y)
    if x.ndim <= 2 and y.ndim <= 2:
        return T.dot(x, y)
    if y.ndim == 1:
        return T.tensordot(x, y, axes=[[x.ndim - 1], [0]])
    return T.tensordot(x, y, axes=[[x.ndim - 1], [y.ndim - 2]])


@_records_keras_shape
def batch_dot(x, y, axes=None):
    """Batchwise dot product: for each batch entry, contract ``x``'s axis
    ``axes[0]`` with ``y``'s axis ``axes[1]`` (rules of Keras 2.3).

    Returns:
        tensor of shape ``shape_rules.batch_dot_output_shape`` ((batch, 1) for two
        2-D inputs).

    Raises:
        ValueError: for rank < 2 inputs or axes reducing the batch axis.

    Example:
        >>> K.int_shape(K.batch_dot(K.placeholder((2, 3, 4)), K.placeholder((2, 4, 5))))
        (2, 3, 5)
    """
    x = _as_tensor(x)
    y = _as_tensor(y)
    ax, ay = shape_rules.batch_dot_axes(x.ndim, y.ndim, axes)
    xs, ys = int_shape(x), int_shape(y)
    x_rest = [i for i in range(1, x.ndim) if i != ax]
    y_rest = [i for i in range(1, y.ndim) if i != ay]
    xt = x.dimshuffle([0] + x_rest + [ax])
    yt = y.dimshuffle([0, ay] + y_rest)
    b = x.shape[0]
    n = x.shape[ax]
    p = T.prod([x.shape[i] for i in x_rest]) if x_rest else 1
    q = T.prod([y.shape[i] for i in y_rest]) if y_rest else 1
    x3 = T.reshape(xt, T.stack([b, p, n]), ndim=3)
    y3 = T.reshape(yt, T.stack([b, n, q]), ndim=3)
    out = _batched_dot(x3, y3)
    out_dims = [b] + [x.shape[i] for i in x_rest] + [y.shape[i] for i in y_rest]
    if len(out_dims) == 1:
        out_dims.append(1)
    out = T.reshape(out, T.stack(out_dims), ndim=len(out_dims))
    return _with_shape(out, shape_rules.batch_dot_output_shape(xs, ys, ax, ay))


@_records_keras_shape
def transpose(x):
    """Reverse all axes of ``x``.

    Example:
        >>> K.int_shape(K.transpose(K.placeholder((2, 3))))
        (3, 2)
    """
    x = _as_tensor(x)
    return T.transpose(x)


@_records_keras_shape
def gather(reference, indices):
    """Rows of ``reference`` along axis 0 at integer ``indices``.

    Returns:
        tensor of shape ``indices.shape + reference.shape[1:]``.

    Example:
        >>> K.eval(K.gather(K.variable([[1.], [2.]]), [1, 1]))
        array([[2.], [2.]], dtype=float32)
    """
    reference = _as_tensor(reference)
    indices = _as_tensor(indices, 'int64')
    if indices.dtype not in ('int8', 'int16', 'int32', 'int64', 'uint8', 'uint16',
                             'uint32', 'uint64'):
        indices = T.cast(indices, 'int64')
    return reference[indices]


def _axes(x, axis):
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return [int(a) % x.ndim if x.ndim else int(a) for a in axis]
    return int(axis) % x.ndim if x.ndim else int(axis)


@_records_keras_shape
def max(x, axis=None, keepdims=False):
    """Maximum over ``axis`` (None = all, int or list of ints).

    Example:
        >>> K.eval(K.max(K.variable([[1., 5.], [3., 2.]]), axis=1))
        array([5., 3.], dtype=float32)
    """
    x = _as_tensor(x)
    return T.max(x, axis=_axes(x, axis), keepdims=keepdims)


@_records_keras_shape
def min(x, axis=None, keepdims=False):
    """Minimum over ``axis`` (None = all, int or list of ints).

    Example:
        >>> K.eval(K.min(K.variable([[1., 5.], [3., 2.]]), axis=1))
        array([1., 2.], dtype=float32)
    """
    x = _as_tensor(x)
    return T.min(x, axis=_axes(x, axis), keepdims=keepdims)


@_records_keras_shape
def sum(x, axis=None, keepdims=False):
    """Sum over ``axis`` (None = all, int or list of ints).

    Example:
        >>> K.eval(K.sum(K.ones((2, 3)), axis=1))
        array([3., 3.], dtype=float32)
    """
    x = _as_tensor(x)
    return T.sum(x, axis=_axes(x, axis), keepdims=keepdims)


@_records_keras_shape
def prod(x, axis=None, keepdims=False):
    """Product over ``axis`` (None = all, int or list of ints).

    Example:
        >>> K.eval(K.prod(K.variable([2., 3.])))
        array(6., dtype=float32)
    """
    x = _as_tensor(x)
    return T.prod(x, axis=_axes(x, axis), keepdims=keepdims)


def cumsum(x, axis=0):
    """Cumulative sum along ``axis``.

    Example:
        >>> K.eval(K.cumsum(K.variable([1., 2., 3.])))
        array([1., 3., 6.], dtype=float32)
    """
    x = _as_tensor(x)
    return T.cumsum(x, axis=_axes(x, axis))


def cumprod(x, axis=0):
    """Cumulative product along ``axis``.

    Example:
        >>> K.eval(K.cumprod(K.variable([1., 2., 3.])))
        array([1., 2., 6.], dtype=float32)
    """
    x = _as_tensor(x)
    return T.cumprod(x, axis=_axes(x, axis))


@_records_keras_shape
def mean(x, axis=None, keepdims=False):
    """Mean over ``axis`` (None = all, int or list of ints); floats keep their
    dtype, integers give ``floatx()``.

    Example:
        >>> K.eval(K.mean(K.variable([1., 2.])))
        array(1.5, dtype=float32)
    """
    x = _as_tensor(x)
    if x.dtype not in ('float16', 'float32', 'float64'):
        x = T.cast(x, common.floatx())
    return T.mean(x, axis=_axes(x, axis), keepdims=keepdims)


@_records_keras_shape
def var(x, axis=None, keepdims=False):
    """Population variance (ddof=0) over ``axis``.

    Example:
        >>> K.eval(K.var(K.variable([1., 3.])))
        array(1., dtype=float32)
    """
    x = _as_tensor(x)
    if x.dtype not in ('float16', 'float32', 'float64'):
        x = T.cast(x, common.floatx())
    ax = _axes(x, axis)
    m = T.mean(x, axis=ax, keepdims=True)
    return T.mean(T.sqr(x - m), axis=ax, keepdims=keepdims)


@_records_keras_shape
def std(x, axis=None, keepdims=False):
    """Population standard deviation (ddof=0) over ``axis``.

    Example:
        >>> K.eval(K.std(K.variable([1., 3.])))
        array(1., dtype=float32)
    """
    return T.sqrt(var(x, axis, keepdims))


@_records_keras_shape
def any(x, axis=None, keepdims=False):
    """Logical OR over ``axis``; returns bool.

    Example:
        >>> K.eval(K.any(K.variable([0., 1.])))
        array(True)
    """
    x = _as_tensor(x)
    return T.cast(T.any(T.neq(x, 0), axis=_axes(x, axis), keepdims=keepdims), 'bool')


@_records_keras_shape
def all(x, axis=None, keepdims=False):
    """Logical AND over ``axis``; returns bool.

    Example:
        >>> K.eval(K.all(K.variable([0., 1.])))
        array(False)
    """
    x = _as_tensor(x)
    return T.cast(T.all(T.neq(x, 0), axis=_axes(x, axis), keepdims=keepdims), 'bool')


def argmax(x, axis=-1):
    """Index (int64) of the maximum along ``axis``.

    Example:
        >>> K.eval(K.argmax(K.variable([[1., 5.]])))
        array([1])
    """
    x = _as_tensor(x)
    return T.cast(T.argmax(x, axis=_axes(x, axis)), 'int64')


def argmin(x, axis=-1):
    """Index (int64) of the minimum along ``axis``.

    Example:
        >>> K.eval(K.argmin(K.variable([[1., 5.]])))
        array([0])
    """
    x = _as_tensor(x)
    return T.cast(T.argmin(x, axis=_axes(x, axis)), 'int64')


def square(x):
    """Elementwise square.

    Example:
        >>> K.eval(K.square(K.variable([2.])))
        array([4.], dtype=float32)
    """
    return T.sqr(_as_tensor(x))


def abs(x):
    """Elementwise absolute value.

    Example:
        >>> K.eval(K.abs(K.variable([-2.])))
        array([2.], dtype=float32)
    """
    return T.abs(_as_tensor(x)) if hasattr(T, 'abs') else _abs_fallback(_as_tensor(x))


def _abs_fallback(x):
    return T.abs_(x)


def sqrt(x):
    """Elementwise square root; negatives are clipped to 0 first.

    Example:
        >>> K.eval(K.sqrt(K.variable([4., -1.])))
        array([2., 0.], dtype=float32)
    """
    x = _as_tensor(x)
    return T.sqrt(T.maximum(x, T.zeros_like(x)))


def exp(x):
    """Elementwise exponential.

    Example:
        >>> K.eval(K.exp(K.variable([0.])))
        array([1.], dtype=float32)
    """
    return T.exp(_as_tensor(x))


def log(x):
    """Elementwise natural logarithm.

    Example:
        >>> K.eval(K.log(K.variable([1.])))
        array([0.], dtype=float32)
    """
    return T.log(_as_tensor(x))


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x), axis))`` computed stably (max subtracted first).

    Example:
        >>> K.eval(K.logsumexp(K.variable([0., 0.])))
        array(0.6931472, dtype=float32)
    """
    x = _as_tensor(x)
    ax = _axes(x, axis)
    m = _disconnected_grad(T.max(x, axis=ax, keepdims=True))
    m = T.switch(T.isinf(m), T.zeros_like(m), m)
    out = T.log(T.sum(T.exp(x - m), axis=ax, keepdims=True)) + m
    if not keepdims:
        out = T.sum(out, axis=ax) if ax is not None else T.sum(out)
    return out


def round(x):
    """Elementwise rounding, half to even.

    Example:
        >>> K.eval(K.round(K.variable([0.5, 1.5])))
        array([0., 2.], dtype=float32)
    """
    return T.round(_as_tensor(x), mode='half_to_even')


def sign(x):
    """Elementwise sign (-1, 0, 1).

    Example:
        >>> K.eval(K.sign(K.variable([-3., 0.])))
        array([-1., 0.], dtype=float32)
    """
    return T.sign(_as_tensor(x)) if hasattr(T, 'sign') else T.sgn(_as_tensor(x))


def pow(x, a):
    """Elementwise ``x ** a``.

    Example:
        >>> K.eval(K.pow(K.variable([2.]), 3))
        array([8.], dtype=float32)
    """
    x = _as_tensor(x)
    if not _is_engine_var(a):
        arr = np.asarray(a)
        if x.dtype.startswith('float') or arr.dtype.kind != 'f':
            arr = arr.astype(x.dtype)
        a = T.constant(arr)
    return T.pow(x, a)


def clip(x, min_value, max_value):
    """Clip elementwise to [min_value, max_value]; when ``max_value < min_value``
    the upper bound becomes ``min_value``.

    Example:
        >>> K.eval(K.clip(K.variable([-1., 5.]), 0., 1.))
        array([0., 1.], dtype=float32)
    """
    x = _as_tensor(x)
    if min_value is None:
        min_value = -np.inf
    if max_value is None:
        max_value = np.inf
    if not _is_engine_var(min_value) and not _is_engine_var(max_value):
        if max_value < min_value:
            max_value = min_value
        lo = T.constant(np.asarray(min_value, dtype=x.dtype))
        hi = T.constant(np.asarray(max_value, dtype=x.dtype))
    else:
        lo = T.cast(_as_tensor(min_value), x.dtype)
        hi = T.maximum(T.cast(_as_tensor(max_value), x.dtype), lo)
    return T.clip(x, lo, hi)


def _binary(x, y):
    x = _as_tensor(x) if _is_engine_var(x) else x
    y = _as_tensor(y) if _is_engine_var(y) else y
    if not _is_engine_var(x):
        x = _as_tensor(x, y.dtype if np.asarray(x).dtype.kind == 'f' else None)
    if not _is_engine_var(y):
        y = _as_tensor(y, x.dtype if np.asarray(y).dtype.kind == 'f' else None)
    return x, y


@_records_keras_shape
def equal(x, y):
    """Elementwise ``x == y`` (bool).

    Example:
        >>> K.eval(K.equal(K.variable([1., 2.]), K.variable([1., 3.])))
        array([ True, False])
    """
    x, y = _binary(x, y)
    return T.eq(x, y)


@_records_keras_shape
def not_equal(x, y):
    """Elementwise ``x != y`` (bool).

    Example:
        >>> K.eval(K.not_equal(K.variable([1.]), K.variable([2.])))
        array([ True])
    """
    x, y = _binary(x, y)
    return T.neq(x, y)


@_records_keras_shape
def greater(x, y):
    """Elementwise ``x > y`` (bool).

    Example:
        >>> K.eval(K.greater(K.variable([2.]), K.variable([1.])))
        array([ True])
    """
    x, y = _binary(x, y)
    return T.gt(x, y)


@_records_keras_shape
def greater_equal(x, y):
    """Elementwise ``x >= y`` (bool).

    Example:
        >>> K.eval(K.greater_equal(K.variable([1.]), K.variable([1.])))
        array([ True])
    """
    x, y = _binary(x, y)
    return T.ge(x, y)


@_records_keras_shape
def less(x, y):
    """Elementwise ``x < y`` (bool).

    Example:
        >>> K.eval(K.less(K.variable([1.]), K.variable([2.])))
        array([ True])
    """
    x, y = _binary(x, y)
    return T.lt(x, y)


@_records_keras_shape
def less_equal(x, y):
    """Elementwise ``x <= y`` (bool).

    Example:
        >>> K.eval(K.less_equal(K.variable([1.]), K.variable([1.])))
        array([ True])
    """
    x, y = _binary(x, y)
    return T.le(x, y)


@_records_keras_shape
def maximum(x, y):
    """Elementwise maximum.

    Example:
        >>> K.eval(K.maximum(K.variable([1., 4.]), K.variable([3., 2.])))
        array([3., 4.], dtype=float32)
    """
    x, y = _binary(x, y)
    return T.maximum(x, y)


@_records_keras_shape
def minimum(x, y):
    """Elementwise minimum.

    Example:
        >>> K.eval(K.minimum(K.variable([1., 4.]), K.variable([3., 2.])))
        array([1., 2.], dtype=float32)
    """
    x, y = _binary(x, y)
    return T.minimum(x, y)


def sin(x):
    """Elementwise sine.

    Example:
        >>> K.eval(K.sin(K.variable([0.])))
        array([0.], dtype=float32)
    """
    return T.sin(_as_tensor(x))


def cos(x):
    """Elementwise cosine.

    Example:
        >>> K.eval(K.cos(K.variable([0.])))
        array([1.], dtype=float32)
    """
    return T.cos(_as_tensor(x))


def _broadcast_param(p, x_ndim, axis):
    """Lay a 1-D parameter along ``axis`` of an ``x_ndim`` tensor."""
    p = _as_tensor(p)
    if p.ndim == 1 and x_ndim > 1:
        pattern = ['x'] * x_ndim
        pattern[axis] = 0
        return p.dimshuffle(pattern)
    return p


def _bn_axes(reduction_axes, x_ndim):
    """Reduction axes of ``normalize_batch_in_training`` as a sorted tuple:
    Theano's names 'per-activation' (axis 0) and 'spatial' (0 and every axis
    past the second) or an int / iterable of ints."""
    if isinstance(reduction_axes, str):
        if reduction_axes == 'per-activation':
            return (0,)
        if reduction_axes == 'spatial':
            return (0,) + tuple(range(2, x_ndim))
        raise ValueError("normalize_batch_in_training: reduction_axes must be 'per-activation', "
                         "'spatial' or a list of ints, got %r" % (reduction_axes,))
    try:
        return shape_rules.normalize_axes(reduction_axes, x_ndim)
    except (TypeError, ValueError) as err:
        raise ValueError('normalize_batch_in_training: bad reduction_axes %r (%s)'
                         % (reduction_axes, err))


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """Batch statistics and normalisation.

    Args:
        x: tensor.
        gamma, beta: None, a tensor of the kept (not reduced) axes (e.g. 1-D
            for one kept axis), or of ``x``'s rank with size 1 on the
            reduced axes.
        reduction_axes: list/tuple of ints (any axes, negative allowed), or
            Theano's names ``'per-activation'`` (= ``[0]``) and ``'spatial'``
            (= ``[0, 2, 3, ...]``), as Keras' Theano backend accepts.
        epsilon: float added to the variance.

    Returns:
        ``(normed, mean, var)``: ``normed`` like ``x``; ``mean``/``var`` the
        population statistics over the reduction axes, without kept dims.

    Raises:
        ValueError: for unknown reduction axes or gamma/beta of another rank.

    Example:
        >>> normed, m, v = K.normalize_batch_in_training(x, gamma, beta, [0, 1, 2])
    """
    x = _as_tensor(x)
    axes = _bn_axes(reduction_axes, x.ndim)
    m = T.mean(x, axis=axes, keepdims=True)
    v = T.mean(T.sqr(x - m), axis=axes, keepdims=True)
    kept = [i for i in range(x.ndim) if i not in axes]
    normed = (x - m) / T.sqrt(v + _fconst(epsilon, v))
    if gamma is not None:
        g = _as_tensor(gamma)
        normed = normed * (_broadcast_param(g, x.ndim, kept[0]) if (g.ndim == 1 and len(kept) == 1)
                           else _reshape_to_kept(g, x, axes))
    if beta is not None:
        b = _as_tensor(beta)
        normed = normed + (_broadcast_param(b, x.ndim, kept[0]) if (b.ndim == 1 and len(kept) == 1)
                           else _reshape_to_kept(b, x, axes))
    return normed, T.mean(x, axis=axes), T.mean(T.sqr(x - m), axis=axes)


def _reshape_to_kept(p, x, axes):
    if p.ndim == x.ndim:
        return p
    pattern = []
    j = 0
    for i in range(x.ndim):
        if i in axes:
            pattern.append('x')
        else:
            pattern.append(j)
            j += 1
    if j != p.ndim:
        raise ValueError('normalize_batch_in_training: gamma/beta of rank %d do not match '
                         'the %d kept axes' % (p.ndim, j))
    return p.dimshuffle(pattern)


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """``(x - mean) / sqrt(var + epsilon) * gamma + beta``; 1-D parameters are
    laid along ``axis``; ``beta``/``gamma`` may be None.

    Example:
        >>> y = K.batch_normalization(x, m, v, None, None, axis=-1)
    """
    x = _as_tensor(x)
    axis = shape_rules.normalize_axis(axis, x.ndim)
    m = _broadcast_param(mean, x.ndim, axis)
    v = _broadcast_param(var, x.ndim, axis)
    out = (x - m) / T.sqrt(v + epsilon)
    if gamma is not None:
        out = out * _broadcast_param(gamma, x.ndim, axis)
    if beta is not None:
        out = out + _broadcast_param(beta, x.ndim, axis)
    return out


# ---------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------

@_records_keras_shape
def concatenate(tensors, axis=-1):
    """Concatenate tensors along ``axis`` (sparse 2-D tensors: axis 0 or 1).

    Example:
        >>> K.int_shape(K.concatenate([K.placeholder((2, 3)), K.placeholder((2, 4))]))
        (2, 7)
    """
    if not tensors:
        raise ValueError('concatenate: expected a non-empty list of tensors')
    if _ball(is_sparse(t) for t in tensors):
        nd = 2
        axis = shape_rules.normalize_axis(axis, nd)
        if axis == 0:
            return _sparse.vstack(tensors, format='csr')
        return _sparse.hstack(tensors, format='csr')
    tensors = [to_dense(_as_tensor(t)) for t in tensors]
    axis = shape_rules.normalize_axis(axis, tensors[0].ndim)
    return T.concatenate(tensors, axis=axis)


@_records_keras_shape
def reshape(x, shape):
    """Reshape ``x`` to ``shape`` (a tuple with at most one -1, or an int tensor).

    Example:
        >>> K.int_shape(K.reshape(K.placeholder((2, 6)), (3, -1)))
        (3, 4)
    """
    x = _as_tensor(x)
    if isinstance(shape, (list, tuple)):
        shape = tuple(int(s) if not _is_engine_var(s) else s for s in shape)
        out = T.reshape(x, shape, ndim=len(shape))
        static = [s if isinstance(s, int) else None for s in shape]
        known_in = int_shape(x)
        if static.count(-1) == 1 and _ball(d is not None for d in known_in) and \
                _ball(s is not None for s in static):
            total = int(np.prod(known_in))
            rest = int(np.prod([s for s in static if s != -1]))
            static[static.index(-1)] = total // rest if rest else 0
        static = [None if s == -1 else s for s in static]
        return _with_shape(out, static)
    return T.reshape(x, shape)


@_records_keras_shape
def permute_dimensions(x, pattern):
    """Permute the axes of ``x`` (``pattern`` a tuple of all axes).

    Raises:
        ValueError: when ``pattern`` is not a permutation of ``range(ndim(x))``.

    Example:
        >>> K.int_shape(K.permute_dimensions(K.placeholder((2, 3, 4)), (0, 2, 1)))
        (2, 4, 3)
    """
    x = _as_tensor(x)
    pattern = tuple(int(p) for p in pattern)
    if sorted(pattern) != list(range(x.ndim)):
        raise ValueError('permute_dimensions: pattern %r is not a permutation of the %d axes'
                         % (pattern, x.ndim))
    return x.dimshuffle(pattern)


@_records_keras_shape
def repeat_elements(x, rep, axis):
    """Repeat each element ``rep`` times along ``axis`` (``np.repeat``).

    Example:
        >>> K.eval(K.repeat_elements(K.variable([1., 2.]), 2, 0))
        array([1., 1., 2., 2.], dtype=float32)
    """
    x = _as_tensor(x)
    axis = shape_rules.normalize_axis(axis, x.ndim)
    out = T.repeat(x, int(rep), axis=axis)
    s = list(int_shape(x))
    if s[axis] is not None:
        s[axis] *= int(rep)
    return _with_shape(out, s)


@_records_keras_shape
def repeat(x, n):
    """Repeat a 2-D tensor: ``(batch, dim) -> (batch, n, dim)``.

    Raises:
        ValueError: when ``x`` is not 2-D.

    Example:
        >>> K.int_shape(K.repeat(K.placeholder((None, 3)), 4))
        (None, 4, 3)
    """
    x = _as_tensor(x)
    shape_rules.check_ndim(x.ndim, (2,), 'x', 'repeat input')
    out = T.repeat(x.dimshuffle(0, 'x', 1), int(n), axis=1)
    s = int_shape(x)
    return _with_shape(out, (s[0], int(n), s[1]))


def arange(start, stop=None, step=1, dtype='int32'):
    """1-D tensor ``[start, stop)`` with ``step`` (numpy's rules; ``arange(n)``
    is ``[0, n)``).

    Example:
        >>> K.eval(K.arange(3))
        array([0, 1, 2], dtype=int32)
    """
    if stop is None:
        start, stop = 0, start
    return T.cast(T.arange(start, stop, step), _normalize_dtype(dtype, 'arange'))


@_records_keras_shape
def tile(x, n):
    """Tile ``x`` ``n`` times per axis (numpy ``np.tile`` rules: ``n`` int or
    list; shorter ``n`` is padded with leading 1s, longer ``n`` adds leading axes).

    Example:
        >>> K.int_shape(K.tile(K.placeholder((2, 3)), (2, 1)))
        (4, 3)
    """
    x = _as_tensor(x)
    if isinstance(n, (int, np.integer)):
        n = [int(n)]
    elif _is_engine_var(n):
        return T.tile(x, n, ndim=x.ndim)
    n = [int(r) for r in n]
    reps = [1] * (x.ndim - len(n)) + n
    if len(reps) > x.ndim:
        extra = len(reps) - x.ndim
        x = x.dimshuffle(['x'] * extra + list(range(x.ndim)))
    s = int_shape(x)
    out = T.tile(x, reps)
    return _with_shape(out, [None if d is None else d * r for d, r in zip(s, reps)])


@_records_keras_shape
def flatten(x):
    """Flatten ``x`` to 1-D.

    Example:
        >>> K.int_shape(K.flatten(K.placeholder((2, 3))))
        (6,)
    """
    x = _as_tensor(x)
    s = int_shape(x)
    out = T.flatten(x, 1) if ENGINE == 'theano' else x.flatten()
    return _with_shape(out, (int(np.prod(s)) if _ball(d is not None for d in s) else None,))


@_records_keras_shape
def batch_flatten(x):
    """Flatten all but the first axis: ``(batch, prod(rest))``.

    Example:
        >>> K.int_shape(K.batch_flatten(K.placeholder((None, 2, 3))))
        (None, 6)
    """
    x = _as_tensor(x)
    s = int_shape(x)
    rest = s[1:]
    if _ball(d is not None for d in rest):
        n = int(np.prod(rest))
        out = T.reshape(x, (x.shape[0], n), ndim=2)
    else:
        n = None
        out = T.reshape(x, (x.shape[0], -1), ndim=2)
    return _with_shape(out, (s[0], n))


@_records_keras_shape
def expand_dims(x, axis=-1):
    """Insert a length-1 axis at ``axis`` (negative counts from the new end).

    Example:
        >>> K.int_shape(K.expand_dims(K.placeholder((2, 3)), 1))
        (2, 1, 3)
    """
    x = _as_tensor(x)
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise ValueError('expand_dims: axis %r out of range for rank %d' % (axis, x.ndim))
    if axis < 0:
        axis = x.ndim + 1 + axis
    pattern = list(range(x.ndim))
    pattern.insert(axis, 'x')
    return x.dimshuffle(pattern)


@_records_keras_shape
def squeeze(x, axis):
    """Remove the length-1 axis ``axis``.

    Example:
        >>> K.int_shape(K.squeeze(K.placeholder((2, 1, 3)), 1))
        (2, 3)
    """
    x = _as_tensor(x)
    axis = shape_rules.normalize_axis(axis, x.ndim)
    s = list(int_shape(x))
    if s[axis] not in (None, 1):
        raise ValueError('squeeze: axis %d has size %d, expected 1' % (axis, s[axis]))
    if s[axis] == 1 and x.broadcastable[axis]:
        return x.dimshuffle([i for i in range(x.ndim) if i != axis])
    dims = [x.shape[i] for i in range(x.ndim) if i != axis]
    out = T.reshape(x, T.stack(dims) if dims else (), ndim=x.ndim - 1)
    del s[axis]
    return _with_shape(out, s)


def _pad(x, pads, value=0.):
    """Pad ``x`` (any rank) by ``pads``: a list of (before, after) per axis
    (ints or scalar tensors), filled with ``value``."""
    if _ball(not _is_engine_var(b) and not _is_engine_var(a) and b == 0 and a == 0
                   for b, a in pads):
        return x
    s = int_shape(x)
    dims = []
    idx = []
    static = []
    for i, (b, a) in enumerate(pads):
        d = s[i] if s[i] is not None else x.shape[i]
        dims.append(d + b + a)
        idx.append(_bslice(b, b + d))
        static.append(s[i] + b + a if (s[i] is not None and not _is_engine_var(b)
                                       and not _is_engine_var(a)) else None)
    fill = T.constant(np.asarray(value, dtype=x.dtype))
    out = T.alloc(fill, *dims)
    out = T.set_subtensor(out[tuple(idx)], x)
    return _with_shape(out, static)


@_records_keras_shape
def temporal_padding(x, padding=(1, 1)):
    """Zero-pad axis 1 of a 3-D tensor by ``padding`` (left, right).

    Example:
        >>> K.int_shape(K.temporal_padding(K.placeholder((2, 3, 4)), (1, 2)))
        (2, 6, 4)
    """
    x = _as_tensor(x)
    shape_rules.check_ndim(x.ndim, (3,), 'x', 'temporal_padding input')
    padding = shape_rules.normalize_tuple(padding, 2, 'padding')
    return _pad(x, [(0, 0), padding, (0, 0)])


def _spatial_padding(x, padding, n, data_format, name):
    x = _as_tensor(x)
    shape_rules.check_ndim(x.ndim, (n + 2,), 'x', name + ' input')
    pairs = shape_rules.normalize_spatial_padding(padding, n)
    data_format = normalize_data_format(data_format)
    if data_format == 'channels_first':
        pads = [(0, 0), (0, 0)] + list(pairs)
    else:
        pads = [(0, 0)] + list(pairs) + [(0, 0)]
    return _pad(x, pads)


@_records_keras_shape
def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    """Zero-pad the two spatial axes of a 4-D tensor in ``data_format``.

    Args:
        padding: ((top, bottom), (left, right)) (ints accepted).

    Example:
        >>> K.int_shape(K.spatial_2d_padding(K.placeholder((1, 2, 2, 3))))
        (1, 4, 4, 3)
    """
    return _spatial_padding(x, padding, 2, data_format, 'spatial_2d_padding')


@_records_keras_shape
def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    """Zero-pad the three spatial axes of a 5-D tensor in ``data_format``.

    Example:
        >>> K.int_shape(K.spatial_3d_padding(K.placeholder((1, 2, 2, 2, 3))))
        (1, 4, 4, 4, 3)
    """
    return _spatial_padding(x, padding, 3, data_format, 'spatial_3d_padding')


@_records_keras_shape
def stack(x, axis=0):
    """Stack a list of same-shape tensors on a new ``axis``.

    Example:
        >>> K.int_shape(K.stack([K.placeholder((2,)), K.placeholder((2,))], 1))
        (2, 2)
    """
    xs = [_as_tensor(t) for t in x]
    if not xs:
        raise ValueError('stack: expected a non-empty list of tensors')
    nd = xs[0].ndim + 1
    axis = shape_rules.normalize_axis(axis, nd)
    return T.stack(xs, axis=axis)


@_records_keras_shape
def one_hot(indices, num_classes):
    """One-hot encode integer ``indices``: adds the class axis last, dtype ``floatx()``.

    Example:
        >>> K.eval(K.one_hot(K.variable([1], dtype='int32'), 3))
        array([[0., 1., 0.]], dtype=float32)
    """
    indices = _as_tensor(indices, 'int64')
    classes = T.arange(num_classes)
    pattern = list(range(indices.ndim)) + ['x']
    out = T.cast(T.eq(indices.dimshuffle(pattern), classes), common.floatx())
    if not _is_engine_var(num_classes):
        out = _with_shape(out, tuple(int_shape(indices)) + (int(num_classes),))
    return out


@_records_keras_shape
def reverse(x, axes):
    """Reverse ``x`` along ``axes`` (int or list of ints).

    Example:
        >>> K.eval(K.reverse(K.variable([1., 2.]), 0))
        array([2., 1.], dtype=float32)
    """
    x = _as_tensor(x)
    if isinstance(axes, (int, np.integer)):
        axes = [axes]
    axes = [shape_rules.normalize_axis(int(a), x.ndim, 'axes') for a in axes]
    idx = [_bslice(None, None, -1) if i in axes else _bslice(None) for i in range(x.ndim)]
    return x[tuple(idx)]


@_records_keras_shape
def slice(x, start, size):
    """Slice ``x``: ``size[i]`` elements from ``start[i]`` on each axis
    (``size`` -1 means to the end).

    Raises:
        ValueError: when ``start``/``size`` lengths differ from ``ndim(x)``.

    Example:
        >>> K.eval(K.slice(K.variable([1., 2., 3.]), [1], [-1]))
        array([2., 3.], dtype=float32)
    """
    x = _as_tensor(x)
    start = list(start)
    size = list(size)
    if len(start) != x.ndim or len(size) != x.ndim:
        raise ValueError('slice: start and size need %d entries, got %r and %r'
                         % (x.ndim, start, size))
    idx = []
    static = []
    for d, b, n in zip(int_shape(x), start, size):
        symbolic_ = _is_engine_var(n) or _is_engine_var(b)
        if not _is_engine_var(n) and int(n) == -1:
            idx.append(_bslice(b, None))
            static.append(d - int(b) if (d is not None and not symbolic_) else None)
        else:
            idx.append(_bslice(b, b + n))
            static.append(None if symbolic_ else int(n))
    return _with_shape(x[tuple(idx)], static)


@_records_keras_shape
def pattern_broadcast(x, broadcastable):
    """Mark axes of ``x`` as broadcastable (length 1) following the bool
    pattern ``broadcastable`` (one entry per axis).

    Raises:
        ValueError: when the pattern length differs from ``ndim(x)``.

    Example:
        >>> y = K.pattern_broadcast(K.placeholder((None, 1)), (False, True))
    """
    x = _as_tensor(x)
    pattern = tuple(bool(b) for b in broadcastable)
    if len(pattern) != x.ndim:
        raise ValueError('pattern_broadcast: broadcastable has %d entries, x has rank %d'
                         % (len(pattern), x.ndim))
    if ENGINE == 'theano':
        return T.patternbroadcast(x, pattern)
    return _broadcastable_axes(x, [i for i, b in enumerate(pattern) if b])


# ---------------------------------------------------------------------------
# Activations and losses
# ---------------------------------------------------------------------------

def _fconst(value, x):
    return T.constant(np.asarray(value, dtype=x.dtype))


def relu(x, alpha=0., max_value=None, threshold=0.):
    """Rectified linear unit with Keras 2.3.1's rule.

    The kept part is ``x * (x > threshold)`` (``max(x, 0)`` when
    ``threshold`` is 0); with ``max_value`` it is clipped to
    ``[0, max_value]``; with ``alpha`` the leak ``alpha * max(threshold - x, 0)``
    is subtracted.

    Args:
        x: tensor; alpha: float slope below the threshold; max_value: float or
            None (saturation); threshold: float.

    Returns:
        tensor of ``x``'s shape and dtype.

    Example:
        >>> K.eval(K.relu(K.variable([-1., 2., 8.]), max_value=6.))
        array([0., 2., 6.], dtype=float32)
    """
    x = _as_tensor(x)
    zero = _fconst(0., x)
    if threshold != 0:
        kept = x * T.cast(T.gt(x, _fconst(threshold, x)), x.dtype)
    else:
        kept = T.maximum(x, zero)
    if max_value is not None:
        kept = T.minimum(T.maximum(kept, zero), _fconst(max_value, x))
    if alpha != 0:
        leak = T.maximum(_fconst(threshold, x) - x, zero) if threshold != 0 else \
            T.maximum(-x, zero)
        kept = kept - _fconst(alpha, x) * leak
    return kept


def elu(x, alpha=1.):
    """Exponential linear unit: ``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)``.

    Example:
        >>> K.eval(K.elu(K.variable([-1., 1.])))
        array([-0.63212055,  1.], dtype=float32)
    """
    x = _as_tensor(x)
    neg = _fconst(alpha, x) * (T.exp(T.minimum(x, _fconst(0., x))) - _fconst(1., x))
    return T.switch(T.gt(x, _fconst(0., x)), x, neg)


def softmax(x, axis=-1):
    """Softmax along ``axis``.

    Example:
        >>> K.eval(K.softmax(K.variable([[0., 0.]])))
        array([[0.5, 0.5]], dtype=float32)
    """
    x = _as_tensor(x)
    return _softmax(x, shape_rules.normalize_axis(axis, x.ndim))


def softplus(x):
    """``log(1 + exp(x))`` (stable engine softplus).

    Example:
        >>> K.eval(K.softplus(K.variable([0.])))
        array([0.6931472], dtype=float32)
    """
    return _softplus(_as_tensor(x))


def softsign(x):
    """``x / (1 + |x|)``.

    Example:
        >>> K.eval(K.softsign(K.variable([1.])))
        array([0.5], dtype=float32)
    """
    x = _as_tensor(x)
    return x / (_fconst(1., x) + abs(x))


def sigmoid(x):
    """Logistic sigmoid ``1 / (1 + exp(-x))``.

    Example:
        >>> K.eval(K.sigmoid(K.variable([0.])))
        array([0.5], dtype=float32)
    """
    return _sigmoid(_as_tensor(x))


def hard_sigmoid(x):
    """``clip(0.2 x + 0.5, 0, 1)``.

    Example:
        >>> K.eval(K.hard_sigmoid(K.variable([0., 10.])))
        array([0.5, 1.], dtype=float32)
    """
    x = _as_tensor(x)
    return T.clip(x * _fconst(0.2, x) + _fconst(0.5, x), _fconst(0., x), _fconst(1., x))


def tanh(x):
    """Hyperbolic tangent.

    Example:
        >>> K.eval(K.tanh(K.variable([0.])))
        array([0.], dtype=float32)
    """
    return T.tanh(_as_tensor(x))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Categorical crossentropy along the class ``axis``.

    Not from logits: ``p = clip(output / sum(output), eps, 1 - eps)``,
    ``-sum(target * log p)``; from logits: ``-sum(target * log_softmax(output))``.

    Returns:
        tensor of ``output``'s shape minus ``axis``.

    Example:
        >>> K.categorical_crossentropy(K.variable([[0., 1.]]), K.variable([[0.3, 0.7]]))
    """
    target = _as_tensor(target)
    output = _as_tensor(output)
    axis = shape_rules.normalize_axis(axis, output.ndim)
    if from_logits:
        return -T.sum(target * _log_softmax(output, axis), axis=axis)
    eps = common.epsilon()
    p = output / T.sum(output, axis=axis, keepdims=True)
    p = T.clip(p, _fconst(eps, p), _fconst(1. - eps, p))
    return -T.sum(target * T.log(p), axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Crossentropy with integer class ids ``target`` (any int/float dtype,
    ``output``'s shape minus the class axis).

    Returns:
        tensor of ``target``'s shape: ``-log_softmax(logits)[target]`` with
        ``logits = log(clip(output, eps, 1 - eps))`` unless ``from_logits``.

    Example:
        >>> K.sparse_categorical_crossentropy(K.variable([1.]), K.variable([[0.3, 0.7]]))
    """
    target = _as_tensor(target)
    output = _as_tensor(output)
    axis = shape_rules.normalize_axis(axis, output.ndim)
    if not from_logits:
        eps = common.epsilon()
        output = T.log(T.clip(output, _fconst(eps, output), _fconst(1. - eps, output)))
    lsm = _log_softmax(output, axis)
    if axis != output.ndim - 1:
        perm = [i for i in range(output.ndim) if i != axis] + [axis]
        lsm = lsm.dimshuffle(perm)
    if target.ndim == lsm.ndim:
        # (..., 1) class ids: drop the trailing axis (Keras accepts both forms)
        target = T.reshape(target, [target.shape[i] for i in range(target.ndim - 1)],
                           ndim=target.ndim - 1)
    t = T.cast(T.round(target) if target.dtype.startswith('float') else target, 'int64')
    classes = T.arange(lsm.shape[-1])
    onehot = T.cast(T.eq(t.dimshuffle(list(range(t.ndim)) + ['x']), classes), lsm.dtype)
    return -T.sum(onehot * lsm, axis=-1)


def binary_crossentropy(target, output, from_logits=False):
    """Elementwise binary crossentropy.

    Not from logits: ``p = clip(output, eps, 1 - eps)``,
    ``-(t log p + (1 - t) log(1 - p))``; from logits (``x = output``):
    ``max(x, 0) - x t + log(1 + exp(-|x|))``.

    Example:
        >>> K.binary_crossentropy(K.variable([1.]), K.variable([0.7]))
    """
    target = _as_tensor(target)
    output = _as_tensor(output)
    if from_logits:
        x = output
        return (T.maximum(x, _fconst(0., x)) - x * target
                + T.log1p(T.exp(-abs(x))))
    eps = common.epsilon()
    p = T.clip(output, _fconst(eps, output), _fconst(1. - eps, output))
    one = _fconst(1., p)
    return -(target * T.log(p) + (one - target) * T.log(one - p))


def l2_normalize(x, axis=None):
    """``x / sqrt(max(sum(x^2, axis, keepdims=True), 1e-12))``; None = all axes.

    Example:
        >>> K.eval(K.l2_normalize(K.variable([3., 4.]), 0))
        array([0.6, 0.8], dtype=float32)
    """
    x = _as_tensor(x)
    ss = T.sum(T.sqr(x), axis=_axes(x, axis), keepdims=True)
    return x / T.sqrt(T.maximum(ss, _fconst(1e-12, x)))


def in_top_k(predictions, targets, k):
    """Whether each target class is among the ``k`` best predictions.

    Args:
        predictions: (batch, classes) float; targets: (batch,) int; k: int.

    Returns:
        bool (batch,): True when fewer than ``k`` classes score strictly
        higher than the target (ties count as in); non-finite target scores
        give False.

    Example:
        >>> K.eval(K.in_top_k(K.variable([[0.1, 0.9]]), K.variable([1], 'int32'), 1))
        array([ True])
    """
    predictions = _as_tensor(predictions)
    targets = T.cast(_as_tensor(targets, 'int64'), 'int64')
    rows = T.arange(predictions.shape[0])
    score = predictions[rows, targets]
    higher = T.sum(T.cast(T.gt(predictions, score.dimshuffle(0, 'x')), 'int64'), axis=1)
    finite = T.and_(T.invert(T.isnan(score)), T.invert(T.isinf(score)))
    return T.and_(T.lt(higher, int(k)), finite)


# ---------------------------------------------------------------------------
# Convolution and pooling: one N-d core (1, 2 or 3 spatial axes)
# ---------------------------------------------------------------------------

def _sym_same_padding(length, kernel, stride, dilation):
    """Symbolic (before, after) of TensorFlow's 'same' rule for an unknown length."""
    dk = (kernel - 1) * dilation + 1
    out = (length + stride - 1) // stride
    total = T.maximum((out - 1) * stride + dk - length, 0)
    return total // 2, total - total // 2


def _pads_for(x_cl, kernel_size, strides, dilation, padding):
    """(before, after) per spatial axis of a channels_last tensor."""
    s = int_shape(x_cl)
    pads = []
    for i, k in enumerate(kernel_size):
        length = s[i + 1]
        if padding == 'same' and length is None:
            pads.append(_sym_same_padding(x_cl.shape[i + 1], k, strides[i], dilation[i]))
        else:
            pads.append(shape_rules.padding_amounts(length, k, strides[i], dilation[i], padding))
    return pads


def _patches(x_cl, kernel_size, strides, dilation, pads, fill=0.):
    """Strided windows of a channels_last tensor ``(batch, *spatial, C)``.

    Returns the list (kernel offsets in row-major order) of tensors
    ``(batch, *out_spatial, C)``: element ``o`` of entry ``k`` is input cell
    ``o * stride + k * dilation`` of the padded input.
    """
    n = len(kernel_size)
    xp = _pad(x_cl, [(0, 0)] + list(pads) + [(0, 0)], fill)
    s_in = int_shape(x_cl)
    out_static = [None] * n
    for i in range(n):
        b, a = pads[i]
        if s_in[i + 1] is not None and not _is_engine_var(b) and not _is_engine_var(a):
            dk = (kernel_size[i] - 1) * dilation[i] + 1
            out_static[i] = _bmax(0, (s_in[i + 1] + b + a - dk) // strides[i] + 1)
    result = []
    for offs in itertools.product(*[range(k) for k in kernel_size]):
        idx = [_bslice(None)]
        for i in range(n):
            dk = (kernel_size[i] - 1) * dilation[i] + 1
            start = offs[i] * dilation[i]
            tail = dk - 1 - start
            idx.append(_bslice(start, -tail if tail > 0 else None, strides[i]))
        idx.append(_bslice(None))
        piece = xp[tuple(idx)]
        result.append(_with_shape(piece, (s_in[0],) + tuple(out_static) + (s_in[-1],)))
    return result


def _to_cl(x, data_format):
    if data_format == 'channels_first':
        return x.dimshuffle(shape_rules.to_channels_last_perm(x.ndim))
    return x


def _from_cl(x, data_format):
    if data_format == 'channels_first':
        return x.dimshuffle(shape_rules.to_channels_first_perm(x.ndim))
    return x


def _kernel_shape(kernel, rank, name):
    ks = int_shape(kernel)
    if len(ks) != rank or _bany(d is None for d in ks):
        raise ValueError('%s: expected a kernel of rank %d with a fully known static shape, '
                         'got %r' % (name, rank, ks))
    return ks


def _conv_core(x_cl, kernel, strides, dilation, pads):
    """N-d convolution (im2col): channels_last ``x`` ``(batch, *S, in)``,
    kernel ``(*K, in, out)``; gathers the strided windows and contracts them
    with the reshaped kernel through ``tensordot``."""
    n = x_cl.ndim - 2
    ks = int_shape(kernel)
    cin, cout = ks[-2], ks[-1]
    cols = _patches(x_cl, ks[:n], strides, dilation, pads)
    col = cols[0] if len(cols) == 1 else T.concatenate(cols, axis=n + 1)
    w = T.reshape(kernel, (int(np.prod(ks[:n])) * cin, cout), ndim=2)
    out = T.tensordot(col, w, axes=[[n + 1], [0]])
    s = int_shape(cols[0])
    return _with_shape(out, s[:-1] + (cout,))


def _depthwise_core(x_cl, kernel, strides, dilation, pads):
    """N-d depthwise convolution: kernel ``(*K, in, mult)`` gives ``in * mult``
    channels, channel ``c * mult + m``."""
    n = x_cl.ndim - 2
    ks = int_shape(kernel)
    cin, mult = ks[-2], ks[-1]
    cols = _patches(x_cl, ks[:n], strides, dilation, pads)
    stacked = T.stack(cols, axis=n + 1)  # (B, *O, nK, C)
    w = T.reshape(kernel, (int(np.prod(ks[:n])), cin, mult), ndim=3)
    prod_ = stacked.dimshuffle(list(range(n + 3)) + ['x']) * w
    out = T.sum(prod_, axis=n + 1)  # (B, *O, C, M)
    dims = [out.shape[i] for i in range(n + 1)] + [cin * mult]
    out = T.reshape(out, T.stack(dims), ndim=n + 2)
    s = int_shape(cols[0])
    return _with_shape(out, s[:-1] + (cin * mult,))


def _conv_args(x, kernel, n, strides, padding, data_format, dilation_rate, name,
               allow_causal=False):
    x = _as_tensor(x)
    kernel = _as_tensor(kernel)
    data_format = normalize_data_format(data_format)
    shape_rules.check_ndim(x.ndim, (n + 2,), 'x', name + ' input')
    padding = shape_rules.normalize_padding(padding, allow_causal)
    strides = shape_rules.normalize_tuple(strides, n, 'strides')
    dilation = shape_rules.normalize_tuple(dilation_rate, n, 'dilation_rate')
    if _bany(s < 1 for s in strides) or _bany(d < 1 for d in dilation):
        raise ValueError('%s: strides and dilation_rate must be >= 1, got %r and %r'
                         % (name, strides, dilation))
    return x, kernel, data_format, padding, strides, dilation


def _flip_kernel(kernel, n):
    """``kernel`` reversed along its ``n`` leading (spatial) axes, in the graph.

    Keras' Theano backend computes ``conv1d/2d/3d`` (and their transposes)
    as true convolutions (Theano's ``filter_flip=True``): the spatial axes
    of the kernel are flipped relative to TensorFlow's and CNTK's
    cross-correlation.  ``keras_backend.utils.convert_kernel`` converts
    kernels between the two conventions."""
    idx = tuple([_bslice(None, None, -1)] * n + [_bslice(None)] * (kernel.ndim - n))
    return _with_shape(kernel[idx], int_shape(kernel))


def _conv(x, kernel, n, strides, padding, data_format, dilation_rate, name):
    x, kernel, data_format, padding, strides, dilation = _conv_args(
        x, kernel, n, strides, padding, data_format, dilation_rate, name, n == 1)
    ks = _kernel_shape(kernel, n + 2, name)
    x_cl = _to_cl(x, data_format)
    if int_shape(x_cl)[-1] not in (None, ks[-2]):
        raise ValueError('%s: input has %d channels, kernel expects %d'
                         % (name, int_shape(x_cl)[-1], ks[-2]))
    pads = _pads_for(x_cl, ks[:n], strides, dilation, padding)
    return _from_cl(_conv_core(x_cl, _flip_kernel(kernel, n), strides, dilation, pads),
                    data_format)


@_records_keras_shape
def conv1d(x, kernel, strides=1, padding='valid', data_format=None, dilation_rate=1):
    """1-D convolution (im2col: strided slices + ``tensordot``).

    As in Keras' Theano backend this is a true convolution: the kernel's
    spatial axes are flipped relative to the cross-correlation of the
    TensorFlow and CNTK backends (``keras_backend.utils.convert_kernel``
    converts a kernel between the two).

    Args:
        x: (batch, steps, in) channels_last or (batch, in, steps) channels_first.
        kernel: (k, in, out).
        padding: 'valid', 'same' or 'causal' (left padding ``(k - 1) * dilation``).

    Returns:
        (batch, new_steps, out) in the data format.

    Raises:
        ValueError: bad padding/strides/data_format, rank or channel mismatch.

    Example:
        >>> K.int_shape(K.conv1d(K.placeholder((1, 10, 3)), K.variable(np.ones((3, 3, 4)))))
        (1, 8, 4)
    """
    return _conv(x, kernel, 1, strides, padding, data_format, dilation_rate, 'conv1d')


@_records_keras_shape
def conv2d(x, kernel, strides=(1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1)):
    """2-D convolution (im2col: strided slices + ``tensordot``).

    As in Keras' Theano backend this is a true convolution: the kernel's
    spatial axes are flipped relative to the cross-correlation of the
    TensorFlow and CNTK backends (``keras_backend.utils.convert_kernel``
    converts a kernel between the two).

    Args:
        x: 4-D in ``data_format``; kernel: (kh, kw, in, out);
        padding: 'valid' or 'same' (TensorFlow's rule).

    Returns:
        4-D tensor in the data format, spatial sizes ``shape_rules.conv_output_length``.

    Example:
        >>> K.int_shape(K.conv2d(K.placeholder((1, 5, 5, 3)), K.variable(np.ones((3, 3, 3, 2)))))
        (1, 3, 3, 2)
    """
    return _conv(x, kernel, 2, strides, padding, data_format, dilation_rate, 'conv2d')


@_records_keras_shape
def conv3d(x, kernel, strides=(1, 1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1, 1)):
    """3-D convolution (im2col: strided slices + ``tensordot``).

    As in Keras' Theano backend this is a true convolution: the kernel's
    spatial axes are flipped relative to the cross-correlation of the
    TensorFlow and CNTK backends (``keras_backend.utils.convert_kernel``
    converts a kernel between the two).

    Args:
        x: 5-D in ``data_format``; kernel: (kd, kh, kw, in, out).

    Returns:
        5-D tensor in the data format.

    Example:
        >>> K.int_shape(K.conv3d(K.placeholder((1, 4, 4, 4, 1)), K.variable(np.ones((2, 2, 2, 1, 1)))))
        (1, 3, 3, 3, 1)
    """
    return _conv(x, kernel, 3, strides, padding, data_format, dilation_rate, 'conv3d')


def _depthwise(x, kernel, n, strides, padding, data_format, dilation_rate, name):
    x, kernel, data_format, padding, strides, dilation = _conv_args(
        x, kernel, n, strides, padding, data_format, dilation_rate, name, n == 1)
    ks = _kernel_shape(kernel, n + 2, name)
    x_cl = _to_cl(x, data_format)
    pads = _pads_for(x_cl, ks[:n], strides, dilation, padding)
    return x_cl, _depthwise_core(x_cl, kernel, strides, dilation, pads), data_format


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """Depthwise 2-D convolution (a cross-correlation, no kernel flip, as
    Keras' Theano backend, which pre-flips its depthwise kernels).

    Args:
        depthwise_kernel: (kh, kw, in, multiplier).

    Returns:
        4-D tensor with ``in * multiplier`` channels (channel ``c * multiplier + m``).

    Example:
        >>> K.int_shape(K.depthwise_conv2d(K.placeholder((1, 5, 5, 3)), K.variable(np.ones((3, 3, 3, 2)))))
        (1, 3, 3, 6)
    """
    _, out, data_format = _depthwise(x, depthwise_kernel, 2, strides, padding, data_format,
                                     dilation_rate, 'depthwise_conv2d')
    return _from_cl(out, data_format)


def _pointwise(x_cl, pointwise_kernel, name):
    pk = _as_tensor(pointwise_kernel)
    ks = int_shape(pk)
    if _bany(d != 1 for d in ks[:-2]) or ks[-2] is None or ks[-1] is None:
        raise ValueError('%s: pointwise_kernel must be (1, ..., in * multiplier, out), got %r'
                         % (name, ks))
    w = T.reshape(pk, (ks[-2], ks[-1]), ndim=2)
    out = T.tensordot(x_cl, w, axes=[[x_cl.ndim - 1], [0]])
    return _with_shape(out, int_shape(x_cl)[:-1] + (ks[-1],))


def separable_conv1d(x, depthwise_kernel, pointwise_kernel, strides=1, padding='valid',
                     data_format=None, dilation_rate=1):
    """Separable 1-D convolution: depthwise ``(k, in, mult)`` then pointwise
    ``(1, in * mult, out)``.

    Example:
        >>> K.separable_conv1d(x, K.variable(np.ones((3, 2, 2))), K.variable(np.ones((1, 4, 5))))
    """
    _, out, data_format = _depthwise(x, depthwise_kernel, 1, strides, padding, data_format,
                                     dilation_rate, 'separable_conv1d')
    return _from_cl(_pointwise(out, pointwise_kernel, 'separable_conv1d'), data_format)


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """Separable 2-D convolution: depthwise ``(kh, kw, in, mult)`` then pointwise
    ``(1, 1, in * mult, out)``.

    Example:
        >>> K.separable_conv2d(x, K.variable(np.ones((3, 3, 2, 2))), K.variable(np.ones((1, 1, 4, 5))))
    """
    _, out, data_format = _depthwise(x, depthwise_kernel, 2, strides, padding, data_format,
                                     dilation_rate, 'separable_conv2d')
    return _from_cl(_pointwise(out, pointwise_kernel, 'separable_conv2d'), data_format)


def _conv_transpose(x, kernel, output_shape, n, strides, padding, data_format,
                    dilation_rate, name):
    x, kernel, data_format, padding, strides, dilation = _conv_args(
        x, kernel, n, strides, padding, data_format, dilation_rate, name)
    ks = _kernel_shape(kernel, n + 2, name)
    if _is_engine_var(output_shape):
        raise ValueError('%s: output_shape must be a tuple of ints (batch may be None)' % name)
    output_shape = tuple(output_shape)
    if len(output_shape) != n + 2:
        raise ValueError('%s: output_shape must have %d entries, got %r'
                         % (name, n + 2, output_shape))
    out_shape = tuple(None if d is None else int(d) for d in output_shape)
    if data_format == 'channels_first':
        out_cl = (out_shape[0],) + out_shape[2:] + (out_shape[1],)
    else:
        out_cl = out_shape
    if _bany(d is None for d in out_cl[1:]):
        raise ValueError('%s: output_shape spatial and channel sizes must be ints, got %r'
                         % (name, output_shape))
    if out_cl[-1] != ks[-2]:
        raise ValueError('%s: output_shape has %d channels, kernel (k..., out, in) has %d'
                         % (name, out_cl[-1], ks[-2]))
    x_cl = _to_cl(x, data_format)
    in_s = int_shape(x_cl)
    pads = []
    for i in range(n):
        if in_s[i + 1] is not None:
            pads.append(shape_rules.deconv_crop(out_cl[i + 1], in_s[i + 1], ks[i], strides[i],
                                     padding, dilation[i]))
        else:
            pads.append(shape_rules.padding_amounts(out_cl[i + 1], ks[i], strides[i], dilation[i],
                                         padding))
    batch = x_cl.shape[0]
    # The transposed convolution is the gradient (adjoint) of the forward
    # convolution taking an ``output_shape`` image to ``x``'s shape.
    z = T.zeros([batch] + list(out_cl[1:]), dtype=x.dtype)
    forward = _conv_core(z, _flip_kernel(kernel, n), strides, dilation, pads)
    out = T.grad(T.sum(forward * x_cl), z)
    out = _with_shape(out, (in_s[0] if out_cl[0] is None else out_cl[0],) + out_cl[1:])
    return _from_cl(out, data_format)


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """Transposed 2-D convolution, built as the gradient (adjoint) of ``conv2d``
    w.r.t. its input (so, like ``conv2d`` here and in Keras' Theano backend,
    with the kernel's spatial axes flipped relative to TensorFlow/CNTK; see
    ``keras_backend.utils.convert_kernel``).

    Args:
        kernel: (kh, kw, out, in); output_shape: the full output shape in the
            data format (batch may be None).

    Raises:
        ValueError: when ``output_shape`` is incompatible with the input size,
            kernel, strides and padding.

    Example:
        >>> K.int_shape(K.conv2d_transpose(K.placeholder((1, 3, 3, 2)), K.variable(np.ones((3, 3, 4, 2))), (1, 5, 5, 4)))
        (1, 5, 5, 4)
    """
    return _conv_transpose(x, kernel, output_shape, 2, strides, padding, data_format,
                           dilation_rate, 'conv2d_transpose')


def conv3d_transpose(x, kernel, output_shape, strides=(1, 1, 1), padding='valid',
                     data_format=None):
    """Transposed 3-D convolution (gradient of ``conv3d`` w.r.t. its input;
    kernel flipped relative to TensorFlow/CNTK, as ``conv3d``).

    Args:
        kernel: (kd, kh, kw, out, in); output_shape: full output shape in the
            data format (batch may be None).

    Example:
        >>> K.conv3d_transpose(x, K.variable(np.ones((2, 2, 2, 4, 2))), (1, 5, 5, 5, 4))
    """
    return _conv_transpose(x, kernel, output_shape, 3, strides, padding, data_format,
                           (1, 1, 1), 'conv3d_transpose')


def _pool(x, pool_size, strides, padding, data_format, pool_mode, n, name):
    x = _as_tensor(x)
    data_format = normalize_data_format(data_format)
    shape_rules.check_ndim(x.ndim, (n + 2,), 'x', name + ' input')
    pool_size = shape_rules.normalize_tuple(pool_size, n, 'pool_size')
    strides = shape_rules.normalize_tuple(strides if strides is not None else pool_size, n, 'strides')
    padding = shape_rules.normalize_padding(padding)
    pool_mode = shape_rules.normalize_pool_mode(pool_mode)
    ones = (1,) * n
    x_cl = _to_cl(x, data_format)
    pads = _pads_for(x_cl, pool_size, strides, ones, padding)
    if pool_mode == 'max':
        cols = _patches(x_cl, pool_size, strides, ones, pads, fill=-np.inf)
        out = cols[0] if len(cols) == 1 else T.max(T.stack(cols, axis=0), axis=0)
    else:
        cols = _patches(x_cl, pool_size, strides, ones, pads, fill=0.)
        total = cols[0]
        for c in cols[1:]:
            total = total + c
        if _ball(not _is_engine_var(b) and not _is_engine_var(a) and b == 0 and a == 0
                       for b, a in pads):
            out = total / _fconst(float(np.prod(pool_size)), total)
        else:
            ones_t = T.ones_like(x_cl[:1, ..., :1]) if ENGINE == 'pytensor' else \
                T.ones_like(x_cl[tuple([_bslice(0, 1)] + [_bslice(None)] * n + [_bslice(0, 1)])])
            counts = _patches(ones_t, pool_size, strides, ones, pads, fill=0.)
            count = counts[0]
            for c in counts[1:]:
                count = count + c
            count = _broadcastable_axes(count, [0, n + 1])
            out = total / count
    out = _with_shape(out, int_shape(cols[0]))
    return _from_cl(out, data_format)


@_records_keras_shape
def pool2d(x, pool_size, strides=(1, 1), padding='valid', data_format=None, pool_mode='max'):
    """2-D max or average pooling (strided slices; 'same' pads max pooling with
    -inf, and average pooling divides by the count of real cells).

    Args:
        pool_size, strides: int or 2 ints; padding: 'valid'/'same';
        pool_mode: 'max' or 'avg'.

    Example:
        >>> K.int_shape(K.pool2d(K.placeholder((1, 4, 4, 3)), (2, 2), (2, 2)))
        (1, 2, 2, 3)
    """
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 2, 'pool2d')


@_records_keras_shape
def pool3d(x, pool_size, strides=(1, 1, 1), padding='valid', data_format=None,
           pool_mode='max'):
    """3-D max or average pooling (same rules as ``pool2d``).

    Example:
        >>> K.int_shape(K.pool3d(K.placeholder((1, 4, 4, 4, 3)), (2, 2, 2), (2, 2, 2)))
        (1, 2, 2, 2, 3)
    """
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 3, 'pool3d')


@_records_keras_shape
def bias_add(x, bias, data_format=None):
    """Add ``bias`` to ``x``: 1-D of the channel size, or of rank ``ndim(x) - 1``
    (then in channels_last layout ``(*spatial, C)``, as Keras).

    Raises:
        ValueError: for a bias of another rank or a channel-size mismatch.

    Example:
        >>> K.int_shape(K.bias_add(K.placeholder((2, 3)), K.variable(np.zeros(3))))
        (2, 3)
    """
    x = _as_tensor(x)
    bias = _as_tensor(bias)
    data_format = normalize_data_format(data_format)
    bs = int_shape(bias)
    if len(bs) != 1 and len(bs) != x.ndim - 1:
        raise ValueError('bias_add: bias must be 1-D or of rank ndim(x) - 1 = %d, got shape %r'
                         % (x.ndim - 1, bs))
    xs = int_shape(x)
    channel_axis = 1 if (data_format == 'channels_first' and x.ndim > 2) else x.ndim - 1
    if xs[channel_axis] is not None and bs[-1] is not None and xs[channel_axis] != bs[-1]:
        raise ValueError('bias_add: bias size %d does not match the %d channels of x'
                         % (bs[-1], xs[channel_axis]))
    if len(bs) == 1:
        return x + _broadcast_param(bias, x.ndim, channel_axis)
    if channel_axis == 1:
        b = T.reshape(bias, (1, bs[-1]) + tuple(bs[:-1]), ndim=x.ndim)
    else:
        b = bias.dimshuffle(['x'] + list(range(bias.ndim)))
    return x + b


def _local_patches(inputs, kernel_size, strides, data_format, n, name):
    inputs = _as_tensor(inputs)
    shape_rules.check_ndim(inputs.ndim, (n + 2,), 'inputs', name + ' input')
    data_format = normalize_data_format(data_format)
    kernel_size = shape_rules.normalize_tuple(kernel_size, n, 'kernel_size')
    strides = shape_rules.normalize_tuple(strides, n, 'strides')
    x_cl = _to_cl(inputs, data_format)
    cols = _patches(x_cl, kernel_size, strides, (1,) * n, [(0, 0)] * n)
    return T.stack(cols, axis=n + 1), data_format  # (B, *O, nK, C)


def _local_apply(patches, kernel, n_locations, feat):
    """patches (B, L, feat), kernel (L, feat, F) -> (B, L, F) (batched dot over L)."""
    p = patches.dimshuffle(1, 0, 2)
    out = _batched_dot(p, kernel)
    return out.dimshuffle(1, 0, 2)


def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """Locally connected 1-D convolution (unshared weights).

    Args:
        inputs: (batch, steps, in) (channels_first: (batch, in, steps)).
        kernel: (out_steps, k * in, filters); each patch flattened in (k, in) order.
        kernel_size, strides: int or 1-tuple.

    Returns:
        (batch, out_steps, filters) ((batch, filters, out_steps) channels_first).

    Example:
        >>> K.int_shape(K.local_conv1d(K.placeholder((2, 5, 3)), K.variable(np.ones((4, 6, 7))), (2,), (1,)))
        (2, 4, 7)
    """
    kernel = _as_tensor(kernel)
    ks = _kernel_shape(kernel, 3, 'local_conv1d')
    stacked, data_format = _local_patches(inputs, kernel_size, strides, data_format, 1,
                                          'local_conv1d')
    b = stacked.shape[0]
    p = T.reshape(stacked, T.stack([b, ks[0], ks[1]]), ndim=3)
    out = _local_apply(p, kernel, ks[0], ks[1])
    out = _with_shape(out, (int_shape(inputs)[0], ks[0], ks[2]))
    return _from_cl(out, data_format)


def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """Locally connected 2-D convolution (unshared weights).

    Args:
        inputs: 4-D in ``data_format``.
        kernel: (out_rows * out_cols, kh * kw * in, filters); patches flattened
            (kh, kw, in) for channels_last, (in, kh, kw) for channels_first.
        output_shape: (out_rows, out_cols).

    Returns:
        4-D output in the data format.

    Example:
        >>> K.local_conv2d(x, kernel, (2, 2), (1, 1), (3, 3))
    """
    kernel = _as_tensor(kernel)
    ks = _kernel_shape(kernel, 3, 'local_conv2d')
    rows, cols_ = shape_rules.normalize_tuple(output_shape, 2, 'output_shape')
    stacked, data_format = _local_patches(inputs, kernel_size, strides, data_format, 2,
                                          'local_conv2d')
    if data_format == 'channels_first':
        stacked = stacked.dimshuffle(0, 1, 2, 4, 3)  # (B, O1, O2, C, nK)
    b = stacked.shape[0]
    p = T.reshape(stacked, T.stack([b, rows * cols_, ks[1]]), ndim=3)
    out = _local_apply(p, kernel, ks[0], ks[1])  # (B, L, F)
    out = T.reshape(out, T.stack([b, rows, cols_, ks[2]]), ndim=4)
    out = _with_shape(out, (int_shape(inputs)[0], rows, cols_, ks[2]))
    return _from_cl(out, data_format)


# ---------------------------------------------------------------------------
# Resizing
# ---------------------------------------------------------------------------

def _repeat_axis(x, factor, axis):
    return repeat_elements(x, factor, axis) if factor != 1 else x


def _bilinear_axis(x, factor, axis):
    """Upsample ``x`` by an integer ``factor`` along ``axis`` with
    tf.image.resize's bilinear rule (half-pixel centres, edges clamped)."""
    if factor == 1:
        return x
    nd = x.ndim
    s = int_shape(x)

    def shifted(step):
        # neighbour at i + step, clamped at the edges
        if step > 0:
            body = x[tuple([_bslice(None)] * axis + [_bslice(1, None)])]
            edge = x[tuple([_bslice(None)] * axis + [_bslice(-1, None)])]
            return T.concatenate([body, edge], axis=axis)
        body = x[tuple([_bslice(None)] * axis + [_bslice(None, -1)])]
        edge = x[tuple([_bslice(None)] * axis + [_bslice(0, 1)])]
        return T.concatenate([edge, body], axis=axis)

    up = shifted(1)
    down = shifted(-1)
    phases = []
    for r in range(factor):
        delta = (r + 0.5) / factor - 0.5
        if delta >= 0:
            phases.append(x * _fconst(1. - delta, x) + up * _fconst(delta, x))
        else:
            phases.append(down * _fconst(-delta, x) + x * _fconst(1. + delta, x))
    stacked = T.stack(phases, axis=axis + 1)
    dims = [x.shape[i] for i in range(nd)]
    dims[axis] = dims[axis] * factor
    out = T.reshape(stacked, T.stack(dims), ndim=nd)
    new = list(s)
    if new[axis] is not None:
        new[axis] *= factor
    return _with_shape(out, new)


@_records_keras_shape
def resize_images(x, height_factor, width_factor, data_format, interpolation='nearest'):
    """Upsample the spatial axes of a 4-D tensor by integer factors.

    Args:
        interpolation: 'nearest' (repeat pixels) or 'bilinear' (tf.image.resize
            bilinear, half-pixel centres, no antialias).

    Raises:
        ValueError: for non-integer/non-positive factors or a bad interpolation.

    Example:
        >>> K.int_shape(K.resize_images(K.placeholder((1, 2, 2, 3)), 2, 3, 'channels_last'))
        (1, 4, 6, 3)
    """
    x = _as_tensor(x)
    shape_rules.check_ndim(x.ndim, (4,), 'x', 'resize_images input')
    data_format = normalize_data_format(data_format)
    interpolation = shape_rules.normalize_interpolation(interpolation)
    hf, wf = shape_rules.normalize_tuple((height_factor, width_factor), 2, 'height_factor/width_factor')
    if hf < 1 or wf < 1:
        raise ValueError('resize_images: factors must be positive ints, got %r' % ((hf, wf),))
    axes = (2, 3) if data_format == 'channels_first' else (1, 2)
    fn = _repeat_axis if interpolation == 'nearest' else _bilinear_axis
    return fn(fn(x, hf, axes[0]), wf, axes[1])


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    """Nearest-neighbour upsampling (repeats) of the 3 spatial axes of a 5-D tensor.

    Example:
        >>> K.int_shape(K.resize_volumes(K.placeholder((1, 2, 2, 2, 3)), 2, 2, 2, 'channels_last'))
        (1, 4, 4, 4, 3)
    """
    x = _as_tensor(x)
    shape_rules.check_ndim(x.ndim, (5,), 'x', 'resize_volumes input')
    data_format = normalize_data_format(data_format)
    factors = shape_rules.normalize_tuple((depth_factor, height_factor, width_factor), 3, 'factors')
    if _bany(f < 1 for f in factors):
        raise ValueError('resize_volumes: factors must be positive ints, got %r' % (factors,))
    axes = (2, 3, 4) if data_format == 'channels_first' else (1, 2, 3)
    for f, a in zip(factors, axes):
        x = _repeat_axis(x, f, a)
    return x


# ---------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------

def _expand_mask(mask_t, ndim):
    """(batch,) bool/number -> broadcastable to a (batch, ...) tensor of rank ``ndim``."""
    m = T.neq(mask_t, 0)
    return m.dimshuffle([0] + ['x'] * (ndim - 1))


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
    stack = [(o, False) for o in outputs if _is_engine_var(o)]
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
            if not dep[id(i)] and i.owner is not None and id(i) not in found_ids \
                    and isinstance(i.type, T.TensorType):
                found.append(i)
                found_ids.add(id(i))
    return found


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None,
        constants=None, unroll=False, input_length=None):
    """Iterate ``step_function`` over the time axis (engine ``scan``, or a Python
    loop when ``unroll``).

    As Keras' TensorFlow backend, the step function is first called once on
    the first time step outside the loop (Keras' recurrent cells draw their
    dropout masks on that call); the parts of the step that do not depend on
    the step's inputs (such masks, weight slices) are computed once, before
    the loop, and passed to ``scan`` as explicit non-sequences, so gradients
    flow through the loop even with random masks. The results carry
    ``_uses_learning_phase`` when the step's outputs do.

    Args:
        step_function: ``(x_t, states + constants) -> (output_t, new_states)``.
        inputs: (batch, time, ...).
        initial_states: list of (batch, ...) tensors.
        go_backwards: walk time in reverse (``outputs`` in walking order).
        mask: (batch, time); a masked step keeps the previous states and
            repeats the previous output (zeros before the first step).
        constants: list of tensors passed to every step.
        unroll: Python loop (needs a static time length or ``input_length``).

    Returns:
        ``(last_output, outputs (batch, time, ...), new_states)``.

    Raises:
        ValueError: for inputs of rank < 3, or ``unroll`` with unknown length.

    Example:
        >>> last, outs, states = K.rnn(lambda x, s: (x + s[0], [x + s[0]]), x, [h0])
    """
    inputs = _as_tensor(inputs)
    if inputs.ndim < 3:
        raise ValueError('rnn: inputs must be at least 3-D (batch, time, ...), got rank %d'
                         % inputs.ndim)
    constants = list(constants or [])
    initial_states = list(initial_states)
    axes = [1, 0] + list(range(2, inputs.ndim))
    seq = inputs.dimshuffle(axes)  # (time, batch, ...)
    if mask is not None:
        mask = _as_tensor(mask)
        if mask.ndim == 3:
            mask = mask[:, :, 0]
        mask_seq = mask.dimshuffle(1, 0)
    if unroll:
        steps = int_shape(inputs)[1]
        if steps is None:
            steps = input_length
        if steps is None:
            raise ValueError('rnn: unroll=True needs a static time length or input_length')
        order = range(steps - 1, -1, -1) if go_backwards else range(steps)
        states = initial_states
        outputs = []
        prev = None
        for t in order:
            out, new_states = step_function(seq[t], states + constants)
            new_states = list(new_states)
            if mask is not None:
                if prev is None:
                    prev = T.zeros_like(out)
                m = _expand_mask(mask_seq[t], out.ndim)
                out = T.switch(m, out, prev)
                new_states = [T.switch(_expand_mask(mask_seq[t], s.ndim), ns, s)
                              for s, ns in zip(states, new_states)]
            outputs.append(out)
            prev = out
            states = new_states
        stacked = T.stack(outputs, axis=1)
        return outputs[-1], stacked, list(states)

    n_states = len(initial_states)
    if go_backwards:
        seq = seq[::-1]
        if mask is not None:
            mask_seq = mask_seq[::-1]

    # Build the step once on stand-in inputs, then move every part of it that
    # does not depend on the step's inputs (dropout masks drawn before the
    # loop, weight slices, ...) out of the loop as explicit non-sequences: the
    # engine's scan would otherwise rebuild those graphs inside the loop,
    # random generators included, and cannot differentiate through them.
    # A first call on the real first step (as Keras' TensorFlow backend does)
    # lets a step that caches tensors on its first call (Keras' recurrent
    # cells draw their dropout masks so) build them outside the loop.
    out0, _ = step_function(seq[0], initial_states + constants)
    x_in = _stand_in(seq[0], tuple(int_shape(seq))[1:])
    s_in = [_stand_in(s, int_shape(s)) for s in initial_states]
    rngs_before, streams_before = set(_RNG_NEXT), len(_TH_STREAMS)
    out, new_states = step_function(x_in, s_in + constants)
    new_states = [T.cast(ns, s.dtype) for s, ns in zip(initial_states, list(new_states))]
    uses_lp = _bany(getattr(v, '_uses_learning_phase', False) for v in [out] + new_states)
    inner = [x_in] + s_in
    inner_ids = set(id(v) for v in inner)
    for rng, nxt in _new_rng_updates(streams_before, rngs_before):
        # a draw made inside the step from its inputs: as with Keras' Theano
        # backend, its generator is not advanced (same draw at every step)
        if nxt is not None and _bany(id(a) in inner_ids for a in _ancestors([nxt])):
            _freeze_rng(rng)
    hoisted = _outer_parts([out] + new_states, inner)
    n_h = len(hoisted)

    def _rebuild(x_t, states, hoisted_in):
        replace = dict(zip(inner, [x_t] + list(states)))
        replace.update(zip(hoisted, hoisted_in))
        return _clone([out] + new_states, replace)

    if mask is None:
        def _step(x_t, *args):
            states = args[:n_states]
            return _rebuild(x_t, states, args[n_states:n_states + n_h])

        results = _scan(_step, sequences=[seq], outputs_info=[None] + initial_states,
                        non_sequences=hoisted)
    else:
        init_out = T.zeros_like(out0)

        def _step(x_t, m_t, prev_out, *args):
            states = list(args[:n_states])
            res = _rebuild(x_t, states, args[n_states:n_states + n_h])
            out_t = T.switch(_expand_mask(m_t, res[0].ndim), res[0], prev_out)
            kept = [T.cast(T.switch(_expand_mask(m_t, st.ndim), ns, st), st.dtype)
                    for st, ns in zip(states, res[1:])]
            return [out_t] + kept

        results = _scan(_step, sequences=[seq, mask_seq],
                        outputs_info=[init_out] + initial_states, non_sequences=hoisted)
    if not isinstance(results, (list, tuple)):
        results = [results]
    outputs = results[0]
    states = [_with_shape(s[-1], int_shape(s0)) for s, s0 in zip(results[1:], initial_states)]
    last = outputs[-1]
    outputs = outputs.dimshuffle([1, 0] + list(range(2, outputs.ndim)))
    out_s = list(int_shape(outputs))
    out_s[1] = int_shape(inputs)[1]
    if out_s[0] is None:
        out_s[0] = int_shape(inputs)[0]
    outputs = _with_shape(outputs, out_s)
    last = _with_shape(last, [out_s[0]] + out_s[2:])
    for v in [last, outputs] + states:
        v._uses_learning_phase = uses_lp
    return last, outputs, states


def switch(condition, then_expression, else_expression):
    """Elementwise or scalar choice between two expressions (engine ``switch``).

    Args:
        condition: scalar, or a tensor of rank <= the expressions' rank
            (padded with trailing axes).
        then_expression, else_expression: tensors or callables returning one.

    Raises:
        ValueError: when ``condition`` has a higher rank than the expressions.

    Example:
        >>> K.switch(K.greater(x, 0), x, -x)
    """
    if callable(then_expression):
        then_expression = then_expression()
    if callable(else_expression):
        else_expression = else_expression()
    cond = _as_tensor(condition)
    then_expression = _as_tensor(then_expression)
    else_expression = _as_tensor(else_expression)
    expr_ndim = _bmax(then_expression.ndim, else_expression.ndim)
    if cond.ndim > expr_ndim:
        raise ValueError('switch: condition of rank %d is higher than the expressions\' '
                         'rank %d' % (cond.ndim, expr_ndim))
    if 0 < cond.ndim < expr_ndim:
        cond = cond.dimshuffle(list(range(cond.ndim)) + ['x'] * (expr_ndim - cond.ndim))
    return T.switch(cond, then_expression, else_expression)


def in_train_phase(x, alt, training=None):
    """``x`` in the training phase, ``alt`` otherwise.

    Args:
        x, alt: tensors or callables returning one.
        training: None (= ``learning_phase()``), 0/1/bool (choose statically)
            or a symbolic scalar.

    Example:
        >>> y = K.in_train_phase(K.dropout(x, 0.5), x)
    """
    if training is None:
        training = learning_phase()
        uses_lp = True
    else:
        uses_lp = False
    if not _is_engine_var(training):
        if training in (1, True):
            return x() if callable(x) else x
        if training in (0, False):
            return alt() if callable(alt) else alt
        raise ValueError('in_train_phase: training must be None, 0, 1 or a tensor, got %r'
                         % (training,))
    if callable(x):
        x = x()
    if callable(alt):
        alt = alt()
    x = _as_tensor(x)
    alt = _as_tensor(alt)
    out = T.switch(T.neq(training, 0), x, alt)
    if uses_lp:
        out._uses_learning_phase = True
    return out


def in_test_phase(x, alt, training=None):
    """``x`` in the test phase, ``alt`` otherwise (see ``in_train_phase``).

    Example:
        >>> y = K.in_test_phase(x, K.dropout(x, 0.5))
    """
    return in_train_phase(alt, x, training=training)


def map_fn(fn, elems, name=None, dtype=None):
    """Apply ``fn`` to each element of ``elems`` along axis 0 (engine ``scan``).

    Returns:
        tensor stacking the results on axis 0 (cast to ``dtype`` when given).

    Example:
        >>> K.map_fn(lambda r: K.sum(r), x)
    """
    elems = _as_tensor(elems)
    out = _scan(fn, sequences=[elems])
    if dtype is not None:
        out = T.cast(out, _normalize_dtype(dtype, 'map_fn'))
    s = list(int_shape(out))
    s[0] = int_shape(elems)[0]
    return _with_shape(out, s)


def _fold(fn, elems, initializer, backwards):
    elems = _as_tensor(elems)
    if backwards:
        elems = elems[::-1]
    if initializer is None:
        initializer = elems[0]
        elems = elems[1:]
    else:
        initializer = _as_tensor(initializer)

    def _step(x, acc):
        res = fn(acc, x)
        return T.cast(res, acc.dtype)

    out = _scan(_step, sequences=[elems], outputs_info=[initializer])
    return out[-1]


def foldl(fn, elems, initializer=None, name=None):
    """Reduce ``elems`` left to right along axis 0 with ``fn(acc, x)``; without
    ``initializer`` the first element starts.

    Example:
        >>> K.foldl(lambda acc, x: acc + x, K.variable([1., 2., 3.]))
    """
    return _fold(fn, elems, initializer, False)


def foldr(fn, elems, initializer=None, name=None):
    """Reduce ``elems`` right to left along axis 0 with ``fn(acc, x)``; without
    ``initializer`` the last element starts.

    Example:
        >>> K.foldr(lambda acc, x: acc + x, K.variable([1., 2., 3.]))
    """
    return _fold(fn, elems, initializer, True)


# ---------------------------------------------------------------------------
# Random
# ---------------------------------------------------------------------------

def _size(shape):
    if _is_engine_var(shape):
        return shape
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(s if _is_engine_var(s) else int(s) for s in shape)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Tensor of N(mean, stddev^2) samples (engine random stream, seeded).

    Example:
        >>> K.eval(K.random_normal((2, 3), seed=1)).shape
        (2, 3)
    """
    dtype = _normalize_dtype(dtype, 'random_normal')
    return _random_draw('normal', _next_seed(seed), _size(shape), dtype,
                        loc=np.asarray(mean, dtype), scale=np.asarray(stddev, dtype))


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Tensor of U(minval, maxval) samples (engine random stream, seeded).

    Example:
        >>> K.eval(K.random_uniform((2, 3), seed=1)).shape
        (2, 3)
    """
    dtype = _normalize_dtype(dtype, 'random_uniform')
    return _random_draw('uniform', _next_seed(seed), _size(shape), dtype,
                        low=np.asarray(minval, dtype), high=np.asarray(maxval, dtype))


def random_binomial(shape, p=0.0, dtype=None, seed=None):
    """Tensor of Bernoulli samples: 1 with probability ``p``, else 0 (``floatx()``).

    Example:
        >>> K.eval(K.random_binomial((2, 3), p=0.5, seed=1))
    """
    dtype = _normalize_dtype(dtype, 'random_binomial')
    u = random_uniform(shape, 0., 1., dtype='float32', seed=seed)
    return T.cast(T.lt(u, np.float32(p)), dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Normal samples truncated to within 2 stddev of ``mean`` (inverse-CDF of a
    uniform draw restricted to [Phi(-2), Phi(2)], engine ``erfinv``).

    Example:
        >>> K.eval(K.truncated_normal((2, 3), seed=1)).shape
        (2, 3)
    """
    dtype = _normalize_dtype(dtype, 'truncated_normal')
    lo = 0.5 * (1. + _math_erf(-2. / np.sqrt(2.)))
    hi = 1. - lo
    u = random_uniform(shape, lo, hi, dtype='float64', seed=seed)
    z = np.sqrt(2.) * T.erfinv(2. * u - 1.)
    z = T.clip(z, -2., 2.)
    return T.cast(mean + stddev * z, dtype)


def _math_erf(v):
    import math
    return math.erf(v)


def dropout(x, level, noise_shape=None, seed=None):
    """Inverted dropout: zero each entry with probability ``level`` and scale the
    kept ones by ``1 / (1 - level)`` (always applied).

    Args:
        noise_shape: optional shape of the keep mask (1 = shared along that
            axis, None = ``x``'s size).

    Raises:
        ValueError: when ``level`` is outside [0, 1).

    Example:
        >>> y = K.dropout(x, 0.5, seed=1)
    """
    if _is_engine_var(level) or not 0. <= float(level) < 1.:
        raise ValueError('dropout: level must be a number in [0, 1), got %r' % (level,))
    x = _as_tensor(x)
    level = float(level)
    if level == 0.:
        return x
    if noise_shape is None:
        shape_ = x.shape
        bcast = []
    else:
        noise_shape = list(noise_shape)
        if len(noise_shape) != x.ndim:
            raise ValueError('dropout: noise_shape must have %d entries, got %r'
                             % (x.ndim, noise_shape))
        shape_ = [x.shape[i] if d is None else int(d) for i, d in enumerate(noise_shape)]
        bcast = [i for i, d in enumerate(noise_shape) if d == 1]
    u = random_uniform(shape_, 0., 1., dtype=x.dtype, seed=seed)
    keep = T.cast(T.ge(u, _fconst(level, u)), x.dtype)
    if bcast:
        keep = _broadcastable_axes(keep, bcast)
    return x * keep * _fconst(1. / (1. - level), x)


# ---------------------------------------------------------------------------
# CTC (blank = the last class)
# ---------------------------------------------------------------------------

def ctc_label_dense_to_sparse(labels, label_lengths):
    """Sparse (csr) matrix holding ``labels[i, j]`` for ``j < label_lengths[i]``.

    Args:
        labels: (batch, max_len) int; label_lengths: (batch,) int.

    Returns:
        engine csr sparse matrix (int32) of shape (batch, max_len); ``to_dense``
        gives the labels with zeros past each length.

    Example:
        >>> sp = K.ctc_label_dense_to_sparse(labels, lengths); K.is_sparse(sp)
        True
    """
    labels = T.cast(_as_tensor(labels, 'int32'), 'int32')
    lengths = T.cast(T.flatten(_as_tensor(label_lengths, 'int32')), 'int64')
    width = labels.shape[1]
    lengths = T.minimum(lengths, width)
    mask = T.lt(T.arange(width).dimshuffle('x', 0), lengths.dimshuffle(0, 'x'))
    rows, cols = T.nonzero(mask)
    data = labels[rows, cols]
    indptr = T.concatenate([T.zeros((1,), dtype='int64'), T.cumsum(lengths)])
    out = _sparse.CSR(data, T.cast(cols, 'int32'), T.cast(indptr, 'int32'),
                      T.cast(labels.shape, 'int32'))
    out._keras_shape = tuple(int_shape(labels))
    return out


_NEG = -1e30


def _lse2(a, b):
    m = T.maximum(a, b)
    return m + T.log(T.exp(a - m) + T.exp(b - m))


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """CTC loss per batch entry (log-space forward recursion in ``scan``).

    Args:
        y_true: (batch, max_label_len) int labels (class ids < C - 1).
        y_pred: (batch, T, C) softmax outputs (blank = class C - 1).
        input_length, label_length: (batch, 1) ints.

    Returns:
        (batch, 1) negative log likelihood; ``logits = log(y_pred + eps)``
        renormalised by log-softmax.

    Example:
        >>> loss = K.ctc_batch_cost(labels, y_pred, in_len, lab_len)
    """
    y_pred = _as_tensor(y_pred)
    labels = T.cast(_as_tensor(y_true, 'int32'), 'int64')
    in_len = T.cast(T.flatten(_as_tensor(input_length, 'int32')), 'int64')
    lab_len = T.cast(T.flatten(_as_tensor(label_length, 'int32')), 'int64')
    dt = y_pred.dtype
    logp = _log_softmax(T.log(y_pred + _fconst(common.epsilon(), y_pred)), 2)
    n_classes = y_pred.shape[2]
    blank = n_classes - 1
    batch = y_pred.shape[0]
    max_lab = labels.shape[1]
    labels = T.clip(labels, 0, blank)
    ext_len = 2 * max_lab + 1
    ext = T.alloc(T.cast(blank, 'int64'), batch, ext_len)
    ext = T.set_subtensor(ext[:, 1::2], labels)
    # skip transitions s-2 -> s: allowed when ext[s] is not blank and differs from ext[s-2]
    prev2 = T.concatenate([T.alloc(T.cast(-1, 'int64'), batch, 2), ext[:, :-2]], axis=1)
    skip = T.and_(T.neq(ext, blank), T.neq(ext, prev2))
    neg = _fconst(_NEG, logp)
    rows = T.arange(batch).dimshuffle(0, 'x')
    lp_seq = logp.dimshuffle(1, 0, 2)  # (T, B, C)
    s_idx = T.arange(ext_len).dimshuffle('x', 0)
    init = T.switch(T.lt(s_idx, 2), lp_seq[0][rows, ext], neg)
    init = T.switch(T.gt(in_len, 0).dimshuffle(0, 'x'), init,
                    T.switch(T.eq(s_idx, 0), T.zeros_like(init), neg))

    def _step(lp_t, t, alpha):
        e = lp_t[rows, ext]
        a1 = T.concatenate([T.alloc(neg, batch, 1), alpha[:, :-1]], axis=1)
        a2 = T.concatenate([T.alloc(neg, batch, 2), alpha[:, :-2]], axis=1)
        a2 = T.switch(skip, a2, neg)
        m = T.maximum(T.maximum(alpha, a1), a2)
        total = m + T.log(T.exp(alpha - m) + T.exp(a1 - m) + T.exp(a2 - m))
        new = T.maximum(total + e, neg)
        active = T.lt(t, in_len).dimshuffle(0, 'x')
        return T.switch(active, new, alpha)

    steps = T.arange(1, lp_seq.shape[0])
    alphas = _scan(_step, sequences=[lp_seq[1:], steps], outputs_info=[init])
    final = _last_or(alphas, init)
    b_idx = T.arange(batch)
    end = final[b_idx, 2 * lab_len]
    end_m1 = final[b_idx, T.maximum(2 * lab_len - 1, 0)]
    end_m1 = T.switch(T.gt(lab_len, 0), end_m1, neg)
    loglik = _lse2(end, end_m1)
    return T.cast(-loglik, dt).dimshuffle(0, 'x')


def _last_or(seq, init):
    """Last entry of a scan result, or ``init`` when the scan ran 0 steps."""
    padded = T.concatenate([init.dimshuffle(['x'] + list(range(init.ndim))), seq], axis=0)
    return padded[-1]


class _CTCBeamSearchOp(_Op):
    """Graph op: CTC prefix beam search over log-probabilities.

    Inputs: ``log_probs`` (batch, T, C) float (already log-softmax-normalised),
    ``lengths`` (batch,) int.  Outputs: ``top_paths`` int64 matrices
    (batch, max_len_i) padded with -1, then ``log_prob`` (batch, top_paths).
    Blank is class C - 1.  ``perform`` runs the search with numpy: this Op is
    the engine-level implementation (no engine offers one).
    """

    __props__ = ('beam_width', 'top_paths', 'merge_repeated')

    def __init__(self, beam_width, top_paths, merge_repeated):
        self.beam_width = int(beam_width)
        self.top_paths = int(top_paths)
        self.merge_repeated = bool(merge_repeated)
        super(_CTCBeamSearchOp, self).__init__()

    def make_node(self, log_probs, lengths):
        log_probs = T.as_tensor_variable(log_probs)
        lengths = T.as_tensor_variable(lengths)
        if ENGINE == 'pytensor':
            batch = log_probs.type.shape[0]
        else:
            batch = (_th_static_shape(log_probs) or (None,))[0]
        outs = [_tensor('int64', (batch, None)) for _ in range(self.top_paths)]
        outs.append(_tensor(log_probs.dtype, (batch, self.top_paths)))
        if ENGINE == 'theano':  # sizes Theano's types cannot hold
            for o in outs[:-1]:
                o._keras_shape = (batch, None)
            outs[-1]._keras_shape = (batch, self.top_paths)
        return _Apply(self, [log_probs, lengths], outs)

    def perform(self, node, inputs, output_storage, params=None):
        log_probs, lengths = inputs
        paths, scores = ctc_search.prefix_beam_search(
            log_probs, lengths, self.beam_width, self.top_paths, self.merge_repeated)
        for k in range(self.top_paths):
            output_storage[k][0] = ctc_search.pad_labellings(paths[k], np.int64)
        output_storage[self.top_paths][0] = scores.astype(log_probs.dtype)

    def grad(self, inputs, output_grads):
        from_grad = th.gradient.grad_undefined
        return [from_grad(self, 0, inputs[0]), from_grad(self, 1, inputs[1])]


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1,
               merge_repeated=False):
    """Decode CTC softmax outputs (blank = the last class).

    Args:
        y_pred: (batch, T, C) softmax outputs; input_length: (batch,) or
            (batch, 1) ints.
        greedy: best path (tensor ops) when True, else prefix beam search
            (a custom graph Op) with ``beam_width`` and ``top_paths``.
        merge_repeated: beam search only: merge repeated labels of the result.

    Returns:
        ``([decoded_1, ..., decoded_top_paths], log_prob)``: each decoded
        (batch, max_len) int64 padded with -1; greedy ``log_prob`` (batch, 1) =
        minus the sum of the best logit over ``t < input_length``; beam
        ``log_prob`` (batch, top_paths).

    Raises:
        ValueError: for ``top_paths`` < 1 or > ``beam_width``.

    Example:
        >>> decoded, log_prob = K.ctc_decode(y_pred, lengths)
    """
    y_pred = _as_tensor(y_pred)
    lengths = T.cast(T.flatten(_as_tensor(input_length, 'int32')), 'int64')
    logits = T.log(y_pred + _fconst(common.epsilon(), y_pred))
    if greedy:
        best = T.argmax(logits, axis=2)  # (B, T)
        best_val = T.max(logits, axis=2)
        n_t = y_pred.shape[1]
        t_idx = T.arange(n_t).dimshuffle('x', 0)
        valid = T.lt(t_idx, lengths.dimshuffle(0, 'x'))
        log_prob = -T.sum(T.switch(valid, best_val, T.zeros_like(best_val)), axis=1,
                          keepdims=True)
        blank = y_pred.shape[2] - 1
        prev = T.concatenate([T.alloc(T.cast(-1, 'int64'), best.shape[0], 1), best[:, :-1]],
                             axis=1)
        keep = T.and_(T.and_(T.neq(best, blank), T.neq(best, prev)), valid)
        keep_i = T.cast(keep, 'int64')
        pos = T.cumsum(keep_i, axis=1) - 1
        width = T.maximum(T.max(T.sum(keep_i, axis=1)), 0)
        col = T.switch(keep, pos, width)
        rows = T.arange(best.shape[0]).dimshuffle(0, 'x') + T.zeros_like(best)
        out = T.alloc(T.cast(-1, 'int64'), best.shape[0], width + 1)
        out = T.set_subtensor(out[rows.flatten(), col.flatten()],
                              T.switch(keep, best, -1).flatten())
        return [out[:, :width]], log_prob
    beam_width = int(beam_width)
    top_paths = int(top_paths)
    if top_paths < 1 or top_paths > beam_width:
        raise ValueError('ctc_decode: top_paths must be in [1, beam_width=%d], got %d'
                         % (beam_width, top_paths))
    log_probs = _log_softmax(logits, 2)
    outs = _CTCBeamSearchOp(beam_width, top_paths, merge_repeated)(log_probs, lengths)
    return list(outs[:top_paths]), outs[top_paths]


# Keras 1 names (seed 000), each warning DeprecationWarning.
api.install(globals(), ENGINE)
