/*
 * Dynamic operators (TVM's relay.dyn.*): a static operator whose
 * shape-like attributes arrive as ordinary tensor inputs, known only at run
 * time (an ONNX Reshape whose shape is computed by the graph, a Slice whose
 * starts are a graph input).
 *
 * dyn.reshape, dyn.squeeze and dyn.unsqueeze are views: their output is
 * the data under a new shape, and that shape's rule is the runtime's
 * (runtime/shape_func.h), the one definition the VM's shape_func
 * instruction calls too. Their shape function here calls it, and their
 * reference kernel copies the data's bytes.
 *
 * Every other dyn operator is described by a rule: the static operator it stands
 * for, how many leading inputs are that operator's data, and which later
 * inputs supply which of its attributes (as a list of integers, one
 * integer or one number). Its own attributes are those the static operator
 * takes that are not inputs, under the same names. At run time the rule
 * builds the static operator's attributes (defaults, then the dyn
 * operator's own fields and the input values, both through the attribute
 * text format, so no attrs struct is known here), and then
 *
 * - the shape function (op.h) is the static operator's type relation on
 *   the concrete data types: the value-dependent part is all in the attrs;
 * - the reference kernel is the static operator's kernel.
 *
 * At import time only the output's rank is known: each operator's type
 * relation gives it, with every dim an anonymous symbolic dim ("?"), and
 * refuses (UNIMPLEMENTED) when the rank itself depends on values (a shape
 * input whose length is not static). dyn.cumsum reads only an axis, so its
 * output type is static. Values that are not a plain list or number are
 * turned into the static attribute by the rule's kind: split sizes into cut points (checked to add
 * up to the dim), ONNX pads into pad_width pairs, one element of a tensor (one_hot's off and on
 * values). The VM code generator (compiler/vm_symbolic.c) emits the views as shape_func and
 * reshape_tensor instructions, with no kernel. dyn.strided_slice, dyn.arange, dyn.one_hot,
 * dyn.sum and dyn.pad probe as themselves with out_shape set (probe_self) and their compute rules
 * read the values in the kernel (dyn_compute.c and the static rules they share); dyn.cumsum's rule
 * walks the axis read in the kernel; dyn.broadcast_to probes as the static operator. The other
 * compute rules refuse (UNIMPLEMENTED).
 */
#include <stdio.h>
#include <string.h>

#include "op/dyn.h"
#include "op/gather_attrs.h"
#include "op/gather_compute.h"
#include "op/impl.h"
#include "op/transform_compute.h"
#include "runtime/extern_kernel.h"
#include "runtime/scalar.h"
#include "runtime/shape_func.h"

/* ---- attributes of the dyn operators: the static ones' that are not inputs ---- */

typedef struct kiln_dyn_reshape_attrs_t {
  bool allowzero;
} kiln_dyn_reshape_attrs_t;

typedef struct kiln_dyn_reduce_attrs_t {
  bool keepdims;
  kiln_ints_t out_shape; /* as dyn.strided_slice's: set in the compiler's probe runs */
} kiln_dyn_reduce_attrs_t;

typedef struct kiln_dyn_cumsum_attrs_t {
  bool exclusive;
  bool reverse;
} kiln_dyn_cumsum_attrs_t;

typedef struct kiln_dyn_topk_attrs_t {
  int64_t axis;
  bool largest;
  bool sorted;
  kiln_ints_t out_shape; /* as dyn.strided_slice's: set in the compiler's probe runs */
} kiln_dyn_topk_attrs_t;

typedef struct kiln_dyn_split_attrs_t {
  int64_t axis;
} kiln_dyn_split_attrs_t;

typedef struct kiln_dyn_one_hot_attrs_t {
  int64_t axis;
  kiln_dtype_t dtype;
  kiln_ints_t out_shape; /* as dyn.strided_slice's: set in the compiler's probe runs */
} kiln_dyn_one_hot_attrs_t;

typedef struct kiln_dyn_pad_attrs_t {
  const char *pad_mode;
  kiln_ints_t out_shape; /* as dyn.strided_slice's: set in the compiler's probe runs */
} kiln_dyn_pad_attrs_t;

/* ---- rules ---- */

typedef enum dyn_value_kind_e {
  DYN_INTS,      /* a 1-D (or scalar) integer tensor: "[a, b, ...]" */
  DYN_INT,       /* an integer scalar (or one element): "a" */
  DYN_NUMBER,    /* a scalar of any numeric dtype: "a" as a double */
  DYN_NUMBER_AT, /* element `at` of a tensor, as a double: "a" */
  DYN_SPLIT,     /* part sizes along the dyn attrs' axis (adding up to its dim): cut points */
  DYN_PADS,      /* ONNX pads [begins..., ends...] of input 0's rank: [b0, e0, b1, e1, ...] */
} dyn_value_kind_t;

typedef struct dyn_value_t {
  int input;         /* which input of the dyn operator */
  const char *field; /* the static operator's attribute it sets */
  dyn_value_kind_t kind;
  int at; /* DYN_NUMBER_AT: which element */
} dyn_value_t;

typedef struct dyn_rule_t {
  const kiln_op_t *dyn_op;
  const kiln_op_t *static_op;
  int num_data; /* leading inputs passed to the static operator */
  int num_values;
  dyn_value_t values[4];
  /* The static attribute that is the output's shape (NULL: none): a probe
   * run of the compiler lowers the static operator with it set to the probe
   * sizes (kiln_dyn_probe_call). */
  const char *shape_field;
  /* The probe call is the dyn operator itself with shape_field set (its
   * compute rule reads the values in the kernel), not the static one. */
  bool probe_self;
} dyn_rule_t;

static const dyn_rule_t dyn_rules[] = {
    {&kiln_op_dyn_broadcast_to, &kiln_op_broadcast_to, 1, 1, {{1, "shape", DYN_INTS}}, "shape"},
    {&kiln_op_dyn_tile, &kiln_op_tile, 1, 1, {{1, "reps", DYN_INTS}}, "out_shape", true},
    {&kiln_op_dyn_strided_slice,
     &kiln_op_strided_slice,
     1,
     4,
     {{1, "begin", DYN_INTS},
      {2, "end", DYN_INTS},
      {3, "strides", DYN_INTS},
      {4, "axes", DYN_INTS}},
     "out_shape",
     true},
    {&kiln_op_dyn_sum, &kiln_op_sum, 1, 1, {{1, "axis", DYN_INTS}}, "out_shape", true},
    {&kiln_op_dyn_cumsum, &kiln_op_cumsum, 1, 1, {{1, "axis", DYN_INT}}},
    {&kiln_op_dyn_topk, &kiln_op_topk, 1, 1, {{1, "k", DYN_INT}}, "out_shape", true},
    {&kiln_op_dyn_arange,
     &kiln_op_arange,
     0,
     3,
     {{0, "start", DYN_NUMBER}, {1, "stop", DYN_NUMBER}, {2, "step", DYN_NUMBER}},
     "out_shape",
     true},
    {&kiln_op_dyn_split, &kiln_op_split, 1, 1, {{1, "indices", DYN_SPLIT}}},
    {&kiln_op_dyn_one_hot,
     &kiln_op_one_hot,
     1,
     3,
     {{1, "depth", DYN_INT}, {2, "off_value", DYN_NUMBER_AT, 0}, {2, "on_value", DYN_NUMBER_AT, 1}},
     "out_shape",
     true},
    {&kiln_op_dyn_pad,
     &kiln_op_pad,
     1,
     2,
     {{1, "pad_width", DYN_PADS}, {2, "pad_value", DYN_NUMBER}},
     "out_shape",
     true},
};

static const dyn_rule_t *dyn_rule_of(const kiln_op_t *op) {
  for (size_t i = 0; i < sizeof(dyn_rules) / sizeof(dyn_rules[0]); ++i) {
    if (dyn_rules[i].dyn_op == op) {
      return &dyn_rules[i];
    }
  }
  return NULL;
}

/* ---- reading values ---- */

static double dyn_element(const kiln_tensor_t *t, int64_t i) {
  kiln_scalar_kind_t kind = kiln_scalar_kind(kiln_tensor_dtype(t));
  return kiln_scalar_to_double(kiln_scalar_load(kind, kiln_tensor_data(t), i));
}

/* A list (DYN_INTS) or one value (DYN_INT, DYN_NUMBER) of `t`. */
static kiln_status_t dyn_list_text(const kiln_op_t *op, const dyn_value_t *v,
                                   const kiln_tensor_t *t, kiln_strbuf_t *sb) {
  int64_t count = kiln_tensor_element_count(t);
  if (v->kind != DYN_INTS && count != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d (%s) has %lld values; expected one",
                       op->name, v->input, v->field, (long long)count);
  }
  if (kiln_tensor_ndim(t) > 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d (%s) has rank %d; expected 0 or 1", op->name,
                       v->input, v->field, kiln_tensor_ndim(t));
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, v->kind == DYN_INTS ? "[" : ""));
  for (int64_t i = 0; i < count; ++i) {
    double value = dyn_element(t, i);
    const char *separator = i ? ", " : "";
    if (v->kind == DYN_NUMBER) {
      KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%s%.17g", separator, value));
    } else {
      KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%s%lld", separator, (long long)value));
    }
  }
  return kiln_strbuf_append(sb, v->kind == DYN_INTS ? "]" : "");
}

/* Element `at` of `t` (DYN_NUMBER_AT) as a double. */
static kiln_status_t dyn_number_at_text(const kiln_op_t *op, const dyn_value_t *v,
                                        const kiln_tensor_t *t, kiln_strbuf_t *sb) {
  if (kiln_tensor_element_count(t) <= v->at) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d has %lld values; expected at least %d",
                       op->name, v->input, (long long)kiln_tensor_element_count(t), v->at + 1);
  }
  return kiln_strbuf_appendf(sb, "%.17g", dyn_element(t, v->at));
}

/* The cut points of part sizes `sizes` along the axis (the dyn attrs'
 * "axis") of inputs[0], which must be >= 0 and add up to that dim. */
static kiln_status_t dyn_split_text(const kiln_op_t *op, const void *dyn_attrs,
                                    kiln_tensor_t *const *inputs, const kiln_tensor_t *sizes,
                                    kiln_strbuf_t *sb) {
  const kiln_attr_field_t *field = kiln_op_attr_field(op, "axis");
  int axis = 0;
  KILN_RETURN_IF_ERROR(
      kiln_op_normalize_axis(op, *(const int64_t *)((const char *)dyn_attrs + field->offset),
                             kiln_tensor_ndim(inputs[0]), &axis));
  int64_t dim = kiln_tensor_shape(inputs[0])[axis], total = 0;
  int64_t count = kiln_tensor_element_count(sizes);
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "["));
  for (int64_t i = 0; i < count; ++i) {
    double size = dyn_element(sizes, i);
    if (!(size >= 0.0 && size <= (double)dim)) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: split[%lld] is %g; dim %d is %lld", op->name,
                         (long long)i, size, axis, (long long)dim);
    }
    total += (int64_t)size;
    if (i + 1 < count) {
      KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%s%lld", i ? ", " : "", (long long)total));
    }
  }
  if (total != dim) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the split sizes add up to %lld but dim %d is %lld",
                       op->name, (long long)total, axis, (long long)dim);
  }
  return kiln_strbuf_append(sb, "]");
}

/* ONNX pads [x0_begin, x1_begin, ..., x0_end, ...] of inputs[0]'s rank as
 * pad_width's (begin, end) pairs. */
static kiln_status_t dyn_pads_text(const kiln_op_t *op, kiln_tensor_t *const *inputs,
                                   const kiln_tensor_t *pads, kiln_strbuf_t *sb) {
  int rank = kiln_tensor_ndim(inputs[0]);
  if (kiln_tensor_element_count(pads) != 2 * (int64_t)rank) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: pads has %lld values; rank %d needs %d", op->name,
                       (long long)kiln_tensor_element_count(pads), rank, 2 * rank);
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "["));
  for (int d = 0; d < rank; ++d) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%s%lld, %lld", d ? ", " : "",
                                             (long long)dyn_element(pads, d),
                                             (long long)dyn_element(pads, rank + d)));
  }
  return kiln_strbuf_append(sb, "]");
}

/* The text of input value `v` in the attribute format. */
static kiln_status_t dyn_value_text(const kiln_op_t *op, const void *dyn_attrs,
                                    const dyn_value_t *v, kiln_tensor_t *const *inputs,
                                    kiln_strbuf_t *sb) {
  const kiln_tensor_t *t = inputs[v->input];
  switch (v->kind) {
  case DYN_NUMBER_AT:
    return dyn_number_at_text(op, v, t, sb);
  case DYN_SPLIT:
    return dyn_split_text(op, dyn_attrs, inputs, t, sb);
  case DYN_PADS:
    return dyn_pads_text(op, inputs, t, sb);
  case DYN_INTS:
  case DYN_INT:
  case DYN_NUMBER:
    break;
  }
  return dyn_list_text(op, v, t, sb);
}

/* Sets one field of the static attrs from its text in `sb`, then clears it. */
static kiln_status_t dyn_set(const dyn_rule_t *rule, void *attrs, const char *field,
                             kiln_strbuf_t *sb, kiln_arena_t *arena) {
  kiln_status_t status =
      kiln_op_attrs_set_text(rule->static_op, attrs, field, kiln_strbuf_c_str(sb), arena);
  kiln_strbuf_reset(sb);
  return kiln_status_annotate(status, "%s", rule->dyn_op->name);
}

static kiln_status_t dyn_fill_attrs(const dyn_rule_t *rule, const void *dyn_attrs,
                                    kiln_tensor_t *const *inputs, void *attrs, kiln_arena_t *arena,
                                    kiln_strbuf_t *sb) {
  const kiln_op_t *op = rule->dyn_op;
  for (int f = 0; f < op->num_attr_fields; ++f) {
    const kiln_attr_field_t *field = &op->attr_fields[f];
    if (!kiln_op_attr_field(rule->static_op, field->name)) {
      continue; /* the dyn operator's own (dyn.strided_slice's out_shape) */
    }
    KILN_RETURN_IF_ERROR(kiln_op_attrs_format_field(op, dyn_attrs, field, sb));
    KILN_RETURN_IF_ERROR(dyn_set(rule, attrs, field->name, sb, arena));
  }
  for (int k = 0; k < rule->num_values; ++k) {
    const dyn_value_t *v = &rule->values[k];
    KILN_RETURN_IF_ERROR(dyn_value_text(op, dyn_attrs, v, inputs, sb));
    KILN_RETURN_IF_ERROR(dyn_set(rule, attrs, v->field, sb, arena));
  }
  return kiln_op_attrs_validate(rule->static_op, attrs);
}

/* The static operator's attributes for these inputs, in `arena`. */
static kiln_status_t dyn_static_attrs(const dyn_rule_t *rule, const void *dyn_attrs,
                                      kiln_tensor_t *const *inputs, kiln_arena_t *arena,
                                      void **out_attrs) {
  KILN_RETURN_IF_ERROR(kiln_op_attrs_create_default(rule->static_op, arena, out_attrs));
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  kiln_status_t status = dyn_fill_attrs(rule, dyn_attrs, inputs, *out_attrs, arena, &sb);
  kiln_strbuf_deinitialize(&sb);
  return status;
}

/* ---- the runtime's shape functions (runtime/shape_func.h) ---- */

int64_t kiln_dyn_shape_func_attr(const kiln_op_t *op, const void *attrs) {
  if (op == &kiln_op_dyn_one_hot) {
    return ((const kiln_dyn_one_hot_attrs_t *)attrs)->axis;
  }
  if (op == &kiln_op_dyn_sum) {
    return ((const kiln_dyn_reduce_attrs_t *)attrs)->keepdims;
  }
  if (op == &kiln_op_dyn_pad) {
    return kiln_shape_pad_mode(((const kiln_dyn_pad_attrs_t *)attrs)->pad_mode);
  }
  if (op == &kiln_op_dyn_topk) {
    return ((const kiln_dyn_topk_attrs_t *)attrs)->axis;
  }
  return op == &kiln_op_dyn_reshape ? ((const kiln_dyn_reshape_attrs_t *)attrs)->allowzero : 0;
}

/* Input `t` as a runtime shape function sees it (its values as int64 when
 * the rule reads them, as doubles when it reads numbers; more than
 * KILN_MAX_RANK are refused by the run). */
static void dyn_runtime_arg(const kiln_tensor_t *t, bool read, bool numbers, int64_t *values,
                            double *reals, kiln_shape_func_arg_t *out_arg) {
  *out_arg = (kiln_shape_func_arg_t){kiln_tensor_ndim(t), kiln_tensor_shape(t), 0, NULL, NULL};
  if (read) {
    out_arg->count = kiln_tensor_element_count(t);
    for (int64_t i = 0; i < out_arg->count && i < KILN_MAX_RANK; ++i) {
      reals[i] = dyn_element(t, i);
      values[i] = numbers ? 0 : (int64_t)reals[i];
    }
    out_arg->values = numbers ? NULL : values;
    out_arg->numbers = numbers ? reals : NULL;
  }
}

/* The output type the dyn operator's relation gives for these inputs
 * (whose dtypes are the data's for a reshape, the attribute's for an
 * arange, topk's values' and int64 indices). */
static kiln_status_t dyn_output_type(const kiln_shape_func_args_t *args,
                                     const kiln_type_t **out_type) {
  const kiln_type_t *types[KILN_SHAPE_FUNC_MAX_INPUTS];
  for (int i = 0; i < args->num_inputs && i < KILN_SHAPE_FUNC_MAX_INPUTS; ++i) {
    KILN_RETURN_IF_ERROR(kiln_tensor_type_of(args->arena, args->inputs[i], &types[i]));
  }
  return kiln_op_infer_type(args->op, args->attrs, args->num_inputs, types, args->arena, out_type);
}

/* The output type from runtime shape function `index`: the relation's
 * dtypes, every output of the rule's shape. */
static kiln_status_t dyn_runtime_shape(const kiln_shape_func_args_t *args, int index,
                                       const kiln_type_t **out_type) {
  const kiln_shape_func_t *f = kiln_shape_func_at(index);
  kiln_shape_func_arg_t inputs[KILN_SHAPE_FUNC_MAX_INPUTS];
  int64_t values[KILN_SHAPE_FUNC_MAX_INPUTS][KILN_MAX_RANK];
  double reals[KILN_SHAPE_FUNC_MAX_INPUTS][KILN_MAX_RANK];
  for (int i = 0; i < args->num_inputs && i < KILN_SHAPE_FUNC_MAX_INPUTS; ++i) {
    dyn_runtime_arg(args->inputs[i], (f->value_inputs >> i) & 1u, (f->number_inputs >> i) & 1u,
                    values[i], reals[i], &inputs[i]);
  }
  int ndim = 0;
  int64_t shape[KILN_MAX_RANK];
  KILN_RETURN_IF_ERROR(kiln_shape_func_run(index, args->num_inputs, inputs,
                                           kiln_dyn_shape_func_attr(args->op, args->attrs), &ndim,
                                           shape));
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(dyn_output_type(args, &type));
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  int count = tuple ? tuple->count : 1;
  const kiln_type_t *fields[2];
  for (int o = 0; o < count && o < 2; ++o) {
    const kiln_tensor_type_t *t = kiln_type_as_tensor(tuple ? tuple->fields[o] : type);
    if (!t) {
      return KILN_STATUS(INTERNAL, "%s: output %d is not a tensor", args->op->name, o);
    }
    KILN_RETURN_IF_ERROR(kiln_tensor_type_create(args->arena, t->dtype, ndim, shape, &fields[o]));
  }
  if (count > 2) { /* a runtime rule's operator has one output, or topk's two */
    return KILN_STATUS(INTERNAL, "%s: %d outputs", args->op->name, count);
  }
  if (!tuple) {
    *out_type = fields[0];
    return KILN_OK;
  }
  return kiln_tuple_type_create(args->arena, count, fields, out_type);
}

/* A view's kernel: the data's bytes under the output's shape. */
static kiln_status_t dyn_view_reference(const kiln_kernel_args_t *args) {
  size_t bytes = kiln_tensor_byte_size(args->inputs[0]);
  if (bytes != kiln_tensor_byte_size(args->outputs[0])) {
    return KILN_STATUS(INTERNAL, "%s: the output has %zu bytes, the data %zu", args->op->name,
                       kiln_tensor_byte_size(args->outputs[0]), bytes);
  }
  if (bytes > 0) {
    memmove(kiln_tensor_data(args->outputs[0]), kiln_tensor_data(args->inputs[0]), bytes);
  }
  return KILN_OK;
}

/* ---- the shared rules ---- */

static kiln_status_t dyn_shape_func(const kiln_shape_func_args_t *args,
                                    const kiln_type_t **out_type) {
  int index = kiln_shape_func_find(args->op->name);
  if (index >= 0) {
    return dyn_runtime_shape(args, index, out_type);
  }
  const dyn_rule_t *rule = dyn_rule_of(args->op);
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(dyn_static_attrs(rule, args->attrs, args->inputs, args->arena, &attrs));
  const kiln_type_t *types[4];
  for (int k = 0; k < rule->num_data; ++k) {
    KILN_RETURN_IF_ERROR(kiln_tensor_type_of(args->arena, args->inputs[k], &types[k]));
  }
  return kiln_op_infer_type(rule->static_op, attrs, rule->num_data, types, args->arena, out_type);
}

static kiln_status_t dyn_reference(const kiln_kernel_args_t *args) {
  int index = kiln_shape_func_find(args->op->name);
  if (index >= 0 && kiln_shape_func_at(index)->view) {
    return dyn_view_reference(args);
  }
  const dyn_rule_t *rule = dyn_rule_of(args->op);
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 512);
  void *attrs = NULL;
  kiln_status_t status = dyn_static_attrs(rule, args->attrs, args->inputs, &arena, &attrs);
  if (status == KILN_OK) {
    kiln_kernel_args_t inner = *args;
    inner.op = rule->static_op;
    inner.attrs = attrs;
    inner.num_inputs = rule->num_data;
    status = kiln_op_evaluate_into(&inner);
  }
  kiln_arena_deinitialize(&arena);
  return status;
}

/* ---- probe runs of the compiler ---- */

bool kiln_dyn_has_probe(const kiln_op_t *op) {
  const dyn_rule_t *rule = dyn_rule_of(op);
  return rule && rule->shape_field;
}

kiln_status_t kiln_dyn_probe_call(kiln_module_t *module, const kiln_call_t *call,
                                  kiln_expr_t *const *args, const kiln_tensor_type_t *out,
                                  kiln_call_t **out_call) {
  const dyn_rule_t *rule = dyn_rule_of(call->op);
  if (!rule || !rule->shape_field || !kiln_tensor_type_is_static(out)) {
    return KILN_STATUS(UNIMPLEMENTED, "%s has no static form at probe sizes", call->op->name);
  }
  kiln_arena_t *arena = kiln_module_arena(module);
  const kiln_op_t *op = rule->probe_self ? rule->dyn_op : rule->static_op;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_attrs_create_default(op, arena, &attrs));
  if (rule->probe_self && call->attrs) { /* its own attributes (dyn.arange's dtype) kept */
    memcpy(attrs, call->attrs, op->attrs_size);
  }
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  kiln_status_t status = kiln_strbuf_append(&sb, "[");
  for (int d = 0; !status && d < out->ndim; ++d) {
    status = kiln_strbuf_appendf(&sb, "%s%lld", d ? ", " : "", (long long)out->shape[d]);
  }
  if (!status) {
    status = kiln_strbuf_append(&sb, "]");
  }
  if (!status) {
    status = kiln_status_annotate(
        kiln_op_attrs_set_text(op, attrs, rule->shape_field, kiln_strbuf_c_str(&sb), arena), "%s",
        op->name);
  }
  kiln_strbuf_deinitialize(&sb);
  KILN_RETURN_IF_ERROR(status);
  int num_args = rule->probe_self ? call->num_args : rule->num_data;
  return kiln_ir_call_create(module, op, num_args, args, attrs, out_call);
}

kiln_status_t kiln_dyn_compute_refuse(const kiln_compute_args_t *args,
                                      kiln_compute_result_t *out_result) {
  (void)out_result;
  return KILN_STATUS(UNIMPLEMENTED,
                     "%s reads a shape-like input at run time; the graph compiler does not "
                     "compile it (give the input as a constant, or run on the interpreter)",
                     args->op->name);
}

/* dyn.cumsum: the static output's walk chosen in the kernel by the axis. */
static kiln_status_t dyn_cumsum_compute(const kiln_compute_args_t *args,
                                        kiln_compute_result_t *out_result) {
  const kiln_dyn_cumsum_attrs_t *attrs = args->attrs;
  return kiln_compute_cumsum_any_axis(args, attrs->exclusive, attrs->reverse, out_result);
}

/* dyn.sum: sum over the axes read in the kernel. */
static kiln_status_t dyn_sum_compute(const kiln_compute_args_t *args,
                                     kiln_compute_result_t *out_result) {
  const kiln_dyn_reduce_attrs_t *attrs = args->attrs;
  if (attrs->out_shape.count == 0) {
    return kiln_dyn_compute_refuse(args, out_result);
  }
  return kiln_compute_sum_any_axes(args, attrs->keepdims, out_result);
}

/* dyn.tile: tile's mapping (x mod the data's dim) into the probe's output:
 * the reps are not read (the output's dims are them times the data's). */
static kiln_status_t dyn_tile_compute(const kiln_compute_args_t *args,
                                      kiln_compute_result_t *out_result) {
  const kiln_dyn_slice_attrs_t *attrs = args->attrs;
  if (attrs->out_shape.count == 0) {
    return kiln_dyn_compute_refuse(args, out_result);
  }
  return kiln_compute_tile(args, out_result);
}

/* dyn.topk: topk's kernel with k the probe output's extent on the axis
 * (the k input is not read: the output's dims are the shape rule's). */
static kiln_status_t dyn_topk_compute(const kiln_compute_args_t *args,
                                      kiln_compute_result_t *out_result) {
  const kiln_dyn_topk_attrs_t *attrs = args->attrs;
  const kiln_te_tensor_t *data = args->inputs[0];
  int64_t axis = attrs->axis < 0 ? attrs->axis + data->ndim : attrs->axis;
  if (attrs->out_shape.count != data->ndim || axis < 0 || axis >= data->ndim) {
    return kiln_dyn_compute_refuse(args, out_result);
  }
  kiln_topk_attrs_t topk = {attrs->out_shape.values[axis], axis, attrs->largest, attrs->sorted};
  kiln_compute_args_t inner = *args;
  inner.attrs = &topk;
  return kiln_compute_topk(&inner, out_result);
}

/* dyn.pad: nn.pad's mapping with the pads and value read in the kernel. */
static kiln_status_t dyn_pad_compute(const kiln_compute_args_t *args,
                                     kiln_compute_result_t *out_result) {
  const kiln_dyn_pad_attrs_t *attrs = args->attrs;
  return kiln_dyn_compute_pad(args, kiln_shape_pad_mode(attrs->pad_mode),
                              attrs->out_shape.count > 0, out_result);
}

/* dyn.one_hot: one_hot with depth and values read in the kernel. */
static kiln_status_t dyn_one_hot_compute(const kiln_compute_args_t *args,
                                         kiln_compute_result_t *out_result) {
  const kiln_dyn_one_hot_attrs_t *attrs = args->attrs;
  if (attrs->out_shape.count == 0) {
    return kiln_dyn_compute_refuse(args, out_result);
  }
  return kiln_compute_one_hot_inputs(args, attrs->axis, attrs->dtype, out_result);
}

/* ---- type relations: the output's rank ---- */

/* The number of values of input `index` (a 1-D tensor of static length, or a
 * scalar), or UNIMPLEMENTED when that length is symbolic. */
static kiln_status_t dyn_value_length(const kiln_type_relation_t *relation, int index,
                                      int *out_length) {
  const kiln_tensor_type_t *t = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, index, &t));
  if (t->ndim > 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d has rank %d; expected 0 or 1",
                       relation->op->name, index, t->ndim);
  }
  if (!kiln_tensor_type_is_static(t)) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: the output's rank depends on the length of input %d, which is "
                       "known only at run time",
                       relation->op->name, index);
  }
  if (t->ndim == 1 && t->shape[0] > KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d has %lld values (most is %d)",
                       relation->op->name, index, (long long)t->shape[0], KILN_MAX_RANK);
  }
  *out_length = t->ndim == 1 ? (int)t->shape[0] : 1;
  return KILN_OK;
}

kiln_status_t kiln_dyn_symbolic_type(kiln_arena_t *arena, kiln_dtype_t dtype, int rank,
                                     const kiln_type_t **out_type) {
  const kiln_dim_var_t *vars[KILN_MAX_RANK];
  int64_t shape[KILN_MAX_RANK];
  for (int d = 0; d < rank; ++d) {
    KILN_RETURN_IF_ERROR(kiln_dim_var_create(arena, "", -1, &vars[d]));
    shape[d] = -1;
  }
  return kiln_tensor_type_create_symbolic(arena, dtype, rank, shape, vars, out_type);
}

kiln_status_t kiln_dyn_check_list(const kiln_type_relation_t *relation, int index, const char *what,
                                  bool want_float) {
  const kiln_tensor_type_t *t = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, index, &t));
  kiln_scalar_class_t have = kiln_scalar_class(t->dtype);
  bool fits = want_float ? have == KILN_SCALAR_CLASS_FLOAT
                         : have == KILN_SCALAR_CLASS_SIGNED || have == KILN_SCALAR_CLASS_UNSIGNED;
  if (!fits || t->ndim > 1) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d (%s) is %s %s; expected a 1-D %s tensor",
                       relation->op->name, index, what, kiln_dtype_name(t->dtype),
                       kiln_op_shape_text(t, shape), want_float ? "float" : "integer");
  }
  return KILN_OK;
}

static kiln_status_t dyn_data(const kiln_type_relation_t *relation,
                              const kiln_tensor_type_t **out_data) {
  return kiln_op_input_tensor(relation, 0, out_data);
}

/* The data (input 0) and the length of the value list at input `index`. */
static kiln_status_t dyn_data_length(const kiln_type_relation_t *relation, int index,
                                     const kiln_tensor_type_t **out_data, int *out_length) {
  KILN_RETURN_IF_ERROR(dyn_data(relation, out_data));
  return dyn_value_length(relation, index, out_length);
}

static kiln_status_t dyn_check_rank(const kiln_type_relation_t *relation, int rank) {
  if (rank < 0 || rank > KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the output would have rank %d", relation->op->name,
                       rank);
  }
  return KILN_OK;
}

/* reshape: rank = len(shape). */
static kiln_status_t dyn_reshape_infer(const kiln_type_relation_t *relation,
                                       const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  int length = 0;
  KILN_RETURN_IF_ERROR(dyn_data_length(relation, 1, &data, &length));
  KILN_RETURN_IF_ERROR(kiln_dyn_check_list(relation, 1, "shape", false));
  return kiln_dyn_symbolic_type(relation->arena, data->dtype, length, out_type);
}

/* The data and max(its rank, len(input 1)): broadcast_to's and tile's
 * output rank, input 1 (`what`) a list of integers. */
static kiln_status_t dyn_max_rank(const kiln_type_relation_t *relation, const char *what,
                                  const kiln_tensor_type_t **out_data, int *out_rank) {
  int length = 0;
  KILN_RETURN_IF_ERROR(dyn_data_length(relation, 1, out_data, &length));
  KILN_RETURN_IF_ERROR(kiln_dyn_check_list(relation, 1, what, false));
  *out_rank = length > (*out_data)->ndim ? length : (*out_data)->ndim;
  return dyn_check_rank(relation, *out_rank);
}

/* broadcast_to: rank = max(rank, len(shape)); a dim where the data has a
 * static size other than 1 keeps it (either side's 1 stretches, any other
 * value must equal it), every other dim is "?". */
static kiln_status_t dyn_broadcast_to_infer(const kiln_type_relation_t *relation,
                                            const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  int rank = 0;
  KILN_RETURN_IF_ERROR(dyn_max_rank(relation, "shape", &data, &rank));
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_dyn_symbolic_type(relation->arena, data->dtype, rank, &type));
  const kiln_tensor_type_t *t = kiln_type_as_tensor(type);
  int64_t shape[KILN_MAX_RANK];
  const kiln_dim_var_t *vars[KILN_MAX_RANK];
  for (int d = 0; d < rank; ++d) {
    int from = d - (rank - data->ndim);
    bool kept = from >= 0 && !(data->vars && data->vars[from]) && data->shape[from] != 1;
    shape[d] = kept ? data->shape[from] : -1;
    vars[d] = kept ? NULL : t->vars[d];
  }
  return kiln_tensor_type_create_symbolic(relation->arena, data->dtype, rank, shape, vars,
                                          out_type);
}

/* `rank` anonymous dims, or the compiler's probe shape `fixed` when set
 * (an out_shape attribute, kiln_dyn_probe_call). */
static kiln_status_t dyn_fixed_type(const kiln_type_relation_t *relation, const kiln_ints_t *fixed,
                                    kiln_dtype_t dtype, int rank, const kiln_type_t **out_type) {
  if (fixed->count == 0) {
    return kiln_dyn_symbolic_type(relation->arena, dtype, rank, out_type);
  }
  if (fixed->count != rank) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: out_shape has %d dims for an output of rank %d",
                       relation->op->name, (int)fixed->count, rank);
  }
  return kiln_tensor_type_create(relation->arena, dtype, rank, fixed->values, out_type);
}

/* tile: rank = max(rank, len(reps)). */
static kiln_status_t dyn_tile_infer(const kiln_type_relation_t *relation,
                                    const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  int rank = 0;
  KILN_RETURN_IF_ERROR(dyn_max_rank(relation, "reps", &data, &rank));
  const kiln_ints_t *fixed = &((const kiln_dyn_slice_attrs_t *)relation->attrs)->out_shape;
  return dyn_fixed_type(relation, fixed, data->dtype, rank, out_type);
}

/* strided_slice: the data's rank; begin, end, strides and axes (or no
 * axes: the first len(begin)) have one length. */
static kiln_status_t dyn_slice_infer(const kiln_type_relation_t *relation,
                                     const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  int lengths[4] = {0, 0, 0, 0};
  KILN_RETURN_IF_ERROR(dyn_data(relation, &data));
  for (int k = 0; k < 4; ++k) {
    KILN_RETURN_IF_ERROR(dyn_value_length(relation, 1 + k, &lengths[k]));
  }
  bool axes_fit = lengths[3] == lengths[0] || lengths[3] == 0;
  if (lengths[1] != lengths[0] || lengths[2] != lengths[0] || !axes_fit ||
      lengths[0] > data->ndim) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: begin, end, strides and axes have %d, %d, %d and %d values for rank %d",
                       relation->op->name, lengths[0], lengths[1], lengths[2], lengths[3],
                       data->ndim);
  }
  const kiln_ints_t *fixed = &((const kiln_dyn_slice_attrs_t *)relation->attrs)->out_shape;
  return dyn_fixed_type(relation, fixed, data->dtype, data->ndim, out_type);
}

/* squeeze: rank - len(axis); an empty axis list (squeeze every 1) depends on values. */
static kiln_status_t dyn_squeeze_infer(const kiln_type_relation_t *relation,
                                       const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  int length = 0;
  KILN_RETURN_IF_ERROR(dyn_data_length(relation, 1, &data, &length));
  KILN_RETURN_IF_ERROR(kiln_dyn_check_list(relation, 1, "axes", false));
  if (length == 0) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: with no axes the output's rank depends on the data's dims",
                       relation->op->name);
  }
  KILN_RETURN_IF_ERROR(dyn_check_rank(relation, data->ndim - length));
  return kiln_dyn_symbolic_type(relation->arena, data->dtype, data->ndim - length, out_type);
}

/* unsqueeze: rank + len(axes). */
static kiln_status_t dyn_unsqueeze_infer(const kiln_type_relation_t *relation,
                                         const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  int length = 0;
  KILN_RETURN_IF_ERROR(dyn_data_length(relation, 1, &data, &length));
  KILN_RETURN_IF_ERROR(kiln_dyn_check_list(relation, 1, "axes", false));
  KILN_RETURN_IF_ERROR(dyn_check_rank(relation, data->ndim + length));
  return kiln_dyn_symbolic_type(relation->arena, data->dtype, data->ndim + length, out_type);
}

/* sum: keepdims keeps the rank, else rank - len(axis); no axes: everything. */
static kiln_status_t dyn_sum_infer(const kiln_type_relation_t *relation,
                                   const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  int length = 0;
  KILN_RETURN_IF_ERROR(dyn_data_length(relation, 1, &data, &length));
  const kiln_dyn_reduce_attrs_t *attrs = relation->attrs;
  int rank = attrs->keepdims ? data->ndim : (length == 0 ? 0 : data->ndim - length);
  KILN_RETURN_IF_ERROR(dyn_check_rank(relation, rank));
  return dyn_fixed_type(relation, &attrs->out_shape, data->dtype, rank, out_type);
}

/* cumsum: the data's type (the axis moves no dim). */
static kiln_status_t dyn_cumsum_infer(const kiln_type_relation_t *relation,
                                      const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  int length = 0;
  KILN_RETURN_IF_ERROR(dyn_data_length(relation, 1, &data, &length));
  if (length != 1 || data->ndim == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: axis must be one value, of a tensor of rank >= 1",
                       relation->op->name);
  }
  *out_type = relation->inputs[0];
  return KILN_OK;
}

/* topk: (values, int64 indices) of the data's rank, one shape (the same
 * dims), the compiler's probe shape when out_shape is set. */
static kiln_status_t dyn_topk_infer(const kiln_type_relation_t *relation,
                                    const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  int length = 0;
  KILN_RETURN_IF_ERROR(dyn_data_length(relation, 1, &data, &length));
  KILN_RETURN_IF_ERROR(kiln_dyn_check_list(relation, 1, "k", false));
  const kiln_dyn_topk_attrs_t *attrs = relation->attrs;
  const kiln_type_t *fields[2];
  KILN_RETURN_IF_ERROR(
      dyn_fixed_type(relation, &attrs->out_shape, data->dtype, data->ndim, &fields[0]));
  const kiln_tensor_type_t *values = kiln_type_as_tensor(fields[0]);
  KILN_RETURN_IF_ERROR(kiln_tensor_type_create_symbolic(
      relation->arena, KILN_DTYPE_INT64, values->ndim, values->shape, values->vars, &fields[1]));
  return kiln_tuple_type_create(relation->arena, 2, fields, out_type);
}

/* arange: one dim, of the attribute's dtype. */
static kiln_status_t dyn_arange_infer(const kiln_type_relation_t *relation,
                                      const kiln_type_t **out_type) {
  for (int k = 0; k < 3; ++k) {
    int length = 0;
    KILN_RETURN_IF_ERROR(dyn_value_length(relation, k, &length));
  }
  const kiln_dyn_arange_attrs_t *attrs = relation->attrs;
  return dyn_fixed_type(relation, &attrs->out_shape, attrs->dtype, 1, out_type);
}

/* The static length of 1-D input `index`, or UNIMPLEMENTED (what the
 * output's type needs from it depends on values). */
static kiln_status_t dyn_static_length(const kiln_type_relation_t *relation, int index,
                                       const char *what, int64_t *out_length) {
  const kiln_tensor_type_t *t = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, index, &t));
  if (!kiln_tensor_type_is_static(t)) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: the output's type depends on the length of input %d (%s), which is "
                       "known only at run time",
                       relation->op->name, index, what);
  }
  *out_length = t->ndim == 1 ? t->shape[0] : 1;
  return KILN_OK;
}

/* The elements of a static tensor type. */
static int64_t dyn_type_count(const kiln_tensor_type_t *t) {
  int64_t count = 1;
  for (int d = 0; d < t->ndim; ++d) {
    count *= t->shape[d];
  }
  return count;
}

int64_t kiln_dyn_split_axis(const void *attrs) {
  return ((const kiln_dyn_split_attrs_t *)attrs)->axis;
}

/* The most parts dyn.split makes: as many as its extern kernel writes. */
#define DYN_SPLIT_MAX_PARTS KILN_EXTERN_MAX_OUTPUTS

/* split: one part per size, each of the data's rank. */
static kiln_status_t dyn_split_infer(const kiln_type_relation_t *relation,
                                     const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  int64_t count = 0;
  KILN_RETURN_IF_ERROR(dyn_data(relation, &data));
  KILN_RETURN_IF_ERROR(kiln_dyn_check_list(relation, 1, "split", false));
  KILN_RETURN_IF_ERROR(dyn_static_length(relation, 1, "split", &count));
  int axis = 0;
  int64_t attr_axis = ((const kiln_dyn_split_attrs_t *)relation->attrs)->axis;
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(relation->op, attr_axis, data->ndim, &axis));
  if (count < 2 || count > DYN_SPLIT_MAX_PARTS) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: split has %lld sizes; expected 2 to %d parts",
                       relation->op->name, (long long)count, DYN_SPLIT_MAX_PARTS);
  }
  const kiln_type_t *fields[DYN_SPLIT_MAX_PARTS];
  for (int64_t k = 0; k < count; ++k) {
    KILN_RETURN_IF_ERROR(
        kiln_dyn_symbolic_type(relation->arena, data->dtype, data->ndim, &fields[k]));
  }
  return kiln_tuple_type_create(relation->arena, (int)count, fields, out_type);
}

/* one_hot: the indices' rank + 1, of the attribute's dtype; depth is one
 * number and values two (off, on). */
static kiln_status_t dyn_one_hot_infer(const kiln_type_relation_t *relation,
                                       const kiln_type_t **out_type) {
  const kiln_tensor_type_t *indices = NULL, *values = NULL, *depth = NULL;
  int64_t count = 0;
  KILN_RETURN_IF_ERROR(dyn_data(relation, &indices));
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 1, &depth));
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 2, &values));
  KILN_RETURN_IF_ERROR(dyn_static_length(relation, 2, "values", &count));
  kiln_scalar_class_t depth_class = kiln_scalar_class(depth->dtype);
  if (!kiln_tensor_type_is_static(depth) || dyn_type_count(depth) != 1 ||
      depth_class == KILN_SCALAR_CLASS_NONE || depth_class == KILN_SCALAR_CLASS_BOOL) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input 1 (depth) is %s %s; expected one number",
                       relation->op->name, kiln_dtype_name(depth->dtype),
                       kiln_op_shape_text(depth, shape));
  }
  if (values->ndim != 1 || count != 2) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input 2 (values) is %s; expected 2 values (off, on)",
                       relation->op->name, kiln_op_shape_text(values, shape));
  }
  KILN_RETURN_IF_ERROR(dyn_check_rank(relation, indices->ndim + 1));
  const kiln_dyn_one_hot_attrs_t *attrs = relation->attrs;
  return dyn_fixed_type(relation, &attrs->out_shape, attrs->dtype, indices->ndim + 1, out_type);
}

/* pad: the data's rank; pads holds 2 * rank integers, the value one. */
static kiln_status_t dyn_pad_infer(const kiln_type_relation_t *relation,
                                   const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL, *value = NULL;
  int64_t count = 0;
  KILN_RETURN_IF_ERROR(dyn_data(relation, &data));
  KILN_RETURN_IF_ERROR(kiln_dyn_check_list(relation, 1, "pads", false));
  KILN_RETURN_IF_ERROR(dyn_static_length(relation, 1, "pads", &count));
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 2, &value));
  if (count != 2 * (int64_t)data->ndim) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: pads has %lld values; rank %d needs %d",
                       relation->op->name, (long long)count, data->ndim, 2 * data->ndim);
  }
  if (value->ndim > 1 || !kiln_tensor_type_is_static(value) || dyn_type_count(value) != 1) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input 2 (constant_value) is %s; expected one value",
                       relation->op->name, kiln_op_shape_text(value, shape));
  }
  const kiln_dyn_pad_attrs_t *attrs = relation->attrs;
  return dyn_fixed_type(relation, &attrs->out_shape, data->dtype, data->ndim, out_type);
}

/* ---- the operators ---- */

static const kiln_attr_field_t dyn_reshape_fields[] = {
    KILN_ATTR_FIELD(kiln_dyn_reshape_attrs_t, allowzero, BOOL, "False"),
};
static const kiln_attr_field_t dyn_slice_fields[] = {
    KILN_ATTR_FIELD(kiln_dyn_slice_attrs_t, out_shape, INTS, "[]"),
};
static const kiln_attr_field_t dyn_reduce_fields[] = {
    KILN_ATTR_FIELD(kiln_dyn_reduce_attrs_t, keepdims, BOOL, "False"),
    KILN_ATTR_FIELD(kiln_dyn_reduce_attrs_t, out_shape, INTS, "[]"),
};
static const kiln_attr_field_t dyn_cumsum_fields[] = {
    KILN_ATTR_FIELD(kiln_dyn_cumsum_attrs_t, exclusive, BOOL, "False"),
    KILN_ATTR_FIELD(kiln_dyn_cumsum_attrs_t, reverse, BOOL, "False"),
};
static const kiln_attr_field_t dyn_topk_fields[] = {
    KILN_ATTR_FIELD(kiln_dyn_topk_attrs_t, axis, INT, "-1"),
    KILN_ATTR_FIELD(kiln_dyn_topk_attrs_t, largest, BOOL, "True"),
    KILN_ATTR_FIELD(kiln_dyn_topk_attrs_t, sorted, BOOL, "True"),
    KILN_ATTR_FIELD(kiln_dyn_topk_attrs_t, out_shape, INTS, "[]"),
};
static const kiln_attr_field_t dyn_arange_fields[] = {
    KILN_ATTR_FIELD(kiln_dyn_arange_attrs_t, dtype, DTYPE, "\"float32\""),
    KILN_ATTR_FIELD(kiln_dyn_arange_attrs_t, out_shape, INTS, "[]"),
};
static const kiln_attr_field_t dyn_split_fields[] = {
    KILN_ATTR_FIELD(kiln_dyn_split_attrs_t, axis, INT, "0"),
};
static const kiln_attr_field_t dyn_one_hot_fields[] = {
    KILN_ATTR_FIELD(kiln_dyn_one_hot_attrs_t, axis, INT, "-1"),
    KILN_ATTR_FIELD(kiln_dyn_one_hot_attrs_t, dtype, DTYPE, "\"float32\""),
    KILN_ATTR_FIELD(kiln_dyn_one_hot_attrs_t, out_shape, INTS, "[]"),
};
static const kiln_attr_field_t dyn_pad_fields[] = {
    KILN_ATTR_FIELD(kiln_dyn_pad_attrs_t, pad_mode, STRING, "\"constant\""),
    KILN_ATTR_FIELD(kiln_dyn_pad_attrs_t, out_shape, INTS, "[]"),
};

#define DYN_FIELDS_(type, fields)                                                           \
  .attrs_size = sizeof(type), .num_attr_fields = (int)(sizeof(fields) / sizeof(fields[0])), \
  .attr_fields = fields

#define DYN_OP_WITH_(symbol, op_name, op_id, inputs, relation, compute_rule, ...) \
  const kiln_op_t symbol = {.name = op_name,                                      \
                            .id = KILN_OP_##op_id,                                \
                            .min_inputs = inputs,                                 \
                            .max_inputs = inputs,                                 \
                            .pattern = KILN_OP_PATTERN_OPAQUE,                    \
                            .infer_type = relation,                               \
                            .shape_func = dyn_shape_func,                         \
                            .symbolic_relation = true,                            \
                            __VA_ARGS__};                                         \
  const kiln_op_impl_t symbol##_impl = {.reference = dyn_reference, .compute = compute_rule}
#define DYN_OP_(symbol, op_name, op_id, inputs, relation, ...) \
  DYN_OP_WITH_(symbol, op_name, op_id, inputs, relation, kiln_dyn_compute_refuse, __VA_ARGS__)

DYN_OP_(kiln_op_dyn_reshape, "dyn.reshape", DYN_RESHAPE, 2, dyn_reshape_infer,
        DYN_FIELDS_(kiln_dyn_reshape_attrs_t, dyn_reshape_fields));
DYN_OP_(kiln_op_dyn_broadcast_to, "dyn.broadcast_to", DYN_BROADCAST_TO, 2, dyn_broadcast_to_infer,
        .attrs_size = 0);
DYN_OP_WITH_(kiln_op_dyn_tile, "dyn.tile", DYN_TILE, 2, dyn_tile_infer, dyn_tile_compute,
             DYN_FIELDS_(kiln_dyn_slice_attrs_t, dyn_slice_fields));
DYN_OP_WITH_(kiln_op_dyn_strided_slice, "dyn.strided_slice", DYN_STRIDED_SLICE, 5, dyn_slice_infer,
             kiln_dyn_compute_slice, DYN_FIELDS_(kiln_dyn_slice_attrs_t, dyn_slice_fields));
DYN_OP_(kiln_op_dyn_squeeze, "dyn.squeeze", DYN_SQUEEZE, 2, dyn_squeeze_infer, .attrs_size = 0);
DYN_OP_(kiln_op_dyn_unsqueeze, "dyn.unsqueeze", DYN_UNSQUEEZE, 2, dyn_unsqueeze_infer,
        .attrs_size = 0);
DYN_OP_WITH_(kiln_op_dyn_sum, "dyn.sum", DYN_SUM, 2, dyn_sum_infer, dyn_sum_compute,
             DYN_FIELDS_(kiln_dyn_reduce_attrs_t, dyn_reduce_fields));
DYN_OP_WITH_(kiln_op_dyn_cumsum, "dyn.cumsum", DYN_CUMSUM, 2, dyn_cumsum_infer, dyn_cumsum_compute,
             DYN_FIELDS_(kiln_dyn_cumsum_attrs_t, dyn_cumsum_fields));
DYN_OP_WITH_(kiln_op_dyn_topk, "dyn.topk", DYN_TOPK, 2, dyn_topk_infer, dyn_topk_compute,
             DYN_FIELDS_(kiln_dyn_topk_attrs_t, dyn_topk_fields));
DYN_OP_WITH_(kiln_op_dyn_arange, "dyn.arange", DYN_ARANGE, 3, dyn_arange_infer,
             kiln_dyn_compute_arange, DYN_FIELDS_(kiln_dyn_arange_attrs_t, dyn_arange_fields));
DYN_OP_(kiln_op_dyn_split, "dyn.split", DYN_SPLIT, 2, dyn_split_infer,
        DYN_FIELDS_(kiln_dyn_split_attrs_t, dyn_split_fields));
DYN_OP_WITH_(kiln_op_dyn_one_hot, "dyn.one_hot", DYN_ONE_HOT, 3, dyn_one_hot_infer,
             dyn_one_hot_compute, DYN_FIELDS_(kiln_dyn_one_hot_attrs_t, dyn_one_hot_fields));
DYN_OP_WITH_(kiln_op_dyn_pad, "dyn.pad", DYN_PAD, 3, dyn_pad_infer, dyn_pad_compute,
             DYN_FIELDS_(kiln_dyn_pad_attrs_t, dyn_pad_fields));
