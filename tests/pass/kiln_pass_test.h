/*
 * Helpers for pass tests (header-only, so that each test program takes what
 * it uses): parse a "before" text, run passes by name under a context with
 * verification on, compare the printed "after" with the expected text, and
 * check that the interpreter gives the same numbers before and after on
 * random inputs (rtol 1e-4, atol 1e-5).
 */
#ifndef KILN_TESTS_PASS_KILN_PASS_TEST_H_
#define KILN_TESTS_PASS_KILN_PASS_TEST_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/testing/workloads.h"
#include "interp/interp.h"
#include "ir/params.h"
#include "ir/text.h"
#include "kiln_test.h"
#include "pass/passes.h"

static inline kiln_module_t *kpt_parse(const char *text) {
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("before", text, kiln_allocator_system(), &module));
  return module;
}

/* The module's text without metadata; release it with kpt_free. */
static inline char *kpt_print(const kiln_module_t *module) {
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_ir_print_module(module, NULL, &sb));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_strbuf_take(&sb, &text));
  kiln_strbuf_deinitialize(&sb);
  return text;
}

static inline void kpt_free(char *text) {
  kiln_allocator_free(kiln_allocator_system(), text);
}

static inline kiln_pass_context_t *kpt_context(int opt_level) {
  kiln_pass_context_t *context = NULL;
  KILN_ASSERT_OK(kiln_pass_context_create(kiln_allocator_system(), opt_level, &context));
  kiln_pass_context_set_verify(context, true);
  return context;
}

/* Runs the space-separated passes `names` in order. */
static inline kiln_status_t kpt_run(kiln_module_t *module, kiln_pass_context_t *context,
                                    const char *names) {
  const kiln_pass_t *passes[16];
  int count = 0;
  for (const char *name = names; *name;) {
    size_t length = strcspn(name, " ");
    char buffer[64];
    assert_true(count < 16 && length < sizeof(buffer));
    memcpy(buffer, name, length);
    buffer[length] = '\0';
    KILN_ASSERT_OK(kiln_pass_find(buffer, &passes[count++]));
    name += length + (name[length] == ' ');
  }
  return kiln_pass_sequential_run(module, context, passes, count);
}

/* Runs `names` under `context` and checks the printed result. */
static inline void kpt_expect_in(kiln_module_t *module, kiln_pass_context_t *context,
                                 const char *names, const char *expected) {
  KILN_ASSERT_OK(kpt_run(module, context, names));
  char *text = kpt_print(module);
  if (strcmp(text, expected) != 0) {
    fprintf(stderr, "after %s:\n%s\nexpected:\n%s\n", names, text, expected);
  }
  assert_string_equal(text, expected);
  kpt_free(text);
}

static inline void kpt_fill(kiln_tensor_t *tensor, uint64_t seed) {
  uint64_t state = seed * 2654435761u + 12345;
  for (int64_t i = 0; i < kiln_tensor_element_count(tensor); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    float value = (float)((double)(state >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
    if (kiln_tensor_dtype(tensor) == KILN_DTYPE_FLOAT32) {
      ((float *)kiln_tensor_data(tensor))[i] = value;
    } else if (kiln_tensor_dtype(tensor) == KILN_DTYPE_INT64) {
      ((int64_t *)kiln_tensor_data(tensor))[i] = (int64_t)(value * 3.0f);
    }
  }
}

typedef struct kpt_inputs_t {
  int count;
  kiln_tensor_t *tensors[64];
} kpt_inputs_t;

/* Random inputs for main's parameters (float32 and int64 filled). */
static inline kpt_inputs_t kpt_inputs(const kiln_module_t *module, uint64_t seed) {
  kpt_inputs_t inputs = {0, {NULL}};
  kiln_function_t *main_fn = kiln_module_get_function(module, "main");
  assert_true(main_fn->num_params <= 64);
  for (int i = 0; i < main_fn->num_params; ++i) {
    const kiln_tensor_type_t *type = kiln_type_as_tensor(main_fn->params[i]->type_annotation);
    assert_non_null(type);
    KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), type->dtype, type->ndim, type->shape,
                                      &inputs.tensors[i]));
    kpt_fill(inputs.tensors[i], seed + (uint64_t)i);
  }
  inputs.count = main_fn->num_params;
  return inputs;
}

static inline void kpt_inputs_release(kpt_inputs_t *inputs) {
  for (int i = 0; i < inputs->count; ++i) {
    kiln_tensor_release(inputs->tensors[i]);
  }
}

static inline void kpt_outputs_release(int count, kiln_tensor_t **outputs) {
  for (int i = 0; i < count; ++i) {
    kiln_tensor_release(outputs[i]);
  }
  kiln_allocator_free(kiln_allocator_system(), outputs);
}

/* Runs main of `a` and of `b` on the same inputs and compares every output
 * (float32: rtol 1e-4, atol 1e-5; other dtypes exactly). */
static inline void kpt_assert_same_numbers_on(kiln_module_t *a, kiln_module_t *b,
                                              const kpt_inputs_t *inputs) {
  int count_a = 0, count_b = 0;
  kiln_tensor_t **out_a = NULL, **out_b = NULL;
  KILN_ASSERT_OK(kiln_interp_run(a, "main", inputs->count, inputs->tensors, kiln_allocator_system(),
                                 &count_a, &out_a));
  KILN_ASSERT_OK(kiln_interp_run(b, "main", inputs->count, inputs->tensors, kiln_allocator_system(),
                                 &count_b, &out_b));
  assert_int_equal(count_a, count_b);
  for (int i = 0; i < count_a; ++i) {
    assert_int_equal(kiln_tensor_element_count(out_a[i]), kiln_tensor_element_count(out_b[i]));
    assert_int_equal(kiln_tensor_dtype(out_a[i]), kiln_tensor_dtype(out_b[i]));
    for (int64_t k = 0; k < kiln_tensor_element_count(out_a[i]); ++k) {
      double x = kiln_tensor_element_as_double(out_a[i], k);
      double y = kiln_tensor_element_as_double(out_b[i], k);
      bool close = kiln_tensor_dtype(out_a[i]) == KILN_DTYPE_FLOAT32
                       ? fabs(x - y) <= 1e-5 + 1e-4 * fabs(y)
                       : x == y;
      if (!close && !(isnan(x) && isnan(y))) {
        fail_msg("output %d element %lld: %.9g before, %.9g after", i, (long long)k, x, y);
      }
    }
  }
  kpt_outputs_release(count_a, out_a);
  kpt_outputs_release(count_b, out_b);
}

static inline void kpt_assert_same_numbers(kiln_module_t *a, kiln_module_t *b, uint64_t seed) {
  kpt_inputs_t inputs = kpt_inputs(a, seed);
  kpt_assert_same_numbers_on(a, b, &inputs);
  kpt_inputs_release(&inputs);
}

/* Parses `before` twice, runs `names` on the second copy under `context`,
 * checks its text against `expected` and its numbers against the first copy. */
static inline void kpt_check_in(const char *before, kiln_pass_context_t *context, const char *names,
                                const char *expected) {
  kiln_module_t *reference = kpt_parse(before);
  kiln_module_t *module = kpt_parse(before);
  kpt_expect_in(module, context, names, expected);
  kpt_assert_same_numbers(reference, module, 1);
  kiln_module_destroy(reference);
  kiln_module_destroy(module);
}

/* kpt_check_in under a fresh context at `opt_level`. */
static inline void kpt_check(const char *before, int opt_level, const char *names,
                             const char *expected) {
  kiln_pass_context_t *context = kpt_context(opt_level);
  kpt_check_in(before, context, names, expected);
  kiln_pass_context_destroy(context);
}

/* Built-in workload `name` at 32x32 with its weights bound as constants;
 * `params` holds them (the caller deinitializes it). */
static inline kiln_module_t *kpt_build_workload(const char *name, kiln_params_t *params) {
  kiln_workload_options_t options = kiln_workload_options_default();
  options.image_size = 32;
  kiln_params_initialize(params, kiln_allocator_system());
  kiln_module_t *m = NULL;
  KILN_ASSERT_OK(kiln_workload_build(name, &options, kiln_allocator_system(), params, &m));
  KILN_ASSERT_OK(kiln_ir_bind_params(m, "main", params));
  return m;
}

#endif /* KILN_TESTS_PASS_KILN_PASS_TEST_H_ */
