"""The Keras 2 backend API on Theano (or its maintained successor PyTensor).

Everything here is symbolic: ``variable`` makes an engine shared variable,
``placeholder`` a symbolic input, every other function adds nodes to the engine's
graph and ``function`` / ``eval`` compile and run it. ``ENGINE`` ('theano' or
'pytensor') and ``ENGINE_VERSION`` say which engine serves it.

The package: :mod:`.core` (engine choice, state, compiling and running graphs), the API
functions in one module per section of ``api.SECTIONS`` (:mod:`.tensors`, :mod:`.math`,
:mod:`.convolution`, ..., named as their contracts' modules in ``keras_backend/api/``;
:mod:`.helpers` what several use), gathered by :mod:`.ops`, :mod:`.keras2` (names of Keras
2.3.1's own Theano module that Keras 2 libraries import), the engine modules
:mod:`.theano_engine` and :mod:`.pytensor_engine` (their interface:
:mod:`.engine_interface`), :mod:`.blas`, :mod:`.theano_names_on_pytensor` and
:mod:`.collectives` (``distribute``'s MPI allreduce).
"""
from __future__ import absolute_import, division, print_function

from .. import api
from . import core, ops
from .keras2 import (  # noqa: F401
    _adopted_by_keras2, _postprocess_conv2d_output, _preprocess_conv2d_input)

api.install(globals(), ops)
