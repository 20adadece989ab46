/*
 * Tests of the built-in workloads (relay.testing): every network builds with
 * the default options, verifies, has the expected input and output types,
 * the learnable-parameter counts of torchvision (and, for the transformer,
 * the count worked out by hand below), the expected number of each operator,
 * and one weight tensor per weight parameter with exactly its type; batch
 * size and image size reshape input and output; weights are a pure function
 * of (seed, name) and fall in their documented ranges; bad options, unknown
 * names and name collisions are errors that leave the caller's params as
 * they were; the builder's own checks (long names, a type error found when
 * main is finished) roll back too; and the MLP build survives every
 * allocation failure.
 */
#include <math.h>
#include <string.h>

#include "frontend/testing/builder.h"
#include "frontend/testing/networks.h"
#include "frontend/testing/random.h"
#include "frontend/testing/workloads.h"
#include "ir/order.h"
#include "ir/params.h"
#include "ir/verify.h"
#include "kiln_test.h"
#include "op/op.h"

/* ---- helpers ---- */

/* A built workload: the module and its params. */
typedef struct built_t {
  kiln_module_t *module;
  kiln_params_t params;
} built_t;

static kiln_workload_options_t options_of(int64_t batch_size, int64_t image_size, uint64_t seed) {
  kiln_workload_options_t options = kiln_workload_options_default();
  options.batch_size = batch_size;
  options.image_size = image_size;
  options.seed = seed;
  return options;
}

static void build(const char *name, const kiln_workload_options_t *options, built_t *out) {
  kiln_params_initialize(&out->params, kiln_allocator_system());
  KILN_ASSERT_OK(
      kiln_workload_build(name, options, kiln_allocator_system(), &out->params, &out->module));
  assert_non_null(out->module);
}

static void build_default(const char *name, built_t *out) {
  kiln_workload_options_t options = kiln_workload_options_default();
  build(name, &options, out);
}

static void release(built_t *built) {
  kiln_module_destroy(built->module);
  kiln_params_deinitialize(&built->params);
}

static kiln_function_t *main_of(const built_t *built) {
  kiln_function_t *function = kiln_module_get_function(built->module, "main");
  assert_non_null(function);
  return function;
}

static void assert_tensor_type(const kiln_type_t *type, int ndim, const int64_t *dims) {
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(type);
  assert_non_null(tensor);
  assert_int_equal(tensor->dtype, KILN_DTYPE_FLOAT32);
  assert_int_equal(tensor->ndim, ndim);
  for (int d = 0; d < ndim; ++d) {
    assert_int_equal(tensor->shape[d], dims[d]);
  }
}

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})

/* main(data, ...) takes `data` of `in_dims` and returns `out_dims`. */
static void assert_signature(const built_t *built, int in_ndim, const int64_t *in_dims,
                             int out_ndim, const int64_t *out_dims) {
  const kiln_function_t *function = main_of(built);
  assert_true(function->num_params >= 1);
  assert_string_equal(function->params[0]->name, "data");
  assert_tensor_type(function->params[0]->type_annotation, in_ndim, in_dims);
  assert_tensor_type(function->ret_type, out_ndim, out_dims);
  assert_tensor_type(function->body->checked_type, out_ndim, out_dims);
}

static bool ends_with(const char *text, const char *suffix) {
  size_t n = strlen(text), m = strlen(suffix);
  return n >= m && strcmp(text + n - m, suffix) == 0;
}

/* main's parameters after data are exactly the params, in order, each
 * tensor of its Var's type; returns the learnable element count (every
 * param but batch norm's running statistics). */
static int64_t check_params(const built_t *built) {
  const kiln_function_t *function = main_of(built);
  assert_int_equal(function->num_params, (int)kiln_params_count(&built->params) + 1);
  int64_t learnable = 0;
  for (int i = 1; i < function->num_params; ++i) {
    const kiln_var_t *var = function->params[i];
    const kiln_param_entry_t *entry = kiln_params_at(&built->params, (size_t)(i - 1));
    assert_string_equal(var->name, entry->name);
    const kiln_tensor_type_t *type = kiln_type_as_tensor(var->type_annotation);
    assert_non_null(type);
    assert_int_equal(kiln_tensor_dtype(entry->tensor), KILN_DTYPE_FLOAT32);
    assert_true(kiln_shape_equal(type->ndim, type->shape, kiln_tensor_ndim(entry->tensor),
                                 kiln_tensor_shape(entry->tensor)));
    if (!ends_with(entry->name, "_running_mean") && !ends_with(entry->name, "_running_var")) {
      learnable += kiln_tensor_element_count(entry->tensor);
    }
  }
  return learnable;
}

/* How many Calls of operator `op` main's body makes. */
static int count_calls(const built_t *built, const kiln_op_t *op) {
  kiln_ir_order_t order;
  KILN_ASSERT_OK(kiln_ir_order_compute(main_of(built), kiln_allocator_system(), &order));
  int count = 0;
  for (size_t i = 0; i < kiln_ir_order_count(&order); ++i) {
    const kiln_call_t *call = kiln_expr_as_call(kiln_ir_order_node(&order, i));
    count += call && call->op == op;
  }
  kiln_ir_order_deinitialize(&order);
  return count;
}

/* Every op count of `ops` as listed in `counts`. */
static void assert_calls(const built_t *built, int n, const kiln_op_t *const *ops,
                         const int *counts) {
  for (int i = 0; i < n; ++i) {
    int got = count_calls(built, ops[i]);
    if (got != counts[i]) {
      fail_msg("%s: %d calls, expected %d", ops[i]->name, got, counts[i]);
    }
  }
}

static const float *param_data(const built_t *built, const char *name) {
  kiln_tensor_t *tensor = kiln_params_get(&built->params, name);
  if (!tensor) {
    fail_msg("no parameter %s", name);
  }
  return kiln_tensor_data(tensor);
}

static int64_t param_count(const built_t *built, const char *name) {
  kiln_tensor_t *tensor = kiln_params_get(&built->params, name);
  if (!tensor) {
    fail_msg("no parameter %s", name);
  }
  return kiln_tensor_element_count(tensor);
}

/* Every element of param `name` is in [lo, hi]; and the extremes come within
 * 2% of the range's ends (the values fill the range). */
static void assert_range(const built_t *built, const char *name, double lo, double hi) {
  const float *data = param_data(built, name);
  int64_t count = param_count(built, name);
  double min = INFINITY, max = -INFINITY;
  for (int64_t i = 0; i < count; ++i) {
    min = fmin(min, data[i]);
    max = fmax(max, data[i]);
  }
  double slack = 0.02 * (hi - lo);
  if (!(min >= lo && max <= hi && min <= lo + slack && max >= hi - slack)) {
    fail_msg("%s: values in [%g, %g], expected to fill [%g, %g]", name, min, max, lo, hi);
  }
}

/* ---- the list ---- */

static void test_names(void **state) {
  (void)state;
  const char *const expected[] = {"resnet18",      "resnet34", "resnet50",   "mobilenet_v2",
                                  "squeezenet1_1", "mlp",      "transformer"};
  const char *const *names = kiln_workload_names();
  for (int i = 0; i < 7; ++i) {
    assert_string_equal(names[i], expected[i]);
  }
  assert_null(names[7]);
  kiln_workload_options_t options = kiln_workload_options_default();
  assert_int_equal(options.batch_size, 1);
  assert_int_equal(options.image_size, 224);
  assert_int_equal(options.seed, 0);
}

/* ---- each network with the defaults ---- */

static void test_resnet18(void **state) {
  (void)state;
  built_t built;
  build_default("resnet18", &built);
  KILN_ASSERT_OK(kiln_ir_verify(built.module));
  assert_signature(&built, 4, DIMS(1, 3, 224, 224), 2, DIMS(1, 1000));
  assert_int_equal(check_params(&built), 11689512); /* torchvision's resnet18 */
  /* The names and order of torchvision's state dict, '.' as '_'. */
  const char *const first[] = {"data",
                               "conv1_weight",
                               "bn1_weight",
                               "bn1_bias",
                               "bn1_running_mean",
                               "bn1_running_var",
                               "layer1_0_conv1_weight",
                               "layer1_0_bn1_weight",
                               "layer1_0_bn1_bias",
                               "layer1_0_bn1_running_mean",
                               "layer1_0_bn1_running_var",
                               "layer1_0_conv2_weight"};
  const kiln_function_t *function = main_of(&built);
  for (int i = 0; i < 12; ++i) {
    assert_string_equal(function->params[i]->name, first[i]);
  }
  assert_string_equal(function->params[function->num_params - 2]->name, "fc_weight");
  assert_string_equal(function->params[function->num_params - 1]->name, "fc_bias");
  /* 20 conv + 20 bn, 5 params each: 1 + 20 + 20 * 4 + 2. */
  assert_int_equal(function->num_params, 103);
  assert_int_equal(param_count(&built, "layer2_0_downsample_0_weight"), 128 * 64);
  assert_int_equal(param_count(&built, "layer4_1_bn2_running_var"), 512);
  /* 1 stem + 8 blocks * 2 + 3 downsamples = 20 convs, each followed by bn. */
  const kiln_op_t *const ops[] = {&kiln_op_conv2d, &kiln_op_batch_norm, &kiln_op_relu,
                                  &kiln_op_add,    &kiln_op_max_pool2d, &kiln_op_global_avg_pool2d,
                                  &kiln_op_dense,  &kiln_op_bias_add};
  const int counts[] = {20, 20, 17, 8, 1, 1, 1, 1};
  assert_calls(&built, 8, ops, counts);
  release(&built);
}

static void test_resnet34_and_50(void **state) {
  (void)state;
  built_t built;
  build_default("resnet34", &built);
  assert_signature(&built, 4, DIMS(1, 3, 224, 224), 2, DIMS(1, 1000));
  assert_int_equal(check_params(&built), 21797672);
  /* 1 + 16 blocks * 2 + 3 downsamples. */
  assert_int_equal(count_calls(&built, &kiln_op_conv2d), 36);
  assert_int_equal(count_calls(&built, &kiln_op_add), 16);
  release(&built);

  build_default("resnet50", &built);
  KILN_ASSERT_OK(kiln_ir_verify(built.module));
  assert_signature(&built, 4, DIMS(1, 3, 224, 224), 2, DIMS(1, 1000));
  assert_int_equal(check_params(&built), 25557032);
  /* 1 + 16 bottlenecks * 3 + 4 downsamples (layer1_0 changes 64 -> 256). */
  assert_int_equal(count_calls(&built, &kiln_op_conv2d), 53);
  assert_int_equal(count_calls(&built, &kiln_op_batch_norm), 53);
  assert_int_equal(param_count(&built, "layer1_0_downsample_0_weight"), 256 * 64);
  /* v1.5: the stride is on the 3x3 conv, whose weight is (planes, planes, 3, 3). */
  assert_int_equal(param_count(&built, "layer2_0_conv2_weight"), 128 * 128 * 9);
  assert_int_equal(param_count(&built, "fc_weight"), 1000 * 2048);
  release(&built);
}

static void test_mobilenet_v2(void **state) {
  (void)state;
  built_t built;
  build_default("mobilenet_v2", &built);
  KILN_ASSERT_OK(kiln_ir_verify(built.module));
  assert_signature(&built, 4, DIMS(1, 3, 224, 224), 2, DIMS(1, 1000));
  assert_int_equal(check_params(&built), 3504872); /* torchvision's mobilenet_v2 */
  /* The ONNX export has 52 Conv, 35 Clip and 10 Add (its BN is folded). */
  const kiln_op_t *const ops[] = {&kiln_op_conv2d, &kiln_op_batch_norm, &kiln_op_clip, &kiln_op_add,
                                  &kiln_op_dense};
  const int counts[] = {52, 52, 35, 10, 1};
  assert_calls(&built, 5, ops, counts);
  /* Block 2's depthwise conv: 96 groups of one channel. */
  assert_int_equal(param_count(&built, "features_2_conv_1_0_weight"), 96 * 9);
  assert_int_equal(param_count(&built, "features_1_conv_1_weight"), 16 * 32);
  assert_int_equal(param_count(&built, "classifier_1_weight"), 1000 * 1280);
  release(&built);
}

static void test_squeezenet1_1(void **state) {
  (void)state;
  built_t built;
  build_default("squeezenet1_1", &built);
  KILN_ASSERT_OK(kiln_ir_verify(built.module));
  assert_signature(&built, 4, DIMS(1, 3, 224, 224), 2, DIMS(1, 1000));
  assert_int_equal(check_params(&built), 1235496); /* torchvision's squeezenet1_1 */
  /* As the ONNX export: 26 Conv, 26 Relu, 8 Concat, 3 MaxPool. */
  const kiln_op_t *const ops[] = {
      &kiln_op_conv2d,   &kiln_op_relu,       &kiln_op_concatenate,      &kiln_op_max_pool2d,
      &kiln_op_bias_add, &kiln_op_batch_norm, &kiln_op_global_avg_pool2d};
  const int counts[] = {26, 26, 8, 3, 26, 0, 1};
  assert_calls(&built, 7, ops, counts);
  assert_int_equal(param_count(&built, "features_12_expand3x3_weight"), 256 * 64 * 9);
  release(&built);
}

static void test_mlp(void **state) {
  (void)state;
  built_t built;
  build_default("mlp", &built);
  KILN_ASSERT_OK(kiln_ir_verify(built.module));
  assert_signature(&built, 2, DIMS(1, 784), 2, DIMS(1, 10));
  /* The shared mlp.onnx: 784*512+512 + 512*512+512 + 512*10+10. */
  assert_int_equal(check_params(&built), 669706);
  const char *const names[] = {"fc1_weight", "fc1_bias",   "fc2_weight",
                               "fc2_bias",   "fc3_weight", "fc3_bias"};
  for (size_t i = 0; i < 6; ++i) {
    assert_string_equal(kiln_params_at(&built.params, i)->name, names[i]);
  }
  const kiln_op_t *const ops[] = {&kiln_op_dense, &kiln_op_bias_add, &kiln_op_relu};
  const int counts[] = {3, 3, 2};
  assert_calls(&built, 3, ops, counts);
  /* Binding the params leaves main with data alone, still well typed. */
  KILN_ASSERT_OK(kiln_ir_bind_params(built.module, "main", &built.params));
  assert_int_equal(main_of(&built)->num_params, 1);
  KILN_ASSERT_OK(kiln_ir_verify(built.module));
  release(&built);
}

static void test_transformer(void **state) {
  (void)state;
  built_t built;
  build_default("transformer", &built);
  KILN_ASSERT_OK(kiln_ir_verify(built.module));
  assert_signature(&built, 3, DIMS(1, 128, 256), 3, DIMS(1, 128, 256));
  /* q, k, v, output: 4 * (256*256 + 256) = 263,168; two layer norms:
   * 2 * 2 * 256 = 1,024; FFN: 256*1024 + 1024 = 263,168 and
   * 1024*256 + 256 = 262,400. Total 789,760. */
  assert_int_equal(check_params(&built),
                   4 * (256 * 256 + 256) + 2 * 2 * 256 + (256 * 1024 + 1024) + (1024 * 256 + 256));
  assert_int_equal(check_params(&built), 789760);
  const kiln_op_t *const ops[] = {&kiln_op_dense,    &kiln_op_bias_add, &kiln_op_batch_matmul,
                                  &kiln_op_softmax,  &kiln_op_multiply, &kiln_op_layer_norm,
                                  &kiln_op_gelu,     &kiln_op_add,      &kiln_op_reshape,
                                  &kiln_op_transpose};
  const int counts[] = {6, 6, 2, 1, 1, 2, 1, 2, 8, 4};
  assert_calls(&built, 10, ops, counts);
  assert_int_equal(param_count(&built, "ffn_fc1_weight"), 1024 * 256);
  assert_int_equal(param_count(&built, "attention_norm_weight"), 256);
  release(&built);
}

/* ---- options ---- */

static void test_batch_and_image_size(void **state) {
  (void)state;
  built_t built;
  kiln_workload_options_t options = options_of(2, 160, 0);
  build("resnet18", &options, &built);
  assert_signature(&built, 4, DIMS(2, 3, 160, 160), 2, DIMS(2, 1000));
  assert_int_equal(check_params(&built), 11689512); /* weights do not depend on the image */
  release(&built);

  build("mobilenet_v2", &options, &built);
  assert_signature(&built, 4, DIMS(2, 3, 160, 160), 2, DIMS(2, 1000));
  release(&built);

  build("squeezenet1_1", &options, &built);
  assert_signature(&built, 4, DIMS(2, 3, 160, 160), 2, DIMS(2, 1000));
  release(&built);

  /* The MLP and the transformer take the batch and ignore the image size. */
  options = options_of(3, 0, 0);
  build("mlp", &options, &built);
  assert_signature(&built, 2, DIMS(3, 784), 2, DIMS(3, 10));
  release(&built);
  build("transformer", &options, &built);
  assert_signature(&built, 3, DIMS(3, 128, 256), 3, DIMS(3, 128, 256));
  release(&built);
}

/* The smallest images: 1 for the ResNets and MobileNet (every stride-2
 * layer maps n to ceil(n / 2)), 25 for SqueezeNet (see squeezenet.c). */
static void test_smallest_images(void **state) {
  (void)state;
  built_t built;
  kiln_workload_options_t options = options_of(1, 1, 0);
  build("mobilenet_v2", &options, &built);
  assert_signature(&built, 4, DIMS(1, 3, 1, 1), 2, DIMS(1, 1000));
  release(&built);
  build("resnet18", &options, &built);
  assert_signature(&built, 4, DIMS(1, 3, 1, 1), 2, DIMS(1, 1000));
  release(&built);
  options = options_of(1, 25, 0);
  build("squeezenet1_1", &options, &built);
  assert_signature(&built, 4, DIMS(1, 3, 25, 25), 2, DIMS(1, 1000));
  release(&built);
}

static void test_bad_options(void **state) {
  (void)state;
  kiln_params_t params;
  kiln_params_initialize(&params, kiln_allocator_system());
  kiln_module_t *module = NULL;
  kiln_allocator_t system = kiln_allocator_system();
  kiln_workload_options_t options = options_of(0, 224, 0);
  KILN_ASSERT_STATUS(kiln_workload_build("resnet18", &options, system, &params, &module),
                     INVALID_ARGUMENT, "resnet18: batch_size 0 is outside [1, 4096]");
  options = options_of(4097, 224, 0);
  KILN_ASSERT_STATUS(kiln_workload_build("mlp", &options, system, &params, &module),
                     INVALID_ARGUMENT, "mlp: batch_size 4097 is outside [1, 4096]");
  options = options_of(1, 24, 0);
  KILN_ASSERT_STATUS(kiln_workload_build("squeezenet1_1", &options, system, &params, &module),
                     INVALID_ARGUMENT,
                     "squeezenet1_1: image_size 24 is outside [25, 4096] (the smallest image that "
                     "keeps every layer at least 1x1 is 25)");
  options = options_of(1, 0, 0);
  KILN_ASSERT_STATUS(kiln_workload_build("resnet50", &options, system, &params, &module),
                     INVALID_ARGUMENT, "resnet50: image_size 0 is outside [1, 4096]");
  options = options_of(1, 4097, 0);
  KILN_ASSERT_STATUS(kiln_workload_build("mobilenet_v2", &options, system, &params, &module),
                     INVALID_ARGUMENT, "mobilenet_v2: image_size 4097 is outside [1, 4096]");
  KILN_ASSERT_STATUS(kiln_workload_build("resnet", &options, system, &params, &module), NOT_FOUND,
                     "no built-in workload \"resnet\"; the workloads are resnet18, resnet34, "
                     "resnet50, mobilenet_v2, squeezenet1_1, mlp, transformer");
  KILN_ASSERT_STATUS(kiln_workload_build(NULL, &options, system, &params, &module),
                     INVALID_ARGUMENT, "needs a name, options, params and out_module");
  KILN_ASSERT_STATUS(kiln_workload_build("mlp", NULL, system, &params, &module), INVALID_ARGUMENT,
                     "needs a name, options, params and out_module");
  KILN_ASSERT_STATUS(kiln_workload_build("mlp", &options, system, NULL, &module), INVALID_ARGUMENT,
                     "needs a name, options, params and out_module");
  assert_null(module);
  assert_int_equal(kiln_params_count(&params), 0);
  kiln_params_deinitialize(&params);
}

/* A name already in the caller's params stops the build; everything the
 * build added is taken back and the caller's entries stay. */
static void test_name_collision_rolls_back(void **state) {
  (void)state;
  kiln_params_t params;
  kiln_params_initialize(&params, kiln_allocator_system());
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, DIMS(3), &tensor));
  KILN_ASSERT_OK(kiln_params_add(&params, "keep", tensor));
  KILN_ASSERT_OK(kiln_params_add(&params, "fc2_bias", tensor));
  kiln_tensor_release(tensor);
  kiln_workload_options_t options = kiln_workload_options_default();
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(
      kiln_workload_build("mlp", &options, kiln_allocator_system(), &params, &module),
      ALREADY_EXISTS, "workload mlp: parameter \"fc2_bias\" is already set");
  assert_null(module);
  assert_int_equal(kiln_params_count(&params), 2);
  assert_string_equal(kiln_params_at(&params, 0)->name, "keep");
  assert_string_equal(kiln_params_at(&params, 1)->name, "fc2_bias");
  kiln_params_deinitialize(&params);
}

/* The builder's own checks, which no built-in network trips: a name too
 * long, a ResNet depth without a configuration, and a graph the type rules
 * reject, caught when main is finished; each failure takes back the params
 * the builder added. */
static void test_builder_errors(void **state) {
  (void)state;
  char long_name[200];
  memset(long_name, 'x', sizeof(long_name) - 1);
  long_name[sizeof(long_name) - 1] = '\0';
  char prefix[KILN_BUILDER_NAME_CAPACITY];
  KILN_ASSERT_STATUS(kiln_builder_prefix(prefix, "%s", long_name), INVALID_ARGUMENT,
                     "is longer than 95 characters");

  kiln_params_t params;
  kiln_params_initialize(&params, kiln_allocator_system());
  kiln_builder_t builder;
  KILN_ASSERT_OK(kiln_builder_initialize(&builder, kiln_allocator_system(), &params, 0));
  kiln_expr_t *x = NULL, *y = NULL;
  KILN_ASSERT_STATUS(
      kiln_builder_weight(&builder, long_name, "_weight", 1, DIMS(2), 0.0f, 1.0f, &x),
      INVALID_ARGUMENT, "_weight\" is longer than 95 characters");
  kiln_workload_options_t options = kiln_workload_options_default();
  KILN_ASSERT_STATUS(kiln_network_resnet(&builder, &options, 19, &x), INVALID_ARGUMENT,
                     "resnet: no configuration of depth 19 (18, 34 or 50)");
  KILN_ASSERT_OK(kiln_builder_input(&builder, "data", 2, DIMS(1, 8), &x));
  KILN_ASSERT_OK(kiln_builder_dense(&builder, "fc1", 8, 4, x, &y));
  KILN_ASSERT_OK(kiln_builder_dense(&builder, "fc2", 5, 3, y, &y)); /* expects 5 features, gets 4 */
  assert_int_equal(kiln_params_count(&params), 4);
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(kiln_builder_finish(&builder, y, &module), INVALID_ARGUMENT,
                     "in @main, %2 = nn.dense: nn.dense: data (1, 4) has 4 features but weight "
                     "(3, 5) expects 5");
  assert_null(module);
  kiln_builder_deinitialize(&builder);
  assert_int_equal(kiln_params_count(&params), 0);
  kiln_params_deinitialize(&params);
}

/* ---- weights ---- */

static bool same_bytes(const built_t *a, const built_t *b, size_t index) {
  const kiln_tensor_t *x = kiln_params_at(&a->params, index)->tensor;
  const kiln_tensor_t *y = kiln_params_at(&b->params, index)->tensor;
  return kiln_tensor_byte_size(x) == kiln_tensor_byte_size(y) &&
         memcmp(kiln_tensor_data(x), kiln_tensor_data(y), kiln_tensor_byte_size(x)) == 0;
}

static void test_seeds(void **state) {
  (void)state;
  built_t first, again, other;
  kiln_workload_options_t options = options_of(1, 224, 7);
  build("transformer", &options, &first);
  build("transformer", &options, &again);
  options.seed = 8;
  build("transformer", &options, &other);
  size_t count = kiln_params_count(&first.params);
  assert_int_equal(count, 16);
  for (size_t i = 0; i < count; ++i) {
    assert_true(same_bytes(&first, &again, i));
    assert_false(same_bytes(&first, &other, i)); /* every tensor changes with the seed */
  }
  /* The weights do not depend on the batch size. */
  options = options_of(2, 224, 7);
  built_t batch2;
  build("transformer", &options, &batch2);
  for (size_t i = 0; i < count; ++i) {
    assert_true(same_bytes(&first, &batch2, i));
  }
  release(&first);
  release(&again);
  release(&other);
  release(&batch2);
}

/* A weight is the stream of (seed, name), scaled to its layer's range; so
 * it does not depend on the other layers or their order. */
static void test_weights_are_streams_of_seed_and_name(void **state) {
  (void)state;
  built_t built;
  kiln_workload_options_t options = options_of(1, 224, 42);
  build("mlp", &options, &built);
  float bound = (float)(sqrt(2.0) * sqrt(3.0 / 784.0));
  float expected[16];
  kiln_random_t random;
  kiln_random_initialize(&random, 42, "fc1_weight");
  kiln_random_fill_uniform(&random, expected, 16, -bound, bound);
  assert_memory_equal(param_data(&built, "fc1_weight"), expected, sizeof(expected));
  kiln_random_initialize(&random, 42, "fc3_bias");
  kiln_random_fill_uniform(&random, expected, 10, -0.1f, 0.1f);
  assert_memory_equal(param_data(&built, "fc3_bias"), expected, 10 * sizeof(float));
  release(&built);
}

static void test_weight_ranges(void **state) {
  (void)state;
  built_t built;
  build_default("resnet18", &built);
  double conv1 = sqrt(6.0 / (3 * 7 * 7)); /* Kaiming-uniform, fan_in 147 */
  assert_range(&built, "conv1_weight", -conv1, conv1);
  double fc = sqrt(6.0 / 512);
  assert_range(&built, "fc_weight", -fc, fc);
  assert_range(&built, "fc_bias", -0.1, 0.1);
  assert_range(&built, "layer3_1_bn2_weight", 0.8, 1.2);
  assert_range(&built, "layer3_1_bn2_bias", -0.1, 0.1);
  assert_range(&built, "layer3_1_bn2_running_mean", -0.1, 0.1);
  assert_range(&built, "layer3_1_bn2_running_var", 0.5, 1.5);
  release(&built);
  build_default("transformer", &built);
  double model = sqrt(3.0 / 256); /* gain 1: no relu follows */
  assert_range(&built, "attention_query_weight", -model, model);
  assert_range(&built, "ffn_fc2_weight", -sqrt(3.0 / 1024), sqrt(3.0 / 1024));
  assert_range(&built, "ffn_norm_weight", 0.9, 1.1);
  assert_range(&built, "ffn_norm_bias", -0.1, 0.1);
  release(&built);
}

static void test_random_streams(void **state) {
  (void)state;
  kiln_random_t a, b, c, d;
  kiln_random_initialize(&a, 1, "conv1_weight");
  kiln_random_initialize(&b, 1, "conv1_weight");
  kiln_random_initialize(&c, 1, "conv2_weight");
  kiln_random_initialize(&d, 2, "conv1_weight");
  int equal_c = 0, equal_d = 0;
  for (int i = 0; i < 1000; ++i) {
    uint64_t x = kiln_random_next(&a);
    assert_true(x == kiln_random_next(&b));
    equal_c += x == kiln_random_next(&c);
    equal_d += x == kiln_random_next(&d);
  }
  assert_int_equal(equal_c, 0);
  assert_int_equal(equal_d, 0);
  /* splitmix64 from state 0 gives this first word (the reference
   * implementation's well-known value). */
  kiln_random_t raw = {0};
  assert_true(kiln_random_next(&raw) == UINT64_C(0xE220A8397B1DCDAF));
  /* Uniform values fill [-1, 1] with mean near 0. */
  double sum = 0.0, min = 1.0, max = -1.0;
  for (int i = 0; i < 100000; ++i) {
    float v = kiln_random_uniform(&a, -1.0f, 1.0f);
    sum += v;
    min = fmin(min, v);
    max = fmax(max, v);
  }
  assert_true(min >= -1.0 && min < -0.999 && max <= 1.0 && max > 0.999);
  assert_true(fabs(sum / 100000) < 0.01);
}

/* ---- allocation failures ---- */

/* Builds the MLP into params that hold one entry already; a failed build
 * must leave exactly that entry. */
static kiln_status_t mlp_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_params_t params;
  kiln_params_initialize(&params, allocator);
  kiln_tensor_t *tensor = NULL;
  kiln_status_t status = kiln_tensor_create(allocator, KILN_DTYPE_FLOAT32, 1, DIMS(2), &tensor);
  if (status == KILN_OK) {
    status = kiln_params_add(&params, "keep", tensor);
    kiln_tensor_release(tensor);
  }
  kiln_module_t *module = NULL;
  if (status == KILN_OK) {
    kiln_workload_options_t options = kiln_workload_options_default();
    status = kiln_workload_build("mlp", &options, allocator, &params, &module);
    if (status != KILN_OK && kiln_params_count(&params) != 1) {
      kiln_status_free(status);
      status = KILN_STATUS(INTERNAL, "a failed build left %zu params", kiln_params_count(&params));
    }
  }
  if (status == KILN_OK && kiln_params_count(&params) != 7) {
    status = KILN_STATUS(INTERNAL, "the mlp has %zu params", kiln_params_count(&params));
  }
  kiln_module_destroy(module);
  kiln_params_deinitialize(&params);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  int64_t attempts = kiln_test_sweep_allocation_failures(mlp_scenario, NULL);
  /* At least the scenario's tensor and entry name, and the build's six
   * tensors and six names: every one of them was made to fail once. */
  assert_true(attempts >= 14);
}

/* ---- fixture ---- */

static int check_no_live_status(void **state) {
  (void)state;
  return kiln_status_live_count() == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_names, check_no_live_status),
      cmocka_unit_test_teardown(test_resnet18, check_no_live_status),
      cmocka_unit_test_teardown(test_resnet34_and_50, check_no_live_status),
      cmocka_unit_test_teardown(test_mobilenet_v2, check_no_live_status),
      cmocka_unit_test_teardown(test_squeezenet1_1, check_no_live_status),
      cmocka_unit_test_teardown(test_mlp, check_no_live_status),
      cmocka_unit_test_teardown(test_transformer, check_no_live_status),
      cmocka_unit_test_teardown(test_batch_and_image_size, check_no_live_status),
      cmocka_unit_test_teardown(test_smallest_images, check_no_live_status),
      cmocka_unit_test_teardown(test_bad_options, check_no_live_status),
      cmocka_unit_test_teardown(test_name_collision_rolls_back, check_no_live_status),
      cmocka_unit_test_teardown(test_builder_errors, check_no_live_status),
      cmocka_unit_test_teardown(test_seeds, check_no_live_status),
      cmocka_unit_test_teardown(test_weights_are_streams_of_seed_and_name, check_no_live_status),
      cmocka_unit_test_teardown(test_weight_ranges, check_no_live_status),
      cmocka_unit_test_teardown(test_random_streams, check_no_live_status),
      cmocka_unit_test_teardown(test_allocation_failures, check_no_live_status),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
