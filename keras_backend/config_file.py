"""keras.json: where it lives, reading and validating it, writing the default.

The loader (:mod:`keras_backend.load_backend`) calls :func:`resolve_settings`;
``python -m keras_backend`` reports what it finds. A broken file raises
:class:`ConfigError` naming the file, the key and what was expected; it is
never rewritten. A missing file is written with :data:`DEFAULTS`, atomically
and never over an existing one.
"""
import getpass
import json
import os
import tempfile

from .common import DATA_FORMATS, FLOATX_VALUES
from .engines import BUILTIN_BACKEND_NAMES, canonical_backend

DEFAULTS = {
    'backend': 'tensorflow',
    'floatx': 'float32',
    'epsilon': 1e-7,
    'image_data_format': 'channels_last',
}

class ConfigError(ValueError):
    """keras.json (or KERAS_BACKEND) holds something that cannot be used."""


def config_dir():
    """Return the folder that holds keras.json.

    ``$KERAS_HOME`` when set; else ``~/.keras`` when it exists or the home
    folder is writable; else ``<tempdir>/keras-<user>``.
    """
    env = os.environ.get('KERAS_HOME')
    if env:
        return os.path.abspath(os.path.expanduser(env))
    home = os.path.expanduser('~')
    keras_dir = os.path.join(home, '.keras')
    if os.path.isdir(keras_dir) or (home != '~' and os.access(home, os.W_OK)):
        return keras_dir
    try:
        user = getpass.getuser()
    except Exception:  # no user name in some containers
        user = str(os.getuid()) if hasattr(os, 'getuid') else 'user'
    return os.path.join(tempfile.gettempdir(), 'keras-%s' % user)


def config_path():
    """Return the path of keras.json in :func:`config_dir`."""
    return os.path.join(config_dir(), 'keras.json')


def _expect(path, key, expected, value):
    return ConfigError('%s: key %r must be %s, got %r' % (path, key, expected, value))


def validate_config(config, path):
    """Check the known keys of a parsed keras.json; unknown keys are kept as they are.

    Raises:
        ConfigError: naming ``path``, the key and what was expected.
    """
    if not isinstance(config, dict):
        raise ConfigError('%s: expected a JSON object such as %s, got %s'
                          % (path, json.dumps(DEFAULTS), type(config).__name__))
    if 'backend' in config:
        value = config['backend']
        if not isinstance(value, str) or not value.strip():
            raise _expect(path, 'backend', 'a non-empty string (%s or a module path)'
                          % ', '.join(repr(n) for n in BUILTIN_BACKEND_NAMES), value)
    if 'floatx' in config and config['floatx'] not in FLOATX_VALUES:
        raise _expect(path, 'floatx', 'one of %s' % ', '.join(
            repr(v) for v in FLOATX_VALUES), config['floatx'])
    if 'epsilon' in config:
        value = config['epsilon']
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise _expect(path, 'epsilon', 'a positive number', value)
    if 'image_data_format' in config and config['image_data_format'] not in DATA_FORMATS:
        raise _expect(path, 'image_data_format', 'one of %s' % ', '.join(
            repr(v) for v in DATA_FORMATS), config['image_data_format'])
    return config


def read_config(path):
    """Parse and validate keras.json at ``path``; None when it does not exist.

    Raises:
        ConfigError: when the file is not valid JSON or holds a bad value.
    """
    try:
        with open(path, 'r') as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ConfigError('%s: cannot be read (%s)' % (path, e)) from None
    try:
        config = json.loads(text)
    except ValueError as e:
        raise ConfigError('%s: not valid JSON (%s); fix it or delete it to get the defaults %s'
                          % (path, e, json.dumps(DEFAULTS))) from None
    return validate_config(config, path)


def write_default_config(path):
    """Write the default keras.json at ``path`` unless a file is already there.

    The content goes to a temporary file in the same folder that is then
    hard-linked into place, so a reader never sees a partial file and a file
    written meanwhile by another process is never overwritten. Returns True
    when this call created the file; failures (read-only folder) return False.
    """
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix='.keras.json.', dir=folder)
    except OSError:
        return False
    try:
        with os.fdopen(fd, 'w') as f:
            json.dump(DEFAULTS, f, indent=4)
            f.write('\n')
        try:
            os.link(tmp, path)
            return True
        except FileExistsError:
            return False
        except OSError:
            # No hard links on this file system: exclusive create instead.
            try:
                out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except OSError:
                return False
            with os.fdopen(out, 'w') as f:
                json.dump(DEFAULTS, f, indent=4)
                f.write('\n')
            return True
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def resolve_settings(write_default=False):
    """Return ``(settings, sources, path, existed)`` without importing an engine.

    ``sources[key]`` is 'file', 'env' or 'default'. With ``write_default``, a
    missing keras.json is created with the defaults.

    Raises:
        ConfigError: for a broken keras.json.
    """
    path = config_path()
    config = read_config(path)
    existed = config is not None
    if config is None:
        config = {}
        if write_default:
            write_default_config(path)
    settings, sources = {}, {}
    for key, default in DEFAULTS.items():
        if key in config:
            settings[key], sources[key] = config[key], 'file'
        else:
            settings[key], sources[key] = default, 'default'
    env = os.environ.get('KERAS_BACKEND', '').strip()
    if env:
        settings['backend'], sources['backend'] = env, 'env'
    settings['epsilon'] = float(settings['epsilon'])
    settings['backend'] = canonical_backend(settings['backend'])
    return settings, sources, path, existed


#: the engine names, and the import paths of our own adapters that mean them
