"""What Keras 2.3.1 needs to import on today's Python, restored where it is missing.

Keras 2.3.1 (2019) predates Python 3.10, which removed the aliases of the
abstract collections from the ``collections`` module (``collections.Iterable``,
``collections.Mapping``, ...; they live in ``collections.abc`` since Python
3.3). Keras 2.3.1 still reads them (``keras.callbacks`` imports
``collections.Iterable``; ``keras.engine.training_utils`` tests
``collections.Mapping``), so ``import keras`` fails on Python 3.10+.

:func:`install` adds each missing alias back, pointing at the very same
``collections.abc`` class; nothing that exists is replaced. It is called
automatically when Keras 2 imports one of keras_backend's adapters as its
external backend (``KERAS_BACKEND=keras_backend.tensorflow_backend``), and
may be called by hand before ``import keras``::

    import keras_backend.keras2_compat
    keras_backend.keras2_compat.install()
    import keras

On Python < 3.10 it does nothing.
"""
import collections
import collections.abc
import sys

#: the names Python 3.10 removed from ``collections``
ABC_ALIASES = ('Awaitable', 'Coroutine', 'AsyncIterable', 'AsyncIterator', 'AsyncGenerator',
               'Hashable', 'Iterable', 'Iterator', 'Generator', 'Reversible', 'Sized',
               'Container', 'Callable', 'Collection', 'Set', 'MutableSet', 'Mapping',
               'MutableMapping', 'MappingView', 'KeysView', 'ItemsView', 'ValuesView',
               'Sequence', 'MutableSequence', 'ByteString')


def install():
    """Restore the ``collections.<ABC>`` aliases that Keras 2.3.1 reads.

    Returns:
        list of str: the names added (empty on Python < 3.10 or when already there).
    """
    added = []
    for name in ABC_ALIASES:
        if not hasattr(collections, name) and hasattr(collections.abc, name):
            setattr(collections, name, getattr(collections.abc, name))
            added.append(name)
    return added


def loaded_by_keras2():
    """True while Keras 2's own backend loader is importing us (its external-backend path)."""
    return 'keras.backend.load_backend' in sys.modules
