"""Argument checks, written once, that every adapter runs before its engine sees a call.

:func:`keras_backend.api.install` wraps each public function of an adapter
with the checks that its name's ``SPECS`` entry declares (written beside its
docstring, in its section's module of :mod:`keras_backend.api`): the type and range
of each argument (ranks, axes, sizes, dtypes, paddings, data formats) and the
shape agreements that static shapes already decide (contraction sizes of
``dot``/``batch_dot``, ``concatenate``/``stack`` shapes, convolution input
channels against the kernel, bias size, ``reshape`` element counts, ...).

A bad argument raises :class:`ValueError` (a bad value or shape) or
:class:`TypeError` (a bad type or dtype), with the same message on every
engine::

    sum: argument 'axis' must be an int in [-2, 2) (the axes of 'x', a 2-D tensor); got 5

Only what can be decided before the engine runs is checked here; sizes known
at run time only are the engine's to check, and the adapters re-raise its
error as a ``ValueError`` naming the call (see ``docs/semantics.md``).
Checks accept every symbolic form the API allows (tensors inside shape
tuples, tensors for sizes): what is not static is left to the engine.
"""
import numbers
import sys

import numpy as np

from . import engines, shape_rules

DATA_FORMATS = ('channels_first', 'channels_last')
PADDINGS = ('valid', 'same')

_NO_SHAPE = object()


# ---------------------------------------------------------------------------
# What a value is, without asking the engine more than the API allows
# ---------------------------------------------------------------------------

def _is_int(v):
    """A Python or numpy integer, or a 0-d numpy integer array (Keras passes all three)."""
    return shape_rules.is_static_size(v)


def _is_number(v):
    """A Python or numpy number, or a 0-d numpy numeric array (Keras' layers store
    their ``alpha``/``theta`` as ``K.cast_to_floatx(alpha)``, a 0-d array)."""
    if type(v) in (float, int):
        return True
    if isinstance(v, np.ndarray):
        return v.ndim == 0 and v.dtype.kind in 'iuf'
    return isinstance(v, (numbers.Number, np.number)) and not isinstance(v, (bool, np.bool_))


class Call(object):
    """One checked call: the function name, the adapter, the bound arguments."""

    def __init__(self, K, fname, arguments):
        self.K = K
        self.fname = fname
        self.args = arguments
        self._shapes = {}
        self._tensors = {}

    def is_tensor(self, v):
        key = id(v)         # the arguments live as long as the call: ids are theirs
        known = self._tensors.get(key)
        if known is None:
            try:
                known = bool(self.K.is_tensor(v))
            except Exception:
                known = False
            self._tensors[key] = known
        return known

    def static_shape(self, v):
        """Tuple of ints/None, or None when the rank is unknown (or not array-like)."""
        key = id(v)
        if key not in self._shapes:
            self._shapes[key] = self._compute_shape(v)
        return self._shapes[key]

    def _compute_shape(self, v):
        if v is None or isinstance(v, (str, bytes)):
            return None
        if self.is_tensor(v):
            # the engine's own static shape where the adapter offers it: a
            # ``_keras_shape`` that Keras recorded is not what the engine checks
            shape_of = getattr(self.K, '_engine_int_shape', None) or self.K.int_shape
            try:
                shape = shape_of(v)
            except Exception:
                return None
            return None if shape is None else tuple(shape)
        if isinstance(v, np.ndarray) or _is_number(v) or isinstance(v, (bool, np.bool_)):
            return tuple(np.shape(v))
        if isinstance(v, (list, tuple)):
            if any(self.is_tensor(item) for item in _flatten(v)):
                return None
            try:
                return tuple(np.shape(np.asarray(v, dtype=np.float64)))
            except (TypeError, ValueError):
                return None
        return None

    def ndim(self, v):
        shape = self.static_shape(v)
        return None if shape is None else len(shape)

    def known_value(self, v):
        """``v``'s values as a numpy array where they are known before anything runs: a
        number, a list or numpy array, or a tensor whose engine already holds its value (a
        constant, an eager tensor: the adapter's ``_engine_known_value``); else None."""
        if isinstance(v, np.ndarray) or _is_number(v):
            return np.asarray(v)
        if self.is_tensor(v):
            known = getattr(self.K, '_engine_known_value', None)
            try:
                return None if known is None else known(v)
            except Exception:
                return None
        if isinstance(v, (list, tuple)):
            try:
                arr = np.asarray(v)
            except Exception:
                return None
            return arr if arr.dtype.kind in 'biuf' else None
        return None

    def fail(self, arg, expected, value, error=ValueError):
        raise error("%s: argument '%s' %s; got %s" % (self.fname, arg, expected,
                                                     self.describe(value)))

    def describe(self, value):
        if self.is_tensor(value):
            shape = self.static_shape(value)
            if shape is None:
                return 'a tensor of unknown rank'
            return 'a tensor of shape %s' % (shape,)
        if isinstance(value, np.ndarray):
            return 'a numpy array of shape %s, dtype %s' % (value.shape, value.dtype)
        text = repr(value)
        if len(text) > 60:
            text = text[:57] + '...'
        if value is None or isinstance(value, (bool, numbers.Number, str, list, tuple)):
            return text
        return '%s (%s)' % (text, type(value).__name__)


def _is_array_like(v):
    """True for an object numpy reads as a numeric array through its array interface (an
    h5py dataset, a pandas frame, ...): Keras' backends took these wherever numpy could."""
    if not (hasattr(v, '__array__') or hasattr(v, '__array_interface__')):
        return False
    try:
        return np.asarray(v).dtype.kind in 'biuf'
    except Exception:
        return False


def _flatten(v):
    if isinstance(v, (list, tuple)):
        for item in v:
            for sub in _flatten(item):
                yield sub
    else:
        yield v


# ---------------------------------------------------------------------------
# Argument checkers: each is check(call, arg_name, value)
# ---------------------------------------------------------------------------

def tensor(allow_none=False, allow_scipy_sparse=False):
    """A tensor, a variable, or a numeric value (number, list, numpy array); with
    ``allow_scipy_sparse`` also a scipy sparse matrix (``K.variable`` takes one)."""
    def check(call, arg, v):
        if v is None:
            if allow_none:
                return
            call.fail(arg, 'must be a tensor, a variable or a numeric array', v, TypeError)
        if call.is_tensor(v) or isinstance(v, np.ndarray) or _is_number(v) \
                or isinstance(v, (bool, np.bool_)):
            return
        if allow_scipy_sparse and hasattr(v, 'tocoo'):
            # asked after the tensors: ``hasattr`` on a CNTK Function runs its
            # ``__getattr__`` (an argument-spec lookup, 50 us)
            return
        if _is_array_like(v):
            return
        if isinstance(v, (list, tuple)):
            items = list(_flatten(v))
            for item in items:
                if item is None or isinstance(item, (str, bytes)) or not (
                        call.is_tensor(item) or _is_number(item)
                        or isinstance(item, (bool, np.bool_, np.ndarray))):
                    call.fail(arg, 'must be a tensor, a variable or a numeric array '
                                   '(a list holding only numbers and tensors)', v, TypeError)
            if not any(call.is_tensor(item) for item in items) and _ragged(v):
                call.fail(arg, 'must be a rectangular array (its nested lists of one length '
                               'at each level)', v)
            return
        call.fail(arg, 'must be a tensor, a variable or a numeric array', v, TypeError)
    return check


def _ragged(v):
    """True for nested lists (of numbers or arrays) that make no rectangular array
    ([[1, 2], [3]], [np.zeros(2), np.zeros(3)])."""
    import warnings
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('error')     # NumPy < 1.24 warns, then makes objects
            return np.asarray(v).dtype == object
    except (ValueError, Warning):
        return True


def evaluable():
    """Anything an adapter can evaluate (tensors, variables, updates, numbers, arrays)."""
    def check(call, arg, v):
        if v is None or isinstance(v, (str, bytes, dict, set, type)):
            call.fail(arg, 'must be a tensor, a variable or a numeric array', v, TypeError)
    return check


def phase():
    """A learning phase value: 0, 1, True or False."""
    def check(call, arg, v):
        if not (isinstance(v, (bool, np.bool_)) or _is_int(v)):
            call.fail(arg, 'must be 0 or 1 (or True/False)', v, TypeError)
        if v not in (0, 1):
            call.fail(arg, 'must be 0 or 1 (or True/False)', v)
    return check


def eye_size():
    def check(call, arg, v):
        sizes = [v] if _is_int(v) else v
        if not isinstance(sizes, (list, tuple)) or len(sizes) != (1 if _is_int(v) else 2) \
                or not all(_is_int(s) for s in sizes):
            call.fail(arg, 'must be an int or a pair of ints', v, TypeError)
        if any(s < 0 for s in sizes):
            call.fail(arg, 'must hold sizes >= 0', v)
    return check


def known_shape(call):
    shape = call.static_shape(call.args['x'])
    if shape is not None and any(d is None for d in shape):
        call.fail('x', 'must have a fully known static shape', call.args['x'])


def tensor_list(min_len=1):
    """A non-empty list or tuple of tensors."""
    each = tensor()

    def check(call, arg, v):
        if not isinstance(v, (list, tuple)):
            call.fail(arg, 'must be a list of tensors', v, TypeError)
        if len(v) < min_len:
            call.fail(arg, 'must hold at least %d tensor(s)' % min_len, v)
        for i, item in enumerate(v):
            each(call, '%s[%d]' % (arg, i), item)
    return check


def rank(*allowed, **kw):
    """A tensor (see :func:`tensor`) whose rank, when known, is one of ``allowed``
    (``min_rank=n`` for 'at least n')."""
    base = tensor()
    min_rank = kw.get('min_rank')

    def check(call, arg, v):
        base(call, arg, v)
        n = call.ndim(v)
        if n is None:
            return
        if allowed and n not in allowed:
            call.fail(arg, 'must be a %s tensor' % ' or '.join('%d-D' % a for a in allowed), v)
        if min_rank is not None and n < min_rank:
            call.fail(arg, 'must be a tensor of rank >= %d' % min_rank, v)
    return check


def _axis_problem(call, ref, extra):
    """The axis range text for the rank of argument ``ref``, or None when unknown."""
    n = call.ndim(call.args.get(ref)) if ref else None
    if n is None:
        return None
    lo, hi = -(n + extra), n + extra
    return lo, hi, "an int in [%d, %d) (the axes of '%s', a %d-D tensor)" % (lo, hi, ref, n)


def axis(ref='x', allow_none=False, extra=0):
    """An int axis of argument ``ref`` (``extra=1``: one past the end allowed, for
    ``expand_dims``/``stack``), or None when ``allow_none``."""
    def check(call, arg, v):
        if v is None and allow_none:
            return
        if call.is_tensor(v):
            return
        if not _is_int(v):
            call.fail(arg, 'must be an int%s' % (' or None' if allow_none else ''), v, TypeError)
        problem = _axis_problem(call, ref, extra)
        if problem and not problem[0] <= v < problem[1]:
            call.fail(arg, 'must be ' + problem[2], v)
    return check


def axes(ref='x', allow_none=True, unique=True):
    """None, an int or a list/tuple of ints: axes of argument ``ref``."""
    one = axis(ref)

    def check(call, arg, v):
        if v is None:
            if allow_none:
                return
            call.fail(arg, 'must be an int or a list of ints', v, TypeError)
        if isinstance(v, (list, tuple)):
            for item in v:
                if not _is_int(item):
                    call.fail(arg, 'must be an int or a list of ints', v, TypeError)
                one(call, arg, item)
            n = call.ndim(call.args.get(ref))
            if unique and n is not None and len(set(a % n for a in v)) != len(v):
                call.fail(arg, 'must not name an axis twice', v)
            return
        if not _is_int(v) and not call.is_tensor(v):
            call.fail(arg, 'must be an int or a list of ints', v, TypeError)
        one(call, arg, v)
    return check


def reduction_axes():
    """Axes of ``x`` (a list), or on Theano its batch-norm words 'per-activation'/'spatial'."""
    listed = axes('x', allow_none=False)

    def check(call, arg, v):
        if isinstance(v, str) and call.K.backend() == 'theano':
            if v not in ('per-activation', 'spatial'):
                call.fail(arg, "must be a list of axes, 'per-activation' or 'spatial'", v)
            return
        if not isinstance(v, (list, tuple, np.ndarray)):
            # Keras 2.3.1's backends sort it: an int was a TypeError there too
            call.fail(arg, 'must be a list of axes', v, TypeError)
        listed(call, arg, v)
    return check


def integer(minimum=None, maximum=None, allow_none=False, allow_tensor=False):
    def check(call, arg, v):
        if v is None and allow_none:
            return
        if allow_tensor and call.is_tensor(v):
            return
        if not _is_int(v):
            call.fail(arg, 'must be an int', v, TypeError)
        if minimum is not None and v < minimum:
            call.fail(arg, 'must be an int >= %d' % minimum, v)
        if maximum is not None and v > maximum:
            call.fail(arg, 'must be an int <= %d' % maximum, v)
    return check


def int_tuple(n, minimum=1):
    """An int or a list/tuple of ``n`` ints, each >= ``minimum``."""
    def check(call, arg, v):
        values = (v,) * n if _is_int(v) else v
        if not isinstance(values, (list, tuple)) or not all(_is_int(i) for i in values):
            call.fail(arg, 'must be an int or a tuple of %d ints' % n, v, TypeError)
        if len(values) != n:
            call.fail(arg, 'must be an int or a tuple of %d ints' % n, v)
        if any(i < minimum for i in values):
            call.fail(arg, 'must hold ints >= %d' % minimum, v)
    return check


def number(minimum=None, maximum=None, allow_none=False, open_min=False, open_max=False,
           allow_tensor=True):
    """A Python/numpy number in the range (a tensor passes when ``allow_tensor``)."""
    def check(call, arg, v):
        if v is None and allow_none:
            return
        if allow_tensor and call.is_tensor(v):
            return
        if not _is_number(v):
            call.fail(arg, 'must be a number', v, TypeError)
        if v != v:
            call.fail(arg, 'must be a number, not NaN', v)
        lo_bad = minimum is not None and (v <= minimum if open_min else v < minimum)
        hi_bad = maximum is not None and (v >= maximum if open_max else v > maximum)
        if lo_bad or hi_bad:
            lo = '' if minimum is None else ('(' if open_min else '[') + repr(minimum)
            hi = '' if maximum is None else repr(maximum) + (')' if open_max else ']')
            if minimum is None:
                text = 'must be a number %s %r' % ('<' if open_max else '<=', maximum)
            elif maximum is None:
                text = 'must be a number %s %r' % ('>' if open_min else '>=', minimum)
            else:
                text = 'must be a number in %s, %s' % (lo, hi)
            call.fail(arg, text, v)
    return check


def boolean():
    def check(call, arg, v):
        if isinstance(v, (bool, np.bool_)) or (_is_int(v) and v in (0, 1)):
            return
        call.fail(arg, 'must be True or False', v, TypeError)
    return check


def choice(values, allow_none=False, type_error=TypeError):
    """One of the strings ``values`` (any case). A value that is not a string raises
    ``type_error`` (the config setters raise ValueError there, as Keras 2.3.1 does)."""
    def check(call, arg, v):
        if v is None and allow_none:
            return
        if not isinstance(v, str):
            call.fail(arg, 'must be one of %s' % ', '.join(repr(x) for x in values), v, type_error)
        if v.lower() not in values:
            call.fail(arg, 'must be one of %s%s' % (', '.join(repr(x) for x in values),
                                                    ' or None' if allow_none else ''), v)
    return check


_DTYPE_WORDS = ('bool', 'string')


def float_dtype():
    """A floating-point dtype or None (floatx): what a normal distribution is drawn in. A dtype
    of another kind is a ValueError (as Keras 2's TensorFlow backend raised for
    ``random_normal_variable(..., dtype='int32')``); not a dtype at all, a TypeError."""
    any_dtype = dtype()

    def check(call, arg, v):
        any_dtype(call, arg, v)
        if v is None:
            return
        name = _dtype_name_of(v)
        if name in _DTYPE_WORDS or np.dtype(name).kind != 'f':
            call.fail(arg, "must be a floating-point dtype such as 'float32' or 'float64'", v,
                      ValueError)
    return check


#: functions an adapter registers (``register_dtype_names``) that give the numpy name of one of
#: its engine's dtype objects, or None for anything else (``torch.float32`` has no ``name``)
_ENGINE_DTYPE_NAMES = []


def register_dtype_names(fn):
    """Let the dtype checks read an engine's dtype objects: ``fn(v)`` returns the numpy name
    of ``v`` (``'float32'``) when it is one of the engine's dtypes, else None."""
    if fn not in _ENGINE_DTYPE_NAMES:
        _ENGINE_DTYPE_NAMES.append(fn)


def _dtype_name_of(v):
    """The name a dtype check reads from ``v``: a string as it is, an engine's dtype object by
    its registered namer, else its ``name`` (numpy's, TensorFlow's and JAX's dtypes)."""
    if isinstance(v, str):
        return v
    for fn in _ENGINE_DTYPE_NAMES:
        name = fn(v)
        if name is not None:
            return name
    return getattr(v, 'name', v)


def dtype(allow_none=True):
    """A dtype: None (floatx), a name such as 'float32', a numpy dtype or type, or an
    engine's dtype object (anything with a ``name`` numpy knows)."""
    def check(call, arg, v):
        if v is None:
            if allow_none:
                return
            call.fail(arg, 'must be a dtype', v, TypeError)
        name = _dtype_name_of(v)
        if isinstance(name, str) and name in _DTYPE_WORDS:
            return
        try:
            np.dtype(name)
        except (TypeError, ValueError):
            call.fail(arg, "must be a dtype such as 'float32', 'int64' or 'bool'", v, TypeError)
        if isinstance(name, str) and np.dtype(name).kind not in 'biuf':
            call.fail(arg, "must be a numeric or bool dtype such as 'float32', 'int64' or 'bool'",
                      v, TypeError)
    return check


def shape_arg(allow_none_dims=False, allow_minus_one=False, allow_tensor=True, allow_none=False):
    """A shape: an int or a tuple/list of ints >= 0 (None dims, -1 or tensors where allowed;
    ``allow_none``: the whole shape may be None)."""
    def check(call, arg, v):
        if v is None and allow_none:
            return
        if allow_tensor and call.is_tensor(v):
            return
        dims = (v,) if _is_int(v) else v
        if not isinstance(dims, (list, tuple)):
            call.fail(arg, 'must be a tuple of ints', v, TypeError)
        minus = 0
        for d in dims:
            if d is None and allow_none_dims:
                minus += allow_minus_one     # where -1 is allowed, None is read as -1
                continue
            if allow_tensor and call.is_tensor(d):
                continue
            if not _is_int(d):
                call.fail(arg, 'must be a tuple of ints%s' % (' or None' if allow_none_dims else ''),
                          v, TypeError)
            if d == -1 and allow_minus_one:
                minus += 1
                continue
            if d < 0:
                call.fail(arg, 'must hold sizes >= 0%s' % (' (or one -1)' if allow_minus_one else ''),
                          v)
        if minus > 1:
            call.fail(arg, 'may hold at most one -1 (or None)', v)
    return check


def callable_():
    def check(call, arg, v):
        if not callable(v):
            call.fail(arg, 'must be callable', v, TypeError)
    return check


def string(allow_none=True):
    def check(call, arg, v):
        if v is None and allow_none:
            return
        if not isinstance(v, str):
            call.fail(arg, 'must be a string%s' % (' or None' if allow_none else ''), v, TypeError)
    return check


def padding_pairs(n):
    """``n`` pairs of ints >= 0 (an int or an int pair per axis also accepted)."""
    def check(call, arg, v):
        if _is_int(v):
            v_list = [(v, v)] * n
        elif isinstance(v, (list, tuple)) and len(v) == n:
            v_list = []
            for item in v:
                if _is_int(item):
                    v_list.append((item, item))
                elif isinstance(item, (list, tuple)) and len(item) == 2 and all(
                        _is_int(i) for i in item):
                    v_list.append(tuple(item))
                else:
                    call.fail(arg, 'must be %d pairs of ints' % n, v, TypeError)
        else:
            call.fail(arg, 'must be %d pairs of ints' % n, v,
                      ValueError if isinstance(v, (list, tuple)) else TypeError)
        if any(i < 0 for pair in v_list for i in pair):
            call.fail(arg, 'must hold paddings >= 0', v)
    return check


def anything():
    def check(call, arg, v):
        return None
    return check


# ---------------------------------------------------------------------------
# Checks across arguments (static shapes only)
# ---------------------------------------------------------------------------

def _channels_axis(call, data_format, nd):
    fmt = data_format
    if fmt is None:
        from . import common
        fmt = common.image_data_format()
    return 1 if fmt == 'channels_first' else nd - 1


def _known(*sizes):
    """True when every size is a static int (None and symbolic sizes are unknown)."""
    return all(_is_int(s) for s in sizes)


def dot_sizes(call):
    x, y = call.args['x'], call.args['y']
    sx, sy = call.static_shape(x), call.static_shape(y)
    if sx is None or sy is None or not sx or not sy:
        if (sx is not None and not sx) or (sy is not None and not sy):
            bad = 'x' if sx is not None and not sx else 'y'
            call.fail(bad, 'must be a tensor of rank >= 1', call.args[bad])
        return
    kx = sx[-1]
    ky = sy[0] if len(sy) == 1 else sy[-2]
    if _known(kx, ky) and kx != ky:
        raise ValueError("dot: arguments 'x' and 'y' cannot be contracted: 'x' has shape %s and "
                         "'y' %s; the last axis of 'x' (%d) must equal the %s axis of 'y' (%d)"
                         % (sx, sy, kx, 'only' if len(sy) == 1 else 'second-to-last', ky))


def batch_dot_sizes(call):
    from .shape_rules import batch_dot_axes
    x, y, ax = call.args['x'], call.args['y'], call.args.get('axes')
    sx, sy = call.static_shape(x), call.static_shape(y)
    if sx is None or sy is None:
        return
    for arg, s in (('x', sx), ('y', sy)):
        if len(s) < 2:
            call.fail(arg, 'must be a tensor of rank >= 2 (batch first)', call.args[arg])
    if ax is not None:
        items = [ax, ax] if _is_int(ax) else list(ax) if isinstance(ax, (list, tuple)) else None
        if items is None or len(items) != 2 or not all(_is_int(i) for i in items):
            call.fail('axes', 'must be None, an int or a pair of ints', ax, TypeError)
        for arg, a, s in (('x', items[0], sx), ('y', items[1], sy)):
            if not -len(s) <= a < len(s) or a % len(s) == 0:
                call.fail('axes', "must name non-batch axes of 'x' and 'y' (in [1, %d) and "
                                  "[1, %d))" % (len(sx), len(sy)), ax)
    try:
        a_x, a_y = batch_dot_axes(len(sx), len(sy), ax)
    except ValueError as e:
        raise ValueError('batch_dot: %s' % e)
    if _known(sx[0], sy[0]) and sx[0] != sy[0]:
        raise ValueError("batch_dot: arguments 'x' and 'y' have different batch sizes: "
                         "'x' has shape %s and 'y' %s" % (sx, sy))
    if _known(sx[a_x], sy[a_y]) and sx[a_x] != sy[a_y]:
        raise ValueError("batch_dot: arguments 'x' and 'y' cannot be contracted on axes (%d, %d): "
                         "'x' has shape %s and 'y' %s (%d != %d)"
                         % (a_x, a_y, sx, sy, sx[a_x], sy[a_y]))


def concatenate_shapes(call):
    tensors, ax = call.args['tensors'], call.args.get('axis', -1)
    shapes = [call.static_shape(t) for t in tensors]
    known = [(i, s) for i, s in enumerate(shapes) if s is not None]
    if not known:
        return
    ranks = set(len(s) for _, s in known)
    if len(ranks) > 1:
        raise ValueError("concatenate: argument 'tensors' must hold tensors of one rank; got "
                         "shapes %s" % [s for s in shapes])
    n = ranks.pop()
    if n == 0:
        raise ValueError("concatenate: argument 'tensors' must hold tensors of rank >= 1; got "
                         "scalars")
    if not _is_int(ax):
        return
    if not -n <= ax < n:
        call.fail('axis', "must be an int in [%d, %d) (the axes of the tensors, %d-D)"
                  % (-n, n, n), ax)
    a = ax % n
    for d in range(n):
        if d == a:
            continue
        sizes = set(s[d] for _, s in known if s[d] is not None)
        if len(sizes) > 1:
            raise ValueError("concatenate: argument 'tensors' must agree on every axis but %d; "
                             "got shapes %s" % (a, shapes))


def stack_shapes(call):
    tensors, ax = call.args['x'], call.args.get('axis', 0)
    if not isinstance(tensors, (list, tuple)) or not tensors:
        call.fail('x', 'must be a non-empty list of tensors', tensors,
                  TypeError if not isinstance(tensors, (list, tuple)) else ValueError)
    shapes = [call.static_shape(t) for t in tensors]
    known = [s for s in shapes if s is not None]
    if not known:
        return
    if len(set(len(s) for s in known)) > 1 or any(
            len(set(s[d] for s in known if s[d] is not None)) > 1 for d in range(len(known[0]))):
        raise ValueError("stack: argument 'x' must hold tensors of one shape; got shapes %s"
                         % shapes)
    n = len(known[0]) + 1
    if _is_int(ax) and not -n <= ax < n:
        call.fail('axis', 'must be an int in [%d, %d) (the axes of the result, %d-D)'
                  % (-n, n, n), ax)


def reshape_count(call):
    x, shape = call.args['x'], call.args['shape']
    sx = call.static_shape(x)
    if _is_int(shape):
        shape = (shape,)
    if sx is None or not isinstance(shape, (list, tuple)) or any(
            not _is_int(d) for d in shape) or None in sx:
        return
    size = int(np.prod(sx, dtype=np.int64))
    fixed = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    if -1 in shape:
        ok = (fixed > 0 and size % fixed == 0) or (fixed == 0 and size == 0)
    else:
        ok = fixed == size
    if not ok:
        call.fail('shape', "must hold as many elements as 'x' (%d, shape %s)" % (size, sx),
                  call.args['shape'])


def permutation(call):
    x, pattern = call.args['x'], call.args['pattern']
    if not isinstance(pattern, (list, tuple)) or not all(_is_int(p) for p in pattern):
        call.fail('pattern', 'must be a tuple of ints', pattern, TypeError)
    n = call.ndim(x)
    if n is not None and sorted(pattern) != list(range(n)):
        call.fail('pattern', "must be a permutation of %s (the axes of 'x', a %d-D tensor)"
                  % (tuple(range(n)), n), pattern)


def conv_channels(n, kernel_arg='kernel', kernel_rank=None, in_axis=-2, transpose=False):
    """The input of an ``n``-D convolution: rank ``n + 2`` and input channels equal to the
    kernel's input channels (axis ``in_axis`` of the kernel; the last for transposes)."""
    def check(call):
        x, kernel = call.args.get('x'), call.args.get(kernel_arg)
        sx, sk = call.static_shape(x), call.static_shape(kernel)
        if sx is not None and len(sx) != n + 2:
            call.fail('x', 'must be a %d-D tensor (batch, %d spatial axes, channels in the data '
                           'format)' % (n + 2, n), x)
        k_rank = kernel_rank or n + 2
        if sk is not None and len(sk) != k_rank:
            call.fail(kernel_arg, 'must be a %d-D kernel' % k_rank, kernel)
        if sx is None or sk is None:
            return
        c = sx[_channels_axis(call, call.args.get('data_format'), len(sx))]
        k = sk[-1] if transpose else sk[in_axis]
        if _known(c, k) and c != k:
            raise ValueError("%s: the input channels of 'x' (%d, shape %s) must equal the "
                             "kernel's (%d, '%s' of shape %s)"
                             % (call.fname, c, sx, k, kernel_arg, sk))
        if not transpose and len(sk) == n + 2:
            _check_window_fits(call, sx, sk[:n], 'kernel', call.args.get('dilation_rate', 1))
    return check


def _spatial(call, shape):
    fmt = call.args.get('data_format')
    if _channels_axis(call, fmt, len(shape)) == 1:
        return shape[2:]
    return shape[1:-1]


def _check_window_fits(call, sx, window, what, dilation=1):
    """With 'valid' padding each spatial axis must hold at least one window."""
    if call.args.get('padding', 'valid') != 'valid':
        return
    n = len(window)
    dil = (dilation,) * n if _is_int(dilation) else tuple(dilation or (1,) * n)
    if len(dil) != n or not all(_is_int(d) for d in dil):
        return
    for size, k, d in zip(_spatial(call, sx), window, dil):
        if _known(size, k) and _is_int(k) and size < (k - 1) * d + 1:
            raise ValueError("%s: with padding='valid' the %s (%s, dilation %s) must fit in the "
                             "spatial axes of 'x' (shape %s)"
                             % (call.fname, what, tuple(window), dil, sx))


def separable_channels(n):
    def check(call):
        conv_channels(n, 'depthwise_kernel')(call)
        sd = call.static_shape(call.args.get('depthwise_kernel'))
        sp = call.static_shape(call.args.get('pointwise_kernel'))
        if sp is not None and len(sp) != n + 2:
            call.fail('pointwise_kernel', 'must be a %d-D kernel' % (n + 2),
                      call.args['pointwise_kernel'])
        if sd is None or sp is None:
            return
        if _known(sd[-1], sd[-2], sp[-2]) and sd[-2] * sd[-1] != sp[-2]:
            raise ValueError("%s: the input channels of 'pointwise_kernel' (%d) must equal the "
                             "channels times the multiplier of 'depthwise_kernel' (%d x %d)"
                             % (call.fname, sp[-2], sd[-2], sd[-1]))
    return check


def output_shape_rank(n):
    def check(call):
        conv_channels(n, transpose=True)(call)
        out = call.args.get('output_shape')
        if _is_int(out) or (isinstance(out, np.ndarray) and out.ndim == 0):
            # TensorFlow's C++ kernel aborts the process on a scalar output shape
            call.fail('output_shape', 'must hold %d sizes (batch, %d spatial axes, '
                      'channels), not one int' % (n + 2, n), out)
        if isinstance(out, (list, tuple)) and len(out) != n + 2:
            call.fail('output_shape', 'must hold %d sizes (batch, %d spatial axes, channels)'
                      % (n + 2, n), out)
        sk = call.static_shape(call.args.get('kernel'))
        if isinstance(out, (list, tuple)) and len(out) == n + 2 and sk is not None:
            c = out[_channels_axis(call, call.args.get('data_format'), n + 2)]
            if _is_int(c) and _known(sk[-2]) and c != sk[-2]:
                raise ValueError("%s: the output channels of 'output_shape' (%d) must equal the "
                                 "kernel's (%d, axis -2 of shape %s)"
                                 % (call.fname, c, sk[-2], sk))
    return check


def pool_rank(n):
    def check(call):
        x = call.args.get('x')
        if call.ndim(x) not in (None, n + 2):
            call.fail('x', 'must be a %d-D tensor (batch, %d spatial axes, channels in the data '
                           'format)' % (n + 2, n), x)
        sx = call.static_shape(x)
        pool = call.args.get('pool_size')
        if sx is not None:
            window = (pool,) * n if _is_int(pool) else tuple(pool)
            _check_window_fits(call, sx, window, 'pool_size')
    return check


def bias_size(call):
    x, bias = call.args['x'], call.args['bias']
    sx, sb = call.static_shape(x), call.static_shape(bias)
    if sx is None or sb is None:
        return
    if len(sx) < 2:
        call.fail('x', 'must be a tensor of rank >= 2', x)
    if len(sb) not in (1, len(sx) - 1):
        call.fail('bias', "must be 1-D (channels) or of rank %d (ndim(x) - 1)" % (len(sx) - 1),
                  bias)
    c = sx[_channels_axis(call, call.args.get('data_format'), len(sx))]
    b = sb[0] if len(sb) == 1 else sb[-1]
    if len(sb) == 1 and _known(c, b) and c != b:
        call.fail('bias', "must have one value per channel of 'x' (%d, shape %s)" % (c, sx), bias)


def same_shape(*names):
    """Arguments whose static shapes must agree where known (elementwise partners)."""
    def check(call):
        shapes = [(n, call.static_shape(call.args.get(n))) for n in names]
        known = [(n, s) for n, s in shapes if s is not None]
        for (n1, s1), (n2, s2) in zip(known, known[1:]):
            if len(s1) != len(s2) or any(_known(a, b) and a != b for a, b in zip(s1, s2)):
                raise ValueError("%s: arguments '%s' and '%s' must have the same shape; got %s "
                                 "and %s" % (call.fname, n1, n2, s1, s2))
    return check


def broadcastable(x_name='x', y_name='y'):
    """Elementwise partners: static sizes must be equal or 1 (numpy broadcasting)."""
    def check(call):
        sx = call.static_shape(call.args.get(x_name))
        sy = call.static_shape(call.args.get(y_name))
        if sx is None or sy is None:
            return
        if shape_rules.broadcast_conflict(sx, sy):
            raise ValueError("%s: arguments '%s' and '%s' do not broadcast together: shapes "
                             "%s and %s" % (call.fname, x_name, y_name, sx, sy))
    return check


def nonempty_axis(call):
    """argmax / argmin: the axis reduced must hold at least one value."""
    sx = call.static_shape(call.args['x'])
    ax = call.args.get('axis', -1)
    if sx and _is_int(ax) and -len(sx) <= ax < len(sx) and sx[ax] == 0:
        call.fail('x', 'must have values along axis %d (its size there is 0)' % ax,
                  call.args['x'])


def _known_ids(call, v, what, upper=None):
    """Where ``v``'s values are known (see ``Call.known_value``): each a whole number (a
    TypeError naming ``what`` otherwise; CNTK holds integers as floats) in ``[0, upper)``
    when ``upper`` is known (a ValueError otherwise)."""
    known = call.known_value(v)
    if known is None or not known.size or known.dtype.kind not in 'biuf':
        return
    if known.dtype.kind == 'f' and not np.all(np.mod(known, 1) == 0):
        call.fail(what, 'must hold integers', v, TypeError)
    if upper is not None and (known.max() >= upper or known.min() < 0):
        bad = known.max() if known.max() >= upper else known.min()
        call.fail(what, 'must hold values in [0, %d); it holds %s' % (upper, bad), v)


def integer_tensor(name):
    """A tensor argument that holds integers (indices, lengths): a float tensor is a
    TypeError, except on CNTK, whose tensors are all floats."""
    def check(call):
        v = call.args.get(name)
        if call.is_tensor(v) and call.K.backend() != 'cntk':
            if np.dtype(_dtype_name(call, v)).kind not in 'iub':
                call.fail(name, 'must be an integer tensor', v, TypeError)
        else:
            _known_ids(call, v, name)
    return check


def float_x_on_tensorflow(call):
    """TensorFlow's ops of these names take float tensors only (Keras 2.3.1's TensorFlow
    backend refused an integer one with a TypeError); JAX follows TensorFlow's
    conventions. Theano, PyTensor and CNTK compute them on integers (as Keras' own
    backends did): no check there."""
    if call.K.backend() not in engines.following('tensorflow'):
        return
    arg = next((a for a in ('x', 'output', 'y_pred') if a in call.args), 'x')
    x = call.args.get(arg)
    if not call.is_tensor(x):
        return
    if np.dtype(_dtype_name(call, x)).kind in 'iub':
        if call.fname == 'relu' and all(
                v is None or (_is_number(v) and float(v).is_integer())
                for v in (call.args.get('alpha', 0.), call.args.get('max_value'),
                          call.args.get('threshold', 0.))):
            return                 # relu of integers with integral bounds: integers
        call.fail(arg, 'must be a float tensor on TensorFlow (and JAX, which follows its '
                       'conventions); cast it with K.cast', x, TypeError)


def broadcast_to_shape(*names):
    """Random draws: a tensor given for ``names`` (a mean, a bound) must broadcast to the
    ``shape`` drawn (static sizes, where known)."""
    def check(call):
        shape = call.args.get('shape')
        dims = (shape,) if _is_int(shape) else shape
        if not isinstance(dims, (list, tuple)) or not all(_is_int(d) for d in dims):
            return
        for name in names:
            v = call.args.get(name)
            if not call.is_tensor(v):
                continue
            sv = call.static_shape(v)
            if sv is None:
                continue
            if len(sv) > len(dims) or any(_known(a, b) and a != b and a != 1 for a, b in
                                          zip(reversed(sv), reversed(dims))):
                call.fail(name, 'must broadcast to the shape drawn, %s' % (tuple(dims),), v)
    return check


def label_lengths_per_row(call):
    """``ctc_label_dense_to_sparse``: one length per row of ``labels`` (shape ``(batch,)`` or
    ``(batch, 1)``), each, where known, in ``[0, labels' columns]``."""
    labels, lengths = call.args.get('labels'), call.args.get('label_lengths')
    sl, sn = call.static_shape(labels), call.static_shape(lengths)
    if sl is None or len(sl) != 2 or sn is None:
        return
    if len(sn) not in (1, 2) or (len(sn) == 2 and sn[1] not in (1, None)) or \
            _known(sn[0], sl[0]) and sn[0] != sl[0]:
        call.fail('label_lengths', "must hold one length per row of 'labels' (shape (%s,) or "
                  "(%s, 1))" % (sl[0], sl[0]), lengths)
    known = call.known_value(lengths)
    if known is not None and known.size and sl[1] is not None and \
            (known.max() > sl[1] or known.min() < 0):
        call.fail('label_lengths', "must hold lengths in [0, %d] (the columns of 'labels')"
                  % sl[1], lengths)


def integer_powers(call):
    """``pow`` of integers: the exponent's known values must not be negative (numpy and
    TensorFlow refuse; JAX gave garbage)."""
    x, a = call.args.get('x'), call.args.get('a')
    if not (call.is_tensor(x) or isinstance(x, np.ndarray)):
        return
    if np.dtype(_dtype_name(call, x) if call.is_tensor(x) else x.dtype).kind not in 'iu':
        return
    if call.K.backend() in engines.following('tensorflow'):
        # TensorFlow's pow takes one dtype: a float exponent would be truncated to x's
        if call.is_tensor(a) and np.dtype(_dtype_name(call, a)).kind == 'f' or \
                _is_number(a) and not float(a).is_integer():
            call.fail('a', 'must hold whole numbers for an integer x on TensorFlow (and JAX); '
                           'cast x with K.cast', a, TypeError)
    known = call.known_value(a)
    if known is not None and known.dtype.kind in 'iuf' and known.size and known.min() < 0:
        call.fail('a', 'must not be negative for an integer x (integers to negative integer '
                       'powers are not integers; cast x with K.cast)', a)


def integer_clip_bounds(call):
    """``clip`` of an integer tensor on TensorFlow (and JAX, which follows it): a bound that
    is not a whole number is refused as TensorFlow's ``clip_by_value`` refused it (Keras
    2.3.1's TensorFlow backend: TypeError); JAX truncated it."""
    if call.K.backend() not in engines.following('tensorflow'):
        return
    x = call.args.get('x')
    if not call.is_tensor(x) or np.dtype(_dtype_name(call, x)).kind not in 'iu':
        return
    for arg in ('min_value', 'max_value'):
        v = call.args.get(arg)
        if _is_number(v) and not float(v).is_integer():
            call.fail(arg, 'must be a whole number for an integer x on TensorFlow (and JAX); '
                           'cast x with K.cast', v, TypeError)


def kept_axes_parameters(call):
    """``gamma`` / ``beta`` of ``normalize_batch_in_training``: one value per position of
    the axes of ``x`` that are not reduced (their sizes where known), or a shape that
    broadcasts against ``x`` with the reduced axes of size 1."""
    x, red = call.args.get('x'), call.args.get('reduction_axes')
    sx = call.static_shape(x)
    if sx is None or not isinstance(red, (list, tuple)) or \
            not all(_is_int(a) and -len(sx) <= a < len(sx) for a in red):
        return
    red = set(a % len(sx) for a in red)
    target = tuple(1 if i in red else d for i, d in enumerate(sx))
    kept = [d for i, d in enumerate(sx) if i not in red]
    if None in kept:
        return
    want = int(np.prod(kept)) if kept else 1
    for arg in ('gamma', 'beta'):
        v = call.args.get(arg)
        sv = call.static_shape(v) if v is not None else None
        if sv is None or None in sv:
            continue
        size = int(np.prod(sv)) if sv else 1
        broadcasts = len(sv) <= len(target) and all(
            a == b or a == 1 or b == 1 for a, b in zip(reversed(sv), reversed(target)))
        if size != want and not broadcasts:
            call.fail(arg, "must hold one value per position of the axes of 'x' not reduced "
                           "(%d, shape %s)" % (want, target), v)


def gather_indices(call):
    """Integer indices; where their values are known (numbers, arrays, constants and eager
    tensors), each in ``[0, rows)``: TensorFlow raised its own error for one out of range,
    JAX and CNTK clamp it, and a GPU gives zeros."""
    ref, idx = call.args['reference'], call.args['indices']
    if call.ndim(ref) == 0:
        call.fail('reference', 'must be a tensor of rank >= 1', ref)
    if call.is_tensor(idx):
        _known_ids(call, idx, 'indices', (call.static_shape(ref) or (None,))[0])
    if isinstance(idx, np.ndarray) or isinstance(idx, (list, tuple)) or _is_number(idx):
        arr = np.asarray(idx)
        if arr.dtype.kind == 'f':
            if not np.all(np.equal(np.mod(arr, 1), 0)):
                call.fail('indices', 'must hold integers', idx, TypeError)
        elif arr.dtype.kind not in 'iub':
            call.fail('indices', 'must hold integers', idx, TypeError)
        n = (call.static_shape(ref) or (None,))[0]
        if arr.size and n is not None and (arr.max() >= n or arr.min() < 0):
            call.fail('indices', "must be in [0, %d) (the rows of 'reference')" % n, idx)
    elif call.is_tensor(idx) and call.K.backend() != 'cntk':
        kind = np.dtype(_dtype_name(call, idx)).kind
        if kind not in 'iu':
            call.fail('indices', 'must be an integer tensor', idx, TypeError)


def _dtype_name(call, v):
    try:
        return str(call.K.dtype(v))
    except Exception:
        return 'float32'


def in_top_k_shapes(call):
    sp = call.static_shape(call.args['predictions'])
    st = call.static_shape(call.args['targets'])
    if sp is not None and len(sp) != 2:
        call.fail('predictions', 'must be a 2-D tensor (batch, classes)', call.args['predictions'])
    if st is not None and len(st) != 1:
        call.fail('targets', 'must be a 1-D tensor (batch,)', call.args['targets'])
    if sp is not None and st is not None and _known(sp[0], st[0]) and sp[0] != st[0]:
        raise ValueError("in_top_k: arguments 'predictions' and 'targets' must have the same "
                         "batch size; got shapes %s and %s" % (sp, st))
    _known_ids(call, call.args['targets'], 'targets',
               sp[1] if sp is not None and len(sp) == 2 else None)


def slice_args(call):
    x, start, size = call.args['x'], call.args['start'], call.args['size']
    n = call.ndim(x)
    if n == 0:
        call.fail('x', 'must be a tensor of rank >= 1 (a scalar has nothing to slice)', x)
    for arg, v, lo in (('start', start, 0), ('size', size, -1)):
        if call.is_tensor(v):
            continue
        vals = v      # one int was refused by Keras 2.3.1's backends too (tf.slice, zip)
        if not isinstance(vals, (list, tuple)) or not all(
                _is_int(i) or call.is_tensor(i) for i in vals):
            call.fail(arg, 'must be a list of ints', v, TypeError)
        if n is not None and len(vals) != n:
            call.fail(arg, "must hold one int per axis of 'x' (%d)" % n, v)
        if any(_is_int(i) and i < lo for i in vals):
            call.fail(arg, 'must hold ints >= %d' % lo, v)
    sx = call.static_shape(x)
    if sx is None or not isinstance(start, (list, tuple)) or not isinstance(size, (list, tuple)):
        return
    for d, (s, z, dim) in enumerate(zip(start, size, sx)):
        if _is_int(s) and _is_int(z) and dim is not None:
            if s > dim or (z != -1 and s + z > dim):
                raise ValueError("slice: 'start' %s and 'size' %s go past the end of 'x' "
                                 "(shape %s) on axis %d" % (start, size, sx, d))


def update_shapes(value_arg):
    def check(call):
        x = call.args['x']
        if not _is_variable(call, x):
            call.fail('x', 'must be a variable', x, TypeError)
        shape = call.static_shape(call.args[value_arg])
        if shape and not all(d == 1 for d in shape):   # one value (any rank) broadcasts
            same_shape('x', value_arg)(call)
    return check


def _is_variable(call, v):
    try:
        return bool(call.K.is_variable(v))
    except Exception:
        return False


def variable_arg(arg='x'):
    def check(call):
        if not _is_variable(call, call.args[arg]):
            call.fail(arg, 'must be a variable', call.args[arg], TypeError)
    return check


def value_tuples(call):
    tuples = call.args['tuples']
    if not isinstance(tuples, (list, tuple)):
        call.fail('tuples', 'must be a list of (variable, value) pairs', tuples, TypeError)
    for i, pair in enumerate(tuples):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            call.fail('tuples', 'must be a list of (variable, value) pairs', tuples, TypeError)
        if not _is_variable(call, pair[0]):
            call.fail('tuples[%d][0]' % i, 'must be a variable', pair[0], TypeError)
        _value_shape(call, 'tuples[%d][1]' % i, pair[0], pair[1])


def _value_shape(call, arg, var, value):
    tensor()(call, arg, value)
    try:
        arr = np.asarray(value)
    except Exception:
        return
    if arr.dtype.kind not in 'biuf':
        call.fail(arg, 'must be numeric', value, TypeError)
    shape = call.static_shape(var)
    if shape is not None and tuple(arr.shape) != tuple(shape):
        call.fail(arg, "must have the variable's shape %s" % (shape,), value)


def set_value_shape(call):
    x = call.args['x']
    if not _is_variable(call, x):
        call.fail('x', 'must be a variable', x, TypeError)
    _value_shape(call, 'value', x, call.args['value'])


def switch_ranks(call):
    c = call.args['condition']
    nc = call.ndim(c)
    for arg in ('then_expression', 'else_expression'):
        v = call.args[arg]
        if callable(v) and not call.is_tensor(v):
            continue
        tensor()(call, arg, v)
        nv = call.ndim(v)
        if nc is not None and nv is not None and nc > nv:
            raise ValueError("switch: argument 'condition' (rank %d) must not have a higher rank "
                             "than '%s' (rank %d)" % (nc, arg, nv))
    st, se = (call.static_shape(call.args[a]) if call.is_tensor(call.args[a]) else None
              for a in ('then_expression', 'else_expression'))
    # a scalar condition picks one whole expression on TensorFlow and JAX (a cond: the
    # shapes may differ); Theano's T.switch and CNTK's element_select select elementwise
    if st is not None and se is not None and (
            nc != 0 or call.K.backend() not in engines.following('tensorflow')) and any(
            _known(a, b) and a != b and a != 1 and b != 1
            for a, b in zip(reversed(st), reversed(se))):
        raise ValueError("switch: arguments 'then_expression' and 'else_expression' do not "
                         "broadcast together: shapes %s and %s" % (st, se))


def phase_alternatives(call):
    for arg in ('x', 'alt'):
        v = call.args[arg]
        if callable(v) and not call.is_tensor(v):
            continue
        tensor()(call, arg, v)
    training = call.args.get('training')
    if training is not None and not call.is_tensor(training) and not (
            isinstance(training, (bool, np.bool_)) or (_is_int(training) and training in (0, 1))):
        call.fail('training', 'must be None, 0, 1, True, False or a tensor', training, TypeError)


def rnn_inputs(call):
    x = call.args['inputs']
    n = call.ndim(x)
    if n is not None and n < 3:
        call.fail('inputs', 'must be a tensor of rank >= 3 (batch, time, ...)', x)
    states = call.args['initial_states']
    if not isinstance(states, (list, tuple)):
        call.fail('initial_states', 'must be a list of tensors', states, TypeError)
    mask = call.args.get('mask')
    if mask is not None:
        tensor()(call, 'mask', mask)
        sm, sx = call.static_shape(mask), call.static_shape(x)
        if sm is not None and sx is not None:
            if len(sm) not in (2, 3) or any(_known(a, b) and a != b for a, b in zip(sm[:2], sx[:2])):
                call.fail('mask', "must have shape (batch, time) matching 'inputs' %s" % (sx,),
                          mask)


def crossentropy_shapes(class_axis=True, sparse=False):
    def check(call):
        st = call.static_shape(call.args['target'])
        so = call.static_shape(call.args['output'])
        if st is None or so is None:
            return
        if sparse:
            ax = call.args.get('axis', -1)
            ax = ax % len(so) if _is_int(ax) and so and -len(so) <= ax < len(so) else None
            rest = tuple(d for i, d in enumerate(so) if i != ax) if ax is not None else None
            # the target's class ids, one per position of 'output' without its class
            # axis: that shape, or as many values (a size-1 axis kept; Keras flattens both)
            known = rest is not None and all(_known(d) for d in st + rest)
            if len(so) < 1 or len(st) not in (len(so) - 1, len(so)) or (
                    rest is not None and len(st) == len(rest) and any(
                        _known(a, b) and a != b for a, b in zip(st, rest))) or (
                    known and len(st) == len(so) and
                    int(np.prod(st)) != int(np.prod(rest))):
                raise ValueError("%s: argument 'target' (shape %s) must have the shape of "
                                 "'output' %s without its class axis" % (call.fname, st, so))
            if ax is not None:
                _known_ids(call, call.args['target'], 'target', so[ax])
            return
        if len(st) != len(so) or any(_known(a, b) and a != b for a, b in zip(st, so)):
            raise ValueError("%s: arguments 'target' and 'output' must have the same shape; "
                             "got %s and %s" % (call.fname, st, so))
    return check


def ctc_shapes(call):
    sp = call.static_shape(call.args['y_pred'])
    if sp is not None and len(sp) != 3:
        call.fail('y_pred', 'must be a 3-D tensor (batch, time, classes)', call.args['y_pred'])
    if 'label_length' not in call.args:     # ctc_decode: its own rules
        return
    # the batch: y_pred's, else y_true's (None where neither static shape says it)
    st = call.static_shape(call.args['y_true'])
    batch = sp[0] if sp is not None and sp[0] is not None else (
        st[0] if st is not None and st else None)
    for name in ('input_length', 'label_length'):
        sl = call.static_shape(call.args[name])
        if sl is None:
            continue
        if len(sl) not in (1, 2) or (len(sl) == 2 and sl[1] not in (None, 1)):
            call.fail(name, 'must have shape (samples, 1)', call.args[name])
        if batch is not None and sl and sl[0] is not None and sl[0] != batch:
            call.fail(name, 'must have one entry per sample: shape (%d, 1)' % batch,
                      call.args[name])


def ctc_decode_args(call):
    ctc_shapes(call)
    sp = call.static_shape(call.args['y_pred'])
    if sp is not None and len(sp) == 3 and sp[2] == 0:
        call.fail('y_pred', 'must hold at least one class (the blank) on its last axis',
                  call.args['y_pred'])
    il = call.args['input_length']
    si = call.static_shape(il) if call.is_tensor(il) or isinstance(il, np.ndarray) else None
    if si is not None and (len(si) not in (1, 2) or len(si) == 2 and si[1] not in (1, None)
                           or sp is not None and len(sp) == 3 and _known(si[0], sp[0]) and
                           si[0] != sp[0]):
        call.fail('input_length', "must hold one length per sample of 'y_pred' (shape "
                  "(batch,) or (batch, 1))", il)
    tp, bw = call.args.get('top_paths', 1), call.args.get('beam_width', 100)
    if _is_int(tp) and _is_int(bw) and not call.args.get('greedy', True) and tp > bw:
        call.fail('top_paths', "must be <= 'beam_width' (%d)" % bw, tp)


def local_conv_args(n):
    def check(call):
        x = call.args['inputs']
        if call.ndim(x) not in (None, n + 2):
            call.fail('inputs', 'must be a %d-D tensor' % (n + 2), x)
        sk = call.static_shape(call.args['kernel'])
        if sk is not None and len(sk) != 3:
            call.fail('kernel', 'must be a 3-D kernel (output positions, patch size, filters)',
                      call.args['kernel'])
    return check


def arange_step(call):
    step = call.args.get('step', 1)
    if _is_number(step) and step == 0:
        call.fail('step', 'must not be 0', step)


def pattern_length(call):
    x, pattern = call.args['x'], call.args['broadcastable']
    if not isinstance(pattern, (list, tuple)):
        call.fail('broadcastable', 'must be a tuple of bools', pattern, TypeError)
    n = call.ndim(x)
    if n is not None and len(pattern) != n:
        call.fail('broadcastable', "must hold one bool per axis of 'x' (%d)" % n, pattern)


def batch_norm_params(call):
    x = call.args['x']
    sx = call.static_shape(x)
    if sx is None:
        return
    ax = call.args.get('axis', -1)
    if not _is_int(ax):
        return
    c = sx[ax % len(sx)] if sx else None
    for arg in ('mean', 'var', 'beta', 'gamma'):
        v = call.args.get(arg)
        if v is None:
            continue
        s = call.static_shape(v)
        if s is not None and len(s) == 1 and _known(c, s[0]) and s[0] not in (c, 1):
            call.fail(arg, "must have the size of axis %d of 'x' (%d, shape %s)" % (ax, c, sx), v)
        if s is not None and len(s) > 1 and (len(s) > len(sx) or any(
                _known(a, b) and a != b and a != 1 and b != 1
                for a, b in zip(reversed(s), reversed(sx)))):
            call.fail(arg, "must broadcast against 'x' (shape %s)" % (sx,), v)


def function_args(call):
    inputs, outputs = call.args['inputs'], call.args['outputs']
    if not isinstance(inputs, (list, tuple)):
        call.fail('inputs', 'must be a list of placeholders', inputs, TypeError)
    for i, v in enumerate(inputs):
        if not call.is_tensor(v):
            call.fail('inputs[%d]' % i, 'must be a placeholder (or a tensor to feed)', v, TypeError)
    outs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    for i, v in enumerate(outs):
        if not call.is_tensor(v):
            call.fail('outputs' if not isinstance(outputs, (list, tuple)) else 'outputs[%d]' % i,
                      'must be a tensor', v, TypeError)
    updates = call.args.get('updates')
    if updates is not None and not isinstance(updates, (list, tuple)):
        call.fail('updates', 'must be a list of updates', updates, TypeError)


def gradients_args(call):
    loss = call.args['loss']
    if not call.is_tensor(loss):
        call.fail('loss', 'must be a tensor', loss, TypeError)
    variables = call.args['variables']
    vs = variables if isinstance(variables, (list, tuple)) else [variables]
    for i, v in enumerate(vs):
        if not call.is_tensor(v):
            call.fail('variables', 'must be a list of variables or tensors', variables, TypeError)


def tensors_or_list(call):
    v = call.args['variables']
    items = v if isinstance(v, (list, tuple)) else [v]
    for i, item in enumerate(items):
        tensor()(call, 'variables', item)


def map_elems(call):
    elems = call.args['elems']
    tensor()(call, 'elems', elems)
    if call.ndim(elems) == 0:
        call.fail('elems', 'must be a tensor of rank >= 1 (the loop runs over axis 0)', elems)
    shape = call.static_shape(elems)
    if call.fname != 'map_fn' and call.args.get('initializer') is None and shape and shape[0] == 0:
        call.fail('elems', 'must not be empty without an initializer', elems)


# ---------------------------------------------------------------------------
# The table: name -> ({argument: checker}, [checks across arguments])
# ---------------------------------------------------------------------------

T = tensor()
DF = choice(DATA_FORMATS, allow_none=True)
PAD = choice(PADDINGS)


def conv_padding(values):
    """One of ``values`` or of the engine's own further convolution paddings (the adapter's
    ``_EXTRA_CONV_PADDINGS``: 'full' on Theano, which Keras 2.3.1's Theano backend takes)."""
    def check(call, arg, v):
        extra = tuple(getattr(call.K, '_EXTRA_CONV_PADDINGS', ()))
        choice(tuple(values) + extra)(call, arg, v)
    return check


CONV_PAD = conv_padding(PADDINGS)
CONV_PAD_CAUSAL = conv_padding(('valid', 'same', 'causal'))
BOOL = boolean()
NAME = string()
SEED = integer(allow_none=True)
DT = dtype()


#: Python values that hold no axis of 0 values (``check_call`` skips them unasked)
_SCALARS = (str, bytes, bool, int, float)


def check_call(K, fname, arguments, spec):
    """Run the checks of ``spec`` (an API name's ``SPECS`` entry, :mod:`keras_backend.api`) on
    the bound ``arguments`` (defaults applied) of a call of ``fname``; ``K`` is the engine's
    ops module (its engine-level ``is_tensor`` and ``int_shape``)."""
    call = Call(K, fname, arguments)
    per_arg, across = spec
    for arg, checker in per_arg.items():
        if arg in arguments:
            checker(call, arg, arguments[arg])
    for checker in across:
        checker(call)
    if not getattr(K, 'HOLDS_EMPTY_TENSORS', True) and fname not in _ASKS_ONLY:
        # CNTK (its ops module says so): no argument with an axis of 0 values
        for arg, v in arguments.items():
            if (v is None or isinstance(v, _SCALARS)) and arg != 'shape':
                continue                # holds no axis (most arguments are these)
            items = v if isinstance(v, (list, tuple)) else [v]
            if arg == 'shape':          # the shape of a tensor to make (zeros, random_...)
                dims = (v,) if _is_int(v) else (v if isinstance(v, (list, tuple)) else ())
                if any(_is_int(d) and d == 0 for d in dims):
                    call.fail(arg, 'has a size of 0, which %s cannot hold'
                              % engines.ENGINE_TITLES.get(K.ENGINE, K.ENGINE), v)
                continue
            for item in items:
                shape = call.static_shape(item) if call.is_tensor(item) else (
                    item.shape if isinstance(item, np.ndarray) else None)
                if shape is not None and 0 in shape:
                    call.fail(arg, 'has an axis of 0 values (shape %s), which %s cannot '
                                   'compute on' % (tuple(shape), engines.ENGINE_TITLES.get(
                                       K.ENGINE, K.ENGINE)), item)


#: the names that only ask about a tensor (never compute on it)
_ASKS_ONLY = frozenset(('is_tensor', 'is_variable', 'is_placeholder', 'is_keras_tensor',
                        'is_sparse', 'int_shape', 'ndim', 'dtype', 'get_variable_shape',
                        'count_params', 'eval', 'get_value', 'batch_get_value',
                        'print_tensor'))


def _binder(signature):
    """``bind(args, kwargs)``: the arguments of a call of ``signature`` by name, defaults
    applied, in the parameters' order (what ``signature.bind(...)`` and ``apply_defaults()``
    give). Where the signature has no ``*args`` / ``**kwargs`` a call that binds is bound
    here without ``inspect``'s machinery (about a tenth of its time: every checked call of
    a model's build passes through it); a call that does not bind, and every call of other
    signatures, goes to ``signature.bind``, whose ``TypeError`` says why."""
    import inspect
    params = list(signature.parameters.values())
    plain = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)

    def slow(args, kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.arguments

    if not all(p.kind in plain for p in params):
        return slow
    order = tuple(p.name for p in params)
    positional = tuple(p.name for p in params
                       if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD)
    defaults = dict((p.name, p.default) for p in params if p.default is not p.empty)
    return _make_binder(signature, order, positional, defaults)


def _make_binder(signed, order, positional, defaults):
    """``bind(args, kwargs)`` of :func:`_binder` for the parameter names ``order`` (those
    that may be given by position first), with ``defaults``; a call that does not bind goes
    to ``inspect.signature(signed).bind`` (``signed``: the function or its signature),
    whose ``TypeError`` says why."""
    known = frozenset(order)
    n_all = len(order)
    every = len(positional) == n_all

    def slow(args, kwargs):
        import inspect
        sig = signed if isinstance(signed, inspect.Signature) else inspect.signature(signed)
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.arguments

    def bind(args, kwargs):
        if not kwargs and every and len(args) == n_all:
            return dict(zip(order, args))      # every argument given by position
        if len(args) <= len(positional) and known.issuperset(kwargs):
            given = dict(zip(positional, args))
            if given.keys().isdisjoint(kwargs):
                given.update(kwargs)
                try:
                    return dict((n, given[n] if n in given else defaults[n]) for n in order)
                except KeyError:    # a required argument missing
                    pass
        return slow(args, kwargs)
    return bind


def _code_binder(fn):
    """:func:`_binder` of a plain Python function's signature, read from its code object
    (``inspect.signature`` takes 15-25 us a name, each name's first call paying it); None
    for anything else (a wrapped or partial function, one with a ``__signature__``,
    ``*args`` / ``**kwargs``, a builtin), which ``inspect`` reads."""
    import types
    if type(fn) is not types.FunctionType or hasattr(fn, '__wrapped__') or \
            getattr(fn, '__signature__', None) is not None:
        return None
    code = fn.__code__
    if code.co_flags & 0x0C:     # CO_VARARGS | CO_VARKEYWORDS
        return None
    order = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    positional = order[:code.co_argcount]
    defaults = dict(zip(positional[len(positional) - len(fn.__defaults__ or ()):],
                        fn.__defaults__ or ()))
    defaults.update(fn.__kwdefaults__ or {})
    return _make_binder(fn, order, positional, defaults)


def own_attribute(fn, name, default):
    """``getattr(fn, name, default)`` for an attribute set on ``fn`` itself (``checked_call``
    here, the engine note of ``api.documented``): read from its ``__dict__``, without the
    ``AttributeError`` that ``getattr`` raises, formats and catches where it is absent (most
    of the cost of asking a function that lacks it); an object without a ``__dict__`` (a
    builtin) goes to ``getattr``."""
    try:
        return fn.__dict__.get(name, default)
    except AttributeError:
        return getattr(fn, name, default)


def wrap(fn, fname, K, spec):
    """``fn`` (the engine-level function of API name ``fname``) behind the checks of ``spec``.

    ``K`` is the engine's ops module, which the checks ask what a value is. The
    wrapper binds the call to ``fn``'s signature (a call that does not bind raises
    ``TypeError`` naming the function), runs :func:`check_call` and then calls
    ``fn`` unchanged. ``inspect.signature`` and Sphinx see ``fn``'s own signature
    through ``__wrapped__``. Without a ``spec`` (None), ``fn`` is returned as it is.
    The signature is read at the name's first call (an adapter's import wraps its 163
    names; a model calls a few dozen of them).
    """
    if spec is None or own_attribute(fn, 'checked_call', False):
        return fn

    def first_bind(args, kwargs):
        binder = _code_binder(fn)
        if binder is None:
            import inspect
            try:
                binder = _binder(inspect.signature(fn))
            except (TypeError, ValueError):   # no signature to bind to: a plain call
                binder = lambda args, kwargs: None   # noqa: E731
        bind[0] = binder
        return binder(args, kwargs)
    bind = [first_bind]   # the binder, made at the first call

    if _checks_nothing(K, fname, spec):
        # nothing to check (``is_variable``, which Keras' ``Layer.__setattr__`` asks of
        # every attribute a layer sets: 406 of the 614 checked calls of a small model's
        # first minute): ``fn`` is called at once, and a call that does not bind still
        # raises the ``TypeError`` naming the function
        def checked(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except TypeError:
                try:
                    bind[0](args, kwargs)
                except TypeError as e:
                    raise TypeError('%s: %s' % (fname, e))
                raise
    else:
        def checked(*args, **kwargs):
            try:
                arguments = bind[0](args, kwargs)
            except TypeError as e:
                raise TypeError('%s: %s' % (fname, e))
            if arguments is not None:
                check_call(K, fname, arguments, spec)
            return fn(*args, **kwargs)
    _update_wrapper(checked, fn)
    checked.checked_call = True
    return checked


def _update_wrapper(wrapper, fn):
    """``functools.update_wrapper(wrapper, fn)``: ``fn``'s name, qualified name, module,
    docstring and annotations, its ``__dict__`` and ``__wrapped__`` on ``wrapper``. For a plain
    Python function the attributes are copied directly, without ``functools``' partial and
    loops (an adapter's import wraps its 163 names); anything else goes to ``functools``."""
    if type(fn) is not type(wrapper):
        import functools
        functools.update_wrapper(wrapper, fn)
        return
    wrapper.__module__ = fn.__module__
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__doc__ = fn.__doc__
    wrapper.__annotations__ = fn.__annotations__
    if fn.__dict__:
        wrapper.__dict__.update(fn.__dict__)
    wrapper.__wrapped__ = fn


def _checks_nothing(K, fname, spec):
    """Whether :func:`check_call` of ``fname`` on engine ops module ``K`` checks nothing: no
    check of its own in ``spec`` and none of the engine's (CNTK's empty axes)."""
    per_arg, across = spec
    return not per_arg and not across and (getattr(K, 'HOLDS_EMPTY_TENSORS', True) or
                                            fname in _ASKS_ONLY)


# ---------------------------------------------------------------------------
# Calls of compiled functions: the feeds, and the engine's run-time errors
# ---------------------------------------------------------------------------

def feed_specs(K, placeholders):
    """[(name, static shape or None)] of a compiled function's inputs, computed once."""
    specs = []
    for ph in placeholders:
        try:
            shape = K.int_shape(ph)
        except Exception:
            shape = None
        try:
            numeric = str(K.dtype(ph)) != 'string'
        except Exception:
            numeric = True
        specs.append((getattr(ph, 'name', None) or '?', None if shape is None else tuple(shape),
                      numeric))
    return specs


def checked_feeds(function, K, inputs):
    """The values ``inputs`` fed to a compiled ``function``, checked: a list or tuple with
    one value per input, or a dict keyed by the input placeholders (returned as a list in
    the order of ``function.inputs``). The inputs' specs are computed at the first call
    (:func:`feed_specs` on ``K``, kept as ``function._feed_specs``); :func:`check_feeds`
    raises as it says."""
    if isinstance(inputs, dict):
        inputs = [inputs[i] for i in function.inputs]
    if function._feed_specs is None:
        function._feed_specs = feed_specs(K, function.inputs)
    check_feeds(function._feed_specs, inputs)
    return inputs


def check_feeds(specs, values):
    """Check the values fed to a compiled ``function`` against its inputs.

    ``specs`` comes from :func:`feed_specs`. ``values`` must be a list or
    tuple with one value per input; each a numeric array (or a number, or a
    sparse value) whose rank and known sizes match the input's static shape.
    Raises ``TypeError`` (not a list, a non-numeric value) or ``ValueError``
    (count, rank, sizes), naming the input by position and name.
    """
    if not isinstance(values, (list, tuple)):
        raise TypeError('function call: the inputs must be a list with one value per input '
                        '(%d); got %s' % (len(specs), type(values).__name__))
    if len(values) != len(specs):
        raise ValueError('function call: %d input value(s) for %d input(s)'
                         % (len(values), len(specs)))
    for i, ((name, expected, numeric), value) in enumerate(zip(specs, values)):
        if isinstance(value, np.ndarray):
            arr = value
        elif hasattr(value, 'tocoo') or hasattr(value, 'indices'):   # sparse values
            continue
        else:
            try:
                arr = np.asarray(value)
            except Exception:
                arr = None
        if arr is None or (numeric and arr.dtype.kind not in 'biuf'):
            raise TypeError("function call: input %d ('%s') must be numeric; got %s"
                            % (i, name, _describe_plain(value)))
        if expected is None:
            continue
        if arr.ndim != len(expected) or any(
                e is not None and e != a for e, a in zip(expected, arr.shape)):
            raise ValueError("function call: input %d ('%s') must have shape %s; got an array of "
                             "shape %s" % (i, name, expected, arr.shape))


def _describe_plain(value):
    if isinstance(value, np.ndarray):
        return 'a numpy array of dtype %s' % value.dtype
    text = repr(value)
    return (text[:57] + '...') if len(text) > 60 else text


#: the start of the message of a check that runs inside an engine's graph (the values
#: arrive at run time): :func:`engine_error` finds it in whatever the engine raised
RUNTIME_CHECK = '[keras_backend check] '


def runtime_check_message(fname, text):
    """The message a run-time check gives the engine to raise: ``fname: text``, marked so
    that :func:`engine_error` turns the engine's error into ``ValueError(fname: text)``."""
    return '%s%s: %s' % (RUNTIME_CHECK, fname, text)


def _runtime_check_text(error):
    text = str(error)
    at = text.find(RUNTIME_CHECK)
    if at < 0:
        return None
    found = text[at + len(RUNTIME_CHECK):].split('\n')[0]
    end = found.find(' |')           # the end mark runtime_check_message's users add
    return found[:end] if end >= 0 else found.rstrip('"\'] ')


def engine_error(fname, error, shapes=None):
    """The ``ValueError`` that replaces an engine's run-time error in ``fname``.

    It names the function that was called and the shapes it was fed, and
    keeps the engine's first message line; raise it ``from error`` so that
    the engine's own error stays as ``__cause__``. While several workers train
    (:mod:`keras_backend.distribute`), an error that means a lost peer becomes
    ``keras_backend.distribute.WorkerLost`` instead; the failure of one of our checks that
    run inside the graph (:func:`runtime_check_message`) becomes a ``ValueError`` with its
    own message.
    """
    distribute = sys.modules.get('keras_backend.distribute')
    if distribute is not None:
        lost = distribute._worker_lost(error)
        if lost is not None:
            return lost
    checked = _runtime_check_text(error)
    if checked is not None:      # one of our checks inside the graph: its own message
        return ValueError(checked)
    text = str(error).strip().split('\n')[0]
    if len(text) > 300:
        text = text[:297] + '...'
    fed = '' if not shapes else '; fed shapes %s' % (list(shapes),)
    return ValueError('%s: the engine refused the computation (%s: %s)%s'
                      % (fname, type(error).__name__, text, fed))
