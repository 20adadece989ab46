/*
 * Lowering a graph-IR function to one PrimFunc (lower.h).
 *
 * The walk keeps, per node of the canonical order, the tensor expressions
 * it stands for (one, or a tuple's several), found through a pointer map
 * from node to its slot. Everything is made in the caller's arena; the map
 * and the order use the system allocator and are freed before returning.
 */
#include <stdio.h>
#include <string.h>

#include "base/hashmap.h"
#include "codegen/target_record.h"
#include "compiler/lower.h"
#include "ir/order.h"
#include "op/impl.h"
#include "te/lower.h"

/* The tensors a node stands for. */
typedef struct slot_t {
  int count;
  const kiln_te_tensor_t *tensors[KILN_COMPUTE_MAX_OUTPUTS];
} slot_t;

typedef struct walk_t {
  const kiln_function_t *function;
  kiln_arena_t *arena;
  kiln_ir_order_t order;
  kiln_hashmap_t index; /* node -> slot number + 1 */
  slot_t *slots;
  const kiln_te_tensor_t *params[KILN_TE_MAX_STAGES];
  /* The anchor: its call, compute arguments and result. */
  const kiln_call_t *anchor;
  kiln_compute_args_t anchor_args;
  kiln_compute_result_t anchor_result;
  const kiln_te_tensor_t *anchor_inputs[KILN_TE_MAX_INPUTS];
  bool default_schedule; /* the default CPU schedule even where the anchor has one */
  bool probe;            /* a probe run of a symbolic kernel (te/schedule.h) */
} walk_t;

static const char *describe(const walk_t *w, size_t i, char *buffer) {
  return kiln_ir_order_describe(&w->order, i, buffer);
}

static const slot_t *slot_of(const walk_t *w, const kiln_expr_t *expr) {
  void *value = NULL;
  return kiln_hashmap_get(&w->index, expr, &value) ? &w->slots[(uintptr_t)value - 1] : NULL;
}

static kiln_status_t lower_var(walk_t *w, const kiln_var_t *var, slot_t *slot) {
  for (int p = 0; p < w->function->num_params; ++p) {
    if (w->function->params[p] == var) {
      slot->count = 1;
      slot->tensors[0] = w->params[p];
      return KILN_OK;
    }
  }
  return KILN_STATUS(INVALID_ARGUMENT, "%%%s is not a parameter of the function", var->name);
}

typedef struct scalar_t {
  kiln_dtype_t dtype;
  double value;
} scalar_t;

static const kiln_tir_expr_t *scalar_body(kiln_tir_builder_t *b,
                                          const kiln_tir_expr_t *const *indices, void *user) {
  (void)indices;
  const scalar_t *s = user;
  bool is_float = s->dtype == KILN_DTYPE_FLOAT32 || s->dtype == KILN_DTYPE_FLOAT64 ||
                  s->dtype == KILN_DTYPE_FLOAT16 || s->dtype == KILN_DTYPE_BFLOAT16;
  return is_float ? kiln_tir_b_float(b, s->dtype, s->value)
                  : kiln_tir_b_int(b, s->dtype, (int64_t)s->value);
}

/* A one-element constant as a compute of its value. */
static kiln_status_t lower_constant(walk_t *w, const kiln_constant_t *constant, slot_t *slot) {
  const kiln_tensor_t *value = constant->value;
  if (kiln_tensor_element_count(value) != 1) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "a constant of %lld elements inside a kernel: pass it as a parameter",
                       (long long)kiln_tensor_element_count(value));
  }
  scalar_t *s = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(w->arena, sizeof(*s), _Alignof(scalar_t), (void **)&s));
  s->dtype = kiln_tensor_dtype(value);
  s->value = kiln_tensor_element_as_double(value, 0);
  slot->count = 1;
  return kiln_te_compute(w->arena, "constant", kiln_tensor_ndim(value), kiln_tensor_shape(value), 0,
                         NULL, scalar_body, s, &slot->tensors[0]);
}

/* The single tensor of an argument node. */
static kiln_status_t argument_tensor(const walk_t *w, const kiln_expr_t *arg, int index,
                                     const kiln_te_tensor_t **out_tensor) {
  const slot_t *slot = slot_of(w, arg);
  if (!slot || slot->count != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "argument %d is not a tensor", index);
  }
  *out_tensor = slot->tensors[0];
  return KILN_OK;
}

/* Whether `call` should anchor the group instead of the current anchor. */
static bool outranks(const walk_t *w, const kiln_call_t *call) {
  return !w->anchor || call->op->pattern > w->anchor->op->pattern;
}

static kiln_status_t lower_call(walk_t *w, const kiln_call_t *call, slot_t *slot) {
  if (!call->op) {
    return KILN_STATUS(INVALID_ARGUMENT, "a call of a function inside a kernel");
  }
  if (call->num_args > KILN_OP_MAX_FUNCTION_ARGS) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s has %d arguments, a kernel takes at most %d",
                       call->op->name, call->num_args, KILN_OP_MAX_FUNCTION_ARGS);
  }
  const kiln_te_tensor_t **inputs = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(
      w->arena, (size_t)call->num_args + 1, sizeof(*inputs), _Alignof(void *), (void **)&inputs));
  for (int a = 0; a < call->num_args; ++a) {
    KILN_RETURN_IF_ERROR_ANNOTATE(argument_tensor(w, call->args[a], a, &inputs[a]), "%s",
                                  call->op->name);
  }
  kiln_compute_args_t args = {call->op,       call->attrs, w->arena,
                              call->num_args, inputs,      call->base.checked_type};
  kiln_compute_result_t result;
  KILN_RETURN_IF_ERROR(kiln_op_compute(&args, &result));
  slot->count = result.num_outputs;
  memcpy(slot->tensors, result.outputs, (size_t)result.num_outputs * sizeof(slot->tensors[0]));
  if (outranks(w, call)) {
    w->anchor = call;
    w->anchor_args = args;
    w->anchor_result = result;
  }
  return KILN_OK;
}

static kiln_status_t lower_tuple(walk_t *w, const kiln_tuple_t *tuple, slot_t *slot) {
  if (tuple->num_fields > KILN_COMPUTE_MAX_OUTPUTS) {
    return KILN_STATUS(INVALID_ARGUMENT, "a tuple of %d fields, a kernel returns at most %d",
                       tuple->num_fields, KILN_COMPUTE_MAX_OUTPUTS);
  }
  slot->count = tuple->num_fields;
  for (int f = 0; f < tuple->num_fields; ++f) {
    KILN_RETURN_IF_ERROR_ANNOTATE(argument_tensor(w, tuple->fields[f], f, &slot->tensors[f]),
                                  "tuple field");
  }
  return KILN_OK;
}

static kiln_status_t lower_get_item(const walk_t *w, const kiln_tuple_get_item_t *item,
                                    slot_t *slot) {
  const slot_t *tuple = slot_of(w, item->tuple);
  if (!tuple || item->index < 0 || item->index >= tuple->count) {
    return KILN_STATUS(INVALID_ARGUMENT, "field %d of a value with %d", item->index,
                       tuple ? tuple->count : 0);
  }
  slot->count = 1;
  slot->tensors[0] = tuple->tensors[item->index];
  return KILN_OK;
}

static kiln_status_t lower_node(walk_t *w, kiln_expr_t *expr, slot_t *slot) {
  switch (expr->kind) {
  case KILN_EXPR_KIND_VAR:
    return lower_var(w, kiln_expr_as_var(expr), slot);
  case KILN_EXPR_KIND_CONSTANT:
    return lower_constant(w, kiln_expr_as_constant(expr), slot);
  case KILN_EXPR_KIND_CALL:
    return lower_call(w, kiln_expr_as_call(expr), slot);
  case KILN_EXPR_KIND_TUPLE:
    return lower_tuple(w, kiln_expr_as_tuple(expr), slot);
  case KILN_EXPR_KIND_TUPLE_GET_ITEM:
    return lower_get_item(w, kiln_expr_as_tuple_get_item(expr), slot);
  case KILN_EXPR_KIND_FUNCTION:
  case KILN_EXPR_KIND_COUNT_:
    break;
  }
  return KILN_STATUS(INVALID_ARGUMENT, "a %s inside a kernel", kiln_expr_kind_name(expr->kind));
}

static kiln_status_t make_params(walk_t *w) {
  const kiln_function_t *f = w->function;
  if (f->num_params > KILN_OP_MAX_FUNCTION_ARGS) {
    return KILN_STATUS(INVALID_ARGUMENT, "%d parameters, a kernel takes at most %d", f->num_params,
                       KILN_OP_MAX_FUNCTION_ARGS);
  }
  for (int p = 0; p < f->num_params; ++p) {
    const kiln_var_t *var = f->params[p];
    const kiln_type_t *type = var->type_annotation ? var->type_annotation : var->base.checked_type;
    const kiln_tensor_type_t *tensor = type ? kiln_type_as_tensor(type) : NULL;
    if (!tensor) {
      return KILN_STATUS(INVALID_ARGUMENT, "parameter %%%s is not a tensor", var->name);
    }
    char name[32];
    snprintf(name, sizeof(name), "p%d", p);
    KILN_RETURN_IF_ERROR(kiln_te_placeholder(w->arena, name, tensor->ndim, tensor->shape,
                                             tensor->dtype, &w->params[p]));
  }
  return KILN_OK;
}

/* Walks the body, filling a slot per node. */
static kiln_status_t walk_body(walk_t *w) {
  size_t count = kiln_ir_order_count(&w->order);
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(w->arena, count ? count : 1, sizeof(slot_t),
                                                 _Alignof(slot_t), (void **)&w->slots));
  for (size_t i = 0; i < count; ++i) { /* before the callee's nodes show up as strays */
    const kiln_call_t *call = kiln_expr_as_call(kiln_ir_order_node(&w->order, i));
    if (call && call->callee) {
      char buffer[64];
      return KILN_STATUS(INVALID_ARGUMENT, "%s: a call of a function inside a kernel",
                         describe(w, i, buffer));
    }
  }
  for (size_t i = 0; i < count; ++i) {
    kiln_expr_t *expr = kiln_ir_order_node(&w->order, i);
    memset(&w->slots[i], 0, sizeof(slot_t));
    char buffer[64];
    KILN_RETURN_IF_ERROR_ANNOTATE(lower_node(w, expr, &w->slots[i]), "%s", describe(w, i, buffer));
    KILN_RETURN_IF_ERROR(kiln_hashmap_put(&w->index, expr, (void *)(uintptr_t)(i + 1)));
  }
  return KILN_OK;
}

static kiln_status_t schedule_and_lower(walk_t *w, const kiln_schedule_target_t *target,
                                        const char *name, const kiln_tir_prim_func_t **out_func) {
  const slot_t *result = slot_of(w, w->function->body);
  if (!w->anchor) {
    return KILN_STATUS(INVALID_ARGUMENT, "the function computes nothing: no operator call");
  }
  kiln_te_schedule_t *schedule = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_te_create_schedule(w->arena, result->count, result->tensors, &schedule));
  schedule->probe = w->probe;
  const kiln_op_t *op = w->anchor->op;
  kiln_op_schedule_fn strategy = kiln_op_strategy_get(op->id, target->kind);
  if (strategy && !w->default_schedule) {
    KILN_RETURN_IF_ERROR_ANNOTATE(strategy(target, &w->anchor_args, &w->anchor_result, schedule),
                                  "%s schedule", op->name);
  } else {
    KILN_RETURN_IF_ERROR_ANNOTATE(kiln_schedule_default(target, schedule), "%s schedule", op->name);
  }
  int num_params = w->function->num_params;
  const kiln_te_tensor_t *args[KILN_TE_MAX_STAGES + KILN_COMPUTE_MAX_OUTPUTS];
  memcpy(args, w->params, (size_t)num_params * sizeof(args[0]));
  memcpy(args + num_params, result->tensors, (size_t)result->count * sizeof(args[0]));
  return kiln_te_lower(schedule, name, num_params + result->count, args, out_func);
}

static kiln_status_t lower_walk(walk_t *wp, const kiln_function_t *function,
                                const kiln_schedule_target_t *target, kiln_arena_t *arena,
                                const char *name, const kiln_tir_prim_func_t **out_func);

kiln_status_t kiln_compiler_lower_function(const kiln_function_t *function,
                                           const kiln_schedule_target_t *target,
                                           kiln_arena_t *arena, const char *name,
                                           const kiln_tir_prim_func_t **out_func) {
  if (kiln_compiler_function_is_symbolic(function)) {
    return kiln_compiler_lower_symbolic(function, target, arena, name, out_func);
  }
  return kiln_compiler_lower_static(function, target, arena, name, out_func);
}

kiln_status_t kiln_compiler_lower_static(const kiln_function_t *function,
                                         const kiln_schedule_target_t *target, kiln_arena_t *arena,
                                         const char *name, const kiln_tir_prim_func_t **out_func) {
  walk_t w;
  memset(&w, 0, sizeof(w));
  return lower_walk(&w, function, target, arena, name, out_func);
}

kiln_status_t kiln_compiler_lower_probe(const kiln_function_t *function,
                                        const kiln_schedule_target_t *target, bool default_schedule,
                                        kiln_arena_t *arena, const char *name,
                                        const kiln_tir_prim_func_t **out_func) {
  walk_t w;
  memset(&w, 0, sizeof(w));
  w.default_schedule = default_schedule;
  w.probe = true;
  return lower_walk(&w, function, target, arena, name, out_func);
}

static kiln_status_t lower_walk(walk_t *wp, const kiln_function_t *function,
                                const kiln_schedule_target_t *target, kiln_arena_t *arena,
                                const char *name, const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  walk_t w = *wp;
  w.function = function;
  w.arena = arena;
  kiln_hashmap_initialize(&w.index, kiln_allocator_system(), KILN_HASHMAP_KEY_POINTER);
  kiln_status_t status = kiln_ir_order_compute(function, kiln_allocator_system(), &w.order);
  if (!status) {
    status = make_params(&w);
    if (!status) {
      status = walk_body(&w);
    }
    if (!status) {
      status = schedule_and_lower(&w, target, name, out_func);
    }
    kiln_ir_order_deinitialize(&w.order);
  }
  kiln_hashmap_deinitialize(&w.index);
  return kiln_status_annotate(status, "lowering %s", name);
}

kiln_status_t kiln_compiler_schedule_target(const char *target_string,
                                            kiln_schedule_target_t *out_target) {
  *out_target = kiln_schedule_target_host();
  int bits = 0;
  KILN_RETURN_IF_ERROR(kiln_codegen_target_vector_bits(target_string, &bits));
  if (bits == 0) {
    return KILN_OK; /* the host */
  }
  char triple[160];
  KILN_RETURN_IF_ERROR(kiln_codegen_target_triple(target_string, triple, sizeof(triple)));
  out_target->vector_bits = bits;
  out_target->num_cores = 0; /* a named or foreign CPU's cores and caches are not known */
  out_target->l2_bytes = 0;
  out_target->shared_cache_bytes = 0;
  /* x86's register file follows the vector width; AArch64 has 32 */
  out_target->vector_registers = strncmp(triple, "aarch64", 7) == 0 ? 32 : 0;
  return KILN_OK;
}
