"""Keras 2.3.1 on this adapter: names of its own CNTK module that Keras 2 libraries import.

Keras-contrib calls ``KCN._moments``; Keras' tests read ``load_backend.dev.type()``. This
adapter is ``keras.backend.cntk_backend`` when Keras runs on it
(``keras2_compat.adopt_engine_name``); the package ``__init__`` puts these names into the
adapter's namespace.
"""
from .. import shape_rules
from .core import C, _nd, _param_like, _to_tensor
from .math import mean
from .shapes import squeeze


#: the device CNTK computes on (Keras' own CNTK module had it; Keras' tests read
#: ``load_backend.dev.type()`` to skip what CNTK runs only on a GPU)
dev = C.device.use_default_device()


def _moments(x, axes=None, shift=None, keep_dims=False):
    """Mean and population variance of ``x`` over ``axes`` (a list of ints), computed on data
    shifted by ``shift`` (default: the mean itself, held constant for the gradient), which
    keeps the variance's difference of squares small. Returns ``(mean, variance)``, with the
    reduced axes kept as size 1 when ``keep_dims``."""
    x = _to_tensor(x)
    axes = list(range(_nd(x))) if axes is None else [int(a) for a in axes]
    if shift is None:
        shift = mean(x, axes, keepdims=True)
    shift = C.stop_gradient(_param_like(x, shift))
    shifted = x - shift
    shifted_mean = mean(shifted, axes, keepdims=True)
    variance = mean(C.square(shifted), axes, keepdims=True) - C.square(shifted_mean)
    average = shifted_mean + shift
    if not keep_dims:
        average, variance = _squeeze_axes(average, axes), _squeeze_axes(variance, axes)
    return average, variance


def _squeeze_axes(x, axes):
    """``x`` without its size-1 ``axes`` (the highest first, so the others keep their place)."""
    for a in sorted((shape_rules.normalize_axis(a, _nd(x)) for a in axes), reverse=True):
        x = squeeze(x, a)
    return x
