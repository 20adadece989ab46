/*
 * Compute rules of the random operators (transform_random.c is the
 * reference): one elementwise compute, T_random_<name>, whose body is
 * op/random_bits.h's generator written in the loop IR, so that every path
 * gives the reference's numbers.
 *
 * The position n is the row-major offset of the output indices, in uint64;
 * the counter 2n + d splits into its low and high 32-bit words (a uint64
 * shift and casts); the hash is uint32 arithmetic (multiplications wrap)
 * with the bitwise_xor and shift_right intrinsics, each of its three
 * xor-shift steps reading its operand through a Let so that the expression
 * stays a chain rather than a tree. The unit value, the Box-Muller
 * transform and the comparison with the probability are float64, as in the
 * reference, and the result is cast to the output dtype once.
 */
#include <stdio.h>

#include "op/random_attrs.h"
#include "op/random_bits.h"
#include "op/transform_common.h"

typedef struct random_body_t {
  const kiln_compute_args_t *args;
  const kiln_random_attrs_t *attrs;
  const kiln_te_tensor_t *out;
  int lets; /* Let variables made so far, for their names */
} random_body_t;

static const kiln_tir_expr_t *u32(kiln_tir_builder_t *b, uint32_t value) {
  return kiln_tir_b_int(b, KILN_DTYPE_UINT32, (int64_t)value);
}

static const kiln_tir_expr_t *f64(kiln_tir_builder_t *b, double value) {
  return kiln_tir_b_float(b, KILN_DTYPE_FLOAT64, value);
}

static const kiln_tir_expr_t *call2(kiln_tir_builder_t *b, kiln_tir_intrinsic_t op,
                                    const kiln_tir_expr_t *x, const kiln_tir_expr_t *y) {
  const kiln_tir_expr_t *args[] = {x, y};
  return kiln_tir_b_call(b, op, 2, args);
}

/* x ^ (x >> shift), x read once through a Let. */
static const kiln_tir_expr_t *xor_shift(kiln_tir_builder_t *b, random_body_t *r,
                                        const kiln_tir_expr_t *x, uint32_t shift) {
  char name[32];
  snprintf(name, sizeof(name), "random_x%d", r->lets++);
  const kiln_tir_var_t *v = kiln_tir_b_var(b, name, KILN_DTYPE_UINT32);
  const kiln_tir_expr_t *vx = kiln_tir_b_v(v);
  const kiln_tir_expr_t *mixed = call2(b, KILN_TIR_INTRINSIC_BITWISE_XOR, vx,
                                       call2(b, KILN_TIR_INTRINSIC_SHIFT_RIGHT, vx, u32(b, shift)));
  return kiln_tir_b_let(b, v, x, mixed);
}

/* kiln_random_hash. */
static const kiln_tir_expr_t *hash(kiln_tir_builder_t *b, random_body_t *r,
                                   const kiln_tir_expr_t *x) {
  x = kiln_tir_b_mul(b, xor_shift(b, r, x, 16), u32(b, KILN_RANDOM_MUL1));
  x = kiln_tir_b_mul(b, xor_shift(b, r, x, 15), u32(b, KILN_RANDOM_MUL2));
  return xor_shift(b, r, x, 16);
}

/* The output position of `indices`, row-major, in uint64. */
static const kiln_tir_expr_t *position(kiln_tir_builder_t *b, const kiln_te_tensor_t *out,
                                       const kiln_tir_expr_t *const *indices) {
  kiln_tir_dtype_t u64 = kiln_tir_scalar(KILN_DTYPE_UINT64);
  const kiln_tir_expr_t *n = kiln_tir_b_int(b, KILN_DTYPE_UINT64, 0);
  for (int d = 0; d < out->ndim; ++d) {
    n = kiln_tir_b_add(b, kiln_tir_b_mul(b, n, kiln_tir_b_int(b, KILN_DTYPE_UINT64, out->shape[d])),
                       kiln_tir_b_cast(b, u64, indices[d]));
  }
  return n;
}

/* kiln_random_unit of draw `draw` at position n, as a float64. */
static const kiln_tir_expr_t *unit(kiln_tir_builder_t *b, random_body_t *r,
                                   const kiln_tir_expr_t *n, int draw) {
  kiln_tir_dtype_t w32 = kiln_tir_scalar(KILN_DTYPE_UINT32);
  const kiln_tir_expr_t *counter =
      kiln_tir_b_add(b, kiln_tir_b_mul(b, n, kiln_tir_b_int(b, KILN_DTYPE_UINT64, 2)),
                     kiln_tir_b_int(b, KILN_DTYPE_UINT64, draw));
  const kiln_tir_expr_t *low = kiln_tir_b_cast(b, w32, counter);
  const kiln_tir_expr_t *high = kiln_tir_b_cast(
      b, w32,
      call2(b, KILN_TIR_INTRINSIC_SHIFT_RIGHT, counter, kiln_tir_b_int(b, KILN_DTYPE_UINT64, 32)));
  uint32_t key = kiln_random_key(r->attrs->seed);
  const kiln_tir_expr_t *word =
      hash(b, r,
           call2(b, KILN_TIR_INTRINSIC_BITWISE_XOR,
                 hash(b, r, call2(b, KILN_TIR_INTRINSIC_BITWISE_XOR, u32(b, key), low)), high));
  return kiln_tir_b_mul(b, kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_FLOAT64), word),
                        f64(b, KILN_RANDOM_UNIT));
}

/* Box-Muller: sqrt(-2 log(1 - u0)) * cos(2 pi u1). */
static const kiln_tir_expr_t *gaussian(kiln_tir_builder_t *b, const kiln_tir_expr_t *u0,
                                       const kiln_tir_expr_t *u1) {
  const kiln_tir_expr_t *one_minus = kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, f64(b, 1.0), u0);
  const kiln_tir_expr_t *log = kiln_tir_b_call(b, KILN_TIR_INTRINSIC_LOG, 1, &one_minus);
  const kiln_tir_expr_t *r2 = kiln_tir_b_mul(b, f64(b, -2.0), log);
  const kiln_tir_expr_t *radius = kiln_tir_b_call(b, KILN_TIR_INTRINSIC_SQRT, 1, &r2);
  const kiln_tir_expr_t *angle = kiln_tir_b_mul(b, f64(b, KILN_RANDOM_TWO_PI), u1);
  return kiln_tir_b_mul(b, radius, kiln_tir_b_call(b, KILN_TIR_INTRINSIC_COS, 1, &angle));
}

static const kiln_tir_expr_t *random_body(kiln_tir_builder_t *b,
                                          const kiln_tir_expr_t *const *indices, void *user) {
  random_body_t *r = user;
  const kiln_random_attrs_t *a = r->attrs;
  const kiln_tir_expr_t *n = position(b, r->out, indices);
  const kiln_tir_expr_t *u0 = unit(b, r, n, 0), *v = NULL;
  kiln_tir_dtype_t f64_type = kiln_tir_scalar(KILN_DTYPE_FLOAT64);
  if (r->args->op->id == KILN_OP_RANDOM_UNIFORM) {
    v = kiln_tir_b_add(b, f64(b, a->low), kiln_tir_b_mul(b, f64(b, a->high - a->low), u0));
  } else if (r->args->op->id == KILN_OP_RANDOM_NORMAL) {
    v = kiln_tir_b_add(b, f64(b, a->mean),
                       kiln_tir_b_mul(b, f64(b, a->scale), gaussian(b, u0, unit(b, r, n, 1))));
  } else {
    const kiln_tir_expr_t *p =
        kiln_tir_b_cast(b, f64_type, kiln_te_read(b, r->args->inputs[0], r->out->ndim, indices));
    const kiln_tir_expr_t *hit = kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, u0, p);
    if (kiln_scalar_class(a->dtype) != KILN_SCALAR_CLASS_FLOAT) {
      return kiln_tir_b_select(b, hit, kiln_tir_b_int(b, a->dtype, 1),
                               kiln_tir_b_int(b, a->dtype, 0));
    }
    v = kiln_tir_b_select(b, hit, f64(b, 1.0), f64(b, 0.0));
  }
  return kiln_tir_b_cast(b, kiln_tir_scalar(a->dtype), v);
}

kiln_status_t kiln_compute_random(const kiln_compute_args_t *args,
                                  kiln_compute_result_t *out_result) {
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &type));
  random_body_t r = {.args = args, .attrs = args->attrs};
  /* position() reads the output's shape: a placeholder-free stand-in */
  kiln_te_tensor_t shape = {.ndim = type->ndim, .shape = type->shape};
  r.out = &shape;
  return kiln_compute_one(args, random_body, &r, out_result);
}
