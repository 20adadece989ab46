/*
 * einsum: ONNX Einsum (opset 12), Relay's einsum, numpy.einsum's equations.
 *
 * The equation ("bij,bjk->bik", spaces ignored) is resolved against the
 * inputs' shapes once, into a plan (kiln_einsum_plan_of) that the type
 * relation, the reference kernel and the compute rule all read: every dim
 * of every input carries a label (a letter, or one of the dims an ellipsis
 * stands for, aligned from the right as in broadcasting), each label one
 * extent (a dim of extent 1 broadcasts against a larger one; other
 * mismatches are errors naming the label and both extents). The output is
 * the labels after "->", "..." expanding to the ellipsis dims; without
 * "->", the ellipsis dims then the letters that occur once, in ASCII order
 * (numpy's implicit mode). Labels not in the output are summed over; a
 * label repeated within an input takes the diagonal.
 *
 * The reference kernel walks the output and, for each element, every
 * combination of the summed labels, multiplying one element of each input
 * and accumulating in double (float32 and float64 data, one dtype for all
 * inputs). The compute rule (transform_einsum_compute.c) is that sum as a
 * tensor-expression reduction with one reduce axis per summed label, or a
 * plain compute when nothing is summed (a transpose, a diagonal).
 */
#include <string.h>

#include "op/impl.h"
#include "op/transform_attrs.h"
#include "op/transform_common.h"
#include "op/transform_compute.h"

static const kiln_attr_field_t kiln_einsum_fields[] = {
    KILN_ATTR_FIELD(kiln_einsum_attrs_t, equation, STRING, "\"\""),
};

enum { ELLIPSIS_LABEL = 52, MAX_EQUATION = 256 };

/* The label of a letter, or -1. */
static int letter_label(char c) {
  if (c >= 'a' && c <= 'z') {
    return c - 'a';
  }
  return c >= 'A' && c <= 'Z' ? 26 + (c - 'A') : -1;
}

static char label_letter(int label) {
  return label < 26 ? (char)('a' + label) : (char)('A' + label - 26);
}

/* One term of the equation: its letters before and after an ellipsis. */
typedef struct term_t {
  int8_t letters[KILN_MAX_RANK];
  int count;
  int ellipsis_at; /* index into letters where "..." stands, or -1 */
} term_t;

static kiln_status_t parse_term(const kiln_op_t *op, const char *text, size_t length,
                                term_t *out_term) {
  out_term->count = 0;
  out_term->ellipsis_at = -1;
  for (size_t i = 0; i < length; ++i) {
    if (text[i] == '.' && i + 2 < length && text[i + 1] == '.' && text[i + 2] == '.' &&
        out_term->ellipsis_at < 0) {
      out_term->ellipsis_at = out_term->count;
      i += 2;
      continue;
    }
    int label = letter_label(text[i]);
    if (label < 0 || out_term->count == KILN_MAX_RANK) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: equation term \"%.*s\" is not letters and at most one \"...\"",
                         op->name, (int)length, text);
    }
    out_term->letters[out_term->count++] = (int8_t)label;
  }
  return KILN_OK;
}

/* The equation without spaces, split into the input terms and the output
 * (out_rhs NULL without "->"). */
static kiln_status_t split_equation(const kiln_op_t *op, const char *equation, char *buffer,
                                    const char **out_rhs) {
  size_t n = 0;
  for (const char *c = equation ? equation : ""; *c; ++c) {
    if (*c == ' ') {
      continue;
    }
    if (n + 1 >= MAX_EQUATION) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: the equation is longer than %d characters",
                         op->name, MAX_EQUATION - 1);
    }
    buffer[n++] = *c;
  }
  buffer[n] = '\0';
  char *arrow = strstr(buffer, "->");
  *out_rhs = NULL;
  if (arrow) {
    *arrow = '\0';
    *out_rhs = arrow + 2;
  }
  return KILN_OK;
}

/* Gives input `i`'s dims their labels and the labels their extents. */
static kiln_status_t label_input(const kiln_op_t *op, const term_t *term, int i, int ndim,
                                 const int64_t *shape, int ellipsis_ndim,
                                 kiln_einsum_plan_t *plan) {
  int own = ndim - term->count; /* the dims this input's ellipsis stands for */
  if (own < 0 || (term->ellipsis_at < 0 && own != 0)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d has rank %d but its term names %d dims%s",
                       op->name, i, ndim, term->count, term->ellipsis_at < 0 ? "" : " and more");
  }
  int d = 0;
  for (int k = 0; k <= term->count; ++k) {
    for (int e = 0; k == term->ellipsis_at && e < own; ++e) {
      plan->labels[i][d++] = (int8_t)(ELLIPSIS_LABEL + ellipsis_ndim - own + e);
    }
    if (k < term->count) {
      plan->labels[i][d++] = term->letters[k];
    }
  }
  for (d = 0; d < ndim; ++d) {
    int64_t *extent = &plan->extent[plan->labels[i][d]];
    if (*extent < 0 || *extent == 1) {
      *extent = shape[d];
    } else if (shape[d] != *extent && shape[d] != 1) {
      int label = plan->labels[i][d];
      if (label >= ELLIPSIS_LABEL) {
        return KILN_STATUS(
            INVALID_ARGUMENT, "%s: ellipsis dim %d has extent %lld in input %d but %lld before",
            op->name, label - ELLIPSIS_LABEL, (long long)shape[d], i, (long long)*extent);
      }
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: label %c has extent %lld in input %d but %lld before", op->name,
                         label_letter(label), (long long)shape[d], i, (long long)*extent);
    }
  }
  return KILN_OK;
}

static kiln_status_t add_output_label(const kiln_op_t *op, kiln_einsum_plan_t *plan, int label) {
  for (int d = 0; d < plan->out_ndim; ++d) {
    if (plan->out_labels[d] == label) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: the output names %c twice", op->name,
                         label_letter(label));
    }
  }
  if (plan->extent[label] < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the output's %c is in no input", op->name,
                       label_letter(label));
  }
  if (plan->out_ndim == KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the output has more than %d dims", op->name,
                       KILN_MAX_RANK);
  }
  plan->out_labels[plan->out_ndim++] = (int8_t)label;
  return KILN_OK;
}

static kiln_status_t label_output(const kiln_op_t *op, const char *rhs, int ellipsis_ndim,
                                  const int *occurrences, kiln_einsum_plan_t *plan) {
  if (!rhs) {
    for (int e = 0; e < ellipsis_ndim; ++e) {
      KILN_RETURN_IF_ERROR(add_output_label(op, plan, ELLIPSIS_LABEL + e));
    }
    static const int ascii[2][2] = {{26, 52}, {0, 26}}; /* A-Z, then a-z */
    for (int part = 0; part < 2; ++part) {
      for (int label = ascii[part][0]; label < ascii[part][1]; ++label) {
        if (occurrences[label] == 1) {
          KILN_RETURN_IF_ERROR(add_output_label(op, plan, label));
        }
      }
    }
    return KILN_OK;
  }
  term_t term;
  KILN_RETURN_IF_ERROR(parse_term(op, rhs, strlen(rhs), &term));
  for (int k = 0; k <= term.count; ++k) {
    for (int e = 0; k == term.ellipsis_at && e < ellipsis_ndim; ++e) {
      KILN_RETURN_IF_ERROR(add_output_label(op, plan, ELLIPSIS_LABEL + e));
    }
    if (k < term.count) {
      KILN_RETURN_IF_ERROR(add_output_label(op, plan, term.letters[k]));
    }
  }
  return KILN_OK;
}

/* The summed labels and each input dim's broadcast flag. */
static void finish_plan(kiln_einsum_plan_t *plan, const int64_t *const *shapes) {
  bool in_output[KILN_EINSUM_MAX_LABELS] = {false};
  for (int d = 0; d < plan->out_ndim; ++d) {
    in_output[plan->out_labels[d]] = true;
  }
  for (int label = 0; label < KILN_EINSUM_MAX_LABELS; ++label) {
    if (plan->extent[label] >= 0 && !in_output[label]) {
      plan->summed[plan->num_summed++] = (int8_t)label;
    }
  }
  for (int i = 0; i < plan->num_inputs; ++i) {
    for (int d = 0; d < plan->ndim[i]; ++d) {
      plan->broadcast[i][d] = shapes[i][d] == 1 && plan->extent[plan->labels[i][d]] != 1;
    }
  }
}

kiln_status_t kiln_einsum_plan_of(const kiln_op_t *op, const char *equation, int num_inputs,
                                  const int *ndims, const int64_t *const *shapes,
                                  kiln_einsum_plan_t *out_plan) {
  memset(out_plan, 0, sizeof(*out_plan));
  memset(out_plan->extent, 0xff, sizeof(out_plan->extent)); /* -1: unused */
  char buffer[MAX_EQUATION];
  const char *rhs = NULL;
  KILN_RETURN_IF_ERROR(split_equation(op, equation, buffer, &rhs));
  int count = 1;
  for (const char *c = buffer; *c; ++c) {
    count += *c == ',';
  }
  if (count != num_inputs) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: equation \"%s\" has %d input terms for %d inputs",
                       op->name, equation ? equation : "", count, num_inputs);
  }
  term_t terms[KILN_EINSUM_MAX_INPUTS];
  int ellipsis_ndim = 0;
  const char *term = buffer;
  for (int i = 0; i < num_inputs; ++i) {
    const char *comma = strchr(term, ',');
    size_t length = comma ? (size_t)(comma - term) : strlen(term);
    KILN_RETURN_IF_ERROR(parse_term(op, term, length, &terms[i]));
    int own = ndims[i] - terms[i].count;
    ellipsis_ndim = terms[i].ellipsis_at >= 0 && own > ellipsis_ndim ? own : ellipsis_ndim;
    term = comma ? comma + 1 : term + length;
  }
  out_plan->num_inputs = num_inputs;
  int occurrences[KILN_EINSUM_MAX_LABELS] = {0};
  for (int i = 0; i < num_inputs; ++i) {
    out_plan->ndim[i] = ndims[i];
    KILN_RETURN_IF_ERROR(
        label_input(op, &terms[i], i, ndims[i], shapes[i], ellipsis_ndim, out_plan));
    for (int k = 0; k < terms[i].count; ++k) {
      occurrences[terms[i].letters[k]]++;
    }
  }
  KILN_RETURN_IF_ERROR(label_output(op, rhs, ellipsis_ndim, occurrences, out_plan));
  finish_plan(out_plan, shapes);
  return KILN_OK;
}

/* ---- type relation ---- */

static kiln_status_t einsum_plan_of_inputs(const kiln_op_t *op, const void *attrs,
                                           const kiln_tinputs_t *inputs,
                                           kiln_einsum_plan_t *out_plan) {
  if (inputs->count > KILN_EINSUM_MAX_INPUTS) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %d inputs; kiln takes at most %d", op->name,
                       inputs->count, KILN_EINSUM_MAX_INPUTS);
  }
  int ndims[KILN_EINSUM_MAX_INPUTS];
  const int64_t *shapes[KILN_EINSUM_MAX_INPUTS];
  kiln_tensor_type_t first = kiln_tinputs_get(inputs, 0);
  for (int i = 0; i < inputs->count; ++i) {
    kiln_tensor_type_t type = kiln_tinputs_get(inputs, i);
    if (type.dtype != first.dtype) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d is %s but input 0 is %s", op->name, i,
                         kiln_dtype_name(type.dtype), kiln_dtype_name(first.dtype));
    }
    ndims[i] = type.ndim;
    shapes[i] = type.shape;
  }
  const kiln_einsum_attrs_t *a = attrs;
  return kiln_einsum_plan_of(op, a->equation, inputs->count, ndims, shapes, out_plan);
}

static kiln_status_t einsum_rule(const kiln_op_t *op, const void *attrs,
                                 const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  kiln_einsum_plan_t plan;
  KILN_RETURN_IF_ERROR(einsum_plan_of_inputs(op, attrs, inputs, &plan));
  out_shape->dtype = kiln_tinputs_get(inputs, 0).dtype;
  out_shape->ndim = plan.out_ndim;
  for (int d = 0; d < plan.out_ndim; ++d) {
    out_shape->dims[d] = plan.extent[plan.out_labels[d]];
  }
  return KILN_OK;
}

static kiln_status_t einsum_infer_type(const kiln_type_relation_t *relation,
                                       const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, einsum_rule, out_type);
}

/* ---- the reference kernel ---- */

static double load(const kiln_tensor_t *tensor, int64_t offset) {
  const void *data = kiln_tensor_data(tensor);
  return kiln_tensor_dtype(tensor) == KILN_DTYPE_FLOAT64 ? ((const double *)data)[offset]
                                                         : ((const float *)data)[offset];
}

/* The product of the inputs' elements at the labels' indices `at`. */
static double product(const kiln_einsum_plan_t *plan, const kiln_kernel_args_t *args,
                      const int64_t *at) {
  double value = 1.0;
  for (int i = 0; i < plan->num_inputs; ++i) {
    const int64_t *shape = kiln_tensor_shape(args->inputs[i]);
    int64_t offset = 0;
    for (int d = 0; d < plan->ndim[i]; ++d) {
      offset = offset * shape[d] + (plan->broadcast[i][d] ? 0 : at[plan->labels[i][d]]);
    }
    value *= load(args->inputs[i], offset);
  }
  return value;
}

/* The sum over every combination of the summed labels (at holds the
 * output's labels already). */
static double sum_over(const kiln_einsum_plan_t *plan, const kiln_kernel_args_t *args,
                       int64_t *at) {
  double sum = 0.0;
  for (int s = 0; s < plan->num_summed; ++s) {
    if (plan->extent[plan->summed[s]] == 0) {
      return 0.0;
    }
    at[plan->summed[s]] = 0;
  }
  for (;;) {
    sum += product(plan, args, at);
    int s = plan->num_summed - 1;
    for (; s >= 0; --s) {
      int label = plan->summed[s];
      if (++at[label] < plan->extent[label]) {
        break;
      }
      at[label] = 0;
    }
    if (s < 0) {
      return sum;
    }
  }
}

static kiln_status_t einsum_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, einsum_rule, &inputs));
  kiln_dtype_t dtype = kiln_tinputs_get(&inputs, 0).dtype;
  if (dtype != KILN_DTYPE_FLOAT32 && dtype != KILN_DTYPE_FLOAT64) {
    return kiln_transform_unsupported_dtype(args->op, dtype, "float32 and float64");
  }
  kiln_einsum_plan_t plan;
  KILN_RETURN_IF_ERROR(einsum_plan_of_inputs(args->op, args->attrs, &inputs, &plan));
  int64_t at[KILN_EINSUM_MAX_LABELS] = {0};
  kiln_walk_t walk;
  int64_t count = kiln_walk_begin(&walk, plan.out_ndim, kiln_tensor_shape(args->outputs[0]));
  void *out = kiln_tensor_data(args->outputs[0]);
  for (int64_t e = 0; e < count; ++e, kiln_walk_next(&walk)) {
    for (int d = 0; d < plan.out_ndim; ++d) {
      at[plan.out_labels[d]] = walk.index[d];
    }
    double value = sum_over(&plan, args, at);
    if (dtype == KILN_DTYPE_FLOAT64) {
      ((double *)out)[e] = value;
    } else {
      ((float *)out)[e] = (float)value;
    }
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_einsum = {
    .name = "einsum",
    .id = KILN_OP_EINSUM,
    .min_inputs = 1,
    .max_inputs = KILN_EINSUM_MAX_INPUTS,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_einsum_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_einsum_fields) / sizeof(kiln_einsum_fields[0])),
    .attr_fields = kiln_einsum_fields,
    .infer_type = einsum_infer_type,
    .correct_layout = kiln_layout_unknown_output,
};

const kiln_op_impl_t kiln_op_einsum_impl = {
    .reference = einsum_reference,
    .compute = kiln_compute_einsum,
};
