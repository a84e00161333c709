"""Math on TensorFlow: the engine-level functions of the names of
:mod:`keras_backend.api.math`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import numpy as np

from .. import shape_rules
from ..common import floatx
from .core import graph_aware, tf, _constant_like, _keras_meta, _set_shape, _shape_of, _to_tensor
from .core import _shared_constant
from .helpers import _axis_arg, _dyn_dims, _shape_arg


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
    axis = _axis_arg(axis, x.shape.rank)
    if axis is None and x.shape.rank is not None:
        # Keras' BatchNormalization multiplies its sizes (``K.prod([K.shape(x)[i] ...])``):
        # the axes as one shared constant (what TensorFlow would make for each call)
        shared = _shared_constant(tuple(range(x.shape.rank)), tf.int32)
        axis = axis if shared is None else shared
    return tf.reduce_prod(x, axis=axis, keepdims=keepdims)


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
    """``tf.argmax``; the indices are int64. A NaN counts as the largest value (the first
    NaN is the answer), as in numpy: TensorFlow's own kernel skips it."""
    x = _to_tensor(x)
    return _nan_first(tf.argmax, x, _axis_arg(axis, x.shape.rank))


@graph_aware
def argmin(x, axis=-1):
    """``tf.argmin``; the indices are int64. A NaN counts as the smallest value (the first
    NaN is the answer), as in numpy: TensorFlow's own kernel skips it."""
    x = _to_tensor(x)
    return _nan_first(tf.argmin, x, _axis_arg(axis, x.shape.rank))


def _nan_first(arg_op, x, axis):
    """``arg_op(x, axis)``, where a slice holding a NaN answers its first NaN's index."""
    if not x.dtype.is_floating:
        return arg_op(x, axis=axis)
    nan = tf.math.is_nan(x)
    first_nan = tf.argmax(tf.cast(nan, tf.int32), axis=axis)
    return tf.where(tf.reduce_any(nan, axis=axis), first_nan, arg_op(x, axis=axis))


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
    """``tf.clip_by_value``; a None bound becomes -inf / +inf (an integer dtype's
    extremes)."""
    x = _to_tensor(x)
    min_value, max_value = shape_rules.clip_bounds(min_value, max_value,
                                                   x.dtype.base_dtype.name)
    lo = _constant_like(x, min_value)
    hi = _constant_like(x, max_value)
    hi = tf.maximum(hi, lo)
    return tf.clip_by_value(x, lo, hi)


def _coerce_pair(x, y, fname=None):
    """``x`` and ``y`` as tensors; a non-tensor operand (number, list, numpy
    array) takes the dtype of the tensor one. Two tensors of different dtypes: TypeError
    naming ``fname`` (TensorFlow's binary ops take one dtype, as under Keras 2.3.1's
    TensorFlow backend, whose graph refused them with a TypeError)."""
    if not isinstance(x, (tf.Tensor, tf.Variable)) and isinstance(y, (tf.Tensor, tf.Variable)):
        y = _to_tensor(y)
        return _to_tensor(x, y.dtype), y
    x = _to_tensor(x)
    y = _to_tensor(y, x.dtype) if not isinstance(y, (tf.Tensor, tf.Variable)) else _to_tensor(y)
    if fname is not None and x.dtype.base_dtype != y.dtype.base_dtype:
        raise TypeError("%s: arguments 'x' and 'y' must have the same dtype on TensorFlow; "
                        "got %s and %s (cast one with K.cast)"
                        % (fname, x.dtype.base_dtype.name, y.dtype.base_dtype.name))
    return x, y


@graph_aware
def equal(x, y):
    """``tf.equal``; a non-tensor operand takes the tensor operand's dtype;
    tensors of two dtypes: TypeError."""
    x, y = _coerce_pair(x, y, 'equal')
    return tf.equal(x, y)


@graph_aware
def not_equal(x, y):
    """``tf.not_equal``; a non-tensor operand takes the tensor operand's dtype;
    tensors of two dtypes: TypeError."""
    x, y = _coerce_pair(x, y, 'not_equal')
    return tf.not_equal(x, y)


@graph_aware
def greater(x, y):
    """``tf.greater``; a non-tensor operand takes the tensor operand's dtype;
    tensors of two dtypes: TypeError."""
    x, y = _coerce_pair(x, y, 'greater')
    return tf.greater(x, y)


@graph_aware
def greater_equal(x, y):
    """``tf.greater_equal``; a non-tensor operand takes the tensor operand's dtype;
    tensors of two dtypes: TypeError."""
    x, y = _coerce_pair(x, y, 'greater_equal')
    return tf.greater_equal(x, y)


@graph_aware
def less(x, y):
    """``tf.less``; a non-tensor operand takes the tensor operand's dtype;
    tensors of two dtypes: TypeError."""
    x, y = _coerce_pair(x, y, 'less')
    return tf.less(x, y)


@graph_aware
def less_equal(x, y):
    """``tf.less_equal``; a non-tensor operand takes the tensor operand's dtype;
    tensors of two dtypes: TypeError."""
    x, y = _coerce_pair(x, y, 'less_equal')
    return tf.less_equal(x, y)


@graph_aware
def maximum(x, y):
    """``tf.maximum``; a non-tensor operand takes the tensor operand's dtype;
    tensors of two dtypes: TypeError."""
    x, y = _coerce_pair(x, y, 'maximum')
    return tf.maximum(x, y)


@graph_aware
def minimum(x, y):
    """``tf.minimum``; a non-tensor operand takes the tensor operand's dtype;
    tensors of two dtypes: TypeError."""
    x, y = _coerce_pair(x, y, 'minimum')
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
    (Keras' BatchNormalization on channels_last images; also 5-D over (0, 1, 2, 3), the
    frames folded into the batch) runs TensorFlow's fused kernel (``FusedBatchNormV3``, its
    gradient ``FusedBatchNormGradV3``, as Keras 2.3.1's TensorFlow backend and tf_keras do),
    its returned variance the batch's biased one as on the other path and every engine
    (the kernel hands back the unbiased one)."""
    x = _to_tensor(x)
    n = x.shape.rank
    axes = shape_rules.normalize_axes(list(reduction_axes), n)
    if _fused_batch_norm_applies(x, gamma, beta, axes, epsilon):
        if n == 4:
            return _fused_normalize_batch_in_training(x, gamma, beta, epsilon)
        # 5-D (Keras' BatchNormalization after ConvLSTM2D or Conv3D): the same statistics
        # over the frames folded into the batch, as tf_keras runs it
        shape = tf.shape(x)
        normed, mean, var = _fused_normalize_batch_in_training(
            tf.reshape(x, tf.concat([[-1], shape[2:]], 0)), gamma, beta, epsilon)
        normed = tf.reshape(normed, shape)
        normed.set_shape(x.shape)
        return normed, mean, var
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
    change of result: float32 NHWC statistics over (0, 1, 2) (or NDHWC over (0, 1, 2, 3)),
    parameters 1-D or None, and an ``epsilon`` the kernel takes as given (it raises smaller
    ones to 1.001e-5)."""
    rank = x.shape.rank
    if rank not in (4, 5) or tuple(sorted(axes)) != tuple(range(rank - 1)) or \
            x.dtype != tf.float32:
        return False
    if float(epsilon) < 1.001e-5:
        return False
    for p in (gamma, beta):
        if p is not None and (getattr(p, 'shape', None) is None or len(p.shape) != 1):
            return False
    return True


def _fused_normalize_batch_in_training(x, gamma, beta, epsilon):
    dims = _shape_of(x)
    channels = x.shape[-1]

    def filled(value):
        # (Keras' BatchNormalization(scale=False) has no gamma: InceptionV3's 94)
        if channels is not None:
            shared = _shared_constant(value, tf.float32, (channels,))
            if shared is not None:
                return shared
        return tf.fill(dims[-1:], tf.constant(value, tf.float32))

    # (read once: the batch norm and the IdentityN below both take them)
    scale = (filled(1.) if gamma is None
             else tf.convert_to_tensor(_to_tensor(gamma, tf.float32)))
    offset = (filled(0.) if beta is None
              else tf.convert_to_tensor(_to_tensor(beta, tf.float32)))
    empty = _shared_constant((), tf.float32)
    if empty is None:
        empty = tf.constant([], tf.float32)
    normed, mean, var = tf.raw_ops.FusedBatchNormV3(
        x=x, scale=scale, offset=offset, mean=empty, variance=empty,
        epsilon=float(epsilon), data_format='NHWC', is_training=True)[:3]
    # the kernel's variance has Bessel's correction (n / (n - 1), none when n is 1); n, the
    # values per channel, is x's size over its channels when they are known (two ops,
    # where slicing and multiplying the sizes takes four and their constants)
    if channels is not None and channels > 0:
        count = tf.cast(tf.size(x, out_type=tf.int64), tf.float32) / float(channels)
    else:
        count = tf.cast(tf.reduce_prod(dims[:3]), tf.float32)
    one = _constant_like(count, 1.)
    var = var * tf.maximum(count - one, one) / tf.maximum(count, one)
    # The results pass through an IdentityN whose gradient is _fused_batch_norm_grad
    # (what tf.custom_gradient builds, less its per-call registration and checks): the
    # gradient of the three results goes straight to x, scale and offset.
    g = tf.compat.v1.get_default_graph()
    with g.gradient_override_map({'IdentityN': _FUSED_GRAD}):
        found = tf.raw_ops.IdentityN(input=[normed, mean, var, x, scale, offset, count])
    return found[0], found[1], found[2]


_FUSED_GRAD = 'KerasBackendFusedBatchNorm'


@tf.RegisterGradient(_FUSED_GRAD)
def _fused_batch_norm_grad(op, d_normed, d_mean, d_var, *unused):
    """The gradient of ``_fused_normalize_batch_in_training``'s results with respect to its
    ``x``, ``scale`` and ``offset`` (the IdentityN's inputs 3-5; none to the rest)."""
    normed, mean, _, x, scale, _, count = op.inputs
    fused = normed.op
    epsilon = fused.get_attr('epsilon')
    # The kernel's own gradient op (what TensorFlow registers for it) covers the
    # normalised output; what reaches the batch statistics (which TensorFlow drops)
    # is added here. Called directly, not through tf.gradients: that walks every
    # consumer of x, the rest of the model, once per layer (quadratic in depth).
    if d_normed is None:
        d_normed = tf.zeros_like(normed)
    dx, dscale, doffset = tf.raw_ops.FusedBatchNormGradV3(
        y_backprop=d_normed, x=x, scale=scale, reserve_space_1=fused.outputs[3],
        reserve_space_2=fused.outputs[4], reserve_space_3=fused.outputs[5],
        epsilon=epsilon, data_format='NHWC', is_training=True)[:3]
    # TensorFlow hands unused statistics a ZerosLike: nothing to add then (Keras'
    # BatchNormalization only reads them into its moving averages); otherwise
    # the two terms cost four passes over the activations
    if not _known_zero(d_mean):
        dx = dx + d_mean / count
    if not _known_zero(d_var):
        dx = dx + d_var * 2. * (x - mean) / count
    return [None, None, None, dx, dscale, doffset, None]


def _known_zero(t):
    """Whether the gradient ``t`` is None or zeros by construction (``tf.gradients`` gives
    an op's unused outputs a ``ZerosLike``)."""
    if t is None:
        return True
    if getattr(getattr(t, 'op', None), 'type', None) == 'ZerosLike':
        return True
    value = tf.get_static_value(t)
    return value is not None and not np.any(value)


def _broadcast_param(p, x, axis):
    """Lay a 1-D parameter along ``axis`` of ``x`` (other ranks are left as is)."""
    if p is None:
        return None
    p = _to_tensor(p, x.dtype)
    n = x.shape.rank
    if p.shape.rank == 1 and n is not None and n > 1 and axis != n - 1:
        # (along the last axis a 1-D parameter broadcasts as it is)
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
