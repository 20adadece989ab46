/*
 * The system allocator, the status-returning wrappers, and the counting
 * allocator.
 *
 * The counting allocator puts a 16-byte header in front of each block that it
 * hands out (the block's size and the distance back to the inner block), so it
 * can account bytes on free and realloc without a side table. For alignments
 * above 16 it asks the inner allocator for `alignment` extra bytes and places
 * the header just before the aligned user pointer.
 *
 * Its counters are plain int64_t fields of the public struct (so that
 * kiln/allocator.h compiles as C++ too) updated with the compiler's atomic
 * builtins (sequentially consistent, like C11's atomic_* defaults), and read
 * through kiln_counting_allocator_counts.
 *
 * The system allocator gives a block of 2 MiB or more (a model's weights, an
 * executor's activation storage) on a 2 MiB boundary and advises the kernel
 * to back it with transparent huge pages (Linux's MADV_HUGEPAGE; other
 * systems get the block without the advice). Two reasons, both measured on
 * resnet18: with 4 KiB pages, which physical pages a process gets decides
 * which of the L2's sets its weights and activations share, so one process
 * ran up to 15% slower than the next; and a 45 MB weight set needs 11,000
 * TLB entries in small pages and 23 in large ones. With the advice, runs are
 * 5 to 8% faster and their spread from process to process halves
 * (docs/graph-executor.md, "Memory"). The advice is a hint: where huge pages are off
 * or used up, the block is ordinary memory.
 */
#define _DEFAULT_SOURCE /* madvise */
#include "kiln/allocator.h"

#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

int kiln_size_mul(size_t a, size_t b, size_t *out) {
  size_t product;
  if (__builtin_mul_overflow(a, b, &product)) {
    return 0;
  }
  *out = product;
  return 1;
}

int kiln_size_add(size_t a, size_t b, size_t *out) {
  size_t sum;
  if (__builtin_add_overflow(a, b, &sum)) {
    return 0;
  }
  *out = sum;
  return 1;
}

/* ---- system allocator ---- */

#define KILN_HUGE_PAGE_BYTES ((size_t)2 << 20)

/* A block of at least one huge page, on a huge page boundary, advised. */
static void *kiln_system_alloc_huge(size_t size) {
  size_t rounded = (size + KILN_HUGE_PAGE_BYTES - 1) & ~(KILN_HUGE_PAGE_BYTES - 1);
  if (rounded < size) {
    return NULL;
  }
  void *ptr = aligned_alloc(KILN_HUGE_PAGE_BYTES, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (ptr) {
    (void)madvise(ptr, rounded, MADV_HUGEPAGE); /* a hint; refused, the block is plain */
  }
#endif
  return ptr;
}

static void *kiln_system_alloc(void *self, size_t size, size_t alignment) {
  (void)self;
  if (size == 0) {
    size = 1;
  }
  if (size >= KILN_HUGE_PAGE_BYTES && alignment <= KILN_HUGE_PAGE_BYTES) {
    return kiln_system_alloc_huge(size);
  }
  if (alignment <= KILN_DEFAULT_ALIGNMENT) {
    return malloc(size);
  }
  size_t rounded = (size + alignment - 1) & ~(alignment - 1);
  if (rounded < size) {
    return NULL;
  }
  return aligned_alloc(alignment, rounded);
}

static void *kiln_system_realloc(void *self, void *ptr, size_t new_size) {
  (void)self;
  return realloc(ptr, new_size ? new_size : 1);
}

static void kiln_system_free(void *self, void *ptr) {
  (void)self;
  free(ptr);
}

kiln_allocator_t kiln_allocator_system(void) {
  return (kiln_allocator_t){
      .self = NULL,
      .alloc = kiln_system_alloc,
      .realloc = kiln_system_realloc,
      .free = kiln_system_free,
  };
}

/* ---- wrappers ---- */

static int kiln_is_power_of_two(size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

kiln_status_t kiln_allocator_malloc_aligned(kiln_allocator_t allocator, size_t size,
                                            size_t alignment, void **out_ptr) {
  *out_ptr = NULL;
  if (!kiln_is_power_of_two(alignment)) {
    return KILN_STATUS(INVALID_ARGUMENT, "alignment %zu is not a power of two", alignment);
  }
  void *ptr = allocator.alloc(allocator.self, size, alignment);
  if (!ptr) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "out of memory allocating %zu bytes", size);
  }
  *out_ptr = ptr;
  return KILN_OK;
}

kiln_status_t kiln_allocator_malloc(kiln_allocator_t allocator, size_t size, void **out_ptr) {
  return kiln_allocator_malloc_aligned(allocator, size, KILN_DEFAULT_ALIGNMENT, out_ptr);
}

kiln_status_t kiln_allocator_malloc_zeroed(kiln_allocator_t allocator, size_t size,
                                           void **out_ptr) {
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc(allocator, size, out_ptr));
  memset(*out_ptr, 0, size);
  return KILN_OK;
}

kiln_status_t kiln_allocator_malloc_array(kiln_allocator_t allocator, size_t count,
                                          size_t element_size, void **out_ptr) {
  size_t size;
  if (!kiln_size_mul(count, element_size, &size)) {
    *out_ptr = NULL;
    return KILN_STATUS(RESOURCE_EXHAUSTED, "array of %zu elements of %zu bytes overflows size_t",
                       count, element_size);
  }
  return kiln_allocator_malloc(allocator, size, out_ptr);
}

kiln_status_t kiln_allocator_realloc(kiln_allocator_t allocator, size_t new_size,
                                     void **inout_ptr) {
  if (*inout_ptr == NULL) {
    return kiln_allocator_malloc(allocator, new_size, inout_ptr);
  }
  void *ptr = allocator.realloc(allocator.self, *inout_ptr, new_size);
  if (!ptr) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "out of memory growing a block to %zu bytes", new_size);
  }
  *inout_ptr = ptr;
  return KILN_OK;
}

kiln_status_t kiln_allocator_strdup(kiln_allocator_t allocator, const char *text, char **out_text) {
  size_t length = strlen(text);
  void *copy;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc(allocator, length + 1, &copy));
  memcpy(copy, text, length + 1);
  *out_text = copy;
  return KILN_OK;
}

void kiln_allocator_free(kiln_allocator_t allocator, void *ptr) {
  if (ptr) {
    allocator.free(allocator.self, ptr);
  }
}

/* ---- counting allocator ---- */

static int64_t kiln_counter_load(const int64_t *counter) {
  return __atomic_load_n(counter, __ATOMIC_SEQ_CST);
}

static void kiln_counter_store(int64_t *counter, int64_t value) {
  __atomic_store_n(counter, value, __ATOMIC_SEQ_CST);
}

/* Adds `delta`; returns the value before. */
static int64_t kiln_counter_add(int64_t *counter, int64_t delta) {
  return __atomic_fetch_add(counter, delta, __ATOMIC_SEQ_CST);
}

typedef struct kiln_counting_header_t {
  uint64_t size;   /* bytes the caller asked for */
  uint32_t offset; /* user pointer minus inner block pointer */
  uint32_t magic;
} kiln_counting_header_t;

_Static_assert(sizeof(kiln_counting_header_t) == KILN_DEFAULT_ALIGNMENT,
               "the header keeps user blocks at the default alignment");

#define KILN_COUNTING_MAGIC 0x6b696c6eu /* "kiln" */

static kiln_counting_header_t *kiln_counting_header(void *user) {
  return (kiln_counting_header_t *)((char *)user - sizeof(kiln_counting_header_t));
}

/* Counts an attempt and says whether it is the one to fail. */
static int kiln_counting_should_fail(kiln_counting_allocator_t *c) {
  int64_t attempt = kiln_counter_add(&c->private_counts.attempts, 1);
  if (attempt == kiln_counter_load(&c->private_fail_attempt)) {
    kiln_counter_add(&c->private_counts.injected_failures, 1);
    return 1;
  }
  return 0;
}

static void kiln_counting_add_bytes(kiln_counting_allocator_t *c, int64_t delta) {
  int64_t now = kiln_counter_add(&c->private_counts.live_bytes, delta) + delta;
  int64_t peak = kiln_counter_load(&c->private_counts.peak_bytes);
  while (now > peak && !__atomic_compare_exchange_n(&c->private_counts.peak_bytes, &peak, now, 1,
                                                    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
}

static void *kiln_counting_alloc(void *self, size_t size, size_t alignment) {
  kiln_counting_allocator_t *c = self;
  if (kiln_counting_should_fail(c)) {
    return NULL;
  }
  size_t prefix =
      alignment > sizeof(kiln_counting_header_t) ? alignment : sizeof(kiln_counting_header_t);
  size_t total;
  if (!kiln_size_add(size, prefix, &total) || prefix > UINT32_MAX) {
    return NULL;
  }
  char *block = c->inner.alloc(c->inner.self, total, alignment);
  if (!block) {
    return NULL;
  }
  char *user = block + prefix;
  kiln_counting_header_t *header = kiln_counting_header(user);
  header->size = size;
  header->offset = (uint32_t)prefix;
  header->magic = KILN_COUNTING_MAGIC;
  kiln_counter_add(&c->private_counts.allocations, 1);
  kiln_counter_add(&c->private_counts.live_blocks, 1);
  kiln_counting_add_bytes(c, (int64_t)size);
  return user;
}

static void *kiln_counting_realloc(void *self, void *ptr, size_t new_size) {
  kiln_counting_allocator_t *c = self;
  kiln_counting_header_t *header = kiln_counting_header(ptr);
  if (header->magic != KILN_COUNTING_MAGIC || header->offset != sizeof(*header)) {
    /* Only default-aligned blocks of this allocator can be resized. */
    return NULL;
  }
  if (kiln_counting_should_fail(c)) {
    return NULL;
  }
  size_t total;
  if (!kiln_size_add(new_size, sizeof(*header), &total)) {
    return NULL;
  }
  uint64_t old_size = header->size;
  char *block = c->inner.realloc(c->inner.self, header, total);
  if (!block) {
    return NULL;
  }
  header = (kiln_counting_header_t *)block;
  header->size = new_size;
  kiln_counting_add_bytes(c, (int64_t)new_size - (int64_t)old_size);
  return block + sizeof(*header);
}

static void kiln_counting_free(void *self, void *ptr) {
  kiln_counting_allocator_t *c = self;
  kiln_counting_header_t *header = kiln_counting_header(ptr);
  header->magic = 0;
  kiln_counter_add(&c->private_counts.frees, 1);
  kiln_counter_add(&c->private_counts.live_blocks, -1);
  kiln_counting_add_bytes(c, -(int64_t)header->size);
  c->inner.free(c->inner.self, (char *)ptr - header->offset);
}

void kiln_counting_allocator_initialize(kiln_counting_allocator_t *counting,
                                        kiln_allocator_t inner) {
  counting->inner = inner;
  counting->private_counts = (kiln_allocation_counts_t){0};
  kiln_counter_store(&counting->private_fail_attempt, -1);
}

kiln_allocator_t kiln_counting_allocator_get(kiln_counting_allocator_t *counting) {
  return (kiln_allocator_t){
      .self = counting,
      .alloc = kiln_counting_alloc,
      .realloc = kiln_counting_realloc,
      .free = kiln_counting_free,
  };
}

void kiln_counting_allocator_fail_attempt(kiln_counting_allocator_t *counting, int64_t attempt) {
  kiln_counter_store(&counting->private_counts.attempts, 0);
  kiln_counter_store(&counting->private_fail_attempt, attempt);
}

kiln_allocation_counts_t kiln_counting_allocator_counts(const kiln_counting_allocator_t *counting) {
  const kiln_allocation_counts_t *counts = &counting->private_counts;
  return (kiln_allocation_counts_t){
      .allocations = kiln_counter_load(&counts->allocations),
      .frees = kiln_counter_load(&counts->frees),
      .live_blocks = kiln_counter_load(&counts->live_blocks),
      .live_bytes = kiln_counter_load(&counts->live_bytes),
      .peak_bytes = kiln_counter_load(&counts->peak_bytes),
      .attempts = kiln_counter_load(&counts->attempts),
      .injected_failures = kiln_counter_load(&counts->injected_failures),
  };
}
