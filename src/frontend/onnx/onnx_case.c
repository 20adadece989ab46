/*
 * Backend test cases; see onnx_case.h.
 *
 * Tensors are read with the importer's TensorProto reader into two growable
 * arrays; the model is imported in the case's mode: AT_RUN with no options
 * at all (as `kiln interp model.onnx` imports it, so nothing about the
 * inputs' values is known until @main runs), READ with the inputs as input
 * values, BOUND with them bound as Constants. An input file that does not
 * parse (a SequenceProto where the model takes a sequence) does not stop the
 * import: the import is tried without values, so its error, which says what
 * the model needs, is the one reported. The comparison reads every dtype as
 * double, which is exact for all values the tests hold except int64 and
 * uint64 beyond 2^53, where it still detects any difference larger than the
 * tolerance allows.
 */
#define _POSIX_C_SOURCE 200809L
#include "frontend/onnx/onnx_case.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/array.h"
#include "base/file.h"
#include "frontend/onnx/onnx_import.h"
#include "frontend/onnx/onnx_importer.h"
#include "frontend/onnx/onnx_proto.h"

/* Reads `dir`/test_data_set_0/<prefix>_<i>.pb for i = 0, 1, ... until one
 * is missing, appending each tensor to `tensors`. */
static kiln_status_t kiln_onnx_case_tensors(const char *dir, const char *prefix,
                                            kiln_allocator_t allocator, kiln_array_t *tensors) {
  for (int i = 0;; ++i) {
    char name[64];
    snprintf(name, sizeof(name), "test_data_set_0/%s_%d.pb", prefix, i);
    char *path = NULL;
    KILN_RETURN_IF_ERROR(kiln_path_join(allocator, dir, name, &path));
    bool exists = kiln_file_exists(path);
    kiln_status_t status = KILN_OK;
    if (exists) {
      kiln_tensor_t *tensor = NULL;
      status = kiln_onnx_tensor_read_file(path, allocator, &tensor);
      if (!status) {
        status = kiln_array_push(tensors, &tensor);
        if (status) {
          kiln_tensor_release(tensor);
        }
      }
    }
    kiln_allocator_free(allocator, path);
    KILN_RETURN_IF_ERROR(status);
    if (!exists) {
      return KILN_OK;
    }
  }
}

static void kiln_onnx_case_release(kiln_array_t *tensors) {
  for (size_t i = 0; i < kiln_array_count(tensors); ++i) {
    kiln_tensor_release(KILN_ARRAY_AT(tensors, kiln_tensor_t *, i));
  }
  kiln_array_deinitialize(tensors);
}

/* ---- bfloat16 stored as uint16 ---- */

/* The declared elem_type of a ValueInfo (0 when it has none). */
static int32_t kiln_onnx_case_elem_type(const Onnx__ValueInfoProto *info) {
  const Onnx__TypeProto *type = info->type;
  if (!type || type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !type->tensor_type) {
    return 0;
  }
  return type->tensor_type->elem_type;
}

/* Retypes tensors[index] to bfloat16 (same bits) when it is uint16 and
 * `info` declares bfloat16. */
static kiln_status_t kiln_onnx_case_retype(const Onnx__ValueInfoProto *info,
                                           kiln_allocator_t allocator, kiln_array_t *tensors,
                                           size_t index) {
  if (index >= kiln_array_count(tensors) ||
      kiln_onnx_case_elem_type(info) != ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16) {
    return KILN_OK;
  }
  kiln_tensor_t **slot = &KILN_ARRAY_AT(tensors, kiln_tensor_t *, index);
  if (kiln_tensor_dtype(*slot) != KILN_DTYPE_UINT16) {
    return KILN_OK;
  }
  kiln_tensor_t *retyped = NULL;
  KILN_RETURN_IF_ERROR(kiln_tensor_create_copy(
      allocator, KILN_DTYPE_BFLOAT16, kiln_tensor_ndim(*slot), kiln_tensor_shape(*slot),
      kiln_tensor_data(*slot), kiln_tensor_byte_size(*slot), &retyped));
  kiln_tensor_release(*slot);
  *slot = retyped;
  return KILN_OK;
}

/* Whether graph input `name` is also an initializer. */
static bool kiln_onnx_case_is_initializer(const Onnx__GraphProto *graph, const char *name) {
  for (size_t i = 0; i < graph->n_initializer; ++i) {
    const char *other = graph->initializer[i]->name;
    if (other && name && strcmp(other, name) == 0) {
      return true;
    }
  }
  return false;
}

static kiln_status_t kiln_onnx_case_retype_all(const Onnx__GraphProto *graph,
                                               kiln_allocator_t allocator, kiln_array_t *inputs,
                                               kiln_array_t *outputs) {
  size_t position = 0;
  for (size_t i = 0; i < graph->n_input; ++i) {
    if (!kiln_onnx_case_is_initializer(graph, graph->input[i]->name)) {
      KILN_RETURN_IF_ERROR(kiln_onnx_case_retype(graph->input[i], allocator, inputs, position++));
    }
  }
  for (size_t i = 0; i < graph->n_output; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_case_retype(graph->output[i], allocator, outputs, i));
  }
  return KILN_OK;
}

/* ONNX's backend tests store bfloat16 tensors as their uint16 bit patterns
 * (numpy has no bfloat16): where the model declares a bfloat16 graph input
 * or output, a uint16 tensor is retyped to bfloat16, bits unchanged. A
 * model that does not parse is left to the import to report. */
static kiln_status_t kiln_onnx_case_bfloat16(const char *dir, kiln_allocator_t allocator,
                                             kiln_array_t *inputs, kiln_array_t *outputs) {
  char *path = NULL;
  void *bytes = NULL;
  size_t size = 0;
  KILN_RETURN_IF_ERROR(kiln_path_join(allocator, dir, "model.onnx", &path));
  kiln_status_t status = kiln_file_read_all(allocator, path, &bytes, &size);
  kiln_allocator_free(allocator, path);
  if (status) {
    kiln_status_free(status);
    return KILN_OK;
  }
  kiln_onnx_proto_allocator_t adapter;
  kiln_onnx_proto_allocator_initialize(&adapter, allocator);
  ProtobufCMessage *message = NULL;
  status = kiln_onnx_proto_unpack(&adapter, &onnx__model_proto__descriptor, "an ONNX ModelProto",
                                  bytes, size, &message);
  kiln_allocator_free(allocator, bytes);
  if (status) {
    bool exhausted = kiln_status_code(status) == KILN_STATUS_CODE_RESOURCE_EXHAUSTED;
    return exhausted ? status : (kiln_status_free(status), KILN_OK);
  }
  const Onnx__GraphProto *graph = ((const Onnx__ModelProto *)message)->graph;
  if (graph) {
    status = kiln_onnx_case_retype_all(graph, allocator, inputs, outputs);
  }
  protobuf_c_message_free_unpacked(message, &adapter.base);
  return status;
}

/* Imports the model: for AT_RUN as a user does, without options; else
 * with `inputs` as its input values, bound as Constants for BOUND. */
static kiln_status_t kiln_onnx_case_import(const char *dir, kiln_onnx_case_inputs_t mode,
                                           kiln_allocator_t allocator, const kiln_array_t *inputs,
                                           kiln_module_t **out_module) {
  char *path = NULL;
  KILN_RETURN_IF_ERROR(kiln_path_join(allocator, dir, "model.onnx", &path));
  kiln_onnx_import_options_t options = {.static_input_shapes = true};
  if (mode != KILN_ONNX_CASE_INPUTS_AT_RUN) {
    options.num_input_values = (int)kiln_array_count(inputs);
    options.input_values = (kiln_tensor_t *const *)kiln_array_data(inputs);
    options.bind_input_values = mode == KILN_ONNX_CASE_INPUTS_BOUND;
  }
  kiln_status_t status = kiln_onnx_import_file(path, &options, allocator, out_module);
  kiln_allocator_free(allocator, path);
  return status;
}

/* Moves an array's tensors into a plain allocation for the case. */
static kiln_status_t kiln_onnx_case_take(kiln_allocator_t allocator, kiln_array_t *tensors,
                                         int *out_count, kiln_tensor_t ***out_tensors) {
  size_t count = kiln_array_count(tensors);
  kiln_tensor_t **copy = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(allocator, count ? count : 1, sizeof(*copy), (void **)&copy));
  if (count) {
    memcpy(copy, kiln_array_data(tensors), count * sizeof(*copy));
  }
  kiln_array_clear(tensors);
  *out_count = (int)count;
  *out_tensors = copy;
  return KILN_OK;
}

kiln_status_t kiln_onnx_case_load(const char *dir, kiln_onnx_case_inputs_t mode,
                                  kiln_allocator_t allocator, kiln_onnx_case_t *out_case) {
  memset(out_case, 0, sizeof(*out_case));
  out_case->allocator = allocator;
  kiln_array_t inputs, outputs;
  kiln_array_initialize(&inputs, allocator, sizeof(kiln_tensor_t *));
  kiln_array_initialize(&outputs, allocator, sizeof(kiln_tensor_t *));
  kiln_status_t read = kiln_onnx_case_tensors(dir, "input", allocator, &inputs);
  if (!read) {
    read = kiln_onnx_case_tensors(dir, "output", allocator, &outputs);
  }
  kiln_status_t status =
      read ? KILN_OK : kiln_onnx_case_bfloat16(dir, allocator, &inputs, &outputs);
  kiln_array_t none;
  kiln_array_initialize(&none, allocator, sizeof(kiln_tensor_t *));
  if (!status) {
    status = kiln_onnx_case_import(dir, mode, allocator, read ? &none : &inputs, &out_case->module);
  }
  if (!status && read) {
    status = read;
    read = KILN_OK;
  }
  kiln_status_free(read);
  if (!status) {
    status = kiln_onnx_case_take(allocator, &inputs, &out_case->num_inputs, &out_case->inputs);
  }
  if (!status) {
    status = kiln_onnx_case_take(allocator, &outputs, &out_case->num_outputs, &out_case->outputs);
  }
  kiln_onnx_case_release(&inputs);
  kiln_onnx_case_release(&outputs);
  if (status) {
    kiln_onnx_case_deinitialize(out_case);
  }
  return status;
}

void kiln_onnx_case_deinitialize(kiln_onnx_case_t *onnx_case) {
  for (int i = 0; onnx_case->inputs && i < onnx_case->num_inputs; ++i) {
    kiln_tensor_release(onnx_case->inputs[i]);
  }
  for (int i = 0; onnx_case->outputs && i < onnx_case->num_outputs; ++i) {
    kiln_tensor_release(onnx_case->outputs[i]);
  }
  if (onnx_case->inputs) {
    kiln_allocator_free(onnx_case->allocator, onnx_case->inputs);
  }
  if (onnx_case->outputs) {
    kiln_allocator_free(onnx_case->allocator, onnx_case->outputs);
  }
  kiln_module_destroy(onnx_case->module);
  kiln_allocator_t allocator = onnx_case->allocator;
  memset(onnx_case, 0, sizeof(*onnx_case));
  onnx_case->allocator = allocator;
}

/* ---- checks ---- */

/* `what` (dtype, ndim, shape) against the expected tensor. */
static kiln_status_t kiln_onnx_same_type(const char *what, const kiln_tensor_t *expected,
                                         kiln_dtype_t dtype, int ndim, const int64_t *shape) {
  if (kiln_tensor_dtype(expected) == dtype &&
      kiln_shape_equal(ndim, shape, kiln_tensor_ndim(expected), kiln_tensor_shape(expected))) {
    return KILN_OK;
  }
  char want[KILN_SHAPE_TEXT_CAPACITY], got[KILN_SHAPE_TEXT_CAPACITY];
  kiln_shape_format(kiln_tensor_ndim(expected), kiln_tensor_shape(expected), want, sizeof(want));
  kiln_shape_format(ndim, shape, got, sizeof(got));
  return KILN_STATUS(INVALID_ARGUMENT, "%s is %s %s; expected %s %s", what, got,
                     kiln_dtype_name(dtype), want, kiln_dtype_name(kiln_tensor_dtype(expected)));
}

kiln_status_t kiln_onnx_case_check_types(const kiln_onnx_case_t *onnx_case) {
  const kiln_function_t *main = kiln_module_get_function(onnx_case->module, "main");
  const kiln_type_t *type = main ? main->ret_type : NULL;
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  int count = tuple ? tuple->count : 1;
  if (!type || count != onnx_case->num_outputs) {
    return KILN_STATUS(INVALID_ARGUMENT, "@main has %d outputs; the case expects %d",
                       type ? count : 0, onnx_case->num_outputs);
  }
  for (int i = 0; i < count; ++i) {
    const kiln_tensor_type_t *field = kiln_type_as_tensor(tuple ? tuple->fields[i] : type);
    if (!field) {
      return KILN_STATUS(INVALID_ARGUMENT, "output %d is a tuple", i);
    }
    char what[32];
    snprintf(what, sizeof(what), "output %d", i);
    KILN_RETURN_IF_ERROR(
        kiln_onnx_same_type(what, onnx_case->outputs[i], field->dtype, field->ndim, field->shape));
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_case_check_folded(const kiln_onnx_case_t *onnx_case) {
  KILN_RETURN_IF_ERROR(kiln_onnx_case_check_types(onnx_case));
  const kiln_expr_t *body = kiln_module_get_function(onnx_case->module, "main")->body;
  const kiln_tuple_t *tuple = kiln_expr_as_tuple(body);
  for (int i = 0; i < onnx_case->num_outputs; ++i) {
    const kiln_constant_t *constant = kiln_expr_as_constant(tuple ? tuple->fields[i] : body);
    if (!constant) {
      return KILN_STATUS(UNIMPLEMENTED, "output %d did not fold to a constant", i);
    }
    KILN_RETURN_IF_ERROR_ANNOTATE(kiln_onnx_compare(onnx_case->outputs[i], constant->value,
                                                    KILN_ONNX_CASE_RTOL, KILN_ONNX_CASE_ATOL),
                                  "output %d", i);
  }
  return KILN_OK;
}

/* Whether `a` is within tolerance of `e`. */
static bool kiln_onnx_close(double e, double a, double rtol, double atol) {
  if (isnan(e) || isnan(a)) {
    return isnan(e) && isnan(a);
  }
  if (isinf(e) || isinf(a)) {
    return e == a;
  }
  return fabs(a - e) <= atol + rtol * fabs(e);
}

kiln_status_t kiln_onnx_compare(const kiln_tensor_t *expected, const kiln_tensor_t *actual,
                                double rtol, double atol) {
  KILN_RETURN_IF_ERROR(kiln_onnx_same_type("the result", expected, kiln_tensor_dtype(actual),
                                           kiln_tensor_ndim(actual), kiln_tensor_shape(actual)));
  int64_t count = kiln_tensor_element_count(expected), differ = 0, first = -1;
  for (int64_t i = 0; i < count; ++i) {
    if (!kiln_onnx_close(kiln_tensor_element_as_double(expected, i),
                         kiln_tensor_element_as_double(actual, i), rtol, atol)) {
      first = first < 0 ? i : first;
      ++differ;
    }
  }
  if (differ == 0) {
    return KILN_OK;
  }
  return KILN_STATUS(OUT_OF_RANGE,
                     "%lld of %lld elements differ; the first is element %lld: %.9g, expected "
                     "%.9g (rtol %g, atol %g)",
                     (long long)differ, (long long)count, (long long)first,
                     kiln_tensor_element_as_double(actual, first),
                     kiln_tensor_element_as_double(expected, first), rtol, atol);
}
