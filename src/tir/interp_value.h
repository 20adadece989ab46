/*
 * Values of the loop-IR interpreter and the arithmetic on them (internal to
 * interp.c).
 *
 * A value is a dtype and one slot per lane: integers and bools in `i`
 * (int64, wrapped to the dtype's width after every operation), floats in `f`
 * (double, rounded to float after every float32 operation, which gives
 * exactly C's float results for + - * / and sqrt, since double carries more
 * than twice float's precision). Intrinsics on float32 call the float
 * versions of the math functions.
 */
#ifndef KILN_TIR_INTERP_VALUE_H_
#define KILN_TIR_INTERP_VALUE_H_

#include "tir/tir.h"

typedef struct kiln_tir_value_t {
  kiln_tir_dtype_t dtype;
  union {
    int64_t i[KILN_TIR_MAX_LANES];
    double f[KILN_TIR_MAX_LANES];
  } lanes;
} kiln_tir_value_t;

/* UNIMPLEMENTED naming the dtype when the interpreter cannot hold it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_value_check_dtype(kiln_tir_dtype_t dtype);
/* `v` wrapped (or rounded) to `dtype`'s base type. */
int64_t kiln_tir_value_wrap_int(kiln_dtype_t base, int64_t v);
double kiln_tir_value_round_float(kiln_dtype_t base, double v);
/* a <kind> b, lane by lane (Add..Or); `out` may not alias. An integer zero
 * divisor gives 0 (base/scalar_ops.h). */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_value_binary(kiln_tir_expr_kind_t kind,
                                                         const kiln_tir_value_t *a,
                                                         const kiln_tir_value_t *b,
                                                         kiln_tir_dtype_t out_dtype,
                                                         kiln_tir_value_t *out);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_value_cast(kiln_tir_dtype_t dtype,
                                                       const kiln_tir_value_t *a,
                                                       kiln_tir_value_t *out);
void kiln_tir_value_call(kiln_tir_intrinsic_t op, int num_args, const kiln_tir_value_t *args,
                         kiln_tir_value_t *out);

#endif /* KILN_TIR_INTERP_VALUE_H_ */
