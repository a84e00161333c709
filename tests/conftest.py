"""Shared pytest fixtures: the ``K`` fixture runs a test once per backend.

Backends come from ``KERAS_BACKEND_TESTS`` (comma-separated, default: every
name of the engine table, ``keras_backend.engines``). A backend whose adapter
cannot be imported in this interpreter is skipped with the ImportError's text as
the reason (``pytest -rs`` prints it); it is never replaced by a mock.
"""
import importlib
import os

import pytest

from keras_backend import common, engines


#: the engines' own default compile-folder name, with what tells the test builds apart
NO_GXX_OPT_FORMAT = ('compiledir_%(short_platform)s-%(processor)s-%(python_version)s-'
                     '%(python_bitwidth)s-no-gxx-opt')


def _compile_test_graphs_without_gxx_optimisation():
    """Theano and PyTensor compile the C code of every new op signature with
    g++; the tests build hundreds of tiny graphs whose run time is nothing next
    to that compile time (most of a cold run). Unless the user's own flags say
    otherwise, the test processes (and the subprocesses they start) compile
    the same C code without -O3: about a quarter less time on an empty cache.

    The engines' module cache does not key a module by that flag: a module built
    without -O3 would be loaded later by every program that shares the folder (an
    ``im3d2col`` loop ran 6x slower in a user's process after a test run). So the
    test builds go to a folder of their own (``compiledir_format``, under whatever
    ``base_compiledir`` is in force); where the user's flags name the folder itself
    (``compiledir`` or ``compiledir_format``), the tests compile with -O3 there."""
    for var, key in (('PYTENSOR_FLAGS', 'cmodule__remove_gxx_opt'),
                     ('THEANO_FLAGS', 'cmodule.remove_gxx_opt')):
        flags = os.environ.get(var, '')
        names = [f.split('=', 1)[0].strip() for f in flags.split(',') if f.strip()]
        if 'remove_gxx_opt' in flags or 'compiledir' in names or \
                'compiledir_format' in names:
            continue
        added = [key + '=True', 'compiledir_format=' + NO_GXX_OPT_FORMAT]
        os.environ[var] = ','.join(([flags] if flags else []) + added)


_compile_test_graphs_without_gxx_optimisation()

#: every backend name, from the engine table
ALL_BACKENDS = engines.names()


def requested_backends():
    value = os.environ.get('KERAS_BACKEND_TESTS', '').strip()
    if not value:
        return ALL_BACKENDS
    names = tuple(n.strip() for n in value.split(',') if n.strip())
    unknown = [n for n in names if n not in ALL_BACKENDS]
    if unknown:
        raise ValueError('KERAS_BACKEND_TESTS: unknown backend(s) %s; expected %s'
                         % (unknown, ', '.join(ALL_BACKENDS)))
    return names


_LOADED = {}


def load_adapter(name):
    """Return (module, None) or (None, reason) for backend ``name``."""
    if name not in _LOADED:
        try:
            _LOADED[name] = (importlib.import_module(engines.adapter_module(name)), None)
        except ImportError as e:
            _LOADED[name] = (None, str(e))
    return _LOADED[name]


@pytest.fixture(params=requested_backends())
def K(request):
    """The adapter module of one backend (tensorflow_backend, theano_backend, ...)."""
    module, reason = load_adapter(request.param)
    if module is None:
        pytest.skip('%s backend not importable here: %s' % (request.param, reason))
    return module


@pytest.fixture(autouse=True)
def _restore_config():
    """Every test starts and ends with the default floatx/epsilon/data format."""
    saved = (common.floatx(), common.epsilon(), common.image_data_format())
    yield
    common.set_floatx(saved[0])
    common.set_epsilon(saved[1])
    common.set_image_data_format(saved[2])


def pytest_terminal_summary(terminalreporter):
    """Print each distinct skip reason once, with how many tests it skipped.

    A backend that cannot be imported skips every test parametrised with it;
    its reason (the ImportError's advice) is printed once, not once per test.
    """
    reasons = {}
    for report in terminalreporter.stats.get('skipped', []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        if reason.startswith('Skipped: '):
            reason = reason[len('Skipped: '):]
        reasons[reason] = reasons.get(reason, 0) + 1
    if reasons:
        terminalreporter.section('skipped tests, by reason')
        for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
            terminalreporter.write_line('SKIPPED %d test(s): %s' % (n, reason))
