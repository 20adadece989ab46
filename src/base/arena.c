/*
 * Arena implementation.
 *
 * Each block starts with a small header (the next block in the chain and the
 * block's total size), padded to 16 bytes so the data after it keeps the
 * allocator's default alignment. Allocation is split in two: a short fast
 * path that rounds the cursor of the current block up and bumps it, and a
 * slow path, for a request that does not fit, that takes a new block: for a
 * request bigger than a quarter of a block, one sized to fit it alone, else an
 * ordinary one that becomes the current block. Sizes are checked for overflow before any
 * arithmetic, so an absurd request is a RESOURCE_EXHAUSTED status.
 *
 * The allocator adapter stores each block's usable size in the 16 bytes before
 * it. Its realloc grows a block in place when the block ends at the cursor of
 * the current block (the usual case for a container that is being filled) and
 * otherwise copies into a new allocation; shrinking returns the block as is.
 */
#include "base/arena.h"

#include <stdint.h>
#include <string.h>

struct kiln_arena_block_t {
  kiln_arena_block_t *next;
  size_t size; /* total bytes obtained from the allocator, header included */
};

/* The header rounded up to the default alignment. */
#define KILN_ARENA_BLOCK_HEADER                                \
  ((sizeof(kiln_arena_block_t) + KILN_DEFAULT_ALIGNMENT - 1) & \
   ~(size_t)(KILN_DEFAULT_ALIGNMENT - 1))

/* Bytes in front of each block handed out by the adapter. */
#define KILN_ARENA_ADAPTER_HEADER ((size_t)KILN_DEFAULT_ALIGNMENT)

_Static_assert(KILN_ARENA_MIN_BLOCK_SIZE > 4 * KILN_ARENA_BLOCK_HEADER,
               "an ordinary block has room after its header");

static int kiln_arena_is_power_of_two(size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

static char *kiln_arena_block_data(kiln_arena_block_t *block) {
  return (char *)block + KILN_ARENA_BLOCK_HEADER;
}

static size_t kiln_arena_padding(const char *ptr, size_t alignment) {
  return (size_t)(-(uintptr_t)ptr & (uintptr_t)(alignment - 1));
}

void kiln_arena_initialize(kiln_arena_t *arena, kiln_allocator_t allocator, size_t block_size) {
  if (block_size == 0) {
    block_size = KILN_ARENA_DEFAULT_BLOCK_SIZE;
  }
  if (block_size < KILN_ARENA_MIN_BLOCK_SIZE) {
    block_size = KILN_ARENA_MIN_BLOCK_SIZE;
  }
  *arena = (kiln_arena_t){.allocator = allocator, .block_size = block_size};
}

/* Frees every block of the chain except `keep` (which may be NULL). */
static void kiln_arena_free_blocks_except(kiln_arena_t *arena, kiln_arena_block_t *keep) {
  kiln_arena_block_t *block = arena->blocks;
  while (block) {
    kiln_arena_block_t *next = block->next;
    if (block != keep) {
      kiln_allocator_free(arena->allocator, block);
    }
    block = next;
  }
}

void kiln_arena_deinitialize(kiln_arena_t *arena) {
  kiln_arena_free_blocks_except(arena, NULL);
  *arena = (kiln_arena_t){.allocator = arena->allocator, .block_size = arena->block_size};
}

void kiln_arena_reset(kiln_arena_t *arena) {
  kiln_arena_block_t *keep = arena->current;
  kiln_arena_free_blocks_except(arena, keep);
  arena->blocks = keep;
  arena->bytes_used = 0;
  if (!keep) {
    arena->cursor = arena->limit = NULL;
    arena->bytes_reserved = 0;
    return;
  }
  keep->next = NULL;
  arena->cursor = kiln_arena_block_data(keep);
  arena->limit = (char *)keep + keep->size;
  arena->bytes_reserved = keep->size;
}

/* Takes a block of `total` bytes from the allocator and links it in. */
static kiln_status_t kiln_arena_new_block(kiln_arena_t *arena, size_t total,
                                          kiln_arena_block_t **out_block) {
  void *raw = NULL;
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_allocator_malloc(arena->allocator, total, &raw),
                                "arena block");
  kiln_arena_block_t *block = raw;
  block->size = total;
  block->next = arena->blocks;
  arena->blocks = block;
  arena->bytes_reserved += total;
  *out_block = block;
  return KILN_OK;
}

/* The fast path failed: `take` bytes at `alignment` need a new block. */
static kiln_status_t kiln_arena_allocate_slow(kiln_arena_t *arena, size_t take, size_t alignment,
                                              void **out_ptr) {
  size_t needed, dedicated_total;
  if (!kiln_size_add(take, alignment - 1, &needed) ||
      !kiln_size_add(needed, KILN_ARENA_BLOCK_HEADER, &dedicated_total)) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "arena allocation of %zu bytes overflows size_t", take);
  }
  kiln_arena_block_t *block = NULL;
  if (needed > (arena->block_size - KILN_ARENA_BLOCK_HEADER) / 4) {
    /* A block of its own; the current block stays current. */
    KILN_RETURN_IF_ERROR(kiln_arena_new_block(arena, dedicated_total, &block));
    char *data = kiln_arena_block_data(block);
    *out_ptr = data + kiln_arena_padding(data, alignment);
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_arena_new_block(arena, arena->block_size, &block));
  arena->current = block;
  char *data = kiln_arena_block_data(block);
  char *start = data + kiln_arena_padding(data, alignment);
  arena->cursor = start + take;
  arena->limit = (char *)block + block->size;
  *out_ptr = start;
  return KILN_OK;
}

kiln_status_t kiln_arena_allocate(kiln_arena_t *arena, size_t size, size_t alignment,
                                  void **out_ptr) {
  *out_ptr = NULL;
  if (KILN_UNLIKELY(!kiln_arena_is_power_of_two(alignment) ||
                    alignment > KILN_ARENA_MAX_ALIGNMENT)) {
    return KILN_STATUS(INVALID_ARGUMENT, "arena alignment %zu is not a power of two up to %zu",
                       alignment, KILN_ARENA_MAX_ALIGNMENT);
  }
  size_t take = size ? size : 1; /* distinct pointers even for size 0 */
  if (KILN_LIKELY(arena->cursor != NULL)) {
    size_t padding = kiln_arena_padding(arena->cursor, alignment);
    size_t room = (size_t)(arena->limit - arena->cursor);
    if (KILN_LIKELY(padding <= room && take <= room - padding)) {
      *out_ptr = arena->cursor + padding;
      arena->cursor += padding + take;
      arena->bytes_used += size;
      return KILN_OK;
    }
  }
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_slow(arena, take, alignment, out_ptr));
  arena->bytes_used += size;
  return KILN_OK;
}

kiln_status_t kiln_arena_allocate_zeroed(kiln_arena_t *arena, size_t size, size_t alignment,
                                         void **out_ptr) {
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(arena, size, alignment, out_ptr));
  memset(*out_ptr, 0, size);
  return KILN_OK;
}

kiln_status_t kiln_arena_allocate_array(kiln_arena_t *arena, size_t count, size_t element_size,
                                        size_t alignment, void **out_ptr) {
  size_t size;
  if (!kiln_size_mul(count, element_size, &size)) {
    *out_ptr = NULL;
    return KILN_STATUS(RESOURCE_EXHAUSTED,
                       "arena array of %zu elements of %zu bytes overflows size_t", count,
                       element_size);
  }
  return kiln_arena_allocate(arena, size, alignment, out_ptr);
}

kiln_status_t kiln_arena_strdup(kiln_arena_t *arena, const char *text, char **out_text) {
  size_t length = strlen(text);
  void *copy;
  *out_text = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(arena, length + 1, 1, &copy));
  memcpy(copy, text, length + 1);
  *out_text = copy;
  return KILN_OK;
}

size_t kiln_arena_bytes_used(const kiln_arena_t *arena) {
  return arena->bytes_used;
}

size_t kiln_arena_bytes_reserved(const kiln_arena_t *arena) {
  return arena->bytes_reserved;
}

/* ---- allocator adapter ---- */

static size_t kiln_arena_adapter_size(const char *user) {
  size_t size;
  memcpy(&size, user - sizeof(size), sizeof(size));
  return size;
}

static void kiln_arena_adapter_set_size(char *user, size_t size) {
  memcpy(user - sizeof(size), &size, sizeof(size));
}

static void *kiln_arena_adapter_alloc(void *self, size_t size, size_t alignment) {
  kiln_arena_t *arena = self;
  /* The header fills the `prefix` bytes before the block and keeps it aligned. */
  size_t prefix = alignment > KILN_ARENA_ADAPTER_HEADER ? alignment : KILN_ARENA_ADAPTER_HEADER;
  size_t total;
  if (!kiln_size_add(size, prefix, &total)) {
    return NULL;
  }
  void *raw = NULL;
  kiln_status_t status = kiln_arena_allocate(arena, total, prefix, &raw);
  if (status) {
    kiln_status_free(status);
    return NULL;
  }
  char *user = (char *)raw + prefix;
  kiln_arena_adapter_set_size(user, size);
  return user;
}

/* Grows `user` by `extra` bytes when it is the last thing in the current block. */
static int kiln_arena_adapter_grow_in_place(kiln_arena_t *arena, char *user, size_t old_size,
                                            size_t extra) {
  if (user + old_size != arena->cursor || extra > (size_t)(arena->limit - arena->cursor)) {
    return 0;
  }
  arena->cursor += extra;
  arena->bytes_used += extra;
  kiln_arena_adapter_set_size(user, old_size + extra);
  return 1;
}

static void *kiln_arena_adapter_realloc(void *self, void *ptr, size_t new_size) {
  kiln_arena_t *arena = self;
  if (!ptr) {
    return kiln_arena_adapter_alloc(self, new_size, KILN_DEFAULT_ALIGNMENT);
  }
  size_t old_size = kiln_arena_adapter_size(ptr);
  if (new_size <= old_size) {
    return ptr;
  }
  if (kiln_arena_adapter_grow_in_place(arena, ptr, old_size, new_size - old_size)) {
    return ptr;
  }
  void *fresh = kiln_arena_adapter_alloc(self, new_size, KILN_DEFAULT_ALIGNMENT);
  if (fresh) {
    memcpy(fresh, ptr, old_size);
  }
  return fresh;
}

static void kiln_arena_adapter_free(void *self, void *ptr) {
  (void)self;
  (void)ptr;
}

kiln_allocator_t kiln_arena_allocator(kiln_arena_t *arena) {
  return (kiln_allocator_t){
      .self = arena,
      .alloc = kiln_arena_adapter_alloc,
      .realloc = kiln_arena_adapter_realloc,
      .free = kiln_arena_adapter_free,
  };
}
