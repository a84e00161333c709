"""PyTorch-only behaviours of the adapter (see the design in the module docstring of
``keras_backend.torch_backend.core``): concrete ops give ``torch.Tensor``s, static shapes
come from probes on the ``meta`` device, a ``K.function`` evaluates only what it needs and
writes its variables in place, gradients are ``torch.autograd``'s (of gradients too),
random ops draw from seeded ``torch.Generator``s, the learning phase computes one branch.
"""
import numpy as np
import pytest

from conftest import load_adapter, requested_backends

pytestmark = pytest.mark.skipif('torch' not in requested_backends(),
                                reason='KERAS_BACKEND_TESTS excludes torch')


@pytest.fixture
def K():
    module, reason = load_adapter('torch')
    if module is None:
        pytest.skip('torch backend not importable here: %s' % reason)
    return module


def test_ops_on_constants_are_torch_tensors(K):
    import torch
    c = K.constant(np.arange(6.).reshape(2, 3))
    out = K.softmax(K.dot(c, K.transpose(c)))
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    assert K.dtype(out) == 'float32' and K.int_shape(out) == (2, 2)


def test_static_shapes_of_unknown_sizes_come_from_two_probes(K):
    x = K.placeholder((None, 4, None))
    y = K.reshape(x, (K.shape(x)[0], -1))
    assert K.int_shape(K.sum(x, axis=1)) == (None, None)
    assert K.int_shape(K.conv1d(K.placeholder((None, 10, 3)), K.variable(np.ones((3, 3, 5))),
                                padding='same', strides=2)) == (None, 5, 5)
    assert K.ndim(y) == 2
    f = K.function([x], [y])
    assert f([np.ones((2, 4, 3), 'float32')])[0].shape == (2, 12)


def test_updates_are_written_in_place_from_the_old_values(K):
    a, b = K.variable(1.), K.variable(2.)
    storage = a.value.untyped_storage().data_ptr()
    f = K.function([], [a + b], updates=[(a, b), (b, a)])   # a swap
    assert float(f([])[0]) == 3.
    assert (float(K.get_value(a)), float(K.get_value(b))) == (2., 1.)
    assert a.value.untyped_storage().data_ptr() == storage


def test_gradient_of_a_gradient(K):
    x = K.placeholder(())
    y = x ** 3
    g = K.gradients(y, [x])[0]
    gg = K.gradients(g, [x])[0]
    out = K.function([x], [g, gg])([np.float32(2.)])
    np.testing.assert_allclose(out, [12., 12.])


def test_seeded_random_ops_repeat_run_after_run_and_draw_anew_at_each_call(K):
    r1 = K.random_normal((3,), seed=7)
    r2 = K.random_normal((3,), seed=7)
    f1, f2 = K.function([], [r1]), K.function([], [r2])
    first, second = f1([])[0], f1([])[0]
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(f2([])[0], first)


def test_the_learning_phase_computes_one_branch(K):
    x = K.placeholder((2,))
    out = K.in_train_phase(lambda: K.dropout(x, 0.5, seed=1), x)
    f = K.function([x, K.learning_phase()], [out])
    np.testing.assert_array_equal(f([np.ones(2, 'float32'), 0])[0], [1., 1.])
    train = f([np.ones(2, 'float32'), 1])[0]
    assert set(np.unique(train)) <= {0., 2.}


def test_the_kernels_are_keras_layout_and_cross_correlations(K):
    # (rows, cols, in, out) kernels, not flipped: TensorFlow's convention (keras2_known_as)
    x = np.arange(9., dtype='float32').reshape(1, 3, 3, 1)
    k = np.zeros((2, 2, 1, 1), 'float32')
    k[0, 0, 0, 0] = 1.
    out = K.eval(K.conv2d(K.constant(x), K.constant(k)))
    np.testing.assert_array_equal(out[0, :, :, 0], x[0, :2, :2, 0])


def test_a_torch_dtype_is_a_dtype_argument(K):
    """Keras' code passes a concrete value's ``.dtype`` on (``K.cast(x, y.dtype)`` in
    ``losses_utils``): on PyTorch a concrete value is a ``torch.Tensor``, whose dtype is a
    ``torch.dtype``; the checks read it as its numpy name."""
    import torch
    c = K.constant([[1.5, 2.]])
    assert isinstance(c.dtype, torch.dtype)
    assert K.cast(c, c.dtype).dtype == torch.float32
    assert np.array_equal(K.eval(K.cast(c, torch.int64)), np.array([[1, 2]]))
    v = K.cast(K.placeholder((None, 2)), torch.float64)
    assert K.dtype(v) == 'float64'
    with pytest.raises(TypeError):
        K.cast(c, torch.complex64)


def test_an_index_computed_in_the_graph(K):
    """``x[i]`` for a 0-d integer tensor ``i`` made in the graph (Keras'
    SensitivityAtSpecificity: ``tp[K.argmin(...)]``; ``map_fn`` over ``K.arange``): indexing
    with a 0-d tensor reads its value, which the ``meta`` probes do not have; it is an
    ``index_select`` of one position, with its gradient, a negative index counted from the
    end."""
    x = np.array([3., -1., 2., 5.], 'float32')
    p = K.placeholder((None,))
    i = K.cast(K.argmin(p, axis=0), 'int32')
    out, grad = K.function([p], [p[i], K.gradients(p[i] * 2., [p])[0]])([x])
    assert out == -1. and np.array_equal(grad, [0., 2., 0., 0.])
    v = K.variable(np.arange(12.).reshape(4, 3))
    assert np.array_equal(K.eval(v[K.constant(-1, dtype='int32')]), [9., 10., 11.])
    sums = K.map_fn(lambda j: K.sum(v[j]), K.arange(4), dtype=K.floatx())
    assert np.allclose(K.eval(sums), np.arange(12.).reshape(4, 3).sum(1))


def test_a_loop_body_runs_from_its_plan(K, capsys):
    """``rnn`` runs its step graph from an evaluation plan made once (eager_graph's
    ``Plan``): the step's outer values (a weight) are read once per call, not per step, the
    stand-ins are seeded each step, a state handed on unchanged is its stand-in, and a
    switch in the step (a lazy op) computes only the branch taken."""
    from keras_backend.eager_graph import graph
    rng = np.random.RandomState(3)
    xs = rng.randn(2, 5, 3).astype('float32')
    w = rng.randn(3, 4).astype('float32')
    x, kernel = K.placeholder((None, 5, 3)), K.variable(w)
    flag = K.placeholder((), dtype='bool')

    def step(inp, states):
        h, kept = states
        z = K.dot(inp, kernel)
        gate = K.switch(flag, K.sigmoid(z), K.print_tensor(z, 'untaken branch: '))
        return h + gate, [h + gate, kept]

    calls = []
    original = graph.Plan.outer_values

    def counted(self, ctx, given=()):
        calls.append(1)
        return original(self, ctx, given)
    graph.Plan.outer_values = counted
    try:
        last, seq, (h, kept) = K.rnn(step, x, [K.zeros((2, 4)), K.ones((2, 4))])
        f = K.function([x, flag], [last, seq, h, kept])
        capsys.readouterr()
        calls[:] = []
        out = f([xs, True])
        taken = capsys.readouterr().out
        other = f([xs, False])
        untaken = capsys.readouterr().out
    finally:
        graph.Plan.outer_values = original
    want = np.cumsum(1. / (1. + np.exp(-xs.dot(w))), axis=1)
    np.testing.assert_allclose(out[1], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[0], want[:, -1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[2], want[:, -1], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out[3], np.ones((2, 4)))
    np.testing.assert_allclose(other[0], xs.dot(w).sum(axis=1), rtol=1e-5, atol=1e-5)
    # per call: the function's root plan and the step's outer values, not once per step
    assert len(calls) == 4
    assert 'untaken branch' not in taken and untaken.count('untaken branch') == 5


def test_static_index_keys(K):
    """A key of Python or numpy ints, slices of them, ``...`` and None is made once with
    the node; slices stepping backwards go through ``index_select``; the values and the
    gradient are numpy's."""
    a = np.arange(60., dtype='float32').reshape(3, 4, 5)
    x = K.placeholder((None, 4, 5))
    keys = [(slice(None), 1), (0, slice(1, 3), slice(None, None, 2)), (Ellipsis, None, -1),
            np.int64(2), (slice(None), slice(np.int32(1), None)), (-1, None),
            # backwards steps, which PyTorch's own indexing refuses (Keras' RGB -> BGR)
            (Ellipsis, slice(None, None, -1)), (0, slice(3, 0, -1), None, slice(None, None, -2)),
            (slice(None, None, -1),)]
    outs = K.function([x], [x[k] for k in keys])([a])
    for k, o in zip(keys, outs):
        np.testing.assert_array_equal(o, a[k])
    assert K.int_shape(x[:, 1]) == (None, 5) and K.int_shape(x[..., None, -1]) == (None, 4, 1)
    weights = K.constant(np.arange(5., dtype='float32'))
    grad = K.function([x], K.gradients(K.sum(x[..., ::-1] * weights), [x]))([a])[0]
    np.testing.assert_array_equal(grad, np.broadcast_to(np.arange(5.)[::-1], a.shape))


def test_update_arithmetic_reuses_fresh_buffers(K):
    """A K.function writes a binary op's result into an operand's buffer where that operand
    is another op's new tensor read nowhere else (an optimizer's arithmetic over a large
    weight, as Keras 3's optimizers update in place on PyTorch); a value that is an
    output, read twice or a variable's own is never written into; the numbers are
    numpy's."""
    rng = np.random.RandomState(0)
    n = 40000    # above the size where reuse pays
    w0, g0 = rng.randn(n).astype('float32'), rng.randn(n).astype('float32')
    v, m = K.variable(w0), K.variable(np.zeros(n, 'float32'))
    g = K.placeholder((n,))
    scaled = v * 2.
    m_t = 0.9 * m + 0.1 * K.square(g)      # the sum written into 0.9 * m's buffer
    twice = (g * 3.) + (g * 3.)             # one node read twice: not written into
    p_t = v - 0.5 * m_t / (K.sqrt(m_t) + 1e-7) + twice
    f = K.function([g], [scaled, m_t], updates=[(m, m_t), (v, p_t)])
    reused = []
    plan_reuse = f._plan.reuse

    def counted(node, vals, positions):
        out = plan_reuse(node, vals, positions)
        reused.append(out is not None)
        return out
    f._plan.reuse = counted
    out_scaled, out_m = f([g0])
    want_m = 0.1 * g0 ** 2
    np.testing.assert_allclose(out_scaled, 2. * w0, rtol=1e-6)
    np.testing.assert_allclose(out_m, want_m, rtol=1e-6)
    np.testing.assert_allclose(K.get_value(m), want_m, rtol=1e-6)
    want_v = w0 - 0.5 * want_m / (np.sqrt(want_m) + 1e-7) + 6. * g0
    np.testing.assert_allclose(K.get_value(v), want_v, rtol=1e-5, atol=1e-5)
    assert any(reused)
    # a small tensor, or one autograd records, gets a new tensor as before
    import torch
    add = [nd for nd in f._plan.roots if nd is m_t][0]
    big, other = torch.ones(n), torch.ones(n)
    with torch.no_grad():
        assert plan_reuse(add, [torch.ones(10), torch.ones(10)], (0,)) is None
        assert plan_reuse(add, [big, other], (0,)) is big
    with torch.enable_grad():
        assert plan_reuse(add, [torch.ones(n), torch.ones(n)], (0,)) is None


def test_a_loop_body_projects_the_whole_input_sequence_at_once(K, monkeypatch):
    """The part of a step that reads the input and no state (Keras' ``K.dot(inputs *
    dp_mask, kernel)`` and its ``bias_add``) runs once on the whole sequence: one matmul of
    rank 3 instead of one per step, the recurrent product still per step. Values (masked,
    backwards) against the numpy reference, gradients (kernels, bias, the dropout-like
    mask, the input) against the unrolled loop, which runs every op per step."""
    import torch
    import reference as R
    rng = np.random.RandomState(7)
    xs = rng.randn(3, 6, 4).astype('float32')
    kx = (rng.randn(4, 8) * 0.5).astype('float32')
    kh = (rng.randn(2, 8) * 0.5).astype('float32')
    bias = (rng.randn(8) * 0.1).astype('float32')
    keep = (rng.rand(3, 4) > 0.3).astype('float32') / 0.7
    mask = np.array([[1, 1, 0, 1, 1, 1], [0, 1, 1, 1, 0, 1], [1, 1, 1, 1, 1, 0]], bool)
    kxv, khv, bv, keepv = K.variable(kx), K.variable(kh), K.variable(bias), K.variable(keep)

    def gates(z, c, tanh, sigmoid):
        i, f, g, o = [z[:, 2 * k:2 * k + 2] for k in range(4)]
        c_new = sigmoid(f) * c + sigmoid(i) * tanh(g)
        return sigmoid(o) * tanh(c_new), c_new

    def step(x_t, states):
        h, c = states
        z = K.bias_add(K.dot(x_t * keepv, kxv) * 1.5, bv) + K.dot(h, khv)
        h_new, c_new = gates(z, c, K.tanh, K.sigmoid)
        return h_new, [h_new, c_new]

    def np_step(x_t, states):
        h, c = states
        z = ((x_t * keep).dot(kx) * 1.5 + bias) + h.dot(kh)
        return gates(z, c, np.tanh, lambda v: 1. / (1. + np.exp(-v)))[0], \
            list(gates(z, c, np.tanh, lambda v: 1. / (1. + np.exp(-v))))

    def build(unroll):
        x = K.placeholder((None, 6, 4))
        h0, c0 = K.zeros((3, 2)), K.zeros((3, 2))
        last, outs, states = K.rnn(step, x, [h0, c0], go_backwards=True,
                                   mask=K.constant(mask), unroll=unroll)
        loss = K.sum(outs * outs) + K.sum(states[1])
        return K.function([x], [last, outs, states[1]] +
                          K.gradients(loss, [kxv, khv, bv, keepv, x]))
    loop, unrolled = build(False), build(True)
    ranks = []
    original = torch.matmul

    def counted(a, b, *args, **kwargs):
        ranks.append(a.ndim)
        return original(a, b, *args, **kwargs)
    monkeypatch.setattr(torch, 'matmul', counted)
    got = loop([xs])
    forward_ranks, ranks[:] = list(ranks), []
    ref = unrolled([xs])
    assert sorted(forward_ranks) == [2] * 6 + [3]    # h . kh per step, x . kx once
    assert sorted(ranks) == [2] * 12                 # unrolled: both per step
    want = R.rnn(np_step, xs, [np.zeros((3, 2)), np.zeros((3, 2))], go_backwards=True,
                 mask=mask)
    for g, w in zip(got[:3], [want[0], want[1], want[2][1]]):
        np.testing.assert_allclose(g, w, atol=1e-5)
    for g, r in zip(got[3:], ref[3:]):
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-5)


def test_gate_slices_of_one_value_come_from_one_split(K, monkeypatch):
    """Static slices of one value over disjoint ranges of one axis (Keras 2's gates,
    ``z[:, :units]``, ...) are taken by one ``torch.split`` (one gradient, a concatenation,
    instead of a zero-filled whole per slice); with a gap and an unused tail, beside an
    overlapping slice (taken alone) and a slice of another axis. Values and gradients
    against numpy."""
    import torch
    rng = np.random.RandomState(11)
    xs = rng.randn(4, 3).astype('float32')
    w = rng.randn(3, 9).astype('float32')
    a, b, c = [rng.randn(4, k).astype('float32') for k in (2, 3, 4)]
    x, wv = K.placeholder((None, 3)), K.variable(w)
    z = K.dot(x, wv)
    parts = [z[:, :2], z[:, 3:6], z[:, 2:6], z[1:, :]]
    loss = K.sum(parts[0] * a) + K.sum(parts[1] * b) + K.sum(parts[2] * c) + \
        K.sum(parts[3] * parts[3])
    f = K.function([x], parts + K.gradients(loss, [wv]))
    calls = []
    original = torch.split

    def counted(v, sizes, dim=0):
        calls.append((tuple(sizes), dim))
        return original(v, sizes, dim)
    monkeypatch.setattr(torch, 'split', counted)
    got = f([xs])
    assert calls == [((2, 4, 3), 1)]    # [0, 2) and [2, 6) split; [3, 6) overlaps: a slice
    zn = xs.dot(w)
    for g, want in zip(got[:4], [zn[:, :2], zn[:, 3:6], zn[:, 2:6], zn[1:]]):
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
    dz = np.zeros_like(zn)
    dz[:, :2] += a
    dz[:, 3:6] += b
    dz[:, 2:6] += c
    dz[1:] += 2 * zn[1:]
    np.testing.assert_allclose(got[4], xs.T.dot(dz), rtol=1e-4, atol=1e-4)


def test_random_ops_are_probed_without_drawing(K, monkeypatch):
    """A random op's static shape and dtype come from its arguments: its probes on ``meta``
    never run the sampler (whose arithmetic there is one Python reference an op), which
    draws once the graph is evaluated, with the parameters and the shape fed."""
    import torch
    devices = []
    for name in ('rand', 'randn'):
        sampler = getattr(torch, name)

        def spy(*a, _s=sampler, **kw):
            devices.append(str(kw.get('device')))
            return _s(*a, **kw)
        monkeypatch.setattr(torch, name, spy)
    x = K.placeholder((None, 3))
    u = K.random_uniform(K.shape(x), minval=2., maxval=3., dtype='float64', seed=1)
    n = K.random_normal((2, 3), mean=K.constant(np.array([[10., 20., 30.]])), stddev=0.01)
    t = K.truncated_normal((500, 2), mean=1., stddev=2., seed=3)
    b = K.random_binomial((4, 2), p=K.constant(np.array([0., 1.])))
    assert devices == []
    assert (K.int_shape(u), K.dtype(u)) == ((None, 3), 'float64')
    assert [(K.int_shape(r), K.dtype(r)) for r in (n, t, b)] == \
        [((2, 3), 'float32'), ((500, 2), 'float32'), ((4, 2), 'float32')]
    drawn = K.function([x], [u])([np.zeros((5, 3), 'float32')])[0]
    assert drawn.shape == (5, 3) and drawn.dtype == np.float64
    assert ((drawn >= 2.) & (drawn < 3.)).all()
    np.testing.assert_allclose(K.eval(n), np.tile([[10., 20., 30.]], (2, 1)), atol=0.1)
    tv = K.eval(t)
    assert tv.shape == (500, 2) and (np.abs(tv - 1.) <= 4.).all() and tv.std() > 1.
    np.testing.assert_array_equal(K.eval(b), np.tile([0., 1.], (4, 1)))
    assert len(devices) == 4 and 'meta' not in devices
