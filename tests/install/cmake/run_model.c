/* Runs a model compiled by `kiln compile MODEL -o DIR` (or -o FILE.so) on one input and
 * compares its output with an expected one: what a program that deploys a
 * model writes, built with CMake's find_package(kiln) (CMakeLists.txt beside
 * it). It feeds the input by name and copies the output out.
 * usage: run_model DIR|FILE.so INPUT.npy EXPECTED.npy */
#include <kiln/npy.h>
#include <kiln/runtime.h>
#include <kiln/version.h>
#include <math.h>
#include <stdio.h>

#define CHECK(call)                                                     \
  do {                                                                  \
    kiln_status_t status_ = (call);                                     \
    if (status_) {                                                      \
      fprintf(stderr, "run_model: %s\n", kiln_status_message(status_)); \
      kiln_status_free(status_);                                        \
      return 1;                                                         \
    }                                                                   \
  } while (0)

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: run_model DIR|FILE.so INPUT.npy EXPECTED.npy\n");
    return 2;
  }
  kiln_allocator_t allocator = kiln_allocator_system();
  kiln_graph_executor_t *executor = NULL;
  kiln_tensor_t *input = NULL, *expected = NULL, *output = NULL;
  kiln_graph_executor_tensor_info_t info;
  CHECK(kiln_graph_executor_load(allocator, argv[1], &executor));
  CHECK(kiln_graph_executor_input_info(executor, 0, &info));
  CHECK(kiln_npy_read_file(allocator, argv[2], &input));
  CHECK(kiln_npy_read_file(allocator, argv[3], &expected));
  CHECK(kiln_graph_executor_set_input_by_name(executor, info.name, kiln_tensor_dl(input)));
  CHECK(kiln_graph_executor_run(executor));
  CHECK(kiln_graph_executor_copy_output(executor, 0, allocator, &output));

  int64_t count = kiln_tensor_element_count(output), bad = 0;
  if (kiln_tensor_dtype(output) != KILN_DTYPE_FLOAT32 ||
      kiln_tensor_dtype(expected) != KILN_DTYPE_FLOAT32 ||
      count != kiln_tensor_element_count(expected)) {
    fprintf(stderr, "run_model: the output is not float32 like %s, or not as long\n", argv[3]);
    return 1;
  }
  const float *got = kiln_tensor_data(output), *want = kiln_tensor_data(expected);
  for (int64_t i = 0; i < count; i++)
    if (!(fabsf(got[i] - want[i]) <= 1e-4f + 1e-3f * fabsf(want[i])))
      bad++;
  printf("kiln %s (headers %s), input %s: %lld of %lld outputs differ (rtol 1e-3, atol 1e-4)\n",
         kiln_version_string(), KILN_VERSION_STRING, info.name, (long long)bad, (long long)count);
  kiln_tensor_release(output);
  kiln_tensor_release(input);
  kiln_tensor_release(expected);
  kiln_graph_executor_destroy(executor);
  return bad ? 1 : 0;
}
