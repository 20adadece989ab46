/*
 * The list of operators, written once: X(ID, "name", definition symbol).
 * kiln_op_id_t, the registry table and every per-operator table derive from
 * it. Grouped by the family file that defines them.
 */
#ifndef KILN_OP_OP_LIST_H_
#define KILN_OP_OP_LIST_H_

/* nn_*.c: convolution, dense and matmul, normalization, pooling, softmax, layout */
#define KILN_OP_LIST_NN(X)                                                \
  X(CONV2D, "nn.conv2d", kiln_op_conv2d)                                  \
  X(CONV2D_NCHWC, "nn.contrib_conv2d_NCHWc", kiln_op_conv2d_nchwc)        \
  X(DENSE, "nn.dense", kiln_op_dense)                                     \
  X(MATMUL, "nn.matmul", kiln_op_matmul)                                  \
  X(BATCH_MATMUL, "nn.batch_matmul", kiln_op_batch_matmul)                \
  X(BATCH_NORM, "nn.batch_norm", kiln_op_batch_norm)                      \
  X(LAYER_NORM, "nn.layer_norm", kiln_op_layer_norm)                      \
  X(BIAS_ADD, "nn.bias_add", kiln_op_bias_add)                            \
  X(PRELU, "nn.prelu", kiln_op_prelu)                                     \
  X(MAX_POOL2D, "nn.max_pool2d", kiln_op_max_pool2d)                      \
  X(AVG_POOL2D, "nn.avg_pool2d", kiln_op_avg_pool2d)                      \
  X(GLOBAL_AVG_POOL2D, "nn.global_avg_pool2d", kiln_op_global_avg_pool2d) \
  X(GLOBAL_MAX_POOL2D, "nn.global_max_pool2d", kiln_op_global_max_pool2d) \
  X(SOFTMAX, "nn.softmax", kiln_op_softmax)                               \
  X(LOG_SOFTMAX, "nn.log_softmax", kiln_op_log_softmax)                   \
  X(LAYOUT_TRANSFORM, "layout_transform", kiln_op_layout_transform)

/* elemwise*.c: unary and binary elementwise operators, with broadcasting */
#define KILN_OP_LIST_ELEMWISE(X)                           \
  X(RELU, "nn.relu", kiln_op_relu)                         \
  X(LEAKY_RELU, "nn.leaky_relu", kiln_op_leaky_relu)       \
  X(CLIP, "clip", kiln_op_clip)                            \
  X(SIGMOID, "sigmoid", kiln_op_sigmoid)                   \
  X(TANH, "tanh", kiln_op_tanh)                            \
  X(ERF, "erf", kiln_op_erf)                               \
  X(GELU, "nn.gelu", kiln_op_gelu)                         \
  X(HARD_SIGMOID, "nn.hard_sigmoid", kiln_op_hard_sigmoid) \
  X(HARD_SWISH, "nn.hard_swish", kiln_op_hard_swish)       \
  X(EXP, "exp", kiln_op_exp)                               \
  X(LOG, "log", kiln_op_log)                               \
  X(SQRT, "sqrt", kiln_op_sqrt)                            \
  X(RSQRT, "rsqrt", kiln_op_rsqrt)                         \
  X(ABS, "abs", kiln_op_abs)                               \
  X(NEGATIVE, "negative", kiln_op_negative)                \
  X(FLOOR, "floor", kiln_op_floor)                         \
  X(CEIL, "ceil", kiln_op_ceil)                            \
  X(ADD, "add", kiln_op_add)                               \
  X(SUBTRACT, "subtract", kiln_op_subtract)                \
  X(MULTIPLY, "multiply", kiln_op_multiply)                \
  X(DIVIDE, "divide", kiln_op_divide)                      \
  X(POWER, "power", kiln_op_power)                         \
  X(MAXIMUM, "maximum", kiln_op_maximum)                   \
  X(MINIMUM, "minimum", kiln_op_minimum)                   \
  X(EQUAL, "equal", kiln_op_equal)                         \
  X(NOT_EQUAL, "not_equal", kiln_op_not_equal)             \
  X(LESS, "less", kiln_op_less)                            \
  X(LESS_EQUAL, "less_equal", kiln_op_less_equal)          \
  X(GREATER, "greater", kiln_op_greater)                   \
  X(GREATER_EQUAL, "greater_equal", kiln_op_greater_equal) \
  X(WHERE, "where", kiln_op_where)

/* reduce*.c and transform*.c: reductions and data movement */
#define KILN_OP_LIST_TRANSFORM(X)                             \
  X(SUM, "sum", kiln_op_sum)                                  \
  X(MEAN, "mean", kiln_op_mean)                               \
  X(MAX, "max", kiln_op_max)                                  \
  X(MIN, "min", kiln_op_min)                                  \
  X(ARGMAX, "argmax", kiln_op_argmax)                         \
  X(CONCATENATE, "concatenate", kiln_op_concatenate)          \
  X(SPLIT, "split", kiln_op_split)                            \
  X(RESHAPE, "reshape", kiln_op_reshape)                      \
  X(TRANSPOSE, "transpose", kiln_op_transpose)                \
  X(EXPAND_DIMS, "expand_dims", kiln_op_expand_dims)          \
  X(SQUEEZE, "squeeze", kiln_op_squeeze)                      \
  X(BATCH_FLATTEN, "nn.batch_flatten", kiln_op_batch_flatten) \
  X(STRIDED_SLICE, "strided_slice", kiln_op_strided_slice)    \
  X(TAKE, "take", kiln_op_take)                               \
  X(PAD, "nn.pad", kiln_op_pad)                               \
  X(RESIZE2D, "image.resize2d", kiln_op_resize2d)             \
  X(CAST, "cast", kiln_op_cast)

#define KILN_OP_LIST(X)    \
  KILN_OP_LIST_NN(X)       \
  KILN_OP_LIST_ELEMWISE(X) \
  KILN_OP_LIST_TRANSFORM(X)

#endif /* KILN_OP_OP_LIST_H_ */
