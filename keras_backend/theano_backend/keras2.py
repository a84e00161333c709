"""Keras 2.3.1 on this adapter: names of its own Theano module that Keras 2 libraries import.

``from keras.backend.theano_backend import _preprocess_conv2d_input`` (keras-contrib);
``keras2_compat.adopt_engine_name`` calls ``_adopted_by_keras2`` when Keras 2.3.1 loads this
adapter, which is ``keras.backend.theano_backend`` when Keras runs on it. The package
``__init__`` puts these names into the adapter's namespace.
"""
from __future__ import absolute_import, division, print_function

from .core import _engine, _to_tensor


def _adopted_by_keras2():
    """Keras 2.3.1 is loading this adapter as its backend: the Theano names Keras 2 libraries
    import (``from theano import tensor as T``) are made importable (on PyTensor, served by
    PyTensor unless a real ``theano`` imports); for Keras 2.0-2.2, a variable is true in an
    ``if``, as Theano 1.0.5's were."""
    from .. import keras2_compat
    _engine.provide_theano_names()
    release = keras2_compat.keras_release()
    if release is not None and release < (2, 3):
        _engine.theano_1_variable_truth()


def _preprocess_conv2d_input(x, data_format):
    """A 4-D image batch in the engine's own layout, channels first: ``x`` as it is for
    ``'channels_first'``, transposed ``(0, 3, 1, 2)`` for ``'channels_last'``."""
    x = _to_tensor(x)
    return x.dimshuffle(0, 3, 1, 2) if data_format == 'channels_last' else x


def _postprocess_conv2d_output(conv_out, x, padding, kernel_shape, strides, data_format):
    """A channels-first 2-D convolution's output ``conv_out`` of input ``x`` (channels first)
    brought back to Keras' layout: for ``'same'`` padding cut to ``ceil(size / stride)`` rows
    and columns (a 'half' border with an even kernel gives one more), then transposed back to
    channels_last when ``data_format`` says so. ``kernel_shape`` (channels-first, ints or
    symbolic) is accepted for the signature's sake: the cut does not depend on it."""
    if padding == 'same':
        rows = (x.shape[2] + strides[0] - 1) // strides[0]
        cols = (x.shape[3] + strides[1] - 1) // strides[1]
        conv_out = conv_out[:, :, :rows, :cols]
    return conv_out.dimshuffle(0, 2, 3, 1) if data_format == 'channels_last' else conv_out
