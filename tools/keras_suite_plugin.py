"""pytest plugin for Keras 2.3.1's own test suite (``tools/keras_suite.py`` loads it).

It marks each test that ``tests/keras_suite_known_differences.txt`` lists for
this configuration (``$KERAS_SUITE_CONFIG``) as an expected failure with the
file's reason, so that a run fails only on what is not known. A line of that
file is::

    CONFIGS  TEST  -- REASON

``CONFIGS`` is a comma-separated list of configuration names (``tensorflow``,
``pytensor``, ``cntk``, ``theano``, ``cntk-keras``, ``theano-keras``) or ``*``;
``TEST`` is a pytest node id, or a node id without its ``[parameters]`` (every
parametrisation), or a file path (every test in it). ``#`` starts a comment.
"""
import os

import pytest

#: Our adapters whose engines Keras' own ``tests/conftest.py`` clears after
#: every test (it asks ``K.backend() in ('tensorflow', 'cntk')``, and with an
#: external backend ``K.backend()`` is the module name, so it would not).
_CLEARED_BACKENDS = ('keras_backend.tensorflow_backend', 'keras_backend.cntk_backend')


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


def pytest_collection_modifyitems(config, items):
    known = read_known(os.environ.get('KERAS_SUITE_KNOWN'),
                       os.environ.get('KERAS_SUITE_CONFIG', ''))
    for item in items:
        reason = _reason_for(item, known)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason='known difference: ' + reason,
                                              strict=False))


@pytest.fixture(autouse=True)
def _clear_session_like_keras_conftest():
    """Keras' conftest fixture ``clear_session_after_test`` for our TensorFlow and
    CNTK adapters: ``K.clear_session()`` after each test, so that state a test
    leaves (``K.set_learning_phase(1)`` in normalization_test.py) does not leak
    into the next file, as it does not with Keras' own backends."""
    yield
    if os.environ.get('KERAS_BACKEND') in _CLEARED_BACKENDS:
        # keras.backend re-exports clear_session only for its own TensorFlow
        # and CNTK backends; an external backend's names live in load_backend
        from keras.backend import load_backend
        load_backend.clear_session()
