/*
 * The runtime without the compiler: this program links kiln_runtime (and
 * kiln_base) alone (tests/CMakeLists.txt), so building it proves that the
 * graph executor, the VM, the params file and the module loader need no
 * symbol of the graph IR, the operators, the loop IR or the code
 * generators; a deployed model links just these. It then runs a small graph
 * over a kernel written here, and the same model as a VM program (vm.json,
 * docs/vm.md): params through a file, an input, a run, the profile and the
 * debug dump. No cmocka either: it prints what failed and exits 1.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kiln/runtime.h"

/* y = x * 2 + p over float32 vectors. */
static int axpy(const kiln_value_t *args, const int *type_codes, int num_args, kiln_value_t *ret,
                int *ret_tcode, void *resource) {
  (void)type_codes;
  (void)ret;
  (void)ret_tcode;
  (void)resource;
  if (num_args != 3) {
    kiln_backend_set_last_error("axpy: expected 3 arguments");
    return -1;
  }
  const DLTensor *x = args[0].v_handle, *p = args[1].v_handle, *y = args[2].v_handle;
  for (int64_t i = 0; i < x->shape[0]; ++i) {
    ((float *)y->data)[i] = ((const float *)x->data)[i] * 2 + ((const float *)p->data)[i];
  }
  return 0;
}

static const char graph[] =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    " {\"op\": \"null\", \"name\": \"p\", \"inputs\": []},"
    " {\"op\": \"tvm_op\", \"name\": \"axpy\", \"attrs\": {\"func_name\": \"axpy\","
    " \"num_inputs\": \"2\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"},"
    " \"inputs\": [[0, 0, 0], [1, 0, 0]]}],"
    " \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 3], \"heads\": [[2, 0, 0]],"
    " \"attrs\": {\"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\"]],"
    " \"storage_id\": [\"list_int\", [0, 1, 2]],"
    " \"shape\": [\"list_shape\", [[3], [3], [3]]],"
    " \"kiln_flops\": [\"list_int\", [0, 0, 6]]}}";

/* The same model for the VM: p a constant, x main's param. */
static const char vm_program[] =
    "{\"format\": \"kiln-vm\", \"version\": 1, \"kernels\": [\"axpy\"],"
    " \"constants\": [{\"name\": \"p\", \"dtype\": \"float32\", \"shape\": [3]}],"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [3]}],"
    " \"outputs\": [{\"name\": \"axpy\", \"dtype\": \"float32\", \"shape\": [3]}],"
    " \"functions\": [{\"name\": \"main\", \"params\": 1, \"registers\": 4, \"code\": ["
    " [\"load_const\", 1, 0], [\"alloc_storage\", 2, 12],"
    " [\"alloc_tensor\", 3, 2, 0, \"float32\", [3]],"
    " [\"invoke_packed\", 0, [0, 1], [3], 6], [\"ret\", [3]]]}]}";

static int check(kiln_status_t status, const char *what) {
  if (status) {
    fprintf(stderr, "%s: %s\n", what, kiln_status_message(status));
    kiln_status_free(status);
    return 0;
  }
  return 1;
}

/* Runs `program` (graph.json's or vm.json's text); its debug run must write
 * `dump` (the kernel's output) in `dir`. */
static int run(const char *dir, const char *program, const char *dump) {
  kiln_allocator_t system = kiln_allocator_system();
  const int64_t shape[] = {3};
  const float x[] = {1, 2, 3}, p[] = {10, 20, 30}, want[] = {12, 24, 36};
  kiln_tensor_t *tx = NULL, *tp = NULL, *out = NULL;
  kiln_runtime_module_t *module = NULL;
  kiln_runtime_params_t *params = NULL;
  kiln_graph_executor_t *gx = NULL;
  kiln_graph_profile_t *profile = NULL;
  const kiln_runtime_module_entry_t entries[] = {{"axpy", axpy}};
  char path[600];
  snprintf(path, sizeof(path), "%s/params.bin", dir);
  const char *names[] = {"p"};
  int ok = check(kiln_tensor_create_copy(system, KILN_DTYPE_FLOAT32, 1, shape, x, sizeof(x), &tx),
                 "x") &&
           check(kiln_tensor_create_copy(system, KILN_DTYPE_FLOAT32, 1, shape, p, sizeof(p), &tp),
                 "p") &&
           check(kiln_runtime_params_save(path, 1, names, &tp), "save") &&
           check(kiln_runtime_params_load(system, path, &params), "load") &&
           check(kiln_runtime_module_create_in_memory(system, "kernels", 1, entries, NULL, NULL,
                                                      &module),
                 "module") &&
           check(kiln_graph_executor_create(system, program, "program", module, params, &gx),
                 "create") &&
           check(kiln_graph_executor_set_input_by_name(gx, "x", kiln_tensor_dl(tx)), "input") &&
           check(kiln_graph_executor_profile(gx, 3, &profile), "profile") &&
           check(kiln_graph_executor_run_debug(gx, dir), "debug") &&
           check(kiln_graph_executor_copy_output(gx, 0, system, &out), "output");
  if (ok && (profile->num_nodes != 1 || memcmp(kiln_tensor_data(out), want, sizeof(want)) != 0)) {
    fprintf(stderr, "wrong result\n");
    ok = 0;
  }
  snprintf(path, sizeof(path), "%s/%s", dir, dump);
  if (ok && access(path, F_OK) != 0) {
    fprintf(stderr, "no %s\n", path);
    ok = 0;
  }
  kiln_graph_profile_destroy(profile);
  kiln_graph_executor_destroy(gx);
  kiln_runtime_module_release(module);
  kiln_runtime_params_destroy(params);
  kiln_tensor_release(tx);
  kiln_tensor_release(tp);
  kiln_tensor_release(out);
  return ok;
}

int main(void) {
  const char *base = getenv("TMPDIR");
  char dir[512];
  snprintf(dir, sizeof(dir), "%s/kiln-standalone-XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  int ok = run(dir, graph, "2_axpy.npy") && run(dir, vm_program, "3_axpy.npy");
  const char *files[] = {"params.bin", "0_x.npy",      "1_p.npy",
                         "2_axpy.npy", "input0_x.npy", "3_axpy.npy"};
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); ++i) {
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
    unlink(path);
  }
  rmdir(dir);
  printf("%s\n", ok ? "standalone runtime: ok" : "standalone runtime: FAILED");
  return ok ? 0 : 1;
}
