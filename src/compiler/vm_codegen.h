/*
 * VM code generation (vm_codegen.c, docs/vm.md): the bytecode of a
 * compiled static model from the plan its graph.json holds, and the rule
 * that chooses between the graph executor and the VM.
 */
#ifndef KILN_COMPILER_VM_CODEGEN_H_
#define KILN_COMPILER_VM_CODEGEN_H_

#include <stdbool.h>

#include "base/json.h"
#include "compiler/graph_codegen.h"
#include "ir/expr.h"
#include "kiln/runtime.h"

/* `requested` when it names an executor; for KILN_EXECUTOR_AUTO the VM when
 * `module` has dynamic shapes or control flow, else the graph executor. */
kiln_executor_kind_t kiln_vm_codegen_choose(const kiln_module_t *module,
                                            kiln_executor_kind_t requested);

/* vm.json's text (the caller frees *out_vm_json with `allocator`) for the
 * model `graph_json` describes, whose null nodes named in `param_names` are
 * params (the constant pool) and the rest inputs. UNIMPLEMENTED for a plan
 * that puts an input or param in storage a kernel writes. */
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_codegen(kiln_allocator_t allocator,
                                                   const char *graph_json, int num_params,
                                                   const char *const *param_names,
                                                   char **out_vm_json);

/* Whether a parameter of `module`'s main has a symbolic dim (the module
 * then needs the VM: kiln_vm_codegen_choose takes it for AUTO). */
bool kiln_vm_codegen_is_symbolic(const kiln_module_t *module);

/* Whether `module` has a dim known only at run time: in main's parameters
 * (kiln_vm_codegen_is_symbolic) or in any value's type (a dyn operator's
 * output). Types must be inferred. Such a module compiles for the VM only. */
bool kiln_vm_codegen_has_dynamic_shapes(const kiln_module_t *module);

/* vm.json's text for a module with symbolic dims (vm_symbolic.c), from
 * `graph` (kiln_graph_codegen with `plan`, its kernels lowered over
 * run-time extents): shapes are computed at run time by shape kernels it
 * adds to graph's kernels (in `arena`); a value the plan places (its dims
 * static or bounded: plan_memory.h) is made at its run-time shape in its
 * plan storage, allocated once at the top at the plan's size; any other
 * value's storage is allocated per run and freed after its last use (all
 * of them when `plan` is NULL); a kernel check_inputs checks the inputs'
 * dims against each other and their bounds first. UNIMPLEMENTED for an
 * output dim no input's shape gives. */
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_codegen_symbolic(
    kiln_allocator_t allocator, kiln_arena_t *arena, const kiln_module_t *module,
    kiln_graph_codegen_t *graph, const kiln_memory_plan_t *plan, char **out_vm_json);

/* What kiln_vm_codegen_control needs from the compiler's driver: `compile`
 * compiles `module` (its main a dataflow function, typed) with the passes
 * and the kernels of a symbolic-dims build into vm.json's text (made with
 * the allocator given), every kernel's and constant's name in the driver's
 * tables starting with `prefix` (the text's own names do not; the caller
 * prefixes them); `add_constant` takes `value` into the constant pool (a
 * reference of its own) and names it. */
typedef struct kiln_vm_stage_compiler_t {
  void *context;
  kiln_status_t (*compile)(void *context, kiln_module_t *module, const char *prefix,
                           char **out_vm_json);
  kiln_status_t (*add_constant)(void *context, kiln_tensor_t *value, const char **out_name);
} kiln_vm_stage_compiler_t;

/* vm.json's text for a module with control flow (vm_control.c, docs/vm.md
 * "Compiling control flow"), typed: each function (main, each branch and
 * loop body) a VM function whose dataflow between control calls is
 * compiled by `stages`. UNIMPLEMENTED naming what is not compiled yet. */
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_codegen_control(kiln_allocator_t allocator,
                                                           kiln_module_t *module,
                                                           const kiln_vm_stage_compiler_t *stages,
                                                           char **out_vm_json);

/* Helpers the static and the symbolic VM code generators share. */
/* Appends `value` (NULL: out of memory) to a JSON array. */
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_codegen_append(json_t *array, json_t *value);
/* A JSON array of `count` ints; NULL when out of memory. */
json_t *kiln_vm_codegen_ints_json(const int *values, int count);
/* The index of kernel `name` in the `kernels` table, appended when new. */
KILN_MUST_USE_RESULT kiln_status_t kiln_vm_codegen_kernel_index(json_t *kernels, const char *name,
                                                                int *out_index);

#endif /* KILN_COMPILER_VM_CODEGEN_H_ */
