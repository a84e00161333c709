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
