"""The API functions on TensorFlow, in ``api.SECTIONS`` order: engine-level and unchecked.

Each builds TensorFlow ops; ``@graph_aware`` (``@graph_always``) from ``core`` places it in
the adapter's symbolic graph. Internal calls (``int_shape(x)``) reach these functions
directly; the package's ``__init__`` puts the shared checks in front of them.
"""
import contextlib
import functools
import sys

import numpy as np

from .. import common, generic, shape_rules
from ..common import *  # noqa: F401,F403  (the shared config API)
from . import core
from .core import ENGINE, ENGINE_VERSION  # noqa: F401  (what api.install and the CLI read)
from .core import (tf, graph_aware, graph_always, _EagerTensor, _Function, _reset_state,
                   _LOOP_READS, _Session, _State, _Update, _constant_like, _engine_int_shape,
                   _eval_eagerly, _graph, _has_variable, _in_our_graph, _is_symbolic,
                   _keras_meta, _normalize_dtype, _placeholders_needed, _set_shape,
                   _to_tensor)


py_all = all
py_any = any
py_sum = sum
py_slice = slice
py_round = round
py_builtin_max = max

_K = sys.modules[__name__]


# ---------------------------------------------------------------------------
# Helpers shared by the sections
# ---------------------------------------------------------------------------

def _dyn_dims(x):
    """Per-axis sizes: python ints where static, scalar tensors otherwise."""
    static = x.shape.as_list()
    if py_all(d is not None for d in static):
        return static
    dyn = tf.shape(x)
    return [d if d is not None else dyn[i] for i, d in enumerate(static)]


def _is_tf_tensor(v):
    return isinstance(v, (tf.Tensor, tf.Variable))


def _shape_arg(dims):
    """A shape, size list or count (``shape_rules.sizes``: ints, numpy ints, scalar
    tensors, mixed) as ``tf`` ops take it: a list of ints, else an int32 tensor."""
    dims = shape_rules.sizes(dims, _is_tf_tensor)
    if not isinstance(dims, list):
        return tf.cast(dims, 'int32')
    if shape_rules.all_static(dims):
        return dims
    return tf.stack([tf.cast(d, 'int32') for d in dims])


def _int_tuple(shape, name):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return (int(shape),)
    try:
        out = tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise ValueError('%s: expected a tuple of ints, got %r' % (name, shape))
    if py_any(s < 0 for s in out):
        raise ValueError('%s: expected non-negative sizes, got %r' % (name, shape))
    return out


def _axis_arg(axis, ndim):
    """``axis`` (None, an int or a list of ints) with negative axes counted
    from ``ndim``; None stays None (all axes)."""
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return [shape_rules.normalize_axis(int(a), ndim) for a in axis]
    return shape_rules.normalize_axis(int(axis), ndim)


def _to_channels_last(x, data_format):
    """Move channels last when ``data_format`` is channels_first."""
    if data_format == 'channels_first':
        return tf.transpose(x, shape_rules.to_channels_last_perm(x.shape.rank))
    return x


def _from_channels_last(x, data_format):
    """Move channels back first when ``data_format`` is channels_first."""
    if data_format == 'channels_first':
        return tf.transpose(x, shape_rules.to_channels_first_perm(x.shape.rank))
    return x


def _check_kernel(kernel, rank, name='kernel'):
    kernel = _to_tensor(kernel)
    if kernel.shape.rank is not None and kernel.shape.rank != rank:
        raise ValueError('%s: expected a rank-%d kernel, got shape %s'
                         % (name, rank, tuple(kernel.shape.as_list())))
    return kernel


def _stateless_seed(seed):
    """A stateless-op seed pair for an int ``seed``: same seed, same values."""
    seed = int(seed)
    return tf.constant([seed & 0x7FFFFFFF, (seed >> 31) & 0x7FFFFFFF], dtype='int64')


def _op_seed(seed, name='seed'):
    """The op seed to use: ``seed``, or (None) one drawn from numpy's global
    generator, as Keras 2.3.1 does, so ``np.random.seed`` makes seedless
    random ops (initialisers, dropout) reproducible."""
    if seed is None:
        return int(np.random.randint(10e6))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError('%s: expected an int or None, got %r' % (name, seed))
    return int(seed)


# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------

def backend():
    return 'tensorflow'


# ---------------------------------------------------------------------------
# Session and learning phase
# ---------------------------------------------------------------------------

def clear_session():
    """Replaces the adapter's one symbolic graph (a ``FuncGraph``): placeholders and
    compiled functions made before become unusable; variables are eager and keep working."""
    common._reset_session_state()
    _reset_state()

def get_session():
    """TensorFlow 2 has no default session: returns the one given to ``set_session``,
    else a session-like object whose ``run(fetches, feed_dict=None)`` evaluates tensors of
    the adapter's graph."""
    if _State.session is None:
        _State.session = _Session()
    return _State.session


def set_session(session):
    """Takes a ``tf.compat.v1.Session`` or any object with a ``run(fetches,
    feed_dict=None)`` method; variables here are eager, so a graph-mode
    ``tf.compat.v1.Session`` cannot read them."""
    if not callable(getattr(session, 'run', None)):
        raise ValueError('session: expected an object with a run() method (such as '
                         'tf.compat.v1.Session), got %r' % (session,))
    _State.session = session


def learning_phase():
    """The symbolic phase is a bool ``tf.compat.v1.placeholder_with_default``
    (default False: test) named ``keras_learning_phase``, the same tensor until
    ``clear_session()``."""
    fixed = common._fixed_learning_phase()
    if fixed is not None:
        return fixed
    if _State.learning_phase_tensor is None:
        g = _graph()
        # Top-level name whatever name scope asks for it first.
        with g.as_default(), g.name_scope(None), tf.control_dependencies(None):
            _State.learning_phase_tensor = tf.compat.v1.placeholder_with_default(
                False, shape=(), name='keras_learning_phase')
    return _State.learning_phase_tensor


@contextlib.contextmanager
def name_scope(name):
    """``tf.name_scope``; entered from eager code it also makes the adapter's symbolic graph
    the default graph for its body, so that TensorFlow ops called directly on symbolic
    tensors there (``tf.nn.relu(x)`` in a Keras layer's ``call``, which Keras 2.3.1 runs
    inside ``K.name_scope(layer.name)``; its TensorFlow-only branches such as
    ``tf.scalar_mul`` in ``clipnorm``) are built in that graph, as in Keras 2's graph mode."""
    if not isinstance(name, str):
        raise ValueError('name: expected a str, got %r' % (name,))
    if tf.executing_eagerly():
        # The scope given back is the symbolic graph's, made unique there as graph
        # mode did ('loss', then 'loss_1'): Keras names ops with it
        # (``K.size(x, name=scope)``), and an exact name may be used once per graph.
        graph = _graph()
        with tf.name_scope(name), graph.as_default(), graph.name_scope(name) as scope:
            yield scope
    else:
        with tf.name_scope(name) as scope:
            yield scope


# ---------------------------------------------------------------------------
# Tensors and variables
# ---------------------------------------------------------------------------

def is_sparse(tensor):
    """True for a ``tf.SparseTensor``."""
    return isinstance(tensor, tf.SparseTensor)


@graph_aware
def to_dense(tensor):
    """``tf.sparse.to_dense``."""
    if isinstance(tensor, tf.SparseTensor):
        return tf.sparse.to_dense(tensor)
    return tensor


def variable(value, dtype=None, name=None, constraint=None):
    """Always an eager ``tf.Variable`` (also while a graph is being built), with
    ``constraint`` stored as its ``constraint``; a graph tensor that needs no placeholder is
    evaluated and its value copied."""
    dtype = _normalize_dtype(dtype, 'variable: dtype')
    if hasattr(value, 'tocoo'):
        # a scipy sparse matrix: a ``tf.SparseTensor`` of its values, as Keras 2's
        # TensorFlow backend made it
        coo = value.tocoo()
        with tf.init_scope():
            sparse = tf.sparse.reorder(tf.SparseTensor(
                np.stack([coo.row, coo.col], 1).astype('int64'), tf.constant(coo.data, dtype),
                coo.shape))
        return _keras_meta(sparse, False)
    if _is_symbolic(value):
        if _placeholders_needed([value.indices if isinstance(value, tf.SparseTensor) else
                                 getattr(value, 'values', value)], []):
            raise ValueError('variable: value must be a numpy array, list, scalar, eager '
                             'tensor or a graph tensor that needs no placeholder; got %r '
                             '(feed it through K.function and pass the result)' % (value,))
        value = eval(value)
    if constraint is not None and not callable(constraint):
        raise ValueError('constraint: expected a callable or None, got %r' % (constraint,))
    with tf.init_scope():
        if isinstance(value, tf.SparseTensor):
            value = tf.sparse.to_dense(value)
        if isinstance(value, (tf.Tensor, tf.Variable)):
            init = tf.cast(value, dtype)
        else:
            try:
                init = tf.convert_to_tensor(np.asarray(value, dtype=dtype))
            except (TypeError, ValueError) as e:
                raise ValueError('variable: cannot convert value to %s (%s)' % (dtype, e))
        try:
            v = tf.Variable(init, dtype=dtype, name=name, constraint=constraint)
        except ValueError:
            v = tf.Variable(init, dtype=dtype, constraint=constraint)
    v._keras_backend_variable = True
    return _keras_meta(v, False)


def is_variable(x):
    """True for a ``tf.Variable``."""
    return isinstance(x, tf.Variable)


@graph_aware
def constant(value, dtype=None, shape=None, name=None):
    """``tf.constant``; a tensor ``value`` is cast with ``tf.cast`` (and reshaped to
    ``shape``)."""
    dtype = _normalize_dtype(dtype, 'constant: dtype')
    if shape is not None:
        shape = tuple(int(s) for s in shape)
    if isinstance(value, (tf.Tensor, tf.Variable)):
        out = tf.cast(value, dtype)
        return _keras_meta(tf.reshape(out, shape) if shape is not None else tf.identity(out))
    try:
        return _keras_meta(tf.constant(value, dtype=dtype, shape=shape, name=name))
    except (TypeError, ValueError) as e:
        raise ValueError('constant: cannot build a %s constant of shape %r from %r (%s)'
                         % (dtype, shape, value, e))


def is_keras_tensor(x):
    if not is_tensor(x):
        raise ValueError('is_keras_tensor: expected a symbolic tensor, got %r of type %s'
                         % (x, type(x).__name__))
    return hasattr(x, '_keras_history')


is_tensor = core.is_tensor


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    """``tf.compat.v1.placeholder`` (``tf.compat.v1.sparse_placeholder`` when
    ``sparse``) in the adapter's one symbolic graph; ``dtype='string'`` is allowed."""
    dtype = _normalize_dtype(dtype, 'placeholder: dtype')
    if shape is None and ndim is not None:
        if isinstance(ndim, bool) or not isinstance(ndim, (int, np.integer)) or ndim < 0:
            raise ValueError('ndim: expected a non-negative int, got %r' % (ndim,))
        shape = (None,) * int(ndim)
    if shape is not None:
        try:
            shape = tuple(None if d is None else int(d) for d in shape)
        except (TypeError, ValueError):
            raise ValueError('shape: expected a tuple of ints or None, got %r' % (shape,))
    with _graph().as_default():
        if sparse:
            x = tf.compat.v1.sparse_placeholder(dtype, shape=shape, name=name)
        else:
            x = tf.compat.v1.placeholder(dtype, shape=shape, name=name)
    x._keras_shape = shape
    x._uses_learning_phase = False
    return x


def is_placeholder(x):
    """True for ``Placeholder`` and ``PlaceholderWithDefault`` ops (the learning
    phase is one) and for sparse placeholders."""
    if isinstance(x, tf.SparseTensor):
        x = x.indices
    if not isinstance(x, tf.Tensor) or isinstance(x, _EagerTensor):
        return False
    try:
        return x.op.type in ('Placeholder', 'PlaceholderWithDefault')
    except AttributeError:
        return False


@graph_aware
def shape(x):
    """``tf.shape`` (int32); a sparse tensor gives its ``dense_shape``."""
    if isinstance(x, tf.SparseTensor):
        return tf.cast(x.dense_shape, 'int32')
    return tf.shape(_to_tensor(x), out_type='int32')


int_shape = core.int_shape


def ndim(x):
    s = int_shape(x)
    return None if s is None else len(s)


@graph_aware
def size(x, name=None):
    """``tf.size`` (int32); a sparse tensor gives the product of its ``dense_shape``."""
    if isinstance(x, tf.SparseTensor):
        return tf.cast(tf.reduce_prod(x.dense_shape), 'int32')
    return tf.size(_to_tensor(x), name=name, out_type=tf.int32)


dtype = core.dtype


def eval(x):
    """A graph tensor is computed by a ``function`` compiled once per tensor (so it reads
    the variables' current values); an update is run once and the variable's new value
    returned; sparse tensors come back dense. Runs eagerly also where the symbolic graph is
    the default one (inside ``name_scope``: Keras reads and sets weights there)."""
    with tf.init_scope():
        return _eval_eagerly(x)


@graph_aware
def zeros(shape, dtype=None, name=None):
    """An eager ``tf.Variable`` (``tf.zeros``)."""
    dtype = _normalize_dtype(dtype, 'zeros: dtype')
    with tf.init_scope():
        return variable(tf.zeros(_int_tuple(shape, 'shape'), dtype=dtype), dtype, name)


@graph_aware
def ones(shape, dtype=None, name=None):
    """An eager ``tf.Variable`` (``tf.ones``)."""
    dtype = _normalize_dtype(dtype, 'ones: dtype')
    with tf.init_scope():
        return variable(tf.ones(_int_tuple(shape, 'shape'), dtype=dtype), dtype, name)


def eye(size, dtype=None, name=None):
    """An eager ``tf.Variable`` (``tf.eye``)."""
    dtype = _normalize_dtype(dtype, 'eye: dtype')
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        rows, cols = int(size), int(size)
    else:
        rows, cols = shape_rules.normalize_tuple(size, 2, 'size')
    with tf.init_scope():
        return variable(tf.eye(rows, cols, dtype=dtype), dtype, name)


@graph_aware
def zeros_like(x, dtype=None, name=None):
    """``tf.zeros_like``."""
    x = _to_tensor(x)
    dtype = None if dtype is None else _normalize_dtype(dtype, 'zeros_like: dtype')
    return tf.zeros_like(x, dtype=dtype, name=name)


@graph_aware
def ones_like(x, dtype=None, name=None):
    """``tf.ones_like``."""
    x = _to_tensor(x)
    dtype = None if dtype is None else _normalize_dtype(dtype, 'ones_like: dtype')
    return tf.ones_like(x, dtype=dtype, name=name)


@graph_aware
def identity(x, name=None):
    """``tf.identity`` (``tf.sparse.map_values`` of it for a sparse tensor)."""
    if isinstance(x, tf.SparseTensor):
        return tf.sparse.map_values(tf.identity, x)
    return tf.identity(x, name=name)


def _random_variable(draw, what, shape, a, b, dtype, name, seed):
    """A variable holding ``draw(shape, a, b, dtype, seed)``, drawn eagerly (a stateless op:
    the same ``seed`` gives the same values from process start)."""
    dtype = _normalize_dtype(dtype, '%s: dtype' % what)
    with tf.init_scope():
        return variable(draw(_int_tuple(shape, 'shape'), a, b, dtype=dtype, seed=seed), dtype, name)


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    """Drawn eagerly by ``random_uniform``."""
    return _random_variable(random_uniform, 'random_uniform_variable', shape, low, high, dtype,
                            name, seed)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    """Drawn eagerly by ``random_normal``."""
    return _random_variable(random_normal, 'random_normal_variable', shape, mean, scale, dtype,
                            name, seed)


def count_params(x):
    s = int_shape(x)
    if s is None or py_any(d is None for d in s):
        raise ValueError('count_params: the static shape of x must be fully known, got %r'
                         % (s,))
    return int(np.prod(s, dtype=np.int64))


@graph_aware
def cast(x, dtype):
    """``tf.cast``; a sparse tensor stays sparse."""
    dtype = _normalize_dtype(dtype, 'cast: dtype')
    if isinstance(x, tf.SparseTensor):
        return tf.cast(x, dtype)
    return tf.cast(_to_tensor(x), dtype)


# ---------------------------------------------------------------------------
# Variable updates
# ---------------------------------------------------------------------------

def _make_update(x, value, mode, name):
    if not isinstance(x, tf.Variable):
        raise ValueError('%s: x must be a variable, got %r' % (name, x))
    if isinstance(value, tf.SparseTensor):
        raise ValueError('%s: the new value must be dense, got a sparse tensor' % name)
    if not (_is_symbolic(value) or isinstance(value, (tf.Tensor, tf.Variable)) or
            _has_variable(value)):
        try:
            with tf.init_scope():
                value = _to_tensor(value, x.dtype)
        except (TypeError, ValueError) as e:
            raise ValueError('%s: cannot convert the new value to %s (%s)'
                             % (name, x.dtype.name, e))
    vshape = tf.TensorShape(getattr(value, 'shape', None))
    if vshape.rank and tuple(vshape.as_list()) != tuple(x.shape.as_list()):
        try:
            tf.broadcast_static_shape(vshape, x.shape)
        except ValueError:
            raise ValueError('%s: the new value has shape %s, the variable %s'
                             % (name, tuple(vshape.as_list()), tuple(x.shape.as_list())))
    return _Update(x, value, mode)


def update(x, new_x):
    """Builds a ``tf.Variable.assign`` that runs only when a ``function`` lists it in
    ``updates`` (after the outputs) or under ``eval`` (once); ``new_x`` is read again at every
    run. ``control_dependencies`` accepts it too."""
    return _make_update(x, new_x, 'assign', 'update')


def update_add(x, increment):
    """``tf.Variable.assign_add``, run as ``update``'s assignment is."""
    return _make_update(x, increment, 'add', 'update_add')


def update_sub(x, decrement):
    """``tf.Variable.assign_sub``, run as ``update``'s assignment is."""
    return _make_update(x, decrement, 'sub', 'update_sub')


@graph_aware
def _moving_average_value(x, value, momentum):
    value = _to_tensor(value, x.dtype)
    momentum = _constant_like(value, momentum)
    return x * momentum + value * (1 - momentum)


def moving_average_update(x, value, momentum):
    """An ``update`` (``tf.Variable.assign``) whose value reads ``x``
    when it runs."""
    if not isinstance(x, tf.Variable):
        raise ValueError('moving_average_update: x must be a variable, got %r' % (x,))
    return update(x, _moving_average_value(x, value, momentum))


# ---------------------------------------------------------------------------
# Math
# ---------------------------------------------------------------------------

@graph_aware
def dot(x, y):
    """``tf.linalg.matmul`` for two 2-D operands, ``tf.tensordot`` otherwise; a sparse 2-D
    ``x`` uses ``tf.sparse.sparse_dense_matmul``."""
    if isinstance(x, tf.SparseTensor):
        y = _to_tensor(y)
        return tf.sparse.sparse_dense_matmul(x, y)
    x = _to_tensor(x)
    y = _to_tensor(y, x.dtype) if not isinstance(y, (tf.Tensor, tf.Variable)) else _to_tensor(y)
    xn, yn = x.shape.rank, y.shape.rank
    if xn is None or yn is None:
        raise ValueError('dot: x and y need a known rank')
    if xn == 0 or yn == 0:
        return x * y
    if yn == 1:
        return tf.tensordot(x, y, axes=[[xn - 1], [0]])
    if xn == 2 and yn == 2:
        return tf.matmul(x, y)
    return tf.tensordot(x, y, axes=[[xn - 1], [yn - 2]])


@graph_aware
def batch_dot(x, y, axes=None):
    """One batched ``tf.linalg.matmul`` on the operands transposed and reshaped to
    3-D."""
    x = _to_tensor(x)
    y = _to_tensor(y)
    xn, yn = x.shape.rank, y.shape.rank
    if xn is None or yn is None:
        raise ValueError('batch_dot: x and y need a known rank')
    ax, ay = shape_rules.batch_dot_axes(xn, yn, axes)
    xs, ys = x.shape.as_list(), y.shape.as_list()
    if xs[ax] is not None and ys[ay] is not None and xs[ax] != ys[ay]:
        raise ValueError('batch_dot: cannot contract axis %d of x (size %d) with axis %d of y '
                         '(size %d)' % (ax, xs[ax], ay, ys[ay]))
    out_static = shape_rules.batch_dot_output_shape(xs, ys, ax, ay)
    xd, yd = _dyn_dims(x), _dyn_dims(y)
    x_free = [i for i in range(1, xn) if i != ax]
    y_free = [i for i in range(1, yn) if i != ay]
    x_perm = [0] + x_free + [ax]
    y_perm = [0, ay] + y_free
    xt = tf.transpose(x, x_perm) if x_perm != list(range(xn)) else x
    yt = tf.transpose(y, y_perm) if y_perm != list(range(yn)) else y
    k = xd[ax]
    x3 = xt if xn == 3 else tf.reshape(xt, _shape_arg([xd[0], -1, k]))
    y3 = yt if yn == 3 else tf.reshape(yt, _shape_arg([yd[0], k, -1]))
    r = tf.matmul(x3, y3)
    out_dyn = [xd[0]] + [xd[i] for i in x_free] + [yd[i] for i in y_free]
    if len(out_dyn) == 1:
        out_dyn = out_dyn + [1]
    if len(x_free) != 1 or len(y_free) != 1:
        r = tf.reshape(r, _shape_arg(out_dyn))
    return _set_shape(r, out_static)


@graph_aware
def transpose(x):
    """``tf.transpose`` (``tf.sparse.transpose`` for a sparse tensor)."""
    if isinstance(x, tf.SparseTensor):
        return tf.sparse.transpose(x)
    return tf.transpose(_to_tensor(x))


@graph_aware
def gather(reference, indices):
    """``tf.gather`` on axis 0; float indices are cast to int32."""
    indices = _to_tensor(indices)
    if not indices.dtype.is_integer:
        indices = tf.cast(indices, 'int32')
    return _keras_meta(tf.gather(reference, indices))


@graph_aware
def max(x, axis=None, keepdims=False):
    """``tf.reduce_max``."""
    x = _to_tensor(x)
    return tf.reduce_max(x, axis=_axis_arg(axis, x.shape.rank), keepdims=keepdims)


@graph_aware
def min(x, axis=None, keepdims=False):
    """``tf.reduce_min``."""
    x = _to_tensor(x)
    return tf.reduce_min(x, axis=_axis_arg(axis, x.shape.rank), keepdims=keepdims)


@graph_aware
def sum(x, axis=None, keepdims=False):
    """``tf.reduce_sum``; bool inputs are summed as int64."""
    x = _to_tensor(x)
    if x.dtype == tf.bool:
        x = tf.cast(x, 'int64')
    return tf.reduce_sum(x, axis=_axis_arg(axis, x.shape.rank), keepdims=keepdims)


@graph_aware
def prod(x, axis=None, keepdims=False):
    """``tf.reduce_prod``."""
    x = _to_tensor(x)
    return tf.reduce_prod(x, axis=_axis_arg(axis, x.shape.rank), keepdims=keepdims)


@graph_aware
def cumsum(x, axis=0):
    """``tf.cumsum``."""
    x = _to_tensor(x)
    return tf.cumsum(x, axis=_axis_arg(axis, x.shape.rank))


@graph_aware
def cumprod(x, axis=0):
    """``tf.math.cumprod``."""
    x = _to_tensor(x)
    return tf.math.cumprod(x, axis=_axis_arg(axis, x.shape.rank))


def _to_float(x):
    if not x.dtype.is_floating:
        return tf.cast(x, floatx())
    return x


@graph_aware
def var(x, axis=None, keepdims=False):
    """``tf.math.reduce_variance``; ints and bools are cast to ``floatx()`` first."""
    x = _to_float(_to_tensor(x))
    return tf.math.reduce_variance(x, axis=_axis_arg(axis, x.shape.rank), keepdims=keepdims)


@graph_aware
def std(x, axis=None, keepdims=False):
    """``tf.math.reduce_std``; ints and bools are cast to ``floatx()`` first."""
    x = _to_float(_to_tensor(x))
    return tf.math.reduce_std(x, axis=_axis_arg(axis, x.shape.rank), keepdims=keepdims)


@graph_aware
def mean(x, axis=None, keepdims=False):
    """``tf.reduce_mean``; ints and bools are cast to ``floatx()`` first."""
    x = _to_float(_to_tensor(x))
    return tf.reduce_mean(x, axis=_axis_arg(axis, x.shape.rank), keepdims=keepdims)


@graph_aware
def any(x, axis=None, keepdims=False):
    """``tf.reduce_any`` of ``x != 0``."""
    x = _to_tensor(x)
    if x.dtype != tf.bool:
        x = tf.not_equal(x, tf.zeros((), x.dtype))
    return tf.reduce_any(x, axis=_axis_arg(axis, x.shape.rank), keepdims=keepdims)


@graph_aware
def all(x, axis=None, keepdims=False):
    """``tf.reduce_all`` of ``x != 0``."""
    x = _to_tensor(x)
    if x.dtype != tf.bool:
        x = tf.not_equal(x, tf.zeros((), x.dtype))
    return tf.reduce_all(x, axis=_axis_arg(axis, x.shape.rank), keepdims=keepdims)


@graph_aware
def argmax(x, axis=-1):
    """``tf.argmax``; the indices are int64."""
    x = _to_tensor(x)
    return tf.argmax(x, axis=_axis_arg(axis, x.shape.rank))


@graph_aware
def argmin(x, axis=-1):
    """``tf.argmin``; the indices are int64."""
    x = _to_tensor(x)
    return tf.argmin(x, axis=_axis_arg(axis, x.shape.rank))


@graph_aware
def square(x):
    """``tf.square``."""
    return tf.square(_to_tensor(x))


@graph_aware
def abs(x):
    """``tf.abs``."""
    return tf.abs(_to_tensor(x))


@graph_aware
def sqrt(x):
    """``tf.sqrt`` of ``tf.maximum(x, 0)``: negative entries give 0."""
    x = _to_tensor(x)
    return tf.sqrt(tf.maximum(x, tf.zeros((), x.dtype)))


@graph_aware
def exp(x):
    """``tf.exp``."""
    return tf.exp(_to_tensor(x))


@graph_aware
def log(x):
    """``tf.math.log``."""
    return tf.math.log(_to_tensor(x))


@graph_aware
def logsumexp(x, axis=None, keepdims=False):
    """``tf.reduce_logsumexp``."""
    x = _to_tensor(x)
    return tf.reduce_logsumexp(x, axis=_axis_arg(axis, x.shape.rank), keepdims=keepdims)


@graph_aware
def round(x):
    """``tf.round`` (ties to even)."""
    return tf.round(_to_tensor(x))


@graph_aware
def sign(x):
    """``tf.sign``."""
    return tf.sign(_to_tensor(x))


@graph_aware
def pow(x, a):
    """``tf.pow``; ``a`` is cast to ``x``'s dtype."""
    x = _to_tensor(x)
    return tf.pow(x, _constant_like(x, a))


@graph_aware
def clip(x, min_value, max_value):
    """``tf.clip_by_value``; a None bound becomes -inf / +inf."""
    x = _to_tensor(x)
    min_value, max_value = shape_rules.clip_bounds(min_value, max_value)
    lo = _constant_like(x, min_value)
    hi = _constant_like(x, max_value)
    hi = tf.maximum(hi, lo)
    return tf.clip_by_value(x, lo, hi)


def _coerce_pair(x, y):
    """``x`` and ``y`` as tensors; a non-tensor operand (number, list, numpy
    array) takes the dtype of the tensor one."""
    if not isinstance(x, (tf.Tensor, tf.Variable)) and isinstance(y, (tf.Tensor, tf.Variable)):
        y = _to_tensor(y)
        return _to_tensor(x, y.dtype), y
    x = _to_tensor(x)
    y = _to_tensor(y, x.dtype) if not isinstance(y, (tf.Tensor, tf.Variable)) else _to_tensor(y)
    return x, y


@graph_aware
def equal(x, y):
    """``tf.equal``; a non-tensor operand takes the tensor operand's dtype."""
    x, y = _coerce_pair(x, y)
    return tf.equal(x, y)


@graph_aware
def not_equal(x, y):
    """``tf.not_equal``; a non-tensor operand takes the tensor operand's dtype."""
    x, y = _coerce_pair(x, y)
    return tf.not_equal(x, y)


@graph_aware
def greater(x, y):
    """``tf.greater``; a non-tensor operand takes the tensor operand's dtype."""
    x, y = _coerce_pair(x, y)
    return tf.greater(x, y)


@graph_aware
def greater_equal(x, y):
    """``tf.greater_equal``; a non-tensor operand takes the tensor operand's dtype."""
    x, y = _coerce_pair(x, y)
    return tf.greater_equal(x, y)


@graph_aware
def less(x, y):
    """``tf.less``; a non-tensor operand takes the tensor operand's dtype."""
    x, y = _coerce_pair(x, y)
    return tf.less(x, y)


@graph_aware
def less_equal(x, y):
    """``tf.less_equal``; a non-tensor operand takes the tensor operand's dtype."""
    x, y = _coerce_pair(x, y)
    return tf.less_equal(x, y)


@graph_aware
def maximum(x, y):
    """``tf.maximum``; a non-tensor operand takes the tensor operand's dtype."""
    x, y = _coerce_pair(x, y)
    return tf.maximum(x, y)


@graph_aware
def minimum(x, y):
    """``tf.minimum``; a non-tensor operand takes the tensor operand's dtype."""
    x, y = _coerce_pair(x, y)
    return tf.minimum(x, y)


@graph_aware
def sin(x):
    """``tf.sin``."""
    return tf.sin(_to_tensor(x))


@graph_aware
def cos(x):
    """``tf.cos``."""
    return tf.cos(_to_tensor(x))


@graph_aware
def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """``tf.nn.moments`` over ``reduction_axes``; a ``gamma`` /
    ``beta`` whose rank differs from ``x``'s is reshaped to the kept-dims statistics' shape.
    A float32 4-D ``x`` normalised over axes (0, 1, 2) with 1-D (or no) ``gamma`` / ``beta``
    (Keras' BatchNormalization on channels_last images) runs TensorFlow's fused kernel
    (``tf.compat.v1.nn.fused_batch_norm``, as Keras 2.3.1's TensorFlow backend and tf_keras
    do), its returned variance the batch's biased one as on the other path and every engine
    (the kernel hands back the unbiased one)."""
    x = _to_tensor(x)
    n = x.shape.rank
    axes = shape_rules.normalize_axes(list(reduction_axes), n)
    if _fused_batch_norm_applies(x, gamma, beta, axes, epsilon):
        return _fused_normalize_batch_in_training(x, gamma, beta, epsilon)
    mean_k, var_k = tf.nn.moments(x, axes=list(axes), keepdims=True)
    target = tf.shape(mean_k)
    normed = (x - mean_k) / tf.sqrt(var_k + _constant_like(x, epsilon))
    if gamma is not None:
        gamma = _to_tensor(gamma, x.dtype)
        if gamma.shape.rank != n:
            gamma = tf.reshape(gamma, target)
        normed = normed * gamma
    if beta is not None:
        beta = _to_tensor(beta, x.dtype)
        if beta.shape.rank != n:
            beta = tf.reshape(beta, target)
        normed = normed + beta
    return normed, tf.squeeze(mean_k, axis=list(axes)), tf.squeeze(var_k, axis=list(axes))


def _fused_batch_norm_applies(x, gamma, beta, axes, epsilon):
    """Whether ``normalize_batch_in_training`` can run TensorFlow's fused kernel with no
    change of result: float32 NHWC statistics over (0, 1, 2), parameters 1-D or None, and an
    ``epsilon`` the kernel takes as given (it raises smaller ones to 1.001e-5)."""
    if x.shape.rank != 4 or tuple(sorted(axes)) != (0, 1, 2) or x.dtype != tf.float32:
        return False
    if float(epsilon) < 1.001e-5:
        return False
    for p in (gamma, beta):
        if p is not None and (getattr(p, 'shape', None) is None or len(p.shape) != 1):
            return False
    return True


def _fused_normalize_batch_in_training(x, gamma, beta, epsilon):
    channels = tf.shape(x)[-1:]
    scale = (tf.ones(channels, tf.float32) if gamma is None
             else _to_tensor(gamma, tf.float32))
    offset = (tf.zeros(channels, tf.float32) if beta is None
              else _to_tensor(beta, tf.float32))

    @tf.custom_gradient
    def fused(x, scale, offset):
        normed, mean, var = tf.compat.v1.nn.fused_batch_norm(
            x, scale, offset, epsilon=float(epsilon), data_format='NHWC', is_training=True)
        # the kernel's variance has Bessel's correction (n / (n - 1), none when n is 1)
        count = tf.cast(tf.reduce_prod(tf.shape(x)[:3]), tf.float32)
        var = var * tf.maximum(count - 1., 1.) / tf.maximum(count, 1.)

        def grad(d_normed, d_mean, d_var):
            # the kernel's own gradient covers the normalised output only (TensorFlow
            # drops what reaches the batch statistics); theirs is added here
            if d_normed is None:
                d_normed = tf.zeros_like(normed)
            dx, dscale, doffset = tf.gradients(normed, [x, scale, offset],
                                               grad_ys=d_normed)
            if d_mean is not None:
                dx = dx + d_mean / count
            if d_var is not None:
                dx = dx + d_var * 2. * (x - mean) / count
            return dx, dscale, doffset
        return (normed, mean, var), grad
    return fused(x, scale, offset)


def _broadcast_param(p, x, axis):
    """Lay a 1-D parameter along ``axis`` of ``x`` (other ranks are left as is)."""
    if p is None:
        return None
    p = _to_tensor(p, x.dtype)
    n = x.shape.rank
    if p.shape.rank == 1 and n is not None and n > 1:
        shp = [1] * n
        shp[axis] = -1
        return tf.reshape(p, shp)
    return p


@graph_aware
def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """Plain TensorFlow arithmetic; 1-D parameters are reshaped along
    ``axis``, others broadcast as given."""
    x = _to_tensor(x)
    n = x.shape.rank
    ax = shape_rules.normalize_axis(int(axis), n, 'axis') if n is not None else axis
    mean = _broadcast_param(mean, x, ax)
    var = _broadcast_param(var, x, ax)
    beta = _broadcast_param(beta, x, ax)
    gamma = _broadcast_param(gamma, x, ax)
    out = (x - mean) / tf.sqrt(var + _constant_like(x, epsilon))
    if gamma is not None:
        out = out * gamma
    if beta is not None:
        out = out + beta
    return out


# ---------------------------------------------------------------------------
# Shape manipulation
# ---------------------------------------------------------------------------

@graph_aware
def concatenate(tensors, axis=-1):
    """``tf.concat``; all-sparse inputs give a sparse result (``tf.sparse.concat``),
    a mix is densified."""
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise ValueError('concatenate: expected a non-empty list of tensors, got %r'
                         % (tensors,))
    rank = ndim(tensors[0]) if is_tensor(tensors[0]) else np.ndim(tensors[0])
    if axis < 0 and rank is not None:
        axis = axis % rank if rank else 0
    if py_all(isinstance(t, tf.SparseTensor) for t in tensors):
        return tf.sparse.concat(axis, list(tensors))
    ts = [tf.sparse.to_dense(t) if isinstance(t, tf.SparseTensor) else _to_tensor(t)
          for t in tensors]
    return tf.concat(ts, axis)


@graph_aware
def reshape(x, shape):
    """``tf.reshape``; None entries of ``shape`` count as -1."""
    if isinstance(shape, (list, tuple)):
        shape = _shape_arg([-1 if d is None else d for d in shape])
    return tf.reshape(_to_tensor(x), shape)


@graph_aware
def permute_dimensions(x, pattern):
    """``tf.transpose``."""
    x = _to_tensor(x)
    return tf.transpose(x, tuple(int(p) for p in pattern))


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError('%s: expected a positive integer, got %r' % (name, value))
    return int(value)


@graph_aware
def resize_images(x, height_factor, width_factor, data_format, interpolation='nearest'):
    """'nearest' repeats entries (``repeat_elements``); 'bilinear' is
    ``tf.image.resize`` (half-pixel centres, no antialias)."""
    hf = _positive_int(height_factor, 'height_factor')
    wf = _positive_int(width_factor, 'width_factor')
    data_format = normalize_data_format(data_format)
    interpolation = shape_rules.normalize_interpolation(interpolation)
    x = _to_tensor(x)
    if interpolation == 'nearest':
        axes = (1, 2) if data_format == 'channels_last' else (2, 3)
        out = repeat_elements(x, hf, axes[0])
        return repeat_elements(out, wf, axes[1])
    if data_format == 'channels_first':
        x = tf.transpose(x, shape_rules.to_channels_last_perm(4))
    dims = _dyn_dims(x)
    size = _shape_arg([dims[1] * hf, dims[2] * wf])
    out = tf.image.resize(x, size, method='bilinear', antialias=False)
    if out.dtype != x.dtype:
        out = tf.cast(out, x.dtype)
    if data_format == 'channels_first':
        out = tf.transpose(out, shape_rules.to_channels_first_perm(4))
    return out


@graph_aware
def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    """Repeats entries (``repeat_elements``) along each spatial axis."""
    factors = (_positive_int(depth_factor, 'depth_factor'),
               _positive_int(height_factor, 'height_factor'),
               _positive_int(width_factor, 'width_factor'))
    data_format = normalize_data_format(data_format)
    x = _to_tensor(x)
    first = 1 if data_format == 'channels_last' else 2
    out = x
    for i, f in enumerate(factors):
        out = repeat_elements(out, f, first + i)
    return out


@graph_aware
def repeat_elements(x, rep, axis):
    """``tf.tile`` along an inserted axis, then ``tf.reshape``."""
    x = _to_tensor(x)
    rep = int(rep)
    if rep < 0:
        raise ValueError('rep: expected a non-negative int, got %r' % (rep,))
    n = x.shape.rank
    axis = shape_rules.normalize_axis(int(axis), n)
    static = x.shape.as_list()
    dims = _dyn_dims(x)
    y = tf.expand_dims(x, axis + 1)
    multiples = [1] * (n + 1)
    multiples[axis + 1] = rep
    y = tf.tile(y, multiples)
    new_dims = list(dims)
    new_dims[axis] = dims[axis] * rep
    y = tf.reshape(y, _shape_arg(new_dims))
    static[axis] = None if static[axis] is None else static[axis] * rep
    return _keras_meta(_set_shape(y, static))


@graph_aware
def repeat(x, n):
    """``tf.tile`` of ``x`` with an inserted axis 1."""
    x = _to_tensor(x)
    return tf.tile(tf.expand_dims(x, 1), _shape_arg([1, n, 1]))


@graph_aware
def arange(start, stop=None, step=1, dtype='int32'):
    """``tf.range`` computed in int64 (float64 when an argument is a float), then cast to
    ``dtype``; scalar tensors are accepted as bounds."""
    dtype = _normalize_dtype(dtype, 'arange: dtype')
    if stop is None:
        start, stop = 0, start
    values = (start, stop, step)
    for name, v in zip(('start', 'stop', 'step'), values):
        # the shared rules let any tensor through; tf.range needs a scalar
        if isinstance(v, (tf.Tensor, tf.Variable)) and v.shape.rank not in (None, 0):
            raise ValueError('arange: %s must be a scalar, got shape %s'
                             % (name, tuple(v.shape.as_list())))

    def _floating(v):
        if isinstance(v, (tf.Tensor, tf.Variable)):
            return not v.dtype.is_integer
        return isinstance(v, (float, np.floating))

    kind = 'float64' if py_any(_floating(v) for v in values) else 'int64'
    if py_all(not isinstance(v, (tf.Tensor, tf.Variable)) for v in values):
        count = py_builtin_max(int(np.ceil((stop - start) / float(step))), 0)
    else:
        start, stop, step = [tf.cast(v, kind) if isinstance(v, (tf.Tensor, tf.Variable))
                             else tf.constant(v, kind) for v in values]
        span = tf.cast(stop - start, 'float64') / tf.cast(step, 'float64')
        count = tf.maximum(tf.cast(tf.math.ceil(span), 'int64'), tf.constant(0, 'int64'))
    out = tf.range(count, dtype=kind) * tf.cast(step, kind) + tf.cast(start, kind)
    return tf.cast(out, dtype)


@graph_aware
def tile(x, n):
    """``tf.tile``; an ``n`` longer than ``ndim(x)`` first prepends length-1 axes to ``x``
    (numpy's rule)."""
    x = _to_tensor(x)
    n = shape_rules.sizes(n, _is_tf_tensor, 'n')
    if isinstance(n, list):
        rank = x.shape.rank
        if len(n) < rank:
            n = [1] * (rank - len(n)) + n
        elif len(n) > rank:
            x = tf.reshape(x, _shape_arg([1] * (len(n) - rank) + _dyn_dims(x)))
    return tf.tile(x, _shape_arg(n))


@graph_aware
def flatten(x):
    """``tf.reshape``."""
    return tf.reshape(_to_tensor(x), [-1])


@graph_aware
def batch_flatten(x):
    """``tf.reshape``."""
    x = _to_tensor(x)
    static = x.shape.as_list()
    rest = static[1:]
    if py_all(d is not None for d in rest):
        size = int(np.prod(rest, dtype=np.int64))
        if size > 0 or static[0] is not None:
            out = tf.reshape(x, _shape_arg([static[0] if size == 0 else -1, size]))
            return _set_shape(out, (static[0], size))
    out = tf.reshape(x, tf.stack([tf.shape(x)[0], -1]))
    return out


@graph_aware
def expand_dims(x, axis=-1):
    """``tf.expand_dims``."""
    return tf.expand_dims(_to_tensor(x), int(axis))


@graph_aware
def squeeze(x, axis):
    """``tf.squeeze``."""
    x = _to_tensor(x)
    n = x.shape.rank
    a = shape_rules.normalize_axis(int(axis), n)
    if n is not None and x.shape[a] is not None and x.shape[a] != 1:
        raise ValueError('squeeze: axis %d has length %d, expected 1' % (axis, x.shape[a]))
    return tf.squeeze(x, [a])


@graph_aware
def temporal_padding(x, padding=(1, 1)):
    """``tf.pad``."""
    x = _to_tensor(x)
    pad = shape_rules.normalize_spatial_padding([padding], 1)[0]
    return tf.pad(x, [[0, 0], list(pad), [0, 0]])


def _spatial_padding(x, padding, n, data_format):
    x = _to_tensor(x)
    pads = shape_rules.normalize_spatial_padding(padding, n)
    data_format = normalize_data_format(data_format)
    if data_format == 'channels_last':
        full = [[0, 0]] + [list(p) for p in pads] + [[0, 0]]
    else:
        full = [[0, 0], [0, 0]] + [list(p) for p in pads]
    return tf.pad(x, full)


@graph_aware
def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    """``tf.pad``."""
    return _spatial_padding(x, padding, 2, data_format)


@graph_aware
def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    """``tf.pad``."""
    return _spatial_padding(x, padding, 3, data_format)


@graph_aware
def stack(x, axis=0):
    """``tf.stack``."""
    return tf.stack([_to_tensor(t) for t in x], axis=axis)


@graph_aware
def one_hot(indices, num_classes):
    """``tf.one_hot``; float indices are cast to int32."""
    indices = _to_tensor(indices)
    if not indices.dtype.is_integer:
        indices = tf.cast(indices, 'int32')
    depth = num_classes if _is_tf_tensor(num_classes) else int(num_classes)
    return tf.one_hot(indices, depth, dtype=floatx())


@graph_aware
def reverse(x, axes):
    """``tf.reverse``."""
    x = _to_tensor(x)
    if isinstance(axes, (int, np.integer)):
        axes = [axes]
    return tf.reverse(x, [shape_rules.normalize_axis(int(a), x.shape.rank) for a in axes])


@graph_aware
def slice(x, start, size):
    """``tf.slice``."""
    x = _to_tensor(x)
    if isinstance(start, (list, tuple)) and isinstance(size, (list, tuple)):
        n = x.shape.rank
        if n is not None and (len(start) != n or len(size) != n):
            raise ValueError('slice: start and size need %d entries, got %r and %r'
                             % (n, start, size))
    return tf.slice(x, start, size)


def pattern_broadcast(x, broadcastable):
    """TensorFlow broadcasts any length-1 axis: the pattern is only checked
    against ``ndim(x)`` and ``x`` is returned as is."""
    try:
        pattern = [bool(b) for b in broadcastable]
    except TypeError:
        raise ValueError('broadcastable: expected a sequence of bools, got %r'
                         % (broadcastable,))
    n = ndim(x)
    if n is not None and len(pattern) != n:
        raise ValueError('broadcastable: expected %d entries (one per axis of x), got %r'
                         % (n, broadcastable))
    return x


# ---------------------------------------------------------------------------
# Values, functions and gradients
# ---------------------------------------------------------------------------

def get_value(x):
    """``eval``: a graph tensor that needs no feed is accepted too."""
    return eval(x)


def batch_get_value(ops):
    return [eval(x) for x in ops]


def set_value(x, value):
    """``tf.Variable.assign``, at once (eagerly)."""
    if not isinstance(x, tf.Variable):
        raise ValueError('set_value: x must be a variable, got %r' % (x,))
    arr = np.asarray(value, dtype=x.dtype.as_numpy_dtype)
    if tuple(arr.shape) != tuple(x.shape.as_list()):
        raise ValueError('set_value: value has shape %s, the variable has shape %s'
                         % (arr.shape, tuple(x.shape.as_list())))
    with tf.init_scope():
        x.assign(arr)


batch_set_value = generic.batch_set_value(_K)
get_variable_shape = generic.get_variable_shape(_K)


@graph_aware
def print_tensor(x, message=''):
    """``tf.print`` to stdout: an eager tensor is printed at once, a symbolic one
    each time a function computing it runs."""
    if tf.executing_eagerly():
        tf.print(message, x, output_stream=sys.stdout)
        return x
    op = tf.print(message, x, output_stream=sys.stdout)
    with tf.control_dependencies([op]):
        return tf.identity(x)


def function(inputs, outputs, updates=None, **kwargs):
    """Compiles the needed part of the adapter's graph once
    (``tf.compat.v1.wrap_function``). Extra keyword arguments: ``name``, ``fetches`` (ops run
    with it, results dropped), ``feed_dict`` (``{placeholder: value}`` fed at every call)."""
    allowed = ('name', 'fetches', 'feed_dict')
    unknown = sorted(k for k in kwargs if k not in allowed)
    if unknown:
        raise ValueError('function: unknown keyword argument(s) %s; the TensorFlow backend '
                         'accepts %s' % (', '.join(unknown), ', '.join(allowed)))
    if updates is not None and not isinstance(updates, (list, tuple)):
        raise ValueError('updates: expected a list, got %r' % (updates,))
    return _Function(inputs, outputs, updates, **kwargs)


def gradients(loss, variables):
    """``tf.gradients`` in the adapter's graph; zeros for unconnected variables,
    ``IndexedSlices`` densified. ``loss`` must be symbolic: an eager one raises ValueError."""
    single = not isinstance(variables, (list, tuple))
    var_list = [variables] if single else list(variables)
    if not _is_symbolic(loss):
        raise ValueError('gradients: loss must be a graph tensor built with this backend\'s '
                         'ops from placeholders and/or variables; got the eager value %r'
                         % (loss,))
    with _graph().as_default():
        grads = tf.gradients(loss, var_list,
                             unconnected_gradients=tf.UnconnectedGradients.ZERO)
        grads = [tf.convert_to_tensor(gr) if isinstance(gr, tf.IndexedSlices) else gr
                 for gr in grads]
    return grads


@graph_aware
def stop_gradient(variables):
    """``tf.stop_gradient``."""
    if isinstance(variables, (list, tuple)):
        return type(variables)(tf.stop_gradient(v) for v in variables)
    return tf.stop_gradient(variables)


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """``tf.control_dependencies``; symbolic inputs or updates build the block
    in the adapter's graph (eager inputs: a no-op). An update also in a function's ``updates``
    runs once per call."""
    if control_inputs is not None and not isinstance(control_inputs, (list, tuple)):
        control_inputs = [control_inputs]
    control_inputs = list(control_inputs or [])
    updates = [c for c in control_inputs if isinstance(c, _Update)]
    inputs = [c for c in control_inputs if not isinstance(c, _Update)]
    if tf.executing_eagerly() and (updates or py_any(
            _is_symbolic(c) or isinstance(c, tf.Operation) for c in inputs)):
        with _graph().as_default():
            inputs += [u.shared_op() for u in updates]
            with tf.control_dependencies(inputs) as ctx:
                yield ctx
    else:
        inputs += [u.shared_op() for u in updates]
        with tf.control_dependencies(inputs) as ctx:
            yield ctx


def symbolic(func):
    """Builds the ops inside the adapter's one symbolic graph (a ``FuncGraph``)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if not tf.executing_eagerly():
            return func(*args, **kwargs)
        with _graph().as_default():
            return func(*args, **kwargs)
    return wrapper


def eager(func):
    """``tf.init_scope``: runs eagerly even from inside graph building."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with tf.init_scope():
            return func(*args, **kwargs)
    return wrapper


# ---------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------

def _mask_like(m, t):
    """Reshape a ``(batch,)`` bool mask to broadcast against ``t``."""
    extra = t.shape.rank - 1
    if extra <= 0:
        return m
    return tf.reshape(m, tf.concat([tf.shape(m), tf.ones([extra], 'int32')], 0))


def _depends_on_learning_phase(tensors):
    """True when the symbolic learning phase is an ancestor of one of ``tensors``
    (searched through loop and function inputs of the module graph)."""
    lp = _State.learning_phase_tensor
    if lp is None:
        return False
    target = lp.op
    seen = set()
    stack = [t.op for t in tensors if isinstance(t, tf.Tensor) and not
             isinstance(t, _EagerTensor)]
    while stack:
        op = stack.pop()
        if op is target:
            return True
        if id(op) in seen:
            continue
        seen.add(id(op))
        stack.extend(i.op for i in op.inputs)
        stack.extend(op.control_inputs)
    return False


def _rnn_phase_flags(last_output, outputs, new_states, step_uses_phase):
    """Mark rnn's results with ``_uses_learning_phase`` when the step used the
    learning phase (its outputs carried the flag, or the phase feeds them)."""
    if step_uses_phase or _depends_on_learning_phase([last_output]):
        for t in (last_output, outputs):
            try:
                t._uses_learning_phase = True
            except AttributeError:
                pass
    return last_output, outputs, new_states


@graph_always
def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None,
        constants=None, unroll=False, input_length=None):
    """``tf.while_loop`` over ``tf.TensorArray`` objects (a Python loop when
    ``unroll``); the step is called once more outside the loop to learn its output's dtype
    and shape. Variables the step reads through ``K`` ops are read once before the loop
    (``_loop_read``). ``input_length`` is not used."""
    inputs = _to_tensor(inputs)
    n = inputs.shape.rank
    if n is None:   # the shared rules pass an unknown rank; the loop's transpose needs it
        raise ValueError('rnn: inputs must have rank >= 3 (batch, time, ...), got rank %s' % n)
    states = [_to_tensor(s) for s in (initial_states or [])]
    constants = list(constants or [])
    if mask is not None:
        mask = _to_tensor(mask)
        if mask.shape.rank == 3 and mask.shape[2] == 1:
            mask = tf.squeeze(mask, 2)
        if mask.shape.rank != 2:
            raise ValueError('mask: expected a (batch, time) tensor, got shape %s'
                             % (mask.shape,))
        if mask.dtype != tf.bool:
            mask = tf.not_equal(mask, tf.zeros((), mask.dtype))
    perm = [1, 0] + list(range(2, n))
    inputs_tm = tf.transpose(inputs, perm)
    mask_tm = tf.transpose(mask) if mask is not None else None
    if go_backwards:
        inputs_tm = tf.reverse(inputs_tm, [0])
        if mask_tm is not None:
            mask_tm = tf.reverse(mask_tm, [0])

    uses_phase = []

    def _note_phase(out, new_states):
        if py_any(getattr(t, '_uses_learning_phase', False) for t in [out] + list(new_states)):
            uses_phase.append(True)

    def _step(x_t, m_t, prev_output, states):
        out, new_states = step_function(x_t, list(states) + constants)
        new_states = list(new_states) if isinstance(new_states, (list, tuple)) \
            else [new_states]
        _note_phase(out, new_states)
        out = _to_tensor(out)
        new_states = [_to_tensor(s) for s in new_states]
        if len(new_states) != len(states):
            raise ValueError('rnn: step_function returned %d states, expected %d'
                             % (len(new_states), len(states)))
        if m_t is not None:
            if prev_output is None:
                prev_output = tf.zeros_like(out)
            out = tf.where(_mask_like(m_t, out), out, prev_output)
            new_states = [tf.where(_mask_like(m_t, ns), ns, s)
                          for ns, s in zip(new_states, states)]
        return out, new_states

    if unroll:
        steps = inputs.shape[1]
        if steps is None:
            raise ValueError('rnn: unroll=True needs a known time length; inputs have shape %s'
                             % (inputs.shape,))
        xs = tf.unstack(inputs_tm, num=steps)
        ms = tf.unstack(mask_tm, num=steps) if mask_tm is not None else [None] * steps
        outputs, prev = [], None
        for t in range(steps):
            prev, states = _step(xs[t], ms[t], prev, states)
            outputs.append(prev)
        if not outputs:
            raise ValueError('rnn: inputs have 0 time steps')
        stacked = tf.stack(outputs, axis=1)
        return _rnn_phase_flags(outputs[-1], stacked, list(states), bool(uses_phase))

    time_steps = tf.shape(inputs_tm)[0]
    input_ta = tf.TensorArray(inputs_tm.dtype, size=time_steps,
                              element_shape=inputs_tm.shape[1:]).unstack(inputs_tm)
    # Trace one step outside the loop to learn the output's dtype and shape.
    out0, _ = _step(inputs_tm[0], None, None, states)
    output_ta = tf.TensorArray(out0.dtype, size=time_steps, element_shape=out0.shape)
    mask_ta = None
    if mask_tm is not None:
        mask_ta = tf.TensorArray(tf.bool, size=time_steps).unstack(mask_tm)

    def cond(t, *_):
        return t < time_steps

    carry_output = mask_ta is not None   # a mask repeats the previous output

    def body(t, out_ta, *loop_vars):
        x_t = input_ta.read(t)
        if carry_output:
            m_t, prev_output, loop_states = mask_ta.read(t), loop_vars[0], loop_vars[1:]
        else:
            m_t, prev_output, loop_states = None, None, loop_vars
        out, new_states = _step(x_t, m_t, prev_output, list(loop_states))
        new_states = [tf.cast(ns, s.dtype) for ns, s in zip(new_states, loop_states)]
        for ns, s in zip(new_states, loop_states):
            ns.set_shape(s.shape)
        out_ta = out_ta.write(t, out)
        return (t + 1, out_ta) + ((out,) if carry_output else ()) + tuple(new_states)

    # The initial "previous output" must not depend on the traced step's
    # values (that would run the step once more on every call).
    out_static = out0.shape.as_list()
    if py_all(d is not None for d in out_static):
        zeros0 = tf.zeros(out_static, out0.dtype)
    elif out_static and py_all(d is not None for d in out_static[1:]):
        zeros0 = tf.zeros(_shape_arg([tf.shape(inputs_tm)[1]] + out_static[1:]), out0.dtype)
        zeros0.set_shape(out_static)
    else:
        zeros0 = tf.zeros_like(out0)
    # No maximum_iterations: ``cond`` bounds the loop already (a second counter and a
    # LogicalAnd per step otherwise); the loop reads its step's variables once, before it.
    _LOOP_READS.append([tf.compat.v1.get_default_graph(), {}])
    try:
        loop = tf.while_loop(cond, body,
                             (tf.constant(0, 'int32'), output_ta)
                             + ((zeros0,) if carry_output else ()) + tuple(states))
    finally:
        _LOOP_READS.pop()
    outputs_tm = loop[1].stack()
    new_states = list(loop[3:] if carry_output else loop[2:])
    steps = inputs.shape[1]
    # the last output is read from the outputs' list (one element: ``stack`` would copy them
    # all on every call, even where only the last output is used)
    if carry_output:
        last_output = loop[2]
    elif steps is not None and steps > 0:
        last_output = loop[1].read(steps - 1)
    else:   # an unknown (or empty) time axis: zeros for 0 steps, as with a mask
        last_output = tf.cond(time_steps > 0, lambda: loop[1].read(time_steps - 1),
                              lambda: zeros0)
    last_output.set_shape(out0.shape)
    outputs = tf.transpose(outputs_tm, [1, 0] + list(range(2, outputs_tm.shape.rank)))
    if outputs.shape.rank is not None:
        outputs = _set_shape(outputs, [out0.shape[0], inputs.shape[1]] + out0.shape.as_list()[1:])
    return _rnn_phase_flags(last_output, outputs, new_states, bool(uses_phase))


def _call_if(x):
    return x() if callable(x) else x


@graph_aware
def switch(condition, then_expression, else_expression):
    """``tf.cond`` for a scalar condition (only the chosen branch runs), ``tf.where`` for
    an elementwise one."""
    if isinstance(condition, (bool, int, np.bool_, np.integer)):
        return _to_tensor(_call_if(then_expression if condition else else_expression))
    condition = _to_tensor(condition)
    if condition.dtype != tf.bool:
        condition = tf.cast(condition, tf.bool)
    cond_ndim = condition.shape.rank
    if cond_ndim == 0:
        then_fn = then_expression if callable(then_expression) else (lambda: then_expression)
        else_fn = else_expression if callable(else_expression) else (lambda: else_expression)
        if tf.executing_eagerly():
            return _to_tensor(then_fn() if bool(condition) else else_fn())
        return tf.cond(condition, lambda: _to_tensor(then_fn()), lambda: _to_tensor(else_fn()))
    then_t = _to_tensor(_call_if(then_expression))
    else_t = _to_tensor(_call_if(else_expression), then_t.dtype)
    expr_ndim = then_t.shape.rank
    if cond_ndim > expr_ndim:
        raise ValueError('switch: the rank of condition (%d) must be <= the rank of the '
                         'expressions (%d)' % (cond_ndim, expr_ndim))
    if cond_ndim < expr_ndim:
        condition = tf.reshape(condition, tf.concat(
            [tf.shape(condition), tf.ones([expr_ndim - cond_ndim], 'int32')], 0))
    return tf.where(condition, then_t, else_t)


def _phase_for(*exprs):
    """The learning phase to use when ``training`` is None."""
    fixed = common._fixed_learning_phase()
    if fixed is not None:
        return fixed
    if _in_our_graph() or py_any(_is_symbolic(e) for e in exprs):
        return learning_phase()
    # Eager values (or a graph that is not ours): the test phase.
    return 0


@graph_aware
def in_train_phase(x, alt, training=None):
    """With ``training`` None, eager ``x`` / ``alt`` and no phase set, the test
    branch is chosen."""
    if training is None:
        training = _phase_for(x, alt)
    if isinstance(training, (bool, int, np.bool_, np.integer)):
        return _call_if(x) if training else _call_if(alt)
    if tf.executing_eagerly() and _is_symbolic(training):
        with _graph().as_default():
            out = switch(training, x, alt)
    else:
        out = switch(training, x, alt)
    if training is _State.learning_phase_tensor and training is not None:
        # Keras' engine reads this flag to feed the learning phase in fit.
        out._uses_learning_phase = True
    return out


@graph_aware
def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)


# ---------------------------------------------------------------------------
# Activations and losses
# ---------------------------------------------------------------------------

@graph_aware
def relu(x, alpha=0., max_value=None, threshold=0.):
    """``tf.nn.relu`` and ``tf.clip_by_value``."""
    x = _to_tensor(x)
    if max_value is not None and not isinstance(max_value, (tf.Tensor, tf.Variable)) \
            and max_value < 0:
        raise ValueError('relu: max_value must be None or non-negative, got %r'
                         % (max_value,))

    def _is_zero(v):
        return not isinstance(v, (tf.Tensor, tf.Variable)) and v == 0

    if _is_zero(threshold):
        kept = tf.nn.relu(x)
    else:
        thr = _constant_like(x, threshold)
        kept = x * tf.cast(tf.greater(x, thr), x.dtype)
    if max_value is not None:
        kept = tf.clip_by_value(kept, tf.zeros((), x.dtype), _constant_like(x, max_value))
    if _is_zero(alpha):
        return kept
    below = tf.nn.relu((x if _is_zero(threshold) else x - _constant_like(x, threshold)) * -1)
    return kept - _constant_like(x, alpha) * below


@graph_aware
def elu(x, alpha=1.):
    """``tf.nn.elu``, scaled by ``alpha`` below 0."""
    x = _to_tensor(x)
    out = tf.nn.elu(x)
    if isinstance(alpha, (int, float)) and alpha == 1:
        return out
    return tf.where(x > 0, out, _constant_like(x, alpha) * out)


@graph_aware
def softmax(x, axis=-1):
    """``tf.nn.softmax``."""
    x = _to_tensor(x)
    return tf.nn.softmax(x, axis=axis)


@graph_aware
def softplus(x):
    """``tf.nn.softplus``."""
    return tf.nn.softplus(_to_tensor(x))


@graph_aware
def softsign(x):
    """``tf.nn.softsign``."""
    return tf.nn.softsign(_to_tensor(x))


@graph_aware
def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """``tf.nn.log_softmax`` from logits; else ``tf.math.log`` of the
    renormalised, clipped output."""
    output = _to_tensor(output)
    target = _to_tensor(target, output.dtype)
    n = output.shape.rank
    axis = shape_rules.normalize_axis(int(axis), n, 'axis')
    if from_logits:
        return -tf.reduce_sum(target * tf.nn.log_softmax(output, axis=axis), axis=axis)
    eps = _constant_like(output, epsilon())
    p = output / tf.reduce_sum(output, axis=axis, keepdims=True)
    p = tf.clip_by_value(p, eps, 1 - eps)
    return -tf.reduce_sum(target * tf.math.log(p), axis=axis)


def _move_axis_last(x, axis):
    n = x.shape.rank
    axis = shape_rules.normalize_axis(int(axis), n, 'axis')
    if axis == n - 1:
        return x, axis
    perm = [i for i in range(n) if i != axis] + [axis]
    return tf.transpose(x, perm), axis


@graph_aware
def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """``tf.nn.log_softmax`` against ``tf.one_hot`` of the targets
    (float targets are cast to int64)."""
    output = _to_tensor(output)
    target = _to_tensor(target)
    output, axis = _move_axis_last(output, axis)
    n = output.shape.rank
    t_rank = target.shape.rank
    if t_rank is not None and t_rank not in (n - 1, n):
        raise ValueError('sparse_categorical_crossentropy: target must have the shape of output '
                         'without the class axis (rank %d), got rank %d' % (n - 1, t_rank))
    # Keras' rule: the class ids in their order (a size-1 class axis anywhere, e.g.
    # (batch, 1, h, w) against channels_first scores), one per position of the output
    target = _set_shape(tf.reshape(target, tf.shape(output)[:-1]), output.shape[:-1])
    if not target.dtype.is_integer:
        target = tf.cast(target, 'int64')
    if not from_logits:
        eps = _constant_like(output, epsilon())
        output = tf.math.log(tf.clip_by_value(output, eps, 1 - eps))
    res = -tf.reduce_sum(
        tf.one_hot(target, tf.shape(output)[-1], dtype=output.dtype)
        * tf.nn.log_softmax(output, axis=-1), axis=-1)
    return res


@graph_aware
def binary_crossentropy(target, output, from_logits=False):
    """``tf.nn.sigmoid_cross_entropy_with_logits`` from logits; else
    ``tf.math.log`` of the clipped output."""
    output = _to_tensor(output)
    target = _to_tensor(target, output.dtype)
    if from_logits:
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    eps = _constant_like(output, epsilon())
    p = tf.clip_by_value(output, eps, 1 - eps)
    return -(target * tf.math.log(p) + (1 - target) * tf.math.log(1 - p))


@graph_aware
def sigmoid(x):
    """``tf.sigmoid``."""
    return tf.sigmoid(_to_tensor(x))


@graph_aware
def hard_sigmoid(x):
    """``tf.clip_by_value`` of ``0.2 * x + 0.5``."""
    x = _to_tensor(x)
    out = _constant_like(x, 0.2) * x + _constant_like(x, 0.5)
    return tf.clip_by_value(out, _constant_like(x, 0.), _constant_like(x, 1.))


@graph_aware
def tanh(x):
    """``tf.tanh``."""
    return tf.tanh(_to_tensor(x))


@graph_aware
def dropout(x, level, noise_shape=None, seed=None):
    """Eagerly ``tf.nn.experimental.stateless_dropout`` (a seed gives the same mask from
    process start); in a graph ``tf.nn.dropout``, a new mask at every call. ``seed=None`` draws
    one from numpy's global generator."""
    x = _to_tensor(x)
    if noise_shape is not None and isinstance(noise_shape, (list, tuple)):
        dims = _dyn_dims(x)
        noise_shape = _shape_arg([dims[i] if d is None else d
                                  for i, d in enumerate(noise_shape)])
    seed = _op_seed(seed, 'dropout: seed')
    if tf.executing_eagerly():
        return tf.nn.experimental.stateless_dropout(
            x, rate=level, seed=_stateless_seed(seed), noise_shape=noise_shape)
    return tf.nn.dropout(x, rate=level, noise_shape=noise_shape, seed=seed)


@graph_aware
def l2_normalize(x, axis=None):
    """``tf.math.l2_normalize`` (epsilon 1e-12)."""
    x = _to_tensor(x)
    return tf.math.l2_normalize(x, axis=_axis_arg(axis, x.shape.rank), epsilon=1e-12)


@graph_aware
def in_top_k(predictions, targets, k):
    """``tf.math.in_top_k`` on float32 predictions: ties count as in, a non-finite
    target score gives False."""
    predictions = tf.cast(_to_tensor(predictions), 'float32')
    targets = _to_tensor(targets)
    if targets.dtype not in (tf.int32, tf.int64):
        targets = tf.cast(targets, 'int32')
    return tf.math.in_top_k(targets, predictions, int(k))


# ---------------------------------------------------------------------------
# Convolution and pooling
# ---------------------------------------------------------------------------

def _explicit_pad(x, kernel_sizes, strides, dilations, padding):
    """Zero-pad the spatial axes of a channels_last ``x`` for ``padding``;
    returns the padded tensor (padding then becomes 'valid')."""
    static = x.shape.as_list()
    pads = [[0, 0]]
    for i, (k, s, d) in enumerate(zip(kernel_sizes, strides, dilations)):
        length = static[i + 1]
        if padding == 'same' and length is None:
            raise ValueError('padding: \'same\' with strides > 1 and dilation_rate > 1 (or '
                             'unequal depthwise strides) needs static spatial sizes, got '
                             'shape %s' % (tuple(static),))
        pads.append(list(shape_rules.padding_amounts(length, k, s, d, padding)))
    pads.append([0, 0])
    if py_all(p == [0, 0] for p in pads):
        return x
    return tf.pad(x, pads)


def _conv_core(x, conv, kernel_sizes, strides, dilations, padding, equal_strides=False):
    """Run ``conv(x, strides, padding, dilations)`` on a channels_last ``x``.

    'causal' becomes left padding; strides and dilations both above 1 (or,
    with ``equal_strides``, strides that differ between axes: TensorFlow's
    CPU depthwise kernel refuses them) are computed as an explicitly padded
    stride-1 conv subsampled by the strides (same result as TensorFlow's
    definition).
    """
    if padding == 'causal':
        x = _explicit_pad(x, kernel_sizes, strides, dilations, 'causal')
        padding = 'valid'
    if (py_any(s > 1 for s in strides) and py_any(d > 1 for d in dilations)) or (
            equal_strides and len(set(strides)) > 1):
        x = _explicit_pad(x, kernel_sizes, strides, dilations, padding)
        out = conv(x, (1,) * len(strides), 'VALID', dilations)
        slices = [py_slice(None)] + [py_slice(None, None, s) for s in strides] + \
            [py_slice(None)]
        return out[tuple(slices)]
    return conv(x, strides, padding.upper(), dilations)


def _conv_nd(x, kernel, rank, strides, padding, data_format, dilation_rate, allow_causal):
    data_format = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal=allow_causal)
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    dilation_rate = shape_rules.normalize_tuple(dilation_rate, rank, 'dilation_rate')
    x = _to_tensor(x)
    kernel = _check_kernel(kernel, rank + 2)
    if kernel.dtype != x.dtype:
        kernel = tf.cast(kernel, x.dtype)
    ksizes = tuple(kernel.shape.as_list()[:rank])
    x = _to_channels_last(x, data_format)

    def conv(inp, s, p, d):
        return tf.nn.convolution(inp, kernel, strides=list(s), padding=p, dilations=list(d))
    out = _conv_core(x, conv, ksizes, strides, dilation_rate, padding)
    return _from_channels_last(out, data_format)


@graph_aware
def conv1d(x, kernel, strides=1, padding='valid', data_format=None, dilation_rate=1):
    """``tf.nn.convolution`` on channels_last data; 'causal' is a left zero-padding of
    ``(k - 1) * dilation_rate``; strides and dilation both above 1 run as a padded stride-1
    conv subsampled by the strides."""
    return _conv_nd(x, kernel, 1, strides, padding, data_format, dilation_rate, True)


@graph_aware
def conv2d(x, kernel, strides=(1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1)):
    """``tf.nn.convolution`` on channels_last data (channels_first is transposed around
    it); strides and dilation both above 1 run as a padded stride-1 conv subsampled."""
    return _conv_nd(x, kernel, 2, strides, padding, data_format, dilation_rate, False)


def _transpose_output_shape(x_cl, output_shape, data_format, rank):
    """Channels_last output shape for a transposed conv (batch may be None)."""
    try:
        shp = [None if d is None else d for d in output_shape]
    except TypeError:
        shp = None
    if shp is None or isinstance(output_shape, (tf.Tensor, tf.Variable)):
        out = tf.cast(output_shape, 'int32')
        if data_format == 'channels_first':
            out = tf.gather(out, list(shape_rules.to_channels_last_perm(rank + 2)))
        return out, None
    if len(shp) != rank + 2:
        raise ValueError('output_shape: expected %d entries (batch, spatial..., channels in '
                         'the data format), got %r' % (rank + 2, output_shape))
    if data_format == 'channels_first':
        shp = [shp[i] for i in shape_rules.to_channels_last_perm(rank + 2)]
    static = [None if isinstance(d, (tf.Tensor, tf.Variable)) else
              (None if d is None else int(d)) for d in shp]
    dyn = list(static)
    if dyn[0] is None:
        dyn[0] = tf.shape(x_cl)[0]
    for i, d in enumerate(shp):
        if isinstance(d, (tf.Tensor, tf.Variable)):
            dyn[i] = d
    if py_any(d is None for d in dyn[1:]):
        raise ValueError('output_shape: only the batch entry may be None, got %r'
                         % (output_shape,))
    return _shape_arg(dyn), static


def _dilate_kernel(kernel, dilations):
    """``kernel`` (spatial axes first) with ``d - 1`` zeros inserted between the
    taps of each spatial axis dilated by ``d``: a dilation-1 equivalent."""
    n = kernel.shape.rank
    for i, d in enumerate(dilations):
        if d == 1:
            continue
        shape = kernel.shape.as_list()
        k = shape[i]
        grown = tf.expand_dims(kernel, i + 1)
        pads = [[0, 0]] * (n + 1)
        pads[i + 1] = [0, d - 1]
        grown = tf.pad(grown, pads)
        shape[i] = k * d
        grown = tf.reshape(grown, shape)
        index = [py_slice(None)] * n
        index[i] = py_slice(0, (k - 1) * d + 1)
        kernel = grown[tuple(index)]
    return kernel


def _conv_transpose(x, kernel, output_shape, rank, strides, padding, data_format,
                    dilation_rate):
    data_format = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    dilation_rate = shape_rules.normalize_tuple(dilation_rate, rank, 'dilation_rate')
    if py_any(s > 1 for s in strides) and py_any(d > 1 for d in dilation_rate):
        raise ValueError('dilation_rate: a transposed conv cannot have both strides %r and '
                         'dilation_rate %r above 1' % (strides, dilation_rate))
    x = _to_tensor(x)
    kernel = tf.cast(_check_kernel(kernel, rank + 2), x.dtype)
    x = _to_channels_last(x, data_format)
    out_shape, static = _transpose_output_shape(x, output_shape, data_format, rank)
    ks = kernel.shape.as_list()
    in_static = x.shape.as_list()
    if static is not None:
        if ks[rank] is not None and static[-1] is not None and static[-1] != ks[rank]:
            raise ValueError('output_shape: %s output channels, but the kernel %s has %s '
                             '(kernel layout: spatial..., out, in)'
                             % (static[-1], tuple(ks), ks[rank]))
        for i in range(rank):
            if py_all(d is not None for d in (in_static[i + 1], ks[i], static[i + 1])) and \
                    shape_rules.conv_output_length(static[i + 1], ks[i], padding, strides[i],
                                                   dilation_rate[i]) != in_static[i + 1]:
                raise ValueError('output_shape: spatial size %s (axis %d) is not compatible '
                                 'with input size %s, kernel %s, stride %d and padding %r'
                                 % (static[i + 1], i, in_static[i + 1], ks[i], strides[i],
                                    padding))
    full_strides = [1] + list(strides) + [1]
    # TensorFlow's CPU kernels refuse dilated transposed convs: the same
    # result comes from the kernel with zeros inserted between its taps.
    kernel = _dilate_kernel(kernel, dilation_rate)
    if rank == 2:
        out = tf.nn.conv2d_transpose(x, kernel, out_shape, full_strides,
                                     padding=padding.upper())
    else:
        out = tf.nn.conv3d_transpose(x, kernel, out_shape, full_strides,
                                     padding=padding.upper())
    if static is not None:
        out = _set_shape(out, static)
    return _from_channels_last(out, data_format)


@graph_aware
def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """``tf.nn.conv2d_transpose`` on channels_last data; a dilated kernel gets
    zeros between its taps (TensorFlow's CPU kernels refuse dilation); strides and
    ``dilation_rate`` cannot both be above 1."""
    return _conv_transpose(x, kernel, output_shape, 2, strides, padding, data_format,
                           dilation_rate)


def _depthwise_conv(x, depthwise_kernel, strides, padding, dilation_rate):
    """Depthwise 2-D conv of a channels_last ``x``."""
    ksizes = tuple(depthwise_kernel.shape.as_list()[:2])

    def conv(inp, s, p, d):
        return tf.nn.depthwise_conv2d(inp, depthwise_kernel, strides=[1, s[0], s[1], 1],
                                      padding=p, dilations=list(d))
    return _conv_core(x, conv, ksizes, strides, dilation_rate, padding, equal_strides=True)


@graph_aware
def separable_conv1d(x, depthwise_kernel, pointwise_kernel, strides=1, padding='valid',
                     data_format=None, dilation_rate=1):
    """Run as ``separable_conv2d`` ops (``tf.nn.depthwise_conv2d`` then a 1x1
    ``tf.nn.convolution``) on an inserted axis."""
    data_format = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal=True)
    strides = shape_rules.normalize_tuple(strides, 1, 'strides')
    dilation_rate = shape_rules.normalize_tuple(dilation_rate, 1, 'dilation_rate')
    x = _to_tensor(x)
    dk = tf.cast(_check_kernel(depthwise_kernel, 3, 'depthwise_kernel'), x.dtype)
    pk = tf.cast(_check_kernel(pointwise_kernel, 3, 'pointwise_kernel'), x.dtype)
    x = _to_channels_last(x, data_format)
    if padding == 'causal':
        x = _explicit_pad(x, (dk.shape[0],), strides, dilation_rate, 'causal')
        padding = 'valid'
    x4 = tf.expand_dims(x, 1)
    out = _depthwise_conv(x4, tf.expand_dims(dk, 0), (1,) + strides, padding,
                        (1,) + dilation_rate)
    out = tf.nn.convolution(out, tf.expand_dims(pk, 0), strides=[1, 1], padding='VALID')
    out = tf.squeeze(out, 1)
    return _from_channels_last(out, data_format)


@graph_aware
def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """``tf.nn.depthwise_conv2d``, then a 1x1 ``tf.nn.convolution``."""
    data_format = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    strides = shape_rules.normalize_tuple(strides, 2, 'strides')
    dilation_rate = shape_rules.normalize_tuple(dilation_rate, 2, 'dilation_rate')
    x = _to_tensor(x)
    dk = _check_kernel(depthwise_kernel, 4, 'depthwise_kernel')
    pk = _check_kernel(pointwise_kernel, 4, 'pointwise_kernel')
    dk, pk = tf.cast(dk, x.dtype), tf.cast(pk, x.dtype)
    out = _depthwise_conv(_to_channels_last(x, data_format), dk, strides, padding, dilation_rate)
    out = tf.nn.convolution(out, pk, strides=[1, 1], padding='VALID')
    return _from_channels_last(out, data_format)


@graph_aware
def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding='valid', data_format=None,
                     dilation_rate=(1, 1)):
    """``tf.nn.depthwise_conv2d``; unequal strides (refused by TensorFlow's CPU
    kernel) run as a padded stride-1 conv subsampled."""
    data_format = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    strides = shape_rules.normalize_tuple(strides, 2, 'strides')
    dilation_rate = shape_rules.normalize_tuple(dilation_rate, 2, 'dilation_rate')
    x = _to_tensor(x)
    dk = _check_kernel(depthwise_kernel, 4, 'depthwise_kernel')
    if dk.dtype != x.dtype:
        dk = tf.cast(dk, x.dtype)
    out = _depthwise_conv(_to_channels_last(x, data_format), dk, strides, padding, dilation_rate)
    return _from_channels_last(out, data_format)


@graph_aware
def conv3d(x, kernel, strides=(1, 1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1, 1)):
    """``tf.nn.convolution`` on channels_last data (channels_first is transposed around
    it); strides and dilation both above 1 run as a padded stride-1 conv subsampled."""
    return _conv_nd(x, kernel, 3, strides, padding, data_format, dilation_rate, False)


@graph_aware
def conv3d_transpose(x, kernel, output_shape, strides=(1, 1, 1), padding='valid',
                     data_format=None):
    """``tf.nn.conv3d_transpose`` on channels_last data."""
    return _conv_transpose(x, kernel, output_shape, 3, strides, padding, data_format,
                           (1, 1, 1))


def _pool(x, pool_size, strides, padding, data_format, pool_mode, rank):
    data_format = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    pool_mode = shape_rules.normalize_pool_mode(pool_mode)
    pool_size = shape_rules.normalize_tuple(pool_size, rank, 'pool_size')
    strides = shape_rules.normalize_tuple(strides, rank, 'strides')
    x = _to_tensor(x)
    x = _to_channels_last(x, data_format)
    fn = tf.nn.max_pool if pool_mode == 'max' else tf.nn.avg_pool
    out = fn(x, ksize=list(pool_size), strides=list(strides), padding=padding.upper())
    return _from_channels_last(out, data_format)


@graph_aware
def pool2d(x, pool_size, strides=(1, 1), padding='valid', data_format=None, pool_mode='max'):
    """``tf.nn.max_pool`` / ``tf.nn.avg_pool`` on channels_last data; 'same' average
    pooling divides by the count of real (unpadded) cells."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 2)


@graph_aware
def pool3d(x, pool_size, strides=(1, 1, 1), padding='valid', data_format=None,
           pool_mode='max'):
    """``tf.nn.max_pool`` / ``tf.nn.avg_pool`` on channels_last data; 'same' average
    pooling divides by the count of real (unpadded) cells."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 3)


@graph_aware
def bias_add(x, bias, data_format=None):
    """``tf.nn.bias_add`` for a 1-D bias on channels_last, else a broadcast add; with
    channels_first a bias of rank ``ndim(x) - 1`` is reshaped (not transposed) to
    ``(1, channels, spatial...)``, as Keras 2."""
    data_format = normalize_data_format(data_format)
    x = _to_tensor(x)
    bias = _to_tensor(bias, x.dtype)
    n = x.shape.rank
    b_shape = bias.shape.as_list()
    if len(b_shape) != 1 and len(b_shape) != n - 1:
        raise ValueError('bias: expected a 1-D bias or one of rank %d (ndim(x) - 1), got shape '
                         '%s' % (n - 1, tuple(b_shape)))
    channel_axis = n - 1 if data_format == 'channels_last' else 1
    if len(b_shape) == 1:
        c = x.shape[channel_axis]
        if c is not None and b_shape[0] is not None and c != b_shape[0]:
            raise ValueError('bias: has %d entries, x has %d channels (axis %d)'
                             % (b_shape[0], c, channel_axis))
        if data_format == 'channels_first' and n > 2:
            return x + tf.reshape(bias, [1, -1] + [1] * (n - 2))
        if n >= 2:
            # the engine's BiasAdd (as Keras 2): its gradient (BiasAddGrad) needs no
            # shape arithmetic, which inside an RNN's while loop would be accumulated
            return tf.nn.bias_add(x, bias)
        return x + bias
    if data_format == 'channels_first' and n > 2:
        # As Keras: a (spatial..., channels) bias is reshaped (not transposed)
        # to (1, channels, spatial...).
        dims = _dyn_dims(bias)
        return x + tf.reshape(bias, _shape_arg([1, dims[-1]] + dims[:-1]))
    return x + tf.expand_dims(bias, 0)


# ---------------------------------------------------------------------------
# Random
# ---------------------------------------------------------------------------

@graph_aware
def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Eagerly ``tf.random.stateless_normal`` (a seed gives the same values from
    process start); in a compiled function ``tf.random.normal``, the next values of its seeded
    sequence at each call. ``seed=None`` draws one from numpy's global generator."""
    dtype = _normalize_dtype(dtype, 'random_normal: dtype')
    seed = _op_seed(seed)
    shape = _shape_arg(shape)
    if tf.executing_eagerly():
        return tf.random.stateless_normal(shape, _stateless_seed(seed), mean, stddev, dtype)
    return tf.random.normal(shape, mean, stddev, dtype=dtype, seed=seed)


@graph_aware
def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Eagerly ``tf.random.stateless_uniform``, in a compiled function
    ``tf.random.uniform``; seeds as ``random_normal``."""
    dtype = _normalize_dtype(dtype, 'random_uniform: dtype')
    seed = _op_seed(seed)
    shape = _shape_arg(shape)
    if tf.executing_eagerly():
        return tf.random.stateless_uniform(shape, _stateless_seed(seed), minval, maxval, dtype)
    return tf.random.uniform(shape, minval, maxval, dtype=dtype, seed=seed)


@graph_aware
def random_binomial(shape, p=0.0, dtype=None, seed=None):
    """``random_uniform(shape) < p`` cast to ``dtype``; seeds as
    ``random_normal``."""
    dtype = _normalize_dtype(dtype, 'random_binomial: dtype')
    u = random_uniform(shape, 0.0, 1.0, dtype='float32', seed=seed)
    return tf.cast(u < tf.cast(p, 'float32'), dtype)


@graph_aware
def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Eagerly ``tf.random.stateless_truncated_normal``, in a compiled function
    ``tf.random.truncated_normal``; seeds as ``random_normal``."""
    dtype = _normalize_dtype(dtype, 'truncated_normal: dtype')
    seed = _op_seed(seed)
    shape = _shape_arg(shape)
    if tf.executing_eagerly():
        return tf.random.stateless_truncated_normal(shape, _stateless_seed(seed), mean, stddev,
                                                    dtype)
    return tf.random.truncated_normal(shape, mean, stddev, dtype=dtype, seed=seed)


# ---------------------------------------------------------------------------
# CTC
# ---------------------------------------------------------------------------

@graph_aware
def ctc_label_dense_to_sparse(labels, label_lengths):
    """A ``tf.SparseTensor`` built with ``tf.sequence_mask`` and
    ``tf.gather_nd``."""
    labels = _to_tensor(labels)
    lengths = tf.reshape(tf.cast(_to_tensor(label_lengths), 'int32'), [-1])
    lab_shape = tf.shape(labels)
    mask = tf.sequence_mask(lengths, maxlen=lab_shape[1])
    indices = tf.where(mask)
    values = tf.gather_nd(labels, indices)
    return tf.SparseTensor(indices, values, tf.cast(lab_shape, 'int64'))


@graph_aware
def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """``tf.compat.v1.nn.ctc_loss`` (time-major) of ``log(y_pred + epsilon)``;
    the blank is the last class."""
    y_pred = _to_tensor(y_pred)
    label_length = tf.reshape(tf.cast(_to_tensor(label_length), 'int32'), [-1])
    input_length = tf.reshape(tf.cast(_to_tensor(input_length), 'int32'), [-1])
    sparse_labels = ctc_label_dense_to_sparse(y_true, label_length)
    sparse_labels = tf.SparseTensor(sparse_labels.indices,
                                    tf.cast(sparse_labels.values, 'int32'),
                                    sparse_labels.dense_shape)
    logits = tf.math.log(tf.transpose(y_pred, [1, 0, 2]) + _constant_like(y_pred, epsilon()))
    loss = tf.compat.v1.nn.ctc_loss(labels=sparse_labels, inputs=logits,
                                    sequence_length=input_length, time_major=True)
    return tf.expand_dims(loss, 1)


@graph_aware
def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1,
               merge_repeated=False):
    """``tf.nn.ctc_greedy_decoder`` (repeats always merged) or
    ``tf.compat.v1.nn.ctc_beam_search_decoder``; the blank is the last class; decoded labels
    are int64 padded with -1."""
    y_pred = _to_tensor(y_pred)
    logits = tf.math.log(tf.transpose(y_pred, [1, 0, 2]) + _constant_like(y_pred, epsilon()))
    if logits.dtype != tf.float32 and logits.dtype != tf.float64:
        logits = tf.cast(logits, 'float32')
    input_length = tf.reshape(tf.cast(_to_tensor(input_length), 'int32'), [-1])
    if greedy:
        decoded, log_prob = tf.nn.ctc_greedy_decoder(inputs=logits, sequence_length=input_length,
                                                     merge_repeated=True)
    else:
        if int(top_paths) > int(beam_width):
            raise ValueError('top_paths: must be <= beam_width, got %r > %r'
                             % (top_paths, beam_width))
        decoded, log_prob = tf.compat.v1.nn.ctc_beam_search_decoder(
            inputs=logits, sequence_length=input_length, beam_width=int(beam_width),
            top_paths=int(top_paths), merge_repeated=bool(merge_repeated))
    # The batch size of the decoded labels is y_pred's (known statically when
    # y_pred's is); their length depends on the data.
    dense = [_set_shape(tf.sparse.to_dense(st, default_value=-1), [y_pred.shape[0], None])
             for st in decoded]
    return dense, log_prob


# ---------------------------------------------------------------------------
# Higher-order functions
# ---------------------------------------------------------------------------

@graph_always
def map_fn(fn, elems, name=None, dtype=None):
    """``tf.map_fn`` (``dtype`` becomes its ``fn_output_signature``)."""
    kwargs = {}
    if dtype is not None:
        kwargs['fn_output_signature'] = tf.as_dtype(_normalize_dtype(dtype, 'map_fn: dtype'))
    return tf.map_fn(fn, _to_tensor(elems), name=name, **kwargs)


@graph_always
def foldl(fn, elems, initializer=None, name=None):
    """``tf.foldl``."""
    return tf.foldl(fn, _to_tensor(elems), initializer=initializer, name=name)


@graph_always
def foldr(fn, elems, initializer=None, name=None):
    """``tf.foldr``."""
    return tf.foldr(fn, _to_tensor(elems), initializer=initializer, name=name)


# ---------------------------------------------------------------------------
# Locally connected
# ---------------------------------------------------------------------------

@graph_aware
def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """Patches flattened in ``(k, in)`` order, multiplied by one batched
    ``tf.linalg.matmul``."""
    data_format = normalize_data_format(data_format)
    k = shape_rules.normalize_tuple(kernel_size, 1, 'kernel_size')[0]
    s = shape_rules.normalize_tuple(strides, 1, 'strides')[0]
    x = _to_tensor(inputs)
    kernel = tf.cast(_check_kernel(kernel, 3), x.dtype)
    x = _to_channels_last(x, data_format)
    out_len = kernel.shape[0]
    if out_len is None:
        raise ValueError('kernel: the number of output steps (axis 0) must be static')
    batch = _dyn_dims(x)[0]
    patches = [tf.reshape(x[:, i * s:i * s + k, :], _shape_arg([batch, -1]))
               for i in range(out_len)]
    stacked = tf.stack(patches, 0)            # (out_len, batch, k * in)
    out = tf.matmul(stacked, kernel)          # (out_len, batch, filters)
    out = tf.transpose(out, [1, 0, 2])
    return _from_channels_last(out, data_format)


@graph_aware
def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """Patches flattened ``(kh, kw, in)`` (channels_last) or ``(in, kh, kw)``
    (channels_first), multiplied by one batched ``tf.linalg.matmul``."""
    data_format = normalize_data_format(data_format)
    kh, kw = shape_rules.normalize_tuple(kernel_size, 2, 'kernel_size')
    sh, sw = shape_rules.normalize_tuple(strides, 2, 'strides')
    rows, cols = shape_rules.normalize_tuple(output_shape, 2, 'output_shape')
    x = _to_tensor(inputs)
    kernel = tf.cast(_check_kernel(kernel, 3), x.dtype)
    if kernel.shape[0] is not None and kernel.shape[0] != rows * cols:
        raise ValueError('kernel: axis 0 has %d entries, output_shape %r needs %d'
                         % (kernel.shape[0], (rows, cols), rows * cols))
    batch = _dyn_dims(x)[0]
    patches = []
    for i in range(rows):
        for j in range(cols):
            if data_format == 'channels_last':
                p = x[:, i * sh:i * sh + kh, j * sw:j * sw + kw, :]
            else:
                p = x[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw]
            patches.append(tf.reshape(p, _shape_arg([batch, -1])))
    stacked = tf.stack(patches, 0)            # (rows * cols, batch, features)
    out = tf.matmul(stacked, kernel)          # (rows * cols, batch, filters)
    filters = kernel.shape[2]
    out = tf.reshape(out, _shape_arg([rows, cols, batch, -1 if filters is None else filters]))
    if data_format == 'channels_last':
        return tf.transpose(out, [2, 0, 1, 3])
    return tf.transpose(out, [2, 3, 0, 1])
