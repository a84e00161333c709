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
