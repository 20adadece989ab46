/*
 * Parallel loops as outlined lambdas (TVM's CreateParallelLaunch); see
 * codegen/parallel.h for the closure and the chunking.
 *
 * For lambda n the emitter writes `struct __kiln_closure_<n>` (one field per
 * free variable, named as the variable), then `static int
 * __kiln_parallel_lambda_<n>(int task_id, kiln_parallel_env_t *penv, void
 * *cdata)`, which copies the fields back into locals of the same names, so
 * the loop body is emitted exactly as it would be inline, and runs its
 * task's iterations. In place of the loop it writes the closure's
 * initializer and `if (__kiln_parallel_launch(...) != 0) return -1;`. The
 * lambda has its own workspaces: an error exit inside it frees only those.
 */
#include "codegen/c/emit.h"

#define A(...) KILN_RETURN_IF_ERROR(kiln_cg_printf(cg, __VA_ARGS__))
#define L(...) KILN_RETURN_IF_ERROR(kiln_cg_line(cg, __VA_ARGS__))

static kiln_status_t emit_closure(kiln_cg_t *cg, const kiln_codegen_lambda_t *lambda, int id) {
  A("struct __kiln_closure_%d {\n", id);
  for (int i = 0; i < lambda->num_free; ++i) {
    const char *name = NULL, *type = "void *";
    KILN_RETURN_IF_ERROR(kiln_cg_name(cg, lambda->free_vars[i], &name));
    if (!lambda->is_data[i]) {
      KILN_RETURN_IF_ERROR(kiln_cg_type(cg, lambda->free_vars[i]->base.dtype, &type));
    }
    A("  %s%s%s;\n", type, lambda->is_data[i] ? "" : " ", name);
  }
  if (lambda->num_free == 0) {
    A("  char unused_;\n");
  }
  A("};\n\n");
  return KILN_OK;
}

static kiln_status_t emit_unpack(kiln_cg_t *cg, const kiln_codegen_lambda_t *lambda, int id) {
  A("static int __kiln_parallel_lambda_%d(int task_id, kiln_parallel_env_t *penv, void *cdata) "
    "{\n",
    id);
  A("  const struct __kiln_closure_%d *closure = (const struct __kiln_closure_%d *)cdata;\n", id,
    id);
  for (int i = 0; i < lambda->num_free; ++i) {
    const char *name = NULL, *type = "void *";
    KILN_RETURN_IF_ERROR(kiln_cg_name(cg, lambda->free_vars[i], &name));
    if (!lambda->is_data[i]) {
      KILN_RETURN_IF_ERROR(kiln_cg_type(cg, lambda->free_vars[i]->base.dtype, &type));
    }
    A("  %s%s%s%s = closure->%s;\n", lambda->is_data[i] ? "" : "const ", type,
      lambda->is_data[i] ? "" : " ", name, name);
  }
  A("  (void)closure;\n");
  return KILN_OK;
}

static kiln_status_t emit_chunk(kiln_cg_t *cg, const kiln_tir_for_t *loop) {
  const char *name = NULL, *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_name(cg, loop->var, &name));
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, loop->var->base.dtype, &type));
  A("  const int64_t num_task = penv->num_task;\n");
  A("  const int64_t extent = (int64_t)");
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, loop->extent));
  A(";\n");
  if (cg->chunk == KILN_CODEGEN_CHUNK_STRIDE) {
    A("  for (int64_t %s_k = task_id; %s_k < extent; %s_k += num_task) {\n", name, name, name);
  } else {
    A("  const int64_t step = (extent + num_task - 1) / num_task;\n");
    A("  const int64_t begin = kiln_min_i64((int64_t)task_id * step, extent);\n");
    A("  const int64_t end = kiln_min_i64(((int64_t)task_id + 1) * step, extent);\n");
    A("  for (int64_t %s_k = begin; %s_k < end; ++%s_k) {\n", name, name, name);
  }
  A("    const %s %s = (%s)(", type, name, type);
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, loop->min));
  A(" + %s_k);\n", name);
  cg->indent = 2;
  KILN_RETURN_IF_ERROR(kiln_cg_stmt(cg, loop->body));
  A("  }\n  return 0;\n}\n\n");
  return KILN_OK;
}

/* The closure struct and the lambda, into cg->lambdas. */
static kiln_status_t emit_lambda(kiln_cg_t *cg, const kiln_codegen_lambda_t *lambda, int id) {
  kiln_strbuf_t text;
  kiln_strbuf_initialize(&text, kiln_arena_allocator(&cg->arena));
  kiln_strbuf_t *saved_out = cg->out;
  int saved_indent = cg->indent;
  kiln_array_t saved_workspaces = cg->workspaces;
  kiln_array_initialize(&cg->workspaces, kiln_arena_allocator(&cg->arena), sizeof(const char *));
  cg->out = &text;
  kiln_status_t status = emit_closure(cg, lambda, id);
  if (!status) {
    status = emit_unpack(cg, lambda, id);
  }
  if (!status) {
    status = emit_chunk(cg, lambda->loop);
  }
  cg->out = saved_out;
  cg->indent = saved_indent;
  kiln_array_deinitialize(&cg->workspaces);
  cg->workspaces = saved_workspaces;
  KILN_RETURN_IF_ERROR(status);
  return kiln_strbuf_append(&cg->lambdas, kiln_strbuf_c_str(&text));
}

kiln_status_t kiln_cg_parallel(kiln_cg_t *cg, const kiln_tir_for_t *loop) {
  const kiln_codegen_lambda_t *lambda = kiln_codegen_parallel_find(&cg->parallel, loop);
  if (!lambda) {
    return KILN_STATUS(INTERNAL, "%s: parallel loop %s was not outlined", cg->func->name,
                       loop->var->name);
  }
  int id = cg->lambda_base + lambda->id;
  KILN_RETURN_IF_ERROR(emit_lambda(cg, lambda, id));
  L("{\n");
  ++cg->indent;
  L("struct __kiln_closure_%d closure_%d = {", id, id);
  for (int i = 0; i < lambda->num_free; ++i) {
    const char *name = NULL;
    KILN_RETURN_IF_ERROR(kiln_cg_name(cg, lambda->free_vars[i], &name));
    A("%s%s", i ? ", " : "", name);
  }
  A(lambda->num_free ? "};\n" : "0};\n");
  L("if (__kiln_parallel_launch(__kiln_parallel_lambda_%d, &closure_%d, 0) != 0) { ", id, id);
  KILN_RETURN_IF_ERROR(kiln_cg_fail_exit(cg));
  A(" }\n");
  --cg->indent;
  L("}\n");
  return KILN_OK;
}
