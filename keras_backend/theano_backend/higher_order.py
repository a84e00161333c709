"""Higher-order functions on Theano 1.0.5 / PyTensor: the engine-level functions of the names of
:mod:`keras_backend.api.higher_order`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from __future__ import absolute_import, division, print_function

from .core import T, _known_shape, _normalize_dtype, _to_tensor, _with_shape
from .helpers import _scan


def map_fn(fn, elems, name=None, dtype=None):
    """Engine ``scan``."""
    elems = _to_tensor(elems)
    out = _scan(fn, sequences=[elems])
    if dtype is not None:
        out = T.cast(out, _normalize_dtype(dtype, 'map_fn'))
    s = list(_known_shape(out))
    s[0] = _known_shape(elems)[0]
    return _with_shape(out, s)


def _fold(fn, elems, initializer, backwards):
    elems = _to_tensor(elems)
    if backwards:
        elems = elems[::-1]
    if initializer is None:
        initializer = elems[0]
        elems = elems[1:]
    else:
        initializer = _to_tensor(initializer)

    def _step(x, acc):
        res = fn(acc, x)
        return T.cast(res, acc.dtype)

    out = _scan(_step, sequences=[elems], outputs_info=[initializer])
    return out[-1]


def foldl(fn, elems, initializer=None, name=None):
    """Engine ``scan``; each result is cast to the accumulator's dtype."""
    return _fold(fn, elems, initializer, False)


def foldr(fn, elems, initializer=None, name=None):
    """Engine ``scan``; each result is cast to the accumulator's dtype."""
    return _fold(fn, elems, initializer, True)
