/*
 * Shared fixture of the loop-IR tests: an arena on the system allocator and
 * a builder over it. fixture_done asserts the builder met no error.
 */
#ifndef KILN_TESTS_TIR_TIR_FIXTURE_H_
#define KILN_TESTS_TIR_TIR_FIXTURE_H_

#include "kiln_test.h"
#include "tir/builder.h"

typedef struct fixture_t {
  kiln_arena_t arena;
  kiln_tir_builder_t b;
} fixture_t;

static inline void fixture_init(fixture_t *f) {
  kiln_arena_initialize(&f->arena, kiln_allocator_system(), 0);
  kiln_tir_builder_initialize(&f->b, &f->arena);
}

static inline void fixture_done(fixture_t *f) {
  KILN_ASSERT_OK(kiln_tir_builder_finish(&f->b));
  kiln_arena_deinitialize(&f->arena);
}

#endif /* KILN_TESTS_TIR_TIR_FIXTURE_H_ */
