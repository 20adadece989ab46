/*
 * The parser's state and its token-level helpers, shared by the files of
 * the IR text parser: text_parser.c (module, functions, expressions) and
 * text_parser_types.c (types, attribute values, the metadata section).
 *
 * The parser is recursive descent over the lexer (ir/text_lexer.h) with one
 * token of lookahead in `token` and a second one on demand (peek lexes
 * from a copy of the lexer). Every temporary (names, argument lists, scope
 * maps, positions) lives in `scratch`, an arena freed when parsing ends, so
 * an error anywhere simply returns: nothing needs unwinding but the module,
 * which kiln_ir_parse_module destroys. Recursion goes through
 * kiln_text_parser_enter, which stops nesting deeper than
 * KILN_TEXT_MAX_DEPTH with an error instead of exhausting the C stack.
 */
#ifndef KILN_IR_TEXT_PARSER_H_
#define KILN_IR_TEXT_PARSER_H_

#include <stdbool.h>

#include "base/arena.h"
#include "base/array.h"
#include "base/hashmap.h"
#include "ir/expr.h"
#include "ir/text_lexer.h"

/* Deepest nesting of brackets, expressions, types and functions. */
#define KILN_TEXT_MAX_DEPTH 64

typedef struct kiln_text_parser_t {
  kiln_text_lexer_t lexer;
  kiln_text_token_t token; /* the current token */
  const char *source;
  const char *text_end;
  kiln_module_t *module;
  kiln_allocator_t allocator; /* the caller's: the module and its tensors */
  kiln_arena_t scratch;       /* everything temporary */
  kiln_allocator_t temp;      /* allocator over `scratch` */
  int depth;
  const char *function_name; /* of the def being read, for errors */
  kiln_hashmap_t numbered;   /* N + 1 -> kiln_text_binding_t * (per def) */
  kiln_array_t scopes;       /* kiln_hashmap_t: name -> kiln_var_t *, innermost last */
  bool has_metadata;
  kiln_text_lexer_t metadata_lexer; /* just after the #[metadata] marker */
  kiln_array_t tensors;             /* kiln_tensor_t *, one reference each, by k */
  kiln_array_t constants;           /* kiln_constant_t * or NULL, by k */
  kiln_array_t positions;           /* kiln_text_position_t */
  kiln_array_t declared;            /* kiln_text_declared_t */
} kiln_text_parser_t;

/* Where a node (or a Var's declaration) starts in the text. */
typedef struct kiln_text_position_t {
  const void *node;
  size_t line;
  size_t column;
} kiln_text_position_t;

/* A function's written return type, checked once types are inferred. */
typedef struct kiln_text_declared_t {
  kiln_function_t *function;
  const kiln_type_t *type;
  const char *label; /* "@main", "fn in @main" */
  size_t line;
  size_t column;
} kiln_text_declared_t;

/* The node a %N names and where it was defined. */
typedef struct kiln_text_binding_t {
  kiln_expr_t *node;
  size_t line;
  size_t column;
} kiln_text_binding_t;

/* INVALID_ARGUMENT "source:line:col: ..." at `token`. */
#define KILN_TEXT_ERROR(parser, token, ...) \
  kiln_text_error_at((parser)->source, (token)->line, (token)->column, __VA_ARGS__)

KILN_MUST_USE_RESULT kiln_status_t kiln_text_parser_advance(kiln_text_parser_t *parser);
/* The token after the current one, without consuming anything. */
KILN_MUST_USE_RESULT kiln_status_t kiln_text_parser_peek(kiln_text_parser_t *parser,
                                                         kiln_text_token_t *out_token);
/* Consumes punctuation `c` or fails "expected 'c' <context>, found X". */
KILN_MUST_USE_RESULT kiln_status_t kiln_text_parser_expect(kiln_text_parser_t *parser, char c,
                                                           const char *context);
/* Prefixes "source:line:col: " of `token` to a failure. */
kiln_status_t kiln_text_parser_annotate(const kiln_text_parser_t *parser,
                                        const kiln_text_token_t *token, kiln_status_t status);
/* The token's text as a NUL-terminated string in scratch (from `skip` bytes on). */
KILN_MUST_USE_RESULT kiln_status_t kiln_text_parser_token_string(kiln_text_parser_t *parser,
                                                                 const kiln_text_token_t *token,
                                                                 size_t skip, char **out_text);
/* An unsigned integer token (digits only) up to `max`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_text_parser_integer(kiln_text_parser_t *parser,
                                                            const kiln_text_token_t *token,
                                                            const char *what, int64_t max,
                                                            int64_t *out_value);
/* Counts one level of nesting; fails past KILN_TEXT_MAX_DEPTH. Pair with
 * kiln_text_parser_leave on success. */
KILN_MUST_USE_RESULT kiln_status_t kiln_text_parser_enter(kiln_text_parser_t *parser);
void kiln_text_parser_leave(kiln_text_parser_t *parser);
/* Remembers where `node` starts, for errors found after parsing. */
KILN_MUST_USE_RESULT kiln_status_t kiln_text_parser_note(kiln_text_parser_t *parser,
                                                         const void *node,
                                                         const kiln_text_token_t *token);

/* type := Tensor[(d, ...), dtype] | ( [type {, type} [,]] ) */
KILN_MUST_USE_RESULT kiln_status_t kiln_text_parse_type(kiln_text_parser_t *parser,
                                                        const kiln_type_t **out_type);
/* One name=value of operator `op` into `attrs`; `seen` has a flag per field. */
KILN_MUST_USE_RESULT kiln_status_t kiln_text_parse_attribute(kiln_text_parser_t *parser,
                                                             const struct kiln_op_t *op,
                                                             void *attrs, bool *seen);
/* The section after #[metadata]: Constant[k] = type [values], k = 0, 1, ... */
KILN_MUST_USE_RESULT kiln_status_t kiln_text_parse_metadata(kiln_text_parser_t *parser);

#endif /* KILN_IR_TEXT_PARSER_H_ */
