"""Helpers the sections of the Theano / PyTensor ops share.

Padding, the engine's ``scan`` and log-softmax; the channels-last layout, kernel checks and
the strided windows (im2col) that convolution, pooling and the locally connected layers are
built from.
"""
from __future__ import absolute_import, division, print_function

import itertools

import numpy as np

from .. import shape_rules
from .core import (T, _ball, _bany, _bmax, _bslice, _engine, _is_engine_tensor, _known_shape,
                   _size_argument, _with_shape)


def _pad(x, pads, value=0.):
    """Pad ``x`` (any rank) by ``pads``: a list of (before, after) per axis
    (ints or scalar tensors), filled with ``value``."""
    if _ball(not _is_engine_tensor(b) and not _is_engine_tensor(a) and b == 0 and a == 0
             for b, a in pads):
        return x
    s = _known_shape(x)
    dims = []
    idx = []
    static = []
    for i, (b, a) in enumerate(pads):
        d = _size_argument(s[i])
        d = x.shape[i] if d is None else d
        const = not _is_engine_tensor(b) and not _is_engine_tensor(a)
        dims.append(d if const and b == 0 and a == 0 else d + b + a)
        # constant bounds need no size arithmetic in the graph
        idx.append(_bslice(b or None, -a if a else None) if const else _bslice(b, b + d))
        static.append(s[i] + b + a if s[i] is not None and const else None)
    fill = T.constant(np.asarray(value, dtype=x.dtype))
    out = _engine.alloc(fill, *dims)
    out = T.set_subtensor(out[tuple(idx)], x)
    return _with_shape(out, static)


def _log_softmax(x, axis):
    """Log-softmax of ``x`` along the int ``axis`` (numerically stable)."""
    return _engine.log_softmax(x, axis)


def _scan(fn, **kwargs):
    """The outputs of the engine's ``scan`` of ``fn`` (its updates dropped);
    ``int_shape`` gives the static shapes of the outer tensors.

    An initial state broadcastable on an axis (a stateful layer's state variable of batch
    size 1: this adapter's variables are broadcastable on their size-1 axes) is carried
    unbroadcast, and so is each step's new state: else the gradient's scan meets that state
    beside the outputs' gradients, which are not broadcastable there (scan's
    broadcast-pattern TypeError), as Keras' Theano backend never met with its shared
    variables."""
    infos = kwargs.get('outputs_info')
    if isinstance(infos, (list, tuple)) and _bany(
            _is_engine_tensor(v) and _bany(v.broadcastable) for v in infos):
        infos = [_engine.unbroadcast(v) if _is_engine_tensor(v) else v for v in infos]
        kwargs = dict(kwargs, outputs_info=infos)
        step = fn

        def fn(*args):
            out = step(*args)
            many = isinstance(out, (list, tuple))
            outs = list(out) if many else [out]
            outs = [_engine.unbroadcast(o) if _is_engine_tensor(v) and _is_engine_tensor(o)
                    else o for o, v in zip(outs, infos)] + outs[len(infos):]
            return type(out)(outs) if many else outs[0]
    return _engine.scan(fn, _known_shape, **kwargs)


def _to_channels_last(x, data_format):
    if data_format == 'channels_first':
        return x.dimshuffle(shape_rules.to_channels_last_perm(x.ndim))
    return x


def _from_channels_last(x, data_format):
    if data_format == 'channels_first':
        return x.dimshuffle(shape_rules.to_channels_first_perm(x.ndim))
    return x


def _check_kernel(kernel, rank, name):
    ks = _known_shape(kernel)
    # the im2col build needs every kernel size; the shared rules allow unknown ones
    if len(ks) != rank or _bany(d is None for d in ks):
        raise ValueError('%s: expected a kernel of rank %d with a fully known static shape, '
                         'got %r' % (name, rank, ks))
    return ks


def _patches(x_cl, kernel_size, strides, dilation, pads, fill=0.):
    """Strided windows of a channels_last tensor ``(batch, *spatial, C)``.

    Returns the list (kernel offsets in row-major order) of tensors
    ``(batch, *out_spatial, C)``: element ``o`` of entry ``k`` is input cell
    ``o * stride + k * dilation`` of the padded input.
    """
    n = len(kernel_size)
    xp = _pad(x_cl, [(0, 0)] + list(pads) + [(0, 0)], fill)
    s_in = _known_shape(x_cl)
    out_static = [None] * n
    for i in range(n):
        b, a = pads[i]
        if s_in[i + 1] is not None and not _is_engine_tensor(b) and not _is_engine_tensor(a):
            dk = (kernel_size[i] - 1) * dilation[i] + 1
            out_static[i] = _bmax(0, (s_in[i + 1] + b + a - dk) // strides[i] + 1)
    result = []
    for offs in itertools.product(*[range(k) for k in kernel_size]):
        idx = [_bslice(None)]
        for i in range(n):
            dk = (kernel_size[i] - 1) * dilation[i] + 1
            start = offs[i] * dilation[i]
            tail = dk - 1 - start
            if start == 0 and tail == 0 and strides[i] == 1:
                # the whole axis: a plain ``:`` (Theano 1.0.5's local_dimshuffle_subtensor
                # breaks a ``0::1`` slice of a broadcastable axis that a DimShuffle then
                # drops: Keras' 1-D pooling on an expand_dims)
                idx.append(_bslice(None))
            else:
                idx.append(_bslice(start, -tail if tail > 0 else None, strides[i]))
        idx.append(_bslice(None))
        piece = xp[tuple(idx)]
        result.append(_with_shape(piece, (s_in[0],) + tuple(out_static) + (s_in[-1],)))
    return result
