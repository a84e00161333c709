"""Parameters that Keras 2.3.1's backends took as tensors are tensors on every engine.

Keras 2 layers pass weights as the parameters of activations: keras-contrib's ``SReLU``
calls ``K.relu(x, alpha=<tensor>, max_value=<tensor>)`` (``K.pattern_broadcast`` of its
weights on Theano), ``PELU`` scales ``K.elu``. Keras' Theano backend built these from
``T.nnet`` ops that broadcast tensor parameters; each adapter must too, with the same values
as numpy and gradients that reach the parameters.
"""
import numpy as np

from helpers import assert_values, randn

X = randn(4, 5, seed=3) * 2
ALPHA = np.abs(randn(5, seed=4)) * 0.3 + 0.05          # per feature
TOP = np.abs(randn(5, seed=5)) + 1.0
THRESHOLD = np.abs(randn(5, seed=6)) * 0.5


def _relu_ref(x, alpha, top, thr):
    kept = np.where(x > thr, x, 0.) if np.any(thr) else np.maximum(x, 0.)
    if top is not None:
        kept = np.minimum(np.maximum(kept, 0.), top)
    return kept - alpha * np.maximum(thr - x, 0.)


def _run(K, build, params):
    x = K.placeholder(shape=(None, 5))
    variables = [K.variable(p) for p in params]
    out = build(x, *variables)
    return K.function([x], [out])([X])[0], x, variables, out


def test_relu_tensor_alpha_max_value_threshold(K):
    got = _run(K, lambda x, a, m, t: K.relu(x, alpha=a, max_value=m, threshold=t),
               [ALPHA, TOP, THRESHOLD])[0]
    assert_values(got, _relu_ref(X, ALPHA, TOP, THRESHOLD), what='relu(tensor params)')


def test_relu_tensor_alpha_only(K):
    got = _run(K, lambda x, a: K.relu(x, alpha=a), [ALPHA])[0]
    assert_values(got, _relu_ref(X, ALPHA, None, 0.), what='relu(alpha=tensor)')


def test_relu_tensor_max_value_keras_contrib_srelu(K):
    """SReLU's own expression: t_left + relu(x - t_left, a_left, t_right - t_left)."""
    t_left, a_left, t_right = -0.5 * np.ones(5, 'float32'), ALPHA, TOP

    def build(x, tl, al, tr):
        return tl + K.relu(x - tl, al, tr - tl)
    got = _run(K, build, [t_left, a_left, t_right])[0]
    want = t_left + _relu_ref(X - t_left, a_left, t_right - t_left, 0.)
    assert_values(got, want, what='SReLU left and centre')


def test_relu_gradient_reaches_tensor_alpha(K):
    x = K.placeholder(shape=(None, 5))
    alpha = K.variable(ALPHA)
    loss = K.sum(K.relu(x, alpha=alpha))
    grad = K.function([x], [K.gradients(loss, [alpha])[0]])([X])[0]
    # d/d alpha of -alpha * relu(-x), summed over the batch
    assert_values(grad, -np.maximum(-X, 0.).sum(axis=0), what='d relu / d alpha')


def test_elu_tensor_alpha(K):
    x = K.placeholder(shape=(None, 5))
    alpha = K.variable(ALPHA)
    got = K.function([x], [K.elu(x, alpha)])([X])[0]
    assert_values(got, np.where(X > 0, X, ALPHA * (np.exp(np.minimum(X, 0.)) - 1.)),
                  what='elu(alpha=tensor)')
