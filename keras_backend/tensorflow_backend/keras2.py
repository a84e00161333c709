"""Keras 2 on this adapter: the private names of its own TensorFlow module that it reads, and
the TensorFlow 1 behaviour Keras 2.0-2.2 rely on.

``keras2_compat.adopt_engine_name`` calls ``_adopted_by_keras2`` when Keras 2.3.1 loads this
adapter; Keras and its tests call ``_is_tf_1`` and ``_get_available_gpus``; Keras'
TensorBoard callback (``keras_backend.tensorboard``) reads ``_tensorboard_graph_def``. The
package ``__init__`` puts the four into the adapter's namespace.
"""
import os

from .core import tf


def _is_tf_1():
    """False: this adapter runs TensorFlow 2 (Keras 2.3.1 asks ``K.tensorflow_backend._is_tf_1()``
    to pick its TensorBoard callback)."""
    return tf.__version__.startswith('1.')


def _tensorboard_graph_def():
    """The adapter's graph (the FuncGraph holding every symbolic tensor: the model's layers,
    losses and updates) as a serialized ``GraphDef``, what Keras' TensorBoard callback shows
    in TensorBoard's graph tab (``keras_backend.tensorboard``); TensorFlow 1's Keras wrote
    its session's graph."""
    from .core import _graph
    return _graph().as_graph_def().SerializeToString()


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


def _tensorflow_1_tensor_equality():
    """TensorFlow 1's tensor equality (``==`` is identity, tensors hash): what Keras 2.0-2.2's
    engine relies on (``x in inputs``, tensors as dict keys in ``clone_model``); TensorFlow 2
    compares elementwise and refuses to hash a graph tensor. TensorFlow's own switch,
    ``tf.compat.v1.disable_tensor_equality``."""
    tf.compat.v1.disable_tensor_equality()


def _tensorflow_1_variables():
    """TensorFlow 1's variables as Keras 2.0-2.2 use them: a variable is true in an ``if``
    (2.1's ``Conv2DTranspose`` asks ``if self.bias:``; TensorFlow 2 reads its value, which a
    graph refuses) and ``var *= x`` rebinds the name to the product (2.0-2.1's optimizers
    scale their learning rate so, ``lr *= 1 / (1 + decay * iterations)``; TensorFlow 2
    raises). Set on TensorFlow's variable class for the process (its other operators are
    left as they are)."""
    from tensorflow.python.ops import resource_variable_ops
    cls = resource_variable_ops.BaseResourceVariable
    if getattr(cls, '_keras2_compat', False):
        return
    cls.__bool__ = lambda self: True
    cls.__iadd__ = lambda self, other: self + other
    cls.__isub__ = lambda self, other: self - other
    cls.__imul__ = lambda self, other: self * other
    cls.__itruediv__ = lambda self, other: self / other
    cls._keras2_compat = True


def _adopted_by_keras2():
    """Keras 2.3.1 is loading this adapter as its backend: its module code reads ``tf.keras``
    (``keras.metrics``' MeanIoU base class, its TensorBoard callback's, ``optimizers.get``).
    TensorFlow 2.21 resolves ``tf.keras`` by importing ``keras``, which here is Keras 2.3.1
    itself, half imported: ``import keras`` would fail. Unless the user asked for tf_keras
    (``TF_USE_LEGACY_KERAS``), ``tf.keras`` becomes names that raise a clear error when used."""
    from .. import keras2_compat
    release = keras2_compat.keras_release()
    if release is not None and release < (2, 3):
        # Keras 2.0-2.2 were written against TensorFlow 1's tensors and variables
        _tensorflow_1_tensor_equality()
        _tensorflow_1_variables()
    if os.environ.get('TF_USE_LEGACY_KERAS', '') in ('1', 'true', 'True'):
        return
    tf.keras = _keras3_only('tf.keras')
