/*
 * The layout value (layout.h): the parser, the canonical text, and the
 * queries and constructors the operator rules and the passes use.
 *
 * The parser walks the text once: an upper-case letter is a primal axis, a
 * run of digits is the factor of the lower-case split axis that must follow
 * it, and anything else is an error naming the text and what was expected.
 * After the walk every split must have its primal axis. Every function that
 * makes a layout (parse, split, sub, to_primal) ends in layout_finish, which
 * checks the splits and writes the canonical text with kiln_layout_format,
 * so a value's text always parses back to an equal value.
 */
#include "op/layout.h"

#include <stdio.h>
#include <string.h>

static bool layout_is_primal(char axis) {
  return axis >= 'A' && axis <= 'Z';
}

static bool layout_is_split(char axis) {
  return axis >= 'a' && axis <= 'z';
}

static char layout_split_of(char primal) {
  return (char)(primal - 'A' + 'a');
}

static char layout_primal_of(char split) {
  return (char)(split - 'a' + 'A');
}

/* ---- parsing and text ---- */

/* Reads the factor in front of a split axis; *p is left on the letter. */
static kiln_status_t layout_parse_factor(const char *text, const char **p, int64_t *out_factor) {
  int64_t factor = 0;
  while (**p >= '0' && **p <= '9') {
    factor = factor * 10 + (**p - '0');
    if (factor > ((int64_t)1 << 30)) {
      return KILN_STATUS(INVALID_ARGUMENT, "layout '%s': factor too large", text);
    }
    ++*p;
  }
  if (factor == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "layout '%s': a split factor must be positive", text);
  }
  if (!layout_is_split(**p)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "layout '%s': a factor must be followed by a lower-case axis", text);
  }
  *out_factor = factor;
  return KILN_OK;
}

/* Appends `axis` (with `factor` when split) to `layout`. */
static kiln_status_t layout_append(const char *text, char axis, int64_t factor,
                                   kiln_layout_t *layout) {
  if (kiln_layout_axis_index(layout, axis) >= 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "layout '%s': axis '%c' appears twice", text, axis);
  }
  if (layout->ndim == KILN_LAYOUT_MAX_AXES) {
    return KILN_STATUS(INVALID_ARGUMENT, "layout '%s': more than %d axes", text,
                       KILN_LAYOUT_MAX_AXES);
  }
  layout->axes[layout->ndim] = axis;
  layout->factors[layout->ndim] = factor;
  ++layout->ndim;
  return KILN_OK;
}

/* Checks that every split has its primal axis, then writes the text. */
static kiln_status_t layout_finish(const char *text, kiln_layout_t *layout) {
  for (int i = 0; i < layout->ndim; ++i) {
    char axis = layout->axes[i];
    if (layout_is_split(axis) && kiln_layout_axis_index(layout, layout_primal_of(axis)) < 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "layout '%s': split axis '%c' has no primal axis '%c'",
                         text, axis, layout_primal_of(axis));
    }
  }
  return kiln_layout_format(layout, layout->text, sizeof(layout->text));
}

kiln_status_t kiln_layout_parse(const char *text, kiln_layout_t *out_layout) {
  memset(out_layout, 0, sizeof(*out_layout));
  size_t length = text ? strlen(text) : 0;
  if (length == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "layout is empty");
  }
  if (length >= sizeof(out_layout->text)) {
    return KILN_STATUS(INVALID_ARGUMENT, "layout '%.40s...' is too long", text);
  }
  for (const char *p = text; *p; ++p) {
    int64_t factor = 0;
    if (*p >= '0' && *p <= '9') {
      KILN_RETURN_IF_ERROR(layout_parse_factor(text, &p, &factor));
    } else if (layout_is_split(*p)) {
      return KILN_STATUS(INVALID_ARGUMENT, "layout '%s': split axis '%c' needs a factor (16%c)",
                         text, *p, *p);
    } else if (!layout_is_primal(*p)) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "layout '%s': unexpected character '%c' (expected an upper-case axis "
                         "or a factor and a lower-case axis)",
                         text, *p);
    }
    KILN_RETURN_IF_ERROR(layout_append(text, *p, factor, out_layout));
  }
  return layout_finish(text, out_layout);
}

kiln_status_t kiln_layout_format(const kiln_layout_t *layout, char *out_text, size_t capacity) {
  size_t used = 0;
  for (int i = 0; i < layout->ndim; ++i) {
    char axis = layout->axes[i];
    int n = layout_is_split(axis) ? snprintf(out_text + used, capacity - used, "%lld%c",
                                             (long long)layout->factors[i], axis)
                                  : snprintf(out_text + used, capacity - used, "%c", axis);
    if (n < 0 || (size_t)n >= capacity - used) {
      return KILN_STATUS(INVALID_ARGUMENT, "layout of %d axes does not fit %zu bytes of text",
                         layout->ndim, capacity);
    }
    used += (size_t)n;
  }
  if (capacity > 0) {
    out_text[used] = '\0';
  }
  return KILN_OK;
}

/* ---- queries ---- */

bool kiln_layout_equal(const kiln_layout_t *a, const kiln_layout_t *b) {
  if (a->ndim != b->ndim) {
    return false;
  }
  for (int i = 0; i < a->ndim; ++i) {
    if (a->axes[i] != b->axes[i] || a->factors[i] != b->factors[i]) {
      return false;
    }
  }
  return true;
}

bool kiln_layout_text_equal(const char *a, const char *b) {
  kiln_layout_t parsed_a, parsed_b;
  kiln_status_t status = kiln_layout_parse(a, &parsed_a);
  if (status == KILN_OK) {
    status = kiln_layout_parse(b, &parsed_b);
  }
  if (status != KILN_OK) {
    kiln_status_free(status);
    return false;
  }
  return kiln_layout_equal(&parsed_a, &parsed_b);
}

int kiln_layout_axis_index(const kiln_layout_t *layout, char axis) {
  for (int i = 0; i < layout->ndim; ++i) {
    if (layout->axes[i] == axis) {
      return i;
    }
  }
  return -1;
}

int kiln_layout_split_index(const kiln_layout_t *layout, char primal) {
  return layout_is_primal(primal) ? kiln_layout_axis_index(layout, layout_split_of(primal)) : -1;
}

bool kiln_layout_axis_is_split(const kiln_layout_t *layout, int index) {
  return layout_is_split(layout->axes[index]);
}

char kiln_layout_axis_primal(const kiln_layout_t *layout, int index) {
  char axis = layout->axes[index];
  return layout_is_split(axis) ? layout_primal_of(axis) : axis;
}

int64_t kiln_layout_factor(const kiln_layout_t *layout, char primal) {
  int index = kiln_layout_split_index(layout, primal);
  return index < 0 ? 0 : layout->factors[index];
}

bool kiln_layout_is_blocked(const kiln_layout_t *layout) {
  for (int i = 0; i < layout->ndim; ++i) {
    if (layout_is_split(layout->axes[i])) {
      return true;
    }
  }
  return false;
}

bool kiln_layout_same_axes(const kiln_layout_t *a, const kiln_layout_t *b) {
  kiln_layout_t primal_a, primal_b;
  kiln_layout_to_primal(a, &primal_a);
  kiln_layout_to_primal(b, &primal_b);
  if (primal_a.ndim != primal_b.ndim) {
    return false;
  }
  for (int i = 0; i < primal_a.ndim; ++i) {
    if (kiln_layout_axis_index(&primal_b, primal_a.axes[i]) < 0) {
      return false;
    }
  }
  return true;
}

/* ---- constructors ---- */

void kiln_layout_to_primal(const kiln_layout_t *layout, kiln_layout_t *out_primal) {
  kiln_layout_t primal;
  memset(&primal, 0, sizeof(primal));
  for (int i = 0; i < layout->ndim; ++i) {
    if (layout_is_primal(layout->axes[i])) {
      /* a primal axis's text is its letter (kiln_layout_format) */
      primal.text[primal.ndim] = layout->axes[i];
      primal.axes[primal.ndim++] = layout->axes[i];
    }
  }
  *out_primal = primal;
}

kiln_status_t kiln_layout_split(const kiln_layout_t *layout, char primal, int64_t factor,
                                kiln_layout_t *out_layout) {
  if (!layout_is_primal(primal) || kiln_layout_axis_index(layout, primal) < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "layout '%s' has no primal axis '%c' to split",
                       layout->text, primal);
  }
  if (factor <= 0 || factor > ((int64_t)1 << 30)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "layout '%s': split factor %lld of axis '%c' must be in "
                       "[1, 2^30]",
                       layout->text, (long long)factor, primal);
  }
  kiln_layout_t split = *layout;
  KILN_RETURN_IF_ERROR(layout_append(layout->text, layout_split_of(primal), factor, &split));
  KILN_RETURN_IF_ERROR(layout_finish(layout->text, &split));
  *out_layout = split;
  return KILN_OK;
}

kiln_status_t kiln_layout_sub(const kiln_layout_t *layout, int start, int count,
                              kiln_layout_t *out_layout) {
  if (start < 0 || count <= 0 || start > layout->ndim - count) {
    return KILN_STATUS(INVALID_ARGUMENT, "layout '%s' has no axes [%d, %d) (it has %d)",
                       layout->text, start, start + count, layout->ndim);
  }
  kiln_layout_t sub;
  memset(&sub, 0, sizeof(sub));
  sub.ndim = count;
  memcpy(sub.axes, layout->axes + start, (size_t)count);
  memcpy(sub.factors, layout->factors + start, (size_t)count * sizeof(int64_t));
  KILN_RETURN_IF_ERROR(layout_finish(layout->text, &sub));
  *out_layout = sub;
  return KILN_OK;
}
