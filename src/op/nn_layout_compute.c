/*
 * Compute rule of layout_transform (nn_layout.c).
 *
 * One elementwise stage over the destination's storage index: each primal
 * axis's logical coordinate is read off the destination index (outer *
 * factor + inner for a split axis), and the source is loaded at that
 * coordinate placed in its own layout (coordinate // factor for the outer
 * part of a split axis, coordinate % factor for its inner part, the
 * coordinate itself for a whole axis). So NCHW <-> NCHW16c, NCHW4c <->
 * NCHW8c, OIHW <-> OIHW4i8o and permutations such as NCHW <-> NHWC are the
 * same rule; a split axis that does not divide by its factor is rejected by
 * the type relation, as by the reference. Like the byte-wise reference
 * kernel it serves every dtype. The default schedule fuses the destination
 * axes, runs them parallel and vectorizes the inner part (a gather: the
 * source index is not linear in the vector lane).
 */
#include "op/nn_common.h"
#include "op/nn_compute.h"

typedef struct transform_t {
  kiln_layout_t src;
  kiln_layout_t dst;
  const kiln_te_tensor_t *data;
} transform_t;

/* The logical coordinate of primal axis `axis` at destination `indices`. */
static const kiln_tir_expr_t *logical_at(kiln_tir_builder_t *b, const transform_t *t, char axis,
                                         const kiln_tir_expr_t *const *indices) {
  int outer = kiln_layout_axis_index(&t->dst, axis);
  int inner = kiln_layout_split_index(&t->dst, axis);
  if (inner < 0) {
    return indices[outer];
  }
  return kiln_tir_b_add(b,
                        kiln_tir_b_mul(b, indices[outer], kiln_tir_b_i32(b, t->dst.factors[inner])),
                        indices[inner]);
}

static const kiln_tir_expr_t *transform_body(kiln_tir_builder_t *b,
                                             const kiln_tir_expr_t *const *indices, void *user) {
  const transform_t *t = user;
  const kiln_tir_expr_t *at[KILN_LAYOUT_MAX_AXES];
  for (int i = 0; i < t->src.ndim; ++i) {
    char axis = kiln_layout_axis_primal(&t->src, i);
    if (kiln_layout_axis_is_split(&t->src, i)) {
      at[i] = kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, logical_at(b, t, axis, indices),
                             kiln_tir_b_i32(b, t->src.factors[i]));
      continue;
    }
    const kiln_tir_expr_t *x = logical_at(b, t, axis, indices);
    int64_t factor = kiln_layout_factor(&t->src, axis);
    at[i] =
        factor > 0 ? kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, x, kiln_tir_b_i32(b, factor)) : x;
  }
  return kiln_te_read(b, t->data, t->src.ndim, at);
}

kiln_status_t kiln_compute_layout_transform(const kiln_compute_args_t *args,
                                            kiln_compute_result_t *out_result) {
  const kiln_nn_layout_transform_attrs_t *a = args->attrs;
  transform_t t = {.data = args->inputs[0]};
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_layout_parse(a->src_layout, &t.src), "%s: src_layout",
                                args->op->name);
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_layout_parse(a->dst_layout, &t.dst), "%s: dst_layout",
                                args->op->name);
  const kiln_tensor_type_t *out = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &out));
  if (t.src.ndim != t.data->ndim || t.dst.ndim != out->ndim ||
      !kiln_layout_same_axes(&t.src, &t.dst)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: layouts %s -> %s do not fit data of rank %d",
                       args->op->name, a->src_layout, a->dst_layout, t.data->ndim);
  }
  char name[64];
  out_result->num_outputs = 1;
  return kiln_te_compute(args->arena, kiln_compute_tensor_name(args->op, name, sizeof(name)),
                         out->ndim, out->shape, 1, &t.data, transform_body, &t,
                         &out_result->outputs[0]);
}
