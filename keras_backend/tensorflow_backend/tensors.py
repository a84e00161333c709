"""Tensors and variables on TensorFlow: the engine-level functions of the names of
:mod:`keras_backend.api.tensors`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import numpy as np

from .. import common, shape_rules
from . import core
from .core import (graph_aware, tf, _EagerTensor, _eval_eagerly, _graph, _is_symbolic,
                   _keras_meta, _normalize_dtype, _placeholders_needed, _to_tensor)
from .helpers import py_any, _int_tuple
from .random import random_normal, random_uniform


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
        twin = getattr(value, '_keras_backend_eager_twin', None)
        if twin is not None:
            # a random initial value (Keras' initialisers, inside the layer's name scope):
            # the same distribution and seed drawn eagerly, no program compiled for it
            with tf.init_scope():
                value = twin()
        elif isinstance(value, tf.Tensor) and value.op.type == 'Const':
            # a constant made in the graph (Keras' zeros / ones initialisers inside the
            # layer's name scope): its value is in the op, no program compiled for it
            value = tf.get_static_value(value)
        else:
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
        if not name:
            # unique under TensorFlow's open name scope, as TensorFlow 1's graph made it
            scope = tf.get_current_name_scope()
            name = common._unique_name(scope + '/variable' if scope else 'variable')
            name = name[len(scope) + 1:] if scope else name
        try:
            v = tf.Variable(init, dtype=dtype, name=name, constraint=constraint)
        except ValueError:
            v = tf.Variable(init, dtype=dtype, constraint=constraint)
    v._keras_backend_variable = True
    return _keras_meta(v, False)


def is_variable(x):
    """True for a ``tf.Variable``."""
    return isinstance(x, tf.Variable)


#: the most values a shared filled constant holds (see ``constant``)
SHARED_FILL_SIZE = 1 << 16


@graph_aware
def constant(value, dtype=None, shape=None, name=None):
    """``tf.constant``; a tensor ``value`` is cast with ``tf.cast`` (and reshaped to
    ``shape``)."""
    dtype = _normalize_dtype(dtype, 'constant: dtype')
    shape = shape_rules.constant_shape(shape)
    if isinstance(value, (tf.Tensor, tf.Variable)):
        out = tf.cast(value, dtype)
        if shape is None:
            return _keras_meta(tf.identity(out))
        n = out.shape.num_elements()
        if n == 1:             # one value fills the shape, as for a numpy value
            return _keras_meta(tf.broadcast_to(tf.reshape(out, ()), shape))
        if n is not None and n != int(np.prod(shape)):
            raise ValueError('constant: value of %d elements cannot fill shape %r'
                             % (n, shape))
        return _keras_meta(tf.reshape(out, shape))
    if not name and shape is not None and (type(value) in (int, float) or (
            isinstance(value, (np.number, np.ndarray)) and np.ndim(value) == 0)) and \
            int(np.prod(shape)) <= SHARED_FILL_SIZE:
        # one number filling a shape: Keras' Zeros / Ones / Constant initialisers, whose
        # value ``variable`` reads from the op (four per BatchNormalization, in its name
        # scope, hence in the module graph): one shared op per (dtype, shape, number)
        value = value.item() if isinstance(value, (np.number, np.ndarray)) else value
        if value == value:      # (a NaN is no key)
            shared = core._shared_constant(value, dtype, shape)
            if shared is not None:
                return _keras_meta(shared)
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
            shape = tuple(None if d is None else int(d) for d in shape_rules.as_dims(shape))
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
    """``tf.shape`` (int32); a sparse tensor gives its ``dense_shape``. Asked again for the
    same symbolic tensor, the same ``Shape`` op answers (Keras' layers ask it once per
    axis: one op for a layer, not one per question)."""
    if isinstance(x, tf.SparseTensor):
        return tf.cast(x.dense_shape, 'int32')
    return core._shape_of(_to_tensor(x))


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
