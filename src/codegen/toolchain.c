/*
 * The system toolchain from a backend; see toolchain.h.
 */
#define _GNU_SOURCE
#include "codegen/toolchain.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/file.h"
#include "runtime/module_built.h"

kiln_status_t kiln_codegen_spawn(const char *who, char *const *argv, const char *log_path,
                                 int *out_exit) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int error = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    return KILN_STATUS(UNAVAILABLE, "%s: cannot run %s: %s", who, argv[0], strerror(error));
  }
  int wstatus = 0;
  if (waitpid(pid, &wstatus, 0) < 0) {
    return KILN_STATUS(INTERNAL, "%s: waiting for %s failed", who, argv[0]);
  }
  *out_exit = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return KILN_OK;
}

kiln_status_t kiln_codegen_temp_dir(const char *who, const char *prefix, char *dir,
                                    size_t capacity) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, capacity, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);
  if (!mkdtemp(dir)) {
    return KILN_STATUS(IO_ERROR, "%s: cannot make a temporary directory %s", who, dir);
  }
  return KILN_OK;
}

kiln_status_t kiln_codegen_load_library(kiln_allocator_t allocator, const char *path,
                                        kiln_runtime_module_t **out_module) {
  KILN_RETURN_IF_ERROR(kiln_runtime_module_load_built(allocator, path, out_module));
  void *bytes = NULL;
  size_t size = 0;
  kiln_status_t status = kiln_file_read_all(allocator, path, &bytes, &size);
  if (!status) {
    status = kiln_runtime_module_set_binary(*out_module, bytes, size);
    kiln_allocator_free(allocator, bytes);
  }
  if (status) {
    kiln_runtime_module_release(*out_module);
    *out_module = NULL;
  }
  return status;
}
