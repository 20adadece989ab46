/*
 * The eager VM with several caller threads at once (run
 * under ThreadSanitizer by `make test-tsan`). Four threads submit to one VM
 * together: each grows a chain of its own (unary and binary operators, the
 * binary ones also reading one tensor every thread shares), queues host
 * writes into its chain, reads every result back as soon as it is queued
 * (or a few operators later) and checks it against the registry's
 * reference kernels run on the host in the same order; one thread also
 * syncs the whole VM now and then while the others submit. Once with
 * reference kernels only (scheduling), once with compiled kernels, where
 * the threads' first calls of each operator race to the kernel cache and
 * compile at the same time (elementwise kernels: results within 1e-5 of the
 * reference). Every value read is checked, not only the last.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "kiln/eager.h"
#include "kiln_test.h"
#include "op/impl.h"
#include "op/op.h"

#define NUM_THREADS 4
#define LENGTH      33 /* odd: the compiled kernels' vector tails run too */

static const char *const unary_ops[] = {"tanh", "negative", "nn.relu", "sigmoid"};
static const char *const binary_ops[] = {"add", "subtract", "multiply", "maximum"};

typedef struct shared_t {
  kiln_eager_tensor_t *eager; /* read by every thread */
  kiln_tensor_t *plain;
  int steps;
  bool exact; /* reference kernels: bit for bit */
} shared_t;

typedef struct worker_t {
  const shared_t *shared;
  int index;
  unsigned seed;
  int checked;
  char error[512]; /* empty when every check passed */
} worker_t;

static unsigned next_random(unsigned *state) {
  *state ^= *state << 13;
  *state ^= *state >> 17;
  *state ^= *state << 5;
  return *state;
}

static void random_values(unsigned *rng, float *values) {
  for (int k = 0; k < LENGTH; ++k) {
    values[k] = (float)((int)(next_random(rng) % 2001) - 1000) / 400.0f;
  }
}

static kiln_status_t run_reference(const char *name, int num_inputs, kiln_tensor_t *const *inputs,
                                   kiln_tensor_t *output) {
  const kiln_op_t *op = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_find(name, &op));
  kiln_kernel_args_t args = {op, NULL, num_inputs, inputs, 1, &output};
  return kiln_op_reference_get(op->id)(&args);
}

/* The eager tensor's contents against the host's. */
static kiln_status_t check(worker_t *w, kiln_eager_tensor_t *x, const kiln_tensor_t *plain,
                           int step) {
  float got[LENGTH];
  KILN_RETURN_IF_ERROR(kiln_eager_tensor_copy_to_host(x, got, sizeof(got)));
  const float *want = kiln_tensor_data(plain);
  for (int k = 0; k < LENGTH; ++k) {
    bool same = w->shared->exact ? memcmp(&got[k], &want[k], sizeof(float)) == 0
                                 : fabsf(got[k] - want[k]) <= 1e-5f * (1.0f + fabsf(want[k]));
    if (!same) {
      return KILN_STATUS(INTERNAL, "thread %d step %d: element %d is %.9g, the reference %.9g",
                         w->index, step, k, (double)got[k], (double)want[k]);
    }
  }
  w->checked++;
  return KILN_OK;
}

/* One operator on the chain `*x` (and the shared tensor, for a binary one),
 * in both worlds; the chain moves to the new tensor. */
static kiln_status_t step_op(worker_t *w, kiln_eager_tensor_t **x, kiln_tensor_t *plain) {
  unsigned r = next_random(&w->seed);
  bool binary = r % 2 == 0;
  const char *name = binary ? binary_ops[(r / 2) % 4] : unary_ops[(r / 2) % 4];
  kiln_eager_tensor_t *inputs[] = {*x, w->shared->eager};
  kiln_eager_tensor_t *y = NULL;
  int count = 0;
  KILN_RETURN_IF_ERROR(kiln_eager_call(name, binary ? 2 : 1, inputs, 0, NULL, 1, &count, &y));
  kiln_eager_tensor_release(*x);
  *x = y;
  kiln_tensor_t *plain_inputs[] = {plain, w->shared->plain};
  return run_reference(name, binary ? 2 : 1, plain_inputs, plain);
}

static kiln_status_t run_worker(worker_t *w, kiln_eager_tensor_t **x, kiln_tensor_t *plain) {
  for (int i = 0; i < w->shared->steps; ++i) {
    unsigned kind = next_random(&w->seed) % 16;
    if (kind == 0) { /* a queued host write into the chain */
      float values[LENGTH];
      random_values(&w->seed, values);
      KILN_RETURN_IF_ERROR(kiln_eager_tensor_write(*x, values, sizeof(values)));
      memcpy(kiln_tensor_data(plain), values, sizeof(values));
    } else if (kind == 1 && w->index == 0) {
      KILN_RETURN_IF_ERROR(kiln_eager_sync()); /* waits for the other threads' work too */
    } else {
      KILN_RETURN_IF_ERROR(step_op(w, x, plain));
    }
    if (kind % 3 == 0) { /* read back now, or a few operators later */
      KILN_RETURN_IF_ERROR(check(w, *x, plain, i));
    }
  }
  return check(w, *x, plain, w->shared->steps);
}

static void *worker_main(void *arg) {
  worker_t *w = arg;
  int64_t shape[] = {LENGTH};
  float start[LENGTH];
  random_values(&w->seed, start);
  kiln_eager_tensor_t *x = NULL;
  kiln_tensor_t *plain = NULL;
  kiln_status_t status =
      kiln_eager_tensor_from_host(KILN_DTYPE_FLOAT32, 1, shape, start, sizeof(start), &x);
  if (!status) {
    status = kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, shape, start,
                                     sizeof(start), &plain);
  }
  if (!status) {
    status = run_worker(w, &x, plain);
  }
  if (status) {
    snprintf(w->error, sizeof(w->error), "%s", kiln_status_message(status));
  }
  kiln_status_free(status);
  kiln_eager_tensor_release(x);
  kiln_tensor_release(plain);
  return NULL;
}

static void run_threads(bool reference_kernels, int steps) {
  int64_t statuses = kiln_status_live_count();
  kiln_eager_options_t options = kiln_eager_options_default();
  options.reference_kernels = reference_kernels;
  KILN_ASSERT_OK(kiln_eager_initialize(&options));
  unsigned rng = 2024;
  float values[LENGTH];
  random_values(&rng, values);
  int64_t shape[] = {LENGTH};
  shared_t shared = {.steps = steps, .exact = reference_kernels};
  KILN_ASSERT_OK(kiln_eager_tensor_from_host(KILN_DTYPE_FLOAT32, 1, shape, values, sizeof(values),
                                             &shared.eager));
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, shape,
                                         values, sizeof(values), &shared.plain));
  worker_t workers[NUM_THREADS];
  pthread_t threads[NUM_THREADS];
  for (int i = 0; i < NUM_THREADS; ++i) {
    workers[i] = (worker_t){.shared = &shared, .index = i, .seed = 17u + 7919u * (unsigned)i};
    assert_int_equal(pthread_create(&threads[i], NULL, worker_main, &workers[i]), 0);
  }
  for (int i = 0; i < NUM_THREADS; ++i) {
    assert_int_equal(pthread_join(threads[i], NULL), 0);
  }
  for (int i = 0; i < NUM_THREADS; ++i) {
    if (workers[i].error[0]) {
      fail_msg("%s", workers[i].error);
    }
    assert_true(workers[i].checked > steps / 4);
  }
  KILN_ASSERT_OK(kiln_eager_sync());
  kiln_eager_tensor_release(shared.eager);
  kiln_tensor_release(shared.plain);
  kiln_eager_shutdown();
  assert_int_equal(kiln_status_live_count(), statuses);
}

static void test_threads_reference_kernels(void **state) {
  (void)state;
  run_threads(true, 1500);
}

static void test_threads_compiled_kernels(void **state) {
  (void)state;
  run_threads(false, 400);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_threads_reference_kernels),
      cmocka_unit_test(test_threads_compiled_kernels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
