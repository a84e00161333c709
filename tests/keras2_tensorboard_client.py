"""Keras 2's TensorBoard callback (any release, 2.0.8 to 2.3.1) on one of our adapters: train a
small model with every kind of summary, record what each summary must hold, print it as JSON.

Run as a script in its own process (Keras picks its backend once, at import), the release
first on ``PYTHONPATH``::

    PYTHONPATH=.venv/keras2:. KERAS_BACKEND=keras_backend.jax_backend \\
        python tests/keras2_tensorboard_client.py LOG_ROOT

Three runs, each in a folder of ``LOG_ROOT``:

* ``epoch``: ``TensorBoard(histogram_freq=1, batch_size=10, write_grads=True,
  write_images=True, embeddings_freq=1, ...)`` with 25 validation rows (batches of 10, 10
  and 5), a recorder callback after it noting, at each epoch's end, every weight, each
  layer's output over the validation rows (``K.function``, test phase), the gradient of the
  validation loss over all 25 rows at once (``K.gradients``), and the embeddings (Keras 2.2
  and later: the layers' outputs for ``embeddings_data``; 2.0 and 2.1: the Embedding
  layer's matrix);
* ``batch``: ``update_freq='batch'``, the recorder noting each batch's logs;
* ``samples``: ``update_freq=25`` (samples).

The last line printed is one JSON object: ``keras``, ``backend``, ``layers`` ([name, class,
[input layer names]]), and per run ``history`` and the recorder's notes.
"""
from __future__ import print_function

import json
import os
import sys

import numpy as np

import keras_backend.keras2_compat

keras_backend.keras2_compat.install()   # Keras 2.0.x / 2.1.x: our adapter as their backend

import keras  # noqa: E402
from keras import backend as K  # noqa: E402
from keras import layers  # noqa: E402

VOCAB, LENGTH, ROWS, VAL, EMBED_ROWS = 12, 5, 60, 25, 15
EPOCHS = 3


def data():
    rng = np.random.RandomState(7)
    x = rng.randint(0, VOCAB, (ROWS + VAL + EMBED_ROWS, LENGTH)).astype('int32')
    y = keras.utils.to_categorical(x.sum(axis=1) % 3, 3).astype('float32')
    return (x[:ROWS], y[:ROWS]), (x[ROWS:ROWS + VAL], y[ROWS:ROWS + VAL]), x[ROWS + VAL:]


def build():
    np.random.seed(3)
    inp = layers.Input(shape=(LENGTH,), dtype='int32', name='tokens')
    h = layers.Embedding(VOCAB, 4, name='embedding')(inp)
    h = layers.Flatten(name='flatten')(h)
    h = layers.Dense(6, activation='relu', name='hidden')(h)
    h = layers.Dropout(0.2, name='dropout')(h)
    out = layers.Dense(3, activation='softmax', name='out')(h)
    model = keras.models.Model(inp, out)
    model.compile(optimizer=keras.optimizers.SGD(lr=0.1), loss='categorical_crossentropy',
                  metrics=['accuracy'])
    return model


def _floats(a):
    return np.asarray(a, dtype='float64').tolist()


class Recorder(keras.callbacks.Callback):
    """What the TensorBoard callback before it must have written, computed independently."""

    def __init__(self, val, embed_x, old_embeddings):
        super(Recorder, self).__init__()
        self.val, self.embed_x, self.old = val, embed_x, old_embeddings
        self.epochs, self.batches = [], []
        self.functions = {}

    def function(self, key, inputs, outputs):
        """``K.function(inputs, outputs())``, made once."""
        if key not in self.functions:
            self.functions[key] = K.function(inputs, outputs())
        return self.functions[key]

    def on_batch_end(self, batch, logs=None):
        logs = dict(logs or {})
        self.batches.append(dict((k, float(v)) for k, v in logs.items()
                                 if k not in ('batch',)))

    def on_epoch_end(self, epoch, logs=None):
        model = self.model
        weights = [w for layer in model.layers for w in layer.weights]
        values = K.batch_get_value(weights)
        note = {'weights': dict((w.name.replace(':', '_'), _floats(v))
                                for w, v in zip(weights, values))}
        phase = [K.learning_phase()] if model.uses_learning_phase else []
        named = [(layer.name, layer.output) for layer in model.layers]
        f = self.function('outputs', list(model.inputs) + phase, lambda: [t for _, t in named])
        outs = f([self.val[0]] + ([0] if phase else []))
        note['outputs'] = dict((name + '_out', [float(np.min(o)), float(np.max(o)),
                                                float(np.sum(o, dtype='float64')), int(o.size)])
                               for (name, _), o in zip(named, outs))
        trainable = list(model.trainable_weights)
        g = self.function('grads', list(model.inputs) + list(model.targets) +
                          list(model.sample_weights) + phase,
                          lambda: K.gradients(model.total_loss, trainable))
        got = g([self.val[0], self.val[1], np.ones(len(self.val[0]), 'float32')] +
                ([0] if phase else []))
        note['grads'] = dict(('%s_grad' % w.name.replace(':', '_'),
                              [float(np.min(v)), float(np.max(v)),
                               float(np.sum(v, dtype='float64'))])
                             for w, v in zip(trainable, got))
        emb = [model.get_layer('embedding'), model.get_layer('hidden')]
        if self.old:
            mats = K.batch_get_value([layer.weights[0] for layer in emb])
        else:
            e = self.function('embed', list(model.inputs) + phase,
                              lambda: [layer.output for layer in emb])
            mats = [np.asarray(m).reshape(len(self.embed_x), -1)
                    for m in e([self.embed_x] + ([0] if phase else []))]
        note['embeddings'] = dict((layer.name, _floats(m)) for layer, m in zip(emb, mats))
        note['lr'] = float(K.get_value(model.optimizer.lr))
        self.epochs.append(note)


def _sources(layer):
    """The names of the layers feeding ``layer`` (Keras 2.0.x names its nodes
    ``inbound_nodes``, later releases ``_inbound_nodes``)."""
    nodes = getattr(layer, '_inbound_nodes', None)
    if nodes is None:
        nodes = layer.inbound_nodes
    names = set()
    for node in nodes:
        found = node.inbound_layers
        for source in (found if isinstance(found, (list, tuple)) else [found]):
            names.add(source.name)
    return sorted(names)


def main(root):
    root = os.path.abspath(root)
    release = tuple(int(p) for p in keras.__version__.split('.')[:3])
    old = release[:2] < (2, 2)
    (x, y), val, embed_x = data()
    result = {'keras': keras.__version__, 'backend': K.backend(), 'runs': {}}
    meta = os.path.join(root, 'labels.tsv')
    rows = VOCAB if old else EMBED_ROWS
    with open(meta, 'w') as f:
        f.write('label\tparity\n')
        for i in range(rows):
            f.write('row%d\t%d\n' % (i, i % 2))
    for run, kwargs in (('epoch', dict(histogram_freq=1, batch_size=10, write_grads=True,
                                       write_images=True, embeddings_freq=1,
                                       embeddings_layer_names=['embedding', 'hidden'],
                                       embeddings_metadata={'embedding': meta})),
                        ('batch', dict(update_freq='batch')),
                        ('samples', dict(update_freq=25))):
        if not old and run == 'epoch':
            kwargs['embeddings_data'] = embed_x
        model = build()
        if run == 'epoch':
            result['layers'] = [[layer.name, type(layer).__name__, _sources(layer)]
                                for layer in model.layers]
        board = keras.callbacks.TensorBoard(log_dir=os.path.join(root, run), **kwargs)
        recorder = Recorder(val, embed_x, old)
        history = model.fit(x, y, batch_size=10, epochs=EPOCHS, verbose=0, shuffle=False,
                            validation_data=val, callbacks=[board, recorder])
        result['runs'][run] = {
            'history': dict((k, [float(v) for v in vs]) for k, vs in history.history.items()),
            'epochs': recorder.epochs if run == 'epoch' else [],
            'batches': recorder.batches if run != 'epoch' else [],
            'callback_class': '%s.%s' % (type(board).__module__, type(board).__name__)}
    print(json.dumps(result))


if __name__ == '__main__':
    main(sys.argv[1])
