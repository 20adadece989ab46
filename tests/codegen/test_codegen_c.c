/*
 * Tests of the C backend (codegen/c/codegen_c.h), parallel-loop outlining
 * (codegen/parallel.h) and the runtime module loader (kiln/module.h): the
 * generated C of a parallel loop (closure struct, lambda, launch), the
 * nested parallel loop refused, a parallel loop run with 1, 2 and 3 threads
 * under both chunkings, the argument checks (count, type code, dtype, rank,
 * shape, each -1 with its message), and the loader's and compiler's errors.
 * Every operator goes through the backend in tests/op (check_compute).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../tir/tir_fixture.h"
#include "codegen/c/codegen_c.h"
#include "kiln/module.h"
#include "kiln/parallel.h"

/* B[i] = A[i] * 2 + 1 for i in parallel(n), float32 buffers of n. */
static const kiln_tir_prim_func_t *parallel_func(fixture_t *f, int64_t n) {
  kiln_tir_builder_t *b = &f->b;
  const kiln_tir_buffer_t *a = kiln_tir_b_buffer(b, "A", KILN_DTYPE_FLOAT32, 1, &n);
  const kiln_tir_buffer_t *out = kiln_tir_b_buffer(b, "B", KILN_DTYPE_FLOAT32, 1, &n);
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *index = kiln_tir_b_v(i);
  const kiln_tir_expr_t *value =
      kiln_tir_b_add(b,
                     kiln_tir_b_mul(b, kiln_tir_b_load(b, a, 1, &index),
                                    kiln_tir_b_float(b, KILN_DTYPE_FLOAT32, 2)),
                     kiln_tir_b_float(b, KILN_DTYPE_FLOAT32, 1));
  const kiln_tir_stmt_t *loop = kiln_tir_b_for(
      b, i, kiln_tir_b_int(b, KILN_DTYPE_INT32, 0), kiln_tir_b_int(b, KILN_DTYPE_INT32, n),
      KILN_TIR_FOR_PARALLEL, kiln_tir_b_store(b, out, value, 1, &index));
  const kiln_tir_buffer_t *params[] = {a, out};
  return kiln_tir_b_func(b, "scale", 2, params, loop);
}

static void assert_contains(const char *text, const char *part) {
  if (!strstr(text, part)) {
    fail_msg("expected to find:\n%s\nin:\n%s", part, text);
  }
}

static void test_parallel_loop_golden(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = parallel_func(&f, 10);
  char *source = NULL;
  KILN_ASSERT_OK(
      kiln_codegen_c_emit(kiln_allocator_system(), &func, 1, KILN_CODEGEN_CHUNK_STATIC, &source));
  const char *code = strstr(source, "struct __kiln_closure_0 {");
  assert_non_null(code);
  assert_string_equal(
      code,
      "struct __kiln_closure_0 {\n"
      "  void *B_1;\n"
      "  void *A_0;\n"
      "};\n"
      "\n"
      "static int __kiln_parallel_lambda_0(int task_id, kiln_parallel_env_t *penv, void *cdata) {\n"
      "  const struct __kiln_closure_0 *closure = (const struct __kiln_closure_0 *)cdata;\n"
      "  void *B_1 = closure->B_1;\n"
      "  void *A_0 = closure->A_0;\n"
      "  (void)closure;\n"
      "  const int64_t num_task = penv->num_task;\n"
      "  const int64_t extent = (int64_t)((int32_t)10);\n"
      "  const int64_t step = (extent + num_task - 1) / num_task;\n"
      "  const int64_t begin = kiln_min_i64((int64_t)task_id * step, extent);\n"
      "  const int64_t end = kiln_min_i64(((int64_t)task_id + 1) * step, extent);\n"
      "  for (int64_t i_2_k = begin; i_2_k < end; ++i_2_k) {\n"
      "    const int32_t i_2 = (int32_t)(((int32_t)0) + i_2_k);\n"
      "    {\n"
      "      ((float *)B_1)[((int64_t)((int32_t)0) + (int64_t)i_2 * ((int64_t)1))] = "
      "(float)(((float)(((float)((((const float *)A_0)[((int64_t)((int32_t)0) + (int64_t)i_2 * "
      "((int64_t)1))]) * (0x1p+1f))) + (0x1p+0f))));\n"
      "    }\n"
      "  }\n"
      "  return 0;\n"
      "}\n"
      "\n"
      "int scale(const kiln_value_t *args, const int *type_codes, int num_args, kiln_value_t *ret, "
      "int *ret_tcode, void *resource) {\n"
      "  (void)args;\n"
      "  (void)type_codes;\n"
      "  (void)ret;\n"
      "  (void)ret_tcode;\n"
      "  (void)resource;\n"
      "  if (num_args != 2) return kiln_fail(\"scale: expected 2 arguments, got %d\", num_args);\n"
      "  if (type_codes[0] != 7) return kiln_fail(\"scale: argument 0 has type code %d, expected a "
      "DLTensor (7)\", type_codes[0]);\n"
      "  kiln_dl_tensor_t *kiln_arg0 = (kiln_dl_tensor_t *)args[0].v_handle;\n"
      "  if (!kiln_arg0) return kiln_fail(\"scale: argument 0 is null\");\n"
      "  if (kiln_arg0->device.device_type != 1) return kiln_fail(\"scale: argument 0 is on device "
      "type %d, expected the CPU (1)\", kiln_arg0->device.device_type);\n"
      "  if (kiln_arg0->dtype.code != 2 || kiln_arg0->dtype.bits != 32 || kiln_arg0->dtype.lanes "
      "!= 1) return kiln_fail_dtype(\"scale\", 0, kiln_arg0->dtype, \"float32\");\n"
      "  if (kiln_arg0->ndim != 1) return kiln_fail(\"scale: argument 0 has rank %d, expected 1\", "
      "kiln_arg0->ndim);\n"
      "  if (!(1 && kiln_arg0->shape[0] == (int64_t)((int32_t)10))) return "
      "kiln_fail_shape(\"scale\", 0, kiln_arg0, \"(10,)\");\n"
      "  if (!kiln_is_compact(kiln_arg0)) return kiln_fail(\"scale: argument 0 is not compact (its "
      "strides are not row-major)\");\n"
      "  if (((uintptr_t)kiln_arg0->data + kiln_arg0->byte_offset) % 4 != 0) return "
      "kiln_fail(\"scale: argument 0 is not aligned to 4 bytes\");\n"
      "  void *A_0 = (char *)kiln_arg0->data + kiln_arg0->byte_offset;\n"
      "  if (type_codes[1] != 7) return kiln_fail(\"scale: argument 1 has type code %d, expected a "
      "DLTensor (7)\", type_codes[1]);\n"
      "  kiln_dl_tensor_t *kiln_arg1 = (kiln_dl_tensor_t *)args[1].v_handle;\n"
      "  if (!kiln_arg1) return kiln_fail(\"scale: argument 1 is null\");\n"
      "  if (kiln_arg1->device.device_type != 1) return kiln_fail(\"scale: argument 1 is on device "
      "type %d, expected the CPU (1)\", kiln_arg1->device.device_type);\n"
      "  if (kiln_arg1->dtype.code != 2 || kiln_arg1->dtype.bits != 32 || kiln_arg1->dtype.lanes "
      "!= 1) return kiln_fail_dtype(\"scale\", 1, kiln_arg1->dtype, \"float32\");\n"
      "  if (kiln_arg1->ndim != 1) return kiln_fail(\"scale: argument 1 has rank %d, expected 1\", "
      "kiln_arg1->ndim);\n"
      "  if (!(1 && kiln_arg1->shape[0] == (int64_t)((int32_t)10))) return "
      "kiln_fail_shape(\"scale\", 1, kiln_arg1, \"(10,)\");\n"
      "  if (!kiln_is_compact(kiln_arg1)) return kiln_fail(\"scale: argument 1 is not compact (its "
      "strides are not row-major)\");\n"
      "  if (((uintptr_t)kiln_arg1->data + kiln_arg1->byte_offset) % 4 != 0) return "
      "kiln_fail(\"scale: argument 1 is not aligned to 4 bytes\");\n"
      "  void *B_1 = (char *)kiln_arg1->data + kiln_arg1->byte_offset;\n"
      "  {\n"
      "    struct __kiln_closure_0 closure_0 = {B_1, A_0};\n"
      "    if (__kiln_parallel_launch(__kiln_parallel_lambda_0, &closure_0, 0) != 0) { return -1; "
      "}\n"
      "  }\n"
      "  return 0;\n"
      "}\n"
      "\n"
      "__attribute__((used, visibility(\"default\"))) const int32_t __kiln_num_args_scale = 2;\n"
      "\n");
  kiln_allocator_free(kiln_allocator_system(), source);
  /* The stride chunking. */
  KILN_ASSERT_OK(
      kiln_codegen_c_emit(kiln_allocator_system(), &func, 1, KILN_CODEGEN_CHUNK_STRIDE, &source));
  assert_contains(source, "  for (int64_t i_2_k = task_id; i_2_k < extent; i_2_k += num_task) {\n");
  kiln_allocator_free(kiln_allocator_system(), source);
  fixture_done(&f);
}

static void test_nested_parallel_loop_is_refused(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  kiln_tir_builder_t *b = &f.b;
  int64_t n = 4;
  const kiln_tir_buffer_t *a = kiln_tir_b_buffer(b, "A", KILN_DTYPE_FLOAT32, 1, &n);
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_var_t *j = kiln_tir_b_var(b, "j", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *index = kiln_tir_b_v(j);
  const kiln_tir_expr_t *zero = kiln_tir_b_int(b, KILN_DTYPE_INT32, 0);
  const kiln_tir_expr_t *two = kiln_tir_b_int(b, KILN_DTYPE_INT32, 2);
  const kiln_tir_stmt_t *store =
      kiln_tir_b_store(b, a, kiln_tir_b_float(b, KILN_DTYPE_FLOAT32, 1), 1, &index);
  const kiln_tir_stmt_t *inner = kiln_tir_b_for(b, j, zero, two, KILN_TIR_FOR_PARALLEL, store);
  const kiln_tir_stmt_t *outer = kiln_tir_b_for(b, i, zero, two, KILN_TIR_FOR_PARALLEL, inner);
  const kiln_tir_prim_func_t *func = kiln_tir_b_func(b, "nested", 1, &a, outer);
  char *source = NULL;
  KILN_ASSERT_STATUS(
      kiln_codegen_c_emit(kiln_allocator_system(), &func, 1, KILN_CODEGEN_CHUNK_STATIC, &source),
      INVALID_ARGUMENT,
      "nested: nested parallel loop: fuse the loops instead (loop j inside "
      "parallel loop i)");
  assert_null(source);
  kiln_codegen_parallel_t parallel;
  KILN_ASSERT_STATUS(
      kiln_codegen_parallel_outline(&f.arena, func, KILN_CODEGEN_CHUNK_STATIC, &parallel),
      INVALID_ARGUMENT, "nested parallel loop: fuse the loops instead");
  fixture_done(&f);
}

static kiln_tensor_t *vector_tensor(int64_t n, float start) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, &n, &t));
  float *data = kiln_tensor_data(t);
  for (int64_t i = 0; i < n; ++i) {
    data[i] = start + (float)i;
  }
  return t;
}

static void run_scale(const char *target) {
  fixture_t f;
  fixture_init(&f);
  const int64_t n = 37;
  const kiln_tir_prim_func_t *func = parallel_func(&f, n);
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), target, &func, 1, &module));
  assert_non_null(strstr(kiln_runtime_module_source(module, "c"), "__kiln_parallel_lambda_0"));
  assert_null(kiln_runtime_module_source(module, "llvm"));
  kiln_tensor_t *args[] = {vector_tensor(n, -3), vector_tensor(n, 1000)};
  int before = kiln_parallel_get_num_threads();
  for (int threads = 1; threads <= 3; ++threads) {
    KILN_ASSERT_OK(kiln_parallel_set_num_threads(threads));
    memset(kiln_tensor_data(args[1]), 0x7f, kiln_tensor_byte_size(args[1]));
    KILN_ASSERT_OK(kiln_runtime_module_call(module, "scale", 2, args));
    const float *out = kiln_tensor_data(args[1]);
    for (int64_t i = 0; i < n; ++i) {
      assert_true(out[i] == (float)(-3 + i) * 2 + 1);
    }
  }
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(before));
  kiln_tensor_release(args[0]);
  kiln_tensor_release(args[1]);
  kiln_runtime_module_release(module);
  fixture_done(&f);
}

static void test_parallel_loop_runs_with_1_2_3_threads(void **state) {
  (void)state;
  run_scale("c");
  run_scale("c -O0 chunk=stride");
}

/* Calls `fn` with the packed arguments and returns the last error. */
static const char *call_error(kiln_packed_fn fn, int num_args, const kiln_value_t *values,
                              const int *codes) {
  kiln_backend_set_last_error("");
  assert_int_equal(fn(values, codes, num_args, NULL, NULL, NULL), -1);
  return kiln_get_last_error();
}

static void test_argument_checks(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = parallel_func(&f, 10);
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), "c", &func, 1, &module));
  kiln_packed_fn fn = NULL;
  KILN_ASSERT_OK(kiln_runtime_module_get_function(module, "scale", &fn));
  kiln_tensor_t *a = vector_tensor(10, 0), *b = vector_tensor(10, 0);
  DLTensor da = *kiln_tensor_dl(a), db = *kiln_tensor_dl(b);
  kiln_value_t values[2];
  values[0].v_handle = &da;
  values[1].v_handle = &db;
  int codes[2] = {KILN_ARG_DLTENSOR, KILN_ARG_DLTENSOR};
  assert_int_equal(fn(values, codes, 2, NULL, NULL, NULL), 0);
  assert_string_equal(call_error(fn, 1, values, codes), "scale: expected 2 arguments, got 1");
  codes[1] = KILN_ARG_INT;
  assert_string_equal(call_error(fn, 2, values, codes),
                      "scale: argument 1 has type code 0, expected a DLTensor (7)");
  codes[1] = KILN_ARG_DLTENSOR;
  db.dtype.bits = 64;
  assert_string_equal(call_error(fn, 2, values, codes),
                      "scale: argument 1 has dtype float64, expected float32");
  db.dtype.bits = 32;
  int64_t shape2[2] = {2, 5};
  db.ndim = 2;
  db.shape = shape2;
  assert_string_equal(call_error(fn, 2, values, codes), "scale: argument 1 has rank 2, expected 1");
  int64_t shape1 = 9;
  db.ndim = 1;
  db.shape = &shape1;
  assert_string_equal(call_error(fn, 2, values, codes),
                      "scale: argument 1 has shape (9,), expected (10,)");
  db.shape = kiln_tensor_dl(b)->shape;
  int64_t stride = 2;
  db.strides = &stride;
  assert_string_equal(call_error(fn, 2, values, codes),
                      "scale: argument 1 is not compact (its strides are not row-major)");
  db.strides = NULL;
  db.byte_offset = 2;
  assert_string_equal(call_error(fn, 2, values, codes),
                      "scale: argument 1 is not aligned to 4 bytes");
  db.byte_offset = 0;
  values[0].v_handle = NULL;
  assert_string_equal(call_error(fn, 2, values, codes), "scale: argument 0 is null");
  /* Through kiln_runtime_module_call the -1 becomes a status. */
  kiln_tensor_t *wrong[] = {a};
  KILN_ASSERT_STATUS(kiln_runtime_module_call(module, "scale", 1, wrong), INTERNAL,
                     "scale: expected 2 arguments, got 1");
  kiln_tensor_release(a);
  kiln_tensor_release(b);
  kiln_runtime_module_release(module);
  fixture_done(&f);
}

static void test_loader_errors(void **state) {
  (void)state;
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_STATUS(
      kiln_runtime_module_load(kiln_allocator_system(), "/nonexistent/kiln_lib.so", &module),
      IO_ERROR, "cannot load /nonexistent/kiln_lib.so: /nonexistent/kiln_lib.so");
  assert_null(module);
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = parallel_func(&f, 3);
  KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), "c", &func, 1, &module));
  kiln_packed_fn fn = NULL;
  KILN_ASSERT_STATUS(kiln_runtime_module_get_function(module, "missing", &fn), NOT_FOUND,
                     "function missing is not in module /");
  assert_null(fn);
  kiln_runtime_module_retain(module);
  kiln_runtime_module_release(module);
  KILN_ASSERT_OK(kiln_runtime_module_get_function(module, "scale", &fn));
  kiln_runtime_module_release(module);
  KILN_ASSERT_STATUS(kiln_codegen_build(kiln_allocator_system(), "cuda", &func, 1, &module),
                     NOT_FOUND, "unknown code-generation target \"cuda\" (known: c");
  fixture_done(&f);
}

static void test_compiler_error_keeps_the_source(void **state) {
  (void)state;
  kiln_runtime_module_t *module = NULL;
  kiln_status_t status = kiln_codegen_c_compile(kiln_allocator_system(),
                                                "int broken(void) { return nope; }\n", "", &module);
  assert_int_equal(kiln_status_code(status), KILN_STATUS_CODE_INVALID_ARGUMENT);
  const char *message = kiln_status_message(status);
  assert_non_null(strstr(message, "c backend: the C compiler failed (exit 1):"));
  assert_non_null(strstr(message, "nope"));
  const char *kept = strstr(message, "the source is kept at ");
  assert_non_null(kept);
  char path[600];
  snprintf(path, sizeof(path), "%s", kept + strlen("the source is kept at "));
  assert_int_equal(access(path, R_OK), 0);
  unlink(path);
  *strrchr(path, '/') = '\0';
  assert_int_equal(rmdir(path), 0);
  kiln_status_free(status);
  assert_null(module);
}

static void test_function_names_are_c_identifiers(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  int64_t n = 2;
  const kiln_tir_buffer_t *a = kiln_tir_b_buffer(&f.b, "A", KILN_DTYPE_FLOAT32, 1, &n);
  const kiln_tir_stmt_t *body =
      kiln_tir_b_evaluate(&f.b, kiln_tir_b_int(&f.b, KILN_DTYPE_INT32, 0));
  const kiln_tir_prim_func_t *func = kiln_tir_b_func(&f.b, "nn.relu", 1, &a, body);
  char *source = NULL;
  KILN_ASSERT_STATUS(
      kiln_codegen_c_emit(kiln_allocator_system(), &func, 1, KILN_CODEGEN_CHUNK_STATIC, &source),
      INVALID_ARGUMENT, "function name \"nn.relu\" is not a C identifier");
  fixture_done(&f);
}

static kiln_status_t emit_scenario(kiln_allocator_t allocator, void *context) {
  const kiln_tir_prim_func_t *func = context;
  char *source = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_codegen_c_emit(allocator, &func, 1, KILN_CODEGEN_CHUNK_STATIC, &source));
  assert_non_null(strstr(source, "__kiln_parallel_lambda_0"));
  kiln_allocator_free(allocator, source);
  return KILN_OK;
}

/* Compiles and loads a small file, keeps its source, calls a function. */
static kiln_status_t compile_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_runtime_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_codegen_c_compile(allocator, "int answer(void) { return 42; }\n", "-O0", &module));
  kiln_packed_fn fn = NULL;
  kiln_status_t status = kiln_runtime_module_get_function(module, "answer", &fn);
  if (!status) {
    assert_int_equal(((int (*)(void))(void (*)(void))fn)(), 42);
    assert_string_equal(kiln_runtime_module_source(module, "c"),
                        "int answer(void) { return 42; }\n");
  }
  kiln_runtime_module_release(module);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = parallel_func(&f, 10);
  assert_true(kiln_test_sweep_allocation_failures(emit_scenario, (void *)(uintptr_t)func) > 0);
  assert_true(kiln_test_sweep_allocation_failures(compile_scenario, NULL) > 0);
  fixture_done(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parallel_loop_golden),
      cmocka_unit_test(test_nested_parallel_loop_is_refused),
      cmocka_unit_test(test_parallel_loop_runs_with_1_2_3_threads),
      cmocka_unit_test(test_argument_checks),
      cmocka_unit_test(test_loader_errors),
      cmocka_unit_test(test_compiler_error_keeps_the_source),
      cmocka_unit_test(test_function_names_are_c_identifiers),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
