#!/usr/bin/env bash
# Build the "anchor" environments in which the old Keras releases 2.0.8, 2.1.6
# and 2.2.4 run on their own TensorFlow 1.15 backend; tools/keras2_release_files.py
# run there writes the model files (tests/data/keras2_releases) that our adapters
# must load.
#
# Usage:  tools/setup_old_keras_anchors.sh [TARGET_DIR]      (default .venv-anchors)
#
# It makes, under TARGET_DIR:
#   py37-tf115/    a CPython 3.7 venv with tensorflow 1.15.5, h5py 2.10.0,
#                  numpy<1.19 (TF 1.15 needs >=1.16,<1.19), protobuf<3.21 (the
#                  generated code of TF 1.15 fails on newer protobuf), pyyaml,
#                  scipy<1.8; and what tools/keras_suite.py runs their test suites with
#                  (pytest 7.0.1, pytest-xdist, pytest-timeout, flaky, pandas, ...);
#   keras-2.0.8/, keras-2.1.6/, keras-2.2.4/, keras-2.3.1/
#                  each Keras release, pure Python, installed with --no-deps
#                  into its own folder (2.2.4 and 2.3.1 with keras_applications 1.0.8 and
#                  keras_preprocessing 1.1.2 beside it); put the folder FIRST on
#                  PYTHONPATH (TensorFlow's own dependencies also bring
#                  keras_applications/keras_preprocessing into the venv).
#
# Needs a CPython 3.7: $PYTHON37, else ~/.pyenv/versions/3.7.*/bin/python3.7, else
# python3.7 on PATH. A tensorflow-1.15.5 cp37 wheel is taken from $TF115_WHEELS
# (default /tmp/tf115) when it is there, else from the package index.
#
# The Theano 1.0.5 side (CPython 3.6) is the venv of tools/setup_cntk_env.sh; the
# release folders made here are pure Python and serve it too.
#
# Running the script again is harmless: what is already there and imports is
# kept.
set -euo pipefail

TARGET="${1:-.venv-anchors}"
TF115_WHEELS="${TF115_WHEELS:-/tmp/tf115}"
VENV="$TARGET/py37-tf115"

find_python37() {
    if [ -n "${PYTHON37:-}" ]; then echo "$PYTHON37"; return; fi
    local p
    for p in "$HOME"/.pyenv/versions/3.7.*/bin/python3.7; do
        if [ -x "$p" ]; then echo "$p"; return; fi
    done
    if command -v python3.7 >/dev/null 2>&1; then command -v python3.7; return; fi
    echo "no CPython 3.7 found (set PYTHON37)" >&2
    exit 1
}

mkdir -p "$TARGET"

if ! "$VENV/bin/python" -c "import tensorflow, h5py, yaml, scipy" >/dev/null 2>&1; then
    PY37="$(find_python37)"
    [ -x "$VENV/bin/python" ] || "$PY37" -m venv "$VENV"
    FIND_LINKS=()
    if [ -d "$TF115_WHEELS" ]; then FIND_LINKS=(--find-links "$TF115_WHEELS"); fi
    "$VENV/bin/python" -m pip install -q "${FIND_LINKS[@]}" \
        tensorflow==1.15.5 h5py==2.10.0 'numpy<1.19' 'protobuf<3.21' pyyaml 'scipy<1.8'
fi
# what tools/keras_suite.py runs each release's test suite with (the versions of the
# CPython 3.6 environment of tools/setup_cntk_env.sh)
if ! "$VENV/bin/python" -c "import pytest, xdist, pytest_timeout, flaky, pandas" >/dev/null 2>&1; then
    "$VENV/bin/python" -m pip install -q pytest==7.0.1 pytest-xdist==2.5.0 pytest-forked==1.4.0 \
        pytest-timeout==2.1.0 flaky==3.8.1 mock==4.0.3 'pandas<1.4' 'Pillow<10' requests
fi
"$VENV/bin/python" -c "import tensorflow as tf, numpy, h5py
print('tensorflow', tf.__version__, 'numpy', numpy.__version__, 'h5py', h5py.__version__)" \
    2>/dev/null

install_release() {  # folder, then the requirements
    local dir="$TARGET/$1"; shift
    if [ -f "$dir/keras/__init__.py" ]; then return; fi
    "$VENV/bin/python" -m pip install -q --no-deps --target "$dir" "$@"
}
install_release keras-2.0.8 keras==2.0.8
install_release keras-2.1.6 keras==2.1.6
install_release keras-2.2.4 keras==2.2.4 keras_applications==1.0.8 keras_preprocessing==1.1.2
# Keras 2.3.1 on its own TensorFlow 1.15 backend: the anchor of the Keras 2 libraries' suites
# (tools/library_suites.py --keras-path TARGET/keras-2.3.1 --backend tensorflow)
install_release keras-2.3.1 keras==2.3.1 keras_applications==1.0.8 keras_preprocessing==1.1.2

for v in 2.0.8 2.1.6 2.2.4 2.3.1; do
    echo "keras $v: $TARGET/keras-$v"
done
