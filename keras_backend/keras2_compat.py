"""What Keras 2.3.1 needs on today's Python and packages, restored where it is missing.

Two things Keras 2.3.1 (2019) relies on have gone since:

* Python 3.10 removed the aliases of the abstract collections from the
  ``collections`` module (``collections.Iterable``, ``collections.Mapping``,
  ...; they live in ``collections.abc`` since Python 3.3). Keras 2.3.1 still
  reads them (``keras.callbacks`` imports ``collections.Iterable``), so
  ``import keras`` fails on Python 3.10+.
* NumPy 2 removed aliases that Keras 2.3.1 still reads: ``np.string_``
  (its HDF5 saving, ``keras.utils.io_utils``), ``np.unicode_``
  (``keras_preprocessing.sequence``), ``np.Inf`` (``keras.callbacks``), and
  NumPy 1.24 ``np.int`` and ``np.float`` (its numpy reference backend, which its
  backend tests compare with, and its tests), and ``np.alltrue`` (its tests).
* h5py 3 reads string attributes back as ``str`` where h5py 2 gave ``bytes``;
  Keras 2.3.1's weight loading calls ``.decode('utf8')`` on them
  (``keras_version``, ``backend``, ``layer_names``, ``weight_names``), so
  ``load_weights`` fails with "'str' object has no attribute 'decode'".

:func:`install` adds each missing ``collections`` alias back, pointing at the
very same ``collections.abc`` class, and each missing NumPy alias, pointing at
what it named (``np.bytes_``, ``np.str_``, ``np.inf``, ``int``, ``float``,
``np.all``); nothing that
exists is replaced. With
h5py 3, makes string attributes come back as :class:`DecodableStr`: a ``str``
in every way that also answers ``.decode()`` with itself, so code written for
either h5py keeps working. It is called automatically when Keras 2 imports one
of keras_backend's adapters as its external backend
(``KERAS_BACKEND=keras_backend.tensorflow_backend``), and may be called by hand
before ``import keras``::

    import keras_backend.keras2_compat
    keras_backend.keras2_compat.install()
    import keras

On Python < 3.10 with NumPy 1.19 and h5py 2 it does nothing.
"""
import builtins
import collections
import collections.abc
import sys

#: the names Python 3.10 removed from ``collections``
ABC_ALIASES = ('Awaitable', 'Coroutine', 'AsyncIterable', 'AsyncIterator', 'AsyncGenerator',
               'Hashable', 'Iterable', 'Iterator', 'Generator', 'Reversible', 'Sized',
               'Container', 'Callable', 'Collection', 'Set', 'MutableSet', 'Mapping',
               'MutableMapping', 'MappingView', 'KeysView', 'ItemsView', 'ValuesView',
               'Sequence', 'MutableSequence', 'ByteString')

#: NumPy aliases removed by NumPy 2 (1.24 for ``int`` and ``float``) that Keras 2.3.1 and
#: its test suite read, with the numpy name each meant (None: the Python builtin of that name)
NUMPY_ALIASES = (('string_', 'bytes_'), ('unicode_', 'str_'), ('Inf', 'inf'), ('int', None),
                 ('float', None), ('alltrue', 'all'))


def _install_numpy_aliases():
    """Add the missing :data:`NUMPY_ALIASES` to ``numpy``; return their names."""
    import numpy as np
    added = []
    for name, target in NUMPY_ALIASES:
        if name not in np.__dict__:
            setattr(np, name, getattr(builtins, name) if target is None else getattr(np, target))
            added.append('numpy.' + name)
    return added


class DecodableStr(str):
    """A ``str`` whose ``decode()`` returns the text itself (h5py 2's bytes had one).

    Example:
        >>> DecodableStr('2.3.1').decode('utf8') == '2.3.1'
        True
    """

    def decode(self, encoding='utf-8', errors='strict'):
        return str(self)


def _decodable(value):
    """``value`` with its ``str`` (or the ``str`` items of an object array) made decodable."""
    if isinstance(value, str) and not isinstance(value, DecodableStr):
        return DecodableStr(value)
    if getattr(value, 'dtype', None) is not None and value.dtype.kind == 'O':
        out = value.copy()
        flat = out.reshape(-1)
        for i, item in enumerate(flat):
            if isinstance(item, str):
                flat[i] = DecodableStr(item)
        return out
    return value


def _install_h5py_attrs():
    """With h5py >= 3, wrap attribute reads so string values answer ``.decode()``."""
    try:
        import h5py
    except ImportError:
        return False
    manager = h5py.AttributeManager
    if int(h5py.__version__.split('.')[0]) < 3 or getattr(manager, '_keras2_compat', False):
        return False
    read = manager.__getitem__

    def __getitem__(self, name):
        return _decodable(read(self, name))

    __getitem__.__doc__ = read.__doc__
    manager.__getitem__ = __getitem__
    manager._keras2_compat = True
    return True


def install():
    """Restore what Keras 2.3.1 reads: ``collections.<ABC>`` and NumPy aliases, decodable
    h5py strings.

    Returns:
        list of str: what was added (the alias names, 'numpy.<name>' for NumPy's, and
        'h5py string attributes');
        empty when nothing was needed or it was already done.
    """
    added = []
    for name in ABC_ALIASES:
        if not hasattr(collections, name) and hasattr(collections.abc, name):
            setattr(collections, name, getattr(collections.abc, name))
            added.append(name)
    added.extend(_install_numpy_aliases())
    if _install_h5py_attrs():
        added.append('h5py string attributes')
    return added


def loaded_by_keras2():
    """True while Keras 2's own backend loader is importing us (its external-backend path)."""
    return 'keras.backend.load_backend' in sys.modules
