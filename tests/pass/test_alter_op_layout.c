/*
 * alter_op_layout (pass/alter_op_layout.c): before/after texts for
 * conv-relu-conv (the first conv's 3 input channels give ic = 3, no
 * transform between the convs), conv-add(bias)-relu (the per-channel bias
 * blocked as CHW8c), a resnet block with its residual, pooling and the
 * return to NCHW before batch_flatten, the block option, an explicit
 * transform pair cancelled, a depthwise conv blocked by its own channels
 * before a conv with 17 output channels left alone, MobileNet's inverted
 * residual (1x1, depthwise, 1x1 with no transform between the blocked
 * convs: the depthwise conv takes its producer's block), a fire module's
 * concatenate kept blocked (and one of mixed blocks that is not), channel
 * splits and slices on chunk boundaries kept blocked, and the pass
 * followed by fuse_ops; every one also on
 * the interpreter before and after. Constant weights are transformed at
 * compile time (no layout_transform left on them). opt_level 2 skips the
 * pass; its errors; allocation failures; and every built-in workload after
 * alter_op_layout and fuse_ops gives the interpreter's numbers of before.
 */
#include <string.h>

#include "frontend/testing/workloads.h"
#include "ir/infer.h"
#include "ir/order.h"
#include "ir/params.h"
#include "kiln_ir_test.h"
#include "kiln_pass_test.h"
#include "op/op.h"

/* A SqueezeNet fire module: squeeze, two expands (16 channels each,
 * blocked NCHW16c), their concatenate, and the next squeeze reading it. */
#define FIRE                                                                          \
  "def @main(%x: Tensor[(1, 8, 4, 4), float32], %w1: Tensor[(8, 8, 1, 1), float32], " \
  "%w2: Tensor[(16, 8, 1, 1), float32], %w3: Tensor[(16, 8, 3, 3), float32], "        \
  "%w4: Tensor[(16, 32, 1, 1), float32]) {\n"                                         \
  "  %0 = nn.conv2d(%x, %w1);\n"                                                      \
  "  %1 = nn.relu(%0);\n"                                                             \
  "  %2 = nn.conv2d(%1, %w2);\n"                                                      \
  "  %3 = nn.relu(%2);\n"                                                             \
  "  %4 = nn.conv2d(%1, %w3, padding=[1, 1, 1, 1]);\n"                                \
  "  %5 = nn.relu(%4);\n"                                                             \
  "  %6 = concatenate(%3, %5, axis=1);\n"                                             \
  "  %7 = nn.conv2d(%6, %w4);\n"                                                      \
  "  %7\n"                                                                            \
  "}\n"
/* The same with expands of 16 and 12 channels: blocks 16 and 12 differ, so
 * the concatenate reads NCHW as before. */
#define FIRE_MIXED                                                                    \
  "def @main(%x: Tensor[(1, 8, 4, 4), float32], %w1: Tensor[(8, 8, 1, 1), float32], " \
  "%w2: Tensor[(16, 8, 1, 1), float32], %w3: Tensor[(12, 8, 3, 3), float32], "        \
  "%w4: Tensor[(16, 28, 1, 1), float32]) {\n"                                         \
  "  %0 = nn.conv2d(%x, %w1);\n"                                                      \
  "  %1 = nn.relu(%0);\n"                                                             \
  "  %2 = nn.conv2d(%1, %w2);\n"                                                      \
  "  %3 = nn.relu(%2);\n"                                                             \
  "  %4 = nn.conv2d(%1, %w3, padding=[1, 1, 1, 1]);\n"                                \
  "  %5 = nn.relu(%4);\n"                                                             \
  "  %6 = concatenate(%3, %5, axis=1);\n"                                             \
  "  %7 = nn.conv2d(%6, %w4);\n"                                                      \
  "  %7\n"                                                                            \
  "}\n"
/* Channel slices of a blocked NCHW16c value: a split at 16 and a
 * strided_slice of channels [16, 32) stay blocked; a split at 8 does not
 * fall on a chunk boundary and reads NCHW. */
#define SLICES                                                                         \
  "def @main(%x: Tensor[(1, 8, 4, 4), float32], %w1: Tensor[(32, 8, 1, 1), float32], " \
  "%w2: Tensor[(16, 16, 1, 1), float32]) {\n"                                          \
  "  %0 = nn.conv2d(%x, %w1);\n"                                                       \
  "  %1 = nn.relu(%0);\n"                                                              \
  "  %2 = split(%1, indices=[16], axis=1);\n"                                          \
  "  %3 = %2.0;\n"                                                                     \
  "  %4 = %2.1;\n"                                                                     \
  "  %5 = add(%3, %4);\n"                                                              \
  "  %6 = strided_slice(%1, begin=[16], end=[32], axes=[1]);\n"                        \
  "  %7 = multiply(%5, %6);\n"                                                         \
  "  %8 = nn.conv2d(%7, %w2);\n"                                                       \
  "  %9 = split(%1, indices=[8], axis=1);\n"                                           \
  "  %10 = %9.0;\n"                                                                    \
  "  (%8, %10)\n"                                                                      \
  "}\n"
#define SHUFFLE                                                                          \
  "def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(32, 16, 1, 1), float32], " \
  "%w2: Tensor[(16, 32, 1, 1), float32]) {\n"                                            \
  "  %0 = nn.conv2d(%x, %w1);\n"                                                         \
  "  %1 = reshape(%0, newshape=[1, 2, 16, 4, 4]);\n"                                     \
  "  %2 = transpose(%1, axes=[0, 2, 1, 3, 4]);\n"                                        \
  "  %3 = reshape(%2, newshape=[1, 32, 4, 4]);\n"                                        \
  "  %4 = nn.relu(%3);\n"                                                                \
  "  %5 = nn.pad(%4, pad_width=[0, 0, 0, 0, 1, 1, 1, 1]);\n"                             \
  "  %6 = nn.avg_pool2d(%5, pool_size=[2, 2], strides=[2, 2]);\n"                        \
  "  %7 = nn.conv2d(%6, %w2);\n"                                                         \
  "  %7\n"                                                                               \
  "}\n"
#define CONV_RELU_CONV                                                                 \
  "def @main(%x: Tensor[(1, 3, 6, 6), float32], %w1: Tensor[(32, 3, 3, 3), float32], " \
  "%w2: Tensor[(16, 32, 1, 1), float32]) {\n"                                          \
  "  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);\n"                                 \
  "  %1 = nn.relu(%0);\n"                                                              \
  "  %2 = nn.conv2d(%1, %w2);\n"                                                       \
  "  %2\n"                                                                             \
  "}\n"
#define CONV_BIAS_RELU                                                               \
  "def @main(%x: Tensor[(1, 8, 5, 5), float32], %w: Tensor[(8, 8, 3, 3), float32], " \
  "%b: Tensor[(8, 1, 1), float32]) {\n"                                              \
  "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);\n"                                \
  "  %1 = add(%0, %b);\n"                                                            \
  "  %2 = nn.relu(%1);\n"                                                            \
  "  %2\n"                                                                           \
  "}\n"
#define RESIDUAL                                                                         \
  "def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(16, 16, 3, 3), float32], " \
  "%w2: Tensor[(16, 16, 3, 3), float32], %s: Tensor[(16, 1, 1), float32]) {\n"           \
  "  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);\n"                                   \
  "  %1 = nn.relu(%0);\n"                                                                \
  "  %2 = nn.conv2d(%1, %w2, padding=[1, 1, 1, 1]);\n"                                   \
  "  %3 = multiply(%2, %s);\n"                                                           \
  "  %4 = add(%3, %x);\n"                                                                \
  "  %5 = nn.relu(%4);\n"                                                                \
  "  %6 = nn.max_pool2d(%5, pool_size=[2, 2], strides=[2, 2]);\n"                        \
  "  %7 = nn.global_avg_pool2d(%6);\n"                                                   \
  "  %8 = nn.batch_flatten(%7);\n"                                                       \
  "  %8\n"                                                                               \
  "}\n"
#define PAIR                                                                   \
  "def @main(%x: Tensor[(1, 16, 2, 2), float32]) {\n"                          \
  "  %0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\");\n" \
  "  %1 = layout_transform(%0, src_layout=\"NCHW8c\", dst_layout=\"NCHW\");\n" \
  "  %2 = nn.relu(%1);\n"                                                      \
  "  %2\n"                                                                     \
  "}\n"

#define DEPTHWISE                                                                    \
  "def @main(%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(8, 1, 3, 3), float32], " \
  "%v: Tensor[(17, 8, 1, 1), float32]) {\n"                                          \
  "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=8);\n"                      \
  "  %1 = nn.conv2d(%0, %v);\n"                                                      \
  "  %1\n"                                                                           \
  "}\n"

/* A ResNeXt-style bottleneck: 1x1, grouped 3x3 (4 groups of 8 input and 8
 * output channels), 1x1; then a grouped conv whose groups hold 4 input and
 * 6 output channels (blocks 4 and 6), and one with 1 output channel per
 * group, which stays NCHW. */
#define GROUPED                                                                          \
  "def @main(%x: Tensor[(1, 16, 5, 5), float32], %w1: Tensor[(32, 16, 1, 1), float32], " \
  "%w2: Tensor[(32, 8, 3, 3), float32], %w3: Tensor[(16, 32, 1, 1), float32], "          \
  "%w4: Tensor[(24, 4, 3, 3), float32], %w5: Tensor[(4, 6, 1, 1), float32]) {\n"         \
  "  %0 = nn.conv2d(%x, %w1);\n"                                                         \
  "  %1 = nn.relu(%0);\n"                                                                \
  "  %2 = nn.conv2d(%1, %w2, strides=[2, 2], padding=[1, 1, 1, 1], groups=4);\n"         \
  "  %3 = nn.relu(%2);\n"                                                                \
  "  %4 = nn.conv2d(%3, %w3);\n"                                                         \
  "  %5 = nn.conv2d(%4, %w4, padding=[1, 1, 1, 1], groups=4);\n"                         \
  "  %6 = nn.conv2d(%5, %w5, groups=4);\n"                                               \
  "  %6\n"                                                                               \
  "}\n"

/* MobileNet v2's inverted residual: 1x1 expand, depthwise 3x3 (stride 1),
 * 1x1 project, each with a per-channel bias; clip after the first two. */
#define MOBILENET_BLOCK                                                                \
  "def @main(%x: Tensor[(1, 8, 7, 7), float32], %w1: Tensor[(32, 8, 1, 1), float32], " \
  "%b1: Tensor[(32, 1, 1), float32], %w2: Tensor[(32, 1, 3, 3), float32], "            \
  "%b2: Tensor[(32, 1, 1), float32], %w3: Tensor[(8, 32, 1, 1), float32]) {\n"         \
  "  %0 = nn.conv2d(%x, %w1);\n"                                                       \
  "  %1 = add(%0, %b1);\n"                                                             \
  "  %2 = clip(%1, a_min=0, a_max=6);\n"                                               \
  "  %3 = nn.conv2d(%2, %w2, padding=[1, 1, 1, 1], groups=32);\n"                      \
  "  %4 = add(%3, %b2);\n"                                                             \
  "  %5 = clip(%4, a_min=0, a_max=6);\n"                                               \
  "  %6 = nn.conv2d(%5, %w3);\n"                                                       \
  "  %7 = add(%6, %x);\n"                                                              \
  "  %7\n"                                                                             \
  "}\n"

static const char grouped_after[] =
    "def @main(%x: Tensor[(1, 16, 5, 5), float32], %w1: Tensor[(32, 16, 1, 1), float32], %w2: "
    "Tensor[(32, 8, 3, 3), float32], %w3: Tensor[(16, 32, 1, 1), float32], %w4: Tensor[(24, 4, 3, "
    "3), float32], %w5: Tensor[(4, 6, 1, 1), float32]) -> Tensor[(1, 4, 3, 3), float32] {\n"
    "  %0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW16c\") /* Tensor[(1, 1, 5, "
    "5, 16), float32] */;\n"
    "  %1 = layout_transform(%w1, src_layout=\"OIHW\", dst_layout=\"OIHW16i16o\") /* Tensor[(2, 1, "
    "1, 1, 16, 16), float32] */;\n"
    "  %2 = nn.contrib_conv2d_NCHWc(%0, %1) /* Tensor[(1, 2, 5, 5, 16), float32] */;\n"
    "  %3 = nn.relu(%2) /* Tensor[(1, 2, 5, 5, 16), float32] */;\n"
    "  %4 = layout_transform(%3, src_layout=\"NCHW16c\", dst_layout=\"NCHW8c\") /* Tensor[(1, 4, "
    "5, 5, 8), float32] */;\n"
    "  %5 = layout_transform(%w2, src_layout=\"OIHW\", dst_layout=\"OIHW1i8o\") /* Tensor[(4, 8, "
    "3, 3, 1, 8), float32] */;\n"
    "  %6 = nn.contrib_conv2d_NCHWc(%4, %5, strides=[2, 2], padding=[1, 1, 1, 1], groups=4, "
    "data_layout=\"NCHW8c\", kernel_layout=\"OIHW1i8o\", out_layout=\"NCHW8c\") /* Tensor[(1, 4, "
    "3, 3, 8), float32] */;\n"
    "  %7 = nn.relu(%6) /* Tensor[(1, 4, 3, 3, 8), float32] */;\n"
    "  %8 = layout_transform(%w3, src_layout=\"OIHW\", dst_layout=\"OIHW8i16o\") /* Tensor[(1, 4, "
    "1, 1, 8, 16), float32] */;\n"
    "  %9 = nn.contrib_conv2d_NCHWc(%7, %8, data_layout=\"NCHW8c\", kernel_layout=\"OIHW8i16o\") "
    "/* Tensor[(1, 1, 3, 3, 16), float32] */;\n"
    "  %10 = layout_transform(%9, src_layout=\"NCHW16c\", dst_layout=\"NCHW4c\") /* Tensor[(1, 4, "
    "3, 3, 4), float32] */;\n"
    "  %11 = layout_transform(%w4, src_layout=\"OIHW\", dst_layout=\"OIHW1i6o\") /* Tensor[(4, 4, "
    "3, 3, 1, 6), float32] */;\n"
    "  %12 = nn.contrib_conv2d_NCHWc(%10, %11, padding=[1, 1, 1, 1], groups=4, "
    "data_layout=\"NCHW4c\", kernel_layout=\"OIHW1i6o\", out_layout=\"NCHW6c\") /* Tensor[(1, 4, "
    "3, 3, 6), float32] */;\n"
    "  %13 = layout_transform(%12, src_layout=\"NCHW6c\", dst_layout=\"NCHW\") /* Tensor[(1, 24, "
    "3, 3), float32] */;\n"
    "  %14 = nn.conv2d(%13, %w5, groups=4) /* Tensor[(1, 4, 3, 3), float32] */;\n"
    "  %14\n"
    "}\n";

static const char conv_relu_conv_after[] =
    "def @main(%x: Tensor[(1, 3, 6, 6), float32], %w1: Tensor[(32, 3, 3, 3), float32], %w2: "
    "Tensor[(16, 32, 1, 1), float32]) -> Tensor[(1, 16, 6, 6), float32] {\n"
    "  %0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW1c\") /* Tensor[(1, 3, 6, "
    "6, 1), float32] */;\n"
    "  %1 = layout_transform(%w1, src_layout=\"OIHW\", dst_layout=\"OIHW1i16o\") /* Tensor[(2, 3, "
    "3, 3, 1, 16), float32] */;\n"
    "  %2 = nn.contrib_conv2d_NCHWc(%0, %1, padding=[1, 1, 1, 1], data_layout=\"NCHW1c\", "
    "kernel_layout=\"OIHW1i16o\") /* Tensor[(1, 2, 6, 6, 16), float32] */;\n"
    "  %3 = nn.relu(%2) /* Tensor[(1, 2, 6, 6, 16), float32] */;\n"
    "  %4 = layout_transform(%w2, src_layout=\"OIHW\", dst_layout=\"OIHW16i16o\") /* Tensor[(1, 2, "
    "1, 1, 16, 16), float32] */;\n"
    "  %5 = nn.contrib_conv2d_NCHWc(%3, %4) /* Tensor[(1, 1, 6, 6, 16), float32] */;\n"
    "  %6 = layout_transform(%5, src_layout=\"NCHW16c\", dst_layout=\"NCHW\") /* Tensor[(1, 16, 6, "
    "6), float32] */;\n"
    "  %6\n"
    "}\n";

static const char conv_bias_relu_after[] =
    "def @main(%x: Tensor[(1, 8, 5, 5), float32], %w: Tensor[(8, 8, 3, 3), float32], %b: "
    "Tensor[(8, 1, 1), float32]) -> Tensor[(1, 8, 5, 5), float32] {\n"
    "  %0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\") /* Tensor[(1, 1, 5, "
    "5, 8), float32] */;\n"
    "  %1 = layout_transform(%w, src_layout=\"OIHW\", dst_layout=\"OIHW8i8o\") /* Tensor[(1, 1, 3, "
    "3, 8, 8), float32] */;\n"
    "  %2 = nn.contrib_conv2d_NCHWc(%0, %1, padding=[1, 1, 1, 1], data_layout=\"NCHW8c\", "
    "kernel_layout=\"OIHW8i8o\", out_layout=\"NCHW8c\") /* Tensor[(1, 1, 5, 5, 8), float32] */;\n"
    "  %3 = layout_transform(%b, src_layout=\"CHW\", dst_layout=\"CHW8c\") /* Tensor[(1, 1, 1, 8), "
    "float32] */;\n"
    "  %4 = add(%2, %3) /* Tensor[(1, 1, 5, 5, 8), float32] */;\n"
    "  %5 = nn.relu(%4) /* Tensor[(1, 1, 5, 5, 8), float32] */;\n"
    "  %6 = layout_transform(%5, src_layout=\"NCHW8c\", dst_layout=\"NCHW\") /* Tensor[(1, 8, 5, "
    "5), float32] */;\n"
    "  %6\n"
    "}\n";

static const char residual_after[] =
    "def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(16, 16, 3, 3), float32], %w2: "
    "Tensor[(16, 16, 3, 3), float32], %s: Tensor[(16, 1, 1), float32]) -> Tensor[(1, 16), float32] "
    "{\n"
    "  %0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW16c\") /* Tensor[(1, 1, 4, "
    "4, 16), float32] */;\n"
    "  %1 = layout_transform(%w1, src_layout=\"OIHW\", dst_layout=\"OIHW16i16o\") /* Tensor[(1, 1, "
    "3, 3, 16, 16), float32] */;\n"
    "  %2 = nn.contrib_conv2d_NCHWc(%0, %1, padding=[1, 1, 1, 1]) /* Tensor[(1, 1, 4, 4, 16), "
    "float32] */;\n"
    "  %3 = nn.relu(%2) /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %4 = layout_transform(%w2, src_layout=\"OIHW\", dst_layout=\"OIHW16i16o\") /* Tensor[(1, 1, "
    "3, 3, 16, 16), float32] */;\n"
    "  %5 = nn.contrib_conv2d_NCHWc(%3, %4, padding=[1, 1, 1, 1]) /* Tensor[(1, 1, 4, 4, 16), "
    "float32] */;\n"
    "  %6 = layout_transform(%s, src_layout=\"CHW\", dst_layout=\"CHW16c\") /* Tensor[(1, 1, 1, "
    "16), float32] */;\n"
    "  %7 = multiply(%5, %6) /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %8 = add(%7, %0) /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %9 = nn.relu(%8) /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %10 = nn.max_pool2d(%9, pool_size=[2, 2], strides=[2, 2], layout=\"NCHW16c\") /* Tensor[(1, "
    "1, 2, 2, 16), float32] */;\n"
    "  %11 = nn.global_avg_pool2d(%10, layout=\"NCHW16c\") /* Tensor[(1, 1, 1, 1, 16), float32] "
    "*/;\n"
    "  %12 = layout_transform(%11, src_layout=\"NCHW16c\", dst_layout=\"NCHW\") /* Tensor[(1, 16, "
    "1, 1), float32] */;\n"
    "  %13 = nn.batch_flatten(%12) /* Tensor[(1, 16), float32] */;\n"
    "  %13\n"
    "}\n";

static const char pair_after[] =
    "def @main(%x: Tensor[(1, 16, 2, 2), float32]) -> Tensor[(1, 16, 2, 2), float32] {\n"
    "  %0 = nn.relu(%x) /* Tensor[(1, 16, 2, 2), float32] */;\n"
    "  %0\n"
    "}\n";

static const char depthwise_after[] =
    "def @main(%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(8, 1, 3, 3), float32], %v: "
    "Tensor[(17, 8, 1, 1), float32]) -> Tensor[(1, 17, 4, 4), float32] {\n"
    "  %0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\") /* Tensor[(1, 1, 4, "
    "4, 8), float32] */;\n"
    "  %1 = layout_transform(%w, src_layout=\"OIHW\", dst_layout=\"OIHW1i8o\") /* Tensor[(1, 1, 3, "
    "3, 1, 8), float32] */;\n"
    "  %2 = nn.contrib_conv2d_NCHWc(%0, %1, padding=[1, 1, 1, 1], groups=8, "
    "data_layout=\"NCHW8c\", kernel_layout=\"OIHW1i8o\", out_layout=\"NCHW8c\") /* Tensor[(1, 1, "
    "4, 4, 8), float32] */;\n"
    "  %3 = layout_transform(%2, src_layout=\"NCHW8c\", dst_layout=\"NCHW\") /* Tensor[(1, 8, 4, "
    "4), float32] */;\n"
    "  %4 = nn.conv2d(%3, %v) /* Tensor[(1, 17, 4, 4), float32] */;\n"
    "  %4\n"
    "}\n";

static const char mobilenet_block_after[] =
    "def @main(%x: Tensor[(1, 8, 7, 7), float32], %w1: Tensor[(32, 8, 1, 1), float32], %b1: "
    "Tensor[(32, 1, 1), float32], %w2: Tensor[(32, 1, 3, 3), float32], %b2: Tensor[(32, 1, 1), "
    "float32], %w3: Tensor[(8, 32, 1, 1), float32]) -> Tensor[(1, 8, 7, 7), float32] {\n"
    "  %0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\") /* Tensor[(1, 1, 7, "
    "7, 8), float32] */;\n"
    "  %1 = layout_transform(%w1, src_layout=\"OIHW\", dst_layout=\"OIHW8i16o\") /* Tensor[(2, 1, "
    "1, 1, 8, 16), float32] */;\n"
    "  %2 = nn.contrib_conv2d_NCHWc(%0, %1, data_layout=\"NCHW8c\", kernel_layout=\"OIHW8i16o\") "
    "/* Tensor[(1, 2, 7, 7, 16), float32] */;\n"
    "  %3 = layout_transform(%b1, src_layout=\"CHW\", dst_layout=\"CHW16c\") /* Tensor[(2, 1, 1, "
    "16), float32] */;\n"
    "  %4 = add(%2, %3) /* Tensor[(1, 2, 7, 7, 16), float32] */;\n"
    "  %5 = clip(%4, a_min=0, a_max=6) /* Tensor[(1, 2, 7, 7, 16), float32] */;\n"
    "  %6 = layout_transform(%w2, src_layout=\"OIHW\", dst_layout=\"OIHW1i16o\") /* Tensor[(2, 1, "
    "3, 3, 1, 16), float32] */;\n"
    "  %7 = nn.contrib_conv2d_NCHWc(%5, %6, padding=[1, 1, 1, 1], groups=32, "
    "kernel_layout=\"OIHW1i16o\") /* Tensor[(1, 2, 7, 7, 16), float32] */;\n"
    "  %8 = layout_transform(%b2, src_layout=\"CHW\", dst_layout=\"CHW16c\") /* Tensor[(2, 1, 1, "
    "16), float32] */;\n"
    "  %9 = add(%7, %8) /* Tensor[(1, 2, 7, 7, 16), float32] */;\n"
    "  %10 = clip(%9, a_min=0, a_max=6) /* Tensor[(1, 2, 7, 7, 16), float32] */;\n"
    "  %11 = layout_transform(%w3, src_layout=\"OIHW\", dst_layout=\"OIHW16i8o\") /* Tensor[(1, 2, "
    "1, 1, 16, 8), float32] */;\n"
    "  %12 = nn.contrib_conv2d_NCHWc(%10, %11, kernel_layout=\"OIHW16i8o\", out_layout=\"NCHW8c\") "
    "/* Tensor[(1, 1, 7, 7, 8), float32] */;\n"
    "  %13 = add(%12, %0) /* Tensor[(1, 1, 7, 7, 8), float32] */;\n"
    "  %14 = layout_transform(%13, src_layout=\"NCHW8c\", dst_layout=\"NCHW\") /* Tensor[(1, 8, 7, "
    "7), float32] */;\n"
    "  %14\n"
    "}\n";

static const char mobilenet_block_fused[] =
    "def @main(%x: Tensor[(1, 8, 7, 7), float32], %w1: Tensor[(32, 8, 1, 1), float32], %b1: "
    "Tensor[(32, 1, 1), float32], %w2: Tensor[(32, 1, 3, 3), float32], %b2: Tensor[(32, 1, 1), "
    "float32], %w3: Tensor[(8, 32, 1, 1), float32]) -> Tensor[(1, 8, 7, 7), float32] {\n"
    "  %1 = fn (%p0: Tensor[(1, 1, 7, 7, 8), float32], Primitive=1) -> Tensor[(1, 8, 7, 7), "
    "float32] {\n"
    "    %0 = layout_transform(%p0, src_layout=\"NCHW8c\", dst_layout=\"NCHW\") /* Tensor[(1, 8, "
    "7, 7), float32] */;\n"
    "    %0\n"
    "  };\n"
    "  %4 = fn (%p0: Tensor[(1, 2, 7, 7, 16), float32], %p1: Tensor[(1, 2, 1, 1, 16, 8), float32], "
    "%p2: Tensor[(1, 1, 7, 7, 8), float32], Primitive=1) -> Tensor[(1, 1, 7, 7, 8), float32] {\n"
    "    %2 = nn.contrib_conv2d_NCHWc(%p0, %p1, kernel_layout=\"OIHW16i8o\", "
    "out_layout=\"NCHW8c\") /* Tensor[(1, 1, 7, 7, 8), float32] */;\n"
    "    %3 = add(%2, %p2) /* Tensor[(1, 1, 7, 7, 8), float32] */;\n"
    "    %3\n"
    "  };\n"
    "  %8 = fn (%p0: Tensor[(1, 2, 7, 7, 16), float32], %p1: Tensor[(2, 1, 3, 3, 1, 16), float32], "
    "%p2: Tensor[(2, 1, 1, 16), float32], Primitive=1) -> Tensor[(1, 2, 7, 7, 16), float32] {\n"
    "    %5 = nn.contrib_conv2d_NCHWc(%p0, %p1, padding=[1, 1, 1, 1], groups=32, "
    "kernel_layout=\"OIHW1i16o\") /* Tensor[(1, 2, 7, 7, 16), float32] */;\n"
    "    %6 = add(%5, %p2) /* Tensor[(1, 2, 7, 7, 16), float32] */;\n"
    "    %7 = clip(%6, a_min=0, a_max=6) /* Tensor[(1, 2, 7, 7, 16), float32] */;\n"
    "    %7\n"
    "  };\n"
    "  %12 = fn (%p0: Tensor[(1, 1, 7, 7, 8), float32], %p1: Tensor[(2, 1, 1, 1, 8, 16), float32], "
    "%p2: Tensor[(2, 1, 1, 16), float32], Primitive=1) -> Tensor[(1, 2, 7, 7, 16), float32] {\n"
    "    %9 = nn.contrib_conv2d_NCHWc(%p0, %p1, data_layout=\"NCHW8c\", "
    "kernel_layout=\"OIHW8i16o\") /* Tensor[(1, 2, 7, 7, 16), float32] */;\n"
    "    %10 = add(%9, %p2) /* Tensor[(1, 2, 7, 7, 16), float32] */;\n"
    "    %11 = clip(%10, a_min=0, a_max=6) /* Tensor[(1, 2, 7, 7, 16), float32] */;\n"
    "    %11\n"
    "  };\n"
    "  %14 = fn (%p0: Tensor[(1, 8, 7, 7), float32], Primitive=1) -> Tensor[(1, 1, 7, 7, 8), "
    "float32] {\n"
    "    %13 = layout_transform(%p0, src_layout=\"NCHW\", dst_layout=\"NCHW8c\") /* Tensor[(1, 1, "
    "7, 7, 8), float32] */;\n"
    "    %13\n"
    "  };\n"
    "  %15 = %14(%x) /* Tensor[(1, 1, 7, 7, 8), float32] */;\n"
    "  %17 = fn (%p0: Tensor[(32, 8, 1, 1), float32], Primitive=1) -> Tensor[(2, 1, 1, 1, 8, 16), "
    "float32] {\n"
    "    %16 = layout_transform(%p0, src_layout=\"OIHW\", dst_layout=\"OIHW8i16o\") /* Tensor[(2, "
    "1, 1, 1, 8, 16), float32] */;\n"
    "    %16\n"
    "  };\n"
    "  %18 = %17(%w1) /* Tensor[(2, 1, 1, 1, 8, 16), float32] */;\n"
    "  %20 = fn (%p0: Tensor[(32, 1, 1), float32], Primitive=1) -> Tensor[(2, 1, 1, 16), float32] "
    "{\n"
    "    %19 = layout_transform(%p0, src_layout=\"CHW\", dst_layout=\"CHW16c\") /* Tensor[(2, 1, "
    "1, 16), float32] */;\n"
    "    %19\n"
    "  };\n"
    "  %21 = %20(%b1) /* Tensor[(2, 1, 1, 16), float32] */;\n"
    "  %22 = %12(%15, %18, %21) /* Tensor[(1, 2, 7, 7, 16), float32] */;\n"
    "  %24 = fn (%p0: Tensor[(32, 1, 3, 3), float32], Primitive=1) -> Tensor[(2, 1, 3, 3, 1, 16), "
    "float32] {\n"
    "    %23 = layout_transform(%p0, src_layout=\"OIHW\", dst_layout=\"OIHW1i16o\") /* Tensor[(2, "
    "1, 3, 3, 1, 16), float32] */;\n"
    "    %23\n"
    "  };\n"
    "  %25 = %24(%w2) /* Tensor[(2, 1, 3, 3, 1, 16), float32] */;\n"
    "  %27 = fn (%p0: Tensor[(32, 1, 1), float32], Primitive=1) -> Tensor[(2, 1, 1, 16), float32] "
    "{\n"
    "    %26 = layout_transform(%p0, src_layout=\"CHW\", dst_layout=\"CHW16c\") /* Tensor[(2, 1, "
    "1, 16), float32] */;\n"
    "    %26\n"
    "  };\n"
    "  %28 = %27(%b2) /* Tensor[(2, 1, 1, 16), float32] */;\n"
    "  %29 = %8(%22, %25, %28) /* Tensor[(1, 2, 7, 7, 16), float32] */;\n"
    "  %31 = fn (%p0: Tensor[(8, 32, 1, 1), float32], Primitive=1) -> Tensor[(1, 2, 1, 1, 16, 8), "
    "float32] {\n"
    "    %30 = layout_transform(%p0, src_layout=\"OIHW\", dst_layout=\"OIHW16i8o\") /* Tensor[(1, "
    "2, 1, 1, 16, 8), float32] */;\n"
    "    %30\n"
    "  };\n"
    "  %32 = %31(%w3) /* Tensor[(1, 2, 1, 1, 16, 8), float32] */;\n"
    "  %33 = %4(%29, %32, %15) /* Tensor[(1, 1, 7, 7, 8), float32] */;\n"
    "  %34 = %1(%33) /* Tensor[(1, 8, 7, 7), float32] */;\n"
    "  %34\n"
    "}\n";

static const char fused_after[] =
    "def @main(%x: Tensor[(1, 8, 5, 5), float32], %w: Tensor[(8, 8, 3, 3), float32], %b: "
    "Tensor[(8, 1, 1), float32]) -> Tensor[(1, 8, 5, 5), float32] {\n"
    "  %1 = fn (%p0: Tensor[(1, 1, 5, 5, 8), float32], Primitive=1) -> Tensor[(1, 8, 5, 5), "
    "float32] {\n"
    "    %0 = layout_transform(%p0, src_layout=\"NCHW8c\", dst_layout=\"NCHW\") /* Tensor[(1, 8, "
    "5, 5), float32] */;\n"
    "    %0\n"
    "  };\n"
    "  %5 = fn (%p0: Tensor[(1, 1, 5, 5, 8), float32], %p1: Tensor[(1, 1, 3, 3, 8, 8), float32], "
    "%p2: Tensor[(1, 1, 1, 8), float32], Primitive=1) -> Tensor[(1, 1, 5, 5, 8), float32] {\n"
    "    %2 = nn.contrib_conv2d_NCHWc(%p0, %p1, padding=[1, 1, 1, 1], data_layout=\"NCHW8c\", "
    "kernel_layout=\"OIHW8i8o\", out_layout=\"NCHW8c\") /* Tensor[(1, 1, 5, 5, 8), float32] */;\n"
    "    %3 = add(%2, %p2) /* Tensor[(1, 1, 5, 5, 8), float32] */;\n"
    "    %4 = nn.relu(%3) /* Tensor[(1, 1, 5, 5, 8), float32] */;\n"
    "    %4\n"
    "  };\n"
    "  %7 = fn (%p0: Tensor[(1, 8, 5, 5), float32], Primitive=1) -> Tensor[(1, 1, 5, 5, 8), "
    "float32] {\n"
    "    %6 = layout_transform(%p0, src_layout=\"NCHW\", dst_layout=\"NCHW8c\") /* Tensor[(1, 1, "
    "5, 5, 8), float32] */;\n"
    "    %6\n"
    "  };\n"
    "  %8 = %7(%x) /* Tensor[(1, 1, 5, 5, 8), float32] */;\n"
    "  %10 = fn (%p0: Tensor[(8, 8, 3, 3), float32], Primitive=1) -> Tensor[(1, 1, 3, 3, 8, 8), "
    "float32] {\n"
    "    %9 = layout_transform(%p0, src_layout=\"OIHW\", dst_layout=\"OIHW8i8o\") /* Tensor[(1, 1, "
    "3, 3, 8, 8), float32] */;\n"
    "    %9\n"
    "  };\n"
    "  %11 = %10(%w) /* Tensor[(1, 1, 3, 3, 8, 8), float32] */;\n"
    "  %13 = fn (%p0: Tensor[(8, 1, 1), float32], Primitive=1) -> Tensor[(1, 1, 1, 8), float32] {\n"
    "    %12 = layout_transform(%p0, src_layout=\"CHW\", dst_layout=\"CHW8c\") /* Tensor[(1, 1, 1, "
    "8), float32] */;\n"
    "    %12\n"
    "  };\n"
    "  %14 = %13(%b) /* Tensor[(1, 1, 1, 8), float32] */;\n"
    "  %15 = %5(%8, %11, %14) /* Tensor[(1, 1, 5, 5, 8), float32] */;\n"
    "  %16 = %1(%15) /* Tensor[(1, 8, 5, 5), float32] */;\n"
    "  %16\n"
    "}\n";

static const char residual_block4_after[] =
    "def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(16, 16, 3, 3), float32], %w2: "
    "Tensor[(16, 16, 3, 3), float32], %s: Tensor[(16, 1, 1), float32]) -> Tensor[(1, 16), float32] "
    "{\n"
    "  %0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW4c\") /* Tensor[(1, 4, 4, "
    "4, 4), float32] */;\n"
    "  %1 = layout_transform(%w1, src_layout=\"OIHW\", dst_layout=\"OIHW4i4o\") /* Tensor[(4, 4, "
    "3, 3, 4, 4), float32] */;\n"
    "  %2 = nn.contrib_conv2d_NCHWc(%0, %1, padding=[1, 1, 1, 1], data_layout=\"NCHW4c\", "
    "kernel_layout=\"OIHW4i4o\", out_layout=\"NCHW4c\") /* Tensor[(1, 4, 4, 4, 4), float32] */;\n"
    "  %3 = nn.relu(%2) /* Tensor[(1, 4, 4, 4, 4), float32] */;\n"
    "  %4 = layout_transform(%w2, src_layout=\"OIHW\", dst_layout=\"OIHW4i4o\") /* Tensor[(4, 4, "
    "3, 3, 4, 4), float32] */;\n"
    "  %5 = nn.contrib_conv2d_NCHWc(%3, %4, padding=[1, 1, 1, 1], data_layout=\"NCHW4c\", "
    "kernel_layout=\"OIHW4i4o\", out_layout=\"NCHW4c\") /* Tensor[(1, 4, 4, 4, 4), float32] */;\n"
    "  %6 = layout_transform(%s, src_layout=\"CHW\", dst_layout=\"CHW4c\") /* Tensor[(4, 1, 1, 4), "
    "float32] */;\n"
    "  %7 = multiply(%5, %6) /* Tensor[(1, 4, 4, 4, 4), float32] */;\n"
    "  %8 = add(%7, %0) /* Tensor[(1, 4, 4, 4, 4), float32] */;\n"
    "  %9 = nn.relu(%8) /* Tensor[(1, 4, 4, 4, 4), float32] */;\n"
    "  %10 = nn.max_pool2d(%9, pool_size=[2, 2], strides=[2, 2], layout=\"NCHW4c\") /* Tensor[(1, "
    "4, 2, 2, 4), float32] */;\n"
    "  %11 = nn.global_avg_pool2d(%10, layout=\"NCHW4c\") /* Tensor[(1, 4, 1, 1, 4), float32] */;\n"
    "  %12 = layout_transform(%11, src_layout=\"NCHW4c\", dst_layout=\"NCHW\") /* Tensor[(1, 16, "
    "1, 1), float32] */;\n"
    "  %13 = nn.batch_flatten(%12) /* Tensor[(1, 16), float32] */;\n"
    "  %13\n"
    "}\n";

static const char fire_after[] =
    "def @main(%x: Tensor[(1, 8, 4, 4), float32], %w1: Tensor[(8, 8, 1, 1), float32], %w2: "
    "Tensor[(16, 8, 1, 1), float32], %w3: Tensor[(16, 8, 3, 3), float32], %w4: Tensor[(16, 32, 1, "
    "1), float32]) -> Tensor[(1, 16, 4, 4), float32] {\n"
    "  %0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\") /* Tensor[(1, 1, 4, "
    "4, 8), float32] */;\n"
    "  %1 = layout_transform(%w1, src_layout=\"OIHW\", dst_layout=\"OIHW8i8o\") /* Tensor[(1, 1, "
    "1, 1, 8, 8), float32] */;\n"
    "  %2 = nn.contrib_conv2d_NCHWc(%0, %1, data_layout=\"NCHW8c\", kernel_layout=\"OIHW8i8o\", "
    "out_layout=\"NCHW8c\") /* Tensor[(1, 1, 4, 4, 8), float32] */;\n"
    "  %3 = nn.relu(%2) /* Tensor[(1, 1, 4, 4, 8), float32] */;\n"
    "  %4 = layout_transform(%w2, src_layout=\"OIHW\", dst_layout=\"OIHW8i16o\") /* Tensor[(1, 1, "
    "1, 1, 8, 16), float32] */;\n"
    "  %5 = nn.contrib_conv2d_NCHWc(%3, %4, data_layout=\"NCHW8c\", kernel_layout=\"OIHW8i16o\") "
    "/* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %6 = nn.relu(%5) /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %7 = layout_transform(%w3, src_layout=\"OIHW\", dst_layout=\"OIHW8i16o\") /* Tensor[(1, 1, "
    "3, 3, 8, 16), float32] */;\n"
    "  %8 = nn.contrib_conv2d_NCHWc(%3, %7, padding=[1, 1, 1, 1], data_layout=\"NCHW8c\", "
    "kernel_layout=\"OIHW8i16o\") /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %9 = nn.relu(%8) /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %10 = concatenate(%6, %9, axis=1) /* Tensor[(1, 2, 4, 4, 16), float32] */;\n"
    "  %11 = layout_transform(%w4, src_layout=\"OIHW\", dst_layout=\"OIHW16i16o\") /* Tensor[(1, "
    "2, 1, 1, 16, 16), float32] */;\n"
    "  %12 = nn.contrib_conv2d_NCHWc(%10, %11) /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %13 = layout_transform(%12, src_layout=\"NCHW16c\", dst_layout=\"NCHW\") /* Tensor[(1, 16, "
    "4, 4), float32] */;\n"
    "  %13\n"
    "}\n";
static const char fire_mixed_after[] =
    "def @main(%x: Tensor[(1, 8, 4, 4), float32], %w1: Tensor[(8, 8, 1, 1), float32], %w2: "
    "Tensor[(16, 8, 1, 1), float32], %w3: Tensor[(12, 8, 3, 3), float32], %w4: Tensor[(16, 28, 1, "
    "1), float32]) -> Tensor[(1, 16, 4, 4), float32] {\n"
    "  %0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\") /* Tensor[(1, 1, 4, "
    "4, 8), float32] */;\n"
    "  %1 = layout_transform(%w1, src_layout=\"OIHW\", dst_layout=\"OIHW8i8o\") /* Tensor[(1, 1, "
    "1, 1, 8, 8), float32] */;\n"
    "  %2 = nn.contrib_conv2d_NCHWc(%0, %1, data_layout=\"NCHW8c\", kernel_layout=\"OIHW8i8o\", "
    "out_layout=\"NCHW8c\") /* Tensor[(1, 1, 4, 4, 8), float32] */;\n"
    "  %3 = nn.relu(%2) /* Tensor[(1, 1, 4, 4, 8), float32] */;\n"
    "  %4 = layout_transform(%w2, src_layout=\"OIHW\", dst_layout=\"OIHW8i16o\") /* Tensor[(1, 1, "
    "1, 1, 8, 16), float32] */;\n"
    "  %5 = nn.contrib_conv2d_NCHWc(%3, %4, data_layout=\"NCHW8c\", kernel_layout=\"OIHW8i16o\") "
    "/* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %6 = nn.relu(%5) /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %7 = layout_transform(%6, src_layout=\"NCHW16c\", dst_layout=\"NCHW\") /* Tensor[(1, 16, 4, "
    "4), float32] */;\n"
    "  %8 = layout_transform(%w3, src_layout=\"OIHW\", dst_layout=\"OIHW8i12o\") /* Tensor[(1, 1, "
    "3, 3, 8, 12), float32] */;\n"
    "  %9 = nn.contrib_conv2d_NCHWc(%3, %8, padding=[1, 1, 1, 1], data_layout=\"NCHW8c\", "
    "kernel_layout=\"OIHW8i12o\", out_layout=\"NCHW12c\") /* Tensor[(1, 1, 4, 4, 12), float32] "
    "*/;\n"
    "  %10 = nn.relu(%9) /* Tensor[(1, 1, 4, 4, 12), float32] */;\n"
    "  %11 = layout_transform(%10, src_layout=\"NCHW12c\", dst_layout=\"NCHW\") /* Tensor[(1, 12, "
    "4, 4), float32] */;\n"
    "  %12 = concatenate(%7, %11, axis=1) /* Tensor[(1, 28, 4, 4), float32] */;\n"
    "  %13 = layout_transform(%12, src_layout=\"NCHW\", dst_layout=\"NCHW14c\") /* Tensor[(1, 2, "
    "4, 4, 14), float32] */;\n"
    "  %14 = layout_transform(%w4, src_layout=\"OIHW\", dst_layout=\"OIHW14i16o\") /* Tensor[(1, "
    "2, 1, 1, 14, 16), float32] */;\n"
    "  %15 = nn.contrib_conv2d_NCHWc(%13, %14, data_layout=\"NCHW14c\", "
    "kernel_layout=\"OIHW14i16o\") /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %16 = layout_transform(%15, src_layout=\"NCHW16c\", dst_layout=\"NCHW\") /* Tensor[(1, 16, "
    "4, 4), float32] */;\n"
    "  %16\n"
    "}\n";

/* A DenseNet-style concatenate of a plain value (a relu of the input) and
 * a blocked conv output: the plain one is transformed to the conv's block
 * and the concatenate stays blocked. */
#define PLAIN_AND_BLOCKED                                                                \
  "def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(16, 16, 1, 1), float32], " \
  "%w2: Tensor[(16, 32, 1, 1), float32]) {\n"                                            \
  "  %0 = nn.relu(%x);\n"                                                                \
  "  %1 = nn.conv2d(%x, %w1);\n"                                                         \
  "  %2 = concatenate(%0, %1, axis=1);\n"                                                \
  "  nn.conv2d(%2, %w2)\n"                                                               \
  "}\n"

static const char plain_and_blocked_after[] =
    "def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(16, 16, 1, 1), float32], %w2: "
    "Tensor[(16, 32, 1, 1), float32]) -> Tensor[(1, 16, 4, 4), float32] {\n"
    "  %0 = nn.relu(%x) /* Tensor[(1, 16, 4, 4), float32] */;\n"
    "  %1 = layout_transform(%0, src_layout=\"NCHW\", dst_layout=\"NCHW16c\") /* Tensor[(1, 1, 4, "
    "4, 16), float32] */;\n"
    "  %2 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW16c\") /* Tensor[(1, 1, 4, "
    "4, 16), float32] */;\n"
    "  %3 = layout_transform(%w1, src_layout=\"OIHW\", dst_layout=\"OIHW16i16o\") /* Tensor[(1, 1, "
    "1, 1, 16, 16), float32] */;\n"
    "  %4 = nn.contrib_conv2d_NCHWc(%2, %3) /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %5 = concatenate(%1, %4, axis=1) /* Tensor[(1, 2, 4, 4, 16), float32] */;\n"
    "  %6 = layout_transform(%w2, src_layout=\"OIHW\", dst_layout=\"OIHW16i16o\") /* Tensor[(1, 2, "
    "1, 1, 16, 16), float32] */;\n"
    "  %7 = nn.contrib_conv2d_NCHWc(%5, %6) /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %8 = layout_transform(%7, src_layout=\"NCHW16c\", dst_layout=\"NCHW\") /* Tensor[(1, 16, 4, "
    "4), float32] */;\n"
    "  %8\n"
    "}\n";

static void test_concatenate_of_plain_and_blocked(void **state) {
  (void)state;
  kpt_check(PLAIN_AND_BLOCKED, 3, "alter_op_layout", plain_and_blocked_after);
}

static void test_concatenate_stays_blocked(void **state) {
  (void)state;
  kpt_check(FIRE, 3, "alter_op_layout", fire_after);
  kpt_check(FIRE_MIXED, 3, "alter_op_layout", fire_mixed_after);
}

static const char slices_after[] =
    "def @main(%x: Tensor[(1, 8, 4, 4), float32], %w1: Tensor[(32, 8, 1, 1), float32], %w2: "
    "Tensor[(16, 16, 1, 1), float32]) -> (Tensor[(1, 16, 4, 4), float32], Tensor[(1, 8, 4, 4), "
    "float32]) {\n"
    "  %0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\") /* Tensor[(1, 1, 4, "
    "4, 8), float32] */;\n"
    "  %1 = layout_transform(%w1, src_layout=\"OIHW\", dst_layout=\"OIHW8i16o\") /* Tensor[(2, 1, "
    "1, 1, 8, 16), float32] */;\n"
    "  %2 = nn.contrib_conv2d_NCHWc(%0, %1, data_layout=\"NCHW8c\", kernel_layout=\"OIHW8i16o\") "
    "/* Tensor[(1, 2, 4, 4, 16), float32] */;\n"
    "  %3 = nn.relu(%2) /* Tensor[(1, 2, 4, 4, 16), float32] */;\n"
    "  %4 = split(%3, indices=[1], axis=1) /* (Tensor[(1, 1, 4, 4, 16), float32], Tensor[(1, 1, 4, "
    "4, 16), float32]) */;\n"
    "  %5 = %4.0 /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %6 = %4.1 /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %7 = add(%5, %6) /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %8 = strided_slice(%3, begin=[1], end=[2], axes=[1]) /* Tensor[(1, 1, 4, 4, 16), float32] "
    "*/;\n"
    "  %9 = multiply(%7, %8) /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %10 = layout_transform(%w2, src_layout=\"OIHW\", dst_layout=\"OIHW16i16o\") /* Tensor[(1, "
    "1, 1, 1, 16, 16), float32] */;\n"
    "  %11 = nn.contrib_conv2d_NCHWc(%9, %10) /* Tensor[(1, 1, 4, 4, 16), float32] */;\n"
    "  %12 = layout_transform(%11, src_layout=\"NCHW16c\", dst_layout=\"NCHW\") /* Tensor[(1, 16, "
    "4, 4), float32] */;\n"
    "  %13 = layout_transform(%3, src_layout=\"NCHW16c\", dst_layout=\"NCHW\") /* Tensor[(1, 32, "
    "4, 4), float32] */;\n"
    "  %14 = split(%13, indices=[8], axis=1) /* (Tensor[(1, 8, 4, 4), float32], Tensor[(1, 24, 4, "
    "4), float32]) */;\n"
    "  %15 = %14.0 /* Tensor[(1, 8, 4, 4), float32] */;\n"
    "  %16 = (%12, %15) /* (Tensor[(1, 16, 4, 4), float32], Tensor[(1, 8, 4, 4), float32]) */;\n"
    "  %16\n"
    "}\n";

static void test_channel_slices_stay_blocked(void **state) {
  (void)state;
  kpt_check(SLICES, 3, "alter_op_layout", slices_after);
}

/* A channel shuffle (reshape, transpose, reshape) of a blocked value is
 * offered blocked at once, so the relu after it follows the block, the
 * nn.pad that leaves the channels alone pads the blocked form (a (0, 0)
 * pair for the block axis), and so does the pool: after fusion the round
 * trip to NCHW and back is one kernel, and the pad and pool need none. */
static const char shuffle_after[] =
    "def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(32, 16, 1, 1), float32], %w2: "
    "Tensor[(16, 32, 1, 1), float32]) -> Tensor[(1, 16, 3, 3), float32] {\n"
    "  %0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW16c\") /* Tensor[(1, 1, 4, "
    "4, 16), float32] */;\n"
    "  %1 = layout_transform(%w1, src_layout=\"OIHW\", dst_layout=\"OIHW16i16o\") /* Tensor[(2, 1, "
    "1, 1, 16, 16), float32] */;\n"
    "  %2 = nn.contrib_conv2d_NCHWc(%0, %1) /* Tensor[(1, 2, 4, 4, 16), float32] */;\n"
    "  %3 = layout_transform(%2, src_layout=\"NCHW16c\", dst_layout=\"NCHW\") /* Tensor[(1, 32, 4, "
    "4), float32] */;\n"
    "  %4 = reshape(%3, newshape=[1, 2, 16, 4, 4]) /* Tensor[(1, 2, 16, 4, 4), float32] */;\n"
    "  %5 = transpose(%4, axes=[0, 2, 1, 3, 4]) /* Tensor[(1, 16, 2, 4, 4), float32] */;\n"
    "  %6 = reshape(%5, newshape=[1, 32, 4, 4]) /* Tensor[(1, 32, 4, 4), float32] */;\n"
    "  %7 = layout_transform(%6, src_layout=\"NCHW\", dst_layout=\"NCHW16c\") /* Tensor[(1, 2, 4, "
    "4, 16), float32] */;\n"
    "  %8 = nn.relu(%7) /* Tensor[(1, 2, 4, 4, 16), float32] */;\n"
    "  %9 = nn.pad(%8, pad_width=[0, 0, 0, 0, 1, 1, 1, 1, 0, 0]) /* Tensor[(1, 2, 6, 6, 16), "
    "float32] */;\n"
    "  %10 = nn.avg_pool2d(%9, pool_size=[2, 2], strides=[2, 2], layout=\"NCHW16c\") /* Tensor[(1, "
    "2, 3, 3, 16), float32] */;\n"
    "  %11 = layout_transform(%w2, src_layout=\"OIHW\", dst_layout=\"OIHW16i16o\") /* Tensor[(1, "
    "2, 1, 1, 16, 16), float32] */;\n"
    "  %12 = nn.contrib_conv2d_NCHWc(%10, %11) /* Tensor[(1, 1, 3, 3, 16), float32] */;\n"
    "  %13 = layout_transform(%12, src_layout=\"NCHW16c\", dst_layout=\"NCHW\") /* Tensor[(1, 16, "
    "3, 3), float32] */;\n"
    "  %13\n"
    "}\n";

static void test_shuffle_and_pad_stay_blocked(void **state) {
  (void)state;
  kpt_check(SHUFFLE, 3, "alter_op_layout", shuffle_after);
}

static void test_conv_relu_conv(void **state) {
  (void)state;
  kpt_check(CONV_RELU_CONV, 3, "alter_op_layout", conv_relu_conv_after);
}

static void test_conv_bias_relu(void **state) {
  (void)state;
  kpt_check(CONV_BIAS_RELU, 3, "alter_op_layout", conv_bias_relu_after);
  kpt_check(CONV_BIAS_RELU, 3, "alter_op_layout fuse_ops", fused_after);
}

static void test_residual_block_and_pools(void **state) {
  (void)state;
  kpt_check(RESIDUAL, 3, "alter_op_layout", residual_after);
  kiln_pass_context_t *context = kpt_context(3);
  KILN_ASSERT_OK(kiln_pass_context_set_option(context, "alter_op_layout.block", "4"));
  kpt_check_in(RESIDUAL, context, "alter_op_layout", residual_block4_after);
  kiln_pass_context_destroy(context);
}

static void test_transform_pair_cancels(void **state) {
  (void)state;
  kpt_check(PAIR, 3, "alter_op_layout", pair_after);
}

static void test_depthwise_blocked_odd_channels_stay(void **state) {
  (void)state;
  kpt_check(DEPTHWISE, 3, "alter_op_layout", depthwise_after);
}

/* Grouped convs whose blocks fit inside their groups become the NCHWc
 * form with groups (weight OIHW1i{oc}o); the bottleneck stays blocked
 * from the first conv to the third, with one block-to-block transform where
 * the grouped conv's input block (8) differs from its producer's (16); the
 * third (a plain 1x1 conv) takes the grouped conv's 8c as its data block,
 * with no transform back to 16c. */
static void test_grouped(void **state) {
  (void)state;
  kpt_check(GROUPED, 3, "alter_op_layout", grouped_after);
}

/* The depthwise conv takes the 16c block of the expand conv before it, so
 * the three convs, their biases and clips stay blocked: the only transforms
 * left on activations are at the function's edges, and after fuse_ops the
 * depthwise conv carries its bias and clip. The blocked text parses back. */
static void test_mobilenet_block(void **state) {
  (void)state;
  kpt_check(MOBILENET_BLOCK, 3, "alter_op_layout", mobilenet_block_after);
  kpt_check(MOBILENET_BLOCK, 3, "alter_op_layout fuse_ops", mobilenet_block_fused);
  kiln_module_t *m = kpt_parse(mobilenet_block_after);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  char *text = kpt_print(m);
  assert_string_equal(text, mobilenet_block_after);
  kpt_free(text);
  kiln_module_destroy(m);
}

static void test_runs_at_opt_level_3_only(void **state) {
  (void)state;
  kiln_module_t *m = kpt_parse(CONV_BIAS_RELU);
  char *before = kpt_print(m);
  kiln_pass_context_t *context = kpt_context(2);
  kpt_expect_in(m, context, "alter_op_layout", before);
  kiln_pass_context_destroy(context);
  kpt_free(before);
  kiln_module_destroy(m);
}

/* conv(x, W) + B with constant weights W (8, 8, 3, 3) and bias B (8, 1, 1). */
static kiln_module_t *constant_weights_module(void) {
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 4, SHAPE(1, 8, 5, 5));
  float w[8 * 8 * 3 * 3], b[8];
  for (int i = 0; i < 8 * 8 * 3 * 3; ++i) {
    w[i] = (float)((i * 37) % 19 - 9) / 9.0f;
  }
  for (int i = 0; i < 8; ++i) {
    b[i] = (float)i - 3.5f;
  }
  kiln_expr_t *weight = irt_constant_f32(m, 4, SHAPE(8, 8, 3, 3), w);
  kiln_expr_t *bias = irt_constant_f32(m, 3, SHAPE(8, 1, 1), b);
  kiln_expr_t *conv =
      IRT_CALL(m, "nn.conv2d", IRT_ATTRS("padding", "[1, 1, 1, 1]"), &x->base, weight);
  irt_add_function(m, "main", 1, &x, IRT_CALL(m, "add", NULL, conv, bias));
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  return m;
}

static const char constant_weights_after[] =
    "def @main(%x: Tensor[(1, 8, 5, 5), float32]) -> Tensor[(1, 8, 5, 5), float32] {\n"
    "  %0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\") /* Tensor[(1, 1, "
    "5, 5, 8), float32] */;\n"
    "  %1 = nn.contrib_conv2d_NCHWc(%0, meta[Constant][0], padding=[1, 1, 1, 1], "
    "data_layout=\"NCHW8c\", kernel_layout=\"OIHW8i8o\", out_layout=\"NCHW8c\") /* Tensor[(1, "
    "1, 5, 5, 8), float32] */;\n"
    "  %2 = add(%1, meta[Constant][1]) /* Tensor[(1, 1, 5, 5, 8), float32] */;\n"
    "  %3 = layout_transform(%2, src_layout=\"NCHW8c\", dst_layout=\"NCHW\") /* Tensor[(1, 8, "
    "5, 5), float32] */;\n"
    "  %3\n"
    "}\n";

static void test_constant_weights_are_transformed_now(void **state) {
  (void)state;
  kiln_module_t *reference = constant_weights_module();
  kiln_module_t *m = constant_weights_module();
  kiln_pass_context_t *context = kpt_context(3);
  kpt_expect_in(m, context, "alter_op_layout", constant_weights_after);
  kiln_pass_context_destroy(context);
  kiln_call_t *add =
      kiln_expr_as_call(kiln_expr_as_call(kiln_module_get_function(m, "main")->body)->args[0]);
  kiln_call_t *conv = kiln_expr_as_call(add->args[0]);
  kiln_constant_t *weight = kiln_expr_as_constant(conv->args[1]);
  kiln_constant_t *bias = kiln_expr_as_constant(add->args[1]);
  assert_int_equal(kiln_tensor_ndim(weight->value), 6);
  assert_int_equal(kiln_tensor_ndim(bias->value), 4);
  /* OIHW8i8o: element (o, i, kh, kw) at [0, 0, kh, kw, i, o]. */
  const float *blocked = kiln_tensor_data(weight->value);
  kiln_constant_t *original = kiln_expr_as_constant(
      kiln_expr_as_call(
          kiln_expr_as_call(kiln_module_get_function(reference, "main")->body)->args[0])
          ->args[1]);
  const float *plain = kiln_tensor_data(original->value);
  assert_true(blocked[((1 * 3 + 2) * 8 + 5) * 8 + 3] == plain[((3 * 8 + 5) * 3 + 1) * 3 + 2]);
  kpt_assert_same_numbers(reference, m, 2);
  kiln_module_destroy(reference);
  kiln_module_destroy(m);
}

static void test_errors(void **state) {
  (void)state;
  kiln_module_t *m = kpt_parse(CONV_BIAS_RELU);
  kiln_pass_context_t *context = kpt_context(3);
  KILN_ASSERT_OK(kiln_pass_context_set_option(context, "alter_op_layout.block", "0"));
  KILN_ASSERT_STATUS(kpt_run(m, context, "alter_op_layout"), INVALID_ARGUMENT,
                     "alter_op_layout: option alter_op_layout.block must be in [1, 1024], got 0");
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);

  m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  irt_add_function(m, "main", 1, &x, IRT_CALL(m, "nn.relu", NULL, &x->base));
  context = kpt_context(3);
  KILN_ASSERT_STATUS(kiln_pass_alter_op_layout.run(m, context), FAILED_PRECONDITION,
                     "alter_op_layout needs types: a Var has no checked type (run infer_type "
                     "first)");
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
}

/* `data` points to the module's text. */
static kiln_status_t alter_scenario(kiln_allocator_t allocator, void *data) {
  const char *const *text = data;
  kiln_module_t *m = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_parse_module("before", *text, allocator, &m));
  kiln_pass_context_t *context = NULL;
  kiln_status_t status = kiln_pass_context_create(allocator, 3, &context);
  const kiln_pass_t *pass = &kiln_pass_alter_op_layout;
  if (!status) {
    status = kiln_pass_sequential_run(m, context, &pass, 1);
  }
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  const char *texts[] = {RESIDUAL, MOBILENET_BLOCK};
  for (int i = 0; i < 2; ++i) {
    assert_true(kiln_test_sweep_allocation_failures(alter_scenario, &texts[i]) > 10);
  }
}

static int count_op(const kiln_module_t *m, const kiln_op_t *op) {
  kiln_ir_order_t order;
  KILN_ASSERT_OK(
      kiln_ir_order_compute(kiln_module_get_function(m, "main"), kiln_allocator_system(), &order));
  int count = 0;
  for (size_t i = 0; i < kiln_ir_order_count(&order); ++i) {
    kiln_call_t *call = kiln_expr_as_call(kiln_ir_order_node(&order, i));
    count += call && call->op == op ? 1 : 0;
  }
  kiln_ir_order_deinitialize(&order);
  return count;
}

static void test_workloads_keep_their_numbers(void **state) {
  (void)state;
  for (const char *const *name = kiln_workload_names(); *name; ++name) {
    kiln_params_t params_a, params_b;
    kiln_module_t *reference = kpt_build_workload(*name, &params_a);
    kiln_module_t *m = kpt_build_workload(*name, &params_b);
    int convs = count_op(m, &kiln_op_conv2d);
    kiln_pass_context_t *context = kpt_context(3);
    KILN_ASSERT_OK(kpt_run(m, context, "alter_op_layout"));
    int blocked = count_op(m, &kiln_op_conv2d_nchwc);
    int transforms = count_op(m, &kiln_op_layout_transform);
    KILN_ASSERT_OK(kpt_run(m, context, "fuse_ops"));
    kiln_pass_context_destroy(context);
    printf("%-14s %3d of %3d convs blocked, %3d layout transforms\n", *name, blocked, convs,
           transforms);
    if (strcmp(*name, "resnet18") == 0 || strcmp(*name, "resnet50") == 0 ||
        strcmp(*name, "squeezenet1_1") == 0 || strcmp(*name, "mobilenet_v2") == 0) {
      assert_int_equal(blocked, convs);
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
      cmocka_unit_test(test_conv_relu_conv),
      cmocka_unit_test(test_conv_bias_relu),
      cmocka_unit_test(test_residual_block_and_pools),
      cmocka_unit_test(test_transform_pair_cancels),
      cmocka_unit_test(test_depthwise_blocked_odd_channels_stay),
      cmocka_unit_test(test_grouped),
      cmocka_unit_test(test_mobilenet_block),
      cmocka_unit_test(test_concatenate_stays_blocked),
      cmocka_unit_test(test_concatenate_of_plain_and_blocked),
      cmocka_unit_test(test_channel_slices_stay_blocked),
      cmocka_unit_test(test_shuffle_and_pad_stay_blocked),
      cmocka_unit_test(test_runs_at_opt_level_3_only),
      cmocka_unit_test(test_constant_weights_are_transformed_now),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_allocation_failures),
      cmocka_unit_test(test_workloads_keep_their_numbers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
