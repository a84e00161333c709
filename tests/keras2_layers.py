"""Train every layer class Keras 2.3.1 exports (``keras.layers``) once on one backend.

Run as a script, in its own process (Keras picks its backend once, at import)::

    KERAS_BACKEND=keras_backend.<engine>_backend python tests/keras2_layers.py

The classes are read from ``keras.layers`` itself (aliases such as ``Convolution2D`` count
once), so a layer Keras adds cannot be left out: each needs an entry of ``SPECS`` (how to
build it on a small input) or of ``NOT_TRAINED`` (why it has no branch here). Every layer
of ``SPECS`` is one branch of one model: an ``Input`` with a fixed-seed float input goes
through a ``Dense`` of the input's own width (so a gradient must pass through the layer
under test to reach it) into the layer; integer inputs (``Embedding``) go in directly. The
model is compiled with ``SGD(lr=0.05)`` and ``'mse'`` and trained one step
(``train_on_batch``); where that fails, each branch is trained alone to name the layer.
The last line printed is one JSON object::

    {"keras": "2.3.1", "backend": ..., "classes": [...], "missing": [...],
     "layers": {class: {"loss": ..., "changed": ..., "finite": ...} or {"error": ...}}}

``changed``: the largest change of the branch's trainable weights (the ``Dense`` in front
included) made by the step; ``finite``: every output and weight is finite.
"""
from __future__ import print_function

import inspect
import json
import sys
import traceback

import numpy as np

BATCH = 3

#: Keras 2.3.1 classes with no branch of their own, and why
NOT_TRAINED = {
    'Layer': 'the base class: every branch is one',
    'InputLayer': 'every branch starts with one (Input)',
    'Recurrent': "Keras 1's abstract recurrent base (keras.legacy), not instantiable",
    'ConvRecurrent2D': "Keras 1's abstract convolutional-recurrent base (keras.legacy)",
    'CuDNNGRU': 'Keras 2.3.1 builds it on TensorFlow only, with a CUDA GPU',
    'CuDNNLSTM': 'Keras 2.3.1 builds it on TensorFlow only, with a CUDA GPU',
}


def _specs(L):
    """class name -> (input shapes (one per input, per sample), builder, input dtype)."""
    from keras.layers.convolutional_recurrent import ConvRNN2D

    def one(layer, shape, dtype='float32'):
        return ([shape], lambda xs: layer()(xs[0]), dtype)

    def two(layer):
        return ([(4,), (4,)], lambda xs: layer()(xs), 'float32')

    s = {
        'Activation': one(lambda: L.Activation('tanh'), (4,)),
        'ActivityRegularization': one(lambda: L.ActivityRegularization(l1=.01, l2=.01), (4,)),
        'Add': two(L.Add),
        'AlphaDropout': one(lambda: L.AlphaDropout(.2), (4,)),
        'Average': two(L.Average),
        'AveragePooling1D': one(lambda: L.AveragePooling1D(2), (6, 2)),
        'AveragePooling2D': one(lambda: L.AveragePooling2D((2, 2)), (4, 4, 2)),
        'AveragePooling3D': one(lambda: L.AveragePooling3D((2, 2, 2)), (4, 4, 4, 2)),
        'BatchNormalization': one(L.BatchNormalization, (4, 4, 2)),
        'Bidirectional': one(lambda: L.Bidirectional(L.LSTM(2)), (4, 2)),
        'Concatenate': two(L.Concatenate),
        'Conv1D': one(lambda: L.Conv1D(2, 3), (6, 2)),
        'Conv2D': one(lambda: L.Conv2D(2, (3, 3)), (5, 5, 2)),
        'Conv2DTranspose': one(lambda: L.Conv2DTranspose(2, (3, 3), strides=(2, 2)), (3, 3, 2)),
        'Conv3D': one(lambda: L.Conv3D(2, (2, 2, 2)), (3, 3, 3, 2)),
        'Conv3DTranspose': one(lambda: L.Conv3DTranspose(2, (2, 2, 2)), (2, 2, 2, 2)),
        'ConvLSTM2D': one(lambda: L.ConvLSTM2D(3, (3, 3), padding='same'), (3, 4, 4, 2)),
        'ConvLSTM2DCell': one(lambda: ConvRNN2D(L.ConvLSTM2DCell(2, (3, 3))), (3, 4, 4, 1)),
        'Cropping1D': one(lambda: L.Cropping1D(1), (5, 2)),
        'Cropping2D': one(lambda: L.Cropping2D(1), (5, 5, 2)),
        'Cropping3D': one(lambda: L.Cropping3D(1), (4, 4, 4, 2)),
        'Dense': one(lambda: L.Dense(3), (4,)),
        'DepthwiseConv2D': one(lambda: L.DepthwiseConv2D((3, 3), depth_multiplier=2), (5, 5, 2)),
        'Dot': two(lambda: L.Dot(axes=1)),
        'Dropout': one(lambda: L.Dropout(.2), (4,)),
        'ELU': one(L.ELU, (4,)),
        'Embedding': one(lambda: L.Embedding(7, 3), (5,), 'int32'),
        'Flatten': one(L.Flatten, (3, 2)),
        'GRU': one(lambda: L.GRU(3), (4, 2)),
        'GRUCell': one(lambda: L.RNN(L.GRUCell(3)), (4, 2)),
        'GaussianDropout': one(lambda: L.GaussianDropout(.2), (4,)),
        'GaussianNoise': one(lambda: L.GaussianNoise(.1), (4,)),
        'GlobalAveragePooling1D': one(L.GlobalAveragePooling1D, (5, 2)),
        'GlobalAveragePooling2D': one(L.GlobalAveragePooling2D, (4, 4, 2)),
        'GlobalAveragePooling3D': one(L.GlobalAveragePooling3D, (3, 3, 3, 2)),
        'GlobalMaxPooling1D': one(L.GlobalMaxPooling1D, (5, 2)),
        'GlobalMaxPooling2D': one(L.GlobalMaxPooling2D, (4, 4, 2)),
        'GlobalMaxPooling3D': one(L.GlobalMaxPooling3D, (3, 3, 3, 2)),
        'Highway': one(L.Highway, (4,)),
        'LSTM': one(lambda: L.LSTM(3, return_sequences=True), (4, 2)),
        'LSTMCell': one(lambda: L.RNN(L.LSTMCell(3)), (4, 2)),
        'Lambda': one(lambda: L.Lambda(lambda t: t * 2. + 1.), (4,)),
        'LeakyReLU': one(lambda: L.LeakyReLU(.1), (4,)),
        'LocallyConnected1D': one(lambda: L.LocallyConnected1D(2, 3), (6, 2)),
        'LocallyConnected2D': one(lambda: L.LocallyConnected2D(2, (3, 3)), (5, 5, 2)),
        'Masking': one(L.Masking, (4, 2)),
        'MaxPooling1D': one(lambda: L.MaxPooling1D(2), (6, 2)),
        'MaxPooling2D': one(lambda: L.MaxPooling2D((2, 2)), (4, 4, 2)),
        'MaxPooling3D': one(lambda: L.MaxPooling3D((2, 2, 2)), (4, 4, 4, 2)),
        'Maximum': two(L.Maximum),
        'MaxoutDense': one(lambda: L.MaxoutDense(3, nb_feature=2), (4,)),
        'Minimum': two(L.Minimum),
        'Multiply': two(L.Multiply),
        'PReLU': one(L.PReLU, (4,)),
        'Permute': one(lambda: L.Permute((2, 1)), (3, 2)),
        'RNN': one(lambda: L.RNN(L.StackedRNNCells([L.SimpleRNNCell(2)]),
                                 return_sequences=True, go_backwards=True), (4, 2)),
        'ReLU': one(lambda: L.ReLU(max_value=1.5, negative_slope=.1), (4,)),
        'RepeatVector': one(lambda: L.RepeatVector(3), (4,)),
        'Reshape': one(lambda: L.Reshape((2, 2)), (4,)),
        'SeparableConv1D': one(lambda: L.SeparableConv1D(3, 3), (6, 2)),
        'SeparableConv2D': one(lambda: L.SeparableConv2D(3, (3, 3)), (5, 5, 2)),
        'SimpleRNN': one(lambda: L.SimpleRNN(3), (4, 2)),
        'SimpleRNNCell': one(lambda: L.RNN(L.SimpleRNNCell(3)), (4, 2)),
        'Softmax': one(L.Softmax, (4,)),
        'SpatialDropout1D': one(lambda: L.SpatialDropout1D(.2), (5, 2)),
        'SpatialDropout2D': one(lambda: L.SpatialDropout2D(.2), (4, 4, 2)),
        'SpatialDropout3D': one(lambda: L.SpatialDropout3D(.2), (3, 3, 3, 2)),
        'StackedRNNCells': one(lambda: L.RNN(L.StackedRNNCells([L.LSTMCell(3),
                                                                L.GRUCell(2)])), (4, 2)),
        'Subtract': two(L.Subtract),
        'ThresholdedReLU': one(lambda: L.ThresholdedReLU(theta=.1), (4,)),
        'TimeDistributed': one(lambda: L.TimeDistributed(L.Dense(2)), (3, 4)),
        'UpSampling1D': one(lambda: L.UpSampling1D(2), (3, 2)),
        'UpSampling2D': one(lambda: L.UpSampling2D((2, 2)), (3, 3, 2)),
        'UpSampling3D': one(lambda: L.UpSampling3D((2, 2, 2)), (2, 2, 2, 2)),
        'ZeroPadding1D': one(lambda: L.ZeroPadding1D(1), (3, 2)),
        'ZeroPadding2D': one(lambda: L.ZeroPadding2D(1), (3, 3, 2)),
        'ZeroPadding3D': one(lambda: L.ZeroPadding3D(1), (2, 2, 2, 2)),
    }
    return s


def layer_classes(keras):
    """The layer classes ``keras.layers`` exports, one name each: the class's own name where
    ``keras.layers`` exports it (``Conv2D``, not its alias ``Convolution2D``), else the
    first alias in sorted order."""
    from keras.engine.base_layer import Layer
    by_class = {}
    for name in sorted(vars(keras.layers)):
        value = getattr(keras.layers, name)
        if inspect.isclass(value) and issubclass(value, Layer):
            by_class.setdefault(value, []).append(name)
    names = []
    for cls, aliases in by_class.items():
        names.append(cls.__name__ if cls.__name__ in aliases else aliases[0])
    return sorted(names)


def _branch(name, spec, L):
    shapes, build, dtype = spec
    rs = np.random.RandomState(sum(map(ord, name)))
    inputs, values, feeds = [], [], []
    for i, shape in enumerate(shapes):
        x = L.Input(shape, dtype=dtype, name='in_%s_%d' % (name, i))
        inputs.append(x)
        if dtype == 'int32':
            values.append(rs.randint(0, 7, (BATCH,) + shape).astype('int32'))
            feeds.append(x)
        else:
            values.append(rs.uniform(-1., 1., (BATCH,) + shape).astype('float32'))
            feeds.append(L.Dense(shape[-1], name='pre_%s_%d' % (name, i))(x))
    out = build(feeds)
    return inputs, values, out


def _train(keras, branches, names):
    """One SGD step of the model made of ``names``' branches: {name: result}."""
    inputs, values, outputs = [], [], []
    for n in names:
        ins, vals, out = branches[n]
        inputs += ins
        values += vals
        outputs.append(out)
    model = keras.models.Model(inputs, outputs)
    model.compile(keras.optimizers.SGD(lr=.05), 'mse')
    rs = np.random.RandomState(0)
    targets = [rs.uniform(-.5, .5, (BATCH,) + tuple(keras.backend.int_shape(o)[1:]))
               .astype('float32') for o in outputs]
    layers = dict((n, [l for l in model.layers if _belongs(l, n, branches)]) for n in names)

    def weights():
        return dict((n, [w.copy() for l in ls for w in l.get_weights()])
                    for n, ls in layers.items())

    before = weights()
    pred = model.predict(values, batch_size=BATCH)
    pred = pred if isinstance(pred, list) else [pred]
    losses = model.train_on_batch(values, targets)
    losses = losses if isinstance(losses, list) else [losses]
    after = weights()
    out = {}
    per_output = losses[1:] if len(outputs) > 1 else losses
    for i, n in enumerate(names):
        out[n] = {'loss': float(per_output[i]),
                  'changed': max([float(np.abs(a - b).max())
                                  for a, b in zip(after[n], before[n])] or [0.]),
                  'finite': bool(np.isfinite(pred[i]).all()
                                 and all(np.isfinite(a).all() for a in after[n]))}
    return out


def _belongs(layer, name, branches):
    """True when ``layer`` is on ``name``'s branch (its Dense in front, or the layer)."""
    if layer.name.startswith('pre_%s_' % name):
        return True
    out = branches[name][2]
    return getattr(out, '_keras_history', (None,))[0] is layer


def main():
    import keras_backend.keras2_compat
    keras_backend.keras2_compat.install()   # Keras 2.3.1 on Python 3.10+ (no-op on 3.6)
    import warnings
    import keras
    from keras import layers as L
    specs = _specs(L)
    classes = layer_classes(keras)
    report = {'keras': keras.__version__, 'backend': keras.backend.backend(),
              'classes': classes, 'layers': {},
              'missing': [c for c in classes if c not in specs and c not in NOT_TRAINED]}
    only = set(sys.argv[1:])
    branches = {}
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')   # Keras 1 layers' deprecation, Theano's RNN dropout
        for name in sorted(specs):
            if only and name not in only:
                continue
            try:
                branches[name] = _branch(name, specs[name], L)
            except Exception:
                report['layers'][name] = {'error': traceback.format_exc()}
        try:
            report['layers'].update(_train(keras, branches, sorted(branches)))
        except Exception:
            for name in sorted(branches):   # each alone, to name the failing layer
                try:
                    report['layers'].update(_train(keras, branches, [name]))
                except Exception:
                    report['layers'][name] = {'error': traceback.format_exc()}
    print(json.dumps(report))


if __name__ == '__main__':
    main()
