/*
 * The IR's text format: a printer whose output reads like Relay's text, and
 * a parser for it. print -> parse -> print gives the same text.
 *
 * (Design paragraph: to be completed by the implementation.)
 */
#ifndef KILN_IR_TEXT_H_
#define KILN_IR_TEXT_H_

#include <stdbool.h>

#include "base/strbuf.h"
#include "ir/expr.h"

typedef struct kiln_ir_print_options_t {
  /* Append the metadata section with every Constant's values (needed to
   * parse the text back). Off, Constants print as meta[Constant][k]. */
  bool include_metadata;
} kiln_ir_print_options_t;

/* Prints every function of the module, in order. */
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_print_module(const kiln_module_t *module,
                                                        const kiln_ir_print_options_t *options,
                                                        kiln_strbuf_t *sb);

/* Parses `text` (from `source_name`, used in errors "name:line:col: ...")
 * into a new module and infers its types. */
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_parse_module(const char *source_name, const char *text,
                                                        kiln_allocator_t allocator,
                                                        kiln_module_t **out_module);

#endif /* KILN_IR_TEXT_H_ */
