"""Shape manipulation on PyTorch: the engine-level functions of the names of
:mod:`keras_backend.api.shapes`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import math as _math

import numpy as np

from .. import common, shape_rules
from ..common import floatx
from . import core
from .core import (torch, records_keras_shape, Tensor, _apply, _builtin_any, _device,
                   _holds_graph_values, _host, _ndim, _normalize_dtype, _shaped_node,
                   _size_tuple, _to_tensor, _torch_dtype)
from .tensors import _engine_int_shape
from .math import max


def _common(ts):
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = torch.promote_types(dt, t.dtype)
    meta = _builtin_any(t.device.type == 'meta' for t in ts)
    return [t.to(dtype=dt, device='meta' if meta else t.device) for t in ts]


@records_keras_shape
def concatenate(tensors, axis=-1):
    """``torch.cat``; a negative axis counts from the first tensor's rank."""
    tensors = [_to_tensor(t) for t in tensors]
    nd = _ndim(tensors[0])
    ax = axis % nd if nd else 0
    return _apply(lambda ts: torch.cat(_common(list(ts)), dim=ax), tensors)


@records_keras_shape
def reshape(x, shape):
    """``torch.reshape``; sizes may be scalar tensors or a shape tensor."""
    x = _to_tensor(x)

    def op(v, s):
        return torch.reshape(v, _size_tuple(s))
    if isinstance(shape, (list, tuple)):
        shape = list(shape)
    if not isinstance(x, Tensor) and not _holds_graph_values(shape if isinstance(
            shape, list) else [shape]):
        return op(x, shape)
    try:
        return _apply(op, x, shape)
    except (TypeError, ValueError, RuntimeError):
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
            sizes = [int(a) if a == b else None
                     for a, b in zip(_host(shape.pvals[0]), _host(shape.pvals[1]))]
        else:
            sizes = [None] * shape.shape[0]
    else:
        sizes = []
        for s in shape:
            if isinstance(s, Tensor):
                p = s.pvals
                sizes.append(int(_host(p[0])) if p is not None and
                             int(_host(p[0])) == int(_host(p[1])) else None)
            else:
                sizes.append(int(_host(s)))
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
    return _apply(lambda v: v.permute(pattern), _to_tensor(x))


@records_keras_shape
def resize_images(x, height_factor, width_factor, data_format, interpolation='nearest'):
    """Nearest: ``repeat_interleave`` on both axes; bilinear: ``F.interpolate``
    (half-pixel centres, as TensorFlow's ``resize`` with ``half_pixel_centers``)."""
    data_format = common.normalize_data_format(data_format)
    x = _to_tensor(x)
    interpolation = shape_rules.normalize_interpolation(interpolation)
    hf, wf = int(height_factor), int(width_factor)
    h_ax, w_ax = (2, 3) if data_format == 'channels_first' else (1, 2)

    def op(v):
        if interpolation == 'nearest':
            return torch.repeat_interleave(torch.repeat_interleave(v, hf, dim=h_ax), wf,
                                           dim=w_ax)
        cf = v if data_format == 'channels_first' else v.permute(0, 3, 1, 2)
        dt = cf.dtype
        if not cf.is_floating_point():
            cf = cf.to(_torch_dtype(floatx()))
        y = torch.nn.functional.interpolate(cf, scale_factor=(hf, wf), mode='bilinear',
                                            align_corners=False).to(dt)
        return y if data_format == 'channels_first' else y.permute(0, 2, 3, 1)
    return _apply(op, x)


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    data_format = common.normalize_data_format(data_format)
    x = _to_tensor(x)
    axes = (2, 3, 4) if data_format == 'channels_first' else (1, 2, 3)
    factors = (int(depth_factor), int(height_factor), int(width_factor))

    def op(v):
        for a, f in zip(axes, factors):
            v = torch.repeat_interleave(v, f, dim=a)
        return v
    return _apply(op, x)


@records_keras_shape
def repeat_elements(x, rep, axis):
    x = _to_tensor(x)
    return _apply(lambda v, r: torch.repeat_interleave(v, int(_host(r)), dim=axis % v.ndim),
                  x, rep)


@records_keras_shape
def repeat(x, n):
    """A 2-D ``(samples, dim)`` becomes ``(samples, n, dim)``."""
    x = _to_tensor(x)
    return _apply(lambda v, k: torch.repeat_interleave(v[:, None, :], int(_host(k)), dim=1),
                  x, n)


def arange(start, stop=None, step=1, dtype='int32'):
    if stop is None and isinstance(start, (int, np.integer)) and start < 0:
        start = 0
    dt = _torch_dtype(_normalize_dtype(dtype))

    def op(a, b, s):
        a, b, s = [None if v is None else _host(v).item() for v in (a, b, s)]
        if b is None:
            a, b = 0, (a if a > 0 else 0)
        return torch.arange(a, b, s, device=core._DEVICE).to(dt)
    if _builtin_any(isinstance(v, Tensor) and v.pvals is None for v in (start, stop, step)):
        # a bound read from a fed value: the length is known when the function runs
        return _shaped_node(op, (start, stop, step), (None,), dt)
    return _apply(op, start, stop, step)


@records_keras_shape
def tile(x, n):
    """``Tensor.repeat``; ``n`` may mix ints and scalar tensors, or be a shape tensor."""
    x = _to_tensor(x)
    if isinstance(n, (list, tuple)):
        n = list(n)

    def op(v, k):
        reps = _size_tuple(k)
        if len(reps) < v.ndim:
            reps = (1,) * (v.ndim - len(reps)) + tuple(reps)
        return v.repeat(*reps) if reps else v.clone()
    return _apply(op, x, n)


@records_keras_shape
def flatten(x):
    return _apply(lambda v: torch.reshape(v, (-1,)), _to_tensor(x))


@records_keras_shape
def batch_flatten(x):
    # the sizes, not -1: an empty batch leaves -1 undetermined
    return _apply(lambda v: torch.reshape(v, (v.shape[0], int(np.prod(v.shape[1:])))),
                  _to_tensor(x))


@records_keras_shape
def expand_dims(x, axis=-1):
    x = _to_tensor(x)
    axis = int(axis)
    return _apply(lambda v: torch.unsqueeze(v, axis if axis >= 0 else v.ndim + 1 + axis), x)


@records_keras_shape
def squeeze(x, axis):
    x = _to_tensor(x)
    axis = int(axis)

    def op(v):
        a = axis % v.ndim
        if v.shape[a] != 1:
            raise ValueError('squeeze: axis %d has size %d, not 1' % (axis, v.shape[a]))
        return torch.squeeze(v, a)
    return _apply(op, x)


def _pad(v, full):
    """``full`` ((before, after) per axis, first axis first) as ``F.pad``'s list."""
    flat = []
    for before, after in reversed(full):
        flat += [int(before), int(after)]
    return torch.nn.functional.pad(v, flat)


@records_keras_shape
def temporal_padding(x, padding=(1, 1)):
    x = _to_tensor(x)
    a, b = (int(p) for p in padding)
    return _apply(lambda v: _pad(v, ((0, 0), (a, b), (0, 0))), x)


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
    return _apply(lambda v: _pad(v, full), x)


stack = core.stack


@records_keras_shape
def one_hot(indices, num_classes):
    """``F.one_hot`` over a new last axis, floatx (indices out of range give zeros)."""
    indices = _to_tensor(indices)

    def op(i, n):
        n = int(_host(n))
        i = i.long()
        classes = torch.arange(n, device=i.device)
        return (i[..., None] == classes).to(_torch_dtype(floatx()))
    return _apply(op, indices, num_classes)


@records_keras_shape
def reverse(x, axes):
    x = _to_tensor(x)
    if isinstance(axes, (int, np.integer)):
        axes = [axes]
    axes = tuple(int(a) for a in axes)
    return _apply(lambda v: torch.flip(v, dims=tuple(a % v.ndim for a in axes)), x)


@records_keras_shape
def slice(x, start, size):
    """Basic slicing with static sizes (a size of -1 runs to the end)."""
    x = _to_tensor(x)

    def op(v, st, sz):
        st = [int(_host(s)) for s in st]
        sz = [int(_host(s)) for s in sz]
        sz = [v.shape[i] - st[i] if s == -1 else s for i, s in enumerate(sz)]
        return v[tuple(_py_slice(a, a + b) for a, b in zip(st, sz))]
    return _apply(op, x, list(start), list(size))


_py_slice = core._builtin_slice


@records_keras_shape
def pattern_broadcast(x, broadcastable):
    """Returns ``x``: PyTorch broadcasts size-1 axes by shape, so no pattern is needed."""
    return _to_tensor(x)
