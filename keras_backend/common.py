"""Shared configuration state and engine-neutral logic for every adapter.

This module holds the process-wide Keras settings (``epsilon``, ``floatx``,
``image_data_format``) and the pieces of backend logic that do not depend on
any engine: argument normalisation, padding and output-shape arithmetic,
``data_format`` permutations, ``batch_dot`` axes rules and the legacy
(Keras 1) aliases.  Each adapter (``tensorflow_backend``, ``theano_backend``,
``cntk_backend``) imports the public names from here with
``from .common import *`` and calls the helpers (names starting with ``_`` are
not re-exported but are shared) instead of re-writing them.

Everything here must stay importable on CPython 3.6 (CNTK 2.7) and must not
import an engine.
"""
import contextlib
import getpass
import json
import os
import sys
import tempfile
import warnings

import numpy as np

__all__ = [
    'epsilon', 'set_epsilon', 'floatx', 'set_floatx', 'cast_to_floatx',
    'image_data_format', 'set_image_data_format', 'normalize_data_format',
    'image_dim_ordering', 'set_image_dim_ordering', 'get_uid', 'reset_uids',
    'set_learning_phase', 'learning_phase_scope', 'manual_variable_initialization',
]

_FLOATX = 'float32'
_EPSILON = 1e-7
_IMAGE_DATA_FORMAT = 'channels_last'

FLOATX_VALUES = ('float16', 'float32', 'float64')
DATA_FORMATS = ('channels_first', 'channels_last')
DIM_ORDERINGS = {'th': 'channels_first', 'tf': 'channels_last'}


# ---------------------------------------------------------------------------
# Configuration state
# ---------------------------------------------------------------------------

def epsilon():
    """Return the fuzz factor used to avoid division by zero.

    Returns:
        float, 1e-7 unless changed with ``set_epsilon`` or keras.json.

    Example:
        >>> K.epsilon()
        1e-07
    """
    return _EPSILON


def set_epsilon(e):
    """Set the fuzz factor returned by ``epsilon()``.

    Args:
        e: a positive real number (int or float, not bool).

    Raises:
        ValueError: if ``e`` is not a finite positive number.

    Example:
        >>> K.set_epsilon(1e-5); K.epsilon()
        1e-05
    """
    global _EPSILON
    if isinstance(e, bool) or not isinstance(e, (int, float, np.floating, np.integer)):
        raise ValueError('epsilon: expected a positive float, got %r' % (e,))
    e = float(e)
    if not np.isfinite(e) or e <= 0:
        raise ValueError('epsilon: expected a finite positive float, got %r' % (e,))
    _EPSILON = e


def floatx():
    """Return the default float type as a string.

    Returns:
        str: one of ``'float16'``, ``'float32'`` (the default), ``'float64'``.

    Example:
        >>> K.floatx()
        'float32'
    """
    return _FLOATX


def set_floatx(floatx):
    """Set the default float type.

    Args:
        floatx: ``'float16'``, ``'float32'`` or ``'float64'``.

    Raises:
        ValueError: for any other value; the message lists the allowed ones.

    Example:
        >>> K.set_floatx('float64'); K.floatx()
        'float64'
    """
    global _FLOATX
    if floatx not in FLOATX_VALUES:
        raise ValueError('floatx: unknown value %r; expected one of %s'
                         % (floatx, ', '.join(repr(v) for v in FLOATX_VALUES)))
    _FLOATX = str(floatx)


def cast_to_floatx(x):
    """Cast a numpy array (or anything ``np.asarray`` takes) to ``floatx()``.

    Args:
        x: numpy array, list or scalar.

    Returns:
        numpy array of the same shape with dtype ``floatx()``.

    Example:
        >>> K.cast_to_floatx([1, 2]).dtype
        dtype('float32')
    """
    return np.asarray(x, dtype=_FLOATX)


def image_data_format():
    """Return the default image data format.

    Returns:
        str: ``'channels_last'`` (the default) or ``'channels_first'``.

    Example:
        >>> K.image_data_format()
        'channels_last'
    """
    return _IMAGE_DATA_FORMAT


def set_image_data_format(data_format):
    """Set the default image data format.

    Args:
        data_format: ``'channels_first'`` or ``'channels_last'``.

    Raises:
        ValueError: for any other value; the message lists the allowed ones.

    Example:
        >>> K.set_image_data_format('channels_first')
    """
    global _IMAGE_DATA_FORMAT
    if data_format not in DATA_FORMATS:
        raise ValueError('data_format: unknown value %r; expected one of %s'
                         % (data_format, ', '.join(repr(v) for v in DATA_FORMATS)))
    _IMAGE_DATA_FORMAT = str(data_format)


def normalize_data_format(value):
    """Return a valid data format, ``image_data_format()`` when ``value`` is None.

    Args:
        value: None, ``'channels_first'`` or ``'channels_last'`` (any case).

    Returns:
        str: ``'channels_first'`` or ``'channels_last'``.

    Raises:
        ValueError: for any other value.

    Example:
        >>> K.normalize_data_format(None)
        'channels_last'
    """
    if value is None:
        return _IMAGE_DATA_FORMAT
    fmt = value.lower() if isinstance(value, str) else value
    if fmt not in DATA_FORMATS:
        raise ValueError('data_format: unknown value %r; expected one of %s'
                         % (value, ', '.join(repr(v) for v in DATA_FORMATS)))
    return fmt


def image_dim_ordering():
    """Legacy (Keras 1) image ordering: ``'th'`` or ``'tf'``.

    Returns:
        str: ``'th'`` when ``image_data_format()`` is ``'channels_first'``,
        else ``'tf'``.

    Example:
        >>> K.image_dim_ordering()
        'tf'
    """
    return 'th' if _IMAGE_DATA_FORMAT == 'channels_first' else 'tf'


def set_image_dim_ordering(dim_ordering):
    """Legacy (Keras 1) setter: ``'th'`` (channels_first) or ``'tf'`` (channels_last).

    Raises:
        ValueError: for any other value.

    Example:
        >>> K.set_image_dim_ordering('th'); K.image_data_format()
        'channels_first'
    """
    if dim_ordering not in DIM_ORDERINGS:
        raise ValueError("dim_ordering: unknown value %r; expected 'th' or 'tf'"
                         % (dim_ordering,))
    set_image_data_format(DIM_ORDERINGS[dim_ordering])


_UIDS = {}


def get_uid(prefix=''):
    """Return a per-prefix counter: 1 for the first call with ``prefix``, then 2...

    Args:
        prefix: str.

    Returns:
        int.

    Example:
        >>> K.get_uid('dense'), K.get_uid('dense')
        (1, 2)
    """
    _UIDS[prefix] = _UIDS.get(prefix, 0) + 1
    return _UIDS[prefix]


def reset_uids():
    """Reset every ``get_uid`` counter.

    Example:
        >>> K.reset_uids(); K.get_uid('dense')
        1
    """
    _UIDS.clear()


# ---------------------------------------------------------------------------
# Learning phase fixed by the user, and the manual-initialisation flag
# ---------------------------------------------------------------------------

_FIXED_LEARNING_PHASE = None     # None: each adapter's symbolic learning phase
_MANUAL_VARIABLE_INITIALIZATION = False


_NAME_SCOPES = []   # open K.name_scope names, outermost first (engines without scopes)


@contextlib.contextmanager
def _name_scope_stack(name):
    """Push ``name`` on the name-scope stack for the block (adapters' ``name_scope``).

    Raises:
        ValueError: when ``name`` is not a string.
    """
    if not isinstance(name, str):
        raise ValueError('name_scope: name must be a string, got %r' % (name,))
    _NAME_SCOPES.append(name)
    try:
        yield name
    finally:
        _NAME_SCOPES.pop()


def _scoped_name(name, default, separator='/'):
    """``name`` under the open name scopes, joined by ``separator``, then ``/``.

    Outside any scope ``name`` is returned as it is; inside, a missing name
    (None or '') becomes ``default``: ``_scoped_name(None, 'variable')`` in
    scopes 'a', 'b' gives ``'a/b/variable'``.
    """
    if not _NAME_SCOPES:
        return name
    return separator.join(_NAME_SCOPES) + '/' + (name or default)


def _check_learning_phase(value, name):
    if isinstance(value, str) or value not in (0, 1):
        raise ValueError('%s: expected 0 (test) or 1 (train), got %r' % (name, value))
    return int(value)


def _fixed_learning_phase():
    """The int fixed by ``set_learning_phase``/``learning_phase_scope``, or None."""
    return _FIXED_LEARNING_PHASE


def set_learning_phase(value):
    """Fix the learning phase: ``learning_phase()`` returns this Python int.

    Args:
        value: 0 (test) or 1 (train); True/False are taken as 1/0.

    Raises:
        ValueError: for any other value (nothing is changed then).

    Example:
        >>> K.set_learning_phase(1); K.learning_phase()
        1
    """
    global _FIXED_LEARNING_PHASE
    _FIXED_LEARNING_PHASE = _check_learning_phase(value, 'set_learning_phase')


@contextlib.contextmanager
def learning_phase_scope(value):
    """Context manager fixing the learning phase to ``value`` inside its block.

    Args:
        value: 0 (test) or 1 (train).

    Yields:
        the int value; the previous setting (fixed or symbolic) returns on exit.

    Raises:
        ValueError: unless ``value`` is 0 or 1.

    Example:
        >>> with K.learning_phase_scope(1):
        ...     y = K.in_train_phase(a, b)   # a
    """
    global _FIXED_LEARNING_PHASE
    value = _check_learning_phase(value, 'learning_phase_scope')
    saved = _FIXED_LEARNING_PHASE
    _FIXED_LEARNING_PHASE = value
    try:
        yield value
    finally:
        _FIXED_LEARNING_PHASE = saved


def manual_variable_initialization(value):
    """Store Keras' manual-initialisation flag.

    The engines here initialise every variable when it is created, so the flag
    changes nothing else; it is kept so Keras code that sets it still runs.

    Args:
        value: bool.

    Example:
        >>> K.manual_variable_initialization(False)
    """
    global _MANUAL_VARIABLE_INITIALIZATION
    _MANUAL_VARIABLE_INITIALIZATION = bool(value)


def _reset_session_state():
    """The engine-neutral part of ``clear_session``: uids and the fixed learning phase."""
    global _FIXED_LEARNING_PHASE
    reset_uids()
    _FIXED_LEARNING_PHASE = None


# ---------------------------------------------------------------------------
# The API contract
# ---------------------------------------------------------------------------

#: Every public name of ../shared/API.md (rows 1-163). ``pattern_broadcast``
#: (Theano's word) and ``get_session``/``set_session`` (TensorFlow's) are part
#: of it and every adapter offers them.
API_NAMES = (
    'epsilon', 'set_epsilon', 'floatx', 'set_floatx', 'cast_to_floatx',
    'image_data_format', 'set_image_data_format', 'reset_uids', 'get_uid',
    'learning_phase', 'set_learning_phase', 'is_sparse', 'to_dense', 'variable',
    'is_variable', 'constant', 'is_keras_tensor', 'is_tensor', 'placeholder',
    'is_placeholder', 'shape', 'int_shape', 'ndim', 'dtype', 'eval', 'zeros',
    'ones', 'eye', 'zeros_like', 'ones_like', 'identity',
    'random_uniform_variable', 'random_normal_variable', 'count_params', 'cast',
    'update', 'update_add', 'update_sub', 'moving_average_update', 'dot',
    'batch_dot', 'transpose', 'gather', 'max', 'min', 'sum', 'prod', 'cumsum',
    'cumprod', 'var', 'std', 'mean', 'any', 'all', 'argmax', 'argmin', 'square',
    'abs', 'sqrt', 'exp', 'log', 'logsumexp', 'round', 'sign', 'pow', 'clip',
    'equal', 'not_equal', 'greater', 'greater_equal', 'less', 'less_equal',
    'maximum', 'minimum', 'sin', 'cos', 'normalize_batch_in_training',
    'batch_normalization', 'concatenate', 'reshape', 'permute_dimensions',
    'resize_images', 'resize_volumes', 'repeat_elements', 'repeat', 'arange',
    'tile', 'flatten', 'batch_flatten', 'expand_dims', 'squeeze',
    'temporal_padding', 'spatial_2d_padding', 'spatial_3d_padding', 'stack',
    'one_hot', 'reverse', 'slice', 'get_value', 'batch_get_value', 'set_value',
    'batch_set_value', 'print_tensor', 'function', 'gradients', 'stop_gradient',
    'rnn', 'switch', 'in_train_phase', 'in_test_phase', 'relu', 'elu', 'softmax',
    'softplus', 'softsign', 'categorical_crossentropy',
    'sparse_categorical_crossentropy', 'binary_crossentropy', 'sigmoid',
    'hard_sigmoid', 'tanh', 'dropout', 'l2_normalize', 'in_top_k', 'conv1d',
    'separable_conv1d', 'conv2d', 'separable_conv2d', 'conv2d_transpose',
    'depthwise_conv2d', 'conv3d', 'conv3d_transpose', 'pool2d', 'pool3d',
    'bias_add', 'random_normal', 'random_uniform', 'random_binomial',
    'truncated_normal', 'ctc_label_dense_to_sparse', 'ctc_batch_cost',
    'ctc_decode', 'map_fn', 'foldl', 'foldr', 'local_conv1d', 'local_conv2d',
    'backend', 'normalize_data_format', 'name_scope', 'symbolic', 'eager', 'size',
    'control_dependencies', 'pattern_broadcast', 'get_session', 'set_session',
    'clear_session', 'manual_variable_initialization', 'get_variable_shape',
    'image_dim_ordering', 'set_image_dim_ordering', 'learning_phase_scope',
)

#: Keras 1 names (seed 000) kept for old code; each warns DeprecationWarning.
LEGACY_NAMES = ('lesser', 'lesser_equal', 'deconv2d', 'asymmetric_temporal_padding')


def missing_api_names(module):
    """Return the sorted API names that ``module`` lacks (empty list when complete)."""
    return sorted(n for n in API_NAMES if not callable(getattr(module, n, None)))


def engine_install_advice(engine):
    """The command that installs ``engine`` for the running interpreter, as a sentence.

    ``engine`` is 'tensorflow', 'theano' or 'cntk'. The advice names this
    interpreter (``sys.executable`` and its version) and gives a command that
    works on it, or says which interpreter the engine needs instead.

    Example:
        >>> engine_install_advice('cntk')   # on Python 3.11   # doctest: +SKIP
        'CNTK 2.7 has wheels only for CPython 3.5 and 3.6; this is Python 3.11 ...'
    """
    exe = sys.executable or 'python'
    here = 'Python %d.%d (%s)' % (sys.version_info[0], sys.version_info[1], exe)
    py = sys.version_info[:2]
    pip = '%s -m pip install "keras_backend[%%s]"' % exe
    if engine == 'tensorflow':
        if (3, 9) <= py:
            return 'Install it for %s with: %s' % (here, pip % 'tensorflow-cpu')
        return ('TensorFlow 2 has no wheels for %s; use a Python 3.9+ interpreter '
                '(TensorFlow\'s own range) and install it there with: python3 -m pip '
                'install "keras_backend[tensorflow-cpu]"' % here)
    if engine == 'theano':
        if py >= (3, 10):
            return 'Install PyTensor (Theano\'s successor) for %s with: %s' % (here, pip % 'theano')
        if py < (3, 8):
            return 'Install Theano 1.0.5 for %s with: %s' % (here, pip % 'theano')
        return ('neither PyTensor (Python 3.10+) nor Theano 1.0.5 (Python < 3.8) installs on '
                '%s; use an interpreter in one of those ranges' % here)
    if engine == 'cntk':
        if py in ((3, 5), (3, 6)):
            return ('Install it for %s with: %s (CNTK also needs OpenMPI; '
                    'tools/setup_cntk_env.sh does both)' % (here, pip % 'cntk'))
        return ('CNTK 2.7 has wheels only for CPython 3.5 and 3.6; this is %s. Build its '
                'environment with: tools/setup_cntk_env.sh .venv36   (from a CPython 3.6, '
                'e.g. pyenv\'s), then run your program with .venv36/bin/python' % here)
    return ''


def engine_import_error(engine, package, extra, error, hint=''):
    """Build the ImportError an adapter raises when its engine cannot be imported.

    The message names the engine, the package, the underlying import error
    and :func:`engine_install_advice` for the running interpreter (``extra``
    is the pip extra that installs it; ``hint`` an optional engine note), e.g.
    ``engine_import_error('TensorFlow', 'tensorflow', 'tensorflow-cpu', err)``.
    """
    key = {'TensorFlow': 'tensorflow', 'Theano': 'theano', 'CNTK': 'cntk'}.get(engine, engine)
    advice = engine_install_advice(key) or ('Install it with: pip install "keras_backend[%s]"'
                                            % extra)
    msg = ('The %s backend needs the %r package, which could not be imported (%s: %s). %s'
           % (engine, package, type(error).__name__, error, advice))
    if hint:
        msg += '. ' + hint
    return ImportError(msg)


# ---------------------------------------------------------------------------
# keras.json: where it lives, reading, validating, writing the default
# ---------------------------------------------------------------------------

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
            raise _expect(path, 'backend', "a non-empty string ('tensorflow', 'theano', "
                          "'cntk' or a module path)", value)
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
BUILTIN_BACKEND_NAMES = ('tensorflow', 'theano', 'cntk')


def canonical_backend(name):
    """Map the import path of one of our adapters to its engine name.

    ``KERAS_BACKEND=keras_backend.cntk_backend`` (the form Keras 2.3.1 takes
    for an external backend) means ``cntk`` to our own loader too; any other
    name is returned as it is.

    Example:
        >>> canonical_backend('keras_backend.theano_backend'), canonical_backend('theano')
        ('theano', 'theano')
    """
    for engine in BUILTIN_BACKEND_NAMES:
        if name == 'keras_backend.%s_backend' % engine:
            return engine
    return name


# ---------------------------------------------------------------------------
# Argument normalisation shared by every adapter
# ---------------------------------------------------------------------------

def _normalize_tuple(value, n, name):
    """Turn an int or an iterable of ``n`` ints into a tuple of ``n`` ints.

    Raises:
        ValueError: naming ``name`` when ``value`` is not an int or ``n`` ints.
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    try:
        values = tuple(value)
    except TypeError:
        raise ValueError('%s: expected an int or a tuple of %d ints, got %r' % (name, n, value))
    if len(values) != n or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        raise ValueError('%s: expected an int or a tuple of %d ints, got %r' % (name, n, value))
    return tuple(int(v) for v in values)


def _normalize_padding(padding, allow_causal=False):
    """Validate a conv/pool ``padding`` string; returns it lower-cased.

    Raises:
        ValueError: unless ``padding`` is 'valid', 'same' (or 'causal' when allowed).
    """
    allowed = ('valid', 'same', 'causal') if allow_causal else ('valid', 'same')
    p = padding.lower() if isinstance(padding, str) else padding
    if p not in allowed:
        raise ValueError('padding: unknown value %r; expected one of %s'
                         % (padding, ', '.join(repr(a) for a in allowed)))
    return p


def _normalize_pool_mode(pool_mode):
    """Validate ``pool_mode``: 'max' or 'avg'."""
    if pool_mode not in ('max', 'avg'):
        raise ValueError("pool_mode: unknown value %r; expected 'max' or 'avg'" % (pool_mode,))
    return pool_mode


def _normalize_interpolation(interpolation):
    """Validate ``interpolation``: 'nearest' or 'bilinear'."""
    if interpolation not in ('nearest', 'bilinear'):
        raise ValueError("interpolation: unknown value %r; expected 'nearest' or 'bilinear'"
                         % (interpolation,))
    return interpolation


def _normalize_axis(axis, ndim, name='axis'):
    """Turn a (possibly negative) axis into a non-negative one.

    Raises:
        ValueError: when ``axis`` is out of range for ``ndim`` dimensions.
    """
    if ndim is None:
        return axis
    if not -ndim <= axis < ndim:
        raise ValueError('%s: %r is out of range for a tensor of %d dimensions'
                         % (name, axis, ndim))
    return axis % ndim


def _normalize_axes(axis, ndim):
    """Reduction axes: None -> all axes; int or list -> sorted tuple of non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = [axis]
    return tuple(sorted(set(_normalize_axis(int(a), ndim) for a in axis)))


def _normalize_spatial_padding(padding, n, name='padding'):
    """Normalise spatial padding to ``n`` (before, after) pairs of non-negative ints.

    Accepts an int (same on every side), ``n`` ints (symmetric per axis) or
    ``n`` pairs.
    """
    if isinstance(padding, (int, np.integer)) and not isinstance(padding, bool):
        pairs = [(int(padding), int(padding))] * n
    else:
        try:
            items = list(padding)
        except TypeError:
            raise ValueError('%s: expected an int, %d ints or %d pairs of ints, got %r'
                             % (name, n, n, padding))
        if len(items) != n:
            raise ValueError('%s: expected %d entries (one per spatial axis), got %r'
                             % (name, n, padding))
        pairs = []
        for item in items:
            if isinstance(item, (int, np.integer)):
                pairs.append((int(item), int(item)))
            else:
                pairs.append(_normalize_tuple(item, 2, name))
    for a, b in pairs:
        if a < 0 or b < 0:
            raise ValueError('%s: expected non-negative amounts, got %r' % (name, padding))
    return tuple(pairs)


# ---------------------------------------------------------------------------
# Shape arithmetic (conv, pool, transposed conv)
# ---------------------------------------------------------------------------

def _conv_output_length(length, kernel, padding, stride, dilation=1):
    """Output length of a conv/pool along one axis (None stays None).

    ``padding`` 'same'/'causal': ceil(length / stride);
    'valid': ceil((length - dilated_kernel + 1) / stride).
    """
    if length is None:
        return None
    dk = (kernel - 1) * dilation + 1
    if padding in ('same', 'causal'):
        out = length
    else:
        out = length - dk + 1
    return max(0, (out + stride - 1) // stride)


def _same_padding(length, kernel, stride, dilation=1):
    """(before, after) zero padding of TensorFlow's 'same' rule along one axis.

    Total = max((ceil(length/stride) - 1) * stride + dilated_kernel - length, 0);
    the extra cell, when odd, goes after.
    """
    dk = (kernel - 1) * dilation + 1
    out = (length + stride - 1) // stride
    total = max((out - 1) * stride + dk - length, 0)
    return total // 2, total - total // 2


def _padding_amounts(length, kernel, stride, dilation, padding):
    """(before, after) padding for 'valid', 'same' or 'causal' along one axis."""
    if padding == 'valid':
        return 0, 0
    if padding == 'causal':
        return (kernel - 1) * dilation, 0
    return _same_padding(length, kernel, stride, dilation)


def _deconv_crop(out_length, in_length, kernel, stride, padding, dilation=1):
    """For a transposed conv built as the gradient of a conv: (before, after)
    padding of the forward conv whose input length is ``out_length`` and
    whose output length must be ``in_length``.

    Raises:
        ValueError: when ``out_length`` is not a valid output size.
    """
    if _conv_output_length(out_length, kernel, padding, stride, dilation) != in_length:
        raise ValueError('output_shape: a spatial size of %d is not compatible with input '
                         'size %d, kernel %d, stride %d and padding %r'
                         % (out_length, in_length, kernel, stride, padding))
    return _padding_amounts(out_length, kernel, stride, dilation, padding)


# ---------------------------------------------------------------------------
# data_format permutations
# ---------------------------------------------------------------------------

def _to_channels_last_perm(ndim):
    """Axis permutation taking a channels_first tensor to channels_last."""
    return (0,) + tuple(range(2, ndim)) + (1,)


def _to_channels_first_perm(ndim):
    """Axis permutation taking a channels_last tensor to channels_first."""
    return (0, ndim - 1) + tuple(range(1, ndim - 1))


def _check_ndim(x_ndim, expected, name, what):
    """Raise ValueError naming ``name`` unless ``x_ndim`` is in ``expected``."""
    if x_ndim is not None and x_ndim not in expected:
        raise ValueError('%s: expected a %s tensor of rank %s, got rank %d'
                         % (name, what, ' or '.join(str(e) for e in expected), x_ndim))


# ---------------------------------------------------------------------------
# batch_dot
# ---------------------------------------------------------------------------

def _batch_dot_axes(x_ndim, y_ndim, axes):
    """Normalise ``batch_dot`` axes to a pair of non-negative ints (Keras 2.3 rules).

    ``axes`` None: (x_ndim - 1, y_ndim - 2), or (x_ndim - 1, y_ndim - 1) for 2-D ``y``.
    An int ``a`` means (a, a). Axis 0 (the batch axis) cannot be reduced.

    Raises:
        ValueError: for rank < 2 inputs, bad ``axes`` or a batch-axis reduction.
    """
    if x_ndim < 2 or y_ndim < 2:
        raise ValueError('batch_dot: x and y must have rank >= 2, got ranks %d and %d'
                         % (x_ndim, y_ndim))
    if axes is None:
        axes = (x_ndim - 1, y_ndim - 1 if y_ndim == 2 else y_ndim - 2)
    elif isinstance(axes, (int, np.integer)):
        axes = (int(axes), int(axes))
    else:
        axes = _normalize_tuple(axes, 2, 'axes')
    ax = _normalize_axis(axes[0], x_ndim, 'axes')
    ay = _normalize_axis(axes[1], y_ndim, 'axes')
    if ax == 0 or ay == 0:
        raise ValueError('batch_dot: axes %r would reduce the batch axis 0' % (axes,))
    return ax, ay


def _batch_dot_output_shape(x_shape, y_shape, ax, ay):
    """Static output shape of ``batch_dot``; a rank-1 result becomes (batch, 1)."""
    out = (tuple(x_shape[:ax]) + tuple(x_shape[ax + 1:])
           + tuple(y_shape[1:ay]) + tuple(y_shape[ay + 1:]))
    if len(out) == 1:
        out = out + (1,)
    return out


# ---------------------------------------------------------------------------
# CTC prefix beam search: the body of the graph ops (a Theano/PyTensor ``Op``,
# a CNTK ``UserFunction``) that engines without a beam-search op add
# ---------------------------------------------------------------------------

def _ctc_prefix_beam_search(log_probs, lengths, beam_width, top_paths, merge_repeated):
    """CTC prefix beam search over a batch; blank is the last class.

    Args:
        log_probs: numpy (batch, T, C) log-probabilities (log-softmax applied).
        lengths: numpy (batch,) valid time steps per sample (clipped to [0, T]).
        beam_width: prefixes kept after each step.
        top_paths: labellings returned per sample.
        merge_repeated: merge repeated labels of each returned labelling.

    Returns:
        (paths, scores): ``paths[k][b]`` the k-th best labelling of sample b (a
        tuple of ints; empty when fewer exist), ``scores`` (batch, top_paths)
        float64 log probabilities of the labellings (-inf when missing).
    """
    batch, steps, n_classes = log_probs.shape
    blank = n_classes - 1
    paths = [[()] * batch for _ in range(top_paths)]
    scores = np.full((batch, top_paths), -np.inf)
    for b in range(batch):
        n = min(max(int(lengths[b]), 0), steps)
        beams = {(): (0.0, -np.inf)}  # prefix -> (log p ending in blank, in non-blank)
        for t in range(n):
            row = log_probs[b, t]
            nxt = {}

            def add(prefix, pb, pnb):
                ob, onb = nxt.get(prefix, (-np.inf, -np.inf))
                nxt[prefix] = (np.logaddexp(ob, pb), np.logaddexp(onb, pnb))

            for prefix, (pb, pnb) in beams.items():
                total = np.logaddexp(pb, pnb)
                add(prefix, total + row[blank], -np.inf)
                last = prefix[-1] if prefix else None
                for c in range(n_classes - 1):
                    if c == last:   # a repeat needs a blank in between to count twice
                        add(prefix, -np.inf, pnb + row[c])
                        add(prefix + (c,), -np.inf, pb + row[c])
                    else:
                        add(prefix + (c,), -np.inf, total + row[c])
            ranked = sorted(nxt.items(), key=lambda kv: -np.logaddexp(*kv[1]))
            beams = dict(ranked[:beam_width])
        ranked = sorted(beams.items(), key=lambda kv: -np.logaddexp(*kv[1]))
        for k, (seq, (pb, pnb)) in enumerate(ranked[:top_paths]):
            if merge_repeated:
                seq = tuple(c for i, c in enumerate(seq) if i == 0 or c != seq[i - 1])
            paths[k][b] = seq
            scores[b, k] = np.logaddexp(pb, pnb)
    return paths, scores


def _pad_labellings(labellings, dtype, min_width=0):
    """Stack labellings (tuples of ints) into a (len, max_len) array padded with -1."""
    width = max([len(s) for s in labellings] + [min_width])
    dense = np.full((len(labellings), width), -1, dtype=dtype)
    for i, s in enumerate(labellings):
        dense[i, :len(s)] = s
    return dense


# ---------------------------------------------------------------------------
# Legacy (Keras 1) aliases, built once on top of any adapter
# ---------------------------------------------------------------------------

def _deprecated(old, new):
    warnings.warn('%s is deprecated (Keras 1); use %s instead' % (old, new),
                  DeprecationWarning, stacklevel=3)


def legacy_aliases(module):
    """Return {name: function} of the Keras 1 aliases, calling ``module``'s API.

    Each alias warns ``DeprecationWarning`` and forwards:
    ``lesser`` -> ``less``, ``lesser_equal`` -> ``less_equal``,
    ``asymmetric_temporal_padding(x, left_pad=1, right_pad=1)`` ->
    ``temporal_padding(x, (left_pad, right_pad))`` and
    ``deconv2d(x, kernel, output_shape, strides, border_mode, dim_ordering)`` ->
    ``conv2d_transpose`` with ``border_mode`` as ``padding`` and
    ``dim_ordering`` ('th'/'tf'/'default') as ``data_format``.
    """
    def lesser(x, y):
        """Deprecated alias of ``less(x, y)``."""
        _deprecated('lesser', 'less')
        return module.less(x, y)

    def lesser_equal(x, y):
        """Deprecated alias of ``less_equal(x, y)``."""
        _deprecated('lesser_equal', 'less_equal')
        return module.less_equal(x, y)

    def asymmetric_temporal_padding(x, left_pad=1, right_pad=1):
        """Deprecated alias of ``temporal_padding(x, (left_pad, right_pad))``."""
        _deprecated('asymmetric_temporal_padding', 'temporal_padding')
        return module.temporal_padding(x, (left_pad, right_pad))

    def deconv2d(x, kernel, output_shape, strides=(1, 1), border_mode='valid',
                 dim_ordering='default', image_shape=None, filter_shape=None):
        """Deprecated Keras 1 form of ``conv2d_transpose``.

        ``border_mode`` is the padding ('valid'/'same'); ``dim_ordering`` 'th'
        means channels_first, 'tf' channels_last, 'default' the configured one.
        The kernel has the Keras 2 ``conv2d_transpose`` layout
        (rows, cols, output_channels, input_channels).
        """
        _deprecated('deconv2d', 'conv2d_transpose')
        if dim_ordering == 'default':
            data_format = None
        elif dim_ordering in DIM_ORDERINGS:
            data_format = DIM_ORDERINGS[dim_ordering]
        else:
            raise ValueError("dim_ordering: unknown value %r; expected 'th', 'tf' or 'default'"
                             % (dim_ordering,))
        return module.conv2d_transpose(x, kernel, output_shape, strides=strides,
                                       padding=border_mode, data_format=data_format)

    return {'lesser': lesser, 'lesser_equal': lesser_equal,
            'asymmetric_temporal_padding': asymmetric_temporal_padding,
            'deconv2d': deconv2d}
