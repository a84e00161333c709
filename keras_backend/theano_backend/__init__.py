"""The Keras 2 backend API on Theano (or its maintained successor PyTensor).

Everything here is symbolic: ``variable`` makes an engine shared variable,
``placeholder`` a symbolic input, every other function adds nodes to the engine's
graph and ``function`` / ``eval`` compile and run it. ``ENGINE`` ('theano' or
'pytensor') and ``ENGINE_VERSION`` say which engine serves it.

The package: :mod:`.core` (engine choice, state, compiling and running graphs),
:mod:`.ops` (the API functions), the engine modules :mod:`.theano_engine` and
:mod:`.pytensor_engine` (their interface: :mod:`.engine_interface`), :mod:`.blas`,
:mod:`.theano_names_on_pytensor` and :mod:`.collectives` (``distribute``'s MPI allreduce).
"""
from __future__ import absolute_import, division, print_function

from .. import api
from . import core, ops

api.install(globals(), ops)
