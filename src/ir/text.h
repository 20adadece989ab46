/*
 * The IR's text format: a printer whose output reads like Relay's text, and
 * a parser for it. print -> parse -> print gives the same text, byte for
 * byte, for any module whose types have been inferred.
 *
 *   def @main(%x: Tensor[(1, 4), float32]) -> Tensor[(1, 4), float32] {
 *     %0 = nn.relu(%x) <type comment>;
 *     %0
 *   }
 *
 * A module prints as its functions in module order, each as a def whose
 * body has one line "%N = ..." per numbered node of its canonical order
 * (ir/order.h), so the %N of the text are the numbers that type inference
 * and the verifier use in their errors. Calls show only the attributes that
 * differ from the operator's defaults, in field order. Each line ends with
 * the node's checked type as a comment, which the parser skips: it infers
 * types itself after reading (kiln_ir_infer_types), so they come back as
 * they were. A nested fn (a fused, primitive group) prints as an indented
 * block in place of its body's nodes. Constants print as meta[Constant][k];
 * their values follow in a #[metadata] section when the options ask for it,
 * and the parser needs that section to read them back.
 *
 * The parser is recursive descent over a lexer that tracks lines and
 * columns; every error is INVALID_ARGUMENT "source:line:col: message", type
 * inference errors included (located at the failing node), and no input
 * makes it crash or recurse without bound. docs/text-format.md has the
 * grammar, the naming rules and examples; the design of each half is at the
 * top of text_printer.c and text_parser.c.
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

/* Prints every function of the module, in order, appending to `sb` (whose
 * allocator is used for scratch memory too). `options` may be NULL (all
 * off). Fails only when out of memory or on a graph with a cycle. */
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_print_module(const kiln_module_t *module,
                                                        const kiln_ir_print_options_t *options,
                                                        kiln_strbuf_t *sb);

/* Parses `text` (from `source_name`, used in errors "name:line:col: ...";
 * NULL means "<text>") into a new module made with `allocator` and infers
 * its types. Any number of functions is accepted (main is not required). */
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_parse_module(const char *source_name, const char *text,
                                                        kiln_allocator_t allocator,
                                                        kiln_module_t **out_module);

#endif /* KILN_IR_TEXT_H_ */
