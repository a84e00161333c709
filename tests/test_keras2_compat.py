"""keras_backend.keras2_compat: what Keras 2.3.1 needs on today's Python and h5py."""
import collections
import collections.abc

import numpy as np
import pytest

from keras_backend import keras2_compat


def test_collections_aliases_point_at_collections_abc():
    keras2_compat.install()
    for name in ('Iterable', 'Mapping', 'Sequence', 'Callable', 'MutableMapping'):
        assert getattr(collections, name) is getattr(collections.abc, name)
    assert keras2_compat.install() == []        # nothing twice
    assert collections.OrderedDict is not None  # what existed is untouched


def test_decodable_str_is_a_str():
    s = keras2_compat.DecodableStr('dense_1')
    assert isinstance(s, str) and s == 'dense_1' and s.decode('utf8') == 'dense_1'
    assert type(s.decode('utf8')) is str


def test_h5py_string_attributes_decode_as_keras_reads_them(tmp_path):
    h5py = pytest.importorskip('h5py', reason='h5py comes with the keras2 extra')
    keras2_compat.install()
    path = str(tmp_path / 'w.h5')
    with h5py.File(path, 'w') as f:
        # what Keras 2.3.1's save_weights writes
        f.attrs['keras_version'] = '2.3.1'.encode('utf8')
        f.attrs['layer_names'] = [n.encode('utf8') for n in ('dense_1', 'dense_2')]
        f.attrs['count'] = 3
    with h5py.File(path, 'r') as f:
        # what its load_weights reads
        assert f.attrs['keras_version'].decode('utf8') == '2.3.1'
        assert [n.decode('utf8') for n in f.attrs['layer_names']] == ['dense_1', 'dense_2']
        assert f.attrs['count'] == 3 and not isinstance(f.attrs['count'], str)
        assert isinstance(np.asarray(f.attrs['layer_names']), np.ndarray)


def test_numpy_aliases_keras_reads():
    keras2_compat.install()
    assert np.string_ is np.bytes_ and np.unicode_ is np.str_ and np.Inf == np.inf
    assert np.int is int and np.float is float
    assert np.alltrue([[1, 1], [1, 1]]) and not np.alltrue(np.array([1, 0]))
    assert np.float32 is np.dtype('float32').type   # what existed is untouched


def test_old_keras_loader_loses_only_its_backend_check():
    """Keras 2.0/2.1's loader, run after install(): its assert on the backend name goes, its
    other asserts stay, and the banner of the branch that imports our JAX adapter names JAX."""
    import ast
    source = ("_backend = 'keras_backend.jax_backend'\n"
              "assert _backend in {'theano', 'tensorflow', 'cntk'}\n"
              "_floatx = 'float32'\n"
              "assert _floatx in {'float16', 'float32', 'float64'}\n"
              "banner = 'Using TensorFlow backend.\\n'\n")
    tree = keras2_compat._without_backend_checks(
        ast.parse(source), {'Using TensorFlow backend.\n': 'Using JAX backend.\n'})
    namespace = {}
    exec(compile(tree, '<keras/backend/__init__.py>', 'exec'), namespace)
    assert namespace['banner'] == 'Using JAX backend.\n'
    asserts = [n for n in ast.walk(tree) if isinstance(n, ast.Assert)]
    assert len(asserts) == 1 and '_floatx' in ast.dump(asserts[0])
    with pytest.raises(AssertionError):
        exec(compile(keras2_compat._without_backend_checks(ast.parse(
            "_floatx = 'float8'\nassert _floatx in {'float16', 'float32'}\n")), '<s>', 'exec'),
            {})


def test_keras_release_is_read_from_the_metadata_beside_the_package(tmp_path, monkeypatch):
    import sys
    import types
    (tmp_path / 'keras').mkdir()
    (tmp_path / 'keras' / '__init__.py').write_text('')
    (tmp_path / 'Keras-2.1.6.dist-info').mkdir()
    fake = types.ModuleType('keras')
    fake.__file__ = str(tmp_path / 'keras' / '__init__.py')
    monkeypatch.setitem(sys.modules, 'keras', fake)
    assert keras2_compat.keras_release() == (2, 1, 6)
    (tmp_path / 'Keras-2.1.6.dist-info').rmdir()
    assert keras2_compat.keras_release() is None


def test_keras_2_0_kernel_rule_is_translated():
    """Keras 2.0.x flips kernels whenever the recorded name differs from the current one: the
    name handed to it differs exactly when the engine table says the kernels must flip."""
    assert keras2_compat.need_kernel_conversion('tensorflow', 'jax') is False
    assert keras2_compat.need_kernel_conversion('theano', 'jax') is True
    assert keras2_compat.need_kernel_conversion('cntk', 'tensorflow') is False


def test_a_convert_kernel_numpy_refuses_is_replaced():
    import types
    from keras_backend.utils import convert_kernel

    def old_convert_kernel(kernel):     # Keras 2.0-2.2: a list of slices as the index
        kernel = np.asarray(kernel)
        slices = [slice(None, None, -1) for _ in range(kernel.ndim)]
        slices[-2:] = (slice(None, None), slice(None, None))
        return np.copy(kernel[slices])
    conv_utils = types.ModuleType('conv_utils')
    conv_utils.convert_kernel = old_convert_kernel
    keras2_compat._patch_convert_kernel(conv_utils)
    k = np.arange(12.).reshape(3, 2, 1, 2)
    try:
        old_convert_kernel(k)
        expected = old_convert_kernel      # an old NumPy: kept
    except IndexError:
        expected = convert_kernel
    assert conv_utils.convert_kernel is expected
    assert np.array_equal(conv_utils.convert_kernel(k), k[::-1, ::-1])
