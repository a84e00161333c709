"""Configuration on Theano 1.0.5 / PyTensor: the engine-level functions of the names of
:mod:`keras_backend.api.configuration`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from __future__ import absolute_import, division, print_function

from ..common import *  # noqa: F401,F403  (the shared config API)


def backend():
    """``'theano'`` on both engines; ``ENGINE`` names the one serving it."""
    return 'theano'
