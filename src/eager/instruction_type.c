/*
 * The instruction-type registry (instruction_type.h): RegisterInstrTypeId
 * in C. Registering resolves the type's stream-type name once, so an entry
 * carries both halves of OneFlow's InstrTypeId.
 */
#include "eager/instruction_type.h"

#include <string.h>

void kiln_eager_instruction_type_registry_initialize(
    kiln_eager_instruction_type_registry_t *registry) {
  memset(registry, 0, sizeof(*registry));
}

static const kiln_eager_instruction_type_id_t *
find(const kiln_eager_instruction_type_registry_t *registry, const char *name) {
  for (int i = 0; i < registry->count; ++i) {
    if (strcmp(registry->ids[i].type->name, name) == 0) {
      return &registry->ids[i];
    }
  }
  return NULL;
}

kiln_status_t kiln_eager_instruction_type_register(kiln_eager_instruction_type_registry_t *registry,
                                                   const kiln_eager_stream_type_registry_t *streams,
                                                   const kiln_eager_instruction_type_t *type) {
  if (find(registry, type->name)) {
    return KILN_STATUS(ALREADY_EXISTS, "instruction type \"%s\" is already registered", type->name);
  }
  if (registry->count == KILN_EAGER_MAX_INSTRUCTION_TYPES) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "instruction type \"%s\": the registry holds at most %d",
                       type->name, KILN_EAGER_MAX_INSTRUCTION_TYPES);
  }
  const kiln_eager_stream_type_t *stream_type = NULL;
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_eager_stream_type_find(streams, type->stream_type_name, &stream_type),
      "instruction type \"%s\"", type->name);
  registry->ids[registry->count].type = type;
  registry->ids[registry->count].stream_type = stream_type;
  registry->count++;
  return KILN_OK;
}

kiln_status_t
kiln_eager_instruction_type_find(const kiln_eager_instruction_type_registry_t *registry,
                                 const char *name,
                                 const kiln_eager_instruction_type_id_t **out_id) {
  *out_id = find(registry, name);
  if (!*out_id) {
    return KILN_STATUS(NOT_FOUND, "no instruction type named \"%s\"", name);
  }
  return KILN_OK;
}

kiln_status_t
kiln_eager_instruction_types_register_builtin(kiln_eager_instruction_type_registry_t *registry,
                                              const kiln_eager_stream_type_registry_t *streams) {
  KILN_RETURN_IF_ERROR(kiln_eager_instruction_type_register(
      registry, streams, &kiln_eager_instruction_type_call_kernel));
  KILN_RETURN_IF_ERROR(
      kiln_eager_instruction_type_register(registry, streams, &kiln_eager_instruction_type_copy));
  return kiln_eager_instruction_type_register(registry, streams,
                                              &kiln_eager_instruction_type_barrier);
}
