"""The Keras 2 backend API on PyTorch (Python 3.10+): ``keras_backend.torch_backend``.

``core`` holds how this adapter builds and runs a graph (its symbolic tensors, their
evaluation, the ``Function`` of ``K.function``, the per-op wrapper); the API functions are in one
module per section of ``api.SECTIONS`` (``tensors``, ``math``, ``convolution``, ..., named as
their contracts' modules in ``keras_backend/api/``), which ``ops`` gathers; ``collectives``
holds the collectives of ``keras_backend.distribute`` on PyTorch. This package is the public
adapter: every name of ``ops``, each API function behind the shared checks.
"""
from . import core, ops  # noqa: F401
from .. import api

api.install(globals(), ops)


def _get_available_gpus():
    """The GPUs this adapter runs on, named as TensorFlow names them (``'/device:GPU:0'``,
    ...): Keras 2.0-2.1 import this adapter as their TensorFlow module, and their code and
    tests ask it (``multi_gpu_model``, a GPU test's skip). Empty: values live on the CPU
    (``core._DEVICE``)."""
    return ['/device:GPU:0'] if core._DEVICE.type == 'cuda' else []
