/*
 * Helpers for the graph passes' tests: parse a module from text, run passes
 * with the verifier on, print the result for comparison with the expected
 * text, and check that a pass kept the numbers by running the reference
 * interpreter on the same random inputs before and after.
 */
#ifndef KILN_TESTS_PASS_PASS_FIXTURE_H_
#define KILN_TESTS_PASS_PASS_FIXTURE_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "frontend/onnx/onnx_case.h"
#include "interp/interp.h"
#include "ir/text.h"
#include "kiln_ir_test.h"
#include "pass/passes.h"
#include "pass/rewrite.h"

static inline kiln_module_t *pf_parse(const char *text) {
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("test", text, kiln_allocator_system(), &module));
  return module;
}

/* The module's text without type comments' noise: the printer's output. The
 * caller frees it with free(). */
static inline char *pf_print(const kiln_module_t *module) {
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_ir_print_module(module, NULL, &sb));
  size_t length = kiln_strbuf_length(&sb);
  char *text = malloc(length + 1);
  assert_non_null(text);
  memcpy(text, kiln_strbuf_c_str(&sb), length + 1);
  kiln_strbuf_deinitialize(&sb);
  return text;
}

/* Removes every " / * ... * /" type comment so expected texts stay short. */
static inline char *pf_strip_types(char *text) {
  char *out = text;
  for (const char *in = text; *in;) {
    if (in[0] == ' ' && in[1] == '/' && in[2] == '*') {
      const char *end = strstr(in, "*/");
      in = end ? end + 2 : in + strlen(in);
      continue;
    }
    *out++ = *in++;
  }
  *out = '\0';
  return text;
}

static inline void pf_assert_text(const kiln_module_t *module, const char *expected) {
  char *text = pf_strip_types(pf_print(module));
  if (strcmp(text, expected) != 0) {
    print_message("expected:\n%s\nactual:\n%s\n", expected, text);
  }
  assert_string_equal(text, expected);
  free(text);
}

/* A context at `opt_level` with the verifier on, for the optimizing part of
 * the default pipeline: alter_op_layout, fuse_ops and plan_memory, which
 * end it, are disabled (their own tests use kiln_pass_test.h), so the
 * results are main's calls of operators in NCHW. */
static inline kiln_pass_context_t *pf_context(int opt_level) {
  kiln_pass_context_t *context = NULL;
  KILN_ASSERT_OK(kiln_pass_context_create(kiln_allocator_system(), opt_level, &context));
  kiln_pass_context_set_verify(context, true);
  KILN_ASSERT_OK(kiln_pass_context_disable(context, "alter_op_layout"));
  KILN_ASSERT_OK(kiln_pass_context_disable(context, "fuse_ops"));
  KILN_ASSERT_OK(kiln_pass_context_disable(context, "plan_memory"));
  return context;
}

/* Runs the pass named `name` alone (required, so at any opt_level), with
 * the verifier on. */
static inline kiln_status_t pf_run_pass(kiln_module_t *module, const char *name) {
  const kiln_pass_t *pass = NULL;
  KILN_RETURN_IF_ERROR(kiln_pass_find(name, &pass));
  kiln_pass_context_t *context = pf_context(0);
  kiln_status_t status = kiln_pass_context_require(context, name);
  if (!status) {
    status = kiln_pass_sequential_run(module, context, &pass, 1);
  }
  kiln_pass_context_destroy(context);
  return status;
}

static inline void pf_fill_random(kiln_tensor_t *tensor, uint64_t seed) {
  float *data = kiln_tensor_data(tensor);
  uint64_t state = seed * 2654435761u + 12345;
  for (int64_t i = 0; i < kiln_tensor_element_count(tensor); i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    data[i] = (float)((double)(state >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
  }
}

/* Random float32 inputs for every parameter of main. */
static inline int pf_make_inputs(const kiln_module_t *module, uint64_t seed, kiln_tensor_t **inputs,
                                 int capacity) {
  kiln_function_t *main_fn = kiln_module_get_function(module, "main");
  assert_non_null(main_fn);
  assert_true(main_fn->num_params <= capacity);
  for (int i = 0; i < main_fn->num_params; ++i) {
    const kiln_tensor_type_t *type = kiln_type_as_tensor(main_fn->params[i]->type_annotation);
    assert_non_null(type);
    assert_int_equal(type->dtype, KILN_DTYPE_FLOAT32);
    KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), type->dtype, type->ndim, type->shape,
                                      &inputs[i]));
    pf_fill_random(inputs[i], seed + (uint64_t)i);
  }
  return main_fn->num_params;
}

typedef struct pf_outputs_t {
  int count;
  kiln_tensor_t **tensors;
} pf_outputs_t;

static inline pf_outputs_t pf_run(kiln_module_t *module, int num_inputs, kiln_tensor_t **inputs) {
  pf_outputs_t outputs = {0, NULL};
  KILN_ASSERT_OK(kiln_interp_run(module, "main", num_inputs, inputs, kiln_allocator_system(),
                                 &outputs.count, &outputs.tensors));
  return outputs;
}

static inline void pf_outputs_release(pf_outputs_t *outputs) {
  for (int i = 0; i < outputs->count; ++i) {
    kiln_tensor_release(outputs->tensors[i]);
  }
  kiln_allocator_free(kiln_allocator_system(), outputs->tensors);
}

static inline void pf_assert_close(const pf_outputs_t *expected, const pf_outputs_t *actual,
                                   double rtol, double atol) {
  assert_int_equal(expected->count, actual->count);
  for (int i = 0; i < expected->count; ++i) {
    KILN_ASSERT_OK(kiln_onnx_compare(expected->tensors[i], actual->tensors[i], rtol, atol));
  }
}

/* Runs `transform` on `module` and checks that main gives the same numbers
 * (rtol 1e-4, atol 1e-5) on random inputs before and after. */
typedef kiln_status_t (*pf_transform_fn)(kiln_module_t *module, void *user);

static inline void pf_assert_keeps_numbers(kiln_module_t *module, pf_transform_fn transform,
                                           void *user, double rtol, double atol) {
  kiln_tensor_t *inputs[64];
  int count = pf_make_inputs(module, 11, inputs, 64);
  pf_outputs_t before = pf_run(module, count, inputs);
  KILN_ASSERT_OK(transform(module, user));
  pf_outputs_t after = pf_run(module, count, inputs);
  pf_assert_close(&before, &after, rtol, atol);
  pf_outputs_release(&before);
  pf_outputs_release(&after);
  for (int i = 0; i < count; ++i) {
    kiln_tensor_release(inputs[i]);
  }
}

static inline kiln_status_t pf_transform_pass(kiln_module_t *module, void *user) {
  return pf_run_pass(module, *(const char **)user);
}

/* pf_assert_keeps_numbers with one named pass. */
static inline void pf_assert_pass_keeps_numbers(kiln_module_t *module, const char *name) {
  pf_assert_keeps_numbers(module, pf_transform_pass, &name, 1e-4, 1e-5);
}

typedef struct pf_sweep_case_t {
  const char *text;
  const char *pass_name;
} pf_sweep_case_t;

static inline kiln_status_t pf_sweep_scenario(kiln_allocator_t allocator, void *user) {
  const pf_sweep_case_t *sweep_case = user;
  kiln_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_parse_module("test", sweep_case->text, allocator, &module));
  kiln_status_t status = pf_run_pass(module, sweep_case->pass_name);
  kiln_module_destroy(module);
  return status;
}

/* Parses `text` and runs pass `pass_name` with each allocation failing in
 * turn (kiln_test_sweep_allocation_failures); returns how many runs failed. */
static inline int64_t pf_sweep_pass(const char *text, const char *pass_name) {
  pf_sweep_case_t sweep_case = {text, pass_name};
  return kiln_test_sweep_allocation_failures(pf_sweep_scenario, &sweep_case);
}

static inline int64_t pf_count(const kiln_module_t *module, const kiln_op_t *op) {
  int64_t count = 0;
  KILN_ASSERT_OK(kiln_pass_count_calls(module, op, kiln_allocator_system(), &count));
  return count;
}

#endif /* KILN_TESTS_PASS_PASS_FIXTURE_H_ */
