/*
 * Compute rules of gather, gather_nd, scatter_elements and scatter_nd,
 * lowered with the default schedule and run on the loop-IR interpreter
 * against the reference kernels (kiln_compute_test.h): every axis, negative
 * indices, int32 and int64 indices, batch_dims, repeated indices with every
 * reduction, several dtypes; out-of-range indices fail the lowered
 * function's assertion as they fail the reference.
 */
#include <string.h>

#include "kiln_compute_test.h"
#include "op/gather_attrs.h"
#include "tir/interp.h"

/* Indices in [-dim, dim) of `dtype`. */
static kiln_tensor_t *indices_in(kiln_dtype_t dtype, int ndim, const int64_t *shape, int64_t dim) {
  return random_tensor(dtype, ndim, shape, (double)-dim, (double)(dim - 1));
}

/* Lowers and runs the operator on `inputs` through the interpreter; returns
 * the interpreter's status. */
static kiln_status_t run_lowered(const kiln_op_t *op, const void *attrs, int num_inputs,
                                 kiln_tensor_t *const *inputs) {
  const kiln_type_t *types[4];
  for (int i = 0; i < num_inputs; ++i) {
    KILN_ASSERT_OK(kiln_tensor_type_of(&kiln_op_test_arena, inputs[i], &types[i]));
  }
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(
      kiln_op_lower(op, attrs, num_inputs, types, &target, &kiln_op_test_arena, "main", &func));
  const kiln_type_t *out_type = NULL;
  KILN_ASSERT_OK(infer(op, attrs, num_inputs, types, &out_type));
  const kiln_tensor_type_t *tt = kiln_type_as_tensor(out_type);
  assert_non_null(tt);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), tt->dtype, tt->ndim, tt->shape, &out));
  kiln_tensor_t *args[5];
  memcpy(args, inputs, (size_t)num_inputs * sizeof(*args));
  args[num_inputs] = out;
  kiln_status_t status = kiln_tir_interp_run(kiln_allocator_system(), func, num_inputs + 1, args);
  kiln_tensor_release(out);
  return status;
}

static void release_all(int n, kiln_tensor_t **tensors) {
  for (int i = 0; i < n; ++i) {
    kiln_tensor_release(tensors[i]);
  }
}

/* ---- gather ---- */

static void test_gather_every_axis(void **state) {
  (void)state;
  const int64_t data_shape[] = {5, 7, 3};
  const char *axes[] = {"0", "1", "2", "-1", "-3"};
  const int axis[] = {0, 1, 2, 2, 0};
  for (int a = 0; a < 5; ++a) {
    int64_t index_shape[] = {3, 4, 2};
    index_shape[axis[a]] = 11; /* the axis may be longer than the data's */
    kiln_tensor_t *inputs[2] = {random_tensor(KILN_DTYPE_FLOAT32, 3, data_shape, -1.0, 1.0),
                                indices_in(a % 2 ? KILN_DTYPE_INT32 : KILN_DTYPE_INT64, 3,
                                           index_shape, data_shape[axis[a]])};
    check_compute(&kiln_op_gather, ATTRS(&kiln_op_gather, "axis", axes[a]), 2, inputs);
    release_all(2, inputs);
  }
}

static void test_gather_dtypes(void **state) {
  (void)state;
  const kiln_dtype_t dtypes[] = {KILN_DTYPE_INT8, KILN_DTYPE_UINT16, KILN_DTYPE_INT64,
                                 KILN_DTYPE_BOOL, KILN_DTYPE_FLOAT64};
  for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); ++i) {
    kiln_tensor_t *inputs[2] = {random_tensor(dtypes[i], 2, SHAPE(13, 17), 0, 100),
                                indices_in(KILN_DTYPE_INT64, 2, SHAPE(13, 5), 17)};
    check_compute(&kiln_op_gather, ATTRS(&kiln_op_gather, "axis", "1"), 2, inputs);
    release_all(2, inputs);
  }
}

static void test_gather_out_of_range_fails_the_assertion(void **state) {
  (void)state;
  int64_t bad[] = {0, 1, -5, 5, 2, 3};
  kiln_tensor_t *inputs[2] = {random_tensor(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 5), -1.0, 1.0),
                              tensor_of(KILN_DTYPE_INT64, 2, SHAPE(2, 3), bad)};
  kiln_tensor_t *reference = NULL;
  int64_t *index = kiln_tensor_data(inputs[1]);
  (void)index;
  void *attrs = ATTRS(&kiln_op_gather, "axis", "1");
  KILN_ASSERT_STATUS(run(&kiln_op_gather, attrs, 2, inputs, &reference), OUT_OF_RANGE,
                     "gather: index 5 is out of range for axis 1 of size 5");
  KILN_ASSERT_STATUS(run_lowered(&kiln_op_gather, attrs, 2, inputs), INVALID_ARGUMENT,
                     "assertion failed: gather: an index is out of range for axis 1 of size 5");
  index[3] = -6;
  KILN_ASSERT_STATUS(run_lowered(&kiln_op_gather, attrs, 2, inputs), INVALID_ARGUMENT,
                     "gather: an index is out of range for axis 1 of size 5");
  index[3] = -5;
  KILN_ASSERT_OK(run_lowered(&kiln_op_gather, attrs, 2, inputs));
  release_all(2, inputs);
}

/* ---- gather_nd ---- */

static void test_gather_nd_tuples_and_batch_dims(void **state) {
  (void)state;
  const int64_t data_shape[] = {3, 5, 7, 2};
  /* (indices shape, batch_dims): m = the last dim. */
  struct {
    int ndim;
    int64_t shape[4];
    const char *batch_dims;
  } cases[] = {
      {2, {6, 1}, "0"}, {2, {4, 2}, "0"}, {3, {2, 3, 3}, "0"}, {2, {5, 4}, "0"}, {1, {2}, "0"},
      {1, {4}, "0"},    {2, {3, 1}, "1"}, {3, {3, 4, 2}, "1"}, {2, {3, 3}, "1"},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    int batch = strcmp(cases[c].batch_dims, "0") == 0 ? 0 : 1;
    int64_t m = cases[c].shape[cases[c].ndim - 1];
    kiln_tensor_t *inputs[2] = {random_tensor(KILN_DTYPE_FLOAT32, 4, data_shape, -1.0, 1.0), NULL};
    /* Each coordinate k in [-dim, dim) of data dim batch + k: fill from the
     * smallest of those dims so every one is in range. */
    int64_t smallest = data_shape[batch];
    for (int64_t k = 0; k < m; ++k) {
      smallest = data_shape[batch + k] < smallest ? data_shape[batch + k] : smallest;
    }
    inputs[1] = indices_in(c % 2 ? KILN_DTYPE_INT32 : KILN_DTYPE_INT64, cases[c].ndim,
                           cases[c].shape, smallest);
    check_compute(&kiln_op_gather_nd, ATTRS(&kiln_op_gather_nd, "batch_dims", cases[c].batch_dims),
                  2, inputs);
    release_all(2, inputs);
  }
}

static void test_gather_nd_out_of_range_names_the_axis(void **state) {
  (void)state;
  int64_t bad[] = {1, 2, 0, 7}; /* the second tuple's axis 1 (size 7) is out of range */
  kiln_tensor_t *inputs[2] = {random_tensor(KILN_DTYPE_INT32, 2, SHAPE(3, 7), 0, 9),
                              tensor_of(KILN_DTYPE_INT64, 2, SHAPE(2, 2), bad)};
  kiln_tensor_t *reference = NULL;
  int64_t *index = kiln_tensor_data(inputs[1]);
  (void)index;
  void *attrs = ATTRS(&kiln_op_gather_nd, "batch_dims", "0");
  KILN_ASSERT_STATUS(run(&kiln_op_gather_nd, attrs, 2, inputs, &reference), OUT_OF_RANGE,
                     "for axis 1 of size 7");
  KILN_ASSERT_STATUS(run_lowered(&kiln_op_gather_nd, attrs, 2, inputs), INVALID_ARGUMENT,
                     "gather_nd: an index is out of range for axis 1 of size 7");
  index[2] = -4;
  index[3] = -7;
  KILN_ASSERT_STATUS(run_lowered(&kiln_op_gather_nd, attrs, 2, inputs), INVALID_ARGUMENT,
                     "gather_nd: an index is out of range for axis 0 of size 3");
  release_all(2, inputs);
}

/* ---- scatter_elements ---- */

static const char *const reductions[] = {"\"none\"", "\"add\"", "\"mul\""};

static void test_scatter_elements_every_reduction(void **state) {
  (void)state;
  const int64_t data_shape[] = {4, 6, 5};
  const char *axes[] = {"0", "1", "-1"};
  const int64_t dims[] = {4, 6, 5};
  for (int a = 0; a < 3; ++a) {
    for (int r = 0; r < 3; ++r) {
      /* More updates than the axis has: repeated indices are certain. */
      int64_t index_shape[] = {3, 5, 4};
      index_shape[a] = 9;
      kiln_tensor_t *inputs[3] = {
          random_tensor(KILN_DTYPE_FLOAT32, 3, data_shape, -2.0, 2.0),
          indices_in(r % 2 ? KILN_DTYPE_INT32 : KILN_DTYPE_INT64, 3, index_shape, dims[a]),
          random_tensor(KILN_DTYPE_FLOAT32, 3, index_shape, -2.0, 2.0)};
      check_compute(&kiln_op_scatter_elements,
                    ATTRS(&kiln_op_scatter_elements, "axis", axes[a], "reduction", reductions[r]),
                    3, inputs);
      release_all(3, inputs);
    }
  }
}

static void test_scatter_elements_integer_and_bool(void **state) {
  (void)state;
  const kiln_dtype_t dtypes[] = {KILN_DTYPE_INT8, KILN_DTYPE_UINT32, KILN_DTYPE_INT64,
                                 KILN_DTYPE_BOOL};
  for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); ++i) {
    for (int r = 0; r < 3; ++r) {
      kiln_tensor_t *inputs[3] = {random_tensor(dtypes[i], 2, SHAPE(3, 7), 0, 120),
                                  indices_in(KILN_DTYPE_INT64, 2, SHAPE(3, 11), 7),
                                  random_tensor(dtypes[i], 2, SHAPE(3, 11), 0, 120)};
      check_compute(&kiln_op_scatter_elements,
                    ATTRS(&kiln_op_scatter_elements, "axis", "1", "reduction", reductions[r]), 3,
                    inputs);
      release_all(3, inputs);
    }
  }
}

static void test_scatter_elements_out_of_range(void **state) {
  (void)state;
  int64_t bad[] = {0, 3};
  float updates[] = {1.0f, 2.0f};
  kiln_tensor_t *inputs[3] = {random_tensor(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 2), -1.0, 1.0),
                              tensor_of(KILN_DTYPE_INT64, 2, SHAPE(2, 1), bad),
                              tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 1), updates)};
  kiln_tensor_t *reference = NULL;
  int64_t *index = kiln_tensor_data(inputs[1]);
  (void)index;
  void *attrs = ATTRS(&kiln_op_scatter_elements, "axis", "0");
  KILN_ASSERT_STATUS(run(&kiln_op_scatter_elements, attrs, 3, inputs, &reference), OUT_OF_RANGE,
                     "index 3 is out of range for axis 0 of size 3");
  KILN_ASSERT_STATUS(run_lowered(&kiln_op_scatter_elements, attrs, 3, inputs), INVALID_ARGUMENT,
                     "scatter_elements: an index is out of range for axis 0 of size 3");
  release_all(3, inputs);
}

/* ---- scatter_nd ---- */

static void test_scatter_nd_slices_and_reductions(void **state) {
  (void)state;
  const int64_t data_shape[] = {5, 3, 4};
  struct {
    int ndim;
    int64_t shape[3];
    int64_t smallest; /* of the data dims the tuples index */
  } cases[] = {{2, {7, 1}, 5}, {2, {6, 2}, 3}, {3, {2, 4, 3}, 3}, {1, {2}, 3}};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    int q = cases[c].ndim - 1;
    int m = (int)cases[c].shape[q];
    int64_t update_shape[6];
    int update_ndim = 0;
    for (int d = 0; d < q; ++d) {
      update_shape[update_ndim++] = cases[c].shape[d];
    }
    for (int d = m; d < 3; ++d) {
      update_shape[update_ndim++] = data_shape[d];
    }
    for (int r = 0; r < 3; ++r) {
      kiln_tensor_t *inputs[3] = {
          random_tensor(KILN_DTYPE_FLOAT32, 3, data_shape, -2.0, 2.0),
          indices_in(c % 2 ? KILN_DTYPE_INT32 : KILN_DTYPE_INT64, cases[c].ndim, cases[c].shape,
                     cases[c].smallest),
          random_tensor(KILN_DTYPE_FLOAT32, update_ndim, update_shape, -2.0, 2.0)};
      check_compute(&kiln_op_scatter_nd, ATTRS(&kiln_op_scatter_nd, "reduction", reductions[r]), 3,
                    inputs);
      release_all(3, inputs);
    }
  }
  /* Integers wrap in add and mul. */
  kiln_tensor_t *inputs[3] = {random_tensor(KILN_DTYPE_INT16, 2, SHAPE(3, 5), -300, 300),
                              indices_in(KILN_DTYPE_INT64, 2, SHAPE(8, 1), 3),
                              random_tensor(KILN_DTYPE_INT16, 2, SHAPE(8, 5), -300, 300)};
  check_compute(&kiln_op_scatter_nd, ATTRS(&kiln_op_scatter_nd, "reduction", "\"mul\""), 3, inputs);
  release_all(3, inputs);
}

static void test_scatter_nd_out_of_range_and_bad_reduction(void **state) {
  (void)state;
  int64_t bad[] = {1, -4};
  float updates[] = {1.0f, 2.0f, 3.0f, 4.0f};
  kiln_tensor_t *inputs[3] = {random_tensor(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 2), -1.0, 1.0),
                              tensor_of(KILN_DTYPE_INT64, 2, SHAPE(2, 1), bad),
                              tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 2), updates)};
  kiln_tensor_t *reference = NULL;
  int64_t *index = kiln_tensor_data(inputs[1]);
  (void)index;
  void *attrs = ATTRS(&kiln_op_scatter_nd, "reduction", "\"add\"");
  KILN_ASSERT_STATUS(run(&kiln_op_scatter_nd, attrs, 3, inputs, &reference), OUT_OF_RANGE,
                     "index -4 is out of range for axis 0 of size 3");
  KILN_ASSERT_STATUS(run_lowered(&kiln_op_scatter_nd, attrs, 3, inputs), INVALID_ARGUMENT,
                     "scatter_nd: an index is out of range for axis 0 of size 3");
  /* A reduction the attribute check has not seen reaches the rule. */
  kiln_scatter_attrs_t odd = {0, "max"};
  const kiln_type_t *types[3];
  for (int i = 0; i < 3; ++i) {
    KILN_ASSERT_OK(kiln_tensor_type_of(&kiln_op_test_arena, inputs[i], &types[i]));
  }
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_scatter_nd, &odd, 3, types, &target,
                                   &kiln_op_test_arena, "main", &func),
                     INVALID_ARGUMENT,
                     "scatter_nd: reduction \"max\" is not one of none, add, mul");
  release_all(3, inputs);
}

/* ---- the family ---- */

static void test_every_operator_has_a_compute_rule(void **state) {
  (void)state;
  assert_non_null(kiln_op_compute_get(kiln_op_gather.id));
  assert_non_null(kiln_op_compute_get(kiln_op_gather_nd.id));
  assert_non_null(kiln_op_compute_get(kiln_op_scatter_elements.id));
  assert_non_null(kiln_op_compute_get(kiln_op_scatter_nd.id));
}

static void test_gather_lowers_to_a_check_then_a_vector_loop(void **state) {
  (void)state;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3)),
                                ttype(KILN_DTYPE_INT64, 2, SHAPE(2, 2))};
  const char *text =
      lowered_text(&kiln_op_gather, ATTRS(&kiln_op_gather, "axis", "1"), 2, types, 128);
  assert_string_equal(
      text, "@T.prim_func\n"
            "def main(p0: T.Buffer((2, 3), \"float32\"), p1: T.Buffer((2, 2), \"int64\"), "
            "T_gather: T.Buffer((2, 2), \"float32\")):\n"
            "    T_gather_index = T.decl_buffer((2, 2), \"int32\", scope=\"global\")\n"
            "    for i0 in T.serial(2):\n"
            "        for i1 in T.serial(2):\n"
            "            assert p1[i0, i1] >= T.int64(-3) and p1[i0, i1] < T.int64(3), \"gather: "
            "an index is out of range for axis 1 of size 3\"\n"
            "            T_gather_index[i0, i1] = T.Select(T.Cast(\"int32\", p1[i0, i1]) < 0, "
            "T.Cast(\"int32\", p1[i0, i1]) + 3, T.Cast(\"int32\", p1[i0, i1]))\n"
            "    for i_j_fused_outer in T.serial(1):\n"
            "        for i_j_fused_inner in T.vectorized(4):\n"
            "            T_gather[i_j_fused_outer * 2 + i_j_fused_inner // 2, i_j_fused_inner % 2] "
            "= p0[i_j_fused_outer * 2 + i_j_fused_inner // 2, T_gather_index[i_j_fused_outer * 2 + "
            "i_j_fused_inner // 2, i_j_fused_inner % 2]]\n");
}

/* Lowering with every allocation failing in turn: an error, never a leak. */
static kiln_status_t lower_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 1024);
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  kiln_status_t status = KILN_OK;
  if (!status) {
    const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 5)),
                                  ttype(KILN_DTYPE_INT64, 2, SHAPE(2, 1))};
    status = kiln_op_lower(&kiln_op_gather_nd, ATTRS(&kiln_op_gather_nd, "batch_dims", "0"), 2,
                           types, &target, &arena, "main", &func);
  }
  if (!status) {
    const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 5)),
                                  ttype(KILN_DTYPE_INT64, 2, SHAPE(2, 1)),
                                  ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 5))};
    status = kiln_op_lower(&kiln_op_scatter_nd, ATTRS(&kiln_op_scatter_nd, "reduction", "\"add\""),
                           3, types, &target, &arena, "main", &func);
  }
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_lowering_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(lower_scenario, NULL) > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_gather_every_axis, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gather_dtypes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gather_out_of_range_fails_the_assertion, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_gather_nd_tuples_and_batch_dims, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gather_nd_out_of_range_names_the_axis, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scatter_elements_every_reduction, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scatter_elements_integer_and_bool, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scatter_elements_out_of_range, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scatter_nd_slices_and_reductions, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scatter_nd_out_of_range_and_bad_reduction, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_every_operator_has_a_compute_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gather_lowers_to_a_check_then_a_vector_loop, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_lowering_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
