/*
 * The operator registry: one table of operators, and the rules each carries.
 *
 * Every operator is one constant kiln_op_t, defined in its family's file
 * (op_nn.c, op_elemwise.c, ...) and listed once in op_list.h. From that list
 * come the kiln_op_id_t enum, the registry table (registry.c, with a static
 * assert that the two agree) and every per-operator table later layers derive.
 * The rules are those of NNVM/Relay:
 *
 * - attributes: a typed C struct per operator, described field by field
 *   (name, kind, offset, default written as text) so that defaults, the text
 *   format, printing and importers share one description; plus an optional
 *   validate function for constraints between fields (FInferShape's attrs);
 * - a type relation (FInferType + FInferShape): input types -> output type,
 *   with NumPy broadcasting where it applies; errors name the operator and
 *   the shapes involved (the caller adds the node);
 * - a layout rule (FCorrectLayout): given the layouts its inputs arrive in,
 *   the layouts the operator requires of them and the layout it produces;
 * - a fusion pattern kind (TVM's OpPatternKind).
 *
 * That is the operator's definition. Its implementations (its reference
 * kernel, its compute rule and its schedule strategies) are declared apart
 * from it, in registries keyed by the operator's id (op/impl.h); this
 * header only names their signatures.
 */
#ifndef KILN_OP_OP_H_
#define KILN_OP_OP_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/strbuf.h"
#include "ir/type.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

/* The most parameters one kernel takes (TVM's max_function_args): a fused
 * primitive function's parameters, and so the arguments of any one operator
 * call inside it. fuse_ops keeps every group within it, split_args splits a
 * longer concatenate into a tree of them, and the lowering checks it
 * (compiler/lower.c). One definition; compute.h asserts that the tensor
 * expressions can hold it. */
#define KILN_OP_MAX_FUNCTION_ARGS 16

/* The most computes (operator calls and scalar constants) fuse_ops puts in
 * one group. A scalar constant, an elementwise or injective call makes one
 * stage of tensor expressions, the group's one
 * anchor (a conv, a pool, a reduction: padding, cache_write) a few more, at
 * most KILN_OP_MAX_ANCHOR_STAGES; compute.h asserts that the total fits one
 * schedule (KILN_TE_MAX_STAGES). */
#define KILN_OP_MAX_ANCHOR_STAGES     8
#define KILN_OP_MAX_FUNCTION_COMPUTES 24

/* TVM's OpPatternKind, with its numbering: fusion compares kinds by order. */
typedef enum kiln_op_pattern_e {
  KILN_OP_PATTERN_ELEMWISE = 0,
  KILN_OP_PATTERN_BROADCAST = 1,
  KILN_OP_PATTERN_INJECTIVE = 2,
  KILN_OP_PATTERN_COMM_REDUCE = 3,
  KILN_OP_PATTERN_OUT_ELEMWISE_FUSABLE = 4,
  KILN_OP_PATTERN_TUPLE = 7,
  KILN_OP_PATTERN_OPAQUE = 8,
} kiln_op_pattern_t;

const char *kiln_op_pattern_name(kiln_op_pattern_t pattern);

/* ---- attributes ---- */

/* A list of integers in an attribute (strides, axes, shapes). */
typedef struct kiln_ints_t {
  int32_t count;
  const int64_t *values; /* count values, in the module's arena */
} kiln_ints_t;

/* A list of floats in an attribute (resize scales). */
typedef struct kiln_floats_t {
  int32_t count;
  const double *values;
} kiln_floats_t;

typedef enum kiln_attr_kind_e {
  KILN_ATTR_KIND_INT,    /* int64_t; text: 3, -1 */
  KILN_ATTR_KIND_FLOAT,  /* double; text: 1e-05, 0.5 */
  KILN_ATTR_KIND_BOOL,   /* bool; text: True, False */
  KILN_ATTR_KIND_STRING, /* const char * in the arena; text: "NCHW" */
  KILN_ATTR_KIND_DTYPE,  /* kiln_dtype_t; text: "float32" */
  KILN_ATTR_KIND_INTS,   /* kiln_ints_t; text: [1, 1], [] */
  KILN_ATTR_KIND_FLOATS, /* kiln_floats_t; text: [2.0, 2.0] */
} kiln_attr_kind_t;

typedef struct kiln_attr_field_t {
  const char *name;
  kiln_attr_kind_t kind;
  size_t offset;            /* offsetof(attrs struct, field) */
  const char *default_text; /* the default, in the text format's spelling */
} kiln_attr_field_t;

/* Describes one field of attrs struct `type`. */
#define KILN_ATTR_FIELD(type, field, kind, default_text) \
  { #field, KILN_ATTR_KIND_##kind, offsetof(type, field), default_text }

/* ---- rule signatures ---- */

typedef struct kiln_op_t kiln_op_t;

/* What a type relation sees. */
typedef struct kiln_type_relation_t {
  const kiln_op_t *op;
  const void *attrs; /* the operator's attrs struct */
  int num_inputs;
  const kiln_type_t *const *inputs;
  kiln_arena_t *arena; /* for the output type */
} kiln_type_relation_t;

typedef kiln_status_t (*kiln_op_infer_type_fn)(const kiln_type_relation_t *relation,
                                               const kiln_type_t **out_type);

/* What a layout rule sees and fills. Layouts are strings in TVM's notation:
 * upper-case primal axes, a factor and a lower-case letter for a split axis
 * ("NCHW", "NHWC", "NCHW16c", "OIHW16i16o"); "" means unknown or any. */
typedef struct kiln_layout_relation_t {
  const kiln_op_t *op;
  const void *attrs;
  int num_inputs;
  const kiln_type_t *const *input_types;
  const char *const *input_layouts; /* as they arrive */
  const char **required_layouts;    /* out: num_inputs entries, static or in arena */
  const char *output_layout;        /* out */
  kiln_arena_t *arena;
} kiln_layout_relation_t;

typedef kiln_status_t (*kiln_op_correct_layout_fn)(kiln_layout_relation_t *relation);

/* What a reference kernel sees: output tensors are allocated by the caller
 * with the inferred types. A tuple-typed output (split) is flattened into
 * outputs[0..num_outputs). */
typedef struct kiln_kernel_args_t {
  const kiln_op_t *op;
  const void *attrs;
  int num_inputs;
  kiln_tensor_t *const *inputs;
  int num_outputs;
  kiln_tensor_t *const *outputs;
} kiln_kernel_args_t;

typedef kiln_status_t (*kiln_op_reference_fn)(const kiln_kernel_args_t *args);

/* What a shape function sees: the concrete input tensors (values and all),
 * for an operator whose output shape depends on input values (dyn.reshape's
 * shape, dyn.topk's k). It returns the concrete output type, made in
 * `arena`. */
typedef struct kiln_shape_func_args_t {
  const kiln_op_t *op;
  const void *attrs;
  int num_inputs;
  kiln_tensor_t *const *inputs;
  kiln_arena_t *arena;
} kiln_shape_func_args_t;

typedef kiln_status_t (*kiln_op_shape_func_fn)(const kiln_shape_func_args_t *args,
                                               const kiln_type_t **out_type);

typedef kiln_status_t (*kiln_op_validate_attrs_fn)(const kiln_op_t *op, const void *attrs);

/* Compute rules and schedules (op/compute.h defines the structs). */
typedef struct kiln_compute_args_t kiln_compute_args_t;
typedef struct kiln_compute_result_t kiln_compute_result_t;
typedef struct kiln_schedule_target_t kiln_schedule_target_t;
struct kiln_te_schedule_t;
struct kiln_te_tensor_t;

typedef kiln_status_t (*kiln_op_compute_fn)(const kiln_compute_args_t *args,
                                            kiln_compute_result_t *out_result);
/* Schedules the stages of `schedule`, made from the compute's outputs. */
typedef kiln_status_t (*kiln_op_schedule_fn)(const kiln_schedule_target_t *target,
                                             const kiln_compute_args_t *args,
                                             const kiln_compute_result_t *result,
                                             struct kiln_te_schedule_t *schedule);

/* ---- the operator ---- */

#include "op/op_list.h"

typedef enum kiln_op_id_e {
#define KILN_OP_ENUM_(id, name, symbol) KILN_OP_##id,
  KILN_OP_LIST(KILN_OP_ENUM_)
#undef KILN_OP_ENUM_
      KILN_OP_COUNT_
} kiln_op_id_t;

struct kiln_op_t {
  const char *name; /* Relay's namespaced name: "nn.conv2d", "add" */
  kiln_op_id_t id;
  int min_inputs;
  int max_inputs; /* -1: any number (concatenate) */
  kiln_op_pattern_t pattern;
  size_t attrs_size; /* 0 when the operator has no attributes */
  int num_attr_fields;
  const kiln_attr_field_t *attr_fields;
  kiln_op_validate_attrs_fn validate_attrs; /* optional */
  kiln_op_infer_type_fn infer_type;
  kiln_op_correct_layout_fn correct_layout; /* NULL: layout-agnostic elementwise rule */
  /* The relation handles symbolic dims (op/symbolic.c says what that
   * promises); otherwise inputs with symbolic dims are refused. */
  bool symbolic_dims;
  /* The relation reads symbolic dims itself (it checks
   * kiln_tensor_type_is_static before using a dim), so it gets them as they
   * are, without the probe; implies symbolic_dims. */
  bool symbolic_relation;
  /* The output type from the input values, for an operator whose output
   * shape depends on them; NULL when it depends on input shapes alone, and
   * the type relation run on the concrete input types is the shape
   * function (interp/shapes.c). */
  kiln_op_shape_func_fn shape_func;
};

/* Every operator's definition, defined in the family files. */
#define KILN_OP_DECLARE_(id, name, symbol) extern const kiln_op_t symbol;
KILN_OP_LIST(KILN_OP_DECLARE_)
#undef KILN_OP_DECLARE_

/* ---- registry ---- */

const kiln_op_t *kiln_op_get(kiln_op_id_t id);
/* NOT_FOUND naming the operator when there is none. */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_find(const char *name, const kiln_op_t **out_op);
int kiln_op_count(void);

/* A new attrs struct in the arena with every field at its default (and
 * validated); NULL for an operator with no attributes. */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_attrs_create_default(const kiln_op_t *op,
                                                                kiln_arena_t *arena,
                                                                void **out_attrs);
/* Sets field `name` from its text spelling ("[2, 2]", "\"NCHW\"", "True"). */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_attrs_set_text(const kiln_op_t *op, void *attrs,
                                                          const char *name, const char *text,
                                                          kiln_arena_t *arena);
KILN_MUST_USE_RESULT kiln_status_t kiln_op_attrs_validate(const kiln_op_t *op, const void *attrs);
/* A copy of `attrs` in `arena`, field by field as typed values (strings and
 * lists copied too, so the copy outlives the original's arena); a field the
 * table does not describe keeps its default. NULL for an operator with no
 * attributes. */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_attrs_copy(const kiln_op_t *op, const void *attrs,
                                                      kiln_arena_t *arena, void **out_attrs);
/* Appends "name=value" for every field, in order, comma-separated. */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_attrs_format(const kiln_op_t *op, const void *attrs,
                                                        kiln_strbuf_t *sb);
const kiln_attr_field_t *kiln_op_attr_field(const kiln_op_t *op, const char *name);
/* Appends the value of `field` (one of op's fields) in its text spelling,
 * without the name: 3, 1e-05, True, "NCHW", "float32", [1, 1]. */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_attrs_format_field(const kiln_op_t *op,
                                                              const void *attrs,
                                                              const kiln_attr_field_t *field,
                                                              kiln_strbuf_t *sb);
/* Whether `field` of `attrs` prints as the field's default_text does when
 * read and printed the same way (so "1e-5" and 1e-05 agree); scratch memory
 * comes from `allocator`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_attrs_field_is_default(const kiln_op_t *op,
                                                                  const void *attrs,
                                                                  const kiln_attr_field_t *field,
                                                                  kiln_allocator_t allocator,
                                                                  bool *out_is_default);

/* Runs the type relation after checking the input count and that no input
 * type is missing; errors name the operator. Inputs with symbolic dims go
 * through kiln_op_infer_type_symbolic. */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_infer_type(const kiln_op_t *op, const void *attrs,
                                                      int num_inputs,
                                                      const kiln_type_t *const *inputs,
                                                      kiln_arena_t *arena,
                                                      const kiln_type_t **out_type);

/* The relation of inputs some of which hold symbolic dims: refused (naming
 * the operator, the input and the dim) unless op->symbolic_dims, else run on
 * probe sizes and the output's dims mapped back to variables
 * (op/symbolic.c). */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_infer_type_symbolic(const kiln_type_relation_t *relation,
                                                               const kiln_type_t **out_type);

/* ---- evaluating a call ---- */

/* The most outputs kiln_op_evaluate makes (a split's fields), and the
 * most inputs its callers pass. */
#define KILN_OP_EVALUATE_MAX_TENSORS 64

/* The outputs of one evaluation, which the caller releases
 * (kiln_op_evaluation_release). */
typedef struct kiln_op_evaluation_t {
  int count;
  kiln_tensor_t *outputs[KILN_OP_EVALUATE_MAX_TENSORS];
} kiln_op_evaluation_t;

/* Evaluates a call of `op` on `inputs` with its reference kernel, into new
 * tensors of `type` from `allocator`: one for a tensor type, one per field
 * of a tuple of tensor types. The one function the importer's folding,
 * fold_constant and alter_op_layout evaluate constant calls with.
 * UNIMPLEMENTED (the caller keeps the call) when the operator has no
 * reference kernel, the type nests tuples or has more than
 * KILN_OP_EVALUATE_MAX_TENSORS fields, or the kernel does not take these
 * dtypes; any other error is the kernel's. On error no output remains. */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_evaluate(kiln_allocator_t allocator, const kiln_op_t *op,
                                                    const void *attrs, int num_inputs,
                                                    kiln_tensor_t *const *inputs,
                                                    const kiln_type_t *type,
                                                    kiln_op_evaluation_t *out_evaluation);
/* Evaluates the call `args` describes with args->op's reference kernel,
 * into the outputs the caller made and owns: what kiln_op_evaluate runs,
 * and what the interpreter, the kernel cache's reference path and the dyn
 * operators run. UNIMPLEMENTED naming the operator when it has no
 * reference kernel; any other error is the kernel's. */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_evaluate_into(const kiln_kernel_args_t *args);
/* Whether kiln_op_evaluate can evaluate calls of `op` at all: it has a
 * reference kernel. */
bool kiln_op_can_evaluate(const kiln_op_t *op);

void kiln_op_evaluation_release(kiln_op_evaluation_t *evaluation);

/* ---- helpers shared by rules ---- */

/* The tensor type of input `index`, or INVALID_ARGUMENT naming the operator
 * when it is a tuple. */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_input_tensor(const kiln_type_relation_t *relation,
                                                        int index,
                                                        const kiln_tensor_type_t **out_type);
/* "(1, 3, 224, 224)" of a tensor type into a caller buffer of
 * KILN_SHAPE_TEXT_CAPACITY bytes; returns the buffer. */
const char *kiln_op_shape_text(const kiln_tensor_type_t *type, char *buffer);
/* Normalizes a possibly negative axis against `ndim` (axis in [-ndim, ndim)),
 * or INVALID_ARGUMENT naming the operator. */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_normalize_axis(const kiln_op_t *op, int64_t axis,
                                                          int ndim, int *out_axis);

#endif /* KILN_OP_OP_H_ */
