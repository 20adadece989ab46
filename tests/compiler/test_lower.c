/*
 * Lowering graph-IR functions to one kernel each (compiler/lower.h): a conv
 * with its bias and relu, a depthwise NCHWc conv with its bias and clip, a
 * blocked max and avg pool with an add and relu after them, a dense with
 * its epilogue, an elementwise chain
 * with a scalar constant, a reduction over injective inputs, a tuple of
 * outputs. Each kernel runs on the loop-IR interpreter as lowered and,
 * after the lowering passes, through the C backend with 1, 2 and 3
 * threads, against the reference interpreter on the same function; the
 * fused conv's loop nest is checked for one parallel loop writing relu's
 * output from a register tile. Then the errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/target.h"
#include "compiler/lower.h"
#include "interp/interp.h"
#include "ir/infer.h"
#include "kiln/parallel.h"
#include "kiln_compute_test.h"
#include "kiln_ir_test.h"
#include "tir/interp.h"
#include "tir/printer.h"
#include "tir/transform.h"

#define arena kiln_op_test_arena

static void assert_close(const kiln_tensor_t *got, const kiln_tensor_t *want, const char *where) {
  assert_int_equal(kiln_tensor_element_count(got), kiln_tensor_element_count(want));
  for (int64_t i = 0; i < kiln_tensor_element_count(want); ++i) {
    double g = kiln_tensor_element_as_double(got, i);
    double w = kiln_tensor_element_as_double(want, i);
    if (!(fabs(g - w) <= 1e-5 + 1e-4 * fabs(w))) {
      fail_msg("%s: element %lld is %.9g, %.9g in the reference", where, (long long)i, g, w);
    }
  }
}

/* Fresh output tensors shaped as the reference's, poisoned. */
static void make_outputs(int n, kiln_tensor_t *const *want, kiln_tensor_t **out) {
  for (int i = 0; i < n; ++i) {
    KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), kiln_tensor_dtype(want[i]),
                                      kiln_tensor_ndim(want[i]), kiln_tensor_shape(want[i]),
                                      &out[i]));
    memset(kiln_tensor_data(out[i]), 0x7f, kiln_tensor_byte_size(out[i]));
  }
}

/* Lowers main of `m` (typed here) and checks it against the interpreter on
 * `inputs`; returns the PrimFunc after the passes (in the test arena). */
static const kiln_tir_prim_func_t *check_lowered(kiln_module_t *m, int num_inputs,
                                                 kiln_tensor_t *const *inputs) {
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  int num_want = 0;
  kiln_tensor_t **want = NULL;
  KILN_ASSERT_OK(
      kiln_interp_run(m, "main", num_inputs, inputs, kiln_allocator_system(), &num_want, &want));
  kiln_schedule_target_t target = kiln_schedule_target_host();
  const kiln_tir_prim_func_t *func = NULL, *passed = NULL;
  KILN_ASSERT_OK(kiln_compiler_lower_function(kiln_module_get_function(m, "main"), &target, &arena,
                                              "fused", &func));
  kiln_tir_pipeline_options_t options = kiln_tir_pipeline_options_default();
  KILN_ASSERT_OK(kiln_tir_lower_pipeline(&arena, func, &options, &passed));
  kiln_tensor_t *args[16];
  assert_true(num_inputs + num_want <= 16);
  memcpy(args, inputs, (size_t)num_inputs * sizeof(args[0]));
  make_outputs(num_want, want, args + num_inputs);
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), func, num_inputs + num_want, args));
  for (int o = 0; o < num_want; ++o) {
    assert_close(args[num_inputs + o], want[o], "loop-IR interpreter");
  }
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_OK(
      kiln_codegen_build(kiln_allocator_system(), "c -march=native", &passed, 1, &module));
  int threads_before = kiln_parallel_get_num_threads();
  for (int threads = 1; threads <= 3; ++threads) {
    KILN_ASSERT_OK(kiln_parallel_set_num_threads(threads));
    for (int o = 0; o < num_want; ++o) {
      memset(kiln_tensor_data(args[num_inputs + o]), 0x7f,
             kiln_tensor_byte_size(args[num_inputs + o]));
    }
    KILN_ASSERT_OK(kiln_runtime_module_call(module, "fused", num_inputs + num_want, args));
    for (int o = 0; o < num_want; ++o) {
      assert_close(args[num_inputs + o], want[o], "C backend");
    }
  }
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(threads_before));
  kiln_runtime_module_release(module);
  for (int o = 0; o < num_want; ++o) {
    kiln_tensor_release(args[num_inputs + o]);
    kiln_tensor_release(want[o]);
  }
  kiln_allocator_free(kiln_allocator_system(), want);
  return passed;
}

static char *text_of(const kiln_tir_prim_func_t *func) {
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_prim_func_to_text(kiln_allocator_system(), func, &text));
  return text;
}

static int count_of(const char *text, const char *needle) {
  int n = 0;
  size_t length = strlen(needle);
  for (size_t at = 0; text[at]; ++at) {
    n += strncmp(text + at, needle, length) == 0;
  }
  return n;
}

static void release_all(int n, kiln_tensor_t **tensors) {
  for (int i = 0; i < n; ++i) {
    kiln_tensor_release(tensors[i]);
  }
}

static void test_conv_bias_relu(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *params[3] = {
      irt_var(m, "x", KILN_DTYPE_FLOAT32, 5, SHAPE(1, 2, 7, 11, 4)),
      irt_var(m, "w", KILN_DTYPE_FLOAT32, 6, SHAPE(2, 2, 3, 3, 4, 16)),
      irt_var(m, "b", KILN_DTYPE_FLOAT32, 5, SHAPE(1, 2, 1, 1, 16)),
  };
  kiln_expr_t *conv =
      IRT_CALL(m, "nn.contrib_conv2d_NCHWc",
               IRT_ATTRS("padding", "[1, 1, 1, 1]", "data_layout", "\"NCHW4c\"", "kernel_layout",
                         "\"OIHW4i16o\"", "out_layout", "\"NCHW16c\""),
               &params[0]->base, &params[1]->base);
  kiln_expr_t *add = IRT_CALL(m, "add", NULL, conv, &params[2]->base);
  irt_add_function(m, "main", 3, params, IRT_CALL(m, "nn.relu", NULL, add));
  kiln_tensor_t *inputs[3] = {
      random_tensor(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 2, 7, 11, 4), -1, 1),
      random_tensor(KILN_DTYPE_FLOAT32, 6, SHAPE(2, 2, 3, 3, 4, 16), -1, 1),
      random_tensor(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 2, 1, 1, 16), -1, 1),
  };
  char *text = text_of(check_lowered(m, 3, inputs));
  /* One parallel loop for the output (the padded data has its own), relu
   * written from the conv's tile: no buffer the size of the conv's output. */
  assert_int_equal(count_of(text, "T.parallel"), 2);
  assert_non_null(strstr(text, "T.max("));
  assert_null(strstr(text, "T_add"));
  free(text);
  release_all(3, inputs);
  kiln_module_destroy(m);
}

/* Depthwise NCHWc (stride 2, 48 channels in blocks of 16, ow 11: a tile
 * and a tail) with its bias and clip, as alter_op_layout leaves
 * MobileNet's: the clip is written from the conv's row. */
static void test_depthwise_bias_clip(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *params[3] = {
      irt_var(m, "x", KILN_DTYPE_FLOAT32, 5, SHAPE(1, 3, 9, 21, 16)),
      irt_var(m, "w", KILN_DTYPE_FLOAT32, 6, SHAPE(3, 1, 3, 3, 1, 16)),
      irt_var(m, "b", KILN_DTYPE_FLOAT32, 4, SHAPE(3, 1, 1, 16)),
  };
  kiln_expr_t *conv = IRT_CALL(m, "nn.contrib_conv2d_NCHWc",
                               IRT_ATTRS("strides", "[2, 2]", "padding", "[1, 1, 1, 1]", "groups",
                                         "48", "kernel_layout", "\"OIHW1i16o\""),
                               &params[0]->base, &params[1]->base);
  kiln_expr_t *add = IRT_CALL(m, "add", NULL, conv, &params[2]->base);
  irt_add_function(m, "main", 3, params,
                   IRT_CALL(m, "clip", IRT_ATTRS("a_min", "0", "a_max", "6"), add));
  kiln_tensor_t *inputs[3] = {
      random_tensor(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 3, 9, 21, 16), -8, 8),
      random_tensor(KILN_DTYPE_FLOAT32, 6, SHAPE(3, 1, 3, 3, 1, 16), -1, 1),
      random_tensor(KILN_DTYPE_FLOAT32, 4, SHAPE(3, 1, 1, 16), -1, 1),
  };
  char *text = text_of(check_lowered(m, 3, inputs));
  /* one parallel loop: the padding is folded into the reads (no pad
   * stage), and clip writes from the conv's row */
  assert_int_equal(count_of(text, "T.parallel"), 1);
  assert_null(strstr(text, "_pad"));
  assert_non_null(strstr(text, "T.max("));
  assert_non_null(strstr(text, "T.min("));
  assert_null(strstr(text, "T_add"));
  free(text);
  release_all(3, inputs);
  kiln_module_destroy(m);
}

/* A blocked pool with an add and relu after it (TVM fuses elementwise ops
 * into a pool): one parallel loop writes relu's output from the pool's
 * local accumulators, no buffer of the pool's output shape; ow 11 is a
 * register tile of 4 and a tail, the padding and ceil_mode windows are
 * folded into the reads. */
static void check_pool_add_relu(const char *op, const char *const *attrs) {
  kiln_module_t *m = irt_module();
  kiln_var_t *params[2] = {
      irt_var(m, "x", KILN_DTYPE_FLOAT32, 5, SHAPE(2, 3, 9, 21, 16)),
      irt_var(m, "b", KILN_DTYPE_FLOAT32, 4, SHAPE(3, 1, 1, 16)),
  };
  kiln_expr_t *pool = IRT_CALL(m, op, attrs, &params[0]->base);
  kiln_expr_t *add = IRT_CALL(m, "add", NULL, pool, &params[1]->base);
  irt_add_function(m, "main", 2, params, IRT_CALL(m, "nn.relu", NULL, add));
  kiln_tensor_t *inputs[2] = {
      random_tensor(KILN_DTYPE_FLOAT32, 5, SHAPE(2, 3, 9, 21, 16), -4, 4),
      random_tensor(KILN_DTYPE_FLOAT32, 4, SHAPE(3, 1, 1, 16), -1, 1),
  };
  char *text = text_of(check_lowered(m, 2, inputs));
  assert_int_equal(count_of(text, "T.parallel"), 1);
  assert_non_null(strstr(text, "scope=\"local\""));
  assert_null(strstr(text, "scope=\"global\""));
  assert_null(strstr(text, "T_add"));
  free(text);
  release_all(2, inputs);
  kiln_module_destroy(m);
}

static void test_pool_add_relu(void **state) {
  (void)state;
  check_pool_add_relu("nn.max_pool2d",
                      IRT_ATTRS("pool_size", "[3, 3]", "strides", "[2, 2]", "padding",
                                "[1, 1, 1, 1]", "ceil_mode", "True", "layout", "\"NCHW16c\""));
  check_pool_add_relu("nn.avg_pool2d", IRT_ATTRS("pool_size", "[3, 3]", "strides", "[2, 2]",
                                                 "padding", "[1, 1, 1, 1]", "count_include_pad",
                                                 "True", "layout", "\"NCHW16c\""));
}

static void test_dense_bias_relu(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *params[3] = {
      irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(7, 13)),
      irt_var(m, "w", KILN_DTYPE_FLOAT32, 2, SHAPE(64, 13)),
      irt_var(m, "b", KILN_DTYPE_FLOAT32, 1, SHAPE(64)),
  };
  kiln_expr_t *dense = IRT_CALL(m, "nn.dense", NULL, &params[0]->base, &params[1]->base);
  kiln_expr_t *bias = IRT_CALL(m, "nn.bias_add", IRT_ATTRS("axis", "1"), dense, &params[2]->base);
  irt_add_function(m, "main", 3, params, IRT_CALL(m, "nn.relu", NULL, bias));
  kiln_tensor_t *inputs[3] = {
      random_tensor(KILN_DTYPE_FLOAT32, 2, SHAPE(7, 13), -1, 1),
      random_tensor(KILN_DTYPE_FLOAT32, 2, SHAPE(64, 13), -1, 1),
      random_tensor(KILN_DTYPE_FLOAT32, 1, SHAPE(64), -1, 1),
  };
  char *text = text_of(check_lowered(m, 3, inputs));
  assert_int_equal(count_of(text, "T.parallel"), 1);
  free(text);
  release_all(3, inputs);
  kiln_module_destroy(m);
}

static void test_elementwise_chain_with_scalar(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 3, SHAPE(3, 5, 19));
  const float half[] = {0.5f};
  kiln_expr_t *scale = IRT_CALL(m, "multiply", NULL, &x->base, irt_constant_f32(m, 0, NULL, half));
  kiln_expr_t *t = IRT_CALL(m, "tanh", NULL, scale);
  irt_add_function(m, "main", 1, &x, IRT_CALL(m, "sigmoid", NULL, t));
  kiln_tensor_t *input = random_tensor(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 5, 19), -4, 4);
  char *text = text_of(check_lowered(m, 1, &input));
  /* One loop nest: the chain is inlined into the output. */
  assert_int_equal(count_of(text, "T.parallel"), 1);
  free(text);
  kiln_tensor_release(input);
  kiln_module_destroy(m);
}

static void test_reduction_over_injective(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 3, SHAPE(4, 6, 10));
  kiln_expr_t *relu = IRT_CALL(m, "nn.relu", NULL, &x->base);
  kiln_expr_t *t = IRT_CALL(m, "transpose", IRT_ATTRS("axes", "[0, 2, 1]"), relu);
  irt_add_function(m, "main", 1, &x,
                   IRT_CALL(m, "sum", IRT_ATTRS("axis", "[2]", "keepdims", "True"), t));
  kiln_tensor_t *input = random_tensor(KILN_DTYPE_FLOAT32, 3, SHAPE(4, 6, 10), -1, 1);
  check_lowered(m, 1, &input);
  kiln_tensor_release(input);
  kiln_module_destroy(m);
}

static void test_tuple_outputs(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(6, 9));
  kiln_expr_t *e = IRT_CALL(m, "exp", NULL, &x->base);
  kiln_expr_t *split = IRT_CALL(m, "split", IRT_ATTRS("indices", "[2]", "axis", "0"), e);
  kiln_tuple_get_item_t *first = NULL, *second = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_get_item_create(m, split, 0, &first));
  KILN_ASSERT_OK(kiln_ir_tuple_get_item_create(m, split, 1, &second));
  kiln_expr_t *neg = IRT_CALL(m, "negative", NULL, &second->base);
  kiln_expr_t *fields[2] = {&first->base, neg};
  kiln_tuple_t *tuple = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_create(m, 2, fields, &tuple));
  irt_add_function(m, "main", 1, &x, &tuple->base);
  kiln_tensor_t *input = random_tensor(KILN_DTYPE_FLOAT32, 2, SHAPE(6, 9), -1, 1);
  check_lowered(m, 1, &input);
  kiln_tensor_release(input);
  kiln_module_destroy(m);
}

static void test_errors(void **state) {
  (void)state;
  kiln_schedule_target_t target = kiln_schedule_target_host();
  const kiln_tir_prim_func_t *func = NULL;
  /* A constant of several elements must be a parameter. */
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  const float data[] = {1, 2, 3};
  irt_add_function(m, "main", 1, &x,
                   IRT_CALL(m, "add", NULL, &x->base, irt_constant_f32(m, 1, SHAPE(3), data)));
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  KILN_ASSERT_STATUS(
      kiln_compiler_lower_function(kiln_module_get_function(m, "main"), &target, &arena, "k",
                                   &func),
      INVALID_ARGUMENT,
      "lowering k: a Constant: a constant of 3 elements inside a kernel: pass it as a parameter");
  assert_null(func);
  kiln_module_destroy(m);

  /* A function that computes nothing. */
  m = irt_module();
  x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  irt_add_function(m, "main", 1, &x, &x->base);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  KILN_ASSERT_STATUS(kiln_compiler_lower_function(kiln_module_get_function(m, "main"), &target,
                                                  &arena, "k", &func),
                     INVALID_ARGUMENT, "lowering k: the function computes nothing");
  kiln_module_destroy(m);

  /* A call of a function inside a kernel. */
  m = irt_module();
  x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  kiln_var_t *y = irt_var(m, "y", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  kiln_function_t *inner = irt_function(m, 1, &y, IRT_CALL(m, "exp", NULL, &y->base));
  inner->primitive = true;
  kiln_call_t *call = NULL;
  kiln_expr_t *args[1] = {&x->base};
  KILN_ASSERT_OK(kiln_ir_call_function_create(m, inner, 1, args, &call));
  irt_add_function(m, "main", 1, &x, &call->base);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  KILN_ASSERT_STATUS(kiln_compiler_lower_function(kiln_module_get_function(m, "main"), &target,
                                                  &arena, "k", &func),
                     INVALID_ARGUMENT, "a call of a function inside a kernel");
  kiln_module_destroy(m);

  /* More parameters than a kernel takes (fuse_ops never makes such a
   * group), and a call of more arguments (split_args splits those). */
  m = irt_module();
  kiln_var_t *xs[KILN_OP_MAX_FUNCTION_ARGS + 1];
  for (int i = 0; i <= KILN_OP_MAX_FUNCTION_ARGS; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "x%d", i);
    xs[i] = irt_var(m, name, KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  }
  kiln_expr_t *sum = &xs[0]->base;
  for (int i = 1; i <= KILN_OP_MAX_FUNCTION_ARGS; ++i) {
    sum = IRT_CALL(m, "add", NULL, sum, &xs[i]->base);
  }
  irt_add_function(m, "main", KILN_OP_MAX_FUNCTION_ARGS + 1, xs, sum);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  KILN_ASSERT_STATUS(kiln_compiler_lower_function(kiln_module_get_function(m, "main"), &target,
                                                  &arena, "k", &func),
                     INVALID_ARGUMENT, "lowering k: 17 parameters, a kernel takes at most 16");
  kiln_module_destroy(m);

  m = irt_module();
  x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  kiln_expr_t *parts[KILN_OP_MAX_FUNCTION_ARGS + 1];
  for (int i = 0; i <= KILN_OP_MAX_FUNCTION_ARGS; ++i) {
    parts[i] = &x->base;
  }
  irt_add_function(m, "main", 1, &x,
                   irt_call(m, "concatenate", NULL, KILN_OP_MAX_FUNCTION_ARGS + 1, parts));
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  KILN_ASSERT_STATUS(kiln_compiler_lower_function(kiln_module_get_function(m, "main"), &target,
                                                  &arena, "k", &func),
                     INVALID_ARGUMENT,
                     "lowering k: %0 = concatenate: concatenate has 17 arguments, a kernel takes "
                     "at most 16");
  kiln_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_conv_bias_relu, setup, teardown),
      cmocka_unit_test_setup_teardown(test_depthwise_bias_clip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pool_add_relu, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dense_bias_relu, setup, teardown),
      cmocka_unit_test_setup_teardown(test_elementwise_chain_with_scalar, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reduction_over_injective, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tuple_outputs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
