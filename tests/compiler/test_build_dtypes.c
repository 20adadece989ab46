/*
 * float16, bfloat16 and uint64 through the graph compiler: small graphs of
 * elementwise operators and casts (fused into one kernel each), built for
 * the C backend and for LLVM, run by the graph executor on edge values
 * (NaN, infinities, the largest finite values, subnormals, rounding ties;
 * uint64 above INT64_MAX and zero divisors), against the reference
 * interpreter on the same module, bit for bit (any NaN for a NaN).
 */
#include <math.h>
#include <string.h>

#include "base/scalar_ops.h"
#include "compiler/build.h"
#include "interp/interp.h"
#include "ir/text.h"
#include "kiln_test.h"

#define N 16

/* x + y, max(x, y) * x, (x cast to float32, doubled) cast back, per dtype. */
#define NARROW_GRAPH(T)                                             \
  "def @main(%x: Tensor[(16), " T "], %y: Tensor[(16), " T "]) {\n" \
  "  %0 = add(%x, %y);\n"                                           \
  "  %1 = maximum(%x, %y);\n"                                       \
  "  %2 = multiply(%1, %x);\n"                                      \
  "  %3 = cast(%x, dtype=\"float32\");\n"                           \
  "  %4 = add(%3, %3);\n"                                           \
  "  %5 = cast(%4, dtype=\"" T "\");\n"                             \
  "  (%0, %2, %5)\n"                                                \
  "}\n"

static const char u64_graph[] = "def @main(%x: Tensor[(16), uint64], %y: Tensor[(16), uint64]) {\n"
                                "  %0 = floor_mod(%x, %y);\n"
                                "  %1 = maximum(%x, %y);\n"
                                "  %2 = greater(%x, %y);\n"
                                "  %3 = cast(%x, dtype=\"float64\");\n"
                                "  (%0, %1, %2, %3)\n"
                                "}\n";

/* float16 patterns: NaNs (quiet, two payloads), +-inf, 65504, the smallest
 * subnormal and normal, 1, 1 + 2^-10, 2048 (where +1 ties), -0, 0.5. */
static const uint16_t f16_x[N] = {0x7e00, 0x7d01, 0x7c00, 0xfc00, 0x7bff, 0x0001, 0x0400, 0x3c00,
                                  0x3c01, 0x6800, 0x8000, 0x3800, 0xfbff, 0x03ff, 0x6801, 0x1234};
static const uint16_t f16_y[N] = {0x3c00, 0x3c00, 0xfc00, 0x3c00, 0x7bff, 0x0001, 0x8400, 0x1400,
                                  0x3c00, 0x3c00, 0x0000, 0xb800, 0x7bff, 0x0001, 0x3c00, 0x7e00};
/* bfloat16 patterns: the same idea at bfloat16's widths. */
static const uint16_t bf16_x[N] = {0x7fc0, 0x7fa1, 0x7f80, 0xff80, 0x7f7f, 0x0001, 0x0080, 0x3f80,
                                   0x3f81, 0x4380, 0x8000, 0x3f00, 0xff7f, 0x007f, 0x4381, 0x1234};
static const uint16_t bf16_y[N] = {0x3f80, 0x3f80, 0xff80, 0x3f80, 0x7f7f, 0x0001, 0x8080, 0x3b80,
                                   0x3f80, 0x3f80, 0x0000, 0xbf00, 0x7f7f, 0x0001, 0x3f80, 0x7fc0};
static const uint64_t u64_x[N] = {0,
                                  7,
                                  UINT64_MAX,
                                  UINT64_MAX - 6,
                                  (uint64_t)INT64_MAX,
                                  (uint64_t)INT64_MAX + 1,
                                  ((uint64_t)1 << 63) | 5,
                                  1000,
                                  3,
                                  64,
                                  UINT64_MAX,
                                  1,
                                  2,
                                  5,
                                  9,
                                  12};
static const uint64_t u64_y[N] = {0,  3,          0, UINT64_MAX, (uint64_t)1 << 63, 2,
                                  10, UINT64_MAX, 7, 64,         UINT64_MAX - 1,    0,
                                  2,  9,          5, 13};

static kiln_tensor_t *tensor_of(kiln_dtype_t dtype, const void *bits) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), dtype, 1, (const int64_t[]){N},
                                         bits, N * kiln_dtype_size(dtype), &t));
  return t;
}

/* Element i of both tensors: the same bits, or both NaN. */
static int same_element(const kiln_tensor_t *got, const kiln_tensor_t *want, int64_t i) {
  size_t size = kiln_dtype_size(kiln_tensor_dtype(want));
  const char *g = (const char *)kiln_tensor_data(got) + i * size;
  const char *w = (const char *)kiln_tensor_data(want) + i * size;
  if (memcmp(g, w, size) == 0) {
    return 1;
  }
  double gv = kiln_tensor_element_as_double(got, i), wv = kiln_tensor_element_as_double(want, i);
  return kiln_tensor_dtype(want) != KILN_DTYPE_BOOL && isnan(gv) && isnan(wv);
}

static void check_graph(const char *text, kiln_dtype_t dtype, const void *x, const void *y,
                        const char *target) {
  kiln_tensor_t *inputs[2] = {tensor_of(dtype, x), tensor_of(dtype, y)};
  kiln_module_t *m = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("dtypes", text, kiln_allocator_system(), &m));
  int num_want = 0;
  kiln_tensor_t **want = NULL;
  KILN_ASSERT_OK(kiln_interp_run(m, "main", 2, inputs, kiln_allocator_system(), &num_want, &want));
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.target = target;
  options.verify = true;
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compiler_build(kiln_allocator_system(), m, &options, &compiled));
  kiln_module_destroy(m);
  kiln_graph_executor_t *executor = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &executor));
  for (int i = 0; i < 2; ++i) {
    KILN_ASSERT_OK(kiln_graph_executor_set_input(executor, i, kiln_tensor_dl(inputs[i])));
  }
  KILN_ASSERT_OK(kiln_graph_executor_run(executor));
  assert_int_equal(kiln_graph_executor_num_outputs(executor), num_want);
  for (int o = 0; o < num_want; ++o) {
    kiln_tensor_t *got = NULL;
    KILN_ASSERT_OK(kiln_graph_executor_copy_output(executor, o, kiln_allocator_system(), &got));
    assert_int_equal(kiln_tensor_dtype(got), kiln_tensor_dtype(want[o]));
    for (int64_t i = 0; i < N; ++i) {
      if (!same_element(got, want[o], i)) {
        fail_msg("%s, %s: output %d element %lld is %.9g, %.9g on the interpreter",
                 kiln_dtype_name(dtype), target, o, (long long)i,
                 kiln_tensor_element_as_double(got, i), kiln_tensor_element_as_double(want[o], i));
      }
    }
    kiln_tensor_release(got);
    kiln_tensor_release(want[o]);
  }
  kiln_allocator_free(kiln_allocator_system(), want);
  kiln_graph_executor_destroy(executor);
  kiln_compiled_destroy(compiled);
  kiln_tensor_release(inputs[0]);
  kiln_tensor_release(inputs[1]);
}

static const char *const targets[] = {
    "c -march=native",
#ifdef KILN_HAVE_LLVM
    "llvm",
#endif
    NULL,
};

static void test_float16(void **state) {
  (void)state;
  for (int t = 0; targets[t]; ++t) {
    check_graph(NARROW_GRAPH("float16"), KILN_DTYPE_FLOAT16, f16_x, f16_y, targets[t]);
  }
}

static void test_bfloat16(void **state) {
  (void)state;
  for (int t = 0; targets[t]; ++t) {
    check_graph(NARROW_GRAPH("bfloat16"), KILN_DTYPE_BFLOAT16, bf16_x, bf16_y, targets[t]);
  }
}

static void test_uint64(void **state) {
  (void)state;
  for (int t = 0; targets[t]; ++t) {
    check_graph(u64_graph, KILN_DTYPE_UINT64, u64_x, u64_y, targets[t]);
  }
}

/* The interpreter's answers themselves, on a few elements by hand. */
static void test_reference_values(void **state) {
  (void)state;
  kiln_tensor_t *inputs[2] = {tensor_of(KILN_DTYPE_UINT64, u64_x),
                              tensor_of(KILN_DTYPE_UINT64, u64_y)};
  kiln_module_t *m = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("dtypes", u64_graph, kiln_allocator_system(), &m));
  int num = 0;
  kiln_tensor_t **out = NULL;
  KILN_ASSERT_OK(kiln_interp_run(m, "main", 2, inputs, kiln_allocator_system(), &num, &out));
  const uint64_t *mod = kiln_tensor_data(out[0]), *max = kiln_tensor_data(out[1]);
  assert_true(mod[0] == 0 && mod[2] == 0 && mod[6] == (((uint64_t)1 << 63) | 5) % 10);
  assert_true(max[4] == (uint64_t)1 << 63 && max[7] == UINT64_MAX);
  assert_int_equal(((const uint8_t *)kiln_tensor_data(out[2]))[5], 1); /* 2^63 > 2 */
  for (int o = 0; o < num; ++o) {
    kiln_tensor_release(out[o]);
  }
  kiln_allocator_free(kiln_allocator_system(), out);
  kiln_module_destroy(m);
  kiln_tensor_release(inputs[0]);
  kiln_tensor_release(inputs[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reference_values),
      cmocka_unit_test(test_float16),
      cmocka_unit_test(test_bfloat16),
      cmocka_unit_test(test_uint64),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
