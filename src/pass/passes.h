/*
 * Every pass kiln has, as one list (X-macro): the registry (pass_registry.c)
 * and the declarations below derive from it, so a pass is named once. Each
 * entry is the pass's file name in src/pass/ and its exported
 * `const kiln_pass_t kiln_pass_<name>`. The order is the default pipeline's.
 */
#ifndef KILN_PASS_PASSES_H_
#define KILN_PASS_PASSES_H_

#include "pass/pass.h"

#define KILN_PASS_LIST(X)     \
  X(infer_type)               \
  X(remove_unused_functions)  \
  X(simplify_inference)       \
  X(eliminate_common_subexpr) \
  X(combine_parallel_conv2d)  \
  X(fold_constant)            \
  X(matmul_to_dense)          \
  X(rewrite_layer_norm)       \
  X(strength_reduce)          \
  X(fold_scale_axis)          \
  X(canonicalize_ops)         \
  X(fast_math)                \
  X(pad_channels)             \
  X(alter_op_layout)          \
  X(pack_dense)               \
  X(dead_code_elimination)    \
  X(split_args)               \
  X(fuse_ops)                 \
  X(plan_memory)

#define KILN_PASS_DECLARE_(name) extern const kiln_pass_t kiln_pass_##name;
KILN_PASS_LIST(KILN_PASS_DECLARE_)
#undef KILN_PASS_DECLARE_

#endif /* KILN_PASS_PASSES_H_ */
