/*
 * Parallel-loop outlining; see parallel.h.
 *
 * One recursive walk over the function finds the parallel loops. For each,
 * a second walk over the loop (min, extent, body) records, in order of first
 * use, the variables it uses (Var nodes; the data variable and the shape,
 * stride and offset expressions of every buffer it loads, stores or
 * allocates) and the ones it binds (loop, let and Allocate data variables);
 * the free variables are the used ones that are not bound. The same walk
 * finds a parallel loop inside the loop and refuses it. Lists are small
 * (a loop nest uses tens of variables), so membership is a linear search.
 */
#include "codegen/parallel.h"

#include "tir/functor.h"

#include "base/array.h"

typedef struct scan_t {
  const kiln_tir_prim_func_t *func;
  const kiln_tir_for_t *outer;
  kiln_array_t used;    /* const kiln_tir_var_t * */
  kiln_array_t is_data; /* int, parallel to used */
  kiln_array_t bound;   /* const kiln_tir_var_t * */
} scan_t;

static int contains(const kiln_array_t *array, const kiln_tir_var_t *var) {
  for (size_t i = 0; i < kiln_array_count(array); ++i) {
    if (*(const kiln_tir_var_t *const *)kiln_array_at(array, i) == var) {
      return 1;
    }
  }
  return 0;
}

static kiln_status_t use(scan_t *scan, const kiln_tir_var_t *var, int is_data) {
  if (contains(&scan->used, var)) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_array_push(&scan->used, &var));
  return kiln_array_push(&scan->is_data, &is_data);
}

static kiln_status_t scan_expr(scan_t *scan, const kiln_tir_expr_t *e);
static kiln_status_t scan_stmt(scan_t *scan, const kiln_tir_stmt_t *s);

static kiln_status_t scan_exprs(scan_t *scan, int count, const kiln_tir_expr_t *const *exprs) {
  for (int i = 0; exprs && i < count; ++i) {
    KILN_RETURN_IF_ERROR(scan_expr(scan, exprs[i]));
  }
  return KILN_OK;
}

static kiln_status_t scan_buffer(scan_t *scan, const kiln_tir_buffer_t *buffer) {
  KILN_RETURN_IF_ERROR(use(scan, buffer->data, 1));
  KILN_RETURN_IF_ERROR(scan_exprs(scan, buffer->ndim, buffer->shape));
  KILN_RETURN_IF_ERROR(scan_exprs(scan, buffer->ndim, buffer->strides));
  return scan_expr(scan, buffer->elem_offset);
}

static kiln_status_t scan_expr(scan_t *scan, const kiln_tir_expr_t *e) {
  if (!e) {
    return KILN_OK;
  }
  if (e->kind == KILN_TIR_EXPR_VAR) {
    return use(scan, (const kiln_tir_var_t *)e, 0);
  }
  if (e->kind == KILN_TIR_EXPR_BUFFER_LOAD) {
    KILN_RETURN_IF_ERROR(scan_buffer(scan, ((const kiln_tir_buffer_load_t *)e)->buffer));
  } else if (e->kind == KILN_TIR_EXPR_LET) {
    /* Bound for the rest of the scan: its uses are not free variables. */
    KILN_RETURN_IF_ERROR(kiln_array_push(&scan->bound, &((const kiln_tir_let_t *)e)->var));
  }
  const kiln_tir_expr_t *operands[KILN_TIR_MAX_OPERANDS];
  return scan_exprs(scan, kiln_tir_expr_operands(e, operands), operands);
}

static kiln_status_t scan_for(scan_t *scan, const kiln_tir_for_t *n) {
  if (n->for_kind == KILN_TIR_FOR_PARALLEL) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: nested parallel loop: fuse the loops instead (loop %s inside "
                       "parallel loop %s)",
                       scan->func->name, n->var->name, scan->outer->var->name);
  }
  KILN_RETURN_IF_ERROR(kiln_array_push(&scan->bound, &n->var));
  KILN_RETURN_IF_ERROR(scan_expr(scan, n->min));
  KILN_RETURN_IF_ERROR(scan_expr(scan, n->extent));
  return scan_stmt(scan, n->body);
}

static kiln_status_t scan_stmt(scan_t *scan, const kiln_tir_stmt_t *s) {
  if (!s) {
    return KILN_OK;
  }
  switch (s->kind) {
  case KILN_TIR_STMT_FOR:
    return scan_for(scan, (const void *)s);
  case KILN_TIR_STMT_BUFFER_STORE: {
    const kiln_tir_buffer_store_t *n = (const void *)s;
    KILN_RETURN_IF_ERROR(scan_buffer(scan, n->buffer));
    KILN_RETURN_IF_ERROR(scan_expr(scan, n->value));
    return scan_exprs(scan, n->num_indices, n->indices);
  }
  case KILN_TIR_STMT_ALLOCATE: {
    const kiln_tir_allocate_t *n = (const void *)s;
    KILN_RETURN_IF_ERROR(kiln_array_push(&scan->bound, &n->buffer->data));
    KILN_RETURN_IF_ERROR(scan_buffer(scan, n->buffer));
    return scan_stmt(scan, n->body);
  }
  case KILN_TIR_STMT_SEQ: {
    const kiln_tir_seq_t *n = (const void *)s;
    for (int i = 0; i < n->count; ++i) {
      KILN_RETURN_IF_ERROR(scan_stmt(scan, n->stmts[i]));
    }
    return KILN_OK;
  }
  case KILN_TIR_STMT_IF_THEN_ELSE: {
    const kiln_tir_if_then_else_t *n = (const void *)s;
    KILN_RETURN_IF_ERROR(scan_expr(scan, n->condition));
    KILN_RETURN_IF_ERROR(scan_stmt(scan, n->then_case));
    return scan_stmt(scan, n->else_case);
  }
  case KILN_TIR_STMT_LET_STMT: {
    const kiln_tir_let_stmt_t *n = (const void *)s;
    KILN_RETURN_IF_ERROR(kiln_array_push(&scan->bound, &n->var));
    KILN_RETURN_IF_ERROR(scan_expr(scan, n->value));
    return scan_stmt(scan, n->body);
  }
  case KILN_TIR_STMT_EVALUATE:
    return scan_expr(scan, ((const kiln_tir_evaluate_t *)s)->value);
  case KILN_TIR_STMT_PREFETCH:
    return scan_expr(scan, ((const kiln_tir_prefetch_t *)s)->load);
  case KILN_TIR_STMT_ASSERT: {
    const kiln_tir_assert_t *n = (const void *)s;
    KILN_RETURN_IF_ERROR(scan_expr(scan, n->condition));
    return scan_stmt(scan, n->body);
  }
  case KILN_TIR_STMT_KIND_COUNT_:
    break;
  }
  return KILN_STATUS(INTERNAL, "%s: invalid statement kind %d", scan->func->name, (int)s->kind);
}

/* The free variables of one parallel loop, copied into the arena. */
static kiln_status_t describe(kiln_arena_t *arena, scan_t *scan, const kiln_tir_for_t *loop,
                              kiln_codegen_lambda_t *out) {
  scan->outer = loop;
  KILN_RETURN_IF_ERROR(kiln_array_push(&scan->bound, &loop->var));
  KILN_RETURN_IF_ERROR(scan_expr(scan, loop->min));
  KILN_RETURN_IF_ERROR(scan_expr(scan, loop->extent));
  KILN_RETURN_IF_ERROR(scan_stmt(scan, loop->body));
  size_t used = kiln_array_count(&scan->used);
  const kiln_tir_var_t **vars = NULL;
  int *is_data = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, used ? used : 1, sizeof(*vars),
                                                 _Alignof(void *), (void **)&vars));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, used ? used : 1, sizeof(*is_data),
                                                 _Alignof(int), (void **)&is_data));
  int count = 0;
  for (size_t i = 0; i < used; ++i) {
    const kiln_tir_var_t *var = *(const kiln_tir_var_t *const *)kiln_array_at(&scan->used, i);
    if (!contains(&scan->bound, var)) {
      vars[count] = var;
      is_data[count++] = *(const int *)kiln_array_at(&scan->is_data, i);
    }
  }
  out->loop = loop;
  out->num_free = count;
  out->free_vars = vars;
  out->is_data = is_data;
  return KILN_OK;
}

typedef struct finder_t {
  kiln_arena_t *arena;
  const kiln_tir_prim_func_t *func;
  kiln_array_t lambdas; /* kiln_codegen_lambda_t */
} finder_t;

static kiln_status_t find_loops(finder_t *f, const kiln_tir_stmt_t *s);

static kiln_status_t outline_loop(finder_t *f, const kiln_tir_for_t *loop) {
  scan_t scan = {.func = f->func};
  kiln_allocator_t allocator = kiln_arena_allocator(f->arena);
  kiln_array_initialize(&scan.used, allocator, sizeof(const kiln_tir_var_t *));
  kiln_array_initialize(&scan.is_data, allocator, sizeof(int));
  kiln_array_initialize(&scan.bound, allocator, sizeof(const kiln_tir_var_t *));
  kiln_codegen_lambda_t lambda = {.id = (int)kiln_array_count(&f->lambdas)};
  kiln_status_t status = describe(f->arena, &scan, loop, &lambda);
  if (!status) {
    status = kiln_array_push(&f->lambdas, &lambda);
  }
  kiln_array_deinitialize(&scan.used);
  kiln_array_deinitialize(&scan.is_data);
  kiln_array_deinitialize(&scan.bound);
  return status;
}

static kiln_status_t find_loops(finder_t *f, const kiln_tir_stmt_t *s) {
  if (!s) {
    return KILN_OK;
  }
  switch (s->kind) {
  case KILN_TIR_STMT_FOR: {
    const kiln_tir_for_t *n = (const void *)s;
    if (n->for_kind == KILN_TIR_FOR_PARALLEL) {
      return outline_loop(f, n);
    }
    return find_loops(f, n->body);
  }
  case KILN_TIR_STMT_ALLOCATE:
    return find_loops(f, ((const kiln_tir_allocate_t *)s)->body);
  case KILN_TIR_STMT_SEQ: {
    const kiln_tir_seq_t *n = (const void *)s;
    for (int i = 0; i < n->count; ++i) {
      KILN_RETURN_IF_ERROR(find_loops(f, n->stmts[i]));
    }
    return KILN_OK;
  }
  case KILN_TIR_STMT_IF_THEN_ELSE: {
    const kiln_tir_if_then_else_t *n = (const void *)s;
    KILN_RETURN_IF_ERROR(find_loops(f, n->then_case));
    return find_loops(f, n->else_case);
  }
  case KILN_TIR_STMT_LET_STMT:
    return find_loops(f, ((const kiln_tir_let_stmt_t *)s)->body);
  case KILN_TIR_STMT_ASSERT:
    return find_loops(f, ((const kiln_tir_assert_t *)s)->body);
  case KILN_TIR_STMT_BUFFER_STORE:
  case KILN_TIR_STMT_EVALUATE:
  case KILN_TIR_STMT_PREFETCH:
  case KILN_TIR_STMT_KIND_COUNT_:
    break;
  }
  return KILN_OK;
}

kiln_status_t kiln_codegen_parallel_outline(kiln_arena_t *arena, const kiln_tir_prim_func_t *func,
                                            kiln_codegen_chunk_t chunk,
                                            kiln_codegen_parallel_t *out) {
  finder_t f = {.arena = arena, .func = func};
  kiln_array_initialize(&f.lambdas, kiln_arena_allocator(arena), sizeof(kiln_codegen_lambda_t));
  KILN_RETURN_IF_ERROR(find_loops(&f, func->body));
  out->chunk = chunk;
  out->count = (int)kiln_array_count(&f.lambdas);
  out->lambdas = kiln_array_data(&f.lambdas);
  return KILN_OK;
}

const kiln_codegen_lambda_t *kiln_codegen_parallel_find(const kiln_codegen_parallel_t *parallel,
                                                        const kiln_tir_for_t *loop) {
  for (int i = 0; i < parallel->count; ++i) {
    if (parallel->lambdas[i].loop == loop) {
      return &parallel->lambdas[i];
    }
  }
  return NULL;
}
