#!/bin/bash
# The XLA compilations one Keras 2.3.1 fit() epoch makes on JAX, ours against Keras 3
# (issue 38: the LSTM's first epoch on a GPU). JAX's own log (JAX_LOG_COMPILES=1), summed.
# usage: benchmarks/jax_compile_log.sh MODEL [SCALE]   (python: $PYTHON, default python3)
# Keras 2.3.1 from $KERAS_BACKEND_KERAS2_PATH (default .venv/keras2), Keras 3 from the path.
model=${1:-lstm256}; scale=${2:-1}; py=${PYTHON:-python3}
here=$(cd "$(dirname "$0")/.." && pwd)
k2=${KERAS_BACKEND_KERAS2_PATH:-$here/.venv/keras2}
for side in ours keras3_jax; do
  if [ $side = ours ]; then backend=keras_backend.jax_backend; path=$k2:$here:${PYTHONPATH:-}
  else backend=jax; path=$here:${PYTHONPATH:-}; fi
  log=$(KERAS_BACKEND=$backend PYTHONPATH=$path JAX_LOG_COMPILES=1 KERAS_BACKEND_QUIET=1 \
        $py -W ignore "$here/benchmarks/keras2_benchmark.py" --engine jax --worker $side \
        --model "$model" --epochs 1 --scale "$scale" 2>&1)
  echo "$log" | grep -o 'Finished XLA compilation of [^ ]* in [0-9.e-]* sec' |
    awk -v side=$side '{n++; t+=$(NF-1); if ($(NF-1) > 0.05) print side, $5, $(NF-1) " s"}
                       END {printf "%s: %d XLA compilations, %.2f s in all\n", side, n, t}'
  echo "$log" | grep -o 'Finished tracing [^ ]* for jit in [0-9.e-]* sec' |
    awk -v side=$side '{n++; t+=$(NF-1); if ($(NF-1) > 0.05) print side, "tracing", $3, $(NF-1) " s"}
                       END {printf "%s: %d traces, %.2f s in all\n", side, n, t}'
  echo "$log" | grep -o '"first_epoch_s": [0-9.]*' | sed "s/^/$side /"
done
