"""The names of Theano 1.0 that Keras 2 libraries import, served by PyTensor.

Keras 2 libraries written for Keras' Theano backend import Theano itself once
``keras.backend.backend()`` says ``'theano'`` (keras-contrib's ``keras_contrib.backend``:
``from theano import tensor as T``, ``T.nnet.conv2d``,
``theano.sandbox.neighbours.images2neibs``, ``T.unbroadcast``). On today's Python the Theano
engine is PyTensor, which has no module named ``theano`` and no longer has ``nnet``,
``images2neibs`` or ``unbroadcast``. When Keras 2.3.1 loads our Theano adapter on PyTensor
and no ``theano`` can be imported, :func:`install` registers a module ``theano`` (with
``theano.tensor``, ``theano.tensor.nnet``, ``theano.tensor.nnet.nnet``, ``theano.sandbox``,
``theano.sandbox.neighbours``, ``theano.sparse``) whose every other name is PyTensor's own, and
whose missing Theano names are built from PyTensor ops and the adapter's (gradients flow
through all of them):

* ``theano.tensor.nnet.conv2d``: Theano's signature and semantics (channels-first input,
  ``(out, in, rows, cols)`` filters, a true convolution unless ``filter_flip=False``,
  ``border_mode`` 'valid', 'full', 'half' or explicit padding), by the adapter's ``conv2d``;
* ``theano.tensor.nnet.nnet.softsign``, ``sigmoid``, ``relu``, ``softmax``, ``softplus``;
* ``theano.sandbox.neighbours.images2neibs``: Theano's row order (batch, channel, patch
  row, patch column), modes 'valid' and 'ignore_borders';
* ``theano.tensor.unbroadcast``: ``x`` with the given axes no longer of static size 1.

Nothing is registered when a real ``theano`` imports (Theano 1.0.5 on CPython 3.6), nor
outside Keras 2 (``keras2_compat.adopt_engine_name`` calls this through the adapter).
"""
import importlib
import sys
import types

import numpy as np
import pytensor
import pytensor.tensor as pt


class _Forwarding(types.ModuleType):
    """A module whose own names come first and whose others are ``target``'s."""

    def __init__(self, name, target, doc=None):
        types.ModuleType.__init__(self, name, doc)
        self._target = target

    def __getattr__(self, attr):
        if attr.startswith('__'):
            raise AttributeError(attr)
        return getattr(self._target, attr)


def _adapter():
    return importlib.import_module('keras_backend.theano_backend')


def conv2d(input, filters, input_shape=None, filter_shape=None, border_mode='valid',
           subsample=(1, 1), filter_flip=True, image_shape=None, filter_dilation=(1, 1),
           num_groups=1, unshared=False, **kwargs):
    """Theano's ``T.nnet.conv2d``: ``input`` (batch, channels, rows, cols), ``filters``
    (out, in, rows, cols); a true convolution (the filters flipped) unless
    ``filter_flip=False``; ``border_mode`` 'valid', 'full', 'half' (each side padded by half
    the filter) or an int / pair of ints of padding. ``input_shape`` / ``filter_shape`` are
    hints, as in Theano. Returns (batch, out, rows', cols')."""
    if num_groups != 1 or unshared:
        raise ValueError('conv2d: num_groups and unshared are not offered on PyTensor; '
                         'expected num_groups=1, unshared=False')
    K = _adapter()
    filters = pt.as_tensor_variable(filters)
    kernel = filters.dimshuffle(2, 3, 1, 0)              # (rows, cols, in, out)
    if not filter_flip:
        # the adapter convolves (flips); flipping first leaves a correlation
        kernel = kernel[::-1, ::-1]
    dilation = tuple(int(d) for d in filter_dilation)
    if isinstance(border_mode, str) and border_mode in ('valid', 'full'):
        return K.conv2d(input, kernel, strides=tuple(subsample), padding=border_mode,
                        data_format='channels_first', dilation_rate=dilation)
    if border_mode == 'half':
        shape = filter_shape or getattr(filters.type, 'shape', None)
        if shape is None or shape[2] is None or shape[3] is None:
            raise ValueError("conv2d: border_mode='half' needs the filter's static rows and "
                             "columns (pass filter_shape)")
        # half the dilated filter on each side
        pads = (((int(shape[2]) - 1) * dilation[0] + 1) // 2,
                ((int(shape[3]) - 1) * dilation[1] + 1) // 2)
    elif isinstance(border_mode, (int, np.integer)):
        pads = (int(border_mode), int(border_mode))
    elif isinstance(border_mode, (tuple, list)) and len(border_mode) == 2:
        pads = (int(border_mode[0]), int(border_mode[1]))
    else:
        raise ValueError("conv2d: border_mode must be 'valid', 'full', 'half', an int or a "
                         "pair of ints; got %r" % (border_mode,))
    padded = K.spatial_2d_padding(input, ((pads[0], pads[0]), (pads[1], pads[1])),
                                  data_format='channels_first')
    return K.conv2d(padded, kernel, strides=tuple(subsample), padding='valid',
                    data_format='channels_first', dilation_rate=dilation)


def softsign(x):
    """``x / (1 + |x|)``."""
    x = pt.as_tensor_variable(x)
    return x / (1 + abs(x))


def images2neibs(ten4, neib_shape, neib_step=None, mode='valid'):
    """Theano's ``images2neibs``: the ``neib_shape`` patches of a 4-D ``ten4`` (batch,
    channels, rows, cols), stepped by ``neib_step`` (default: the patch shape), as rows of a
    matrix ``(batch * channels * patch_rows * patch_cols, neib_rows * neib_cols)``, in
    Theano's order. ``mode`` 'valid' needs the patches to tile the image exactly (a
    ValueError names the shape when the static shape shows they do not); 'ignore_borders'
    drops what does not fit."""
    if mode not in ('valid', 'ignore_borders'):
        raise ValueError("images2neibs: mode must be 'valid' or 'ignore_borders' on PyTensor; "
                         "got %r" % (mode,))
    x = pt.as_tensor_variable(ten4)
    kr, kc = (int(v) for v in neib_shape)
    sr, sc = (kr, kc) if neib_step is None else (int(v) for v in neib_step)
    static = getattr(x.type, 'shape', (None,) * 4)
    if mode == 'valid':
        for size, k, s, axis in ((static[2], kr, sr, 'rows'), (static[3], kc, sc, 'cols')):
            if size is not None and (size - k) % s != 0:
                raise ValueError("images2neibs: mode='valid' needs the %s (%d) to be covered "
                                 "by patches of %d stepped by %d" % (axis, size, k, s))
    rows = (x.shape[2] - kr) // sr + 1
    cols = (x.shape[3] - kc) // sc + 1
    pieces = []
    for i in range(kr):
        for j in range(kc):
            pieces.append(x[:, :, i:i + (rows - 1) * sr + 1:sr, j:j + (cols - 1) * sc + 1:sc])
    stacked = pt.stack(pieces, axis=-1)                  # (B, C, rows, cols, kr * kc)
    return pt.reshape(stacked, (-1, kr * kc), ndim=2)


#: the int64 scalar 1 as a shared variable: a value known only when the function runs
_RUNTIME_ONE = pytensor.shared(np.int64(1), name='theano_names_runtime_one')


def unbroadcast(x, *axes):
    """``x`` with ``axes`` no longer of static size 1 (Theano's ``T.unbroadcast``): a
    reshape to ``x``'s own run-time shape, whose static size on those axes is unknown
    (PyTensor keeps broadcasting in static shapes; nothing else here widens one)."""
    x = pt.as_tensor_variable(x)
    if not axes:
        return x
    # a reshape infers static sizes from the others and the total, so every size is hidden
    # behind a shared 1 (no rewrite folds it), then the kept static sizes are specified again
    hidden = pt.reshape(x, pt.stack([_RUNTIME_ONE * x.shape[i] for i in range(x.ndim)]),
                        ndim=x.ndim)
    kept = tuple(None if i in axes else x.type.shape[i] for i in range(x.ndim))
    return pt.specify_shape(hidden, kept) if any(s is not None for s in kept) else hidden


def install():
    """Register ``theano`` (and its submodules above) in ``sys.modules``, served by PyTensor,
    unless a module named ``theano`` imports. Returns True when registered."""
    if 'theano' in sys.modules:
        return False
    try:
        importlib.import_module('theano')
        return False
    except ImportError:
        pass
    import pytensor.sparse

    nnet_nnet = _Forwarding('theano.tensor.nnet.nnet', pt.special)
    nnet_nnet.softsign = softsign
    nnet_nnet.sigmoid = pt.sigmoid
    nnet_nnet.softplus = pt.softplus
    nnet_nnet.relu = lambda x, alpha=0: _adapter().relu(x, alpha=alpha)
    nnet_nnet.softmax = pt.special.softmax
    nnet = _Forwarding('theano.tensor.nnet', nnet_nnet)
    nnet.nnet = nnet_nnet
    nnet.conv2d = conv2d
    tensor = _Forwarding('theano.tensor', pt)
    tensor.nnet = nnet
    tensor.unbroadcast = unbroadcast
    neighbours = _Forwarding('theano.sandbox.neighbours', types.ModuleType('empty'))
    neighbours.images2neibs = images2neibs
    sandbox = _Forwarding('theano.sandbox', types.ModuleType('empty'))
    sandbox.neighbours = neighbours
    theano = _Forwarding('theano', pytensor, __doc__)
    theano.tensor, theano.sandbox, theano.sparse = tensor, sandbox, pytensor.sparse
    theano.__path__ = []        # a package, so that "import theano.tensor" finds the modules
    for name, module in (('theano', theano), ('theano.tensor', tensor),
                         ('theano.tensor.nnet', nnet), ('theano.tensor.nnet.nnet', nnet_nnet),
                         ('theano.sandbox', sandbox), ('theano.sandbox.neighbours', neighbours),
                         ('theano.sparse', pytensor.sparse)):
        sys.modules[name] = module
    return True
