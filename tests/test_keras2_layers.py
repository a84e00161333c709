"""Every layer class Keras 2.3.1 exports trains on every engine.

``tests/keras2_layers.py`` runs in its own process on each requested engine (Keras picks its
backend once, at import; under CPython 3.6 the CNTK and Theano 1.0.5 runs use that
interpreter, as ``tests/test_keras2_client.py`` does), reads the layer classes from
``keras.layers`` itself and trains one model holding a branch per class one SGD step. A class
Keras exports with neither a branch nor a reason (``NOT_TRAINED``) fails here by name.
"""
import pytest

from conftest import requested_backends
from test_keras2_client import cached_script_report


@pytest.fixture(params=requested_backends())
def report(request):
    return cached_script_report(request.param, 'keras2_layers.py')


def test_every_keras_layer_class_has_a_branch(report):
    import keras2_layers
    assert not report['missing'], ('Keras 2.3.1 exports layer classes with no branch in '
                                   'tests/keras2_layers.py: %s' % report['missing'])
    assert len(report['classes']) >= 80
    trained = [c for c in report['classes'] if c not in keras2_layers.NOT_TRAINED]
    assert sorted(report['layers']) == sorted(trained)


def test_every_keras_layer_trains(report):
    failed = dict((name, r['error'][-1500:]) for name, r in report['layers'].items()
                  if 'error' in r)
    assert not failed, '\n\n'.join('%s:\n%s' % kv for kv in sorted(failed.items()))
    bad = dict((name, r) for name, r in report['layers'].items()
               if not (r['finite'] and r['loss'] > 0. and r['changed'] > 1e-6))
    assert not bad, 'no finite loss, or the step moved no weight of the branch: %s' % bad
