/*
 * Converters that make or pass values: Identity, Dropout (inference),
 * Cast, CastLike, Constant, ConstantOfShape, Range, the window
 * functions, DFT, STFT and MelWeightMatrix.
 *
 * DFT is the registry's dft with its attributes as they are and its
 * optional dft_length input, which must be a constant (it sets the output's
 * shape), as the attribute of the same name. STFT and MelWeightMatrix are
 * stft and mel_weight_matrix (op/transform_spectral.c), which take their
 * scalar inputs at run time (the output's shape is computed from them
 * then); STFT's inputs are reordered to (signal, frame_step, frame_length,
 * window), an omitted frame_length becoming 0 (the window's length).
 *
 * Identity and Dropout hand their input on unchanged (Dropout's optional
 * mask is an all-true Constant, as ONNX defines it outside training, and in
 * training with ratio 0; any other training ratio drops at random and is
 * refused).
 * Cast and CastLike are the registry's cast, or nothing when the dtype does
 * not change. Constant and ConstantOfShape make Constants at import; Range
 * is arange with its (constant) inputs as attributes, which folds at once.
 * The window functions (HannWindow, HammingWindow, BlackmanWindow) depend
 * on their size alone, so they are Constants too: a0 - a1 cos(2 pi n / N) +
 * a2 cos(4 pi n / N), N the size (periodic) or the size - 1 (symmetric).
 */
#include <math.h>
#include <string.h>

#include "frontend/onnx/onnx_convert.h"
#include "frontend/onnx/onnx_tensor.h"

kiln_status_t kiln_onnx_convert_identity(kiln_onnx_node_t *node) {
  return kiln_onnx_input(node, 0, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_dropout(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  if (node->importer->opset >= 12 && kiln_onnx_input_optional(node, 2)) {
    double training = 0.0, ratio = 0.5;
    KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 2, "training_mode", &training));
    if (training != 0.0 && kiln_onnx_input_optional(node, 1)) {
      KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 1, "ratio", &ratio));
    }
    if (training != 0.0 && ratio != 0.0) {
      return KILN_STATUS(UNIMPLEMENTED,
                         "training_mode=true with ratio %g is not supported (it drops at "
                         "random; only ratio 0 keeps everything)",
                         ratio);
    }
  }
  node->outputs[0] = x;
  if (node->num_outputs > 1) {
    const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
    KILN_RETURN_IF_ERROR(
        kiln_onnx_filled(node, KILN_DTYPE_BOOL, xt->ndim, xt->shape, 1.0, &node->outputs[1]));
  }
  return KILN_OK;
}

/* x cast to `dtype` (x itself when it has that dtype already). */
static kiln_status_t kiln_onnx_cast_to(kiln_onnx_node_t *node, kiln_expr_t *x, kiln_dtype_t dtype) {
  if (dtype == kiln_onnx_type_of(x)->dtype) {
    node->outputs[0] = x;
    return KILN_OK;
  }
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_cast, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_dtype(&kiln_op_cast, attrs, "dtype", dtype));
  kiln_status_t status = kiln_op_attrs_validate(&kiln_op_cast, attrs);
  if (status) {
    kiln_status_free(status);
    return KILN_STATUS(UNIMPLEMENTED, "cast to %s is not supported", kiln_dtype_name(dtype));
  }
  return kiln_onnx_emit1(node, &kiln_op_cast, x, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_cast(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  int64_t to = 0;
  kiln_dtype_t dtype = KILN_DTYPE_FLOAT32;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  if (!kiln_onnx_attr(node, "to")) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute to is required");
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_legacy_cast_to(node, &to));
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_onnx_dtype(to, &dtype), "attribute to");
  return kiln_onnx_cast_to(node, x, dtype);
}

kiln_status_t kiln_onnx_convert_cast_like(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  const kiln_tensor_type_t *like = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 1, &like));
  return kiln_onnx_cast_to(node, x, like->dtype);
}

/* ---- Constant ---- */

/* A Constant from a FLOAT(S) or INT(S) attribute, when `name` is there. */
static kiln_status_t kiln_onnx_constant_list(kiln_onnx_node_t *node, const char *name,
                                             bool *out_found) {
  const Onnx__AttributeProto *attr = kiln_onnx_attr(node, name);
  *out_found = attr != NULL;
  if (!attr) {
    return KILN_OK;
  }
  bool is_float = strncmp(name, "value_float", 11) == 0;
  bool is_list = name[strlen(name) - 1] == 's';
  if (!is_list) {
    double value = 0.0;
    int64_t integer = 0;
    if (is_float) {
      KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, name, 0.0, &value));
    } else {
      KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, name, 0, &integer));
      value = (double)integer;
    }
    return kiln_onnx_scalar(node, is_float ? KILN_DTYPE_FLOAT32 : KILN_DTYPE_INT64, value,
                            &node->outputs[0]);
  }
  if (!is_float) {
    kiln_ints_t ints;
    KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, name, &ints, NULL));
    return kiln_onnx_int64s(node, ints.count, ints.values, &node->outputs[0]);
  }
  kiln_floats_t floats;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_floats(node, name, &floats, NULL));
  const int64_t shape[1] = {floats.count};
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_tensor_new(node, KILN_DTYPE_FLOAT32, 1, shape, &tensor));
  for (int32_t i = 0; i < floats.count; ++i) {
    ((float *)kiln_tensor_data(tensor))[i] = (float)floats.values[i];
  }
  kiln_status_t status = kiln_onnx_constant(node->importer, tensor, &node->outputs[0]);
  kiln_tensor_release(tensor);
  return status;
}

kiln_status_t kiln_onnx_convert_constant(kiln_onnx_node_t *node) {
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_tensor(node, "value", &tensor));
  if (tensor) {
    kiln_status_t status = kiln_onnx_constant(node->importer, tensor, &node->outputs[0]);
    kiln_tensor_release(tensor);
    return status;
  }
  static const char *const lists[] = {"value_float", "value_floats", "value_int", "value_ints"};
  for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); ++i) {
    bool found = false;
    KILN_RETURN_IF_ERROR(kiln_onnx_constant_list(node, lists[i], &found));
    if (found) {
      return KILN_OK;
    }
  }
  static const char *const unsupported[] = {"sparse_value", "value_string", "value_strings"};
  for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); ++i) {
    if (kiln_onnx_attr(node, unsupported[i])) {
      return KILN_STATUS(UNIMPLEMENTED, "attribute %s is not supported", unsupported[i]);
    }
  }
  return KILN_STATUS(INVALID_ARGUMENT, "has no value attribute");
}

/* ---- ConstantOfShape and Range ---- */

kiln_status_t kiln_onnx_convert_constant_of_shape(kiln_onnx_node_t *node) {
  kiln_ints_t shape;
  kiln_tensor_t *value = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 0, "shape", &shape));
  if (shape.count > KILN_MAX_RANK) {
    return KILN_STATUS(UNIMPLEMENTED, "shape has %d dims (kiln's limit is %d)", (int)shape.count,
                       KILN_MAX_RANK);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_tensor(node, "value", &value));
  if (!value) {
    return kiln_onnx_filled(node, KILN_DTYPE_FLOAT32, shape.count, shape.values, 0.0,
                            &node->outputs[0]);
  }
  kiln_status_t status = KILN_OK;
  kiln_tensor_t *tensor = NULL;
  if (kiln_tensor_element_count(value) != 1) {
    status = KILN_STATUS(INVALID_ARGUMENT, "attribute value has %lld elements; expected one",
                         (long long)kiln_tensor_element_count(value));
  } else {
    status =
        kiln_onnx_tensor_new(node, kiln_tensor_dtype(value), shape.count, shape.values, &tensor);
  }
  if (!status) {
    size_t size = kiln_dtype_size(kiln_tensor_dtype(value));
    int64_t count = kiln_tensor_element_count(tensor);
    for (int64_t i = 0; i < count; ++i) {
      memcpy((char *)kiln_tensor_data(tensor) + (size_t)i * size, kiln_tensor_data(value), size);
    }
    status = kiln_onnx_constant(node->importer, tensor, &node->outputs[0]);
  }
  kiln_tensor_release(tensor);
  kiln_tensor_release(value);
  return status;
}

kiln_status_t kiln_onnx_convert_range(kiln_onnx_node_t *node) {
  double start = 0.0, limit = 0.0, delta = 0.0;
  const kiln_tensor_type_t *type = NULL;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 0, &type));
  bool known = true;
  for (int i = 0; i < 3 && known; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, i, &known));
  }
  if (!known) {
    KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_dyn_arange, &attrs));
    KILN_RETURN_IF_ERROR(kiln_onnx_set_dtype(&kiln_op_dyn_arange, attrs, "dtype", type->dtype));
    return kiln_onnx_emit_dyn(node, &kiln_op_dyn_arange, 3, attrs);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 0, "start", &start));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 1, "limit", &limit));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 2, "delta", &delta));
  const kiln_op_t *op = &kiln_op_arange;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(op, attrs, "start", start));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(op, attrs, "stop", limit));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(op, attrs, "step", delta));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_dtype(op, attrs, "dtype", type->dtype));
  return kiln_onnx_emit(node, op, 0, NULL, attrs, &node->outputs[0]);
}

/* ---- window functions ---- */

/* a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) of HannWindow, HammingWindow
 * and BlackmanWindow. */
typedef struct kiln_onnx_window_fn_t {
  const char *op_type;
  double a0, a1, a2;
} kiln_onnx_window_fn_t;

static const kiln_onnx_window_fn_t kiln_onnx_window_fns[] = {
    {"HannWindow", 0.5, 0.5, 0.0},
    {"HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0.0},
    {"BlackmanWindow", 0.42, 0.5, 0.08},
};

/* A Constant of `size` (constant) elements of the window; N is size when
 * periodic (the default), size - 1 when symmetric; output_datatype (default
 * float) gives the dtype. */
kiln_status_t kiln_onnx_convert_window(kiln_onnx_node_t *node) {
  const kiln_onnx_window_fn_t *fn = NULL;
  for (size_t i = 0; i < sizeof(kiln_onnx_window_fns) / sizeof(kiln_onnx_window_fns[0]); ++i) {
    if (strcmp(kiln_onnx_window_fns[i].op_type, node->proto->op_type) == 0) {
      fn = &kiln_onnx_window_fns[i];
    }
  }
  if (!fn) {
    return KILN_STATUS(INTERNAL, "no window function for %s", node->proto->op_type);
  }
  double size = 0.0;
  int64_t periodic = 1, elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  kiln_dtype_t dtype = KILN_DTYPE_FLOAT32;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 0, "size", &size));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "periodic", 1, &periodic));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "output_datatype", elem_type, &elem_type));
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_onnx_dtype(elem_type, &dtype), "attribute output_datatype");
  if (!(size >= 0.0 && size <= (double)INT32_MAX)) {
    return KILN_STATUS(INVALID_ARGUMENT, "size is %g; expected a count >= 0", size);
  }
  const int64_t shape[1] = {(int64_t)size};
  double n = periodic ? (double)shape[0] : (double)shape[0] - 1.0;
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_tensor_new(node, dtype, 1, shape, &tensor));
  const double pi = 3.14159265358979323846;
  for (int64_t i = 0; i < shape[0]; ++i) {
    double angle = n > 0.0 ? 2.0 * pi * (double)i / n : 0.0;
    kiln_onnx_store_double(tensor, i, fn->a0 - fn->a1 * cos(angle) + fn->a2 * cos(2.0 * angle));
  }
  kiln_status_t status = kiln_onnx_constant(node->importer, tensor, &node->outputs[0]);
  kiln_tensor_release(tensor);
  return status;
}

/* ---- DFT ---- */

kiln_status_t kiln_onnx_convert_dft(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  int64_t axis = 1, inverse = 0, onesided = 0;
  double length = 0.0;
  void *attrs = NULL;
  const kiln_op_t *op = &kiln_op_dft;
  KILN_RETURN_IF_ERROR(kiln_onnx_inputs_at_most(node, 2));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  if (kiln_onnx_input_optional(node, 1)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 1, "dft_length", &length));
    if (!(length >= 1.0 && length <= (double)INT32_MAX) || length != floor(length)) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "input 1 (dft_length) is %g; expected a whole number >= 1", length);
    }
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 1, &axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "inverse", 0, &inverse));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "onesided", 0, &onesided));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "axis", axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "inverse", inverse != 0));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "onesided", onesided != 0));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "dft_length", (int64_t)length));
  return kiln_onnx_emit1(node, op, x, attrs, &node->outputs[0]);
}

/* ---- STFT and MelWeightMatrix ---- */

/* stft(signal, frame_step, frame_length, [window]): an omitted frame_length
 * is 0, the window's length (or the signal's). */
kiln_status_t kiln_onnx_convert_stft(kiln_onnx_node_t *node) {
  const kiln_op_t *op = &kiln_op_stft;
  kiln_expr_t *args[4] = {NULL, NULL, NULL, NULL};
  int64_t onesided = 1;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_inputs_at_most(node, 4));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &args[0]));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &args[1]));
  args[2] = kiln_onnx_input_optional(node, 3);
  if (args[2] == NULL)
    KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_INT64, 0.0, &args[2]));
  args[3] = kiln_onnx_input_optional(node, 2);
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "onesided", 1, &onesided));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "onesided", onesided != 0));
  return kiln_onnx_emit(node, op, args[3] ? 4 : 3, args, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_mel_weight_matrix(kiln_onnx_node_t *node) {
  const kiln_op_t *op = &kiln_op_mel_weight_matrix;
  kiln_expr_t *args[5];
  int64_t elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  kiln_dtype_t dtype = KILN_DTYPE_FLOAT32;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_inputs_at_most(node, 5));
  for (int i = 0; i < 5; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &args[i]));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "output_datatype", elem_type, &elem_type));
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_onnx_dtype(elem_type, &dtype), "attribute output_datatype");
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_dtype(op, attrs, "dtype", dtype));
  return kiln_onnx_emit(node, op, 5, args, attrs, &node->outputs[0]);
}
