/*
 * Schedule templates' knobs (schedule_config.h): one table per template of
 * knob names and the offsets of their int64_t fields in the template's
 * knob struct, from which the generic form, the text form and the
 * validity of a point are all derived.
 */
#include "op/schedule_config.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "op/nn_conv_compute.h"

typedef struct template_desc_t {
  const char *name;
  int num_knobs;
  const char *knobs[KILN_SCHEDULE_MAX_KNOBS];
  size_t offsets[KILN_SCHEDULE_MAX_KNOBS];
  int64_t lowest[KILN_SCHEDULE_MAX_KNOBS]; /* each knob's least value */
  int64_t highest[KILN_SCHEDULE_MAX_KNOBS];
  /* Knobs from this one on were added after records were first written:
   * a configuration without one takes its least value, which is what the
   * template did before the knob existed. */
  int first_optional;
} template_desc_t;

#define CONV_AT(field) offsetof(kiln_schedule_conv_config_t, field)
#define GEMM_AT(field) offsetof(kiln_schedule_gemm_config_t, field)

static const template_desc_t templates[KILN_SCHEDULE_TEMPLATE_COUNT_] = {
    [KILN_SCHEDULE_TEMPLATE_NONE] = {"none", 0, {0}, {0}},
    [KILN_SCHEDULE_TEMPLATE_CONV2D_NCHWC] = {"conv2d_nchwc",
                                             6,
                                             {"tile_ow", "tile_oc", "block_oh", "prefetch",
                                              "unroll_ic", "pad_rows"},
                                             {CONV_AT(tile_ow), CONV_AT(tile_oc), CONV_AT(block_oh),
                                              CONV_AT(prefetch), CONV_AT(unroll_ic),
                                              CONV_AT(pad_rows)},
                                             {1, 1, 0, 0, 0, 0},
                                             {64, 16, 1024, 16, 64, 1},
                                             6},
    [KILN_SCHEDULE_TEMPLATE_GEMM] = {"gemm",
                                     4,
                                     {"tile_rows", "tile_cols", "columns_outer", "unroll_k"},
                                     {GEMM_AT(tile_rows), GEMM_AT(tile_cols),
                                      GEMM_AT(columns_outer), GEMM_AT(unroll_k)},
                                     {1, 1, 0, 1},
                                     {64, 1024, 1, 16},
                                     3},
    [KILN_SCHEDULE_TEMPLATE_DENSE_PACK] = {"dense_pack", 1, {"block"}, {0}, {1}, {1024}, 1},
};

static const template_desc_t *desc(kiln_schedule_template_t id) {
  return id >= 0 && id < KILN_SCHEDULE_TEMPLATE_COUNT_ ? &templates[id] : &templates[0];
}

const char *kiln_schedule_template_name(kiln_schedule_template_t id) {
  return desc(id)->name;
}

int kiln_schedule_template_num_knobs(kiln_schedule_template_t id) {
  return desc(id)->num_knobs;
}

const char *kiln_schedule_template_knob(kiln_schedule_template_t id, int knob) {
  const template_desc_t *d = desc(id);
  return knob >= 0 && knob < d->num_knobs ? d->knobs[knob] : NULL;
}

kiln_schedule_config_t kiln_schedule_config_of(kiln_schedule_template_t id, const void *knobs) {
  kiln_schedule_config_t config = {.template_id = id};
  const template_desc_t *d = desc(id);
  for (int i = 0; i < d->num_knobs; ++i) {
    memcpy(&config.values[i], (const char *)knobs + d->offsets[i], sizeof(int64_t));
  }
  return config;
}

void kiln_schedule_config_to(const kiln_schedule_config_t *config, void *out_knobs) {
  const template_desc_t *d = desc(config->template_id);
  for (int i = 0; i < d->num_knobs; ++i) {
    memcpy((char *)out_knobs + d->offsets[i], &config->values[i], sizeof(int64_t));
  }
}

bool kiln_schedule_config_equal(const kiln_schedule_config_t *a, const kiln_schedule_config_t *b) {
  if (a->template_id != b->template_id) {
    return false;
  }
  int n = desc(a->template_id)->num_knobs;
  return memcmp(a->values, b->values, (size_t)n * sizeof(int64_t)) == 0;
}

kiln_status_t kiln_schedule_config_format(const kiln_schedule_config_t *config, kiln_strbuf_t *sb) {
  const template_desc_t *d = desc(config->template_id);
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, d->name));
  for (int i = 0; i < d->num_knobs; ++i) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, " %s=%" PRId64, d->knobs[i], config->values[i]));
  }
  return KILN_OK;
}

/* The template named by the first `length` characters of `name`. */
static kiln_status_t template_named(const char *name, size_t length,
                                    kiln_schedule_template_t *out_id) {
  for (int id = 1; id < KILN_SCHEDULE_TEMPLATE_COUNT_; ++id) {
    if (strlen(templates[id].name) == length && strncmp(templates[id].name, name, length) == 0) {
      *out_id = (kiln_schedule_template_t)id;
      return KILN_OK;
    }
  }
  return KILN_STATUS(INVALID_ARGUMENT,
                     "schedule config '%s': unknown template '%.*s' (expected conv2d_nchwc or "
                     "gemm)",
                     name, (int)length, name);
}

static int knob_named(const template_desc_t *d, const char *name, size_t length) {
  for (int i = 0; i < d->num_knobs; ++i) {
    if (strlen(d->knobs[i]) == length && strncmp(d->knobs[i], name, length) == 0) {
      return i;
    }
  }
  return -1;
}

/* One "knob=value" word of `text` (the whole config, for messages). */
static kiln_status_t parse_knob(const char *text, const char *word, size_t length,
                                const template_desc_t *d, bool *seen,
                                kiln_schedule_config_t *config) {
  const char *eq = memchr(word, '=', length);
  int knob = eq ? knob_named(d, word, (size_t)(eq - word)) : -1;
  if (knob < 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "schedule config '%s': '%.*s' is not a knob=value of template %s", text,
                       (int)length, word, d->name);
  }
  if (seen[knob]) {
    return KILN_STATUS(INVALID_ARGUMENT, "schedule config '%s': knob %s given twice", text,
                       d->knobs[knob]);
  }
  char *end = NULL;
  errno = 0;
  long long value = strtoll(eq + 1, &end, 10);
  if (end == eq + 1 || end != word + length || errno != 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "schedule config '%s': knob %s has value '%.*s', "
                       "expected an integer",
                       text, d->knobs[knob], (int)(word + length - eq - 1), eq + 1);
  }
  seen[knob] = true;
  config->values[knob] = (int64_t)value;
  return KILN_OK;
}

static size_t word_length(const char *p) {
  return strcspn(p, " ");
}

kiln_status_t kiln_schedule_config_parse(const char *text, kiln_schedule_config_t *out_config) {
  kiln_schedule_config_t config = {0};
  const char *p = text + strspn(text, " ");
  size_t length = word_length(p);
  KILN_RETURN_IF_ERROR(template_named(p, length, &config.template_id));
  const template_desc_t *d = desc(config.template_id);
  bool seen[KILN_SCHEDULE_MAX_KNOBS] = {false};
  for (p += length, p += strspn(p, " "); *p; p += strspn(p, " ")) {
    length = word_length(p);
    KILN_RETURN_IF_ERROR(parse_knob(text, p, length, d, seen, &config));
    p += length;
  }
  for (int i = d->first_optional; i < d->num_knobs; ++i) {
    config.values[i] = seen[i] ? config.values[i] : d->lowest[i];
  }
  for (int i = 0; i < d->first_optional; ++i) {
    if (!seen[i]) {
      return KILN_STATUS(INVALID_ARGUMENT, "schedule config '%s': knob %s is missing", text,
                         d->knobs[i]);
    }
  }
  KILN_RETURN_IF_ERROR(kiln_schedule_config_check(&config));
  *out_config = config;
  return KILN_OK;
}

kiln_status_t kiln_schedule_config_check(const kiln_schedule_config_t *config) {
  if (config->template_id <= KILN_SCHEDULE_TEMPLATE_NONE ||
      config->template_id >= KILN_SCHEDULE_TEMPLATE_COUNT_) {
    return KILN_STATUS(INVALID_ARGUMENT, "schedule config: no template");
  }
  const template_desc_t *d = desc(config->template_id);
  for (int i = 0; i < d->num_knobs; ++i) {
    int64_t v = config->values[i];
    if (v < d->lowest[i] || v > d->highest[i]) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "schedule config %s: knob %s is %" PRId64 ", expected %" PRId64
                         " to %" PRId64,
                         d->name, d->knobs[i], v, d->lowest[i], d->highest[i]);
    }
  }
  return KILN_OK;
}

static bool among_choices(const kiln_schedule_space_t *space, int knob, int64_t value) {
  for (int c = 0; c < space->num_choices[knob]; ++c) {
    if (space->choices[knob][c] == value) {
      return true;
    }
  }
  return false;
}

/* The conv template's bounds: the register tile fits, a row block's
 * accumulator fits, and a register tile alone has no row-block knobs set
 * (they would not change its code). */
static bool conv_valid(const kiln_schedule_space_t *space, const kiln_schedule_conv_config_t *c) {
  if (c->tile_oc * c->tile_ow > space->max_accumulators) {
    return false;
  }
  if (c->block_oh == 0) {
    return c->prefetch == 0 && c->unroll_ic <= 1 && c->pad_rows == 0;
  }
  return c->block_oh * c->tile_oc * space->block_row_bytes <= space->max_block_bytes;
}

static bool gemm_valid(const kiln_schedule_space_t *space, const kiln_schedule_gemm_config_t *c) {
  int64_t vectors = (c->tile_cols + space->lanes - 1) / space->lanes;
  return c->tile_rows * vectors <= space->max_accumulators;
}

bool kiln_schedule_space_valid(const kiln_schedule_space_t *space,
                               const kiln_schedule_config_t *config) {
  kiln_schedule_template_t id = space->default_config.template_id;
  if (config->template_id != id || id == KILN_SCHEDULE_TEMPLATE_NONE) {
    return false;
  }
  for (int i = 0; i < desc(id)->num_knobs; ++i) {
    if (!among_choices(space, i, config->values[i])) {
      return false;
    }
  }
  if (id == KILN_SCHEDULE_TEMPLATE_CONV2D_NCHWC) {
    kiln_schedule_conv_config_t c;
    kiln_schedule_config_to(config, &c);
    return conv_valid(space, &c);
  }
  if (id == KILN_SCHEDULE_TEMPLATE_DENSE_PACK) {
    return true; /* a block among the choices */
  }
  kiln_schedule_gemm_config_t g;
  kiln_schedule_config_to(config, &g);
  return gemm_valid(space, &g);
}

int64_t kiln_schedule_space_size(const kiln_schedule_space_t *space) {
  int n = desc(space->default_config.template_id)->num_knobs;
  int64_t size = n > 0 ? 1 : 0;
  for (int i = 0; i < n; ++i) {
    size *= space->num_choices[i];
  }
  return size;
}

void kiln_schedule_space_add(kiln_schedule_space_t *space, int knob, int64_t value) {
  if (among_choices(space, knob, value) || space->num_choices[knob] >= KILN_SCHEDULE_MAX_CHOICES) {
    return;
  }
  space->choices[knob][space->num_choices[knob]++] = value;
}
