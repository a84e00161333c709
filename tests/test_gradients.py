"""K.gradients of sum(op(x) * w) against central finite differences (float64)
of the numpy reference, for the differentiable ops. Inputs avoid kinks (relu
thresholds, max-pool ties, clip bounds) so that the derivative is defined.
Each test compiles one K.function for its whole group.
"""
import numpy as np
import pytest

import reference as R
from helpers import check_grads, randn, randu
from keras_backend.utils import convert_kernel


def away_from(x, points, gap=0.1):
    """Move values of ``x`` within ``gap`` of any of ``points`` away from them."""
    x = np.asarray(x, dtype=np.float32).copy()
    for p in points:
        near = np.abs(x - p) < gap
        x[near] = p + gap * np.where(x[near] >= p, 1.5, -1.5)
    return x


X = randn(3, 4)
POS = randu(3, 4, low=0.3, high=2.)
Y = randn(3, 4, seed=1)

ELEMENTWISE = [
    ('square', lambda K, x: K.square(x), R.square, [X], [0]),
    ('abs', lambda K, x: K.abs(x), R.abs, [away_from(X, [0.])], [0]),
    ('sqrt', lambda K, x: K.sqrt(x), R.sqrt, [POS], [0]),
    ('exp', lambda K, x: K.exp(x), R.exp, [X], [0]),
    ('log', lambda K, x: K.log(x), R.log, [POS], [0]),
    ('sin', lambda K, x: K.sin(x), R.sin, [X], [0]),
    ('cos', lambda K, x: K.cos(x), R.cos, [X], [0]),
    ('sigmoid', lambda K, x: K.sigmoid(x), R.sigmoid, [X], [0]),
    ('tanh', lambda K, x: K.tanh(x), R.tanh, [X], [0]),
    ('softplus', lambda K, x: K.softplus(x), R.softplus, [X], [0]),
    ('softsign', lambda K, x: K.softsign(x), R.softsign, [away_from(X, [0.])], [0]),
    ('elu', lambda K, x: K.elu(x, 0.7), lambda x: R.elu(x, 0.7), [away_from(X, [0.])], [0]),
    ('relu', lambda K, x: K.relu(x, 0.1, 1.5, 0.2), lambda x: R.relu(x, 0.1, 1.5, 0.2),
     [away_from(X * 2, [0.2, 1.5])], [0]),
    ('hard_sigmoid', lambda K, x: K.hard_sigmoid(x), R.hard_sigmoid,
     [away_from(X * 4, [-2.5, 2.5])], [0]),
    ('pow', lambda K, x: K.pow(x, 3.), lambda x: R.pow(x, 3.), [X], [0]),
    ('clip', lambda K, x: K.clip(x, -0.5, 0.5), lambda x: R.clip(x, -0.5, 0.5),
     [away_from(X, [-0.5, 0.5])], [0]),
    ('maximum', lambda K, x, y: K.maximum(x, y), R.maximum, [X, away_from(Y - X, [0.]) + X],
     [0, 1]),
    ('minimum', lambda K, x, y: K.minimum(x, y), R.minimum, [X, away_from(Y - X, [0.]) + X],
     [0, 1]),
]

REDUCTIONS = [
    ('l2_normalize', lambda K, x: K.l2_normalize(x, axis=1), lambda x: R.l2_normalize(x, 1),
     [X], [0]),
    ('logsumexp', lambda K, x: K.logsumexp(x, axis=1), lambda x: R.logsumexp(x, 1), [X], [0]),
    ('mean', lambda K, x: K.mean(x, axis=0), lambda x: R.mean(x, 0), [X], [0]),
    ('var', lambda K, x: K.var(x, axis=1), lambda x: R.var(x, 1), [X], [0]),
    ('std', lambda K, x: K.std(x, axis=1, keepdims=True), lambda x: R.std(x, 1, True), [X], [0]),
    ('prod', lambda K, x: K.prod(x, axis=1), lambda x: R.prod(x, 1), [away_from(X, [0.])], [0]),
    ('max', lambda K, x: K.max(x, axis=1), lambda x: R.max(x, 1), [X], [0]),
    ('cumsum', lambda K, x: K.cumsum(x, axis=1), lambda x: R.cumsum(x, 1), [X], [0]),
    ('cumprod', lambda K, x: K.cumprod(x, axis=1), lambda x: R.cumprod(x, 1), [X], [0]),
    ('softmax', lambda K, x: K.softmax(x), R.softmax, [X], [0]),
    ('softmax_axis1', lambda K, x: K.softmax(x, axis=1), lambda x: R.softmax(x, 1),
     [randn(2, 3, 4, seed=3)], [0]),
    ('dot', lambda K, x, w: K.dot(x, w), R.dot, [randn(2, 3, 4), randn(4, 2, seed=1)], [0, 1]),
    ('batch_dot', lambda K, x, y: K.batch_dot(x, y), R.batch_dot,
     [randn(2, 3, 4), randn(2, 4, 2, seed=1)], [0, 1]),
    ('batch_dot_axes', lambda K, x, y: K.batch_dot(x, y, axes=(1, 1)),
     lambda x, y: R.batch_dot(x, y, (1, 1)), [randn(2, 3, 4), randn(2, 3, 2, seed=1)], [0, 1]),
]

T_ONE = R.softmax(randn(3, 5, seed=4)).astype(np.float32)
P_OUT = randu(3, 5, low=0.1, high=1., seed=5)
LOGITS = randn(3, 5, seed=6)
SPARSE_T = np.array([1, 4, 0], dtype=np.int32)
BIN_T = randu(3, 4, seed=7)
BIN_P = randu(3, 4, low=0.1, high=0.9, seed=8)
XBN = randn(4, 3, 5, seed=9)


def _weighted_sum(K, outs):
    """normalize_batch_in_training's (normed, mean, var) of a channels-last input as one array of
    normed's shape, the statistics broadcast over it (K None: numpy)."""
    normed, mean, var = outs
    if K is None:
        lay = (1,) * (normed.ndim - 1) + (-1,)
        return normed + mean.reshape(lay) * 0.5 + var.reshape(lay) * 0.25
    lay = (1,) * (K.ndim(normed) - 1) + (-1,)
    return normed + K.reshape(mean, lay) * 0.5 + K.reshape(var, lay) * 0.25

LOSSES = [
    ('categorical_crossentropy', lambda K, t, o: K.categorical_crossentropy(t, o),
     R.categorical_crossentropy, [T_ONE, P_OUT], [0, 1]),
    ('categorical_crossentropy_logits',
     lambda K, t, o: K.categorical_crossentropy(t, o, from_logits=True),
     lambda t, o: R.categorical_crossentropy(t, o, True), [T_ONE, LOGITS], [0, 1]),
    ('sparse_categorical_crossentropy',
     lambda K, t, o: K.sparse_categorical_crossentropy(t, o),
     R.sparse_categorical_crossentropy, [SPARSE_T, P_OUT / P_OUT.sum(1, keepdims=True)], [1]),
    ('sparse_categorical_crossentropy_logits',
     lambda K, t, o: K.sparse_categorical_crossentropy(t, o, from_logits=True),
     lambda t, o: R.sparse_categorical_crossentropy(t, o, True), [SPARSE_T, LOGITS], [1]),
    ('binary_crossentropy', lambda K, t, o: K.binary_crossentropy(t, o),
     R.binary_crossentropy, [BIN_T, BIN_P], [0, 1]),
    ('binary_crossentropy_logits',
     lambda K, t, o: K.binary_crossentropy(t, o, from_logits=True),
     lambda t, o: R.binary_crossentropy(t, o, True), [BIN_T, randn(3, 4, seed=10) * 2], [0, 1]),
    ('batch_normalization',
     lambda K, x, m, v, b, g: K.batch_normalization(x, m, v, b, g, axis=-1, epsilon=0.01),
     lambda x, m, v, b, g: R.batch_normalization(x, m, v, b, g, -1, 0.01),
     [XBN, randn(5, seed=11), randu(5, low=0.5, high=2., seed=12), randn(5, seed=13),
      randn(5, seed=14)], [0, 1, 2, 3, 4]),
    ('normalize_batch_in_training',
     lambda K, x, g, b: K.normalize_batch_in_training(x, g, b, [0, 1])[0],
     lambda x, g, b: R.normalize_batch_in_training(x, g, b, [0, 1])[0],
     [XBN, randn(5, seed=15), randn(5, seed=16)], [0, 1, 2]),
    # Keras' BatchNormalization on channels_last images (TensorFlow: the fused kernel); the
    # three results weighted, so that the mean's and the variance's gradients count too
    ('normalize_batch_in_training_images',
     lambda K, x, g, b: _weighted_sum(K, K.normalize_batch_in_training(x, g, b, [0, 1, 2])),
     lambda x, g, b: _weighted_sum(None, R.normalize_batch_in_training(x, g, b, [0, 1, 2])),
     [randn(3, 4, 2, 5, seed=17) * 2 + 1, randn(5, seed=18), randn(5, seed=19)], [0, 1, 2]),
    # after ConvLSTM2D / Conv3D: 5-D, statistics over all but the channels (TensorFlow: the
    # fused kernel over the frames folded into the batch)
    ('normalize_batch_in_training_volumes',
     lambda K, x, g, b: _weighted_sum(K, K.normalize_batch_in_training(x, g, b, [0, 1, 2, 3])),
     lambda x, g, b: _weighted_sum(None, R.normalize_batch_in_training(x, g, b, [0, 1, 2, 3])),
     [randn(2, 3, 2, 2, 5, seed=20) * 2 + 1, randn(5, seed=21), randn(5, seed=22)], [0, 1, 2]),
]

CONVS = [
    ('conv1d', lambda K, x, k: K.conv1d(x, k, 2, 'same'), lambda x, k: R.conv1d(x, k, 2, 'same'),
     [randn(2, 6, 2), randn(3, 2, 3, seed=1)], [0, 1]),
    ('conv1d_causal_dilated', lambda K, x, k: K.conv1d(x, k, 1, 'causal', dilation_rate=2),
     lambda x, k: R.conv1d(x, k, 1, 'causal', 'channels_last', 2),
     [randn(2, 6, 2), randn(2, 2, 3, seed=1)], [0, 1]),
    ('conv2d', lambda K, x, k: K.conv2d(x, k, (2, 1), 'same'),
     lambda x, k: R.conv2d(x, k, (2, 1), 'same'), [randn(2, 5, 4, 2), randn(3, 2, 2, 3, seed=1)],
     [0, 1]),
    ('conv2d_cf', lambda K, x, k: K.conv2d(x, k, (1, 1), 'valid', 'channels_first', (2, 1)),
     lambda x, k: R.conv2d(x, k, (1, 1), 'valid', 'channels_first', (2, 1)),
     [randn(2, 2, 5, 4), randn(2, 2, 2, 3, seed=1)], [0, 1]),
    ('conv3d', lambda K, x, k: K.conv3d(x, k, (1, 2, 1), 'same'),
     lambda x, k: R.conv3d(x, k, (1, 2, 1), 'same'),
     [randn(1, 3, 4, 3, 2), randn(2, 2, 2, 2, 2, seed=1)], [0, 1]),
    ('depthwise_conv2d', lambda K, x, k: K.depthwise_conv2d(x, k, (1, 1), 'same'),
     lambda x, k: R.depthwise_conv2d(x, k, (1, 1), 'same'),
     [randn(2, 4, 4, 2), randn(3, 3, 2, 2, seed=1)], [0, 1]),
    ('separable_conv2d', lambda K, x, d, p: K.separable_conv2d(x, d, p, (2, 2), 'same'),
     lambda x, d, p: R.separable_conv2d(x, d, p, (2, 2), 'same'),
     [randn(2, 4, 5, 2), randn(2, 2, 2, 2, seed=1), randn(1, 1, 4, 3, seed=2)], [0, 1, 2]),
    ('separable_conv1d', lambda K, x, d, p: K.separable_conv1d(x, d, p, 1, 'valid'),
     lambda x, d, p: R.separable_conv1d(x, d, p, 1, 'valid'),
     [randn(2, 5, 2), randn(2, 2, 2, seed=1), randn(1, 4, 3, seed=2)], [0, 1, 2]),
    ('conv2d_transpose',
     lambda K, x, k: K.conv2d_transpose(x, k, (None, 6, 7, 2), (2, 2), 'same'),
     lambda x, k: R.conv2d_transpose(x, k, (x.shape[0], 6, 7, 2), (2, 2), 'same'),
     [randn(2, 3, 4, 3), randn(3, 3, 2, 3, seed=1)], [0, 1]),
    ('conv3d_transpose',
     lambda K, x, k: K.conv3d_transpose(x, k, (None, 3, 4, 3, 2), (1, 2, 1), 'valid'),
     lambda x, k: R.conv3d_transpose(x, k, (x.shape[0], 3, 4, 3, 2), (1, 2, 1), 'valid'),
     [randn(1, 2, 2, 2, 3), randn(2, 2, 2, 2, 3, seed=1)], [0, 1]),
    ('pool2d_max', lambda K, x: K.pool2d(x, (2, 2), (2, 2), 'same', pool_mode='max'),
     lambda x: R.pool2d(x, (2, 2), (2, 2), 'same', pool_mode='max'), [randn(2, 5, 4, 2)], [0]),
    ('pool2d_avg', lambda K, x: K.pool2d(x, (3, 3), (2, 2), 'same', pool_mode='avg'),
     lambda x: R.pool2d(x, (3, 3), (2, 2), 'same', pool_mode='avg'), [randn(2, 5, 4, 2)], [0]),
    ('pool3d_avg', lambda K, x: K.pool3d(x, (2, 2, 2), (1, 1, 1), 'same', pool_mode='avg'),
     lambda x: R.pool3d(x, (2, 2, 2), (1, 1, 1), 'same', pool_mode='avg'),
     [randn(1, 3, 3, 3, 2)], [0]),
    ('pool3d_max', lambda K, x: K.pool3d(x, (2, 2, 2), (2, 2, 2), 'valid', pool_mode='max'),
     lambda x: R.pool3d(x, (2, 2, 2), (2, 2, 2), 'valid', pool_mode='max'),
     [randn(1, 4, 4, 4, 2)], [0]),
    ('resize_bilinear',
     lambda K, x: K.resize_images(x, 2, 3, 'channels_last', interpolation='bilinear'),
     lambda x: R.resize_images(x, 2, 3, 'channels_last', 'bilinear'), [randn(2, 3, 2, 2)], [0]),
    ('local_conv1d', lambda K, x, k: K.local_conv1d(x, k, (2,), (1,)),
     lambda x, k: R.local_conv1d(x, k, 2, 1), [randn(2, 4, 2), randn(3, 4, 2, seed=1)], [0, 1]),
    ('local_conv2d', lambda K, x, k: K.local_conv2d(x, k, (2, 2), (1, 1), (2, 2)),
     lambda x, k: R.local_conv2d(x, k, (2, 2), (1, 1), (2, 2)),
     [randn(2, 3, 3, 2), randn(4, 8, 2, seed=1)], [0, 1]),
]

# rnn: a tanh recurrence with a constant; gradient wrt inputs, initial state, constant
RW = randn(2, 3, seed=20) * 0.5
RU = randn(3, 3, seed=21) * 0.5
RMASK = np.array([[1., 1., 0., 1.], [0., 1., 1., 1.]], dtype=np.float32)


def _k_rnn(go_backwards, masked):
    def fn(K, x, h0, c, *m):
        Wk, Uk = K.constant(RW), K.constant(RU)

        def step(x_t, states):
            h = K.tanh(K.dot(x_t, Wk) + K.dot(states[0], Uk) + states[1])
            return h, [h]
        last, outs, st = K.rnn(step, x, [h0], go_backwards=go_backwards,
                               mask=K.cast(m[0], 'bool') if masked else None, constants=[c])
        return outs + K.expand_dims(st[0], 1)
    return fn


def _r_rnn(go_backwards, masked):
    def fn(x, h0, c, *m):
        def step(x_t, states):
            h = np.tanh(x_t.dot(RW) + states[0].dot(RU) + states[1])
            return h, [h]
        last, outs, st = R.rnn(step, x, [h0], go_backwards=go_backwards,
                               mask=m[0] if masked else None, constants=[c])
        return outs + st[0][:, None]
    return fn


RNN_IN = [randn(2, 4, 2, seed=22), randn(2, 3, seed=23), randn(2, 3, seed=24)]
RNNS = [
    ('rnn', _k_rnn(False, False), _r_rnn(False, False), RNN_IN, [0, 1, 2]),
    ('rnn_backwards_masked', _k_rnn(True, True), _r_rnn(True, True), RNN_IN + [RMASK],
     [0, 1, 2]),
]

CTC_Y = R.softmax(randn(2, 5, 4, seed=25)).astype(np.float32)
CTCS = [
    ('ctc_batch_cost', lambda K, t, y, il, ll: K.ctc_batch_cost(t, y, il, ll),
     R.ctc_batch_cost,
     [np.array([[0, 1], [2, 2]], np.int32), CTC_Y, np.array([[5], [4]], np.int32),
      np.array([[2], [2]], np.int32)], [1]),
]


def test_grad_elementwise(K):
    check_grads(K, ELEMENTWISE)


def test_grad_reductions_dot_softmax(K):
    check_grads(K, REDUCTIONS)


def test_grad_losses_and_batchnorm(K):
    check_grads(K, LOSSES)


#: specs whose op flips its kernel (input 1) on a true-convolution backend
FLIPPED = ('conv1d', 'conv1d_causal_dilated', 'conv2d', 'conv2d_cf', 'conv3d',
           'conv2d_transpose', 'conv3d_transpose')


def _true_convolution(ref_fn):
    """The correlation reference made a true convolution (kernel converted)."""
    def ref(x, k, *rest):
        return ref_fn(x, convert_kernel(k), *rest)
    return ref


def for_backend(K, gspecs):
    """On Theano (true convolutions, as Keras' Theano backend) the reference of
    the flipped ops convolves: it sees ``convert_kernel`` of the kernel."""
    if K.backend() != 'theano':
        return gspecs
    return [(g[0], g[1], _true_convolution(g[2])) + tuple(g[3:]) if g[0] in FLIPPED else g
            for g in gspecs]


@pytest.mark.parametrize('group', [CONVS[:8], CONVS[8:]], ids=['conv', 'transpose_pool_local'])
def test_grad_conv_pool(K, group):
    check_grads(K, for_backend(K, group))


def test_grad_rnn(K):
    check_grads(K, RNNS)


def test_grad_ctc_batch_cost(K):
    check_grads(K, CTCS, atol=1e-3, rtol=2e-3)
