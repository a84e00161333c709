"""keras_backend: the Keras 2 backend API on TensorFlow, Theano and CNTK.

Use it as ``from keras_backend import backend as K``. Importing this package
alone loads no engine; ``keras_backend.backend`` reads ``keras.json`` and
``KERAS_BACKEND`` and loads the configured one.
"""
__version__ = '0.1.0'
