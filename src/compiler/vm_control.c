/*
 * VM code generation for control flow (vm_codegen.h, docs/vm.md "Compiling
 * control flow"), in the manner of TVM's Relay VM compiler.
 *
 * Each IR function (main, and every branch and loop body, which are closed:
 * their outer values are their last parameters) becomes one VM function of
 * "glue" code. Its nodes are split at its control calls: the dataflow
 * nodes between two control calls form a *stage*, a dataflow function of
 * its own compiled by the ordinary pipeline (passes, fusion, kernels over
 * run-time extents, vm_symbolic's program) through the caller's
 * kiln_vm_stage_compiler_t, and merged into the program as a VM function
 * (its kernels and constants renamed with a prefix of its own, so stages
 * never clash). A stage's parameters are the values it reads from outside
 * (the function's parameters, control results, earlier stages' outputs)
 * and its results the values read after it; fusion therefore never crosses
 * a control call. The glue holds one register per tensor value and:
 * - invokes each stage with its inputs' registers;
 * - `if`: `if cond` jumping to an `invoke` of the then or the else
 *   function (the captured values as arguments), both writing the same
 *   result registers;
 * - `loop`: a counter from load_consti 0, then per trip a step stage
 *   (a compiled function of (i, trip count, cond): the test
 *   i < trip && cond and i + 1), `if` on the test, an `invoke` of the body
 *   that writes the carried values and the condition back into their
 *   registers, and a `goto` back; a trip count of 0 or a false condition
 *   runs nothing;
 * - TupleGetItem and Tuple over glue values select registers; a constant
 *   the glue reads is a load_const of a constant of its own.
 * What is not compiled yet is refused (UNIMPLEMENTED naming the operator).
 */
#include <stdio.h>
#include <string.h>

#include "base/array.h"
#include "compiler/vm_codegen.h"
#include "ir/functor.h"
#include "ir/infer.h"
#include "ir/order.h"
#include "op/control_attrs.h"
#include "op/transform_attrs.h"

#define CTL_MAX_REGS 256

enum { STAGE_GLUE = -1, STAGE_NONE = -2 };

typedef struct ctl_gen_t {
  kiln_allocator_t allocator;
  kiln_arena_t arena;
  const kiln_vm_stage_compiler_t *stages;
  uint32_t node_count;
  json_t *kernels, *constants, *functions;
  int num_stages;
} ctl_gen_t;

/* One IR function's glue. Per node id: its stage, whether a later stage or
 * the glue reads it, and its registers. */
typedef struct fn_gen_t {
  ctl_gen_t *g;
  const kiln_function_t *fn;
  const char *name;
  kiln_ir_order_t order;
  int *stage;
  bool *live, *output;
  int **regs;
  int *num_regs;
  int num_registers;
  int current_stage;
  json_t *code;
} fn_gen_t;

static kiln_status_t gen_function(ctl_gen_t *g, const kiln_function_t *fn, const char *name,
                                  int *out_index);

/* ---- types ---- */

/* A node's type: a Var's annotation when it was not inferred. */
static const kiln_type_t *value_type(const kiln_expr_t *expr) {
  const kiln_var_t *var = kiln_expr_as_var(expr);
  return expr->checked_type || !var ? expr->checked_type : var->type_annotation;
}

/* The tensors a value of `type` flattens to (a tuple's fields in order). */
static int flat_count(const kiln_type_t *type) {
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  if (!tuple) {
    return 1;
  }
  int count = 0;
  for (int i = 0; i < tuple->count; ++i) {
    count += flat_count(tuple->fields[i]);
  }
  return count;
}

static kiln_status_t require_tensor(const kiln_type_t *type, const char *what) {
  if (kiln_type_as_tensor(type)) {
    return KILN_OK;
  }
  return KILN_STATUS(UNIMPLEMENTED,
                     "vm codegen: %s is not a tensor (sequences and optionals "
                     "are not compiled for the VM yet)",
                     what);
}

static json_t *type_decl_json(const char *name, const kiln_type_t *type) {
  const kiln_tensor_type_t *t = kiln_type_as_tensor(type);
  json_t *shape = json_array();
  for (int d = 0; shape && d < t->ndim; ++d) {
    json_int_t dim = t->vars && t->vars[d] ? -1 : (json_int_t)t->shape[d];
    if (json_array_append_new(shape, json_integer(dim)) != 0) {
      json_decref(shape);
      return NULL;
    }
  }
  return json_pack("{s:s, s:s, s:o*}", "name", name, "dtype", kiln_dtype_name(t->dtype), "shape",
                   shape);
}

/* ---- merging a compiled stage ---- */

static kiln_status_t prefixed(ctl_gen_t *g, const char *prefix, const char *name,
                              json_t **out_string) {
  size_t length = strlen(prefix) + strlen(name) + 1;
  char *text = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&g->arena, length, 1, 1, (void **)&text));
  snprintf(text, length, "%s%s", prefix, name);
  *out_string = json_string(text);
  return *out_string ? KILN_OK : KILN_STATUS(RESOURCE_EXHAUSTED, "vm codegen: out of memory");
}

/* Rewrites the stage's kernel and constant indices into the program's. */
static kiln_status_t renumber(json_t *code, const int *kernel_index, int constant_offset) {
  for (size_t i = 0; i < json_array_size(code); ++i) {
    json_t *inst = json_array_get(code, i);
    const char *op = json_string_value(json_array_get(inst, 0));
    size_t slot = strcmp(op, "invoke_packed") == 0 ? 1 : strcmp(op, "load_const") == 0 ? 2 : 0;
    if (slot) {
      json_int_t value = json_integer_value(json_array_get(inst, slot));
      value = slot == 1 ? kernel_index[value] : value + constant_offset;
      if (json_array_set_new(inst, slot, json_integer(value)) != 0) {
        return KILN_STATUS(RESOURCE_EXHAUSTED, "vm codegen: out of memory");
      }
    }
  }
  return KILN_OK;
}

static kiln_status_t merge_tables(ctl_gen_t *g, json_t *stage, const char *prefix,
                                  int *kernel_index, int *out_constant_offset) {
  json_t *kernels = json_object_get(stage, "kernels");
  json_t *constants = json_object_get(stage, "constants");
  if (json_array_size(kernels) > CTL_MAX_REGS) {
    return KILN_STATUS(UNIMPLEMENTED, "vm codegen: a stage of %zu kernels (at most %d)",
                       json_array_size(kernels), CTL_MAX_REGS);
  }
  for (size_t k = 0; k < json_array_size(kernels); ++k) {
    json_t *name = NULL;
    KILN_RETURN_IF_ERROR(prefixed(g, prefix, json_string_value(json_array_get(kernels, k)), &name));
    kernel_index[k] = (int)json_array_size(g->kernels);
    KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(g->kernels, name));
  }
  *out_constant_offset = (int)json_array_size(g->constants);
  for (size_t c = 0; c < json_array_size(constants); ++c) {
    json_t *decl = json_array_get(constants, c), *name = NULL;
    KILN_RETURN_IF_ERROR(
        prefixed(g, prefix, json_string_value(json_object_get(decl, "name")), &name));
    KILN_RETURN_IF_ERROR(kiln_json_object_set_new(decl, "name", name));
    KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(g->constants, json_incref(decl)));
  }
  return KILN_OK;
}

/* Compiles `module` (main: a dataflow function) with the caller's stage
 * compiler and adds its program's main as function `name`. */
static kiln_status_t add_stage(ctl_gen_t *g, kiln_module_t *module, const char *name,
                               int *out_index) {
  char prefix[32];
  snprintf(prefix, sizeof(prefix), "s%d_", g->num_stages++);
  char *text = NULL;
  KILN_RETURN_IF_ERROR(g->stages->compile(g->stages->context, module, prefix, &text));
  json_t *stage = NULL;
  kiln_status_t status = kiln_json_parse(text, strlen(text), "stage vm.json", &stage);
  kiln_allocator_free(g->allocator, text);
  KILN_RETURN_IF_ERROR(status);
  int kernel_index[CTL_MAX_REGS], constant_offset = 0;
  json_t *main_fn = json_array_get(json_object_get(stage, "functions"), 0);
  status = merge_tables(g, stage, prefix, kernel_index, &constant_offset);
  if (!status) {
    status = renumber(json_object_get(main_fn, "code"), kernel_index, constant_offset);
  }
  if (!status) {
    status = kiln_json_object_set_new(main_fn, "name", json_string(name));
  }
  if (!status) {
    *out_index = (int)json_array_size(g->functions);
    status = kiln_vm_codegen_append(g->functions, json_incref(main_fn));
  }
  json_decref(stage);
  return status;
}

/* ---- a stage's function ---- */

typedef struct stage_copy_t {
  kiln_expr_mutator_t mutator; /* first */
  fn_gen_t *f;
  int stage;
  kiln_var_t **params;
  kiln_expr_t **outside; /* per node id: its parameter (or tuple of them) */
  int num_params;
  const int **param_regs;
} stage_copy_t;

static bool in_stage(const stage_copy_t *s, const kiln_expr_t *expr) {
  return s->f->stage[expr->id] == s->stage;
}

/* An outside value: a parameter per tensor it flattens to. */
static kiln_status_t outside_param(stage_copy_t *s, kiln_expr_t *expr, kiln_expr_t **out_expr) {
  if (s->outside[expr->id]) {
    *out_expr = s->outside[expr->id];
    return KILN_OK;
  }
  kiln_module_t *m = s->mutator.module;
  fn_gen_t *f = s->f;
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(value_type(expr));
  int count = tuple ? tuple->count : 1;
  if (f->num_regs[expr->id] != count || s->num_params + count > CTL_MAX_REGS) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "vm codegen: a stage reads a nested tuple or too many values");
  }
  kiln_expr_t *fields[CTL_MAX_REGS];
  for (int i = 0; i < count; ++i) {
    const kiln_type_t *type = tuple ? tuple->fields[i] : value_type(expr);
    KILN_RETURN_IF_ERROR(require_tensor(type, "a value a stage reads"));
    char name[16];
    snprintf(name, sizeof(name), "in%d", s->num_params);
    KILN_RETURN_IF_ERROR(kiln_ir_var_create(m, name, type, &s->params[s->num_params]));
    s->param_regs[s->num_params] = &f->regs[expr->id][i];
    fields[i] = &s->params[s->num_params++]->base;
  }
  if (tuple) {
    kiln_tuple_t *made = NULL;
    KILN_RETURN_IF_ERROR(kiln_ir_tuple_create(m, count, fields, &made));
    fields[0] = &made->base;
  }
  *out_expr = s->outside[expr->id] = fields[0];
  return KILN_OK;
}

static kiln_status_t copy_node(kiln_expr_functor_t *self, kiln_expr_t *expr, void *result) {
  stage_copy_t *s = (stage_copy_t *)self;
  kiln_expr_t **out = result;
  if (expr->kind == KILN_EXPR_KIND_CONSTANT) {
    kiln_constant_t *made = NULL;
    KILN_RETURN_IF_ERROR(
        kiln_ir_constant_create(s->mutator.module, kiln_expr_as_constant(expr)->value, &made));
    *out = &made->base;
    return KILN_OK;
  }
  if (!in_stage(s, expr)) {
    return outside_param(s, expr, out);
  }
  const kiln_call_t *call = kiln_expr_as_call(expr);
  if (call && call->num_args == 0) {
    kiln_call_t *made = NULL;
    KILN_RETURN_IF_ERROR(
        kiln_ir_call_create(s->mutator.module, call->op, 0, NULL, call->attrs, &made));
    *out = &made->base;
    return KILN_OK;
  }
  return kiln_expr_mutator_rebuild(&s->mutator, expr, out);
}

/* The stage's results: each output node's tensors (a tuple-typed call's
 * fields through TupleGetItem). */
static kiln_status_t stage_results(stage_copy_t *s, kiln_expr_t **results, int *out_count) {
  fn_gen_t *f = s->f;
  int count = 0;
  for (size_t i = 0; i < kiln_ir_order_count(&f->order); ++i) {
    kiln_expr_t *expr = kiln_ir_order_node(&f->order, i);
    if (!f->live[expr->id] || !in_stage(s, expr) || !f->output[expr->id] ||
        expr->kind == KILN_EXPR_KIND_TUPLE) {
      continue;
    }
    kiln_expr_t *copy = NULL;
    KILN_RETURN_IF_ERROR(kiln_expr_mutator_mutate(&s->mutator, expr, &copy));
    const kiln_tuple_type_t *tuple = kiln_type_as_tuple(expr->checked_type);
    int fields = tuple ? tuple->count : 1;
    if (count + fields > CTL_MAX_REGS) {
      return KILN_STATUS(UNIMPLEMENTED, "vm codegen: a stage of more than %d results",
                         CTL_MAX_REGS);
    }
    for (int k = 0; k < fields; ++k) {
      KILN_RETURN_IF_ERROR(
          require_tensor(tuple ? tuple->fields[k] : expr->checked_type, "a stage's result"));
      kiln_tuple_get_item_t *item = NULL;
      if (tuple) {
        KILN_RETURN_IF_ERROR(kiln_ir_tuple_get_item_create(s->mutator.module, copy, k, &item));
      }
      results[count++] = tuple ? &item->base : copy;
    }
  }
  *out_count = count;
  return KILN_OK;
}

static kiln_status_t glue_select(fn_gen_t *f, const kiln_expr_t *expr);

/* Registers for the stage's results, node by node (a tuple read outside
 * selects its fields'). */
static kiln_status_t assign_results(fn_gen_t *f, int stage, int *regs) {
  int count = 0;
  for (size_t i = 0; i < kiln_ir_order_count(&f->order); ++i) {
    kiln_expr_t *expr = kiln_ir_order_node(&f->order, i);
    if (!f->live[expr->id] || f->stage[expr->id] != stage || !f->output[expr->id]) {
      continue;
    }
    if (expr->kind == KILN_EXPR_KIND_TUPLE) {
      KILN_RETURN_IF_ERROR(glue_select(f, expr));
    } else {
      f->num_regs[expr->id] = flat_count(expr->checked_type);
      f->regs[expr->id] = &regs[count];
      count += f->num_regs[expr->id];
    }
  }
  return KILN_OK;
}

static kiln_status_t build_stage(stage_copy_t *s, kiln_module_t *m, int *out_num_results) {
  kiln_expr_t *results[CTL_MAX_REGS];
  int count = 0;
  KILN_RETURN_IF_ERROR(stage_results(s, results, &count));
  if (count == 0) {
    return KILN_STATUS(INTERNAL, "vm codegen: a stage without results");
  }
  kiln_expr_t *body = results[0];
  if (count != 1) {
    kiln_tuple_t *tuple = NULL;
    KILN_RETURN_IF_ERROR(kiln_ir_tuple_create(m, count, results, &tuple));
    body = &tuple->base;
  }
  kiln_function_t *fn = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_function_create(m, s->num_params, s->params, body, &fn));
  KILN_RETURN_IF_ERROR(kiln_module_add_function(m, "main", fn));
  *out_num_results = count;
  return kiln_ir_infer_function(m, "main", fn);
}

static kiln_status_t alloc_ints(ctl_gen_t *g, int count, int **out) {
  return kiln_arena_allocate_array(&g->arena, (size_t)count + 1, sizeof(int), _Alignof(int),
                                   (void **)out);
}

static kiln_status_t emit_invoke(fn_gen_t *f, int function, const int *args, int num_args,
                                 const int *dsts, int num_dsts) {
  return kiln_vm_codegen_append(f->code, json_pack("[s, i, o, o]", "invoke", function,
                                                   kiln_vm_codegen_ints_json(args, num_args),
                                                   kiln_vm_codegen_ints_json(dsts, num_dsts)));
}

/* Compiles stage `stage` and invokes it. */
static kiln_status_t emit_stage(fn_gen_t *f, int stage) {
  ctl_gen_t *g = f->g;
  kiln_module_t *m = NULL;
  KILN_RETURN_IF_ERROR(kiln_module_create(g->allocator, &m));
  stage_copy_t s = {.f = f, .stage = stage};
  kiln_expr_mutator_initialize(&s.mutator, m, g->allocator);
  static const kiln_expr_kind_t kinds[] = {KILN_EXPR_KIND_VAR, KILN_EXPR_KIND_CONSTANT,
                                           KILN_EXPR_KIND_CALL, KILN_EXPR_KIND_TUPLE,
                                           KILN_EXPR_KIND_TUPLE_GET_ITEM};
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); ++k) {
    kiln_expr_functor_override(&s.mutator.functor, kinds[k], copy_node);
  }
  kiln_status_t status = kiln_arena_allocate_array(&g->arena, CTL_MAX_REGS, sizeof(void *),
                                                   _Alignof(void *), (void **)&s.params);
  if (!status) {
    status = kiln_arena_allocate_array(&g->arena, CTL_MAX_REGS, sizeof(void *), _Alignof(void *),
                                       (void **)&s.param_regs);
  }
  if (!status) {
    status = kiln_arena_allocate_array(&g->arena, g->node_count + 1, sizeof(void *),
                                       _Alignof(void *), (void **)&s.outside);
  }
  int num_results = 0, index = 0, *dsts = NULL, args[CTL_MAX_REGS];
  if (!status) {
    memset(s.outside, 0, (g->node_count + 1) * sizeof(void *));
    status = build_stage(&s, m, &num_results);
  }
  if (!status) {
    char name[96];
    snprintf(name, sizeof(name), "%s_stage%d", f->name, g->num_stages);
    status = add_stage(g, m, name, &index);
  }
  if (!status) {
    status = alloc_ints(g, num_results, &dsts);
  }
  if (!status) {
    for (int r = 0; r < num_results; ++r) {
      dsts[r] = f->num_registers++;
    }
    for (int p = 0; p < s.num_params; ++p) {
      args[p] = *s.param_regs[p];
    }
    status = assign_results(f, stage, dsts);
  }
  if (!status) {
    status = emit_invoke(f, index, args, s.num_params, dsts, num_results);
  }
  kiln_expr_mutator_deinitialize(&s.mutator);
  kiln_module_destroy(m);
  return status;
}

/* ---- the split into stages ---- */

static int child_count(const kiln_expr_t *expr) {
  if (kiln_expr_as_call(expr)) {
    return kiln_expr_as_call(expr)->num_args;
  }
  if (kiln_expr_as_tuple(expr)) {
    return kiln_expr_as_tuple(expr)->num_fields;
  }
  return kiln_expr_as_tuple_get_item(expr) ? 1 : 0;
}

static kiln_expr_t *child_at(const kiln_expr_t *expr, int i) {
  if (kiln_expr_as_call(expr)) {
    return kiln_expr_as_call(expr)->args[i];
  }
  if (kiln_expr_as_tuple(expr)) {
    return kiln_expr_as_tuple(expr)->fields[i];
  }
  return kiln_expr_as_tuple_get_item(expr)->tuple;
}

static bool is_control(const kiln_expr_t *expr) {
  const kiln_call_t *call = kiln_expr_as_call(expr);
  return call && call->op && kiln_op_is_control(call->op);
}

/* The nodes of the function itself (not of the bodies it passes on). */
static void mark_live(fn_gen_t *f) {
  size_t n = kiln_ir_order_count(&f->order);
  f->live[f->fn->body->id] = true;
  for (size_t i = n; i-- > 0;) {
    const kiln_expr_t *expr = kiln_ir_order_node(&f->order, i);
    if (!f->live[expr->id] || expr->kind == KILN_EXPR_KIND_FUNCTION) {
      continue;
    }
    for (int c = 0; c < child_count(expr); ++c) {
      f->live[child_at(expr, c)->id] = true;
    }
  }
}

/* Calls in the current stage; a TupleGetItem in its tuple's; a tuple in
 * the current stage unless it is the result or reads no stage's value. */
static int stage_of(fn_gen_t *f, const kiln_expr_t *expr) {
  if (expr->kind == KILN_EXPR_KIND_CONSTANT) {
    return STAGE_NONE;
  }
  if (expr->kind == KILN_EXPR_KIND_CALL) {
    return is_control(expr) ? STAGE_GLUE : f->current_stage;
  }
  if (expr->kind == KILN_EXPR_KIND_TUPLE_GET_ITEM) {
    int stage = f->stage[kiln_expr_as_tuple_get_item(expr)->tuple->id];
    return stage >= 0 ? stage : STAGE_GLUE;
  }
  for (int c = 0; c < child_count(expr); ++c) {
    if (f->stage[child_at(expr, c)->id] >= 0 && expr != f->fn->body) {
      return f->current_stage;
    }
  }
  return STAGE_GLUE;
}

static void mark_output(fn_gen_t *f, const kiln_expr_t *expr) {
  int stage = f->stage[expr->id];
  f->output[expr->id] = true;
  if (expr->kind == KILN_EXPR_KIND_TUPLE) {
    for (int c = 0; c < child_count(expr); ++c) {
      if (f->stage[child_at(expr, c)->id] == stage) {
        mark_output(f, child_at(expr, c));
      }
    }
    return;
  }
  f->output[expr->id] = true;
}

static void assign_stages(fn_gen_t *f) {
  f->current_stage = 0;
  for (size_t i = 0; i < kiln_ir_order_count(&f->order); ++i) {
    const kiln_expr_t *expr = kiln_ir_order_node(&f->order, i);
    if (f->live[expr->id]) {
      f->stage[expr->id] = stage_of(f, expr);
      f->current_stage += is_control(expr);
    }
  }
  for (size_t i = 0; i < kiln_ir_order_count(&f->order); ++i) {
    const kiln_expr_t *expr = kiln_ir_order_node(&f->order, i);
    if (!f->live[expr->id] || expr->kind == KILN_EXPR_KIND_FUNCTION) {
      continue;
    }
    for (int c = 0; c < child_count(expr); ++c) {
      const kiln_expr_t *child = child_at(expr, c);
      if (f->stage[child->id] >= 0 && f->stage[child->id] != f->stage[expr->id]) {
        mark_output(f, child);
      }
    }
  }
  if (f->stage[f->fn->body->id] >= 0) {
    mark_output(f, f->fn->body);
  }
}

/* ---- glue ---- */

/* Registers of a glue constant: a load_const of a constant of its own. */
static kiln_status_t load_constant(fn_gen_t *f, const kiln_expr_t *expr) {
  kiln_constant_t *constant = kiln_expr_as_constant(expr);
  const char *name = NULL;
  KILN_RETURN_IF_ERROR(f->g->stages->add_constant(f->g->stages->context, constant->value, &name));
  KILN_RETURN_IF_ERROR(require_tensor(expr->checked_type, "a constant"));
  KILN_RETURN_IF_ERROR(
      kiln_vm_codegen_append(f->g->constants, type_decl_json(name, expr->checked_type)));
  KILN_RETURN_IF_ERROR(alloc_ints(f->g, 1, &f->regs[expr->id]));
  f->num_regs[expr->id] = 1;
  f->regs[expr->id][0] = f->num_registers++;
  return kiln_vm_codegen_append(f->code, json_pack("[s, i, i]", "load_const", f->regs[expr->id][0],
                                                   (int)json_array_size(f->g->constants) - 1));
}

/* The registers of `expr` for the glue (a constant loaded on first use). */
static kiln_status_t glue_regs(fn_gen_t *f, const kiln_expr_t *expr, const int **out_regs,
                               int *out_count) {
  if (!f->regs[expr->id] && expr->kind == KILN_EXPR_KIND_CONSTANT) {
    KILN_RETURN_IF_ERROR(load_constant(f, expr));
  }
  if (!f->regs[expr->id]) {
    return KILN_STATUS(INTERNAL, "vm codegen: %s %u has no registers",
                       kiln_expr_kind_name(expr->kind), expr->id);
  }
  *out_regs = f->regs[expr->id];
  *out_count = f->num_regs[expr->id];
  return KILN_OK;
}

/* Tuple and TupleGetItem over glue values: register selection. */
static kiln_status_t glue_select(fn_gen_t *f, const kiln_expr_t *expr) {
  int regs[CTL_MAX_REGS], count = 0;
  const kiln_tuple_get_item_t *item = kiln_expr_as_tuple_get_item(expr);
  for (int c = 0; c < child_count(expr); ++c) {
    const int *child = NULL;
    int n = 0;
    KILN_RETURN_IF_ERROR(glue_regs(f, child_at(expr, c), &child, &n));
    if (count + n > CTL_MAX_REGS) {
      return KILN_STATUS(UNIMPLEMENTED, "vm codegen: a tuple of more than %d tensors",
                         CTL_MAX_REGS);
    }
    memcpy(regs + count, child, (size_t)n * sizeof(int));
    count += n;
  }
  int first = 0, width = count;
  if (item) {
    const kiln_tuple_type_t *tuple = kiln_type_as_tuple(item->tuple->checked_type);
    for (int k = 0; k < item->index; ++k) {
      first += flat_count(tuple->fields[k]);
    }
    width = flat_count(tuple->fields[item->index]);
  }
  KILN_RETURN_IF_ERROR(alloc_ints(f->g, width, &f->regs[expr->id]));
  memcpy(f->regs[expr->id], regs + first, (size_t)width * sizeof(int));
  f->num_regs[expr->id] = width;
  return KILN_OK;
}

/* The registers of arguments [first, first + count) of `call`, flattened. */
static kiln_status_t arg_regs(fn_gen_t *f, const kiln_call_t *call, int first, int count, int *regs,
                              int *out_count) {
  int total = 0;
  for (int a = first; a < first + count; ++a) {
    const int *r = NULL;
    int n = 0;
    KILN_RETURN_IF_ERROR(glue_regs(f, call->args[a], &r, &n));
    if (total + n > CTL_MAX_REGS) {
      return KILN_STATUS(UNIMPLEMENTED, "vm codegen: more than %d values", CTL_MAX_REGS);
    }
    memcpy(regs + total, r, (size_t)n * sizeof(int));
    total += n;
  }
  *out_count = total;
  return KILN_OK;
}

static kiln_status_t new_regs(fn_gen_t *f, const kiln_expr_t *expr) {
  int count = flat_count(expr->checked_type);
  KILN_RETURN_IF_ERROR(alloc_ints(f->g, count, &f->regs[expr->id]));
  for (int r = 0; r < count; ++r) {
    f->regs[expr->id][r] = f->num_registers++;
  }
  f->num_regs[expr->id] = count;
  return KILN_OK;
}

static kiln_status_t emit_jump(fn_gen_t *f, const char *op, int a, int b, int c) {
  json_t *inst =
      strcmp(op, "goto") == 0 ? json_pack("[s, i]", op, a) : json_pack("[s, i, i, i]", op, a, b, c);
  return kiln_vm_codegen_append(f->code, inst);
}

static kiln_status_t body_function(fn_gen_t *f, const kiln_expr_t *arg, const char *what,
                                   int *out_index) {
  const kiln_function_t *body = kiln_expr_as_function(arg);
  if (!body) {
    return KILN_STATUS(UNIMPLEMENTED, "vm codegen: %s is not a function", what);
  }
  char name[96];
  snprintf(name, sizeof(name), "%s_%s%d", f->name, what, (int)json_array_size(f->g->functions));
  return gen_function(f->g, body, name, out_index);
}

static kiln_status_t emit_alloc_adt(fn_gen_t *f, int dst, int tag, const int *regs, int count) {
  return kiln_vm_codegen_append(f->code, json_pack("[s, i, i, o]", "alloc_adt", dst, tag,
                                                   kiln_vm_codegen_ints_json(regs, count)));
}

/* Appends to `code` what makes the values in `regs`, of type `from`, values
 * of `to`: the IR lets a value stand for an optional that holds it
 * (kiln_type_join, as ONNX passes one: a loop carrying an optional whose
 * body returns its sequence), while on the VM an optional is an ADT around
 * its value, so each such value is wrapped (`alloc_adt r 1 [r]`). Tuples
 * field by field; `from` unknown (NULL) leaves the values as they are. */
static kiln_status_t coerce_code(json_t *code, const int *regs, const kiln_type_t *from,
                                 const kiln_type_t *to) {
  const kiln_tuple_type_t *tf = kiln_type_as_tuple(from), *tt = kiln_type_as_tuple(to);
  if (tf && tt && tf->count == tt->count) {
    for (int i = 0, offset = 0; i < tf->count; offset += flat_count(tf->fields[i]), ++i) {
      KILN_RETURN_IF_ERROR(coerce_code(code, regs + offset, tf->fields[i], tt->fields[i]));
    }
    return KILN_OK;
  }
  if (!from || tf || !kiln_type_as_optional(to) || kiln_type_as_optional(from)) {
    return KILN_OK;
  }
  return kiln_vm_codegen_append(code,
                                json_pack("[s, i, i, [i]]", "alloc_adt", regs[0], 1, regs[0]));
}

static kiln_status_t emit_coerce(fn_gen_t *f, const int *regs, const kiln_type_t *from,
                                 const kiln_type_t *to) {
  return coerce_code(f->code, regs, from, to);
}

/* invoke `fn` into `dsts`, then the coercion of its results in `after`. */
static kiln_status_t emit_branch(fn_gen_t *f, int fn, const int *captured, int num_captured,
                                 const int *dsts, int n, json_t *after) {
  KILN_RETURN_IF_ERROR(emit_invoke(f, fn, captured, num_captured, dsts, n));
  return json_array_extend(f->code, after) == 0
             ? KILN_OK
             : KILN_STATUS(RESOURCE_EXHAUSTED, "vm codegen: out of memory");
}

/* if cond: invoke then, else invoke else, into the same registers (each
 * branch's results coerced to the if's type). */
static kiln_status_t emit_if(fn_gen_t *f, const kiln_expr_t *expr) {
  const kiln_call_t *call = kiln_expr_as_call(expr);
  int then_fn = 0, else_fn = 0, captured[CTL_MAX_REGS], num_captured = 0, cond_count = 0;
  const int *cond = NULL;
  KILN_RETURN_IF_ERROR(body_function(f, call->args[1], "then", &then_fn));
  KILN_RETURN_IF_ERROR(body_function(f, call->args[2], "else", &else_fn));
  KILN_RETURN_IF_ERROR(glue_regs(f, call->args[0], &cond, &cond_count));
  KILN_RETURN_IF_ERROR(arg_regs(f, call, 3, call->num_args - 3, captured, &num_captured));
  KILN_RETURN_IF_ERROR(new_regs(f, expr));
  const int *dsts = f->regs[expr->id];
  int n = f->num_regs[expr->id];
  json_t *after[2] = {json_array(), json_array()};
  kiln_status_t status =
      after[0] && after[1] ? KILN_OK : KILN_STATUS(RESOURCE_EXHAUSTED, "vm codegen: out of memory");
  for (int b = 0; b < 2 && !status; ++b) {
    const kiln_function_t *branch = kiln_expr_as_function(call->args[1 + b]);
    status = coerce_code(after[b], dsts, branch->ret_type, expr->checked_type);
  }
  if (!status) {
    status = emit_jump(f, "if", cond[0], 1, 3 + (int)json_array_size(after[0]));
  }
  if (!status) {
    status = emit_branch(f, then_fn, captured, num_captured, dsts, n, after[0]);
  }
  if (!status) {
    status = emit_jump(f, "goto", 2 + (int)json_array_size(after[1]), 0, 0);
  }
  if (!status) {
    status = emit_branch(f, else_fn, captured, num_captured, dsts, n, after[1]);
  }
  json_decref(after[0]);
  json_decref(after[1]);
  return status;
}

/* ---- step stages: built in IR, compiled as stages ---- */

/* A step stage's module under construction; `status` keeps the first
 * error, so building reads as straight-line code. */
typedef struct step_t {
  kiln_module_t *m;
  kiln_status_t status;
  int num_params, num_results;
  kiln_var_t *params[CTL_MAX_REGS];
  kiln_expr_t *results[CTL_MAX_REGS];
} step_t;

static kiln_expr_t *step_param(step_t *s, const kiln_type_t *type) {
  char name[16];
  snprintf(name, sizeof(name), "p%d", s->num_params);
  kiln_var_t *var = NULL;
  if (!s->status && s->num_params < CTL_MAX_REGS) {
    s->status = kiln_ir_var_create(s->m, name, type, &var);
  }
  s->params[s->num_params++] = var;
  return var ? &var->base : NULL;
}

static kiln_expr_t *step_int64(step_t *s, int64_t value) {
  kiln_tensor_t *tensor = NULL;
  kiln_constant_t *constant = NULL;
  if (!s->status) {
    s->status = kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_INT64, 0, NULL, &value,
                                        sizeof(value), &tensor);
  }
  if (!s->status) {
    s->status = kiln_ir_constant_create(s->m, tensor, &constant);
  }
  kiln_tensor_release(tensor);
  return constant ? &constant->base : NULL;
}

static kiln_expr_t *step_call(step_t *s, kiln_op_id_t op, kiln_expr_t *a, kiln_expr_t *b,
                              const void *attrs) {
  kiln_expr_t *args[2] = {a, b};
  kiln_call_t *call = NULL;
  if (!s->status && a && b) {
    s->status = kiln_ir_call_create(s->m, kiln_op_get(op), 2, args, attrs, &call);
  }
  return call ? &call->base : NULL;
}

static void step_result(step_t *s, kiln_expr_t *expr) {
  if (s->num_results < CTL_MAX_REGS) {
    s->results[s->num_results++] = expr;
  }
}

/* The step's function, typed, compiled as a stage named `what`. */
static kiln_status_t step_finish(fn_gen_t *f, step_t *s, const char *what, int *out_index) {
  kiln_tuple_t *tuple = NULL;
  kiln_function_t *fn = NULL;
  if (!s->status && (s->num_params >= CTL_MAX_REGS || s->num_results >= CTL_MAX_REGS)) {
    s->status = KILN_STATUS(UNIMPLEMENTED, "vm codegen: a step of too many values");
  }
  for (int r = 0; !s->status && r < s->num_results; ++r) {
    s->status = s->results[r] ? KILN_OK : KILN_STATUS(INTERNAL, "vm codegen: a step result");
  }
  if (!s->status) {
    s->status = kiln_ir_tuple_create(s->m, s->num_results, s->results, &tuple);
  }
  if (!s->status) {
    s->status = kiln_ir_function_create(s->m, s->num_params, s->params, &tuple->base, &fn);
  }
  if (!s->status) {
    s->status = kiln_module_add_function(s->m, "main", fn);
  }
  if (!s->status) {
    s->status = kiln_ir_infer_function(s->m, "main", fn);
  }
  if (!s->status) {
    char name[96];
    snprintf(name, sizeof(name), "%s_%s%d", f->name, what, f->g->num_stages);
    s->status = add_stage(f->g, s->m, name, out_index);
  }
  kiln_module_destroy(s->m);
  return s->status;
}

static kiln_status_t step_begin(fn_gen_t *f, step_t *s, kiln_expr_t **out_i) {
  memset(s, 0, sizeof(*s));
  KILN_RETURN_IF_ERROR(kiln_module_create(f->g->allocator, &s->m));
  const kiln_type_t *index_type = NULL;
  s->status =
      kiln_tensor_type_create(kiln_module_arena(s->m), KILN_DTYPE_INT64, 0, NULL, &index_type);
  *out_i = step_param(s, index_type);
  return KILN_OK;
}

/* The step of a loop: (i, trip count, cond) -> (i < trip && cond, i + 1). */
static kiln_status_t loop_step(fn_gen_t *f, const kiln_call_t *call, int *out_index) {
  step_t s;
  kiln_expr_t *i = NULL;
  KILN_RETURN_IF_ERROR(step_begin(f, &s, &i));
  kiln_expr_t *trip = step_param(&s, call->args[1]->checked_type);
  kiln_expr_t *cond = step_param(&s, call->args[2]->checked_type);
  kiln_expr_t *less = step_call(&s, KILN_OP_LESS, i, trip, NULL);
  step_result(&s, step_call(&s, KILN_OP_LOGICAL_AND, less, cond, NULL));
  step_result(&s, step_call(&s, KILN_OP_ADD, i, step_int64(&s, 1), NULL));
  return step_finish(f, &s, "loop_step", out_index);
}

/* adt_concat of an ADT of tensors into a tensor of `type` (stacked on a
 * new axis, or concatenated); the empty result's shape when `type` is
 * static. */
static kiln_status_t emit_concat(fn_gen_t *f, int dst, int adt, int axis, bool stack,
                                 const kiln_type_t *type) {
  const kiln_tensor_type_t *t = kiln_type_as_tensor(type);
  json_t *inst = json_pack("[s, i, i, i, i, s]", "adt_concat", dst, adt, axis, stack ? 1 : 0,
                           kiln_dtype_name(t->dtype));
  bool known = axis < t->ndim;
  for (int d = 0; known && t->vars && d < t->ndim; ++d) {
    known = d == axis || !t->vars[d];
  }
  if (inst && known) {
    int64_t shape[KILN_MAX_RANK];
    memcpy(shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    shape[axis] = 0;
    json_t *empty = json_array();
    for (int d = 0; empty && d < t->ndim; ++d) {
      json_array_append_new(empty, json_integer(shape[d]));
    }
    if (!empty || json_array_append_new(inst, empty) != 0) {
      json_decref(inst);
      inst = NULL;
    }
  }
  return kiln_vm_codegen_append(f->code, inst);
}

static kiln_status_t emit_move(fn_gen_t *f, int dst, int src) {
  return kiln_vm_codegen_append(f->code, json_pack("[s, i, i]", "move", dst, src));
}

/* The loop's registers: i, test, next; the state (cond, carried...) moved
 * into registers of its own; per scan output an ADT and a slice. */
typedef struct loop_regs_t {
  int i, test, next, num_state, num_scans;
  int state[CTL_MAX_REGS], acc[CTL_MAX_REGS], slice[CTL_MAX_REGS];
} loop_regs_t;

static kiln_status_t loop_begin(fn_gen_t *f, const int *state, loop_regs_t *l) {
  l->i = f->num_registers++;
  l->test = f->num_registers++;
  l->next = f->num_registers++;
  for (int k = 0; state && k < l->num_state; ++k) {
    l->state[k] = f->num_registers++;
    KILN_RETURN_IF_ERROR(emit_move(f, l->state[k], state[k]));
  }
  for (int k = 0; k < l->num_scans; ++k) {
    l->acc[k] = f->num_registers++;
    l->slice[k] = f->num_registers++;
    KILN_RETURN_IF_ERROR(
        kiln_vm_codegen_append(f->code, json_pack("[s, i, i, []]", "alloc_adt", l->acc[k], 0)));
  }
  return kiln_vm_codegen_append(f->code, json_pack("[s, i, i]", "load_consti", l->i, 0));
}

/* A function's result type: its annotation, or its body's. */
static const kiln_type_t *fn_ret_type(const kiln_function_t *fn) {
  return fn->ret_type ? fn->ret_type : fn->body->checked_type;
}

/* The loop's trips: the step, `if` on it, the body writing the state and
 * the slices, `after` (its results' coercions), each slice appended, then
 * back to the step. */
static kiln_status_t emit_loop_trips(fn_gen_t *f, const loop_regs_t *l, int step, int body_fn,
                                     int trip, const int *captured, int num_captured,
                                     json_t *after) {
  int args[2 * CTL_MAX_REGS + 1], dsts[2 * CTL_MAX_REGS];
  args[0] = l->i;
  memcpy(args + 1, l->state, (size_t)l->num_state * sizeof(int));
  memcpy(args + 1 + l->num_state, captured, (size_t)num_captured * sizeof(int));
  memcpy(dsts, l->state, (size_t)l->num_state * sizeof(int));
  memcpy(dsts + l->num_state, l->slice, (size_t)l->num_scans * sizeof(int));
  int step_args[3] = {l->i, trip, l->state[0]}, step_dsts[2] = {l->test, l->next};
  int length = 4 + l->num_scans + (int)json_array_size(after);
  KILN_RETURN_IF_ERROR(emit_invoke(f, step, step_args, 3, step_dsts, 2));
  KILN_RETURN_IF_ERROR(emit_jump(f, "if", l->test, 1, length));
  KILN_RETURN_IF_ERROR(emit_branch(f, body_fn, args, 1 + l->num_state + num_captured, dsts,
                                   l->num_state + l->num_scans, after));
  for (int k = 0; k < l->num_scans; ++k) {
    KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(
        f->code, json_pack("[s, i, i, i]", "adt_append", l->acc[k], l->acc[k], l->slice[k])));
  }
  KILN_RETURN_IF_ERROR(emit_move(f, l->i, l->next));
  return emit_jump(f, "goto", -length, 0, 0);
}

/* i = 0; while step(i, trip, cond): (cond, carried..., slices...) =
 * body(i, cond, carried..., captured...), each slice appended to its
 * scan output's ADT; i = i + 1. Then each ADT stacked on a new axis 0. */
static kiln_status_t emit_loop(fn_gen_t *f, const kiln_expr_t *expr) {
  const kiln_call_t *call = kiln_expr_as_call(expr);
  const kiln_captured_attrs_t *attrs = call->attrs;
  int num_carried = call->num_args - 3 - (int)attrs->num_captured;
  const kiln_function_t *body = kiln_expr_as_function(call->args[0]);
  loop_regs_t l = {.num_state = 1 + num_carried};
  l.num_scans = body ? flat_count(body->ret_type) - l.num_state : 0;
  int step = 0, body_fn = 0, state[CTL_MAX_REGS], captured[CTL_MAX_REGS];
  int num_state = 0, num_captured = 0, trip_count = 0, cond_count = 0;
  const int *trip = NULL, *cond = NULL;
  KILN_RETURN_IF_ERROR(loop_step(f, call, &step));
  KILN_RETURN_IF_ERROR(body_function(f, call->args[0], "body", &body_fn));
  KILN_RETURN_IF_ERROR(glue_regs(f, call->args[1], &trip, &trip_count));
  KILN_RETURN_IF_ERROR(glue_regs(f, call->args[2], &cond, &cond_count));
  KILN_RETURN_IF_ERROR(arg_regs(f, call, 3, num_carried, state + 1, &num_state));
  KILN_RETURN_IF_ERROR(
      arg_regs(f, call, 3 + num_carried, (int)attrs->num_captured, captured, &num_captured));
  if (num_state != num_carried || l.num_scans < 0 || l.num_state + l.num_scans > CTL_MAX_REGS) {
    return KILN_STATUS(UNIMPLEMENTED, "vm codegen: a loop carrying tuples or too many values");
  }
  state[0] = cond[0];
  KILN_RETURN_IF_ERROR(loop_begin(f, state, &l));
  json_t *after = json_array(); /* the body's results coerced to the carried values' types */
  kiln_status_t status =
      after ? KILN_OK : KILN_STATUS(RESOURCE_EXHAUSTED, "vm codegen: out of memory");
  const kiln_tuple_type_t *ret = kiln_type_as_tuple(fn_ret_type(body));
  for (int k = 1; k < l.num_state && !status; ++k) {
    const kiln_type_t *carried = value_type(&body->params[1 + k]->base);
    status = emit_coerce(f, &l.state[k], call->args[2 + k]->checked_type, carried);
    if (!status) {
      status = coerce_code(after, &l.state[k], ret ? ret->fields[k] : NULL, carried);
    }
  }
  if (!status) {
    status = emit_loop_trips(f, &l, step, body_fn, trip[0], captured, num_captured, after);
  }
  json_decref(after);
  KILN_RETURN_IF_ERROR(status);
  const kiln_tuple_type_t *type = kiln_type_as_tuple(expr->checked_type);
  for (int k = 0; k < num_carried; ++k) {
    KILN_RETURN_IF_ERROR(
        emit_coerce(f, &l.state[1 + k], value_type(&body->params[2 + k]->base), type->fields[k]));
  }
  for (int k = 0; k < l.num_scans; ++k) {
    KILN_RETURN_IF_ERROR(require_tensor(type->fields[num_carried + k], "a scan output"));
    KILN_RETURN_IF_ERROR(
        emit_concat(f, l.slice[k], l.acc[k], 0, true, type->fields[num_carried + k]));
  }
  KILN_RETURN_IF_ERROR(alloc_ints(f->g, num_carried + l.num_scans, &f->regs[expr->id]));
  memcpy(f->regs[expr->id], l.state + 1, (size_t)num_carried * sizeof(int));
  memcpy(f->regs[expr->id] + num_carried, l.slice, (size_t)l.num_scans * sizeof(int));
  f->num_regs[expr->id] = num_carried + l.num_scans;
  return KILN_OK;
}

/* The step of a scan over `n` slices: (i, scan inputs...) -> (i < n,
 * i + 1, each input's slice i on its axis, or n - 1 - i in reverse; take
 * clips, so the last test's slices are in range). */
static kiln_status_t scan_step(fn_gen_t *f, const kiln_call_t *call, int first, int64_t n,
                               int *out_index) {
  const kiln_scan_attrs_t *attrs = call->attrs;
  step_t s;
  kiln_expr_t *i = NULL;
  KILN_RETURN_IF_ERROR(step_begin(f, &s, &i));
  step_result(&s, step_call(&s, KILN_OP_LESS, i, step_int64(&s, n), NULL));
  step_result(&s, step_call(&s, KILN_OP_ADD, i, step_int64(&s, 1), NULL));
  kiln_expr_t *back = step_call(&s, KILN_OP_SUBTRACT, step_int64(&s, n - 1), i, NULL);
  for (int k = 0; k < (int)attrs->num_scan_inputs; ++k) {
    const kiln_type_t *type = call->args[first + k]->checked_type;
    kiln_take_attrs_t *take = NULL;
    if (!s.status) {
      s.status = kiln_arena_allocate(kiln_module_arena(s.m), sizeof(*take),
                                     _Alignof(kiln_take_attrs_t), (void **)&take);
    }
    if (take) {
      take->axis = kiln_scan_attr_at(attrs->scan_input_axes, k, 0);
      take->mode = "clip";
    }
    bool reverse = kiln_scan_attr_at(attrs->scan_input_directions, k, 0) == 1;
    step_result(&s, step_call(&s, KILN_OP_TAKE, step_param(&s, type), reverse ? back : i, take));
  }
  return step_finish(f, &s, "scan_step", out_index);
}

/* The extent the scan runs over: its first scan input's on its axis. */
static kiln_status_t scan_extent(const kiln_call_t *call, int first, int64_t *out_n) {
  const kiln_scan_attrs_t *attrs = call->attrs;
  const kiln_tensor_type_t *t = kiln_type_as_tensor(call->args[first]->checked_type);
  int64_t axis = kiln_scan_attr_at(attrs->scan_input_axes, 0, 0);
  axis += t && axis < 0 ? t->ndim : 0;
  if (attrs->num_scan_inputs < 1 || !t || axis < 0 || axis >= t->ndim ||
      (t->vars && t->vars[axis])) {
    return KILN_STATUS(UNIMPLEMENTED, "vm codegen: a scan without a scan input of static extent");
  }
  *out_n = t->shape[axis];
  return KILN_OK;
}

/* Per scan output: an ADT of the slices (appended, or inserted first in
 * reverse), joined on its axis after the last trip. */
static kiln_status_t scan_collect(fn_gen_t *f, const kiln_call_t *call, const loop_regs_t *l,
                                  int zero) {
  const kiln_scan_attrs_t *attrs = call->attrs;
  for (int k = 0; k < l->num_scans; ++k) {
    bool reverse = kiln_scan_attr_at(attrs->scan_output_directions, k, 0) == 1;
    json_t *inst =
        reverse
            ? json_pack("[s, i, i, i, i]", "adt_insert", l->acc[k], l->acc[k], l->slice[k], zero)
            : json_pack("[s, i, i, i]", "adt_append", l->acc[k], l->acc[k], l->slice[k]);
    KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(f->code, inst));
  }
  return KILN_OK;
}

static kiln_status_t scan_join(fn_gen_t *f, const kiln_expr_t *expr, const loop_regs_t *l) {
  const kiln_scan_attrs_t *attrs = kiln_expr_as_call(expr)->attrs;
  const kiln_tuple_type_t *type = kiln_type_as_tuple(expr->checked_type);
  for (int k = 0; k < l->num_scans; ++k) {
    const kiln_type_t *out = type->fields[l->num_state + k];
    KILN_RETURN_IF_ERROR(require_tensor(out, "a scan output"));
    int64_t axis = kiln_scan_attr_at(attrs->scan_output_axes, k, 0);
    axis += axis < 0 ? kiln_type_as_tensor(out)->ndim : 0;
    KILN_RETURN_IF_ERROR(emit_concat(f, l->slice[k], l->acc[k], (int)axis, true, out));
  }
  return KILN_OK;
}

/* i = 0; while i < n: slices = slice i of each scan input; (states...,
 * outputs...) = body(states..., slices..., captured...), each output
 * collected; i = i + 1. Then each output's slices joined on its axis. */
static kiln_status_t emit_scan(fn_gen_t *f, const kiln_expr_t *expr) {
  const kiln_call_t *call = kiln_expr_as_call(expr);
  const kiln_scan_attrs_t *attrs = call->attrs;
  int num_in = (int)attrs->num_scan_inputs, num_captured = (int)attrs->num_captured;
  int num_states = call->num_args - 1 - num_in - num_captured;
  const kiln_function_t *body = kiln_expr_as_function(call->args[0]);
  loop_regs_t l = {.num_state = num_states};
  l.num_scans = body ? flat_count(body->ret_type) - num_states : -1;
  int64_t n = 0;
  int step = 0, body_fn = 0, state[CTL_MAX_REGS], inputs[CTL_MAX_REGS], captured[CTL_MAX_REGS];
  int count = 0, zero = f->num_registers++;
  KILN_RETURN_IF_ERROR(scan_extent(call, 1 + num_states, &n));
  KILN_RETURN_IF_ERROR(scan_step(f, call, 1 + num_states, n, &step));
  KILN_RETURN_IF_ERROR(body_function(f, call->args[0], "body", &body_fn));
  KILN_RETURN_IF_ERROR(arg_regs(f, call, 1, num_states, state, &count));
  bool flat = count == num_states;
  KILN_RETURN_IF_ERROR(arg_regs(f, call, 1 + num_states, num_in, inputs + 1, &count));
  flat &= count == num_in;
  KILN_RETURN_IF_ERROR(arg_regs(f, call, 1 + num_states + num_in, num_captured, captured, &count));
  if (!flat || l.num_scans < 0 || num_states + num_in + count + l.num_scans > CTL_MAX_REGS) {
    return KILN_STATUS(UNIMPLEMENTED, "vm codegen: a scan over tuples or too many values");
  }
  KILN_RETURN_IF_ERROR(loop_begin(f, state, &l));
  KILN_RETURN_IF_ERROR(
      kiln_vm_codegen_append(f->code, json_pack("[s, i, i]", "load_consti", zero, 0)));
  int slices[CTL_MAX_REGS], step_dsts[CTL_MAX_REGS + 2] = {l.test, l.next};
  int args[3 * CTL_MAX_REGS], dsts[2 * CTL_MAX_REGS];
  inputs[0] = l.i;
  for (int k = 0; k < num_in; ++k) {
    slices[k] = step_dsts[2 + k] = f->num_registers++;
  }
  memcpy(args, l.state, (size_t)num_states * sizeof(int));
  memcpy(args + num_states, slices, (size_t)num_in * sizeof(int));
  memcpy(args + num_states + num_in, captured, (size_t)count * sizeof(int));
  memcpy(dsts, l.state, (size_t)num_states * sizeof(int));
  memcpy(dsts + num_states, l.slice, (size_t)l.num_scans * sizeof(int));
  KILN_RETURN_IF_ERROR(emit_invoke(f, step, inputs, 1 + num_in, step_dsts, 2 + num_in));
  KILN_RETURN_IF_ERROR(emit_jump(f, "if", l.test, 1, 4 + l.num_scans));
  KILN_RETURN_IF_ERROR(
      emit_invoke(f, body_fn, args, num_states + num_in + count, dsts, num_states + l.num_scans));
  KILN_RETURN_IF_ERROR(scan_collect(f, call, &l, zero));
  KILN_RETURN_IF_ERROR(emit_move(f, l.i, l.next));
  KILN_RETURN_IF_ERROR(emit_jump(f, "goto", -(4 + l.num_scans), 0, 0));
  KILN_RETURN_IF_ERROR(scan_join(f, expr, &l));
  KILN_RETURN_IF_ERROR(alloc_ints(f->g, num_states + l.num_scans, &f->regs[expr->id]));
  memcpy(f->regs[expr->id], l.state, (size_t)num_states * sizeof(int));
  memcpy(f->regs[expr->id] + num_states, l.slice, (size_t)l.num_scans * sizeof(int));
  f->num_regs[expr->id] = num_states + l.num_scans;
  return KILN_OK;
}

/* ---- sequences and optionals: ADTs ---- */

/* The step of a seq.map: (i, n) -> (i < n, i + 1). */
static kiln_status_t map_step(fn_gen_t *f, int *out_index) {
  step_t s;
  kiln_expr_t *i = NULL;
  KILN_RETURN_IF_ERROR(step_begin(f, &s, &i));
  kiln_expr_t *n = step_param(&s, s.params[0] ? s.params[0]->type_annotation : NULL);
  step_result(&s, step_call(&s, KILN_OP_LESS, i, n, NULL));
  step_result(&s, step_call(&s, KILN_OP_ADD, i, step_int64(&s, 1), NULL));
  return step_finish(f, &s, "map_step", out_index);
}

static kiln_status_t emit_op(fn_gen_t *f, const char *op, int dst, int adt, int extra) {
  json_t *inst = extra < 0 ? json_pack("[s, i, i]", op, dst, adt)
                           : json_pack("[s, i, i, i]", op, dst, adt, extra);
  return kiln_vm_codegen_append(f->code, inst);
}

/* n = adt_length(the first sequence); per trip each sequence's element i
 * (tensors as they are) and the captured values go to the body, each
 * result appended to its ADT. */
static kiln_status_t emit_map(fn_gen_t *f, const kiln_expr_t *expr) {
  const kiln_call_t *call = kiln_expr_as_call(expr);
  const kiln_captured_attrs_t *attrs = call->attrs;
  int num_inputs = call->num_args - 1 - (int)attrs->num_captured, step = 0, body_fn = 0;
  int args[CTL_MAX_REGS], seqs[CTL_MAX_REGS], elems[CTL_MAX_REGS], num_seqs = 0, count = 0;
  KILN_RETURN_IF_ERROR(map_step(f, &step));
  KILN_RETURN_IF_ERROR(body_function(f, call->args[0], "map", &body_fn));
  KILN_RETURN_IF_ERROR(arg_regs(f, call, 1, call->num_args - 1, args, &count));
  if (count != call->num_args - 1) {
    return KILN_STATUS(UNIMPLEMENTED, "vm codegen: seq.map over tuples");
  }
  for (int a = 0; a < num_inputs; ++a) {
    if (kiln_type_as_sequence(call->args[1 + a]->checked_type)) {
      seqs[num_seqs] = args[a];
      elems[num_seqs++] = args[a] = f->num_registers++;
    }
  }
  loop_regs_t l = {.num_scans = flat_count(expr->checked_type)};
  if (num_seqs == 0) {
    return KILN_STATUS(UNIMPLEMENTED, "vm codegen: seq.map without a sequence");
  }
  KILN_RETURN_IF_ERROR(loop_begin(f, NULL, &l));
  int n = f->num_registers++, step_args[2] = {l.i, n}, step_dsts[2] = {l.test, l.next};
  KILN_RETURN_IF_ERROR(emit_op(f, "adt_length", n, seqs[0], -1));
  KILN_RETURN_IF_ERROR(emit_invoke(f, step, step_args, 2, step_dsts, 2));
  KILN_RETURN_IF_ERROR(emit_jump(f, "if", l.test, 1, 4 + num_seqs + l.num_scans));
  for (int k = 0; k < num_seqs; ++k) {
    KILN_RETURN_IF_ERROR(emit_op(f, "adt_get", elems[k], seqs[k], l.i));
  }
  KILN_RETURN_IF_ERROR(emit_invoke(f, body_fn, args, count, l.slice, l.num_scans));
  for (int k = 0; k < l.num_scans; ++k) {
    KILN_RETURN_IF_ERROR(emit_op(f, "adt_append", l.acc[k], l.acc[k], l.slice[k]));
  }
  KILN_RETURN_IF_ERROR(emit_move(f, l.i, l.next));
  KILN_RETURN_IF_ERROR(emit_jump(f, "goto", -(4 + num_seqs + l.num_scans), 0, 0));
  KILN_RETURN_IF_ERROR(alloc_ints(f->g, l.num_scans, &f->regs[expr->id]));
  memcpy(f->regs[expr->id], l.acc, (size_t)l.num_scans * sizeof(int));
  f->num_regs[expr->id] = l.num_scans;
  return KILN_OK;
}

/* optional.has_element and optional.get_element: of a tensor or a
 * sequence, true and the value itself. */
static kiln_status_t emit_optional_read(fn_gen_t *f, const kiln_call_t *call, int dst,
                                        const int *arg) {
  bool optional = kiln_type_as_optional(call->args[0]->checked_type) != NULL;
  if (call->op->id == KILN_OP_OPTIONAL_GET_ELEMENT) {
    return optional ? emit_op(f, "get_field", dst, arg[0], 0) : emit_move(f, dst, arg[0]);
  }
  if (!optional) {
    KILN_RETURN_IF_ERROR(emit_alloc_adt(f, dst, 1, arg, 1));
    return emit_op(f, "adt_has", dst, dst, -1);
  }
  return emit_op(f, "adt_has", dst, arg[0], -1);
}

static kiln_status_t emit_seq_concat(fn_gen_t *f, const kiln_call_t *call, int dst, int adt) {
  const kiln_seq_concat_attrs_t *attrs = call->attrs;
  const kiln_type_t *type = call->base.checked_type;
  KILN_RETURN_IF_ERROR(require_tensor(type, "seq.concat's result"));
  int64_t axis = attrs->axis + (attrs->axis < 0 ? kiln_type_as_tensor(type)->ndim : 0);
  return emit_concat(f, dst, adt, (int)axis, attrs->new_axis, type);
}

/* The sequence and optional operators on ADTs (seq.map and seq.split
 * aside). */
static kiln_status_t emit_adt_op(fn_gen_t *f, const kiln_expr_t *expr) {
  const kiln_call_t *call = kiln_expr_as_call(expr);
  int args[CTL_MAX_REGS], count = 0;
  KILN_RETURN_IF_ERROR(arg_regs(f, call, 0, call->num_args, args, &count));
  if (count != call->num_args || kiln_type_as_tuple(expr->checked_type)) {
    return KILN_STATUS(UNIMPLEMENTED, "vm codegen: %s over tuples", call->op->name);
  }
  KILN_RETURN_IF_ERROR(new_regs(f, expr));
  int dst = f->regs[expr->id][0];
  switch ((int)call->op->id) {
  case KILN_OP_SEQ_EMPTY:
  case KILN_OP_SEQ_CONSTRUCT:
    return emit_alloc_adt(f, dst, 0, args, count);
  case KILN_OP_OPTIONAL:
    return emit_alloc_adt(f, dst, count, args, count);
  case KILN_OP_SEQ_INSERT:
    return count == 3 ? kiln_vm_codegen_append(f->code, json_pack("[s, i, i, i, i]", "adt_insert",
                                                                  dst, args[0], args[1], args[2]))
                      : emit_op(f, "adt_append", dst, args[0], args[1]);
  case KILN_OP_SEQ_AT:
    return emit_op(f, "adt_get", dst, args[0], args[1]);
  case KILN_OP_SEQ_ERASE:
    return emit_op(f, "adt_erase", dst, args[0], count == 2 ? args[1] : -1);
  case KILN_OP_SEQ_LENGTH:
    return emit_op(f, "adt_length", dst, args[0], -1);
  case KILN_OP_SEQ_CONCAT:
    return emit_seq_concat(f, call, dst, args[0]);
  case KILN_OP_OPTIONAL_HAS_ELEMENT:
  case KILN_OP_OPTIONAL_GET_ELEMENT:
    return emit_optional_read(f, call, dst, args);
  default:
    return KILN_STATUS(UNIMPLEMENTED, "vm codegen: %s is not compiled for the VM yet",
                       call->op->name);
  }
}

static kiln_status_t emit_control(fn_gen_t *f, const kiln_expr_t *expr) {
  const kiln_call_t *call = kiln_expr_as_call(expr);
  if (call->op->id == KILN_OP_IF) {
    return emit_if(f, expr);
  }
  if (call->op->id == KILN_OP_LOOP) {
    return emit_loop(f, expr);
  }
  if (call->op->id == KILN_OP_SCAN) {
    return emit_scan(f, expr);
  }
  if (call->op->id == KILN_OP_SEQ_MAP) {
    return emit_map(f, expr);
  }
  return emit_adt_op(f, expr);
}

/* Walks the function: stages are emitted before the control call that
 * ends them; the last one before the return. */
static kiln_status_t emit_body(fn_gen_t *f) {
  int pending = 0;
  for (size_t i = 0; i < kiln_ir_order_count(&f->order); ++i) {
    const kiln_expr_t *expr = kiln_ir_order_node(&f->order, i);
    if (!f->live[expr->id] || f->stage[expr->id] != STAGE_GLUE ||
        expr->kind == KILN_EXPR_KIND_VAR || expr->kind == KILN_EXPR_KIND_FUNCTION) {
      pending |= f->live[expr->id] && f->stage[expr->id] == f->current_stage;
      continue;
    }
    char node[KILN_IR_ORDER_NAME_CAPACITY];
    kiln_ir_order_describe(&f->order, i, node);
    if (is_control(expr)) {
      if (pending) {
        KILN_RETURN_IF_ERROR_ANNOTATE(emit_stage(f, f->current_stage), "before %s", node);
      }
      pending = 0;
      KILN_RETURN_IF_ERROR_ANNOTATE(emit_control(f, expr), "%s", node);
      f->current_stage++;
    } else if (expr != f->fn->body) {
      KILN_RETURN_IF_ERROR_ANNOTATE(glue_select(f, expr), "%s", node);
    }
  }
  if (pending) {
    KILN_RETURN_IF_ERROR(emit_stage(f, f->current_stage));
  }
  if (f->stage[f->fn->body->id] == STAGE_GLUE && !f->regs[f->fn->body->id]) {
    KILN_RETURN_IF_ERROR(glue_select(f, f->fn->body));
  }
  const int *regs = NULL;
  int count = 0;
  KILN_RETURN_IF_ERROR(glue_regs(f, f->fn->body, &regs, &count));
  return kiln_vm_codegen_append(f->code,
                                json_pack("[s, o]", "ret", kiln_vm_codegen_ints_json(regs, count)));
}

static kiln_status_t fn_tables(fn_gen_t *f) {
  kiln_arena_t *arena = &f->g->arena;
  size_t n = f->g->node_count + 1;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(arena, n, sizeof(int), _Alignof(int), (void **)&f->stage));
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(arena, n, sizeof(int), _Alignof(int), (void **)&f->num_regs));
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(arena, n, sizeof(bool), _Alignof(bool), (void **)&f->live));
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(arena, n, sizeof(bool), _Alignof(bool), (void **)&f->output));
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(arena, n, sizeof(int *), _Alignof(int *), (void **)&f->regs));
  memset(f->live, 0, n * sizeof(bool));
  memset(f->output, 0, n * sizeof(bool));
  memset(f->regs, 0, n * sizeof(int *));
  memset(f->num_regs, 0, n * sizeof(int));
  for (size_t i = 0; i < n; ++i) {
    f->stage[i] = STAGE_NONE;
  }
  return KILN_OK;
}

/* The parameters: registers 0 .. n-1. */
static kiln_status_t bind_params(fn_gen_t *f) {
  for (int p = 0; p < f->fn->num_params; ++p) {
    const kiln_var_t *param = f->fn->params[p];
    if (kiln_type_as_tuple(value_type(&param->base))) {
      return KILN_STATUS(UNIMPLEMENTED, "vm codegen: a parameter %%%s is a tuple", param->name);
    }
    KILN_RETURN_IF_ERROR(alloc_ints(f->g, 1, &f->regs[param->base.id]));
    f->regs[param->base.id][0] = f->num_registers++;
    f->num_regs[param->base.id] = 1;
  }
  return KILN_OK;
}

static kiln_status_t gen_function_body(fn_gen_t *f) {
  KILN_RETURN_IF_ERROR(fn_tables(f));
  KILN_RETURN_IF_ERROR(bind_params(f));
  mark_live(f);
  assign_stages(f);
  f->current_stage = 0;
  return emit_body(f);
}

static kiln_status_t gen_function(ctl_gen_t *g, const kiln_function_t *fn, const char *name,
                                  int *out_index) {
  fn_gen_t f = {.g = g, .fn = fn, .name = name, .code = json_array()};
  *out_index = (int)json_array_size(g->functions);
  json_t *entry = json_pack("{s:s, s:i, s:i, s:O}", "name", name, "params", fn->num_params,
                            "registers", 0, "code", f.code);
  KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(g->functions, entry));
  json_decref(f.code);
  KILN_RETURN_IF_ERROR(kiln_ir_order_compute(fn, g->allocator, &f.order));
  kiln_status_t status = gen_function_body(&f);
  kiln_ir_order_deinitialize(&f.order);
  KILN_RETURN_IF_ERROR_ANNOTATE(status, "in @%s", name);
  return kiln_json_object_set_new(entry, "registers", json_integer(f.num_registers));
}

/* ---- the program ---- */

/* An input's or output's declaration: a tensor, a sequence or an optional
 * of tensors, or an optional of a sequence (their tensors' type, "kind"
 * saying which). */
static kiln_status_t io_decl(json_t *array, const char *name, const kiln_type_t *type) {
  const kiln_optional_type_t *opt = kiln_type_as_optional(type);
  const kiln_sequence_type_t *seq = kiln_type_as_sequence(opt ? opt->element : type);
  const kiln_type_t *element = seq ? seq->element : opt ? opt->element : type;
  if (!kiln_type_as_tensor(element) && !(seq && !element)) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "vm codegen: %s is not a tensor, a sequence or an optional of tensors, or "
                       "an optional of a sequence",
                       name);
  }
  const char *kind = opt && seq ? "optional_sequence" : seq ? "sequence" : "optional";
  json_t *decl = element
                     ? type_decl_json(name, element)
                     : json_pack("{s:s, s:s}", "name", name, "dtype", kiln_dtype_name(seq->dtype));
  if (decl && (seq || opt) && json_object_set_new(decl, "kind", json_string(kind)) != 0) {
    json_decref(decl);
    decl = NULL;
  }
  return kiln_vm_codegen_append(array, decl);
}

static kiln_status_t gen_declarations(const kiln_function_t *main_fn, json_t *inputs,
                                      json_t *outputs) {
  for (int p = 0; p < main_fn->num_params; ++p) {
    const kiln_var_t *param = main_fn->params[p];
    KILN_RETURN_IF_ERROR(io_decl(inputs, param->name, value_type(&param->base)));
  }
  const kiln_type_t *ret = main_fn->body->checked_type;
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(ret);
  int count = tuple ? tuple->count : 1;
  for (int o = 0; o < count; ++o) {
    const kiln_type_t *type = tuple ? tuple->fields[o] : ret;
    char name[32];
    snprintf(name, sizeof(name), "output%d", o);
    KILN_RETURN_IF_ERROR(io_decl(outputs, name, type));
  }
  return KILN_OK;
}

static kiln_status_t gen_program(ctl_gen_t *g, const kiln_module_t *module, json_t *root) {
  const kiln_function_t *main_fn = kiln_module_get_function(module, "main");
  if (!main_fn) {
    return KILN_STATUS(INVALID_ARGUMENT, "the module has no main function");
  }
  json_t *inputs = json_array(), *outputs = json_array();
  g->kernels = json_array();
  g->constants = json_array();
  g->functions = json_array();
  json_t *values[] = {g->kernels, g->constants, inputs, outputs, g->functions};
  static const char *const keys[] = {"kernels", "constants", "inputs", "outputs", "functions"};
  bool failed = false;
  for (int i = 0; i < 5; ++i) {
    failed |= !values[i] || json_object_set(root, keys[i], values[i]) != 0;
    json_decref(values[i]);
  }
  if (failed) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "vm codegen: out of memory");
  }
  KILN_RETURN_IF_ERROR(gen_declarations(main_fn, inputs, outputs));
  int index = 0;
  return gen_function(g, main_fn, "main", &index);
}

kiln_status_t kiln_vm_codegen_control(kiln_allocator_t allocator, kiln_module_t *module,
                                      const kiln_vm_stage_compiler_t *stages, char **out_vm_json) {
  *out_vm_json = NULL;
  ctl_gen_t g = {
      .allocator = allocator, .stages = stages, .node_count = kiln_module_node_count(module)};
  kiln_arena_initialize(&g.arena, allocator, 1 << 14);
  json_t *root = json_pack("{s:s, s:i}", "format", "kiln-vm", "version", 1);
  kiln_status_t status =
      root ? gen_program(&g, module, root) : KILN_STATUS(RESOURCE_EXHAUSTED, "out of memory");
  if (!status) {
    status = kiln_json_dump(allocator, root, 0, out_vm_json);
  }
  json_decref(root);
  kiln_arena_deinitialize(&g.arena);
  return kiln_status_annotate(status, "vm codegen (control flow)");
}
