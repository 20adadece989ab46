/*
 * libFuzzer target for the ONNX importer: every input is a would-be model
 * file. Import must return a status (any code) and leave no leak; a crash,
 * a sanitizer report or a leak is a finding. Built only with clang and
 * -DKILN_FUZZ=ON (`make fuzz`, scripts/fuzz-onnx.sh), which also seeds the
 * corpus with the ONNX backend test models.
 */
#include <stddef.h>
#include <stdint.h>

#include "frontend/onnx/onnx_import.h"
#include "ir/expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln_module_t *module = NULL;
  /* No model folder: external data is refused, so nothing outside is read. */
  kiln_status_t status = kiln_onnx_import_buffer("fuzz.onnx", data, size, NULL, NULL,
                                                 kiln_allocator_system(), &module);
  kiln_status_free(status);
  kiln_module_destroy(module);
  return 0;
}
