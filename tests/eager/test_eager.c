/*
 * Tests of the eager API (include/kiln/eager.h, src/eager/): tensors from
 * host memory, zeros and .npy files; calls by name and the typed wrappers,
 * checked against numbers written by hand, on the reference kernels
 * (test_cnn.c takes the compiled path); repeated calls (the per-thread memo) that differ in
 * attributes or shapes; every error a call returns at once, each naming what is
 * wrong; run-time errors marking the tensors a failed kernel writes and
 * reaching the right reads (and the next sync) while independent work goes
 * on; queued writes and copies ordered after earlier readers; a barrier
 * that sees everything before it and nothing after it; release of tensors
 * still in use; shutdown with work pending (no hang, no leak, cancelled
 * tensors say so); the environment's set-up order and its errors; and an
 * allocation-failure sweep over a whole session.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "codegen/target.h"
#include "eager/builder.h"
#include "eager/context.h"
#include "eager/vm.h"
#include "kiln/eager.h"
#include "kiln_test.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

static int64_t statuses_at_start;

/* Each test starts from no environment, on the reference kernels. */
static int setup(void **state) {
  (void)state;
  statuses_at_start = kiln_status_live_count();
  kiln_eager_options_t options = kiln_eager_options_default();
  options.reference_kernels = true;
  KILN_ASSERT_OK(kiln_eager_initialize(&options));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  kiln_eager_shutdown();
  assert_int_equal(kiln_status_live_count(), statuses_at_start);
  return 0;
}

static kiln_eager_tensor_t *from_floats(int ndim, const int64_t *shape, const float *data) {
  int64_t count = 1;
  for (int i = 0; i < ndim; ++i) {
    count *= shape[i];
  }
  kiln_eager_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_eager_tensor_from_host(KILN_DTYPE_FLOAT32, ndim, shape, data,
                                             (size_t)count * sizeof(float), &t));
  return t;
}

static void assert_floats(kiln_eager_tensor_t *t, int count, const float *want) {
  kiln_tensor_t *storage = NULL;
  KILN_ASSERT_OK(kiln_eager_tensor_read(t, &storage));
  assert_true(count <= kiln_tensor_element_count(storage));
  float got[64];
  assert_true(count <= 64);
  memcpy(got, kiln_tensor_data(storage), (size_t)count * sizeof(float));
  kiln_tensor_release(storage);
  for (int i = 0; i < count; ++i) {
    if (fabsf(got[i] - want[i]) > 1e-5f) {
      fail_msg("element %d: got %g, want %g", i, (double)got[i], (double)want[i]);
    }
  }
}

static void sleep_ms(int ms) {
  struct timespec ts = {0, (long)ms * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- calls ---- */

static void test_wrappers_compute(void **state) {
  (void)state;
  kiln_eager_tensor_t *a = from_floats(2, SHAPE(2, 3), (const float[]){1, -2, 3, -4, 5, -6});
  kiln_eager_tensor_t *b = from_floats(1, SHAPE(3), (const float[]){10, 20, 30});
  kiln_eager_tensor_t *sum = NULL, *relu = NULL, *product = NULL, *diff = NULL, *quot = NULL;
  KILN_ASSERT_OK(kiln_eager_add(a, b, &sum));
  KILN_ASSERT_OK(kiln_eager_relu(a, &relu));
  KILN_ASSERT_OK(kiln_eager_multiply(sum, relu, &product));
  KILN_ASSERT_OK(kiln_eager_subtract(b, a, &diff));
  KILN_ASSERT_OK(kiln_eager_divide(a, b, &quot));
  assert_int_equal(kiln_eager_tensor_ndim(sum), 2);
  assert_int_equal(kiln_eager_tensor_shape(sum)[1], 3);
  assert_int_equal(kiln_eager_tensor_dtype(sum), KILN_DTYPE_FLOAT32);
  assert_floats(sum, 6, (const float[]){11, 18, 33, 6, 25, 24});
  assert_floats(relu, 6, (const float[]){1, 0, 3, 0, 5, 0});
  assert_floats(product, 6, (const float[]){11, 0, 99, 0, 125, 0});
  assert_floats(diff, 6, (const float[]){9, 22, 27, 14, 15, 36});
  assert_floats(quot, 6, (const float[]){0.1f, -0.1f, 0.1f, -0.4f, 0.25f, -0.2f});
  kiln_eager_tensor_t *soft = NULL, *sig = NULL, *th = NULL;
  KILN_ASSERT_OK(kiln_eager_softmax(b, 0, &soft));
  KILN_ASSERT_OK(kiln_eager_sigmoid(a, &sig));
  KILN_ASSERT_OK(kiln_eager_tanh(a, &th));
  float e0 = expf(-20.0f), e1 = expf(-10.0f), z = e0 + e1 + 1.0f;
  assert_floats(soft, 3, (const float[]){e0 / z, e1 / z, 1.0f / z});
  assert_floats(sig, 2, (const float[]){1.0f / (1.0f + expf(-1.0f)), 1.0f / (1.0f + expf(2.0f))});
  assert_floats(th, 2, (const float[]){tanhf(1.0f), tanhf(-2.0f)});
  kiln_eager_tensor_t *all[] = {a, b, sum, relu, product, diff, quot, soft, sig, th};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
    kiln_eager_tensor_release(all[i]);
  }
  KILN_ASSERT_OK(kiln_eager_sync());
}

static void test_nn_wrappers(void **state) {
  (void)state;
  /* x (1, 1, 3, 3) = 1..9, w (2, 1, 2, 2): ones and an identity corner. */
  float xs[9];
  for (int i = 0; i < 9; ++i) {
    xs[i] = (float)(i + 1);
  }
  kiln_eager_tensor_t *x = from_floats(4, SHAPE(1, 1, 3, 3), xs);
  kiln_eager_tensor_t *w =
      from_floats(4, SHAPE(2, 1, 2, 2), (const float[]){1, 1, 1, 1, 1, 0, 0, 0});
  kiln_eager_tensor_t *bias = from_floats(1, SHAPE(2), (const float[]){100, -1});
  kiln_eager_tensor_t *conv = NULL, *biased = NULL, *pool = NULL, *gap = NULL, *flat = NULL;
  KILN_ASSERT_OK(kiln_eager_conv2d(x, w, SHAPE(1, 1), SHAPE(0, 0, 0, 0), &conv));
  KILN_ASSERT_OK(kiln_eager_bias_add(conv, bias, 1, &biased));
  KILN_ASSERT_OK(kiln_eager_max_pool2d(biased, SHAPE(2, 2), SHAPE(1, 1), SHAPE(0, 0, 0, 0), &pool));
  KILN_ASSERT_OK(kiln_eager_global_avg_pool2d(biased, &gap));
  KILN_ASSERT_OK(kiln_eager_batch_flatten(gap, &flat));
  /* conv channel 0: 2x2 window sums 12 16 24 28; channel 1: x itself 1 2 4 5. */
  assert_floats(biased, 8, (const float[]){112, 116, 124, 128, 0, 1, 3, 4});
  assert_floats(pool, 2, (const float[]){128, 4});
  assert_int_equal(kiln_eager_tensor_ndim(flat), 2);
  assert_floats(flat, 2, (const float[]){120, 2});
  kiln_eager_tensor_t *wd = from_floats(2, SHAPE(3, 2), (const float[]){1, 0, 0, 1, 1, 1});
  kiln_eager_tensor_t *dense = NULL;
  KILN_ASSERT_OK(kiln_eager_dense(flat, wd, &dense));
  assert_floats(dense, 3, (const float[]){120, 2, 122});
  kiln_eager_tensor_t *all[] = {x, w, bias, conv, biased, pool, gap, flat, wd, dense};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
    kiln_eager_tensor_release(all[i]);
  }
}

static void test_call_by_name_with_attributes(void **state) {
  (void)state;
  kiln_eager_tensor_t *x = from_floats(2, SHAPE(2, 3), (const float[]){-5, -1, 0, 1, 2, 9});
  kiln_eager_attr_t attrs[] = {{"a_min", "-2.0"}, {"a_max", "3.0"}};
  kiln_eager_tensor_t *out[2] = {NULL, NULL};
  int count = 0;
  KILN_ASSERT_OK(kiln_eager_call("clip", 1, &x, 2, attrs, 2, &count, out));
  assert_int_equal(count, 1);
  assert_floats(out[0], 6, (const float[]){-2, -1, 0, 1, 2, 3});
  /* A tuple-typed operator: its outputs flattened. */
  kiln_eager_attr_t split_attrs[] = {{"indices", "[1]"}, {"axis", "1"}};
  kiln_eager_tensor_t *parts[4] = {NULL};
  KILN_ASSERT_OK(kiln_eager_call("split", 1, &x, 2, split_attrs, 4, &count, parts));
  assert_int_equal(count, 2);
  assert_floats(parts[0], 2, (const float[]){-5, 1});
  assert_floats(parts[1], 4, (const float[]){-1, 0, 2, 9});
  /* call_into writes an existing tensor, after its earlier reader. */
  KILN_ASSERT_OK(kiln_eager_call_into("negative", 1, &x, 0, NULL, 1, out));
  assert_floats(out[0], 6, (const float[]){5, 1, 0, -1, -2, -9});
  kiln_eager_tensor_release(out[0]);
  kiln_eager_tensor_release(parts[0]);
  kiln_eager_tensor_release(parts[1]);
  kiln_eager_tensor_release(x);
}

/* Repeated calls hit the per-thread memo; it must tell attributes, shapes
 * and dtypes apart. */
static void test_repeated_calls_keep_attributes_and_shapes_apart(void **state) {
  (void)state;
  kiln_eager_tensor_t *x = from_floats(2, SHAPE(2, 2), (const float[]){0, 0, 0, 1});
  kiln_eager_tensor_t *wide = from_floats(2, SHAPE(1, 4), (const float[]){0, 0, 0, 0});
  for (int round = 0; round < 3; ++round) {
    kiln_eager_tensor_t *a0 = NULL, *a1 = NULL, *w1 = NULL;
    KILN_ASSERT_OK(kiln_eager_softmax(x, 0, &a0));
    KILN_ASSERT_OK(kiln_eager_softmax(x, 1, &a1));
    KILN_ASSERT_OK(kiln_eager_softmax(wide, 1, &w1));
    float e = expf(1.0f);
    assert_floats(a0, 4, (const float[]){0.5f, 1 / (1 + e), 0.5f, e / (1 + e)});
    assert_floats(a1, 4, (const float[]){0.5f, 0.5f, 1 / (1 + e), e / (1 + e)});
    assert_floats(w1, 4, (const float[]){0.25f, 0.25f, 0.25f, 0.25f});
    assert_int_equal(kiln_eager_tensor_shape(w1)[1], 4);
    kiln_eager_tensor_release(a0);
    kiln_eager_tensor_release(a1);
    kiln_eager_tensor_release(w1);
  }
  /* A new environment: the memo's entries of the old one are not used. */
  kiln_eager_shutdown();
  kiln_eager_tensor_t *b = NULL;
  KILN_ASSERT_OK(kiln_eager_softmax(x, 1, &b));
  float e = expf(1.0f);
  assert_floats(b, 4, (const float[]){0.5f, 0.5f, 1 / (1 + e), e / (1 + e)});
  kiln_eager_tensor_release(b);
  kiln_eager_tensor_release(x);
  kiln_eager_tensor_release(wide);
}

static void test_call_errors(void **state) {
  (void)state;
  kiln_eager_tensor_t *a = from_floats(1, SHAPE(3), (const float[]){1, 2, 3});
  kiln_eager_tensor_t *b = from_floats(1, SHAPE(4), (const float[]){1, 2, 3, 4});
  kiln_eager_tensor_t *out = NULL;
  kiln_eager_tensor_t *outs[2] = {NULL, NULL};
  int count = 7;
  KILN_ASSERT_STATUS(kiln_eager_call("nn.nothing", 1, &a, 0, NULL, 1, &count, outs), NOT_FOUND,
                     "no operator named 'nn.nothing'");
  assert_int_equal(count, 0);
  assert_null(outs[0]);
  KILN_ASSERT_STATUS(kiln_eager_add(a, b, &out), INVALID_ARGUMENT, "add");
  assert_null(out);
  kiln_eager_attr_t bad_name[] = {{"axes", "1"}};
  KILN_ASSERT_STATUS(kiln_eager_call("nn.softmax", 1, &a, 1, bad_name, 1, &count, outs),
                     INVALID_ARGUMENT, "axes");
  kiln_eager_attr_t bad_value[] = {{"axis", "\"x\""}};
  KILN_ASSERT_STATUS(kiln_eager_call("nn.softmax", 1, &a, 1, bad_value, 1, &count, outs),
                     INVALID_ARGUMENT, "axis");
  kiln_eager_attr_t no_value[] = {{"axis", NULL}};
  KILN_ASSERT_STATUS(kiln_eager_call("nn.softmax", 1, &a, 1, no_value, 1, &count, outs),
                     INVALID_ARGUMENT, "nn.softmax: attribute 0 has no name or no value");
  KILN_ASSERT_STATUS(
      kiln_eager_call("add", 2, (kiln_eager_tensor_t *[]){a, a}, 1, bad_name, 1, &count, outs),
      INVALID_ARGUMENT, "add: takes no attributes, got \"axes\"");
  KILN_ASSERT_STATUS(
      kiln_eager_call("add", 2, (kiln_eager_tensor_t *[]){a, NULL}, 0, NULL, 1, &count, outs),
      INVALID_ARGUMENT, "add: input 1 is NULL");
  kiln_eager_attr_t split_attrs[] = {{"sections", "3"}};
  KILN_ASSERT_STATUS(kiln_eager_call("split", 1, &a, 1, split_attrs, 2, &count, outs),
                     INVALID_ARGUMENT, "split: makes 3 outputs, room for 2");
  /* call_into: aliasing, duplicates, count, dtype and shape. */
  KILN_ASSERT_STATUS(kiln_eager_call_into("nn.relu", 1, &a, 0, NULL, 1, &a), INVALID_ARGUMENT,
                     "nn.relu: output 0 is also input 0; write to another tensor");
  KILN_ASSERT_STATUS(kiln_eager_call_into("nn.relu", 1, &a, 0, NULL, 2, outs), INVALID_ARGUMENT,
                     "nn.relu: makes 1 outputs, 2 given");
  KILN_ASSERT_STATUS(kiln_eager_call_into("nn.relu", 1, &a, 0, NULL, 1, &b), INVALID_ARGUMENT,
                     "nn.relu: output 0 is float32 (4,), expected float32 (3,)");
  kiln_eager_tensor_t *p0 = NULL;
  KILN_ASSERT_OK(kiln_eager_tensor_zeros(KILN_DTYPE_FLOAT32, 1, SHAPE(1), &p0));
  kiln_eager_tensor_t *twice[] = {p0, p0};
  kiln_eager_attr_t halves[] = {{"indices", "[1]"}};
  kiln_eager_tensor_t *two = NULL;
  KILN_ASSERT_OK(kiln_eager_tensor_zeros(KILN_DTYPE_FLOAT32, 1, SHAPE(2), &two));
  KILN_ASSERT_STATUS(kiln_eager_call_into("split", 1, &two, 1, halves, 2, twice), INVALID_ARGUMENT,
                     "split: output 1 is also output 0");
  /* Writes and copies. */
  float four[4] = {0};
  KILN_ASSERT_STATUS(kiln_eager_tensor_write(a, four, sizeof(four)), INVALID_ARGUMENT,
                     "kiln_eager_tensor_write: the tensor holds 12 bytes, the buffer 16");
  KILN_ASSERT_STATUS(kiln_eager_tensor_copy_to_host(a, four, sizeof(four)), INVALID_ARGUMENT,
                     "kiln_eager_tensor_copy_to_host: the tensor holds 12 bytes, the buffer 16");
  KILN_ASSERT_STATUS(kiln_eager_copy(a, b), INVALID_ARGUMENT,
                     "kiln_eager_copy: the source is float32 (3,), the destination float32 (4,)");
  KILN_ASSERT_STATUS(kiln_eager_copy(a, a), INVALID_ARGUMENT, "the source is the destination");
  KILN_ASSERT_STATUS(kiln_eager_tensor_from_host(KILN_DTYPE_FLOAT32, 1, SHAPE(3), four, 16, &out),
                     INVALID_ARGUMENT, "kiln_eager_tensor_from_host");
  KILN_ASSERT_STATUS(kiln_eager_tensor_from_npy("/nonexistent/x.npy", &out), NOT_FOUND,
                     "/nonexistent/x.npy");
  kiln_eager_tensor_release(p0);
  kiln_eager_tensor_release(two);
  kiln_eager_tensor_release(a);
  kiln_eager_tensor_release(b);
  /* Nothing failed at run time. */
  KILN_ASSERT_OK(kiln_eager_sync());
}

static void test_tensors_from_npy_and_wrap(void **state) {
  (void)state;
  kiln_eager_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_eager_tensor_from_npy(KILN_TEST_DATA_DIR "/npy/float32_2x3x4.npy", &t));
  assert_int_equal(kiln_eager_tensor_ndim(t), 3);
  assert_int_equal(kiln_eager_tensor_shape(t)[2], 4);
  kiln_tensor_t *storage = NULL;
  KILN_ASSERT_OK(kiln_eager_tensor_read(t, &storage));
  kiln_eager_tensor_t *wrapped = NULL, *neg = NULL;
  KILN_ASSERT_OK(kiln_eager_tensor_wrap(storage, &wrapped));
  int count = 0;
  KILN_ASSERT_OK(kiln_eager_call("negative", 1, &wrapped, 0, NULL, 1, &count, &neg));
  kiln_tensor_t *result = NULL;
  KILN_ASSERT_OK(kiln_eager_tensor_read(neg, &result));
  for (int64_t i = 0; i < 24; ++i) {
    assert_true(kiln_tensor_element_as_double(result, i) ==
                -kiln_tensor_element_as_double(storage, i));
  }
  kiln_tensor_release(result);
  kiln_tensor_release(storage);
  kiln_eager_tensor_release(neg);
  kiln_eager_tensor_release(wrapped);
  kiln_eager_tensor_release(t);
}

/* ---- run-time errors ---- */

static void test_error_reaches_the_dependent_reads_only(void **state) {
  (void)state;
  double doubles[3] = {1, 2, 3};
  kiln_eager_tensor_t *h = NULL, *bad = NULL, *worse = NULL, *fine = NULL, *copied = NULL;
  KILN_ASSERT_OK(
      kiln_eager_tensor_from_host(KILN_DTYPE_FLOAT64, 1, SHAPE(3), doubles, sizeof(doubles), &h));
  kiln_eager_tensor_t *x = from_floats(1, SHAPE(3), (const float[]){1, -2, 3});
  /* float64 passes the type relation; the reference kernel refuses it when it runs. */
  kiln_eager_tensor_t *softmax = NULL;
  int count = 0;
  KILN_ASSERT_OK(kiln_eager_call("nn.softmax", 1, &h, 0, NULL, 1, &count, &softmax));
  bad = softmax;
  KILN_ASSERT_OK(kiln_eager_relu(bad, &worse));
  KILN_ASSERT_OK(kiln_eager_relu(x, &fine));
  KILN_ASSERT_OK(kiln_eager_tensor_zeros(KILN_DTYPE_FLOAT64, 1, SHAPE(3), &copied));
  KILN_ASSERT_OK(kiln_eager_copy(worse, copied));
  assert_floats(fine, 3, (const float[]){1, 0, 3});
  kiln_tensor_t *storage = NULL;
  const char *message = "nn.softmax: the reference kernel does not handle dtype float64";
  KILN_ASSERT_STATUS(kiln_eager_tensor_read(bad, &storage), UNIMPLEMENTED, message);
  assert_null(storage);
  KILN_ASSERT_STATUS(kiln_eager_tensor_read(worse, &storage), UNIMPLEMENTED, message);
  KILN_ASSERT_STATUS(kiln_eager_tensor_read(copied, &storage), UNIMPLEMENTED, message);
  /* The error stays on the tensor: read it again. */
  KILN_ASSERT_STATUS(kiln_eager_tensor_read(bad, &storage), UNIMPLEMENTED, message);
  /* The sync reports it once, then forgets it. */
  KILN_ASSERT_STATUS(kiln_eager_sync(), UNIMPLEMENTED, message);
  KILN_ASSERT_OK(kiln_eager_sync());
  /* A later successful write clears a failed tensor. */
  double zeros[3] = {0, 0, 0};
  KILN_ASSERT_OK(kiln_eager_tensor_write(bad, zeros, sizeof(zeros)));
  KILN_ASSERT_OK(kiln_eager_tensor_read(bad, &storage));
  kiln_tensor_release(storage);
  kiln_eager_tensor_t *all[] = {h, bad, worse, fine, copied, x};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
    kiln_eager_tensor_release(all[i]);
  }
}

/* ---- ordering ---- */

static void test_writes_wait_for_earlier_readers(void **state) {
  (void)state;
  kiln_eager_tensor_t *x = from_floats(1, SHAPE(2), (const float[]){1, 2});
  kiln_eager_tensor_t *outs[40];
  for (int i = 0; i < 40; ++i) {
    float values[2] = {(float)(10 * i), (float)(10 * i + 1)};
    KILN_ASSERT_OK(kiln_eager_relu(x, &outs[i]));          /* reads x */
    KILN_ASSERT_OK(kiln_eager_tensor_write(x, values, 8)); /* then overwrites it */
  }
  float first[2] = {1, 2};
  assert_floats(outs[0], 2, first);
  for (int i = 1; i < 40; ++i) {
    float want[2] = {(float)(10 * (i - 1)), (float)(10 * (i - 1) + 1)};
    assert_floats(outs[i], 2, want);
  }
  assert_floats(x, 2, (const float[]){390, 391});
  for (int i = 0; i < 40; ++i) {
    kiln_eager_tensor_release(outs[i]);
  }
  kiln_eager_tensor_release(x);
}

typedef struct barrier_probe_t {
  kiln_eager_tensor_t *tensor;
  float seen;
  atomic_int calls;
} barrier_probe_t;

/* Runs on the scheduler thread: waits long enough for a later write to have
 * run, were it allowed to, then looks at the tensor. */
static void probe_barrier(void *user, kiln_status_t status) {
  barrier_probe_t *probe = user;
  assert_null(status);
  sleep_ms(30);
  memcpy(&probe->seen, kiln_tensor_data(probe->tensor->storage), sizeof(float));
  atomic_fetch_add(&probe->calls, 1);
}

static void test_barrier_sees_everything_before_and_nothing_after(void **state) {
  (void)state;
  kiln_eager_tensor_t *t = from_floats(1, SHAPE(1), (const float[]){0});
  kiln_eager_tensor_t *src = from_floats(1, SHAPE(1), (const float[]){2});
  barrier_probe_t probe = {t, -1, 0};
  for (int i = 0; i < 50; ++i) {
    float one = 1;
    KILN_ASSERT_OK(kiln_eager_tensor_write(t, &one, sizeof(one)));
  }
  kiln_eager_builder_t builder;
  kiln_eager_context_t *context = NULL;
  KILN_ASSERT_OK(kiln_eager_context_default(&context));
  KILN_ASSERT_OK(kiln_eager_builder_initialize(&builder, context, "test"));
  KILN_ASSERT_OK(kiln_eager_builder_barrier(&builder, probe_barrier, &probe));
  kiln_eager_builder_submit(&builder);
  KILN_ASSERT_OK(kiln_eager_copy(src, t)); /* queued after the barrier: writes 2 */
  assert_floats(t, 1, (const float[]){2});
  KILN_ASSERT_OK(kiln_eager_sync());
  assert_int_equal(atomic_load(&probe.calls), 1);
  assert_true(probe.seen == 1.0f);
  kiln_eager_tensor_release(t);
  kiln_eager_tensor_release(src);
}

static void test_resolution_is_cached_and_tied_to_stream_types(void **state) {
  (void)state;
  kiln_eager_context_t *env = NULL;
  KILN_ASSERT_OK(kiln_eager_context_default(&env));
  const kiln_eager_resolved_t *a = NULL, *b = NULL;
  KILN_ASSERT_OK(kiln_eager_vm_resolve(env->vm, "cpu.call_kernel", &a));
  KILN_ASSERT_OK(kiln_eager_vm_resolve(env->vm, "cpu.call_kernel", &b));
  assert_ptr_equal(a, b);
  assert_ptr_equal(a, env->call_kernel);
  assert_string_equal(a->stream_type->name, "cpu.compute");
  assert_false(a->stream_type->on_scheduler_thread);
  assert_string_equal(env->copy->stream_type->name, "cpu.copy");
  assert_ptr_not_equal(env->copy->stream, a->stream);
  assert_string_equal(env->barrier->stream_type->name, "control");
  assert_true(env->barrier->stream_type->on_scheduler_thread);
  assert_true(env->barrier->type->front_sequential);
  KILN_ASSERT_STATUS(kiln_eager_vm_resolve(env->vm, "gpu.call_kernel", &a), NOT_FOUND,
                     "no instruction type named \"gpu.call_kernel\"");
  /* Registries: duplicates, and a type tied to a stream type nobody registered. */
  kiln_eager_stream_type_registry_t streams;
  kiln_eager_stream_type_registry_initialize(&streams);
  KILN_ASSERT_OK(kiln_eager_stream_types_register_builtin(&streams));
  KILN_ASSERT_STATUS(kiln_eager_stream_type_register(&streams, &kiln_eager_stream_type_control),
                     ALREADY_EXISTS, "stream type \"control\" is already registered");
  kiln_eager_instruction_type_registry_t types;
  kiln_eager_instruction_type_registry_initialize(&types);
  kiln_eager_instruction_type_t orphan = {"gpu.call_kernel", "gpu.compute", false, NULL};
  KILN_ASSERT_STATUS(kiln_eager_instruction_type_register(&types, &streams, &orphan), NOT_FOUND,
                     "instruction type \"gpu.call_kernel\": no stream type named \"gpu.compute\"");
  KILN_ASSERT_OK(kiln_eager_instruction_types_register_builtin(&types, &streams));
  KILN_ASSERT_STATUS(kiln_eager_instruction_types_register_builtin(&types, &streams),
                     ALREADY_EXISTS, "instruction type \"cpu.call_kernel\" is already registered");
}

/* ---- lifetime ---- */

static void test_release_while_in_use(void **state) {
  (void)state;
  kiln_eager_shutdown();
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_eager_options_t options = kiln_eager_options_default();
  options.allocator = kiln_counting_allocator_get(&counting);
  options.reference_kernels = true;
  KILN_ASSERT_OK(kiln_eager_initialize(&options));
  kiln_eager_tensor_t *x = from_floats(1, SHAPE(4), (const float[]){1, -2, 3, -4});
  kiln_eager_tensor_t *warm = NULL; /* the kernel cache's entry is the environment's */
  KILN_ASSERT_OK(kiln_eager_relu(x, &warm));
  kiln_eager_tensor_release(warm);
  KILN_ASSERT_OK(kiln_eager_sync());
  sleep_ms(20);
  long long blocks_with_env =
      kiln_counting_allocator_counts(&counting).live_blocks - 2; /* x: header, storage */
  kiln_eager_tensor_t *chain = x;
  kiln_eager_tensor_retain(chain);
  for (int i = 0; i < 200; ++i) {
    kiln_eager_tensor_t *next = NULL;
    KILN_ASSERT_OK(kiln_eager_relu(chain, &next));
    kiln_eager_tensor_release(chain); /* queued work still reads it */
    chain = next;
  }
  kiln_eager_tensor_release(x);
  assert_floats(chain, 4, (const float[]){1, 0, 3, 0});
  kiln_eager_tensor_release(chain);
  KILN_ASSERT_OK(kiln_eager_sync());
  /* Once the finished instructions are released, only the environment is left. */
  for (int i = 0;
       i < 1000 && kiln_counting_allocator_counts(&counting).live_blocks != blocks_with_env; ++i) {
    sleep_ms(1);
  }
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, blocks_with_env);
  kiln_eager_shutdown();
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);
}

/* A chain of 500 sigmoids on a large tensor, then kiln_eager_shutdown at
 * once; returns how many of the chain were cancelled (the rest computed). */
static int shutdown_during_chain(void) {
  kiln_eager_shutdown();
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_eager_options_t options = kiln_eager_options_default();
  options.allocator = kiln_counting_allocator_get(&counting);
  options.reference_kernels = true;
  KILN_ASSERT_OK(kiln_eager_initialize(&options));
  /* A long chain on a large tensor, so most of it is still queued. */
  int64_t n = 1 << 16;
  kiln_eager_tensor_t *first = NULL;
  KILN_ASSERT_OK(kiln_eager_tensor_zeros(KILN_DTYPE_FLOAT32, 1, &n, &first));
  kiln_eager_tensor_t *chain[500];
  kiln_eager_tensor_t *previous = first;
  for (int i = 0; i < 500; ++i) {
    KILN_ASSERT_OK(kiln_eager_sigmoid(previous, &chain[i]));
    previous = chain[i];
  }
  kiln_eager_shutdown(); /* must neither hang nor leak */
  /* Every tensor is readable: computed, or cancelled with a message that says so. */
  int cancelled = 0;
  for (int i = 0; i < 500; ++i) {
    kiln_tensor_t *storage = NULL;
    kiln_status_t status = kiln_eager_tensor_read(chain[i], &storage);
    if (status) {
      assert_int_equal(kiln_status_code(status), KILN_STATUS_CODE_CANCELLED);
      assert_non_null(
          strstr(kiln_status_message(status), "sigmoid: cancelled by kiln_eager_shutdown"));
      kiln_status_free(status);
      cancelled++;
    } else {
      assert_true(cancelled == 0); /* a chain: once one is cancelled, so are the rest */
      kiln_tensor_release(storage);
    }
  }
  for (int i = 0; i < 500; ++i) {
    kiln_eager_tensor_release(chain[i]);
  }
  kiln_eager_tensor_release(first);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);
  return cancelled;
}

/* Shutdown with work pending cancels the rest of it. Whether any is still
 * pending when shutdown comes is up to the scheduler (under ThreadSanitizer
 * the worker once finished all 500 first), so the scenario is tried up to
 * five times and must cancel something at least once; every try checks
 * that nothing hangs or leaks and that each tensor is computed or says it
 * was cancelled. */
static void test_shutdown_with_pending_work(void **state) {
  (void)state;
  int cancelled = 0;
  for (int attempt = 0; attempt < 5 && cancelled == 0; ++attempt) {
    cancelled = shutdown_during_chain();
  }
  assert_true(cancelled > 0);
  /* The next call sets a new environment up (here, with the defaults). */
  kiln_eager_tensor_t *x = from_floats(1, SHAPE(1), (const float[]){-3});
  kiln_eager_tensor_t *y = NULL;
  KILN_ASSERT_OK(kiln_eager_relu(x, &y));
  assert_floats(y, 1, (const float[]){0});
  kiln_eager_tensor_release(x);
  kiln_eager_tensor_release(y);
}

static void test_environment_set_up_order_and_errors(void **state) {
  (void)state;
  const char *expected[] = {"stream types", "instruction types", "kernel cache", "vm",
                            "instruction type resolutions"};
  assert_int_equal(kiln_eager_context_step_count(), 5);
  for (int i = 0; i < 5; ++i) {
    assert_string_equal(kiln_eager_context_step_name(i), expected[i]);
  }
  assert_null(kiln_eager_context_step_name(5));
  KILN_ASSERT_STATUS(kiln_eager_initialize(NULL), FAILED_PRECONDITION,
                     "kiln_eager_initialize: the eager environment is already set up");
  kiln_eager_options_t got;
  KILN_ASSERT_OK(kiln_eager_get_options(&got));
  assert_true(got.reference_kernels);
  assert_string_equal(got.target, kiln_codegen_default_jit_target());
  kiln_eager_shutdown();
  kiln_eager_shutdown(); /* twice is fine */
  kiln_eager_options_t options = kiln_eager_options_default();
  options.target = "nonsense";
  KILN_ASSERT_STATUS(kiln_eager_initialize(&options), NOT_FOUND,
                     "eager environment: kernel cache: kernel cache: unknown code-generation "
                     "target \"nonsense\"");
  options.target = NULL;
  KILN_ASSERT_OK(kiln_eager_initialize(&options));
}

/* ---- allocation failures ---- */

static kiln_status_t session(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_eager_options_t options = kiln_eager_options_default();
  options.allocator = allocator;
  options.reference_kernels = true;
  KILN_RETURN_IF_ERROR(kiln_eager_initialize(&options));
  float data[3] = {1, -2, 3}, got[3] = {0};
  kiln_eager_tensor_t *x = NULL, *y = NULL, *z = NULL;
  kiln_status_t status =
      kiln_eager_tensor_from_host(KILN_DTYPE_FLOAT32, 1, SHAPE(3), data, sizeof(data), &x);
  if (!status) {
    status = kiln_eager_relu(x, &y);
  }
  if (!status) {
    kiln_eager_attr_t attrs[] = {{"axis", "0"}};
    int count = 0;
    status = kiln_eager_call("nn.softmax", 1, &y, 1, attrs, 1, &count, &z);
  }
  if (!status) {
    status = kiln_eager_tensor_write(x, data, sizeof(data));
  }
  if (!status) {
    status = kiln_eager_copy(x, y);
  }
  if (!status) {
    status = kiln_eager_tensor_copy_to_host(z, got, sizeof(got));
  }
  if (!status) {
    status = kiln_eager_sync();
  }
  kiln_eager_tensor_release(x);
  kiln_eager_tensor_release(y);
  kiln_eager_tensor_release(z);
  kiln_eager_shutdown();
  if (!status && !(got[1] < got[0] && got[0] < got[2])) {
    status = KILN_STATUS(INTERNAL, "softmax values out of order");
  }
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  kiln_eager_shutdown();
  assert_true(kiln_test_sweep_allocation_failures(session, NULL) > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_wrappers_compute, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nn_wrappers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_call_by_name_with_attributes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_repeated_calls_keep_attributes_and_shapes_apart, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_call_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tensors_from_npy_and_wrap, setup, teardown),
      cmocka_unit_test_setup_teardown(test_error_reaches_the_dependent_reads_only, setup, teardown),
      cmocka_unit_test_setup_teardown(test_writes_wait_for_earlier_readers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_barrier_sees_everything_before_and_nothing_after, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_resolution_is_cached_and_tied_to_stream_types, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_release_while_in_use, setup, teardown),
      cmocka_unit_test_setup_teardown(test_shutdown_with_pending_work, setup, teardown),
      cmocka_unit_test_setup_teardown(test_environment_set_up_order_and_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
