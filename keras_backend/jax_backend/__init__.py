"""The Keras 2 backend API on JAX (Python 3.11+): ``keras_backend.jax_backend``.

``core`` holds how this adapter builds and runs a graph (its symbolic tensors, their
evaluation, the compiled ``Function``, the per-op wrapper); the API functions are in one
module per section of ``api.SECTIONS`` (``tensors``, ``math``, ``convolution``, ..., named as
their contracts' modules in ``keras_backend/api/``), which ``ops`` gathers; ``collectives``
holds the collectives of ``keras_backend.distribute`` on JAX. This package is the public
adapter: every name of ``ops``, each API function behind the shared checks.
"""
from . import core, ops  # noqa: F401
from .. import api

api.install(globals(), ops)


def _get_available_gpus():
    """The GPUs JAX runs on, named as TensorFlow names them (``'/device:GPU:0'``, ...):
    Keras 2.0-2.1 import this adapter as their TensorFlow module, and their code and tests
    ask it (``multi_gpu_model``, a GPU test's skip). Empty where JAX's default device is
    not a GPU."""
    return ['/device:GPU:%d' % i for i, d in enumerate(core.jax.devices())
            if d.platform == 'gpu']
