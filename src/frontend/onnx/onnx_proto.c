/*
 * protobuf-c glue; see onnx_proto.h.
 *
 * The depth scan reads the wire format as protobuf defines it: a varint tag
 * (field number << 3 | wire type), then a varint, 8 bytes, 4 bytes or a
 * varint length and that many bytes. A length-delimited field whose
 * descriptor says it is a message is scanned one level deeper; everything
 * else is skipped. The scan judges nothing but depth: bytes it cannot read
 * are left for protobuf-c to refuse.
 */
#include "frontend/onnx/onnx_proto.h"

#include <stdint.h>

static void *kiln_onnx_proto_alloc(void *data, size_t size) {
  kiln_onnx_proto_allocator_t *adapter = data;
  void *block =
      adapter->allocator.alloc(adapter->allocator.self, size ? size : 1, KILN_DEFAULT_ALIGNMENT);
  if (!block) {
    adapter->failed = 1;
  }
  return block;
}

static void kiln_onnx_proto_free(void *data, void *pointer) {
  kiln_onnx_proto_allocator_t *adapter = data;
  if (pointer) {
    adapter->allocator.free(adapter->allocator.self, pointer);
  }
}

void kiln_onnx_proto_allocator_initialize(kiln_onnx_proto_allocator_t *adapter,
                                          kiln_allocator_t allocator) {
  adapter->base.alloc = kiln_onnx_proto_alloc;
  adapter->base.free = kiln_onnx_proto_free;
  adapter->base.allocator_data = adapter;
  adapter->allocator = allocator;
  adapter->failed = 0;
}

/* ---- depth scan ---- */

typedef struct kiln_onnx_wire_t {
  const uint8_t *at;
  const uint8_t *end;
} kiln_onnx_wire_t;

/* Reads a varint; false at the end of the bytes or after 10 bytes. */
static int kiln_onnx_wire_varint(kiln_onnx_wire_t *wire, uint64_t *out_value) {
  uint64_t value = 0;
  for (int shift = 0; shift < 70 && wire->at < wire->end; shift += 7) {
    uint8_t byte = *wire->at++;
    value |= (uint64_t)(byte & 0x7f) << (shift < 64 ? shift : 63);
    if (!(byte & 0x80)) {
      *out_value = value;
      return 1;
    }
  }
  return 0;
}

/* Skips `count` bytes; false when fewer remain. */
static int kiln_onnx_wire_skip(kiln_onnx_wire_t *wire, uint64_t count) {
  if (count > (uint64_t)(wire->end - wire->at)) {
    return 0;
  }
  wire->at += count;
  return 1;
}

/* The descriptor of the message field `number` of `descriptor`, or NULL. */
static const ProtobufCMessageDescriptor *
kiln_onnx_wire_submessage(const ProtobufCMessageDescriptor *descriptor, uint64_t number) {
  if (number == 0 || number > UINT32_MAX) {
    return NULL;
  }
  const ProtobufCFieldDescriptor *field =
      protobuf_c_message_descriptor_get_field(descriptor, (unsigned)number);
  if (!field || field->type != PROTOBUF_C_TYPE_MESSAGE) {
    return NULL;
  }
  return field->descriptor;
}

/* Whether the message in `wire` nests at most `depth_left` more levels;
 * bytes that do not scan count as fine (protobuf-c refuses them). */
static int kiln_onnx_wire_depth_ok(const ProtobufCMessageDescriptor *descriptor,
                                   kiln_onnx_wire_t wire, int depth_left) {
  if (depth_left < 0) {
    return 0;
  }
  uint64_t tag = 0, value = 0;
  while (wire.at < wire.end && kiln_onnx_wire_varint(&wire, &tag)) {
    switch (tag & 7) {
    case 0:
      if (!kiln_onnx_wire_varint(&wire, &value)) {
        return 1;
      }
      break;
    case 1:
    case 5:
      if (!kiln_onnx_wire_skip(&wire, (tag & 7) == 1 ? 8 : 4)) {
        return 1;
      }
      break;
    case 2: {
      if (!kiln_onnx_wire_varint(&wire, &value) || value > (uint64_t)(wire.end - wire.at)) {
        return 1;
      }
      const ProtobufCMessageDescriptor *sub = kiln_onnx_wire_submessage(descriptor, tag >> 3);
      kiln_onnx_wire_t inner = {wire.at, wire.at + value};
      if (sub && !kiln_onnx_wire_depth_ok(sub, inner, depth_left - 1)) {
        return 0;
      }
      wire.at += value;
      break;
    }
    default:
      return 1;
    }
  }
  return 1;
}

/* ---- unpack ---- */

kiln_status_t kiln_onnx_proto_unpack(kiln_onnx_proto_allocator_t *adapter,
                                     const ProtobufCMessageDescriptor *descriptor, const char *what,
                                     const void *bytes, size_t size,
                                     ProtobufCMessage **out_message) {
  *out_message = NULL;
  if (size == 0) {
    return KILN_STATUS(DATA_LOSS, "the file is empty; expected %s", what);
  }
  kiln_onnx_wire_t wire = {bytes, (const uint8_t *)bytes + size};
  if (!kiln_onnx_wire_depth_ok(descriptor, wire, KILN_ONNX_PROTO_MAX_DEPTH)) {
    return KILN_STATUS(DATA_LOSS, "messages are nested more than %d deep; not %s",
                       KILN_ONNX_PROTO_MAX_DEPTH, what);
  }
  adapter->failed = 0;
  ProtobufCMessage *message = protobuf_c_message_unpack(descriptor, &adapter->base, size, bytes);
  if (!message) {
    if (adapter->failed) {
      return KILN_STATUS(RESOURCE_EXHAUSTED, "out of memory unpacking %s of %zu bytes", what, size);
    }
    return KILN_STATUS(DATA_LOSS,
                       "%zu bytes do not parse as %s (truncated, corrupt, or another format)", size,
                       what);
  }
  *out_message = message;
  return KILN_OK;
}
