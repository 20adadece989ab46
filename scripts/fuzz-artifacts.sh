#!/bin/sh
# Runs the artifact loaders' libFuzzer targets (tests/fuzz/fuzz_artifacts.c)
# for a bounded time each: .npy, params.bin, graph.json and the IR text.
# usage: fuzz-artifacts.sh BUILD_DIR SECONDS_EACH
# Seeds: tests/data/npy, a params.bin made here from two of those files,
# tests/fuzz/seeds/{graph_json,ir_text}. A crash, sanitizer report or leak
# makes libFuzzer write the input to tests/fuzz/findings-new/ and the
# script exit non-zero.
set -eu
build=$1
seconds=$2
root=$(cd "$(dirname "$0")/.." && pwd)
findings=$root/tests/fuzz/findings-new
mkdir -p "$findings"
status=0
for format in npy params graph_json ir_text; do
  corpus=$build/tests/fuzz-corpus-$format
  mkdir -p "$corpus"
  case $format in
  npy) cp "$root"/tests/data/npy/*.npy "$corpus/" ;;
  params)
    # magic, version 1, two tensors: "w" and "b", each a whole .npy
    npy1=$root/tests/data/npy/float32_5.npy npy2=$root/tests/data/npy/int64_scalar.npy
    {
      printf 'KILNPRM\000\001\000\000\000\002\000\000\000'
      printf '\001\000\000\000w'
      printf "$(printf '\\%03o' "$(wc -c <"$npy1")")"'\000\000\000\000\000\000\000'
      cat "$npy1"
      printf '\001\000\000\000b'
      printf "$(printf '\\%03o' "$(wc -c <"$npy2")")"'\000\000\000\000\000\000\000'
      cat "$npy2"
    } >"$corpus/two.params"
    ;;
  *) cp "$root"/tests/fuzz/seeds/$format/* "$corpus/" ;;
  esac
  log=$build/tests/fuzz-$format.log
  echo "fuzz: $format for $seconds s over $(ls "$corpus" | wc -l) seed inputs"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    "$build/tests/fuzz_$format" "$corpus" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$findings/$format-" >"$log" 2>&1 || status=$?
  grep -E '^stat::number_of_executed_units|ERROR|SUMMARY' "$log" || true
  [ "$status" -eq 0 ] || { tail -n 40 "$log"; break; }
done
rmdir "$findings" 2>/dev/null || true
exit $status
