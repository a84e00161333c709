"""The main job: the digits examples reach their accuracy targets on every backend."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                'examples'))
digits = pytest.importorskip('digits', reason='examples/digits.py needs scikit-learn '
                             '(pip install "keras_backend[examples]")')


@pytest.mark.parametrize('name', ['mlp', 'cnn', 'rnn'])
def test_digits_model_reaches_target(K, name):
    pytest.importorskip('sklearn', reason='the digits data come from scikit-learn')
    acc = digits.train_and_evaluate(K, name)
    assert acc >= digits.TARGETS[name], '%s reached %.4f' % (name, acc)


def test_initial_weights_are_identical_everywhere():
    a = digits.initial_weights('cnn')
    b = digits.initial_weights('cnn')
    assert all((x == y).all() for x, y in zip(a, b))
    with pytest.raises(ValueError, match='model'):
        digits.initial_weights('gan')
