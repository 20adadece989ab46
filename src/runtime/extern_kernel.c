/*
 * The runtime's extern kernels (extern_kernel.h), with ONNX's semantics:
 *
 * - nonzero (ONNX NonZero): the (rank, count) int64 coordinates of the
 *   nonzero elements, row-major;
 * - unique (ONNX Unique; attrs sorted, by_axis, axis): the unique elements,
 *   or slices along an axis, with the index of each one's first
 *   occurrence, each position's unique index and each unique's count;
 *   sorted or in order of first occurrence; NaN is one value, after every
 *   number, as NumPy's unique. The slices are scanned in order, keeping each
 *   new one (a quadratic scan: the obvious way), then, when sorted, the
 *   uniques are ordered by an insertion sort, stable, and the inverse
 *   renumbered;
 * - vision.non_max_suppression (ONNX NonMaxSuppression; attr
 *   center_point_box): per batch and class, the boxes scoring above
 *   score_threshold taken by score, descending, ties by index, each kept
 *   unless its IoU with a box already kept is above iou_threshold, at most
 *   max_output_boxes_per_class; the (count, 3) int64 rows (batch, class,
 *   box). Its optional scalar inputs are empty tensors when absent.
 *
 * Values are compared as doubles (every dtype's values are exact in a
 * double but int64 beyond 2^53). Each kernel's shapes and fill run the same
 * scan (the count needs it all); fill checks that its outputs hold what the
 * scan found.
 */
#include "runtime/extern_kernel.h"

#include <stdbool.h>
#include <string.h>

#include "runtime/resize_rule.h"

static double element(const kiln_tensor_t *t, int64_t i) {
  return kiln_tensor_element_as_double(t, i);
}

static kiln_extern_shape_t int64_matrix(int64_t rows, int64_t columns) {
  return (kiln_extern_shape_t){KILN_DTYPE_INT64, 2, {rows, columns}};
}

/* ---- nonzero ---- */

static kiln_status_t nonzero_check(const kiln_extern_args_t *args) {
  if (kiln_tensor_ndim(args->inputs[0]) == 0) {
    return KILN_STATUS(UNIMPLEMENTED, "nonzero: a scalar input is not supported");
  }
  return KILN_OK;
}

static kiln_status_t nonzero_shapes(const kiln_extern_args_t *args,
                                    kiln_extern_shape_t *out_shapes) {
  KILN_RETURN_IF_ERROR(nonzero_check(args));
  const kiln_tensor_t *data = args->inputs[0];
  int64_t count = 0;
  for (int64_t i = 0; i < kiln_tensor_element_count(data); ++i) {
    count += element(data, i) != 0.0;
  }
  out_shapes[0] = int64_matrix(kiln_tensor_ndim(data), count);
  return KILN_OK;
}

static kiln_status_t nonzero_fill(const kiln_extern_args_t *args, kiln_tensor_t *const *outputs) {
  KILN_RETURN_IF_ERROR(nonzero_check(args));
  const kiln_tensor_t *data = args->inputs[0];
  int rank = kiln_tensor_ndim(data);
  const int64_t *shape = kiln_tensor_shape(data);
  int64_t count = kiln_tensor_shape(outputs[0])[1], column = 0;
  int64_t *out = kiln_tensor_data(outputs[0]);
  for (int64_t i = 0; i < kiln_tensor_element_count(data); ++i) {
    if (element(data, i) == 0.0) {
      continue;
    }
    if (column == count) {
      return KILN_STATUS(INTERNAL, "nonzero: the output holds %lld positions, the data has more",
                         (long long)count);
    }
    int64_t rest = i;
    for (int d = rank - 1; d >= 0; --d) {
      out[d * count + column] = rest % shape[d];
      rest /= shape[d];
    }
    ++column;
  }
  return column == count
             ? KILN_OK
             : KILN_STATUS(INTERNAL, "nonzero: the output holds %lld positions, not %lld",
                           (long long)count, (long long)column);
}

/* ---- unique ---- */

enum { UNIQUE_SORTED, UNIQUE_BY_AXIS, UNIQUE_AXIS };

/* The data seen as (outer, count, inner) around the axis; slice a is the
 * elements [o][a][i] in (o, i) order. */
typedef struct unique_scan_t {
  const kiln_tensor_t *x;
  int axis;
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
      double va = element(u->x, (o * u->count + a) * u->inner + i);
      double vb = element(u->x, (o * u->count + b) * u->inner + i);
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

/* outer, count, inner and the axis of the data for these attrs (the axis
 * checked). */
static kiln_status_t unique_layout(const int64_t *attrs, const kiln_tensor_t *x, unique_scan_t *u) {
  int rank = kiln_tensor_ndim(x);
  const int64_t *shape = kiln_tensor_shape(x);
  u->outer = u->inner = u->count = 1;
  if (!attrs[UNIQUE_BY_AXIS]) {
    u->count = kiln_tensor_element_count(x);
    return KILN_OK;
  }
  int64_t axis = attrs[UNIQUE_AXIS];
  if (axis < -rank || axis >= rank) {
    return KILN_STATUS(INVALID_ARGUMENT, "unique: axis %lld is out of range for rank %d",
                       (long long)axis, rank);
  }
  u->axis = (int)(axis < 0 ? axis + rank : axis);
  for (int d = 0; d < rank; ++d) {
    u->outer *= d < u->axis ? shape[d] : 1;
    u->count *= d == u->axis ? shape[d] : 1;
    u->inner *= d > u->axis ? shape[d] : 1;
  }
  return KILN_OK;
}

/* Runs the scan of the data into memory it allocates (*out_memory, for
 * the caller to free). */
static kiln_status_t unique_run(const kiln_extern_args_t *args, unique_scan_t *u,
                                int64_t **out_memory) {
  memset(u, 0, sizeof(*u));
  u->x = args->inputs[0];
  KILN_RETURN_IF_ERROR(unique_layout(args->attrs, u->x, u));
  size_t slots = (size_t)(u->count > 0 ? u->count : 1);
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(kiln_allocator_system(), 4 * slots,
                                                   sizeof(int64_t), (void **)out_memory));
  u->first = *out_memory;
  u->inverse = u->first + slots;
  u->counts = u->first + 2 * slots;
  u->rank = u->first + 3 * slots;
  unique_find(u);
  if (args->attrs[UNIQUE_SORTED]) {
    unique_sort(u);
  }
  return KILN_OK;
}

static kiln_extern_shape_t int64_vector(int64_t length) {
  return (kiln_extern_shape_t){KILN_DTYPE_INT64, 1, {length}};
}

static kiln_status_t unique_shapes(const kiln_extern_args_t *args,
                                   kiln_extern_shape_t *out_shapes) {
  unique_scan_t u;
  int64_t *memory = NULL;
  KILN_RETURN_IF_ERROR(unique_run(args, &u, &memory));
  kiln_allocator_free(kiln_allocator_system(), memory);
  kiln_extern_shape_t *y = &out_shapes[0];
  y->dtype = kiln_tensor_dtype(u.x);
  y->ndim = args->attrs[UNIQUE_BY_AXIS] ? kiln_tensor_ndim(u.x) : 1;
  if (y->ndim > 0 && args->attrs[UNIQUE_BY_AXIS]) {
    memcpy(y->shape, kiln_tensor_shape(u.x), sizeof(int64_t) * (size_t)y->ndim);
  }
  y->shape[u.axis] = u.unique;
  out_shapes[1] = int64_vector(u.unique);
  out_shapes[2] = int64_vector(u.count);
  out_shapes[3] = int64_vector(u.unique);
  return KILN_OK;
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

static kiln_status_t unique_fill(const kiln_extern_args_t *args, kiln_tensor_t *const *outputs) {
  unique_scan_t u;
  int64_t *memory = NULL;
  KILN_RETURN_IF_ERROR(unique_run(args, &u, &memory));
  if (kiln_tensor_shape(outputs[1])[0] != u.unique) {
    kiln_allocator_free(kiln_allocator_system(), memory);
    return KILN_STATUS(INTERNAL, "unique: the outputs hold %lld uniques, not %lld",
                       (long long)kiln_tensor_shape(outputs[1])[0], (long long)u.unique);
  }
  unique_values(&u, outputs[0]);
  unique_copy(outputs[1], u.first, u.unique);
  unique_copy(outputs[2], u.inverse, u.count);
  unique_copy(outputs[3], u.counts, u.unique);
  kiln_allocator_free(kiln_allocator_system(), memory);
  return KILN_OK;
}

/* ---- vision.non_max_suppression ---- */

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
    v[k] = element(plan->boxes, (batch * plan->count + box) * 4 + k);
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
    double s = element(plan->scores, (batch * plan->classes + cls) * plan->count + i);
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
  *out_value = element(inputs[index], 0);
  return true;
}

/* The boxes (batches, boxes, 4) and scores (batches, classes, boxes). */
static kiln_status_t nms_check(kiln_tensor_t *const *inputs) {
  const kiln_tensor_t *boxes = inputs[NMS_BOXES], *scores = inputs[NMS_SCORES];
  const int64_t *b = kiln_tensor_shape(boxes), *s = kiln_tensor_shape(scores);
  if (kiln_tensor_ndim(boxes) != 3 || kiln_tensor_ndim(scores) != 3 || b[2] != 4 || b[0] != s[0] ||
      b[1] != s[2]) {
    char bt[KILN_SHAPE_TEXT_CAPACITY], st[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(kiln_tensor_ndim(boxes), b, bt, sizeof(bt));
    kiln_shape_format(kiln_tensor_ndim(scores), s, st, sizeof(st));
    return KILN_STATUS(INVALID_ARGUMENT,
                       "vision.non_max_suppression: boxes %s and scores %s; expected (batches, "
                       "boxes, 4) and (batches, classes, boxes)",
                       bt, st);
  }
  return KILN_OK;
}

static kiln_status_t nms_plan(const kiln_extern_args_t *args, nms_plan_t *out_plan) {
  kiln_tensor_t *const *inputs = args->inputs;
  KILN_RETURN_IF_ERROR(nms_check(inputs));
  const int64_t *scores = kiln_tensor_shape(inputs[NMS_SCORES]);
  double max_output = 0.0;
  *out_plan = (nms_plan_t){.boxes = inputs[NMS_BOXES],
                           .scores = inputs[NMS_SCORES],
                           .batches = scores[0],
                           .classes = scores[1],
                           .count = scores[2],
                           .center = args->attrs[0] != 0};
  nms_value(inputs, NMS_MAX_OUTPUT, &max_output);
  out_plan->max_output = max_output > 0.0 ? (int64_t)max_output : 0;
  nms_value(inputs, NMS_IOU, &out_plan->iou_threshold);
  out_plan->has_score_threshold = nms_value(inputs, NMS_SCORE, &out_plan->score_threshold);
  return KILN_OK;
}

/* Runs the selection of these inputs; rows as nms_select. */
static kiln_status_t nms_run(const kiln_extern_args_t *args, int64_t *rows, int64_t *out_count) {
  nms_plan_t plan;
  KILN_RETURN_IF_ERROR(nms_plan(args, &plan));
  int64_t *scratch = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(kiln_allocator_system(),
                                                   3 * (size_t)(plan.count > 0 ? plan.count : 1),
                                                   sizeof(int64_t), (void **)&scratch));
  *out_count = nms_select(&plan, rows, scratch);
  kiln_allocator_free(kiln_allocator_system(), scratch);
  return KILN_OK;
}

static kiln_status_t nms_shapes(const kiln_extern_args_t *args, kiln_extern_shape_t *out_shapes) {
  int64_t count = 0;
  KILN_RETURN_IF_ERROR(nms_run(args, NULL, &count));
  out_shapes[0] = int64_matrix(count, 3);
  return KILN_OK;
}

static kiln_status_t nms_fill(const kiln_extern_args_t *args, kiln_tensor_t *const *outputs) {
  int64_t count = 0;
  KILN_RETURN_IF_ERROR(nms_run(args, NULL, &count));
  if (count != kiln_tensor_shape(outputs[0])[0]) {
    return KILN_STATUS(INTERNAL,
                       "vision.non_max_suppression: %lld boxes selected for an output of %lld",
                       (long long)count, (long long)kiln_tensor_shape(outputs[0])[0]);
  }
  return nms_run(args, kiln_tensor_data(outputs[0]), &count);
}

/* ---- the table ---- */

static const kiln_extern_kernel_t kernels[] = {
    {"nonzero", 1, 1, 1, 0, nonzero_shapes, nonzero_fill},
    {"unique", 1, 1, 4, 3, unique_shapes, unique_fill},
    {"vision.non_max_suppression", 5, 5, 1, 1, nms_shapes, nms_fill},
    {"stft", 3, 4, 1, 1, kiln_extern_stft_shapes, kiln_extern_stft_fill},
    {"mel_weight_matrix", 5, 5, 1, 1, kiln_extern_mel_shapes, kiln_extern_mel_fill},
    {"dyn.resize", 4, 4, 1, KILN_RESIZE_RULE_ATTRS, kiln_extern_resize_shapes,
     kiln_extern_resize_fill},
    {"dyn.split", 2, 2, -1, 1, kiln_extern_split_shapes, kiln_extern_split_fill},
};

int kiln_extern_kernel_count(void) {
  return (int)(sizeof(kernels) / sizeof(kernels[0]));
}

int kiln_extern_kernel_find(const char *name) {
  for (int i = 0; i < kiln_extern_kernel_count(); ++i) {
    if (strcmp(kernels[i].name, name) == 0) {
      return i;
    }
  }
  return -1;
}

const kiln_extern_kernel_t *kiln_extern_kernel_at(int index) {
  return &kernels[index];
}

/* The call's input and output counts against the kernel's. */
static kiln_status_t check_inputs(const kiln_extern_kernel_t *k, const kiln_extern_args_t *args) {
  if (args->num_inputs < k->min_inputs || args->num_inputs > k->max_inputs) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %d inputs, expected %d to %d", k->name,
                       args->num_inputs, k->min_inputs, k->max_inputs);
  }
  bool any = k->num_outputs < 0;
  if (any ? args->num_outputs < 1 || args->num_outputs > KILN_EXTERN_MAX_OUTPUTS
          : args->num_outputs != k->num_outputs) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %d outputs, expected %d", k->name, args->num_outputs,
                       any ? KILN_EXTERN_MAX_OUTPUTS : k->num_outputs);
  }
  return KILN_OK;
}

kiln_status_t kiln_extern_kernel_shapes(int index, const kiln_extern_args_t *args,
                                        kiln_extern_shape_t *out_shapes) {
  const kiln_extern_kernel_t *k = kiln_extern_kernel_at(index);
  KILN_RETURN_IF_ERROR(check_inputs(k, args));
  return k->shapes(args, out_shapes);
}

kiln_status_t kiln_extern_kernel_fill(int index, const kiln_extern_args_t *args,
                                      kiln_tensor_t *const *outputs) {
  const kiln_extern_kernel_t *k = kiln_extern_kernel_at(index);
  KILN_RETURN_IF_ERROR(check_inputs(k, args));
  return k->fill(args, outputs);
}
