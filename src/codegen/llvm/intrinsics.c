/*
 * Intrinsic calls and the fast float32 math; see emit.h.
 *
 * Calls whose result is exact (llvm.sqrt, llvm.fma, llvm.floor, ...) use
 * an LLVM intrinsic, on scalars and vectors alike; the transcendental ones
 * (sin, log, pow, tan, atan, asinh, ...) call libm's float or double
 * function lane by lane, each call marked nobuiltin (see libm below: LLVM
 * must not fold them itself). exp, erf, tanh and sigmoid on float32 are
 * written here as IR, so a vector loop holds no scalar libm call and a
 * scalar loop can still be vectorized:
 *
 * - exp: Cephes' expf. n = round(x log2 e), r = x - n ln2 (ln2 split in two,
 *   Cody-Waite), a degree-7 polynomial for e^r, times 2^n built in the
 *   exponent bits as 2^(n>>1) * 2^(n - (n>>1)) so that results down to the
 *   denormals and up to overflow (inf) come out right. x is clamped to
 *   [-104, 89] first (e^x is 0 or inf beyond), NaN is passed through.
 * - erf, tanh: the rational approximations Eigen and TVM use (odd numerator
 *   of degree 13, even denominator), inputs clamped to [-4, 4] and [-9, 9]
 *   where the float results are +-1; the clamps are compare-and-select, so
 *   a NaN stays NaN and +-inf gives +-1.
 * - sigmoid: 1 / (1 + exp(-x)) with the exp above.
 * The relative error against libm is below 1e-6 over the float range
 * (tests/codegen/test_codegen_llvm.c measures it), well inside the operator
 * tests' 1e-4.
 */
#include <string.h>

#include "codegen/llvm/emit.h"

LLVMValueRef kiln_llvm_intrinsic(kiln_llvm_t *ll, const char *name, LLVMTypeRef type,
                                 LLVMValueRef *args, unsigned num_args) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(ll->module, id, &type, 1);
  return LLVMBuildCall2(ll->builder, LLVMIntrinsicGetType(ll->context, id, &type, 1), fn, args,
                        num_args, "");
}

static int lanes_of(LLVMValueRef v) {
  LLVMTypeRef type = LLVMTypeOf(v);
  return LLVMGetTypeKind(type) == LLVMVectorTypeKind ? (int)LLVMGetVectorSize(type) : 1;
}

/* A float constant with x's type. */
static LLVMValueRef fconst(kiln_llvm_t *ll, LLVMValueRef like, double value) {
  LLVMTypeRef type = LLVMTypeOf(like);
  LLVMTypeRef scalar =
      LLVMGetTypeKind(type) == LLVMVectorTypeKind ? LLVMGetElementType(type) : type;
  return kiln_llvm_splat(ll, LLVMConstReal(scalar, value), lanes_of(like));
}

static LLVMValueRef iconst(kiln_llvm_t *ll, int lanes, int64_t value) {
  return kiln_llvm_splat(ll, LLVMConstInt(ll->t_i32, (unsigned long long)value, 1), lanes);
}

static LLVMValueRef fma3(kiln_llvm_t *ll, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMValueRef args[] = {a, b, c};
  return kiln_llvm_intrinsic(ll, "llvm.fmuladd", LLVMTypeOf(a), args, 3);
}

/* Horner: ((c[0] x + c[1]) x + ...) + c[n-1]. */
static LLVMValueRef horner(kiln_llvm_t *ll, LLVMValueRef x, const double *c, int n) {
  LLVMValueRef p = fconst(ll, x, c[0]);
  for (int i = 1; i < n; ++i) {
    p = fma3(ll, p, x, fconst(ll, x, c[i]));
  }
  return p;
}

/* x clamped to [lo, hi] by compare-and-select (NaN passes). */
static LLVMValueRef clamp(kiln_llvm_t *ll, LLVMValueRef x, double lo, double hi) {
  LLVMBuilderRef b = ll->builder;
  LLVMValueRef h = fconst(ll, x, hi), l = fconst(ll, x, lo);
  x = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, x, h, ""), h, x, "");
  return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, x, l, ""), l, x, "");
}

/* 2^n for int32 n in [-126, 127] (lanes as n). */
static LLVMValueRef pow2(kiln_llvm_t *ll, LLVMValueRef n, LLVMTypeRef float_type) {
  LLVMBuilderRef b = ll->builder;
  int lanes = lanes_of(n);
  LLVMValueRef bits =
      LLVMBuildShl(b, LLVMBuildAdd(b, n, iconst(ll, lanes, 127), ""), iconst(ll, lanes, 23), "");
  return LLVMBuildBitCast(b, bits, float_type, "");
}

LLVMValueRef kiln_llvm_fast_exp(kiln_llvm_t *ll, LLVMValueRef x) {
  static const double poly[] = {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3,
                                4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1};
  LLVMBuilderRef b = ll->builder;
  LLVMTypeRef type = LLVMTypeOf(x);
  int lanes = lanes_of(x);
  LLVMValueRef is_nan = LLVMBuildFCmp(b, LLVMRealUNO, x, x, "");
  LLVMValueRef xs = LLVMBuildSelect(b, is_nan, fconst(ll, x, 0), clamp(ll, x, -104, 89), "");
  LLVMValueRef scaled = LLVMBuildFMul(b, xs, fconst(ll, x, 1.44269504088896341), "");
  LLVMValueRef n = kiln_llvm_intrinsic(ll, "llvm.nearbyint", type, &scaled, 1);
  LLVMValueRef r = fma3(ll, n, fconst(ll, x, -0.693359375), xs);
  r = fma3(ll, n, fconst(ll, x, 2.12194440e-4), r);
  LLVMValueRef p = horner(ll, r, poly, 6);
  LLVMValueRef e =
      LLVMBuildFAdd(b, fma3(ll, p, LLVMBuildFMul(b, r, r, ""), r), fconst(ll, x, 1.0), "");
  LLVMTypeRef int_type = lanes > 1 ? LLVMVectorType(ll->t_i32, (unsigned)lanes) : ll->t_i32;
  LLVMValueRef ni = LLVMBuildFPToSI(b, n, int_type, "");
  LLVMValueRef n1 = LLVMBuildAShr(b, ni, iconst(ll, lanes, 1), "");
  LLVMValueRef n2 = LLVMBuildSub(b, ni, n1, "");
  LLVMValueRef result =
      LLVMBuildFMul(b, LLVMBuildFMul(b, e, pow2(ll, n1, type), ""), pow2(ll, n2, type), "");
  return LLVMBuildSelect(b, is_nan, x, result, "");
}

/* x P(x^2) / Q(x^2) on x clamped to [-limit, limit]. */
static LLVMValueRef rational(kiln_llvm_t *ll, LLVMValueRef x, double limit, const double *num,
                             int num_count, const double *den, int den_count) {
  LLVMBuilderRef b = ll->builder;
  x = clamp(ll, x, -limit, limit);
  LLVMValueRef x2 = LLVMBuildFMul(b, x, x, "");
  LLVMValueRef p = LLVMBuildFMul(b, x, horner(ll, x2, num, num_count), "");
  return LLVMBuildFDiv(b, p, horner(ll, x2, den, den_count), "");
}

static LLVMValueRef fast_erf(kiln_llvm_t *ll, LLVMValueRef x) {
  static const double num[] = {-2.72614225801306e-10, 2.77068142495902e-08,  -2.10102402082508e-06,
                               -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                               -1.60960333262415e-02};
  static const double den[] = {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                               -7.37332916720468e-03, -1.42647390514189e-02};
  return rational(ll, x, 4, num, 7, den, 5);
}

static LLVMValueRef fast_tanh(kiln_llvm_t *ll, LLVMValueRef x) {
  static const double num[] = {-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                               5.12229709037114e-08,  1.48572235717979e-05, 6.37261928875436e-04,
                               4.89352455891786e-03};
  static const double den[] = {1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
                               4.89352518554385e-03};
  return rational(ll, x, 9, num, 7, den, 4);
}

/* Sets the enum attribute `name` on the call `call` (the function's). */
static void call_attribute(kiln_llvm_t *ll, LLVMValueRef call, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                           LLVMCreateEnumAttribute(ll->context, kind, 0));
}

/* One call of libm's `fn`. nobuiltin: LLVM knows atanf, sinf, powf, ... by
 * name and would fold a call with constant arguments by evaluating the
 * double function on the host and rounding, which for some inputs is an
 * ulp off libm's float function (atanf(-1.2f): 0xbf604558, folded
 * 0xbf604557). One expression then had two values in one kernel: max and
 * min find NaNs as `x != x` with x written out twice (op/reduce_compute.c),
 * and where a clip made one copy's argument a constant, that copy was
 * folded, the other called libm, and the reduction said NaN (fuzzer seed
 * 1000691). readnone and nounwind (kiln never reads errno), so LLVM may
 * still share repeated calls and hoist them. */
static LLVMValueRef libm_call(kiln_llvm_t *ll, LLVMTypeRef fn_type, LLVMValueRef fn,
                              LLVMValueRef *args, int num_args) {
  LLVMValueRef call = LLVMBuildCall2(ll->builder, fn_type, fn, args, (unsigned)num_args, "");
  call_attribute(ll, call, "nobuiltin");
  call_attribute(ll, call, "readnone");
  call_attribute(ll, call, "nounwind");
  return call;
}

/* libm's `name` (float: with an f) lane by lane. */
static LLVMValueRef libm(kiln_llvm_t *ll, const char *name, int is_f32, LLVMValueRef *args,
                         int num_args) {
  LLVMBuilderRef b = ll->builder;
  char symbol[32];
  size_t length = strlen(name);
  memcpy(symbol, name, length);
  symbol[length] = is_f32 ? 'f' : '\0';
  symbol[length + 1] = '\0';
  LLVMTypeRef scalar = is_f32 ? ll->t_f32 : ll->t_f64;
  LLVMTypeRef params[] = {scalar, scalar, scalar};
  LLVMTypeRef fn_type = LLVMFunctionType(scalar, params, (unsigned)num_args, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(ll->module, symbol);
  if (!fn) {
    fn = LLVMAddFunction(ll->module, symbol, fn_type);
  }
  int lanes = lanes_of(args[0]);
  if (lanes == 1) {
    return libm_call(ll, fn_type, fn, args, num_args);
  }
  LLVMValueRef result = LLVMGetUndef(LLVMTypeOf(args[0]));
  for (int l = 0; l < lanes; ++l) {
    LLVMValueRef lane = LLVMConstInt(ll->t_i32, (unsigned long long)l, 0), scalars[3];
    for (int i = 0; i < num_args; ++i) {
      scalars[i] = LLVMBuildExtractElement(b, args[i], lane, "");
    }
    result =
        LLVMBuildInsertElement(b, result, libm_call(ll, fn_type, fn, scalars, num_args), lane, "");
  }
  return result;
}

/* shift_left / shift_right on the value's bits as unsigned; 0 when the
 * amount is negative or the bit width or more. */
static LLVMValueRef shift(kiln_llvm_t *ll, int left, LLVMValueRef a, LLVMValueRef amount) {
  LLVMBuilderRef b = ll->builder;
  LLVMTypeRef type = LLVMTypeOf(a);
  LLVMTypeRef scalar =
      LLVMGetTypeKind(type) == LLVMVectorTypeKind ? LLVMGetElementType(type) : type;
  unsigned bits = LLVMGetIntTypeWidth(scalar);
  int lanes = lanes_of(a);
  LLVMValueRef width = kiln_llvm_splat(ll, LLVMConstInt(scalar, bits, 0), lanes);
  LLVMValueRef zero = LLVMConstNull(type);
  LLVMValueRef in_range = LLVMBuildICmp(b, LLVMIntULT, amount, width, "");
  LLVMValueRef safe = LLVMBuildSelect(b, in_range, amount, zero, "");
  LLVMValueRef shifted = left ? LLVMBuildShl(b, a, safe, "") : LLVMBuildLShr(b, a, safe, "");
  return LLVMBuildSelect(b, in_range, shifted, zero, "");
}

static LLVMValueRef one_over(kiln_llvm_t *ll, LLVMValueRef x) {
  return LLVMBuildFDiv(ll->builder, fconst(ll, x, 1.0), x, "");
}

kiln_status_t kiln_llvm_call(kiln_llvm_t *ll, const kiln_tir_call_t *call, LLVMValueRef *args,
                             LLVMValueRef *out_value) {
  LLVMBuilderRef b = ll->builder;
  LLVMValueRef x = args[0];
  LLVMTypeRef type = LLVMTypeOf(x);
  /* float16 and bfloat16 compute in float32 (narrow.c). */
  int f32 =
      call->base.dtype.base == KILN_DTYPE_FLOAT32 || kiln_llvm_is_narrow(call->base.dtype.base);
  const char *name = kiln_tir_intrinsic_name(call->op);
  switch (call->op) {
  case KILN_TIR_INTRINSIC_EXP:
    *out_value = f32 ? kiln_llvm_fast_exp(ll, x) : libm(ll, "exp", 0, args, 1);
    return KILN_OK;
  case KILN_TIR_INTRINSIC_ERF:
    *out_value = f32 ? fast_erf(ll, x) : libm(ll, "erf", 0, args, 1);
    return KILN_OK;
  case KILN_TIR_INTRINSIC_TANH:
    *out_value = f32 ? fast_tanh(ll, x) : libm(ll, "tanh", 0, args, 1);
    return KILN_OK;
  case KILN_TIR_INTRINSIC_SIGMOID: {
    LLVMValueRef minus = LLVMBuildFNeg(b, x, "");
    LLVMValueRef e = f32 ? kiln_llvm_fast_exp(ll, minus) : libm(ll, "exp", 0, &minus, 1);
    *out_value = one_over(ll, LLVMBuildFAdd(b, fconst(ll, x, 1.0), e, ""));
    return KILN_OK;
  }
  case KILN_TIR_INTRINSIC_RSQRT:
    *out_value = one_over(ll, kiln_llvm_intrinsic(ll, "llvm.sqrt", type, &x, 1));
    return KILN_OK;
  case KILN_TIR_INTRINSIC_SQRT:
  case KILN_TIR_INTRINSIC_FABS:
  case KILN_TIR_INTRINSIC_FLOOR:
  case KILN_TIR_INTRINSIC_CEIL:
  case KILN_TIR_INTRINSIC_TRUNC:
  case KILN_TIR_INTRINSIC_FMA:
  case KILN_TIR_INTRINSIC_COPYSIGN: {
    char intrinsic[32] = "llvm.";
    strncat(intrinsic, name, sizeof(intrinsic) - 6);
    *out_value = kiln_llvm_intrinsic(ll, intrinsic, type, args, (unsigned)call->num_args);
    return KILN_OK;
  }
  case KILN_TIR_INTRINSIC_ROUND:
    *out_value = kiln_llvm_intrinsic(ll, "llvm.nearbyint", type, &x, 1);
    return KILN_OK;
  case KILN_TIR_INTRINSIC_FMOD:
    *out_value = LLVMBuildFRem(b, x, args[1], "");
    return KILN_OK;
  case KILN_TIR_INTRINSIC_LOG:
  case KILN_TIR_INTRINSIC_SIN:
  case KILN_TIR_INTRINSIC_COS:
  case KILN_TIR_INTRINSIC_POW:
  case KILN_TIR_INTRINSIC_TAN:
  case KILN_TIR_INTRINSIC_ASIN:
  case KILN_TIR_INTRINSIC_ACOS:
  case KILN_TIR_INTRINSIC_ATAN:
  case KILN_TIR_INTRINSIC_SINH:
  case KILN_TIR_INTRINSIC_COSH:
  case KILN_TIR_INTRINSIC_ASINH:
  case KILN_TIR_INTRINSIC_ACOSH:
  case KILN_TIR_INTRINSIC_ATANH:
  case KILN_TIR_INTRINSIC_LOG1P:
  case KILN_TIR_INTRINSIC_EXPM1:
    *out_value = libm(ll, name, f32, args, call->num_args);
    return KILN_OK;
  case KILN_TIR_INTRINSIC_SHIFT_LEFT:
  case KILN_TIR_INTRINSIC_SHIFT_RIGHT:
    *out_value = shift(ll, call->op == KILN_TIR_INTRINSIC_SHIFT_LEFT, x, args[1]);
    return KILN_OK;
  case KILN_TIR_INTRINSIC_BITWISE_XOR:
    *out_value = LLVMBuildXor(ll->builder, x, args[1], "");
    return KILN_OK;
  case KILN_TIR_INTRINSIC_COUNT_:
    break;
  }
  return KILN_STATUS(INTERNAL, "%s: invalid intrinsic %d", ll->func->name, (int)call->op);
}
