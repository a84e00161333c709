"""rnn, switch, map_fn/foldl/foldr and CTC against the reference."""
import numpy as np
import pytest

import reference as R
from keras_backend.utils import convert_kernel
from helpers import (assert_dtype, bind, randn, rng, run_cases, select, spec, spec_names)

# ---------------------------------------------------------------------------
# rnn
# ---------------------------------------------------------------------------

XS = randn(2, 5, 3)
H0 = randn(2, 4, seed=1) * 0.5
CST = randn(2, 4, seed=2) * 0.3
W = randn(3, 4, seed=3) * 0.5
U = randn(4, 4, seed=4) * 0.5
MASK = np.array([[True, True, False, True, False], [False, True, True, True, True]])


def np_step(x_t, states):
    h, s, c = states
    h_new = np.tanh(x_t.dot(W) + h.dot(U) + c)
    return h_new * 2. - s[:, :1], [h_new, s + x_t]


def k_step(K):
    Wk, Uk = K.constant(W), K.constant(U)

    def step(x_t, states):
        h, s, c = states
        h_new = K.tanh(K.dot(x_t, Wk) + K.dot(h, Uk) + c)
        return h_new * 2. - s[:, :1], [h_new, s + x_t]
    return step


def rnn_spec(name, go_backwards=False, mask=None, unroll=False):
    S0 = np.zeros((2, 3), dtype=np.float32)
    last, outs, states = R.rnn(np_step, XS, [H0, S0], go_backwards=go_backwards, mask=mask,
                               constants=[CST])
    inputs = [XS, H0, S0, CST] + ([mask] if mask is not None else [])

    def fn(K, x, h0, s0, c, m=None):
        last_k, outs_k, states_k = K.rnn(k_step(K), x, [h0, s0], go_backwards=go_backwards,
                                         mask=m, constants=[c], unroll=unroll,
                                         input_length=5 if unroll else None)
        return [last_k, outs_k] + list(states_k)
    return spec(name, fn, inputs, [last, outs] + states,
                none_in=tuple(range(len(inputs))), none_out=(0,))


def step_plain(K):
    def step(x_t, states):
        return x_t * 2. + states[0], [states[0] + x_t]
    return step


SPECS = [
    rnn_spec('rnn'),
    rnn_spec('rnn:backwards', go_backwards=True),
    rnn_spec('rnn:mask', mask=MASK),
    rnn_spec('rnn:mask_backwards', go_backwards=True, mask=MASK),
    rnn_spec('rnn:unroll', unroll=True),
    rnn_spec('rnn:unroll_mask_backwards', go_backwards=True, mask=MASK, unroll=True),
]

# ---------------------------------------------------------------------------
# switch / map_fn / foldl / foldr
# ---------------------------------------------------------------------------

SX = randn(3, 4, seed=5)
SY = randn(3, 4, seed=6)
SX3 = randn(3, 2, 4, seed=7)

SPECS += [
    spec('switch', lambda K, x, y: K.switch(K.greater(K.sum(x), 0.), x * 2., y - 1.),
         [np.abs(SX), SY], R.switch(True, np.abs(SX) * 2., SY - 1.), none_in=(0, 1)),
    spec('switch:false', lambda K, x, y: K.switch(K.greater(K.sum(x), 0.), x * 2., y - 1.),
         [-np.abs(SX), SY], R.switch(False, -np.abs(SX) * 2., SY - 1.), none_in=(0, 1)),
    spec('switch:elementwise', lambda K, x, y: K.switch(K.greater(x, 0.), x, y), [SX, SY],
         R.switch(SX > 0, SX, SY), none_in=(0, 1)),
    spec('switch:lower_rank', lambda K, x, y: K.switch(K.greater(K.sum(x, axis=[1, 2]), 0.), x, y),
         [SX3, SX3 * -3.], R.switch(SX3.sum(axis=(1, 2)) > 0, SX3, SX3 * -3.), none_in=(0, 1)),
    spec('switch:callables',
         lambda K, x: K.switch(K.less(K.sum(x), 0.), lambda: x * 3., lambda: x + 1.),
         [SX], R.switch(SX.sum() < 0, SX * 3., SX + 1.)),
    spec('map_fn', lambda K, x: K.map_fn(lambda e: K.square(e) * 2. + e, x), [SX],
         R.map_fn(lambda e: e * e * 2. + e, SX)),
    spec('map_fn:3d', lambda K, x: K.map_fn(lambda e: K.sum(e, axis=0), x), [SX3],
         R.map_fn(lambda e: e.sum(axis=0), SX3)),
    spec('foldl', lambda K, x: K.foldl(lambda a, e: a * 0.5 + e, x), [SX],
         R.foldl(lambda a, e: a * 0.5 + e, R.f64(SX)), none_out=()),
    spec('foldl:init',
         lambda K, x: K.foldl(lambda a, e: a * 0.5 + e * e, x, K.constant(np.ones(4))), [SX],
         R.foldl(lambda a, e: a * 0.5 + e * e, R.f64(SX), np.ones(4)), none_out=()),
    spec('foldr', lambda K, x: K.foldr(lambda a, e: a * 0.5 + e, x), [SX],
         R.foldr(lambda a, e: a * 0.5 + e, R.f64(SX)), none_out=()),
    spec('foldr:init',
         lambda K, x: K.foldr(lambda a, e: a * 0.5 - e, x, K.constant(np.ones(4) * 2.)), [SX],
         R.foldr(lambda a, e: a * 0.5 - e, R.f64(SX), np.ones(4) * 2.), none_out=()),
]

# ---------------------------------------------------------------------------
# CTC (blank = last class)
# ---------------------------------------------------------------------------

CTC_Y = R.softmax(randn(3, 6, 4, seed=8)).astype(np.float32)
CTC_LABELS = np.array([[0, 1, 2], [1, 1, 0], [2, 0, 0]], dtype=np.int32)
CTC_IL = np.array([[6], [5], [3]], dtype=np.int32)
CTC_LL = np.array([[3], [2], [1]], dtype=np.int32)
CTC_LABELS_REP = np.array([[1, 1, 2], [0, 0, 0], [2, 2, 2]], dtype=np.int32)
CTC_LL_REP = np.array([[3], [2], [3]], dtype=np.int32)

# greedy: clear best paths (no argmax ties); lengths cut the sequences
GREEDY_BEST = [[0, 0, 3, 0, 1, 1], [3, 2, 2, 3, 3, 1], [1, 3, 2, 2, 0, 0]]
GREEDY_Y = np.full((3, 6, 4), 0.05, dtype=np.float32)
for _b in range(3):
    for _t in range(6):
        GREEDY_Y[_b, _t, GREEDY_BEST[_b][_t]] = 0.85
GREEDY_Y[0, 2] = [0.1, 0.2, 0.3, 0.4]
GREEDY_IL = np.array([6, 5, 4], dtype=np.int32)

# beam: T <= 4, 3 classes: at most 15 labellings, far fewer than beam_width,
# so the beam search is exact; the top probabilities are well separated.
BEAM_Y = R.softmax(rng(0).standard_normal((2, 4, 3)) * 1.5).astype(np.float32)
BEAM_IL = np.array([4, 3], dtype=np.int32)
# a blank-separated repeat (0, blank, 0) is the best labelling: merge_repeated matters
MERGE_Y = np.array([[[0.8, 0.1, 0.1], [0.1, 0.1, 0.8], [0.8, 0.1, 0.1]],
                    [[0.1, 0.7, 0.2], [0.1, 0.2, 0.7], [0.6, 0.2, 0.2]]], dtype=np.float32)
MERGE_IL = np.array([3, 3], dtype=np.int32)


def _decode_spec(name, y, il, greedy, top_paths, merge_repeated):
    if greedy:
        dec, lp = R.ctc_greedy_decode(y, il)
    else:
        dec, lp = R.ctc_beam_decode(y, il, top_paths, merge_repeated)

    def fn(K, yy, ll):
        d, p = K.ctc_decode(yy, ll, greedy=greedy, beam_width=100, top_paths=top_paths,
                            merge_repeated=merge_repeated)
        assert isinstance(d, list) and len(d) == top_paths
        return list(d) + [p]
    n = len(dec)
    return spec(name, fn, [y, il], list(dec) + [lp], none_in=(0, 1),
                none_out=[(0, 1)] * n + [(0,)], free_out=[(1,)] * n + [()],
                dtype=['int64'] * n + [None], atol=1e-4, rtol=1e-5)


SPECS += [
    spec('ctc_batch_cost', lambda K, t, y, il, ll: K.ctc_batch_cost(t, y, il, ll),
         [CTC_LABELS, CTC_Y, CTC_IL, CTC_LL], R.ctc_batch_cost(CTC_LABELS, CTC_Y, CTC_IL, CTC_LL),
         none_in=(0, 1, 2, 3), atol=1e-4),
    spec('ctc_batch_cost:repeats', lambda K, t, y, il, ll: K.ctc_batch_cost(t, y, il, ll),
         [CTC_LABELS_REP, CTC_Y, CTC_IL + [[0], [1], [3]], CTC_LL_REP],
         R.ctc_batch_cost(CTC_LABELS_REP, CTC_Y, CTC_IL + [[0], [1], [3]], CTC_LL_REP),
         none_in=(0, 1, 2, 3), atol=1e-4),
    _decode_spec('ctc_decode', GREEDY_Y, GREEDY_IL, True, 1, False),
    _decode_spec('ctc_decode:beam', BEAM_Y, BEAM_IL, False, 1, False),
    _decode_spec('ctc_decode:beam_top3', BEAM_Y, BEAM_IL, False, 3, False),
    _decode_spec('ctc_decode:beam_no_merge', MERGE_Y, MERGE_IL, False, 2, False),
    _decode_spec('ctc_decode:beam_merge', MERGE_Y, MERGE_IL, False, 1, True),
]

NAMES = spec_names(SPECS)


@pytest.mark.parametrize('name', NAMES)
def test_eager(K, name):
    run_cases(K, bind(K, select(SPECS, name), symbolic=False))


@pytest.mark.parametrize('names', [('rnn',), tuple(n for n in NAMES if n != 'rnn')],
                         ids=['rnn', 'control_ctc'])
def test_symbolic_grouped(K, names):
    specs = [s for n in names for s in select(SPECS, n)]
    run_cases(K, bind(K, specs, eager=False))


def test_rnn_plain_step_last_output(K):
    """A step whose output is the running sum: last_output = sum over time."""
    last, outs, states = K.rnn(step_plain(K), K.variable(XS), [K.zeros((2, 3))])
    np.testing.assert_allclose(K.eval(last), R.f64(XS).sum(axis=1) + XS[:, -1], atol=1e-5)
    assert K.int_shape(outs) == (2, 5, 3)
    assert isinstance(states, (list, tuple)) and len(states) == 1


def test_ctc_decode_returns_list_and_pads_with_minus_one(K):
    (dec,), lp = K.ctc_decode(K.variable(GREEDY_Y), K.constant(GREEDY_IL, dtype='int32'))
    dec = K.eval(dec)
    want = R.ctc_greedy_decode(GREEDY_Y, GREEDY_IL)[0][0]
    np.testing.assert_array_equal(dec, want)
    assert (want == -1).any()  # the expectation does exercise the padding
    assert_dtype(K, dec.dtype, 'int64', 'decoded')
    assert K.int_shape(lp) == (3, 1)


def test_ctc_label_dense_to_sparse(K):
    labels = np.array([[1, 2, 3, 4], [2, 5, 0, 0], [3, 0, 0, 0]], dtype=np.int32)
    lengths = np.array([4, 2, 1], dtype=np.int32)
    sp = K.ctc_label_dense_to_sparse(K.constant(labels, dtype='int32'),
                                     K.constant(lengths, dtype='int32'))
    assert K.is_sparse(sp)
    dense = K.eval(K.to_dense(sp))
    np.testing.assert_array_equal(dense, R.ctc_label_dense_to_sparse(labels, lengths))
    labels2 = labels + 1
    sp2 = K.ctc_label_dense_to_sparse(K.constant(labels2, dtype='int32'),
                                      K.constant(np.array([1, 3, 0], dtype=np.int32),
                                                 dtype='int32'))
    np.testing.assert_array_equal(K.eval(K.to_dense(sp2)),
                                  R.ctc_label_dense_to_sparse(labels2, [1, 3, 0]))


def test_rnn_gather_step_static_shape(K):
    """A step gathering rows of a table by an int input (Keras' TimeDistributed
    Embedding with a known batch size).  Theano's Scan answers the shape of
    such an output by ``Shape_i`` of the scan output itself: asking for its
    static shape recursed until the interpreter aborted."""
    ids = rng(7).randint(5, size=(10, 3, 4)).astype('int32')
    table = randn(5, 6, seed=8)
    tk = K.constant(table)

    def step(x_t, states):
        return K.gather(tk, x_t), []
    x = K.placeholder(shape=(10, 3, 4), dtype='int32')
    last, outs, states = K.rnn(step, x, [])
    assert K.int_shape(outs) == (10, 3, 4, 6)
    assert K.int_shape(last) == (10, 4, 6)
    got_last, got_outs = K.function([x], [last, outs])([ids])
    np.testing.assert_allclose(got_outs, table[ids], atol=1e-6)
    np.testing.assert_allclose(got_last, table[ids[:, -1]], atol=1e-6)
    assert list(states) == []



@pytest.mark.parametrize('steps', [5, None], ids=['static-length', 'unknown-length'])
@pytest.mark.parametrize('masked', [False, True], ids=['nomask', 'mask'])
@pytest.mark.parametrize('go_backwards', [False, True], ids=['forwards', 'backwards'])
def test_rnn_one_function_two_batch_sizes(K, steps, masked, go_backwards):
    """One function fed a batch of 32, then 30 (the last partial batch of ``fit`` on 1438
    samples): values against the reference, the gradient through time against the unrolled
    loop's. CNTK's recurrence once kept the batch size it saw first ("Input dimensions
    [16 x 30] and [16 x 32]")."""
    wv, uk = K.variable(W), K.constant(U)

    def step(x_t, states):
        h, s, c = states
        h_new = K.tanh(K.dot(x_t, wv) + K.dot(h, uk) + c)
        return h_new * 2. - s[:, :1], [h_new, s + x_t]

    def build(time, unroll):
        x = K.placeholder((None, time, 3))
        h0, s0, c = K.placeholder((None, 4)), K.placeholder((None, 3)), K.placeholder((None, 4))
        m = K.placeholder((None, time), dtype='bool') if masked else None
        last, outs, states = K.rnn(step, x, [h0, s0], go_backwards=go_backwards, mask=m,
                                   constants=[c], unroll=unroll)
        grad = K.gradients(K.sum(outs * outs) + K.sum(states[0]), [wv])[0]
        return K.function([x, h0, s0, c] + ([m] if masked else []),
                          [last, outs] + list(states) + [grad])
    loop, unrolled = build(steps, False), build(5, True)
    for n in (32, 30):
        xs, h0, cst = randn(n, 5, 3, seed=n), randn(n, 4, seed=n + 1), randn(n, 4, seed=n + 2)
        s0 = np.zeros((n, 3), dtype=np.float32)
        mask = rng(n).rand(n, 5) > 0.3 if masked else None
        feed = [xs, h0, s0, cst] + ([mask] if masked else [])
        last, outs, states = R.rnn(np_step, xs, [h0, s0], go_backwards=go_backwards, mask=mask,
                                   constants=[cst])
        got = loop(feed)
        for g, want in zip(got[:4], [last, outs] + states):
            np.testing.assert_allclose(g, want, atol=1e-5)
        np.testing.assert_allclose(got[4], unrolled(feed)[4], rtol=1e-4, atol=1e-4)



@pytest.mark.parametrize('unroll', [False, True], ids=['loop', 'unrolled'])
def test_rnn_constants_nested_in_lists(K, unroll):
    """Keras 2.0's recurrent layers pass each set of dropout masks as one list among the
    constants (``constants=[[m0, m1, m2], [r0, r1, r2]]``): the step gets the lists as
    given, on every engine (CNTK stacked each list into one tensor)."""
    x = K.placeholder((None, 4, 3))
    h0 = K.placeholder((None, 2))
    masks = [K.placeholder((None, 3)) for _ in range(2)]
    rec = [K.placeholder((None, 2)) for _ in range(2)]
    wv = K.constant(W[:, :2])

    def step(x_t, states):
        h, dp, rdp = states
        h_new = K.tanh(K.dot(x_t * dp[0], wv) + h * rdp[0]) + K.dot(x_t * dp[1], wv) * rdp[1]
        return h_new, [h_new]
    last, outs, _ = K.rnn(step, x, [h0], constants=[masks, rec], unroll=unroll)
    f = K.function([x, h0] + masks + rec, [last, outs])
    n = 5
    xs, h0v = randn(n, 4, 3, seed=60), randn(n, 2, seed=61)
    mv = [(rng(62 + i).rand(n, 3) > 0.3).astype('float32') for i in range(2)]
    rv = [(rng(64 + i).rand(n, 2) > 0.3).astype('float32') for i in range(2)]
    got_last, got_outs = f([xs, h0v] + mv + rv)
    h, want = h0v, []
    for t in range(4):
        xt = xs[:, t]
        h = np.tanh(np.dot(xt * mv[0], W[:, :2]) + h * rv[0]) + np.dot(xt * mv[1], W[:, :2]) * rv[1]
        want.append(h)
    np.testing.assert_allclose(got_outs, np.stack(want, 1), atol=1e-5)
    np.testing.assert_allclose(got_last, want[-1], atol=1e-5)


def test_rnn_convolutional_step_two_batch_sizes(K):
    """A ConvLSTM2D-like step (conv2d of the input and of the state) over 4 steps, masked, one
    function fed batches of 3 and 2: on CNTK the convolutions run inside the recurrence, on the
    batch axis the recurrence already uses."""
    kx, kh = randn(3, 3, 2, 3, seed=30) * 0.3, randn(3, 3, 3, 3, seed=31) * 0.3
    kxv, khv = K.constant(kx), K.constant(kh)

    def step(x_t, states):
        h = K.tanh(K.conv2d(x_t, kxv, padding='same') + K.conv2d(states[0], khv, padding='same'))
        return h * 0.5, [h]

    # Theano's conv2d is a true convolution (Keras' Theano backend): the reference flips
    rx, rh = (convert_kernel(kx), convert_kernel(kh)) if K.backend() == 'theano' else (kx, kh)

    def np_step(x_t, states):
        h = np.tanh(R.conv2d(x_t, rx, padding='same') + R.conv2d(states[0], rh, padding='same'))
        return h * 0.5, [h]
    x, h0 = K.placeholder((None, 4, 5, 5, 2)), K.placeholder((None, 5, 5, 3))
    m = K.placeholder((None, 4), dtype='bool')
    last, outs, states = K.rnn(step, x, [h0], mask=m)
    fn = K.function([x, h0, m], [last, outs, states[0]])
    for n in (3, 2):
        xs, h = randn(n, 4, 5, 5, 2, seed=n), randn(n, 5, 5, 3, seed=n + 1)
        mask = rng(n).rand(n, 4) > 0.3
        want = R.rnn(np_step, xs, [h], mask=mask)
        for g, w in zip(fn([xs, h, mask]), [want[0], want[1], want[2][0]]):
            np.testing.assert_allclose(g, w, atol=1e-5)


@pytest.mark.parametrize('factor', ['2', '0'], ids=['unroll-by-2', 'unroll-fully'])
def test_rnn_same_values_with_scan_unrolled(K, monkeypatch, factor):
    """KERAS_BACKEND_JAX_SCAN_UNROLL (JAX: lax.scan's unroll factor; ignored by the
    other engines) changes speed only: masks, go_backwards and constants included."""
    monkeypatch.setenv('KERAS_BACKEND_JAX_SCAN_UNROLL', factor)
    specs = select(SPECS, 'rnn') + select(SPECS, 'rnn:backwards') + select(SPECS, 'rnn:mask')
    run_cases(K, bind(K, specs, eager=False))


@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
def test_rnn_gated_convolutions_against_the_unrolled_loop(K, data_format):
    """A ConvLSTM2D-like step: the input (dilation 2) and the state convolved with two
    slices of one kernel each, as Keras 2.3.1's ConvLSTM2DCell does with four. Values against
    the reference and gradients (kernels and input) against the unrolled loop's, where no
    loop body exists (JAX merges the slices' convolutions in a loop body and computes their
    gradients in its own way on CPU). Small: it compiles a loop and an unrolled one."""
    cl = data_format == 'channels_last'
    kx, kh = randn(3, 3, 2, 6, seed=40) * 0.3, randn(3, 3, 3, 6, seed=41) * 0.3
    if K.backend() == 'theano':
        # Theano's conv2d is a true convolution (Keras' Theano backend): flip for the same
        # numbers as the reference
        kx, kh = convert_kernel(kx), convert_kernel(kh)
    kxv, khv = K.variable(kx), K.variable(kh)
    slices = [(kxv[:, :, :, 3 * i:3 * i + 3], khv[:, :, :, 3 * i:3 * i + 3]) for i in range(2)]

    def step(x_t, states):
        h, c = states
        z = [K.conv2d(x_t, a, padding='same', data_format=data_format, dilation_rate=(2, 2)) +
             K.conv2d(h, b, padding='same', data_format=data_format) for a, b in slices]
        c_new = K.sigmoid(z[0]) * c + K.tanh(z[1])
        h_new = K.tanh(c_new)
        return h_new, [h_new, c_new]

    def np_step(x_t, states):
        h, c = states
        if not cl:
            x_t, h, c = [np.moveaxis(v, 1, -1) for v in (x_t, h, c)]
        rx = convert_kernel(kx) if K.backend() == 'theano' else kx
        rh = convert_kernel(kh) if K.backend() == 'theano' else kh
        z = [R.conv2d(x_t, rx[..., 3 * i:3 * i + 3], padding='same', dilation_rate=(2, 2)) +
             R.conv2d(h, rh[..., 3 * i:3 * i + 3], padding='same') for i in range(2)]
        c_new = c / (1. + np.exp(-z[0])) + np.tanh(z[1])
        h_new = np.tanh(c_new)
        if not cl:
            h_new, c_new = np.moveaxis(h_new, -1, 1), np.moveaxis(c_new, -1, 1)
        return h_new, [h_new, c_new]

    x_shape = (None, 3, 5, 5, 2) if cl else (None, 3, 2, 5, 5)
    s_shape = (None, 5, 5, 3) if cl else (None, 3, 5, 5)

    def build(unroll):
        x = K.placeholder(x_shape)
        h0, c0 = K.placeholder(s_shape), K.placeholder(s_shape)
        last, outs, states = K.rnn(step, x, [h0, c0], unroll=unroll)
        loss = K.sum(outs * outs) + K.sum(states[1])
        return K.function([x, h0, c0], [last, outs, states[1]] +
                          K.gradients(loss, [kxv, khv, x, h0]))
    loop, unrolled = build(False), build(True)
    xs = randn(2, *x_shape[1:], seed=42)
    h0, c0 = randn(2, *s_shape[1:], seed=43) * 0.5, randn(2, *s_shape[1:], seed=44) * 0.5
    got, ref = loop([xs, h0, c0]), unrolled([xs, h0, c0])
    want = R.rnn(np_step, xs, [h0, c0])
    for g, w in zip(got[:3], [want[0], want[1], want[2][1]]):
        np.testing.assert_allclose(g, w, atol=1e-5)
    for g, r in zip(got[3:], ref[3:]):
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-4)


def test_rnn_lstm_step_against_the_unrolled_loop(K):
    """Keras 2.3.1's LSTMCell in small: the gates in one product of the input (times a
    dropout-like mask made outside the loop) with the kernel and one of the state with the
    recurrent kernel, backwards over masked steps. Values against the reference, gradients
    (kernels, input, mask) against the unrolled loop's, which has no loop body."""
    kx, kh = randn(3, 8, seed=50) * 0.5, randn(2, 8, seed=51) * 0.5
    keep = (rng(52).rand(4, 3) > 0.3).astype('float32') / 0.7
    kxv, khv, keepv = K.variable(kx), K.variable(kh), K.variable(keep)

    def gates(z, c, tanh, sigmoid):
        i, f, g, o = [z[:, 2 * k:2 * k + 2] for k in range(4)]
        c_new = sigmoid(f) * c + sigmoid(i) * tanh(g)
        return sigmoid(o) * tanh(c_new), c_new

    def step(x_t, states):
        h, c, m = states
        h_new, c_new = gates(K.dot(x_t * m, kxv) + K.dot(h, khv), c, K.tanh, K.sigmoid)
        return h_new, [h_new, c_new]

    def np_step(x_t, states):
        h, c, m = states
        h_new, c_new = gates((x_t * m).dot(kx) + h.dot(kh), c, np.tanh,
                             lambda v: 1. / (1. + np.exp(-v)))
        return h_new, [h_new, c_new]

    mask = np.array([[1, 1, 0, 1, 1], [0, 1, 1, 1, 0], [1, 1, 1, 1, 1], [1, 0, 1, 1, 1]], bool)

    def build(unroll):
        x = K.placeholder((4, 5, 3))
        h0, c0 = K.placeholder((4, 2)), K.placeholder((4, 2))
        last, outs, states = K.rnn(step, x, [h0, c0], go_backwards=True, mask=K.constant(mask),
                                   constants=[keepv * 1.], unroll=unroll)
        loss = K.sum(outs * outs) + K.sum(states[1])
        return K.function([x, h0, c0], [last, outs, states[1]] +
                          K.gradients(loss, [kxv, khv, keepv, x, h0]))
    loop, unrolled = build(False), build(True)
    xs = randn(4, 5, 3, seed=53)
    h0, c0 = randn(4, 2, seed=54) * 0.5, randn(4, 2, seed=55) * 0.5
    got, ref = loop([xs, h0, c0]), unrolled([xs, h0, c0])
    want = R.rnn(np_step, xs, [h0, c0], go_backwards=True, mask=mask,
                 constants=[keep])
    for g, w in zip(got[:3], [want[0], want[1], want[2][1]]):
        np.testing.assert_allclose(g, w, atol=1e-5)
    for g, r in zip(got[3:], ref[3:]):
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-4)


def test_rnn_function_compiles_once(K):
    """A function holding a recurrent loop with convolutions, called again with the same
    shapes, is neither traced nor compiled again (JAX: jax.monitoring's trace and compile
    events; the other engines compile a function once, when it is made)."""
    if K.backend() != 'jax':
        pytest.skip('%s compiles a function once, when K.function makes it: no per-call '
                    'tracing to count' % K.backend())
    import jax.monitoring
    events = []

    def listener(name, duration, **kwargs):
        if name.startswith('/jax/core/compile/'):
            events.append(name)
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        kv = K.variable(randn(3, 3, 2, 8, seed=50) * 0.3)
        rk = K.variable(randn(3, 3, 2, 8, seed=51) * 0.3)

        def step(x_t, states):
            z = [K.conv2d(x_t, kv[..., 2 * i:2 * i + 2], padding='same') +
                 K.conv2d(states[0], rk[..., 2 * i:2 * i + 2], padding='same')
                 for i in range(4)]
            h = K.sigmoid(z[0]) * K.tanh(z[1] + z[2] - z[3])
            return h, [h]
        x, h0 = K.placeholder((None, 5, 6, 6, 2)), K.placeholder((None, 6, 6, 2))
        last, outs, _ = K.rnn(step, x, [h0])
        loss = K.mean(outs)
        fn = K.function([x, h0], [loss], updates=[K.update_sub(kv, 0.1 * g) for g in
                                                 K.gradients(loss, [kv])])
        feed = [randn(4, 5, 6, 6, 2, seed=52), randn(4, 6, 6, 2, seed=53)]
        first = fn(feed)[0]
        n_first = len(events)
        assert n_first > 0, 'no compile event seen: the listener counts nothing'
        second = fn(feed)[0]
        assert events[n_first:] == [], 'the second call traced or compiled: %s' % (
            events[n_first:],)
        assert second != first   # the update was applied: the program ran
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)


def _np_state_rnn_loss(xs, w, h0, y):
    """sum((h_T - y)^2) of h_t = tanh(x_t w + h_{t-1}) (float64)."""
    h = h0
    for t in range(xs.shape[1]):
        h = np.tanh(xs[:, t].dot(w) + h)
    return np.sum((h - y) ** 2)


def test_rnn_gradient_through_a_state_variable_of_batch_one(K):
    """A stateful layer at batch size 1 (Keras 2.0.8's stateful Bidirectional) starts ``rnn``
    from a variable of shape (1, units); the gradient flows through the loop (on Theano 1.0.5
    its scan met a broadcastable state beside non-broadcastable output gradients). Values
    against a numpy central difference. The loss compares the last output with a target fed
    as a placeholder of unknown batch size, as Keras' targets are."""
    xs = randn(1, 3, 2, seed=5)
    yv = randn(1, 2, seed=7)
    wv = randn(2, 2, seed=6) * 0.5
    h0v = np.full((1, 2), 0.25, 'float32')
    # the inputs of unknown batch size, as Keras 2.0.8's SimpleRNN feeds its step the
    # inputs' projection reshaped with -1
    x = K.placeholder(shape=(None, 3, 2))
    w, h0 = K.variable(wv), K.variable(h0v)

    def step(x_t, states):
        h = K.tanh(K.dot(x_t, w) + states[0])
        return h, [h]
    last, _, _ = K.rnn(step, x, [h0])
    y = K.placeholder(shape=(None, 2))
    loss = K.sum(K.square(last - y))
    gw, gh = K.gradients(loss, [w, h0])
    got_loss, got_gw, got_gh = K.function([x, y], [loss, gw, gh])([xs, yv])
    x64, w64, h64, y64 = (a.astype('float64') for a in (xs, wv, h0v, yv))
    np.testing.assert_allclose(got_loss, _np_state_rnn_loss(x64, w64, h64, y64), rtol=1e-5,
                               atol=1e-5)
    for got, which in ((got_gw, 'w'), (got_gh, 'h')):
        base = w64 if which == 'w' else h64
        want = np.zeros_like(base)
        for idx in np.ndindex(*base.shape):
            d = np.zeros_like(base)
            d[idx] = 1e-6
            args = [(w64 + d, h64, w64 - d, h64), (w64, h64 + d, w64, h64 - d)][which == 'h']
            want[idx] = (_np_state_rnn_loss(x64, args[0], args[1], y64) -
                         _np_state_rnn_loss(x64, args[2], args[3], y64)) / 2e-6
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
