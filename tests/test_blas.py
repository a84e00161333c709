"""The BLAS that keras_backend gives Theano 1.0.5 and PyTensor (keras_backend.theano_backend.blas).

Engine-neutral part: the OpenBLAS of the installed numpy / scipy wheels is
found, and the library the engines link (a link to it, or the shim that
forwards the plain Fortran names to its prefixed ones) computes ``sgemm_`` and
``ddot_`` as numpy does, called through ctypes. Theano part: the adapter's
engine links it by default, its matrix products agree with numpy, and
``KERAS_BACKEND_BLAS=0`` or the user's own flag leave the engine alone.
"""
import ctypes
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

# a module of the Theano adapter's package: importing it loads the adapter's engine
blas = pytest.importorskip('keras_backend.theano_backend.blas')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _compiler():
    for name in ('gcc', 'cc', 'g++'):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope='module')
def openblas():
    found = blas.find_openblas()
    if found is None:
        pytest.skip('no OpenBLAS with 32-bit integers in this interpreter\'s numpy / scipy '
                    'wheels (%s)' % sys.executable)
    return found


def test_find_openblas_reports_its_names(openblas):
    path, prefix = openblas
    lib = ctypes.CDLL(path)
    assert prefix in ('', 'scipy_')
    assert hasattr(lib, prefix + 'sgemm_') and hasattr(lib, prefix + 'dgemm_')


def test_linked_library_computes_gemm_and_dot(openblas, tmp_path):
    compiler = _compiler()
    if compiler is None:
        pytest.skip('no C compiler on PATH')
    path, prefix = openblas
    lib_path = blas._build(path, prefix, str(tmp_path), compiler)
    assert os.path.basename(lib_path) == 'lib%s.so' % blas.LIB_NAME
    lib = ctypes.CDLL(lib_path)
    rng = np.random.RandomState(0)
    a = np.asfortranarray(rng.randn(3, 4).astype('float32'))
    b = np.asfortranarray(rng.randn(4, 5).astype('float32'))
    c = np.asfortranarray(np.zeros((3, 5), 'float32'))
    ptr = ctypes.POINTER
    i = lambda v: ctypes.byref(ctypes.c_int(v))      # noqa: E731
    f = lambda v: ctypes.byref(ctypes.c_float(v))    # noqa: E731
    lib.sgemm_(ctypes.c_char_p(b'N'), ctypes.c_char_p(b'N'), i(3), i(5), i(4), f(1.0),
               a.ctypes.data_as(ptr(ctypes.c_float)), i(3),
               b.ctypes.data_as(ptr(ctypes.c_float)), i(4), f(0.0),
               c.ctypes.data_as(ptr(ctypes.c_float)), i(3))
    np.testing.assert_allclose(c, a.dot(b), rtol=1e-5, atol=1e-5)
    x = rng.randn(7)
    lib.ddot_.restype = ctypes.c_double
    got = lib.ddot_(i(7), x.ctypes.data_as(ptr(ctypes.c_double)), i(1),
                    x.ctypes.data_as(ptr(ctypes.c_double)), i(1))
    assert got == pytest.approx(float(x.dot(x)), rel=1e-12)


def test_shim_forwards_only_what_the_library_has(openblas):
    path, prefix = openblas
    if not prefix:
        pytest.skip('%s exports the plain names: no shim needed' % path)
    src = blas._shim_source(ctypes.CDLL(path), prefix)
    assert 'float sdot_(' in src and 'return %ssdot_(' % prefix in src
    assert 'void sgemm_(' in src and src.count('void *a') >= 13
    assert 'dgemm_64_' not in src


def test_disabled_reads_the_environment(monkeypatch):
    for value, off in (('0', True), ('off', True), ('1', False), ('', False)):
        monkeypatch.setenv(blas.ENV, value)
        assert blas.disabled() is off


# ------------------------------------------------------------------ Theano / PyTensor

@pytest.fixture
def TK(K):
    if K.backend() != 'theano':
        pytest.skip('Theano/PyTensor adapter only')
    return K


def _ldflags(K):
    cfg = K.th.config
    return cfg.blas.ldflags if K.ENGINE == 'theano' else cfg.blas__ldflags


def test_engine_links_a_blas_by_default(TK):
    K = TK
    state = blas.status()
    user = ('ldflags' in os.environ.get('THEANO_FLAGS', '') + os.environ.get('PYTENSOR_FLAGS', '')
            or os.environ.get(blas.ENV))
    if user:
        pytest.skip('the BLAS is chosen by this environment (%s)' % state['source'])
    if not state['flags']:
        pytest.skip('no BLAS could be linked here: %s' % state['source'])
    assert _ldflags(K) == state['flags']
    if 'engine' not in state['source']:
        assert '-l%s' % blas.LIB_NAME in state['flags']
    rng = np.random.RandomState(1)
    a, b = rng.randn(33, 17).astype('float32'), rng.randn(17, 9).astype('float32')
    p, q = rng.randn(6, 4, 5).astype('float32'), rng.randn(6, 5, 3).astype('float32')
    x, w = K.placeholder((None, 17)), K.variable(b)
    u, v = K.placeholder((None, 4, 5)), K.placeholder((None, 5, 3))
    f = K.function([x, u, v], [K.dot(x, w), K.batch_dot(u, v, axes=(2, 1))])
    out, bd = f([a, p, q])
    np.testing.assert_allclose(out, a.dot(b), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bd, np.einsum('bij,bjk->bik', p, q), rtol=1e-5, atol=1e-5)


def _child_ldflags(extra_env):
    code = ('from keras_backend import theano_backend as K; '
            'from keras_backend.theano_backend import blas; '
            'cfg = K.th.config; '
            'print(repr(cfg.blas.ldflags if K.ENGINE == "theano" else cfg.blas__ldflags)); '
            'print(blas.status()["source"])')
    env = dict(os.environ, KERAS_BACKEND='theano', KERAS_BACKEND_QUIET='1', **extra_env)
    env['PYTHONPATH'] = ROOT + os.pathsep + env.get('PYTHONPATH', '')
    out = subprocess.check_output([sys.executable, '-c', code], env=env,
                                  stderr=subprocess.STDOUT, universal_newlines=True)
    return out.strip().splitlines()[-2:]


def test_switched_off_or_user_flags_leave_the_engine_alone(TK):
    K = TK
    flags, source = _child_ldflags({blas.ENV: '0'})
    assert source.startswith('left to the user')
    assert blas.LIB_NAME not in flags
    var = 'THEANO_FLAGS' if K.ENGINE == 'theano' else 'PYTENSOR_FLAGS'
    key = 'blas.ldflags' if K.ENGINE == 'theano' else 'blas__ldflags'
    own = os.environ.get(var, '')
    flags, source = _child_ldflags({var: (own + ',' if own else '') + key + '=',
                                    blas.ENV: ''})
    assert flags == "''" and source == 'left to the user (flags or rc file)'
