/*
 * Extern kernels: the runtime's C kernels of the operators whose output
 * shapes depend on their data's values (nonzero, unique,
 * vision.non_max_suppression; extern_kernel.c) or on scalar inputs' values
 * (stft, mel_weight_matrix; extern_spectral.c; dyn.resize's scales and
 * sizes, extern_resize.c; dyn.split's sizes, extern_split.c), TVM Relax's non-destination-passing
 * call_packed. The VM's `call_extern` instruction (docs/vm.md) calls one:
 * it asks the kernel for its outputs' shapes, allocates them from its
 * storage pool, then has the kernel fill them. The reference interpreter's
 * shape function and reference kernel of the same operator (op/
 * value_shape.c, transform_spectral.c) call the same two entry points, so
 * these files are the one
 * definition of each operator's semantics and the two executors cannot
 * disagree.
 *
 * A kernel sees kiln_tensor_t inputs (the VM wraps its registers'
 * DLTensors, no copy) and the operator's attributes as int64 values, and
 * needs neither the IR nor the operator registry: the runtime stays free of
 * the compiler. Errors are INVALID_ARGUMENT naming the operator.
 */
#ifndef KILN_RUNTIME_EXTERN_KERNEL_H_
#define KILN_RUNTIME_EXTERN_KERNEL_H_

#include <stdbool.h>
#include <stdint.h>

#include "kiln/status.h"
#include "kiln/tensor.h"

/* The most attributes, inputs and outputs an extern kernel has. */
#define KILN_EXTERN_MAX_ATTRS   6
#define KILN_EXTERN_MAX_INPUTS  8
#define KILN_EXTERN_MAX_OUTPUTS 64

typedef struct kiln_extern_args_t {
  int num_inputs;
  kiln_tensor_t *const *inputs;
  const int64_t *attrs; /* the kernel's num_attrs values */
  int num_outputs;      /* the call's: the kernel's, or (num_outputs -1) as many as it passes */
} kiln_extern_args_t;

/* One output's dtype and shape. */
typedef struct kiln_extern_shape_t {
  kiln_dtype_t dtype;
  int ndim;
  int64_t shape[KILN_MAX_RANK];
} kiln_extern_shape_t;

typedef kiln_status_t (*kiln_extern_shapes_fn)(const kiln_extern_args_t *args,
                                               kiln_extern_shape_t *out_shapes);
/* Fills outputs of the shapes `shapes` gave for the same inputs (a
 * mismatch is INTERNAL). */
typedef kiln_status_t (*kiln_extern_fill_fn)(const kiln_extern_args_t *args,
                                             kiln_tensor_t *const *outputs);

typedef struct kiln_extern_kernel_t {
  const char *name; /* the operator's name: "nonzero" */
  int min_inputs, max_inputs;
  int num_outputs; /* -1: 1 to KILN_EXTERN_MAX_OUTPUTS, as the call passes (dyn.split's parts) */
  int num_attrs;
  kiln_extern_shapes_fn shapes;
  kiln_extern_fill_fn fill;
} kiln_extern_kernel_t;

/* The index of the extern kernel of operator `name`, or -1. */
int kiln_extern_kernel_find(const char *name);
/* The kernel at `index` (0 <= index < kiln_extern_kernel_count()). */
const kiln_extern_kernel_t *kiln_extern_kernel_at(int index);
int kiln_extern_kernel_count(void);

/* The spectral kernels (extern_spectral.c), in the table. */
kiln_status_t kiln_extern_stft_shapes(const kiln_extern_args_t *args,
                                      kiln_extern_shape_t *out_shapes);
kiln_status_t kiln_extern_stft_fill(const kiln_extern_args_t *args, kiln_tensor_t *const *outputs);
kiln_status_t kiln_extern_mel_shapes(const kiln_extern_args_t *args,
                                     kiln_extern_shape_t *out_shapes);
kiln_status_t kiln_extern_mel_fill(const kiln_extern_args_t *args, kiln_tensor_t *const *outputs);
/* Whether mel_weight_matrix writes `dtype` (a kiln_dtype_t): the floats. */
bool kiln_extern_mel_dtype_ok(int64_t dtype);

/* dyn.resize (extern_resize.c), in the table; its attributes are
 * kiln_resize_rule_encode's (runtime/resize_rule.h). */
kiln_status_t kiln_extern_resize_shapes(const kiln_extern_args_t *args,
                                        kiln_extern_shape_t *out_shapes);
kiln_status_t kiln_extern_resize_fill(const kiln_extern_args_t *args,
                                      kiln_tensor_t *const *outputs);

/* dyn.split (extern_split.c), in the table: data and sizes, the axis its
 * attribute, one output per size. */
kiln_status_t kiln_extern_split_shapes(const kiln_extern_args_t *args,
                                       kiln_extern_shape_t *out_shapes);
kiln_status_t kiln_extern_split_fill(const kiln_extern_args_t *args, kiln_tensor_t *const *outputs);

/* INVALID_ARGUMENT naming operator `op` when `out`, the output a kernel
 * fills, is not of the dtype and shape its shapes gave (`want`). */
KILN_MUST_USE_RESULT kiln_status_t kiln_extern_output_check(const char *op,
                                                            const kiln_tensor_t *out,
                                                            const kiln_extern_shape_t *want);

/* Kernel `index`'s output shapes for `args`, its input count checked. */
KILN_MUST_USE_RESULT kiln_status_t kiln_extern_kernel_shapes(int index,
                                                             const kiln_extern_args_t *args,
                                                             kiln_extern_shape_t *out_shapes);
/* Kernel `index` fills `outputs`, made of the shapes it gave. */
KILN_MUST_USE_RESULT kiln_status_t kiln_extern_kernel_fill(int index,
                                                           const kiln_extern_args_t *args,
                                                           kiln_tensor_t *const *outputs);

/* ---- the DFT of one line (extern_spectral.c), shared with the dft
 * operator's reference kernel (op/transform_dft.c) ---- */

/* A DFT resolved against its input: the axis, the transform's length, how
 * many input samples it reads and how many frequencies it writes. */
typedef struct kiln_dft_plan_t {
  int axis;
  int64_t length;
  int64_t samples; /* min(the axis' size, length) */
  int64_t bins;    /* length, or length / 2 + 1 onesided */
  bool complex_input;
  bool inverse;
} kiln_dft_plan_t;

/* 2 pi: the angle of frequency k at sample n is 2 pi ((k n) mod L) / L. */
#define KILN_DFT_TWO_PI 6.283185307179586476925286766559

/* One line of a transform: sample n at data[in + n * stride] (and its
 * imaginary part next to it), frequency k written at out[out + k *
 * out_stride] (real, imaginary). */
typedef struct kiln_dft_line_t {
  int64_t in, stride, out, out_stride;
} kiln_dft_line_t;

/* The reference kernel's transform of one line of `data` (float32 or
 * float64) into `out` of the same dtype, each sample weighed by window[n]
 * when `window` is not NULL. */
void kiln_dft_run_line(const kiln_dft_plan_t *plan, const kiln_tensor_t *data,
                       const kiln_tensor_t *window, kiln_tensor_t *out, kiln_dft_line_t line);

#endif /* KILN_RUNTIME_EXTERN_KERNEL_H_ */
