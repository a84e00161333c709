"""The shared Keras state: configuration, uids, learning phase, name scopes.

This module holds the process-wide Keras settings (``epsilon``, ``floatx``,
``image_data_format``), the uid counters, the learning phase fixed by the
user, the manual-initialisation flag and the name-scope stack of engines
without scopes. Each adapter re-exports its public names with
``from .common import *``; the ``_``-names are the state the adapters read.

Beside it, each for one job: :mod:`keras_backend.config_file` (keras.json),
:mod:`keras_backend.engines` (engine names, install advice),
:mod:`keras_backend.shape_rules` (argument normalisation, shape arithmetic),
:mod:`keras_backend.ctc_search` (CTC beam search), :mod:`keras_backend.api`
(the API's names, order, docs and Keras 1 aliases).

Everything here must stay importable on CPython 3.6 (CNTK 2.7) and must not
import an engine.
"""
import contextlib

import sys

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

#: The module holding the configuration values (``_FLOATX``, ``_EPSILON``,
#: ``_IMAGE_DATA_FORMAT``): this one, or Keras 2's ``keras.backend.common`` once
#: Keras has loaded us as its backend (:func:`share_state_with`).
_STATE = sys.modules[__name__]


def share_state_with(module):
    """Read and write the configuration values in ``module`` from now on.

    Keras 2.3.1 keeps floatx, epsilon and the image data format in its own
    ``keras.backend.common`` (its ``K.set_floatx`` sets them there); when it
    loads one of our adapters as its external backend, the adapter must see
    the same values, so :mod:`keras_backend` calls this with that module. The
    values ``module`` already holds are kept (Keras read the same keras.json).
    """
    global _STATE
    for name in ('_FLOATX', '_EPSILON', '_IMAGE_DATA_FORMAT'):
        if not hasattr(module, name):
            raise ValueError('share_state_with: %r has no %s' % (module, name))
    _STATE = module

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
    return _STATE._EPSILON


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
    if isinstance(e, bool) or not isinstance(e, (int, float, np.floating, np.integer)):
        raise ValueError('epsilon: expected a positive float, got %r' % (e,))
    e = float(e)
    if not np.isfinite(e) or e <= 0:
        raise ValueError('epsilon: expected a finite positive float, got %r' % (e,))
    _STATE._EPSILON = e


def floatx():
    """Return the default float type as a string.

    Returns:
        str: one of ``'float16'``, ``'float32'`` (the default), ``'float64'``.

    Example:
        >>> K.floatx()
        'float32'
    """
    return _STATE._FLOATX


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
    if floatx not in FLOATX_VALUES:
        raise ValueError('floatx: unknown value %r; expected one of %s'
                         % (floatx, ', '.join(repr(v) for v in FLOATX_VALUES)))
    _STATE._FLOATX = str(floatx)


def cast_to_floatx(x):
    """Cast a numpy array (or anything ``np.asarray`` takes) to ``floatx()``.

    Args:
        x: numpy array, list or scalar.

    Returns:
        numpy array of the same shape with dtype ``floatx()``.

    Raises:
        TypeError: ``x`` is not something numpy makes an array of (an engine's tensor:
            ``K.cast`` casts those); ValueError: a ragged list (as numpy says).

    Example:
        >>> K.cast_to_floatx([1, 2]).dtype
        dtype('float32')
    """
    try:
        return np.asarray(x, dtype=_STATE._FLOATX)
    except (TypeError, ValueError) as e:
        raise type(e)("cast_to_floatx: argument 'x' must be a number, a list or a numpy "
                      "array (K.cast casts a tensor); got %s (%s)" % (type(x).__name__, e))


def image_data_format():
    """Return the default image data format.

    Returns:
        str: ``'channels_last'`` (the default) or ``'channels_first'``.

    Example:
        >>> K.image_data_format()
        'channels_last'
    """
    return _STATE._IMAGE_DATA_FORMAT


def set_image_data_format(data_format):
    """Set the default image data format.

    Args:
        data_format: ``'channels_first'`` or ``'channels_last'``.

    Raises:
        ValueError: for any other value; the message lists the allowed ones.

    Example:
        >>> K.set_image_data_format('channels_first')
    """
    if data_format not in DATA_FORMATS:
        raise ValueError('data_format: unknown value %r; expected one of %s'
                         % (data_format, ', '.join(repr(v) for v in DATA_FORMATS)))
    _STATE._IMAGE_DATA_FORMAT = str(data_format)


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
        return _STATE._IMAGE_DATA_FORMAT
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
    return 'th' if _STATE._IMAGE_DATA_FORMAT == 'channels_first' else 'tf'


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


_AUTO_NAMES = {}   # the default name of a variable (with its scopes) -> how many were made


def _unique_name(base):
    """``base`` the first time, then ``base_1``, ``base_2``, ...: the name of a variable
    made without one, unique in the process as TensorFlow 1 made it in its graph (Keras 2.0-2.2
    save an optimizer's unnamed slots by these names; ``clear_session`` starts again)."""
    count = _AUTO_NAMES.get(base, 0)
    _AUTO_NAMES[base] = count + 1
    return base if count == 0 else '%s_%d' % (base, count)


def _variable_name(name, separator='/'):
    """The name of a new variable on an engine that follows TensorFlow's conventions and has no
    name scopes of its own (JAX): ``name`` under the open scopes (:func:`_scoped_name`); without
    ``name``, a unique ``'<scopes>/variable'`` (:func:`_unique_name`):
    ``'training/Adam/variable'``, then ``'training/Adam/variable_1'``. (Keras' own Theano and
    CNTK backends named every such variable ``'<scopes>/variable'``, and Keras' saving code
    numbers them on those engines: their adapters keep that name.)

    Example:
        >>> _reset_session_state(); _variable_name(None), _variable_name(None)
        ('variable', 'variable_1')
    """
    if name:
        return _scoped_name(name, 'variable', separator)
    return _unique_name(_scoped_name(None, 'variable', separator) or 'variable')


def _check_learning_phase(value, name):
    if isinstance(value, str) or value not in (0, 1):
        raise ValueError('%s: expected 0 (test) or 1 (train), got %r' % (name, value))
    return int(value)


def _fixed_learning_phase():
    """The int fixed by ``set_learning_phase``/``learning_phase_scope``, or None."""
    return _FIXED_LEARNING_PHASE


def _learning_phase_or(symbolic):
    """The learning phase fixed by the user, else ``symbolic()`` (the adapter's input)."""
    fixed = _fixed_learning_phase()
    return symbolic() if fixed is None else fixed


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


def _reset_learning_phase():
    """Forget a learning phase fixed by ``set_learning_phase``."""
    global _FIXED_LEARNING_PHASE
    _FIXED_LEARNING_PHASE = None


def _reset_session_state():
    """The engine-neutral part of ``clear_session``: uids, the automatic variable names and the
    fixed learning phase."""
    reset_uids()
    _AUTO_NAMES.clear()
    _reset_learning_phase()
