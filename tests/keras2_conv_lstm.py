"""Keras 2.3.1's ConvLSTM2D on one backend: predictions and one SGD step, printed as JSON.

Run as a script, in its own process (Keras picks its backend once, at import), under any
Keras 2.3.1 backend: one of ours (``KERAS_BACKEND=keras_backend.<engine>_backend``) or Keras'
own (``KERAS_BACKEND=theano`` / ``cntk``)::

    python tests/keras2_conv_lstm.py

Every case of ``CASES`` (both data formats; 'same' and 'valid' padding; input channels other
than the filters, where Keras 2.3.1 records a wrong shape on the initial state; masking,
statefulness, dropout, and ``ConvRNN2D`` over a ``ConvLSTM2DCell``) is a branch of one model
(one compile for all: the model's loss is the sum of the branches', so each branch's step is
its own), given the weights of ``data(case)`` with ``set_weights`` (in TensorFlow's kernel
convention; on Theano converted with Keras' ``convert_kernel``, as Keras converts a file's
weights), ``predict``ed twice (a stateful branch's second call starts from its states after
the first), then trained one step with ``SGD(lr=1.0)`` and ``'mse'`` (``train_on_batch``).
The last line printed is one JSON object::

    {"backend": ..., "cases": {name: {"predict": ..., "predict_again": ..., "loss": ...,
                                      "weights": [...]}}}

with the weights after the step in TensorFlow's convention, or ``{"error": traceback}``.
``tests/test_keras2_conv_lstm.py`` compares them with the numpy reference. Only numpy is
imported at module level (the test imports ``CASES`` and ``data``).
"""
from __future__ import print_function

import json
import sys
import traceback

import numpy as np

BATCH = 2
STEPS = 3
LR = 1.0   # a step of 1e-3 to 3e-2: an error of 0.1% of the gradient shows at atol 1e-5

#: name -> layer arguments and what the case exercises; 'shape' is one sample's input
#: (time, *image) in the case's data format
CASES = {
    # the layer: 1 input channel, 4 filters, 'same', the whole sequence
    'same_channels_last': dict(shape=(STEPS, 6, 6, 1), filters=4, padding='same',
                               data_format='channels_last', return_sequences=True),
    # 'valid', frames of zeros masked (Keras' own test's Masking5D): the last output is the
    # last unmasked step's
    'masked_valid_channels_first': dict(shape=(STEPS, 2, 5, 5), filters=3, padding='valid',
                                        data_format='channels_first', return_sequences=False,
                                        masked=True),
    # ConvRNN2D over a ConvLSTM2DCell, stateful: a second predict starts from the first
    # one's last states
    'stateful_cell_channels_first': dict(shape=(STEPS, 1, 5, 5), filters=2, padding='same',
                                         data_format='channels_first', return_sequences=True,
                                         stateful=True, cell=True),
    # predict runs without dropout; the step drops units (Keras drops the dropout on Theano)
    'dropout_masked_valid_channels_last': dict(shape=(STEPS, 5, 5, 2), filters=3,
                                               padding='valid', data_format='channels_last',
                                               return_sequences=False, masked=True,
                                               dropout=0.3),
}


def data(name):
    """``(x, y, [kernel, recurrent_kernel, bias])`` of case ``name``: fixed-seed inputs (the
    masked cases with frames of zeros), targets of the output's shape, and weights in
    TensorFlow's convention (cross-correlation)."""
    case = CASES[name]
    rs = np.random.RandomState(sorted(CASES).index(name))
    x = rs.uniform(-1., 1., (BATCH,) + case['shape']).astype('float32')
    if case.get('masked'):
        x[0, STEPS - 1] = 0.      # sample 0: its last frame masked
        x[1, 1] = 0.              # sample 1: a middle frame masked
    first = case['data_format'] == 'channels_first'
    cin = case['shape'][1] if first else case['shape'][-1]
    rows, cols = case['shape'][2:4] if first else case['shape'][1:3]
    if case['padding'] == 'valid':
        rows, cols = rows - 2, cols - 2
    f = case['filters']
    image = (f, rows, cols) if first else (rows, cols, f)
    out_shape = (BATCH, STEPS) + image if case['return_sequences'] else (BATCH,) + image
    y = rs.uniform(-.5, .5, out_shape).astype('float32')
    weights = [rs.uniform(-.4, .4, (3, 3, cin, 4 * f)).astype('float32'),
               rs.uniform(-.4, .4, (3, 3, f, 4 * f)).astype('float32'),
               rs.uniform(-.2, .2, (4 * f,)).astype('float32')]
    return x, y, weights


def _branch(name, L, K):
    from keras.layers.convolutional_recurrent import ConvRNN2D

    class Masking5D(L.Masking):
        """A (batch, time) mask: a frame of zeros is masked (Keras 2.3.1's own test)."""
        def compute_mask(self, inputs, mask=None):
            return K.any(K.not_equal(inputs, 0.), axis=[2, 3, 4])

    case = CASES[name]
    args = dict(filters=case['filters'], kernel_size=(3, 3), padding=case['padding'],
                data_format=case['data_format'], dropout=case.get('dropout', 0.),
                recurrent_dropout=case.get('dropout', 0.))
    rnn_args = dict(return_sequences=case['return_sequences'],
                    stateful=case.get('stateful', False), name='convlstm_' + name)
    x = L.Input(batch_shape=(BATCH,) + case['shape'], name='in_' + name)
    h = Masking5D()(x) if case.get('masked') else x
    if case.get('cell'):
        layer = ConvRNN2D(L.ConvLSTM2DCell(**args), **rnn_args)
    else:
        layer = L.ConvLSTM2D(**dict(args, **rnn_args))
    return x, layer, layer(h)


def run(names, keras, K):
    """One model holding a branch per case (one compile for all): its loss is the sum of the
    branches' own, so each branch's step is the step it takes alone."""
    from keras import layers as L
    from keras.utils.conv_utils import convert_kernel
    flip = K.backend() == 'theano'       # Keras' Theano backend: true convolutions

    def convention(ws):
        return [convert_kernel(w) if flip and w.ndim == 4 else w for w in ws]

    inputs, layers, outputs, xs, ys = [], [], [], [], []
    for name in names:
        x, y, weights = data(name)
        inp, layer, out = _branch(name, L, K)
        inputs.append(inp)
        layers.append(layer)
        outputs.append(out)
        xs.append(x)
        ys.append(y)
    model = keras.models.Model(inputs, outputs)
    model.compile(keras.optimizers.SGD(lr=LR), 'mse')
    for name, layer in zip(names, layers):
        layer.set_weights(convention(data(name)[2]))

    def predict():
        out = model.predict(xs, batch_size=BATCH)
        return out if isinstance(out, list) else [out]

    first = predict()
    again = predict()     # the stateful branches start from their states after the first
    model.reset_states()
    losses = model.train_on_batch(xs, ys)
    losses = losses[1:] if len(names) > 1 else [losses]
    report = {}
    for i, (name, layer) in enumerate(zip(names, layers)):
        report[name] = {'predict': first[i].tolist(), 'loss': float(losses[i]),
                        'weights': [w.tolist() for w in convention(layer.get_weights())]}
        if CASES[name].get('stateful'):
            report[name]['predict_again'] = again[i].tolist()
    return report


def main():
    import keras_backend.keras2_compat
    keras_backend.keras2_compat.install()   # Keras 2.3.1 on Python 3.10+ (no-op on 3.6)
    import warnings
    import keras
    from keras import backend as K
    report = {'keras': keras.__version__, 'backend': K.backend(), 'cases': {}}
    names = sys.argv[1:] or sorted(CASES)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')   # Keras' dropout warning on Theano
        try:
            report['cases'] = run(names, keras, K)
        except Exception:
            error = traceback.format_exc()
            report['cases'] = dict((name, {'error': error}) for name in names)
    print(json.dumps(report))


if __name__ == '__main__':
    main()
