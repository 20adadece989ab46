/* Runs a model compiled by `kiln compile MODEL -o DIR` (or -o FILE.so) on one input and
 * compares its output with an expected one: what a program that deploys a
 * model writes, built with pkg-config (the Makefile beside it).
 * usage: run_model DIR|FILE.so INPUT.npy EXPECTED.npy */
#include <kiln/npy.h>
#include <kiln/runtime.h>
#include <math.h>
#include <stdio.h>

static int fail(kiln_status_t status) {
  fprintf(stderr, "run_model: %s\n", kiln_status_message(status));
  kiln_status_free(status);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: run_model DIR|FILE.so INPUT.npy EXPECTED.npy\n");
    return 2;
  }
  kiln_allocator_t allocator = kiln_allocator_system();
  kiln_graph_executor_t *executor = NULL;
  kiln_tensor_t *input = NULL, *expected = NULL;
  const DLTensor *output = NULL;
  kiln_status_t status = kiln_graph_executor_load(allocator, argv[1], &executor);
  if (!status)
    status = kiln_npy_read_file(allocator, argv[2], &input);
  if (!status)
    status = kiln_npy_read_file(allocator, argv[3], &expected);
  if (!status)
    status = kiln_graph_executor_set_input(executor, 0, kiln_tensor_dl(input));
  if (!status)
    status = kiln_graph_executor_run(executor);
  if (!status)
    status = kiln_graph_executor_get_output(executor, 0, &output);
  if (status)
    return fail(status);

  int64_t count = 1, bad = 0;
  for (int i = 0; i < output->ndim; i++)
    count *= output->shape[i];
  if (output->dtype.code != kDLFloat || output->dtype.bits != 32 ||
      kiln_tensor_dtype(expected) != KILN_DTYPE_FLOAT32 ||
      count != kiln_tensor_element_count(expected)) {
    fprintf(stderr, "run_model: the output is not float32 like %s, or not as long\n", argv[3]);
    return 1;
  }
  const float *got = output->data, *want = kiln_tensor_data(expected);
  for (int64_t i = 0; i < count; i++)
    if (!(fabsf(got[i] - want[i]) <= 1e-4f + 1e-3f * fabsf(want[i])))
      bad++;
  printf("%s: %lld of %lld outputs differ (rtol 1e-3, atol 1e-4)\n", argv[1], (long long)bad,
         (long long)count);
  kiln_tensor_release(input);
  kiln_tensor_release(expected);
  kiln_graph_executor_destroy(executor);
  return bad ? 1 : 0;
}
