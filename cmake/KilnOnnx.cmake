# The ONNX importer's dependencies and generated code (included from
# src/CMakeLists.txt). The parser is protobuf-c over the ONNX schema that
# Debian's libonnx-dev ships (onnx/onnx.proto, proto2, package onnx): protoc-c
# turns the schema into C at build time, into the build tree, so no generated
# code is committed and the schema is whichever the system has. Every package
# here is installed by scripts/install-deps.sh.
find_program(KILN_PROTOC_C protoc-c)
if(NOT KILN_PROTOC_C)
  kiln_missing("protoc-c (the protobuf-c compiler)" protobuf-c-compiler)
endif()

pkg_check_modules(PROTOBUF_C IMPORTED_TARGET libprotobuf-c)
if(NOT PROTOBUF_C_FOUND)
  kiln_missing("protobuf-c (libprotobuf-c)" libprotobuf-c-dev)
endif()

find_file(KILN_ONNX_PROTO onnx/onnx.proto)
if(NOT KILN_ONNX_PROTO)
  kiln_missing("the ONNX schema (onnx/onnx.proto)" libonnx-dev)
endif()

# kiln_onnx_generate(<out_dir> <out_sources_var>): runs protoc-c on the schema
# into <out_dir>, giving onnx.pb-c.c and onnx.pb-c.h, and on the repository's
# src/frontend/onnx/onnx_data.proto (ONNX's SequenceProto and OptionalProto,
# which import it), giving onnx_data.pb-c.c and onnx_data.pb-c.h.
function(kiln_onnx_generate out_dir out_sources)
  get_filename_component(proto_dir ${KILN_ONNX_PROTO} DIRECTORY)
  set(data_proto ${PROJECT_SOURCE_DIR}/src/frontend/onnx/onnx_data.proto)
  set(generated ${out_dir}/onnx.pb-c.c ${out_dir}/onnx.pb-c.h)
  set(data_generated ${out_dir}/onnx_data.pb-c.c ${out_dir}/onnx_data.pb-c.h)
  add_custom_command(
    OUTPUT ${generated}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${KILN_PROTOC_C} --c_out=${out_dir} -I${proto_dir} ${KILN_ONNX_PROTO}
    DEPENDS ${KILN_ONNX_PROTO}
    COMMENT "protoc-c: generating C for ${KILN_ONNX_PROTO}"
    VERBATIM)
  add_custom_command(
    OUTPUT ${data_generated}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${KILN_PROTOC_C} --c_out=${out_dir} -I${proto_dir}
            -I${PROJECT_SOURCE_DIR}/src/frontend/onnx ${data_proto}
    DEPENDS ${data_proto} ${generated}
    COMMENT "protoc-c: generating C for ${data_proto}"
    VERBATIM)
  set(${out_sources} ${generated} ${data_generated} PARENT_SCOPE)
endfunction()
