/*
 * The packed function's argument checks (TVM's arg-count check that
 * calls the set-last-error hook); see emit.h.
 *
 * The checks and their messages are the C backend's (docs/codegen-c.md),
 * in the same order: the argument count, then per argument its type code,
 * non-NULL, device (CPU), dtype, rank, shape (a symbolic dim binds its
 * variable the first time it is seen), compact strides and the alignment of
 * data + byte_offset to the element size. Each is one compare and a branch
 * whose failure side is marked unlikely (kiln_llvm_check); the failure block
 * calls a cold prelude helper with the message's format, the function name
 * and argument number already written into it, and returns its -1.
 */
#include <stdio.h>
#include <string.h>

#include "codegen/llvm/emit.h"

typedef struct checker_t {
  kiln_llvm_t *ll;
  kiln_array_t vars;   /* const kiln_tir_var_t *: data pointers, then shape vars */
  kiln_array_t values; /* LLVMValueRef, parallel */
  kiln_array_t shape_vars;
  kiln_array_t shape_values;
} checker_t;

/* `text` with every '%' doubled (a printf format printing it), in the arena. */
static kiln_status_t escape(kiln_llvm_t *ll, const char *text, const char **out_text) {
  size_t length = strlen(text), percents = 0;
  for (size_t i = 0; i < length; ++i) {
    percents += text[i] == '%';
  }
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(&ll->arena, length + percents + 1, 1, (void **)&copy));
  size_t n = 0;
  for (size_t i = 0; i < length; ++i) {
    copy[n++] = text[i];
    if (text[i] == '%') {
      copy[n++] = '%';
    }
  }
  copy[n] = '\0';
  *out_text = copy;
  return KILN_OK;
}

/* The failure side of `ok_cond`: __kiln_fail(format, value), returned. */
static kiln_status_t check_int(kiln_llvm_t *ll, LLVMValueRef ok_cond, const char *what,
                               const char *format, LLVMValueRef value) {
  LLVMBasicBlockRef ok = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_check(ll, ok_cond, what, &ok));
  LLVMValueRef fail = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_prelude(ll, "__kiln_fail", &fail));
  LLVMValueRef args[] = {kiln_llvm_string(ll, format),
                         value ? value : LLVMConstInt(ll->t_i32, 0, 0)};
  LLVMValueRef result =
      LLVMBuildCall2(ll->builder, LLVMGetElementType(LLVMTypeOf(fail)), fail, args, 2, "");
  LLVMBuildRet(ll->builder, result);
  LLVMPositionBuilderAtEnd(ll->builder, ok);
  return KILN_OK;
}

/* Field `index` of the DLTensor (a pointer to it). */
static LLVMValueRef field(kiln_llvm_t *ll, LLVMValueRef tensor, unsigned index) {
  return LLVMBuildStructGEP2(ll->builder, ll->t_tensor, tensor, index, "");
}

static LLVMValueRef load(kiln_llvm_t *ll, LLVMTypeRef type, LLVMValueRef ptr, const char *name) {
  return LLVMBuildLoad2(ll->builder, type, ptr, name);
}

static kiln_status_t check_dtype(kiln_llvm_t *ll, const kiln_tir_buffer_t *buffer, int i,
                                 LLVMValueRef tensor) {
  const char *func = ll->func->name;
  LLVMBuilderRef b = ll->builder;
  DLDataType dl = kiln_dtype_to_dl(buffer->dtype);
  LLVMValueRef dtype = field(ll, tensor, 3);
  LLVMTypeRef dtype_type = LLVMStructGetTypeAtIndex(ll->t_tensor, 3);
  LLVMValueRef code = load(ll, ll->t_i8, LLVMBuildStructGEP2(b, dtype_type, dtype, 0, ""), "code");
  LLVMValueRef bits = load(ll, ll->t_i8, LLVMBuildStructGEP2(b, dtype_type, dtype, 1, ""), "bits");
  LLVMValueRef lanes =
      load(ll, ll->t_i16, LLVMBuildStructGEP2(b, dtype_type, dtype, 2, ""), "lanes");
  LLVMValueRef ok =
      LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, code, LLVMConstInt(ll->t_i8, dl.code, 0), ""),
                   LLVMBuildICmp(b, LLVMIntEQ, bits, LLVMConstInt(ll->t_i8, dl.bits, 0), ""), "");
  ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, lanes, LLVMConstInt(ll->t_i16, 1, 0), ""),
                    "");
  LLVMBasicBlockRef next = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_check(ll, ok, "dtype", &next));
  char one[512], many[512];
  const char *expected = kiln_dtype_name(buffer->dtype);
  snprintf(one, sizeof(one), "%s: argument %d has dtype %%s%%d, expected %s", func, i, expected);
  snprintf(many, sizeof(many), "%s: argument %d has dtype %%s%%dx%%d, expected %s", func, i,
           expected);
  LLVMValueRef fail = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_prelude(ll, "__kiln_fail_dtype", &fail));
  LLVMValueRef args[] = {kiln_llvm_string(ll, one), kiln_llvm_string(ll, many), code, bits, lanes};
  LLVMBuildRet(b, LLVMBuildCall2(b, LLVMGetElementType(LLVMTypeOf(fail)), fail, args, 5, ""));
  LLVMPositionBuilderAtEnd(b, next);
  return KILN_OK;
}

static int contains(const kiln_array_t *array, const kiln_tir_var_t *var) {
  for (size_t i = 0; i < kiln_array_count(array); ++i) {
    if (*(const kiln_tir_var_t *const *)kiln_array_at(array, i) == var) {
      return 1;
    }
  }
  return 0;
}

static kiln_status_t check_shape(checker_t *c, const kiln_tir_buffer_t *buffer, int i,
                                 LLVMValueRef tensor) {
  kiln_llvm_t *ll = c->ll;
  LLVMBuilderRef b = ll->builder;
  LLVMValueRef shape = load(ll, LLVMPointerType(ll->t_i64, 0), field(ll, tensor, 4), "shape");
  LLVMValueRef dims[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < buffer->ndim; ++d) {
    LLVMValueRef index = LLVMConstInt(ll->t_i64, (unsigned long long)d, 0);
    dims[d] = load(ll, ll->t_i64, LLVMBuildInBoundsGEP2(b, ll->t_i64, shape, &index, 1, ""), "");
    const kiln_tir_expr_t *dim = buffer->shape[d];
    if (dim->kind == KILN_TIR_EXPR_VAR && !contains(&c->shape_vars, (const void *)dim)) {
      const kiln_tir_var_t *var = (const void *)dim;
      KILN_RETURN_IF_ERROR(kiln_llvm_check_dtype(ll, dim->dtype.base, "shape variable", var->name));
      LLVMValueRef value =
          LLVMBuildIntCast2(b, dims[d], kiln_llvm_type(ll, dim->dtype), 1, var->name);
      KILN_RETURN_IF_ERROR(kiln_llvm_bind(ll, var, value));
      KILN_RETURN_IF_ERROR(kiln_array_push(&c->shape_vars, &var));
      KILN_RETURN_IF_ERROR(kiln_array_push(&c->shape_values, &value));
    }
  }
  LLVMValueRef ok = LLVMConstInt(ll->t_i1, 1, 0);
  for (int d = 0; d < buffer->ndim; ++d) {
    LLVMValueRef want = NULL;
    KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, buffer->shape[d], &want));
    want = kiln_llvm_to_i64(ll, want, buffer->shape[d]->dtype);
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, dims[d], want, ""), "");
  }
  LLVMBasicBlockRef next = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_check(ll, ok, "shape", &next));
  char expected[512], format[1024];
  kiln_tir_buffer_shape_text(buffer, expected, sizeof(expected));
  const char *escaped = NULL;
  KILN_RETURN_IF_ERROR(escape(ll, expected, &escaped));
  snprintf(format, sizeof(format), "%s: argument %d has shape %%s, expected %s", ll->func->name, i,
           escaped);
  LLVMValueRef fail = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_prelude(ll, "__kiln_fail_shape", &fail));
  LLVMValueRef args[] = {kiln_llvm_string(ll, format), tensor};
  LLVMBuildRet(b, LLVMBuildCall2(b, LLVMGetElementType(LLVMTypeOf(fail)), fail, args, 2, ""));
  LLVMPositionBuilderAtEnd(b, next);
  return KILN_OK;
}

/* Compact strides, then the alignment; returns data + byte_offset. */
static kiln_status_t check_layout(kiln_llvm_t *ll, const kiln_tir_buffer_t *buffer, int i,
                                  LLVMValueRef tensor, LLVMValueRef *out_data) {
  LLVMBuilderRef b = ll->builder;
  const char *func = ll->func->name;
  char format[512];
  LLVMValueRef compact = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_prelude(ll, "__kiln_is_compact", &compact));
  LLVMValueRef is_compact =
      LLVMBuildCall2(b, LLVMGetElementType(LLVMTypeOf(compact)), compact, &tensor, 1, "compact");
  snprintf(format, sizeof(format), "%s: argument %d is not compact (its strides are not row-major)",
           func, i);
  KILN_RETURN_IF_ERROR(check_int(ll, is_compact, "compact", format, NULL));
  LLVMValueRef data = load(ll, ll->t_ptr, field(ll, tensor, 0), "data");
  LLVMValueRef offset = load(ll, ll->t_i64, field(ll, tensor, 6), "byte_offset");
  LLVMValueRef address = LLVMBuildAdd(b, LLVMBuildPtrToInt(b, data, ll->t_i64, ""), offset, "");
  size_t size = kiln_dtype_size(buffer->dtype);
  LLVMValueRef rest = LLVMBuildURem(b, address, LLVMConstInt(ll->t_i64, size, 0), "");
  snprintf(format, sizeof(format), "%s: argument %d is not aligned to %zu bytes", func, i, size);
  KILN_RETURN_IF_ERROR(
      check_int(ll, LLVMBuildICmp(b, LLVMIntEQ, rest, LLVMConstInt(ll->t_i64, 0, 0), ""), "aligned",
                format, NULL));
  *out_data = LLVMBuildInBoundsGEP2(b, ll->t_i8, data, &offset, 1, buffer->data->name);
  return KILN_OK;
}

static kiln_status_t check_arg(checker_t *c, LLVMValueRef function, const kiln_tir_buffer_t *buffer,
                               int i) {
  kiln_llvm_t *ll = c->ll;
  LLVMBuilderRef b = ll->builder;
  const char *func = ll->func->name;
  KILN_RETURN_IF_ERROR(kiln_llvm_check_dtype(ll, buffer->dtype, "parameter", buffer->name));
  char format[512];
  LLVMValueRef index = LLVMConstInt(ll->t_i64, (unsigned long long)i, 0);
  LLVMValueRef code = load(
      ll, ll->t_i32, LLVMBuildInBoundsGEP2(b, ll->t_i32, LLVMGetParam(function, 1), &index, 1, ""),
      "type_code");
  snprintf(format, sizeof(format), "%s: argument %d has type code %%d, expected a DLTensor (7)",
           func, i);
  KILN_RETURN_IF_ERROR(
      check_int(ll, LLVMBuildICmp(b, LLVMIntEQ, code, LLVMConstInt(ll->t_i32, 7, 0), ""),
                "type_code", format, code));
  LLVMValueRef slot =
      LLVMBuildInBoundsGEP2(b, ll->t_value, LLVMGetParam(function, 0), &index, 1, "");
  LLVMTypeRef tensor_ptr = LLVMPointerType(ll->t_tensor, 0);
  LLVMValueRef tensor =
      load(ll, tensor_ptr, LLVMBuildBitCast(b, slot, LLVMPointerType(tensor_ptr, 0), ""), "arg");
  snprintf(format, sizeof(format), "%s: argument %d is null", func, i);
  KILN_RETURN_IF_ERROR(check_int(ll, LLVMBuildIsNotNull(b, tensor, ""), "not_null", format, NULL));
  LLVMTypeRef device_type = LLVMStructGetTypeAtIndex(ll->t_tensor, 1);
  LLVMValueRef device =
      load(ll, ll->t_i32, LLVMBuildStructGEP2(b, device_type, field(ll, tensor, 1), 0, ""),
           "device_type");
  snprintf(format, sizeof(format), "%s: argument %d is on device type %%d, expected the CPU (1)",
           func, i);
  KILN_RETURN_IF_ERROR(
      check_int(ll, LLVMBuildICmp(b, LLVMIntEQ, device, LLVMConstInt(ll->t_i32, 1, 0), ""),
                "device", format, device));
  KILN_RETURN_IF_ERROR(check_dtype(ll, buffer, i, tensor));
  LLVMValueRef ndim = load(ll, ll->t_i32, field(ll, tensor, 2), "ndim");
  snprintf(format, sizeof(format), "%s: argument %d has rank %%d, expected %d", func, i,
           buffer->ndim);
  KILN_RETURN_IF_ERROR(check_int(
      ll, LLVMBuildICmp(b, LLVMIntEQ, ndim, LLVMConstInt(ll->t_i32, (unsigned)buffer->ndim, 0), ""),
      "rank", format, ndim));
  KILN_RETURN_IF_ERROR(check_shape(c, buffer, i, tensor));
  LLVMValueRef data = NULL;
  KILN_RETURN_IF_ERROR(check_layout(ll, buffer, i, tensor, &data));
  KILN_RETURN_IF_ERROR(kiln_llvm_bind(ll, buffer->data, data));
  KILN_RETURN_IF_ERROR(kiln_array_push(&c->vars, &buffer->data));
  return kiln_array_push(&c->values, &data);
}

kiln_status_t kiln_llvm_checks(kiln_llvm_t *ll, LLVMValueRef function, int *out_num_vars,
                               const kiln_tir_var_t ***out_vars, LLVMValueRef **out_values) {
  const kiln_tir_prim_func_t *func = ll->func;
  checker_t c = {.ll = ll};
  kiln_allocator_t scratch = kiln_arena_allocator(&ll->arena);
  kiln_array_initialize(&c.vars, scratch, sizeof(const kiln_tir_var_t *));
  kiln_array_initialize(&c.values, scratch, sizeof(LLVMValueRef));
  kiln_array_initialize(&c.shape_vars, scratch, sizeof(const kiln_tir_var_t *));
  kiln_array_initialize(&c.shape_values, scratch, sizeof(LLVMValueRef));
  char format[512];
  snprintf(format, sizeof(format), "%s: expected %d arguments, got %%d", func->name,
           func->num_params);
  LLVMValueRef num_args = LLVMGetParam(function, 2);
  KILN_RETURN_IF_ERROR(
      check_int(ll,
                LLVMBuildICmp(ll->builder, LLVMIntEQ, num_args,
                              LLVMConstInt(ll->t_i32, (unsigned)func->num_params, 0), ""),
                "num_args", format, num_args));
  for (int i = 0; i < func->num_params; ++i) {
    KILN_RETURN_IF_ERROR(check_arg(&c, function, func->params[i], i));
  }
  for (size_t i = 0; i < kiln_array_count(&c.shape_vars); ++i) {
    KILN_RETURN_IF_ERROR(kiln_array_push(&c.vars, kiln_array_at(&c.shape_vars, i)));
    KILN_RETURN_IF_ERROR(kiln_array_push(&c.values, kiln_array_at(&c.shape_values, i)));
  }
  *out_num_vars = (int)kiln_array_count(&c.vars);
  *out_vars = kiln_array_data(&c.vars);
  *out_values = kiln_array_data(&c.values);
  return KILN_OK;
}
