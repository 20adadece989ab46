/*
 * Schedule templates and their knobs: the data a tuner searches and a test
 * pins.
 *
 * A tunable schedule (the x86 conv2d_NCHWc and GEMM schedules) is a
 * template: a fixed arrangement of loops whose free choices are named
 * integer knobs (tile sizes, rows per block, unroll depth, loop order as a
 * 0/1 knob). A configuration is one value per knob. The template's own
 * knob struct (kiln_schedule_conv_config_t, kiln_schedule_gemm_config_t in
 * op/nn_conv_compute.h) is what the schedule reads; this module maps it to
 * and from the generic form (the template and an array of values), which
 * the tuner, the tuning records and the kernel cache key use, through one
 * table of knob names and struct offsets per template.
 *
 * For one kernel the schedule also describes its space: the choices of
 * each knob for that shape, the default rule's configuration among them,
 * and which combinations are valid (a register tile that fits the vector
 * registers, a row block whose accumulator fits the stack). The schedule
 * fills it when asked (kiln_schedule_target_t.out_space) and applies a
 * given configuration instead of its default rule when one is set
 * (kiln_schedule_target_t.config). A configuration the space does not
 * contain is still applied when its template matches: every configuration
 * lowers to a correct kernel (tails are guarded), only its speed differs.
 *
 * The text form, used in records and keys, is
 * "conv2d_nchwc tile_ow=6 tile_oc=4 block_oh=2 prefetch=2 unroll_ic=4 pad_rows=0":
 * the template's name, then every knob in the template's order.
 */
#ifndef KILN_OP_SCHEDULE_CONFIG_H_
#define KILN_OP_SCHEDULE_CONFIG_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "kiln/status.h"

#define KILN_SCHEDULE_MAX_KNOBS   6
#define KILN_SCHEDULE_MAX_CHOICES 24

typedef enum kiln_schedule_template_e {
  KILN_SCHEDULE_TEMPLATE_NONE = 0, /* the kernel has no tunable schedule */
  KILN_SCHEDULE_TEMPLATE_CONV2D_NCHWC,
  KILN_SCHEDULE_TEMPLATE_GEMM,
  /* a graph-level knob: the column block pack_dense lays a constant dense
   * weight out in (its record is keyed by the product's workload, not by a
   * kernel) */
  KILN_SCHEDULE_TEMPLATE_DENSE_PACK,
  KILN_SCHEDULE_TEMPLATE_COUNT_
} kiln_schedule_template_t;

/* One point of a template's space: values[i] is knob i's. */
typedef struct kiln_schedule_config_t {
  kiln_schedule_template_t template_id;
  int64_t values[KILN_SCHEDULE_MAX_KNOBS];
} kiln_schedule_config_t;

/* A kernel's space: the choices of each knob, the default among them, and
 * the bounds its valid combinations keep. */
typedef struct kiln_schedule_space_t {
  kiln_schedule_config_t default_config;
  int num_choices[KILN_SCHEDULE_MAX_KNOBS];
  int64_t choices[KILN_SCHEDULE_MAX_KNOBS][KILN_SCHEDULE_MAX_CHOICES];
  int64_t max_accumulators; /* register tile: vectors of accumulators at most */
  int64_t max_block_bytes;  /* conv row block: accumulator bytes at most */
  int64_t block_row_bytes;  /* conv row block: accumulator bytes per row per tile_oc */
  int64_t lanes;            /* GEMM: float lanes of one vector */
} kiln_schedule_space_t;

const char *kiln_schedule_template_name(kiln_schedule_template_t id);
int kiln_schedule_template_num_knobs(kiln_schedule_template_t id);
const char *kiln_schedule_template_knob(kiln_schedule_template_t id, int knob);

/* The generic form of a template's knob struct, and back (the struct's
 * knobs are int64_t fields at the table's offsets). */
kiln_schedule_config_t kiln_schedule_config_of(kiln_schedule_template_t id, const void *knobs);
void kiln_schedule_config_to(const kiln_schedule_config_t *config, void *out_knobs);

bool kiln_schedule_config_equal(const kiln_schedule_config_t *a, const kiln_schedule_config_t *b);
/* Appends the text form. */
KILN_MUST_USE_RESULT kiln_status_t kiln_schedule_config_format(const kiln_schedule_config_t *config,
                                                               kiln_strbuf_t *sb);
/* Parses the text form: INVALID_ARGUMENT naming an unknown template, a
 * missing, repeated or unknown knob, or a value that is not an integer. */
KILN_MUST_USE_RESULT kiln_status_t kiln_schedule_config_parse(const char *text,
                                                              kiln_schedule_config_t *out_config);

/* Whether every knob is within the template's bounds (a tile of at least
 * one, at most what a kernel can hold): INVALID_ARGUMENT naming the knob.
 * A schedule refuses a configuration outside them. */
KILN_MUST_USE_RESULT kiln_status_t kiln_schedule_config_check(const kiln_schedule_config_t *config);
/* Whether `config` is one of the space's valid points: each value among
 * its knob's choices, and the template's bounds kept. */
bool kiln_schedule_space_valid(const kiln_schedule_space_t *space,
                               const kiln_schedule_config_t *config);
/* The number of points of the space's product (valid or not). */
int64_t kiln_schedule_space_size(const kiln_schedule_space_t *space);
/* Adds `value` to knob `knob`'s choices unless it is there or they are full. */
void kiln_schedule_space_add(kiln_schedule_space_t *space, int knob, int64_t value);

#endif /* KILN_OP_SCHEDULE_CONFIG_H_ */
