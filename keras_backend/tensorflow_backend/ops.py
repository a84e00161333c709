"""The API functions on TensorFlow, engine-level and unchecked: the section modules, gathered.

Each section of the API (``api.SECTIONS``) has its module in this package, named as the
module of its contract in ``keras_backend/api/``: ``configuration``, ``session``,
``tensors``, ``updates``, ``math``, ``shapes``, ``functions``, ``control_flow``,
``activations``, ``convolution``, ``random``, ``ctc``, ``higher_order``,
``locally_connected`` (what several of them use is in ``helpers``; the machinery below them
all in ``core``). Each function builds TensorFlow ops; ``@graph_aware`` (``@graph_always``)
from ``core`` places it in the adapter's symbolic graph. Internal calls (``int_shape(x)``)
reach these functions directly; the package's ``__init__`` puts the shared checks in front of
them (``api.install(globals(), ops)``, which takes every name of this module).
"""
from .. import api
from . import (helpers, configuration, session, tensors, updates, math, shapes, functions,
               control_flow, activations, convolution, random, ctc, higher_order,
               locally_connected)
from .core import ENGINE, ENGINE_VERSION  # noqa: F401  (what api.install and the CLI read)
from .core import _engine_int_shape, _engine_known_value  # noqa: F401  (the checks read them)

#: the section modules, in the order of ``api.SECTIONS`` (their helpers first)
_MODULES = (helpers, configuration, session, tensors, updates, math, shapes, functions,
            control_flow, activations, convolution, random, ctc, higher_order,
            locally_connected)

api.gather(globals(), _MODULES)
