/*
 * Expressions of the loop IR as LLVM values; see emit.h.
 *
 * The semantics are the interpreter's (tir/interp_value.c), as in the C
 * backend: integer + - * wrap (no nsw flags), floordiv/floormod round toward
 * -inf with the divisor guarded so LLVM never sees a division by 0 or
 * INT_MIN / -1, and give what base/scalar_ops.h's functions give (x // 0 =
 * x % 0 = 0, INT_MIN // -1 wraps), min/max are a compare and a select (so
 * a NaN first operand of min gives the second, as `a < b ? a : b` does),
 * float compares are ordered except NE. A float Add of a Mul becomes
 * llvm.fmuladd, which the code generator may fuse (the C backend's compiler
 * contracts the same expressions under -std=gnu11). Float-to-int casts use
 * llvm.fptosi.sat / fptoui.sat, which are kiln_scalar_float_to_int/uint:
 * truncated, saturated, NaN to 0. Float division stays one fdiv.
 *
 * A scalar Select whose arms load from memory is emitted as branches and a
 * phi, so an arm that reads out of bounds when not chosen (padding) is not
 * evaluated, as C's `?:` does; vector selects and load-free arms are a
 * select instruction. Vector accesses whose one index is ramp(start, 1) are
 * one vector load or store; a load of ramp(start, step) with a small
 * constant step is one load of the lanes' span and a shuffle; others go
 * lane by lane.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/scalar_ops.h"
#include "codegen/llvm/emit.h"
#include "tir/functor.h"

/* The widest step and lane count of a strided load done as one span load
 * and a shuffle (64 lanes of step 4 span 253 elements). */
#define KILN_LLVM_MAX_LOAD_STEP  4
#define KILN_LLVM_MAX_LOAD_LANES 64

LLVMTypeRef kiln_llvm_mem_type(const kiln_llvm_t *ll, kiln_dtype_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_FLOAT32:
    return ll->t_f32;
  case KILN_DTYPE_FLOAT64:
    return ll->t_f64;
  case KILN_DTYPE_INT8:
  case KILN_DTYPE_UINT8:
  case KILN_DTYPE_BOOL:
    return ll->t_i8;
  case KILN_DTYPE_INT16:
  case KILN_DTYPE_UINT16:
    return ll->t_i16;
  case KILN_DTYPE_INT32:
  case KILN_DTYPE_UINT32:
    return ll->t_i32;
  case KILN_DTYPE_INT64:
  case KILN_DTYPE_UINT64:
    return ll->t_i64;
  case KILN_DTYPE_FLOAT16:
  case KILN_DTYPE_BFLOAT16:
    return ll->t_i16; /* the bits; float32 in registers */
  case KILN_DTYPE_COUNT_:
    break;
  }
  return NULL;
}

LLVMTypeRef kiln_llvm_type(const kiln_llvm_t *ll, kiln_tir_dtype_t dtype) {
  LLVMTypeRef scalar = dtype.base == KILN_DTYPE_BOOL     ? ll->t_i1
                       : kiln_llvm_is_narrow(dtype.base) ? ll->t_f32
                                                         : kiln_llvm_mem_type(ll, dtype.base);
  return dtype.lanes > 1 ? LLVMVectorType(scalar, (unsigned)dtype.lanes) : scalar;
}

kiln_status_t kiln_llvm_check_dtype(const kiln_llvm_t *ll, kiln_dtype_t dtype, const char *what,
                                    const char *name) {
  if (kiln_llvm_mem_type(ll, dtype)) {
    return KILN_OK;
  }
  return KILN_STATUS(UNIMPLEMENTED, "%s: the llvm backend does not support %s (%s %s)",
                     ll->func->name, kiln_dtype_name(dtype), what, name ? name : "");
}

static int is_signed(kiln_dtype_t dtype) {
  return dtype == KILN_DTYPE_INT8 || dtype == KILN_DTYPE_INT16 || dtype == KILN_DTYPE_INT32 ||
         dtype == KILN_DTYPE_INT64;
}

LLVMValueRef kiln_llvm_splat(kiln_llvm_t *ll, LLVMValueRef value, int lanes) {
  if (lanes <= 1 || LLVMGetTypeKind(LLVMTypeOf(value)) == LLVMVectorTypeKind) {
    return value;
  }
  LLVMTypeRef vector = LLVMVectorType(LLVMTypeOf(value), (unsigned)lanes);
  LLVMValueRef zero = LLVMConstInt(ll->t_i32, 0, 0);
  LLVMValueRef one = LLVMBuildInsertElement(ll->builder, LLVMGetUndef(vector), value, zero, "");
  LLVMValueRef mask = LLVMConstNull(LLVMVectorType(ll->t_i32, (unsigned)lanes));
  return LLVMBuildShuffleVector(ll->builder, one, LLVMGetUndef(vector), mask, "");
}

LLVMValueRef kiln_llvm_to_i64(kiln_llvm_t *ll, LLVMValueRef value, kiln_tir_dtype_t dtype) {
  LLVMTypeRef to = dtype.lanes > 1 ? LLVMVectorType(ll->t_i64, (unsigned)dtype.lanes) : ll->t_i64;
  return LLVMBuildIntCast2(ll->builder, value, to, is_signed(dtype.base), "");
}

kiln_status_t kiln_llvm_bind(kiln_llvm_t *ll, const kiln_tir_var_t *var, LLVMValueRef value) {
  return kiln_hashmap_put(&ll->vars, var, value);
}

void kiln_llvm_memo_undo(kiln_llvm_t *ll, size_t mark) {
  if (mark == 0) {
    kiln_hashmap_clear(&ll->memo);
    kiln_array_clear(&ll->memo_log);
    return;
  }
  while (kiln_array_count(&ll->memo_log) > mark) {
    const kiln_tir_expr_t *e = NULL;
    kiln_array_pop(&ll->memo_log, &e);
    kiln_hashmap_remove(&ll->memo, e, NULL);
  }
}

/* An arithmetic or compare of two values with the same lane counts (a
 * scalar operand is broadcast). */
static void match_lanes(kiln_llvm_t *ll, LLVMValueRef *a, LLVMValueRef *b) {
  int a_vec = LLVMGetTypeKind(LLVMTypeOf(*a)) == LLVMVectorTypeKind;
  int b_vec = LLVMGetTypeKind(LLVMTypeOf(*b)) == LLVMVectorTypeKind;
  if (a_vec && !b_vec) {
    *b = kiln_llvm_splat(ll, *b, (int)LLVMGetVectorSize(LLVMTypeOf(*a)));
  } else if (b_vec && !a_vec) {
    *a = kiln_llvm_splat(ll, *a, (int)LLVMGetVectorSize(LLVMTypeOf(*b)));
  }
}

static LLVMValueRef const_int(LLVMTypeRef type, int64_t value) {
  if (LLVMGetTypeKind(type) == LLVMVectorTypeKind) {
    LLVMValueRef scalar = LLVMConstInt(LLVMGetElementType(type), (unsigned long long)value, 1);
    LLVMValueRef lanes[KILN_TIR_MAX_LANES];
    unsigned n = LLVMGetVectorSize(type);
    for (unsigned i = 0; i < n; ++i) {
      lanes[i] = scalar;
    }
    return LLVMConstVector(lanes, n);
  }
  return LLVMConstInt(type, (unsigned long long)value, 1);
}

/* ---- integer division ---- */

static LLVMValueRef floor_div_mod(kiln_llvm_t *ll, int is_mod, int is_signed_type, LLVMValueRef a,
                                  LLVMValueRef b) {
  LLVMBuilderRef bd = ll->builder;
  LLVMTypeRef type = LLVMTypeOf(a);
  LLVMValueRef zero = const_int(type, 0), one = const_int(type, 1);
  LLVMValueRef is_zero = LLVMBuildICmp(bd, LLVMIntEQ, b, zero, "");
  if (!is_signed_type) {
    LLVMValueRef safe = LLVMBuildSelect(bd, is_zero, one, b, "");
    LLVMValueRef r = is_mod ? LLVMBuildURem(bd, a, safe, "") : LLVMBuildUDiv(bd, a, safe, "");
    return LLVMBuildSelect(bd, is_zero, zero, r, "");
  }
  LLVMValueRef is_m1 = LLVMBuildICmp(bd, LLVMIntEQ, b, const_int(type, -1), "");
  LLVMValueRef special = LLVMBuildOr(bd, is_zero, is_m1, "");
  LLVMValueRef safe = LLVMBuildSelect(bd, special, one, b, "");
  LLVMValueRef q = LLVMBuildSDiv(bd, a, safe, "");
  LLVMValueRef r = LLVMBuildSRem(bd, a, safe, "");
  LLVMValueRef signs_differ = LLVMBuildXor(bd, LLVMBuildICmp(bd, LLVMIntSLT, r, zero, ""),
                                           LLVMBuildICmp(bd, LLVMIntSLT, safe, zero, ""), "");
  LLVMValueRef adjust =
      LLVMBuildAnd(bd, LLVMBuildICmp(bd, LLVMIntNE, r, zero, ""), signs_differ, "");
  if (is_mod) {
    LLVMValueRef fixed = LLVMBuildSelect(bd, adjust, LLVMBuildAdd(bd, r, safe, ""), r, "");
    return LLVMBuildSelect(bd, special, zero, fixed, "");
  }
  LLVMValueRef fixed = LLVMBuildSelect(bd, adjust, LLVMBuildSub(bd, q, one, ""), q, "");
  LLVMValueRef negated = LLVMBuildSub(bd, zero, a, "");
  return LLVMBuildSelect(bd, is_zero, zero, LLVMBuildSelect(bd, is_m1, negated, fixed, ""), "");
}

/* ---- binary operators ---- */

/* The predicates of EQ..GE (Min uses LT's, Max GT's). */
static int compare_index(kiln_tir_expr_kind_t kind) {
  if (kind == KILN_TIR_EXPR_MIN) {
    return KILN_TIR_EXPR_LT - KILN_TIR_EXPR_EQ;
  }
  if (kind == KILN_TIR_EXPR_MAX) {
    return KILN_TIR_EXPR_GT - KILN_TIR_EXPR_EQ;
  }
  return (int)kind - (int)KILN_TIR_EXPR_EQ;
}

static LLVMValueRef int_compare(kiln_llvm_t *ll, kiln_tir_expr_kind_t kind, int s, LLVMValueRef a,
                                LLVMValueRef b) {
  static const LLVMIntPredicate is_signed_p[] = {LLVMIntEQ,  LLVMIntNE,  LLVMIntSLT,
                                                 LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
  static const LLVMIntPredicate is_unsigned_p[] = {LLVMIntEQ,  LLVMIntNE,  LLVMIntULT,
                                                   LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
  int i = compare_index(kind);
  return LLVMBuildICmp(ll->builder, s ? is_signed_p[i] : is_unsigned_p[i], a, b, "");
}

static LLVMValueRef float_compare(kiln_llvm_t *ll, kiln_tir_expr_kind_t kind, LLVMValueRef a,
                                  LLVMValueRef b) {
  /* Ordered but NE, as C's operators. */
  static const LLVMRealPredicate predicates[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
                                                 LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
  return LLVMBuildFCmp(ll->builder, predicates[compare_index(kind)], a, b, "");
}

static LLVMValueRef int_binary(kiln_llvm_t *ll, kiln_tir_expr_kind_t kind, int s, LLVMValueRef a,
                               LLVMValueRef b) {
  LLVMBuilderRef bd = ll->builder;
  bool nsw = s && ll->in_index > 0; /* see offset() */
  if (kind == KILN_TIR_EXPR_ADD) {
    return nsw ? LLVMBuildNSWAdd(bd, a, b, "") : LLVMBuildAdd(bd, a, b, "");
  }
  if (kind == KILN_TIR_EXPR_SUB) {
    return nsw ? LLVMBuildNSWSub(bd, a, b, "") : LLVMBuildSub(bd, a, b, "");
  }
  if (kind == KILN_TIR_EXPR_MUL) {
    return nsw ? LLVMBuildNSWMul(bd, a, b, "") : LLVMBuildMul(bd, a, b, "");
  }
  if (kind == KILN_TIR_EXPR_DIV || kind == KILN_TIR_EXPR_FLOOR_DIV) {
    return floor_div_mod(ll, 0, s, a, b);
  }
  if (kind == KILN_TIR_EXPR_FLOOR_MOD) {
    return floor_div_mod(ll, 1, s, a, b);
  }
  if (kind == KILN_TIR_EXPR_MIN || kind == KILN_TIR_EXPR_MAX) {
    return LLVMBuildSelect(bd, int_compare(ll, kind, s, a, b), a, b, "");
  }
  if (kind == KILN_TIR_EXPR_AND) {
    return LLVMBuildAnd(bd, a, b, "");
  }
  if (kind == KILN_TIR_EXPR_OR) {
    return LLVMBuildOr(bd, a, b, "");
  }
  return int_compare(ll, kind, s, a, b);
}

static LLVMValueRef float_binary(kiln_llvm_t *ll, kiln_tir_expr_kind_t kind, LLVMValueRef a,
                                 LLVMValueRef b) {
  LLVMBuilderRef bd = ll->builder;
  if (kind == KILN_TIR_EXPR_ADD) {
    return LLVMBuildFAdd(bd, a, b, "");
  }
  if (kind == KILN_TIR_EXPR_SUB) {
    return LLVMBuildFSub(bd, a, b, "");
  }
  if (kind == KILN_TIR_EXPR_MUL) {
    return LLVMBuildFMul(bd, a, b, "");
  }
  if (kind == KILN_TIR_EXPR_DIV) {
    return LLVMBuildFDiv(bd, a, b, "");
  }
  if (kind == KILN_TIR_EXPR_FLOOR_DIV || kind == KILN_TIR_EXPR_FLOOR_MOD) {
    LLVMValueRef q = LLVMBuildFDiv(bd, a, b, "");
    q = kiln_llvm_intrinsic(ll, "llvm.floor", LLVMTypeOf(q), &q, 1);
    return kind == KILN_TIR_EXPR_FLOOR_DIV ? q
                                           : LLVMBuildFSub(bd, a, LLVMBuildFMul(bd, q, b, ""), "");
  }
  if (kind == KILN_TIR_EXPR_MIN || kind == KILN_TIR_EXPR_MAX) {
    return LLVMBuildSelect(bd, float_compare(ll, kind, a, b), a, b, "");
  }
  return float_compare(ll, kind, a, b);
}

/* A float32 or float64 multiply (a narrow one rounds its product). */
static int is_float_mul(const kiln_tir_expr_t *e) {
  return e->kind == KILN_TIR_EXPR_MUL && kiln_tir_dtype_is_float(e->dtype) &&
         !kiln_llvm_is_narrow(e->dtype.base);
}

/* a * b + c as llvm.fmuladd. */
static kiln_status_t emit_fmuladd(kiln_llvm_t *ll, const kiln_tir_binary_t *mul,
                                  const kiln_tir_expr_t *addend, LLVMValueRef *out) {
  LLVMValueRef args[3];
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, mul->a, &args[0]));
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, mul->b, &args[1]));
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, addend, &args[2]));
  match_lanes(ll, &args[0], &args[1]);
  match_lanes(ll, &args[0], &args[2]);
  match_lanes(ll, &args[1], &args[2]);
  *out = kiln_llvm_intrinsic(ll, "llvm.fmuladd", LLVMTypeOf(args[0]), args, 3);
  return KILN_OK;
}

static int is_compare(kiln_tir_expr_kind_t kind) {
  return kind >= KILN_TIR_EXPR_EQ && kind <= KILN_TIR_EXPR_GE;
}

static kiln_status_t emit_binary(kiln_llvm_t *ll, const kiln_tir_binary_t *n, LLVMValueRef *out) {
  kiln_tir_expr_kind_t kind = n->base.kind;
  kiln_tir_dtype_t dtype = n->a->dtype;
  if (kind == KILN_TIR_EXPR_ADD && kiln_tir_dtype_is_float(dtype) &&
      !kiln_llvm_is_narrow(dtype.base)) {
    if (is_float_mul(n->a)) {
      return emit_fmuladd(ll, (const void *)n->a, n->b, out);
    }
    if (is_float_mul(n->b)) {
      return emit_fmuladd(ll, (const void *)n->b, n->a, out);
    }
  }
  LLVMValueRef a = NULL, b = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->a, &a));
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->b, &b));
  match_lanes(ll, &a, &b);
  if (kiln_tir_dtype_is_float(dtype)) {
    *out = float_binary(ll, kind, a, b);
    return KILN_OK;
  }
  if (kiln_tir_dtype_is_bool(dtype) && !is_compare(kind) && kind != KILN_TIR_EXPR_AND &&
      kind != KILN_TIR_EXPR_OR) {
    /* Arithmetic on bools: on 0/1 in int32, then != 0 (the interpreter's wrap). */
    LLVMTypeRef wide = LLVMTypeOf(a) == ll->t_i1
                           ? ll->t_i32
                           : LLVMVectorType(ll->t_i32, LLVMGetVectorSize(LLVMTypeOf(a)));
    LLVMValueRef r = int_binary(ll, kind, 1, LLVMBuildZExt(ll->builder, a, wide, ""),
                                LLVMBuildZExt(ll->builder, b, wide, ""));
    *out = LLVMBuildICmp(ll->builder, LLVMIntNE, r, const_int(wide, 0), "");
    return KILN_OK;
  }
  *out = int_binary(ll, kind, is_signed(dtype.base), a, b);
  return KILN_OK;
}

/* ---- casts, select, constants ---- */

static kiln_status_t emit_cast(kiln_llvm_t *ll, const kiln_tir_cast_t *n, LLVMValueRef *out) {
  LLVMBuilderRef bd = ll->builder;
  kiln_tir_dtype_t from = n->value->dtype, to = n->base.dtype;
  KILN_RETURN_IF_ERROR(kiln_llvm_check_dtype(ll, to.base, "Cast to", kiln_dtype_name(to.base)));
  LLVMValueRef v = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->value, &v));
  LLVMTypeRef type = kiln_llvm_type(ll, to);
  int from_float = kiln_tir_dtype_is_float(from), to_float = kiln_tir_dtype_is_float(to);
  if (kiln_tir_dtype_is_bool(to)) {
    LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(v));
    *out = from_float ? LLVMBuildFCmp(bd, LLVMRealUNE, v, zero, "")
                      : LLVMBuildICmp(bd, LLVMIntNE, v, zero, "");
  } else if (from_float && to_float) {
    *out = LLVMBuildFPCast(bd, v, type, "");
  } else if (to_float) {
    *out =
        is_signed(from.base) ? LLVMBuildSIToFP(bd, v, type, "") : LLVMBuildUIToFP(bd, v, type, "");
  } else if (from_float) {
    LLVMTypeRef types[] = {type, LLVMTypeOf(v)};
    const char *name = is_signed(to.base) ? "llvm.fptosi.sat" : "llvm.fptoui.sat";
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(ll->module, id, types, 2);
    *out = LLVMBuildCall2(bd, LLVMIntrinsicGetType(ll->context, id, types, 2), fn, &v, 1, "");
  } else {
    *out = LLVMBuildIntCast2(bd, v, type, is_signed(from.base), "");
  }
  if (kiln_llvm_is_narrow(to.base) && to.base != from.base) {
    *out = kiln_llvm_round_narrow(ll, to.base, *out);
  }
  return KILN_OK;
}

/* Whether `e` reads memory (memoized: the tree may be a DAG). */
static int has_load(kiln_llvm_t *ll, const kiln_tir_expr_t *e) {
  void *cached = NULL;
  if (kiln_hashmap_get(&ll->has_load, e, &cached)) {
    return cached == (void *)2;
  }
  int result = e->kind == KILN_TIR_EXPR_BUFFER_LOAD;
  const kiln_tir_expr_t *operands[KILN_TIR_MAX_OPERANDS];
  int count = result ? 0 : kiln_tir_expr_operands(e, operands);
  for (int i = 0; i < count && !result; ++i) {
    result = has_load(ll, operands[i]);
  }
  kiln_status_free(kiln_hashmap_put(&ll->has_load, e, result ? (void *)2 : (void *)1));
  return result;
}

/* One arm of a lazy select, in its own block; its memoized values are
 * forgotten after (they do not dominate the join). */
static kiln_status_t emit_arm(kiln_llvm_t *ll, const kiln_tir_expr_t *e, LLVMBasicBlockRef block,
                              LLVMBasicBlockRef join, LLVMValueRef *out_value,
                              LLVMBasicBlockRef *out_end) {
  LLVMPositionBuilderAtEnd(ll->builder, block);
  size_t mark = kiln_array_count(&ll->memo_log);
  kiln_status_t status = kiln_llvm_expr(ll, e, out_value);
  kiln_llvm_memo_undo(ll, mark);
  KILN_RETURN_IF_ERROR(status);
  *out_end = LLVMGetInsertBlock(ll->builder);
  LLVMBuildBr(ll->builder, join);
  return KILN_OK;
}

static kiln_status_t emit_select(kiln_llvm_t *ll, const kiln_tir_select_t *n, LLVMValueRef *out) {
  LLVMValueRef cond = NULL, a = NULL, b = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->condition, &cond));
  if (n->base.dtype.lanes > 1 || (!has_load(ll, n->true_value) && !has_load(ll, n->false_value))) {
    KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->true_value, &a));
    KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->false_value, &b));
    match_lanes(ll, &a, &b);
    *out = LLVMBuildSelect(ll->builder, cond, a, b, "");
    return KILN_OK;
  }
  LLVMBasicBlockRef then_block = LLVMAppendBasicBlockInContext(ll->context, ll->function, "sel.t");
  LLVMBasicBlockRef else_block = LLVMAppendBasicBlockInContext(ll->context, ll->function, "sel.f");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(ll->context, ll->function, "sel.join");
  LLVMBuildCondBr(ll->builder, cond, then_block, else_block);
  LLVMBasicBlockRef ends[2];
  LLVMValueRef values[2];
  KILN_RETURN_IF_ERROR(emit_arm(ll, n->true_value, then_block, join, &values[0], &ends[0]));
  KILN_RETURN_IF_ERROR(emit_arm(ll, n->false_value, else_block, join, &values[1], &ends[1]));
  LLVMPositionBuilderAtEnd(ll->builder, join);
  LLVMValueRef phi = LLVMBuildPhi(ll->builder, LLVMTypeOf(values[0]), "sel");
  LLVMAddIncoming(phi, values, ends, 2);
  *out = phi;
  return KILN_OK;
}

static kiln_status_t emit_ramp(kiln_llvm_t *ll, const kiln_tir_ramp_t *n, LLVMValueRef *out) {
  LLVMValueRef start = NULL, stride = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->start, &start));
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->stride, &stride));
  int lanes = n->base.dtype.lanes, is_float = kiln_tir_dtype_is_float(n->base.dtype);
  LLVMTypeRef scalar = LLVMTypeOf(start);
  LLVMValueRef steps[KILN_TIR_MAX_LANES];
  for (int l = 0; l < lanes; ++l) {
    steps[l] = is_float ? LLVMConstReal(scalar, l) : LLVMConstInt(scalar, (unsigned long long)l, 0);
  }
  LLVMValueRef lane = LLVMConstVector(steps, (unsigned)lanes);
  LLVMValueRef vstart = kiln_llvm_splat(ll, start, lanes);
  LLVMValueRef vstride = kiln_llvm_splat(ll, stride, lanes);
  *out = is_float
             ? LLVMBuildFAdd(ll->builder, LLVMBuildFMul(ll->builder, lane, vstride, ""), vstart, "")
             : LLVMBuildAdd(ll->builder, LLVMBuildMul(ll->builder, lane, vstride, ""), vstart, "");
  return KILN_OK;
}

static kiln_status_t emit_int_imm(kiln_llvm_t *ll, const kiln_tir_int_imm_t *n, LLVMValueRef *out) {
  KILN_RETURN_IF_ERROR(kiln_llvm_check_dtype(ll, n->base.dtype.base, "IntImm", ""));
  LLVMTypeRef type = kiln_llvm_type(ll, n->base.dtype);
  int64_t value = kiln_tir_dtype_is_bool(n->base.dtype) ? n->value != 0 : n->value;
  *out = const_int(type, value);
  return KILN_OK;
}

static kiln_status_t emit_float_imm(kiln_llvm_t *ll, const kiln_tir_float_imm_t *n,
                                    LLVMValueRef *out) {
  KILN_RETURN_IF_ERROR(kiln_llvm_check_dtype(ll, n->base.dtype.base, "FloatImm", ""));
  kiln_dtype_t base = n->base.dtype.base;
  LLVMTypeRef scalar = kiln_llvm_type(ll, kiln_tir_scalar(base));
  float f = (float)n->value;
  double value = base == KILN_DTYPE_FLOAT16
                     ? kiln_scalar_float16_to_float32(kiln_scalar_float32_to_float16(f))
                 : base == KILN_DTYPE_BFLOAT16
                     ? kiln_scalar_bfloat16_to_float32(kiln_scalar_float32_to_bfloat16(f))
                     : n->value;
  *out = kiln_llvm_splat(ll, LLVMConstReal(scalar, value), n->base.dtype.lanes);
  return KILN_OK;
}

/* ---- memory ---- */

static LLVMValueRef add_mixed(kiln_llvm_t *ll, LLVMValueRef a, LLVMValueRef b) {
  match_lanes(ll, &a, &b);
  return LLVMBuildNSWAdd(ll->builder, a, b, "");
}

static LLVMValueRef mul_mixed(kiln_llvm_t *ll, LLVMValueRef a, LLVMValueRef b) {
  match_lanes(ll, &a, &b);
  return LLVMBuildNSWMul(ll->builder, a, b, "");
}

static kiln_status_t expr_i64(kiln_llvm_t *ll, const kiln_tir_expr_t *e, LLVMValueRef *out) {
  LLVMValueRef v = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, e, &v));
  *out = kiln_llvm_to_i64(ll, v, e->dtype);
  return KILN_OK;
}

static kiln_status_t offset_of(kiln_llvm_t *ll, const kiln_tir_buffer_t *buffer, int num_indices,
                               const kiln_tir_expr_t *const *indices, LLVMValueRef *out);

/* A loop variable's i64 value (its counter plus min), when it was made in
 * the function being written (a lambda rebinds the variables it captures). */
static LLVMValueRef wide_var(kiln_llvm_t *ll, const kiln_tir_expr_t *e) {
  void *value = NULL;
  if (!kiln_hashmap_get(&ll->wide, e, &value) || !LLVMIsAInstruction(value) ||
      LLVMGetBasicBlockParent(LLVMGetInstructionParent(value)) != ll->function) {
    return NULL;
  }
  return value;
}

/* A scalar signed index in i64: sums, differences and products of loop
 * variables (their i64 values) and constants built in i64 with no signed
 * wrap; any other node in its dtype, sign-extended. It is the dtype's
 * value whenever the dtype's arithmetic does not wrap, which offset()
 * already assumes; LLVM then needs no sign extension inside the loops to
 * address (an int32 index's sext kept scalar work on the FMA ports of a
 * conv's register tile). */
static kiln_status_t index_i64(kiln_llvm_t *ll, const kiln_tir_expr_t *e, LLVMValueRef *out) {
  int64_t constant = 0;
  bool is_signed = e->dtype.lanes == 1 &&
                   (e->dtype.base == KILN_DTYPE_INT32 || e->dtype.base == KILN_DTYPE_INT64);
  if (is_signed && kiln_tir_expr_as_int(e, &constant)) {
    *out = LLVMConstInt(ll->t_i64, (unsigned long long)constant, 1);
    return KILN_OK;
  }
  if (is_signed && e->kind == KILN_TIR_EXPR_VAR && (*out = wide_var(ll, e))) {
    return KILN_OK;
  }
  if (!is_signed || (e->kind != KILN_TIR_EXPR_ADD && e->kind != KILN_TIR_EXPR_SUB &&
                     e->kind != KILN_TIR_EXPR_MUL)) {
    return expr_i64(ll, e, out);
  }
  const kiln_tir_binary_t *n = (const void *)e;
  LLVMValueRef a = NULL, b = NULL;
  KILN_RETURN_IF_ERROR(index_i64(ll, n->a, &a));
  KILN_RETURN_IF_ERROR(index_i64(ll, n->b, &b));
  *out = e->kind == KILN_TIR_EXPR_ADD   ? LLVMBuildNSWAdd(ll->builder, a, b, "")
         : e->kind == KILN_TIR_EXPR_SUB ? LLVMBuildNSWSub(ll->builder, a, b, "")
                                        : LLVMBuildNSWMul(ll->builder, a, b, "");
  return KILN_OK;
}

/* Stride of dim d: the buffer's, else the product of the later dims. */
static kiln_status_t stride(kiln_llvm_t *ll, const kiln_tir_buffer_t *buffer, int d,
                            LLVMValueRef *out) {
  if (buffer->strides) {
    return expr_i64(ll, buffer->strides[d], out);
  }
  LLVMValueRef product = LLVMConstInt(ll->t_i64, 1, 0);
  for (int k = d + 1; k < buffer->ndim; ++k) {
    LLVMValueRef extent = NULL;
    KILN_RETURN_IF_ERROR(expr_i64(ll, buffer->shape[k], &extent));
    product = LLVMBuildMul(ll->builder, product, extent, "");
  }
  *out = product;
  return KILN_OK;
}

/* The flat element offset (i64, or <lanes x i64> for vector indices).
 * Signed index arithmetic is emitted with no signed wrap: an index that
 * wrapped would address outside its buffer, which lowering rules out
 * (extents are checked against int32), so LLVM may widen the int32 index
 * arithmetic to i64 and fold its constant parts into addressing modes. */
static kiln_status_t offset(kiln_llvm_t *ll, const kiln_tir_buffer_t *buffer, int num_indices,
                            const kiln_tir_expr_t *const *indices, LLVMValueRef *out) {
  ll->in_index++;
  kiln_status_t status = offset_of(ll, buffer, num_indices, indices, out);
  ll->in_index--;
  return status;
}

static kiln_status_t offset_of(kiln_llvm_t *ll, const kiln_tir_buffer_t *buffer, int num_indices,
                               const kiln_tir_expr_t *const *indices, LLVMValueRef *out) {
  LLVMValueRef total = LLVMConstInt(ll->t_i64, 0, 0);
  if (buffer->elem_offset) {
    KILN_RETURN_IF_ERROR(expr_i64(ll, buffer->elem_offset, &total));
  }
  for (int d = 0; d < num_indices; ++d) {
    LLVMValueRef index = NULL;
    KILN_RETURN_IF_ERROR(index_i64(ll, indices[d], &index));
    if (num_indices == buffer->ndim) {
      LLVMValueRef s = NULL;
      KILN_RETURN_IF_ERROR(stride(ll, buffer, d, &s));
      index = mul_mixed(ll, index, s);
    }
    total = add_mixed(ll, total, index);
  }
  *out = total;
  return KILN_OK;
}

/* The constant step of a one-index access ramp(start, step) into a buffer
 * of unit stride, else 0. */
static int64_t ramp_step(const kiln_tir_buffer_t *buffer, int num_indices,
                         const kiln_tir_expr_t *const *indices) {
  int64_t step = 0;
  if (num_indices != 1 || indices[0]->kind != KILN_TIR_EXPR_RAMP) {
    return 0;
  }
  if (buffer->ndim == 1 && buffer->strides &&
      !(kiln_tir_expr_as_int(buffer->strides[0], &step) && step == 1)) {
    return 0;
  }
  const kiln_tir_ramp_t *ramp = (const void *)indices[0];
  return kiln_tir_expr_as_int(ramp->stride, &step) ? step : 0;
}

/* A one-index access whose index is ramp(start, 1): contiguous. */
static int is_contiguous(const kiln_tir_buffer_t *buffer, int num_indices,
                         const kiln_tir_expr_t *const *indices) {
  return ramp_step(buffer, num_indices, indices) == 1;
}

static kiln_status_t base_pointer(kiln_llvm_t *ll, const kiln_tir_buffer_t *buffer,
                                  LLVMValueRef *out) {
  void *data = NULL;
  if (!kiln_hashmap_get(&ll->vars, buffer->data, &data)) {
    return KILN_STATUS(INTERNAL, "%s: the data of buffer %s is not bound", ll->func->name,
                       buffer->name);
  }
  KILN_RETURN_IF_ERROR(kiln_llvm_check_dtype(ll, buffer->dtype, "buffer", buffer->name));
  *out = LLVMBuildBitCast(ll->builder, data,
                          LLVMPointerType(kiln_llvm_mem_type(ll, buffer->dtype), 0), "");
  return KILN_OK;
}

kiln_status_t kiln_llvm_address(kiln_llvm_t *ll, const kiln_tir_buffer_t *buffer, int num_indices,
                                const kiln_tir_expr_t *const *indices, int lanes,
                                LLVMValueRef *out_address) {
  *out_address = NULL;
  LLVMValueRef base = NULL, flat = NULL;
  if (lanes > 1 && !is_contiguous(buffer, num_indices, indices)) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(base_pointer(ll, buffer, &base));
  if (lanes > 1) {
    KILN_RETURN_IF_ERROR(
        offset(ll, buffer, 1, &((const kiln_tir_ramp_t *)indices[0])->start, &flat));
  } else {
    KILN_RETURN_IF_ERROR(offset(ll, buffer, num_indices, indices, &flat));
  }
  *out_address =
      LLVMBuildInBoundsGEP2(ll->builder, kiln_llvm_mem_type(ll, buffer->dtype), base, &flat, 1, "");
  return KILN_OK;
}

kiln_status_t kiln_llvm_lane_offsets(kiln_llvm_t *ll, const kiln_tir_buffer_t *buffer,
                                     int num_indices, const kiln_tir_expr_t *const *indices,
                                     int lanes, LLVMValueRef *out_offsets) {
  LLVMValueRef flat = NULL;
  KILN_RETURN_IF_ERROR(offset(ll, buffer, num_indices, indices, &flat));
  *out_offsets = kiln_llvm_splat(ll, flat, lanes);
  return KILN_OK;
}

/* The constant step of a one-index access ramp(start, step) with 1 < step
 * <= KILN_LLVM_MAX_LOAD_STEP into a buffer of unit stride, else 0. */
static int64_t strided_step(const kiln_tir_buffer_t *buffer, int num_indices,
                            const kiln_tir_expr_t *const *indices) {
  int64_t step = ramp_step(buffer, num_indices, indices);
  return step >= 2 && step <= KILN_LLVM_MAX_LOAD_STEP ? step : 0;
}

/* A load of ramp(start, step): the (lanes - 1) * step + 1 elements from the
 * first lane's to the last lane's, one contiguous vector load, then a
 * shuffle that keeps every step-th (x86 turns it into permutes, where lane
 * by lane it is a load and an insert per lane: stride-2 pooling and
 * convolution windows in NCHW). It touches no element outside the lanes'
 * span, so no address the lane-by-lane loads would not. */
static kiln_status_t emit_strided_load(kiln_llvm_t *ll, const kiln_tir_buffer_load_t *n,
                                       int64_t step, LLVMValueRef *out) {
  LLVMBuilderRef bd = ll->builder;
  const kiln_tir_buffer_t *buffer = n->buffer;
  int lanes = n->base.dtype.lanes;
  LLVMTypeRef mem = kiln_llvm_mem_type(ll, buffer->dtype);
  LLVMValueRef base = NULL, flat = NULL;
  KILN_RETURN_IF_ERROR(base_pointer(ll, buffer, &base));
  KILN_RETURN_IF_ERROR(
      offset(ll, buffer, 1, &((const kiln_tir_ramp_t *)n->indices[0])->start, &flat));
  unsigned span = (unsigned)((lanes - 1) * step + 1);
  LLVMTypeRef wide = LLVMVectorType(mem, span);
  LLVMValueRef address = LLVMBuildInBoundsGEP2(bd, mem, base, &flat, 1, "");
  LLVMValueRef all =
      LLVMBuildLoad2(bd, wide, LLVMBuildBitCast(bd, address, LLVMPointerType(wide, 0), ""), "");
  LLVMSetAlignment(all, (unsigned)kiln_dtype_size(buffer->dtype));
  LLVMValueRef mask[KILN_LLVM_MAX_LOAD_LANES];
  for (int l = 0; l < lanes; ++l) {
    mask[l] = LLVMConstInt(ll->t_i32, (unsigned long long)(l * step), 0);
  }
  *out = LLVMBuildShuffleVector(bd, all, LLVMGetUndef(wide), LLVMConstVector(mask, (unsigned)lanes),
                                "");
  return KILN_OK;
}

/* A load whose lanes' offsets follow no short ramp: llvm.masked.gather over a
 * vector of addresses with every lane on (AVX2 and AVX-512 gather
 * instructions; LLVM scalarizes it for targets without them) for elements
 * of 4 and 8 bytes, else a load and an insert per lane. The gather reads
 * exactly the lanes' elements, as the lane-by-lane loads do. */
static kiln_status_t emit_gather(kiln_llvm_t *ll, const kiln_tir_buffer_load_t *n,
                                 LLVMValueRef *out) {
  LLVMBuilderRef bd = ll->builder;
  const kiln_tir_buffer_t *buffer = n->buffer;
  unsigned lanes = (unsigned)n->base.dtype.lanes, align = (unsigned)kiln_dtype_size(buffer->dtype);
  LLVMTypeRef mem = kiln_llvm_mem_type(ll, buffer->dtype), vector = LLVMVectorType(mem, lanes);
  LLVMValueRef base = NULL, offsets = NULL;
  KILN_RETURN_IF_ERROR(base_pointer(ll, buffer, &base));
  KILN_RETURN_IF_ERROR(
      kiln_llvm_lane_offsets(ll, buffer, n->num_indices, n->indices, (int)lanes, &offsets));
  if (align == 4 || align == 8) {
    LLVMValueRef addresses = LLVMBuildInBoundsGEP2(bd, mem, base, &offsets, 1, "");
    LLVMTypeRef types[] = {vector, LLVMTypeOf(addresses)};
    unsigned id = LLVMLookupIntrinsicID("llvm.masked.gather", strlen("llvm.masked.gather"));
    LLVMValueRef args[] = {
        addresses, LLVMConstInt(ll->t_i32, align, 0),
        LLVMConstAllOnes(LLVMVectorType(LLVMInt1TypeInContext(ll->context), lanes)),
        LLVMGetUndef(vector)};
    *out = LLVMBuildCall2(bd, LLVMIntrinsicGetType(ll->context, id, types, 2),
                          LLVMGetIntrinsicDeclaration(ll->module, id, types, 2), args, 4, "");
    return KILN_OK;
  }
  LLVMValueRef value = LLVMGetUndef(vector);
  for (unsigned l = 0; l < lanes; ++l) {
    LLVMValueRef lane = LLVMConstInt(ll->t_i32, l, 0);
    LLVMValueRef at = LLVMBuildExtractElement(bd, offsets, lane, "");
    LLVMValueRef element =
        LLVMBuildLoad2(bd, mem, LLVMBuildInBoundsGEP2(bd, mem, base, &at, 1, ""), "");
    LLVMSetAlignment(element, align);
    value = LLVMBuildInsertElement(bd, value, element, lane, "");
  }
  *out = value;
  return KILN_OK;
}

static kiln_status_t emit_load(kiln_llvm_t *ll, const kiln_tir_buffer_load_t *n,
                               LLVMValueRef *out) {
  LLVMBuilderRef bd = ll->builder;
  const kiln_tir_buffer_t *buffer = n->buffer;
  int lanes = n->base.dtype.lanes, is_bool = buffer->dtype == KILN_DTYPE_BOOL;
  unsigned align = (unsigned)kiln_dtype_size(buffer->dtype);
  LLVMTypeRef mem = kiln_llvm_mem_type(ll, buffer->dtype);
  LLVMValueRef address = NULL, value = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_address(ll, buffer, n->num_indices, n->indices, lanes, &address));
  int64_t step = address || lanes > KILN_LLVM_MAX_LOAD_LANES
                     ? 0
                     : strided_step(buffer, n->num_indices, n->indices);
  if (address && lanes == 1) {
    value = LLVMBuildLoad2(bd, mem, address, "");
    LLVMSetAlignment(value, align);
  } else if (step) {
    KILN_RETURN_IF_ERROR(emit_strided_load(ll, n, step, &value));
  } else if (address) {
    LLVMTypeRef vector = LLVMVectorType(mem, (unsigned)lanes);
    value = LLVMBuildLoad2(bd, vector,
                           LLVMBuildBitCast(bd, address, LLVMPointerType(vector, 0), ""), "");
    LLVMSetAlignment(value, align);
  } else {
    KILN_RETURN_IF_ERROR(emit_gather(ll, n, &value));
  }
  if (kiln_llvm_is_narrow(buffer->dtype)) {
    value = kiln_llvm_widen_narrow(ll, buffer->dtype, value);
  }
  *out =
      is_bool ? LLVMBuildICmp(bd, LLVMIntNE, value, LLVMConstNull(LLVMTypeOf(value)), "") : value;
  return KILN_OK;
}

static kiln_status_t emit_let(kiln_llvm_t *ll, const kiln_tir_let_t *n, LLVMValueRef *out) {
  LLVMValueRef value = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->value, &value));
  KILN_RETURN_IF_ERROR(kiln_llvm_bind(ll, n->var, value));
  return kiln_llvm_expr(ll, n->body, out);
}

static kiln_status_t emit_call(kiln_llvm_t *ll, const kiln_tir_call_t *n, LLVMValueRef *out) {
  LLVMValueRef args[3] = {NULL, NULL, NULL};
  if (n->num_args < 1 || n->num_args > 3) {
    return KILN_STATUS(INTERNAL, "%s: %s with %d arguments", ll->func->name,
                       kiln_tir_intrinsic_name(n->op), n->num_args);
  }
  for (int i = 0; i < n->num_args; ++i) {
    KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->args[i], &args[i]));
  }
  return kiln_llvm_call(ll, n, args, out);
}

static kiln_status_t emit_node(kiln_llvm_t *ll, const kiln_tir_expr_t *e, LLVMValueRef *out) {
  if (kiln_tir_expr_kind_is_binary(e->kind)) {
    return emit_binary(ll, (const void *)e, out);
  }
  switch (e->kind) {
  case KILN_TIR_EXPR_INT_IMM:
    return emit_int_imm(ll, (const void *)e, out);
  case KILN_TIR_EXPR_FLOAT_IMM:
    return emit_float_imm(ll, (const void *)e, out);
  case KILN_TIR_EXPR_VAR: {
    void *value = NULL;
    if (!kiln_hashmap_get(&ll->vars, e, &value)) {
      return KILN_STATUS(INTERNAL, "%s: variable %s is not bound", ll->func->name,
                         ((const kiln_tir_var_t *)e)->name);
    }
    *out = value;
    return KILN_OK;
  }
  case KILN_TIR_EXPR_NOT: {
    LLVMValueRef a = NULL;
    KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, ((const kiln_tir_not_t *)e)->a, &a));
    *out = LLVMBuildNot(ll->builder, a, "");
    return KILN_OK;
  }
  case KILN_TIR_EXPR_SELECT:
    return emit_select(ll, (const void *)e, out);
  case KILN_TIR_EXPR_CAST:
    return emit_cast(ll, (const void *)e, out);
  case KILN_TIR_EXPR_BUFFER_LOAD:
    return emit_load(ll, (const void *)e, out);
  case KILN_TIR_EXPR_RAMP:
    return emit_ramp(ll, (const void *)e, out);
  case KILN_TIR_EXPR_BROADCAST: {
    const kiln_tir_broadcast_t *n = (const void *)e;
    LLVMValueRef value = NULL;
    KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->value, &value));
    *out = kiln_llvm_splat(ll, value, n->base.dtype.lanes);
    return KILN_OK;
  }
  case KILN_TIR_EXPR_CALL:
    return emit_call(ll, (const void *)e, out);
  case KILN_TIR_EXPR_LET:
    return emit_let(ll, (const void *)e, out);
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
  return KILN_STATUS(INTERNAL, "%s: invalid expression kind %d", ll->func->name, (int)e->kind);
}

/* Whether node kind `kind` computes a new float value (which a narrow
 * dtype rounds); casts round in emit_cast, loads and immediates are exact. */
static bool computes(kiln_tir_expr_kind_t kind) {
  return kind == KILN_TIR_EXPR_ADD || kind == KILN_TIR_EXPR_SUB || kind == KILN_TIR_EXPR_MUL ||
         kind == KILN_TIR_EXPR_DIV || kind == KILN_TIR_EXPR_FLOOR_DIV ||
         kind == KILN_TIR_EXPR_FLOOR_MOD || kind == KILN_TIR_EXPR_CALL ||
         kind == KILN_TIR_EXPR_RAMP;
}

static kiln_status_t emit(kiln_llvm_t *ll, const kiln_tir_expr_t *e, LLVMValueRef *out) {
  KILN_RETURN_IF_ERROR(emit_node(ll, e, out));
  if (kiln_llvm_is_narrow(e->dtype.base) && computes(e->kind)) {
    *out = kiln_llvm_round_narrow(ll, e->dtype.base, *out);
  }
  return KILN_OK;
}

kiln_status_t kiln_llvm_expr(kiln_llvm_t *ll, const kiln_tir_expr_t *e, LLVMValueRef *out_value) {
  void *cached = NULL;
  if (kiln_hashmap_get(&ll->memo, e, &cached)) {
    *out_value = cached;
    return KILN_OK;
  }
  LLVMValueRef value = NULL;
  KILN_RETURN_IF_ERROR(emit(ll, e, &value));
  if (e->kind != KILN_TIR_EXPR_VAR && e->kind != KILN_TIR_EXPR_INT_IMM &&
      e->kind != KILN_TIR_EXPR_FLOAT_IMM) {
    KILN_RETURN_IF_ERROR(kiln_hashmap_put(&ll->memo, e, value));
    KILN_RETURN_IF_ERROR(kiln_array_push(&ll->memo_log, &e));
  }
  *out_value = value;
  return KILN_OK;
}
