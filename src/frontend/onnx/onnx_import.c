/*
 * The importer's entry points; see onnx_import.h.
 *
 * A file is read whole and handed to the buffer importer with its folder
 * (for external data). The buffer importer unpacks the ModelProto with the
 * caller's allocator, checks what makes it a model kiln can import (a graph;
 * an opset import of the default domain in 1..17), makes the module and the
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

/* The default domain's opset version, checked against the supported range. */
static kiln_status_t kiln_onnx_model_opset(const Onnx__ModelProto *model, int64_t *out_opset) {
  int64_t opset = -1;
  for (size_t i = 0; i < model->n_opset_import; ++i) {
    const Onnx__OperatorSetIdProto *entry = model->opset_import[i];
    const char *domain = entry->domain ? entry->domain : "";
    if (*domain != '\0' && strcmp(domain, "ai.onnx") != 0) {
      continue;
    }
    if (opset >= 0) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "the model imports the default domain twice (opsets %lld and %lld)",
                         (long long)opset, (long long)entry->version);
    }
    opset = entry->version < 0 ? 0 : entry->version;
  }
  if (opset < 0 && model->n_opset_import > 0) {
    const Onnx__OperatorSetIdProto *other = model->opset_import[0];
    return KILN_STATUS(UNIMPLEMENTED,
                       "the model imports no opset of the default ONNX domain (it imports %s "
                       "version %lld; kiln imports only the default domain)",
                       other->domain ? other->domain : "", (long long)other->version);
  }
  if (opset < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "the model imports no opset (opset_import is empty)");
  }
  if (opset < KILN_ONNX_OPSET_MIN || opset > KILN_ONNX_OPSET_MAX) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "the model uses opset %lld of the default domain; kiln imports opsets %d "
                       "to %d",
                       (long long)opset, KILN_ONNX_OPSET_MIN, KILN_ONNX_OPSET_MAX);
  }
  *out_opset = opset;
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
  KILN_RETURN_IF_ERROR(kiln_onnx_model_opset(model, &importer.opset));
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
