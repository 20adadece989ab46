/*
 * Graph IR types; see type.h. Constructors validate and copy into the arena;
 * equality and formatting recurse through tuples. A symbolic dim is stored as
 * -1 in the shape array plus its variable, so shape equality alone already
 * tells a static dim from a symbolic one and the variables decide the rest.
 */
#include "ir/type.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

kiln_status_t kiln_dim_var_create(kiln_arena_t *arena, const char *name, int64_t upper_bound,
                                  const kiln_dim_var_t **out_var) {
  *out_var = NULL;
  if (!name) {
    return KILN_STATUS(INVALID_ARGUMENT, "dim var: no name (\"\" for an anonymous one)");
  }
  for (size_t i = 0; name[i]; ++i) {
    bool letter = isalpha((unsigned char)name[i]) || name[i] == '_';
    if (!letter && (i == 0 || !isdigit((unsigned char)name[i]))) {
      return KILN_STATUS(INVALID_ARGUMENT, "dim var: \"%s\" is not an identifier", name);
    }
  }
  if (upper_bound < -1) {
    return KILN_STATUS(INVALID_ARGUMENT, "dim var %s: upper bound %lld is negative", name,
                       (long long)upper_bound);
  }
  kiln_dim_var_t *var = NULL;
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate(arena, sizeof(*var), _Alignof(kiln_dim_var_t), (void **)&var));
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(arena, name, &copy));
  var->name = copy;
  var->upper_bound = upper_bound;
  *out_var = var;
  return KILN_OK;
}

static bool any_symbolic(int ndim, const kiln_dim_var_t *const *vars) {
  for (int i = 0; vars && i < ndim; ++i) {
    if (vars[i]) {
      return true;
    }
  }
  return false;
}

/* Checks the static dims (a symbolic one counts as 1) and the rank. */
static kiln_status_t check_dims(int ndim, const int64_t *shape, const kiln_dim_var_t *const *vars) {
  int64_t known[KILN_MAX_RANK];
  int count_dims = ndim > 0 && ndim <= KILN_MAX_RANK ? ndim : 0;
  for (int i = 0; i < count_dims; ++i) {
    known[i] = vars && vars[i] ? 1 : shape[i];
  }
  int64_t count = 0;
  return kiln_shape_element_count(ndim, count_dims ? known : shape, &count);
}

static kiln_status_t copy_vars(kiln_arena_t *arena, int ndim, const kiln_dim_var_t *const *vars,
                               int64_t *dims, const kiln_dim_var_t *const **out_vars) {
  *out_vars = NULL;
  if (!any_symbolic(ndim, vars)) {
    return KILN_OK;
  }
  const kiln_dim_var_t **copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(arena, sizeof(*copy) * (size_t)ndim,
                                           _Alignof(kiln_dim_var_t *), (void **)&copy));
  for (int i = 0; i < ndim; ++i) {
    copy[i] = vars[i];
    dims[i] = vars[i] ? -1 : dims[i];
  }
  *out_vars = copy;
  return KILN_OK;
}

kiln_status_t kiln_tensor_type_create_symbolic(kiln_arena_t *arena, kiln_dtype_t dtype, int ndim,
                                               const int64_t *shape,
                                               const kiln_dim_var_t *const *vars,
                                               const kiln_type_t **out_type) {
  *out_type = NULL;
  if ((unsigned)dtype >= KILN_DTYPE_COUNT_) {
    return KILN_STATUS(INVALID_ARGUMENT, "tensor type: dtype %d is not a kiln dtype", (int)dtype);
  }
  KILN_RETURN_IF_ERROR_ANNOTATE(check_dims(ndim, shape, vars), "tensor type");
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
  KILN_RETURN_IF_ERROR(copy_vars(arena, ndim, vars, dims, &type->vars));
  *out_type = &type->base;
  return KILN_OK;
}

kiln_status_t kiln_tensor_type_create(kiln_arena_t *arena, kiln_dtype_t dtype, int ndim,
                                      const int64_t *shape, const kiln_type_t **out_type) {
  return kiln_tensor_type_create_symbolic(arena, dtype, ndim, shape, NULL, out_type);
}

bool kiln_tensor_type_is_static(const kiln_tensor_type_t *type) {
  return !any_symbolic(type->ndim, type->vars);
}

const kiln_dim_var_t *kiln_type_first_symbolic(const kiln_type_t *type, int *out_dim) {
  *out_dim = -1;
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(type);
  for (int i = 0; tensor && tensor->vars && i < tensor->ndim; ++i) {
    if (tensor->vars[i]) {
      *out_dim = i;
      return tensor->vars[i];
    }
  }
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  for (int i = 0; tuple && i < tuple->count; ++i) {
    const kiln_dim_var_t *var = kiln_type_first_symbolic(tuple->fields[i], out_dim);
    if (var) {
      return var;
    }
  }
  return NULL;
}

bool kiln_type_is_static(const kiln_type_t *type) {
  int dim = 0;
  return kiln_type_first_symbolic(type, &dim) == NULL;
}

bool kiln_dim_var_equal(const kiln_dim_var_t *a, const kiln_dim_var_t *b) {
  if (a == b) {
    return true;
  }
  return a && b && strcmp(a->name, b->name) == 0;
}

const char *kiln_dim_var_text(const kiln_dim_var_t *var) {
  return var->name[0] ? var->name : "?";
}

static bool tensor_types_equal(const kiln_tensor_type_t *a, const kiln_tensor_type_t *b) {
  if (a->dtype != b->dtype || !kiln_shape_equal(a->ndim, a->shape, b->ndim, b->shape)) {
    return false;
  }
  for (int i = 0; (a->vars || b->vars) && i < a->ndim; ++i) {
    const kiln_dim_var_t *va = a->vars ? a->vars[i] : NULL;
    const kiln_dim_var_t *vb = b->vars ? b->vars[i] : NULL;
    if (!kiln_dim_var_equal(va, vb)) {
      return false;
    }
  }
  return true;
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

kiln_status_t kiln_sequence_type_create(kiln_arena_t *arena, kiln_dtype_t dtype,
                                        const kiln_type_t *element, const kiln_type_t **out_type) {
  *out_type = NULL;
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(element);
  if (element != NULL && (tensor == NULL || tensor->dtype != dtype)) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "sequence type of %s: the element type is %s",
                       kiln_dtype_name(dtype), kiln_type_text(element, text));
  }
  kiln_sequence_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate(arena, sizeof(*type), _Alignof(kiln_sequence_type_t), (void **)&type));
  type->base.kind = KILN_TYPE_KIND_SEQUENCE;
  type->dtype = dtype;
  type->element = element;
  *out_type = &type->base;
  return KILN_OK;
}

kiln_status_t kiln_optional_type_create(kiln_arena_t *arena, const kiln_type_t *element,
                                        const kiln_type_t **out_type) {
  *out_type = NULL;
  if (kiln_type_as_tensor(element) == NULL && kiln_type_as_sequence(element) == NULL) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "optional type of %s: expected a tensor or sequence type",
                       kiln_type_text(element, text));
  }
  kiln_optional_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate(arena, sizeof(*type), _Alignof(kiln_optional_type_t), (void **)&type));
  type->base.kind = KILN_TYPE_KIND_OPTIONAL;
  type->element = element;
  *out_type = &type->base;
  return KILN_OK;
}

kiln_status_t kiln_func_type_create(kiln_arena_t *arena, int num_params,
                                    const kiln_type_t *const *params, const kiln_type_t *ret,
                                    const kiln_type_t **out_type) {
  const kiln_type_t *tuple = NULL;
  KILN_RETURN_IF_ERROR(kiln_tuple_type_create(arena, num_params, params, &tuple));
  kiln_func_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate(arena, sizeof(*type), _Alignof(kiln_func_type_t), (void **)&type));
  type->base.kind = KILN_TYPE_KIND_FUNC;
  type->num_params = num_params;
  type->params = kiln_type_as_tuple(tuple)->fields;
  type->ret = ret;
  *out_type = &type->base;
  return KILN_OK;
}

const kiln_tensor_type_t *kiln_type_as_tensor(const kiln_type_t *type) {
  return type && type->kind == KILN_TYPE_KIND_TENSOR ? (const kiln_tensor_type_t *)type : NULL;
}

const kiln_tuple_type_t *kiln_type_as_tuple(const kiln_type_t *type) {
  return type && type->kind == KILN_TYPE_KIND_TUPLE ? (const kiln_tuple_type_t *)type : NULL;
}

const kiln_sequence_type_t *kiln_type_as_sequence(const kiln_type_t *type) {
  return type && type->kind == KILN_TYPE_KIND_SEQUENCE ? (const kiln_sequence_type_t *)type : NULL;
}

const kiln_optional_type_t *kiln_type_as_optional(const kiln_type_t *type) {
  return type && type->kind == KILN_TYPE_KIND_OPTIONAL ? (const kiln_optional_type_t *)type : NULL;
}

const kiln_func_type_t *kiln_type_as_func(const kiln_type_t *type) {
  return type && type->kind == KILN_TYPE_KIND_FUNC ? (const kiln_func_type_t *)type : NULL;
}

bool kiln_type_has_sequence_or_optional(const kiln_type_t *type) {
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  for (int i = 0; tuple != NULL && i < tuple->count; ++i) {
    if (kiln_type_has_sequence_or_optional(tuple->fields[i]))
      return true;
  }
  return kiln_type_as_sequence(type) != NULL || kiln_type_as_optional(type) != NULL;
}

static bool kiln_type_list_equal(int count, const kiln_type_t *const *a,
                                 const kiln_type_t *const *b) {
  for (int i = 0; i < count; ++i) {
    if (!kiln_type_equal(a[i], b[i])) {
      return false;
    }
  }
  return true;
}

/* Equality of two non-NULL types of the same kind. */
static bool kiln_type_equal_same_kind(const kiln_type_t *a, const kiln_type_t *b) {
  switch (a->kind) {
  case KILN_TYPE_KIND_TENSOR: {
    return tensor_types_equal(kiln_type_as_tensor(a), kiln_type_as_tensor(b));
  }
  case KILN_TYPE_KIND_TUPLE: {
    const kiln_tuple_type_t *ua = kiln_type_as_tuple(a), *ub = kiln_type_as_tuple(b);
    return ua->count == ub->count && kiln_type_list_equal(ua->count, ua->fields, ub->fields);
  }
  case KILN_TYPE_KIND_SEQUENCE: {
    const kiln_sequence_type_t *sa = kiln_type_as_sequence(a), *sb = kiln_type_as_sequence(b);
    return sa->dtype == sb->dtype && kiln_type_equal(sa->element, sb->element);
  }
  case KILN_TYPE_KIND_OPTIONAL:
    return kiln_type_equal(kiln_type_as_optional(a)->element, kiln_type_as_optional(b)->element);
  case KILN_TYPE_KIND_FUNC: {
    const kiln_func_type_t *fa = kiln_type_as_func(a), *fb = kiln_type_as_func(b);
    return fa->num_params == fb->num_params && kiln_type_equal(fa->ret, fb->ret) &&
           kiln_type_list_equal(fa->num_params, fa->params, fb->params);
  }
  }
  return false;
}

bool kiln_type_equal(const kiln_type_t *a, const kiln_type_t *b) {
  if (a == b) {
    return true;
  }
  if (!a || !b || a->kind != b->kind) {
    return false;
  }
  return kiln_type_equal_same_kind(a, b);
}

static kiln_status_t kiln_type_join_tuple(kiln_arena_t *arena, const kiln_tuple_type_t *a,
                                          const kiln_tuple_type_t *b,
                                          const kiln_type_t **out_type) {
  const kiln_type_t **fields = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(arena, sizeof(*fields) * (size_t)(a->count + 1),
                                           _Alignof(kiln_type_t *), (void **)&fields));
  for (int i = 0; i < a->count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_type_join(arena, a->fields[i], b->fields[i], &fields[i]));
  }
  return kiln_tuple_type_create(arena, a->count, fields, out_type);
}

/* Dim `d` of a tensor type is that of `other` (the same size or variable). */
static bool kiln_type_same_dim(const kiln_tensor_type_t *a, const kiln_tensor_type_t *b, int d) {
  const kiln_dim_var_t *va = a->vars ? a->vars[d] : NULL, *vb = b->vars ? b->vars[d] : NULL;
  if (va || vb)
    return va && vb && kiln_dim_var_equal(va, vb);
  return a->shape[d] == b->shape[d];
}

/* Tensors of one dtype and rank: dims that differ become anonymous symbolic
 * dims, each its own (they need not be equal to each other). */
static kiln_status_t kiln_type_join_tensor(kiln_arena_t *arena, const kiln_tensor_type_t *a,
                                           const kiln_tensor_type_t *b,
                                           const kiln_type_t **out_type) {
  const kiln_dim_var_t *vars[KILN_MAX_RANK];
  for (int d = 0; d < a->ndim; ++d) {
    vars[d] = a->vars ? a->vars[d] : NULL;
    if (!kiln_type_same_dim(a, b, d))
      KILN_RETURN_IF_ERROR(kiln_dim_var_create(arena, "", -1, &vars[d]));
  }
  return kiln_tensor_type_create_symbolic(arena, a->dtype, a->ndim, a->shape, vars, out_type);
}

/* Sequences of one dtype: of the join of their element types when both
 * are known and of one rank, else of shapes known at run time. */
static kiln_status_t kiln_type_join_sequence(kiln_arena_t *arena, const kiln_sequence_type_t *a,
                                             const kiln_sequence_type_t *b,
                                             const kiln_type_t **out_type) {
  const kiln_tensor_type_t *ea = kiln_type_as_tensor(a->element);
  const kiln_tensor_type_t *eb = kiln_type_as_tensor(b->element);
  const kiln_type_t *element = NULL;
  if (ea && eb && ea->dtype == eb->dtype && ea->ndim == eb->ndim)
    KILN_RETURN_IF_ERROR(kiln_type_join_tensor(arena, ea, eb, &element));
  return kiln_sequence_type_create(arena, a->dtype, element, out_type);
}

kiln_status_t kiln_type_join(kiln_arena_t *arena, const kiln_type_t *a, const kiln_type_t *b,
                             const kiln_type_t **out_type) {
  *out_type = a;
  if (kiln_type_equal(a, b))
    return KILN_OK;
  const kiln_tensor_type_t *ea = kiln_type_as_tensor(a), *eb = kiln_type_as_tensor(b);
  if (ea && eb && ea->dtype == eb->dtype && ea->ndim == eb->ndim)
    return kiln_type_join_tensor(arena, ea, eb, out_type);
  const kiln_sequence_type_t *sa = kiln_type_as_sequence(a), *sb = kiln_type_as_sequence(b);
  if (sa && sb && sa->dtype == sb->dtype)
    return kiln_type_join_sequence(arena, sa, sb, out_type);
  const kiln_optional_type_t *oa = kiln_type_as_optional(a), *ob = kiln_type_as_optional(b);
  if (oa || ob) { /* a value is an optional that holds it, as ONNX passes one */
    const kiln_type_t *element = NULL;
    KILN_RETURN_IF_ERROR(
        kiln_type_join(arena, oa ? oa->element : a, ob ? ob->element : b, &element));
    return kiln_optional_type_create(arena, element, out_type);
  }
  const kiln_tuple_type_t *ta = kiln_type_as_tuple(a), *tb = kiln_type_as_tuple(b);
  if (ta && tb && ta->count == tb->count)
    return kiln_type_join_tuple(arena, ta, tb, out_type);
  char a_text[KILN_IR_TYPE_TEXT_CAPACITY], b_text[KILN_IR_TYPE_TEXT_CAPACITY];
  return KILN_STATUS(INVALID_ARGUMENT, "%s and %s have no common type", kiln_type_text(a, a_text),
                     kiln_type_text(b, b_text));
}

static kiln_status_t kiln_type_format_list(int count, const kiln_type_t *const *types,
                                           kiln_strbuf_t *sb) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '('));
  for (int i = 0; i < count; ++i) {
    if (i) {
      KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, ", "));
    }
    KILN_RETURN_IF_ERROR(kiln_type_format(types[i], sb));
  }
  return kiln_strbuf_append_char(sb, ')');
}

static kiln_status_t kiln_type_format_sequence(const kiln_sequence_type_t *sequence,
                                               kiln_strbuf_t *sb) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "Sequence["));
  if (sequence->element) {
    KILN_RETURN_IF_ERROR(kiln_type_format(sequence->element, sb));
  } else {
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, kiln_dtype_name(sequence->dtype)));
  }
  return kiln_strbuf_append_char(sb, ']');
}

static kiln_status_t format_dim(const kiln_tensor_type_t *tensor, int i, kiln_strbuf_t *sb) {
  const char *separator = i ? ", " : "";
  const kiln_dim_var_t *var = tensor->vars ? tensor->vars[i] : NULL;
  if (!var) {
    return kiln_strbuf_appendf(sb, "%s%lld", separator, (long long)tensor->shape[i]);
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%s%s", separator, kiln_dim_var_text(var)));
  if (var->upper_bound >= 0) {
    return kiln_strbuf_appendf(sb, "<=%lld", (long long)var->upper_bound);
  }
  return KILN_OK;
}

static kiln_status_t kiln_type_format_tensor(const kiln_tensor_type_t *tensor, kiln_strbuf_t *sb) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "Tensor[("));
  for (int i = 0; i < tensor->ndim; ++i) {
    KILN_RETURN_IF_ERROR(format_dim(tensor, i, sb));
  }
  return kiln_strbuf_appendf(sb, "), %s]", kiln_dtype_name(tensor->dtype));
}

kiln_status_t kiln_type_format(const kiln_type_t *type, kiln_strbuf_t *sb) {
  if (!type) {
    return kiln_strbuf_append(sb, "?");
  }
  switch (type->kind) {
  case KILN_TYPE_KIND_TENSOR:
    return kiln_type_format_tensor(kiln_type_as_tensor(type), sb);
  case KILN_TYPE_KIND_TUPLE:
    return kiln_type_format_list(kiln_type_as_tuple(type)->count, kiln_type_as_tuple(type)->fields,
                                 sb);
  case KILN_TYPE_KIND_SEQUENCE:
    return kiln_type_format_sequence(kiln_type_as_sequence(type), sb);
  case KILN_TYPE_KIND_OPTIONAL:
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "Optional["));
    KILN_RETURN_IF_ERROR(kiln_type_format(kiln_type_as_optional(type)->element, sb));
    return kiln_strbuf_append_char(sb, ']');
  case KILN_TYPE_KIND_FUNC: {
    const kiln_func_type_t *func = kiln_type_as_func(type);
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "fn "));
    KILN_RETURN_IF_ERROR(kiln_type_format_list(func->num_params, func->params, sb));
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, " -> "));
    return kiln_type_format(func->ret, sb);
  }
  }
  return kiln_strbuf_append(sb, "<type>");
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
