/*
 * Instruction types and their registry (OneFlow's InstructionType and
 * RegisterInstructionType).
 *
 * An instruction type is registered under a name ("cpu.call_kernel") and is
 * tied to the stream type named by its `stream_type` field, as OneFlow's
 * `using stream_type = vm::CpuStreamType` does: registering resolves that
 * name in the stream-type registry, and an instruction of the type always
 * runs on a stream of that type. A front-sequential type (the barrier) runs
 * only once everything queued before it is done, and nothing queued after it
 * starts before it has run. The VM caches each name's resolution (type and
 * stream) the first time it is looked up (kiln_eager_vm_resolve).
 */
#ifndef KILN_EAGER_INSTRUCTION_TYPE_H_
#define KILN_EAGER_INSTRUCTION_TYPE_H_

#include <stdbool.h>

#include "eager/stream_type.h"

typedef struct kiln_eager_instruction_type_t {
  const char *name;             /* "cpu.call_kernel" */
  const char *stream_type_name; /* the stream type it runs on: "cpu.compute" */
  bool front_sequential;        /* a barrier */
  /* The work; a failure marks the tensors the instruction writes. */
  kiln_status_t (*compute)(kiln_eager_instruction_t *instruction);
} kiln_eager_instruction_type_t;

/* The built-in instruction types (instructions.c). */
extern const kiln_eager_instruction_type_t kiln_eager_instruction_type_call_kernel;
extern const kiln_eager_instruction_type_t kiln_eager_instruction_type_copy;
extern const kiln_eager_instruction_type_t kiln_eager_instruction_type_barrier;

/* A registered type: the instruction type and the stream type it is tied
 * to (OneFlow's InstrTypeId). */
typedef struct kiln_eager_instruction_type_id_t {
  const kiln_eager_instruction_type_t *type;
  const kiln_eager_stream_type_t *stream_type;
} kiln_eager_instruction_type_id_t;

#define KILN_EAGER_MAX_INSTRUCTION_TYPES 16

typedef struct kiln_eager_instruction_type_registry_t {
  int count;
  kiln_eager_instruction_type_id_t ids[KILN_EAGER_MAX_INSTRUCTION_TYPES];
} kiln_eager_instruction_type_registry_t;

void kiln_eager_instruction_type_registry_initialize(
    kiln_eager_instruction_type_registry_t *registry);
/* Ties `type` to its stream type in `streams`: NOT_FOUND naming both when
 * that stream type is not registered, ALREADY_EXISTS for a taken name. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_instruction_type_register(
    kiln_eager_instruction_type_registry_t *registry,
    const kiln_eager_stream_type_registry_t *streams, const kiln_eager_instruction_type_t *type);
/* NOT_FOUND naming the instruction type. */
KILN_MUST_USE_RESULT kiln_status_t
kiln_eager_instruction_type_find(const kiln_eager_instruction_type_registry_t *registry,
                                 const char *name, const kiln_eager_instruction_type_id_t **out_id);
/* Registers "cpu.call_kernel", "cpu.copy" and "barrier". */
KILN_MUST_USE_RESULT kiln_status_t
kiln_eager_instruction_types_register_builtin(kiln_eager_instruction_type_registry_t *registry,
                                              const kiln_eager_stream_type_registry_t *streams);

#endif /* KILN_EAGER_INSTRUCTION_TYPE_H_ */
