/*
 * Arenas: bump allocation over a chain of blocks, freed all at once.
 *
 * Compiler IR lives in arenas. An arena takes blocks of `block_size` bytes
 * from the allocator it was given and hands out pieces of the current block by
 * rounding a cursor up to the requested alignment and moving it on, so an
 * allocation is a few instructions and nothing is freed one piece at a time.
 * A request that does not fit in the rest of the current block gets a block
 * of its own (linked into the chain, the current block kept) when it is bigger
 * than a quarter of a block; a smaller one starts a new current block. So a
 * big request never strands the rest of the current block, and the space left
 * unused at the end of a block is at most a quarter of it. Deinitialize gives every block back;
 * reset gives back every block except the one being filled, so an arena reused for each compilation
 * does not return to the allocator for its first block.
 *
 * kiln_arena_allocator adapts an arena to kiln_allocator_t so that containers
 * (arrays, maps, string builders) can live in it. Through the adapter, free is
 * a no-op and realloc copies into a new allocation (or grows in place when the
 * block is the arena's last allocation); to know how much to copy, each block
 * allocated through the adapter carries a 16-byte size header in front of it.
 * Memory "freed" or outgrown through the adapter is reclaimed only when the
 * arena is reset or deinitialized.
 *
 * An arena is not thread-safe; use one per thread or lock around it.
 */
#ifndef KILN_BASE_ARENA_H_
#define KILN_BASE_ARENA_H_

#include <stddef.h>

#include "kiln/allocator.h"
#include "kiln/status.h"

/* Block size used when kiln_arena_initialize is given 0. */
#define KILN_ARENA_DEFAULT_BLOCK_SIZE ((size_t)64 * 1024)
/* Smaller block sizes are rounded up to this. */
#define KILN_ARENA_MIN_BLOCK_SIZE ((size_t)256)
/* Largest alignment kiln_arena_allocate accepts. */
#define KILN_ARENA_MAX_ALIGNMENT ((size_t)4096)

typedef struct kiln_arena_block_t kiln_arena_block_t;

typedef struct kiln_arena_t {
  kiln_allocator_t allocator;
  size_t block_size;           /* bytes per ordinary block, header included */
  kiln_arena_block_t *blocks;  /* every block, newest first */
  kiln_arena_block_t *current; /* the ordinary block being filled, or NULL */
  char *cursor;                /* next free byte of `current` */
  char *limit;                 /* end of `current` */
  size_t bytes_used;           /* bytes requested by callers since the last reset */
  size_t bytes_reserved;       /* bytes of all blocks held, headers included */
} kiln_arena_t;

/* Makes an empty arena; no memory is taken until the first allocation.
 * `block_size` 0 means KILN_ARENA_DEFAULT_BLOCK_SIZE. */
void kiln_arena_initialize(kiln_arena_t *arena, kiln_allocator_t allocator, size_t block_size);
/* Gives every block back to the allocator at once. The arena is left empty
 * (and may be used again). */
void kiln_arena_deinitialize(kiln_arena_t *arena);
/* Invalidates every allocation and frees every block except the one being
 * filled, which is kept for the allocations that follow. */
void kiln_arena_reset(kiln_arena_t *arena);

/* `size` bytes aligned to `alignment` (a power of two up to
 * KILN_ARENA_MAX_ALIGNMENT, else INVALID_ARGUMENT). A size of 0 still returns
 * a distinct pointer. Sizes that overflow or cannot be allocated give
 * RESOURCE_EXHAUSTED; *out_ptr is NULL on failure. */
KILN_MUST_USE_RESULT kiln_status_t kiln_arena_allocate(kiln_arena_t *arena, size_t size,
                                                       size_t alignment, void **out_ptr);
/* As kiln_arena_allocate, with the bytes set to zero. */
KILN_MUST_USE_RESULT kiln_status_t kiln_arena_allocate_zeroed(kiln_arena_t *arena, size_t size,
                                                              size_t alignment, void **out_ptr);
/* `count` elements of `element_size` bytes, failing cleanly on overflow. */
KILN_MUST_USE_RESULT kiln_status_t kiln_arena_allocate_array(kiln_arena_t *arena, size_t count,
                                                             size_t element_size, size_t alignment,
                                                             void **out_ptr);
/* Copies a NUL-terminated string into the arena. */
KILN_MUST_USE_RESULT kiln_status_t kiln_arena_strdup(kiln_arena_t *arena, const char *text,
                                                     char **out_text);

/* Bytes handed out since the last reset: the sum of the sizes asked of
 * kiln_arena_allocate, alignment padding excluded (an allocation through the
 * adapter also counts its 16-byte size header). */
size_t kiln_arena_bytes_used(const kiln_arena_t *arena);
/* Bytes the arena holds from its allocator, block headers included. */
size_t kiln_arena_bytes_reserved(const kiln_arena_t *arena);

/* An allocator that allocates from `arena` (see the note at the top of this
 * file). It stays valid as long as the arena; blocks it hands out are
 * invalidated by kiln_arena_reset. */
kiln_allocator_t kiln_arena_allocator(kiln_arena_t *arena);

#endif /* KILN_BASE_ARENA_H_ */
