"""Variable updates on Theano 1.0.5 / PyTensor: the engine-level functions of the names of
:mod:`keras_backend.api.updates`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from __future__ import absolute_import, division, print_function

from .core import update_pair


def update(x, new_x):
    """A ``(variable, new_value)`` pair that ``function(updates=...)`` applies;
    ``new_value`` is cast to the variable's dtype."""
    return update_pair(x, new_x)


def update_add(x, increment):
    """An update pair (see ``update``)."""
    return update(x, x + increment)


def update_sub(x, decrement):
    """An update pair (see ``update``)."""
    return update(x, x - decrement)


def moving_average_update(x, value, momentum):
    """An update pair (see ``update``), without debiasing."""
    return update(x, x * momentum + value * (1. - momentum))
