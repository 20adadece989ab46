/*
 * The version string, from the generated kiln/version.h (CMake's project
 * version).
 */
#include "kiln/version.h"

const char *kiln_version_string(void) {
  return KILN_VERSION_STRING;
}
