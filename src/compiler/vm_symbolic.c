/*
 * VM code generation for a module with symbolic dims (vm_codegen.h,
 * docs/vm.md "Compiling symbolic dims").
 *
 * graph_codegen has lowered every fused group once, over run-time extents
 * (compiler/lower_symbolic.c), and written graph.json with the memory
 * plan's storage ids (pass/plan_memory.h: the values whose dims are static
 * or bounded, at their bounds' sizes; a storage of its own for every other
 * entry) and a dim of -1 where it is symbolic. This file
 * turns that graph into a VM program in which every shape the compiler
 * does not know is computed at run time by kernels, so the runtime needs
 * no compiler:
 *
 * - first, a kernel check_inputs takes every input: its argument checks
 *   bind each dimension variable from the first input that has it and
 *   check every other input against it (and upper bounds), so a mismatching
 *   input fails there, naming the argument and the shape expected;
 * - each plan storage a kernel output takes gets one alloc_storage of the
 *   plan's byte count at the top, after the constants: a planned output
 *   is made inside it at its run-time shape (it fits: check_inputs
 *   refuses an input above a bound), never freed; the plan's lifetimes
 *   are the program's, its walk being graph.json's node order;
 * - any other kernel output of static shape gets alloc_storage and
 *   alloc_tensor as in a static program;
 * - a symbolic one gets a shape kernel, <kernel>_shape<o>: the kernel's
 *   input buffers (which bind the variables from the inputs' shapes) and an
 *   int64 vector it fills with the output's dims, the very expressions the
 *   kernel checks its output against. The program allocates that vector,
 *   calls the shape kernel, then alloc_tensor_reg in the output's plan
 *   storage, or after alloc_storage_shape when it has none;
 * - a view (a dyn.reshape, dyn.squeeze or dyn.unsqueeze: graph_codegen's
 *   "__view" node) is no kernel: the runtime's shape function computes its
 *   shape from its inputs' shapes and values (shape_func, runtime/
 *   shape_func.h) and reshape_tensor makes the view; its data's storage
 *   lives as long as the view (so the data takes no plan storage, whose
 *   lifetime ends at the view's call);
 * - a dyn operator's kernel (dyn.broadcast_to) gets its output's shape from
 *   the runtime's shape function the same way, instead of a shape kernel
 *   (its output dims depend on values, not on its inputs' shapes);
 * - a call of an operator whose output shapes depend on its data's values
 *   (nonzero, unique, vision.non_max_suppression, stft, mel_weight_matrix:
 *   graph_codegen's "__extern" node) is no kernel of the library: call_extern runs the
 *   runtime's kernel of that name (runtime/extern_kernel.h), which sizes
 *   its outputs from the values and allocates them from the VM's pool;
 * - after a kernel call, the per-run storage of each value no later call
 *   reads (and that is not an output) goes back to the pool
 *   (free_storage), so that part of a run's memory follows the live
 *   values, at whatever size.
 * The shape kernels are added to the graph's kernels, to be built with them.
 */
#include <stdio.h>
#include <string.h>

#include "base/array.h"
#include "base/json.h"
#include "base/strbuf.h"
#include "compiler/vm_codegen.h"
#include "tir/functor.h"

#define MAX_ARGS 64

typedef struct sym_gen_t {
  kiln_arena_t *arena;
  const kiln_function_t *main_fn;
  kiln_graph_codegen_t *graph;
  const kiln_memory_plan_t *plan; /* may be NULL */
  const json_t *nodes, *row_ptr, *shapes, *dtypes, *heads, *flops, *storage_ids;
  int num_entries;
  int *entry_reg, *storage_reg, *last_use;
  int *plan_reg; /* per entry: the register of its plan storage, or -1 (per run) */
  bool *is_head, *viewed;
  int num_registers;
  json_t *kernels, *code;
  kiln_array_t extra;      /* const kiln_tir_prim_func_t *: shape and check kernels */
  kiln_array_t extra_keys; /* const char * */
} sym_gen_t;

/* ---- graph.json ---- */

static int node_first_entry(const sym_gen_t *g, int n) {
  return (int)json_integer_value(json_array_get(g->row_ptr, (size_t)n));
}

static int node_num_outputs(const sym_gen_t *g, int n) {
  return node_first_entry(g, n + 1) - node_first_entry(g, n);
}

static const char *node_func(const sym_gen_t *g, int n) {
  const json_t *attrs = json_object_get(json_array_get(g->nodes, (size_t)n), "attrs");
  return attrs ? json_string_value(json_object_get(attrs, "func_name")) : NULL;
}

static const char *node_name(const sym_gen_t *g, int n) {
  return json_string_value(json_object_get(json_array_get(g->nodes, (size_t)n), "name"));
}

/* Entry id of input i of node n. */
static int input_entry(const sym_gen_t *g, int n, int i) {
  const json_t *in =
      json_array_get(json_object_get(json_array_get(g->nodes, (size_t)n), "inputs"), (size_t)i);
  return node_first_entry(g, (int)json_integer_value(json_array_get(in, 0))) +
         (int)json_integer_value(json_array_get(in, 1));
}

static int node_num_inputs(const sym_gen_t *g, int n) {
  return (int)json_array_size(json_object_get(json_array_get(g->nodes, (size_t)n), "inputs"));
}

static const json_t *entry_shape(const sym_gen_t *g, int e) {
  return json_array_get(g->shapes, (size_t)e);
}

static const char *entry_dtype(const sym_gen_t *g, int e) {
  return json_string_value(json_array_get(g->dtypes, (size_t)e));
}

static bool shape_is_static(const json_t *shape) {
  for (size_t d = 0; d < json_array_size(shape); ++d) {
    if (json_integer_value(json_array_get(shape, d)) < 0) {
      return false;
    }
  }
  return true;
}

static bool is_view(const sym_gen_t *g, int n) {
  const char *func = node_func(g, n);
  return func && strcmp(func, "__view") == 0;
}

static bool is_extern(const sym_gen_t *g, int n) {
  const char *func = node_func(g, n);
  return func && strcmp(func, "__extern") == 0;
}

/* A view's data lives as long as the view (its storage is the view's):
 * its last use and being an output extend to the data's, latest view first
 * so that a view of a view reaches the first data; the data is not placed
 * in the plan (whose lifetimes end at the view's call). */
static void extend_viewed(sym_gen_t *g) {
  for (int n = (int)json_array_size(g->nodes); n-- > 0;) {
    if (is_view(g, n)) {
      int data = input_entry(g, n, 0), view = node_first_entry(g, n);
      g->viewed[data] = true;
      g->last_use[data] =
          g->last_use[view] > g->last_use[data] ? g->last_use[view] : g->last_use[data];
      g->is_head[data] = g->is_head[data] || g->is_head[view];
    }
  }
}

static kiln_status_t parse_graph(sym_gen_t *g, const json_t *root) {
  const json_t *attrs = json_object_get(root, "attrs");
  g->nodes = json_object_get(root, "nodes");
  g->row_ptr = json_object_get(root, "node_row_ptr");
  g->heads = json_object_get(root, "heads");
  g->shapes = json_array_get(json_object_get(attrs, "shape"), 1);
  g->dtypes = json_array_get(json_object_get(attrs, "dltype"), 1);
  g->flops = json_array_get(json_object_get(attrs, "kiln_flops"), 1);
  g->storage_ids = json_array_get(json_object_get(attrs, "storage_id"), 1);
  if (!g->nodes || !g->row_ptr || !g->heads || !g->shapes || !g->dtypes) {
    return KILN_STATUS(INTERNAL, "vm codegen: graph.json lacks a member");
  }
  g->num_entries = (int)json_array_size(g->shapes);
  size_t n = (size_t)g->num_entries + 1;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(g->arena, n, sizeof(int), _Alignof(int), (void **)&g->entry_reg));
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(g->arena, n, sizeof(int), _Alignof(int), (void **)&g->storage_reg));
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(g->arena, n, sizeof(int), _Alignof(int), (void **)&g->last_use));
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(g->arena, n, sizeof(int), _Alignof(int), (void **)&g->plan_reg));
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(g->arena, n, sizeof(bool), _Alignof(bool), (void **)&g->is_head));
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(g->arena, n, sizeof(bool), _Alignof(bool), (void **)&g->viewed));
  for (size_t e = 0; e < n; ++e) {
    g->entry_reg[e] = g->storage_reg[e] = g->last_use[e] = g->plan_reg[e] = -1;
    g->is_head[e] = g->viewed[e] = false;
  }
  for (size_t h = 0; h < json_array_size(g->heads); ++h) {
    const json_t *head = json_array_get(g->heads, h);
    int e = node_first_entry(g, (int)json_integer_value(json_array_get(head, 0))) +
            (int)json_integer_value(json_array_get(head, 1));
    g->is_head[e] = true;
  }
  for (int node = 0; node < (int)json_array_size(g->nodes); ++node) {
    for (int i = 0; i < node_num_inputs(g, node); ++i) {
      g->last_use[input_entry(g, node, i)] = node;
    }
  }
  extend_viewed(g);
  return KILN_OK;
}

/* ---- kernels the program adds ---- */

/* A kernel the program adds, cached under `key` (what makes it: the
 * kernel cache is shared between builds). */
static kiln_status_t add_extra(sym_gen_t *g, const kiln_tir_prim_func_t *func, const char *key) {
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(g->arena, key, &copy));
  KILN_RETURN_IF_ERROR(kiln_array_push(&g->extra, &func));
  return kiln_array_push(&g->extra_keys, &copy);
}

static const char *func_key(const sym_gen_t *g, const kiln_tir_prim_func_t *kernel) {
  for (int i = 0; i < g->graph->num_funcs; ++i) {
    if (g->graph->funcs[i] == kernel) {
      return g->graph->func_keys[i];
    }
  }
  return kernel->name;
}

static const kiln_tir_prim_func_t *find_func(const sym_gen_t *g, const char *name) {
  for (int i = 0; i < g->graph->num_funcs; ++i) {
    if (strcmp(g->graph->funcs[i]->name, name) == 0) {
      return g->graph->funcs[i];
    }
  }
  for (size_t i = 0; i < kiln_array_count(&g->extra); ++i) {
    const kiln_tir_prim_func_t *f = KILN_ARRAY_AT(&g->extra, const kiln_tir_prim_func_t *, i);
    if (strcmp(f->name, name) == 0) {
      return f;
    }
  }
  return NULL;
}

/* The bare-variable dims of params[0..count) (what the kernel binds). */
static int bound_vars(const kiln_tir_buffer_t *const *params, int count,
                      const kiln_tir_var_t **out_vars) {
  int n = 0;
  for (int p = 0; p < count; ++p) {
    for (int d = 0; d < params[p]->ndim; ++d) {
      if (params[p]->shape[d]->kind == KILN_TIR_EXPR_VAR && n < MAX_ARGS) {
        out_vars[n++] = (const kiln_tir_var_t *)params[p]->shape[d];
      }
    }
  }
  return n;
}

/* Whether `e` uses only variables among vars[0..n). */
typedef struct free_vars_t {
  kiln_tir_visitor_t visitor; /* first */
  int num_bound;
  const kiln_tir_var_t *const *bound;
  const kiln_tir_var_t *unbound;
} free_vars_t;

static kiln_status_t on_var(kiln_tir_visitor_t *self, const kiln_tir_expr_t *e) {
  free_vars_t *f = (free_vars_t *)self;
  for (int i = 0; i < f->num_bound; ++i) {
    if (&f->bound[i]->base == e) {
      return KILN_OK;
    }
  }
  f->unbound = (const kiln_tir_var_t *)e;
  return KILN_OK;
}

static kiln_status_t check_computable(const kiln_tir_prim_func_t *kernel, int num_inputs,
                                      const kiln_tir_buffer_t *out, int o) {
  const kiln_tir_var_t *vars[MAX_ARGS];
  free_vars_t f = {.num_bound = bound_vars(kernel->params, num_inputs, vars), .bound = vars};
  kiln_tir_visitor_initialize(&f.visitor);
  f.visitor.expr_rules[KILN_TIR_EXPR_VAR] = on_var;
  for (int d = 0; d < out->ndim; ++d) {
    KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(&f.visitor, out->shape[d]));
    if (f.unbound) {
      return KILN_STATUS(UNIMPLEMENTED,
                         "kernel %s: dim %d of output %d depends on %s, which no input's shape "
                         "gives; the VM cannot size it before the call",
                         kernel->name, d, o, f.unbound->name);
    }
  }
  return KILN_OK;
}

/* out[d] = int64(dim d of the output) for each d. */
static kiln_status_t shape_body(kiln_arena_t *arena, const kiln_tir_buffer_t *out,
                                const kiln_tir_buffer_t *vector, const kiln_tir_stmt_t **out_body) {
  const kiln_tir_stmt_t **stores = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)out->ndim + 1, sizeof(void *),
                                                 _Alignof(void *), (void **)&stores));
  for (int d = 0; d < out->ndim; ++d) {
    const kiln_tir_expr_t *index = NULL, *value = NULL;
    KILN_RETURN_IF_ERROR(
        kiln_tir_int_imm_create(arena, kiln_tir_scalar(KILN_DTYPE_INT32), d, &index));
    KILN_RETURN_IF_ERROR(
        kiln_tir_cast_create(arena, kiln_tir_scalar(KILN_DTYPE_INT64), out->shape[d], &value));
    KILN_RETURN_IF_ERROR(kiln_tir_buffer_store_create(arena, vector, value, 1, &index, &stores[d]));
  }
  return kiln_tir_seq_create(arena, out->ndim, stores, out_body);
}

/* The shape kernel of output o of `kernel` (made once). */
static kiln_status_t shape_kernel(sym_gen_t *g, const kiln_tir_prim_func_t *kernel, int num_inputs,
                                  int o, const char **out_name) {
  char name[256];
  snprintf(name, sizeof(name), "%s_shape%d", kernel->name, o);
  if (find_func(g, name)) {
    *out_name = find_func(g, name)->name;
    return KILN_OK;
  }
  const kiln_tir_buffer_t *out = kernel->params[num_inputs + o];
  KILN_RETURN_IF_ERROR(check_computable(kernel, num_inputs, out, o));
  const kiln_tir_buffer_t *vector = NULL, *params[MAX_ARGS + 1];
  int64_t length = out->ndim;
  KILN_RETURN_IF_ERROR(
      kiln_tir_buffer_create_const(g->arena, "shape", KILN_DTYPE_INT64, 1, &length, &vector));
  memcpy(params, kernel->params, (size_t)num_inputs * sizeof(params[0]));
  params[num_inputs] = vector;
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR(shape_body(g->arena, out, vector, &body));
  const kiln_tir_prim_func_t *func = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_tir_prim_func_create(g->arena, name, num_inputs + 1, params, body, 0, NULL, &func));
  kiln_strbuf_t key;
  kiln_strbuf_initialize(&key, kiln_allocator_system());
  kiln_status_t status =
      kiln_strbuf_appendf(&key, "%s @shape of output %d", func_key(g, kernel), o);
  if (!status) {
    status = add_extra(g, func, kiln_strbuf_c_str(&key));
  }
  kiln_strbuf_deinitialize(&key);
  KILN_RETURN_IF_ERROR(status);
  *out_name = func->name;
  return KILN_OK;
}

/* ---- check_inputs ---- */

typedef struct dim_vars_t {
  int count;
  const kiln_dim_var_t *dims[MAX_ARGS];
  const kiln_tir_var_t *vars[MAX_ARGS];
} dim_vars_t;

static kiln_status_t tir_var_of(sym_gen_t *g, dim_vars_t *v, const kiln_dim_var_t *dim,
                                const kiln_tir_expr_t **out) {
  for (int i = 0; i < v->count; ++i) {
    if (dim->name[0] ? kiln_dim_var_equal(v->dims[i], dim) : v->dims[i] == dim) {
      *out = &v->vars[i]->base;
      return KILN_OK;
    }
  }
  if (v->count == MAX_ARGS) {
    return KILN_STATUS(UNIMPLEMENTED, "more than %d symbolic dims in the inputs", MAX_ARGS);
  }
  char name[32];
  snprintf(name, sizeof(name), "%.24s", dim->name[0] ? dim->name : "dim");
  v->dims[v->count] = dim;
  KILN_RETURN_IF_ERROR(
      kiln_tir_var_create(g->arena, name, kiln_tir_scalar(KILN_DTYPE_INT32), &v->vars[v->count]));
  *out = &v->vars[v->count++]->base;
  return KILN_OK;
}

static kiln_status_t input_buffer(sym_gen_t *g, dim_vars_t *v, const kiln_var_t *param,
                                  const kiln_tir_buffer_t **out) {
  const kiln_tensor_type_t *t = kiln_type_as_tensor(param->base.checked_type);
  if (!t) {
    return KILN_STATUS(UNIMPLEMENTED, "input %s is not a tensor", param->name);
  }
  const kiln_tir_expr_t *dims[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < t->ndim; ++d) {
    const kiln_dim_var_t *dim = t->vars ? t->vars[d] : NULL;
    if (dim) {
      KILN_RETURN_IF_ERROR(tir_var_of(g, v, dim, &dims[d]));
    } else {
      KILN_RETURN_IF_ERROR(kiln_tir_int_imm_create(g->arena, kiln_tir_scalar(KILN_DTYPE_INT32),
                                                   t->shape[d], &dims[d]));
    }
  }
  return kiln_tir_buffer_create(g->arena, param->name, t->dtype, t->ndim, dims, NULL, NULL, out);
}

/* assert(v <= bound) per variable with an upper bound, around `body`. */
static kiln_status_t bound_checks(sym_gen_t *g, const dim_vars_t *v, const kiln_tir_stmt_t **body) {
  for (int i = 0; i < v->count; ++i) {
    if (v->dims[i]->upper_bound < 0) {
      continue;
    }
    const kiln_tir_expr_t *bound = NULL, *ok = NULL;
    KILN_RETURN_IF_ERROR(kiln_tir_int_imm_create(g->arena, kiln_tir_scalar(KILN_DTYPE_INT32),
                                                 v->dims[i]->upper_bound, &bound));
    KILN_RETURN_IF_ERROR(
        kiln_tir_binary_create(g->arena, KILN_TIR_EXPR_LE, &v->vars[i]->base, bound, &ok));
    char message[160], *copy = NULL;
    snprintf(message, sizeof(message), "the symbolic dim %s is above its upper bound %lld",
             v->vars[i]->name, (long long)v->dims[i]->upper_bound);
    KILN_RETURN_IF_ERROR(kiln_arena_strdup(g->arena, message, &copy));
    KILN_RETURN_IF_ERROR(kiln_tir_assert_create(g->arena, ok, copy, *body, body));
  }
  return KILN_OK;
}

/* "check_inputs" and the inputs' types. */
static kiln_status_t check_inputs_key(sym_gen_t *g, const kiln_tir_prim_func_t *func) {
  kiln_strbuf_t key;
  kiln_strbuf_initialize(&key, kiln_allocator_system());
  kiln_status_t status = kiln_strbuf_append(&key, "check_inputs");
  for (int i = 0; !status && i < g->main_fn->num_params; ++i) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    status = kiln_strbuf_appendf(&key, " %s",
                                 kiln_type_text(g->main_fn->params[i]->base.checked_type, text));
  }
  if (!status) {
    status = add_extra(g, func, kiln_strbuf_c_str(&key));
  }
  kiln_strbuf_deinitialize(&key);
  return status;
}

static kiln_status_t check_inputs(sym_gen_t *g, int num_inputs) {
  const kiln_tir_buffer_t *params[MAX_ARGS];
  if (num_inputs > MAX_ARGS || num_inputs != g->main_fn->num_params) {
    return KILN_STATUS(UNIMPLEMENTED, "vm codegen: %d inputs (at most %d)", num_inputs, MAX_ARGS);
  }
  dim_vars_t v = {0};
  for (int i = 0; i < num_inputs; ++i) {
    KILN_RETURN_IF_ERROR(input_buffer(g, &v, g->main_fn->params[i], &params[i]));
  }
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_seq_create(g->arena, 0, NULL, &body));
  KILN_RETURN_IF_ERROR(bound_checks(g, &v, &body));
  const kiln_tir_prim_func_t *func = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_prim_func_create(g->arena, "check_inputs", num_inputs, params, body,
                                                 0, NULL, &func));
  KILN_RETURN_IF_ERROR(check_inputs_key(g, func));
  int k = 0, regs[MAX_ARGS];
  KILN_RETURN_IF_ERROR(kiln_vm_codegen_kernel_index(g->kernels, func->name, &k));
  for (int i = 0; i < num_inputs; ++i) {
    regs[i] = i;
  }
  return kiln_vm_codegen_append(g->code, json_pack("[s, i, o, o]", "invoke_packed", k,
                                                   kiln_vm_codegen_ints_json(regs, num_inputs),
                                                   json_array()));
}

/* ---- the program ---- */

static bool is_param(const sym_gen_t *g, const char *name) {
  for (int i = 0; i < g->graph->num_params; ++i) {
    if (strcmp(g->graph->param_names[i], name) == 0) {
      return true;
    }
  }
  return false;
}

static json_t *decl_json(const sym_gen_t *g, const char *name, int e) {
  return json_pack("{s:s, s:s, s:O}", "name", name, "dtype", entry_dtype(g, e), "shape",
                   entry_shape(g, e));
}

static kiln_status_t gen_arguments(sym_gen_t *g, json_t *inputs, json_t *constants) {
  int num_inputs = 0;
  size_t count = json_array_size(g->nodes);
  for (size_t n = 0; n < count; ++n) {
    if (!node_func(g, (int)n) && !is_param(g, node_name(g, (int)n))) {
      int e = node_first_entry(g, (int)n);
      g->entry_reg[e] = num_inputs++;
      KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(inputs, decl_json(g, node_name(g, (int)n), e)));
    }
  }
  g->num_registers = num_inputs;
  KILN_RETURN_IF_ERROR(check_inputs(g, num_inputs));
  for (size_t n = 0; n < count; ++n) {
    if (!node_func(g, (int)n) && is_param(g, node_name(g, (int)n))) {
      int e = node_first_entry(g, (int)n);
      int reg = g->entry_reg[e] = g->num_registers++;
      KILN_RETURN_IF_ERROR(
          kiln_vm_codegen_append(constants, decl_json(g, node_name(g, (int)n), e)));
      KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(
          g->code, json_pack("[s, i, i]", "load_const", reg, (int)json_array_size(constants) - 1)));
    }
  }
  return KILN_OK;
}

static kiln_status_t static_bytes(const sym_gen_t *g, int e, int64_t *out_bytes) {
  kiln_dtype_t dtype = KILN_DTYPE_FLOAT32;
  KILN_RETURN_IF_ERROR(kiln_dtype_from_name(entry_dtype(g, e), &dtype));
  int64_t bytes = (int64_t)kiln_dtype_size(dtype);
  const json_t *shape = entry_shape(g, e);
  for (size_t d = 0; d < json_array_size(shape); ++d) {
    bytes *= json_integer_value(json_array_get(shape, d));
  }
  *out_bytes = bytes > 0 ? bytes : 1;
  return KILN_OK;
}

/* ---- the plan ---- */

/* The plan storage of entry e (graph.json's storage id), or -1: e's
 * storage is then per run. A view's data takes none (its storage lives as
 * long as the view, past the plan's lifetime of it). */
static int plan_storage_of(const sym_gen_t *g, int e) {
  if (!g->plan || !g->storage_ids || g->viewed[e] || g->is_head[e]) {
    return -1;
  }
  json_int_t id = json_integer_value(json_array_get(g->storage_ids, (size_t)e));
  return id >= 0 && id < g->plan->num_storages ? (int)id : -1;
}

/* One alloc_storage, of the plan's size, per plan storage a kernel's
 * output takes, at the top of the program; each such output's plan_reg. */
static kiln_status_t alloc_plan(sym_gen_t *g) {
  int *reg_of = NULL;
  size_t count = g->plan ? (size_t)g->plan->num_storages : 0;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(g->arena, count + 1, sizeof(int), _Alignof(int), (void **)&reg_of));
  for (size_t i = 0; i < count; ++i) {
    reg_of[i] = -1;
  }
  for (int n = 0; n < (int)json_array_size(g->nodes); ++n) {
    bool kernel = node_func(g, n) && !is_view(g, n) && !is_extern(g, n);
    for (int o = 0; kernel && o < node_num_outputs(g, n); ++o) {
      int e = node_first_entry(g, n) + o, id = plan_storage_of(g, e);
      if (id >= 0 && reg_of[id] < 0) {
        reg_of[id] = g->num_registers++;
        KILN_RETURN_IF_ERROR(
            kiln_vm_codegen_append(g->code, json_pack("[s, i, I]", "alloc_storage", reg_of[id],
                                                      (json_int_t)g->plan->storages[id].bytes)));
      }
      g->plan_reg[e] = id >= 0 ? reg_of[id] : -1;
    }
  }
  return KILN_OK;
}

/* ---- allocations ---- */

/* Entry e's storage register: its plan storage's, else one of `bytes`
 * allocated now (freed after e's last use). */
static kiln_status_t storage_for(sym_gen_t *g, int e, int64_t bytes, int *out_storage) {
  if (g->plan_reg[e] >= 0) {
    *out_storage = g->plan_reg[e];
    return KILN_OK;
  }
  int storage = *out_storage = g->storage_reg[e] = g->num_registers++;
  return kiln_vm_codegen_append(
      g->code, json_pack("[s, i, I]", "alloc_storage", storage, (json_int_t)bytes));
}

/* Entry e's tensor of the shape in register `vector`: in its plan
 * storage, else in a storage of that shape allocated now. */
static kiln_status_t alloc_shaped(sym_gen_t *g, int e, int vector) {
  int storage = g->plan_reg[e];
  if (storage < 0) {
    storage = g->storage_reg[e] = g->num_registers++;
    KILN_RETURN_IF_ERROR(
        kiln_vm_codegen_append(g->code, json_pack("[s, i, i, s]", "alloc_storage_shape", storage,
                                                  vector, entry_dtype(g, e))));
  }
  int reg = g->entry_reg[e] = g->num_registers++;
  return kiln_vm_codegen_append(g->code, json_pack("[s, i, i, i, s, i]", "alloc_tensor_reg", reg,
                                                   storage, 0, entry_dtype(g, e), vector));
}

static kiln_status_t alloc_static(sym_gen_t *g, int e) {
  int64_t bytes = 0;
  int storage = 0;
  KILN_RETURN_IF_ERROR(static_bytes(g, e, &bytes));
  KILN_RETURN_IF_ERROR(storage_for(g, e, bytes, &storage));
  int reg = g->entry_reg[e] = g->num_registers++;
  return kiln_vm_codegen_append(g->code,
                                json_pack("[s, i, i, i, s, O]", "alloc_tensor", reg, storage, 0,
                                          entry_dtype(g, e), entry_shape(g, e)));
}

/* The shape vector from the shape kernel, then storage and tensor from it. */
static kiln_status_t alloc_symbolic(sym_gen_t *g, const kiln_tir_prim_func_t *kernel,
                                    int num_inputs, const int *inputs, int o, int e,
                                    int *out_vector_storage) {
  const char *name = NULL;
  KILN_RETURN_IF_ERROR(shape_kernel(g, kernel, num_inputs, o, &name));
  int k = 0;
  KILN_RETURN_IF_ERROR(kiln_vm_codegen_kernel_index(g->kernels, name, &k));
  int ndim = (int)json_array_size(entry_shape(g, e));
  int vstorage = *out_vector_storage = g->num_registers++, vector = g->num_registers++;
  int out[1] = {vector};
  KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(
      g->code, json_pack("[s, i, I]", "alloc_storage", vstorage, (json_int_t)(8 * ndim + 8))));
  KILN_RETURN_IF_ERROR(
      kiln_vm_codegen_append(g->code, json_pack("[s, i, i, i, s, [i]]", "alloc_tensor", vector,
                                                vstorage, 0, "int64", ndim)));
  KILN_RETURN_IF_ERROR(
      kiln_vm_codegen_append(g->code, json_pack("[s, i, o, o]", "invoke_packed", k,
                                                kiln_vm_codegen_ints_json(inputs, num_inputs),
                                                kiln_vm_codegen_ints_json(out, 1))));
  return alloc_shaped(g, e, vector);
}

static kiln_status_t free_storage(sym_gen_t *g, int storage) {
  return kiln_vm_codegen_append(g->code, json_pack("[s, i]", "free_storage", storage));
}

/* Storage of the values no node after `n` reads (a view's data counts as
 * read where the view is). */
static kiln_status_t free_dead(sym_gen_t *g, int n) {
  for (int e = 0; e < g->num_entries; ++e) {
    if (g->last_use[e] == n && !g->is_head[e] && g->storage_reg[e] >= 0) {
      KILN_RETURN_IF_ERROR(free_storage(g, g->storage_reg[e]));
      g->storage_reg[e] = -1;
    }
  }
  return KILN_OK;
}

/* The runtime shape function node n's output shape comes from (a dyn
 * operator's: graph_codegen's "shape_func" attribute), or NULL. */
static const char *node_shape_func(const sym_gen_t *g, int n, json_int_t *out_attr) {
  const json_t *attrs = json_object_get(json_array_get(g->nodes, (size_t)n), "attrs");
  *out_attr = json_integer_value(json_object_get(attrs, "shape_func_attr"));
  return json_string_value(json_object_get(attrs, "shape_func"));
}

/* The registers of node n's shape function's arguments, from its input
 * registers `inputs`: those at the positions graph_codegen's
 * "shape_func_inputs" lists (the dyn call passes its parameters in
 * another order or one twice), else all of them in order. */
static kiln_status_t shape_func_args(const sym_gen_t *g, int n, const int *inputs, int *args,
                                     int *out_count) {
  const json_t *attrs = json_object_get(json_array_get(g->nodes, (size_t)n), "attrs");
  const json_t *positions = json_object_get(attrs, "shape_func_inputs");
  int num_inputs = node_num_inputs(g, n);
  *out_count = positions ? (int)json_array_size(positions) : num_inputs;
  if (*out_count > MAX_ARGS) {
    return KILN_STATUS(UNIMPLEMENTED, "vm codegen: node %s's shape function has %d arguments",
                       node_name(g, n), *out_count);
  }
  for (int a = 0; a < *out_count; ++a) {
    json_int_t p = positions ? json_integer_value(json_array_get(positions, (size_t)a)) : a;
    if (p < 0 || p >= num_inputs) {
      return KILN_STATUS(INTERNAL, "vm codegen: node %s's shape function argument %d is input %lld",
                         node_name(g, n), a, (long long)p);
    }
    args[a] = inputs[p];
  }
  return KILN_OK;
}

/* A new register holding node n's output shape from its shape function,
 * over the node's input registers. */
static kiln_status_t gen_shape_func(sym_gen_t *g, int n, const int *inputs, int *out_vector) {
  json_int_t attr = 0;
  const char *name = node_shape_func(g, n, &attr);
  int args[MAX_ARGS], num_args = 0;
  KILN_RETURN_IF_ERROR(shape_func_args(g, n, inputs, args, &num_args));
  if (!name || num_args < 1) { /* a rule gives every output its shape (dyn.topk's two) */
    return KILN_STATUS(INTERNAL, "vm codegen: node %s lacks its shape function", node_name(g, n));
  }
  int vector = *out_vector = g->num_registers++;
  return kiln_vm_codegen_append(g->code,
                                json_pack("[s, i, s, o, I]", "shape_func", vector, name,
                                          kiln_vm_codegen_ints_json(args, num_args), attr));
}

/* A view (dyn.reshape, dyn.squeeze, dyn.unsqueeze): its shape from the
 * runtime's shape function over its inputs' shapes and values, then the
 * data under that shape; no kernel, no storage of its own. */
static kiln_status_t gen_view(sym_gen_t *g, int n) {
  int num_inputs = node_num_inputs(g, n), inputs[MAX_ARGS], vector = 0;
  if (num_inputs > MAX_ARGS) {
    return KILN_STATUS(UNIMPLEMENTED, "vm codegen: view %s has %d inputs", node_name(g, n),
                       num_inputs);
  }
  for (int i = 0; i < num_inputs; ++i) {
    inputs[i] = g->entry_reg[input_entry(g, n, i)];
  }
  int args[MAX_ARGS], num_args = 0;
  KILN_RETURN_IF_ERROR(shape_func_args(g, n, inputs, args, &num_args));
  KILN_RETURN_IF_ERROR(gen_shape_func(g, n, inputs, &vector));
  int reg = g->entry_reg[node_first_entry(g, n)] = g->num_registers++;
  KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(
      g->code, json_pack("[s, i, i, i]", "reshape_tensor", reg, args[0], vector)));
  return free_dead(g, n);
}

/* A dyn operator's kernel output: storage and tensor of its shape
 * function's shape. */
static kiln_status_t alloc_from_shape_func(sym_gen_t *g, int n, const int *inputs, int e) {
  int vector = 0;
  KILN_RETURN_IF_ERROR(gen_shape_func(g, n, inputs, &vector));
  return alloc_shaped(g, e, vector);
}

/* A call of the runtime's extern kernel (graph_codegen's "__extern" node):
 * call_extern allocates its outputs (they hold their blocks until the run
 * ends, as shape_func's vectors do). */
static kiln_status_t gen_extern(sym_gen_t *g, int n) {
  const json_t *attrs = json_object_get(json_array_get(g->nodes, (size_t)n), "attrs");
  const char *name = json_string_value(json_object_get(attrs, "extern"));
  int num_inputs = node_num_inputs(g, n), num_outputs = node_num_outputs(g, n);
  int inputs[MAX_ARGS], outputs[MAX_ARGS];
  if (!name || num_inputs > MAX_ARGS || num_outputs > MAX_ARGS) {
    return KILN_STATUS(INTERNAL, "vm codegen: extern node %s lacks its kernel", node_name(g, n));
  }
  for (int i = 0; i < num_inputs; ++i) {
    inputs[i] = g->entry_reg[input_entry(g, n, i)];
  }
  for (int o = 0; o < num_outputs; ++o) {
    outputs[o] = g->entry_reg[node_first_entry(g, n) + o] = g->num_registers++;
  }
  KILN_RETURN_IF_ERROR(
      kiln_vm_codegen_append(g->code, json_pack("[s, s, o, o, O]", "call_extern", name,
                                                kiln_vm_codegen_ints_json(inputs, num_inputs),
                                                kiln_vm_codegen_ints_json(outputs, num_outputs),
                                                json_object_get(attrs, "extern_attrs"))));
  return free_dead(g, n);
}

static kiln_status_t gen_node(sym_gen_t *g, int n) {
  const char *func_name = node_func(g, n);
  if (is_view(g, n)) {
    return gen_view(g, n);
  }
  if (is_extern(g, n)) {
    return gen_extern(g, n);
  }
  const kiln_tir_prim_func_t *kernel = find_func(g, func_name);
  int num_inputs = node_num_inputs(g, n), num_outputs = node_num_outputs(g, n);
  if (!kernel || num_inputs + num_outputs > MAX_ARGS ||
      kernel->num_params != num_inputs + num_outputs) {
    return KILN_STATUS(UNIMPLEMENTED, "vm codegen: node %s (%s) is not a kernel call it can emit",
                       node_name(g, n), func_name);
  }
  int inputs[MAX_ARGS], vectors[MAX_ARGS], num_vectors = 0;
  for (int i = 0; i < num_inputs; ++i) {
    inputs[i] = g->entry_reg[input_entry(g, n, i)];
  }
  json_int_t attr = 0;
  bool shape_func = node_shape_func(g, n, &attr) != NULL;
  for (int o = 0; o < num_outputs; ++o) {
    int e = node_first_entry(g, n) + o;
    if (shape_is_static(entry_shape(g, e))) {
      KILN_RETURN_IF_ERROR(alloc_static(g, e));
    } else if (shape_func) {
      KILN_RETURN_IF_ERROR(alloc_from_shape_func(g, n, inputs, e));
    } else {
      KILN_RETURN_IF_ERROR(
          alloc_symbolic(g, kernel, num_inputs, inputs, o, e, &vectors[num_vectors++]));
    }
  }
  int k = 0;
  KILN_RETURN_IF_ERROR(kiln_vm_codegen_kernel_index(g->kernels, func_name, &k));
  int flops = g->flops ? (int)json_integer_value(json_array_get(g->flops, (size_t)n)) : 0;
  KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(
      g->code,
      json_pack(
          "[s, i, o, o, i]", "invoke_packed", k, kiln_vm_codegen_ints_json(inputs, num_inputs),
          kiln_vm_codegen_ints_json(g->entry_reg + node_first_entry(g, n), num_outputs), flops)));
  for (int v = 0; v < num_vectors; ++v) {
    KILN_RETURN_IF_ERROR(free_storage(g, vectors[v]));
  }
  return free_dead(g, n);
}

static kiln_status_t gen_return(sym_gen_t *g, json_t *outputs) {
  int regs[MAX_ARGS];
  size_t count = json_array_size(g->heads);
  if (count > MAX_ARGS) {
    return KILN_STATUS(UNIMPLEMENTED, "vm codegen: %zu outputs (at most %d)", count, MAX_ARGS);
  }
  for (size_t h = 0; h < count; ++h) {
    const json_t *head = json_array_get(g->heads, h);
    int n = (int)json_integer_value(json_array_get(head, 0));
    int e = node_first_entry(g, n) + (int)json_integer_value(json_array_get(head, 1));
    regs[h] = g->entry_reg[e];
    KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(outputs, decl_json(g, node_name(g, n), e)));
  }
  return kiln_vm_codegen_append(
      g->code, json_pack("[s, o]", "ret", kiln_vm_codegen_ints_json(regs, (int)count)));
}

static kiln_status_t gen_program(sym_gen_t *g, json_t *root) {
  json_t *inputs = json_array(), *outputs = json_array(), *constants = json_array();
  g->kernels = json_array();
  g->code = json_array();
  json_t *main_fn = json_pack("{s:s, s:i, s:i, s:O}", "name", "main", "params", 0, "registers", 0,
                              "code", g->code);
  json_t *functions = json_pack("[o]", main_fn);
  json_t *values[] = {g->kernels, constants, inputs, outputs, functions};
  static const char *const keys[] = {"kernels", "constants", "inputs", "outputs", "functions"};
  kiln_status_t status = KILN_OK;
  for (int i = 0; i < 5; ++i) {
    kiln_status_t set = values[i] ? kiln_json_object_set_new(root, keys[i], values[i])
                                  : KILN_STATUS(RESOURCE_EXHAUSTED, "vm codegen: out of memory");
    if (status) {
      kiln_status_free(set);
    } else {
      status = set;
    }
  }
  json_decref(g->code); /* main holds it */
  KILN_RETURN_IF_ERROR(status);
  KILN_RETURN_IF_ERROR(gen_arguments(g, inputs, constants));
  KILN_RETURN_IF_ERROR(alloc_plan(g));
  for (int n = 0; n < (int)json_array_size(g->nodes); ++n) {
    if (node_func(g, n)) {
      KILN_RETURN_IF_ERROR_ANNOTATE(gen_node(g, n), "node %d %s", n, node_name(g, n));
    }
  }
  KILN_RETURN_IF_ERROR(gen_return(g, outputs));
  KILN_RETURN_IF_ERROR(kiln_json_object_set_new(main_fn, "params",
                                                json_integer((json_int_t)json_array_size(inputs))));
  return kiln_json_object_set_new(main_fn, "registers", json_integer(g->num_registers));
}

/* The graph's kernel tables with the extra kernels appended. */
static kiln_status_t extend_graph(sym_gen_t *g) {
  kiln_graph_codegen_t *graph = g->graph;
  int old = graph->num_funcs, n = old + (int)kiln_array_count(&g->extra);
  const kiln_tir_prim_func_t **funcs = NULL;
  const char **keys = NULL;
  const kiln_function_t **functions = NULL;
  int *calls = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(g->arena, (size_t)n + 1, sizeof(void *),
                                                 _Alignof(void *), (void **)&funcs));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(g->arena, (size_t)n + 1, sizeof(void *),
                                                 _Alignof(void *), (void **)&keys));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(g->arena, (size_t)n + 1, sizeof(void *),
                                                 _Alignof(void *), (void **)&functions));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(g->arena, (size_t)n + 1, sizeof(int),
                                                 _Alignof(int), (void **)&calls));
  for (int i = 0; i < n; ++i) {
    bool extra = i >= old;
    funcs[i] = extra ? KILN_ARRAY_AT(&g->extra, const kiln_tir_prim_func_t *, (size_t)(i - old))
                     : graph->funcs[i];
    keys[i] = extra ? KILN_ARRAY_AT(&g->extra_keys, const char *, (size_t)(i - old))
                    : graph->func_keys[i];
    functions[i] = extra ? NULL : graph->functions[i];
    calls[i] = extra ? 1 : graph->func_calls[i];
  }
  graph->funcs = funcs;
  graph->func_keys = keys;
  graph->functions = functions;
  graph->func_calls = calls;
  graph->num_funcs = n;
  return KILN_OK;
}

kiln_status_t kiln_vm_codegen_symbolic(kiln_allocator_t allocator, kiln_arena_t *arena,
                                       const kiln_module_t *module, kiln_graph_codegen_t *graph,
                                       const kiln_memory_plan_t *plan, char **out_vm_json) {
  *out_vm_json = NULL;
  sym_gen_t g = {.arena = arena, .graph = graph, .plan = plan};
  g.main_fn = kiln_module_get_function(module, "main");
  if (!g.main_fn) {
    return KILN_STATUS(INVALID_ARGUMENT, "the module has no main function");
  }
  kiln_array_initialize(&g.extra, allocator, sizeof(void *));
  kiln_array_initialize(&g.extra_keys, allocator, sizeof(void *));
  json_t *parsed = NULL;
  json_t *root = json_pack("{s:s, s:i}", "format", "kiln-vm", "version", 1);
  kiln_status_t status =
      kiln_json_parse(graph->graph_json, strlen(graph->graph_json), "graph.json", &parsed);
  if (!status) {
    status = parse_graph(&g, parsed);
  }
  if (!status) {
    status =
        root ? gen_program(&g, root) : KILN_STATUS(RESOURCE_EXHAUSTED, "vm codegen: out of memory");
  }
  if (!status) {
    status = extend_graph(&g);
  }
  if (!status) {
    status = kiln_json_dump(allocator, root, 0, out_vm_json);
  }
  json_decref(parsed);
  json_decref(root);
  kiln_array_deinitialize(&g.extra);
  kiln_array_deinitialize(&g.extra_keys);
  return kiln_status_annotate(status, "vm codegen (symbolic dims)");
}
