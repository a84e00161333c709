"""Watching training in TensorBoard on every engine: Keras 2's ``TensorBoard`` callback.

When Keras 2 (any release, 2.0 to 2.3.1) loads one of our adapters, ``keras2_compat`` puts
:func:`keras2.tensorboard_class`'s class in place of ``keras.callbacks.TensorBoard``: Keras'
own callback needs TensorFlow 1 (its TensorFlow 2 variant is ``tf.keras``' callback, which
cannot serve a Keras 2 model, and off TensorFlow it drew the loss curves only). The
event files are written by tensorboard's own event-file writer, their summaries built by
tensorboardX (``pip install 'keras_backend[tensorboard]'``), no TensorFlow needed;
``tensorboard --logdir <log_dir>`` shows them.

Example (unchanged Keras 2 code)::

    from keras.callbacks import TensorBoard
    model.fit(x, y, validation_split=0.2, epochs=5,
              callbacks=[TensorBoard('logs/run1', histogram_freq=1, write_grads=True)])
    # then: tensorboard --logdir logs
"""
from .keras2 import tensorboard_class  # noqa: F401
from .writer import EventWriter, layer_graph_def  # noqa: F401
