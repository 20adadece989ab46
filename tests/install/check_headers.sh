#!/bin/sh
# Compiles every public header alone, in a translation unit of its own that
# includes it twice (the include guard), as C11 or as C++17, warnings as
# errors. A compiler that is not installed skips the test (exit 77), naming
# it; it never passes.
# usage: check_headers.sh COMPILER c|c++ INCLUDE_DIRS HEADER...
#   INCLUDE_DIRS: ':'-separated; HEADER: a name under kiln/ (runtime.h)
set -u
compiler=$1
language=$2
include_dirs=$3
shift 3

if ! command -v "$compiler" >/dev/null 2>&1; then
  echo "skipped: $compiler is not installed (scripts/install-deps.sh installs it)"
  exit 77
fi
case $language in
  c) flags="-x c -std=c11 -Wall -Wextra -Werror -pedantic" ;;
  c++) flags="-x c++ -std=c++17 -Wall -Wextra -Werror -pedantic" ;;
  *) echo "check_headers.sh: language must be c or c++, not '$language'" >&2; exit 2 ;;
esac
includes=""
old_ifs=$IFS
IFS=:
for dir in $include_dirs; do includes="$includes -I$dir"; done
IFS=$old_ifs

work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-headers.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
failures=0
for header in "$@"; do
  printf '#include <kiln/%s>\n#include <kiln/%s>\nint kiln_header_check_%s;\n' \
    "$header" "$header" "$(echo "$header" | tr -c 'a-z0-9\n' _)" >"$work/unit"
  # shellcheck disable=SC2086
  if "$compiler" $flags $includes -c "$work/unit" -o "$work/unit.o" 2>"$work/errors"; then
    echo "ok: kiln/$header ($compiler, $language)"
  else
    echo "FAIL: kiln/$header does not compile alone with $compiler ($language):"
    sed 's/^/  /' "$work/errors"
    failures=$((failures + 1))
  fi
done
echo "$compiler ($language): $# headers, $failures failing"
[ "$failures" -eq 0 ]
