"""What Keras 2 (2.0 to 2.3.1) needs on today's Python, packages and engines, restored where it
is missing: one section per release family (every release; 2.3.x; 2.0.x-2.2.x on TensorFlow 2;
2.0.x-2.2.x on NumPy 1.23+; 2.2.0-2.2.4's H5Dict; 2.0.x-2.1.x's loader; docs/semantics.md,
"Keras 2.0-2.2").

What every release relies on and has gone since:

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

from . import engines as _engines

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
    if 'keras.backend' not in sys.modules and \
            not any(isinstance(f, _OldKerasBackend) for f in sys.meta_path):
        sys.meta_path.insert(0, _OldKerasBackend())
        added.append('Keras 2.0/2.1 external backends')
    return added


def _keras_loader():
    """The module of Keras 2 that holds the backend it chose (its global ``_BACKEND``):
    ``keras.backend.load_backend`` (Keras 2.2.5 and 2.3.x), else the package ``keras.backend``
    itself (Keras 2.0.x-2.2.4 load their backend in ``keras/backend/__init__.py``); None when
    no Keras 2 is being imported or was imported."""
    for name in ('keras.backend.load_backend', 'keras.backend'):
        module = sys.modules.get(name)
        if module is not None and isinstance(getattr(module, '_BACKEND', None), str):
            return module
    return None


def loaded_by_keras2():
    """True while Keras 2's own backend loader is importing one of our adapters (its
    external-backend path, any release from 2.0 to 2.3.1)."""
    if 'keras.backend.load_backend' in sys.modules:
        return True
    loader = _keras_loader()
    return loader is not None and loader._BACKEND.startswith(__package__ + '.')


# --- the engine's own name for Keras 2.3.1 (keras.backend.backend()) --------------------------

#: engine name (``keras.backend.backend()``) -> the kernel convention of its convolutions:
#: True where a kernel is flipped (Theano's true convolution), False where it is not
#: (cross-correlation); the ``flips_kernels`` column of the engine table
#: (:data:`keras_backend.engines.TABLE`). Keras 2.3.1's own table (``keras/engine/saving.py``)
#: knows TensorFlow, Theano and CNTK; JAX, like TensorFlow, correlates.
FLIPPED_KERNELS = dict((row.name, row.flips_kernels) for row in _engines.TABLE)

#: the name files record for an engine Keras 2.3.1 does not know, so that every Keras 2.3.1
#: (its own backends included) reads the kernels right: JAX's convention is TensorFlow's (the
#: ``keras2_known_as`` column of the engine table)
FILE_ENGINE_NAMES = dict((row.name, row.keras2_known_as) for row in _engines.TABLE
                         if row.keras2_known_as)


def _engine_of_name(name):
    """The engine a recorded name means: Keras' own names as they are, and the import paths of
    our adapters (``'keras_backend.theano_backend'``, which files written before the adapters
    answered the engine's name carry) as their engine; None for anything else."""
    if isinstance(name, bytes):
        name = name.decode('utf8')
    engine = _engines.canonical_backend(str(name)) if name is not None else None
    return engine if engine in FLIPPED_KERNELS else None


def need_kernel_conversion(original_backend, current_backend):
    """True when convolution kernels saved on ``original_backend`` must be flipped to run on
    ``current_backend`` (one flips its kernels, the other does not).

    Both are engine names as ``keras.backend.backend()`` gives them, or the import paths of
    our adapters; an unknown or missing ``original_backend`` is never converted (Keras 2.3.1's
    rule), an unknown current engine counts as a correlation engine (also Keras').

    Example:
        >>> need_kernel_conversion('theano', 'jax'), need_kernel_conversion('cntk', 'jax')
        (True, False)
        >>> need_kernel_conversion('keras_backend.theano_backend', 'tensorflow')
        True
    """
    original = _engine_of_name(original_backend)
    if original is None:
        return False
    current = _engine_of_name(current_backend)
    return FLIPPED_KERNELS[original] != FLIPPED_KERNELS.get(current, False)


def _patch_keras_saving(saving):
    """Keras' saving module on one of our adapters, in every release: the kernel decision knows
    JAX and our adapters' import paths, and files record a name Keras knows.

    ``saving`` is ``keras.engine.saving`` (Keras 2.2 and later) or ``keras.engine.topology``
    (2.0.x and 2.1.x, where it holds the HDF5 code); whatever of these functions it defines
    itself is patched:

    * ``_need_convert_kernel`` (2.1 and later) answers :func:`need_kernel_conversion`;
    * ``preprocess_weights_for_loading`` of 2.0.x, which flips kernels whenever the recorded
      engine is not the current one (no ``_need_convert_kernel`` yet), gets the recorded name
      translated so that it flips exactly when :func:`need_kernel_conversion` says so;
    * ``save_weights_to_hdf5_group`` and ``_serialize_model`` (2.2 and later) record the name
      of :data:`FILE_ENGINE_NAMES` (JAX's files say ``'tensorflow'``).
    """
    from keras import backend as keras_backend_module   # noqa: F401  (Keras' K)
    conv_utils = sys.modules.get('keras.utils.conv_utils')
    if conv_utils is not None:
        # imported (as it imports Keras' backend) before any hook could be set: the kernel flip
        # the code below calls
        _patch_convert_kernel(conv_utils)

    def defines(name):
        value = getattr(saving, name, None)
        return value is not None and getattr(value, '__module__', None) == saving.__name__

    if defines('_need_convert_kernel'):
        def _need_convert_kernel(original_backend):
            return need_kernel_conversion(original_backend, keras_backend_module.backend())
        _need_convert_kernel.__doc__ = need_kernel_conversion.__doc__
        saving._need_convert_kernel = _need_convert_kernel
    elif defines('preprocess_weights_for_loading'):
        preprocess = saving.preprocess_weights_for_loading

        def preprocess_weights_for_loading(layer, weights, original_keras_version=None,
                                           original_backend=None, *args, **kwargs):
            if original_backend is not None:
                current = keras_backend_module.backend()
                # Keras 2.0.x flips when the names differ: give it a name that differs
                # exactly when the kernels must be flipped
                original_backend = (('theano' if current != 'theano' else 'tensorflow')
                                    if need_kernel_conversion(original_backend, current)
                                    else current)
            return preprocess(layer, weights, original_keras_version, original_backend,
                              *args, **kwargs)
        preprocess_weights_for_loading.__doc__ = preprocess.__doc__
        saving.preprocess_weights_for_loading = preprocess_weights_for_loading

    file_name = FILE_ENGINE_NAMES.get(keras_backend_module.backend())
    if file_name is None:
        return
    recorded = file_name.encode('utf8')
    if defines('save_weights_to_hdf5_group'):
        save_group = saving.save_weights_to_hdf5_group

        def save_weights_to_hdf5_group(group, layers):
            save_group(group, layers)
            group.attrs['backend'] = recorded
        save_weights_to_hdf5_group.__doc__ = save_group.__doc__
        saving.save_weights_to_hdf5_group = save_weights_to_hdf5_group
    if defines('_serialize_model'):
        serialize = saving._serialize_model

        def _serialize_model(model, h5dict, include_optimizer=True):
            serialize(model, h5dict, include_optimizer)
            h5dict['backend'] = recorded
            h5dict['model_weights']['backend'] = recorded
        _serialize_model.__doc__ = serialize.__doc__
        saving._serialize_model = _serialize_model


class _BlockImports(object):
    """A ``sys.meta_path`` finder that refuses the packages ``names`` (and their modules) with
    ``ModuleNotFoundError`` while it is on the path: what Keras 2.3.1 imports optionally
    (``try: import ... except ImportError``) and does not need on this engine."""

    def __init__(self, names, why):
        self.names = tuple(names)
        self.why = why

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split('.')[0]
        if top in self.names and top not in sys.modules:
            raise ModuleNotFoundError('%s is not imported here: %s' % (fullname, self.why),
                                      name=fullname)
        return None


def _spec_from_other_finders(me, fullname, path, target):
    """The spec that the finders of ``sys.meta_path`` other than ``me`` give module
    ``fullname`` (the first that answers), or None."""
    for finder in sys.meta_path:
        if finder is me or not hasattr(finder, 'find_spec'):
            continue
        spec = finder.find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None


class _PatchAfterImport(object):
    """The ``sys.meta_path`` finder that lets the other finders import each module of
    ``pending`` (its name -> ``(patch, block)``), then calls ``patch(module)`` once, right
    after the module's code ran (before anyone uses it); ``block`` (a :class:`_BlockImports`,
    or None) is on the import path while that code runs. One finder serves every pending
    module (each import asks every finder of ``sys.meta_path``, a Python call and the import
    lock each), and it leaves the path when none is pending."""

    def __init__(self):
        self.pending = {}

    def find_spec(self, fullname, path=None, target=None):
        entry = self.pending.get(fullname)
        if entry is None:
            return None
        spec = _spec_from_other_finders(self, fullname, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, 'exec_module'):
            return spec
        del self.pending[fullname]
        if not self.pending and self in sys.meta_path:
            sys.meta_path.remove(self)
        loader = spec.loader
        patch, block = entry

        class _Loader(object):
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                if block is not None:
                    sys.meta_path.insert(0, block)
                try:
                    loader.exec_module(module)
                finally:
                    if block in sys.meta_path:
                        sys.meta_path.remove(block)
                patch(module)

        spec.loader = _Loader()
        return spec


#: the one :class:`_PatchAfterImport` (on ``sys.meta_path`` while a module is pending)
_POST_IMPORT = _PatchAfterImport()


def _after_import(name, patch, block=None):
    """Run ``patch(module)`` on module ``name``: now if it is imported, else when it is (with
    ``block``, a :class:`_BlockImports`, on the import path while its code runs). The first
    patch asked for a module is the one run."""
    module = sys.modules.get(name)
    if module is not None:
        patch(module)
        return
    _POST_IMPORT.pending.setdefault(name, (patch, block))
    if not sys.meta_path or sys.meta_path[0] is not _POST_IMPORT:
        if _POST_IMPORT in sys.meta_path:
            sys.meta_path.remove(_POST_IMPORT)
        sys.meta_path.insert(0, _POST_IMPORT)


def _not_after_import(name):
    """Stop waiting for module ``name`` (:func:`_after_import`); the finder leaves
    ``sys.meta_path`` when no other module is pending."""
    _POST_IMPORT.pending.pop(name, None)
    if not _POST_IMPORT.pending and _POST_IMPORT in sys.meta_path:
        sys.meta_path.remove(_POST_IMPORT)


class _TensorFlowFileIO(object):
    """Stands for ``tensorflow.python.lib.io.file_io`` in Keras 2.3.1's ``keras.engine.saving``
    on an engine other than TensorFlow: TensorFlow (0.5 GiB, seconds) is imported on the first
    use, a ``gs://`` path, not by ``import keras``."""

    def __getattr__(self, name):
        try:
            from tensorflow.python.lib.io import file_io
        except ImportError as err:
            raise ImportError('Keras 2.3.1 reads and writes gs:// (Google Cloud Storage) paths '
                              'through TensorFlow\'s file_io, which could not be imported '
                              '(%s); install tensorflow for gs:// paths' % (err,))
        return getattr(file_io, name)


def _patch_saving_file_io(saving):
    """``keras.engine.saving`` loaded without TensorFlow: its ``tf_file_io`` imports it when
    a ``gs://`` path needs it (where TensorFlow is installed; else Keras' own message)."""
    import importlib.util
    if getattr(saving, 'tf_file_io', None) is None and \
            importlib.util.find_spec('tensorflow') is not None:
        saving.tf_file_io = _TensorFlowFileIO()


def _patch_sklearn_wrappers(module):
    """Keras 2.3.1's ``keras.wrappers.scikit_learn`` on scikit-learn >= 1.6, which asks every
    estimator for ``__sklearn_tags__`` (``GridSearchCV``, ``clone``, ``is_classifier``):
    ``BaseWrapper`` answers the tags of a classifier (``KerasClassifier``) or a regressor
    (``KerasRegressor``) through scikit-learn's documented ``sklearn.utils.Tags``; older
    scikit-learn never asks."""
    base = getattr(module, 'BaseWrapper', None)
    if base is None or '__sklearn_tags__' in vars(base):
        return
    classifier_cls = getattr(module, 'KerasClassifier', None)

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, RegressorTags, Tags, TargetTags
        if classifier_cls is not None and isinstance(self, classifier_cls):
            return Tags(estimator_type='classifier', target_tags=TargetTags(required=True),
                        classifier_tags=ClassifierTags())
        return Tags(estimator_type='regressor', target_tags=TargetTags(required=True),
                    regressor_tags=RegressorTags())
    base.__sklearn_tags__ = __sklearn_tags__


def _adopt_imported_adapter(loader):
    """After Keras' loader ran: :func:`adopt_engine_name` of the adapter it loaded when that
    adapter was imported before Keras (its import found no loader to adopt it)."""
    module = sys.modules.get(str(getattr(loader, '_BACKEND', '')))
    if module is not None and module.__name__.startswith(__package__ + '.'):
        adopt_engine_name(module)


def adopt_engine_name(module):
    """When Keras 2 is importing ``module`` (one of our adapters) as its external backend,
    make Keras see the engine as it sees its own backends; else do nothing.

    * ``keras.backend.backend()`` answers the engine's name (``'tensorflow'``, ``'theano'``
      for PyTensor and Theano 1.0.5, ``'cntk'``, ``'jax'``) instead of the module path, so
      Keras' own per-engine branches (kernel conversion on load, RNN dropout on Theano,
      ``Lambda`` shapes, ...) and libraries that dispatch on the name run as on Keras'
      own backends;
    * the adapter is ``keras.backend.<engine>_backend`` (where Keras' own module of that name
      is not already imported), the module Keras' code and libraries reach for by that name;
    * Keras' ``keras.backend.common`` holds the configuration (:func:`keras_backend.common.
      share_state_with`);
    * Keras' HDF5 code (``keras.engine.saving``, or ``keras.engine.topology`` before 2.2) is
      patched when imported (see :func:`_patch_keras_saving`), and what the releases before
      2.3 need (the sections below).

    Called by :func:`keras_backend.api.install` as the last step of each adapter's import.

    Returns:
        str or None: the engine name Keras now answers, None when Keras is not loading
        ``module``.
    """
    loader = _keras_loader()
    if loader is None:
        # imported before Keras (``keras_backend.distribute.init`` imports the engine's
        # collectives, a module of the adapter package, before the script imports Keras):
        # adopt when Keras' loader has run, if it chose an adapter already imported
        _after_import('keras.backend.load_backend', _adopt_imported_adapter)
        return None
    if getattr(loader, '_BACKEND', None) != module.__name__:
        return None
    name = _engines.canonical_backend(module.__name__)
    loader._BACKEND = name
    # Keras' floatx, epsilon and image data format (keras.backend.common) are ours too (also
    # where keras_backend was imported before Keras: keras2_compat.install() by hand)
    from . import common
    common.share_state_with(sys.modules['keras.backend.common'])
    key = 'keras.backend.%s_backend' % name
    package = sys.modules.get('keras.backend')
    if key not in sys.modules:
        sys.modules[key] = module
        if package is not None:
            setattr(package, name + '_backend', module)
    # Keras 2.0.x and 2.1.x keep their HDF5 code in keras.engine.topology
    _after_import('keras.engine.topology', _patch_keras_saving)
    # Keras 2.2 and later hold their HDF5 code in keras.engine.saving, and their
    # keras.engine.topology defines none of what _patch_keras_saving patches: once saving is
    # imported, topology is no longer waited for (the finder would stay on the import path)
    # Keras 2.3.1's saving imports TensorFlow's file_io when it can (gs:// paths): not at
    # import time on another engine (0.5 GiB and seconds), on the first gs:// path instead
    def patch_saving(saving):
        _not_after_import('keras.engine.topology')
        if name != 'tensorflow':
            _patch_saving_file_io(saving)
        _patch_keras_saving(saving)
    _after_import('keras.engine.saving', patch_saving, None if name == 'tensorflow' else
                  _BlockImports(['tensorflow'], 'Keras 2.3.1 runs on the %s engine, and '
                                'keras_backend imports TensorFlow for gs:// paths only when '
                                'one is used' % name))
    _after_import('keras.utils.io_utils', _patch_h5dict)
    if name == 'tensorflow':
        _after_import('keras.optimizers', _patch_tf_optimizer_check)

        def patch_callbacks(callbacks):
            _drop_tensorflow_contrib(callbacks)
            _install_tensorboard(callbacks)
        _after_import('keras.callbacks', patch_callbacks,
                      _StandInModules(TENSORFLOW_CONTRIB_MODULES, _tensorflow_contrib_module))
    else:
        _after_import('keras.callbacks', _install_tensorboard)
    _after_import('keras.wrappers.scikit_learn', _patch_sklearn_wrappers)
    hook = getattr(module, '_adopted_by_keras2', None)
    if hook is not None:
        hook()
    return name


# --- every release: its TensorBoard callback on every engine -------------------------------------
#
# Keras' own callback is TensorFlow 1's (tf.summary, a session, tensorflow.contrib's
# projector); 2.3.1 hands TensorFlow 2 to tf.keras' callback, which cannot serve a Keras 2
# model; off TensorFlow it drew the loss curves only, with TensorFlow installed.

def _install_tensorboard(callbacks):
    """``keras.callbacks`` (the package of 2.3.x, the module before): its ``TensorBoard``
    (and that of 2.3.x's ``tensorboard_v1`` / ``tensorboard_v2``) becomes
    :func:`keras_backend.tensorboard.tensorboard_class`'s, made for this release."""
    from .tensorboard import tensorboard_class
    ours = tensorboard_class(callbacks.Callback, keras_release() or (2, 3, 1))
    for module in (callbacks, sys.modules.get(callbacks.__name__ + '.tensorboard_v1'),
                   sys.modules.get(callbacks.__name__ + '.tensorboard_v2')):
        if module is not None and hasattr(module, 'TensorBoard'):
            module.TensorBoard = ours


# --- Keras 2.0.x-2.2.x on TensorFlow 2 ---------------------------------------------------------
#
# Their optimizers.get checks ``isinstance(optimizer, tf.train.Optimizer)`` whenever the backend
# answers 'tensorflow' (TensorFlow 2 keeps that class as tf.compat.v1.train.Optimizer), and
# Keras 2.0.x's keras.callbacks imports ``tensorflow.contrib.tensorboard.plugins.projector`` at
# import time on TensorFlow (TensorFlow 2 has no contrib).

def keras_release():
    """The release of the Keras 2 being imported or imported, ``(major, minor, patch)``, read
    from the metadata folder beside its package (``Keras-2.2.4.dist-info`` or ``.egg-info``:
    ``keras.__version__`` is set only at the end of its import); None when not found.

    The folder is found among the names of one ``os.listdir`` (a first ``import keras`` on every
    engine asks this; ``glob`` and ``re`` compiled three patterns for it, 3 ms).

    Example:
        >>> keras_release()          # with Keras 2.2.4 on the path, while it imports
        (2, 2, 4)
    """
    import os
    keras = sys.modules.get('keras')
    path = getattr(keras, '__file__', None)
    if not path:
        return None
    site = os.path.dirname(os.path.dirname(os.path.abspath(path)))
    try:
        names = os.listdir(site)
    except OSError:
        return None
    for name in sorted(names):
        release = _release_of_metadata_folder(name)
        if release is not None:
            return release
    return None


def _release_of_metadata_folder(name):
    """``(major, minor, patch)`` of a Keras metadata folder's name (``Keras-2.2.4.dist-info``,
    ``keras-2.1.6-py3.6.egg-info``: ``[Kk]eras-*.*-info`` whose version starts with three
    dotted numbers, the third one's digits taken up to the first non-digit), else None."""
    if name[:6] not in ('Keras-', 'keras-') or not name.endswith('-info'):
        return None
    parts = name[6:].split('.', 3)
    if len(parts) < 3:
        return None
    major, minor, patch = parts[0], parts[1], parts[2][:_leading_digits(parts[2])]
    if not (major and minor and patch) or _leading_digits(major) < len(major) or \
            _leading_digits(minor) < len(minor):
        return None
    return int(major), int(minor), int(patch)


def _leading_digits(text):
    """How many of ``text``'s first characters are ASCII digits."""
    count = 0
    while count < len(text) and text[count] in '0123456789':
        count += 1
    return count


class _Namespace(object):
    """``module`` as it is, but for the names of ``overrides`` (read-only: a stand-in)."""

    def __init__(self, module, **overrides):
        self.__dict__.update(overrides)
        self._module = module

    def __getattr__(self, name):
        return getattr(self._module, name)

    def __repr__(self):
        return '<%r as Keras 2.0-2.2 read it>' % (self._module,)


def _patch_tf_optimizer_check(optimizers):
    """``keras.optimizers`` of a release that reads ``tf.train.Optimizer`` (2.0.x-2.2.x): its
    ``tf`` is TensorFlow with ``tf.train.Optimizer`` being ``tf.compat.v1.train.Optimizer``
    (the class TensorFlow 1's optimizers derive from); TensorFlow itself is left unchanged."""
    tf = getattr(optimizers, 'tf', None)
    if tf is None or not hasattr(tf, 'compat') or hasattr(tf.train, 'Optimizer'):
        return
    optimizers.tf = _Namespace(tf, train=_Namespace(
        tf.train, Optimizer=tf.compat.v1.train.Optimizer))


#: what Keras 2.0.x's keras.callbacks imports of ``tensorflow.contrib`` when the backend is
#: TensorFlow (its TensorBoard callback's embeddings projector)
TENSORFLOW_CONTRIB_MODULES = ('tensorflow.contrib', 'tensorflow.contrib.tensorboard',
                              'tensorflow.contrib.tensorboard.plugins',
                              'tensorflow.contrib.tensorboard.plugins.projector')


def _tensorflow_contrib_module(name):
    """A stand-in for module ``name`` of ``tensorflow.contrib``: its submodules are its
    attributes; anything else raises a RuntimeError that says TensorFlow 2 has no contrib."""
    import types

    class _Missing(types.ModuleType):
        def __getattr__(self, attr):
            if attr.startswith('__'):
                raise AttributeError(attr)

            def missing(*args, **kwargs):
                raise RuntimeError(
                    '%s.%s is not available: TensorFlow 2 has no tensorflow.contrib (Keras '
                    '2.0.x\'s TensorBoard callback uses it for embeddings)' % (name, attr))
            return missing
    return _Missing(name)


class _StandInModules(object):
    """A ``sys.meta_path`` finder that serves the modules ``names`` (missing from the engine)
    as ``make(name)`` while it is on the path (a :class:`_PatchAfterImport`'s ``block``)."""

    def __init__(self, names, make):
        self.names = tuple(names)
        self.make = make

    def find_spec(self, fullname, path=None, target=None):
        import importlib.machinery
        if fullname not in self.names:
            return None
        make = self.make

        class _Loader(object):
            def create_module(self, spec):
                return make(spec.name)

            def exec_module(self, module):
                pass
        return importlib.machinery.ModuleSpec(fullname, _Loader(),
                                              is_package=fullname != self.names[-1])


def _drop_tensorflow_contrib(callbacks):
    """After Keras' keras.callbacks ran: the stand-ins of ``tensorflow.contrib`` leave
    ``sys.modules`` and ``tensorflow`` (what keras.callbacks bound stays with it)."""
    for name in TENSORFLOW_CONTRIB_MODULES:
        sys.modules.pop(name, None)
    tf = sys.modules.get('tensorflow')
    if tf is not None and isinstance(tf.__dict__.get('contrib'), type(sys)) and \
            tf.__dict__['contrib'].__class__.__name__ == '_Missing':
        del tf.contrib


# --- Keras 2.0.x-2.2.x on NumPy 1.23+ -------------------------------------------------------------
#
# Their ``keras.utils.conv_utils.convert_kernel`` (the kernel flip between Theano and the other
# engines, on every load of a file saved on the other kind) indexes an array with a list of
# slices, which NumPy 1.23 refuses ("only integers, slices ... are valid indices").

def _patch_convert_kernel(conv_utils):
    """``conv_utils.convert_kernel`` of a release whose own one NumPy refuses becomes
    :func:`keras_backend.utils.convert_kernel` (the same flip: every axis but the two channel
    axes reversed; ``ValueError`` for a rank other than 3-5, as Keras raised)."""
    import numpy as np
    convert = getattr(conv_utils, 'convert_kernel', None)
    if convert is None:
        return
    try:
        convert(np.zeros((2, 1, 1)))
        return
    except (IndexError, TypeError):
        pass
    from .utils import convert_kernel
    conv_utils.convert_kernel = convert_kernel
    for name in ('keras.utils.layer_utils', 'keras.utils'):
        # the modules that imported the function itself (convert_all_kernels_in_model)
        module = sys.modules.get(name)
        if module is not None and getattr(module, 'convert_kernel', None) is convert:
            module.convert_kernel = convert_kernel


# --- Keras 2.2.0-2.2.4: its H5Dict on h5py 3 -----------------------------------------------------
#
# ``load_model`` reads a layer's weight names through ``keras.utils.io_utils.H5Dict`` and asks
# ``if weight_names:``. With h5py 2 the names came back as a list (bytes) or an empty array that
# NumPy 1 called False; h5py 3 gives an object array of ``str`` (NumPy: "truth value of an array
# is ambiguous") or an empty array (NumPy 2.2: an error). Keras 2.2.5 changed the line.

def _patch_h5dict(io_utils):
    """``H5Dict.__getitem__`` of Keras 2.2.0-2.2.4 gives a one-dimensional attribute (the
    names Keras writes, or an empty list) as a ``list`` of ``bytes``, as it got them from h5py
    2; later releases are left as they are (they test ``len(...)``)."""
    h5dict = getattr(io_utils, 'H5Dict', None)
    if h5dict is None or getattr(h5dict, '_keras2_compat', False) or \
            'keras.backend.load_backend' in sys.modules:
        # no H5Dict (2.0.x, 2.1.x), or a release with its own loader module (2.2.5, 2.3.x)
        return
    read = h5dict.__getitem__

    def __getitem__(self, attr):
        value = read(self, attr)
        if getattr(value, 'ndim', None) == 1 and (value.size == 0 or value.dtype.kind in 'OSU'):
            data = getattr(self, 'data', None)
            attrs = getattr(data, 'attrs', None)
            if attrs is not None and attr in attrs:
                # bytes, as h5py 2 read back the names Keras wrote as bytes
                return [v.encode('utf8') if isinstance(v, str) else v for v in value.tolist()]
        return value
    __getitem__.__doc__ = read.__doc__
    h5dict.__getitem__ = __getitem__
    h5dict._keras2_compat = True


# --- Keras 2.0.x and 2.1.x: a loader that knows only Keras' own backends -------------------------
#
# Their keras/backend/__init__.py asserts that the backend (keras.json's or KERAS_BACKEND) is
# 'theano', 'tensorflow' or 'cntk' and imports Keras' own module of that name; external
# backends came with 2.2.0. After :func:`install`, a Keras 2.0/2.1 configured with one of our
# adapters (``KERAS_BACKEND=keras_backend.jax_backend``, or keras.json's "backend") runs its own
# loader with the adapter in the place of its module of the engine's kind; nothing of Keras'
# files changes.

#: the check of Keras 2.0.x-2.1.x's loader that refuses external backends
OLD_LOADER_CHECK = "assert _backend in {'theano', 'tensorflow', 'cntk'}"


def _old_keras_configured_backend():
    """The backend a Keras 2.0/2.1 will read: ``KERAS_BACKEND`` when set and not empty, else
    the ``backend`` of its keras.json (``~/.keras``; ``/tmp/.keras`` where the home directory is
    not writable, as those releases look), else None."""
    import json
    import os
    name = os.environ.get('KERAS_BACKEND')
    if name:
        return name
    base = os.path.expanduser('~')
    if not os.access(base, os.W_OK):
        base = '/tmp'
    try:
        with open(os.path.join(base, '.keras', 'keras.json')) as f:
            config = json.load(f)
    except (OSError, IOError, ValueError):
        return None
    backend = config.get('backend') if isinstance(config, dict) else None
    return backend if isinstance(backend, str) else None


def _without_backend_checks(tree, banners=None):
    """Keras 2.0/2.1's loader (a module's AST) without its asserts on ``_backend``, and with
    each string of ``banners`` (``{'Using TensorFlow backend.\\n': 'Using JAX backend.\\n'}``)
    replaced."""
    import ast
    banners = banners or {}

    class _Drop(ast.NodeTransformer):
        def visit_Assert(self, node):
            names = set(n.id for n in ast.walk(node.test) if isinstance(n, ast.Name))
            return None if '_backend' in names else node

        def _banner(self, node, field):
            text = getattr(node, field)
            if isinstance(text, str) and text in banners:
                setattr(node, field, banners[text])
            return node

        def visit_Constant(self, node):      # Python 3.8+
            return self._banner(node, 'value')

        def visit_Str(self, node):           # Python 3.6, 3.7
            return self._banner(node, 's')
    return ast.fix_missing_locations(_Drop().visit(tree))


class _AdapterAs(object):
    """A ``sys.meta_path`` finder that gives our adapter ``adapter`` (an import path) as Keras'
    module ``name`` (``keras.backend.tensorflow_backend``), imported when Keras asks for it,
    adopted as Keras 2.2's external loader adopts it (:func:`adopt_engine_name`)."""

    def __init__(self, name, adapter):
        self.name = name
        self.adapter = adapter

    def find_spec(self, fullname, path=None, target=None):
        import importlib
        import importlib.machinery
        if fullname != self.name:
            return None
        keras_backend_package = sys.modules['keras.backend']
        from . import common
        common.share_state_with(sys.modules['keras.backend.common'])
        keras_backend_package._BACKEND = self.adapter   # as Keras 2.2 holds an external one
        module = importlib.import_module(self.adapter)
        if keras_backend_package._BACKEND == self.adapter:
            adopt_engine_name(module)       # imported before Keras: adopt it now

        class _Loader(object):
            def create_module(self, spec):
                return module

            def exec_module(self, module):
                pass
        return importlib.machinery.ModuleSpec(fullname, _Loader())


class _OldKerasBackend(object):
    """A ``sys.meta_path`` finder for ``keras.backend`` put there by :func:`install`: a Keras
    2.0.x or 2.1.x loader (:data:`OLD_LOADER_CHECK` in its code) configured with one of our
    adapters runs without that check, imports the adapter as its own module of the engine's
    kind (``tensorflow`` for JAX: the engine table's ``keras2_known_as``) and then answers the
    engine's name from ``K.backend()``. Any other ``keras.backend`` loads as it is."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != 'keras.backend':
            return None
        spec = _spec_from_other_finders(self, fullname, path, target)
        if spec is None or not spec.origin or not spec.origin.endswith('.py'):
            return spec
        adapter = _old_keras_configured_backend()
        engine = _engines.canonical_backend(adapter) if adapter else None
        if engine not in FLIPPED_KERNELS:
            return spec
        with open(spec.origin) as f:
            source = f.read()
        if OLD_LOADER_CHECK not in source:
            return spec          # Keras 2.2 and later load external backends themselves
        rows = [r for r in _engines.TABLE if r.name == engine]
        spec.loader = _OldKerasBackendLoader(source, adapter,
                                             rows[0].keras2_known_as or engine, rows[0].title)
        return spec


class _OldKerasBackendLoader(object):
    """Runs Keras 2.0/2.1's ``keras/backend/__init__.py`` with our adapter (see
    :class:`_OldKerasBackend`)."""

    def __init__(self, source, adapter, keras_name, title):
        self.source = source
        self.adapter = adapter
        self.keras_name = keras_name
        self.banners = {}
        if _engines.canonical_backend(adapter) != keras_name:    # JAX in TensorFlow's branch
            # that branch's banner, as those releases print it ('Using TensorFlow backend.')
            keras_title = [r.title for r in _engines.TABLE if r.name == keras_name][0]
            self.banners['Using %s backend.\n' % keras_title] = 'Using %s backend.\n' % title

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        import ast
        import os
        code = compile(_without_backend_checks(ast.parse(self.source, module.__file__),
                                               self.banners), module.__file__, 'exec')
        serve = _AdapterAs('keras.backend.%s_backend' % self.keras_name, self.adapter)
        saved = os.environ.get('KERAS_BACKEND')
        os.environ['KERAS_BACKEND'] = self.keras_name   # its branch that imports the module
        sys.meta_path.insert(0, serve)
        try:
            exec(code, module.__dict__)
        finally:
            sys.meta_path.remove(serve)
            if saved is None:
                del os.environ['KERAS_BACKEND']
            else:
                os.environ['KERAS_BACKEND'] = saved
