"""Activations and losses on TensorFlow: the engine-level functions of the names of
:mod:`keras_backend.api.activations`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from .. import shape_rules
from ..common import epsilon
from .core import graph_aware, tf, _constant_like, _set_shape, _to_tensor
from .helpers import _axis_arg, _dyn_dims, _op_seed, _shape_arg, _stateless_seed


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
        # where, not x * (x > thr): -inf below the threshold gives 0 (not NaN), NaN stays NaN
        kept = tf.where(x <= thr, tf.zeros((), x.dtype), x)
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
    """``tf.nn.softmax``; a slice holding a NaN (or giving one: +inf) is NaN throughout, as
    in numpy and on the other engines (TensorFlow's kernel gave numbers beside it)."""
    x = _to_tensor(x)
    out = tf.nn.softmax(x, axis=axis)
    if not x.dtype.is_floating:
        return out
    bad = tf.reduce_any(tf.math.is_nan(x) | tf.math.is_nan(out), axis=axis, keepdims=True)
    return tf.where(bad, tf.constant(float('nan'), out.dtype), out)


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
