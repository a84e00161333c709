"""keras_backend: the Keras 2 backend API on several engines.

The engines (TensorFlow, Theano/PyTensor, CNTK, JAX) and the interpreters each runs
on are the engine table of :mod:`keras_backend.engines`.

Use it as ``from keras_backend import backend as K``. Importing this package
alone loads no engine; ``keras_backend.backend`` reads ``keras.json`` and
``KERAS_BACKEND`` and loads the configured one.
"""
__version__ = '0.1.0'

from . import keras2_compat as _keras2_compat

if _keras2_compat.loaded_by_keras2():
    # Keras 2.3.1 is importing one of our adapters as its external backend: its
    # floatx/epsilon/image data format (keras.backend.common) are ours too.
    _keras2_compat.install()
    from . import common as _common
    import sys as _sys
    _common.share_state_with(_sys.modules['keras.backend.common'])
