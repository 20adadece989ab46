/*
 * The IR text parser's token helpers and its leaf grammars: types,
 * attribute values and the metadata section; see text_parser.h.
 *
 * An attribute value is rebuilt from its tokens in the spelling the
 * registry reads ("[2, 2]", "-1", "\"NCHW\"", "True") and handed to
 * kiln_op_attrs_set_text, so comments or line breaks inside a list do not
 * matter and the registry stays the one judge of what a value means.
 * Metadata values are read into a tensor created from the declared type,
 * after checking that the rest of the text could hold that many values, so
 * a mistyped shape cannot ask for gigabytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "ir/text_metadata.h"
#include "ir/text_parser.h"
#include "op/op.h"

/* ---- token helpers ---- */

kiln_status_t kiln_text_parser_advance(kiln_text_parser_t *parser) {
  return kiln_text_lexer_next(&parser->lexer, &parser->token);
}

kiln_status_t kiln_text_parser_peek(kiln_text_parser_t *parser, kiln_text_token_t *out_token) {
  kiln_text_lexer_t copy = parser->lexer;
  return kiln_text_lexer_next(&copy, out_token);
}

kiln_status_t kiln_text_parser_expect(kiln_text_parser_t *parser, char c, const char *context) {
  if (!kiln_text_token_is_punct(&parser->token, c)) {
    char found[KILN_TEXT_TOKEN_TEXT_CAPACITY];
    return KILN_TEXT_ERROR(parser, &parser->token, "expected '%c' %s, found %s", c, context,
                           kiln_text_token_describe(&parser->token, found));
  }
  return kiln_text_parser_advance(parser);
}

kiln_status_t kiln_text_parser_annotate(const kiln_text_parser_t *parser,
                                        const kiln_text_token_t *token, kiln_status_t status) {
  return kiln_status_annotate(status, "%s:%zu:%zu", parser->source, token->line, token->column);
}

kiln_status_t kiln_text_parser_token_string(kiln_text_parser_t *parser,
                                            const kiln_text_token_t *token, size_t skip,
                                            char **out_text) {
  size_t length = token->length - skip;
  char *text = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(&parser->scratch, length + 1, 1, (void **)&text));
  memcpy(text, token->start + skip, length);
  text[length] = '\0';
  *out_text = text;
  return KILN_OK;
}

kiln_status_t kiln_text_parser_integer(kiln_text_parser_t *parser, const kiln_text_token_t *token,
                                       const char *what, int64_t max, int64_t *out_value) {
  char found[KILN_TEXT_TOKEN_TEXT_CAPACITY];
  bool digits = token->kind == KILN_TEXT_TOKEN_NUMBER || token->kind == KILN_TEXT_TOKEN_NUMBERED;
  size_t skip = token->kind == KILN_TEXT_TOKEN_NUMBERED ? 1 : 0;
  for (size_t i = skip; digits && i < token->length; ++i) {
    digits = token->start[i] >= '0' && token->start[i] <= '9';
  }
  if (!digits) {
    return KILN_TEXT_ERROR(parser, token, "expected %s (an integer), found %s", what,
                           kiln_text_token_describe(token, found));
  }
  char *text = NULL;
  KILN_RETURN_IF_ERROR(kiln_text_parser_token_string(parser, token, skip, &text));
  errno = 0;
  long long value = strtoll(text, NULL, 10);
  if (errno == ERANGE || value > max) {
    return KILN_TEXT_ERROR(parser, token, "%s %s is too large (at most %lld)", what, text,
                           (long long)max);
  }
  *out_value = value;
  return KILN_OK;
}

kiln_status_t kiln_text_parser_enter(kiln_text_parser_t *parser) {
  if (parser->depth >= KILN_TEXT_MAX_DEPTH) {
    return KILN_TEXT_ERROR(parser, &parser->token, "nesting deeper than %d levels",
                           KILN_TEXT_MAX_DEPTH);
  }
  parser->depth++;
  return KILN_OK;
}

void kiln_text_parser_leave(kiln_text_parser_t *parser) {
  parser->depth--;
}

kiln_status_t kiln_text_parser_note(kiln_text_parser_t *parser, const void *node,
                                    const kiln_text_token_t *token) {
  kiln_text_position_t position = {node, token->line, token->column};
  return kiln_array_push(&parser->positions, &position);
}

/* ---- types ---- */

/* "<=N" after a symbolic dim, when there: its upper bound, else -1. */
static kiln_status_t parse_upper_bound(kiln_text_parser_t *parser, int64_t *out_bound) {
  *out_bound = -1;
  if (!kiln_text_token_is_punct(&parser->token, '<')) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, '=', "after '<' in a dim's upper bound"));
  KILN_RETURN_IF_ERROR(
      kiln_text_parser_integer(parser, &parser->token, "an upper bound", INT64_MAX, out_bound));
  return kiln_text_parser_advance(parser);
}

/* A symbolic dim: a name or '?', then an optional "<=N"; the current token is
 * the name or '?'. */
static kiln_status_t parse_symbolic_dim(kiln_text_parser_t *parser,
                                        const kiln_dim_var_t **out_var) {
  kiln_text_token_t start = parser->token;
  char *name = NULL;
  if (start.kind == KILN_TEXT_TOKEN_IDENT) {
    KILN_RETURN_IF_ERROR(kiln_text_parser_token_string(parser, &start, 0, &name));
  }
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  int64_t bound = -1;
  KILN_RETURN_IF_ERROR(parse_upper_bound(parser, &bound));
  return kiln_text_parser_annotate(
      parser, &start,
      kiln_dim_var_create(kiln_module_arena(parser->module), name ? name : "", bound, out_var));
}

/* One dim: an integer, a dim variable's name or '?'. */
static kiln_status_t parse_dim(kiln_text_parser_t *parser, int64_t *out_dim,
                               const kiln_dim_var_t **out_var) {
  *out_var = NULL;
  *out_dim = -1;
  if (kiln_text_token_is_punct(&parser->token, '-')) {
    return KILN_TEXT_ERROR(parser, &parser->token, "a dimension cannot be negative");
  }
  if (parser->token.kind == KILN_TEXT_TOKEN_IDENT ||
      kiln_text_token_is_punct(&parser->token, '?')) {
    return parse_symbolic_dim(parser, out_var);
  }
  KILN_RETURN_IF_ERROR(
      kiln_text_parser_integer(parser, &parser->token, "a dimension", INT64_MAX, out_dim));
  return kiln_text_parser_advance(parser);
}

/* (d0, d1, ...) of a tensor type; the current token is '('. */
static kiln_status_t parse_dims(kiln_text_parser_t *parser, int64_t *dims,
                                const kiln_dim_var_t **vars, int *out_ndim) {
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, '(', "before the dimensions of Tensor"));
  int ndim = 0;
  while (!kiln_text_token_is_punct(&parser->token, ')')) {
    if (ndim == KILN_MAX_RANK) {
      return KILN_TEXT_ERROR(parser, &parser->token, "a tensor type has at most %d dimensions",
                             KILN_MAX_RANK);
    }
    KILN_RETURN_IF_ERROR(parse_dim(parser, &dims[ndim], &vars[ndim]));
    ndim++;
    if (!kiln_text_token_is_punct(&parser->token, ')')) {
      KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, ',', "or ')' after a dimension"));
    }
  }
  *out_ndim = ndim;
  return kiln_text_parser_advance(parser);
}

/* A dtype name (float32, int64, ...); advances past it. */
static kiln_status_t parse_dtype_name(kiln_text_parser_t *parser, kiln_dtype_t *out_dtype) {
  kiln_text_token_t dtype_token = parser->token;
  char found[KILN_TEXT_TOKEN_TEXT_CAPACITY];
  if (dtype_token.kind != KILN_TEXT_TOKEN_IDENT) {
    return KILN_TEXT_ERROR(parser, &dtype_token, "expected a dtype (float32, int64, ...), found %s",
                           kiln_text_token_describe(&dtype_token, found));
  }
  char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_text_parser_token_string(parser, &dtype_token, 0, &name));
  kiln_status_t status = kiln_dtype_from_name(name, out_dtype);
  if (status != KILN_OK) {
    kiln_status_free(status);
    return KILN_TEXT_ERROR(parser, &dtype_token, "unknown dtype \"%s\"", name);
  }
  return kiln_text_parser_advance(parser);
}

/* Tensor[(dims), dtype]; the current token is Tensor. */
static kiln_status_t parse_tensor_type(kiln_text_parser_t *parser, const kiln_type_t **out_type) {
  kiln_text_token_t start = parser->token;
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, '[', "after Tensor"));
  int64_t dims[KILN_MAX_RANK];
  const kiln_dim_var_t *vars[KILN_MAX_RANK];
  int ndim = 0;
  KILN_RETURN_IF_ERROR(parse_dims(parser, dims, vars, &ndim));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, ',', "between the shape and the dtype"));
  kiln_dtype_t dtype = KILN_DTYPE_FLOAT32;
  KILN_RETURN_IF_ERROR(parse_dtype_name(parser, &dtype));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, ']', "after the dtype of Tensor"));
  return kiln_text_parser_annotate(
      parser, &start,
      kiln_tensor_type_create_symbolic(kiln_module_arena(parser->module), dtype, ndim, dims, vars,
                                       out_type));
}

/* (T, ...), (T) and (): always a tuple type; the current token is '('. */
static kiln_status_t parse_tuple_type(kiln_text_parser_t *parser, const kiln_type_t **out_type) {
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  kiln_array_t fields;
  kiln_array_initialize(&fields, parser->temp, sizeof(const kiln_type_t *));
  while (!kiln_text_token_is_punct(&parser->token, ')')) {
    const kiln_type_t *field = NULL;
    KILN_RETURN_IF_ERROR(kiln_text_parse_type(parser, &field));
    KILN_RETURN_IF_ERROR(kiln_array_push(&fields, &field));
    if (!kiln_text_token_is_punct(&parser->token, ')')) {
      KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, ',', "or ')' in a tuple type"));
    }
  }
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  return kiln_tuple_type_create(kiln_module_arena(parser->module), (int)kiln_array_count(&fields),
                                kiln_array_data(&fields), out_type);
}

/* Sequence[Tensor[...]] or Sequence[dtype]; the current token is Sequence. */
static kiln_status_t parse_sequence_type(kiln_text_parser_t *parser, const kiln_type_t **out_type) {
  kiln_text_token_t start = parser->token;
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, '[', "after Sequence"));
  const kiln_type_t *element = NULL;
  kiln_dtype_t dtype = KILN_DTYPE_FLOAT32;
  if (kiln_text_token_is_ident(&parser->token, "Tensor")) {
    KILN_RETURN_IF_ERROR(parse_tensor_type(parser, &element));
    dtype = kiln_type_as_tensor(element)->dtype;
  } else {
    KILN_RETURN_IF_ERROR(parse_dtype_name(parser, &dtype));
  }
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, ']', "after the element of Sequence"));
  return kiln_text_parser_annotate(
      parser, &start,
      kiln_sequence_type_create(kiln_module_arena(parser->module), dtype, element, out_type));
}

/* Optional[T]; the current token is Optional. */
static kiln_status_t parse_optional_type(kiln_text_parser_t *parser, const kiln_type_t **out_type) {
  kiln_text_token_t start = parser->token;
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, '[', "after Optional"));
  const kiln_type_t *element = NULL;
  KILN_RETURN_IF_ERROR(kiln_text_parse_type(parser, &element));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, ']', "after the element of Optional"));
  return kiln_text_parser_annotate(
      parser, &start,
      kiln_optional_type_create(kiln_module_arena(parser->module), element, out_type));
}

kiln_status_t kiln_text_parse_type(kiln_text_parser_t *parser, const kiln_type_t **out_type) {
  KILN_RETURN_IF_ERROR(kiln_text_parser_enter(parser));
  if (kiln_text_token_is_ident(&parser->token, "Tensor")) {
    KILN_RETURN_IF_ERROR(parse_tensor_type(parser, out_type));
  } else if (kiln_text_token_is_ident(&parser->token, "Sequence")) {
    KILN_RETURN_IF_ERROR(parse_sequence_type(parser, out_type));
  } else if (kiln_text_token_is_ident(&parser->token, "Optional")) {
    KILN_RETURN_IF_ERROR(parse_optional_type(parser, out_type));
  } else if (kiln_text_token_is_punct(&parser->token, '(')) {
    KILN_RETURN_IF_ERROR(parse_tuple_type(parser, out_type));
  } else {
    char found[KILN_TEXT_TOKEN_TEXT_CAPACITY];
    return KILN_TEXT_ERROR(parser, &parser->token,
                           "expected a type (Tensor[...], Sequence[...], Optional[...] or a tuple "
                           "of types), found %s",
                           kiln_text_token_describe(&parser->token, found));
  }
  kiln_text_parser_leave(parser);
  return KILN_OK;
}

/* ---- attribute values ---- */

/* [-](number | identifier) appended to `sb`; `what` names the value. */
static kiln_status_t parse_scalar(kiln_text_parser_t *parser, const char *what, kiln_strbuf_t *sb) {
  if (kiln_text_token_is_punct(&parser->token, '-')) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '-'));
    KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  }
  kiln_text_token_kind_t kind = parser->token.kind;
  if (kind != KILN_TEXT_TOKEN_NUMBER && kind != KILN_TEXT_TOKEN_IDENT) {
    char found[KILN_TEXT_TOKEN_TEXT_CAPACITY];
    return KILN_TEXT_ERROR(parser, &parser->token, "expected %s, found %s", what,
                           kiln_text_token_describe(&parser->token, found));
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_append_n(sb, parser->token.start, parser->token.length));
  return kiln_text_parser_advance(parser);
}

/* [a, b, ...] appended to `sb` as "[a, b]". */
static kiln_status_t parse_list_value(kiln_text_parser_t *parser, kiln_strbuf_t *sb) {
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '['));
  for (int i = 0; !kiln_text_token_is_punct(&parser->token, ']'); ++i) {
    if (i > 0) {
      KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, ',', "or ']' in a list value"));
      KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, ", "));
    }
    KILN_RETURN_IF_ERROR(parse_scalar(parser, "a list element", sb));
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, ']'));
  return kiln_text_parser_advance(parser);
}

static kiln_status_t parse_attribute_value(kiln_text_parser_t *parser, kiln_strbuf_t *sb) {
  if (parser->token.kind == KILN_TEXT_TOKEN_STRING) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_append_n(sb, parser->token.start, parser->token.length));
    return kiln_text_parser_advance(parser);
  }
  if (kiln_text_token_is_punct(&parser->token, '[')) {
    return parse_list_value(parser, sb);
  }
  return parse_scalar(parser, "an attribute value", sb);
}

static kiln_status_t unknown_attribute(kiln_text_parser_t *parser, const kiln_op_t *op,
                                       const kiln_text_token_t *token, const char *name) {
  if (op->num_attr_fields == 0) {
    return KILN_TEXT_ERROR(parser, token, "%s has no attributes (found %s=)", op->name, name);
  }
  kiln_strbuf_t names;
  kiln_strbuf_initialize(&names, parser->temp);
  for (int i = 0; i < op->num_attr_fields; ++i) {
    KILN_RETURN_IF_ERROR(
        kiln_strbuf_appendf(&names, "%s%s", i > 0 ? ", " : "", op->attr_fields[i].name));
  }
  return KILN_TEXT_ERROR(parser, token, "%s has no attribute '%s' (its attributes: %s)", op->name,
                         name, kiln_strbuf_c_str(&names));
}

kiln_status_t kiln_text_parse_attribute(kiln_text_parser_t *parser, const kiln_op_t *op,
                                        void *attrs, bool *seen) {
  kiln_text_token_t name_token = parser->token;
  char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_text_parser_token_string(parser, &name_token, 0, &name));
  const kiln_attr_field_t *field = kiln_op_attr_field(op, name);
  if (field == NULL || attrs == NULL) {
    return unknown_attribute(parser, op, &name_token, name);
  }
  size_t index = (size_t)(field - op->attr_fields);
  if (seen[index]) {
    return KILN_TEXT_ERROR(parser, &name_token, "attribute %s of %s is given twice", name,
                           op->name);
  }
  seen[index] = true;
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser)); /* the name */
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser)); /* '=' */
  kiln_text_token_t value_token = parser->token;
  kiln_strbuf_t value;
  kiln_strbuf_initialize(&value, parser->temp);
  KILN_RETURN_IF_ERROR(parse_attribute_value(parser, &value));
  return kiln_text_parser_annotate(parser, &value_token,
                                   kiln_op_attrs_set_text(op, attrs, name,
                                                          kiln_strbuf_c_str(&value),
                                                          kiln_module_arena(parser->module)));
}

/* ---- metadata ---- */

/* One element: [-](number | nan | inf), read without allocating (there may
 * be millions). */
static kiln_status_t parse_metadata_value(kiln_text_parser_t *parser, kiln_tensor_t *tensor,
                                          int64_t index) {
  kiln_text_token_t start = parser->token;
  char text[72];
  size_t sign = 0;
  if (kiln_text_token_is_punct(&parser->token, '-')) {
    text[0] = '-';
    sign = 1;
    KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  }
  const kiln_text_token_t *token = &parser->token;
  if (token->kind != KILN_TEXT_TOKEN_NUMBER && token->kind != KILN_TEXT_TOKEN_IDENT) {
    char found[KILN_TEXT_TOKEN_TEXT_CAPACITY];
    return KILN_TEXT_ERROR(parser, token, "expected a value, found %s",
                           kiln_text_token_describe(token, found));
  }
  if (token->length >= sizeof(text) - 1) {
    return KILN_TEXT_ERROR(parser, token, "a value of %zu characters is too long", token->length);
  }
  memcpy(text + sign, token->start, token->length);
  text[sign + token->length] = '\0';
  KILN_RETURN_IF_ERROR(
      kiln_text_parser_annotate(parser, &start, kiln_text_parse_tensor_value(tensor, index, text)));
  return kiln_text_parser_advance(parser);
}

/* [v0, v1, ...] into `tensor`; the current token is '['. */
static kiln_status_t parse_metadata_values(kiln_text_parser_t *parser, int64_t k,
                                           kiln_tensor_t *tensor) {
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, '[', "before the values of a constant"));
  int64_t count = kiln_tensor_element_count(tensor);
  int64_t index = 0;
  for (; !kiln_text_token_is_punct(&parser->token, ']'); ++index) {
    if (index > 0) {
      KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, ',', "or ']' between values"));
    }
    if (index == count) {
      return KILN_TEXT_ERROR(parser, &parser->token,
                             "Constant[%lld] has %lld elements but more values are given",
                             (long long)k, (long long)count);
    }
    KILN_RETURN_IF_ERROR(parse_metadata_value(parser, tensor, index));
  }
  if (index != count) {
    return KILN_TEXT_ERROR(parser, &parser->token,
                           "Constant[%lld] has %lld elements but %lld values are given",
                           (long long)k, (long long)count, (long long)index);
  }
  return kiln_text_parser_advance(parser);
}

/* A zero-filled tensor of `type` that the rest of the text could fill. */
static kiln_status_t metadata_tensor(kiln_text_parser_t *parser, int64_t k,
                                     const kiln_text_token_t *at, const kiln_type_t *type,
                                     kiln_tensor_t **out_tensor) {
  const kiln_tensor_type_t *tensor_type = kiln_type_as_tensor(type);
  if (tensor_type == NULL) {
    return KILN_TEXT_ERROR(parser, at, "Constant[%lld] must have a tensor type", (long long)k);
  }
  int64_t count = 0;
  KILN_RETURN_IF_ERROR(kiln_shape_element_count(tensor_type->ndim, tensor_type->shape, &count));
  size_t rest = (size_t)(parser->text_end - parser->lexer.cursor);
  if ((uint64_t)count > rest) {
    return KILN_TEXT_ERROR(parser, at,
                           "Constant[%lld] declares %lld elements, more than the rest of the "
                           "text can hold",
                           (long long)k, (long long)count);
  }
  return kiln_tensor_create(parser->allocator, tensor_type->dtype, tensor_type->ndim,
                            tensor_type->shape, out_tensor);
}

/* Constant[k] = type [values] */
static kiln_status_t parse_metadata_entry(kiln_text_parser_t *parser, int64_t k) {
  char found[KILN_TEXT_TOKEN_TEXT_CAPACITY];
  kiln_text_token_t start = parser->token;
  if (!kiln_text_token_is_ident(&start, "Constant")) {
    return KILN_TEXT_ERROR(parser, &start, "expected Constant[%lld] in the metadata, found %s",
                           (long long)k, kiln_text_token_describe(&start, found));
  }
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, '[', "after Constant"));
  int64_t written = 0;
  KILN_RETURN_IF_ERROR(
      kiln_text_parser_integer(parser, &parser->token, "a constant index", INT32_MAX, &written));
  if (written != k) {
    return KILN_TEXT_ERROR(parser, &parser->token, "expected Constant[%lld], found Constant[%lld]",
                           (long long)k, (long long)written);
  }
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, ']', "after the constant index"));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, '=', "after Constant[k]"));
  kiln_text_token_t type_token = parser->token;
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_text_parse_type(parser, &type));
  KILN_RETURN_IF_ERROR(
      kiln_array_reserve(&parser->tensors, kiln_array_count(&parser->tensors) + 1));
  KILN_RETURN_IF_ERROR(kiln_array_reserve(&parser->constants, (size_t)k + 1));
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(metadata_tensor(parser, k, &type_token, type, &tensor));
  KILN_RETURN_IF_ERROR(kiln_array_push(&parser->tensors, &tensor)); /* reserved: cannot fail */
  kiln_constant_t *none = NULL;
  KILN_RETURN_IF_ERROR(kiln_array_push(&parser->constants, &none));
  return parse_metadata_values(parser, k, tensor);
}

kiln_status_t kiln_text_parse_metadata(kiln_text_parser_t *parser) {
  parser->lexer = parser->metadata_lexer;
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  for (int64_t k = 0; parser->token.kind != KILN_TEXT_TOKEN_END; ++k) {
    KILN_RETURN_IF_ERROR(parse_metadata_entry(parser, k));
  }
  return KILN_OK;
}
