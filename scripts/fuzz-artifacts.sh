#!/bin/sh
# Runs the artifact loaders' libFuzzer targets (tests/fuzz/fuzz_artifacts.c)
# for a bounded time each: .npy, params.bin, graph.json, the IR text and a
# one-file model (its embedded model, and a library holding one), and
# vm.json (the VM's program loader).
# usage: fuzz-artifacts.sh BUILD_DIR SECONDS_EACH
# Seeds: tests/data/npy, a params.bin made here from two of those files,
# tests/fuzz/seeds/{graph_json,ir_text,vm_json}, and for model_so an embedded model
# made here (the graph.json seed and that params.bin behind the header) and
# a small ELF library exporting it as __kiln_model ($CC, else cc, from an
# assembly file that .incbin's it). A crash, sanitizer report or leak
# makes libFuzzer write the input to tests/fuzz/findings-new/ and the
# script exit non-zero.
set -eu
build=$1
seconds=$2
root=$(cd "$(dirname "$0")/.." && pwd)
findings=$root/tests/fuzz/findings-new
mkdir -p "$findings"
status=0
# le VALUE BYTES: VALUE as BYTES little-endian bytes
le() {
  v=$1 n=$2 out=""
  while [ "$n" -gt 0 ]; do
    out="$out\\$(printf '%03o' $((v % 256)))"
    v=$((v / 256)) n=$((n - 1))
  done
  printf "$out"
}
for format in npy params graph_json ir_text model_so vm_json; do
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
  model_so)
    graph=$root/tests/fuzz/seeds/graph_json/two_nodes.json
    params=$build/tests/fuzz-corpus-params/two.params
    {
      printf 'KILNMDL\000'
      le 1 4
      le 0 4
      le "$(wc -c <"$graph")" 8
      le "$(wc -c <"$params")" 8
      cat "$graph" "$params"
    } >"$corpus/embedded.kiln"
    printf '\t.section .note.GNU-stack,"",%%progbits\n\t.section .rodata,"a",%%progbits\n\t.globl __kiln_model\n\t.type __kiln_model, %%object\n__kiln_model:\n\t.incbin "%s"\n\t.size __kiln_model, . - __kiln_model\n' \
      "$corpus/embedded.kiln" >"$build/tests/fuzz-model.s"
    ${CC:-cc} -shared -nostdlib -o "$corpus/model.so" "$build/tests/fuzz-model.s"
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
