/*
 * A module with symbolic dims compiled once for the VM (compiler/build.c,
 * vm_symbolic.c) and run at several sizes: an attention block typed with a
 * symbolic batch B and sequence length N (layer_norm, dense, reshape,
 * transpose, batch_matmul, a mask, softmax, mean, erf, concatenate,
 * strided_slice, sum) matches the reference interpreter at (B, N) = (1, 1),
 * (2, 17), (1, 64), (1, 128), run on one executor in that order (the pool's
 * blocks grow and shrink). AUTO picks the VM. A mask whose N differs from
 * x's is refused by check_inputs before any kernel runs, naming the
 * argument and the shape it must have; so is B above its upper bound.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compiler/build.h"
#include "interp/interp.h"
#include "ir/infer.h"
#include "ir/text.h"
#include "kiln/compiler.h"
#include "kiln_compute_test.h"
#include "kiln_ir_test.h"
#include "kiln_test.h"

static const char block[] =
    "def @main(%x: Tensor[(B<=4, N, 16), float32], %mask: Tensor[(B<=4, N), float32],\n"
    "          %g: Tensor[(16), float32], %e: Tensor[(16), float32],\n"
    "          %wq: Tensor[(16, 16), float32], %wk: Tensor[(16, 16), float32],\n"
    "          %wv: Tensor[(16, 16), float32]) {\n"
    "  %0 = nn.layer_norm(%x, %g, %e, axis=-1);\n"
    "  %1 = nn.dense(%0, %wq, units=16);\n"
    "  %2 = reshape(%1, newshape=[0, 0, 2, 8]);\n"
    "  %3 = transpose(%2, axes=[0, 2, 1, 3]);\n"
    "  %4 = transpose(%3, axes=[0, 2, 1, 3]);\n"
    "  %5 = reshape(%4, newshape=[0, 0, 16]);\n"
    "  %6 = nn.dense(%0, %wk, units=16);\n"
    "  %7 = nn.batch_matmul(%5, %6);\n"
    "  %8 = expand_dims(%mask, axis=1);\n"
    "  %9 = add(%7, %8);\n"
    "  %10 = nn.softmax(%9);\n"
    "  %11 = nn.dense(%0, %wv, units=16);\n"
    "  %12 = nn.batch_matmul(%10, %11, transpose_b=False);\n"
    "  %13 = add(%12, %x);\n"
    "  %14 = mean(%13, axis=[2], keepdims=True);\n"
    "  %15 = subtract(%13, %14);\n"
    "  %16 = erf(%15);\n"
    "  %17 = concatenate(%16, %x, axis=2);\n"
    "  %18 = strided_slice(%17, begin=[4], end=[20], axes=[2]);\n"
    "  %19 = sum(%18, axis=[1]);\n"
    "  (%18, %19)\n"
    "}\n";

static kiln_module_t *parse(void) {
  return irt_parse("block", block);
}

static kiln_compiled_t *compile(void) {
  return irt_compile_vm("block", block);
}

static void make_inputs(int64_t b, int64_t n, kiln_tensor_t **in) {
  in[0] = random_tensor(KILN_DTYPE_FLOAT32, 3, (const int64_t[]){b, n, 16}, -1, 1);
  in[1] = random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){b, n}, -1, 1);
  in[2] = random_tensor(KILN_DTYPE_FLOAT32, 1, (const int64_t[]){16}, 0.5, 1.5);
  in[3] = random_tensor(KILN_DTYPE_FLOAT32, 1, (const int64_t[]){16}, -1, 1);
  for (int k = 0; k < 3; ++k) {
    in[4 + k] = random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){16, 16}, -0.5, 0.5);
  }
}

static void release_all(int n, kiln_tensor_t **tensors) {
  for (int i = 0; i < n; ++i) {
    kiln_tensor_release(tensors[i]);
  }
}

static void assert_close(const kiln_tensor_t *got, const kiln_tensor_t *want, int64_t n, int o) {
  assert_int_equal(kiln_tensor_ndim(got), kiln_tensor_ndim(want));
  for (int d = 0; d < kiln_tensor_ndim(want); ++d) {
    assert_int_equal(kiln_tensor_shape(got)[d], kiln_tensor_shape(want)[d]);
  }
  for (int64_t i = 0; i < kiln_tensor_element_count(want); ++i) {
    double g = kiln_tensor_element_as_double(got, i), w = kiln_tensor_element_as_double(want, i);
    if (!(fabs(g - w) <= 1e-5 + 1e-3 * fabs(w))) {
      fail_msg("N=%lld output %d element %lld: %.9g, %.9g in the reference", (long long)n, o,
               (long long)i, g, w);
    }
  }
}

static void set_inputs(kiln_graph_executor_t *vm, kiln_tensor_t **in) {
  for (int i = 0; i < 7; ++i) {
    KILN_ASSERT_OK(kiln_graph_executor_set_input(vm, i, kiln_tensor_dl(in[i])));
  }
}

static void test_runs_at_several_sizes(void **state) {
  (void)state;
  kiln_module_t *reference = parse();
  KILN_ASSERT_OK(kiln_ir_infer_types(reference));
  kiln_compiled_t *compiled = compile();
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  const int64_t sizes[][2] = {{1, 1}, {2, 17}, {1, 64}, {1, 128}, {3, 5}};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
    kiln_tensor_t *in[7];
    make_inputs(sizes[s][0], sizes[s][1], in);
    int count = 0;
    kiln_tensor_t **want = NULL;
    KILN_ASSERT_OK(
        kiln_interp_run(reference, "main", 7, in, kiln_allocator_system(), &count, &want));
    set_inputs(vm, in);
    KILN_ASSERT_OK(kiln_graph_executor_run(vm));
    assert_int_equal(count, 2);
    for (int o = 0; o < count; ++o) {
      kiln_tensor_t *got = NULL;
      KILN_ASSERT_OK(kiln_graph_executor_copy_output(vm, o, kiln_allocator_system(), &got));
      assert_close(got, want[o], sizes[s][1], o);
      kiln_tensor_release(got);
    }
    release_all(count, want);
    kiln_allocator_free(kiln_allocator_system(), want);
    release_all(7, in);
  }
  kiln_graph_executor_destroy(vm);
  kiln_compiled_destroy(compiled);
  kiln_module_destroy(reference);
}

static void test_mismatching_inputs(void **state) {
  (void)state;
  kiln_compiled_t *compiled = compile();
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  kiln_tensor_t *in[7];
  make_inputs(1, 5, in);
  kiln_tensor_release(in[1]);
  in[1] = random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){1, 6}, -1, 1);
  set_inputs(vm, in);
  kiln_status_t status = kiln_graph_executor_run(vm);
  assert_non_null(status);
  assert_non_null(strstr(kiln_status_message(status),
                         "check_inputs: argument 1 has shape (1, 6), expected "
                         "(B, N)"));
  kiln_status_free(status);
  release_all(7, in);
  make_inputs(5, 3, in);
  set_inputs(vm, in);
  status = kiln_graph_executor_run(vm);
  assert_non_null(status);
  assert_non_null(strstr(kiln_status_message(status), "the symbolic dim B is above its upper "
                                                      "bound 4"));
  kiln_status_free(status);
  release_all(7, in);
  kiln_graph_executor_destroy(vm);
  kiln_compiled_destroy(compiled);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_runs_at_several_sizes),
      cmocka_unit_test(test_mismatching_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
