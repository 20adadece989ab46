#!/bin/sh
# Builds kiln's runtime (Release, in BUILD_DIR, default build-bench) and the
# launch-overhead benchmark with `cc -O2 -fopenmp`, then runs it. Arguments
# go to the benchmark: [launches per round] [rounds]. See bench/README.md.
set -eu
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build-bench}
JOBS=${JOBS:-2}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j"$JOBS" --target kiln_runtime >/dev/null
# shellcheck disable=SC2046
${CC:-cc} -std=c11 -O2 -fopenmp -Wall -Wextra -Iinclude bench/launch/launch_bench.c \
  "$BUILD_DIR/src/libkiln_runtime.a" "$BUILD_DIR/src/libkiln_base.a" \
  $(pkg-config --libs jansson) -lpthread -lm -o "$BUILD_DIR/launch_bench"
"$BUILD_DIR/launch_bench" "$@"
