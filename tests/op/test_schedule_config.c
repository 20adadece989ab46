/*
 * Schedule templates and configurations (op/schedule_config.h): the text
 * form both ways and its errors, the generic form of the conv and GEMM knob
 * structs, the spaces the schedules report (default inside, bounds kept),
 * and a given configuration applied by the conv and dense schedules: the
 * loop nest changes and the numbers stay the reference's through every
 * path.
 */
#include <stdio.h>
#include <string.h>

#include "kiln_compute_test.h"
#include "op/nn_conv_compute.h"

static kiln_schedule_config_t parsed(const char *text) {
  kiln_schedule_config_t config;
  KILN_ASSERT_OK(kiln_schedule_config_parse(text, &config));
  return config;
}

static const char *formatted(const kiln_schedule_config_t *config) {
  static char text[256];
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_schedule_config_format(config, &sb));
  snprintf(text, sizeof(text), "%s", kiln_strbuf_c_str(&sb));
  kiln_strbuf_deinitialize(&sb);
  return text;
}

static void test_text_round_trip(void **state) {
  (void)state;
  const char *conv =
      "conv2d_nchwc tile_ow=6 tile_oc=4 block_oh=2 prefetch=2 unroll_ic=4 pad_rows=0";
  kiln_schedule_config_t c = parsed(conv);
  assert_int_equal(c.template_id, KILN_SCHEDULE_TEMPLATE_CONV2D_NCHWC);
  assert_string_equal(formatted(&c), conv);
  /* knobs in any order, extra spaces */
  kiln_schedule_config_t g = parsed("  gemm columns_outer=0  tile_cols=32 unroll_k=2 tile_rows=8");
  assert_string_equal(formatted(&g), "gemm tile_rows=8 tile_cols=32 columns_outer=0 unroll_k=2");
  /* a knob added after records were first written takes its least value
   * when a record lacks it: what the template did before it existed */
  g = parsed("gemm tile_rows=8 tile_cols=32 columns_outer=0");
  assert_string_equal(formatted(&g), "gemm tile_rows=8 tile_cols=32 columns_outer=0 unroll_k=1");
  assert_true(kiln_schedule_config_equal(&g, &g));
  assert_false(kiln_schedule_config_equal(&c, &g));
}

static void test_text_errors(void **state) {
  (void)state;
  kiln_schedule_config_t c;
  KILN_ASSERT_STATUS(kiln_schedule_config_parse("winograd tile=2", &c), INVALID_ARGUMENT,
                     "unknown template 'winograd'");
  KILN_ASSERT_STATUS(kiln_schedule_config_parse("gemm tile_rows=8 tile_cols=32", &c),
                     INVALID_ARGUMENT, "knob columns_outer is missing");
  KILN_ASSERT_STATUS(
      kiln_schedule_config_parse("gemm tile_rows=8 tile_rows=4 tile_cols=32 columns_outer=1", &c),
      INVALID_ARGUMENT, "knob tile_rows given twice");
  KILN_ASSERT_STATUS(
      kiln_schedule_config_parse("gemm tile_rows=8 tile_cols=3x columns_outer=1", &c),
      INVALID_ARGUMENT, "knob tile_cols has value '3x', expected an integer");
  KILN_ASSERT_STATUS(kiln_schedule_config_parse("gemm rows=8", &c), INVALID_ARGUMENT,
                     "'rows=8' is not a knob=value of template gemm");
  KILN_ASSERT_STATUS(kiln_schedule_config_parse("", &c), INVALID_ARGUMENT, "unknown template");
}

static void test_struct_round_trip(void **state) {
  (void)state;
  kiln_schedule_conv_config_t conv = {
      .tile_ow = 7, .tile_oc = 2, .block_oh = 14, .prefetch = 1, .unroll_ic = 8};
  kiln_schedule_config_t c = kiln_schedule_config_of(KILN_SCHEDULE_TEMPLATE_CONV2D_NCHWC, &conv);
  assert_string_equal(
      formatted(&c),
      "conv2d_nchwc tile_ow=7 tile_oc=2 block_oh=14 prefetch=1 unroll_ic=8 pad_rows=0");
  kiln_schedule_conv_config_t back = {0};
  kiln_schedule_config_to(&c, &back);
  assert_memory_equal(&back, &conv, sizeof(conv));
}

/* A resnet-like 3x3 layer: 56 x 56, 64 channels in blocks of 16. */
static kiln_schedule_conv_shape_t layer_56(void) {
  return (kiln_schedule_conv_shape_t){.n = 1,
                                      .oc_chunks = 4,
                                      .oh = 56,
                                      .ow = 56,
                                      .oc_block = 16,
                                      .groups = 1,
                                      .reduce_per_chunk = 144,
                                      .ic_chunks = 4,
                                      .ic_block = 16,
                                      .stride_w = 1};
}

static void test_conv_space(void **state) {
  (void)state;
  kiln_schedule_target_t avx512 = {512};
  kiln_schedule_conv_shape_t shape = layer_56();
  kiln_schedule_conv_config_t def = kiln_schedule_conv_x86_config(&avx512, &shape);
  kiln_schedule_space_t space;
  kiln_schedule_conv_x86_space(&avx512, &shape, &def, &space);
  assert_true(kiln_schedule_space_valid(&space, &space.default_config));
  assert_true(kiln_schedule_space_size(&space) > 1000);
  kiln_schedule_config_t c = space.default_config;
  c.values[0] = 8; /* tile_ow 8 x tile_oc 4: 32 accumulators, more than the registers */
  c.values[1] = 4;
  assert_false(kiln_schedule_space_valid(&space, &c));
  c = parsed("conv2d_nchwc tile_ow=8 tile_oc=2 block_oh=0 prefetch=2 unroll_ic=0 pad_rows=0");
  assert_false(kiln_schedule_space_valid(&space, &c)); /* prefetch without a row block */
  c = parsed("conv2d_nchwc tile_ow=8 tile_oc=2 block_oh=14 prefetch=2 unroll_ic=4 pad_rows=0");
  assert_false(kiln_schedule_space_valid(&space, &c)); /* 14 rows x 2 x 3.5 KiB > 64 KiB */
  c = parsed("conv2d_nchwc tile_ow=7 tile_oc=2 block_oh=4 prefetch=1 unroll_ic=2 pad_rows=0");
  assert_true(kiln_schedule_space_valid(&space, &c));
  c = parsed("gemm tile_rows=8 tile_cols=32 columns_outer=1");
  assert_false(kiln_schedule_space_valid(&space, &c)); /* another template */
}

static void test_gemm_space(void **state) {
  (void)state;
  kiln_schedule_target_t avx512 = {512};
  kiln_schedule_gemm_config_t def = kiln_schedule_gemm_x86_config(&avx512, 64, 1152, 384);
  kiln_schedule_space_t space;
  kiln_schedule_gemm_x86_space(&avx512, 64, 1152, 384, 0, &def, &space);
  assert_true(kiln_schedule_space_valid(&space, &space.default_config));
  kiln_schedule_config_t c = parsed("gemm tile_rows=14 tile_cols=32 columns_outer=0");
  assert_true(kiln_schedule_space_valid(&space, &c)); /* 14 x 2 vectors: 28 accumulators */
  c = parsed("gemm tile_rows=16 tile_cols=32 columns_outer=0");
  assert_false(kiln_schedule_space_valid(&space, &c)); /* 32 */
  /* unroll_k: 1, and 2, 4 (the default) and 8, which divide k = 384 */
  assert_int_equal(space.num_choices[3], 4);
  c = parsed("gemm tile_rows=8 tile_cols=32 columns_outer=1 unroll_k=8");
  assert_true(kiln_schedule_space_valid(&space, &c));
  def = kiln_schedule_gemm_x86_config(&avx512, 64, 1152, 7);
  kiln_schedule_gemm_x86_space(&avx512, 64, 1152, 7, 0, &def, &space);
  assert_int_equal(space.num_choices[3], 1); /* k = 7: none divides it */
  /* a packed weight fixes the columns */
  kiln_schedule_gemm_x86_space(&avx512, 1, 1000, 512, 40, &def, &space);
  assert_int_equal(space.num_choices[1], 1);
  assert_int_equal(space.choices[1][0], 40);
}

static const void *nchwc_attrs(void) {
  return ATTRS(&kiln_op_conv2d_nchwc, "padding", "[1, 1, 1, 1]", "data_layout", "\"NCHW16c\"",
               "kernel_layout", "\"OIHW16i16o\"", "out_layout", "\"NCHW16c\"");
}

/* A conv of two input chunks: the default and three configurations (row
 * blocks with and without prefetch and unrolling, a register tile with a
 * tail) agree with the reference, and a configuration changes the loops. */
static void test_conv_configs_apply(void **state) {
  (void)state;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 2, 6, 10, 16)),
                                ttype(KILN_DTYPE_FLOAT32, 6, SHAPE(2, 2, 3, 3, 16, 16))};
  const char *configs[] = {
      "conv2d_nchwc tile_ow=5 tile_oc=2 block_oh=3 prefetch=1 unroll_ic=4 pad_rows=0",
      "conv2d_nchwc tile_ow=3 tile_oc=1 block_oh=2 prefetch=0 unroll_ic=8 pad_rows=0",
      "conv2d_nchwc tile_ow=4 tile_oc=2 block_oh=0 prefetch=0 unroll_ic=0 pad_rows=0",
  };
  const char *default_text = lowered_text(&kiln_op_conv2d_nchwc, nchwc_attrs(), 2, types, 512);
  check_compute_random(&kiln_op_conv2d_nchwc, nchwc_attrs(), 2, types, -1.0, 1.0);
  for (int i = 0; i < 3; ++i) {
    kiln_schedule_config_t config = parsed(configs[i]);
    check_compute_set_config(&config);
    assert_string_not_equal(lowered_text(&kiln_op_conv2d_nchwc, nchwc_attrs(), 2, types, 512),
                            default_text);
    check_compute_random(&kiln_op_conv2d_nchwc, nchwc_attrs(), 2, types, -1.0, 1.0);
    check_compute_flush();
  }
}

static void test_dense_config_applies(void **state) {
  (void)state;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(13, 24)),
                                ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(40, 24))};
  const void *attrs = ATTRS(&kiln_op_dense, "units", "40");
  const char *default_text = lowered_text(&kiln_op_dense, attrs, 2, types, 512);
  kiln_schedule_config_t config = parsed("gemm tile_rows=3 tile_cols=16 columns_outer=0");
  check_compute_set_config(&config);
  assert_string_not_equal(lowered_text(&kiln_op_dense, attrs, 2, types, 512), default_text);
  check_compute_random(&kiln_op_dense, attrs, 2, types, -1.0, 1.0);
}

/* The schedule reports its space, with the default rule's configuration. */
static void test_schedule_reports_space(void **state) {
  (void)state;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 2, 6, 10, 16)),
                                ttype(KILN_DTYPE_FLOAT32, 6, SHAPE(2, 2, 3, 3, 16, 16))};
  kiln_schedule_space_t space;
  memset(&space, 0, sizeof(space));
  kiln_schedule_target_t target = {512, .out_space = &space};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_op_lower(&kiln_op_conv2d_nchwc, nchwc_attrs(), 2, types, &target,
                               &kiln_op_test_arena, "main", &func));
  assert_int_equal(space.default_config.template_id, KILN_SCHEDULE_TEMPLATE_CONV2D_NCHWC);
  assert_true(kiln_schedule_space_valid(&space, &space.default_config));
  /* an elementwise op has no template */
  memset(&space, 0, sizeof(space));
  const kiln_type_t *one[] = {ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(7))};
  KILN_ASSERT_OK(
      kiln_op_lower(&kiln_op_relu, NULL, 1, one, &target, &kiln_op_test_arena, "relu", &func));
  assert_int_equal(space.default_config.template_id, KILN_SCHEDULE_TEMPLATE_NONE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_text_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_text_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_struct_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv_space, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm_space, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv_configs_apply, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dense_config_applies, setup, teardown),
      cmocka_unit_test_setup_teardown(test_schedule_reports_space, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
