"""Property-based differential tests: random shapes, axes, dtypes, paddings, data formats.

For each drawn case, every engine either agrees with the numpy reference or,
where the reference refuses the case, raises the exception type the contract
gives for it (``ValueError`` for a bad value or shape, ``TypeError`` for a bad
type or dtype: numpy's own ``AxisError``/``IndexError`` count as a bad value).
So all engines raise the same type on the same bad case, and none returns a
result numpy would not give.

The number of examples per property is ``KERAS_BACKEND_HYPOTHESIS_EXAMPLES``
(default 15; the draws are derandomized, so CI runs the same cases each time).
"""
import os

import numpy as np
import pytest

hypothesis = pytest.importorskip('hypothesis')
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import reference as R  # noqa: E402
from keras_backend.utils import convert_kernel  # noqa: E402

EXAMPLES = int(os.environ.get('KERAS_BACKEND_HYPOTHESIS_EXAMPLES', '15'))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture,
                                           HealthCheck.filter_too_much],
                    database=None)
ATOL = 1e-4


def expected_error(fn):
    """(value, None) from the reference, or (None, exception type the contract gives)."""
    try:
        return fn(), None
    except TypeError:
        return None, TypeError
    except (ValueError, IndexError):   # numpy's AxisError is both
        return None, ValueError


def check(K, run, reference):
    want, error = expected_error(reference)
    if error is not None:
        with pytest.raises(error):
            K.eval(run())
        return
    got = K.eval(run())
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, np.float64),
                               atol=ATOL, rtol=ATOL)


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
axis_values = st.one_of(st.none(), st.integers(-4, 3), st.sampled_from([1.5, '0', (0, 0)]))


def data(shape, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype('float32')


REDUCTIONS = ('sum', 'max', 'min', 'mean', 'prod', 'var', 'std', 'logsumexp')


def _numpy_axis(axis, ndim):
    """numpy's own refusals, made explicit where numpy is more lenient than the contract."""
    if isinstance(axis, (float, str)):
        raise TypeError('axis must be an int')
    for a in (axis if isinstance(axis, tuple) else () if axis is None else (axis,)):
        if not -ndim <= a < ndim:
            raise ValueError('axis out of range')   # tests/reference.py wraps axes
    if isinstance(axis, tuple) and len(set(a % ndim for a in axis)) != len(axis):
        raise ValueError('duplicate axis')
    return axis


@SETTINGS
@given(shape=shapes, op=st.sampled_from(REDUCTIONS), axis=axis_values, keepdims=st.booleans())
def test_reductions(K, shape, op, axis, keepdims):
    x = data(shape)

    def reference():
        return getattr(R, op)(x, axis=_numpy_axis(axis, len(shape)), keepdims=keepdims)
    check(K, lambda: getattr(K, op)(K.variable(x), axis=axis, keepdims=keepdims), reference)


@SETTINGS
@given(shape=shapes, other=shapes, axis=st.integers(-4, 3))
def test_concatenate(K, shape, other, axis):
    a, b = data(shape), data(other, 1)
    check(K, lambda: K.concatenate([K.variable(a), K.variable(b)], axis=axis),
          lambda: R.concatenate([a, b], axis=axis))


@SETTINGS
@given(shape=shapes, target=st.lists(st.integers(-1, 6), min_size=1, max_size=3).map(tuple))
def test_reshape(K, shape, target):
    x = data(shape)

    def reference():
        if list(target).count(-1) > 1 or any(t < -1 for t in target):
            raise ValueError('bad shape')
        return R.reshape(x, target)
    check(K, lambda: K.reshape(K.variable(x), target), reference)


@SETTINGS
@given(shape=shapes, dtype=st.sampled_from(['float32', 'float64', 'int32', 'int64', 'bool',
                                            'float8', 'complex64', 'str', 3]))
def test_cast(K, shape, dtype):
    x = data(shape) * 3

    def reference():
        if not isinstance(dtype, str) or dtype in ('float8', 'str') or \
                np.dtype(dtype).kind not in 'biuf':
            raise TypeError('bad dtype')
        return x.astype(dtype)
    check(K, lambda: K.cast(K.variable(x), dtype), reference)


@SETTINGS
@given(size=st.integers(2, 6), k=st.integers(1, 4), stride=st.integers(0, 2),
       padding=st.sampled_from(['valid', 'same', 'full']),
       data_format=st.sampled_from(['channels_last', 'channels_first', 'NHWC']),
       in_ch=st.integers(1, 2), kernel_in=st.integers(1, 2))
def test_conv2d(K, size, k, stride, padding, data_format, in_ch, kernel_in):
    x_cl = data((1, size, size, in_ch))
    kernel = data((k, k, kernel_in, 2), 2)
    fmt_ok = data_format in ('channels_last', 'channels_first')
    x = np.transpose(x_cl, (0, 3, 1, 2)) if data_format == 'channels_first' else x_cl

    def reference():
        # 'full' is Theano's own (Keras 2.3.1's Theano backend): the 'valid' convolution
        # of the input zero-padded by k - 1 on each side
        paddings = ('valid', 'same', 'full') if K.backend() == 'theano' else ('valid', 'same')
        if not fmt_ok or padding not in paddings or stride < 1 or k < 1 \
                or in_ch != kernel_in or (padding == 'valid' and k > size):
            raise ValueError('bad conv2d arguments')
        if padding == 'full':
            axes = (2, 3) if data_format == 'channels_first' else (1, 2)
            pads = [(k - 1, k - 1) if a in axes else (0, 0) for a in range(4)]
            return R.conv2d(np.pad(x, pads, mode='constant'), kernel, strides=(stride, stride),
                            padding='valid', data_format=data_format)
        return R.conv2d(x, kernel, strides=(stride, stride), padding=padding,
                        data_format=data_format)

    def run():
        kern = convert_kernel(kernel) if K.backend() == 'theano' else kernel
        return K.conv2d(K.variable(x), K.variable(kern), strides=(stride, stride),
                        padding=padding, data_format=data_format)
    check(K, run, reference)


@SETTINGS
@given(size=st.integers(2, 6), pool=st.integers(0, 3), stride=st.integers(0, 2),
       padding=st.sampled_from(['valid', 'same']), mode=st.sampled_from(['max', 'avg', 'sum']))
def test_pool2d(K, size, pool, stride, padding, mode):
    x = data((1, size, size, 2))

    def reference():
        if pool < 1 or stride < 1 or mode not in ('max', 'avg') or \
                (padding == 'valid' and pool > size):
            raise ValueError('bad pool2d arguments')
        return R.pool2d(x, (pool, pool), strides=(stride, stride), padding=padding,
                        pool_mode=mode)
    check(K, lambda: K.pool2d(K.variable(x), (pool, pool), strides=(stride, stride),
                              padding=padding, pool_mode=mode), reference)
