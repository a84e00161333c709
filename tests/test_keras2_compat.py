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


@pytest.mark.parametrize('names', [
    ['Keras-2.3.1.dist-info'], ['keras-2.1.6-py3.6.egg-info'], ['Keras-2.2.4rc1.dist-info'],
    ['Keras_Applications-1.0.8.dist-info'], ['Keras-2.dist-info'], ['Keras-2.3-info'],
    ['Keras-info'], ['Keras--info'], ['keras-10.20.30x.egg-info'], ['Keras-a.b.c.dist-info'],
    ['KERAS-2.3.1.dist-info'], ['Keras-2..1.dist-info'], ['Keras-2.3..dist-info'],
    ['Keras-2.3.1.dist-infox'], ['keras-2.3.1'], ['Keras-.-info'], ['Keras-1.2.3.4.5-info'],
    ['Keras-2.3.1.dist-info.bak'], ['keras-2.0.8.egg-info', 'Keras-2.2.4.dist-info'],
    ['Keras-x.dist-info', 'keras-2.1.6.dist-info', 'keras-2.0.8.dist-info']])
def test_keras_release_reads_what_glob_and_re_read(tmp_path, monkeypatch, names):
    """keras_release lists the folder once and parses the names by hand: it gives the release
    that glob's ``[Kk]eras-*.*-info`` and the pattern ``[Kk]eras-(digits).(digits).(digits)``
    give, from the first of the sorted matches."""
    import glob
    import os
    import re
    import sys
    import types
    (tmp_path / 'keras').mkdir()
    for name in names:
        (tmp_path / name).mkdir()
    fake = types.ModuleType('keras')
    fake.__file__ = str(tmp_path / 'keras' / '__init__.py')
    monkeypatch.setitem(sys.modules, 'keras', fake)
    expected = None
    for meta in sorted(glob.glob(os.path.join(str(tmp_path), 'Keras-*.*-info')) +
                       glob.glob(os.path.join(str(tmp_path), 'keras-*.*-info'))):
        found = re.match(r'[Kk]eras-(\d+)\.(\d+)\.(\d+)', os.path.basename(meta))
        if found:
            expected = tuple(int(g) for g in found.groups())
            break
    assert keras2_compat.keras_release() == expected


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


def test_patches_after_import_share_one_finder(tmp_path, monkeypatch):
    """Every module waiting for a patch is served by one ``sys.meta_path`` finder, which
    leaves the path once none waits; each patch runs once, right after its module's code, with
    its ``block`` on the path while that code runs; the first patch asked for a module wins, and
    a module already imported is patched at once."""
    import importlib
    import sys
    package = tmp_path / 'kb_after_import_pkg'
    package.mkdir()
    (package / '__init__.py').write_text('')
    (package / 'first.py').write_text('VALUE = 1\n')
    (package / 'second.py').write_text(
        'try:\n    import kb_blocked_top\nexcept ImportError as e:\n    BLOCKED = str(e)\n'
        'else:\n    BLOCKED = None\n')
    (tmp_path / 'kb_blocked_top.py').write_text('')
    monkeypatch.syspath_prepend(str(tmp_path))
    # this process's own waits (an adapter imported without Keras waits for its loader) are
    # kept aside: a fresh finder, the path without the process's one
    monkeypatch.setattr(sys, 'meta_path', [f for f in sys.meta_path if not isinstance(
        f, keras2_compat._PatchAfterImport)])
    monkeypatch.setattr(keras2_compat, '_POST_IMPORT', keras2_compat._PatchAfterImport())
    for name in ('kb_after_import_pkg', 'kb_after_import_pkg.first',
                 'kb_after_import_pkg.second', 'kb_blocked_top'):
        monkeypatch.delitem(sys.modules, name, raising=False)
    seen = []
    block = keras2_compat._BlockImports(['kb_blocked_top'], 'a test')
    keras2_compat._after_import('kb_after_import_pkg.first',
                                lambda m: seen.append(('first', m.VALUE)))
    keras2_compat._after_import('kb_after_import_pkg.first', lambda m: seen.append('not me'))
    keras2_compat._after_import('kb_after_import_pkg.second',
                                lambda m: seen.append(('second', m.BLOCKED)), block)
    finders = [f for f in sys.meta_path if isinstance(f, keras2_compat._PatchAfterImport)]
    assert finders == [sys.meta_path[0]]
    assert sorted(finders[0].pending) == ['kb_after_import_pkg.first',
                                          'kb_after_import_pkg.second']
    importlib.import_module('kb_after_import_pkg.first')
    assert seen == [('first', 1)]
    assert sys.meta_path[0] is finders[0]
    assert list(finders[0].pending) == ['kb_after_import_pkg.second']
    second = importlib.import_module('kb_after_import_pkg.second')
    assert seen[1][0] == 'second' and 'kb_blocked_top' in seen[1][1] and 'a test' in seen[1][1]
    assert not any(isinstance(f, keras2_compat._PatchAfterImport) for f in sys.meta_path)
    assert block not in sys.meta_path
    keras2_compat._after_import('kb_after_import_pkg.second', lambda m: seen.append(m))
    assert seen[-1] is second and len(seen) == 3
    assert not any(isinstance(f, keras2_compat._PatchAfterImport) for f in sys.meta_path)
    importlib.import_module('kb_blocked_top')          # off the path again
