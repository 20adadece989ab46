#!/bin/sh
# The install, used as a user uses it (docs/install.md):
#  1. `cmake --install` of this build into WORK/prefix; the layout checked
#     (libraries, soname, exported symbols, headers, .pc files, the CMake
#     package, the kiln tool);
#  2. resnet18 compiled by the installed kiln tool into WORK/resnet18, and
#     into one file, WORK/resnet18.so (a one-file model);
#  3. pkgconfig/run_model.c built with `pkg-config --cflags --libs kiln` (and
#     statically, with `pkg-config --static --libs kiln`), and
#     cmake/run_model.c built with find_package(kiln) (against kiln::kiln and
#     kiln::kiln_static), against that prefix alone, each run on resnet18's
#     input and compared with the expected output, from the folder, and
#     (the shared and the runtime-only consumers) from the one file;
#  4. a KILN_RUNTIME_ONLY tree configured with LLVM, protobuf-c, the ONNX
#     schema and cmocka out of sight (configure must not even look), built,
#     installed into WORK/runtime-prefix, and the pkg-config and CMake
#     consumers built against libkiln_runtime alone and run the same way.
# Everything is written under WORK (inside the build tree). Skipped (77) when
# the shared models, pkg-config or make are missing.
# usage: test_consumers.sh SOURCE_DIR BUILD_DIR WORK MODELS_DIR CMAKE CC
set -u
source=$1
build=$2
work=$3
models=$4
cmake=$5
cc=$6
model=resnet18

for file in "$model.onnx" "$model.input.npy" "$model.output.npy"; do
  if [ ! -f "$models/$file" ]; then
    echo "skipped: $models/$file is absent (the shared models)"
    exit 77
  fi
done
for tool in pkg-config make; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "skipped: $tool is not installed"
    exit 77
  fi
done

rm -rf "$work"
mkdir -p "$work"
start=$(date +%s)
fail() {
  echo "FAIL: $*"
  exit 1
}
# run LABEL COMMAND...: runs quietly, shows the output when it fails.
run() {
  label=$1
  shift
  echo "== $label ($(($(date +%s) - start)) s)"
  if ! "$@" >"$work/last.log" 2>&1; then
    cat "$work/last.log"
    fail "$label: $*"
  fi
}
expect_files() {
  root=$1
  shift
  for file in "$@"; do
    [ -e "$root/$file" ] || fail "$root/$file was not installed"
  done
}
expect_no_files() {
  root=$1
  shift
  for file in "$@"; do
    [ ! -e "$root/$file" ] || fail "$root/$file is installed by a runtime-only build"
  done
}
# Only kiln_* functions are exported by a shared library.
expect_exports() {
  library=$1
  command -v nm >/dev/null 2>&1 || return 0
  others=$(nm -D --defined-only "$library" | awk '{print $3}' | grep -v '^kiln_' | head -5)
  [ -z "$others" ] || fail "$library exports symbols besides kiln_*: $others"
  nm -D --defined-only "$library" | grep -q ' kiln_graph_executor_run$' ||
    fail "$library does not export kiln_graph_executor_run"
}
# A consumer's build must reach kiln through the prefix alone: no source
# folder of kiln and no folder of its build tree (but the prefix) in it.
expect_prefix_only() {
  what=$1
  text=$2
  for dir in "$source/include" "$source/src" "$build/include" "$build/lib" "$build/src"; do
    case $text in
      *"$dir"*) fail "$what refers to $dir: $text" ;;
    esac
  done
}
run_consumer() {
  label=$1
  program=$2
  run "$label" "$program" "$work/$model" "$models/$model.input.npy" "$models/$model.output.npy"
  cat "$work/last.log"
}
# The same from the one-file model.
run_consumer_one_file() {
  label=$1
  program=$2
  run "$label" "$program" "$work/$model.so" "$models/$model.input.npy" "$models/$model.output.npy"
  cat "$work/last.log"
}

# 1. Install.
prefix=$work/prefix
run "cmake --install into $prefix" "$cmake" --install "$build" --prefix "$prefix"
expect_files "$prefix" bin/kiln lib/libkiln.so lib/libkiln.a lib/libkiln_runtime.so \
  lib/libkiln_runtime.a lib/pkgconfig/kiln.pc lib/pkgconfig/kiln_runtime.pc \
  lib/cmake/kiln/kilnConfig.cmake lib/cmake/kiln/kilnConfigVersion.cmake \
  include/kiln/runtime.h include/kiln/version.h include/kiln/compiler.h include/kiln/eager.h
version=$(sed -n 's/^#define KILN_VERSION_STRING "\(.*\)"$/\1/p' "$prefix/include/kiln/version.h")
major_minor=$(echo "$version" | cut -d. -f1-2)
expect_files "$prefix" "lib/libkiln.so.$version" "lib/libkiln_runtime.so.$version"
if command -v objdump >/dev/null 2>&1; then
  objdump -p "$prefix/lib/libkiln.so" | grep -q "SONAME *libkiln.so.$major_minor\$" ||
    fail "libkiln.so's soname is not libkiln.so.$major_minor"
fi
expect_exports "$prefix/lib/libkiln.so"
expect_exports "$prefix/lib/libkiln_runtime.so"

# 2. The model, compiled by the installed tool.
run "kiln compile $model" "$prefix/bin/kiln" compile "$models/$model.onnx" -o "$work/$model"
run "kiln compile $model -o $model.so" "$prefix/bin/kiln" compile "$models/$model.onnx" \
  -o "$work/$model.so"

# 3. The consumers.
PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export PKG_CONFIG_PATH
flags=$(pkg-config --cflags --libs kiln) || fail "pkg-config does not find kiln in $PKG_CONFIG_PATH"
expect_prefix_only "pkg-config --cflags --libs kiln" "$flags"
echo "pkg-config --cflags --libs kiln: $flags"
run "make (pkg-config, libkiln)" make -C "$source/tests/install/pkgconfig" OUT="$work" CC="$cc"
mv "$work/run_model" "$work/run_model_pkgconfig"
run_consumer "run_model (pkg-config, libkiln.so)" "$work/run_model_pkgconfig"
run_consumer_one_file "run_model $model.so (pkg-config, libkiln.so)" "$work/run_model_pkgconfig"
# libkiln.a alone and its private dependencies from pkg-config --static.
static_libs=$(pkg-config --static --libs kiln | sed 's/\(^\| \)-lkiln\( \|$\)/ /')
# shellcheck disable=SC2046,SC2086
run "cc (pkg-config --static, libkiln.a)" "$cc" -std=c11 -Wall -Wextra -Werror -O2 \
  $(pkg-config --cflags kiln) "$source/tests/install/pkgconfig/run_model.c" \
  -Wl,-Bstatic -lkiln -Wl,-Bdynamic $static_libs -lm -o "$work/run_model_pkgconfig_static"
if ldd "$work/run_model_pkgconfig_static" | grep -q libkiln; then
  fail "run_model_pkgconfig_static loads a shared libkiln"
fi
run_consumer "run_model (pkg-config --static, libkiln.a)" "$work/run_model_pkgconfig_static"
# The comparison can fail: another model's output (same shape) is not resnet18's.
if [ -f "$models/mobilenet_v2.output.npy" ]; then
  if "$work/run_model_pkgconfig" "$work/$model" "$models/$model.input.npy" \
    "$models/mobilenet_v2.output.npy" >"$work/last.log" 2>&1; then
    fail "run_model accepted mobilenet_v2's output as resnet18's"
  fi
  grep -q "outputs differ" "$work/last.log" || fail "run_model: $(cat "$work/last.log")"
fi

run "cmake configure (find_package)" "$cmake" -S "$source/tests/install/cmake" -B "$work/cmake" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix"
grep -q "^kiln_DIR:PATH=$prefix/lib/cmake/kiln\$" "$work/cmake/CMakeCache.txt" ||
  fail "find_package(kiln) did not find $prefix/lib/cmake/kiln"
run "cmake build (find_package)" "$cmake" --build "$work/cmake" -j2
expect_prefix_only "the find_package consumer's build" \
  "$(cat "$work"/cmake/CMakeFiles/run_model*.dir/flags.make "$work"/cmake/CMakeFiles/run_model*.dir/link.txt)"
run_consumer "run_model (find_package, kiln::kiln)" "$work/cmake/run_model"
run_consumer "run_model_static (find_package, kiln::kiln_static)" "$work/cmake/run_model_static"

# 4. The runtime alone. pkg-config sees jansson alone; the cache must show that
# configure looked for none of the compiler's dependencies.
mkdir -p "$work/pkgconfig-jansson"
ln -s "$(pkg-config --variable=pcfiledir jansson)/jansson.pc" "$work/pkgconfig-jansson/jansson.pc" ||
  fail "jansson.pc not found"
runtime_build=$work/runtime-build
runtime_prefix=$work/runtime-prefix
run "cmake configure -DKILN_RUNTIME_ONLY=ON" env PKG_CONFIG_LIBDIR="$work/pkgconfig-jansson" \
  PKG_CONFIG_PATH= "$cmake" -S "$source" -B "$runtime_build" -DKILN_RUNTIME_ONLY=ON \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$cc" -DCMAKE_DISABLE_FIND_PACKAGE_LLVM=ON
looked=$(grep -E '^(KILN_LLVM_CONFIG|KILN_LLVM|KILN_PROTOC_C|KILN_ONNX_PROTO|CMOCKA_FOUND|PROTOBUF_C_FOUND)[:=]' \
  "$runtime_build/CMakeCache.txt")
[ -z "$looked" ] || fail "the runtime-only configure looked for the compiler's dependencies: $looked"
run "cmake build (runtime only)" "$cmake" --build "$runtime_build" -j2
run "cmake --install (runtime only)" "$cmake" --install "$runtime_build" --prefix "$runtime_prefix"
expect_files "$runtime_prefix" lib/libkiln_runtime.so lib/libkiln_runtime.a \
  lib/pkgconfig/kiln_runtime.pc lib/cmake/kiln/kilnConfig.cmake include/kiln/runtime.h \
  include/kiln/npy.h include/kiln/version.h
expect_no_files "$runtime_prefix" bin/kiln lib/libkiln.so lib/libkiln.a lib/pkgconfig/kiln.pc \
  include/kiln/compiler.h include/kiln/eager.h
expect_exports "$runtime_prefix/lib/libkiln_runtime.so"
if ldd "$runtime_prefix/lib/libkiln_runtime.so" | grep -E 'LLVM|protobuf'; then
  fail "libkiln_runtime.so depends on LLVM or protobuf-c"
fi

PKG_CONFIG_PATH=$runtime_prefix/lib/pkgconfig
pkg-config --exists kiln && fail "kiln.pc is visible from the runtime-only prefix"
flags=$(pkg-config --cflags --libs kiln_runtime) || fail "pkg-config does not find kiln_runtime"
expect_prefix_only "pkg-config --cflags --libs kiln_runtime" "$flags"
run "make (pkg-config, libkiln_runtime)" make -C "$source/tests/install/pkgconfig" \
  PACKAGE=kiln_runtime OUT="$work" CC="$cc"
mv "$work/run_model" "$work/run_model_runtime"
loaded=$(ldd "$work/run_model_runtime" | sed -n 's/^.*libkiln_runtime\.so[^ ]* => \([^ ]*\) .*$/\1/p')
[ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "$runtime_prefix/lib/libkiln_runtime.so")" ] ||
  fail "run_model_runtime does not load $runtime_prefix/lib/libkiln_runtime.so (but '$loaded')"
if ldd "$work/run_model_runtime" | grep -E 'libkiln\.so|LLVM|protobuf'; then
  fail "run_model_runtime loads libkiln, LLVM or protobuf-c"
fi
run_consumer "run_model (pkg-config, libkiln_runtime.so)" "$work/run_model_runtime"
run_consumer_one_file "run_model $model.so (pkg-config, libkiln_runtime.so)" "$work/run_model_runtime"

run "cmake configure (find_package, COMPONENTS runtime)" "$cmake" \
  -S "$source/tests/install/cmake" -B "$work/cmake-runtime" -DKILN_COMPONENT=runtime \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$runtime_prefix"
run "cmake build (find_package, runtime)" "$cmake" --build "$work/cmake-runtime" -j2
run_consumer "run_model (find_package, kiln::kiln_runtime)" "$work/cmake-runtime/run_model"
run_consumer "run_model_static (find_package, kiln::kiln_runtime_static)" \
  "$work/cmake-runtime/run_model_static"

echo "install.consumers: passed in $(($(date +%s) - start)) s"
