/*
 * The one meaning of every scalar operation that C leaves undefined or that
 * can trap: integer division and remainder (by zero, INT_MIN / -1), floor
 * division and modulo, integer power (to a negative exponent), shifts (by
 * the width or more, by a negative amount) and float-to-integer conversion
 * (NaN, infinities, out of range). Every path that computes these derives
 * from this file:
 *
 * - the graph reference kernels (op/elemwise_binary.c, runtime/scalar.h's cast),
 *   and through them the ONNX importer's constant folding and the graph
 *   constant-folding pass, call the functions;
 * - the loop-IR interpreter (tir/interp_value.c) and the simplifier's
 *   constant folding (tir/simplify.c) call the functions;
 * - the C backend pastes this very source text into the prelude of every
 *   file it writes (KILN_SCALAR_OPS_SOURCE, the list below stringified) and
 *   calls it from its per-dtype helpers (codegen/c/emit_file.c);
 * - the LLVM backend builds each one as a compare/select sequence around a
 *   guarded divisor or amount (codegen/llvm/emit_expr.c, intrinsics.c);
 *   tests/base/test_scalar_ops.c and the compute-rule tests run every
 *   operation on the edge values through every path and require the same
 *   bits.
 *
 * The choices. Compiled code cannot raise an error per element cheaply, so
 * every operation is total, with NumPy's answers where NumPy has one and
 * what ONNX Runtime's users see on x86 otherwise, never a trap:
 *
 * - x / 0 = 0 and x % 0 = 0 on integers (NumPy's floor_divide and
 *   remainder, with its warning dropped); floats keep IEEE (x / 0 = ±inf or
 *   NaN, fmod(x, 0) = NaN), unguarded: a float division stays one
 *   instruction.
 * - INT_MIN / -1 = INT_MIN (wraps, as every other integer overflow does) and
 *   INT_MIN % -1 = 0; the same for floor division and modulo.
 * - x ** y on integers wraps; to a negative exponent it is the truncated
 *   1 / x^-y: 1 for x = 1, ±1 for x = -1, and 0 otherwise, 0 ** -n included
 *   (1 / 0 is 0 as above; NumPy refuses negative integer powers, ONNX leaves
 *   them undefined).
 * - A shift by a negative amount or by the width or more gives 0, left or
 *   right, and shifts the bits as unsigned (NumPy gives 0 for the unsigned
 *   shifts ONNX BitShift has).
 * - float16 and bfloat16 are bit patterns in memory, converted to and from
 *   float32 by the functions below, which every path uses (the runtime's
 *   kiln_float16_to_float32 & co., the interpreters, the C backend's
 *   prelude; the LLVM backend builds the same sequences, codegen/llvm/
 *   narrow.c): float32 to narrow rounds to nearest, ties to even, with
 *   gradual underflow and overflow to infinity; a NaN keeps its sign and
 *   the top bits of its payload (the quiet bit set when those are all 0),
 *   so every narrow pattern survives a trip through float32. They are
 *   branch-free enough to vectorize, and need round-to-nearest float
 *   addition (the default mode).
 * - A float becomes an integer by truncation toward zero saturated at the
 *   target's range: NaN gives 0, +inf and too-large values the maximum,
 *   -inf and too-small values the minimum (0 for unsigned). This is
 *   LLVM's fptosi.sat, Rust's `as` and WebAssembly's trunc_sat; C leaves it
 *   undefined and x86 gives INT_MIN.
 *
 * Integers are computed in int64 (signed) or uint64 (unsigned) and the
 * caller wraps the result to its width; these answers are the same at every
 * width (int8 -128 / -1 computed in int64 is 128, which wraps to -128).
 * The functions are themselves free of undefined behaviour without -fwrapv
 * (UBSan runs them). To add one: add it to the list, make the LLVM backend
 * build it, and add its edge values to tests/base/test_scalar_ops.c.
 */
#ifndef KILN_BASE_SCALAR_OPS_H_
#define KILN_BASE_SCALAR_OPS_H_

#include <math.h>
#include <stdint.h>

/* X(return type, name, (parameters), body...): each function once. The body
 * is C that the kiln build compiles and the C backend's prelude pastes. */
#define KILN_SCALAR_OPS_LIST(X)                                                                  \
  /* C's a / b (truncating); b = 0 gives 0, INT64_MIN / -1 wraps. */                             \
  X(int64_t, kiln_scalar_int_divide, (int64_t a, int64_t b), {                                   \
    if (b == 0) {                                                                                \
      return 0;                                                                                  \
    }                                                                                            \
    return b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;                                         \
  })                                                                                             \
  /* C's a % b (the dividend's sign); b = 0 and b = -1 give 0. */                                \
  X(int64_t, kiln_scalar_int_mod, (int64_t a, int64_t b),                                        \
    { return b == 0 || b == -1 ? 0 : a % b; })                                                   \
  /* a / b rounded toward -inf; b = 0 gives 0, INT64_MIN / -1 wraps. */                          \
  X(int64_t, kiln_scalar_int_floor_divide, (int64_t a, int64_t b), {                             \
    if (b == 0 || b == -1) {                                                                     \
      return b == 0 ? 0 : (int64_t)(0 - (uint64_t)a);                                            \
    }                                                                                            \
    int64_t q = a / b;                                                                           \
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;                                     \
  })                                                                                             \
  /* Python's a % b (the divisor's sign); b = 0 and b = -1 give 0. */                            \
  X(int64_t, kiln_scalar_int_floor_mod, (int64_t a, int64_t b), {                                \
    if (b == 0 || b == -1) {                                                                     \
      return 0;                                                                                  \
    }                                                                                            \
    int64_t r = a % b;                                                                           \
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;                                         \
  })                                                                                             \
  X(uint64_t, kiln_scalar_uint_divide, (uint64_t a, uint64_t b), { return b == 0 ? 0 : a / b; }) \
  X(uint64_t, kiln_scalar_uint_mod, (uint64_t a, uint64_t b), { return b == 0 ? 0 : a % b; })    \
  /* a^b by squaring, wrapping in uint64. */                                                     \
  X(uint64_t, kiln_scalar_uint_power, (uint64_t a, uint64_t b), {                                \
    uint64_t result = 1;                                                                         \
    while (b > 0) {                                                                              \
      result = (b & 1) ? result * a : result;                                                    \
      a *= a;                                                                                    \
      b >>= 1;                                                                                   \
    }                                                                                            \
    return result;                                                                               \
  })                                                                                             \
  /* a^b wrapping; b < 0 gives the truncated 1 / a^-b (0 for a = 0). */                          \
  X(int64_t, kiln_scalar_int_power, (int64_t a, int64_t b), {                                    \
    if (b >= 0) {                                                                                \
      return (int64_t)kiln_scalar_uint_power((uint64_t)a, (uint64_t)b);                          \
    }                                                                                            \
    return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);                                      \
  })                                                                                             \
  /* The low `bits` bits of a shifted left; 0 when amount < 0 or >= bits. */                     \
  X(uint64_t, kiln_scalar_bits_shift_left, (uint64_t a, int64_t amount, int bits), {             \
    uint64_t mask = bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);                     \
    return amount < 0 || amount >= bits ? 0 : ((a & mask) << amount) & mask;                     \
  })                                                                                             \
  X(uint64_t, kiln_scalar_bits_shift_right, (uint64_t a, int64_t amount, int bits), {            \
    uint64_t mask = bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);                     \
    return amount < 0 || amount >= bits ? 0 : (a & mask) >> amount;                              \
  })                                                                                             \
  /* The low `bits` bits of a exclusive-or b. */                                                 \
  X(uint64_t, kiln_scalar_bits_xor, (uint64_t a, uint64_t b, int bits), {                        \
    uint64_t mask = bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);                     \
    return (a ^ b) & mask;                                                                       \
  })                                                                                             \
  /* x truncated toward zero and saturated to [lo, hi]; NaN gives 0. */                          \
  X(int64_t, kiln_scalar_float_to_int, (double x, int64_t lo, int64_t hi), {                     \
    if (x != x) {                                                                                \
      return 0;                                                                                  \
    }                                                                                            \
    double t = trunc(x);                                                                         \
    if (t < (double)lo) {                                                                        \
      return lo;                                                                                 \
    }                                                                                            \
    return t >= (double)hi + 1.0 ? hi : (int64_t)t;                                              \
  })                                                                                             \
  /* x truncated toward zero and saturated to [0, hi]; NaN gives 0. */                           \
  X(uint64_t, kiln_scalar_float_to_uint, (double x, uint64_t hi), {                              \
    if (x != x || x <= -1.0) {                                                                   \
      return 0;                                                                                  \
    }                                                                                            \
    double t = trunc(x);                                                                         \
    return t >= (double)hi + 1.0 || t >= 18446744073709551616.0 ? hi : (uint64_t)t;              \
  })                                                                                             \
  X(uint32_t, kiln_scalar_float_bits, (float x), {                                               \
    union {                                                                                      \
      float f;                                                                                   \
      uint32_t u;                                                                                \
    } v;                                                                                         \
    v.f = x;                                                                                     \
    return v.u;                                                                                  \
  })                                                                                             \
  X(float, kiln_scalar_bits_float, (uint32_t u), {                                               \
    union {                                                                                      \
      uint32_t u;                                                                                \
      float f;                                                                                   \
    } v;                                                                                         \
    v.u = u;                                                                                     \
    return v.f;                                                                                  \
  })                                                                                             \
  /* float16 bits to float32, exactly; a NaN keeps its sign and payload. */                      \
  X(float, kiln_scalar_float16_to_float32, (uint16_t h), {                                       \
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, rest = h & 0x7fffu;                           \
    if (rest >= 0x7c00u) {                                                                       \
      return kiln_scalar_bits_float(sign | 0x7f800000u | ((rest & 0x3ffu) << 13));               \
    }                                                                                            \
    if (rest >= 0x400u) {                                                                        \
      return kiln_scalar_bits_float(sign | ((rest + 0x1c000u) << 13));                           \
    }                                                                                            \
    /* A subnormal counts units of 2^-24: exact in float32. */                                   \
    return kiln_scalar_bits_float(sign |                                                         \
                                  kiln_scalar_float_bits((float)rest * 5.9604644775390625e-8f)); \
  })                                                                                             \
  /* float32 to float16 bits: nearest, ties to even, overflow to inf; a NaN                      \
   * keeps its sign and its payload's top ten bits (0x200 when those are 0). */                  \
  X(uint16_t, kiln_scalar_float32_to_float16, (float x), {                                       \
    uint32_t bits = kiln_scalar_float_bits(x);                                                   \
    uint32_t sign = (bits >> 16) & 0x8000u, mag = bits & 0x7fffffffu;                            \
    if (mag > 0x7f800000u) {                                                                     \
      uint32_t payload = (mag >> 13) & 0x3ffu;                                                   \
      return (uint16_t)(sign | 0x7c00u | (payload ? payload : 0x200u));                          \
    }                                                                                            \
    if (mag >= 0x477ff000u) { /* 65520 and up round to infinity */                               \
      return (uint16_t)(sign | 0x7c00u);                                                         \
    }                                                                                            \
    if (mag < 0x38800000u) { /* below 2^-14: 0.5 + x rounds x to units of 2^-24 */               \
      float sum = kiln_scalar_bits_float(mag) + 0.5f;                                            \
      return (uint16_t)(sign | (kiln_scalar_float_bits(sum) - 0x3f000000u));                     \
    }                                                                                            \
    /* Rebias the exponent and round the mantissa's low 13 bits, ties to even;                   \
     * a carry into the exponent is right. */                                                    \
    return (uint16_t)(sign | ((mag - 0x38000000u + 0xfffu + ((mag >> 13) & 1u)) >> 13));         \
  })                                                                                             \
  X(float, kiln_scalar_bfloat16_to_float32, (uint16_t b),                                        \
    { return kiln_scalar_bits_float((uint32_t)b << 16); })                                       \
  /* float32 to bfloat16 bits (float32's top half): nearest, ties to even,                       \
   * overflow to inf; a NaN keeps its top half (0x40 set when its payload                        \
   * bits there are 0). */                                                                       \
  X(uint16_t, kiln_scalar_float32_to_bfloat16, (float x), {                                      \
    uint32_t bits = kiln_scalar_float_bits(x);                                                   \
    if ((bits & 0x7fffffffu) > 0x7f800000u) {                                                    \
      uint32_t top = bits >> 16;                                                                 \
      return (uint16_t)((top & 0x7fu) ? top : (top | 0x40u));                                    \
    }                                                                                            \
    return (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);                             \
  })

#define KILN_SCALAR_OPS_DEFINE_(type, name, params, ...) static inline type name params __VA_ARGS__
KILN_SCALAR_OPS_LIST(KILN_SCALAR_OPS_DEFINE_)
#undef KILN_SCALAR_OPS_DEFINE_

/* The same functions as C source, one per line, for a generated file that
 * includes <math.h> and <stdint.h>. */
#define KILN_SCALAR_OPS_TEXT_(type, name, params, ...) \
  "static inline " #type " " #name #params " " #__VA_ARGS__ "\n"
#define KILN_SCALAR_OPS_SOURCE KILN_SCALAR_OPS_LIST(KILN_SCALAR_OPS_TEXT_)

#endif /* KILN_BASE_SCALAR_OPS_H_ */
