/*
 * Tests of one-file models' pieces in the runtime alone: the embedded
 * model's bytes (kiln_runtime_model_serialize, the parser of
 * runtime/model_file.h) with every header field and every length cut
 * short, and the ELF reader (runtime/elf.h) over a small library built
 * here byte by byte, with each of its tables broken in turn. Libraries the
 * compiler makes are tested in tests/compiler/test_one_file.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kiln/runtime.h"
#include "kiln_test.h"
#include "runtime/elf.h"
#include "runtime/model_file.h"

static const char graph[] = "{\"nodes\": []}";

/* A params.bin of one float32 tensor "w" of 3 elements. */
static void make_params(void **out_bytes, size_t *out_size) {
  int64_t shape[1] = {3};
  kiln_tensor_t *w = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, shape, &w));
  float *data = kiln_tensor_data(w);
  data[0] = 1.0f, data[1] = 2.0f, data[2] = 3.0f;
  const char *names[1] = {"w"};
  KILN_ASSERT_OK(
      kiln_runtime_params_serialize(kiln_allocator_system(), 1, names, &w, out_bytes, out_size));
  kiln_tensor_release(w);
}

static void make_embedded(unsigned char **out_bytes, size_t *out_size) {
  void *params = NULL, *bytes = NULL;
  size_t params_size = 0;
  make_params(&params, &params_size);
  KILN_ASSERT_OK(kiln_runtime_model_serialize(kiln_allocator_system(), graph, params, params_size,
                                              &bytes, out_size));
  assert_int_equal(*out_size, KILN_RUNTIME_MODEL_HEADER_SIZE + strlen(graph) + params_size);
  free(params);
  *out_bytes = bytes;
}

static kiln_status_t parse(const unsigned char *bytes, size_t size) {
  char *json = NULL;
  kiln_runtime_params_t *params = NULL;
  kiln_status_t status = kiln_runtime_model_parse_embedded(kiln_allocator_system(), bytes, size,
                                                           "m.so", &json, &params);
  if (!status) {
    assert_string_equal(json, graph);
    assert_int_equal(kiln_runtime_params_count(params), 1);
    assert_string_equal(kiln_runtime_params_name(params, 0), "w");
  } else {
    assert_null(json);
    assert_null(params);
  }
  free(json);
  kiln_runtime_params_destroy(params);
  return status;
}

static void put_le(unsigned char *at, uint64_t value, int width) {
  for (int i = 0; i < width; ++i) {
    at[i] = (unsigned char)(value >> (8 * i));
  }
}

static void test_embedded_round_trip(void **state) {
  (void)state;
  unsigned char *bytes = NULL;
  size_t size = 0;
  make_embedded(&bytes, &size);
  assert_memory_equal(bytes, "KILNMDL\0\1\0\0\0\0\0\0\0", 16);
  KILN_ASSERT_OK(parse(bytes, size));
  free(bytes);
  KILN_ASSERT_STATUS(
      kiln_runtime_model_serialize(kiln_allocator_system(), NULL, NULL, 0, (void **)&bytes, &size),
      INVALID_ARGUMENT, "the graph's JSON and params are needed");
}

/* Every length short of the whole is refused, never read past. */
static void test_embedded_cut_short(void **state) {
  (void)state;
  unsigned char *bytes = NULL;
  size_t size = 0;
  make_embedded(&bytes, &size);
  for (size_t cut = 0; cut < size; ++cut) {
    unsigned char *copy = malloc(cut > 0 ? cut : 1); /* exact: ASan sees an overread */
    memcpy(copy, bytes, cut);
    kiln_status_t status = parse(copy, cut);
    assert_true(status != KILN_OK);
    kiln_status_code_t code = kiln_status_code(status);
    assert_true(code == KILN_STATUS_CODE_DATA_LOSS || code == KILN_STATUS_CODE_INVALID_ARGUMENT);
    kiln_status_free(status);
    free(copy);
  }
  KILN_ASSERT_STATUS(parse(bytes, 20), DATA_LOSS,
                     "m.so: the embedded model is 20 bytes, cut short inside its 32-byte header");
  KILN_ASSERT_STATUS(parse(bytes, KILN_RUNTIME_MODEL_HEADER_SIZE + 4), DATA_LOSS,
                     "m.so: truncated: graph.json's 13 bytes run past the embedded model's end");
  KILN_ASSERT_STATUS(parse(bytes, size - 1), DATA_LOSS, "m.so: truncated: params.bin's");
  free(bytes);
}

static void test_embedded_header_checked(void **state) {
  (void)state;
  unsigned char *bytes = NULL;
  size_t size = 0;
  make_embedded(&bytes, &size);
  unsigned char *b = malloc(size + 1);
  size_t graph_size = strlen(graph),
         params_size = size - KILN_RUNTIME_MODEL_HEADER_SIZE - graph_size;

  memcpy(b, bytes, size);
  b[3] = 'X';
  KILN_ASSERT_STATUS(parse(b, size), INVALID_ARGUMENT,
                     "m.so: the embedded model does not start with \"KILNMDL\": not a kiln model");
  memcpy(b, bytes, size);
  put_le(b + 8, 2, 4);
  KILN_ASSERT_STATUS(parse(b, size), UNIMPLEMENTED,
                     "m.so: embedded model version 2; this kiln reads version 1");
  memcpy(b, bytes, size);
  put_le(b + 12, 7, 4);
  KILN_ASSERT_STATUS(parse(b, size), INVALID_ARGUMENT, "reserved field is 7, not 0");
  memcpy(b, bytes, size);
  put_le(b + 16, UINT64_MAX, 8);
  KILN_ASSERT_STATUS(parse(b, size), DATA_LOSS, "graph.json's 18446744073709551615 bytes run past");
  memcpy(b, bytes, size);
  put_le(b + 24, UINT64_MAX - 20, 8);
  KILN_ASSERT_STATUS(parse(b, size), DATA_LOSS, "params.bin's 18446744073709551595 bytes run past");
  memcpy(b, bytes, size);
  put_le(b + 24, params_size - 1, 8);
  KILN_ASSERT_STATUS(parse(b, size), INVALID_ARGUMENT,
                     "m.so: 1 bytes after params.bin at the end of the embedded model");
  memcpy(b, bytes, size);
  b[size] = 0; /* one byte more than the header says */
  KILN_ASSERT_STATUS(parse(b, size + 1), INVALID_ARGUMENT, "1 bytes after params.bin");
  memcpy(b, bytes, size);
  b[KILN_RUNTIME_MODEL_HEADER_SIZE + 2] = '\0';
  KILN_ASSERT_STATUS(parse(b, size), INVALID_ARGUMENT,
                     "m.so(graph.json): holds a NUL byte: not JSON text");
  memcpy(b, bytes, size);
  b[KILN_RUNTIME_MODEL_HEADER_SIZE + graph_size + 2] = 'X'; /* params.bin's magic */
  KILN_ASSERT_STATUS(parse(b, size), INVALID_ARGUMENT, "m.so(params.bin): not a kiln params file");
  /* the graph and the params moved by one byte: params.bin starts one late */
  memcpy(b, bytes, size);
  put_le(b + 16, graph_size + 1, 8);
  put_le(b + 24, params_size - 1, 8);
  KILN_ASSERT_STATUS(parse(b, size), INVALID_ARGUMENT, "m.so(params.bin)");
  free(b);
  free(bytes);
}

/* ---- a small ELF shared library, byte by byte ---- */

/* Offsets in the library below. */
enum {
  DATA_OFF = 64, /* .rodata: the symbol's 16 bytes */
  DATA_ADDR = 0x1000,
  STR_OFF = 80, /* .dynstr: "\0__kiln_target\0x\0" */
  STR_SIZE = 17,
  SYM_OFF = 104,  /* .dynsym: the null symbol, __kiln_target, x (undefined) */
  SHDR_OFF = 176, /* 4 section headers */
  ELF_SIZE = SHDR_OFF + 4 * 64,
};

static void section_header(unsigned char *at, uint32_t type, uint64_t addr, uint64_t offset,
                           uint64_t size, uint32_t link, uint64_t entsize) {
  put_le(at + 4, type, 4);
  put_le(at + 16, addr, 8);
  put_le(at + 24, offset, 8);
  put_le(at + 32, size, 8);
  put_le(at + 40, link, 4);
  put_le(at + 56, entsize, 8);
}

static void make_elf(unsigned char *b) {
  memset(b, 0, ELF_SIZE);
  memcpy(b, "\177ELF\2\1\1", 7);
  put_le(b + 16, 3, 2);   /* ET_DYN */
  put_le(b + 18, 183, 2); /* AArch64 */
  put_le(b + 40, SHDR_OFF, 8);
  put_le(b + 58, 64, 2);
  put_le(b + 60, 4, 2);
  memcpy(b + DATA_OFF, "triple=t cpu=c\0\0", 16);
  memcpy(b + STR_OFF, "\0__kiln_target\0x\0", STR_SIZE);
  unsigned char *sym = b + SYM_OFF + 24; /* __kiln_target in section 1 */
  put_le(sym, 1, 4);
  put_le(sym + 6, 1, 2);
  put_le(sym + 8, DATA_ADDR, 8);
  put_le(sym + 16, 15, 8);
  sym += 24; /* x: undefined */
  put_le(sym, 15, 4);
  section_header(b + SHDR_OFF + 64, 1, DATA_ADDR, DATA_OFF, 16, 0, 0);
  section_header(b + SHDR_OFF + 128, 3, 0, STR_OFF, STR_SIZE, 0, 0);
  section_header(b + SHDR_OFF + 192, 11, 0, SYM_OFF, 72, 2, 24);
}

static kiln_status_t find(const unsigned char *b, size_t size, const char *name,
                          const char **out_text) {
  kiln_elf_t elf;
  *out_text = NULL;
  KILN_RETURN_IF_ERROR(kiln_elf_parse(b, size, "lib.so", &elf));
  assert_int_equal(elf.machine, 183);
  const void *bytes = NULL;
  size_t length = 0;
  KILN_RETURN_IF_ERROR(kiln_elf_symbol(&elf, name, &bytes, &length));
  *out_text = bytes;
  return KILN_OK;
}

static void test_elf_reader(void **state) {
  (void)state;
  unsigned char b[ELF_SIZE], copy[ELF_SIZE];
  make_elf(b);
  const char *text = NULL;
  KILN_ASSERT_OK(find(b, ELF_SIZE, "__kiln_target", &text));
  assert_string_equal(text, "triple=t cpu=c");
  KILN_ASSERT_STATUS(find(b, ELF_SIZE, "x", &text), NOT_FOUND, "lib.so: no symbol x");
  KILN_ASSERT_STATUS(find(b, ELF_SIZE, "__kiln_model", &text), NOT_FOUND, "no symbol");
  assert_string_equal(kiln_elf_machine_name(183), "aarch64");
  assert_null(kiln_elf_machine_name(9999));

  /* every cut: an error, never a read past the end (each copy exact) */
  for (size_t cut = 0; cut < ELF_SIZE; ++cut) {
    unsigned char *part = malloc(cut > 0 ? cut : 1);
    memcpy(part, b, cut);
    kiln_status_t status = find(part, cut, "__kiln_target", &text);
    assert_true(status != KILN_OK);
    kiln_status_free(status);
    free(part);
  }
  KILN_ASSERT_STATUS(find(b, 40, "__kiln_target", &text), DATA_LOSS,
                     "cut short inside the ELF header");
  KILN_ASSERT_STATUS(find(b, ELF_SIZE - 1, "__kiln_target", &text), DATA_LOSS,
                     "lib.so: the section table (4 headers at offset 176) ends past the end");

  memcpy(copy, b, ELF_SIZE);
  copy[4] = 1;
  KILN_ASSERT_STATUS(find(copy, ELF_SIZE, "__kiln_target", &text), UNIMPLEMENTED,
                     "a 32-bit little-endian ELF file; kiln reads 64-bit little-endian");
  memcpy(copy, b, ELF_SIZE);
  put_le(copy + 16, 2, 2);
  KILN_ASSERT_STATUS(find(copy, ELF_SIZE, "__kiln_target", &text), INVALID_ARGUMENT,
                     "an ELF file of type 2, not a shared library");
  memcpy(copy, b, ELF_SIZE);
  put_le(copy + 58, 40, 2);
  KILN_ASSERT_STATUS(find(copy, ELF_SIZE, "__kiln_target", &text), INVALID_ARGUMENT,
                     "section headers of 40 bytes");
  memcpy(copy, b, ELF_SIZE); /* the symbol table past the end */
  put_le(copy + SHDR_OFF + 192 + 32, 72000, 8);
  KILN_ASSERT_STATUS(find(copy, ELF_SIZE, "__kiln_target", &text), DATA_LOSS,
                     "section 3 (72000 bytes at offset 104) ends past the end");
  memcpy(copy, b, ELF_SIZE); /* a string table that is not one */
  put_le(copy + SHDR_OFF + 192 + 40, 1, 4);
  KILN_ASSERT_STATUS(find(copy, ELF_SIZE, "__kiln_target", &text), INVALID_ARGUMENT,
                     "the dynamic symbol table (section 3) is malformed");
  memcpy(copy, b, ELF_SIZE); /* a name past the string table: matches nothing */
  put_le(copy + SYM_OFF + 24, 16, 4);
  KILN_ASSERT_STATUS(find(copy, ELF_SIZE, "__kiln_target", &text), NOT_FOUND, "no symbol");
  memcpy(copy, b, ELF_SIZE); /* contents past the section's end */
  put_le(copy + SYM_OFF + 24 + 16, 17, 8);
  KILN_ASSERT_STATUS(find(copy, ELF_SIZE, "__kiln_target", &text), INVALID_ARGUMENT,
                     "symbol __kiln_target (17 bytes at address 0x1000) is not inside its section");
  memcpy(copy, b, ELF_SIZE); /* below the section's address */
  put_le(copy + SYM_OFF + 24 + 8, DATA_ADDR - 1, 8);
  KILN_ASSERT_STATUS(find(copy, ELF_SIZE, "__kiln_target", &text), INVALID_ARGUMENT,
                     "is not inside its section");
  memcpy(copy, b, ELF_SIZE); /* a section that does not exist */
  put_le(copy + SYM_OFF + 24 + 6, 9, 2);
  KILN_ASSERT_STATUS(find(copy, ELF_SIZE, "__kiln_target", &text), INVALID_ARGUMENT,
                     "symbol __kiln_target is in section 9, which does not exist");
  memcpy(copy, b, ELF_SIZE); /* .bss: no contents in the file */
  put_le(copy + SHDR_OFF + 64 + 4, 8, 4);
  KILN_ASSERT_STATUS(find(copy, ELF_SIZE, "__kiln_target", &text), INVALID_ARGUMENT,
                     "in a section with no contents in the file");
  memcpy(copy, b, ELF_SIZE); /* the section's bytes past the end of the file */
  put_le(copy + SHDR_OFF + 64 + 24, ELF_SIZE - 8, 8);
  KILN_ASSERT_STATUS(find(copy, ELF_SIZE, "__kiln_target", &text), DATA_LOSS,
                     "section 1 (16 bytes at offset 424) ends past the end of the file");
  memcpy(copy, b, ELF_SIZE); /* no section table: no symbols */
  put_le(copy + 60, 0, 2);
  KILN_ASSERT_STATUS(find(copy, ELF_SIZE, "__kiln_target", &text), NOT_FOUND, "no symbol");
  KILN_ASSERT_STATUS(find((const unsigned char *)"MZ\220\0", 4, "x", &text), INVALID_ARGUMENT,
                     "lib.so: not an ELF file");
}

/* The model read from a library's bytes: the ELF reader, then the
 * embedded model's parser, each error starting with the source name. */
static void test_model_file_parse(void **state) {
  (void)state;
  unsigned char b[ELF_SIZE];
  make_elf(b);
  char *json = NULL;
  kiln_runtime_params_t *params = NULL;
  KILN_ASSERT_STATUS(
      kiln_runtime_model_file_parse(kiln_allocator_system(), b, ELF_SIZE, "lib.so", &json, &params),
      NOT_FOUND, "lib.so holds no model (no __kiln_model symbol): a library of kernels alone");
  /* __kiln_target renamed __kiln_model ("__kiln_model\0\0": as long): its
   * 15 bytes are not an embedded model */
  memcpy(b + STR_OFF + 1, "__kiln_model\0\0", 14);
  KILN_ASSERT_STATUS(
      kiln_runtime_model_file_parse(kiln_allocator_system(), b, ELF_SIZE, "lib.so", &json, &params),
      DATA_LOSS, "lib.so: the embedded model is 15 bytes, cut short");
  assert_null(json);
  assert_null(params);
  KILN_ASSERT_STATUS(
      kiln_runtime_model_file_read(kiln_allocator_system(), "/nonexistent/m.so", &json, &params),
      NOT_FOUND, "/nonexistent/m.so: cannot open");
}

/* A FIFO given as a one-file model is refused, never waited on. */
static void test_fifo_refused(void **state) {
  (void)state;
  char *dir = kiln_test_make_temp_dir();
  char *path = kiln_test_path_join(dir, "model.so");
  assert_int_equal(mkfifo(path, 0600), 0);
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_STATUS(kiln_graph_executor_load(kiln_allocator_system(), path, &gx), IO_ERROR,
                     "not a regular file (a FIFO)");
  char *json = NULL;
  kiln_runtime_params_t *params = NULL;
  KILN_ASSERT_STATUS(kiln_runtime_model_file_read(kiln_allocator_system(), path, &json, &params),
                     IO_ERROR, "not a regular file (a FIFO)");
  kiln_test_remove_dir(dir);
  free(path);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_embedded_round_trip),     cmocka_unit_test(test_embedded_cut_short),
      cmocka_unit_test(test_embedded_header_checked), cmocka_unit_test(test_elf_reader),
      cmocka_unit_test(test_model_file_parse),        cmocka_unit_test(test_fifo_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
