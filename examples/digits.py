"""Train three models written only with the Keras backend API on real data.

The data is scikit-learn's bundled handwritten digits (``load_digits``: 1797
8x8 images, no download). Three models, each trained with plain SGD built from
``K.gradients`` and ``K.function(..., updates=...)``:

* ``mlp``: 64 -> 64 (relu) -> 10 (softmax);
* ``cnn``: conv2d 3x3x16 'same' (relu) -> pool2d 2x2 max -> dense 10, in the
  configured ``image_data_format``;
* ``rnn``: each image as 8 time steps of 8 pixels, a tanh RNN of 32 units
  built with ``K.rnn``, its last output -> dense 10.

The initial weights come from a seeded numpy generator, so every backend starts
from the same point. Run it on any engine::

    KERAS_BACKEND=theano python examples/digits.py --model all

It prints each model's accuracy on a held-out split (20%).
"""
from __future__ import print_function

import argparse
import sys
import time

import numpy as np

#: Accuracy each model must reach on the held-out split (issue #2).
TARGETS = {'mlp': 0.95, 'cnn': 0.90, 'rnn': 0.90}
#: (epochs, learning rate, batch size) per model.
SCHEDULES = {'mlp': (30, 0.1, 32), 'cnn': (20, 0.1, 32), 'rnn': (40, 0.1, 32)}


def load_data(seed=0):
    """Return ((x_train, y_train), (x_test, y_test)): x (n, 8, 8) in [0, 1], y int labels."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    x = (digits.images / 16.0).astype('float32')
    y = digits.target.astype('int64')
    order = np.random.RandomState(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_test = len(x) // 5
    return (x[n_test:], y[n_test:]), (x[:n_test], y[:n_test])


def glorot(rng, shape, fan_in, fan_out):
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, size=shape).astype('float32')


def initial_weights(name, seed=1):
    """The numpy initial weights of model ``name`` (identical on every backend)."""
    rng = np.random.RandomState(seed)
    if name == 'mlp':
        return [glorot(rng, (64, 64), 64, 64), np.zeros(64, 'float32'),
                glorot(rng, (64, 10), 64, 10), np.zeros(10, 'float32')]
    if name == 'cnn':
        return [glorot(rng, (3, 3, 1, 16), 9, 9 * 16), np.zeros(16, 'float32'),
                glorot(rng, (4 * 4 * 16, 10), 256, 10), np.zeros(10, 'float32')]
    if name == 'rnn':
        return [glorot(rng, (8, 32), 8, 32), glorot(rng, (32, 32), 32, 32),
                np.zeros(32, 'float32'), glorot(rng, (32, 10), 32, 10), np.zeros(10, 'float32')]
    raise ValueError('model: unknown name %r; expected one of %s' % (name, sorted(TARGETS)))


def backend_weights(K, name, seed=1):
    """``initial_weights`` as backend ``K`` expects them.

    Theano convolves (its ``conv2d`` flips the kernel, as Keras' Theano
    backend), TensorFlow and CNTK correlate; the CNN's kernel is converted
    with ``keras_backend.utils.convert_kernel`` on Theano, so every backend
    computes the same function from the same starting point.
    """
    weights = initial_weights(name, seed)
    if name == 'cnn' and K.backend() == 'theano':
        from keras_backend.utils import convert_kernel
        weights[0] = convert_kernel(weights[0])
    return weights


def model_input(K, name, x):
    """Shape the (n, 8, 8) images as model ``name`` expects them."""
    if name == 'mlp':
        return x.reshape(len(x), 64)
    if name == 'cnn':
        if K.image_data_format() == 'channels_first':
            return x.reshape(len(x), 1, 8, 8)
        return x.reshape(len(x), 8, 8, 1)
    return x


def forward(K, name, x, params):
    """The model's class probabilities, (batch, 10), as a backend tensor."""
    if name == 'mlp':
        w1, b1, w2, b2 = params
        h = K.relu(K.dot(x, w1) + b1)
        return K.softmax(K.dot(h, w2) + b2)
    if name == 'cnn':
        k, bk, w, b = params
        fmt = K.image_data_format()
        h = K.relu(K.bias_add(K.conv2d(x, k, padding='same', data_format=fmt), bk,
                              data_format=fmt))
        h = K.pool2d(h, (2, 2), strides=(2, 2), data_format=fmt, pool_mode='max')
        if fmt == 'channels_first':  # flatten in (rows, cols, channels) order
            h = K.permute_dimensions(h, (0, 2, 3, 1))
        return K.softmax(K.dot(K.batch_flatten(h), w) + b)
    wx, wh, bh, w, b = params

    def step(x_t, states):
        h_t = K.tanh(K.dot(x_t, wx) + K.dot(states[0], wh) + bh)
        return h_t, [h_t]

    h0 = K.zeros_like(K.sum(x, axis=2))            # (batch, 8)
    h0 = K.dot(h0, K.zeros((8, 32)))               # (batch, 32) zeros
    last, _, _ = K.rnn(step, x, [h0])
    return K.softmax(K.dot(last, w) + b)


def build(K, name, seed=1):
    """Return (train_step, predict, params) for model ``name``.

    ``train_step([x, y_onehot])`` runs one SGD step and returns ``[loss]``;
    ``predict([x])`` returns ``[probabilities]``.
    """
    params = [K.variable(w) for w in backend_weights(K, name, seed)]
    shape = {'mlp': (None, 64), 'rnn': (None, 8, 8),
             'cnn': (None, 1, 8, 8) if K.image_data_format() == 'channels_first'
             else (None, 8, 8, 1)}[name]
    x = K.placeholder(shape=shape)
    y = K.placeholder(shape=(None, 10))
    lr = SCHEDULES[name][1]
    probs = forward(K, name, x, params)
    loss = K.mean(K.categorical_crossentropy(y, probs))
    grads = K.gradients(loss, params)
    updates = [K.update_sub(p, lr * g) for p, g in zip(params, grads)]
    train_step = K.function([x, y], [loss], updates=updates)
    predict = K.function([x], [probs])
    return train_step, predict, params


def train_and_evaluate(K, name, epochs=None, seed=1, verbose=False):
    """Train model ``name`` on the digits with backend ``K``; return test accuracy."""
    (x_train, y_train), (x_test, y_test) = load_data()
    x_train, x_test = model_input(K, name, x_train), model_input(K, name, x_test)
    onehot = np.eye(10, dtype='float32')[y_train]
    n_epochs, _, batch = SCHEDULES[name]
    if epochs is not None:
        n_epochs = epochs
    train_step, predict, _ = build(K, name, seed)
    rng = np.random.RandomState(seed)
    for epoch in range(n_epochs):
        order = rng.permutation(len(x_train))
        losses = []
        for start in range(0, len(order), batch):
            idx = order[start:start + batch]
            losses.append(float(train_step([x_train[idx], onehot[idx]])[0]))
        if verbose:
            print('  %s epoch %d loss %.4f' % (name, epoch + 1, np.mean(losses)))
    pred = predict([x_test])[0]
    return float(np.mean(np.argmax(pred, axis=1) == y_test))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--model', choices=['mlp', 'cnn', 'rnn', 'all'], default='all')
    parser.add_argument('--epochs', type=int, default=None)
    parser.add_argument('--verbose', action='store_true')
    args = parser.parse_args(argv)
    from keras_backend import backend as K
    names = ['mlp', 'cnn', 'rnn'] if args.model == 'all' else [args.model]
    ok = True
    for name in names:
        start = time.time()
        acc = train_and_evaluate(K, name, args.epochs, verbose=args.verbose)
        passed = acc >= TARGETS[name]
        ok = ok and passed
        print('%s on %s: test accuracy %.4f (target %.2f, %s) in %.1f s'
              % (name, K.backend(), acc, TARGETS[name], 'met' if passed else 'MISSED',
                 time.time() - start))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
