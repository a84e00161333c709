#!/usr/bin/env bash
# Build a CPython 3.6 virtual environment in which the CNTK 2.7 backend runs
# (with scikit-learn for the digits example and the CNTK benchmark, and Keras
# 2.3.1 for the Keras client tests and benchmarks), and in
# which KERAS_BACKEND=theano is served by the original Theano 1.0.5.
#
# Usage:  tools/setup_cntk_env.sh [VENV_DIR]
#   VENV_DIR defaults to $KERAS_BACKEND_CNTK_VENV, else /opt/cntk-venv.
#
# Needs (this script does NOT build Python):
#   * a CPython 3.6 built with --enable-shared; found as $PYTHON36, else
#     python3.6 on PATH, else ~/.pyenv/versions/3.6.*/bin/python3.6;
#   * a modern pip for the machine's python3 (it downloads the cp36 wheels);
#   * apt-get (Debian/Ubuntu) to install OpenMPI, whose libmpi CNTK links to.
# CNTK 2.7 wheels exist only for CPython 3.5/3.6. CNTK was linked against
# OpenMPI 1.10 (libmpi.so.12, libmpi_cxx.so.1); the distribution's OpenMPI 4
# (libmpi.so.40) is ABI-compatible for what CNTK uses on CPU, so the script
# links the old sonames to it inside cntk/libs/. The image reader (OpenCV
# extras) and Halide libraries stay missing; nothing in keras_backend needs
# them. Theano 1.0.5 exists only as a source distribution (pure Python; the
# C code it generates is compiled at run time with g++, cached in ~/.theano);
# it is downloaded as an sdist and installed from the same local directory.
# Running the script again is harmless (every step is idempotent).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${1:-${KERAS_BACKEND_CNTK_VENV:-/opt/cntk-venv}}"
WHEELS="${KERAS_BACKEND_CNTK_WHEELS:-/opt/cntk-wheels}"
HOST_PYTHON="${HOST_PYTHON:-python3}"

# scikit-learn (and its joblib/threadpoolctl) gives examples/digits.py and
# benchmarks/cntk_benchmark.py their data; 0.24.2 is its last cp36 wheel.
# Keras 2.3.1 (with h5py 2.10, the last h5py it reads its weight files with)
# serves the Keras client tests and the comparison with Keras' own backends.
PINS=(cntk==2.7.post2 numpy==1.19.5 scipy==1.5.4 pytest==7.0.1
      'importlib-metadata<5' 'zipp<3.7' 'typing-extensions<4.2'
      scikit-learn==0.24.2 'joblib<1.2' 'threadpoolctl<3.2'
      keras==2.3.1 h5py==2.10.0 'pyyaml<6.1' keras_applications==1.0.8
      keras_preprocessing==1.1.2 hypothesis==6.31.6 'attrs<23' 'sortedcontainers<3'
      # what Keras 2.3.1's own test suite imports (tools/keras_suite.py)
      'pytest-timeout<2.2' 'pytest-xdist<3' 'execnet<2' flaky 'mock<5' 'pandas<1.2'
      'markdown<3.4' 'pillow<9' 'requests<2.28' 'python-dateutil<2.9' 'pytz'
      # Keras' TensorBoard callback (keras_backend.tensorboard): the writer, and the
      # viewer whose event reader and server the tests use (the last releases for 3.6)
      # (dataclasses: werkzeug's backport for 3.6, behind a marker the host's pip skips)
      'tensorboardX==2.6' 'tensorboard==2.10.1' 'protobuf<3.20' 'dataclasses==0.8')

# 1. The CPython 3.6 interpreter.
PY36="${PYTHON36:-}"
if [ -z "$PY36" ]; then
    # pyenv's shim exists even when 3.6 is not the active version: try it
    # only if it really runs, then look for pyenv's installs directly.
    if command -v python3.6 >/dev/null 2>&1 && python3.6 -c '' >/dev/null 2>&1; then
        PY36="$(command -v python3.6)"
    else
        for cand in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.6.*/bin/python3.6; do
            [ -x "$cand" ] && PY36="$cand"
        done
    fi
fi
if [ -z "$PY36" ] || ! "$PY36" -c 'import sys; assert sys.version_info[:2] == (3, 6)' 2>/dev/null; then
    echo "setup_cntk_env: no CPython 3.6 found (set PYTHON36=/path/to/python3.6)." >&2
    echo "  CNTK 2.7 has wheels only for CPython 3.5/3.6; build one with --enable-shared first." >&2
    exit 1
fi
# ctypes must work (a miscompiled _ctypes breaks CNTK's SWIG layer and numpy).
"$PY36" - <<'PYEOF'
import ctypes
cb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(lambda v: v * 2)
assert cb(21) == 42, 'ctypes callbacks are broken in this interpreter'
PYEOF
echo "setup_cntk_env: using $PY36"

# 2. OpenMPI (system packages): the library CNTK links to, and for
#    keras_backend.distribute mpiexec and the headers mpi4py builds against.
MPI_LIB=/usr/lib/x86_64-linux-gnu/libmpi.so.40
MPI_CXX_LIB=/usr/lib/x86_64-linux-gnu/libmpi_cxx.so.40
if [ ! -e "$MPI_LIB" ] || [ ! -e "$MPI_CXX_LIB" ] || ! command -v mpiexec >/dev/null 2>&1 \
        || ! command -v mpicc >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y libopenmpi3 openmpi-bin \
        libopenmpi-dev
fi

# 3. Wheels for CPython 3.6, fetched with the machine's own (modern) pip.
mkdir -p "$WHEELS"
"$HOST_PYTHON" -m pip download --only-binary=:all: --python-version 3.6 \
    --platform manylinux1_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux_2_17_x86_64 -d "$WHEELS" "${PINS[@]}"

# Theano 1.0.5 (sdist only) and its one dependency besides numpy/scipy.
THEANO_PINS=(Theano==1.0.5 'six<2')
"$HOST_PYTHON" -m pip download --only-binary=:all: --python-version 3.6 \
    --platform manylinux1_x86_64 -d "$WHEELS" 'six<2'
"$HOST_PYTHON" -m pip download --no-deps --no-binary=:all: -d "$WHEELS" Theano==1.0.5

# pyux (Keras' API test imports it) has no wheel tags pip 21 reads for 3.6 as-is.
"$HOST_PYTHON" -m pip download --no-deps -d "$WHEELS" 'pyux==0.0.6'
# pip 21.3.1 (the last for 3.6) reads the manylinux2014 tags of the newer wheels.
"$HOST_PYTHON" -m pip download --only-binary=:all: --python-version 3.6 -d "$WHEELS" 'pip==21.3.1'

# 4. The virtual environment.
if [ ! -x "$VENV/bin/python" ]; then
    "$PY36" -m venv "$VENV"
fi
"$VENV/bin/pip" install -q --no-index --find-links "$WHEELS" 'pip==21.3.1'
# The cntk 2.7.post2 wheel reports version "2.7", so pip would reinstall it on
# every run: install it only when it is absent.
if "$VENV/bin/pip" show cntk >/dev/null 2>&1; then
    "$VENV/bin/pip" install --no-index --find-links "$WHEELS" "${PINS[@]:1}"
else
    "$VENV/bin/pip" install --no-index --find-links "$WHEELS" "${PINS[@]}"
fi

# Theano 1.0.5 from its sdist (pip 18 runs its setup.py with the venv's
# setuptools); skipped when that version is already installed.
if [ "$("$VENV/bin/python" -c 'import pkg_resources as p; print(p.get_distribution("Theano").version)' 2>/dev/null)" != "1.0.5" ]; then
    "$VENV/bin/pip" install --no-index --find-links "$WHEELS" "${THEANO_PINS[@]}"
fi
"$VENV/bin/pip" install --no-index --find-links "$WHEELS" 'pyux==0.0.6'

# mpi4py (keras_backend.distribute on Theano 1.0.5 and CNTK): 4.0.3 is its last release
# for CPython 3.6, a source distribution compiled here against Debian's OpenMPI (mpicc);
# the built wheel is kept beside the others, so later runs compile nothing.
MPI4PY_PIN='mpi4py==4.0.3'
if ! "$VENV/bin/python" -c 'import mpi4py' >/dev/null 2>&1; then
    if ! ls "$WHEELS"/mpi4py-4.0.3-cp36-*.whl >/dev/null 2>&1; then
        "$VENV/bin/pip" wheel --no-deps -w "$WHEELS" "$MPI4PY_PIN"
    fi
    "$VENV/bin/pip" install --no-index --find-links "$WHEELS" "$MPI4PY_PIN"
fi

# 5. OpenMPI 1.10 sonames inside cntk/libs/.
CNTK_LIBS="$("$VENV/bin/python" - <<'PYEOF'
import importlib.util, os
spec = importlib.util.find_spec('cntk')
print(os.path.join(os.path.dirname(spec.origin), 'libs'))
PYEOF
)"
ln -sfn "$MPI_LIB" "$CNTK_LIBS/libmpi.so.12"
ln -sfn "$MPI_CXX_LIB" "$CNTK_LIBS/libmpi_cxx.so.1"

# 6. keras_backend itself (editable); without setup.py, a .pth file.
if [ -f "$REPO/setup.py" ] || [ -f "$REPO/pyproject.toml" ]; then
    if ! "$VENV/bin/pip" install --no-deps --no-build-isolation -e "$REPO"; then
        echo "setup_cntk_env: editable install failed; adding $REPO to the path instead" >&2
        SITE="$("$VENV/bin/python" -c 'import site; print(site.getsitepackages()[0])')"
        echo "$REPO" > "$SITE/keras_backend_repo.pth"
    fi
else
    SITE="$("$VENV/bin/python" -c 'import site; print(site.getsitepackages()[0])')"
    echo "$REPO" > "$SITE/keras_backend_repo.pth"
fi

# 7. Smoke test.
"$VENV/bin/python" -W ignore - <<'PYEOF'
import numpy as np
import cntk as C
x = C.input_variable((3,))
assert np.allclose(C.reduce_sum(x * 2).eval({x: np.ones((2, 3), 'float32')}), 6)
print('cntk', C.__version__, 'works')
from sklearn.datasets import load_digits
assert load_digits().images.shape == (1797, 8, 8)
print('scikit-learn digits available')
import theano
import theano.tensor as T
v = T.dvector('v')
f = theano.function([v], (v * 2).sum())
assert f(np.ones(3)) == 6
print('theano', theano.__version__, 'works (compiledir %s)' % theano.config.compiledir)
import importlib.util
assert importlib.util.find_spec('keras') is not None
print('keras 2.3.1 installed')
from mpi4py import MPI
print('mpi4py on', MPI.Get_library_version().split(',')[0])
PYEOF

echo "CNTK / Theano 1.0.5 interpreter: $VENV/bin/python"
