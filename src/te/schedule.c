/*
 * Schedule creation and the schedule primitives.
 *
 * create_schedule walks the inputs of each output depth-first and appends a
 * stage after all its producers' stages, so stages come producers first. A
 * stage starts with its op's axes then its reduce axes as both all_iter_vars
 * and leaves. split and fuse make new iteration variables (named after their
 * parents: i_outer, i_inner, i_j_fused; extent 0 until bound inference),
 * record the relation and replace the leaves in place, as TVM's Stage does.
 * cache_write rebuilds the stage as two: a cache op with fresh axes
 * (`i_c`) and the original reduce axes, and a copy op over the original
 * axes reading the cache; the user's tensor still finds the copy stage
 * (stages are looked up by output tensor first, then by op). Every
 * primitive validates all its arguments before it changes anything.
 */
#include "te/schedule.h"

#include <stdio.h>
#include <string.h>

#include "tir/substitute.h"

static kiln_status_t add_stage(kiln_te_schedule_t *s, const kiln_te_tensor_t *tensor) {
  for (int i = 0; i < s->num_stages; ++i) {
    if (s->stages[i]->op == tensor->op) {
      return KILN_OK;
    }
  }
  const kiln_te_operation_t *op = tensor->op;
  for (int i = 0; i < op->num_inputs; ++i) {
    if (op->inputs[i]->op->kind != KILN_TE_OP_PLACEHOLDER) {
      KILN_RETURN_IF_ERROR(add_stage(s, op->inputs[i]));
    }
  }
  if (s->num_stages == KILN_TE_MAX_STAGES ||
      op->num_axes + op->num_reduce_axes > KILN_TE_MAX_ITER_VARS) {
    return KILN_STATUS(OUT_OF_RANGE, "create_schedule: stage %s: more than %d stages or axes",
                       op->name, KILN_TE_MAX_STAGES);
  }
  kiln_te_stage_t *stage = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(s->arena, sizeof(*stage),
                                                  _Alignof(kiln_te_stage_t), (void **)&stage));
  stage->op = op;
  stage->output = tensor;
  for (int i = 0; i < op->num_axes + op->num_reduce_axes; ++i) {
    const kiln_te_iter_var_t *iv =
        i < op->num_axes ? op->axes[i] : op->reduce_axes[i - op->num_axes];
    stage->all_iter_vars[i] = iv;
    stage->leaf_iter_vars[i] = iv;
  }
  stage->num_all = stage->num_leaves = op->num_axes + op->num_reduce_axes;
  s->stages[s->num_stages++] = stage;
  return KILN_OK;
}

kiln_status_t kiln_te_create_schedule(kiln_arena_t *arena, int num_outputs,
                                      const kiln_te_tensor_t *const *outputs,
                                      kiln_te_schedule_t **out_schedule) {
  *out_schedule = NULL;
  if (num_outputs < 1 || num_outputs > KILN_TE_MAX_STAGES) {
    return KILN_STATUS(INVALID_ARGUMENT, "create_schedule: %d outputs, expected 1 to %d",
                       num_outputs, KILN_TE_MAX_STAGES);
  }
  for (int i = 0; i < num_outputs; ++i) {
    if (outputs[i]->op->kind == KILN_TE_OP_PLACEHOLDER) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "create_schedule: output %s is a placeholder, not a compute",
                         outputs[i]->name);
    }
  }
  kiln_te_schedule_t *s = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_zeroed(arena, sizeof(*s), _Alignof(kiln_te_schedule_t), (void **)&s));
  s->arena = arena;
  s->num_outputs = num_outputs;
  for (int i = 0; i < num_outputs; ++i) {
    s->outputs[i] = outputs[i];
    KILN_RETURN_IF_ERROR(add_stage(s, outputs[i]));
  }
  for (int i = 0; i < s->num_stages; ++i) {
    for (int o = 0; o < num_outputs; ++o) {
      s->stages[i]->is_output |= s->stages[i]->op == outputs[o]->op;
    }
  }
  *out_schedule = s;
  return KILN_OK;
}

kiln_status_t kiln_te_schedule_stage(const kiln_te_schedule_t *schedule,
                                     const kiln_te_tensor_t *tensor, kiln_te_stage_t **out_stage) {
  *out_stage = NULL;
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < schedule->num_stages; ++i) {
      const kiln_te_stage_t *st = schedule->stages[i];
      if (pass == 0 ? st->output == tensor : st->op == tensor->op) {
        *out_stage = schedule->stages[i];
        return KILN_OK;
      }
    }
  }
  return KILN_STATUS(NOT_FOUND, "schedule has no stage for tensor %s", tensor->name);
}

/* ---- helpers ---- */

static int find_leaf(const kiln_te_stage_t *stage, const kiln_te_iter_var_t *axis) {
  for (int i = 0; i < stage->num_leaves; ++i) {
    if (stage->leaf_iter_vars[i] == axis) {
      return i;
    }
  }
  return -1;
}

static int find_any(const kiln_te_stage_t *stage, const kiln_te_iter_var_t *axis) {
  for (int i = 0; i < stage->num_all; ++i) {
    if (stage->all_iter_vars[i] == axis) {
      return i;
    }
  }
  return -1;
}

/* The leaf index of `axis`, or INVALID_ARGUMENT saying why it is not a leaf. */
static kiln_status_t require_leaf(const char *primitive, const kiln_te_stage_t *stage,
                                  const kiln_te_iter_var_t *axis, int *out_index) {
  *out_index = axis ? find_leaf(stage, axis) : -1;
  if (*out_index >= 0) {
    return KILN_OK;
  }
  const char *name = axis ? axis->var->name : "(null)";
  if (axis && find_any(stage, axis) >= 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: axis %s of stage %s is not a leaf (it was already split or fused)",
                       primitive, name, stage->op->name);
  }
  return KILN_STATUS(INVALID_ARGUMENT, "%s: axis %s is not an axis of stage %s", primitive, name,
                     stage->op->name);
}

static kiln_status_t check_room(const char *primitive, const kiln_te_stage_t *stage, int vars) {
  if (stage->num_all + vars > KILN_TE_MAX_ITER_VARS ||
      stage->num_relations == KILN_TE_MAX_RELATIONS) {
    return KILN_STATUS(OUT_OF_RANGE, "%s: stage %s has too many axes or relations (at most %d)",
                       primitive, stage->op->name, KILN_TE_MAX_RELATIONS);
  }
  return KILN_OK;
}

static kiln_status_t new_iter_var(kiln_arena_t *arena, const char *a, const char *b,
                                  const char *suffix, kiln_te_iter_kind_t kind,
                                  kiln_te_iter_var_t **out) {
  kiln_te_iter_var_t *iv = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_zeroed(arena, sizeof(*iv), _Alignof(kiln_te_iter_var_t), (void **)&iv));
  size_t size = strlen(a) + (b ? strlen(b) + 1 : 0) + strlen(suffix) + 2;
  char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(arena, size, 1, (void **)&name));
  if (b) {
    snprintf(name, size, "%s_%s_%s", a, b, suffix);
  } else {
    snprintf(name, size, "%s_%s", a, suffix);
  }
  KILN_RETURN_IF_ERROR(
      kiln_tir_var_create(arena, name, kiln_tir_scalar(KILN_DTYPE_INT32), &iv->var));
  iv->kind = kind;
  *out = iv;
  return KILN_OK;
}

static void add_var(kiln_te_stage_t *stage, const kiln_te_iter_var_t *iv) {
  stage->attrs[stage->num_all] = (kiln_te_iter_attr_t){KILN_TIR_FOR_SERIAL, 0, {{NULL, NULL}}};
  stage->all_iter_vars[stage->num_all++] = iv;
}

/* ---- split and fuse ---- */

static kiln_status_t split(kiln_te_schedule_t *schedule, kiln_te_stage_t *stage,
                           const kiln_te_iter_var_t *axis, int64_t factor, int64_t nparts,
                           const kiln_te_iter_var_t **out_outer,
                           const kiln_te_iter_var_t **out_inner) {
  const char *primitive = factor ? "split" : "split_nparts";
  *out_outer = *out_inner = NULL;
  int leaf = 0;
  KILN_RETURN_IF_ERROR(require_leaf(primitive, stage, axis, &leaf));
  int64_t amount = factor ? factor : nparts;
  if (amount <= 0 || amount > INT32_MAX) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s %lld of axis %s (stage %s) must be positive",
                       primitive, factor ? "factor" : "nparts", (long long)amount, axis->var->name,
                       stage->op->name);
  }
  KILN_RETURN_IF_ERROR(check_room(primitive, stage, 2));
  kiln_te_iter_var_t *outer = NULL, *inner = NULL;
  KILN_RETURN_IF_ERROR(
      new_iter_var(schedule->arena, axis->var->name, NULL, "outer", axis->kind, &outer));
  KILN_RETURN_IF_ERROR(
      new_iter_var(schedule->arena, axis->var->name, NULL, "inner", axis->kind, &inner));
  stage->relations[stage->num_relations++] =
      (kiln_te_relation_t){KILN_TE_RELATION_SPLIT, axis, outer, inner, factor, nparts};
  add_var(stage, outer);
  add_var(stage, inner);
  memmove(&stage->leaf_iter_vars[leaf + 2], &stage->leaf_iter_vars[leaf + 1],
          (size_t)(stage->num_leaves - leaf - 1) * sizeof(stage->leaf_iter_vars[0]));
  stage->leaf_iter_vars[leaf] = outer;
  stage->leaf_iter_vars[leaf + 1] = inner;
  stage->num_leaves += 1;
  *out_outer = outer;
  *out_inner = inner;
  return KILN_OK;
}

kiln_status_t kiln_te_split(kiln_te_schedule_t *schedule, kiln_te_stage_t *stage,
                            const kiln_te_iter_var_t *axis, int64_t factor,
                            const kiln_te_iter_var_t **out_outer,
                            const kiln_te_iter_var_t **out_inner) {
  if (factor == 0) {
    *out_outer = *out_inner = NULL;
    return KILN_STATUS(INVALID_ARGUMENT, "split: factor 0 of axis %s (stage %s) must be positive",
                       axis ? axis->var->name : "(null)", stage->op->name);
  }
  return split(schedule, stage, axis, factor, 0, out_outer, out_inner);
}

kiln_status_t kiln_te_split_nparts(kiln_te_schedule_t *schedule, kiln_te_stage_t *stage,
                                   const kiln_te_iter_var_t *axis, int64_t nparts,
                                   const kiln_te_iter_var_t **out_outer,
                                   const kiln_te_iter_var_t **out_inner) {
  if (nparts == 0) {
    *out_outer = *out_inner = NULL;
    return KILN_STATUS(INVALID_ARGUMENT,
                       "split_nparts: nparts 0 of axis %s (stage %s) must be positive",
                       axis ? axis->var->name : "(null)", stage->op->name);
  }
  return split(schedule, stage, axis, 0, nparts, out_outer, out_inner);
}

kiln_status_t kiln_te_fuse(kiln_te_schedule_t *schedule, kiln_te_stage_t *stage,
                           const kiln_te_iter_var_t *outer, const kiln_te_iter_var_t *inner,
                           const kiln_te_iter_var_t **out_fused) {
  *out_fused = NULL;
  int lo = 0, li = 0;
  KILN_RETURN_IF_ERROR(require_leaf("fuse", stage, outer, &lo));
  KILN_RETURN_IF_ERROR(require_leaf("fuse", stage, inner, &li));
  if (li != lo + 1) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "fuse: axes %s and %s of stage %s must be adjacent leaves, outer first "
                       "(they are at loop positions %d and %d)",
                       outer->var->name, inner->var->name, stage->op->name, lo, li);
  }
  if (outer->kind != inner->kind) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "fuse: stage %s: cannot fuse data-parallel and reduction axes %s and %s",
                       stage->op->name, outer->var->name, inner->var->name);
  }
  KILN_RETURN_IF_ERROR(check_room("fuse", stage, 1));
  kiln_te_iter_var_t *fused = NULL;
  KILN_RETURN_IF_ERROR(new_iter_var(schedule->arena, outer->var->name, inner->var->name, "fused",
                                    outer->kind, &fused));
  stage->relations[stage->num_relations++] =
      (kiln_te_relation_t){KILN_TE_RELATION_FUSE, fused, outer, inner, 0, 0};
  add_var(stage, fused);
  stage->leaf_iter_vars[lo] = fused;
  memmove(&stage->leaf_iter_vars[li], &stage->leaf_iter_vars[li + 1],
          (size_t)(stage->num_leaves - li - 1) * sizeof(stage->leaf_iter_vars[0]));
  stage->num_leaves -= 1;
  *out_fused = fused;
  return KILN_OK;
}

/* ---- reorder ---- */

kiln_status_t kiln_te_reorder(kiln_te_stage_t *stage, int count,
                              const kiln_te_iter_var_t *const *axes) {
  if (count < 1 || count > stage->num_leaves) {
    return KILN_STATUS(INVALID_ARGUMENT, "reorder: stage %s: %d axes, it has %d leaves",
                       stage->op->name, count, stage->num_leaves);
  }
  int positions[KILN_TE_MAX_ITER_VARS];
  for (int i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(require_leaf("reorder", stage, axes[i], &positions[i]));
    for (int j = 0; j < i; ++j) {
      if (axes[j] == axes[i]) {
        return KILN_STATUS(INVALID_ARGUMENT, "reorder: stage %s: axis %s appears twice",
                           stage->op->name, axes[i]->var->name);
      }
    }
  }
  /* The positions, sorted, receive the axes in the given order. */
  for (int i = 1; i < count; ++i) {
    for (int j = i; j > 0 && positions[j - 1] > positions[j]; --j) {
      int t = positions[j];
      positions[j] = positions[j - 1];
      positions[j - 1] = t;
    }
  }
  for (int i = 0; i < count; ++i) {
    stage->leaf_iter_vars[positions[i]] = axes[i];
  }
  return KILN_OK;
}

/* ---- annotations ---- */

static kiln_status_t set_kind(const char *primitive, kiln_te_stage_t *stage,
                              const kiln_te_iter_var_t *axis, kiln_tir_for_kind_t kind) {
  int leaf = 0;
  KILN_RETURN_IF_ERROR(require_leaf(primitive, stage, axis, &leaf));
  if (axis->kind == KILN_TE_ITER_REDUCE && kind != KILN_TIR_FOR_UNROLLED) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: axis %s of stage %s is a reduction axis; its iterations are not "
                       "independent",
                       primitive, axis->var->name, stage->op->name);
  }
  stage->attrs[find_any(stage, axis)].for_kind = kind;
  return KILN_OK;
}

kiln_status_t kiln_te_vectorize(kiln_te_stage_t *stage, const kiln_te_iter_var_t *axis) {
  return set_kind("vectorize", stage, axis, KILN_TIR_FOR_VECTORIZED);
}

kiln_status_t kiln_te_parallel(kiln_te_stage_t *stage, const kiln_te_iter_var_t *axis) {
  return set_kind("parallel", stage, axis, KILN_TIR_FOR_PARALLEL);
}

kiln_status_t kiln_te_unroll(kiln_te_stage_t *stage, const kiln_te_iter_var_t *axis) {
  return set_kind("unroll", stage, axis, KILN_TIR_FOR_UNROLLED);
}

kiln_status_t kiln_te_pragma(kiln_te_schedule_t *schedule, kiln_te_stage_t *stage,
                             const kiln_te_iter_var_t *axis, const char *key, const char *value) {
  int leaf = 0;
  KILN_RETURN_IF_ERROR(require_leaf("pragma", stage, axis, &leaf));
  kiln_te_iter_attr_t *attr = &stage->attrs[find_any(stage, axis)];
  if (attr->num_pragmas == KILN_TE_MAX_PRAGMAS) {
    return KILN_STATUS(OUT_OF_RANGE, "pragma: axis %s of stage %s already has %d pragmas",
                       axis->var->name, stage->op->name, KILN_TE_MAX_PRAGMAS);
  }
  char *k = NULL, *v = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(schedule->arena, key, &k));
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(schedule->arena, value, &v));
  attr->pragmas[attr->num_pragmas++] = (kiln_tir_annotation_t){k, v};
  return KILN_OK;
}

kiln_status_t kiln_te_compute_inline(kiln_te_stage_t *stage) {
  if (stage->is_output) {
    return KILN_STATUS(INVALID_ARGUMENT, "compute_inline: stage %s is an output of the schedule",
                       stage->op->name);
  }
  if (stage->op->reducer != KILN_TE_REDUCE_NONE) {
    return KILN_STATUS(INVALID_ARGUMENT, "compute_inline: stage %s is a reduction (%s)",
                       stage->op->name, kiln_te_reducer_name(stage->op->reducer));
  }
  if (stage->op->kind == KILN_TE_OP_EXTERN) {
    return KILN_STATUS(INVALID_ARGUMENT, "compute_inline: stage %s is an extern op",
                       stage->op->name);
  }
  stage->inlined = 1;
  return KILN_OK;
}

/* ---- compute_at ---- */

static int stage_position(const kiln_te_schedule_t *s, const kiln_te_stage_t *stage) {
  for (int i = 0; i < s->num_stages; ++i) {
    if (s->stages[i] == stage) {
      return i;
    }
  }
  return -1;
}

/* Whether `op` reads `tensor`, directly or through the computes it reads
 * (which must be inlined by the time the schedule is lowered: lowering
 * checks that the consumer's inlined body reads the stage). */
static int reads_tensor(const kiln_te_operation_t *op, const kiln_te_tensor_t *tensor, int depth) {
  if (op->kind != KILN_TE_OP_COMPUTE || depth > KILN_TE_MAX_STAGES) {
    return 0;
  }
  for (int i = 0; i < op->num_inputs; ++i) {
    if (op->inputs[i] == tensor || reads_tensor(op->inputs[i]->op, tensor, depth + 1)) {
      return 1;
    }
  }
  return 0;
}

kiln_status_t kiln_te_compute_at(kiln_te_stage_t *stage, const kiln_te_stage_t *consumer,
                                 const kiln_te_iter_var_t *axis) {
  int leaf = 0;
  KILN_RETURN_IF_ERROR(require_leaf("compute_at", consumer, axis, &leaf));
  if (stage->is_output || stage->inlined || stage->op->kind == KILN_TE_OP_EXTERN) {
    return KILN_STATUS(INVALID_ARGUMENT, "compute_at: stage %s is %s", stage->op->name,
                       stage->is_output ? "an output of the schedule"
                       : stage->inlined ? "inlined"
                                        : "an extern op");
  }
  if (!reads_tensor(consumer->op, stage->output, 0)) {
    return KILN_STATUS(INVALID_ARGUMENT, "compute_at: stage %s does not read %s",
                       consumer->op->name, stage->output->name);
  }
  stage->attach_stage = consumer;
  stage->attach_ivar = axis;
  return KILN_OK;
}

/* ---- cache_write ---- */

/* The op of the cache stage: `op` with fresh axes `<axis>_c`. */
static kiln_status_t make_cache_op(kiln_arena_t *arena, const kiln_te_operation_t *op,
                                   const char *name, kiln_te_operation_t **out_op) {
  kiln_te_operation_t *cache = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(arena, sizeof(*cache),
                                                  _Alignof(kiln_te_operation_t), (void **)&cache));
  *cache = *op;
  cache->name = name;
  const kiln_te_iter_var_t **axes = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)op->num_axes, sizeof(*axes),
                                                 _Alignof(kiln_te_iter_var_t *), (void **)&axes));
  kiln_tir_var_value_t map[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < op->num_axes; ++d) {
    kiln_te_iter_var_t *iv = NULL;
    KILN_RETURN_IF_ERROR(
        new_iter_var(arena, op->axes[d]->var->name, NULL, "c", KILN_TE_ITER_DATA_PAR, &iv));
    iv->min = op->axes[d]->min;
    iv->extent = op->axes[d]->extent;
    axes[d] = iv;
    map[d] = (kiln_tir_var_value_t){op->axes[d]->var, &iv->var->base};
  }
  cache->axes = axes;
  KILN_RETURN_IF_ERROR(kiln_tir_substitute_expr(arena, op->num_axes, map, op->body, &cache->body));
  *out_op = cache;
  return KILN_OK;
}

/* The op of the original stage: tensor[axes] = cache[axes]. */
static kiln_status_t make_copy_op(kiln_arena_t *arena, const kiln_te_operation_t *op,
                                  const kiln_te_tensor_t *cache, kiln_te_operation_t **out_op) {
  kiln_te_operation_t *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(arena, sizeof(*copy),
                                                  _Alignof(kiln_te_operation_t), (void **)&copy));
  const kiln_te_tensor_t **inputs = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate(arena, sizeof(*inputs), _Alignof(kiln_te_tensor_t *), (void **)&inputs));
  inputs[0] = cache;
  const kiln_tir_expr_t *indices[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < op->num_axes; ++d) {
    indices[d] = &op->axes[d]->var->base;
  }
  KILN_RETURN_IF_ERROR(
      kiln_tir_buffer_load_create(arena, cache->buffer, op->num_axes, indices, &copy->body));
  copy->kind = KILN_TE_OP_COMPUTE;
  copy->name = op->name;
  copy->num_axes = op->num_axes;
  copy->axes = op->axes;
  copy->reducer = KILN_TE_REDUCE_NONE;
  copy->num_inputs = 1;
  copy->inputs = inputs;
  *out_op = copy;
  return KILN_OK;
}

kiln_status_t kiln_te_cache_write(kiln_te_schedule_t *schedule, const kiln_te_tensor_t *tensor,
                                  kiln_tir_scope_t scope, const kiln_te_tensor_t **out_cache) {
  *out_cache = NULL;
  kiln_te_stage_t *stage = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_schedule_stage(schedule, tensor, &stage));
  const kiln_te_operation_t *op = stage->op;
  if (op->kind == KILN_TE_OP_EXTERN) {
    return KILN_STATUS(INVALID_ARGUMENT, "cache_write: stage %s is an extern op", op->name);
  }
  if (stage->num_relations > 0 || stage->num_leaves != op->num_axes + op->num_reduce_axes ||
      stage->inlined || stage->attach_stage) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "cache_write: stage %s has already been scheduled; cache it first",
                       op->name);
  }
  if ((int)scope < 0 || scope >= KILN_TIR_SCOPE_COUNT_ ||
      schedule->num_stages == KILN_TE_MAX_STAGES) {
    return KILN_STATUS(INVALID_ARGUMENT, "cache_write: stage %s: bad scope or too many stages",
                       op->name);
  }
  const char *scope_name = kiln_tir_scope_name(scope);
  size_t size = strlen(op->name) + strlen(scope_name) + 2;
  char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(schedule->arena, size, 1, (void **)&name));
  snprintf(name, size, "%s_%s", op->name, scope_name);
  kiln_te_operation_t *cache_op = NULL, *copy_op = NULL;
  KILN_RETURN_IF_ERROR(make_cache_op(schedule->arena, op, name, &cache_op));
  const kiln_te_tensor_t *cache = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_tensor_create(schedule->arena, name, tensor->ndim, tensor->shape,
                                             tensor->dtype, cache_op, &cache));
  KILN_RETURN_IF_ERROR(make_copy_op(schedule->arena, op, cache, &copy_op));
  kiln_te_stage_t *cache_stage = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(
      schedule->arena, sizeof(*cache_stage), _Alignof(kiln_te_stage_t), (void **)&cache_stage));
  cache_stage->op = cache_op;
  cache_stage->output = cache;
  cache_stage->scope = scope;
  for (int i = 0; i < cache_op->num_axes + cache_op->num_reduce_axes; ++i) {
    const kiln_te_iter_var_t *iv =
        i < cache_op->num_axes ? cache_op->axes[i] : cache_op->reduce_axes[i - cache_op->num_axes];
    cache_stage->all_iter_vars[i] = cache_stage->leaf_iter_vars[i] = iv;
  }
  cache_stage->num_all = cache_stage->num_leaves = cache_op->num_axes + cache_op->num_reduce_axes;
  /* The original stage now copies: its data-parallel axes only. */
  stage->op = copy_op;
  stage->num_all = stage->num_leaves = op->num_axes;
  int at = stage_position(schedule, stage);
  memmove(&schedule->stages[at + 1], &schedule->stages[at],
          (size_t)(schedule->num_stages - at) * sizeof(schedule->stages[0]));
  schedule->stages[at] = cache_stage;
  schedule->num_stages += 1;
  *out_cache = cache;
  return KILN_OK;
}
