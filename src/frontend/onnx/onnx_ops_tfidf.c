/*
 * TfIdfVectorizer over integer input, expanded at import into registry
 * calls.
 *
 * The attributes describe a pool of n-grams: pool_int64s holds them back to
 * back, grouped by length (ngram_counts[i] is where the n-grams of length
 * i + 1 start), and the g-th n-gram of the pool (counted across every
 * group) is counted into output column ngram_indexes[g]. Only lengths in
 * [min_gram_length, max_gram_length] count. An n-gram of length k with skip
 * distance s (1 to max_skip_count + 1) occurs at start position p of a row
 * when x[p + t s] is its t-th item for every t < k; a unigram counts once per
 * position, whatever the skips. This is what ONNX's reference (the prefix
 * tree walk of onnx/reference/ops/op_tfidf_vectorizer.py) counts.
 *
 * The expansion, for X as (B, C) (a 1-D X is one row): for each length k
 * and skip s with room in the row (L = C - (k - 1) s > 0 start positions),
 * the t-th items of every window are the slice x[:, t s : t s + L], as (B,
 * L, 1); equal to the pool's t-th items (1, 1, J_k) and and-ed over t, it
 * says for every start and every n-gram of length k whether it occurs; its
 * sum over the starts is the count of each (B, J_k). The counts of all
 * lengths are concatenated in pool order (B, J) and a constant (J, size)
 * matrix with a 1 at (g, ngram_indexes[g]) moves them to their columns
 * (exact: small integers in float32). Then mode: TF the counts, IDF
 * weight where the count is positive, TFIDF weight times count (weights
 * default to 1). Everything runs on every path the registry's operators
 * do; the comparisons are made in int64 (X is cast), so a pool value
 * outside int32 never matches an int32 item by wrapping.
 *
 * String pools and string input are refused: kiln has no string tensors.
 */
#include <string.h>

#include "frontend/onnx/onnx_convert.h"

typedef struct kiln_onnx_tfidf_t {
  int64_t min_gram, max_gram, max_skip;
  const char *mode;
  kiln_ints_t counts;  /* ngram_counts */
  kiln_ints_t indexes; /* ngram_indexes */
  kiln_ints_t pool;    /* pool_int64s */
  kiln_floats_t weights;
  bool has_weights;
  int64_t size;   /* output columns: max(ngram_indexes) + 1 */
  int64_t ngrams; /* n-grams in the pool */
} kiln_onnx_tfidf_t;

/* The number of n-grams of length `length` (1-based group) and where they start. */
static void kiln_onnx_tfidf_group(const kiln_onnx_tfidf_t *t, int length, int64_t *out_start,
                                  int64_t *out_count) {
  int64_t start = t->counts.values[length - 1];
  int64_t end = length < t->counts.count ? t->counts.values[length] : t->pool.count;
  *out_start = start;
  *out_count = end > start ? (end - start) / length : 0;
}

static kiln_status_t kiln_onnx_tfidf_check_groups(kiln_onnx_tfidf_t *t) {
  t->ngrams = 0;
  for (int32_t i = 0; i < t->counts.count; ++i) {
    int64_t next = i + 1 < t->counts.count ? t->counts.values[i + 1] : t->pool.count;
    if (t->counts.values[i] < 0 || t->counts.values[i] > next || next > t->pool.count) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "ngram_counts[%d] is %lld; the starts must be ascending and within the "
                         "pool of %d items",
                         (int)i, (long long)t->counts.values[i], (int)t->pool.count);
    }
    int64_t start = 0, count = 0;
    kiln_onnx_tfidf_group(t, i + 1, &start, &count);
    t->ngrams += count;
  }
  if (t->indexes.count < t->ngrams) {
    return KILN_STATUS(INVALID_ARGUMENT, "ngram_indexes has %d values; the pool has %lld n-grams",
                       (int)t->indexes.count, (long long)t->ngrams);
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_tfidf_check(kiln_onnx_tfidf_t *t) {
  if (t->min_gram < 1 || t->max_gram < t->min_gram || t->max_skip < 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "min_gram_length %lld, max_gram_length %lld and max_skip_count %lld must "
                       "satisfy 1 <= min <= max and skip >= 0",
                       (long long)t->min_gram, (long long)t->max_gram, (long long)t->max_skip);
  }
  if (strcmp(t->mode, "TF") != 0 && strcmp(t->mode, "IDF") != 0 && strcmp(t->mode, "TFIDF") != 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute mode is \"%s\"; expected TF, IDF or TFIDF",
                       t->mode);
  }
  t->size = 0;
  for (int32_t i = 0; i < t->indexes.count; ++i) {
    if (t->indexes.values[i] < 0 || t->indexes.values[i] >= (int64_t)1 << 24) {
      return KILN_STATUS(INVALID_ARGUMENT, "ngram_indexes[%d] is %lld; expected 0 to 2^24 - 1",
                         (int)i, (long long)t->indexes.values[i]);
    }
    t->size = t->indexes.values[i] + 1 > t->size ? t->indexes.values[i] + 1 : t->size;
  }
  if (t->size == 0 || t->counts.count == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "ngram_counts and ngram_indexes must not be empty");
  }
  if (t->has_weights && t->weights.count < t->size) {
    return KILN_STATUS(INVALID_ARGUMENT, "weights has %d values; the output has %lld columns",
                       (int)t->weights.count, (long long)t->size);
  }
  return kiln_onnx_tfidf_check_groups(t);
}

static kiln_status_t kiln_onnx_tfidf_read(const kiln_onnx_node_t *node,
                                          kiln_onnx_tfidf_t *out_tfidf) {
  kiln_onnx_tfidf_t t = {.mode = "TF"};
  if (kiln_onnx_attr(node, "pool_strings")) {
    return KILN_STATUS(UNIMPLEMENTED, "pool_strings is not supported (kiln has no string tensors)");
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "min_gram_length", 0, &t.min_gram));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "max_gram_length", 0, &t.max_gram));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "max_skip_count", 0, &t.max_skip));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "mode", "", &t.mode));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "ngram_counts", &t.counts, NULL));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "ngram_indexes", &t.indexes, NULL));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "pool_int64s", &t.pool, NULL));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_floats(node, "weights", &t.weights, &t.has_weights));
  KILN_RETURN_IF_ERROR(kiln_onnx_tfidf_check(&t));
  *out_tfidf = t;
  return KILN_OK;
}

/* x[:, begin : begin + length] as (B, length, 1). */
static kiln_status_t kiln_onnx_tfidf_items(const kiln_onnx_node_t *node, kiln_expr_t *x,
                                           int64_t begin, int64_t length, kiln_expr_t **out_expr) {
  const kiln_op_t *op = &kiln_op_strided_slice;
  const int64_t axis = 1, end = begin + length;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "begin", 1, &begin));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "end", 1, &end));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "axes", 1, &axis));
  kiln_expr_t *slice = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, op, x, attrs, &slice));
  return kiln_onnx_expand_dims(node, slice, 2, out_expr);
}

/* The t-th items of the `count` n-grams of length `length` from pool
 * position `start`, as an int64 constant (count,). */
static kiln_status_t kiln_onnx_tfidf_pool_items(const kiln_onnx_node_t *node,
                                                const kiln_onnx_tfidf_t *t, int64_t start,
                                                int64_t count, int length, int item,
                                                kiln_expr_t **out_expr) {
  int64_t *values = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(node->importer->arena, sizeof(int64_t) * (size_t)count,
                                           8, (void **)&values));
  for (int64_t g = 0; g < count; ++g) {
    values[g] = t->pool.values[start + g * length + item];
  }
  return kiln_onnx_int64s(node, (int)count, values, out_expr);
}

/* sum over `axis` of a bool tensor, as float32. */
static kiln_status_t kiln_onnx_tfidf_count(const kiln_onnx_node_t *node, kiln_expr_t *hits,
                                           kiln_expr_t **out_expr) {
  const int64_t axis = 1;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, hits, KILN_DTYPE_FLOAT32, &hits));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_sum, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, &kiln_op_sum, attrs, "axis", 1, &axis));
  return kiln_onnx_emit1(node, &kiln_op_sum, hits, attrs, out_expr);
}

/* The counts (B, count) of the n-grams of length `length` with skip
 * distance `skip` in the rows of x (B, C), or NULL when no window fits. */
static kiln_status_t kiln_onnx_tfidf_skip(const kiln_onnx_node_t *node, const kiln_onnx_tfidf_t *t,
                                          kiln_expr_t *x, int length, int64_t skip,
                                          kiln_expr_t **out_expr) {
  int64_t start = 0, count = 0, row = kiln_onnx_type_of(x)->shape[1];
  kiln_onnx_tfidf_group(t, length, &start, &count);
  int64_t windows = row - (length - 1) * skip;
  *out_expr = NULL;
  if (windows <= 0) {
    return KILN_OK;
  }
  kiln_expr_t *hits = NULL;
  for (int item = 0; item < length; ++item) {
    kiln_expr_t *items = NULL, *pool = NULL, *equal = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_tfidf_items(node, x, item * skip, windows, &items));
    KILN_RETURN_IF_ERROR(kiln_onnx_tfidf_pool_items(node, t, start, count, length, item, &pool));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_equal, items, pool, NULL, &equal));
    if (hits) {
      KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_logical_and, hits, equal, NULL, &equal));
    }
    hits = equal;
  }
  return kiln_onnx_tfidf_count(node, hits, out_expr);
}

/* a + b, where either may be NULL (nothing yet). */
static kiln_status_t kiln_onnx_tfidf_accumulate(const kiln_onnx_node_t *node, kiln_expr_t *a,
                                                kiln_expr_t *b, kiln_expr_t **out_expr) {
  if (!a || !b) {
    *out_expr = a ? a : b;
    return KILN_OK;
  }
  return kiln_onnx_emit2(node, &kiln_op_add, a, b, NULL, out_expr);
}

/* The counts (B, J_k) of the n-grams of length `length` over every skip
 * distance (a unigram: distance 1 alone); zeros when no window fits. */
static kiln_status_t kiln_onnx_tfidf_length(const kiln_onnx_node_t *node,
                                            const kiln_onnx_tfidf_t *t, kiln_expr_t *x, int length,
                                            kiln_expr_t **out_expr) {
  int64_t last = length == 1 ? 1 : t->max_skip + 1;
  kiln_expr_t *total = NULL;
  for (int64_t skip = 1; skip <= last; ++skip) {
    kiln_expr_t *counts = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_tfidf_skip(node, t, x, length, skip, &counts));
    KILN_RETURN_IF_ERROR(kiln_onnx_tfidf_accumulate(node, total, counts, &total));
  }
  if (total) {
    *out_expr = total;
    return KILN_OK;
  }
  int64_t start = 0, count = 0, shape[2] = {kiln_onnx_type_of(x)->shape[0], 0};
  kiln_onnx_tfidf_group(t, length, &start, &count);
  shape[1] = count;
  return kiln_onnx_filled(node, KILN_DTYPE_FLOAT32, 2, shape, 0.0, out_expr);
}

/* The (J, size) matrix with a 1 at (g, ngram_indexes[g]), keeping only the
 * rows of the n-grams in `counted` (those of lengths that count). */
static kiln_status_t kiln_onnx_tfidf_placement(const kiln_onnx_node_t *node,
                                               const kiln_onnx_tfidf_t *t, int64_t rows,
                                               const int64_t *pool_ngram, kiln_expr_t **out_expr) {
  const int64_t shape[2] = {rows, t->size};
  kiln_tensor_t *matrix = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_tensor_new(node, KILN_DTYPE_FLOAT32, 2, shape, &matrix));
  float *data = kiln_tensor_data(matrix);
  memset(data, 0, sizeof(float) * (size_t)(rows * t->size));
  for (int64_t r = 0; r < rows; ++r) {
    data[r * t->size + t->indexes.values[pool_ngram[r]]] = 1.0f;
  }
  kiln_status_t status = kiln_onnx_constant(node->importer, matrix, out_expr);
  kiln_tensor_release(matrix);
  return status;
}

/* The counts (B, size) of x (B, C). */
static kiln_status_t kiln_onnx_tfidf_counts(const kiln_onnx_node_t *node,
                                            const kiln_onnx_tfidf_t *t, kiln_expr_t *x,
                                            kiln_expr_t **out_expr) {
  kiln_expr_t *parts[KILN_OP_MAX_FUNCTION_ARGS];
  int64_t *pool_ngram = NULL, rows = 0, first = 0;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(
      node->importer->arena, sizeof(int64_t) * (size_t)(t->ngrams + 1), 8, (void **)&pool_ngram));
  int num_parts = 0;
  for (int length = 1; length <= t->counts.count; ++length) {
    int64_t start = 0, count = 0;
    kiln_onnx_tfidf_group(t, length, &start, &count);
    bool counts = count > 0 && length >= t->min_gram && length <= t->max_gram;
    if (counts && num_parts == KILN_OP_MAX_FUNCTION_ARGS) {
      return KILN_STATUS(UNIMPLEMENTED, "more than %d n-gram lengths are not supported",
                         KILN_OP_MAX_FUNCTION_ARGS);
    }
    if (counts) {
      KILN_RETURN_IF_ERROR(kiln_onnx_tfidf_length(node, t, x, length, &parts[num_parts++]));
      for (int64_t g = 0; g < count; ++g) {
        pool_ngram[rows++] = first + g;
      }
    }
    first += count;
  }
  if (num_parts == 0) {
    int64_t shape[2] = {kiln_onnx_type_of(x)->shape[0], t->size};
    return kiln_onnx_filled(node, KILN_DTYPE_FLOAT32, 2, shape, 0.0, out_expr);
  }
  kiln_expr_t *counts = parts[0], *placement = NULL;
  if (num_parts > 1) {
    void *attrs = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_concatenate, &attrs));
    KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_concatenate, attrs, "axis", 1));
    KILN_RETURN_IF_ERROR(
        kiln_onnx_emit(node, &kiln_op_concatenate, num_parts, parts, attrs, &counts));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_tfidf_placement(node, t, rows, pool_ngram, &placement));
  return kiln_onnx_emit2(node, &kiln_op_matmul, counts, placement, NULL, out_expr);
}

/* The weights (size,) as a constant (1 each when absent). */
static kiln_status_t kiln_onnx_tfidf_weights(const kiln_onnx_node_t *node,
                                             const kiln_onnx_tfidf_t *t, kiln_expr_t **out_expr) {
  if (!t->has_weights) {
    return kiln_onnx_filled(node, KILN_DTYPE_FLOAT32, 1, &t->size, 1.0, out_expr);
  }
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_tensor_new(node, KILN_DTYPE_FLOAT32, 1, &t->size, &tensor));
  float *data = kiln_tensor_data(tensor);
  for (int64_t i = 0; i < t->size; ++i) {
    data[i] = (float)t->weights.values[i];
  }
  kiln_status_t status = kiln_onnx_constant(node->importer, tensor, out_expr);
  kiln_tensor_release(tensor);
  return status;
}

/* TF: the counts; IDF: weight where the count is positive; TFIDF: weight
 * times count. */
static kiln_status_t kiln_onnx_tfidf_mode(const kiln_onnx_node_t *node, const kiln_onnx_tfidf_t *t,
                                          kiln_expr_t *counts, kiln_expr_t **out_expr) {
  if (strcmp(t->mode, "TF") == 0) {
    *out_expr = counts;
    return KILN_OK;
  }
  kiln_expr_t *weights = NULL, *zero = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_tfidf_weights(node, t, &weights));
  if (strcmp(t->mode, "TFIDF") == 0) {
    return kiln_onnx_emit2(node, &kiln_op_multiply, counts, weights, NULL, out_expr);
  }
  kiln_expr_t *present = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_FLOAT32, 0.0, &zero));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_greater, counts, zero, NULL, &present));
  kiln_expr_t *args[3] = {present, weights, zero};
  return kiln_onnx_emit(node, &kiln_op_where, 3, args, NULL, out_expr);
}

kiln_status_t kiln_onnx_convert_tfidf_vectorizer(kiln_onnx_node_t *node) {
  kiln_onnx_tfidf_t t;
  KILN_RETURN_IF_ERROR(kiln_onnx_tfidf_read(node, &t));
  kiln_expr_t *x = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  if (xt->dtype != KILN_DTYPE_INT32 && xt->dtype != KILN_DTYPE_INT64) {
    return KILN_STATUS(UNIMPLEMENTED, "input X has dtype %s; kiln supports int32 and int64",
                       kiln_dtype_name(xt->dtype));
  }
  if (xt->ndim != 1 && xt->ndim != 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "input X has rank %d; expected [C] or [B, C]", xt->ndim);
  }
  int64_t rows = xt->ndim == 2 ? xt->shape[0] : 1, row_shape[2] = {rows, xt->shape[xt->ndim - 1]};
  KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, x, KILN_DTYPE_INT64, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, x, 2, row_shape, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_tfidf_counts(node, &t, x, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_tfidf_mode(node, &t, y, &y));
  if (xt->ndim == 1) {
    KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, y, 1, &t.size, &y));
  }
  node->outputs[0] = y;
  return KILN_OK;
}
