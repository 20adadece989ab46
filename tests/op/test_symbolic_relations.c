/*
 * Type relations over symbolic dims (op/symbolic.c): every relation a
 * transformer encoder needs, run on inputs with named and anonymous
 * symbolic dims, with the output type it must give (anonymous dims a
 * relation needs equal taken as equal); and the errors of the probe (a
 * relation that rejects the inputs reports the probe sizes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/expr.h"
#include "ir/text.h"
#include "kiln_test.h"

typedef struct relation_case_t {
  const char *params; /* the parameter list of @main */
  const char *body;   /* one call */
  const char *type;   /* the expected type of the call */
} relation_case_t;

static char *copy_text(const char *text) {
  size_t size = strlen(text) + 1;
  char *copy = malloc(size);
  assert_non_null(copy);
  memcpy(copy, text, size);
  return copy;
}

static const relation_case_t cases[] = {
    /* elementwise with broadcasting */
    {"%x: Tensor[(n, 384), float32], %y: Tensor[(384), float32]", "add(%x, %y)",
     "Tensor[(n, 384), float32]"},
    {"%x: Tensor[(n, 1), float32], %y: Tensor[(1, m), float32]", "multiply(%x, %y)",
     "Tensor[(n, m), float32]"},
    {"%x: Tensor[(b, n, 4), float32], %y: Tensor[(b, n, 4), float32]", "subtract(%x, %y)",
     "Tensor[(b, n, 4), float32]"},
    {"%x: Tensor[(?, 4), float32], %y: Tensor[(4), float32]", "divide(%x, %y)",
     "Tensor[(?, 4), float32]"},
    {"%x: Tensor[(n, 4), float32], %y: Tensor[(n, 4), float32]", "less(%x, %y)",
     "Tensor[(n, 4), bool]"},
    {"%c: Tensor[(n, 1), bool], %x: Tensor[(n, 4), float32], %y: Tensor[(4), float32]",
     "where(%c, %x, %y)", "Tensor[(n, 4), float32]"},
    {"%x: Tensor[(n<=128, 4), float32]", "erf(%x)", "Tensor[(n<=128, 4), float32]"},
    {"%x: Tensor[(n, 4), float32]", "nn.gelu(%x)", "Tensor[(n, 4), float32]"},
    {"%x: Tensor[(n, 4), float32]", "sqrt(%x)", "Tensor[(n, 4), float32]"},
    /* anonymous dims that must be equal are taken as equal (checked at run
     * time): to each other, and to a named variable */
    {"%x: Tensor[(?), float32], %y: Tensor[(?), float32]", "add(%x, %y)", "Tensor[(?), float32]"},
    {"%x: Tensor[(?, 4), float32], %y: Tensor[(n, 4), float32]", "multiply(%x, %y)",
     "Tensor[(n, 4), float32]"},
    {"%x: Tensor[(?, 3), float32], %y: Tensor[(?, 1), float32]", "add(%x, %y)",
     "Tensor[(?, 3), float32]"},
    /* reductions */
    {"%x: Tensor[(b, n, 8), float32]", "mean(%x, axis=[2], keepdims=True)",
     "Tensor[(b, n, 1), float32]"},
    {"%x: Tensor[(b, n, 8), float32]", "sum(%x, axis=[1])", "Tensor[(b, 8), float32]"},
    {"%x: Tensor[(b, n, 8), float32]", "max(%x)", "Tensor[(), float32]"},
    {"%x: Tensor[(b, n, 8), float32]", "argmax(%x, axis=1)", "Tensor[(b, 1, 8), int64]"},
    /* softmax, layer norm */
    {"%x: Tensor[(b, 12, n, n), float32]", "nn.softmax(%x)", "Tensor[(b, 12, n, n), float32]"},
    {"%x: Tensor[(b, n, 8), float32], %g: Tensor[(8), float32], %e: Tensor[(8), float32]",
     "nn.layer_norm(%x, %g, %e, axis=-1)", "Tensor[(b, n, 8), float32]"},
    /* dense, matmul, batch_matmul */
    {"%x: Tensor[(b, n, 384), float32], %w: Tensor[(16, 384), float32]",
     "nn.dense(%x, %w, units=16)", "Tensor[(b, n, 16), float32]"},
    {"%x: Tensor[(n, 384), float32], %w: Tensor[(384, 16), float32]", "nn.matmul(%x, %w)",
     "Tensor[(n, 16), float32]"},
    {"%q: Tensor[(b, n, 32), float32], %k: Tensor[(b, n, 32), float32]", "nn.batch_matmul(%q, %k)",
     "Tensor[(b, n, n), float32]"},
    {"%p: Tensor[(b, n, n), float32], %v: Tensor[(b, n, 32), float32]",
     "nn.batch_matmul(%p, %v, transpose_b=False)", "Tensor[(b, n, 32), float32]"},
    /* transpose, reshape */
    {"%x: Tensor[(b, n, 12, 32), float32]", "transpose(%x, axes=[0, 2, 1, 3])",
     "Tensor[(b, 12, n, 32), float32]"},
    {"%x: Tensor[(b, n, 384), float32]", "reshape(%x, newshape=[0, 0, 12, 32])",
     "Tensor[(b, n, 12, 32), float32]"},
    {"%x: Tensor[(b, n, 12, 32), float32]", "reshape(%x, newshape=[0, 0, 384])",
     "Tensor[(b, n, 384), float32]"},
    {"%x: Tensor[(b, n, 384), float32]", "reshape(%x, newshape=[-1, 384])",
     "Tensor[(?, 384), float32]"},
    {"%x: Tensor[(n, 4), float32]", "reshape(%x, newshape=[2, -1, 2])",
     "Tensor[(2, n, 2), float32]"},
    /* concatenate */
    {"%x: Tensor[(n, 4), float32], %y: Tensor[(n, 2), float32]", "concatenate(%x, %y, axis=1)",
     "Tensor[(n, 6), float32]"},
    {"%x: Tensor[(n, 4), float32], %y: Tensor[(3, 4), float32]", "concatenate(%x, %y)",
     "Tensor[(?, 4), float32]"},
    /* take, gather */
    {"%t: Tensor[(100, 16), float32], %i: Tensor[(b, n), int64]", "take(%t, %i)",
     "Tensor[(b, n, 16), float32]"},
    {"%t: Tensor[(n, 16), float32], %i: Tensor[(3), int64]", "take(%t, %i, axis=0)",
     "Tensor[(3, 16), float32]"},
    /* cast, expand_dims, squeeze, strided_slice */
    {"%x: Tensor[(b, n), int64]", "cast(%x, dtype=\"float32\")", "Tensor[(b, n), float32]"},
    {"%x: Tensor[(b, n), float32]", "expand_dims(%x, axis=1, num_newaxis=2)",
     "Tensor[(b, 1, 1, n), float32]"},
    {"%x: Tensor[(b, 1, n), float32]", "squeeze(%x, axis=[1])", "Tensor[(b, n), float32]"},
    {"%x: Tensor[(n, 8), float32]", "strided_slice(%x, begin=[2], end=[6], axes=[1])",
     "Tensor[(n, 4), float32]"},
    {"%x: Tensor[(n, 8), float32]",
     "strided_slice(%x, begin=[1], end=[9223372036854775807], "
     "axes=[0])",
     "Tensor[(?, 8), float32]"},
};

static char *call_type(const relation_case_t *c) {
  char text[1024];
  snprintf(text, sizeof(text), "def @main(%s) { %s }", c->params, c->body);
  kiln_module_t *module = NULL;
  kiln_status_t status = kiln_ir_parse_module("case", text, kiln_allocator_system(), &module);
  if (status) {
    fail_msg("%s: %s", text, kiln_status_message(status));
  }
  char buffer[KILN_IR_TYPE_TEXT_CAPACITY];
  char *result =
      copy_text(kiln_type_text(kiln_module_get_function(module, "main")->ret_type, buffer));
  kiln_module_destroy(module);
  return result;
}

static void test_relations(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    char *type = call_type(&cases[i]);
    if (strcmp(type, cases[i].type) != 0) {
      fail_msg("%s: got %s, expected %s", cases[i].body, type, cases[i].type);
    }
    free(type);
  }
}

static void assert_refused(const char *text, kiln_status_code_t code, const char *message) {
  kiln_module_t *module = NULL;
  kiln_status_t status = kiln_ir_parse_module("case", text, kiln_allocator_system(), &module);
  kiln_test_assert_status(status, code, message, text, __FILE__, __LINE__);
  assert_null(module);
}

static void test_errors_name_the_probe(void **state) {
  (void)state;
  /* n against a static 5: the relation rejects the probe size. */
  assert_refused("def @main(%x: Tensor[(n), float32], %y: Tensor[(5), float32]) { add(%x, %y) }",
                 KILN_STATUS_CODE_INVALID_ARGUMENT,
                 "add with symbolic dims taken as n=4001: add: cannot broadcast (4001,) and (5,)");
  /* Different variables do not broadcast together. */
  assert_refused("def @main(%x: Tensor[(n), float32], %y: Tensor[(m), float32]) { add(%x, %y) }",
                 KILN_STATUS_CODE_INVALID_ARGUMENT, "taken as n=4001, m=4008");
  /* No way of taking the anonymous dims as equal types it: the first
   * error is the one reported. */
  assert_refused("def @main(%x: Tensor[(?, 3), float32], %y: Tensor[(4, ?), float32]) { add(%x, "
                 "%y) }",
                 KILN_STATUS_CODE_INVALID_ARGUMENT,
                 "add with symbolic dims taken as ?=4001, "
                 "?=4008: add: cannot broadcast");
  assert_refused("def @main(%x: Tensor[(?), float32], %y: Tensor[(5), float32]) { add(%x, %y) }",
                 KILN_STATUS_CODE_INVALID_ARGUMENT, "taken as ?=4001: add: cannot broadcast");
  assert_refused("def @main(%x: Tensor[(n, 8), float32]) { nn.max_pool2d(%x) }",
                 KILN_STATUS_CODE_INVALID_ARGUMENT,
                 "nn.max_pool2d: input 0 has the symbolic dim n (dim 0); this operator needs "
                 "static shapes");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_relations),
      cmocka_unit_test(test_errors_name_the_probe),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
