# The warning list every kiln target compiles with (kiln_target_warnings), and
# the sanitizer flags of the KILN_SANITIZE (and KILN_TSAN) builds.
set(KILN_WARNING_FLAGS
  -Wall -Wextra -Wpedantic
  -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wold-style-definition
  -Wpointer-arith -Wformat=2 -Wundef -Wwrite-strings -Wvla
  -Wimplicit-fallthrough -Wcast-qual -Wmissing-declarations -Wredundant-decls
  -Wnested-externs -Wswitch-enum -Wno-missing-field-initializers)
if(KILN_WERROR)
  list(APPEND KILN_WARNING_FLAGS -Werror)
endif()

function(kiln_target_warnings target)
  target_compile_options(${target} PRIVATE ${KILN_WARNING_FLAGS})
endfunction()

if(KILN_FUZZ)
  # Every library is instrumented for libFuzzer's coverage; the fuzz target
  # links the fuzzer's main (tests/CMakeLists.txt). clang only.
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "KILN_FUZZ needs clang: configure with CC=clang")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -O1)
  add_link_options(-fsanitize=address,undefined)
endif()

if(KILN_SANITIZE)
  # -O1: the reference kernels run whole networks in the sanitizer build too.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -O1)
  add_link_options(-fsanitize=address,undefined)
endif()

# ThreadSanitizer (`make test-tsan`): the thread pool's tests run clean under
# it. It cannot share a process with AddressSanitizer, so not with
# KILN_SANITIZE or KILN_FUZZ.
option(KILN_TSAN "Build with ThreadSanitizer" OFF)
if(KILN_TSAN)
  if(KILN_SANITIZE OR KILN_FUZZ)
    message(FATAL_ERROR "KILN_TSAN cannot be combined with KILN_SANITIZE or KILN_FUZZ: "
                        "ThreadSanitizer and AddressSanitizer exclude each other")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer -O1)
  add_link_options(-fsanitize=thread)
endif()
