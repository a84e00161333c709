"""The API fuzzer: arguments drawn for every name of the API, held to the numpy reference.

For one name, :func:`strategy` draws keyword arguments from the name's signature: tensors
(float32 and int32 arrays of rank 0-4, empty ones among them, NaN and inf among the
values), axes, booleans, sizes, shapes, strings from the vocabulary of the API (padding,
data formats, pool modes...), and, for any argument, values of the wrong kind (None, a
string, a dict, a float where an int is due, a ragged list). :func:`run_case` calls the
adapter with them (the tensors as ``K.constant``) and judges what happened:

* the adapter raises our ValueError / TypeError: fine (Keras refuses much that numpy
  takes: None for a tensor, cumsum's axis None...);
* it returns, and the reference (``tests/reference.py``) returns numbers: the same values
  (atol and rtol 1e-4, NaN where the reference has NaN, the same shape);
* it returns, and the reference refuses the case (TypeError, ValueError, IndexError): a
  silent result, a finding;
* names without a reference (configuration, variables, random ops...): the adapter returns
  or raises a ValueError / TypeError;

and whatever the adapter raises must be ``ValueError`` or ``TypeError`` (numpy's AxisError
counts: it is a ValueError), of a class defined outside the engines' modules, whose message
names the function or one of its arguments: never an engine's own exception, an
AttributeError, a KeyError, an IndexError of ours.

The verdict of a case is a string (empty: fine), so that a test can report every finding.
"""
import inspect
import os

import numpy as np
from hypothesis import strategies as st

import reference as R
from keras_backend import engines

#: names whose arguments include functions (rnn's step function, map_fn's...): not drawn
NOT_DRAWN = ('rnn', 'map_fn', 'foldl', 'foldr', 'function', 'gradients', 'control_dependencies',
             'learning_phase_scope', 'name_scope', 'symbolic', 'eager', 'set_session',
             'get_session', 'clear_session', 'print_tensor', 'in_train_phase', 'in_test_phase',
             'set_floatx', 'set_epsilon', 'set_image_data_format', 'set_image_dim_ordering',
             'set_learning_phase', 'manual_variable_initialization', 'reset_uids')
#: the arguments that take a tensor (a list of them: ``tensors``)
TENSORS = frozenset((
    'x', 'y', 'a', 'b', 'gamma', 'beta', 'mean', 'var', 'bias', 'kernel', 'depthwise_kernel',
    'pointwise_kernel', 'indices', 'reference', 'inputs', 'output', 'target', 'targets',
    'predictions', 'labels', 'label_lengths', 'value', 'condition', 'then_expression',
    'else_expression', 'y_true', 'y_pred', 'input_length', 'label_length', 'mask', 'variable',
    'tensor'))
AXES = frozenset(('axis', 'axes', 'reduction_axes', 'pattern', 'broadcast_axes'))
BOOLEANS = frozenset(('keepdims', 'from_logits', 'go_backwards', 'unroll', 'greedy',
                      'merge_repeated', 'sparse', 'trainable'))
SHAPES = frozenset(('shape', 'output_shape', 'pool_size', 'strides', 'kernel_size',
                    'dilation_rate', 'size', 'start', 'target_shape', 'noise_shape'))
STRINGS = ('same', 'valid', 'causal', 'full', 'channels_last', 'channels_first', 'max', 'avg',
           'nearest', 'bilinear', 'float32', 'int32', 'float64', 'bogus', '')


def _array(draw, dtype=None):
    rank = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=rank, max_size=rank)))
    dtype = dtype or draw(st.sampled_from(['float32', 'float32', 'float32', 'int32']))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.RandomState(seed)
    if dtype == 'int32':
        return rng.randint(-1, 4, shape).astype('int32')
    a = rng.uniform(-2, 2, shape).astype('float32')
    if a.size and draw(st.integers(0, 5)) == 0:     # now and then a NaN or an inf
        a.flat[draw(st.integers(0, a.size - 1))] = draw(st.sampled_from([np.nan, np.inf,
                                                                          -np.inf]))
    return a


def _wrong():
    return st.sampled_from([None, 'x', {}, 1.5, [[1, 2], [3]], object])


@st.composite
def _value(draw, name):
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(_wrong())
    if name in TENSORS:
        return None if kind == 1 else _Tensor(_array(draw))
    if name == 'tensors':
        return [_Tensor(_array(draw, 'float32')) for _ in range(draw(st.integers(0, 3)))]
    if name in AXES:
        return draw(st.one_of(st.none(), st.integers(-5, 4),
                              st.lists(st.integers(-4, 4), max_size=4).map(tuple),
                              st.sampled_from([1.5, 'a', [0, 0]])))
    if name in BOOLEANS:
        return draw(st.sampled_from([True, False, True, False, 2, 'yes']))
    if name in SHAPES:
        return draw(st.one_of(st.integers(-1, 4),
                              st.lists(st.one_of(st.integers(-1, 4), st.none()),
                                       max_size=4).map(tuple)))
    if name in ('padding', 'data_format', 'pool_mode', 'interpolation', 'dtype'):
        return draw(st.one_of(st.sampled_from(STRINGS), st.none(),
                              st.lists(st.integers(0, 2), max_size=3).map(tuple),
                              st.lists(st.lists(st.integers(0, 2), min_size=2, max_size=2)
                                       .map(tuple), max_size=3).map(tuple)))
    return draw(st.one_of(st.integers(-2, 5), st.floats(-3, 3), st.just(float('nan')),
                          st.none(), st.sampled_from(STRINGS)))


class _Tensor(object):
    """A drawn array that the adapter receives as ``K.constant`` (numpy gets the array)."""

    def __init__(self, array):
        self.array = array

    def __repr__(self):
        return 'array(%s, shape %s%s)' % (self.array.dtype, self.array.shape,
                                          ', with NaN/inf' if self.array.dtype.kind == 'f'
                                          and not np.isfinite(self.array).all() else '')


def drawable_names(K):
    from keras_backend import api
    return [n for n in api.API_NAMES if n not in NOT_DRAWN and callable(getattr(K, n, None))]


@st.composite
def strategy(draw, K, name):
    """Keyword arguments for ``K.<name>``: every argument without a default, and each one
    with a default half of the time."""
    kwargs = {}
    for p in inspect.signature(getattr(K, name)).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is p.empty or draw(st.booleans()):
            kwargs[p.name] = draw(_value(p.name))
    return kwargs


def _for_numpy(value):
    if isinstance(value, _Tensor):
        return value.array
    if isinstance(value, list) and value and all(isinstance(v, _Tensor) for v in value):
        return [v.array for v in value]
    return value


def _for_engine(K, value):
    if isinstance(value, _Tensor):
        return K.constant(value.array, dtype=str(value.array.dtype))
    if isinstance(value, list) and value and all(isinstance(v, _Tensor) for v in value):
        return [_for_engine(K, v) for v in value]
    return value


#: the modules whose exception classes are the engines' own (and their libraries')
ENGINE_MODULES = engines.packages() | frozenset(('jaxlib', 'tf_keras', 'keras', 'ml_dtypes',
                                                 'h5py'))


def _clear(name, kwargs, error):
    """'' when ``error`` is one the contract allows, else what is wrong with it."""
    cls = type(error)
    if not isinstance(error, (ValueError, TypeError)):
        return 'raised %s (not a ValueError or TypeError): %s' % (cls.__name__, error)
    if cls.__module__.split('.')[0] in ENGINE_MODULES:
        return 'raised the engine\'s %s.%s: %s' % (cls.__module__, cls.__name__, error)
    text = str(error)
    if name not in text and not any(("'%s'" % k) in text or ('%s ' % k) in text or
                                     ('%s:' % k) in text for k in kwargs):
        return 'raised %s naming neither %s nor an argument: %s' % (cls.__name__, name,
                                                                    text[:300])
    return ''


def _evaluate(K, out):
    """The value of what a call returned (tensors evaluated, lists element by element)."""
    if isinstance(out, (list, tuple)):
        return [_evaluate(K, o) for o in out]
    if K.is_tensor(out) or K.is_variable(out):
        return np.asarray(K.eval(out))
    return out


def _same(got, want):
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return False
        return all(_same(g, w) for g, w in zip(got, want))
    try:
        want = np.asarray(want)
        got = np.asarray(got)
    except Exception:
        return got == want
    if want.dtype.kind not in 'biufc' or got.dtype.kind not in 'biufc':
        return np.array_equal(got, want)
    if got.shape != want.shape:
        return False
    return np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-4, atol=1e-4,
                       equal_nan=True)


def _numeric(value):
    if isinstance(value, (list, tuple)):
        return all(_numeric(v) for v in value)
    try:
        return np.asarray(value).dtype.kind in 'biufc'
    except Exception:
        return False


def run_case(K, name, kwargs):
    """The verdict ('' when the adapter did as it should) of ``K.<name>(**kwargs)``
    (each case printed first with ``KERAS_BACKEND_FUZZ_PRINT=1``: the last one before a
    crash is the one that crashed)."""
    if os.environ.get('KERAS_BACKEND_FUZZ_PRINT'):
        print('%s(%s)' % (name, ', '.join('%s=%r' % kv for kv in sorted(kwargs.items()))),
              flush=True)
    ref = getattr(R, name, None)
    want, ref_error = None, None
    if ref is not None:
        try:
            with np.errstate(all='ignore'):
                want = ref(**dict((k, _for_numpy(v)) for k, v in kwargs.items()))
        except (TypeError, ValueError, IndexError) as e:
            ref_error = e
        except Exception as e:          # the reference cannot say (ZeroDivisionError...)
            ref = None
    try:
        engine_kwargs = dict((k, _for_engine(K, v)) for k, v in kwargs.items())
    except Exception as e:              # an array K.constant itself refuses
        return _clear('constant', {'value': 0, 'dtype': 0}, e)
    try:
        with np.errstate(all='ignore'):
            out = getattr(K, name)(**engine_kwargs)
    except Exception as e:
        # our clear error is always an answer: Keras refuses much that numpy takes (None
        # for a tensor, an axis of None for cumsum...)
        return _clear(name, kwargs, e)
    try:
        with np.errstate(all='ignore'):
            got = _evaluate(K, out)
    except Exception as e:
        # what only the run decides: the engine's refusal as our ValueError of the
        # function that ran it (docs/semantics.md, "Errors")
        return _clear('eval', {'x': 0}, e)
    if ref is None or (ref_error is None and not _numeric(want)):
        return ''                      # the reference cannot say (it took a wrong kind)
    if ref_error is not None:
        return 'returned a result where the reference raises %s: %s' % (
            type(ref_error).__name__, ref_error)
    if not _same(got, want):
        return 'differs from the reference: got %s, want %s' % (
            np.array2string(np.asarray(got, dtype=object), threshold=12)[:300],
            np.array2string(np.asarray(want, dtype=object), threshold=12)[:300])
    return ''

