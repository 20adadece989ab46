/*
 * Explicit eager contexts (kiln_eager_context_t; docs/eager.md), through
 * the public header only: two contexts in one process are independent.
 * Each runs operators and reads its results; two threads, one per context,
 * grow chains at the same time (run under ThreadSanitizer by `make
 * test-tsan`); one context is destroyed while the other keeps working, its
 * tensors stay readable and new work on them is refused; tensors of two
 * contexts never meet in one call; the default context is the one the
 * context-less calls use; memory comes back once the last tensor of a
 * destroyed context goes.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "kiln/eager.h"
#include "kiln_test.h"

#define LENGTH     9
#define CHAIN      200
#define NUM_ROUNDS 3

static kiln_eager_options_t reference_options(kiln_allocator_t allocator) {
  kiln_eager_options_t options = kiln_eager_options_default();
  options.allocator = allocator;
  options.reference_kernels = true;
  return options;
}

static kiln_eager_tensor_t *vector_in(kiln_eager_context_t *context, const float *values) {
  int64_t shape[] = {LENGTH};
  kiln_eager_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_eager_context_tensor_from_host(context, KILN_DTYPE_FLOAT32, 1, shape, values,
                                                     LENGTH * sizeof(float), &tensor));
  return tensor;
}

static void ramp(float start, float step, float *values) {
  for (int i = 0; i < LENGTH; ++i) {
    values[i] = start + step * (float)i;
  }
}

static void assert_vector(kiln_eager_tensor_t *tensor, const float *expected) {
  float got[LENGTH];
  KILN_ASSERT_OK(kiln_eager_tensor_copy_to_host(tensor, got, sizeof(got)));
  for (int i = 0; i < LENGTH; ++i) {
    assert_true(fabsf(got[i] - expected[i]) <= 1e-5f * (1 + fabsf(expected[i])));
  }
}

/* y = x * scale + offset, elementwise, in the context of x. */
static kiln_eager_tensor_t *affine(kiln_eager_tensor_t *x, kiln_eager_tensor_t *scale,
                                   kiln_eager_tensor_t *offset) {
  kiln_eager_tensor_t *product = NULL, *sum = NULL;
  KILN_ASSERT_OK(kiln_eager_multiply(x, scale, &product));
  KILN_ASSERT_OK(kiln_eager_add(product, offset, &sum));
  kiln_eager_tensor_release(product);
  return sum;
}

static void test_two_contexts_compute_apart(void **state) {
  (void)state;
  kiln_eager_options_t options = reference_options(kiln_allocator_system());
  kiln_eager_context_t *a = NULL, *b = NULL;
  KILN_ASSERT_OK(kiln_eager_context_create(&options, &a));
  KILN_ASSERT_OK(kiln_eager_context_create(NULL, &b)); /* the defaults: compiled kernels */
  assert_ptr_not_equal(a, b);
  float xs[LENGTH], twos[LENGTH], ones[LENGTH], want[LENGTH];
  ramp(-4, 1, xs);
  ramp(2, 0, twos);
  ramp(1, 0, ones);
  kiln_eager_tensor_t *xa = vector_in(a, xs), *sa = vector_in(a, twos), *oa = vector_in(a, ones);
  kiln_eager_tensor_t *xb = vector_in(b, xs), *sb = vector_in(b, ones), *ob = vector_in(b, twos);
  assert_ptr_equal(kiln_eager_tensor_context(xa), a);
  assert_ptr_equal(kiln_eager_tensor_context(xb), b);
  kiln_eager_tensor_t *ya = affine(xa, sa, oa), *yb = affine(xb, sb, ob);
  assert_ptr_equal(kiln_eager_tensor_context(ya), a);
  for (int i = 0; i < LENGTH; ++i) {
    want[i] = xs[i] * 2 + 1;
  }
  assert_vector(ya, want);
  for (int i = 0; i < LENGTH; ++i) {
    want[i] = xs[i] + 2;
  }
  assert_vector(yb, want);
  KILN_ASSERT_OK(kiln_eager_context_sync(a));
  KILN_ASSERT_OK(kiln_eager_context_sync(b));
  kiln_eager_options_t got;
  KILN_ASSERT_OK(kiln_eager_context_get_options(a, &got));
  assert_true(got.reference_kernels);
  assert_non_null(got.target);
  kiln_eager_kernel_stats_t stats;
  KILN_ASSERT_OK(kiln_eager_context_get_kernel_stats(a, &stats));
  assert_int_equal(stats.lookups, 2); /* multiply and add; a's own count */
  assert_int_equal(stats.compiled, 0);
  kiln_eager_tensor_t *tensors[] = {xa, sa, oa, ya, xb, sb, ob, yb};
  for (size_t i = 0; i < sizeof(tensors) / sizeof(tensors[0]); ++i) {
    kiln_eager_tensor_release(tensors[i]);
  }
  kiln_eager_context_destroy(a);
  kiln_eager_context_destroy(b);
}

/* ---- one thread per context ---- */

typedef struct chain_t {
  kiln_eager_context_t *context;
  float scale; /* each step: x = x * scale + 1 */
  float result[LENGTH];
  char error[256]; /* empty when every step went well */
} chain_t;

static void chain_fail(chain_t *chain, const char *what, kiln_status_t status) {
  snprintf(chain->error, sizeof(chain->error), "%s: %s", what, kiln_status_message(status));
  kiln_status_free(status);
}

/* CHAIN steps, each read back every 50 (a read waits for its writer). */
static void *run_chain(void *argument) {
  chain_t *chain = argument;
  float xs[LENGTH], scales[LENGTH], ones[LENGTH];
  ramp(0.5f, 0.25f, xs);
  ramp(chain->scale, 0, scales);
  ramp(1, 0, ones);
  int64_t shape[] = {LENGTH};
  kiln_eager_tensor_t *x = NULL, *s = NULL, *o = NULL;
  kiln_status_t status = kiln_eager_context_tensor_from_host(chain->context, KILN_DTYPE_FLOAT32, 1,
                                                             shape, xs, sizeof(xs), &x);
  status = status ? status
                  : kiln_eager_context_tensor_from_host(chain->context, KILN_DTYPE_FLOAT32, 1,
                                                        shape, scales, sizeof(scales), &s);
  status = status ? status
                  : kiln_eager_context_tensor_from_host(chain->context, KILN_DTYPE_FLOAT32, 1,
                                                        shape, ones, sizeof(ones), &o);
  for (int step = 0; step < CHAIN && !status; ++step) {
    kiln_eager_tensor_t *product = NULL, *next = NULL;
    status = kiln_eager_multiply(x, s, &product);
    status = status ? status : kiln_eager_add(product, o, &next);
    kiln_eager_tensor_release(product);
    if (!status) {
      kiln_eager_tensor_release(x);
      x = next;
    }
    if (!status && step % 50 == 49) {
      status = kiln_eager_tensor_copy_to_host(x, chain->result, sizeof(chain->result));
    }
  }
  status =
      status ? status : kiln_eager_tensor_copy_to_host(x, chain->result, sizeof(chain->result));
  status = status ? status : kiln_eager_context_sync(chain->context);
  if (status) {
    chain_fail(chain, "chain", status);
  }
  kiln_eager_tensor_release(x);
  kiln_eager_tensor_release(s);
  kiln_eager_tensor_release(o);
  return NULL;
}

/* What run_chain computes, on the host in the same order. */
static void chain_expected(float scale, float *out) {
  ramp(0.5f, 0.25f, out);
  for (int step = 0; step < CHAIN; ++step) {
    for (int i = 0; i < LENGTH; ++i) {
      out[i] = out[i] * scale + 1;
    }
  }
}

/* Round 0 on reference kernels, round 1 on compiled ones (the two
 * contexts' first calls race to the process's kernel store), round 2 one
 * of each. */
static void test_one_thread_per_context(void **state) {
  (void)state;
  kiln_eager_options_t options[2] = {reference_options(kiln_allocator_system()),
                                     kiln_eager_options_default()};
  options[1].reference_kernels = false;
  chain_t chains[2] = {{.scale = 0.5f}, {.scale = -0.75f}};
  for (int round = 0; round < NUM_ROUNDS; ++round) {
    pthread_t threads[2];
    for (int c = 0; c < 2; ++c) {
      chains[c].error[0] = '\0';
      int kind = round == 2 ? c : round;
      KILN_ASSERT_OK(kiln_eager_context_create(&options[kind], &chains[c].context));
    }
    for (int c = 0; c < 2; ++c) {
      assert_int_equal(pthread_create(&threads[c], NULL, run_chain, &chains[c]), 0);
    }
    for (int c = 0; c < 2; ++c) {
      assert_int_equal(pthread_join(threads[c], NULL), 0);
      assert_string_equal(chains[c].error, "");
      float want[LENGTH];
      chain_expected(chains[c].scale, want);
      for (int i = 0; i < LENGTH; ++i) {
        assert_true(fabsf(chains[c].result[i] - want[i]) <= 1e-5f * (1 + fabsf(want[i])));
      }
      kiln_eager_context_destroy(chains[c].context);
    }
  }
}

/* ---- destroying one context ---- */

/* Context `a` is destroyed while `b` runs a chain on another thread. */
static void test_destroy_one_while_the_other_works(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_eager_options_t counted = reference_options(kiln_counting_allocator_get(&counting));
  kiln_eager_options_t options = reference_options(kiln_allocator_system());
  kiln_eager_context_t *a = NULL;
  KILN_ASSERT_OK(kiln_eager_context_create(&counted, &a));
  chain_t chain = {.scale = 0.5f};
  KILN_ASSERT_OK(kiln_eager_context_create(&options, &chain.context));
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, run_chain, &chain), 0);

  float xs[LENGTH], want[LENGTH];
  ramp(-4, 1, xs);
  kiln_eager_tensor_t *x = vector_in(a, xs), *y = NULL;
  KILN_ASSERT_OK(kiln_eager_relu(x, &y));
  for (int i = 0; i < LENGTH; ++i) {
    want[i] = xs[i] > 0 ? xs[i] : 0;
  }
  assert_vector(y, want);
  kiln_eager_context_destroy(a);
  /* a's tensors stay readable; new work on them is refused. */
  assert_vector(y, want);
  kiln_eager_tensor_t *z = NULL;
  KILN_ASSERT_STATUS(kiln_eager_relu(y, &z), FAILED_PRECONDITION,
                     "nn.relu: the eager context was destroyed");
  assert_null(z);
  float one[LENGTH];
  ramp(1, 0, one);
  KILN_ASSERT_STATUS(kiln_eager_tensor_write(y, one, sizeof(one)), FAILED_PRECONDITION,
                     "kiln_eager_tensor_write: the eager context was destroyed");
  KILN_ASSERT_STATUS(kiln_eager_context_sync(a), FAILED_PRECONDITION,
                     "kiln_eager_context_sync: the eager context was destroyed");
  kiln_eager_tensor_release(x);
  kiln_eager_tensor_release(y);
  /* The last tensor took the context's last block with it. */
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);

  assert_int_equal(pthread_join(thread, NULL), 0);
  assert_string_equal(chain.error, "");
  chain_expected(chain.scale, want);
  for (int i = 0; i < LENGTH; ++i) {
    assert_true(fabsf(chain.result[i] - want[i]) <= 1e-5f * (1 + fabsf(want[i])));
  }
  /* b still takes new work after a went. */
  kiln_eager_tensor_t *w = vector_in(chain.context, xs), *v = NULL;
  KILN_ASSERT_OK(kiln_eager_relu(w, &v));
  for (int i = 0; i < LENGTH; ++i) {
    want[i] = xs[i] > 0 ? xs[i] : 0;
  }
  assert_vector(v, want);
  kiln_eager_tensor_release(w);
  kiln_eager_tensor_release(v);
  kiln_eager_context_destroy(chain.context);
}

/* Destroying a context with a long chain queued cancels the rest; every
 * tensor is computed or says it was cancelled; nothing leaks. */
static void test_destroy_with_pending_work(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_eager_options_t options = reference_options(kiln_counting_allocator_get(&counting));
  kiln_eager_context_t *context = NULL;
  KILN_ASSERT_OK(kiln_eager_context_create(&options, &context));
  int64_t n = 1 << 14;
  kiln_eager_tensor_t *chain[101];
  KILN_ASSERT_OK(kiln_eager_context_tensor_zeros(context, KILN_DTYPE_FLOAT32, 1, &n, &chain[0]));
  for (int i = 1; i < 101; ++i) {
    KILN_ASSERT_OK(kiln_eager_sigmoid(chain[i - 1], &chain[i]));
  }
  kiln_eager_context_destroy(context);
  for (int i = 0; i < 101; ++i) {
    kiln_tensor_t *storage = NULL;
    kiln_status_t status = kiln_eager_tensor_read(chain[i], &storage);
    if (status) {
      assert_int_equal(kiln_status_code(status), KILN_STATUS_CODE_CANCELLED);
      assert_non_null(strstr(kiln_status_message(status), "kiln_eager_context_destroy"));
      kiln_status_free(status);
    } else {
      kiln_tensor_release(storage);
    }
  }
  for (int i = 0; i < 101; ++i) {
    kiln_eager_tensor_release(chain[i]);
  }
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);
}

/* ---- tensors of two contexts never meet ---- */

static void test_mixing_contexts_is_refused(void **state) {
  (void)state;
  kiln_eager_options_t options = reference_options(kiln_allocator_system());
  kiln_eager_context_t *a = NULL, *b = NULL;
  KILN_ASSERT_OK(kiln_eager_context_create(&options, &a));
  KILN_ASSERT_OK(kiln_eager_context_create(&options, &b));
  float xs[LENGTH];
  ramp(1, 1, xs);
  kiln_eager_tensor_t *xa = vector_in(a, xs), *xb = vector_in(b, xs), *out = NULL;
  KILN_ASSERT_STATUS(kiln_eager_add(xa, xb, &out), INVALID_ARGUMENT,
                     "add: tensor 1 belongs to another eager context");
  assert_null(out);
  KILN_ASSERT_STATUS(kiln_eager_copy(xa, xb), INVALID_ARGUMENT,
                     "kiln_eager_copy: the source and the destination belong to different eager "
                     "contexts");
  int count = 0;
  KILN_ASSERT_STATUS(kiln_eager_context_call(b, "nn.relu", 1, &xa, 0, NULL, 1, &count, &out),
                     INVALID_ARGUMENT, "nn.relu: tensor 0 belongs to another eager context");
  assert_int_equal(count, 0);
  KILN_ASSERT_STATUS(kiln_eager_context_call_into(a, "nn.relu", 1, &xa, 0, NULL, 1, &xb),
                     INVALID_ARGUMENT, "nn.relu: tensor 0 belongs to another eager context");
  /* An operator without inputs runs in the context named. */
  kiln_eager_attr_t range[] = {{"start", "0"}, {"stop", "9"}, {"step", "1"}};
  kiln_eager_tensor_t *ramp_b = NULL;
  KILN_ASSERT_OK(kiln_eager_context_call(b, "arange", 0, NULL, 3, range, 1, &count, &ramp_b));
  assert_ptr_equal(kiln_eager_tensor_context(ramp_b), b);
  float steps[LENGTH];
  ramp(0, 1, steps);
  assert_vector(ramp_b, steps);
  kiln_eager_tensor_release(ramp_b);
  /* The same calls within one context work. */
  kiln_eager_tensor_t *ya = NULL;
  KILN_ASSERT_OK(
      kiln_eager_context_tensor_zeros(a, KILN_DTYPE_FLOAT32, 1, (int64_t[]){LENGTH}, &ya));
  KILN_ASSERT_OK(kiln_eager_context_call_into(a, "negative", 1, &xa, 0, NULL, 1, &ya));
  KILN_ASSERT_OK(kiln_eager_context_call(a, "add", 2, (kiln_eager_tensor_t *[]){xa, ya}, 0, NULL, 1,
                                         &count, &out));
  assert_int_equal(count, 1);
  float zeros[LENGTH] = {0};
  assert_vector(out, zeros);
  kiln_eager_tensor_t *tensors[] = {xa, xb, ya, out};
  for (size_t i = 0; i < sizeof(tensors) / sizeof(tensors[0]); ++i) {
    kiln_eager_tensor_release(tensors[i]);
  }
  kiln_eager_context_destroy(a);
  kiln_eager_context_destroy(b);
}

/* ---- the default context ---- */

static void test_default_context(void **state) {
  (void)state;
  kiln_eager_shutdown();
  kiln_eager_context_t *first = NULL, *again = NULL;
  KILN_ASSERT_OK(kiln_eager_context_default(&first));
  KILN_ASSERT_OK(kiln_eager_context_default(&again));
  assert_ptr_equal(first, again);
  float xs[LENGTH], want[LENGTH];
  ramp(-4, 1, xs);
  /* A tensor made without a context is the default context's (NULL), as
   * is one made in it explicitly; the two meet in calls. */
  kiln_eager_tensor_t *x = NULL, *y = vector_in(first, xs), *sum = NULL;
  KILN_ASSERT_OK(
      kiln_eager_tensor_from_host(KILN_DTYPE_FLOAT32, 1, (int64_t[]){LENGTH}, xs, sizeof(xs), &x));
  assert_null(kiln_eager_tensor_context(x));
  assert_null(kiln_eager_tensor_context(y));
  int count = 0;
  KILN_ASSERT_OK(kiln_eager_context_call(first, "add", 2, (kiln_eager_tensor_t *[]){x, y}, 0, NULL,
                                         1, &count, &sum));
  for (int i = 0; i < LENGTH; ++i) {
    want[i] = 2 * xs[i];
  }
  assert_vector(sum, want);
  /* After shutdown the default context's tensors go on with the next one. */
  kiln_eager_shutdown();
  kiln_eager_tensor_t *twice = NULL;
  KILN_ASSERT_OK(kiln_eager_add(sum, x, &twice));
  for (int i = 0; i < LENGTH; ++i) {
    want[i] = 3 * xs[i];
  }
  assert_vector(twice, want);
  /* An explicit context's tensor does not meet the default's. */
  kiln_eager_context_t *own = NULL;
  KILN_ASSERT_OK(kiln_eager_context_create(NULL, &own));
  kiln_eager_tensor_t *z = vector_in(own, xs), *bad = NULL;
  KILN_ASSERT_STATUS(kiln_eager_add(x, z, &bad), INVALID_ARGUMENT,
                     "add: tensor 1 belongs to another eager context");
  kiln_eager_tensor_t *tensors[] = {x, y, sum, twice, z};
  for (size_t i = 0; i < sizeof(tensors) / sizeof(tensors[0]); ++i) {
    kiln_eager_tensor_release(tensors[i]);
  }
  kiln_eager_context_destroy(own);
  KILN_ASSERT_OK(kiln_eager_sync());
}

/* ---- errors ---- */

static void test_context_errors(void **state) {
  (void)state;
  kiln_eager_options_t options = kiln_eager_options_default();
  options.target = "nonsense";
  kiln_eager_context_t *context = NULL;
  KILN_ASSERT_STATUS(kiln_eager_context_create(&options, &context), NOT_FOUND,
                     "eager environment: kernel cache");
  assert_null(context);
  kiln_eager_context_destroy(NULL); /* a no-op */
  options = reference_options(kiln_allocator_system());
  KILN_ASSERT_OK(kiln_eager_context_create(&options, &context));
  kiln_eager_tensor_t *t = NULL;
  KILN_ASSERT_STATUS(kiln_eager_context_tensor_from_npy(context, "/nonexistent/x.npy", &t),
                     NOT_FOUND, "/nonexistent/x.npy");
  assert_null(t);
  float two[2] = {1, 2};
  KILN_ASSERT_STATUS(kiln_eager_context_tensor_from_host(context, KILN_DTYPE_FLOAT32, 1,
                                                         (int64_t[]){3}, two, sizeof(two), &t),
                     INVALID_ARGUMENT, "kiln_eager_tensor_from_host");
  kiln_tensor_t *storage = NULL;
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1,
                                         (int64_t[]){2}, two, sizeof(two), &storage));
  KILN_ASSERT_OK(kiln_eager_context_tensor_wrap(context, storage, &t));
  float back[2];
  KILN_ASSERT_OK(kiln_eager_tensor_copy_to_host(t, back, sizeof(back)));
  assert_true(back[0] == 1 && back[1] == 2);
  kiln_eager_context_destroy(context);
  kiln_eager_options_t got;
  KILN_ASSERT_STATUS(kiln_eager_context_get_options(context, &got), FAILED_PRECONDITION,
                     "kiln_eager_context_get_options: the eager context was destroyed");
  kiln_eager_kernel_stats_t stats;
  KILN_ASSERT_STATUS(kiln_eager_context_get_kernel_stats(context, &stats), FAILED_PRECONDITION,
                     "the eager context was destroyed");
  kiln_eager_tensor_t *more = NULL;
  KILN_ASSERT_STATUS(kiln_eager_context_tensor_wrap(context, storage, &more), FAILED_PRECONDITION,
                     "kiln_eager_tensor_wrap: the eager context was destroyed");
  int count = 0;
  KILN_ASSERT_STATUS(kiln_eager_context_call(context, "arange", 0, NULL, 0, NULL, 1, &count, &more),
                     FAILED_PRECONDITION, "arange: the eager context was destroyed");
  assert_int_equal(count, 0);
  kiln_eager_tensor_release(t); /* the context's last reference */
  kiln_tensor_release(storage);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_two_contexts_compute_apart),
      cmocka_unit_test(test_one_thread_per_context),
      cmocka_unit_test(test_destroy_one_while_the_other_works),
      cmocka_unit_test(test_destroy_with_pending_work),
      cmocka_unit_test(test_mixing_contexts_is_refused),
      cmocka_unit_test(test_default_context),
      cmocka_unit_test(test_context_errors),
  };
  return kiln_test_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
