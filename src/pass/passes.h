/*
 * Every pass kiln has, as one list (X-macro): the registry (pass_registry.c)
 * and the declarations below derive from it, so a pass is named once. Each
 * entry is the pass's file name in src/pass/ and its exported
 * `const kiln_pass_t kiln_pass_<name>`. The order is the default pipeline's.
 */
#ifndef KILN_PASS_PASSES_H_
#define KILN_PASS_PASSES_H_

#include "pass/pass.h"

#define KILN_PASS_LIST(X) X(infer_type) X(alter_op_layout) X(fuse_ops) X(plan_memory)

#define KILN_PASS_DECLARE_(name) extern const kiln_pass_t kiln_pass_##name;
KILN_PASS_LIST(KILN_PASS_DECLARE_)
#undef KILN_PASS_DECLARE_

#endif /* KILN_PASS_PASSES_H_ */
