"""PyTensor (Theano's maintained successor) as the engine of
:mod:`keras_backend.theano_backend`.

The adapter (:mod:`.core`) takes this module where the original ``theano`` package
does not import or does not work (:mod:`.theano_engine`). This
module never imports ``theano``.

What differs from Theano 1.0.5: PyTensor's tensor types hold static sizes
(``type.shape``), so :func:`static_shape` reads them and :func:`specify_shape`
records them; :func:`fix_broadcast` has nothing to fix; random draws use a
seeded shared numpy ``Generator`` each, whose next state ``function`` must
add as an update (:func:`rng_updates`); :func:`default_mode` is the C ``cvm``
linker with the ``fast_run`` rewrites (the numba default takes minutes on a
first CNN call); new variables record no creation stack
(``traceback__limit=0`` unless the user's flags set it: the rewrites' copies
of those stacks grow exponentially, issue 33) and :func:`compiling` makes a
failing rewrite raise.

It provides every name of :mod:`.engine_interface` (its ``__all__``), with the
contracts written there; the above is what differs.
"""
from __future__ import absolute_import, division, print_function

import inspect
import os
import traceback

import numpy as np

from . import blas as _blas
from . import engine_interface as _engine_interface

import pytensor as th
import pytensor.sparse as sparse
import pytensor.tensor as T
from pytensor.tensor import random as _random  # noqa: F401  (T.random)
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.gradient import disconnected_grad
from pytensor.graph.basic import Apply, Constant, Variable
from pytensor.graph.op import Op
from pytensor.printing import Print
from pytensor.tensor.random.op import RandomVariable as _RandomVariable
from pytensor.tensor.shape import Shape as _Shape

try:
    from pytensor.graph.traversal import ancestors
except ImportError:  # older PyTensor
    from pytensor.graph.basic import ancestors

__all__ = list(_engine_interface.NAMES)

ENGINE = 'pytensor'
ENGINE_VERSION = str(getattr(th, '__version__', 'unknown'))
FLAGS_ENV = 'PYTENSOR_FLAGS'
RC_FILES = ('~/.pytensorrc', '~/.pytensorrc.txt')
HAS_STATIC_SHAPES = True
SparseType = sparse.SparseTensorType


def _configure_blas():
    """Link the OpenBLAS of the numpy / scipy wheels where PyTensor has no BLAS
    (:func:`.blas.configure`); return the ldflags in force."""
    from pytensor.link.c.cmodule import try_blas_flag
    # a value from the user's flags or rc file was applied (is_default False) at import
    user_set = not th.config._config_var_dict['blas__ldflags'].is_default

    def _set(flags):
        th.config.blas__ldflags = flags
    return _blas.configure(ENGINE, (lambda: th.config.blas__ldflags, _set), user_set,
                           th.config.compiledir, th.config.cxx, try_blas_flag)


_configure_blas()


def _user_set(name):
    """True when the engine flag ``name`` came from the user's flags or rc file."""
    var = th.config._config_var_dict.get(name)
    return var is None or not var.is_default


def _drop_creation_traces():
    """Record no creation stack on new variables (``traceback__limit=0``)
    unless the user's flags or rc file set ``traceback__limit``.

    PyTensor's default (8 frames per variable) makes compiling blow up:
    its rewrites concatenate the traces of a replaced node's inputs and
    outputs onto the replacement (``copy_stack_trace``), and where the
    replacement is one of those inputs (``local_useless_switch`` on
    ``switch(c, a, a)`` -> ``a``) its trace triples, once per such switch
    sharing the merged constant ``a``: ``3**k`` entries. The slice arithmetic
    its subtensor and scan rewrites generate for Keras' masked bidirectional
    LSTMs gives 4 such switches per layer: 5 layers reach 3**20 entries (the
    24 GB of issue 33). With no creation trace there is nothing to copy.
    See docs/semantics.md (PyTensor: traces of rewritten graphs)."""
    if not _user_set('traceback__limit'):
        th.config.traceback__limit = 0


_drop_creation_traces()


def _is_var(x):
    return isinstance(x, Variable)


# ---------------------------------------------------------------------------
# Tensors and their static shapes
# ---------------------------------------------------------------------------

def input_tensor(dtype, shape, name=None):
    """A symbolic input of ``dtype`` with static ``shape`` (None = unknown)."""
    return T.tensor(name=name, dtype=dtype, shape=tuple(shape))


def shared(value, name=None):
    """A shared variable whose static shape is ``value``'s shape."""
    return th.shared(value, name=name, shape=np.shape(value))


def static_shape(x):
    """``x.type.shape`` as a tuple of ints and None."""
    return tuple(None if s is None else int(s) for s in x.type.shape)


def static_int(e):
    """The value of the integer scalar expression ``e`` when PyTensor's constant folding
    of static sizes gives it, else None."""
    try:
        return int(T.get_underlying_scalar_constant_value(e))
    except Exception:
        return None


# PyTensor's ops whose output type depends on the values of size inputs (Alloc, random
# draws) find the static sizes by rewriting a clone of the sizes' whole graph at build time.
# A size such as ``x.shape[0]`` has every ancestor of ``x`` in its graph, so a deep model's
# build became quadratic in its depth (a padded convolution or a dropout per layer: Keras'
# InceptionV3 took over 15 minutes). Here each size that is not a constant is given to the
# op as a fresh int64 scalar (the same static sizes result) and then replaced by the real
# size in the node (``clone_with_new_inputs``, types equal: the op is not asked again).

def _stand_ins(sizes):
    """``(given, real)``: ``sizes`` (ints, scalar tensors) with each size PyTensor's constant
    folding leaves unknown replaced by a fresh int64 scalar, and the map of those scalars to
    the real sizes."""
    given, real = [], {}
    for d in sizes:
        k = int(d) if isinstance(d, (int, np.integer)) else static_int(d)
        if k is not None:
            given.append(k)
        else:
            stand_in = T.lscalar()
            real[stand_in] = T.cast(d, 'int64')
            given.append(stand_in)
    return given, real


def _rewired(node, real):
    """``node`` with its inputs that ``real`` maps replaced by their real values."""
    inputs = [real.get(v, v) for v in node.inputs]
    return node.clone_with_new_inputs(inputs, strict=True)


def alloc(value, *sizes):
    """``T.alloc(value, *sizes)``, its static sizes from the constant ones (see above)."""
    given, real = _stand_ins(sizes)
    out = T.alloc(value, *given)
    if not real:
        return out
    node = out.owner
    if node is None or not all(v in node.inputs for v in real):
        return T.alloc(value, *sizes)
    return _rewired(node, real).outputs[0]


def specify_shape(x, shape):
    """``x`` behind a ``SpecifyShape`` when ``shape`` knows sizes its type lacks."""
    known = tuple(x.type.shape)
    if len(known) != len(shape):
        return x
    if all(s is None or k is not None for s, k in zip(shape, known)):
        return x
    return T.specify_shape(x, tuple(shape))


def broadcastable_axes(x, axes):
    """``x`` with ``axes`` of static size 1 (``specify_broadcastable``)."""
    return T.specify_broadcastable(x, *axes) if axes else x


def pattern_broadcast(x, pattern):
    """``x`` with the axes that ``pattern`` marks of static size 1 (others unchanged)."""
    return broadcastable_axes(x, [i for i, b in enumerate(pattern) if b])


def unbroadcast(x):
    """``x`` with its axes of static size 1 of unknown size (the other static sizes kept:
    ``theano_names_on_pytensor.unbroadcast``)."""
    from .theano_names_on_pytensor import unbroadcast as hide
    axes = [i for i, b in enumerate(x.broadcastable) if b]
    return hide(x, *axes) if axes else x


def fix_broadcast(outs):
    """``outs`` unchanged: static shapes already decide broadcasting."""
    return outs


def flatten(x):
    """``x.flatten()``."""
    return x.flatten()


# ---------------------------------------------------------------------------
# Ops
# ---------------------------------------------------------------------------

def batched_dot(a, b):
    """(B, n, k) x (B, k, m) -> (B, n, m) (``matmul``)."""
    return T.matmul(a, b)


#: PyTensor has no convolution op of its own: the adapter's im2col (slices and ``tensordot``)
conv2d = None
conv3d = None
conv_transpose = None
depthwise_conv2d = None

#: PyTensor has no pooling op (its ``signal.pool`` was removed): the adapter's slices
pool = None


absolute = T.abs
sign = T.sign
sigmoid = T.sigmoid
softplus = T.softplus


def softmax(x, axis):
    """``T.special.softmax``."""
    return T.special.softmax(x, axis=axis)


def log_softmax(x, axis):
    """``T.special.log_softmax``."""
    return T.special.log_softmax(x, axis=axis)


_SCAN_HAS_RETURN_UPDATES = 'return_updates' in inspect.signature(th.scan).parameters


def scan(fn, shape_of, **kwargs):
    """The outputs of ``th.scan`` of ``fn`` (``shape_of`` is not needed: the
    inner inputs have their outer tensors' static shapes)."""
    if _SCAN_HAS_RETURN_UPDATES:
        return th.scan(fn, return_updates=False, **kwargs)
    outputs, _updates = th.scan(fn, **kwargs)
    return outputs


# ---------------------------------------------------------------------------
# Compiling
# ---------------------------------------------------------------------------

_MODE_CACHE = []


def default_mode():
    """The C ``cvm`` linker with the ``fast_run`` rewrites (the numba default
    takes minutes on a first CNN call) except ``scan_merge``, unless the engine's
    mode or linker was set in code after import or there is no C compiler
    support (then None).

    ``scan_merge`` fuses the scans of the same length into one: on issue 33's
    five parallel masked BiLSTMs it made the 20 scans of the train function 2,
    whose inner graph has many outputs computed by the same node; compiling it,
    PyTensor's ``MergeFeature`` spent 28 of 47 s retrying to merge their
    ``DeepCopyOp`` nodes (it checks each pair against a list of failed pairs).
    Without it that model's train function compiles in 9 s instead of 47 (Theano
    1.0.5: 38 s), and one BiLSTM steps as fast as merged (its two directions in
    two scans). The scans' numerics are the same."""
    if str(th.config.mode) != 'Mode' or str(getattr(th.config, 'linker', 'auto')) != 'auto':
        return None  # set in code after import: leave it to the engine
    if _MODE_CACHE:
        return _MODE_CACHE[0]
    try:
        from pytensor.compile.mode import Mode
        mode = Mode(linker='cvm', optimizer='fast_run').excluding('scan_merge')
    except Exception:  # no C compiler support at all: engine default
        mode = None
    _MODE_CACHE.append(mode)
    return mode


def compiling():
    """``config.change_flags(on_opt_error='raise')`` unless the user chose
    ``on_opt_error`` (flags, rc file or code): a rewrite that fails during the
    compile (a ``MemoryError`` included) raises instead of being logged and
    skipped, which leaves a graph the rewrite did not finish and the time
    and memory it spent. Else no change."""
    if _user_set('on_opt_error') or str(th.config.on_opt_error) != 'warn':
        return th.config.change_flags()
    return th.config.change_flags(on_opt_error='raise')


def rewrite_failed(exc):
    """True when the traceback of ``exc`` passes through
    ``pytensor.graph.rewriting.basic``: a graph rewrite that failed while compiling,
    re-raised under ``on_opt_error='raise'``."""
    tail = os.path.join('pytensor', 'graph', 'rewriting', 'basic.py')
    return any(frame.filename.endswith(tail)
               for frame in traceback.extract_tb(exc.__traceback__))


# ---------------------------------------------------------------------------
# Random draws (one seeded shared ``Generator`` each; ``function`` adds the
# update generator <- its next state, see ``rng_updates``)
# ---------------------------------------------------------------------------

_RNG_NEXT = {}  # shared Generator -> its next state
_RNG_KW = {}
if 'return_next_rng' in inspect.signature(_RandomVariable.__call__).parameters:
    _RNG_KW['return_next_rng'] = True


def random_draw(kind, seed, size, dtype, **params):
    """A draw from a new shared ``Generator`` seeded with ``seed``: 'normal'
    (``loc``, ``scale``) or 'uniform' (``low``, ``high``)."""
    rng = th.shared(np.random.default_rng(seed))
    sizes = _size_list(size)
    given, real = _stand_ins(sizes) if sizes is not None else (None, {})
    if real:
        stand_in = _size_vector(given)
        node = _draw(kind, rng, stand_in, dtype, params)[1].owner
        if stand_in in node.inputs:
            real_size = _size_vector([g if isinstance(g, int) else real[g] for g in given])
            node = _rewired(node, {stand_in: real_size})
            next_rng, out = node.outputs
        else:   # the op took the size in another form: give it the real one
            next_rng, out = _draw(kind, rng, size, dtype, params)
    else:
        next_rng, out = _draw(kind, rng, size, dtype, params)
    _RNG_NEXT[rng] = next_rng
    return out


def _size_vector(sizes):
    """The int64 vector of ``sizes`` (ints, int64 scalars)."""
    return T.stack([T.constant(s, dtype='int64') if isinstance(s, int) else s for s in sizes])


def _draw(kind, rng, size, dtype, params):
    """``(next_rng, draw)`` of PyTensor's normal / uniform ``RandomVariable``."""
    if kind == 'normal':
        out = T.random.normal(params['loc'], params['scale'], size=size, rng=rng,
                              dtype=dtype, **_RNG_KW)
    else:
        out = T.random.uniform(params['low'], params['high'], size=size, rng=rng,
                               dtype=dtype, **_RNG_KW)
    if isinstance(out, (list, tuple)):
        return out[0], out[1]
    return out.owner.outputs[0], out


def _size_list(size):
    """A draw's ``size`` as a list of ints / scalar tensors, or None (no size, or a size
    vector of unknown length)."""
    if size is None:
        return None
    if _is_var(size):
        n = size.type.shape[0] if size.ndim == 1 else None
        if n is None:
            return None
        known = _shape_read(size)
        return [size[i] if known is None or known[i] is None else known[i] for i in range(n)]
    return list(size)


def _shape_read(v):
    """The static shape of ``x`` when ``v`` is ``x.shape`` (cast or not; ``K.shape``), else
    None."""
    while v.owner is not None and isinstance(v.owner.op, T.elemwise.Elemwise) and \
            len(v.owner.inputs) == 1 and 'Cast' in type(v.owner.op.scalar_op).__name__:
        v = v.owner.inputs[0]
    if v.owner is not None and isinstance(v.owner.op, _Shape):
        return static_shape(v.owner.inputs[0])
    return None


def rng_mark():
    """The set of generators made so far."""
    return set(_RNG_NEXT)


def rng_updates_since(mark):
    """(generator, its next state) of the draws made since ``mark``."""
    return [(rng, _RNG_NEXT[rng]) for rng in set(_RNG_NEXT) - mark]


def rng_updates(roots, updated):
    """(generator, its next state) of every generator the graph of ``roots``
    uses, except those in ``updated``."""
    if not _RNG_NEXT:
        return []
    roots = [r for r in roots if _is_var(r)]
    if not roots:
        return []
    done = set(id(v) for v in updated)
    out = []
    for a in ancestors(roots):
        if id(a) not in done and a in _RNG_NEXT:
            out.append((a, _RNG_NEXT[a]))
            done.add(id(a))
    return out


def freeze_rng(rng):
    """Stop advancing generator ``rng`` (``function`` adds no update for it)."""
    _RNG_NEXT.pop(rng, None)


def forget_draws():
    """Nothing: the graphs built before ``clear_session`` keep their generators."""


def assert_true(value, condition, message):
    """``value``, behind a run-time check that the scalar ``condition`` holds (the
    engine's ``Assert``: the function raises ``message`` when it does not)."""
    from pytensor.raise_op import Assert
    return Assert(message)(value, condition)


def provide_theano_names():
    """Keras 2.3.1 loads the adapter: serve the ``theano`` module names Keras 2 libraries import
    (``from theano import tensor as T``) from PyTensor, unless a real ``theano`` imports
    (:mod:`keras_backend.theano_backend.theano_names_on_pytensor`)."""
    from . import theano_names_on_pytensor
    return theano_names_on_pytensor.install()


def theano_1_variable_truth():
    """Keras 2.0-2.2 loads the adapter: PyTensor refuses a tensor's truth value (``TypeError``),
    Theano 1.0.5 made every variable but a comparison's result true, and Keras 2.0-2.1's
    ``Conv2DTranspose``, ``SeparableConv2D`` and ``DepthwiseConv2D`` ask ``if self.bias:``. A
    shared variable (what ``variable`` makes: weights, optimizer slots) is made true for the
    process; a computed tensor's truth is still refused."""
    from pytensor.tensor.sharedvar import TensorSharedVariable
    TensorSharedVariable.__bool__ = lambda self: True
