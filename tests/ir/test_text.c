/*
 * Tests of the IR text format (ir/text.h): exact printed text for small
 * modules, print -> parse -> print identity over every node kind, every
 * attribute kind, nested functions, naming rules and constants of every
 * dtype, each parse error with its line and column, a robustness sweep over
 * truncated and mutated texts, and allocation-failure sweeps over printing
 * and parsing.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer.h"
#include "ir/text.h"
#include "kiln_test.h"
#include "op/op.h"

#define E(node)    (&(node)->base)
#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define NODES(...) ((kiln_expr_t *[]){__VA_ARGS__})
#define COUNT(...) ((int)(sizeof((kiln_expr_t *[]){__VA_ARGS__}) / sizeof(kiln_expr_t *)))
/* A call of operator `name` with attributes "a=1;b=[2, 2]" ("" for none). */
#define CALL(m, name, attrs, ...) \
  make_call((m), (name), (attrs), COUNT(__VA_ARGS__), NODES(__VA_ARGS__))

/* ---- building modules ---- */

static kiln_module_t *new_module(void) {
  kiln_module_t *m = NULL;
  KILN_ASSERT_OK(kiln_module_create(kiln_allocator_system(), &m));
  return m;
}

static const kiln_type_t *ttype(kiln_module_t *m, kiln_dtype_t dtype, int ndim,
                                const int64_t *shape) {
  const kiln_type_t *type = NULL;
  KILN_ASSERT_OK(kiln_tensor_type_create(kiln_module_arena(m), dtype, ndim, shape, &type));
  return type;
}

static const kiln_type_t *f32(kiln_module_t *m, int ndim, const int64_t *shape) {
  return ttype(m, KILN_DTYPE_FLOAT32, ndim, shape);
}

static kiln_var_t *var(kiln_module_t *m, const char *name, const kiln_type_t *type) {
  kiln_var_t *v = NULL;
  KILN_ASSERT_OK(kiln_ir_var_create(m, name, type, &v));
  return v;
}

/* Default attrs of `op` with "name=value;name=value" applied. */
static void *attrs_from(kiln_module_t *m, const kiln_op_t *op, const char *settings) {
  void *attrs = NULL;
  KILN_ASSERT_OK(kiln_op_attrs_create_default(op, kiln_module_arena(m), &attrs));
  char buffer[256];
  snprintf(buffer, sizeof(buffer), "%s", settings);
  for (char *item = strtok(buffer, ";"); item != NULL; item = strtok(NULL, ";")) {
    char *equals = strchr(item, '=');
    assert_non_null(equals);
    *equals = '\0';
    KILN_ASSERT_OK(kiln_op_attrs_set_text(op, attrs, item, equals + 1, kiln_module_arena(m)));
  }
  KILN_ASSERT_OK(kiln_op_attrs_validate(op, attrs));
  return attrs;
}

static kiln_expr_t *make_call(kiln_module_t *m, const char *name, const char *settings, int n,
                              kiln_expr_t *const *args) {
  const kiln_op_t *op = NULL;
  KILN_ASSERT_OK(kiln_op_find(name, &op));
  kiln_call_t *call = NULL;
  KILN_ASSERT_OK(kiln_ir_call_create(m, op, n, args, attrs_from(m, op, settings), &call));
  return E(call);
}

static kiln_expr_t *call_fn(kiln_module_t *m, kiln_function_t *callee, int n,
                            kiln_expr_t *const *args) {
  kiln_call_t *call = NULL;
  KILN_ASSERT_OK(kiln_ir_call_function_create(m, callee, n, args, &call));
  return E(call);
}

static kiln_expr_t *tuple(kiln_module_t *m, int n, kiln_expr_t *const *fields) {
  kiln_tuple_t *t = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_create(m, n, fields, &t));
  return E(t);
}

static kiln_expr_t *get_item(kiln_module_t *m, kiln_expr_t *of, int index) {
  kiln_tuple_get_item_t *item = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_get_item_create(m, of, index, &item));
  return E(item);
}

static kiln_function_t *fn(kiln_module_t *m, int n, kiln_var_t *const *params, kiln_expr_t *body) {
  kiln_function_t *f = NULL;
  KILN_ASSERT_OK(kiln_ir_function_create(m, n, params, body, &f));
  return f;
}

static void add_fn(kiln_module_t *m, const char *name, int n, kiln_var_t *const *params,
                   kiln_expr_t *body) {
  KILN_ASSERT_OK(kiln_module_add_function(m, name, fn(m, n, params, body)));
}

static kiln_expr_t *constant(kiln_module_t *m, kiln_dtype_t dtype, int ndim, const int64_t *shape,
                             const void *data) {
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), dtype, ndim, shape, &tensor));
  if (kiln_tensor_byte_size(tensor) > 0) {
    memcpy(kiln_tensor_data(tensor), data, kiln_tensor_byte_size(tensor));
  }
  kiln_constant_t *c = NULL;
  kiln_status_t status = kiln_ir_constant_create(m, tensor, &c);
  kiln_tensor_release(tensor);
  KILN_ASSERT_OK(status);
  return E(c);
}

/* ---- printing and parsing ---- */

static char *print_text(const kiln_module_t *m, bool include_metadata) {
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  kiln_ir_print_options_t options = {.include_metadata = include_metadata};
  KILN_ASSERT_OK(kiln_ir_print_module(m, &options, &sb));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_strbuf_take(&sb, &text));
  return text;
}

static kiln_module_t *parse_text(const char *text) {
  kiln_module_t *m = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("t.txt", text, kiln_allocator_system(), &m));
  return m;
}

static kiln_status_t parse_status(const char *text) {
  kiln_module_t *m = NULL;
  kiln_status_t status = kiln_ir_parse_module("t.txt", text, kiln_allocator_system(), &m);
  assert_true(status != KILN_OK || m != NULL);
  kiln_module_destroy(m);
  return status;
}

/* Infers `m`'s types, prints it, parses the text, prints that: the texts must
 * be the same. Destroys `m` and returns the text (free()). */
static char *round_trip(kiln_module_t *m, bool include_metadata) {
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  char *first = print_text(m, include_metadata);
  kiln_module_t *parsed = parse_text(first);
  char *second = print_text(parsed, include_metadata);
  assert_string_equal(second, first);
  free(second);
  kiln_module_destroy(parsed);
  kiln_module_destroy(m);
  return first;
}

static void assert_contains(const char *text, const char *part) {
  if (strstr(text, part) == NULL) {
    fprintf(stderr, "expected \"%s\" in:\n%s\n", part, text);
    fail();
  }
}

/* ---- exact text ---- */

static void test_golden_conv_relu(void **state) {
  (void)state;
  kiln_module_t *m = new_module();
  kiln_var_t *data = var(m, "data", f32(m, 4, SHAPE(1, 3, 224, 224)));
  kiln_var_t *w = var(m, "w", f32(m, 4, SHAPE(64, 3, 7, 7)));
  kiln_expr_t *conv = CALL(m, "nn.conv2d", "strides=[2, 2];padding=[3, 3, 3, 3]", E(data), E(w));
  kiln_expr_t *relu = CALL(m, "nn.relu", "", conv);
  add_fn(m, "main", 2, (kiln_var_t *[]){data, w}, relu);
  char *text = round_trip(m, false);
  assert_string_equal(
      text,
      "def @main(%data: Tensor[(1, 3, 224, 224), float32], %w: Tensor[(64, 3, 7, 7), float32]) "
      "-> Tensor[(1, 64, 112, 112), float32] {\n"
      "  %0 = nn.conv2d(%data, %w, strides=[2, 2], padding=[3, 3, 3, 3]) "
      "/* Tensor[(1, 64, 112, 112), float32] */;\n"
      "  %1 = nn.relu(%0) /* Tensor[(1, 64, 112, 112), float32] */;\n"
      "  %1\n"
      "}\n");
  free(text);
}

/* main(x, y) = fn(p0, p1){relu(add(p0, p1))}(x, y) */
static kiln_module_t *primitive_module(void) {
  kiln_module_t *m = new_module();
  const kiln_type_t *t = f32(m, 2, SHAPE(1, 4));
  kiln_var_t *p0 = var(m, "p0", t);
  kiln_var_t *p1 = var(m, "p1", t);
  kiln_expr_t *sum = CALL(m, "add", "", E(p0), E(p1));
  kiln_function_t *fused = fn(m, 2, (kiln_var_t *[]){p0, p1}, CALL(m, "nn.relu", "", sum));
  fused->primitive = true;
  kiln_var_t *x = var(m, "x", t);
  kiln_var_t *y = var(m, "y", t);
  add_fn(m, "main", 2, (kiln_var_t *[]){x, y}, call_fn(m, fused, 2, NODES(E(x), E(y))));
  return m;
}

static const char primitive_text[] =
    "def @main(%x: Tensor[(1, 4), float32], %y: Tensor[(1, 4), float32]) -> Tensor[(1, 4), "
    "float32] {\n"
    "  %2 = fn (%p0: Tensor[(1, 4), float32], %p1: Tensor[(1, 4), float32], Primitive=1) -> "
    "Tensor[(1, 4), float32] {\n"
    "    %0 = add(%p0, %p1) /* Tensor[(1, 4), float32] */;\n"
    "    %1 = nn.relu(%0) /* Tensor[(1, 4), float32] */;\n"
    "    %1\n"
    "  };\n"
    "  %3 = %2(%x, %y) /* Tensor[(1, 4), float32] */;\n"
    "  %3\n"
    "}\n";

static void test_golden_primitive_function(void **state) {
  (void)state;
  char *text = round_trip(primitive_module(), false);
  assert_string_equal(text, primitive_text);
  free(text);
}

/* split, TupleGetItem, a shared node, tuples of 1 and 2 fields, a constant. */
static void test_golden_tuples_and_metadata(void **state) {
  (void)state;
  kiln_module_t *m = new_module();
  kiln_var_t *x = var(m, "x", f32(m, 2, SHAPE(2, 6)));
  kiln_expr_t *parts = CALL(m, "split", "sections=3;axis=1", E(x));
  kiln_expr_t *first = get_item(m, parts, 0);
  kiln_expr_t *last = get_item(m, parts, 2);
  const float values[] = {1, 2.5f, -3, 4};
  kiln_expr_t *k = constant(m, KILN_DTYPE_FLOAT32, 2, SHAPE(2, 2), values);
  kiln_expr_t *sum = CALL(m, "add", "", last, k);
  kiln_expr_t *twice = CALL(m, "multiply", "", sum, sum);
  kiln_expr_t *one = tuple(m, 1, NODES(first));
  add_fn(m, "main", 1, &x, tuple(m, 2, NODES(one, twice)));
  char *text = round_trip(m, true);
  assert_string_equal(
      text,
      "def @main(%x: Tensor[(2, 6), float32]) -> ((Tensor[(2, 2), float32]), Tensor[(2, 2), "
      "float32]) {\n"
      "  %0 = split(%x, sections=3, axis=1) /* (Tensor[(2, 2), float32], Tensor[(2, 2), float32], "
      "Tensor[(2, 2), float32]) */;\n"
      "  %1 = %0.0 /* Tensor[(2, 2), float32] */;\n"
      "  %2 = (%1,) /* (Tensor[(2, 2), float32]) */;\n"
      "  %3 = %0.2 /* Tensor[(2, 2), float32] */;\n"
      "  %4 = add(%3, meta[Constant][0]) /* Tensor[(2, 2), float32] */;\n"
      "  %5 = multiply(%4, %4) /* Tensor[(2, 2), float32] */;\n"
      "  %6 = (%2, %5) /* ((Tensor[(2, 2), float32]), Tensor[(2, 2), float32]) */;\n"
      "  %6\n"
      "}\n"
      "\n"
      "#[metadata]\n"
      "Constant[0] = Tensor[(2, 2), float32] [1, 2.5, -3, 4]\n");
  free(text);
}

/* Without inferred types: no comments, no return type. */
static void test_golden_without_types(void **state) {
  (void)state;
  kiln_module_t *m = new_module();
  kiln_var_t *x = var(m, "x", NULL);
  add_fn(m, "main", 1, &x, CALL(m, "nn.relu", "", E(x)));
  kiln_var_t *y = var(m, "y", f32(m, 0, NULL));
  add_fn(m, "identity", 1, &y, E(y));
  char *text = print_text(m, false);
  assert_string_equal(text, "def @main(%x) {\n"
                            "  %0 = nn.relu(%x);\n"
                            "  %0\n"
                            "}\n"
                            "\n"
                            "def @identity(%y: Tensor[(), float32]) {\n"
                            "  %y\n"
                            "}\n");
  /* The parser infers types, and a parameter without one is an error at it. */
  KILN_ASSERT_STATUS(parse_status(text), INVALID_ARGUMENT,
                     "t.txt:1:11: in @main, %x: the parameter has no type annotation");
  free(text);
  kiln_module_destroy(m);
}

/* ---- every attribute kind, nodes, functions ---- */

static void test_every_attribute_kind(void **state) {
  (void)state;
  kiln_module_t *m = new_module();
  kiln_var_t *x = var(m, "x", f32(m, 4, SHAPE(1, 4, 8, 8)));
  kiln_var_t *w = var(m, "w", f32(m, 4, SHAPE(4, 4, 3, 3)));
  kiln_var_t *v = var(m, "v", f32(m, 1, SHAPE(4)));
  kiln_expr_t *conv = CALL(m, "nn.conv2d", "padding=[1, 1, 1, 1];kernel_size=[3, 3]", E(x), E(w));
  kiln_expr_t *bn =
      CALL(m, "nn.batch_norm", "epsilon=0.001;center=False", conv, E(v), E(v), E(v), E(v));
  kiln_expr_t *pool =
      CALL(m, "nn.avg_pool2d", "pool_size=[2, 2];strides=[2, 2];count_include_pad=True", bn);
  kiln_expr_t *resized = CALL(m, "image.resize2d", "size=[6, 6];method=\"nearest_neighbor\"", pool);
  kiln_expr_t *leaky = CALL(m, "nn.leaky_relu", "alpha=0.25", resized);
  kiln_expr_t *soft = CALL(m, "nn.softmax", "axis=1", leaky);
  kiln_expr_t *flat = CALL(m, "reshape", "newshape=[1, -1]", soft);
  kiln_expr_t *cast = CALL(m, "cast", "dtype=\"int32\"", flat);
  kiln_expr_t *clipped = CALL(m, "clip", "a_min=-inf;a_max=6", leaky);
  kiln_expr_t *t = CALL(m, "transpose", "axes=[0, 2, 3, 1]", clipped);
  add_fn(m, "main", 3, (kiln_var_t *[]){x, w, v}, tuple(m, 2, NODES(cast, t)));
  char *text = round_trip(m, false);
  assert_contains(text, "nn.conv2d(%x, %w, padding=[1, 1, 1, 1], kernel_size=[3, 3]) ");
  assert_contains(text, "nn.batch_norm(%0, %v, %v, %v, %v, epsilon=0.001, center=False) ");
  assert_contains(text, "count_include_pad=True) ");
  assert_contains(text, "image.resize2d(%2, size=[6, 6], method=\"nearest_neighbor\") ");
  assert_contains(text, "nn.leaky_relu(%3, alpha=0.25) ");
  assert_contains(text, "nn.softmax(%4, axis=1) ");
  assert_contains(text, "reshape(%5, newshape=[1, -1]) ");
  assert_contains(text, "cast(%6, dtype=\"int32\") /* Tensor[(1, 144), int32] */");
  assert_contains(text, "clip(%4, a_min=-inf, a_max=6) ");
  assert_contains(text, "transpose(%8, axes=[0, 2, 3, 1]) ");
  free(text);
}

/* FLOATS: no registered operator has such a field, so a test operator checks
 * the two attrs.c functions the printer uses. */
typedef struct scales_attrs_t {
  kiln_floats_t scales;
  double gain;
} scales_attrs_t;

static const kiln_attr_field_t scales_fields[] = {
    KILN_ATTR_FIELD(scales_attrs_t, scales, FLOATS, "[2.0, 2.0]"),
    KILN_ATTR_FIELD(scales_attrs_t, gain, FLOAT, "1e-5"),
};

static const kiln_op_t scales_op = {
    .name = "test.scales",
    .min_inputs = 1,
    .max_inputs = 1,
    .attrs_size = sizeof(scales_attrs_t),
    .num_attr_fields = 2,
    .attr_fields = scales_fields,
};

static bool field_is_default(const void *attrs, int field) {
  bool is_default = false;
  KILN_ASSERT_OK(kiln_op_attrs_field_is_default(&scales_op, attrs, &scales_fields[field],
                                                kiln_allocator_system(), &is_default));
  return is_default;
}

static void test_attribute_field_helpers(void **state) {
  (void)state;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  void *attrs = NULL;
  KILN_ASSERT_OK(kiln_op_attrs_create_default(&scales_op, &arena, &attrs));
  assert_true(field_is_default(attrs, 0)); /* [2, 2] reads as the default [2.0, 2.0] */
  assert_true(field_is_default(attrs, 1)); /* 1e-05 as the default 1e-5 */
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&scales_op, attrs, "scales", "[1.5, 2]", &arena));
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&scales_op, attrs, "gain", "0.5", &arena));
  assert_false(field_is_default(attrs, 0));
  assert_false(field_is_default(attrs, 1));
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_op_attrs_format_field(&scales_op, attrs, &scales_fields[0], &sb));
  KILN_ASSERT_OK(kiln_strbuf_append(&sb, " "));
  KILN_ASSERT_OK(kiln_op_attrs_format_field(&scales_op, attrs, &scales_fields[1], &sb));
  assert_string_equal(kiln_strbuf_c_str(&sb), "[1.5, 2] 0.5");
  kiln_strbuf_deinitialize(&sb);
  /* A broken default is an error naming the operator and the field. */
  static const kiln_attr_field_t bad_field = KILN_ATTR_FIELD(scales_attrs_t, gain, FLOAT, "x");
  bool is_default = false;
  KILN_ASSERT_STATUS(kiln_op_attrs_field_is_default(&scales_op, attrs, &bad_field,
                                                    kiln_allocator_system(), &is_default),
                     INVALID_ARGUMENT, "test.scales attribute gain: expected a number");
  kiln_arena_deinitialize(&arena);
}

/* Two functions; nested primitive functions, one called twice, one inside
 * another; a function with no parameters; bodies that are a Var, a Constant
 * and an empty tuple. */
static void test_functions_nested_and_shared(void **state) {
  (void)state;
  kiln_module_t *m = new_module();
  const kiln_type_t *t = f32(m, 1, SHAPE(3));
  kiln_var_t *q = var(m, "q", t);
  kiln_function_t *inner = fn(m, 1, &q, CALL(m, "exp", "", E(q)));
  inner->primitive = true;
  kiln_var_t *p = var(m, "p", t);
  kiln_expr_t *twice = call_fn(m, inner, 1, NODES(call_fn(m, inner, 1, NODES(E(p)))));
  kiln_function_t *outer = fn(m, 1, &p, CALL(m, "negative", "", twice));
  outer->primitive = true;
  const float three[] = {1, 2, 3};
  kiln_function_t *maker = fn(m, 0, NULL, constant(m, KILN_DTYPE_FLOAT32, 1, SHAPE(3), three));
  maker->primitive = true;
  kiln_var_t *x = var(m, "x", t);
  kiln_expr_t *a = call_fn(m, outer, 1, NODES(E(x)));
  kiln_expr_t *b = call_fn(m, outer, 1, NODES(a));
  kiln_expr_t *c = call_fn(m, maker, 0, NULL);
  add_fn(m, "main", 1, &x, CALL(m, "add", "", b, c));
  kiln_var_t *y = var(m, "y", t);
  add_fn(m, "second", 1, &y, E(y));
  kiln_var_t *z = var(m, "z", t);
  add_fn(m, "third", 1, &z, constant(m, KILN_DTYPE_FLOAT32, 1, SHAPE(3), three));
  add_fn(m, "fourth", 0, NULL, tuple(m, 0, NULL));
  char *text = round_trip(m, true);
  const char *expected_main =
      "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
      "  %5 = fn (%p: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {\n"
      "    %1 = fn (%q: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {\n"
      "      %0 = exp(%q) /* Tensor[(3), float32] */;\n"
      "      %0\n"
      "    };\n"
      "    %2 = %1(%p) /* Tensor[(3), float32] */;\n"
      "    %3 = %1(%2) /* Tensor[(3), float32] */;\n"
      "    %4 = negative(%3) /* Tensor[(3), float32] */;\n"
      "    %4\n"
      "  };\n"
      "  %6 = %5(%x) /* Tensor[(3), float32] */;\n"
      "  %7 = %5(%6) /* Tensor[(3), float32] */;\n"
      "  %8 = fn (Primitive=1) -> Tensor[(3), float32] {\n"
      "    meta[Constant][0]\n"
      "  };\n"
      "  %9 = %8() /* Tensor[(3), float32] */;\n"
      "  %10 = add(%7, %9) /* Tensor[(3), float32] */;\n"
      "  %10\n"
      "}\n\n";
  assert_memory_equal(text, expected_main, strlen(expected_main));
  assert_contains(text, "def @second(%y: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                        "  %y\n}\n");
  assert_contains(text, "def @third(%z: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                        "  meta[Constant][1]\n}\n");
  assert_contains(text, "def @fourth() -> () {\n  %0 = () /* () */;\n  %0\n}\n");
  assert_contains(text, "Constant[1] = Tensor[(3), float32] [1, 2, 3]\n");
  free(text);
}

/* Names: repeated, numeric, with bad characters, shadowing a nested one;
 * TupleGetItem of a Var; a function name with a bad character. */
static void test_names_are_disambiguated(void **state) {
  (void)state;
  kiln_module_t *m = new_module();
  const kiln_type_t *t = f32(m, 1, SHAPE(2));
  const kiln_type_t *pair_type = NULL;
  KILN_ASSERT_OK(
      kiln_tuple_type_create(kiln_module_arena(m), 2, (const kiln_type_t *[]){t, t}, &pair_type));
  kiln_var_t *x1 = var(m, "x", t);
  kiln_var_t *x2 = var(m, "x", t);
  kiln_var_t *zero = var(m, "0", t);
  kiln_var_t *dashed = var(m, "a-b", t);
  kiln_var_t *dotted = var(m, "input.1", pair_type);
  kiln_var_t *inner_x = var(m, "x", t);
  kiln_function_t *inner = fn(m, 1, &inner_x, CALL(m, "sigmoid", "", E(inner_x)));
  kiln_expr_t *s1 = CALL(m, "add", "", E(x1), E(x2));
  kiln_expr_t *s2 = CALL(m, "add", "", E(zero), E(dashed));
  kiln_expr_t *s3 = CALL(m, "add", "", s1, get_item(m, E(dotted), 1));
  kiln_expr_t *s4 = call_fn(m, inner, 1, NODES(CALL(m, "add", "", s2, s3)));
  add_fn(m, "fused-main", 5, (kiln_var_t *[]){x1, x2, zero, dashed, dotted}, s4);
  kiln_var_t *other = var(m, "x", t);
  add_fn(m, "fused_main", 1, &other, E(other));
  char *text = round_trip(m, false);
  assert_contains(text,
                  "def @fused_main(%x: Tensor[(2), float32], %x_1: Tensor[(2), float32], "
                  "%_0: Tensor[(2), float32], %a_b: Tensor[(2), float32], %input.1: "
                  "(Tensor[(2), float32], Tensor[(2), float32])) -> Tensor[(2), float32] {\n");
  /* The callee comes first in the order, so the fn is %1. */
  assert_contains(text, "  %2 = add(%_0, %a_b) ");
  assert_contains(text, "  %3 = add(%x, %x_1) ");
  assert_contains(text, "  %4 = (%input.1).1 ");
  assert_contains(text, "  %7 = %1(%6) ");
  assert_contains(text, "  %1 = fn (%x_2: Tensor[(2), float32]) -> Tensor[(2), float32] {\n"
                        "    %0 = sigmoid(%x_2) ");
  /* The second function's name is taken by the first's cleaned-up name. */
  assert_contains(text, "def @fused_main_1(%x: Tensor[(2), float32])");
  free(text);
}

/* A constant-only node used both by a fn's body and next to it: the fn block
 * takes it in (%N names are per def, so the later use still sees it). */
static void test_node_shared_by_fn_and_caller(void **state) {
  (void)state;
  kiln_module_t *m = new_module();
  const float two[] = {1, -1};
  kiln_expr_t *shared = CALL(m, "nn.relu", "", constant(m, KILN_DTYPE_FLOAT32, 1, SHAPE(2), two));
  kiln_var_t *p = var(m, "p", f32(m, 1, SHAPE(2)));
  kiln_function_t *f = fn(m, 1, &p, CALL(m, "add", "", E(p), shared));
  kiln_var_t *x = var(m, "x", f32(m, 1, SHAPE(2)));
  add_fn(m, "main", 1, &x, tuple(m, 2, NODES(shared, call_fn(m, f, 1, NODES(E(x))))));
  char *text = round_trip(m, true);
  assert_string_equal(text,
                      "def @main(%x: Tensor[(2), float32]) -> (Tensor[(2), float32], Tensor[(2), "
                      "float32]) {\n"
                      "  %2 = fn (%p: Tensor[(2), float32]) -> Tensor[(2), float32] {\n"
                      "    %0 = nn.relu(meta[Constant][0]) /* Tensor[(2), float32] */;\n"
                      "    %1 = add(%p, %0) /* Tensor[(2), float32] */;\n"
                      "    %1\n"
                      "  };\n"
                      "  %3 = %2(%x) /* Tensor[(2), float32] */;\n"
                      "  %4 = (%0, %3) /* (Tensor[(2), float32], Tensor[(2), float32]) */;\n"
                      "  %4\n"
                      "}\n"
                      "\n"
                      "#[metadata]\n"
                      "Constant[0] = Tensor[(2), float32] [1, -1]\n");
  free(text);
}

/* A chain of 20000 nodes: printing and parsing are loops, not recursions. */
static void test_long_chain(void **state) {
  (void)state;
  kiln_module_t *m = new_module();
  kiln_var_t *x = var(m, "x", f32(m, 1, SHAPE(2)));
  kiln_expr_t *node = E(x);
  for (int i = 0; i < 20000; ++i) {
    node = CALL(m, i % 2 ? "negative" : "exp", "", node);
  }
  add_fn(m, "main", 1, &x, node);
  char *text = round_trip(m, false);
  assert_contains(text, "  %19999 = negative(%19998) /* Tensor[(2), float32] */;\n  %19999\n}\n");
  free(text);
}

/* ---- constants of every dtype ---- */

typedef struct dtype_case_t {
  kiln_dtype_t dtype;
  int64_t count;
  const void *data;
  const char *spelled; /* the values as printed */
} dtype_case_t;

static const float f32_values[] = {1,     2.5f,        -3,       0.1f,  1e-45f,    FLT_MAX,
                                   -0.0f, 3.14159274f, 16777216, 1e10f, 0.3333333f};
static const double f64_values[] = {0.1, 1e308, 5e-324, -2.5, 1.0 / 3.0};
static const uint16_t f16_values[] = {0x3c00, 0x3555, 0x0001, 0x7bff, 0xfc00, 0x8000};
static const uint16_t bf16_values[] = {0x3f80, 0x3eab, 0x0001, 0x7f80};
static const int8_t i8_values[] = {-128, 127, 0};
static const int16_t i16_values[] = {-32768, 32767};
static const int32_t i32_values[] = {INT32_MIN, INT32_MAX, 7};
static const int64_t i64_values[] = {INT64_MIN, INT64_MAX, -1};
static const uint8_t u8_values[] = {0, 255};
static const uint16_t u16_values[] = {65535};
static const uint32_t u32_values[] = {4294967295u};
static const uint64_t u64_values[] = {UINT64_MAX, 0};
static const uint8_t bool_values[] = {0, 1, 1};

static const dtype_case_t dtype_cases[] = {
    {KILN_DTYPE_FLOAT32, 11, f32_values,
     "[1, 2.5, -3, 0.1, 1e-45, 3.4028235e+38, -0, 3.1415927, 16777216, 1e+10, 0.3333333]"},
    {KILN_DTYPE_FLOAT64, 5, f64_values, "[0.1, 1e+308, 5e-324, -2.5, 0.3333333333333333]"},
    {KILN_DTYPE_FLOAT16, 6, f16_values, "[1, 0.3333, 6e-08, 6.55e+04, -inf, -0]"},
    {KILN_DTYPE_BFLOAT16, 4, bf16_values, "[1, 0.334, 9e-41, inf]"},
    {KILN_DTYPE_INT8, 3, i8_values, "[-128, 127, 0]"},
    {KILN_DTYPE_INT16, 2, i16_values, "[-32768, 32767]"},
    {KILN_DTYPE_INT32, 3, i32_values, "[-2147483648, 2147483647, 7]"},
    {KILN_DTYPE_INT64, 3, i64_values, "[-9223372036854775808, 9223372036854775807, -1]"},
    {KILN_DTYPE_UINT8, 2, u8_values, "[0, 255]"},
    {KILN_DTYPE_UINT16, 1, u16_values, "[65535]"},
    {KILN_DTYPE_UINT32, 1, u32_values, "[4294967295]"},
    {KILN_DTYPE_UINT64, 2, u64_values, "[18446744073709551615, 0]"},
    {KILN_DTYPE_BOOL, 3, bool_values, "[0, 1, 1]"},
};

#define DTYPE_CASES ((int)(sizeof(dtype_cases) / sizeof(dtype_cases[0])))

static void test_constants_of_every_dtype(void **state) {
  (void)state;
  kiln_module_t *m = new_module();
  kiln_expr_t *fields[DTYPE_CASES + 2];
  for (int i = 0; i < DTYPE_CASES; ++i) {
    const dtype_case_t *c = &dtype_cases[i];
    fields[i] = constant(m, c->dtype, 1, &c->count, c->data);
  }
  const float scalar = 0.5f;
  fields[DTYPE_CASES] = constant(m, KILN_DTYPE_FLOAT32, 0, NULL, &scalar);
  fields[DTYPE_CASES + 1] = constant(m, KILN_DTYPE_INT32, 2, SHAPE(0, 3), NULL);
  add_fn(m, "main", 0, NULL, tuple(m, DTYPE_CASES + 2, fields));
  char *text = round_trip(m, true);
  char line[512];
  for (int i = 0; i < DTYPE_CASES; ++i) {
    const dtype_case_t *c = &dtype_cases[i];
    snprintf(line, sizeof(line), "Constant[%d] = Tensor[(%lld), %s] %s\n", i, (long long)c->count,
             kiln_dtype_name(c->dtype), c->spelled);
    assert_contains(text, line);
  }
  assert_contains(text, "Constant[13] = Tensor[(), float32] [0.5]\n");
  assert_contains(text, "Constant[14] = Tensor[(0, 3), int32] []\n");
  /* The values read back bit for bit. */
  kiln_module_t *parsed = parse_text(text);
  kiln_tuple_t *body = kiln_expr_as_tuple(kiln_module_get_function(parsed, "main")->body);
  for (int i = 0; i < DTYPE_CASES; ++i) {
    const kiln_tensor_t *value = kiln_expr_as_constant(body->fields[i])->value;
    assert_int_equal(kiln_tensor_dtype(value), dtype_cases[i].dtype);
    assert_memory_equal(kiln_tensor_data(value), dtype_cases[i].data, kiln_tensor_byte_size(value));
  }
  kiln_module_destroy(parsed);
  free(text);
}

static void test_nan_and_infinities(void **state) {
  (void)state;
  kiln_module_t *m = new_module();
  const float f[] = {NAN, INFINITY, -INFINITY};
  const double d[] = {-NAN, INFINITY};
  kiln_expr_t *a = constant(m, KILN_DTYPE_FLOAT32, 1, SHAPE(3), f);
  kiln_expr_t *b = constant(m, KILN_DTYPE_FLOAT64, 1, SHAPE(2), d);
  add_fn(m, "main", 0, NULL, tuple(m, 2, NODES(a, b)));
  char *text = round_trip(m, true);
  assert_contains(text, "Constant[0] = Tensor[(3), float32] [nan, inf, -inf]\n");
  assert_contains(text, "Constant[1] = Tensor[(2), float64] [nan, inf]\n");
  kiln_module_t *parsed = parse_text(text);
  kiln_tuple_t *body = kiln_expr_as_tuple(kiln_module_get_function(parsed, "main")->body);
  const float *back = kiln_tensor_data(kiln_expr_as_constant(body->fields[0])->value);
  assert_true(isnan(back[0]));
  assert_true(isinf(back[1]) && back[1] > 0);
  assert_true(isinf(back[2]) && back[2] < 0);
  kiln_module_destroy(parsed);
  free(text);
}

/* ---- parsing what a person writes ---- */

static void test_parser_accepts_hand_written_text(void **state) {
  (void)state;
  const char *text = "// a comment line\n"
                     "def @main(%a: Tensor[(2,), float32], %b: Tensor[(2), float32]) {\n"
                     "  %10 = add(%a, /* inline */ %b);\n"
                     "  %11 = (%10, (nn.relu(%a)), )  ;\n"
                     "  %12 = %11.1;\n"
                     "  %13 = %12;    // an alias\n"
                     "  %7 = strided_slice(%13, begin=[0], end=[\n  1\n], strides=[1]);\n"
                     "  %7\n"
                     "}\n";
  kiln_module_t *m = parse_text(text);
  char *printed = print_text(m, false);
  assert_string_equal(printed,
                      "def @main(%a: Tensor[(2), float32], %b: Tensor[(2), float32]) -> "
                      "Tensor[(1), float32] {\n"
                      "  %0 = add(%a, %b) /* Tensor[(2), float32] */;\n"
                      "  %1 = nn.relu(%a) /* Tensor[(2), float32] */;\n"
                      "  %2 = (%0, %1) /* (Tensor[(2), float32], Tensor[(2), float32]) */;\n"
                      "  %3 = %2.1 /* Tensor[(2), float32] */;\n"
                      "  %4 = strided_slice(%3, begin=[0], end=[1], strides=[1]) "
                      "/* Tensor[(1), float32] */;\n"
                      "  %4\n"
                      "}\n");
  free(printed);
  kiln_module_destroy(m);
  /* An empty text is an empty module. */
  m = parse_text("  // nothing\n");
  assert_int_equal(kiln_module_function_count(m), 0);
  kiln_module_destroy(m);
}

typedef struct error_case_t {
  const char *text;
  const char *message;
} error_case_t;

#define HEAD "def @main(%x: Tensor[(1, 4), float32]) {\n"

static const error_case_t error_cases[] = {
    {HEAD "  %0 = nn.conv4d(%x);\n  %0\n}\n", "t.txt:2:8: unknown operator \"nn.conv4d\""},
    {HEAD "  %0 = add(%x, %y);\n  %0\n}\n",
     "t.txt:2:16: undefined %y: not a parameter of @main or of an enclosing fn"},
    {HEAD "  %0 = add(%x, %5);\n  %0\n}\n", "t.txt:2:16: %5 is used before it is defined"},
    {HEAD "  %0 = nn.relu(%x);\n  %0 = nn.relu(%0);\n  %0\n}\n",
     "t.txt:3:3: duplicate definition of %0 (first defined at 2:3)"},
    {HEAD "  %x\n}\n" HEAD "  %x\n}\n", "t.txt:4:5: duplicate definition of @main"},
    {"def @main(%x: Tensor[(1), float32], %x: Tensor[(1), float32]) {\n  %x\n}\n",
     "t.txt:1:37: duplicate parameter %x"},
    {HEAD "  %0 = nn.softmax(%x, axes=1);\n  %0\n}\n",
     "t.txt:2:23: nn.softmax has no attribute 'axes' (its attributes: axis)"},
    {HEAD "  %0 = nn.relu(%x, alpha=1);\n  %0\n}\n",
     "t.txt:2:20: nn.relu has no attributes (found alpha=)"},
    {HEAD "  %0 = nn.softmax(%x, axis=\"a\");\n  %0\n}\n",
     "t.txt:2:28: nn.softmax attribute axis=\"a\": expected an integer"},
    {HEAD "  %0 = nn.softmax(%x, axis=1, axis=2);\n  %0\n}\n",
     "t.txt:2:31: attribute axis of nn.softmax is given twice"},
    {HEAD "  %0 = nn.softmax(axis=1, %x);\n  %0\n}\n",
     "t.txt:2:27: an argument of nn.softmax comes after its attributes"},
    {HEAD "  %0 = nn.softmax(%x, axis=[1);\n  %0\n}\n",
     "t.txt:2:30: expected ',' or ']' in a list value, found ')'"},
    {HEAD "  %0 = nn.max_pool2d(%x, layout=\"XY\");\n  %0\n}\n", "t.txt:2:8: nn.max_pool2d"},
    {HEAD "  %0 = add(%x);\n  %0\n}\n", "t.txt:2:8: add takes 2 arguments, got 1"},
    {HEAD "  %0 = concatenate();\n  %0\n}\n",
     "t.txt:2:8: concatenate takes at least 1 argument, got 0"},
    {HEAD "  %0 = nn.relu(%x %x);\n  %0\n}\n",
     "t.txt:2:19: expected ')' after arguments of nn.relu, found %x"},
    {"def @main(%x: Tensor[1, 4]) {\n  %x\n}\n",
     "t.txt:1:22: expected '(' before the dimensions of Tensor, found number 1"},
    {"def @main(%x: Tensor[(1, 4), flaot32]) {\n  %x\n}\n",
     "t.txt:1:30: unknown dtype \"flaot32\""},
    {"def @main(%x: Tensor[(1, -4), float32]) {\n  %x\n}\n",
     "t.txt:1:26: a dimension cannot be negative"},
    {"def @main(%x: Tensor[(1, 2.5), float32]) {\n  %x\n}\n",
     "t.txt:1:26: expected a dimension (an integer), found number 2.5"},
    {"def @main(%x: Tensor[(99999999999999999999), float32]) {\n  %x\n}\n",
     "t.txt:1:23: a dimension 99999999999999999999 is too large"},
    {"def @main(%x: Tensor[(4611686018427387904, 4), float32]) {\n  %x\n}\n",
     "t.txt:1:15: tensor type"},
    {"def @main(%x: Float[(1), float32]) {\n  %x\n}\n",
     "t.txt:1:15: expected a type (Tensor[...], Sequence[...], Optional[...] or a tuple of types), "
     "found identifier Float"},
    {HEAD "  %0 = nn.relu(%x);\n  %0\n}\nfoo\n", "t.txt:5:1: expected def or #[metadata], found "
                                                 "identifier foo"},
    {HEAD "  %x\n}\n/* not closed\n", "t.txt:4:1: unterminated comment"},
    {HEAD "  %0 = nn.pad(%x, pad_mode=\"edge);\n  %0\n}\n", "t.txt:2:28: unterminated string"},
    {HEAD "  %0 = nn.relu($x);\n  %0\n}\n", "t.txt:2:16: unexpected character '$'"},
    {HEAD "  %0 = nn.relu(%1x);\n  %0\n}\n", "t.txt:2:16: bad name %1x"},
    {HEAD "  %0 = nn.relu(%x) \xc3\xa9;\n  %0\n}\n", "t.txt:2:20: unexpected byte 0xc3"},
    {HEAD "  %0 = nn.relu(%x);\n  %1 = %0(%x);\n  %1\n}\n",
     "t.txt:3:10: only a fn can be called, and this is a Call"},
    {HEAD "  %0 = fn (%p: Tensor[(1, 4), float32]) { %p };\n  %1 = %0(%x, %x);\n  %1\n}\n",
     "t.txt:3:8: call of a function of 1 parameters with 2 arguments"},
    {HEAD "  %0 = nn.relu(%x)\n  %0\n}\n",
     "t.txt:3:3: expected ';' after the definition of %0, found %0"},
    {HEAD "  %0 = nn.relu(%x);\n", "t.txt:3:1: expected an expression, found end of input"},
    {HEAD "  %0 = add(%x, meta[Constant][0]);\n  %0\n}\n",
     "t.txt:2:16: meta[Constant][0] needs the #[metadata] section"},
    {HEAD "  %0 = add(%x, meta[Constant][1]);\n  %0\n}\n#[metadata]\n"
          "Constant[0] = Tensor[(4), float32] [1, 2, 3, 4]\n",
     "t.txt:2:16: meta[Constant][1] is not in the metadata section, which has 1 constant"},
    {HEAD "  %x\n}\n#[metadata]\nConstant[0] = Tensor[(2, 2), float32] [1, 2, 3]\n",
     "t.txt:5:47: Constant[0] has 4 elements but 3 values are given"},
    {HEAD "  %x\n}\n#[metadata]\nConstant[0] = Tensor[(2), float32] [1, 2, 3]\n",
     "t.txt:5:43: Constant[0] has 2 elements but more values are given"},
    {HEAD "  %x\n}\n#[metadata]\nConstant[1] = Tensor[(1), float32] [1]\n",
     "t.txt:5:10: expected Constant[0], found Constant[1]"},
    {HEAD "  %x\n}\n#[metadata]\nConstant[0] = Tensor[(1000000), float32] [1]\n",
     "t.txt:5:15: Constant[0] declares 1000000 elements, more than the rest of the text can hold"},
    {HEAD "  %x\n}\n#[metadata]\nConstant[0] = Tensor[(2), int8] [1, 200]\n",
     "t.txt:5:37: 200 is out of the range of int8"},
    {HEAD "  %x\n}\n#[metadata]\nConstant[0] = Tensor[(2), uint8] [1, -2]\n",
     "t.txt:5:38: -2 is out of the range of uint8"},
    {HEAD "  %x\n}\n#[metadata]\nConstant[0] = Tensor[(1), int32] [2.5]\n",
     "t.txt:5:35: '2.5' is not a int32 value (an integer)"},
    {HEAD "  %x\n}\n#[metadata]\nConstant[0] = Tensor[(1), bool] [2]\n",
     "t.txt:5:34: '2' is not a bool value (0 or 1)"},
    {HEAD "  %x\n}\n#[metadata]\nConstant[0] = Tensor[(1), float32] [infinity]\n",
     "t.txt:5:37: 'infinity' is not a float32 value"},
    {HEAD "  %x\n}\n#[metadata]\nConstant[0] = (Tensor[(1), float32]) [1]\n",
     "t.txt:5:15: Constant[0] must have a tensor type"},
    {HEAD "  %x\n}\n#[metadata]\nConstant[0] = Tensor[(1), float32] [1]\n#[metadata]\n",
     "t.txt:6:1: expected Constant[1] in the metadata, found #[metadata]"},
    /* Errors found by type inference, at the failing node. */
    {"def @main(%x: Tensor[(1, 4), float32], %y: Tensor[(3), float32]) {\n"
     "  %0 = nn.relu(%x);\n  %1 = add(%0, %y);\n  %1\n}\n",
     "t.txt:3:8: in @main, %1 = add: add: "},
    {HEAD "  %0 = (%x, %x);\n  %1 = %0.2;\n  %1\n}\n",
     "t.txt:3:8: in @main, %1 = TupleGetItem: index 2 is out of range for a tuple of 2 fields"},
    {"def @main(%x: Tensor[(1, 4), float32]) -> Tensor[(4), float32] {\n  %x\n}\n",
     "t.txt:1:43: @main declares the return type Tensor[(4), float32], but its body has type "
     "Tensor[(1, 4), float32]"},
    {HEAD "  %0 = fn (%p: Tensor[(1, 4), float32]) -> Tensor[(4), float32] { %p };\n"
          "  %1 = %0(%x);\n  %1\n}\n",
     "t.txt:2:44: a fn in @main declares the return type Tensor[(4), float32]"},
};

static void test_parse_errors_name_line_and_column(void **state) {
  (void)state;
  int64_t statuses = kiln_status_live_count();
  int failures = 0;
  for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); ++i) {
    kiln_status_t status = parse_status(error_cases[i].text);
    if (status == KILN_OK || strstr(kiln_status_message(status), error_cases[i].message) == NULL) {
      fprintf(stderr, "case %zu: expected \"%s\", got \"%s\"\n", i, error_cases[i].message,
              kiln_status_message(status));
      failures++;
    } else {
      assert_int_equal(kiln_status_code(status), KILN_STATUS_CODE_INVALID_ARGUMENT);
    }
    kiln_status_free(status);
  }
  assert_int_equal(failures, 0);
  assert_int_equal(kiln_status_live_count(), statuses);
}

static void test_nesting_is_limited(void **state) {
  (void)state;
  char text[4096];
  size_t n = (size_t)snprintf(text, sizeof(text), "%s  %%0 = ", HEAD);
  for (int i = 0; i < 100; ++i) {
    text[n++] = '(';
  }
  text[n++] = '%';
  text[n++] = 'x';
  for (int i = 0; i < 100; ++i) {
    text[n++] = ')';
  }
  snprintf(text + n, sizeof(text) - n, ";\n  %%0\n}\n");
  KILN_ASSERT_STATUS(parse_status(text), INVALID_ARGUMENT, "t.txt:2:71: nesting deeper than 64");
  /* 60 levels are fine: (((%x))) is %x. */
  n = (size_t)snprintf(text, sizeof(text), "%s  %%0 = ", HEAD);
  for (int i = 0; i < 60; ++i) {
    text[n++] = '(';
  }
  n += (size_t)snprintf(text + n, sizeof(text) - n, "%%x");
  for (int i = 0; i < 60; ++i) {
    text[n++] = ')';
  }
  snprintf(text + n, sizeof(text) - n, ";\n  %%0\n}\n");
  kiln_module_destroy(parse_text(text));
  /* Nested tuple types too. */
  n = (size_t)snprintf(text, sizeof(text), "def @main(%%x: ");
  for (int i = 0; i < 80; ++i) {
    text[n++] = '(';
  }
  snprintf(text + n, sizeof(text) - n, ") {\n  %%x\n}\n");
  KILN_ASSERT_STATUS(parse_status(text), INVALID_ARGUMENT, "t.txt:1:78: nesting deeper than 64");
}

/* ---- robustness ---- */

static uint64_t next_random(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

/* Parses `text`; a module must print, and its printed text parse again. */
static bool parse_survives(const char *text) {
  kiln_module_t *m = NULL;
  kiln_status_t status = kiln_ir_parse_module("fuzz", text, kiln_allocator_system(), &m);
  if (status != KILN_OK) {
    assert_int_equal(kiln_status_code(status), KILN_STATUS_CODE_INVALID_ARGUMENT);
    kiln_status_free(status);
    return false;
  }
  char *printed = print_text(m, true);
  kiln_module_destroy(m);
  m = NULL;
  status = kiln_ir_parse_module("fuzz", printed, kiln_allocator_system(), &m);
  if (status == KILN_OK) {
    char *again = print_text(m, true);
    assert_string_equal(again, printed);
    free(again);
  }
  kiln_status_free(status);
  kiln_module_destroy(m);
  free(printed);
  return true;
}

static char *fuzz_seed_text(void) {
  kiln_module_t *m = primitive_module();
  kiln_var_t *x = var(m, "x", f32(m, 2, SHAPE(2, 6)));
  const int32_t ints[] = {1, -2, 3};
  const float floats[] = {0.5f, -1};
  kiln_expr_t *parts = CALL(m, "split", "sections=3;axis=1", E(x));
  kiln_expr_t *k = constant(m, KILN_DTYPE_FLOAT32, 1, SHAPE(2), floats);
  kiln_expr_t *ki = constant(m, KILN_DTYPE_INT32, 1, SHAPE(3), ints);
  kiln_expr_t *sum = CALL(m, "nn.softmax", "axis=0", CALL(m, "add", "", get_item(m, parts, 1), k));
  add_fn(m, "second", 1, &x, tuple(m, 2, NODES(sum, ki)));
  return round_trip(m, true);
}

static void test_truncated_and_mutated_texts(void **state) {
  (void)state;
  int64_t statuses = kiln_status_live_count();
  char *seed = fuzz_seed_text();
  size_t length = strlen(seed);
  char *text = malloc(length + 1);
  assert_non_null(text);
  int parsed = 0;
  for (size_t cut = 0; cut <= length; ++cut) {
    memcpy(text, seed, cut);
    text[cut] = '\0';
    parsed += parse_survives(text);
  }
  assert_true(parsed >= 2); /* the empty text and the whole one, at least */
  static const char interesting[] = "%@#()[]{},;:=.-\"/*0123456789 \nfnmetaTensor";
  uint64_t random = 0x9E3779B97F4A7C15u;
  int mutants_parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    memcpy(text, seed, length + 1);
    size_t at = (size_t)(next_random(&random) % length);
    uint64_t pick = next_random(&random);
    char byte = (pick & 1) ? interesting[(pick >> 1) % (sizeof(interesting) - 1)]
                           : (char)(1 + (pick >> 1) % 255);
    text[at] = byte;
    mutants_parsed += parse_survives(text);
  }
  /* Some mutations keep the text valid (a digit in a value), most do not. */
  assert_true(mutants_parsed > 30);
  assert_true(mutants_parsed < 2970);
  free(text);
  free(seed);
  assert_int_equal(kiln_status_live_count(), statuses);
}

/* ---- allocation failures ---- */

static char *sweep_expected;

static kiln_status_t print_scenario(kiln_allocator_t allocator, void *context) {
  const kiln_module_t *m = context;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, allocator);
  kiln_ir_print_options_t options = {.include_metadata = true};
  kiln_status_t status = kiln_ir_print_module(m, &options, &sb);
  if (status == KILN_OK) {
    assert_string_equal(kiln_strbuf_c_str(&sb), sweep_expected);
  }
  kiln_strbuf_deinitialize(&sb);
  return status;
}

static kiln_status_t parse_scenario(kiln_allocator_t allocator, void *context) {
  const char *text = context;
  kiln_module_t *m = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_parse_module("sweep", text, allocator, &m));
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, allocator);
  kiln_ir_print_options_t options = {.include_metadata = true};
  kiln_status_t status = kiln_ir_print_module(m, &options, &sb);
  if (status == KILN_OK) {
    assert_string_equal(kiln_strbuf_c_str(&sb), text);
  }
  kiln_strbuf_deinitialize(&sb);
  kiln_module_destroy(m);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  sweep_expected = fuzz_seed_text();
  kiln_module_t *m = parse_text(sweep_expected);
  assert_true(kiln_test_sweep_allocation_failures(print_scenario, m) > 10);
  kiln_module_destroy(m);
  assert_true(kiln_test_sweep_allocation_failures(parse_scenario, sweep_expected) > 10);
  free(sweep_expected);
  sweep_expected = NULL;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_golden_conv_relu),
      cmocka_unit_test(test_golden_primitive_function),
      cmocka_unit_test(test_golden_tuples_and_metadata),
      cmocka_unit_test(test_golden_without_types),
      cmocka_unit_test(test_every_attribute_kind),
      cmocka_unit_test(test_attribute_field_helpers),
      cmocka_unit_test(test_functions_nested_and_shared),
      cmocka_unit_test(test_names_are_disambiguated),
      cmocka_unit_test(test_node_shared_by_fn_and_caller),
      cmocka_unit_test(test_long_chain),
      cmocka_unit_test(test_constants_of_every_dtype),
      cmocka_unit_test(test_nan_and_infinities),
      cmocka_unit_test(test_parser_accepts_hand_written_text),
      cmocka_unit_test(test_parse_errors_name_line_and_column),
      cmocka_unit_test(test_nesting_is_limited),
      cmocka_unit_test(test_truncated_and_mutated_texts),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
