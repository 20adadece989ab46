/*
 * plan_memory: liveness-based storage planning (plan_memory.h), and the pass
 * that reports it.
 *
 * Each node of main, in the post order of dataflow (pass/dominator.h), gets
 * a list of the tensors it stands for, as indices into the plan's entries
 * (-1 for a tensor main's caller owns): a Call lists its own new entries
 * (one per field of its type, flattened), a Tuple the lists of its fields
 * one after the other, a TupleGetItem its field's part of the tuple's list,
 * a parameter or constant -1s. A first walk counts each entry's readers
 * (every Call argument that lists it) and marks what the body lists as
 * external; a second walk hands out and takes back storages as the header
 * describes. The free list is searched linearly: it holds as many storages
 * as tensors are live at once, a few dozen in the largest networks.
 */
#include "pass/plan_memory.h"

#include <string.h>

#include "base/log.h"
#include "ir/static_shapes.h"
#include "op/op.h"
#include "op/transform_attrs.h"
#include "pass/dominator.h"
#include "pass/passes.h"

/* A free storage is reused for a tensor within this factor of its size. */
#define PLAN_MATCH_RANGE 16

typedef struct planner_t {
  kiln_allocator_t allocator;
  kiln_array_t nodes;    /* kiln_expr_t *, post order */
  kiln_hashmap_t index;  /* kiln_expr_t * -> position */
  int32_t *first;        /* per node: where its list starts in refs */
  int32_t *count;        /* per node: its length */
  kiln_array_t refs;     /* int32_t: an entry, or -1 */
  kiln_array_t entries;  /* kiln_memory_plan_entry_t */
  kiln_array_t uses;     /* int32_t per entry: readers left */
  kiln_array_t storages; /* kiln_memory_storage_t */
  kiln_array_t free_ids; /* int32_t: storages free for reuse */
  int32_t *alias;        /* per entry: the in-place concatenate's entry it lies in, or -1 */
  size_t tensor_bytes;
} planner_t;

/* uses of an entry that lies in an in-place concatenate: never freed on
 * its own (the concatenate's storage is) */
#define PLAN_USES_IN_PLACE (-3)

static size_t aligned_size(size_t bytes) {
  size_t unit = KILN_MEMORY_PLAN_ALIGNMENT;
  return bytes == 0 ? unit : (bytes + unit - 1) / unit * unit;
}

static int32_t tensor_count(const kiln_type_t *type) {
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  if (!tuple) {
    return 1;
  }
  int32_t count = 0;
  for (int i = 0; i < tuple->count; ++i) {
    count += tensor_count(tuple->fields[i]);
  }
  return count;
}

static kiln_expr_t *node_at(const planner_t *p, int32_t index) {
  return KILN_ARRAY_AT(&p->nodes, kiln_expr_t *, (size_t)index);
}

static int32_t *ref_at(const planner_t *p, int32_t node, int32_t k) {
  return kiln_array_at(&p->refs, (size_t)(p->first[node] + k));
}

static kiln_status_t push_ref(planner_t *p, int32_t ref) {
  return kiln_array_push(&p->refs, &ref);
}

/* The dims of `tensor` with each symbolic one at its upper bound; false
 * when one has none. */
static bool bounded_shape(const kiln_tensor_type_t *tensor, int64_t *dims) {
  for (int d = 0; d < tensor->ndim; ++d) {
    const kiln_dim_var_t *var = tensor->vars ? tensor->vars[d] : NULL;
    dims[d] = var ? var->upper_bound : tensor->shape[d];
    if (dims[d] < 0) {
      return false;
    }
  }
  return true;
}

/* New entries for the tensors of `type` (fields flattened), made by `call`. */
static kiln_status_t push_entries(planner_t *p, const kiln_expr_t *call, const kiln_type_t *type,
                                  int *field) {
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  if (tuple) {
    for (int i = 0; i < tuple->count; ++i) {
      KILN_RETURN_IF_ERROR(push_entries(p, call, tuple->fields[i], field));
    }
    return KILN_OK;
  }
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(type);
  kiln_memory_plan_entry_t entry = {
      .expr = call, .field = (*field)++, .storage_id = -1, .dtype = tensor->dtype};
  int64_t dims[KILN_MAX_RANK];
  entry.per_run = tensor->ndim > KILN_MAX_RANK || !bounded_shape(tensor, dims);
  KILN_RETURN_IF_ERROR(entry.per_run
                           ? KILN_OK
                           : kiln_shape_byte_size(tensor->dtype, tensor->ndim, dims, &entry.bytes));
  int32_t ref = (int32_t)kiln_array_count(&p->entries);
  int32_t uses = 0;
  KILN_RETURN_IF_ERROR(kiln_array_push(&p->entries, &entry));
  KILN_RETURN_IF_ERROR(kiln_array_push(&p->uses, &uses));
  return push_ref(p, ref);
}

/* Appends node `node`'s k-th..(k+n)-th refs again (a Tuple's field, a
 * TupleGetItem's part). */
static kiln_status_t copy_refs(planner_t *p, int32_t node, int32_t k, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(push_ref(p, *ref_at(p, node, k + i)));
  }
  return KILN_OK;
}

static kiln_status_t list_item(planner_t *p, const kiln_tuple_get_item_t *item) {
  int32_t tuple = kiln_dataflow_order_index(&p->index, item->tuple);
  const kiln_tuple_type_t *type = kiln_type_as_tuple(item->tuple->checked_type);
  int32_t offset = 0;
  for (int i = 0; type && i < item->index; ++i) {
    offset += tensor_count(type->fields[i]);
  }
  return copy_refs(p, tuple, offset, tensor_count(item->base.checked_type));
}

static kiln_status_t list_node(planner_t *p, int32_t node) {
  kiln_expr_t *expr = node_at(p, node);
  int field = 0;
  switch (expr->kind) {
  case KILN_EXPR_KIND_CALL:
    return push_entries(p, expr, expr->checked_type, &field);
  case KILN_EXPR_KIND_TUPLE:
    for (int i = 0; i < kiln_dataflow_child_count(expr); ++i) {
      int32_t child = kiln_dataflow_order_index(&p->index, kiln_dataflow_child_at(expr, i));
      KILN_RETURN_IF_ERROR(copy_refs(p, child, 0, p->count[child]));
    }
    return KILN_OK;
  case KILN_EXPR_KIND_TUPLE_GET_ITEM:
    return list_item(p, (const kiln_tuple_get_item_t *)expr);
  case KILN_EXPR_KIND_VAR:
  case KILN_EXPR_KIND_CONSTANT:
    for (int32_t i = 0; i < tensor_count(expr->checked_type); ++i) {
      KILN_RETURN_IF_ERROR(push_ref(p, -1));
    }
    return KILN_OK;
  case KILN_EXPR_KIND_FUNCTION:
  case KILN_EXPR_KIND_COUNT_:
    break;
  }
  return KILN_OK;
}

static kiln_status_t check_typed(const kiln_expr_t *expr) {
  if (expr->checked_type || expr->kind == KILN_EXPR_KIND_FUNCTION) {
    return KILN_OK;
  }
  const kiln_call_t *call = kiln_expr_as_call(expr);
  return KILN_STATUS(FAILED_PRECONDITION,
                     "plan_memory needs types: in @main, a %s%s%s has no checked type (run "
                     "infer_type first)",
                     kiln_expr_kind_name(expr->kind), call && call->op ? " of " : "",
                     call && call->op ? call->op->name : "");
}

static kiln_status_t list_tensors(planner_t *p) {
  int32_t count = (int32_t)kiln_array_count(&p->nodes);
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(p->allocator, (size_t)count, sizeof(int32_t),
                                                   (void **)&p->first));
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(p->allocator, (size_t)count, sizeof(int32_t),
                                                   (void **)&p->count));
  for (int32_t node = 0; node < count; ++node) {
    KILN_RETURN_IF_ERROR(check_typed(node_at(p, node)));
    p->first[node] = (int32_t)kiln_array_count(&p->refs);
    KILN_RETURN_IF_ERROR(list_node(p, node));
    p->count[node] = (int32_t)kiln_array_count(&p->refs) - p->first[node];
  }
  return KILN_OK;
}

/* ---- liveness ---- */

static kiln_memory_plan_entry_t *entry_at(const planner_t *p, int32_t ref) {
  return kiln_array_at(&p->entries, (size_t)ref);
}

static int32_t *uses_at(const planner_t *p, int32_t ref) {
  return kiln_array_at(&p->uses, (size_t)ref);
}

/* Counts readers; the body's tensors become external (uses -1). */
static void count_uses(planner_t *p) {
  int32_t count = (int32_t)kiln_array_count(&p->nodes);
  for (int32_t node = 0; node < count; ++node) {
    const kiln_expr_t *expr = node_at(p, node);
    for (int i = 0; expr->kind == KILN_EXPR_KIND_CALL && i < kiln_dataflow_child_count(expr); ++i) {
      int32_t arg = kiln_dataflow_order_index(&p->index, kiln_dataflow_child_at(expr, i));
      for (int32_t k = 0; k < p->count[arg]; ++k) {
        int32_t ref = *ref_at(p, arg, k);
        if (ref >= 0) {
          *uses_at(p, ref) += 1;
        }
      }
    }
  }
  for (int32_t k = 0; k < p->count[count - 1]; ++k) {
    int32_t ref = *ref_at(p, count - 1, k);
    if (ref >= 0) {
      *uses_at(p, ref) = -1;
    }
  }
}

/* ---- storages ---- */

static kiln_memory_storage_t *storage_at(const planner_t *p, int32_t id) {
  return kiln_array_at(&p->storages, (size_t)id);
}

/* The free-list position of the storage to reuse for `size` bytes of
 * `dtype`, or -1. */
static int32_t pick_free(const planner_t *p, kiln_dtype_t dtype, size_t size) {
  int32_t larger = -1, smaller = -1;
  for (size_t i = 0; i < kiln_array_count(&p->free_ids); ++i) {
    const kiln_memory_storage_t *s = storage_at(p, KILN_ARRAY_AT(&p->free_ids, int32_t, i));
    if (s->dtype != dtype) {
      continue;
    }
    if (s->bytes >= size && s->bytes / PLAN_MATCH_RANGE <= size &&
        (larger < 0 ||
         s->bytes < storage_at(p, KILN_ARRAY_AT(&p->free_ids, int32_t, (size_t)larger))->bytes)) {
      larger = (int32_t)i;
    }
    if (s->bytes < size && s->bytes >= size / PLAN_MATCH_RANGE &&
        (smaller < 0 ||
         s->bytes > storage_at(p, KILN_ARRAY_AT(&p->free_ids, int32_t, (size_t)smaller))->bytes)) {
      smaller = (int32_t)i;
    }
  }
  return larger >= 0 ? larger : smaller;
}

static kiln_status_t request_storage(planner_t *p, kiln_memory_plan_entry_t *entry) {
  size_t size = aligned_size(entry->bytes);
  p->tensor_bytes += size;
  int32_t position = pick_free(p, entry->dtype, size);
  if (position >= 0) {
    kiln_array_remove(&p->free_ids, (size_t)position, &entry->storage_id);
    kiln_memory_storage_t *storage = storage_at(p, entry->storage_id);
    storage->bytes = storage->bytes > size ? storage->bytes : size;
    return KILN_OK;
  }
  kiln_memory_storage_t storage = {.dtype = entry->dtype, .bytes = size};
  entry->storage_id = (int)kiln_array_count(&p->storages);
  return kiln_array_push(&p->storages, &storage);
}

static kiln_status_t release_if_dead(planner_t *p, int32_t ref) {
  if (ref < 0 || *uses_at(p, ref) != 0 || entry_at(p, ref)->per_run) {
    return KILN_OK;
  }
  *uses_at(p, ref) = -2; /* released */
  int32_t id = entry_at(p, ref)->storage_id;
  return kiln_array_push(&p->free_ids, &id);
}

/* An input of an in-place concatenate: the concatenate's storage (taken
 * now if this is its first input) at the input's offset. */
static kiln_status_t place_in(planner_t *p, int32_t ref) {
  kiln_memory_plan_entry_t *whole = entry_at(p, p->alias[ref]);
  if (whole->storage_id < 0) {
    KILN_RETURN_IF_ERROR(request_storage(p, whole));
  }
  entry_at(p, ref)->storage_id = whole->storage_id;
  *uses_at(p, ref) = PLAN_USES_IN_PLACE;
  return KILN_OK;
}

static kiln_status_t plan_call(planner_t *p, int32_t node) {
  const kiln_expr_t *expr = node_at(p, node);
  for (int32_t k = 0; k < p->count[node]; ++k) {
    int32_t ref = *ref_at(p, node, k);
    if (p->alias[ref] >= 0) {
      KILN_RETURN_IF_ERROR(place_in(p, ref));
    } else if (*uses_at(p, ref) >= 0 && entry_at(p, ref)->storage_id < 0 &&
               !entry_at(p, ref)->per_run) {
      KILN_RETURN_IF_ERROR(request_storage(p, entry_at(p, ref)));
    }
  }
  for (int i = 0; i < kiln_dataflow_child_count(expr); ++i) {
    int32_t arg = kiln_dataflow_order_index(&p->index, kiln_dataflow_child_at(expr, i));
    for (int32_t k = 0; k < p->count[arg]; ++k) {
      int32_t ref = *ref_at(p, arg, k);
      if (ref >= 0 && *uses_at(p, ref) > 0) {
        *uses_at(p, ref) -= 1;
        KILN_RETURN_IF_ERROR(release_if_dead(p, ref));
      }
    }
  }
  for (int32_t k = 0; k < p->count[node]; ++k) {
    KILN_RETURN_IF_ERROR(release_if_dead(p, *ref_at(p, node, k)));
  }
  return KILN_OK;
}

/* ---- concatenation in place ---- */

/* The axis of `call` when its callee is one concatenate of its parameters
 * in order, else -1. */
static int lone_concatenate_axis(const kiln_call_t *call) {
  const kiln_function_t *f = call->callee;
  const kiln_call_t *body = f && f->primitive ? kiln_expr_as_call(f->body) : NULL;
  if (!body || body->op != &kiln_op_concatenate || body->num_args != f->num_params) {
    return -1;
  }
  for (int i = 0; i < body->num_args; ++i) {
    if (body->args[i] != &f->params[i]->base) {
      return -1;
    }
  }
  const kiln_tensor_type_t *out = kiln_type_as_tensor(call->base.checked_type);
  int64_t axis = ((const kiln_concatenate_attrs_t *)body->attrs)->axis;
  axis = out && axis < 0 ? axis + out->ndim : axis;
  return out && axis >= 0 && axis < out->ndim ? (int)axis : -1;
}

/* The entry of `expr` when it is one tensor made by a call of main for one
 * reader, not yet placed in a concatenate; else -1. */
static int32_t sole_use_entry(const planner_t *p, const kiln_expr_t *expr) {
  int32_t node = kiln_dataflow_order_index(&p->index, expr);
  int32_t ref = p->count[node] == 1 ? *ref_at(p, node, 0) : -1;
  if (expr->kind != KILN_EXPR_KIND_CALL || ref < 0 || *uses_at(p, ref) != 1 || p->alias[ref] >= 0 ||
      entry_at(p, ref)->in_place) {
    return -1;
  }
  return ref;
}

/* An input of an in-place concatenate: its entry and offset. */
typedef struct placed_t {
  int32_t ref;
  size_t offset;
} placed_t;

/* Whether the concatenate `node` can be in place; its inputs' places. */
static bool fits_in_place(const planner_t *p, int32_t node, placed_t *places) {
  const kiln_call_t *call = kiln_expr_as_call(node_at(p, node));
  int axis = call ? lone_concatenate_axis(call) : -1;
  int32_t whole = p->count[node] == 1 ? *ref_at(p, node, 0) : -1;
  if (axis < 0 || whole < 0 || *uses_at(p, whole) < 0) {
    return false;
  }
  const kiln_tensor_type_t *out = kiln_type_as_tensor(call->base.checked_type);
  for (int d = 0; d < axis; ++d) {
    if (out->shape[d] != 1) {
      return false;
    }
  }
  size_t offset = 0;
  for (int i = 0; i < call->num_args; ++i) {
    int32_t ref = sole_use_entry(p, call->args[i]);
    if (ref < 0 || offset % KILN_MEMORY_PLAN_ALIGNMENT != 0 ||
        entry_at(p, ref)->dtype != entry_at(p, whole)->dtype) {
      return false;
    }
    places[i] = (placed_t){ref, offset};
    offset += entry_at(p, ref)->bytes;
  }
  return true;
}

/* Whether a value of the module has a dim known only at run time (main's
 * parameters, a dyn operator's output): the module is compiled for the VM
 * (compiler/vm_symbolic.c), which places the static and bounded values in
 * the plan and allocates the others per run. */
static kiln_status_t is_symbolic(const kiln_module_t *module, bool *out_symbolic) {
  kiln_status_t status = kiln_ir_module_require_static(module, "plan_memory");
  *out_symbolic = status && kiln_status_code(status) == KILN_STATUS_CODE_UNIMPLEMENTED;
  if (*out_symbolic) {
    kiln_status_free(status);
    return KILN_OK;
  }
  return status;
}

/* Marks the concatenates planned in place (none in a module with symbolic
 * dims: the VM's program for it runs every kernel, at offset 0). */
static kiln_status_t find_in_place(planner_t *p, bool symbolic) {
  int32_t count = symbolic ? 0 : (int32_t)kiln_array_count(&p->nodes);
  size_t entries = kiln_array_count(&p->entries);
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(p->allocator, entries + 1, sizeof(int32_t), (void **)&p->alias));
  for (size_t e = 0; e < entries; ++e) {
    p->alias[e] = -1;
  }
  kiln_array_t places;
  kiln_array_initialize(&places, p->allocator, sizeof(placed_t));
  kiln_status_t status = KILN_OK;
  for (int32_t node = 0; status == KILN_OK && node < count; ++node) {
    const kiln_call_t *call = kiln_expr_as_call(node_at(p, node));
    if (!call || call->num_args < 2) {
      continue;
    }
    status = kiln_array_reserve(&places, (size_t)call->num_args);
    if (status != KILN_OK || !fits_in_place(p, node, places.data)) {
      continue;
    }
    int32_t whole = *ref_at(p, node, 0);
    entry_at(p, whole)->in_place = true;
    for (int i = 0; i < call->num_args; ++i) {
      const placed_t *place = (const placed_t *)places.data + i;
      p->alias[place->ref] = whole;
      entry_at(p, place->ref)->offset = place->offset;
    }
  }
  kiln_array_deinitialize(&places);
  return status;
}

static kiln_status_t plan_steps(planner_t *p, const kiln_module_t *module,
                                const kiln_function_t *main_fn) {
  bool symbolic = false;
  KILN_RETURN_IF_ERROR(is_symbolic(module, &symbolic));
  KILN_RETURN_IF_ERROR(kiln_dataflow_order_compute(main_fn, &p->nodes, &p->index));
  KILN_RETURN_IF_ERROR(list_tensors(p));
  count_uses(p);
  KILN_RETURN_IF_ERROR(find_in_place(p, symbolic));
  int32_t count = (int32_t)kiln_array_count(&p->nodes);
  for (int32_t node = 0; node < count; ++node) {
    if (node_at(p, node)->kind == KILN_EXPR_KIND_CALL) {
      KILN_RETURN_IF_ERROR(plan_call(p, node));
    }
  }
  return KILN_OK;
}

/* ---- the plan ---- */

static kiln_status_t copy_out(const planner_t *p, kiln_allocator_t allocator,
                              kiln_memory_plan_t **out_plan) {
  kiln_memory_plan_t *plan = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*plan), (void **)&plan));
  plan->allocator = allocator;
  plan->num_storages = (int)kiln_array_count(&p->storages);
  plan->num_entries = (int)kiln_array_count(&p->entries);
  plan->tensor_bytes = p->tensor_bytes;
  kiln_status_t status =
      kiln_allocator_malloc_array(allocator, (size_t)plan->num_storages + 1,
                                  sizeof(kiln_memory_storage_t), (void **)&plan->storages);
  if (!status) {
    status = kiln_allocator_malloc_array(allocator, (size_t)plan->num_entries + 1,
                                         sizeof(kiln_memory_plan_entry_t), (void **)&plan->entries);
  }
  if (status) {
    kiln_pass_plan_memory_destroy(plan);
    return status;
  }
  if (plan->num_storages > 0) {
    memcpy(plan->storages, kiln_array_data(&p->storages),
           (size_t)plan->num_storages * sizeof(kiln_memory_storage_t));
  }
  if (plan->num_entries > 0) {
    memcpy(plan->entries, kiln_array_data(&p->entries),
           (size_t)plan->num_entries * sizeof(kiln_memory_plan_entry_t));
  }
  for (int i = 0; i < plan->num_storages; ++i) {
    plan->planned_bytes += plan->storages[i].bytes;
  }
  *out_plan = plan;
  return KILN_OK;
}

kiln_status_t kiln_pass_plan_memory_compute(const kiln_module_t *module, kiln_allocator_t allocator,
                                            kiln_memory_plan_t **out_plan) {
  *out_plan = NULL;
  const kiln_function_t *main_fn = kiln_module_get_function(module, "main");
  if (!main_fn) {
    return KILN_STATUS(NOT_FOUND, "plan_memory: the module has no function @main");
  }
  planner_t p;
  memset(&p, 0, sizeof(p));
  p.allocator = allocator;
  kiln_array_initialize(&p.nodes, allocator, sizeof(kiln_expr_t *));
  kiln_hashmap_initialize(&p.index, allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_array_initialize(&p.refs, allocator, sizeof(int32_t));
  kiln_array_initialize(&p.entries, allocator, sizeof(kiln_memory_plan_entry_t));
  kiln_array_initialize(&p.uses, allocator, sizeof(int32_t));
  kiln_array_initialize(&p.storages, allocator, sizeof(kiln_memory_storage_t));
  kiln_array_initialize(&p.free_ids, allocator, sizeof(int32_t));
  kiln_status_t status = plan_steps(&p, module, main_fn);
  if (!status) {
    status = copy_out(&p, allocator, out_plan);
  }
  kiln_allocator_free(allocator, p.first);
  kiln_allocator_free(allocator, p.count);
  kiln_allocator_free(allocator, p.alias);
  kiln_array_deinitialize(&p.nodes);
  kiln_hashmap_deinitialize(&p.index);
  kiln_array_deinitialize(&p.refs);
  kiln_array_deinitialize(&p.entries);
  kiln_array_deinitialize(&p.uses);
  kiln_array_deinitialize(&p.storages);
  kiln_array_deinitialize(&p.free_ids);
  return status;
}

void kiln_pass_plan_memory_destroy(kiln_memory_plan_t *plan) {
  if (!plan) {
    return;
  }
  kiln_allocator_free(plan->allocator, plan->storages);
  kiln_allocator_free(plan->allocator, plan->entries);
  kiln_allocator_free(plan->allocator, plan);
}

const kiln_memory_plan_entry_t *kiln_memory_plan_find(const kiln_memory_plan_t *plan,
                                                      const kiln_expr_t *expr, int field) {
  for (int i = 0; i < plan->num_entries; ++i) {
    if (plan->entries[i].expr == expr && plan->entries[i].field == field) {
      return &plan->entries[i];
    }
  }
  return NULL;
}

/* ---- the pass ---- */

static kiln_status_t plan_memory_run(kiln_module_t *module, kiln_pass_context_t *context) {
  (void)context;
  bool symbolic = false;
  KILN_RETURN_IF_ERROR(is_symbolic(module, &symbolic));
  if (symbolic) {
    KILN_LOG_INFO("plan_memory: symbolic dims, no static plan");
    return KILN_OK;
  }
  kiln_memory_plan_t *plan = NULL;
  KILN_RETURN_IF_ERROR(kiln_pass_plan_memory_compute(module, kiln_module_allocator(module), &plan));
  KILN_LOG_INFO("plan_memory: %d storages, %zu bytes, against %zu bytes for all tensors",
                plan->num_storages, plan->planned_bytes, plan->tensor_bytes);
  kiln_pass_plan_memory_destroy(plan);
  return KILN_OK;
}

static const char *const plan_memory_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_plan_memory = {
    .info = {.name = "plan_memory", .opt_level = 0, .required = plan_memory_required},
    .run = plan_memory_run,
};
