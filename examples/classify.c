/* classify MODEL INPUT.npy: run a model on one input, print the top class.
 * MODEL.onnx is compiled here (libkiln); a compiled model, the folder or the
 * one file (FILE.so) that `kiln compile MODEL.onnx -o ...` writes, is loaded
 * by the runtime alone. */
#include <kiln/compiler.h>
#include <kiln/npy.h>
#include <kiln/runtime.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 3)
    return fprintf(stderr, "usage: classify MODEL.onnx|DIR|FILE.so INPUT.npy\n"), 2;
  kiln_allocator_t allocator = kiln_allocator_system();
  kiln_compiler_options_t options = kiln_compiler_options_default();
  kiln_compiled_t *compiled = NULL;
  kiln_graph_executor_t *executor = NULL;
  kiln_tensor_t *input = NULL;
  const DLTensor *output = NULL;
  size_t length = strlen(argv[1]);
  kiln_status_t status = KILN_OK;
  if (length > 5 && strcmp(argv[1] + length - 5, ".onnx") == 0) {
    status = kiln_compile(allocator, argv[1], &options, &compiled);
    if (!status)
      status = kiln_compiled_create_executor(compiled, &executor);
  } else {
    status = kiln_graph_executor_load(allocator, argv[1], &executor);
  }
  if (!status)
    status = kiln_npy_read_file(allocator, argv[2], &input);
  if (!status)
    status = kiln_graph_executor_set_input(executor, 0, kiln_tensor_dl(input));
  if (!status)
    status = kiln_graph_executor_run(executor);
  if (!status)
    status = kiln_graph_executor_get_output(executor, 0, &output);
  if (status)
    return fprintf(stderr, "classify: %s\n", kiln_status_message(status)), 1;
  const float *scores = output->data;
  int best = 0;
  for (int i = 1; i < output->shape[output->ndim - 1]; ++i)
    best = scores[i] > scores[best] ? i : best;
  printf("class %d (score %.4f)\n", best, scores[best]);
  kiln_tensor_release(input);
  kiln_graph_executor_destroy(executor);
  kiln_compiled_destroy(compiled);
  return 0;
}
