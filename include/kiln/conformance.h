/*
 * ONNX's backend node tests, one case at a time (what `kiln conformance`
 * runs in a child process per case; docs/onnx.md, "Conformance").
 *
 * A case is a folder with model.onnx and test_data_set_0/ holding
 * input_0.pb, ... and output_0.pb, ... (serialized TensorProtos), as
 * Debian's libonnx-testdata installs them. A case runs as a user runs the
 * model: the file imported with no options and nothing known of the test
 * inputs, which are fed at run time to the reference interpreter, or to
 * the executor of the model compiled for a target (opt_level 3; the graph
 * executor, or the VM when asked);
 * every output is compared as ONNX compares (kiln_tensor_allclose with
 * KILN_CONFORMANCE_RTOL and KILN_CONFORMANCE_ATOL).
 */
#ifndef KILN_CONFORMANCE_H_
#define KILN_CONFORMANCE_H_

#include <stddef.h>

#include "kiln/allocator.h"
#include "kiln/runtime.h"
#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ONNX's tolerances for the backend tests (numpy.testing.assert_allclose). */
#define KILN_CONFORMANCE_RTOL 1e-3
#define KILN_CONFORMANCE_ATOL 1e-7

typedef enum kiln_conformance_result_e {
  KILN_CONFORMANCE_RESULT_PASS,
  KILN_CONFORMANCE_RESULT_FAIL,
  /* The importer refuses the model with UNIMPLEMENTED: an operator or form
   * kiln lacks, or an input it needs as a constant known at import. */
  KILN_CONFORMANCE_RESULT_UNSUPPORTED,
  KILN_CONFORMANCE_RESULT_COUNT_
} kiln_conformance_result_t;

/* Loads, runs and checks case folder `dir` on the interpreter (`target`
 * NULL) or compiled for `target` ("llvm -jit", "c", ...). *out_result is
 * the verdict; the status returned says why the case did not pass (the
 * file, node, output or element at fault), OK when it passed. */
KILN_MUST_USE_RESULT kiln_status_t kiln_conformance_case_run(kiln_allocator_t allocator,
                                                             const char *dir, const char *target,
                                                             kiln_conformance_result_t *out_result);
/* The same, compiled for `executor` (KILN_EXECUTOR_VM: run by the VM,
 * docs/vm.md; AUTO as kiln_compile chooses); `executor` is ignored on the
 * interpreter (`target` NULL). */
KILN_MUST_USE_RESULT kiln_status_t
kiln_conformance_case_run_on(kiln_allocator_t allocator, const char *dir, const char *target,
                             kiln_executor_kind_t executor, kiln_conformance_result_t *out_result);

/* The distinct operator types of case `dir`'s model.onnx in node order,
 * comma separated ("Abs,Mul"; domain-qualified outside the default
 * domain; Constant only when there is nothing else), cut to fit
 * `capacity` bytes. NOT_FOUND for a missing file, INVALID_ARGUMENT for
 * one that is not an ONNX model. */
KILN_MUST_USE_RESULT kiln_status_t kiln_conformance_case_read_ops(kiln_allocator_t allocator,
                                                                  const char *dir, char *buffer,
                                                                  size_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* KILN_CONFORMANCE_H_ */
