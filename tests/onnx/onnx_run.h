/*
 * Running small ONNX models built with onnx_builder.h through the importer
 * and the reference interpreter, the path the conformance runner takes.
 *
 * A test declares graph inputs from tensors (or_input: the value's dtype
 * and shape), imports the model with those tensors as input values that
 * stay parameters (so nothing computed from them folds at import and the
 * converters' calls really run on the interpreter), runs @main on them and
 * compares outputs element by element as doubles (or_assert), which serves
 * every dtype. Tensors are written from doubles, converted as cast does.
 */
#ifndef KILN_TESTS_ONNX_ONNX_RUN_H_
#define KILN_TESTS_ONNX_ONNX_RUN_H_

#include <math.h>
#include <stdio.h>

#include "frontend/onnx/onnx_importer.h"
#include "frontend/onnx/onnx_tensor.h"
#include "interp/interp.h"
#include "kiln_test.h"
#include "onnx_builder.h"

#define OR_D(...) ((const double[]){__VA_ARGS__})

/* The ONNX elem_type of a kiln dtype. */
static inline int32_t or_elem_type(kiln_dtype_t dtype) {
  for (int32_t e = 1; e <= 16; ++e) {
    kiln_dtype_t found = KILN_DTYPE_COUNT_;
    if (kiln_status_consume_ok(kiln_onnx_dtype(e, &found)) && found == dtype) {
      return e;
    }
  }
  fail_msg("no ONNX elem_type for %s", kiln_dtype_name(dtype));
  return 0;
}

/* A tensor of `dtype` and `dims` holding `values` (converted as cast does). */
static inline kiln_tensor_t *or_tensor(kiln_dtype_t dtype, int ndim, const int64_t *dims,
                                       const double *values) {
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), dtype, ndim, dims, &tensor));
  for (int64_t i = 0; i < kiln_tensor_element_count(tensor); ++i) {
    kiln_onnx_store_double(tensor, i, values[i]);
  }
  return tensor;
}

/* Graph input `name` of the value's dtype and shape. */
static inline void or_input(ob_t *ob, const char *name, const kiln_tensor_t *value) {
  ob_input(ob, name, or_elem_type(kiln_tensor_dtype(value)), (size_t)kiln_tensor_ndim(value),
           kiln_tensor_shape(value));
}

/* Graph output `name` declared with `dtype` and no shape. */
static inline void or_output(ob_t *ob, const char *name, kiln_dtype_t dtype) {
  ob_output(ob, name, or_elem_type(dtype), 0, NULL);
}

typedef struct or_run_t {
  kiln_module_t *module;
  int num_outputs;
  kiln_tensor_t **outputs;
} or_run_t;

/* Imports the model with `values` as input values (parameters, not bound)
 * and runs @main on them with the interpreter. */
static inline void or_run(ob_t *ob, int count, kiln_tensor_t *const *values, or_run_t *out_run) {
  kiln_onnx_import_options_t options = {.num_input_values = count, .input_values = values};
  out_run->module = NULL;
  KILN_ASSERT_OK(ob_import(ob, &options, kiln_allocator_system(), &out_run->module));
  assert_int_equal(om_main(out_run->module)->num_params, count);
  KILN_ASSERT_OK(kiln_interp_run(out_run->module, "main", count, values, kiln_allocator_system(),
                                 &out_run->num_outputs, &out_run->outputs));
}

/* Imports the model with no options, so that every graph input is known
 * only at run time (a shape-like input becomes a dyn operator's input), and
 * runs @main on `values` with the interpreter. */
static inline void or_run_late(ob_t *ob, int count, kiln_tensor_t *const *values,
                               or_run_t *out_run) {
  out_run->module = NULL;
  KILN_ASSERT_OK(ob_import(ob, NULL, kiln_allocator_system(), &out_run->module));
  KILN_ASSERT_OK(kiln_interp_run(out_run->module, "main", count, values, kiln_allocator_system(),
                                 &out_run->num_outputs, &out_run->outputs));
}

/* The status of importing the model with no options and running it on
 * `values` (the first error, of either step). */
static inline kiln_status_t or_try_late(ob_t *ob, int count, kiln_tensor_t *const *values) {
  kiln_module_t *module = NULL;
  kiln_status_t status = ob_import(ob, NULL, kiln_allocator_system(), &module);
  int n = 0;
  kiln_tensor_t **outputs = NULL;
  if (!status) {
    status = kiln_interp_run(module, "main", count, values, kiln_allocator_system(), &n, &outputs);
  }
  for (int i = 0; i < n; ++i) {
    kiln_tensor_release(outputs[i]);
  }
  kiln_allocator_free(kiln_allocator_system(), outputs);
  kiln_module_destroy(module);
  return status;
}

static inline void or_run_free(or_run_t *run) {
  for (int i = 0; i < run->num_outputs; ++i) {
    kiln_tensor_release(run->outputs[i]);
  }
  kiln_allocator_free(kiln_allocator_system(), run->outputs);
  kiln_module_destroy(run->module);
}

/* Imports the model without options (a module made by mistake leaks; the
 * assertion that expected an error fails first). */
static inline kiln_status_t or_import_plain(ob_t *ob) {
  kiln_module_t *module = NULL;
  return ob_import(ob, NULL, kiln_allocator_system(), &module);
}

static inline void or_release(int count, kiln_tensor_t **values) {
  for (int i = 0; i < count; ++i) {
    kiln_tensor_release(values[i]);
  }
}

/* A model at `opset` whose graph inputs "a", "b", ... take the values'
 * types, with one node `op_type` named "n" over `inputs` into "y". */
static inline Onnx__NodeProto *or_start(ob_t *ob, int64_t opset, const char *op_type,
                                        const char *inputs, int count,
                                        kiln_tensor_t *const *values) {
  static const char *const names[9] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
  assert_true(count <= 9);
  ob_init(ob, opset);
  for (int i = 0; i < count; ++i) {
    or_input(ob, names[i], values[i]);
  }
  return ob_node(ob, op_type, "n", inputs, "y");
}

/* `tensor` has `dtype`, `dims` and values within `tolerance` of `expected`
 * (NaN matches NaN; infinities must be equal). */
static inline void or_assert(const kiln_tensor_t *tensor, kiln_dtype_t dtype, int ndim,
                             const int64_t *dims, const double *expected, double tolerance) {
  assert_string_equal(kiln_dtype_name(kiln_tensor_dtype(tensor)), kiln_dtype_name(dtype));
  assert_int_equal(kiln_tensor_ndim(tensor), ndim);
  for (int d = 0; d < ndim; ++d) {
    assert_int_equal(kiln_tensor_shape(tensor)[d], dims[d]);
  }
  for (int64_t i = 0; i < kiln_tensor_element_count(tensor); ++i) {
    double got = kiln_tensor_element_as_double(tensor, i), want = expected[i];
    bool same = got == want || (isnan(got) && isnan(want)) ||
                (!isinf(want) && fabs(got - want) <= tolerance);
    if (!same) {
      fail_msg("element %lld is %.9g, expected %.9g", (long long)i, got, want);
    }
  }
}

#endif /* KILN_TESTS_ONNX_ONNX_RUN_H_ */
