/*
 * The graph driver: an ONNX GraphProto -> @main.
 *
 * In order: every node's operator is looked up first, and all that are
 * missing are reported together ("unsupported operators: Loop (nodes loop0,
 * loop3), ..."), before any tensor is decoded. Then initializers become
 * Constants and the other graph inputs parameters (or Constants, when the
 * options bind their values); then the nodes, which
 * ONNX stores in topological order, are converted one by one, each input
 * looked up by name in the value map and each output recorded in it; last,
 * the graph outputs make the body (one output, or a Tuple in order), and the
 * function is type-checked, verified, and compared with the output types
 * the model declares. Errors from a node are wrapped with its name (or
 * #index when it has none) and op_type.
 */
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "frontend/onnx/onnx_convert.h"
#include "frontend/onnx/onnx_importer.h"
#include "frontend/onnx/onnx_tensor.h"
#include "ir/infer.h"
#include "ir/verify.h"

#define KILN_ONNX_NODE_LABEL_CAPACITY 160
#define KILN_ONNX_UNSUPPORTED_NAMES   8

/* "\"conv1\"" or "#3": how errors name node `index`. */
static const char *kiln_onnx_node_label(const Onnx__NodeProto *node, size_t index, char *buffer) {
  if (node->name && *node->name) {
    snprintf(buffer, KILN_ONNX_NODE_LABEL_CAPACITY, "\"%s\"", node->name);
  } else {
    snprintf(buffer, KILN_ONNX_NODE_LABEL_CAPACITY, "#%zu", index);
  }
  return buffer;
}

/* ---- unsupported operators ---- */

typedef struct kiln_onnx_unsupported_t {
  char label[KILN_ONNX_NODE_LABEL_CAPACITY]; /* "Loop", "com.microsoft.Gelu" */
  kiln_strbuf_t nodes;
  int count;
} kiln_onnx_unsupported_t;

/* The group of `label` in `groups`, appended when new. */
static kiln_status_t kiln_onnx_unsupported_group(kiln_array_t *groups, kiln_allocator_t allocator,
                                                 const char *label,
                                                 kiln_onnx_unsupported_t **out_group) {
  for (size_t i = 0; i < kiln_array_count(groups); ++i) {
    kiln_onnx_unsupported_t *group = kiln_array_at(groups, i);
    if (strcmp(group->label, label) == 0) {
      *out_group = group;
      return KILN_OK;
    }
  }
  kiln_onnx_unsupported_t group = {.count = 0};
  snprintf(group.label, sizeof(group.label), "%s", label);
  kiln_strbuf_initialize(&group.nodes, allocator);
  KILN_RETURN_IF_ERROR(kiln_array_push(groups, &group));
  *out_group = kiln_array_at(groups, kiln_array_count(groups) - 1);
  return KILN_OK;
}

static kiln_status_t kiln_onnx_unsupported_add(kiln_onnx_importer_t *importer, kiln_array_t *groups,
                                               const Onnx__NodeProto *node, size_t index) {
  char label[KILN_ONNX_NODE_LABEL_CAPACITY];
  const char *op_type = node->op_type ? node->op_type : "";
  if (!kiln_onnx_domain_is_default(node->domain)) {
    snprintf(label, sizeof(label), "%s.%s", node->domain, op_type);
  } else if (importer->opset == 0) {
    snprintf(label, sizeof(label), "%s (no opset of the default domain imported)", op_type);
  } else if (kiln_onnx_op_type_known(op_type)) {
    snprintf(label, sizeof(label), "%s at opset %lld", op_type, (long long)importer->opset);
  } else {
    snprintf(label, sizeof(label), "%s", op_type);
  }
  kiln_onnx_unsupported_t *group = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_unsupported_group(groups, kiln_arena_allocator(importer->arena), label, &group));
  if (++group->count <= KILN_ONNX_UNSUPPORTED_NAMES) {
    char name[KILN_ONNX_NODE_LABEL_CAPACITY];
    const char *text =
        node->name && *node->name ? node->name : kiln_onnx_node_label(node, index, name);
    KILN_RETURN_IF_ERROR(
        kiln_strbuf_appendf(&group->nodes, "%s%s", group->count > 1 ? ", " : "", text));
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_unsupported_report(const kiln_array_t *groups, kiln_strbuf_t *sb) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "unsupported operators: "));
  for (size_t i = 0; i < kiln_array_count(groups); ++i) {
    const kiln_onnx_unsupported_t *group = kiln_array_at(groups, i);
    KILN_RETURN_IF_ERROR(
        kiln_strbuf_appendf(sb, "%s%s (node%s %s%s)", i ? ", " : "", group->label,
                            group->count > 1 ? "s" : "", kiln_strbuf_c_str(&group->nodes),
                            group->count > KILN_ONNX_UNSUPPORTED_NAMES ? ", ..." : ""));
    if (group->count > KILN_ONNX_UNSUPPORTED_NAMES) {
      KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, " [%d nodes]", group->count));
    }
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_check_supported(kiln_onnx_importer_t *importer,
                                        const Onnx__GraphProto *graph) {
  kiln_array_t groups;
  kiln_array_initialize(&groups, kiln_arena_allocator(importer->arena),
                        sizeof(kiln_onnx_unsupported_t));
  for (size_t i = 0; i < graph->n_node; ++i) {
    const Onnx__NodeProto *node = graph->node[i];
    if (kiln_onnx_node_converter(importer, node->domain, node->op_type ? node->op_type : "")) {
      continue;
    }
    KILN_RETURN_IF_ERROR(kiln_onnx_unsupported_add(importer, &groups, node, i));
  }
  if (kiln_array_count(&groups) == 0) {
    return KILN_OK;
  }
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_arena_allocator(importer->arena));
  KILN_RETURN_IF_ERROR(kiln_onnx_unsupported_report(&groups, &sb));
  return KILN_STATUS(UNIMPLEMENTED, "%s", kiln_strbuf_c_str(&sb));
}

/* ---- values ---- */

kiln_status_t kiln_onnx_define(kiln_onnx_importer_t *importer, const char *name,
                               kiln_expr_t *expr) {
  if (kiln_hashmap_contains(&importer->values, name)) {
    return KILN_STATUS(INVALID_ARGUMENT, "value \"%s\" is defined twice", name);
  }
  return kiln_hashmap_put(&importer->values, name, expr);
}

kiln_status_t kiln_onnx_add_initializers(kiln_onnx_importer_t *importer,
                                         const Onnx__GraphProto *graph) {
  if (graph->n_sparse_initializer > 0) {
    return KILN_STATUS(UNIMPLEMENTED, "sparse initializers are not supported");
  }
  for (size_t i = 0; i < graph->n_initializer; ++i) {
    const Onnx__TensorProto *proto = graph->initializer[i];
    kiln_tensor_t *tensor = NULL;
    KILN_RETURN_IF_ERROR_ANNOTATE(
        kiln_onnx_tensor_from_proto(proto, importer->model_dir, importer->allocator, &tensor),
        "initializer %zu", i);
    kiln_expr_t *constant = NULL;
    kiln_status_t status = kiln_onnx_constant(importer, tensor, &constant);
    kiln_tensor_release(tensor);
    KILN_RETURN_IF_ERROR(status);
    KILN_RETURN_IF_ERROR(kiln_onnx_define(importer, proto->name ? proto->name : "", constant));
  }
  return KILN_OK;
}

/* Input `info` as a Constant of `value` (after the checks a parameter gets). */
static kiln_status_t kiln_onnx_bind_input(kiln_onnx_importer_t *importer,
                                          const Onnx__ValueInfoProto *info, kiln_tensor_t *value,
                                          kiln_expr_t **out_expr) {
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type_of(importer, info, value, &type));
  return kiln_onnx_constant(importer, value, out_expr);
}

/* Graph input `info`, number `position` among those that are not
 * initializers: a parameter, or a Constant when the options bind it. */
static kiln_status_t kiln_onnx_add_input(kiln_onnx_importer_t *importer,
                                         const Onnx__ValueInfoProto *info, size_t position) {
  const kiln_onnx_import_options_t *options = importer->options;
  kiln_tensor_t *value = options && position < (size_t)options->num_input_values
                             ? options->input_values[position]
                             : NULL;
  const char *name = info->name ? info->name : "";
  kiln_expr_t *expr = NULL;
  if (value && options->bind_input_values) {
    KILN_RETURN_IF_ERROR(kiln_onnx_bind_input(importer, info, value, &expr));
  } else {
    kiln_var_t *var = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_make_param(importer, info, value, &var));
    KILN_RETURN_IF_ERROR(kiln_array_push(&importer->params, &var));
    expr = &var->base;
  }
  return kiln_onnx_define(importer, name, expr);
}

static const char *kiln_onnx_name(const char *name) {
  return name ? name : "";
}

/* Each graph input is declared once. */
static kiln_status_t kiln_onnx_check_inputs_unique(const Onnx__GraphProto *graph) {
  for (size_t i = 0; i < graph->n_input; ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (strcmp(kiln_onnx_name(graph->input[i]->name), kiln_onnx_name(graph->input[j]->name)) ==
          0) {
        return KILN_STATUS(INVALID_ARGUMENT, "graph input \"%s\" is declared twice",
                           kiln_onnx_name(graph->input[i]->name));
      }
    }
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_add_inputs(kiln_onnx_importer_t *importer,
                                          const Onnx__GraphProto *graph) {
  KILN_RETURN_IF_ERROR(kiln_onnx_check_inputs_unique(graph));
  size_t position = 0;
  for (size_t i = 0; i < graph->n_input; ++i) {
    const Onnx__ValueInfoProto *info = graph->input[i];
    if (kiln_hashmap_contains(&importer->values, info->name ? info->name : "")) {
      continue; /* an initializer: a constant, not a parameter */
    }
    KILN_RETURN_IF_ERROR(kiln_onnx_add_input(importer, info, position++));
  }
  return KILN_OK;
}

/* ---- nodes ---- */

static kiln_status_t kiln_onnx_node_inputs(kiln_onnx_importer_t *importer,
                                           const Onnx__NodeProto *proto, kiln_expr_t **inputs) {
  for (size_t i = 0; i < proto->n_input; ++i) {
    const char *name = proto->input[i];
    inputs[i] = NULL;
    if (!name || !*name) {
      continue;
    }
    KILN_RETURN_IF_ERROR(kiln_onnx_lookup(importer, name, &inputs[i]));
    if (inputs[i] == NULL) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "input %zu names \"%s\", which no earlier node, graph input or "
                         "initializer produces",
                         i, name);
    }
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_node_outputs(kiln_onnx_importer_t *importer,
                                            const kiln_onnx_node_t *node) {
  for (int i = 0; i < node->num_outputs; ++i) {
    const char *name = node->proto->output[i];
    if (!name || !*name) {
      continue;
    }
    if (!node->outputs[i]) {
      return KILN_STATUS(UNIMPLEMENTED, "output %d (\"%s\") is not supported", i, name);
    }
    KILN_RETURN_IF_ERROR(kiln_onnx_define(importer, name, node->outputs[i]));
  }
  return KILN_OK;
}

/* Each attribute of a node is given once. */
static kiln_status_t kiln_onnx_check_attributes_unique(const Onnx__NodeProto *proto) {
  for (size_t i = 0; i < proto->n_attribute; ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (strcmp(kiln_onnx_name(proto->attribute[i]->name),
                 kiln_onnx_name(proto->attribute[j]->name)) == 0) {
        return KILN_STATUS(INVALID_ARGUMENT, "attribute %s is given twice",
                           kiln_onnx_name(proto->attribute[i]->name));
      }
    }
  }
  return KILN_OK;
}

/* UNIMPLEMENTED naming the first input with a symbolic dim, for converters
 * that read their inputs' dims. */
static kiln_status_t kiln_onnx_node_require_static(const kiln_onnx_node_t *node) {
  for (int i = 0; i < node->num_inputs; ++i) {
    const kiln_expr_t *input = node->inputs[i];
    int dim = 0;
    const kiln_dim_var_t *var = input ? kiln_type_first_symbolic(input->checked_type, &dim) : NULL;
    if (var) {
      return KILN_STATUS(UNIMPLEMENTED,
                         "input %d has the symbolic dim %s (dim %d); this operator's converter "
                         "needs static shapes (fix the dim with --input-shape)",
                         i, kiln_dim_var_text(var), dim);
    }
  }
  return KILN_OK;
}

/* INVALID_ARGUMENT naming the first input that is not a tensor, for
 * converters that take tensors only. */
static kiln_status_t kiln_onnx_node_require_tensors(const kiln_onnx_node_t *node) {
  for (int i = 0; i < node->num_inputs; ++i) {
    const kiln_expr_t *input = node->inputs[i];
    if (input && !kiln_type_as_tensor(input->checked_type)) {
      char text[KILN_IR_TYPE_TEXT_CAPACITY];
      return KILN_STATUS(INVALID_ARGUMENT, "input %d is %s; %s takes tensors", i,
                         kiln_type_text(input->checked_type, text), node->proto->op_type);
    }
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_node_convert(kiln_onnx_importer_t *importer,
                                            const Onnx__NodeProto *proto) {
  if (proto->n_input > INT32_MAX || proto->n_output > INT32_MAX) {
    return KILN_STATUS(INVALID_ARGUMENT, "too many inputs or outputs");
  }
  kiln_onnx_node_t node = {.importer = importer,
                           .proto = proto,
                           .num_inputs = (int)proto->n_input,
                           .num_outputs = (int)proto->n_output};
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(
      importer->arena, sizeof(kiln_expr_t *) * (proto->n_input + 1), 8, (void **)&node.inputs));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(
      importer->arena, sizeof(kiln_expr_t *) * (proto->n_output + 1), 8, (void **)&node.outputs));
  KILN_RETURN_IF_ERROR(kiln_onnx_node_inputs(importer, proto, node.inputs));
  KILN_RETURN_IF_ERROR(kiln_onnx_check_attributes_unique(proto));
  const kiln_onnx_converter_t *converter =
      kiln_onnx_node_converter(importer, proto->domain, proto->op_type ? proto->op_type : "");
  if (!converter) {
    return KILN_STATUS(INTERNAL, "no converter"); /* checked before */
  }
  if (!converter->value_inputs) {
    KILN_RETURN_IF_ERROR(kiln_onnx_node_require_tensors(&node));
  }
  if (!converter->symbolic_inputs) {
    KILN_RETURN_IF_ERROR(kiln_onnx_node_require_static(&node));
  }
  if (kiln_onnx_domain_is_default(proto->domain)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_legacy_prepare(&node));
  }
  KILN_RETURN_IF_ERROR(converter->convert(&node));
  return kiln_onnx_node_outputs(importer, &node);
}

/* ---- outputs ---- */

/* The model's declared type of a graph output must be what the graph computes. */
static kiln_status_t kiln_onnx_check_output(const Onnx__ValueInfoProto *info,
                                            const kiln_expr_t *expr) {
  const char *name = info->name ? info->name : "";
  const kiln_tensor_type_t *computed = kiln_type_as_tensor(expr->checked_type);
  const Onnx__TypeProto *type = info->type;
  if (!computed || !type || type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
      !type->tensor_type) {
    return KILN_OK;
  }
  const Onnx__TypeProto__Tensor *declared = type->tensor_type;
  bool agree = true;
  if (declared->has_elem_type && declared->elem_type != 0) {
    kiln_dtype_t dtype = KILN_DTYPE_COUNT_;
    agree = kiln_status_consume_ok(kiln_onnx_dtype(declared->elem_type, &dtype)) &&
            dtype == computed->dtype;
  }
  const Onnx__TensorShapeProto *shape = declared->shape;
  if (agree && shape) {
    agree = shape->n_dim == (size_t)computed->ndim;
    for (size_t d = 0; agree && d < shape->n_dim; ++d) {
      const Onnx__TensorShapeProto__Dimension *dim = shape->dim[d];
      bool symbolic = computed->vars && computed->vars[d];
      agree = dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE || symbolic ||
              dim->dim_value == computed->shape[d];
    }
  }
  if (agree) {
    return KILN_OK;
  }
  char text[KILN_IR_TYPE_TEXT_CAPACITY], elem[32];
  char declared_shape[KILN_SHAPE_TEXT_CAPACITY] = "(unknown)";
  if (shape && shape->n_dim <= KILN_MAX_RANK) {
    int64_t dims[KILN_MAX_RANK];
    for (size_t d = 0; d < shape->n_dim; ++d) {
      dims[d] = shape->dim[d]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                    ? shape->dim[d]->dim_value
                    : -1;
    }
    kiln_shape_format((int)shape->n_dim, dims, declared_shape, sizeof(declared_shape));
  }
  return KILN_STATUS(INVALID_ARGUMENT,
                     "graph output \"%s\" is declared %s %s (-1: symbolic) but the graph "
                     "computes %s",
                     name, kiln_onnx_elem_type_name(declared->elem_type, elem), declared_shape,
                     kiln_type_text(expr->checked_type, text));
}

kiln_status_t kiln_onnx_body(kiln_onnx_importer_t *importer, const Onnx__GraphProto *graph,
                             kiln_expr_t **out_body) {
  if (graph->n_output == 0 || graph->n_output > INT32_MAX) {
    return KILN_STATUS(INVALID_ARGUMENT, "the graph has %zu outputs", graph->n_output);
  }
  kiln_expr_t **fields = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(importer->arena, graph->n_output,
                                                 sizeof(kiln_expr_t *), 8, (void **)&fields));
  for (size_t i = 0; i < graph->n_output; ++i) {
    const char *name = graph->output[i]->name ? graph->output[i]->name : "";
    KILN_RETURN_IF_ERROR(kiln_onnx_lookup(importer, name, &fields[i]));
    if (fields[i] == NULL) {
      return KILN_STATUS(INVALID_ARGUMENT, "graph output \"%s\" is produced by no node", name);
    }
  }
  if (graph->n_output == 1) {
    *out_body = fields[0];
    return KILN_OK;
  }
  kiln_tuple_t *tuple = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_tuple_create(importer->module, (int)graph->n_output, fields, &tuple));
  *out_body = &tuple->base;
  return KILN_OK;
}

static kiln_status_t kiln_onnx_make_main(kiln_onnx_importer_t *importer,
                                         const Onnx__GraphProto *graph) {
  kiln_expr_t *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_body(importer, graph, &body));
  kiln_function_t *main = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_function_create(
      importer->module, (int)kiln_array_count(&importer->params),
      (kiln_var_t *const *)kiln_array_data(&importer->params), body, &main));
  KILN_RETURN_IF_ERROR(kiln_module_add_function(importer->module, "main", main));
  KILN_RETURN_IF_ERROR(kiln_ir_infer_types(importer->module));
  KILN_RETURN_IF_ERROR(kiln_ir_verify(importer->module));
  for (size_t i = 0; i < graph->n_output; ++i) {
    void *value = NULL;
    kiln_hashmap_get(&importer->values, graph->output[i]->name ? graph->output[i]->name : "",
                     &value);
    KILN_RETURN_IF_ERROR(kiln_onnx_check_output(graph->output[i], value));
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_nodes(kiln_onnx_importer_t *importer,
                                      const Onnx__GraphProto *graph) {
  for (size_t i = 0; i < graph->n_node; ++i) {
    const Onnx__NodeProto *node = graph->node[i];
    char label[KILN_ONNX_NODE_LABEL_CAPACITY];
    KILN_RETURN_IF_ERROR_ANNOTATE(kiln_onnx_node_convert(importer, node), "node %s (%s)",
                                  kiln_onnx_node_label(node, i, label),
                                  node->op_type ? node->op_type : "");
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_import_graph(kiln_onnx_importer_t *importer,
                                     const Onnx__ModelProto *model) {
  const Onnx__GraphProto *graph = model->graph;
  KILN_RETURN_IF_ERROR(kiln_onnx_check_supported(importer, graph));
  KILN_RETURN_IF_ERROR(kiln_onnx_add_initializers(importer, graph));
  KILN_RETURN_IF_ERROR(kiln_onnx_check_input_options(importer, graph));
  KILN_RETURN_IF_ERROR(kiln_onnx_add_inputs(importer, graph));
  KILN_RETURN_IF_ERROR(kiln_onnx_convert_nodes(importer, graph));
  return kiln_onnx_make_main(importer, graph);
}
