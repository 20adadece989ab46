/*
 * The VM executor's interpreter, storage pool, inputs and outputs
 * (docs/vm.md; the loader is vm_load.c).
 *
 * The loop is TVM's Relay VM in C: a stack of frames over one register
 * stack (a frame's registers are a window of it, so a call costs no
 * allocation once the stack has grown), a switch over the decoded opcode,
 * and a program counter moved by if / goto or by one per instruction. A
 * kernel call packs the addresses of its registers' DLTensors into one
 * argument array made at load and calls the packed function, which runs
 * its parallel loops on kiln's thread pool as under the graph executor.
 * Whatever a register must hold for an instruction (a tensor, a storage,
 * a closure) is checked as the instruction runs, and an error names the
 * source, the function, the instruction and the register.
 *
 * Memory: storage comes from a pool of 64-byte-aligned blocks the VM keeps
 * across runs. Every block a run takes stays taken until the next run
 * starts (so the outputs, views of storage, stay valid until then), and a
 * run takes blocks in the order the previous one did, so a static program
 * allocates on its first run only and afterwards reuses every block, the
 * next one in order tried first. A block is zeroed when made. Closures'
 * captured values live in an arena reset every run. Within a run a block
 * goes back to the pool only by free_storage (the compiler's kill after a
 * storage's last use), or at a loop's back edge when no live register
 * reaches it any more (pool_collect: the results of earlier trips), so a
 * loop runs in memory bounded by what one trip keeps, whatever its trip
 * count.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/extern_kernel.h"
#include "runtime/shape_func.h"
#include "runtime/vm.h"

/* ---- errors ---- */

typedef struct run_t {
  kiln_vm_t *vm;
  int depth;
  kiln_vm_frame_t *frame;
  const kiln_vm_function_t *function;
  const kiln_vm_instr_t *instr;
  kiln_vm_value_t *regs;
  int done;
  int collect_at; /* blocks taken at which a loop's back edge collects (pool_collect) */
} run_t;

static kiln_status_t run_error(const run_t *r, kiln_status_code_t code, const char *format, ...)
    KILN_PRINTF_FORMAT(3, 4);

static kiln_status_t run_error(const run_t *r, kiln_status_code_t code, const char *format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return kiln_status_make(code, __FILE__, __LINE__, "%s function %s instruction %d (%s): %s",
                          r->vm->source, r->function->name, r->frame->pc,
                          kiln_vm_opcode_name(r->instr->op), message);
}

static const char *kind_name(kiln_vm_value_kind_t kind) {
  switch (kind) {
  case KILN_VM_VALUE_TENSOR:
    return "a tensor";
  case KILN_VM_VALUE_STORAGE:
    return "a storage";
  case KILN_VM_VALUE_CLOSURE:
    return "a closure";
  case KILN_VM_VALUE_ADT:
    return "an ADT (a sequence or an optional)";
  case KILN_VM_VALUE_EMPTY:
    break;
  }
  return "nothing (read before it was written)";
}

static kiln_status_t get_value(const run_t *r, int64_t reg, kiln_vm_value_kind_t kind,
                               kiln_vm_value_t **out_value) {
  kiln_vm_value_t *value = &r->regs[reg];
  if (value->kind != kind) {
    return run_error(r, KILN_STATUS_CODE_FAILED_PRECONDITION, "register %lld holds %s, expected %s",
                     (long long)reg, kind_name(value->kind), kind_name(kind));
  }
  *out_value = value;
  return KILN_OK;
}

/* ---- values ---- */

static void value_copy(kiln_vm_value_t *dst, const kiln_vm_value_t *src) {
  if (dst == src) {
    return;
  }
  *dst = *src;
  dst->dl.shape = dst->shape;
}

static void value_tensor(kiln_vm_value_t *value, kiln_dtype_t dtype, int ndim, const int64_t *shape,
                         void *data, size_t bytes) {
  value->kind = KILN_VM_VALUE_TENSOR;
  value->dtype = dtype;
  value->bytes = bytes;
  if (ndim > 0) {
    memmove(value->shape, shape, sizeof(int64_t) * (size_t)ndim);
  }
  value->dl = (DLTensor){data, {kDLCPU, 0}, ndim, kiln_dtype_to_dl(dtype), value->shape, NULL, 0};
}

/* ---- the storage pool ---- */

/* Whether `more` bytes on top of what the run holds stay within its limit. */
static kiln_status_t check_bytes(const kiln_vm_t *vm, size_t more) {
  size_t max = vm->limits.max_bytes;
  if (max > 0 && (more > max || vm->held_bytes > max - more)) {
    return KILN_STATUS(RESOURCE_EXHAUSTED,
                       "%s: the run would hold %zu more bytes, over its limit of %zu (%zu held)",
                       vm->source, more, max, vm->held_bytes);
  }
  return KILN_OK;
}

static kiln_status_t pool_grow(kiln_vm_t *vm, size_t size) {
  KILN_RETURN_IF_ERROR(check_bytes(vm, size));
  if (vm->num_blocks == vm->capacity_blocks) {
    int capacity = vm->capacity_blocks ? vm->capacity_blocks * 2 : 16;
    void *blocks = vm->blocks;
    KILN_RETURN_IF_ERROR(
        kiln_allocator_realloc(vm->allocator, (size_t)capacity * sizeof(kiln_vm_block_t), &blocks));
    vm->blocks = blocks;
    vm->capacity_blocks = capacity;
  }
  void *data = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_aligned(vm->allocator, size, KILN_TENSOR_ALIGNMENT, &data));
  memset(data, 0, size);
  vm->held_bytes += size;
  vm->blocks[vm->num_blocks++] = (kiln_vm_block_t){data, size, 0, 0};
  return KILN_OK;
}

/* The free block that fits `size` best, or -1. */
static int pool_find(const kiln_vm_t *vm, size_t size) {
  int best = -1;
  for (int b = 0; b < vm->num_blocks; ++b) {
    const kiln_vm_block_t *block = &vm->blocks[b];
    if (!block->in_use && block->size >= size &&
        (best < 0 || block->size < vm->blocks[best].size)) {
      best = b;
    }
  }
  return best;
}

static kiln_status_t pool_take(kiln_vm_t *vm, size_t bytes, void **out_data, int *out_block) {
  size_t size = (bytes + KILN_TENSOR_ALIGNMENT - 1) / KILN_TENSOR_ALIGNMENT * KILN_TENSOR_ALIGNMENT;
  size = size > 0 ? size : KILN_TENSOR_ALIGNMENT;
  int b = vm->next_block;
  if (b >= vm->num_blocks || vm->blocks[b].in_use || vm->blocks[b].size < size) {
    b = pool_find(vm, size);
  }
  if (b < 0) {
    KILN_RETURN_IF_ERROR(pool_grow(vm, size));
    b = vm->num_blocks - 1;
  }
  vm->blocks[b].in_use = 1;
  ++vm->blocks[b].taken;
  vm->next_block = b + 1;
  *out_data = vm->blocks[b].data;
  *out_block = b;
  return KILN_OK;
}

static void pool_reset(kiln_vm_t *vm) {
  for (int b = 0; b < vm->num_blocks; ++b) {
    vm->blocks[b].in_use = 0;
  }
  vm->next_block = 0;
}

/* ---- collecting what a loop's earlier trips left ---- */

/* A stage's results are views of storage no free_storage gives back (the
 * glue keeps them in registers it overwrites the next trip). So at a
 * loop's back edge (a goto backwards), once the run holds at least
 * `collect_at` blocks, every block no register of a live frame reaches (a
 * tensor's data in it, a storage of it, through ADT fields and closures'
 * captured values) goes back to the pool: in_use 2 marks a reached block
 * during the sweep. The threshold doubles with what stays, so a loop pays
 * for a sweep once per as many allocations as it keeps. */
static int block_of(const kiln_vm_t *vm, const void *data) {
  uintptr_t p = (uintptr_t)data;
  for (int b = 0; b < vm->num_blocks; ++b) {
    uintptr_t start = (uintptr_t)vm->blocks[b].data;
    if (p >= start && p < start + vm->blocks[b].size) {
      return b;
    }
  }
  return -1;
}

static void mark_value(kiln_vm_t *vm, const kiln_vm_value_t *value) {
  int b = -1;
  if (value->kind == KILN_VM_VALUE_STORAGE) {
    b = value->block;
  } else if (value->kind == KILN_VM_VALUE_TENSOR) {
    b = block_of(vm, value->dl.data);
  }
  if (b >= 0 && vm->blocks[b].in_use) {
    vm->blocks[b].in_use = 2;
  }
  for (int i = 0; value->kind == KILN_VM_VALUE_ADT && i < value->num_fields; ++i) {
    mark_value(vm, &value->fields[i]);
  }
  for (int i = 0; value->kind == KILN_VM_VALUE_CLOSURE && i < value->num_captured; ++i) {
    mark_value(vm, &value->captured[i]);
  }
}

static int blocks_in_use(const kiln_vm_t *vm) {
  int count = 0;
  for (int b = 0; b < vm->num_blocks; ++b) {
    count += vm->blocks[b].in_use != 0;
  }
  return count;
}

static void pool_collect(run_t *r) {
  kiln_vm_t *vm = r->vm;
  if (blocks_in_use(vm) < r->collect_at) {
    return;
  }
  for (int f = 0; f < r->depth; ++f) {
    const kiln_vm_frame_t *frame = &vm->frames[f];
    int count = vm->functions[frame->function].num_registers;
    for (int i = 0; i < count; ++i) {
      mark_value(vm, &vm->stack[frame->base + (size_t)i]);
    }
  }
  int kept = 0;
  for (int b = 0; b < vm->num_blocks; ++b) {
    vm->blocks[b].in_use = vm->blocks[b].in_use == 2;
    kept += vm->blocks[b].in_use;
  }
  vm->next_block = 0;
  r->collect_at = kept * 2 > 16 ? kept * 2 : 16;
}

/* ---- frames ---- */

static kiln_status_t reserve_stack(kiln_vm_t *vm, size_t count) {
  if (count <= vm->stack_capacity) {
    return KILN_OK;
  }
  size_t capacity = vm->stack_capacity ? vm->stack_capacity : 64;
  while (capacity < count) {
    capacity *= 2;
  }
  void *stack = vm->stack;
  size_t more = (capacity - vm->stack_capacity) * sizeof(kiln_vm_value_t);
  KILN_RETURN_IF_ERROR(check_bytes(vm, more));
  KILN_RETURN_IF_ERROR(
      kiln_allocator_realloc(vm->allocator, capacity * sizeof(kiln_vm_value_t), &stack));
  vm->held_bytes += more;
  vm->stack = stack;
  vm->stack_capacity = capacity;
  return KILN_OK;
}

static kiln_status_t reserve_frames(run_t *r) {
  kiln_vm_t *vm = r->vm;
  if (r->depth < vm->capacity_frames) {
    return KILN_OK;
  }
  if (r->depth >= KILN_VM_MAX_FRAMES) {
    return run_error(r, KILN_STATUS_CODE_RESOURCE_EXHAUSTED,
                     "calls nested deeper than %d (unbounded recursion?)", KILN_VM_MAX_FRAMES);
  }
  int capacity = vm->capacity_frames ? vm->capacity_frames * 2 : 8;
  void *frames = vm->frames;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_realloc(vm->allocator, (size_t)capacity * sizeof(kiln_vm_frame_t), &frames));
  vm->frames = frames;
  vm->capacity_frames = capacity;
  return KILN_OK;
}

/* Points `r` at the top frame's function, instruction and registers. */
static void enter_top(run_t *r) {
  r->frame = &r->vm->frames[r->depth - 1];
  r->function = &r->vm->functions[r->frame->function];
  r->instr = &r->function->instrs[r->frame->pc];
  r->regs = r->vm->stack + r->frame->base;
}

/* A new frame for `function`, its first registers `num_args` values: the
 * `captured` ones, then the caller's registers `args`. */
static kiln_status_t push_frame(run_t *r, int function, const kiln_vm_value_t *captured,
                                int num_captured, const int *args, int num_args, const int *returns,
                                int num_returns) {
  kiln_vm_t *vm = r->vm;
  const kiln_vm_function_t *callee = &vm->functions[function];
  size_t base = r->depth > 0 ? r->frame->base + (size_t)r->function->num_registers : 0;
  size_t caller_base = r->depth > 0 ? r->frame->base : 0;
  KILN_RETURN_IF_ERROR(reserve_frames(r));
  KILN_RETURN_IF_ERROR(reserve_stack(vm, base + (size_t)callee->num_registers));
  kiln_vm_value_t *regs = vm->stack + base;
  for (int i = 0; i < callee->num_registers; ++i) {
    regs[i].kind = KILN_VM_VALUE_EMPTY;
  }
  for (int i = 0; i < num_captured; ++i) {
    value_copy(&regs[i], &captured[i]);
  }
  for (int i = 0; i < num_args; ++i) {
    value_copy(&regs[num_captured + i], &vm->stack[caller_base + (size_t)args[i]]);
  }
  vm->frames[r->depth++] = (kiln_vm_frame_t){function, 0, base, returns, num_returns};
  enter_top(r);
  return KILN_OK;
}

/* ---- instructions ---- */

static kiln_status_t tensor_bytes(const run_t *r, kiln_dtype_t dtype, int ndim,
                                  const int64_t *shape, size_t *out_bytes) {
  kiln_status_t status = kiln_shape_byte_size(dtype, ndim, shape, out_bytes);
  if (status) {
    kiln_status_t wrapped =
        run_error(r, KILN_STATUS_CODE_INVALID_ARGUMENT, "%s", kiln_status_message(status));
    kiln_status_free(status);
    return wrapped;
  }
  return KILN_OK;
}

/* A shape tensor's dims: int64, rank 1, each >= 0. */
static kiln_status_t read_shape(const run_t *r, int64_t reg, int *out_ndim, int64_t *out_shape) {
  kiln_vm_value_t *t = NULL;
  KILN_RETURN_IF_ERROR(get_value(r, reg, KILN_VM_VALUE_TENSOR, &t));
  if (t->dtype != KILN_DTYPE_INT64 || t->dl.ndim != 1 || t->shape[0] > KILN_MAX_RANK) {
    return run_error(r, KILN_STATUS_CODE_INVALID_ARGUMENT,
                     "register %lld is a %s tensor of rank %d; a shape is int64 of rank 1 with at "
                     "most %d dims",
                     (long long)reg, kiln_dtype_name(t->dtype), t->dl.ndim, KILN_MAX_RANK);
  }
  *out_ndim = (int)t->shape[0];
  if (*out_ndim > 0) {
    memcpy(out_shape, t->dl.data, sizeof(int64_t) * (size_t)*out_ndim);
  }
  for (int d = 0; d < *out_ndim; ++d) {
    if (out_shape[d] < 0) {
      return run_error(r, KILN_STATUS_CODE_INVALID_ARGUMENT, "register %lld: dim %d is %lld",
                       (long long)reg, d, (long long)out_shape[d]);
    }
  }
  return KILN_OK;
}

static kiln_status_t do_alloc_storage(run_t *r, int64_t dst, size_t bytes) {
  kiln_vm_value_t *value = &r->regs[dst];
  void *data = NULL;
  int block = 0;
  KILN_RETURN_IF_ERROR(pool_take(r->vm, bytes, &data, &block));
  value->kind = KILN_VM_VALUE_STORAGE;
  value->data = data;
  value->bytes = bytes;
  value->block = block;
  value->taken = r->vm->blocks[block].taken;
  return KILN_OK;
}

/* The storage's block back to the pool, for this run's later allocations;
 * the register is emptied. Tensors in it must be dead (the compiler frees
 * a storage after its last use, as TVM's KillRegister). */
static kiln_status_t op_free_storage(run_t *r) {
  kiln_vm_value_t *storage = NULL;
  KILN_RETURN_IF_ERROR(get_value(r, r->instr->x[0], KILN_VM_VALUE_STORAGE, &storage));
  kiln_vm_block_t *block = &r->vm->blocks[storage->block];
  if (!block->in_use || block->taken != storage->taken) {
    return run_error(r, KILN_STATUS_CODE_FAILED_PRECONDITION,
                     "the storage in register %lld was freed already", (long long)r->instr->x[0]);
  }
  block->in_use = 0;
  storage->kind = KILN_VM_VALUE_EMPTY;
  return KILN_OK;
}

/* The shape in register `reg` and the bytes of a tensor of the
 * instruction's dtype of that shape. */
static kiln_status_t read_sized_shape(const run_t *r, int64_t reg, int *out_ndim,
                                      int64_t *out_shape, size_t *out_bytes) {
  KILN_RETURN_IF_ERROR(read_shape(r, reg, out_ndim, out_shape));
  return tensor_bytes(r, r->instr->dtype, *out_ndim, out_shape, out_bytes);
}

static kiln_status_t op_alloc_storage_shape(run_t *r) {
  int ndim = 0;
  int64_t shape[KILN_MAX_RANK];
  size_t bytes = 0;
  KILN_RETURN_IF_ERROR(read_sized_shape(r, r->instr->x[1], &ndim, shape, &bytes));
  return do_alloc_storage(r, r->instr->x[0], bytes);
}

/* A tensor of `shape` (`bytes`) at the instruction's offset into its storage. */
static kiln_status_t do_alloc_tensor(run_t *r, int ndim, const int64_t *shape, size_t bytes) {
  const kiln_vm_instr_t *in = r->instr;
  kiln_vm_value_t *storage = NULL;
  size_t offset = (size_t)in->x[2];
  KILN_RETURN_IF_ERROR(get_value(r, in->x[1], KILN_VM_VALUE_STORAGE, &storage));
  if (offset > storage->bytes || bytes > storage->bytes - offset) {
    return run_error(r, KILN_STATUS_CODE_OUT_OF_RANGE,
                     "a tensor of %zu bytes at offset %zu does not fit the %zu bytes of the "
                     "storage in register %lld",
                     bytes, offset, storage->bytes, (long long)in->x[1]);
  }
  value_tensor(&r->regs[in->x[0]], in->dtype, ndim, shape, (char *)storage->data + offset, bytes);
  return KILN_OK;
}

static kiln_status_t op_alloc_tensor_reg(run_t *r) {
  int ndim = 0;
  int64_t shape[KILN_MAX_RANK];
  size_t bytes = 0;
  KILN_RETURN_IF_ERROR(read_sized_shape(r, r->instr->x[3], &ndim, shape, &bytes));
  return do_alloc_tensor(r, ndim, shape, bytes);
}

/* "<where>: <the kernel's message>", its own "<kernel>: " prefix left out. */
static kiln_status_t kernel_error(const run_t *r, const char *name) {
  const char *error = kiln_get_last_error();
  size_t length = strlen(name);
  if (strncmp(error, name, length) == 0 && error[length] == ':') {
    error += length + 1 + (error[length + 1] == ' ');
  }
  return run_error(r, KILN_STATUS_CODE_INTERNAL, "kernel %s: %s", name,
                   *error ? error : "failed (no message)");
}

static kiln_status_t op_invoke_packed(run_t *r) {
  const kiln_vm_instr_t *in = r->instr;
  kiln_vm_t *vm = r->vm;
  int n = 0;
  for (int l = 0; l < 2; ++l) {
    for (int i = 0; i < in->list_size[l]; ++i) {
      kiln_vm_value_t *t = NULL;
      KILN_RETURN_IF_ERROR(get_value(r, in->lists[l][i], KILN_VM_VALUE_TENSOR, &t));
      vm->args[n++].v_handle = &t->dl;
    }
  }
  int kernel = (int)in->x[0];
  if (vm->kernels[kernel](vm->args, vm->type_codes, n, NULL, NULL, NULL) != 0) {
    return kernel_error(r, vm->kernel_names[kernel]);
  }
  return KILN_OK;
}

static kiln_status_t op_copy(run_t *r) {
  kiln_vm_value_t *dst = NULL, *src = NULL;
  KILN_RETURN_IF_ERROR(get_value(r, r->instr->x[0], KILN_VM_VALUE_TENSOR, &dst));
  KILN_RETURN_IF_ERROR(get_value(r, r->instr->x[1], KILN_VM_VALUE_TENSOR, &src));
  if (dst->bytes != src->bytes) {
    return run_error(r, KILN_STATUS_CODE_INVALID_ARGUMENT,
                     "copies %zu bytes into a tensor of %zu bytes", src->bytes, dst->bytes);
  }
  if (src->bytes > 0 && dst->dl.data != src->dl.data) {
    memmove(dst->dl.data, src->dl.data, src->bytes);
  }
  return KILN_OK;
}

/* An int64 tensor of `count` values (rank 0 when `rank0`) in new storage. */
static kiln_status_t new_int64(run_t *r, int64_t dst, const int64_t *values, int count, int rank0) {
  void *data = NULL;
  size_t bytes = sizeof(int64_t) * (size_t)count;
  int block = 0;
  KILN_RETURN_IF_ERROR(pool_take(r->vm, bytes, &data, &block));
  memcpy(data, values, bytes);
  int64_t shape[1] = {count};
  value_tensor(&r->regs[dst], KILN_DTYPE_INT64, rank0 ? 0 : 1, shape, data, bytes);
  return KILN_OK;
}

static kiln_status_t op_shape_of(run_t *r) {
  kiln_vm_value_t *src = NULL;
  KILN_RETURN_IF_ERROR(get_value(r, r->instr->x[1], KILN_VM_VALUE_TENSOR, &src));
  int64_t shape[KILN_MAX_RANK];
  memcpy(shape, src->shape, sizeof(int64_t) * (size_t)src->dl.ndim);
  return new_int64(r, r->instr->x[0], shape, src->dl.ndim, 0);
}

static kiln_status_t op_reshape_tensor(run_t *r) {
  kiln_vm_value_t *src = NULL;
  int ndim = 0;
  int64_t shape[KILN_MAX_RANK];
  size_t bytes = 0;
  KILN_RETURN_IF_ERROR(get_value(r, r->instr->x[1], KILN_VM_VALUE_TENSOR, &src));
  KILN_RETURN_IF_ERROR(read_shape(r, r->instr->x[2], &ndim, shape));
  KILN_RETURN_IF_ERROR(tensor_bytes(r, src->dtype, ndim, shape, &bytes));
  if (bytes != src->bytes) {
    char want[KILN_SHAPE_TEXT_CAPACITY], have[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(ndim, shape, want, sizeof(want));
    kiln_shape_format(src->dl.ndim, src->shape, have, sizeof(have));
    return run_error(r, KILN_STATUS_CODE_INVALID_ARGUMENT,
                     "cannot reshape a tensor of shape %s to %s (another element count)", have,
                     want);
  }
  kiln_vm_value_t view = *src;
  value_tensor(&view, src->dtype, ndim, shape, src->dl.data, bytes);
  value_copy(&r->regs[r->instr->x[0]], &view);
  return KILN_OK;
}

/* Element k of tensor `t` as a double, for the numeric dtypes a
 * shape_func reads (false for any other). */
static bool shape_func_number(const kiln_vm_value_t *t, int64_t k, double *out_value) {
  const void *data = t->dl.data;
  kiln_dtype_t dtype = t->dtype;
  if (dtype == KILN_DTYPE_INT64) {
    *out_value = (double)((const int64_t *)data)[k];
  } else if (dtype == KILN_DTYPE_INT32) {
    *out_value = ((const int32_t *)data)[k];
  } else if (dtype == KILN_DTYPE_INT16) {
    *out_value = ((const int16_t *)data)[k];
  } else if (dtype == KILN_DTYPE_FLOAT32) {
    *out_value = ((const float *)data)[k];
  } else if (dtype == KILN_DTYPE_FLOAT64) {
    *out_value = ((const double *)data)[k];
  } else {
    return false;
  }
  return true;
}

/* Input `i` of a shape_func: its shape, and its values as int64 when the
 * rule reads them (an int32 or int64 tensor of rank 0 or 1), or as doubles
 * when it reads numbers (int16, int32, int64, float32 or float64). */
static kiln_status_t shape_func_arg(const run_t *r, const kiln_shape_func_t *f, int i,
                                    int64_t *values, double *numbers,
                                    kiln_shape_func_arg_t *out_arg) {
  kiln_vm_value_t *t = NULL;
  KILN_RETURN_IF_ERROR(get_value(r, r->instr->lists[0][i], KILN_VM_VALUE_TENSOR, &t));
  *out_arg = (kiln_shape_func_arg_t){t->dl.ndim, t->shape, 0, NULL, NULL};
  if (!((f->value_inputs >> i) & 1u)) {
    return KILN_OK;
  }
  bool as_numbers = (f->number_inputs >> i) & 1u;
  bool is_int = t->dtype == KILN_DTYPE_INT64 || t->dtype == KILN_DTYPE_INT32;
  size_t size = kiln_dtype_size(t->dtype);
  int64_t count = size ? (int64_t)(t->bytes / size) : 0;
  double probe = 0;
  bool readable = as_numbers ? count == 0 || shape_func_number(t, 0, &probe) : is_int;
  if (!readable || t->dl.ndim > 1 || count > KILN_MAX_RANK) {
    return run_error(r, KILN_STATUS_CODE_INVALID_ARGUMENT,
                     "%s: input %d is a %s tensor of rank %d with %lld values; expected %s of "
                     "rank 0 or 1 with at most %d",
                     f->name, i, kiln_dtype_name(t->dtype), t->dl.ndim, (long long)count,
                     as_numbers ? "numbers" : "int32 or int64", KILN_MAX_RANK);
  }
  for (int64_t k = 0; k < count; ++k) {
    if (as_numbers) {
      shape_func_number(t, k, &numbers[k]);
    } else {
      values[k] = t->dtype == KILN_DTYPE_INT64 ? ((const int64_t *)t->dl.data)[k]
                                               : ((const int32_t *)t->dl.data)[k];
    }
  }
  out_arg->count = count;
  out_arg->values = as_numbers ? NULL : values;
  out_arg->numbers = as_numbers ? numbers : NULL;
  return KILN_OK;
}

/* The output shape of a dyn operator from its inputs' shapes and values,
 * as a new int64 rank-1 tensor. */
static kiln_status_t op_shape_func(run_t *r) {
  const kiln_vm_instr_t *in = r->instr;
  const kiln_shape_func_t *f = kiln_shape_func_at((int)in->x[1]);
  kiln_shape_func_arg_t args[KILN_SHAPE_FUNC_MAX_INPUTS];
  int64_t values[KILN_SHAPE_FUNC_MAX_INPUTS][KILN_MAX_RANK];
  double numbers[KILN_SHAPE_FUNC_MAX_INPUTS][KILN_MAX_RANK];
  for (int i = 0; i < in->list_size[0]; ++i) {
    KILN_RETURN_IF_ERROR(shape_func_arg(r, f, i, values[i], numbers[i], &args[i]));
  }
  int ndim = 0;
  int64_t shape[KILN_MAX_RANK];
  kiln_status_t status = kiln_shape_func_run((int)in->x[1], in->list_size[0], args,
                                             in->num_x > 2 ? in->x[2] : 0, &ndim, shape);
  if (status) {
    kiln_status_t error = run_error(r, kiln_status_code(status), "%s", kiln_status_message(status));
    kiln_status_free(status);
    return error;
  }
  return new_int64(r, in->x[0], shape, ndim, 0);
}

/* ---- call_extern ---- */

/* An extern kernel's tensors: views of registers' DLTensors (headers only). */
typedef struct extern_call_t {
  int num_inputs, num_outputs;
  kiln_tensor_t *inputs[KILN_EXTERN_MAX_INPUTS];
  kiln_tensor_t *outputs[KILN_EXTERN_MAX_OUTPUTS];
} extern_call_t;

static void extern_call_release(extern_call_t *call) {
  for (int i = 0; i < call->num_inputs; ++i) {
    kiln_tensor_release(call->inputs[i]);
  }
  for (int o = 0; o < call->num_outputs; ++o) {
    kiln_tensor_release(call->outputs[o]);
  }
}

/* `value`'s tensor seen as a kiln_tensor_t (no copy). */
static kiln_status_t extern_view(const run_t *r, const kiln_vm_value_t *value,
                                 kiln_tensor_t **out_tensor) {
  return kiln_tensor_create_external(r->vm->allocator, value->dtype, value->dl.ndim, value->shape,
                                     value->dl.data, NULL, NULL, out_tensor);
}

static kiln_status_t extern_inputs(run_t *r, extern_call_t *call) {
  const kiln_vm_instr_t *in = r->instr;
  for (int i = 0; i < in->list_size[0]; ++i) {
    kiln_vm_value_t *t = NULL;
    KILN_RETURN_IF_ERROR(get_value(r, in->lists[0][i], KILN_VM_VALUE_TENSOR, &t));
    KILN_RETURN_IF_ERROR(extern_view(r, t, &call->inputs[i]));
    ++call->num_inputs;
  }
  return KILN_OK;
}

/* The outputs, of the kernel's shapes, in new storage of the pool. */
static kiln_status_t extern_outputs(run_t *r, const kiln_extern_shape_t *shapes,
                                    extern_call_t *call) {
  const kiln_vm_instr_t *in = r->instr;
  for (int o = 0; o < in->list_size[1]; ++o) {
    const kiln_extern_shape_t *s = &shapes[o];
    size_t bytes = 0;
    void *data = NULL;
    int block = 0;
    KILN_RETURN_IF_ERROR(tensor_bytes(r, s->dtype, s->ndim, s->shape, &bytes));
    KILN_RETURN_IF_ERROR(pool_take(r->vm, bytes, &data, &block));
    kiln_vm_value_t *value = &r->regs[in->lists[1][o]];
    value_tensor(value, s->dtype, s->ndim, s->shape, data, bytes);
    KILN_RETURN_IF_ERROR(extern_view(r, value, &call->outputs[o]));
    ++call->num_outputs;
  }
  return KILN_OK;
}

/* A kernel's error as this instruction's. */
static kiln_status_t extern_error(const run_t *r, kiln_status_t status) {
  if (!status) {
    return KILN_OK;
  }
  kiln_status_t error = run_error(r, kiln_status_code(status), "%s", kiln_status_message(status));
  kiln_status_free(status);
  return error;
}

/* The kernel's output shapes, the outputs allocated, then filled. */
static kiln_status_t extern_run(run_t *r, extern_call_t *call) {
  const kiln_vm_instr_t *in = r->instr;
  KILN_RETURN_IF_ERROR(extern_inputs(r, call));
  kiln_extern_args_t args = {call->num_inputs, call->inputs, in->shape, in->list_size[1]};
  kiln_extern_shape_t shapes[KILN_EXTERN_MAX_OUTPUTS];
  KILN_RETURN_IF_ERROR(extern_error(r, kiln_extern_kernel_shapes((int)in->x[0], &args, shapes)));
  KILN_RETURN_IF_ERROR(extern_outputs(r, shapes, call));
  return extern_error(r, kiln_extern_kernel_fill((int)in->x[0], &args, call->outputs));
}

/* A runtime kernel whose outputs' shapes depend on its inputs' values
 * (runtime/extern_kernel.h): shapes, storage from the pool, fill. */
static kiln_status_t op_call_extern(run_t *r) {
  extern_call_t call = {0};
  kiln_status_t status = extern_run(r, &call);
  extern_call_release(&call);
  return status;
}

/* Whether a one-element tensor is not zero. */
static kiln_status_t read_condition(const run_t *r, int *out_true) {
  kiln_vm_value_t *t = NULL;
  KILN_RETURN_IF_ERROR(get_value(r, r->instr->x[0], KILN_VM_VALUE_TENSOR, &t));
  size_t size = kiln_dtype_size(t->dtype);
  if (t->bytes != size) {
    return run_error(r, KILN_STATUS_CODE_INVALID_ARGUMENT,
                     "the condition in register %lld has %zu elements, expected 1",
                     (long long)r->instr->x[0], size ? t->bytes / size : 0);
  }
  const unsigned char *bytes = t->dl.data;
  int nonzero = 0;
  for (size_t i = 0; i < size; ++i) {
    nonzero |= bytes[i] != 0;
  }
  int is_float = t->dl.dtype.code == kDLFloat || t->dl.dtype.code == kDLBfloat;
  if (is_float && bytes[size - 1] == 0x80) { /* little-endian: -0.0 is false too */
    nonzero = 0;
    for (size_t i = 0; i + 1 < size; ++i) {
      nonzero |= bytes[i] != 0;
    }
  }
  *out_true = nonzero;
  return KILN_OK;
}

static kiln_status_t op_alloc_closure(run_t *r) {
  const kiln_vm_instr_t *in = r->instr;
  int count = in->list_size[0];
  kiln_vm_value_t *captured = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&r->vm->run_arena, (size_t)count + 1,
                                                 sizeof(kiln_vm_value_t), _Alignof(kiln_vm_value_t),
                                                 (void **)&captured));
  for (int i = 0; i < count; ++i) {
    if (r->regs[in->lists[0][i]].kind == KILN_VM_VALUE_EMPTY) {
      return run_error(r, KILN_STATUS_CODE_FAILED_PRECONDITION,
                       "captures register %d, which holds nothing", in->lists[0][i]);
    }
    value_copy(&captured[i], &r->regs[in->lists[0][i]]);
  }
  kiln_vm_value_t *value = &r->regs[in->x[0]];
  value->kind = KILN_VM_VALUE_CLOSURE;
  value->function = (int)in->x[1];
  value->captured = captured;
  value->num_captured = count;
  return KILN_OK;
}

static kiln_status_t op_invoke_closure(run_t *r) {
  const kiln_vm_instr_t *in = r->instr;
  kiln_vm_value_t *closure = NULL;
  KILN_RETURN_IF_ERROR(get_value(r, in->x[0], KILN_VM_VALUE_CLOSURE, &closure));
  const kiln_vm_function_t *callee = &r->vm->functions[closure->function];
  if (closure->num_captured + in->list_size[0] != callee->num_params) {
    return run_error(r, KILN_STATUS_CODE_INVALID_ARGUMENT,
                     "function %s takes %d arguments, the closure holds %d and the call passes %d",
                     callee->name, callee->num_params, closure->num_captured, in->list_size[0]);
  }
  for (int i = 0; i < in->list_size[0]; ++i) {
    if (r->regs[in->lists[0][i]].kind == KILN_VM_VALUE_EMPTY) {
      return run_error(r, KILN_STATUS_CODE_FAILED_PRECONDITION,
                       "passes register %d, which holds nothing", in->lists[0][i]);
    }
  }
  return push_frame(r, closure->function, closure->captured, closure->num_captured, in->lists[0],
                    in->list_size[0], in->lists[1], in->list_size[1]);
}

/* A tensor of output `o` (or of its sequence or optional) against its
 * declaration. */
static kiln_status_t check_output(run_t *r, int o, const kiln_vm_value_t *t) {
  const kiln_vm_decl_t *decl = &r->vm->output_decls[o];
  int fits = t->dtype == decl->dtype && (decl->ndim < 0 || t->dl.ndim == decl->ndim);
  for (int d = 0; fits && d < decl->ndim; ++d) {
    fits = decl->shape[d] < 0 || decl->shape[d] == t->shape[d];
  }
  if (!fits) {
    char got[KILN_SHAPE_TEXT_CAPACITY], want[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(t->dl.ndim, t->shape, got, sizeof(got));
    kiln_shape_format(decl->ndim, decl->shape, want, sizeof(want));
    return run_error(r, KILN_STATUS_CODE_INVALID_ARGUMENT,
                     "output %d '%s' is %s %s, declared %s %s (-1: any)", o, decl->name,
                     kiln_dtype_name(t->dtype), got, kiln_dtype_name(decl->dtype), want);
  }
  return KILN_OK;
}

/* A list output's ADT `value`: an optional holds at most one value, an
 * optional of a sequence an ADT, and the (inner) list tensors. */
static kiln_status_t check_list_output(run_t *r, int o, const kiln_vm_value_t *value) {
  int list = r->vm->output_decls[o].list;
  static const char *const kinds[] = {"", "a sequence of tensors", "an optional of a tensor",
                                      "an optional of a sequence of tensors"};
  int ok = list == KILN_VM_DECL_SEQUENCE || value->num_fields <= 1;
  if (ok && list == KILN_VM_DECL_OPTIONAL_SEQUENCE && value->num_fields == 1) {
    value = &value->fields[0];
    ok = value->kind == KILN_VM_VALUE_ADT;
  }
  for (int i = 0; ok && i < value->num_fields; ++i) {
    ok = value->fields[i].kind == KILN_VM_VALUE_TENSOR;
    KILN_RETURN_IF_ERROR(ok ? check_output(r, o, &value->fields[i]) : KILN_OK);
  }
  return ok ? KILN_OK
            : run_error(r, KILN_STATUS_CODE_INVALID_ARGUMENT, "output %d '%s' is not %s", o,
                        r->vm->output_decls[o].name, kinds[list]);
}

/* main's results become the outputs, checked against their declarations. */
static kiln_status_t set_outputs(run_t *r, const int *regs, int count) {
  kiln_vm_t *vm = r->vm;
  for (int o = 0; o < count; ++o) {
    kiln_vm_value_t *value = NULL;
    int list = vm->output_decls[o].list;
    KILN_RETURN_IF_ERROR(
        get_value(r, regs[o], list ? KILN_VM_VALUE_ADT : KILN_VM_VALUE_TENSOR, &value));
    KILN_RETURN_IF_ERROR(list ? check_list_output(r, o, value) : check_output(r, o, value));
    value_copy(&vm->outputs[o], value);
  }
  r->done = 1;
  return KILN_OK;
}

static kiln_status_t op_ret(run_t *r) {
  const kiln_vm_instr_t *in = r->instr;
  if (r->depth == 1) {
    return set_outputs(r, in->lists[0], in->list_size[0]);
  }
  const kiln_vm_frame_t *callee = r->frame;
  if (callee->num_returns != in->list_size[0]) {
    return run_error(r, KILN_STATUS_CODE_INVALID_ARGUMENT,
                     "returns %d values, the caller expects %d", in->list_size[0],
                     callee->num_returns);
  }
  for (int i = 0; i < in->list_size[0]; ++i) {
    if (r->regs[in->lists[0][i]].kind == KILN_VM_VALUE_EMPTY) {
      return run_error(r, KILN_STATUS_CODE_FAILED_PRECONDITION,
                       "returns register %d, which holds nothing", in->lists[0][i]);
    }
  }
  kiln_vm_value_t *caller_regs = r->vm->stack + r->vm->frames[r->depth - 2].base;
  for (int i = 0; i < in->list_size[0]; ++i) {
    value_copy(&caller_regs[callee->returns[i]], &r->regs[in->lists[0][i]]);
  }
  --r->depth;
  enter_top(r);
  ++r->frame->pc;
  return KILN_OK;
}

static kiln_status_t op_move(run_t *r) {
  const kiln_vm_value_t *src = &r->regs[r->instr->x[1]];
  if (src->kind == KILN_VM_VALUE_EMPTY) {
    return run_error(r, KILN_STATUS_CODE_FAILED_PRECONDITION,
                     "register %lld holds nothing (read before it was written)",
                     (long long)r->instr->x[1]);
  }
  value_copy(&r->regs[r->instr->x[0]], src);
  return KILN_OK;
}

/* ---- ADTs: sequences and optionals ---- */

/* `count` values of the run arena, the first `keep` copied from `from`. */
static kiln_status_t new_fields(run_t *r, int count, const kiln_vm_value_t *from, int keep,
                                kiln_vm_value_t **out_fields) {
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&r->vm->run_arena, (size_t)count + 1,
                                                 sizeof(kiln_vm_value_t), _Alignof(kiln_vm_value_t),
                                                 (void **)out_fields));
  for (int i = 0; i < keep; ++i) {
    value_copy(&(*out_fields)[i], &from[i]);
  }
  return KILN_OK;
}

static void set_adt(kiln_vm_value_t *value, int tag, int count, kiln_vm_value_t *fields) {
  value->kind = KILN_VM_VALUE_ADT;
  value->tag = tag;
  value->num_fields = count;
  value->fields = fields;
}

static kiln_status_t op_alloc_adt(run_t *r) {
  const kiln_vm_instr_t *in = r->instr;
  int count = in->list_size[0];
  kiln_vm_value_t *fields = NULL;
  KILN_RETURN_IF_ERROR(new_fields(r, count, NULL, 0, &fields));
  for (int i = 0; i < count; ++i) {
    if (r->regs[in->lists[0][i]].kind == KILN_VM_VALUE_EMPTY) {
      return run_error(r, KILN_STATUS_CODE_FAILED_PRECONDITION,
                       "takes register %d, which holds nothing", in->lists[0][i]);
    }
    value_copy(&fields[i], &r->regs[in->lists[0][i]]);
  }
  set_adt(&r->regs[in->x[0]], (int)in->x[1], count, fields);
  return KILN_OK;
}

/* A new ADT: the fields of another, then a value. */
static kiln_status_t op_adt_append(run_t *r) {
  const kiln_vm_instr_t *in = r->instr;
  kiln_vm_value_t *adt = NULL, *fields = NULL;
  KILN_RETURN_IF_ERROR(get_value(r, in->x[1], KILN_VM_VALUE_ADT, &adt));
  const kiln_vm_value_t *value = &r->regs[in->x[2]];
  if (value->kind == KILN_VM_VALUE_EMPTY) {
    return run_error(r, KILN_STATUS_CODE_FAILED_PRECONDITION,
                     "appends register %lld, which holds nothing", (long long)in->x[2]);
  }
  KILN_RETURN_IF_ERROR(new_fields(r, adt->num_fields + 1, adt->fields, adt->num_fields, &fields));
  value_copy(&fields[adt->num_fields], value);
  set_adt(&r->regs[in->x[0]], adt->tag, adt->num_fields + 1, fields);
  return KILN_OK;
}

/* Element i does not join element 0 (or the instruction's dtype and axis). */
static kiln_status_t join_error(const run_t *r, const kiln_vm_value_t *adt, int i) {
  const kiln_vm_value_t *t = &adt->fields[i], *first = &adt->fields[0];
  if (t->kind != KILN_VM_VALUE_TENSOR) {
    return run_error(r, KILN_STATUS_CODE_INVALID_ARGUMENT, "element %d is %s, expected a tensor", i,
                     kind_name(t->kind));
  }
  char got[KILN_SHAPE_TEXT_CAPACITY], want[KILN_SHAPE_TEXT_CAPACITY];
  kiln_shape_format(t->dl.ndim, t->shape, got, sizeof(got));
  kiln_shape_format(first->dl.ndim, first->shape, want, sizeof(want));
  return run_error(r, KILN_STATUS_CODE_INVALID_ARGUMENT,
                   "element %d is %s %s but element 0 is %s %s (joined as %s on axis %lld%s)", i,
                   kiln_dtype_name(t->dtype), got, kiln_dtype_name(first->dtype), want,
                   kiln_dtype_name(r->instr->dtype), (long long)r->instr->x[2],
                   r->instr->x[3] ? ", a new one" : "");
}

/* The one int32 or int64 value of the tensor in register `reg`. */
static kiln_status_t read_position(const run_t *r, int64_t reg, int64_t *out_position) {
  kiln_vm_value_t *t = NULL;
  KILN_RETURN_IF_ERROR(get_value(r, reg, KILN_VM_VALUE_TENSOR, &t));
  if ((t->dtype != KILN_DTYPE_INT64 && t->dtype != KILN_DTYPE_INT32) ||
      t->bytes != kiln_dtype_size(t->dtype)) {
    return run_error(r, KILN_STATUS_CODE_INVALID_ARGUMENT,
                     "the position in register %lld is not one int32 or int64", (long long)reg);
  }
  *out_position =
      t->dtype == KILN_DTYPE_INT64 ? *(const int64_t *)t->dl.data : *(const int32_t *)t->dl.data;
  return KILN_OK;
}

/* A new ADT: `adt`'s values with `value` inserted at the position in a
 * register (negative: from the end, as ONNX SequenceInsert). */
static kiln_status_t op_adt_insert(run_t *r) {
  const kiln_vm_instr_t *in = r->instr;
  kiln_vm_value_t *adt = NULL, *fields = NULL;
  KILN_RETURN_IF_ERROR(get_value(r, in->x[1], KILN_VM_VALUE_ADT, &adt));
  int64_t position = 0, n = adt->num_fields;
  KILN_RETURN_IF_ERROR(read_position(r, in->x[3], &position));
  position += position < 0 ? n : 0;
  if (position < 0 || position > n) {
    return run_error(r, KILN_STATUS_CODE_OUT_OF_RANGE,
                     "position %lld is outside a sequence of %lld elements (0 to %lld)",
                     (long long)position, (long long)n, (long long)n);
  }
  const kiln_vm_value_t *value = &r->regs[in->x[2]];
  if (value->kind == KILN_VM_VALUE_EMPTY) {
    return run_error(r, KILN_STATUS_CODE_FAILED_PRECONDITION,
                     "inserts register %lld, which holds nothing", (long long)in->x[2]);
  }
  KILN_RETURN_IF_ERROR(new_fields(r, (int)n + 1, adt->fields, (int)position, &fields));
  for (int64_t i = n; i > position; --i) {
    value_copy(&fields[i], &adt->fields[i - 1]);
  }
  value_copy(&fields[position], value);
  set_adt(&r->regs[in->x[0]], adt->tag, (int)n + 1, fields);
  return KILN_OK;
}

/* The position in register `reg` (negative: from the end) of an element
 * of `adt`. */
static kiln_status_t element_position(const run_t *r, const kiln_vm_value_t *adt, int64_t reg,
                                      int64_t *out_position) {
  int64_t n = adt->num_fields;
  KILN_RETURN_IF_ERROR(read_position(r, reg, out_position));
  *out_position += *out_position < 0 ? n : 0;
  if (*out_position < 0 || *out_position >= n) {
    return run_error(r, KILN_STATUS_CODE_OUT_OF_RANGE,
                     "position %lld is outside a sequence of %lld elements",
                     (long long)*out_position, (long long)n);
  }
  return KILN_OK;
}

static kiln_status_t op_adt_get(run_t *r) {
  const kiln_vm_instr_t *in = r->instr;
  kiln_vm_value_t *adt = NULL;
  int64_t position = 0;
  KILN_RETURN_IF_ERROR(get_value(r, in->x[1], KILN_VM_VALUE_ADT, &adt));
  KILN_RETURN_IF_ERROR(element_position(r, adt, in->x[2], &position));
  value_copy(&r->regs[in->x[0]], &adt->fields[position]);
  return KILN_OK;
}

/* A new ADT without the element at the position (the last without one). */
static kiln_status_t op_adt_erase(run_t *r) {
  const kiln_vm_instr_t *in = r->instr;
  kiln_vm_value_t *adt = NULL, *fields = NULL;
  KILN_RETURN_IF_ERROR(get_value(r, in->x[1], KILN_VM_VALUE_ADT, &adt));
  int64_t position = adt->num_fields - 1;
  if (in->num_x > 2) {
    KILN_RETURN_IF_ERROR(element_position(r, adt, in->x[2], &position));
  } else if (position < 0) {
    return run_error(r, KILN_STATUS_CODE_OUT_OF_RANGE, "erases from a sequence of 0 elements");
  }
  int n = adt->num_fields - 1;
  KILN_RETURN_IF_ERROR(new_fields(r, n, adt->fields, (int)position, &fields));
  for (int i = (int)position; i < n; ++i) {
    value_copy(&fields[i], &adt->fields[i + 1]);
  }
  set_adt(&r->regs[in->x[0]], adt->tag, n, fields);
  return KILN_OK;
}

/* A new rank-0 tensor of `dtype` holding `bytes`. */
static kiln_status_t new_scalar(run_t *r, int64_t dst, kiln_dtype_t dtype, const void *value) {
  void *data = NULL;
  size_t bytes = kiln_dtype_size(dtype);
  int block = 0;
  KILN_RETURN_IF_ERROR(pool_take(r->vm, bytes, &data, &block));
  memcpy(data, value, bytes);
  value_tensor(&r->regs[dst], dtype, 0, NULL, data, bytes);
  return KILN_OK;
}

/* adt_length: an int64 scalar, the count; adt_has: a bool, whether any. */
static kiln_status_t op_adt_count(run_t *r) {
  kiln_vm_value_t *adt = NULL;
  KILN_RETURN_IF_ERROR(get_value(r, r->instr->x[1], KILN_VM_VALUE_ADT, &adt));
  int64_t count = adt->num_fields;
  bool has = count > 0;
  return r->instr->op == KILN_VM_OP_ADT_LENGTH
             ? new_scalar(r, r->instr->x[0], KILN_DTYPE_INT64, &count)
             : new_scalar(r, r->instr->x[0], KILN_DTYPE_BOOL, &has);
}

static kiln_status_t op_get_field(run_t *r) {
  const kiln_vm_instr_t *in = r->instr;
  kiln_vm_value_t *adt = NULL;
  KILN_RETURN_IF_ERROR(get_value(r, in->x[1], KILN_VM_VALUE_ADT, &adt));
  if (in->x[2] < 0 || in->x[2] >= adt->num_fields) {
    return run_error(r, KILN_STATUS_CODE_FAILED_PRECONDITION,
                     "field %lld of an ADT of %d fields (an empty optional has none)",
                     (long long)in->x[2], adt->num_fields);
  }
  value_copy(&r->regs[in->x[0]], &adt->fields[in->x[2]]);
  return KILN_OK;
}

/* The joined shape of the ADT's tensors (concatenated on `axis`, or
 * stacked on a new one), each checked against the first. */
static kiln_status_t joined_shape(const run_t *r, const kiln_vm_value_t *adt, int *out_ndim,
                                  int64_t *out_shape) {
  const kiln_vm_instr_t *in = r->instr;
  int axis = (int)in->x[2], stack = (int)in->x[3];
  const kiln_vm_value_t *first = &adt->fields[0];
  if (first->dl.ndim + stack > KILN_MAX_RANK) {
    return run_error(r, KILN_STATUS_CODE_OUT_OF_RANGE, "the result would have rank %d (at most %d)",
                     first->dl.ndim + stack, KILN_MAX_RANK);
  }
  for (int i = 0; i < adt->num_fields; ++i) {
    const kiln_vm_value_t *t = &adt->fields[i];
    int same = t->kind == KILN_VM_VALUE_TENSOR && t->dtype == in->dtype &&
               t->dl.ndim == first->dl.ndim && axis < t->dl.ndim + stack;
    for (int d = 0; same && d < t->dl.ndim; ++d) {
      same = (d == axis && !stack) || t->shape[d] == first->shape[d];
    }
    if (!same) {
      return join_error(r, adt, i);
    }
  }
  *out_ndim = first->dl.ndim + stack;
  for (int d = 0, k = 0; d < *out_ndim; ++d) {
    out_shape[d] = stack && d == axis ? adt->num_fields : first->shape[k++];
  }
  for (int i = 1; !stack && i < adt->num_fields; ++i) {
    out_shape[axis] += adt->fields[i].shape[axis];
  }
  return KILN_OK;
}

/* Copies each element's rows into the joined tensor `out`. */
static void join_rows(const kiln_vm_value_t *adt, int axis, const kiln_vm_value_t *out) {
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) {
    outer *= out->shape[d];
  }
  size_t row = outer > 0 ? out->bytes / (size_t)outer : 0, offset = 0;
  for (int i = 0; i < adt->num_fields && row > 0; ++i) {
    const kiln_vm_value_t *t = &adt->fields[i];
    size_t part = t->bytes / (size_t)outer;
    for (int64_t o = 0; o < outer && part > 0; ++o) {
      memcpy((char *)out->dl.data + (size_t)o * row + offset,
             (const char *)t->dl.data + (size_t)o * part, part);
    }
    offset += part;
  }
}

static kiln_status_t op_adt_concat(run_t *r) {
  const kiln_vm_instr_t *in = r->instr;
  kiln_vm_value_t *adt = NULL;
  KILN_RETURN_IF_ERROR(get_value(r, in->x[1], KILN_VM_VALUE_ADT, &adt));
  int ndim = 0;
  int64_t shape[KILN_MAX_RANK + 1];
  if (adt->num_fields == 0 && !in->shape) {
    return run_error(r, KILN_STATUS_CODE_UNIMPLEMENTED,
                     "no elements, and the result's shape is not known at compile time");
  }
  if (adt->num_fields == 0) {
    ndim = in->ndim;
    memcpy(shape, in->shape, sizeof(int64_t) * (size_t)ndim);
  } else {
    KILN_RETURN_IF_ERROR(joined_shape(r, adt, &ndim, shape));
  }
  size_t bytes = 0;
  KILN_RETURN_IF_ERROR(tensor_bytes(r, in->dtype, ndim, shape, &bytes));
  void *data = NULL;
  int block = 0;
  KILN_RETURN_IF_ERROR(pool_take(r->vm, bytes, &data, &block));
  kiln_vm_value_t joined = {0};
  value_tensor(&joined, in->dtype, ndim, shape, data, bytes);
  join_rows(adt, (int)in->x[2], &joined);
  value_copy(&r->regs[in->x[0]], &joined);
  return KILN_OK;
}

/* An instruction that does not move the program counter itself, then the
 * counter moved past it. */
static kiln_status_t step(run_t *r, kiln_status_t status) {
  KILN_RETURN_IF_ERROR(status);
  ++r->frame->pc;
  return KILN_OK;
}

static kiln_status_t op_if(run_t *r) {
  int taken = 0;
  KILN_RETURN_IF_ERROR(read_condition(r, &taken));
  r->frame->pc += (int)(taken ? r->instr->x[1] : r->instr->x[2]);
  return KILN_OK;
}

static kiln_status_t execute(run_t *r) {
  const kiln_vm_instr_t *in = r->instr;
  switch (in->op) {
  case KILN_VM_OP_MOVE:
    return step(r, op_move(r));
  case KILN_VM_OP_LOAD_CONST:
    value_copy(&r->regs[in->x[0]], &r->vm->constants[in->x[1]]);
    return step(r, KILN_OK);
  case KILN_VM_OP_LOAD_CONSTI:
    return step(r, new_int64(r, in->x[0], &in->x[1], 1, 1));
  case KILN_VM_OP_ALLOC_STORAGE:
    return step(r, do_alloc_storage(r, in->x[0], (size_t)in->x[1]));
  case KILN_VM_OP_ALLOC_STORAGE_SHAPE:
    return step(r, op_alloc_storage_shape(r));
  case KILN_VM_OP_ALLOC_TENSOR:
    return step(r, do_alloc_tensor(r, in->ndim, in->shape, in->bytes));
  case KILN_VM_OP_ALLOC_TENSOR_REG:
    return step(r, op_alloc_tensor_reg(r));
  case KILN_VM_OP_FREE_STORAGE:
    return step(r, op_free_storage(r));
  case KILN_VM_OP_INVOKE_PACKED:
    return step(r, op_invoke_packed(r));
  case KILN_VM_OP_COPY:
    return step(r, op_copy(r));
  case KILN_VM_OP_SHAPE_OF:
    return step(r, op_shape_of(r));
  case KILN_VM_OP_RESHAPE_TENSOR:
    return step(r, op_reshape_tensor(r));
  case KILN_VM_OP_SHAPE_FUNC:
    return step(r, op_shape_func(r));
  case KILN_VM_OP_ALLOC_CLOSURE:
    return step(r, op_alloc_closure(r));
  case KILN_VM_OP_IF:
    return op_if(r);
  case KILN_VM_OP_GOTO:
    if (in->x[0] < 0) {
      pool_collect(r);
    }
    r->frame->pc += (int)in->x[0];
    return KILN_OK;
  case KILN_VM_OP_INVOKE:
    return push_frame(r, (int)in->x[0], NULL, 0, in->lists[0], in->list_size[0], in->lists[1],
                      in->list_size[1]);
  case KILN_VM_OP_INVOKE_CLOSURE:
    return op_invoke_closure(r);
  case KILN_VM_OP_RET:
    return op_ret(r);
  case KILN_VM_OP_ALLOC_ADT:
    return step(r, op_alloc_adt(r));
  case KILN_VM_OP_ADT_APPEND:
    return step(r, op_adt_append(r));
  case KILN_VM_OP_ADT_INSERT:
    return step(r, op_adt_insert(r));
  case KILN_VM_OP_ADT_GET:
    return step(r, op_adt_get(r));
  case KILN_VM_OP_ADT_ERASE:
    return step(r, op_adt_erase(r));
  case KILN_VM_OP_ADT_LENGTH:
  case KILN_VM_OP_ADT_HAS:
    return step(r, op_adt_count(r));
  case KILN_VM_OP_GET_FIELD:
    return step(r, op_get_field(r));
  case KILN_VM_OP_ADT_CONCAT:
    return step(r, op_adt_concat(r));
  case KILN_VM_OP_CALL_EXTERN:
    return step(r, op_call_extern(r));
  case KILN_VM_OP_COUNT_:
    break;
  }
  return run_error(r, KILN_STATUS_CODE_INTERNAL, "opcode %d", (int)in->op);
}

/* ---- runs ---- */

kiln_status_t kiln_vm_check_inputs(const kiln_vm_t *vm) {
  for (int i = 0; i < vm->num_inputs; ++i) {
    if (!vm->input_set[i]) {
      return KILN_STATUS(FAILED_PRECONDITION,
                         "%s: input '%s' (%d) was never set (kiln_graph_executor_set_input)",
                         vm->source, vm->input_decls[i].name, i);
    }
  }
  return KILN_OK;
}

static kiln_status_t start(run_t *r) {
  kiln_vm_t *vm = r->vm;
  KILN_RETURN_IF_ERROR(kiln_vm_check_inputs(vm));
  pool_reset(vm);
  kiln_arena_reset(&vm->run_arena);
  vm->has_run = 0;
  /* main's params are the inputs: its frame's first registers */
  KILN_RETURN_IF_ERROR(reserve_stack(vm, (size_t)vm->num_inputs));
  for (int i = 0; i < vm->num_inputs; ++i) {
    value_copy(&vm->stack[i], &vm->inputs[i]);
  }
  const kiln_vm_function_t *main_fn = &vm->functions[vm->main_function];
  KILN_RETURN_IF_ERROR(reserve_frames(r));
  KILN_RETURN_IF_ERROR(reserve_stack(vm, (size_t)main_fn->num_registers));
  for (int i = main_fn->num_params; i < main_fn->num_registers; ++i) {
    vm->stack[i].kind = KILN_VM_VALUE_EMPTY;
  }
  vm->frames[0] = (kiln_vm_frame_t){vm->main_function, 0, 0, NULL, 0};
  r->depth = 1;
  enter_top(r);
  return KILN_OK;
}

kiln_status_t kiln_vm_run_hooked(kiln_vm_t *vm, const kiln_vm_hooks_t *hooks) {
  run_t r = {vm, 0, NULL, NULL, NULL, NULL, 0, 16};
  KILN_RETURN_IF_ERROR(start(&r));
  for (int64_t steps = 1; !r.done; ++steps) {
    if (vm->limits.max_steps > 0 && steps > vm->limits.max_steps) {
      return run_error(&r, KILN_STATUS_CODE_RESOURCE_EXHAUSTED,
                       "the run went past its limit of %lld instructions",
                       (long long)vm->limits.max_steps);
    }
    int index = r.function->first_instr + r.frame->pc;
    if (hooks && hooks->before) {
      hooks->before(hooks->self, index);
    }
    KILN_RETURN_IF_ERROR(execute(&r));
    if (hooks && hooks->after) {
      /* the registers of the frame the instruction ran in */
      KILN_RETURN_IF_ERROR(hooks->after(hooks->self, index, r.regs));
    }
    if (!r.done) {
      enter_top(&r);
    }
  }
  vm->has_run = 1;
  return KILN_OK;
}

kiln_status_t kiln_vm_run(kiln_vm_t *vm) {
  return kiln_vm_run_hooked(vm, NULL);
}

const kiln_vm_instr_t *kiln_vm_instr_at(const kiln_vm_t *vm, int index, int *out_function) {
  for (int f = 0; f < vm->num_functions; ++f) {
    const kiln_vm_function_t *fn = &vm->functions[f];
    if (index >= fn->first_instr && index < fn->first_instr + fn->num_instrs) {
      *out_function = f;
      return &fn->instrs[index - fn->first_instr];
    }
  }
  *out_function = -1;
  return NULL;
}

/* ---- inputs and outputs ---- */

static kiln_status_t check_index(const kiln_vm_t *vm, const char *what, int index, int count) {
  if (index < 0 || index >= count) {
    return KILN_STATUS(OUT_OF_RANGE, "%s: %s %d does not exist (the program has %d)", vm->source,
                       what, index, count);
  }
  return KILN_OK;
}

static void decl_info(const kiln_vm_decl_t *decl, kiln_graph_executor_tensor_info_t *out_info) {
  *out_info = (kiln_graph_executor_tensor_info_t){decl->name, decl->dtype, decl->ndim, decl->shape,
                                                  (kiln_value_kind_t)decl->list};
}

kiln_status_t kiln_vm_input_info(const kiln_vm_t *vm, int index,
                                 kiln_graph_executor_tensor_info_t *out_info) {
  KILN_RETURN_IF_ERROR(check_index(vm, "input", index, vm->num_inputs));
  decl_info(&vm->input_decls[index], out_info);
  return KILN_OK;
}

kiln_status_t kiln_vm_output_info(const kiln_vm_t *vm, int index,
                                  kiln_graph_executor_tensor_info_t *out_info) {
  KILN_RETURN_IF_ERROR(check_index(vm, "output", index, vm->num_outputs));
  decl_info(&vm->output_decls[index], out_info);
  if (vm->has_run) {
    out_info->shape = vm->outputs[index].shape; /* the last run's, dims known */
  }
  return KILN_OK;
}

kiln_status_t kiln_vm_input_index(const kiln_vm_t *vm, const char *name, int *out_index) {
  *out_index = -1;
  for (int i = 0; name && i < vm->num_inputs; ++i) {
    if (strcmp(vm->input_decls[i].name, name) == 0) {
      *out_index = i;
      return KILN_OK;
    }
  }
  char list[1024] = "";
  size_t used = 0;
  for (int i = 0; i < vm->num_inputs && used < sizeof(list); ++i) {
    int written = snprintf(list + used, sizeof(list) - used, "%s'%s'", i > 0 ? ", " : "",
                           vm->input_decls[i].name);
    used += written > 0 ? (size_t)written : 0;
  }
  return KILN_STATUS(NOT_FOUND, "%s: no input is named '%s'; the inputs are %s", vm->source,
                     name ? name : "(null)", vm->num_inputs > 0 ? list : "none");
}

static int shape_fits(const kiln_vm_decl_t *decl, const DLTensor *t) {
  if (decl->ndim < 0) { /* a list's elements of any rank */
    for (int d = 0; d < t->ndim; ++d) {
      if (t->shape[d] < 0) {
        return 0;
      }
    }
    return 1;
  }
  if (t->ndim != decl->ndim) {
    return 0;
  }
  for (int d = 0; d < decl->ndim; ++d) {
    if (t->shape[d] < 0 || (decl->shape[d] >= 0 && decl->shape[d] != t->shape[d])) {
      return 0;
    }
  }
  return 1;
}

static kiln_status_t check_input(const kiln_vm_t *vm, const kiln_vm_decl_t *decl,
                                 const DLTensor *t) {
  if (!t || t->device.device_type != kDLCPU) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input '%s': no tensor, or not on the CPU", vm->source,
                       decl->name);
  }
  DLDataType want = kiln_dtype_to_dl(decl->dtype);
  if (t->dtype.code != want.code || t->dtype.bits != want.bits || t->dtype.lanes != want.lanes) {
    char got[KILN_DTYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input '%s' has dtype %s, expected %s", vm->source,
                       decl->name, kiln_dl_dtype_format(t->dtype, got, sizeof(got)),
                       kiln_dtype_name(decl->dtype));
  }
  if (t->ndim < 0 || t->ndim > KILN_MAX_RANK || !shape_fits(decl, t)) {
    char got[KILN_SHAPE_TEXT_CAPACITY] = "(bad rank)", want_text[KILN_SHAPE_TEXT_CAPACITY];
    if (t->ndim >= 0 && t->ndim <= KILN_MAX_RANK) {
      kiln_shape_format(t->ndim, t->shape, got, sizeof(got));
    }
    kiln_shape_format(decl->ndim, decl->shape, want_text, sizeof(want_text));
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input '%s' has shape %s, expected %s (-1: any)",
                       vm->source, decl->name, got, want_text);
  }
  if (!kiln_dl_is_compact(t)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input '%s' is not compact (strides not row-major)",
                       vm->source, decl->name);
  }
  return KILN_OK;
}

/* Input `index`'s own block, grown to `bytes` when smaller. */
static kiln_status_t input_block(kiln_vm_t *vm, int index, size_t bytes, void **out_data) {
  kiln_vm_block_t *block = &vm->input_blocks[index];
  size_t size = bytes > 0 ? bytes : 1;
  if (block->size < size) {
    void *data = NULL;
    KILN_RETURN_IF_ERROR(
        kiln_allocator_malloc_aligned(vm->allocator, size, KILN_TENSOR_ALIGNMENT, &data));
    kiln_allocator_free(vm->allocator, block->data);
    *block = (kiln_vm_block_t){data, size, 1};
  }
  *out_data = block->data;
  return KILN_OK;
}

kiln_status_t kiln_vm_set_input(kiln_vm_t *vm, int index, const DLTensor *tensor, int zero_copy) {
  KILN_RETURN_IF_ERROR(check_index(vm, "input", index, vm->num_inputs));
  const kiln_vm_decl_t *decl = &vm->input_decls[index];
  if (decl->list) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: input %d '%s' is a sequence or an optional: set it with "
                       "kiln_graph_executor_set_input_list",
                       vm->source, index, decl->name);
  }
  KILN_RETURN_IF_ERROR(check_input(vm, decl, tensor));
  size_t bytes = 0;
  KILN_RETURN_IF_ERROR(kiln_shape_byte_size(decl->dtype, tensor->ndim, tensor->shape, &bytes));
  const char *source = (const char *)tensor->data + tensor->byte_offset;
  if (!tensor->data && bytes > 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input '%s': no data", vm->source, decl->name);
  }
  void *data = (void *)(uintptr_t)source;
  if (zero_copy && (uintptr_t)source % KILN_TENSOR_ALIGNMENT != 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: input '%s': zero-copy data must be %d-byte aligned (copy it with "
                       "set_input instead)",
                       vm->source, decl->name, KILN_TENSOR_ALIGNMENT);
  }
  if (!zero_copy) {
    KILN_RETURN_IF_ERROR(input_block(vm, index, bytes, &data));
    if (bytes > 0) {
      memcpy(data, source, bytes);
    }
  }
  value_tensor(&vm->inputs[index], decl->dtype, tensor->ndim, tensor->shape, data, bytes);
  vm->input_set[index] = 1;
  return KILN_OK;
}

/* Output `index` after a run, a list (`list`) or a tensor as asked. */
static kiln_status_t ran_output(const kiln_vm_t *vm, int index, int list) {
  KILN_RETURN_IF_ERROR(check_index(vm, "output", index, vm->num_outputs));
  const kiln_vm_decl_t *decl = &vm->output_decls[index];
  if (!vm->has_run) {
    return KILN_STATUS(FAILED_PRECONDITION,
                       "%s: output %d '%s' has no value: the program has not run yet", vm->source,
                       index, decl->name);
  }
  if ((decl->list != 0) != (list != 0)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: output %d '%s' is %s: read it with %s", vm->source,
                       index, decl->name, decl->list ? "a sequence or an optional" : "a tensor",
                       decl->list ? "kiln_graph_executor_get_output_list and _element"
                                  : "kiln_graph_executor_get_output");
  }
  return KILN_OK;
}

kiln_status_t kiln_vm_get_output(const kiln_vm_t *vm, int index, const DLTensor **out_view) {
  *out_view = NULL;
  KILN_RETURN_IF_ERROR(ran_output(vm, index, 0));
  *out_view = &vm->outputs[index].dl;
  return KILN_OK;
}

/* A list output's tensors: the ADT's fields, or an optional of a
 * sequence's sequence's (none, NULL, for an empty one). */
static const kiln_vm_value_t *output_elements(const kiln_vm_t *vm, int index) {
  const kiln_vm_value_t *value = &vm->outputs[index];
  if (vm->output_decls[index].list != KILN_VM_DECL_OPTIONAL_SEQUENCE) {
    return value;
  }
  return value->num_fields > 0 ? &value->fields[0] : NULL;
}

kiln_status_t kiln_vm_get_output_list(const kiln_vm_t *vm, int index, int *out_count) {
  *out_count = 0;
  KILN_RETURN_IF_ERROR(ran_output(vm, index, 1));
  const kiln_vm_value_t *list = output_elements(vm, index);
  *out_count = list ? list->num_fields : -1;
  return KILN_OK;
}

kiln_status_t kiln_vm_get_output_element(const kiln_vm_t *vm, int index, int element,
                                         const DLTensor **out_view) {
  *out_view = NULL;
  KILN_RETURN_IF_ERROR(ran_output(vm, index, 1));
  const kiln_vm_value_t *list = output_elements(vm, index);
  KILN_RETURN_IF_ERROR(check_index(vm, "element", element, list ? list->num_fields : 0));
  *out_view = &list->fields[element].dl;
  return KILN_OK;
}

/* The bytes of a list input's block: its `values` (the elements' and, for
 * an optional of a sequence, the sequence's), then each element at a
 * 64-byte-aligned offset. */
static kiln_status_t list_bytes(const kiln_vm_t *vm, const kiln_vm_decl_t *decl, int count,
                                int values, const DLTensor *const *elements, size_t *out_bytes) {
  size_t align = KILN_TENSOR_ALIGNMENT;
  size_t total = ((size_t)values * sizeof(kiln_vm_value_t) + align - 1) / align * align;
  for (int i = 0; i < count; ++i) {
    size_t bytes = 0;
    KILN_RETURN_IF_ERROR(check_input(vm, decl, elements[i]));
    KILN_RETURN_IF_ERROR(
        kiln_shape_byte_size(decl->dtype, elements[i]->ndim, elements[i]->shape, &bytes));
    if (!elements[i]->data && bytes > 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: input '%s': element %d has no data", vm->source,
                         decl->name, i);
    }
    total += (bytes + align - 1) / align * align;
  }
  *out_bytes = total;
  return KILN_OK;
}

/* The element count a list input of `decl` takes: -1 (an empty optional)
 * up to `most`. */
static kiln_status_t check_list_count(const kiln_vm_t *vm, int index, const kiln_vm_decl_t *decl,
                                      int count, const DLTensor *const *elements) {
  int optional =
      decl->list == KILN_VM_DECL_OPTIONAL || decl->list == KILN_VM_DECL_OPTIONAL_SEQUENCE;
  int most = decl->list == KILN_VM_DECL_OPTIONAL ? 1 : decl->list ? INT32_MAX / 2 : -1;
  if (count < (optional ? -1 : 0) || count > most || (count > 0 && !elements)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d '%s' is %s, given %d elements", vm->source,
                       index, decl->name,
                       decl->list == KILN_VM_DECL_OPTIONAL ? "an optional (-1, 0 or 1 elements)"
                       : decl->list == KILN_VM_DECL_OPTIONAL_SEQUENCE
                           ? "an optional of a sequence (-1: empty, or the sequence's elements)"
                       : decl->list ? "a sequence"
                                    : "a tensor (kiln_graph_executor_set_input)",
                       count);
  }
  return KILN_OK;
}

kiln_status_t kiln_vm_set_input_list(kiln_vm_t *vm, int index, int count,
                                     const DLTensor *const *elements) {
  KILN_RETURN_IF_ERROR(check_index(vm, "input", index, vm->num_inputs));
  const kiln_vm_decl_t *decl = &vm->input_decls[index];
  KILN_RETURN_IF_ERROR(check_list_count(vm, index, decl, count, elements));
  /* an optional of a sequence that has one holds it as one more value */
  int wrapped = decl->list == KILN_VM_DECL_OPTIONAL_SEQUENCE && count >= 0;
  int empty = count < 0;
  count = empty ? 0 : count;
  size_t total = 0, align = KILN_TENSOR_ALIGNMENT;
  char *data = NULL;
  KILN_RETURN_IF_ERROR(list_bytes(vm, decl, count, count + wrapped, elements, &total));
  KILN_RETURN_IF_ERROR(input_block(vm, index, total, (void **)&data));
  kiln_vm_value_t *fields = (kiln_vm_value_t *)(void *)data;
  size_t offset = ((size_t)(count + wrapped) * sizeof(kiln_vm_value_t) + align - 1) / align * align;
  for (int i = 0; i < count; ++i) {
    const DLTensor *t = elements[i];
    size_t bytes = 0;
    KILN_RETURN_IF_ERROR(kiln_shape_byte_size(decl->dtype, t->ndim, t->shape, &bytes));
    memset(&fields[i], 0, sizeof(fields[i]));
    if (bytes > 0) {
      memcpy(data + offset, (const char *)t->data + t->byte_offset, bytes);
    }
    value_tensor(&fields[i], decl->dtype, t->ndim, t->shape, data + offset, bytes);
    offset += (bytes + align - 1) / align * align;
  }
  kiln_vm_value_t *value = &vm->inputs[index];
  memset(value, 0, sizeof(*value));
  if (wrapped) {
    memset(&fields[count], 0, sizeof(fields[count]));
    set_adt(&fields[count], 0, count, fields);
    set_adt(value, 1, 1, &fields[count]);
  } else {
    set_adt(value, decl->list == KILN_VM_DECL_SEQUENCE ? 0 : count, count, fields);
  }
  vm->input_set[index] = 1;
  return KILN_OK;
}
