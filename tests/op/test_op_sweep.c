/*
 * The common operator sweep (docs/contributing.md, "Add an operator"). Each
 * line of tests/op/sweep.txt is one case: an operator, its input types
 * (each with an optional value range, or its values), its attributes in the text format,
 * and the range of its inputs' random values. The case becomes the module
 * `def @main(inputs) { op(inputs, attributes) }`, and one set of random
 * inputs runs through every execution path:
 *  - the interpreter (the operator's reference kernel): the expected outputs;
 *  - the compute rule, lowered with the operator's schedule, on the loop-IR
 *    interpreter before and after the lowering passes and compiled by every
 *    built backend (C, LLVM, LLVM JIT) with 1, 2 and 3 threads
 *    (check_compute, tests/support/kiln_compute_test.h);
 *  - the graph compiler with its default options (the graph executor, or the
 *    VM when the shapes need it);
 *  - the eager VM on compiled kernels, whose kernel cache must have compiled
 *    every operator whose output shape follows from its inputs' shapes. One
 *    whose output shape depends on its inputs' values (an operator with a
 *    shape function: docs/eager.md) may run its reference kernel there, as
 *    the VM runs it as a view or a runtime kernel; the sweep counts those.
 * Floats agree within 1e-6 + 1e-5 |expected| (check_compute: its own
 * tolerance), integers exactly. A failure names the line of sweep.txt.
 *
 * A line `! op | reason` says why an operator is not swept here (and where
 * it is tested instead); every operator of the registry must be swept or
 * excused, so a new operator cannot be forgotten.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/build.h"
#include "interp/interp.h"
#include "ir/infer.h"
#include "kiln/compiler.h"
#include "kiln/eager.h"
#include "kiln_compute_test.h"
#include "kiln_ir_test.h"

enum { MAX_INPUTS = 8, MAX_ATTRS = 16, MAX_LINE = 1024, MAX_TEXT = 4096 };

/* Which operators sweep.txt sweeps or excuses (by operator id). */
typedef struct coverage_t {
  bool swept[KILN_OP_COUNT_];
  bool excused[KILN_OP_COUNT_];
  int symbolic;        /* cases whose outputs have run-time shapes */
  int eager_reference; /* of those, cases the eager VM ran on reference kernels */
} coverage_t;

/* One line of sweep.txt, split into its fields (pointers into `line`). */
typedef struct sweep_case_t {
  char line[MAX_LINE];
  int line_number;
  const char *op;
  int num_inputs;
  char *inputs[MAX_INPUTS]; /* each "TYPE" or "TYPE in LO HI" */
  int num_attrs;
  kiln_eager_attr_t attrs[MAX_ATTRS];
  double lo, hi;
  char what[96];
} sweep_case_t;

static char *trim(char *text) {
  while (isspace((unsigned char)*text)) {
    ++text;
  }
  char *end = text + strlen(text);
  while (end > text && isspace((unsigned char)end[-1])) {
    *--end = '\0';
  }
  return text;
}

/* Splits `text` at each `separator` into at most `capacity` trimmed parts;
 * an empty text has none. Returns the count, or -1 when there are more. */
static int split(char *text, char separator, int capacity, char **out_parts) {
  int count = 0;
  text = trim(text);
  while (*text != '\0') {
    if (count == capacity) {
      return -1;
    }
    char *next = strchr(text, separator);
    if (next) {
      *next = '\0';
    }
    out_parts[count++] = trim(text);
    text = next ? next + 1 : text + strlen(text);
  }
  return count;
}

static void parse_attrs(sweep_case_t *c, char *text) {
  char *parts[MAX_ATTRS];
  c->num_attrs = split(text, ';', MAX_ATTRS, parts);
  if (c->num_attrs < 0) {
    fail_msg("sweep.txt:%d: more than %d attributes", c->line_number, MAX_ATTRS);
  }
  for (int a = 0; a < c->num_attrs; ++a) {
    char *equals = strchr(parts[a], '=');
    if (!equals) {
      fail_msg("sweep.txt:%d: attribute '%s' is not name=value", c->line_number, parts[a]);
    }
    *equals = '\0';
    c->attrs[a] = (kiln_eager_attr_t){trim(parts[a]), trim(equals + 1)};
  }
}

/* `op | input; ... | name=value; ... | lo hi` */
static void parse_case(const char *line, int line_number, sweep_case_t *c) {
  memset(c, 0, sizeof(*c));
  snprintf(c->line, sizeof(c->line), "%s", line);
  c->line_number = line_number;
  char *fields[4];
  if (split(c->line, '|', 4, fields) != 4) {
    fail_msg("sweep.txt:%d: expected 'op | inputs | attributes | lo hi'", line_number);
  }
  c->op = fields[0];
  c->num_inputs = split(fields[1], ';', MAX_INPUTS, c->inputs);
  parse_attrs(c, fields[2]);
  if (c->num_inputs < 0 || sscanf(fields[3], "%lf %lf", &c->lo, &c->hi) != 2) {
    fail_msg("sweep.txt:%d: expected at most %d inputs and a range 'lo hi'", line_number,
             MAX_INPUTS);
  }
  snprintf(c->what, sizeof(c->what), "sweep.txt:%d (%s)", line_number, c->op);
}

/* The case's input `i`: its type's text, and its values' range; `values`
 * (when not NULL) gets the text of its values when the input gives them. */
static void input_range(const sweep_case_t *c, int i, char *out_type, double *out_lo,
                        double *out_hi, const char **out_values) {
  snprintf(out_type, MAX_LINE, "%s", c->inputs[i]);
  *out_lo = c->lo;
  *out_hi = c->hi;
  *out_values = NULL;
  char *in = strstr(out_type, " in "), *values = strstr(out_type, " = ");
  if (in) {
    *in = '\0';
    if (sscanf(in + 4, "%lf %lf", out_lo, out_hi) != 2) {
      fail_msg("%s: input %d: expected 'TYPE in LO HI'", c->what, i);
    }
  }
  if (values) {
    *values = '\0';
    *out_values = c->inputs[i] + (values + 3 - out_type);
  }
}

/* A tensor of `type` holding the numbers of `values` (int32, int64 or
 * float32). */
static kiln_tensor_t *given_tensor(const sweep_case_t *c, const kiln_tensor_type_t *type,
                                   const char *values) {
  kiln_tensor_t *t = random_tensor(type->dtype, type->ndim, type->shape, 0, 0);
  const char *p = values;
  for (int64_t i = 0; i < kiln_tensor_element_count(t); ++i) {
    char *end = NULL;
    double v = strtod(p, &end);
    if (end == p) {
      fail_msg("%s: expected %lld values in '%s'", c->what, (long long)kiln_tensor_element_count(t),
               values);
    }
    p = end;
    if (type->dtype == KILN_DTYPE_INT64) {
      ((int64_t *)kiln_tensor_data(t))[i] = (int64_t)v;
    } else if (type->dtype == KILN_DTYPE_INT32) {
      ((int32_t *)kiln_tensor_data(t))[i] = (int32_t)v;
    } else {
      assert_int_equal(type->dtype, KILN_DTYPE_FLOAT32);
      ((float *)kiln_tensor_data(t))[i] = (float)v;
    }
  }
  return t;
}

/* The one-call module's text. */
static void module_text(const sweep_case_t *c, char *out_text) {
  int n = snprintf(out_text, MAX_TEXT, "def @main(");
  for (int i = 0; i < c->num_inputs; ++i) {
    char type[MAX_LINE];
    double lo = 0, hi = 0;
    const char *values = NULL;
    input_range(c, i, type, &lo, &hi, &values);
    n += snprintf(out_text + n, MAX_TEXT - n, "%s%%x%d: %s", i ? ", " : "", i, type);
  }
  n += snprintf(out_text + n, MAX_TEXT - n, ") {\n  %s(", c->op);
  for (int i = 0; i < c->num_inputs; ++i) {
    n += snprintf(out_text + n, MAX_TEXT - n, "%s%%x%d", i ? ", " : "", i);
  }
  for (int a = 0; a < c->num_attrs; ++a) {
    n += snprintf(out_text + n, MAX_TEXT - n, "%s%s=%s", c->num_inputs + a ? ", " : "",
                  c->attrs[a].name, c->attrs[a].value);
  }
  snprintf(out_text + n, MAX_TEXT - n, ")\n}\n");
}

static void make_inputs(const sweep_case_t *c, const kiln_function_t *main_fn,
                        kiln_tensor_t **out_inputs) {
  for (int i = 0; i < c->num_inputs; ++i) {
    char type[MAX_LINE];
    double lo = 0, hi = 0;
    const char *values = NULL;
    input_range(c, i, type, &lo, &hi, &values);
    const kiln_tensor_type_t *t = kiln_type_as_tensor(main_fn->params[i]->base.checked_type);
    assert_non_null(t);
    out_inputs[i] =
        values ? given_tensor(c, t, values) : random_tensor(t->dtype, t->ndim, t->shape, lo, hi);
  }
}

/* The compute rule on every loop-IR path and backend. An output shape that
 * depends on the inputs' values is known only at run time: such a rule is
 * lowered over symbolic dims by the graph compiler (for its VM) and the
 * eager VM, not statically here; returns false for those. */
static bool sweep_compute(const sweep_case_t *c, const kiln_call_t *call, kiln_tensor_t **inputs) {
  if (!kiln_type_is_static(call->base.checked_type)) {
    return false;
  }
  if (!kiln_op_compute_get(call->op->id)) {
    fail_msg("%s: the operator has no compute rule", c->what);
  }
  check_compute(call->op, call->attrs, c->num_inputs, inputs);
  return true;
}

/* The graph compiler's executor against the interpreter. */
static void sweep_graph_compiler(const sweep_case_t *c, kiln_module_t *reference, const char *text,
                                 kiln_tensor_t **inputs) {
  kiln_compiled_t *compiled = irt_compile(c->what, text);
  kiln_graph_executor_t *executor = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &executor));
  irt_run_against_interp(reference, executor, c->num_inputs, inputs, c->what);
  kiln_graph_executor_destroy(executor);
  kiln_compiled_destroy(compiled);
}

/* How many kernels `context`'s cache runs on their reference kernel. */
static int64_t reference_kernels(kiln_eager_context_t *context) {
  kiln_eager_kernel_stats_t stats;
  KILN_ASSERT_OK(kiln_eager_context_get_kernel_stats(context, &stats));
  return (int64_t)stats.reference;
}

/* The eager call in `context` against the interpreter's outputs `want`;
 * returns whether its kernel is a reference kernel. */
static bool sweep_eager(const sweep_case_t *c, kiln_eager_context_t *context,
                        kiln_tensor_t **inputs, int count, kiln_tensor_t **want) {
  kiln_eager_tensor_t *args[MAX_INPUTS], *outputs[KILN_EAGER_MAX_OUTPUTS];
  for (int i = 0; i < c->num_inputs; ++i) {
    KILN_ASSERT_OK(kiln_eager_context_tensor_from_host(
        context, kiln_tensor_dtype(inputs[i]), kiln_tensor_ndim(inputs[i]),
        kiln_tensor_shape(inputs[i]), kiln_tensor_data(inputs[i]), kiln_tensor_byte_size(inputs[i]),
        &args[i]));
  }
  int num_outputs = 0;
  int64_t references = reference_kernels(context);
  KILN_ASSERT_OK(kiln_eager_context_call(context, c->op, c->num_inputs, args, c->num_attrs,
                                         c->attrs, KILN_EAGER_MAX_OUTPUTS, &num_outputs, outputs));
  assert_int_equal(num_outputs, count);
  for (int o = 0; o < num_outputs; ++o) {
    kiln_tensor_t *got = NULL;
    KILN_ASSERT_OK(kiln_eager_tensor_read(outputs[o], &got));
    irt_assert_close(got, want[o], c->what, o);
    kiln_tensor_release(got);
    kiln_eager_tensor_release(outputs[o]);
  }
  for (int i = 0; i < c->num_inputs; ++i) {
    kiln_eager_tensor_release(args[i]);
  }
  return reference_kernels(context) > references;
}

static void sweep_case(const sweep_case_t *c, kiln_eager_context_t *context, coverage_t *coverage) {
  char text[MAX_TEXT];
  module_text(c, text);
  kiln_module_t *reference = irt_parse(c->what, text);
  KILN_ASSERT_OK(kiln_ir_infer_types(reference));
  const kiln_function_t *main_fn = kiln_module_get_function(reference, "main");
  kiln_tensor_t *inputs[MAX_INPUTS];
  make_inputs(c, main_fn, inputs);
  int count = 0;
  kiln_tensor_t **want = NULL;
  KILN_ASSERT_OK(kiln_interp_run(reference, "main", c->num_inputs, inputs, kiln_allocator_system(),
                                 &count, &want));
  const kiln_call_t *call = kiln_expr_as_call(main_fn->body);
  assert_non_null(call);
  assert_non_null(call->op);
  coverage->symbolic += !sweep_compute(c, call, inputs);
  sweep_graph_compiler(c, reference, text, inputs);
  if (sweep_eager(c, context, inputs, count, want)) {
    if (!call->op->shape_func) {
      fail_msg("%s: the eager VM ran the reference kernel, not a compiled one", c->what);
    }
    coverage->eager_reference++;
  }
  for (int o = 0; o < count; ++o) {
    kiln_tensor_release(want[o]);
  }
  kiln_allocator_free(kiln_allocator_system(), want);
  for (int i = 0; i < c->num_inputs; ++i) {
    kiln_tensor_release(inputs[i]);
  }
  kiln_module_destroy(reference);
}

static void mark(const char *name, bool *marks, int line_number) {
  const kiln_op_t *op = NULL;
  if (kiln_op_find(name, &op) != KILN_OK) {
    fail_msg("sweep.txt:%d: no operator '%s'", line_number, name);
  }
  marks[op->id] = true;
}

/* `! op | reason` */
static void excuse(char *text, int line_number, coverage_t *coverage) {
  char *fields[2];
  if (split(text + 1, '|', 2, fields) != 2 || *fields[1] == '\0') {
    fail_msg("sweep.txt:%d: expected '! op | why it is not swept here'", line_number);
  }
  mark(fields[0], coverage->excused, line_number);
}

/* Every case of sweep.txt (run unless `context` is NULL); returns how many
 * there are. */
static int sweep_file(kiln_eager_context_t *context, coverage_t *coverage) {
  FILE *file = fopen(KILN_SOURCE_DIR "/tests/op/sweep.txt", "r");
  assert_non_null(file);
  char line[MAX_LINE];
  int line_number = 0, cases = 0;
  while (fgets(line, sizeof(line), file)) {
    ++line_number;
    char *text = trim(line);
    if (*text == '\0' || *text == '#') {
      continue;
    }
    if (*text == '!') {
      excuse(text, line_number, coverage);
      continue;
    }
    sweep_case_t c;
    parse_case(text, line_number, &c);
    mark(c.op, coverage->swept, line_number);
    if (context) {
      sweep_case(&c, context, coverage);
    }
    ++cases;
  }
  fclose(file);
  return cases;
}

static void test_every_case_through_every_path(void **state) {
  (void)state;
  kiln_eager_options_t options = kiln_eager_options_default();
  options.reference_kernels = false;
  kiln_eager_context_t *context = NULL;
  KILN_ASSERT_OK(kiln_eager_context_create(&options, &context));
  coverage_t coverage = {0};
  int cases = sweep_file(context, &coverage);
  assert_true(cases > 0);
  kiln_eager_context_destroy(context);
  printf("op sweep: %d cases; %d with run-time output shapes, lowered over symbolic dims by the "
         "graph compiler and the eager VM, not statically by check_compute; %d of them ran their "
         "reference kernel in the eager VM\n",
         cases, coverage.symbolic, coverage.eager_reference);
}

/* Every operator is swept or excused, never both. */
static void test_every_operator_is_swept_or_excused(void **state) {
  (void)state;
  coverage_t coverage = {0};
  sweep_file(NULL, &coverage);
  for (int id = 0; id < kiln_op_count(); ++id) {
    const char *name = kiln_op_get((kiln_op_id_t)id)->name;
    if (coverage.swept[id] == coverage.excused[id]) {
      fail_msg("operator %s is %s in tests/op/sweep.txt", name,
               coverage.swept[id] ? "both swept and excused" : "neither swept nor excused");
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_operator_is_swept_or_excused),
      cmocka_unit_test_setup_teardown(test_every_case_through_every_path, setup, teardown),
  };
  return kiln_test_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
