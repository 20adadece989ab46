/*
 * kiln's version, set by the build from the CMake project version.
 */
#ifndef KILN_VERSION_H_
#define KILN_VERSION_H_

#ifdef __cplusplus
extern "C" {
#endif

/* "0.1.0" */
const char *kiln_version_string(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_VERSION_H_ */
