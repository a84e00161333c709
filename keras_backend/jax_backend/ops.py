"""The Keras 2 backend API on JAX (Python 3.11+): the API functions, engine-level, gathered.

One function per API name, each building graph nodes with the machinery of :mod:`.core` (its
docstring gives the design: nodes, static shapes, compiled functions), in the module of its
section of ``api.SECTIONS``, named as the module of its contract in ``keras_backend/api/``:
``configuration``, ``session``, ``tensors``, ``updates``, ``math``, ``shapes``,
``functions``, ``control_flow``, ``activations``, ``convolution``, ``random``, ``ctc``,
``higher_order``, ``locally_connected``, each in reference order. They are unchecked and call
each other directly; this module gathers every name of them, and the package
(``keras_backend.jax_backend``) puts each API function behind the shared argument checks.
"""
from .. import api
from .core import ENGINE, ENGINE_VERSION  # noqa: F401  (what api.install and the CLI read)
from .core import _engine_known_value  # noqa: F401  (what the argument checks read)

#: the section modules (``_MODULES``, in the order of ``api.SECTIONS``), gathered
api.gather_sections(globals())
