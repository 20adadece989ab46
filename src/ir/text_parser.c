/*
 * The IR text parser: modules, functions and expressions; see text.h for
 * the format and text_parser.h for the parser's state.
 *
 * Parsing runs in three steps. A first pass of the lexer looks for the
 * #[metadata] marker, and the metadata section is read first, since the
 * functions above it refer to its constants (a Constant node is made on
 * first mention, once per k). Then the functions are read top to bottom;
 * each builds its nodes with the constructors of ir/expr.h as soon as their
 * inputs are known, so a %N must be defined before it is used and nothing is
 * patched afterwards. %N names are per def, nested fn bodies included; Var
 * names are scoped: a fn's parameters are visible in its body and in the fns
 * nested in it. Last, types are inferred (kiln_ir_infer_function); when
 * inference fails, the failing node is found again by rerunning the single
 * inference step over the function's order, and the error gets that node's
 * line and column. Declared return types (-> T) are then checked against
 * the inferred ones.
 */
#include <stdio.h>
#include <string.h>

#include "ir/infer.h"
#include "ir/order.h"
#include "ir/text.h"
#include "ir/text_parser.h"
#include "op/op.h"

static kiln_status_t parse_expr(kiln_text_parser_t *parser, kiln_expr_t **out_expr);
static kiln_status_t parse_function(kiln_text_parser_t *parser, const char *label,
                                    kiln_function_t **out_function);

static const char *describe(const kiln_text_token_t *token, char *buffer) {
  return kiln_text_token_describe(token, buffer);
}

/* ---- names ---- */

static kiln_status_t lookup_numbered(kiln_text_parser_t *parser, kiln_expr_t **out_expr) {
  int64_t number = 0;
  KILN_RETURN_IF_ERROR(
      kiln_text_parser_integer(parser, &parser->token, "a node number", INT32_MAX, &number));
  void *found = NULL;
  if (!kiln_hashmap_get(&parser->numbered, (void *)(uintptr_t)(number + 1), &found)) {
    return KILN_TEXT_ERROR(parser, &parser->token, "%%%lld is used before it is defined",
                           (long long)number);
  }
  *out_expr = ((kiln_text_binding_t *)found)->node;
  return kiln_text_parser_advance(parser);
}

static kiln_status_t lookup_var(kiln_text_parser_t *parser, kiln_expr_t **out_expr) {
  char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_text_parser_token_string(parser, &parser->token, 1, &name));
  for (size_t i = kiln_array_count(&parser->scopes); i > 0; --i) {
    void *found = NULL;
    if (kiln_hashmap_get(kiln_array_at(&parser->scopes, i - 1), name, &found)) {
      *out_expr = found;
      return kiln_text_parser_advance(parser);
    }
  }
  return KILN_TEXT_ERROR(parser, &parser->token,
                         "undefined %%%s: not a parameter of @%s or of an enclosing fn", name,
                         parser->function_name);
}

/* meta[Constant][k] */
static kiln_status_t parse_meta(kiln_text_parser_t *parser, kiln_expr_t **out_expr) {
  kiln_text_token_t start = parser->token;
  char found[KILN_TEXT_TOKEN_TEXT_CAPACITY];
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, '[', "after meta"));
  if (!kiln_text_token_is_ident(&parser->token, "Constant")) {
    return KILN_TEXT_ERROR(parser, &parser->token, "expected meta[Constant][k], found %s",
                           describe(&parser->token, found));
  }
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, ']', "after meta[Constant"));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, '[', "after meta[Constant]"));
  int64_t k = 0;
  KILN_RETURN_IF_ERROR(
      kiln_text_parser_integer(parser, &parser->token, "a constant index", INT32_MAX, &k));
  if (!parser->has_metadata) {
    return KILN_TEXT_ERROR(parser, &start,
                           "meta[Constant][%lld] needs the #[metadata] section, and this text has "
                           "none (print it with include_metadata)",
                           (long long)k);
  }
  size_t count = kiln_array_count(&parser->tensors);
  if ((size_t)k >= count) {
    return KILN_TEXT_ERROR(parser, &start,
                           "meta[Constant][%lld] is not in the metadata section, which has %zu "
                           "constant%s",
                           (long long)k, count, count == 1 ? "" : "s");
  }
  kiln_constant_t **slot = kiln_array_at(&parser->constants, (size_t)k);
  if (*slot == NULL) {
    kiln_tensor_t *tensor = KILN_ARRAY_AT(&parser->tensors, kiln_tensor_t *, (size_t)k);
    KILN_RETURN_IF_ERROR(kiln_ir_constant_create(parser->module, tensor, slot));
    KILN_RETURN_IF_ERROR(kiln_text_parser_note(parser, *slot, &start));
  }
  *out_expr = &(*slot)->base;
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  return kiln_text_parser_expect(parser, ']', "after the constant index");
}

/* ---- calls ---- */

static kiln_status_t check_arity(kiln_text_parser_t *parser, const kiln_text_token_t *at,
                                 const kiln_op_t *op, size_t count) {
  int n = (int)count;
  if (n >= op->min_inputs && (op->max_inputs < 0 || n <= op->max_inputs)) {
    return KILN_OK;
  }
  if (op->max_inputs < 0) {
    return KILN_TEXT_ERROR(parser, at, "%s takes at least %d argument%s, got %d", op->name,
                           op->min_inputs, op->min_inputs == 1 ? "" : "s", n);
  }
  if (op->min_inputs == op->max_inputs) {
    return KILN_TEXT_ERROR(parser, at, "%s takes %d argument%s, got %d", op->name, op->min_inputs,
                           op->min_inputs == 1 ? "" : "s", n);
  }
  return KILN_TEXT_ERROR(parser, at, "%s takes %d to %d arguments, got %d", op->name,
                         op->min_inputs, op->max_inputs, n);
}

/* Whether the current token starts "name=". */
static kiln_status_t at_attribute(kiln_text_parser_t *parser, bool *out_is_attribute) {
  *out_is_attribute = false;
  if (parser->token.kind != KILN_TEXT_TOKEN_IDENT) {
    return KILN_OK;
  }
  kiln_text_token_t next;
  KILN_RETURN_IF_ERROR(kiln_text_parser_peek(parser, &next));
  *out_is_attribute = kiln_text_token_is_punct(&next, '=');
  return KILN_OK;
}

/* One argument or attribute of an operator call. */
static kiln_status_t parse_op_item(kiln_text_parser_t *parser, const kiln_op_t *op, void *attrs,
                                   bool *seen, bool *attributes_started, kiln_array_t *args) {
  bool is_attribute = false;
  KILN_RETURN_IF_ERROR(at_attribute(parser, &is_attribute));
  if (is_attribute) {
    *attributes_started = true;
    return kiln_text_parse_attribute(parser, op, attrs, seen);
  }
  if (*attributes_started) {
    return KILN_TEXT_ERROR(parser, &parser->token,
                           "an argument of %s comes after its attributes; arguments come first",
                           op->name);
  }
  kiln_expr_t *arg = NULL;
  KILN_RETURN_IF_ERROR(parse_expr(parser, &arg));
  return kiln_array_push(args, &arg);
}

/* Items up to and including ')': the current token follows '('. */
static kiln_status_t parse_op_items(kiln_text_parser_t *parser, const kiln_op_t *op, void *attrs,
                                    kiln_array_t *args) {
  bool *seen = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(&parser->scratch, (size_t)op->num_attr_fields + 1,
                                                  1, (void **)&seen));
  bool attributes_started = false;
  if (kiln_text_token_is_punct(&parser->token, ')')) {
    return kiln_text_parser_advance(parser);
  }
  for (;;) {
    KILN_RETURN_IF_ERROR(parse_op_item(parser, op, attrs, seen, &attributes_started, args));
    if (kiln_text_token_is_punct(&parser->token, ')')) {
      return kiln_text_parser_advance(parser);
    }
    if (!kiln_text_token_is_punct(&parser->token, ',')) {
      char found[KILN_TEXT_TOKEN_TEXT_CAPACITY];
      return KILN_TEXT_ERROR(parser, &parser->token, "expected ')' after arguments of %s, found %s",
                             op->name, describe(&parser->token, found));
    }
    KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  }
}

/* op(args, name=value, ...); the current token is the operator's name. */
static kiln_status_t parse_op_call(kiln_text_parser_t *parser, kiln_expr_t **out_expr) {
  kiln_text_token_t start = parser->token;
  char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_text_parser_token_string(parser, &start, 0, &name));
  const kiln_op_t *op = NULL;
  kiln_status_t status = kiln_op_find(name, &op);
  if (status != KILN_OK) {
    kiln_status_free(status);
    return KILN_TEXT_ERROR(parser, &start, "unknown operator \"%s\"", name);
  }
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  char context[96];
  snprintf(context, sizeof(context), "after the operator name %s", op->name);
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, '(', context));
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_attrs_create_default(op, kiln_module_arena(parser->module), &attrs));
  kiln_array_t args;
  kiln_array_initialize(&args, parser->temp, sizeof(kiln_expr_t *));
  KILN_RETURN_IF_ERROR(parse_op_items(parser, op, attrs, &args));
  KILN_RETURN_IF_ERROR(check_arity(parser, &start, op, kiln_array_count(&args)));
  KILN_RETURN_IF_ERROR(
      kiln_text_parser_annotate(parser, &start, kiln_op_attrs_validate(op, attrs)));
  kiln_call_t *call = NULL;
  KILN_RETURN_IF_ERROR(kiln_text_parser_annotate(
      parser, &start,
      kiln_ir_call_create(parser->module, op, (int)kiln_array_count(&args), kiln_array_data(&args),
                          attrs, &call)));
  *out_expr = &call->base;
  return kiln_text_parser_note(parser, call, &start);
}

/* Expressions up to and including `close`, comma-separated, a trailing comma
 * allowed; the current token follows the opening bracket. */
static kiln_status_t parse_expr_list(kiln_text_parser_t *parser, char close, const char *context,
                                     kiln_array_t *items, bool *out_trailing_comma) {
  *out_trailing_comma = false;
  while (!kiln_text_token_is_punct(&parser->token, close)) {
    kiln_expr_t *item = NULL;
    KILN_RETURN_IF_ERROR(parse_expr(parser, &item));
    KILN_RETURN_IF_ERROR(kiln_array_push(items, &item));
    *out_trailing_comma = false;
    if (!kiln_text_token_is_punct(&parser->token, close)) {
      KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, ',', context));
      *out_trailing_comma = true;
    }
  }
  return kiln_text_parser_advance(parser);
}

/* callee(args): a call of a fn value. */
static kiln_status_t parse_function_call(kiln_text_parser_t *parser, kiln_expr_t *callee,
                                         const kiln_text_token_t *start, kiln_expr_t **out_expr) {
  kiln_function_t *function = kiln_expr_as_function(callee);
  if (function == NULL) {
    return KILN_TEXT_ERROR(parser, &parser->token, "only a fn can be called, and this is a %s",
                           kiln_expr_kind_name(callee->kind));
  }
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  kiln_array_t args;
  kiln_array_initialize(&args, parser->temp, sizeof(kiln_expr_t *));
  bool trailing = false;
  KILN_RETURN_IF_ERROR(
      parse_expr_list(parser, ')', "or ')' after an argument of a fn call", &args, &trailing));
  kiln_call_t *call = NULL;
  KILN_RETURN_IF_ERROR(kiln_text_parser_annotate(
      parser, start,
      kiln_ir_call_function_create(parser->module, function, (int)kiln_array_count(&args),
                                   kiln_array_data(&args), &call)));
  *out_expr = &call->base;
  return kiln_text_parser_note(parser, call, start);
}

/* ---- expressions ---- */

/* (a, b), (a,), () or (a); the current token is '('. */
static kiln_status_t parse_parenthesized(kiln_text_parser_t *parser, kiln_expr_t **out_expr) {
  kiln_text_token_t start = parser->token;
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  kiln_array_t fields;
  kiln_array_initialize(&fields, parser->temp, sizeof(kiln_expr_t *));
  bool trailing = false;
  KILN_RETURN_IF_ERROR(parse_expr_list(parser, ')', "or ')' in a tuple", &fields, &trailing));
  if (kiln_array_count(&fields) == 1 && !trailing) {
    *out_expr = KILN_ARRAY_AT(&fields, kiln_expr_t *, 0); /* (a) is just a */
    return KILN_OK;
  }
  kiln_tuple_t *tuple = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_tuple_create(parser->module, (int)kiln_array_count(&fields),
                                            kiln_array_data(&fields), &tuple));
  *out_expr = &tuple->base;
  return kiln_text_parser_note(parser, tuple, &start);
}

static kiln_status_t parse_primary(kiln_text_parser_t *parser, kiln_expr_t **out_expr) {
  const kiln_text_token_t *token = &parser->token;
  switch (token->kind) {
  case KILN_TEXT_TOKEN_NUMBERED:
    return lookup_numbered(parser, out_expr);
  case KILN_TEXT_TOKEN_LOCAL:
    return lookup_var(parser, out_expr);
  case KILN_TEXT_TOKEN_IDENT:
    if (kiln_text_token_is_ident(token, "meta")) {
      return parse_meta(parser, out_expr);
    }
    if (kiln_text_token_is_ident(token, "fn")) {
      kiln_text_token_t start = *token;
      KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
      kiln_function_t *function = NULL;
      KILN_RETURN_IF_ERROR(parse_function(parser, NULL, &function));
      *out_expr = &function->base;
      return kiln_text_parser_note(parser, function, &start);
    }
    return parse_op_call(parser, out_expr);
  case KILN_TEXT_TOKEN_PUNCT:
    if (kiln_text_token_is_punct(token, '(')) {
      return parse_parenthesized(parser, out_expr);
    }
    break;
  case KILN_TEXT_TOKEN_END:
  case KILN_TEXT_TOKEN_GLOBAL:
  case KILN_TEXT_TOKEN_NUMBER:
  case KILN_TEXT_TOKEN_STRING:
  case KILN_TEXT_TOKEN_METADATA:
  case KILN_TEXT_TOKEN_ARROW:
  case KILN_TEXT_TOKEN_COUNT_:
    break;
  }
  char found[KILN_TEXT_TOKEN_TEXT_CAPACITY];
  return KILN_TEXT_ERROR(parser, token, "expected an expression, found %s", describe(token, found));
}

/* expr.index */
static kiln_status_t parse_get_item(kiln_text_parser_t *parser, kiln_expr_t *tuple,
                                    const kiln_text_token_t *start, kiln_expr_t **out_expr) {
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  int64_t index = 0;
  KILN_RETURN_IF_ERROR(
      kiln_text_parser_integer(parser, &parser->token, "a tuple index", INT32_MAX, &index));
  kiln_tuple_get_item_t *item = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_tuple_get_item_create(parser->module, tuple, (int)index, &item));
  *out_expr = &item->base;
  KILN_RETURN_IF_ERROR(kiln_text_parser_note(parser, item, start));
  return kiln_text_parser_advance(parser);
}

/* primary { .index | (args) } */
static kiln_status_t parse_postfix(kiln_text_parser_t *parser, kiln_expr_t **out_expr) {
  kiln_text_token_t start = parser->token;
  kiln_expr_t *expr = NULL;
  KILN_RETURN_IF_ERROR(parse_primary(parser, &expr));
  for (;;) {
    if (kiln_text_token_is_punct(&parser->token, '.')) {
      KILN_RETURN_IF_ERROR(parse_get_item(parser, expr, &start, &expr));
    } else if (kiln_text_token_is_punct(&parser->token, '(')) {
      KILN_RETURN_IF_ERROR(parse_function_call(parser, expr, &start, &expr));
    } else {
      *out_expr = expr;
      return KILN_OK;
    }
  }
}

static kiln_status_t parse_expr(kiln_text_parser_t *parser, kiln_expr_t **out_expr) {
  KILN_RETURN_IF_ERROR(kiln_text_parser_enter(parser));
  KILN_RETURN_IF_ERROR(parse_postfix(parser, out_expr));
  kiln_text_parser_leave(parser);
  return KILN_OK;
}

/* ---- function bodies ---- */

/* %N = expr; the current token is %N and the next one '='. */
static kiln_status_t parse_binding(kiln_text_parser_t *parser) {
  kiln_text_token_t start = parser->token;
  int64_t number = 0;
  KILN_RETURN_IF_ERROR(
      kiln_text_parser_integer(parser, &start, "a node number", INT32_MAX, &number));
  void *key = (void *)(uintptr_t)(number + 1);
  void *found = NULL;
  if (kiln_hashmap_get(&parser->numbered, key, &found)) {
    const kiln_text_binding_t *first = found;
    return KILN_TEXT_ERROR(parser, &start,
                           "duplicate definition of %%%lld (first defined at %zu:%zu)",
                           (long long)number, first->line, first->column);
  }
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser)); /* %N */
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser)); /* = */
  kiln_text_binding_t *binding = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(&parser->scratch, sizeof(*binding),
                                           _Alignof(kiln_text_binding_t), (void **)&binding));
  binding->line = start.line;
  binding->column = start.column;
  KILN_RETURN_IF_ERROR(parse_expr(parser, &binding->node));
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(&parser->numbered, key, binding));
  char context[64];
  snprintf(context, sizeof(context), "after the definition of %%%lld", (long long)number);
  return kiln_text_parser_expect(parser, ';', context);
}

/* { %N = expr; } expr */
static kiln_status_t parse_body(kiln_text_parser_t *parser, kiln_expr_t **out_body) {
  for (;;) {
    if (parser->token.kind == KILN_TEXT_TOKEN_NUMBERED) {
      kiln_text_token_t next;
      KILN_RETURN_IF_ERROR(kiln_text_parser_peek(parser, &next));
      if (kiln_text_token_is_punct(&next, '=')) {
        KILN_RETURN_IF_ERROR(parse_binding(parser));
        continue;
      }
    }
    return parse_expr(parser, out_body);
  }
}

/* %name [: type], declared in the innermost scope. */
static kiln_status_t parse_param(kiln_text_parser_t *parser, kiln_array_t *params) {
  kiln_text_token_t start = parser->token;
  char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_text_parser_token_string(parser, &start, 1, &name));
  kiln_hashmap_t *scope = kiln_array_at(&parser->scopes, kiln_array_count(&parser->scopes) - 1);
  if (kiln_hashmap_contains(scope, name)) {
    return KILN_TEXT_ERROR(parser, &start, "duplicate parameter %%%s", name);
  }
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  const kiln_type_t *type = NULL;
  if (kiln_text_token_is_punct(&parser->token, ':')) {
    KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
    KILN_RETURN_IF_ERROR(kiln_text_parse_type(parser, &type));
  }
  kiln_var_t *var = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_var_create(parser->module, name, type, &var));
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(scope, name, var));
  KILN_RETURN_IF_ERROR(kiln_text_parser_note(parser, var, &start));
  return kiln_array_push(params, &var);
}

/* Primitive=0|1 */
static kiln_status_t parse_primitive(kiln_text_parser_t *parser, bool *out_primitive) {
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, '=', "after Primitive"));
  int64_t value = 0;
  KILN_RETURN_IF_ERROR(kiln_text_parser_integer(parser, &parser->token, "Primitive", 1, &value));
  *out_primitive = value == 1;
  return kiln_text_parser_advance(parser);
}

/* (params) after its '(' up to and including ')'. */
static kiln_status_t parse_params(kiln_text_parser_t *parser, kiln_array_t *params,
                                  bool *out_primitive) {
  for (int i = 0; !kiln_text_token_is_punct(&parser->token, ')'); ++i) {
    if (i > 0) {
      KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, ',', "or ')' after a parameter"));
    }
    if (parser->token.kind == KILN_TEXT_TOKEN_LOCAL) {
      KILN_RETURN_IF_ERROR(parse_param(parser, params));
    } else if (kiln_text_token_is_ident(&parser->token, "Primitive")) {
      KILN_RETURN_IF_ERROR(parse_primitive(parser, out_primitive));
    } else {
      char found[KILN_TEXT_TOKEN_TEXT_CAPACITY];
      return KILN_TEXT_ERROR(parser, &parser->token,
                             "expected a parameter %%name or Primitive=1, found %s",
                             describe(&parser->token, found));
    }
  }
  return kiln_text_parser_advance(parser);
}

static kiln_status_t push_scope(kiln_text_parser_t *parser) {
  kiln_hashmap_t scope;
  kiln_hashmap_initialize(&scope, parser->temp, KILN_HASHMAP_KEY_STRING);
  return kiln_array_push(&parser->scopes, &scope);
}

static kiln_status_t note_declared(kiln_text_parser_t *parser, kiln_function_t *function,
                                   const char *label, const kiln_type_t *type,
                                   const kiln_text_token_t *at) {
  kiln_text_declared_t declared = {function, type, label, at->line, at->column};
  if (label == NULL) {
    char *text = NULL;
    size_t size = strlen(parser->function_name) + 16;
    KILN_RETURN_IF_ERROR(kiln_arena_allocate(&parser->scratch, size, 1, (void **)&text));
    snprintf(text, size, "a fn in @%s", parser->function_name);
    declared.label = text;
  }
  return kiln_array_push(&parser->declared, &declared);
}

/* (params) [-> type] { body }: the rest of a def or a fn. `label` names a
 * def ("@main"), NULL for a fn. */
static kiln_status_t parse_function(kiln_text_parser_t *parser, const char *label,
                                    kiln_function_t **out_function) {
  KILN_RETURN_IF_ERROR(kiln_text_parser_enter(parser));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, '(', "before the parameters"));
  KILN_RETURN_IF_ERROR(push_scope(parser));
  kiln_array_t params;
  kiln_array_initialize(&params, parser->temp, sizeof(kiln_var_t *));
  bool primitive = false;
  KILN_RETURN_IF_ERROR(parse_params(parser, &params, &primitive));
  const kiln_type_t *ret_type = NULL;
  kiln_text_token_t ret_token = parser->token;
  if (parser->token.kind == KILN_TEXT_TOKEN_ARROW) {
    KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
    ret_token = parser->token;
    KILN_RETURN_IF_ERROR(kiln_text_parse_type(parser, &ret_type));
  }
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, '{', "before the body"));
  kiln_expr_t *body = NULL;
  KILN_RETURN_IF_ERROR(parse_body(parser, &body));
  KILN_RETURN_IF_ERROR(kiln_text_parser_expect(parser, '}', "after the result of the body"));
  kiln_array_pop(&parser->scopes, NULL); /* its map lives in scratch */
  kiln_function_t *function = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_function_create(parser->module, (int)kiln_array_count(&params),
                                               kiln_array_data(&params), body, &function));
  function->primitive = primitive;
  if (ret_type != NULL) {
    KILN_RETURN_IF_ERROR(note_declared(parser, function, label, ret_type, &ret_token));
  }
  kiln_text_parser_leave(parser);
  *out_function = function;
  return KILN_OK;
}

/* def @name(params) [-> type] { body } */
static kiln_status_t parse_def(kiln_text_parser_t *parser) {
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  kiln_text_token_t name_token = parser->token;
  if (name_token.kind != KILN_TEXT_TOKEN_GLOBAL) {
    char found[KILN_TEXT_TOKEN_TEXT_CAPACITY];
    return KILN_TEXT_ERROR(parser, &name_token,
                           "expected a function name @name after def, found %s",
                           describe(&name_token, found));
  }
  char *label = NULL;
  KILN_RETURN_IF_ERROR(kiln_text_parser_token_string(parser, &name_token, 0, &label));
  if (kiln_module_get_function(parser->module, label + 1) != NULL) {
    return KILN_TEXT_ERROR(parser, &name_token, "duplicate definition of %s", label);
  }
  parser->function_name = label + 1;
  kiln_hashmap_clear(&parser->numbered);
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  kiln_function_t *function = NULL;
  KILN_RETURN_IF_ERROR(parse_function(parser, label, &function));
  KILN_RETURN_IF_ERROR(kiln_text_parser_note(parser, function, &name_token));
  return kiln_module_add_function(parser->module, label + 1, function);
}

/* ---- the module ---- */

/* Finds the #[metadata] marker, leaving metadata_lexer just after it. */
static kiln_status_t find_metadata(kiln_text_parser_t *parser) {
  kiln_text_lexer_t lexer = parser->lexer;
  kiln_text_token_t token;
  do {
    KILN_RETURN_IF_ERROR(kiln_text_lexer_next(&lexer, &token));
  } while (token.kind != KILN_TEXT_TOKEN_END && token.kind != KILN_TEXT_TOKEN_METADATA);
  parser->has_metadata = token.kind == KILN_TEXT_TOKEN_METADATA;
  parser->metadata_lexer = lexer;
  return KILN_OK;
}

static kiln_status_t parse_functions(kiln_text_parser_t *parser) {
  KILN_RETURN_IF_ERROR(kiln_text_parser_advance(parser));
  while (parser->token.kind != KILN_TEXT_TOKEN_END &&
         parser->token.kind != KILN_TEXT_TOKEN_METADATA) {
    if (!kiln_text_token_is_ident(&parser->token, "def")) {
      char found[KILN_TEXT_TOKEN_TEXT_CAPACITY];
      return KILN_TEXT_ERROR(parser, &parser->token, "expected def or #[metadata], found %s",
                             describe(&parser->token, found));
    }
    KILN_RETURN_IF_ERROR(parse_def(parser));
  }
  return KILN_OK;
}

/* ---- types, after parsing ---- */

static const kiln_text_position_t *find_position(const kiln_text_parser_t *parser,
                                                 const void *node) {
  for (size_t i = 0; i < kiln_array_count(&parser->positions); ++i) {
    const kiln_text_position_t *position = kiln_array_at(&parser->positions, i);
    if (position->node == node) {
      return position;
    }
  }
  return NULL;
}

/* The first node of `function`'s order whose inference step fails: the
 * one kiln_ir_infer_function stopped at (the nodes before it have types). */
static kiln_status_t find_failing_node(kiln_text_parser_t *parser, kiln_function_t *function,
                                       const void **out_node) {
  *out_node = NULL;
  kiln_ir_order_t order;
  KILN_RETURN_IF_ERROR(kiln_ir_order_compute(function, parser->temp, &order));
  for (size_t i = 0; i < kiln_ir_order_count(&order) && *out_node == NULL; ++i) {
    const kiln_type_t *type = NULL;
    kiln_status_t status =
        kiln_ir_infer_node(&parser->scratch, kiln_ir_order_node(&order, i), &type);
    if (status != KILN_OK) {
      *out_node = kiln_ir_order_node(&order, i);
      kiln_status_free(status);
    }
  }
  kiln_ir_order_deinitialize(&order);
  return KILN_OK;
}

static kiln_status_t infer_function(kiln_text_parser_t *parser, const char *name,
                                    kiln_function_t *function) {
  kiln_status_t status = kiln_ir_infer_function(parser->module, name, function);
  if (status == KILN_OK || kiln_status_code(status) == KILN_STATUS_CODE_RESOURCE_EXHAUSTED) {
    return status;
  }
  const void *node = NULL;
  kiln_status_t search = find_failing_node(parser, function, &node);
  if (search != KILN_OK) {
    kiln_status_free(status);
    return search;
  }
  const kiln_text_position_t *position = find_position(parser, node);
  if (position == NULL) {
    return kiln_status_annotate(status, "%s", parser->source);
  }
  return kiln_status_annotate(status, "%s:%zu:%zu", parser->source, position->line,
                              position->column);
}

static kiln_status_t check_declared(const kiln_text_parser_t *parser) {
  for (size_t i = 0; i < kiln_array_count(&parser->declared); ++i) {
    const kiln_text_declared_t *declared = kiln_array_at(&parser->declared, i);
    if (!kiln_type_equal(declared->type, declared->function->ret_type)) {
      char written[KILN_IR_TYPE_TEXT_CAPACITY];
      char inferred[KILN_IR_TYPE_TEXT_CAPACITY];
      return kiln_text_error_at(parser->source, declared->line, declared->column,
                                "%s declares the return type %s, but its body has type %s",
                                declared->label, kiln_type_text(declared->type, written),
                                kiln_type_text(declared->function->ret_type, inferred));
    }
  }
  return KILN_OK;
}

static kiln_status_t infer_module(kiln_text_parser_t *parser) {
  kiln_module_t *module = parser->module;
  for (int i = 0; i < kiln_module_function_count(module); ++i) {
    KILN_RETURN_IF_ERROR(infer_function(parser, kiln_module_function_name(module, i),
                                        kiln_module_function_at(module, i)));
  }
  return check_declared(parser);
}

/* ---- entry ---- */

static void parser_initialize(kiln_text_parser_t *parser, const char *source, const char *text,
                              kiln_allocator_t allocator) {
  memset(parser, 0, sizeof(*parser));
  parser->source = source;
  parser->text_end = text + strlen(text);
  parser->allocator = allocator;
  kiln_text_lexer_initialize(&parser->lexer, source, text);
  kiln_arena_initialize(&parser->scratch, allocator, 0);
  parser->temp = kiln_arena_allocator(&parser->scratch);
  kiln_hashmap_initialize(&parser->numbered, parser->temp, KILN_HASHMAP_KEY_POINTER);
  kiln_array_initialize(&parser->scopes, parser->temp, sizeof(kiln_hashmap_t));
  kiln_array_initialize(&parser->tensors, parser->temp, sizeof(kiln_tensor_t *));
  kiln_array_initialize(&parser->constants, parser->temp, sizeof(kiln_constant_t *));
  kiln_array_initialize(&parser->positions, parser->temp, sizeof(kiln_text_position_t));
  kiln_array_initialize(&parser->declared, parser->temp, sizeof(kiln_text_declared_t));
}

static void parser_deinitialize(kiln_text_parser_t *parser) {
  for (size_t i = 0; i < kiln_array_count(&parser->tensors); ++i) {
    kiln_tensor_release(KILN_ARRAY_AT(&parser->tensors, kiln_tensor_t *, i));
  }
  kiln_arena_deinitialize(&parser->scratch); /* every map and array above */
}

static kiln_status_t parse_module(kiln_text_parser_t *parser) {
  KILN_RETURN_IF_ERROR(find_metadata(parser));
  if (parser->has_metadata) {
    kiln_text_lexer_t start = parser->lexer;
    KILN_RETURN_IF_ERROR(kiln_text_parse_metadata(parser));
    parser->lexer = start;
  }
  KILN_RETURN_IF_ERROR(parse_functions(parser));
  return infer_module(parser);
}

/* Every failure but running out of memory is INVALID_ARGUMENT: the text is
 * what is wrong, even when type inference says OUT_OF_RANGE. */
static kiln_status_t as_invalid_argument(kiln_status_t status) {
  kiln_status_code_t code = kiln_status_code(status);
  if (status == KILN_OK || code == KILN_STATUS_CODE_INVALID_ARGUMENT ||
      code == KILN_STATUS_CODE_RESOURCE_EXHAUSTED) {
    return status;
  }
  kiln_status_t converted = KILN_STATUS(INVALID_ARGUMENT, "%s", kiln_status_message(status));
  kiln_status_free(status);
  return converted;
}

kiln_status_t kiln_ir_parse_module(const char *source_name, const char *text,
                                   kiln_allocator_t allocator, kiln_module_t **out_module) {
  *out_module = NULL;
  if (text == NULL) {
    return KILN_STATUS(INVALID_ARGUMENT, "parse: no text");
  }
  const char *source = source_name != NULL ? source_name : "<text>";
  kiln_text_parser_t parser;
  parser_initialize(&parser, source, text, allocator);
  kiln_status_t status = kiln_module_create(allocator, &parser.module);
  if (status == KILN_OK) {
    status = parse_module(&parser);
  }
  kiln_module_t *module = parser.module;
  parser_deinitialize(&parser);
  if (status != KILN_OK) {
    kiln_module_destroy(module);
    return as_invalid_argument(status);
  }
  *out_module = module;
  return KILN_OK;
}
