/*
 * Concatenates of more tensors than a kernel takes (KILN_OP_MAX_FUNCTION_ARGS),
 * compiled end to end and run by the graph executor against the reference
 * interpreter on the same module (rtol 1e-3, atol 1e-4): a 40-way
 * concatenate of 1x1 convs, a 19-way and a 40-way one of scaled copies of
 * the input, at opt_level 0 and 3. At 3, alter_op_layout blocks the convs
 * (NCHW4c) and the input (NCHW8c, for the convs; the scaled copies follow
 * it), so all three concatenate blocked values on their chunk axis, split
 * by split_args first; the split and the strided_slice of the convs'
 * concatenate cut on chunk boundaries and stay blocked too. Every kernel's
 * parameters stay within the limit, and the build fails on none.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/build.h"
#include "interp/interp.h"
#include "ir/infer.h"
#include "kiln_ir_test.h"
#include "op/op.h"

#define CONVS   40
#define OUTPUTS 5

static float pseudo_random(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(*state >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

/* relu(conv2d(x, w)) with a 1x1 weight of 4 output channels. */
static kiln_expr_t *small_conv(kiln_module_t *m, kiln_expr_t *x, uint64_t *state) {
  float weight[4 * 8];
  for (int i = 0; i < 4 * 8; ++i) {
    weight[i] = pseudo_random(state);
  }
  kiln_expr_t *w = irt_constant_f32(m, 4, SHAPE(4, 8, 1, 1), weight);
  return IRT_CALL(m, "nn.relu", NULL, IRT_CALL(m, "nn.conv2d", NULL, x, w));
}

/* concatenate(x * 1, ..., x * count, axis=1). */
static kiln_expr_t *scaled_copies(kiln_module_t *m, kiln_expr_t *x, int count) {
  kiln_expr_t *parts[CONVS];
  for (int i = 0; i < count; ++i) {
    kiln_expr_t *scale = irt_constant_f32(m, 0, NULL, (const float[]){(float)(i + 1)});
    parts[i] = IRT_CALL(m, "multiply", NULL, x, scale);
  }
  return irt_call(m, "concatenate", IRT_ATTRS("axis", "1"), count, parts);
}

/* main(x: (1, 8, 6, 6)) = (concatenate of 40 convs, of 19 and of 40 copies,
 * the convs' part [40, 100) of a split at 40 and 100, and their channels
 * [8, 48) by strided_slice). */
static kiln_module_t *concatenations(void) {
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 4, SHAPE(1, 8, 6, 6));
  uint64_t state = 7;
  kiln_expr_t *convs[CONVS];
  for (int i = 0; i < CONVS; ++i) {
    convs[i] = small_conv(m, &x->base, &state);
  }
  kiln_expr_t *joined = irt_call(m, "concatenate", IRT_ATTRS("axis", "1"), CONVS, convs);
  kiln_expr_t *parts = IRT_CALL(m, "split", IRT_ATTRS("indices", "[40, 100]", "axis", "1"), joined);
  kiln_tuple_get_item_t *middle = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_get_item_create(m, parts, 1, &middle));
  kiln_expr_t *fields[OUTPUTS] = {
      joined,
      scaled_copies(m, &x->base, 19),
      scaled_copies(m, &x->base, 40),
      IRT_CALL(m, "nn.relu", NULL, &middle->base),
      IRT_CALL(m, "strided_slice", IRT_ATTRS("begin", "[8]", "end", "[48]", "axes", "[1]"), joined),
  };
  kiln_tuple_t *tuple = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_create(m, OUTPUTS, fields, &tuple));
  irt_add_function(m, "main", 1, &x, &tuple->base);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  return m;
}

static void assert_close(int output, const kiln_tensor_t *got, const kiln_tensor_t *want) {
  assert_int_equal(kiln_tensor_element_count(got), kiln_tensor_element_count(want));
  for (int64_t i = 0; i < kiln_tensor_element_count(want); ++i) {
    double g = kiln_tensor_element_as_double(got, i), w = kiln_tensor_element_as_double(want, i);
    if (!(fabs(g - w) <= 1e-4 + 1e-3 * fabs(w))) {
      fail_msg("output %d: element %lld is %.9g, %.9g in the reference", output, (long long)i, g,
               w);
    }
  }
}

static void check_concatenations(const char *target, int opt_level) {
  kiln_module_t *reference = concatenations();
  kiln_tensor_t *input = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 4,
                                    SHAPE(1, 8, 6, 6), &input));
  uint64_t state = 11;
  for (int64_t i = 0; i < kiln_tensor_element_count(input); ++i) {
    ((float *)kiln_tensor_data(input))[i] = pseudo_random(&state);
  }
  int num_want = 0;
  kiln_tensor_t **want = NULL;
  KILN_ASSERT_OK(
      kiln_interp_run(reference, "main", 1, &input, kiln_allocator_system(), &num_want, &want));
  kiln_module_destroy(reference);
  assert_int_equal(num_want, OUTPUTS);
  assert_int_equal(kiln_tensor_shape(want[0])[1], 4 * CONVS);
  assert_int_equal(kiln_tensor_shape(want[1])[1], 8 * 19);

  kiln_module_t *m = concatenations();
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.target = target;
  options.opt_level = opt_level;
  options.verify = true;
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compiler_build(kiln_allocator_system(), m, &options, &compiled));
  kiln_module_destroy(m);
  kiln_compile_stats_t stats;
  kiln_compiled_get_stats(compiled, &stats);
  print_message("%s, opt_level %d: %d kernels, %d calls\n", target, opt_level, stats.num_kernels,
                stats.num_kernel_calls);
  kiln_graph_executor_t *executor = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &executor));
  KILN_ASSERT_OK(kiln_graph_executor_set_input(executor, 0, kiln_tensor_dl(input)));
  KILN_ASSERT_OK(kiln_graph_executor_run(executor));
  assert_int_equal(kiln_graph_executor_num_outputs(executor), OUTPUTS);
  for (int o = 0; o < OUTPUTS; ++o) {
    kiln_tensor_t *got = NULL;
    KILN_ASSERT_OK(kiln_graph_executor_copy_output(executor, o, kiln_allocator_system(), &got));
    assert_close(o, got, want[o]);
    kiln_tensor_release(got);
    kiln_tensor_release(want[o]);
  }
  kiln_allocator_free(kiln_allocator_system(), want);
  kiln_graph_executor_destroy(executor);
  kiln_compiled_destroy(compiled);
  kiln_tensor_release(input);
}

static void test_opt_level_3(void **state) {
  (void)state;
  check_concatenations(kiln_compiler_default_target(), 3);
}

static void test_opt_level_0(void **state) {
  (void)state;
  check_concatenations(kiln_compiler_default_target(), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_opt_level_3),
      cmocka_unit_test(test_opt_level_0),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
