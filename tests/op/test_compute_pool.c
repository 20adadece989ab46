/*
 * Compute rules of nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d and
 * nn.global_max_pool2d (nn_pool_compute.c), lowered with the default
 * schedule and run on the loop-IR interpreter against the reference kernel
 * (kiln_compute_test.h): strides, symmetric and asymmetric padding,
 * ceil_mode with a last window that runs past the input, dilation, windows
 * with no cell inside the input, count_include_pad both ways, NHWC and
 * NCHW4c layouts, global pools on odd H and W, NaN anywhere in a window;
 * the x86 pool schedule (schedule_x86_pool.c) in the blocked layouts
 * NCHW16c and NCHW8c: odd sizes, padding, ceil_mode, strides,
 * count_include_pad, register tiles with and without a tail, windows too
 * big to unroll, global pools; max over the integer dtypes (plain, NHWC,
 * NCHW16c, global, padding and empty windows); the 3-D forms (NCDHW,
 * NDHWC, NCDHW4c, padding, ceil_mode, dilation, both divisors, uint8); the lowered text of
 * max_pool2d; the dtype errors; an allocation failure sweep over lowering.
 */
#include <math.h>

#include "kiln_compute_test.h"
#include "op/nn_common.h"

static const kiln_op_t *const window_ops[] = {&kiln_op_max_pool2d, &kiln_op_avg_pool2d};

static void test_every_operator_has_a_rule(void **state) {
  (void)state;
  assert_non_null(kiln_op_compute_get(kiln_op_max_pool2d.id));
  assert_non_null(kiln_op_compute_get(kiln_op_avg_pool2d.id));
  assert_non_null(kiln_op_compute_get(kiln_op_global_avg_pool2d.id));
  assert_non_null(kiln_op_compute_get(kiln_op_global_max_pool2d.id));
}

static void check_pool(const kiln_op_t *op, const void *attrs, int ndim, const int64_t *shape) {
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, ndim, shape);
  check_compute_random(op, attrs, 1, &type, -4.0, 4.0);
}

static void test_strides_and_padding(void **state) {
  (void)state;
  const int64_t *shape = SHAPE(2, 3, 11, 13);
  for (int i = 0; i < 2; ++i) {
    const kiln_op_t *op = window_ops[i];
    check_pool(op, ATTRS(op, "pool_size", "[3, 3]", "strides", "[2, 2]"), 4, shape);
    check_pool(op, ATTRS(op, "pool_size", "[3, 2]", "strides", "[1, 3]", "padding", "[1, 1, 1, 1]"),
               4, shape);
    check_pool(op, ATTRS(op, "pool_size", "[3, 3]", "strides", "[2, 2]", "padding", "[0, 1, 2, 1]"),
               4, shape);
    check_pool(op, ATTRS(op, "pool_size", "[1, 1]"), 4, shape);
  }
}

/* H = 10, pool 3, stride 2: floor gives 4 rows, ceil 5, the last window
 * starting at row 8 and running past row 9. */
static void test_ceil_mode(void **state) {
  (void)state;
  const int64_t *shape = SHAPE(1, 2, 10, 7);
  const char *const include[] = {"False", "True"};
  for (int i = 0; i < 2; ++i) {
    const kiln_op_t *op = window_ops[i];
    check_pool(op, ATTRS(op, "pool_size", "[3, 3]", "strides", "[2, 2]", "ceil_mode", "True"), 4,
               shape);
    check_pool(op,
               ATTRS(op, "pool_size", "[3, 2]", "strides", "[2, 3]", "padding", "[1, 0, 1, 0]",
                     "ceil_mode", "True"),
               4, shape);
  }
  for (int c = 0; c < 2; ++c) {
    check_pool(&kiln_op_avg_pool2d,
               ATTRS(&kiln_op_avg_pool2d, "pool_size", "[3, 3]", "strides", "[2, 2]", "padding",
                     "[1, 1, 1, 1]", "ceil_mode", "True", "count_include_pad", include[c]),
               4, shape);
  }
}

static void test_dilation(void **state) {
  (void)state;
  const int64_t *shape = SHAPE(1, 3, 13, 11);
  for (int i = 0; i < 2; ++i) {
    const kiln_op_t *op = window_ops[i];
    check_pool(op, ATTRS(op, "pool_size", "[2, 3]", "dilation", "[2, 3]"), 4, shape);
    check_pool(op,
               ATTRS(op, "pool_size", "[3, 3]", "strides", "[2, 1]", "dilation", "[2, 2]",
                     "padding", "[2, 1, 2, 1]", "ceil_mode", "True"),
               4, shape);
  }
  check_pool(&kiln_op_avg_pool2d,
             ATTRS(&kiln_op_avg_pool2d, "pool_size", "[3, 3]", "dilation", "[3, 2]", "padding",
                   "[2, 2, 3, 1]", "count_include_pad", "True"),
             4, shape);
}

/* Padding of at least the pool size: the corner windows hold no input cell
 * (max -inf, avg 0 without padding counted). */
static void test_windows_outside_the_input(void **state) {
  (void)state;
  const int64_t *shape = SHAPE(1, 2, 3, 4);
  const char *const include[] = {"False", "True"};
  check_pool(&kiln_op_max_pool2d,
             ATTRS(&kiln_op_max_pool2d, "pool_size", "[2, 2]", "padding", "[2, 2, 2, 2]"), 4,
             shape);
  for (int c = 0; c < 2; ++c) {
    check_pool(&kiln_op_avg_pool2d,
               ATTRS(&kiln_op_avg_pool2d, "pool_size", "[2, 2]", "padding", "[2, 3, 2, 2]",
                     "count_include_pad", include[c]),
               4, shape);
  }
}

static void test_count_include_pad(void **state) {
  (void)state;
  const int64_t *shape = SHAPE(2, 3, 7, 9);
  const char *const include[] = {"False", "True"};
  for (int c = 0; c < 2; ++c) {
    check_pool(&kiln_op_avg_pool2d,
               ATTRS(&kiln_op_avg_pool2d, "pool_size", "[3, 3]", "padding", "[1, 1, 1, 1]",
                     "count_include_pad", include[c]),
               4, shape);
    check_pool(&kiln_op_avg_pool2d,
               ATTRS(&kiln_op_avg_pool2d, "pool_size", "[4, 2]", "strides", "[3, 2]", "padding",
                     "[2, 0, 1, 1]", "count_include_pad", include[c]),
               4, shape);
  }
}

static void test_layouts(void **state) {
  (void)state;
  for (int i = 0; i < 2; ++i) {
    const kiln_op_t *op = window_ops[i];
    check_pool(op,
               ATTRS(op, "pool_size", "[3, 3]", "strides", "[2, 2]", "padding", "[1, 1, 1, 1]",
                     "layout", "\"NHWC\""),
               4, SHAPE(2, 9, 7, 3));
    check_pool(op,
               ATTRS(op, "pool_size", "[2, 3]", "padding", "[0, 1, 1, 1]", "layout", "\"NCHW4c\"",
                     "ceil_mode", "True"),
               5, SHAPE(1, 2, 7, 5, 4));
  }
}

/* The blocked schedule: channel blocks of 16 (one AVX-512 vector) and 8,
 * ow 13 (register tiles of 4 and a tail), 11 and 28 (a divisor), windows
 * that need the padding masks, ceil_mode, both count_include_pad. */
static void test_blocked(void **state) {
  (void)state;
  const char *const include[] = {"False", "True"};
  for (int i = 0; i < 2; ++i) {
    const kiln_op_t *op = window_ops[i];
    check_pool(op,
               ATTRS(op, "pool_size", "[3, 3]", "strides", "[2, 2]", "padding", "[1, 1, 1, 1]",
                     "layout", "\"NCHW16c\""),
               5, SHAPE(2, 2, 11, 25, 16));
    check_pool(op,
               ATTRS(op, "pool_size", "[3, 3]", "strides", "[2, 2]", "ceil_mode", "True", "layout",
                     "\"NCHW16c\""),
               5, SHAPE(1, 3, 13, 27, 16));
    check_pool(op,
               ATTRS(op, "pool_size", "[2, 3]", "strides", "[1, 2]", "padding", "[0, 1, 1, 2]",
                     "layout", "\"NCHW8c\""),
               5, SHAPE(1, 3, 7, 56, 8));
    check_pool(op,
               ATTRS(op, "pool_size", "[5, 5]", "strides", "[3, 3]", "padding", "[2, 2, 2, 2]",
                     "ceil_mode", "True", "layout", "\"NCHW16c\""),
               5, SHAPE(1, 1, 17, 14, 16));
  }
  for (int c = 0; c < 2; ++c) {
    check_pool(&kiln_op_avg_pool2d,
               ATTRS(&kiln_op_avg_pool2d, "pool_size", "[3, 3]", "strides", "[2, 2]", "padding",
                     "[1, 1, 1, 1]", "ceil_mode", "True", "count_include_pad", include[c], "layout",
                     "\"NCHW16c\""),
               5, SHAPE(1, 2, 10, 13, 16));
  }
  const kiln_op_t *const globals[] = {&kiln_op_global_avg_pool2d, &kiln_op_global_max_pool2d};
  for (int i = 0; i < 2; ++i) {
    check_pool(globals[i], ATTRS(globals[i], "layout", "\"NCHW16c\""), 5, SHAPE(2, 3, 7, 7, 16));
    check_pool(globals[i], ATTRS(globals[i], "layout", "\"NCHW8c\""), 5, SHAPE(1, 2, 13, 3, 8));
  }
}

static void test_global_pools(void **state) {
  (void)state;
  const kiln_op_t *const ops[] = {&kiln_op_global_avg_pool2d, &kiln_op_global_max_pool2d};
  for (int i = 0; i < 2; ++i) {
    check_pool(ops[i], ATTRS(ops[i], "layout", "\"NCHW\""), 4, SHAPE(2, 5, 7, 9));
    check_pool(ops[i], ATTRS(ops[i], "layout", "\"NHWC\""), 4, SHAPE(1, 3, 5, 7));
    check_pool(ops[i], ATTRS(ops[i], "layout", "\"NCHW4c\""), 5, SHAPE(1, 2, 3, 5, 4));
    check_pool(ops[i], ATTRS(ops[i], "layout", "\"NCHW\""), 4, SHAPE(1, 1, 1, 1));
  }
}

/* A NaN first, in the middle or last in a window makes that window NaN. */
static void test_max_pool_nan(void **state) {
  (void)state;
  float values[4 * 5];
  for (int i = 0; i < 20; ++i) {
    values[i] = (float)(i % 7) - 3.0f;
  }
  values[0] = NAN;  /* first cell of window (0, 0) */
  values[7] = NAN;  /* inside windows of row 0 and 1 */
  values[19] = NAN; /* last cell of the last window */
  kiln_tensor_t *data = tensor_of(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 4, 5), values);
  check_compute(&kiln_op_max_pool2d,
                ATTRS(&kiln_op_max_pool2d, "pool_size", "[2, 2]", "padding", "[1, 1, 0, 0]"), 1,
                &data);
  check_compute(&kiln_op_global_max_pool2d, ATTRS(&kiln_op_global_max_pool2d, "layout", "\"NCHW\""),
                1, &data);
  check_compute(&kiln_op_avg_pool2d, ATTRS(&kiln_op_avg_pool2d, "pool_size", "[2, 2]"), 1, &data);
  kiln_tensor_release(data);
}

static void test_max_pool_lowered_text(void **state) {
  (void)state;
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 4, 4));
  const char *text = lowered_text(
      &kiln_op_max_pool2d, ATTRS(&kiln_op_max_pool2d, "pool_size", "[2, 2]", "strides", "[2, 2]"),
      1, &type, 128);
  assert_string_equal(
      text,
      "@T.prim_func\n"
      "def main(p0: T.Buffer((1, 1, 4, 4), \"float32\"), T_max_pool2d: T.Buffer((1, 1, 2, 2), "
      "\"float32\")):\n"
      "    for i_j_fused_k_fused in T.parallel(2):\n"
      "        for l_outer in T.serial(1):\n"
      "            T_max_pool2d_max = T.decl_buffer((1, 1, 1, 2), \"float32\", "
      "scope=\"local\")\n"
      "            T_max_pool2d_nan = T.decl_buffer((1, 1, 1, 2), \"float32\", "
      "scope=\"local\")\n"
      "            for i in T.serial(1):\n"
      "                for j in T.serial(1):\n"
      "                    for k in T.serial(1):\n"
      "                        for l_init in T.vectorized(2):\n"
      "                            T_max_pool2d_max[i, j, k, l_init] = T.float32(\"-inf\")\n"
      "                        for rh in T.unroll(2):\n"
      "                            for rw in T.unroll(2):\n"
      "                                for l in T.vectorized(2):\n"
      "                                    T_max_pool2d_max[i, j, k, l] = "
      "T.max(T_max_pool2d_max[i, j, k, l], p0[i, j, i_j_fused_k_fused * 2 + k * 2 + rh, l * 2 "
      "+ rw])\n"
      "            for i in T.serial(1):\n"
      "                for j in T.serial(1):\n"
      "                    for k in T.serial(1):\n"
      "                        for l_init in T.vectorized(2):\n"
      "                            T_max_pool2d_nan[i, j, k, l_init] = T.float32(0.0)\n"
      "                        for rh in T.unroll(2):\n"
      "                            for rw in T.unroll(2):\n"
      "                                for l in T.vectorized(2):\n"
      "                                    T_max_pool2d_nan[i, j, k, l] = "
      "T.max(T_max_pool2d_nan[i, j, k, l], T.Select(p0[i, j, i_j_fused_k_fused * 2 + k * 2 + "
      "rh, l * 2 + rw] != p0[i, j, i_j_fused_k_fused * 2 + k * 2 + rh, l * 2 + rw], "
      "T.float32(1.0), T.float32(0.0)))\n"
      "            for l_inner in T.vectorized(2):\n"
      "                T_max_pool2d[0, 0, i_j_fused_k_fused, l_outer * 2 + l_inner] = "
      "T.Select(T_max_pool2d_nan[0, 0, 0, l_outer * 2 + l_inner] > T.float32(0.0), "
      "T.float32(\"nan\"), T_max_pool2d_max[0, 0, 0, l_outer * 2 + l_inner])\n");
}

/* Max over the integer dtypes: no NaN stage, the dtype's lowest value for
 * padding and for windows with no cell inside; plain, NHWC and the blocked
 * layout of the x86 schedule, and the global max. */
static void test_integer_max(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_max_pool2d;
  const kiln_dtype_t dtypes[] = {KILN_DTYPE_UINT8, KILN_DTYPE_INT8,   KILN_DTYPE_UINT16,
                                 KILN_DTYPE_INT16, KILN_DTYPE_UINT32, KILN_DTYPE_INT32};
  for (int i = 0; i < 6; ++i) {
    double lo = i % 2 == 1 ? -100.0 : 0.0; /* the signed dtypes */
    const kiln_type_t *nchw = ttype(dtypes[i], 4, SHAPE(2, 3, 7, 9));
    check_compute_random(op, ATTRS(op, "pool_size", "[3, 2]", "strides", "[2, 1]"), 1, &nchw, lo,
                         120.0);
    check_compute_random(op,
                         ATTRS(op, "pool_size", "[2, 2]", "strides", "[2, 3]", "padding",
                               "[2, 1, 2, 3]", "ceil_mode", "True"),
                         1, &nchw, lo, 120.0);
    const kiln_type_t *nhwc = ttype(dtypes[i], 4, SHAPE(1, 5, 6, 3));
    check_compute_random(
        op, ATTRS(op, "pool_size", "[3, 3]", "padding", "[1, 1, 1, 1]", "layout", "\"NHWC\""), 1,
        &nhwc, lo, 120.0);
    const kiln_type_t *blocked = ttype(dtypes[i], 5, SHAPE(1, 2, 6, 7, 16));
    check_compute_random(op,
                         ATTRS(op, "pool_size", "[3, 3]", "strides", "[2, 2]", "padding",
                               "[1, 1, 1, 1]", "layout", "\"NCHW16c\""),
                         1, &blocked, lo, 120.0);
    check_compute_random(&kiln_op_global_max_pool2d,
                         ATTRS(&kiln_op_global_max_pool2d, "layout", "\"NCHW\""), 1, &nchw, lo,
                         120.0);
  }
}

/* The 3-D forms on the default schedule: strides, padding, ceil_mode,
 * dilation, count_include_pad, NCDHW, NDHWC and NCDHW4c, and integer max. */
static void test_pool3d(void **state) {
  (void)state;
  const kiln_op_t *ops[2] = {&kiln_op_max_pool3d, &kiln_op_avg_pool3d};
  for (int i = 0; i < 2; ++i) {
    const kiln_op_t *op = ops[i];
    const kiln_type_t *ncdhw = ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(2, 3, 5, 6, 7));
    check_compute_random(op, ATTRS(op, "pool_size", "[2, 3, 3]", "strides", "[1, 2, 2]"), 1, &ncdhw,
                         -4.0, 4.0);
    check_compute_random(op,
                         ATTRS(op, "pool_size", "[3, 2, 3]", "strides", "[2, 2, 1]", "padding",
                               "[1, 0, 1, 1, 1, 0]", "ceil_mode", "True"),
                         1, &ncdhw, -4.0, 4.0);
    check_compute_random(op,
                         ATTRS(op, "pool_size", "[2, 2, 2]", "dilation", "[2, 1, 3]", "padding",
                               "[2, 2, 2, 2, 2, 2]"),
                         1, &ncdhw, -4.0, 4.0);
    const kiln_type_t *ndhwc = ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 4, 5, 6, 3));
    check_compute_random(
        op,
        ATTRS(op, "pool_size", "[2, 2, 2]", "padding", "[1, 1, 1, 0, 0, 0]", "layout", "\"NDHWC\""),
        1, &ndhwc, -4.0, 4.0);
    const kiln_type_t *blocked = ttype(KILN_DTYPE_FLOAT32, 6, SHAPE(1, 2, 3, 4, 5, 4));
    check_compute_random(
        op, ATTRS(op, "pool_size", "[2, 2, 2]", "strides", "[1, 2, 2]", "layout", "\"NCDHW4c\""), 1,
        &blocked, -4.0, 4.0);
  }
  const kiln_op_t *avg = &kiln_op_avg_pool3d;
  const kiln_type_t *small = ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 2, 4, 5, 3));
  check_compute_random(avg,
                       ATTRS(avg, "pool_size", "[3, 3, 2]", "strides", "[2, 2, 2]", "padding",
                             "[1, 1, 1, 1, 1, 1]", "ceil_mode", "True", "count_include_pad",
                             "True"),
                       1, &small, -4.0, 4.0);
  const kiln_op_t *max = &kiln_op_max_pool3d;
  const kiln_type_t *u8 = ttype(KILN_DTYPE_UINT8, 5, SHAPE(1, 2, 4, 5, 3));
  check_compute_random(max, ATTRS(max, "pool_size", "[2, 3, 2]", "padding", "[1, 1, 1, 1, 1, 1]"),
                       1, &u8, 0.0, 250.0);
}

static void test_dtype_error(void **state) {
  (void)state;
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  const kiln_type_t *f64 = ttype(KILN_DTYPE_FLOAT64, 4, SHAPE(1, 2, 5, 5));
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_max_pool2d,
                                   ATTRS(&kiln_op_max_pool2d, "pool_size", "[2, 2]"), 1, &f64,
                                   &target, &kiln_op_test_arena, "main", &func),
                     UNIMPLEMENTED, "nn.max_pool2d: no compute rule for dtype float64");
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_global_avg_pool2d,
                                   ATTRS(&kiln_op_global_avg_pool2d, "layout", "\"NCHW\""), 1, &f64,
                                   &target, &kiln_op_test_arena, "main", &func),
                     UNIMPLEMENTED, "nn.global_avg_pool2d: no compute rule for dtype float64");
  const kiln_type_t *u8 = ttype(KILN_DTYPE_UINT8, 4, SHAPE(1, 2, 5, 5));
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_avg_pool2d,
                                   ATTRS(&kiln_op_avg_pool2d, "pool_size", "[2, 2]"), 1, &u8,
                                   &target, &kiln_op_test_arena, "main", &func),
                     UNIMPLEMENTED, "nn.avg_pool2d: no compute rule for dtype uint8");
  const kiln_type_t *i64 = ttype(KILN_DTYPE_INT64, 4, SHAPE(1, 2, 5, 5));
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_max_pool2d,
                                   ATTRS(&kiln_op_max_pool2d, "pool_size", "[2, 2]"), 1, &i64,
                                   &target, &kiln_op_test_arena, "main", &func),
                     UNIMPLEMENTED, "nn.max_pool2d: no compute rule for dtype int64");
  assert_null(func);
}

/* The rule's own checks, reached only by a caller that skips the type
 * relation: data whose rank does not fit the layout. */
static void test_rule_rejects_mismatched_data(void **state) {
  (void)state;
  const kiln_te_tensor_t *data = NULL;
  KILN_ASSERT_OK(
      kiln_te_placeholder(&kiln_op_test_arena, "p0", 3, SHAPE(2, 5, 5), KILN_DTYPE_FLOAT32, &data));
  kiln_compute_args_t args = {&kiln_op_max_pool2d,
                              ATTRS(&kiln_op_max_pool2d, "pool_size", "[2, 2]"),
                              &kiln_op_test_arena,
                              1,
                              &data,
                              ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 2, 4, 4))};
  kiln_compute_result_t result;
  KILN_ASSERT_STATUS(kiln_op_compute(&args, &result), INVALID_ARGUMENT,
                     "nn.max_pool2d: layout NCHW does not fit data of rank 3");
  args.num_inputs = 0;
  KILN_ASSERT_STATUS(kiln_op_compute(&args, &result), UNIMPLEMENTED,
                     "nn.max_pool2d: no compute rule for dtype (no input)");
}

typedef struct lower_case_t {
  const kiln_op_t *op;
  const void *attrs;
  const kiln_type_t *type;
} lower_case_t;

static kiln_status_t lower_scenario(kiln_allocator_t allocator, void *context) {
  const lower_case_t *c = context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 1024);
  kiln_schedule_target_t target = {256};
  const kiln_tir_prim_func_t *func = NULL;
  kiln_status_t status = kiln_op_lower(c->op, c->attrs, 1, &c->type, &target, &arena, "f", &func);
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 2, 5, 5));
  for (int i = 0; i < 2; ++i) {
    lower_case_t c = {window_ops[i],
                      ATTRS(window_ops[i], "pool_size", "[2, 2]", "padding", "[1, 1, 1, 1]"), type};
    assert_true(kiln_test_sweep_allocation_failures(lower_scenario, &c) > 10);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_every_operator_has_a_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_strides_and_padding, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ceil_mode, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dilation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_windows_outside_the_input, setup, teardown),
      cmocka_unit_test_setup_teardown(test_count_include_pad, setup, teardown),
      cmocka_unit_test_setup_teardown(test_layouts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_blocked, setup, teardown),
      cmocka_unit_test_setup_teardown(test_global_pools, setup, teardown),
      cmocka_unit_test_setup_teardown(test_max_pool_nan, setup, teardown),
      cmocka_unit_test_setup_teardown(test_max_pool_lowered_text, setup, teardown),
      cmocka_unit_test_setup_teardown(test_integer_max, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pool3d, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dtype_error, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rule_rejects_mismatched_data, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
