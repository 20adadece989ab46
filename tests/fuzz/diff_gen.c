/*
 * The differential fuzzer's graph generator; see diff_gen.h for the design.
 *
 * The generator keeps the text in three parts (parameters, bindings,
 * metadata constants) and a pool of values (name, dtype, shape, exact).
 * A recipe writes its call with emit(), which parses the candidate module
 * (the bindings so far, the call, and the call as the body) and, when the
 * type relation accepts it, keeps the binding and pools its output (each
 * field of a tuple through a TupleGetItem binding); otherwise the
 * parameters and constants the recipe made are rolled back. Recipes are
 * small functions over helpers that pick values by rank, dtype and
 * exactness, or make fresh parameters of a wanted shape.
 */
#include "diff_gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/expr.h"
#include "ir/text.h"
#include "ir/type.h"
#include "op/op.h"

enum { MAX_VALUES = 96, MAX_CONSTANTS = 16 };

typedef struct value_t {
  char name[32];
  kiln_dtype_t dtype;
  int ndim;
  int64_t shape[KILN_DIFF_MAX_RANK];
  bool exact;
  bool is_var;
  int uses;
} value_t;

typedef struct gen_t {
  kiln_allocator_t allocator;
  uint64_t rng;
  kiln_strbuf_t bindings, metadata, scratch;
  int num_constants;
  value_t values[MAX_VALUES];
  int num_values;
  int next_binding;
  kiln_diff_graph_t *graph;
  /* Rollback marks of the current recipe. */
  int mark_vars, mark_values, mark_constants;
  size_t mark_metadata;
  int pending_uses[8];
  int num_pending;
} gen_t;

uint64_t kiln_diff_next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static int64_t rnd(gen_t *g, int64_t lo, int64_t hi) {
  return lo + (int64_t)(kiln_diff_next(&g->rng) % (uint64_t)(hi - lo + 1));
}

static double rndf(gen_t *g, double lo, double hi) {
  return lo + (hi - lo) * (double)(kiln_diff_next(&g->rng) >> 11) * 0x1.0p-53;
}

static bool chance(gen_t *g, int percent) {
  return rnd(g, 0, 99) < percent;
}

/* ---- text ---- */

static void shape_text(int ndim, const int64_t *shape, char *out, size_t capacity) {
  size_t used = (size_t)snprintf(out, capacity, "(");
  for (int d = 0; d < ndim && used < capacity; ++d) {
    used +=
        (size_t)snprintf(out + used, capacity - used, "%s%lld", d ? ", " : "", (long long)shape[d]);
  }
  if (used < capacity) {
    snprintf(out + used, capacity - used, ")");
  }
}

static void ints_text(int count, const int64_t *values, char *out, size_t capacity) {
  size_t used = (size_t)snprintf(out, capacity, "[");
  for (int i = 0; i < count && used < capacity; ++i) {
    used += (size_t)snprintf(out + used, capacity - used, "%s%lld", i ? ", " : "",
                             (long long)values[i]);
  }
  if (used < capacity) {
    snprintf(out + used, capacity - used, "]");
  }
}

static const char *bool_text(bool value) {
  return value ? "True" : "False";
}

/* The module: parameters, bindings, `body` (NULL: the sinks), metadata. */
static kiln_status_t module_text(gen_t *g, const char *extra, const char *body,
                                 kiln_strbuf_t *out) {
  kiln_strbuf_reset(out);
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(out, "def @main("));
  for (int i = 0; i < g->graph->num_vars; ++i) {
    const kiln_diff_var_t *v = &g->graph->vars[i];
    char shape[128];
    shape_text(v->ndim, v->shape, shape, sizeof(shape));
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(out, "%s%%%s: Tensor[%s, %s]", i ? ", " : "", v->name,
                                             shape, kiln_dtype_name(v->dtype)));
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(
      out, ") {\n%s%s  %s\n}\n", kiln_strbuf_c_str(&g->bindings), extra ? extra : "", body));
  if (g->num_constants > 0) {
    KILN_RETURN_IF_ERROR(
        kiln_strbuf_appendf(out, "#[metadata]\n%s", kiln_strbuf_c_str(&g->metadata)));
  }
  return KILN_OK;
}

/* ---- values ---- */

static int add_value(gen_t *g, const char *name, const kiln_tensor_type_t *type, bool exact,
                     bool is_var) {
  if (g->num_values == MAX_VALUES || type->ndim > KILN_DIFF_MAX_RANK) {
    return -1;
  }
  value_t *v = &g->values[g->num_values];
  *v = (value_t){.dtype = type->dtype, .ndim = type->ndim, .exact = exact, .is_var = is_var};
  snprintf(v->name, sizeof(v->name), "%s", name);
  if (type->ndim > 0) { /* a scalar's shape may be NULL */
    memcpy(v->shape, type->shape, (size_t)type->ndim * sizeof(int64_t));
  }
  return g->num_values++;
}

static void begin_recipe(gen_t *g) {
  g->mark_vars = g->graph->num_vars;
  g->mark_values = g->num_values;
  g->mark_constants = g->num_constants;
  g->mark_metadata = kiln_strbuf_length(&g->metadata);
  g->num_pending = 0;
}

static void rollback(gen_t *g) {
  g->graph->num_vars = g->mark_vars;
  g->num_values = g->mark_values;
  g->num_constants = g->mark_constants;
  if (g->metadata.data) {
    g->metadata.length = g->mark_metadata;
    g->metadata.data[g->mark_metadata] = '\0';
  }
  g->num_pending = 0;
}

/* A fresh parameter of `dtype` and shape, pooled; its value index. */
static int new_var(gen_t *g, kiln_dtype_t dtype, int ndim, const int64_t *shape,
                   kiln_diff_range_t range, int64_t lo, int64_t hi) {
  if (g->graph->num_vars == KILN_DIFF_MAX_VARS) {
    return -1;
  }
  kiln_diff_var_t *v = &g->graph->vars[g->graph->num_vars];
  *v = (kiln_diff_var_t){.dtype = dtype, .ndim = ndim, .range = range, .lo = lo, .hi = hi};
  snprintf(v->name, sizeof(v->name), "x%d", g->graph->num_vars);
  memcpy(v->shape, shape, (size_t)ndim * sizeof(int64_t));
  g->graph->num_vars++;
  char name[16];
  snprintf(name, sizeof(name), "%%%s", v->name);
  kiln_tensor_type_t type = {.dtype = dtype, .ndim = ndim, .shape = shape};
  return add_value(g, name, &type, range != KILN_DIFF_RANGE_POSITIVE, true);
}

static int new_float(gen_t *g, int ndim, const int64_t *shape) {
  return new_var(g, KILN_DTYPE_FLOAT32, ndim, shape, KILN_DIFF_RANGE_FLOAT, 0, 0);
}

static int new_index(gen_t *g, int ndim, const int64_t *shape, int64_t lo, int64_t hi) {
  return new_var(g, KILN_DTYPE_INT64, ndim, shape, KILN_DIFF_RANGE_INDEX, lo, hi);
}

/* A weight: a fresh parameter, or (half the time) a constant, which the
 * compiler folds and re-lays out at compile time. */
static int new_weight(gen_t *g, int ndim, const int64_t *shape) {
  int64_t count = 1;
  for (int d = 0; d < ndim; ++d) {
    count *= shape[d];
  }
  if (g->num_constants == MAX_CONSTANTS || count > 4096 || chance(g, 50)) {
    return new_float(g, ndim, shape);
  }
  char text[128];
  shape_text(ndim, shape, text, sizeof(text));
  int k = g->num_constants++;
  if (kiln_strbuf_appendf(&g->metadata, "Constant[%d] = Tensor[%s, float32] [", k, text)) {
    return -1;
  }
  for (int64_t i = 0; i < count; ++i) {
    if (kiln_strbuf_appendf(&g->metadata, "%s%.6g", i ? ", " : "", rndf(g, -1, 1))) {
      return -1;
    }
  }
  if (kiln_strbuf_append(&g->metadata, "]\n")) {
    return -1;
  }
  char name[32];
  snprintf(name, sizeof(name), "meta[Constant][%d]", k);
  kiln_tensor_type_t type = {.dtype = KILN_DTYPE_FLOAT32, .ndim = ndim, .shape = shape};
  return add_value(g, name, &type, false, false);
}

static void random_shape(gen_t *g, int ndim, int64_t max_dim, int64_t *shape) {
  for (int d = 0; d < ndim; ++d) {
    shape[d] = rnd(g, 1, max_dim);
  }
}

/* A pooled value of `dtype` with rank in [lo, hi] (exact when asked), or a
 * fresh float parameter (most recent values preferred). */
static int pick(gen_t *g, kiln_dtype_t dtype, int lo, int hi, bool exact) {
  int candidates[MAX_VALUES], count = 0;
  for (int i = 0; i < g->num_values; ++i) {
    const value_t *v = &g->values[i];
    if (v->dtype == dtype && v->ndim >= lo && v->ndim <= hi && (!exact || v->exact)) {
      candidates[count++] = i;
    }
  }
  if (count > 0 && (dtype != KILN_DTYPE_FLOAT32 || chance(g, 80))) {
    int newest = (int)rnd(g, 0, count - 1);
    return candidates[chance(g, 60) ? count - 1 - (int)rnd(g, 0, newest < 3 ? newest : 3) : newest];
  }
  if (dtype != KILN_DTYPE_FLOAT32) {
    return -1;
  }
  int64_t shape[KILN_DIFF_MAX_RANK];
  int ndim = (int)rnd(g, lo, hi);
  random_shape(g, ndim, 5, shape);
  return new_float(g, ndim, shape);
}

static int pick_float(gen_t *g, int lo, int hi) {
  return pick(g, KILN_DTYPE_FLOAT32, lo, hi, false);
}

/* A value broadcastable against `a`: the same shape, some dims 1, or a
 * suffix of it. */
static int pick_broadcast(gen_t *g, int a, kiln_dtype_t dtype, bool exact) {
  const value_t *va = &g->values[a];
  for (int i = g->num_values - 1; i >= 0; --i) {
    const value_t *v = &g->values[i];
    if (i != a && v->dtype == dtype && (!exact || v->exact) && v->ndim == va->ndim &&
        !memcmp(v->shape, va->shape, (size_t)v->ndim * sizeof(int64_t)) && chance(g, 50)) {
      return i;
    }
  }
  if (dtype != KILN_DTYPE_FLOAT32) {
    return chance(g, 50) ? a : -1;
  }
  int64_t shape[KILN_DIFF_MAX_RANK];
  int drop = va->ndim > 0 && chance(g, 30) ? (int)rnd(g, 1, va->ndim) : 0;
  int ndim = va->ndim - drop;
  for (int d = 0; d < ndim; ++d) {
    shape[d] = chance(g, 25) ? 1 : va->shape[drop + d];
  }
  return new_float(g, ndim, shape);
}

/* ---- emitting a call ---- */

static void use(gen_t *g, int value) {
  if (value >= 0 && g->num_pending < 8) {
    g->pending_uses[g->num_pending++] = value;
  }
}

/* The call `expr` (printf-style) as the next binding, if the registry's
 * type relation accepts it; its value index (the first field for a tuple),
 * or -1 after rolling the recipe back. */
__attribute__((format(printf, 3, 4))) static int emit(gen_t *g, bool exact, const char *format,
                                                      ...) {
  char expr[1024], line[1100], body[32];
  va_list args;
  va_start(args, format);
  vsnprintf(expr, sizeof(expr), format, args);
  va_end(args);
  int id = g->next_binding;
  snprintf(line, sizeof(line), "  %%%d = %s;\n", id, expr);
  snprintf(body, sizeof(body), "%%%d", id);
  kiln_module_t *module = NULL;
  kiln_status_t status = module_text(g, line, body, &g->scratch);
  if (!status) {
    status = kiln_ir_parse_module("gen", kiln_strbuf_c_str(&g->scratch), g->allocator, &module);
  }
  if (status) {
    kiln_status_free(status);
    rollback(g);
    g->graph->num_rejected++;
    return -1;
  }
  const kiln_type_t *type = kiln_module_get_function(module, "main")->body->checked_type;
  g->next_binding++;
  int first = -1;
  bool ok = !kiln_strbuf_append(&g->bindings, line);
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  int fields = tuple ? tuple->count : 1;
  for (int f = 0; f < fields && ok; ++f) {
    const kiln_tensor_type_t *tensor = kiln_type_as_tensor(tuple ? tuple->fields[f] : type);
    char name[16];
    snprintf(name, sizeof(name), "%%%d", tuple ? g->next_binding : id);
    if (tuple) {
      ok = !kiln_strbuf_appendf(&g->bindings, "  %%%d = %%%d.%d;\n", g->next_binding++, id, f);
    }
    int v = tensor && ok ? add_value(g, name, tensor, exact, false) : -1;
    first = first < 0 ? v : first;
  }
  kiln_module_destroy(module);
  for (int i = 0; i < g->num_pending; ++i) {
    g->values[g->pending_uses[i]].uses++;
  }
  g->graph->num_calls++;
  begin_recipe(g); /* what the call used stays, whatever the recipe does next */
  return first;
}

/* A unary call of `op` on `x` with `attrs` ("" or ", name=value..."). */
static int unary(gen_t *g, const char *op, int x, bool exact, const char *attrs) {
  if (x < 0) {
    return -1;
  }
  use(g, x);
  return emit(g, exact, "%s(%s%s)", op, g->values[x].name, attrs);
}

/* x clipped into [lo, hi] (the domain of what reads it). */
static int clipped(gen_t *g, int x, double lo, double hi) {
  char attrs[96];
  snprintf(attrs, sizeof(attrs), ", a_min=%g, a_max=%g", lo, hi);
  return unary(g, "clip", x, x >= 0 && g->values[x].exact, attrs);
}

#include "diff_recipes.inc"

/* ---- the graph ---- */

/* The body: the values nothing reads (not parameters), up to four. */
static kiln_status_t body_text(gen_t *g, char *out, size_t capacity) {
  int sinks[4], count = 0;
  for (int i = g->num_values - 1; i >= 0 && count < 4; --i) {
    if (!g->values[i].is_var && g->values[i].uses == 0 && g->values[i].name[0] == '%') {
      sinks[count++] = i;
    }
  }
  if (count == 0) {
    return KILN_STATUS(FAILED_PRECONDITION, "no call was made");
  }
  size_t used = (size_t)snprintf(out, capacity, "%s", count > 1 ? "(" : "");
  for (int i = 0; i < count && used < capacity; ++i) {
    used += (size_t)snprintf(out + used, capacity - used, "%s%s", i ? ", " : "",
                             g->values[sinks[i]].name);
  }
  if (used < capacity && count > 1) {
    snprintf(out + used, capacity - used, ")");
  }
  return KILN_OK;
}

static kiln_status_t grow(gen_t *g, int max_calls) {
  int attempts = 0;
  while (g->graph->num_calls < max_calls && attempts++ < max_calls * 8) {
    const recipe_t *r = &recipes[rnd(g, 0, (int64_t)NUM_RECIPES - 1)];
    begin_recipe(g);
    int calls = g->graph->num_calls;
    if (r->make(g, r->op) >= 0 && g->graph->num_calls > calls) {
      g->graph->transcendental |= r->transcendental;
      size_t length = strlen(g->graph->ops);
      if (length + strlen(r->op) + 2 < sizeof(g->graph->ops)) {
        snprintf(g->graph->ops + length, sizeof(g->graph->ops) - length, "%s%s", length ? " " : "",
                 r->op);
      }
    }
  }
  char body[128];
  KILN_RETURN_IF_ERROR(body_text(g, body, sizeof(body)));
  KILN_RETURN_IF_ERROR(module_text(g, NULL, body, &g->scratch));
  return kiln_strbuf_take(&g->scratch, &g->graph->text);
}

kiln_status_t kiln_diff_generate(kiln_allocator_t allocator, uint64_t seed, int max_calls,
                                 kiln_diff_graph_t *out_graph) {
  memset(out_graph, 0, sizeof(*out_graph));
  gen_t *g = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*g), (void **)&g));
  g->allocator = allocator;
  g->rng = seed;
  g->graph = out_graph;
  kiln_strbuf_initialize(&g->bindings, allocator);
  kiln_strbuf_initialize(&g->metadata, allocator);
  kiln_strbuf_initialize(&g->scratch, allocator);
  kiln_status_t status = grow(g, max_calls);
  kiln_strbuf_deinitialize(&g->bindings);
  kiln_strbuf_deinitialize(&g->metadata);
  kiln_strbuf_deinitialize(&g->scratch);
  kiln_allocator_free(allocator, g);
  return status;
}

void kiln_diff_graph_deinitialize(kiln_allocator_t allocator, kiln_diff_graph_t *graph) {
  kiln_allocator_free(allocator, graph->text);
  graph->text = NULL;
}

void kiln_diff_uncovered(void (*visit)(void *user, const char *op, const char *why), void *user) {
  for (int i = 0; i < kiln_op_count(); ++i) {
    const char *name = kiln_op_get((kiln_op_id_t)i)->name;
    bool covered = false;
    for (size_t r = 0; r < NUM_RECIPES && !covered; ++r) {
      covered = strcmp(recipes[r].op, name) == 0;
    }
    for (size_t u = 0; u < NUM_UNCOVERED && !covered; ++u) {
      if (strcmp(uncovered[u].op, name) == 0) {
        visit(user, name, uncovered[u].why);
        covered = true;
      }
    }
    if (!covered) {
      visit(user, name, "no recipe yet");
    }
  }
}
