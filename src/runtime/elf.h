/*
 * Reading a shared library's file without loading it (internal to the
 * runtime): a strict reader of 64-bit little-endian ELF over bytes in
 * memory, enough to say which machine a library is for and to find a
 * dynamic symbol's contents (the target record __kiln_target, the
 * embedded model __kiln_model) before dlopen maps any of it. So a library
 * for another architecture is refused by the target check with a message,
 * not by dlopen's "wrong ELF class", and a one-file model's graph and
 * params are read from the file with every offset checked against its
 * size.
 *
 * Every field read is checked before use: the section table and the
 * dynamic symbol and string tables must lie inside the bytes (sizes and
 * offsets summed without overflow), a symbol's name must end inside the
 * string table, and a symbol's contents must lie inside its section and
 * the section inside the bytes. A violation is DATA_LOSS (cut short) or
 * INVALID_ARGUMENT (inconsistent), naming `what` (the path); nothing is
 * read outside [bytes, bytes + size).
 */
#ifndef KILN_RUNTIME_ELF_H_
#define KILN_RUNTIME_ELF_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/status.h"

typedef struct kiln_elf_t {
  const unsigned char *bytes;
  size_t size;
  const char *what;
  unsigned machine; /* e_machine: 62 x86-64, 183 AArch64 */
  const unsigned char *sections;
  unsigned num_sections;
  const unsigned char *symbols; /* .dynsym; NULL when there is none */
  size_t num_symbols;
  const char *strings; /* its string table */
  size_t strings_size;
} kiln_elf_t;

/* Whether the bytes start with the ELF magic. */
bool kiln_elf_is_elf(const void *bytes, size_t size);
/* Reads the header, the section table and the dynamic symbol table.
 * UNIMPLEMENTED for a 32-bit or big-endian file, INVALID_ARGUMENT when it
 * is not a shared library (ET_DYN) or is inconsistent, DATA_LOSS when a
 * table lies past the end; each naming `what`. `elf` points into `bytes`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_elf_parse(const void *bytes, size_t size, const char *what,
                                                  kiln_elf_t *out_elf);
/* The contents of the defined dynamic symbol `name` (its st_size bytes,
 * inside the file); NOT_FOUND when there is none, DATA_LOSS or
 * INVALID_ARGUMENT when its contents are not inside the file. */
KILN_MUST_USE_RESULT kiln_status_t kiln_elf_symbol(const kiln_elf_t *elf, const char *name,
                                                   const void **out_bytes, size_t *out_size);
/* "x86_64", "aarch64", ... for an e_machine; NULL for one kiln does not name. */
const char *kiln_elf_machine_name(unsigned machine);
/* The e_machine of this process's code (0 when unknown). */
unsigned kiln_elf_host_machine(void);

#endif /* KILN_RUNTIME_ELF_H_ */
