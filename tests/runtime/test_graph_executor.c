/*
 * Tests of the graph executor (include/kiln/runtime.h) on real kernels:
 * nn.dense, add and nn.relu lowered (kiln_op_lower, kiln_tir_lower_pipeline)
 * and compiled by the C backend into one library, saved as lib.so beside a
 * hand-written graph.json (dense -> add -> relu, the relu's output reusing
 * the dense output's storage) and a params.bin. The run is checked against
 * the math done here (inputs are multiples of 1/8, so every sum is exact),
 * from a folder and from parts in memory, twice (the reused storage), with
 * zero-copy inputs; the storage plan (shared ids, the largest entry's size,
 * __copy and __nop); the profile and its table; the debug dump (each node's
 * output as made, names made safe, several outputs, a failing node); and
 * every error of create, set_input and run, each naming the file, node and
 * what was expected, a node passing its function another argument count
 * among them (refused at create, from the count the library records, for
 * the C and LLVM backends and the JIT). Allocation-failure sweeps cover create, run, outputs
 * and the profile, and loading from a folder.
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/target.h"
#include "kiln/npy.h"
#include "kiln/runtime.h"
#include "kiln_op_test.h"
#include "op/compute.h"
#include "runtime/graph_executor.h"
#include "tir/transform.h"

enum { N = 3, K = 7, M = 5 };

static kiln_runtime_module_t *compiled; /* fused_dense, fused_add, fused_relu */
static kiln_runtime_module_t *handmade; /* twice_neg, fails */

/* ---- kernels ---- */

static const kiln_tir_prim_func_t *lower(const kiln_op_t *op, const void *attrs, int count,
                                         const kiln_type_t *const *types, const char *name) {
  kiln_schedule_target_t target = kiln_schedule_target_host();
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_op_lower(op, attrs, count, types, &target, &kiln_op_test_arena, name, &func));
  kiln_tir_pipeline_options_t options = kiln_tir_pipeline_options_default();
  KILN_ASSERT_OK(kiln_tir_lower_pipeline(&kiln_op_test_arena, func, &options, &func));
  return func;
}

/* out0 = 2 x, out1 = -x over float32 vectors. */
static int twice_neg(const kiln_value_t *args, const int *type_codes, int num_args,
                     kiln_value_t *ret, int *ret_tcode, void *resource) {
  (void)type_codes;
  (void)ret;
  (void)ret_tcode;
  (void)resource;
  if (num_args != 3) {
    kiln_backend_set_last_error("twice_neg: expected 3 arguments");
    return -1;
  }
  const DLTensor *x = args[0].v_handle, *a = args[1].v_handle, *b = args[2].v_handle;
  for (int64_t i = 0; i < x->shape[0]; ++i) {
    ((float *)a->data)[i] = 2 * ((const float *)x->data)[i];
    ((float *)b->data)[i] = -((const float *)x->data)[i];
  }
  return 0;
}

static int fails(const kiln_value_t *args, const int *type_codes, int num_args, kiln_value_t *ret,
                 int *ret_tcode, void *resource) {
  (void)args;
  (void)type_codes;
  (void)num_args;
  (void)ret;
  (void)ret_tcode;
  (void)resource;
  kiln_backend_set_last_error("fails: the kernel broke");
  return -1;
}

static int group_setup(void **state) {
  setup(state);
  const kiln_op_t *dense = &kiln_op_dense, *add = &kiln_op_add, *relu = &kiln_op_relu;
  const kiln_type_t *dense_types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(N, K)),
                                      ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(M, K))};
  const kiln_type_t *add_types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(N, M)),
                                    ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(M))};
  const kiln_type_t *relu_types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(N, M))};
  const kiln_tir_prim_func_t *funcs[] = {
      lower(dense, ATTRS(dense, "units", "0"), 2, dense_types, "fused_dense"),
      lower(add, NULL, 2, add_types, "fused_add"),
      lower(relu, NULL, 1, relu_types, "fused_relu"),
  };
  KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), "c", funcs, 3, &compiled));
  const kiln_runtime_module_entry_t entries[] = {{"twice_neg", twice_neg}, {"fails", fails}};
  KILN_ASSERT_OK(kiln_runtime_module_create_in_memory(kiln_allocator_system(), "handmade", 2,
                                                      entries, NULL, NULL, &handmade));
  return teardown(state);
}

static int group_teardown(void **state) {
  (void)state;
  kiln_runtime_module_release(compiled);
  kiln_runtime_module_release(handmade);
  return 0;
}

/* ---- graphs ---- */

static json_t *null_node(const char *name) {
  return json_pack("{s:s, s:s, s:[]}", "op", "null", "name", name, "inputs");
}

static json_t *op_node(const char *name, const char *func, int num_outputs, json_t *inputs) {
  char num_inputs[16], outputs[16];
  snprintf(num_inputs, sizeof(num_inputs), "%zu", json_array_size(inputs));
  snprintf(outputs, sizeof(outputs), "%d", num_outputs);
  return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s}, s:o}", "op", "tvm_op", "name", name, "attrs",
                   "func_name", func, "num_inputs", num_inputs, "num_outputs", outputs,
                   "flatten_data", "0", "inputs", inputs);
}

static json_t *ref(int node, int output) {
  return json_pack("[i, i, i]", node, output, 0);
}

/* data, weight -> fused_dense -> (+ bias) fused_add -> fused_relu; entry 5
 * (relu) reuses storage 2 (dense). */
static json_t *base_graph(void) {
  json_t *nodes =
      json_pack("[o, o, o, o, o, o]", null_node("data"), null_node("weight"),
                op_node("fused_dense", "fused_dense", 1, json_pack("[o, o]", ref(0, 0), ref(1, 0))),
                null_node("bias"),
                op_node("fused_add", "fused_add", 1, json_pack("[o, o]", ref(2, 0), ref(3, 0))),
                op_node("fused_relu", "fused_relu", 1, json_pack("[o]", ref(4, 0))));
  json_t *attrs = json_pack(
      "{s:[s, [s, s, s, s, s, s]], s:[s, [i, i, i, i, i, i]], "
      "s:[s, [[i, i], [i, i], [i, i], [i], [i, i], [i, i]]], s:[s, [i, i, i, i, i, i]]}",
      "dltype", "list_str", "float32", "float32", "float32", "float32", "float32", "float32",
      "storage_id", "list_int", 0, 1, 2, 3, 4, 2, "shape", "list_shape", N, K, M, K, N, M, M, N, M,
      N, M, "kiln_flops", "list_int", 0, 0, 2 * N * M * K, 0, N * M, 0);
  json_t *graph = json_pack("{s:o, s:[i, i, i], s:[i, i, i, i, i, i, i], s:[o], s:o}", "nodes",
                            nodes, "arg_nodes", 0, 1, 3, "node_row_ptr", 0, 1, 2, 3, 4, 5, 6,
                            "heads", ref(5, 0), "attrs", attrs);
  assert_non_null(graph);
  return graph;
}

/* Creates an executor over `graph` (released here) as "graph.json". */
static kiln_status_t create_from(json_t *graph, kiln_runtime_module_t *module,
                                 const kiln_runtime_params_t *params, kiln_graph_executor_t **out) {
  char *text = json_dumps(graph, JSON_COMPACT);
  assert_non_null(text);
  json_decref(graph);
  kiln_status_t status =
      kiln_graph_executor_create(kiln_allocator_system(), text, "graph.json", module, params, out);
  free(text);
  return status;
}

/* ---- the model's values ---- */

typedef struct model_t {
  kiln_tensor_t *data, *weight, *bias;
  kiln_runtime_params_t *params;
} model_t;

static const char *const param_names[] = {"weight", "bias"};

static void model_make(model_t *m) {
  m->data = f32_filled(3, 2, SHAPE(N, K));
  m->weight = f32_filled(1, 2, SHAPE(M, K));
  m->bias = f32_filled(2, 1, SHAPE(M));
  kiln_tensor_t *tensors[] = {m->weight, m->bias};
  KILN_ASSERT_OK(
      kiln_runtime_params_create(kiln_allocator_system(), 2, param_names, tensors, &m->params));
}

static void model_free(model_t *m) {
  kiln_runtime_params_destroy(m->params);
  kiln_tensor_release(m->data);
  kiln_tensor_release(m->weight);
  kiln_tensor_release(m->bias);
}

/* data @ weight^T (+ bias, relu'd when `full`). */
static void expected(const model_t *m, const float *data, int full, float *out) {
  const float *w = kiln_tensor_data(m->weight), *b = kiln_tensor_data(m->bias);
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < M; ++j) {
      float sum = 0;
      for (int k = 0; k < K; ++k) {
        sum += data[i * K + k] * w[j * K + k];
      }
      out[i * M + j] = full ? fmaxf(sum + b[j], 0.0f) : sum;
    }
  }
}

static void assert_floats(const float *got, const float *want, int count) {
  for (int i = 0; i < count; ++i) {
    if (got[i] != want[i]) {
      fail_msg("element %d is %.9g, expected %.9g", i, (double)got[i], (double)want[i]);
    }
  }
}

static void assert_output(const kiln_graph_executor_t *gx, const model_t *m, const float *data) {
  float want[N * M];
  expected(m, data, 1, want);
  const DLTensor *view = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_get_output(gx, 0, &view));
  assert_int_equal(view->ndim, 2);
  assert_int_equal(view->shape[0], N);
  assert_int_equal(view->shape[1], M);
  assert_floats(view->data, want, N * M);
  kiln_tensor_t *copy = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_copy_output(gx, 0, kiln_allocator_system(), &copy));
  assert_true(kiln_tensor_data(copy) != view->data);
  assert_floats(kiln_tensor_data(copy), want, N * M);
  kiln_tensor_release(copy);
}

/* Writes graph.json, lib.so and params.bin into a fresh folder. */
static char *write_artifacts(json_t *graph) {
  char *dir = kiln_test_make_temp_dir();
  char *path = kiln_test_path_join(dir, "graph.json");
  assert_int_equal(json_dump_file(graph, path, JSON_INDENT(1)), 0);
  json_decref(graph);
  free(path);
  path = kiln_test_path_join(dir, "lib.so");
  KILN_ASSERT_OK(kiln_runtime_module_save(compiled, path));
  free(path);
  model_t m;
  model_make(&m);
  path = kiln_test_path_join(dir, "params.bin");
  kiln_tensor_t *tensors[] = {m.weight, m.bias};
  KILN_ASSERT_OK(kiln_runtime_params_save(path, 2, param_names, tensors));
  free(path);
  model_free(&m);
  return dir;
}

/* ---- tests ---- */

static void test_run_from_folder(void **state) {
  (void)state;
  char *dir = write_artifacts(base_graph());
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_load(kiln_allocator_system(), dir, &gx));
  assert_int_equal(kiln_graph_executor_num_inputs(gx), 1);
  assert_int_equal(kiln_graph_executor_num_outputs(gx), 1);
  kiln_graph_executor_tensor_info_t info;
  KILN_ASSERT_OK(kiln_graph_executor_input_info(gx, 0, &info));
  assert_string_equal(info.name, "data");
  assert_int_equal(info.dtype, KILN_DTYPE_FLOAT32);
  assert_true(kiln_shape_equal(info.ndim, info.shape, 2, SHAPE(N, K)));
  KILN_ASSERT_OK(kiln_graph_executor_output_info(gx, 0, &info));
  assert_string_equal(info.name, "fused_relu");
  assert_true(kiln_shape_equal(info.ndim, info.shape, 2, SHAPE(N, M)));
  int index = -1;
  KILN_ASSERT_OK(kiln_graph_executor_input_index(gx, "data", &index));
  assert_int_equal(index, 0);
  KILN_ASSERT_STATUS(kiln_graph_executor_run(gx), FAILED_PRECONDITION,
                     "graph.json: input 'data' (node 0) was never set");
  assert_non_null(strstr(kiln_runtime_module_path(gx->module), "/lib.so"));

  model_t m;
  model_make(&m);
  KILN_ASSERT_OK(kiln_graph_executor_set_input_by_name(gx, "data", kiln_tensor_dl(m.data)));
  KILN_ASSERT_OK(kiln_graph_executor_run(gx));
  assert_output(gx, &m, kiln_tensor_data(m.data));
  /* Again with other data: the reused storage holds no stale values. */
  kiln_tensor_t *other = f32_filled(9, 2, SHAPE(N, K));
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(other)));
  KILN_ASSERT_OK(kiln_graph_executor_run(gx));
  assert_output(gx, &m, kiln_tensor_data(other));
  kiln_tensor_release(other);
  model_free(&m);
  kiln_graph_executor_destroy(gx);
  kiln_graph_executor_destroy(NULL);
  kiln_test_remove_dir(dir);
  free(dir);
}

static void set_path(json_t *root, const char *path, const char *value_text);

static void test_storage_plan(void **state) {
  (void)state;
  model_t m;
  model_make(&m);
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create_from(base_graph(), compiled, m.params, &gx));
  assert_int_equal(gx->num_storages, 5);
  assert_ptr_equal(gx->entries[5].dl.data, gx->entries[2].dl.data);
  kiln_graph_executor_destroy(gx);
  /* storage_offset: entry 5 64 bytes into the storage it shares with 2,
   * which grows to hold it */
  json_t *offset_graph = base_graph();
  set_path(offset_graph, "attrs/storage_offset", "[\"list_int\", [0, 0, 0, 0, 0, 64]]");
  KILN_ASSERT_OK(create_from(offset_graph, compiled, m.params, &gx));
  assert_ptr_equal((char *)gx->entries[5].dl.data, (char *)gx->entries[2].dl.data + 64);
  kiln_graph_executor_destroy(gx);
  KILN_ASSERT_OK(create_from(base_graph(), compiled, m.params, &gx));
  for (int s = 0; s < gx->num_storages; ++s) {
    assert_int_equal((uintptr_t)gx->storages[s] % 64, 0);
  }
  /* The params were copied into their storage. */
  assert_memory_equal(gx->entries[1].dl.data, kiln_tensor_data(m.weight), sizeof(float) * M * K);
  assert_memory_equal(gx->entries[3].dl.data, kiln_tensor_data(m.bias), sizeof(float) * M);
  kiln_graph_executor_destroy(gx);
  model_free(&m);

  /* a (2,) and b (6,); c = __copy(a) and d = __copy(b) share storage 2, so it
   * must hold d's 24 bytes; e = __nop(d) in the same storage. */
  json_t *nodes = json_pack("[o, o, o, o, o]", null_node("a"), null_node("b"),
                            op_node("c", "__copy", 1, json_pack("[o]", ref(0, 0))),
                            op_node("d", "__copy", 1, json_pack("[o]", ref(1, 0))),
                            op_node("e", "__nop", 1, json_pack("[o]", ref(3, 0))));
  json_t *graph = json_pack(
      "{s:o, s:[i, i], s:[i, i, i, i, i, i], s:[o, o], s:{s:[s, [s, s, s, s, s]], "
      "s:[s, [i, i, i, i, i]], s:[s, [[i], [i], [i], [i], [i]]], s:[s, [i, i, i, i, i]]}}",
      "nodes", nodes, "arg_nodes", 0, 1, "node_row_ptr", 0, 1, 2, 3, 4, 5, "heads", ref(4, 0),
      ref(2, 0), "attrs", "dltype", "list_str", "float32", "float32", "float32", "float32",
      "float32", "storage_id", "list_int", 0, 1, 2, 2, 2, "shape", "list_shape", 2, 6, 2, 6, 6,
      "device_index", "list_int", 1, 1, 1, 1, 1);
  KILN_ASSERT_OK(create_from(graph, handmade, NULL, &gx));
  assert_int_equal(kiln_graph_executor_num_inputs(gx), 2);
  const float a[] = {1, 2}, b[] = {3, 4, 5, 6, 7, 8};
  kiln_tensor_t *ta = NULL, *tb = NULL;
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, SHAPE(2),
                                         a, sizeof(a), &ta));
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, SHAPE(6),
                                         b, sizeof(b), &tb));
  KILN_ASSERT_OK(kiln_graph_executor_set_input_by_name(gx, "a", kiln_tensor_dl(ta)));
  KILN_ASSERT_OK(kiln_graph_executor_set_input_by_name(gx, "b", kiln_tensor_dl(tb)));
  KILN_ASSERT_OK(kiln_graph_executor_run(gx));
  const DLTensor *out = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_get_output(gx, 0, &out));
  assert_floats(out->data, b, 6);
  /* c was overwritten by d, as the plan allows (c is dead after it). */
  KILN_ASSERT_OK(kiln_graph_executor_get_output(gx, 1, &out));
  assert_floats(out->data, b, 2);
  kiln_tensor_release(ta);
  kiln_tensor_release(tb);
  kiln_graph_executor_destroy(gx);
}

static void test_in_memory_and_zero_copy(void **state) {
  (void)state;
  model_t m;
  model_make(&m);
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create_from(base_graph(), compiled, m.params, &gx));
  kiln_runtime_params_destroy(m.params); /* the executor keeps copies */
  m.params = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_set_input_zero_copy(gx, 0, kiln_tensor_dl(m.data)));
  assert_ptr_equal(gx->entries[0].dl.data, kiln_tensor_data(m.data));
  KILN_ASSERT_OK(kiln_graph_executor_run(gx));
  assert_output(gx, &m, kiln_tensor_data(m.data));
  /* The caller's data is read at each run. */
  float *data = kiln_tensor_data(m.data);
  for (int i = 0; i < N * K; ++i) {
    data[i] = -data[i];
  }
  KILN_ASSERT_OK(kiln_graph_executor_run(gx));
  assert_output(gx, &m, data);
  /* A copying set_input points the input back at its storage. */
  kiln_tensor_t *other = f32_filled(5, 2, SHAPE(N, K));
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(other)));
  assert_ptr_equal(gx->entries[0].dl.data, gx->storages[0]);
  KILN_ASSERT_OK(kiln_graph_executor_run(gx));
  assert_output(gx, &m, kiln_tensor_data(other));
  kiln_tensor_release(other);
  kiln_graph_executor_destroy(gx);
  model_free(&m);
}

static void test_input_errors(void **state) {
  (void)state;
  model_t m;
  model_make(&m);
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create_from(base_graph(), compiled, m.params, &gx));
  DLTensor t = *kiln_tensor_dl(m.data);
  t.byte_offset = 4;
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input_zero_copy(gx, 0, &t), INVALID_ARGUMENT,
                     "graph.json: input 'data': zero-copy data must be 64-byte aligned");
  /* A copy does not mind the alignment. */
  kiln_tensor_t *big = f32_filled(3, 1, SHAPE(N * K + 1));
  t.data = kiln_tensor_data(big);
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, &t));
  assert_memory_equal(gx->entries[0].dl.data, (const float *)kiln_tensor_data(big) + 1,
                      sizeof(float) * N * K);
  kiln_tensor_release(big);
  t = *kiln_tensor_dl(m.data);
  t.shape = (int64_t[]){N, K - 1};
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input(gx, 0, &t), INVALID_ARGUMENT,
                     "graph.json: input 'data' has shape (3, 6), expected (3, 7)");
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input_zero_copy(gx, 0, &t), INVALID_ARGUMENT,
                     "input 'data' has shape (3, 6), expected (3, 7)");
  t = *kiln_tensor_dl(m.data);
  t.dtype = (DLDataType){kDLInt, 32, 1};
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input(gx, 0, &t), INVALID_ARGUMENT,
                     "input 'data' has dtype int32, expected float32");
  t.dtype = (DLDataType){kDLFloat, 8, 1};
  KILN_ASSERT_STATUS(
      kiln_graph_executor_set_input(gx, 0, &t), INVALID_ARGUMENT,
      "input 'data' has dtype DLPack {kDLFloat (2), bits 8, lanes 1}, expected float32");
  t = *kiln_tensor_dl(m.data);
  t.strides = (int64_t[]){1, N};
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input(gx, 0, &t), INVALID_ARGUMENT,
                     "input 'data' is not compact");
  t = *kiln_tensor_dl(m.data);
  t.device.device_type = kDLCUDA;
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input(gx, 0, &t), INVALID_ARGUMENT,
                     "input 'data' is on device type 2, expected the CPU");
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input(gx, 0, NULL), INVALID_ARGUMENT,
                     "input 'data': no tensor or no data");
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input(gx, 1, kiln_tensor_dl(m.data)), OUT_OF_RANGE,
                     "graph.json: input 1 does not exist (the graph has 1)");
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input_by_name(gx, "x", kiln_tensor_dl(m.data)),
                     NOT_FOUND, "graph.json: no input is named 'x'; the inputs are 'data'");
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input_by_name(gx, "weight", kiln_tensor_dl(m.data)),
                     NOT_FOUND,
                     "graph.json: 'weight' is a param, not an input; the inputs are "
                     "'data'");
  kiln_graph_executor_tensor_info_t info;
  KILN_ASSERT_STATUS(kiln_graph_executor_input_info(gx, -1, &info), OUT_OF_RANGE,
                     "input -1 does not exist");
  KILN_ASSERT_STATUS(kiln_graph_executor_output_info(gx, 1, &info), OUT_OF_RANGE,
                     "graph.json: output 1 does not exist (the graph has 1)");
  const DLTensor *view = NULL;
  KILN_ASSERT_STATUS(kiln_graph_executor_get_output(gx, 1, &view), OUT_OF_RANGE, "output 1");
  assert_null(view);
  kiln_tensor_t *copy = NULL;
  KILN_ASSERT_STATUS(kiln_graph_executor_copy_output(gx, 2, kiln_allocator_system(), &copy),
                     OUT_OF_RANGE, "output 2");
  kiln_graph_executor_destroy(gx);
  model_free(&m);
}

static int count_lines(const char *text) {
  int lines = 0;
  for (; *text; ++text) {
    lines += *text == '\n';
  }
  return lines;
}

static void test_profile(void **state) {
  (void)state;
  model_t m;
  model_make(&m);
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create_from(base_graph(), compiled, m.params, &gx));
  kiln_graph_profile_t *profile = NULL;
  KILN_ASSERT_STATUS(kiln_graph_executor_profile(gx, 3, &profile), FAILED_PRECONDITION,
                     "input 'data' (node 0) was never set");
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(m.data)));
  KILN_ASSERT_STATUS(kiln_graph_executor_profile(gx, 0, &profile), INVALID_ARGUMENT,
                     "graph.json: a profile needs at least one run, not 0");
  KILN_ASSERT_OK(kiln_graph_executor_profile(gx, 5, &profile));
  assert_output(gx, &m, kiln_tensor_data(m.data));
  assert_int_equal(profile->runs, 5);
  assert_int_equal(profile->num_nodes, 3);
  const int nodes[] = {2, 4, 5};
  const char *names[] = {"fused_dense", "fused_add", "fused_relu"};
  const int64_t flops[] = {2 * N * M * K, N * M, 0};
  double sum = 0, shares = 0;
  for (int k = 0; k < 3; ++k) {
    const kiln_graph_profile_node_t *n = &profile->nodes[k];
    assert_int_equal(n->node, nodes[k]);
    assert_string_equal(n->name, names[k]);
    assert_string_equal(n->func_name, names[k]);
    assert_int_equal(n->flops, flops[k]);
    assert_true(n->milliseconds > 0);
    sum += n->milliseconds;
    shares += n->share;
    assert_true(fabs(n->share - n->milliseconds / profile->total_milliseconds) < 1e-12);
    assert_true(fabs(n->gflops_per_second - (double)flops[k] / (n->milliseconds * 1e6)) < 1e-9);
  }
  assert_true(fabs(sum - profile->total_milliseconds) < 1e-12);
  assert_true(fabs(shares - 1) < 1e-9);
  assert_int_equal(profile->total_flops, 2 * N * M * K + N * M);
  assert_true(profile->run_milliseconds > 0);

  char *text = NULL;
  KILN_ASSERT_OK(kiln_graph_profile_format(profile, kiln_allocator_system(), &text));
  assert_int_equal(count_lines(text), 7);
  assert_non_null(strstr(text, "3 kernel nodes, median of 5 runs\n"));
  assert_non_null(
      strstr(text, " node  name            time (ms)    share     GFLOP/s\n    2  fused_dense  "));
  const char *relu = strstr(text, "    5  fused_relu   ");
  assert_non_null(relu);
  assert_non_null(strstr(relu, "%           -\n"));
  assert_non_null(strstr(text, "\n       total        "));
  assert_non_null(strstr(text, "  100.0%  "));
  assert_non_null(strstr(text, "\n       run          "));
  kiln_allocator_free(kiln_allocator_system(), text);
  kiln_graph_profile_destroy(profile);
  kiln_graph_profile_destroy(NULL);
  kiln_graph_executor_destroy(gx);
  model_free(&m);
}

static kiln_tensor_t *read_npy(const char *dir, const char *name) {
  char *path = kiln_test_path_join(dir, name);
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_npy_read_file(kiln_allocator_system(), path, &t));
  free(path);
  return t;
}

static void assert_npy(const char *dir, const char *name, const float *want, int count) {
  kiln_tensor_t *t = read_npy(dir, name);
  assert_int_equal(kiln_tensor_element_count(t), count);
  assert_floats(kiln_tensor_data(t), want, count);
  kiln_tensor_release(t);
}

static void test_debug_dump(void **state) {
  (void)state;
  model_t m;
  model_make(&m);
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create_from(base_graph(), compiled, m.params, &gx));
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(m.data)));
  char *dir = kiln_test_make_temp_dir();
  char *debug = kiln_test_path_join(dir, "debug"); /* made by the run */
  KILN_ASSERT_OK(kiln_graph_executor_run_debug(gx, debug));
  assert_output(gx, &m, kiln_tensor_data(m.data));
  assert_npy(debug, "0_data.npy", kiln_tensor_data(m.data), N * K);
  assert_npy(debug, "1_weight.npy", kiln_tensor_data(m.weight), M * K);
  assert_npy(debug, "3_bias.npy", kiln_tensor_data(m.bias), M);
  /* The dense output as it was made, before the relu reused its storage. */
  float want[N * M], with_bias[N * M];
  expected(&m, kiln_tensor_data(m.data), 0, want);
  int negatives = 0;
  for (int i = 0; i < N * M; ++i) {
    negatives += want[i] < 0;
    with_bias[i] = want[i] + ((const float *)kiln_tensor_data(m.bias))[i % M];
  }
  assert_true(negatives > 0);
  assert_npy(debug, "2_fused_dense.npy", want, N * M);
  assert_npy(debug, "4_fused_add.npy", with_bias, N * M);
  expected(&m, kiln_tensor_data(m.data), 1, want);
  assert_npy(debug, "5_fused_relu.npy", want, N * M);
  kiln_test_remove_dir(debug);
  KILN_ASSERT_STATUS(kiln_graph_executor_run_debug(gx, "/nonexistent-dir/debug"), IO_ERROR,
                     "graph.json: cannot make the debug folder /nonexistent-dir/debug");
  kiln_graph_executor_destroy(gx);
  model_free(&m);

  /* Several outputs, a name made safe, and a failing node (node 2). */
  json_t *nodes = json_pack("[o, o, o]", null_node("x"),
                            op_node("a/b:c", "twice_neg", 2, json_pack("[o]", ref(0, 0))),
                            op_node("broken", "fails", 1, json_pack("[o]", ref(1, 1))));
  json_t *graph =
      json_pack("{s:o, s:[i], s:[i, i, i, i], s:[o], s:{s:[s, [s, s, s, s]], "
                "s:[s, [i, i, i, i]], s:[s, [[i], [i], [i], [i]]]}}",
                "nodes", nodes, "arg_nodes", 0, "node_row_ptr", 0, 1, 3, 4, "heads", ref(2, 0),
                "attrs", "dltype", "list_str", "float32", "float32", "float32", "float32",
                "storage_id", "list_int", 0, 1, 2, 3, "shape", "list_shape", 3, 3, 3, 3);
  KILN_ASSERT_OK(create_from(graph, handmade, NULL, &gx));
  const float x[] = {1, -2, 4};
  kiln_tensor_t *tx = NULL;
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, SHAPE(3),
                                         x, sizeof(x), &tx));
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(tx)));
  KILN_ASSERT_STATUS(kiln_graph_executor_run_debug(gx, debug), INTERNAL,
                     "graph.json node 2 broken: fails: the kernel broke");
  assert_npy(debug, "0_x.npy", x, 3);
  assert_npy(debug, "1_a_b_c_0.npy", (const float[]){2, -4, 8}, 3);
  assert_npy(debug, "1_a_b_c_1.npy", (const float[]){-1, 2, -4}, 3);
  char *broken = kiln_test_path_join(debug, "2_broken.npy");
  assert_false(access(broken, F_OK) == 0);
  free(broken);
  KILN_ASSERT_STATUS(kiln_graph_executor_run(gx), INTERNAL,
                     "graph.json node 2 broken: fails: the kernel broke");
  kiln_tensor_release(tx);
  kiln_graph_executor_destroy(gx);
  kiln_test_remove_dir(debug);
  free(debug);
  kiln_test_remove_dir(dir);
  free(dir);
}

static void test_kernel_error_at_run(void **state) {
  (void)state;
  model_t m;
  model_make(&m);
  /* The relu's output declared (3, 4): the kernel's own check refuses it. */
  json_t *graph = base_graph();
  json_t *shapes = json_array_get(json_object_get(json_object_get(graph, "attrs"), "shape"), 1);
  json_array_set_new(shapes, 5, json_pack("[i, i]", N, M - 1));
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create_from(graph, compiled, m.params, &gx));
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(m.data)));
  KILN_ASSERT_STATUS(kiln_graph_executor_run(gx), INTERNAL,
                     "graph.json node 5 fused_relu: argument 1 has shape (3, 4), expected (3, 5)");
  kiln_graph_executor_destroy(gx);
  model_free(&m);
}

/* ---- create errors ---- */

/* Sets (or, for a NULL value, deletes) the member at `path` ("a/0/b"). */
static void set_path(json_t *root, const char *path, const char *value_text) {
  char buffer[256];
  snprintf(buffer, sizeof(buffer), "%s", path);
  json_t *parent = root;
  char *key = strtok(buffer, "/");
  for (char *next = strtok(NULL, "/"); next; key = next, next = strtok(NULL, "/")) {
    parent = json_is_array(parent) ? json_array_get(parent, strtoul(key, NULL, 10))
                                   : json_object_get(parent, key);
    assert_non_null(parent);
  }
  json_t *value = value_text ? json_loads(value_text, JSON_DECODE_ANY, NULL) : NULL;
  assert_true(value || !value_text);
  if (json_is_array(parent)) {
    size_t index = strtoul(key, NULL, 10);
    assert_int_equal(
        value ? json_array_set_new(parent, index, value) : json_array_remove(parent, index), 0);
  } else {
    assert_int_equal(value ? json_object_set_new(parent, key, value) : json_object_del(parent, key),
                     0);
  }
}

typedef struct bad_graph_t {
  const char *path;
  const char *value; /* JSON text, or NULL to delete */
  kiln_status_code_t code;
  const char *message;
} bad_graph_t;

static void test_bad_graphs(void **state) {
  (void)state;
  static const bad_graph_t cases[] = {
      {"nodes", NULL, KILN_STATUS_CODE_NOT_FOUND, "graph.json: missing key 'nodes'"},
      {"nodes", "[]", KILN_STATUS_CODE_INVALID_ARGUMENT, "graph.json: 'nodes' has 0 nodes"},
      {"nodes", "{}", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json: key 'nodes': expected array, got object"},
      {"nodes/1", "7", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json node 1: expected an object, got integer"},
      {"nodes/2/op", "\"foo\"", KILN_STATUS_CODE_UNIMPLEMENTED,
       "graph.json node 2 fused_dense: op 'foo' is not supported"},
      {"nodes/2/name", NULL, KILN_STATUS_CODE_NOT_FOUND, "graph.json node 2: missing key 'name'"},
      {"nodes/2/attrs", NULL, KILN_STATUS_CODE_NOT_FOUND,
       "graph.json node 2 fused_dense: missing key 'attrs'"},
      {"nodes/2/attrs/func_name", "3", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json node 2 fused_dense: key 'func_name': expected string, got integer"},
      {"nodes/2/attrs/num_inputs", "\"two\"", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json node 2 fused_dense: attrs: key 'num_inputs': expected a count, got string"},
      {"nodes/2/attrs/num_outputs", NULL, KILN_STATUS_CODE_NOT_FOUND,
       "graph.json node 2 fused_dense: attrs: missing key 'num_outputs'"},
      {"nodes/2/attrs/num_inputs", "-1", KILN_STATUS_CODE_OUT_OF_RANGE,
       "graph.json node 2 fused_dense: attrs: key 'num_inputs' is -1, expected 0 to 65536"},
      {"nodes/2/attrs", "[]", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json node 2 fused_dense: key 'attrs': expected object, got array"},
      {"nodes/2/attrs/num_inputs", "3", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json node 2 fused_dense: 2 inputs, expected 3 (attrs num_inputs)"},
      {"nodes/2/attrs/num_outputs", "\"0\"", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json node 2 fused_dense: a kernel node needs at least one output"},
      {"nodes/2/inputs/1", "[5, 0, 0]", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json node 2 fused_dense: input 1 refers to node 5 fused_relu, which does not come "
       "before it"},
      {"nodes/2/inputs/1", "[9, 0, 0]", KILN_STATUS_CODE_OUT_OF_RANGE,
       "graph.json node 2 fused_dense: input 1 is 9, expected 0 to 5"},
      {"nodes/4/inputs/0", "[2, 1, 0]", KILN_STATUS_CODE_OUT_OF_RANGE,
       "graph.json node 4 fused_add: input 0: the output index of node 2 fused_dense is 1, "
       "expected 0 to 0"},
      {"nodes/4/inputs/0", "[2]", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json node 4 fused_add: input 0: expected [node, output, version], got array"},
      {"nodes/0/inputs", "[[1, 0, 0]]", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json node 0 data: 1 inputs, expected 0 (none for a null node)"},
      {"nodes/4/attrs/func_name", "\"fused_x\"", KILN_STATUS_CODE_NOT_FOUND,
       "graph.json node 4 fused_add: the library has no function fused_x"},
      {"nodes/4/attrs/func_name", "\"__copy\"", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json node 4 fused_add: __copy has 2 inputs and 1 outputs, expected 1 and 1"},
      {"nodes/5/attrs/func_name", "\"__copy\"", KILN_STATUS_CODE_OK, ""},
      {"nodes/5/attrs/func_name", "\"fused_add\"", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json node 5 fused_relu: function fused_add takes 3 arguments, the node passes 2 (1 "
       "inputs, 1 outputs)"},
      {"node_row_ptr", NULL, KILN_STATUS_CODE_NOT_FOUND, "graph.json: missing key 'node_row_ptr'"},
      {"node_row_ptr/3", "7", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json: node_row_ptr[3] is not 3 (the outputs of the nodes before it)"},
      {"node_row_ptr/6", NULL, KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json: node_row_ptr has 6 values, expected 7 (nodes + 1)"},
      {"arg_nodes/2", NULL, KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json: null node 3 bias is not in arg_nodes"},
      {"arg_nodes/0", "17", KILN_STATUS_CODE_OUT_OF_RANGE,
       "graph.json: arg_nodes[0] is 17, expected 0 to 5"},
      {"node_row_ptr/1", "\"1\"", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json: node_row_ptr[1] is not 1"},
      {"arg_nodes/2", "2", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json: arg_nodes[2] is node 2 fused_dense, which is not a null node"},
      {"arg_nodes/2", "0", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json: arg_nodes[2] is node 0 data, which is listed twice"},
      {"heads", "[]", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json: 'heads' is empty: the graph has no output"},
      {"heads/0", "[9, 0, 0]", KILN_STATUS_CODE_OUT_OF_RANGE,
       "graph.json: heads[0] is 9, expected 0 to 5"},
      {"attrs", NULL, KILN_STATUS_CODE_NOT_FOUND, "graph.json: missing key 'attrs'"},
      {"attrs/shape", NULL, KILN_STATUS_CODE_NOT_FOUND, "graph.json: attrs: missing key 'shape'"},
      {"attrs/dltype/0", "\"list_int\"", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json: attrs 'dltype': expected [\"list_str\", [...]]"},
      {"attrs/dltype/1/5", NULL, KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json: attrs 'dltype' has 5 values, expected 6 (one per entry)"},
      {"attrs/dltype/1/2", "\"float33\"", KILN_STATUS_CODE_NOT_FOUND,
       "graph.json: attrs 'dltype': entry 2: unknown dtype \"float33\""},
      {"attrs/dltype/1/2", "1", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json: attrs 'dltype': entry 2: expected a string, got integer"},
      {"attrs/storage_id/1/3", "-1", KILN_STATUS_CODE_OUT_OF_RANGE,
       "graph.json: attrs 'storage_id': entry 3 is -1, expected 0 to 5"},
      {"attrs/storage_id/1/3", "6", KILN_STATUS_CODE_OUT_OF_RANGE,
       "graph.json: attrs 'storage_id': entry 3 is 6, expected 0 to 5"},
      {"attrs/shape/1/1", "[5, -2]", KILN_STATUS_CODE_OUT_OF_RANGE,
       "graph.json: attrs 'shape': entry 1 dim 1 is -2"},
      {"attrs/shape/1/1", "5", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json: attrs 'shape': entry 1: expected a list of at most 32 dims"},
      {"attrs/device_index", "[\"list_int\", [1, 1, 2, 1, 1, 1]]", KILN_STATUS_CODE_UNIMPLEMENTED,
       "graph.json: attrs 'device_index': entry 2 is not on the CPU"},
      {"attrs/kiln_flops/1/5", NULL, KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json: attrs 'kiln_flops' has 5 values, expected 6 (one per node)"},
      {"attrs/kiln_flops", NULL, KILN_STATUS_CODE_OK, ""},
      {"attrs/storage_offset", "[\"list_int\", [0, 0, 32, 0, 0, 0]]",
       KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json: attrs 'storage_offset': entry 2: offset 32 is not a multiple of 64"},
      {"attrs/storage_offset", "[\"list_int\", [0, 0, -64, 0, 0, 0]]",
       KILN_STATUS_CODE_OUT_OF_RANGE, "graph.json: attrs 'storage_offset': entry 2 is -64"},
      {"attrs/storage_offset", "[\"list_int\", [0, 0]]", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json: attrs 'storage_offset' has 2 values, expected 6 (one per entry)"},
      {"attrs/storage_offset", "[\"list_int\", [0, 0, 0, 0, 128, 64]]", KILN_STATUS_CODE_OK, ""},
      {"attrs/storage_id/1/4", "2", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json node 4 fused_add: output entry 4 shares storage 2 with its input entry 2; a "
       "kernel cannot write over its own input"},
      {"attrs/storage_id/1/1", "2", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json node 1: param 'weight' shares storage 2 with entry 2; a param needs a storage "
       "of its own"},
      {"attrs/shape/1/1", "[5, 8]", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json node 1: param 'weight' is float32 (5, 7) in the params, the graph expects "
       "float32 (5, 8)"},
      {"attrs/dltype/1/3", "\"float64\"", KILN_STATUS_CODE_INVALID_ARGUMENT,
       "graph.json node 3: param 'bias' is float32 (5,) in the params, the graph expects float64 "
       "(5,)"},
  };
  model_t m;
  model_make(&m);
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    json_t *graph = base_graph();
    set_path(graph, cases[i].path, cases[i].value);
    kiln_graph_executor_t *gx = NULL;
    kiln_status_t status = create_from(graph, compiled, m.params, &gx);
    if (cases[i].code == KILN_STATUS_CODE_OK) {
      KILN_ASSERT_OK(status);
      KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(m.data)));
      KILN_ASSERT_OK(kiln_graph_executor_run(gx));
      kiln_graph_executor_destroy(gx);
      continue;
    }
    if (!status || kiln_status_code(status) != cases[i].code ||
        !strstr(kiln_status_message(status), cases[i].message)) {
      fail_msg("case %zu (%s): got %s: %s\nexpected %s: %s", i, cases[i].path,
               kiln_status_code_name(kiln_status_code(status)), kiln_status_message(status),
               kiln_status_code_name(cases[i].code), cases[i].message);
    }
    assert_null(gx);
    kiln_status_free(status);
  }
  /* A __copy between entries of different sizes. */
  json_t *graph = base_graph();
  set_path(graph, "nodes/5/attrs/func_name", "\"__copy\"");
  set_path(graph, "attrs/shape/1/5", "[3, 4]");
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_STATUS(create_from(graph, compiled, m.params, &gx), INVALID_ARGUMENT,
                     "graph.json node 5 fused_relu: __copy of 60 bytes into an output of 48 bytes");
  /* Text that is not JSON, or not an object. */
  KILN_ASSERT_STATUS(kiln_graph_executor_create(kiln_allocator_system(), "{\"nodes\": [", "g.json",
                                                compiled, NULL, &gx),
                     INVALID_ARGUMENT, "g.json:1:");
  KILN_ASSERT_STATUS(
      kiln_graph_executor_create(kiln_allocator_system(), "[]", "g.json", compiled, NULL, &gx),
      INVALID_ARGUMENT, "g.json: expected an object, got array");
  KILN_ASSERT_STATUS(
      kiln_graph_executor_create(kiln_allocator_system(), "{}", NULL, NULL, NULL, &gx),
      INVALID_ARGUMENT, "graph.json: the graph executor needs the JSON and a module");
  model_free(&m);
}

static void test_missing_param(void **state) {
  (void)state;
  /* A param absent from the params is taken for an input, never set. */
  model_t m;
  model_make(&m);
  kiln_runtime_params_t *weight_only = NULL;
  KILN_ASSERT_OK(
      kiln_runtime_params_create(kiln_allocator_system(), 1, param_names, &m.weight, &weight_only));
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(create_from(base_graph(), compiled, weight_only, &gx));
  assert_int_equal(kiln_graph_executor_num_inputs(gx), 2);
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(m.data)));
  KILN_ASSERT_STATUS(kiln_graph_executor_run(gx), FAILED_PRECONDITION,
                     "graph.json: input 'bias' (node 3) was never set "
                     "(kiln_graph_executor_set_input); if it is a param, the params lack it");
  kiln_graph_executor_destroy(gx);
  kiln_runtime_params_destroy(weight_only);
  model_free(&m);
}

static void remove_artifact(const char *dir, const char *name) {
  char *path = kiln_test_path_join(dir, name);
  assert_int_equal(unlink(path), 0);
  free(path);
}

static void test_missing_files(void **state) {
  (void)state;
  kiln_allocator_t system = kiln_allocator_system();
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_STATUS(kiln_graph_executor_load(system, "/nonexistent-kiln", &gx), NOT_FOUND,
                     "graph executor: /nonexistent-kiln is not a folder");
  KILN_ASSERT_STATUS(kiln_graph_executor_load(system, NULL, &gx), INVALID_ARGUMENT, "no folder");
  char *dir = write_artifacts(base_graph());
  char *path = kiln_test_path_join(dir, "graph.json");
  kiln_test_write_file(path, "{\"nodes\": 3}", 12);
  KILN_ASSERT_STATUS(kiln_graph_executor_load(system, dir, &gx), INVALID_ARGUMENT,
                     "graph.json: key 'nodes': expected array, got integer");
  free(path);
  path = kiln_test_path_join(dir, "params.bin");
  kiln_test_write_file(path, "KILNPRX", 7);
  KILN_ASSERT_STATUS(kiln_graph_executor_load(system, dir, &gx), INVALID_ARGUMENT,
                     "params.bin: not a kiln params file");
  free(path);
  path = kiln_test_path_join(dir, "lib.so");
  kiln_test_write_file(path, "not a library", 13);
  KILN_ASSERT_STATUS(kiln_graph_executor_load(system, dir, &gx), IO_ERROR, "cannot load");
  free(path);
  char expected[600];
  remove_artifact(dir, "params.bin");
  snprintf(expected, sizeof(expected),
           "graph executor: %s has no params.bin (a build writes one, empty when the model has "
           "no params)",
           dir);
  KILN_ASSERT_STATUS(kiln_graph_executor_load(system, dir, &gx), NOT_FOUND, expected);
  remove_artifact(dir, "lib.so");
  snprintf(expected, sizeof(expected), "graph executor: %s has no lib.so", dir);
  KILN_ASSERT_STATUS(kiln_graph_executor_load(system, dir, &gx), NOT_FOUND, expected);
  remove_artifact(dir, "graph.json");
  snprintf(expected, sizeof(expected), "graph executor: %s has no graph.json", dir);
  KILN_ASSERT_STATUS(kiln_graph_executor_load(system, dir, &gx), NOT_FOUND, expected);
  assert_null(gx);
  kiln_test_remove_dir(dir);
  free(dir);
}

static void test_module_save(void **state) {
  (void)state;
  size_t size = 0;
  const unsigned char *bytes = kiln_runtime_module_binary(compiled, &size);
  assert_non_null(bytes);
  assert_true(size > 64);
  assert_memory_equal(bytes,
                      "\x7f"
                      "ELF",
                      4);
  assert_null(kiln_runtime_module_binary(handmade, &size));
  assert_int_equal(size, 0);
  KILN_ASSERT_STATUS(kiln_runtime_module_save(handmade, "/tmp/never.so"), FAILED_PRECONDITION,
                     "module handmade has no library file (built in memory): build with an "
                     "object-file target to save it");
  KILN_ASSERT_STATUS(kiln_runtime_module_set_binary(handmade, NULL, 4), INVALID_ARGUMENT,
                     "module handmade: 4 library bytes at NULL");
  KILN_ASSERT_STATUS(kiln_runtime_module_save(compiled, "/nonexistent-dir/lib.so"), IO_ERROR,
                     "/nonexistent-dir/lib.so");
  /* A saved library loads and runs on its own. */
  char *dir = kiln_test_make_temp_dir();
  char *path = kiln_test_path_join(dir, "lib.so");
  KILN_ASSERT_OK(kiln_runtime_module_save(compiled, path));
  kiln_runtime_module_t *loaded = NULL;
  KILN_ASSERT_OK(kiln_runtime_module_load(kiln_allocator_system(), path, &loaded));
  kiln_tensor_t *x = f32_filled(4, 2, SHAPE(N, M)),
                *y = tensor_zeros(KILN_DTYPE_FLOAT32, 2, SHAPE(N, M));
  kiln_tensor_t *args[] = {x, y};
  KILN_ASSERT_OK(kiln_runtime_module_call(loaded, "fused_relu", 2, args));
  for (int i = 0; i < N * M; ++i) {
    float v = ((const float *)kiln_tensor_data(x))[i];
    assert_true(((const float *)kiln_tensor_data(y))[i] == fmaxf(v, 0));
  }
  kiln_tensor_release(x);
  kiln_tensor_release(y);
  kiln_runtime_module_release(loaded);
  free(path);
  kiln_test_remove_dir(dir);
  free(dir);
}

/* ---- argument counts, checked at load ---- */

/* The base graph with the relu node (1 input, 1 output) calling fused_add
 * (3 arguments). */
static json_t *wrong_arity_graph(void) {
  json_t *graph = base_graph();
  set_path(graph, "nodes/5/attrs/func_name", "\"fused_add\"");
  return graph;
}

static const char wrong_arity_message[] =
    "node 5 fused_relu: function fused_add takes 3 arguments, the node passes 2 (1 inputs, 1 "
    "outputs)";

/* Issue 21, defect 8: a node whose function takes another argument count is
 * refused when the executor is made (from a folder's lib.so, from a module
 * built by each backend, from a JIT's in-memory module), not at the first
 * run. */
static void test_num_args_checked_at_load(void **state) {
  (void)state;
  assert_int_equal(kiln_runtime_module_function_num_args(compiled, "fused_dense"), 3);
  assert_int_equal(kiln_runtime_module_function_num_args(compiled, "fused_relu"), 2);
  assert_int_equal(kiln_runtime_module_function_num_args(compiled, "nothing"), -1);
  assert_int_equal(kiln_runtime_module_function_num_args(handmade, "twice_neg"), -1);
  model_t m;
  model_make(&m);
  char *dir = write_artifacts(wrong_arity_graph());
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_STATUS(kiln_graph_executor_load(kiln_allocator_system(), dir, &gx), INVALID_ARGUMENT,
                     wrong_arity_message);
  assert_null(gx);
  kiln_test_remove_dir(dir);
  free(dir);
  const char *const targets[] = {"llvm -noasm", "llvm -jit -noasm"};
  int have_llvm = strncmp(kiln_codegen_default_target(), "llvm", 4) == 0;
  for (int t = 0; have_llvm && t < 2; ++t) {
    const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(N, M)),
                                  ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(M))};
    const kiln_type_t *dense_types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(N, K)),
                                        ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(M, K))};
    const kiln_tir_prim_func_t *funcs[] = {
        lower(&kiln_op_dense, ATTRS(&kiln_op_dense, "units", "0"), 2, dense_types, "fused_dense"),
        lower(&kiln_op_add, NULL, 2, types, "fused_add"),
        lower(&kiln_op_relu, NULL, 1, types, "fused_relu"),
    };
    kiln_runtime_module_t *module = NULL;
    KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), targets[t], funcs, 3, &module));
    assert_int_equal(kiln_runtime_module_function_num_args(module, "fused_add"), 3);
    assert_int_equal(kiln_runtime_module_function_num_args(module, "fused_relu"), 2);
    KILN_ASSERT_STATUS(create_from(wrong_arity_graph(), module, m.params, &gx), INVALID_ARGUMENT,
                       wrong_arity_message);
    kiln_runtime_module_release(module);
  }
  model_free(&m);
}

/* ---- allocation failures ---- */

typedef struct sweep_t {
  const char *json;
  model_t *model;
  const char *folder;
} sweep_t;

static kiln_status_t use_executor(kiln_graph_executor_t *gx, kiln_allocator_t allocator,
                                  const model_t *m) {
  KILN_RETURN_IF_ERROR(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(m->data)));
  KILN_RETURN_IF_ERROR(kiln_graph_executor_run(gx));
  kiln_tensor_t *out = NULL;
  KILN_RETURN_IF_ERROR(kiln_graph_executor_copy_output(gx, 0, allocator, &out));
  kiln_tensor_release(out);
  kiln_graph_profile_t *profile = NULL;
  KILN_RETURN_IF_ERROR(kiln_graph_executor_profile(gx, 2, &profile));
  char *text = NULL;
  kiln_status_t status = kiln_graph_profile_format(profile, allocator, &text);
  kiln_allocator_free(allocator, text);
  kiln_graph_profile_destroy(profile);
  return status;
}

static kiln_status_t create_scenario(kiln_allocator_t allocator, void *context) {
  const sweep_t *s = context;
  kiln_graph_executor_t *gx = NULL;
  KILN_RETURN_IF_ERROR(kiln_graph_executor_create(allocator, s->json, "graph.json", compiled,
                                                  s->model->params, &gx));
  kiln_status_t status = use_executor(gx, allocator, s->model);
  kiln_graph_executor_destroy(gx);
  return status;
}

static kiln_status_t load_scenario(kiln_allocator_t allocator, void *context) {
  const sweep_t *s = context;
  kiln_graph_executor_t *gx = NULL;
  KILN_RETURN_IF_ERROR(kiln_graph_executor_load(allocator, s->folder, &gx));
  kiln_graph_executor_destroy(gx);
  return KILN_OK;
}

static void test_allocation_failures(void **state) {
  (void)state;
  model_t m;
  model_make(&m);
  json_t *graph = base_graph();
  char *json = json_dumps(graph, 0);
  json_decref(graph);
  char *dir = write_artifacts(base_graph());
  sweep_t s = {json, &m, dir};
  assert_true(kiln_test_sweep_allocation_failures(create_scenario, &s) >= 8);
  assert_true(kiln_test_sweep_allocation_failures(load_scenario, &s) >= 10);
  kiln_test_remove_dir(dir);
  free(dir);
  free(json);
  model_free(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_run_from_folder, setup, teardown),
      cmocka_unit_test_setup_teardown(test_storage_plan, setup, teardown),
      cmocka_unit_test_setup_teardown(test_in_memory_and_zero_copy, setup, teardown),
      cmocka_unit_test_setup_teardown(test_input_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_profile, setup, teardown),
      cmocka_unit_test_setup_teardown(test_debug_dump, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel_error_at_run, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_graphs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_num_args_checked_at_load, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_param, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_files, setup, teardown),
      cmocka_unit_test_setup_teardown(test_module_save, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
