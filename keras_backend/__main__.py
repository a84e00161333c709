"""``python -m keras_backend``: show the version, the configuration and the engines.

Prints the package version, the keras.json in use (and whether it exists), each
setting with where it came from (file / env / default) and, for each engine of
the engine table (:mod:`keras_backend.engines`), whether it imports here (its
version) or why it does not. It
loads no backend through the loader, so it works with a broken keras.json too
(exit status 1 then).
"""
import importlib
import importlib.util
import os
import shutil
import sys
import tempfile

from . import __version__
from . import config_file as _cfg
from . import engines
from .engines import BUILTIN_BACKEND_NAMES


def _engine_status(name):
    """Return a one-line status of engine ``name`` in this interpreter."""
    try:
        module = importlib.import_module(engines.adapter_module(name))
    except ImportError as e:
        return 'not importable: %s' % e
    except Exception as e:  # an engine that breaks on import is reported, not raised
        return 'broken: %s: %s' % (type(e).__name__, e)
    engine = str(getattr(module, 'ENGINE', name))
    version = getattr(module, 'ENGINE_VERSION', '?')
    # ENGINE is lower-case ('tensorflow'); show the engine's own spelling.
    return 'ok: %s %s' % (engines.title(engine.lower()), version)


def _probe_engines():
    """{name: status} for each engine name of the table, each probed in a child process of
    this interpreter with a throw-away KERAS_HOME.

    Some engines read or write keras.json themselves on import (TensorFlow's
    bundled Keras does): the probe must neither write the user's file nor
    blame an engine for the user's broken one. Each engine imports in a process of its
    own: engines that cannot share a process (PyTorch's CUDA build loads Triton's LLVM,
    which crashes beside TensorFlow's and JAX's when Keras 3 is asked for PyTorch) are
    reported one by one, and a crash is reported as such.
    """
    import subprocess
    scratch = tempfile.mkdtemp(prefix='keras_backend_probe_')
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, KERAS_HOME=scratch,
               PYTHONPATH=os.pathsep.join([root] + ([os.environ['PYTHONPATH']]
                                                    if os.environ.get('PYTHONPATH') else [])))
    try:
        children = [(name, subprocess.Popen(
            [sys.executable, '-m', 'keras_backend', '--probe', name], env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True))
            for name in BUILTIN_BACKEND_NAMES]
        found = {}
        for name, child in children:
            out, err = child.communicate()
            lines = [l for l in out.splitlines() if l.startswith('status: ')]
            if lines:
                found[name] = lines[-1][len('status: '):]
            elif child.returncode < 0:
                found[name] = ('broken: the interpreter died importing it (signal %d)'
                               % -child.returncode)
            else:
                last = [l for l in err.splitlines() if l.strip()][-1:] or ['no output']
                found[name] = 'broken: exit status %d: %s' % (child.returncode, last[0])
        return found
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _backend_warning(backend):
    """A warning line for a backend that is neither an engine nor an importable module."""
    if backend in BUILTIN_BACKEND_NAMES:
        return None
    try:
        found = importlib.util.find_spec(backend) is not None
    except (ImportError, ValueError):
        found = False
    if found:
        return None
    return ('warning: backend %r is not one of %s and no module of that name can be imported: '
            '`from keras_backend import backend` will fail'
            % (backend, ', '.join(BUILTIN_BACKEND_NAMES)))


def main():
    print('keras_backend %s (Python %s, %s)' % (__version__, sys.version.split()[0],
                                                sys.executable))
    status = 0
    path = _cfg.config_path()
    try:
        settings, sources, path, existed = _cfg.resolve_settings(write_default=False)
    except _cfg.ConfigError as e:
        print('config file: %s (exists, but cannot be used)' % path)
        print('  error: %s' % e)
        settings, status = None, 1
    else:
        if existed:
            print('config file: %s (exists)' % path)
        else:
            print('config file: %s (missing: the defaults apply; the first '
                  '`from keras_backend import backend` writes them there)' % path)
        print('settings:')
        for key in ('backend', 'floatx', 'epsilon', 'image_data_format'):
            where = sources[key]
            if where == 'env':
                where = 'env KERAS_BACKEND'
            print('  %-18s %-16s (%s)' % (key, settings[key], where))
        warning = _backend_warning(settings['backend'])
        if warning:
            print('  ' + warning)
    if os.environ.get('KERAS_HOME'):
        print('  KERAS_HOME=%s' % os.environ['KERAS_HOME'])
    print('engines%s:' % (' (probed with the default settings, keras.json aside)'
                          if settings is None else ''))
    for name, line in _probe_engines().items():
        print('  %-11s %s' % (name, line))
    return status


if __name__ == '__main__':
    if sys.argv[1:2] == ['--probe']:        # one engine, in a child of _probe_engines
        print('status: ' + _engine_status(sys.argv[2]))
        sys.exit(0)
    sys.exit(main())
