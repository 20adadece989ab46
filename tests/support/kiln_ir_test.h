/*
 * Graph-building helpers for IR tests: each builds one node in a module and
 * fails the cmocka test on error, so a test reads like the graph it builds.
 *
 *   kiln_module_t *m = irt_module();
 *   kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(1, 4));
 *   kiln_expr_t *y = IRT_CALL(m, "nn.relu", NULL, &x->base);
 *   irt_add_function(m, "main", 1, &x, y);
 */
#ifndef KILN_TESTS_SUPPORT_KILN_IR_TEST_H_
#define KILN_TESTS_SUPPORT_KILN_IR_TEST_H_

#include "ir/expr.h"
#include "kiln/compiler.h"
#include "kiln_test.h"

#ifndef SHAPE
#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#endif

kiln_module_t *irt_module(void);
const kiln_type_t *irt_type(kiln_module_t *module, kiln_dtype_t dtype, int ndim,
                            const int64_t *shape);
kiln_var_t *irt_var(kiln_module_t *module, const char *name, kiln_dtype_t dtype, int ndim,
                    const int64_t *shape);
/* A float32 constant holding `data` (element_count floats). */
kiln_expr_t *irt_constant_f32(kiln_module_t *module, int ndim, const int64_t *shape,
                              const float *data);
/* A call of operator `op_name` with its default attrs, after applying the
 * NULL-terminated (name, text) pairs of `settings` (may be NULL). */
kiln_expr_t *irt_call(kiln_module_t *module, const char *op_name, const char *const *settings,
                      int num_args, kiln_expr_t *const *args);
#define IRT_CALL(module, op_name, settings, ...)                                  \
  irt_call((module), (op_name), (settings),                                       \
           (int)(sizeof((kiln_expr_t *[]){__VA_ARGS__}) / sizeof(kiln_expr_t *)), \
           (kiln_expr_t *[]){__VA_ARGS__})
#define IRT_ATTRS(...) ((const char *const[]){__VA_ARGS__, NULL})
kiln_function_t *irt_function(kiln_module_t *module, int num_params, kiln_var_t *const *params,
                              kiln_expr_t *body);
/* irt_function, then adds it to the module under `name`. */
kiln_function_t *irt_add_function(kiln_module_t *module, const char *name, int num_params,
                                  kiln_var_t *const *params, kiln_expr_t *body);

/* `text` in the text format, parsed as a module named `name`. */
kiln_module_t *irt_parse(const char *name, const char *text);
/* `text` parsed and compiled with the default options (the executor the
 * compiler chooses). */
kiln_compiled_t *irt_compile(const char *name, const char *text);
/* `text` parsed and compiled with the default options, for the VM (the
 * test fails when the compiler chose the graph executor). */
kiln_compiled_t *irt_compile_vm(const char *name, const char *text);
/* A module parsed for the reference (typed), and compiled for the VM and
 * its executor (test_vm_dyn, test_vm_extern). */
typedef struct vm_pair_t {
  kiln_module_t *reference;
  kiln_compiled_t *compiled;
  kiln_graph_executor_t *vm;
} vm_pair_t;
vm_pair_t vm_pair_open(const char *name, const char *text);
void vm_pair_close(vm_pair_t *pair);
/* Fails unless `got` has `want`'s shape and values within 1e-6 + 1e-5
 * |want|, naming `what` and `output`. */
void irt_assert_close(const kiln_tensor_t *got, const kiln_tensor_t *want, const char *what,
                      int output);
/* One run of `executor` on the `n` inputs against the interpreter's run of
 * `reference`'s main (typed), output by output; the outputs' count. */
int irt_run_against_interp(kiln_module_t *reference, kiln_graph_executor_t *executor, int n,
                           kiln_tensor_t *const *inputs, const char *what);

#endif /* KILN_TESTS_SUPPORT_KILN_IR_TEST_H_ */
