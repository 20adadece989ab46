/*
 * dyn.resize: ONNX Resize (and Upsample) whose scales, sizes or roi are
 * known only at run time.
 *
 * When they are known at import, the ONNX importer builds image.resize2d or
 * interpolation matrices. Here the same rule (runtime/resize_rule.h, one
 * definition for both) runs at run time: the inputs are (data, roi,
 * scales, sizes), each list 1-D and possibly empty; sizes, when not empty,
 * give the output's shape, else the scales do (out = floor(in * scale)).
 * The attributes are ONNX's, under ONNX's names.
 *
 * At import the output's rank is the data's and every dim is "?". The
 * shape function and the reference kernel are the runtime's extern kernel
 * (runtime/extern_resize.c, through op/value_shape.c), which the VM's
 * call_extern runs too: the compiled path calls it rather than lowering a
 * kernel (kiln_dyn_compute_refuse says so if anything asks for one).
 */
#include <stdint.h>

#include "op/dyn.h"
#include "op/impl.h"
#include "runtime/resize_rule.h"
#include "runtime/scalar.h"

typedef struct kiln_dyn_resize_attrs_t {
  const char *mode;
  const char *coordinate_transformation_mode;
  const char *nearest_mode;
  double cubic_coeff_a;
  bool exclude_outside;
  double extrapolation_value;
} kiln_dyn_resize_attrs_t;

enum { RESIZE_DATA, RESIZE_ROI, RESIZE_SCALES, RESIZE_SIZES };

static kiln_resize_rule_t dyn_resize_rule(const kiln_dyn_resize_attrs_t *attrs) {
  return (kiln_resize_rule_t){.mode = attrs->mode,
                              .coordinate = attrs->coordinate_transformation_mode,
                              .rounding = attrs->nearest_mode,
                              .cubic_a = attrs->cubic_coeff_a,
                              .exclude_outside = attrs->exclude_outside,
                              .extrapolation = attrs->extrapolation_value};
}

static kiln_status_t dyn_resize_validate(const kiln_op_t *op, const void *attrs) {
  kiln_resize_rule_t rule = dyn_resize_rule(attrs);
  return kiln_status_annotate(kiln_resize_rule_check(&rule), "%s", op->name);
}

/* ---- type relation ---- */

static kiln_status_t dyn_resize_infer(const kiln_type_relation_t *relation,
                                      const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, RESIZE_DATA, &data));
  KILN_RETURN_IF_ERROR(kiln_dyn_check_list(relation, RESIZE_ROI, "roi", true));
  KILN_RETURN_IF_ERROR(kiln_dyn_check_list(relation, RESIZE_SCALES, "scales", true));
  KILN_RETURN_IF_ERROR(kiln_dyn_check_list(relation, RESIZE_SIZES, "sizes", false));
  kiln_scalar_class_t have = kiln_scalar_class(data->dtype);
  if (data->ndim < 1 || have == KILN_SCALAR_CLASS_NONE || have == KILN_SCALAR_CLASS_BOOL) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: the data is %s of rank %d; expected numbers of rank "
                       ">= 1",
                       relation->op->name, kiln_dtype_name(data->dtype), data->ndim);
  }
  return kiln_dyn_symbolic_type(relation->arena, data->dtype, data->ndim, out_type);
}

void kiln_dyn_resize_extern_attrs(const void *attrs, int64_t *out_attrs) {
  kiln_resize_rule_t rule = dyn_resize_rule(attrs);
  kiln_resize_rule_encode(&rule, out_attrs);
}

/* ---- the operator ---- */

static const kiln_attr_field_t dyn_resize_fields[] = {
    KILN_ATTR_FIELD(kiln_dyn_resize_attrs_t, mode, STRING, "\"nearest\""),
    KILN_ATTR_FIELD(kiln_dyn_resize_attrs_t, coordinate_transformation_mode, STRING,
                    "\"half_pixel\""),
    KILN_ATTR_FIELD(kiln_dyn_resize_attrs_t, nearest_mode, STRING, "\"round_prefer_floor\""),
    KILN_ATTR_FIELD(kiln_dyn_resize_attrs_t, cubic_coeff_a, FLOAT, "-0.75"),
    KILN_ATTR_FIELD(kiln_dyn_resize_attrs_t, exclude_outside, BOOL, "False"),
    KILN_ATTR_FIELD(kiln_dyn_resize_attrs_t, extrapolation_value, FLOAT, "0.0"),
};

const kiln_op_t kiln_op_dyn_resize = {
    .name = "dyn.resize",
    .id = KILN_OP_DYN_RESIZE,
    .min_inputs = 4,
    .max_inputs = 4,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_dyn_resize_attrs_t),
    .num_attr_fields = (int)(sizeof(dyn_resize_fields) / sizeof(dyn_resize_fields[0])),
    .attr_fields = dyn_resize_fields,
    .validate_attrs = dyn_resize_validate,
    .infer_type = dyn_resize_infer,
    .shape_func = kiln_value_shape_func,
    .symbolic_relation = true,
};

const kiln_op_impl_t kiln_op_dyn_resize_impl = {
    .reference = kiln_value_shape_reference,
    .compute = kiln_dyn_compute_refuse,
};
