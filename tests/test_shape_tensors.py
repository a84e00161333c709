"""Sizes given as tensors (``K.shape(x)[i]``) to reshape, tile and the transposed
convolutions, the way Keras' own layers pass them (Reshape, TimeDistributed,
Conv2DTranspose), and gather's gradient with free-size indices (Embedding)."""
import numpy as np
import pytest

import reference as R
from helpers import assert_values, randn
from test_conv import kernel_for


def run(K, inputs, outputs, values):
    return K.function(inputs, outputs)(values)


def test_reshape_to_sizes_of_another_tensor(K):
    # both target sizes known only at run time
    x = K.placeholder((None, None))
    y = K.placeholder((None,))
    r = K.reshape(y, (K.shape(x)[0], K.shape(x)[1]))
    g = K.gradients(K.sum(r * r), [y])[0]
    yv = np.arange(6.).astype('float32')
    out, grad = run(K, [x, y], [r, g], [np.zeros((2, 3), 'float32'), yv])
    assert_values(out, yv.reshape(2, 3))
    assert_values(grad, 2 * yv)


def test_reshape_keeping_batch_like_keras_reshape_layer(K):
    # keras.layers.Reshape: K.reshape(x, (K.shape(x)[0],) + target_shape)
    z = K.placeholder((None, None, 4))
    r = K.reshape(z, (K.shape(z)[0], -1, 1))
    zv = randn(3, 5, 4)
    assert_values(run(K, [z], [r], [zv])[0], zv.reshape(3, -1, 1))
    s = K.reshape(z, (K.shape(z)[0], K.shape(z)[1] * 4))
    assert_values(run(K, [z], [s], [zv])[0], zv.reshape(3, 20))


def test_reshape_to_a_shape_tensor(K):
    z = K.placeholder((None, 6))
    r = K.reshape(z, K.shape(K.reshape(z, (-1, 3, 2))))
    zv = randn(4, 6)
    assert_values(run(K, [z], [r], [zv])[0], zv.reshape(4, 3, 2))


def test_tile_by_batch_size(K):
    v = randn(2, 3)
    e = K.variable(v)
    x = K.placeholder((None, 3))
    t = K.tile(K.expand_dims(e, 0), [K.shape(x)[0], 1, 1])
    assert K.int_shape(t)[1:] == (2, 3)
    g = K.gradients(K.sum(t * t), [e])[0]
    out, grad = run(K, [x], [t, g], [np.zeros((4, 3), 'float32')])
    assert_values(out, np.tile(v[None], (4, 1, 1)))
    assert_values(grad, 8 * v)


def test_tile_axis_longer_than_one_by_run_time_size(K):
    x = K.placeholder((None, 3))
    xv = randn(4, 3)
    t = K.tile(x, [2, K.shape(x)[1]])
    assert_values(run(K, [x], [t], [xv])[0], np.tile(xv, (2, 3)))
    u = K.tile(x, K.shape(x))
    assert_values(run(K, [x], [u], [xv])[0], np.tile(xv, (4, 3)))


def test_conv2d_transpose_output_shape_from_shape_tensor(K):
    # keras.layers.Conv2DTranspose: (K.shape(x)[0], f(K.shape(x)[1]), f(K.shape(x)[2]), filters)
    xv = randn(2, 3, 4, 2)
    kv = randn(3, 3, 5, 2, seed=1)        # (rows, cols, out, in)
    x = K.placeholder((None, 3, 4, 2))
    k = K.variable(kernel_for(K, kv))
    s = K.shape(x)
    y = K.conv2d_transpose(x, k, (s[0], s[1] * 2 + 1, s[2] * 2 + 1, 5), strides=(2, 2),
                           data_format='channels_last')
    want = R.conv2d_transpose(xv, kv, (2, 7, 9, 5), strides=(2, 2),
                              data_format='channels_last')
    assert_values(run(K, [x], [y], [xv])[0], want)


def test_conv2d_transpose_output_padding_from_shape_tensor(K):
    # keras.layers.Conv2DTranspose(output_padding=1), 'valid': (in - 1) * stride + k + 1,
    # one more than the default length, computed from K.shape(x)
    if getattr(K, 'ENGINE', None) == 'theano':
        pytest.skip('Theano 1.0.5: a transposed-conv output size given as a tensor must be the '
                    'default length (docs/semantics.md)')
    xv = randn(2, 3, 4, 2)
    kv = randn(3, 3, 5, 2, seed=1)        # (rows, cols, out, in)
    x = K.placeholder((None, 3, 4, 2))
    k = K.variable(kernel_for(K, kv))
    s = K.shape(x)
    y = K.conv2d_transpose(x, k, (s[0], (s[1] - 1) * 2 + 3 + 1, (s[2] - 1) * 2 + 3 + 1, 5),
                           strides=(2, 2), data_format='channels_last')
    want = R.conv2d_transpose(xv, kv, (2, 8, 10, 5), strides=(2, 2),
                              data_format='channels_last')
    assert_values(run(K, [x], [y], [xv])[0], want)


def test_conv3d_transpose_output_shape_from_shape_tensor(K):
    xv = randn(2, 2, 3, 2, 2)
    kv = randn(2, 2, 2, 3, 2, seed=1)
    x = K.placeholder((None, 2, 3, 2, 2))
    k = K.variable(kernel_for(K, kv))
    s = K.shape(x)
    y = K.conv3d_transpose(x, k, (s[0], s[1] * 2, s[2] * 2, s[3] * 2, 3), strides=(2, 2, 2),
                           padding='same', data_format='channels_last')
    want = R.conv3d_transpose(xv, kv, (2, 4, 6, 4, 3), strides=(2, 2, 2), padding='same',
                              data_format='channels_last')
    assert_values(run(K, [x], [y], [xv])[0], want)


def test_gather_gradient_with_free_size_indices(K):
    wv = randn(5, 6)
    w = K.variable(wv)
    i = K.placeholder((None, None), dtype='int32')
    iv = np.array([[0, 3, 3, 1], [4, 4, 2, 0], [1, 1, 1, 1]])
    y = K.gather(w, i)
    g = K.gradients(K.sum(y * y), [w])[0]
    out, grad = run(K, [i], [y, g], [iv])
    want = np.zeros_like(wv)
    np.add.at(want, iv.reshape(-1), 2 * wv[iv].reshape(-1, 6))
    assert_values(out, wv[iv])
    assert_values(grad, want)


def test_gather_gradient_from_a_vector(K):
    wv = np.arange(5.).astype('float32')
    w = K.variable(wv)
    i = K.placeholder((None,), dtype='int32')
    y = K.gather(w, i)
    g = K.gradients(K.sum(y * y), [w])[0]
    iv = np.array([1, 1, 3])
    out, grad = run(K, [i], [y, g], [iv])
    assert_values(out, wv[iv])
    assert_values(grad, np.array([0., 4., 0., 6., 0.]))


def test_repeat_by_sizes_known_at_run_time(K):
    xv = randn(2, 3)
    x = K.placeholder((None, 3))
    by_batch = K.repeat(x, K.shape(x)[0])          # 2 for a batch of 2
    by_value = K.repeat(x, K.shape(x)[0] * 2)      # 4
    g = K.gradients(K.sum(by_value * by_value), [x])[0]
    got_b, got_v, got_g = run(K, [x], [by_batch, by_value, g], [xv])
    assert_values(got_b, np.repeat(xv[:, None, :], 2, axis=1))
    assert_values(got_v, np.repeat(xv[:, None, :], 4, axis=1))
    assert_values(got_g, 8 * xv)


def test_random_binomial_rate_from_the_graph(K):
    x = K.placeholder((None, 50))
    rate = K.max(x)
    draws = K.random_binomial(K.shape(x), p=rate, seed=2)
    fixed = K.random_binomial((40, 50), p=rate, seed=3)
    f = K.function([x], [draws, fixed])
    for r in (0., 1.):
        got_d, got_f = f([np.full((40, 50), r, 'float32')])
        assert_values(got_d, np.full((40, 50), r))
        assert_values(got_f, np.full((40, 50), r))
    got_d, _ = f([np.full((40, 50), 0.3, 'float32')])
    assert set(np.unique(got_d)) <= {0., 1.}
    assert abs(got_d.mean() - 0.3) < 0.06


def test_unknown_sizes_stay_unknown_through_deep_downsampling(K):
    """Keras 2.0-2.1's ResNet50 takes images of unknown height and width down by 32, then
    averages 7x7 windows ('valid'); here 5x5 windows (Theano's and PyTensor's Python
    implementations, which CI runs, sum at most 32 terms in one op). The sizes stay unknown
    (TensorFlow's static shape), the pool is not refused when the graph is built, and the
    values are the reference's."""
    x = K.placeholder((None, None, None, 2))
    y = x
    for _ in range(5):
        y = K.pool2d(y, (2, 2), (2, 2), 'valid', 'channels_last', 'avg')
    assert K.int_shape(y) == (None, None, None, 2)
    z = K.pool2d(y, (5, 5), (5, 5), 'valid', 'channels_last', 'avg')
    assert K.int_shape(z) == (None, None, None, 2)
    f = K.function([x], [z])
    for size in (224, 480):
        xv = randn(1, size, size, 2)
        ref = xv
        for _ in range(5):
            ref = R.pool2d(ref, (2, 2), (2, 2), 'valid', 'channels_last', 'avg')
        ref = R.pool2d(ref, (5, 5), (5, 5), 'valid', 'channels_last', 'avg')
        assert_values(f([xv])[0], ref)


def test_a_tensor_made_from_unknown_sizes(K):
    """A constant tiled by the unknown sizes of a batch of images (``K.shape(x)``): its
    static shape is unknown where ``x``'s is, and its values come at run time (the eager
    engines never build such a tensor at the sizes they use to work out static shapes: there
    it would take gigabytes)."""
    x = K.placeholder((None, None, None, 512))
    n = K.shape(x)
    o = K.tile(K.ones((1, 1, 1, 512)), [n[0], n[1], n[2], 1])
    assert K.int_shape(o)[:3] == (None, None, None)
    s = K.sum(o, axis=[1, 2, 3]) + K.sum(x, axis=[1, 2, 3])
    xv = randn(2, 3, 4, 512)
    assert_values(K.function([x], [s])([xv])[0], 3 * 4 * 512 + xv.sum(axis=(1, 2, 3)),
                  atol=1e-3)
