"""Write a model file saved by an old Keras 2 release on that release's own backend.

The files it writes are the "anchors" of the Keras 2 file-format tests: they were
produced by the original Keras code (2.0.8, 2.1.6, 2.2.4) running on the original
TensorFlow 1.15 or Theano 1.0.5, never by keras_backend, so loading them on our
adapters checks compatibility with files that exist in the wild.

Usage::

    python tools/keras2_release_files.py OUTDIR

run by an interpreter that imports the Keras release under test (put its folder
FIRST on PYTHONPATH, ahead of any Keras installed in the environment), with
KERAS_BACKEND=tensorflow or KERAS_BACKEND=theano selecting Keras' own backend, and
a keras.json whose image_data_format is channels_last and floatx float32. Keras
2.0.8 and 2.1.6 read only ~/.keras/keras.json (not $KERAS_HOME), so point HOME at
a scratch folder. For example, with the environments built by
tools/setup_old_keras_anchors.sh::

    tmp=$(mktemp -d); mkdir -p $tmp/.keras
    echo '{"backend": "tensorflow", "image_data_format": "channels_last",
           "floatx": "float32", "epsilon": 1e-07}' > $tmp/.keras/keras.json
    HOME=$tmp KERAS_HOME=$tmp/.keras KERAS_BACKEND=tensorflow \\
        PYTHONPATH=/work/envs/keras-2.2.4 /work/envs/py37-tf115/bin/python \\
        tools/keras2_release_files.py tests/data/keras2_releases

For Theano (CPython 3.6, Theano 1.0.5) add
THEANO_FLAGS=base_compiledir=/tmp/theano-fixtures so that no shared compile
cache is touched.

The model: a functional model with two inputs, ``img`` (8, 8, 1) through
Conv2D(4, 3x3, same, relu) -> MaxPooling2D(2x2) -> Flatten -> Dense(8, relu), and
``seq`` (5, 3) through LSTM(4); both concatenated -> BatchNormalization ->
Dense(3, softmax). Compiled with Adam(lr=0.01), categorical cross-entropy and
accuracy, trained 2 epochs (batch 16) on 32 samples drawn from
numpy.random.RandomState(0).

It writes, in OUTDIR:

* ``keras-<version>-<backend>.h5``: ``model.save`` (architecture, weights,
  training configuration and optimizer state);
* ``keras-<version>-<backend>.npz``: the inputs ``img`` and ``seq``, the targets
  ``y``, ``predictions`` (``model.predict([img, seq])`` after training),
  ``weights_<i>`` for each of ``model.get_weights()`` and ``optimizer_<i>`` for
  each of ``model.optimizer.get_weights()``.

It then loads the .h5 back with ``keras.models.load_model`` in the same process,
prints the largest absolute difference of its predictions, weights and optimizer
state from the recorded ones, and exits with status 1 if the file does not give
them back (the optimizer state must not be empty). It prints the paths written.

The syntax is kept to CPython 3.6, on which the Theano 1.0.5 runs are made; the
script imports nothing from keras_backend.
"""
from __future__ import print_function

import os
import random
import sys

import numpy as np

N_SAMPLES = 32
N_CLASSES = 3
EPOCHS = 2
BATCH_SIZE = 16
# Loading must give the saved state back bit for bit; predictions are recomputed
# by the same code on the same backend, so they may differ only by rounding.
PREDICTION_TOLERANCE = 1e-5


def build_model(keras):
    from keras.layers import (BatchNormalization, Conv2D, Dense, Flatten, Input,
                              LSTM, MaxPooling2D, concatenate)
    from keras.models import Model

    img = Input(shape=(8, 8, 1), name='img')
    x = Conv2D(4, (3, 3), padding='same', activation='relu')(img)
    x = MaxPooling2D((2, 2))(x)
    x = Flatten()(x)
    x = Dense(8, activation='relu')(x)

    seq = Input(shape=(5, 3), name='seq')
    s = LSTM(4)(seq)

    merged = concatenate([x, s])
    merged = BatchNormalization()(merged)
    out = Dense(N_CLASSES, activation='softmax')(merged)

    model = Model(inputs=[img, seq], outputs=out)
    model.compile(optimizer=keras.optimizers.Adam(lr=0.01),
                  loss='categorical_crossentropy', metrics=['accuracy'])
    return model


def make_data():
    rng = np.random.RandomState(0)
    img = rng.uniform(size=(N_SAMPLES, 8, 8, 1)).astype('float32')
    seq = rng.normal(size=(N_SAMPLES, 5, 3)).astype('float32')
    labels = rng.randint(0, N_CLASSES, size=N_SAMPLES)
    y = np.eye(N_CLASSES, dtype='float32')[labels]
    return img, seq, y


def seed_everything(backend_name):
    """Seed what the run draws from.

    Keras draws its initial weights and the batch order from numpy's global
    generator, so the initial weights repeat from run to run. TensorFlow is
    also given a single-threaded session, so that its CPU kernels sum in one
    order. A rerun on TensorFlow may still train to slightly different numbers
    (one of a few outcomes, up to ~0.05 in the predictions): the Adam of these
    releases reads ``iterations`` for its step size with no ordering against
    the ``update_add`` that increments it in the same step, and which one the
    executor runs first varies. Nothing here depends on it: the files record
    the numbers of the run that wrote them.
    """
    np.random.seed(0)
    random.seed(0)
    if backend_name == 'tensorflow':
        import tensorflow as tf
        from keras import backend as K
        tf.set_random_seed(0)
        config = tf.ConfigProto(intra_op_parallelism_threads=1,
                                inter_op_parallelism_threads=1)
        K.set_session(tf.Session(config=config))


def max_abs_diff(a_list, b_list):
    if len(a_list) != len(b_list):
        return float('inf')
    diff = 0.0
    for a, b in zip(a_list, b_list):
        a = np.asarray(a)
        b = np.asarray(b)
        if a.shape != b.shape:
            return float('inf')
        if a.size:
            diff = max(diff, float(np.max(np.abs(a.astype('float64') -
                                                 b.astype('float64')))))
    return diff


def main(argv):
    if len(argv) != 2:
        print('usage: python %s OUTDIR' % argv[0], file=sys.stderr)
        return 2
    outdir = os.path.abspath(argv[1])

    import keras
    from keras import backend as K
    from keras.models import load_model

    backend_name = K.backend()
    wanted = os.environ.get('KERAS_BACKEND')
    if wanted and wanted != backend_name:
        print('KERAS_BACKEND=%s but Keras runs on %s' % (wanted, backend_name),
              file=sys.stderr)
        return 2
    if K.image_data_format() != 'channels_last' or K.floatx() != 'float32':
        print('keras.json must say image_data_format=channels_last and '
              'floatx=float32 (Keras reads %s; got %s, %s)'
              % (os.path.expanduser('~/.keras/keras.json'),
                 K.image_data_format(), K.floatx()), file=sys.stderr)
        return 2

    print('keras %s (%s) on %s, numpy %s, python %s'
          % (keras.__version__, os.path.dirname(keras.__file__), backend_name,
             np.__version__, sys.version.split()[0]))

    seed_everything(backend_name)
    img, seq, y = make_data()
    model = build_model(keras)
    model.fit([img, seq], y, epochs=EPOCHS, batch_size=BATCH_SIZE, verbose=0)

    predictions = model.predict([img, seq])
    weights = model.get_weights()
    optimizer_weights = model.optimizer.get_weights()

    if not os.path.isdir(outdir):
        os.makedirs(outdir)
    stem = os.path.join(outdir, 'keras-%s-%s' % (keras.__version__, backend_name))
    h5_path = stem + '.h5'
    npz_path = stem + '.npz'
    model.save(h5_path)
    arrays = {'img': img, 'seq': seq, 'y': y, 'predictions': predictions}
    for i, w in enumerate(weights):
        arrays['weights_%d' % i] = w
    for i, w in enumerate(optimizer_weights):
        arrays['optimizer_%d' % i] = w
    np.savez(npz_path, **arrays)

    # Load back in the same environment.
    loaded = load_model(h5_path)
    loaded_predictions = loaded.predict([img, seq])
    loaded_optimizer = loaded.optimizer.get_weights()
    pred_diff = max_abs_diff([predictions], [loaded_predictions])
    weight_diff = max_abs_diff(weights, loaded.get_weights())
    opt_diff = max_abs_diff(optimizer_weights, loaded_optimizer)
    print('load-back: predictions max abs diff %.3g, weights %.3g, '
          'optimizer weights %d saved / %d loaded, max abs diff %.3g'
          % (pred_diff, weight_diff, len(optimizer_weights),
             len(loaded_optimizer), opt_diff))

    print(h5_path)
    print(npz_path)

    ok = (pred_diff <= PREDICTION_TOLERANCE and weight_diff == 0.0 and
          len(loaded_optimizer) > 0 and opt_diff == 0.0)
    if not ok:
        print('the saved file does not give the model back', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
