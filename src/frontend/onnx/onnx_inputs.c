/*
 * Graph inputs -> parameters of @main: their IR names, and their types from
 * the model's ValueInfo and the --input-shape options.
 *
 * A spec is "name=D1xD2x...": the name is everything before the last '='
 * that is not a "<="'s (ONNX names may hold anything), the dims joined by
 * 'x' ("name=" is a scalar), each a non-negative decimal integer or a
 * symbolic dim NAME (an identifier without 'x', the separator) with an
 * optional upper bound,
 * NAME<=BOUND (the VM plans the memory of values whose symbolic dims are
 * all bounded at their bounds: docs/dynamic-shapes.md). A spec replaces the model's shape for
 * its input; it must have the model's rank, and agree with every dim the
 * model fixes. Without a spec, a value given in the options supplies the
 * shape (its dtype must be the model's); without either, a dim that is a
 * dim_param stays symbolic, a dimension variable of that name (sanitized as
 * parameter names are), and a missing dim an anonymous one; with the
 * option static_input_shapes such a dim stops the import with the spelling of
 * the option that would fix it. The options are checked against the graph before any
 * parameter is made, so a misspelt name is reported as such. A sequence's
 * (or an optional's) element type keeps the dims the model fixes and makes
 * each other dim an anonymous symbolic dim, static_input_shapes or not: the
 * elements of one sequence may differ in size (no option names them, and
 * only the interpreter runs sequences).
 *
 * IR names follow the rule in onnx_import.h: invalid characters become '_',
 * a leading digit or '.' gets a '_' in front, and a name already taken gets
 * the first free suffix "_1", "_2", ...
 */
#include <stdio.h>
#include <string.h>

#include "frontend/onnx/onnx_importer.h"
#include "frontend/onnx/onnx_tensor.h"

/* ---- specs ---- */

typedef struct kiln_onnx_spec_t {
  int ndim;
  int64_t dims[KILN_MAX_RANK];
  const kiln_dim_var_t *vars[KILN_MAX_RANK]; /* symbolic dims of the model's shape */
} kiln_onnx_spec_t;

static kiln_status_t kiln_onnx_spec_error(const char *spec, const char *why) {
  return KILN_STATUS(INVALID_ARGUMENT,
                     "--input-shape \"%s\": %s; write NAME=D1xD2x... (e.g. x=1x3x224x224, or "
                     "x=1xN<=128x384 for a symbolic dim N of upper bound 128)",
                     spec, why);
}

static bool kiln_onnx_is_digit(char c) {
  return c >= '0' && c <= '9';
}

/* The non-negative integer at *p, *p moved past it. */
static kiln_status_t kiln_onnx_spec_int(const char *spec, const char **p, int64_t *out_value) {
  if (!kiln_onnx_is_digit(**p)) {
    return kiln_onnx_spec_error(spec, "a dim is not a non-negative integer or NAME[<=BOUND]");
  }
  int64_t value = 0;
  for (; kiln_onnx_is_digit(**p); ++*p) {
    if (value > (INT64_MAX - 9) / 10) {
      return kiln_onnx_spec_error(spec, "a dim is too large");
    }
    value = value * 10 + (**p - '0');
  }
  *out_value = value;
  return KILN_OK;
}

/* Whether `c` may be in a symbolic dim's NAME in a spec: an identifier's
 * characters but 'x', the separator. */
static bool kiln_onnx_spec_name_char(char c, bool first) {
  return c != 'x' && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
                      (!first && kiln_onnx_is_digit(c)));
}

/* A symbolic dim at *p, NAME or NAME<=BOUND, *p moved past it. */
static kiln_status_t kiln_onnx_spec_var(kiln_arena_t *arena, const char *spec, const char **p,
                                        const kiln_dim_var_t **out_var) {
  const char *start = *p;
  while (kiln_onnx_spec_name_char(**p, *p == start)) {
    ++*p;
  }
  char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(arena, (size_t)(*p - start) + 1, 1, (void **)&name));
  memcpy(name, start, (size_t)(*p - start));
  name[*p - start] = '\0';
  int64_t bound = -1;
  if ((*p)[0] == '<' && (*p)[1] == '=') {
    *p += 2;
    KILN_RETURN_IF_ERROR(kiln_onnx_spec_int(spec, p, &bound));
  }
  return kiln_dim_var_create(arena, name, bound, out_var);
}

/* Parses the dims after the '=' of `spec` (a symbolic one's variable in
 * `arena`). */
static kiln_status_t kiln_onnx_spec_dims(kiln_arena_t *arena, const char *spec, const char *text,
                                         kiln_onnx_spec_t *out_spec) {
  out_spec->ndim = 0;
  if (*text == '\0') {
    return KILN_OK;
  }
  for (const char *p = text;;) {
    if (out_spec->ndim == KILN_MAX_RANK) {
      return kiln_onnx_spec_error(spec, "more than 32 dims");
    }
    int d = out_spec->ndim++;
    out_spec->vars[d] = NULL;
    out_spec->dims[d] = -1;
    if (kiln_onnx_is_digit(*p)) {
      KILN_RETURN_IF_ERROR(kiln_onnx_spec_int(spec, &p, &out_spec->dims[d]));
    } else if (kiln_onnx_spec_name_char(*p, true)) {
      KILN_RETURN_IF_ERROR(kiln_onnx_spec_var(arena, spec, &p, &out_spec->vars[d]));
    } else {
      return kiln_onnx_spec_error(spec, "a dim is not a non-negative integer or NAME[<=BOUND]");
    }
    if (*p == '\0') {
      return KILN_OK;
    }
    if (*p != 'x') {
      return kiln_onnx_spec_error(spec, "dims must be separated by 'x'");
    }
    ++p;
  }
}

/* The name part of `spec` (before its last '=' that is not a "<="'s),
 * checked. */
static kiln_status_t kiln_onnx_spec_name(const char *spec, const char **out_equals) {
  const char *equals = NULL;
  for (const char *p = strchr(spec, '='); p; p = strchr(p + 1, '=')) {
    equals = p > spec && p[-1] == '<' && equals ? equals : p;
  }
  if (!equals || equals == spec) {
    return kiln_onnx_spec_error(spec, "no NAME= before the dims");
  }
  *out_equals = equals;
  return KILN_OK;
}

/* The spec for input `name`, if the options have one (*out_found). */
static kiln_status_t kiln_onnx_spec_find(kiln_arena_t *arena,
                                         const kiln_onnx_import_options_t *options,
                                         const char *name, kiln_onnx_spec_t *out_spec,
                                         bool *out_found) {
  *out_found = false;
  for (int i = 0; options && i < options->num_input_shapes; ++i) {
    const char *spec = options->input_shape_specs[i];
    const char *equals = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_spec_name(spec, &equals));
    if (strlen(name) == (size_t)(equals - spec) && strncmp(spec, name, strlen(name)) == 0) {
      KILN_RETURN_IF_ERROR(kiln_onnx_spec_dims(arena, spec, equals + 1, out_spec));
      *out_found = true;
    }
  }
  return KILN_OK;
}

/* Whether graph input `name` is a parameter (not an initializer). */
static bool kiln_onnx_is_param_input(const kiln_onnx_importer_t *importer,
                                     const Onnx__GraphProto *graph, const char *name,
                                     size_t length) {
  for (size_t i = 0; i < graph->n_input; ++i) {
    const char *input = graph->input[i]->name ? graph->input[i]->name : "";
    if (strlen(input) == length && strncmp(input, name, length) == 0) {
      return !kiln_hashmap_contains(&importer->values, input);
    }
  }
  return false;
}

kiln_status_t kiln_onnx_check_input_options(kiln_onnx_importer_t *importer,
                                            const Onnx__GraphProto *graph) {
  const kiln_onnx_import_options_t *options = importer->options;
  size_t inputs = 0;
  for (size_t i = 0; i < graph->n_input; ++i) {
    inputs += !kiln_hashmap_contains(&importer->values,
                                     graph->input[i]->name ? graph->input[i]->name : "");
  }
  if (options && options->num_input_values > 0 && (size_t)options->num_input_values > inputs) {
    return KILN_STATUS(INVALID_ARGUMENT, "%d input values are given but the graph has %zu inputs",
                       options->num_input_values, inputs);
  }
  for (int i = 0; options && i < options->num_input_shapes; ++i) {
    const char *spec = options->input_shape_specs[i];
    const char *equals = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_spec_name(spec, &equals));
    if (!kiln_onnx_is_param_input(importer, graph, spec, (size_t)(equals - spec))) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "--input-shape \"%s\" names no input of the graph (initializers are "
                         "not inputs)",
                         spec);
    }
  }
  return KILN_OK;
}

/* ---- names ---- */

static bool kiln_onnx_name_char(char c, bool first) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
         (!first && ((c >= '0' && c <= '9') || c == '.'));
}

/* The sanitized spelling of `name`, unique among the parameters. */
static kiln_status_t kiln_onnx_param_name(kiln_onnx_importer_t *importer, const char *name,
                                          char **out_name) {
  size_t length = strlen(name);
  /* "" -> "_"; "0a" -> "_0a"; ":a" -> "_a" (replaced, not prefixed). */
  bool prefix =
      length == 0 || (!kiln_onnx_name_char(name[0], true) && kiln_onnx_name_char(name[0], false));
  size_t base = length + (prefix ? 1 : 0);
  char *text = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(importer->arena, base + 24, 1, (void **)&text));
  size_t at = 0;
  if (prefix) {
    text[at++] = '_';
  }
  for (size_t i = 0; i < length; ++i, ++at) {
    text[at] = kiln_onnx_name_char(name[i], at == 0) ? name[i] : '_';
  }
  text[at] = '\0';
  for (int suffix = 1; kiln_hashmap_contains(&importer->param_names, text); ++suffix) {
    snprintf(text + base, 24, "_%d", suffix);
  }
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(&importer->param_names, text, NULL));
  *out_name = text;
  return KILN_OK;
}

/* ---- types ---- */

/* INVALID_ARGUMENT naming dim `d` of input `name`, which needs a spec. */
static kiln_status_t
kiln_onnx_dim_needs_spec(const char *name, const Onnx__TensorShapeProto__Dimension *dim, size_t d) {
  if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "input \"%s\" has a symbolic dimension \"%s\" (dim %zu); give its shape "
                       "with --input-shape %s=...",
                       name, dim->dim_param ? dim->dim_param : "", d, name);
  }
  return KILN_STATUS(INVALID_ARGUMENT,
                     "input \"%s\" has an unknown dimension (dim %zu); give its shape with "
                     "--input-shape %s=...",
                     name, d, name);
}

/* The dimension variable of a dim_param (its name sanitized into an
 * identifier) or of an unknown dim (anonymous). */
static kiln_status_t kiln_onnx_dim_var(kiln_onnx_importer_t *importer,
                                       const Onnx__TensorShapeProto__Dimension *dim,
                                       const kiln_dim_var_t **out_var) {
  const char *param =
      dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param
          ? dim->dim_param
          : "";
  size_t length = strlen(param);
  char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(importer->arena, length + 2, 1, (void **)&name));
  size_t at = 0;
  if (length > 0 && !kiln_onnx_name_char(param[0], true) && param[0] != '.') {
    name[at++] = '_';
  }
  for (size_t i = 0; i < length; ++i, ++at) {
    name[at] = kiln_onnx_name_char(param[i], at == 0) && param[i] != '.' ? param[i] : '_';
  }
  name[at] = '\0';
  return kiln_dim_var_create(importer->arena, name, -1, out_var);
}

/* The shape of `info` from the model: dim_params and unknown dims symbolic,
 * or (static_input_shapes) INVALID_ARGUMENT naming a dim that needs a spec. */
static kiln_status_t kiln_onnx_model_shape(kiln_onnx_importer_t *importer, const char *name,
                                           const Onnx__TensorShapeProto *shape,
                                           kiln_onnx_spec_t *out_shape) {
  if (!shape) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "input \"%s\" has no shape; give it with --input-shape %s=...", name, name);
  }
  if (shape->n_dim > KILN_MAX_RANK) {
    return KILN_STATUS(UNIMPLEMENTED, "input \"%s\" has %zu dims; kiln takes at most %d", name,
                       shape->n_dim, KILN_MAX_RANK);
  }
  bool symbolic = !(importer->options && importer->options->static_input_shapes);
  out_shape->ndim = (int)shape->n_dim;
  for (size_t d = 0; d < shape->n_dim; ++d) {
    const Onnx__TensorShapeProto__Dimension *dim = shape->dim[d];
    out_shape->vars[d] = NULL;
    out_shape->dims[d] = -1;
    if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
        dim->dim_value >= 0) {
      out_shape->dims[d] = dim->dim_value;
    } else if (symbolic) {
      KILN_RETURN_IF_ERROR(kiln_onnx_dim_var(importer, dim, &out_shape->vars[d]));
    } else {
      return kiln_onnx_dim_needs_spec(name, dim, d);
    }
  }
  return KILN_OK;
}

/* A spec must keep the model's rank and every dim the model fixes; `source`
 * says where the spec came from ("--input-shape", "the value"). */
static kiln_status_t kiln_onnx_spec_agrees(const char *name, const Onnx__TensorShapeProto *shape,
                                           const kiln_onnx_spec_t *spec, const char *source) {
  if (!shape) {
    return KILN_OK;
  }
  if (shape->n_dim != (size_t)spec->ndim) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s gives input \"%s\" %d dims but the model gives it %zu",
                       source, name, spec->ndim, shape->n_dim);
  }
  for (int d = 0; d < spec->ndim; ++d) {
    const Onnx__TensorShapeProto__Dimension *dim = shape->dim[d];
    if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
        dim->dim_value >= 0 && spec->vars[d]) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s gives dim %d of input \"%s\" as the symbolic %s but the model fixes "
                         "it at %lld",
                         source, d, name, spec->vars[d]->name, (long long)dim->dim_value);
    }
    if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
        dim->dim_value >= 0 && dim->dim_value != spec->dims[d]) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s gives dim %d of input \"%s\" as %lld but the model fixes it at %lld",
                         source, d, name, (long long)spec->dims[d], (long long)dim->dim_value);
    }
  }
  return KILN_OK;
}

/* The type a value gives its parameter: the model's dtype, and the value's
 * shape where the model fixes dims. */
static kiln_status_t kiln_onnx_value_shape(const char *name, kiln_dtype_t dtype,
                                           const Onnx__TensorShapeProto *shape,
                                           const kiln_tensor_t *value,
                                           kiln_onnx_spec_t *out_shape) {
  if (kiln_tensor_dtype(value) != dtype) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "the value given for input \"%s\" is %s; the model says %s", name,
                       kiln_dtype_name(kiln_tensor_dtype(value)), kiln_dtype_name(dtype));
  }
  out_shape->ndim = kiln_tensor_ndim(value);
  for (int d = 0; d < out_shape->ndim; ++d) {
    out_shape->dims[d] = kiln_tensor_shape(value)[d];
  }
  return kiln_onnx_spec_agrees(name, shape, out_shape, "the value given");
}

kiln_status_t kiln_onnx_input_type_of(kiln_onnx_importer_t *importer,
                                      const Onnx__ValueInfoProto *info, const kiln_tensor_t *value,
                                      const kiln_type_t **out_type) {
  const char *name = info->name ? info->name : "";
  const Onnx__TypeProto *type = info->type;
  if (type && (type->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ||
               type->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE)) {
    return kiln_onnx_value_type(importer, name, type, out_type);
  }
  if (!type || type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !type->tensor_type) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "input \"%s\" is not a tensor, a sequence or an optional (maps and sparse "
                       "tensors are not supported)",
                       name);
  }
  const Onnx__TypeProto__Tensor *tensor = type->tensor_type;
  kiln_dtype_t dtype = KILN_DTYPE_FLOAT32;
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_onnx_dtype(tensor->has_elem_type ? tensor->elem_type : 0, &dtype), "input \"%s\"", name);
  kiln_onnx_spec_t shape = {0};
  bool found = false;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_spec_find(importer->arena, importer->options, name, &shape, &found));
  if (found) {
    KILN_RETURN_IF_ERROR(kiln_onnx_spec_agrees(name, tensor->shape, &shape, "--input-shape"));
  } else if (value) {
    KILN_RETURN_IF_ERROR(kiln_onnx_value_shape(name, dtype, tensor->shape, value, &shape));
  } else {
    KILN_RETURN_IF_ERROR(kiln_onnx_model_shape(importer, name, tensor->shape, &shape));
  }
  if (value && !kiln_shape_equal(shape.ndim, shape.dims, kiln_tensor_ndim(value),
                                 kiln_tensor_shape(value))) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "the value given for input \"%s\" does not have the shape its "
                       "--input-shape gives",
                       name);
  }
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_tensor_type_create_symbolic(importer->arena, dtype, shape.ndim,
                                                                 shape.dims, shape.vars, out_type),
                                "input \"%s\"", name);
  return KILN_OK;
}

/* The element type of a sequence or an optional from the model's shape:
 * fixed dims as they are, every other dim (a dim_param or unknown) its own
 * anonymous symbolic dim, since the elements of one sequence may each have
 * another size there; *out_type NULL when the model gives no shape (the
 * rank is known only at run time). */
static kiln_status_t kiln_onnx_element_shape(kiln_onnx_importer_t *importer, const char *name,
                                             kiln_dtype_t dtype,
                                             const Onnx__TensorShapeProto *shape,
                                             const kiln_type_t **out_type) {
  *out_type = NULL;
  if (!shape) {
    return KILN_OK;
  }
  if (shape->n_dim > KILN_MAX_RANK) {
    return KILN_STATUS(UNIMPLEMENTED, "\"%s\": elements of %zu dims; kiln takes at most %d", name,
                       shape->n_dim, KILN_MAX_RANK);
  }
  int64_t dims[KILN_MAX_RANK];
  const kiln_dim_var_t *vars[KILN_MAX_RANK];
  for (size_t d = 0; d < shape->n_dim; ++d) {
    const Onnx__TensorShapeProto__Dimension *dim = shape->dim[d];
    bool fixed = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                 dim->dim_value >= 0;
    dims[d] = fixed ? dim->dim_value : -1;
    vars[d] = NULL;
    if (!fixed)
      KILN_RETURN_IF_ERROR(kiln_dim_var_create(importer->arena, "", -1, &vars[d]));
  }
  return kiln_tensor_type_create_symbolic(importer->arena, dtype, (int)shape->n_dim, dims, vars,
                                          out_type);
}

/* A tensor type of a TypeProto inside a sequence or an optional: the dtype,
 * and the shape as kiln_onnx_element_shape gives it. */
static kiln_status_t kiln_onnx_element_type(kiln_onnx_importer_t *importer, const char *name,
                                            const Onnx__TypeProto *type, kiln_dtype_t *out_dtype,
                                            const kiln_type_t **out_type) {
  *out_type = NULL;
  if (!type || type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !type->tensor_type) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "\"%s\": only sequences and optionals of tensors are "
                       "supported",
                       name);
  }
  const Onnx__TypeProto__Tensor *tensor = type->tensor_type;
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_onnx_dtype(tensor->has_elem_type ? tensor->elem_type : 0, out_dtype), "\"%s\"", name);
  return kiln_onnx_element_shape(importer, name, *out_dtype, tensor->shape, out_type);
}

static kiln_status_t kiln_onnx_sequence_type(kiln_onnx_importer_t *importer, const char *name,
                                             const Onnx__TypeProto *type,
                                             const kiln_type_t **out_type) {
  const Onnx__TypeProto__Sequence *sequence = type->sequence_type;
  kiln_dtype_t dtype = KILN_DTYPE_FLOAT32;
  const kiln_type_t *element = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_element_type(importer, name, sequence ? sequence->elem_type : NULL,
                                              &dtype, &element));
  return kiln_sequence_type_create(importer->arena, dtype, element, out_type);
}

kiln_status_t kiln_onnx_value_type(kiln_onnx_importer_t *importer, const char *name,
                                   const Onnx__TypeProto *type, const kiln_type_t **out_type) {
  if (type && type->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE) {
    return kiln_onnx_sequence_type(importer, name, type, out_type);
  }
  if (!type || type->value_case != ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE || !type->optional_type) {
    return KILN_STATUS(UNIMPLEMENTED, "\"%s\" is not a tensor, a sequence or an optional", name);
  }
  const Onnx__TypeProto *inner = type->optional_type->elem_type;
  const kiln_type_t *element = NULL;
  if (inner && inner->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE) {
    KILN_RETURN_IF_ERROR(kiln_onnx_sequence_type(importer, name, inner, &element));
  } else {
    kiln_dtype_t dtype = KILN_DTYPE_FLOAT32;
    KILN_RETURN_IF_ERROR(kiln_onnx_element_type(importer, name, inner, &dtype, &element));
    if (element == NULL) {
      return KILN_STATUS(UNIMPLEMENTED,
                         "\"%s\" is an optional tensor whose rank the model does not give; "
                         "kiln needs it",
                         name);
    }
  }
  return kiln_optional_type_create(importer->arena, element, out_type);
}

kiln_status_t kiln_onnx_make_param(kiln_onnx_importer_t *importer, const Onnx__ValueInfoProto *info,
                                   kiln_tensor_t *value, kiln_var_t **out_var) {
  const char *name = info->name ? info->name : "";
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type_of(importer, info, value, &type));
  char *ir_name = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_param_name(importer, name, &ir_name));
  KILN_RETURN_IF_ERROR(kiln_ir_var_create(importer->module, ir_name, type, out_var));
  (*out_var)->base.checked_type = type;
  if (value) {
    KILN_RETURN_IF_ERROR(kiln_hashmap_put(&importer->param_values, *out_var, value));
  }
  return KILN_OK;
}
