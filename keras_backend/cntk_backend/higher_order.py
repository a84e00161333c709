"""Higher-order functions on CNTK 2.7: the engine-level functions of the names of
:mod:`keras_backend.api.higher_order`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from .core import (C, _drop_axis, _per_sample, _seq_last, _seq_previous, _static_shape,
                   _to_seq, _to_tensor, _unbatch, _var)
from .shapes import reverse


def map_fn(fn, elems, name=None, dtype=None):
    """The slices travel on CNTK's batch axis (``C.to_batch``): ``fn`` sees one element and the
    length may be unknown. ``name`` and ``dtype`` are ignored."""
    elems = _to_tensor(elems)
    y = fn(_per_sample(elems))
    return _unbatch(_to_tensor(y), elems)


def _fold(fn, elems, initializer, backwards):
    elems = _to_tensor(elems)
    n = _static_shape(elems)[0]
    if n is None:
        # unknown length: a CNTK recurrence over a sequence axis
        if backwards:
            elems = reverse(elems, 0)
        xs = _to_seq(elems)
        if initializer is None:
            ph = C.placeholder(shape=_var(xs).shape, dynamic_axes=_var(xs).dynamic_axes)
            acc = C.element_select(C.sequence.is_first(xs), xs,
                                   _to_tensor(fn(C.sequence.past_value(ph), xs)))
        else:
            ph, prev = _seq_previous(initializer, xs)
            acc = _to_tensor(fn(prev, xs))
        C.combine([_var(acc)]).replace_placeholders({ph: _var(acc)})
        return _seq_last(acc)
    idx = list(range(n))[::-1] if backwards else list(range(n))
    items = [_drop_axis(C.slice(elems, 0, i, i + 1), 0) for i in idx]
    if initializer is None:
        acc, items = items[0], items[1:]
    else:
        acc = _to_tensor(initializer)
    for it in items:
        acc = fn(acc, it)
    return _to_tensor(acc)


def foldl(fn, elems, initializer=None, name=None):
    """A static length is unrolled; an unknown one runs as a CNTK recurrence over a sequence axis
    (``C.sequence.past_value``)."""
    return _fold(fn, elems, initializer, False)


def foldr(fn, elems, initializer=None, name=None):
    """A static length is unrolled; an unknown one runs as a CNTK recurrence over a sequence axis
    (``C.sequence.past_value``)."""
    return _fold(fn, elems, initializer, True)
