"""pytest plugin for Keras 2.3.1's own test suite (``tools/keras_suite.py`` loads it).

It marks each test that ``tests/keras_suite_known_differences.txt`` lists for
this configuration (``$KERAS_SUITE_CONFIG``) as an expected failure with the
file's reason, so that a run fails only on what is not known. A line of that
file is::

    CONFIGS  TEST  -- REASON

``CONFIGS`` is a comma-separated list of configuration names (``tensorflow``, ``jax``,
``pytensor``, ``cntk``, ``theano``, ``cntk-keras``, ``theano-keras``) or ``*``;
``TEST`` is a pytest node id, or a node id without its ``[parameters]`` (every
parametrisation), or a file path (the file is not run at all: ``tools/keras_suite.py``
leaves it out and says so, since a module that cannot be imported is a collection
error, which no marker can expect). ``#`` starts a comment.
"""
import os

import pytest

if os.environ.get('KERAS_SUITE_COMPAT') == '1':
    # on our adapters: before Keras is imported (Keras 2.0.x and 2.1.x load an external
    # backend only after this line; later releases apply it themselves)
    import keras_backend.keras2_compat
    keras_backend.keras2_compat.install()


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


def _cleared_adapters():
    """Our adapters whose session Keras' own conftest does not clear: Keras'
    ``tests/conftest.py`` calls ``K.clear_session()`` after every test when ``K.backend()`` is
    'tensorflow' or 'cntk' (our adapters answer those names, so it does that itself there);
    the engines Keras 2.3.1 has no name for (JAX, PyTorch: the engine table's
    ``keras2_known_as``) get the same cleanup as the engine whose conventions they follow."""
    try:
        from keras_backend import engines
    except ImportError:         # Keras' own backends (the anchors): nothing of ours
        return ()
    return tuple(r.adapter for r in engines.TABLE if r.keras2_known_as)


@pytest.fixture(autouse=True)
def _configuration_restored():
    """On our adapters, Keras' floatx, epsilon and image data format as they were before each
    test: a test that sets one and fails before it sets it back (2.2.4's ``test_set_floatx``
    checks TensorFlow 1's ``float16_ref`` dtype, a known difference) must not change the dtype
    of every later test in the process (on the anchor it passes and sets it back itself)."""
    if os.environ.get('KERAS_SUITE_COMPAT') != '1':
        yield
        return
    from keras import backend as K
    saved = K.floatx(), K.epsilon(), K.image_data_format()
    yield
    K.set_floatx(saved[0])
    K.set_epsilon(saved[1])
    K.set_image_data_format(saved[2])


@pytest.fixture(autouse=True)
def _clear_session_as_keras_conftest_does():
    """After each test on our JAX and PyTorch adapters, what Keras' conftest does after each
    test on TensorFlow: clear the session, so that a test's fixed learning phase
    (``normalization_test``'s ``K.set_learning_phase(1)``) does not leak into the next ones."""
    yield
    if os.environ.get('KERAS_SUITE_COMPAT') == '1' and \
            os.environ.get('KERAS_BACKEND') in _cleared_adapters():
        # keras.backend re-exports clear_session only for 'tensorflow' and 'cntk'; its loader
        # module holds every name of the external backend (keras.backend.load_backend, 2.2.5
        # and later; keras.backend itself before)
        import sys
        import keras.backend
        sys.modules.get('keras.backend.load_backend', keras.backend).clear_session()


# --- backend_test.py on our adapter ------------------------------------------------------
# Keras' tests/keras/backend/backend_test.py compares "the backend" with numpy, but it picks
# the backend module by name: ``keras.backend.<engine>_backend`` chosen by ``K.backend()``.
# Our adapter already is that module and ``K.backend()`` the engine's name; while that file is
# imported and run, the module also answers the facts of Keras' own modules the file reads
# (``_KerasModuleView``), and on JAX our adapter stands in for Keras' TensorFlow module.
_BACKEND_TEST = os.path.join('keras', 'backend', 'backend_test.py')
# Keras 2.3.1 has no JAX module: our JAX adapter stands in for its TensorFlow one (the
# conventions it follows: channels_last, TensorFlow's shapes and dtypes), so the file's
# TensorFlow cases test it.
def _keras_engine_of(backend):
    """The Keras 2.3.1 engine whose backend module our adapter ``backend`` (an import path,
    the run's KERAS_BACKEND) stands in for: its own name, or the engine table's
    ``keras2_known_as`` (JAX: 'tensorflow'); None for anything but one of our adapters."""
    if not backend.startswith('keras_backend.'):
        # Keras' own backend: keras_backend is not imported in this run, and stays so
        return None
    # Keras imports our package first, as its external backend (keras_backend/__init__.py
    # then shares Keras' config state); the table is read after that
    import keras.backend  # noqa: F401
    from keras_backend import engines
    name = engines.canonical_backend(backend)
    rows = engines.configurations(name)
    if not rows:
        return None
    return rows[0].keras2_known_as or name


def _engine_only_names(engine):
    """The names Keras 2.3.1's keras/backend/__init__.py takes from its loader only when
    ``backend()`` is ``engine`` (Theano's ``pattern_broadcast``, TensorFlow's session names,
    CNTK's ``clear_session``), read from its ``if backend() == '<engine>':`` branches."""
    import ast
    import keras.backend
    with open(keras.backend.__file__) as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                and len(node.test.comparators) == 1):
            continue
        call, value = node.test.left, node.test.comparators[0]
        compared = getattr(value, 'value', getattr(value, 's', None))   # ast.Str before 3.8
        if isinstance(call, ast.Call) and getattr(call.func, 'id', None) == 'backend' and \
                compared == engine:
            return tuple(alias.asname or alias.name for stmt in node.body
                         if isinstance(stmt, ast.ImportFrom) for alias in stmt.names)
    return ()


def _ours_as_keras_own():
    """A context manager: our adapter as ``keras.backend.<engine>_backend`` and
    ``K.backend()`` == engine (None when KERAS_BACKEND is not one of our adapters)."""
    import contextlib
    import importlib
    import sys

    name = os.environ.get('KERAS_BACKEND', '')
    engine = _keras_engine_of(name)

    @contextlib.contextmanager
    def swapped():
        if engine is None:
            yield
            return
        import keras.backend as K
        # the module holding the backend Keras chose: keras.backend.load_backend (2.2.5 and
        # later), keras.backend itself before
        load_backend = sys.modules.get('keras.backend.load_backend', K)
        adapter = _KerasModuleView(importlib.import_module(name), engine)
        key = 'keras.backend.%s_backend' % engine
        saved = (sys.modules.get(key), getattr(K, engine + '_backend', None),
                 K.backend, load_backend.backend)
        sys.modules[key] = adapter
        setattr(K, engine + '_backend', adapter)
        # Keras' own TensorFlow module needs TensorFlow 1: where another engine is tested, it
        # is absent, as in its anchor's environment (Theano 1.0.5 and CNTK 2.7 on CPython 3.6
        # have no TensorFlow), so that backend_test.py compares what that anchor compares
        # (our PyTensor configuration has TensorFlow 2.21 beside it, which Keras' module
        # imports and then fails on: tf.get_default_session and the like)
        tf_key = 'keras.backend.tensorflow_backend'
        hide_tf = engine != 'tensorflow' and not _tensorflow_1()
        if hide_tf:
            saved_tf = (sys.modules.get(tf_key), K.__dict__.get('tensorflow_backend'))
            sys.modules[tf_key] = None
            K.__dict__.pop('tensorflow_backend', None)
        K.backend = load_backend.backend = lambda: engine
        # the names keras/backend/__init__.py re-exports only when backend() is this engine
        added = [n for n in _engine_only_names(engine) if not hasattr(K, n)]
        for n in added:
            setattr(K, n, getattr(load_backend, n))
        try:
            yield
        finally:
            if hide_tf:
                if saved_tf[0] is None:
                    sys.modules.pop(tf_key, None)
                else:
                    sys.modules[tf_key] = saved_tf[0]
                if saved_tf[1] is not None:
                    K.tensorflow_backend = saved_tf[1]
            for n in added:
                delattr(K, n)
            if saved[0] is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = saved[0]
            if saved[1] is None:
                try:
                    delattr(K, engine + '_backend')
                except AttributeError:
                    pass
            else:
                setattr(K, engine + '_backend', saved[1])
            K.backend, load_backend.backend = saved[2], saved[3]
    return swapped()


def _tensorflow_1():
    """True when the TensorFlow installed here is 1.x (Keras 2's own TensorFlow module runs)."""
    try:
        import importlib.util
        if importlib.util.find_spec('tensorflow') is None:
            return False
        from importlib import metadata
    except ImportError:                      # CPython 3.6/3.7: no importlib.metadata
        import pkg_resources
        try:
            return pkg_resources.get_distribution('tensorflow').version.startswith('1.')
        except Exception:
            return False
    try:
        return metadata.version('tensorflow').startswith('1.')
    except Exception:
        try:
            return metadata.version('tensorflow-cpu').startswith('1.')
        except Exception:
            return False


class _KerasModuleView(object):
    """Our adapter, plus the three facts of Keras' own backend modules that
    backend_test.py reads at import: ``KTF._is_tf_1()``, ``KTH.th_sparse_module`` and
    ``KC.dev`` (CNTK's device), each answered from the engine itself."""

    def __init__(self, adapter, engine):
        self._adapter = adapter
        self._engine = engine

    def __getattr__(self, attr):
        if attr == '_is_tf_1' and self._engine == 'tensorflow':
            if getattr(self._adapter, 'ENGINE', None) == 'jax':
                return lambda: False
            import tensorflow as tf
            return lambda: tf.__version__.startswith('1.')
        if attr == 'th_sparse_module' and self._engine == 'theano':
            try:
                import pytensor.sparse as sparse_module
            except ImportError:
                import theano.sparse as sparse_module
            return sparse_module
        if attr == 'dev' and self._engine == 'cntk':
            import cntk
            return cntk.device.use_default_device()
        return getattr(self._adapter, attr)


def _is_backend_test(path):
    return str(path).endswith(_BACKEND_TEST)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    if isinstance(collector, pytest.Module) and _is_backend_test(collector.fspath):
        with _ours_as_keras_own():
            yield
    else:
        yield


@pytest.fixture(autouse=True)
def _backend_test_on_our_adapter(request):
    if _is_backend_test(request.node.fspath):
        with _ours_as_keras_own():
            yield
    else:
        yield
