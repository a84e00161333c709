"""Convolution and pooling on CNTK 2.7: the engine-level functions of the names of
:mod:`keras_backend.api.convolution`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import builtins

import numpy as np

from .. import shape_rules
from ..common import normalize_data_format
from .core import (C, dtype, _add_axis, _coerce_pair, _drop_axis, _nd, _pad, _per_sample,
                   _per_sample_transposed, _reshape, _resolve_sizes, _static_shape, _to_tensor,
                   _transpose, _transpose_node, _unbatch, _var)


def _to_channels_first(x, fmt):
    """Return ``x`` channels_first."""
    if fmt == 'channels_last':
        return _transpose(x, shape_rules.to_channels_first_perm(_nd(x)))
    return x


def _from_channels_first(x, fmt):
    if fmt == 'channels_last':
        return _transpose(x, shape_rules.to_channels_last_perm(_nd(x)))
    return x


def _cf_shape(x, fmt):
    """The static shape of ``x`` (in layout ``fmt``) laid out channels_first."""
    shape = _static_shape(x)
    if fmt == 'channels_last':
        return tuple(shape[p] for p in shape_rules.to_channels_first_perm(len(shape)))
    return shape


def _batched_cf(x, fmt):
    """``x`` (in layout ``fmt``) channels_first, its leading axis on CNTK's batch axis
    (``_per_sample``; ``_per_sample_transposed`` where a transpose comes first)."""
    if fmt == 'channels_last':
        return _per_sample_transposed(x, shape_rules.to_channels_first_perm(_nd(x)))
    return _per_sample(x)


def _spatial_pads(sizes, kernel, strides, dilation, padding, name):
    """The (before, after) padding of each spatial axis of ``sizes`` (None: unknown)."""
    pads = []
    for n, k, s, d in zip(sizes, kernel, strides, dilation):
        if padding != 'valid' and n is None:
            if s != 1:
                raise ValueError('%s: %r padding with strides %r needs static spatial sizes on '
                                 'CNTK (the padding depends on the size)'
                                 % (name, padding, tuple(strides)))
            # at stride 1 the padding does not depend on the size (Conv3D over an unknown
            # number of frames): the shared rule takes None there
        pads.append(shape_rules.padding_amounts(n, k, s, d, padding))
    return pads


def _dilate_kernel(w, nsp, dilation):
    """Insert zeros between taps of a CNTK kernel (.., .., k...) along each spatial axis."""
    for j, d in enumerate(dilation):
        if d == 1:
            continue
        axis = 2 + j
        k = _static_shape(w)[axis]
        dk = (k - 1) * d + 1
        e = np.zeros((k, dk), dtype=_var(w).dtype)
        e[np.arange(k), np.arange(k) * d] = 1
        n = nsp + 2
        perm = [i for i in range(n) if i != axis] + [axis]
        w = _transpose_node(C.times(_transpose_node(w, perm), C.constant(e)), [int(i) for i in np.argsort(perm)])
    return w


def _conv_cf(x, fmt, w_cntk, nsp, strides, dilation, padding, name, groups=1):
    """Channels-first convolution of ``x`` (in layout ``fmt``, moved to channels_first here;
    so is the result); ``w_cntk`` is (out, in/groups, k...).

    Raises:
        ValueError: when the kernel's input channels do not match ``x``'s.
    """
    shape_cf = _cf_shape(x, fmt)
    cin, w_in = shape_cf[1], _static_shape(w_cntk)[1] * groups
    if cin is not None and cin != w_in:
        raise ValueError('%s: the kernel expects %d input channels but x has %d'
                         % (name, w_in, cin))
    kernel = _static_shape(w_cntk)[2:]
    sizes = shape_cf[2:]
    pads = _spatial_pads(sizes, kernel, strides, dilation, padding, name)
    if builtins.any(d != 1 for d in dilation):
        # CNTK's CPU engine has no dilated convolution: spread the taps instead
        w_cntk = _dilate_kernel(w_cntk, nsp, dilation)
        dilation = (1,) * nsp
    kernel = _static_shape(w_cntk)[2:]
    # CNTK's own padding centres an odd kernel: at stride 1 that is exactly
    # the symmetric padding asked for, without a separate Pad node; it refuses a kernel
    # longer than the input ('same' on a small image: ConvLSTM2D's recurrent convolution
    # of a 'valid' state), which the explicit Pad takes
    auto = [s == 1 and k % 2 == 1 and p == ((k - 1) // 2, (k - 1) // 2) and p != (0, 0)
            and (d is None or d >= k)
            for p, k, s, d in zip(pads, kernel, strides, sizes)]
    explicit = [(0, 0) if a else p for a, p in zip(auto, pads)]
    if builtins.all(p == (0, 0) for p in explicit):
        xb = _batched_cf(x, fmt)
    else:
        xb = _per_sample(_pad(_to_channels_first(x, fmt), [(0, 0), (0, 0)] + explicit))
    kw = dict(strides=(1,) + tuple(strides), auto_padding=[False] + auto,
              dilation=(1,) + tuple(dilation))
    if groups > 1:
        kw['groups'] = groups
    y = C.convolution(w_cntk, xb, **kw)
    return _unbatch(y, x)


def _kernel_to_cntk(kernel, nsp):
    """Keras (k..., in, out) -> CNTK (out, in, k...)."""
    return _transpose_node(kernel, (nsp + 1, nsp) + tuple(range(nsp)))


def _conv_nd(x, kernel, nsp, strides, padding, data_format, dilation_rate, name):
    x, kernel = _coerce_pair(x, kernel)
    fmt = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal=(nsp == 1))
    strides = shape_rules.normalize_tuple(strides, nsp, 'strides')
    dilation = shape_rules.normalize_tuple(dilation_rate, nsp, 'dilation_rate')
    y = _conv_cf(x, fmt, _kernel_to_cntk(kernel, nsp), nsp, strides, dilation, padding, name)
    return _from_channels_first(y, fmt)


def conv1d(x, kernel, strides=1, padding='valid', data_format=None, dilation_rate=1):
    """``C.convolution`` over CNTK's batch axis with explicit padding (TensorFlow's 'same' rule);
    dilation spreads the kernel taps (CNTK's CPU engine has no dilated convolution)."""
    return _conv_nd(x, kernel, 1, strides, padding, data_format, dilation_rate, 'conv1d')


def conv2d(x, kernel, strides=(1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1)):
    """``C.convolution`` over CNTK's batch axis with explicit padding (TensorFlow's 'same' rule);
    dilation spreads the kernel taps (CNTK's CPU engine has no dilated convolution)."""
    return _conv_nd(x, kernel, 2, strides, padding, data_format, dilation_rate, 'conv2d')


def _conv_transpose(x, kernel, output_shape, nsp, strides, padding, data_format,
                    dilation_rate, name):
    x, kernel = _coerce_pair(x, kernel)
    fmt = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    strides = shape_rules.normalize_tuple(strides, nsp, 'strides')
    dilation = shape_rules.normalize_tuple(dilation_rate, nsp, 'dilation_rate')
    given = output_shape
    output_shape = _resolve_sizes(output_shape, name, 'output_shape')
    if len(output_shape) != nsp + 2:
        raise ValueError('%s: output_shape must have %d entries, got %r'
                         % (name, nsp + 2, given))
    # the batch entry is not used (the batch follows x); the others must be
    # known while building the graph (sizes of K.shape(x)'s static axes are)
    for j, d in enumerate(output_shape[1:], 1):
        if not isinstance(d, int):
            raise ValueError('%s: output_shape[%d] must be known while building the graph '
                             '(a number, or computed from static sizes of K.shape(x)); got %r'
                             % (name, j, given))
    output_shape = tuple(d if isinstance(d, int) else None for d in output_shape)
    out_cf = (output_shape[0], output_shape[-1]) + output_shape[1:-1] \
        if fmt == 'channels_last' else output_shape
    x_cf = _to_channels_first(x, fmt)
    in_sizes = _static_shape(x_cf)[2:]
    ks = _static_shape(kernel)
    w = _transpose_node(kernel, (nsp + 1, nsp) + tuple(range(nsp)))  # (in, out, k...)
    w = _dilate_kernel(w, nsp, dilation)
    dks = [(k - 1) * d + 1 for k, d in zip(ks[:nsp], dilation)]
    full = [(n - 1) * s + dk for n, s, dk in zip(in_sizes, strides, dks)]
    cout = ks[nsp]
    y = C.convolution_transpose(w, _per_sample(x_cf), strides=(1,) + strides,
                                auto_padding=[False] * (nsp + 1),
                                output_shape=(cout,) + tuple(full))
    y = _unbatch(y, x_cf)
    pads, axes, begins, ends = [(0, 0), (0, 0)], [], [], []
    for j in range(nsp):
        before, after = shape_rules.deconv_crop(out_cf[2 + j], in_sizes[j], ks[j], strides[j], padding,
                                     dilation[j])
        total = before + out_cf[2 + j] + after
        pads.append((0, builtins.max(total - full[j], 0)))
        axes.append(2 + j)
        begins.append(before)
        ends.append(before + out_cf[2 + j])
    y = _pad(y, pads)
    y = C.slice(y, axes, begins, ends)
    return _from_channels_first(y, fmt)


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """``C.convolution_transpose`` computes the full result, which is then cropped per
    ``shape_rules.deconv_crop``."""
    return _conv_transpose(x, kernel, output_shape, 2, strides, padding, data_format,
                           dilation_rate, 'conv2d_transpose')


def _depthwise_conv(x_cf, depthwise_kernel, nsp, strides, dilation, padding, name):
    ks = _static_shape(depthwise_kernel)
    if nsp == 1:
        # MKL rejects grouped 1-D convolutions: run it as 2-D with a unit row axis
        pads = _spatial_pads(_static_shape(x_cf)[2:], _static_shape(depthwise_kernel)[:1],
                             strides, dilation, padding, name)
        x2 = _add_axis(_pad(x_cf, [(0, 0), (0, 0)] + pads), 2)
        k2 = _add_axis(depthwise_kernel, 0)
        y = _depthwise_conv(x2, k2, 2, (1,) + tuple(strides), (1,) + tuple(dilation),
                          'valid', name)
        return _drop_axis(y, 2)
    ks = _static_shape(depthwise_kernel)
    cin, mult = ks[nsp], ks[nsp + 1]
    w = _reshape(depthwise_kernel, tuple(ks[:nsp]) + (cin * mult,))
    w = _transpose_node(w, (nsp,) + tuple(range(nsp)))
    w = _reshape(w, (cin * mult, 1) + tuple(ks[:nsp]))
    return _conv_cf(x_cf, 'channels_first', w, nsp, strides, dilation, padding, name,
                    groups=cin)


def _separable(x, dk, pk, nsp, strides, padding, data_format, dilation_rate, name):
    x, dk = _coerce_pair(x, dk)
    pk = _to_tensor(pk, dtype=dtype(x))
    fmt = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding, allow_causal=(nsp == 1))
    strides = shape_rules.normalize_tuple(strides, nsp, 'strides')
    dilation = shape_rules.normalize_tuple(dilation_rate, nsp, 'dilation_rate')
    y = _depthwise_conv(_to_channels_first(x, fmt), dk, nsp, strides, dilation, padding, name)
    y = _conv_cf(y, 'channels_first', _kernel_to_cntk(pk, nsp), nsp, (1,) * nsp, (1,) * nsp,
                 'valid', name)
    return _from_channels_first(y, fmt)


def separable_conv1d(x, depthwise_kernel, pointwise_kernel, strides=1, padding='valid',
                     data_format=None, dilation_rate=1):
    """A grouped ``C.convolution`` (``groups=in``, run as 2-D with a unit row axis: MKL rejects
    grouped 1-D convolutions), then a pointwise ``C.convolution``."""
    return _separable(x, depthwise_kernel, pointwise_kernel, 1, strides, padding,
                      data_format, dilation_rate, 'separable_conv1d')


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """A grouped ``C.convolution`` (``groups=in``), then a pointwise ``C.convolution``."""
    return _separable(x, depthwise_kernel, pointwise_kernel, 2, strides, padding,
                      data_format, dilation_rate, 'separable_conv2d')


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding='valid',
                     data_format=None, dilation_rate=(1, 1)):
    """``C.convolution`` with ``groups=in``; output channel ``c * multiplier + m``."""
    x, depthwise_kernel = _coerce_pair(x, depthwise_kernel)
    fmt = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    strides = shape_rules.normalize_tuple(strides, 2, 'strides')
    dilation = shape_rules.normalize_tuple(dilation_rate, 2, 'dilation_rate')
    y = _depthwise_conv(_to_channels_first(x, fmt), depthwise_kernel, 2, strides, dilation, padding,
                      'depthwise_conv2d')
    return _from_channels_first(y, fmt)


def conv3d(x, kernel, strides=(1, 1, 1), padding='valid', data_format=None,
           dilation_rate=(1, 1, 1)):
    """``C.convolution`` over CNTK's batch axis with explicit padding (TensorFlow's 'same' rule);
    dilation spreads the kernel taps (CNTK's CPU engine has no dilated convolution)."""
    return _conv_nd(x, kernel, 3, strides, padding, data_format, dilation_rate, 'conv3d')


def conv3d_transpose(x, kernel, output_shape, strides=(1, 1, 1), padding='valid',
                     data_format=None):
    """``C.convolution_transpose`` computes the full result, which is then cropped per
    ``shape_rules.deconv_crop``."""
    return _conv_transpose(x, kernel, output_shape, 3, strides, padding, data_format,
                           (1, 1, 1), 'conv3d_transpose')


def _pool(x, pool_size, strides, padding, data_format, pool_mode, nsp, name):
    x = _to_tensor(x)
    fmt = normalize_data_format(data_format)
    padding = shape_rules.normalize_padding(padding)
    pool_mode = shape_rules.normalize_pool_mode(pool_mode)
    pool_size = shape_rules.normalize_tuple(pool_size, nsp, 'pool_size')
    strides = shape_rules.normalize_tuple(strides, nsp, 'strides')
    shape_cf = _cf_shape(x, fmt)
    pads = _spatial_pads(shape_cf[2:], pool_size, strides, (1,) * nsp, padding, name)
    full_pads = [(0, 0), (0, 0)] + pads
    padded = builtins.any(p != (0, 0) for p in pads)
    kw = dict(strides=tuple(strides), auto_padding=[False] * nsp)
    # unpadded, a channels_last input's layout changes in one step (_batched_cf)
    x_cf = _to_channels_first(x, fmt) if padded else None
    if pool_mode == 'max':
        low = float(np.finfo(_var(x).dtype).min)
        xb = _per_sample(_pad(x_cf, full_pads, value=low)) if padded else _batched_cf(x, fmt)
        y = _unbatch(C.pooling(xb, C.MAX_POOLING, pool_size, **kw), x)
    else:
        xb = _per_sample(_pad(x_cf, full_pads)) if padded else _batched_cf(x, fmt)
        y = _unbatch(C.pooling(xb, C.AVG_POOLING, pool_size, **kw), x)
        sizes = shape_cf[2:]
        if padded and None in sizes:
            # sizes known only when run (at stride 1, where the padding does not depend on
            # them: Keras' applications built for any image size): the real cells' share of
            # each window is the same pooling of ones, padded with zeros
            ones = _pad(C.ones_like(x_cf), full_pads)
            share = _unbatch(C.pooling(_per_sample(ones), C.AVG_POOLING, pool_size, **kw), x)
            y = y / share
        elif padded:
            mask = np.pad(np.ones(sizes), pads, mode='constant')
            counts = np.zeros([shape_rules.conv_output_length(n, k, padding, s)
                               for n, k, s in zip(sizes, pool_size, strides)])
            for idx in np.ndindex(*counts.shape):
                sl = tuple(builtins.slice(i * s, i * s + k)
                           for i, s, k in zip(idx, strides, pool_size))
                counts[idx] = mask[sl].mean()
            y = y / C.constant(counts.astype(_var(x).dtype))
    return _from_channels_first(y, fmt)


def pool2d(x, pool_size, strides=(1, 1), padding='valid', data_format=None, pool_mode='max'):
    """``C.pooling`` with explicit padding; 'same' average pooling divides by the real (unpadded)
    cells."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 2, 'pool2d')


def pool3d(x, pool_size, strides=(1, 1, 1), padding='valid', data_format=None,
           pool_mode='max'):
    """``C.pooling`` with explicit padding; 'same' average pooling divides by the real (unpadded)
    cells."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 3, 'pool3d')


def bias_add(x, bias, data_format=None):
    """Broadcast addition; for channels_first inputs of rank 3 to 5, a bias of rank ``ndim(x) - 1``
    is read as ``(spatial..., channels)`` and reshaped (not transposed) to ``(channels,
    spatial...)``, as in Keras 2.3.1."""
    x, bias = _coerce_pair(x, bias)
    fmt = normalize_data_format(data_format)
    n, bn = _nd(x), _nd(bias)
    bs = _static_shape(bias)
    if bn != 1 and bn != n - 1:
        raise ValueError('bias_add: bias must be 1-D or of rank %d, got rank %d' % (n - 1, bn))
    xs = _static_shape(x)
    if fmt == 'channels_first' and 3 <= n <= 5:
        laid = (bs[0],) + (1,) * (n - 2) if bn == 1 else (bs[-1],) + tuple(bs[:-1])
    else:
        laid = (1,) * (n - 1 - bn) + tuple(bs)
    for d, b in zip(xs[1:], laid):
        if b != 1 and d is not None and d != b:
            raise ValueError('bias_add: a bias of shape %s (laid out as %s for %s) does not '
                             'match x of shape %s' % (bs, laid, fmt, xs))
    if fmt == 'channels_first' and 3 <= n <= 5:
        return x + _reshape(bias, laid)
    return x + bias
