# Finds kiln's Debian dependencies (those of every build: the runtime's; the
# compiler's are found by KilnLlvm.cmake and KilnOnnx.cmake, which a
# KILN_RUNTIME_ONLY build never includes). Every one of them is installed by
# scripts/install-deps.sh (which `make` runs first); a missing one stops the
# configure step with the package to install.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

function(kiln_missing what package)
  message(FATAL_ERROR "kiln needs ${what}: run `scripts/install-deps.sh` as root, "
                      "or `apt-get install ${package}`")
endfunction()

find_path(KILN_DLPACK_INCLUDE_DIR dlpack/dlpack.h)
if(NOT KILN_DLPACK_INCLUDE_DIR)
  kiln_missing("DLPack (dlpack/dlpack.h)" libdlpack-dev)
endif()
add_library(kiln_dlpack INTERFACE)
target_include_directories(kiln_dlpack INTERFACE ${KILN_DLPACK_INCLUDE_DIR})

pkg_check_modules(JANSSON IMPORTED_TARGET jansson)
if(NOT JANSSON_FOUND)
  kiln_missing("jansson (JSON)" libjansson-dev)
endif()

# The unit tests' framework; a runtime-only build has no cmocka tests and
# does not look for it.
if(NOT KILN_RUNTIME_ONLY)
  pkg_check_modules(CMOCKA IMPORTED_TARGET cmocka)
  if(NOT CMOCKA_FOUND)
    kiln_missing("cmocka (unit tests)" libcmocka-dev)
  endif()
endif()
