/*
 * The IR text lexer; see text_lexer.h.
 *
 * One function per token family, each reading from the cursor and leaving it
 * after the token. Character classes are tested with explicit ranges rather
 * than <ctype.h>, so the result does not depend on the locale and a byte
 * above 0x7f is simply a stray byte.
 */
#include "ir/text_lexer.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

static bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(char c) {
  return is_name_start(c) || is_digit(c) || c == '.';
}

kiln_status_t kiln_text_error_at(const char *source_name, size_t line, size_t column,
                                 const char *format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return KILN_STATUS(INVALID_ARGUMENT, "%s:%zu:%zu: %s", source_name, line, column, message);
}

void kiln_text_lexer_initialize(kiln_text_lexer_t *lexer, const char *source_name,
                                const char *text) {
  lexer->source_name = source_name;
  lexer->text = text;
  lexer->cursor = text;
  lexer->line_start = text;
  lexer->line = 1;
  lexer->after_dot = false;
}

static size_t lexer_column(const kiln_text_lexer_t *lexer, const char *at) {
  return (size_t)(at - lexer->line_start) + 1;
}

static void lexer_newline(kiln_text_lexer_t *lexer, const char *next_line) {
  lexer->line++;
  lexer->line_start = next_line;
}

/* Skips a block comment that starts at the cursor. */
static kiln_status_t lexer_skip_block_comment(kiln_text_lexer_t *lexer) {
  const char *start = lexer->cursor;
  size_t line = lexer->line;
  size_t column = lexer_column(lexer, start);
  const char *p = start + 2;
  while (*p != '\0' && !(p[0] == '*' && p[1] == '/')) {
    if (*p == '\n') {
      lexer_newline(lexer, p + 1);
    }
    p++;
  }
  if (*p == '\0') {
    return kiln_text_error_at(lexer->source_name, line, column, "unterminated comment /* ...");
  }
  lexer->cursor = p + 2;
  return KILN_OK;
}

static kiln_status_t lexer_skip_space(kiln_text_lexer_t *lexer) {
  for (;;) {
    const char *p = lexer->cursor;
    if (*p == '\n') {
      lexer_newline(lexer, p + 1);
      lexer->cursor = p + 1;
    } else if (*p == ' ' || *p == '\t' || *p == '\r') {
      lexer->cursor = p + 1;
    } else if (p[0] == '/' && p[1] == '*') {
      KILN_RETURN_IF_ERROR(lexer_skip_block_comment(lexer));
    } else if (p[0] == '/' && p[1] == '/') {
      while (*p != '\0' && *p != '\n') {
        p++;
      }
      lexer->cursor = p;
    } else {
      return KILN_OK;
    }
  }
}

static const char *skip_name(const char *p) {
  while (is_name_char(*p)) {
    p++;
  }
  return p;
}

static const char *skip_digits(const char *p) {
  while (is_digit(*p)) {
    p++;
  }
  return p;
}

/* 12, 2.5, 1e-05, 3.4e+38; a tuple index (after '.') is digits only. */
static const char *skip_number(const char *p, bool digits_only) {
  p = skip_digits(p);
  if (digits_only) {
    return p;
  }
  if (p[0] == '.' && is_digit(p[1])) {
    p = skip_digits(p + 1);
  }
  if ((p[0] == 'e' || p[0] == 'E') &&
      (is_digit(p[1]) || ((p[1] == '+' || p[1] == '-') && is_digit(p[2])))) {
    p = skip_digits(p + 2);
  }
  return p;
}

/* %name or %N; the cursor is on the '%'. */
static kiln_status_t lexer_reference(kiln_text_lexer_t *lexer, kiln_text_token_t *token) {
  const char *p = lexer->cursor + 1;
  if (is_digit(*p)) {
    const char *end = skip_digits(p);
    if (is_name_start(*end)) {
      return kiln_text_error_at(lexer->source_name, token->line, token->column,
                                "bad name %%%.*s: a name starts with a letter or '_'",
                                (int)(skip_name(end) - p), p);
    }
    token->kind = KILN_TEXT_TOKEN_NUMBERED;
    lexer->cursor = end;
  } else if (is_name_start(*p)) {
    token->kind = KILN_TEXT_TOKEN_LOCAL;
    lexer->cursor = skip_name(p);
  } else {
    return kiln_text_error_at(lexer->source_name, token->line, token->column,
                              "expected a name or a number after '%%'");
  }
  return KILN_OK;
}

static kiln_status_t lexer_string(kiln_text_lexer_t *lexer, kiln_text_token_t *token) {
  const char *p = lexer->cursor + 1;
  while (*p != '\0' && *p != '"' && *p != '\n') {
    p++;
  }
  if (*p != '"') {
    return kiln_text_error_at(lexer->source_name, token->line, token->column,
                              "unterminated string");
  }
  token->kind = KILN_TEXT_TOKEN_STRING;
  lexer->cursor = p + 1;
  return KILN_OK;
}

static kiln_status_t lexer_stray(kiln_text_lexer_t *lexer, const kiln_text_token_t *token) {
  unsigned char c = (unsigned char)*lexer->cursor;
  if (c >= 0x21 && c < 0x7f) {
    return kiln_text_error_at(lexer->source_name, token->line, token->column,
                              "unexpected character '%c'", c);
  }
  return kiln_text_error_at(lexer->source_name, token->line, token->column,
                            "unexpected byte 0x%02x", c);
}

/* Everything that is not a name, a reference, a number or a string. */
static kiln_status_t lexer_symbol(kiln_text_lexer_t *lexer, kiln_text_token_t *token) {
  const char *p = lexer->cursor;
  static const char metadata[] = "#[metadata]";
  if (p[0] == '-' && p[1] == '>') {
    token->kind = KILN_TEXT_TOKEN_ARROW;
    lexer->cursor = p + 2;
  } else if (strncmp(p, metadata, sizeof(metadata) - 1) == 0) {
    token->kind = KILN_TEXT_TOKEN_METADATA;
    lexer->cursor = p + sizeof(metadata) - 1;
  } else if (*p != '\0' && strchr("()[]{},;:=.-?<", *p) != NULL) {
    token->kind = KILN_TEXT_TOKEN_PUNCT;
    lexer->cursor = p + 1;
  } else {
    return lexer_stray(lexer, token);
  }
  return KILN_OK;
}

static kiln_status_t lexer_token(kiln_text_lexer_t *lexer, kiln_text_token_t *token) {
  const char *p = lexer->cursor;
  if (*p == '\0') {
    token->kind = KILN_TEXT_TOKEN_END;
  } else if (is_name_start(*p)) {
    token->kind = KILN_TEXT_TOKEN_IDENT;
    lexer->cursor = skip_name(p);
  } else if (is_digit(*p)) {
    token->kind = KILN_TEXT_TOKEN_NUMBER;
    lexer->cursor = skip_number(p, lexer->after_dot);
  } else if (*p == '%') {
    return lexer_reference(lexer, token);
  } else if (*p == '@') {
    if (!is_name_start(p[1])) {
      return kiln_text_error_at(lexer->source_name, token->line, token->column,
                                "expected a function name after '@'");
    }
    token->kind = KILN_TEXT_TOKEN_GLOBAL;
    lexer->cursor = skip_name(p + 1);
  } else if (*p == '"') {
    return lexer_string(lexer, token);
  } else {
    return lexer_symbol(lexer, token);
  }
  return KILN_OK;
}

kiln_status_t kiln_text_lexer_next(kiln_text_lexer_t *lexer, kiln_text_token_t *out_token) {
  KILN_RETURN_IF_ERROR(lexer_skip_space(lexer));
  kiln_text_token_t token = {
      .kind = KILN_TEXT_TOKEN_END,
      .start = lexer->cursor,
      .line = lexer->line,
      .column = lexer_column(lexer, lexer->cursor),
  };
  KILN_RETURN_IF_ERROR(lexer_token(lexer, &token));
  token.length = (size_t)(lexer->cursor - token.start);
  lexer->after_dot = kiln_text_token_is_punct(&token, '.');
  *out_token = token;
  return KILN_OK;
}

bool kiln_text_token_is_punct(const kiln_text_token_t *token, char c) {
  return token->kind == KILN_TEXT_TOKEN_PUNCT && token->start[0] == c;
}

bool kiln_text_token_is_ident(const kiln_text_token_t *token, const char *word) {
  return token->kind == KILN_TEXT_TOKEN_IDENT && strlen(word) == token->length &&
         memcmp(token->start, word, token->length) == 0;
}

const char *kiln_text_token_describe(const kiln_text_token_t *token, char *buffer) {
  const char *what = "";
  switch (token->kind) {
  case KILN_TEXT_TOKEN_END:
    snprintf(buffer, KILN_TEXT_TOKEN_TEXT_CAPACITY, "end of input");
    return buffer;
  case KILN_TEXT_TOKEN_IDENT:
    what = "identifier ";
    break;
  case KILN_TEXT_TOKEN_NUMBER:
    what = "number ";
    break;
  case KILN_TEXT_TOKEN_STRING:
    what = "string ";
    break;
  case KILN_TEXT_TOKEN_PUNCT:
  case KILN_TEXT_TOKEN_ARROW:
    snprintf(buffer, KILN_TEXT_TOKEN_TEXT_CAPACITY, "'%.*s'", (int)token->length, token->start);
    return buffer;
  case KILN_TEXT_TOKEN_LOCAL:
  case KILN_TEXT_TOKEN_NUMBERED:
  case KILN_TEXT_TOKEN_GLOBAL:
  case KILN_TEXT_TOKEN_METADATA:
  case KILN_TEXT_TOKEN_COUNT_:
    break;
  }
  const int room = 40;
  if (token->length > (size_t)room) {
    snprintf(buffer, KILN_TEXT_TOKEN_TEXT_CAPACITY, "%s%.*s...", what, room, token->start);
  } else {
    snprintf(buffer, KILN_TEXT_TOKEN_TEXT_CAPACITY, "%s%.*s", what, (int)token->length,
             token->start);
  }
  return buffer;
}
