/*
 * Type relations over symbolic dims: the guard and the probe.
 *
 * Type relations compute with int64 dims and must never see the -1 of a
 * symbolic dim. kiln_op_infer_type therefore sends every call whose inputs
 * hold a symbolic dim here. An operator that has not declared
 * symbolic_dims in its definition is refused with a message naming the
 * operator, the input and the dim. A declared one has its relation run
 * twice on static stand-ins: each distinct dimension variable (by name;
 * each anonymous dim is its own) takes a probe size, a different one in
 * each run (run A: 4001 + 7k, run B: 6007 + 11k for the k-th variable). An
 * output dim that is the same in both runs does not depend on the
 * variables and is static; one that is the k-th variable's probe in both
 * runs is that variable; any other is derived from the variables (n + 1,
 * n * 12) and becomes an anonymous symbolic dim. Since the two probe
 * series differ in offset and step, no derived dim a*n + c other than n
 * itself matches a variable's probe in both runs. The relation itself thus
 * stays the one definition of the operator's shape rule, written once for
 * static shapes; what "declared" promises is that the rule reads dims only
 * by copying, comparing and arithmetic that holds for any size the probes
 * stand for (no clamping to a static bound, no branching on a dim's value).
 * An error in either run is returned with the probe sizes spelled out. An
 * operator whose relation reads symbolic dims itself (symbolic_relation:
 * the dyn operators, whose outputs are symbolic anyway) is called as is.
 *
 * An anonymous dim (Relay's Any) says nothing about its size, so it may be
 * equal to any other dim. When the relation fails with every variable
 * distinct, the probe is tried again with the anonymous dims taking one
 * size (an add of two `?`), then taking each named variable's size in turn
 * (an add of `?` and `n`); the first that types is the result. What it
 * assumed is checked where it matters: the interpreter runs the relation on
 * the concrete shapes before every such call (interp/shapes.c), and the
 * graph compiler refuses symbolic dims. If no try types, the error of the
 * first (all distinct) is returned.
 */
#include <stdio.h>

#include "op/op.h"

/* Most distinct dimension variables one call's inputs may hold. */
#define MAX_VARS 64

/* The call's distinct variables, and the probe series each takes: its own
 * (slot k for variable k) or, when anonymous dims are taken as equal to
 * another dim, that dim's. */
typedef struct probe_vars_t {
  int count;
  const kiln_dim_var_t *vars[MAX_VARS];
  int slots[MAX_VARS];
} probe_vars_t;

static int64_t probe_series(int run, int slot) {
  return run == 0 ? 4001 + 7 * (int64_t)slot : 6007 + 11 * (int64_t)slot;
}

static int64_t probe_size(const probe_vars_t *vars, int run, int k) {
  return probe_series(run, vars->slots[k]);
}

static int find_var(const probe_vars_t *vars, const kiln_dim_var_t *var) {
  for (int k = 0; k < vars->count; ++k) {
    bool same = var->name[0] ? kiln_dim_var_equal(vars->vars[k], var) : vars->vars[k] == var;
    if (same) {
      return k;
    }
  }
  return -1;
}

static kiln_status_t collect_vars(const kiln_type_t *type, probe_vars_t *vars) {
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  for (int i = 0; tuple && i < tuple->count; ++i) {
    KILN_RETURN_IF_ERROR(collect_vars(tuple->fields[i], vars));
  }
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(type);
  for (int i = 0; tensor && tensor->vars && i < tensor->ndim; ++i) {
    const kiln_dim_var_t *var = tensor->vars[i];
    if (!var || find_var(vars, var) >= 0) {
      continue;
    }
    if (vars->count == MAX_VARS) {
      return KILN_STATUS(UNIMPLEMENTED, "more than %d symbolic dims in one call's inputs",
                         MAX_VARS);
    }
    vars->slots[vars->count] = vars->count;
    vars->vars[vars->count++] = var;
  }
  return KILN_OK;
}

/* `type` with each symbolic dim replaced by its variable's probe size. */
static kiln_status_t probe_type(const kiln_type_t *type, const probe_vars_t *vars, int run,
                                kiln_arena_t *arena, const kiln_type_t **out_type) {
  *out_type = type;
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(type);
  if (tensor && !kiln_tensor_type_is_static(tensor)) {
    int64_t shape[KILN_MAX_RANK];
    for (int i = 0; i < tensor->ndim; ++i) {
      const kiln_dim_var_t *var = tensor->vars[i];
      shape[i] = var ? probe_size(vars, run, find_var(vars, var)) : tensor->shape[i];
    }
    return kiln_tensor_type_create(arena, tensor->dtype, tensor->ndim, shape, out_type);
  }
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  if (!tuple || kiln_type_is_static(type)) {
    return KILN_OK;
  }
  const kiln_type_t *fields[KILN_MAX_RANK * 4];
  if (tuple->count > (int)(sizeof(fields) / sizeof(fields[0]))) {
    return KILN_STATUS(UNIMPLEMENTED, "a tuple of %d symbolic fields is too long", tuple->count);
  }
  for (int i = 0; i < tuple->count; ++i) {
    KILN_RETURN_IF_ERROR(probe_type(tuple->fields[i], vars, run, arena, &fields[i]));
  }
  return kiln_tuple_type_create(arena, tuple->count, fields, out_type);
}

/* "n=4001, ?=4008" of a run, for error messages. */
static const char *probe_text(const probe_vars_t *vars, int run, char *buffer, size_t capacity) {
  size_t length = 0;
  buffer[0] = '\0';
  for (int k = 0; k < vars->count && length < capacity; ++k) {
    length +=
        (size_t)snprintf(buffer + length, capacity - length, "%s%s=%lld", k ? ", " : "",
                         kiln_dim_var_text(vars->vars[k]), (long long)probe_size(vars, run, k));
  }
  return buffer;
}

static kiln_status_t run_probe(const kiln_type_relation_t *relation, const probe_vars_t *vars,
                               int run, const kiln_type_t **out_type) {
  const kiln_type_t *inputs[KILN_OP_MAX_FUNCTION_ARGS * 4];
  if (relation->num_inputs > (int)(sizeof(inputs) / sizeof(inputs[0]))) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: %d inputs with symbolic dims are too many",
                       relation->op->name, relation->num_inputs);
  }
  for (int i = 0; i < relation->num_inputs; ++i) {
    KILN_RETURN_IF_ERROR(probe_type(relation->inputs[i], vars, run, relation->arena, &inputs[i]));
  }
  kiln_type_relation_t probe = *relation;
  probe.inputs = inputs;
  kiln_status_t status = relation->op->infer_type(&probe, out_type);
  if (status != KILN_OK) {
    char text[512];
    return kiln_status_annotate(status, "%s with symbolic dims taken as %s", relation->op->name,
                                probe_text(vars, run, text, sizeof(text)));
  }
  return KILN_OK;
}

/* The dim of both runs' outputs: static, a variable's (a named one before
 * the anonymous dims taken as equal to it), or a new anonymous one. */
static kiln_status_t merge_dim(const probe_vars_t *vars, int64_t a, int64_t b, kiln_arena_t *arena,
                               const kiln_dim_var_t **out_var) {
  *out_var = NULL;
  if (a == b) {
    return KILN_OK;
  }
  for (int k = 0; k < vars->count; ++k) {
    if (a == probe_size(vars, 0, k) && b == probe_size(vars, 1, k) &&
        (*out_var == NULL || !(*out_var)->name[0])) {
      *out_var = vars->vars[k];
    }
  }
  return *out_var ? KILN_OK : kiln_dim_var_create(arena, "", -1, out_var);
}

static kiln_status_t merge_tensor(const kiln_op_t *op, const probe_vars_t *vars,
                                  const kiln_tensor_type_t *a, const kiln_tensor_type_t *b,
                                  kiln_arena_t *arena, const kiln_type_t **out_type) {
  if (a->ndim != b->ndim || a->dtype != b->dtype) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: the output's rank or dtype depends on the sizes of symbolic dims",
                       op->name);
  }
  const kiln_dim_var_t *out_vars[KILN_MAX_RANK];
  for (int i = 0; i < a->ndim; ++i) {
    KILN_RETURN_IF_ERROR(merge_dim(vars, a->shape[i], b->shape[i], arena, &out_vars[i]));
  }
  return kiln_tensor_type_create_symbolic(arena, a->dtype, a->ndim, a->shape, out_vars, out_type);
}

static kiln_status_t merge_types(const kiln_op_t *op, const probe_vars_t *vars,
                                 const kiln_type_t *a, const kiln_type_t *b, kiln_arena_t *arena,
                                 const kiln_type_t **out_type) {
  if (kiln_type_as_tensor(a) && kiln_type_as_tensor(b)) {
    return merge_tensor(op, vars, kiln_type_as_tensor(a), kiln_type_as_tensor(b), arena, out_type);
  }
  const kiln_tuple_type_t *ta = kiln_type_as_tuple(a);
  const kiln_tuple_type_t *tb = kiln_type_as_tuple(b);
  if (!ta || !tb || ta->count != tb->count) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: the output's structure depends on the sizes of symbolic dims",
                       op->name);
  }
  const kiln_type_t *fields[KILN_MAX_RANK * 4];
  if (ta->count > (int)(sizeof(fields) / sizeof(fields[0]))) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: a tuple of %d symbolic fields is too long", op->name,
                       ta->count);
  }
  for (int i = 0; i < ta->count; ++i) {
    KILN_RETURN_IF_ERROR(merge_types(op, vars, ta->fields[i], tb->fields[i], arena, &fields[i]));
  }
  return kiln_tuple_type_create(arena, ta->count, fields, out_type);
}

static kiln_status_t refuse(const kiln_type_relation_t *relation) {
  for (int i = 0; i < relation->num_inputs; ++i) {
    int dim = 0;
    const kiln_dim_var_t *var = kiln_type_first_symbolic(relation->inputs[i], &dim);
    if (var) {
      return KILN_STATUS(UNIMPLEMENTED,
                         "%s: input %d has the symbolic dim %s (dim %d); this operator needs "
                         "static shapes",
                         relation->op->name, i, kiln_dim_var_text(var), dim);
    }
  }
  return KILN_STATUS(INTERNAL, "%s: no symbolic dim to refuse", relation->op->name);
}

/* Both runs with the variables' current slots, merged. */
static kiln_status_t probe(const kiln_type_relation_t *relation, const probe_vars_t *vars,
                           const kiln_type_t **out_type) {
  const kiln_type_t *a = NULL;
  const kiln_type_t *b = NULL;
  KILN_RETURN_IF_ERROR(run_probe(relation, vars, 0, &a));
  KILN_RETURN_IF_ERROR(run_probe(relation, vars, 1, &b));
  return merge_types(relation->op, vars, a, b, relation->arena, out_type);
}

/* Every anonymous dim takes slot `slot`; false when there is none. */
static bool anonymous_take(probe_vars_t *vars, int slot) {
  bool any = false;
  for (int k = 0; k < vars->count; ++k) {
    if (!vars->vars[k]->name[0]) {
      vars->slots[k] = slot;
      any = true;
    }
  }
  return any;
}

/* The probe again with the anonymous dims equal to each other, then to
 * each named variable in turn: OK at the first that types. */
static kiln_status_t probe_anonymous_equal(const kiln_type_relation_t *relation, probe_vars_t *vars,
                                           const kiln_type_t **out_type) {
  kiln_status_t status = KILN_STATUS(INVALID_ARGUMENT, "no anonymous dim");
  for (int k = -1; k < vars->count && status != NULL &&
                   kiln_status_code(status) != KILN_STATUS_CODE_RESOURCE_EXHAUSTED;
       ++k) {
    if (k >= 0 && !vars->vars[k]->name[0]) {
      continue;
    }
    if (!anonymous_take(vars, k >= 0 ? k : vars->count)) {
      break;
    }
    kiln_status_free(status);
    status = probe(relation, vars, out_type);
  }
  return status;
}

kiln_status_t kiln_op_infer_type_symbolic(const kiln_type_relation_t *relation,
                                          const kiln_type_t **out_type) {
  *out_type = NULL;
  if (relation->op->symbolic_relation) {
    return relation->op->infer_type(relation, out_type);
  }
  if (!relation->op->symbolic_dims) {
    return refuse(relation);
  }
  probe_vars_t vars = {0};
  for (int i = 0; i < relation->num_inputs; ++i) {
    KILN_RETURN_IF_ERROR_ANNOTATE(collect_vars(relation->inputs[i], &vars), "%s",
                                  relation->op->name);
  }
  kiln_status_t status = probe(relation, &vars, out_type);
  if (status == NULL || kiln_status_code(status) == KILN_STATUS_CODE_RESOURCE_EXHAUSTED) {
    return status;
  }
  kiln_status_t again = probe_anonymous_equal(relation, &vars, out_type);
  if (again == NULL || kiln_status_code(again) == KILN_STATUS_CODE_RESOURCE_EXHAUSTED) {
    kiln_status_free(status);
    return again;
  }
  kiln_status_free(again);
  *out_type = NULL;
  return status;
}
