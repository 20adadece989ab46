/*
 * pad_channels (pass/pad_channels.c): a conv with output channels the
 * block does not divide computes whole blocks, and the slice of the real
 * channels moves down past channel-wise ops: a classifier conv (10
 * channels) through its bias, relu and global pool (one small slice left),
 * a conv of 24 channels whose slice a groups-1 conv absorbs (zero input
 * weights) and one a depthwise conv carries on, and one a split reads whole
 * (a tuple-typed reader: left alone); a conv of 58 channels (ShuffleNetV2's)
 * before a concatenate, whose slice fuses into the concatenation; a conv
 * of 8 channels before a concatenate, whose padding would double its work,
 * and one of 32 channels are left alone. Every case keeps the interpreter's
 * numbers (weights bound as constants, random). The block option and its
 * bounds; allocation failures; the built-in workloads keep their numbers
 * through canonicalize_ops, pad_channels, alter_op_layout and fuse_ops.
 */
#include <string.h>

#include "frontend/testing/workloads.h"
#include "ir/params.h"
#include "kiln_ir_test.h"
#include "kiln_pass_test.h"
#include "op/op.h"
#include "pass/rewrite.h"

/* conv(10) + bias, relu, global pool, flatten. */
#define CLASSIFIER                                                                      \
  "def @main(%x: Tensor[(1, 16, 5, 5), float32], %w: Tensor[(10, 16, 1, 1), float32], " \
  "%b: Tensor[(10, 1, 1), float32]) {\n"                                                \
  "  %0 = nn.conv2d(%x, %w, channels=10, kernel_size=[1, 1]);\n"                        \
  "  %1 = add(%0, %b);\n"                                                               \
  "  %2 = nn.relu(%1);\n"                                                               \
  "  %3 = nn.global_avg_pool2d(%2);\n"                                                  \
  "  nn.batch_flatten(%3)\n"                                                            \
  "}\n"
/* conv(24), relu, conv(24 -> 16, 3x3), global max pool. */
#define ABSORBED                                                                         \
  "def @main(%x: Tensor[(1, 16, 6, 6), float32], %w1: Tensor[(24, 16, 1, 1), float32], " \
  "%w2: Tensor[(16, 24, 3, 3), float32]) {\n"                                            \
  "  %0 = nn.conv2d(%x, %w1);\n"                                                         \
  "  %1 = nn.relu(%0);\n"                                                                \
  "  %2 = nn.conv2d(%1, %w2, padding=[1, 1, 1, 1]);\n"                                   \
  "  nn.global_max_pool2d(%2)\n"                                                         \
  "}\n"
/* conv(24), depthwise 3x3 over the 24, times a (1, 1, 1) constant (no
 * channel axis), global average pool. */
#define DEPTHWISE                                                                        \
  "def @main(%x: Tensor[(1, 16, 6, 6), float32], %w1: Tensor[(24, 16, 1, 1), float32], " \
  "%w2: Tensor[(24, 1, 3, 3), float32], %s: Tensor[(1, 1, 1), float32]) {\n"             \
  "  %0 = nn.conv2d(%x, %w1);\n"                                                         \
  "  %1 = nn.conv2d(%0, %w2, padding=[1, 1, 1, 1], groups=24);\n"                        \
  "  %2 = multiply(%1, %s);\n"                                                           \
  "  nn.global_avg_pool2d(%2)\n"                                                         \
  "}\n"
/* conv(24) split in two (a tuple-typed reader of the conv's output). */
#define SPLIT                                                                              \
  "def @main(%x: Tensor[(1, 16, 6, 6), float32], %w: Tensor[(24, 16, 1, 1), float32]) {\n" \
  "  %0 = nn.conv2d(%x, %w);\n"                                                            \
  "  %1 = split(%0, sections=2, axis=1);\n"                                                \
  "  add(%1.0, %1.1)\n"                                                                    \
  "}\n"
/* conv(8) concatenated with the input; conv(32) then relu. */
#define LEFT_ALONE                                                                      \
  "def @main(%x: Tensor[(1, 16, 6, 6), float32], %w1: Tensor[(8, 16, 3, 3), float32], " \
  "%w2: Tensor[(32, 24, 1, 1), float32]) {\n"                                           \
  "  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);\n"                                  \
  "  %1 = concatenate(%x, %0, axis=1);\n"                                               \
  "  %2 = nn.conv2d(%1, %w2);\n"                                                        \
  "  nn.relu(%2)\n"                                                                     \
  "}\n"

/* conv(58), relu, concatenated after the input: 64 - 58 channels of
 * padding, under 1/8 of the conv's work. */
#define CONCATENATED                                                                       \
  "def @main(%x: Tensor[(1, 16, 6, 6), float32], %w: Tensor[(58, 16, 1, 1), float32]) {\n" \
  "  %0 = nn.conv2d(%x, %w);\n"                                                            \
  "  %1 = nn.relu(%0);\n"                                                                  \
  "  concatenate(%x, %1, axis=1)\n"                                                        \
  "}\n"

/* `text` with every parameter but %x bound to random constants. */
static kiln_module_t *parse_bound(const char *text) {
  kiln_module_t *m = kpt_parse(text);
  kiln_function_t *main_fn = kiln_module_get_function(m, "main");
  kpt_inputs_t random = kpt_inputs(m, 7);
  kiln_params_t params;
  kiln_params_initialize(&params, kiln_allocator_system());
  for (int i = 1; i < main_fn->num_params; ++i) {
    KILN_ASSERT_OK(kiln_params_add(&params, main_fn->params[i]->name, random.tensors[i]));
  }
  KILN_ASSERT_OK(kiln_ir_bind_params(m, "main", &params));
  kiln_params_deinitialize(&params);
  kpt_inputs_release(&random);
  return m;
}

/* Runs pad_channels on a bound copy of `text`, checks its numbers against
 * another, and returns the padded module (the caller destroys it). */
static kiln_module_t *padded(const char *text, kiln_pass_context_t *context) {
  kiln_module_t *reference = parse_bound(text);
  kiln_module_t *m = parse_bound(text);
  KILN_ASSERT_OK(kpt_run(m, context, "pad_channels"));
  kpt_assert_same_numbers(reference, m, 3);
  kiln_module_destroy(reference);
  return m;
}

static int64_t count_op(const kiln_module_t *module, const kiln_op_t *op) {
  int64_t count = 0;
  KILN_ASSERT_OK(kiln_pass_count_calls(module, op, kiln_allocator_system(), &count));
  return count;
}

static void test_classifier_sliced_after_pool(void **state) {
  (void)state;
  kiln_pass_context_t *context = kpt_context(3);
  kiln_module_t *m = padded(CLASSIFIER, context);
  char *text = kpt_print(m);
  assert_non_null(strstr(text, "channels=16"));
  assert_non_null(strstr(text, "nn.global_avg_pool2d(%2) /* Tensor[(1, 16, 1, 1), float32] */"));
  assert_non_null(strstr(text, "strided_slice(%3, begin=[0], end=[10], axes=[1])"));
  assert_int_equal(count_op(m, &kiln_op_strided_slice), 1);
  kpt_free(text);
  kiln_module_destroy(m);
  kiln_pass_context_destroy(context);
}

static void test_slice_absorbed_or_carried(void **state) {
  (void)state;
  kiln_pass_context_t *context = kpt_context(3);
  kiln_module_t *m = padded(ABSORBED, context);
  assert_int_equal(count_op(m, &kiln_op_strided_slice), 0);
  char *text = kpt_print(m);
  assert_non_null(strstr(text, "Tensor[(1, 32, 6, 6), float32]"));
  kpt_free(text);
  kiln_module_destroy(m);
  m = padded(SPLIT, context); /* the split reads the conv whole: left alone */
  assert_int_equal(count_op(m, &kiln_op_strided_slice), 0);
  kiln_module_destroy(m);
  m = padded(DEPTHWISE, context);
  text = kpt_print(m);
  assert_non_null(strstr(text, "groups=32"));
  assert_non_null(strstr(text, "end=[24]"));
  assert_int_equal(count_op(m, &kiln_op_strided_slice), 1);
  kpt_free(text);
  kiln_module_destroy(m);
  kiln_pass_context_destroy(context);
}

static void test_slice_into_concatenate(void **state) {
  (void)state;
  kiln_pass_context_t *context = kpt_context(3);
  kiln_module_t *m = padded(CONCATENATED, context);
  char *text = kpt_print(m);
  assert_non_null(strstr(text, "nn.relu(%0) /* Tensor[(1, 64, 6, 6), float32] */"));
  assert_non_null(strstr(text, "strided_slice(%1, begin=[0], end=[58], axes=[1])"));
  assert_int_equal(count_op(m, &kiln_op_strided_slice), 1);
  kpt_free(text);
  kiln_module_destroy(m);
  kiln_pass_context_destroy(context);
}

static void test_left_alone(void **state) {
  (void)state;
  kiln_pass_context_t *context = kpt_context(3);
  kiln_module_t *m = padded(LEFT_ALONE, context);
  assert_int_equal(count_op(m, &kiln_op_strided_slice), 0);
  char *text = kpt_print(m);
  assert_null(strstr(text, "channels=16"));
  kpt_free(text);
  kiln_module_destroy(m);
  kiln_pass_context_destroy(context);
}

/* Block 8: the 24-channel convs are whole blocks already; 0 and 2000 are
 * refused with the option's range. */
static void test_block_option(void **state) {
  (void)state;
  kiln_pass_context_t *context = kpt_context(3);
  KILN_ASSERT_OK(kiln_pass_context_set_option(context, "pad_channels.block", "8"));
  kiln_module_t *m = padded(DEPTHWISE, context);
  assert_int_equal(count_op(m, &kiln_op_strided_slice), 0);
  kiln_module_destroy(m);
  KILN_ASSERT_OK(kiln_pass_context_set_option(context, "pad_channels.block", "2000"));
  m = parse_bound(DEPTHWISE);
  kiln_status_t status = kpt_run(m, context, "pad_channels");
  assert_int_equal(kiln_status_code(status), KILN_STATUS_CODE_INVALID_ARGUMENT);
  assert_non_null(strstr(kiln_status_message(status), "[1, 1024]"));
  kiln_status_free(status);
  kiln_module_destroy(m);
  kiln_pass_context_destroy(context);
}

static kiln_status_t pad_scenario(kiln_allocator_t allocator, void *user) {
  (void)user;
  kiln_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_parse_module("test", CLASSIFIER, allocator, &module));
  kiln_pass_context_t *context = NULL;
  kiln_status_t status = kiln_pass_context_create(allocator, 3, &context);
  if (status == KILN_OK) {
    status = kiln_pass_context_require(context, "pad_channels");
  }
  const kiln_pass_t *pass = NULL;
  if (status == KILN_OK) {
    status = kiln_pass_find("pad_channels", &pass);
  }
  if (status == KILN_OK) {
    status = kiln_pass_sequential_run(module, context, &pass, 1);
  }
  kiln_pass_context_destroy(context);
  kiln_module_destroy(module);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(pad_scenario, NULL) > 0);
}

/* Every built-in workload (at 32x32, where squeezenet1_1's 1000-class
 * conv has a 1x1 output: its slice would cost as much as the conv's
 * output, so it is left alone) keeps its numbers through
 * canonicalize_ops, pad_channels, alter_op_layout and fuse_ops. */
static void test_workloads_keep_their_numbers(void **state) {
  (void)state;
  for (const char *const *name = kiln_workload_names(); *name; ++name) {
    kiln_params_t params_a, params_b;
    kiln_module_t *reference = kpt_build_workload(*name, &params_a);
    kiln_module_t *m = kpt_build_workload(*name, &params_b);
    kiln_pass_context_t *context = kpt_context(3);
    KILN_ASSERT_OK(kpt_run(m, context, "canonicalize_ops")); /* bias_add: add */
    KILN_ASSERT_OK(kpt_run(m, context, "pad_channels"));
    KILN_ASSERT_OK(kpt_run(m, context, "alter_op_layout"));
    KILN_ASSERT_OK(kpt_run(m, context, "fuse_ops"));
    kiln_pass_context_destroy(context);
    kpt_assert_same_numbers(reference, m, 5);
    kiln_module_destroy(reference);
    kiln_module_destroy(m);
    kiln_params_deinitialize(&params_a);
    kiln_params_deinitialize(&params_b);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_classifier_sliced_after_pool),
      cmocka_unit_test(test_slice_absorbed_or_carried),
      cmocka_unit_test(test_slice_into_concatenate),
      cmocka_unit_test(test_left_alone),
      cmocka_unit_test(test_block_option),
      cmocka_unit_test(test_allocation_failures),
      cmocka_unit_test(test_workloads_keep_their_numbers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
