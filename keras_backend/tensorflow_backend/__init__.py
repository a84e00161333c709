"""The Keras 2 backend API on TensorFlow 2.x (the public adapter)."""
from .. import api
from . import ops

api.install(globals(), ops)
