"""The Keras 2 backend API on CNTK 2.7 (CPU): ``keras_backend.cntk_backend``.

``core`` holds the engine's machinery (tensors and static shapes, the numpy graph nodes,
evaluation and the compiled ``Function``, the session and learning-phase state), ``ops`` the
API functions in ``api.SECTIONS`` order, ``collectives`` the collectives of
``keras_backend.distribute`` (CNTK's MPI communicator). ``api.install`` puts each API function
here behind its shared checks and docstring.
"""
from .. import api
from . import core, ops  # noqa: F401  (core: the machinery, for readers of the package)

api.install(globals(), ops)
