/*
 * The loop IR (TVM's TIR): expressions, statements, buffers and PrimFuncs.
 *
 * This is what tensor expressions lower to and what the code generators and
 * the loop-IR interpreter walk (TVM's TIR). Every node starts with a header
 * holding its kind, the index of the dispatch tables in functor.h; an
 * expression's header also holds its dtype: a kiln_dtype_t plus a lane count
 * (1 for scalars, more for the vectors that ramp, broadcast and vector loads
 * make). Concrete nodes embed the header as their first member, so a
 * `const kiln_tir_expr_t *` is cast to the concrete type after a kind check.
 *
 * Nodes live in an arena (base/arena.h) and are immutable once made; passes
 * build new nodes and share the untouched ones, so a tree may be a DAG.
 * Constructors check dtypes and return a status naming the node and both
 * operand types ("Add: operand dtypes differ: int32 and float32"); a node
 * that exists is well typed. Integer immediates must fit their dtype.
 *
 * Integer division is floordiv/floormod (round toward -inf, remainder with
 * the divisor's sign), as in TVM; Div is for floats only. Comparisons and
 * logic produce bool (with the operands' lane count).
 *
 * A Buffer is a view: name, element dtype, shape (expressions), strides
 * (expressions, or NULL for compact row-major), a data variable naming its
 * storage and an element offset. Loads and stores name the buffer and take
 * one index per dimension (one index after flattening). Allocate declares a
 * buffer with fresh storage in a scope (global or local) around its body.
 * A PrimFunc takes buffers as parameters, in order.
 */
#ifndef KILN_TIR_TIR_H_
#define KILN_TIR_TIR_H_

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

/* Largest lane count of a vector dtype. */
#define KILN_TIR_MAX_LANES 64
/* Largest number of indices of a load or store, of dims of a buffer. */
#define KILN_TIR_MAX_DIMS KILN_MAX_RANK

typedef struct kiln_tir_dtype_t {
  kiln_dtype_t base;
  int lanes; /* 1: scalar */
} kiln_tir_dtype_t;

/* {base, 1}. */
kiln_tir_dtype_t kiln_tir_scalar(kiln_dtype_t base);
/* {base, lanes}. */
kiln_tir_dtype_t kiln_tir_vector(kiln_dtype_t base, int lanes);
int kiln_tir_dtype_equal(kiln_tir_dtype_t a, kiln_tir_dtype_t b);
/* Signed or unsigned integers (bool excluded). */
int kiln_tir_dtype_is_int(kiln_tir_dtype_t dtype);
int kiln_tir_dtype_is_float(kiln_tir_dtype_t dtype);
int kiln_tir_dtype_is_bool(kiln_tir_dtype_t dtype);
/* The values an integer or bool dtype holds (uint64's top clamped to
 * INT64_MAX, since kiln folds integers in int64). */
void kiln_tir_dtype_int_range(kiln_dtype_t base, int64_t *out_min, int64_t *out_max);
/* "float32", "float32x4" into `buffer` (16 bytes suffice); returns `buffer`. */
const char *kiln_tir_dtype_format(kiln_tir_dtype_t dtype, char buffer[24]);

/* ---- expressions ---- */

/* X(ENUM, "Name") */
#define KILN_TIR_EXPR_KIND_LIST(X) \
  X(INT_IMM, "IntImm")             \
  X(FLOAT_IMM, "FloatImm")         \
  X(VAR, "Var")                    \
  X(ADD, "Add")                    \
  X(SUB, "Sub")                    \
  X(MUL, "Mul")                    \
  X(DIV, "Div")                    \
  X(FLOOR_DIV, "FloorDiv")         \
  X(FLOOR_MOD, "FloorMod")         \
  X(MIN, "Min")                    \
  X(MAX, "Max")                    \
  X(EQ, "EQ")                      \
  X(NE, "NE")                      \
  X(LT, "LT")                      \
  X(LE, "LE")                      \
  X(GT, "GT")                      \
  X(GE, "GE")                      \
  X(AND, "And")                    \
  X(OR, "Or")                      \
  X(NOT, "Not")                    \
  X(SELECT, "Select")              \
  X(CAST, "Cast")                  \
  X(BUFFER_LOAD, "BufferLoad")     \
  X(RAMP, "Ramp")                  \
  X(BROADCAST, "Broadcast")        \
  X(CALL, "Call")                  \
  X(LET, "Let")

typedef enum kiln_tir_expr_kind_e {
#define KILN_TIR_EXPR_KIND_ENUM_(e, name) KILN_TIR_EXPR_##e,
  KILN_TIR_EXPR_KIND_LIST(KILN_TIR_EXPR_KIND_ENUM_)
#undef KILN_TIR_EXPR_KIND_ENUM_
      KILN_TIR_EXPR_KIND_COUNT_
} kiln_tir_expr_kind_t;

/* "FloorDiv"; "invalid" outside the enum. */
const char *kiln_tir_expr_kind_name(kiln_tir_expr_kind_t kind);
/* Add..Or: the kinds made by kiln_tir_binary_create. */
int kiln_tir_expr_kind_is_binary(kiln_tir_expr_kind_t kind);

/* Intrinsics: X(ENUM, "name", arity, argument class). FLOAT ones take and
 * return floats of one dtype (libm's functions); INT ones take and return
 * integers of one dtype: shift_left and shift_right shift the value's bits
 * as unsigned, and a shift by the bit width or more gives 0. */
#define KILN_TIR_INTRINSIC_LIST(X)      \
  X(EXP, "exp", 1, FLOAT)               \
  X(LOG, "log", 1, FLOAT)               \
  X(SQRT, "sqrt", 1, FLOAT)             \
  X(RSQRT, "rsqrt", 1, FLOAT)           \
  X(ERF, "erf", 1, FLOAT)               \
  X(TANH, "tanh", 1, FLOAT)             \
  X(SIGMOID, "sigmoid", 1, FLOAT)       \
  X(FABS, "fabs", 1, FLOAT)             \
  X(FLOOR, "floor", 1, FLOAT)           \
  X(CEIL, "ceil", 1, FLOAT)             \
  X(ROUND, "round", 1, FLOAT)           \
  X(TRUNC, "trunc", 1, FLOAT)           \
  X(POW, "pow", 2, FLOAT)               \
  X(FMA, "fma", 3, FLOAT)               \
  X(SIN, "sin", 1, FLOAT)               \
  X(COS, "cos", 1, FLOAT)               \
  X(TAN, "tan", 1, FLOAT)               \
  X(ASIN, "asin", 1, FLOAT)             \
  X(ACOS, "acos", 1, FLOAT)             \
  X(ATAN, "atan", 1, FLOAT)             \
  X(SINH, "sinh", 1, FLOAT)             \
  X(COSH, "cosh", 1, FLOAT)             \
  X(ASINH, "asinh", 1, FLOAT)           \
  X(ACOSH, "acosh", 1, FLOAT)           \
  X(ATANH, "atanh", 1, FLOAT)           \
  X(LOG1P, "log1p", 1, FLOAT)           \
  X(EXPM1, "expm1", 1, FLOAT)           \
  X(FMOD, "fmod", 2, FLOAT)             \
  X(COPYSIGN, "copysign", 2, FLOAT)     \
  X(SHIFT_LEFT, "shift_left", 2, INT)   \
  X(SHIFT_RIGHT, "shift_right", 2, INT) \
  X(BITWISE_XOR, "bitwise_xor", 2, INT)

typedef enum kiln_tir_intrinsic_class_e {
  KILN_TIR_INTRINSIC_CLASS_FLOAT,
  KILN_TIR_INTRINSIC_CLASS_INT,
  KILN_TIR_INTRINSIC_CLASS_COUNT_
} kiln_tir_intrinsic_class_t;

typedef enum kiln_tir_intrinsic_e {
#define KILN_TIR_INTRINSIC_ENUM_(e, name, arity, cls) KILN_TIR_INTRINSIC_##e,
  KILN_TIR_INTRINSIC_LIST(KILN_TIR_INTRINSIC_ENUM_)
#undef KILN_TIR_INTRINSIC_ENUM_
      KILN_TIR_INTRINSIC_COUNT_
} kiln_tir_intrinsic_t;

const char *kiln_tir_intrinsic_name(kiln_tir_intrinsic_t op);
/* Number of arguments; 0 outside the enum. */
int kiln_tir_intrinsic_arity(kiln_tir_intrinsic_t op);
/* What the arguments must be (FLOAT outside the enum). */
kiln_tir_intrinsic_class_t kiln_tir_intrinsic_class(kiln_tir_intrinsic_t op);

typedef struct kiln_tir_expr_t {
  kiln_tir_expr_kind_t kind;
  kiln_tir_dtype_t dtype;
} kiln_tir_expr_t;

typedef struct kiln_tir_buffer_t kiln_tir_buffer_t;

typedef struct kiln_tir_int_imm_t {
  kiln_tir_expr_t base;
  int64_t value;
} kiln_tir_int_imm_t;

typedef struct kiln_tir_float_imm_t {
  kiln_tir_expr_t base;
  double value; /* already rounded to float for float32 */
} kiln_tir_float_imm_t;

/* Variables are compared by identity; the name is for printing. */
typedef struct kiln_tir_var_t {
  kiln_tir_expr_t base;
  const char *name;
} kiln_tir_var_t;

/* Add..Or. */
typedef struct kiln_tir_binary_t {
  kiln_tir_expr_t base;
  const kiln_tir_expr_t *a;
  const kiln_tir_expr_t *b;
} kiln_tir_binary_t;

typedef struct kiln_tir_not_t {
  kiln_tir_expr_t base;
  const kiln_tir_expr_t *a;
} kiln_tir_not_t;

typedef struct kiln_tir_select_t {
  kiln_tir_expr_t base;
  const kiln_tir_expr_t *condition;
  const kiln_tir_expr_t *true_value;
  const kiln_tir_expr_t *false_value;
} kiln_tir_select_t;

typedef struct kiln_tir_cast_t {
  kiln_tir_expr_t base;
  const kiln_tir_expr_t *value;
} kiln_tir_cast_t;

typedef struct kiln_tir_buffer_load_t {
  kiln_tir_expr_t base;
  const kiln_tir_buffer_t *buffer;
  int num_indices;
  const kiln_tir_expr_t *const *indices;
} kiln_tir_buffer_load_t;

typedef struct kiln_tir_ramp_t {
  kiln_tir_expr_t base; /* lanes in base.dtype.lanes */
  const kiln_tir_expr_t *start;
  const kiln_tir_expr_t *stride;
} kiln_tir_ramp_t;

typedef struct kiln_tir_broadcast_t {
  kiln_tir_expr_t base; /* lanes in base.dtype.lanes */
  const kiln_tir_expr_t *value;
} kiln_tir_broadcast_t;

typedef struct kiln_tir_call_t {
  kiln_tir_expr_t base;
  kiln_tir_intrinsic_t op;
  int num_args;
  const kiln_tir_expr_t *const *args;
} kiln_tir_call_t;

typedef struct kiln_tir_let_t {
  kiln_tir_expr_t base;
  const kiln_tir_var_t *var;
  const kiln_tir_expr_t *value;
  const kiln_tir_expr_t *body;
} kiln_tir_let_t;

/* Constructors. All nodes come from `arena`; on failure *out is NULL. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_int_imm_create(kiln_arena_t *arena,
                                                           kiln_tir_dtype_t dtype, int64_t value,
                                                           const kiln_tir_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_float_imm_create(kiln_arena_t *arena,
                                                             kiln_tir_dtype_t dtype, double value,
                                                             const kiln_tir_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_var_create(kiln_arena_t *arena, const char *name,
                                                       kiln_tir_dtype_t dtype,
                                                       const kiln_tir_var_t **out_var);
/* `kind` is one of Add..Or. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_binary_create(kiln_arena_t *arena,
                                                          kiln_tir_expr_kind_t kind,
                                                          const kiln_tir_expr_t *a,
                                                          const kiln_tir_expr_t *b,
                                                          const kiln_tir_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_not_create(kiln_arena_t *arena,
                                                       const kiln_tir_expr_t *a,
                                                       const kiln_tir_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_select_create(kiln_arena_t *arena,
                                                          const kiln_tir_expr_t *condition,
                                                          const kiln_tir_expr_t *true_value,
                                                          const kiln_tir_expr_t *false_value,
                                                          const kiln_tir_expr_t **out_expr);
/* Lanes must match the value's. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_cast_create(kiln_arena_t *arena, kiln_tir_dtype_t dtype,
                                                        const kiln_tir_expr_t *value,
                                                        const kiln_tir_expr_t **out_expr);
/* Integer indices, one per dim; an index with lanes > 1 makes a vector load. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_buffer_load_create(
    kiln_arena_t *arena, const kiln_tir_buffer_t *buffer, int num_indices,
    const kiln_tir_expr_t *const *indices, const kiln_tir_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_ramp_create(kiln_arena_t *arena,
                                                        const kiln_tir_expr_t *start,
                                                        const kiln_tir_expr_t *stride, int lanes,
                                                        const kiln_tir_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_broadcast_create(kiln_arena_t *arena,
                                                             const kiln_tir_expr_t *value,
                                                             int lanes,
                                                             const kiln_tir_expr_t **out_expr);
/* Arguments: of one dtype, of the intrinsic's class; the result has it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_call_create(kiln_arena_t *arena,
                                                        kiln_tir_intrinsic_t op, int num_args,
                                                        const kiln_tir_expr_t *const *args,
                                                        const kiln_tir_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_let_create(kiln_arena_t *arena,
                                                       const kiln_tir_var_t *var,
                                                       const kiln_tir_expr_t *value,
                                                       const kiln_tir_expr_t *body,
                                                       const kiln_tir_expr_t **out_expr);

/* The constant of an IntImm (scalar), or 0 when `expr` is not one. */
int kiln_tir_expr_as_int(const kiln_tir_expr_t *expr, int64_t *out_value);
/* Structural equality: same kinds, dtypes, constants and children; variables
 * and buffers by identity. */
int kiln_tir_expr_equal(const kiln_tir_expr_t *a, const kiln_tir_expr_t *b);

/* ---- buffers ---- */

typedef enum kiln_tir_scope_e {
  KILN_TIR_SCOPE_GLOBAL,
  KILN_TIR_SCOPE_LOCAL,
  KILN_TIR_SCOPE_COUNT_
} kiln_tir_scope_t;

/* "global", "local". */
const char *kiln_tir_scope_name(kiln_tir_scope_t scope);

/* What an Allocate's storage holds before its body runs: zeros, or
 * nothing defined, for a buffer its body writes before it reads each
 * element (every stage te lowers: a compute op defines every element of
 * the region its consumers read before they read it). Backends skip the
 * zeroing of the second; the loop-IR interpreter reports a read of an
 * element not yet written. */
typedef enum kiln_tir_init_t {
  KILN_TIR_INIT_ZERO,
  KILN_TIR_INIT_NONE,
  KILN_TIR_INIT_COUNT_
} kiln_tir_init_t;

struct kiln_tir_buffer_t {
  const char *name;
  kiln_dtype_t dtype;
  int ndim;
  const kiln_tir_expr_t *const *shape;   /* ndim integer scalars */
  const kiln_tir_expr_t *const *strides; /* ndim, or NULL: compact row-major */
  const kiln_tir_var_t *data;            /* the storage, a handle-like int64 var */
  const kiln_tir_expr_t *elem_offset;    /* int scalar, 0 by default */
};

/* A buffer with its own data variable named `name`; `strides` may be NULL,
 * `elem_offset` NULL means 0. Shape and strides are copied. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_buffer_create(kiln_arena_t *arena, const char *name,
                                                          kiln_dtype_t dtype, int ndim,
                                                          const kiln_tir_expr_t *const *shape,
                                                          const kiln_tir_expr_t *const *strides,
                                                          const kiln_tir_expr_t *elem_offset,
                                                          const kiln_tir_buffer_t **out_buffer);
/* Convenience: constant int32 shape, compact, offset 0. */
KILN_MUST_USE_RESULT kiln_status_t
kiln_tir_buffer_create_const(kiln_arena_t *arena, const char *name, kiln_dtype_t dtype, int ndim,
                             const int64_t *shape, const kiln_tir_buffer_t **out_buffer);

/* "(1, 64, 58, 58)" of a buffer's shape (symbolic dims by their variable's
 * name, "(n,)" for one dim) into `text` of `capacity` bytes: how argument
 * checks of every backend say what a buffer should be. */
void kiln_tir_buffer_shape_text(const kiln_tir_buffer_t *buffer, char *text, size_t capacity);

/* ---- statements ---- */

#define KILN_TIR_STMT_KIND_LIST(X) \
  X(FOR, "For")                    \
  X(BUFFER_STORE, "BufferStore")   \
  X(ALLOCATE, "Allocate")          \
  X(SEQ, "SeqStmt")                \
  X(IF_THEN_ELSE, "IfThenElse")    \
  X(LET_STMT, "LetStmt")           \
  X(EVALUATE, "Evaluate")          \
  X(ASSERT, "AssertStmt")          \
  X(PREFETCH, "Prefetch")

typedef enum kiln_tir_stmt_kind_e {
#define KILN_TIR_STMT_KIND_ENUM_(e, name) KILN_TIR_STMT_##e,
  KILN_TIR_STMT_KIND_LIST(KILN_TIR_STMT_KIND_ENUM_)
#undef KILN_TIR_STMT_KIND_ENUM_
      KILN_TIR_STMT_KIND_COUNT_
} kiln_tir_stmt_kind_t;

const char *kiln_tir_stmt_kind_name(kiln_tir_stmt_kind_t kind);

typedef enum kiln_tir_for_kind_e {
  KILN_TIR_FOR_SERIAL,
  KILN_TIR_FOR_PARALLEL,
  KILN_TIR_FOR_VECTORIZED,
  KILN_TIR_FOR_UNROLLED,
  KILN_TIR_FOR_COUNT_
} kiln_tir_for_kind_t;

/* "serial", "parallel", "vectorized", "unroll" (the printer's T.<name>). */
const char *kiln_tir_for_kind_name(kiln_tir_for_kind_t kind);

typedef struct kiln_tir_stmt_t {
  kiln_tir_stmt_kind_t kind;
} kiln_tir_stmt_t;

typedef struct kiln_tir_annotation_t {
  const char *key;
  const char *value;
} kiln_tir_annotation_t;

typedef struct kiln_tir_for_t {
  kiln_tir_stmt_t base;
  const kiln_tir_var_t *var;
  const kiln_tir_expr_t *min;
  const kiln_tir_expr_t *extent;
  kiln_tir_for_kind_t for_kind;
  const kiln_tir_stmt_t *body;
  int num_annotations;
  const kiln_tir_annotation_t *annotations;
} kiln_tir_for_t;

typedef struct kiln_tir_buffer_store_t {
  kiln_tir_stmt_t base;
  const kiln_tir_buffer_t *buffer;
  const kiln_tir_expr_t *value;
  int num_indices;
  const kiln_tir_expr_t *const *indices;
} kiln_tir_buffer_store_t;

typedef struct kiln_tir_allocate_t {
  kiln_tir_stmt_t base;
  const kiln_tir_buffer_t *buffer;
  kiln_tir_scope_t scope;
  kiln_tir_init_t init;
  const kiln_tir_stmt_t *body;
} kiln_tir_allocate_t;

typedef struct kiln_tir_seq_t {
  kiln_tir_stmt_t base;
  int count;
  const kiln_tir_stmt_t *const *stmts;
} kiln_tir_seq_t;

typedef struct kiln_tir_if_then_else_t {
  kiln_tir_stmt_t base;
  const kiln_tir_expr_t *condition;
  const kiln_tir_stmt_t *then_case;
  const kiln_tir_stmt_t *else_case; /* may be NULL */
} kiln_tir_if_then_else_t;

typedef struct kiln_tir_let_stmt_t {
  kiln_tir_stmt_t base;
  const kiln_tir_var_t *var;
  const kiln_tir_expr_t *value;
  const kiln_tir_stmt_t *body;
} kiln_tir_let_stmt_t;

typedef struct kiln_tir_evaluate_t {
  kiln_tir_stmt_t base;
  const kiln_tir_expr_t *value;
} kiln_tir_evaluate_t;

/* A hint that `load` (a scalar BufferLoad, evaluated as the load would be
 * but its value unused) is read soon: the code generators fetch its cache
 * line towards the core (to L2), the interpreter checks its indices. */
typedef struct kiln_tir_prefetch_t {
  kiln_tir_stmt_t base;
  const kiln_tir_expr_t *load;
} kiln_tir_prefetch_t;

typedef struct kiln_tir_assert_t {
  kiln_tir_stmt_t base;
  const kiln_tir_expr_t *condition;
  const char *message;
  const kiln_tir_stmt_t *body;
} kiln_tir_assert_t;

/* min and extent: integer scalars of the loop variable's dtype. Annotations
 * are copied. */
KILN_MUST_USE_RESULT kiln_status_t
kiln_tir_for_create(kiln_arena_t *arena, const kiln_tir_var_t *var, const kiln_tir_expr_t *min,
                    const kiln_tir_expr_t *extent, kiln_tir_for_kind_t for_kind,
                    const kiln_tir_stmt_t *body, int num_annotations,
                    const kiln_tir_annotation_t *annotations, const kiln_tir_stmt_t **out_stmt);
/* The value's dtype is the buffer's with the indices' lane count. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_buffer_store_create(
    kiln_arena_t *arena, const kiln_tir_buffer_t *buffer, const kiln_tir_expr_t *value,
    int num_indices, const kiln_tir_expr_t *const *indices, const kiln_tir_stmt_t **out_stmt);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_allocate_create(
    kiln_arena_t *arena, const kiln_tir_buffer_t *buffer, kiln_tir_scope_t scope,
    kiln_tir_init_t init, const kiln_tir_stmt_t *body, const kiln_tir_stmt_t **out_stmt);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_seq_create(kiln_arena_t *arena, int count,
                                                       const kiln_tir_stmt_t *const *stmts,
                                                       const kiln_tir_stmt_t **out_stmt);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_if_then_else_create(kiln_arena_t *arena,
                                                                const kiln_tir_expr_t *condition,
                                                                const kiln_tir_stmt_t *then_case,
                                                                const kiln_tir_stmt_t *else_case,
                                                                const kiln_tir_stmt_t **out_stmt);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_let_stmt_create(kiln_arena_t *arena,
                                                            const kiln_tir_var_t *var,
                                                            const kiln_tir_expr_t *value,
                                                            const kiln_tir_stmt_t *body,
                                                            const kiln_tir_stmt_t **out_stmt);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_evaluate_create(kiln_arena_t *arena,
                                                            const kiln_tir_expr_t *value,
                                                            const kiln_tir_stmt_t **out_stmt);
/* `load`: a scalar BufferLoad. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_prefetch_create(kiln_arena_t *arena,
                                                            const kiln_tir_expr_t *load,
                                                            const kiln_tir_stmt_t **out_stmt);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_assert_create(kiln_arena_t *arena,
                                                          const kiln_tir_expr_t *condition,
                                                          const char *message,
                                                          const kiln_tir_stmt_t *body,
                                                          const kiln_tir_stmt_t **out_stmt);

/* ---- functions ---- */

typedef struct kiln_tir_prim_func_t {
  const char *name;
  int num_params;
  const kiln_tir_buffer_t *const *params;
  const kiln_tir_stmt_t *body;
  int num_attrs;
  const kiln_tir_annotation_t *attrs;
} kiln_tir_prim_func_t;

/* Params and attrs are copied; a buffer may appear once. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_prim_func_create(
    kiln_arena_t *arena, const char *name, int num_params, const kiln_tir_buffer_t *const *params,
    const kiln_tir_stmt_t *body, int num_attrs, const kiln_tir_annotation_t *attrs,
    const kiln_tir_prim_func_t **out_func);

#endif /* KILN_TIR_TIR_H_ */
