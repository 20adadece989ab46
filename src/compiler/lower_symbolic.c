/*
 * Lowering a function whose parameters have symbolic dims to one kernel
 * over run-time extents (lower.h).
 *
 * Compute rules, schedules and te lowering are written for static shapes,
 * as type relations are. So, as type inference does with its probe
 * (op/symbolic.c), the function is lowered KILN_TIR_GENERALIZE_RUNS times,
 * each time copied into a scratch module whose parameters have every
 * dimension variable replaced by a probe size (by name; each anonymous dim
 * is its own variable) and typed again; then tir/generalize.h turns the
 * probe kernels into one whose extents are expressions of variables the
 * kernel binds from its arguments' shapes. A function that is one call of
 * a dyn operator with a probe form (op/dyn.h, dyn.broadcast_to) probes its
 * output's symbolic dims too and lowers the static operator at that shape:
 * the kernel binds them from its output buffer, which the VM sizes with
 * the runtime's shape function. The probes are primes (the
 * table below); the probe runs keep every split's guard and are not
 * simplified (te/schedule.h), so their structure never depends on what
 * the sizes divide, and the generalized kernel's guards hold at every size.
 * A dyn output whose elements would pass int32 at those sizes (four
 * run-time dims) is probed at a table of smaller primes instead. A
 * parameter with a static dim of 0 is refused (te takes no empty buffer).
 * Dims whose type relation needs them equal (an add of `?` and `n`) are
 * probed as one variable, which the kernel checks at run time
 * (choose_slots). An error names the probe run and its sizes.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/lower.h"
#include "ir/functor.h"
#include "ir/infer.h"
#include "op/dyn.h"
#include "tir/generalize.h"

#define RUNS KILN_TIR_GENERALIZE_RUNS

/* The probe sizes: run r gives the k-th variable probes[r][k]. All are
 * primes (a schedule preferring a tile that divides an extent finds none
 * at every probe, so the runs agree), distinct within a run, and no
 * variable's sizes are an affine function of another's over the runs. */
static const int64_t probe_sizes[RUNS][KILN_TIR_GENERALIZE_MAX_VARS] = {
    {257, 263, 269, 271, 277, 281, 283, 293, 307, 311, 313, 317, 331, 337, 347, 349},
    {509, 521, 523, 541, 547, 557, 563, 569, 571, 577, 587, 593, 599, 601, 607, 613},
    {61, 67, 71, 73, 79, 83, 89, 101, 103, 107, 109, 113, 127, 131, 137, 139},
    {97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173},
};

/* Smaller primes for a dyn call's output whose elements at probe_sizes
 * would pass int32 (a rank-4 output of four run-time dims: at most about
 * 1.3e9 elements here): the same properties, every size above 60. */
static const int64_t small_probe_sizes[RUNS][KILN_TIR_GENERALIZE_MAX_VARS] = {
    {101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173, 179},
    {181, 191, 193, 197, 199, 211, 223, 227, 229, 233, 239, 241, 251, 257, 263, 269},
    {61, 67, 71, 73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127, 131, 137},
    {131, 137, 139, 149, 151, 157, 163, 167, 173, 179, 181, 191, 193, 197, 199, 211},
};

/* The function's dimension variables, and the kernel variable each is
 * probed as: its own, or another's when the dims are taken as equal
 * (choose_slots). */
typedef struct probe_t {
  int count;
  const kiln_dim_var_t *vars[KILN_TIR_GENERALIZE_MAX_VARS];
  const char *names[KILN_TIR_GENERALIZE_MAX_VARS];
  int slots[KILN_TIR_GENERALIZE_MAX_VARS];              /* vars[k] is probed as vars[slots[k]] */
  int indices[KILN_TIR_GENERALIZE_MAX_VARS];            /* vars[k]'s variable in `tir` */
  const int64_t (*sizes)[KILN_TIR_GENERALIZE_MAX_VARS]; /* probe_sizes or small_probe_sizes */
  kiln_tir_generalize_vars_t tir;
} probe_t;

static const kiln_type_t *param_type(const kiln_var_t *param) {
  return param->base.checked_type ? param->base.checked_type : param->type_annotation;
}

static int find_var(const probe_t *probe, const kiln_dim_var_t *var) {
  for (int k = 0; k < probe->count; ++k) {
    bool same = var->name[0] ? kiln_dim_var_equal(probe->vars[k], var) : probe->vars[k] == var;
    if (same) {
      return k;
    }
  }
  return -1;
}

/* `tir`'s variables from the slots: one per distinct slot, in order of
 * first use, each with the sizes' next column (distinct within a run). */
static void assign_slots(probe_t *probe) {
  int index_of[KILN_TIR_GENERALIZE_MAX_VARS];
  memset(&probe->tir, 0, sizeof(probe->tir));
  for (int k = 0; k < probe->count; ++k) {
    index_of[k] = -1;
  }
  for (int k = 0; k < probe->count; ++k) {
    int s = probe->slots[k];
    if (index_of[s] < 0) {
      int t = index_of[s] = probe->tir.count++;
      probe->tir.names[t] = probe->names[s];
      for (int r = 0; r < RUNS; ++r) {
        probe->tir.probes[r][t] = probe->sizes[r][t];
      }
    }
    probe->indices[k] = index_of[s];
  }
}

static int64_t probe_size(const probe_t *probe, int run, const kiln_dim_var_t *var) {
  return probe->tir.probes[run][probe->indices[find_var(probe, var)]];
}

static kiln_status_t add_var(probe_t *probe, const kiln_dim_var_t *var, kiln_arena_t *arena) {
  if (probe->count == KILN_TIR_GENERALIZE_MAX_VARS) {
    return KILN_STATUS(UNIMPLEMENTED, "more than %d symbolic dims in one kernel's parameters",
                       KILN_TIR_GENERALIZE_MAX_VARS);
  }
  int k = probe->count++;
  probe->vars[k] = var;
  probe->slots[k] = k;
  char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(arena, 24, 1, (void **)&name));
  if (var->name[0]) {
    snprintf(name, 24, "%.22s", var->name);
  } else {
    snprintf(name, 24, "dim%d", k);
  }
  probe->names[k] = name;
  assign_slots(probe);
  return KILN_OK;
}

/* A function that is one call of a dyn operator whose output extents
 * are probed too (op/dyn.h: its probe runs lower the static operator with
 * the output's probe shape), or NULL. */
static const kiln_call_t *dyn_body(const kiln_function_t *function) {
  const kiln_call_t *call = kiln_expr_as_call(function->body);
  return call && call->op && kiln_dyn_has_probe(call->op) ? call : NULL;
}

/* A dyn call's output type for its probe: the tensor, or a tuple's first
 * field (dyn.topk's values, whose dims its indices share). */
static const kiln_type_t *dyn_probe_type(const kiln_type_t *type) {
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  return tuple && tuple->count > 0 ? tuple->fields[0] : type;
}

static kiln_status_t collect_type_vars(const kiln_type_t *type, probe_t *probe,
                                       kiln_arena_t *arena) {
  const kiln_tensor_type_t *t = kiln_type_as_tensor(dyn_probe_type(type));
  for (int d = 0; t && t->vars && d < t->ndim; ++d) {
    if (t->vars[d] && find_var(probe, t->vars[d]) < 0) {
      KILN_RETURN_IF_ERROR(add_var(probe, t->vars[d], arena));
    }
  }
  return KILN_OK;
}

static kiln_status_t collect_vars(const kiln_function_t *function, probe_t *probe,
                                  kiln_arena_t *arena) {
  const kiln_call_t *dyn = dyn_body(function);
  if (dyn) { /* the output's dims: bound from the output buffer */
    KILN_RETURN_IF_ERROR(collect_type_vars(dyn->base.checked_type, probe, arena));
  }
  for (int p = 0; p < function->num_params; ++p) {
    const kiln_tensor_type_t *t = kiln_type_as_tensor(param_type(function->params[p]));
    if (!t) {
      return KILN_STATUS(INVALID_ARGUMENT, "parameter %%%s is not a tensor",
                         function->params[p]->name);
    }
    for (int d = 0; t->vars && d < t->ndim; ++d) {
      if (t->vars[d] && find_var(probe, t->vars[d]) < 0) {
        KILN_RETURN_IF_ERROR(add_var(probe, t->vars[d], arena));
      }
    }
  }
  return KILN_OK;
}

bool kiln_compiler_function_is_symbolic(const kiln_function_t *function) {
  if (dyn_body(function)) {
    return true;
  }
  for (int p = 0; p < function->num_params; ++p) {
    if (!kiln_type_is_static(param_type(function->params[p]))) {
      return true;
    }
  }
  return false;
}

/* ---- a probe copy of the function ---- */

typedef struct copier_t {
  kiln_expr_mutator_t mutator; /* first */
  const kiln_function_t *function;
  kiln_var_t **params;
  const probe_t *probe;
  int run;
} copier_t;

static kiln_status_t copy_var(kiln_expr_functor_t *self, kiln_expr_t *expr, void *result) {
  copier_t *c = (copier_t *)self;
  for (int p = 0; p < c->function->num_params; ++p) {
    if (&c->function->params[p]->base == expr) {
      *(kiln_expr_t **)result = &c->params[p]->base;
      return KILN_OK;
    }
  }
  return KILN_STATUS(INVALID_ARGUMENT, "%%%s is not a parameter of the function",
                     kiln_expr_as_var(expr)->name);
}

/* A new constant node: inference types it in the scratch module. */
static kiln_status_t copy_constant(kiln_expr_functor_t *self, kiln_expr_t *expr, void *result) {
  copier_t *c = (copier_t *)self;
  kiln_constant_t *copy = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_constant_create(c->mutator.module, kiln_expr_as_constant(expr)->value, &copy));
  *(kiln_expr_t **)result = &copy->base;
  return KILN_OK;
}

static kiln_status_t probe_param_type(const kiln_type_t *type, const probe_t *probe, int run,
                                      kiln_arena_t *arena, const kiln_type_t **out_type) {
  const kiln_tensor_type_t *t = kiln_type_as_tensor(type);
  int64_t shape[KILN_MAX_RANK];
  for (int d = 0; d < t->ndim; ++d) {
    const kiln_dim_var_t *var = t->vars ? t->vars[d] : NULL;
    shape[d] = var ? probe_size(probe, run, var) : t->shape[d];
  }
  return kiln_tensor_type_create(arena, t->dtype, t->ndim, shape, out_type);
}

/* A dyn call with a probe form: the static call at the run's output shape. */
static kiln_status_t copy_call(kiln_expr_functor_t *self, kiln_expr_t *expr, void *result) {
  copier_t *c = (copier_t *)self;
  const kiln_call_t *call = kiln_expr_as_call(expr);
  if (!call->op || !kiln_dyn_has_probe(call->op)) {
    return kiln_expr_mutator_rebuild(&c->mutator, expr, result);
  }
  kiln_expr_t *args[KILN_TE_MAX_STAGES];
  for (int a = 0; a < call->num_args && a < KILN_TE_MAX_STAGES; ++a) {
    KILN_RETURN_IF_ERROR(kiln_expr_mutator_mutate(&c->mutator, call->args[a], &args[a]));
  }
  const kiln_type_t *out = NULL;
  KILN_RETURN_IF_ERROR(probe_param_type(dyn_probe_type(call->base.checked_type), c->probe, c->run,
                                        kiln_module_arena(c->mutator.module), &out));
  kiln_call_t *made = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_dyn_probe_call(c->mutator.module, call, args, kiln_type_as_tensor(out), &made));
  *(kiln_expr_t **)result = &made->base;
  return KILN_OK;
}

static kiln_status_t copy_body(kiln_module_t *m, const kiln_function_t *function,
                               kiln_var_t **params, const probe_t *probe, int run,
                               kiln_expr_t **out_body) {
  copier_t c = {.function = function, .params = params, .probe = probe, .run = run};
  kiln_expr_mutator_initialize(&c.mutator, m, kiln_allocator_system());
  kiln_expr_functor_override(&c.mutator.functor, KILN_EXPR_KIND_VAR, copy_var);
  kiln_expr_functor_override(&c.mutator.functor, KILN_EXPR_KIND_CONSTANT, copy_constant);
  kiln_expr_functor_override(&c.mutator.functor, KILN_EXPR_KIND_CALL, copy_call);
  kiln_status_t status = kiln_expr_mutator_mutate(&c.mutator, function->body, out_body);
  kiln_expr_mutator_deinitialize(&c.mutator);
  return status;
}

/* `function` with the run's probe sizes, typed, in a new module `*out_m`. */
static kiln_status_t instantiate(const kiln_function_t *function, const probe_t *probe, int run,
                                 kiln_module_t **out_m, kiln_function_t **out_function) {
  KILN_RETURN_IF_ERROR(kiln_module_create(kiln_allocator_system(), out_m));
  kiln_module_t *m = *out_m;
  kiln_var_t *params[KILN_TE_MAX_STAGES];
  if (function->num_params > KILN_TE_MAX_STAGES) {
    return KILN_STATUS(INVALID_ARGUMENT, "%d parameters are too many for one kernel",
                       function->num_params);
  }
  for (int p = 0; p < function->num_params; ++p) {
    const kiln_type_t *type = NULL;
    KILN_RETURN_IF_ERROR(
        probe_param_type(param_type(function->params[p]), probe, run, kiln_module_arena(m), &type));
    KILN_RETURN_IF_ERROR(kiln_ir_var_create(m, function->params[p]->name, type, &params[p]));
  }
  kiln_expr_t *body = NULL;
  KILN_RETURN_IF_ERROR(copy_body(m, function, params, probe, run, &body));
  KILN_RETURN_IF_ERROR(
      kiln_ir_function_create(m, function->num_params, params, body, out_function));
  (*out_function)->primitive = function->primitive;
  KILN_RETURN_IF_ERROR(kiln_module_add_function(m, "main", *out_function));
  return kiln_ir_infer_function(m, "main", *out_function);
}

/* OK when the function types at run 0's probe sizes. */
static kiln_status_t types_at_probe(const kiln_function_t *function, const probe_t *probe) {
  kiln_module_t *m = NULL;
  kiln_function_t *copy = NULL;
  kiln_status_t status = instantiate(function, probe, 0, &m, &copy);
  if (m) {
    kiln_module_destroy(m);
  }
  return status;
}

/* Every anonymous dim probed as vars[slot] (slot -1: as the first
 * anonymous one); false when there is none. */
static bool anonymous_take(probe_t *probe, int slot) {
  bool any = false;
  for (int k = 0; k < probe->count; ++k) {
    if (!probe->vars[k]->name[0]) {
      slot = slot < 0 ? k : slot;
      probe->slots[k] = slot;
      any = true;
    }
  }
  assign_slots(probe);
  return any;
}

/* As type inference assumes (op/symbolic.c): when the function does not
 * type with every variable distinct (an add of `?` and `?`, or of `?` and
 * `n`, whose type relation needs the dims equal), the anonymous dims are
 * taken as one variable, then as each named variable in turn; the first
 * assumption that types is kept. The kernel then has one variable where
 * the dims had several, and its argument checks (docs/codegen-c.md) bind
 * it from the first argument and compare every other one at run time, so
 * dims that differ there fail with the argument and the shape expected.
 * When none types, every variable stays distinct (the lowering reports
 * the error). */
static void choose_slots(const kiln_function_t *function, probe_t *probe) {
  kiln_status_t status = types_at_probe(function, probe);
  for (int k = -1; k < probe->count && status; ++k) {
    if (k >= 0 && !probe->vars[k]->name[0]) {
      continue;
    }
    if (!anonymous_take(probe, k)) {
      break;
    }
    kiln_status_free(status);
    status = types_at_probe(function, probe);
  }
  if (status) {
    kiln_status_free(status);
    for (int k = 0; k < probe->count; ++k) {
      probe->slots[k] = k;
    }
    assign_slots(probe);
  }
}

static const char *probe_text(const probe_t *probe, int run, char *buffer, size_t capacity) {
  size_t length = 0;
  buffer[0] = '\0';
  for (int k = 0; k < probe->count && length < capacity; ++k) {
    length += (size_t)snprintf(buffer + length, capacity - length, "%s%s=%lld", k ? ", " : "",
                               kiln_dim_var_text(probe->vars[k]),
                               (long long)probe->tir.probes[run][probe->indices[k]]);
  }
  return buffer;
}

/* Run `run` lowered into `arena`. */
static kiln_status_t lower_run(const kiln_function_t *function, const probe_t *probe, int run,
                               const kiln_schedule_target_t *target, bool default_schedule,
                               kiln_arena_t *arena, const char *name,
                               const kiln_tir_prim_func_t **out_func) {
  kiln_module_t *m = NULL;
  kiln_function_t *copy = NULL;
  kiln_status_t status = instantiate(function, probe, run, &m, &copy);
  if (!status) {
    status = kiln_compiler_lower_probe(copy, target, default_schedule, arena, name, out_func);
  }
  if (m) {
    kiln_module_destroy(m);
  }
  if (status) {
    char text[256];
    return kiln_status_annotate(status, "with the symbolic dims taken as %s",
                                probe_text(probe, run, text, sizeof(text)));
  }
  return KILN_OK;
}

/* Every run lowered (the first into `arena`, the others into `scratch`),
 * then generalized into `arena`. */
static kiln_status_t lower_and_generalize(const kiln_function_t *function, const probe_t *probe,
                                          const kiln_schedule_target_t *target,
                                          bool default_schedule, kiln_arena_t *arena,
                                          kiln_arena_t *scratch, const char *name,
                                          const kiln_tir_prim_func_t **out_func) {
  const kiln_tir_prim_func_t *runs[RUNS] = {0};
  for (int r = 0; r < RUNS; ++r) {
    KILN_RETURN_IF_ERROR(lower_run(function, probe, r, target, default_schedule,
                                   r == 0 ? arena : scratch, name, &runs[r]));
  }
  return kiln_tir_generalize(arena, runs, &probe->tir, out_func);
}

/* UNIMPLEMENTED when `type` (a dyn call's output or a parameter), all of
 * whose dims may be symbolic, would hold 2^31 elements or more at the
 * largest probe sizes:
 * kernels index in int32, so the probe runs cannot lower it. */
static kiln_status_t check_probe_extent(const kiln_type_t *type, const probe_t *probe) {
  const kiln_tensor_type_t *t = kiln_type_as_tensor(type);
  double count = 1;
  for (int d = 0; t && d < t->ndim; ++d) {
    const kiln_dim_var_t *var = t->vars ? t->vars[d] : NULL;
    count *= var ? (double)probe_size(probe, 1, var) : (double)t->shape[d];
  }
  if (count >= 2147483648.0) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(UNIMPLEMENTED,
                       "the type %s has too many symbolic dims for the probe runs: at the probe "
                       "sizes it would hold %.0f elements, more than int32 indexes",
                       kiln_type_text(type, text), count);
  }
  return KILN_OK;
}

/* check_probe_extent of the dyn call's output (when the function is one)
 * and of every parameter. */
static kiln_status_t check_probe_types(const kiln_function_t *function, const probe_t *probe) {
  const kiln_call_t *dyn = dyn_body(function);
  if (dyn) {
    KILN_RETURN_IF_ERROR(check_probe_extent(dyn_probe_type(dyn->base.checked_type), probe));
  }
  for (int p = 0; p < function->num_params; ++p) {
    KILN_RETURN_IF_ERROR(check_probe_extent(param_type(function->params[p]), probe));
  }
  return KILN_OK;
}

/* check_probe_types at probe_sizes, else at small_probe_sizes (which the
 * probe then keeps): a rank-4 tensor of four run-time dims. */
static kiln_status_t check_probe_sizes(const kiln_function_t *function, probe_t *probe) {
  kiln_status_t status = check_probe_types(function, probe);
  if (!status) {
    return KILN_OK;
  }
  kiln_status_free(status);
  probe->sizes = small_probe_sizes;
  assign_slots(probe);
  return check_probe_types(function, probe);
}

/* UNIMPLEMENTED when a parameter has a static dim of 0 (an empty axes
 * list given at run time): kernels take no empty buffers. */
static kiln_status_t check_no_empty_param(const kiln_function_t *function) {
  for (int p = 0; p < function->num_params; ++p) {
    const kiln_tensor_type_t *t = kiln_type_as_tensor(param_type(function->params[p]));
    for (int d = 0; t && d < t->ndim; ++d) {
      if (!(t->vars && t->vars[d]) && t->shape[d] == 0) {
        char text[KILN_IR_TYPE_TEXT_CAPACITY];
        return KILN_STATUS(UNIMPLEMENTED,
                           "parameter %%%s has the type %s with no elements; kernels take no "
                           "empty buffers",
                           function->params[p]->name, kiln_type_text(&t->base, text));
      }
    }
  }
  return KILN_OK;
}

kiln_status_t kiln_compiler_lower_symbolic(const kiln_function_t *function,
                                           const kiln_schedule_target_t *target,
                                           kiln_arena_t *arena, const char *name,
                                           const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  probe_t probe;
  memset(&probe, 0, sizeof(probe));
  probe.sizes = probe_sizes;
  KILN_RETURN_IF_ERROR(collect_vars(function, &probe, arena));
  KILN_RETURN_IF_ERROR_ANNOTATE(check_no_empty_param(function), "lowering %s", name);
  choose_slots(function, &probe);
  KILN_RETURN_IF_ERROR_ANNOTATE(check_probe_sizes(function, &probe), "lowering %s", name);
  kiln_arena_t scratch;
  kiln_arena_initialize(&scratch, kiln_allocator_system(), 0);
  kiln_status_t status =
      lower_and_generalize(function, &probe, target, false, arena, &scratch, name, out_func);
  if (status && kiln_status_code(status) == KILN_STATUS_CODE_UNIMPLEMENTED) {
    kiln_arena_reset(&scratch);
    kiln_status_t fallback =
        lower_and_generalize(function, &probe, target, true, arena, &scratch, name, out_func);
    if (!fallback) {
      kiln_status_free(status);
      status = KILN_OK;
    } else {
      kiln_status_free(fallback);
    }
  }
  kiln_arena_deinitialize(&scratch);
  return kiln_status_annotate(status, "lowering %s over symbolic dims", name);
}
