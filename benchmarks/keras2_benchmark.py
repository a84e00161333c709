"""Keras 2.3.1 models trained with ``fit`` on keras_backend, against each engine's own Keras.

Five models, built from Keras' own layers and trained with ``fit`` and
``adam`` on scikit-learn's digits (``categorical_crossentropy``, batch 32):

* ``mlp``: Dense(64, relu) - Dropout(0.2) - BatchNormalization - Dense(10, softmax)
* ``cnn``: Conv2D(16, 3x3, same, relu) - MaxPooling2D(2x2) - Flatten - Dense(10)
* ``lstm``: LSTM(32) over the 8 rows of 8 pixels - Dense(10)
* ``gru``: GRU(32, dropout=0.1, recurrent_dropout=0.1) over the rows - Dense(10)
* ``bilstm``: Embedding(256, 16) - Bidirectional(LSTM(16)) - Dense(10), on
  16 tokens per image (each half row of 4 pixels, quantised to 4 levels,
  read as one base-4 number 0..255)

Sides, per engine (``--engine``):

* ``tensorflow`` (Python 3.9+): ours = Keras 2.3.1 with
  ``KERAS_BACKEND=keras_backend.tensorflow_backend``; anchors = ``tf_keras``
  (TensorFlow's maintained Keras 2) building the same layers in a
  ``Sequential``, once in graph mode (``tf.compat.v1.disable_eager_execution()``)
  and once in its default mode (``fit`` runs a ``tf.function``). The GRU is
  given ``reset_after=False`` there, Keras 2.3.1's default, so that both sides
  compute the same layer. Graph mode also sets
  ``tf.compat.v1.experimental.output_all_intermediates(True)``: without it
  tf_keras cannot train an RNN in graph mode on TensorFlow 2.21 (the error
  message names this fix). Without ``tf_keras`` the anchors are skipped (one
  line says why).
* ``pytensor`` (Python 3.9+): ours = Keras 2.3.1 with
  ``KERAS_BACKEND=keras_backend.theano_backend`` on PyTensor. Keras 2.3.1 has
  no backend of its own for PyTensor, so the only other side is ours without
  the BLAS that keras_backend links (``ours_noblas``, ``KERAS_BACKEND_BLAS=0``).
* ``jax`` (Python 3.11+): ours = Keras 2.3.1 with
  ``KERAS_BACKEND=keras_backend.jax_backend``; anchors = Keras 3 on JAX
  (``KERAS_BACKEND=jax``, the ``keras`` that TensorFlow installs), its own
  ``Sequential`` of the same layers and its own ``fit`` (one compiled train step), and
  ``tf_keras`` in its default mode as on ``tensorflow``. Keras 3 drops
  ``input_length`` and ``input_shape``: its models start with ``keras.Input`` of the same
  shape; its GRU is given ``reset_after=False`` as ``tf_keras``'s.
* ``cntk`` / ``theano`` (CPython 3.6, CNTK 2.7 / Theano 1.0.5, Keras 2.3.1
  installed; ``tools/setup_cntk_env.sh``): ours = Keras 2.3.1 with
  ``KERAS_BACKEND=keras_backend.cntk_backend`` (resp. ``theano_backend``);
  anchor = the same Keras 2.3.1 with its own backend, ``KERAS_BACKEND=cntk``
  (resp. ``theano``); on Theano also ``ours_noblas`` (``KERAS_BACKEND_BLAS=0``).

Every (side, model) pair trains in its own fresh process; the sides alternate
(their order rotates from round to round) and the medians over ``--rounds``
are printed. With ``--paired`` the processes of one round (one per side) live
at once: each trains its first epoch in turn, then the sides take turns epoch
by epoch (the order reversed each time), and the table gains the median over
all rounds of ours / anchor for the same epoch. On a shared machine whose
speed drifts for minutes at a time (this project's 2-core VMs), that ratio is
the one to quote: a slow stretch falls on both epochs of a pair.

All sides see the same data in the same batch order (the training digits,
shuffled once with a fixed seed, ``fit(shuffle=False)``) and start from the
same initial weights (numpy, seeded, set with ``set_weights``); dropout masks
are each framework's own.

Measured per run, with a Keras ``Callback`` (``on_epoch_begin`` /
``on_epoch_end``) and a clock read just before ``compile``:

* first epoch (s): from ``model.compile(...)`` to the end of epoch 1, so
  that building the training function (Theano/PyTensor C compilation,
  ``tf.function`` tracing, CNTK graph building) is included;
* steady (s / epoch): median of epochs 2..n;
* final loss: the training loss of the last epoch as ``fit`` reports it.

The ratio columns are ours / anchor (times): below 1.00x ours is faster.
Theano and PyTensor keep their on-disk compile cache between processes (as
for any user); ``--cold`` gives every process an empty one instead.
Commands, one per engine::

    .venv/bin/python benchmarks/keras2_benchmark.py --engine tensorflow
    .venv/bin/python benchmarks/keras2_benchmark.py --engine pytensor
    .venv/bin/python benchmarks/keras2_benchmark.py --engine jax
    .venv36/bin/python benchmarks/keras2_benchmark.py --engine cntk
    .venv36/bin/python benchmarks/keras2_benchmark.py --engine theano

Options: ``--rounds N`` (2), ``--epochs N`` (4), ``--models mlp,cnn,...``,
``--quick`` (1 round, 2 epochs), ``--paired`` (above), ``--scale N`` (the realistic
models on N times their samples: 16 on a GPU), ``--json PATH`` (save every run and the
medians), ``--repo PATH`` (the keras_backend checkout to benchmark; default:
the one this script lives in), ``--base-repo PATH`` (a second checkout, the code
before a change, run as side ``ours_base`` in the same alternating rounds: a
before/after table in one run). On Python 3.8+ Keras 2.3.1 is taken from
``$KERAS_BACKEND_KERAS2_PATH``, default ``.venv/keras2`` (see README), put
first on the worker's path, since TensorFlow's Keras 3 holds the name
``keras`` there. Python 3.6 compatible (the CNTK and Theano runs).
"""
from __future__ import print_function

import argparse
import json
import os
import platform
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import numpy as np

from engine_table import engines

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

MODELS = ('mlp', 'cnn', 'lstm', 'gru', 'bilstm')
#: models of the size people train (issue 38), on seeded random data: name -> (samples, batch)
REALISTIC = {'resnet': (1024, 128), 'lstm256': (1024, 128), 'gru256': (1024, 128),
             'transformer': (1024, 128), 'convlstm': (64, 8)}
ALL_MODELS = MODELS + tuple(sorted(REALISTIC))
BATCH = 32
SEED = 1
#: what a ``--paired`` worker prints when its first epoch is done, and before each later
#: epoch's seconds
PAIRED_READY = 'keras2_benchmark: first epoch done'
PAIRED_EPOCH = 'keras2_benchmark: epoch seconds'

#: the sides each engine configuration (the engine table's ``engine``) is compared with, in
#: the order they run after ours: (engine, side, label)
OTHER_SIDES = (
    ('tensorflow', 'tf_keras_graph', 'tf_keras graph mode'),
    ('tensorflow', 'tf_keras_default', 'tf_keras default mode (tf.function)'),
    ('pytensor', 'ours_noblas', 'keras_backend without BLAS (KERAS_BACKEND_BLAS=0)'),
    ('cntk', 'keras_cntk', 'Keras 2.3.1 own CNTK backend'),
    ('theano', 'keras_theano', 'Keras 2.3.1 own Theano backend'),
    ('theano', 'ours_noblas', 'keras_backend without BLAS (KERAS_BACKEND_BLAS=0)'),
    ('jax', 'keras3_jax', 'Keras 3 on JAX, its own fit'),
    ('torch', 'keras3_torch', 'Keras 3 on PyTorch, its own fit'),
    ('jax', 'tf_keras_default', 'tf_keras default mode (tf.function)'),
)
#: per engine configuration: the sides, ours first, as (name, label)
SIDES = dict((row.engine, [('ours', 'keras_backend')] +
              [(side, label) for engine, side, label in OTHER_SIDES if engine == row.engine])
             for row in engines.TABLE)
#: the engine's own module, whose __version__ is reported
ENGINE_MODULE = dict((row.engine, row.package) for row in engines.TABLE)
#: KERAS_BACKEND of our side, per engine
OUR_BACKEND = dict((row.engine, row.adapter) for row in engines.TABLE)
#: the engine configurations of the Theano adapter (the BLAS they link is reported)
THEANO_LIKE = tuple(row.engine for row in engines.configurations('theano'))
#: the engine configurations of Python 3.8+, where Keras 2.3.1 is not installed in the
#: environment but beside it (README: ``.venv/keras2``)
KERAS2_BESIDE = tuple(row.engine for row in engines.TABLE
                      if row.python[0] is not None and row.python[0] >= (3, 8))
#: the engine configurations of CPython 3.6 (CNTK 2.7, Theano 1.0.5)
PY36_ONLY = tuple(row.engine for row in engines.TABLE if row.runs_on((3, 6)))


# ---------------------------------------------------------------- data and models

def load_data():
    """The training digits of ``examples/digits.load_data``: 1438 images (8, 8) in [0, 1], labels."""
    sys.path.insert(0, os.path.join(ROOT, 'examples'))
    import digits
    return digits.load_data()[0]


def tokens(images):
    """16 tokens per image: each half row of 4 pixels quantised to 0..3, read in base 4 (0..255)."""
    q = np.round(images * 3).astype('int64').reshape(-1, 8, 2, 4)
    return (q * (4 ** np.arange(4))).sum(axis=-1).reshape(-1, 16).astype('int32')


def prepare(name, x):
    """The input array of model ``name`` (channels_last for the CNN)."""
    if name == 'mlp':
        return x.reshape(-1, 64)
    if name == 'cnn':
        return x[..., None]
    if name == 'bilstm':
        return tokens(x)
    return x


def build(name, layers, sequential, tf_keras, keras3=None):
    """Model ``name`` from ``layers``; ``tf_keras`` pins Keras 2.3.1's GRU variant;
    ``keras3`` (Keras 3's module) starts the model with ``keras3.Input`` instead of the
    first layer's ``input_shape`` / ``input_length``, which Keras 3 does not take."""
    shapes = {'mlp': (64,), 'cnn': (8, 8, 1), 'lstm': (8, 8), 'gru': (8, 8), 'bilstm': (16,)}
    if name not in shapes:
        raise ValueError('unknown model %r' % name)
    first = {} if keras3 is not None else {'input_shape': shapes[name]}
    if name == 'mlp':
        stack = [layers.Dense(64, activation='relu', **first),
                 layers.Dropout(0.2),
                 layers.BatchNormalization(),
                 layers.Dense(10, activation='softmax')]
    elif name == 'cnn':
        stack = [layers.Conv2D(16, (3, 3), padding='same', activation='relu', **first),
                 layers.MaxPooling2D((2, 2)),
                 layers.Flatten(),
                 layers.Dense(10, activation='softmax')]
    elif name == 'lstm':
        stack = [layers.LSTM(32, **first),
                 layers.Dense(10, activation='softmax')]
    elif name == 'gru':
        extra = {'reset_after': False} if (tf_keras or keras3 is not None) else {}
        stack = [layers.GRU(32, dropout=0.1, recurrent_dropout=0.1, **dict(first, **extra)),
                 layers.Dense(10, activation='softmax')]
    else:
        stack = [layers.Embedding(256, 16, **({} if keras3 is not None else
                                              {'input_length': 16})),
                 layers.Bidirectional(layers.LSTM(16)),
                 layers.Dense(10, activation='softmax')]
    if keras3 is not None:
        stack = [keras3.Input(shape=shapes[name], dtype='int32' if name == 'bilstm'
                              else 'float32')] + stack
    return sequential(stack)


def realistic_data(name, samples):
    """Seeded random inputs and targets of realistic model ``name``: (x, y, loss)."""
    rng = np.random.RandomState(SEED)
    if name == 'convlstm':
        # Keras' examples/conv_lstm.py, smaller: movies of 10 frames 24x24, the next frame
        x = rng.rand(samples, 10, 24, 24, 1).astype('float32')
        y = (np.roll(x, -1, axis=1) > 0.5).astype('float32')
        return x, y, 'binary_crossentropy'
    labels = rng.randint(0, 10, size=samples)
    y = np.eye(10, dtype='float32')[labels]
    if name == 'resnet':
        return rng.rand(samples, 32, 32, 3).astype('float32'), y, 'categorical_crossentropy'
    length = 64 if name == 'transformer' else 80
    return (rng.randint(0, 10000, size=(samples, length)).astype('int32'), y,
            'categorical_crossentropy')


def build_realistic(name, keras, keras3):
    """Realistic model ``name`` with the functional API of ``keras`` (Keras 2.3.1,
    ``tf_keras`` or Keras 3 when ``keras3``), the same layers on every side:

    * ``resnet``: 32x32x3, Conv2D(16) + BN, 3 stages (16, 32, 64 filters) x 2 residual
      blocks (Conv-BN-ReLU-Conv-BN + shortcut, 1x1 strided conv where the shape changes),
      global average pooling, Dense(10): 0.7M weights
    * ``lstm256`` / ``gru256``: Embedding(10000, 128) on 80 tokens, two LSTM(256) (GRU(256),
      Keras 2.3.1's ``reset_after=False``), Dense(10): 2.2M / 2.0M weights
    * ``transformer``: Embedding(10000, 128) on 64 tokens, one encoder block: Dense
      queries/keys/values, softmax attention through ``batch_dot`` (Keras 3: ``ops.matmul``),
      layer normalisation written out (mean, variance), a ReLU feed-forward of 256, global
      average pooling, Dense(10)
    * ``convlstm``: Keras' examples/conv_lstm.py at a third of its size: two ConvLSTM2D(16,
      3x3, same) each followed by BatchNormalization, Conv3D(1, 3x3x3, sigmoid)
    """
    layers = keras.layers
    ops = keras.ops if keras3 else keras.backend
    shapes = {'resnet': (32, 32, 3), 'lstm256': (80,), 'gru256': (80,),
              'transformer': (64,), 'convlstm': (None, 24, 24, 1)}
    inp = layers.Input(shape=shapes[name], dtype='float32' if name in ('resnet', 'convlstm')
                       else 'int32')
    if name == 'resnet':
        h = layers.Activation('relu')(layers.BatchNormalization()(
            layers.Conv2D(16, 3, padding='same')(inp)))
        for stage, filters in enumerate((16, 32, 64)):
            for block in range(2):
                strides = 2 if stage > 0 and block == 0 else 1
                y = layers.Conv2D(filters, 3, strides=strides, padding='same')(h)
                y = layers.Activation('relu')(layers.BatchNormalization()(y))
                y = layers.BatchNormalization()(layers.Conv2D(filters, 3, padding='same')(y))
                shortcut = h
                if strides != 1:
                    shortcut = layers.Conv2D(filters, 1, strides=strides)(h)
                h = layers.Activation('relu')(layers.Add()([y, shortcut]))
        h = layers.GlobalAveragePooling2D()(h)
        out = layers.Dense(10, activation='softmax')(h)
    elif name in ('lstm256', 'gru256'):
        h = layers.Embedding(10000, 128)(inp)
        if name == 'lstm256':
            h = layers.LSTM(256)(layers.LSTM(256, return_sequences=True)(h))
        else:
            h = layers.GRU(256, reset_after=False)(
                layers.GRU(256, reset_after=False, return_sequences=True)(h))
        out = layers.Dense(10, activation='softmax')(h)
    elif name == 'transformer':
        d = 128
        x = layers.Embedding(10000, d)(inp)
        q, k, v = layers.Dense(d)(x), layers.Dense(d)(x), layers.Dense(d)(x)
        if keras3:
            scores = lambda t: ops.matmul(t[0], ops.transpose(t[1], (0, 2, 1)))  # noqa: E731
            mix = lambda t: ops.matmul(t[0], t[1])  # noqa: E731
        else:
            scores = lambda t: ops.batch_dot(t[0], t[1], axes=(2, 2))  # noqa: E731
            mix = lambda t: ops.batch_dot(t[0], t[1], axes=(2, 1))  # noqa: E731
        a = layers.Lambda(lambda t: ops.softmax(scores(t) / np.sqrt(d).astype('float32')),
                          output_shape=(64, 64))([q, k])
        a = layers.Lambda(mix, output_shape=(64, d))([a, v])

        def norm(t):
            mean = ops.mean(t, axis=-1, keepdims=True)
            var = ops.mean(ops.square(t - mean), axis=-1, keepdims=True)
            return (t - mean) / ops.sqrt(var + 1e-6)
        h = layers.Lambda(norm, output_shape=(64, d))(layers.Add()([x, layers.Dense(d)(a)]))
        f = layers.Dense(d)(layers.Dense(256, activation='relu')(h))
        h = layers.Lambda(norm, output_shape=(64, d))(layers.Add()([h, f]))
        out = layers.Dense(10, activation='softmax')(layers.GlobalAveragePooling1D()(h))
    elif name == 'convlstm':
        h = inp
        for _ in range(2):
            h = layers.ConvLSTM2D(16, (3, 3), padding='same', return_sequences=True,
                                  recurrent_activation='sigmoid')(h)
            h = layers.BatchNormalization()(h)
        out = layers.Conv3D(1, (3, 3, 3), activation='sigmoid', padding='same')(h)
    else:
        raise ValueError('unknown model %r' % name)
    return keras.models.Model(inp, out)


def initial_weights(model, seed=SEED):
    """Seeded numpy weights for every layer of ``model``, the same on every side.

    Kernels (2-D and up): Glorot uniform; biases: zeros, with LSTM forget-gate
    biases at 1 (Keras' unit_forget_bias); BatchNormalization: gamma 1, beta 0,
    moving mean 0, moving variance 1.
    """
    rng = np.random.RandomState(seed)
    out = []
    for layer in model.layers:
        kind = type(layer).__name__
        shapes = [tuple(w.shape) for w in layer.get_weights()]
        if kind == 'BatchNormalization':
            values = [np.ones(s) if i in (0, 3) else np.zeros(s) for i, s in enumerate(shapes)]
        else:
            values = []
            for s in shapes:
                if len(s) >= 2:
                    receptive = int(np.prod(s[:-2])) if len(s) > 2 else 1
                    limit = np.sqrt(6.0 / (s[-2] * receptive + s[-1] * receptive))
                    values.append(rng.uniform(-limit, limit, size=s))
                else:
                    bias = np.zeros(s)
                    if kind in ('LSTM', 'Bidirectional'):
                        bias[s[0] // 4:s[0] // 2] = 1.0
                    values.append(bias)
        out.append((layer, [v.astype('float32') for v in values]))
    return out


# ---------------------------------------------------------------- worker (one side, one model)

def _import_framework(side):
    """Return (keras-like module, layers, Sequential, Callback, to_categorical, set_seed)."""
    if side.startswith('tf_keras'):
        import tensorflow as tf
        if side == 'tf_keras_graph':
            tf.compat.v1.disable_eager_execution()
            # without it, training an RNN in graph mode fails on TF 2.21 ("Connecting to
            # invalid output ... of source node .../while"), the error message names this fix
            tf.compat.v1.experimental.output_all_intermediates(True)
        import tf_keras as keras
        from tf_keras import layers
        from tf_keras.callbacks import Callback
        from tf_keras.models import Sequential
        from tf_keras.utils import to_categorical
        return keras, layers, Sequential, Callback, to_categorical, tf.random.set_seed
    if side.startswith('keras3_'):
        import keras   # Keras 3; KERAS_BACKEND=jax / torch (worker_env)
        from keras import layers
        from keras.callbacks import Callback
        from keras.models import Sequential
        from keras.utils import to_categorical
        return keras, layers, Sequential, Callback, to_categorical, keras.utils.set_random_seed
    if side.startswith('ours'):
        import keras_backend.keras2_compat
        keras_backend.keras2_compat.install()   # Keras 2.3.1 on Python 3.10+ (no-op on 3.6)
    try:
        import keras
    except Exception as err:
        from importlib.util import find_spec
        spec = find_spec('keras')
        raise RuntimeError('import keras failed (%s: %s); keras found at %s, this benchmark '
                           'needs Keras 2.3.1 first on the path (see KERAS_BACKEND_KERAS2_PATH)'
                           % (type(err).__name__, err, spec.origin if spec else 'nowhere'))
    from keras import layers
    from keras.callbacks import Callback
    from keras.models import Sequential
    from keras.utils import to_categorical
    return keras, layers, Sequential, Callback, to_categorical, None


def worker(engine, side, name, epochs, batch, scale=1, paired=False):
    """Train model ``name`` on ``side`` (a realistic model on ``scale`` times its samples);
    return the measurements as a dict. ``paired``: train the first epoch, then one more epoch
    each time the parent writes ``epoch`` on stdin (printing its seconds after
    ``PAIRED_EPOCH``), until it writes anything else."""
    x, y = load_data()
    keras, layers, sequential, callback_cls, to_categorical, set_seed = _import_framework(side)
    if side.startswith('ours') and keras.__version__ != '2.3.1':
        raise RuntimeError('found Keras %s at %s, this benchmark needs 2.3.1'
                           % (keras.__version__, os.path.dirname(keras.__file__)))
    if side.startswith('keras3_'):
        keras.config.set_floatx('float32')
        keras.config.set_image_data_format('channels_last')
    else:
        keras.backend.set_floatx('float32')
        keras.backend.set_image_data_format('channels_last')
    np.random.seed(SEED)
    if set_seed is not None:
        set_seed(SEED)

    class EpochTimer(callback_cls):
        def __init__(self):
            super(EpochTimer, self).__init__()
            self.begin, self.end = [], []

        def on_epoch_begin(self, epoch, logs=None):
            self.begin.append(time.perf_counter())

        def on_epoch_end(self, epoch, logs=None):
            self.end.append(time.perf_counter())

    if name in REALISTIC:
        model = build_realistic(name, keras, side.startswith('keras3_'))
        inputs, targets, loss = realistic_data(name, REALISTIC[name][0] * scale)
        batch = REALISTIC[name][1]
    else:
        model = build(name, layers, sequential, side.startswith('tf_keras'),
                      keras if side.startswith('keras3_') else None)
        inputs, targets = prepare(name, x), to_categorical(y, 10).astype('float32')
        loss = 'categorical_crossentropy'
    init = initial_weights(model)
    for layer, values in init:
        layer.set_weights(values)
    timer = EpochTimer()
    start = time.perf_counter()
    model.compile(optimizer='adam', loss=loss)
    build_times = train_function_build(keras, model) if side.startswith('ours') else {}
    if paired:
        losses = model.fit(inputs, targets, batch_size=batch, epochs=1, shuffle=False,
                           verbose=0, callbacks=[timer]).history['loss']
        print('\n' + PAIRED_READY)
        sys.stdout.flush()
        for line in iter(sys.stdin.readline, ''):
            if line.strip() != 'epoch':
                break
            losses += model.fit(inputs, targets, batch_size=batch, epochs=1, shuffle=False,
                                verbose=0, callbacks=[timer]).history['loss']
            print('%s %.6f' % (PAIRED_EPOCH, timer.end[-1] - timer.begin[-1]))
            sys.stdout.flush()
    else:
        losses = model.fit(inputs, targets, batch_size=batch, epochs=epochs, shuffle=False,
                           verbose=0, callbacks=[timer]).history['loss']
    epoch_s = [e - b for b, e in zip(timer.begin, timer.end)]
    later = sorted(epoch_s[1:])
    result = {
        'first_epoch_s': timer.end[0] - start,
        'epoch_s': epoch_s,
        'steady_s': float(np.median(later)) if later else None,
        'loss': [float(v) for v in losses],
        'final_loss': float(losses[-1]),
        'weight_shapes': [list(v.shape) for _, values in init for v in values],
        'keras': '%s %s' % (keras.__name__, keras.__version__),
        'backend': keras.backend.backend(),
        'samples': int(len(inputs)),
        'batch': int(batch),
        'python': platform.python_version(),
    }
    result.update(build_times)
    engine_mod = sys.modules.get(ENGINE_MODULE[engine])
    result['engine_version'] = str(getattr(engine_mod, '__version__', 'not imported'))
    ours = sys.modules.get('keras_backend')
    if ours is not None:
        result['keras_backend'] = os.path.dirname(os.path.abspath(ours.__file__))
    if engine in THEANO_LIKE:   # the BLAS the engine linked ('' = its fallback)
        config = sys.modules[ENGINE_MODULE[engine]].config
        result['blas_ldflags'] = str(config.blas.ldflags if engine == 'theano'
                                     else config.blas__ldflags)
    return result


def worker_main(args):
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
    try:
        result = worker(args.engine, args.worker, args.model, args.epochs, args.batch,
                        args.scale, args.paired)
    except Exception:
        lines = traceback.format_exc().strip().splitlines()
        result = {'error': lines[-1], 'traceback': '\n'.join(lines[-30:])}
    sys.stdout.flush()
    print('\n' + json.dumps(result))
    return 0


# ---------------------------------------------------------------- parent

def keras2_path():
    return os.environ.get('KERAS_BACKEND_KERAS2_PATH') or os.path.join(ROOT, '.venv', 'keras2')


def worker_env(engine, side, repo, cold_dir):
    """The environment of one worker process: Keras backend choice and module path."""
    env = dict(os.environ)
    path = [repo]
    if engine in KERAS2_BESIDE and side.startswith('ours'):
        if os.path.isdir(keras2_path()):
            path.insert(0, keras2_path())
    if env.get('PYTHONPATH'):
        path.append(env['PYTHONPATH'])
    env['PYTHONPATH'] = os.pathsep.join(path)
    env['KERAS_BACKEND_QUIET'] = '1'
    env.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
    env.pop('KERAS_BACKEND_BLAS', None)
    if side.startswith('ours'):
        env['KERAS_BACKEND'] = OUR_BACKEND[engine]
        if side == 'ours_noblas':
            env['KERAS_BACKEND_BLAS'] = '0'
    elif side in ('keras_cntk', 'keras_theano'):
        env['KERAS_BACKEND'] = side.split('_')[1]
    elif side.startswith('keras3_'):
        env['KERAS_BACKEND'] = side[len('keras3_'):]   # Keras 3's own backend name
    else:
        env.pop('KERAS_BACKEND', None)
    if cold_dir is not None and engine == 'jax' and side.startswith('ours'):
        # our JAX adapter keeps XLA's compiled programs under the Keras config folder
        # (Keras 3 keeps none unless its user asks)
        env['KERAS_HOME'] = cold_dir
    if cold_dir is not None:
        for var in ('THEANO_FLAGS', 'PYTENSOR_FLAGS'):
            flags = [f for f in env.get(var, '').split(',') if f]
            env[var] = ','.join(flags + ['base_compiledir=' + cold_dir])
    return env


def worker_command(args, side, name):
    """The command line of the worker process of ``side`` on ``name``."""
    cmd = [sys.executable, '-W', 'ignore', os.path.abspath(__file__), '--engine', args.engine,
           '--worker', side, '--model', name, '--epochs', str(args.epochs),
           '--batch', str(args.batch), '--scale', str(args.scale)]
    if args.paired:
        cmd.append('--paired')
    return cmd


def run_one(args, side, name):
    """Run one worker process; return its result dict (with 'error' on failure)."""
    cold_dir = tempfile.mkdtemp(prefix='k2bench-') if args.cold else None
    cmd = worker_command(args, side, name)
    repo = args.base_repo if side == 'ours_base' else args.repo
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=args.timeout,
                              env=worker_env(args.engine, side, repo, cold_dir))
    except subprocess.TimeoutExpired:
        return {'error': 'timed out after %d s' % args.timeout}
    finally:
        if cold_dir is not None:
            shutil.rmtree(cold_dir, ignore_errors=True)
    return worker_result(proc)


def worker_result(proc):
    """The result dict a finished worker process (``subprocess.run``'s) printed last, or
    one with 'error' (and the end of its stderr) when it printed none."""
    for line in reversed(proc.stdout.strip().splitlines()):
        if line.startswith('{'):
            return json.loads(line)
    err = [l for l in proc.stderr.strip().splitlines() if l.strip()]
    return {'error': 'worker exited %d: %s' % (proc.returncode, err[-1] if err else '(no output)'),
            'traceback': '\n'.join(err[-30:])}


class _PairedWorker(object):
    """One live ``--paired`` worker process: its lines arrive through a queue, so that a
    worker that hangs or dies is reported after ``timeout`` seconds."""

    def __init__(self, args, side, name):
        self.cold_dir = tempfile.mkdtemp(prefix='k2bench-') if args.cold else None
        self.timeout = args.timeout
        self.errors = tempfile.TemporaryFile(mode='w+')
        repo = args.base_repo if side == 'ours_base' else args.repo
        self.proc = subprocess.Popen(worker_command(args, side, name), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.errors,
                                     universal_newlines=True,
                                     env=worker_env(args.engine, side, repo, self.cold_dir))
        self.lines = queue.Queue()
        reader = threading.Thread(target=self._read)
        reader.daemon = True
        reader.start()

    def _read(self):
        for line in iter(self.proc.stdout.readline, ''):
            self.lines.put(line.strip())
        self.lines.put(None)

    def wait_for(self, prefix):
        """The first line starting with ``prefix`` (None when the worker ended without one);
        raises RuntimeError after the timeout."""
        while True:
            try:
                line = self.lines.get(timeout=self.timeout)
            except queue.Empty:
                raise RuntimeError('no answer in %d s' % self.timeout)
            if line is None or line.startswith(prefix):
                return line

    def epoch(self):
        """Train one more epoch; its seconds."""
        self.proc.stdin.write('epoch\n')
        self.proc.stdin.flush()
        line = self.wait_for(PAIRED_EPOCH)
        if line is None:
            raise RuntimeError('the worker ended during an epoch')
        return float(line[len(PAIRED_EPOCH):])

    def finish(self, error=None, line=None):
        """End the worker; its result dict. ``error``: the parent's reason to stop it;
        ``line``: the worker's result line when it has already printed it."""
        try:
            if error is None and line is None:
                self.proc.stdin.write('done\n')
                self.proc.stdin.flush()
                line = self.wait_for('{')
        except (RuntimeError, IOError, OSError) as exc:
            error = str(exc)
        finally:
            if self.proc.poll() is None:
                if error is not None:
                    self.proc.kill()
                self.proc.wait()
            if self.cold_dir is not None:
                shutil.rmtree(self.cold_dir, ignore_errors=True)
        if line:
            result = json.loads(line)
        else:
            self.errors.seek(0)
            err = [l for l in self.errors.read().strip().splitlines() if l.strip()]
            result = {'error': '%s (exit %s): %s' % (error or 'worker ended', self.proc.returncode,
                                                     err[-1] if err else 'no output'),
                      'traceback': '\n'.join(err[-30:])}
        self.errors.close()
        return result


def run_paired(args, order, name):
    """``--paired``: every side of ``order`` trains ``name`` in a live process at once. The
    first epochs run one process after the other, in ``order``; then each later epoch runs
    once on every side, one side at a time, the order reversed from one epoch to the next,
    so that the sides' epochs k are measured within seconds of each other. Returns {side:
    result dict}."""
    results, workers, failed = {}, [], {}
    for side in order:
        worker_ = _PairedWorker(args, side, name)
        try:
            line = worker_.wait_for((PAIRED_READY, '{'))
        except RuntimeError as exc:
            results[side] = worker_.finish(str(exc))
            continue
        if line == PAIRED_READY:
            workers.append((side, worker_))
        else:       # its error line, or None: ended without one
            results[side] = worker_.finish('ended before its first epoch', line)
    for epoch in range(1, args.epochs):
        for side, worker_ in (workers if epoch % 2 else workers[::-1]):
            if side not in failed:
                try:
                    worker_.epoch()
                except (RuntimeError, IOError, OSError) as exc:
                    failed[side] = str(exc)
    for side, worker_ in workers:
        results[side] = worker_.finish(failed.get(side))
    return results


def paired_ratios(ours, anchor):
    """Ours / anchor, epoch by epoch, over the steady epochs both runs measured."""
    if 'error' in ours or 'error' in anchor:
        return []
    return [o / a for o, a in zip(ours['epoch_s'][1:], anchor['epoch_s'][1:]) if a > 0]


def train_function_build(keras, model):
    """Build Keras 2.3.1's train function now (``fit`` would build it first); return
    ``{'build_s': ..., 'function_s': ...}``: the seconds spent building the graph on the
    Python side (the layers' losses, the optimizer's updates: every backend call Keras
    makes), and the seconds inside ``K.function`` (where the engine prepares or compiles
    the program)."""
    backend = keras.backend
    function = backend.function
    inside = []

    def timed_function(*args, **kwargs):
        begin = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            inside.append(time.perf_counter() - begin)

    backend.function = timed_function
    try:
        begin = time.perf_counter()
        model._make_train_function()
        total = time.perf_counter() - begin
    finally:
        backend.function = function
    return {'build_s': total - sum(inside), 'function_s': sum(inside)}


def describe(result):
    if 'error' in result:
        return 'ERROR %s' % result['error']
    steady = result['steady_s']
    return 'first %.3fs  steady %s  loss %.4f' % (
        result['first_epoch_s'], '%.3fs' % steady if steady is not None else 'n/a',
        result['final_loss'])


def summarize(runs):
    """Medians over the successful runs: {first, steady, loss, ok, n, error}."""
    good = [r for r in runs if 'error' not in r]
    out = {'n': len(runs), 'ok': len(good)}
    if not good:
        out['error'] = runs[-1]['error'] if runs else 'not run'
        return out
    out['first'] = float(np.median([r['first_epoch_s'] for r in good]))
    steady = [r['steady_s'] for r in good if r['steady_s'] is not None]
    out['steady'] = float(np.median(steady)) if steady else None
    out['loss'] = float(np.median([r['final_loss'] for r in good]))
    for key in ('build_s', 'function_s'):
        values = [r[key] for r in good if key in r]
        out[key] = float(np.median(values)) if values else None
    return out


def _fmt(value, pattern):
    return 'n/a' if value is None else pattern % value


def _ratio(a, b):
    if a is None or b is None or b == 0:
        return 'n/a'
    return '%.2fx' % (a / b)


def _cell(summary, key, pattern):
    if 'error' in summary:
        return 'error'
    text = _fmt(summary.get(key), pattern)
    if summary['ok'] < summary['n']:
        text += ' (%d/%d ok)' % (summary['ok'], summary['n'])
    return text


def _median(values):
    return float(np.median(values)) if values else None


def print_table(models, ours, anchor, anchor_label, paired=None):
    """One markdown table: ours against one anchor (``anchor`` None: no anchor); ``paired``:
    model -> the median epoch-by-epoch steady ratio (``--paired``), a column of its own."""
    print('\nours: keras_backend, anchor: %s\n' % anchor_label)
    print('| model | ours first (s) | anchor first (s) | ratio | ours steady (s/epoch) '
          '| anchor steady (s/epoch) | ratio |%s ours loss | anchor loss |'
          % (' paired steady ratio |' if paired is not None else ''))
    print('|---|---|---|---|---|---|---|%s---|---|' % ('---|' if paired is not None else ''))
    for name in models:
        o = ours[name]
        a = anchor[name] if anchor is not None else {'n': 0, 'ok': 0, 'error': 'n/a'}
        na = anchor is None
        print('| %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            name,
            _cell(o, 'first', '%.3f'), 'n/a' if na else _cell(a, 'first', '%.3f'),
            _ratio(o.get('first'), a.get('first')),
            _cell(o, 'steady', '%.3f'), 'n/a' if na else _cell(a, 'steady', '%.3f'),
            _ratio(o.get('steady'), a.get('steady')) + (
                '' if paired is None else ' | ' + _fmt(paired.get(name), '%.2fx')),
            _cell(o, 'loss', '%.4f'), 'n/a' if na else _cell(a, 'loss', '%.4f')))


def preflight(engine):
    """Return (sides, notes); exit with one line when the engine cannot run here."""
    from importlib.util import find_spec
    need = ENGINE_MODULE[engine]
    if find_spec(need) is None:
        hint = (' (CNTK 2.7 and Theano 1.0.5 run under CPython 3.6: use the interpreter that '
                'tools/setup_cntk_env.sh builds, e.g. .venv36/bin/python)'
                if engine in PY36_ONLY else '')
        sys.exit('keras2_benchmark: %s is not importable by %s%s'
                 % (need, sys.executable, hint))
    sides, notes = list(SIDES[engine]), []
    if any(sd[0].startswith('tf_keras') for sd in sides) and find_spec('tf_keras') is None:
        sides = [sd for sd in sides if not sd[0].startswith('tf_keras')]
        notes.append('tf_keras is not installed for %s: skipping the tf_keras anchors '
                     '(install it: pip install --no-deps "tf-keras==<TensorFlow version>", '
                     'see benchmarks/README.md)' % sys.executable)
    if engine == 'pytensor':
        notes.append('pytensor: Keras 2.3.1 has no backend of its own for PyTensor; '
                     'the other side is ours without the BLAS (KERAS_BACKEND_BLAS=0)')
    return sides, notes


def parse_args():
    parser = argparse.ArgumentParser(description='Keras 2.3.1 fit() benchmark: keras_backend '
                                     'against each engine\'s own Keras (see module docstring)')
    parser.add_argument('--engine', required=True, choices=sorted(SIDES))
    parser.add_argument('--rounds', type=int, default=2)
    parser.add_argument('--epochs', type=int, default=4)
    parser.add_argument('--batch', type=int, default=BATCH)
    parser.add_argument('--models', default=','.join(MODELS),
                        help='comma-separated, from %s; realistic: all of %s'
                        % (','.join(ALL_MODELS), ','.join(sorted(REALISTIC))))
    parser.add_argument('--scale', type=int, default=1,
                        help='the realistic models train on this many times their samples '
                        '(e.g. 16 on a GPU: 16,384 for the 1,024 of the CNN)')
    parser.add_argument('--quick', action='store_true', help='smoke run: 1 round, 2 epochs')
    parser.add_argument('--json', metavar='PATH', help='save every run and the medians here')
    parser.add_argument('--repo', default=ROOT,
                        help='the keras_backend checkout to benchmark (default: %(default)s)')
    parser.add_argument('--base-repo', metavar='PATH',
                        help='a second keras_backend checkout (the code before a change), run '
                             'as side ours_base beside ours in the same alternating rounds')
    parser.add_argument('--cold', action='store_true',
                        help='an empty Theano/PyTensor compile cache for every process')
    parser.add_argument('--sides', help='comma-separated sides to run (default: all of the '
                        'engine\'s; e.g. ours)')
    parser.add_argument('--paired', action='store_true',
                        help='every side\'s process of a round lives at once and the sides '
                        'take turns epoch by epoch (a slower stretch of a shared machine hits '
                        'both sides of a pair); adds the median epoch-by-epoch ratio')
    parser.add_argument('--timeout', type=int, default=1800,
                        help='seconds per worker process (--paired: per answer of a worker)')
    parser.add_argument('--worker', help=argparse.SUPPRESS)
    parser.add_argument('--model', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.epochs = 1, 2
    return args


def main():
    args = parse_args()
    if args.worker:
        return worker_main(args)
    models = [m.strip() for m in args.models.split(',') if m.strip()]
    if models == ['realistic']:
        models = sorted(REALISTIC)
    unknown = [m for m in models if m not in ALL_MODELS]
    if unknown:
        sys.exit('keras2_benchmark: unknown model(s) %s; choose from %s (or realistic)'
                 % (', '.join(unknown), ', '.join(ALL_MODELS)))
    args.repo = os.path.abspath(args.repo)
    sides, notes = preflight(args.engine)
    if args.sides:
        wanted = [w.strip() for w in args.sides.split(',') if w.strip()]
        bad = [w for w in wanted if w not in [side for side, _ in sides]]
        if bad or 'ours' not in wanted:
            sys.exit('keras2_benchmark: --sides must name ours and sides of %s (%s); got %s'
                     % (args.engine, ', '.join(side for side, _ in sides), args.sides))
        sides = [sd for sd in sides if sd[0] in wanted]
    if args.base_repo:
        args.base_repo = os.path.abspath(args.base_repo)
        sides.insert(1, ('ours_base', 'keras_backend at %s' % args.base_repo))
    for note in notes:
        print(note)
    sys.stdout.flush()
    runs = dict((side, dict((m, []) for m in models)) for side, _ in sides)
    started = time.time()
    for r in range(args.rounds):
        order = sides[r % len(sides):] + sides[:r % len(sides)]
        for name in models:
            if args.paired:
                results = run_paired(args, [side for side, _ in order], name)
            for side, _ in order:
                result = results[side] if args.paired else run_one(args, side, name)
                runs[side][name].append(result)
                print('round %d/%d  %-6s  %-16s %s' % (r + 1, args.rounds, name, side,
                                                       describe(result)), file=sys.stderr)
                sys.stderr.flush()
    med = dict((side, dict((m, summarize(runs[side][m])) for m in models)) for side, _ in sides)
    paired = {}     # anchor -> model -> median of ours / anchor over every paired epoch
    for side, _ in (sides[1:] if args.paired else ()):
        paired[side] = dict(
            (m, _median([q for o, a in zip(runs['ours'][m], runs[side][m])
                         for q in paired_ratios(o, a)])) for m in models)

    good = [res for s in runs.values() for rs in s.values() for res in rs if 'error' not in res]
    info = good[0] if good else {}
    print('\nKeras 2.3.1 fit() on %s %s (Python %s): %d round(s) x %d epoch(s), adam; '
          'medians; %.0f s in all'
          % (args.engine, info.get('engine_version', '?'), platform.python_version(),
             args.rounds, args.epochs, time.time() - started))
    for name in models:
        if name in REALISTIC:
            print('%s: %d seeded random samples, batch %d'
                  % (name, REALISTIC[name][0] * args.scale, REALISTIC[name][1]))
        else:
            print('%s: 1438 training digits, batch %d, categorical_crossentropy'
                  % (name, args.batch))
    ours_dirs = sorted(set(res.get('keras_backend') for rs in runs['ours'].values() for res in rs
                           if res.get('keras_backend')))
    print('keras_backend from: %s' % (', '.join(ours_dirs) or '?'))
    for side, label in sides:
        linked = sorted(set(res['blas_ldflags'] for rs in runs[side].values() for res in rs
                            if 'blas_ldflags' in res))
        if linked:
            print('%s: blas ldflags %s' % (side, ' | '.join(repr(f) for f in linked)))
    print('first = compile + first epoch; steady = median of epochs 2..%d; '
          'ratio = ours / anchor time (below 1.00x: ours faster)' % args.epochs)
    if args.cold:
        print('cold: every process had an empty Theano/PyTensor compile cache')
    if args.paired:
        print('paired: per round, every side\'s process lives at once; after the first epochs '
              '(one process after the other) the sides take turns epoch by epoch; paired = '
              'median over all rounds of ours / anchor of the same epoch')
    for name in models:   # same layers on every side? (weights set from the same numpy arrays)
        shapes = set(json.dumps(res['weight_shapes']) for s in runs.values()
                     for res in s[name] if 'weight_shapes' in res)
        if len(shapes) > 1:
            print('WARNING: %s has different weight shapes on different sides: %s'
                  % (name, ' vs '.join(sorted(shapes))))
    for side, label in sides:
        for name in models:
            errors = sorted(set(res['error'] for res in runs[side][name] if 'error' in res))
            for err in errors:
                print('%s on %s failed: %s' % (name, side, err))
    print('\nKeras 2.3.1 train function, ours: build = the Python side (every backend call '
          'of the layers\' losses and the optimizer\'s updates); K.function = the call that '
          'prepares the engine program\n')
    print('| model | build (s) | K.function (s) |')
    print('|---|---|---|')
    for name in models:
        o = med['ours'][name]
        print('| %s | %s | %s |' % (name, _cell(o, 'build_s', '%.3f'),
                                     _cell(o, 'function_s', '%.3f')))
    anchors = sides[1:]
    if anchors:
        for side, label in anchors:
            print_table(models, med['ours'], med[side], label, paired.get(side))
    else:
        print_table(models, med['ours'], None, 'none (n/a)')
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'engine': args.engine, 'rounds': args.rounds, 'epochs': args.epochs,
                       'scale': args.scale,
                       'batch': args.batch, 'models': models, 'repo': args.repo,
                       'python': platform.python_version(), 'cold': args.cold,
                       'paired': args.paired, 'paired_steady_ratio': paired,
                       'sides': dict(sides), 'runs': runs, 'medians': med}, f, indent=1)
        print('\nsaved %s' % args.json)
    return 0


if __name__ == '__main__':
    sys.exit(main())
