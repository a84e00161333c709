"""Engine-neutral helpers for moving weights between backends.

Convolution kernels: the TensorFlow and CNTK backends compute ``conv1d``,
``conv2d``, ``conv3d`` and their transposes as cross-correlations, while the
Theano backend (as Keras' own Theano backend) computes true convolutions, i.e.
it uses the kernel with its spatial axes reversed. :func:`convert_kernel`
turns a kernel trained under one convention into the kernel giving the same
outputs under the other.
"""
import numpy as np


def convert_kernel(kernel):
    """Convert a convolution kernel between the correlation convention
    (TensorFlow, CNTK) and the true-convolution convention (Theano).

    Every spatial axis (all axes but the last two, which are the input and
    output channels) is reversed; the channel axes are kept. The conversion is
    its own inverse: ``convert_kernel(convert_kernel(k))`` equals ``k``.

    Args:
        kernel: numpy array (or anything ``np.asarray`` accepts) of rank 3, 4
            or 5: ``(k, in, out)``, ``(kh, kw, in, out)`` or
            ``(kd, kh, kw, in, out)`` (transposed-convolution kernels
            ``(..., out, in)`` convert the same way). Any dtype.

    Returns:
        numpy array: a new array (never a view of ``kernel``) of the same
        shape and dtype.

    Raises:
        ValueError: when ``kernel`` is not of rank 3, 4 or 5.

    Example:
        >>> from keras_backend.utils import convert_kernel
        >>> k = np.arange(6.).reshape(3, 1, 2)           # (k=3, in=1, out=2)
        >>> convert_kernel(k)[:, 0, 0]
        array([4., 2., 0.])
        >>> K.conv1d(x, K.variable(convert_kernel(k)))   # on Theano: same numbers as
        ...                                               # K.conv1d(x, K.variable(k)) on TF
    """
    arr = np.asarray(kernel)
    if arr.ndim not in (3, 4, 5):
        raise ValueError('convert_kernel: expected a kernel of rank 3, 4 or 5 '
                         '(spatial axes, then in and out channels), got shape %r'
                         % (arr.shape,))
    spatial = arr.ndim - 2
    index = (slice(None, None, -1),) * spatial + (slice(None),) * 2
    return np.array(arr[index], copy=True)
