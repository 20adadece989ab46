/*
 * The C emitter's shared state (internal to src/codegen/c/).
 *
 * Expressions are emitted as one parenthesized C expression each; vector
 * values use GCC/Clang vector types (kiln_f32x16) whose lane count is the
 * next power of two of the IR's (a 3-lane value lives in a 4-lane vector and
 * only its first 3 lanes are read or written). Operations C has on vectors
 * (+ - * /, comparisons, casts via __builtin_convertvector) are used as
 * such; the rest run lane by lane in a statement expression. Bools are int32
 * 0/1 in registers and uint8 in memory, as the interpreter stores them.
 */
#ifndef KILN_CODEGEN_C_EMIT_H_
#define KILN_CODEGEN_C_EMIT_H_

#include "base/array.h"
#include "base/hashmap.h"
#include "base/strbuf.h"
#include "codegen/parallel.h"
#include "tir/tir.h"

typedef struct kiln_cg_t {
  kiln_arena_t arena;    /* names and outlining, freed with the emitter */
  kiln_strbuf_t *out;    /* where the current function's text goes */
  kiln_strbuf_t lambdas; /* outlined lambdas of the function being emitted */
  const kiln_tir_prim_func_t *func;
  kiln_codegen_parallel_t parallel;
  kiln_codegen_chunk_t chunk;
  kiln_array_t names;         /* cg_name_t */
  kiln_array_t workspaces;    /* const char *: live workspace pointers, innermost last */
  int lambda_base;            /* lambdas of earlier functions */
  kiln_hashmap_t canonical;   /* expr -> its group's representative (emit_cse.c) */
  kiln_hashmap_t hoisted;     /* representative -> "_cN" while its statement is written */
  kiln_array_t hoisted_stack; /* the hoisted exprs, innermost last */
  int num_hoisted;
  int indent;
} kiln_cg_t;

/* Appends formatted text to cg->out. */
KILN_MUST_USE_RESULT kiln_status_t kiln_cg_printf(kiln_cg_t *cg, const char *format, ...)
    KILN_PRINTF_FORMAT(2, 3);
/* Indentation, then formatted text. */
KILN_MUST_USE_RESULT kiln_status_t kiln_cg_line(kiln_cg_t *cg, const char *format, ...)
    KILN_PRINTF_FORMAT(2, 3);
/* The C name of a variable ("i_3"), made on first sight. */
KILN_MUST_USE_RESULT kiln_status_t kiln_cg_name(kiln_cg_t *cg, const kiln_tir_var_t *var,
                                                const char **out_name);
/* "float", "int32_t" (bool: int32_t); "kiln_f32x4" for vectors. */
KILN_MUST_USE_RESULT kiln_status_t kiln_cg_type(kiln_cg_t *cg, kiln_tir_dtype_t dtype,
                                                const char **out_type);
/* The element type in memory ("uint8_t" for bool). */
const char *kiln_cg_mem_type(kiln_dtype_t dtype);
/* The short tag of a dtype in helper names ("f32", "b"; float16 and
 * bfloat16 are "f32", their register type). */
const char *kiln_cg_tag(kiln_dtype_t dtype);
/* float16 and bfloat16: uint16_t bits in memory, float in registers,
 * converted by base/scalar_ops.h's functions and rounded back to the narrow
 * type after each operation (the prelude's kiln_round_float16 and
 * kiln_round_bfloat16). */
int kiln_cg_is_narrow(kiln_dtype_t dtype);
/* "float16" or "bfloat16", as the conversion functions spell it. */
const char *kiln_cg_narrow_name(kiln_dtype_t dtype);
/* The lane count of a C vector holding `lanes` lanes. */
int kiln_cg_padded_lanes(int lanes);

KILN_MUST_USE_RESULT kiln_status_t kiln_cg_expr(kiln_cg_t *cg, const kiln_tir_expr_t *e);
/* The flat element offset (int64) of an access into cg->out: from the index
 * expressions, or (use_temps) from index temporaries _i0.._iN inside a lane
 * loop (vector ones read at lane _l). */
KILN_MUST_USE_RESULT kiln_status_t kiln_cg_offset(kiln_cg_t *cg, const kiln_tir_buffer_t *buffer,
                                                  int num_indices,
                                                  const kiln_tir_expr_t *const *indices,
                                                  int use_temps);
/* "T _i0 = <index 0>; ..." for a lane loop over an access's indices. */
KILN_MUST_USE_RESULT kiln_status_t kiln_cg_index_temps(kiln_cg_t *cg, int num_indices,
                                                       const kiln_tir_expr_t *const *indices);
/* Declares the nodes that `exprs` share (emit_cse.c) as temporaries at the
 * current indentation; kiln_cg_expr then prints their names. Pair with
 * kiln_cg_unhoist(cg, mark), mark being the count of cg->hoisted_stack
 * before, when the statement's block closes. */
KILN_MUST_USE_RESULT kiln_status_t kiln_cg_hoist(kiln_cg_t *cg, int num_exprs,
                                                 const kiln_tir_expr_t *const *exprs);
void kiln_cg_unhoist(kiln_cg_t *cg, size_t mark);
/* The temporary of a hoisted expression, or NULL. */
const char *kiln_cg_hoisted_name(const kiln_cg_t *cg, const kiln_tir_expr_t *e);
KILN_MUST_USE_RESULT kiln_status_t kiln_cg_stmt(kiln_cg_t *cg, const kiln_tir_stmt_t *s);
/* Frees the live workspaces and returns -1 (an error exit). */
KILN_MUST_USE_RESULT kiln_status_t kiln_cg_fail_exit(kiln_cg_t *cg);
/* The lambda of a parallel loop and the launch in its place. */
KILN_MUST_USE_RESULT kiln_status_t kiln_cg_parallel(kiln_cg_t *cg, const kiln_tir_for_t *loop);
/* A C string literal of `text` (quotes included). */
KILN_MUST_USE_RESULT kiln_status_t kiln_cg_string(kiln_cg_t *cg, const char *text);

#endif /* KILN_CODEGEN_C_EMIT_H_ */
