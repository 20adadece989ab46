/*
 * ONNX backend test cases (the node tests Debian's libonnx-testdata
 * installs): loading one case and comparing results as ONNX compares them.
 *
 * A case is a folder with model.onnx and test_data_set_0/ holding
 * input_0.pb, input_1.pb, ... and output_0.pb, ... (serialized
 * TensorProtos, or SequenceProtos and OptionalProtos where the model's
 * graph input or output has such a type, read in order until the next
 * number is missing). Loading
 * reads the tensors first and imports the model in one of three modes. The
 * conformance mode, KILN_ONNX_CASE_INPUTS_AT_RUN, imports the model as a
 * user does, told nothing about the test inputs: its graph inputs stay
 * parameters of @main whose values only the run sees, so an operator whose
 * output depends on values (NonZero, Range) is computed when @main runs or
 * refused at import (UNIMPLEMENTED: "must be a constant known at import"),
 * and a symbolic dim is refused as `kiln interp` refuses it without
 * --input-shape. READ gives the values to the import, which takes symbolic
 * dims from them and reads them where a converter needs a constant (a
 * Reshape's shape fed as a graph input), specializing the module to them;
 * BOUND makes them Constants, so the whole model folds at import. READ and
 * BOUND test the importer; they do not measure conformance. A conformance
 * runner is a loop: load AT_RUN, run @main on the inputs, compare each
 * output with kiln_onnx_compare, deinitialize.
 */
#ifndef KILN_FRONTEND_ONNX_ONNX_CASE_H_
#define KILN_FRONTEND_ONNX_ONNX_CASE_H_

#include <stdbool.h>

#include "ir/expr.h"
#include "kiln/allocator.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

/* ONNX's tolerances for the backend tests (numpy.testing.assert_allclose). */
#define KILN_ONNX_CASE_RTOL 1e-3
#define KILN_ONNX_CASE_ATOL 1e-7

/* A value of a case that may not be a tensor: ONNX's sequences and
 * optionals, read from a SequenceProto or OptionalProto file
 * (onnx_value.c). */
typedef enum kiln_onnx_value_kind_e {
  KILN_ONNX_VALUE_TENSOR,
  KILN_ONNX_VALUE_SEQUENCE,
  KILN_ONNX_VALUE_OPTIONAL,
} kiln_onnx_value_kind_t;

typedef struct kiln_onnx_value_t {
  kiln_onnx_value_kind_t kind;
  kiln_tensor_t *tensor;              /* TENSOR: one reference */
  int count;                          /* SEQUENCE: elements; OPTIONAL: 0 (empty) or 1 */
  struct kiln_onnx_value_t *elements; /* count values, from the case's allocator */
} kiln_onnx_value_t;

/* Reads test data file `path` as the value of an ONNX type of `kind`: a
 * TensorProto, a SequenceProto (of tensors) or an OptionalProto (of a
 * tensor or a sequence); errors name the file. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_value_read_file(const char *path,
                                                             kiln_onnx_value_kind_t kind,
                                                             kiln_allocator_t allocator,
                                                             kiln_onnx_value_t *out_value);
/* Releases every tensor of `value` and frees its element arrays. */
void kiln_onnx_value_release(kiln_allocator_t allocator, kiln_onnx_value_t *value);
/* kiln_onnx_compare element by element: the same kind and count, and each
 * tensor within tolerance; the message names the element. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_value_compare(const kiln_onnx_value_t *expected,
                                                           const kiln_onnx_value_t *actual,
                                                           double rtol, double atol);

typedef struct kiln_onnx_case_t {
  kiln_allocator_t allocator;
  kiln_module_t *module; /* the imported model; @main takes `inputs` */
  int num_inputs;
  kiln_tensor_t **inputs; /* NULL where the input is a sequence or optional */
  int num_outputs;
  kiln_tensor_t **outputs; /* the expected outputs; NULL where not a tensor */
  /* Every input and expected output as a value (tensors too); has_values
   * says whether one of them is not a tensor, so `inputs` and `outputs` do
   * not hold the case. */
  kiln_onnx_value_t *input_values;
  kiln_onnx_value_t *output_values;
  bool has_values;
} kiln_onnx_case_t;

/* What the import is told about a case's test inputs. */
typedef enum kiln_onnx_case_inputs_e {
  /* Nothing: the model imported as a user imports it; values at run time. */
  KILN_ONNX_CASE_INPUTS_AT_RUN,
  /* Their values as input_values: @main keeps its parameters, but the
   * module is specialized wherever a converter read one. */
  KILN_ONNX_CASE_INPUTS_READ,
  /* Their values bound as Constants (bind_input_values): the model folds
   * at import through the reference kernels and @main has no parameters, a
   * second way to compute the outputs (kiln_onnx_case_check_folded). */
  KILN_ONNX_CASE_INPUTS_BOUND,
} kiln_onnx_case_inputs_t;

/* Loads case folder `dir`, importing its model in `mode`. On failure
 * *out_case is empty (safe to deinitialize) and the status names the file
 * at fault. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_case_load(const char *dir,
                                                       kiln_onnx_case_inputs_t mode,
                                                       kiln_allocator_t allocator,
                                                       kiln_onnx_case_t *out_case);
void kiln_onnx_case_deinitialize(kiln_onnx_case_t *onnx_case);

/* OK when @main's result type has the expected outputs' count, dtypes and
 * shapes (a sequence or optional output: of that kind); INVALID_ARGUMENT
 * naming the first output that differs. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_case_check_types(const kiln_onnx_case_t *onnx_case);

/* For a case loaded BOUND: compares each output of @main, which
 * must have folded to a Constant (UNIMPLEMENTED naming the output when it did
 * not, as when a reference kernel lacks the dtype), with the expected
 * output (kiln_onnx_compare with the case tolerances; the message names the
 * output). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_case_check_folded(const kiln_onnx_case_t *onnx_case);

/* OK when `actual` has the dtype and shape of `expected` (INVALID_ARGUMENT
 * otherwise) and every element satisfies |actual - expected| <= atol + rtol *
 * |expected| (NaN matches NaN; bool and integers compare as numbers);
 * OUT_OF_RANGE naming the first element that does not and how many differ. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_compare(const kiln_tensor_t *expected,
                                                     const kiln_tensor_t *actual, double rtol,
                                                     double atol);

#endif /* KILN_FRONTEND_ONNX_ONNX_CASE_H_ */
