"""Bad input: every public name, at least one bad call, the same clear error on every engine.

Each row of ``BAD`` is ``(name, make_call, error, argument)``: ``make_call(K)``
returns ``(args, kwargs)`` for ``getattr(K, name)``; the call must raise
``error`` (``ValueError`` for a bad value or shape, ``TypeError`` for a bad
type or dtype) with a message naming the function and ``argument``. After the
table runs, the configuration and a variable are checked intact.
"""
import numpy as np
import pytest

from keras_backend import api, common


def V(*shape):
    def make(K):
        return K.variable(np.ones(shape, 'float32'))
    return make


def P(*shape):
    def make(K):
        return K.placeholder(shape=shape)
    return make


def _resolve(K, items):
    out = []
    for i in items:
        if callable(i) and getattr(i, '__name__', '') == 'make':
            i = i(K)
        elif isinstance(i, (list, tuple)):
            i = type(i)(_resolve(K, i))
        out.append(i)
    return out


def call(*args, **kwargs):
    def make_call(K):
        return _resolve(K, args), dict(zip(kwargs, _resolve(K, list(kwargs.values()))))
    return make_call


x2 = V(2, 3)
img = V(1, 4, 4, 3)
vol = V(1, 4, 4, 4, 2)
seq = V(2, 5, 3)
k2 = V(2, 2, 3, 4)
TOO_MANY = object()   # marker: call with one positional argument too many

BAD = [
    # Configuration
    ('backend', call(TOO_MANY), TypeError, 'backend'),
    ('epsilon', call(TOO_MANY), TypeError, 'epsilon'),
    ('set_epsilon', call(-1.0), ValueError, 'e'),
    ('floatx', call(TOO_MANY), TypeError, 'floatx'),
    ('set_floatx', call('float8'), ValueError, 'floatx'),
    ('cast_to_floatx', call('abc'), TypeError, 'x'),
    ('image_data_format', call(TOO_MANY), TypeError, 'image_data_format'),
    ('set_image_data_format', call('channels_middle'), ValueError, 'data_format'),
    ('normalize_data_format', call('NCHW'), ValueError, 'value'),
    ('image_dim_ordering', call(TOO_MANY), TypeError, 'image_dim_ordering'),
    ('set_image_dim_ordering', call('xy'), ValueError, 'dim_ordering'),
    # Session and learning phase
    ('get_uid', call(3), TypeError, 'prefix'),
    ('reset_uids', call(TOO_MANY), TypeError, 'reset_uids'),
    ('clear_session', call(TOO_MANY), TypeError, 'clear_session'),
    ('get_session', call(TOO_MANY), TypeError, 'get_session'),
    ('set_session', call(), TypeError, 'session'),
    ('manual_variable_initialization', call('yes'), TypeError, 'value'),
    ('learning_phase', call(TOO_MANY), TypeError, 'learning_phase'),
    ('set_learning_phase', call(2), ValueError, 'value'),
    ('learning_phase_scope', call(5), ValueError, 'value'),
    ('name_scope', call(None), TypeError, 'name'),
    # Tensors and variables
    ('is_sparse', call(), TypeError, 'tensor'),
    ('to_dense', call(None), TypeError, 'tensor'),
    ('variable', call(np.ones(2), dtype='float8'), TypeError, 'dtype'),
    ('variable', call(None), TypeError, 'value'),
    ('is_variable', call(), TypeError, 'x'),
    ('constant', call(1.0, shape=(2, -3)), ValueError, 'shape'),
    ('constant', call('text'), TypeError, 'value'),
    ('is_keras_tensor', call(), TypeError, 'x'),
    ('is_tensor', call(), TypeError, 'x'),
    ('placeholder', call(shape=(2, -1)), ValueError, 'shape'),
    ('placeholder', call(shape=(2,), dtype='complex'), TypeError, 'dtype'),
    ('is_placeholder', call(), TypeError, 'x'),
    ('shape', call(None), TypeError, 'x'),
    ('int_shape', call(None), TypeError, 'x'),
    ('ndim', call('abc'), TypeError, 'x'),
    ('size', call(None), TypeError, 'x'),
    ('dtype', call(None), TypeError, 'x'),
    ('eval', call(None), TypeError, 'x'),
    ('zeros', call((2, -1)), ValueError, 'shape'),
    ('ones', call('ab'), TypeError, 'shape'),
    ('eye', call(3, dtype='float8'), TypeError, 'dtype'),
    ('zeros_like', call(None), TypeError, 'x'),
    ('ones_like', call(x2, dtype='nope'), TypeError, 'dtype'),
    ('identity', call(None), TypeError, 'x'),
    ('random_uniform_variable', call((2, -2), 0., 1.), ValueError, 'shape'),
    ('random_normal_variable', call((2, 2), 0., -1.), ValueError, 'scale'),
    ('count_params', call(None), TypeError, 'x'),
    ('cast', call(x2, 'float8'), TypeError, 'dtype'),
    # Variable updates
    ('update', call(x2, V(3, 2)), ValueError, 'new_x'),
    ('update_add', call(np.ones((2, 3)), np.ones((2, 3))), TypeError, 'x'),
    ('update_sub', call(x2, None), TypeError, 'decrement'),
    ('moving_average_update', call(x2, V(2, 3), 'a'), TypeError, 'momentum'),
    # Math
    ('dot', call(V(2, 3), V(4, 5)), ValueError, 'y'),
    ('dot', call(None, V(3, 2)), TypeError, 'x'),
    ('batch_dot', call(V(2, 3, 4), V(2, 5, 6)), ValueError, 'y'),
    ('batch_dot', call(V(2, 3, 4), V(2, 4, 6), axes=(0, 1)), ValueError, 'axes'),
    ('transpose', call(None), TypeError, 'x'),
    ('gather', call(x2, np.array([0.5])), TypeError, 'indices'),
    ('gather', call(x2, np.array([5])), ValueError, 'indices'),
    ('max', call(x2, axis=2), ValueError, 'axis'),
    ('min', call(x2, axis='0'), TypeError, 'axis'),
    ('sum', call(x2, axis=5), ValueError, 'axis'),
    ('sum', call(x2, axis=1.5), TypeError, 'axis'),
    ('sum', call(None), TypeError, 'x'),
    ('prod', call(x2, axis=-3), ValueError, 'axis'),
    ('cumsum', call(x2, axis=2), ValueError, 'axis'),
    ('cumprod', call(x2, axis=None), TypeError, 'axis'),
    ('var', call(x2, axis=[0, 0]), ValueError, 'axis'),
    ('std', call(x2, axis=3), ValueError, 'axis'),
    ('mean', call(x2, keepdims='yes'), TypeError, 'keepdims'),
    ('any', call(x2, axis=4), ValueError, 'axis'),
    ('all', call(x2, axis=4), ValueError, 'axis'),
    ('argmax', call(x2, axis=2), ValueError, 'axis'),
    ('argmin', call(x2, axis=1.0), TypeError, 'axis'),
    ('square', call(None), TypeError, 'x'),
    ('abs', call('x'), TypeError, 'x'),
    ('sqrt', call(None), TypeError, 'x'),
    ('exp', call(None), TypeError, 'x'),
    ('log', call(None), TypeError, 'x'),
    ('logsumexp', call(x2, axis=9), ValueError, 'axis'),
    ('round', call(None), TypeError, 'x'),
    ('sign', call(None), TypeError, 'x'),
    ('pow', call(x2, None), TypeError, 'a'),
    ('clip', call(x2, 'a', 1.), TypeError, 'min_value'),
    ('equal', call(V(2, 3), V(4, 3)), ValueError, 'y'),
    ('not_equal', call(x2, None), TypeError, 'y'),
    ('greater', call(V(2, 3), V(2, 4)), ValueError, 'y'),
    ('greater_equal', call(None, x2), TypeError, 'x'),
    ('less', call(V(2, 3), V(3, 3)), ValueError, 'y'),
    ('less_equal', call(x2, 'a'), TypeError, 'y'),
    ('maximum', call(V(2, 3), V(5,)), ValueError, 'y'),
    ('minimum', call(None, x2), TypeError, 'x'),
    ('sin', call(None), TypeError, 'x'),
    ('cos', call(None), TypeError, 'x'),
    ('normalize_batch_in_training', call(x2, None, None, [3]), ValueError, 'reduction_axes'),
    ('batch_normalization', call(x2, V(3), V(3), None, None, axis=2), ValueError, 'axis'),
    ('batch_normalization', call(x2, V(4), V(3), None, None), ValueError, 'mean'),
    # Shape manipulation
    ('concatenate', call([V(2, 3), V(3, 3)], axis=1), ValueError, 'tensors'),
    ('concatenate', call([V(2, 3), V(2, 3)], axis=2), ValueError, 'axis'),
    ('concatenate', call([]), ValueError, 'tensors'),
    ('reshape', call(x2, (4, 4)), ValueError, 'shape'),
    ('reshape', call(x2, (-1, -1)), ValueError, 'shape'),
    ('permute_dimensions', call(x2, (0, 2)), ValueError, 'pattern'),
    ('resize_images', call(img, 0, 2, 'channels_last'), ValueError, 'height_factor'),
    ('resize_images', call(img, 2, 2, 'channels_last', interpolation='cubic'), ValueError,
     'interpolation'),
    ('resize_volumes', call(vol, 2, 2, 1.5, 'channels_last'), TypeError, 'width_factor'),
    ('repeat_elements', call(x2, -1, 0), ValueError, 'rep'),
    ('repeat_elements', call(x2, 2, 2), ValueError, 'axis'),
    ('repeat', call(x2, 0), ValueError, 'n'),
    ('repeat', call(V(2, 3, 4), 2), ValueError, 'x'),
    ('arange', call(0, 5, 0), ValueError, 'step'),
    ('arange', call('a'), TypeError, 'start'),
    ('tile', call(x2, 'ab'), TypeError, 'n'),
    ('tile', call(x2, (2, -1)), ValueError, 'n'),
    ('flatten', call(None), TypeError, 'x'),
    ('batch_flatten', call(None), TypeError, 'x'),
    ('expand_dims', call(x2, 4), ValueError, 'axis'),
    ('squeeze', call(x2, 3), ValueError, 'axis'),
    ('temporal_padding', call(seq, (1, -1)), ValueError, 'padding'),
    ('temporal_padding', call(x2, (1, 1)), ValueError, 'x'),
    ('spatial_2d_padding', call(img, ((1, 1), (1, 1)), data_format='NHWC'), ValueError,
     'data_format'),
    ('spatial_3d_padding', call(vol, ((1, 1), (1, 1))), ValueError, 'padding'),
    ('stack', call([V(2, 3), V(3, 3)]), ValueError, 'x'),
    ('stack', call([x2, x2], axis=5), ValueError, 'axis'),
    ('one_hot', call(np.array([0, 1]), -3), ValueError, 'num_classes'),
    ('one_hot', call(np.array([0, 1]), 2.5), TypeError, 'num_classes'),
    ('reverse', call(x2, 2), ValueError, 'axes'),
    ('slice', call(x2, [0, 0], [3, 1]), ValueError, 'size'),
    ('slice', call(x2, [0], [1, 1]), ValueError, 'start'),
    ('pattern_broadcast', call(x2, (True,)), ValueError, 'broadcastable'),
    # Values, functions and gradients
    ('get_value', call(None), TypeError, 'x'),
    ('batch_get_value', call(None), TypeError, 'ops'),
    ('set_value', call(x2, np.ones((3, 3))), ValueError, 'value'),
    ('set_value', call(x2, 'abc'), TypeError, 'value'),
    ('batch_set_value', call([(x2, np.ones(4))]), ValueError, 'tuples[0][1]'),
    ('get_variable_shape', call(None), TypeError, 'x'),
    ('print_tensor', call(x2, None), TypeError, 'message'),
    ('function', call(None, [x2]), TypeError, 'inputs'),
    ('function', call([P(None, 3)], [None]), TypeError, 'outputs'),
    ('gradients', call(None, [x2]), TypeError, 'loss'),
    ('stop_gradient', call(None), TypeError, 'variables'),
    ('control_dependencies', call(), TypeError, 'control_inputs'),
    ('symbolic', call(3), TypeError, 'func'),
    ('eager', call(None), TypeError, 'func'),
    # Control flow
    ('rnn', call(None, seq, [V(2, 3)]), TypeError, 'step_function'),
    ('rnn', call(lambda x, s: (x, s), x2, [V(2, 3)]), ValueError, 'inputs'),
    ('switch', call(V(2, 3, 4), x2, x2), ValueError, 'condition'),
    ('in_train_phase', call(x2, x2, training='yes'), TypeError, 'training'),
    ('in_test_phase', call(None, x2), TypeError, 'x'),
    # Activations and losses
    ('relu', call(x2, alpha='a'), TypeError, 'alpha'),
    ('elu', call(None), TypeError, 'x'),
    ('softmax', call(x2, axis=9), ValueError, 'axis'),
    ('softplus', call(None), TypeError, 'x'),
    ('softsign', call(None), TypeError, 'x'),
    ('categorical_crossentropy', call(V(2, 3), V(2, 4)), ValueError, 'target'),
    ('sparse_categorical_crossentropy', call(V(2, 3, 4), V(2, 3)), ValueError, 'target'),
    ('binary_crossentropy', call(V(2, 3), V(3, 3)), ValueError, 'output'),
    ('sigmoid', call(None), TypeError, 'x'),
    ('hard_sigmoid', call(None), TypeError, 'x'),
    ('tanh', call(None), TypeError, 'x'),
    ('dropout', call(x2, 1.5), ValueError, 'level'),
    ('l2_normalize', call(x2, axis=7), ValueError, 'axis'),
    ('in_top_k', call(x2, np.array([0, 1]), -1), ValueError, 'k'),
    ('in_top_k', call(x2, np.array([0, 1, 2]), 1), ValueError, 'targets'),
    # Convolution and pooling
    ('conv1d', call(seq, V(2, 4, 2)), ValueError, 'kernel'),
    ('conv1d', call(seq, V(2, 3, 2), padding='wide'), ValueError, 'padding'),
    ('conv2d', call(img, k2, strides=(0, 0)), ValueError, 'strides'),
    ('conv2d', call(img, V(2, 2, 5, 4)), ValueError, 'kernel'),
    ('conv2d', call(x2, k2), ValueError, 'x'),
    ('conv2d', call(img, k2, data_format='NHWC'), ValueError, 'data_format'),
    ('conv2d_transpose', call(img, V(2, 2, 4, 3), (1, 4, 4)), ValueError, 'output_shape'),
    # one int: TensorFlow's kernel aborted the process (found by tests/fuzz_api.py)
    ('conv2d_transpose', call(img, V(2, 2, 4, 3), 3), ValueError, 'output_shape'),
    ('separable_conv1d', call(seq, V(2, 3, 1), V(1, 4, 2)), ValueError, 'pointwise_kernel'),
    ('separable_conv2d', call(img, V(2, 2, 3, 1), V(1, 1, 3, 2), dilation_rate=(0, 1)),
     ValueError, 'dilation_rate'),
    ('depthwise_conv2d', call(img, V(2, 2, 5, 1)), ValueError, 'depthwise_kernel'),
    ('conv3d', call(vol, V(2, 2, 2, 2, 3), padding=3), TypeError, 'padding'),
    ('conv3d_transpose', call(vol, V(2, 2, 2, 3, 2), (1, 4, 4, 4, 3), strides=(1, 0, 1)),
     ValueError, 'strides'),
    ('pool2d', call(img, (0, 0)), ValueError, 'pool_size'),
    ('pool2d', call(img, (2, 2), pool_mode='median'), ValueError, 'pool_mode'),
    ('pool3d', call(vol, (2, 2)), ValueError, 'pool_size'),
    ('bias_add', call(img, V(5)), ValueError, 'bias'),
    # Random
    ('random_normal', call((2, -1)), ValueError, 'shape'),
    ('random_uniform', call((2, 2), seed=1.5), TypeError, 'seed'),
    ('random_binomial', call((2, 2), p=1.5), ValueError, 'p'),
    ('truncated_normal', call((2, 2), stddev=-1.), ValueError, 'stddev'),
    # CTC
    ('ctc_label_dense_to_sparse', call(V(2, 3, 4), V(2)), ValueError, 'labels'),
    ('ctc_batch_cost', call(V(2, 3), V(2, 5), V(2, 1), V(2, 1)), ValueError, 'y_pred'),
    ('ctc_decode', call(V(2, 5, 4), np.array([5, 5]), beam_width=0), ValueError, 'beam_width'),
    # Higher-order functions
    ('map_fn', call(None, x2), TypeError, 'fn'),
    ('foldl', call(lambda a, b: a + b, None), TypeError, 'elems'),
    ('foldr', call(lambda a, b: a + b, V()), ValueError, 'elems'),
    # Locally connected
    ('local_conv1d', call(seq, V(4, 6, 2), (2,), (0,)), ValueError, 'strides'),
    ('local_conv2d', call(img, V(9, 12, 2), (2, 2), (1, 1), (3, 3, 1)), ValueError,
     'output_shape'),
    # Keras 1 aliases
    ('lesser', call(None, x2), TypeError, 'x'),
    ('lesser_equal', call(x2, None), TypeError, 'y'),
    ('deconv2d', call(img, V(2, 2, 4, 3), (1, 5, 5, 4), dim_ordering='xy'), ValueError,
     'dim_ordering'),
    ('asymmetric_temporal_padding', call(seq, -1, 1), ValueError, 'padding'),
]


def _ids():
    seen = {}
    out = []
    for row in BAD:
        seen[row[0]] = seen.get(row[0], 0) + 1
        out.append('%s-%d' % (row[0], seen[row[0]]))
    return out


def test_table_covers_every_public_name():
    covered = set(row[0] for row in BAD)
    missing = [n for n in list(api.API_NAMES) + list(api.LEGACY_NAMES) if n not in covered]
    assert missing == []


@pytest.mark.parametrize('name,make_call,error,argument', BAD, ids=_ids())
def test_bad_input_raises_clear_error(K, name, make_call, error, argument):
    import warnings
    args, kwargs = make_call(K)
    if any(a is TOO_MANY for a in args):
        args = [1]
    fn = getattr(K, name)
    saved = (common.floatx(), common.epsilon(), common.image_data_format(),
             common._FIXED_LEARNING_PHASE)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        with pytest.raises(Exception) as info:
            out = fn(*args, **kwargs)
            if hasattr(out, '__enter__'):      # context managers check on entry
                with out:
                    pass
    assert type(info.value) is error or (isinstance(info.value, error) and type(
        info.value).__module__.startswith('keras_backend')), (
        '%s raised %s: %s; expected %s' % (name, type(info.value).__name__, info.value,
                                           error.__name__))
    message = str(info.value)
    shown = name if name not in api.LEGACY_NAMES else ''
    assert shown in message and argument in message, (
        '%s: the message should name the function and the argument %r: %s'
        % (name, argument, message))
    assert saved == (common.floatx(), common.epsilon(), common.image_data_format(),
                     common._FIXED_LEARNING_PHASE), 'the failed call changed the configuration'


def test_state_intact_after_bad_calls(K):
    v = K.variable(np.arange(6, dtype='float32').reshape(2, 3))
    for bad in (lambda: K.set_value(v, np.ones((3, 3))), lambda: K.sum(v, axis=7),
                lambda: K.reshape(v, (4, 4))):
        with pytest.raises((ValueError, TypeError)):
            bad()
    np.testing.assert_array_equal(K.get_value(v), np.arange(6).reshape(2, 3))
    x = K.placeholder(shape=(None, 3))
    f = K.function([x], [K.sum(x, axis=1)])
    np.testing.assert_allclose(f([np.ones((2, 3), 'float32')])[0], [3., 3.])


def test_ctc_lengths_of_the_wrong_shape_are_refused(K):
    """ctc_batch_cost's input_length and label_length hold one length per sample (shape
    (samples, 1)): a static shape that says otherwise is refused when the loss is built,
    and fed values that do at run time, on every engine with our ValueError (never the
    engine's own shape error, never a number)."""
    yt, yp = K.placeholder(shape=(2, 4), dtype='int32'), K.placeholder(shape=(2, 2, 3))
    ok = K.placeholder(shape=(2, 1), dtype='int32')
    for name, bad in (('input_length', (3, 1)), ('label_length', (1, 1)),
                      ('input_length', (2, 2)), ('label_length', (2, 1, 1))):
        wrong = K.placeholder(shape=bad, dtype='int32')
        args = (wrong, ok) if name == 'input_length' else (ok, wrong)
        with pytest.raises(ValueError, match="ctc_batch_cost: argument '%s' must have" % name):
            K.ctc_batch_cost(yt, yp, *args)
    # batch sizes known only when fed
    yt, yp = K.placeholder(shape=(None, 4), dtype='int32'), K.placeholder(shape=(None, 2, 3))
    il, ll = (K.placeholder(shape=(None, 1), dtype='int32') for _ in range(2))
    f = K.function([yt, yp, il, ll], [K.ctc_batch_cost(yt, yp, il, ll)])
    labels = np.array([[0, 1, 0, 1], [0, 1, 0, 0]], 'int32')
    y_pred = np.full((2, 2, 3), 1. / 3, 'float32')
    two = np.array([[2], [2]], 'int32')
    np.testing.assert_allclose(f([labels, y_pred, two, np.array([[2], [1]], 'int32')])[0][:, 0],
                               [np.log(9.0), np.log(3.0)], rtol=1e-4)
    for il_value, ll_value in ((np.array([[2], [2], [2], [2]], 'int32'), two),
                               (two, np.array([[2]], 'int32'))):
        with pytest.raises(ValueError) as info:
            f([labels, y_pred, il_value, ll_value])
        assert type(info.value) is ValueError
        assert str(info.value).startswith(('ctc_batch_cost', 'function')), info.value
        if K.backend() == 'cntk':
            assert 'must have one entry per sample' in str(info.value)


def test_run_time_bad_values_raise_value_error(K):
    """Values known only when the graph runs: a CTC label sequence longer than its input
    (fed, and from constants), and, on CNTK (whose tensors hold indices as floats), gather
    indices that are not whole numbers in a constant or a variable: our ValueError, never
    the engine's error or a number."""
    y_pred = np.full((2, 2, 3), 1. / 3, 'float32')
    labels = np.array([[0, 1, 0, 1], [0, 1, 0, 0]], 'int32')
    lengths = np.array([[2], [2]], 'int32')
    too_long = np.array([[4], [1]], 'int32')
    yt, yp = K.placeholder(shape=(2, 4), dtype='int32'), K.placeholder(shape=(2, 2, 3))
    il, ll = K.placeholder(shape=(2, 1), dtype='int32'), K.placeholder(shape=(2, 1),
                                                                        dtype='int32')
    f = K.function([yt, yp, il, ll], [K.ctc_batch_cost(yt, yp, il, ll)])
    # a fitting call first: the check passes what fits (numpy reference: -log(1/9) and
    # -log(3/9) as in the docstring's example)
    ok = f([labels, y_pred, lengths, np.array([[2], [1]], 'int32')])[0]
    np.testing.assert_allclose(ok[:, 0], [np.log(9.0), np.log(3.0)], rtol=1e-4)
    for make in (lambda: f([labels, y_pred, lengths, too_long])[0],
                 lambda: K.eval(K.ctc_batch_cost(K.constant(labels, dtype='int32'),
                                                 K.constant(y_pred),
                                                 K.constant(lengths, dtype='int32'),
                                                 K.constant(too_long, dtype='int32')))):
        with pytest.raises(ValueError, match='ctc_batch_cost: a label sequence needs more '
                                             'time steps than its input has') as info:
            make()
        assert type(info.value) is ValueError
    # equal neighbours need a blank between them: [0, 0] needs 3 steps, not 2
    with pytest.raises(ValueError, match='ctc_batch_cost'):
        f([labels[::-1] * 0, y_pred, lengths, np.array([[2], [2]], 'int32')])
    ref = K.constant(np.arange(12.0).reshape(4, 3))
    for make in (K.constant, K.variable):
        index = make(np.array([0.5, 1.0], 'float32'))
        with pytest.raises((ValueError, TypeError), match="gather: argument 'indices'"):
            K.gather(ref, index)
    # indices fed through a placeholder: refused when it is built (a float placeholder;
    # CNTK holds every tensor as floats: there, the values are checked when fed)
    fed = K.placeholder(shape=(2,), dtype='float32')
    if K.backend() == 'cntk':
        g = K.function([fed], [K.gather(ref, fed)])
        np.testing.assert_array_equal(g([np.array([2., 0.], 'float32')])[0],
                                      np.arange(12.0).reshape(4, 3)[[2, 0]])
        with pytest.raises(ValueError, match=r"gather: argument 'indices' must hold whole "
                                             r"numbers .*got \[2\.7"):
            g([np.array([0., 2.7], 'float32')])
    else:
        with pytest.raises(TypeError, match="gather: argument 'indices'"):
            K.gather(ref, fed)
    if K.backend() == 'cntk':
        # a constant's values are known when the call is made: the shared check refuses
        # them as it refuses a float array (a fed value is checked when fed, above)
        with pytest.raises(TypeError, match="gather: argument 'indices' must hold integers"):
            K.gather(ref, K.constant(np.array([0.5, 1.0], 'float32')))
        np.testing.assert_array_equal(
            K.eval(K.gather(ref, K.constant(np.array([2.0, 0.0], 'float32')))),
            np.arange(12.0).reshape(4, 3)[[2, 0]])


def test_a_name_with_nothing_to_check_is_called_at_once_and_still_names_a_bad_call(
        monkeypatch):
    """``checks.wrap`` of a name whose spec checks nothing (``is_variable``) calls the function
    without binding first; a call that does not bind still raises the ``TypeError`` that names
    the function, and a ``TypeError`` raised inside the function reaches the caller as it was."""
    from keras_backend import checks

    class Ops(object):
        ENGINE = 'some_engine'
        HOLDS_EMPTY_TENSORS = True

        @staticmethod
        def is_tensor(x):
            return False

    calls = []

    def asks(x, strict=False):
        calls.append((x, strict))
        if x == 'inner':
            raise TypeError('raised inside')
        return 2 * x

    checked_calls = []
    real_check_call = checks.check_call

    def counted(*args):
        checked_calls.append(args[1])
        return real_check_call(*args)

    monkeypatch.setattr(checks, 'check_call', counted)
    checked = checks.wrap(asks, 'asks', Ops, ({}, []))
    assert checked(21) == 42 and checked(x=1, strict=True) == 2
    assert calls == [(21, False), (1, True)]
    assert checked_calls == []      # no binding, no checks: Keras asks is_variable a lot
    with pytest.raises(TypeError, match=r"^asks: too many positional arguments$"):
        checked(1, 2, 3)
    with pytest.raises(TypeError, match=r"^asks: missing a required argument: 'x'$"):
        checked()
    with pytest.raises(TypeError, match=r"^raised inside$"):
        checked('inner')
    assert len(calls) == 3      # the calls that did not bind never reached the function
    # an engine that cannot hold empty tensors checks every computing name for them
    Ops.HOLDS_EMPTY_TENSORS = False
    with pytest.raises(ValueError, match="asks: argument 'x' has an axis of 0 values"):
        checks.wrap(asks, 'asks', Ops, ({}, []))(np.zeros((2, 0)))
    assert checked_calls == ['asks']


def _binds_as_inspect(bind, sig, args, kwargs):
    """Assert that binder ``bind`` gives for ``(args, kwargs)`` what ``sig.bind`` +
    ``apply_defaults`` give, in their order, or raises inspect's ``TypeError``; 1 where the
    call binds, else 0."""
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        with pytest.raises(TypeError) as info:
            bind(args, kwargs)
        assert str(info.value) == str(e)
        return 0
    bound.apply_defaults()
    assert list(bind(args, kwargs).items()) == list(bound.arguments.items()), (sig, args, kwargs)
    return 1


def test_checked_calls_bind_as_inspect_does():
    """The checks' own binder (``checks._binder``, inspect's ``bind`` without its machinery)
    gives, for every API name's signature, the arguments ``Signature.bind`` +
    ``apply_defaults`` give, in their order; calls that do not bind raise inspect's
    ``TypeError``."""
    import inspect
    from keras_backend import backend as K, checks

    seen = by_code = 0
    for name in api.SPECS:
        fn = getattr(K, name, None)
        if fn is None:
            continue
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            continue
        binders = [checks._binder(sig)]
        from_code = checks._code_binder(inspect.unwrap(fn))
        if from_code is not None:      # the binder made at a name's first call
            binders.append(from_code)
            by_code += 1
        params = list(sig.parameters.values())
        plain = [p for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]
        calls = []
        required = [p.name for p in plain if p.default is p.empty]
        calls.append((tuple(range(len(required))), {}))                # positional
        calls.append(((), dict((n, i) for i, n in enumerate(required))))  # by name
        if plain:
            calls.append((tuple(range(len(plain))), {}))               # every one
            calls.append(((), dict((p.name, 7) for p in plain)))
        calls.append((tuple(range(len(plain) + 1)), {}))               # one too many
        calls.append(((), dict({'no_such_argument': 1},
                               **dict((n, 0) for n in required))))     # unknown name
        if required:
            calls.append(((0,), {required[0]: 1}))                     # given twice
            calls.append(((), {}))                                     # missing
        for args, kwargs in calls:
            for bind in binders:
                seen += _binds_as_inspect(bind, sig, args, kwargs)
    assert seen > 600
    assert by_code > 140


def test_a_binder_read_from_the_code_object_binds_as_inspect_does():
    """``checks._code_binder`` (a plain function's signature read from its code object, at a
    name's first call) gives what ``Signature.bind`` + ``apply_defaults`` give for
    keyword-only arguments and defaults too, and leaves ``*args`` / ``**kwargs``, wrapped
    functions and builtins to ``inspect``."""
    import functools
    import inspect
    from keras_backend import checks

    def f(a, b=2, *, c, d=None):
        return a

    def g(x, y, z=3):
        return x

    for fn, calls in ((f, [((1,), {'c': 3}), ((1, 5), {'c': 3, 'd': 4}), ((), {'a': 0, 'c': 1}),
                           ((1, 2, 3), {'c': 1}), ((1,), {}), ((1,), {'c': 1, 'e': 2})]),
                      (g, [((1, 2), {}), ((1, 2, 4), {}), ((1,), {'y': 2}), ((1,), {}),
                           ((1, 2), {'x': 1}), ((1, 2, 3, 4), {})])):
        bind = checks._code_binder(fn)
        sig = inspect.signature(fn)
        for args, kwargs in calls:
            _binds_as_inspect(bind, sig, args, kwargs)

    def h(*args, **kwargs):
        return args

    assert checks._code_binder(h) is None
    assert checks._code_binder(functools.wraps(g)(lambda *a: a)) is None
    assert checks._code_binder(len) is None
    assert checks._code_binder(functools.partial(g, 1)) is None
