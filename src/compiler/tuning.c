/*
 * Tuning records (tuning.h): a JSON-lines file read line by line with
 * jansson into an arena, the best record per task kept in a string map;
 * appended with one write(2) of a whole line under O_APPEND, so concurrent
 * or killed writers never interleave or half-write a line that is not the
 * last.
 */
#define _XOPEN_SOURCE 700

#include "compiler/tuning.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/arena.h"
#include "base/file.h"
#include "base/hashmap.h"
#include "base/json.h"
#include "base/log.h"
#include "kiln/version.h"

struct kiln_tuning_t {
  kiln_allocator_t allocator;
  kiln_arena_t arena;
  kiln_hashmap_t best; /* task -> kiln_tuning_record_t * */
  int other_target;
  int other_version;
};

void kiln_tuning_task_of(const char *kernel_key, char out_task[KILN_TUNING_TASK_CHARS]) {
  uint64_t hash = 14695981039346656037ull;
  for (const unsigned char *p = (const unsigned char *)kernel_key; *p; ++p) {
    hash = (hash ^ *p) * 1099511628211ull;
  }
  snprintf(out_task, KILN_TUNING_TASK_CHARS, "%016llx", (unsigned long long)hash);
}

/* The string members of a record line, copied into the arena. */
static kiln_status_t get_strings(kiln_tuning_t *t, const json_t *line, const char *source,
                                 kiln_tuning_record_t *r) {
  const char *names[] = {"task", "kernel", "target", "kiln"};
  const char **fields[] = {&r->task, &r->kernel, &r->target, &r->version};
  for (int i = 0; i < 4; ++i) {
    const char *value = NULL;
    char *copy = NULL;
    KILN_RETURN_IF_ERROR(kiln_json_get_string(line, names[i], source, &value));
    KILN_RETURN_IF_ERROR(kiln_arena_strdup(&t->arena, value, &copy));
    *fields[i] = copy;
  }
  return KILN_OK;
}

static kiln_status_t parse_record(kiln_tuning_t *t, const json_t *line, const char *source,
                                  kiln_tuning_record_t *r) {
  if (!json_is_object(line)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected an object, got %s", source,
                       kiln_json_type_name(line));
  }
  KILN_RETURN_IF_ERROR(get_strings(t, line, source, r));
  const char *config = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_get_string(line, "config", source, &config));
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_schedule_config_parse(config, &r->config), "%s", source);
  KILN_RETURN_IF_ERROR(kiln_json_get_number(line, "time_ms", source, &r->time_ms));
  KILN_RETURN_IF_ERROR(kiln_json_get_number(line, "default_ms", source, &r->default_ms));
  int verified = 0;
  kiln_status_t status = kiln_json_get_bool(line, "verified", source, &verified);
  if (kiln_status_code(status) == KILN_STATUS_CODE_NOT_FOUND) {
    kiln_status_free(status); /* optional */
    status = KILN_OK;
  }
  r->verified = verified != 0;
  return status;
}

/* Whether `r` should replace the task's best so far: verified records come
 * first, then the faster. */
static bool beats(const kiln_tuning_record_t *r, const kiln_tuning_record_t *best) {
  if (r->verified != best->verified) {
    return r->verified;
  }
  return r->time_ms < best->time_ms;
}

/* Keeps `r` when it is of the target and version and beats the task's best. */
static kiln_status_t keep(kiln_tuning_t *t, const kiln_tuning_record_t *r, const char *target) {
  if (strcmp(r->target, target) != 0) {
    ++t->other_target;
    return KILN_OK;
  }
  if (strcmp(r->version, kiln_version_string()) != 0) {
    ++t->other_version;
    return KILN_OK;
  }
  void *found = NULL;
  if (kiln_hashmap_get(&t->best, r->task, &found) && !beats(r, found)) {
    return KILN_OK;
  }
  kiln_tuning_record_t *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(&t->arena, sizeof(*copy), _Alignof(kiln_tuning_record_t),
                                           (void **)&copy));
  *copy = *r;
  return kiln_hashmap_put(&t->best, r->task, copy);
}

/* Line `number` (from 1) of `path`, `length` bytes at `text`. A line
 * that is not JSON (cut short by a killed writer) is skipped with a
 * warning; JSON that is not a record is an error. */
static kiln_status_t load_line(kiln_tuning_t *t, const char *path, int number, const char *text,
                               size_t length, const char *target) {
  if (strspn(text, " \t\r") >= length) {
    return KILN_OK; /* blank */
  }
  char source[512];
  snprintf(source, sizeof(source), "%s line %d", path, number);
  json_t *line = NULL;
  kiln_tuning_record_t record = {0};
  kiln_status_t status = kiln_json_parse(text, length, source, &line);
  if (status) {
    KILN_LOG_WARN("tuning records: skipped %s (not JSON: cut short?)", source);
    kiln_status_free(status);
    return KILN_OK;
  }
  status = parse_record(t, line, source, &record);
  json_decref(line);
  return status ? status : keep(t, &record, target);
}

static kiln_status_t load_text(kiln_tuning_t *t, const char *path, const char *text,
                               const char *target) {
  int number = 1;
  for (const char *p = text; *p; ++number) {
    const char *newline = strchr(p, '\n');
    size_t length = newline ? (size_t)(newline - p) : strlen(p);
    KILN_RETURN_IF_ERROR(load_line(t, path, number, p, length, target));
    p += length + (newline ? 1 : 0);
  }
  return KILN_OK;
}

kiln_status_t kiln_tuning_load(kiln_allocator_t allocator, const char *path, const char *target,
                               kiln_tuning_t **out_tuning) {
  *out_tuning = NULL;
  kiln_tuning_t *t = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*t), (void **)&t));
  t->allocator = allocator;
  kiln_arena_initialize(&t->arena, allocator, 0);
  kiln_hashmap_initialize(&t->best, allocator, KILN_HASHMAP_KEY_STRING);
  void *text = NULL;
  size_t size = 0;
  kiln_status_t status = kiln_file_read_all(allocator, path, &text, &size);
  if (!status) {
    status = load_text(t, path, text, target);
  }
  kiln_allocator_free(allocator, text);
  if (status) {
    kiln_tuning_destroy(t);
    return kiln_status_annotate(status, "tuning records");
  }
  *out_tuning = t;
  return KILN_OK;
}

void kiln_tuning_destroy(kiln_tuning_t *tuning) {
  if (!tuning) {
    return;
  }
  kiln_hashmap_deinitialize(&tuning->best);
  kiln_arena_deinitialize(&tuning->arena);
  kiln_allocator_free(tuning->allocator, tuning);
}

const kiln_schedule_config_t *kiln_tuning_find(const kiln_tuning_t *tuning, const char *task) {
  void *found = NULL;
  if (!tuning || !kiln_hashmap_get(&tuning->best, task, &found)) {
    return NULL;
  }
  return &((const kiln_tuning_record_t *)found)->config;
}

void kiln_tuning_counts(const kiln_tuning_t *tuning, int *out_tasks, int *out_other_target,
                        int *out_other_version) {
  *out_tasks = (int)tuning->best.count;
  *out_other_target = tuning->other_target;
  *out_other_version = tuning->other_version;
}

static kiln_status_t set_string(json_t *object, const char *key, const char *value) {
  return kiln_json_object_set_new(object, key, json_string(value));
}

static kiln_status_t record_json(const kiln_tuning_record_t *r, const char *config, json_t *o) {
  KILN_RETURN_IF_ERROR(set_string(o, "task", r->task));
  KILN_RETURN_IF_ERROR(set_string(o, "kernel", r->kernel));
  KILN_RETURN_IF_ERROR(set_string(o, "target", r->target));
  KILN_RETURN_IF_ERROR(set_string(o, "config", config));
  KILN_RETURN_IF_ERROR(kiln_json_object_set_new(o, "time_ms", json_real(r->time_ms)));
  KILN_RETURN_IF_ERROR(kiln_json_object_set_new(o, "default_ms", json_real(r->default_ms)));
  if (r->verified) {
    KILN_RETURN_IF_ERROR(kiln_json_object_set_new(o, "verified", json_true()));
  }
  return set_string(o, "kiln", r->version ? r->version : kiln_version_string());
}

kiln_status_t kiln_tuning_record_format(const kiln_tuning_record_t *record, kiln_strbuf_t *sb) {
  kiln_strbuf_t config;
  kiln_strbuf_initialize(&config, sb->allocator);
  json_t *object = json_object();
  char *text = NULL;
  kiln_status_t status = object ? kiln_schedule_config_format(&record->config, &config)
                                : KILN_STATUS(RESOURCE_EXHAUSTED, "tuning record: out of memory");
  if (!status) {
    status = record_json(record, kiln_strbuf_c_str(&config), object);
  }
  if (!status) {
    status = kiln_json_dump(sb->allocator, object, 0, &text);
  }
  if (!status) {
    status = kiln_strbuf_appendf(sb, "%s\n", text);
  }
  kiln_allocator_free(sb->allocator, text);
  json_decref(object);
  kiln_strbuf_deinitialize(&config);
  return status;
}

/* Whether the file ends in the middle of a line (a writer was killed). */
static bool ends_mid_line(int fd) {
  char last = '\n';
  off_t size = lseek(fd, 0, SEEK_END);
  return size > 0 && pread(fd, &last, 1, size - 1) == 1 && last != '\n';
}

static kiln_status_t write_line(const char *path, const char *line, size_t length) {
  int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return KILN_STATUS(NOT_FOUND, "tuning records %s: cannot open for appending: %s", path,
                       strerror(errno));
  }
  if (ends_mid_line(fd) && write(fd, "\n", 1) != 1) {
    close(fd);
    return KILN_STATUS(INTERNAL, "tuning records %s: cannot append: %s", path, strerror(errno));
  }
  ssize_t written = write(fd, line, length);
  int saved = errno;
  int synced = fsync(fd);
  close(fd);
  if (written != (ssize_t)length || synced != 0) {
    return KILN_STATUS(INTERNAL, "tuning records %s: cannot append a record: %s", path,
                       strerror(written < 0 ? saved : errno));
  }
  return KILN_OK;
}

kiln_status_t kiln_tuning_append(const char *path, const kiln_tuning_record_t *record) {
  kiln_strbuf_t line;
  kiln_strbuf_initialize(&line, kiln_allocator_system());
  kiln_status_t status = kiln_tuning_record_format(record, &line);
  if (!status) {
    status = write_line(path, kiln_strbuf_c_str(&line), kiln_strbuf_length(&line));
  }
  kiln_strbuf_deinitialize(&line);
  return status;
}
