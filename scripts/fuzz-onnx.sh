#!/bin/sh
# Runs the ONNX importer's libFuzzer target for a bounded time.
# usage: fuzz-onnx.sh FUZZER SECONDS [CORPUS_DIR]
# The corpus starts from the ONNX backend test models (libonnx-testdata) and
# the repository's findings folder; a crash, sanitizer report or leak makes
# libFuzzer write the input to tests/fuzz/findings-new/ and exit non-zero.
set -eu
fuzzer=$1
seconds=$2
corpus=${3:-$(dirname "$fuzzer")/fuzz-corpus}
cases=/usr/share/libonnx-testdata/data/node

mkdir -p "$corpus"
if [ -d "$cases" ] && [ -z "$(ls -A "$corpus")" ]; then
  for model in "$cases"/*/model.onnx; do
    name=$(basename "$(dirname "$model")")
    cp "$model" "$corpus/$name.onnx"
  done
fi
findings=$(cd "$(dirname "$0")/.." && pwd)/tests/fuzz/findings-new
mkdir -p "$findings"
echo "fuzz: $fuzzer for $seconds s over $(ls "$corpus" | wc -l) seed inputs"
log=$(dirname "$fuzzer")/fuzz.log
status=0
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  "$fuzzer" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -malloc_limit_mb=1024 -max_len=65536 -print_final_stats=1 \
  -artifact_prefix="$findings/" >"$log" 2>&1 || status=$?
tail -n 25 "$log"
rmdir "$findings" 2>/dev/null || true
exit $status
