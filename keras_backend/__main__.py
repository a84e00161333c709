"""``python -m keras_backend``: show the version, the configuration and the engines.

Prints the package version, the keras.json in use (and whether it exists), each
setting with where it came from (file / env / default) and, for each of the
three engines, whether it imports here (its version) or why it does not. It
loads no backend through the loader, so it works with a broken keras.json too
(exit status 1 then).
"""
import importlib
import os
import sys

from . import __version__
from . import common as _cfg


def _engine_status(name):
    """Return a one-line status of engine ``name`` in this interpreter."""
    try:
        module = importlib.import_module('keras_backend.%s_backend' % name)
    except ImportError as e:
        return 'not importable: %s' % e
    except Exception as e:  # an engine that breaks on import is reported, not raised
        return 'broken: %s: %s' % (type(e).__name__, e)
    engine = getattr(module, 'ENGINE', name)
    version = getattr(module, 'ENGINE_VERSION', '?')
    return 'ok: %s %s' % (engine, version)


def main():
    print('keras_backend %s (Python %s)' % (__version__, sys.version.split()[0]))
    status = 0
    path = _cfg.config_path()
    try:
        settings, sources, path, existed = _cfg.resolve_settings(write_default=False)
    except _cfg.ConfigError as e:
        print('config file: %s (exists, but cannot be used)' % path)
        print('  error: %s' % e)
        settings, status = None, 1
    else:
        print('config file: %s (%s)' % (path, 'exists' if existed else
                                        'missing: defaults apply; written on first import'))
        print('settings:')
        for key in ('backend', 'floatx', 'epsilon', 'image_data_format'):
            where = sources[key]
            if where == 'env':
                where = 'env KERAS_BACKEND'
            print('  %-18s %-16s (%s)' % (key, settings[key], where))
    if os.environ.get('KERAS_HOME'):
        print('  KERAS_HOME=%s' % os.environ['KERAS_HOME'])
    print('engines:')
    for name in ('tensorflow', 'theano', 'cntk'):
        print('  %-11s %s' % (name, _engine_status(name)))
    return status


if __name__ == '__main__':
    sys.exit(main())
