"""Configuration on PyTorch: the engine-level functions of the names of
:mod:`keras_backend.api.configuration`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from ..common import *  # noqa: F401,F403  (the shared config API)


def backend():
    """The engine's name, 'torch'."""
    return 'torch'
