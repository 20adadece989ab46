/*
 * Shared subexpressions emitted once; see kiln_cg_hoist in emit.h.
 *
 * Compute rules and passes repeat subexpressions (the coordinate of a
 * resize appears in every term that reads it), as copies more often than as
 * shared nodes, and writing them out as C text repeats each once per use.
 * Before a statement, kiln_cg_hoist groups structurally equal nodes (a
 * structural hash, confirmed with kiln_tir_expr_equal), counts the
 * references to each group (descending into a group on its first visit
 * only), then declares each group referenced twice or more, inner ones
 * first, as `const T _cN = <expr>;`;
 * while the statement is written, kiln_cg_expr prints _cN for those nodes.
 * A Let is a leaf for this (its body may use its variable, which is bound
 * only inside it), as are constants and variables (nothing to save).
 * Hoisting is safe because every expression of the IR is pure and the
 * interpreter evaluates every operand, so a hoisted load was in bounds.
 */
#include <stdio.h>
#include <string.h>

#include "codegen/c/emit.h"
#include "tir/functor.h"

#define KILN_CG_MAX_OPERANDS KILN_TIR_MAX_OPERANDS

/* The operands of `e` that hoisting looks into: a Let is a leaf. */
static int operands(const kiln_tir_expr_t *e, const kiln_tir_expr_t **out) {
  return e->kind == KILN_TIR_EXPR_LET ? 0 : kiln_tir_expr_operands(e, out);
}

typedef struct cse_t {
  kiln_hashmap_t hashes; /* expr -> structural hash (memo) */
  kiln_hashmap_t reps;   /* hash -> the first expr seen with it */
  kiln_hashmap_t counts; /* representative -> references */
  kiln_array_t order;    /* representatives, operands first */
} cse_t;

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + UINT64_C(0x9E3779B97F4A7C15) + (h << 6) + (h >> 2);
  return h * UINT64_C(0xBF58476D1CE4E5B9);
}

/* A hash equal for structurally equal expressions (kiln_tir_expr_equal);
 * never 0, so it can be a map key. */
static kiln_status_t hash_expr(cse_t *cse, const kiln_tir_expr_t *e, uint64_t *out) {
  void *memo = NULL;
  if (kiln_hashmap_get(&cse->hashes, e, &memo)) {
    *out = (uint64_t)(uintptr_t)memo;
    return KILN_OK;
  }
  uint64_t h = mix(mix((uint64_t)e->kind, (uint64_t)e->dtype.base), (uint64_t)e->dtype.lanes);
  if (e->kind == KILN_TIR_EXPR_INT_IMM) {
    h = mix(h, (uint64_t)((const kiln_tir_int_imm_t *)e)->value);
  } else if (e->kind == KILN_TIR_EXPR_FLOAT_IMM) {
    double v = ((const kiln_tir_float_imm_t *)e)->value;
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof(bits));
    h = mix(h, bits);
  } else if (e->kind == KILN_TIR_EXPR_VAR || e->kind == KILN_TIR_EXPR_LET) {
    h = mix(h, (uint64_t)(uintptr_t)e); /* by identity */
  } else if (e->kind == KILN_TIR_EXPR_BUFFER_LOAD) {
    h = mix(h, (uint64_t)(uintptr_t)((const kiln_tir_buffer_load_t *)e)->buffer->data);
  } else if (e->kind == KILN_TIR_EXPR_CALL) {
    h = mix(h, (uint64_t)((const kiln_tir_call_t *)e)->op);
  }
  const kiln_tir_expr_t *children[KILN_CG_MAX_OPERANDS];
  int n = operands(e, children);
  for (int i = 0; i < n; ++i) {
    uint64_t child = 0;
    KILN_RETURN_IF_ERROR(hash_expr(cse, children[i], &child));
    h = mix(h, child);
  }
  h = h ? h : 1;
  if (sizeof(void *) < sizeof(uint64_t)) {
    h = (uint32_t)h ? (uint32_t)h : 1;
  }
  *out = h;
  return kiln_hashmap_put(&cse->hashes, e, (void *)(uintptr_t)h);
}

/* Counts references per representative (the first of structurally equal
 * nodes), recording which representative each node has. */
static kiln_status_t count(kiln_cg_t *cg, cse_t *cse, const kiln_tir_expr_t *e) {
  uint64_t h = 0;
  KILN_RETURN_IF_ERROR(hash_expr(cse, e, &h));
  void *rep = NULL;
  if (kiln_hashmap_get(&cse->reps, (const void *)(uintptr_t)h, &rep) &&
      (rep == e || kiln_tir_expr_equal(rep, e))) {
    void *uses = NULL;
    (void)kiln_hashmap_get(&cse->counts, rep, &uses);
    KILN_RETURN_IF_ERROR(kiln_hashmap_put(&cse->counts, rep, (void *)((uintptr_t)uses + 1)));
    return kiln_hashmap_put(&cg->canonical, e, rep);
  }
  if (!rep) {
    KILN_RETURN_IF_ERROR(
        kiln_hashmap_put(&cse->reps, (const void *)(uintptr_t)h, (void *)(uintptr_t)e));
  }
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(&cse->counts, e, (void *)(uintptr_t)1));
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(&cg->canonical, e, (void *)(uintptr_t)e));
  const kiln_tir_expr_t *children[KILN_CG_MAX_OPERANDS];
  int n = operands(e, children);
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(count(cg, cse, children[i]));
  }
  return kiln_array_push(&cse->order, &e);
}

static int worth_hoisting(const kiln_tir_expr_t *e) {
  return e->kind != KILN_TIR_EXPR_INT_IMM && e->kind != KILN_TIR_EXPR_FLOAT_IMM &&
         e->kind != KILN_TIR_EXPR_VAR;
}

static kiln_status_t declare(kiln_cg_t *cg, const kiln_tir_expr_t *e) {
  const char *type = NULL;
  char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, e->dtype, &type));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(&cg->arena, 24, 1, (void **)&name));
  snprintf(name, 24, "_c%d", cg->num_hoisted++);
  KILN_RETURN_IF_ERROR(kiln_cg_line(cg, "const %s %s = ", type, name));
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, e));
  KILN_RETURN_IF_ERROR(kiln_cg_printf(cg, ";\n"));
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(&cg->hoisted, e, name));
  return kiln_array_push(&cg->hoisted_stack, &e);
}

static kiln_status_t hoist(kiln_cg_t *cg, int num_exprs, const kiln_tir_expr_t *const *exprs,
                           cse_t *cse) {
  for (int i = 0; i < num_exprs; ++i) {
    KILN_RETURN_IF_ERROR(count(cg, cse, exprs[i]));
  }
  for (size_t i = 0; i < kiln_array_count(&cse->order); ++i) {
    const kiln_tir_expr_t *e = *(const kiln_tir_expr_t *const *)kiln_array_at(&cse->order, i);
    void *uses = NULL;
    if (kiln_hashmap_get(&cse->counts, e, &uses) && (uintptr_t)uses >= 2 && worth_hoisting(e) &&
        !kiln_hashmap_contains(&cg->hoisted, e)) {
      KILN_RETURN_IF_ERROR(declare(cg, e));
    }
  }
  return KILN_OK;
}

kiln_status_t kiln_cg_hoist(kiln_cg_t *cg, int num_exprs, const kiln_tir_expr_t *const *exprs) {
  kiln_allocator_t scratch = kiln_arena_allocator(&cg->arena);
  cse_t cse;
  kiln_hashmap_initialize(&cse.hashes, scratch, KILN_HASHMAP_KEY_POINTER);
  kiln_hashmap_initialize(&cse.reps, scratch, KILN_HASHMAP_KEY_POINTER);
  kiln_hashmap_initialize(&cse.counts, scratch, KILN_HASHMAP_KEY_POINTER);
  kiln_array_initialize(&cse.order, scratch, sizeof(const kiln_tir_expr_t *));
  kiln_status_t status = hoist(cg, num_exprs, exprs, &cse);
  kiln_hashmap_deinitialize(&cse.hashes);
  kiln_hashmap_deinitialize(&cse.reps);
  kiln_hashmap_deinitialize(&cse.counts);
  kiln_array_deinitialize(&cse.order);
  return status;
}

void kiln_cg_unhoist(kiln_cg_t *cg, size_t mark) {
  while (kiln_array_count(&cg->hoisted_stack) > mark) {
    const kiln_tir_expr_t *e = NULL;
    (void)kiln_array_pop(&cg->hoisted_stack, &e);
    (void)kiln_hashmap_remove(&cg->hoisted, e, NULL);
  }
  if (mark == 0) {
    kiln_hashmap_clear(&cg->canonical);
  }
}

const char *kiln_cg_hoisted_name(const kiln_cg_t *cg, const kiln_tir_expr_t *e) {
  void *rep = NULL, *name = NULL;
  if (kiln_hashmap_count(&cg->hoisted) == 0 || !kiln_hashmap_get(&cg->canonical, e, &rep)) {
    return NULL;
  }
  return kiln_hashmap_get(&cg->hoisted, rep, &name) ? name : NULL;
}
