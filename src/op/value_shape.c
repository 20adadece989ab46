/*
 * Operators whose output shape depends on the input's values, with ONNX's
 * semantics: nonzero (ONNX NonZero: the (rank, count) int64 coordinates of
 * the nonzero elements, row-major) and unique (ONNX Unique: the unique
 * elements, or slices along an axis, with the index of each one's first
 * occurrence, each position's unique index and each unique's count; sorted
 * or in order of first occurrence; NaN is one value, after every number,
 * as NumPy's unique), and vision.non_max_suppression (ONNX
 * NonMaxSuppression: per batch and class, the boxes scoring above
 * score_threshold taken by score, descending, ties by index, each kept
 * unless its IoU with a box already kept is above iou_threshold, at most
 * max_output_boxes_per_class; the (count, 3) int64 rows (batch, class,
 * box). Its optional scalar inputs are empty tensors when absent).
 *
 * At import the counts are anonymous symbolic dims ("?"), everything else
 * static; the shape function (op.h) counts on the values, so the reference
 * interpreter allocates the outputs, and the ONNX importer folds a call on
 * Constants through it. The reference kernels compare values as doubles
 * (every dtype's values are exact in a double but int64 beyond 2^53). The
 * graph compiler refuses all three (kiln_dyn_compute_refuse): their output
 * sizes are known only once the data is.
 *
 * unique scans the slices in order, keeping each new one (a quadratic scan,
 * as the reference kernels favour the obvious), then, when sorted, orders
 * the uniques by an insertion sort, stable, and renumbers the inverse.
 */
#include <string.h>

#include "op/dyn.h"
#include "op/scalar.h"

/* ---- shared ---- */

/* A tensor type of `rank` dims, static from `shape` except where `shape`
 * holds -1 (an anonymous symbolic dim). */
static kiln_status_t value_shape_type(kiln_arena_t *arena, kiln_dtype_t dtype, int rank,
                                      const int64_t *shape, const kiln_type_t **out_type) {
  const kiln_dim_var_t *vars[KILN_MAX_RANK] = {NULL};
  for (int d = 0; d < rank; ++d) {
    if (shape[d] < 0) {
      KILN_RETURN_IF_ERROR(kiln_dim_var_create(arena, "", -1, &vars[d]));
    }
  }
  return kiln_tensor_type_create_symbolic(arena, dtype, rank, shape, vars, out_type);
}

static double value_shape_element(const kiln_tensor_t *t, int64_t i) {
  kiln_scalar_kind_t kind = kiln_scalar_kind(kiln_tensor_dtype(t));
  return kiln_scalar_to_double(kiln_scalar_load(kind, kiln_tensor_data(t), i));
}

static kiln_status_t value_shape_check_data(const kiln_type_relation_t *relation,
                                            const kiln_tensor_type_t **out_data) {
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, out_data));
  if (kiln_scalar_kind((*out_data)->dtype) == KILN_SCALAR_KIND_NONE) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the data is %s; expected numbers or booleans",
                       relation->op->name, kiln_dtype_name((*out_data)->dtype));
  }
  return KILN_OK;
}

/* ---- nonzero ---- */

static int64_t nonzero_count(const kiln_tensor_t *data) {
  int64_t count = 0;
  for (int64_t i = 0; i < kiln_tensor_element_count(data); ++i) {
    count += value_shape_element(data, i) != 0.0;
  }
  return count;
}

static kiln_status_t nonzero_infer(const kiln_type_relation_t *relation,
                                   const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(value_shape_check_data(relation, &data));
  if (data->ndim == 0) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: a scalar input is not supported", relation->op->name);
  }
  const int64_t shape[2] = {data->ndim, -1};
  return value_shape_type(relation->arena, KILN_DTYPE_INT64, 2, shape, out_type);
}

static kiln_status_t nonzero_shape_func(const kiln_shape_func_args_t *args,
                                        const kiln_type_t **out_type) {
  const kiln_tensor_t *data = args->inputs[0];
  const int64_t shape[2] = {kiln_tensor_ndim(data), nonzero_count(data)};
  return kiln_tensor_type_create(args->arena, KILN_DTYPE_INT64, 2, shape, out_type);
}

static kiln_status_t nonzero_reference(const kiln_kernel_args_t *args) {
  const kiln_tensor_t *data = args->inputs[0];
  int rank = kiln_tensor_ndim(data);
  const int64_t *shape = kiln_tensor_shape(data);
  int64_t count = kiln_tensor_shape(args->outputs[0])[1], column = 0;
  int64_t *out = kiln_tensor_data(args->outputs[0]);
  for (int64_t i = 0; i < kiln_tensor_element_count(data) && column < count; ++i) {
    if (value_shape_element(data, i) == 0.0) {
      continue;
    }
    int64_t rest = i;
    for (int d = rank - 1; d >= 0; --d) {
      out[d * count + column] = rest % shape[d];
      rest /= shape[d];
    }
    ++column;
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_nonzero = {
    .name = "nonzero",
    .id = KILN_OP_NONZERO,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .infer_type = nonzero_infer,
    .reference = nonzero_reference,
    .compute = kiln_dyn_compute_refuse,
    .shape_func = nonzero_shape_func,
    .symbolic_relation = true,
};

/* ---- unique ---- */

typedef struct kiln_unique_attrs_t {
  bool sorted;
  bool by_axis; /* false: the flattened data */
  int64_t axis;
} kiln_unique_attrs_t;

/* The data seen as (outer, count, inner) around the axis; slice a is the
 * elements [o][a][i] in (o, i) order. */
typedef struct unique_scan_t {
  const kiln_tensor_t *x;
  int64_t outer, count, inner;
  int64_t *first;   /* per unique slice: the position of its first occurrence */
  int64_t *inverse; /* per position: its unique slice */
  int64_t *counts;  /* per unique slice */
  int64_t *rank;    /* scratch for the renumbering */
  int64_t unique;
} unique_scan_t;

/* -1, 0, 1 as slice a orders before, with or after slice b. */
static int unique_compare(const unique_scan_t *u, int64_t a, int64_t b) {
  for (int64_t o = 0; o < u->outer; ++o) {
    for (int64_t i = 0; i < u->inner; ++i) {
      double va = value_shape_element(u->x, (o * u->count + a) * u->inner + i);
      double vb = value_shape_element(u->x, (o * u->count + b) * u->inner + i);
      bool na = va != va, nb = vb != vb;
      if (na != nb) {
        return na ? 1 : -1;
      }
      if (!na && va != vb) {
        return va < vb ? -1 : 1;
      }
    }
  }
  return 0;
}

/* first, inverse and counts in order of first occurrence. */
static void unique_find(unique_scan_t *u) {
  u->unique = 0;
  for (int64_t a = 0; a < u->count; ++a) {
    int64_t k = 0;
    while (k < u->unique && unique_compare(u, u->first[k], a) != 0) {
      ++k;
    }
    if (k == u->unique) {
      u->first[u->unique] = a;
      u->counts[u->unique++] = 0;
    }
    u->inverse[a] = k;
    ++u->counts[k];
  }
}

/* Sorts the unique slices (insertion sort, stable) and renumbers inverse. */
static void unique_sort(unique_scan_t *u) {
  for (int64_t k = 1; k < u->unique; ++k) {
    int64_t first = u->first[k], counts = u->counts[k], j = k;
    while (j > 0 && unique_compare(u, u->first[j - 1], first) > 0) {
      u->first[j] = u->first[j - 1];
      u->counts[j] = u->counts[j - 1];
      --j;
    }
    u->first[j] = first;
    u->counts[j] = counts;
  }
  for (int64_t k = 0; k < u->unique; ++k) {
    u->rank[u->inverse[u->first[k]]] = k;
  }
  for (int64_t a = 0; a < u->count; ++a) {
    u->inverse[a] = u->rank[u->inverse[a]];
  }
}

/* outer, count and inner of the data for these attrs (the axis checked). */
static kiln_status_t unique_layout(const kiln_op_t *op, const kiln_unique_attrs_t *attrs, int rank,
                                   const int64_t *shape, int64_t *out_outer, int64_t *out_count,
                                   int64_t *out_inner, int *out_axis) {
  *out_outer = *out_inner = *out_count = 1;
  *out_axis = 0;
  if (!attrs->by_axis) {
    for (int d = 0; d < rank; ++d) {
      *out_count *= shape[d];
    }
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(op, attrs->axis, rank, out_axis));
  for (int d = 0; d < rank; ++d) {
    *out_outer *= d < *out_axis ? shape[d] : 1;
    *out_count *= d == *out_axis ? shape[d] : 1;
    *out_inner *= d > *out_axis ? shape[d] : 1;
  }
  return KILN_OK;
}

/* Runs the scan of `data` into memory it allocates (*out_memory, for the
 * caller to free). */
static kiln_status_t unique_run(const kiln_op_t *op, const kiln_unique_attrs_t *attrs,
                                const kiln_tensor_t *data, unique_scan_t *u, int *out_axis,
                                int64_t **out_memory) {
  memset(u, 0, sizeof(*u));
  u->x = data;
  KILN_RETURN_IF_ERROR(unique_layout(op, attrs, kiln_tensor_ndim(data), kiln_tensor_shape(data),
                                     &u->outer, &u->count, &u->inner, out_axis));
  size_t slots = (size_t)(u->count > 0 ? u->count : 1);
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(kiln_allocator_system(), 4 * slots,
                                                   sizeof(int64_t), (void **)out_memory));
  u->first = *out_memory;
  u->inverse = u->first + slots;
  u->counts = u->first + 2 * slots;
  u->rank = u->first + 3 * slots;
  unique_find(u);
  if (attrs->sorted) {
    unique_sort(u);
  }
  return KILN_OK;
}

/* (Y, indices, inverse_indices, counts) with `unique` uniques (-1: "?")
 * for data of `rank` and `shape` (possibly symbolic: -1 dims). */
static kiln_status_t unique_type(kiln_arena_t *arena, const kiln_unique_attrs_t *attrs,
                                 kiln_dtype_t dtype, int rank, const int64_t *shape, int axis,
                                 int64_t count, int64_t unique, const kiln_type_t **out_type) {
  int64_t y_shape[KILN_MAX_RANK];
  int y_rank = attrs->by_axis ? rank : 1;
  if (rank > 0) { /* a scalar's shape array may be NULL */
    memcpy(y_shape, shape, sizeof(int64_t) * (size_t)rank);
  }
  y_shape[attrs->by_axis ? axis : 0] = unique;
  const kiln_type_t *fields[4];
  KILN_RETURN_IF_ERROR(value_shape_type(arena, dtype, y_rank, y_shape, &fields[0]));
  KILN_RETURN_IF_ERROR(value_shape_type(arena, KILN_DTYPE_INT64, 1, &unique, &fields[1]));
  KILN_RETURN_IF_ERROR(value_shape_type(arena, KILN_DTYPE_INT64, 1, &count, &fields[2]));
  KILN_RETURN_IF_ERROR(value_shape_type(arena, KILN_DTYPE_INT64, 1, &unique, &fields[3]));
  return kiln_tuple_type_create(arena, 4, fields, out_type);
}

static kiln_status_t unique_infer(const kiln_type_relation_t *relation,
                                  const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(value_shape_check_data(relation, &data));
  const kiln_unique_attrs_t *attrs = relation->attrs;
  int64_t outer = 0, count = 0, inner = 0;
  int axis = 0;
  KILN_RETURN_IF_ERROR(
      unique_layout(relation->op, attrs, data->ndim, data->shape, &outer, &count, &inner, &axis));
  bool known =
      kiln_tensor_type_is_static(data) || (attrs->by_axis && !(data->vars && data->vars[axis]));
  return unique_type(relation->arena, attrs, data->dtype, data->ndim, data->shape, axis,
                     known ? count : -1, -1, out_type);
}

static kiln_status_t unique_shape_func(const kiln_shape_func_args_t *args,
                                       const kiln_type_t **out_type) {
  unique_scan_t u;
  int axis = 0;
  int64_t *memory = NULL;
  const kiln_tensor_t *data = args->inputs[0];
  kiln_status_t status = unique_run(args->op, args->attrs, data, &u, &axis, &memory);
  if (!status) {
    status = unique_type(args->arena, args->attrs, kiln_tensor_dtype(data), kiln_tensor_ndim(data),
                         kiln_tensor_shape(data), axis, u.count, u.unique, out_type);
  }
  kiln_allocator_free(kiln_allocator_system(), memory);
  return status;
}

/* Y: the unique slices in order. */
static void unique_values(const unique_scan_t *u, kiln_tensor_t *y) {
  size_t size = kiln_dtype_size(kiln_tensor_dtype(u->x)) * (size_t)u->inner;
  for (int64_t o = 0; o < u->outer; ++o) {
    for (int64_t k = 0; k < u->unique; ++k) {
      memcpy((char *)kiln_tensor_data(y) + (size_t)(o * u->unique + k) * size,
             (const char *)kiln_tensor_data(u->x) + (size_t)(o * u->count + u->first[k]) * size,
             size);
    }
  }
}

/* `count` int64 values into `out` (nothing when there are none). */
static void unique_copy(kiln_tensor_t *out, const int64_t *values, int64_t count) {
  if (count > 0) {
    memcpy(kiln_tensor_data(out), values, sizeof(int64_t) * (size_t)count);
  }
}

static kiln_status_t unique_reference(const kiln_kernel_args_t *args) {
  unique_scan_t u;
  int axis = 0;
  int64_t *memory = NULL;
  KILN_RETURN_IF_ERROR(unique_run(args->op, args->attrs, args->inputs[0], &u, &axis, &memory));
  if (kiln_tensor_shape(args->outputs[1])[0] != u.unique) {
    kiln_allocator_free(kiln_allocator_system(), memory);
    return KILN_STATUS(INTERNAL, "%s: the outputs hold %lld uniques, not %lld", args->op->name,
                       (long long)kiln_tensor_shape(args->outputs[1])[0], (long long)u.unique);
  }
  unique_values(&u, args->outputs[0]);
  unique_copy(args->outputs[1], u.first, u.unique);
  unique_copy(args->outputs[2], u.inverse, u.count);
  unique_copy(args->outputs[3], u.counts, u.unique);
  kiln_allocator_free(kiln_allocator_system(), memory);
  return KILN_OK;
}

static const kiln_attr_field_t unique_fields[] = {
    KILN_ATTR_FIELD(kiln_unique_attrs_t, sorted, BOOL, "True"),
    KILN_ATTR_FIELD(kiln_unique_attrs_t, by_axis, BOOL, "False"),
    KILN_ATTR_FIELD(kiln_unique_attrs_t, axis, INT, "0"),
};

const kiln_op_t kiln_op_unique = {
    .name = "unique",
    .id = KILN_OP_UNIQUE,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_unique_attrs_t),
    .num_attr_fields = (int)(sizeof(unique_fields) / sizeof(unique_fields[0])),
    .attr_fields = unique_fields,
    .infer_type = unique_infer,
    .reference = unique_reference,
    .compute = kiln_dyn_compute_refuse,
    .shape_func = unique_shape_func,
    .symbolic_relation = true,
};

/* ---- vision.non_max_suppression ---- */

typedef struct kiln_nms_attrs_t {
  bool center_point_box; /* boxes as (x_center, y_center, width, height), else two corners */
} kiln_nms_attrs_t;

enum { NMS_BOXES, NMS_SCORES, NMS_MAX_OUTPUT, NMS_IOU, NMS_SCORE };

typedef struct nms_plan_t {
  const kiln_tensor_t *boxes, *scores;
  int64_t batches, classes, count; /* count: boxes per batch */
  int64_t max_output;
  double iou_threshold, score_threshold;
  bool has_score_threshold, center;
} nms_plan_t;

/* A box as (y_min, x_min, y_max, x_max). */
static void nms_box(const nms_plan_t *plan, int64_t batch, int64_t box, double *out) {
  double v[4];
  for (int k = 0; k < 4; ++k) {
    v[k] = value_shape_element(plan->boxes, (batch * plan->count + box) * 4 + k);
  }
  if (plan->center) { /* x_center, y_center, width, height */
    out[0] = v[1] - v[3] / 2.0;
    out[1] = v[0] - v[2] / 2.0;
    out[2] = v[1] + v[3] / 2.0;
    out[3] = v[0] + v[2] / 2.0;
    return;
  }
  out[0] = v[0] < v[2] ? v[0] : v[2];
  out[1] = v[1] < v[3] ? v[1] : v[3];
  out[2] = v[0] < v[2] ? v[2] : v[0];
  out[3] = v[1] < v[3] ? v[3] : v[1];
}

/* Whether box b is suppressed by box a: IoU strictly above the threshold
 * (boxes without area never are). */
static bool nms_suppresses(const double *a, const double *b, double threshold) {
  double y0 = a[0] > b[0] ? a[0] : b[0], x0 = a[1] > b[1] ? a[1] : b[1];
  double y1 = a[2] < b[2] ? a[2] : b[2], x1 = a[3] < b[3] ? a[3] : b[3];
  if (y1 <= y0 || x1 <= x0) {
    return false;
  }
  double inter = (y1 - y0) * (x1 - x0);
  double area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
  double uni = area_a + area_b - inter;
  if (area_a <= 0.0 || area_b <= 0.0 || uni <= 0.0) {
    return false;
  }
  return inter / uni > threshold;
}

/* The candidates of (batch, class) above the score threshold, by score
 * descending, ties by index (an insertion sort); their count. */
static int64_t nms_candidates(const nms_plan_t *plan, int64_t batch, int64_t cls,
                              int64_t *candidates, double *scores) {
  int64_t n = 0;
  for (int64_t i = 0; i < plan->count; ++i) {
    double s = value_shape_element(plan->scores, (batch * plan->classes + cls) * plan->count + i);
    if (plan->has_score_threshold && !(s > plan->score_threshold)) {
      continue;
    }
    int64_t j = n++;
    while (j > 0 && scores[j - 1] < s) {
      candidates[j] = candidates[j - 1];
      scores[j] = scores[j - 1];
      --j;
    }
    candidates[j] = i;
    scores[j] = s;
  }
  return n;
}

/* Runs the selection; rows (batch, class, box) go to `rows` when not NULL.
 * `scratch` holds 3 * count int64/double slots. Returns the row count. */
static int64_t nms_select(const nms_plan_t *plan, int64_t *rows, int64_t *scratch) {
  int64_t total = 0, *candidates = scratch, *selected = scratch + plan->count;
  double *scores = (double *)(void *)(scratch + 2 * plan->count);
  for (int64_t b = 0; b < plan->batches; ++b) {
    for (int64_t c = 0; c < plan->classes; ++c) {
      int64_t n = nms_candidates(plan, b, c, candidates, scores), kept = 0;
      for (int64_t k = 0; k < n && kept < plan->max_output; ++k) {
        double box[4], other[4];
        bool suppressed = false;
        nms_box(plan, b, candidates[k], box);
        for (int64_t s = 0; s < kept && !suppressed; ++s) {
          nms_box(plan, b, selected[s], other);
          suppressed = nms_suppresses(other, box, plan->iou_threshold);
        }
        if (!suppressed) {
          selected[kept++] = candidates[k];
        }
      }
      for (int64_t s = 0; s < kept; ++s, ++total) {
        if (rows) {
          rows[total * 3] = b;
          rows[total * 3 + 1] = c;
          rows[total * 3 + 2] = selected[s];
        }
      }
    }
  }
  return total;
}

/* One optional value of input `index` (an empty tensor: absent). */
static bool nms_value(kiln_tensor_t *const *inputs, int index, double *out_value) {
  if (kiln_tensor_element_count(inputs[index]) == 0) {
    return false;
  }
  *out_value = value_shape_element(inputs[index], 0);
  return true;
}

static void nms_plan(const kiln_nms_attrs_t *attrs, kiln_tensor_t *const *inputs,
                     nms_plan_t *out_plan) {
  const int64_t *scores = kiln_tensor_shape(inputs[NMS_SCORES]);
  double max_output = 0.0;
  *out_plan = (nms_plan_t){.boxes = inputs[NMS_BOXES],
                           .scores = inputs[NMS_SCORES],
                           .batches = scores[0],
                           .classes = scores[1],
                           .count = scores[2],
                           .center = attrs->center_point_box};
  nms_value(inputs, NMS_MAX_OUTPUT, &max_output);
  out_plan->max_output = max_output > 0.0 ? (int64_t)max_output : 0;
  nms_value(inputs, NMS_IOU, &out_plan->iou_threshold);
  out_plan->has_score_threshold = nms_value(inputs, NMS_SCORE, &out_plan->score_threshold);
}

/* Runs the selection of these inputs; rows as nms_select. */
static kiln_status_t nms_run(const kiln_op_t *op, const void *attrs, kiln_tensor_t *const *inputs,
                             int64_t *rows, int64_t *out_count) {
  nms_plan_t plan;
  nms_plan(attrs, inputs, &plan);
  if (kiln_tensor_shape(plan.boxes)[0] != plan.batches ||
      kiln_tensor_shape(plan.boxes)[1] != plan.count) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: boxes hold %lld batches of %lld boxes, scores %lld of %lld", op->name,
                       (long long)kiln_tensor_shape(plan.boxes)[0],
                       (long long)kiln_tensor_shape(plan.boxes)[1], (long long)plan.batches,
                       (long long)plan.count);
  }
  int64_t *scratch = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(kiln_allocator_system(),
                                                   3 * (size_t)(plan.count > 0 ? plan.count : 1),
                                                   sizeof(int64_t), (void **)&scratch));
  *out_count = nms_select(&plan, rows, scratch);
  kiln_allocator_free(kiln_allocator_system(), scratch);
  return KILN_OK;
}

/* Input `index` is a float (or, for max_output_boxes_per_class, integer)
 * tensor of at most one element. */
static kiln_status_t nms_check_value(const kiln_type_relation_t *relation, int index,
                                     const char *what, bool want_float) {
  const kiln_tensor_type_t *t = NULL;
  KILN_RETURN_IF_ERROR(kiln_dyn_check_list(relation, index, what, want_float));
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, index, &t));
  if (!kiln_tensor_type_is_static(t) || (t->ndim == 1 && t->shape[0] > 1)) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d (%s) is %s; expected one value or none",
                       relation->op->name, index, what, kiln_op_shape_text(t, shape));
  }
  return KILN_OK;
}

static kiln_status_t nms_infer(const kiln_type_relation_t *relation, const kiln_type_t **out_type) {
  const kiln_tensor_type_t *boxes = NULL, *scores = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, NMS_BOXES, &boxes));
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, NMS_SCORES, &scores));
  bool floats = kiln_scalar_class(boxes->dtype) == KILN_SCALAR_CLASS_FLOAT &&
                kiln_scalar_class(scores->dtype) == KILN_SCALAR_CLASS_FLOAT;
  bool fits = boxes->ndim == 3 && scores->ndim == 3 && boxes->shape[2] == 4 &&
              kiln_tensor_type_is_static(boxes) && kiln_tensor_type_is_static(scores) &&
              boxes->shape[0] == scores->shape[0] && boxes->shape[1] == scores->shape[2];
  if (!floats || !fits) {
    char b[KILN_SHAPE_TEXT_CAPACITY], s[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: boxes %s %s and scores %s %s; expected float (batches, boxes, 4) and "
                       "(batches, classes, boxes)",
                       relation->op->name, kiln_dtype_name(boxes->dtype),
                       kiln_op_shape_text(boxes, b), kiln_dtype_name(scores->dtype),
                       kiln_op_shape_text(scores, s));
  }
  KILN_RETURN_IF_ERROR(
      nms_check_value(relation, NMS_MAX_OUTPUT, "max_output_boxes_per_class", false));
  KILN_RETURN_IF_ERROR(nms_check_value(relation, NMS_IOU, "iou_threshold", true));
  KILN_RETURN_IF_ERROR(nms_check_value(relation, NMS_SCORE, "score_threshold", true));
  const int64_t shape[2] = {-1, 3};
  return value_shape_type(relation->arena, KILN_DTYPE_INT64, 2, shape, out_type);
}

static kiln_status_t nms_shape_func(const kiln_shape_func_args_t *args,
                                    const kiln_type_t **out_type) {
  int64_t count = 0;
  KILN_RETURN_IF_ERROR(nms_run(args->op, args->attrs, args->inputs, NULL, &count));
  const int64_t shape[2] = {count, 3};
  return kiln_tensor_type_create(args->arena, KILN_DTYPE_INT64, 2, shape, out_type);
}

static kiln_status_t nms_reference(const kiln_kernel_args_t *args) {
  int64_t count = 0, expected = kiln_tensor_shape(args->outputs[0])[0];
  int64_t *rows = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(kiln_allocator_system(),
                                                   3 * (size_t)(expected > 0 ? expected : 1),
                                                   sizeof(int64_t), (void **)&rows));
  kiln_status_t status = nms_run(args->op, args->attrs, args->inputs, NULL, &count);
  if (!status && count != expected) {
    status = KILN_STATUS(INTERNAL, "%s: %lld boxes selected for an output of %lld", args->op->name,
                         (long long)count, (long long)expected);
  }
  if (!status) {
    status = nms_run(args->op, args->attrs, args->inputs, rows, &count);
  }
  if (!status && count > 0) {
    memcpy(kiln_tensor_data(args->outputs[0]), rows, sizeof(int64_t) * 3 * (size_t)count);
  }
  kiln_allocator_free(kiln_allocator_system(), rows);
  return status;
}

static const kiln_attr_field_t nms_fields[] = {
    KILN_ATTR_FIELD(kiln_nms_attrs_t, center_point_box, BOOL, "False"),
};

const kiln_op_t kiln_op_non_max_suppression = {
    .name = "vision.non_max_suppression",
    .id = KILN_OP_NON_MAX_SUPPRESSION,
    .min_inputs = 5,
    .max_inputs = 5,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_nms_attrs_t),
    .num_attr_fields = (int)(sizeof(nms_fields) / sizeof(nms_fields[0])),
    .attr_fields = nms_fields,
    .infer_type = nms_infer,
    .reference = nms_reference,
    .compute = kiln_dyn_compute_refuse,
    .shape_func = nms_shape_func,
    .symbolic_relation = true,
};
