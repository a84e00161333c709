"""Convolution and pooling on Theano 1.0.5 / PyTensor: the engine-level functions of the names of
:mod:`keras_backend.api.convolution`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from __future__ import absolute_import, division, print_function

import numpy as np

from .. import shape_rules
from ..common import normalize_data_format
from .core import (records_keras_shape, T, _ball, _bany, _bmax, _bmin, _broadcast_param,
                   _bslice, _constant_like, _engine, _is_engine_tensor, _known_shape,
                   _to_tensor, _with_shape)
from .helpers import _check_kernel, _from_channels_last, _pad, _patches, _to_channels_last


def _sym_same_padding(length, kernel, stride, dilation):
    """Symbolic (before, after) of TensorFlow's 'same' rule for an unknown length."""
    dk = (kernel - 1) * dilation + 1
    out = (length + stride - 1) // stride
    total = T.maximum((out - 1) * stride + dk - length, 0)
    return total // 2, total - total // 2


def _spatial_pads(x_cl, kernel_size, strides, dilation, padding):
    """(before, after) per spatial axis of a channels_last tensor."""
    s = _known_shape(x_cl)
    pads = []
    for i, k in enumerate(kernel_size):
        length = s[i + 1]
        if padding == 'same' and length is None and strides[i] != 1:
            pads.append(_sym_same_padding(x_cl.shape[i + 1], k, strides[i], dilation[i]))
        else:
            # at stride 1 an unknown length still pads by ints (the shared rule), which the
            # engine's own convolution and pooling ops take
            pads.append(shape_rules.padding_amounts(length, k, strides[i], dilation[i], padding))
    return pads


def _conv_core(x_cl, kernel, strides, dilation, pads):
    """N-d convolution (im2col): channels_last ``x`` ``(batch, *S, in)``,
    kernel ``(*K, in, out)``; gathers the strided windows and contracts them
    with the reshaped kernel through ``tensordot``."""
    n = x_cl.ndim - 2
    ks = _known_shape(kernel)
    cin, cout = ks[-2], ks[-1]
    cols = _patches(x_cl, ks[:n], strides, dilation, pads)
    col = cols[0] if len(cols) == 1 else T.concatenate(cols, axis=n + 1)
    w = T.reshape(kernel, (int(np.prod(ks[:n])) * cin, cout), ndim=2)
    out = T.tensordot(col, w, axes=[[n + 1], [0]])
    s = _known_shape(cols[0])
    return _with_shape(out, s[:-1] + (cout,))


def _uneven(pads):
    """Symmetric int pads per axis and the (before, after) left over of ``pads``, or None
    where a pad is symbolic."""
    if _bany(_is_engine_tensor(p) for pair in pads for p in pair):
        return None
    even = [_bmin(int(b), int(a)) for b, a in pads]
    return even, [(int(b) - m, int(a) - m) for (b, a), m in zip(pads, even)]


def _native_conv(x_cl, kernel, n, strides, dilation, pads, flip=False, depthwise=False):
    """The engine's own ``n``-D correlation (``_engine.conv2d`` / ``_engine.conv3d``, or
    ``_engine.depthwise_conv2d`` when ``depthwise``) of channels_last ``x`` with ``kernel``
    ``(*K, in, out)`` (its spatial axes reversed first when ``flip``: a true convolution),
    or None where the engine has none fit to run it or a pad is symbolic. 1-D runs as 2-D
    over a unit axis after the length, as in Keras' Theano backend. Uneven pads
    (TensorFlow's 'same', 'causal') pad ``x`` by the difference first."""
    s_in, ks = _known_shape(x_cl), _known_shape(kernel)
    if n == 1:
        split = _uneven(pads)
        if split is None:
            return None
        if split[1][0] != (0, 0):
            # uneven pads in 3-D, before the unit axis (as Keras' temporal_padding): the
            # pad's gradient, a slice, then has no broadcastable axis that the DimShuffle
            # dropping it takes (Theano 1.0.5's local_dimshuffle_subtensor fails there)
            x_cl = _pad(x_cl, [(0, 0), split[1][0], (0, 0)], 0.)
            pads = [(split[0][0], split[0][0])]
            s_in = _known_shape(x_cl)
        x2 = _with_shape(x_cl.dimshuffle(0, 1, 'x', 2), s_in[:2] + (1,) + s_in[2:])
        k2 = _with_shape(kernel.dimshuffle(0, 'x', 1, 2), ks[:1] + (1,) + ks[1:])
        out = _native_conv(x2, k2, 2, tuple(strides) + (1,), tuple(dilation) + (1,),
                           list(pads) + [(0, 0)], flip, depthwise)
        if out is None:
            return None
        s = _known_shape(out)
        return _with_shape(_engine.broadcastable_axes(out, [2]).dimshuffle(0, 1, 3),
                           s[:2] + s[3:])
    op = _engine.depthwise_conv2d if depthwise else {2: _engine.conv2d, 3: _engine.conv3d}[n]
    split = _uneven(pads)
    if op is None or split is None:
        return None
    even, extra = split
    xp = x_cl
    if _bany(b or a for b, a in extra):
        xp = _pad(x_cl, [(0, 0)] + extra + [(0, 0)], 0.)
    if depthwise:
        out = op(xp, kernel, strides, dilation, even)
    else:
        out = op(xp, kernel, strides, dilation, even, flip)
    if out is None:
        return None
    spatial = tuple(shape_rules.conv_output_length(
        None if s_in[i + 1] is None else s_in[i + 1] + int(pads[i][0]) + int(pads[i][1]),
        ks[i], 'valid', strides[i], dilation[i]) for i in range(n))
    channels = ks[-1] if not depthwise else (
        None if ks[-2] is None or ks[-1] is None else ks[-2] * ks[-1])
    return _with_shape(out, (s_in[0],) + spatial + (channels,))


def _depthwise_conv(x_cl, kernel, strides, dilation, pads):
    """N-d depthwise convolution: kernel ``(*K, in, mult)`` gives ``in * mult``
    channels, channel ``c * mult + m``."""
    n = x_cl.ndim - 2
    ks = _known_shape(kernel)
    cin, mult = ks[-2], ks[-1]
    cols = _patches(x_cl, ks[:n], strides, dilation, pads)
    stacked = T.stack(cols, axis=n + 1)  # (B, *O, nK, C)
    w = T.reshape(kernel, (int(np.prod(ks[:n])), cin, mult), ndim=3)
    prod_ = stacked.dimshuffle(list(range(n + 3)) + ['x']) * w
    out = T.sum(prod_, axis=n + 1)  # (B, *O, C, M)
    dims = [out.shape[i] for i in range(n + 1)] + [cin * mult]
    out = T.reshape(out, T.stack(dims), ndim=n + 2)
    s = _known_shape(cols[0])
    return _with_shape(out, s[:-1] + (cin * mult,))


#: Theano's 'full' convolution (zero padding of the dilated kernel's length - 1 on each
#: side), which Keras 2.3.1's Theano backend accepts for every convolution (not pooling)
_EXTRA_CONV_PADDINGS = ('full',)


def _conv_args(x, kernel, n, strides, padding, data_format, dilation_rate, name,
               allow_causal=False):
    x = _to_tensor(x)
    kernel = _to_tensor(kernel)
    data_format = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal, _EXTRA_CONV_PADDINGS)
    strides = shape_rules.normalize_tuple(strides, n, 'strides')
    dilation = shape_rules.normalize_tuple(dilation_rate, n, 'dilation_rate')
    return x, kernel, data_format, padding, strides, dilation


def _flip_kernel(kernel, n):
    """``kernel`` reversed along its ``n`` leading (spatial) axes, in the graph.

    Keras' Theano backend computes ``conv1d/2d/3d`` (and their transposes)
    as true convolutions (Theano's ``filter_flip=True``): the spatial axes
    of the kernel are flipped relative to TensorFlow's and CNTK's
    cross-correlation.  ``keras_backend.utils.convert_kernel`` converts
    kernels between the two conventions."""
    idx = tuple([_bslice(None, None, -1)] * n + [_bslice(None)] * (kernel.ndim - n))
    return _with_shape(kernel[idx], _known_shape(kernel))


def _conv_nd(x, kernel, n, strides, padding, data_format, dilation_rate, name):
    x, kernel, data_format, padding, strides, dilation = _conv_args(
        x, kernel, n, strides, padding, data_format, dilation_rate, name, n == 1)
    ks = _check_kernel(kernel, n + 2, name)
    x_cl = _to_channels_last(x, data_format)
    pads = _spatial_pads(x_cl, ks[:n], strides, dilation, padding)
    # the engine's op flips the kernel itself (as Keras' Theano backend has it do): the
    # reversed kernel's gradient is then a reversed slice, not a scatter into a new array
    out = _native_conv(x_cl, kernel, n, strides, dilation, pads, True)
    if out is None:
        out = _conv_core(x_cl, _flip_kernel(kernel, n), strides, dilation, pads)
    return _from_channels_last(out, data_format)


@records_keras_shape
def conv1d(x, kernel, strides=1, padding='valid', data_format=None, dilation_rate=1):
    """On Theano 1.0.5 with a BLAS, Theano's own ``conv2d`` (``CorrMM``) over a unit axis
    after the length, as Keras' Theano backend; else im2col: strided slices and
    ``tensordot``. A true convolution, as in Keras' Theano
    backend: the kernel is flipped relative to TensorFlow's and CNTK's
    cross-correlation (``keras_backend.utils.convert_kernel`` converts between them)."""
    return _conv_nd(x, kernel, 1, strides, padding, data_format, dilation_rate, 'conv1d')


@records_keras_shape
def conv2d(x, kernel, strides=(1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1)):
    """im2col: strided slices and ``tensordot``; on Theano 1.0.5 with a BLAS, Theano's own
    ``conv2d`` (``CorrMM``). A true convolution, as in Keras' Theano
    backend: the kernel is flipped relative to TensorFlow's and CNTK's
    cross-correlation (``keras_backend.utils.convert_kernel`` converts between them)."""
    return _conv_nd(x, kernel, 2, strides, padding, data_format, dilation_rate, 'conv2d')


def _native_conv_transpose(x_cl, kernel, out_cl, strides, dilation, pads):
    """The engine's own transposed convolution (``_engine.conv_transpose``, the kernel
    flipped: the adjoint of a true convolution) of channels_last ``x_cl`` to the ints of
    ``out_cl`` (batch None or int), or None where the engine has none or a pad is
    symbolic. Uneven pads: the adjoint of the convolution of the image padded by the
    difference, cropped by it after."""
    split = _uneven(pads)
    if _engine.conv_transpose is None or split is None:
        return None
    even, extra = split
    grown = (out_cl[0],) + tuple(d + b + a for d, (b, a) in zip(out_cl[1:-1], extra)) + \
        (out_cl[-1],)
    out = _engine.conv_transpose(x_cl, kernel, grown, strides, dilation, even, True)
    if out is None or not _bany(b or a for b, a in extra):
        return out
    crop = tuple([_bslice(None)] + [_bslice(b, b + d) for d, (b, a)
                                    in zip(out_cl[1:-1], extra)] + [_bslice(None)])
    return out[crop]


def _conv_transpose(x, kernel, output_shape, n, strides, padding, data_format,
                    dilation_rate, name):
    x, kernel, data_format, padding, strides, dilation = _conv_args(
        x, kernel, n, strides, padding, data_format, dilation_rate, name)
    ks = _check_kernel(kernel, n + 2, name)
    if _is_engine_tensor(output_shape):
        raise ValueError('%s: output_shape must be a tuple of ints (batch may be None)' % name)
    output_shape = shape_rules.sizes(output_shape, _is_engine_tensor, 'output_shape')
    if data_format == 'channels_first':
        given = [output_shape[0]] + output_shape[2:] + [output_shape[1]]
    else:
        given = list(output_shape)
    x_cl = _to_channels_last(x, data_format)
    in_s = _known_shape(x_cl)
    # Sizes given as tensors (Keras' Conv2DTranspose computes them from K.shape(x)):
    # the transposed conv's length for x's static size, checked against the tensor
    # when the function runs.
    # With 'valid' and 'full' padding a spatial size given as a tensor is used as it is (the
    # forward convolution's padding does not depend on it), so Keras' output_padding works. PyTensor
    # only: Theano 1.0.5 (no static sizes in its types) did not finish compiling that graph;
    # there a size that folds to an int from the static sizes it reads is used as that int.
    out_cl, run_checks = [given[0] if isinstance(given[0], int) else None], []
    z_sizes = {}
    for i, d in enumerate(given[1:]):
        if _is_engine_tensor(d) and not _engine.HAS_STATIC_SHAPES:
            # Theano 1.0.5: a size computed from static sizes (Keras' Conv2DTranspose
            # computes it from K.shape(x), output_padding included) is used as that int
            folded = _engine.static_int(d)
            d = d if folded is None else folded
        if not _is_engine_tensor(d):
            out_cl.append(d)
            continue
        if i < n and padding in ('valid', 'full') and _engine.HAS_STATIC_SHAPES:
            out_cl.append(None)
            z_sizes[i] = d
            continue
        if i == n:
            static = ks[-2]
        elif in_s[i + 1] is not None:
            static = shape_rules.deconv_length(in_s[i + 1], ks[i], strides[i], padding,
                                               dilation[i])
        else:
            static = None
        out_cl.append(static)
        if static is not None:
            run_checks.append((T.eq(d, static), static))
    out_cl = tuple(out_cl)
    # sizes given as tensors are known only here, once the engine has folded them
    if _bany(d is None for i, d in enumerate(out_cl[1:]) if i not in z_sizes):
        raise ValueError('%s: output_shape spatial and channel sizes must be ints, got %r'
                         % (name, output_shape))
    if out_cl[-1] != ks[-2]:
        raise ValueError('%s: output_shape has %d channels, kernel (k..., out, in) has %d'
                         % (name, out_cl[-1], ks[-2]))
    pads = []
    for i in range(n):
        if i in z_sizes:   # the forward convolution's padding, whatever the length
            pads.append(shape_rules.padding_amounts(None, ks[i], strides[i], dilation[i],
                                                    padding))
        elif in_s[i + 1] is not None:
            pads.append(shape_rules.deconv_crop(out_cl[i + 1], in_s[i + 1], ks[i], strides[i],
                                                padding, dilation[i]))
        else:
            pads.append(shape_rules.padding_amounts(out_cl[i + 1], ks[i], strides[i], dilation[i],
                                                    padding))
    # The transposed convolution is the gradient (adjoint) of the forward
    # convolution taking an ``output_shape`` image to ``x``'s shape: the engine's own op
    # where it has one, else the gradient of the im2col graph.
    out = None if z_sizes else _native_conv_transpose(x_cl, kernel, out_cl, strides,
                                                      dilation, pads)
    if out is None:
        z = _engine.alloc(np.asarray(0, dtype=x.dtype), x_cl.shape[0],
                          *[z_sizes.get(i, d) for i, d in enumerate(out_cl[1:])])
        forward = _conv_core(z, _flip_kernel(kernel, n), strides, dilation, pads)
        out = T.grad(T.sum(forward * x_cl), z)
    for condition, static in run_checks:
        out = _engine.assert_true(out, condition, '%s: an output_shape size given as a tensor '
                                  'differs from %d, the length for the input size' % (name, static))
    out = _with_shape(out, (in_s[0] if out_cl[0] is None else out_cl[0],) + out_cl[1:])
    return _from_channels_last(out, data_format)


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """The gradient (adjoint) of ``conv2d`` w.r.t. its input, so the kernel is
    flipped relative to TensorFlow and CNTK, as in ``conv2d``: on Theano 1.0.5 with a
    BLAS Theano's own (``CorrMM_gradInputs``, as Keras' Theano backend), else the
    gradient of the im2col graph."""
    return _conv_transpose(x, kernel, output_shape, 2, strides, padding, data_format,
                           dilation_rate, 'conv2d_transpose')


def _depthwise(x, kernel, n, strides, padding, data_format, dilation_rate, name):
    x, kernel, data_format, padding, strides, dilation = _conv_args(
        x, kernel, n, strides, padding, data_format, dilation_rate, name, n == 1)
    ks = _check_kernel(kernel, n + 2, name)
    x_cl = _to_channels_last(x, data_format)
    pads = _spatial_pads(x_cl, ks[:n], strides, dilation, padding)
    out = _native_conv(x_cl, kernel, n, strides, dilation, pads, depthwise=True)
    if out is None:
        out = _depthwise_conv(x_cl, kernel, strides, dilation, pads)
    return x_cl, out, data_format


def _pointwise(x_cl, pointwise_kernel, name):
    pk = _to_tensor(pointwise_kernel)
    ks = _known_shape(pk)
    # the 1x1 shape and known sizes this build needs; the shared rules check the channels
    if _bany(d != 1 for d in ks[:-2]) or ks[-2] is None or ks[-1] is None:
        raise ValueError('%s: pointwise_kernel must be (1, ..., in * multiplier, out), got %r'
                         % (name, ks))
    n = x_cl.ndim - 2
    # the engine's own 1x1 convolution where it has one, as Keras' Theano backend
    out = _native_conv(x_cl, pk, n, (1,) * n, (1,) * n, [(0, 0)] * n)
    if out is not None:
        return out
    w = T.reshape(pk, (ks[-2], ks[-1]), ndim=2)
    out = T.tensordot(x_cl, w, axes=[[x_cl.ndim - 1], [0]])
    return _with_shape(out, _known_shape(x_cl)[:-1] + (ks[-1],))


def separable_conv1d(x, depthwise_kernel, pointwise_kernel, strides=1, padding='valid',
                     data_format=None, dilation_rate=1):
    """The depthwise step of ``depthwise_conv2d``, then the pointwise kernel's 1x1
    convolution (Theano 1.0.5 with a BLAS: grouped ``CorrMM``, then ``CorrMM``; else
    slices, a broadcast product and ``tensordot``)."""
    _, out, data_format = _depthwise(x, depthwise_kernel, 1, strides, padding, data_format,
                                     dilation_rate, 'separable_conv1d')
    return _from_channels_last(_pointwise(out, pointwise_kernel, 'separable_conv1d'), data_format)


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """The depthwise step of ``depthwise_conv2d``, then the pointwise kernel's 1x1
    convolution (Theano 1.0.5 with a BLAS: grouped ``CorrMM``, then ``CorrMM``; else
    slices, a broadcast product and ``tensordot``)."""
    _, out, data_format = _depthwise(x, depthwise_kernel, 2, strides, padding, data_format,
                                     dilation_rate, 'separable_conv2d')
    return _from_channels_last(_pointwise(out, pointwise_kernel, 'separable_conv2d'), data_format)


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """On Theano 1.0.5 with a BLAS Theano's grouped ``conv2d`` (``CorrMM``, as Keras' Theano
    backend), else strided slices and a broadcast product: a cross-correlation (no kernel
    flip), as Keras' Theano backend, which pre-flips its depthwise kernels."""
    _, out, data_format = _depthwise(x, depthwise_kernel, 2, strides, padding, data_format,
                                     dilation_rate, 'depthwise_conv2d')
    return _from_channels_last(out, data_format)


@records_keras_shape
def conv3d(x, kernel, strides=(1, 1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1, 1)):
    """im2col: strided slices and ``tensordot``. A true convolution, as in Keras' Theano
    backend: the kernel is flipped relative to TensorFlow's and CNTK's
    cross-correlation (``keras_backend.utils.convert_kernel`` converts between them)."""
    return _conv_nd(x, kernel, 3, strides, padding, data_format, dilation_rate, 'conv3d')


def conv3d_transpose(x, kernel, output_shape, strides=(1, 1, 1), padding='valid',
                     data_format=None):
    """The gradient (adjoint) of ``conv3d`` w.r.t. its input, so the kernel is
    flipped relative to TensorFlow and CNTK, as in ``conv3d``: on Theano 1.0.5 with a
    BLAS Theano's own (``Corr3dMM_gradInputs``, as Keras' Theano backend), else the
    gradient of the im2col graph."""
    return _conv_transpose(x, kernel, output_shape, 3, strides, padding, data_format,
                           (1, 1, 1), 'conv3d_transpose')


def _pool(x, pool_size, strides, padding, data_format, pool_mode, n, name):
    x = _to_tensor(x)
    data_format = normalize_data_format(data_format)
    pool_size = shape_rules.normalize_tuple(pool_size, n, 'pool_size')
    strides = shape_rules.normalize_tuple(strides if strides is not None else pool_size, n, 'strides')
    padding = shape_rules.normalize_padding(padding)
    pool_mode = shape_rules.normalize_pool_mode(pool_mode)
    ones = (1,) * n
    x_cl = _to_channels_last(x, data_format)
    pads = _spatial_pads(x_cl, pool_size, strides, ones, padding)
    static = _ball(not _is_engine_tensor(b) and not _is_engine_tensor(a) for b, a in pads)
    s_pad = [None if d is None else d + int(b) + int(a) if static else None
             for d, (b, a) in zip(_known_shape(x_cl)[1:-1], pads)]
    if static and _engine.pool is not None and _bmax(pool_size) > 1 and \
            _ball(d is None or d >= k for d, k in zip(s_pad, pool_size)):
        # the engine's own op: one node (and its gradient one) where the slices below are
        # a slice per window offset, their stack and maximum / sum; 'same' pads first
        fill = -np.inf if pool_mode == 'max' else 0.
        if pool_mode == 'max' or _ball(b == 0 and a == 0 for b, a in pads):
            xp = _pad(x_cl, [(0, 0)] + [(int(b), int(a)) for b, a in pads] + [(0, 0)], fill)
            out = _engine.pool(xp, pool_size, strides, pool_mode)
            if out is not None:
                s = _known_shape(xp)
                spatial = tuple(None if s[i + 1] is None else
                                (s[i + 1] - pool_size[i]) // strides[i] + 1 for i in range(n))
                out = _with_shape(out, (s[0],) + spatial + (s[-1],))
                return _from_channels_last(out, data_format)
    if pool_mode == 'max':
        cols = _patches(x_cl, pool_size, strides, ones, pads, fill=-np.inf)
        out = cols[0] if len(cols) == 1 else T.max(T.stack(cols, axis=0), axis=0)
    else:
        cols = _patches(x_cl, pool_size, strides, ones, pads, fill=0.)
        total = cols[0]
        for c in cols[1:]:
            total = total + c
        if _ball(not _is_engine_tensor(b) and not _is_engine_tensor(a) and b == 0 and a == 0
                 for b, a in pads):
            out = total / _constant_like(total, float(np.prod(pool_size)))
        else:
            corner = [_bslice(None, 1)] + [_bslice(None)] * n + [_bslice(None, 1)]
            ones_t = T.ones_like(x_cl[tuple(corner)])
            counts = _patches(ones_t, pool_size, strides, ones, pads, fill=0.)
            count = counts[0]
            for c in counts[1:]:
                count = count + c
            count = _engine.broadcastable_axes(count, [0, n + 1])
            out = total / count
    out = _with_shape(out, _known_shape(cols[0]))
    return _from_channels_last(out, data_format)


@records_keras_shape
def pool2d(x, pool_size, strides=(1, 1), padding='valid', data_format=None, pool_mode='max'):
    """The engine's pooling op where it has one (Theano 1.0.5: ``Pool``; 'same' max pooling
    pads with -inf first), else strided slices; 'same' average pooling divides by the count
    of real cells (strided slices)."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 2, 'pool2d')


@records_keras_shape
def pool3d(x, pool_size, strides=(1, 1, 1), padding='valid', data_format=None,
           pool_mode='max'):
    """As ``pool2d``, over three spatial axes."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 3, 'pool3d')


@records_keras_shape
def bias_add(x, bias, data_format=None):
    x = _to_tensor(x)
    bias = _to_tensor(bias)
    data_format = normalize_data_format(data_format)
    bs = _known_shape(bias)
    channel_axis = 1 if (data_format == 'channels_first' and x.ndim > 2) else x.ndim - 1
    if len(bs) == 1:
        return x + _broadcast_param(bias, x.ndim, channel_axis)
    if channel_axis == 1:
        b = T.reshape(bias, (1, bs[-1]) + tuple(bs[:-1]), ndim=x.ndim)
    else:
        b = bias.dimshuffle(['x'] + list(range(bias.ndim)))
    return x + b
