"""pytest plugin for Keras 2.3.1's own test suite (``tools/keras_suite.py`` loads it).

It marks each test that ``tests/keras_suite_known_differences.txt`` lists for
this configuration (``$KERAS_SUITE_CONFIG``) as an expected failure with the
file's reason, so that a run fails only on what is not known. A line of that
file is::

    CONFIGS  TEST  -- REASON

``CONFIGS`` is a comma-separated list of configuration names (``tensorflow``,
``pytensor``, ``cntk``, ``theano``, ``cntk-keras``, ``theano-keras``) or ``*``;
``TEST`` is a pytest node id, or a node id without its ``[parameters]`` (every
parametrisation), or a file path (the file is not run at all: ``tools/keras_suite.py``
leaves it out and says so, since a module that cannot be imported is a collection
error, which no marker can expect). ``#`` starts a comment.
"""
import os

import pytest


def read_known(path, config):
    """{test id: reason} for ``config`` from the known-differences file."""
    known = {}
    if not path or not os.path.exists(path):
        return known
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip() if not line.lstrip().startswith('#') else ''
            if not line:
                continue
            head, sep, reason = line.partition(' -- ')
            parts = head.split()
            if not sep or len(parts) != 2:
                raise ValueError('%s:%d: expected "CONFIGS TEST -- REASON", got %r'
                                 % (path, lineno, line))
            configs, test = parts
            if configs == '*' or config in configs.split(','):
                known[test] = reason.strip()
    return known


def _reason_for(item, known):
    nodeid = item.nodeid
    for key in (nodeid, nodeid.split('[', 1)[0], nodeid.split('::', 1)[0]):
        if key in known:
            return known[key]
    return None


def _known_here():
    return read_known(os.environ.get('KERAS_SUITE_KNOWN'),
                      os.environ.get('KERAS_SUITE_CONFIG', ''))


def pytest_collection_modifyitems(config, items):
    known = _known_here()
    for item in items:
        reason = _reason_for(item, known)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason='known difference: ' + reason,
                                              strict=False))


#: Our adapters for the engines after whose tests Keras' own conftest clears the session.
_CLEARED = ('keras_backend.tensorflow_backend', 'keras_backend.cntk_backend')


@pytest.fixture(autouse=True)
def _clear_session_as_keras_conftest_does():
    """Keras' ``tests/conftest.py`` calls ``K.clear_session()`` after every test when
    ``K.backend()`` is 'tensorflow' or 'cntk'; with an external backend ``K.backend()`` is
    the module path, so it never does, and a test's fixed learning phase
    (``normalization_test``'s ``K.set_learning_phase(1)``) leaks into the next ones.
    This does the same cleanup for our adapters of those two engines."""
    yield
    if os.environ.get('KERAS_BACKEND') in _CLEARED:
        # keras.backend re-exports clear_session only when it loaded its own
        # TensorFlow or CNTK backend; an external backend's names are in load_backend
        from keras.backend import load_backend
        load_backend.clear_session()
