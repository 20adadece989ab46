/*
 * Helpers of the compute-rule tests; see kiln_compute_test.h.
 */
#include "kiln_compute_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/target.h"
#include "kiln/module.h"
#include "kiln/parallel.h"
#include "tir/interp.h"
#include "tir/printer.h"
#include "tir/transform.h"

static uint64_t stream_counter;
static const kiln_schedule_config_t *test_config;

void check_compute_set_config(const kiln_schedule_config_t *config) {
  test_config = config;
}

void check_compute_pin(const char *config) {
  static kiln_schedule_config_t pinned;
  KILN_ASSERT_OK(kiln_schedule_config_parse(config, &pinned));
  test_config = &pinned;
}

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static void store_double(kiln_tensor_t *t, int64_t i, double v) {
  void *data = kiln_tensor_data(t);
  switch (kiln_tensor_dtype(t)) {
  case KILN_DTYPE_FLOAT32:
    ((float *)data)[i] = (float)v;
    break;
  case KILN_DTYPE_FLOAT64:
    ((double *)data)[i] = v;
    break;
  case KILN_DTYPE_INT8:
    ((int8_t *)data)[i] = (int8_t)v;
    break;
  case KILN_DTYPE_INT16:
    ((int16_t *)data)[i] = (int16_t)v;
    break;
  case KILN_DTYPE_INT32:
    ((int32_t *)data)[i] = (int32_t)v;
    break;
  case KILN_DTYPE_INT64:
    ((int64_t *)data)[i] = (int64_t)v;
    break;
  case KILN_DTYPE_UINT8:
  case KILN_DTYPE_BOOL:
    ((uint8_t *)data)[i] = (uint8_t)v;
    break;
  case KILN_DTYPE_UINT16:
    ((uint16_t *)data)[i] = (uint16_t)v;
    break;
  case KILN_DTYPE_UINT32:
    ((uint32_t *)data)[i] = (uint32_t)v;
    break;
  case KILN_DTYPE_UINT64:
  case KILN_DTYPE_FLOAT16:
  case KILN_DTYPE_BFLOAT16:
  case KILN_DTYPE_COUNT_:
    fail_msg("random_tensor: dtype %s is not supported", kiln_dtype_name(kiln_tensor_dtype(t)));
  }
}

kiln_tensor_t *random_tensor(kiln_dtype_t dtype, int ndim, const int64_t *shape, double lo,
                             double hi) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), dtype, ndim, shape, &t));
  uint64_t state = ++stream_counter * UINT64_C(0x2545F4914F6CDD1D);
  int is_float = dtype == KILN_DTYPE_FLOAT32 || dtype == KILN_DTYPE_FLOAT64;
  for (int64_t i = 0; i < kiln_tensor_element_count(t); ++i) {
    double u = (double)(splitmix64(&state) >> 11) * 0x1.0p-53; /* [0, 1) */
    double v = dtype == KILN_DTYPE_BOOL ? (u < 0.5 ? 0.0 : 1.0)
               : is_float               ? lo + u * (hi - lo)
                                        : floor(lo + u * (hi - lo + 1.0));
    store_double(t, i, v);
  }
  return t;
}

static int close_enough(double got, double want) {
  if (isnan(want) || isnan(got)) {
    return isnan(want) && isnan(got);
  }
  if (isinf(want) || isinf(got)) {
    return got == want;
  }
  return fabs(got - want) <= 1e-5 + 1e-4 * fabs(want);
}

/* 0: the loop IR as lowered, 1: after the passes. */
static const char *stage_text(int stage) {
  return stage == 0 ? "through the loop IR" : "through the loop IR after the lowering passes";
}

static void assert_outputs_agree(const kiln_op_t *op, const char *func, const char *stage,
                                 int index, const kiln_tensor_t *got, const kiln_tensor_t *want) {
  int is_float = kiln_tensor_dtype(want) == KILN_DTYPE_FLOAT32 ||
                 kiln_tensor_dtype(want) == KILN_DTYPE_FLOAT64;
  for (int64_t i = 0; i < kiln_tensor_element_count(want); ++i) {
    double g = kiln_tensor_element_as_double(got, i);
    double w = kiln_tensor_element_as_double(want, i);
    if (is_float ? !close_enough(g, w) : g != w) {
      fail_msg("%s (%s): output %d element %lld is %.9g %s, %.9g in the reference", op->name, func,
               index, (long long)i, g, stage, w);
    }
  }
}

/* The targets every queued case runs through: the C backend and, when
 * built, the LLVM backend's object-file and JIT modules (without keeping
 * their assembly, a second code generation the cases do not read). */
static const char *const backend_targets[] = {
    "c",
#ifdef KILN_HAVE_LLVM
    "llvm -noasm",
    "llvm -jit -noasm",
#endif
};

/* A case whose backend runs wait for the batch's compilation: the
 * function (in kiln_op_test_arena), its arguments and the reference outputs
 * (the case holds a reference to each). */
typedef struct pending_t {
  const kiln_op_t *op;
  const kiln_tir_prim_func_t *func;
  int num_inputs;
  int num_outputs;
  kiln_tensor_t *args[KILN_TE_MAX_INPUTS + KILN_COMPUTE_MAX_OUTPUTS];
  kiln_tensor_t *want[KILN_COMPUTE_MAX_OUTPUTS];
} pending_t;

#define KILN_COMPUTE_TEST_BATCH 48

static pending_t pending[KILN_COMPUTE_TEST_BATCH];
static int num_pending;
static int num_compiled;

/* Runs one case with 1, 2 and 3 threads (fresh poison each time). */
static void run_pending(const kiln_runtime_module_t *module, const char *target,
                        const pending_t *p) {
  int threads_before = kiln_parallel_get_num_threads();
  int num_args = p->num_inputs + p->num_outputs;
  for (int threads = 1; threads <= 3; ++threads) {
    KILN_ASSERT_OK(kiln_parallel_set_num_threads(threads));
    for (int i = p->num_inputs; i < num_args; ++i) {
      memset(kiln_tensor_data(p->args[i]), 0x7f, kiln_tensor_byte_size(p->args[i]));
    }
    KILN_ASSERT_OK(kiln_runtime_module_call(module, p->func->name, num_args, p->args));
    char stage[96];
    snprintf(stage, sizeof(stage), "through target \"%s\" with %d thread%s", target, threads,
             threads > 1 ? "s" : "");
    for (int i = 0; i < p->num_outputs; ++i) {
      assert_outputs_agree(p->op, p->func->name, stage, i, p->args[p->num_inputs + i], p->want[i]);
    }
  }
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(threads_before));
}

static void release_pending(pending_t *cases, int count) {
  for (int c = 0; c < count; ++c) {
    for (int i = 0; i < cases[c].num_inputs + cases[c].num_outputs; ++i) {
      kiln_tensor_release(cases[c].args[i]);
    }
    for (int i = 0; i < cases[c].num_outputs; ++i) {
      kiln_tensor_release(cases[c].want[i]);
    }
  }
}

void check_compute_flush(void) {
  test_config = NULL;
  /* Take the batch first: a failing assertion leaves nothing half-queued. */
  static pending_t batch[KILN_COMPUTE_TEST_BATCH];
  int count = num_pending;
  memcpy(batch, pending, (size_t)count * sizeof(batch[0]));
  num_pending = 0;
  if (count == 0) {
    return;
  }
  const kiln_tir_prim_func_t *funcs[KILN_COMPUTE_TEST_BATCH];
  for (int c = 0; c < count; ++c) {
    funcs[c] = batch[c].func;
  }
  for (size_t t = 0; t < sizeof(backend_targets) / sizeof(backend_targets[0]); ++t) {
    kiln_runtime_module_t *module = NULL;
    KILN_ASSERT_OK(
        kiln_codegen_build(kiln_allocator_system(), backend_targets[t], funcs, count, &module));
    for (int c = 0; c < count; ++c) {
      run_pending(module, backend_targets[t], &batch[c]);
    }
    kiln_runtime_module_release(module);
  }
  release_pending(batch, count);
}

/* Queues `func` for the backends; the batch compiles when full or at
 * teardown. */
static void queue_c_backend(const kiln_op_t *op, const kiln_tir_prim_func_t *func, int num_inputs,
                            int num_outputs, kiln_tensor_t *const *args,
                            kiln_tensor_t *const *want) {
  pending_t *p = &pending[num_pending++];
  p->op = op;
  p->func = func;
  p->num_inputs = num_inputs;
  p->num_outputs = num_outputs;
  for (int i = 0; i < num_inputs + num_outputs; ++i) {
    p->args[i] = args[i];
    kiln_tensor_retain(args[i]);
  }
  for (int i = 0; i < num_outputs; ++i) {
    p->want[i] = want[i];
    kiln_tensor_retain(want[i]);
  }
  if (num_pending == KILN_COMPUTE_TEST_BATCH) {
    check_compute_flush();
  }
}

static int output_types(const kiln_type_t *type, const kiln_tensor_type_t **out_types) {
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  int count = tuple ? tuple->count : 1;
  for (int i = 0; i < count; ++i) {
    out_types[i] = kiln_type_as_tensor(tuple ? tuple->fields[i] : type);
    assert_non_null(out_types[i]);
  }
  return count;
}

static kiln_tensor_t *new_output(const kiln_tensor_type_t *type, int poison) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create(kiln_allocator_system(), type->dtype, type->ndim, type->shape, &t));
  memset(kiln_tensor_data(t), poison ? 0x7f : 0, kiln_tensor_byte_size(t));
  return t;
}

void check_compute(const kiln_op_t *op, const void *attrs, int num_inputs,
                   kiln_tensor_t *const *inputs) {
  const kiln_type_t *types[KILN_TE_MAX_INPUTS];
  assert_true(num_inputs <= KILN_TE_MAX_INPUTS);
  for (int i = 0; i < num_inputs; ++i) {
    KILN_ASSERT_OK(kiln_tensor_type_of(&kiln_op_test_arena, inputs[i], &types[i]));
  }
  const kiln_type_t *out_type = NULL;
  KILN_ASSERT_OK(infer(op, attrs, num_inputs, types, &out_type));
  const kiln_tensor_type_t *out_types[KILN_COMPUTE_MAX_OUTPUTS];
  int num_outputs = output_types(out_type, out_types);
  kiln_tensor_t *want[KILN_COMPUTE_MAX_OUTPUTS],
      *args[KILN_TE_MAX_INPUTS + KILN_COMPUTE_MAX_OUTPUTS];
  memcpy(args, inputs, (size_t)num_inputs * sizeof(*args));
  for (int i = 0; i < num_outputs; ++i) {
    want[i] = new_output(out_types[i], 0);
    args[num_inputs + i] = new_output(out_types[i], 1);
  }
  kiln_kernel_args_t kernel = {op, attrs, num_inputs, inputs, num_outputs, want};
  KILN_ASSERT_OK(kiln_op_reference_get(op->id)(&kernel));
  kiln_schedule_target_t target = {512, .config = test_config};
  const kiln_tir_prim_func_t *lowered = NULL, *passed = NULL;
  char *name = NULL; /* in the arena: the PrimFunc keeps the pointer */
  KILN_ASSERT_OK(kiln_arena_allocate(&kiln_op_test_arena, 32, 1, (void **)&name));
  snprintf(name, 32, "compute_%d", num_compiled++);
  KILN_ASSERT_OK(
      kiln_op_lower(op, attrs, num_inputs, types, &target, &kiln_op_test_arena, name, &lowered));
  kiln_tir_pipeline_options_t options = kiln_tir_pipeline_options_default();
  KILN_ASSERT_OK(kiln_tir_lower_pipeline(&kiln_op_test_arena, lowered, &options, &passed));
  /* As lowered from the schedule, then after the lowering passes. */
  const kiln_tir_prim_func_t *funcs[] = {lowered, passed};
  for (int f = 0; f < 2; ++f) {
    for (int i = 0; i < num_outputs; ++i) {
      memset(kiln_tensor_data(args[num_inputs + i]), 0x7f,
             kiln_tensor_byte_size(args[num_inputs + i]));
    }
    KILN_ASSERT_OK(
        kiln_tir_interp_run(kiln_allocator_system(), funcs[f], num_inputs + num_outputs, args));
    for (int i = 0; i < num_outputs; ++i) {
      assert_outputs_agree(op, funcs[f]->name, stage_text(f), i, args[num_inputs + i], want[i]);
    }
  }
  queue_c_backend(op, passed, num_inputs, num_outputs, args, want);
  for (int i = 0; i < num_outputs; ++i) {
    kiln_tensor_release(want[i]);
    kiln_tensor_release(args[num_inputs + i]);
  }
}

void check_compute_random(const kiln_op_t *op, const void *attrs, int num_inputs,
                          const kiln_type_t *const *types, double lo, double hi) {
  kiln_tensor_t *inputs[KILN_TE_MAX_INPUTS];
  assert_true(num_inputs <= KILN_TE_MAX_INPUTS);
  for (int i = 0; i < num_inputs; ++i) {
    const kiln_tensor_type_t *t = kiln_type_as_tensor(types[i]);
    inputs[i] = random_tensor(t->dtype, t->ndim, t->shape, lo, hi);
  }
  check_compute(op, attrs, num_inputs, inputs);
  for (int i = 0; i < num_inputs; ++i) {
    kiln_tensor_release(inputs[i]);
  }
}

static const char *func_text(const kiln_op_t *op, const void *attrs, int num_inputs,
                             const kiln_type_t *const *types, int target_bits, int passes) {
  kiln_schedule_target_t target = {target_bits, .config = test_config};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(
      kiln_op_lower(op, attrs, num_inputs, types, &target, &kiln_op_test_arena, "main", &func));
  if (passes) {
    kiln_tir_pipeline_options_t options = kiln_tir_pipeline_options_default();
    KILN_ASSERT_OK(kiln_tir_lower_pipeline(&kiln_op_test_arena, func, &options, &func));
  }
  char *text = NULL;
  KILN_ASSERT_OK(
      kiln_tir_prim_func_to_text(kiln_arena_allocator(&kiln_op_test_arena), func, &text));
  return text;
}

const char *lowered_text(const kiln_op_t *op, const void *attrs, int num_inputs,
                         const kiln_type_t *const *types, int target_bits) {
  return func_text(op, attrs, num_inputs, types, target_bits, 0);
}

const char *passed_text(const kiln_op_t *op, const void *attrs, int num_inputs,
                        const kiln_type_t *const *types, int target_bits) {
  return func_text(op, attrs, num_inputs, types, target_bits, 1);
}
