/*
 * The one meaning of the scalar operations C leaves undefined
 * (base/scalar_ops.h), on every path of the loop IR: for each operation
 * (FloorDiv, FloorMod, shift_left, shift_right, bitwise_xor on signed and unsigned
 * dtypes; Cast from float32 and float64 to every integer dtype) and each
 * pair of edge values (zero divisors, INT_MIN and -1, shifts by the width,
 * more and negative amounts; NaN, infinities, out-of-range floats), the
 * loop-IR interpreter, the simplifier folding the constants, the C backend
 * and the LLVM backend (object file and JIT) must give what the function
 * gives. The functions themselves are pinned on hand-checked values.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "../tir/tir_fixture.h"
#include "base/scalar_ops.h"
#include "codegen/target.h"
#include "kiln/module.h"
#include "kiln_op_test.h"
#include "tir/interp.h"
#include "tir/interp_value.h"
#include "tir/simplify.h"

/* ---- the functions ---- */

static void test_functions_pin_the_choices(void **state) {
  (void)state;
  assert_int_equal(kiln_scalar_int_divide(7, 0), 0);
  assert_int_equal(kiln_scalar_int_divide(INT64_MIN, -1), INT64_MIN);
  assert_int_equal(kiln_scalar_int_divide(-7, 2), -3);
  assert_int_equal(kiln_scalar_int_mod(7, 0), 0);
  assert_int_equal(kiln_scalar_int_mod(INT64_MIN, -1), 0);
  assert_int_equal(kiln_scalar_int_mod(-7, 2), -1);
  assert_int_equal(kiln_scalar_int_floor_divide(-7, 2), -4);
  assert_int_equal(kiln_scalar_int_floor_divide(-7, 0), 0);
  assert_int_equal(kiln_scalar_int_floor_divide(INT64_MIN, -1), INT64_MIN);
  assert_int_equal(kiln_scalar_int_floor_mod(-7, 2), 1);
  assert_int_equal(kiln_scalar_int_floor_mod(7, -2), -1);
  assert_int_equal(kiln_scalar_int_floor_mod(7, 0), 0);
  assert_int_equal(kiln_scalar_uint_divide(UINT64_MAX, 0), 0);
  assert_int_equal(kiln_scalar_uint_mod(UINT64_MAX, 0), 0);
  assert_int_equal(kiln_scalar_int_power(0, -1), 0);
  assert_int_equal(kiln_scalar_int_power(-1, -3), -1);
  assert_int_equal(kiln_scalar_int_power(1, -3), 1);
  assert_int_equal(kiln_scalar_int_power(2, -1), 0);
  assert_int_equal(kiln_scalar_int_power(2, 64), 0);
  assert_int_equal(kiln_scalar_bits_shift_left(1, 7, 8), 128);
  assert_int_equal(kiln_scalar_bits_shift_left(1, 8, 8), 0);
  assert_int_equal(kiln_scalar_bits_shift_left(1, -1, 8), 0);
  assert_int_equal(kiln_scalar_bits_xor(0xf0, 0x3c, 8), 0xcc);
  assert_int_equal(kiln_scalar_bits_xor(UINT64_MAX, 1, 8), 0xfe);
  assert_true(kiln_scalar_bits_xor(UINT64_MAX, 0x5555555555555555ull, 64) == 0xaaaaaaaaaaaaaaaaull);
  assert_int_equal(kiln_scalar_bits_shift_right(UINT64_MAX, 63, 64), 1);
  assert_int_equal(kiln_scalar_bits_shift_right(UINT64_MAX, 64, 64), 0);
  assert_int_equal(kiln_scalar_float_to_int(NAN, INT32_MIN, INT32_MAX), 0);
  assert_int_equal(kiln_scalar_float_to_int(INFINITY, INT32_MIN, INT32_MAX), INT32_MAX);
  assert_int_equal(kiln_scalar_float_to_int(-INFINITY, INT8_MIN, INT8_MAX), INT8_MIN);
  assert_int_equal(kiln_scalar_float_to_int(-2.9, INT8_MIN, INT8_MAX), -2);
  assert_int_equal(kiln_scalar_float_to_int(1e300, INT64_MIN, INT64_MAX), INT64_MAX);
  assert_int_equal(kiln_scalar_float_to_uint(-0.5, UINT8_MAX), 0);
  assert_int_equal(kiln_scalar_float_to_uint(-7, UINT8_MAX), 0);
  assert_int_equal(kiln_scalar_float_to_uint(300, UINT8_MAX), UINT8_MAX);
  assert_int_equal(kiln_scalar_float_to_uint(NAN, UINT32_MAX), 0);
}

/* The C backend's prelude is this source. */
static void test_source_is_the_functions(void **state) {
  (void)state;
  const char *source = KILN_SCALAR_OPS_SOURCE;
  assert_non_null(strstr(source, "static inline int64_t kiln_scalar_int_floor_divide(int64_t a, "
                                 "int64_t b) {"));
  assert_non_null(strstr(source, "kiln_scalar_float_to_uint(double x, uint64_t hi)"));
}

/* ---- every path ---- */

#define NUM_VALUES 12

typedef kiln_tir_expr_t const *(*make_fn)(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                          const kiln_tir_expr_t *y, kiln_dtype_t to);

/* One operation: its operands' dtype, its result's dtype and the IR. */
typedef struct op_case_t {
  const char *name;
  kiln_dtype_t in;
  kiln_dtype_t out;
  int binary;
  make_fn make;
} op_case_t;

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

static const kiln_tir_expr_t *make_shl(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                       const kiln_tir_expr_t *y, kiln_dtype_t to) {
  (void)to;
  const kiln_tir_expr_t *args[] = {x, y};
  return kiln_tir_b_call(b, KILN_TIR_INTRINSIC_SHIFT_LEFT, 2, args);
}

static const kiln_tir_expr_t *make_shr(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                       const kiln_tir_expr_t *y, kiln_dtype_t to) {
  (void)to;
  const kiln_tir_expr_t *args[] = {x, y};
  return kiln_tir_b_call(b, KILN_TIR_INTRINSIC_SHIFT_RIGHT, 2, args);
}

static const kiln_tir_expr_t *make_xor(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                       const kiln_tir_expr_t *y, kiln_dtype_t to) {
  (void)to;
  const kiln_tir_expr_t *args[] = {x, y};
  return kiln_tir_b_call(b, KILN_TIR_INTRINSIC_BITWISE_XOR, 2, args);
}

static const kiln_tir_expr_t *make_cast(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                        const kiln_tir_expr_t *y, kiln_dtype_t to) {
  (void)y;
  return kiln_tir_b_cast(b, kiln_tir_scalar(to), x);
}

static const op_case_t cases[] = {
    {"floordiv_i32", KILN_DTYPE_INT32, KILN_DTYPE_INT32, 1, make_floordiv},
    {"floormod_i32", KILN_DTYPE_INT32, KILN_DTYPE_INT32, 1, make_floormod},
    {"floordiv_i8", KILN_DTYPE_INT8, KILN_DTYPE_INT8, 1, make_floordiv},
    {"floormod_i64", KILN_DTYPE_INT64, KILN_DTYPE_INT64, 1, make_floormod},
    {"floordiv_i64", KILN_DTYPE_INT64, KILN_DTYPE_INT64, 1, make_floordiv},
    {"floordiv_u8", KILN_DTYPE_UINT8, KILN_DTYPE_UINT8, 1, make_floordiv},
    {"floormod_u32", KILN_DTYPE_UINT32, KILN_DTYPE_UINT32, 1, make_floormod},
    {"shl_i32", KILN_DTYPE_INT32, KILN_DTYPE_INT32, 1, make_shl},
    {"shr_i32", KILN_DTYPE_INT32, KILN_DTYPE_INT32, 1, make_shr},
    {"shl_u8", KILN_DTYPE_UINT8, KILN_DTYPE_UINT8, 1, make_shl},
    {"shr_u16", KILN_DTYPE_UINT16, KILN_DTYPE_UINT16, 1, make_shr},
    {"xor_i32", KILN_DTYPE_INT32, KILN_DTYPE_INT32, 1, make_xor},
    {"xor_i8", KILN_DTYPE_INT8, KILN_DTYPE_INT8, 1, make_xor},
    {"xor_u32", KILN_DTYPE_UINT32, KILN_DTYPE_UINT32, 1, make_xor},
    {"cast_f32_i8", KILN_DTYPE_FLOAT32, KILN_DTYPE_INT8, 0, make_cast},
    {"cast_f32_i32", KILN_DTYPE_FLOAT32, KILN_DTYPE_INT32, 0, make_cast},
    {"cast_f32_i64", KILN_DTYPE_FLOAT32, KILN_DTYPE_INT64, 0, make_cast},
    {"cast_f32_u8", KILN_DTYPE_FLOAT32, KILN_DTYPE_UINT8, 0, make_cast},
    {"cast_f32_u32", KILN_DTYPE_FLOAT32, KILN_DTYPE_UINT32, 0, make_cast},
    {"cast_f64_i16", KILN_DTYPE_FLOAT64, KILN_DTYPE_INT16, 0, make_cast},
    {"cast_f64_i64", KILN_DTYPE_FLOAT64, KILN_DTYPE_INT64, 0, make_cast},
    {"cast_f64_u16", KILN_DTYPE_FLOAT64, KILN_DTYPE_UINT16, 0, make_cast},
};
#define NUM_CASES ((int)(sizeof(cases) / sizeof(cases[0])))

/* The edge values of a dtype: integers as int64 (wrapped to the dtype on
 * store), floats as doubles. */
static const int64_t int_edges[NUM_VALUES] = {7, -7, 0,         INT64_MIN, INT64_MAX, -1,
                                              1, 8,  INT32_MIN, 31,        32,        65};
static const int64_t int_divisors[NUM_VALUES] = {0, 0, 0, -1, -1, -1, 0, 3, -1, -3, 64, -2};
static const int64_t shift_amounts[NUM_VALUES] = {0, 1, 7, 8, 9, -1, 31, 32, 33, 64, 15, 16};
static const double float_edges[NUM_VALUES] = {NAN,  INFINITY, -INFINITY, 1e10,   -1e10, -0.9,
                                               -1.0, 255.9,    127.5,     -128.5, 3e9,   2.5};

static int is_shift(const op_case_t *c) {
  return c->make == make_shl || c->make == make_shr;
}

/* Element i of the case's operands and the function's answer for them,
 * wrapped to the output dtype. */
static int64_t operand_int(const op_case_t *c, int which, int i) {
  int64_t raw = which == 0 ? int_edges[i] : (is_shift(c) ? shift_amounts[i] : int_divisors[i]);
  return kiln_tir_value_wrap_int(c->in, raw);
}

static int64_t bits_of(kiln_dtype_t dtype) {
  return kiln_dtype_to_dl(dtype).bits;
}

static int64_t expected(const op_case_t *c, int i) {
  int64_t lo = 0, hi = 0;
  kiln_tir_dtype_int_range(c->out, &lo, &hi);
  if (!c->binary) {
    double x = float_edges[i];
    x = c->in == KILN_DTYPE_FLOAT32 ? (double)(float)x : x;
    return lo < 0 ? kiln_scalar_float_to_int(x, lo, hi)
                  : (int64_t)kiln_scalar_float_to_uint(x, (uint64_t)hi);
  }
  int64_t x = operand_int(c, 0, i), y = operand_int(c, 1, i);
  int64_t r = 0;
  if (c->make == make_floordiv) {
    r = kiln_scalar_int_floor_divide(x, y);
  } else if (c->make == make_floormod) {
    r = kiln_scalar_int_floor_mod(x, y);
  } else {
    int bits = (int)bits_of(c->in);
    r = (int64_t)(c->make == make_shl   ? kiln_scalar_bits_shift_left((uint64_t)x, y, bits)
                  : c->make == make_shr ? kiln_scalar_bits_shift_right((uint64_t)x, y, bits)
                                        : kiln_scalar_bits_xor((uint64_t)x, (uint64_t)y, bits));
  }
  return kiln_tir_value_wrap_int(c->out, r);
}

static kiln_tensor_t *new_tensor(kiln_dtype_t dtype) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create(kiln_allocator_system(), dtype, 1, (const int64_t[]){NUM_VALUES}, &t));
  memset(kiln_tensor_data(t), 0x5a, kiln_tensor_byte_size(t));
  return t;
}

static void fill(const op_case_t *c, int which, kiln_tensor_t *t) {
  for (int i = 0; i < NUM_VALUES; ++i) {
    if (c->in == KILN_DTYPE_FLOAT32) {
      ((float *)kiln_tensor_data(t))[i] = (float)float_edges[i];
    } else if (c->in == KILN_DTYPE_FLOAT64) {
      ((double *)kiln_tensor_data(t))[i] = float_edges[i];
    } else {
      int64_t v = operand_int(c, which, i);
      memcpy((char *)kiln_tensor_data(t) + (size_t)i * kiln_dtype_size(c->in), &v,
             kiln_dtype_size(c->in)); /* little-endian: the low bytes */
    }
  }
}

/* out[i] = op(a[i], b[i]) over NUM_VALUES elements. */
static const kiln_tir_prim_func_t *build(kiln_tir_builder_t *b, const op_case_t *c) {
  const int64_t shape[] = {NUM_VALUES};
  const kiln_tir_buffer_t *A = kiln_tir_b_buffer(b, "A", c->in, 1, shape);
  const kiln_tir_buffer_t *B = kiln_tir_b_buffer(b, "B", c->in, 1, shape);
  const kiln_tir_buffer_t *Out = kiln_tir_b_buffer(b, "Out", c->out, 1, shape);
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *idx[] = {kiln_tir_b_v(i)};
  const kiln_tir_expr_t *value =
      c->make(b, kiln_tir_b_load(b, A, 1, idx), kiln_tir_b_load(b, B, 1, idx), c->out);
  const kiln_tir_stmt_t *s = kiln_tir_b_store(b, Out, value, 1, idx);
  s = kiln_tir_b_for(b, i, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, NUM_VALUES), KILN_TIR_FOR_SERIAL,
                     s);
  const kiln_tir_buffer_t *params[] = {A, B, Out};
  return kiln_tir_b_func(b, c->name, 3, params, s);
}

static int64_t element(const kiln_tensor_t *t, int i) {
  int64_t v = 0;
  memcpy(&v, (const char *)kiln_tensor_data(t) + (size_t)i * kiln_dtype_size(kiln_tensor_dtype(t)),
         kiln_dtype_size(kiln_tensor_dtype(t)));
  return kiln_tir_value_wrap_int(kiln_tensor_dtype(t), v);
}

static void check_outputs(const op_case_t *c, const char *path, const kiln_tensor_t *out) {
  for (int i = 0; i < NUM_VALUES; ++i) {
    if (element(out, i) != expected(c, i)) {
      fail_msg("%s through %s: element %d is %lld, base/scalar_ops.h gives %lld", c->name, path, i,
               (long long)element(out, i), (long long)expected(c, i));
    }
  }
}

static const char *const targets[] = {
    "c",
#ifdef KILN_HAVE_LLVM
    "llvm -noasm",
    "llvm -jit -noasm",
#endif
};

/* The interpreter, then every backend, on the edge values. */
static void test_interpreter_and_backends_agree(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *funcs[NUM_CASES];
  kiln_tensor_t *args[NUM_CASES][3];
  for (int k = 0; k < NUM_CASES; ++k) {
    funcs[k] = build(&f.b, &cases[k]);
  }
  KILN_ASSERT_OK(kiln_tir_builder_finish(&f.b));
  for (int k = 0; k < NUM_CASES; ++k) {
    for (int a = 0; a < 2; ++a) {
      args[k][a] = new_tensor(cases[k].in);
      fill(&cases[k], a, args[k][a]);
    }
    args[k][2] = new_tensor(cases[k].out);
    KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), funcs[k], 3, args[k]));
    check_outputs(&cases[k], "the loop-IR interpreter", args[k][2]);
  }
  for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); ++t) {
    kiln_runtime_module_t *module = NULL;
    KILN_ASSERT_OK(
        kiln_codegen_build(kiln_allocator_system(), targets[t], funcs, NUM_CASES, &module));
    for (int k = 0; k < NUM_CASES; ++k) {
      memset(kiln_tensor_data(args[k][2]), 0x5a, kiln_tensor_byte_size(args[k][2]));
      KILN_ASSERT_OK(kiln_runtime_module_call(module, funcs[k]->name, 3, args[k]));
      check_outputs(&cases[k], targets[t], args[k][2]);
    }
    kiln_runtime_module_release(module);
  }
  for (int k = 0; k < NUM_CASES; ++k) {
    for (int a = 0; a < 3; ++a) {
      kiln_tensor_release(args[k][a]);
    }
  }
  fixture_done(&f);
}

/* The simplifier folds constants to the same values (or leaves the node:
 * MIN // -1, which overflows the dtype, does not fold). */
static void test_simplifier_folds_the_same(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  kiln_tir_analyzer_t analyzer;
  kiln_tir_analyzer_initialize(&analyzer, kiln_allocator_system());
  for (int k = 0; k < NUM_CASES; ++k) {
    const op_case_t *c = &cases[k];
    for (int i = 0; i < NUM_VALUES; ++i) {
      const kiln_tir_expr_t *x = c->binary ? kiln_tir_b_int(&f.b, c->in, operand_int(c, 0, i))
                                           : kiln_tir_b_float(&f.b, c->in, float_edges[i]);
      const kiln_tir_expr_t *y = c->binary ? kiln_tir_b_int(&f.b, c->in, operand_int(c, 1, i)) : x;
      const kiln_tir_expr_t *e = c->make(&f.b, x, y, c->out);
      KILN_ASSERT_OK(kiln_tir_builder_finish(&f.b));
      const kiln_tir_expr_t *folded = NULL;
      KILN_ASSERT_OK(kiln_tir_simplify_expr(&f.arena, &analyzer, e, &folded));
      int64_t v = 0;
      if (kiln_tir_expr_as_int(folded, &v) && v != expected(c, i)) {
        fail_msg("%s: the simplifier folds element %d to %lld, base/scalar_ops.h gives %lld",
                 c->name, i, (long long)v, (long long)expected(c, i));
      }
      int64_t lo = 0, hi = 0;
      kiln_tir_dtype_int_range(c->in, &lo, &hi);
      /* MIN // -1 overflows the dtype; the simplifier leaves uint64 calls alone */
      int foldable =
          !(c->make == make_floordiv && operand_int(c, 0, i) == lo && operand_int(c, 1, i) == -1) &&
          c->in != KILN_DTYPE_UINT64;
      if (foldable && folded->kind != KILN_TIR_EXPR_INT_IMM) {
        fail_msg("%s: element %d did not fold", c->name, i);
      }
    }
  }
  kiln_tir_analyzer_deinitialize(&analyzer);
  fixture_done(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_functions_pin_the_choices),
      cmocka_unit_test(test_source_is_the_functions),
      cmocka_unit_test(test_interpreter_and_backends_agree),
      cmocka_unit_test(test_simplifier_folds_the_same),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
