"""Keras 2.3.1 on this adapter: the private names of its own TensorFlow module that it reads.

``keras2_compat.adopt_engine_name`` calls ``_adopted_by_keras2`` when Keras 2.3.1 loads this
adapter; Keras and its tests call ``_is_tf_1`` and ``_get_available_gpus``. The package
``__init__`` puts the three into the adapter's namespace.
"""
import os

from .core import tf


def _is_tf_1():
    """False: this adapter runs TensorFlow 2 (Keras 2.3.1 asks ``K.tensorflow_backend._is_tf_1()``
    to pick its TensorBoard callback)."""
    return tf.__version__.startswith('1.')


def _get_available_gpus():
    """The names of the GPUs TensorFlow sees (``'/device:GPU:0'``, ...), as Keras 2.3.1's own
    TensorFlow module listed them (its tests and ``multi_gpu_model`` ask)."""
    return ['/device:GPU:%d' % i for i, _ in enumerate(tf.config.list_physical_devices('GPU'))]


class _Keras3OnlyMeta(type):
    """The type of what ``tf.keras`` and its attributes are while Keras 2.3.1 is the process's
    ``keras``: classes that can be looked up at any depth (``tf.keras.metrics.MeanIoU``),
    compared with ``isinstance`` (never true) and subclassed, and that raise a RuntimeError
    naming the missing feature when anything instantiates them."""

    def __getattr__(cls, attr):
        if attr.startswith('__'):
            raise AttributeError(attr)
        return _keras3_only('%s.%s' % (cls._path, attr))


def _keras3_only(path):
    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            '%s is not available here: Keras 2.3.1 is this process\'s `keras`, and TensorFlow '
            '%s finds its tf.keras only in Keras 3 or tf_keras, whose objects cannot serve a '
            'Keras 2.3.1 model (Keras 2.3.1 reaches for it in MeanIoU, TensorBoard and '
            'TFOptimizer on TensorFlow 2)' % (type(self)._path, tf.__version__))
    module, _, name = path.rpartition('.')
    return _Keras3OnlyMeta(name, (object,), {'__init__': __init__, '__module__': module,
                                             '_path': path})


def _adopted_by_keras2():
    """Keras 2.3.1 is loading this adapter as its backend: its module code reads ``tf.keras``
    (``keras.metrics``' MeanIoU base class, its TensorBoard callback's, ``optimizers.get``).
    TensorFlow 2.21 resolves ``tf.keras`` by importing ``keras``, which here is Keras 2.3.1
    itself, half imported: ``import keras`` would fail. Unless the user asked for tf_keras
    (``TF_USE_LEGACY_KERAS``), ``tf.keras`` becomes names that raise a clear error when used."""
    if os.environ.get('TF_USE_LEGACY_KERAS', '') in ('1', 'true', 'True'):
        return
    tf.keras = _keras3_only('tf.keras')
