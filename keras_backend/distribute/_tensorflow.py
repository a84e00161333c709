"""Shim: TensorFlow's collectives live in keras_backend.tensorflow_backend.collectives."""
from keras_backend.tensorflow_backend.collectives import *  # noqa: F401,F403
from keras_backend.tensorflow_backend.collectives import _S, _instance_key, _reduce  # noqa: F401
