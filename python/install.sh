#!/bin/sh
# Installs kiln's Python package for PYTHON against the kiln installed
# under PREFIX (`make install PREFIX=...` first; `make install-python`
# does both): builds the extension with setuptools against that prefix's
# kiln.pc (headers and libkiln.so, whose folder becomes the extension's
# rpath) and copies the package into SITE, by default the folder on
# Debian's python3 path for PREFIX: /usr/local/lib/python3.X/dist-packages
# for /usr/local, /usr/lib/python3/dist-packages for /usr, else
# PREFIX/lib/python3.X/dist-packages (then add it to PYTHONPATH).
# usage: install.sh PREFIX [PYTHON [SITE]]
set -eu
prefix=$(cd "$1" && pwd)
python=${2:-/usr/bin/python3}
site=${3:-}
here=$(cd "$(dirname "$0")" && pwd)

pc=""
for dir in "$prefix"/lib/pkgconfig "$prefix"/lib/*/pkgconfig "$prefix"/lib64/pkgconfig; do
  if [ -f "$dir/kiln.pc" ]; then
    pc=$dir
    break
  fi
done
if [ -z "$pc" ]; then
  echo "kiln: no kiln.pc under $prefix (run make install PREFIX=$prefix first)" >&2
  exit 1
fi
if [ -z "$site" ]; then
  minor=$("$python" -c 'import sys; print(sys.version_info.minor)')
  case "$prefix" in
  /usr) site=/usr/lib/python3/dist-packages ;;
  *) site=$prefix/lib/python3.$minor/dist-packages ;;
  esac
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$here" && PKG_CONFIG_PATH="$pc" "$python" setup.py --quiet build \
  --build-base "$work/build" --build-lib "$work/lib" --force)
mkdir -p "$site"
rm -rf "$site/kiln"
cp -R "$work/lib/kiln" "$site/kiln"
(cd / && "$python" -c "import sys; sys.path.insert(0, '$site'); import kiln; \
print('kiln: installed the Python package kiln', kiln.version, 'in', '$site')")
