"""The Keras 2 backend API on CNTK 2.7 (CPU): ``keras_backend.cntk_backend``.

``core`` holds the engine's machinery (tensors and static shapes, the numpy graph nodes,
evaluation and the compiled ``Function``, the session and learning-phase state); the API
functions are in one module per section of ``api.SECTIONS`` (``tensors``, ``math``,
``convolution``, ..., named as their contracts' modules in ``keras_backend/api/``), which
``ops`` gathers; ``keras2`` holds the names of Keras 2.3.1's own CNTK module that Keras 2
libraries import, ``collectives`` the collectives of ``keras_backend.distribute`` (CNTK's MPI
communicator). ``api.install`` puts each API function here behind its shared checks and
docstring.
"""
from .. import api
from . import core, ops  # noqa: F401  (core: the machinery, for readers of the package)
from .keras2 import _moments, dev  # noqa: F401

api.install(globals(), ops)
