/*
 * The reference interpreter on modules with symbolic dims
 * (interp/shapes.h): an attention block typed with a symbolic batch B and
 * sequence length N runs at several sizes and matches, bit for bit, the
 * same block typed statically at each size; inputs are fitted to
 * symbolic parameters (one size per variable, upper bounds); a call whose
 * concrete type disagrees with its inferred type is reported.
 */
#include <stdio.h>
#include <string.h>

#include "interp/interp.h"
#include "ir/text.h"
#include "kiln_test.h"

/* An attention block; %s are the batch and sequence dims (names or sizes). */
static const char block[] =
    "def @main(%%x: Tensor[(%s, %s, 16), float32], %%mask: Tensor[(%s, %s), float32],\n"
    "          %%g: Tensor[(16), float32], %%e: Tensor[(16), float32],\n"
    "          %%wq: Tensor[(16, 16), float32], %%wk: Tensor[(16, 16), float32],\n"
    "          %%wv: Tensor[(16, 16), float32]) {\n"
    "  %%0 = nn.layer_norm(%%x, %%g, %%e, axis=-1);\n"
    "  %%1 = nn.dense(%%0, %%wq, units=16);\n"
    "  %%2 = reshape(%%1, newshape=[0, 0, 2, 8]);\n"
    "  %%3 = transpose(%%2, axes=[0, 2, 1, 3]);\n"
    "  %%4 = transpose(%%3, axes=[0, 2, 1, 3]);\n"
    "  %%5 = reshape(%%4, newshape=[0, 0, 16]);\n"
    "  %%6 = nn.dense(%%0, %%wk, units=16);\n"
    "  %%7 = nn.batch_matmul(%%5, %%6);\n"
    "  %%8 = expand_dims(%%mask, axis=1);\n"
    "  %%9 = add(%%7, %%8);\n"
    "  %%10 = nn.softmax(%%9);\n"
    "  %%11 = nn.dense(%%0, %%wv, units=16);\n"
    "  %%12 = nn.batch_matmul(%%10, %%11, transpose_b=False);\n"
    "  %%13 = add(%%12, %%x);\n"
    "  %%14 = mean(%%13, axis=[2], keepdims=True);\n"
    "  %%15 = subtract(%%13, %%14);\n"
    "  %%16 = erf(%%15);\n"
    "  %%17 = concatenate(%%16, %%x, axis=2);\n"
    "  %%18 = strided_slice(%%17, begin=[4], end=[20], axes=[2]);\n"
    "  %%19 = sum(%%18, axis=[1]);\n"
    "  (%%18, %%19)\n"
    "}\n";

static kiln_module_t *parse_block(const char *b, const char *n) {
  char text[sizeof(block) + 64];
  snprintf(text, sizeof(text), block, b, n, b, n);
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("block", text, kiln_allocator_system(), &module));
  return module;
}

static kiln_tensor_t *filled(int seed, int ndim, const int64_t *shape) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, ndim, shape, &t));
  float *data = kiln_tensor_data(t);
  for (int64_t i = 0; i < kiln_tensor_element_count(t); ++i) {
    data[i] = (float)((37 * i + 11 * seed) % 23 - 11) / 8.0f;
  }
  return t;
}

typedef struct block_inputs_t {
  kiln_tensor_t *tensors[7];
} block_inputs_t;

static void make_inputs(int64_t b, int64_t n, block_inputs_t *in) {
  in->tensors[0] = filled(1, 3, (const int64_t[]){b, n, 16});
  in->tensors[1] = filled(2, 2, (const int64_t[]){b, n});
  in->tensors[2] = filled(3, 1, (const int64_t[]){16});
  in->tensors[3] = filled(4, 1, (const int64_t[]){16});
  for (int k = 0; k < 3; ++k) {
    in->tensors[4 + k] = filled(5 + k, 2, (const int64_t[]){16, 16});
  }
}

static void free_tensors(int count, kiln_tensor_t **tensors) {
  for (int i = 0; i < count; ++i) {
    kiln_tensor_release(tensors[i]);
  }
}

static void assert_same(const kiln_tensor_t *a, const kiln_tensor_t *b) {
  assert_int_equal(kiln_tensor_ndim(a), kiln_tensor_ndim(b));
  assert_true(kiln_shape_equal(kiln_tensor_ndim(a), kiln_tensor_shape(a), kiln_tensor_ndim(b),
                               kiln_tensor_shape(b)));
  size_t bytes = (size_t)kiln_tensor_element_count(a) * sizeof(float);
  assert_memory_equal(kiln_tensor_data(a), kiln_tensor_data(b), bytes);
}

static void test_runs_at_several_sizes(void **state) {
  (void)state;
  kiln_module_t *symbolic = parse_block("B", "N");
  const int64_t sizes[][2] = {{1, 1}, {2, 17}, {1, 64}, {3, 5}};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
    char b[24], n[24];
    snprintf(b, sizeof(b), "%lld", (long long)sizes[s][0]);
    snprintf(n, sizeof(n), "%lld", (long long)sizes[s][1]);
    kiln_module_t *fixed = parse_block(b, n);
    block_inputs_t in;
    make_inputs(sizes[s][0], sizes[s][1], &in);
    int count_a = 0, count_b = 0;
    kiln_tensor_t **out_a = NULL, **out_b = NULL;
    KILN_ASSERT_OK(kiln_interp_run(symbolic, "main", 7, in.tensors, kiln_allocator_system(),
                                   &count_a, &out_a));
    KILN_ASSERT_OK(
        kiln_interp_run(fixed, "main", 7, in.tensors, kiln_allocator_system(), &count_b, &out_b));
    assert_int_equal(count_a, 2);
    assert_int_equal(count_b, 2);
    assert_int_equal(kiln_tensor_shape(out_a[0])[1], sizes[s][1]);
    assert_int_equal(kiln_tensor_shape(out_a[0])[2], 16);
    for (int i = 0; i < 2; ++i) {
      assert_same(out_a[i], out_b[i]);
    }
    free_tensors(2, out_a);
    free_tensors(2, out_b);
    kiln_allocator_free(kiln_allocator_system(), out_a);
    kiln_allocator_free(kiln_allocator_system(), out_b);
    free_tensors(7, in.tensors);
    kiln_module_destroy(fixed);
  }
  kiln_module_destroy(symbolic);
}

static kiln_status_t run_parsed(const char *text, int count, kiln_tensor_t **inputs) {
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("t", text, kiln_allocator_system(), &module));
  int num = 0;
  kiln_tensor_t **outputs = NULL;
  kiln_status_t status =
      kiln_interp_run(module, "main", count, inputs, kiln_allocator_system(), &num, &outputs);
  free_tensors(num, outputs);
  kiln_allocator_free(kiln_allocator_system(), outputs);
  kiln_module_destroy(module);
  return status;
}

static void test_inputs_fit_their_parameters(void **state) {
  (void)state;
  kiln_tensor_t *inputs[2] = {filled(1, 2, (const int64_t[]){3, 4}),
                              filled(2, 2, (const int64_t[]){5, 4})};
  KILN_ASSERT_STATUS(
      run_parsed("def @main(%x: Tensor[(n, 4), float32], %y: Tensor[(n, 4), float32]) { "
                 "add(%x, %y) }",
                 2, inputs),
      INVALID_ARGUMENT,
      "in @main, input 1 (%y) is Tensor[(5, 4), float32] but the parameter is Tensor[(n, 4), "
      "float32]");
  KILN_ASSERT_OK(run_parsed("def @main(%x: Tensor[(n, 4), float32], %y: Tensor[(m, 4), "
                            "float32]) { concatenate(%x, %y) }",
                            2, inputs));
  KILN_ASSERT_STATUS(
      run_parsed("def @main(%x: Tensor[(n<=2, 4), float32]) { nn.relu(%x) }", 1, inputs),
      INVALID_ARGUMENT,
      "input 0 (%x) is Tensor[(3, 4), float32] but the parameter is "
      "Tensor[(n<=2, 4), float32]");
  KILN_ASSERT_STATUS(
      run_parsed("def @main(%x: Tensor[(n, 5), float32]) { nn.relu(%x) }", 1, inputs),
      INVALID_ARGUMENT, "is Tensor[(3, 4), float32] but the parameter is");
  /* A slice [0:10] of a symbolic axis types as 10; at n = 3 it is 3. */
  KILN_ASSERT_STATUS(
      run_parsed("def @main(%x: Tensor[(n, 4), float32]) { strided_slice(%x, begin=[0], "
                 "end=[10], axes=[0]) }",
                 1, inputs),
      INVALID_ARGUMENT,
      "in @main, %0 = strided_slice: strided_slice: the inputs give the output Tensor[(3, 4), "
      "float32] but it was typed Tensor[(10, 4), float32]");
  free_tensors(2, inputs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_runs_at_several_sizes),
      cmocka_unit_test(test_inputs_fit_their_parameters),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
