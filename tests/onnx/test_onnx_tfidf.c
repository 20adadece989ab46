/*
 * TfIdfVectorizer (onnx_ops_tfidf.c) on the interpreter, X given at run
 * time: a pool of unigrams and bigrams counted with skips (the second
 * distance adds the pairs two apart; unigrams count once per position),
 * a permuted ngram_indexes, the three modes with and without weights, a
 * 1-D int64 X with min_gram_length 2 (the unigrams of the pool do not
 * count), and a row too short for any bigram. Expected counts worked out by
 * hand. Then the errors: a string pool, an unknown mode, too few
 * ngram_indexes or weights, a float X, ngram_counts out of order.
 */
#include <string.h>

#include "onnx_run.h"

/* Pool: unigrams 1 and 2, bigrams (1, 2) and (2, 1); pool n-gram g goes to
 * column indexes[g] = 3, 0, 1, 2. */
static Onnx__NodeProto *tfidf_model(ob_t *ob, kiln_tensor_t *x, const char *mode, int64_t min_gram,
                                    int64_t max_skip) {
  Onnx__NodeProto *node = or_start(ob, 13, "TfIdfVectorizer", "a", 1, &x);
  ob_attr_int(ob, node, "min_gram_length", min_gram);
  ob_attr_int(ob, node, "max_gram_length", 2);
  ob_attr_int(ob, node, "max_skip_count", max_skip);
  ob_attr_string(ob, node, "mode", mode);
  ob_attr_ints(ob, node, "ngram_counts", 2, OB_I64(0, 2));
  ob_attr_ints(ob, node, "ngram_indexes", 4, OB_I64(3, 0, 1, 2));
  ob_attr_ints(ob, node, "pool_int64s", 6, OB_I64(1, 2, 1, 2, 2, 1));
  or_output(ob, "y", KILN_DTYPE_FLOAT32);
  return node;
}

static void run_tfidf(ob_t *ob, kiln_tensor_t *x, int ndim, const int64_t *dims,
                      const double *expected) {
  or_run_t run;
  or_run(ob, 1, &x, &run);
  assert_int_equal(run.num_outputs, 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, ndim, dims, expected, 1e-6);
  or_run_free(&run);
  ob_free(ob);
}

/* Row 0: 1 2 3 1 2 4: unigram 1 twice, 2 twice; (1, 2) twice adjacent,
 * (2, 1) once two apart. Row 1: 5 1 2 2 1 9: 1 twice, 2 twice; (1, 2) and
 * (2, 1) once each adjacent and once two apart. */
static void test_tf_with_skips(void **state) {
  (void)state;
  kiln_tensor_t *x =
      or_tensor(KILN_DTYPE_INT32, 2, OB_DIMS(2, 6), OR_D(1, 2, 3, 1, 2, 4, 5, 1, 2, 2, 1, 9));
  ob_t ob;
  tfidf_model(&ob, x, "TF", 1, 1);
  run_tfidf(&ob, x, 2, OB_DIMS(2, 4), OR_D(2, 2, 1, 2, 2, 2, 2, 2));
  /* No skips: the pairs two apart no longer count. */
  tfidf_model(&ob, x, "TF", 1, 0);
  run_tfidf(&ob, x, 2, OB_DIMS(2, 4), OR_D(2, 2, 0, 2, 2, 1, 1, 2));
  kiln_tensor_release(x);
}

static void test_modes(void **state) {
  (void)state;
  kiln_tensor_t *x =
      or_tensor(KILN_DTYPE_INT32, 2, OB_DIMS(2, 6), OR_D(1, 2, 3, 1, 2, 4, 5, 1, 2, 2, 1, 9));
  ob_t ob;
  Onnx__NodeProto *node = tfidf_model(&ob, x, "TFIDF", 1, 1);
  ob_attr_floats(&ob, node, "weights", 4, OB_F32(0.5f, 1, 2, 3));
  run_tfidf(&ob, x, 2, OB_DIMS(2, 4), OR_D(1, 2, 2, 6, 1, 2, 4, 6));
  node = tfidf_model(&ob, x, "IDF", 1, 0);
  ob_attr_floats(&ob, node, "weights", 4, OB_F32(0.5f, 1, 2, 3));
  run_tfidf(&ob, x, 2, OB_DIMS(2, 4), OR_D(0.5, 1, 0, 3, 0.5, 1, 2, 3));
  /* Without weights: IDF is 1 where the n-gram occurs, TFIDF the count. */
  tfidf_model(&ob, x, "IDF", 1, 0);
  run_tfidf(&ob, x, 2, OB_DIMS(2, 4), OR_D(1, 1, 0, 1, 1, 1, 1, 1));
  tfidf_model(&ob, x, "TFIDF", 1, 1);
  run_tfidf(&ob, x, 2, OB_DIMS(2, 4), OR_D(2, 2, 1, 2, 2, 2, 2, 2));
  kiln_tensor_release(x);
}

/* 1 2 1 2 as one int64 row, bigrams only: (1, 2) twice, (2, 1) once; a row
 * of one item has no bigram at all. */
static void test_one_row_bigrams_only(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(4), OR_D(1, 2, 1, 2));
  ob_t ob;
  tfidf_model(&ob, x, "TF", 2, 0);
  run_tfidf(&ob, x, 1, OB_DIMS(4), OR_D(0, 2, 1, 0));
  kiln_tensor_release(x);
  x = or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(1), OR_D(1));
  tfidf_model(&ob, x, "TF", 2, 3);
  run_tfidf(&ob, x, 1, OB_DIMS(4), OR_D(0, 0, 0, 0));
  kiln_tensor_release(x);
}

static void expect_error(ob_t *ob, kiln_status_code_t code, const char *message) {
  kiln_status_t status = or_import_plain(ob);
  assert_non_null(status);
  if (kiln_status_code(status) != code || !strstr(kiln_status_message(status), message)) {
    fail_msg("got \"%s\", expected \"%s\"", kiln_status_message(status), message);
  }
  kiln_status_free(status);
  ob_free(ob);
}

static void test_errors(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(3), OR_D(1, 2, 3));
  ob_t ob;
  Onnx__NodeProto *node = tfidf_model(&ob, x, "TF", 1, 0);
  ob_attr_string(&ob, node, "pool_strings", "a");
  expect_error(&ob, KILN_STATUS_CODE_UNIMPLEMENTED,
               "node \"n\" (TfIdfVectorizer): pool_strings is not supported (kiln has no string "
               "tensors)");
  tfidf_model(&ob, x, "BM25", 1, 0);
  expect_error(&ob, KILN_STATUS_CODE_INVALID_ARGUMENT,
               "attribute mode is \"BM25\"; expected TF, IDF or TFIDF");
  node = tfidf_model(&ob, x, "IDF", 1, 0);
  ob_attr_floats(&ob, node, "weights", 2, OB_F32(1, 2));
  expect_error(&ob, KILN_STATUS_CODE_INVALID_ARGUMENT,
               "weights has 2 values; the output has 4 columns");
  node = tfidf_model(&ob, x, "TF", 1, 0);
  node->attribute[5]->n_ints = 3; /* ngram_indexes */
  expect_error(&ob, KILN_STATUS_CODE_INVALID_ARGUMENT,
               "ngram_indexes has 3 values; the pool has 4 n-grams");
  node = tfidf_model(&ob, x, "TF", 1, 0);
  node->attribute[4]->ints[1] = 7; /* ngram_counts past the pool */
  expect_error(&ob, KILN_STATUS_CODE_INVALID_ARGUMENT,
               "ngram_counts[0] is 0; the starts must be ascending and within the pool of 6 "
               "items");
  tfidf_model(&ob, x, "TF", 3, 0);
  expect_error(&ob, KILN_STATUS_CODE_INVALID_ARGUMENT,
               "min_gram_length 3, max_gram_length 2 and max_skip_count 0 must satisfy");
  kiln_tensor_release(x);
  x = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(3), OR_D(1, 2, 3));
  tfidf_model(&ob, x, "TF", 1, 0);
  expect_error(&ob, KILN_STATUS_CODE_UNIMPLEMENTED,
               "input X has dtype float32; kiln supports int32 and int64");
  kiln_tensor_release(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tf_with_skips),
      cmocka_unit_test(test_modes),
      cmocka_unit_test(test_one_row_bigrams_only),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
