"""Carry a Keras 2.3.1 model from one engine to another: write its files here, read others'.

Run as a script, in its own process (Keras picks its backend once, at import), under any
Keras 2.3.1 backend: one of ours (``KERAS_BACKEND=keras_backend.<engine>_backend``) or Keras'
own (``KERAS_BACKEND=theano`` / ``cntk``)::

    python tests/keras2_portability.py save DIR      # weights, model file, predictions
    python tests/keras2_portability.py load DIR ...  # each DIR written by another engine

The model has one branch per layer Keras 2.3.1 converts between kernel conventions on load
(``Conv1D``, ``Conv2D``, ``Conv3D``, ``Conv2DTranspose``, ``ConvLSTM2D``, each in
channels_last and channels_first) and one branch of layers it does not convert (Embedding,
LSTM, GRU, Dense, BatchNormalization), one output each. Kernels of even size are used with
'valid' padding only: with 'same' padding, Keras' own Theano backend places an even window
one step earlier than every other engine (docs/semantics.md), so its predictions differ
whatever the file holds. Its weights are drawn from a fixed
seed and set with ``set_weights``: the values are the writing engine's own, in its
convention, as a trained model's would be.

``save`` writes ``weights.h5`` (``save_weights``), ``model.h5`` (``save``),
``predictions.npz`` (``predict`` on the fixed inputs) and ``engine.json`` (what
``keras.backend.backend()`` answered and the ``backend`` the files recorded).

``load`` prints one JSON line: per directory, the largest absolute difference of each
output's predictions from the writer's, after ``load_weights``, ``load_weights(by_name=True)``
and ``load_model`` (its weights, predicted by the model this process compiled once), and
under ``weights/<how>`` the largest difference of each branch's loaded weights from the
writer's (``weights.npz``) in this engine's kernel convention: the file's part alone, where an
engine computes a layer differently (Keras' own CNTK backend's LSTM outputs).
"""
from __future__ import print_function

import json
import os
import sys

import numpy as np

import keras_backend.keras2_compat

keras_backend.keras2_compat.install()   # Keras 2.3.1 on Python 3.10+ (no-op on 3.6)

import h5py  # noqa: E402
import keras  # noqa: E402
from keras import layers as L  # noqa: E402

BATCH = 3

#: branch name -> (input shape, builder of the branch's layers on that input, input kind)
def _branches():
    def conv1d(fmt):
        return lambda x: L.Conv1D(3, 3, padding='same', data_format=fmt, activation='tanh',
                                  name='conv1d_' + fmt)(x)

    def conv2d(fmt):
        return lambda x: L.Conv2D(3, (3, 2), padding='valid', data_format=fmt,
                                  activation='tanh', name='conv2d_' + fmt)(x)

    def conv3d(fmt):
        return lambda x: L.Conv3D(2, (2, 3, 2), padding='valid', data_format=fmt,
                                  activation='tanh', name='conv3d_' + fmt)(x)

    def conv2d_transpose(fmt):
        return lambda x: L.Conv2DTranspose(2, (3, 2), strides=(2, 1), padding='valid',
                                           data_format=fmt, activation='tanh',
                                           name='conv2dtranspose_' + fmt)(x)

    def conv_lstm2d(fmt):
        # its recurrent convolution is always 'same': an odd kernel
        return lambda x: L.ConvLSTM2D(2, (3, 3), padding='same', data_format=fmt,
                                      name='convlstm2d_' + fmt)(x)

    def embedding_lstm(x):
        h = L.Embedding(7, 4, name='embedding')(x)
        return L.LSTM(5, name='lstm')(h)

    def gru(x):
        return L.GRU(4, name='gru')(x)

    def dense_batchnorm(x):
        h = L.Dense(6, activation='tanh', name='dense')(x)
        return L.BatchNormalization(name='batchnorm')(h)

    out = []
    for fmt in ('channels_last', 'channels_first'):
        last = fmt == 'channels_last'
        out += [('conv1d_' + fmt, (7, 2) if last else (2, 7), conv1d(fmt), 'float'),
                ('conv2d_' + fmt, (5, 4, 2) if last else (2, 5, 4), conv2d(fmt), 'float'),
                ('conv3d_' + fmt, (3, 4, 3, 2) if last else (2, 3, 4, 3), conv3d(fmt), 'float'),
                ('conv2dtranspose_' + fmt, (3, 3, 2) if last else (2, 3, 3),
                 conv2d_transpose(fmt), 'float'),
                ('convlstm2d_' + fmt, (3, 4, 3, 2) if last else (3, 2, 4, 3),
                 conv_lstm2d(fmt), 'float')]
    out += [('embedding_lstm', (5,), embedding_lstm, 'int'),
            ('gru', (5, 3), gru, 'float'),
            ('dense_batchnorm', (4,), dense_batchnorm, 'float')]
    return out


BRANCHES = _branches()
NAMES = [b[0] for b in BRANCHES]


def build():
    """The model (a fresh one each call: same names, same architecture)."""
    inputs, outputs = [], []
    for name, shape, branch, kind in BRANCHES:
        x = L.Input(shape, dtype='int32' if kind == 'int' else None, name='in_' + name)
        inputs.append(x)
        h = branch(x)
        outputs.append(L.Flatten(name='out_' + name)(h) if len(keras.backend.int_shape(h)) > 2 else h)
    model = keras.models.Model(inputs, outputs)
    model.compile('sgd', 'mse')
    return model


def inputs():
    rs = np.random.RandomState(1)
    out = []
    for name, shape, branch, kind in BRANCHES:
        if kind == 'int':
            out.append(rs.randint(0, 7, (BATCH,) + shape).astype('int32'))
        else:
            out.append(rs.uniform(-1, 1, (BATCH,) + shape).astype('float32'))
    return out


def set_seeded_weights(model):
    """Weights of order 1 from a fixed seed; BatchNormalization's variances positive."""
    rs = np.random.RandomState(0)
    values = []
    for w in model.weights:
        shape = keras.backend.int_shape(w)
        v = rs.uniform(-0.6, 0.6, shape)
        if 'moving_variance' in w.name:
            v = 0.5 + np.abs(v)
        values.append(v.astype('float32'))
    model.set_weights(values)


def recorded_backend(path):
    with h5py.File(path, 'r') as f:
        name = f.attrs.get('backend')
        if name is None and 'model_weights' in f:
            name = f['model_weights'].attrs.get('backend')
    return name.decode('utf8') if isinstance(name, bytes) else (None if name is None
                                                                  else str(name))


def save(folder):
    if not os.path.isdir(folder):
        os.makedirs(folder)
    model = build()
    set_seeded_weights(model)
    preds = model.predict(inputs())
    np.savez(os.path.join(folder, 'predictions.npz'), **dict(zip(NAMES, preds)))
    np.savez(os.path.join(folder, 'weights.npz'), *model.get_weights())
    model.save_weights(os.path.join(folder, 'weights.h5'))
    model.save(os.path.join(folder, 'model.h5'))
    info = {'backend': keras.backend.backend(),
            'weights_file_backend': recorded_backend(os.path.join(folder, 'weights.h5')),
            'model_file_backend': recorded_backend(os.path.join(folder, 'model.h5'))}
    with open(os.path.join(folder, 'engine.json'), 'w') as f:
        json.dump(info, f)
    print(json.dumps(info))


#: Keras' kernel conventions: True where an engine flips kernels (Theano convolves)
FLIPPED = keras_backend.keras2_compat.FLIPPED_KERNELS
#: the layers whose kernels Keras converts, and which of their weights are kernels
CONVERTED = {'Conv1D': (0,), 'Conv2D': (0,), 'Conv3D': (0,), 'Conv2DTranspose': (0,),
             'ConvLSTM2D': (0, 1)}
#: layers of the branches with several layers
BRANCH_OF = {'embedding': 'embedding_lstm', 'lstm': 'embedding_lstm',
             'dense': 'dense_batchnorm', 'batchnorm': 'dense_batchnorm'}


def _expected_weights(model, values, writer):
    """The writer's weights as this engine must hold them after loading: kernels of the
    converted layers flipped on every spatial axis where the two conventions differ."""
    flip = FLIPPED[writer] != FLIPPED[keras.backend.backend()]
    out, i = [], 0
    for layer in model.layers:
        n = len(layer.weights)
        for j in range(n):
            v = values[i + j]
            if flip and j in CONVERTED.get(type(layer).__name__, ()):
                v = v[tuple([slice(None, None, -1)] * (v.ndim - 2) + [slice(None)] * 2)]
            out.append((BRANCH_OF.get(layer.name, layer.name), v))
        i += n
    return out


def _weight_diffs(model, expected):
    diffs = {}
    for (branch, want), got in zip(expected, model.get_weights()):
        d = float(np.max(np.abs(np.asarray(got) - want))) if np.size(want) else 0.
        diffs[branch] = max(diffs.get(branch, 0.), d)
    return diffs


def _diffs(preds, expected):
    return dict((n, float(np.max(np.abs(np.asarray(p) - expected[n]))))
                for n, p in zip(NAMES, preds))


def load(folders):
    x = inputs()
    model = build()
    report = {'backend': keras.backend.backend(), 'read': {}}
    for folder in folders:
        expected = dict(np.load(os.path.join(folder, 'predictions.npz')))
        with open(os.path.join(folder, 'engine.json')) as f:
            writer = json.load(f)['backend']
        stored = np.load(os.path.join(folder, 'weights.npz'))
        weights = _expected_weights(model, [stored['arr_%d' % i] for i in range(len(stored.files))],
                                    writer)
        entry = {}
        try:
            model.load_weights(os.path.join(folder, 'weights.h5'))
            entry['load_weights'] = _diffs(model.predict(x), expected)
            entry['weights/load_weights'] = _weight_diffs(model, weights)
            set_seeded_weights(model)   # other values, so by_name must load them again
            model.load_weights(os.path.join(folder, 'weights.h5'), by_name=True)
            entry['load_weights_by_name'] = _diffs(model.predict(x), expected)
            entry['weights/load_weights_by_name'] = _weight_diffs(model, weights)
            # the loaded model's weights predicted by the model compiled once here: compiling
            # one predict function per file costs minutes on the Theano engines, and what
            # load_model adds to load_weights is where the weights come from
            loaded = keras.models.load_model(os.path.join(folder, 'model.h5'))
            if [l.name for l in loaded.layers] != [l.name for l in model.layers]:
                raise AssertionError('load_model gave other layers: %s'
                                     % [l.name for l in loaded.layers])
            model.set_weights(loaded.get_weights())
            entry['load_model'] = _diffs(model.predict(x), expected)
            entry['weights/load_model'] = _weight_diffs(model, weights)
        except Exception as e:   # reported, so that one bad file does not hide the others
            import traceback
            entry['error'] = '%s: %s\n%s' % (type(e).__name__, e, traceback.format_exc()[-3000:])
        report['read'][folder] = entry
    print(json.dumps(report))


if __name__ == '__main__':
    if len(sys.argv) >= 3 and sys.argv[1] == 'save':
        save(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == 'load':
        load(sys.argv[2:])
    else:
        sys.exit('usage: keras2_portability.py save DIR | load DIR [DIR ...]')
