/*
 * The list of operators, written once: X(ID, "name", definition symbol).
 * kiln_op_id_t, the registry table and every per-operator table derive from
 * it. Grouped by the family file that defines them.
 */
#ifndef KILN_OP_OP_LIST_H_
#define KILN_OP_OP_LIST_H_

/* nn_*.c: convolution and its transpose, dense and matmul, normalization, pooling,
 * softmax and lrn, layout */
#define KILN_OP_LIST_NN(X)                                                \
  X(CONV2D, "nn.conv2d", kiln_op_conv2d)                                  \
  X(CONV2D_NCHWC, "nn.contrib_conv2d_NCHWc", kiln_op_conv2d_nchwc)        \
  X(CONV2D_TRANSPOSE, "nn.conv2d_transpose", kiln_op_conv2d_transpose)    \
  X(CONV3D, "nn.conv3d", kiln_op_conv3d)                                  \
  X(CONV3D_TRANSPOSE, "nn.conv3d_transpose", kiln_op_conv3d_transpose)    \
  X(DENSE, "nn.dense", kiln_op_dense)                                     \
  X(MATMUL, "nn.matmul", kiln_op_matmul)                                  \
  X(BATCH_MATMUL, "nn.batch_matmul", kiln_op_batch_matmul)                \
  X(DENSE_PACK, "nn.contrib_dense_pack", kiln_op_dense_pack)              \
  X(BATCH_NORM, "nn.batch_norm", kiln_op_batch_norm)                      \
  X(LAYER_NORM, "nn.layer_norm", kiln_op_layer_norm)                      \
  X(BIAS_ADD, "nn.bias_add", kiln_op_bias_add)                            \
  X(PRELU, "nn.prelu", kiln_op_prelu)                                     \
  X(INSTANCE_NORM, "nn.instance_norm", kiln_op_instance_norm)             \
  X(MAX_POOL2D, "nn.max_pool2d", kiln_op_max_pool2d)                      \
  X(AVG_POOL2D, "nn.avg_pool2d", kiln_op_avg_pool2d)                      \
  X(GLOBAL_AVG_POOL2D, "nn.global_avg_pool2d", kiln_op_global_avg_pool2d) \
  X(GLOBAL_MAX_POOL2D, "nn.global_max_pool2d", kiln_op_global_max_pool2d) \
  X(MAX_POOL3D, "nn.max_pool3d", kiln_op_max_pool3d)                      \
  X(AVG_POOL3D, "nn.avg_pool3d", kiln_op_avg_pool3d)                      \
  X(SOFTMAX, "nn.softmax", kiln_op_softmax)                               \
  X(LOG_SOFTMAX, "nn.log_softmax", kiln_op_log_softmax)                   \
  X(LRN, "nn.lrn", kiln_op_lrn)                                           \
  X(LAYOUT_TRANSFORM, "layout_transform", kiln_op_layout_transform)

/* elemwise*.c: unary and binary elementwise operators, with broadcasting */
#define KILN_OP_LIST_ELEMWISE(X)                                       \
  X(RELU, "nn.relu", kiln_op_relu)                                     \
  X(LEAKY_RELU, "nn.leaky_relu", kiln_op_leaky_relu)                   \
  X(CLIP, "clip", kiln_op_clip)                                        \
  X(SIGMOID, "sigmoid", kiln_op_sigmoid)                               \
  X(TANH, "tanh", kiln_op_tanh)                                        \
  X(ERF, "erf", kiln_op_erf)                                           \
  X(GELU, "nn.gelu", kiln_op_gelu)                                     \
  X(HARD_SIGMOID, "nn.hard_sigmoid", kiln_op_hard_sigmoid)             \
  X(HARD_SWISH, "nn.hard_swish", kiln_op_hard_swish)                   \
  X(EXP, "exp", kiln_op_exp)                                           \
  X(LOG, "log", kiln_op_log)                                           \
  X(SQRT, "sqrt", kiln_op_sqrt)                                        \
  X(RSQRT, "rsqrt", kiln_op_rsqrt)                                     \
  X(ABS, "abs", kiln_op_abs)                                           \
  X(NEGATIVE, "negative", kiln_op_negative)                            \
  X(FLOOR, "floor", kiln_op_floor)                                     \
  X(CEIL, "ceil", kiln_op_ceil)                                        \
  X(SIN, "sin", kiln_op_sin)                                           \
  X(COS, "cos", kiln_op_cos)                                           \
  X(TAN, "tan", kiln_op_tan)                                           \
  X(ASIN, "asin", kiln_op_asin)                                        \
  X(ACOS, "acos", kiln_op_acos)                                        \
  X(ATAN, "atan", kiln_op_atan)                                        \
  X(SINH, "sinh", kiln_op_sinh)                                        \
  X(COSH, "cosh", kiln_op_cosh)                                        \
  X(ASINH, "asinh", kiln_op_asinh)                                     \
  X(ACOSH, "acosh", kiln_op_acosh)                                     \
  X(ATANH, "atanh", kiln_op_atanh)                                     \
  X(SIGN, "sign", kiln_op_sign)                                        \
  X(ROUND, "round", kiln_op_round)                                     \
  X(RECIPROCAL, "reciprocal", kiln_op_reciprocal)                      \
  X(ISNAN, "isnan", kiln_op_isnan)                                     \
  X(ISINF, "isinf", kiln_op_isinf)                                     \
  X(LOGICAL_NOT, "logical_not", kiln_op_logical_not)                   \
  X(SOFTPLUS, "softplus", kiln_op_softplus)                            \
  X(SOFTSIGN, "softsign", kiln_op_softsign)                            \
  X(ELU, "nn.elu", kiln_op_elu)                                        \
  X(SELU, "nn.selu", kiln_op_selu)                                     \
  X(CELU, "nn.celu", kiln_op_celu)                                     \
  X(THRESHOLDED_RELU, "nn.thresholded_relu", kiln_op_thresholded_relu) \
  X(SHRINK, "nn.shrink", kiln_op_shrink)                               \
  X(ADD, "add", kiln_op_add)                                           \
  X(SUBTRACT, "subtract", kiln_op_subtract)                            \
  X(MULTIPLY, "multiply", kiln_op_multiply)                            \
  X(DIVIDE, "divide", kiln_op_divide)                                  \
  X(POWER, "power", kiln_op_power)                                     \
  X(MAXIMUM, "maximum", kiln_op_maximum)                               \
  X(MINIMUM, "minimum", kiln_op_minimum)                               \
  X(EQUAL, "equal", kiln_op_equal)                                     \
  X(NOT_EQUAL, "not_equal", kiln_op_not_equal)                         \
  X(LESS, "less", kiln_op_less)                                        \
  X(LESS_EQUAL, "less_equal", kiln_op_less_equal)                      \
  X(GREATER, "greater", kiln_op_greater)                               \
  X(GREATER_EQUAL, "greater_equal", kiln_op_greater_equal)             \
  X(MOD, "mod", kiln_op_mod)                                           \
  X(FLOOR_MOD, "floor_mod", kiln_op_floor_mod)                         \
  X(LOGICAL_AND, "logical_and", kiln_op_logical_and)                   \
  X(LOGICAL_OR, "logical_or", kiln_op_logical_or)                      \
  X(LOGICAL_XOR, "logical_xor", kiln_op_logical_xor)                   \
  X(LEFT_SHIFT, "left_shift", kiln_op_left_shift)                      \
  X(RIGHT_SHIFT, "right_shift", kiln_op_right_shift)                   \
  X(WHERE, "where", kiln_op_where)

/* reduce*.c and transform*.c: reductions, data movement, gather and scatter,
 * arange, one_hot, trilu, cumsum and topk; image.grid_sample, einsum, dft,
 * shape_of, stft, mel_weight_matrix, vision.roi_align, det and the random
 * operators */
#define KILN_OP_LIST_TRANSFORM(X)                                      \
  X(SUM, "sum", kiln_op_sum)                                           \
  X(MEAN, "mean", kiln_op_mean)                                        \
  X(MAX, "max", kiln_op_max)                                           \
  X(MIN, "min", kiln_op_min)                                           \
  X(PROD, "prod", kiln_op_prod)                                        \
  X(ARGMAX, "argmax", kiln_op_argmax)                                  \
  X(ARGMIN, "argmin", kiln_op_argmin)                                  \
  X(CONCATENATE, "concatenate", kiln_op_concatenate)                   \
  X(SPLIT, "split", kiln_op_split)                                     \
  X(RESHAPE, "reshape", kiln_op_reshape)                               \
  X(TRANSPOSE, "transpose", kiln_op_transpose)                         \
  X(EXPAND_DIMS, "expand_dims", kiln_op_expand_dims)                   \
  X(SQUEEZE, "squeeze", kiln_op_squeeze)                               \
  X(BATCH_FLATTEN, "nn.batch_flatten", kiln_op_batch_flatten)          \
  X(STRIDED_SLICE, "strided_slice", kiln_op_strided_slice)             \
  X(TAKE, "take", kiln_op_take)                                        \
  X(PAD, "nn.pad", kiln_op_pad)                                        \
  X(RESIZE2D, "image.resize2d", kiln_op_resize2d)                      \
  X(CAST, "cast", kiln_op_cast)                                        \
  X(TILE, "tile", kiln_op_tile)                                        \
  X(BROADCAST_TO, "broadcast_to", kiln_op_broadcast_to)                \
  X(TRILU, "trilu", kiln_op_trilu)                                     \
  X(ARANGE, "arange", kiln_op_arange)                                  \
  X(ONE_HOT, "one_hot", kiln_op_one_hot)                               \
  X(CUMSUM, "cumsum", kiln_op_cumsum)                                  \
  X(TOPK, "topk", kiln_op_topk)                                        \
  X(GATHER, "gather", kiln_op_gather)                                  \
  X(GATHER_ND, "gather_nd", kiln_op_gather_nd)                         \
  X(SCATTER_ELEMENTS, "scatter_elements", kiln_op_scatter_elements)    \
  X(SCATTER_ND, "scatter_nd", kiln_op_scatter_nd)                      \
  X(DEPTH_TO_SPACE, "nn.depth_to_space", kiln_op_depth_to_space)       \
  X(SPACE_TO_DEPTH, "nn.space_to_depth", kiln_op_space_to_depth)       \
  X(GRID_SAMPLE, "image.grid_sample", kiln_op_grid_sample)             \
  X(EINSUM, "einsum", kiln_op_einsum)                                  \
  X(DFT, "dft", kiln_op_dft)                                           \
  X(SHAPE_OF, "shape_of", kiln_op_shape_of)                            \
  X(STFT, "stft", kiln_op_stft)                                        \
  X(MEL_WEIGHT_MATRIX, "mel_weight_matrix", kiln_op_mel_weight_matrix) \
  X(ROI_ALIGN, "vision.roi_align", kiln_op_roi_align)                  \
  X(DET, "det", kiln_op_det)                                           \
  X(RANDOM_UNIFORM, "random.uniform", kiln_op_random_uniform)          \
  X(RANDOM_NORMAL, "random.normal", kiln_op_random_normal)             \
  X(RANDOM_BERNOULLI, "random.bernoulli", kiln_op_random_bernoulli)

/* elemwise_fast.c: fast approximations, substituted by the fast_math pass */
#define KILN_OP_LIST_FAST(X)                \
  X(FAST_EXP, "fast_exp", kiln_op_fast_exp) \
  X(FAST_ERF, "fast_erf", kiln_op_fast_erf) \
  X(FAST_TANH, "fast_tanh", kiln_op_fast_tanh)

/* control.c: control flow (taking Function arguments), sequences and
 * optionals, which the interpreter evaluates itself (docs/control-flow.md) */
#define KILN_OP_LIST_CONTROL(X)                                         \
  X(IF, "if", kiln_op_if)                                               \
  X(LOOP, "loop", kiln_op_loop)                                         \
  X(SCAN, "scan", kiln_op_scan)                                         \
  X(SEQ_EMPTY, "seq.empty", kiln_op_seq_empty)                          \
  X(SEQ_CONSTRUCT, "seq.construct", kiln_op_seq_construct)              \
  X(SEQ_INSERT, "seq.insert", kiln_op_seq_insert)                       \
  X(SEQ_AT, "seq.at", kiln_op_seq_at)                                   \
  X(SEQ_ERASE, "seq.erase", kiln_op_seq_erase)                          \
  X(SEQ_LENGTH, "seq.length", kiln_op_seq_length)                       \
  X(SEQ_SPLIT, "seq.split", kiln_op_seq_split)                          \
  X(SEQ_CONCAT, "seq.concat", kiln_op_seq_concat)                       \
  X(SEQ_MAP, "seq.map", kiln_op_seq_map)                                \
  X(OPTIONAL, "optional", kiln_op_optional)                             \
  X(OPTIONAL_HAS_ELEMENT, "optional.has_element", kiln_op_optional_has) \
  X(OPTIONAL_GET_ELEMENT, "optional.get_element", kiln_op_optional_get)

/* dyn.c: static operators whose shape-like attributes are run-time inputs;
 * dyn_resize.c: ONNX Resize with its scales or sizes read at run time;
 * value_shape.c: outputs whose shape depends on the data's values */
#define KILN_OP_LIST_DYN(X)                                            \
  X(DYN_RESHAPE, "dyn.reshape", kiln_op_dyn_reshape)                   \
  X(DYN_BROADCAST_TO, "dyn.broadcast_to", kiln_op_dyn_broadcast_to)    \
  X(DYN_TILE, "dyn.tile", kiln_op_dyn_tile)                            \
  X(DYN_STRIDED_SLICE, "dyn.strided_slice", kiln_op_dyn_strided_slice) \
  X(DYN_SQUEEZE, "dyn.squeeze", kiln_op_dyn_squeeze)                   \
  X(DYN_UNSQUEEZE, "dyn.unsqueeze", kiln_op_dyn_unsqueeze)             \
  X(DYN_SUM, "dyn.sum", kiln_op_dyn_sum)                               \
  X(DYN_CUMSUM, "dyn.cumsum", kiln_op_dyn_cumsum)                      \
  X(DYN_TOPK, "dyn.topk", kiln_op_dyn_topk)                            \
  X(DYN_ARANGE, "dyn.arange", kiln_op_dyn_arange)                      \
  X(DYN_RESIZE, "dyn.resize", kiln_op_dyn_resize)                      \
  X(DYN_SPLIT, "dyn.split", kiln_op_dyn_split)                         \
  X(DYN_ONE_HOT, "dyn.one_hot", kiln_op_dyn_one_hot)                   \
  X(DYN_PAD, "dyn.pad", kiln_op_dyn_pad)                               \
  X(NONZERO, "nonzero", kiln_op_nonzero)                               \
  X(UNIQUE, "unique", kiln_op_unique)                                  \
  X(NON_MAX_SUPPRESSION, "vision.non_max_suppression", kiln_op_non_max_suppression)

#define KILN_OP_LIST(X)     \
  KILN_OP_LIST_NN(X)        \
  KILN_OP_LIST_ELEMWISE(X)  \
  KILN_OP_LIST_TRANSFORM(X) \
  KILN_OP_LIST_FAST(X)      \
  KILN_OP_LIST_CONTROL(X)   \
  KILN_OP_LIST_DYN(X)

/* The operators with implementations: every one but the control operators,
 * which the interpreter evaluates itself. Each defines `symbol`_impl, its
 * entry in the implementation registries (op/impl.h), next to `symbol`. */
#define KILN_OP_LIST_IMPLEMENTED(X) \
  KILN_OP_LIST_NN(X)                \
  KILN_OP_LIST_ELEMWISE(X)          \
  KILN_OP_LIST_TRANSFORM(X)         \
  KILN_OP_LIST_FAST(X)              \
  KILN_OP_LIST_DYN(X)

#endif /* KILN_OP_OP_LIST_H_ */
