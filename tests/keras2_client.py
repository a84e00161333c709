"""Train Keras 2.3.1 models on one keras_backend engine; print the results as JSON.

Run as a script in its own process (Keras picks its backend once, at import)::

    KERAS_BACKEND=keras_backend.cntk_backend python tests/keras2_client.py [model ...]

Keras 2.3.1 must be importable (``pip install keras==2.3.1`` on Python < 3.8,
or a folder on ``PYTHONPATH``, see README). Each model is built with Keras'
own layers on scikit-learn's digits, compiled with ``adam`` and
``metrics=['accuracy']``, trained with ``fit(validation_split=0.2)``, then
``evaluate`` and ``predict``ed; the weights are saved and loaded into a fresh
copy of the model. The last line printed is one JSON object::

    {"keras": "2.3.1", "backend": "...", "models": {name: {...}}}

with, per model: ``history`` (loss/acc/val_loss/val_acc per epoch),
``evaluate`` ([loss, acc]), ``numpy`` ([loss, acc] recomputed in numpy from
``predict``), ``reload_max_abs_diff`` (predictions after ``load_weights``),
``first_epoch_s``, ``epoch_s`` (median of the later epochs), or ``error``
(the traceback) when the model failed.
"""
from __future__ import print_function

import json
import os
import shutil
import sys
import tempfile
import time
import traceback

import numpy as np

import keras_backend.keras2_compat

keras_backend.keras2_compat.install()   # Keras 2.3.1 on Python 3.10+

import keras  # noqa: E402
from keras import layers  # noqa: E402
from keras.callbacks import Callback  # noqa: E402
from keras.models import Model, Sequential  # noqa: E402

EPOCHS = 6
BATCH = 32


def load_data():
    """Digits scaled to [0, 1], shuffled with a fixed seed; 1438 train / 359 test
    (``examples/digits.load_data``)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    'examples'))
    import digits
    return digits.load_data()


def _tokens(images):
    """Each image as 16 tokens: 2x2 blocks of pixels, summed and quantised to 0..16."""
    blocks = images.reshape(-1, 4, 2, 4, 2).sum(axis=(2, 4))      # 0..4
    return np.round(blocks.reshape(-1, 16) * 4).astype('int32')    # 0..16


def build(name):
    """Return (model, input transform) for model ``name``."""
    if name == 'mlp':
        model = Sequential([
            layers.Dense(64, activation='relu', input_shape=(64,)),
            layers.Dropout(0.2),
            layers.BatchNormalization(),
            layers.Dense(10, activation='softmax')])
        return model, lambda x: x.reshape(-1, 64)
    if name == 'cnn':
        if keras.backend.image_data_format() == 'channels_first':
            shape, prep = (1, 8, 8), (lambda x: x[:, None])
        else:
            shape, prep = (8, 8, 1), (lambda x: x[..., None])
        model = Sequential([
            layers.Conv2D(16, (3, 3), padding='same', activation='relu', input_shape=shape),
            layers.MaxPooling2D((2, 2)),
            layers.Flatten(),
            layers.Dense(10, activation='softmax')])
        return model, prep
    if name == 'lstm':
        model = Sequential([layers.LSTM(32, input_shape=(8, 8)),
                            layers.Dense(10, activation='softmax')])
        return model, lambda x: x
    if name == 'gru':
        model = Sequential([layers.GRU(32, dropout=0.1, recurrent_dropout=0.1,
                                       input_shape=(8, 8)),
                            layers.Dense(10, activation='softmax')])
        return model, lambda x: x
    if name == 'bilstm':
        model = Sequential([layers.Embedding(17, 16, input_length=16),
                            layers.Bidirectional(layers.LSTM(16)),
                            layers.Dense(10, activation='softmax')])
        return model, _tokens
    if name == 'two_inputs':
        top = layers.Input(shape=(32,))
        bottom = layers.Input(shape=(32,))
        merged = layers.concatenate([layers.Dense(32, activation='relu')(top),
                                     layers.Dense(32, activation='relu')(bottom)])
        out = layers.Dense(10, activation='softmax')(merged)
        model = Model([top, bottom], out)
        return model, lambda x: [x.reshape(-1, 64)[:, :32], x.reshape(-1, 64)[:, 32:]]
    raise ValueError('unknown model %r' % name)


MODELS = ('mlp', 'cnn', 'lstm', 'gru', 'bilstm', 'two_inputs')


class EpochTimer(Callback):
    def on_train_begin(self, logs=None):
        self.times = []
        self._start = time.time()

    def on_epoch_end(self, epoch, logs=None):
        now = time.time()
        self.times.append(now - self._start)
        self._start = now


def numpy_metrics(probs, labels):
    """Keras' categorical crossentropy (probabilities clipped to [eps, 1-eps]) and accuracy."""
    eps = keras.backend.epsilon()
    p = np.clip(probs / probs.sum(axis=-1, keepdims=True), eps, 1 - eps)
    loss = float(np.mean(-np.log(p[np.arange(len(labels)), labels])))
    acc = float(np.mean(np.argmax(probs, axis=-1) == labels))
    return [loss, acc]


def run_model(name, data, workdir):
    (x_train, y_train), (x_test, y_test) = data
    np.random.seed(1)
    model, prep = build(name)
    model.compile(optimizer='adam', loss='categorical_crossentropy', metrics=['accuracy'])
    timer = EpochTimer()
    hist = model.fit(prep(x_train), keras.utils.to_categorical(y_train, 10), epochs=EPOCHS,
                     batch_size=BATCH, validation_split=0.2, verbose=0, callbacks=[timer])
    evaluated = model.evaluate(prep(x_test), keras.utils.to_categorical(y_test, 10),
                               batch_size=BATCH, verbose=0)
    probs = model.predict(prep(x_test), batch_size=BATCH)
    path = os.path.join(workdir, name + '.h5')
    model.save_weights(path)
    clone, _ = build(name)
    clone.load_weights(path)
    reloaded = clone.predict(prep(x_test), batch_size=BATCH)
    later = sorted(timer.times[1:])
    return {
        'history': {k: [float(v) for v in vs] for k, vs in hist.history.items()},
        'evaluate': [float(v) for v in evaluated],
        'numpy': numpy_metrics(probs, y_test),
        'predict_shape': list(probs.shape),
        'reload_max_abs_diff': float(np.max(np.abs(reloaded - probs))),
        'first_epoch_s': timer.times[0],
        'epoch_s': later[len(later) // 2],
    }


def main(argv):
    names = argv or list(MODELS)
    data = load_data()
    workdir = tempfile.mkdtemp()
    results = {}
    try:
        for name in names:
            try:
                results[name] = run_model(name, data, workdir)
            except Exception:
                results[name] = {'error': traceback.format_exc()}
            sys.stderr.write('%s: %s\n' % (name, 'error' if 'error' in results[name] else
                                           'acc %.4f' % results[name]['evaluate'][1]))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps({'keras': keras.__version__, 'backend': keras.backend.backend(),
                      'models': results}))


if __name__ == '__main__':
    main(sys.argv[1:])
