#!/bin/sh
# Fails when clang-format (with the repository's .clang-format) would change
# any C file that git tracks; lists the files. `make format` fixes them.
set -eu
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find include src tools tests bench -name '*.[ch]')
bad=""
for file in $files; do
  [ -f "$file" ] || continue
  if ! clang-format --dry-run -Werror "$file" >/dev/null 2>&1; then
    bad="$bad $file"
  fi
done
if [ -n "$bad" ]; then
  echo "clang-format would change:$bad" >&2
  echo "run: make format" >&2
  exit 1
fi
echo "format: $(echo $files | wc -w) files clean"
