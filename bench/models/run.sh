#!/bin/sh
# kiln against ONNX Runtime on the shared ONNX models, in one run: for each
# model and thread count, `kiln bench --input` (compile in memory, median
# latency of RUNS runs after a warm-up) and ../shared/bench/ort_bench.js,
# both on the model's own input file (median of RUNS runs after 5
# warm-ups), then the ratio kiln / ORT of the medians. Every shared model
# is run (MODELS_LIST names others). A model kiln cannot compile is
# reported as such on its line, and the script goes on. With TUNING_DIR
# set, a model with records TUNING_DIR/MODEL.json (`kiln tune`) is also
# run with them (`kiln bench --tuning`), in the same loop: the tuned
# median and its ratio to ORT's get columns of their own ("-" without
# records).
# Usage: [TUNING_DIR=DIR] bench/models/run.sh [RUNS] [THREADS...]
set -eu
cd "$(dirname "$0")/../.."
RUNS=${1:-30}
if [ $# -gt 0 ]; then shift; fi
THREADS=${*:-1 2}
MODELS=${MODELS_DIR:-../shared/models}
BUILD=${BUILD_DIR:-build-release}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" --target kiln -j2 >/dev/null
NODE_PATH=${NODE_PATH:-$(bash ../shared/bench/peer-setup.sh)}
export NODE_PATH
TUNING=${TUNING_DIR:-}
printf '%-16s %7s %12s %12s %12s %10s %10s %10s\n' model threads kiln_ms tuned_ms ort_ms \
  kiln/ort tuned/ort compile_s
LIST=${MODELS_LIST:-mlp encoder_layer squeezenet1_1 mobilenet_v2 resnet18 cnn_mix}
for model in $LIST; do
  for t in $THREADS; do
    if ! out=$("$BUILD/tools/kiln" bench "$MODELS/$model.onnx" --input "$MODELS/$model.input.npy" \
      --threads "$t" --runs "$RUNS" 2>&1); then
      printf '%-16s %7s %s\n' "$model" "$t" "kiln failed: $(echo "$out" | tail -1)"
      continue
    fi
    kiln_ms=$(echo "$out" | sed -n 's/.*latency: median \([0-9.]*\) ms.*/\1/p')
    compile_s=$(echo "$out" | sed -n 's/.* in \([0-9.]*\) s (import.*/\1/p')
    tuned_ms=-
    if [ -n "$TUNING" ] && [ -f "$TUNING/$model.json" ]; then
      tuned_ms=$("$BUILD/tools/kiln" bench "$MODELS/$model.onnx" --input "$MODELS/$model.input.npy" \
        --threads "$t" --runs "$RUNS" --tuning "$TUNING/$model.json" 2>&1 |
        sed -n 's/.*latency: median \([0-9.]*\) ms.*/\1/p')
    fi
    ort=$(node ../shared/bench/ort_bench.js "$MODELS/$model.onnx" "$MODELS/$model.input.npy" \
      --threads "$t" --runs "$RUNS")
    ort_ms=$(echo "$ort" | sed -n 's/.*"median_ms": *\([0-9.]*\).*/\1/p')
    ratio=$(awk -v a="$kiln_ms" -v b="$ort_ms" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    tuned_ratio=$(awk -v a="$tuned_ms" -v b="$ort_ms" \
      'BEGIN { if (b > 0 && a + 0 > 0) printf "%.2f", a / b; else print "-" }')
    printf '%-16s %7s %12s %12s %12s %10s %10s %10s\n' "$model" "$t" "$kiln_ms" "$tuned_ms" \
      "$ort_ms" "$ratio" "$tuned_ratio" "$compile_s"
  done
done
