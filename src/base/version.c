/*
 * The version string, compiled in from CMake's project version
 * (KILN_VERSION_STRING is defined on the kiln_base target).
 */
#include "kiln/version.h"

const char *kiln_version_string(void) {
  return KILN_VERSION_STRING;
}
