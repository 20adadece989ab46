/*
 * pack_dense: nn.dense with a constant weight becomes
 * nn.contrib_dense_pack with the weight in column blocks (N/b, K, b),
 * padded with zero columns to a whole block, units keeping N; a computed
 * weight stays a dense. Numbers kept (the packed reference against the
 * dense one), the block option and its bounds, allocation failures.
 */
#include <stdio.h>

#include "op/compute.h"
#include "op/nn_common.h"
#include "op/nn_conv_compute.h"
#include "pass_fixture.h"

static const char *const text =
    "def @main(%x: Tensor[(2, 3, 4), float32], %w: Tensor[(5, 4), float32]) {\n"
    "  %0 = nn.dense(%x, meta[Constant][0]);\n"
    "  %1 = nn.dense(%x, %w);\n"
    "  (%0, %1)\n"
    "}\n"
    "#[metadata]\n"
    "Constant[0] = Tensor[(5, 4), float32] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, "
    "16, 17, 18, 19]\n";

static kiln_call_t *first_call(kiln_module_t *m) {
  return kiln_expr_as_call(
      kiln_expr_as_tuple(kiln_module_get_function(m, "main")->body)->fields[0]);
}

static kiln_status_t pack_by_two(kiln_module_t *module, void *user) {
  (void)user;
  kiln_pass_context_t *context = pf_context(3);
  kiln_status_t status = kiln_pass_context_set_option(context, "pack_dense.block", "2");
  if (status == KILN_OK) {
    status = kiln_pass_context_require(context, "pack_dense");
  }
  const kiln_pass_t *pass = NULL;
  if (status == KILN_OK) {
    status = kiln_pass_find("pack_dense", &pass);
  }
  if (status == KILN_OK) {
    status = kiln_pass_sequential_run(module, context, &pass, 1);
  }
  kiln_pass_context_destroy(context);
  return status;
}

/* Blocks of 2 over 5 columns: 3 blocks, the last half padding. */
static void test_constant_weight_packed(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(text);
  pf_assert_keeps_numbers(m, pack_by_two, NULL, 1e-4, 1e-5);
  assert_int_equal(pf_count(m, &kiln_op_dense_pack), 1);
  assert_int_equal(pf_count(m, &kiln_op_dense), 1);
  kiln_call_t *packed = first_call(m);
  const kiln_tensor_type_t *weight = kiln_pass_tensor_type(packed->args[1]);
  assert_int_equal(weight->ndim, 3);
  assert_int_equal(weight->shape[0], 3);
  assert_int_equal(weight->shape[1], 4);
  assert_int_equal(weight->shape[2], 2);
  assert_int_equal(((const kiln_nn_dense_attrs_t *)packed->attrs)->units, 5);
  /* weight[n / 2, k, n % 2] = w[n, k] = 4 n + k; padding 0 */
  const float *w = kiln_tensor_data(kiln_expr_as_constant(packed->args[1])->value);
  for (int n = 0; n < 6; ++n) {
    for (int k = 0; k < 4; ++k) {
      assert_float_equal(w[(n / 2) * 8 + k * 2 + n % 2], n < 5 ? (float)(4 * n + k) : 0.0f, 0.0f);
    }
  }
  kiln_module_destroy(m);
}

/* The default block is the schedule's tile width: N = 5 is one block. */
static void test_default_block(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(text);
  pf_assert_pass_keeps_numbers(m, "pack_dense");
  const kiln_tensor_type_t *weight = kiln_pass_tensor_type(first_call(m)->args[1]);
  assert_int_equal(weight->shape[0], 1);
  assert_int_equal(weight->shape[2], 5);
  kiln_module_destroy(m);
}

/* A target whose records give every workload block 2 (kept in `asked`). */
typedef struct asked_t {
  char workload[KILN_SCHEDULE_WORKLOAD_CHARS];
  kiln_schedule_space_t space;
  kiln_schedule_config_t answer;
} asked_t;

static const kiln_schedule_config_t *find_two(const void *records, const char *workload,
                                              const kiln_schedule_space_t *space) {
  asked_t *asked = (asked_t *)(uintptr_t)records;
  snprintf(asked->workload, sizeof(asked->workload), "%s", workload);
  asked->space = *space;
  return &asked->answer;
}

static kiln_status_t pack_by_record(kiln_module_t *module, void *user) {
  kiln_pass_context_t *context = pf_context(3);
  kiln_schedule_target_t target = *kiln_pass_context_target(context);
  target.find_layout = find_two;
  target.layout_records = user;
  kiln_pass_context_set_target(context, &target);
  const kiln_pass_t *pass = NULL;
  kiln_status_t status = kiln_pass_find("pack_dense", &pass);
  if (status == KILN_OK) {
    status = kiln_pass_sequential_run(module, context, &pass, 1);
  }
  kiln_pass_context_destroy(context);
  return status;
}

/* A tuning record's block (template dense_pack) replaces the rule's; the
 * pass asks by the product's workload, with the space around the rule's
 * block. A record of another template is ignored. */
static void test_block_from_record(void **state) {
  (void)state;
  asked_t asked = {.answer = {KILN_SCHEDULE_TEMPLATE_DENSE_PACK, {2}}};
  kiln_module_t *m = pf_parse(text);
  pf_assert_keeps_numbers(m, pack_by_record, &asked, 1e-4, 1e-5);
  assert_string_equal(asked.workload, "nn.dense float32 m=6 n=5 k=4");
  assert_int_equal(asked.space.default_config.template_id, KILN_SCHEDULE_TEMPLATE_DENSE_PACK);
  assert_int_equal(asked.space.default_config.values[0], 5);
  assert_int_equal(kiln_pass_tensor_type(first_call(m)->args[1])->shape[2], 2);
  kiln_module_destroy(m);
  asked.answer.template_id = KILN_SCHEDULE_TEMPLATE_GEMM;
  m = pf_parse(text);
  pf_assert_keeps_numbers(m, pack_by_record, &asked, 1e-4, 1e-5);
  assert_int_equal(kiln_pass_tensor_type(first_call(m)->args[1])->shape[2], 5);
  kiln_module_destroy(m);
}

static void test_block_option_bounds(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(text);
  kiln_pass_context_t *context = pf_context(3);
  KILN_ASSERT_OK(kiln_pass_context_set_option(context, "pack_dense.block", "-3"));
  const kiln_pass_t *pass = NULL;
  KILN_ASSERT_OK(kiln_pass_find("pack_dense", &pass));
  KILN_ASSERT_STATUS(kiln_pass_sequential_run(m, context, &pass, 1), INVALID_ARGUMENT,
                     "pack_dense.block must be in [1, 1024]");
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(pf_sweep_pass(text, "pack_dense") > 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_constant_weight_packed), cmocka_unit_test(test_default_block),
      cmocka_unit_test(test_block_from_record),      cmocka_unit_test(test_block_option_bounds),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
