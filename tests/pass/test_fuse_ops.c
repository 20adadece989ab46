/*
 * fuse_ops (pass/fuse_ops.c): the fusion rules as before/after texts, each
 * also run on the interpreter before and after (the numbers must not move):
 * conv + bias + relu in one group, a residual add joining the conv's group,
 * a reduction ending its group (the elementwise op before it joins, the one
 * after it does not), an opaque op alone, the maximum group size, a
 * tuple-valued op whose fields are picked outside its group, diamonds (fused
 * whole, or split by an opaque branch), an injective chain after a dense,
 * opt_level 0 (each call alone), scalar constants kept inside and weights
 * passed in, a second run changing nothing; groups split where their
 * function would take more than KILN_OP_MAX_FUNCTION_ARGS parameters (a
 * chain of adds over 20 inputs, and a 40-way concatenate that split_args
 * cuts first) or more than KILN_OP_MAX_FUNCTION_COMPUTES calls (a chain of
 * 30); the errors; allocation failures;
 * and every built-in workload fused with the same outputs, every operator
 * call inside a primitive function, and the number of groups printed.
 */
#include <string.h>

#include "base/hashmap.h"
#include "frontend/testing/workloads.h"
#include "ir/infer.h"
#include "ir/order.h"
#include "ir/params.h"
#include "kiln_ir_test.h"
#include "kiln_pass_test.h"
#include "op/op.h"

#define CONV_BIAS_RELU                                                               \
  "def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], " \
  "%b: Tensor[(4, 1, 1), float32]) {\n"                                              \
  "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);\n"                                \
  "  %1 = add(%0, %b);\n"                                                            \
  "  %2 = nn.relu(%1);\n"                                                            \
  "  %2\n"                                                                           \
  "}\n"
#define RESIDUAL                                                                     \
  "def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(4, 4, 3, 3), float32], " \
  "%s: Tensor[(4, 1, 1), float32], %b: Tensor[(4, 1, 1), float32]) {\n"              \
  "  %0 = nn.relu(%x);\n"                                                            \
  "  %1 = nn.conv2d(%0, %w, padding=[1, 1, 1, 1]);\n"                                \
  "  %2 = multiply(%1, %s);\n"                                                       \
  "  %3 = add(%2, %b);\n"                                                            \
  "  %4 = add(%3, %0);\n"                                                            \
  "  %5 = nn.relu(%4);\n"                                                            \
  "  %5\n"                                                                           \
  "}\n"
#define REDUCTION                              \
  "def @main(%x: Tensor[(2, 5), float32]) {\n" \
  "  %0 = exp(%x);\n"                          \
  "  %1 = sum(%0, axis=[1]);\n"                \
  "  %2 = sqrt(%1);\n"                         \
  "  %2\n"                                     \
  "}\n"
#define OPAQUE                                                              \
  "def @main(%x: Tensor[(2, 5), float32], %y: Tensor[(2, 5), float32]) {\n" \
  "  %0 = add(%x, %y);\n"                                                   \
  "  %1 = nn.softmax(%0);\n"                                                \
  "  %2 = exp(%1);\n"                                                       \
  "  %2\n"                                                                  \
  "}\n"
#define CHAIN                                  \
  "def @main(%x: Tensor[(2, 5), float32]) {\n" \
  "  %0 = nn.relu(%x);\n"                      \
  "  %1 = exp(%0);\n"                          \
  "  %2 = negative(%1);\n"                     \
  "  %3 = abs(%2);\n"                          \
  "  %4 = sqrt(%3);\n"                         \
  "  %4\n"                                     \
  "}\n"
#define SPLIT                                  \
  "def @main(%x: Tensor[(2, 6), float32]) {\n" \
  "  %0 = split(%x, sections=2, axis=1);\n"    \
  "  %1 = %0.0;\n"                             \
  "  %2 = nn.relu(%1);\n"                      \
  "  %3 = %0.1;\n"                             \
  "  %4 = exp(%3);\n"                          \
  "  (%2, %4)\n"                               \
  "}\n"
#define DIAMOND                                \
  "def @main(%x: Tensor[(2, 5), float32]) {\n" \
  "  %0 = exp(%x);\n"                          \
  "  %1 = sqrt(%0);\n"                         \
  "  %2 = abs(%0);\n"                          \
  "  %3 = add(%1, %2);\n"                      \
  "  %4 = nn.softmax(%3);\n"                   \
  "  %4\n"                                     \
  "}\n"
#define DIAMOND_OPAQUE                         \
  "def @main(%x: Tensor[(2, 5), float32]) {\n" \
  "  %0 = exp(%x);\n"                          \
  "  %1 = nn.softmax(%0);\n"                   \
  "  %2 = abs(%0);\n"                          \
  "  %3 = add(%1, %2);\n"                      \
  "  %3\n"                                     \
  "}\n"
#define INJECTIVE                                                           \
  "def @main(%x: Tensor[(2, 6), float32], %w: Tensor[(4, 6), float32]) {\n" \
  "  %0 = nn.dense(%x, %w);\n"                                              \
  "  %1 = reshape(%0, newshape=[4, 2]);\n"                                  \
  "  %2 = transpose(%1);\n"                                                 \
  "  %3 = nn.relu(%2);\n"                                                   \
  "  %3\n"                                                                  \
  "}\n"

static const char conv_bias_relu_after[] =
    "def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: "
    "Tensor[(4, 1, 1), float32]) -> Tensor[(1, 4, 8, 8), float32] {\n"
    "  %3 = fn (%p0: Tensor[(1, 3, 8, 8), float32], %p1: Tensor[(4, 3, 3, 3), float32], %p2: "
    "Tensor[(4, 1, 1), float32], Primitive=1) -> Tensor[(1, 4, 8, 8), float32] {\n"
    "    %0 = nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1]) /* Tensor[(1, 4, 8, 8), float32] */;\n"
    "    %1 = add(%0, %p2) /* Tensor[(1, 4, 8, 8), float32] */;\n"
    "    %2 = nn.relu(%1) /* Tensor[(1, 4, 8, 8), float32] */;\n"
    "    %2\n"
    "  };\n"
    "  %4 = %3(%x, %w, %b) /* Tensor[(1, 4, 8, 8), float32] */;\n"
    "  %4\n"
    "}\n";

static const char conv_bias_relu_o0_after[] =
    "def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: "
    "Tensor[(4, 1, 1), float32]) -> Tensor[(1, 4, 8, 8), float32] {\n"
    "  %1 = fn (%p0: Tensor[(1, 4, 8, 8), float32], Primitive=1) -> Tensor[(1, 4, 8, 8), float32] "
    "{\n"
    "    %0 = nn.relu(%p0) /* Tensor[(1, 4, 8, 8), float32] */;\n"
    "    %0\n"
    "  };\n"
    "  %3 = fn (%p0: Tensor[(1, 4, 8, 8), float32], %p1: Tensor[(4, 1, 1), float32], Primitive=1) "
    "-> Tensor[(1, 4, 8, 8), float32] {\n"
    "    %2 = add(%p0, %p1) /* Tensor[(1, 4, 8, 8), float32] */;\n"
    "    %2\n"
    "  };\n"
    "  %5 = fn (%p0: Tensor[(1, 3, 8, 8), float32], %p1: Tensor[(4, 3, 3, 3), float32], "
    "Primitive=1) -> Tensor[(1, 4, 8, 8), float32] {\n"
    "    %4 = nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1]) /* Tensor[(1, 4, 8, 8), float32] */;\n"
    "    %4\n"
    "  };\n"
    "  %6 = %5(%x, %w) /* Tensor[(1, 4, 8, 8), float32] */;\n"
    "  %7 = %3(%6, %b) /* Tensor[(1, 4, 8, 8), float32] */;\n"
    "  %8 = %1(%7) /* Tensor[(1, 4, 8, 8), float32] */;\n"
    "  %8\n"
    "}\n";

static const char residual_after[] =
    "def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(4, 4, 3, 3), float32], %s: "
    "Tensor[(4, 1, 1), float32], %b: Tensor[(4, 1, 1), float32]) -> Tensor[(1, 4, 6, 6), float32] "
    "{\n"
    "  %5 = fn (%p0: Tensor[(1, 4, 6, 6), float32], %p1: Tensor[(4, 4, 3, 3), float32], %p2: "
    "Tensor[(4, 1, 1), float32], %p3: Tensor[(4, 1, 1), float32], Primitive=1) -> Tensor[(1, 4, 6, "
    "6), float32] {\n"
    "    %0 = nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1]) /* Tensor[(1, 4, 6, 6), float32] */;\n"
    "    %1 = multiply(%0, %p2) /* Tensor[(1, 4, 6, 6), float32] */;\n"
    "    %2 = add(%1, %p3) /* Tensor[(1, 4, 6, 6), float32] */;\n"
    "    %3 = add(%2, %p0) /* Tensor[(1, 4, 6, 6), float32] */;\n"
    "    %4 = nn.relu(%3) /* Tensor[(1, 4, 6, 6), float32] */;\n"
    "    %4\n"
    "  };\n"
    "  %7 = fn (%p0: Tensor[(1, 4, 6, 6), float32], Primitive=1) -> Tensor[(1, 4, 6, 6), float32] "
    "{\n"
    "    %6 = nn.relu(%p0) /* Tensor[(1, 4, 6, 6), float32] */;\n"
    "    %6\n"
    "  };\n"
    "  %8 = %7(%x) /* Tensor[(1, 4, 6, 6), float32] */;\n"
    "  %9 = %5(%8, %w, %s, %b) /* Tensor[(1, 4, 6, 6), float32] */;\n"
    "  %9\n"
    "}\n";

static const char reduction_after[] =
    "def @main(%x: Tensor[(2, 5), float32]) -> Tensor[(2), float32] {\n"
    "  %1 = fn (%p0: Tensor[(2), float32], Primitive=1) -> Tensor[(2), float32] {\n"
    "    %0 = sqrt(%p0) /* Tensor[(2), float32] */;\n"
    "    %0\n"
    "  };\n"
    "  %4 = fn (%p0: Tensor[(2, 5), float32], Primitive=1) -> Tensor[(2), float32] {\n"
    "    %2 = exp(%p0) /* Tensor[(2, 5), float32] */;\n"
    "    %3 = sum(%2, axis=[1]) /* Tensor[(2), float32] */;\n"
    "    %3\n"
    "  };\n"
    "  %5 = %4(%x) /* Tensor[(2), float32] */;\n"
    "  %6 = %1(%5) /* Tensor[(2), float32] */;\n"
    "  %6\n"
    "}\n";

static const char opaque_after[] =
    "def @main(%x: Tensor[(2, 5), float32], %y: Tensor[(2, 5), float32]) -> Tensor[(2, 5), "
    "float32] {\n"
    "  %1 = fn (%p0: Tensor[(2, 5), float32], Primitive=1) -> Tensor[(2, 5), float32] {\n"
    "    %0 = exp(%p0) /* Tensor[(2, 5), float32] */;\n"
    "    %0\n"
    "  };\n"
    "  %3 = fn (%p0: Tensor[(2, 5), float32], Primitive=1) -> Tensor[(2, 5), float32] {\n"
    "    %2 = nn.softmax(%p0) /* Tensor[(2, 5), float32] */;\n"
    "    %2\n"
    "  };\n"
    "  %5 = fn (%p0: Tensor[(2, 5), float32], %p1: Tensor[(2, 5), float32], Primitive=1) -> "
    "Tensor[(2, 5), float32] {\n"
    "    %4 = add(%p0, %p1) /* Tensor[(2, 5), float32] */;\n"
    "    %4\n"
    "  };\n"
    "  %6 = %5(%x, %y) /* Tensor[(2, 5), float32] */;\n"
    "  %7 = %3(%6) /* Tensor[(2, 5), float32] */;\n"
    "  %8 = %1(%7) /* Tensor[(2, 5), float32] */;\n"
    "  %8\n"
    "}\n";

static const char chain_after[] =
    "def @main(%x: Tensor[(2, 5), float32]) -> Tensor[(2, 5), float32] {\n"
    "  %5 = fn (%p0: Tensor[(2, 5), float32], Primitive=1) -> Tensor[(2, 5), float32] {\n"
    "    %0 = nn.relu(%p0) /* Tensor[(2, 5), float32] */;\n"
    "    %1 = exp(%0) /* Tensor[(2, 5), float32] */;\n"
    "    %2 = negative(%1) /* Tensor[(2, 5), float32] */;\n"
    "    %3 = abs(%2) /* Tensor[(2, 5), float32] */;\n"
    "    %4 = sqrt(%3) /* Tensor[(2, 5), float32] */;\n"
    "    %4\n"
    "  };\n"
    "  %6 = %5(%x) /* Tensor[(2, 5), float32] */;\n"
    "  %6\n"
    "}\n";

static const char split_after[] =
    "def @main(%x: Tensor[(2, 6), float32]) -> (Tensor[(2, 3), float32], Tensor[(2, 3), float32]) "
    "{\n"
    "  %1 = fn (%p0: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(2, 3), float32] {\n"
    "    %0 = nn.relu(%p0) /* Tensor[(2, 3), float32] */;\n"
    "    %0\n"
    "  };\n"
    "  %3 = fn (%p0: Tensor[(2, 6), float32], Primitive=1) -> (Tensor[(2, 3), float32], Tensor[(2, "
    "3), float32]) {\n"
    "    %2 = split(%p0, sections=2, axis=1) /* (Tensor[(2, 3), float32], Tensor[(2, 3), float32]) "
    "*/;\n"
    "    %2\n"
    "  };\n"
    "  %4 = %3(%x) /* (Tensor[(2, 3), float32], Tensor[(2, 3), float32]) */;\n"
    "  %5 = %4.0 /* Tensor[(2, 3), float32] */;\n"
    "  %6 = %1(%5) /* Tensor[(2, 3), float32] */;\n"
    "  %8 = fn (%p0: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(2, 3), float32] {\n"
    "    %7 = exp(%p0) /* Tensor[(2, 3), float32] */;\n"
    "    %7\n"
    "  };\n"
    "  %9 = %4.1 /* Tensor[(2, 3), float32] */;\n"
    "  %10 = %8(%9) /* Tensor[(2, 3), float32] */;\n"
    "  %11 = (%6, %10) /* (Tensor[(2, 3), float32], Tensor[(2, 3), float32]) */;\n"
    "  %11\n"
    "}\n";

static const char diamond_after[] =
    "def @main(%x: Tensor[(2, 5), float32]) -> Tensor[(2, 5), float32] {\n"
    "  %1 = fn (%p0: Tensor[(2, 5), float32], Primitive=1) -> Tensor[(2, 5), float32] {\n"
    "    %0 = nn.softmax(%p0) /* Tensor[(2, 5), float32] */;\n"
    "    %0\n"
    "  };\n"
    "  %6 = fn (%p0: Tensor[(2, 5), float32], Primitive=1) -> Tensor[(2, 5), float32] {\n"
    "    %2 = exp(%p0) /* Tensor[(2, 5), float32] */;\n"
    "    %3 = sqrt(%2) /* Tensor[(2, 5), float32] */;\n"
    "    %4 = abs(%2) /* Tensor[(2, 5), float32] */;\n"
    "    %5 = add(%3, %4) /* Tensor[(2, 5), float32] */;\n"
    "    %5\n"
    "  };\n"
    "  %7 = %6(%x) /* Tensor[(2, 5), float32] */;\n"
    "  %8 = %1(%7) /* Tensor[(2, 5), float32] */;\n"
    "  %8\n"
    "}\n";

static const char diamond_opaque_after[] =
    "def @main(%x: Tensor[(2, 5), float32]) -> Tensor[(2, 5), float32] {\n"
    "  %2 = fn (%p0: Tensor[(2, 5), float32], %p1: Tensor[(2, 5), float32], Primitive=1) -> "
    "Tensor[(2, 5), float32] {\n"
    "    %0 = abs(%p0) /* Tensor[(2, 5), float32] */;\n"
    "    %1 = add(%p1, %0) /* Tensor[(2, 5), float32] */;\n"
    "    %1\n"
    "  };\n"
    "  %4 = fn (%p0: Tensor[(2, 5), float32], Primitive=1) -> Tensor[(2, 5), float32] {\n"
    "    %3 = exp(%p0) /* Tensor[(2, 5), float32] */;\n"
    "    %3\n"
    "  };\n"
    "  %5 = %4(%x) /* Tensor[(2, 5), float32] */;\n"
    "  %7 = fn (%p0: Tensor[(2, 5), float32], Primitive=1) -> Tensor[(2, 5), float32] {\n"
    "    %6 = nn.softmax(%p0) /* Tensor[(2, 5), float32] */;\n"
    "    %6\n"
    "  };\n"
    "  %8 = %7(%5) /* Tensor[(2, 5), float32] */;\n"
    "  %9 = %2(%5, %8) /* Tensor[(2, 5), float32] */;\n"
    "  %9\n"
    "}\n";

static const char injective_after[] =
    "def @main(%x: Tensor[(2, 6), float32], %w: Tensor[(4, 6), float32]) -> Tensor[(2, 4), "
    "float32] {\n"
    "  %3 = fn (%p0: Tensor[(2, 4), float32], Primitive=1) -> Tensor[(2, 4), float32] {\n"
    "    %0 = reshape(%p0, newshape=[4, 2]) /* Tensor[(4, 2), float32] */;\n"
    "    %1 = transpose(%0) /* Tensor[(2, 4), float32] */;\n"
    "    %2 = nn.relu(%1) /* Tensor[(2, 4), float32] */;\n"
    "    %2\n"
    "  };\n"
    "  %5 = fn (%p0: Tensor[(2, 6), float32], %p1: Tensor[(4, 6), float32], Primitive=1) -> "
    "Tensor[(2, 4), float32] {\n"
    "    %4 = nn.dense(%p0, %p1) /* Tensor[(2, 4), float32] */;\n"
    "    %4\n"
    "  };\n"
    "  %6 = %5(%x, %w) /* Tensor[(2, 4), float32] */;\n"
    "  %7 = %3(%6) /* Tensor[(2, 4), float32] */;\n"
    "  %7\n"
    "}\n";

static const char chain_depth2_after[] =
    "def @main(%x: Tensor[(2, 5), float32]) -> Tensor[(2, 5), float32] {\n"
    "  %1 = fn (%p0: Tensor[(2, 5), float32], Primitive=1) -> Tensor[(2, 5), float32] {\n"
    "    %0 = sqrt(%p0) /* Tensor[(2, 5), float32] */;\n"
    "    %0\n"
    "  };\n"
    "  %4 = fn (%p0: Tensor[(2, 5), float32], Primitive=1) -> Tensor[(2, 5), float32] {\n"
    "    %2 = negative(%p0) /* Tensor[(2, 5), float32] */;\n"
    "    %3 = abs(%2) /* Tensor[(2, 5), float32] */;\n"
    "    %3\n"
    "  };\n"
    "  %7 = fn (%p0: Tensor[(2, 5), float32], Primitive=1) -> Tensor[(2, 5), float32] {\n"
    "    %5 = nn.relu(%p0) /* Tensor[(2, 5), float32] */;\n"
    "    %6 = exp(%5) /* Tensor[(2, 5), float32] */;\n"
    "    %6\n"
    "  };\n"
    "  %8 = %7(%x) /* Tensor[(2, 5), float32] */;\n"
    "  %9 = %4(%8) /* Tensor[(2, 5), float32] */;\n"
    "  %10 = %1(%9) /* Tensor[(2, 5), float32] */;\n"
    "  %10\n"
    "}\n";

static const char constants_after[] =
    "def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
    "  %3 = fn (%p0: Tensor[(2, 3), float32], %p1: Tensor[(2, 3), float32], Primitive=1) -> "
    "Tensor[(2, 3), float32] {\n"
    "    %0 = multiply(%p0, meta[Constant][0]) /* Tensor[(2, 3), float32] */;\n"
    "    %1 = add(%0, %p1) /* Tensor[(2, 3), float32] */;\n"
    "    %2 = nn.relu(%1) /* Tensor[(2, 3), float32] */;\n"
    "    %2\n"
    "  };\n"
    "  %4 = %3(%x, meta[Constant][1]) /* Tensor[(2, 3), float32] */;\n"
    "  %4\n"
    "}\n";

/* resnet18: a group per conv (20, each with its batch norm, relu and, for
 * one conv of each block, the residual add), the max pool, the global pool,
 * the flatten and the dense with its bias. */
#define RESNET18_GROUPS 24

static void test_conv_bias_relu_is_one_group(void **state) {
  (void)state;
  kpt_check(CONV_BIAS_RELU, 2, "fuse_ops", conv_bias_relu_after);
}

static void test_opt_level_0_puts_each_call_alone(void **state) {
  (void)state;
  kpt_check(CONV_BIAS_RELU, 0, "fuse_ops", conv_bias_relu_o0_after);
}

static void test_residual_add_joins_the_conv(void **state) {
  (void)state;
  kpt_check(RESIDUAL, 2, "fuse_ops", residual_after);
}

static void test_reduction_ends_its_group(void **state) {
  (void)state;
  kpt_check(REDUCTION, 2, "fuse_ops", reduction_after);
}

static void test_opaque_op_is_alone(void **state) {
  (void)state;
  kpt_check(OPAQUE, 2, "fuse_ops", opaque_after);
}

static void test_max_depth(void **state) {
  (void)state;
  kpt_check(CHAIN, 2, "fuse_ops", chain_after);
  kiln_pass_context_t *context = kpt_context(2);
  KILN_ASSERT_OK(kiln_pass_context_set_option(context, "fuse_ops.max_depth", "2"));
  kpt_check_in(CHAIN, context, "fuse_ops", chain_depth2_after);
  kiln_pass_context_destroy(context);
}

static void test_tuple_result_is_picked_outside(void **state) {
  (void)state;
  kpt_check(SPLIT, 2, "fuse_ops", split_after);
}

static void test_diamonds(void **state) {
  (void)state;
  kpt_check(DIAMOND, 2, "fuse_ops", diamond_after);
  kpt_check(DIAMOND_OPAQUE, 2, "fuse_ops", diamond_opaque_after);
}

static void test_injective_chain_after_dense(void **state) {
  (void)state;
  kpt_check(INJECTIVE, 2, "fuse_ops", injective_after);
}

static void test_second_run_changes_nothing(void **state) {
  (void)state;
  kiln_module_t *m = kpt_parse(RESIDUAL);
  kiln_pass_context_t *context = kpt_context(2);
  kpt_expect_in(m, context, "fuse_ops", residual_after);
  kpt_expect_in(m, context, "fuse_ops", residual_after);
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
}

/* main(x) = relu(x * 2 + c) with a scalar 2 and a (2, 3) constant c. */
static kiln_module_t *constants_module(void) {
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  kiln_expr_t *two = irt_constant_f32(m, 0, NULL, (const float[]){2.0f});
  kiln_expr_t *c = irt_constant_f32(m, 2, SHAPE(2, 3), (const float[]){1, -2, 3, -4, 5, -6});
  kiln_expr_t *y = IRT_CALL(m, "multiply", NULL, &x->base, two);
  kiln_expr_t *z = IRT_CALL(m, "add", NULL, y, c);
  irt_add_function(m, "main", 1, &x, IRT_CALL(m, "nn.relu", NULL, z));
  return m;
}

static void test_scalar_constants_stay_inside(void **state) {
  (void)state;
  kiln_module_t *reference = constants_module();
  KILN_ASSERT_OK(kiln_ir_infer_types(reference));
  kiln_module_t *m = constants_module();
  kiln_pass_context_t *context = kpt_context(2);
  kpt_expect_in(m, context, "fuse_ops", constants_after);
  kiln_pass_context_destroy(context);
  kpt_assert_same_numbers(reference, m, 3);
  kiln_module_destroy(reference);
  kiln_module_destroy(m);
}

/* ---- counting groups ---- */

typedef struct census_t {
  int functions;     /* calls of primitive functions in main */
  int loose_ops;     /* operator calls in main outside any primitive function */
  int fused_ops;     /* operator calls inside them */
  int largest_group; /* operator calls in the largest one */
} census_t;

static int count_ops(const kiln_function_t *function) {
  kiln_ir_order_t order;
  KILN_ASSERT_OK(kiln_ir_order_compute(function, kiln_allocator_system(), &order));
  int count = 0;
  for (size_t i = 0; i < kiln_ir_order_count(&order); ++i) {
    kiln_call_t *call = kiln_expr_as_call(kiln_ir_order_node(&order, i));
    count += call && call->op ? 1 : 0;
  }
  kiln_ir_order_deinitialize(&order);
  return count;
}

/* Walks main without entering callees. */
static census_t take_census(const kiln_module_t *m) {
  census_t census = {0, 0, 0, 0};
  kiln_function_t *main_fn = kiln_module_get_function(m, "main");
  kiln_hashmap_t seen;
  kiln_hashmap_initialize(&seen, kiln_allocator_system(), KILN_HASHMAP_KEY_POINTER);
  kiln_array_t stack;
  kiln_array_initialize(&stack, kiln_allocator_system(), sizeof(kiln_expr_t *));
  KILN_ASSERT_OK(kiln_array_push(&stack, &main_fn->body));
  kiln_expr_t *expr = NULL;
  while (kiln_array_pop(&stack, &expr)) {
    if (kiln_hashmap_contains(&seen, expr)) {
      continue;
    }
    KILN_ASSERT_OK(kiln_hashmap_put(&seen, expr, NULL));
    kiln_call_t *call = kiln_expr_as_call(expr);
    kiln_tuple_t *tuple = kiln_expr_as_tuple(expr);
    kiln_tuple_get_item_t *item = kiln_expr_as_tuple_get_item(expr);
    if (call) {
      census.loose_ops += call->op ? 1 : 0;
      if (call->callee) {
        assert_true(call->callee->primitive);
        int ops = count_ops(call->callee);
        census.functions += 1;
        census.fused_ops += ops;
        census.largest_group = ops > census.largest_group ? ops : census.largest_group;
      }
      KILN_ASSERT_OK(kiln_array_push_n(&stack, call->args, (size_t)call->num_args));
    } else if (tuple) {
      KILN_ASSERT_OK(kiln_array_push_n(&stack, tuple->fields, (size_t)tuple->num_fields));
    } else if (item) {
      KILN_ASSERT_OK(kiln_array_push(&stack, &item->tuple));
    }
  }
  kiln_array_deinitialize(&stack);
  kiln_hashmap_deinitialize(&seen);
  return census;
}

/* ---- the kernel argument limit ---- */

#define WIDE_INPUTS 20

/* main(x0..x19) = x0 + x1 + ... + x19, a chain of adds: all elementwise,
 * one group of 20 parameters without the limit. */
static kiln_module_t *add_chain_module(void) {
  kiln_module_t *m = irt_module();
  kiln_var_t *x[WIDE_INPUTS];
  for (int i = 0; i < WIDE_INPUTS; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "x%d", i);
    x[i] = irt_var(m, name, KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  }
  kiln_expr_t *sum = &x[0]->base;
  for (int i = 1; i < WIDE_INPUTS; ++i) {
    sum = IRT_CALL(m, "add", NULL, sum, &x[i]->base);
  }
  irt_add_function(m, "main", WIDE_INPUTS, x, sum);
  return m;
}

/* main(x0..x39) = relu(concatenate(exp(x0), ..., exp(x39), axis=1)). */
static kiln_module_t *concatenate_40(void) {
  kiln_module_t *m = irt_module();
  kiln_var_t *x[40];
  kiln_expr_t *parts[40];
  for (int i = 0; i < 40; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "x%d", i);
    x[i] = irt_var(m, name, KILN_DTYPE_FLOAT32, 4, SHAPE(1, 2, 3, 3));
    parts[i] = IRT_CALL(m, "exp", NULL, &x[i]->base);
  }
  kiln_expr_t *joined =
      irt_call(m, "concatenate", IRT_ATTRS("axis", "1"), 40, (kiln_expr_t *const *)parts);
  irt_add_function(m, "main", 40, x, IRT_CALL(m, "nn.relu", NULL, joined));
  return m;
}

/* The parameter counts of main's primitive functions, ascending, into
 * params (at most 64); returns how many there are. */
static int function_params(const kiln_module_t *m, int *params) {
  kiln_ir_order_t order;
  KILN_ASSERT_OK(
      kiln_ir_order_compute(kiln_module_get_function(m, "main"), kiln_allocator_system(), &order));
  int count = 0;
  for (size_t i = 0; i < kiln_ir_order_count(&order); ++i) {
    kiln_function_t *function = kiln_expr_as_function(kiln_ir_order_node(&order, i));
    if (function && function->primitive) {
      assert_true(count < 64);
      params[count++] = function->num_params;
    }
  }
  kiln_ir_order_deinitialize(&order);
  for (int i = 1; i < count; ++i) { /* insertion sort */
    for (int j = i; j > 0 && params[j - 1] > params[j]; --j) {
      int t = params[j];
      params[j] = params[j - 1];
      params[j - 1] = t;
    }
  }
  return count;
}

/* Fuses a copy of `make()` at opt_level 2, checks every function's
 * parameters against the limit and the numbers against the unfused module;
 * returns the number of functions and their parameter counts. */
static int fuse_within_limit(kiln_module_t *(*make)(void), int *params) {
  kiln_module_t *reference = make();
  KILN_ASSERT_OK(kiln_ir_infer_types(reference));
  kiln_module_t *m = make();
  kiln_pass_context_t *context = kpt_context(2);
  KILN_ASSERT_OK(kpt_run(m, context, "fuse_ops"));
  kiln_pass_context_destroy(context);
  int count = function_params(m, params);
  for (int i = 0; i < count; ++i) {
    assert_in_range(params[i], 1, KILN_OP_MAX_FUNCTION_ARGS);
  }
  kpt_assert_same_numbers(reference, m, 7);
  kiln_module_destroy(reference);
  kiln_module_destroy(m);
  return count;
}

static void test_groups_split_at_the_argument_limit(void **state) {
  (void)state;
  assert_int_equal(KILN_OP_MAX_FUNCTION_ARGS, 16);
  int params[64];
  /* x0..x15 go into the first 15 adds; the 16th add would make 17. */
  assert_int_equal(fuse_within_limit(add_chain_module, params), 2);
  assert_int_equal(params[0], 5); /* the first group's sum and x16..x19 */
  assert_int_equal(params[1], 16);
}

static void test_wide_concatenate_is_split(void **state) {
  (void)state;
  int params[64];
  /* split_args cuts the 40 inputs into parts of 13, 13 and 14; each
   * exp joins its part; the first part joins the outer concatenate and
   * the relu (13 + 2 parameters), the other two would make 27 there. */
  assert_int_equal(fuse_within_limit(concatenate_40, params), 3);
  assert_int_equal(params[0], 13);
  assert_int_equal(params[1], 14);
  assert_int_equal(params[2], 15);
}

/* main(x) = negative(negative(... x)), 30 calls: one group without the
 * compute limit. */
static kiln_module_t *long_chain(void) {
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  kiln_expr_t *value = &x->base;
  for (int i = 0; i < 30; ++i) {
    value = IRT_CALL(m, "negative", NULL, value);
  }
  irt_add_function(m, "main", 1, &x, value);
  return m;
}

static void test_groups_split_at_the_compute_limit(void **state) {
  (void)state;
  kiln_module_t *reference = long_chain();
  KILN_ASSERT_OK(kiln_ir_infer_types(reference));
  kiln_module_t *m = long_chain();
  kiln_pass_context_t *context = kpt_context(2);
  KILN_ASSERT_OK(kpt_run(m, context, "fuse_ops"));
  kiln_pass_context_destroy(context);
  census_t census = take_census(m);
  assert_int_equal(KILN_OP_MAX_FUNCTION_COMPUTES, 24);
  assert_int_equal(census.functions, 2);
  assert_int_equal(census.fused_ops, 30);
  assert_int_equal(census.largest_group, 24);
  kpt_assert_same_numbers(reference, m, 9);
  kiln_module_destroy(reference);
  kiln_module_destroy(m);
}

static void test_errors(void **state) {
  (void)state;
  kiln_module_t *m = kpt_parse(CHAIN);
  kiln_pass_context_t *context = kpt_context(2);
  KILN_ASSERT_OK(kiln_pass_context_set_option(context, "fuse_ops.max_depth", "0"));
  KILN_ASSERT_STATUS(kpt_run(m, context, "fuse_ops"), INVALID_ARGUMENT,
                     "fuse_ops: option fuse_ops.max_depth must be at least 1, got 0");
  KILN_ASSERT_OK(kiln_pass_context_set_option(context, "fuse_ops.max_depth", "deep"));
  KILN_ASSERT_STATUS(kpt_run(m, context, "fuse_ops"), INVALID_ARGUMENT, "fuse_ops.max_depth");
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);

  /* Run directly, without infer_type before it. */
  m = constants_module();
  context = kpt_context(2);
  KILN_ASSERT_STATUS(kiln_pass_fuse_ops.run(m, context), FAILED_PRECONDITION,
                     "types are missing in @main: a Var has no checked type (run infer_type "
                     "first)");
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
}

static kiln_status_t fuse_scenario(kiln_allocator_t allocator, void *data) {
  (void)data;
  kiln_module_t *m = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_parse_module("before", RESIDUAL, allocator, &m));
  kiln_pass_context_t *context = NULL;
  kiln_status_t status = kiln_pass_context_create(allocator, 2, &context);
  const kiln_pass_t *pass = &kiln_pass_fuse_ops;
  if (!status) {
    status = kiln_pass_sequential_run(m, context, &pass, 1);
  }
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(fuse_scenario, NULL) > 10);
}

/* ---- the built-in workloads ---- */

static void test_workloads_keep_their_numbers(void **state) {
  (void)state;
  for (const char *const *name = kiln_workload_names(); *name; ++name) {
    kiln_params_t params_a, params_b;
    kiln_module_t *reference = kpt_build_workload(*name, &params_a);
    kiln_module_t *m = kpt_build_workload(*name, &params_b);
    int ops = take_census(m).loose_ops;
    kiln_pass_context_t *context = kpt_context(2);
    KILN_ASSERT_OK(kpt_run(m, context, "fuse_ops"));
    kiln_pass_context_destroy(context);
    census_t census = take_census(m);
    printf("%-14s %4d operator calls in %3d primitive functions (largest: %d calls)\n", *name,
           census.fused_ops, census.functions, census.largest_group);
    assert_int_equal(census.loose_ops, 0);
    assert_int_equal(census.fused_ops, ops);
    assert_true(census.functions < ops);
    if (strcmp(*name, "resnet18") == 0) {
      assert_int_equal(census.functions, RESNET18_GROUPS);
    }
    kpt_assert_same_numbers(reference, m, 5);
    kiln_module_destroy(reference);
    kiln_module_destroy(m);
    kiln_params_deinitialize(&params_a);
    kiln_params_deinitialize(&params_b);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv_bias_relu_is_one_group),
      cmocka_unit_test(test_opt_level_0_puts_each_call_alone),
      cmocka_unit_test(test_residual_add_joins_the_conv),
      cmocka_unit_test(test_reduction_ends_its_group),
      cmocka_unit_test(test_opaque_op_is_alone),
      cmocka_unit_test(test_max_depth),
      cmocka_unit_test(test_tuple_result_is_picked_outside),
      cmocka_unit_test(test_diamonds),
      cmocka_unit_test(test_injective_chain_after_dense),
      cmocka_unit_test(test_second_run_changes_nothing),
      cmocka_unit_test(test_scalar_constants_stay_inside),
      cmocka_unit_test(test_groups_split_at_the_argument_limit),
      cmocka_unit_test(test_wide_concatenate_is_split),
      cmocka_unit_test(test_groups_split_at_the_compute_limit),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_allocation_failures),
      cmocka_unit_test(test_workloads_keep_their_numbers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
