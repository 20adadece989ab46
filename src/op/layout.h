/*
 * The layout value: the order and blocking of a tensor's axes, parsed once
 * from TVM's text form.
 *
 * An upper-case letter is a primal axis ("NCHW"); a factor followed by a
 * lower-case letter is the inner part of a split of the primal axis of that
 * letter ("NCHW16c": C stored as C/16 outer and 16 inner; "OIHW16i16o").
 * kiln_layout_parse reads the text into a kiln_layout_t (axes in storage
 * order, each split with its factor) and rejects bad text with an error
 * naming the text and what was expected; everything after that (equality,
 * where an axis is, a split's factor, the primal form, blocking a layout
 * further or taking part of it) works on the value, never on characters of
 * the text. The value keeps its canonical text (kiln_layout_format's, which
 * parses back to an equal value) for messages and for the places that hold
 * layouts as text: operator attributes and the layout rules' relation keep
 * the text, which is what the IR text format, the importers and the kernel
 * cache keys see, and the rules and passes parse it here when they need its
 * structure (docs/compute-rules.md, "Layouts"). A kiln_layout_t is a plain
 * value: copy it with `=`, compare it with kiln_layout_equal.
 */
#ifndef KILN_OP_LAYOUT_H_
#define KILN_OP_LAYOUT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/status.h"

#define KILN_LAYOUT_MAX_AXES 16
#define KILN_LAYOUT_MAX_TEXT 96

typedef struct kiln_layout_t {
  int ndim;
  char axes[KILN_LAYOUT_MAX_AXES];       /* 'A'..'Z' primal, 'a'..'z' split */
  int64_t factors[KILN_LAYOUT_MAX_AXES]; /* a split's factor; 0 for a primal axis */
  char text[KILN_LAYOUT_MAX_TEXT];       /* canonical text (kiln_layout_format) */
} kiln_layout_t;

/* Parses "NCHW16c". Errors (INVALID_ARGUMENT) name the text and what was
 * expected there; the caller adds the operator and attribute. */
KILN_MUST_USE_RESULT kiln_status_t kiln_layout_parse(const char *text, kiln_layout_t *out_layout);
/* Writes the text of `layout` ("NCHW16c") into `out_text` of `capacity`
 * bytes; INVALID_ARGUMENT when it does not fit. */
KILN_MUST_USE_RESULT kiln_status_t kiln_layout_format(const kiln_layout_t *layout, char *out_text,
                                                      size_t capacity);
/* Whether two layouts have the same axes in the same order with the same factors. */
bool kiln_layout_equal(const kiln_layout_t *a, const kiln_layout_t *b);
/* Whether texts `a` and `b` parse to equal layouts (false when either does
 * not parse): how layouts held as text (attributes) are compared. */
bool kiln_layout_text_equal(const char *a, const char *b);
/* Storage position of axis `axis` ('C' primal, 'c' its split part), or -1. */
int kiln_layout_axis_index(const kiln_layout_t *layout, char axis);
/* Storage position of the split part of primal axis `primal` ('c' for 'C'), or -1. */
int kiln_layout_split_index(const kiln_layout_t *layout, char primal);
/* The primal axis the storage axis at `index` belongs to ('C' for 'C' and 'c'). */
char kiln_layout_axis_primal(const kiln_layout_t *layout, int index);
/* Whether the storage axis at `index` is a split part ('c' of "NCHW16c"). */
bool kiln_layout_axis_is_split(const kiln_layout_t *layout, int index);
/* The split factor of primal axis `primal` ('C'), or 0 when it is whole. */
int64_t kiln_layout_factor(const kiln_layout_t *layout, char primal);
/* Whether any primal axis is split ("NCHW16c" is, "NHWC" is not). */
bool kiln_layout_is_blocked(const kiln_layout_t *layout);
/* The primal form: the primal axes in storage order ("NCHW" of "NCHW16c"). */
void kiln_layout_to_primal(const kiln_layout_t *layout, kiln_layout_t *out_primal);
/* Whether two layouts have the same set of primal axes (any order, any splits). */
bool kiln_layout_same_axes(const kiln_layout_t *a, const kiln_layout_t *b);
/* `layout` with primal axis `primal` split by `factor`, the split part
 * appended ("NCHW" split C by 16: "NCHW16c"); errors name the layout and
 * say why (no such axis, split already, factor not positive, too many axes). */
KILN_MUST_USE_RESULT kiln_status_t kiln_layout_split(const kiln_layout_t *layout, char primal,
                                                     int64_t factor, kiln_layout_t *out_layout);
/* The axes [start, start + count) of `layout` ("CHW16c" of "NCHW16c" from
 * 1, 4); an error when out of range or when a split part is taken without
 * its primal axis. */
KILN_MUST_USE_RESULT kiln_status_t kiln_layout_sub(const kiln_layout_t *layout, int start,
                                                   int count, kiln_layout_t *out_layout);

#endif /* KILN_OP_LAYOUT_H_ */
