#!/bin/sh
# ctest's python.pytest: runs tests/python with pytest against the package
# built in the build tree. Exits 77 (skipped, with the reason) when the
# package was not built (SKIP_REASON set at configure time) or python3,
# NumPy or pytest is missing; pytest's own skips (torch absent, the shared
# models absent) are listed as "skipped: pytest: ..." lines for
# scripts/report-skips.sh, while the test passes. KILN_BUILD_DIR (the
# parent of LIBKILN_DIR) is the build tree test_install.py installs.
# usage: run_pytest.sh PYTHON PACKAGE_DIR LIBKILN_DIR [SKIP_REASON]
set -u
python=$1
package_dir=$2
library_dir=$3
reason=${4:-}
if [ -n "$reason" ]; then
  echo "skipped: $reason"
  exit 77
fi
if [ -z "$python" ] || ! "$python" -c "import numpy, pytest" 2>/dev/null; then
  echo "skipped: python3 with NumPy and pytest is needed (python3-numpy, python3-pytest)"
  exit 77
fi
if [ ! -f "$package_dir/kiln/built.stamp" ]; then
  echo "skipped: the Python package is not built in $package_dir (cmake --build, target kiln_python)"
  exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
log=$(mktemp)
PYTHONPATH="$package_dir${PYTHONPATH:+:$PYTHONPATH}" \
LD_LIBRARY_PATH="$library_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
KILN_BUILD_DIR="$(dirname "$library_dir")" PYTHONDONTWRITEBYTECODE=1 \
  "$python" -m pytest -p no:cacheprovider -rs -q "$here" >"$log" 2>&1
status=$?
cat "$log"
sed -n 's/^SKIPPED \[[0-9]*\] [^ ]* \(.*\)$/skipped: pytest: \1/p' "$log"
rm -f "$log"
exit $status
