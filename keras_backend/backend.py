"""The Keras 2 backend API: ``from keras_backend import backend as K``.

This module holds every public name of the API (see ``docs/semantics.md``),
taken from the adapter chosen by ``KERAS_BACKEND`` or ``~/.keras/keras.json``
(see :mod:`keras_backend.load_backend`), plus the Keras 1 aliases ``lesser``,
``lesser_equal``, ``deconv2d`` and ``asymmetric_temporal_padding``.

Example:
    >>> from keras_backend import backend as K
    >>> x = K.placeholder(shape=(None, 3))
    >>> f = K.function([x], [K.sum(x * 2, axis=1)])
    >>> f([[[1., 2., 3.]]])
    [array([12.], dtype=float32)]
"""
from .load_backend import *  # noqa: F401,F403
