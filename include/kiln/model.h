/*
 * A model in memory: what kiln imports before it compiles (TVM's
 * `mod, params = relay.frontend.from_onnx(...)` / `relay.testing.*`), and
 * what a user does with it short of a build: look at its inputs, run the
 * pass pipeline on it, print it (the text format, docs/text-format.md, or
 * graphviz dot), and run it on the reference interpreter
 * (docs/interpreter.md), the slow executor every fast path is checked
 * against.
 *
 *   kiln_model_t *model = NULL;
 *   KILN_RETURN_IF_ERROR(kiln_model_load(allocator, "resnet18", NULL, &model));
 *   KILN_RETURN_IF_ERROR(kiln_model_bind_params(model));   (weights -> constants)
 *   int n = 0;
 *   kiln_tensor_t **outputs = NULL;
 *   KILN_RETURN_IF_ERROR(kiln_model_interpret(model, 1, &input, allocator, &n, &outputs));
 *   kiln_model_destroy(model);
 *
 * A model is an ONNX file (a path ending in ".onnx"; its initializers are
 * constants) or the name of a built-in workload (kiln_model_workload_names;
 * docs/workloads.md), whose weights are kept apart as parameters of main,
 * as relay.testing returns them, until kiln_model_bind_params makes them
 * constants. The model's inputs are main's parameters, in order.
 *
 * kiln_compile (kiln/compiler.h) loads and builds in one call; this header
 * is for the steps in between. A model belongs to one thread at a time.
 */
#ifndef KILN_MODEL_H_
#define KILN_MODEL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/allocator.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_model_t kiln_model_t;

typedef struct kiln_model_options_t {
  /* ONNX: shapes of graph inputs with symbolic dims, "name=1x3x224x224"
   * ("name=" for a scalar); where the model has a dim, it must agree. */
  int num_input_shapes;
  const char *const *input_shapes;
  /* ONNX: the largest constant the importer may compute while folding
   * (bytes; 0: 1 GiB); a model over it is refused naming the node. */
  int64_t max_constant_bytes;
  int batch;      /* workloads: batch size (0: 1) */
  int image_size; /* workloads (CNNs): image side (0: 224) */
  uint64_t seed;  /* workloads: the weights are a pure function of it */
  /* ONNX: keep input dims that are dim_params (or unknown) as symbolic dims,
   * which the VM compiles (docs/dynamic-shapes.md); false (the default)
   * refuses them, naming the dim and --input-shape. */
  bool symbolic_input_shapes;
} kiln_model_options_t;

/* All zeros: the defaults above. */
kiln_model_options_t kiln_model_options_default(void);
/* The built-in workloads' names, NULL-terminated. */
const char *const *kiln_model_workload_names(void);

/* Imports (ONNX) or builds (a workload) `model` with `options` (NULL: the
 * defaults) and infers its types. Errors name the file, the node or the
 * workload: NOT_FOUND for a missing file or an unknown workload (listing
 * the workloads), INVALID_ARGUMENT for a file that is not an ONNX model
 * or a bad input shape, INVALID_ARGUMENT for input shapes given to a
 * workload, UNIMPLEMENTED for an operator kiln lacks. */
KILN_MUST_USE_RESULT kiln_status_t kiln_model_load(kiln_allocator_t allocator, const char *model,
                                                   const kiln_model_options_t *options,
                                                   kiln_model_t **out_model);
/* NULL is a no-op. */
void kiln_model_destroy(kiln_model_t *model);

/* How many weights are still apart from main (a workload's, before
 * kiln_model_bind_params; an ONNX model's are constants: 0). */
int kiln_model_num_params(const kiln_model_t *model);
/* Makes the weights constants of main, which then takes the data inputs
 * only; a no-op when there are none. */
KILN_MUST_USE_RESULT kiln_status_t kiln_model_bind_params(kiln_model_t *model);

/* ---- inputs ---- */

#define KILN_MODEL_TYPE_TEXT_CAPACITY 256

/* One input (a parameter of main). */
typedef struct kiln_model_input_info_t {
  const char *name; /* without the '%'; lives as long as the model is unchanged */
  bool is_tensor;   /* false: a tuple or another non-tensor type */
  kiln_dtype_t dtype;
  int ndim;
  int64_t shape[KILN_MAX_RANK];
  char type_text[KILN_MODEL_TYPE_TEXT_CAPACITY]; /* "Tensor[(1, 3), float32]" */
} kiln_model_input_info_t;

int kiln_model_num_inputs(const kiln_model_t *model);
/* OUT_OF_RANGE for an index outside [0, count). */
KILN_MUST_USE_RESULT kiln_status_t kiln_model_input_info(const kiln_model_t *model, int index,
                                                         kiln_model_input_info_t *out_info);

/* ---- the pass pipeline ---- */

/* Called after every pass that runs, with the model as the pass left it
 * (`failed`: the pass returned an error and the model is whatever it
 * left) and the seconds it took. The model may be read (printed) here,
 * not changed. */
typedef void (*kiln_model_pass_hook_fn)(void *user, const char *pass_name,
                                        const kiln_model_t *model, bool failed, double seconds);

typedef struct kiln_model_optimize_options_t {
  int opt_level;           /* 0 to 3 */
  int num_disabled_passes; /* passes not to run, by name */
  const char *const *disabled_passes;
  bool verify;                        /* the IR verifier after every pass */
  kiln_model_pass_hook_fn after_pass; /* NULL: none */
  void *user;                         /* after_pass's first argument */
} kiln_model_optimize_options_t;

/* opt_level 3, nothing disabled, no verifier, no hook. */
kiln_model_optimize_options_t kiln_model_optimize_options_default(void);

/* Runs the default pass pipeline (docs/passes.md) on the model in place:
 * afterwards main calls fused primitive functions. INVALID_ARGUMENT for an
 * opt_level outside 0..3; NOT_FOUND for a disabled pass with no such name;
 * a pass's error names the pass. */
KILN_MUST_USE_RESULT kiln_status_t
kiln_model_optimize(kiln_model_t *model, const kiln_model_optimize_options_t *options);
/* The opt_level from which pass `name` of the default pipeline runs;
 * NOT_FOUND listing the passes for an unknown name. */
KILN_MUST_USE_RESULT kiln_status_t kiln_model_pass_opt_level(const char *name, int *out_opt_level);

/* ---- printing ---- */

/* The model's IR in the text format (docs/text-format.md); `metadata`
 * appends the values of every constant. The caller frees *out_text with
 * `allocator`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_model_print(const kiln_model_t *model, bool metadata,
                                                    kiln_allocator_t allocator, char **out_text);
/* main's dataflow for graphviz (`kiln graph`): inputs as ellipses, each
 * call of a fused function as a box listing its operators; meant for a
 * model after kiln_model_optimize. The caller frees *out_text with
 * `allocator`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_model_print_dot(const kiln_model_t *model,
                                                        kiln_allocator_t allocator,
                                                        char **out_text);

/* ---- the reference interpreter ---- */

/* Runs main on `inputs` (one per input, in order) with the reference
 * kernels. The outputs (a tuple's fields flattened) are new tensors from
 * `allocator` in a new array from `allocator`; the caller releases each
 * and frees the array. INVALID_ARGUMENT naming the input for a wrong
 * count, dtype or shape. */
KILN_MUST_USE_RESULT kiln_status_t kiln_model_interpret(kiln_model_t *model, int num_inputs,
                                                        kiln_tensor_t *const *inputs,
                                                        kiln_allocator_t allocator,
                                                        int *out_num_outputs,
                                                        kiln_tensor_t ***out_outputs);

/* OK when `actual` has the dtype and shape of `expected` (INVALID_ARGUMENT
 * otherwise) and every element satisfies |actual - expected| <= atol +
 * rtol * |expected| (NumPy's allclose; NaN matches NaN); OUT_OF_RANGE
 * naming the first element that does not and how many differ. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tensor_allclose(const kiln_tensor_t *expected,
                                                        const kiln_tensor_t *actual, double rtol,
                                                        double atol);

#ifdef __cplusplus
}
#endif

#endif /* KILN_MODEL_H_ */
