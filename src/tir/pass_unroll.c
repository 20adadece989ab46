/*
 * Unroll: an unrolled loop of constant extent becomes copies of its body.
 *
 * A mutator (functor.h) whose For rule first rewrites the body (so inner
 * unrolled loops expand first and each copy is already flat), then, for a
 * loop marked unrolled with constant min and extent <= max_extent, makes a
 * SeqStmt of the body with the loop variable substituted (substitute.h) by
 * min, min+1, ..., in order: the same statements the loop would run, in the
 * same order, so the result is exact. A loop marked unrolled whose extent is
 * not a constant, or is larger than the maximum, stays a loop but becomes
 * serial: the kind is a request, and emitting hundreds of copies would cost
 * more in code size than the loop overhead saves (TVM's
 * auto_unroll_max_step plays the same role). Copies share the statements
 * that do not use the variable, and inner loops keep their variables: the
 * copies run one after another, so no variable is bound twice in a scope.
 */
#include "tir/functor.h"
#include "tir/substitute.h"
#include "tir/transform.h"

typedef struct unroller_t {
  kiln_tir_mutator_t mutator; /* first: rules get &unroller->mutator */
  int64_t max_extent;
} unroller_t;

kiln_tir_unroll_options_t kiln_tir_unroll_options_default(void) {
  kiln_tir_unroll_options_t options = {KILN_TIR_UNROLL_DEFAULT_MAX};
  return options;
}

static kiln_status_t unroll_copies(kiln_arena_t *arena, const kiln_tir_for_t *loop, int64_t min,
                                   int64_t extent, const kiln_tir_stmt_t **out) {
  const kiln_tir_stmt_t **copies = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)extent, sizeof(*copies),
                                                 _Alignof(max_align_t), (void **)&copies));
  for (int64_t k = 0; k < extent; ++k) {
    kiln_tir_var_value_t map = {loop->var, NULL};
    KILN_RETURN_IF_ERROR(
        kiln_tir_int_imm_create(arena, loop->var->base.dtype, min + k, &map.value));
    KILN_RETURN_IF_ERROR(kiln_tir_substitute_stmt(arena, 1, &map, loop->body, &copies[k]));
  }
  return kiln_tir_seq_create(arena, (int)extent, copies, out);
}

static kiln_status_t unroll_for(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                const kiln_tir_stmt_t **out) {
  unroller_t *u = (unroller_t *)self;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_rebuild_stmt(self, stmt, out));
  const kiln_tir_for_t *loop = (const void *)*out;
  if (loop->for_kind != KILN_TIR_FOR_UNROLLED) {
    return KILN_OK;
  }
  int64_t min = 0, extent = 0;
  if (kiln_tir_expr_as_int(loop->min, &min) && kiln_tir_expr_as_int(loop->extent, &extent) &&
      extent <= u->max_extent) {
    return kiln_status_annotate(unroll_copies(self->arena, loop, min, extent < 0 ? 0 : extent, out),
                                "loop %s", loop->var->name);
  }
  return kiln_tir_for_create(self->arena, loop->var, loop->min, loop->extent, KILN_TIR_FOR_SERIAL,
                             loop->body, loop->num_annotations, loop->annotations, out);
}

kiln_status_t kiln_tir_unroll(kiln_arena_t *arena, const kiln_tir_prim_func_t *func,
                              const kiln_tir_unroll_options_t *options,
                              const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  if (!func) {
    return KILN_STATUS(INVALID_ARGUMENT, "unroll: null function");
  }
  unroller_t u;
  kiln_tir_mutator_initialize(&u.mutator, arena);
  u.mutator.stmt_rules[KILN_TIR_STMT_FOR] = unroll_for;
  u.max_extent = options ? options->max_extent : KILN_TIR_UNROLL_DEFAULT_MAX;
  if (u.max_extent < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "unroll %s: max extent %lld is negative", func->name,
                       (long long)u.max_extent);
  }
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_tir_mutator_mutate_stmt(&u.mutator, func->body, &body),
                                "unroll %s", func->name);
  return kiln_tir_prim_func_with_body(arena, func, body, out_func);
}
