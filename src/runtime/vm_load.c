/*
 * The VM's loader: vm.json into a checked program (docs/vm.md).
 *
 * Everything a run could trip on that is knowable from the file is refused
 * here, with the source, the function, the instruction and what was
 * expected: an unknown opcode, an operand count or type other than the
 * opcode's layout (vm.h's one list), a register outside the function's
 * file, a jump outside its code, a last instruction that could fall off the
 * end, a kernel, constant or function index outside its table, a kernel
 * call whose argument count is not the one the library records, an invoke
 * passing a function another argument count, a dtype kiln lacks, a shape
 * of another rank or a negative dim, a constant missing from the params or
 * of another dtype or shape, and a main whose parameters or results are not
 * the declared inputs and outputs. What depends on values (what a register
 * holds, whether a tensor fits its storage) is checked as the run reaches
 * it. The operand decoder is driven by the opcode's layout string, so the
 * loader cannot disagree with the interpreter about an opcode's operands.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "runtime/extern_kernel.h"
#include "runtime/shape_func.h"
#include "runtime/vm.h"

#define MAX_REGISTERS (1 << 20)

static const char *const opcode_names[] = {
#define KILN_VM_OPCODE_NAME_(e, name, layout) name,
    KILN_VM_OPCODE_LIST(KILN_VM_OPCODE_NAME_)
#undef KILN_VM_OPCODE_NAME_
};

static const char *const opcode_layouts[] = {
#define KILN_VM_OPCODE_LAYOUT_(e, name, layout) layout,
    KILN_VM_OPCODE_LIST(KILN_VM_OPCODE_LAYOUT_)
#undef KILN_VM_OPCODE_LAYOUT_
};

const char *kiln_vm_opcode_name(kiln_vm_opcode_t op) {
  return op >= 0 && op < KILN_VM_OP_COUNT_ ? opcode_names[op] : "invalid";
}

const char *kiln_vm_opcode_layout(kiln_vm_opcode_t op) {
  return op >= 0 && op < KILN_VM_OP_COUNT_ ? opcode_layouts[op] : "";
}

int kiln_vm_is_program(const json_t *root) {
  const json_t *format = json_is_object(root) ? json_object_get(root, "format") : NULL;
  return json_is_string(format) && strcmp(json_string_value(format), KILN_VM_FORMAT) == 0;
}

/* ---- declarations: inputs, outputs, constants ---- */

static kiln_status_t parse_shape(const json_t *array, int64_t min_dim, int *out_ndim,
                                 int64_t *out_shape) {
  if (!json_is_array(array)) {
    return KILN_STATUS(INVALID_ARGUMENT, "shape: expected an array, got %s",
                       kiln_json_type_name(array));
  }
  size_t ndim = json_array_size(array);
  if (ndim > KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT, "shape: rank %zu is over %d", ndim, KILN_MAX_RANK);
  }
  for (size_t d = 0; d < ndim; ++d) {
    const json_t *dim = json_array_get(array, d);
    if (!json_is_integer(dim) || json_integer_value(dim) < min_dim) {
      return KILN_STATUS(INVALID_ARGUMENT, "shape: dim %zu is not an integer of at least %lld", d,
                         (long long)min_dim);
    }
    out_shape[d] = json_integer_value(dim);
  }
  *out_ndim = (int)ndim;
  return KILN_OK;
}

/* An input's or output's optional "kind": "tensor" (the default),
 * "sequence" or "optional" (of tensors of the declared dtype and shape), or
 * "optional_sequence" (an optional of a sequence of them). */
static kiln_status_t parse_kind(const kiln_vm_t *vm, const json_t *object, int min_dim,
                                kiln_vm_decl_t *out_decl) {
  static const char *const kinds[] = {"tensor", "sequence", "optional", "optional_sequence"};
  const json_t *kind = json_object_get(object, "kind");
  for (int k = 0; kind && k < 4; ++k) {
    if (json_is_string(kind) && strcmp(json_string_value(kind), kinds[k]) == 0) {
      out_decl->list = k;
      return k == 0 || min_dim < 0
                 ? KILN_OK
                 : KILN_STATUS(INVALID_ARGUMENT, "%s: a constant is a tensor, not a %s", vm->source,
                               kinds[k]);
    }
  }
  return kind ? KILN_STATUS(INVALID_ARGUMENT,
                            "%s: \"kind\" is \"tensor\", \"sequence\", \"optional\" or "
                            "\"optional_sequence\"",
                            vm->source)
              : KILN_OK;
}

static kiln_status_t parse_decl(kiln_vm_t *vm, const json_t *object, int min_dim,
                                kiln_vm_decl_t *out_decl) {
  const char *name = NULL, *dtype = NULL;
  json_t *shape = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_get_string(object, "name", vm->source, &name));
  KILN_RETURN_IF_ERROR(kiln_json_get_string(object, "dtype", vm->source, &dtype));
  KILN_RETURN_IF_ERROR(kiln_dtype_from_name(dtype, &out_decl->dtype));
  KILN_RETURN_IF_ERROR(parse_kind(vm, object, min_dim, out_decl));
  out_decl->ndim = -1; /* a list's elements without "shape": any rank */
  if (!out_decl->list || json_object_get(object, "shape")) {
    KILN_RETURN_IF_ERROR(kiln_json_get_array(object, "shape", vm->source, &shape));
    KILN_RETURN_IF_ERROR(parse_shape(shape, min_dim, &out_decl->ndim, out_decl->shape));
  }
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(&vm->arena, name, &copy));
  out_decl->name = copy;
  return KILN_OK;
}

/* `key`'s array of declarations; `min_dim` -1 lets a dim be known at run time. */
static kiln_status_t parse_decls(kiln_vm_t *vm, const json_t *root, const char *key, int min_dim,
                                 int *out_count, kiln_vm_decl_t **out_decls) {
  json_t *array = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_get_array(root, key, vm->source, &array));
  size_t count = json_array_size(array);
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(&vm->arena, (count + 1) * sizeof(kiln_vm_decl_t),
                                                  _Alignof(kiln_vm_decl_t), (void **)out_decls));
  for (size_t i = 0; i < count; ++i) {
    const json_t *item = json_array_get(array, i);
    if (!json_is_object(item)) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: %s %zu: expected an object, got %s", vm->source,
                         key, i, kiln_json_type_name(item));
    }
    KILN_RETURN_IF_ERROR_ANNOTATE(parse_decl(vm, item, min_dim, &(*out_decls)[i]), "%s: %s %zu",
                                  vm->source, key, i);
  }
  *out_count = (int)count;
  return KILN_OK;
}

/* ---- constants ---- */

static void set_tensor_value(kiln_vm_value_t *value, kiln_dtype_t dtype, int ndim,
                             const int64_t *shape, void *data, size_t bytes) {
  memset(value, 0, sizeof(*value));
  value->kind = KILN_VM_VALUE_TENSOR;
  value->dtype = dtype;
  value->bytes = bytes;
  if (ndim > 0) {
    memcpy(value->shape, shape, sizeof(int64_t) * (size_t)ndim);
  }
  value->dl = (DLTensor){data, {kDLCPU, 0}, ndim, kiln_dtype_to_dl(dtype), value->shape, NULL, 0};
}

static kiln_status_t bind_constant(kiln_vm_t *vm, int index, const kiln_runtime_params_t *params) {
  const kiln_vm_decl_t *decl = &vm->constant_decls[index];
  kiln_tensor_t *value = params ? kiln_runtime_params_get(params, decl->name) : NULL;
  if (!value) {
    return KILN_STATUS(NOT_FOUND, "%s: constant %d '%s' is not in the params", vm->source, index,
                       decl->name);
  }
  if (kiln_tensor_dtype(value) != decl->dtype ||
      !kiln_shape_equal(kiln_tensor_ndim(value), kiln_tensor_shape(value), decl->ndim,
                        decl->shape)) {
    char got[KILN_SHAPE_TEXT_CAPACITY], want[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(kiln_tensor_ndim(value), kiln_tensor_shape(value), got, sizeof(got));
    kiln_shape_format(decl->ndim, decl->shape, want, sizeof(want));
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: constant %d '%s' is %s %s in the params, the program expects %s %s",
                       vm->source, index, decl->name, kiln_dtype_name(kiln_tensor_dtype(value)),
                       got, kiln_dtype_name(decl->dtype), want);
  }
  size_t bytes = kiln_tensor_byte_size(value);
  void *data = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate(&vm->arena, bytes > 0 ? bytes : 1, KILN_TENSOR_ALIGNMENT, &data));
  if (bytes > 0) {
    memcpy(data, kiln_tensor_data(value), bytes);
  }
  set_tensor_value(&vm->constants[index], decl->dtype, decl->ndim, decl->shape, data, bytes);
  return KILN_OK;
}

static kiln_status_t bind_constants(kiln_vm_t *vm, const kiln_runtime_params_t *params) {
  size_t count = (size_t)vm->num_constants + 1;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(&vm->arena, count * sizeof(kiln_vm_value_t),
                                                  _Alignof(kiln_vm_value_t),
                                                  (void **)&vm->constants));
  for (int i = 0; i < vm->num_constants; ++i) {
    KILN_RETURN_IF_ERROR(bind_constant(vm, i, params));
  }
  return KILN_OK;
}

/* ---- kernels ---- */

static kiln_status_t bind_kernels(kiln_vm_t *vm, const json_t *root) {
  json_t *array = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_get_array(root, "kernels", vm->source, &array));
  size_t count = json_array_size(array);
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(&vm->arena, (count + 1) * sizeof(char *),
                                                  _Alignof(char *), (void **)&vm->kernel_names));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(&vm->arena, (count + 1) * sizeof(kiln_packed_fn),
                                                  _Alignof(kiln_packed_fn), (void **)&vm->kernels));
  for (size_t k = 0; k < count; ++k) {
    const json_t *name = json_array_get(array, k);
    if (!json_is_string(name)) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: kernel %zu: expected a name, got %s", vm->source, k,
                         kiln_json_type_name(name));
    }
    char *copy = NULL;
    KILN_RETURN_IF_ERROR(kiln_arena_strdup(&vm->arena, json_string_value(name), &copy));
    vm->kernel_names[k] = copy;
    kiln_status_t status = kiln_runtime_module_get_function(vm->module, copy, &vm->kernels[k]);
    if (status) {
      kiln_status_free(status);
      return KILN_STATUS(NOT_FOUND, "%s: kernel %zu: the library has no function %s", vm->source, k,
                         copy);
    }
  }
  vm->num_kernels = (int)count;
  return KILN_OK;
}

/* ---- instructions ---- */

typedef struct decoder_t {
  kiln_vm_t *vm;
  const kiln_vm_function_t *function;
  int index;
  char where[512];
} decoder_t;

static kiln_status_t lookup_opcode(const decoder_t *d, const json_t *name,
                                   kiln_vm_opcode_t *out_op) {
  if (!json_is_string(name)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected an opcode name first, got %s", d->where,
                       kiln_json_type_name(name));
  }
  for (int op = 0; op < KILN_VM_OP_COUNT_; ++op) {
    if (strcmp(opcode_names[op], json_string_value(name)) == 0) {
      *out_op = (kiln_vm_opcode_t)op;
      return KILN_OK;
    }
  }
  return KILN_STATUS(INVALID_ARGUMENT, "%s: unknown opcode '%s'", d->where,
                     json_string_value(name));
}

static kiln_status_t check_register(const decoder_t *d, int64_t r, const char *what) {
  if (r < 0 || r >= d->function->num_registers) {
    return KILN_STATUS(OUT_OF_RANGE, "%s: %s register %lld is outside the function's %d registers",
                       d->where, what, (long long)r, d->function->num_registers);
  }
  return KILN_OK;
}

static kiln_status_t check_index(const decoder_t *d, int64_t value, int count, const char *table) {
  if (value < 0 || value >= count) {
    return KILN_STATUS(OUT_OF_RANGE, "%s: %s %lld does not exist (the program has %d)", d->where,
                       table, (long long)value, count);
  }
  return KILN_OK;
}

/* One scalar operand of layout letter `letter`. */
static kiln_status_t decode_scalar(const decoder_t *d, char letter, int operand,
                                   const json_t *value, int64_t *out) {
  if (!json_is_integer(value)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: operand %d: expected an integer, got %s", d->where,
                       operand, kiln_json_type_name(value));
  }
  *out = json_integer_value(value);
  switch (letter) {
  case 'r':
    return check_register(d, *out, "a");
  case 'k':
    return check_index(d, *out, d->vm->num_kernels, "kernel");
  case 'c':
    return check_index(d, *out, d->vm->num_constants, "constant");
  case 'f':
    return check_index(d, *out, d->vm->num_functions, "function");
  case 'j': {
    int64_t target = d->index + *out;
    return target >= 0 && target < d->function->num_instrs
               ? KILN_OK
               : KILN_STATUS(OUT_OF_RANGE,
                             "%s: jump offset %lld goes to instruction %lld, outside the "
                             "function's %d",
                             d->where, (long long)*out, (long long)target, d->function->num_instrs);
  }
  default:
    return KILN_OK;
  }
}

static kiln_status_t decode_list(const decoder_t *d, int operand, const json_t *value,
                                 kiln_vm_instr_t *instr) {
  if (!json_is_array(value)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: operand %d: expected an array of registers, got %s",
                       d->where, operand, kiln_json_type_name(value));
  }
  int slot = instr->lists[0] ? 1 : 0;
  size_t count = json_array_size(value);
  if (count > MAX_REGISTERS) {
    return KILN_STATUS(OUT_OF_RANGE, "%s: operand %d: %zu registers", d->where, operand, count);
  }
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&d->vm->arena, count + 1, sizeof(int),
                                                 _Alignof(int), (void **)&instr->lists[slot]));
  for (size_t i = 0; i < count; ++i) {
    int64_t r = 0;
    KILN_RETURN_IF_ERROR(decode_scalar(d, 'r', operand, json_array_get(value, i), &r));
    instr->lists[slot][i] = (int)r;
  }
  instr->list_size[slot] = (int)count;
  return KILN_OK;
}

/* A name `find` knows (a shape function's, runtime/shape_func.h, or an
 * extern kernel's, runtime/extern_kernel.h), kept as its index; `what`
 * says what was expected. */
static kiln_status_t decode_name(const decoder_t *d, int operand, const json_t *value,
                                 int (*find)(const char *), const char *what,
                                 kiln_vm_instr_t *instr) {
  int index = json_is_string(value) ? find(json_string_value(value)) : -1;
  if (index < 0) {
    return KILN_STATUS(
        INVALID_ARGUMENT, "%s: operand %d: expected the name of %s, got %s", d->where, operand,
        what, json_is_string(value) ? json_string_value(value) : kiln_json_type_name(value));
  }
  instr->x[instr->num_x++] = index;
  return KILN_OK;
}

static kiln_status_t decode_operand(const decoder_t *d, char letter, int operand,
                                    const json_t *value, kiln_vm_instr_t *instr) {
  switch (letter) {
  case 'R':
    return decode_list(d, operand, value, instr);
  case 'd':
    if (!json_is_string(value)) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: operand %d: expected a dtype name, got %s",
                         d->where, operand, kiln_json_type_name(value));
    }
    KILN_RETURN_IF_ERROR_ANNOTATE(kiln_dtype_from_name(json_string_value(value), &instr->dtype),
                                  "%s: operand %d", d->where, operand);
    return KILN_OK;
  case 'n':
    return decode_name(d, operand, value, kiln_shape_func_find,
                       "a shape function the runtime has (such as \"dyn.reshape\")", instr);
  case 'e':
    return decode_name(d, operand, value, kiln_extern_kernel_find,
                       "an extern kernel the runtime has (such as \"nonzero\")", instr);
  case 'a':
  case 's': {
    int64_t shape[KILN_MAX_RANK];
    KILN_RETURN_IF_ERROR_ANNOTATE(
        parse_shape(value, letter == 'a' ? INT64_MIN : 0, &instr->ndim, shape), "%s: operand %d",
        d->where, operand);
    KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&d->vm->arena, (size_t)instr->ndim + 1,
                                                   sizeof(int64_t), _Alignof(int64_t),
                                                   (void **)&instr->shape));
    memcpy(instr->shape, shape, sizeof(int64_t) * (size_t)instr->ndim);
    return KILN_OK;
  }
  default:
    return decode_scalar(d, letter, operand, value, &instr->x[instr->num_x++]);
  }
}

/* The operand counts the layout allows: all, or all but an optional last. */
static kiln_status_t check_arity(const decoder_t *d, const char *layout, size_t given) {
  size_t letters = 0, optional = 0;
  for (const char *c = layout; *c; ++c) {
    optional += *c == '?';
    letters += *c != '?';
  }
  if (given > letters || given + optional < letters) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %zu operands, expected %zu%s", d->where, given,
                       letters, optional ? " (the last optional)" : "");
  }
  return KILN_OK;
}

static kiln_status_t decode_instr(decoder_t *d, const json_t *item, kiln_vm_instr_t *instr) {
  if (!json_is_array(item) || json_array_size(item) == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected [opcode, operands...], got %s", d->where,
                       kiln_json_type_name(item));
  }
  KILN_RETURN_IF_ERROR(lookup_opcode(d, json_array_get(item, 0), &instr->op));
  snprintf(d->where + strlen(d->where), sizeof(d->where) - strlen(d->where), " (%s)",
           opcode_names[instr->op]);
  const char *layout = opcode_layouts[instr->op];
  size_t given = json_array_size(item) - 1;
  KILN_RETURN_IF_ERROR(check_arity(d, layout, given));
  size_t operand = 0;
  for (const char *c = layout; *c && operand < given; ++c) {
    if (*c != '?') {
      KILN_RETURN_IF_ERROR(
          decode_operand(d, *c, (int)operand, json_array_get(item, operand + 1), instr));
      ++operand;
    }
  }
  return KILN_OK;
}

/* ---- functions ---- */

static kiln_status_t parse_function_header(kiln_vm_t *vm, int index, const json_t *object,
                                           json_t **out_code) {
  kiln_vm_function_t *f = &vm->functions[index];
  const char *name = NULL;
  int64_t params = 0, registers = 0;
  KILN_RETURN_IF_ERROR(kiln_json_get_string(object, "name", vm->source, &name));
  KILN_RETURN_IF_ERROR(kiln_json_get_int(object, "params", vm->source, &params));
  KILN_RETURN_IF_ERROR(kiln_json_get_int(object, "registers", vm->source, &registers));
  KILN_RETURN_IF_ERROR(kiln_json_get_array(object, "code", vm->source, out_code));
  if (registers < 0 || registers > MAX_REGISTERS || params < 0 || params > registers) {
    return KILN_STATUS(OUT_OF_RANGE,
                       "%s: function %d %s: %lld params and %lld registers; expected 0 <= params "
                       "<= registers <= %d",
                       vm->source, index, name, (long long)params, (long long)registers,
                       MAX_REGISTERS);
  }
  size_t count = json_array_size(*out_code);
  if (count == 0 || count > MAX_REGISTERS) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: function %d %s has %zu instructions", vm->source,
                       index, name, count);
  }
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(&vm->arena, name, &copy));
  *f = (kiln_vm_function_t){copy, (int)params, (int)registers, (int)count, NULL, vm->num_instrs};
  vm->num_instrs += (int)count;
  for (int g = 0; g < index; ++g) {
    if (strcmp(vm->functions[g].name, copy) == 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: functions %d and %d are both named '%s'",
                         vm->source, g, index, copy);
    }
  }
  return kiln_arena_allocate_zeroed(&vm->arena, count * sizeof(kiln_vm_instr_t),
                                    _Alignof(kiln_vm_instr_t), (void **)&f->instrs);
}

static void set_where(decoder_t *d, int index) {
  d->index = index;
  snprintf(d->where, sizeof(d->where), "%.300s function %.100s instruction %d", d->vm->source,
           d->function->name, index);
}

static kiln_status_t check_kernel_arity(const decoder_t *d, const kiln_vm_instr_t *instr) {
  const char *name = d->vm->kernel_names[instr->x[0]];
  int expected = kiln_runtime_module_function_num_args(d->vm->module, name);
  int passed = instr->list_size[0] + instr->list_size[1];
  if (expected >= 0 && expected != passed) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: kernel %s takes %d arguments, the call passes %d (%d inputs, %d "
                       "outputs)",
                       d->where, name, expected, passed, instr->list_size[0], instr->list_size[1]);
  }
  return KILN_OK;
}

static kiln_status_t check_offset(const decoder_t *d, const kiln_vm_instr_t *instr) {
  if (instr->x[2] < 0 || instr->x[2] > KILN_VM_MAX_BYTES ||
      instr->x[2] % KILN_TENSOR_ALIGNMENT != 0) {
    return KILN_STATUS(OUT_OF_RANGE, "%s: offset %lld, expected a multiple of %d from 0 to 2^40",
                       d->where, (long long)instr->x[2], KILN_TENSOR_ALIGNMENT);
  }
  return KILN_OK;
}

/* adt_concat: an axis within the result's rank, new_axis 0 or 1, and the
 * empty result's shape (when given) 0 on the axis. */
static kiln_status_t check_concat(const decoder_t *d, const kiln_vm_instr_t *instr) {
  int64_t axis = instr->x[2], new_axis = instr->x[3];
  if (axis < 0 || axis >= KILN_MAX_RANK || (new_axis != 0 && new_axis != 1)) {
    return KILN_STATUS(OUT_OF_RANGE, "%s: axis %lld and new_axis %lld, expected 0 to %d and 0 or 1",
                       d->where, (long long)axis, (long long)new_axis, KILN_MAX_RANK - 1);
  }
  if (instr->shape && (axis >= instr->ndim || instr->shape[axis] != 0)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: the empty result's shape must have rank above %lld and 0 on axis %lld",
                       d->where, (long long)axis, (long long)axis);
  }
  return KILN_OK;
}

/* A call_extern passes its kernel's input, output and attribute counts. */
static kiln_status_t check_extern_arity(const decoder_t *d, const kiln_vm_instr_t *instr) {
  const kiln_extern_kernel_t *k = kiln_extern_kernel_at((int)instr->x[0]);
  int inputs = instr->list_size[0], outputs = instr->list_size[1];
  bool any = k->num_outputs < 0; /* as many as the call passes */
  if (inputs < k->min_inputs || inputs > k->max_inputs ||
      (any ? outputs < 1 || outputs > KILN_EXTERN_MAX_OUTPUTS : outputs != k->num_outputs) ||
      instr->ndim != k->num_attrs) {
    if (any) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: extern kernel %s takes %d to %d inputs, 1 to %d outputs and %d "
                         "attributes, the call passes %d, %d and %d",
                         d->where, k->name, k->min_inputs, k->max_inputs, KILN_EXTERN_MAX_OUTPUTS,
                         k->num_attrs, inputs, outputs, instr->ndim);
    }
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: extern kernel %s takes %d to %d inputs, %d outputs and %d "
                       "attributes, the call passes %d, %d and %d",
                       d->where, k->name, k->min_inputs, k->max_inputs, k->num_outputs,
                       k->num_attrs, inputs, instr->list_size[1], instr->ndim);
  }
  return KILN_OK;
}

/* The checks that need every function decoded: arities and returns. */
static kiln_status_t check_instr(const decoder_t *d, kiln_vm_instr_t *instr) {
  const kiln_vm_t *vm = d->vm;
  switch (instr->op) {
  case KILN_VM_OP_INVOKE_PACKED:
    return check_kernel_arity(d, instr);
  case KILN_VM_OP_INVOKE: {
    const kiln_vm_function_t *callee = &vm->functions[instr->x[0]];
    if (instr->list_size[0] != callee->num_params) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: function %s takes %d arguments, the call passes %d",
                         d->where, callee->name, callee->num_params, instr->list_size[0]);
    }
    return KILN_OK;
  }
  case KILN_VM_OP_ALLOC_CLOSURE: {
    const kiln_vm_function_t *callee = &vm->functions[instr->x[1]];
    if (instr->list_size[0] > callee->num_params) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: function %s takes %d arguments, the closure captures %d", d->where,
                         callee->name, callee->num_params, instr->list_size[0]);
    }
    return KILN_OK;
  }
  case KILN_VM_OP_ALLOC_STORAGE:
    return instr->x[1] >= 0 && instr->x[1] <= KILN_VM_MAX_BYTES
               ? KILN_OK
               : KILN_STATUS(OUT_OF_RANGE, "%s: %lld bytes, expected 0 to 2^40", d->where,
                             (long long)instr->x[1]);
  case KILN_VM_OP_ALLOC_TENSOR:
    KILN_RETURN_IF_ERROR_ANNOTATE(
        kiln_shape_byte_size(instr->dtype, instr->ndim, instr->shape, &instr->bytes), "%s",
        d->where);
    return check_offset(d, instr);
  case KILN_VM_OP_ALLOC_TENSOR_REG:
    return check_offset(d, instr);
  case KILN_VM_OP_SHAPE_FUNC: {
    const kiln_shape_func_t *f = kiln_shape_func_at((int)instr->x[1]);
    if (instr->list_size[0] != f->num_inputs) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: shape function %s takes %d inputs, the call passes %d", d->where,
                         f->name, f->num_inputs, instr->list_size[0]);
    }
    return KILN_OK;
  }
  case KILN_VM_OP_CALL_EXTERN:
    return check_extern_arity(d, instr);
  case KILN_VM_OP_RET:
    if (d->function == &vm->functions[vm->main_function] &&
        instr->list_size[0] != vm->num_outputs) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: main returns %d values, the program declares %d "
                         "outputs",
                         d->where, instr->list_size[0], vm->num_outputs);
    }
    return KILN_OK;
  case KILN_VM_OP_ALLOC_ADT:
    return instr->x[1] >= 0 && instr->x[1] <= INT32_MAX
               ? KILN_OK
               : KILN_STATUS(OUT_OF_RANGE, "%s: tag %lld, expected 0 to 2^31-1", d->where,
                             (long long)instr->x[1]);
  case KILN_VM_OP_ADT_CONCAT:
    return check_concat(d, instr);
  case KILN_VM_OP_ADT_APPEND:
  case KILN_VM_OP_ADT_INSERT:
  case KILN_VM_OP_ADT_GET:
  case KILN_VM_OP_ADT_ERASE:
  case KILN_VM_OP_ADT_LENGTH:
  case KILN_VM_OP_ADT_HAS:
  case KILN_VM_OP_GET_FIELD:
  case KILN_VM_OP_MOVE:
  case KILN_VM_OP_LOAD_CONST:
  case KILN_VM_OP_LOAD_CONSTI:
  case KILN_VM_OP_ALLOC_STORAGE_SHAPE:
  case KILN_VM_OP_FREE_STORAGE:
  case KILN_VM_OP_COPY:
  case KILN_VM_OP_SHAPE_OF:
  case KILN_VM_OP_RESHAPE_TENSOR:
  case KILN_VM_OP_IF:
  case KILN_VM_OP_GOTO:
  case KILN_VM_OP_INVOKE_CLOSURE:
  case KILN_VM_OP_COUNT_:
    break; /* their operands' ranges were checked as they were decoded */
  }
  return KILN_OK;
}

static kiln_status_t decode_function(kiln_vm_t *vm, int index, const json_t *code) {
  decoder_t d = {vm, &vm->functions[index], 0, ""};
  for (int i = 0; i < d.function->num_instrs; ++i) {
    set_where(&d, i);
    KILN_RETURN_IF_ERROR(decode_instr(&d, json_array_get(code, (size_t)i), &d.function->instrs[i]));
  }
  kiln_vm_opcode_t last = d.function->instrs[d.function->num_instrs - 1].op;
  if (last != KILN_VM_OP_RET && last != KILN_VM_OP_GOTO) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: function %s ends with %s; the last instruction must be ret or goto "
                       "(a run would fall off the end)",
                       vm->source, d.function->name, opcode_names[last]);
  }
  return KILN_OK;
}

static kiln_status_t check_function(kiln_vm_t *vm, int index) {
  decoder_t d = {vm, &vm->functions[index], 0, ""};
  for (int i = 0; i < d.function->num_instrs; ++i) {
    set_where(&d, i);
    kiln_vm_instr_t *instr = &d.function->instrs[i];
    snprintf(d.where + strlen(d.where), sizeof(d.where) - strlen(d.where), " (%s)",
             opcode_names[instr->op]);
    KILN_RETURN_IF_ERROR(check_instr(&d, instr));
    int args =
        instr->op == KILN_VM_OP_INVOKE_PACKED ? instr->list_size[0] + instr->list_size[1] : 0;
    vm->max_args = args > vm->max_args ? args : vm->max_args;
  }
  return KILN_OK;
}

static kiln_status_t find_main(kiln_vm_t *vm) {
  vm->main_function = -1;
  for (int f = 0; f < vm->num_functions; ++f) {
    if (strcmp(vm->functions[f].name, "main") == 0) {
      vm->main_function = f;
    }
  }
  if (vm->main_function < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: no function is named 'main'", vm->source);
  }
  if (vm->functions[vm->main_function].num_params != vm->num_inputs) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: main takes %d params, the program declares %d inputs",
                       vm->source, vm->functions[vm->main_function].num_params, vm->num_inputs);
  }
  return KILN_OK;
}

static kiln_status_t parse_functions(kiln_vm_t *vm, const json_t *root) {
  json_t *array = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_get_array(root, "functions", vm->source, &array));
  size_t count = json_array_size(array);
  if (count == 0 || count > MAX_REGISTERS) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %zu functions; a program needs main", vm->source,
                       count);
  }
  vm->num_functions = (int)count;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(&vm->arena, count * sizeof(kiln_vm_function_t),
                                                  _Alignof(kiln_vm_function_t),
                                                  (void **)&vm->functions));
  for (size_t f = 0; f < count; ++f) {
    json_t *code = NULL, *object = json_array_get(array, f);
    if (!json_is_object(object)) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: function %zu: expected an object, got %s",
                         vm->source, f, kiln_json_type_name(object));
    }
    KILN_RETURN_IF_ERROR(parse_function_header(vm, (int)f, object, &code));
  }
  KILN_RETURN_IF_ERROR(find_main(vm));
  for (size_t f = 0; f < count; ++f) {
    json_t *code = json_object_get(json_array_get(array, f), "code");
    KILN_RETURN_IF_ERROR(decode_function(vm, (int)f, code));
  }
  for (int f = 0; f < vm->num_functions; ++f) {
    KILN_RETURN_IF_ERROR(check_function(vm, f));
  }
  return KILN_OK;
}

/* ---- the program ---- */

static kiln_status_t check_version(const kiln_vm_t *vm, const json_t *root) {
  if (!kiln_vm_is_program(root)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: not a VM program (its \"format\" is not \"%s\")",
                       vm->source, KILN_VM_FORMAT);
  }
  int64_t version = 0;
  KILN_RETURN_IF_ERROR(kiln_json_get_int(root, "version", vm->source, &version));
  if (version != KILN_VM_VERSION) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: VM program version %lld; this kiln reads version %d",
                       vm->source, (long long)version, KILN_VM_VERSION);
  }
  return KILN_OK;
}

static kiln_status_t allocate_run_state(kiln_vm_t *vm) {
  size_t args = (size_t)vm->max_args + 1, inputs = (size_t)vm->num_inputs + 1;
  size_t outputs = (size_t)vm->num_outputs + 1;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&vm->arena, args, sizeof(kiln_value_t),
                                                 _Alignof(kiln_value_t), (void **)&vm->args));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&vm->arena, args, sizeof(int), _Alignof(int),
                                                 (void **)&vm->type_codes));
  for (size_t i = 0; i < args; ++i) {
    vm->type_codes[i] = KILN_ARG_DLTENSOR;
  }
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(&vm->arena, inputs * sizeof(kiln_vm_value_t),
                                                  _Alignof(kiln_vm_value_t), (void **)&vm->inputs));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(&vm->arena, inputs * sizeof(kiln_vm_block_t),
                                                  _Alignof(kiln_vm_block_t),
                                                  (void **)&vm->input_blocks));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(&vm->arena, inputs, 1, (void **)&vm->input_set));
  return kiln_arena_allocate_zeroed(&vm->arena, outputs * sizeof(kiln_vm_value_t),
                                    _Alignof(kiln_vm_value_t), (void **)&vm->outputs);
}

static kiln_status_t build(kiln_vm_t *vm, const json_t *root, const kiln_runtime_params_t *params) {
  KILN_RETURN_IF_ERROR(check_version(vm, root));
  KILN_RETURN_IF_ERROR(bind_kernels(vm, root));
  KILN_RETURN_IF_ERROR(
      parse_decls(vm, root, "constants", 0, &vm->num_constants, &vm->constant_decls));
  KILN_RETURN_IF_ERROR(parse_decls(vm, root, "inputs", -1, &vm->num_inputs, &vm->input_decls));
  KILN_RETURN_IF_ERROR(parse_decls(vm, root, "outputs", -1, &vm->num_outputs, &vm->output_decls));
  KILN_RETURN_IF_ERROR(parse_functions(vm, root));
  KILN_RETURN_IF_ERROR(bind_constants(vm, params));
  return allocate_run_state(vm);
}

kiln_status_t kiln_vm_create(kiln_allocator_t allocator, const json_t *root, const char *source,
                             kiln_runtime_module_t *module, const kiln_runtime_params_t *params,
                             kiln_vm_t **out_vm) {
  *out_vm = NULL;
  kiln_vm_t *vm = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*vm), (void **)&vm));
  vm->allocator = allocator;
  kiln_arena_initialize(&vm->arena, allocator, 0);
  kiln_arena_initialize(&vm->run_arena, allocator, 0);
  kiln_runtime_module_retain(module);
  vm->module = module;
  char *source_copy = NULL;
  kiln_status_t status = kiln_arena_strdup(&vm->arena, source, &source_copy);
  vm->source = source_copy ? source_copy : "vm.json";
  if (!status) {
    status = build(vm, root, params);
  }
  if (status) {
    kiln_vm_destroy(vm);
    return status;
  }
  *out_vm = vm;
  return KILN_OK;
}

void kiln_vm_destroy(kiln_vm_t *vm) {
  if (!vm) {
    return;
  }
  for (int b = 0; b < vm->num_blocks; ++b) {
    kiln_allocator_free(vm->allocator, vm->blocks[b].data);
  }
  for (int i = 0; vm->input_blocks && i < vm->num_inputs; ++i) {
    kiln_allocator_free(vm->allocator, vm->input_blocks[i].data);
  }
  kiln_allocator_free(vm->allocator, vm->blocks);
  kiln_allocator_free(vm->allocator, vm->stack);
  kiln_allocator_free(vm->allocator, vm->frames);
  kiln_runtime_module_release(vm->module);
  kiln_arena_deinitialize(&vm->run_arena);
  kiln_arena_deinitialize(&vm->arena);
  kiln_allocator_free(vm->allocator, vm);
}
