/*
 * plan_memory (pass/plan_memory.h): reuse along a chain (a-b-c-d needs two
 * storages), the size factor (no reuse across more than 16x, a smaller free
 * storage grown), dtypes kept apart, tuple fields planned one by one, main's
 * results external; a concatenate planned in place (its inputs at their
 * offsets in its storage) and those that may not be; the pass's report; the errors; allocation
 * failures; and on every built-in workload after fuse_ops, that no two tensors alive at the same
 * time share a storage (every pair checked against lifetimes this test computes itself), with
 * resnet18's numbers printed.
 */
#include <string.h>

#include "base/log.h"
#include "frontend/testing/workloads.h"
#include "ir/params.h"
#include "kiln_ir_test.h"
#include "kiln_pass_test.h"
#include "pass/dominator.h"
#include "pass/plan_memory.h"

static kiln_memory_plan_t *plan_of(const kiln_module_t *m) {
  kiln_memory_plan_t *plan = NULL;
  KILN_ASSERT_OK(kiln_pass_plan_memory_compute(m, kiln_allocator_system(), &plan));
  return plan;
}

/* The storage of the %N-th call of main in post order, field `field`. */
static int storage_of(const kiln_module_t *m, const kiln_memory_plan_t *plan, int call_number,
                      int field) {
  int seen = 0;
  for (int i = 0; i < plan->num_entries; ++i) {
    if (plan->entries[i].field == 0) {
      seen += 1;
    }
    if (seen == call_number + 1 && plan->entries[i].field == field) {
      return plan->entries[i].storage_id;
    }
  }
  (void)m;
  fail_msg("no call %d field %d in the plan", call_number, field);
  return -2;
}

#define CHAIN                                  \
  "def @main(%x: Tensor[(4, 4), float32]) {\n" \
  "  %0 = nn.relu(%x);\n"                      \
  "  %1 = exp(%0);\n"                          \
  "  %2 = negative(%1);\n"                     \
  "  %3 = abs(%2);\n"                          \
  "  %3\n"                                     \
  "}\n"

static void test_chain_needs_two_storages(void **state) {
  (void)state;
  kiln_module_t *m = kpt_parse(CHAIN);
  kiln_memory_plan_t *plan = plan_of(m);
  assert_int_equal(plan->num_entries, 4);
  assert_int_equal(plan->num_storages, 2);
  assert_int_equal(storage_of(m, plan, 0, 0), 0);
  assert_int_equal(storage_of(m, plan, 1, 0), 1);
  assert_int_equal(storage_of(m, plan, 2, 0), 0);
  assert_int_equal(storage_of(m, plan, 3, 0), -1); /* the result */
  assert_int_equal(plan->storages[0].bytes, 64);
  assert_int_equal(plan->planned_bytes, 128);
  assert_int_equal(plan->tensor_bytes, 192);
  assert_int_equal(plan->entries[0].bytes, 64);
  assert_int_equal(plan->entries[0].dtype, KILN_DTYPE_FLOAT32);
  kiln_function_t *main_fn = kiln_module_get_function(m, "main");
  const kiln_memory_plan_entry_t *last = kiln_memory_plan_find(plan, main_fn->body, 0);
  assert_non_null(last);
  assert_int_equal(last->storage_id, -1);
  assert_null(kiln_memory_plan_find(plan, main_fn->body, 1));
  assert_null(kiln_memory_plan_find(plan, &main_fn->params[0]->base, 0));
  kiln_pass_plan_memory_destroy(plan);
  kiln_module_destroy(m);
}

/* a (16 KiB) dies after the sum; c (256 bytes) may not take its storage. */
#define FACTOR                                   \
  "def @main(%x: Tensor[(64, 64), float32]) {\n" \
  "  %0 = nn.relu(%x);\n"                        \
  "  %1 = sum(%0, axis=[1]);\n"                  \
  "  %2 = exp(%1);\n"                            \
  "  %3 = exp(%2);\n"                            \
  "  %3\n"                                       \
  "}\n"

/* c (512 bytes) takes a's free 256-byte storage and grows it. */
#define GROW                                    \
  "def @main(%x: Tensor[(1, 64), float32]) {\n" \
  "  %0 = nn.relu(%x);\n"                       \
  "  %1 = exp(%0);\n"                           \
  "  %2 = concatenate(%1, %1);\n"               \
  "  %3 = nn.relu(%2);\n"                       \
  "  %3\n"                                      \
  "}\n"

/* An int64 tensor does not reuse a float32 storage. */
#define DTYPES                                 \
  "def @main(%x: Tensor[(4, 4), float32]) {\n" \
  "  %0 = nn.relu(%x);\n"                      \
  "  %1 = exp(%0);\n"                          \
  "  %2 = cast(%1, dtype=\"int64\");\n"        \
  "  %3 = cast(%2, dtype=\"float32\");\n"      \
  "  %3\n"                                     \
  "}\n"

static void test_sizes_and_dtypes(void **state) {
  (void)state;
  kiln_module_t *m = kpt_parse(FACTOR);
  kiln_memory_plan_t *plan = plan_of(m);
  assert_int_equal(plan->num_storages, 3);
  assert_int_equal(plan->storages[0].bytes, 16384);
  assert_int_equal(storage_of(m, plan, 2, 0), 2);
  kiln_pass_plan_memory_destroy(plan);
  kiln_module_destroy(m);

  m = kpt_parse(GROW);
  plan = plan_of(m);
  assert_int_equal(plan->num_storages, 2);
  assert_int_equal(storage_of(m, plan, 2, 0), 0);
  assert_int_equal(plan->storages[0].bytes, 512);
  assert_int_equal(plan->storages[1].bytes, 256);
  kiln_pass_plan_memory_destroy(plan);
  kiln_module_destroy(m);

  m = kpt_parse(DTYPES);
  plan = plan_of(m);
  assert_int_equal(plan->num_storages, 3);
  assert_int_equal(storage_of(m, plan, 2, 0), 2);
  assert_int_equal(plan->storages[2].dtype, KILN_DTYPE_INT64);
  assert_int_equal(plan->storages[2].bytes, 128);
  kiln_pass_plan_memory_destroy(plan);
  kiln_module_destroy(m);
}

/* Field 0 of the split dies at %3, field 1 lives until %5; field 1 is also
 * a result through the tuple, field 0 of the exp is not. */
#define SPLIT                                  \
  "def @main(%x: Tensor[(2, 6), float32]) {\n" \
  "  %0 = split(%x, sections=2, axis=1);\n"    \
  "  %1 = %0.0;\n"                             \
  "  %2 = nn.relu(%1);\n"                      \
  "  %3 = exp(%2);\n"                          \
  "  %4 = %0.1;\n"                             \
  "  %5 = add(%3, %4);\n"                      \
  "  (%5, %4)\n"                               \
  "}\n"

static void test_tuple_fields(void **state) {
  (void)state;
  kiln_module_t *m = kpt_parse(SPLIT);
  kiln_memory_plan_t *plan = plan_of(m);
  assert_int_equal(plan->num_entries, 5);
  assert_int_equal(plan->entries[0].field, 0);
  assert_int_equal(plan->entries[1].field, 1);
  assert_int_equal(plan->entries[0].storage_id, 0);
  assert_int_equal(plan->entries[1].storage_id, -1); /* returned through the tuple */
  assert_int_equal(plan->entries[2].storage_id, 1);  /* relu: the split's field 0 is alive */
  assert_int_equal(plan->entries[3].storage_id, 0);  /* exp takes field 0's storage */
  assert_int_equal(plan->entries[4].storage_id, -1);
  assert_int_equal(plan->num_storages, 2);
  kiln_pass_plan_memory_destroy(plan);
  kiln_module_destroy(m);
}

/* ---- lifetimes, computed here ---- */

typedef struct lifetimes_t {
  kiln_array_t nodes;
  kiln_hashmap_t index;
} lifetimes_t;

/* Whether `arg` hands entry (expr, field) to its reader. */
static bool carries(const kiln_expr_t *arg, const kiln_memory_plan_entry_t *entry) {
  kiln_tuple_get_item_t *item = kiln_expr_as_tuple_get_item(arg);
  kiln_tuple_t *tuple = kiln_expr_as_tuple(arg);
  if (arg == entry->expr) {
    return true;
  }
  if (item) {
    return item->tuple == entry->expr ? item->index == entry->field : carries(item->tuple, entry);
  }
  for (int i = 0; tuple && i < tuple->num_fields; ++i) {
    if (carries(tuple->fields[i], entry)) {
      return true;
    }
  }
  return false;
}

static void lifetime(const lifetimes_t *l, const kiln_memory_plan_entry_t *entry, int32_t *first,
                     int32_t *last) {
  *first = kiln_dataflow_order_index(&l->index, entry->expr);
  *last = *first;
  for (size_t j = 0; j < kiln_array_count(&l->nodes); ++j) {
    kiln_call_t *call = kiln_expr_as_call(KILN_ARRAY_AT(&l->nodes, kiln_expr_t *, j));
    for (int a = 0; call && a < call->num_args; ++a) {
      if (carries(call->args[a], entry)) {
        *last = (int32_t)j > *last ? (int32_t)j : *last;
      }
    }
  }
}

/* Whether entries i and j may share bytes while both alive: their byte
 * ranges are disjoint (the inputs of an in-place concatenate), or one is an
 * in-place concatenate and the other one of its inputs, lying inside it. */
static bool apart(const kiln_memory_plan_t *plan, int i, int j) {
  const kiln_memory_plan_entry_t *a = &plan->entries[i], *b = &plan->entries[j];
  if (a->offset + a->bytes <= b->offset || b->offset + b->bytes <= a->offset) {
    return true;
  }
  const kiln_memory_plan_entry_t *whole = a->in_place ? a : b->in_place ? b : NULL;
  const kiln_memory_plan_entry_t *part = whole == a ? b : a;
  const kiln_call_t *call = whole ? kiln_expr_as_call(whole->expr) : NULL;
  for (int k = 0; call && k < call->num_args; ++k) {
    if (call->args[k] == part->expr) {
      return part->offset >= whole->offset &&
             part->offset + part->bytes <= whole->offset + whole->bytes;
    }
  }
  return false;
}

/* Every pair of tensors sharing a storage has disjoint lifetimes (or bytes:
 * an in-place concatenate's inputs lie in its output); every
 * storage holds its tensors' dtype and size; the results are external. */
static void check_plan(const kiln_module_t *m, const kiln_memory_plan_t *plan) {
  lifetimes_t l;
  kiln_array_initialize(&l.nodes, kiln_allocator_system(), sizeof(kiln_expr_t *));
  kiln_hashmap_initialize(&l.index, kiln_allocator_system(), KILN_HASHMAP_KEY_POINTER);
  kiln_function_t *main_fn = kiln_module_get_function(m, "main");
  KILN_ASSERT_OK(kiln_dataflow_order_compute(main_fn, &l.nodes, &l.index));
  int32_t *first = calloc((size_t)plan->num_entries + 1, sizeof(int32_t));
  int32_t *last = calloc((size_t)plan->num_entries + 1, sizeof(int32_t));
  for (int i = 0; i < plan->num_entries; ++i) {
    const kiln_memory_plan_entry_t *e = &plan->entries[i];
    lifetime(&l, e, &first[i], &last[i]);
    assert_int_equal(e->storage_id < 0, carries(main_fn->body, e));
    if (e->storage_id >= 0) {
      assert_true(e->storage_id < plan->num_storages);
      assert_true(plan->storages[e->storage_id].bytes >= e->offset + e->bytes);
      assert_int_equal(plan->storages[e->storage_id].dtype, e->dtype);
      assert_int_equal(plan->storages[e->storage_id].bytes % KILN_MEMORY_PLAN_ALIGNMENT, 0);
    }
  }
  for (int i = 0; i < plan->num_entries; ++i) {
    for (int j = i + 1; j < plan->num_entries; ++j) {
      if (plan->entries[i].storage_id >= 0 &&
          plan->entries[i].storage_id == plan->entries[j].storage_id &&
          !(last[i] < first[j] || last[j] < first[i]) && !apart(plan, i, j)) {
        fail_msg("entries %d [%d, %d] and %d [%d, %d] share storage %d", i, first[i], last[i], j,
                 first[j], last[j], plan->entries[i].storage_id);
      }
    }
  }
  free(first);
  free(last);
  kiln_array_deinitialize(&l.nodes);
  kiln_hashmap_deinitialize(&l.index);
}

static void test_plans_of_the_texts_are_sound(void **state) {
  (void)state;
  const char *texts[] = {CHAIN, FACTOR, GROW, DTYPES, SPLIT};
  for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); ++i) {
    for (int opt_level = 0; opt_level <= 2; opt_level += 2) {
      kiln_module_t *m = kpt_parse(texts[i]);
      kiln_pass_context_t *context = kpt_context(opt_level);
      KILN_ASSERT_OK(kpt_run(m, context, "fuse_ops"));
      kiln_pass_context_destroy(context);
      kiln_memory_plan_t *plan = plan_of(m);
      check_plan(m, plan);
      kiln_pass_plan_memory_destroy(plan);
      kiln_module_destroy(m);
    }
  }
}

/* ---- concatenation in place ---- */

/* relu and exp of x (256 bytes each), concatenated on channels: in place;
 * a second concatenate of exp(x) with x itself (a parameter) and a third
 * of two tensors one of which another op also reads: copies. */
#define CONCAT                                       \
  "def @main(%x: Tensor[(1, 4, 4, 4), float32]) {\n" \
  "  %0 = nn.relu(%x);\n"                            \
  "  %1 = exp(%x);\n"                                \
  "  %2 = concatenate(%0, %1, axis=1);\n"            \
  "  %3 = negative(%2);\n"                           \
  "  %4 = exp(%3);\n"                                \
  "  %5 = concatenate(%4, %x, axis=1);\n"            \
  "  %6 = abs(%5);\n"                                \
  "  %7 = sigmoid(%6);\n"                            \
  "  %8 = concatenate(%6, %7, axis=1);\n"            \
  "  %8\n"                                           \
  "}\n"
/* Batch 2 (an input is not one run of the output's bytes), and inputs of
 * 12 bytes (offsets off the alignment): copies. */
#define CONCAT_NOT                                                                \
  "def @main(%x: Tensor[(2, 4, 4, 4), float32], %y: Tensor[(1, 3), float32]) {\n" \
  "  %0 = nn.relu(%x);\n"                                                         \
  "  %1 = exp(%x);\n"                                                             \
  "  %2 = concatenate(%0, %1, axis=1);\n"                                         \
  "  %3 = nn.relu(%y);\n"                                                         \
  "  %4 = exp(%y);\n"                                                             \
  "  %5 = concatenate(%3, %4, axis=1);\n"                                         \
  "  (negative(%2), negative(%5))\n"                                              \
  "}\n"

static int count_in_place(const kiln_memory_plan_t *plan) {
  int count = 0;
  for (int i = 0; i < plan->num_entries; ++i) {
    count += plan->entries[i].in_place;
  }
  return count;
}

static kiln_module_t *fused_alone(const char *text) {
  kiln_module_t *m = kpt_parse(text);
  kiln_pass_context_t *context = kpt_context(0); /* every op its own kernel */
  KILN_ASSERT_OK(kpt_run(m, context, "fuse_ops"));
  kiln_pass_context_destroy(context);
  return m;
}

static void test_concatenate_in_place(void **state) {
  (void)state;
  kiln_module_t *m = fused_alone(CONCAT);
  kiln_memory_plan_t *plan = plan_of(m);
  check_plan(m, plan);
  assert_int_equal(count_in_place(plan), 1);
  const kiln_memory_plan_entry_t *relu = &plan->entries[0], *exp = &plan->entries[1];
  const kiln_memory_plan_entry_t *whole = &plan->entries[2];
  assert_true(whole->in_place);
  assert_int_equal(relu->storage_id, whole->storage_id);
  assert_int_equal(exp->storage_id, whole->storage_id);
  assert_int_equal(relu->offset, 0);
  assert_int_equal(exp->offset, 256);
  assert_true(plan->storages[whole->storage_id].bytes >= 512);
  kiln_pass_plan_memory_destroy(plan);
  kiln_module_destroy(m);
  m = fused_alone(CONCAT_NOT);
  plan = plan_of(m);
  check_plan(m, plan);
  assert_int_equal(count_in_place(plan), 0);
  kiln_pass_plan_memory_destroy(plan);
  kiln_module_destroy(m);
}

/* ---- the pass ---- */

static char captured[512];

static void capture(void *self, kiln_log_level_t level, const char *file, int line,
                    const char *message) {
  (void)self;
  (void)level;
  (void)file;
  (void)line;
  snprintf(captured, sizeof(captured), "%s", message);
}

static void test_pass_reports_the_plan(void **state) {
  (void)state;
  kiln_module_t *m = kpt_parse(CHAIN);
  kiln_log_level_t level = kiln_log_level();
  kiln_log_set_sink(capture, NULL);
  kiln_log_set_level(KILN_LOG_LEVEL_INFO);
  kiln_pass_context_t *context = kpt_context(0);
  KILN_ASSERT_OK(kpt_run(m, context, "fuse_ops plan_memory"));
  kiln_pass_context_destroy(context);
  kiln_log_set_sink(NULL, NULL);
  kiln_log_set_level(level);
  assert_string_equal(captured, "plan_memory: 2 storages, 128 bytes, against 192 bytes for all "
                                "tensors");
  kiln_module_destroy(m);
}

static void test_identity_plans_nothing(void **state) {
  (void)state;
  kiln_module_t *m = kpt_parse("def @main(%x: Tensor[(2), float32]) {\n  %x\n}\n");
  kiln_pass_context_t *context = kpt_context(2);
  KILN_ASSERT_OK(kpt_run(m, context, "fuse_ops plan_memory"));
  kiln_pass_context_destroy(context);
  kiln_memory_plan_t *plan = plan_of(m);
  assert_int_equal(plan->num_entries, 0);
  assert_int_equal(plan->num_storages, 0);
  assert_int_equal(plan->planned_bytes, 0);
  kiln_pass_plan_memory_destroy(plan);
  kiln_module_destroy(m);
}

static void test_errors(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  irt_add_function(m, "other", 1, &x, IRT_CALL(m, "nn.relu", NULL, &x->base));
  kiln_memory_plan_t *plan = NULL;
  KILN_ASSERT_STATUS(kiln_pass_plan_memory_compute(m, kiln_allocator_system(), &plan), NOT_FOUND,
                     "plan_memory: the module has no function @main");
  assert_null(plan);
  kiln_module_destroy(m);

  m = irt_module();
  x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  irt_add_function(m, "main", 1, &x, IRT_CALL(m, "nn.relu", NULL, &x->base));
  KILN_ASSERT_STATUS(kiln_pass_plan_memory_compute(m, kiln_allocator_system(), &plan),
                     FAILED_PRECONDITION,
                     "plan_memory needs types: in @main, a Var has no checked type (run "
                     "infer_type first)");
  kiln_module_destroy(m);
}

static kiln_status_t plan_scenario(kiln_allocator_t allocator, void *data) {
  kiln_module_t *m = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_parse_module("before", data, allocator, &m));
  kiln_memory_plan_t *plan = NULL;
  kiln_status_t status = kiln_pass_plan_memory_compute(m, allocator, &plan);
  kiln_pass_plan_memory_destroy(plan);
  kiln_module_destroy(m);
  return status;
}

static char split_text[] = SPLIT;

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(plan_scenario, split_text) > 10);
}

static void test_workloads(void **state) {
  (void)state;
  for (const char *const *name = kiln_workload_names(); *name; ++name) {
    kiln_workload_options_t options = kiln_workload_options_default();
    kiln_params_t params;
    kiln_params_initialize(&params, kiln_allocator_system());
    kiln_module_t *m = NULL;
    KILN_ASSERT_OK(kiln_workload_build(*name, &options, kiln_allocator_system(), &params, &m));
    KILN_ASSERT_OK(kiln_ir_bind_params(m, "main", &params));
    kiln_pass_context_t *context = kpt_context(2);
    KILN_ASSERT_OK(kpt_run(m, context, "fuse_ops plan_memory"));
    kiln_pass_context_destroy(context);
    kiln_memory_plan_t *plan = plan_of(m);
    check_plan(m, plan);
    printf("%-14s %3d tensors in %2d storages: %9zu bytes against %9zu\n", *name, plan->num_entries,
           plan->num_storages, plan->planned_bytes, plan->tensor_bytes);
    assert_true(plan->planned_bytes <= plan->tensor_bytes);
    if (strcmp(*name, "mlp") != 0) { /* mlp: two tensors, both alive at the second dense */
      assert_true(plan->planned_bytes < plan->tensor_bytes / 2);
    }
    if (strcmp(*name, "resnet18") == 0) {
      assert_int_equal(plan->num_entries, 24);
      assert_int_equal(plan->num_storages, 6);
    }
    kiln_pass_plan_memory_destroy(plan);
    kiln_module_destroy(m);
    kiln_params_deinitialize(&params);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chain_needs_two_storages),
      cmocka_unit_test(test_sizes_and_dtypes),
      cmocka_unit_test(test_tuple_fields),
      cmocka_unit_test(test_plans_of_the_texts_are_sound),
      cmocka_unit_test(test_concatenate_in_place),
      cmocka_unit_test(test_pass_reports_the_plan),
      cmocka_unit_test(test_identity_plans_nothing),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_allocation_failures),
      cmocka_unit_test(test_workloads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
