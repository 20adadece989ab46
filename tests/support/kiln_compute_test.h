/*
 * Helpers of the compute-rule tests (tests/op/test_compute_*.c).
 *
 * check_compute is ggml's test-backend-ops for one operator: it runs the
 * operator's reference kernel and its compute rule, scheduled (the
 * operator's schedule or the default) for a 512-bit target and lowered to a
 * PrimFunc run on the loop-IR interpreter, both as lowered and after the
 * lowering passes (tir/transform.h: loop partition, storage flatten,
 * vectorize, unroll, simplify), on the same inputs, and asserts that every
 * output agrees: integers and bools exactly, floats within
 * rtol 1e-4 and atol 1e-5 (NaN matches NaN, infinities their own sign). The
 * compiled outputs start filled with a poison pattern, so an element the
 * loops never write fails. Use with setup/teardown of kiln_op_test.h.
 *
 * It also runs the function after the passes through every built backend
 * (codegen/target.h: target "c", and "llvm" and "llvm -jit" when kiln was
 * built with LLVM) with 1, 2 and 3 threads, against the same reference.
 * Compiling a module per case would cost a compiler run each, so the cases
 * are queued and compiled together, one module per batch and target: when
 * the batch is full and at the end of each test (teardown calls
 * check_compute_flush), so a failure may show at teardown; it names the
 * operator, the output, the element, the target and the thread count.
 */
#ifndef KILN_TESTS_SUPPORT_KILN_COMPUTE_TEST_H_
#define KILN_TESTS_SUPPORT_KILN_COMPUTE_TEST_H_

#include "kiln_op_test.h"
#include "op/compute.h"

/* A deterministic pseudo-random tensor (a fresh stream per call): floats
 * uniform in [lo, hi), integers uniform in [lo, hi], bools 0 or 1. */
kiln_tensor_t *random_tensor(kiln_dtype_t dtype, int ndim, const int64_t *shape, double lo,
                             double hi);
/* The inputs are the caller's (not released). */
void check_compute(const kiln_op_t *op, const void *attrs, int num_inputs,
                   kiln_tensor_t *const *inputs);
/* Compiles and checks the queued backend cases; kiln_op_test.h's teardown
 * calls it. */
void check_compute_flush(void);
/* check_compute on fresh random inputs of the given types, in [lo, hi). */
void check_compute_random(const kiln_op_t *op, const void *attrs, int num_inputs,
                          const kiln_type_t *const *types, double lo, double hi);
/* The schedule configuration check_compute and the golden texts lower with
 * from now on (NULL: the default rules); check_compute_flush (the
 * teardown) resets it. */
void check_compute_set_config(const kiln_schedule_config_t *config);
/* check_compute_set_config of a configuration's text form: golden tests pin
 * the configuration their text shows, so that a new default rule does not
 * silently change a golden. */
void check_compute_pin(const char *config);
/* The printed PrimFunc `name` of the operator lowered for `target_bits`-bit
 * vectors (in the test arena), for golden tests. */
const char *lowered_text(const kiln_op_t *op, const void *attrs, int num_inputs,
                         const kiln_type_t *const *types, int target_bits);
/* The same after the lowering passes (kiln_tir_lower_pipeline). */
const char *passed_text(const kiln_op_t *op, const void *attrs, int num_inputs,
                        const kiln_type_t *const *types, int target_bits);

#endif /* KILN_TESTS_SUPPORT_KILN_COMPUTE_TEST_H_ */
