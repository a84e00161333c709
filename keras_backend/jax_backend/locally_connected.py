"""Locally connected on JAX: the engine-level functions of the names of
:mod:`keras_backend.api.locally_connected`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks). Their logic is the same on every engine
with no graph of its own (:mod:`keras_backend.eager_graph.sections`); here, the product.
"""
from ..eager_graph import sections
from . import core
from .core import jnp
from .convolution import _cf, _cl


def _products(patches, k, v):
    """One product per output position (``jnp.einsum`` over the stacked patches)."""
    return jnp.einsum('bpf,pfo->bpo', jnp.stack(patches, axis=1), k.astype(v.dtype))


local_conv1d = sections.local_conv1d(core, _products, _cf, _cl, doc="""\
One product per output position (``jnp.einsum`` over the stacked patches).""")

local_conv2d = sections.local_conv2d(core, _products, _cf, doc="""\
One product per output position (``jnp.einsum`` over the stacked patches); a
    channels_first patch is flattened in (channels, rows, cols) order, as Keras'.""")
