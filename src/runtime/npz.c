/*
 * The .npz reader (kiln/npy.h): a zip file's central directory walked
 * entry by entry, each member's data found through its local header,
 * inflated when deflated (runtime/inflate.h), checked against its CRC-32
 * and parsed as .npy.
 *
 * The zip layout read (PKWARE's APPNOTE): the end-of-central-directory
 * record in the last 64 KiB + 22 bytes of the file, and its zip64
 * counterpart when a field is saturated (0xFFFF, 0xFFFFFFFF); one central
 * entry per member with its method, CRC, sizes and the offset of its local
 * header, the saturated ones in a zip64 extra field (numpy.savez writes
 * them with force_zip64); the local header's own name and extra lengths
 * give where the data starts. Every offset and length is checked against
 * the file's size before it is followed. A deflated member may not declare
 * more bytes than DEFLATE can make from its compressed size (1032 to 1),
 * so a small file cannot make kiln allocate gigabytes.
 */
#include <stdio.h>
#include <string.h>

#include "base/file.h"
#include "kiln/npy.h"
#include "runtime/inflate.h"

#define ZIP_END_SIZE      22
#define ZIP_END64_SIZE    56
#define ZIP_LOCATOR_SIZE  20
#define ZIP_ENTRY_SIZE    46
#define ZIP_LOCAL_SIZE    30
#define ZIP_MAX_COMMENT   65535
#define DEFLATE_MAX_RATIO 1032

struct kiln_npz_t {
  kiln_allocator_t allocator;
  int count;
  char **names;
  kiln_tensor_t **tensors;
};

typedef struct zip_t {
  const uint8_t *bytes;
  size_t size;
  uint64_t count, directory_offset, directory_size;
} zip_t;

typedef struct zip_member_t {
  const char *name;
  size_t name_length;
  unsigned flags, method;
  uint32_t crc;
  uint64_t compressed, size, offset;
} zip_member_t;

static uint64_t le(const uint8_t *p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) {
    value = value << 8 | p[i];
  }
  return value;
}

/* Whether [offset, offset + length) lies in the file. */
static int in_file(const zip_t *zip, uint64_t offset, uint64_t length) {
  return offset <= zip->size && length <= zip->size - offset;
}

/* The zip64 end record the locator before the end record points at. */
static kiln_status_t read_end64(zip_t *zip, size_t end) {
  const uint8_t *b = zip->bytes;
  if (end < ZIP_LOCATOR_SIZE || le(b + end - ZIP_LOCATOR_SIZE, 4) != 0x07064b50) {
    return KILN_STATUS(INVALID_ARGUMENT, "a saturated end record without a zip64 locator");
  }
  uint64_t at = le(b + end - ZIP_LOCATOR_SIZE + 8, 8);
  if (!in_file(zip, at, ZIP_END64_SIZE) || le(b + at, 4) != 0x06064b50) {
    return KILN_STATUS(INVALID_ARGUMENT, "no zip64 end record where its locator points");
  }
  zip->count = le(b + at + 32, 8);
  zip->directory_size = le(b + at + 40, 8);
  zip->directory_offset = le(b + at + 48, 8);
  return KILN_OK;
}

static kiln_status_t read_end(zip_t *zip) {
  size_t end = zip->size;
  size_t lowest =
      zip->size > ZIP_END_SIZE + ZIP_MAX_COMMENT ? zip->size - ZIP_END_SIZE - ZIP_MAX_COMMENT : 0;
  for (size_t at = zip->size >= ZIP_END_SIZE ? zip->size - ZIP_END_SIZE + 1 : 0; at-- > lowest;) {
    if (le(zip->bytes + at, 4) == 0x06054b50) {
      end = at;
      break;
    }
  }
  if (end == zip->size) {
    return KILN_STATUS(INVALID_ARGUMENT, "not a zip file (no end-of-central-directory record)");
  }
  const uint8_t *b = zip->bytes + end;
  zip->count = le(b + 10, 2);
  zip->directory_size = le(b + 12, 4);
  zip->directory_offset = le(b + 16, 4);
  if (zip->count == 0xffff || zip->directory_size == 0xffffffffu ||
      zip->directory_offset == 0xffffffffu) {
    KILN_RETURN_IF_ERROR(read_end64(zip, end));
  }
  if (!in_file(zip, zip->directory_offset, zip->directory_size)) {
    return KILN_STATUS(DATA_LOSS, "the central directory lies beyond the end of the file");
  }
  if (zip->count > zip->directory_size / ZIP_ENTRY_SIZE) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%llu members do not fit a central directory of %llu bytes",
                       (unsigned long long)zip->count, (unsigned long long)zip->directory_size);
  }
  return KILN_OK;
}

/* The saturated sizes and offset from a zip64 extra field (id 1). */
static kiln_status_t read_zip64_extra(const uint8_t *extra, size_t length, zip_member_t *m) {
  while (length >= 4) {
    size_t id = (size_t)le(extra, 2), size = (size_t)le(extra + 2, 2);
    if (size > length - 4) {
      break;
    }
    const uint8_t *p = extra + 4, *end = p + size;
    uint64_t *fields[3] = {&m->size, &m->compressed, &m->offset};
    for (int f = 0; f < 3 && id == 1; ++f) {
      if (*fields[f] == 0xffffffffu) {
        if (end - p < 8) {
          return KILN_STATUS(INVALID_ARGUMENT, "a zip64 extra field too short for its sizes");
        }
        *fields[f] = le(p, 8);
        p += 8;
      }
    }
    extra += 4 + size;
    length -= 4 + size;
  }
  return KILN_OK;
}

/* The central entry at *at (within the directory); advances past it. */
static kiln_status_t read_entry(const zip_t *zip, uint64_t *at, zip_member_t *m) {
  uint64_t end = zip->directory_offset + zip->directory_size;
  const uint8_t *b = zip->bytes + *at;
  if (end - *at < ZIP_ENTRY_SIZE || le(b, 4) != 0x02014b50) {
    return KILN_STATUS(INVALID_ARGUMENT, "a central directory entry with a bad signature");
  }
  uint64_t name = le(b + 28, 2), extra = le(b + 30, 2), comment = le(b + 32, 2);
  if (end - *at - ZIP_ENTRY_SIZE < name + extra + comment) {
    return KILN_STATUS(INVALID_ARGUMENT, "a central directory entry longer than the directory");
  }
  *m = (zip_member_t){.name = (const char *)b + ZIP_ENTRY_SIZE,
                      .name_length = (size_t)name,
                      .flags = (unsigned)le(b + 8, 2),
                      .method = (unsigned)le(b + 10, 2),
                      .crc = (uint32_t)le(b + 16, 4),
                      .compressed = le(b + 20, 4),
                      .size = le(b + 24, 4),
                      .offset = le(b + 42, 4)};
  *at += ZIP_ENTRY_SIZE + name + extra + comment;
  return read_zip64_extra(b + ZIP_ENTRY_SIZE + name, (size_t)extra, m);
}

/* Where the member's (compressed) data starts. */
static kiln_status_t member_data(const zip_t *zip, const zip_member_t *m, const uint8_t **out) {
  const uint8_t *b = zip->bytes + m->offset;
  if (!in_file(zip, m->offset, ZIP_LOCAL_SIZE) || le(b, 4) != 0x04034b50) {
    return KILN_STATUS(INVALID_ARGUMENT, "no local header at offset %llu",
                       (unsigned long long)m->offset);
  }
  uint64_t start = m->offset + ZIP_LOCAL_SIZE + le(b + 26, 2) + le(b + 28, 2);
  if (!in_file(zip, start, m->compressed)) {
    return KILN_STATUS(DATA_LOSS, "data cut short (%llu bytes past the end of the file)",
                       (unsigned long long)(start + m->compressed - zip->size));
  }
  *out = zip->bytes + start;
  return KILN_OK;
}

/* The member's .npy bytes: its data when stored, a new inflated buffer
 * (*out_owned) when deflated; checked against its CRC-32. */
static kiln_status_t member_bytes(kiln_allocator_t allocator, const uint8_t *data,
                                  const zip_member_t *m, uint8_t **out_owned) {
  if (m->flags & 1u) {
    return KILN_STATUS(UNIMPLEMENTED, "encrypted; kiln reads unencrypted members only");
  }
  if (m->method == 0 && m->compressed != m->size) {
    return KILN_STATUS(INVALID_ARGUMENT, "stored with %llu bytes but declares %llu",
                       (unsigned long long)m->compressed, (unsigned long long)m->size);
  }
  if (m->method == 8) {
    if (m->size > m->compressed * DEFLATE_MAX_RATIO + 1024) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "declares %llu bytes from %llu compressed, more than DEFLATE can make",
                         (unsigned long long)m->size, (unsigned long long)m->compressed);
    }
    KILN_RETURN_IF_ERROR(kiln_allocator_malloc(allocator, (size_t)m->size + 1, (void **)out_owned));
    const char *error = kiln_inflate(data, (size_t)m->compressed, *out_owned, (size_t)m->size);
    if (error) {
      return KILN_STATUS(DATA_LOSS, "corrupt deflate data: %s", error);
    }
    data = *out_owned;
  } else if (m->method != 0) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "compression method %u (kiln reads stored (0) and deflated (8) members)",
                       m->method);
  }
  uint32_t crc = kiln_crc32(data, (size_t)m->size);
  if (crc != m->crc) {
    return KILN_STATUS(DATA_LOSS, "CRC-32 %08x, the zip records %08x", crc, m->crc);
  }
  return KILN_OK;
}

/* The member's array name: its file name without ".npy". */
static kiln_status_t member_name(const kiln_npz_t *npz, const zip_member_t *m, char **out_name) {
  size_t length = m->name_length;
  if (length < 5 || memcmp(m->name + length - 4, ".npy", 4) != 0 || memchr(m->name, 0, length)) {
    return KILN_STATUS(UNIMPLEMENTED, "not a .npy file (an .npz holds .npy members)");
  }
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc(npz->allocator, length - 3, (void **)out_name));
  memcpy(*out_name, m->name, length - 4);
  (*out_name)[length - 4] = '\0';
  if (kiln_npz_find(npz, *out_name) >= 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "a second member of that name");
  }
  return KILN_OK;
}

/* Member `m` parsed into the npz's next slot; errors name the member. */
static kiln_status_t add_member(kiln_npz_t *npz, const zip_t *zip, const zip_member_t *m) {
  char label[320];
  snprintf(label, sizeof(label), "member %.*s", (int)(m->name_length < 256 ? m->name_length : 256),
           m->name);
  int i = npz->count;
  kiln_status_t status = member_name(npz, m, &npz->names[i]);
  npz->count += npz->names[i] != NULL; /* the name is owned from here on */
  const uint8_t *data = NULL;
  uint8_t *owned = NULL;
  if (!status) {
    status = member_data(zip, m, &data);
  }
  if (!status) {
    status = member_bytes(npz->allocator, data, m, &owned);
  }
  status = kiln_status_annotate(status, "%s", label);
  if (!status) { /* kiln_npy_parse names the member itself */
    status = kiln_npy_parse(npz->allocator, owned ? owned : data, (size_t)m->size, label,
                            &npz->tensors[i]);
  }
  kiln_allocator_free(npz->allocator, owned);
  return status;
}

static kiln_status_t parse_members(kiln_npz_t *npz, const zip_t *zip) {
  size_t count = (size_t)zip->count;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(npz->allocator, (count + 1) * sizeof(char *),
                                                    (void **)&npz->names));
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(
      npz->allocator, (count + 1) * sizeof(kiln_tensor_t *), (void **)&npz->tensors));
  uint64_t at = zip->directory_offset;
  for (size_t i = 0; i < count; ++i) {
    zip_member_t m;
    KILN_RETURN_IF_ERROR(read_entry(zip, &at, &m));
    KILN_RETURN_IF_ERROR(add_member(npz, zip, &m));
  }
  return KILN_OK;
}

kiln_status_t kiln_npz_parse(kiln_allocator_t allocator, const void *bytes, size_t size,
                             const char *source_name, kiln_npz_t **out_npz) {
  *out_npz = NULL;
  const char *source = source_name ? source_name : "<memory>";
  if (bytes == NULL && size > 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: bytes are NULL", source);
  }
  kiln_npz_t *npz = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*npz), (void **)&npz));
  npz->allocator = allocator;
  zip_t zip = {.bytes = bytes, .size = size};
  kiln_status_t status = read_end(&zip);
  if (!status) {
    status = parse_members(npz, &zip);
  }
  if (status) {
    kiln_npz_destroy(npz);
    return kiln_status_annotate(status, "%s", source);
  }
  *out_npz = npz;
  return KILN_OK;
}

kiln_status_t kiln_npz_read_file(kiln_allocator_t allocator, const char *path,
                                 kiln_npz_t **out_npz) {
  *out_npz = NULL;
  void *bytes = NULL;
  size_t size = 0;
  KILN_RETURN_IF_ERROR(kiln_file_read_all(allocator, path, &bytes, &size));
  kiln_status_t status = kiln_npz_parse(allocator, bytes, size, path, out_npz);
  kiln_allocator_free(allocator, bytes);
  return status;
}

void kiln_npz_destroy(kiln_npz_t *npz) {
  if (!npz) {
    return;
  }
  for (int i = 0; i < npz->count; ++i) {
    kiln_allocator_free(npz->allocator, npz->names[i]);
    kiln_tensor_release(npz->tensors[i]);
  }
  kiln_allocator_free(npz->allocator, npz->names);
  kiln_allocator_free(npz->allocator, npz->tensors);
  kiln_allocator_free(npz->allocator, npz);
}

int kiln_npz_count(const kiln_npz_t *npz) {
  return npz->count;
}

const char *kiln_npz_name(const kiln_npz_t *npz, int index) {
  return index >= 0 && index < npz->count ? npz->names[index] : NULL;
}

kiln_tensor_t *kiln_npz_tensor(const kiln_npz_t *npz, int index) {
  return index >= 0 && index < npz->count ? npz->tensors[index] : NULL;
}

int kiln_npz_find(const kiln_npz_t *npz, const char *name) {
  for (int i = 0; i < npz->count; ++i) {
    if (npz->names[i] && strcmp(npz->names[i], name) == 0) {
      return i;
    }
  }
  return -1;
}
