/*
 * dead_code_elimination: removes computation whose result nothing reads.
 *
 * In kiln's graph IR there are no let bindings: a function is the DAG
 * reachable from its body, so a node nothing reaches is not part of it (a
 * rewrite's leftovers stay in the arena but no walk sees them). What can
 * still be dead is a value built and then only partly read:
 *
 * - TupleGetItem(Tuple(a, b, c), 1) becomes b: the tuple and the fields the
 *   item does not pick (a and c, unless something else reads them) leave the
 *   graph;
 * - a parameter of a primitive (fused) function that its body never reads
 *   is removed, and the matching argument of every call of that function:
 *   the argument's computation leaves the graph when nothing else reads it.
 *   A function called from several places is rebuilt once (memoized), so
 *   every call site agrees. Module functions keep their signatures, a
 *   primitive one included: their parameters are the module's interface
 *   (and a parameter may belong to one function only).
 */
#include "ir/order.h"
#include "pass/passes.h"
#include "pass/rewrite.h"

#define DCE_MAX_PARAMS 1024

typedef struct dce_slim_t {
  kiln_function_t *function; /* the function without its unread parameters */
  bool kept[DCE_MAX_PARAMS];
} dce_slim_t;

typedef struct dce_state_t {
  kiln_hashmap_t slimmed; /* callee -> dce_slim_t * (in the module arena), or NULL: nothing to do */
} dce_state_t;

/* Which parameters of `function` its body reads; *out_all when all are. */
static kiln_status_t find_read_params(kiln_module_t *module, const kiln_function_t *function,
                                      bool *kept, bool *out_all) {
  kiln_ir_order_t order;
  KILN_RETURN_IF_ERROR(kiln_ir_order_compute(function, kiln_module_allocator(module), &order));
  *out_all = true;
  for (int p = 0; p < function->num_params; ++p) {
    kept[p] = false;
    for (size_t i = 0; i < kiln_ir_order_count(&order) && !kept[p]; ++i) {
      kept[p] = kiln_ir_order_node(&order, i) == &function->params[p]->base;
    }
    *out_all &= kept[p];
  }
  kiln_ir_order_deinitialize(&order);
  return KILN_OK;
}

static kiln_status_t slim_function(kiln_module_t *module, kiln_function_t *function,
                                   dce_slim_t **out_slim) {
  *out_slim = NULL;
  dce_slim_t *slim = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(kiln_module_arena(module), sizeof(*slim),
                                                  _Alignof(dce_slim_t), (void **)&slim));
  bool all = true;
  KILN_RETURN_IF_ERROR(find_read_params(module, function, slim->kept, &all));
  if (all) {
    return KILN_OK;
  }
  kiln_var_t *params[DCE_MAX_PARAMS];
  int count = 0;
  for (int p = 0; p < function->num_params; ++p) {
    if (slim->kept[p]) {
      params[count++] = function->params[p];
    }
  }
  KILN_RETURN_IF_ERROR(
      kiln_ir_function_create(module, count, params, function->body, &slim->function));
  slim->function->primitive = true;
  KILN_RETURN_IF_ERROR(kiln_pass_type_node(module, &slim->function->base));
  *out_slim = slim;
  return KILN_OK;
}

static bool is_module_function(const kiln_module_t *module, const kiln_function_t *function) {
  for (int i = 0; i < kiln_module_function_count(module); ++i) {
    if (kiln_module_function_at(module, i) == function) {
      return true;
    }
  }
  return false;
}

static kiln_status_t dce_call(kiln_pass_rewriter_t *rewriter, kiln_call_t *call,
                              kiln_expr_t **out_expr) {
  *out_expr = &call->base;
  kiln_function_t *callee = call->callee;
  if (!callee || !callee->primitive || callee->num_params > DCE_MAX_PARAMS ||
      is_module_function(rewriter->module, callee)) {
    return KILN_OK;
  }
  dce_state_t *state = rewriter->state;
  void *value = NULL;
  if (!kiln_hashmap_get(&state->slimmed, callee, &value)) {
    KILN_RETURN_IF_ERROR(slim_function(rewriter->module, callee, (dce_slim_t **)&value));
    KILN_RETURN_IF_ERROR(kiln_hashmap_put(&state->slimmed, callee, value));
  }
  const dce_slim_t *slim = value;
  if (!slim) {
    return KILN_OK;
  }
  kiln_expr_t *args[DCE_MAX_PARAMS];
  int count = 0;
  for (int p = 0; p < call->num_args; ++p) {
    if (slim->kept[p]) {
      args[count++] = call->args[p];
    }
  }
  kiln_call_t *fresh = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_call_function_create(rewriter->module, slim->function, count, args, &fresh));
  rewriter->rewrites += call->num_args - count;
  *out_expr = &fresh->base;
  return kiln_pass_type_node(rewriter->module, *out_expr);
}

static kiln_status_t dead_code_elimination_run(kiln_module_t *module,
                                               kiln_pass_context_t *context) {
  dce_state_t state;
  kiln_hashmap_initialize(&state.slimmed, kiln_module_allocator(module), KILN_HASHMAP_KEY_POINTER);
  kiln_pass_rewriter_t rewriter = {.call_rule = dce_call, .state = &state, .forward_items = true};
  kiln_status_t status = kiln_pass_rewrite_module_with(module, context, &rewriter);
  kiln_hashmap_deinitialize(&state.slimmed);
  return status;
}

static const char *const dead_code_elimination_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_dead_code_elimination = {
    .info = {.name = "dead_code_elimination",
             .opt_level = 1,
             .required = dead_code_elimination_required},
    .run = dead_code_elimination_run,
};
