/*
 * `kiln conformance`: ONNX's backend node tests through the importer and the
 * reference interpreter, or with --target T through the graph compiler
 * (kiln_compiler_build for T at opt_level 3) and the graph executor (with
 * --executor vm, the VM: docs/vm.md).
 *
 * Each case folder of CASES_DIR (sorted by name) runs in a fork()ed child
 * with an alarm, so a crash, an abort or a hang in one case is recorded
 * against that case and the run goes on. The child runs the case as a user
 * runs the model: it loads it KILN_ONNX_CASE_INPUTS_AT_RUN (the model file
 * as it is, imported with no options and nothing known of the test
 * inputs), feeds the test inputs to @main on the interpreter, or to the
 * compiled module's graph executor, at run time, and compares every
 * output as ONNX does (kiln_onnx_compare, rtol 1e-3, atol 1e-7). Nothing is
 * folded from the test inputs at import, so a pass has computed its outputs
 * from the inputs at run time. It reports through a pipe in at most PIPE_BUF bytes
 * of text, written before it exits so the parent can reap it first and read
 * after: a line "ops\tAbs,Mul" with the model's operator types (sent before
 * the run, so a crash still names them) and a line "result\tFAIL\treason".
 * The parent reads the exit status too: a signal is "crashed: signal N"
 * (SIGALRM: "timed out"), a non-zero exit after a result is a sanitizer's
 * report and fails the case. Up to --jobs children run at once.
 *
 * The results then go to the totals line, the optional markdown report (no
 * date, so the same tree gives the same file), the pass list check (a listed
 * case that does not pass is a regression: exit 1) and the pass list writer.
 * A case is UNSUPPORTED when the import refuses it with UNIMPLEMENTED (an
 * operator or form kiln lacks, or an input the importer needs as a constant
 * known at import, such as DFT's dft_length fed as a graph input) or, with
 * --target, the graph compiler does (symbolic dims, dyn operators), and
 * FAIL for anything else that goes wrong. When CASES_DIR does not exist the
 * command says so and exits 77, which ctest reports as skipped.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "kiln/conformance.h"
#include "kiln/version.h"

#define KILN_CONFORMANCE_DEFAULT_DIR     "/usr/share/libonnx-testdata/data/node"
#define KILN_CONFORMANCE_EXIT_SKIP       77
#define KILN_CONFORMANCE_DEFAULT_TIMEOUT 60
#define KILN_CONFORMANCE_MAX_JOBS        64
/* A child's whole report fits one pipe write that cannot block. */
#define KILN_CONFORMANCE_MESSAGE_CAPACITY PIPE_BUF
#define KILN_CONFORMANCE_OPS_CAPACITY     1024
#define KILN_CONFORMANCE_REASON_CAPACITY  400
/* Distinct reasons shown per operator in the report's summary table. */
#define KILN_CONFORMANCE_REASONS_SHOWN 3

static const char *const kiln_conformance_result_names[] = {"PASS", "FAIL", "UNSUPPORTED"};

typedef struct kiln_conformance_options_t {
  const char *cases_dir;
  const char *report;
  const char *pass_list;
  const char *write_pass_list;
  const char *filter;
  const char *target;   /* NULL: the interpreter; else compiled for this target */
  const char *executor; /* with a target: "graph", "vm" or "auto" (NULL: auto) */
  int64_t jobs;
  int64_t timeout;
  bool verbose;
  int argc; /* the command line, for the report */
  char **argv;
} kiln_conformance_options_t;

typedef struct kiln_conformance_case_t {
  char *name;
  kiln_conformance_result_t result;
  char *reason;   /* "" for a pass */
  char *ops;      /* the model's operator types, "Add,Mul"; "" when unknown */
  char *operator; /* the group in the report, see kiln_conformance_operator */
} kiln_conformance_case_t;

/* Names in a growing array (the case folders, a pass list's lines). */
typedef struct kiln_conformance_names_t {
  char **items;
  size_t count;
  size_t capacity;
} kiln_conformance_names_t;

/* Every case of a run, in name order (so a name is found by bisection),
 * and the totals. */
typedef struct kiln_conformance_run_t {
  kiln_conformance_case_t *cases;
  size_t count;
  size_t counts[KILN_CONFORMANCE_RESULT_COUNT_];
} kiln_conformance_run_t;

static kiln_conformance_case_t *kiln_conformance_at(const kiln_conformance_run_t *run, size_t i) {
  return &run->cases[i];
}

/* qsort's and bsearch's order of an array of strings. */
static int kiln_conformance_compare_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const kiln_conformance_case_t *kiln_conformance_find(const kiln_conformance_run_t *run,
                                                            const char *name) {
  /* A case starts with its name, so the cases bisect as an array of names. */
  return run->count == 0 ? NULL
                         : bsearch(&name, run->cases, run->count, sizeof(run->cases[0]),
                                   kiln_conformance_compare_names);
}

/* Takes `name` (freed here on failure) into `names`. */
static kiln_status_t kiln_conformance_names_push(kiln_conformance_names_t *names, char *name) {
  if (names->count == names->capacity) {
    size_t capacity = names->capacity ? 2 * names->capacity : 64;
    char **grown = realloc(names->items, capacity * sizeof(char *));
    if (!grown) {
      free(name);
      return KILN_STATUS(RESOURCE_EXHAUSTED, "out of memory for %zu names", capacity);
    }
    names->items = grown;
    names->capacity = capacity;
  }
  names->items[names->count++] = name;
  return KILN_OK;
}

static void kiln_conformance_names_free(kiln_conformance_names_t *names) {
  for (size_t i = 0; i < names->count; i++) {
    free(names->items[i]);
  }
  free(names->items);
  *names = (kiln_conformance_names_t){0};
}

/* A copy of `text` for the run (RESOURCE_EXHAUSTED when out of memory). */
static kiln_status_t kiln_conformance_strdup(const char *text, char **out_copy) {
  *out_copy = strdup(text);
  return *out_copy ? KILN_OK : KILN_STATUS(RESOURCE_EXHAUSTED, "out of memory copying text");
}

/* ---- options ---- */

static kiln_status_t kiln_conformance_parse_count(const char *flag, const char *text,
                                                  int64_t maximum, int64_t *out_value) {
  if (text == NULL) {
    return kiln_cli_usage("missing value after", flag);
  }
  char *end = NULL;
  errno = 0;
  long long value = strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 1 || value > maximum) {
    char message[64];
    snprintf(message, sizeof(message), "expected a whole number from 1 to %lld for",
             (long long)maximum);
    return kiln_cli_usage(message, flag);
  }
  *out_value = value;
  return KILN_OK;
}

/* The option taking a value at argv[*index], its value after it. */
static kiln_status_t kiln_conformance_parse_value(int argc, char **argv, int *index,
                                                  kiln_conformance_options_t *options) {
  const char *flag = argv[*index];
  const char *value = *index + 1 < argc ? argv[*index + 1] : NULL;
  (*index)++;
  if (strcmp(flag, "--jobs") == 0) {
    return kiln_conformance_parse_count(flag, value, KILN_CONFORMANCE_MAX_JOBS, &options->jobs);
  }
  if (strcmp(flag, "--timeout") == 0) {
    return kiln_conformance_parse_count(flag, value, 86400, &options->timeout);
  }
  const char **slot = strcmp(flag, "--report") == 0            ? &options->report
                      : strcmp(flag, "--pass-list") == 0       ? &options->pass_list
                      : strcmp(flag, "--write-pass-list") == 0 ? &options->write_pass_list
                      : strcmp(flag, "--filter") == 0          ? &options->filter
                      : strcmp(flag, "--target") == 0          ? &options->target
                      : strcmp(flag, "--executor") == 0        ? &options->executor
                                                               : NULL;
  if (slot == NULL) {
    return kiln_cli_usage("unknown option", flag);
  }
  if (value == NULL) {
    return kiln_cli_usage("missing value after", flag);
  }
  *slot = value;
  return KILN_OK;
}

/* --executor's value (docs/vm.md); it needs --target. */
static kiln_status_t kiln_conformance_executor(const kiln_conformance_options_t *options,
                                               kiln_executor_kind_t *out_kind) {
  const char *value = options->executor;
  *out_kind = KILN_EXECUTOR_AUTO;
  if (value && !options->target) {
    return kiln_cli_usage("--executor chooses among compiled executors; it needs", "--target");
  }
  if (!value || strcmp(value, "auto") == 0) {
    return KILN_OK;
  }
  if (strcmp(value, "graph") == 0 || strcmp(value, "vm") == 0) {
    *out_kind = strcmp(value, "vm") == 0 ? KILN_EXECUTOR_VM : KILN_EXECUTOR_GRAPH;
    return KILN_OK;
  }
  return kiln_cli_usage("expected graph, vm or auto after", "--executor");
}

static kiln_status_t kiln_conformance_parse_options(int argc, char **argv,
                                                    kiln_conformance_options_t *options) {
  *options = (kiln_conformance_options_t){
      .jobs = 1, .timeout = KILN_CONFORMANCE_DEFAULT_TIMEOUT, .argc = argc, .argv = argv};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--verbose") == 0) {
      options->verbose = true;
    } else if (strncmp(argv[i], "--", 2) == 0) {
      KILN_RETURN_IF_ERROR(kiln_conformance_parse_value(argc, argv, &i, options));
    } else if (options->cases_dir == NULL) {
      options->cases_dir = argv[i];
    } else {
      return kiln_cli_usage("unexpected argument", argv[i]);
    }
  }
  if (options->cases_dir == NULL) {
    options->cases_dir = KILN_CONFORMANCE_DEFAULT_DIR;
  }
  kiln_executor_kind_t kind = KILN_EXECUTOR_AUTO;
  return kiln_conformance_executor(options, &kind);
}

/* ---- the case folders ---- */

static kiln_status_t kiln_conformance_add_name(const char *dir, const char *name,
                                               kiln_conformance_names_t *names) {
  char *path = NULL;
  KILN_RETURN_IF_ERROR(kiln_cli_path_join(dir, name, &path));
  int is_dir = kiln_cli_is_directory(path);
  free(path);
  if (!is_dir) {
    return KILN_OK;
  }
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_conformance_strdup(name, &copy));
  return kiln_conformance_names_push(names, copy);
}

/* The sub-folders of `dir` whose names contain `filter` (NULL: all), sorted. */
static kiln_status_t kiln_conformance_list(const char *dir, const char *filter,
                                           kiln_conformance_names_t *names) {
  DIR *stream = opendir(dir);
  if (stream == NULL) {
    return KILN_STATUS(IO_ERROR, "%s: cannot list the case folders: %s", dir, strerror(errno));
  }
  kiln_status_t status = KILN_OK;
  struct dirent *entry;
  while (status == KILN_OK && (entry = readdir(stream)) != NULL) {
    if (entry->d_name[0] != '.' && (filter == NULL || strstr(entry->d_name, filter))) {
      status = kiln_conformance_add_name(dir, entry->d_name, names);
    }
  }
  closedir(stream);
  if (names->count > 1) {
    qsort(names->items, names->count, sizeof(char *), kiln_conformance_compare_names);
  }
  return status;
}

/* ---- the child: one case ---- */

static void kiln_conformance_send(int fd, const char *text) {
  size_t length = strlen(text);
  while (length > 0) {
    ssize_t wrote = write(fd, text, length);
    if (wrote < 0 && errno == EINTR) {
      continue;
    }
    if (wrote <= 0) {
      return;
    }
    text += wrote;
    length -= (size_t)wrote;
  }
}

/* The first line of the message, without the case folder's path (so the
 * report does not depend on where the cases are), no tabs, and cut short. */
static void kiln_conformance_reason(kiln_status_t status, const char *dir, char *buffer,
                                    size_t capacity) {
  const char *p = kiln_status_message(status);
  size_t prefix = strlen(dir), length = 0;
  while (*p != '\0' && *p != '\n' && length + 1 < capacity) {
    if (strncmp(p, dir, prefix) == 0 && p[prefix] == '/') {
      p += prefix + 1;
    } else {
      buffer[length++] = *p == '\t' || *p == '\r' ? ' ' : *p;
      p++;
    }
  }
  buffer[length] = '\0';
  if (*p != '\0' && *p != '\n' && length >= 3) {
    memcpy(buffer + length - 3, "...", 3);
  }
}

/* The runner's own tests (tests/cli/test_conformance.sh) make the case
 * that KILN_CONFORMANCE_STALL names hang, to check the timeout and the
 * report of a killed child; nothing else sets it. */
static void kiln_conformance_stall_if_asked(const char *name) {
  const char *stall = getenv("KILN_CONFORMANCE_STALL");
  while (stall && strcmp(stall, name) == 0) {
    pause();
  }
}

/* Runs in the child: reports on `fd` and exits. */
static void kiln_conformance_child(const kiln_conformance_options_t *options, const char *name,
                                   int fd) {
  alarm((unsigned)options->timeout);
  kiln_conformance_stall_if_asked(name);
  kiln_allocator_t allocator = kiln_allocator_system();
  char *dir = NULL;
  kiln_status_t status = kiln_cli_path_join(options->cases_dir, name, &dir);
  if (status != KILN_OK) {
    kiln_status_free(status);
    _exit(3);
  }
  char ops[KILN_CONFORMANCE_OPS_CAPACITY], line[KILN_CONFORMANCE_MESSAGE_CAPACITY];
  kiln_status_free(kiln_conformance_case_read_ops(allocator, dir, ops, sizeof(ops)));
  snprintf(line, sizeof(line), "ops\t%s\n", ops);
  kiln_conformance_send(fd, line);
  kiln_conformance_result_t result = KILN_CONFORMANCE_RESULT_FAIL;
  kiln_executor_kind_t executor = KILN_EXECUTOR_AUTO;
  kiln_status_free(kiln_conformance_executor(options, &executor)); /* checked when parsed */
  status = kiln_conformance_case_run_on(allocator, dir, options->target, executor, &result);
  char reason[KILN_CONFORMANCE_REASON_CAPACITY];
  kiln_conformance_reason(status, dir, reason, sizeof(reason));
  kiln_status_free(status);
  free(dir);
  snprintf(line, sizeof(line), "result\t%s\t%s\n", kiln_conformance_result_names[result], reason);
  kiln_conformance_send(fd, line);
  close(fd);
  exit(0); /* exit, not _exit: a sanitizer's leak check runs here */
}

/* ---- the parent: children, their reports and exit statuses ---- */

typedef struct kiln_conformance_job_t {
  pid_t pid;
  int fd;
  size_t index;
} kiln_conformance_job_t;

static kiln_status_t kiln_conformance_start(const kiln_conformance_options_t *options,
                                            const kiln_conformance_run_t *run, size_t index,
                                            kiln_conformance_job_t *out_job) {
  int fds[2];
  if (pipe(fds) != 0) {
    return KILN_STATUS(IO_ERROR, "cannot make a pipe for a case: %s", strerror(errno));
  }
  fflush(NULL); /* else the child's exit writes the parent's buffered output again */
  pid_t pid = fork();
  if (pid < 0) {
    int error = errno;
    close(fds[0]);
    close(fds[1]);
    return KILN_STATUS(IO_ERROR, "cannot fork a process for a case: %s", strerror(error));
  }
  if (pid == 0) {
    close(fds[0]);
    kiln_conformance_child(options, kiln_conformance_at(run, index)->name, fds[1]);
  }
  close(fds[1]);
  *out_job = (kiln_conformance_job_t){.pid = pid, .fd = fds[0], .index = index};
  return KILN_OK;
}

static size_t kiln_conformance_read_report(int fd, char *buffer, size_t capacity) {
  size_t length = 0;
  while (length + 1 < capacity) {
    ssize_t got = read(fd, buffer + length, capacity - 1 - length);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      break;
    }
    length += (size_t)got;
  }
  buffer[length] = '\0';
  return length;
}

/* A child's report, parsed in place: the fields of its "ops" and "result"
 * lines (NULL when a line is missing). */
typedef struct kiln_conformance_message_t {
  const char *ops;
  const char *result;
  const char *reason;
} kiln_conformance_message_t;

static kiln_conformance_message_t kiln_conformance_parse_message(char *text) {
  kiln_conformance_message_t message = {NULL, NULL, NULL};
  for (char *line = text; line != NULL && *line != '\0';) {
    char *end = strchr(line, '\n');
    if (end != NULL) {
      *end = '\0';
    }
    if (strncmp(line, "ops\t", 4) == 0) {
      message.ops = line + 4;
    } else if (strncmp(line, "result\t", 7) == 0) {
      char *tab = strchr(line + 7, '\t');
      if (tab != NULL) {
        *tab = '\0';
      }
      message.result = line + 7;
      message.reason = tab != NULL ? tab + 1 : "";
    }
    line = end != NULL ? end + 1 : NULL;
  }
  return message;
}

/* What the exit status adds: NULL when the child exited normally after its
 * result (`reported`, NULL when none came), else the failure ("crashed:
 * signal 11 (Segmentation fault)", "timed out after 60 s"). */
static const char *kiln_conformance_exit_reason(const kiln_conformance_options_t *options,
                                                int wait_status, const char *reported, char *buffer,
                                                size_t capacity) {
  if (WIFSIGNALED(wait_status)) {
    int signal_number = WTERMSIG(wait_status);
    if (signal_number == SIGALRM) {
      snprintf(buffer, capacity, "timed out after %lld s", (long long)options->timeout);
    } else {
      snprintf(buffer, capacity, "crashed: signal %d (%s)", signal_number,
               strsignal(signal_number));
    }
    return buffer;
  }
  int code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
  if (code == 0 && reported != NULL) {
    return NULL;
  }
  if (reported != NULL) {
    snprintf(buffer, capacity, "exited with code %d after reporting %s (a sanitizer's report?)",
             code, reported);
  } else {
    snprintf(buffer, capacity, "exited with code %d without a result", code);
  }
  return buffer;
}

static kiln_status_t kiln_conformance_record(kiln_conformance_run_t *run,
                                             kiln_conformance_case_t *onnx_case,
                                             kiln_conformance_result_t result, const char *reason,
                                             const char *ops) {
  onnx_case->result = result;
  run->counts[result]++;
  KILN_RETURN_IF_ERROR(kiln_conformance_strdup(reason, &onnx_case->reason));
  return kiln_conformance_strdup(ops, &onnx_case->ops);
}

/* Reads a reaped child's report and records its case. */
static kiln_status_t kiln_conformance_finish(const kiln_conformance_options_t *options,
                                             kiln_conformance_run_t *run,
                                             const kiln_conformance_job_t *job, int wait_status) {
  char text[KILN_CONFORMANCE_MESSAGE_CAPACITY * 2];
  kiln_conformance_read_report(job->fd, text, sizeof(text));
  close(job->fd);
  kiln_conformance_message_t message = kiln_conformance_parse_message(text);
  kiln_conformance_result_t result = KILN_CONFORMANCE_RESULT_FAIL;
  for (int r = 0; message.result != NULL && r < KILN_CONFORMANCE_RESULT_COUNT_; r++) {
    if (strcmp(message.result, kiln_conformance_result_names[r]) == 0) {
      result = (kiln_conformance_result_t)r;
    }
  }
  char exit_reason[KILN_CONFORMANCE_REASON_CAPACITY];
  const char *reason = kiln_conformance_exit_reason(options, wait_status, message.result,
                                                    exit_reason, sizeof(exit_reason));
  if (reason != NULL) {
    result = KILN_CONFORMANCE_RESULT_FAIL;
  } else {
    reason = message.reason;
  }
  return kiln_conformance_record(run, kiln_conformance_at(run, job->index), result, reason,
                                 message.ops != NULL ? message.ops : "");
}

static void kiln_conformance_progress(const kiln_conformance_options_t *options,
                                      const kiln_conformance_run_t *run, size_t index) {
  if (!options->verbose) {
    return;
  }
  size_t done = 0;
  for (int r = 0; r < KILN_CONFORMANCE_RESULT_COUNT_; r++) {
    done += run->counts[r];
  }
  const kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, index);
  printf("[%zu/%zu] %s: %s%s%s\n", done, run->count, onnx_case->name,
         kiln_conformance_result_names[onnx_case->result], onnx_case->reason[0] ? ": " : "",
         onnx_case->reason);
}

/* Reaps one child, records its case and takes it off `jobs`. */
static kiln_status_t kiln_conformance_wait(const kiln_conformance_options_t *options,
                                           kiln_conformance_run_t *run,
                                           kiln_conformance_job_t *jobs, size_t *running) {
  int wait_status = 0;
  pid_t pid;
  do {
    pid = waitpid(-1, &wait_status, 0);
  } while (pid < 0 && errno == EINTR);
  if (pid < 0) {
    return KILN_STATUS(IO_ERROR, "waiting for a case's process: %s", strerror(errno));
  }
  for (size_t i = 0; i < *running; i++) {
    if (jobs[i].pid == pid) {
      kiln_conformance_job_t job = jobs[i];
      jobs[i] = jobs[--*running];
      KILN_RETURN_IF_ERROR(kiln_conformance_finish(options, run, &job, wait_status));
      kiln_conformance_progress(options, run, job.index);
      return KILN_OK;
    }
  }
  return KILN_OK; /* not a case's process */
}

/* After an error: stops and reaps the children still running. */
static void kiln_conformance_abandon(kiln_conformance_job_t *jobs, size_t running) {
  for (size_t i = 0; i < running; i++) {
    kill(jobs[i].pid, SIGKILL);
    while (waitpid(jobs[i].pid, NULL, 0) < 0 && errno == EINTR) {
    }
    close(jobs[i].fd);
  }
}

static kiln_status_t kiln_conformance_run_cases(const kiln_conformance_options_t *options,
                                                kiln_conformance_run_t *run) {
  kiln_conformance_job_t jobs[KILN_CONFORMANCE_MAX_JOBS];
  size_t count = run->count, next = 0, running = 0;
  kiln_status_t status = KILN_OK;
  while (status == KILN_OK && (next < count || running > 0)) {
    if (running < (size_t)options->jobs && next < count) {
      status = kiln_conformance_start(options, run, next, &jobs[running]);
      running += status == KILN_OK;
      next += status == KILN_OK;
    } else {
      status = kiln_conformance_wait(options, run, jobs, &running);
    }
  }
  kiln_conformance_abandon(jobs, running);
  return status;
}

/* ---- a run's cases ---- */

static void kiln_conformance_run_deinitialize(kiln_conformance_run_t *run) {
  for (size_t i = 0; i < run->count; i++) {
    kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, i);
    free(onnx_case->name);
    free(onnx_case->reason);
    free(onnx_case->ops);
    free(onnx_case->operator);
  }
  free(run->cases);
}

/* The run's cases, one per name (taken), in the names' (sorted) order. */
static kiln_status_t kiln_conformance_run_initialize(const kiln_conformance_options_t *options,
                                                     kiln_conformance_run_t *run) {
  memset(run, 0, sizeof(*run));
  kiln_conformance_names_t names = {0};
  kiln_status_t status = kiln_conformance_list(options->cases_dir, options->filter, &names);
  if (status == KILN_OK && names.count > 0) {
    run->cases = calloc(names.count, sizeof(run->cases[0]));
    status = run->cases ? KILN_OK : KILN_STATUS(RESOURCE_EXHAUSTED, "out of memory for the cases");
  }
  for (size_t i = 0; status == KILN_OK && i < names.count; i++) {
    run->cases[i] =
        (kiln_conformance_case_t){.name = names.items[i], .result = KILN_CONFORMANCE_RESULT_FAIL};
    names.items[i] = NULL;
    run->count = i + 1;
  }
  kiln_conformance_names_free(&names);
  return status;
}

/* ---- operators: how the report groups cases ---- */

static bool kiln_conformance_single(const char *ops) {
  return ops != NULL && ops[0] != '\0' && strchr(ops, ',') == NULL;
}

/* A case's operator: its model's one operator type; for an "_expanded" case
 * (a function operator written out in primitives) the operator of the case
 * it expands; otherwise the family in its name ("test_sequence_map_x":
 * "sequence"), marked with a star. */
static void kiln_conformance_operator_of(const kiln_conformance_run_t *run,
                                         const kiln_conformance_case_t *onnx_case, char *buffer,
                                         size_t capacity) {
  static const char suffix[] = "_expanded";
  size_t length = strlen(onnx_case->name), suffix_length = sizeof(suffix) - 1;
  if (length > suffix_length && strcmp(onnx_case->name + length - suffix_length, suffix) == 0) {
    snprintf(buffer, capacity, "%.*s", (int)(length - suffix_length), onnx_case->name);
    const kiln_conformance_case_t *plain = kiln_conformance_find(run, buffer);
    if (plain != NULL && kiln_conformance_single(plain->ops)) {
      snprintf(buffer, capacity, "%s", plain->ops);
      return;
    }
  }
  if (kiln_conformance_single(onnx_case->ops)) {
    snprintf(buffer, capacity, "%s", onnx_case->ops);
    return;
  }
  const char *family =
      strncmp(onnx_case->name, "test_", 5) == 0 ? onnx_case->name + 5 : onnx_case->name;
  snprintf(buffer, capacity, "%.*s*", (int)strcspn(family, "_"), family);
}

static kiln_status_t kiln_conformance_name_operators(kiln_conformance_run_t *run) {
  for (size_t i = 0; i < run->count; i++) {
    kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, i);
    char buffer[KILN_CONFORMANCE_OPS_CAPACITY];
    kiln_conformance_operator_of(run, onnx_case, buffer, sizeof(buffer));
    KILN_RETURN_IF_ERROR(kiln_conformance_strdup(buffer, &onnx_case->operator));
  }
  return KILN_OK;
}

/* ---- the report ---- */

/* The report and pass list are built as text (kiln_cli_text_t: the first
 * failure sticks), then saved once. */
typedef kiln_cli_text_t kiln_conformance_writer_t;

#define kiln_conformance_put kiln_cli_text_append

/* Writes the text to `path` (the error names `option`) and frees it. */
static kiln_status_t kiln_conformance_save(kiln_conformance_writer_t *writer, const char *path,
                                           const char *option) {
  return kiln_status_annotate(kiln_cli_text_save(writer, path), "%s", option);
}

/* Text in a table cell: '|' escaped. */
static void kiln_conformance_put_cell(kiln_conformance_writer_t *writer, const char *text) {
  for (const char *bar; writer->status == KILN_OK && (bar = strchr(text, '|')) != NULL;
       text = bar + 1) {
    kiln_conformance_put(writer, "%.*s\\|", (int)(bar - text), text);
  }
  kiln_conformance_put(writer, "%s", text);
}

static void kiln_conformance_put_header(kiln_conformance_writer_t *writer,
                                        const kiln_conformance_options_t *options,
                                        const kiln_conformance_run_t *run) {
  kiln_conformance_put(writer,
                       "# ONNX conformance\n\n"
                       "ONNX's backend node tests (`%s`) through kiln's ONNX\n"
                       "importer and %s. Each case runs as a user runs the model:\n"
                       "the model file unchanged and imported with no options, its graph inputs "
                       "left as\nrun-time inputs, the case's inputs fed at run time; nothing is "
                       "computed from\nthem at import. Every output is compared as ONNX "
                       "compares: the same count,\ndtype and shape, and |actual - expected| <= "
                       "atol + rtol |expected| with rtol\n1e-3, atol 1e-7. UNSUPPORTED: the "
                       "importer refuses the model (an operator or a\nform kiln does not have, "
                       "or an input it needs as a constant known at import,\nlike DFT's "
                       "dft_length fed as a graph input), or the graph compiler\ndoes (symbolic "
                       "dims, dyn operators: docs/dynamic-shapes.md). FAIL: anything\nelse (an "
                       "import error, a run error, a wrong output, a crash or a time-out).\nHow "
                       "to run it and read it: docs/onnx.md, \"Conformance\".\n\nProduced by "
                       "`kiln",
                       options->cases_dir,
                       !options->target ? "its reference interpreter"
                       : options->executor && strcmp(options->executor, "vm") == 0
                           ? "the graph compiler (opt_level 3) and the VM executor"
                           : "the graph compiler (opt_level 3) and its graph executor");
  for (int i = 0; i < options->argc; i++) {
    kiln_conformance_put(writer, strchr(options->argv[i], ' ') ? " \"%s\"" : " %s",
                         options->argv[i]);
  }
  size_t total = run->count;
  kiln_conformance_put(writer,
                       "` (kiln %s).\n\n**%zu passed, %zu failed, %zu unsupported of %zu.**\n\n",
                       kiln_version_string(), run->counts[KILN_CONFORMANCE_RESULT_PASS],
                       run->counts[KILN_CONFORMANCE_RESULT_FAIL],
                       run->counts[KILN_CONFORMANCE_RESULT_UNSUPPORTED], total);
}

static bool kiln_conformance_same_reason(const kiln_conformance_case_t *a,
                                         const kiln_conformance_case_t *b) {
  return a->result == b->result && strcmp(a->reason, b->reason) == 0;
}

/* Whether case `i` of the run belongs to `operator` and did not pass. */
static bool kiln_conformance_failing_in(const kiln_conformance_run_t *run, size_t i,
                                        const char *operator) {
  const kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, i);
  return onnx_case->result != KILN_CONFORMANCE_RESULT_PASS &&
         strcmp(onnx_case->operator, operator) == 0;
}

/* The distinct reasons of an operator's cases, the first few with counts. */
static void kiln_conformance_put_reasons(kiln_conformance_writer_t *writer,
                                         const kiln_conformance_run_t *run, const char *operator) {
  size_t count = run->count, distinct = 0;
  for (size_t i = 0; i < count; i++) {
    const kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, i);
    size_t earlier = 0, same = 0;
    for (size_t j = 0; j < count; j++) {
      if (kiln_conformance_failing_in(run, j, operator) &&
          kiln_conformance_same_reason(onnx_case, kiln_conformance_at(run, j))) {
        earlier += j < i;
        same++;
      }
    }
    if (!kiln_conformance_failing_in(run, i, operator) || earlier > 0) {
      continue;
    }
    if (distinct++ < KILN_CONFORMANCE_REASONS_SHOWN) {
      kiln_conformance_put(writer, "%s%s (%zu): ", distinct > 1 ? "<br>" : "",
                           kiln_conformance_result_names[onnx_case->result], same);
      kiln_conformance_put_cell(writer, onnx_case->reason);
    }
  }
  if (distinct > KILN_CONFORMANCE_REASONS_SHOWN) {
    kiln_conformance_put(writer, "<br>and %zu other reasons",
                         distinct - KILN_CONFORMANCE_REASONS_SHOWN);
  }
}

/* The operator's row of the summary table, when some of its cases fail. */
static void kiln_conformance_put_operator(kiln_conformance_writer_t *writer,
                                          const kiln_conformance_run_t *run, const char *operator) {
  size_t counts[KILN_CONFORMANCE_RESULT_COUNT_] = {0};
  for (size_t i = 0; i < run->count; i++) {
    const kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, i);
    counts[onnx_case->result] += strcmp(onnx_case->operator, operator) == 0;
  }
  if (counts[KILN_CONFORMANCE_RESULT_FAIL] + counts[KILN_CONFORMANCE_RESULT_UNSUPPORTED] == 0) {
    return;
  }
  kiln_conformance_put(writer, "| ");
  kiln_conformance_put_cell(writer, operator);
  kiln_conformance_put(writer, " | %zu | %zu | %zu | ", counts[KILN_CONFORMANCE_RESULT_PASS],
                       counts[KILN_CONFORMANCE_RESULT_FAIL],
                       counts[KILN_CONFORMANCE_RESULT_UNSUPPORTED]);
  kiln_conformance_put_reasons(writer, run, operator);
  kiln_conformance_put(writer, " |\n");
}

/* The summary table: one row per operator with cases that do not pass. */
static void kiln_conformance_put_operators(kiln_conformance_writer_t *writer,
                                           const kiln_conformance_run_t *run) {
  size_t count = run->count;
  const char **operators = calloc(count ? count : 1, sizeof(const char *));
  if (!operators && writer->status == KILN_OK) {
    writer->status = KILN_STATUS(RESOURCE_EXHAUSTED, "out of memory for the operators");
  }
  for (size_t i = 0; operators && i < count; i++) {
    operators[i] = kiln_conformance_at(run, i)->operator;
  }
  if (operators && count > 0) {
    qsort(operators, count, sizeof(const char *), kiln_conformance_compare_names);
  }
  kiln_conformance_put(writer,
                       "## Operators with cases that do not pass\n\n"
                       "Cases are grouped by their model's operator; an `_expanded` case by the "
                       "operator\nit expands; a model of several operators, or one that could "
                       "not be read, by the\nfamily in its name, marked with a star.\n\n"
                       "| operator | pass | fail | unsupported | reasons (cases) |\n"
                       "| --- | ---: | ---: | ---: | --- |\n");
  for (size_t i = 0; operators && i < count && writer->status == KILN_OK; i++) {
    if (i == 0 || strcmp(operators[i], operators[i - 1]) != 0) {
      kiln_conformance_put_operator(writer, run, operators[i]);
    }
  }
  free(operators);
}

static void kiln_conformance_put_cases(kiln_conformance_writer_t *writer,
                                       const kiln_conformance_run_t *run) {
  kiln_conformance_put(writer, "\n## Every case\n\n| case | result | reason |\n| --- | --- | --- "
                               "|\n");
  for (size_t i = 0; i < run->count; i++) {
    const kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, i);
    kiln_conformance_put(writer, "| %s | %s | ", onnx_case->name,
                         kiln_conformance_result_names[onnx_case->result]);
    kiln_conformance_put_cell(writer, onnx_case->reason);
    kiln_conformance_put(writer, " |\n");
  }
}

static kiln_status_t kiln_conformance_write_report(const kiln_conformance_options_t *options,
                                                   const kiln_conformance_run_t *run) {
  kiln_conformance_writer_t writer = {0};
  kiln_conformance_put_header(&writer, options, run);
  kiln_conformance_put_operators(&writer, run);
  kiln_conformance_put_cases(&writer, run);
  return kiln_conformance_save(&writer, options->report, "--report");
}

/* ---- pass lists ---- */

static kiln_status_t kiln_conformance_write_pass_list(const kiln_conformance_options_t *options,
                                                      const kiln_conformance_run_t *run) {
  kiln_conformance_writer_t writer = {0};
  kiln_conformance_put(&writer,
                       "# ONNX backend node tests that pass through kiln's importer and\n"
                       "# %s, their inputs fed at run time, written by\n"
                       "# `kiln conformance --write-pass-list` (make conformance). `kiln\n"
                       "# conformance --pass-list` fails when one of them no longer passes.\n",
                       options->target ? "the graph compiler" : "the reference interpreter");
  for (size_t i = 0; i < run->count; i++) {
    const kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, i);
    if (onnx_case->result == KILN_CONFORMANCE_RESULT_PASS) {
      kiln_conformance_put(&writer, "%s\n", onnx_case->name);
    }
  }
  return kiln_conformance_save(&writer, options->write_pass_list, "--write-pass-list");
}

static bool kiln_conformance_is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

/* Adds the name on one line of a pass list (text after '#' is a comment). */
static kiln_status_t kiln_conformance_add_listed(const char *line, size_t length,
                                                 kiln_conformance_names_t *names) {
  const char *hash = memchr(line, '#', length);
  length = hash != NULL ? (size_t)(hash - line) : length;
  while (length > 0 && kiln_conformance_is_blank(line[0])) {
    line++;
    length--;
  }
  while (length > 0 && kiln_conformance_is_blank(line[length - 1])) {
    length--;
  }
  if (length == 0) {
    return KILN_OK;
  }
  char *name = strndup(line, length);
  if (name == NULL) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "out of memory for a pass list's name");
  }
  return kiln_conformance_names_push(names, name);
}

static kiln_status_t kiln_conformance_read_pass_list(const char *path,
                                                     kiln_conformance_names_t *names) {
  char *data = NULL;
  size_t size = 0;
  KILN_RETURN_IF_ERROR(kiln_cli_read_file(path, &data, &size));
  kiln_status_t status = KILN_OK;
  for (const char *line = data, *end = line + size; status == KILN_OK && line < end;) {
    const char *newline = memchr(line, '\n', (size_t)(end - line));
    size_t length = newline != NULL ? (size_t)(newline - line) : (size_t)(end - line);
    status = kiln_conformance_add_listed(line, length, names);
    line += length + 1;
  }
  free(data);
  return status;
}

/* Prints a regression line when listed case `name` did not pass. */
static bool kiln_conformance_regressed(const kiln_conformance_options_t *options,
                                       const kiln_conformance_run_t *run, const char *name) {
  const kiln_conformance_case_t *onnx_case = kiln_conformance_find(run, name);
  if (onnx_case == NULL) {
    fprintf(stderr, "regression: %s (no such case in %s)\n", name, options->cases_dir);
    return true;
  }
  if (onnx_case->result == KILN_CONFORMANCE_RESULT_PASS) {
    return false;
  }
  fprintf(stderr, "regression: %s (%s: %s)\n", name,
          kiln_conformance_result_names[onnx_case->result], onnx_case->reason);
  return true;
}

/* Regressions (listed, within --filter, did not pass) and newly passing
 * cases (passed, not listed); `names` is sorted here. */
static kiln_status_t kiln_conformance_compare_lists(const kiln_conformance_options_t *options,
                                                    const kiln_conformance_run_t *run,
                                                    kiln_conformance_names_t *names) {
  size_t checked = 0, regressions = 0, newly = 0;
  for (size_t i = 0; i < names->count; i++) {
    const char *name = names->items[i];
    if (options->filter == NULL || strstr(name, options->filter) != NULL) {
      checked++;
      regressions += kiln_conformance_regressed(options, run, name);
    }
  }
  if (names->count > 1) {
    qsort(names->items, names->count, sizeof(char *), kiln_conformance_compare_names);
  }
  for (size_t i = 0; i < run->count; i++) {
    const kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, i);
    if (onnx_case->result == KILN_CONFORMANCE_RESULT_PASS &&
        (names->count == 0 || !bsearch(&onnx_case->name, names->items, names->count, sizeof(char *),
                                       kiln_conformance_compare_names))) {
      printf("newly passing: %s\n", onnx_case->name);
      newly++;
    }
  }
  printf("pass list %s: %zu listed cases checked, %zu regressions, %zu newly passing\n",
         options->pass_list, checked, regressions, newly);
  if (regressions > 0) {
    return KILN_STATUS(FAILED_PRECONDITION,
                       "%zu of the %zu cases listed in %s did not pass (the 'regression:' lines "
                       "above)",
                       regressions, checked, options->pass_list);
  }
  return KILN_OK;
}

static kiln_status_t kiln_conformance_check_pass_list(const kiln_conformance_options_t *options,
                                                      const kiln_conformance_run_t *run) {
  kiln_conformance_names_t names = {0};
  kiln_status_t status = kiln_conformance_read_pass_list(options->pass_list, &names);
  if (status == KILN_OK) {
    status = kiln_conformance_compare_lists(options, run, &names);
  } else {
    status = kiln_status_annotate(status, "--pass-list");
  }
  kiln_conformance_names_free(&names);
  return status;
}

/* ---- the command ---- */

static kiln_status_t kiln_conformance_finish_run(const kiln_conformance_options_t *options,
                                                 kiln_conformance_run_t *run) {
  printf("conformance: %zu passed, %zu failed, %zu unsupported of %zu\n",
         run->counts[KILN_CONFORMANCE_RESULT_PASS], run->counts[KILN_CONFORMANCE_RESULT_FAIL],
         run->counts[KILN_CONFORMANCE_RESULT_UNSUPPORTED], run->count);
  KILN_RETURN_IF_ERROR(kiln_conformance_name_operators(run));
  if (options->report != NULL) {
    KILN_RETURN_IF_ERROR(kiln_conformance_write_report(options, run));
  }
  if (options->write_pass_list != NULL) {
    KILN_RETURN_IF_ERROR(kiln_conformance_write_pass_list(options, run));
  }
  if (options->pass_list != NULL) {
    KILN_RETURN_IF_ERROR(kiln_conformance_check_pass_list(options, run));
  }
  return KILN_OK;
}

kiln_status_t kiln_cli_conformance(int argc, char **argv) {
  kiln_conformance_options_t options;
  KILN_RETURN_IF_ERROR(kiln_conformance_parse_options(argc, argv, &options));
  if (!kiln_cli_is_directory(options.cases_dir)) {
    fprintf(stderr,
            "kiln conformance: %s: no such folder, so nothing was checked (skipped, exit 77); "
            "the ONNX backend node tests come with Debian's libonnx-testdata "
            "(scripts/install-deps.sh)\n",
            options.cases_dir);
    exit(KILN_CONFORMANCE_EXIT_SKIP);
  }
  kiln_conformance_run_t run;
  kiln_status_t status = kiln_conformance_run_initialize(&options, &run);
  if (status == KILN_OK) {
    status = kiln_conformance_run_cases(&options, &run);
  }
  if (status == KILN_OK) {
    status = kiln_conformance_finish_run(&options, &run);
  }
  kiln_conformance_run_deinitialize(&run);
  return status;
}
