"""Keras 2.3.1 on today's stack, run on one backend in its own process::

    KERAS_BACKEND=keras_backend.<engine>_backend python tests/keras2_today.py

* which modules ``import keras`` loaded (TensorFlow or not), its seconds and peak memory;
* a ``gs://`` path with TensorFlow made unimportable: the error Keras 2.3.1 then raises;
* ``keras.wrappers.scikit_learn.KerasClassifier`` and ``KerasRegressor`` in scikit-learn's
  ``GridSearchCV`` (2 candidates, 2 folds) on seeded data: the best parameters and score,
  and the numpy reference's accuracy of the refit classifier (its ``predict`` against
  ``argmax`` of its own ``predict_proba``), when scikit-learn is installed.

The last line printed is one JSON object.
"""
from __future__ import print_function

import json
import resource
import sys
import time
import traceback


def _peak_mib():
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024. / (1024. if sys.platform == 'darwin' else 1.)


def _gs_error(keras):
    """save_model to a gs:// path with TensorFlow unimportable: (type, message)."""
    if 'tensorflow' in sys.modules:
        return None
    sys.modules['tensorflow'] = None
    try:
        model = keras.models.Sequential([keras.layers.Dense(1, input_shape=(2,))])
        keras.models.save_model(model, 'gs://keras-backend-test-bucket/model.h5')
    except Exception as err:   # noqa: BLE001  (the type is the result)
        return [type(err).__name__, str(err)]
    finally:
        del sys.modules['tensorflow']
    return ['no error', '']


def _grid_search(keras):
    try:
        import sklearn
        from sklearn.model_selection import GridSearchCV
    except ImportError as err:
        return {'skip': 'scikit-learn is not importable here: %s' % err}
    import numpy as np
    from keras.wrappers.scikit_learn import KerasClassifier, KerasRegressor
    rng = np.random.RandomState(0)
    x = rng.randn(60, 4).astype('float32')
    labels = (x[:, 0] + x[:, 1] > 0).astype('int64')
    targets = (x.dot(np.array([1., -2., .5, 0.], dtype='float32'))).astype('float32')

    def classifier(units=4):
        model = keras.models.Sequential([
            keras.layers.Dense(units, activation='relu', input_shape=(4,)),
            keras.layers.Dense(2, activation='softmax')])
        model.compile('adam', 'sparse_categorical_crossentropy', metrics=['accuracy'])
        return model

    def regressor(units=4):
        model = keras.models.Sequential([
            keras.layers.Dense(units, activation='relu', input_shape=(4,)),
            keras.layers.Dense(1)])
        model.compile('adam', 'mse')
        return model
    out = {'sklearn': sklearn.__version__}
    search = GridSearchCV(KerasClassifier(classifier, epochs=2, batch_size=16, verbose=0),
                          {'units': [3, 5]}, cv=2)
    search.fit(x, labels)
    best = search.best_estimator_
    proba = best.predict_proba(x)
    out['classifier'] = {
        'best_params': search.best_params_, 'best_score': float(search.best_score_),
        'candidates': len(search.cv_results_['params']),
        'predict_matches_proba': bool(np.all(best.predict(x) == np.argmax(proba, axis=1))),
        'proba_rows_sum_to_one': float(np.max(np.abs(proba.sum(axis=1) - 1.))),
        'is_classifier': bool(sklearn.base.is_classifier(search.estimator)),
    }
    search = GridSearchCV(KerasRegressor(regressor, epochs=2, batch_size=16, verbose=0),
                          {'units': [3, 5]}, cv=2)
    search.fit(x, targets)
    out['regressor'] = {
        'best_params': search.best_params_, 'best_score': float(search.best_score_),
        'candidates': len(search.cv_results_['params']),
        'is_regressor': bool(sklearn.base.is_regressor(search.estimator)),
        'predictions': int(len(search.predict(x))),
    }
    return out


def main():
    report = {}
    before = set(sys.modules)
    start = time.time()
    import keras
    report['import_s'] = time.time() - start
    report['import_peak_mib'] = _peak_mib()
    report['keras'] = keras.__version__
    report['backend'] = keras.backend.backend()
    loaded = set(sys.modules) - before
    report['tensorflow_imported'] = 'tensorflow' in sys.modules and 'tensorflow' in loaded
    for part, run in (('gs', _gs_error), ('grid_search', _grid_search)):
        try:
            report[part] = run(keras)
        except Exception:   # noqa: BLE001
            report[part] = {'error': traceback.format_exc()}
    report['tensorflow_imported_at_end'] = 'tensorflow' in sys.modules
    print(json.dumps(report))


if __name__ == '__main__':
    main()
