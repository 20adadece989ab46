# kiln's two commands: `make run` and `make test`. Everything else is a helper.
# Each target first makes sure the Debian packages are installed
# (scripts/install-deps.sh), then configures and builds with CMake.

BUILD_DIR      ?= build
ASAN_BUILD_DIR ?= build-asan
TSAN_BUILD_DIR ?= build-tsan
BUILD_TYPE     ?= Release
JOBS           ?= $(shell nproc 2>/dev/null || echo 2)

RUNTIME_BUILD_DIR ?= build-runtime
PREFIX         ?= /usr/local
PYTHON         ?= /usr/bin/python3
PYTHON_SITE    ?=

FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_SECONDS   ?= 60

.PHONY: all deps build run test test-sanitize test-tsan fuzz conformance format check-format clean \
	install install-runtime python install-python

all: build

deps:
	@sh scripts/install-deps.sh

$(BUILD_DIR)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j$(JOBS)

run: build
	$(BUILD_DIR)/tools/kiln bench resnet18 --check

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS); status=$$?; \
	sh scripts/report-skips.sh $(BUILD_DIR); exit $$status

# Installs libkiln (shared and static), libkiln_runtime, the headers, the
# pkg-config files, the CMake package and the kiln tool under PREFIX
# (docs/install.md): make install PREFIX=$$HOME/.local
install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# The Python package (docs/python.md): `build` makes it in
# $(BUILD_DIR)/python/lib (with the extension's rpath on $(BUILD_DIR)/lib);
# this prints how to use it in place.
python: build
	@echo "kiln: the Python package is in $(abspath $(BUILD_DIR))/python/lib:"
	@echo "  PYTHONPATH=$(abspath $(BUILD_DIR))/python/lib $(PYTHON) -c 'import kiln'"

# make install, then the Python package for PYTHON, built against the
# installed libkiln and copied to PYTHON_SITE (default: the dist-packages
# folder of Debian's python3 for PREFIX; python/install.sh):
# make install-python  (PREFIX=/usr/local: `import kiln` works at once)
install-python: install
	sh python/install.sh $(PREFIX) $(PYTHON) $(PYTHON_SITE)

# A deployment: the runtime alone (KILN_RUNTIME_ONLY: no LLVM, protobuf-c,
# ONNX schema or cmocka needed, so no `deps`), built in RUNTIME_BUILD_DIR and
# installed under PREFIX.
install-runtime:
	cmake -S . -B $(RUNTIME_BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DKILN_RUNTIME_ONLY=ON
	cmake --build $(RUNTIME_BUILD_DIR) -j$(JOBS)
	cmake --install $(RUNTIME_BUILD_DIR) --prefix $(PREFIX)

# The whole suite again, built with AddressSanitizer and UndefinedBehaviorSanitizer.
test-sanitize: deps
	cmake -S . -B $(ASAN_BUILD_DIR) -DCMAKE_BUILD_TYPE=Debug -DKILN_SANITIZE=ON
	cmake --build $(ASAN_BUILD_DIR) -j$(JOBS)
	ctest --test-dir $(ASAN_BUILD_DIR) --output-on-failure -j$(JOBS)

# The counting allocator's tests, the thread pool's (and the backend ABI's) and the eager VM's tests
# (its stress test, its API test, the kernel cache's, several caller
# threads on one VM, and two contexts on two threads) under ThreadSanitizer; only those test
# programs are built. A data race
# fails the test (exit 66).
test-tsan: deps
	cmake -S . -B $(TSAN_BUILD_DIR) -DCMAKE_BUILD_TYPE=Debug -DKILN_TSAN=ON
	cmake --build $(TSAN_BUILD_DIR) -j$(JOBS) --target test_base_allocator test_runtime_thread_pool test_runtime_backend \
	  test_eager_vm_stress test_eager_eager test_eager_kernel_cache test_eager_threads \
	  test_eager_contexts test_compiler_concurrency
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 allocator_may_return_null=1" \
	  ctest --test-dir $(TSAN_BUILD_DIR) --output-on-failure -R '^(base\.allocator|runtime\.(thread_pool|backend)|eager\.(vm_stress|eager|kernel_cache|threads|contexts)|compiler\.concurrency)$$'

# The ONNX importer under libFuzzer (clang) for FUZZ_SECONDS, then the artifact
# loaders (.npy, params.bin, graph.json, IR text, one-file model, vm.json) for a quarter of it each;
# fails on a finding.
fuzz: deps
	CC=clang cmake -S . -B $(FUZZ_BUILD_DIR) -DCMAKE_BUILD_TYPE=Debug -DKILN_FUZZ=ON
	cmake --build $(FUZZ_BUILD_DIR) --target fuzz_onnx_import fuzz_npy fuzz_params fuzz_graph_json \
	  fuzz_ir_text fuzz_model_so fuzz_vm_json -j$(JOBS)
	sh scripts/fuzz-onnx.sh $(FUZZ_BUILD_DIR)/tests/fuzz_onnx_import $(FUZZ_SECONDS)
	sh scripts/fuzz-artifacts.sh $(FUZZ_BUILD_DIR) $$(( $(FUZZ_SECONDS) / 4 + 1 ))

# ONNX's backend node tests: regenerates docs/conformance.md and the list of
# passing cases that CI holds kiln to (tests/onnx/conformance_pass.txt). Run it
# after improving an operator and commit both files (docs/contributing.md).
conformance: build
	$(BUILD_DIR)/tools/kiln conformance --report docs/conformance.md \
	  --write-pass-list tests/onnx/conformance_pass.txt
	$(BUILD_DIR)/tools/kiln conformance --target "llvm -jit" --jobs $(JOBS) \
	  --report docs/conformance-compiled.md \
	  --write-pass-list tests/onnx/conformance_compiled_pass.txt

format:
	git ls-files '*.c' '*.h' | xargs clang-format -i

check-format:
	@sh scripts/check-format.sh

clean:
	rm -rf $(BUILD_DIR) $(ASAN_BUILD_DIR) $(TSAN_BUILD_DIR) $(FUZZ_BUILD_DIR) $(RUNTIME_BUILD_DIR)
