/*
 * The C emitter's small pieces: text output, variable names, C type names
 * and string literals; see emit.h.
 *
 * A variable's C name is its IR name with every character outside
 * [A-Za-z0-9_] replaced by '_', then '_' and its number in order of first
 * sight, so two variables never share a name (the IR compares variables by
 * identity, not by name) and no C name ends in a letter after the number.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "codegen/c/emit.h"

typedef struct cg_name_t {
  const kiln_tir_var_t *var;
  const char *name;
} cg_name_t;

kiln_status_t kiln_cg_printf(kiln_cg_t *cg, const char *format, ...) {
  va_list args;
  va_start(args, format);
  kiln_status_t status = kiln_strbuf_appendf_v(cg->out, format, args);
  va_end(args);
  return status;
}

kiln_status_t kiln_cg_line(kiln_cg_t *cg, const char *format, ...) {
  for (int i = 0; i < cg->indent; ++i) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(cg->out, "  "));
  }
  va_list args;
  va_start(args, format);
  kiln_status_t status = kiln_strbuf_appendf_v(cg->out, format, args);
  va_end(args);
  return status;
}

kiln_status_t kiln_cg_name(kiln_cg_t *cg, const kiln_tir_var_t *var, const char **out_name) {
  for (size_t i = 0; i < kiln_array_count(&cg->names); ++i) {
    const cg_name_t *entry = kiln_array_at(&cg->names, i);
    if (entry->var == var) {
      *out_name = entry->name;
      return KILN_OK;
    }
  }
  const char *base = var->name && var->name[0] ? var->name : "v";
  size_t length = strlen(base);
  char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(&cg->arena, length + 24, 1, (void **)&name));
  for (size_t i = 0; i < length; ++i) {
    char c = base[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    name[i] = ok ? c : '_';
  }
  snprintf(name + length, 24, "_%zu", kiln_array_count(&cg->names));
  cg_name_t entry = {var, name};
  KILN_RETURN_IF_ERROR(kiln_array_push(&cg->names, &entry));
  *out_name = name;
  return KILN_OK;
}

const char *kiln_cg_tag(kiln_dtype_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_FLOAT32:
  case KILN_DTYPE_FLOAT16: /* float32 in registers */
  case KILN_DTYPE_BFLOAT16:
    return "f32";
  case KILN_DTYPE_FLOAT64:
    return "f64";
  case KILN_DTYPE_INT8:
    return "i8";
  case KILN_DTYPE_INT16:
    return "i16";
  case KILN_DTYPE_INT32:
    return "i32";
  case KILN_DTYPE_INT64:
    return "i64";
  case KILN_DTYPE_UINT8:
    return "u8";
  case KILN_DTYPE_UINT16:
    return "u16";
  case KILN_DTYPE_UINT32:
    return "u32";
  case KILN_DTYPE_UINT64:
    return "u64";
  case KILN_DTYPE_BOOL:
    return "b";
  case KILN_DTYPE_COUNT_:
    break;
  }
  return NULL;
}

static const char *scalar_type(kiln_dtype_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_FLOAT32:
  case KILN_DTYPE_FLOAT16: /* float32 in registers, the bits in memory */
  case KILN_DTYPE_BFLOAT16:
    return "float";
  case KILN_DTYPE_FLOAT64:
    return "double";
  case KILN_DTYPE_INT8:
    return "int8_t";
  case KILN_DTYPE_INT16:
    return "int16_t";
  case KILN_DTYPE_INT32:
  case KILN_DTYPE_BOOL:
    return "int32_t";
  case KILN_DTYPE_INT64:
    return "int64_t";
  case KILN_DTYPE_UINT8:
    return "uint8_t";
  case KILN_DTYPE_UINT16:
    return "uint16_t";
  case KILN_DTYPE_UINT32:
    return "uint32_t";
  case KILN_DTYPE_UINT64:
    return "uint64_t";
  case KILN_DTYPE_COUNT_:
    break;
  }
  return NULL;
}

const char *kiln_cg_mem_type(kiln_dtype_t dtype) {
  if (kiln_cg_is_narrow(dtype)) {
    return "uint16_t";
  }
  return dtype == KILN_DTYPE_BOOL ? "uint8_t" : scalar_type(dtype);
}

int kiln_cg_is_narrow(kiln_dtype_t dtype) {
  return dtype == KILN_DTYPE_FLOAT16 || dtype == KILN_DTYPE_BFLOAT16;
}

const char *kiln_cg_narrow_name(kiln_dtype_t dtype) {
  return dtype == KILN_DTYPE_FLOAT16 ? "float16" : "bfloat16";
}

int kiln_cg_padded_lanes(int lanes) {
  int padded = 1;
  while (padded < lanes) {
    padded *= 2;
  }
  return padded;
}

kiln_status_t kiln_cg_type(kiln_cg_t *cg, kiln_tir_dtype_t dtype, const char **out_type) {
  const char *scalar = scalar_type(dtype.base);
  if (!scalar) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: the C backend does not support %s", cg->func->name,
                       kiln_dtype_name(dtype.base));
  }
  if (dtype.lanes == 1) {
    *out_type = scalar;
    return KILN_OK;
  }
  char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(&cg->arena, 24, 1, (void **)&name));
  snprintf(name, 24, "kiln_%sx%d", kiln_cg_tag(dtype.base), kiln_cg_padded_lanes(dtype.lanes));
  *out_type = name;
  return KILN_OK;
}

kiln_status_t kiln_cg_string(kiln_cg_t *cg, const char *text) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(cg->out, '"'));
  for (const char *p = text; *p; ++p) {
    unsigned char c = (unsigned char)*p;
    if (c == '"' || c == '\\') {
      KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(cg->out, '\\'));
      KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(cg->out, (char)c));
    } else if (c < 0x20 || c >= 0x7f || c == '?') {
      KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(cg->out, "\\%03o", c)); /* '?': no trigraphs */
    } else {
      KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(cg->out, (char)c));
    }
  }
  return kiln_strbuf_append_char(cg->out, '"');
}

kiln_status_t kiln_cg_fail_exit(kiln_cg_t *cg) {
  for (size_t i = kiln_array_count(&cg->workspaces); i-- > 0;) {
    const char *ptr = *(const char *const *)kiln_array_at(&cg->workspaces, i);
    KILN_RETURN_IF_ERROR(kiln_cg_printf(cg, "__kiln_backend_free_workspace(%s); ", ptr));
  }
  return kiln_cg_printf(cg, "return -1;");
}
