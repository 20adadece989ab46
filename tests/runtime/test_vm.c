/*
 * Tests of the VM executor (src/runtime/vm*.c, docs/vm.md) on hand-written
 * bytecode over hand-written kernels in an in-memory module: a
 * straight-line program (storage, tensors, a kernel call, a constant, a
 * copy), a loop made of if/goto whose trip count is an input (0, 1 and 5
 * trips), if/else choosing a value, a closure invoked per iteration as a
 * loop body, a recursive function, the shape instructions (shape_of,
 * reshape_tensor, storage and tensors sized by shape registers) with an
 * input whose length is known only at run time; the profile, the debug
 * dump and the disassembly; every loader error (each names what is wrong)
 * and every run-time error; and allocation-failure sweeps of create and
 * run. Expected values are computed here from the inputs.
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/npy.h"
#include "kiln/runtime.h"
#include "kiln_test.h"
#include "runtime/graph_executor.h" /* the pool's size, for the free_storage test */

/* ---- kernels ---- */

#define UNUSED_PACKED_ARGS \
  (void)type_codes;        \
  (void)ret;               \
  (void)ret_tcode;         \
  (void)resource

static int64_t elements(const DLTensor *t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; ++d) {
    n *= t->shape[d];
  }
  return n;
}

/* out = a + b, float32, same element count. */
static int add(const kiln_value_t *args, const int *type_codes, int num_args, kiln_value_t *ret,
               int *ret_tcode, void *resource) {
  UNUSED_PACKED_ARGS;
  const DLTensor *a = args[0].v_handle, *b = args[1].v_handle, *out = args[2].v_handle;
  if (num_args != 3 || elements(a) != elements(out) || elements(b) != elements(out)) {
    kiln_backend_set_last_error("add: the tensors differ in size");
    return -1;
  }
  for (int64_t i = 0; i < elements(out); ++i) {
    ((float *)out->data)[i] = ((const float *)a->data)[i] + ((const float *)b->data)[i];
  }
  return 0;
}

/* out (bool) = a < b, int64 scalars. */
static int less(const kiln_value_t *args, const int *type_codes, int num_args, kiln_value_t *ret,
                int *ret_tcode, void *resource) {
  UNUSED_PACKED_ARGS;
  (void)num_args;
  const DLTensor *a = args[0].v_handle, *b = args[1].v_handle, *out = args[2].v_handle;
  *(uint8_t *)out->data = *(const int64_t *)a->data < *(const int64_t *)b->data;
  return 0;
}

/* out = a + 1, int64 scalars. */
static int incr(const kiln_value_t *args, const int *type_codes, int num_args, kiln_value_t *ret,
                int *ret_tcode, void *resource) {
  UNUSED_PACKED_ARGS;
  (void)num_args;
  const DLTensor *a = args[0].v_handle, *out = args[1].v_handle;
  *(int64_t *)out->data = *(const int64_t *)a->data + 1;
  return 0;
}

static int fails(const kiln_value_t *args, const int *type_codes, int num_args, kiln_value_t *ret,
                 int *ret_tcode, void *resource) {
  UNUSED_PACKED_ARGS;
  (void)args;
  (void)num_args;
  kiln_backend_set_last_error("fails: the kernel broke");
  return -1;
}

/* out = 0, float32. */
static int zeros(const kiln_value_t *args, const int *type_codes, int num_args, kiln_value_t *ret,
                 int *ret_tcode, void *resource) {
  UNUSED_PACKED_ARGS;
  (void)num_args;
  const DLTensor *out = args[0].v_handle;
  memset(out->data, 0, sizeof(float) * (size_t)elements(out));
  return 0;
}

static kiln_runtime_module_t *module;

static int group_setup(void **state) {
  (void)state;
  kiln_runtime_module_entry_t entries[] = {{"add", add, 3},
                                           {"less", less, 3},
                                           {"incr", incr, 2},
                                           {"fails", fails, 1},
                                           {"zeros", zeros, 1}};
  KILN_ASSERT_OK(kiln_runtime_module_create_in_memory(kiln_allocator_system(), "kernels", 5,
                                                      entries, NULL, NULL, &module));
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  kiln_runtime_module_release(module);
  return 0;
}

/* ---- programs ---- */

#define KERNELS "\"kernels\": [\"add\", \"less\", \"incr\", \"fails\", \"zeros\"]"

/* A program over the four kernels: `decls` the constants, inputs and
 * outputs, `functions` the functions' array. */
static char *program(const char *decls, const char *functions) {
  char *text = NULL;
  if (asprintf(&text,
               "{\"format\": \"kiln-vm\", \"version\": 1, " KERNELS ", %s, \"functions\": %s}",
               decls, functions) < 0) {
    fail_msg("asprintf");
  }
  return text;
}

static kiln_runtime_params_t *weights(void) {
  int64_t shape[1] = {4};
  float data[4] = {10, 20, 30, 40};
  kiln_tensor_t *w = NULL;
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, shape,
                                         data, sizeof(data), &w));
  const char *names[] = {"w"};
  kiln_runtime_params_t *params = NULL;
  KILN_ASSERT_OK(kiln_runtime_params_create(kiln_allocator_system(), 1, names, &w, &params));
  kiln_tensor_release(w);
  return params;
}

static kiln_status_t create(const char *decls, const char *functions, kiln_graph_executor_t **out) {
  char *text = program(decls, functions);
  kiln_runtime_params_t *params = weights();
  kiln_status_t status =
      kiln_graph_executor_create(kiln_allocator_system(), text, "vm.json", module, params, out);
  kiln_runtime_params_destroy(params);
  free(text);
  return status;
}

static kiln_tensor_t *floats(int n, const float *values) {
  int64_t shape[1] = {n};
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, shape,
                                         values, sizeof(float) * (size_t)n, &t));
  return t;
}

static kiln_tensor_t *scalar(kiln_dtype_t dtype, const void *value) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), dtype, 0, NULL, value,
                                         kiln_dtype_size(dtype), &t));
  return t;
}

static void set_input(kiln_graph_executor_t *gx, int index, kiln_tensor_t *t) {
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, index, kiln_tensor_dl(t)));
  kiln_tensor_release(t);
}

static void assert_output(kiln_graph_executor_t *gx, int index, int n, const float *want) {
  const DLTensor *out = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_get_output(gx, index, &out));
  assert_int_equal(elements(out), n);
  for (int i = 0; i < n; ++i) {
    if (((const float *)out->data)[i] != want[i]) {
      fail_msg("output %d element %d is %g, expected %g", index, i, ((const float *)out->data)[i],
               want[i]);
    }
  }
}

/* x + w, then a copy of it: storage, tensors, a constant, a kernel, a copy. */
static const char straight_decls[] =
    "\"constants\": [{\"name\": \"w\", \"dtype\": \"float32\", \"shape\": [4]}], "
    "\"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [4]}], "
    "\"outputs\": [{\"name\": \"y\", \"dtype\": \"float32\", \"shape\": [4]}, "
    "{\"name\": \"z\", \"dtype\": \"float32\", \"shape\": [4]}]";
static const char straight_functions[] =
    "[{\"name\": \"main\", \"params\": 1, \"registers\": 6, \"code\": ["
    "[\"load_const\", 1, 0], [\"alloc_storage\", 2, 128],"
    "[\"alloc_tensor\", 3, 2, 0, \"float32\", [4]], [\"alloc_tensor\", 4, 2, 64, \"float32\", [4]],"
    "[\"invoke_packed\", 0, [0, 1], [3], 4], [\"copy\", 4, 3], [\"ret\", [3, 4]]]}]";

static void test_straight_line(void **state) {
  (void)state;
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create(straight_decls, straight_functions, &gx));
  assert_int_equal(kiln_graph_executor_kind(gx), KILN_EXECUTOR_VM);
  assert_int_equal(kiln_graph_executor_num_inputs(gx), 1);
  assert_int_equal(kiln_graph_executor_num_outputs(gx), 2);
  kiln_graph_executor_tensor_info_t info;
  KILN_ASSERT_OK(kiln_graph_executor_output_info(gx, 1, &info));
  assert_string_equal(info.name, "z");
  const DLTensor *view = NULL;
  KILN_ASSERT_STATUS(kiln_graph_executor_get_output(gx, 0, &view), FAILED_PRECONDITION,
                     "has not run yet");
  KILN_ASSERT_STATUS(kiln_graph_executor_run(gx), FAILED_PRECONDITION,
                     "input 'x' (0) was never set");
  for (int run = 0; run < 3; ++run) {
    float x[4] = {1, 2, 3, (float)run};
    set_input(gx, 0, floats(4, x));
    KILN_ASSERT_OK(kiln_graph_executor_run(gx));
    float want[4] = {11, 22, 33, 40 + (float)run};
    assert_output(gx, 0, 4, want);
    assert_output(gx, 1, 4, want);
  }
  kiln_tensor_t *copy = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_copy_output(gx, 1, kiln_allocator_system(), &copy));
  assert_float_equal(((float *)kiln_tensor_data(copy))[2], 33, 0);
  kiln_tensor_release(copy);
  int index = -1;
  KILN_ASSERT_OK(kiln_graph_executor_input_index(gx, "x", &index));
  assert_int_equal(index, 0);
  KILN_ASSERT_STATUS(kiln_graph_executor_input_index(gx, "q", &index), NOT_FOUND,
                     "no input is named 'q'; the inputs are 'x'");
  kiln_graph_executor_destroy(gx);
}

static void test_zero_copy_and_input_errors(void **state) {
  (void)state;
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create(straight_decls, straight_functions, &gx));
  float x[4] = {4, 3, 2, 1};
  kiln_tensor_t *t = floats(4, x);
  KILN_ASSERT_OK(kiln_graph_executor_set_input_zero_copy(gx, 0, kiln_tensor_dl(t)));
  KILN_ASSERT_OK(kiln_graph_executor_run(gx));
  float want[4] = {14, 23, 32, 41};
  assert_output(gx, 0, 4, want);
  kiln_tensor_release(t);
  float five[5] = {0};
  t = floats(5, five);
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(t)), INVALID_ARGUMENT,
                     "input 'x' has shape (5,), expected (4,)");
  kiln_tensor_release(t);
  int64_t one = 1;
  t = scalar(KILN_DTYPE_INT64, &one);
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(t)), INVALID_ARGUMENT,
                     "input 'x' has dtype int64, expected float32");
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input(gx, 3, kiln_tensor_dl(t)), OUT_OF_RANGE,
                     "input 3 does not exist");
  kiln_tensor_release(t);
  kiln_graph_executor_destroy(gx);
}

/* acc = 0-initialised x-sized tensor; while i < n: acc = acc + x, i = i + 1. */
static const char loop_decls[] =
    "\"constants\": [], "
    "\"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [4]}, "
    "{\"name\": \"n\", \"dtype\": \"int64\", \"shape\": []}], "
    "\"outputs\": [{\"name\": \"acc\", \"dtype\": \"float32\", \"shape\": [4]}]";
static void run_loop(kiln_graph_executor_t *gx, int64_t n) {
  float x[4] = {1, 2, 3, 4};
  set_input(gx, 0, floats(4, x));
  set_input(gx, 1, scalar(KILN_DTYPE_INT64, &n));
  KILN_ASSERT_OK(kiln_graph_executor_run(gx));
  float want[4];
  for (int i = 0; i < 4; ++i) {
    want[i] = x[i] * (float)n;
  }
  assert_output(gx, 0, 4, want);
}

/* acc = 0; i = 0; while i < n: acc = acc + x; i = i + 1 (a kernel each). */
static const char counted_functions[] =
    "[{\"name\": \"main\", \"params\": 2, \"registers\": 11, \"code\": ["
    "[\"alloc_storage\", 2, 16], [\"alloc_tensor\", 3, 2, 0, \"float32\", [4]],"
    "[\"invoke_packed\", 4, [], [3]], [\"load_consti\", 4, 0],"
    /* 4: head */ "[\"alloc_storage\", 5, 1], [\"alloc_tensor\", 6, 5, 0, \"bool\", []],"
    "[\"invoke_packed\", 1, [4, 1], [6]], [\"if\", 6, 1, 10],"
    /* 8: body */ "[\"alloc_storage\", 7, 16], [\"alloc_tensor\", 8, 7, 0, \"float32\", [4]],"
    "[\"invoke_packed\", 0, [3, 0], [8]], [\"move\", 3, 8],"
    "[\"alloc_storage\", 9, 8], [\"alloc_tensor\", 10, 9, 0, \"int64\", []],"
    "[\"invoke_packed\", 2, [4], [10]], [\"move\", 4, 10], [\"goto\", -12],"
    /* 17: exit */ "[\"ret\", [3]]]}]";

static void test_loop_with_trip_count_input(void **state) {
  (void)state;
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create(loop_decls, counted_functions, &gx));
  int64_t trips[] = {0, 1, 5, 2, 0};
  for (size_t t = 0; t < sizeof(trips) / sizeof(trips[0]); ++t) {
    run_loop(gx, trips[t]);
  }
  kiln_graph_executor_destroy(gx);
}

/* The counted loop again, each trip freeing the storage of the previous
 * trip's acc, counter and condition (free_storage), so the pool holds a
 * few blocks whatever the trip count. */
static const char freeing_functions[] =
    "[{\"name\": \"main\", \"params\": 2, \"registers\": 13, \"code\": ["
    "[\"alloc_storage\", 2, 16], [\"alloc_tensor\", 3, 2, 0, \"float32\", [4]],"
    "[\"invoke_packed\", 4, [], [3]], [\"load_consti\", 4, 0], [\"alloc_storage\", 12, 8],"
    /* 5: head */ "[\"alloc_storage\", 5, 1], [\"alloc_tensor\", 6, 5, 0, \"bool\", []],"
    "[\"invoke_packed\", 1, [4, 1], [6]], [\"if\", 6, 1, 15],"
    /* 9: body */ "[\"free_storage\", 5],"
    "[\"alloc_storage\", 7, 16], [\"alloc_tensor\", 8, 7, 0, \"float32\", [4]],"
    "[\"invoke_packed\", 0, [3, 0], [8]], [\"free_storage\", 2], [\"move\", 2, 7],"
    "[\"move\", 3, 8],"
    "[\"alloc_storage\", 9, 8], [\"alloc_tensor\", 10, 9, 0, \"int64\", []],"
    "[\"invoke_packed\", 2, [4], [10]], [\"free_storage\", 12], [\"move\", 12, 9],"
    "[\"move\", 4, 10], [\"goto\", -17],"
    /* 23: exit */ "[\"ret\", [3]]]}]";

static void test_free_storage_bounds_a_loop(void **state) {
  (void)state;
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create(loop_decls, freeing_functions, &gx));
  int64_t trips[] = {0, 3, 200, 1000};
  for (size_t t = 0; t < sizeof(trips) / sizeof(trips[0]); ++t) {
    run_loop(gx, trips[t]);
    if (gx->vm->num_blocks > 8) {
      fail_msg("%lld trips: the pool holds %d blocks", (long long)trips[t], gx->vm->num_blocks);
    }
  }
  kiln_graph_executor_destroy(gx);
  /* without the frees, the back edge's collection gives back what no
   * register reaches: the pool still stays bounded */
  KILN_ASSERT_OK(create(loop_decls, counted_functions, &gx));
  run_loop(gx, 200);
  int blocks = gx->vm->num_blocks;
  run_loop(gx, 1000);
  assert_true(blocks <= 32);
  assert_int_equal(gx->vm->num_blocks, blocks);
  kiln_graph_executor_destroy(gx);
}

/* if c: out = a + a else out = b + b; each branch jumps to a shared ret. */
static const char if_decls[] =
    "\"constants\": [], "
    "\"inputs\": [{\"name\": \"c\", \"dtype\": \"bool\", \"shape\": []}, "
    "{\"name\": \"a\", \"dtype\": \"float32\", \"shape\": [2]}, "
    "{\"name\": \"b\", \"dtype\": \"float32\", \"shape\": [2]}], "
    "\"outputs\": [{\"name\": \"out\", \"dtype\": \"float32\", \"shape\": [2]}]";
static const char if_functions[] =
    "[{\"name\": \"main\", \"params\": 3, \"registers\": 5, \"code\": ["
    "[\"alloc_storage\", 3, 8], [\"alloc_tensor\", 4, 3, 0, \"float32\", [2]],"
    "[\"if\", 0, 1, 3], [\"invoke_packed\", 0, [1, 1], [4]], [\"goto\", 2],"
    "[\"invoke_packed\", 0, [2, 2], [4]], [\"ret\", [4]]]}]";

static void test_if_else(void **state) {
  (void)state;
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create(if_decls, if_functions, &gx));
  for (uint8_t c = 0; c < 2; ++c) {
    float a[2] = {1, 2}, b[2] = {5, 7};
    set_input(gx, 0, scalar(KILN_DTYPE_BOOL, &c));
    set_input(gx, 1, floats(2, a));
    set_input(gx, 2, floats(2, b));
    KILN_ASSERT_OK(kiln_graph_executor_run(gx));
    float want[2] = {c ? 2.0f : 10.0f, c ? 4.0f : 14.0f};
    assert_output(gx, 0, 2, want);
  }
  kiln_graph_executor_destroy(gx);
}

/* The same loop with its body a closure (body, capturing x) invoked per
 * trip; then times(x, acc, n), a recursive function adding x n more
 * times, with pred(n) = n - 1 found by counting up: 2 n x in all. */
static const char closure_functions[] =
    "[{\"name\": \"main\", \"params\": 2, \"registers\": 10, \"code\": ["
    "[\"alloc_storage\", 2, 16], [\"alloc_tensor\", 3, 2, 0, \"float32\", [4]],"
    "[\"invoke_packed\", 4, [], [3]], [\"load_consti\", 4, 0], [\"alloc_closure\", 5, 1, [0]],"
    /* 5: head */ "[\"alloc_storage\", 6, 1], [\"alloc_tensor\", 7, 6, 0, \"bool\", []],"
    "[\"invoke_packed\", 1, [4, 1], [7]], [\"if\", 7, 1, 3],"
    /* 9: body */ "[\"invoke_closure\", 5, [3, 4], [3, 4]], [\"goto\", -5],"
    /* 11 */ "[\"invoke\", 2, [0, 3, 1], [8]], [\"ret\", [8]]]},"
    /* body(x, acc, i) -> (acc + x, i + 1) */
    "{\"name\": \"body\", \"params\": 3, \"registers\": 7, \"code\": ["
    "[\"alloc_storage\", 3, 128], [\"alloc_tensor\", 4, 3, 0, \"float32\", [4]],"
    "[\"alloc_tensor\", 5, 3, 64, \"int64\", []],"
    "[\"invoke_packed\", 0, [1, 0], [4]], [\"invoke_packed\", 2, [2], [5]], [\"ret\", [4, 5]]]},"
    /* times(x, acc, n) = 0 < n ? times(x, acc + x, pred(n)) : acc */
    "{\"name\": \"times\", \"params\": 3, \"registers\": 12, \"code\": ["
    "[\"load_consti\", 3, 0], [\"alloc_storage\", 4, 1], [\"alloc_tensor\", 5, 4, 0, \"bool\", []],"
    "[\"invoke_packed\", 1, [3, 2], [5]], [\"if\", 5, 2, 1], [\"ret\", [1]],"
    "[\"alloc_storage\", 6, 16], [\"alloc_tensor\", 7, 6, 0, \"float32\", [4]],"
    "[\"invoke_packed\", 0, [1, 0], [7]], [\"invoke\", 3, [2], [8]],"
    "[\"invoke\", 2, [0, 7, 8], [9]], [\"ret\", [9]]]},"
    /* pred(n): i = 0; while i + 1 < n: i = i + 1 */
    "{\"name\": \"pred\", \"params\": 1, \"registers\": 8, \"code\": ["
    "[\"load_consti\", 1, 0],"
    /* 1 */ "[\"alloc_storage\", 2, 8], [\"alloc_tensor\", 3, 2, 0, \"int64\", []],"
    "[\"invoke_packed\", 2, [1], [3]], [\"alloc_storage\", 4, 1],"
    "[\"alloc_tensor\", 5, 4, 0, \"bool\", []], [\"invoke_packed\", 1, [3, 0], [5]],"
    "[\"if\", 5, 2, 1], [\"ret\", [1]], [\"move\", 1, 3], [\"goto\", -9]]}]";

static void test_closure_and_recursion(void **state) {
  (void)state;
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create(loop_decls, closure_functions, &gx));
  int64_t trips[] = {0, 3, 1};
  for (size_t t = 0; t < sizeof(trips) / sizeof(trips[0]); ++t) {
    float x[4] = {1, 2, 3, 4};
    int64_t n = trips[t];
    set_input(gx, 0, floats(4, x));
    set_input(gx, 1, scalar(KILN_DTYPE_INT64, &n));
    KILN_ASSERT_OK(kiln_graph_executor_run(gx));
    float want[4]; /* the closure loop's n x, plus the recursion's n x */
    for (int i = 0; i < 4; ++i) {
      want[i] = 2 * x[i] * (float)n;
    }
    assert_output(gx, 0, 4, want);
  }
  char *text = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_disassemble(gx, kiln_allocator_system(), &text));
  assert_non_null(strstr(text, "function @body (3 params, 7 registers)"));
  assert_non_null(strstr(text, "invoke_closure      r5 [r3, r4] [r3, r4]\n"));
  assert_non_null(strstr(text, " r7 +1(->9) +3(->11)\n"));
  assert_non_null(strstr(text, " @times [r0, r3, r1] [r8]\n"));
  kiln_allocator_free(kiln_allocator_system(), text);
  kiln_graph_executor_destroy(gx);
}

/* x of any length n: y = x + x in storage sized from x's shape; a view of y
 * reshaped to (1, n) by shape_of of a (1, n) input; the shape of x. */
static const char shape_decls[] =
    "\"constants\": [], "
    "\"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [-1]}, "
    "{\"name\": \"like\", \"dtype\": \"uint8\", \"shape\": [1, -1]}], "
    "\"outputs\": [{\"name\": \"y\", \"dtype\": \"float32\", \"shape\": [1, -1]}, "
    "{\"name\": \"s\", \"dtype\": \"int64\", \"shape\": [1]}]";
static const char shape_functions[] =
    "[{\"name\": \"main\", \"params\": 2, \"registers\": 8, \"code\": ["
    "[\"shape_of\", 2, 0], [\"alloc_storage_shape\", 3, 2, \"float32\"],"
    "[\"alloc_tensor_reg\", 4, 3, 0, \"float32\", 2], [\"invoke_packed\", 0, [0, 0], [4]],"
    "[\"shape_of\", 5, 1], [\"reshape_tensor\", 6, 4, 5], [\"ret\", [6, 2]]]}]";

static void test_shape_instructions(void **state) {
  (void)state;
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create(shape_decls, shape_functions, &gx));
  int lengths[] = {3, 17, 1, 64};
  for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); ++l) {
    int n = lengths[l];
    float x[64], want[64];
    for (int i = 0; i < n; ++i) {
      x[i] = (float)i - 2.5f;
      want[i] = 2 * x[i];
    }
    set_input(gx, 0, floats(n, x));
    int64_t like_shape[2] = {1, n};
    kiln_tensor_t *like = NULL;
    uint8_t bytes[64] = {0};
    KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_UINT8, 2, like_shape,
                                           bytes, (size_t)n, &like));
    set_input(gx, 1, like);
    KILN_ASSERT_OK(kiln_graph_executor_run(gx));
    assert_output(gx, 0, n, want);
    const DLTensor *y = NULL, *s = NULL;
    KILN_ASSERT_OK(kiln_graph_executor_get_output(gx, 0, &y));
    assert_int_equal(y->ndim, 2);
    assert_int_equal(y->shape[1], n);
    KILN_ASSERT_OK(kiln_graph_executor_get_output(gx, 1, &s));
    assert_int_equal(((const int64_t *)s->data)[0], n);
    kiln_graph_executor_tensor_info_t info;
    KILN_ASSERT_OK(kiln_graph_executor_output_info(gx, 0, &info));
    assert_int_equal(info.shape[1], n); /* after a run, the run's dims */
  }
  kiln_graph_executor_destroy(gx);
}

/* nonzero of x of any length (runtime/extern_kernel.c): call_extern sizes
 * its output from the values, none when every value is zero. */
static const char extern_decls[] =
    "\"constants\": [], "
    "\"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [-1]}], "
    "\"outputs\": [{\"name\": \"y\", \"dtype\": \"int64\", \"shape\": [1, -1]}]";
static const char extern_functions[] =
    "[{\"name\": \"main\", \"params\": 1, \"registers\": 2, \"code\": ["
    "[\"call_extern\", \"nonzero\", [0], [1]], [\"ret\", [1]]]}]";

static void test_call_extern(void **state) {
  (void)state;
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create(extern_decls, extern_functions, &gx));
  const float x[2][5] = {{0, 1.5f, 0, -2, 0}, {0, 0, 0, 0, 0}};
  const int64_t want[2] = {1, 3};
  for (int c = 0; c < 2; ++c) {
    set_input(gx, 0, floats(5, x[c]));
    KILN_ASSERT_OK(kiln_graph_executor_run(gx));
    const DLTensor *y = NULL;
    KILN_ASSERT_OK(kiln_graph_executor_get_output(gx, 0, &y));
    assert_int_equal(y->ndim, 2);
    assert_int_equal(y->shape[1], c == 0 ? 2 : 0);
    if (c == 0) {
      assert_memory_equal(y->data, want, sizeof(want));
    }
  }
  char *text = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_disassemble(gx, kiln_allocator_system(), &text));
  assert_non_null(strstr(text, "call_extern         nonzero [r0] [r1]\n"));
  kiln_allocator_free(kiln_allocator_system(), text);
  kiln_graph_executor_destroy(gx);
}

/* ---- profile and debug ---- */

static void test_profile(void **state) {
  (void)state;
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create(straight_decls, straight_functions, &gx));
  float x[4] = {1, 2, 3, 4};
  set_input(gx, 0, floats(4, x));
  kiln_graph_profile_t *profile = NULL;
  KILN_ASSERT_STATUS(kiln_graph_executor_profile(gx, 0, &profile), INVALID_ARGUMENT,
                     "at least one run");
  KILN_ASSERT_OK(kiln_graph_executor_profile(gx, 5, &profile));
  assert_int_equal(profile->runs, 5);
  assert_int_equal(profile->num_nodes, 2); /* the kernel call and the copy */
  assert_int_equal(profile->nodes[0].node, 4);
  assert_string_equal(profile->nodes[0].name, "add");
  assert_int_equal(profile->nodes[0].flops, 4);
  assert_string_equal(profile->nodes[1].func_name, "__copy");
  assert_true(profile->nodes[0].milliseconds >= 0 && profile->run_milliseconds >= 0);
  double shares = profile->nodes[0].share + profile->nodes[1].share;
  assert_true(profile->total_milliseconds == 0 || (shares > 0.999 && shares < 1.001));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_graph_profile_format(profile, kiln_allocator_system(), &text));
  assert_non_null(strstr(text, "2 kernel nodes, median of 5 runs"));
  assert_non_null(strstr(text, "    4  add"));
  kiln_allocator_free(kiln_allocator_system(), text);
  kiln_graph_profile_destroy(profile);
  float want[4] = {11, 22, 33, 44};
  assert_output(gx, 0, 4, want); /* the profile's runs are runs */
  kiln_graph_executor_destroy(gx);
}

static void assert_npy(const char *dir, const char *name, const float *want, int n) {
  char *path = kiln_test_path_join(dir, name);
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_npy_read_file(kiln_allocator_system(), path, &t));
  assert_int_equal(kiln_tensor_element_count(t), n);
  for (int i = 0; i < n; ++i) {
    assert_float_equal(((float *)kiln_tensor_data(t))[i], want[i], 0);
  }
  kiln_tensor_release(t);
  free(path);
}

static void test_debug_dump(void **state) {
  (void)state;
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create(loop_decls, counted_functions, &gx));
  float x[4] = {1, 2, 3, 4};
  int64_t n = 2;
  set_input(gx, 0, floats(4, x));
  set_input(gx, 1, scalar(KILN_DTYPE_INT64, &n));
  char *dir = kiln_test_make_temp_dir();
  char *folder = kiln_test_path_join(dir, "dump");
  KILN_ASSERT_OK(kiln_graph_executor_run_debug(gx, folder));
  assert_npy(folder, "input0_x.npy", x, 4);
  float twice[4] = {2, 4, 6, 8};
  assert_npy(folder, "10_add.npy", twice, 4); /* the last trip's value */
  char *missing = kiln_test_path_join(folder, "no/such/dir");
  KILN_ASSERT_STATUS(kiln_graph_executor_run_debug(gx, missing), IO_ERROR,
                     "cannot make the debug folder");
  free(missing);
  free(folder);
  kiln_test_remove_dir(dir);
  free(dir);
  kiln_graph_executor_destroy(gx);
}

/* ---- loader errors ---- */

typedef struct bad_case_t {
  const char *decls;     /* NULL: straight_decls */
  const char *functions; /* NULL: straight_functions */
  kiln_status_code_t code;
  const char *message;
} bad_case_t;

#define MAIN(regs, code) \
  "[{\"name\": \"main\", \"params\": 1, \"registers\": " regs ", \"code\": [" code "]}]"
#define TAIL  "[\"ret\", [3, 3]]"
#define ALLOC "[\"alloc_storage\", 2, 64], [\"alloc_tensor\", 3, 2, 0, \"float32\", [4]], "

static const bad_case_t bad_cases[] = {
    {NULL, MAIN("6", "[\"frobnicate\", 1], " TAIL), KILN_STATUS_CODE_INVALID_ARGUMENT,
     "vm.json function main instruction 0: unknown opcode 'frobnicate'"},
    {NULL, MAIN("6", "[3], " TAIL), KILN_STATUS_CODE_INVALID_ARGUMENT,
     "instruction 0: expected an opcode name first, got integer"},
    {NULL, MAIN("6", "\"ret\""), KILN_STATUS_CODE_INVALID_ARGUMENT,
     "instruction 0: expected [opcode, operands...], got string"},
    {NULL, MAIN("6", "[\"move\", 1], " TAIL), KILN_STATUS_CODE_INVALID_ARGUMENT,
     "instruction 0 (move): 1 operands, expected 2"},
    {NULL, MAIN("6", ALLOC "[\"invoke_packed\", 0, [0, 0], [3], 1, 2], " TAIL),
     KILN_STATUS_CODE_INVALID_ARGUMENT,
     "(invoke_packed): 5 operands, expected 4 (the last optional)"},
    {NULL, MAIN("6", "[\"move\", 1, 6], " TAIL), KILN_STATUS_CODE_OUT_OF_RANGE,
     "instruction 0 (move): a register 6 is outside the function's 6 registers"},
    {NULL, MAIN("6", "[\"move\", -1, 0], " TAIL), KILN_STATUS_CODE_OUT_OF_RANGE,
     "a register -1 is outside"},
    {NULL, MAIN("6", "[\"move\", 1, \"r0\"], " TAIL), KILN_STATUS_CODE_INVALID_ARGUMENT,
     "(move): operand 1: expected an integer, got string"},
    {NULL, MAIN("6", "[\"goto\", 5], " TAIL), KILN_STATUS_CODE_OUT_OF_RANGE,
     "instruction 0 (goto): jump offset 5 goes to instruction 5, outside the function's 2"},
    {NULL, MAIN("6", "[\"if\", 0, 1, -1], " TAIL), KILN_STATUS_CODE_OUT_OF_RANGE,
     "jump offset -1 goes to instruction -1"},
    {NULL, MAIN("6", ALLOC "[\"invoke_packed\", 5, [0, 0], [3]], " TAIL),
     KILN_STATUS_CODE_OUT_OF_RANGE,
     "instruction 2 (invoke_packed): kernel 5 does not exist (the program has 5)"},
    {NULL, MAIN("6", ALLOC "[\"invoke_packed\", 0, [0], [3]], " TAIL),
     KILN_STATUS_CODE_INVALID_ARGUMENT,
     "(invoke_packed): kernel add takes 3 arguments, the call passes 2 (1 inputs, 1 outputs)"},
    {NULL, MAIN("6", ALLOC "[\"invoke_packed\", 0, [0, 0], 3], " TAIL),
     KILN_STATUS_CODE_INVALID_ARGUMENT, "operand 2: expected an array of registers, got integer"},
    {NULL, MAIN("6", "[\"load_const\", 1, 1], " TAIL), KILN_STATUS_CODE_OUT_OF_RANGE,
     "(load_const): constant 1 does not exist (the program has 1)"},
    {NULL, MAIN("6", "[\"invoke\", 1, [0], [1]], " TAIL), KILN_STATUS_CODE_OUT_OF_RANGE,
     "(invoke): function 1 does not exist"},
    {NULL, MAIN("6", "[\"invoke\", 0, [0, 0], [1]], " TAIL), KILN_STATUS_CODE_INVALID_ARGUMENT,
     "(invoke): function main takes 1 arguments, the call passes 2"},
    {NULL, MAIN("6", "[\"alloc_closure\", 1, 0, [0, 0]], " TAIL), KILN_STATUS_CODE_INVALID_ARGUMENT,
     "(alloc_closure): function main takes 1 arguments, the closure captures 2"},
    {NULL,
     MAIN("6", "[\"alloc_storage\", 2, 64], [\"alloc_tensor\", 3, 2, 0, \"float33\", [4]], " TAIL),
     KILN_STATUS_CODE_NOT_FOUND,
     "instruction 1 (alloc_tensor): operand 3: unknown dtype \"float33\""},
    {NULL,
     MAIN("6",
          "[\"alloc_storage\", 2, 64], [\"alloc_tensor\", 3, 2, 0, \"float32\", [4, -2]], " TAIL),
     KILN_STATUS_CODE_INVALID_ARGUMENT, "operand 4: shape: dim 1 is not an integer of at least 0"},
    {NULL,
     MAIN("6", "[\"alloc_storage\", 2, 64], [\"alloc_tensor\", 3, 2, 8, \"float32\", [4]], " TAIL),
     KILN_STATUS_CODE_OUT_OF_RANGE, "offset 8, expected a multiple of 64"},
    {NULL,
     MAIN("6", "[\"alloc_storage\", 2, 64], [\"alloc_tensor\", 3, 2, 0, \"float32\", "
               "[4294967296, 4294967296]], " TAIL),
     KILN_STATUS_CODE_OUT_OF_RANGE, "instruction 1 (alloc_tensor): element count of shape"},
    {NULL, MAIN("6", "[\"alloc_storage\", 2, -64], " TAIL), KILN_STATUS_CODE_OUT_OF_RANGE,
     "(alloc_storage): -64 bytes"},
    {NULL, MAIN("6", "[\"shape_func\", 1, \"dyn.nope\", [0, 0]], " TAIL),
     KILN_STATUS_CODE_INVALID_ARGUMENT,
     "instruction 0 (shape_func): operand 1: expected the name of a shape function the runtime "
     "has (such as \"dyn.reshape\"), got dyn.nope"},
    {NULL, MAIN("6", "[\"shape_func\", 1, 3, [0, 0]], " TAIL), KILN_STATUS_CODE_INVALID_ARGUMENT,
     "(shape_func): operand 1: expected the name of a shape function the runtime has (such as "
     "\"dyn.reshape\"), got integer"},
    {NULL, MAIN("6", "[\"shape_func\", 1, \"dyn.squeeze\", [0]], " TAIL),
     KILN_STATUS_CODE_INVALID_ARGUMENT,
     "instruction 0 (shape_func): shape function dyn.squeeze takes 2 inputs, the call passes 1"},
    {NULL, MAIN("6", "[\"call_extern\", \"argwhere\", [0], [1]], " TAIL),
     KILN_STATUS_CODE_INVALID_ARGUMENT,
     "instruction 0 (call_extern): operand 0: expected the name of an extern kernel the runtime "
     "has (such as \"nonzero\"), got argwhere"},
    {NULL, MAIN("6", "[\"call_extern\", \"unique\", [0], [1, 2, 3, 4], [1, 0]], " TAIL),
     KILN_STATUS_CODE_INVALID_ARGUMENT,
     "instruction 0 (call_extern): extern kernel unique takes 1 to 1 inputs, 4 outputs and 3 "
     "attributes, the call passes 1, 4 and 2"},
    {NULL, MAIN("6", "[\"call_extern\", \"nonzero\", [0], [1, 2]], " TAIL),
     KILN_STATUS_CODE_INVALID_ARGUMENT,
     "extern kernel nonzero takes 1 to 1 inputs, 1 outputs and 0 attributes, the call passes 1, "
     "2 and 0"},
    {NULL, MAIN("6", "[\"move\", 1, 0]"), KILN_STATUS_CODE_INVALID_ARGUMENT,
     "function main ends with move; the last instruction must be ret or goto"},
    {NULL, MAIN("6", "[\"ret\", [0]]"), KILN_STATUS_CODE_INVALID_ARGUMENT,
     "(ret): main returns 1 values, the program declares 2 outputs"},
    {NULL, MAIN("0", TAIL), KILN_STATUS_CODE_OUT_OF_RANGE, "1 params and 0 registers"},
    {NULL, MAIN("6", ""), KILN_STATUS_CODE_INVALID_ARGUMENT, "function 0 main has 0 instructions"},
    {NULL, "[{\"name\": \"f\", \"params\": 1, \"registers\": 6, \"code\": [" TAIL "]}]",
     KILN_STATUS_CODE_INVALID_ARGUMENT, "no function is named 'main'"},
    {NULL, "[{\"name\": \"main\", \"params\": 2, \"registers\": 6, \"code\": [" TAIL "]}]",
     KILN_STATUS_CODE_INVALID_ARGUMENT, "main takes 2 params, the program declares 1 inputs"},
    {NULL,
     "[{\"name\": \"main\", \"params\": 1, \"registers\": 6, \"code\": [" TAIL "]},"
     "{\"name\": \"main\", \"params\": 1, \"registers\": 6, \"code\": [" TAIL "]}]",
     KILN_STATUS_CODE_INVALID_ARGUMENT, "functions 0 and 1 are both named 'main'"},
    {NULL, "[]", KILN_STATUS_CODE_INVALID_ARGUMENT, "0 functions; a program needs main"},
    {NULL, "[3]", KILN_STATUS_CODE_INVALID_ARGUMENT, "function 0: expected an object, got integer"},
    {NULL, "[{\"name\": \"main\", \"params\": 1, \"code\": []}]", KILN_STATUS_CODE_NOT_FOUND,
     "registers"},
    {"\"constants\": [{\"name\": \"v\", \"dtype\": \"float32\", \"shape\": [4]}], \"inputs\": [], "
     "\"outputs\": []",
     "[{\"name\": \"main\", \"params\": 0, \"registers\": 1, \"code\": [[\"ret\", []]]}]",
     KILN_STATUS_CODE_NOT_FOUND, "vm.json: constant 0 'v' is not in the params"},
    {"\"constants\": [{\"name\": \"w\", \"dtype\": \"float32\", \"shape\": [5]}], \"inputs\": [], "
     "\"outputs\": []",
     "[{\"name\": \"main\", \"params\": 0, \"registers\": 1, \"code\": [[\"ret\", []]]}]",
     KILN_STATUS_CODE_INVALID_ARGUMENT,
     "constant 0 'w' is float32 (4,) in the params, the program expects float32 (5,)"},
    {"\"constants\": [], \"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [-2]}], "
     "\"outputs\": []",
     "[{\"name\": \"main\", \"params\": 1, \"registers\": 1, \"code\": [[\"ret\", []]]}]",
     KILN_STATUS_CODE_INVALID_ARGUMENT,
     "vm.json: inputs 0: shape: dim 0 is not an integer of at least -1"},
    {"\"constants\": [], \"inputs\": [3], \"outputs\": []", "[]", KILN_STATUS_CODE_INVALID_ARGUMENT,
     "vm.json: inputs 0: expected an object, got integer"},
    {"\"constants\": [], \"outputs\": []", "[]", KILN_STATUS_CODE_NOT_FOUND, "inputs"},
};

static void test_bad_programs(void **state) {
  (void)state;
  for (size_t c = 0; c < sizeof(bad_cases) / sizeof(bad_cases[0]); ++c) {
    const bad_case_t *b = &bad_cases[c];
    kiln_graph_executor_t *gx = NULL;
    kiln_status_t status = create(b->decls ? b->decls : straight_decls,
                                  b->functions ? b->functions : straight_functions, &gx);
    if (kiln_status_code(status) != b->code || !strstr(kiln_status_message(status), b->message)) {
      fail_msg("case %zu: got %d \"%s\", expected %d \"%s\"", c, (int)kiln_status_code(status),
               kiln_status_message(status), (int)b->code, b->message);
    }
    assert_null(gx);
    kiln_status_free(status);
  }
}

static void test_bad_headers(void **state) {
  (void)state;
  struct {
    const char *text;
    kiln_status_code_t code;
    const char *message;
  } cases[] = {
      {"{\"format\": \"kiln-vm\", \"version\": 2}", KILN_STATUS_CODE_UNIMPLEMENTED,
       "vm.json: VM program version 2; this kiln reads version 1"},
      {"{\"format\": \"kiln-vm\"}", KILN_STATUS_CODE_NOT_FOUND, "version"},
      {"{\"format\": \"kiln-vm\", \"version\": 1, \"kernels\": [\"nope\"]}",
       KILN_STATUS_CODE_NOT_FOUND, "vm.json: kernel 0: the library has no function nope"},
      {"{\"format\": \"kiln-vm\", \"version\": 1, \"kernels\": [7]}",
       KILN_STATUS_CODE_INVALID_ARGUMENT, "vm.json: kernel 0: expected a name, got integer"},
      {"{\"format\": \"kiln-vm\", \"version\": 1, \"kernels\": [], \"constants\": [], "
       "\"inputs\": [], \"outputs\": [], \"functions\": [{\"name\": \"main\", \"params\": 0, "
       "\"registers\": 1, \"code\": [[\"ret\", []]]}]",
       KILN_STATUS_CODE_INVALID_ARGUMENT, "vm.json:1:"},
      {"{\"format\": \"kiln-vm\", \"version\": 1, \"kernels\": [], \"constants\": [], "
       "\"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"kind\": \"optional_list\"}]}",
       KILN_STATUS_CODE_INVALID_ARGUMENT,
       "vm.json: \"kind\" is \"tensor\", \"sequence\", \"optional\" or \"optional_sequence\""},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    kiln_graph_executor_t *gx = NULL;
    kiln_status_t status = kiln_graph_executor_create(kiln_allocator_system(), cases[c].text,
                                                      "vm.json", module, NULL, &gx);
    if (kiln_status_code(status) != cases[c].code ||
        !strstr(kiln_status_message(status), cases[c].message)) {
      fail_msg("case %zu: got \"%s\", expected \"%s\"", c, kiln_status_message(status),
               cases[c].message);
    }
    kiln_status_free(status);
  }
}

/* ---- run-time errors ---- */

typedef struct run_case_t {
  const char *decls;
  const char *functions;
  kiln_status_code_t code;
  const char *message;
} run_case_t;

#define ONE_IN                                                                                   \
  "\"constants\": [], \"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [4]}], " \
  "\"outputs\": [{\"name\": \"y\", \"dtype\": \"float32\", \"shape\": [4]}]"
#define OPT_SEQ_OUT                                                                              \
  "\"constants\": [], \"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [4]}], " \
  "\"outputs\": [{\"name\": \"y\", \"dtype\": \"float32\", \"shape\": [4], "                     \
  "\"kind\": \"optional_sequence\"}]"
#define MAIN1(code) "[{\"name\": \"main\", \"params\": 1, \"registers\": 6, \"code\": [" code "]}]"

static const run_case_t run_cases[] = {
    {ONE_IN, MAIN1("[\"ret\", [3]]"), KILN_STATUS_CODE_FAILED_PRECONDITION,
     "vm.json function main instruction 0 (ret): register 3 holds nothing (read before it was "
     "written), expected a tensor"},
    {ONE_IN, MAIN1("[\"alloc_storage\", 1, 8], [\"ret\", [1]]"),
     KILN_STATUS_CODE_FAILED_PRECONDITION, "register 1 holds a storage, expected a tensor"},
    {ONE_IN, MAIN1("[\"alloc_tensor\", 1, 0, 0, \"float32\", [4]], [\"ret\", [1]]"),
     KILN_STATUS_CODE_FAILED_PRECONDITION,
     "instruction 0 (alloc_tensor): register 0 holds a tensor, expected a storage"},
    {ONE_IN,
     MAIN1("[\"alloc_storage\", 1, 8], [\"alloc_tensor\", 2, 1, 0, \"float32\", [4]], [\"ret\", "
           "[2]]"),
     KILN_STATUS_CODE_OUT_OF_RANGE,
     "a tensor of 16 bytes at offset 0 does not fit the 8 bytes of the storage in register 1"},
    {ONE_IN, MAIN1("[\"invoke_packed\", 3, [0], []], [\"ret\", [0]]"), KILN_STATUS_CODE_INTERNAL,
     "instruction 0 (invoke_packed): kernel fails: the kernel broke"},
    {ONE_IN, MAIN1("[\"invoke_closure\", 0, [], []], [\"ret\", [0]]"),
     KILN_STATUS_CODE_FAILED_PRECONDITION, "register 0 holds a tensor, expected a closure"},
    {ONE_IN,
     MAIN1("[\"alloc_closure\", 1, 0, []], [\"invoke_closure\", 1, [], [2]], [\"ret\", [0]]"),
     KILN_STATUS_CODE_INVALID_ARGUMENT,
     "function main takes 1 arguments, the closure holds 0 and the call passes 0"},
    {ONE_IN, MAIN1("[\"invoke\", 0, [0], [1]], [\"ret\", [0]]"),
     KILN_STATUS_CODE_RESOURCE_EXHAUSTED, "calls nested deeper than 4096"},
    {ONE_IN, MAIN1("[\"if\", 0, 1, 1], [\"ret\", [0]]"), KILN_STATUS_CODE_INVALID_ARGUMENT,
     "the condition in register 0 has 4 elements, expected 1"},
    {ONE_IN, MAIN1("[\"load_consti\", 1, 5], [\"reshape_tensor\", 2, 0, 1], [\"ret\", [2]]"),
     KILN_STATUS_CODE_INVALID_ARGUMENT, "register 1 is a int64 tensor of rank 0"},
    {ONE_IN,
     MAIN1("[\"shape_of\", 1, 0], [\"shape_of\", 2, 1], [\"reshape_tensor\", 3, 0, 2], [\"ret\", "
           "[3]]"),
     KILN_STATUS_CODE_INVALID_ARGUMENT, "cannot reshape a tensor of shape (4,) to (1,)"},
    {ONE_IN, MAIN1("[\"shape_of\", 1, 0], [\"reshape_tensor\", 3, 1, 1], [\"ret\", [0]]"),
     KILN_STATUS_CODE_INVALID_ARGUMENT, "cannot reshape a tensor of shape (1,) to (4,)"},
    {ONE_IN, MAIN1("[\"shape_func\", 1, \"dyn.reshape\", [0, 0]], [\"ret\", [0]]"),
     KILN_STATUS_CODE_INVALID_ARGUMENT,
     "instruction 0 (shape_func): dyn.reshape: input 1 is a float32 tensor of rank 1 with 4 "
     "values; expected int32 or int64 of rank 0 or 1 with at most 32"},
    {ONE_IN,
     MAIN1("[\"load_consti\", 1, 5], [\"shape_func\", 2, \"dyn.reshape\", [0, 1], 0], "
           "[\"ret\", [0]]"),
     KILN_STATUS_CODE_INVALID_ARGUMENT,
     "instruction 1 (shape_func): dyn.reshape: cannot reshape data (4,) of 4 elements into [5]"},
    {ONE_IN,
     MAIN1("[\"load_consti\", 1, -1], [\"shape_func\", 2, \"dyn.unsqueeze\", [0, 1]], "
           "[\"reshape_tensor\", 3, 0, 2], [\"shape_func\", 4, \"dyn.squeeze\", [3, 1]], "
           "[\"reshape_tensor\", 5, 3, 4], [\"shape_func\", 4, \"dyn.squeeze\", [5, 1]], "
           "[\"ret\", [5]]"),
     KILN_STATUS_CODE_INVALID_ARGUMENT,
     "instruction 5 (shape_func): dyn.squeeze: axis 0 of data (4,) has size 4, not 1"},
    {ONE_IN, MAIN1("[\"call_extern\", \"unique\", [0], [1, 2, 3, 4], [1, 1, 5]], [\"ret\", [1]]"),
     KILN_STATUS_CODE_INVALID_ARGUMENT,
     "vm.json function main instruction 0 (call_extern): unique: axis 5 is out of range for rank "
     "1"},
    {ONE_IN, MAIN1("[\"call_extern\", \"nonzero\", [1], [2]], [\"ret\", [0]]"),
     KILN_STATUS_CODE_FAILED_PRECONDITION,
     "instruction 0 (call_extern): register 1 holds nothing (read before it was written), "
     "expected a tensor"},
    {ONE_IN,
     MAIN1("[\"load_consti\", 1, 3], [\"call_extern\", \"nonzero\", [1], [2]], "
           "[\"ret\", [0]]"),
     KILN_STATUS_CODE_UNIMPLEMENTED,
     "instruction 1 (call_extern): nonzero: a scalar input is not supported"},
    {ONE_IN, MAIN1("[\"shape_of\", 1, 0], [\"ret\", [1]]"), KILN_STATUS_CODE_INVALID_ARGUMENT,
     "output 0 'y' is int64 (1,), declared float32 (4,) (-1: any)"},
    {ONE_IN,
     MAIN1("[\"alloc_storage\", 1, 8], [\"alloc_tensor\", 2, 1, 0, \"float32\", [1]], "
           "[\"copy\", 2, 0], [\"ret\", [0]]"),
     KILN_STATUS_CODE_INVALID_ARGUMENT, "(copy): copies 16 bytes into a tensor of 4 bytes"},
    {ONE_IN,
     MAIN1("[\"alloc_storage\", 1, 8], [\"move\", 2, 1], [\"free_storage\", 1], "
           "[\"free_storage\", 2], [\"ret\", [0]]"),
     KILN_STATUS_CODE_FAILED_PRECONDITION,
     "instruction 3 (free_storage): the storage in register 2 was freed already"},
    /* freed, its block lent again to register 3: the stale copy in 2 is refused */
    {ONE_IN,
     MAIN1("[\"alloc_storage\", 1, 8], [\"move\", 2, 1], [\"free_storage\", 1], "
           "[\"alloc_storage\", 3, 8], [\"free_storage\", 2], [\"ret\", [0]]"),
     KILN_STATUS_CODE_FAILED_PRECONDITION,
     "instruction 4 (free_storage): the storage in register 2 was freed already"},
    {ONE_IN, MAIN1("[\"free_storage\", 0], [\"ret\", [0]]"), KILN_STATUS_CODE_FAILED_PRECONDITION,
     "register 0 holds a tensor, expected a storage"},
    {ONE_IN, MAIN1("[\"move\", 1, 2], [\"ret\", [0]]"), KILN_STATUS_CODE_FAILED_PRECONDITION,
     "(move): register 2 holds nothing"},
    {ONE_IN,
     "[{\"name\": \"main\", \"params\": 1, \"registers\": 6, \"code\": [[\"invoke\", 1, [], "
     "[1, 2]], [\"ret\", [0]]]}, {\"name\": \"f\", \"params\": 0, \"registers\": 1, \"code\": "
     "[[\"load_consti\", 0, 1], [\"ret\", [0]]]}]",
     KILN_STATUS_CODE_INVALID_ARGUMENT,
     "function f instruction 1 (ret): returns 1 values, the caller expects 2"},
    /* an optional of a sequence holds 0 or 1 ADTs, each of tensors */
    {OPT_SEQ_OUT, MAIN1("[\"alloc_adt\", 1, 0, [0]], [\"ret\", [1]]"),
     KILN_STATUS_CODE_INVALID_ARGUMENT, "output 0 'y' is not an optional of a sequence of tensors"},
    {OPT_SEQ_OUT,
     MAIN1("[\"alloc_adt\", 1, 0, [0, 0]], [\"alloc_adt\", 2, 1, [1, 1]], "
           "[\"ret\", [2]]"),
     KILN_STATUS_CODE_INVALID_ARGUMENT, "output 0 'y' is not an optional of a sequence of tensors"},
    {OPT_SEQ_OUT,
     MAIN1("[\"alloc_adt\", 1, 0, [0]], [\"alloc_adt\", 2, 0, [1]], "
           "[\"alloc_adt\", 3, 1, [2]], [\"ret\", [3]]"),
     KILN_STATUS_CODE_INVALID_ARGUMENT, "output 0 'y' is not an optional of a sequence of tensors"},
    {OPT_SEQ_OUT,
     MAIN1("[\"shape_of\", 1, 0], [\"alloc_adt\", 2, 0, [1]], "
           "[\"alloc_adt\", 3, 1, [2]], [\"ret\", [3]]"),
     KILN_STATUS_CODE_INVALID_ARGUMENT, "output 0 'y' is int64 (1,), declared float32 (4,)"},
};

static void test_run_errors(void **state) {
  (void)state;
  for (size_t c = 0; c < sizeof(run_cases) / sizeof(run_cases[0]); ++c) {
    kiln_graph_executor_t *gx = NULL;
    KILN_ASSERT_OK(create(run_cases[c].decls, run_cases[c].functions, &gx));
    float x[4] = {1, 2, 3, 4};
    set_input(gx, 0, floats(4, x));
    kiln_status_t status = kiln_graph_executor_run(gx);
    if (kiln_status_code(status) != run_cases[c].code ||
        !strstr(kiln_status_message(status), run_cases[c].message)) {
      fail_msg("case %zu: got %d \"%s\", expected \"%s\"", c, (int)kiln_status_code(status),
               kiln_status_message(status), run_cases[c].message);
    }
    kiln_status_free(status);
    kiln_graph_executor_destroy(gx);
  }
}

/* The run's limits (kiln_vm_limits_t, what the fuzzer runs under). */
static void test_limits(void **state) {
  (void)state;
  const kiln_vm_limits_t limits[2] = {{1000, 0}, {1000, 1 << 16}};
  const char *messages[2] = {
      "instruction 0 (alloc_storage): the run went past its limit of 1000 instructions",
      "the run would hold 1048576 more bytes, over its limit of 65536"};
  for (int l = 0; l < 2; ++l) {
    kiln_graph_executor_t *gx = NULL;
    KILN_ASSERT_OK(create(ONE_IN, MAIN1("[\"alloc_storage\", 1, 1048576], [\"goto\", -1]"), &gx));
    float x[4] = {1, 2, 3, 4};
    set_input(gx, 0, floats(4, x));
    gx->vm->limits = limits[l];
    KILN_ASSERT_STATUS(kiln_graph_executor_run(gx), RESOURCE_EXHAUSTED, messages[l]);
    kiln_graph_executor_destroy(gx);
  }
}

/* ---- allocation failures ---- */

static kiln_status_t create_and_run(kiln_allocator_t allocator, void *context) {
  (void)context;
  char *text = program(loop_decls, closure_functions);
  kiln_graph_executor_t *gx = NULL;
  kiln_status_t status = kiln_graph_executor_create(allocator, text, "vm.json", module, NULL, &gx);
  free(text);
  KILN_RETURN_IF_ERROR(status);
  float x[4] = {1, 2, 3, 4};
  int64_t n = 3, shape[1] = {4};
  DLTensor xt = {x, {kDLCPU, 0}, 1, kiln_dtype_to_dl(KILN_DTYPE_FLOAT32), shape, NULL, 0};
  DLTensor nt = {&n, {kDLCPU, 0}, 0, kiln_dtype_to_dl(KILN_DTYPE_INT64), NULL, NULL, 0};
  status = kiln_graph_executor_set_input(gx, 0, &xt);
  if (!status) {
    status = kiln_graph_executor_set_input(gx, 1, &nt);
  }
  for (int run = 0; run < 2 && !status; ++run) {
    status = kiln_graph_executor_run(gx);
  }
  kiln_graph_profile_t *profile = NULL;
  if (!status) {
    status = kiln_graph_executor_profile(gx, 2, &profile);
  }
  kiln_graph_profile_destroy(profile);
  kiln_graph_executor_destroy(gx);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(create_and_run, NULL) > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_straight_line),
      cmocka_unit_test(test_zero_copy_and_input_errors),
      cmocka_unit_test(test_loop_with_trip_count_input),
      cmocka_unit_test(test_free_storage_bounds_a_loop),
      cmocka_unit_test(test_if_else),
      cmocka_unit_test(test_closure_and_recursion),
      cmocka_unit_test(test_shape_instructions),
      cmocka_unit_test(test_call_extern),
      cmocka_unit_test(test_profile),
      cmocka_unit_test(test_debug_dump),
      cmocka_unit_test(test_bad_programs),
      cmocka_unit_test(test_bad_headers),
      cmocka_unit_test(test_run_errors),
      cmocka_unit_test(test_limits),
      cmocka_unit_test(test_allocation_failures),
  };
  return kiln_test_exit_code(cmocka_run_group_tests(tests, group_setup, group_teardown));
}
