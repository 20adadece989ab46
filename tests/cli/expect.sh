# Shared by the CLI test scripts (sourced): a temporary folder $work removed
# on exit, a failure counter, and the checks.

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
skipped=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect EXIT_CODE STREAM PATTERN -- COMMAND...: runs COMMAND, checks its exit
# code and that STREAM (out or err) contains PATTERN (a grep -E pattern).
expect() {
  code=$1 stream=$2 pattern=$3
  shift 4
  "$@" >"$work/out" 2>"$work/err"
  got=$?
  if [ "$got" -ne "$code" ]; then
    fail "$*: exit $got, expected $code"; cat "$work/out" "$work/err"; return
  fi
  if ! grep -Eq -- "$pattern" "$work/$stream"; then
    fail "$*: std$stream lacks /$pattern/:"; cat "$work/$stream"; return
  fi
  echo "ok: $* -> $code, std$stream has /$pattern/"
}
