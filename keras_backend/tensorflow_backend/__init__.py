"""The Keras 2 backend API on TensorFlow 2.x (eager mode kept on): the public adapter.

``core`` holds the machinery (the one symbolic graph, the graph-placement decorators,
compiled functions, updates, the session-like object); the API functions are in one module
per section of ``api.SECTIONS`` (``tensors``, ``math``, ``convolution``, ..., named as their
contracts' modules in ``keras_backend/api/``; ``helpers`` what several use), which ``ops``
gathers; ``keras2`` holds the private names Keras 2.3.1 reads, ``collectives`` the engine's
part of ``keras_backend.distribute``. ``api.install`` puts each API function here behind its
checks.
"""
from .. import api
from . import core, ops
from .keras2 import (_adopted_by_keras2, _get_available_gpus, _is_tf_1,  # noqa: F401
                     _tensorboard_graph_def)

api.install(globals(), ops)
