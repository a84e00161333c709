"""The Keras 2 backend API on Theano 1.0.5 / PyTensor: the API functions, by section, gathered.

One function per API name, unchecked (the package ``__init__`` puts each behind its argument
checks); they call each other directly. Each section of ``api.SECTIONS`` has its module here,
named as the module of its contract in ``keras_backend/api/``: ``configuration``,
``session``, ``tensors``, ``updates``, ``math``, ``shapes``, ``functions``,
``control_flow``, ``activations``, ``convolution``, ``random``, ``ctc``, ``higher_order``,
``locally_connected``, each in reference order (what several of them use is in
``helpers``); this module gathers every name of them. How the engine is chosen, holds state
and compiles and runs a graph is in :mod:`.core`; the engine's own differences in its engine
module (``core._engine``). Both engines lack (PyTensor) or only partly offer CNN and CTC ops,
so convolution, pooling and CTC are built from the engine's own primitives (strided slices,
``tensordot``, ``scan``) and one custom ``Op`` (CTC beam search).
"""
from __future__ import absolute_import, division, print_function

from .. import api
from . import (helpers, configuration, session, tensors, updates, math, shapes, functions,
               control_flow, activations, convolution, random, ctc, higher_order,
               locally_connected)
from .core import ENGINE, ENGINE_VERSION, T, th  # noqa: F401  (the adapter's names too)
from .core import _engine_int_shape, _engine_known_value  # noqa: F401  (the checks read them)

#: the section modules, in the order of ``api.SECTIONS`` (their helpers first)
_MODULES = (helpers, configuration, session, tensors, updates, math, shapes, functions,
            control_flow, activations, convolution, random, ctc, higher_order,
            locally_connected)

api.gather(globals(), _MODULES)
