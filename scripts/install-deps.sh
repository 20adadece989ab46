#!/bin/sh
# Installs the Debian packages kiln builds and tests with, when any is missing.
# `make` runs this before every build; it costs one dpkg query when all is there.
# As root it installs with apt-get; otherwise it prints the one line to run and
# fails. The list is the single place kiln's system dependencies are written.
set -eu

PACKAGES="cmake make gcc g++ clang pkg-config libc6-dev clang-format
libcmocka-dev libdlpack-dev libjansson-dev
libprotobuf-c-dev protobuf-c-compiler libonnx-dev libonnx-testdata
llvm-14-dev binutils-aarch64-linux-gnu
python3-dev python3-numpy python3-setuptools python3-pytest python3-torch"

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "kiln: not a Debian system; make sure these are installed: $(echo $PACKAGES)" >&2
  exit 0
fi

missing=""
for package in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $package"
  fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  echo "kiln: installing Debian packages:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing
else
  echo "kiln: missing Debian packages:$missing" >&2
  echo "kiln: install them with:" >&2
  echo "  sudo apt-get install -y$missing" >&2
  exit 1
fi
