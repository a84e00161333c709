"""Read the Keras configuration and environment, import one adapter, re-export it.

Importing this module (``keras_backend.backend`` does) resolves the settings:

* the config directory is ``$KERAS_HOME``, else ``~/.keras``, else (home not
  writable) a per-user folder in the temp directory;
* ``keras.json`` there gives ``backend``, ``floatx``, ``epsilon`` and
  ``image_data_format``; a missing file is written with the defaults,
  atomically and never over an existing file; a broken file raises
  ``ConfigError`` naming the file, the key and what was expected, and is
  never rewritten;
* ``KERAS_BACKEND`` (when not empty) overrides the file's backend. A backend
  is one of the names of the engine table (:mod:`keras_backend.engines`:
  ``tensorflow``, ``theano``, ``cntk``, ``jax``) or the import path of a module
  that provides the API (a custom backend);

then imports the adapter, applies the settings to :mod:`keras_backend.common`,
prints ``Using TensorFlow backend.`` (or the engine's name) to stderr once per
process unless ``KERAS_BACKEND_QUIET=1``, and re-exports every public API name
plus the Keras 1 aliases.
"""
import importlib
import os
import sys

from . import api, common, config_file, engines

#: backend name -> (adapter module, engine name shown to users), from the engine table
BUILTIN_BACKENDS = dict((name, (engines.adapter_module(name), engines.title(name)))
                        for name in engines.names())


def import_backend(name):
    """Import and return the adapter module for backend ``name``.

    Raises:
        ImportError: the engine (or the custom module) cannot be imported; the
            message names the engine, the pip extra and the underlying error.
        ValueError: a custom module lacks required API names (all listed).
    """
    if name in BUILTIN_BACKENDS:
        return importlib.import_module(BUILTIN_BACKENDS[name][0])
    try:
        module = importlib.import_module(name)
    except ImportError as e:
        raise ImportError('backend %r is not one of %s and cannot be imported as a custom '
                          'backend module (%s: %s)' % (name, ', '.join(sorted(BUILTIN_BACKENDS)),
                                                       type(e).__name__, e))
    missing = [n for n in api.missing_api_names(module) if n not in common.__all__]
    if missing:
        raise ValueError('custom backend module %r lacks %d required name(s): %s'
                         % (name, len(missing), ', '.join(missing)))
    return module


def exported_names(module):
    """{name: object} of the API, taking the config functions from common when a
    custom module does not define them, plus the Keras 1 aliases (our adapters
    carry them; a custom module gets them built on its API)."""
    names = {}
    for n in api.API_NAMES:
        obj = getattr(module, n, None)
        names[n] = obj if callable(obj) else getattr(common, n)
    if all(callable(getattr(module, n, None)) for n in api.LEGACY_NAMES):
        names.update((n, getattr(module, n)) for n in api.LEGACY_NAMES)
    else:
        names.update(api.legacy_aliases(module))
    return names


_SETTINGS, _SOURCES, _PATH, _ = config_file.resolve_settings(write_default=True)
common.set_floatx(_SETTINGS['floatx'])
common.set_epsilon(_SETTINGS['epsilon'])
common.set_image_data_format(_SETTINGS['image_data_format'])
_BACKEND = _SETTINGS['backend']
_MODULE = import_backend(_BACKEND)

if os.environ.get('KERAS_BACKEND_QUIET', '') not in ('1', 'true', 'True', 'yes'):
    sys.stderr.write('Using %s backend.\n' % BUILTIN_BACKENDS.get(_BACKEND, (None, _BACKEND))[1])

globals().update(exported_names(_MODULE))
__all__ = list(api.API_NAMES) + list(api.LEGACY_NAMES)
