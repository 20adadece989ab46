/*
 * Graph code generation (graph_codegen.h).
 *
 * One walk over main's canonical order builds the node table, the entry
 * table (one entry per node output, numbered in node order, so a node's
 * entries are node_row_ptr[node] + output) and, per IR node, the entries it
 * stands for. Kernels are found by key in a string map; the JSON is built
 * with jansson at the end from the two tables.
 */
#include <string.h>

#include "base/array.h"
#include "base/hashmap.h"
#include "base/json.h"
#include "base/strbuf.h"
#include "compiler/graph_codegen.h"
#include "compiler/key.h"
#include "compiler/lower.h"
#include "compiler/tuning.h"
#include "ir/order.h"
#include "op/dyn.h"
#include "op/nn_common.h"
#include "runtime/extern_kernel.h"
#include "runtime/shape_func.h"

typedef struct node_t {
  const char *name;
  const char *func_name; /* NULL for an input or a param */
  int num_inputs;
  const int *inputs; /* entry ids */
  int num_outputs;
  int first_entry;
  int64_t flops;
  const char *shape_func; /* "__view": the runtime's shape function (runtime/shape_func.h) */
  int64_t shape_func_attr;
  int num_shape_func_inputs;    /* 0: the shape function takes the node's inputs in order */
  const int *shape_func_inputs; /* else: positions among the node's inputs, per argument */
  const char *extern_kernel;    /* "__extern": the runtime's (runtime/extern_kernel.h) */
  int num_extern_attrs;
  int64_t extern_attrs[KILN_EXTERN_MAX_ATTRS];
} node_t;

/* One output of a node: its type, and the call and field it comes from
 * (NULL for an input or a param), which the memory plan knows it by. */
typedef struct entry_t {
  const kiln_tensor_type_t *type;
  const kiln_expr_t *expr;
  int field;
} entry_t;

/* The entries an IR node stands for. */
typedef struct value_t {
  int count;
  const int *entries;
} value_t;

typedef struct codegen_t {
  kiln_allocator_t allocator;
  kiln_arena_t *arena;
  const kiln_schedule_target_t *target;
  const kiln_tuning_t *tuning;    /* may be NULL */
  const kiln_memory_plan_t *plan; /* may be NULL */
  kiln_graph_codegen_t *out;
  kiln_ir_order_t order;
  bool have_order;
  kiln_array_t nodes;     /* node_t */
  kiln_array_t types;     /* const kiln_tensor_type_t *, per entry */
  kiln_array_t funcs;     /* const kiln_tir_prim_func_t * */
  kiln_array_t keys;      /* const char * (in the arena): each func's key */
  kiln_array_t functions; /* const kiln_function_t *: each func's function */
  kiln_array_t calls;     /* int: each func's calls */
  kiln_array_t params;    /* kiln_tensor_t * (retained), param_names parallel */
  kiln_array_t names;     /* const char * */
  kiln_hashmap_t values;  /* IR node -> value_t * */
  kiln_hashmap_t kernels; /* key -> func index + 1 */
  kiln_hashmap_t used;    /* kernel name -> count of uses (for suffixes) */
} codegen_t;

/* ---- tables ---- */

static kiln_status_t add_node(codegen_t *g, const kiln_expr_t *call, const char *name,
                              const char *func_name, int num_inputs, const int *inputs,
                              int num_outputs, const kiln_tensor_type_t *const *types,
                              int64_t flops, value_t **out_value) {
  node_t node = {name,   func_name,   num_inputs,
                 inputs, num_outputs, (int)kiln_array_count(&g->types),
                 flops,  NULL,        0};
  KILN_RETURN_IF_ERROR(kiln_array_push(&g->nodes, &node));
  int *entries = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(g->arena, (size_t)num_outputs, sizeof(int),
                                                 _Alignof(int), (void **)&entries));
  for (int o = 0; o < num_outputs; ++o) {
    entries[o] = node.first_entry + o;
    entry_t entry = {types[o], call, o};
    KILN_RETURN_IF_ERROR(kiln_array_push(&g->types, &entry));
  }
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate(g->arena, sizeof(value_t), _Alignof(value_t), (void **)out_value));
  **out_value = (value_t){num_outputs, entries};
  return KILN_OK;
}

static const value_t *value_of(const codegen_t *g, const kiln_expr_t *expr) {
  void *value = NULL;
  return kiln_hashmap_get(&g->values, expr, &value) ? value : NULL;
}

/* The tensor types of a node's outputs: its type, or its tuple's fields. */
static kiln_status_t output_types(codegen_t *g, const kiln_type_t *type, int *out_count,
                                  const kiln_tensor_type_t ***out_types) {
  const kiln_tuple_type_t *tuple = type ? kiln_type_as_tuple(type) : NULL;
  int count = tuple ? tuple->count : 1;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(g->arena, (size_t)count, sizeof(void *),
                                                 _Alignof(void *), (void **)out_types));
  for (int i = 0; i < count; ++i) {
    const kiln_type_t *field = tuple ? tuple->fields[i] : type;
    (*out_types)[i] = field ? kiln_type_as_tensor(field) : NULL;
    if (!(*out_types)[i]) {
      return KILN_STATUS(INVALID_ARGUMENT, "output %d is not a typed tensor (run infer_type)", i);
    }
  }
  *out_count = count;
  return KILN_OK;
}

/* ---- inputs and params ---- */

static kiln_status_t visit_var(codegen_t *g, const kiln_var_t *var, value_t **out_value) {
  int count = 0;
  const kiln_tensor_type_t **types = NULL;
  /* A parameter the body does not read has no checked type: its annotation. */
  const kiln_type_t *type = var->base.checked_type ? var->base.checked_type : var->type_annotation;
  KILN_RETURN_IF_ERROR(output_types(g, type, &count, &types));
  if (count != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "input %%%s is a tuple; inputs must be tensors",
                       var->name);
  }
  return add_node(g, NULL, var->name, NULL, 0, NULL, 1, types, 0, out_value);
}

static kiln_status_t visit_constant(codegen_t *g, const kiln_constant_t *constant,
                                    value_t **out_value) {
  char *name = NULL;
  size_t index = kiln_array_count(&g->params);
  char buffer[32];
  snprintf(buffer, sizeof(buffer), "p%zu", index);
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(g->arena, buffer, &name));
  const kiln_tensor_type_t *type = kiln_type_as_tensor(constant->base.checked_type);
  if (!type) {
    return KILN_STATUS(INVALID_ARGUMENT, "constant without a type (run infer_type)");
  }
  KILN_RETURN_IF_ERROR(kiln_array_push(&g->names, &name));
  kiln_tensor_t *tensor = constant->value;
  KILN_RETURN_IF_ERROR(kiln_array_push(&g->params, &tensor));
  kiln_tensor_retain(tensor);
  return add_node(g, NULL, name, NULL, 0, NULL, 1, &type, 0, out_value);
}

/* ---- kernels ---- */

/* 2 x multiply-adds of the conv and matrix-product calls of `function`
 * (nn.dense, nn.matmul, nn.batch_matmul, nn.contrib_dense_pack: the ids
 * op_list.h keeps together). */
static int64_t call_flops(const kiln_call_t *call) {
  const kiln_tensor_type_t *out = kiln_type_as_tensor(call->base.checked_type);
  if (!call->op || !out || call->num_args < 2 || !kiln_type_is_static(call->base.checked_type)) {
    return 0; /* a symbolic dim: not known at build time */
  }
  int64_t out_elems = 1;
  for (int d = 0; d < out->ndim; ++d) {
    out_elems *= out->shape[d];
  }
  const kiln_tensor_type_t *x = kiln_type_as_tensor(call->args[0]->checked_type);
  const kiln_tensor_type_t *w = kiln_type_as_tensor(call->args[1]->checked_type);
  if (!x || !w || !kiln_tensor_type_is_static(x) || !kiln_tensor_type_is_static(w)) {
    return 0;
  }
  const char *name = call->op->name;
  if (strcmp(name, "nn.conv2d") == 0 || strcmp(name, "nn.contrib_conv2d_NCHWc") == 0) {
    const kiln_nn_conv2d_attrs_t *a = call->attrs;
    kiln_layout_t layout;
    if (kiln_layout_parse(a->kernel_layout, &layout) != KILN_OK) {
      return 0; /* validated already; no status can be pending here */
    }
    int64_t weight = 1, out_channels = 1;
    for (int d = 0; d < w->ndim && d < layout.ndim; ++d) {
      weight *= w->shape[d];
      out_channels *= kiln_layout_axis_primal(&layout, d) == 'O' ? w->shape[d] : 1;
    }
    return out_channels ? 2 * out_elems * (weight / out_channels) : 0;
  }
  if (call->op->id >= KILN_OP_DENSE && call->op->id <= KILN_OP_DENSE_PACK) {
    return 2 * out_elems * x->shape[x->ndim - 1];
  }
  return 0;
}

static int64_t function_flops(const kiln_ir_order_t *order) {
  int64_t flops = 0;
  for (size_t i = 0; i < kiln_ir_order_count(order); ++i) {
    const kiln_call_t *call = kiln_expr_as_call(kiln_ir_order_node(order, i));
    flops += call ? call_flops(call) : 0;
  }
  return flops;
}

/* "fused_nn_conv2d_add_nn_relu" (operators in order, dots as underscores),
 * with "_<n>" when the name is taken by another kernel. */
static kiln_status_t kernel_name(codegen_t *g, const kiln_ir_order_t *order, char **out_name) {
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, g->allocator);
  kiln_status_t status = kiln_strbuf_append(&sb, "fused");
  for (size_t i = 0; !status && i < kiln_ir_order_count(order) && kiln_strbuf_length(&sb) < 80;
       ++i) {
    const kiln_call_t *call = kiln_expr_as_call(kiln_ir_order_node(order, i));
    if (call && call->op) {
      status = kiln_strbuf_appendf(&sb, "_%s", call->op->name);
    }
  }
  void *uses = NULL;
  if (!status && kiln_hashmap_get(&g->used, kiln_strbuf_c_str(&sb), &uses)) {
    status = kiln_hashmap_put(&g->used, kiln_strbuf_c_str(&sb), (void *)((uintptr_t)uses + 1));
    if (!status) {
      status = kiln_strbuf_appendf(&sb, "_%zu", (size_t)(uintptr_t)uses);
    }
  } else if (!status) {
    status = kiln_hashmap_put(&g->used, kiln_strbuf_c_str(&sb), (void *)(uintptr_t)1);
  }
  if (!status) {
    status = kiln_arena_strdup(g->arena, kiln_strbuf_c_str(&sb), out_name);
  }
  kiln_strbuf_deinitialize(&sb);
  if (!status) {
    for (char *c = *out_name; *c; ++c) {
      *c = *c == '.' ? '_' : *c;
    }
  }
  return status;
}

/* An array's elements copied into the arena (one spare element: never a
 * zero-sized allocation). */
static kiln_status_t copy_out(kiln_arena_t *arena, const kiln_array_t *array, void **out_data) {
  size_t count = kiln_array_count(array), size = array->element_size;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(arena, count + 1, size, _Alignof(max_align_t), out_data));
  if (count > 0) {
    memcpy(*out_data, kiln_array_data(array), count * size);
  }
  return KILN_OK;
}

/* The tuned configuration of the kernel of `key`, or NULL; when there is
 * one, the key gets it. */
static kiln_status_t tuned_config(const codegen_t *g, kiln_strbuf_t *key,
                                  const kiln_schedule_config_t **out_config) {
  char task[KILN_TUNING_TASK_CHARS];
  kiln_tuning_task_of(kiln_strbuf_c_str(key), task);
  *out_config = kiln_tuning_find(g->tuning, task);
  if (!*out_config) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(key, " @tuned "));
  return kiln_schedule_config_format(*out_config, key);
}

/* A new kernel: lowered with its configuration and added. */
static kiln_status_t add_kernel(codegen_t *g, const kiln_function_t *function,
                                const kiln_ir_order_t *order, const char *key,
                                const kiln_schedule_config_t *config,
                                const kiln_tir_prim_func_t **out_func) {
  char *name = NULL;
  kiln_schedule_target_t target = *g->target;
  target.config = config;
  KILN_RETURN_IF_ERROR(kernel_name(g, order, &name));
  KILN_RETURN_IF_ERROR(kiln_compiler_lower_function(function, &target, g->arena, name, out_func));
  char *key_copy = NULL;
  int calls = 0;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(g->arena, key, &key_copy));
  KILN_RETURN_IF_ERROR(kiln_array_push(&g->keys, &key_copy));
  KILN_RETURN_IF_ERROR(kiln_array_push(&g->functions, &function));
  KILN_RETURN_IF_ERROR(kiln_array_push(&g->calls, &calls));
  KILN_RETURN_IF_ERROR(kiln_array_push(&g->funcs, out_func));
  return kiln_hashmap_put(&g->kernels, key, (void *)(uintptr_t)kiln_array_count(&g->funcs));
}

/* The kernel of `function`: found by key, or lowered and added; its calls
 * counted. */
static kiln_status_t kernel_of(codegen_t *g, const kiln_function_t *function,
                               const kiln_tir_prim_func_t **out_func, int64_t *out_flops) {
  kiln_strbuf_t key;
  kiln_strbuf_initialize(&key, g->allocator);
  kiln_ir_order_t order;
  const kiln_schedule_config_t *config = NULL;
  kiln_status_t status = kiln_compiler_function_key(function, &key);
  if (!status) {
    status = tuned_config(g, &key, &config);
  }
  if (status) {
    kiln_strbuf_deinitialize(&key);
    return status;
  }
  status = kiln_ir_order_compute(function, g->allocator, &order);
  if (!status) {
    *out_flops = function_flops(&order);
    void *found = NULL;
    if (!kiln_hashmap_get(&g->kernels, kiln_strbuf_c_str(&key), &found)) {
      status = add_kernel(g, function, &order, kiln_strbuf_c_str(&key), config, out_func);
      found = (void *)(uintptr_t)kiln_array_count(&g->funcs);
    }
    if (!status) {
      *out_func = *(const kiln_tir_prim_func_t **)kiln_array_at(&g->funcs, (uintptr_t)found - 1);
      ++*(int *)kiln_array_at(&g->calls, (uintptr_t)found - 1);
    }
    kiln_ir_order_deinitialize(&order);
  }
  kiln_strbuf_deinitialize(&key);
  return status;
}

/* The index of `fn`'s parameter that `expr` is, or -1. */
static int param_index(const kiln_function_t *fn, const kiln_expr_t *expr) {
  for (int p = 0; p < fn->num_params; ++p) {
    if (expr == &fn->params[p]->base) {
      return p;
    }
  }
  return -1;
}

/* The call of an operator found by `find` (a runtime shape function's or
 * extern kernel's) that primitive function `fn` is: one call whose
 * arguments are parameters, in order when `in_order`; NULL for any other
 * function. */
static const kiln_call_t *runtime_call(const kiln_function_t *fn, int (*find)(const char *),
                                       bool in_order) {
  const kiln_call_t *call = kiln_expr_as_call(fn->body);
  int index = call && call->op ? find(call->op->name) : -1;
  if (index < 0 || (in_order && call->num_args != fn->num_params)) {
    return NULL;
  }
  for (int a = 0; a < call->num_args; ++a) {
    int p = param_index(fn, call->args[a]);
    if (p < 0 || (in_order && p != a)) {
      return NULL;
    }
  }
  return call;
}

/* The call of a dyn operator with a runtime shape function
 * (runtime/shape_func.h) that `fn` is, or NULL. Its arguments may be the
 * parameters in another order or one twice (fuse_ops gives equal
 * constants one parameter): set_shape_func maps them. */
static const kiln_call_t *dyn_call(const kiln_function_t *fn) {
  return runtime_call(fn, kiln_shape_func_find, false);
}

/* UNIMPLEMENTED when primitive function `fn` is a call of an operator whose
 * output shape depends on its inputs' values (a shape function in its
 * definition, a symbolic output type) but that the runtime has no shape
 * function for: the VM cannot
 * size its output (checked before lowering, whose errors would be less
 * clear). */
static kiln_status_t check_value_shaped(const kiln_function_t *fn) {
  const kiln_call_t *call = kiln_expr_as_call(fn->body);
  if (!call || !call->op || !call->op->shape_func || kiln_type_is_static(call->base.checked_type) ||
      kiln_shape_func_find(call->op->name) >= 0) {
    return KILN_OK; /* a static output (dyn.cumsum): its compute rule decides */
  }
  return KILN_STATUS(UNIMPLEMENTED,
                     "%s: its output shape depends on its inputs' values and the runtime has no "
                     "shape function for it, so neither the graph executor nor the VM compiles it "
                     "yet (run the module on the interpreter; docs/dynamic-shapes.md)",
                     call->op->name);
}

/* The last node's output shape comes from the runtime's shape function of
 * dyn call `dyn`, the body of `fn` (vm_symbolic.c): its arguments are the
 * node's inputs, or, when they are not `fn`'s parameters in order, the
 * inputs at the positions "shape_func_inputs" lists. */
static kiln_status_t set_shape_func(codegen_t *g, const kiln_function_t *fn,
                                    const kiln_call_t *dyn) {
  node_t *node = kiln_array_at(&g->nodes, kiln_array_count(&g->nodes) - 1);
  node->shape_func = dyn->op->name;
  node->shape_func_attr = kiln_dyn_shape_func_attr(dyn->op, dyn->attrs);
  if (runtime_call(fn, kiln_shape_func_find, true)) {
    return KILN_OK;
  }
  int *positions = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(g->arena, (size_t)dyn->num_args, sizeof(int),
                                                 _Alignof(int), (void **)&positions));
  for (int a = 0; a < dyn->num_args; ++a) {
    positions[a] = param_index(fn, dyn->args[a]);
  }
  node->num_shape_func_inputs = dyn->num_args;
  node->shape_func_inputs = positions;
  return KILN_OK;
}

/* The call of an operator the runtime has an extern kernel for that
 * primitive function `fn` is, each argument one of its parameters (in any
 * order, one passed twice when common subexpression elimination merged
 * two equal constants: dyn.resize's empty roi and scales), or NULL. */
static const kiln_call_t *extern_call(const kiln_function_t *fn) {
  return runtime_call(fn, kiln_extern_kernel_find, false);
}

/* A call of an operator the runtime has an extern kernel for (nonzero,
 * unique, vision.non_max_suppression, stft, mel_weight_matrix,
 * dyn.resize): no kernel; the VM's call_extern runs the runtime's, which
 * allocates the outputs (vm_symbolic.c). Its inputs are the entries of
 * `inputs` (the primitive call's) its arguments' parameters name. */
static kiln_status_t add_extern(codegen_t *g, const kiln_call_t *call, const kiln_call_t *ext,
                                const int *inputs, int count, const kiln_tensor_type_t **types,
                                value_t **out_value) {
  int *args = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(g->arena, (size_t)ext->num_args + 1, sizeof(int),
                                                 _Alignof(int), (void **)&args));
  for (int a = 0; a < ext->num_args; ++a) {
    args[a] = inputs[param_index(call->callee, ext->args[a])];
  }
  KILN_RETURN_IF_ERROR(add_node(g, &call->base, ext->op->name, "__extern", ext->num_args, args,
                                count, types, 0, out_value));
  node_t *node = kiln_array_at(&g->nodes, kiln_array_count(&g->nodes) - 1);
  node->extern_kernel = ext->op->name;
  node->num_extern_attrs = kiln_value_shape_extern_attrs(ext->op, ext->attrs, node->extern_attrs);
  return KILN_OK;
}

/* Whether every one of the `count` outputs is static with no elements: the
 * call writes nothing, so it needs no kernel (te takes no empty extents). */
static bool outputs_empty(int count, const kiln_tensor_type_t *const *types) {
  for (int o = 0; o < count; ++o) {
    bool empty = false;
    for (int d = 0; kiln_tensor_type_is_static(types[o]) && d < types[o]->ndim; ++d) {
      empty = empty || types[o]->shape[d] == 0;
    }
    if (!empty) {
      return false;
    }
  }
  return count > 0;
}

static kiln_status_t visit_call(codegen_t *g, const kiln_call_t *call, value_t **out_value) {
  if (call->op) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "main calls %s directly: kernels are made from primitive functions (run "
                       "fuse_ops first)",
                       call->op->name);
  }
  if (!call->callee->primitive) {
    return KILN_STATUS(INVALID_ARGUMENT, "a call of a function that is not primitive");
  }
  int *inputs = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(g->arena, (size_t)call->num_args + 1, sizeof(int),
                                                 _Alignof(int), (void **)&inputs));
  for (int a = 0; a < call->num_args; ++a) {
    const value_t *arg = value_of(g, call->args[a]);
    if (!arg || arg->count != 1) {
      return KILN_STATUS(INVALID_ARGUMENT, "argument %d is not a tensor", a);
    }
    inputs[a] = arg->entries[0];
  }
  int count = 0;
  const kiln_tensor_type_t **types = NULL;
  KILN_RETURN_IF_ERROR(output_types(g, call->base.checked_type, &count, &types));
  const kiln_memory_plan_entry_t *planned =
      g->plan ? kiln_memory_plan_find(g->plan, &call->base, 0) : NULL;
  if (planned && planned->in_place) { /* its inputs were written into it */
    return add_node(g, &call->base, "in_place_concatenate", "__nop", call->num_args, inputs, count,
                    types, 0, out_value);
  }
  if (outputs_empty(count, types)) {
    return add_node(g, &call->base, "empty_output", "__nop", call->num_args, inputs, count, types,
                    0, out_value);
  }
  const kiln_call_t *dyn = dyn_call(call->callee);
  if (dyn && count == 1 && kiln_shape_func_at(kiln_shape_func_find(dyn->op->name))->view) {
    /* a view: no kernel; the VM gives the data the shape function's shape */
    KILN_RETURN_IF_ERROR(add_node(g, &call->base, dyn->op->name, "__view", call->num_args, inputs,
                                  1, types, 0, out_value));
    return set_shape_func(g, call->callee, dyn);
  }
  const kiln_call_t *ext = extern_call(call->callee);
  if (ext) {
    return add_extern(g, call, ext, inputs, count, types, out_value);
  }
  KILN_RETURN_IF_ERROR(check_value_shaped(call->callee));
  const kiln_tir_prim_func_t *func = NULL;
  int64_t flops = 0;
  KILN_RETURN_IF_ERROR(kernel_of(g, call->callee, &func, &flops));
  KILN_RETURN_IF_ERROR(add_node(g, &call->base, func->name, func->name, call->num_args, inputs,
                                count, types, flops, out_value));
  return dyn ? set_shape_func(g, call->callee, dyn) : KILN_OK;
}

/* ---- routing ---- */

static kiln_status_t visit_tuple(codegen_t *g, const kiln_tuple_t *tuple, value_t **out_value) {
  int total = 0;
  for (int f = 0; f < tuple->num_fields; ++f) {
    const value_t *field = value_of(g, tuple->fields[f]);
    total += field ? field->count : 0;
  }
  int *entries = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(g->arena, (size_t)total + 1, sizeof(int),
                                                 _Alignof(int), (void **)&entries));
  int n = 0;
  for (int f = 0; f < tuple->num_fields; ++f) {
    const value_t *field = value_of(g, tuple->fields[f]);
    for (int e = 0; field && e < field->count; ++e) {
      entries[n++] = field->entries[e];
    }
  }
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate(g->arena, sizeof(value_t), _Alignof(value_t), (void **)out_value));
  **out_value = (value_t){n, entries};
  return KILN_OK;
}

static kiln_status_t visit_get_item(codegen_t *g, const kiln_tuple_get_item_t *item,
                                    value_t **out_value) {
  const value_t *tuple = value_of(g, item->tuple);
  if (!tuple || item->index < 0 || item->index >= tuple->count) {
    return KILN_STATUS(INVALID_ARGUMENT, "field %d of a value with %d fields", item->index,
                       tuple ? tuple->count : 0);
  }
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate(g->arena, sizeof(value_t), _Alignof(value_t), (void **)out_value));
  **out_value = (value_t){1, &tuple->entries[item->index]};
  return KILN_OK;
}

static kiln_status_t visit(codegen_t *g, const kiln_expr_t *expr, value_t **out_value) {
  switch (expr->kind) {
  case KILN_EXPR_KIND_VAR:
    return visit_var(g, kiln_expr_as_var(expr), out_value);
  case KILN_EXPR_KIND_CONSTANT:
    return visit_constant(g, kiln_expr_as_constant(expr), out_value);
  case KILN_EXPR_KIND_CALL:
    return visit_call(g, kiln_expr_as_call(expr), out_value);
  case KILN_EXPR_KIND_TUPLE:
    return visit_tuple(g, kiln_expr_as_tuple(expr), out_value);
  case KILN_EXPR_KIND_TUPLE_GET_ITEM:
    return visit_get_item(g, kiln_expr_as_tuple_get_item(expr), out_value);
  case KILN_EXPR_KIND_FUNCTION:
  case KILN_EXPR_KIND_COUNT_:
    break;
  }
  return KILN_STATUS(INVALID_ARGUMENT, "a %s in main", kiln_expr_kind_name(expr->kind));
}

/* Visits main's nodes; a primitive function's own nodes (which the order
 * lists before its call) are skipped: only nodes of main itself count. */
static kiln_status_t walk_main(codegen_t *g, const kiln_function_t *main_fn) {
  KILN_RETURN_IF_ERROR(kiln_ir_order_compute(main_fn, g->allocator, &g->order));
  g->have_order = true;
  kiln_hashmap_t inner;
  kiln_hashmap_initialize(&inner, g->allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_status_t status = KILN_OK;
  size_t count = kiln_ir_order_count(&g->order);
  for (size_t i = count; !status && i-- > 0;) { /* mark the nodes inside callees */
    const kiln_call_t *call = kiln_expr_as_call(kiln_ir_order_node(&g->order, i));
    if (call && call->callee) {
      kiln_ir_order_t callee;
      status = kiln_ir_order_compute(call->callee, g->allocator, &callee);
      if (status) {
        break;
      }
      status = kiln_hashmap_put(&inner, &call->callee->base, NULL);
      for (size_t k = 0; !status && k < kiln_ir_order_count(&callee); ++k) {
        status = kiln_hashmap_put(&inner, kiln_ir_order_node(&callee, k), NULL);
      }
      kiln_ir_order_deinitialize(&callee);
    }
  }
  /* Every parameter is an input, in parameter order, used or not. */
  for (int p = 0; !status && p < main_fn->num_params; ++p) {
    value_t *value = NULL;
    status = kiln_status_annotate(visit_var(g, main_fn->params[p], &value), "in @main");
    if (!status) {
      status = kiln_hashmap_put(&g->values, &main_fn->params[p]->base, value);
    }
  }
  for (size_t i = 0; !status && i < count; ++i) {
    const kiln_expr_t *expr = kiln_ir_order_node(&g->order, i);
    if (kiln_hashmap_contains(&inner, expr) || value_of(g, expr)) {
      continue;
    }
    value_t *value = NULL;
    char buffer[64];
    status = kiln_status_annotate(visit(g, expr, &value), "in @main, %s",
                                  kiln_ir_order_describe(&g->order, i, buffer));
    if (!status) {
      status = kiln_hashmap_put(&g->values, expr, value);
    }
  }
  kiln_hashmap_deinitialize(&inner);
  return status;
}

/* ---- JSON ---- */

/* Takes `value` (NULL when jansson could not allocate it). */
static kiln_status_t set(json_t *object, const char *key, json_t *value) {
  return kiln_json_object_set_new(object, key, value);
}

static kiln_status_t append(json_t *array, json_t *value) {
  return kiln_json_array_append_new(array, value);
}

static kiln_status_t node_json(const codegen_t *g, const node_t *node, json_t **out) {
  json_t *object = json_object(), *inputs = json_array();
  *out = object;
  if (!object || !inputs) {
    json_decref(inputs);
    return KILN_STATUS(RESOURCE_EXHAUSTED, "graph.json: out of memory");
  }
  KILN_RETURN_IF_ERROR(set(object, "op", json_string(node->func_name ? "tvm_op" : "null")));
  KILN_RETURN_IF_ERROR(set(object, "name", json_string(node->name)));
  if (node->func_name) {
    json_t *attrs = json_object();
    KILN_RETURN_IF_ERROR(set(object, "attrs", attrs));
    char number[32];
    KILN_RETURN_IF_ERROR(set(attrs, "func_name", json_string(node->func_name)));
    snprintf(number, sizeof(number), "%d", node->num_inputs);
    KILN_RETURN_IF_ERROR(set(attrs, "num_inputs", json_string(number)));
    snprintf(number, sizeof(number), "%d", node->num_outputs);
    KILN_RETURN_IF_ERROR(set(attrs, "num_outputs", json_string(number)));
    KILN_RETURN_IF_ERROR(set(attrs, "flatten_data", json_string("0")));
    if (node->shape_func) {
      KILN_RETURN_IF_ERROR(set(attrs, "shape_func", json_string(node->shape_func)));
      KILN_RETURN_IF_ERROR(set(attrs, "shape_func_attr", json_integer(node->shape_func_attr)));
    }
    if (node->num_shape_func_inputs > 0) {
      json_t *positions = json_array();
      KILN_RETURN_IF_ERROR(set(attrs, "shape_func_inputs", positions));
      for (int a = 0; a < node->num_shape_func_inputs; ++a) {
        KILN_RETURN_IF_ERROR(append(positions, json_integer(node->shape_func_inputs[a])));
      }
    }
    if (node->extern_kernel) {
      KILN_RETURN_IF_ERROR(set(attrs, "extern", json_string(node->extern_kernel)));
      json_t *values = json_array();
      KILN_RETURN_IF_ERROR(set(attrs, "extern_attrs", values));
      for (int a = 0; a < node->num_extern_attrs; ++a) {
        KILN_RETURN_IF_ERROR(append(values, json_integer(node->extern_attrs[a])));
      }
    }
  }
  KILN_RETURN_IF_ERROR(set(object, "inputs", inputs));
  for (int i = 0; i < node->num_inputs; ++i) {
    int entry = node->inputs[i];
    const node_t *source = NULL;
    int source_index = 0;
    for (size_t n = 0; n < kiln_array_count(&g->nodes); ++n) {
      const node_t *candidate = kiln_array_at(&g->nodes, n);
      if (entry >= candidate->first_entry &&
          entry < candidate->first_entry + candidate->num_outputs) {
        source = candidate;
        source_index = (int)n;
      }
    }
    KILN_RETURN_IF_ERROR(append(
        inputs, json_pack("[iii]", source_index, entry - (source ? source->first_entry : 0), 0)));
  }
  return KILN_OK;
}

/* ["list_int", [...]] style attribute arrays. */
static kiln_status_t tagged(json_t *attrs, const char *key, const char *tag, json_t **out_list) {
  *out_list = json_array();
  json_t *pair = json_array();
  KILN_RETURN_IF_ERROR(set(attrs, key, pair));
  KILN_RETURN_IF_ERROR(append(pair, json_string(tag)));
  return append(pair, *out_list);
}

/* The plan's storage of an entry, or a fresh one after the plan's. */
static int storage_of(const kiln_memory_plan_entry_t *planned, int *next_fresh) {
  return planned && planned->storage_id >= 0 ? planned->storage_id : (*next_fresh)++;
}

static kiln_status_t attrs_json(const codegen_t *g, const kiln_memory_plan_t *plan, json_t *graph) {
  json_t *attrs = json_object();
  KILN_RETURN_IF_ERROR(set(graph, "attrs", attrs));
  json_t *dltype = NULL, *storage = NULL, *shape = NULL, *flops = NULL, *offsets = NULL;
  KILN_RETURN_IF_ERROR(tagged(attrs, "dltype", "list_str", &dltype));
  KILN_RETURN_IF_ERROR(tagged(attrs, "storage_id", "list_int", &storage));
  KILN_RETURN_IF_ERROR(tagged(attrs, "shape", "list_shape", &shape));
  KILN_RETURN_IF_ERROR(tagged(attrs, "kiln_flops", "list_int", &flops));
  /* kiln's own "storage_offset" (bytes into the storage), kept only when
   * the plan placed some entry away from its storage's start */
  KILN_RETURN_IF_ERROR(tagged(attrs, "storage_offset", "list_int", &offsets));
  int next_fresh = plan ? plan->num_storages : 0;
  bool any_offset = false;
  for (size_t e = 0; e < kiln_array_count(&g->types); ++e) {
    const entry_t *entry = kiln_array_at(&g->types, e);
    const kiln_tensor_type_t *type = entry->type;
    const kiln_memory_plan_entry_t *planned =
        plan && entry->expr ? kiln_memory_plan_find(plan, entry->expr, entry->field) : NULL;
    size_t offset = planned && planned->storage_id >= 0 ? planned->offset : 0;
    any_offset = any_offset || offset > 0;
    KILN_RETURN_IF_ERROR(append(dltype, json_string(kiln_dtype_name(type->dtype))));
    KILN_RETURN_IF_ERROR(append(storage, json_integer(storage_of(planned, &next_fresh))));
    KILN_RETURN_IF_ERROR(append(offsets, json_integer((json_int_t)offset)));
    json_t *dims = json_array();
    KILN_RETURN_IF_ERROR(append(shape, dims));
    for (int d = 0; d < type->ndim; ++d) {
      KILN_RETURN_IF_ERROR(append(dims, json_integer(type->shape[d])));
    }
  }
  for (size_t n = 0; n < kiln_array_count(&g->nodes); ++n) {
    const node_t *node = kiln_array_at(&g->nodes, n);
    KILN_RETURN_IF_ERROR(append(flops, json_integer(node->flops)));
  }
  if (!any_offset) {
    json_object_del(attrs, "storage_offset");
  }
  return KILN_OK;
}

static kiln_status_t graph_json(const codegen_t *g, const value_t *heads,
                                const kiln_memory_plan_t *plan, json_t *graph) {
  json_t *nodes = json_array(), *arg_nodes = json_array(), *row_ptr = json_array(),
         *head_list = json_array();
  KILN_RETURN_IF_ERROR(set(graph, "nodes", nodes));
  KILN_RETURN_IF_ERROR(set(graph, "arg_nodes", arg_nodes));
  KILN_RETURN_IF_ERROR(set(graph, "heads", head_list));
  KILN_RETURN_IF_ERROR(set(graph, "node_row_ptr", row_ptr));
  for (size_t n = 0; n < kiln_array_count(&g->nodes); ++n) {
    const node_t *node = kiln_array_at(&g->nodes, n);
    json_t *object = NULL;
    kiln_status_t status = node_json(g, node, &object);
    if (status) {
      json_decref(object);
      return status;
    }
    KILN_RETURN_IF_ERROR(append(nodes, object));
    if (!node->func_name) {
      KILN_RETURN_IF_ERROR(append(arg_nodes, json_integer((json_int_t)n)));
    }
    KILN_RETURN_IF_ERROR(append(row_ptr, json_integer(node->first_entry)));
  }
  KILN_RETURN_IF_ERROR(append(row_ptr, json_integer((json_int_t)kiln_array_count(&g->types))));
  for (int h = 0; h < heads->count; ++h) {
    int entry = heads->entries[h];
    for (size_t n = 0; n < kiln_array_count(&g->nodes); ++n) {
      const node_t *node = kiln_array_at(&g->nodes, n);
      if (entry >= node->first_entry && entry < node->first_entry + node->num_outputs) {
        KILN_RETURN_IF_ERROR(
            append(head_list, json_pack("[iii]", (int)n, entry - node->first_entry, 0)));
      }
    }
  }
  return attrs_json(g, plan, graph);
}

/* ---- entry point ---- */

static kiln_status_t finish(codegen_t *g, const kiln_function_t *main_fn,
                            const kiln_memory_plan_t *plan) {
  const value_t *heads = value_of(g, main_fn->body);
  if (!heads) {
    return KILN_STATUS(INTERNAL, "main's result has no entries");
  }
  json_t *graph = json_object();
  kiln_status_t status = graph ? graph_json(g, heads, plan, graph)
                               : KILN_STATUS(RESOURCE_EXHAUSTED, "graph.json: out of memory");
  if (!status) {
    status = kiln_json_dump(g->allocator, graph, 1, &g->out->graph_json);
  }
  json_decref(graph);
  KILN_RETURN_IF_ERROR(status);
  kiln_graph_codegen_t *out = g->out;
  out->num_funcs = (int)kiln_array_count(&g->funcs);
  KILN_RETURN_IF_ERROR(copy_out(g->arena, &g->funcs, (void **)&out->funcs));
  KILN_RETURN_IF_ERROR(copy_out(g->arena, &g->keys, (void **)&out->func_keys));
  KILN_RETURN_IF_ERROR(copy_out(g->arena, &g->functions, (void **)&out->functions));
  KILN_RETURN_IF_ERROR(copy_out(g->arena, &g->calls, (void **)&out->func_calls));
  out->num_nodes = (int)kiln_array_count(&g->nodes);
  out->num_entries = (int)kiln_array_count(&g->types);
  for (size_t n = 0; n < kiln_array_count(&g->nodes); ++n) {
    const node_t *node = kiln_array_at(&g->nodes, n);
    out->num_kernel_calls += node->func_name && strcmp(node->func_name, "__nop") != 0 &&
                             strcmp(node->func_name, "__view") != 0 &&
                             strcmp(node->func_name, "__extern") != 0;
    out->total_flops += node->flops;
  }
  return KILN_OK;
}

/* Hands the params to the result (also on failure, so they are released). */
static kiln_status_t take_params(codegen_t *g) {
  kiln_graph_codegen_t *out = g->out;
  size_t count = kiln_array_count(&g->params);
  kiln_status_t status = kiln_arena_allocate_array(g->arena, count + 1, sizeof(void *),
                                                   _Alignof(void *), (void **)&out->params);
  if (!status) {
    status = kiln_arena_allocate_array(g->arena, count + 1, sizeof(void *), _Alignof(void *),
                                       (void **)&out->param_names);
  }
  if (status) {
    for (size_t i = 0; i < count; ++i) {
      kiln_tensor_release(*(kiln_tensor_t **)kiln_array_at(&g->params, i));
    }
    return status;
  }
  if (count > 0) { /* an empty array has no data */
    memcpy(out->params, kiln_array_data(&g->params), count * sizeof(void *));
    memcpy(out->param_names, kiln_array_data(&g->names), count * sizeof(void *));
  }
  out->num_params = (int)count;
  return KILN_OK;
}

kiln_status_t kiln_graph_codegen(kiln_allocator_t allocator, kiln_module_t *module,
                                 const kiln_schedule_target_t *target,
                                 const kiln_memory_plan_t *plan, kiln_arena_t *arena,
                                 kiln_graph_codegen_t *out_graph) {
  return kiln_graph_codegen_tuned(allocator, module, target, NULL, plan, arena, out_graph);
}

kiln_status_t kiln_graph_codegen_tuned(kiln_allocator_t allocator, kiln_module_t *module,
                                       const kiln_schedule_target_t *target,
                                       const kiln_tuning_t *tuning, const kiln_memory_plan_t *plan,
                                       kiln_arena_t *arena, kiln_graph_codegen_t *out_graph) {
  memset(out_graph, 0, sizeof(*out_graph));
  out_graph->allocator = allocator;
  const kiln_function_t *main_fn = kiln_module_get_function(module, "main");
  if (!main_fn) {
    return KILN_STATUS(INVALID_ARGUMENT, "the module has no main function");
  }
  codegen_t g = {.allocator = allocator,
                 .arena = arena,
                 .target = target,
                 .tuning = tuning,
                 .plan = plan,
                 .out = out_graph};
  kiln_array_initialize(&g.nodes, allocator, sizeof(node_t));
  kiln_array_initialize(&g.types, allocator, sizeof(entry_t));
  kiln_array_initialize(&g.funcs, allocator, sizeof(void *));
  kiln_array_initialize(&g.keys, allocator, sizeof(void *));
  kiln_array_initialize(&g.functions, allocator, sizeof(void *));
  kiln_array_initialize(&g.calls, allocator, sizeof(int));
  kiln_array_initialize(&g.params, allocator, sizeof(void *));
  kiln_array_initialize(&g.names, allocator, sizeof(void *));
  kiln_hashmap_initialize(&g.values, allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_hashmap_initialize(&g.kernels, allocator, KILN_HASHMAP_KEY_STRING);
  kiln_hashmap_initialize(&g.used, allocator, KILN_HASHMAP_KEY_STRING);
  kiln_status_t status = walk_main(&g, main_fn);
  if (!status) {
    status = finish(&g, main_fn, plan);
  }
  kiln_status_t params_status = take_params(&g);
  if (g.have_order) {
    kiln_ir_order_deinitialize(&g.order);
  }
  kiln_array_deinitialize(&g.nodes);
  kiln_array_deinitialize(&g.types);
  kiln_array_deinitialize(&g.funcs);
  kiln_array_deinitialize(&g.keys);
  kiln_array_deinitialize(&g.functions);
  kiln_array_deinitialize(&g.calls);
  kiln_array_deinitialize(&g.params);
  kiln_array_deinitialize(&g.names);
  kiln_hashmap_deinitialize(&g.values);
  kiln_hashmap_deinitialize(&g.kernels);
  kiln_hashmap_deinitialize(&g.used);
  if (params_status && status) {
    kiln_status_free(params_status);
  } else if (params_status) {
    status = params_status;
  }
  if (status) {
    kiln_graph_codegen_deinitialize(out_graph);
  }
  return status;
}

void kiln_graph_codegen_deinitialize(kiln_graph_codegen_t *graph) {
  for (int i = 0; i < graph->num_params; ++i) {
    kiln_tensor_release(graph->params[i]);
  }
  if (graph->graph_json) {
    kiln_allocator_free(graph->allocator, graph->graph_json);
  }
  kiln_allocator_t allocator = graph->allocator;
  memset(graph, 0, sizeof(*graph));
  graph->allocator = allocator;
}
