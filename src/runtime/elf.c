/*
 * A strict ELF64 reader over bytes; see elf.h.
 *
 * Fields are read byte by byte as little-endian (the only byte order
 * accepted), so the reader needs no alignment of the bytes and no
 * <elf.h> structures. The dynamic symbols are found through the section
 * table (the SHT_DYNSYM section and the string table its sh_link names);
 * a library without a section table, or without dynamic symbols, parses
 * with no symbols, so a lookup finds nothing (such a library is not one
 * kiln made). Symbol lookups scan the table: a model's library has a few
 * hundred symbols.
 */
#include "runtime/elf.h"

#include <string.h>

#define EHDR_SIZE     64
#define SHDR_SIZE     64
#define SYM_SIZE      24
#define ET_DYN        3
#define SHT_STRTAB    3
#define SHT_NOBITS    8
#define SHT_DYNSYM    11
#define SHN_LORESERVE 0xff00u

static uint64_t read_le(const unsigned char *p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) {
    value = value << 8 | p[i];
  }
  return value;
}

/* Whether [offset, offset + length) lies inside `size` bytes. */
static bool inside(uint64_t offset, uint64_t length, size_t size) {
  return offset <= size && length <= size - offset;
}

bool kiln_elf_is_elf(const void *bytes, size_t size) {
  return bytes && size >= 4 && memcmp(bytes, "\177ELF", 4) == 0;
}

const char *kiln_elf_machine_name(unsigned machine) {
  switch (machine) {
  case 3:
    return "i386";
  case 20:
    return "ppc";
  case 21:
    return "ppc64";
  case 40:
    return "arm";
  case 62:
    return "x86_64";
  case 183:
    return "aarch64";
  case 243:
    return "riscv";
  default:
    return NULL;
  }
}

unsigned kiln_elf_host_machine(void) {
#if defined(__x86_64__)
  return 62;
#elif defined(__aarch64__)
  return 183;
#else
  return 0;
#endif
}

/* Section `index`'s header (index < num_sections). */
static const unsigned char *section(const kiln_elf_t *elf, unsigned index) {
  return elf->sections + (size_t)index * SHDR_SIZE;
}

/* The file range of section `index`, checked against the file. */
static kiln_status_t section_range(const kiln_elf_t *elf, unsigned index, uint64_t *out_offset,
                                   uint64_t *out_size) {
  const unsigned char *s = section(elf, index);
  *out_offset = read_le(s + 24, 8);
  *out_size = read_le(s + 32, 8);
  if (read_le(s + 4, 4) != SHT_NOBITS && !inside(*out_offset, *out_size, elf->size)) {
    return KILN_STATUS(DATA_LOSS,
                       "%s: section %u (%llu bytes at offset %llu) ends past the end of the file "
                       "(%zu bytes): the file is cut short",
                       elf->what, index, (unsigned long long)*out_size,
                       (unsigned long long)*out_offset, elf->size);
  }
  return KILN_OK;
}

/* The dynamic symbol table and its strings, when there is one. */
static kiln_status_t find_dynsym(kiln_elf_t *elf) {
  for (unsigned i = 0; i < elf->num_sections; ++i) {
    if (read_le(section(elf, i) + 4, 4) != SHT_DYNSYM) {
      continue;
    }
    uint64_t offset = 0, size = 0, strings_offset = 0, strings_size = 0;
    KILN_RETURN_IF_ERROR(section_range(elf, i, &offset, &size));
    uint64_t entsize = read_le(section(elf, i) + 56, 8);
    unsigned link = (unsigned)read_le(section(elf, i) + 40, 4);
    if (entsize != SYM_SIZE || size % SYM_SIZE != 0 || link >= elf->num_sections ||
        read_le(section(elf, link) + 4, 4) != SHT_STRTAB) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: the dynamic symbol table (section %u) is malformed (entry size "
                         "%llu, %llu bytes, string table %u)",
                         elf->what, i, (unsigned long long)entsize, (unsigned long long)size, link);
    }
    KILN_RETURN_IF_ERROR(section_range(elf, link, &strings_offset, &strings_size));
    elf->symbols = elf->bytes + offset;
    elf->num_symbols = (size_t)(size / SYM_SIZE);
    elf->strings = (const char *)elf->bytes + strings_offset;
    elf->strings_size = (size_t)strings_size;
    return KILN_OK;
  }
  return KILN_OK;
}

kiln_status_t kiln_elf_parse(const void *bytes, size_t size, const char *what,
                             kiln_elf_t *out_elf) {
  memset(out_elf, 0, sizeof(*out_elf));
  const unsigned char *b = bytes;
  if (!kiln_elf_is_elf(bytes, size)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: not an ELF file", what);
  }
  if (size < EHDR_SIZE) {
    return KILN_STATUS(DATA_LOSS, "%s: %zu bytes, cut short inside the ELF header (%d bytes)", what,
                       size, EHDR_SIZE);
  }
  if (b[4] != 2 || b[5] != 1) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: a %s-bit %s-endian ELF file; kiln reads 64-bit little-endian "
                       "libraries",
                       what,
                       b[4] == 1   ? "32"
                       : b[4] == 2 ? "64"
                                   : "?",
                       b[5] == 2   ? "big"
                       : b[5] == 1 ? "little"
                                   : "?");
  }
  out_elf->bytes = b;
  out_elf->size = size;
  out_elf->what = what;
  out_elf->machine = (unsigned)read_le(b + 18, 2);
  if (read_le(b + 16, 2) != ET_DYN) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: an ELF file of type %u, not a shared library", what,
                       (unsigned)read_le(b + 16, 2));
  }
  uint64_t shoff = read_le(b + 40, 8);
  unsigned shentsize = (unsigned)read_le(b + 58, 2), shnum = (unsigned)read_le(b + 60, 2);
  if (shoff == 0 || shnum == 0) {
    return KILN_OK; /* no section table: no symbols to find */
  }
  if (shentsize != SHDR_SIZE) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: section headers of %u bytes (ELF64's are %d)", what,
                       shentsize, SHDR_SIZE);
  }
  if (!inside(shoff, (uint64_t)shnum * SHDR_SIZE, size)) {
    return KILN_STATUS(DATA_LOSS,
                       "%s: the section table (%u headers at offset %llu) ends past the end of "
                       "the file (%zu bytes): the file is cut short",
                       what, shnum, (unsigned long long)shoff, size);
  }
  out_elf->sections = b + shoff;
  out_elf->num_sections = shnum;
  return find_dynsym(out_elf);
}

/* The contents of symbol `sym` (a defined one) inside the file. */
static kiln_status_t symbol_contents(const kiln_elf_t *elf, const unsigned char *sym,
                                     const char *name, const void **out_bytes, size_t *out_size) {
  unsigned shndx = (unsigned)read_le(sym + 6, 2);
  uint64_t value = read_le(sym + 8, 8), length = read_le(sym + 16, 8);
  if (shndx >= elf->num_sections || shndx >= SHN_LORESERVE) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: symbol %s is in section %u, which does not exist",
                       elf->what, name, shndx);
  }
  const unsigned char *s = section(elf, shndx);
  if (read_le(s + 4, 4) == SHT_NOBITS) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: symbol %s is in a section with no contents in the file", elf->what,
                       name);
  }
  uint64_t offset = 0, size = 0, address = read_le(s + 16, 8);
  KILN_RETURN_IF_ERROR(section_range(elf, shndx, &offset, &size));
  if (value < address || !inside(value - address, length, (size_t)size)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: symbol %s (%llu bytes at address 0x%llx) is not inside its section "
                       "(%llu bytes at 0x%llx)",
                       elf->what, name, (unsigned long long)length, (unsigned long long)value,
                       (unsigned long long)size, (unsigned long long)address);
  }
  *out_bytes = elf->bytes + offset + (value - address);
  *out_size = (size_t)length;
  return KILN_OK;
}

kiln_status_t kiln_elf_symbol(const kiln_elf_t *elf, const char *name, const void **out_bytes,
                              size_t *out_size) {
  *out_bytes = NULL;
  *out_size = 0;
  size_t length = strlen(name);
  for (size_t i = 0; i < elf->num_symbols; ++i) {
    const unsigned char *sym = elf->symbols + i * SYM_SIZE;
    uint64_t at = read_le(sym, 4);
    if (at >= elf->strings_size || elf->strings_size - at <= length ||
        memcmp(elf->strings + at, name, length + 1) != 0) {
      continue; /* a name past the table's end matches nothing */
    }
    if (read_le(sym + 6, 2) == 0) {
      continue; /* undefined here: a reference to another library's */
    }
    return symbol_contents(elf, sym, name, out_bytes, out_size);
  }
  return KILN_STATUS(NOT_FOUND, "%s: no symbol %s", elf->what, name);
}
