/*
 * Launch overhead: ns per launch of an empty lambda on 2 threads through
 * kiln_parallel_launch, against `#pragma omp parallel for` over 2 iterations
 * (GCC's libgomp), in one run on the same machine.
 *
 * Each side runs REPETITIONS rounds of LAUNCHES back-to-back launches; a
 * round's time over its launch count is one sample, and the median sample is
 * reported (the median shrugs off rounds where another process took a core).
 * kiln runs first; then the program sleeps long enough for kiln's workers to
 * stop spinning and sleep, so the two pools do not fight for the cores.
 * Not part of `make test`: bench/launch/run.sh builds and runs it.
 *
 * Usage: launch_bench [launches per round] [rounds]
 */
#define _POSIX_C_SOURCE 200809L

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kiln/parallel.h"

#define THREADS 2

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a;
  double y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *samples, int count) {
  qsort(samples, (size_t)count, sizeof(double), compare_doubles);
  return count % 2 ? samples[count / 2] : (samples[count / 2 - 1] + samples[count / 2]) / 2;
}

/* The empty body both sides run; noinline so neither call is optimized away. */
__attribute__((noinline)) static void empty_body(int i) {
  __asm__ __volatile__("" : : "r"(i) : "memory");
}

static int empty_lambda(int task_id, kiln_parallel_env_t *penv, void *cdata) {
  (void)penv;
  (void)cdata;
  empty_body(task_id);
  return 0;
}

static double kiln_round(int launches) {
  double start = now_ns();
  for (int i = 0; i < launches; ++i) {
    if (kiln_parallel_launch(empty_lambda, NULL, 0) != 0) {
      fprintf(stderr, "launch failed: %s\n", kiln_get_last_error());
      exit(1);
    }
  }
  return (now_ns() - start) / launches;
}

static double omp_round(int launches) {
  double start = now_ns();
  for (int i = 0; i < launches; ++i) {
#pragma omp parallel for num_threads(THREADS)
    for (int task = 0; task < THREADS; ++task) {
      empty_body(task);
    }
  }
  return (now_ns() - start) / launches;
}

int main(int argc, char **argv) {
  int launches = argc > 1 ? atoi(argv[1]) : 20000;
  int rounds = argc > 2 ? atoi(argv[2]) : 21;
  if (launches < 1 || rounds < 1 || rounds > 1000) {
    fprintf(stderr, "usage: %s [launches per round >= 1] [rounds 1..1000]\n", argv[0]);
    return 2;
  }
  kiln_status_t status = kiln_parallel_set_num_threads(THREADS);
  if (status) {
    fprintf(stderr, "%s\n", kiln_status_message(status));
    kiln_status_free(status);
    return 1;
  }
  double samples[1000];
  kiln_round(launches / 10 + 1); /* starts the workers */
  for (int r = 0; r < rounds; ++r) {
    samples[r] = kiln_round(launches);
  }
  double kiln_ns = median(samples, rounds);
  struct timespec pause = {0, 200 * 1000 * 1000};
  nanosleep(&pause, NULL);      /* kiln's workers stop spinning */
  omp_round(launches / 10 + 1); /* starts libgomp's team */
  for (int r = 0; r < rounds; ++r) {
    samples[r] = omp_round(launches);
  }
  double omp_ns = median(samples, rounds);
  printf("launch overhead, %d threads, empty body, median of %d rounds of %d launches\n", THREADS,
         rounds, launches);
  printf("kiln_parallel_launch      %10.1f ns/launch (spin count %d)\n", kiln_ns,
         kiln_parallel_get_spin_count());
  printf("omp parallel for (gomp)   %10.1f ns/launch\n", omp_ns);
  printf("ratio kiln / omp          %10.2f\n", kiln_ns / omp_ns);
  return 0;
}
