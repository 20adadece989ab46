/*
 * Tests of the kernel cache (src/compiler/kernel_cache.c): the key text
 * (the code target, then the graph compiler's key of the call's function);
 * one entry per (target, op, attrs, input types) with its own copies of the
 * attrs and types and the inferred output types; a compile that two threads
 * ask for at once runs once; a kernel that does not compile (float16 softmax) falls
 * back to the reference kernel and is not compiled again; reference-only
 * caches never compile; the shared store: views that see each other's
 * kernels, a kernel offered by function key (as the graph compiler does)
 * that a call lookup then runs without compiling, the store freed with its
 * last view; type-relation and target errors; an allocation-failure sweep
 * over create, lookup and run.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <string.h>

#include "base/arena.h"
#include "codegen/target.h"
#include "compiler/kernel_cache.h"
#include "kiln_test.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

/* The key of nn.softmax(axis=0) over a (2, 3) float32 tensor, target "c". */
#define SOFTMAX_23_KEY                                                                            \
  "c|Tensor[(2, 3), float32];|param 0:Tensor[(2, 3), float32]|nn.softmax(axis=0)[$0]:Tensor[(2, " \
  "3), float32]"

static kiln_arena_t arena;

static int setup(void **state) {
  (void)state;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  kiln_arena_deinitialize(&arena);
  return 0;
}

static const kiln_type_t *tensor_type(kiln_dtype_t dtype, int ndim, const int64_t *shape) {
  const kiln_type_t *type = NULL;
  KILN_ASSERT_OK(kiln_tensor_type_create(&arena, dtype, ndim, shape, &type));
  return type;
}

static const kiln_op_t *op_named(const char *name) {
  const kiln_op_t *op = NULL;
  KILN_ASSERT_OK(kiln_op_find(name, &op));
  return op;
}

static void *softmax_attrs(const char *axis) {
  const kiln_op_t *op = op_named("nn.softmax");
  void *attrs = NULL;
  KILN_ASSERT_OK(kiln_op_attrs_create_default(op, &arena, &attrs));
  KILN_ASSERT_OK(kiln_op_attrs_set_text(op, attrs, "axis", axis, &arena));
  return attrs;
}

static void test_keys_and_entries(void **state) {
  (void)state;
  const kiln_op_t *softmax = op_named("nn.softmax");
  const kiln_type_t *t23 = tensor_type(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_kernel_cache_key("c", softmax, softmax_attrs("0"), 1, &t23, &sb));
  assert_string_equal(kiln_strbuf_c_str(&sb), SOFTMAX_23_KEY);
  kiln_strbuf_reset(&sb);
  /* Delivery words and extra spaces do not change the code target. */
  KILN_ASSERT_OK(kiln_codegen_target_code("c   -march=native ", &sb));
  assert_string_equal(kiln_strbuf_c_str(&sb), "c -march=native");
  const kiln_codegen_target_t *llvm = NULL;
  const char *llvm_options = NULL;
  kiln_status_t found = kiln_codegen_target_find("llvm", &llvm, &llvm_options);
  if (!found) {
    kiln_strbuf_reset(&sb);
    KILN_ASSERT_OK(kiln_codegen_target_code("llvm -jit -mcpu=haswell -noasm", &sb));
    assert_string_equal(kiln_strbuf_c_str(&sb), "llvm -mcpu=haswell");
  }
  kiln_status_free(found);
  kiln_strbuf_deinitialize(&sb);

  kiln_kernel_cache_options_t options = {"c", true, false};
  kiln_kernel_cache_t *cache = NULL;
  KILN_ASSERT_OK(kiln_kernel_cache_create(kiln_allocator_system(), &options, &cache));
  assert_string_equal(kiln_kernel_cache_target(cache), "c");
  assert_true(kiln_kernel_cache_reference_only(cache));
  const kiln_kernel_t *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  KILN_ASSERT_OK(kiln_kernel_cache_lookup(cache, softmax, softmax_attrs("0"), 1, &t23, &a));
  KILN_ASSERT_OK(kiln_kernel_cache_lookup(cache, softmax, softmax_attrs("0"), 1, &t23, &b));
  KILN_ASSERT_OK(kiln_kernel_cache_lookup(cache, softmax, softmax_attrs("1"), 1, &t23, &c));
  const kiln_type_t *t32 = tensor_type(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 2));
  KILN_ASSERT_OK(kiln_kernel_cache_lookup(cache, softmax, softmax_attrs("0"), 1, &t32, &d));
  assert_ptr_equal(a, b);
  assert_ptr_not_equal(a, c);
  assert_ptr_not_equal(a, d);
  assert_string_equal(a->key, SOFTMAX_23_KEY);
  assert_ptr_equal(a->op, softmax);
  assert_int_equal(a->num_outputs, 1);
  assert_int_equal(a->output_types[0]->ndim, 2);
  assert_int_equal(a->output_types[0]->shape[1], 3);
  assert_int_equal(kiln_kernel_cache_path(cache, a), KILN_KERNEL_PATH_REFERENCE);
  kiln_kernel_path_t path = KILN_KERNEL_PATH_UNRESOLVED;
  KILN_ASSERT_OK(kiln_kernel_cache_prepare(cache, a, &path));
  assert_int_equal(path, KILN_KERNEL_PATH_REFERENCE);
  assert_string_equal(kiln_kernel_path_name(path), "reference");
  /* Tuple outputs are flattened. */
  const kiln_op_t *split = op_named("split");
  void *split_attrs = NULL;
  KILN_ASSERT_OK(kiln_op_attrs_create_default(split, &arena, &split_attrs));
  KILN_ASSERT_OK(kiln_op_attrs_set_text(split, split_attrs, "sections", "3", &arena));
  KILN_ASSERT_OK(kiln_kernel_cache_lookup(cache, split, split_attrs, 1, &t32, &b));
  assert_int_equal(b->num_outputs, 3);
  /* The type relation's errors come back from the lookup. */
  const kiln_type_t *pair[] = {t23, t32};
  KILN_ASSERT_STATUS(kiln_kernel_cache_lookup(cache, op_named("add"), NULL, 2, pair, &b),
                     INVALID_ARGUMENT, "add");
  kiln_kernel_cache_stats_t stats;
  kiln_kernel_cache_get_stats(cache, &stats);
  assert_int_equal(stats.entries, 4);
  assert_int_equal(stats.lookups, 5);
  assert_int_equal(stats.compiles, 0);
  assert_int_equal(stats.reference, 5); /* reference-only: every lookup */
  assert_int_equal(kiln_kernel_cache_store_entries(cache), 4);
  assert_false(kiln_kernel_cache_shared(cache));
  kiln_kernel_cache_destroy(cache);
  kiln_kernel_cache_destroy(NULL);

  options.target = "nonsense -x";
  KILN_ASSERT_STATUS(kiln_kernel_cache_create(kiln_allocator_system(), &options, &cache), NOT_FOUND,
                     "kernel cache: unknown code-generation target \"nonsense -x\"");
  assert_null(cache);
}

typedef struct race_t {
  kiln_kernel_cache_t *cache;
  const kiln_kernel_t *kernel;
  kiln_kernel_path_t path;
  int ok;
} race_t;

static void *prepare_thread(void *arg) {
  race_t *race = arg;
  kiln_status_t status = kiln_kernel_cache_prepare(race->cache, race->kernel, &race->path);
  race->ok = status == NULL;
  kiln_status_free(status);
  return NULL;
}

static void test_two_threads_compile_once_and_fallback_is_kept(void **state) {
  (void)state;
  kiln_kernel_cache_t *cache = NULL;
  KILN_ASSERT_OK(kiln_kernel_cache_create(kiln_allocator_system(), NULL, &cache));
  assert_string_equal(kiln_kernel_cache_target(cache), kiln_codegen_default_jit_target());
  kiln_kernel_cache_destroy(cache);
  kiln_kernel_cache_options_t options = {"c -march=native", false, false};
  KILN_ASSERT_OK(kiln_kernel_cache_create(kiln_allocator_system(), &options, &cache));
  const kiln_op_t *add = op_named("add");
  const kiln_type_t *types[] = {tensor_type(KILN_DTYPE_FLOAT32, 1, SHAPE(5)),
                                tensor_type(KILN_DTYPE_FLOAT32, 1, SHAPE(5))};
  const kiln_kernel_t *kernel = NULL;
  KILN_ASSERT_OK(kiln_kernel_cache_lookup(cache, add, NULL, 2, types, &kernel));
  race_t races[2] = {{cache, kernel, KILN_KERNEL_PATH_UNRESOLVED, 0},
                     {cache, kernel, KILN_KERNEL_PATH_UNRESOLVED, 0}};
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) {
    assert_int_equal(pthread_create(&threads[i], NULL, prepare_thread, &races[i]), 0);
  }
  for (int i = 0; i < 2; ++i) {
    pthread_join(threads[i], NULL);
    assert_true(races[i].ok);
    assert_int_equal(races[i].path, KILN_KERNEL_PATH_COMPILED);
  }
  kiln_kernel_cache_stats_t stats;
  kiln_kernel_cache_get_stats(cache, &stats);
  assert_int_equal(stats.compiles, 1);
  assert_int_equal(stats.compiled, 1);
  /* The compiled kernel computes. */
  kiln_tensor_t *x = NULL, *y = NULL;
  float values[5] = {1, 2, 3, 4, 5};
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, SHAPE(5),
                                         values, sizeof(values), &x));
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, SHAPE(5), &y));
  kiln_tensor_t *inputs[] = {x, x};
  KILN_ASSERT_OK(kiln_kernel_cache_run(cache, kernel, inputs, &y));
  for (int i = 0; i < 5; ++i) {
    assert_true(((float *)kiln_tensor_data(y))[i] == 2 * values[i]);
  }
  /* float16 softmax: no compute rule takes it (the reference handles float32
   * only); the reference kernel is recorded and the compile is not tried
   * again. */
  const kiln_type_t *half = tensor_type(KILN_DTYPE_FLOAT16, 1, SHAPE(5));
  const kiln_kernel_t *softmax = NULL;
  KILN_ASSERT_OK(kiln_kernel_cache_lookup(cache, op_named("nn.softmax"), softmax_attrs("0"), 1,
                                          &half, &softmax));
  kiln_kernel_path_t path = KILN_KERNEL_PATH_UNRESOLVED;
  for (int i = 0; i < 2; ++i) {
    KILN_ASSERT_OK(kiln_kernel_cache_prepare(cache, softmax, &path));
    assert_int_equal(path, KILN_KERNEL_PATH_REFERENCE);
  }
  kiln_kernel_cache_get_stats(cache, &stats);
  assert_int_equal(stats.compiles, 2);
  assert_int_equal(stats.reference, 1);
  /* Running it: the reference kernel's own error, naming the operator. */
  kiln_tensor_t *h = NULL, *hy = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT16, 1, SHAPE(5), &h));
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT16, 1, SHAPE(5), &hy));
  KILN_ASSERT_STATUS(kiln_kernel_cache_run(cache, softmax, &h, &hy), UNIMPLEMENTED,
                     "nn.softmax: the reference kernel does not handle dtype float16");
  kiln_tensor_release(h);
  kiln_tensor_release(hy);
  kiln_tensor_release(x);
  kiln_tensor_release(y);
  kiln_kernel_cache_destroy(cache);
}

static kiln_tensor_t *vector5(const float *values) {
  kiln_tensor_t *t = NULL;
  if (values) {
    KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, SHAPE(5),
                                           values, 5 * sizeof(float), &t));
  } else {
    KILN_ASSERT_OK(
        kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, SHAPE(5), &t));
  }
  return t;
}

static void test_shared_store(void **state) {
  (void)state;
  const kiln_op_t *add = op_named("add");
  const kiln_type_t *types[] = {tensor_type(KILN_DTYPE_FLOAT32, 1, SHAPE(5)),
                                tensor_type(KILN_DTYPE_FLOAT32, 1, SHAPE(5))};
  /* A private cache compiles add; its function key is the key without the
   * code target. */
  kiln_kernel_cache_options_t options = {"c", false, false};
  kiln_kernel_cache_t *own = NULL;
  KILN_ASSERT_OK(kiln_kernel_cache_create(kiln_allocator_system(), &options, &own));
  const kiln_kernel_t *kernel = NULL;
  kiln_kernel_path_t path = KILN_KERNEL_PATH_UNRESOLVED;
  KILN_ASSERT_OK(kiln_kernel_cache_lookup(own, add, NULL, 2, types, &kernel));
  KILN_ASSERT_OK(kiln_kernel_cache_prepare(own, kernel, &path));
  assert_int_equal(path, KILN_KERNEL_PATH_COMPILED);
  assert_true(strncmp(kernel->key, "c|", 2) == 0);
  char *function_key = NULL; /* a copy: the private store goes first */
  KILN_ASSERT_OK(kiln_arena_strdup(&arena, kernel->key + 2, &function_key));
  kiln_runtime_module_t *module = NULL;
  kiln_packed_fn fn = NULL;
  assert_true(kiln_kernel_cache_find_compiled(own, function_key, &module, &fn));
  assert_non_null(fn);

  /* Two shared views: what one is offered, the other's call lookup runs
   * without compiling. A private cache and another code target see
   * nothing of it. */
  options.shared = true;
  kiln_kernel_cache_t *graph = NULL, *eager = NULL, *other = NULL;
  KILN_ASSERT_OK(kiln_kernel_cache_create(kiln_allocator_system(), &options, &graph));
  KILN_ASSERT_OK(kiln_kernel_cache_create(kiln_allocator_system(), &options, &eager));
  assert_true(kiln_kernel_cache_shared(eager));
  kiln_runtime_module_t *none = NULL;
  kiln_packed_fn no_fn = NULL;
  assert_false(kiln_kernel_cache_find_compiled(graph, function_key, &none, &no_fn));
  assert_null(none);
  KILN_ASSERT_OK(kiln_kernel_cache_add_compiled(graph, function_key, module, fn));
  kiln_runtime_module_release(module);
  kiln_kernel_cache_destroy(own); /* the shared store keeps the module */
  assert_int_equal(kiln_kernel_cache_store_entries(eager), 1);
  const kiln_kernel_t *shared = NULL;
  KILN_ASSERT_OK(kiln_kernel_cache_lookup(eager, add, NULL, 2, types, &shared));
  assert_int_equal(kiln_kernel_cache_path(eager, shared), KILN_KERNEL_PATH_COMPILED);
  assert_ptr_equal(shared->op, add);
  assert_int_equal(shared->num_outputs, 1);
  float values[5] = {1, 2, 3, 4, 5};
  kiln_tensor_t *x = vector5(values), *y = vector5(NULL);
  kiln_tensor_t *inputs[] = {x, x};
  KILN_ASSERT_OK(kiln_kernel_cache_run(eager, shared, inputs, &y));
  for (int i = 0; i < 5; ++i) {
    assert_true(((float *)kiln_tensor_data(y))[i] == 2 * values[i]);
  }
  kiln_kernel_cache_stats_t stats;
  kiln_kernel_cache_get_stats(eager, &stats);
  assert_int_equal(stats.lookups, 1);
  assert_int_equal(stats.hits, 1);
  assert_int_equal(stats.compiles, 0);
  assert_int_equal(stats.entries, 0);
  kiln_kernel_cache_get_stats(graph, &stats);
  assert_int_equal(stats.entries, 1);
  options.target = "c -O0";
  KILN_ASSERT_OK(kiln_kernel_cache_create(kiln_allocator_system(), &options, &other));
  assert_false(kiln_kernel_cache_find_compiled(other, function_key, &none, &no_fn));
  kiln_kernel_cache_destroy(other);

  /* A kernel one view compiles, the other finds by function key. */
  const kiln_op_t *multiply = op_named("multiply");
  KILN_ASSERT_OK(kiln_kernel_cache_lookup(eager, multiply, NULL, 2, types, &kernel));
  KILN_ASSERT_OK(kiln_kernel_cache_prepare(eager, kernel, &path));
  assert_int_equal(path, KILN_KERNEL_PATH_COMPILED);
  assert_true(kiln_kernel_cache_find_compiled(graph, kernel->key + 2, &module, &fn));
  kiln_runtime_module_release(module);
  kiln_kernel_cache_get_stats(graph, &stats);
  assert_int_equal(stats.hits, 1);

  /* The store goes with its last view: a new one starts empty. */
  kiln_kernel_cache_destroy(graph);
  kiln_kernel_cache_destroy(eager);
  KILN_ASSERT_OK(kiln_kernel_cache_create(kiln_allocator_system(), &options, &eager));
  assert_int_equal(kiln_kernel_cache_store_entries(eager), 0);
  kiln_kernel_cache_destroy(eager);
  kiln_tensor_release(x);
  kiln_tensor_release(y);
}

static kiln_status_t cache_session(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_kernel_cache_options_t options = {"c", true, false};
  kiln_kernel_cache_t *cache = NULL;
  KILN_RETURN_IF_ERROR(kiln_kernel_cache_create(allocator, &options, &cache));
  const kiln_kernel_t *kernel = NULL;
  const kiln_type_t *t = tensor_type(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  kiln_status_t status =
      kiln_kernel_cache_lookup(cache, op_named("nn.softmax"), softmax_attrs("1"), 1, &t, &kernel);
  if (!status) {
    status =
        kiln_kernel_cache_lookup(cache, op_named("nn.softmax"), softmax_attrs("1"), 1, &t, &kernel);
  }
  kiln_kernel_cache_destroy(cache);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(cache_session, NULL) > 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_keys_and_entries, setup, teardown),
      cmocka_unit_test_setup_teardown(test_two_threads_compile_once_and_fallback_is_kept, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_shared_store, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
