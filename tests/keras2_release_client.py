"""Train, save and reload Keras models on an older Keras 2 release (2.0.x-2.2.x) on one of our
adapters; load the files that release saved on its own backends; print the results as JSON.

Run as a script in its own process, with the release first on ``PYTHONPATH`` (Keras picks its
backend once, at import)::

    PYTHONPATH=.venv/keras-2.2.4:. KERAS_BACKEND=keras_backend.jax_backend \\
        python tests/keras2_release_client.py [--files DIR] [model ...]

``keras_backend.keras2_compat.install()`` runs before ``import keras`` (Keras 2.0.x and 2.1.x
need that line to load an external backend; 2.2.x loads it and applies the module itself). Each
model (``mlp``, ``cnn``, ``lstm`` of ``keras2_client.build``) is compiled with ``adam`` and
``metrics=['accuracy']``, trained with ``fit(validation_split=0.2)`` on the digits, evaluated
and predicted, then ``model.save`` (HDF5, with the optimizer) and ``keras.models.load_model``
read it back; both copies then train one more batch. Every ``keras-<release>-<backend>.h5`` of
``--files`` saved by this release (``tools/keras2_release_files.py``, on Keras' own backends of
TensorFlow 1.15 and Theano 1.0.5) is loaded and compared with the ``.npz`` beside it. The last
line printed is one JSON object::

    {"keras": "2.2.4", "backend": "jax", "models": {name: {...}}, "files": {file: {...}}}

per model: ``history``, ``evaluate``, ``numpy`` ([loss, acc] from ``predict``),
``load_model_max_abs_diff`` (predictions), ``optimizer_weights`` (how many),
``optimizer_max_abs_diff`` (their values after ``load_model``), ``next_loss`` (the loss of one
more batch on the model and on its reloaded copy), or ``error``; per file:
``predict_max_abs_diff``, ``weights_max_abs_diff``, ``optimizer_weights`` ([found, saved]),
``optimizer_max_abs_diff``, or ``error``.
"""
from __future__ import print_function

import glob
import json
import os
import shutil
import sys
import tempfile
import traceback

import numpy as np

import keras_backend.keras2_compat

keras_backend.keras2_compat.install()   # Keras 2.0.x / 2.1.x: our adapter as their backend

import keras  # noqa: E402

from keras2_client import BATCH, build, load_data, numpy_metrics  # noqa: E402

EPOCHS = 4
MODELS = ('mlp', 'cnn', 'lstm')


def _max_diff(a, b):
    if len(a) != len(b):
        return float('inf')
    return max([float(np.max(np.abs(np.asarray(x, 'float64') - np.asarray(y, 'float64'))))
                if np.size(x) else 0.0 for x, y in zip(a, b)] or [0.0])


def run_model(name, data, workdir):
    (x_train, y_train), (x_test, y_test) = data
    np.random.seed(1)
    model, prep = build(name)
    model.compile(optimizer='adam', loss='categorical_crossentropy', metrics=['accuracy'])
    targets = keras.utils.to_categorical(y_train, 10)
    hist = model.fit(prep(x_train), targets, epochs=EPOCHS, batch_size=BATCH,
                     validation_split=0.2, verbose=0)
    evaluated = model.evaluate(prep(x_test), keras.utils.to_categorical(y_test, 10),
                               batch_size=BATCH, verbose=0)
    probs = model.predict(prep(x_test), batch_size=BATCH)
    path = os.path.join(workdir, name + '.h5')
    model.save(path)
    clone = keras.models.load_model(path)
    reloaded = clone.predict(prep(x_test), batch_size=BATCH)
    saved_state, loaded_state = model.optimizer.get_weights(), clone.optimizer.get_weights()
    batch = prep(x_train[:BATCH]), targets[:BATCH]
    next_loss = [float(np.ravel(m.train_on_batch(*batch))[0]) for m in (model, clone)]
    return {
        'history': dict((k, [float(v) for v in vs]) for k, vs in hist.history.items()),
        'evaluate': [float(v) for v in evaluated],
        'numpy': numpy_metrics(probs, y_test),
        'load_model_max_abs_diff': float(np.max(np.abs(reloaded - probs))),
        'optimizer_weights': len(loaded_state),
        'optimizer_max_abs_diff': _max_diff(saved_state, loaded_state),
        'next_loss': next_loss,
    }


def check_file(path):
    """Load ``path`` (saved by this release on Keras' own backend) and compare it with the
    arrays recorded beside it."""
    saved = np.load(path[:-len('.h5')] + '.npz')
    model = keras.models.load_model(path)
    predicted = model.predict([saved['img'], saved['seq']])
    weights = [saved['weights_%d' % i] for i in range(len(model.get_weights()))
               if 'weights_%d' % i in saved]
    optimizer = sorted(k for k in saved.files if k.startswith('optimizer_'))
    optimizer = [saved['optimizer_%d' % i] for i in range(len(optimizer))]
    found = model.optimizer.get_weights()
    layers = [np.asarray(w) for w in model.get_weights()]
    saved_on = os.path.basename(path)[:-len('.h5')].split('-')[-1]   # keras-<release>-<backend>
    if keras_backend.keras2_compat.need_kernel_conversion(saved_on, keras.backend.backend()):
        # the file's kernels were flipped on the way: compare with the recorded ones flipped
        from keras.utils.conv_utils import convert_kernel
        layers = [convert_kernel(w) if w.ndim == 4 else w for w in layers]
    return {
        'predict_max_abs_diff': float(np.max(np.abs(predicted - saved['predictions']))),
        'weights_max_abs_diff': _max_diff(layers, weights),
        'optimizer_weights': [len(found), len(optimizer)],
        'optimizer_max_abs_diff': _max_diff(found, optimizer),
    }


def main(argv):
    files_dir = None
    if argv[:1] == ['--files']:
        files_dir, argv = argv[1], argv[2:]
    names = argv or list(MODELS)
    data = load_data()
    workdir = tempfile.mkdtemp()
    results, files = {}, {}
    try:
        for name in names:
            try:
                results[name] = run_model(name, data, workdir)
            except Exception:
                results[name] = {'error': traceback.format_exc()}
            sys.stderr.write('%s: %s\n' % (name, 'error' if 'error' in results[name] else
                                           'acc %.4f' % results[name]['evaluate'][1]))
        pattern = os.path.join(files_dir or '', 'keras-%s-*.h5' % keras.__version__)
        for path in sorted(glob.glob(pattern)) if files_dir else []:
            try:
                files[os.path.basename(path)] = check_file(path)
            except Exception:
                files[os.path.basename(path)] = {'error': traceback.format_exc()}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    gpus = None
    if keras.__version__ < '2.2':
        # Keras 2.0-2.1 import the adapter as their TensorFlow module (JAX and PyTorch too);
        # their tests ask it for GPUs at import time (a skip of the GPU tests)
        try:
            from keras.backend import tensorflow_backend
            gpus = tensorflow_backend._get_available_gpus()
        except ImportError:
            pass            # Theano and CNTK: Keras imports no TensorFlow module
        except Exception:
            gpus = traceback.format_exc()
    print(json.dumps({'keras': keras.__version__, 'backend': keras.backend.backend(),
                      'gpus': gpus,
                      'models': results, 'files': files}))


if __name__ == '__main__':
    main(sys.argv[1:])
