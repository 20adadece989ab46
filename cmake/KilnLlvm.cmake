# The optional LLVM backend (src/codegen/llvm/, docs/codegen-llvm.md).
#
# Found with llvm-config-14 (else llvm-config, if it reports LLVM 14: the
# backend writes LLVM 14's typed-pointer IR). KILN_LLVM defaults to ON when
# found; ON without LLVM 14 is an error, OFF builds the C backend alone.
# kiln_llvm_deps carries the include directory (as SYSTEM: LLVM's headers
# are not held to kiln's warnings) and libLLVM-14.
find_program(KILN_LLVM_CONFIG NAMES llvm-config-14 llvm-config)
set(kiln_llvm_found OFF)
if(KILN_LLVM_CONFIG)
  execute_process(COMMAND ${KILN_LLVM_CONFIG} --version OUTPUT_VARIABLE kiln_llvm_version
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE kiln_llvm_rc)
  if(kiln_llvm_rc EQUAL 0 AND kiln_llvm_version MATCHES "^14\\.")
    set(kiln_llvm_found ON)
  endif()
endif()

option(KILN_LLVM "Build the LLVM backend (needs LLVM 14: llvm-14-dev)" ${kiln_llvm_found})

if(KILN_LLVM AND NOT kiln_llvm_found)
  message(FATAL_ERROR "kiln: KILN_LLVM is ON but LLVM 14's llvm-config was not found "
                      "(install llvm-14-dev, or configure with -DKILN_LLVM=OFF)")
endif()

if(KILN_LLVM)
  execute_process(COMMAND ${KILN_LLVM_CONFIG} --includedir OUTPUT_VARIABLE kiln_llvm_includedir
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${KILN_LLVM_CONFIG} --libdir OUTPUT_VARIABLE kiln_llvm_libdir
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  find_library(KILN_LLVM_LIBRARY NAMES LLVM-14 LLVM PATHS ${kiln_llvm_libdir} NO_DEFAULT_PATH)
  if(NOT KILN_LLVM_LIBRARY)
    message(FATAL_ERROR "kiln: libLLVM-14 not found in ${kiln_llvm_libdir}")
  endif()
  add_library(kiln_llvm_deps INTERFACE)
  target_include_directories(kiln_llvm_deps SYSTEM INTERFACE ${kiln_llvm_includedir})
  target_link_libraries(kiln_llvm_deps INTERFACE ${KILN_LLVM_LIBRARY})
  message(STATUS "kiln: LLVM ${kiln_llvm_version} found (${KILN_LLVM_CONFIG}); "
                 "building the LLVM backend (the default target)")
elseif(kiln_llvm_found)
  message(STATUS "kiln: KILN_LLVM is OFF; building the C backend only")
else()
  message(STATUS "kiln: LLVM not found (llvm-config); building the C backend only")
endif()
