#!/bin/bash
# Issue 38 item 3: JAX on a GPU, ours against Keras 3, run on the device machine from the
# repository root (it has JAX with CUDA and no Keras: Keras 3's wheels travel in .whl, Keras
# 2.3.1 in .venv/keras2). Everything lands in $OUT (the device tool brings it back).
set -u
export PYTHONUNBUFFERED=1 KERAS_BACKEND_QUIET=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
    .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site KERAS_BACKEND_KERAS2_PATH=$PWD/.venv/keras2
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import jax, keras, numpy; print('jax', jax.__version__, jax.devices(), 'keras', keras.__version__, 'numpy', numpy.__version__)"
nproc; which mpirun mpiexec; python3 -c "from mpi4py import MPI; print(MPI.Get_library_version().splitlines()[0])" 2>&1 | tail -1
b() { timeout "$1" python3 benchmarks/keras2_benchmark.py --engine jax --sides ours,keras3_jax \
      --epochs 3 --scale 16 "${@:2}"; }
b 220 --models resnet,lstm256 --rounds 2 --json "$OUT/gpu_a.json" 2>&1 | tee "$OUT/gpu_a.txt" | grep -v '^round'
for m in lstm256 resnet; do
  PYTHONPATH=$KERAS_BACKEND_KERAS2_PATH:$PWD:/tmp/site KERAS_BACKEND=keras_backend.jax_backend \
      timeout 30 python3 -W ignore benchmarks/jax_step_probe.py --model $m 2>&1 | tail -1
done
timeout 50 benchmarks/jax_compile_log.sh lstm256 16 2>&1 | tee "$OUT/compile_lstm256.txt"
b 150 --models gru256,transformer,convlstm --rounds 1 --json "$OUT/gpu_b.json" 2>&1 | tee "$OUT/gpu_b.txt" | grep -v '^round'
