"""Losses, normalisation, bias_add and in_top_k against the reference."""
import numpy as np
import pytest

import reference as R
from helpers import bind, randn, randu, run_cases, select, spec, spec_names

NB = (0, 1)
LOGITS = randn(3, 5) * 2
PROBS = R.softmax(LOGITS).astype(np.float32)
UNNORM = randu(3, 5, low=0.1, high=2., seed=1)          # rows do not sum to 1
SOFT_T = R.softmax(randn(3, 5, seed=2)).astype(np.float32)
ONE_HOT = R.one_hot(np.array([1, 4, 0]), 5).astype(np.float32)
EDGE = np.array([[0., 0.2, 0.8, 0., 0.], [1., 0., 0., 0., 0.], [0.1, 0.2, 0.3, 0.2, 0.2]],
                dtype=np.float32)   # zeros and ones: clipped by epsilon
LOGITS3 = randn(2, 4, 3, seed=3)
PROBS3_AX1 = R.softmax(LOGITS3, 1).astype(np.float32)
T3_AX1 = R.one_hot(np.array([[0, 3, 1], [2, 2, 0]]), 4).transpose(0, 2, 1).astype(np.float32)
SPARSE_T = np.array([1, 4, 0], dtype=np.int32)
SPARSE_T2 = np.array([[0, 2, 1, 3], [1, 1, 0, 2]], dtype=np.int32)
SPARSE_T_AX1 = np.array([[0, 3, 1], [2, 2, 0]], dtype=np.int32)
BIN_T = randu(3, 4, seed=4)
BIN_P = randu(3, 4, low=0.05, high=0.95, seed=5)
BIN_EDGE = np.array([[0., 1., 0.5, 1e-9]], dtype=np.float32).repeat(2, 0)
BIN_LOGITS = randn(3, 4, seed=6) * 3

X4 = randn(2, 3, 4, 5, seed=7)
MEAN5, VAR5 = randn(5, seed=8), randu(5, low=0.5, high=2., seed=9)
BETA5, GAMMA5 = randn(5, seed=10), randn(5, seed=11)
MEAN3, VAR3 = randn(3, seed=12), randu(3, low=0.5, high=2., seed=13)
BETA3, GAMMA3 = randn(3, seed=14), randn(3, seed=15)
XB = randn(4, 3, 5, seed=16) * 2 + 1
XV = randn(2, 3, 4, 2, 5, seed=23) * 2 + 1     # (batch, frames, rows, cols, channels)

PRED = np.array([[0.1, 0.5, 0.5, 0.2, 0.0],     # tie at the top
                 [0.3, 0.3, 0.3, 0.3, 0.3],     # all tied
                 [1.0, 2.0, 3.0, 4.0, 5.0],
                 [0.2, np.inf, 0.1, 0.0, 0.3],  # non-finite target score
                 [0.2, np.nan, 0.1, 0.0, 0.3]], dtype=np.float32)
TARGETS = np.array([2, 4, 2, 1, 1], dtype=np.int32)


def cce(K, t, o):
    return K.categorical_crossentropy(t, o)


SPECS = [
    spec('categorical_crossentropy', cce, [ONE_HOT, PROBS],
         R.categorical_crossentropy(ONE_HOT, PROBS), none_in=NB),
    spec('categorical_crossentropy:soft_unnormalised', cce, [SOFT_T, UNNORM],
         R.categorical_crossentropy(SOFT_T, UNNORM), none_in=NB),
    spec('categorical_crossentropy:clipped', cce, [SOFT_T, EDGE],
         R.categorical_crossentropy(SOFT_T, EDGE), none_in=NB),
    spec('categorical_crossentropy:logits',
         lambda K, t, o: K.categorical_crossentropy(t, o, from_logits=True), [SOFT_T, LOGITS],
         R.categorical_crossentropy(SOFT_T, LOGITS, True), none_in=NB),
    spec('categorical_crossentropy:axis1',
         lambda K, t, o: K.categorical_crossentropy(t, o, axis=1), [T3_AX1, PROBS3_AX1],
         R.categorical_crossentropy(T3_AX1, PROBS3_AX1, False, 1), none_in=NB),
    spec('categorical_crossentropy:axis1_logits',
         lambda K, t, o: K.categorical_crossentropy(t, o, from_logits=True, axis=1),
         [T3_AX1, LOGITS3], R.categorical_crossentropy(T3_AX1, LOGITS3, True, 1), none_in=NB),
    spec('sparse_categorical_crossentropy',
         lambda K, t, o: K.sparse_categorical_crossentropy(t, o), [SPARSE_T, PROBS],
         R.sparse_categorical_crossentropy(SPARSE_T, PROBS), none_in=NB),
    spec('sparse_categorical_crossentropy:float_target',
         lambda K, t, o: K.sparse_categorical_crossentropy(t, o),
         [SPARSE_T.astype(np.float32), EDGE[[0, 0, 2]]],
         R.sparse_categorical_crossentropy(SPARSE_T, EDGE[[0, 0, 2]]), none_in=NB),
    spec('sparse_categorical_crossentropy:logits',
         lambda K, t, o: K.sparse_categorical_crossentropy(t, o, from_logits=True),
         [SPARSE_T, LOGITS], R.sparse_categorical_crossentropy(SPARSE_T, LOGITS, True),
         none_in=NB),
    spec('sparse_categorical_crossentropy:3d',
         lambda K, t, o: K.sparse_categorical_crossentropy(t, o, from_logits=True),
         [SPARSE_T2, randn(2, 4, 5, seed=17)],
         R.sparse_categorical_crossentropy(SPARSE_T2, randn(2, 4, 5, seed=17), True),
         none_in=NB),
    spec('sparse_categorical_crossentropy:axis1',
         lambda K, t, o: K.sparse_categorical_crossentropy(t, o, axis=1),
         [SPARSE_T_AX1, PROBS3_AX1],
         R.sparse_categorical_crossentropy(SPARSE_T_AX1, PROBS3_AX1, False, 1), none_in=NB),
    # Keras' rule for targets with a size-1 class axis: the ids in order, one per position
    # of the output without its class axis ((2, 1, 3) against channels_first (2, 4, 3))
    spec('sparse_categorical_crossentropy:axis1_class_axis_kept',
         lambda K, t, o: K.sparse_categorical_crossentropy(t, o, axis=1),
         [SPARSE_T_AX1[:, None, :], PROBS3_AX1],
         R.sparse_categorical_crossentropy(SPARSE_T_AX1, PROBS3_AX1, False, 1), none_in=NB),
    spec('sparse_categorical_crossentropy:trailing_class_axis',
         lambda K, t, o: K.sparse_categorical_crossentropy(t, o), [SPARSE_T[:, None], PROBS],
         R.sparse_categorical_crossentropy(SPARSE_T, PROBS), none_in=NB),
    spec('binary_crossentropy', lambda K, t, o: K.binary_crossentropy(t, o), [BIN_T, BIN_P],
         R.binary_crossentropy(BIN_T, BIN_P), none_in=NB),
    # outputs of exactly 0/1 (clipping) are checked with a larger epsilon in
    # test_crossentropy_uses_epsilon_at_call_time: with 1e-7, 1 - eps is not
    # representable in float32 and log(1 - p) would differ by rounding alone.
    spec('binary_crossentropy:logits',
         lambda K, t, o: K.binary_crossentropy(t, o, from_logits=True), [BIN_T, BIN_LOGITS],
         R.binary_crossentropy(BIN_T, BIN_LOGITS, True), none_in=NB),
    spec('batch_normalization',
         lambda K, x, m, v, b, g: K.batch_normalization(x, m, v, b, g),
         [X4, MEAN5, VAR5, BETA5, GAMMA5], R.batch_normalization(X4, MEAN5, VAR5, BETA5, GAMMA5)),
    spec('batch_normalization:axis1_eps',
         lambda K, x, m, v, b, g: K.batch_normalization(x, m, v, b, g, axis=1, epsilon=0.1),
         [X4, MEAN3, VAR3, BETA3, GAMMA3],
         R.batch_normalization(X4, MEAN3, VAR3, BETA3, GAMMA3, 1, 0.1)),
    spec('batch_normalization:none_params',
         lambda K, x, m, v: K.batch_normalization(x, m, v, None, None),
         [X4, MEAN5, VAR5], R.batch_normalization(X4, MEAN5, VAR5, None, None)),
    spec('batch_normalization:broadcast_params',
         lambda K, x, m, v, b, g: K.batch_normalization(x, m, v, b, g, axis=1),
         [X4, MEAN3.reshape(1, 3, 1, 1), VAR3.reshape(1, 3, 1, 1), BETA3.reshape(1, 3, 1, 1),
          GAMMA3.reshape(1, 3, 1, 1)],
         R.batch_normalization(X4, MEAN3.reshape(1, 3, 1, 1), VAR3.reshape(1, 3, 1, 1),
                               BETA3.reshape(1, 3, 1, 1), GAMMA3.reshape(1, 3, 1, 1), 1)),
    spec('normalize_batch_in_training',
         lambda K, x, g, b: K.normalize_batch_in_training(x, g, b, [0, 1]),
         [XB, GAMMA5, BETA5], list(R.normalize_batch_in_training(XB, GAMMA5, BETA5, [0, 1])),
         none_out=[(0,), (), ()]),
    spec('normalize_batch_in_training:channels_first',
         lambda K, x, g, b: K.normalize_batch_in_training(x, g, b, [0, 2], epsilon=0.01),
         [XB, GAMMA3, BETA3],
         list(R.normalize_batch_in_training(XB, GAMMA3, BETA3, [0, 2], 0.01)),
         none_out=[(0,), (), ()]),
    spec('normalize_batch_in_training:volumes',
         lambda K, x, g, b: K.normalize_batch_in_training(x, g, b, [0, 1, 2, 3]),
         [XV, GAMMA5, BETA5], list(R.normalize_batch_in_training(XV, GAMMA5, BETA5, [0, 1, 2, 3])),
         none_out=[(0,), (), ()]),
    spec('normalize_batch_in_training:no_params',
         lambda K, x: K.normalize_batch_in_training(x, None, None, [0, 1]),
         [XB], list(R.normalize_batch_in_training(XB, None, None, [0, 1])),
         none_out=[(0,), (), ()]),
    spec('bias_add', lambda K, x, b: K.bias_add(x, b), [X4, BETA5], R.bias_add(X4, BETA5)),
    spec('bias_add:cf', lambda K, x, b: K.bias_add(x, b, data_format='channels_first'),
         [X4, BETA3], R.bias_add(X4, BETA3, 'channels_first')),
    spec('bias_add:3d_cf', lambda K, x, b: K.bias_add(x, b, data_format='channels_first'),
         [XB, BETA3], R.bias_add(XB, BETA3, 'channels_first')),
    spec('bias_add:full_rank', lambda K, x, b: K.bias_add(x, b, data_format='channels_last'),
         [XB, randn(3, 5, seed=18)], R.bias_add(XB, randn(3, 5, seed=18))),
    spec('in_top_k', lambda K, p, t: K.in_top_k(p, t, 1), [PRED, TARGETS],
         R.in_top_k(PRED, TARGETS, 1), none_in=NB),
    spec('in_top_k:k2', lambda K, p, t: K.in_top_k(p, t, 2), [PRED, TARGETS],
         R.in_top_k(PRED, TARGETS, 2), none_in=NB),
    spec('in_top_k:k3', lambda K, p, t: K.in_top_k(p, t, 3), [PRED, TARGETS],
         R.in_top_k(PRED, TARGETS, 3), none_in=NB),
]

NAMES = spec_names(SPECS)


@pytest.mark.parametrize('name', NAMES)
def test_eager(K, name):
    run_cases(K, bind(K, select(SPECS, name), symbolic=False))


def test_symbolic_grouped(K):
    run_cases(K, bind(K, SPECS, eager=False))


def test_in_top_k_ties_and_non_finite(K):
    # expectations written out from the contract: ties count as in, non-finite -> False
    want = R.in_top_k(PRED, TARGETS, 1)
    np.testing.assert_array_equal(want, [True, True, False, False, False])
    out = K.eval(K.in_top_k(K.variable(PRED), K.constant(TARGETS, dtype='int32'), 1))
    np.testing.assert_array_equal(np.asarray(out).astype(bool), want)


def test_crossentropy_uses_epsilon_at_call_time(K):
    K.set_epsilon(1e-2)
    out = K.eval(K.binary_crossentropy(K.variable(BIN_EDGE[:, ::-1].copy()), K.variable(BIN_EDGE)))
    np.testing.assert_allclose(out, R.binary_crossentropy(BIN_EDGE[:, ::-1], BIN_EDGE, eps=1e-2),
                               rtol=1e-5)
    out = K.eval(K.categorical_crossentropy(K.variable(SOFT_T), K.variable(EDGE)))
    np.testing.assert_allclose(out, R.categorical_crossentropy(SOFT_T, EDGE, eps=1e-2),
                               rtol=1e-5)
    out = K.eval(K.sparse_categorical_crossentropy(K.constant(SPARSE_T, dtype='int32'),
                                                   K.variable(EDGE)))
    np.testing.assert_allclose(out, R.sparse_categorical_crossentropy(SPARSE_T, EDGE, eps=1e-2),
                               rtol=1e-5)
