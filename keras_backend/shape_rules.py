"""Engine-neutral argument normalisation and shape arithmetic for the adapters.

Every adapter calls these before it builds an engine op: the normalisation of
``strides``/``padding``/``pool_mode``/axis arguments, the output length and
the padding amounts of convolutions and pooling (``'valid'``, ``'same'``,
``'causal'``), the crop of transposed convolutions, the ``data_format``
permutations and the ``batch_dot`` axes rule. Nothing here imports an engine;
everything stays importable on CPython 3.6.
"""
import numpy as np


def broadcast_conflict(sa, sb):
    """True where static shapes ``sa`` and ``sb`` cannot broadcast (numpy's rule): an axis,
    aligned from the last, whose two sizes are known ints, neither 1, that differ (None and
    symbolic sizes are unknown and pass)."""
    ints = (int, np.integer)
    for a, b in zip(reversed(tuple(sa)), reversed(tuple(sb))):
        if isinstance(a, ints) and isinstance(b, ints) and a != b and a != 1 and b != 1:
            return True
    return False


# ---------------------------------------------------------------------------
# Argument normalisation shared by every adapter
# ---------------------------------------------------------------------------

def normalize_tuple(value, n, name):
    """Turn an int or an iterable of ``n`` ints into a tuple of ``n`` ints.

    Raises:
        ValueError: naming ``name`` when ``value`` is not an int or ``n`` ints.
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    try:
        values = tuple(value)
    except TypeError:
        raise ValueError('%s: expected an int or a tuple of %d ints, got %r' % (name, n, value))
    if len(values) != n or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        raise ValueError('%s: expected an int or a tuple of %d ints, got %r' % (name, n, value))
    return tuple(int(v) for v in values)


def constant_shape(shape):
    """The shape a constant is built with: a tuple of ints (one int ``n``: ``(n,)``, as
    ``tf.constant`` takes it), or None.

    Example:
        >>> constant_shape(3), constant_shape([2, 1]), constant_shape(None)
        ((3,), (2, 1), None)
    """
    if shape is None:
        return None
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def constant_array(arr, shape):
    """``arr`` (a numpy array) as a constant of ``shape`` (:func:`constant_shape`'s; None:
    as it is): one value fills the shape, as many values as the shape holds are reshaped.

    Raises:
        ValueError: another number of values (naming ``constant``).

    Example:
        >>> constant_array(np.array(2.), (2,)).tolist(), constant_array(np.arange(4), (2, 2)).shape
        ([2.0, 2.0], (2, 2))
    """
    if shape is None:
        return arr
    if arr.size == 1:
        return np.full(shape, arr.reshape(()), dtype=arr.dtype)
    if arr.size == int(np.prod(shape)):
        return arr.reshape(shape)
    raise ValueError('constant: value of %d elements cannot fill shape %r' % (arr.size, shape))


def is_static_size(value):
    """True for a size known before run time: a Python or numpy integer, or a 0-d
    numpy integer array (bools are not sizes)."""
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in 'iu'
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def sizes(value, is_tensor, name='shape'):
    """A size, count or shape argument in every form Keras 2.3.1's backends took.

    ``value`` is a static size (see :func:`is_static_size`), an engine tensor,
    or a list/tuple mixing static sizes, scalar engine tensors (``K.shape(x)[0]``)
    and ``None`` (an unknown size, where the function allows one). ``is_tensor``
    is the adapter's test for its engine's tensors.

    Returns:
        the engine tensor unchanged when ``value`` is one (a whole shape, or a
        scalar count); else a list holding Python ints, ``None`` and the scalar
        tensors, in order (a single static size gives a one-item list).

    Raises:
        TypeError: naming ``name`` for an item that is none of these.

    Example:
        >>> sizes((np.int64(2), 3, None), lambda v: False)
        [2, 3, None]
    """
    if is_tensor(value):
        return value
    if is_static_size(value):
        return [int(value)]
    if not isinstance(value, (list, tuple)):
        raise TypeError('%s: expected an int, a tensor or a tuple of them, got %r'
                        % (name, value))
    out = []
    for item in value:
        if item is None or is_tensor(item):
            out.append(item)
        elif is_static_size(item):
            out.append(int(item))
        else:
            raise TypeError('%s: expected ints, None or scalar tensors, got %r' % (name, value))
    return out


def all_static(items):
    """True when ``items`` (from :func:`sizes`) is a list of Python ints only."""
    return isinstance(items, list) and all(isinstance(i, int) for i in items)


def static_sizes(items):
    """``items`` (from :func:`sizes`) with every size not known statically as None."""
    return [i if isinstance(i, int) else None for i in items]


def normalize_padding(padding, allow_causal=False, extra=()):
    """Validate a conv/pool ``padding`` string; returns it lower-cased.

    ``extra``: an engine's own further paddings ('full' on Theano).

    Raises:
        ValueError: unless ``padding`` is 'valid', 'same' (or 'causal' when allowed, or
        one of ``extra``).
    """
    allowed = (('valid', 'same', 'causal') if allow_causal else ('valid', 'same')) + tuple(extra)
    p = padding.lower() if isinstance(padding, str) else padding
    if p not in allowed:
        raise ValueError('padding: unknown value %r; expected one of %s'
                         % (padding, ', '.join(repr(a) for a in allowed)))
    return p


def normalize_pool_mode(pool_mode):
    """Validate ``pool_mode``: 'max' or 'avg'."""
    if pool_mode not in ('max', 'avg'):
        raise ValueError("pool_mode: unknown value %r; expected 'max' or 'avg'" % (pool_mode,))
    return pool_mode


def normalize_interpolation(interpolation):
    """Validate ``interpolation``: 'nearest' or 'bilinear'."""
    if interpolation not in ('nearest', 'bilinear'):
        raise ValueError("interpolation: unknown value %r; expected 'nearest' or 'bilinear'"
                         % (interpolation,))
    return interpolation


def normalize_axis(axis, ndim, name='axis'):
    """Turn a (possibly negative) axis into a non-negative one.

    Raises:
        ValueError: when ``axis`` is out of range for ``ndim`` dimensions.
    """
    if is_static_size(axis):
        axis = int(axis)      # a numpy integer is a Python int from here on (CNTK's C++ wants one)
    if ndim is None:
        return axis
    if not -ndim <= axis < ndim:
        raise ValueError('%s: %r is out of range for a tensor of %d dimensions'
                         % (name, axis, ndim))
    return axis % ndim


def normalize_axes(axis, ndim):
    """Reduction axes: None -> all axes; int or list -> sorted tuple of non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = [axis]
    return tuple(sorted(set(normalize_axis(int(a), ndim) for a in axis)))


def batch_norm_axes(reduction_axes, x_ndim):
    """Reduction axes of ``normalize_batch_in_training`` as a sorted tuple: Theano's
    names 'per-activation' (axis 0) and 'spatial' (0 and every axis past the second),
    or an int / iterable of ints.

    Example:
        >>> batch_norm_axes('spatial', 4), batch_norm_axes([0, -1], 3)
        ((0, 2, 3), (0, 2))
    """
    if isinstance(reduction_axes, str):
        if reduction_axes == 'per-activation':
            return (0,)
        if reduction_axes == 'spatial':
            return (0,) + tuple(range(2, x_ndim))
        raise ValueError("normalize_batch_in_training: reduction_axes must be 'per-activation', "
                         "'spatial' or a list of ints, got %r" % (reduction_axes,))
    try:
        return normalize_axes(reduction_axes, x_ndim)
    except (TypeError, ValueError) as err:
        raise ValueError('normalize_batch_in_training: bad reduction_axes %r (%s)'
                         % (reduction_axes, err))


def normalize_spatial_padding(padding, n, name='padding'):
    """Normalise spatial padding to ``n`` (before, after) pairs of non-negative ints.

    Accepts an int (same on every side), ``n`` ints (symmetric per axis) or
    ``n`` pairs.
    """
    if isinstance(padding, (int, np.integer)) and not isinstance(padding, bool):
        pairs = [(int(padding), int(padding))] * n
    else:
        try:
            items = list(padding)
        except TypeError:
            raise ValueError('%s: expected an int, %d ints or %d pairs of ints, got %r'
                             % (name, n, n, padding))
        if len(items) != n:
            raise ValueError('%s: expected %d entries (one per spatial axis), got %r'
                             % (name, n, padding))
        pairs = []
        for item in items:
            if isinstance(item, (int, np.integer)):
                pairs.append((int(item), int(item)))
            else:
                pairs.append(normalize_tuple(item, 2, name))
    for a, b in pairs:
        if a < 0 or b < 0:
            raise ValueError('%s: expected non-negative amounts, got %r' % (name, padding))
    return tuple(pairs)


# ---------------------------------------------------------------------------
# Shape arithmetic (conv, pool, transposed conv)
# ---------------------------------------------------------------------------

def conv_output_length(length, kernel, padding, stride, dilation=1):
    """Output length of a conv/pool along one axis (None stays None).

    ``padding`` 'same'/'causal': ceil(length / stride);
    'valid': ceil((length - dilated_kernel + 1) / stride);
    'full' (Theano): ceil((length + dilated_kernel - 1) / stride).
    """
    if length is None:
        return None
    dk = (kernel - 1) * dilation + 1
    if padding in ('same', 'causal'):
        out = length
    elif padding == 'full':
        out = length + dk - 1
    else:
        out = length - dk + 1
    return max(0, (out + stride - 1) // stride)


def same_padding(length, kernel, stride, dilation=1):
    """(before, after) zero padding of TensorFlow's 'same' rule along one axis.

    Total = max((ceil(length/stride) - 1) * stride + dilated_kernel - length, 0);
    the extra cell, when odd, goes after. At stride 1 that is ``dilated_kernel - 1``
    whatever the length, so ``length`` may be None (unknown) there; ValueError at
    another stride.
    """
    dk = (kernel - 1) * dilation + 1
    if length is None:
        if stride != 1:
            raise ValueError("'same' padding of an unknown size depends on the size at "
                             "stride %r" % (stride,))
        length = dk
    out = (length + stride - 1) // stride
    total = max((out - 1) * stride + dk - length, 0)
    return total // 2, total - total // 2


def padding_amounts(length, kernel, stride, dilation, padding):
    """(before, after) padding for 'valid', 'same', 'causal' or 'full' along one axis."""
    if padding == 'valid':
        return 0, 0
    if padding == 'causal':
        return (kernel - 1) * dilation, 0
    if padding == 'full':
        return (kernel - 1) * dilation, (kernel - 1) * dilation
    return same_padding(length, kernel, stride, dilation)


def deconv_length(in_length, kernel, stride, padding, dilation=1):
    """The output length of a transposed conv without output padding, as Keras 2.3.1's
    ``Conv2DTranspose`` computes it (``conv_utils.deconv_length``): ``in * stride``
    for 'same', ``in * stride + max(k - stride, 0)`` for 'valid', ``in * stride - (stride +
    k - 2)`` for 'full' (``k`` dilated).

    Example:
        >>> deconv_length(3, 3, 2, 'valid')
        7
    """
    k = (kernel - 1) * dilation + 1
    if padding == 'same':
        return in_length * stride
    if padding == 'full':
        return in_length * stride - (stride + k - 2)
    return in_length * stride + max(k - stride, 0)


def deconv_crop(out_length, in_length, kernel, stride, padding, dilation=1):
    """For a transposed conv built as the gradient of a conv: (before, after)
    padding of the forward conv whose input length is ``out_length`` and
    whose output length must be ``in_length``.

    Raises:
        ValueError: when ``out_length`` is not a valid output size.
    """
    if conv_output_length(out_length, kernel, padding, stride, dilation) != in_length:
        raise ValueError('output_shape: a spatial size of %d is not compatible with input '
                         'size %d, kernel %d, stride %d and padding %r'
                         % (out_length, in_length, kernel, stride, padding))
    return padding_amounts(out_length, kernel, stride, dilation, padding)


# ---------------------------------------------------------------------------
# data_format permutations
# ---------------------------------------------------------------------------

def to_channels_last_perm(ndim):
    """Axis permutation taking a channels_first tensor to channels_last."""
    return (0,) + tuple(range(2, ndim)) + (1,)


def to_channels_first_perm(ndim):
    """Axis permutation taking a channels_last tensor to channels_first."""
    return (0, ndim - 1) + tuple(range(1, ndim - 1))


def check_ndim(x_ndim, expected, name, what):
    """Raise ValueError naming ``name`` unless ``x_ndim`` is in ``expected``."""
    if x_ndim is not None and x_ndim not in expected:
        raise ValueError('%s: expected a %s tensor of rank %s, got rank %d'
                         % (name, what, ' or '.join(str(e) for e in expected), x_ndim))


# ---------------------------------------------------------------------------
# batch_dot
# ---------------------------------------------------------------------------

def batch_dot_axes(x_ndim, y_ndim, axes):
    """Normalise ``batch_dot`` axes to a pair of non-negative ints (Keras 2.3 rules).

    ``axes`` None: (x_ndim - 1, y_ndim - 2), or (x_ndim - 1, y_ndim - 1) for 2-D ``y``.
    An int ``a`` means (a, a). Axis 0 (the batch axis) cannot be reduced.

    Raises:
        ValueError: for rank < 2 inputs, bad ``axes`` or a batch-axis reduction.
    """
    if x_ndim < 2 or y_ndim < 2:
        raise ValueError('batch_dot: x and y must have rank >= 2, got ranks %d and %d'
                         % (x_ndim, y_ndim))
    if axes is None:
        axes = (x_ndim - 1, y_ndim - 1 if y_ndim == 2 else y_ndim - 2)
    elif isinstance(axes, (int, np.integer)):
        axes = (int(axes), int(axes))
    else:
        axes = normalize_tuple(axes, 2, 'axes')
    ax = normalize_axis(axes[0], x_ndim, 'axes')
    ay = normalize_axis(axes[1], y_ndim, 'axes')
    if ax == 0 or ay == 0:
        raise ValueError('batch_dot: axes %r would reduce the batch axis 0' % (axes,))
    return ax, ay


def batch_dot_output_shape(x_shape, y_shape, ax, ay):
    """Static output shape of ``batch_dot``; a rank-1 result becomes (batch, 1)."""
    out = (tuple(x_shape[:ax]) + tuple(x_shape[ax + 1:])
           + tuple(y_shape[1:ay]) + tuple(y_shape[ay + 1:]))
    if len(out) == 1:
        out = out + (1,)
    return out


def op_seed(seed):
    """A random op's seed: ``seed`` taken modulo 2**32 (numpy's ``RandomState`` and CNTK take
    [0, 2**32); TensorFlow took any int, so Keras code passes negative ones), or for None a
    draw from numpy's global generator, as Keras 2.3.1's backends make it
    (``np.random.seed(n)`` reproduces Keras' weight initialisation)."""
    if seed is None:
        return int(np.random.randint(1, 10 ** 7))
    return int(seed) % 2 ** 32


def as_dims(shape):
    """A shape argument as a tuple: one int ``n`` is the shape ``(n,)`` (as numpy and
    TensorFlow read it), a list its tuple, None stays None."""
    if shape is None:
        return None
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return (int(shape),)
    return tuple(shape)


def nan_bound(*bounds):
    """True when one of ``clip``'s bounds is the number NaN: the result is NaN throughout, as
    numpy's and TensorFlow's clip give (Theano's and CNTK's own ignore the bound)."""
    return any(isinstance(v, (float, np.floating)) and v != v for v in bounds)


def clip_bounds(min_value, max_value, dtype=None):
    """``clip``'s bounds with ``None`` as -inf / +inf (an integer ``dtype``'s extremes) and,
    when both are numbers, an upper bound below the lower one raised to it (Keras 2's
    rule)."""
    if dtype is not None and np.dtype(dtype).kind in 'iu':
        info = np.iinfo(np.dtype(dtype))
        lowest, highest = int(info.min), int(info.max)
    else:
        lowest, highest = -np.inf, np.inf
    lo = lowest if min_value is None else min_value
    hi = highest if max_value is None else max_value
    if isinstance(lo, (int, float, np.number)) and isinstance(hi, (int, float, np.number)) \
            and hi < lo:
        hi = lo
    return lo, hi


def numeric_operand(value):
    """``value`` as a numpy array when it is a Python or numpy number, a numpy array or a
    (nested) list or tuple of numbers; None for anything else (strings, None, complex
    numbers, lists holding tensors): the rule the adapters' Python operators use for a
    non-tensor operand before answering ``NotImplemented``.

    Example:
        >>> numeric_operand([1, 2]).tolist(), numeric_operand('a')
        ([1, 2], None)
    """
    if not isinstance(value, (bool, int, float, np.generic, np.ndarray, list, tuple)):
        return None
    try:
        value = np.asarray(value)
    except (TypeError, ValueError):
        return None
    return value if value.dtype.kind in 'biuf' else None
