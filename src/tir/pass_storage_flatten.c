/*
 * Storage flatten: multi-dimensional buffer accesses become one-index
 * accesses of flat views (TVM's StorageFlatten / FlattenBuffer).
 *
 * Every buffer the function touches gets a flat alias, made once and kept in
 * a small map from buffer to alias: same name and dtype, one dimension,
 * compact, element offset 0, and the same data variable, so it names the
 * very same storage (the interpreter and the verifier find storage through
 * the data variable). An access A[i0, ..., in] becomes
 * A_flat[elem_offset + i0 * s0 + ... + in * sn], with the buffer's strides,
 * or row-major strides computed from its shape when they are NULL; an access
 * that already has one index (a flat offset, as tir.h allows) becomes
 * A_flat[elem_offset + index]. The alias's extent is the largest offset the
 * view reaches plus one: elem_offset + sum((shape_d - 1) * stride_d) + 1,
 * which is the element count for a compact buffer. An Allocate allocates its
 * buffer's alias (one dimension, that many elements). Parameters keep their
 * shapes, since they are the function's ABI; only the accesses in the body
 * change. A one-dimensional compact buffer with offset 0 is its own alias.
 * Index arithmetic is built with the builder and simplified with no ranges
 * (constant folding and linear forms only), so it never changes a value.
 */
#include "tir/builder.h"
#include "tir/functor.h"
#include "tir/simplify.h"
#include "tir/transform.h"

#define MAX_BUFFERS 64

typedef struct flattener_t {
  kiln_tir_mutator_t mutator; /* first: rules get &flattener->mutator */
  int count;
  const kiln_tir_buffer_t *from[MAX_BUFFERS];
  const kiln_tir_buffer_t *to[MAX_BUFFERS];
} flattener_t;

static int is_flat(const kiln_tir_buffer_t *buffer) {
  int64_t offset = 0;
  return buffer->ndim == 1 && !buffer->strides &&
         kiln_tir_expr_as_int(buffer->elem_offset, &offset) && offset == 0;
}

/* The strides of `buffer`: its own, or row-major from its shape. */
static void buffer_strides(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer,
                           const kiln_tir_expr_t **out) {
  const kiln_tir_expr_t *stride = NULL;
  for (int d = buffer->ndim - 1; d >= 0; --d) {
    if (buffer->strides) {
      out[d] = buffer->strides[d];
      continue;
    }
    out[d] = stride ? stride : kiln_tir_b_int(b, buffer->shape[d]->dtype.base, 1);
    stride = stride ? kiln_tir_b_mul(b, buffer->shape[d], stride) : buffer->shape[d];
  }
}

/* An integer expression with the dtype of `like`. */
static const kiln_tir_expr_t *as_dtype(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                       kiln_tir_dtype_t like) {
  if (!x || kiln_tir_dtype_equal(x->dtype, like)) {
    return x;
  }
  return kiln_tir_b_cast(b, like, x);
}

static kiln_status_t simplified(kiln_arena_t *arena, kiln_tir_builder_t *b,
                                const kiln_tir_expr_t *x, const kiln_tir_expr_t **out) {
  KILN_RETURN_IF_ERROR(kiln_tir_builder_finish(b));
  return kiln_tir_simplify_expr(arena, NULL, x, out);
}

static kiln_status_t make_alias(kiln_arena_t *arena, const kiln_tir_buffer_t *buffer,
                                const kiln_tir_buffer_t **out) {
  kiln_tir_builder_t b;
  kiln_tir_builder_initialize(&b, arena);
  const kiln_tir_expr_t *strides[KILN_TIR_MAX_DIMS];
  buffer_strides(&b, buffer, strides);
  kiln_tir_dtype_t dtype = buffer->elem_offset->dtype;
  const kiln_tir_expr_t *extent =
      kiln_tir_b_add(&b, buffer->elem_offset, kiln_tir_b_int(&b, dtype.base, 1));
  for (int d = 0; d < buffer->ndim; ++d) {
    const kiln_tir_expr_t *last =
        kiln_tir_b_bin(&b, KILN_TIR_EXPR_SUB, buffer->shape[d],
                       kiln_tir_b_int(&b, buffer->shape[d]->dtype.base, 1));
    extent = kiln_tir_b_add(&b, extent, as_dtype(&b, kiln_tir_b_mul(&b, last, strides[d]), dtype));
  }
  KILN_RETURN_IF_ERROR(simplified(arena, &b, extent, &extent));
  kiln_tir_buffer_t *alias = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_zeroed(arena, sizeof(*alias), _Alignof(max_align_t), (void **)&alias));
  *alias = *buffer;
  alias->ndim = 1;
  alias->strides = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_int_imm_create(arena, dtype, 0, &alias->elem_offset));
  const kiln_tir_expr_t **shape = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(arena, 1, sizeof(*shape), _Alignof(max_align_t), (void **)&shape));
  shape[0] = extent;
  alias->shape = shape;
  *out = alias;
  return KILN_OK;
}

static kiln_status_t alias_of(flattener_t *f, const kiln_tir_buffer_t *buffer,
                              const kiln_tir_buffer_t **out) {
  if (is_flat(buffer)) {
    *out = buffer;
    return KILN_OK;
  }
  for (int i = 0; i < f->count; ++i) {
    if (f->from[i] == buffer) {
      *out = f->to[i];
      return KILN_OK;
    }
  }
  if (f->count == MAX_BUFFERS) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "buffer %s: more than %d buffers to flatten",
                       buffer->name, MAX_BUFFERS);
  }
  KILN_RETURN_IF_ERROR_ANNOTATE(make_alias(f->mutator.arena, buffer, out), "buffer %s",
                                buffer->name);
  f->from[f->count] = buffer;
  f->to[f->count] = *out;
  f->count++;
  return KILN_OK;
}

/* elem_offset + sum(index_d * stride_d), or elem_offset + index for one index. */
static kiln_status_t flat_index(kiln_arena_t *arena, const kiln_tir_buffer_t *buffer, int n,
                                const kiln_tir_expr_t *const *indices,
                                const kiln_tir_expr_t **out) {
  for (int d = 0; d < n; ++d) {
    if (indices[d]->dtype.lanes != 1) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "index %d is a vector of %d lanes (flatten before vectorize)", d,
                         indices[d]->dtype.lanes);
    }
  }
  kiln_tir_builder_t b;
  kiln_tir_builder_initialize(&b, arena);
  const kiln_tir_expr_t *strides[KILN_TIR_MAX_DIMS];
  buffer_strides(&b, buffer, strides);
  kiln_tir_dtype_t dtype = indices[0]->dtype;
  const kiln_tir_expr_t *sum = NULL;
  for (int d = 0; d < n; ++d) {
    const kiln_tir_expr_t *term = as_dtype(&b, indices[d], dtype);
    if (n > 1) {
      term = kiln_tir_b_mul(&b, term, as_dtype(&b, strides[d], dtype));
    }
    sum = sum ? kiln_tir_b_add(&b, sum, term) : term;
  }
  int64_t offset = 0;
  if (!kiln_tir_expr_as_int(buffer->elem_offset, &offset) || offset != 0) {
    sum = kiln_tir_b_add(&b, as_dtype(&b, buffer->elem_offset, dtype), sum);
  }
  return simplified(arena, &b, sum, out);
}

static kiln_status_t flatten_load(kiln_tir_mutator_t *self, const kiln_tir_expr_t *expr,
                                  const kiln_tir_expr_t **out) {
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_rebuild_expr(self, expr, out));
  const kiln_tir_buffer_load_t *n = (const void *)*out;
  const kiln_tir_buffer_t *alias = NULL;
  KILN_RETURN_IF_ERROR(alias_of((flattener_t *)self, n->buffer, &alias));
  if (alias == n->buffer) {
    return KILN_OK;
  }
  const kiln_tir_expr_t *index = NULL;
  KILN_RETURN_IF_ERROR_ANNOTATE(
      flat_index(self->arena, n->buffer, n->num_indices, n->indices, &index), "load of %s",
      n->buffer->name);
  return kiln_tir_buffer_load_create(self->arena, alias, 1, &index, out);
}

static kiln_status_t flatten_store(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                   const kiln_tir_stmt_t **out) {
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_rebuild_stmt(self, stmt, out));
  const kiln_tir_buffer_store_t *n = (const void *)*out;
  const kiln_tir_buffer_t *alias = NULL;
  KILN_RETURN_IF_ERROR(alias_of((flattener_t *)self, n->buffer, &alias));
  if (alias == n->buffer) {
    return KILN_OK;
  }
  const kiln_tir_expr_t *index = NULL;
  KILN_RETURN_IF_ERROR_ANNOTATE(
      flat_index(self->arena, n->buffer, n->num_indices, n->indices, &index), "store to %s",
      n->buffer->name);
  return kiln_tir_buffer_store_create(self->arena, alias, n->value, 1, &index, out);
}

static kiln_status_t flatten_allocate(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                      const kiln_tir_stmt_t **out) {
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_rebuild_stmt(self, stmt, out));
  const kiln_tir_allocate_t *n = (const void *)*out;
  const kiln_tir_buffer_t *alias = NULL;
  KILN_RETURN_IF_ERROR(alias_of((flattener_t *)self, n->buffer, &alias));
  if (alias == n->buffer) {
    return KILN_OK;
  }
  return kiln_tir_allocate_create(self->arena, alias, n->scope, n->init, n->body, out);
}

kiln_status_t kiln_tir_storage_flatten(kiln_arena_t *arena, const kiln_tir_prim_func_t *func,
                                       const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  if (!func) {
    return KILN_STATUS(INVALID_ARGUMENT, "storage_flatten: null function");
  }
  flattener_t f;
  kiln_tir_mutator_initialize(&f.mutator, arena);
  f.mutator.expr_rules[KILN_TIR_EXPR_BUFFER_LOAD] = flatten_load;
  f.mutator.stmt_rules[KILN_TIR_STMT_BUFFER_STORE] = flatten_store;
  f.mutator.stmt_rules[KILN_TIR_STMT_ALLOCATE] = flatten_allocate;
  f.count = 0;
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_tir_mutator_mutate_stmt(&f.mutator, func->body, &body),
                                "storage_flatten %s", func->name);
  return kiln_tir_prim_func_with_body(arena, func, body, out_func);
}
