"""Every adapter offers the whole API, the legacy aliases and documented functions."""
import inspect
import warnings

import numpy as np

from keras_backend import api
import reference as R
from helpers import randn
from keras_backend.utils import convert_kernel


def test_all_api_names_present(K):
    assert api.missing_api_names(K) == []


def test_api_names_match_api_md():
    assert len(api.API_NAMES) == 163
    assert len(set(api.API_NAMES)) == 163


def test_public_functions_have_docstrings(K):
    missing = []
    for name in api.API_NAMES:
        fn = getattr(K, name, None)
        if fn is None:
            continue
        doc = inspect.getdoc(fn)
        if not doc or not doc.strip():
            missing.append(name)
    assert missing == []


def _call_warns(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        out = fn(*args, **kwargs)
    assert any(issubclass(w.category, DeprecationWarning) for w in caught), fn.__name__
    return out


def test_legacy_aliases_work_and_warn(K):
    aliases = api.legacy_aliases(K)
    assert sorted(aliases) == ['asymmetric_temporal_padding', 'deconv2d', 'lesser',
                               'lesser_equal']
    a = np.array([[1., 2., 3.]], np.float32)
    b = np.array([[2., 2., 2.]], np.float32)
    out = _call_warns(aliases['lesser'], K.variable(a), K.variable(b))
    np.testing.assert_array_equal(np.asarray(K.eval(out)).astype(bool), a < b)
    out = _call_warns(aliases['lesser_equal'], K.variable(a), K.variable(b))
    np.testing.assert_array_equal(np.asarray(K.eval(out)).astype(bool), a <= b)
    x = randn(2, 3, 4)
    out = _call_warns(aliases['asymmetric_temporal_padding'], K.variable(x), 2, 1)
    np.testing.assert_allclose(K.eval(out), R.temporal_padding(x, (2, 1)))
    xt = randn(2, 3, 4, 3, seed=1)
    kt = randn(3, 3, 2, 3, seed=2)
    # Theano convolves (Keras' convention): feed it the converted kernel
    kt_k = convert_kernel(kt) if K.backend() == 'theano' else kt
    out = _call_warns(aliases['deconv2d'], K.variable(xt), K.variable(kt_k), (2, 6, 8, 2),
                      strides=(2, 2), border_mode='same', dim_ordering='tf')
    np.testing.assert_allclose(K.eval(out),
                               R.conv2d_transpose(xt, kt, (2, 6, 8, 2), (2, 2), 'same'),
                               atol=1e-5, rtol=1e-5)
    xt_cf = np.ascontiguousarray(np.moveaxis(xt, -1, 1))
    out = _call_warns(aliases['deconv2d'], K.variable(xt_cf), K.variable(kt_k), (2, 2, 6, 8),
                      strides=(2, 2), border_mode='same', dim_ordering='th')
    np.testing.assert_allclose(K.eval(out),
                               R.conv2d_transpose(xt_cf, kt, (2, 2, 6, 8), (2, 2), 'same',
                                                  'channels_first'), atol=1e-5, rtol=1e-5)


def test_signatures_accept_keyword_names(K):
    """Spot-check the keyword names of the Keras 2 signatures (callers use them by name)."""
    x = K.variable(randn(2, 3))
    K.eval(K.sum(x, axis=1, keepdims=True))
    K.eval(K.relu(x, alpha=0.1, max_value=2., threshold=0.))
    K.eval(K.softmax(x, axis=-1))
    K.eval(K.batch_dot(x, x, axes=1))
    K.eval(K.random_normal(shape=(2,), mean=0., stddev=1., dtype=None, seed=None))
    K.eval(K.random_uniform(shape=(2,), minval=0., maxval=1., dtype=None, seed=None))
    K.eval(K.random_binomial(shape=(2,), p=0.5, dtype=None, seed=None))
    K.eval(K.truncated_normal(shape=(2,), mean=0., stddev=1., dtype=None, seed=None))
    K.eval(K.dropout(x, level=0.5, noise_shape=None, seed=None))
    K.eval(K.arange(start=0, stop=3, step=1, dtype='int32'))
    K.eval(K.zeros_like(x, dtype=None, name=None))
    K.eval(K.size(x, name=None))
    K.eval(K.map_fn(lambda e: e * 2., x, name=None, dtype=None))
    K.eval(K.foldl(lambda a, e: a + e, x, initializer=None, name=None))


def test_cleandoc_equals_inspect_cleandoc():
    """``api._cleandoc`` (the engine notes' cleaning at each adapter's import) gives
    ``inspect.cleandoc``'s text for every docstring of the package and for edge cases."""
    import sys
    docs = ['', ' ', '\n', 'a  ', '  one line  ', '\n\n  x\n   y\n\n', '  a\n\n    b\n  \n',
            'x\n \n      \n', 'a\n\tb\n\t  c', 'first\n    second\n      third\n    ',
            'a\n  b  \n  \n']
    for module in list(sys.modules.values()):
        if str(getattr(module, '__name__', '')).startswith('keras_backend'):
            docs += [v.__doc__ for v in vars(module).values()
                     if isinstance(getattr(v, '__doc__', None), str)]
    assert len(docs) > 500
    for doc in docs:
        assert api._cleandoc(doc) == inspect.cleandoc(doc), repr(doc[:80])


def test_checked_functions_carry_what_functools_wraps_gives(K):
    """Each checked API function carries what ``functools.update_wrapper`` gives a wrapper
    (``checks._update_wrapper`` copies it directly), its engine note and its own signature."""
    import functools
    from keras_backend import checks
    checked = 0
    for name in api.API_NAMES:
        fn = getattr(K, name)
        inner = getattr(fn, '__wrapped__', None)
        if inner is None:
            continue
        checked += 1
        expected = functools.update_wrapper(lambda: None, inner)
        for attr in ('__module__', '__name__', '__qualname__', '__annotations__',
                     '__wrapped__'):
            assert getattr(fn, attr) == getattr(expected, attr), (name, attr)
        # the docstring and engine note as documented at the wrap (JAX's and PyTorch's
        # adapters share some engine-level functions, whose own docstring the later import
        # documents again)
        assert fn.__doc__.startswith(api.DOCS[name].strip()), name
        assert set(fn.__dict__) - set(['checked_call']) == set(expected.__dict__), name
        assert fn.checked_call is True
        assert inspect.signature(fn) == inspect.signature(inner), name
    assert checked > 100

    def plain(x, axis=None):
        """A note."""
        return x
    plain.engine_note = 'note'
    wrapped = checks.wrap(plain, 'sum', K, api.SPECS['sum'])
    assert (wrapped.__name__, wrapped.__qualname__, wrapped.__doc__, wrapped.engine_note,
            wrapped.__wrapped__) == ('plain', plain.__qualname__, 'A note.', 'note', plain)
    assert checks.wrap(wrapped, 'sum', K, api.SPECS['sum']) is wrapped
    partial = functools.partial(plain, axis=0)
    assert checks.wrap(partial, 'sum', K, api.SPECS['sum']).__wrapped__ is partial
