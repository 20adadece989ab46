#!/bin/sh
# The eager VM's per-op scheduling overhead against PyTorch eager, in one
# run: builds the eager_bench target (bench/CMakeLists.txt; Release, in
# BUILD_DIR, default build-bench), runs it, runs torch_eager.py with
# Debian's python3-torch (installed with apt-get when missing and root),
# and prints both and the ratio. Arguments: [ops per round] [rounds].
# KILN_KERNELS=reference measures the reference kernels instead of the
# compiled ones (the kernel path is printed either way). See bench/README.md.
set -eu
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build-bench}
JOBS=${JOBS:-2}
OPS=${1:-100000}
ROUNDS=${2:-7}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j"$JOBS" --target eager_bench >/dev/null
KILN_OUT=$("$BUILD_DIR/bench/eager_bench" "$OPS" "$ROUNDS")
echo "$KILN_OUT" | grep -v '^KILN_US_PER_OP'
KILN_US=$(echo "$KILN_OUT" | sed -n 's/^KILN_US_PER_OP //p')

PYTHON=${PYTHON:-/usr/bin/python3}  # Debian's python, where python3-torch installs
if ! "$PYTHON" -c 'import torch' 2>/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing python3-torch with apt-get ..."
    DEBIAN_FRONTEND=noninteractive apt-get install -y python3-torch >/dev/null
  else
    echo "PyTorch is missing: install Debian's python3-torch (sudo apt-get install python3-torch)"
    echo "and run this again to compare; kiln's number is above."
    exit 0
  fi
fi
TORCH_OUT=$("$PYTHON" bench/eager/torch_eager.py "$OPS" "$ROUNDS")
echo "$TORCH_OUT" | grep -v '^TORCH_US_PER_OP'
TORCH_US=$(echo "$TORCH_OUT" | sed -n 's/^TORCH_US_PER_OP //p')
awk -v k="$KILN_US" -v t="$TORCH_US" \
  'BEGIN { printf "ratio kiln / torch: %.2f (kiln %.3f us/op, torch %.3f us/op)\n", k / t, k, t }'
