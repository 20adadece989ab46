/*
 * The importer's state and the toolkit its operator converters are written
 * in (private to src/frontend/onnx/).
 *
 * The importer keeps one map from ONNX value names to IR nodes. Converting a
 * graph node means: look its inputs up (an omitted optional input is NULL),
 * call the converter the table gives for its op_type and opset, and record
 * the nodes it leaves in `outputs`. Converters build IR through
 * kiln_onnx_emit, which creates the Call, infers its type at once (so the
 * next converter can read the shape it needs) and, when every argument is a
 * Constant, runs the operator's reference kernel and returns a Constant
 * instead (onnx_fold.c). Inputs that an operator needs at import time
 * (Reshape's shape, Slice's starts) are read with kiln_onnx_input_ints and
 * friends, which refuse a value that did not fold. Attribute readers check
 * the ONNX attribute type; setters fill an operator's attrs struct through
 * its field table, so no converter depends on a private attrs struct.
 *
 * Every helper returns errors without the node's name; the driver adds
 * "node "name" (OpType)" around whatever a converter returns.
 */
#ifndef KILN_FRONTEND_ONNX_ONNX_IMPORTER_H_
#define KILN_FRONTEND_ONNX_ONNX_IMPORTER_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/array.h"
#include "base/hashmap.h"
#include "frontend/onnx/onnx_import.h"
#include "ir/expr.h"
#include "onnx.pb-c.h"
#include "op/op.h"

/* The default domain's opsets kiln imports. */
#define KILN_ONNX_OPSET_MIN 1
#define KILN_ONNX_OPSET_MAX 17
/* The other domain kiln imports: ONNX's training optimizers, opset 1. */
#define KILN_ONNX_TRAINING_DOMAIN "ai.onnx.preview.training"

typedef struct kiln_onnx_importer_t {
  kiln_allocator_t allocator;
  kiln_module_t *module;
  kiln_arena_t *arena; /* the module's */
  const char *model_dir;
  const kiln_onnx_import_options_t *options;
  int64_t opset;                   /* of the default domain; 0: the model imports none */
  int64_t training_opset;          /* of KILN_ONNX_TRAINING_DOMAIN; 0: not imported */
  kiln_hashmap_t values;           /* ONNX value name -> kiln_expr_t * */
  kiln_hashmap_t param_names;      /* IR names of the parameters made so far */
  kiln_array_t params;             /* kiln_var_t *, in graph order */
  kiln_hashmap_t param_values;     /* kiln_var_t * -> kiln_tensor_t * from the options */
  struct kiln_onnx_scope_t *scope; /* the subgraph being converted, or NULL (onnx_control.c) */
} kiln_onnx_importer_t;

typedef struct kiln_onnx_node_t {
  kiln_onnx_importer_t *importer;
  const Onnx__NodeProto *proto;
  int num_inputs;
  kiln_expr_t **inputs; /* NULL where an optional input is omitted */
  int num_outputs;
  kiln_expr_t **outputs; /* set by the converter; NULL: not produced */
} kiln_onnx_node_t;

typedef kiln_status_t (*kiln_onnx_convert_fn)(kiln_onnx_node_t *node);

/* One form of an operator: op_type in opsets [since, until] (until 0: on). */
typedef struct kiln_onnx_converter_t {
  const char *op_type;
  int since;
  int until;
  kiln_onnx_convert_fn convert;
  /* The converter reads no dim of its inputs' types (it emits operators
   * whose relations handle symbolic dims), so inputs with symbolic dims
   * are fine; otherwise such inputs are refused before it runs. */
  bool symbolic_inputs;
  /* The converter takes sequence and optional values (control flow, the
   * sequence and optional operators, Identity); every other converter gets
   * tensors only: another value is refused before it runs. */
  bool value_inputs;
} kiln_onnx_converter_t;

/* ---- the table (onnx_ops.c) ---- */

/* The converter of `op_type` at `opset`, or NULL. */
const kiln_onnx_converter_t *kiln_onnx_converter_find(const char *op_type, int64_t opset);
/* Whether `domain` (NULL, "" or "ai.onnx") names the default domain. */
bool kiln_onnx_domain_is_default(const char *domain);
/* The converter of a node of `domain` and `op_type` at the opset the model
 * imports for that domain, or NULL (an unknown domain has none). */
const kiln_onnx_converter_t *kiln_onnx_node_converter(const kiln_onnx_importer_t *importer,
                                                      const char *domain, const char *op_type);
/* Whether any opset has a converter for `op_type`. */
bool kiln_onnx_op_type_known(const char *op_type);
/* Every entry, for docs and tests; *out_count entries. */
const kiln_onnx_converter_t *kiln_onnx_converters(int *out_count);

/* ---- the importer (onnx_graph.c, onnx_inputs.c) ---- */

/* Converts the graph of `model` into @main of importer->module. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_import_graph(kiln_onnx_importer_t *importer,
                                                          const Onnx__ModelProto *model);
/* The type of graph input `info`, from the model, the options' shape specs
 * and `value` (the options' value for it, or NULL). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_input_type_of(kiln_onnx_importer_t *importer,
                                                           const Onnx__ValueInfoProto *info,
                                                           const kiln_tensor_t *value,
                                                           const kiln_type_t **out_type);
/* The Var of graph input `info` (its type from the model and the options;
 * `value`, which may be NULL, is the options' value for it). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_make_param(kiln_onnx_importer_t *importer,
                                                        const Onnx__ValueInfoProto *info,
                                                        kiln_tensor_t *value, kiln_var_t **out_var);
/* INVALID_ARGUMENT when an --input-shape names no graph input that is a
 * parameter, or the options give more input values than there are (run
 * after the initializers are in the value map). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_check_input_options(kiln_onnx_importer_t *importer,
                                                                 const Onnx__GraphProto *graph);

/* The graph's pieces, which subgraphs (onnx_control.c) reuse: */
/* UNIMPLEMENTED listing every node whose operator has no converter. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_check_supported(kiln_onnx_importer_t *importer,
                                                             const Onnx__GraphProto *graph);
/* Records `expr` as value `name`; INVALID_ARGUMENT when it is defined. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_define(kiln_onnx_importer_t *importer,
                                                    const char *name, kiln_expr_t *expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_add_initializers(kiln_onnx_importer_t *importer,
                                                              const Onnx__GraphProto *graph);
/* Converts every node, errors wrapped with the node's name and op_type. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_convert_nodes(kiln_onnx_importer_t *importer,
                                                           const Onnx__GraphProto *graph);
/* The graph's outputs: one value, or a Tuple of them in order. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_body(kiln_onnx_importer_t *importer,
                                                  const Onnx__GraphProto *graph,
                                                  kiln_expr_t **out_body);

/* ---- subgraphs (onnx_control.c) ---- */

/* Value `name`: from the graph being converted, else (in a subgraph) from an
 * enclosing graph, captured as a new parameter of each body in between
 * (ONNX's scoping: a subgraph sees every value of its enclosing graphs);
 * NULL when no graph has it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_lookup(kiln_onnx_importer_t *importer,
                                                    const char *name, kiln_expr_t **out_expr);

/* The type of a graph input or output of ONNX type `type`: a tensor (as
 * kiln_onnx_input_type_of), a sequence of tensors or an optional. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_value_type(kiln_onnx_importer_t *importer,
                                                        const char *name,
                                                        const Onnx__TypeProto *type,
                                                        const kiln_type_t **out_type);

/* ---- node inputs ---- */

/* Input `index`, which must be present. */
/* The import's cap on a constant made at import (bytes). */
int64_t kiln_onnx_constant_cap(const kiln_onnx_importer_t *importer);
/* RESOURCE_EXHAUSTED when `bytes` exceeds the cap, naming `what` (the
 * operator) and `type`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_check_constant_size(
    const kiln_onnx_importer_t *importer, const char *what, const char *type, size_t bytes);
/* A new tensor for a constant a converter computes, within the cap. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_tensor_new(const kiln_onnx_node_t *node,
                                                        kiln_dtype_t dtype, int ndim,
                                                        const int64_t *shape,
                                                        kiln_tensor_t **out_tensor);
/* INVALID_ARGUMENT when the node has more than `most` inputs (the
 * operator's schema allows no more). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_inputs_at_most(const kiln_onnx_node_t *node, int most);
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_input(const kiln_onnx_node_t *node, int index,
                                                   kiln_expr_t **out_expr);
/* Input `index`, or NULL when it is omitted or past the end. */
kiln_expr_t *kiln_onnx_input_optional(const kiln_onnx_node_t *node, int index);
/* The tensor type of required input `index`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_input_type(const kiln_onnx_node_t *node, int index,
                                                        const kiln_tensor_type_t **out_type);
/* The tensor of input `index`, which must have folded to a Constant, be a
 * parameter the options give a value for, or be computable from such
 * parameters (kiln_onnx_evaluate); UNIMPLEMENTED naming `what` otherwise.
 * Borrowed from the module or the options. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_input_constant(const kiln_onnx_node_t *node, int index,
                                                            const char *what,
                                                            const kiln_tensor_t **out_tensor);
/* Whether input `index` is a constant known at import (as
 * kiln_onnx_input_constant would find it); false when it depends on the
 * graph's inputs, so a converter emits a dyn operator reading it at run
 * time (op/dyn.c). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_input_known(const kiln_onnx_node_t *node, int index,
                                                         bool *out_known);
/* Input `index` as an expression, a Constant of its value when that is
 * known at import (so that a call on it folds), else as it is. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_input_value(const kiln_onnx_node_t *node, int index,
                                                         kiln_expr_t **out_expr);
/* Emits dyn operator `op` over the node's inputs [0, count) (each present)
 * with `attrs` (NULL: defaults) into node->outputs[0]. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_emit_dyn(kiln_onnx_node_t *node, const kiln_op_t *op,
                                                      int count, const void *attrs);
/* A constant integer input (int32 or int64, rank 0 or 1) as a list in the
 * module's arena. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_input_ints(const kiln_onnx_node_t *node, int index,
                                                        const char *what, kiln_ints_t *out_ints);
/* A constant one-element numeric input, as a double. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_input_scalar(const kiln_onnx_node_t *node, int index,
                                                          const char *what, double *out_value);
/* The tensor type of any expression made so far (NULL for a tuple). */
const kiln_tensor_type_t *kiln_onnx_type_of(const kiln_expr_t *expr);

/* ---- ONNX attributes (onnx_attr.c) ---- */

/* The attribute named `name`, or NULL. */
const Onnx__AttributeProto *kiln_onnx_attr(const kiln_onnx_node_t *node, const char *name);
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_attr_int(const kiln_onnx_node_t *node,
                                                      const char *name, int64_t fallback,
                                                      int64_t *out_value);
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_attr_float(const kiln_onnx_node_t *node,
                                                        const char *name, double fallback,
                                                        double *out_value);
/* A string attribute copied into the module's arena (NUL-terminated). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_attr_string(const kiln_onnx_node_t *node,
                                                         const char *name, const char *fallback,
                                                         const char **out_value);
/* An INTS attribute in the module's arena; count 0 and *out_present false
 * when absent (out_present may be NULL). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_attr_ints(const kiln_onnx_node_t *node,
                                                       const char *name, kiln_ints_t *out_ints,
                                                       bool *out_present);
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_attr_floats(const kiln_onnx_node_t *node,
                                                         const char *name,
                                                         kiln_floats_t *out_floats,
                                                         bool *out_present);
/* A TENSOR attribute as a new tensor (the caller releases it); NULL when absent. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_attr_tensor(const kiln_onnx_node_t *node,
                                                         const char *name,
                                                         kiln_tensor_t **out_tensor);

/* ---- IR attrs, through the operator's field table (onnx_attr.c) ---- */

/* The operator's default attrs, in the module's arena. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_attrs(const kiln_onnx_node_t *node,
                                                   const kiln_op_t *op, void **out_attrs);
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_set_int(const kiln_op_t *op, void *attrs,
                                                     const char *field, int64_t value);
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_set_float(const kiln_op_t *op, void *attrs,
                                                       const char *field, double value);
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_set_bool(const kiln_op_t *op, void *attrs,
                                                      const char *field, bool value);
/* `value` must live as long as the module (a literal or arena text). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_set_string(const kiln_op_t *op, void *attrs,
                                                        const char *field, const char *value);
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_set_dtype(const kiln_op_t *op, void *attrs,
                                                       const char *field, kiln_dtype_t value);
/* Copies `count` values into the module's arena. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_set_ints(const kiln_onnx_node_t *node,
                                                      const kiln_op_t *op, void *attrs,
                                                      const char *field, int count,
                                                      const int64_t *values);
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_set_floats(const kiln_onnx_node_t *node,
                                                        const kiln_op_t *op, void *attrs,
                                                        const char *field, int count,
                                                        const double *values);

/* ---- building IR (onnx_node.c, onnx_fold.c) ---- */

/* A call of `op` with its type inferred, folded to a Constant when every
 * argument is one (unless the options turn folding off). `attrs` NULL: the
 * defaults. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_emit(const kiln_onnx_node_t *node, const kiln_op_t *op,
                                                  int num_args, kiln_expr_t *const *args,
                                                  const void *attrs, kiln_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_emit1(const kiln_onnx_node_t *node,
                                                   const kiln_op_t *op, kiln_expr_t *x,
                                                   const void *attrs, kiln_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_emit2(const kiln_onnx_node_t *node,
                                                   const kiln_op_t *op, kiln_expr_t *a,
                                                   kiln_expr_t *b, const void *attrs,
                                                   kiln_expr_t **out_expr);
/* A Constant of `tensor` (the module takes its own reference), typed. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_constant(kiln_onnx_importer_t *importer,
                                                      kiln_tensor_t *tensor,
                                                      kiln_expr_t **out_expr);
/* A rank-0 Constant of `dtype` holding `value` (converted as cast does). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_scalar(const kiln_onnx_node_t *node,
                                                    kiln_dtype_t dtype, double value,
                                                    kiln_expr_t **out_expr);
/* A Constant of `dtype` and `shape`, every element `value`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_filled(const kiln_onnx_node_t *node,
                                                    kiln_dtype_t dtype, int ndim,
                                                    const int64_t *shape, double value,
                                                    kiln_expr_t **out_expr);
/* A 1-D int64 Constant. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_int64s(const kiln_onnx_node_t *node, int count,
                                                    const int64_t *values, kiln_expr_t **out_expr);
/* Field `index` of a tuple-typed expression (the field itself when the
 * tuple is a Tuple node, as folding makes). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_tuple_item(const kiln_onnx_node_t *node,
                                                        kiln_expr_t *tuple, int index,
                                                        kiln_expr_t **out_expr);
/* Small compositions the converters share: reshape to a static shape,
 * expand_dims of one axis, squeeze of listed axes, cast. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_reshape(const kiln_onnx_node_t *node, kiln_expr_t *x,
                                                     int ndim, const int64_t *shape,
                                                     kiln_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_expand_dims(const kiln_onnx_node_t *node,
                                                         kiln_expr_t *x, int axis,
                                                         kiln_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_squeeze(const kiln_onnx_node_t *node, kiln_expr_t *x,
                                                     int count, const int64_t *axes,
                                                     kiln_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_cast(const kiln_onnx_node_t *node, kiln_expr_t *x,
                                                  kiln_dtype_t dtype, kiln_expr_t **out_expr);

/* The value of `expr` computed at import from Constants and the parameters
 * the options give values for (onnx_evaluate.c), or the empty tensor when
 * its static type has no elements; *out_tensor is NULL when it
 * depends on a parameter without a value (or is deeper than the evaluator
 * goes). The tensor belongs to a Constant of the module. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_evaluate(kiln_onnx_importer_t *importer,
                                                      kiln_expr_t *expr,
                                                      const kiln_tensor_t **out_tensor);

/* Folds `call` (typed, every argument a Constant) into a Constant, or a
 * Tuple of Constants for a tuple type; leaves *out_expr = call when the
 * reference kernel does not handle the dtypes (UNIMPLEMENTED). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_fold(kiln_onnx_importer_t *importer, kiln_call_t *call,
                                                  kiln_expr_t **out_expr);

/* An ONNX axis attribute normalized against rank `ndim` ([-ndim, ndim)). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_axis(int64_t axis, int ndim, int *out_axis);

/* Whether `dtype` is float16, bfloat16, float32 or float64. */
bool kiln_onnx_is_float(kiln_dtype_t dtype);

/* Writes a double into element `index` of a tensor of any kiln dtype. */
void kiln_onnx_store_double(kiln_tensor_t *tensor, int64_t index, double value);

#endif /* KILN_FRONTEND_ONNX_ONNX_IMPORTER_H_ */
