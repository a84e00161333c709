"""The Keras 2 backend API on CNTK 2.7: the op bodies, by section, gathered.

Engine-level and unchecked: they call each other directly, and the package (``__init__``)
puts each behind its shared checks and docstring. Each section of ``api.SECTIONS`` has its
module here, named as the module of its contract in ``keras_backend/api/``:
``configuration``, ``session``, ``tensors``, ``updates``, ``math``, ``shapes``,
``functions``, ``control_flow``, ``activations``, ``convolution``, ``random``, ``ctc``,
``higher_order``, ``locally_connected``, each in reference order; this module gathers every
name of them. How the graph is held, evaluated and compiled, and the helper vocabulary they
use (``_to_tensor``, ``_constant_like``, ...), are in ``core``. A public function's own
docstring is a short CNTK note.
"""
from .. import api
from . import (configuration, session, tensors, updates, math, shapes, functions,
               control_flow, activations, convolution, random, ctc, higher_order,
               locally_connected)
from .core import ENGINE, ENGINE_VERSION  # noqa: F401  (what api.install and the CLI read)
from .core import _engine_int_shape, _engine_known_value  # noqa: F401  (the checks read them)

#: CNTK holds no tensor with an axis of 0 values reliably (building one whose last axis is
#: empty, or an op's constant of such a shape, aborts the process with SIGFPE): the shared
#: checks refuse empty tensors here with a ValueError naming the argument
HOLDS_EMPTY_TENSORS = False

#: the section modules, in the order of ``api.SECTIONS``
_MODULES = (configuration, session, tensors, updates, math, shapes, functions, control_flow,
            activations, convolution, random, ctc, higher_order, locally_connected)

api.gather(globals(), _MODULES)
