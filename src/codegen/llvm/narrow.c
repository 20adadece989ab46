/*
 * float16 and bfloat16 in the LLVM backend: memory holds their bits (i16),
 * registers hold float32 values that the narrow type represents exactly.
 *
 * A load widens (exact), a store narrows (exact, since the value is
 * already representable), arithmetic on a narrow dtype is float32
 * arithmetic rounded back to it (kiln_llvm_round_narrow after each node;
 * for + - * / that is the correctly rounded narrow result, since float32
 * has more than twice the bits), and a cast to a narrow dtype goes through
 * float32 and is rounded. The conversions are base/scalar_ops.h's
 * kiln_scalar_float16_to_float32 & co. built instruction for instruction
 * as integer IR: compares and selects instead of branches, so they work on
 * vectors as on scalars and the loop vectorizes; tests/codegen run every
 * float16 and bfloat16 pattern and a sweep of float32 ones through them
 * against the C functions, bit for bit. (F16C's vcvtph2ps/vcvtps2ph would
 * be shorter, but they quiet signaling NaNs, which the shared definition
 * keeps, and need the target's features, which the emitter does not see.)
 */
#include "codegen/llvm/emit.h"

bool kiln_llvm_is_narrow(kiln_dtype_t dtype) {
  return dtype == KILN_DTYPE_FLOAT16 || dtype == KILN_DTYPE_BFLOAT16;
}

/* `value` as a constant of `type` (i32 or a vector of it). */
static LLVMValueRef k32(kiln_llvm_t *ll, LLVMTypeRef type, uint32_t value) {
  LLVMValueRef scalar = LLVMConstInt(ll->t_i32, value, 0);
  if (LLVMGetTypeKind(type) != LLVMVectorTypeKind) {
    return scalar;
  }
  LLVMValueRef lanes[KILN_TIR_MAX_LANES];
  unsigned n = LLVMGetVectorSize(type);
  for (unsigned i = 0; i < n; ++i) {
    lanes[i] = scalar;
  }
  return LLVMConstVector(lanes, n);
}

/* The same shape as `like` with element type `element`. */
static LLVMTypeRef like_type(LLVMTypeRef like, LLVMTypeRef element) {
  return LLVMGetTypeKind(like) == LLVMVectorTypeKind
             ? LLVMVectorType(element, LLVMGetVectorSize(like))
             : element;
}

typedef struct bits_t {
  kiln_llvm_t *ll;
  LLVMBuilderRef b;
  LLVMTypeRef i32; /* i32 or <n x i32> */
} bits_t;

static LLVMValueRef and_(bits_t *s, LLVMValueRef x, uint32_t mask) {
  return LLVMBuildAnd(s->b, x, k32(s->ll, s->i32, mask), "");
}

static LLVMValueRef shl(bits_t *s, LLVMValueRef x, uint32_t by) {
  return LLVMBuildShl(s->b, x, k32(s->ll, s->i32, by), "");
}

static LLVMValueRef lshr(bits_t *s, LLVMValueRef x, uint32_t by) {
  return LLVMBuildLShr(s->b, x, k32(s->ll, s->i32, by), "");
}

static LLVMValueRef add(bits_t *s, LLVMValueRef x, uint32_t c) {
  return LLVMBuildAdd(s->b, x, k32(s->ll, s->i32, c), "");
}

/* x (unsigned) `predicate` c. */
static LLVMValueRef cmp(bits_t *s, LLVMIntPredicate predicate, LLVMValueRef x, uint32_t c) {
  return LLVMBuildICmp(s->b, predicate, x, k32(s->ll, s->i32, c), "");
}

static LLVMValueRef to_float(bits_t *s, LLVMValueRef bits) {
  return LLVMBuildBitCast(s->b, bits, like_type(s->i32, s->ll->t_f32), "");
}

static LLVMValueRef to_bits(bits_t *s, LLVMValueRef value) {
  return LLVMBuildBitCast(s->b, value, s->i32, "");
}

/* kiln_scalar_float16_to_float32 on i32 lanes holding the bits. */
static LLVMValueRef widen_f16(bits_t *s, LLVMValueRef h) {
  LLVMBuilderRef b = s->b;
  LLVMValueRef sign = shl(s, and_(s, h, 0x8000u), 16), rest = and_(s, h, 0x7fffu);
  LLVMValueRef special =
      LLVMBuildOr(b, shl(s, and_(s, rest, 0x3ffu), 13), k32(s->ll, s->i32, 0x7f800000u), "");
  LLVMValueRef normal = shl(s, add(s, rest, 0x1c000u), 13);
  LLVMValueRef scaled =
      LLVMBuildFMul(b, LLVMBuildUIToFP(b, rest, like_type(s->i32, s->ll->t_f32), ""),
                    to_float(s, k32(s->ll, s->i32, 0x33800000u)), ""); /* 2^-24 */
  LLVMValueRef r =
      LLVMBuildSelect(b, cmp(s, LLVMIntUGE, rest, 0x400u), normal, to_bits(s, scaled), "");
  r = LLVMBuildSelect(b, cmp(s, LLVMIntUGE, rest, 0x7c00u), special, r, "");
  return to_float(s, LLVMBuildOr(b, sign, r, ""));
}

/* kiln_scalar_float32_to_float16, the result in i32 lanes. */
static LLVMValueRef narrow_f16(bits_t *s, LLVMValueRef x) {
  LLVMBuilderRef b = s->b;
  LLVMValueRef bits = to_bits(s, x);
  LLVMValueRef sign = and_(s, lshr(s, bits, 16), 0x8000u), mag = and_(s, bits, 0x7fffffffu);
  LLVMValueRef payload = and_(s, lshr(s, mag, 13), 0x3ffu);
  LLVMValueRef nan = LLVMBuildOr(
      b, k32(s->ll, s->i32, 0x7c00u),
      LLVMBuildSelect(b, cmp(s, LLVMIntNE, payload, 0), payload, k32(s->ll, s->i32, 0x200u), ""),
      "");
  LLVMValueRef sum =
      LLVMBuildFAdd(b, to_float(s, mag), to_float(s, k32(s->ll, s->i32, 0x3f000000u)), "");
  LLVMValueRef small = LLVMBuildSub(b, to_bits(s, sum), k32(s->ll, s->i32, 0x3f000000u), "");
  LLVMValueRef odd = and_(s, lshr(s, mag, 13), 1u);
  LLVMValueRef normal = lshr(s, LLVMBuildAdd(b, add(s, mag, 0xfffu - 0x38000000u), odd, ""), 13);
  LLVMValueRef r = LLVMBuildSelect(b, cmp(s, LLVMIntULT, mag, 0x38800000u), small, normal, "");
  r = LLVMBuildSelect(b, cmp(s, LLVMIntUGE, mag, 0x477ff000u), k32(s->ll, s->i32, 0x7c00u), r, "");
  r = LLVMBuildSelect(b, cmp(s, LLVMIntUGT, mag, 0x7f800000u), nan, r, "");
  return LLVMBuildOr(b, sign, r, "");
}

/* kiln_scalar_float32_to_bfloat16, the result in i32 lanes. */
static LLVMValueRef narrow_bf16(bits_t *s, LLVMValueRef x) {
  LLVMBuilderRef b = s->b;
  LLVMValueRef bits = to_bits(s, x), top = lshr(s, bits, 16);
  LLVMValueRef quiet = LLVMBuildSelect(b, cmp(s, LLVMIntNE, and_(s, top, 0x7fu), 0), top,
                                       LLVMBuildOr(b, top, k32(s->ll, s->i32, 0x40u), ""), "");
  LLVMValueRef rounded = lshr(s, LLVMBuildAdd(b, add(s, bits, 0x7fffu), and_(s, top, 1u), ""), 16);
  return LLVMBuildSelect(b, cmp(s, LLVMIntUGT, and_(s, bits, 0x7fffffffu), 0x7f800000u), quiet,
                         rounded, "");
}

static bits_t bits_for(kiln_llvm_t *ll, LLVMValueRef value) {
  bits_t s = {ll, ll->builder, like_type(LLVMTypeOf(value), ll->t_i32)};
  return s;
}

LLVMValueRef kiln_llvm_widen_narrow(kiln_llvm_t *ll, kiln_dtype_t dtype, LLVMValueRef bits16) {
  bits_t s = bits_for(ll, bits16);
  LLVMValueRef h = LLVMBuildZExt(ll->builder, bits16, s.i32, "");
  return dtype == KILN_DTYPE_FLOAT16 ? widen_f16(&s, h) : to_float(&s, shl(&s, h, 16));
}

LLVMValueRef kiln_llvm_narrow(kiln_llvm_t *ll, kiln_dtype_t dtype, LLVMValueRef value) {
  bits_t s = bits_for(ll, value);
  LLVMValueRef r = dtype == KILN_DTYPE_FLOAT16 ? narrow_f16(&s, value) : narrow_bf16(&s, value);
  return LLVMBuildTrunc(ll->builder, r, like_type(s.i32, ll->t_i16), "");
}

LLVMValueRef kiln_llvm_round_narrow(kiln_llvm_t *ll, kiln_dtype_t dtype, LLVMValueRef value) {
  return kiln_llvm_widen_narrow(ll, dtype, kiln_llvm_narrow(ll, dtype, value));
}
