/*
 * Recurrent converters: RNN, GRU and LSTM, unrolled over the sequence.
 *
 * The sequence length is static, so each time step becomes its own few
 * calls: no loop construct is needed. Per direction the input projection of
 * every step is one nn.dense of X (seq, batch, input) with W (gates·hidden,
 * input), and each step adds nn.dense of the previous hidden state with R;
 * the gates are column slices of those (ONNX's order: GRU z, r, h; LSTM i,
 * o, f, c) and the biases Wb and Rb are added to them. The step formulas are
 * ONNX's (GRU with linear_before_reset 0 or 1; LSTM with peepholes P).
 * Reverse runs the steps from the last; bidirectional does both and stacks
 * them on the direction axis. Y is the hidden states in time order (seq,
 * dirs, batch, hidden), Y_h the last ones, Y_c LSTM's last cell state;
 * layout 1 (batch first) transposes X in and the outputs back. The
 * activations are ONNX's defaults or any of Sigmoid, Tanh and Relu per
 * gate; clip, activation_alpha/beta and LSTM's input_forget are refused.
 * sequence_lens (known at import or not) that may be shorter than the
 * sequence masks each step: past a batch entry's length its state stays
 * (so Y_h is the state at its last step; the reverse direction starts from
 * the initial state at its length - 1) and its Y is 0, by `where` on
 * `t < len` (static shapes: it compiles too).
 */
#include <string.h>

#include "frontend/onnx/onnx_convert.h"

#define KILN_ONNX_RNN_MAX_ACTIVATIONS 6

typedef enum kiln_onnx_rnn_kind_e {
  KILN_ONNX_RNN,
  KILN_ONNX_GRU,
  KILN_ONNX_LSTM,
} kiln_onnx_rnn_kind_t;

typedef struct kiln_onnx_rnn_t {
  kiln_onnx_rnn_kind_t kind;
  int gates;      /* 1, 3, 4 */
  int directions; /* 1 or 2 */
  bool reverse;   /* the only direction runs backward */
  bool batch_first;
  bool linear_before_reset;
  int64_t hidden, batch, steps;
  kiln_dtype_t dtype;
  const kiln_op_t *activations[KILN_ONNX_RNN_MAX_ACTIVATIONS]; /* per direction, f, g, h */
} kiln_onnx_rnn_t;

/* ---- small pieces ---- */

/* x[begin:end] along `axis`. */
static kiln_status_t kiln_onnx_rnn_slice(const kiln_onnx_node_t *node, kiln_expr_t *x, int64_t axis,
                                         int64_t begin, int64_t end, kiln_expr_t **out_expr) {
  const kiln_op_t *op = &kiln_op_strided_slice;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "begin", 1, &begin));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "end", 1, &end));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "axes", 1, &axis));
  return kiln_onnx_emit1(node, op, x, attrs, out_expr);
}

/* x[index], the first dim dropped. */
static kiln_status_t kiln_onnx_rnn_pick(const kiln_onnx_node_t *node, kiln_expr_t *x, int64_t index,
                                        kiln_expr_t **out_expr) {
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_slice(node, x, 0, index, index + 1, out_expr));
  return kiln_onnx_reshape(node, *out_expr, xt->ndim - 1, xt->shape + 1, out_expr);
}

/* Gate `gate` of a (..., gates·hidden) tensor: its columns. */
static kiln_status_t kiln_onnx_rnn_gate(const kiln_onnx_node_t *node, const kiln_onnx_rnn_t *rnn,
                                        kiln_expr_t *x, int gate, kiln_expr_t **out_expr) {
  int64_t axis = kiln_onnx_type_of(x)->ndim - 1;
  return kiln_onnx_rnn_slice(node, x, axis, gate * rnn->hidden, (gate + 1) * rnn->hidden, out_expr);
}

static kiln_status_t kiln_onnx_rnn_add(const kiln_onnx_node_t *node, kiln_expr_t *a, kiln_expr_t *b,
                                       kiln_expr_t **out_expr) {
  return kiln_onnx_emit2(node, &kiln_op_add, a, b, NULL, out_expr);
}

static kiln_status_t kiln_onnx_rnn_mul(const kiln_onnx_node_t *node, kiln_expr_t *a, kiln_expr_t *b,
                                       kiln_expr_t **out_expr) {
  return kiln_onnx_emit2(node, &kiln_op_multiply, a, b, NULL, out_expr);
}

/* ---- attributes ---- */

static kiln_status_t kiln_onnx_rnn_activation(const char *name, size_t length,
                                              const kiln_op_t **out_op) {
  static const struct {
    const char *name;
    const kiln_op_t *op;
  } known[] = {{"Sigmoid", &kiln_op_sigmoid}, {"Tanh", &kiln_op_tanh}, {"Relu", &kiln_op_relu}};
  for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); ++i) {
    if (strlen(known[i].name) == length && memcmp(known[i].name, name, length) == 0) {
      *out_op = known[i].op;
      return KILN_OK;
    }
  }
  return KILN_STATUS(UNIMPLEMENTED, "activation \"%.*s\" is not supported (Sigmoid, Tanh, Relu)",
                     (int)length, name);
}

/* The activations: the attribute's, or ONNX's defaults for every direction. */
static kiln_status_t kiln_onnx_rnn_activations(const kiln_onnx_node_t *node, kiln_onnx_rnn_t *rnn) {
  static const int counts[3] = {1, 2, 3};
  int per_direction = counts[rnn->kind];
  const Onnx__AttributeProto *attr = kiln_onnx_attr(node, "activations");
  if (!attr) {
    for (int d = 0; d < rnn->directions; ++d) {
      for (int i = 0; i < per_direction; ++i) {
        bool tanh = rnn->kind == KILN_ONNX_RNN || i > 0;
        rnn->activations[d * per_direction + i] = tanh ? &kiln_op_tanh : &kiln_op_sigmoid;
      }
    }
    return KILN_OK;
  }
  if (attr->n_strings != (size_t)(per_direction * rnn->directions)) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute activations has %zu names; expected %d",
                       attr->n_strings, per_direction * rnn->directions);
  }
  for (size_t i = 0; i < attr->n_strings; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_rnn_activation((const char *)attr->strings[i].data,
                                                  attr->strings[i].len, &rnn->activations[i]));
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_rnn_refused(const kiln_onnx_node_t *node) {
  static const char *const refused[] = {"clip", "activation_alpha", "activation_beta"};
  for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); ++i) {
    if (kiln_onnx_attr(node, refused[i])) {
      return KILN_STATUS(UNIMPLEMENTED, "attribute %s is not supported", refused[i]);
    }
  }
  int64_t input_forget = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "input_forget", 0, &input_forget));
  if (input_forget != 0) {
    return KILN_STATUS(UNIMPLEMENTED, "input_forget=1 is not supported");
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_rnn_direction(const kiln_onnx_node_t *node, kiln_onnx_rnn_t *rnn) {
  const char *direction = "forward";
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "direction", "forward", &direction));
  rnn->directions = strcmp(direction, "bidirectional") == 0 ? 2 : 1;
  rnn->reverse = strcmp(direction, "reverse") == 0;
  if (rnn->directions == 1 && !rnn->reverse && strcmp(direction, "forward") != 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "attribute direction is \"%s\"; expected forward, reverse or bidirectional",
                       direction);
  }
  return KILN_OK;
}

/* Shapes: X (seq, batch, input) after the layout, W (dirs, gates·hidden,
 * input), R (dirs, gates·hidden, hidden). */
static kiln_status_t kiln_onnx_rnn_shapes(const kiln_onnx_node_t *node, kiln_expr_t *x,
                                          kiln_onnx_rnn_t *rnn) {
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x), *wt = NULL, *rt = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 1, &wt));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 2, &rt));
  int64_t hidden = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "hidden_size", 0, &hidden));
  if (hidden <= 0 && wt->ndim == 3) {
    hidden = wt->shape[1] / rnn->gates;
  }
  rnn->hidden = hidden;
  rnn->steps = xt->ndim == 3 ? xt->shape[0] : 0;
  rnn->batch = xt->ndim == 3 ? xt->shape[1] : 0;
  rnn->dtype = xt->dtype;
  bool fits = xt->ndim == 3 && wt->ndim == 3 && rt->ndim == 3 && hidden > 0 &&
              wt->shape[0] == rnn->directions && wt->shape[1] == rnn->gates * hidden &&
              wt->shape[2] == xt->shape[2] && rt->shape[0] == rnn->directions &&
              rt->shape[1] == rnn->gates * hidden && rt->shape[2] == hidden;
  if (!fits) {
    char x_text[KILN_SHAPE_TEXT_CAPACITY], w_text[KILN_SHAPE_TEXT_CAPACITY];
    char r_text[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(xt->ndim, xt->shape, x_text, sizeof(x_text));
    kiln_shape_format(wt->ndim, wt->shape, w_text, sizeof(w_text));
    kiln_shape_format(rt->ndim, rt->shape, r_text, sizeof(r_text));
    return KILN_STATUS(INVALID_ARGUMENT,
                       "X %s, W %s and R %s do not fit %d direction(s), %d gate(s) and "
                       "hidden_size %lld",
                       x_text, w_text, r_text, rnn->directions, rnn->gates, (long long)hidden);
  }
  if (rnn->steps == 0) {
    return KILN_STATUS(UNIMPLEMENTED, "an empty sequence is not supported");
  }
  return KILN_OK;
}

/* Checks sequence_lens, when given: one int32 or int64 per batch entry,
 * each in [0, steps] when known at import. */
static kiln_status_t kiln_onnx_rnn_lengths(const kiln_onnx_node_t *node,
                                           const kiln_onnx_rnn_t *rnn) {
  kiln_expr_t *lengths = kiln_onnx_input_optional(node, 4);
  if (!lengths) {
    return KILN_OK;
  }
  const kiln_tensor_type_t *lt = kiln_onnx_type_of(lengths);
  if (!lt || lt->ndim != 1 || lt->shape[0] != rnn->batch ||
      (lt->dtype != KILN_DTYPE_INT32 && lt->dtype != KILN_DTYPE_INT64)) {
    return KILN_STATUS(INVALID_ARGUMENT, "sequence_lens is not %lld int32 values (the batch)",
                       (long long)rnn->batch);
  }
  bool known = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 4, &known));
  if (!known) {
    return KILN_OK;
  }
  kiln_ints_t values;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 4, "sequence_lens", &values));
  for (int32_t i = 0; i < values.count; ++i) {
    if (values.values[i] < 0 || values.values[i] > rnn->steps) {
      return KILN_STATUS(INVALID_ARGUMENT, "sequence_lens[%d] is %lld; the sequence has %lld steps",
                         (int)i, (long long)values.values[i], (long long)rnn->steps);
    }
  }
  return KILN_OK;
}

/* sequence_lens as (batch, 1) int64 when the steps need masking (given,
 * and not known to be the full length for every batch entry), else NULL. */
static kiln_status_t kiln_onnx_rnn_mask_lengths(const kiln_onnx_node_t *node,
                                                const kiln_onnx_rnn_t *rnn,
                                                kiln_expr_t **out_lengths) {
  *out_lengths = NULL;
  if (!kiln_onnx_input_optional(node, 4)) {
    return KILN_OK;
  }
  bool known = false, full = true;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 4, &known));
  if (known) {
    kiln_ints_t values;
    KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 4, "sequence_lens", &values));
    for (int32_t i = 0; i < values.count; ++i) {
      full = full && values.values[i] == rnn->steps;
    }
  }
  if (known && full) {
    return KILN_OK;
  }
  const int64_t column[2] = {rnn->batch, 1};
  KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, node->inputs[4], KILN_DTYPE_INT64, out_lengths));
  return kiln_onnx_reshape(node, *out_lengths, 2, column, out_lengths);
}

/* Step t past a batch entry's length (sequence_lens): its state stays and
 * its output is 0. `lengths` (batch, 1) int64; *inout_y the step's output. */
static kiln_status_t kiln_onnx_rnn_mask(const kiln_onnx_node_t *node, const kiln_onnx_rnn_t *rnn,
                                        kiln_expr_t *lengths, int64_t t, kiln_expr_t *h,
                                        kiln_expr_t *c, kiln_expr_t **inout_h,
                                        kiln_expr_t **inout_c, kiln_expr_t **out_y) {
  kiln_expr_t *step = NULL, *inside = NULL, *zero = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_INT64, (double)t, &step));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_less, step, lengths, NULL, &inside));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, rnn->dtype, 0.0, &zero));
  kiln_expr_t *y[3] = {inside, *inout_h, zero}, *keep_h[3] = {inside, *inout_h, h};
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_where, 3, y, NULL, out_y));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_where, 3, keep_h, NULL, inout_h));
  if (!c) {
    return KILN_OK;
  }
  kiln_expr_t *keep_c[3] = {inside, *inout_c, c};
  return kiln_onnx_emit(node, &kiln_op_where, 3, keep_c, NULL, inout_c);
}

/* ---- one direction ---- */

typedef struct kiln_onnx_rnn_dir_t {
  kiln_expr_t *xw; /* (seq, batch, gates·hidden): X · Wᵀ + Wb */
  kiln_expr_t *r;  /* (gates·hidden, hidden) */
  kiln_expr_t *rb; /* (gates·hidden,) or NULL */
  kiln_expr_t *p;  /* LSTM's (3·hidden,) peepholes i, o, f, or NULL */
  kiln_expr_t *h, *c;
  const kiln_op_t *const *act; /* f, g, h */
} kiln_onnx_rnn_dir_t;

/* The initial state `index` (initial_h 5, initial_c 6) of direction d, or
 * zeros. */
static kiln_status_t kiln_onnx_rnn_initial(const kiln_onnx_node_t *node, const kiln_onnx_rnn_t *rnn,
                                           int index, int d, kiln_expr_t **out_expr) {
  kiln_expr_t *given = kiln_onnx_input_optional(node, index);
  if (given && rnn->batch_first) {
    const int64_t perm[3] = {1, 0, 2};
    void *attrs = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_transpose, &attrs));
    KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, &kiln_op_transpose, attrs, "axes", 3, perm));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_transpose, given, attrs, &given));
  }
  if (given) {
    return kiln_onnx_rnn_pick(node, given, d, out_expr);
  }
  const int64_t shape[2] = {rnn->batch, rnn->hidden};
  return kiln_onnx_filled(node, rnn->dtype, 2, shape, 0.0, out_expr);
}

static kiln_status_t kiln_onnx_rnn_prepare(const kiln_onnx_node_t *node, const kiln_onnx_rnn_t *rnn,
                                           kiln_expr_t *x, int d, kiln_onnx_rnn_dir_t *out_dir) {
  kiln_expr_t *w = NULL, *b = NULL, *wb = NULL;
  int64_t width = rnn->gates * rnn->hidden;
  memset(out_dir, 0, sizeof(*out_dir));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_pick(node, node->inputs[1], d, &w));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_pick(node, node->inputs[2], d, &out_dir->r));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_dense, x, w, NULL, &out_dir->xw));
  if (kiln_onnx_input_optional(node, 3)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_rnn_pick(node, node->inputs[3], d, &b));
    KILN_RETURN_IF_ERROR(kiln_onnx_rnn_slice(node, b, 0, 0, width, &wb));
    KILN_RETURN_IF_ERROR(kiln_onnx_rnn_slice(node, b, 0, width, 2 * width, &out_dir->rb));
    KILN_RETURN_IF_ERROR(kiln_onnx_rnn_add(node, out_dir->xw, wb, &out_dir->xw));
  }
  if (rnn->kind == KILN_ONNX_LSTM && kiln_onnx_input_optional(node, 7)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_rnn_pick(node, node->inputs[7], d, &out_dir->p));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_initial(node, rnn, 5, d, &out_dir->h));
  if (rnn->kind == KILN_ONNX_LSTM) {
    KILN_RETURN_IF_ERROR(kiln_onnx_rnn_initial(node, rnn, 6, d, &out_dir->c));
  }
  static const int counts[3] = {1, 2, 3};
  out_dir->act = &rnn->activations[d * counts[rnn->kind]];
  return KILN_OK;
}

/* a + (peephole `index` ⊙ c) when LSTM has peepholes. */
static kiln_status_t kiln_onnx_rnn_peephole(const kiln_onnx_node_t *node,
                                            const kiln_onnx_rnn_t *rnn,
                                            const kiln_onnx_rnn_dir_t *dir, int index,
                                            kiln_expr_t *c, kiln_expr_t **inout) {
  if (!dir->p) {
    return KILN_OK;
  }
  kiln_expr_t *p = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_gate(node, rnn, dir->p, index, &p));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_mul(node, p, c, &p));
  return kiln_onnx_rnn_add(node, *inout, p, inout);
}

static kiln_status_t kiln_onnx_lstm_step(const kiln_onnx_node_t *node, const kiln_onnx_rnn_t *rnn,
                                         kiln_onnx_rnn_dir_t *dir, kiln_expr_t *sum) {
  kiln_expr_t *i = NULL, *o = NULL, *f = NULL, *g = NULL, *c = NULL, *t = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_gate(node, rnn, sum, 0, &i));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_gate(node, rnn, sum, 1, &o));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_gate(node, rnn, sum, 2, &f));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_gate(node, rnn, sum, 3, &g));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_peephole(node, rnn, dir, 0, dir->c, &i));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_peephole(node, rnn, dir, 2, dir->c, &f));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, dir->act[0], i, NULL, &i));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, dir->act[0], f, NULL, &f));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, dir->act[1], g, NULL, &g));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_mul(node, f, dir->c, &c));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_mul(node, i, g, &t));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_add(node, c, t, &dir->c));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_peephole(node, rnn, dir, 1, dir->c, &o));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, dir->act[0], o, NULL, &o));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, dir->act[2], dir->c, NULL, &t));
  return kiln_onnx_rnn_mul(node, o, t, &dir->h);
}

/* GRU: z, r from the sums; the candidate from x's part and R_h applied to
 * r ⊙ h (linear_before_reset 0) or r ⊙ (h · R_hᵀ + Rb_h) (1). */
static kiln_status_t kiln_onnx_gru_step(const kiln_onnx_node_t *node, const kiln_onnx_rnn_t *rnn,
                                        kiln_onnx_rnn_dir_t *dir, kiln_expr_t *xw,
                                        kiln_expr_t *hr) {
  kiln_expr_t *sum = NULL, *z = NULL, *r = NULL, *cand = NULL, *hh = NULL, *rh = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_add(node, xw, hr, &sum));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_gate(node, rnn, sum, 0, &z));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_gate(node, rnn, sum, 1, &r));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, dir->act[0], z, NULL, &z));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, dir->act[0], r, NULL, &r));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_gate(node, rnn, xw, 2, &cand));
  if (rnn->linear_before_reset) {
    KILN_RETURN_IF_ERROR(kiln_onnx_rnn_gate(node, rnn, hr, 2, &hh));
    KILN_RETURN_IF_ERROR(kiln_onnx_rnn_mul(node, r, hh, &hh));
  } else {
    KILN_RETURN_IF_ERROR(
        kiln_onnx_rnn_slice(node, dir->r, 0, 2 * rnn->hidden, 3 * rnn->hidden, &rh));
    KILN_RETURN_IF_ERROR(kiln_onnx_rnn_mul(node, r, dir->h, &hh));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_dense, hh, rh, NULL, &hh));
    if (dir->rb) {
      KILN_RETURN_IF_ERROR(kiln_onnx_rnn_gate(node, rnn, dir->rb, 2, &rh));
      KILN_RETURN_IF_ERROR(kiln_onnx_rnn_add(node, hh, rh, &hh));
    }
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_add(node, cand, hh, &cand));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, dir->act[1], cand, NULL, &cand));
  /* h = cand + z ⊙ (h - cand), which is (1 - z) ⊙ cand + z ⊙ h */
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_subtract, dir->h, cand, NULL, &hh));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_mul(node, z, hh, &hh));
  return kiln_onnx_rnn_add(node, cand, hh, &dir->h);
}

/* One time step t: dir->h (and dir->c) move on. */
static kiln_status_t kiln_onnx_rnn_step(const kiln_onnx_node_t *node, const kiln_onnx_rnn_t *rnn,
                                        kiln_onnx_rnn_dir_t *dir, int64_t t) {
  kiln_expr_t *xw = NULL, *hr = NULL, *sum = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_pick(node, dir->xw, t, &xw));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_dense, dir->h, dir->r, NULL, &hr));
  if (dir->rb) { /* GRU without linear_before_reset ignores gate h of hr */
    KILN_RETURN_IF_ERROR(kiln_onnx_rnn_add(node, hr, dir->rb, &hr));
  }
  if (rnn->kind == KILN_ONNX_GRU) {
    return kiln_onnx_gru_step(node, rnn, dir, xw, hr);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_add(node, xw, hr, &sum));
  if (rnn->kind == KILN_ONNX_LSTM) {
    return kiln_onnx_lstm_step(node, rnn, dir, sum);
  }
  return kiln_onnx_emit1(node, dir->act[0], sum, NULL, &dir->h);
}

/* Runs direction d over every step; *out_y is (seq, 1, batch, hidden), the
 * final states (1, batch, hidden). */
static kiln_status_t kiln_onnx_rnn_direction_run(const kiln_onnx_node_t *node,
                                                 const kiln_onnx_rnn_t *rnn, kiln_expr_t *x, int d,
                                                 kiln_expr_t **states, kiln_expr_t **out_y,
                                                 kiln_expr_t **out_h, kiln_expr_t **out_c) {
  kiln_onnx_rnn_dir_t dir;
  kiln_expr_t *lengths = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_prepare(node, rnn, x, d, &dir));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_mask_lengths(node, rnn, &lengths));
  bool backward = rnn->reverse || d == 1;
  const int64_t one_step[4] = {1, 1, rnn->batch, rnn->hidden};
  for (int64_t i = 0; i < rnn->steps; ++i) {
    int64_t t = backward ? rnn->steps - 1 - i : i;
    kiln_expr_t *h = dir.h, *c = dir.c, *y = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_rnn_step(node, rnn, &dir, t));
    y = dir.h;
    if (lengths) {
      KILN_RETURN_IF_ERROR(kiln_onnx_rnn_mask(node, rnn, lengths, t, h, c, &dir.h, &dir.c, &y));
    }
    KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, y, 4, one_step, &states[t]));
  }
  const kiln_op_t *op = &kiln_op_concatenate;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_emit(node, op, (int)rnn->steps, states, attrs, out_y)); /* axis 0 */
  KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, dir.h, 3, one_step + 1, out_h));
  if (dir.c) {
    KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, dir.c, 3, one_step + 1, out_c));
  }
  return KILN_OK;
}

/* ---- the operator ---- */

/* Joins per-direction parts on `axis`, then transposes by `perm` (rank
 * `ndim`) when batch_first. */
static kiln_status_t kiln_onnx_rnn_output(const kiln_onnx_node_t *node, const kiln_onnx_rnn_t *rnn,
                                          kiln_expr_t **parts, int64_t axis, int ndim,
                                          const int64_t *perm, kiln_expr_t **out_expr) {
  const kiln_op_t *op = &kiln_op_concatenate;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "axis", axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, op, rnn->directions, parts, attrs, out_expr));
  if (!rnn->batch_first) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_transpose, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, &kiln_op_transpose, attrs, "axes", ndim, perm));
  return kiln_onnx_emit1(node, &kiln_op_transpose, *out_expr, attrs, out_expr);
}

static kiln_status_t kiln_onnx_rnn_read(kiln_onnx_node_t *node, kiln_onnx_rnn_t *rnn,
                                        kiln_expr_t **inout_x) {
  int64_t layout = 0, linear = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_refused(node));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_direction(node, rnn));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "layout", 0, &layout));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "linear_before_reset", 0, &linear));
  rnn->batch_first = layout != 0;
  rnn->linear_before_reset = linear != 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, inout_x));
  for (int i = 1; i <= 2; ++i) {
    kiln_expr_t *required = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &required));
  }
  if (rnn->batch_first) {
    const int64_t perm[3] = {1, 0, 2};
    void *attrs = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_transpose, &attrs));
    KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, &kiln_op_transpose, attrs, "axes", 3, perm));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_transpose, *inout_x, attrs, inout_x));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_shapes(node, *inout_x, rnn));
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_lengths(node, rnn));
  return kiln_onnx_rnn_activations(node, rnn);
}

static kiln_status_t kiln_onnx_rnn_convert(kiln_onnx_node_t *node, kiln_onnx_rnn_kind_t kind) {
  static const int gates[3] = {1, 3, 4};
  kiln_onnx_rnn_t rnn = {.kind = kind, .gates = gates[kind]};
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_read(node, &rnn, &x));
  kiln_expr_t **states = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, (size_t)rnn.steps,
                                                 sizeof(kiln_expr_t *), 8, (void **)&states));
  kiln_expr_t *ys[2] = {NULL, NULL}, *hs[2] = {NULL, NULL}, *cs[2] = {NULL, NULL};
  for (int d = 0; d < rnn.directions; ++d) {
    KILN_RETURN_IF_ERROR(
        kiln_onnx_rnn_direction_run(node, &rnn, x, d, states, &ys[d], &hs[d], &cs[d]));
  }
  const int64_t y_perm[4] = {2, 0, 1, 3}, h_perm[3] = {1, 0, 2};
  KILN_RETURN_IF_ERROR(kiln_onnx_rnn_output(node, &rnn, ys, 1, 4, y_perm, &node->outputs[0]));
  if (node->num_outputs > 1) {
    KILN_RETURN_IF_ERROR(kiln_onnx_rnn_output(node, &rnn, hs, 0, 3, h_perm, &node->outputs[1]));
  }
  if (node->num_outputs > 2 && kind == KILN_ONNX_LSTM) {
    KILN_RETURN_IF_ERROR(kiln_onnx_rnn_output(node, &rnn, cs, 0, 3, h_perm, &node->outputs[2]));
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_rnn(kiln_onnx_node_t *node) {
  return kiln_onnx_rnn_convert(node, KILN_ONNX_RNN);
}

kiln_status_t kiln_onnx_convert_gru(kiln_onnx_node_t *node) {
  return kiln_onnx_rnn_convert(node, KILN_ONNX_GRU);
}

kiln_status_t kiln_onnx_convert_lstm(kiln_onnx_node_t *node) {
  return kiln_onnx_rnn_convert(node, KILN_ONNX_LSTM);
}
