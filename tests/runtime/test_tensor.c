/*
 * Tests of the shape helpers and of tensors: creation for several dtypes and
 * ranks, zero fill, storage alignment, the DLTensor view, copies, reference
 * counting (one block per tensor, freed at the last release, checked with the
 * counting allocator, and from several threads at once), every bad-input
 * error, and allocation failures.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "kiln/tensor.h"
#include "kiln_test.h"

/* ---- shapes ---- */

static void test_element_count(void **state) {
  (void)state;
  int64_t count = -1;
  KILN_ASSERT_OK(kiln_shape_element_count(0, NULL, &count));
  assert_int_equal(count, 1);
  KILN_ASSERT_OK(kiln_shape_element_count(4, (const int64_t[]){1, 3, 224, 224}, &count));
  assert_int_equal(count, 150528);
  KILN_ASSERT_OK(kiln_shape_element_count(2, (const int64_t[]){0, 3}, &count));
  assert_int_equal(count, 0);
  /* A zero dim makes the count zero even when the other dims would overflow. */
  KILN_ASSERT_OK(kiln_shape_element_count(3, (const int64_t[]){INT64_MAX, INT64_MAX, 0}, &count));
  assert_int_equal(count, 0);
  KILN_ASSERT_OK(kiln_shape_element_count(2, (const int64_t[]){INT64_MAX, 1}, &count));
  assert_int_equal(count, INT64_MAX);
  int64_t ones[KILN_MAX_RANK];
  for (int i = 0; i < KILN_MAX_RANK; ++i) {
    ones[i] = 1;
  }
  KILN_ASSERT_OK(kiln_shape_element_count(KILN_MAX_RANK, ones, &count));
  assert_int_equal(count, 1);
}

static void test_element_count_errors(void **state) {
  (void)state;
  int64_t count = 7;
  KILN_ASSERT_STATUS(kiln_shape_element_count(3, (const int64_t[]){1, 2, -3}, &count),
                     INVALID_ARGUMENT, "dim 2 is -3 in shape (1, 2, -3)");
  KILN_ASSERT_STATUS(kiln_shape_element_count(2, (const int64_t[]){-1, 0}, &count),
                     INVALID_ARGUMENT, "dim 0 is -1");
  KILN_ASSERT_STATUS(kiln_shape_element_count(-1, NULL, &count), INVALID_ARGUMENT,
                     "rank -1 is outside [0, 32]");
  int64_t ones[KILN_MAX_RANK + 1];
  for (int i = 0; i <= KILN_MAX_RANK; ++i) {
    ones[i] = 1;
  }
  KILN_ASSERT_STATUS(kiln_shape_element_count(KILN_MAX_RANK + 1, ones, &count), INVALID_ARGUMENT,
                     "rank 33 is outside [0, 32]");
  KILN_ASSERT_STATUS(kiln_shape_element_count(2, NULL, &count), INVALID_ARGUMENT,
                     "shape of rank 2 is NULL");
  KILN_ASSERT_STATUS(
      kiln_shape_element_count(2, (const int64_t[]){INT64_C(4611686018427387904), 4}, &count),
      OUT_OF_RANGE, "shape (4611686018427387904, 4) overflows int64");
  KILN_ASSERT_STATUS(kiln_shape_element_count(
                         3, (const int64_t[]){INT64_C(3037000500), INT64_C(3037000500), 1}, &count),
                     OUT_OF_RANGE, "overflows int64 at dim 1");
  assert_int_equal(count, 7);
}

static void test_byte_size(void **state) {
  (void)state;
  size_t size = 0;
  KILN_ASSERT_OK(
      kiln_shape_byte_size(KILN_DTYPE_FLOAT32, 4, (const int64_t[]){1, 3, 224, 224}, &size));
  assert_int_equal(size, 602112);
  KILN_ASSERT_OK(kiln_shape_byte_size(KILN_DTYPE_FLOAT64, 0, NULL, &size));
  assert_int_equal(size, 8);
  KILN_ASSERT_OK(kiln_shape_byte_size(KILN_DTYPE_BOOL, 1, (const int64_t[]){5}, &size));
  assert_int_equal(size, 5);
  KILN_ASSERT_OK(kiln_shape_byte_size(KILN_DTYPE_INT16, 2, (const int64_t[]){0, 3}, &size));
  assert_int_equal(size, 0);

  size = 9;
  /* Fits int64 elements, but not size_t bytes. */
  KILN_ASSERT_STATUS(kiln_shape_byte_size(KILN_DTYPE_FLOAT32, 2,
                                          (const int64_t[]){INT64_C(4611686018427387904), 1},
                                          &size),
                     OUT_OF_RANGE, "byte size of float32 shape (4611686018427387904, 1)");
  KILN_ASSERT_STATUS(kiln_shape_byte_size(KILN_DTYPE_UINT8, 2,
                                          (const int64_t[]){INT64_C(4611686018427387904), 4},
                                          &size),
                     OUT_OF_RANGE, "overflows int64");
  KILN_ASSERT_STATUS(kiln_shape_byte_size(KILN_DTYPE_COUNT_, 1, (const int64_t[]){1}, &size),
                     INVALID_ARGUMENT, "dtype 13 is not a kiln dtype");
  KILN_ASSERT_STATUS(kiln_shape_byte_size(KILN_DTYPE_INT8, 1, (const int64_t[]){-5}, &size),
                     INVALID_ARGUMENT, "dim 0 is -5 in shape (-5,)");
  assert_int_equal(size, 9);
}

static void test_compact_strides(void **state) {
  (void)state;
  int64_t strides[4] = {-1, -1, -1, -1};
  kiln_shape_compact_strides(4, (const int64_t[]){1, 3, 224, 224}, strides);
  assert_int_equal(strides[0], 150528);
  assert_int_equal(strides[1], 50176);
  assert_int_equal(strides[2], 224);
  assert_int_equal(strides[3], 1);
  kiln_shape_compact_strides(1, (const int64_t[]){5}, strides);
  assert_int_equal(strides[0], 1);
  /* Zero dims count as one, so the strides stay distinct. */
  kiln_shape_compact_strides(3, (const int64_t[]){0, 3, 0}, strides);
  assert_int_equal(strides[0], 3);
  assert_int_equal(strides[1], 1);
  assert_int_equal(strides[2], 1);
  /* An overflowing stride (only possible with a zero dim) saturates. */
  kiln_shape_compact_strides(3, (const int64_t[]){0, INT64_MAX, 4}, strides);
  assert_int_equal(strides[0], INT64_MAX);
  assert_int_equal(strides[1], 4);
  kiln_shape_compact_strides(0, NULL, strides);
}

static void test_shape_equal(void **state) {
  (void)state;
  const int64_t a[] = {1, 3, 224, 224};
  const int64_t b[] = {1, 3, 224, 224};
  const int64_t c[] = {1, 3, 224, 225};
  assert_true(kiln_shape_equal(4, a, 4, b));
  assert_false(kiln_shape_equal(4, a, 4, c));
  assert_false(kiln_shape_equal(4, a, 3, b));
  assert_true(kiln_shape_equal(3, a, 3, c));
  assert_true(kiln_shape_equal(0, NULL, 0, a));
  assert_false(kiln_shape_equal(-1, a, -1, a));
}

static void test_shape_format(void **state) {
  (void)state;
  char text[KILN_SHAPE_TEXT_CAPACITY];
  assert_int_equal(kiln_shape_format(4, (const int64_t[]){1, 3, 224, 224}, text, sizeof(text)), 16);
  assert_string_equal(text, "(1, 3, 224, 224)");
  assert_int_equal(kiln_shape_format(0, NULL, text, sizeof(text)), 2);
  assert_string_equal(text, "()");
  assert_int_equal(kiln_shape_format(1, (const int64_t[]){5}, text, sizeof(text)), 4);
  assert_string_equal(text, "(5,)");
  kiln_shape_format(2, (const int64_t[]){-3, INT64_MIN}, text, sizeof(text));
  assert_string_equal(text, "(-3, -9223372036854775808)");
  kiln_shape_format(-2, NULL, text, sizeof(text));
  assert_string_equal(text, "(invalid rank -2)");

  /* Truncation behaves as snprintf: the return is the full length. */
  char small[6];
  assert_int_equal(kiln_shape_format(4, (const int64_t[]){1, 3, 224, 224}, small, sizeof(small)),
                   16);
  assert_string_equal(small, "(1, 3");
  assert_int_equal(kiln_shape_format(2, (const int64_t[]){10, 20}, NULL, 0), 8);
  char one[1] = {'x'};
  assert_int_equal(kiln_shape_format(1, (const int64_t[]){7}, one, sizeof(one)), 4);
  assert_int_equal(one[0], '\0');

  /* The capacity holds the longest shape. */
  int64_t longest[KILN_MAX_RANK];
  for (int i = 0; i < KILN_MAX_RANK; ++i) {
    longest[i] = INT64_MIN;
  }
  assert_true(kiln_shape_format(KILN_MAX_RANK, longest, NULL, 0) < KILN_SHAPE_TEXT_CAPACITY);
}

/* ---- tensors ---- */

static void check_tensor(const kiln_tensor_t *tensor, kiln_dtype_t dtype, int ndim,
                         const int64_t *shape) {
  assert_int_equal(kiln_tensor_dtype(tensor), dtype);
  assert_int_equal(kiln_tensor_ndim(tensor), ndim);
  int64_t count;
  KILN_ASSERT_OK(kiln_shape_element_count(ndim, shape, &count));
  assert_int_equal(kiln_tensor_element_count(tensor), count);
  assert_int_equal(kiln_tensor_byte_size(tensor), (size_t)count * kiln_dtype_size(dtype));
  assert_true(kiln_shape_equal(ndim, kiln_tensor_shape(tensor), ndim, shape));

  const DLTensor *dl = kiln_tensor_dl(tensor);
  assert_ptr_equal(dl->data, kiln_tensor_data(tensor));
  assert_int_equal((uintptr_t)dl->data % KILN_TENSOR_ALIGNMENT, 0);
  assert_int_equal(dl->device.device_type, kDLCPU);
  assert_int_equal(dl->device.device_id, 0);
  assert_int_equal(dl->ndim, ndim);
  DLDataType expected = kiln_dtype_to_dl(dtype);
  assert_int_equal(dl->dtype.code, expected.code);
  assert_int_equal(dl->dtype.bits, expected.bits);
  assert_int_equal(dl->dtype.lanes, 1);
  assert_ptr_equal(dl->shape, kiln_tensor_shape(tensor));
  assert_non_null(dl->shape);
  assert_non_null(dl->strides);
  assert_int_equal(dl->byte_offset, 0);
  int64_t strides[KILN_MAX_RANK];
  kiln_shape_compact_strides(ndim, shape, strides);
  for (int i = 0; i < ndim; ++i) {
    assert_int_equal(dl->strides[i], strides[i]);
  }
}

static void test_create_zero_filled(void **state) {
  (void)state;
  static const struct {
    kiln_dtype_t dtype;
    int ndim;
    int64_t shape[4];
  } cases[] = {
      {KILN_DTYPE_FLOAT32, 0, {0}},
      {KILN_DTYPE_FLOAT32, 1, {5}},
      {KILN_DTYPE_FLOAT32, 4, {1, 3, 7, 9}},
      {KILN_DTYPE_FLOAT16, 2, {3, 5}},
      {KILN_DTYPE_BFLOAT16, 1, {17}},
      {KILN_DTYPE_FLOAT64, 3, {2, 3, 4}},
      {KILN_DTYPE_INT8, 1, {1}},
      {KILN_DTYPE_INT64, 4, {2, 1, 1, 3}},
      {KILN_DTYPE_UINT8, 2, {0, 3}},
      {KILN_DTYPE_BOOL, 1, {65}},
      {KILN_DTYPE_UINT64, 0, {0}},
      {KILN_DTYPE_INT32, 2, {100, 100}},
  };
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_allocator_t allocator = kiln_counting_allocator_get(&counting);
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    kiln_tensor_t *tensor = NULL;
    KILN_ASSERT_OK(
        kiln_tensor_create(allocator, cases[i].dtype, cases[i].ndim, cases[i].shape, &tensor));
    assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 1);
    check_tensor(tensor, cases[i].dtype, cases[i].ndim, cases[i].shape);
    const unsigned char *bytes = kiln_tensor_data(tensor);
    for (size_t b = 0; b < kiln_tensor_byte_size(tensor); ++b) {
      assert_int_equal(bytes[b], 0);
    }
    /* The storage is writable to its last byte. */
    memset(kiln_tensor_data(tensor), 0xab, kiln_tensor_byte_size(tensor));
    kiln_tensor_release(tensor);
    assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);
  }
  assert_int_equal(kiln_counting_allocator_counts(&counting).allocations,
                   sizeof(cases) / sizeof(cases[0]));
}

static void test_create_max_rank(void **state) {
  (void)state;
  int64_t shape[KILN_MAX_RANK];
  for (int i = 0; i < KILN_MAX_RANK; ++i) {
    shape[i] = i % 5 == 0 ? 2 : 1;
  }
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_INT16, KILN_MAX_RANK, shape, &tensor));
  check_tensor(tensor, KILN_DTYPE_INT16, KILN_MAX_RANK, shape);
  assert_int_equal(kiln_tensor_element_count(tensor), 128);
  kiln_tensor_release(tensor);
}

static void test_create_copy(void **state) {
  (void)state;
  float values[2][3] = {{1, 2, 3}, {4, 5, 6}};
  const int64_t shape[] = {2, 3};
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 2, shape,
                                         values, sizeof(values), &tensor));
  check_tensor(tensor, KILN_DTYPE_FLOAT32, 2, shape);
  assert_ptr_not_equal(kiln_tensor_data(tensor), values);
  assert_memory_equal(kiln_tensor_data(tensor), values, sizeof(values));
  values[0][0] = 100; /* a copy, not a view */
  assert_true(((const float *)kiln_tensor_data(tensor))[0] == 1.0f);
  kiln_tensor_release(tensor);

  /* An empty tensor takes no data at all. */
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_UINT8, 2,
                                         (const int64_t[]){0, 3}, NULL, 0, &tensor));
  assert_int_equal(kiln_tensor_byte_size(tensor), 0);
  kiln_tensor_release(tensor);

  double scalar = 2.5;
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT64, 0, NULL,
                                         &scalar, sizeof(scalar), &tensor));
  assert_true(*(const double *)kiln_tensor_data(tensor) == 2.5);
  kiln_tensor_release(tensor);
}

static void test_retain_release(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_counting_allocator_get(&counting), KILN_DTYPE_FLOAT32, 1,
                                    (const int64_t[]){1000}, &tensor));
  assert_int_equal(kiln_counting_allocator_counts(&counting).allocations, 1);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 1);
  assert_true(kiln_counting_allocator_counts(&counting).live_bytes >= 4000);
  kiln_tensor_retain(tensor);
  kiln_tensor_retain(tensor);
  kiln_tensor_release(tensor);
  kiln_tensor_release(tensor);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 1);
  /* Still usable with one reference left. */
  assert_int_equal(kiln_tensor_element_count(tensor), 1000);
  kiln_tensor_release(tensor);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_bytes, 0);
  assert_int_equal(kiln_counting_allocator_counts(&counting).frees, 1);
  assert_int_equal(kiln_counting_allocator_counts(&counting).allocations, 1);
  kiln_tensor_release(NULL);
}

typedef struct hammer_t {
  kiln_tensor_t *tensor;
  int rounds;
} hammer_t;

static void *hammer_retain_release(void *context) {
  hammer_t *hammer = context;
  for (int i = 0; i < hammer->rounds; ++i) {
    kiln_tensor_retain(hammer->tensor);
    kiln_tensor_retain(hammer->tensor);
    kiln_tensor_release(hammer->tensor);
    kiln_tensor_release(hammer->tensor);
  }
  /* Each thread drops the reference it was handed. */
  kiln_tensor_release(hammer->tensor);
  return NULL;
}

static void test_retain_release_across_threads(void **state) {
  (void)state;
  enum { THREADS = 4 };
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_counting_allocator_get(&counting), KILN_DTYPE_FLOAT32, 1,
                                    (const int64_t[]){16}, &tensor));
  pthread_t threads[THREADS];
  hammer_t hammer = {tensor, 20000};
  for (int i = 0; i < THREADS; ++i) {
    kiln_tensor_retain(tensor);
  }
  for (int i = 0; i < THREADS; ++i) {
    assert_int_equal(pthread_create(&threads[i], NULL, hammer_retain_release, &hammer), 0);
  }
  for (int i = 0; i < THREADS; ++i) {
    assert_int_equal(pthread_join(threads[i], NULL), 0);
  }
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 1);
  kiln_tensor_release(tensor);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);
}

static void test_release_uses_the_creating_allocator(void **state) {
  (void)state;
  kiln_counting_allocator_t first, second;
  kiln_counting_allocator_initialize(&first, kiln_allocator_system());
  kiln_counting_allocator_initialize(&second, kiln_allocator_system());
  kiln_tensor_t *a = NULL, *b = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_counting_allocator_get(&first), KILN_DTYPE_INT8, 1,
                                    (const int64_t[]){3}, &a));
  KILN_ASSERT_OK(kiln_tensor_create(kiln_counting_allocator_get(&second), KILN_DTYPE_INT8, 1,
                                    (const int64_t[]){3}, &b));
  kiln_tensor_release(b);
  assert_int_equal(kiln_counting_allocator_counts(&first).live_blocks, 1);
  assert_int_equal(kiln_counting_allocator_counts(&second).live_blocks, 0);
  kiln_tensor_release(a);
  assert_int_equal(kiln_counting_allocator_counts(&first).live_blocks, 0);
}

static void test_bad_inputs(void **state) {
  (void)state;
  kiln_allocator_t system = kiln_allocator_system();
  kiln_tensor_t *tensor = (kiln_tensor_t *)1;
  const int64_t shape[] = {2, 3};
  KILN_ASSERT_STATUS(kiln_tensor_create(system, KILN_DTYPE_COUNT_, 2, shape, &tensor),
                     INVALID_ARGUMENT, "dtype 13 is not a kiln dtype");
  assert_null(tensor);
  KILN_ASSERT_STATUS(kiln_tensor_create(system, (kiln_dtype_t)-4, 2, shape, &tensor),
                     INVALID_ARGUMENT, "dtype -4");
  KILN_ASSERT_STATUS(
      kiln_tensor_create(system, KILN_DTYPE_FLOAT32, 3, (const int64_t[]){1, 2, -3}, &tensor),
      INVALID_ARGUMENT, "dim 2 is -3");
  int64_t big[KILN_MAX_RANK + 1];
  for (int i = 0; i <= KILN_MAX_RANK; ++i) {
    big[i] = 1;
  }
  KILN_ASSERT_STATUS(
      kiln_tensor_create(system, KILN_DTYPE_FLOAT32, KILN_MAX_RANK + 1, big, &tensor),
      INVALID_ARGUMENT, "rank 33");
  KILN_ASSERT_STATUS(kiln_tensor_create(system, KILN_DTYPE_FLOAT32, -1, shape, &tensor),
                     INVALID_ARGUMENT, "rank -1");
  KILN_ASSERT_STATUS(kiln_tensor_create(system, KILN_DTYPE_FLOAT32, 2, NULL, &tensor),
                     INVALID_ARGUMENT, "NULL");
  KILN_ASSERT_STATUS(kiln_tensor_create(system, KILN_DTYPE_FLOAT32, 2,
                                        (const int64_t[]){INT64_C(4611686018427387904), 4},
                                        &tensor),
                     OUT_OF_RANGE, "overflows");
  KILN_ASSERT_STATUS(kiln_tensor_create(system, KILN_DTYPE_FLOAT64, 1,
                                        (const int64_t[]){INT64_C(4611686018427387904)}, &tensor),
                     OUT_OF_RANGE, "byte size of float64 shape");
  /* A byte size that fits size_t, but not with the header added. */
  KILN_ASSERT_STATUS(kiln_tensor_create(system, KILN_DTYPE_FLOAT64, 1,
                                        (const int64_t[]){INT64_C(2305843009213693951)}, &tensor),
                     RESOURCE_EXHAUSTED, "a tensor of 18446744073709551608 bytes is too large");
  assert_null(tensor);

  float data[6] = {0};
  KILN_ASSERT_STATUS(
      kiln_tensor_create_copy(system, KILN_DTYPE_FLOAT32, 2, shape, data, 20, &tensor),
      INVALID_ARGUMENT, "data is 20 bytes but a float32 tensor of shape (2, 3) needs 24 bytes");
  KILN_ASSERT_STATUS(
      kiln_tensor_create_copy(system, KILN_DTYPE_FLOAT32, 2, shape, data, 28, &tensor),
      INVALID_ARGUMENT, "data is 28 bytes");
  KILN_ASSERT_STATUS(
      kiln_tensor_create_copy(system, KILN_DTYPE_FLOAT32, 2, shape, NULL, 24, &tensor),
      INVALID_ARGUMENT, "data of 24 bytes is NULL");
  KILN_ASSERT_STATUS(kiln_tensor_create_copy(system, KILN_DTYPE_FLOAT32, 2,
                                             (const int64_t[]){2, -1}, data, 24, &tensor),
                     INVALID_ARGUMENT, "dim 1 is -1");
  assert_null(tensor);
}

typedef struct create_case_t {
  kiln_dtype_t dtype;
  int ndim;
  int64_t shape[3];
  int copy;
} create_case_t;

static kiln_status_t create_scenario(kiln_allocator_t allocator, void *context) {
  const create_case_t *c = context;
  kiln_tensor_t *tensor = NULL;
  if (c->copy) {
    unsigned char data[64];
    memset(data, 7, sizeof(data));
    size_t size;
    KILN_RETURN_IF_ERROR(kiln_shape_byte_size(c->dtype, c->ndim, c->shape, &size));
    KILN_RETURN_IF_ERROR(
        kiln_tensor_create_copy(allocator, c->dtype, c->ndim, c->shape, data, size, &tensor));
  } else {
    KILN_RETURN_IF_ERROR(kiln_tensor_create(allocator, c->dtype, c->ndim, c->shape, &tensor));
  }
  kiln_tensor_retain(tensor);
  kiln_tensor_release(tensor);
  kiln_tensor_release(tensor);
  return KILN_OK;
}

static void test_allocation_failures(void **state) {
  (void)state;
  create_case_t cases[] = {
      {KILN_DTYPE_FLOAT32, 3, {2, 3, 2}, 0},
      {KILN_DTYPE_INT8, 0, {0}, 0},
      {KILN_DTYPE_FLOAT64, 2, {2, 4}, 1},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    assert_int_equal(kiln_test_sweep_allocation_failures(create_scenario, &cases[i]), 1);
  }
}

/* Every dtype reads back as the double it holds. */
static void test_element_as_double(void **state) {
  (void)state;
  for (int d = 0; d < KILN_DTYPE_COUNT_; ++d) {
    kiln_dtype_t dtype = (kiln_dtype_t)d;
    kiln_tensor_t *tensor = NULL;
    KILN_ASSERT_OK(
        kiln_tensor_create(kiln_allocator_system(), dtype, 1, (const int64_t[]){2}, &tensor));
    unsigned char *bytes = kiln_tensor_data(tensor);
    size_t width = kiln_tensor_byte_size(tensor) / 2;
    double expected = dtype == KILN_DTYPE_BOOL ? 1.0 : 3.0;
    switch (dtype) {
    case KILN_DTYPE_FLOAT32:
      ((float *)bytes)[1] = 3.0f;
      break;
    case KILN_DTYPE_FLOAT64:
      ((double *)bytes)[1] = 3.0;
      break;
    case KILN_DTYPE_FLOAT16:
      ((uint16_t *)bytes)[1] = kiln_float32_to_float16(3.0f);
      break;
    case KILN_DTYPE_BFLOAT16:
      ((uint16_t *)bytes)[1] = kiln_float32_to_bfloat16(3.0f);
      break;
    case KILN_DTYPE_INT8:
    case KILN_DTYPE_INT16:
    case KILN_DTYPE_INT32:
    case KILN_DTYPE_INT64:
    case KILN_DTYPE_UINT8:
    case KILN_DTYPE_UINT16:
    case KILN_DTYPE_UINT32:
    case KILN_DTYPE_UINT64:
    case KILN_DTYPE_BOOL:
      bytes[width] = (unsigned char)expected; /* little-endian low byte */
      break;
    case KILN_DTYPE_COUNT_:
      break;
    }
    assert_true(kiln_tensor_element_as_double(tensor, 0) == 0.0);
    assert_true(kiln_tensor_element_as_double(tensor, 1) == expected);
    kiln_tensor_release(tensor);
  }
}

/* An external tensor views storage it does not own; the owner's release runs
 * once, at the last release, after the header is freed. */
static void record_release(void *owner) {
  ++*(int *)owner;
}

static void test_create_external(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_allocator_t allocator = kiln_counting_allocator_get(&counting);
  float data[6] = {1, 2, 3, 4, 5, 6};
  int releases = 0;
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_tensor_create_external(allocator, KILN_DTYPE_FLOAT32, 2,
                                             (const int64_t[]){2, 3}, data, record_release,
                                             &releases, &tensor));
  assert_ptr_equal(kiln_tensor_data(tensor), data);
  assert_int_equal(kiln_tensor_byte_size(tensor), sizeof(data));
  const DLTensor *dl = kiln_tensor_dl(tensor);
  assert_int_equal(dl->strides[0], 3);
  assert_int_equal(dl->strides[1], 1);
  assert_true(kiln_tensor_element_as_double(tensor, 5) == 6.0);
  assert_true(kiln_counting_allocator_counts(&counting).live_bytes < (int64_t)256);
  kiln_tensor_retain(tensor);
  kiln_tensor_release(tensor);
  assert_int_equal(releases, 0);
  kiln_tensor_release(tensor);
  assert_int_equal(releases, 1);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);

  KILN_ASSERT_OK(
      kiln_tensor_create_external(allocator, KILN_DTYPE_INT8, 0, NULL, data, NULL, NULL, &tensor));
  kiln_tensor_release(tensor);
  KILN_ASSERT_STATUS(kiln_tensor_create_external(allocator, KILN_DTYPE_FLOAT32, 1,
                                                 (const int64_t[]){2}, NULL, record_release,
                                                 &releases, &tensor),
                     INVALID_ARGUMENT, "external data of 8 bytes is NULL");
  KILN_ASSERT_STATUS(kiln_tensor_create_external(allocator, KILN_DTYPE_FLOAT32, 1,
                                                 (const int64_t[]){2}, (char *)data + 2,
                                                 record_release, &releases, &tensor),
                     INVALID_ARGUMENT, "is not aligned to 4 bytes");
  KILN_ASSERT_STATUS(kiln_tensor_create_external(allocator, KILN_DTYPE_FLOAT32, 1,
                                                 (const int64_t[]){-2}, data, record_release,
                                                 &releases, &tensor),
                     INVALID_ARGUMENT, "dim 0 is -2");
  assert_null(tensor);
  assert_int_equal(releases, 1);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_element_as_double),
      cmocka_unit_test(test_element_count),
      cmocka_unit_test(test_element_count_errors),
      cmocka_unit_test(test_byte_size),
      cmocka_unit_test(test_compact_strides),
      cmocka_unit_test(test_shape_equal),
      cmocka_unit_test(test_shape_format),
      cmocka_unit_test(test_create_zero_filled),
      cmocka_unit_test(test_create_max_rank),
      cmocka_unit_test(test_create_copy),
      cmocka_unit_test(test_retain_release),
      cmocka_unit_test(test_retain_release_across_threads),
      cmocka_unit_test(test_release_uses_the_creating_allocator),
      cmocka_unit_test(test_bad_inputs),
      cmocka_unit_test(test_allocation_failures),
      cmocka_unit_test(test_create_external),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
