/*
 * Graph IR types; see type.h. Constructors validate and copy into the arena;
 * equality and formatting recurse through tuples.
 */
#include "ir/type.h"

#include <stdio.h>
#include <string.h>

kiln_status_t kiln_tensor_type_create(kiln_arena_t *arena, kiln_dtype_t dtype, int ndim,
                                      const int64_t *shape, const kiln_type_t **out_type) {
  *out_type = NULL;
  if ((unsigned)dtype >= KILN_DTYPE_COUNT_) {
    return KILN_STATUS(INVALID_ARGUMENT, "tensor type: dtype %d is not a kiln dtype", (int)dtype);
  }
  int64_t count = 0;
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_shape_element_count(ndim, shape, &count), "tensor type");
  kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate(arena, sizeof(*type), _Alignof(kiln_tensor_type_t), (void **)&type));
  int64_t *dims = NULL;
  if (ndim > 0) {
    KILN_RETURN_IF_ERROR(kiln_arena_allocate(arena, sizeof(int64_t) * (size_t)ndim,
                                             _Alignof(int64_t), (void **)&dims));
    memcpy(dims, shape, sizeof(int64_t) * (size_t)ndim);
  }
  type->base.kind = KILN_TYPE_KIND_TENSOR;
  type->dtype = dtype;
  type->ndim = ndim;
  type->shape = dims;
  *out_type = &type->base;
  return KILN_OK;
}

kiln_status_t kiln_tensor_type_of(kiln_arena_t *arena, const kiln_tensor_t *tensor,
                                  const kiln_type_t **out_type) {
  return kiln_tensor_type_create(arena, kiln_tensor_dtype(tensor), kiln_tensor_ndim(tensor),
                                 kiln_tensor_shape(tensor), out_type);
}

kiln_status_t kiln_tuple_type_create(kiln_arena_t *arena, int count,
                                     const kiln_type_t *const *fields,
                                     const kiln_type_t **out_type) {
  *out_type = NULL;
  if (count < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "tuple type: %d fields", count);
  }
  for (int i = 0; i < count; ++i) {
    if (!fields[i]) {
      return KILN_STATUS(INVALID_ARGUMENT, "tuple type: field %d has no type", i);
    }
  }
  kiln_tuple_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate(arena, sizeof(*type), _Alignof(kiln_tuple_type_t), (void **)&type));
  const kiln_type_t **copy = NULL;
  if (count > 0) {
    KILN_RETURN_IF_ERROR(kiln_arena_allocate(arena, sizeof(*copy) * (size_t)count,
                                             _Alignof(kiln_type_t *), (void **)&copy));
    memcpy(copy, fields, sizeof(*copy) * (size_t)count);
  }
  type->base.kind = KILN_TYPE_KIND_TUPLE;
  type->count = count;
  type->fields = copy;
  *out_type = &type->base;
  return KILN_OK;
}

const kiln_tensor_type_t *kiln_type_as_tensor(const kiln_type_t *type) {
  return type && type->kind == KILN_TYPE_KIND_TENSOR ? (const kiln_tensor_type_t *)type : NULL;
}

const kiln_tuple_type_t *kiln_type_as_tuple(const kiln_type_t *type) {
  return type && type->kind == KILN_TYPE_KIND_TUPLE ? (const kiln_tuple_type_t *)type : NULL;
}

bool kiln_type_equal(const kiln_type_t *a, const kiln_type_t *b) {
  if (a == b) {
    return true;
  }
  if (!a || !b || a->kind != b->kind) {
    return false;
  }
  const kiln_tensor_type_t *ta = kiln_type_as_tensor(a);
  if (ta) {
    const kiln_tensor_type_t *tb = kiln_type_as_tensor(b);
    return ta->dtype == tb->dtype && kiln_shape_equal(ta->ndim, ta->shape, tb->ndim, tb->shape);
  }
  const kiln_tuple_type_t *ua = kiln_type_as_tuple(a);
  const kiln_tuple_type_t *ub = kiln_type_as_tuple(b);
  if (ua->count != ub->count) {
    return false;
  }
  for (int i = 0; i < ua->count; ++i) {
    if (!kiln_type_equal(ua->fields[i], ub->fields[i])) {
      return false;
    }
  }
  return true;
}

kiln_status_t kiln_type_format(const kiln_type_t *type, kiln_strbuf_t *sb) {
  if (!type) {
    return kiln_strbuf_append(sb, "?");
  }
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(type);
  if (tensor) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "Tensor[("));
    for (int i = 0; i < tensor->ndim; ++i) {
      KILN_RETURN_IF_ERROR(
          kiln_strbuf_appendf(sb, "%s%lld", i ? ", " : "", (long long)tensor->shape[i]));
    }
    return kiln_strbuf_appendf(sb, "), %s]", kiln_dtype_name(tensor->dtype));
  }
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '('));
  for (int i = 0; i < tuple->count; ++i) {
    if (i) {
      KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, ", "));
    }
    KILN_RETURN_IF_ERROR(kiln_type_format(tuple->fields[i], sb));
  }
  return kiln_strbuf_append_char(sb, ')');
}

const char *kiln_type_text(const kiln_type_t *type, char *buffer) {
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  kiln_status_t status = kiln_type_format(type, &sb);
  if (status != NULL) {
    kiln_status_free(status);
    snprintf(buffer, KILN_IR_TYPE_TEXT_CAPACITY, "<type>");
  } else if (kiln_strbuf_length(&sb) >= KILN_IR_TYPE_TEXT_CAPACITY) {
    snprintf(buffer, KILN_IR_TYPE_TEXT_CAPACITY, "%.*s...", KILN_IR_TYPE_TEXT_CAPACITY - 4,
             kiln_strbuf_c_str(&sb));
  } else {
    snprintf(buffer, KILN_IR_TYPE_TEXT_CAPACITY, "%s", kiln_strbuf_c_str(&sb));
  }
  kiln_strbuf_deinitialize(&sb);
  return buffer;
}
