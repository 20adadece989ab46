/*
 * protobuf-c under kiln's rules: messages are unpacked with a kiln allocator
 * and failures become statuses.
 *
 * protobuf-c takes a ProtobufCAllocator; an adapter forwards it to a
 * kiln_allocator_t and remembers whether an allocation failed, since
 * protobuf-c reports every failure as a NULL message: with the flag, running
 * out of memory is RESOURCE_EXHAUSTED and anything else is DATA_LOSS (bytes
 * that are not a message of that type). protobuf-c unpacks nested messages
 * by recursion on the C stack with no limit, so before unpacking, a scan of
 * the wire format (driven by the generated descriptors, reading only tags
 * and lengths) refuses messages nested deeper than
 * KILN_ONNX_PROTO_MAX_DEPTH; a crafted file cannot overflow the stack.
 */
#ifndef KILN_FRONTEND_ONNX_ONNX_PROTO_H_
#define KILN_FRONTEND_ONNX_ONNX_PROTO_H_

#include <stddef.h>

#include "kiln/allocator.h"
#include "kiln/status.h"
#include "onnx.pb-c.h"

/* Nesting allowed in a message (a model is 4 deep; subgraphs add 3 a level). */
#define KILN_ONNX_PROTO_MAX_DEPTH 64

typedef struct kiln_onnx_proto_allocator_t {
  ProtobufCAllocator base; /* first: protobuf-c gets &adapter->base */
  kiln_allocator_t allocator;
  int failed; /* an allocation failed since the adapter was made */
} kiln_onnx_proto_allocator_t;

void kiln_onnx_proto_allocator_initialize(kiln_onnx_proto_allocator_t *adapter,
                                          kiln_allocator_t allocator);

/* Unpacks `size` bytes as a message of `descriptor`; `what` names the
 * expected message in errors ("an ONNX ModelProto"). The caller frees the
 * message with protobuf_c_message_free_unpacked(message, &adapter->base). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_proto_unpack(
    kiln_onnx_proto_allocator_t *adapter, const ProtobufCMessageDescriptor *descriptor,
    const char *what, const void *bytes, size_t size, ProtobufCMessage **out_message);

#endif /* KILN_FRONTEND_ONNX_ONNX_PROTO_H_ */
