/*
 * Calling an operator eagerly: kiln_eager_call and kiln_eager_call_into,
 * and their kiln_eager_context_ forms.
 *
 * A call runs in its inputs' context (all of them in one; the outputs of
 * call_into too); a call without inputs runs in the context given, or the
 * process default one.
 *
 * On the caller's thread: find the operator, parse the attributes into a
 * scratch arena (errors name the operator and the attribute), build the
 * input types there, and look the call up in the kernel cache, which runs
 * the type relation on a miss (its errors come back at once) and keeps the
 * output types. Then make (or check) the output tensors, build one
 * "cpu.call_kernel" message and hand it to the VM. No kernel runs here; the
 * kernel's own errors surface later, on the tensors it writes.
 *
 * Each thread remembers its last few calls (operator name, attribute text,
 * input dtypes and shapes -> cache entry, for the context that made the
 * entry), so a loop that repeats a call skips the parsing, the key's text
 * and the cache's lock: the hot path of small eager operations.
 */
#include <string.h>

#include "base/arena.h"
#include "eager/builder.h"
#include "eager/tensor.h"
#include "op/compute.h"

#define SCRATCH_BLOCK_SIZE 2048
#define MEMO_ENTRIES       8
#define MEMO_ATTRS_TEXT    160

typedef struct call_t {
  const kiln_op_t *op;
  const kiln_kernel_t *kernel;
} call_t;

static kiln_status_t parse_attrs(const kiln_op_t *op, int num_attrs, const kiln_eager_attr_t *attrs,
                                 kiln_arena_t *arena, void **out_attrs) {
  *out_attrs = NULL;
  if (op->attrs_size == 0) {
    if (num_attrs > 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: takes no attributes, got \"%s\"", op->name,
                         attrs[0].name);
    }
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_op_attrs_create_default(op, arena, out_attrs));
  for (int i = 0; i < num_attrs; ++i) {
    if (!attrs[i].name || !attrs[i].value) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: attribute %d has no name or no value", op->name, i);
    }
    KILN_RETURN_IF_ERROR(
        kiln_op_attrs_set_text(op, *out_attrs, attrs[i].name, attrs[i].value, arena));
  }
  return kiln_op_attrs_validate(op, *out_attrs);
}

static kiln_status_t check_inputs(const kiln_op_t *op, int num_inputs,
                                  kiln_eager_tensor_t *const *inputs) {
  if (num_inputs < 0 || num_inputs > KILN_TE_MAX_INPUTS) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %d inputs; an eager call takes 0 to %d", op->name,
                       num_inputs, KILN_TE_MAX_INPUTS);
  }
  for (int i = 0; i < num_inputs; ++i) {
    if (!inputs[i]) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d is NULL", op->name, i);
    }
  }
  return KILN_OK;
}

/* ---- the per-thread memo of recent calls ---- */

typedef struct memo_entry_t {
  uint64_t generation; /* the context's; 0: empty */
  const kiln_kernel_t *kernel;
  char attrs[MEMO_ATTRS_TEXT]; /* "name=value;" for each attribute given */
} memo_entry_t;

static _Thread_local memo_entry_t memo[MEMO_ENTRIES];
static _Thread_local unsigned memo_next;

/* The attributes as "name=value;..." into `buffer`; false when they do not fit. */
static bool attrs_text(int num_attrs, const kiln_eager_attr_t *attrs, char *buffer) {
  size_t used = 0;
  for (int i = 0; i < num_attrs; ++i) {
    if (!attrs[i].name || !attrs[i].value) {
      return false;
    }
    size_t n = strlen(attrs[i].name), v = strlen(attrs[i].value);
    if (used + n + v + 3 > MEMO_ATTRS_TEXT) {
      return false;
    }
    memcpy(buffer + used, attrs[i].name, n);
    buffer[used + n] = '=';
    memcpy(buffer + used + n + 1, attrs[i].value, v);
    buffer[used + n + 1 + v] = ';';
    used += n + v + 2;
  }
  buffer[used] = '\0';
  return true;
}

static bool inputs_match(const kiln_kernel_t *kernel, int num_inputs,
                         kiln_eager_tensor_t *const *inputs) {
  if (kernel->num_inputs != num_inputs) {
    return false;
  }
  for (int i = 0; i < num_inputs; ++i) {
    const kiln_tensor_type_t *type = kiln_type_as_tensor(kernel->input_types[i]);
    const kiln_tensor_t *t = inputs[i] ? inputs[i]->storage : NULL;
    if (!type || !t || type->dtype != kiln_tensor_dtype(t) ||
        !kiln_shape_equal(type->ndim, type->shape, kiln_tensor_ndim(t), kiln_tensor_shape(t))) {
      return false;
    }
  }
  return true;
}

static const kiln_kernel_t *memo_find(const kiln_eager_context_t *context, const char *op_name,
                                      const char *attrs, int num_inputs,
                                      kiln_eager_tensor_t *const *inputs) {
  for (int i = 0; i < MEMO_ENTRIES; ++i) {
    const memo_entry_t *e = &memo[i];
    if (e->generation == context->generation && strcmp(e->kernel->op->name, op_name) == 0 &&
        strcmp(e->attrs, attrs) == 0 && inputs_match(e->kernel, num_inputs, inputs)) {
      return e->kernel;
    }
  }
  return NULL;
}

static void memo_add(const kiln_eager_context_t *context, const kiln_kernel_t *kernel,
                     const char *attrs) {
  memo_entry_t *e = &memo[memo_next++ % MEMO_ENTRIES];
  e->generation = context->generation;
  e->kernel = kernel;
  strcpy(e->attrs, attrs);
}

/* The operator and the cache entry of the call. */
static kiln_status_t prepare(kiln_eager_context_t *context, const char *op_name, int num_inputs,
                             kiln_eager_tensor_t *const *inputs, int num_attrs,
                             const kiln_eager_attr_t *attrs, call_t *out_call) {
  char text[MEMO_ATTRS_TEXT];
  bool memoizable = op_name && attrs_text(num_attrs, attrs, text);
  if (memoizable) {
    out_call->kernel = memo_find(context, op_name, text, num_inputs, inputs);
    if (out_call->kernel) {
      out_call->op = out_call->kernel->op;
      return KILN_OK;
    }
  }
  KILN_RETURN_IF_ERROR(kiln_op_find(op_name ? op_name : "(null)", &out_call->op));
  const kiln_op_t *op = out_call->op;
  KILN_RETURN_IF_ERROR(check_inputs(op, num_inputs, inputs));
  kiln_arena_t scratch;
  kiln_arena_initialize(&scratch, context->options.allocator, SCRATCH_BLOCK_SIZE);
  void *parsed = NULL;
  const kiln_type_t *types[KILN_TE_MAX_INPUTS];
  kiln_status_t status = parse_attrs(op, num_attrs, attrs, &scratch, &parsed);
  for (int i = 0; i < num_inputs && !status; ++i) {
    status = kiln_tensor_type_of(&scratch, inputs[i]->storage, &types[i]);
  }
  if (!status) {
    status = kiln_kernel_cache_lookup(context->kernel_cache, op, parsed, num_inputs, types,
                                      &out_call->kernel);
  }
  kiln_arena_deinitialize(&scratch);
  if (!status && memoizable) {
    memo_add(context, out_call->kernel, text);
  }
  return status;
}

static kiln_status_t submit(kiln_eager_builder_t *builder, const call_t *call,
                            kiln_eager_tensor_t *const *inputs,
                            kiln_eager_tensor_t *const *outputs) {
  KILN_RETURN_IF_ERROR(kiln_eager_builder_call_kernel(builder, call->kernel, inputs, outputs));
  kiln_eager_builder_submit(builder);
  return KILN_OK;
}

static void release_all(int count, kiln_eager_tensor_t **tensors) {
  for (int i = 0; i < count; ++i) {
    kiln_eager_tensor_release(tensors[i]);
    tensors[i] = NULL;
  }
}

/* The call's context: its tensors' (one for all; NULL is the default
 * context), else `given`, else the default. */
static kiln_status_t call_context(kiln_eager_context_t *given, const char *op_name, int count,
                                  kiln_eager_tensor_t *const *tensors,
                                  kiln_eager_context_t **out_context) {
  kiln_eager_context_t *bound = given && !given->is_default ? given : NULL;
  bool known = given != NULL;
  for (int i = 0; i < count; ++i) {
    if (!tensors[i]) {
      continue;
    }
    if (known && tensors[i]->context != bound) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: tensor %d belongs to another eager context",
                         op_name ? op_name : "(null)", i);
    }
    bound = tensors[i]->context;
    known = true;
  }
  if (!bound && given) {
    *out_context = given; /* the default context, given */
    return KILN_OK;
  }
  return kiln_eager_context_of(bound, out_context);
}

/* The output types of a call whose output shapes depend on its inputs'
 * values (an operator with a shape function): waits for the inputs, then
 * runs the shape function on them, in `arena`. */
static kiln_status_t value_output_types(const call_t *call, kiln_eager_tensor_t *const *inputs,
                                        kiln_arena_t *arena, const kiln_tensor_type_t **out_types) {
  const kiln_kernel_t *kernel = call->kernel;
  kiln_tensor_t *storage[KILN_TE_MAX_INPUTS];
  for (int i = 0; i < kernel->num_inputs; ++i) {
    KILN_RETURN_IF_ERROR(kiln_eager_tensor_read(inputs[i], &storage[i]));
    kiln_tensor_release(storage[i]); /* the eager tensor keeps it */
  }
  kiln_shape_func_args_t args = {.op = call->op,
                                 .attrs = kernel->attrs,
                                 .num_inputs = kernel->num_inputs,
                                 .inputs = storage,
                                 .arena = arena};
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(call->op->shape_func(&args, &type));
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  bool matches = tuple ? tuple->count == kernel->num_outputs : kernel->num_outputs == 1;
  for (int o = 0; o < kernel->num_outputs && matches; ++o) {
    out_types[o] = kiln_type_as_tensor(tuple ? tuple->fields[o] : type);
    matches = out_types[o] != NULL;
  }
  return matches
             ? KILN_OK
             : KILN_STATUS(INTERNAL, "%s: the shape function's type does not match the kernel's",
                           call->op->name);
}

/* Makes the kernel's new output tensors of `types` into `out_outputs`. */
static kiln_status_t make_outputs(kiln_eager_context_t *context, const call_t *call,
                                  const kiln_tensor_type_t *const *types, int capacity,
                                  kiln_eager_tensor_t **out_outputs) {
  const kiln_kernel_t *kernel = call->kernel;
  if (kernel->num_outputs > capacity) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: makes %d outputs, room for %d", call->op->name,
                       kernel->num_outputs, capacity);
  }
  for (int made = 0; made < kernel->num_outputs; ++made) {
    const kiln_tensor_type_t *type = types[made];
    kiln_status_t status = kiln_eager_tensor_create_empty(context, type->dtype, type->ndim,
                                                          type->shape, &out_outputs[made]);
    if (status) {
      release_all(made, out_outputs);
      return status;
    }
  }
  return KILN_OK;
}

/* The types of the call's outputs, into `out_types` (KILN_EAGER_MAX_OUTPUTS
 * entries): the kernel's, or for an operator with a shape function, those
 * its inputs' values give (in `arena`). */
static kiln_status_t output_types(const call_t *call, kiln_eager_tensor_t *const *inputs,
                                  kiln_arena_t *arena, const kiln_tensor_type_t **out_types) {
  const kiln_kernel_t *kernel = call->kernel;
  if (kernel->num_outputs > KILN_EAGER_MAX_OUTPUTS) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: more than %d outputs", call->op->name,
                       KILN_EAGER_MAX_OUTPUTS);
  }
  if (call->op->shape_func) {
    return value_output_types(call, inputs, arena, out_types);
  }
  memcpy(out_types, kernel->output_types, (size_t)kernel->num_outputs * sizeof(*out_types));
  return KILN_OK;
}

/* The call's new outputs, of output_types. */
static kiln_status_t new_outputs(kiln_eager_context_t *context, const call_t *call,
                                 kiln_eager_tensor_t *const *inputs, int capacity,
                                 kiln_eager_tensor_t **out_outputs) {
  const kiln_tensor_type_t *types[KILN_EAGER_MAX_OUTPUTS];
  kiln_arena_t scratch;
  kiln_arena_initialize(&scratch, context->options.allocator, SCRATCH_BLOCK_SIZE);
  kiln_status_t status = output_types(call, inputs, &scratch, types);
  if (!status) {
    status = make_outputs(context, call, types, capacity, out_outputs);
  }
  kiln_arena_deinitialize(&scratch);
  return status;
}

kiln_status_t kiln_eager_context_call(kiln_eager_context_t *context, const char *op_name,
                                      int num_inputs, kiln_eager_tensor_t *const *inputs,
                                      int num_attrs, const kiln_eager_attr_t *attrs, int capacity,
                                      int *out_num_outputs, kiln_eager_tensor_t **out_outputs) {
  *out_num_outputs = 0;
  KILN_RETURN_IF_ERROR(
      call_context(context, op_name, num_inputs > 0 ? num_inputs : 0, inputs, &context));
  kiln_eager_builder_t builder;
  KILN_RETURN_IF_ERROR(
      kiln_eager_builder_initialize(&builder, context, op_name ? op_name : "(null)"));
  call_t call;
  KILN_RETURN_IF_ERROR(prepare(context, op_name, num_inputs, inputs, num_attrs, attrs, &call));
  KILN_RETURN_IF_ERROR(new_outputs(context, &call, inputs, capacity, out_outputs));
  kiln_status_t status = submit(&builder, &call, inputs, out_outputs);
  if (status) {
    release_all(call.kernel->num_outputs, out_outputs);
    return status;
  }
  *out_num_outputs = call.kernel->num_outputs;
  return KILN_OK;
}

kiln_status_t kiln_eager_call(const char *op_name, int num_inputs,
                              kiln_eager_tensor_t *const *inputs, int num_attrs,
                              const kiln_eager_attr_t *attrs, int capacity, int *out_num_outputs,
                              kiln_eager_tensor_t **out_outputs) {
  return kiln_eager_context_call(NULL, op_name, num_inputs, inputs, num_attrs, attrs, capacity,
                                 out_num_outputs, out_outputs);
}

static kiln_status_t check_output(const kiln_kernel_t *kernel, const kiln_tensor_type_t *want,
                                  int index, kiln_eager_tensor_t *const *inputs,
                                  kiln_eager_tensor_t *const *outputs) {
  const kiln_op_t *op = kernel->op;
  kiln_eager_tensor_t *output = outputs[index];
  if (!output) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: output %d is NULL", op->name, index);
  }
  for (int i = 0; i < kernel->num_inputs; ++i) {
    if (inputs[i] == output) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: output %d is also input %d; write to another tensor", op->name, index,
                         i);
    }
  }
  for (int i = 0; i < index; ++i) {
    if (outputs[i] == output) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: output %d is also output %d", op->name, index, i);
    }
  }
  const kiln_tensor_t *storage = output->storage;
  if (kiln_tensor_dtype(storage) != want->dtype ||
      !kiln_shape_equal(kiln_tensor_ndim(storage), kiln_tensor_shape(storage), want->ndim,
                        want->shape)) {
    char got[KILN_SHAPE_TEXT_CAPACITY], expected[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(kiln_tensor_ndim(storage), kiln_tensor_shape(storage), got, sizeof(got));
    kiln_shape_format(want->ndim, want->shape, expected, sizeof(expected));
    return KILN_STATUS(INVALID_ARGUMENT, "%s: output %d is %s %s, expected %s %s", op->name, index,
                       kiln_dtype_name(kiln_tensor_dtype(storage)), got,
                       kiln_dtype_name(want->dtype), expected);
  }
  return KILN_OK;
}

/* Checks call_into's outputs against the call's output types, then submits. */
static kiln_status_t check_outputs_and_submit(kiln_eager_context_t *context,
                                              kiln_eager_builder_t *builder, const call_t *call,
                                              kiln_eager_tensor_t *const *inputs,
                                              kiln_eager_tensor_t *const *outputs) {
  const kiln_tensor_type_t *types[KILN_EAGER_MAX_OUTPUTS];
  kiln_arena_t scratch;
  kiln_arena_initialize(&scratch, context->options.allocator, SCRATCH_BLOCK_SIZE);
  kiln_status_t status = output_types(call, inputs, &scratch, types);
  for (int i = 0; i < call->kernel->num_outputs && !status; ++i) {
    status = check_output(call->kernel, types[i], i, inputs, outputs);
  }
  kiln_arena_deinitialize(&scratch);
  return status ? status : submit(builder, call, inputs, outputs);
}

kiln_status_t kiln_eager_context_call_into(kiln_eager_context_t *context, const char *op_name,
                                           int num_inputs, kiln_eager_tensor_t *const *inputs,
                                           int num_attrs, const kiln_eager_attr_t *attrs,
                                           int num_outputs, kiln_eager_tensor_t *const *outputs) {
  KILN_RETURN_IF_ERROR(
      call_context(context, op_name, num_inputs > 0 ? num_inputs : 0, inputs, &context));
  KILN_RETURN_IF_ERROR(
      call_context(context, op_name, num_outputs > 0 ? num_outputs : 0, outputs, &context));
  kiln_eager_builder_t builder;
  KILN_RETURN_IF_ERROR(
      kiln_eager_builder_initialize(&builder, context, op_name ? op_name : "(null)"));
  call_t call;
  KILN_RETURN_IF_ERROR(prepare(context, op_name, num_inputs, inputs, num_attrs, attrs, &call));
  if (num_outputs != call.kernel->num_outputs) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: makes %d outputs, %d given", call.op->name,
                       call.kernel->num_outputs, num_outputs);
  }
  return check_outputs_and_submit(context, &builder, &call, inputs, outputs);
}

kiln_status_t kiln_eager_call_into(const char *op_name, int num_inputs,
                                   kiln_eager_tensor_t *const *inputs, int num_attrs,
                                   const kiln_eager_attr_t *attrs, int num_outputs,
                                   kiln_eager_tensor_t *const *outputs) {
  return kiln_eager_context_call_into(NULL, op_name, num_inputs, inputs, num_attrs, attrs,
                                      num_outputs, outputs);
}
