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
 * training with ratio 0). Dropout in training (or with training_mode or
 * ratio known only at run time) drops at random: a random.bernoulli mask
 * and where, so its numbers are kiln's generator's, not NumPy's.
 * Cast and CastLike are the registry's cast, or nothing when the dtype does
 * not change. Constant and ConstantOfShape make Constants at import; Range
 * is arange with its (constant) inputs as attributes, which folds at once.
 * The window functions (HannWindow, HammingWindow, BlackmanWindow) depend
 * on their size alone, so they are Constants too: a0 - a1 cos(2 pi n / N) +
 * a2 cos(4 pi n / N), N the size (periodic) or the size - 1 (symmetric).
 * A shape or size known only at run time is read by the graph instead:
 * ConstantOfShape becomes dyn.broadcast_to of its value, a window the same
 * formula over dyn.arange(0, size) in float64.
 */
#include <math.h>
#include <string.h>

#include "frontend/onnx/onnx_convert.h"
#include "frontend/onnx/onnx_tensor.h"
#include "runtime/scalar.h"

kiln_status_t kiln_onnx_convert_identity(kiln_onnx_node_t *node) {
  return kiln_onnx_input(node, 0, &node->outputs[0]);
}

/* Dropout in training: y = training ? where(mask, x / (1 - ratio), 0) : x,
 * mask = bernoulli(1 - ratio) per element (kiln's generator, seeded by the
 * seed attribute), the mask output training ? mask : true. ratio and
 * training_mode may be known only at run time; a ratio of 0 keeps every
 * element exactly (the draw of probability 1 is always true). */
static kiln_status_t kiln_onnx_dropout_training(kiln_onnx_node_t *node, kiln_expr_t *x) {
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  kiln_expr_t *ratio = kiln_onnx_input_optional(node, 1), *training = NULL, *one = NULL;
  kiln_expr_t *keep = NULL, *probability = NULL, *mask = NULL, *zero = NULL, *kept = NULL;
  const kiln_op_t *bernoulli = &kiln_op_random_bernoulli;
  void *attrs = NULL;
  int64_t seed = 0;
  if (!kiln_onnx_is_float(xt->dtype)) {
    return KILN_STATUS(INVALID_ARGUMENT, "data is %s; training mode needs floats",
                       kiln_dtype_name(xt->dtype));
  }
  if (!ratio) {
    KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, xt->dtype, 0.5, &ratio));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 2, &training));
  KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, training, KILN_DTYPE_BOOL, &training));
  KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, ratio, xt->dtype, &ratio));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, xt->dtype, 1.0, &one));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, xt->dtype, 0.0, &zero));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_subtract, one, ratio, NULL, &keep));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_broadcast_to, &attrs));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_ints(node, &kiln_op_broadcast_to, attrs, "shape", xt->ndim, xt->shape));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_broadcast_to, keep, attrs, &probability));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "seed", 0, &seed)); /* Dropout's is an int */
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, bernoulli, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_dtype(bernoulli, attrs, "dtype", KILN_DTYPE_BOOL));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(bernoulli, attrs, "seed", (double)seed));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, bernoulli, probability, attrs, &mask));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_divide, x, keep, NULL, &kept));
  kiln_expr_t *dropped[3] = {mask, kept, zero}, *chosen[3] = {training, NULL, x};
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_where, 3, dropped, NULL, &chosen[1]));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_where, 3, chosen, NULL, &node->outputs[0]));
  if (node->num_outputs > 1) {
    kiln_expr_t *idle = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_logical_not, training, NULL, &idle));
    KILN_RETURN_IF_ERROR(
        kiln_onnx_emit2(node, &kiln_op_logical_or, idle, mask, NULL, &node->outputs[1]));
  }
  return KILN_OK;
}

/* Whether Dropout trains: training_mode (opset 12+) unless known false,
 * and the ratio unless known 0. */
static kiln_status_t kiln_onnx_dropout_trains(const kiln_onnx_node_t *node, bool *out_trains) {
  bool known_training = false, known_ratio = true;
  double training = 1.0, ratio = 0.5;
  *out_trains = false;
  if (node->importer->opset < 12 || !kiln_onnx_input_optional(node, 2)) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 2, &known_training));
  if (known_training) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 2, "training_mode", &training));
  }
  if (kiln_onnx_input_optional(node, 1)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 1, &known_ratio));
  }
  if (known_ratio && kiln_onnx_input_optional(node, 1)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 1, "ratio", &ratio));
  }
  *out_trains = training != 0.0 && (!known_ratio || ratio != 0.0);
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_dropout(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  bool trains = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_dropout_trains(node, &trains));
  if (trains) {
    return kiln_onnx_dropout_training(node, x);
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

/* ConstantOfShape with a shape known only at run time: the value (a
 * rank-0 Constant) broadcast to it by dyn.broadcast_to. */
static kiln_status_t kiln_onnx_constant_of_shape_dyn(kiln_onnx_node_t *node) {
  kiln_tensor_t *value = NULL, *scalar = NULL;
  kiln_expr_t *args[2] = {NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &args[1]));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_tensor(node, "value", &value));
  if (!value) {
    KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_FLOAT32, 0.0, &args[0]));
    return kiln_onnx_emit(node, &kiln_op_dyn_broadcast_to, 2, args, NULL, &node->outputs[0]);
  }
  kiln_status_t status = KILN_OK;
  if (kiln_tensor_element_count(value) != 1) {
    status = KILN_STATUS(INVALID_ARGUMENT, "attribute value has %lld elements; expected one",
                         (long long)kiln_tensor_element_count(value));
  } else {
    status = kiln_onnx_tensor_new(node, kiln_tensor_dtype(value), 0, NULL, &scalar);
  }
  if (!status) {
    memcpy(kiln_tensor_data(scalar), kiln_tensor_data(value),
           kiln_dtype_size(kiln_tensor_dtype(value)));
    status = kiln_onnx_constant(node->importer, scalar, &args[0]);
  }
  kiln_tensor_release(scalar);
  kiln_tensor_release(value);
  KILN_RETURN_IF_ERROR(status);
  return kiln_onnx_emit(node, &kiln_op_dyn_broadcast_to, 2, args, NULL, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_constant_of_shape(kiln_onnx_node_t *node) {
  kiln_ints_t shape;
  kiln_tensor_t *value = NULL;
  bool known = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 0, &known));
  if (!known) {
    return kiln_onnx_constant_of_shape_dyn(node);
  }
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

/* a · x for a float64 scalar a (x itself when a is 1). */
static kiln_status_t kiln_onnx_window_scale(kiln_onnx_node_t *node, double a, kiln_expr_t *x,
                                            kiln_expr_t **out_expr) {
  kiln_expr_t *scalar = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_FLOAT64, a, &scalar));
  return kiln_onnx_emit2(node, &kiln_op_multiply, scalar, x, NULL, out_expr);
}

/* The window of a size known only at run time, computed by the graph in
 * float64 and cast to `dtype`: n = arange(0, size) (dyn.arange), N = size or
 * size - 1, at least 1 (a one-element window has angle 0, as at import). */
static kiln_status_t kiln_onnx_window_dyn(kiln_onnx_node_t *node, const kiln_onnx_window_fn_t *fn,
                                          bool periodic, kiln_dtype_t dtype) {
  const kiln_tensor_type_t *size_type = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 0, &size_type));
  kiln_scalar_class_t have = kiln_scalar_class(size_type->dtype);
  if ((have != KILN_SCALAR_CLASS_SIGNED && have != KILN_SCALAR_CLASS_UNSIGNED) ||
      size_type->ndim > 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "input 0 (size) is %s of rank %d; expected one integer",
                       kiln_dtype_name(size_type->dtype), size_type->ndim);
  }
  kiln_expr_t *args[3] = {NULL, NULL, NULL}, *n = NULL, *big_n = NULL, *one = NULL;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &args[1]));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_INT64, 0.0, &args[0]));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_INT64, 1.0, &args[2]));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_dyn_arange, &attrs));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_dtype(&kiln_op_dyn_arange, attrs, "dtype", KILN_DTYPE_FLOAT64));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_dyn_arange, 3, args, attrs, &n));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_FLOAT64, 1.0, &one));
  KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, args[1], KILN_DTYPE_FLOAT64, &big_n));
  if (!periodic) {
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_subtract, big_n, one, NULL, &big_n));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_maximum, big_n, one, NULL, &big_n));
  kiln_expr_t *angle = NULL, *first = NULL, *second = NULL, *w = NULL, *a0 = NULL;
  const double pi = 3.14159265358979323846;
  KILN_RETURN_IF_ERROR(kiln_onnx_window_scale(node, 2.0 * pi, n, &angle));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_divide, angle, big_n, NULL, &angle));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_cos, angle, NULL, &first));
  KILN_RETURN_IF_ERROR(kiln_onnx_window_scale(node, fn->a1, first, &first));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_FLOAT64, fn->a0, &a0));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_subtract, a0, first, NULL, &w));
  if (fn->a2 != 0.0) {
    KILN_RETURN_IF_ERROR(kiln_onnx_window_scale(node, 2.0, angle, &second));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_cos, second, NULL, &second));
    KILN_RETURN_IF_ERROR(kiln_onnx_window_scale(node, fn->a2, second, &second));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_add, w, second, NULL, &w));
  }
  return kiln_onnx_cast(node, w, dtype, &node->outputs[0]);
}

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
  bool known = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "periodic", 1, &periodic));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "output_datatype", elem_type, &elem_type));
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_onnx_dtype(elem_type, &dtype), "attribute output_datatype");
  KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 0, &known));
  if (!known) {
    return kiln_onnx_window_dyn(node, fn, periodic != 0, dtype);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 0, "size", &size));
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
