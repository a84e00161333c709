"""Shape manipulation on JAX: the engine-level functions of the names of
:mod:`keras_backend.api.shapes`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import math as _math

import numpy as np

from .. import common, shape_rules
from ..common import floatx
from . import core
from .core import (jax, jnp, records_keras_shape, Tensor, _apply, _builtin_any,
                   _holds_graph_values, _ndim, _normalize_dtype, _shaped_node, _size_tuple,
                   _to_tensor)
from .tensors import _engine_int_shape
from .math import max

from jax import lax  # noqa: E402  (core imported it, or said how to install it)


@records_keras_shape
def concatenate(tensors, axis=-1):
    """``jnp.concatenate``; a negative axis counts from the first tensor's rank."""
    tensors = [_to_tensor(t) for t in tensors]
    nd = _ndim(tensors[0])
    ax = axis % nd if nd else 0
    return _apply(lambda ts: jnp.concatenate(ts, axis=ax), tensors)


@records_keras_shape
def reshape(x, shape):
    """``jnp.reshape``; sizes may be scalar tensors or a shape tensor (concrete when
    traced)."""
    x = _to_tensor(x)

    def op(v, s):
        return jnp.reshape(v, _size_tuple(s))
    if isinstance(shape, (list, tuple)):
        shape = list(shape)
    if not isinstance(x, Tensor) and not _holds_graph_values(shape if isinstance(
            shape, list) else [shape]):
        return op(x, shape)
    try:
        return _apply(op, x, shape)
    except (TypeError, ValueError):
        # the probe sizes cannot give the result (a fixed target for an input of unknown
        # batch, sizes read from another tensor): the static shape comes from the target
        target = _static_reshape_target(x, shape)
        if target is None:
            raise
        return _shaped_node(op, (x, shape), target, x.dtype)


def _static_reshape_target(x, shape):
    """The static shape of ``reshape(x, shape)`` (None where unknown), or None when
    ``shape``'s length is not known."""
    if isinstance(shape, Tensor):
        if shape.ndim != 1 or shape.shape[0] is None:
            return None
        if shape.pvals is not None:
            sizes = [int(a) if a == b else None for a, b in zip(*shape.pvals)]
        else:
            sizes = [None] * shape.shape[0]
    else:
        sizes = []
        for s in shape:
            if isinstance(s, Tensor):
                p = s.pvals
                sizes.append(int(p[0]) if p is not None and int(p[0]) == int(p[1]) else None)
            else:
                sizes.append(int(np.asarray(s)))
    if -1 in sizes:
        known = [d for d in sizes if d is not None and d != -1]
        xs = _engine_int_shape(x)
        if None in xs or None in sizes:
            sizes[sizes.index(-1)] = None
        else:
            sizes[sizes.index(-1)] = int(_math.prod(xs)) // max(1, int(_math.prod(known)))
    return tuple(sizes)


@records_keras_shape
def permute_dimensions(x, pattern):
    pattern = tuple(int(p) for p in pattern)
    return _apply(lambda v: jnp.transpose(v, pattern), _to_tensor(x))


@records_keras_shape
def resize_images(x, height_factor, width_factor, data_format, interpolation='nearest'):
    """Nearest: ``jnp.repeat`` on both axes; bilinear: ``jax.image.resize`` (half-pixel
    centres, as TensorFlow's ``resize`` with ``half_pixel_centers``)."""
    data_format = common.normalize_data_format(data_format)
    x = _to_tensor(x)
    interpolation = shape_rules.normalize_interpolation(interpolation)
    hf, wf = int(height_factor), int(width_factor)
    h_ax, w_ax = (2, 3) if data_format == 'channels_first' else (1, 2)

    def op(v):
        if interpolation == 'nearest':
            return jnp.repeat(jnp.repeat(v, hf, axis=h_ax), wf, axis=w_ax)
        shape = list(v.shape)
        shape[h_ax] *= hf
        shape[w_ax] *= wf
        return jax.image.resize(v, shape, method='bilinear').astype(v.dtype)
    return _apply(op, x)


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    data_format = common.normalize_data_format(data_format)
    x = _to_tensor(x)
    axes = (2, 3, 4) if data_format == 'channels_first' else (1, 2, 3)
    factors = (int(depth_factor), int(height_factor), int(width_factor))

    def op(v):
        for a, f in zip(axes, factors):
            v = jnp.repeat(v, f, axis=a)
        return v
    return _apply(op, x)


@records_keras_shape
def repeat_elements(x, rep, axis):
    x = _to_tensor(x)
    return _apply(lambda v, r: jnp.repeat(v, int(np.asarray(r)), axis=axis % v.ndim), x, rep)


@records_keras_shape
def repeat(x, n):
    """A 2-D ``(samples, dim)`` becomes ``(samples, n, dim)``."""
    x = _to_tensor(x)
    return _apply(lambda v, k: jnp.repeat(v[:, None, :], int(np.asarray(k)), axis=1), x, n)


def arange(start, stop=None, step=1, dtype='int32'):
    if stop is None and isinstance(start, (int, np.integer)) and start < 0:
        start = 0
    dt = _normalize_dtype(dtype)

    def op(a, b, s):
        a, b, s = [None if v is None else np.asarray(v).item() for v in (a, b, s)]
        if b is None and a < 0:
            a = 0
        return jnp.arange(a, b, s, dtype=dt)
    if _builtin_any(isinstance(v, Tensor) and v.pvals is None for v in (start, stop, step)):
        # a bound read from a fed value: the length is known when the function runs
        # (``function`` then compiles once per value of that input)
        return _shaped_node(op, (start, stop, step), (None,), dt)
    return _apply(op, start, stop, step)


@records_keras_shape
def tile(x, n):
    """``jnp.tile``; ``n`` may mix ints and scalar tensors, or be a shape tensor."""
    x = _to_tensor(x)
    if isinstance(n, (list, tuple)):
        n = list(n)
    return _apply(lambda v, k: jnp.tile(v, _size_tuple(k)), x, n)


@records_keras_shape
def flatten(x):
    return _apply(lambda v: jnp.reshape(v, (-1,)), _to_tensor(x))


@records_keras_shape
def batch_flatten(x):
    # the sizes, not -1: an empty batch leaves -1 undetermined (jnp.reshape divides by 0)
    return _apply(lambda v: jnp.reshape(v, (v.shape[0], int(np.prod(v.shape[1:])))),
                  _to_tensor(x))


@records_keras_shape
def expand_dims(x, axis=-1):
    x = _to_tensor(x)
    axis = int(axis)
    return _apply(lambda v: jnp.expand_dims(v, axis if axis >= 0 else v.ndim + 1 + axis), x)


@records_keras_shape
def squeeze(x, axis):
    x = _to_tensor(x)
    axis = int(axis)
    return _apply(lambda v: jnp.squeeze(v, axis % v.ndim), x)


@records_keras_shape
def temporal_padding(x, padding=(1, 1)):
    x = _to_tensor(x)
    a, b = (int(p) for p in padding)
    return _apply(lambda v: jnp.pad(v, ((0, 0), (a, b), (0, 0))), x)


@records_keras_shape
def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    data_format = common.normalize_data_format(data_format)
    pads = shape_rules.normalize_spatial_padding(padding, 2)
    return _spatial_pad(_to_tensor(x), pads, data_format)


@records_keras_shape
def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    data_format = common.normalize_data_format(data_format)
    pads = shape_rules.normalize_spatial_padding(padding, 3)
    return _spatial_pad(_to_tensor(x), pads, data_format)


def _spatial_pad(x, pads, data_format):
    pads = [tuple(int(q) for q in p) for p in pads]
    if data_format == 'channels_first':
        full = [(0, 0), (0, 0)] + pads
    else:
        full = [(0, 0)] + pads + [(0, 0)]
    return _apply(lambda v: jnp.pad(v, full), x)


stack = core.stack


@records_keras_shape
def one_hot(indices, num_classes):
    """``jax.nn.one_hot`` over a new last axis, floatx."""
    indices = _to_tensor(indices)
    return _apply(lambda i, n: jax.nn.one_hot(i, int(np.asarray(n)), dtype=floatx()),
                  indices, num_classes)


@records_keras_shape
def reverse(x, axes):
    x = _to_tensor(x)
    if isinstance(axes, (int, np.integer)):
        axes = [axes]
    axes = tuple(int(a) for a in axes)
    return _apply(lambda v: jnp.flip(v, axis=tuple(a % v.ndim for a in axes)), x)


@records_keras_shape
def slice(x, start, size):
    """``lax.dynamic_slice`` with static sizes (a size of -1 runs to the end)."""
    x = _to_tensor(x)

    def op(v, st, sz):
        st = [int(np.asarray(s)) for s in st]
        sz = [int(np.asarray(s)) for s in sz]
        sz = [v.shape[i] - st[i] if s == -1 else s for i, s in enumerate(sz)]
        return lax.slice(v, st, [a + b for a, b in zip(st, sz)])
    return _apply(op, x, list(start), list(size))


@records_keras_shape
def pattern_broadcast(x, broadcastable):
    """Returns ``x``: JAX broadcasts size-1 axes by shape, so no pattern is needed."""
    return _to_tensor(x)
