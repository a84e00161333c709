"""Variable updates on PyTorch: the engine-level functions of the names of
:mod:`keras_backend.api.updates`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from .core import _make_update, _to_tensor


def update(x, new_x):
    return _make_update(x, new_x)


def update_add(x, increment):
    return _make_update(x, x + _to_tensor(increment))


def update_sub(x, decrement):
    return _make_update(x, x - _to_tensor(decrement))


def moving_average_update(x, value, momentum):
    """``x <- x * momentum + value * (1 - momentum)``."""
    value = _to_tensor(value)
    return _make_update(x, x * momentum + value * (1. - momentum))
