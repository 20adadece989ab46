/*
 * The VM's profile, debug dump and disassembly (docs/vm.md).
 *
 * Both runs are ordinary runs with per-instruction hooks (vm.c): the
 * profile reads the monotonic clock around every instruction and adds the
 * time of each kernel call and copy to its instruction's slot for that run
 * (a call in a loop body adds up every iteration), then keeps each slot's
 * median over the runs, into the graph executor's profile struct, so
 * kiln_graph_profile_format prints either executor's profile. A row's
 * `node` is the instruction's program-wide index (the disassembly's), its
 * name the kernel's. The debug run writes the inputs, then each kernel
 * call's outputs as soon as it returns, as .npy files. The disassembly
 * prints every function's instructions with their operands named (kernels
 * and functions by name, jumps with their target), walking each opcode's
 * layout string as the loader does.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/strbuf.h"
#include "kiln/npy.h"
#include "runtime/extern_kernel.h"
#include "runtime/graph_executor.h"
#include "runtime/shape_func.h"

static int is_timed(const kiln_vm_instr_t *instr) {
  return instr->op == KILN_VM_OP_INVOKE_PACKED || instr->op == KILN_VM_OP_COPY;
}

/* ---- profile ---- */

typedef struct profiler_t {
  kiln_vm_t *vm;
  int runs, run;
  int *slot_of;   /* program-wide instruction -> slot, or -1 */
  double *times;  /* times[slot * runs + run] */
  int64_t *calls; /* per slot, in the last run */
  double start;
} profiler_t;

static void profile_before(void *self, int instr) {
  (void)instr;
  ((profiler_t *)self)->start = kiln_gx_now_milliseconds();
}

static kiln_status_t profile_after(void *self, int instr, const kiln_vm_value_t *registers) {
  (void)registers;
  profiler_t *p = self;
  double elapsed = kiln_gx_now_milliseconds() - p->start;
  int slot = p->slot_of[instr];
  if (slot >= 0) {
    p->times[(size_t)slot * (size_t)p->runs + (size_t)p->run] += elapsed;
    p->calls[slot] += p->run == p->runs - 1;
  }
  return KILN_OK;
}

static void profile_row(const kiln_vm_t *vm, int index, const profiler_t *p, int slot,
                        kiln_graph_profile_t *profile) {
  int function = 0;
  const kiln_vm_instr_t *instr = kiln_vm_instr_at(vm, index, &function);
  const char *name = instr->op == KILN_VM_OP_COPY ? "__copy" : vm->kernel_names[instr->x[0]];
  double ms = kiln_gx_median(p->times + (size_t)slot * (size_t)p->runs, p->runs);
  int64_t flops = instr->op == KILN_VM_OP_INVOKE_PACKED ? instr->x[1] * p->calls[slot] : 0;
  profile->nodes[slot] = (kiln_graph_profile_node_t){
      index, name, name, ms, 0, flops, flops > 0 && ms > 0 ? (double)flops / (ms * 1e6) : 0};
  profile->total_milliseconds += ms;
  profile->total_flops += flops;
}

static void summarize(const kiln_vm_t *vm, const profiler_t *p, double *run_times,
                      kiln_graph_profile_t *profile) {
  for (int i = 0; i < vm->num_instrs; ++i) {
    if (p->slot_of[i] >= 0) {
      profile_row(vm, i, p, p->slot_of[i], profile);
    }
  }
  for (int k = 0; k < profile->num_nodes; ++k) {
    double total = profile->total_milliseconds;
    profile->nodes[k].share = total > 0 ? profile->nodes[k].milliseconds / total : 0;
  }
  profile->run_milliseconds = kiln_gx_median(run_times, p->runs);
}

static kiln_status_t profile_runs(kiln_vm_t *vm, profiler_t *p, double *run_times) {
  kiln_vm_hooks_t hooks = {p, profile_before, profile_after};
  for (p->run = 0; p->run < p->runs; ++p->run) {
    double start = kiln_gx_now_milliseconds();
    KILN_RETURN_IF_ERROR(kiln_vm_run_hooked(vm, &hooks));
    run_times[p->run] = kiln_gx_now_milliseconds() - start;
  }
  return KILN_OK;
}

/* The slots: one per kernel call or copy instruction, in program order. */
static int assign_slots(const kiln_vm_t *vm, int *slot_of) {
  int count = 0, function = 0;
  for (int i = 0; i < vm->num_instrs; ++i) {
    slot_of[i] = is_timed(kiln_vm_instr_at(vm, i, &function)) ? count++ : -1;
  }
  return count;
}

static kiln_status_t profile_with(kiln_vm_t *vm, profiler_t *p, kiln_graph_profile_t *profile) {
  kiln_allocator_t allocator = vm->allocator;
  size_t slots = (size_t)profile->num_nodes + 1, runs = (size_t)p->runs;
  double *run_times = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(allocator, slots, sizeof(*profile->nodes),
                                                   (void **)&profile->nodes));
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_zeroed(allocator, slots * runs * sizeof(double), (void **)&p->times));
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_zeroed(allocator, slots * sizeof(int64_t), (void **)&p->calls));
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(allocator, runs, sizeof(double), (void **)&run_times));
  kiln_status_t status = profile_runs(vm, p, run_times);
  if (!status) {
    summarize(vm, p, run_times, profile);
  }
  kiln_allocator_free(allocator, run_times);
  return status;
}

kiln_status_t kiln_vm_profile(kiln_vm_t *vm, int runs, kiln_graph_profile_t **out_profile) {
  *out_profile = NULL;
  if (runs < 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: a profile needs at least one run, not %d", vm->source,
                       runs);
  }
  KILN_RETURN_IF_ERROR(kiln_vm_check_inputs(vm));
  kiln_allocator_t allocator = vm->allocator;
  profiler_t p = {vm, runs, 0, NULL, NULL, NULL, 0};
  kiln_graph_profile_t *profile = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(allocator, (size_t)vm->num_instrs, sizeof(int),
                                                   (void **)&p.slot_of));
  kiln_status_t status =
      kiln_allocator_malloc_zeroed(allocator, sizeof(*profile), (void **)&profile);
  if (!status) {
    *profile = (kiln_graph_profile_t){allocator, runs, assign_slots(vm, p.slot_of), NULL, 0, 0, 0};
    status = profile_with(vm, &p, profile);
  }
  kiln_allocator_free(allocator, p.slot_of);
  kiln_allocator_free(allocator, p.times);
  kiln_allocator_free(allocator, p.calls);
  if (status) {
    kiln_graph_profile_destroy(profile);
    return status;
  }
  *out_profile = profile;
  return KILN_OK;
}

/* ---- debug ---- */

typedef struct dumper_t {
  kiln_vm_t *vm;
  const char *folder;
} dumper_t;

/* folder/<prefix>_<name>[_<output>].npy, the name made safe for a path. */
static kiln_status_t dump_tensor(const dumper_t *d, const char *prefix, const char *name,
                                 int output, const kiln_vm_value_t *value) {
  kiln_allocator_t allocator = d->vm->allocator;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, allocator);
  kiln_status_t status = kiln_strbuf_appendf(&sb, "%s/%s_", d->folder, prefix);
  if (!status) {
    status = kiln_gx_append_safe_name(&sb, name);
  }
  if (!status && output >= 0) {
    status = kiln_strbuf_appendf(&sb, "_%d", output);
  }
  if (!status) {
    status = kiln_strbuf_append(&sb, ".npy");
  }
  kiln_tensor_t *tensor = NULL;
  if (!status) {
    status = kiln_tensor_create_copy(allocator, value->dtype, value->dl.ndim, value->shape,
                                     value->dl.data, value->bytes, &tensor);
  }
  if (!status) {
    status = kiln_npy_write_file(allocator, tensor, kiln_strbuf_c_str(&sb));
  }
  kiln_tensor_release(tensor);
  kiln_strbuf_deinitialize(&sb);
  return status;
}

static kiln_status_t dump_after(void *self, int index, const kiln_vm_value_t *registers) {
  const dumper_t *d = self;
  int function = 0;
  const kiln_vm_instr_t *instr = kiln_vm_instr_at(d->vm, index, &function);
  char prefix[32];
  snprintf(prefix, sizeof(prefix), "%d", index);
  if (instr->op == KILN_VM_OP_COPY) {
    return dump_tensor(d, prefix, "copy", -1, &registers[instr->x[0]]);
  }
  if (instr->op != KILN_VM_OP_INVOKE_PACKED) {
    return KILN_OK;
  }
  int outputs = instr->list_size[1];
  for (int o = 0; o < outputs; ++o) {
    KILN_RETURN_IF_ERROR(dump_tensor(d, prefix, d->vm->kernel_names[instr->x[0]],
                                     outputs > 1 ? o : -1, &registers[instr->lists[1][o]]));
  }
  return KILN_OK;
}

kiln_status_t kiln_vm_run_debug(kiln_vm_t *vm, const char *folder) {
  KILN_RETURN_IF_ERROR(kiln_vm_check_inputs(vm));
  if (!folder || (mkdir(folder, 0777) != 0 && errno != EEXIST)) {
    return KILN_STATUS(IO_ERROR, "%s: cannot make the debug folder %s: %s", vm->source,
                       folder ? folder : "(null)", folder ? strerror(errno) : "no path");
  }
  dumper_t d = {vm, folder};
  for (int i = 0; i < vm->num_inputs; ++i) {
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "input%d", i);
    KILN_RETURN_IF_ERROR(dump_tensor(&d, prefix, vm->input_decls[i].name, -1, &vm->inputs[i]));
  }
  kiln_vm_hooks_t hooks = {&d, NULL, dump_after};
  return kiln_vm_run_hooked(vm, &hooks);
}

/* ---- disassembly ---- */

static kiln_status_t append_list(kiln_strbuf_t *sb, const int *regs, int count) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "["));
  for (int i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%sr%d", i > 0 ? ", " : "", regs[i]));
  }
  return kiln_strbuf_append(sb, "]");
}

/* One scalar operand, named by its layout letter. */
static kiln_status_t append_scalar(const kiln_vm_t *vm, kiln_strbuf_t *sb, char letter,
                                   int64_t value, int index) {
  switch (letter) {
  case 'r':
    return kiln_strbuf_appendf(sb, "r%lld", (long long)value);
  case 'k':
    return kiln_strbuf_appendf(sb, "%s", vm->kernel_names[value]);
  case 'c':
    return kiln_strbuf_appendf(sb, "const%lld(%s)", (long long)value,
                               vm->constant_decls[value].name);
  case 'f':
    return kiln_strbuf_appendf(sb, "@%s", vm->functions[value].name);
  case 'n':
    return kiln_strbuf_append(sb, kiln_shape_func_at((int)value)->name);
  case 'e':
    return kiln_strbuf_append(sb, kiln_extern_kernel_at((int)value)->name);
  case 'j':
    return kiln_strbuf_appendf(sb, "%+lld(->%lld)", (long long)value, (long long)(index + value));
  default:
    return kiln_strbuf_appendf(sb, "%lld", (long long)value);
  }
}

static kiln_status_t append_instr(const kiln_vm_t *vm, kiln_strbuf_t *sb,
                                  const kiln_vm_function_t *f, int index) {
  const kiln_vm_instr_t *in = &f->instrs[index];
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%6d  %4d  %-19s", f->first_instr + index, index,
                                           kiln_vm_opcode_name(in->op)));
  int x = 0, list = 0;
  for (const char *c = kiln_vm_opcode_layout(in->op); *c; ++c) {
    if (*c == '?' || (*c == 'a' && in->ndim == 0) ||
        (x >= in->num_x && *c != 'R' && *c != 'd' && *c != 's' && *c != 'a') ||
        (*c == 's' && !in->shape)) {
      continue;
    }
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, " "));
    if (*c == 'R') {
      KILN_RETURN_IF_ERROR(append_list(sb, in->lists[list], in->list_size[list]));
      ++list;
    } else if (*c == 'd') {
      KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, kiln_dtype_name(in->dtype)));
    } else if (*c == 's' || *c == 'a') {
      char text[KILN_SHAPE_TEXT_CAPACITY];
      kiln_shape_format(in->ndim, in->shape, text, sizeof(text));
      KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, text));
    } else {
      KILN_RETURN_IF_ERROR(append_scalar(vm, sb, *c, in->x[x++], index));
    }
  }
  return kiln_strbuf_append(sb, "\n");
}

static kiln_status_t disassemble_into(const kiln_vm_t *vm, kiln_strbuf_t *sb) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(
      sb, "%s: %d functions, %d kernels, %d constants, %d inputs, %d outputs\n", vm->source,
      vm->num_functions, vm->num_kernels, vm->num_constants, vm->num_inputs, vm->num_outputs));
  for (int f = 0; f < vm->num_functions; ++f) {
    const kiln_vm_function_t *fn = &vm->functions[f];
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "\nfunction @%s (%d params, %d registers)\n",
                                             fn->name, fn->num_params, fn->num_registers));
    for (int i = 0; i < fn->num_instrs; ++i) {
      KILN_RETURN_IF_ERROR(append_instr(vm, sb, fn, i));
    }
  }
  return KILN_OK;
}

kiln_status_t kiln_vm_disassemble(const kiln_vm_t *vm, kiln_allocator_t allocator,
                                  char **out_text) {
  *out_text = NULL;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, allocator);
  kiln_status_t status = disassemble_into(vm, &sb);
  if (!status) {
    status = kiln_strbuf_take(&sb, out_text);
  }
  kiln_strbuf_deinitialize(&sb);
  return status;
}
