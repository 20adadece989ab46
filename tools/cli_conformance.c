/*
 * `kiln conformance`: ONNX's backend node tests through the importer and the
 * reference interpreter, or with --target T through the graph compiler
 * (kiln_compiler_build for T at opt_level 3) and the graph executor.
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
 * known at import, such as Range's limit or NonZero's input, fed as a graph
 * input), and FAIL for anything else that goes wrong. When CASES_DIR does not exist the
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

#include "base/array.h"
#include "base/file.h"
#include "base/hashmap.h"
#include "base/strbuf.h"
#include "cli.h"
#include "compiler/build.h"
#include "frontend/onnx/onnx_case.h"
#include "frontend/onnx/onnx_proto.h"
#include "interp/interp.h"
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

typedef enum kiln_conformance_result_e {
  KILN_CONFORMANCE_PASS,
  KILN_CONFORMANCE_FAIL,
  KILN_CONFORMANCE_UNSUPPORTED,
  KILN_CONFORMANCE_RESULT_COUNT_,
} kiln_conformance_result_t;

static const char *const kiln_conformance_result_names[] = {"PASS", "FAIL", "UNSUPPORTED"};

typedef struct kiln_conformance_options_t {
  const char *cases_dir;
  const char *report;
  const char *pass_list;
  const char *write_pass_list;
  const char *filter;
  const char *target; /* NULL: the interpreter; else compiled for this target */
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

/* Every case of a run, in name order, and the totals. */
typedef struct kiln_conformance_run_t {
  kiln_allocator_t allocator;
  kiln_array_t cases;    /* kiln_conformance_case_t */
  kiln_hashmap_t byname; /* name -> kiln_conformance_case_t index + 1 */
  size_t counts[KILN_CONFORMANCE_RESULT_COUNT_];
} kiln_conformance_run_t;

static kiln_conformance_case_t *kiln_conformance_at(const kiln_conformance_run_t *run, size_t i) {
  return kiln_array_at(&run->cases, i);
}

static const kiln_conformance_case_t *kiln_conformance_find(const kiln_conformance_run_t *run,
                                                            const char *name) {
  void *value = NULL;
  if (!kiln_hashmap_get(&run->byname, name, &value)) {
    return NULL;
  }
  return kiln_conformance_at(run, (size_t)(uintptr_t)value - 1);
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
  return KILN_OK;
}

/* ---- the case folders ---- */

/* qsort's order of an array of strings. */
static int kiln_conformance_compare_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static kiln_status_t kiln_conformance_add_name(kiln_allocator_t allocator, const char *dir,
                                               const char *name, kiln_array_t *names) {
  char *path = NULL;
  KILN_RETURN_IF_ERROR(kiln_path_join(allocator, dir, name, &path));
  int is_dir = kiln_file_is_directory(path);
  kiln_allocator_free(allocator, path);
  if (!is_dir) {
    return KILN_OK;
  }
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_strdup(allocator, name, &copy));
  kiln_status_t status = kiln_array_push(names, &copy);
  if (status) {
    kiln_allocator_free(allocator, copy);
  }
  return status;
}

/* The sub-folders of `dir` whose names contain `filter` (NULL: all), sorted. */
static kiln_status_t kiln_conformance_list(kiln_allocator_t allocator, const char *dir,
                                           const char *filter, kiln_array_t *names) {
  DIR *stream = opendir(dir);
  if (stream == NULL) {
    return KILN_STATUS(IO_ERROR, "%s: cannot list the case folders: %s", dir, strerror(errno));
  }
  kiln_status_t status = KILN_OK;
  struct dirent *entry;
  while (status == KILN_OK && (entry = readdir(stream)) != NULL) {
    if (entry->d_name[0] != '.' && (filter == NULL || strstr(entry->d_name, filter))) {
      status = kiln_conformance_add_name(allocator, dir, entry->d_name, names);
    }
  }
  closedir(stream);
  if (kiln_array_count(names) > 1) {
    qsort(kiln_array_data(names), kiln_array_count(names), sizeof(char *),
          kiln_conformance_compare_names);
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

/* The node's operator type, domain-qualified outside the default domain. */
static void kiln_conformance_op_name(const Onnx__NodeProto *node, char *buffer, size_t capacity) {
  const char *domain = node->domain ? node->domain : "";
  bool standard = domain[0] == '\0' || strcmp(domain, "ai.onnx") == 0;
  snprintf(buffer, capacity, "%s%s%s", standard ? "" : domain, standard ? "" : ".",
           node->op_type ? node->op_type : "?");
}

/* The distinct operator types of the graph's nodes in order, comma
 * separated; Constant only when there is nothing else. */
static void kiln_conformance_list_ops(const Onnx__GraphProto *graph, char *ops, size_t capacity) {
  ops[0] = '\0';
  for (size_t i = 0; i < graph->n_node; i++) {
    char name[128], item[130];
    kiln_conformance_op_name(graph->node[i], name, sizeof(name));
    snprintf(item, sizeof(item), ",%s,", name);
    char listed[KILN_CONFORMANCE_OPS_CAPACITY + 2];
    snprintf(listed, sizeof(listed), ",%s,", ops);
    if (strcmp(name, "Constant") == 0 || strstr(listed, item) != NULL ||
        strlen(ops) + strlen(name) + 2 > capacity) {
      continue;
    }
    strcat(ops, ops[0] ? "," : "");
    strcat(ops, name);
  }
  if (ops[0] == '\0' && graph->n_node > 0) {
    snprintf(ops, capacity, "Constant");
  }
}

/* The operator types of case folder `dir`'s model.onnx. */
static kiln_status_t kiln_conformance_read_ops(kiln_allocator_t allocator, const char *dir,
                                               char *ops, size_t capacity) {
  ops[0] = '\0';
  char *path = NULL;
  KILN_RETURN_IF_ERROR(kiln_path_join(allocator, dir, "model.onnx", &path));
  void *bytes = NULL;
  size_t size = 0;
  kiln_status_t status = kiln_file_read_all(allocator, path, &bytes, &size);
  kiln_allocator_free(allocator, path);
  KILN_RETURN_IF_ERROR(status);
  kiln_onnx_proto_allocator_t adapter;
  kiln_onnx_proto_allocator_initialize(&adapter, allocator);
  ProtobufCMessage *message = NULL;
  status = kiln_onnx_proto_unpack(&adapter, &onnx__model_proto__descriptor, "an ONNX ModelProto",
                                  bytes, size, &message);
  kiln_allocator_free(allocator, bytes);
  KILN_RETURN_IF_ERROR(status);
  const Onnx__ModelProto *model = (const Onnx__ModelProto *)message;
  if (model->graph != NULL) {
    kiln_conformance_list_ops(model->graph, ops, capacity);
  }
  protobuf_c_message_free_unpacked(message, &adapter.base);
  return KILN_OK;
}

static kiln_status_t kiln_conformance_compare_outputs(const kiln_onnx_case_t *onnx_case,
                                                      int num_outputs,
                                                      kiln_tensor_t *const *outputs) {
  if (num_outputs != onnx_case->num_outputs) {
    return KILN_STATUS(INVALID_ARGUMENT, "the model computes %d output(s); the case expects %d",
                       num_outputs, onnx_case->num_outputs);
  }
  for (int i = 0; i < num_outputs; i++) {
    KILN_RETURN_IF_ERROR_ANNOTATE(kiln_onnx_compare(onnx_case->outputs[i], outputs[i],
                                                    KILN_ONNX_CASE_RTOL, KILN_ONNX_CASE_ATOL),
                                  "output %d", i);
  }
  return KILN_OK;
}

/* The case's model compiled for `target` (opt_level 3) and run by the
 * graph executor; the outputs are copies the caller releases. */
static kiln_status_t kiln_conformance_run_compiled(const kiln_onnx_case_t *onnx_case,
                                                   const char *target, int *out_num_outputs,
                                                   kiln_tensor_t ***out_outputs) {
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.target = target;
  kiln_compiled_t *compiled = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_compiler_build(onnx_case->allocator, onnx_case->module, &options, &compiled));
  kiln_graph_executor_t *gx = NULL;
  kiln_status_t status = kiln_compiled_create_executor(compiled, &gx);
  for (int i = 0; !status && i < onnx_case->num_inputs; i++) {
    status = kiln_graph_executor_set_input(gx, i, kiln_tensor_dl(onnx_case->inputs[i]));
  }
  if (!status) {
    status = kiln_graph_executor_run(gx);
  }
  int count = status ? 0 : kiln_graph_executor_num_outputs(gx);
  if (!status) {
    status = kiln_allocator_malloc(onnx_case->allocator, (size_t)(count + 1) * sizeof(void *),
                                   (void **)out_outputs);
  }
  for (int o = 0; !status && o < count; o++) {
    status = kiln_graph_executor_copy_output(gx, o, onnx_case->allocator, &(*out_outputs)[o]);
    *out_num_outputs = status ? o : o + 1;
  }
  kiln_graph_executor_destroy(gx);
  kiln_compiled_destroy(compiled);
  return status;
}

static kiln_status_t kiln_conformance_run_loaded(const kiln_onnx_case_t *onnx_case,
                                                 const char *target) {
  int num_outputs = 0;
  kiln_tensor_t **outputs = NULL;
  kiln_status_t run =
      target ? kiln_conformance_run_compiled(onnx_case, target, &num_outputs, &outputs)
             : kiln_interp_run(onnx_case->module, "main", onnx_case->num_inputs, onnx_case->inputs,
                               onnx_case->allocator, &num_outputs, &outputs);
  if (run) {
    for (int i = 0; i < num_outputs; i++) {
      kiln_tensor_release(outputs[i]);
    }
    kiln_allocator_free(onnx_case->allocator, outputs);
    return run;
  }
  kiln_status_t status = kiln_conformance_compare_outputs(onnx_case, num_outputs, outputs);
  for (int i = 0; i < num_outputs; i++) {
    kiln_tensor_release(outputs[i]);
  }
  kiln_allocator_free(onnx_case->allocator, outputs);
  return status;
}

/* Loads, runs and compares case folder `dir`; *out_status says why when it
 * is not a pass. */
static kiln_conformance_result_t kiln_conformance_check(kiln_allocator_t allocator, const char *dir,
                                                        const char *target,
                                                        kiln_status_t *out_status) {
  kiln_onnx_case_t onnx_case;
  kiln_status_t status =
      kiln_onnx_case_load(dir, KILN_ONNX_CASE_INPUTS_AT_RUN, allocator, &onnx_case);
  kiln_conformance_result_t result = KILN_CONFORMANCE_FAIL;
  if (status != KILN_OK) {
    if (kiln_status_code(status) == KILN_STATUS_CODE_UNIMPLEMENTED) {
      result = KILN_CONFORMANCE_UNSUPPORTED;
    }
  } else {
    status = kiln_conformance_run_loaded(&onnx_case, target);
    result = status == KILN_OK ? KILN_CONFORMANCE_PASS : KILN_CONFORMANCE_FAIL;
  }
  kiln_onnx_case_deinitialize(&onnx_case);
  *out_status = status;
  return result;
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
  kiln_status_t status = kiln_path_join(allocator, options->cases_dir, name, &dir);
  if (status != KILN_OK) {
    kiln_status_free(status);
    _exit(3);
  }
  char ops[KILN_CONFORMANCE_OPS_CAPACITY], line[KILN_CONFORMANCE_MESSAGE_CAPACITY];
  kiln_status_free(kiln_conformance_read_ops(allocator, dir, ops, sizeof(ops)));
  snprintf(line, sizeof(line), "ops\t%s\n", ops);
  kiln_conformance_send(fd, line);
  kiln_conformance_result_t result =
      kiln_conformance_check(allocator, dir, options->target, &status);
  char reason[KILN_CONFORMANCE_REASON_CAPACITY];
  kiln_conformance_reason(status, dir, reason, sizeof(reason));
  kiln_status_free(status);
  kiln_allocator_free(allocator, dir);
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
  KILN_RETURN_IF_ERROR(kiln_allocator_strdup(run->allocator, reason, &onnx_case->reason));
  return kiln_allocator_strdup(run->allocator, ops, &onnx_case->ops);
}

/* Reads a reaped child's report and records its case. */
static kiln_status_t kiln_conformance_finish(const kiln_conformance_options_t *options,
                                             kiln_conformance_run_t *run,
                                             const kiln_conformance_job_t *job, int wait_status) {
  char text[KILN_CONFORMANCE_MESSAGE_CAPACITY * 2];
  kiln_conformance_read_report(job->fd, text, sizeof(text));
  close(job->fd);
  kiln_conformance_message_t message = kiln_conformance_parse_message(text);
  kiln_conformance_result_t result = KILN_CONFORMANCE_FAIL;
  for (int r = 0; message.result != NULL && r < KILN_CONFORMANCE_RESULT_COUNT_; r++) {
    if (strcmp(message.result, kiln_conformance_result_names[r]) == 0) {
      result = (kiln_conformance_result_t)r;
    }
  }
  char exit_reason[KILN_CONFORMANCE_REASON_CAPACITY];
  const char *reason = kiln_conformance_exit_reason(options, wait_status, message.result,
                                                    exit_reason, sizeof(exit_reason));
  if (reason != NULL) {
    result = KILN_CONFORMANCE_FAIL;
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
  printf("[%zu/%zu] %s: %s%s%s\n", done, kiln_array_count(&run->cases), onnx_case->name,
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
  size_t count = kiln_array_count(&run->cases), next = 0, running = 0;
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
  for (size_t i = 0; i < kiln_array_count(&run->cases); i++) {
    kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, i);
    kiln_allocator_free(run->allocator, onnx_case->name);
    kiln_allocator_free(run->allocator, onnx_case->reason);
    kiln_allocator_free(run->allocator, onnx_case->ops);
    kiln_allocator_free(run->allocator, onnx_case->operator);
  }
  kiln_array_deinitialize(&run->cases);
  kiln_hashmap_deinitialize(&run->byname);
}

/* Takes the case `name` (freed here on failure) into the run. */
static kiln_status_t kiln_conformance_add_case(kiln_conformance_run_t *run, char *name) {
  kiln_conformance_case_t onnx_case = {.name = name, .result = KILN_CONFORMANCE_FAIL};
  kiln_status_t status = kiln_array_push(&run->cases, &onnx_case);
  if (status != KILN_OK) {
    kiln_allocator_free(run->allocator, name);
    return status;
  }
  uintptr_t index = kiln_array_count(&run->cases);
  return kiln_hashmap_put(&run->byname, name, (void *)index);
}

static kiln_status_t kiln_conformance_run_initialize(kiln_allocator_t allocator,
                                                     const kiln_conformance_options_t *options,
                                                     kiln_conformance_run_t *run) {
  memset(run, 0, sizeof(*run));
  run->allocator = allocator;
  kiln_array_initialize(&run->cases, allocator, sizeof(kiln_conformance_case_t));
  kiln_hashmap_initialize(&run->byname, allocator, KILN_HASHMAP_KEY_STRING);
  kiln_array_t names;
  kiln_array_initialize(&names, allocator, sizeof(char *));
  kiln_status_t status =
      kiln_conformance_list(allocator, options->cases_dir, options->filter, &names);
  for (size_t i = 0; i < kiln_array_count(&names); i++) {
    char *name = KILN_ARRAY_AT(&names, char *, i);
    if (status == KILN_OK) {
      status = kiln_conformance_add_case(run, name);
    } else {
      kiln_allocator_free(allocator, name);
    }
  }
  kiln_array_deinitialize(&names);
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
  for (size_t i = 0; i < kiln_array_count(&run->cases); i++) {
    kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, i);
    char buffer[KILN_CONFORMANCE_OPS_CAPACITY];
    kiln_conformance_operator_of(run, onnx_case, buffer, sizeof(buffer));
    KILN_RETURN_IF_ERROR(kiln_allocator_strdup(run->allocator, buffer, &onnx_case->operator));
  }
  return KILN_OK;
}

/* ---- the report ---- */

/* Text being built; the first failure sticks and later writes do nothing. */
typedef struct kiln_conformance_writer_t {
  kiln_strbuf_t text;
  kiln_status_t status;
} kiln_conformance_writer_t;

static void kiln_conformance_put(kiln_conformance_writer_t *writer, const char *format, ...)
    KILN_PRINTF_FORMAT(2, 3);

static void kiln_conformance_put(kiln_conformance_writer_t *writer, const char *format, ...) {
  if (writer->status != KILN_OK) {
    return;
  }
  va_list args;
  va_start(args, format);
  writer->status = kiln_strbuf_appendf_v(&writer->text, format, args);
  va_end(args);
}

/* Writes the text to `path` (the error names `option`) and frees it. */
static kiln_status_t kiln_conformance_save(kiln_conformance_writer_t *writer, const char *path,
                                           const char *option) {
  kiln_status_t status = writer->status;
  if (status == KILN_OK) {
    status = kiln_file_write_all(path, kiln_strbuf_c_str(&writer->text),
                                 kiln_strbuf_length(&writer->text));
  }
  kiln_strbuf_deinitialize(&writer->text);
  return kiln_status_annotate(status, "%s", option);
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
                       "or an input it needs as a constant known at import,\nlike Range's limit "
                       "or NonZero's input, fed as a graph input). FAIL: anything\nelse (an "
                       "import error, a run error, a wrong output, a crash or a time-out).\nHow "
                       "to run it and read it: docs/onnx.md, \"Conformance\".\n\nProduced by "
                       "`kiln",
                       options->cases_dir,
                       options->target ? "the graph compiler (opt_level 3) and its graph executor"
                                       : "its reference interpreter");
  for (int i = 0; i < options->argc; i++) {
    kiln_conformance_put(writer, strchr(options->argv[i], ' ') ? " \"%s\"" : " %s",
                         options->argv[i]);
  }
  size_t total = kiln_array_count(&run->cases);
  kiln_conformance_put(
      writer, "` (kiln %s).\n\n**%zu passed, %zu failed, %zu unsupported of %zu.**\n\n",
      kiln_version_string(), run->counts[KILN_CONFORMANCE_PASS], run->counts[KILN_CONFORMANCE_FAIL],
      run->counts[KILN_CONFORMANCE_UNSUPPORTED], total);
}

static bool kiln_conformance_same_reason(const kiln_conformance_case_t *a,
                                         const kiln_conformance_case_t *b) {
  return a->result == b->result && strcmp(a->reason, b->reason) == 0;
}

/* Whether case `i` of the run belongs to `operator` and did not pass. */
static bool kiln_conformance_failing_in(const kiln_conformance_run_t *run, size_t i,
                                        const char *operator) {
  const kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, i);
  return onnx_case->result != KILN_CONFORMANCE_PASS && strcmp(onnx_case->operator, operator) == 0;
}

/* The distinct reasons of an operator's cases, the first few with counts. */
static void kiln_conformance_put_reasons(kiln_conformance_writer_t *writer,
                                         const kiln_conformance_run_t *run, const char *operator) {
  size_t count = kiln_array_count(&run->cases), distinct = 0;
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
  for (size_t i = 0; i < kiln_array_count(&run->cases); i++) {
    const kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, i);
    counts[onnx_case->result] += strcmp(onnx_case->operator, operator) == 0;
  }
  if (counts[KILN_CONFORMANCE_FAIL] + counts[KILN_CONFORMANCE_UNSUPPORTED] == 0) {
    return;
  }
  kiln_conformance_put(writer, "| ");
  kiln_conformance_put_cell(writer, operator);
  kiln_conformance_put(writer, " | %zu | %zu | %zu | ", counts[KILN_CONFORMANCE_PASS],
                       counts[KILN_CONFORMANCE_FAIL], counts[KILN_CONFORMANCE_UNSUPPORTED]);
  kiln_conformance_put_reasons(writer, run, operator);
  kiln_conformance_put(writer, " |\n");
}

/* The summary table: one row per operator with cases that do not pass. */
static void kiln_conformance_put_operators(kiln_conformance_writer_t *writer,
                                           const kiln_conformance_run_t *run) {
  size_t count = kiln_array_count(&run->cases);
  kiln_array_t operators;
  kiln_array_initialize(&operators, run->allocator, sizeof(const char *));
  for (size_t i = 0; i < count && writer->status == KILN_OK; i++) {
    const char *operator= kiln_conformance_at(run, i)->operator;
    writer->status = kiln_array_push(&operators, &operator);
  }
  if (writer->status == KILN_OK && count > 0) {
    qsort(kiln_array_data(&operators), count, sizeof(const char *), kiln_conformance_compare_names);
  }
  kiln_conformance_put(writer,
                       "## Operators with cases that do not pass\n\n"
                       "Cases are grouped by their model's operator; an `_expanded` case by the "
                       "operator\nit expands; a model of several operators, or one that could "
                       "not be read, by the\nfamily in its name, marked with a star.\n\n"
                       "| operator | pass | fail | unsupported | reasons (cases) |\n"
                       "| --- | ---: | ---: | ---: | --- |\n");
  for (size_t i = 0; i < kiln_array_count(&operators) && writer->status == KILN_OK; i++) {
    const char *operator= KILN_ARRAY_AT(&operators, const char *, i);
    if (i == 0 || strcmp(operator, KILN_ARRAY_AT(&operators, const char *, i - 1)) != 0) {
      kiln_conformance_put_operator(writer, run, operator);
    }
  }
  kiln_array_deinitialize(&operators);
}

static void kiln_conformance_put_cases(kiln_conformance_writer_t *writer,
                                       const kiln_conformance_run_t *run) {
  kiln_conformance_put(writer, "\n## Every case\n\n| case | result | reason |\n| --- | --- | --- "
                               "|\n");
  for (size_t i = 0; i < kiln_array_count(&run->cases); i++) {
    const kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, i);
    kiln_conformance_put(writer, "| %s | %s | ", onnx_case->name,
                         kiln_conformance_result_names[onnx_case->result]);
    kiln_conformance_put_cell(writer, onnx_case->reason);
    kiln_conformance_put(writer, " |\n");
  }
}

static kiln_status_t kiln_conformance_write_report(const kiln_conformance_options_t *options,
                                                   const kiln_conformance_run_t *run) {
  kiln_conformance_writer_t writer = {.status = KILN_OK};
  kiln_strbuf_initialize(&writer.text, run->allocator);
  kiln_conformance_put_header(&writer, options, run);
  kiln_conformance_put_operators(&writer, run);
  kiln_conformance_put_cases(&writer, run);
  return kiln_conformance_save(&writer, options->report, "--report");
}

/* ---- pass lists ---- */

static kiln_status_t kiln_conformance_write_pass_list(const kiln_conformance_options_t *options,
                                                      const kiln_conformance_run_t *run) {
  kiln_conformance_writer_t writer = {.status = KILN_OK};
  kiln_strbuf_initialize(&writer.text, run->allocator);
  kiln_conformance_put(&writer,
                       "# ONNX backend node tests that pass through kiln's importer and\n"
                       "# %s, their inputs fed at run time, written by\n"
                       "# `kiln conformance --write-pass-list` (make conformance). `kiln\n"
                       "# conformance --pass-list` fails when one of them no longer passes.\n",
                       options->target ? "the graph compiler" : "the reference interpreter");
  for (size_t i = 0; i < kiln_array_count(&run->cases); i++) {
    const kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, i);
    if (onnx_case->result == KILN_CONFORMANCE_PASS) {
      kiln_conformance_put(&writer, "%s\n", onnx_case->name);
    }
  }
  return kiln_conformance_save(&writer, options->write_pass_list, "--write-pass-list");
}

static bool kiln_conformance_is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

/* Adds the name on one line of a pass list (text after '#' is a comment). */
static kiln_status_t kiln_conformance_add_listed(kiln_allocator_t allocator, const char *line,
                                                 size_t length, kiln_array_t *names) {
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
  char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc(allocator, length + 1, (void **)&name));
  memcpy(name, line, length);
  name[length] = '\0';
  kiln_status_t status = kiln_array_push(names, &name);
  if (status != KILN_OK) {
    kiln_allocator_free(allocator, name);
  }
  return status;
}

static kiln_status_t kiln_conformance_read_pass_list(kiln_allocator_t allocator, const char *path,
                                                     kiln_array_t *names) {
  void *data = NULL;
  size_t size = 0;
  KILN_RETURN_IF_ERROR(kiln_file_read_all(allocator, path, &data, &size));
  kiln_status_t status = KILN_OK;
  for (const char *line = data, *end = line + size; status == KILN_OK && line < end;) {
    const char *newline = memchr(line, '\n', (size_t)(end - line));
    size_t length = newline != NULL ? (size_t)(newline - line) : (size_t)(end - line);
    status = kiln_conformance_add_listed(allocator, line, length, names);
    line += length + 1;
  }
  kiln_allocator_free(allocator, data);
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
  if (onnx_case->result == KILN_CONFORMANCE_PASS) {
    return false;
  }
  fprintf(stderr, "regression: %s (%s: %s)\n", name,
          kiln_conformance_result_names[onnx_case->result], onnx_case->reason);
  return true;
}

/* Regressions (listed, within --filter, did not pass) and newly passing
 * cases (passed, not listed). */
static kiln_status_t kiln_conformance_compare_lists(const kiln_conformance_options_t *options,
                                                    const kiln_conformance_run_t *run,
                                                    const kiln_array_t *names,
                                                    kiln_hashmap_t *listed) {
  size_t checked = 0, regressions = 0, newly = 0;
  for (size_t i = 0; i < kiln_array_count(names); i++) {
    const char *name = KILN_ARRAY_AT(names, char *, i);
    if (options->filter == NULL || strstr(name, options->filter) != NULL) {
      checked++;
      regressions += kiln_conformance_regressed(options, run, name);
      KILN_RETURN_IF_ERROR(kiln_hashmap_put(listed, name, NULL));
    }
  }
  for (size_t i = 0; i < kiln_array_count(&run->cases); i++) {
    const kiln_conformance_case_t *onnx_case = kiln_conformance_at(run, i);
    if (onnx_case->result == KILN_CONFORMANCE_PASS &&
        !kiln_hashmap_contains(listed, onnx_case->name)) {
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
  kiln_array_t names;
  kiln_array_initialize(&names, run->allocator, sizeof(char *));
  kiln_hashmap_t listed;
  kiln_hashmap_initialize(&listed, run->allocator, KILN_HASHMAP_KEY_STRING);
  kiln_status_t status =
      kiln_conformance_read_pass_list(run->allocator, options->pass_list, &names);
  if (status == KILN_OK) {
    status = kiln_conformance_compare_lists(options, run, &names, &listed);
  } else {
    status = kiln_status_annotate(status, "--pass-list");
  }
  for (size_t i = 0; i < kiln_array_count(&names); i++) {
    kiln_allocator_free(run->allocator, KILN_ARRAY_AT(&names, char *, i));
  }
  kiln_array_deinitialize(&names);
  kiln_hashmap_deinitialize(&listed);
  return status;
}

/* ---- the command ---- */

static kiln_status_t kiln_conformance_finish_run(const kiln_conformance_options_t *options,
                                                 kiln_conformance_run_t *run) {
  printf("conformance: %zu passed, %zu failed, %zu unsupported of %zu\n",
         run->counts[KILN_CONFORMANCE_PASS], run->counts[KILN_CONFORMANCE_FAIL],
         run->counts[KILN_CONFORMANCE_UNSUPPORTED], kiln_array_count(&run->cases));
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
  if (!kiln_file_is_directory(options.cases_dir)) {
    fprintf(stderr,
            "kiln conformance: %s: no such folder, so nothing was checked (skipped, exit 77); "
            "the ONNX backend node tests come with Debian's libonnx-testdata "
            "(scripts/install-deps.sh)\n",
            options.cases_dir);
    exit(KILN_CONFORMANCE_EXIT_SKIP);
  }
  kiln_conformance_run_t run;
  kiln_status_t status = kiln_conformance_run_initialize(kiln_allocator_system(), &options, &run);
  if (status == KILN_OK) {
    status = kiln_conformance_run_cases(&options, &run);
  }
  if (status == KILN_OK) {
    status = kiln_conformance_finish_run(&options, &run);
  }
  kiln_conformance_run_deinitialize(&run);
  return status;
}
