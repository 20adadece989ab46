/*
 * The loop-IR interpreter's walker; see interp.h.
 *
 * State is two stacks: variable bindings (variable -> value, searched from
 * the top so inner bindings shadow outer ones) and storages (a buffer's data
 * variable -> bytes, dtype, element count). Loops, lets and Allocate push on
 * entry and pop on exit. Buffers are found through their data variable, so
 * two buffers declared over one storage see the same bytes. A load or store
 * computes, per lane, the flat element offset elem_offset + sum(index_d *
 * stride_d) (compact row-major strides from the shape when the buffer has
 * none) and checks every index against its dimension and the flat offset
 * against the storage before touching memory. Shapes and strides are
 * evaluated at each access: slow, but symbolic shapes cost nothing extra.
 */
#include "tir/interp.h"

#include <string.h>

#include "base/array.h"
#include "base/scalar_ops.h"
#include "tir/interp_value.h"

typedef struct binding_t {
  const kiln_tir_var_t *var;
  kiln_tir_value_t value;
} binding_t;

typedef struct storage_t {
  const kiln_tir_var_t *data;
  void *bytes;
  kiln_dtype_t dtype;
  int64_t count;
  uint8_t *written; /* an element a byte, for an Allocate that does not zero: NULL otherwise */
} storage_t;

typedef struct interp_t {
  kiln_allocator_t allocator;
  kiln_array_t bindings; /* binding_t */
  kiln_array_t storages; /* storage_t */
} interp_t;

static kiln_status_t eval(interp_t *in, const kiln_tir_expr_t *e, kiln_tir_value_t *out);
static kiln_status_t exec(interp_t *in, const kiln_tir_stmt_t *s);

/* ---- environment ---- */

static kiln_status_t bind(interp_t *in, const kiln_tir_var_t *var, const kiln_tir_value_t *v) {
  binding_t b;
  b.var = var;
  b.value = *v;
  return kiln_array_push(&in->bindings, &b);
}

static void unbind(interp_t *in) {
  (void)kiln_array_pop(&in->bindings, NULL);
}

static const binding_t *lookup(const interp_t *in, const kiln_tir_var_t *var) {
  for (size_t i = kiln_array_count(&in->bindings); i-- > 0;) {
    const binding_t *b = kiln_array_at(&in->bindings, i);
    if (b->var == var) {
      return b;
    }
  }
  return NULL;
}

static const storage_t *find_storage(const interp_t *in, const kiln_tir_buffer_t *buffer) {
  for (size_t i = kiln_array_count(&in->storages); i-- > 0;) {
    const storage_t *s = kiln_array_at(&in->storages, i);
    if (s->data == buffer->data) {
      return s;
    }
  }
  return NULL;
}

static kiln_status_t eval_scalar_int(interp_t *in, const kiln_tir_expr_t *e, int64_t *out) {
  kiln_tir_value_t v;
  KILN_RETURN_IF_ERROR(eval(in, e, &v));
  *out = v.lanes.i[0];
  return KILN_OK;
}

static void scalar_int(kiln_tir_dtype_t dtype, int64_t value, kiln_tir_value_t *out) {
  out->dtype = dtype;
  out->lanes.i[0] = value;
}

/* ---- memory ---- */

static double read_float(const void *bytes, kiln_dtype_t dtype, int64_t i) {
  if (dtype == KILN_DTYPE_FLOAT16 || dtype == KILN_DTYPE_BFLOAT16) {
    uint16_t bits = ((const uint16_t *)bytes)[i];
    return dtype == KILN_DTYPE_FLOAT16 ? kiln_scalar_float16_to_float32(bits)
                                       : kiln_scalar_bfloat16_to_float32(bits);
  }
  return dtype == KILN_DTYPE_FLOAT32 ? (double)((const float *)bytes)[i]
                                     : ((const double *)bytes)[i];
}

static int64_t read_int(const void *bytes, kiln_dtype_t dtype, int64_t i) {
  switch (dtype) {
  case KILN_DTYPE_INT8:
    return ((const int8_t *)bytes)[i];
  case KILN_DTYPE_INT16:
    return ((const int16_t *)bytes)[i];
  case KILN_DTYPE_INT32:
    return ((const int32_t *)bytes)[i];
  case KILN_DTYPE_INT64:
    return ((const int64_t *)bytes)[i];
  case KILN_DTYPE_UINT8:
    return ((const uint8_t *)bytes)[i];
  case KILN_DTYPE_BOOL:
    return ((const uint8_t *)bytes)[i] != 0;
  case KILN_DTYPE_UINT16:
    return ((const uint16_t *)bytes)[i];
  case KILN_DTYPE_UINT32:
    return ((const uint32_t *)bytes)[i];
  case KILN_DTYPE_UINT64:
    return (int64_t)((const uint64_t *)bytes)[i]; /* the bits */
  case KILN_DTYPE_FLOAT32:
  case KILN_DTYPE_FLOAT16:
  case KILN_DTYPE_BFLOAT16:
  case KILN_DTYPE_FLOAT64:
  case KILN_DTYPE_COUNT_:
    break;
  }
  return 0; /* kiln_tir_value_check_dtype ran first */
}

static void write_element(void *bytes, kiln_dtype_t dtype, int64_t i, const kiln_tir_value_t *v,
                          int lane) {
  int64_t x = v->lanes.i[lane];
  switch (dtype) {
  case KILN_DTYPE_FLOAT32:
    ((float *)bytes)[i] = (float)v->lanes.f[lane];
    return;
  case KILN_DTYPE_FLOAT64:
    ((double *)bytes)[i] = v->lanes.f[lane];
    return;
  case KILN_DTYPE_INT8:
    ((int8_t *)bytes)[i] = (int8_t)x;
    return;
  case KILN_DTYPE_INT16:
    ((int16_t *)bytes)[i] = (int16_t)x;
    return;
  case KILN_DTYPE_INT32:
    ((int32_t *)bytes)[i] = (int32_t)x;
    return;
  case KILN_DTYPE_INT64:
    ((int64_t *)bytes)[i] = x;
    return;
  case KILN_DTYPE_UINT8:
  case KILN_DTYPE_BOOL:
    ((uint8_t *)bytes)[i] = (uint8_t)x;
    return;
  case KILN_DTYPE_UINT16:
    ((uint16_t *)bytes)[i] = (uint16_t)x;
    return;
  case KILN_DTYPE_UINT32:
    ((uint32_t *)bytes)[i] = (uint32_t)x;
    return;
  case KILN_DTYPE_UINT64:
    ((uint64_t *)bytes)[i] = (uint64_t)x;
    return;
  case KILN_DTYPE_FLOAT16:
    ((uint16_t *)bytes)[i] = kiln_scalar_float32_to_float16((float)v->lanes.f[lane]);
    return;
  case KILN_DTYPE_BFLOAT16:
    ((uint16_t *)bytes)[i] = kiln_scalar_float32_to_bfloat16((float)v->lanes.f[lane]);
    return;
  case KILN_DTYPE_COUNT_:
    break;
  }
}

/* Flat element offsets of a load or store, one per lane, all checked. */
static kiln_status_t flat_offsets(interp_t *in, const char *what, const kiln_tir_buffer_t *buffer,
                                  int num_indices, const kiln_tir_expr_t *const *indices, int lanes,
                                  const storage_t **out_storage, int64_t *out_offsets) {
  const storage_t *storage = find_storage(in, buffer);
  if (!storage) {
    return KILN_STATUS(FAILED_PRECONDITION, "%s: buffer %s has no storage here", what,
                       buffer->name);
  }
  int64_t offset = 0;
  KILN_RETURN_IF_ERROR(eval_scalar_int(in, buffer->elem_offset, &offset));
  for (int l = 0; l < lanes; ++l) {
    out_offsets[l] = offset;
  }
  int64_t stride = 1;
  for (int d = num_indices - 1; d >= 0; --d) {
    kiln_tir_value_t index;
    KILN_RETURN_IF_ERROR(eval(in, indices[d], &index));
    int64_t extent = -1;
    if (num_indices == buffer->ndim) {
      KILN_RETURN_IF_ERROR(eval_scalar_int(in, buffer->shape[d], &extent));
      if (buffer->strides) {
        KILN_RETURN_IF_ERROR(eval_scalar_int(in, buffer->strides[d], &stride));
      }
    }
    for (int l = 0; l < lanes; ++l) {
      int64_t i = index.lanes.i[index.dtype.lanes == 1 ? 0 : l];
      if (extent >= 0 && (i < 0 || i >= extent)) {
        return KILN_STATUS(OUT_OF_RANGE,
                           "%s: index %lld of dim %d of buffer %s is outside [0, %lld)", what,
                           (long long)i, d, buffer->name, (long long)extent);
      }
      int64_t term = 0;
      if (__builtin_mul_overflow(i, stride, &term) ||
          __builtin_add_overflow(out_offsets[l], term, &out_offsets[l])) {
        return KILN_STATUS(OUT_OF_RANGE, "%s: the offset of buffer %s overflows int64", what,
                           buffer->name);
      }
    }
    if (!buffer->strides && extent >= 0 && __builtin_mul_overflow(stride, extent, &stride)) {
      return KILN_STATUS(OUT_OF_RANGE, "%s: the strides of buffer %s overflow int64", what,
                         buffer->name);
    }
  }
  for (int l = 0; l < lanes; ++l) {
    if (out_offsets[l] < 0 || out_offsets[l] >= storage->count) {
      return KILN_STATUS(OUT_OF_RANGE, "%s: flat index %lld of buffer %s is outside [0, %lld)",
                         what, (long long)out_offsets[l], buffer->name, (long long)storage->count);
    }
  }
  *out_storage = storage;
  return KILN_OK;
}

/* A load of an element its Allocate left undefined and no store wrote. */
static kiln_status_t check_written(const storage_t *storage, const kiln_tir_buffer_t *buffer,
                                   int lanes, const int64_t *offsets) {
  for (int l = 0; storage->written && l < lanes; ++l) {
    if (!storage->written[offsets[l]]) {
      return KILN_STATUS(FAILED_PRECONDITION,
                         "BufferLoad: flat index %lld of buffer %s is read before it is written "
                         "(its Allocate does not zero it)",
                         (long long)offsets[l], buffer->name);
    }
  }
  return KILN_OK;
}

static kiln_status_t eval_load(interp_t *in, const kiln_tir_buffer_load_t *n,
                               kiln_tir_value_t *out) {
  KILN_RETURN_IF_ERROR(kiln_tir_value_check_dtype(n->base.dtype));
  int64_t offsets[KILN_TIR_MAX_LANES];
  const storage_t *storage = NULL;
  int lanes = n->base.dtype.lanes;
  KILN_RETURN_IF_ERROR(flat_offsets(in, "BufferLoad", n->buffer, n->num_indices, n->indices, lanes,
                                    &storage, offsets));
  KILN_RETURN_IF_ERROR(check_written(storage, n->buffer, lanes, offsets));
  out->dtype = n->base.dtype;
  for (int l = 0; l < lanes; ++l) {
    if (kiln_tir_dtype_is_float(out->dtype)) {
      out->lanes.f[l] = read_float(storage->bytes, storage->dtype, offsets[l]);
    } else {
      out->lanes.i[l] = read_int(storage->bytes, storage->dtype, offsets[l]);
    }
  }
  return KILN_OK;
}

/* ---- expressions ---- */

static kiln_status_t eval_select(interp_t *in, const kiln_tir_select_t *n, kiln_tir_value_t *out) {
  kiln_tir_value_t c, t;
  KILN_RETURN_IF_ERROR(eval(in, n->condition, &c));
  KILN_RETURN_IF_ERROR(eval(in, n->true_value, &t));
  KILN_RETURN_IF_ERROR(eval(in, n->false_value, out));
  for (int l = 0; l < out->dtype.lanes; ++l) {
    if (c.lanes.i[c.dtype.lanes == 1 ? 0 : l]) {
      out->lanes.i[l] = t.lanes.i[l]; /* copies the bits of either member */
    }
  }
  return KILN_OK;
}

static kiln_status_t eval_ramp(interp_t *in, const kiln_tir_ramp_t *n, kiln_tir_value_t *out) {
  int64_t start = 0, stride = 0;
  KILN_RETURN_IF_ERROR(eval_scalar_int(in, n->start, &start));
  KILN_RETURN_IF_ERROR(eval_scalar_int(in, n->stride, &stride));
  out->dtype = n->base.dtype;
  for (int l = 0; l < out->dtype.lanes; ++l) {
    uint64_t v = (uint64_t)start + (uint64_t)l * (uint64_t)stride;
    out->lanes.i[l] = kiln_tir_value_wrap_int(out->dtype.base, (int64_t)v);
  }
  return KILN_OK;
}

static kiln_status_t eval_call(interp_t *in, const kiln_tir_call_t *n, kiln_tir_value_t *out) {
  kiln_tir_value_t args[3];
  for (int i = 0; i < n->num_args; ++i) {
    KILN_RETURN_IF_ERROR(eval(in, n->args[i], &args[i]));
  }
  kiln_tir_value_call(n->op, n->num_args, args, out);
  return KILN_OK;
}

static kiln_status_t eval_let(interp_t *in, const kiln_tir_let_t *n, kiln_tir_value_t *out) {
  kiln_tir_value_t value;
  KILN_RETURN_IF_ERROR(eval(in, n->value, &value));
  KILN_RETURN_IF_ERROR(bind(in, n->var, &value));
  kiln_status_t status = eval(in, n->body, out);
  unbind(in);
  return status;
}

static kiln_status_t eval_var(interp_t *in, const kiln_tir_var_t *var, kiln_tir_value_t *out) {
  const binding_t *b = lookup(in, var);
  if (!b) {
    return KILN_STATUS(FAILED_PRECONDITION, "variable %s is not bound", var->name);
  }
  *out = b->value;
  return KILN_OK;
}

static kiln_status_t eval_binary(interp_t *in, const kiln_tir_binary_t *n, kiln_tir_value_t *out) {
  kiln_tir_value_t a, b;
  KILN_RETURN_IF_ERROR(eval(in, n->a, &a));
  KILN_RETURN_IF_ERROR(eval(in, n->b, &b));
  return kiln_tir_value_binary(n->base.kind, &a, &b, n->base.dtype, out);
}

static kiln_status_t eval(interp_t *in, const kiln_tir_expr_t *e, kiln_tir_value_t *out) {
  if (kiln_tir_expr_kind_is_binary(e->kind)) {
    return eval_binary(in, (const void *)e, out);
  }
  switch (e->kind) {
  case KILN_TIR_EXPR_INT_IMM:
    KILN_RETURN_IF_ERROR(kiln_tir_value_check_dtype(e->dtype));
    scalar_int(e->dtype, ((const kiln_tir_int_imm_t *)e)->value, out);
    return KILN_OK;
  case KILN_TIR_EXPR_FLOAT_IMM:
    KILN_RETURN_IF_ERROR(kiln_tir_value_check_dtype(e->dtype));
    out->dtype = e->dtype;
    out->lanes.f[0] =
        kiln_tir_value_round_float(e->dtype.base, ((const kiln_tir_float_imm_t *)e)->value);
    return KILN_OK;
  case KILN_TIR_EXPR_VAR:
    return eval_var(in, (const void *)e, out);
  case KILN_TIR_EXPR_NOT:
    KILN_RETURN_IF_ERROR(eval(in, ((const kiln_tir_not_t *)e)->a, out));
    for (int l = 0; l < out->dtype.lanes; ++l) {
      out->lanes.i[l] = !out->lanes.i[l];
    }
    return KILN_OK;
  case KILN_TIR_EXPR_SELECT:
    return eval_select(in, (const void *)e, out);
  case KILN_TIR_EXPR_CAST: {
    kiln_tir_value_t value;
    KILN_RETURN_IF_ERROR(eval(in, ((const kiln_tir_cast_t *)e)->value, &value));
    return kiln_tir_value_cast(e->dtype, &value, out);
  }
  case KILN_TIR_EXPR_BUFFER_LOAD:
    return eval_load(in, (const void *)e, out);
  case KILN_TIR_EXPR_RAMP:
    return eval_ramp(in, (const void *)e, out);
  case KILN_TIR_EXPR_BROADCAST: {
    kiln_tir_value_t value;
    KILN_RETURN_IF_ERROR(eval(in, ((const kiln_tir_broadcast_t *)e)->value, &value));
    out->dtype = e->dtype;
    for (int l = 0; l < e->dtype.lanes; ++l) {
      out->lanes.i[l] = value.lanes.i[0];
    }
    return KILN_OK;
  }
  case KILN_TIR_EXPR_CALL:
    return eval_call(in, (const void *)e, out);
  case KILN_TIR_EXPR_LET:
    return eval_let(in, (const void *)e, out);
  case KILN_TIR_EXPR_ADD:
  case KILN_TIR_EXPR_SUB:
  case KILN_TIR_EXPR_MUL:
  case KILN_TIR_EXPR_DIV:
  case KILN_TIR_EXPR_FLOOR_DIV:
  case KILN_TIR_EXPR_FLOOR_MOD:
  case KILN_TIR_EXPR_MIN:
  case KILN_TIR_EXPR_MAX:
  case KILN_TIR_EXPR_EQ:
  case KILN_TIR_EXPR_NE:
  case KILN_TIR_EXPR_LT:
  case KILN_TIR_EXPR_LE:
  case KILN_TIR_EXPR_GT:
  case KILN_TIR_EXPR_GE:
  case KILN_TIR_EXPR_AND:
  case KILN_TIR_EXPR_OR:
  case KILN_TIR_EXPR_KIND_COUNT_:
    break;
  }
  return KILN_STATUS(INTERNAL, "interp: invalid expression kind %d", (int)e->kind);
}

/* ---- statements ---- */

static kiln_status_t exec_for(interp_t *in, const kiln_tir_for_t *n) {
  int64_t min = 0, extent = 0;
  KILN_RETURN_IF_ERROR(eval_scalar_int(in, n->min, &min));
  KILN_RETURN_IF_ERROR(eval_scalar_int(in, n->extent, &extent));
  kiln_tir_value_t value;
  scalar_int(n->var->base.dtype, min, &value);
  KILN_RETURN_IF_ERROR(bind(in, n->var, &value));
  kiln_status_t status = KILN_OK;
  for (int64_t i = 0; i < extent && !status; ++i) {
    binding_t *b = kiln_array_at(&in->bindings, kiln_array_count(&in->bindings) - 1);
    b->value.lanes.i[0] =
        kiln_tir_value_wrap_int(n->var->base.dtype.base, (int64_t)((uint64_t)min + (uint64_t)i));
    status = exec(in, n->body);
  }
  unbind(in);
  return status;
}

static kiln_status_t exec_store(interp_t *in, const kiln_tir_buffer_store_t *n) {
  KILN_RETURN_IF_ERROR(kiln_tir_value_check_dtype(n->value->dtype));
  kiln_tir_value_t value;
  KILN_RETURN_IF_ERROR(eval(in, n->value, &value));
  int64_t offsets[KILN_TIR_MAX_LANES];
  const storage_t *storage = NULL;
  KILN_RETURN_IF_ERROR(flat_offsets(in, "BufferStore", n->buffer, n->num_indices, n->indices,
                                    value.dtype.lanes, &storage, offsets));
  for (int l = 0; l < value.dtype.lanes; ++l) {
    write_element(storage->bytes, storage->dtype, offsets[l], &value, l);
    if (storage->written) {
      storage->written[offsets[l]] = 1;
    }
  }
  return KILN_OK;
}

static kiln_status_t exec_allocate(interp_t *in, const kiln_tir_allocate_t *n) {
  const kiln_tir_buffer_t *buffer = n->buffer;
  KILN_RETURN_IF_ERROR(kiln_tir_value_check_dtype(kiln_tir_scalar(buffer->dtype)));
  int64_t shape[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < buffer->ndim; ++d) {
    KILN_RETURN_IF_ERROR(eval_scalar_int(in, buffer->shape[d], &shape[d]));
  }
  storage_t storage = {.data = buffer->data, .dtype = buffer->dtype};
  size_t bytes = 0;
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_shape_element_count(buffer->ndim, shape, &storage.count),
                                "Allocate %s", buffer->name);
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_shape_byte_size(buffer->dtype, buffer->ndim, shape, &bytes),
                                "Allocate %s", buffer->name);
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(in->allocator, bytes, &storage.bytes));
  kiln_status_t status = KILN_OK;
  if (n->init == KILN_TIR_INIT_NONE) {
    status = kiln_allocator_malloc_zeroed(in->allocator, (size_t)storage.count,
                                          (void **)&storage.written);
  }
  if (!status) {
    status = kiln_array_push(&in->storages, &storage);
  }
  if (!status) {
    status = exec(in, n->body);
    (void)kiln_array_pop(&in->storages, NULL);
  }
  kiln_allocator_free(in->allocator, storage.written);
  kiln_allocator_free(in->allocator, storage.bytes);
  return status;
}

static kiln_status_t exec_let(interp_t *in, const kiln_tir_let_stmt_t *n) {
  kiln_tir_value_t value;
  KILN_RETURN_IF_ERROR(eval(in, n->value, &value));
  KILN_RETURN_IF_ERROR(bind(in, n->var, &value));
  kiln_status_t status = exec(in, n->body);
  unbind(in);
  return status;
}

static kiln_status_t exec(interp_t *in, const kiln_tir_stmt_t *s) {
  kiln_tir_value_t value;
  switch (s->kind) {
  case KILN_TIR_STMT_FOR:
    return exec_for(in, (const void *)s);
  case KILN_TIR_STMT_BUFFER_STORE:
    return exec_store(in, (const void *)s);
  case KILN_TIR_STMT_ALLOCATE:
    return exec_allocate(in, (const void *)s);
  case KILN_TIR_STMT_SEQ: {
    const kiln_tir_seq_t *n = (const void *)s;
    for (int i = 0; i < n->count; ++i) {
      KILN_RETURN_IF_ERROR(exec(in, n->stmts[i]));
    }
    return KILN_OK;
  }
  case KILN_TIR_STMT_IF_THEN_ELSE: {
    const kiln_tir_if_then_else_t *n = (const void *)s;
    KILN_RETURN_IF_ERROR(eval(in, n->condition, &value));
    if (value.lanes.i[0]) {
      return exec(in, n->then_case);
    }
    return n->else_case ? exec(in, n->else_case) : KILN_OK;
  }
  case KILN_TIR_STMT_LET_STMT:
    return exec_let(in, (const void *)s);
  case KILN_TIR_STMT_EVALUATE:
    return eval(in, ((const kiln_tir_evaluate_t *)s)->value, &value);
  case KILN_TIR_STMT_PREFETCH: /* the load's indices are checked; nothing else happens */
    return eval(in, ((const kiln_tir_prefetch_t *)s)->load, &value);
  case KILN_TIR_STMT_ASSERT: {
    const kiln_tir_assert_t *n = (const void *)s;
    KILN_RETURN_IF_ERROR(eval(in, n->condition, &value));
    if (!value.lanes.i[0]) {
      return KILN_STATUS(INVALID_ARGUMENT, "assertion failed: %s", n->message);
    }
    return exec(in, n->body);
  }
  case KILN_TIR_STMT_KIND_COUNT_:
    break;
  }
  return KILN_STATUS(INTERNAL, "interp: invalid statement kind %d", (int)s->kind);
}

/* ---- arguments ---- */

static kiln_status_t bind_param(interp_t *in, const kiln_tir_buffer_t *buffer,
                                kiln_tensor_t *tensor) {
  if (kiln_tensor_dtype(tensor) != buffer->dtype) {
    return KILN_STATUS(INVALID_ARGUMENT, "buffer %s is %s but its tensor is %s", buffer->name,
                       kiln_dtype_name(buffer->dtype), kiln_dtype_name(kiln_tensor_dtype(tensor)));
  }
  KILN_RETURN_IF_ERROR(kiln_tir_value_check_dtype(kiln_tir_scalar(buffer->dtype)));
  if (kiln_tensor_ndim(tensor) != buffer->ndim) {
    return KILN_STATUS(INVALID_ARGUMENT, "buffer %s has %d dims but its tensor has %d",
                       buffer->name, buffer->ndim, kiln_tensor_ndim(tensor));
  }
  const int64_t *shape = kiln_tensor_shape(tensor);
  for (int d = 0; d < buffer->ndim; ++d) {
    const kiln_tir_expr_t *dim = buffer->shape[d];
    if (dim->kind == KILN_TIR_EXPR_VAR && !lookup(in, (const kiln_tir_var_t *)dim)) {
      kiln_tir_value_t value;
      scalar_int(dim->dtype, shape[d], &value);
      KILN_RETURN_IF_ERROR(bind(in, (const kiln_tir_var_t *)dim, &value));
      continue;
    }
    int64_t expected = 0;
    KILN_RETURN_IF_ERROR(eval_scalar_int(in, dim, &expected));
    if (expected != shape[d]) {
      return KILN_STATUS(INVALID_ARGUMENT, "buffer %s dim %d is %lld but its tensor's is %lld",
                         buffer->name, d, (long long)expected, (long long)shape[d]);
    }
  }
  storage_t storage = {.data = buffer->data,
                       .bytes = kiln_tensor_data(tensor),
                       .dtype = buffer->dtype,
                       .count = kiln_tensor_element_count(tensor)};
  return kiln_array_push(&in->storages, &storage);
}

static kiln_status_t run(interp_t *in, const kiln_tir_prim_func_t *func, int num_args,
                         kiln_tensor_t *const *args) {
  if (num_args != func->num_params) {
    return KILN_STATUS(INVALID_ARGUMENT, "expected %d arguments, got %d", func->num_params,
                       num_args);
  }
  for (int i = 0; i < num_args; ++i) {
    if (!args[i]) {
      return KILN_STATUS(INVALID_ARGUMENT, "argument %d is null", i);
    }
    KILN_RETURN_IF_ERROR(bind_param(in, func->params[i], args[i]));
  }
  return exec(in, func->body);
}

kiln_status_t kiln_tir_interp_run(kiln_allocator_t allocator, const kiln_tir_prim_func_t *func,
                                  int num_args, kiln_tensor_t *const *args) {
  if (!func) {
    return KILN_STATUS(INVALID_ARGUMENT, "interp: null function");
  }
  interp_t in;
  in.allocator = allocator;
  kiln_array_initialize(&in.bindings, allocator, sizeof(binding_t));
  kiln_array_initialize(&in.storages, allocator, sizeof(storage_t));
  kiln_status_t status = run(&in, func, num_args, args);
  kiln_array_deinitialize(&in.bindings);
  kiln_array_deinitialize(&in.storages);
  return kiln_status_annotate(status, "%s", func->name);
}
