"""Keras 2.3.1's ConvLSTM2D gives the numpy reference's numbers on every configuration.

``tests/keras2_conv_lstm.py`` runs in its own process on each configuration (our TensorFlow,
PyTensor and JAX adapters with this interpreter; our CNTK 2.7 and Theano 1.0.5 adapters and
Keras 2.3.1's own Theano backend through the CPython 3.6 interpreter, as
``tests/test_keras2_portability.py`` drives them) and reports, for every case of its
``CASES`` (both data formats, 'same' and 'valid', input channels other than the filters,
masking, statefulness, dropout, ``ConvRNN2D`` over ``ConvLSTM2DCell``), the predictions and
the loss and weights of one SGD step. Here they are held to ``reference.conv_lstm2d`` and
to one step of SGD along its numerical gradient (float64), within 1e-5.

Dropout: ``predict`` runs without it everywhere. The training step drops units on TensorFlow,
JAX and CNTK (its weights must then differ from the step without dropout); on Theano Keras
2.3.1 drops ``dropout`` and ``recurrent_dropout`` with a warning (Keras' own Theano backend
too), so the step is the reference's. Keras' own CNTK backend gives the cell state c as
ConvLSTM2D's output (``COMPUTED_DIFFERENTLY`` in the portability test) and is not run.
"""
import functools
import os
import sys

import numpy as np
import pytest

import reference as R
from test_keras2_portability import CONFIGS as ALL_CONFIGS
from test_keras2_portability import ENGINE_NAME
from test_keras2_portability import _last_json, _need, _run

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keras2_conv_lstm as S  # noqa: E402

if sys.version_info[:2] < (3, 8):
    pytest.skip('the engine matrix runs from the Python 3 suite, which drives CPython 3.6 '
                'itself', allow_module_level=True)

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'keras2_conv_lstm.py')
CONFIGS = [c for c in ALL_CONFIGS if c != 'cntk-keras']
#: where Keras 2.3.1 drops RNN dropout (K.backend() == 'theano')
THEANO_FAMILY = tuple(c for c in CONFIGS if ENGINE_NAME[c] == 'theano')
ATOL = 1e-5


@functools.lru_cache(maxsize=None)
def _report(config):
    return _last_json(_run(config, [], script=SCRIPT), 'keras2_conv_lstm.py on %s' % config)


def _mask(x):
    return np.any(x != 0., axis=(2, 3, 4))


def _forward(name, x, weights, initial_states=None):
    case = S.CASES[name]
    out, states = R.conv_lstm2d(x, weights[0], weights[1], weights[2], case['padding'],
                                case['data_format'], initial_states,
                                _mask(x) if case.get('masked') else None)
    return (out if case['return_sequences'] else out[:, -1]), states


@functools.lru_cache(maxsize=None)
def _expected(name):
    """(predictions, second predictions (stateful), loss, weights after one SGD step)."""
    x, y, weights = S.data(name)
    weights = [w.astype('float64') for w in weights]
    pred, states = _forward(name, x, weights)
    again = _forward(name, x, weights, states)[0] if S.CASES[name].get('stateful') else None

    def loss(ws):
        return float(np.mean((_forward(name, x, ws)[0] - y) ** 2))

    stepped = []
    for i, w in enumerate(weights):
        def fn(v, i=i):
            return loss([v if j == i else u for j, u in enumerate(weights)])
        stepped.append(w - S.LR * R.numerical_gradient(fn, w))
    return pred, again, loss(weights), stepped


def _case(config, name):
    _need(config)
    got = _report(config)['cases'][name]
    assert 'error' not in got, got['error']
    return got


@pytest.mark.parametrize('name', sorted(S.CASES))
@pytest.mark.parametrize('config', CONFIGS)
def test_conv_lstm2d_predicts_the_reference(config, name):
    got = _case(config, name)
    pred, again, _, _ = _expected(name)
    np.testing.assert_allclose(np.array(got['predict']), pred, atol=ATOL, rtol=0)
    if again is not None:   # stateful: the second call starts from the first one's states
        assert np.abs(again - pred).max() > 1e-3
        np.testing.assert_allclose(np.array(got['predict_again']), again, atol=ATOL, rtol=0)


@pytest.mark.parametrize('name', sorted(S.CASES))
@pytest.mark.parametrize('config', CONFIGS)
def test_conv_lstm2d_trains_as_the_reference(config, name):
    got = _case(config, name)
    _, _, loss, stepped = _expected(name)
    weights = [np.array(w) for w in got['weights']]
    assert all(np.isfinite(w).all() for w in weights)
    if S.CASES[name].get('dropout') and config not in THEANO_FAMILY:
        # units dropped in the step: neither the loss nor the step is the reference's
        assert max(np.abs(w - s).max() for w, s in zip(weights, stepped)) > 1e-4
        assert max(np.abs(w - b).max() for w, b in zip(weights, S.data(name)[2])) > 1e-4
        return
    before = S.data(name)[2]
    assert min(np.abs(s - b).max() for s, b in zip(stepped, before)) > 20 * ATOL
    assert abs(got['loss'] - loss) <= ATOL
    for w, s, what in zip(weights, stepped, ('kernel', 'recurrent_kernel', 'bias')):
        np.testing.assert_allclose(w, s, atol=ATOL, rtol=0, err_msg=what)
