/*
 * The implementation registries (op/impl.h) against the operator list:
 * every operator with implementations has a reference kernel and a compute
 * rule, and the control operators (the ones listed as having none) have
 * neither; a lookup by id gives the entry the family file defines; the
 * strategy registry gives the x86 schedules for the CPU kind, NULL (the
 * default schedule) elsewhere, and nothing out of range; the compiler's
 * targets are of the CPU kind; and kiln_op_evaluate_into runs the
 * registered kernel, refusing an operator without one.
 */
#include "compiler/lower.h"
#include "kiln_compute_test.h"
#include "op/control_attrs.h"
#include "op/impl.h"
#include "op/nn_compute.h"
#include "op/nn_conv_compute.h"
#include "op/transform_compute.h"

typedef struct entry_t {
  kiln_op_id_t id;
  const char *name;
  const kiln_op_impl_t *impl; /* NULL: listed as having no implementations */
} entry_t;

static const entry_t entries[] = {
#define IMPLEMENTED_(id, name, symbol) {KILN_OP_##id, name, &symbol##_impl},
    KILN_OP_LIST_IMPLEMENTED(IMPLEMENTED_)
#undef IMPLEMENTED_
#define CONTROL_(id, name, symbol) {KILN_OP_##id, name, NULL},
        KILN_OP_LIST_CONTROL(CONTROL_)
#undef CONTROL_
};

static void test_every_operator_is_implemented_or_listed(void **state) {
  (void)state;
  assert_int_equal(sizeof(entries) / sizeof(entries[0]), KILN_OP_COUNT_);
  bool seen[KILN_OP_COUNT_] = {false};
  for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); ++i) {
    const entry_t *e = &entries[i];
    assert_false(seen[e->id]);
    seen[e->id] = true;
    const kiln_op_t *op = kiln_op_get(e->id);
    assert_string_equal(op->name, e->name);
    assert_int_equal(kiln_op_is_control(op), e->impl == NULL);
    if (!e->impl) {
      assert_null(kiln_op_reference_get(e->id));
      assert_null(kiln_op_compute_get(e->id));
      assert_null(kiln_op_strategy_get(e->id, KILN_TARGET_KIND_CPU));
      assert_false(kiln_op_can_evaluate(op));
      continue;
    }
    if (!e->impl->reference || !e->impl->compute) {
      fail_msg("%s lacks a %s", e->name, e->impl->reference ? "compute rule" : "reference kernel");
    }
    assert_ptr_equal(kiln_op_reference_get(e->id), e->impl->reference);
    assert_ptr_equal(kiln_op_compute_get(e->id), e->impl->compute);
    for (int kind = 0; kind < KILN_TARGET_KIND_COUNT_; ++kind) {
      assert_ptr_equal(kiln_op_strategy_get(e->id, (kiln_target_kind_t)kind),
                       e->impl->strategies[kind]);
    }
    assert_true(kiln_op_can_evaluate(op));
  }
}

static void test_every_compute_rule_has_a_reference(void **state) {
  (void)state;
  for (int id = 0; id < KILN_OP_COUNT_; ++id) {
    if (kiln_op_compute_get((kiln_op_id_t)id) && !kiln_op_reference_get((kiln_op_id_t)id)) {
      fail_msg("%s has a compute rule but no reference kernel", kiln_op_get(id)->name);
    }
  }
}

static void test_out_of_range(void **state) {
  (void)state;
  assert_null(kiln_op_reference_get(KILN_OP_COUNT_));
  assert_null(kiln_op_compute_get(KILN_OP_COUNT_));
  assert_null(kiln_op_strategy_get(KILN_OP_COUNT_, KILN_TARGET_KIND_CPU));
  assert_null(kiln_op_strategy_get(KILN_OP_DENSE, KILN_TARGET_KIND_COUNT_));
}

static void test_cpu_strategies(void **state) {
  (void)state;
  const struct {
    kiln_op_id_t id;
    kiln_op_schedule_fn schedule;
  } expected[] = {
      {KILN_OP_CONV2D_NCHWC, kiln_schedule_conv2d_nchwc_x86},
      {KILN_OP_DENSE, kiln_schedule_dense_x86},
      {KILN_OP_MATMUL, kiln_schedule_dense_x86},
      {KILN_OP_BATCH_MATMUL, kiln_schedule_dense_x86},
      {KILN_OP_DENSE_PACK, kiln_schedule_dense_x86},
      {KILN_OP_MAX_POOL2D, kiln_schedule_pool_x86},
      {KILN_OP_GLOBAL_AVG_POOL2D, kiln_schedule_pool_x86},
      {KILN_OP_SOFTMAX, kiln_schedule_line_x86},
      {KILN_OP_LAYER_NORM, kiln_schedule_line_x86},
      {KILN_OP_CONCATENATE, kiln_schedule_concatenate_x86},
      /* the default schedule serves these */
      {KILN_OP_CONV2D, NULL},
      {KILN_OP_MAX_POOL3D, NULL},
      {KILN_OP_RELU, NULL},
      {KILN_OP_SUM, NULL},
  };
  for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); ++i) {
    assert_ptr_equal(kiln_op_strategy_get(expected[i].id, KILN_TARGET_KIND_CPU),
                     expected[i].schedule);
  }
  /* What the compiler schedules for, host or named, is a CPU target. */
  kiln_schedule_target_t target = kiln_schedule_target_host();
  assert_int_equal(target.kind, KILN_TARGET_KIND_CPU);
  target.kind = KILN_TARGET_KIND_COUNT_;
  KILN_ASSERT_OK(kiln_compiler_schedule_target("llvm -mcpu=skylake-avx512", &target));
  assert_int_equal(target.kind, KILN_TARGET_KIND_CPU);
}

static void test_evaluate_into(void **state) {
  (void)state;
  kiln_allocator_t allocator = kiln_allocator_system();
  const int64_t shape[] = {3};
  kiln_tensor_t *x = NULL, *y = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(allocator, KILN_DTYPE_FLOAT32, 1, shape, &x));
  KILN_ASSERT_OK(kiln_tensor_create(allocator, KILN_DTYPE_FLOAT32, 1, shape, &y));
  float *in = kiln_tensor_data(x);
  in[0] = -1.0f;
  in[1] = 0.5f;
  in[2] = 2.0f;
  kiln_kernel_args_t args = {&kiln_op_relu, NULL, 1, &x, 1, &y};
  KILN_ASSERT_OK(kiln_op_evaluate_into(&args));
  const float *out = kiln_tensor_data(y);
  assert_true(out[0] == 0.0f && out[1] == 0.5f && out[2] == 2.0f);
  args.op = kiln_op_get(KILN_OP_IF);
  KILN_ASSERT_STATUS(kiln_op_evaluate_into(&args), UNIMPLEMENTED, "if has no reference kernel");
  kiln_tensor_release(x);
  kiln_tensor_release(y);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_operator_is_implemented_or_listed),
      cmocka_unit_test(test_every_compute_rule_has_a_reference),
      cmocka_unit_test(test_out_of_range),
      cmocka_unit_test(test_cpu_strategies),
      cmocka_unit_test(test_evaluate_into),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
