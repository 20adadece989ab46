/*
 * The runtime side of the backend ABI (include/kiln/backend.h) that is not
 * the thread pool: the per-thread last error and the workspace allocator.
 *
 * The last error is a fixed thread-local buffer, so setting it never
 * allocates and never fails (a message longer than the buffer is cut, with
 * "..." at the end). Workspaces come from the system allocator, 64-byte
 * aligned like tensors; a failed allocation sets the last error, which the
 * generated kernel reports by returning -1. A workspace holds nothing
 * defined (the kernel zeroes it when its Allocate asks for zeros); a debug
 * build (no NDEBUG: the sanitizer builds) fills it with 0xff bytes, a NaN
 * in every float lane, so a kernel that reads an element before writing it
 * gives wrong outputs that the tests see.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/backend.h"

#define KILN_LAST_ERROR_CAPACITY 1024

static _Thread_local char last_error[KILN_LAST_ERROR_CAPACITY];

void kiln_backend_set_last_error(const char *message) {
  size_t length = message ? strlen(message) : 0;
  if (length < sizeof(last_error)) {
    memcpy(last_error, message ? message : "", length + 1);
    return;
  }
  memcpy(last_error, message, sizeof(last_error) - 4);
  memcpy(last_error + sizeof(last_error) - 4, "...", 4);
}

const char *kiln_get_last_error(void) {
  return last_error;
}

void *kiln_backend_alloc_workspace(size_t bytes) {
  size_t rounded = (bytes + 63) & ~(size_t)63;
  void *ptr = rounded >= bytes ? aligned_alloc(64, rounded ? rounded : 64) : NULL;
#ifndef NDEBUG
  if (ptr) {
    memset(ptr, 0xff, rounded ? rounded : 64);
  }
#endif
  if (!ptr) {
    char message[96];
    snprintf(message, sizeof(message), "kiln_backend_alloc_workspace: cannot allocate %zu bytes",
             bytes);
    kiln_backend_set_last_error(message);
  }
  return ptr;
}

void kiln_backend_free_workspace(void *ptr) {
  free(ptr);
}
