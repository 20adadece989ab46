/*
 * The eager VM under load: a random DAG of 10,000 operations over 100
 * tensors, each operation reading one or two random tensors and writing
 * another (so every kind of dependency, read after write, write after read
 * and write after write, occurs thousands of times), with queued host
 * writes, tensor-to-tensor copies, syncs and mid-stream reads mixed in. The
 * same sequence runs sequentially on plain tensors with the registry's
 * reference kernels; every tensor must end bit-for-bit equal. Mid-stream
 * reads are checked against the sequential run at the same point.
 * Reference kernels only (no compiles), so the test is about scheduling;
 * `make test-tsan` runs it under ThreadSanitizer.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "kiln/eager.h"
#include "kiln_test.h"
#include "op/impl.h"
#include "op/op.h"

#define NUM_TENSORS 100
#define NUM_OPS     10000
#define LENGTH      7

static unsigned next_random(unsigned *state) {
  *state ^= *state << 13;
  *state ^= *state >> 17;
  *state ^= *state << 5;
  return *state;
}

static const char *const unary_ops[] = {"tanh", "negative", "nn.relu", "sigmoid"};
static const char *const binary_ops[] = {"add", "subtract", "multiply", "maximum", "minimum"};
#define NUM_UNARY  4
#define NUM_BINARY 5

typedef struct world_t {
  kiln_eager_tensor_t *eager[NUM_TENSORS];
  kiln_tensor_t *plain[NUM_TENSORS];
} world_t;

static void run_plain(const char *op_name, int num_inputs, kiln_tensor_t *const *inputs,
                      kiln_tensor_t *output) {
  const kiln_op_t *op = NULL;
  KILN_ASSERT_OK(kiln_op_find(op_name, &op));
  kiln_kernel_args_t args = {op, NULL, num_inputs, inputs, 1, &output};
  KILN_ASSERT_OK(kiln_op_reference_get(op->id)(&args));
}

static int pick_other(unsigned *rng, int a, int b) {
  int c = 0;
  do {
    c = (int)(next_random(rng) % NUM_TENSORS);
  } while (c == a || c == b);
  return c;
}

static void compare(world_t *w, int index) {
  kiln_tensor_t *got = NULL;
  KILN_ASSERT_OK(kiln_eager_tensor_read(w->eager[index], &got));
  if (memcmp(kiln_tensor_data(got), kiln_tensor_data(w->plain[index]), LENGTH * sizeof(float)) !=
      0) {
    fail_msg("tensor %d differs from the sequential run", index);
  }
  kiln_tensor_release(got);
}

/* One random step, applied to both worlds. */
static void step(world_t *w, unsigned *rng, int i) {
  unsigned kind = next_random(rng) % 100;
  int a = (int)(next_random(rng) % NUM_TENSORS);
  int b = (int)(next_random(rng) % NUM_TENSORS); /* may equal a: add(x, x) */
  int out = pick_other(rng, a, b);
  if (kind < 45) {
    const char *op = binary_ops[next_random(rng) % NUM_BINARY];
    kiln_eager_tensor_t *in[] = {w->eager[a], w->eager[b]};
    KILN_ASSERT_OK(kiln_eager_call_into(op, 2, in, 0, NULL, 1, &w->eager[out]));
    kiln_tensor_t *pin[] = {w->plain[a], w->plain[b]};
    run_plain(op, 2, pin, w->plain[out]);
  } else if (kind < 85) {
    const char *op = unary_ops[next_random(rng) % NUM_UNARY];
    KILN_ASSERT_OK(kiln_eager_call_into(op, 1, &w->eager[a], 0, NULL, 1, &w->eager[out]));
    run_plain(op, 1, &w->plain[a], w->plain[out]);
  } else if (kind < 92) {
    KILN_ASSERT_OK(kiln_eager_copy(w->eager[a], w->eager[out]));
    memcpy(kiln_tensor_data(w->plain[out]), kiln_tensor_data(w->plain[a]), LENGTH * sizeof(float));
  } else if (kind < 97) {
    float values[LENGTH];
    for (int k = 0; k < LENGTH; ++k) {
      values[k] = (float)((int)(next_random(rng) % 2001) - 1000) / 250.0f;
    }
    KILN_ASSERT_OK(kiln_eager_tensor_write(w->eager[out], values, sizeof(values)));
    memcpy(kiln_tensor_data(w->plain[out]), values, sizeof(values));
  } else if (kind < 99) {
    compare(w, a);
  } else if (i % 7 == 0) {
    KILN_ASSERT_OK(kiln_eager_sync());
  }
}

static void test_random_dag_matches_sequential_execution(void **state) {
  (void)state;
  int64_t statuses = kiln_status_live_count();
  kiln_eager_options_t options = kiln_eager_options_default();
  options.reference_kernels = true;
  KILN_ASSERT_OK(kiln_eager_initialize(&options));
  world_t w;
  unsigned rng = 12345;
  int64_t shape[] = {LENGTH};
  for (int t = 0; t < NUM_TENSORS; ++t) {
    float values[LENGTH];
    for (int k = 0; k < LENGTH; ++k) {
      values[k] = (float)((int)(next_random(&rng) % 2001) - 1000) / 250.0f;
    }
    KILN_ASSERT_OK(kiln_eager_tensor_from_host(KILN_DTYPE_FLOAT32, 1, shape, values, sizeof(values),
                                               &w.eager[t]));
    KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, shape,
                                           values, sizeof(values), &w.plain[t]));
  }
  for (int i = 0; i < NUM_OPS; ++i) {
    step(&w, &rng, i);
  }
  KILN_ASSERT_OK(kiln_eager_sync());
  for (int t = 0; t < NUM_TENSORS; ++t) {
    compare(&w, t);
    kiln_eager_tensor_release(w.eager[t]);
    kiln_tensor_release(w.plain[t]);
  }
  kiln_eager_shutdown();
  assert_int_equal(kiln_status_live_count(), statuses);
}

/* Two user threads queue into the same VM at once, each a chain of its own;
 * each checks its result against the reference kernels run in order. */
typedef struct thread_work_t {
  unsigned seed;
  int ok;
} thread_work_t;

static kiln_status_t run_chain(thread_work_t *work, kiln_eager_tensor_t **x, kiln_tensor_t *plain) {
  for (int i = 0; i < 2000; ++i) {
    const char *name = (next_random(&work->seed) & 1) ? "tanh" : "negative";
    kiln_eager_tensor_t *y = NULL;
    int count = 0;
    KILN_RETURN_IF_ERROR(kiln_eager_call(name, 1, x, 0, NULL, 1, &count, &y));
    kiln_eager_tensor_release(*x);
    *x = y;
    const kiln_op_t *op = NULL;
    KILN_RETURN_IF_ERROR(kiln_op_find(name, &op));
    kiln_kernel_args_t args = {op, NULL, 1, &plain, 1, &plain};
    KILN_RETURN_IF_ERROR(kiln_op_reference_get(op->id)(&args));
  }
  return KILN_OK;
}

static void *thread_main(void *arg) {
  thread_work_t *work = arg;
  int64_t shape[] = {3};
  float start[3] = {0.5f, -1.0f, 2.0f}, got[3] = {0};
  kiln_eager_tensor_t *x = NULL;
  kiln_tensor_t *plain = NULL;
  kiln_status_t status =
      kiln_eager_tensor_from_host(KILN_DTYPE_FLOAT32, 1, shape, start, sizeof(start), &x);
  if (!status) {
    status = kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, shape, start,
                                     sizeof(start), &plain);
  }
  if (!status) {
    status = run_chain(work, &x, plain);
  }
  if (!status) {
    status = kiln_eager_tensor_copy_to_host(x, got, sizeof(got));
  }
  work->ok = !status && memcmp(got, kiln_tensor_data(plain), sizeof(got)) == 0;
  kiln_status_free(status);
  kiln_eager_tensor_release(x);
  kiln_tensor_release(plain);
  return NULL;
}

static void test_two_user_threads(void **state) {
  (void)state;
  kiln_eager_options_t options = kiln_eager_options_default();
  options.reference_kernels = true;
  KILN_ASSERT_OK(kiln_eager_initialize(&options));
  thread_work_t work[2] = {{7, 0}, {99, 0}};
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) {
    assert_int_equal(pthread_create(&threads[i], NULL, thread_main, &work[i]), 0);
  }
  for (int i = 0; i < 2; ++i) {
    pthread_join(threads[i], NULL);
    assert_true(work[i].ok);
  }
  kiln_eager_shutdown();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_dag_matches_sequential_execution),
      cmocka_unit_test(test_two_user_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
