#!/bin/sh
# kiln against PyTorch's numbers and ONNX Runtime's speed on torchvision's
# architectures (bench/zoo/export.py: random weights, each model's input and
# PyTorch's own output). For each model: `kiln compile` (timed), `kiln run
# --expect` against PyTorch's output (whole-model tolerances, rtol 1e-3,
# atol 1e-4), then `kiln bench` and ../shared/bench/ort_bench.js on the same
# input and thread count, medians of RUNS runs, and the ratio kiln / ORT.
# A model that fails to export, compile or match is reported on its line and
# the script goes on.
# Usage: bench/zoo/run.sh [RUNS] [THREADS...]   (ZOO_MODELS names a subset)
set -eu
cd "$(dirname "$0")/../.."
RUNS=${1:-10}
if [ $# -gt 0 ]; then shift; fi
THREADS=${*:-1 2}
BUILD=${BUILD_DIR:-build-release}
OUT=${ZOO_DIR:-/tmp/kiln-zoo}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" --target kiln -j2 >/dev/null
NODE_PATH=${NODE_PATH:-$(bash ../shared/bench/peer-setup.sh)}
export NODE_PATH
mkdir -p "$OUT/compiled"
LIST=${ZOO_MODELS:-densenet121 shufflenet_v2_x1_0 googlenet inception_v3 resnext50_32x4d
regnet_y_400mf mobilenet_v3_large efficientnet_b0 mnasnet1_0 convnext_tiny vgg11_bn vit_b_16}
KILN="$BUILD/tools/kiln"
printf '%-20s %7s %10s %10s %9s %9s %s\n' model threads kiln_ms ort_ms kiln/ort compile_s pytorch
for model in $LIST; do
  if [ ! -f "$OUT/$model.onnx" ] &&
    ! /usr/bin/python3 bench/zoo/export.py "$OUT" "$model" >"$OUT/$model.export.log" 2>&1; then
    printf '%-20s export failed: %s\n' "$model" "$(tail -1 "$OUT/$model.export.log")"
    continue
  fi
  dir="$OUT/compiled/$model"
  rm -rf "$dir"
  start=$(date +%s.%N)
  if ! out=$("$KILN" compile "$OUT/$model.onnx" -o "$dir" 2>&1); then
    printf '%-20s kiln compile failed: %s\n' "$model" "$(echo "$out" | tail -1)"
    continue
  fi
  compile_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  match=matches
  "$KILN" run "$dir" --input "$OUT/$model.input.npy" --expect "$OUT/$model.expected.npy" \
    >/dev/null 2>&1 || match=DIFFERS
  for t in $THREADS; do
    kiln_ms=$("$KILN" bench "$dir" --input "$OUT/$model.input.npy" --threads "$t" --runs "$RUNS" |
      sed -n 's/.*latency: median \([0-9.]*\) ms.*/\1/p')
    ort_ms=$(node ../shared/bench/ort_bench.js "$OUT/$model.onnx" "$OUT/$model.input.npy" \
      --threads "$t" --runs "$RUNS" | sed -n 's/.*"median_ms": *\([0-9.]*\).*/\1/p')
    ratio=$(awk -v a="$kiln_ms" -v b="$ort_ms" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    printf '%-20s %7s %10s %10s %9s %9s %s\n' "$model" "$t" "$kiln_ms" "$ort_ms" "$ratio" \
      "$compile_s" "$match"
  done
done
