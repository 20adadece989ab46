/*
 * Builds small ONNX models in C for the importer's tests, with the structs
 * protobuf-c generates from onnx.proto: a graph of nodes, initializers,
 * inputs and outputs, packed into the bytes of a ModelProto (or written to
 * a file). Everything lives in one arena freed by ob_free, so a test builds
 * a model in a few lines and never frees pieces. Capacities are fixed
 * (OB_MAX_*), enough for the tests; exceeding one fails the test.
 */
#ifndef KILN_TESTS_ONNX_ONNX_BUILDER_H_
#define KILN_TESTS_ONNX_ONNX_BUILDER_H_

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "base/arena.h"
#include "frontend/onnx/onnx_import.h"
#include "ir/order.h"
#include "kiln_test.h"
#include "onnx.pb-c.h"
#include "op/op.h"

#define OB_MAX_NODES  64
#define OB_MAX_VALUES 32
#define OB_FLOAT      ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define OB_INT64      ONNX__TENSOR_PROTO__DATA_TYPE__INT64
#define OB_INT32      ONNX__TENSOR_PROTO__DATA_TYPE__INT32
#define OB_BOOL       ONNX__TENSOR_PROTO__DATA_TYPE__BOOL
/* A dim written as OB_SYMBOLIC in ob_input is a dim_param named "N". */
#define OB_SYMBOLIC (-1)
/* A dim written as OB_UNKNOWN has neither a dim_value nor a dim_param. */
#define OB_UNKNOWN   (-2)
#define OB_DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define OB_F32(...)  ((const float[]){__VA_ARGS__})
#define OB_I64(...)  ((const int64_t[]){__VA_ARGS__})

/* The cmocka fixture of the ONNX tests: every status a test makes is freed. */
static int64_t ob_statuses_before;

static inline int setup(void **state) {
  (void)state;
  ob_statuses_before = kiln_status_live_count();
  return 0;
}

static inline int teardown(void **state) {
  (void)state;
  assert_int_equal(kiln_status_live_count(), ob_statuses_before);
  return 0;
}

typedef struct ob_t {
  kiln_arena_t arena;
  Onnx__ModelProto model;
  Onnx__GraphProto graph;
  Onnx__OperatorSetIdProto opset;
  Onnx__OperatorSetIdProto *opsets[2];
  Onnx__NodeProto *nodes[OB_MAX_NODES];
  Onnx__TensorProto *initializers[OB_MAX_VALUES];
  Onnx__ValueInfoProto *inputs[OB_MAX_VALUES];
  Onnx__ValueInfoProto *outputs[OB_MAX_VALUES];
} ob_t;

static inline void *ob_alloc(ob_t *ob, size_t size) {
  void *p = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate_zeroed(&ob->arena, size ? size : 1, 16, &p));
  return p;
}

static inline char *ob_strdup(ob_t *ob, const char *text) {
  char *copy = ob_alloc(ob, strlen(text) + 1);
  memcpy(copy, text, strlen(text) + 1);
  return copy;
}

/* An empty model importing `opset` of the default domain. */
static inline void ob_init(ob_t *ob, int64_t opset) {
  memset(ob, 0, sizeof(*ob));
  kiln_arena_initialize(&ob->arena, kiln_allocator_system(), 0);
  onnx__model_proto__init(&ob->model);
  onnx__graph_proto__init(&ob->graph);
  onnx__operator_set_id_proto__init(&ob->opset);
  ob->model.has_ir_version = 1;
  ob->model.ir_version = 8;
  ob->opset.domain = ob_strdup(ob, "");
  ob->opset.has_version = 1;
  ob->opset.version = opset;
  ob->opsets[0] = &ob->opset;
  ob->model.n_opset_import = 1;
  ob->model.opset_import = ob->opsets;
  ob->model.graph = &ob->graph;
  ob->graph.name = ob_strdup(ob, "test");
  ob->graph.node = ob->nodes;
  ob->graph.initializer = ob->initializers;
  ob->graph.input = ob->inputs;
  ob->graph.output = ob->outputs;
}

static inline void ob_free(ob_t *ob) {
  kiln_arena_deinitialize(&ob->arena);
}

/* Splits "a,b,,c" into strings ("" for an omitted input). */
static inline size_t ob_names(ob_t *ob, const char *list, char ***out_names) {
  size_t count = *list ? 1 : 0;
  for (const char *p = list; *p; ++p) {
    count += *p == ',';
  }
  char **names = ob_alloc(ob, sizeof(char *) * (count + 1));
  const char *start = list;
  for (size_t i = 0; i < count; ++i) {
    const char *end = strchr(start, ',');
    size_t length = end ? (size_t)(end - start) : strlen(start);
    names[i] = ob_alloc(ob, length + 1);
    memcpy(names[i], start, length);
    start = end ? end + 1 : start + length;
  }
  *out_names = names;
  return count;
}

/* A node `op_type` named `name` ("" for none) from comma-separated input
 * and output names. */
static inline Onnx__NodeProto *ob_node(ob_t *ob, const char *op_type, const char *name,
                                       const char *inputs, const char *outputs) {
  assert_true(ob->graph.n_node < OB_MAX_NODES);
  Onnx__NodeProto *node = ob_alloc(ob, sizeof(*node));
  onnx__node_proto__init(node);
  node->op_type = ob_strdup(ob, op_type);
  node->name = ob_strdup(ob, name);
  node->n_input = ob_names(ob, inputs, &node->input);
  node->n_output = ob_names(ob, outputs, &node->output);
  node->attribute = ob_alloc(ob, sizeof(Onnx__AttributeProto *) * 16);
  ob->nodes[ob->graph.n_node++] = node;
  return node;
}

static inline Onnx__AttributeProto *ob_attr(ob_t *ob, Onnx__NodeProto *node, const char *name,
                                            Onnx__AttributeProto__AttributeType type) {
  assert_true(node->n_attribute < 16);
  Onnx__AttributeProto *attr = ob_alloc(ob, sizeof(*attr));
  onnx__attribute_proto__init(attr);
  attr->name = ob_strdup(ob, name);
  attr->has_type = 1;
  attr->type = type;
  node->attribute[node->n_attribute++] = attr;
  return attr;
}

/* A GRAPH attribute: `body`'s graph (another builder's, which must live as
 * long as this one is used) as a subgraph of `node`. */
static inline void ob_attr_graph(ob_t *ob, Onnx__NodeProto *node, const char *name, ob_t *body) {
  Onnx__AttributeProto *attr =
      ob_attr(ob, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
  attr->g = &body->graph;
}

static inline void ob_attr_int(ob_t *ob, Onnx__NodeProto *node, const char *name, int64_t value) {
  Onnx__AttributeProto *attr = ob_attr(ob, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  attr->has_i = 1;
  attr->i = value;
}

static inline void ob_attr_float(ob_t *ob, Onnx__NodeProto *node, const char *name, float value) {
  Onnx__AttributeProto *attr =
      ob_attr(ob, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  attr->has_f = 1;
  attr->f = value;
}

static inline void ob_attr_ints(ob_t *ob, Onnx__NodeProto *node, const char *name, size_t count,
                                const int64_t *values) {
  Onnx__AttributeProto *attr = ob_attr(ob, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  attr->n_ints = count;
  attr->ints = ob_alloc(ob, sizeof(int64_t) * count);
  memcpy(attr->ints, values, sizeof(int64_t) * count);
}

static inline void ob_attr_floats(ob_t *ob, Onnx__NodeProto *node, const char *name, size_t count,
                                  const float *values) {
  Onnx__AttributeProto *attr =
      ob_attr(ob, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
  attr->n_floats = count;
  attr->floats = ob_alloc(ob, sizeof(float) * count);
  memcpy(attr->floats, values, sizeof(float) * count);
}

static inline void ob_attr_string(ob_t *ob, Onnx__NodeProto *node, const char *name,
                                  const char *value) {
  Onnx__AttributeProto *attr =
      ob_attr(ob, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  attr->has_s = 1;
  attr->s.len = strlen(value);
  attr->s.data = (uint8_t *)ob_strdup(ob, value);
}

/* A tensor without data of `elem_type` and dims. */
static inline Onnx__TensorProto *ob_tensor(ob_t *ob, const char *name, int32_t elem_type,
                                           size_t ndim, const int64_t *dims) {
  Onnx__TensorProto *tensor = ob_alloc(ob, sizeof(*tensor));
  onnx__tensor_proto__init(tensor);
  tensor->name = ob_strdup(ob, name);
  tensor->has_data_type = 1;
  tensor->data_type = elem_type;
  tensor->n_dims = ndim;
  tensor->dims = ob_alloc(ob, sizeof(int64_t) * ndim);
  if (ndim) {
    memcpy(tensor->dims, dims, sizeof(int64_t) * ndim);
  }
  return tensor;
}

static inline size_t ob_count(size_t ndim, const int64_t *dims) {
  size_t count = 1;
  for (size_t i = 0; i < ndim; ++i) {
    count *= (size_t)dims[i];
  }
  return count;
}

/* float32 values in raw_data (little-endian bytes). */
static inline Onnx__TensorProto *ob_tensor_raw(ob_t *ob, const char *name, int32_t elem_type,
                                               size_t ndim, const int64_t *dims, const void *data,
                                               size_t bytes) {
  Onnx__TensorProto *tensor = ob_tensor(ob, name, elem_type, ndim, dims);
  tensor->has_raw_data = 1;
  tensor->raw_data.len = bytes;
  tensor->raw_data.data = ob_alloc(ob, bytes);
  memcpy(tensor->raw_data.data, data, bytes);
  return tensor;
}

static inline Onnx__TensorProto *ob_tensor_f32(ob_t *ob, const char *name, size_t ndim,
                                               const int64_t *dims, const float *values) {
  Onnx__TensorProto *tensor = ob_tensor(ob, name, OB_FLOAT, ndim, dims);
  tensor->n_float_data = ob_count(ndim, dims);
  tensor->float_data = ob_alloc(ob, sizeof(float) * tensor->n_float_data);
  if (tensor->n_float_data > 0) {
    memcpy(tensor->float_data, values, sizeof(float) * tensor->n_float_data);
  }
  return tensor;
}

static inline Onnx__TensorProto *ob_tensor_i64(ob_t *ob, const char *name, size_t ndim,
                                               const int64_t *dims, const int64_t *values) {
  Onnx__TensorProto *tensor = ob_tensor(ob, name, OB_INT64, ndim, dims);
  tensor->n_int64_data = ob_count(ndim, dims);
  tensor->int64_data = ob_alloc(ob, sizeof(int64_t) * tensor->n_int64_data);
  if (tensor->n_int64_data > 0) {
    memcpy(tensor->int64_data, values, sizeof(int64_t) * tensor->n_int64_data);
  }
  return tensor;
}

static inline void ob_initializer(ob_t *ob, Onnx__TensorProto *tensor) {
  assert_true(ob->graph.n_initializer < OB_MAX_VALUES);
  ob->initializers[ob->graph.n_initializer++] = tensor;
}

/* A float32 initializer in float_data. */
static inline void ob_init_f32(ob_t *ob, const char *name, size_t ndim, const int64_t *dims,
                               const float *values) {
  ob_initializer(ob, ob_tensor_f32(ob, name, ndim, dims, values));
}

static inline void ob_init_i64(ob_t *ob, const char *name, size_t ndim, const int64_t *dims,
                               const int64_t *values) {
  ob_initializer(ob, ob_tensor_i64(ob, name, ndim, dims, values));
}

/* A ValueInfo of a tensor type; dims NULL: no shape; OB_SYMBOLIC: "N". */
static inline Onnx__ValueInfoProto *ob_value_info(ob_t *ob, const char *name, int32_t elem_type,
                                                  size_t ndim, const int64_t *dims) {
  Onnx__ValueInfoProto *info = ob_alloc(ob, sizeof(*info));
  onnx__value_info_proto__init(info);
  info->name = ob_strdup(ob, name);
  Onnx__TypeProto *type = ob_alloc(ob, sizeof(*type));
  onnx__type_proto__init(type);
  Onnx__TypeProto__Tensor *tensor = ob_alloc(ob, sizeof(*tensor));
  onnx__type_proto__tensor__init(tensor);
  tensor->has_elem_type = 1;
  tensor->elem_type = elem_type;
  if (dims) {
    Onnx__TensorShapeProto *shape = ob_alloc(ob, sizeof(*shape));
    onnx__tensor_shape_proto__init(shape);
    shape->n_dim = ndim;
    shape->dim = ob_alloc(ob, sizeof(Onnx__TensorShapeProto__Dimension *) * (ndim + 1));
    for (size_t i = 0; i < ndim; ++i) {
      Onnx__TensorShapeProto__Dimension *dim = ob_alloc(ob, sizeof(*dim));
      onnx__tensor_shape_proto__dimension__init(dim);
      if (dims[i] == OB_SYMBOLIC) {
        dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        dim->dim_param = ob_strdup(ob, "N");
      } else if (dims[i] == OB_UNKNOWN) {
        dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET;
      } else {
        dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dim->dim_value = dims[i];
      }
      shape->dim[i] = dim;
    }
    tensor->shape = shape;
  }
  type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  type->tensor_type = tensor;
  info->type = type;
  return info;
}

static inline void ob_input(ob_t *ob, const char *name, int32_t elem_type, size_t ndim,
                            const int64_t *dims) {
  assert_true(ob->graph.n_input < OB_MAX_VALUES);
  ob->inputs[ob->graph.n_input++] = ob_value_info(ob, name, elem_type, ndim, dims);
}

/* A graph output without a declared shape (dims NULL) or with one. */
static inline void ob_output(ob_t *ob, const char *name, int32_t elem_type, size_t ndim,
                             const int64_t *dims) {
  assert_true(ob->graph.n_output < OB_MAX_VALUES);
  ob->outputs[ob->graph.n_output++] = ob_value_info(ob, name, elem_type, ndim, dims);
}

/* The serialized model, in the builder's arena. */
static inline uint8_t *ob_pack(ob_t *ob, size_t *out_size) {
  size_t size = onnx__model_proto__get_packed_size(&ob->model);
  uint8_t *bytes = ob_alloc(ob, size);
  assert_int_equal(onnx__model_proto__pack(&ob->model, bytes), size);
  *out_size = size;
  return bytes;
}

/* Packs and imports the model as "test.onnx" (no folder). */
static inline kiln_status_t ob_import(ob_t *ob, const kiln_onnx_import_options_t *options,
                                      kiln_allocator_t allocator, kiln_module_t **out_module) {
  size_t size = 0;
  uint8_t *bytes = ob_pack(ob, &size);
  return kiln_onnx_import_buffer("test.onnx", bytes, size, NULL, options, allocator, out_module);
}

/* ---- inspecting the imported module ---- */

static inline kiln_function_t *om_main(kiln_module_t *module) {
  kiln_function_t *main = kiln_module_get_function(module, "main");
  assert_non_null(main);
  return main;
}

static inline void om_assert_type(const kiln_type_t *type, kiln_dtype_t dtype, int ndim,
                                  const int64_t *dims) {
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(type);
  assert_non_null(tensor);
  assert_int_equal(tensor->dtype, dtype);
  assert_int_equal(tensor->ndim, ndim);
  for (int i = 0; i < ndim; ++i) {
    assert_int_equal(tensor->shape[i], dims[i]);
  }
}

/* The tensor of a Constant expression (fails the test otherwise). */
static inline const kiln_tensor_t *om_constant(const kiln_expr_t *expr) {
  const kiln_constant_t *constant = kiln_expr_as_constant(expr);
  assert_non_null(constant);
  return constant->value;
}

/* The body of @main as a Constant: the model folded completely. */
static inline const kiln_tensor_t *om_folded(kiln_module_t *module) {
  return om_constant(om_main(module)->body);
}

static inline void om_assert_f32(const kiln_tensor_t *tensor, const float *expected, int64_t count,
                                 double tolerance) {
  assert_int_equal(kiln_tensor_dtype(tensor), KILN_DTYPE_FLOAT32);
  assert_int_equal(kiln_tensor_element_count(tensor), count);
  const float *data = kiln_tensor_data(tensor);
  for (int64_t i = 0; i < count; ++i) {
    bool same = data[i] == expected[i] || (isnan(data[i]) && isnan(expected[i]));
    if (!same && !(fabs((double)data[i] - (double)expected[i]) <= tolerance)) {
      print_error("element %lld is %.9g, expected %.9g\n", (long long)i, (double)data[i],
                  (double)expected[i]);
      fail();
    }
  }
}

static inline void om_assert_i64(const kiln_tensor_t *tensor, const int64_t *expected,
                                 int64_t count) {
  assert_int_equal(kiln_tensor_dtype(tensor), KILN_DTYPE_INT64);
  assert_int_equal(kiln_tensor_element_count(tensor), count);
  const int64_t *data = kiln_tensor_data(tensor);
  for (int64_t i = 0; i < count; ++i) {
    assert_int_equal(data[i], expected[i]);
  }
}

/* How many Calls of `op` (NULL: of any operator) @main has. */
static inline int om_count_calls(kiln_module_t *module, const kiln_op_t *op) {
  kiln_ir_order_t order;
  KILN_ASSERT_OK(kiln_ir_order_compute(om_main(module), kiln_allocator_system(), &order));
  int count = 0;
  for (size_t i = 0; i < kiln_ir_order_count(&order); ++i) {
    const kiln_call_t *call = kiln_expr_as_call(kiln_ir_order_node(&order, i));
    count += call && (!op || call->op == op);
  }
  kiln_ir_order_deinitialize(&order);
  return count;
}

/* Imports with input values bound as constants, so the graph folds. */
static inline kiln_module_t *ob_import_folded(ob_t *ob, int count, kiln_tensor_t *const *values) {
  kiln_onnx_import_options_t options = {
      .num_input_values = count, .input_values = values, .bind_input_values = true};
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(ob, &options, kiln_allocator_system(), &module));
  return module;
}

/* A float32 tensor holding `values` (the caller releases it). */
static inline kiln_tensor_t *om_tensor_f32(int ndim, const int64_t *dims, const float *values) {
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, ndim, dims, &tensor));
  memcpy(kiln_tensor_data(tensor), values, kiln_tensor_byte_size(tensor));
  return tensor;
}

#endif /* KILN_TESTS_ONNX_ONNX_BUILDER_H_ */
