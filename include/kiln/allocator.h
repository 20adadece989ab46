/*
 * Allocators, passed explicitly.
 *
 * Nothing in kiln calls malloc directly except the system allocator and status
 * objects. Every constructor takes a kiln_allocator_t, a small value struct of
 * a `self` pointer and three functions, so callers decide where memory comes
 * from and tests can count it. The raw functions return NULL on failure; the
 * kiln_allocator_* wrappers turn that into a RESOURCE_EXHAUSTED status that
 * says how much was asked for, and check size arithmetic for overflow.
 *
 * The counting allocator wraps another allocator, keeps counts of calls, live
 * blocks and bytes, and can be told to fail the Nth allocation; tests use it to
 * prove that no path leaks and that every allocation failure is reported.
 */
#ifndef KILN_ALLOCATOR_H_
#define KILN_ALLOCATOR_H_

#include <stddef.h>
#include <stdint.h>

#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Alignment of kiln_allocator_malloc; enough for any scalar type. */
#define KILN_DEFAULT_ALIGNMENT 16
/* Alignment of tensor storage: one cache line, one AVX-512 register. */
#define KILN_TENSOR_ALIGNMENT 64

/* Returns a block of `size` bytes aligned to `alignment` (a power of two), or NULL. */
typedef void *(*kiln_allocator_alloc_fn)(void *self, size_t size, size_t alignment);
/* Resizes a block that was allocated with alignment <= KILN_DEFAULT_ALIGNMENT;
 * returns NULL (leaving `ptr` valid) on failure. */
typedef void *(*kiln_allocator_realloc_fn)(void *self, void *ptr, size_t new_size);
typedef void (*kiln_allocator_free_fn)(void *self, void *ptr);

typedef struct kiln_allocator_t {
  void *self;
  kiln_allocator_alloc_fn alloc;
  kiln_allocator_realloc_fn realloc;
  kiln_allocator_free_fn free;
} kiln_allocator_t;

/* The C heap (malloc, aligned_alloc, realloc, free). */
kiln_allocator_t kiln_allocator_system(void);

KILN_MUST_USE_RESULT kiln_status_t kiln_allocator_malloc(kiln_allocator_t allocator, size_t size,
                                                         void **out_ptr);
KILN_MUST_USE_RESULT kiln_status_t kiln_allocator_malloc_zeroed(kiln_allocator_t allocator,
                                                                size_t size, void **out_ptr);
KILN_MUST_USE_RESULT kiln_status_t kiln_allocator_malloc_aligned(kiln_allocator_t allocator,
                                                                 size_t size, size_t alignment,
                                                                 void **out_ptr);
/* count * element_size bytes, failing cleanly when the product overflows. */
KILN_MUST_USE_RESULT kiln_status_t kiln_allocator_malloc_array(kiln_allocator_t allocator,
                                                               size_t count, size_t element_size,
                                                               void **out_ptr);
/* Resizes *inout_ptr (which may be NULL); on failure *inout_ptr is unchanged. */
KILN_MUST_USE_RESULT kiln_status_t kiln_allocator_realloc(kiln_allocator_t allocator,
                                                          size_t new_size, void **inout_ptr);
/* Copies a NUL-terminated string. */
KILN_MUST_USE_RESULT kiln_status_t kiln_allocator_strdup(kiln_allocator_t allocator,
                                                         const char *text, char **out_text);
void kiln_allocator_free(kiln_allocator_t allocator, void *ptr);

/* Multiplies sizes; returns 0 and leaves *out untouched on overflow. */
int kiln_size_mul(size_t a, size_t b, size_t *out);
int kiln_size_add(size_t a, size_t b, size_t *out);

/* What a counting allocator has seen (kiln_counting_allocator_counts). */
typedef struct kiln_allocation_counts_t {
  int64_t allocations;       /* successful alloc and realloc-from-NULL calls */
  int64_t frees;             /* blocks given back */
  int64_t live_blocks;       /* allocated and not yet freed */
  int64_t live_bytes;        /* bytes in live blocks */
  int64_t peak_bytes;        /* largest live_bytes seen */
  int64_t attempts;          /* every alloc and realloc call, failed or not */
  int64_t injected_failures; /* attempts failed on purpose */
} kiln_allocation_counts_t;

/* A caller-owned struct (initialize it, then hand out
 * kiln_counting_allocator_get). Its fields are private: allocator.c updates
 * them atomically, so blocks may be allocated and freed from several threads
 * at once; read them with kiln_counting_allocator_counts. They are plain
 * integers so that this header is the same in C and C++. */
typedef struct kiln_counting_allocator_t {
  kiln_allocator_t inner;
  kiln_allocation_counts_t private_counts;
  int64_t private_fail_attempt; /* attempt number (0-based) that fails; -1 none */
} kiln_counting_allocator_t;

void kiln_counting_allocator_initialize(kiln_counting_allocator_t *counting,
                                        kiln_allocator_t inner);
kiln_allocator_t kiln_counting_allocator_get(kiln_counting_allocator_t *counting);
/* Makes attempt number `attempt` (counted from 0 from this call on) fail;
 * -1 turns injection off. Restarts the attempt count. */
void kiln_counting_allocator_fail_attempt(kiln_counting_allocator_t *counting, int64_t attempt);
/* The counts now, each read atomically (a snapshot of each field; fields
 * changed by another thread meanwhile may be from different moments). */
kiln_allocation_counts_t kiln_counting_allocator_counts(const kiln_counting_allocator_t *counting);

#ifdef __cplusplus
}
#endif

#endif /* KILN_ALLOCATOR_H_ */
