/*
 * Scheduling overhead of the eager VM per instruction: a chain of tiny
 * elementwise operations on one-element float32 tensors (y = add(y, x),
 * then y = multiply(y, s), alternating), so the kernels cost nothing and
 * the time is the call, the VM's scheduling and the hand-offs between the
 * caller, the scheduler thread and the compute worker. Each round queues
 * `ops` operations and waits for the last (kiln_eager_sync); the median
 * round's microseconds per op and ops per second are printed, with the
 * kernel path the cache took (compiled code or reference kernels).
 *
 * usage: eager_bench [ops per round] [rounds]
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kiln/eager.h"

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void check(kiln_status_t status, const char *what) {
  if (status) {
    fprintf(stderr, "eager_bench: %s: %s\n", what, kiln_status_message(status));
    exit(1);
  }
}

/* One round: `ops` chained operations, then a sync; seconds. */
static double last_queue_seconds; /* of the last round: the caller's share */

static double round_seconds(int ops, kiln_eager_tensor_t *x, kiln_eager_tensor_t *s,
                            float *out_value) {
  float one = 0.0f;
  int64_t shape[] = {1};
  kiln_eager_tensor_t *y = NULL;
  check(kiln_eager_tensor_from_host(KILN_DTYPE_FLOAT32, 1, shape, &one, sizeof(one), &y), "y");
  double start = now_seconds();
  for (int i = 0; i < ops; ++i) {
    kiln_eager_tensor_t *next = NULL;
    check((i & 1) ? kiln_eager_multiply(y, s, &next) : kiln_eager_add(y, x, &next), "op");
    kiln_eager_tensor_release(y);
    y = next;
  }
  last_queue_seconds = now_seconds() - start;
  check(kiln_eager_sync(), "sync");
  double seconds = now_seconds() - start;
  check(kiln_eager_tensor_copy_to_host(y, out_value, sizeof(*out_value)), "read");
  kiln_eager_tensor_release(y);
  return seconds;
}

int main(int argc, char **argv) {
  int ops = argc > 1 ? atoi(argv[1]) : 100000;
  int rounds = argc > 2 ? atoi(argv[2]) : 7;
  if (ops < 2 || rounds < 1 || rounds > 101) {
    fprintf(stderr, "usage: eager_bench [ops per round >= 2] [rounds 1..101]\n");
    return 2;
  }
  int64_t shape[] = {1};
  float xv = 1.0f, sv = 0.5f, value = 0.0f;
  kiln_eager_tensor_t *x = NULL, *s = NULL;
  check(kiln_eager_tensor_from_host(KILN_DTYPE_FLOAT32, 1, shape, &xv, sizeof(xv), &x), "x");
  check(kiln_eager_tensor_from_host(KILN_DTYPE_FLOAT32, 1, shape, &sv, sizeof(sv), &s), "s");
  round_seconds(1000, x, s, &value); /* warm-up: compiles the two kernels */
  double times[101], queue_times[101];
  for (int r = 0; r < rounds; ++r) {
    times[r] = round_seconds(ops, x, s, &value);
    queue_times[r] = last_queue_seconds;
  }
  qsort(queue_times, (size_t)rounds, sizeof(queue_times[0]), compare_doubles);
  qsort(times, (size_t)rounds, sizeof(times[0]), compare_doubles);
  double median = times[rounds / 2];
  kiln_eager_context_t *context = NULL;
  check(kiln_eager_context_default(&context), "context");
  kiln_eager_options_t options;
  check(kiln_eager_context_get_options(context, &options), "options");
  kiln_eager_kernel_stats_t stats;
  check(kiln_eager_context_get_kernel_stats(context, &stats), "kernel stats");
  printf("kiln eager: kernels %s (target \"%s\": %lld compiled here, %lld found compiled)\n",
         options.reference_kernels ? "reference (KILN_KERNELS=reference)" : "compiled",
         options.target, (long long)stats.compiled, (long long)stats.hits);
  printf("kiln eager: %d ops x %d rounds, median %.3f us/op, %.0f ops/s (y = %g)\n", ops, rounds,
         median / ops * 1e6, ops / median, (double)value);
  printf("kiln eager: the calling thread's share (queueing): median %.3f us/op\n",
         queue_times[rounds / 2] / ops * 1e6);
  printf("KILN_US_PER_OP %.4f\n", median / ops * 1e6);
  kiln_eager_tensor_release(x);
  kiln_eager_tensor_release(s);
  kiln_eager_shutdown();
  return 0;
}
