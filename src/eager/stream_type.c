/*
 * The stream-type registry (stream_type.h) and the three built-in stream
 * types. A registry is a small array searched by name: lookups happen once
 * per name and VM (the VM caches them), never per instruction.
 */
#include "eager/stream_type.h"

#include <string.h>

#include "eager/vm.h"

const kiln_eager_stream_type_t kiln_eager_stream_type_cpu_compute = {"cpu.compute", false,
                                                                     kiln_eager_vm_run_instruction};
const kiln_eager_stream_type_t kiln_eager_stream_type_cpu_copy = {"cpu.copy", false,
                                                                  kiln_eager_vm_run_instruction};
const kiln_eager_stream_type_t kiln_eager_stream_type_control = {"control", true,
                                                                 kiln_eager_vm_run_instruction};

void kiln_eager_stream_type_registry_initialize(kiln_eager_stream_type_registry_t *registry) {
  memset(registry, 0, sizeof(*registry));
}

static const kiln_eager_stream_type_t *find(const kiln_eager_stream_type_registry_t *registry,
                                            const char *name) {
  for (int i = 0; i < registry->count; ++i) {
    if (strcmp(registry->types[i]->name, name) == 0) {
      return registry->types[i];
    }
  }
  return NULL;
}

kiln_status_t kiln_eager_stream_type_register(kiln_eager_stream_type_registry_t *registry,
                                              const kiln_eager_stream_type_t *type) {
  if (find(registry, type->name)) {
    return KILN_STATUS(ALREADY_EXISTS, "stream type \"%s\" is already registered", type->name);
  }
  if (registry->count == KILN_EAGER_MAX_STREAM_TYPES) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "stream type \"%s\": the registry holds at most %d",
                       type->name, KILN_EAGER_MAX_STREAM_TYPES);
  }
  registry->types[registry->count++] = type;
  return KILN_OK;
}

kiln_status_t kiln_eager_stream_type_find(const kiln_eager_stream_type_registry_t *registry,
                                          const char *name,
                                          const kiln_eager_stream_type_t **out_type) {
  *out_type = find(registry, name);
  if (!*out_type) {
    return KILN_STATUS(NOT_FOUND, "no stream type named \"%s\"", name);
  }
  return KILN_OK;
}

kiln_status_t
kiln_eager_stream_types_register_builtin(kiln_eager_stream_type_registry_t *registry) {
  KILN_RETURN_IF_ERROR(
      kiln_eager_stream_type_register(registry, &kiln_eager_stream_type_cpu_compute));
  KILN_RETURN_IF_ERROR(kiln_eager_stream_type_register(registry, &kiln_eager_stream_type_cpu_copy));
  return kiln_eager_stream_type_register(registry, &kiln_eager_stream_type_control);
}
