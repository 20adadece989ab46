/*
 * Stream types and their registry (OneFlow's StreamType).
 *
 * A stream type says where the instructions of its streams run: on a worker
 * thread of their own (the compute stream, the copy stream) or on the
 * scheduler thread itself (the control stream, whose instructions are
 * barriers and other bookkeeping). Its compute runs one instruction:
 * stream-type compute -> instruction-type compute -> kernel, the chain of
 * OneFlow's eager VM. Stream types are an open set: a struct of function pointers,
 * registered by name in a registry the context owns; the VM makes one
 * stream per registered type.
 */
#ifndef KILN_EAGER_STREAM_TYPE_H_
#define KILN_EAGER_STREAM_TYPE_H_

#include <stdbool.h>

#include "kiln/status.h"

typedef struct kiln_eager_instruction_t kiln_eager_instruction_t;

typedef struct kiln_eager_stream_type_t kiln_eager_stream_type_t;
struct kiln_eager_stream_type_t {
  const char *name;         /* "cpu.compute" */
  bool on_scheduler_thread; /* a control stream: no worker thread */
  /* Runs `instruction` (its instruction type's compute) and records its status. */
  void (*compute)(const kiln_eager_stream_type_t *self, kiln_eager_instruction_t *instruction);
};

/* The built-in stream types. */
extern const kiln_eager_stream_type_t kiln_eager_stream_type_cpu_compute; /* "cpu.compute" */
extern const kiln_eager_stream_type_t kiln_eager_stream_type_cpu_copy;    /* "cpu.copy" */
extern const kiln_eager_stream_type_t kiln_eager_stream_type_control;     /* "control" */

/* The most stream types one registry holds. */
#define KILN_EAGER_MAX_STREAM_TYPES 8

typedef struct kiln_eager_stream_type_registry_t {
  int count;
  const kiln_eager_stream_type_t *types[KILN_EAGER_MAX_STREAM_TYPES];
} kiln_eager_stream_type_registry_t;

void kiln_eager_stream_type_registry_initialize(kiln_eager_stream_type_registry_t *registry);
/* ALREADY_EXISTS naming a taken name; RESOURCE_EXHAUSTED when full. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_stream_type_register(
    kiln_eager_stream_type_registry_t *registry, const kiln_eager_stream_type_t *type);
/* NOT_FOUND naming the stream type. */
KILN_MUST_USE_RESULT kiln_status_t
kiln_eager_stream_type_find(const kiln_eager_stream_type_registry_t *registry, const char *name,
                            const kiln_eager_stream_type_t **out_type);
/* Registers the three built-in stream types. */
KILN_MUST_USE_RESULT kiln_status_t
kiln_eager_stream_types_register_builtin(kiln_eager_stream_type_registry_t *registry);

#endif /* KILN_EAGER_STREAM_TYPE_H_ */
