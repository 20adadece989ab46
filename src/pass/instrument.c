/*
 * The timer and IR printer instruments (instrument.h).
 *
 * The timer appends one kiln_pass_timing_t per `after` call; Sequential
 * already measures each pass's wall time and hands it over, so the timer
 * measures nothing itself. The printer formats the module with the text
 * printer (ir/text.h, no metadata) into a scratch buffer and writes it with
 * a header line naming the pass and the moment: "// after fold_constant".
 */
#include "pass/instrument.h"

#include <string.h>

#include "ir/text.h"

/* ---- timer ---- */

void kiln_pass_timer_initialize(kiln_pass_timer_t *timer, kiln_allocator_t allocator) {
  kiln_array_initialize(&timer->timings, allocator, sizeof(kiln_pass_timing_t));
  timer->error = KILN_OK;
}

void kiln_pass_timer_deinitialize(kiln_pass_timer_t *timer) {
  kiln_array_deinitialize(&timer->timings);
  kiln_status_free(timer->error);
  timer->error = KILN_OK;
}

static void timer_after(void *user, const kiln_pass_t *pass, const kiln_module_t *module,
                        kiln_status_t status, double seconds) {
  (void)module;
  kiln_pass_timer_t *timer = user;
  kiln_pass_timing_t timing = {
      .name = pass->info.name, .seconds = seconds, .failed = status != NULL};
  kiln_status_t pushed = kiln_array_push(&timer->timings, &timing);
  if (pushed && !timer->error) {
    timer->error = kiln_status_annotate(pushed, "timer: recording pass %s", pass->info.name);
  } else {
    kiln_status_free(pushed);
  }
}

kiln_pass_instrument_t kiln_pass_timer_instrument(kiln_pass_timer_t *timer) {
  return (kiln_pass_instrument_t){.user = timer, .before = NULL, .after = timer_after};
}

size_t kiln_pass_timer_count(const kiln_pass_timer_t *timer) {
  return kiln_array_count(&timer->timings);
}

const kiln_pass_timing_t *kiln_pass_timer_at(const kiln_pass_timer_t *timer, size_t index) {
  return kiln_array_at(&timer->timings, index);
}

double kiln_pass_timer_total(const kiln_pass_timer_t *timer) {
  double total = 0.0;
  for (size_t i = 0; i < kiln_pass_timer_count(timer); ++i) {
    total += kiln_pass_timer_at(timer, i)->seconds;
  }
  return total;
}

kiln_status_t kiln_pass_timer_format(kiln_pass_timer_t *timer, kiln_strbuf_t *sb) {
  if (timer->error) {
    kiln_status_t error = timer->error;
    timer->error = KILN_OK;
    return error;
  }
  double total = kiln_pass_timer_total(timer);
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%-28s %12s %7s\n", "pass", "seconds", "share"));
  for (size_t i = 0; i < kiln_pass_timer_count(timer); ++i) {
    const kiln_pass_timing_t *timing = kiln_pass_timer_at(timer, i);
    double share = total > 0.0 ? 100.0 * timing->seconds / total : 0.0;
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%-28s %12.6f %6.1f%%%s\n", timing->name,
                                             timing->seconds, share,
                                             timing->failed ? " (failed)" : ""));
  }
  return kiln_strbuf_appendf(sb, "%-28s %12.6f %6.1f%%\n", "total", total, 100.0);
}

/* ---- IR printer ---- */

void kiln_pass_printer_initialize(kiln_pass_printer_t *printer, FILE *out, const char *only_after,
                                  kiln_allocator_t allocator) {
  printer->out = out;
  printer->only_after = only_after;
  printer->allocator = allocator;
  printer->error = KILN_OK;
  printer->printed = 0;
}

static void printer_keep_error(kiln_pass_printer_t *printer, kiln_status_t status,
                               const char *moment, const char *pass_name) {
  if (!status) {
    return;
  }
  if (printer->error) {
    kiln_status_free(status);
    return;
  }
  printer->error = kiln_status_annotate(status, "IR printer: %s %s", moment, pass_name);
}

static void printer_print(kiln_pass_printer_t *printer, const char *moment, const char *pass_name,
                          const kiln_module_t *module) {
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, printer->allocator);
  kiln_status_t status = kiln_strbuf_appendf(&sb, "// %s %s\n", moment, pass_name);
  if (!status) {
    status = kiln_ir_print_module(module, NULL, &sb);
  }
  if (!status) {
    size_t length = kiln_strbuf_length(&sb);
    if (fwrite(kiln_strbuf_c_str(&sb), 1, length, printer->out) != length) {
      status = KILN_STATUS(IO_ERROR, "writing %zu bytes failed", length);
    } else {
      printer->printed++;
    }
  }
  kiln_strbuf_deinitialize(&sb);
  printer_keep_error(printer, status, moment, pass_name);
}

static void printer_before(void *user, const kiln_pass_t *pass, const kiln_module_t *module) {
  kiln_pass_printer_t *printer = user;
  if (!printer->only_after) {
    printer_print(printer, "before", pass->info.name, module);
  }
}

static void printer_after(void *user, const kiln_pass_t *pass, const kiln_module_t *module,
                          kiln_status_t status, double seconds) {
  (void)seconds;
  kiln_pass_printer_t *printer = user;
  if (status) {
    return; /* the module is whatever the failed pass left; the error says more */
  }
  if (!printer->only_after || strcmp(printer->only_after, pass->info.name) == 0) {
    printer_print(printer, "after", pass->info.name, module);
  }
}

kiln_pass_instrument_t kiln_pass_printer_instrument(kiln_pass_printer_t *printer) {
  return (kiln_pass_instrument_t){
      .user = printer, .before = printer_before, .after = printer_after};
}

kiln_status_t kiln_pass_printer_finish(kiln_pass_printer_t *printer) {
  kiln_status_t error = printer->error;
  printer->error = KILN_OK;
  return error;
}
