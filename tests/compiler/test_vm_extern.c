/*
 * Operators whose output shapes depend on their data's values, compiled
 * for the VM (compiler/graph_codegen.c, vm_symbolic.c, runtime/
 * extern_kernel.c): nonzero, unique and vision.non_max_suppression become
 * call_extern instructions (no kernel of the library), and the kernels
 * after them (a take of nonzero's positions, as ONNX Compress imports, an
 * exp) run over the extents the runtime's kernels found. One executor
 * matches the reference interpreter at several inputs, empty results
 * among them (nonzero of zeros, no box over the score threshold). stft
 * and mel_weight_matrix, whose shapes depend on scalar inputs' values, are
 * extern kernels too: several frame steps and lengths, mel bins and DFT
 * lengths, and values the kernels reject fail the run with their message.
 * dyn.resize (ONNX Resize with run-time scales, sizes or roi) is one too:
 * every mode, nearest rounding and coordinate transformation, at several
 * scales and sizes, integer data among them, and bad scales or sizes fail
 * the run naming the dim.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compiler/build.h"
#include "interp/interp.h"
#include "ir/infer.h"
#include "kiln/compiler.h"
#include "kiln_compute_test.h"
#include "kiln_ir_test.h"
#include "kiln_test.h"

/* nonzero of x; Compress of x's columns where c holds, then a kernel over
 * the result; unique flattened in order of first occurrence, and of x's
 * columns sorted. */
static const char values[] = "def @main(%x: Tensor[(3, 4), float32], %c: Tensor[(4), float32]) {\n"
                             "  %0 = nonzero(%x);\n"
                             "  %1 = nonzero(%c);\n"
                             "  %2 = squeeze(%1, axis=[0]);\n"
                             "  %3 = take(%x, %2, axis=1);\n"
                             "  %4 = exp(%3);\n"
                             "  %5 = unique(%x, sorted=False);\n"
                             "  %6 = unique(%x, by_axis=True, axis=-1);\n"
                             "  (%0, %4, %5.0, %5.1, %5.2, %5.3, %6.0, %6.1, %6.2, %6.3)\n"
                             "}\n";

/* The boxes and scores, then max_output_boxes_per_class, iou_threshold and
 * score_threshold. */
static const char nms[] =
    "def @main(%b: Tensor[(2, 5, 4), float32], %s: Tensor[(2, 3, 5), float32],\n"
    "          %m: Tensor[(1), int64], %i: Tensor[(1), float32], %t: Tensor[(1), float32]) {\n"
    "  vision.non_max_suppression(%b, %s, %m, %i, %t)\n"
    "}\n";

/* stft of a windowed real signal, onesided, then a kernel over its "?"
 * dims; mel_weight_matrix. */
static const char spectral[] =
    "def @main(%x: Tensor[(2, 16, 1), float32], %step: Tensor[(1), int64],\n"
    "          %length: Tensor[(1), int64], %w: Tensor[(6), float32],\n"
    "          %bins: Tensor[(1), int64], %dft: Tensor[(1), int64], %rate: Tensor[(1), int64],\n"
    "          %lo: Tensor[(1), float32], %hi: Tensor[(1), float32]) {\n"
    "  %0 = stft(%x, %step, %length, %w, onesided=True);\n"
    "  %1 = multiply(%0, %0);\n"
    "  %2 = mel_weight_matrix(%bins, %dft, %rate, %lo, %hi, dtype=\"float32\");\n"
    "  (%1, %2)\n"
    "}\n";

/* dyn.resize by run-time scales: nearest with each rounding, linear,
 * cubic (with exclude_outside and another coefficient), each coordinate
 * transformation, tf_crop_and_resize extrapolating. */
static const char resize_scales[] =
    "def @main(%x: Tensor[(1, 2, 4, 5), float32], %roi: Tensor[(8), float32],\n"
    "          %s: Tensor[(4), float32], %none: Tensor[(0), int64]) {\n"
    "  %0 = dyn.resize(%x, %roi, %s, %none);\n"
    "  %1 = dyn.resize(%x, %roi, %s, %none, nearest_mode=\"round_prefer_ceil\",\n"
    "                  coordinate_transformation_mode=\"asymmetric\");\n"
    "  %2 = dyn.resize(%x, %roi, %s, %none, nearest_mode=\"floor\",\n"
    "                  coordinate_transformation_mode=\"align_corners\");\n"
    "  %3 = dyn.resize(%x, %roi, %s, %none, nearest_mode=\"ceil\",\n"
    "                  coordinate_transformation_mode=\"tf_half_pixel_for_nn\");\n"
    "  %4 = dyn.resize(%x, %roi, %s, %none, mode=\"linear\",\n"
    "                  coordinate_transformation_mode=\"pytorch_half_pixel\");\n"
    "  %5 = dyn.resize(%x, %roi, %s, %none, mode=\"cubic\");\n"
    "  %6 = dyn.resize(%x, %roi, %s, %none, mode=\"cubic\", cubic_coeff_a=-0.5,\n"
    "                  exclude_outside=True, coordinate_transformation_mode=\"align_corners\");\n"
    "  %7 = dyn.resize(%x, %roi, %s, %none, mode=\"linear\",\n"
    "                  coordinate_transformation_mode=\"tf_crop_and_resize\",\n"
    "                  extrapolation_value=10.0);\n"
    "  (%0, %1, %2, %3, %4, %5, %6, %7)\n"
    "}\n";

/* dyn.resize by run-time sizes, of float and of int32 data (one empty
 * input for roi and scales both, as CSE leaves ONNX's), and a kernel over
 * the "?" dims of one. */
static const char resize_sizes[] =
    "def @main(%x: Tensor[(1, 2, 4, 5), float32], %n: Tensor[(4), int64],\n"
    "          %xi: Tensor[(3, 4), int32], %m: Tensor[(2), int64],\n"
    "          %empty: Tensor[(0), float32], %y: Tensor[(3, 4), float32]) {\n"
    "  %0 = dyn.resize(%x, %empty, %empty, %n, mode=\"cubic\");\n"
    "  %1 = dyn.resize(%x, %empty, %empty, %n, mode=\"linear\",\n"
    "                  coordinate_transformation_mode=\"align_corners\");\n"
    "  %2 = dyn.resize(%x, %empty, %empty, %n, nearest_mode=\"ceil\");\n"
    "  %3 = dyn.resize(%xi, %empty, %empty, %m, mode=\"linear\");\n"
    "  %4 = dyn.resize(%y, %empty, %empty, %m, mode=\"cubic\");\n"
    "  %5 = multiply(%4, %4);\n"
    "  (%0, %1, %2, %3, %5)\n"
    "}\n";

static void release_all(int n, kiln_tensor_t **tensors) {
  for (int i = 0; i < n; ++i) {
    kiln_tensor_release(tensors[i]);
  }
}

/* Runs `in` on the interpreter and the VM; the outputs agree. Returns the
 * first output's element count. */
static int64_t run_case(kiln_module_t *reference, kiln_graph_executor_t *vm, int num_inputs,
                        kiln_tensor_t **in, int c) {
  char what[32];
  snprintf(what, sizeof(what), "case %d", c);
  irt_run_against_interp(reference, vm, num_inputs, in, what);
  kiln_tensor_t *first = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_copy_output(vm, 0, kiln_allocator_system(), &first));
  int64_t count = kiln_tensor_element_count(first);
  kiln_tensor_release(first);
  return count;
}

/* vm_pair_open, and the program calls the runtime's extern kernels. */
static vm_pair_t pair_open(const char *name, const char *text) {
  vm_pair_t pair = vm_pair_open(name, text);
  assert_non_null(strstr(pair.compiled->vm_json, "\"call_extern\""));
  return pair;
}

/* Small integers as floats: zeros and repeats are common; `zeros` of the
 * cases are all zeros. */
static kiln_tensor_t *small_ints(int ndim, const int64_t *shape, int levels, bool zeros) {
  kiln_tensor_t *t = random_tensor(KILN_DTYPE_FLOAT32, ndim, shape, 0, levels);
  float *data = kiln_tensor_data(t);
  for (int64_t i = 0; i < kiln_tensor_element_count(t); ++i) {
    data[i] = zeros ? 0.0f : floorf(data[i]);
  }
  return t;
}

static void test_nonzero_compress_unique(void **state) {
  (void)state;
  vm_pair_t pair = pair_open("values", values);
  kiln_module_t *reference = pair.reference;
  kiln_graph_executor_t *vm = pair.vm;
  assert_null(strstr(pair.compiled->vm_json, "fused_nonzero")); /* the runtime's kernel, no other */
  /* case 0: x and c all zeros (nothing selected); then random levels */
  const int levels[] = {2, 2, 3, 2, 5, 2};
  int64_t counts[6];
  for (int c = 0; c < 6; ++c) {
    kiln_tensor_t *in[2] = {small_ints(2, (const int64_t[]){3, 4}, levels[c], c == 0),
                            small_ints(1, (const int64_t[]){4}, levels[c], c == 0)};
    counts[c] = run_case(reference, vm, 2, in, c);
    release_all(2, in);
  }
  assert_int_equal(counts[0], 0); /* nonzero of zeros: a (2, 0) output */
  for (int c = 1; c < 6; ++c) {
    assert_true(counts[c] > 0);
  }
  vm_pair_close(&pair);
}

/* A (1,) tensor holding `value`. */
static kiln_tensor_t *one(kiln_dtype_t dtype, const void *value) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), dtype, 1, (const int64_t[]){1},
                                         value, kiln_dtype_size(dtype), &t));
  return t;
}

/* Random boxes (corners in [0, 4)) and scores (in [0, 1)), and the limits. */
static void nms_inputs(int64_t max_output, double iou, double score, kiln_tensor_t **in) {
  in[0] = random_tensor(KILN_DTYPE_FLOAT32, 3, (const int64_t[]){2, 5, 4}, 0, 4);
  in[1] = random_tensor(KILN_DTYPE_FLOAT32, 3, (const int64_t[]){2, 3, 5}, 0, 1);
  float thresholds[2] = {(float)iou, (float)score};
  in[2] = one(KILN_DTYPE_INT64, &max_output);
  in[3] = one(KILN_DTYPE_FLOAT32, &thresholds[0]);
  in[4] = one(KILN_DTYPE_FLOAT32, &thresholds[1]);
}

static void test_non_max_suppression(void **state) {
  (void)state;
  vm_pair_t pair = pair_open("nms", nms);
  kiln_module_t *reference = pair.reference;
  kiln_graph_executor_t *vm = pair.vm;
  /* max boxes, IoU and score thresholds; the last selects nothing (scores
   * are below 1) */
  const double cases[][3] = {{5, 0.5, 0.0}, {2, 0.3, 0.5}, {5, 0.0, 0.2},
                             {0, 0.5, 0.0}, {3, 1.0, 0.9}, {5, 0.5, 1.0}};
  for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); ++c) {
    kiln_tensor_t *in[5];
    nms_inputs((int64_t)cases[c][0], cases[c][1], cases[c][2], in);
    int64_t rows = run_case(reference, vm, 5, in, c);
    if (c == 3 || c == 5) {
      assert_int_equal(rows, 0); /* no box allowed, or none over the threshold */
    }
    release_all(5, in);
  }
  vm_pair_close(&pair);
}

/* Runs `in` on the VM, which fails with `message`. */
static void run_fails(kiln_graph_executor_t *vm, int num_inputs, kiln_tensor_t **in,
                      const char *message) {
  for (int i = 0; i < num_inputs; ++i) {
    KILN_ASSERT_OK(kiln_graph_executor_set_input(vm, i, kiln_tensor_dl(in[i])));
  }
  KILN_ASSERT_STATUS(kiln_graph_executor_run(vm), INVALID_ARGUMENT, message);
}

static kiln_tensor_t *int_one(int64_t value) {
  return one(KILN_DTYPE_INT64, &value);
}

static kiln_tensor_t *float_one(float value) {
  return one(KILN_DTYPE_FLOAT32, &value);
}

/* stft's step and frame length (0: the window's), mel's bins, DFT length
 * and upper edge. */
static void spectral_inputs(const int64_t *v, kiln_tensor_t **in) {
  in[0] = random_tensor(KILN_DTYPE_FLOAT32, 3, (const int64_t[]){2, 16, 1}, -1, 1);
  in[1] = int_one(v[0]);
  in[2] = int_one(v[1]);
  in[3] = random_tensor(KILN_DTYPE_FLOAT32, 1, (const int64_t[]){6}, 0, 1);
  in[4] = int_one(v[2]);
  in[5] = int_one(v[3]);
  in[6] = int_one(8000);
  in[7] = float_one(100.0f);
  in[8] = float_one((float)v[4]);
}

static void test_stft_mel_weight_matrix(void **state) {
  (void)state;
  vm_pair_t pair = pair_open("spectral", spectral);
  kiln_module_t *reference = pair.reference;
  kiln_graph_executor_t *vm = pair.vm;
  const int64_t cases[][5] = {
      {1, 6, 4, 16, 3000}, {3, 0, 8, 32, 4000}, {10, 6, 2, 8, 1000}, {4, 6, 10, 64, 3900}};
  for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); ++c) {
    kiln_tensor_t *in[9];
    spectral_inputs(cases[c], in);
    run_case(reference, vm, 9, in, c);
    release_all(9, in);
  }
  /* a frame longer than the window; a filter past the last bin */
  const int64_t bad[][5] = {{1, 7, 4, 16, 3000}, {1, 6, 4, 4, 20000}};
  const char *messages[] = {"(call_extern): stft: the window has 6 samples but frame_length is 7",
                            "bins of dft_length 4 (the edges 100 to 20000 hertz at sample rate "
                            "8000)"};
  for (int c = 0; c < 2; ++c) {
    kiln_tensor_t *in[9];
    spectral_inputs(bad[c], in);
    run_fails(vm, 9, in, messages[c]);
    release_all(9, in);
  }
  vm_pair_close(&pair);
}

/* A 1-D tensor of `count` values. */
static kiln_tensor_t *list_of(kiln_dtype_t dtype, int64_t count, const void *data) {
  return tensor_of(dtype, 1, (const int64_t[]){count}, data);
}

/* The scales module's inputs: x, a roi that crops and reaches outside the
 * input, `scales`. */
static void resize_scales_inputs(const float *scales, kiln_tensor_t **in) {
  const float roi[8] = {0, 0, 0.2f, -0.1f, 1, 1, 0.8f, 1.3f};
  in[0] = random_tensor(KILN_DTYPE_FLOAT32, 4, (const int64_t[]){1, 2, 4, 5}, -2, 2);
  in[1] = list_of(KILN_DTYPE_FLOAT32, 8, roi);
  in[2] = list_of(KILN_DTYPE_FLOAT32, 4, scales);
  in[3] = list_of(KILN_DTYPE_INT64, 0, NULL);
}

static void test_resize_scales(void **state) {
  (void)state;
  vm_pair_t pair = pair_open("resize_scales", resize_scales);
  kiln_module_t *reference = pair.reference;
  kiln_graph_executor_t *vm = pair.vm;
  /* up, down, both, one that resizes the channels too, a scale of 1 */
  const float cases[][4] = {
      {1, 1, 2, 2}, {1, 1, 0.6f, 0.8f}, {1, 1, 3, 0.5f}, {1, 2.5f, 1.5f, 1}, {1, 1, 1, 1.7f}};
  for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); ++c) {
    kiln_tensor_t *in[4];
    resize_scales_inputs(cases[c], in);
    run_case(reference, vm, 4, in, c);
    release_all(4, in);
  }
  /* a scale of 0, a negative one, one giving no element */
  const float bad[][4] = {{1, 1, 0, 2}, {1, 1, 2, -1}, {1, 1, 2, 0.1f}};
  const char *messages[] = {"(call_extern): dyn.resize: dim 2 would have 0 elements (from scale 0)",
                            "dyn.resize: dim 3 would have -5 elements (from scale -1)",
                            "dyn.resize: dim 3 would have 0 elements (from scale 0.1)"};
  for (int c = 0; c < 3; ++c) {
    kiln_tensor_t *in[4];
    resize_scales_inputs(bad[c], in);
    run_fails(vm, 4, in, messages[c]);
    release_all(4, in);
  }
  vm_pair_close(&pair);
}

/* The sizes module's inputs: x, `sizes` (4), int data, `sizes` (2) for it
 * and for y. */
static void resize_sizes_inputs(const int64_t *sizes, kiln_tensor_t **in) {
  in[0] = random_tensor(KILN_DTYPE_FLOAT32, 4, (const int64_t[]){1, 2, 4, 5}, -2, 2);
  in[1] = list_of(KILN_DTYPE_INT64, 4, sizes);
  in[2] = random_tensor(KILN_DTYPE_INT32, 2, (const int64_t[]){3, 4}, -50, 50);
  in[3] = list_of(KILN_DTYPE_INT64, 2, sizes + 4);
  in[4] = list_of(KILN_DTYPE_FLOAT32, 0, NULL);
  in[5] = random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){3, 4}, -2, 2);
}

static void test_resize_sizes(void **state) {
  (void)state;
  vm_pair_t pair = pair_open("resize_sizes", resize_sizes);
  kiln_module_t *reference = pair.reference;
  kiln_graph_executor_t *vm = pair.vm;
  const int64_t cases[][6] = {
      {1, 2, 8, 10, 6, 8}, {1, 2, 3, 2, 2, 3}, {2, 1, 1, 7, 3, 4}, {1, 3, 4, 5, 1, 9}};
  for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); ++c) {
    kiln_tensor_t *in[6];
    resize_sizes_inputs(cases[c], in);
    run_case(reference, vm, 6, in, c);
    release_all(6, in);
  }
  kiln_tensor_t *in[6];
  resize_sizes_inputs((const int64_t[]){1, 2, 0, 3, 2, 2}, in);
  run_fails(vm, 6, in, "dyn.resize: dim 2 would have 0 elements (from size 0)");
  release_all(6, in);
  vm_pair_close(&pair);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nonzero_compress_unique),
      cmocka_unit_test(test_non_max_suppression),
      cmocka_unit_test(test_stft_mel_weight_matrix),
      cmocka_unit_test(test_resize_scales),
      cmocka_unit_test(test_resize_sizes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
