"""A script as it was written for Keras 2.2.4 (2018), run unchanged on any engine of ours.

It trains an MLP on scikit-learn's handwritten digits with the idioms of its day
(``RMSprop(lr=..., decay=...)``, ``metrics=['accuracy']`` read back as ``'acc'``,
``model.save`` and ``load_model``) and prints the test accuracy before and after the reload.
Nothing in it names keras_backend; the engine is chosen as Keras 2.2 chose any external backend::

    PYTHONPATH=.venv/keras-2.2.4 KERAS_BACKEND=keras_backend.jax_backend \\
        .venv/bin/python examples/keras2_pinned.py

(Keras 2.0.x and 2.1.x also need ``import keras_backend.keras2_compat;
keras_backend.keras2_compat.install()`` before ``import keras``: README, "The Keras you pinned".)
"""
from __future__ import print_function

import os
import sys

import numpy as np
from sklearn.datasets import load_digits

import keras
from keras.layers import Dense, Dropout
from keras.models import Sequential, load_model
from keras.optimizers import RMSprop
from keras.utils import to_categorical

digits = load_digits()
x = (digits.data / 16.0).astype('float32')
y = to_categorical(digits.target, 10)
order = np.random.RandomState(0).permutation(len(x))
x, y = x[order], y[order]
x_train, y_train, x_test, y_test = x[:1400], y[:1400], x[1400:], y[1400:]

model = Sequential()
model.add(Dense(128, activation='relu', input_shape=(64,)))
model.add(Dropout(0.2))
model.add(Dense(10, activation='softmax'))
model.compile(loss='categorical_crossentropy', optimizer=RMSprop(lr=0.001, decay=1e-6),
              metrics=['accuracy'])
history = model.fit(x_train, y_train, batch_size=32, epochs=int(os.environ.get('EPOCHS', 10)),
                    verbose=0, validation_data=(x_test, y_test))
print('Keras %s on %s: val_acc per epoch %s' % (keras.__version__, keras.backend.backend(),
                                               ['%.3f' % a for a in history.history['val_acc']]))
score = model.evaluate(x_test, y_test, verbose=0)
path = sys.argv[1] if len(sys.argv) > 1 else 'digits_mlp.h5'
model.save(path)
reloaded = load_model(path)
print('test accuracy %.4f, after load_model %.4f' % (score[1], reloaded.evaluate(
    x_test, y_test, verbose=0)[1]))
