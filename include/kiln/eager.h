/*
 * Eager execution: operators run one call at a time, asynchronously, on a
 * virtual machine modelled on OneFlow's eager VM (docs/eager.md).
 *
 * An eager tensor is a handle on a kiln_tensor_t whose contents may still be
 * being computed. Every registry operator is callable by name with its
 * attributes in the text format's spelling (kiln_eager_call), and the common
 * ones have typed wrappers. A call checks its inputs and attributes, infers
 * the output types and returns the new output tensors at once; the work is
 * queued for the VM's threads, and the calling thread never runs a kernel.
 * Reading a tensor (kiln_eager_tensor_read) waits for the instructions
 * queued before that write it; kiln_eager_sync waits for everything.
 *
 * Errors: a bad call (unknown operator, bad attribute, shapes the type
 * relation refuses) fails at once. A kernel that fails at run time marks the
 * tensors it writes as failed; an operator reading a failed tensor fails
 * with the same error without running; the error ("nn.conv2d: ...") comes
 * back from the next read of such a tensor, and from the next sync. Work
 * that does not depend on the failure goes on.
 *
 * Contexts: everything eager execution needs (the VM with its scheduler
 * and stream threads and spin setting, the stream and instruction type
 * registries, the kernel cache, the options) is one kiln_eager_context_t.
 * A user makes as many as they like (kiln_eager_context_create) and
 * destroys them (kiln_eager_context_destroy); contexts are independent: a
 * tensor belongs to the context it was made in, a call runs in its
 * inputs' context, and a call mixing tensors of two contexts is refused.
 * The kiln_eager_context_* forms take the context; the other calls use
 * the process default context (or, for calls on tensors, the tensors'
 * context). Contexts share only compiled kernels (the process's kernel
 * store, immutable code) and the thread pool their kernels launch on.
 *
 * Lifetime: the default context is set up on first use (or by
 * kiln_eager_initialize) and destroyed by kiln_eager_shutdown or at exit.
 * Destroying a context cancels what has not started and waits for what
 * has. Its tensors stay valid and readable (cancelled ones fail with
 * CANCELLED); using one in new work is FAILED_PRECONDITION. Releasing a
 * tensor that queued work still uses is fine: it is freed when the last
 * such instruction is done. Calls from several threads are safe, on one
 * context or several; destroying a context (or shutdown) must not race
 * with calls on that context.
 */
#ifndef KILN_EAGER_H_
#define KILN_EAGER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/allocator.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_eager_tensor_t kiln_eager_tensor_t;
typedef struct kiln_eager_context_t kiln_eager_context_t;

/* ---- contexts ---- */

typedef struct kiln_eager_options_t {
  kiln_allocator_t allocator; /* the VM's bookkeeping, tensors and kernels */
  const char *target;         /* code-generation target; NULL: "llvm -jit -noasm" with LLVM, else "c
                                 -march=native" */
  bool reference_kernels;     /* run every operator's reference kernel, never compile */
  int spin_count;             /* polls before a waiting thread sleeps; -1: default */
} kiln_eager_options_t;

/* The defaults, read from the environment: KILN_EAGER_TARGET (a target
 * string), KILN_KERNELS=reference (reference kernels only), KILN_EAGER_SPIN
 * (spin count). */
kiln_eager_options_t kiln_eager_options_default(void);

/* A new context with `options` (NULL: the defaults): its VM's threads are
 * running when it returns. The error names the set-up step that failed
 * ("eager environment: kernel cache: ..."). */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_context_create(const kiln_eager_options_t *options,
                                                             kiln_eager_context_t **out_context);
/* Cancels the context's instructions that have not started, waits for
 * those running, stops its threads and frees what it holds; its tensors
 * stay readable (see Lifetime above). NULL is a no-op. Destroying the
 * default context is kiln_eager_shutdown. */
void kiln_eager_context_destroy(kiln_eager_context_t *context);
/* The process default context, set up with the defaults when there is
 * none (borrowed: it lives until kiln_eager_shutdown). */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_context_default(kiln_eager_context_t **out_context);
/* The options in effect (the target resolved). FAILED_PRECONDITION once
 * the context was destroyed, as for every call below on such a context. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_context_get_options(
    const kiln_eager_context_t *context, kiln_eager_options_t *out_options);
/* Waits for every instruction queued on the context so far. Returns the
 * first run-time error since its previous sync (and forgets it), or OK. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_context_sync(kiln_eager_context_t *context);

/* What the context's kernel cache did so far. */
typedef struct kiln_eager_kernel_stats_t {
  int64_t lookups;   /* kernel lookups of calls */
  int64_t entries;   /* distinct kernels (operator, attributes, input types) met */
  int64_t hits;      /* lookups that found the kernel compiled already (by anyone) */
  int64_t compiled;  /* kernels this context compiled */
  int64_t reference; /* kernels running the operator's reference kernel */
  int64_t compiles;  /* code-generator builds run (failed ones included) */
} kiln_eager_kernel_stats_t;

KILN_MUST_USE_RESULT kiln_status_t kiln_eager_context_get_kernel_stats(
    const kiln_eager_context_t *context, kiln_eager_kernel_stats_t *out_stats);

/* ---- the default context ---- */

/* Sets the default context up with `options` (NULL: the defaults).
 * FAILED_PRECONDITION when it is already set up. Optional: the first eager
 * call sets it up with the defaults. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_initialize(const kiln_eager_options_t *options);
/* Destroys the default context (kiln_eager_context_destroy); the next call
 * that needs it sets a new one up. Registered with atexit; a no-op when
 * nothing is set up. */
void kiln_eager_shutdown(void);
/* The options in effect (setting the environment up if needed). */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_get_options(kiln_eager_options_t *out_options);

/* kiln_eager_context_sync of the default context. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_sync(void);

/* ---- tensors ---- */

/* The tensor creators take the context (the kiln_eager_context_ forms) or
 * make the tensor in the default context. */

/* A tensor holding a copy of `data` (exactly the tensor's byte size). */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_context_tensor_from_host(
    kiln_eager_context_t *context, kiln_dtype_t dtype, int ndim, const int64_t *shape,
    const void *data, size_t data_size, kiln_eager_tensor_t **out_tensor);
KILN_MUST_USE_RESULT kiln_status_t
kiln_eager_context_tensor_zeros(kiln_eager_context_t *context, kiln_dtype_t dtype, int ndim,
                                const int64_t *shape, kiln_eager_tensor_t **out_tensor);
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_context_tensor_from_npy(
    kiln_eager_context_t *context, const char *path, kiln_eager_tensor_t **out_tensor);
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_context_tensor_wrap(kiln_eager_context_t *context,
                                                                  kiln_tensor_t *tensor,
                                                                  kiln_eager_tensor_t **out_tensor);
/* The context the tensor belongs to (borrowed). */
kiln_eager_context_t *kiln_eager_tensor_context(const kiln_eager_tensor_t *tensor);

/* In the default context: */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_tensor_from_host(kiln_dtype_t dtype, int ndim,
                                                               const int64_t *shape,
                                                               const void *data, size_t data_size,
                                                               kiln_eager_tensor_t **out_tensor);
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_tensor_zeros(kiln_dtype_t dtype, int ndim,
                                                           const int64_t *shape,
                                                           kiln_eager_tensor_t **out_tensor);
/* A tensor read from a .npy file. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_tensor_from_npy(const char *path,
                                                              kiln_eager_tensor_t **out_tensor);
/* A tensor over `tensor`'s storage (retained, not copied). */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_tensor_wrap(kiln_tensor_t *tensor,
                                                          kiln_eager_tensor_t **out_tensor);

void kiln_eager_tensor_retain(kiln_eager_tensor_t *tensor);
/* Drops the caller's reference; the tensor is freed once no queued
 * instruction uses it. NULL is a no-op. */
void kiln_eager_tensor_release(kiln_eager_tensor_t *tensor);

/* Known at once, without waiting. */
kiln_dtype_t kiln_eager_tensor_dtype(const kiln_eager_tensor_t *tensor);
int kiln_eager_tensor_ndim(const kiln_eager_tensor_t *tensor);
const int64_t *kiln_eager_tensor_shape(const kiln_eager_tensor_t *tensor);

/* Waits for the tensor's last writer, then returns its storage (retained;
 * the caller releases it), or the error that failed the tensor. The storage
 * must not be read while a later write of the tensor is queued. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_tensor_read(kiln_eager_tensor_t *tensor,
                                                          kiln_tensor_t **out_tensor);
/* Waits as kiln_eager_tensor_read, then copies the contents to `data`
 * (exactly the tensor's byte size). */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_tensor_copy_to_host(kiln_eager_tensor_t *tensor,
                                                                  void *data, size_t data_size);
/* Queues a write of a copy of `data` (exactly the byte size) into the
 * tensor, on the copy stream, after the tensor's earlier readers and writers. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_tensor_write(kiln_eager_tensor_t *tensor,
                                                           const void *data, size_t data_size);
/* Queues a copy of `source` into `destination` (same dtype and shape, same
 * context). */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_copy(kiln_eager_tensor_t *source,
                                                   kiln_eager_tensor_t *destination);

/* ---- operators ---- */

/* One attribute, in the text format's spelling: {"strides", "[2, 2]"}. */
typedef struct kiln_eager_attr_t {
  const char *name;
  const char *value;
} kiln_eager_attr_t;

/* Largest number of outputs one call makes. */
#define KILN_EAGER_MAX_OUTPUTS 16

/* Queues operator `op_name` on `inputs` with `attrs` (the rest at their
 * defaults) and returns its new outputs (tuple fields flattened) in
 * out_outputs, which has room for `capacity`; *out_num_outputs says how
 * many. The caller releases each. The call runs in the inputs' context
 * (INVALID_ARGUMENT when they belong to different ones); an operator
 * without inputs runs in the default context. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_call(const char *op_name, int num_inputs,
                                                   kiln_eager_tensor_t *const *inputs,
                                                   int num_attrs, const kiln_eager_attr_t *attrs,
                                                   int capacity, int *out_num_outputs,
                                                   kiln_eager_tensor_t **out_outputs);
/* As kiln_eager_call, writing existing tensors of the output types instead
 * (PyTorch's out=). An output may not also be an input, nor appear twice. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_call_into(
    const char *op_name, int num_inputs, kiln_eager_tensor_t *const *inputs, int num_attrs,
    const kiln_eager_attr_t *attrs, int num_outputs, kiln_eager_tensor_t *const *outputs);
/* The same in `context` (NULL: the inputs' context, else the default):
 * every input and output must belong to it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_context_call(
    kiln_eager_context_t *context, const char *op_name, int num_inputs,
    kiln_eager_tensor_t *const *inputs, int num_attrs, const kiln_eager_attr_t *attrs, int capacity,
    int *out_num_outputs, kiln_eager_tensor_t **out_outputs);
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_context_call_into(
    kiln_eager_context_t *context, const char *op_name, int num_inputs,
    kiln_eager_tensor_t *const *inputs, int num_attrs, const kiln_eager_attr_t *attrs,
    int num_outputs, kiln_eager_tensor_t *const *outputs);

/* Typed wrappers: one output each, in *out, in the inputs' context. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_add(kiln_eager_tensor_t *a, kiln_eager_tensor_t *b,
                                                  kiln_eager_tensor_t **out);
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_subtract(kiln_eager_tensor_t *a,
                                                       kiln_eager_tensor_t *b,
                                                       kiln_eager_tensor_t **out);
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_multiply(kiln_eager_tensor_t *a,
                                                       kiln_eager_tensor_t *b,
                                                       kiln_eager_tensor_t **out);
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_divide(kiln_eager_tensor_t *a, kiln_eager_tensor_t *b,
                                                     kiln_eager_tensor_t **out);
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_relu(kiln_eager_tensor_t *x,
                                                   kiln_eager_tensor_t **out);
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_sigmoid(kiln_eager_tensor_t *x,
                                                      kiln_eager_tensor_t **out);
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_tanh(kiln_eager_tensor_t *x,
                                                   kiln_eager_tensor_t **out);
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_softmax(kiln_eager_tensor_t *x, int axis,
                                                      kiln_eager_tensor_t **out);
/* x (batch, in) times weight (units, in) transposed. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_dense(kiln_eager_tensor_t *x,
                                                    kiln_eager_tensor_t *weight,
                                                    kiln_eager_tensor_t **out);
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_bias_add(kiln_eager_tensor_t *x,
                                                       kiln_eager_tensor_t *bias, int axis,
                                                       kiln_eager_tensor_t **out);
/* NCHW / OIHW; strides {h, w}, padding {top, left, bottom, right}. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_conv2d(kiln_eager_tensor_t *x,
                                                     kiln_eager_tensor_t *weight,
                                                     const int64_t strides[2],
                                                     const int64_t padding[4],
                                                     kiln_eager_tensor_t **out);
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_max_pool2d(kiln_eager_tensor_t *x,
                                                         const int64_t pool_size[2],
                                                         const int64_t strides[2],
                                                         const int64_t padding[4],
                                                         kiln_eager_tensor_t **out);
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_global_avg_pool2d(kiln_eager_tensor_t *x,
                                                                kiln_eager_tensor_t **out);
/* (N, ...) -> (N, product of the rest). */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_batch_flatten(kiln_eager_tensor_t *x,
                                                            kiln_eager_tensor_t **out);

#ifdef __cplusplus
}
#endif

#endif /* KILN_EAGER_H_ */
