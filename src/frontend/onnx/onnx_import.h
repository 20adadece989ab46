/*
 * The ONNX importer: an ONNX model file becomes a kiln module.
 *
 * The file is parsed by protobuf-c with C code generated at build time from
 * the ONNX schema Debian ships, so there is no hand-written decoder. The
 * graph becomes one function, @main: its parameters are the graph inputs
 * that are not initializers, in graph order; initializers and Constant nodes
 * become Constants; every node goes through one converter table (ONNX
 * op_type and opset range -> converter) onto the operator registry; the body
 * is the single graph output, or a Tuple of the outputs in order. A node all
 * of whose inputs are Constants is evaluated at import with the operators'
 * reference kernels and replaced by a Constant, so shape-computing subgraphs
 * (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) vanish when the input
 * shapes are static. The module is type-inferred and verified before it is
 * returned.
 *
 * Parameter names: an ONNX name is kept when it matches the IR text's rule
 * [A-Za-z_][A-Za-z0-9_.]*; otherwise every other character becomes '_' and a
 * name that starts with a digit or '.' gets a leading '_' ("input:0" ->
 * "input_0", "0" -> "_0", "" -> "_"). A name that is then taken gets "_1",
 * "_2", ... appended. docs/onnx.md has the supported opsets and operators.
 *
 * Errors name the file, and the node (its name or #index, and op_type) they
 * come from: INVALID_ARGUMENT for a malformed model, UNIMPLEMENTED for
 * something kiln does not support (listing every unsupported operator at
 * once), DATA_LOSS for bytes that do not parse or tensors whose data does
 * not match their shape.
 */
#ifndef KILN_FRONTEND_ONNX_ONNX_IMPORT_H_
#define KILN_FRONTEND_ONNX_ONNX_IMPORT_H_

#include <stdbool.h>
#include <stddef.h>

#include "ir/expr.h"
#include "kiln/allocator.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

/* Zero-initialized options (or NULL) mean the defaults. */
typedef struct kiln_onnx_import_options_t {
  /* Shapes of graph inputs, as the CLI's --input-shape takes them:
   * "name=1x3x224x224" ("name=" for a scalar). They give symbolic dims a
   * value; where the model has a dim, it must agree. */
  int num_input_shapes;
  const char *const *input_shape_specs;
  /* Values for the parameters, in order (NULL entries, or fewer than the
   * parameters, leave the rest alone). A parameter with a value takes its
   * type from it (so symbolic dims need no shape spec), and a converter that
   * needs a constant where the model feeds this input (ONNX's node tests
   * pass Reshape's shape or Slice's starts as graph inputs) reads the value
   * given here. The input stays a parameter of @main; the module is
   * specialized to these values wherever they were read. */
  int num_input_values;
  kiln_tensor_t *const *input_values;
  /* Make the inputs that have values Constants instead of parameters (as
   * initializers are), so everything computed from them folds at import. */
  bool bind_input_values;
  /* Keep nodes whose inputs are all constant as calls (for debugging the
   * converters); inputs that must be constant still have to be. */
  bool no_constant_folding;
  /* The largest tensor folding at import may make (bytes; 0: the default
   * KILN_ONNX_MAX_CONSTANT_BYTES). A model whose constant computation
   * (ConstantOfShape, Expand, Range, Tile... of constants) would make more
   * is refused, naming the node and the size: a few bytes of model must
   * not allocate gigabytes. */
  int64_t max_constant_bytes;
  /* Refuse an input dim that is a dim_param or unknown unless a shape spec or
   * a value fixes it (for tools that compile: the graph compiler needs static
   * shapes). By default such a dim stays symbolic: a dimension variable named
   * after the dim_param, or an anonymous one ("?") when the dim is unknown. */
  bool static_input_shapes;
} kiln_onnx_import_options_t;

/* The default of max_constant_bytes: 1 GiB. */
#define KILN_ONNX_MAX_CONSTANT_BYTES ((int64_t)1 << 30)

/* Reads and imports `path`; external data is read from files beside it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_import_file(const char *path,
                                                         const kiln_onnx_import_options_t *options,
                                                         kiln_allocator_t allocator,
                                                         kiln_module_t **out_module);

/* Imports a serialized ModelProto. `source_name` names it in errors;
 * `model_dir` is the folder external data is confined to (NULL: a model with
 * external data is refused). */
KILN_MUST_USE_RESULT kiln_status_t
kiln_onnx_import_buffer(const char *source_name, const void *bytes, size_t size,
                        const char *model_dir, const kiln_onnx_import_options_t *options,
                        kiln_allocator_t allocator, kiln_module_t **out_module);

/* A serialized TensorProto (the backend tests' input_0.pb) as a new tensor.
 * `model_dir` as above, for a tensor with external data. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_tensor_parse(const char *source_name,
                                                          const void *bytes, size_t size,
                                                          const char *model_dir,
                                                          kiln_allocator_t allocator,
                                                          kiln_tensor_t **out_tensor);

/* kiln_onnx_tensor_parse of a file's bytes (external data beside the file). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_tensor_read_file(const char *path,
                                                              kiln_allocator_t allocator,
                                                              kiln_tensor_t **out_tensor);

#endif /* KILN_FRONTEND_ONNX_ONNX_IMPORT_H_ */
