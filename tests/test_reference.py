"""Self-checks of the numpy reference (no backend needed).

Each vectorised reference routine is checked against an independent, slow
formulation: direct loops, brute-force enumeration of CTC paths, adjoint
identities. Where TensorFlow happens to be importable a few routines are also
cross-checked against it (skipped otherwise).
"""
import itertools

import numpy as np
import pytest

import reference as R
from helpers import randn


def naive_conv2d(x, k, strides, padding, dilation):
    """Direct loops, channels_last, written independently of R.conv_nd."""
    n, h, w, cin = x.shape
    kh, kw, _, cout = k.shape
    sh, sw = strides
    dh, dw = dilation
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    if padding == 'valid':
        oh, ow = (h - ekh) // sh + 1, (w - ekw) // sw + 1
        ph = pw = 0
    else:
        oh, ow = int(np.ceil(h / float(sh))), int(np.ceil(w / float(sw)))
        ph = max((oh - 1) * sh + ekh - h, 0) // 2
        pw = max((ow - 1) * sw + ekw - w, 0) // 2
    out = np.zeros((n, oh, ow, cout))
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                for a in range(kh):
                    for c in range(kw):
                        r = i * sh + a * dh - ph
                        s = j * sw + c * dw - pw
                        if 0 <= r < h and 0 <= s < w:
                            out[b, i, j] += x[b, r, s].dot(k[a, c])
    return out


@pytest.mark.parametrize('strides,padding,dilation', [
    ((1, 1), 'valid', (1, 1)), ((2, 1), 'valid', (1, 1)), ((1, 1), 'same', (1, 1)),
    ((2, 2), 'same', (1, 1)), ((1, 1), 'same', (2, 1)), ((3, 2), 'same', (1, 1)),
    ((1, 1), 'valid', (2, 2))])
def test_conv2d_matches_loops(strides, padding, dilation):
    x = randn(2, 7, 6, 3)
    k = randn(3, 2, 3, 4, seed=1)
    got = R.conv2d(x, k, strides, padding, 'channels_last', dilation)
    np.testing.assert_allclose(got, naive_conv2d(R.f64(x), R.f64(k), strides, padding, dilation),
                               atol=1e-10)
    # channels_first is the same computation on permuted axes
    got_cf = R.conv2d(np.transpose(x, (0, 3, 1, 2)), k, strides, padding, 'channels_first',
                      dilation)
    np.testing.assert_allclose(got_cf, np.transpose(got, (0, 3, 1, 2)), atol=1e-10)


def test_conv1d_causal_is_left_padded_valid():
    x = randn(2, 6, 3)
    k = randn(3, 3, 2, seed=1)
    got = R.conv1d(x, k, 1, 'causal', 'channels_last', 2)
    padded = np.pad(x, ((0, 0), (4, 0), (0, 0)), mode='constant')
    np.testing.assert_allclose(got, R.conv1d(padded, k, 1, 'valid', 'channels_last', 2),
                               atol=1e-10)
    # conv1d equals conv2d with a unit height
    got2 = R.conv2d(x[:, None], k[None], (1, 1), 'valid')[:, 0]
    np.testing.assert_allclose(R.conv1d(x, k), got2, atol=1e-10)


def test_conv3d_matches_sum_of_conv2d():
    x = randn(1, 4, 5, 5, 2)
    k = randn(2, 3, 3, 2, 3, seed=1)
    got = R.conv3d(x, k, (1, 1, 1), 'valid')
    want = np.zeros_like(got)
    for d in range(got.shape[1]):
        for a in range(2):
            want[:, d] += naive_conv2d(R.f64(x[:, d + a]), R.f64(k[a]), (1, 1), 'valid', (1, 1))
    np.testing.assert_allclose(got, want, atol=1e-10)


def test_depthwise_and_separable():
    x = randn(2, 5, 5, 3)
    dk = randn(3, 3, 3, 2, seed=1)
    pk = randn(1, 1, 6, 4, seed=2)
    got = R.depthwise_conv2d(x, dk, (1, 1), 'same')
    for c in range(3):
        for m in range(2):
            one = naive_conv2d(R.f64(x[..., c:c + 1]), R.f64(dk[:, :, c:c + 1, m:m + 1]),
                               (1, 1), 'same', (1, 1))
            np.testing.assert_allclose(got[..., c * 2 + m], one[..., 0], atol=1e-10)
    sep = R.separable_conv2d(x, dk, pk, (1, 1), 'same')
    np.testing.assert_allclose(sep, R.conv2d(got, pk), atol=1e-10)


@pytest.mark.parametrize('strides,padding,out_hw,dilation', [
    ((1, 1), 'valid', (6, 5), (1, 1)), ((2, 2), 'valid', (9, 7), (1, 1)),
    ((2, 2), 'valid', (10, 8), (1, 1)), ((2, 2), 'same', (8, 6), (1, 1)),
    ((2, 3), 'same', (7, 5), (1, 1)), ((1, 1), 'same', (4, 3), (2, 2))])
def test_conv_transpose_is_adjoint(strides, padding, out_hw, dilation):
    k = randn(3, 2, 2, 3, seed=1)  # (kh, kw, out=2, in=3)
    z = randn(2, out_hw[0], out_hw[1], 2, seed=2)
    # forward conv maps z (out channels) to x (in channels) with kernel (kh, kw, 2, 3)
    fz = R.conv2d(z, k, strides, padding, 'channels_last', dilation)
    x = randn(*fz.shape, seed=3)
    tx = R.conv2d_transpose(x, k, (2,) + out_hw + (2,), strides, padding, 'channels_last',
                            dilation)
    assert tx.shape == z.shape
    np.testing.assert_allclose(np.sum(fz * x), np.sum(tx * z), rtol=1e-10)
    tx_cf = R.conv2d_transpose(np.transpose(x, (0, 3, 1, 2)), k, (2, 2) + out_hw, strides,
                               padding, 'channels_first', dilation)
    np.testing.assert_allclose(tx_cf, np.transpose(tx, (0, 3, 1, 2)), atol=1e-10)


def test_conv3d_transpose_is_adjoint():
    k = randn(2, 2, 3, 2, 3, seed=1)
    z = randn(1, 5, 4, 6, 2, seed=2)
    fz = R.conv3d(z, k, (2, 1, 2), 'same')
    x = randn(*fz.shape, seed=3)
    tx = R.conv3d_transpose(x, k, z.shape, (2, 1, 2), 'same')
    np.testing.assert_allclose(np.sum(fz * x), np.sum(tx * z), rtol=1e-10)


def test_pooling_matches_loops():
    x = randn(2, 5, 7, 3)
    for padding in ('valid', 'same'):
        for mode in ('max', 'avg'):
            got = R.pool2d(x, (2, 3), (2, 2), padding, 'channels_last', mode)
            oh = R.conv_out_length(5, 2, 2, 1, padding)
            ow = R.conv_out_length(7, 3, 2, 1, padding)
            ph = R.same_padding(5, 2, 2)[0] if padding == 'same' else 0
            pw = R.same_padding(7, 3, 2)[0] if padding == 'same' else 0
            want = np.zeros((2, oh, ow, 3))
            for i in range(oh):
                for j in range(ow):
                    r0, c0 = i * 2 - ph, j * 2 - pw
                    win = x[:, max(r0, 0):r0 + 2, max(c0, 0):c0 + 3]
                    want[:, i, j] = (win.max(axis=(1, 2)) if mode == 'max'
                                     else win.mean(axis=(1, 2)))
            np.testing.assert_allclose(got, want, atol=1e-6)
    got3 = R.pool3d(randn(1, 3, 4, 4, 2), (2, 2, 2), (2, 2, 2), 'same', 'channels_last', 'avg')
    assert got3.shape == (1, 2, 2, 2, 2)


def test_local_conv_matches_loops():
    x = randn(2, 7, 3)
    w = randn(3, 3 * 3, 4, seed=1)
    got = R.local_conv1d(x, w, 3, 2)
    for i in range(3):
        for b in range(2):
            want = np.einsum('ki,kio->o', R.f64(x[b, 2 * i:2 * i + 3]),
                             R.f64(w[i]).reshape(3, 3, 4))
            np.testing.assert_allclose(got[b, i], want, atol=1e-10)
    x2 = randn(2, 5, 4, 3)
    w2 = randn(2 * 3, 2 * 2 * 3, 4, seed=2)
    got2 = R.local_conv2d(x2, w2, (2, 2), (2, 1), (2, 3))
    assert got2.shape == (2, 2, 3, 4)
    np.testing.assert_allclose(got2[1, 1, 2], R.f64(x2[1, 2:4, 2:4]).reshape(-1).dot(w2[5]),
                               atol=1e-10)
    # channels_first flattens (in, kh, kw)
    w3 = randn(2 * 3, 2 * 2 * 3, 4, seed=3)
    cl = R.local_conv2d(x2, w3, (2, 2), (2, 1), (2, 3))
    w3_cf = w3.reshape(6, 2, 2, 3, 4).transpose(0, 3, 1, 2, 4).reshape(6, 12, 4)
    cf = R.local_conv2d(np.transpose(x2, (0, 3, 1, 2)), w3_cf, (2, 2), (2, 1), (2, 3),
                        'channels_first')
    np.testing.assert_allclose(cf, np.transpose(cl, (0, 3, 1, 2)), atol=1e-10)


def test_bilinear_resize_properties():
    x = randn(1, 3, 4, 2)
    up = R.resize_images(x, 2, 3, 'channels_last', 'bilinear')
    assert up.shape == (1, 6, 12, 2)
    # a constant image stays constant; a linear ramp stays linear in the interior
    const = R.resize_images(np.ones((1, 2, 2, 1)), 3, 3, 'channels_last', 'bilinear')
    np.testing.assert_allclose(const, 1.)
    ramp = np.arange(4.).reshape(1, 1, 4, 1)
    r = R.resize_images(ramp, 1, 2, 'channels_last', 'bilinear')[0, 0, :, 0]
    np.testing.assert_allclose(r, [0., 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3.])


def test_bilinear_resize_matches_tensorflow_if_available():
    tf = pytest.importorskip('tensorflow')
    x = randn(2, 3, 5, 2)
    want = tf.image.resize(x, (9, 10), method='bilinear').numpy()
    np.testing.assert_allclose(R.resize_images(x, 3, 2, 'channels_last', 'bilinear'), want,
                               atol=1e-5)


def test_conv_matches_tensorflow_if_available():
    tf = pytest.importorskip('tensorflow')
    x = randn(2, 7, 6, 3)
    k = randn(3, 2, 3, 4, seed=1)
    want = tf.nn.conv2d(x, k, (2, 1), 'SAME').numpy()
    np.testing.assert_allclose(R.conv2d(x, k, (2, 1), 'same'), want, atol=1e-5)
    k2 = randn(3, 3, 2, 3, seed=1)
    xt = randn(2, 4, 3, 3, seed=4)
    want = tf.nn.conv2d_transpose(xt, k2, (2, 8, 6, 2), (2, 2), 'SAME').numpy()
    np.testing.assert_allclose(R.conv2d_transpose(xt, k2, (2, 8, 6, 2), (2, 2), 'same'),
                               want, atol=1e-5)
    want = tf.nn.avg_pool2d(x, (3, 3), (2, 2), 'SAME').numpy()
    np.testing.assert_allclose(R.pool2d(x, (3, 3), (2, 2), 'same', pool_mode='avg'), want,
                               atol=1e-5)


def _brute_ctc(logp, label):
    T, C = logp.shape
    total = -np.inf
    for path in itertools.product(range(C), repeat=T):
        if R.collapse(path, C - 1) == list(label):
            total = np.logaddexp(total, np.sum(logp[np.arange(T), list(path)]))
    return -total


@pytest.mark.parametrize('label', [[], [0], [1, 0], [1, 1], [0, 1, 0]])
def test_ctc_forward_matches_brute_force(label):
    logp = R.log_softmax(randn(5, 3, seed=len(label)), -1)
    np.testing.assert_allclose(R.ctc_sequence_nll(logp, label), _brute_ctc(logp, label),
                               rtol=1e-10)


def test_ctc_batch_cost_uses_lengths_and_eps():
    y = R.softmax(randn(2, 5, 4), -1)
    labels = np.array([[1, 2, 0], [0, 0, 0]])
    cost = R.ctc_batch_cost(labels, y, [[5], [3]], [[2], [1]])
    assert cost.shape == (2, 1)
    logp = R.log_softmax(np.log(y + R.EPSILON), -1)
    np.testing.assert_allclose(cost[1, 0], _brute_ctc(logp[1, :3], [0]), rtol=1e-10)


def test_prefix_beam_search_exact_and_pruned():
    logp = R.log_softmax(randn(4, 3, seed=7), -1)
    res = R.prefix_beam_search(logp)
    probs = {}
    for path in itertools.product(range(3), repeat=4):
        lab = tuple(R.collapse(path, 2))
        probs[lab] = np.logaddexp(probs.get(lab, -np.inf), np.sum(logp[np.arange(4), list(path)]))
    assert len(res) == len(probs)
    for lab, lp in res:
        np.testing.assert_allclose(lp, probs[lab], rtol=1e-10)
    best = sorted(probs.items(), key=lambda kv: -kv[1])
    assert [r[0] for r in res[:3]] == [b[0] for b in best[:3]]
    np.testing.assert_allclose(np.logaddexp.reduce([r[1] for r in res]), 0., atol=1e-10)
    assert len(R.prefix_beam_search(logp, beam_width=2)) == 2


def test_greedy_decode_padding():
    y = np.full((2, 5, 3), 0.05)
    best = [[0, 0, 2, 0, 1], [2, 1, 2, 2, 2]]
    for b in range(2):
        for t in range(5):
            y[b, t, best[b][t]] = 0.9
    dec, lp = R.ctc_greedy_decode(y, [5, 4])
    np.testing.assert_array_equal(dec[0], [[0, 0, 1], [1, -1, -1]])
    np.testing.assert_allclose(lp[:, 0], [-5 * np.log(0.9 + 1e-7), -4 * np.log(0.9 + 1e-7)])


def test_rnn_reference_mask_and_backwards():
    x = randn(2, 4, 3)
    mask = np.array([[1, 1, 0, 1], [0, 1, 1, 1]])

    def step(xt, states):
        return states[0] + xt, [states[0] + xt]
    last, outs, st = R.rnn(step, x, [np.zeros((2, 3))], mask=mask)
    np.testing.assert_allclose(outs[0, 2], x[0, 0] + x[0, 1])
    np.testing.assert_allclose(outs[1, 0], 0.)
    np.testing.assert_allclose(st[0][0], R.f64(x[0, 0]) + x[0, 1] + x[0, 3], rtol=1e-6)
    last_b, outs_b, _ = R.rnn(step, x, [np.zeros((2, 3))], go_backwards=True)
    np.testing.assert_allclose(outs_b[:, 0], x[:, 3])
    np.testing.assert_allclose(last_b, x.sum(axis=1), rtol=1e-6)


def test_small_math_reference():
    np.testing.assert_array_equal(R.round(np.array([0.5, 1.5, 2.5, -0.5, -1.5])),
                                  [0., 2., 2., -0., -2.])
    np.testing.assert_array_equal(R.in_top_k(np.array([[1., 2., 2.], [3., 1., 1.]]),
                                             np.array([1, 1]), 1), [True, False])
    np.testing.assert_array_equal(R.in_top_k(np.array([[1., np.nan, 0.]]),
                                             np.array([1]), 3), [False])
    assert np.isfinite(R.softplus(np.array([1000., -1000.]))).all()
    np.testing.assert_allclose(R.relu(np.array([-2., 0.5, 1., 3., 7.]), 0.1, 5., 1.),
                               [-0.3, -0.05, 0., 3., 5.])
    np.testing.assert_allclose(R.clip(np.array([-1., 0.5, 3.]), 1., 0.), [1., 1., 1.])
    np.testing.assert_allclose(R.batch_dot(np.ones((3, 2)), np.ones((3, 2))), 2 * np.ones((3, 1)))
    x, y = randn(2, 3, 4), randn(2, 4, 5, seed=1)
    np.testing.assert_allclose(R.batch_dot(x, y), np.einsum('bij,bjk->bik', x, y), rtol=1e-6)
    np.testing.assert_allclose(R.batch_dot(x, randn(2, 5, 4), (2, 2)),
                               np.einsum('bij,bkj->bik', x, randn(2, 5, 4)), rtol=1e-6)
    np.testing.assert_allclose(R.dot(x, randn(3, 4, 2)),
                               np.einsum('bij,ajk->biak', x, randn(3, 4, 2)), rtol=1e-6)
    p = R.softmax(randn(4, 5), -1)
    t = np.array([0, 4, 2, 1])
    np.testing.assert_allclose(R.sparse_categorical_crossentropy(t, p),
                               R.categorical_crossentropy(R.one_hot(t, 5), p), rtol=1e-6)
    np.testing.assert_allclose(R.binary_crossentropy(np.array([1., 0.]), np.array([0.3, -2.]),
                                                     True),
                               [-np.log(R.sigmoid(0.3)), -np.log(1 - R.sigmoid(-2.))])
