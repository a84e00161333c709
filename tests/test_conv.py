"""Convolutions, transposed convolutions, pooling and local convolutions.

The reference computes cross-correlations (TensorFlow's and CNTK's
convention). The Theano backend, as Keras' own, computes ``conv1d/2d/3d`` and
the transposed convolutions as true convolutions, so on it these tests feed
the kernels through ``keras_backend.utils.convert_kernel`` (what Keras' tools
did to move kernels between backends); depthwise, separable and local
convolutions correlate on every backend.
"""
import numpy as np
import pytest

import reference as R
from helpers import bind, randn, run_cases, select, spec, spec_names
from keras_backend.utils import convert_kernel

#: ops whose kernel (input 1) is flipped on a true-convolution backend
FLIPPED_OPS = ('conv1d', 'conv2d', 'conv3d', 'conv2d_transpose', 'conv3d_transpose')

CL, CF = 'channels_last', 'channels_first'


def cf(x):
    """channels_last -> channels_first copy of a numpy array."""
    return np.ascontiguousarray(np.moveaxis(x, -1, 1))


X1 = randn(2, 7, 3)
K1 = randn(3, 3, 4, seed=1)
X2 = randn(2, 6, 5, 3, seed=2)
K2 = randn(3, 2, 3, 4, seed=3)
X3 = randn(1, 4, 5, 4, 2, seed=4)
K3 = randn(2, 3, 2, 2, 3, seed=5)
DK2 = randn(3, 3, 3, 2, seed=6)
PK2 = randn(1, 1, 6, 4, seed=7)
DK1 = randn(3, 3, 2, seed=8)
PK1 = randn(1, 6, 4, seed=9)
XT = randn(2, 3, 4, 3, seed=10)
KT = randn(3, 3, 2, 3, seed=11)       # (kh, kw, out=2, in=3)
XT3 = randn(1, 2, 3, 2, 3, seed=12)
KT3 = randn(2, 2, 2, 2, 3, seed=13)   # (kd, kh, kw, out=2, in=3)
XP = randn(2, 5, 7, 3, seed=14)
XP3 = randn(2, 3, 4, 5, 2, seed=15)
XL1 = randn(2, 7, 3, seed=16)
KL1 = randn(3, 3 * 3, 4, seed=17)     # out_steps = (7 - 3) // 2 + 1 = 3
XL2 = randn(2, 5, 4, 3, seed=18)
KL2 = randn(2 * 3, 2 * 2 * 3, 4, seed=19)  # out (2, 3) with kernel (2, 2), strides (2, 1)
XBIG = randn(2, 9, 6, 2, seed=20)


def c1(strides=1, padding='valid', df=CL, dil=1):
    return lambda K, x, k: K.conv1d(x, k, strides, padding, df, dil)


def c2(strides=(1, 1), padding='valid', df=CL, dil=(1, 1)):
    return lambda K, x, k: K.conv2d(x, k, strides, padding, df, dil)


def c3(strides=(1, 1, 1), padding='valid', df=CL, dil=(1, 1, 1)):
    return lambda K, x, k: K.conv3d(x, k, strides, padding, df, dil)


def dw(strides=(1, 1), padding='valid', df=CL, dil=(1, 1)):
    return lambda K, x, k: K.depthwise_conv2d(x, k, strides, padding, df, dil)


def sep2(strides=(1, 1), padding='valid', df=CL, dil=(1, 1)):
    return lambda K, x, d, p: K.separable_conv2d(x, d, p, strides, padding, df, dil)


def sep1(strides=1, padding='valid', df=CL, dil=1):
    return lambda K, x, d, p: K.separable_conv1d(x, d, p, strides, padding, df, dil)


def t2(out_rest, strides=(1, 1), padding='valid', df=CL, dil=(1, 1)):
    # the batch entry of output_shape is the input's static batch (None when symbolic)
    return lambda K, x, k: K.conv2d_transpose(x, k, (K.int_shape(x)[0],) + out_rest, strides,
                                              padding, df, dil)


def t3(out_rest, strides=(1, 1, 1), padding='valid', df=CL):
    return lambda K, x, k: K.conv3d_transpose(x, k, (K.int_shape(x)[0],) + out_rest, strides,
                                              padding, df)


def p2(size, strides, padding, df, mode):
    return lambda K, x: K.pool2d(x, size, strides, padding, df, mode)


def p3(size, strides, padding, df, mode):
    return lambda K, x: K.pool3d(x, size, strides, padding, df, mode)


SPECS = [
    spec('conv1d', c1(), [X1, K1], R.conv1d(X1, K1)),
    spec('conv1d:same_s2', c1(2, 'same'), [X1, K1], R.conv1d(X1, K1, 2, 'same')),
    spec('conv1d:causal_d2', c1(1, 'causal', CL, 2), [X1, K1],
         R.conv1d(X1, K1, 1, 'causal', CL, 2)),
    spec('conv1d:cf_valid_s2', c1(2, 'valid', CF), [cf(X1), K1],
         R.conv1d(cf(X1), K1, 2, 'valid', CF)),
    spec('conv2d', c2(), [X2, K2], R.conv2d(X2, K2)),
    spec('conv2d:same_s2', c2((2, 2), 'same'), [X2, K2], R.conv2d(X2, K2, (2, 2), 'same')),
    spec('conv2d:same_d2', c2((1, 1), 'same', CL, (2, 1)), [X2, K2],
         R.conv2d(X2, K2, (1, 1), 'same', CL, (2, 1))),
    spec('conv2d:valid_d2', c2((1, 1), 'valid', CL, (2, 2)), [X2, K2],
         R.conv2d(X2, K2, (1, 1), 'valid', CL, (2, 2))),
    spec('conv2d:cf_s21', c2((2, 1), 'valid', CF), [cf(X2), K2],
         R.conv2d(cf(X2), K2, (2, 1), 'valid', CF)),
    spec('conv2d:cf_same_s3', c2((3, 2), 'same', CF), [cf(X2), K2],
         R.conv2d(cf(X2), K2, (3, 2), 'same', CF)),
    spec('conv3d', c3(), [X3, K3], R.conv3d(X3, K3)),
    spec('conv3d:same_s212', c3((2, 1, 2), 'same'), [X3, K3],
         R.conv3d(X3, K3, (2, 1, 2), 'same')),
    spec('conv3d:cf', c3((1, 1, 1), 'same', CF), [cf(X3), K3],
         R.conv3d(cf(X3), K3, (1, 1, 1), 'same', CF)),
    spec('conv3d:dilated', c3((1, 1, 1), 'valid', CL, (1, 2, 1)), [X3, K3],
         R.conv3d(X3, K3, (1, 1, 1), 'valid', CL, (1, 2, 1))),
    spec('depthwise_conv2d', dw(), [X2, DK2], R.depthwise_conv2d(X2, DK2)),
    spec('depthwise_conv2d:same_s2', dw((2, 2), 'same'), [X2, DK2],
         R.depthwise_conv2d(X2, DK2, (2, 2), 'same')),
    spec('depthwise_conv2d:dilated', dw((1, 1), 'same', CL, (2, 2)), [X2, DK2],
         R.depthwise_conv2d(X2, DK2, (1, 1), 'same', CL, (2, 2))),
    spec('depthwise_conv2d:cf', dw((1, 2), 'valid', CF), [cf(X2), DK2],
         R.depthwise_conv2d(cf(X2), DK2, (1, 2), 'valid', CF)),
    spec('separable_conv2d', sep2(), [X2, DK2, PK2], R.separable_conv2d(X2, DK2, PK2)),
    spec('separable_conv2d:same_s2', sep2((2, 2), 'same'), [X2, DK2, PK2],
         R.separable_conv2d(X2, DK2, PK2, (2, 2), 'same')),
    spec('separable_conv2d:dilated', sep2((1, 1), 'same', CL, (2, 2)), [X2, DK2, PK2],
         R.separable_conv2d(X2, DK2, PK2, (1, 1), 'same', CL, (2, 2))),
    spec('separable_conv2d:cf', sep2((1, 1), 'valid', CF), [cf(X2), DK2, PK2],
         R.separable_conv2d(cf(X2), DK2, PK2, (1, 1), 'valid', CF)),
    spec('separable_conv1d', sep1(), [X1, DK1, PK1], R.separable_conv1d(X1, DK1, PK1)),
    spec('separable_conv1d:same_s2', sep1(2, 'same'), [X1, DK1, PK1],
         R.separable_conv1d(X1, DK1, PK1, 2, 'same')),
    spec('separable_conv1d:dilated', sep1(1, 'same', CL, 2), [X1, DK1, PK1],
         R.separable_conv1d(X1, DK1, PK1, 1, 'same', CL, 2)),
    spec('separable_conv1d:cf', sep1(1, 'valid', CF), [cf(X1), DK1, PK1],
         R.separable_conv1d(cf(X1), DK1, PK1, 1, 'valid', CF)),
    spec('conv2d_transpose', t2((5, 6, 2)), [XT, KT], R.conv2d_transpose(XT, KT, (2, 5, 6, 2))),
    spec('conv2d_transpose:same_s2', t2((6, 8, 2), (2, 2), 'same'), [XT, KT],
         R.conv2d_transpose(XT, KT, (2, 6, 8, 2), (2, 2), 'same')),
    spec('conv2d_transpose:valid_s2', t2((7, 9, 2), (2, 2), 'valid'), [XT, KT],
         R.conv2d_transpose(XT, KT, (2, 7, 9, 2), (2, 2), 'valid')),
    spec('conv2d_transpose:same_s2_odd', t2((5, 7, 2), (2, 2), 'same'), [XT, KT],
         R.conv2d_transpose(XT, KT, (2, 5, 7, 2), (2, 2), 'same')),
    spec('conv2d_transpose:cf', t2((2, 6, 4), (2, 1), 'same', CF), [cf(XT), KT],
         R.conv2d_transpose(cf(XT), KT, (2, 2, 6, 4), (2, 1), 'same', CF)),
    spec('conv2d_transpose:dilated', t2((3, 4, 2), (1, 1), 'same', CL, (2, 2)), [XT, KT],
         R.conv2d_transpose(XT, KT, (2, 3, 4, 2), (1, 1), 'same', CL, (2, 2))),
    spec('conv3d_transpose', t3((4, 6, 4, 2), (2, 2, 2), 'same'), [XT3, KT3],
         R.conv3d_transpose(XT3, KT3, (1, 4, 6, 4, 2), (2, 2, 2), 'same')),
    spec('conv3d_transpose:valid', t3((3, 4, 3, 2)), [XT3, KT3],
         R.conv3d_transpose(XT3, KT3, (1, 3, 4, 3, 2))),
    spec('conv3d_transpose:cf', t3((2, 4, 3, 4), (2, 1, 2), 'same', CF), [cf(XT3), KT3],
         R.conv3d_transpose(cf(XT3), KT3, (1, 2, 4, 3, 4), (2, 1, 2), 'same', CF)),
    spec('pool2d', p2((2, 2), (2, 2), 'valid', CL, 'max'), [XP],
         R.pool2d(XP, (2, 2), (2, 2), 'valid', CL, 'max')),
    spec('pool2d:max_same', p2((3, 2), (2, 2), 'same', CL, 'max'), [XP],
         R.pool2d(XP, (3, 2), (2, 2), 'same', CL, 'max')),
    spec('pool2d:avg_valid', p2((2, 3), (1, 2), 'valid', CL, 'avg'), [XP],
         R.pool2d(XP, (2, 3), (1, 2), 'valid', CL, 'avg')),
    spec('pool2d:avg_same', p2((3, 3), (2, 2), 'same', CL, 'avg'), [XP],
         R.pool2d(XP, (3, 3), (2, 2), 'same', CL, 'avg')),
    spec('pool2d:avg_same_s1', p2((2, 2), (1, 1), 'same', CL, 'avg'), [XBIG],
         R.pool2d(XBIG, (2, 2), (1, 1), 'same', CL, 'avg')),
    spec('pool2d:cf_max', p2((2, 2), (1, 1), 'same', CF, 'max'), [cf(XP)],
         R.pool2d(cf(XP), (2, 2), (1, 1), 'same', CF, 'max')),
    spec('pool2d:cf_avg', p2((3, 2), (2, 3), 'same', CF, 'avg'), [cf(XP)],
         R.pool2d(cf(XP), (3, 2), (2, 3), 'same', CF, 'avg')),
    spec('pool3d', p3((2, 2, 2), (2, 2, 2), 'valid', CL, 'max'), [XP3],
         R.pool3d(XP3, (2, 2, 2), (2, 2, 2), 'valid', CL, 'max')),
    spec('pool3d:avg_same', p3((2, 3, 2), (2, 2, 2), 'same', CL, 'avg'), [XP3],
         R.pool3d(XP3, (2, 3, 2), (2, 2, 2), 'same', CL, 'avg')),
    spec('pool3d:cf_max_same', p3((3, 2, 2), (1, 2, 2), 'same', CF, 'max'), [cf(XP3)],
         R.pool3d(cf(XP3), (3, 2, 2), (1, 2, 2), 'same', CF, 'max')),
    spec('pool3d:cf_avg', p3((2, 2, 2), (1, 1, 1), 'valid', CF, 'avg'), [cf(XP3)],
         R.pool3d(cf(XP3), (2, 2, 2), (1, 1, 1), 'valid', CF, 'avg')),
    spec('local_conv1d', lambda K, x, k: K.local_conv1d(x, k, (3,), (2,)), [XL1, KL1],
         R.local_conv1d(XL1, KL1, 3, 2)),
    spec('local_conv2d', lambda K, x, k: K.local_conv2d(x, k, (2, 2), (2, 1), (2, 3)),
         [XL2, KL2], R.local_conv2d(XL2, KL2, (2, 2), (2, 1), (2, 3))),
    spec('local_conv2d:cf', lambda K, x, k: K.local_conv2d(x, k, (2, 2), (2, 1), (2, 3), CF),
         [cf(XL2), KL2], R.local_conv2d(cf(XL2), KL2, (2, 2), (2, 1), (2, 3), CF)),
]

NAMES = spec_names(SPECS)


def flips_kernels(K):
    """True when ``K`` computes true convolutions (Keras' Theano convention)."""
    return K.backend() == 'theano'


def kernel_for(K, kernel):
    """A correlation-convention numpy kernel as ``K``'s conv ops expect it."""
    return convert_kernel(kernel) if flips_kernels(K) else kernel


def for_backend(K, specs):
    """``specs`` with the kernels of the flipped ops converted for ``K``."""
    if not flips_kernels(K):
        return specs
    out = []
    for name, fn, inputs, expected, kw in specs:
        if name.split(':')[0] in FLIPPED_OPS:
            inputs = [inputs[0], convert_kernel(inputs[1])] + list(inputs[2:])
        out.append((name, fn, inputs, expected, kw))
    return out


@pytest.mark.parametrize('name', NAMES)
def test_eager(K, name):
    run_cases(K, bind(K, for_backend(K, select(SPECS, name)), symbolic=False))


@pytest.mark.parametrize('names', [tuple(NAMES[:6]), tuple(NAMES[6:])],
                         ids=['convs', 'transposed_pool_local'])
def test_symbolic_grouped(K, names):
    specs = [s for n in names for s in select(SPECS, n)]
    run_cases(K, bind(K, for_backend(K, specs), eager=False))


def test_conv_default_data_format_is_image_data_format(K):
    K.set_image_data_format(CF)
    out = K.eval(K.conv2d(K.variable(cf(X2)), K.variable(kernel_for(K, K2))))
    np.testing.assert_allclose(out, R.conv2d(cf(X2), K2, data_format=CF), atol=1e-5, rtol=1e-5)
    out = K.eval(K.pool2d(K.variable(cf(XP)), (2, 2), pool_mode='avg'))
    np.testing.assert_allclose(out, R.pool2d(cf(XP), (2, 2), data_format=CF, pool_mode='avg'),
                               atol=1e-5, rtol=1e-5)


def test_same_padding_with_a_kernel_longer_than_the_image(K):
    """'same' with a 3x3 kernel over a 2x2 image (ConvLSTM2D's recurrent convolution of a
    'valid' state): every engine pads it (CNTK's own padding refused the kernel)."""
    x = randn(2, 2, 2, 3, seed=40)
    k = randn(3, 3, 3, 2, seed=41)
    out = K.eval(K.conv2d(K.variable(x), K.variable(kernel_for(K, k)), padding='same'))
    np.testing.assert_allclose(out, R.conv2d(x, k, padding='same'), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize('kernel_size', [(3, 3, 3), (2, 3, 4)], ids=['odd', 'even'])
def test_same_padding_over_an_unknown_axis(K, kernel_size):
    """conv3d 'same' at stride 1 over an unknown number of frames (Keras' Conv3D after a
    ConvLSTM2D on movies of any length): the padding does not depend on the size, so every
    engine takes it (CNTK refused it before)."""
    x = randn(2, 4, 5, 6, 2, seed=42)
    k = randn(*(kernel_size + (2, 3)), seed=43)
    ph = K.placeholder((None, None, 5, 6, 2))
    y = K.conv3d(ph, K.variable(kernel_for(K, k)), padding='same')
    assert K.int_shape(y)[1] is None
    out = K.function([ph], [y])([x])[0]
    np.testing.assert_allclose(out, R.conv3d(x, k, padding='same'), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize('pool_size', [(3, 3), (2, 3)], ids=['odd', 'even'])
def test_average_pooling_same_over_unknown_sizes(K, pool_size):
    """pool2d 'avg', 'same', stride 1 over images of unknown height and width (Keras'
    InceptionV3 built for any image size): each window averages its real cells only, on
    every engine (CNTK needed the sizes before)."""
    x = randn(2, 5, 6, 3, seed=44)
    ph = K.placeholder((None, None, None, 3))
    y = K.pool2d(ph, pool_size, strides=(1, 1), padding='same', pool_mode='avg')
    out = K.function([ph], [y])([x])[0]
    np.testing.assert_allclose(out, R.pool2d(x, pool_size, (1, 1), 'same', CL, 'avg'),
                               atol=1e-5, rtol=1e-5)


def test_transposed_conv_is_adjoint_of_conv(K):
    """<conv(z), x> == <conv_transpose(x), z> evaluated entirely by the backend."""
    z = randn(2, 6, 8, 2, seed=30)
    x = randn(2, 3, 4, 3, seed=31)
    fz = K.eval(K.conv2d(K.variable(z), K.variable(KT), (2, 2), 'same'))
    tx = K.eval(K.conv2d_transpose(K.variable(x), K.variable(KT), (2, 6, 8, 2), (2, 2), 'same'))
    np.testing.assert_allclose(np.sum(R.f64(fz) * x), np.sum(R.f64(tx) * z), rtol=1e-5)


def test_convert_kernel_flips_spatial_axes_only():
    for k in (K1, K2, K3):
        c = convert_kernel(k)
        assert c.shape == k.shape and c.dtype == k.dtype
        n = k.ndim - 2
        np.testing.assert_array_equal(c, k[(slice(None, None, -1),) * n])
        np.testing.assert_array_equal(convert_kernel(c), k)
        assert not np.shares_memory(c, k)
    with pytest.raises(ValueError):
        convert_kernel(np.zeros((3, 3)))


def test_conv_convention_follows_backend(K):
    """Theano convolves (kernel flipped), TensorFlow and CNTK correlate."""
    x = np.zeros((1, 5, 1), 'float32')
    x[0, 2, 0] = 1.
    k = np.array([1., 2., 3.], 'float32').reshape(3, 1, 1)
    out = K.eval(K.conv1d(K.variable(x), K.variable(k), padding='same'))[0, :, 0]
    # correlation: out[i] = sum_j x[i + j - 1] k[j]; convolution reverses k
    want = [0., 1., 2., 3., 0.] if flips_kernels(K) else [0., 3., 2., 1., 0.]
    np.testing.assert_allclose(out, want, atol=1e-6)


def test_bad_padding_raises(K):
    with pytest.raises(ValueError):
        K.conv2d(K.variable(X2), K.variable(K2), padding='wide')
    with pytest.raises(ValueError):
        K.pool2d(K.variable(XP), (2, 2), pool_mode='median')


def test_full_padding_only_where_keras_took_it(K):
    """'full' is Theano's: Keras 2.3.1's TensorFlow and CNTK backends refuse it."""
    x, kernel = K.constant(randn(1, 5, 5, 2)), K.constant(randn(3, 3, 2, 2))
    if K.backend() == 'theano':
        assert K.int_shape(K.conv2d(x, kernel, padding='full')) == (1, 7, 7, 2)
    else:
        with pytest.raises(ValueError, match='padding'):
            K.conv2d(x, kernel, padding='full')
