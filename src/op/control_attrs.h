/*
 * Attrs of the control-flow, sequence and optional operators (op/control.c),
 * shared with the interpreter that evaluates them (interp/control.c).
 */
#ifndef KILN_OP_CONTROL_ATTRS_H_
#define KILN_OP_CONTROL_ATTRS_H_

#include <stdbool.h>
#include <stdint.h>

#include "op/op.h"

/* loop and seq.map: the last num_captured arguments are the outer values the
 * body uses (closure conversion: they are the body's last parameters). */
typedef struct kiln_captured_attrs_t {
  int64_t num_captured;
} kiln_captured_attrs_t;

typedef struct kiln_scan_attrs_t {
  int64_t num_scan_inputs;
  int64_t num_captured;
  kiln_ints_t scan_input_directions; /* empty: all forward (0); 1 is reverse */
  kiln_ints_t scan_output_directions;
  kiln_ints_t scan_input_axes; /* empty: all 0 */
  kiln_ints_t scan_output_axes;
} kiln_scan_attrs_t;

typedef struct kiln_seq_dtype_attrs_t {
  kiln_dtype_t dtype;
} kiln_seq_dtype_attrs_t;

typedef struct kiln_seq_split_attrs_t {
  int64_t axis;
  bool keepdims;
} kiln_seq_split_attrs_t;

typedef struct kiln_seq_concat_attrs_t {
  int64_t axis;
  bool new_axis;
} kiln_seq_concat_attrs_t;

/* An empty optional's element type: a tensor of `dtype` and `shape`, or
 * (sequence) a sequence of `dtype` tensors with shapes known at run time. */
typedef struct kiln_optional_attrs_t {
  kiln_dtype_t dtype;
  kiln_ints_t shape;
  bool sequence;
} kiln_optional_attrs_t;

/* Whether `op` is one of the operators of op/control.c: evaluated by the
 * interpreter itself (they have no reference kernel or compute rule) and
 * refused by the graph compiler. */
bool kiln_op_is_control(const kiln_op_t *op);

/* Scan's per-input or per-output list entry `index`, `fallback` when the
 * list is empty. */
int64_t kiln_scan_attr_at(kiln_ints_t list, int index, int64_t fallback);

#endif /* KILN_OP_CONTROL_ATTRS_H_ */
