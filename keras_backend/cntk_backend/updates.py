"""Variable updates on CNTK 2.7: the engine-level functions of the names of
:mod:`keras_backend.api.updates`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from . import core
from .core import C, _coerce_pair, _constant_like


update = core.update


def update_add(x, increment):
    """A ``C.assign`` of ``C.plus(x, increment)``."""
    x_, inc = _coerce_pair(x, increment)
    return update(x, C.plus(x_, inc))


def update_sub(x, decrement):
    """A ``C.assign`` of ``C.minus(x, decrement)``."""
    x_, dec = _coerce_pair(x, decrement)
    return update(x, C.minus(x_, dec))


def moving_average_update(x, value, momentum):
    """A ``C.assign`` node."""
    x_, value = _coerce_pair(x, value)
    return update(x, x_ * _constant_like(x_, momentum) + value * _constant_like(x_, 1. - momentum))
