/*
 * Tensor values in the IR text format's metadata section (ir/text.h):
 * "Constant[0] = Tensor[(2, 2), float32] [1, 2.5, -3, 4]".
 *
 * Elements are written flat in row-major order. Floating-point elements
 * (float16, bfloat16, float32, float64) take the shortest "%.{p}g" spelling
 * that reads back to the same value through the very function the parser
 * uses, so a value survives print -> parse -> print bit for bit; NaN is
 * "nan" (sign and payload are not kept), infinities "inf" and "-inf".
 * Integers are decimal, bool is 0 or 1. Every dtype of KILN_DTYPE_LIST is
 * supported.
 */
#ifndef KILN_IR_TEXT_METADATA_H_
#define KILN_IR_TEXT_METADATA_H_

#include <stdint.h>

#include "base/strbuf.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

/* Appends "[v0, v1, ...]". */
KILN_MUST_USE_RESULT kiln_status_t kiln_text_format_tensor_values(const kiln_tensor_t *tensor,
                                                                  kiln_strbuf_t *sb);

/* Stores element `index` (< element count) of `tensor` from its spelling
 * `text` ("-3", "2.5", "nan", "-inf", "1"): INVALID_ARGUMENT naming the
 * value and the dtype when it is not a value of the dtype or out of its
 * range. */
KILN_MUST_USE_RESULT kiln_status_t kiln_text_parse_tensor_value(kiln_tensor_t *tensor,
                                                                int64_t index, const char *text);

#endif /* KILN_IR_TEXT_METADATA_H_ */
