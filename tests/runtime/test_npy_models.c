/*
 * The .npy reader and writer on the shared models' real inputs and outputs.
 *
 * Each model in the shared models folder comes with <model>.input.npy and
 * <model>.output.npy, float32 arrays written by NumPy. Every one must read as
 * float32 with the model's shape and finite values, and serialize back to the
 * very same bytes. Skipped (exit 77) when the folder is not there.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "kiln/npy.h"
#include "kiln_test.h"

typedef struct model_t {
  const char *name;
  int input_ndim;
  int64_t input_shape[4];
  int64_t output_shape[2];
  int files_seen;
} model_t;

static model_t models[] = {
    {"resnet18", 4, {1, 3, 224, 224}, {1, 1000}, 0},
    {"mobilenet_v2", 4, {1, 3, 224, 224}, {1, 1000}, 0},
    {"squeezenet1_1", 4, {1, 3, 224, 224}, {1, 1000}, 0},
    {"mlp", 2, {1, 784}, {1, 10}, 0},
};
#define MODEL_COUNT (sizeof(models) / sizeof(models[0]))

static int ends_with(const char *text, const char *suffix) {
  size_t length = strlen(text), suffix_length = strlen(suffix);
  return length >= suffix_length && strcmp(text + length - suffix_length, suffix) == 0;
}

/* The model a file belongs to: "<model>.input.npy" or "<model>.output.npy". */
static model_t *model_of(const char *file_name, int *out_is_input) {
  for (size_t i = 0; i < MODEL_COUNT; ++i) {
    size_t length = strlen(models[i].name);
    if (strncmp(file_name, models[i].name, length) != 0) {
      continue;
    }
    if (strcmp(file_name + length, ".input.npy") == 0 ||
        strcmp(file_name + length, ".output.npy") == 0) {
      *out_is_input = strcmp(file_name + length, ".input.npy") == 0;
      return &models[i];
    }
  }
  return NULL;
}

static void check_file(const char *dir, const char *file_name) {
  char *path = kiln_test_path_join(dir, file_name);
  kiln_allocator_t system = kiln_allocator_system();
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_npy_read_file(system, path, &tensor));
  assert_int_equal(kiln_tensor_dtype(tensor), KILN_DTYPE_FLOAT32);

  int is_input = 0;
  model_t *model = model_of(file_name, &is_input);
  if (model != NULL) {
    int ndim = is_input ? model->input_ndim : 2;
    const int64_t *shape = is_input ? model->input_shape : model->output_shape;
    if (!kiln_shape_equal(kiln_tensor_ndim(tensor), kiln_tensor_shape(tensor), ndim, shape)) {
      char got[KILN_SHAPE_TEXT_CAPACITY], want[KILN_SHAPE_TEXT_CAPACITY];
      kiln_shape_format(kiln_tensor_ndim(tensor), kiln_tensor_shape(tensor), got, sizeof(got));
      kiln_shape_format(ndim, shape, want, sizeof(want));
      fail_msg("%s: shape %s, expected %s", path, got, want);
    }
    model->files_seen += 1;
  }

  const float *values = kiln_tensor_data(tensor);
  for (int64_t i = 0; i < kiln_tensor_element_count(tensor); ++i) {
    if (!isfinite(values[i])) {
      fail_msg("%s: element %lld is not finite", path, (long long)i);
    }
  }

  void *file_bytes = NULL;
  size_t file_size = 0;
  KILN_ASSERT_OK(kiln_file_read_all(system, path, &file_bytes, &file_size));
  void *written = NULL;
  size_t written_size = 0;
  KILN_ASSERT_OK(kiln_npy_serialize(system, tensor, &written, &written_size));
  if (written_size != file_size || memcmp(written, file_bytes, file_size) != 0) {
    fail_msg("%s: serialized %zu bytes differ from the file's %zu", path, written_size, file_size);
  }
  print_message("%s: %lld float32 values, re-serialized byte for byte\n", file_name,
                (long long)kiln_tensor_element_count(tensor));
  kiln_allocator_free(system, written);
  kiln_allocator_free(system, file_bytes);
  kiln_tensor_release(tensor);
  free(path);
}

static void test_shared_model_arrays(void **state) {
  (void)state;
  const char *dir = kiln_test_shared_models_dir();
  DIR *listing = opendir(dir);
  assert_non_null(listing);
  int files = 0;
  struct dirent *entry;
  while ((entry = readdir(listing)) != NULL) {
    if (ends_with(entry->d_name, ".input.npy") || ends_with(entry->d_name, ".output.npy")) {
      check_file(dir, entry->d_name);
      files += 1;
    }
  }
  closedir(listing);
  for (size_t i = 0; i < MODEL_COUNT; ++i) {
    if (models[i].files_seen != 2) {
      fail_msg("%s/%s: expected an .input.npy and an .output.npy, found %d of them", dir,
               models[i].name, models[i].files_seen);
    }
  }
  assert_true(files >= 2 * (int)MODEL_COUNT);
}

int main(void) {
  if (kiln_test_shared_models_dir() == NULL) {
    printf("skipped: the shared models folder was not found at %s\n", KILN_SHARED_MODELS_DIR);
    return KILN_TEST_SKIP_EXIT_CODE;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shared_model_arrays),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
