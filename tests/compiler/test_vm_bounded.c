/*
 * A module whose symbolic dim has an upper bound (n<=128) compiled for the
 * VM with a memory plan over its bounds (pass/plan_memory.h,
 * compiler/vm_symbolic.c): three dense layers over (n, 64) and a sum over
 * n. Its intermediate values are planned at n = 128: the program holds no
 * alloc_storage_shape, one alloc_storage per plan storage (fewer than the
 * values: lifetimes that do not overlap share one), and the compile's
 * figures say so. It matches the reference interpreter at n = 1, 17, 128
 * and 5 on one executor; the VM's allocator holds the same bytes after a
 * run at n = 1 as after one at n = 128 (the plan is fixed; the inputs are
 * zero-copy, the output static); n = 129 is refused by check_inputs. The
 * same module without the bound keeps a storage per value per run.
 */
#include <string.h>

#include "base/json.h"
#include "compiler/build.h"
#include "interp/interp.h"
#include "ir/infer.h"
#include "kiln/compiler.h"
#include "kiln_compute_test.h"
#include "kiln_ir_test.h"
#include "kiln_test.h"

static const char mlp[] =
    "def @main(%%x: Tensor[(%s, 64), float32], %%w1: Tensor[(64, 64), float32],\n"
    "          %%w2: Tensor[(64, 64), float32], %%w3: Tensor[(64, 64), float32]) {\n"
    "  %%0 = nn.relu(nn.dense(%%x, %%w1, units=64));\n"
    "  %%1 = tanh(nn.dense(%%0, %%w2, units=64));\n"
    "  %%2 = nn.dense(%%1, %%w3, units=64);\n"
    "  sum(%%2, axis=[0])\n"
    "}\n";

/* The module's text with n as `n` ("n<=128", "n"). */
static const char *text_of(const char *n, char *text, size_t size) {
  snprintf(text, size, mlp, n);
  return text;
}

static void make_inputs(int64_t n, kiln_tensor_t **in) {
  in[0] = random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){n, 64}, -1, 1);
  for (int k = 1; k < 4; ++k) {
    in[k] = random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){64, 64}, -0.5, 0.5);
  }
}

static void release_all(int n, kiln_tensor_t **tensors) {
  for (int i = 0; i < n; ++i) {
    kiln_tensor_release(tensors[i]);
  }
}

/* How many instructions of main named `op` the program has, and of those
 * alloc_storage ones of at least `min_bytes` (op "alloc_storage"). */
static int count_ops(const kiln_compiled_t *compiled, const char *op, json_int_t min_bytes) {
  json_t *root = NULL;
  KILN_ASSERT_OK(kiln_json_parse(compiled->vm_json, strlen(compiled->vm_json), "vm.json", &root));
  const json_t *code =
      json_object_get(json_array_get(json_object_get(root, "functions"), 0), "code");
  assert_non_null(code);
  int count = 0;
  for (size_t i = 0; i < json_array_size(code); ++i) {
    const json_t *ins = json_array_get(code, i);
    if (strcmp(json_string_value(json_array_get(ins, 0)), op) == 0 &&
        (min_bytes == 0 || json_integer_value(json_array_get(ins, 2)) >= min_bytes)) {
      ++count;
    }
  }
  json_decref(root);
  return count;
}

static void test_program_is_planned(void **state) {
  (void)state;
  char text[sizeof(mlp) + 16];
  kiln_compiled_t *compiled = irt_compile_vm("mlp", text_of("n<=128", text, sizeof(text)));
  const json_int_t value_bytes = 128 * 64 * 4; /* an (n, 64) value at its bound */
  assert_int_equal(count_ops(compiled, "alloc_storage_shape", 0), 0);
  assert_int_equal(count_ops(compiled, "alloc_tensor_reg", 0), 3);
  /* three (n, 64) values, two storages: the third takes the first's */
  assert_int_equal(count_ops(compiled, "alloc_storage", value_bytes), 2);
  kiln_compile_stats_t stats;
  kiln_compiled_get_stats(compiled, &stats);
  assert_int_equal(stats.planned_bytes, 2 * value_bytes);
  assert_int_equal(stats.tensor_bytes, 3 * value_bytes);
  kiln_compiled_destroy(compiled);
  compiled = irt_compile_vm("mlp", text_of("n", text, sizeof(text)));
  assert_int_equal(count_ops(compiled, "alloc_storage_shape", 0), 3);
  assert_int_equal(count_ops(compiled, "alloc_storage", value_bytes), 0);
  kiln_compiled_destroy(compiled);
}

static void test_matches_interpreter(void **state) {
  (void)state;
  char text[sizeof(mlp) + 16];
  vm_pair_t pair = vm_pair_open("mlp", text_of("n<=128", text, sizeof(text)));
  const int64_t sizes[] = {1, 17, 128, 5};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
    kiln_tensor_t *in[4];
    make_inputs(sizes[s], in);
    assert_int_equal(irt_run_against_interp(pair.reference, pair.vm, 4, in, "bounded mlp"), 1);
    release_all(4, in);
  }
  vm_pair_close(&pair);
}

/* The allocator's live bytes after a zero-copy run at n. */
static int64_t held_after(kiln_graph_executor_t *vm, kiln_counting_allocator_t *counting,
                          int64_t n) {
  kiln_tensor_t *in[4];
  make_inputs(n, in);
  for (int i = 0; i < 4; ++i) {
    KILN_ASSERT_OK(kiln_graph_executor_set_input_zero_copy(vm, i, kiln_tensor_dl(in[i])));
  }
  KILN_ASSERT_OK(kiln_graph_executor_run(vm));
  int64_t held = kiln_counting_allocator_counts(counting).live_bytes;
  release_all(4, in);
  return held;
}

static void test_memory_fixed_by_the_plan(void **state) {
  (void)state;
  char text[sizeof(mlp) + 16];
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_module_t *module = irt_parse("mlp", text_of("n<=128", text, sizeof(text)));
  KILN_ASSERT_OK(kiln_ir_infer_types(module));
  kiln_compiler_options_t options = kiln_compiler_options_default();
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(
      kiln_compiler_build(kiln_counting_allocator_get(&counting), module, &options, &compiled));
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  int64_t small = held_after(vm, &counting, 1);
  assert_int_equal(held_after(vm, &counting, 128), small);
  assert_int_equal(held_after(vm, &counting, 1), small);
  kiln_graph_executor_destroy(vm);
  kiln_compiled_destroy(compiled);
  kiln_module_destroy(module);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);
}

static void test_above_bound_refused(void **state) {
  (void)state;
  char text[sizeof(mlp) + 16];
  kiln_compiled_t *compiled = irt_compile_vm("mlp", text_of("n<=128", text, sizeof(text)));
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  kiln_tensor_t *in[4];
  make_inputs(129, in);
  for (int i = 0; i < 4; ++i) {
    KILN_ASSERT_OK(kiln_graph_executor_set_input(vm, i, kiln_tensor_dl(in[i])));
  }
  kiln_status_t status = kiln_graph_executor_run(vm);
  assert_non_null(status);
  assert_non_null(
      strstr(kiln_status_message(status), "the symbolic dim n is above its upper bound 128"));
  kiln_status_free(status);
  release_all(4, in);
  kiln_graph_executor_destroy(vm);
  kiln_compiled_destroy(compiled);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_program_is_planned),
      cmocka_unit_test(test_matches_interpreter),
      cmocka_unit_test(test_memory_fixed_by_the_plan),
      cmocka_unit_test(test_above_bound_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
