/*
 * Pass instruments (pass.h's kiln_pass_instrument_t): a timer that records
 * every pass that runs and its seconds, printable as a table, and an IR
 * printer that writes the module's text before and after each pass, or only
 * after one named pass, to a FILE *.
 *
 * Instruments are called through void hooks, so they cannot fail a run: a
 * failure inside one (out of memory while recording or printing) is kept as
 * the instrument's first error and returned by its format/finish call, so it
 * is reported rather than lost. Each instrument is a struct the caller owns
 * and initializes; kiln_pass_*_instrument gives the hook table to add to a
 * context (the struct must outlive the runs).
 */
#ifndef KILN_PASS_INSTRUMENT_H_
#define KILN_PASS_INSTRUMENT_H_

#include <stdio.h>

#include "base/array.h"
#include "base/strbuf.h"
#include "pass/pass.h"

typedef struct kiln_pass_timing_t {
  const char *name; /* the pass's static name */
  double seconds;
  bool failed; /* the pass returned an error */
} kiln_pass_timing_t;

typedef struct kiln_pass_timer_t {
  kiln_array_t timings; /* kiln_pass_timing_t, in the order the passes ran */
  kiln_status_t error;  /* the first failure to record, or KILN_OK */
} kiln_pass_timer_t;

void kiln_pass_timer_initialize(kiln_pass_timer_t *timer, kiln_allocator_t allocator);
void kiln_pass_timer_deinitialize(kiln_pass_timer_t *timer);
kiln_pass_instrument_t kiln_pass_timer_instrument(kiln_pass_timer_t *timer);
size_t kiln_pass_timer_count(const kiln_pass_timer_t *timer);
const kiln_pass_timing_t *kiln_pass_timer_at(const kiln_pass_timer_t *timer, size_t index);
/* Sum of every recorded pass's seconds. */
double kiln_pass_timer_total(const kiln_pass_timer_t *timer);
/* Appends a table: a header line "pass  seconds  share", one line per pass
 * run ("fold_constant  0.001234  12.3%", "(failed)" after a failed one) and a
 * "total" line. Returns the timer's recording error first, if any (and
 * clears it). */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_timer_format(kiln_pass_timer_t *timer,
                                                          kiln_strbuf_t *sb);

typedef struct kiln_pass_printer_t {
  FILE *out;
  const char *only_after; /* NULL: before and after every pass; else after this pass only */
  kiln_allocator_t allocator;
  kiln_status_t error; /* the first failure to print, or KILN_OK */
  int printed;         /* how many times the module was printed */
} kiln_pass_printer_t;

/* `only_after` may be NULL; the string must outlive the printer. */
void kiln_pass_printer_initialize(kiln_pass_printer_t *printer, FILE *out, const char *only_after,
                                  kiln_allocator_t allocator);
kiln_pass_instrument_t kiln_pass_printer_instrument(kiln_pass_printer_t *printer);
/* Returns (and clears) the first printing error. */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_printer_finish(kiln_pass_printer_t *printer);

#endif /* KILN_PASS_INSTRUMENT_H_ */
