#!/bin/sh
# Tests of `kiln conformance` on a made-up cases folder built from ONNX's
# backend node tests: test_abs as is (passes), test_add with its expected
# output damaged (fails), test_abs with its operator renamed to Zzz
# (unsupported), a folder without a model (fails); then test_nonzero_example
# and a test_range case, whose outputs depend on their inputs' values, which
# only the run sees (computed when the model runs), and a MaxUnpool whose
# output_shape comes at run time. They check
# the classification, the totals, the report's rows (and that it is the same
# on every run and with --jobs 2), the pass list written and checked
# (regressions exit 1, newly passing cases are reported), the usage errors,
# the exit code 77 for a missing folder, and the isolation: a case that hangs
# (its model.onnx a FIFO nobody writes) times out, and one whose process is
# killed is recorded as crashed, while the run goes on.
# usage: test_conformance.sh PATH/TO/kiln [PATH/TO/libonnx-testdata/data/node]
set -u
kiln=$1
source=${2:-/usr/share/libonnx-testdata/data/node}
if [ ! -d "$source/test_abs" ] || [ ! -d "$source/test_add" ]; then
  echo "skipped: the ONNX backend node tests are not in $source (libonnx-testdata)"
  exit 77
fi
. "$(dirname "$0")/expect.sh"

# has FILE PATTERN: FILE has a line matching PATTERN (grep -E).
has() {
  if grep -Eq -- "$2" "$1"; then
    echo "ok: $(basename "$1") has /$2/"
  else
    fail "$(basename "$1") lacks /$2/:"; cat "$1"
  fi
}

cases=$work/cases
mkdir -p "$cases" "$cases/test_nomodel"
cp -r "$source/test_abs" "$cases/test_abs"
cp -r "$source/test_add" "$cases/test_add_wrong"
# The last byte of the expected output is the top byte of its last float.
output=$cases/test_add_wrong/test_data_set_0/output_0.pb
size=$(wc -c <"$output")
printf '\177' | dd of="$output" bs=1 seek=$((size - 1)) conv=notrunc 2>/dev/null
cp -r "$source/test_abs" "$cases/test_zzz"
perl -0777 -pi -e 's/"\x03Abs/"\x03Zzz/' "$cases/test_zzz/model.onnx"

report=$work/report.md
expect 0 out "^conformance: 1 passed, 2 failed, 1 unsupported of 4$" -- \
  "$kiln" conformance "$cases" --report "$report" --write-pass-list "$work/pass.txt"
has "$report" "^\*\*1 passed, 2 failed, 1 unsupported of 4\.\*\*$"
has "$report" "^Produced by \`kiln conformance $cases --report $report --write-pass-list"
has "$report" "^\| test_abs \| PASS \|  \|$"
has "$report" "^\| test_add_wrong \| FAIL \| output 0: 1 of 60 elements differ; the first is element 59"
has "$report" "^\| test_nomodel \| FAIL \| model.onnx: cannot open"
has "$report" "^\| test_zzz \| UNSUPPORTED \| model.onnx: unsupported operators: Zzz \(node #0\) \|$"
has "$report" "^\| Add \| 0 \| 1 \| 0 \| FAIL \(1\): output 0: 1 of 60 elements differ"
has "$report" "^\| Zzz \| 0 \| 0 \| 1 \| UNSUPPORTED \(1\): model.onnx: unsupported operators: Zzz"
has "$report" "^\| nomodel\* \| 0 \| 1 \| 0 \|"
if grep -q "^| Abs |" "$report"; then fail "report: Abs passes, so it has no row of its own"; fi
[ "$(grep -c '^| test_' "$report")" -eq 4 ] || fail "report: expected 4 case rows"
if [ "$(grep -v '^#' "$work/pass.txt")" = "test_abs" ] && grep -q "^# " "$work/pass.txt"; then
  echo "ok: the pass list written is test_abs under a comment"
else
  fail "the pass list written:"; cat "$work/pass.txt"
fi

# The same tree gives the same report, with one process or two.
"$kiln" conformance "$cases" --report "$work/again.md" --jobs 2 >/dev/null
if diff "$report" "$work/again.md" | grep -v "Produced by" | grep -q '^[<>]'; then
  fail "the report differs between runs:"; diff "$report" "$work/again.md"
else
  echo "ok: the report is the same with --jobs 2"
fi

# Pass lists: comments, blank lines, a regression, a missing case, a new pass.
printf '# comment\n\ntest_abs  # trailing comment\ntest_add_wrong\n' >"$work/list1.txt"
expect 1 err "^regression: test_add_wrong \(FAIL: output 0: 1 of 60" -- \
  "$kiln" conformance "$cases" --pass-list "$work/list1.txt"
expect 1 err "kiln conformance: 1 of the 2 cases listed in .*list1.txt did not pass" -- \
  "$kiln" conformance "$cases" --pass-list "$work/list1.txt"
printf 'test_zzz\ntest_gone\n' >"$work/list2.txt"
expect 1 err "^regression: test_zzz \(UNSUPPORTED: model.onnx: unsupported operators: Zzz" -- \
  "$kiln" conformance "$cases" --pass-list "$work/list2.txt"
expect 1 err "^regression: test_gone \(no such case in $cases\)" -- \
  "$kiln" conformance "$cases" --pass-list "$work/list2.txt"
expect 0 out "^pass list .*pass.txt: 1 listed cases checked, 0 regressions, 0 newly passing$" -- \
  "$kiln" conformance "$cases" --pass-list "$work/pass.txt"
printf '# nothing yet\n' >"$work/empty.txt"
expect 0 out "^newly passing: test_abs$" -- "$kiln" conformance "$cases" --pass-list "$work/empty.txt"
# --filter checks only the listed cases it selects.
expect 0 out "^conformance: 1 passed, 0 failed, 0 unsupported of 1$" -- \
  "$kiln" conformance "$cases" --filter abs --pass-list "$work/list1.txt"
expect 0 out "^\[1/1\] test_add_wrong: FAIL: output 0" -- \
  "$kiln" conformance "$cases" --filter add --verbose
expect 1 err "kiln conformance: --pass-list: .*missing.txt: cannot open" -- \
  "$kiln" conformance "$cases" --pass-list "$work/missing.txt"
expect 1 err "kiln conformance: --report: .*cannot create" -- \
  "$kiln" conformance "$cases" --report "$work/no/such/dir/r.md"

# Cases run as a user runs the model: the import knows nothing of the test
# inputs, so an output that depends on their values is computed at run time
# or the case is refused; it is never folded from them at import. NonZero's
# input, fed as a graph input, is counted when the model runs; MaxUnpool's
# output_shape fed at run time is read by dyn operators, as Range's start
# becomes dyn.arange, which the interpreter runs (docs/dynamic-shapes.md);
# Abs runs on the inputs fed at run time.
runtime=$work/runtime
mkdir -p "$runtime"
for name in test_abs test_nonzero_example test_range_float_type_positive_delta \
  test_maxunpool_export_with_output_shape; do
  cp -r "$source/$name" "$runtime/$name"
done
expect 0 out "^conformance: 4 passed, 0 failed, 0 unsupported of 4$" -- \
  "$kiln" conformance "$runtime" --report "$work/runtime.md"
has "$work/runtime.md" "^\| test_abs \| PASS \|  \|$"
has "$work/runtime.md" "^\| test_nonzero_example \| PASS \|"
has "$work/runtime.md" "^\| test_maxunpool_export_with_output_shape \| PASS \|"
has "$work/runtime.md" "^\| test_range_float_type_positive_delta \| PASS \|"
has "$work/runtime.md" "its graph inputs left as\$"
# The same compiled for the VM (docs/vm.md): Abs, Range (dyn.arange, a
# kernel over its run-time extent), nonzero (the runtime's extern kernel,
# call_extern) and MaxUnpool's rank-4 output of four run-time dims (at the
# small probe sizes, its flattened extent a product of four) run on it.
expect 0 out "^conformance: 4 passed, 0 failed, 0 unsupported of 4$" -- \
  "$kiln" conformance "$runtime" --target c --executor vm --report "$work/runtime-vm.md"
has "$work/runtime-vm.md" "and the VM executor"
has "$work/runtime-vm.md" "^\| test_maxunpool_export_with_output_shape \| PASS \|"
has "$work/runtime-vm.md" "^\| test_range_float_type_positive_delta \| PASS \|"
has "$work/runtime-vm.md" "^\| test_nonzero_example \| PASS \|"

# Usage mistakes and a missing folder (exit 77: ctest's "skipped").
expect 2 err "usage: kiln conformance" -- "$kiln" conformance "$cases" --jobs 0
expect 2 err "unknown option '--frob'" -- "$kiln" conformance "$cases" --frob
expect 2 err "unexpected argument 'extra'" -- "$kiln" conformance "$cases" extra
expect 2 err "missing value after '--report'" -- "$kiln" conformance "$cases" --report
expect 2 err "--executor chooses among compiled executors; it needs '--target'" -- \
  "$kiln" conformance "$cases" --executor vm
expect 2 err "expected graph, vm or auto after '--executor'" -- \
  "$kiln" conformance "$cases" --target c --executor jit
expect 77 err "$work/none: no such folder, so nothing was checked" -- \
  "$kiln" conformance "$work/none"

# Isolation: a case that hangs times out; a case whose process dies is
# recorded as crashed; both runs finish and report the other cases.
hang=$work/hang
mkdir -p "$hang"
cp -r "$source/test_abs" "$hang/test_abs"
cp -r "$source/test_abs" "$hang/test_fifo"
# KILN_CONFORMANCE_STALL makes the named case's child hang (kiln refuses a
# FIFO as a model at once, so a FIFO no longer can).
expect 0 out "^conformance: 1 passed, 1 failed, 0 unsupported of 2$" -- \
  env KILN_CONFORMANCE_STALL=test_fifo "$kiln" conformance "$hang" --timeout 1 --report "$work/hang.md"
has "$work/hang.md" "^\| test_fifo \| FAIL \| timed out after 1 s \|$"
has "$work/hang.md" "^\| fifo\* \| 0 \| 1 \| 0 \| FAIL \(1\): timed out after 1 s \|$"
# The hanging case sorts first, so the runner's only child is that case's.
crash=$work/crash
mkdir -p "$crash"
cp -r "$source/test_abs" "$crash/test_abs"
cp -r "$source/test_abs" "$crash/test_0_fifo"
KILN_CONFORMANCE_STALL=test_0_fifo "$kiln" conformance "$crash" --report "$work/crash.md" \
  >"$work/crash.out" 2>&1 &
runner=$!
child=
for _ in $(seq 1 100); do
  child=$(pgrep -P "$runner" | head -n 1)
  [ -n "$child" ] && break
  sleep 0.1
done
if [ -n "$child" ]; then
  kill -KILL "$child"
  wait "$runner"
  code=$?
  [ "$code" -eq 0 ] || fail "the runner exited $code after its child was killed"
  has "$work/crash.md" "^\| test_0_fifo \| FAIL \| crashed: signal 9 \(Killed\) \|$"
  has "$work/crash.md" "^\| test_abs \| PASS \|  \|$"
else
  kill "$runner"
  fail "found no child process of the runner to kill"
fi

[ "$failures" -eq 0 ] && echo "all conformance runner checks passed"
exit "$failures"
