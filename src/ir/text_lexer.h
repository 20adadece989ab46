/*
 * The lexer of the IR text format (ir/text.h): turns text into tokens, one
 * at a time, each with the line and column where it starts.
 *
 * It is a cursor over the NUL-terminated text, so it costs nothing to copy:
 * the parser peeks one token ahead by lexing from a copy. Whitespace and
 * comments (block comments and line comments) are skipped. The tokens are
 * few: identifiers (operator names, dtypes, keywords such as fn, def,
 * Tensor, meta, True), %name and %N references, @name globals, numbers,
 * double-quoted strings without escapes, the #[metadata] marker, the arrow
 * -> and single punctuation characters. A number that directly follows a
 * '.' token is a tuple index and stops at the next '.', so "%4.1.0" is two
 * indexes, never the float 1.0. Errors (an unterminated comment or string,
 * a stray byte) are INVALID_ARGUMENT statuses "source:line:col: message".
 */
#ifndef KILN_IR_TEXT_LEXER_H_
#define KILN_IR_TEXT_LEXER_H_

#include <stdbool.h>
#include <stddef.h>

#include "kiln/status.h"

typedef enum kiln_text_token_kind_e {
  KILN_TEXT_TOKEN_END,      /* the end of the text */
  KILN_TEXT_TOKEN_IDENT,    /* nn.conv2d, Tensor, float32, fn, True */
  KILN_TEXT_TOKEN_LOCAL,    /* %data: a parameter */
  KILN_TEXT_TOKEN_NUMBERED, /* %3: a numbered node */
  KILN_TEXT_TOKEN_GLOBAL,   /* @main */
  KILN_TEXT_TOKEN_NUMBER,   /* 3, 2.5, 1e-05 (no sign) */
  KILN_TEXT_TOKEN_STRING,   /* "NCHW", quotes included */
  KILN_TEXT_TOKEN_METADATA, /* #[metadata] */
  KILN_TEXT_TOKEN_ARROW,    /* -> */
  KILN_TEXT_TOKEN_PUNCT,    /* one of ( ) [ ] { } , ; : = . - ? < */
  KILN_TEXT_TOKEN_COUNT_
} kiln_text_token_kind_t;

typedef struct kiln_text_token_t {
  kiln_text_token_kind_t kind;
  const char *start; /* into the text */
  size_t length;
  size_t line;   /* 1-based */
  size_t column; /* 1-based, in bytes */
} kiln_text_token_t;

typedef struct kiln_text_lexer_t {
  const char *source_name;
  const char *text;
  const char *cursor;
  const char *line_start;
  size_t line;
  bool after_dot; /* the last token was '.' */
} kiln_text_lexer_t;

void kiln_text_lexer_initialize(kiln_text_lexer_t *lexer, const char *source_name,
                                const char *text);
/* The next token; END (again and again) at the end of the text. */
KILN_MUST_USE_RESULT kiln_status_t kiln_text_lexer_next(kiln_text_lexer_t *lexer,
                                                        kiln_text_token_t *out_token);

/* Whether `token` is the punctuation character `c`. */
bool kiln_text_token_is_punct(const kiln_text_token_t *token, char c);
/* Whether `token` is the identifier `word`. */
bool kiln_text_token_is_ident(const kiln_text_token_t *token, const char *word);

/* How errors show a token: "end of input", "','", "%x", "number 3",
 * "identifier nn.conv2d", ... (long tokens cut with "..."). */
#define KILN_TEXT_TOKEN_TEXT_CAPACITY 64
const char *kiln_text_token_describe(const kiln_text_token_t *token, char *buffer);

/* INVALID_ARGUMENT "source:line:col: message". */
KILN_MUST_USE_RESULT kiln_status_t kiln_text_error_at(const char *source_name, size_t line,
                                                      size_t column, const char *format, ...)
    KILN_PRINTF_FORMAT(4, 5);

#endif /* KILN_IR_TEXT_LEXER_H_ */
