"""Helpers that evaluate a backend op two ways and compare it with the reference.

(a) "eager" (concrete inputs): float inputs become ``K.variable``,
    integer/bool inputs ``K.constant``; the op's ``int_shape`` must be the full
    expected shape and ``K.eval`` gives the value. (Ops on variables are graph
    ops on every engine, TensorFlow included, so this also checks ``K.eval``
    of graph tensors that need no feed.)
(b) symbolic: inputs become ``K.placeholder`` (the batch dim ``None`` for the
    inputs listed in ``none_in``); ``int_shape`` must hold ``None`` exactly on
    the output axes listed in ``none_out`` and the expected sizes elsewhere;
    several cases are compiled into ONE ``K.function`` (compiles are slow on
    Theano) which is called with the numpy inputs.

Dtype rule: CNTK has no integer or bool tensors, so there integer- and
bool-valued expectations are checked as "a float dtype holding the same
values" (see ``assert_dtype``).
"""
import numpy as np

import reference as R

ATOL = 1e-5
RTOL = 1e-5


def rng(seed=0):
    return np.random.RandomState(seed)


def randn(*shape, **kw):
    """float32 standard normal values, reproducible per ``seed``."""
    return rng(kw.get('seed', 0)).standard_normal(shape).astype(np.float32)


def randu(*shape, **kw):
    lo, hi = kw.get('low', 0.), kw.get('high', 1.)
    return rng(kw.get('seed', 0)).uniform(lo, hi, shape).astype(np.float32)


def is_cntk(K):
    return K.backend() == 'cntk'


def expected_dtype(K, expected, dtype=None):
    """The dtype name the contract asks for: floatx() for float results."""
    if dtype is not None:
        return np.dtype(dtype).name
    expected = np.asarray(expected)
    if expected.dtype.kind == 'f':
        return K.floatx()
    return expected.dtype.name


def assert_dtype(K, actual, want, what=''):
    actual = np.dtype(actual).name
    if is_cntk(K) and np.dtype(want).kind in 'biu':
        # CNTK has no integer/bool tensors: integer- and bool-valued results
        # are floatx() there; the values are compared separately.
        assert np.dtype(actual).kind == 'f', '%s: dtype %s, expected a float dtype on CNTK' % (
            what, actual)
    else:
        assert actual == want, '%s: dtype %s, expected %s' % (what, actual, want)


def assert_values(actual, expected, atol=ATOL, rtol=RTOL, what=''):
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, '%s: shape %s, expected %s' % (
        what, actual.shape, expected.shape)
    if expected.dtype.kind in 'biu':
        np.testing.assert_array_equal(np.asarray(actual, dtype=np.float64),
                                      np.asarray(expected, dtype=np.float64), err_msg=what)
    else:
        np.testing.assert_allclose(np.asarray(actual, dtype=np.float64),
                                   np.asarray(expected, dtype=np.float64),
                                   atol=atol, rtol=rtol, err_msg=what)


def _as_list(x):
    if isinstance(x, (list, tuple)):
        return list(x), True
    return [x], False


class Case(object):
    """One op evaluation to check against an expected (reference) value.

    Args:
        fn: callable taking backend tensors (one per input) and returning a
            tensor or a list/tuple of tensors.
        inputs: list of numpy arrays.
        expected: numpy array, or a list of arrays when ``fn`` returns several.
        name: shown in failure messages.
        dtype: expected dtype (name or list of names); default ``floatx()``
            for float expectations, else the expectation's dtype.
        none_in: indices of the inputs whose axis 0 is ``None`` in the
            symbolic path (default: ``[0]``).
        none_out: output axes that must be ``None`` in the symbolic
            ``int_shape`` (default ``(0,)``; a list of tuples for several
            outputs).
        eager / symbolic: which paths to run.
        free_out: output axes whose size depends on the data (e.g. decoded
            CTC lengths): ``int_shape`` may give ``None`` or the size there,
            in both paths (list of tuples for several outputs).
    """

    def __init__(self, fn, inputs, expected, name='', dtype=None, none_in=(0,),
                 none_out=(0,), atol=ATOL, rtol=RTOL, eager=True, symbolic=True, free_out=()):
        self.fn = fn
        self.inputs = [np.asarray(a) for a in inputs]
        self.expected, self.multi = _as_list(expected)
        self.expected = [np.asarray(e) for e in self.expected]
        self.name = name or getattr(fn, '__name__', 'op')
        n = len(self.expected)
        self.dtypes = dtype if isinstance(dtype, (list, tuple)) else [dtype] * n
        self.none_in = tuple(none_in)
        if n and none_out and isinstance(none_out[0], (list, tuple)):
            self.none_out = [tuple(x) for x in none_out]
        else:
            self.none_out = [tuple(none_out)] * n
        if n and free_out and isinstance(free_out[0], (list, tuple)):
            self.free_out = [tuple(x) for x in free_out]
        else:
            self.free_out = [tuple(free_out)] * n
        self.atol, self.rtol = atol, rtol
        self.eager, self.symbolic = eager, symbolic


def eager_input(K, a):
    a = np.asarray(a)
    if a.dtype.kind == 'f':
        return K.variable(a, dtype=a.dtype.name)
    return K.constant(a, dtype=a.dtype.name)


def placeholder_for(K, a, none_batch):
    a = np.asarray(a)
    shape = tuple(a.shape)
    if none_batch and len(shape) > 0:
        shape = (None,) + shape[1:]
    return K.placeholder(shape=shape, dtype=a.dtype.name)


def _check_outputs(K, case, outs, values, symbolic):
    mode = 'symbolic' if symbolic else 'eager'
    outs, _ = _as_list(outs)
    assert len(outs) == len(case.expected), '%s: %d outputs, expected %d' % (
        case.name, len(outs), len(case.expected))
    for i, (out, val, exp, dt) in enumerate(zip(outs, values, case.expected, case.dtypes)):
        what = '%s [%s, output %d]' % (case.name, mode, i)
        want_dtype = expected_dtype(K, exp, dt)
        shape = tuple(exp.shape)
        if symbolic:
            shape = tuple(None if ax in case.none_out[i] else d for ax, d in enumerate(shape))
        got = tuple(K.int_shape(out))
        got = tuple(shape[ax] if (ax in case.free_out[i] and d is None and ax < len(shape))
                    else d for ax, d in enumerate(got))
        assert got == shape, '%s: int_shape %s, expected %s' % (what, K.int_shape(out), shape)
        assert_dtype(K, K.dtype(out), want_dtype, what + ' K.dtype')
        val = np.asarray(val)
        assert_dtype(K, val.dtype, want_dtype, what + ' value dtype')
        assert_values(val, exp, case.atol, case.rtol, what)


def run_cases(K, cases):
    """Check every case eagerly, then all symbolic ones with a single K.function."""
    for case in cases:
        if not case.eager:
            continue
        outs = case.fn(*[eager_input(K, a) for a in case.inputs])
        outs_l, _ = _as_list(outs)
        _check_outputs(K, case, outs, [K.eval(o) for o in outs_l], False)
    sym = [c for c in cases if c.symbolic]
    if not sym:
        return
    all_in, all_out, feeds, spans = [], [], [], []
    for case in sym:
        phs = [placeholder_for(K, a, i in case.none_in) for i, a in enumerate(case.inputs)]
        outs = case.fn(*phs)
        outs_l, _ = _as_list(outs)
        spans.append((len(all_out), len(outs_l), outs))
        all_in.extend(phs)
        feeds.extend(case.inputs)
        all_out.extend(outs_l)
    f = K.function(all_in, all_out)
    values = f(feeds)
    for case, (start, n, outs) in zip(sym, spans):
        _check_outputs(K, case, outs, values[start:start + n], True)


def eval_sym(K, fn, inputs, none_in=(0,)):
    """Evaluate ``fn`` on placeholders through one ``K.function``; returns a list."""
    phs = [placeholder_for(K, a, i in none_in) for i, a in enumerate(inputs)]
    outs, _ = _as_list(fn(*phs))
    return K.function(phs, outs)([np.asarray(a) for a in inputs])


def bind(K, specs, eager=True, symbolic=True):
    """Turn ``(name, fn(K, *tensors), inputs, expected, kwargs)`` specs into Cases."""
    cases = []
    for name, fn, inputs, expected, kw in specs:
        kw = dict(kw)
        kw.setdefault('eager', eager)
        kw.setdefault('symbolic', symbolic)
        cases.append(Case(_partial(fn, K), inputs, expected, name=name, **kw))
    return cases


def _partial(fn, K):
    def call(*tensors):
        return fn(K, *tensors)
    return call


def spec(name, fn, inputs, expected, **kw):
    return (name, fn, inputs, expected, kw)


def select(specs, name):
    """The specs whose name is ``name`` or starts with ``name + ':'``."""
    out = [s for s in specs if s[0] == name or s[0].startswith(name + ':')]
    assert out, 'no spec named %s' % name
    return out


def spec_names(specs):
    names = []
    for s in specs:
        n = s[0].split(':')[0]
        if n not in names:
            names.append(n)
    return names


def check_grads(K, gspecs, atol=1e-4, rtol=1e-3, h=1e-6):
    """Grouped ``check_grad``: one ``K.function`` for all the specs.

    Each spec is ``(name, fn(K, *tensors), ref_fn(*float64 arrays), inputs, wrt)``
    with an optional 6th item ``none_in`` (default ``(0,)``: the first input's
    batch dim is None, the others are fully shaped placeholders); the loss of
    each is ``sum(fn(*x) * w)`` with a fixed random ``w`` fed by a placeholder,
    the expectation central finite differences of the reference's
    ``sum(ref_fn(*x) * w)`` in float64.
    """
    all_in, feeds, all_grads, checks = [], [], [], []
    for k, gspec in enumerate(gspecs):
        name, fn, ref_fn, inputs, wrt = gspec[:5]
        none_in = gspec[5] if len(gspec) > 5 else (0,)
        inputs = [np.asarray(a) for a in inputs]
        args64 = [R.f64(a) if a.dtype.kind == 'f' else a for a in inputs]
        ref_out = np.asarray(ref_fn(*args64))
        w = rng(100 + k).standard_normal(ref_out.shape).astype(np.float32)
        phs = [placeholder_for(K, a, i in none_in) for i, a in enumerate(inputs)]
        wph = K.placeholder(shape=w.shape)
        loss = K.sum(fn(K, *phs) * wph)
        grads = K.gradients(loss, [phs[i] for i in wrt])
        assert len(grads) == len(wrt), name
        all_in.extend(phs + [wph])
        feeds.extend(inputs + [w])
        checks.append((name, ref_fn, inputs, wrt, w, len(all_grads)))
        all_grads.extend(grads)
    values = K.function(all_in, all_grads)(feeds)
    for name, ref_fn, inputs, wrt, w, start in checks:
        for j, i in enumerate(wrt):
            def scalar(xi, i=i, inputs=inputs, w=w, ref_fn=ref_fn):
                args = [R.f64(a) if a.dtype.kind == 'f' else a for a in inputs]
                args[i] = xi
                return float(np.sum(np.asarray(ref_fn(*args)) * w))
            num = R.numerical_gradient(scalar, inputs[i], h=h)
            g = np.asarray(values[start + j])
            what = '%s: gradient wrt input %d' % (name, i)
            assert g.shape == inputs[i].shape, '%s: shape %s, expected %s' % (
                what, g.shape, inputs[i].shape)
            np.testing.assert_allclose(g, num, atol=atol, rtol=rtol, err_msg=what)
