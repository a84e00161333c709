"""Higher-order functions on TensorFlow: the engine-level functions of the names of
:mod:`keras_backend.api.higher_order`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from .core import graph_always, tf, _normalize_dtype, _to_tensor


@graph_always
def map_fn(fn, elems, name=None, dtype=None):
    """``tf.map_fn`` (``dtype`` becomes its ``fn_output_signature``)."""
    kwargs = {}
    if dtype is not None:
        kwargs['fn_output_signature'] = tf.as_dtype(_normalize_dtype(dtype, 'map_fn: dtype'))
    return tf.map_fn(fn, _to_tensor(elems), name=name, **kwargs)


@graph_always
def foldl(fn, elems, initializer=None, name=None):
    """``tf.foldl``."""
    return tf.foldl(fn, _to_tensor(elems), initializer=initializer, name=name)


@graph_always
def foldr(fn, elems, initializer=None, name=None):
    """``tf.foldr``."""
    return tf.foldr(fn, _to_tensor(elems), initializer=initializer, name=name)
