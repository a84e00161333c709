#!/bin/bash
# Issue 41 on the device machine's 16 host cores: JAX's collectives at 1, 4 and 8 workers,
# the engine's own (gloo) against MPI (that machine has JAX, mpi4py and OpenMPI's mpiexec,
# no TensorFlow). Keras 2.3.1 travels in .venv/keras2. Run from the repository root.
set -u
export PYTHONUNBUFFERED=1 JAX_PLATFORMS=cpu CUDA_VISIBLE_DEVICES=
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nproc; python3 -c "import jax, mpi4py; print('jax', jax.__version__, 'mpi4py', mpi4py.__version__)"
for c in mpi engine; do
  timeout ${1:-200} python3 benchmarks/distribute_benchmark.py --engine jax --models cnn,resnet \
      --workers 1,4,8 --rounds 1 --steps 10 --collectives $c 2>&1 | tee "$OUT/jax_$c.txt"
done
