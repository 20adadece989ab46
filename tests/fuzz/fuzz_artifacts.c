/*
 * libFuzzer targets for the artifact loaders a deployed model reads, one
 * program per format (KILN_FUZZ_FORMAT picks it at build time): an .npy
 * file (kiln_npy_parse), params.bin (kiln_runtime_params_parse), graph.json
 * (kiln_graph_executor_create over a module whose kernels do nothing, so a
 * plan that parses is also bound and allocated), the IR text format
 * (kiln_ir_parse_module), and a one-file model: bytes that start with the
 * ELF magic go through kiln_runtime_model_file_parse (the ELF reader, the
 * symbol lookup, then the embedded model), other bytes through the
 * embedded model's parser alone (runtime/model_file.h), and vm.json (the VM's loader,
 * kiln_graph_executor_create on a VM program over the same module, then a run of what
 * loaded under instruction and memory limits; docs/vm.md). Each must return a
 * status (any code) and leave no leak; a crash, a sanitizer report or a leak is a finding. `make
 * fuzz` runs each for a bounded time (scripts/fuzz-artifacts.sh).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/expr.h"
#include "ir/text.h"
#include "kiln/module.h"
#include "kiln/npy.h"
#include "kiln/runtime.h"
#include "runtime/elf.h"
#include "runtime/graph_executor.h"
#include "runtime/model_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The text of `data` as a C string (the loaders of text take one). */
#if KILN_FUZZ_FORMAT == 3 || KILN_FUZZ_FORMAT == 4 || KILN_FUZZ_FORMAT == 6
static char *text_of(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (text) {
    memcpy(text, data, size);
    text[size] = '\0';
  }
  return text;
}
#endif

#if KILN_FUZZ_FORMAT == 3 || KILN_FUZZ_FORMAT == 6
static int do_nothing(const kiln_value_t *args, const int *type_codes, int num_args,
                      kiln_value_t *ret, int *ret_tcode, void *resource) {
  (void)args;
  (void)type_codes;
  (void)num_args;
  (void)ret;
  (void)ret_tcode;
  (void)resource;
  return 0;
}

/* A VM program that loaded runs too, under limits (100000 instructions,
 * 64 MiB), on zeros (a dim known at run time: 1; an input over 1 MiB: no
 * run): the interpreter's run-time checks fuzzed with the loader's. */
static void run_vm(kiln_graph_executor_t *gx) {
  gx->vm->limits = (kiln_vm_limits_t){100000, (size_t)64 << 20};
  static _Alignas(64) unsigned char zeros[1 << 20];
  for (int i = 0; i < gx->vm->num_inputs; ++i) {
    const kiln_vm_decl_t *decl = &gx->vm->input_decls[i];
    int64_t shape[KILN_MAX_RANK];
    size_t bytes = kiln_dtype_size(decl->dtype);
    for (int d = 0; d < decl->ndim; ++d) {
      shape[d] = decl->shape[d] < 0 ? 1 : decl->shape[d];
      bytes = shape[d] > 0 && bytes > sizeof(zeros) / (size_t)shape[d] ? sizeof(zeros) + 1
                                                                       : bytes * (size_t)shape[d];
    }
    if (bytes > sizeof(zeros)) {
      return;
    }
    DLTensor t = {zeros, {kDLCPU, 0}, decl->ndim, kiln_dtype_to_dl(decl->dtype), shape, NULL, 0};
    kiln_status_free(kiln_graph_executor_set_input(gx, i, &t));
  }
  kiln_status_free(kiln_graph_executor_run(gx));
}

/* graph.json's text, or vm.json's (format 6), through create over a module
 * of do-nothing kernels "f" and "g": a program that parses is also bound. */
static void create_over_do_nothing(const uint8_t *data, size_t size) {
  char *text = text_of(data, size);
  static const kiln_runtime_module_entry_t entries[] = {{"f", do_nothing, 0}, {"g", do_nothing, 0}};
  kiln_runtime_module_t *module = NULL;
  kiln_graph_executor_t *gx = NULL;
  if (text && kiln_status_consume_ok(kiln_runtime_module_create_in_memory(
                  kiln_allocator_system(), "fuzz", 2, entries, NULL, NULL, &module))) {
    kiln_status_free(
        kiln_graph_executor_create(kiln_allocator_system(), text, "fuzz.json", module, NULL, &gx));
  }
  if (gx && gx->vm) {
    run_vm(gx);
  }
  kiln_graph_executor_destroy(gx);
  kiln_runtime_module_release(module);
  free(text);
}
#endif

#if KILN_FUZZ_FORMAT == 1 /* .npy */
static void fuzz_one(const uint8_t *data, size_t size) {
  kiln_tensor_t *tensor = NULL;
  kiln_status_free(kiln_npy_parse(kiln_allocator_system(), data, size, "fuzz.npy", &tensor));
  kiln_tensor_release(tensor);
}
#elif KILN_FUZZ_FORMAT == 2                          /* params.bin */
static void fuzz_one(const uint8_t *data, size_t size) {
  kiln_runtime_params_t *params = NULL;
  kiln_status_free(
      kiln_runtime_params_parse(kiln_allocator_system(), data, size, "fuzz.params", &params));
  kiln_runtime_params_destroy(params);
}
#elif KILN_FUZZ_FORMAT == 3 || KILN_FUZZ_FORMAT == 6 /* graph.json, vm.json (the VM's loader) */
static void fuzz_one(const uint8_t *data, size_t size) {
  create_over_do_nothing(data, size);
}
#elif KILN_FUZZ_FORMAT == 4                          /* IR text */
static void fuzz_one(const uint8_t *data, size_t size) {
  char *text = text_of(data, size);
  kiln_module_t *module = NULL;
  if (text) {
    kiln_status_free(kiln_ir_parse_module("fuzz.txt", text, kiln_allocator_system(), &module));
  }
  kiln_module_destroy(module);
  free(text);
}
#elif KILN_FUZZ_FORMAT == 5 /* a one-file model, or its embedded model alone */
static void fuzz_one(const uint8_t *data, size_t size) {
  char *json = NULL;
  kiln_runtime_params_t *params = NULL;
  if (kiln_elf_is_elf(data, size)) {
    kiln_status_free(kiln_runtime_model_file_parse(kiln_allocator_system(), data, size, "fuzz.so",
                                                   &json, &params));
  } else {
    kiln_status_free(kiln_runtime_model_parse_embedded(kiln_allocator_system(), data, size,
                                                       "fuzz.so", &json, &params));
  }
  free(json);
  kiln_runtime_params_destroy(params);
}
#else
#error \
    "KILN_FUZZ_FORMAT must be 1 (npy), 2 (params), 3 (graph.json), 4 (IR text), 5 (model) or 6 (vm.json)"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_one(data, size);
  return 0;
}
