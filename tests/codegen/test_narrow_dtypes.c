/*
 * float16, bfloat16 and uint64 on every path of the loop IR: the loop-IR
 * interpreter, the C backend and the LLVM backend (object file and JIT),
 * each on scalar loops and on 8-lane vector loops, against
 * base/scalar_ops.h's functions.
 *
 * - widen: every one of the 65536 float16 and bfloat16 patterns cast to
 *   float32 (and float64), bit for bit;
 * - narrow: float32 patterns cast to float16 and bfloat16: every narrow
 *   value exactly, the ties between neighbours and one bit either side of
 *   them, subnormals, overflow, infinities, NaNs of many payloads and a
 *   hashed sweep, bit for bit;
 * - arithmetic on narrow dtypes: a * b + a rounded after each operation,
 *   and a / b, on hashed pairs of patterns, bit for bit (any NaN for a NaN);
 * - uint64: floordiv, floormod, min, max, less-than, the shifts, and casts
 *   to and from float64, on values above INT64_MAX.
 *
 * The backends keep a signaling NaN's bits; the interpreter, which holds
 * floats as doubles, quiets one when it widens it (as it does for float32),
 * so it is checked against the function of the quieted input there.
 */
#include <math.h>
#include <string.h>

#include "../tir/tir_fixture.h"
#include "base/scalar_ops.h"
#include "codegen/target.h"
#include "kiln/module.h"
#include "kiln_test.h"
#include "tir/interp.h"

#define LANES 8

typedef const kiln_tir_expr_t *(*make_fn)(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                          const kiln_tir_expr_t *y, kiln_dtype_t to);

/* Out[i] = make(A[i], B[i]) over n elements, `lanes` at a time. */
static const kiln_tir_prim_func_t *build_map(kiln_tir_builder_t *b, const char *name,
                                             kiln_dtype_t in, kiln_dtype_t out, int64_t n,
                                             int lanes, make_fn make) {
  const int64_t shape[] = {n};
  const kiln_tir_buffer_t *A = kiln_tir_b_buffer(b, "A", in, 1, shape);
  const kiln_tir_buffer_t *B = kiln_tir_b_buffer(b, "B", in, 1, shape);
  const kiln_tir_buffer_t *Out = kiln_tir_b_buffer(b, "Out", out, 1, shape);
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *index = kiln_tir_b_v(i);
  if (lanes > 1) {
    index = kiln_tir_b_ramp(b, kiln_tir_b_mul(b, index, kiln_tir_b_i32(b, lanes)),
                            kiln_tir_b_i32(b, 1), lanes);
  }
  const kiln_tir_expr_t *idx[] = {index};
  const kiln_tir_expr_t *value =
      make(b, kiln_tir_b_load(b, A, 1, idx), kiln_tir_b_load(b, B, 1, idx), out);
  const kiln_tir_stmt_t *s = kiln_tir_b_store(b, Out, value, 1, idx);
  s = kiln_tir_b_for(b, i, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, n / lanes), KILN_TIR_FOR_SERIAL,
                     s);
  const kiln_tir_buffer_t *params[] = {A, B, Out};
  return kiln_tir_b_func(b, name, 3, params, s);
}

static const kiln_tir_expr_t *make_cast(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                        const kiln_tir_expr_t *y, kiln_dtype_t to) {
  (void)y;
  return kiln_tir_b_cast(b, kiln_tir_vector(to, x->dtype.lanes), x);
}

static const kiln_tir_expr_t *make_fma(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                       const kiln_tir_expr_t *y, kiln_dtype_t to) {
  (void)to;
  return kiln_tir_b_add(b, kiln_tir_b_mul(b, x, y), x);
}

static const kiln_tir_expr_t *make_div(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                       const kiln_tir_expr_t *y, kiln_dtype_t to) {
  (void)to;
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV, x, y);
}

/* ---- inputs ---- */

static uint32_t hash(uint32_t i) {
  i ^= i >> 16;
  i *= 0x7feb352du;
  i ^= i >> 15;
  i *= 0x846ca68bu;
  return i ^ (i >> 16);
}

static uint32_t f32_bits(float x) {
  return kiln_scalar_float_bits(x);
}

/* The float32 patterns for narrowing: per 16-bit pattern h, its float16
 * and bfloat16 values exactly, their ties with the next value and one
 * below and above; then hashed patterns. */
#define NARROW_PER 9
#define NARROW_N   (65536 * NARROW_PER + 65536)

static uint32_t narrow_input(int64_t k) {
  if (k >= 65536 * NARROW_PER) {
    return hash((uint32_t)k);
  }
  uint16_t h = (uint16_t)(k / NARROW_PER);
  uint32_t f16 = f32_bits(kiln_scalar_float16_to_float32(h)), bf16 = (uint32_t)h << 16;
  static const uint32_t f16_offsets[] = {0, 0xfff, 0x1000, 0x1001};
  static const uint32_t bf16_offsets[] = {0, 0x7fff, 0x8000, 0x8001, 1};
  int j = (int)(k % NARROW_PER);
  return j < 4 ? f16 + f16_offsets[j] : bf16 + bf16_offsets[j - 4];
}

static kiln_tensor_t *tensor(kiln_dtype_t dtype, int64_t n) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), dtype, 1, &n, &t));
  memset(kiln_tensor_data(t), 0x5a, kiln_tensor_byte_size(t));
  return t;
}

/* ---- the cases ---- */

typedef struct case_t {
  const char *name;
  kiln_dtype_t in, out;
  int64_t n;
  make_fn make;
  void (*fill)(const struct case_t *c, kiln_tensor_t *a, kiln_tensor_t *b);
  /* The expected bits of element i (`interp`: as the interpreter sees a
   * signaling NaN, quieted), and whether `got` matches them. */
  int (*matches)(const struct case_t *c, const kiln_tensor_t *a, const kiln_tensor_t *b, int64_t i,
                 int interp, const kiln_tensor_t *out);
} case_t;

static uint16_t u16_at(const kiln_tensor_t *t, int64_t i) {
  return ((const uint16_t *)kiln_tensor_data(t))[i];
}

static float f32_at(const kiln_tensor_t *t, int64_t i) {
  return ((const float *)kiln_tensor_data(t))[i];
}

static int is_f16(kiln_dtype_t dtype) {
  return dtype == KILN_DTYPE_FLOAT16;
}

static float widen(kiln_dtype_t dtype, uint16_t h) {
  return is_f16(dtype) ? kiln_scalar_float16_to_float32(h) : kiln_scalar_bfloat16_to_float32(h);
}

static uint16_t narrow(kiln_dtype_t dtype, float x) {
  return is_f16(dtype) ? kiln_scalar_float32_to_float16(x) : kiln_scalar_float32_to_bfloat16(x);
}

/* x with its quiet bit set when it is a NaN (what a trip through double does). */
static float quieted(float x) {
  return x != x ? kiln_scalar_bits_float(f32_bits(x) | 0x400000u) : x;
}

static void fill_patterns(const case_t *c, kiln_tensor_t *a, kiln_tensor_t *b) {
  (void)c;
  for (int64_t i = 0; i < 65536; ++i) {
    ((uint16_t *)kiln_tensor_data(a))[i] = (uint16_t)i;
    ((uint16_t *)kiln_tensor_data(b))[i] = (uint16_t)i;
  }
}

static int widen_matches(const case_t *c, const kiln_tensor_t *a, const kiln_tensor_t *b, int64_t i,
                         int interp, const kiln_tensor_t *out) {
  (void)b;
  float want = widen(c->in, u16_at(a, i));
  want = interp ? quieted(want) : want;
  if (c->out == KILN_DTYPE_FLOAT64) {
    double got = ((const double *)kiln_tensor_data(out))[i];
    return got == (double)want || (got != got && want != want);
  }
  return f32_bits(f32_at(out, i)) == f32_bits(want);
}

static void fill_floats(const case_t *c, kiln_tensor_t *a, kiln_tensor_t *b) {
  (void)c;
  for (int64_t i = 0; i < NARROW_N; ++i) {
    ((uint32_t *)kiln_tensor_data(a))[i] = narrow_input(i);
    ((uint32_t *)kiln_tensor_data(b))[i] = narrow_input(i);
  }
}

static int narrow_matches(const case_t *c, const kiln_tensor_t *a, const kiln_tensor_t *b,
                          int64_t i, int interp, const kiln_tensor_t *out) {
  (void)b;
  float x = f32_at(a, i);
  return u16_at(out, i) == narrow(c->out, interp ? quieted(x) : x);
}

static void fill_pairs(const case_t *c, kiln_tensor_t *a, kiln_tensor_t *b) {
  for (int64_t i = 0; i < c->n; ++i) {
    uint32_t h = hash((uint32_t)i + 12345u);
    ((uint16_t *)kiln_tensor_data(a))[i] = (uint16_t)h;
    ((uint16_t *)kiln_tensor_data(b))[i] = (uint16_t)(i < 4096 ? 0x3c00u + (i & 0xff) : h >> 16);
  }
}

static int arith_matches(const case_t *c, const kiln_tensor_t *a, const kiln_tensor_t *b, int64_t i,
                         int interp, const kiln_tensor_t *out) {
  (void)interp;
  float x = widen(c->in, u16_at(a, i)), y = widen(c->in, u16_at(b, i));
  float want = c->make == make_fma
                   ? widen(c->in, narrow(c->in, widen(c->in, narrow(c->in, x * y)) + x))
                   : widen(c->in, narrow(c->in, x / y));
  float got = widen(c->in, u16_at(out, i));
  return want != want ? got != got : f32_bits(got) == f32_bits(want);
}

static const case_t narrow_cases[] = {
    {"widen_f16", KILN_DTYPE_FLOAT16, KILN_DTYPE_FLOAT32, 65536, make_cast, fill_patterns,
     widen_matches},
    {"widen_bf16", KILN_DTYPE_BFLOAT16, KILN_DTYPE_FLOAT32, 65536, make_cast, fill_patterns,
     widen_matches},
    {"widen_f16_f64", KILN_DTYPE_FLOAT16, KILN_DTYPE_FLOAT64, 65536, make_cast, fill_patterns,
     widen_matches},
    {"narrow_f16", KILN_DTYPE_FLOAT32, KILN_DTYPE_FLOAT16, NARROW_N, make_cast, fill_floats,
     narrow_matches},
    {"narrow_bf16", KILN_DTYPE_FLOAT32, KILN_DTYPE_BFLOAT16, NARROW_N, make_cast, fill_floats,
     narrow_matches},
    {"fma_f16", KILN_DTYPE_FLOAT16, KILN_DTYPE_FLOAT16, 65536, make_fma, fill_pairs, arith_matches},
    {"fma_bf16", KILN_DTYPE_BFLOAT16, KILN_DTYPE_BFLOAT16, 65536, make_fma, fill_pairs,
     arith_matches},
    {"div_f16", KILN_DTYPE_FLOAT16, KILN_DTYPE_FLOAT16, 65536, make_div, fill_pairs, arith_matches},
};
#define NUM_CASES ((int)(sizeof(narrow_cases) / sizeof(narrow_cases[0])))

/* ---- uint64 ---- */

static const uint64_t u64_a[8] = {0,
                                  7,
                                  UINT64_MAX,
                                  UINT64_MAX - 6,
                                  (uint64_t)INT64_MAX,
                                  (uint64_t)INT64_MAX + 1,
                                  ((uint64_t)1 << 63) | 5,
                                  1000};
static const uint64_t u64_b[8] = {0, 1, 3, UINT64_MAX, (uint64_t)1 << 63, 63, 64, 65};

static uint64_t u64_at(const kiln_tensor_t *t, int64_t i) {
  return ((const uint64_t *)kiln_tensor_data(t))[i];
}

static void fill_u64(const case_t *c, kiln_tensor_t *a, kiln_tensor_t *b) {
  for (int64_t i = 0; i < c->n; ++i) {
    if (c->in == KILN_DTYPE_FLOAT64) { /* doubles around uint64's range */
      static const double d[8] = {-1.0,   -0.5, 0.9,      1.8446744073709552e19,
                                  9.3e18, NAN,  INFINITY, 4294967296.5};
      ((double *)kiln_tensor_data(a))[i] = d[i % 8] * (i / 8 % 2 ? 1.0 : 0.5);
      ((double *)kiln_tensor_data(b))[i] = 0;
      continue;
    }
    ((uint64_t *)kiln_tensor_data(a))[i] = u64_a[i / 8];
    ((uint64_t *)kiln_tensor_data(b))[i] = u64_b[i % 8];
  }
}

static const kiln_tir_expr_t *make_floordiv(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                            const kiln_tir_expr_t *y, kiln_dtype_t to) {
  (void)to;
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, x, y);
}

static const kiln_tir_expr_t *make_floormod(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                            const kiln_tir_expr_t *y, kiln_dtype_t to) {
  (void)to;
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, x, y);
}

static const kiln_tir_expr_t *make_min(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                       const kiln_tir_expr_t *y, kiln_dtype_t to) {
  (void)to;
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, x, y);
}

static const kiln_tir_expr_t *make_max(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                       const kiln_tir_expr_t *y, kiln_dtype_t to) {
  (void)to;
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX, x, y);
}

static const kiln_tir_expr_t *make_lt(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                      const kiln_tir_expr_t *y, kiln_dtype_t to) {
  (void)to;
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, y);
}

static const kiln_tir_expr_t *make_shr(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                       const kiln_tir_expr_t *y, kiln_dtype_t to) {
  (void)to;
  const kiln_tir_expr_t *args[] = {x, y};
  return kiln_tir_b_call(b, KILN_TIR_INTRINSIC_SHIFT_RIGHT, 2, args);
}

static uint64_t u64_expected(const case_t *c, uint64_t x, uint64_t y) {
  if (c->make == make_floordiv) {
    return kiln_scalar_uint_divide(x, y);
  }
  if (c->make == make_floormod) {
    return kiln_scalar_uint_mod(x, y);
  }
  if (c->make == make_min || c->make == make_max) {
    return (c->make == make_min) == (x < y) ? x : y;
  }
  if (c->make == make_lt) {
    return x < y;
  }
  return kiln_scalar_bits_shift_right(x, (int64_t)y, 64);
}

static int u64_matches(const case_t *c, const kiln_tensor_t *a, const kiln_tensor_t *b, int64_t i,
                       int interp, const kiln_tensor_t *out) {
  (void)interp;
  if (c->in == KILN_DTYPE_FLOAT64) {
    double x = ((const double *)kiln_tensor_data(a))[i];
    return u64_at(out, i) == kiln_scalar_float_to_uint(x, UINT64_MAX);
  }
  if (c->out == KILN_DTYPE_FLOAT64) {
    return ((const double *)kiln_tensor_data(out))[i] == (double)u64_at(a, i);
  }
  uint64_t want = u64_expected(c, u64_at(a, i), u64_at(b, i));
  if (c->out == KILN_DTYPE_BOOL) {
    return ((const uint8_t *)kiln_tensor_data(out))[i] == want;
  }
  return u64_at(out, i) == want;
}

static const case_t u64_cases[] = {
    {"floordiv_u64", KILN_DTYPE_UINT64, KILN_DTYPE_UINT64, 64, make_floordiv, fill_u64,
     u64_matches},
    {"floormod_u64", KILN_DTYPE_UINT64, KILN_DTYPE_UINT64, 64, make_floormod, fill_u64,
     u64_matches},
    {"min_u64", KILN_DTYPE_UINT64, KILN_DTYPE_UINT64, 64, make_min, fill_u64, u64_matches},
    {"max_u64", KILN_DTYPE_UINT64, KILN_DTYPE_UINT64, 64, make_max, fill_u64, u64_matches},
    {"lt_u64", KILN_DTYPE_UINT64, KILN_DTYPE_BOOL, 64, make_lt, fill_u64, u64_matches},
    {"shr_u64", KILN_DTYPE_UINT64, KILN_DTYPE_UINT64, 64, make_shr, fill_u64, u64_matches},
    {"cast_u64_f64", KILN_DTYPE_UINT64, KILN_DTYPE_FLOAT64, 64, make_cast, fill_u64, u64_matches},
    {"cast_f64_u64", KILN_DTYPE_FLOAT64, KILN_DTYPE_UINT64, 64, make_cast, fill_u64, u64_matches},
};
#define NUM_U64_CASES ((int)(sizeof(u64_cases) / sizeof(u64_cases[0])))

static void check(const case_t *c, kiln_tensor_t *const *args, const char *path, int lanes) {
  int interp = strcmp(path, "the loop-IR interpreter") == 0;
  for (int64_t i = 0; i < c->n; ++i) {
    if (!c->matches(c, args[0], args[1], i, interp, args[2])) {
      fail_msg("%s (%d lanes) through %s: element %lld (input bits 0x%x) differs from "
               "base/scalar_ops.h's answer",
               c->name, lanes, path, (long long)i,
               c->in == KILN_DTYPE_FLOAT32   ? f32_bits(f32_at(args[0], i))
               : kiln_dtype_size(c->in) == 2 ? u16_at(args[0], i)
                                             : (uint32_t)i);
    }
  }
}

static const char *const narrow_targets[] = {
    "c",
#ifdef KILN_HAVE_LLVM
    "llvm -noasm",
    "llvm -jit -noasm",
#endif
    NULL,
};

static const char *const u64_targets[] = {
    "c",
#ifdef KILN_HAVE_LLVM
    "llvm -noasm",
    "llvm -jit -noasm",
#endif
    NULL,
};

#define MAX_CASES 8

static void run_cases(const case_t *cases, int num_cases, const char *const *targets, int lanes) {
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *funcs[MAX_CASES];
  kiln_tensor_t *args[MAX_CASES][3];
  assert_true(num_cases <= MAX_CASES);
  for (int k = 0; k < num_cases; ++k) {
    const case_t *c = &cases[k];
    funcs[k] = build_map(&f.b, c->name, c->in, c->out, c->n, lanes, c->make);
    args[k][0] = tensor(c->in, c->n);
    args[k][1] = tensor(c->in, c->n);
    args[k][2] = tensor(c->out, c->n);
    c->fill(c, args[k][0], args[k][1]);
  }
  KILN_ASSERT_OK(kiln_tir_builder_finish(&f.b));
  for (int k = 0; k < num_cases; ++k) {
    KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), funcs[k], 3, args[k]));
    check(&cases[k], args[k], "the loop-IR interpreter", lanes);
  }
  for (int t = 0; targets[t]; ++t) {
    kiln_runtime_module_t *module = NULL;
    KILN_ASSERT_OK(
        kiln_codegen_build(kiln_allocator_system(), targets[t], funcs, num_cases, &module));
    for (int k = 0; k < num_cases; ++k) {
      memset(kiln_tensor_data(args[k][2]), 0x5a, kiln_tensor_byte_size(args[k][2]));
      KILN_ASSERT_OK(kiln_runtime_module_call(module, funcs[k]->name, 3, args[k]));
      check(&cases[k], args[k], targets[t], lanes);
    }
    kiln_runtime_module_release(module);
  }
  for (int k = 0; k < num_cases; ++k) {
    for (int a = 0; a < 3; ++a) {
      kiln_tensor_release(args[k][a]);
    }
  }
  fixture_done(&f);
}

static void test_narrow_scalar(void **state) {
  (void)state;
  run_cases(narrow_cases, NUM_CASES, narrow_targets, 1);
}

static void test_narrow_vector(void **state) {
  (void)state;
  run_cases(narrow_cases, NUM_CASES, narrow_targets, LANES);
}

static void test_uint64_scalar(void **state) {
  (void)state;
  run_cases(u64_cases, NUM_U64_CASES, u64_targets, 1);
}

static void test_uint64_vector(void **state) {
  (void)state;
  run_cases(u64_cases, NUM_U64_CASES, u64_targets, LANES);
}

/* The shared functions on hand-checked values. */
static void test_functions_pin_the_choices(void **state) {
  (void)state;
  assert_int_equal(kiln_scalar_float32_to_float16(1.0f + 0x1p-11f), 0x3c00); /* tie to even */
  assert_int_equal(kiln_scalar_float32_to_float16(1.0f + 0x1p-10f + 0x1p-11f), 0x3c02);
  assert_int_equal(kiln_scalar_float32_to_float16(65520.0f), 0x7c00); /* overflows */
  assert_int_equal(kiln_scalar_float32_to_float16(65519.0f), 0x7bff);
  assert_int_equal(kiln_scalar_float32_to_float16(0x1p-25f), 0x0000); /* tie to 0 */
  assert_int_equal(kiln_scalar_float32_to_float16(-0x1.8p-25f), 0x8001);
  assert_int_equal(kiln_scalar_float32_to_float16(0x1.ffcp-15f), 0x0400); /* to normal */
  assert_int_equal(kiln_scalar_float32_to_float16(kiln_scalar_bits_float(0x7f800001u)), 0x7e00);
  assert_int_equal(kiln_scalar_float32_to_float16(kiln_scalar_bits_float(0xffa00000u)), 0xfd00);
  assert_true(kiln_scalar_float16_to_float32(0x0001) == 0x1p-24f);
  assert_int_equal(f32_bits(kiln_scalar_float16_to_float32(0xfd00)), 0xffa00000u);
  assert_int_equal(kiln_scalar_float32_to_bfloat16(1.0f + 0x1p-8f), 0x3f80); /* tie to even */
  assert_int_equal(kiln_scalar_float32_to_bfloat16(kiln_scalar_bits_float(0x7f7fffffu)), 0x7f80);
  assert_int_equal(kiln_scalar_float32_to_bfloat16(kiln_scalar_bits_float(0x7f800001u)), 0x7fc0);
  assert_int_equal(kiln_scalar_float32_to_bfloat16(kiln_scalar_bits_float(0xff810000u)), 0xff81);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_functions_pin_the_choices),
      cmocka_unit_test(test_narrow_scalar),
      cmocka_unit_test(test_narrow_vector),
      cmocka_unit_test(test_uint64_scalar),
      cmocka_unit_test(test_uint64_vector),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
