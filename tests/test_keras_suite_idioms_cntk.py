"""Calls Keras 2.3.1's own tests make that the CNTK adapter got wrong (engine-parametrised)."""
import numpy as np
import pytest

import reference as R
from helpers import assert_values, randu


def test_sparse_categorical_crossentropy_channels_first_targets(K):
    # keras/engine/test_training.py::test_model_with_crossentropy_losses_channels_first:
    # targets (batch, 1, rows, cols) against outputs (batch, classes, rows, cols), axis=1
    out_v = randu(2, 4, 3, 3)
    out_v = out_v / out_v.sum(axis=1, keepdims=True)
    tgt_v = np.random.RandomState(0).randint(0, 4, (2, 1, 3, 3)).astype('float32')
    t = K.placeholder(ndim=4)
    o = K.placeholder((None, 4, 3, 3))
    loss = K.sparse_categorical_crossentropy(t, o, axis=1)
    got = K.function([t, o], [loss])([tgt_v, out_v])[0]
    want = R.sparse_categorical_crossentropy(tgt_v[:, 0], out_v, axis=1)
    assert_values(got, want)


def test_metric_result_under_control_dependencies_in_a_training_step(K):
    # keras/engine/test_training.py::test_add_metric_in_layer_call: a Mean metric
    # whose count grows by a constant, read through K.identity under
    # control_dependencies, in the same function as the optimizer's updates
    x = K.placeholder((None, 1))
    w = K.variable(np.ones((1, 1)))
    loss = K.mean(K.dot(x, w))
    s = K.sum(x)
    total, count = K.variable(0.), K.variable(0.)
    ups = [K.update_add(total, s), K.update_add(count, K.cast(K.size(s), K.floatx()))]
    with K.control_dependencies(ups):
        result = K.identity(total / count)
    grad = K.gradients(loss, [w])[0]
    f = K.function([x], [loss, result], updates=[K.update_sub(w, 0.01 * grad)] + ups)
    for step in range(1, 4):
        got_loss, got_result = f([np.ones((5, 1), 'float32')])
        assert_values(got_result, 5.)
        assert_values(K.get_value(count), float(step))
        assert_values(K.get_value(total), 5. * step)
        assert_values(got_loss, 1. - 0.01 * (step - 1), atol=1e-5)
    assert_values(K.get_value(w), np.full((1, 1), 0.97), atol=1e-5)


def test_update_with_a_value_of_free_size(K):
    # keras/utils/metrics_utils.py weighted_assign_add: a (thresholds,) accumulator
    # gets K.sum(label_and_pred, 1) whose size is free in the graph
    x = K.placeholder((None, None))
    acc = K.variable(np.zeros((1,)))
    f = K.function([x], [], updates=[K.update_add(acc, K.sum(x, 1))])
    xv = randu(1, 5)
    f([xv])
    f([xv])
    assert_values(K.get_value(acc), 2 * xv.sum(1))


@pytest.mark.parametrize('x_shape,y_shape,axes', [
    ((3, 4, 5), (2, 3, 4), (2, 3)),
    ((3, 4, 5), (2, 4), 2),
    ((4, 3), (3, 5), (2, 1)),
    ((4,), (3, 4), (1, 2)),
])
def test_batch_dot_of_placeholders_without_sizes(K, x_shape, y_shape, axes):
    # keras/backend/backend_test.py::test_batch_dot_shape, "no shape info" part
    xv, yv = randu(7, *x_shape), randu(7, *y_shape, seed=1)
    x = K.placeholder(ndim=1 + len(x_shape))
    y = K.placeholder(ndim=1 + len(y_shape))
    z = K.batch_dot(x, y, axes)
    got = K.function([x, y], [z])([xv, yv])[0]
    assert_values(got, R.batch_dot(xv, yv, axes), atol=1e-5)
