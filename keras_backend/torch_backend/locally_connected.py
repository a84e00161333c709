"""Locally connected on PyTorch: the engine-level functions of the names of
:mod:`keras_backend.api.locally_connected`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks). Their logic is the same on every engine
with no graph of its own (:mod:`keras_backend.eager_graph.sections`); here, the product.
"""
from ..eager_graph import sections
from . import core
from .core import torch
from .convolution import _cf, _cl


def _products(patches, k, v):
    """One product per output position (``torch.einsum`` over the stacked patches)."""
    return torch.einsum('bpf,pfo->bpo', torch.stack(patches, dim=1), k.to(v.dtype))


local_conv1d = sections.local_conv1d(core, _products, _cf, _cl, doc="""\
One product per output position (``torch.einsum`` over the stacked patches).""")

local_conv2d = sections.local_conv2d(core, _products, _cf, doc="""\
One product per output position (``torch.einsum`` over the stacked patches); a
    channels_first patch is flattened in (channels, rows, cols) order, as Keras'.""")
