/*
 * The importer's entry points; see onnx_import.h.
 *
 * A file is read whole and handed to the buffer importer with its folder
 * (for external data). The buffer importer unpacks the ModelProto with the
 * caller's allocator, checks what makes it a model kiln can import (a graph;
 * an opset import of the default domain in 1..17, or of
 * ai.onnx.preview.training at 1, or both), makes the module and the
 * importer state, runs the graph driver (onnx_graph.c), and frees the
 * message. On any error the module is destroyed and the message starts with
 * the source name, so every failure says which file it is about.
 */
#include "frontend/onnx/onnx_import.h"

#include <string.h>

#include "base/file.h"
#include "frontend/onnx/onnx_importer.h"
#include "frontend/onnx/onnx_proto.h"
#include "frontend/onnx/onnx_tensor.h"

/* The slot of `domain`'s opset among those kiln imports, or NULL. */
static int64_t *kiln_onnx_opset_slot(kiln_onnx_importer_t *importer, const char *domain) {
  if (kiln_onnx_domain_is_default(domain)) {
    return &importer->opset;
  }
  return strcmp(domain, KILN_ONNX_TRAINING_DOMAIN) == 0 ? &importer->training_opset : NULL;
}

/* Records the opset of each domain kiln imports (each at most once); 0 in a
 * slot means the domain is not imported. */
static kiln_status_t kiln_onnx_model_read_opsets(const Onnx__ModelProto *model,
                                                 kiln_onnx_importer_t *importer) {
  for (size_t i = 0; i < model->n_opset_import; ++i) {
    const Onnx__OperatorSetIdProto *entry = model->opset_import[i];
    const char *domain = entry->domain ? entry->domain : "";
    int64_t *slot = kiln_onnx_opset_slot(importer, domain);
    if (!slot) {
      continue;
    }
    if (*slot >= 0) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "the model imports the %s domain twice (opsets %lld and %lld)",
                         kiln_onnx_domain_is_default(domain) ? "default" : domain, (long long)*slot,
                         (long long)entry->version);
    }
    *slot = entry->version < 0 ? 0 : entry->version;
  }
  return KILN_OK;
}

/* The opsets of the default domain and of ai.onnx.preview.training, checked
 * against the supported ranges; a model must import at least one of them. */
static kiln_status_t kiln_onnx_model_opsets(const Onnx__ModelProto *model,
                                            kiln_onnx_importer_t *importer) {
  importer->opset = importer->training_opset = -1;
  KILN_RETURN_IF_ERROR(kiln_onnx_model_read_opsets(model, importer));
  int64_t opset = importer->opset, training = importer->training_opset;
  if (opset < 0 && training < 0 && model->n_opset_import > 0) {
    const Onnx__OperatorSetIdProto *other = model->opset_import[0];
    return KILN_STATUS(
        UNIMPLEMENTED,
        "the model imports no opset of the default ONNX domain (it imports %s "
        "version %lld; kiln imports only the default domain and " KILN_ONNX_TRAINING_DOMAIN ")",
        other->domain ? other->domain : "", (long long)other->version);
  }
  if (opset < 0 && training < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "the model imports no opset (opset_import is empty)");
  }
  if (opset >= 0 && (opset < KILN_ONNX_OPSET_MIN || opset > KILN_ONNX_OPSET_MAX)) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "the model uses opset %lld of the default domain; kiln imports opsets %d "
                       "to %d",
                       (long long)opset, KILN_ONNX_OPSET_MIN, KILN_ONNX_OPSET_MAX);
  }
  if (training >= 0 && training != 1) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "the model uses opset %lld of " KILN_ONNX_TRAINING_DOMAIN
                       "; kiln imports opset 1",
                       (long long)training);
  }
  importer->opset = opset < 0 ? 0 : opset;
  importer->training_opset = training < 0 ? 0 : training;
  return KILN_OK;
}

static void kiln_onnx_importer_deinitialize(kiln_onnx_importer_t *importer) {
  kiln_hashmap_deinitialize(&importer->values);
  kiln_hashmap_deinitialize(&importer->param_names);
  kiln_hashmap_deinitialize(&importer->param_values);
  kiln_array_deinitialize(&importer->params);
}

static kiln_status_t kiln_onnx_import_model(const Onnx__ModelProto *model, const char *model_dir,
                                            const kiln_onnx_import_options_t *options,
                                            kiln_allocator_t allocator, kiln_module_t *module) {
  if (!model->graph) {
    return KILN_STATUS(INVALID_ARGUMENT, "the protobuf has no graph: it is not an ONNX model");
  }
  kiln_onnx_importer_t importer = {.allocator = allocator,
                                   .module = module,
                                   .arena = kiln_module_arena(module),
                                   .model_dir = model_dir,
                                   .options = options};
  KILN_RETURN_IF_ERROR(kiln_onnx_model_opsets(model, &importer));
  kiln_hashmap_initialize(&importer.values, allocator, KILN_HASHMAP_KEY_STRING);
  kiln_hashmap_initialize(&importer.param_names, allocator, KILN_HASHMAP_KEY_STRING);
  kiln_hashmap_initialize(&importer.param_values, allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_array_initialize(&importer.params, allocator, sizeof(kiln_var_t *));
  kiln_status_t status = kiln_onnx_import_graph(&importer, model);
  kiln_onnx_importer_deinitialize(&importer);
  return status;
}

static kiln_status_t kiln_onnx_import_unpacked(const void *bytes, size_t size,
                                               const char *model_dir,
                                               const kiln_onnx_import_options_t *options,
                                               kiln_allocator_t allocator,
                                               kiln_module_t **out_module) {
  kiln_onnx_proto_allocator_t adapter;
  kiln_onnx_proto_allocator_initialize(&adapter, allocator);
  ProtobufCMessage *message = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_proto_unpack(&adapter, &onnx__model_proto__descriptor,
                                              "an ONNX ModelProto", bytes, size, &message));
  kiln_module_t *module = NULL;
  kiln_status_t status = kiln_module_create(allocator, &module);
  if (!status) {
    status = kiln_onnx_import_model((const Onnx__ModelProto *)message, model_dir, options,
                                    allocator, module);
  }
  protobuf_c_message_free_unpacked(message, &adapter.base);
  if (status) {
    kiln_module_destroy(module);
    return status;
  }
  *out_module = module;
  return KILN_OK;
}

kiln_status_t kiln_onnx_import_buffer(const char *source_name, const void *bytes, size_t size,
                                      const char *model_dir,
                                      const kiln_onnx_import_options_t *options,
                                      kiln_allocator_t allocator, kiln_module_t **out_module) {
  *out_module = NULL;
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_onnx_import_unpacked(bytes, size, model_dir, options, allocator, out_module), "%s",
      source_name ? source_name : "<buffer>");
  return KILN_OK;
}

/* Reads `path` whole and its folder; the caller frees both with `allocator`. */
static kiln_status_t kiln_onnx_read(const char *path, kiln_allocator_t allocator, void **out_data,
                                    size_t *out_size, char **out_dir) {
  *out_data = NULL;
  *out_dir = NULL;
  KILN_RETURN_IF_ERROR(kiln_file_read_all(allocator, path, out_data, out_size));
  kiln_status_t status = kiln_path_dirname(allocator, path, out_dir);
  if (status) {
    kiln_allocator_free(allocator, *out_data);
    *out_data = NULL;
  }
  return status;
}

kiln_status_t kiln_onnx_import_file(const char *path, const kiln_onnx_import_options_t *options,
                                    kiln_allocator_t allocator, kiln_module_t **out_module) {
  *out_module = NULL;
  void *data = NULL;
  size_t size = 0;
  char *dir = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_read(path, allocator, &data, &size, &dir));
  kiln_status_t status =
      kiln_onnx_import_buffer(path, data, size, dir, options, allocator, out_module);
  kiln_allocator_free(allocator, dir);
  kiln_allocator_free(allocator, data);
  return status;
}

/* ---- tensors ---- */

static kiln_status_t kiln_onnx_tensor_unpacked(const void *bytes, size_t size,
                                               const char *model_dir, kiln_allocator_t allocator,
                                               kiln_tensor_t **out_tensor) {
  kiln_onnx_proto_allocator_t adapter;
  kiln_onnx_proto_allocator_initialize(&adapter, allocator);
  ProtobufCMessage *message = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_proto_unpack(&adapter, &onnx__tensor_proto__descriptor,
                                              "an ONNX TensorProto", bytes, size, &message));
  kiln_status_t status = kiln_onnx_tensor_from_proto((const Onnx__TensorProto *)message, model_dir,
                                                     allocator, out_tensor);
  protobuf_c_message_free_unpacked(message, &adapter.base);
  return status;
}

kiln_status_t kiln_onnx_tensor_parse(const char *source_name, const void *bytes, size_t size,
                                     const char *model_dir, kiln_allocator_t allocator,
                                     kiln_tensor_t **out_tensor) {
  *out_tensor = NULL;
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_onnx_tensor_unpacked(bytes, size, model_dir, allocator, out_tensor), "%s",
      source_name ? source_name : "<buffer>");
  return KILN_OK;
}

kiln_status_t kiln_onnx_tensor_read_file(const char *path, kiln_allocator_t allocator,
                                         kiln_tensor_t **out_tensor) {
  *out_tensor = NULL;
  void *data = NULL;
  size_t size = 0;
  char *dir = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_read(path, allocator, &data, &size, &dir));
  kiln_status_t status = kiln_onnx_tensor_parse(path, data, size, dir, allocator, out_tensor);
  kiln_allocator_free(allocator, dir);
  kiln_allocator_free(allocator, data);
  return status;
}
