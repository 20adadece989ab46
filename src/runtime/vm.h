/*
 * The VM executor's insides (docs/vm.md), shared by its files: vm_load.c
 * (vm.json into a checked program), vm.c (the storage pool, the
 * interpreter loop, inputs and outputs) and vm_profile.c (the profile, the
 * debug dump and the disassembly). The public face is the graph executor's
 * API (include/kiln/runtime.h): kiln_graph_executor_create and _load hand a
 * program whose "format" is "kiln-vm" to kiln_vm_create, and every call on
 * such an executor is forwarded here.
 *
 * A program is a kernel table (names in the model's library, looked up once),
 * a constant pool (the params, by name, copied once), the declared inputs and
 * outputs (a dim of -1 is known only at run time) and functions of decoded
 * instructions over a register file. The opcodes are one X-macro list with
 * their names and operand layouts, so the loader, the interpreter and the
 * disassembler agree on them. A register holds nothing, a tensor (a DLTensor
 * whose shape lives in the register), a storage block, a closure or an ADT
 * (a tag and a list of values: a sequence's elements, an optional's 0 or 1;
 * its fields live in the run arena and are never changed once made).
 */
#ifndef KILN_RUNTIME_VM_H_
#define KILN_RUNTIME_VM_H_

#include "base/arena.h"
#include "base/json.h"
#include "kiln/runtime.h"

#define KILN_VM_FORMAT  "kiln-vm"
#define KILN_VM_VERSION 1
/* The deepest chain of invoke / invoke_closure a run may make. */
#define KILN_VM_MAX_FRAMES 4096
/* The largest storage or offset a program may name. */
#define KILN_VM_MAX_BYTES ((int64_t)1 << 40)

/* X(ENUM, name, operand layout). Layout letters, one per operand after the
 * name: r a register, i an integer, k a kernel index, c a constant index, f a
 * function index, d a dtype name, s a static shape (array of dims), R an
 * array of registers, j a jump offset (relative, may be negative), n a
 * shape function's name (runtime/shape_func.h; decoded to its index), e an
 * extern kernel's name (runtime/extern_kernel.h; decoded to its index), a
 * an array of integer attributes (kept as the instruction's shape), and a
 * trailing '?' for an optional last operand. */
#define KILN_VM_OPCODE_LIST(X)                         \
  X(MOVE, "move", "rr")                                \
  X(LOAD_CONST, "load_const", "rc")                    \
  X(LOAD_CONSTI, "load_consti", "ri")                  \
  X(ALLOC_STORAGE, "alloc_storage", "ri")              \
  X(ALLOC_STORAGE_SHAPE, "alloc_storage_shape", "rrd") \
  X(ALLOC_TENSOR, "alloc_tensor", "rrids")             \
  X(ALLOC_TENSOR_REG, "alloc_tensor_reg", "rridr")     \
  X(FREE_STORAGE, "free_storage", "r")                 \
  X(INVOKE_PACKED, "invoke_packed", "kRRi?")           \
  X(COPY, "copy", "rr")                                \
  X(SHAPE_OF, "shape_of", "rr")                        \
  X(RESHAPE_TENSOR, "reshape_tensor", "rrr")           \
  X(SHAPE_FUNC, "shape_func", "rnRi?")                 \
  X(IF, "if", "rjj")                                   \
  X(GOTO, "goto", "j")                                 \
  X(INVOKE, "invoke", "fRR")                           \
  X(ALLOC_CLOSURE, "alloc_closure", "rfR")             \
  X(INVOKE_CLOSURE, "invoke_closure", "rRR")           \
  X(RET, "ret", "R")                                   \
  X(ALLOC_ADT, "alloc_adt", "riR")                     \
  X(ADT_APPEND, "adt_append", "rrr")                   \
  X(ADT_INSERT, "adt_insert", "rrrr")                  \
  X(ADT_GET, "adt_get", "rrr")                         \
  X(ADT_ERASE, "adt_erase", "rrr?")                    \
  X(ADT_LENGTH, "adt_length", "rr")                    \
  X(ADT_HAS, "adt_has", "rr")                          \
  X(GET_FIELD, "get_field", "rri")                     \
  X(ADT_CONCAT, "adt_concat", "rriids?")               \
  X(CALL_EXTERN, "call_extern", "eRRa?")

typedef enum kiln_vm_opcode_e {
#define KILN_VM_OPCODE_ENUM_(e, name, layout) KILN_VM_OP_##e,
  KILN_VM_OPCODE_LIST(KILN_VM_OPCODE_ENUM_)
#undef KILN_VM_OPCODE_ENUM_
      KILN_VM_OP_COUNT_
} kiln_vm_opcode_t;

const char *kiln_vm_opcode_name(kiln_vm_opcode_t op);
const char *kiln_vm_opcode_layout(kiln_vm_opcode_t op);

/* A decoded instruction: the scalar operands in layout order (registers,
 * integers, indices, jump offsets) in `x`, the register arrays in `lists`,
 * the dtype and the static shape when the layout has them. */
#define KILN_VM_MAX_SCALARS 4
#define KILN_VM_MAX_LISTS   2
typedef struct kiln_vm_instr_t {
  kiln_vm_opcode_t op;
  int num_x;
  int64_t x[KILN_VM_MAX_SCALARS];
  int list_size[KILN_VM_MAX_LISTS];
  int *lists[KILN_VM_MAX_LISTS];
  kiln_dtype_t dtype;
  int ndim;
  int64_t *shape;
  size_t bytes; /* alloc_tensor: its static shape's byte size, computed at load */
} kiln_vm_instr_t;

typedef struct kiln_vm_function_t {
  const char *name;
  int num_params;
  int num_registers;
  int num_instrs;
  kiln_vm_instr_t *instrs;
  int first_instr; /* the program-wide index of its first instruction */
} kiln_vm_function_t;

/* A declared input, output or constant: a tensor, or (`list`, inputs and
 * outputs) a sequence or an optional of tensors of that dtype and shape, or
 * an optional of a sequence of them (an ADT holding 0 or 1 ADTs). The
 * values are kiln_value_kind_t's. */
enum {
  KILN_VM_DECL_TENSOR = KILN_VALUE_KIND_TENSOR,
  KILN_VM_DECL_SEQUENCE = KILN_VALUE_KIND_SEQUENCE,
  KILN_VM_DECL_OPTIONAL = KILN_VALUE_KIND_OPTIONAL,
  KILN_VM_DECL_OPTIONAL_SEQUENCE = KILN_VALUE_KIND_OPTIONAL_SEQUENCE,
};
typedef struct kiln_vm_decl_t {
  const char *name;
  int list;
  kiln_dtype_t dtype;
  int ndim;
  int64_t shape[KILN_MAX_RANK]; /* -1: known at run time (inputs and outputs) */
} kiln_vm_decl_t;

typedef enum kiln_vm_value_kind_e {
  KILN_VM_VALUE_EMPTY,
  KILN_VM_VALUE_TENSOR,
  KILN_VM_VALUE_STORAGE,
  KILN_VM_VALUE_CLOSURE,
  KILN_VM_VALUE_ADT,
} kiln_vm_value_kind_t;

typedef struct kiln_vm_value_t kiln_vm_value_t;

/* A register. A tensor's dl.shape points at `shape` (kiln_vm_value_set
 * keeps it so when a value is copied). */
struct kiln_vm_value_t {
  kiln_vm_value_kind_t kind;
  kiln_dtype_t dtype; /* tensor */
  DLTensor dl;        /* tensor */
  size_t bytes;       /* tensor's or storage's */
  void *data;         /* storage */
  int function;       /* closure */
  int block;          /* storage: its block in the pool */
  unsigned taken;     /* storage: the block's `taken` count when it was taken */
  int num_captured;   /* closure */
  kiln_vm_value_t *captured;
  int tag;        /* ADT */
  int num_fields; /* ADT */
  kiln_vm_value_t *fields;
  int64_t shape[KILN_MAX_RANK];
};

/* A block of the storage pool: kept across runs, lent for one run. */
typedef struct kiln_vm_block_t {
  void *data;
  size_t size;
  int in_use;
  unsigned taken; /* how often it was lent: a stale storage value is told apart */
} kiln_vm_block_t;

typedef struct kiln_vm_frame_t {
  int function;
  int pc;
  size_t base;        /* its registers: stack[base .. base + num_registers) */
  const int *returns; /* the caller's registers the results go to */
  int num_returns;
} kiln_vm_frame_t;

/* Per-instruction hooks of a profile or debug run (NULL in a plain run). */
typedef struct kiln_vm_hooks_t {
  void *self;
  void (*before)(void *self, int instr);
  kiln_status_t (*after)(void *self, int instr, const kiln_vm_value_t *registers);
} kiln_vm_hooks_t;

/* Bounds on a run, 0 for none (the default): instructions executed, and
 * bytes of storage and registers held. The libFuzzer target runs programs
 * under them, so a program that loops forever or asks for a terabyte is an
 * error there, not a hang or a malloc beyond the fuzzer's limit. */
typedef struct kiln_vm_limits_t {
  int64_t max_steps;
  size_t max_bytes;
} kiln_vm_limits_t;

typedef struct kiln_vm_t {
  kiln_allocator_t allocator;
  kiln_arena_t arena;     /* the program, constants: freed at destroy */
  kiln_arena_t run_arena; /* closures' captured values, ADTs' fields: reset every run */
  const char *source;
  kiln_runtime_module_t *module;
  int num_kernels;
  const char **kernel_names;
  kiln_packed_fn *kernels;
  int num_constants;
  kiln_vm_decl_t *constant_decls;
  kiln_vm_value_t *constants;
  int num_inputs;
  kiln_vm_decl_t *input_decls;
  kiln_vm_value_t *inputs;
  kiln_vm_block_t *input_blocks; /* the copies set_input makes */
  unsigned char *input_set;
  int num_outputs;
  kiln_vm_decl_t *output_decls;
  kiln_vm_value_t *outputs;
  int has_run;
  int num_functions;
  kiln_vm_function_t *functions;
  int main_function;
  int num_instrs; /* over all functions */
  int max_args;
  kiln_value_t *args; /* a kernel call's packed arguments */
  int *type_codes;
  /* The storage pool and the register stack, grown as runs need. */
  int num_blocks, capacity_blocks, next_block;
  kiln_vm_block_t *blocks;
  kiln_vm_value_t *stack;
  size_t stack_capacity;
  kiln_vm_frame_t *frames;
  int capacity_frames;
  kiln_vm_limits_t limits;
  size_t held_bytes; /* the pool's blocks and the register stack */
} kiln_vm_t;

/* Reads and checks a program (vm_load.c): `root` is vm.json's JSON, the
 * kernels are looked up in `module` (retained), the constants copied from
 * `params`. Errors start with `source`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_create(kiln_allocator_t allocator, const json_t *root,
                                                  const char *source, kiln_runtime_module_t *module,
                                                  const kiln_runtime_params_t *params,
                                                  kiln_vm_t **out_vm);
void kiln_vm_destroy(kiln_vm_t *vm);
/* Whether `root` is a VM program (its "format" is "kiln-vm"). */
int kiln_vm_is_program(const json_t *root);

/* A run with optional hooks (vm.c). */
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_run_hooked(kiln_vm_t *vm, const kiln_vm_hooks_t *hooks);
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_run(kiln_vm_t *vm);
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_check_inputs(const kiln_vm_t *vm);
/* The instruction of program-wide index `index` and its function. */
const kiln_vm_instr_t *kiln_vm_instr_at(const kiln_vm_t *vm, int index, int *out_function);

/* Inputs and outputs, as the graph executor's calls. */
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_input_info(const kiln_vm_t *vm, int index,
                                                      kiln_graph_executor_tensor_info_t *out_info);
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_output_info(const kiln_vm_t *vm, int index,
                                                       kiln_graph_executor_tensor_info_t *out_info);
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_input_index(const kiln_vm_t *vm, const char *name,
                                                       int *out_index);
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_set_input(kiln_vm_t *vm, int index,
                                                     const DLTensor *tensor, int zero_copy);
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_get_output(const kiln_vm_t *vm, int index,
                                                      const DLTensor **out_view);
/* A sequence or optional input or output (kiln_graph_executor_set_input_list). */
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_set_input_list(kiln_vm_t *vm, int index, int count,
                                                          const DLTensor *const *elements);
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_get_output_list(const kiln_vm_t *vm, int index,
                                                           int *out_count);
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_get_output_element(const kiln_vm_t *vm, int index,
                                                              int element,
                                                              const DLTensor **out_view);

/* vm_profile.c */
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_profile(kiln_vm_t *vm, int runs,
                                                   kiln_graph_profile_t **out_profile);
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_run_debug(kiln_vm_t *vm, const char *folder);
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_disassemble(const kiln_vm_t *vm,
                                                       kiln_allocator_t allocator, char **out_text);

#endif /* KILN_RUNTIME_VM_H_ */
