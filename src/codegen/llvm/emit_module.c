/*
 * Module and function setup of the LLVM emitter; see emit.h.
 *
 * The module starts from IR text parsed in the build's context (the
 * prelude below): writing the fixed parts as IR is shorter and easier to
 * read than building them call by call. It declares the DLTensor layout
 * (%kiln.tensor, the same fields and offsets as DLTensor), the packed value
 * union and the parallel environment of kiln/backend.h, the backend ABI as
 * function-pointer globals that the module loader fills after dlopen (the
 * C backend's scheme) and the JIT fills after lookup, and cold, never
 * inlined helpers that format the argument checks' messages with snprintf
 * and set the last error, so each check costs one compare and an unlikely
 * branch on the hot path.
 *
 * A PrimFunc becomes two functions, as in TVM: the packed function (the
 * argument checks, emit_checks.c) and an internal "<name>_compute_" that
 * takes the buffers' data pointers (noalias, aligned to the element size the
 * checks proved) and the symbolic shape variables and holds the body; O3
 * inlines it, turning noalias into scoped alias metadata that lets loads
 * and stores of different buffers be reordered and vectorized. Beside it,
 * the constant @__kiln_num_args_<name> records its argument count for the
 * module loader (kiln_runtime_module_function_num_args).
 */
#include <stdio.h>
#include <string.h>

#include <llvm-c/IRReader.h>

#include "base/strbuf.h"
#include "codegen/llvm/emit.h"
#include "kiln/module.h"

/* The prelude, in parts (each under C99's 4095-character literal limit). */
static const char *const prelude[] = {
    "%kiln.tensor = type { i8*, { i32, i32 }, i32, { i8, i8, i16 }, i64*, i64*, i64 }\n"
    "%kiln.value = type { i64 }\n"
    "%kiln.penv = type { i8*, i32 }\n"
    "\n"
    "@__kiln_backend_set_last_error = global void (i8*)* null, align 8\n"
    "@__kiln_parallel_launch = global i32 (i32 (i32, %kiln.penv*, i8*)*, i8*, i32)* null, "
    "align 8\n"
    "@__kiln_parallel_barrier = global i32 (i32, %kiln.penv*)* null, align 8\n"
    "@__kiln_backend_alloc_workspace = global i8* (i64)* null, align 8\n"
    "@__kiln_backend_free_workspace = global void (i8*)* null, align 8\n"
    "\n",
    "@.kiln.k0 = private unnamed_addr constant [4 x i8] c\"int\\00\"\n"
    "@.kiln.k1 = private unnamed_addr constant [5 x i8] c\"uint\\00\"\n"
    "@.kiln.k2 = private unnamed_addr constant [6 x i8] c\"float\\00\"\n"
    "@.kiln.k3 = private unnamed_addr constant [7 x i8] c\"handle\\00\"\n"
    "@.kiln.k4 = private unnamed_addr constant [7 x i8] c\"bfloat\\00\"\n"
    "@.kiln.k5 = private unnamed_addr constant [8 x i8] c\"complex\\00\"\n"
    "@.kiln.k6 = private unnamed_addr constant [5 x i8] c\"bool\\00\"\n"
    "@.kiln.k7 = private unnamed_addr constant [5 x i8] c\"code\\00\"\n"
    "@.kiln.kinds = private unnamed_addr constant [8 x i8*] [\n"
    "  i8* getelementptr inbounds ([4 x i8], [4 x i8]* @.kiln.k0, i64 0, i64 0),\n"
    "  i8* getelementptr inbounds ([5 x i8], [5 x i8]* @.kiln.k1, i64 0, i64 0),\n"
    "  i8* getelementptr inbounds ([6 x i8], [6 x i8]* @.kiln.k2, i64 0, i64 0),\n"
    "  i8* getelementptr inbounds ([7 x i8], [7 x i8]* @.kiln.k3, i64 0, i64 0),\n"
    "  i8* getelementptr inbounds ([7 x i8], [7 x i8]* @.kiln.k4, i64 0, i64 0),\n"
    "  i8* getelementptr inbounds ([8 x i8], [8 x i8]* @.kiln.k5, i64 0, i64 0),\n"
    "  i8* getelementptr inbounds ([5 x i8], [5 x i8]* @.kiln.k6, i64 0, i64 0),\n"
    "  i8* getelementptr inbounds ([5 x i8], [5 x i8]* @.kiln.k7, i64 0, i64 0)]\n"
    "@.kiln.first = private unnamed_addr constant [5 x i8] c\"%lld\\00\"\n"
    "@.kiln.next = private unnamed_addr constant [7 x i8] c\", %lld\\00\"\n"
    "@.kiln.close1 = private unnamed_addr constant [3 x i8] c\",)\\00\"\n"
    "@.kiln.close = private unnamed_addr constant [2 x i8] c\")\\00\"\n"
    "\n"
    "declare i32 @snprintf(i8*, i64, i8*, ...)\n"
    "\n",
    "; Formats `fmt` with one int, sets the last error, returns -1.\n"
    "define internal i32 @__kiln_fail(i8* %fmt, i32 %a) cold noinline {\n"
    "entry:\n"
    "  %buf = alloca [1024 x i8], align 16\n"
    "  %p = getelementptr inbounds [1024 x i8], [1024 x i8]* %buf, i64 0, i64 0\n"
    "  %n = call i32 (i8*, i64, i8*, ...) @snprintf(i8* %p, i64 1024, i8* %fmt, i32 %a)\n"
    "  %f = load void (i8*)*, void (i8*)** @__kiln_backend_set_last_error, align 8\n"
    "  call void %f(i8* %p)\n"
    "  ret i32 -1\n"
    "}\n"
    "\n",
    "; A dtype mismatch: fmt1 (\"...%s%d...\") for one lane, fmtn (\"...%s%dx%d...\").\n"
    "define internal i32 @__kiln_fail_dtype(i8* %fmt1, i8* %fmtn, i8 %code, i8 %bits, i16 "
    "%lanes) cold noinline {\n"
    "entry:\n"
    "  %buf = alloca [1024 x i8], align 16\n"
    "  %p = getelementptr inbounds [1024 x i8], [1024 x i8]* %buf, i64 0, i64 0\n"
    "  %c = zext i8 %code to i64\n"
    "  %big = icmp ugt i64 %c, 6\n"
    "  %ci = select i1 %big, i64 7, i64 %c\n"
    "  %kp = getelementptr inbounds [8 x i8*], [8 x i8*]* @.kiln.kinds, i64 0, i64 %ci\n"
    "  %k = load i8*, i8** %kp, align 8\n"
    "  %b = zext i8 %bits to i32\n"
    "  %l = zext i16 %lanes to i32\n"
    "  %one = icmp eq i32 %l, 1\n"
    "  br i1 %one, label %scalar, label %vector\n"
    "scalar:\n"
    "  %n1 = call i32 (i8*, i64, i8*, ...) @snprintf(i8* %p, i64 1024, i8* %fmt1, i8* %k, i32 "
    "%b)\n"
    "  br label %done\n"
    "vector:\n"
    "  %n2 = call i32 (i8*, i64, i8*, ...) @snprintf(i8* %p, i64 1024, i8* %fmtn, i8* %k, i32 "
    "%b, i32 %l)\n"
    "  br label %done\n"
    "done:\n"
    "  %f = load void (i8*)*, void (i8*)** @__kiln_backend_set_last_error, align 8\n"
    "  call void %f(i8* %p)\n"
    "  ret i32 -1\n"
    "}\n"
    "\n",
    "; A shape mismatch: fmt has one %s for the tensor's shape, \"(2, 3)\".\n"
    "define internal i32 @__kiln_fail_shape(i8* %fmt, %kiln.tensor* %t) cold noinline {\n"
    "entry:\n"
    "  %text = alloca [512 x i8], align 16\n"
    "  %buf = alloca [1024 x i8], align 16\n"
    "  %tp = getelementptr inbounds [512 x i8], [512 x i8]* %text, i64 0, i64 0\n"
    "  store i8 40, i8* %tp, align 1\n"
    "  %ndimp = getelementptr inbounds %kiln.tensor, %kiln.tensor* %t, i32 0, i32 2\n"
    "  %ndim = load i32, i32* %ndimp, align 4\n"
    "  %shp = getelementptr inbounds %kiln.tensor, %kiln.tensor* %t, i32 0, i32 4\n"
    "  %sh = load i64*, i64** %shp, align 8\n"
    "  br label %head\n"
    "head:\n"
    "  %d = phi i32 [ 0, %entry ], [ %d1, %body ]\n"
    "  %n = phi i64 [ 1, %entry ], [ %n1, %body ]\n"
    "  %more = icmp slt i32 %d, %ndim\n"
    "  %room = icmp ult i64 %n, 480\n"
    "  %go = and i1 %more, %room\n"
    "  br i1 %go, label %body, label %tail\n"
    "body:\n"
    "  %dst = getelementptr inbounds i8, i8* %tp, i64 %n\n"
    "  %rest = sub i64 512, %n\n"
    "  %first = icmp eq i32 %d, 0\n"
    "  %f1 = getelementptr inbounds [5 x i8], [5 x i8]* @.kiln.first, i64 0, i64 0\n"
    "  %f2 = getelementptr inbounds [7 x i8], [7 x i8]* @.kiln.next, i64 0, i64 0\n"
    "  %fd = select i1 %first, i8* %f1, i8* %f2\n"
    "  %d64 = sext i32 %d to i64\n"
    "  %ep = getelementptr inbounds i64, i64* %sh, i64 %d64\n"
    "  %e = load i64, i64* %ep, align 8\n"
    "  %w = call i32 (i8*, i64, i8*, ...) @snprintf(i8* %dst, i64 %rest, i8* %fd, i64 %e)\n"
    "  %w64 = sext i32 %w to i64\n"
    "  %n1 = add i64 %n, %w64\n"
    "  %d1 = add i32 %d, 1\n"
    "  br label %head\n"
    "tail:\n"
    "  %dst2 = getelementptr inbounds i8, i8* %tp, i64 %n\n"
    "  %rest2 = sub i64 512, %n\n"
    "  %isone = icmp eq i32 %ndim, 1\n"
    "  %c1 = getelementptr inbounds [3 x i8], [3 x i8]* @.kiln.close1, i64 0, i64 0\n"
    "  %c2 = getelementptr inbounds [2 x i8], [2 x i8]* @.kiln.close, i64 0, i64 0\n"
    "  %close = select i1 %isone, i8* %c1, i8* %c2\n"
    "  %w2 = call i32 (i8*, i64, i8*, ...) @snprintf(i8* %dst2, i64 %rest2, i8* %close)\n"
    "  %p = getelementptr inbounds [1024 x i8], [1024 x i8]* %buf, i64 0, i64 0\n"
    "  %w3 = call i32 (i8*, i64, i8*, ...) @snprintf(i8* %p, i64 1024, i8* %fmt, i8* %tp)\n"
    "  %f = load void (i8*)*, void (i8*)** @__kiln_backend_set_last_error, align 8\n"
    "  call void %f(i8* %p)\n"
    "  ret i32 -1\n"
    "}\n"
    "\n",
    "; Strides NULL or row-major (dims of extent 1 may have any stride).\n"
    "define internal i1 @__kiln_is_compact(%kiln.tensor* %t) {\n"
    "entry:\n"
    "  %stp = getelementptr inbounds %kiln.tensor, %kiln.tensor* %t, i32 0, i32 5\n"
    "  %st = load i64*, i64** %stp, align 8\n"
    "  %none = icmp eq i64* %st, null\n"
    "  br i1 %none, label %yes, label %start\n"
    "start:\n"
    "  %ndimp = getelementptr inbounds %kiln.tensor, %kiln.tensor* %t, i32 0, i32 2\n"
    "  %ndim = load i32, i32* %ndimp, align 4\n"
    "  %shp = getelementptr inbounds %kiln.tensor, %kiln.tensor* %t, i32 0, i32 4\n"
    "  %sh = load i64*, i64** %shp, align 8\n"
    "  %last = sub i32 %ndim, 1\n"
    "  br label %head\n"
    "head:\n"
    "  %d = phi i32 [ %last, %start ], [ %d1, %next ]\n"
    "  %s = phi i64 [ 1, %start ], [ %s1, %next ]\n"
    "  %end = icmp slt i32 %d, 0\n"
    "  br i1 %end, label %yes, label %body\n"
    "body:\n"
    "  %d64 = sext i32 %d to i64\n"
    "  %ep = getelementptr inbounds i64, i64* %sh, i64 %d64\n"
    "  %e = load i64, i64* %ep, align 8\n"
    "  %sp = getelementptr inbounds i64, i64* %st, i64 %d64\n"
    "  %sv = load i64, i64* %sp, align 8\n"
    "  %unit = icmp eq i64 %e, 1\n"
    "  %same = icmp eq i64 %sv, %s\n"
    "  %ok = or i1 %unit, %same\n"
    "  br i1 %ok, label %next, label %no\n"
    "next:\n"
    "  %s1 = mul i64 %s, %e\n"
    "  %d1 = sub i32 %d, 1\n"
    "  br label %head\n"
    "yes:\n"
    "  ret i1 true\n"
    "no:\n"
    "  ret i1 false\n"
    "}\n",
};

static void make_types(kiln_llvm_t *ll) {
  LLVMContextRef c = ll->context;
  ll->t_void = LLVMVoidTypeInContext(c);
  ll->t_i1 = LLVMInt1TypeInContext(c);
  ll->t_i8 = LLVMInt8TypeInContext(c);
  ll->t_i16 = LLVMInt16TypeInContext(c);
  ll->t_i32 = LLVMInt32TypeInContext(c);
  ll->t_i64 = LLVMInt64TypeInContext(c);
  ll->t_f32 = LLVMFloatTypeInContext(c);
  ll->t_f64 = LLVMDoubleTypeInContext(c);
  ll->t_ptr = LLVMPointerType(ll->t_i8, 0);
  ll->t_tensor = LLVMGetTypeByName2(c, "kiln.tensor");
  ll->t_value = LLVMGetTypeByName2(c, "kiln.value");
  ll->t_penv = LLVMGetTypeByName2(c, "kiln.penv");
  LLVMTypeRef params[] = {ll->t_i32, LLVMPointerType(ll->t_penv, 0), ll->t_ptr};
  ll->t_lambda = LLVMFunctionType(ll->t_i32, params, 3, 0);
  ll->prof_kind = LLVMGetMDKindIDInContext(c, "prof", 4);
}

static kiln_status_t parse_prelude(kiln_arena_t *arena, LLVMContextRef context,
                                   LLVMModuleRef *out_module) {
  kiln_strbuf_t text;
  kiln_strbuf_initialize(&text, kiln_arena_allocator(arena));
  for (size_t i = 0; i < sizeof(prelude) / sizeof(prelude[0]); ++i) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(&text, prelude[i]));
  }
  LLVMMemoryBufferRef buffer = LLVMCreateMemoryBufferWithMemoryRangeCopy(
      kiln_strbuf_c_str(&text), kiln_strbuf_length(&text), "kiln_prelude");
  char *message = NULL;
  if (LLVMParseIRInContext(context, buffer, out_module, &message)) { /* takes the buffer */
    kiln_status_t status =
        KILN_STATUS(INTERNAL, "llvm backend: the prelude does not parse: %s", message);
    LLVMDisposeMessage(message);
    return status;
  }
  return KILN_OK;
}

kiln_status_t kiln_llvm_initialize(kiln_llvm_t *ll, kiln_allocator_t allocator,
                                   LLVMContextRef context, kiln_codegen_chunk_t chunk) {
  memset(ll, 0, sizeof(*ll));
  ll->context = context;
  ll->chunk = chunk;
  kiln_arena_initialize(&ll->arena, allocator, 0);
  kiln_allocator_t scratch = kiln_arena_allocator(&ll->arena);
  kiln_hashmap_initialize(&ll->vars, scratch, KILN_HASHMAP_KEY_POINTER);
  kiln_hashmap_initialize(&ll->wide, scratch, KILN_HASHMAP_KEY_POINTER);
  kiln_hashmap_initialize(&ll->memo, scratch, KILN_HASHMAP_KEY_POINTER);
  kiln_hashmap_initialize(&ll->has_load, scratch, KILN_HASHMAP_KEY_POINTER);
  kiln_array_initialize(&ll->memo_log, scratch, sizeof(const kiln_tir_expr_t *));
  kiln_array_initialize(&ll->workspaces, scratch, sizeof(LLVMValueRef));
  kiln_status_t status = parse_prelude(&ll->arena, context, &ll->module);
  if (status) {
    kiln_arena_deinitialize(&ll->arena);
    return status;
  }
  ll->builder = LLVMCreateBuilderInContext(context);
  make_types(ll);
  return KILN_OK;
}

void kiln_llvm_deinitialize(kiln_llvm_t *ll) {
  if (ll->builder) {
    LLVMDisposeBuilder(ll->builder);
  }
  ll->builder = NULL;
  kiln_arena_deinitialize(&ll->arena);
}

kiln_status_t kiln_llvm_prelude(kiln_llvm_t *ll, const char *name, LLVMValueRef *out_value) {
  LLVMValueRef value = LLVMGetNamedFunction(ll->module, name);
  if (!value) {
    value = LLVMGetNamedGlobal(ll->module, name);
  }
  if (!value) {
    return KILN_STATUS(INTERNAL, "llvm backend: the prelude has no %s", name);
  }
  *out_value = value;
  return KILN_OK;
}

kiln_status_t kiln_llvm_call_abi(kiln_llvm_t *ll, const char *name, LLVMTypeRef fn_type,
                                 LLVMValueRef *args, unsigned num_args, LLVMValueRef *out_value) {
  LLVMValueRef global = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_prelude(ll, name, &global));
  LLVMValueRef fn =
      LLVMBuildLoad2(ll->builder, LLVMPointerType(fn_type, 0), global, name + 2 /* "kiln_..." */);
  LLVMValueRef call = LLVMBuildCall2(ll->builder, fn_type, fn, args, num_args, "");
  if (out_value) {
    *out_value = call;
  }
  return KILN_OK;
}

LLVMValueRef kiln_llvm_string(kiln_llvm_t *ll, const char *text) {
  return LLVMBuildGlobalStringPtr(ll->builder, text, ".str");
}

kiln_status_t kiln_llvm_check(kiln_llvm_t *ll, LLVMValueRef cond, const char *what,
                              LLVMBasicBlockRef *out_ok) {
  char name[64];
  snprintf(name, sizeof(name), "%s.ok", what);
  LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(ll->context, ll->function, name);
  snprintf(name, sizeof(name), "%s.fail", what);
  LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(ll->context, ll->function, name);
  LLVMValueRef branch = LLVMBuildCondBr(ll->builder, cond, ok, fail);
  LLVMMetadataRef weights[] = {
      LLVMMDStringInContext2(ll->context, "branch_weights", 14),
      LLVMValueAsMetadata(LLVMConstInt(ll->t_i32, 1u << 20, 0)),
      LLVMValueAsMetadata(LLVMConstInt(ll->t_i32, 1, 0)),
  };
  LLVMSetMetadata(branch, ll->prof_kind,
                  LLVMMetadataAsValue(ll->context, LLVMMDNodeInContext2(ll->context, weights, 3)));
  LLVMPositionBuilderAtEnd(ll->builder, fail);
  *out_ok = ok;
  return KILN_OK;
}

static void add_attribute(kiln_llvm_t *ll, LLVMValueRef fn, unsigned index, const char *name,
                          uint64_t value) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, index, LLVMCreateEnumAttribute(ll->context, kind, value));
}

kiln_status_t kiln_llvm_body_function(kiln_llvm_t *ll, const char *name, int num_prefix,
                                      LLVMTypeRef *prefix, int num_vars,
                                      const kiln_tir_var_t *const *vars, const int *is_data,
                                      const int *align, LLVMValueRef *out_function,
                                      LLVMValueRef *out_prefix) {
  int count = num_prefix + num_vars;
  LLVMTypeRef *types = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&ll->arena, count > 0 ? (size_t)count : 1,
                                                 sizeof(*types), _Alignof(LLVMTypeRef),
                                                 (void **)&types));
  for (int i = 0; i < num_prefix; ++i) {
    types[i] = prefix[i];
  }
  for (int i = 0; i < num_vars; ++i) {
    types[num_prefix + i] = is_data[i] ? ll->t_ptr : kiln_llvm_type(ll, vars[i]->base.dtype);
  }
  LLVMTypeRef fn_type = LLVMFunctionType(ll->t_i32, types, (unsigned)count, 0);
  LLVMValueRef fn = LLVMAddFunction(ll->module, name, fn_type);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  add_attribute(ll, fn, LLVMAttributeFunctionIndex, "nounwind", 0);
  for (int i = 0; i < num_prefix; ++i) {
    out_prefix[i] = LLVMGetParam(fn, (unsigned)i);
  }
  for (int i = 0; i < num_vars; ++i) {
    LLVMValueRef param = LLVMGetParam(fn, (unsigned)(num_prefix + i));
    LLVMSetValueName2(param, vars[i]->name, strlen(vars[i]->name));
    if (is_data[i]) {
      unsigned index = (unsigned)(num_prefix + i + 1);
      add_attribute(ll, fn, index, "noalias", 0);
      if (align && align[i] > 1) {
        add_attribute(ll, fn, index, "align", (uint64_t)align[i]);
      }
    }
    KILN_RETURN_IF_ERROR(kiln_llvm_bind(ll, vars[i], param));
  }
  ll->function = fn;
  ll->allocas = LLVMAppendBasicBlockInContext(ll->context, fn, "entry");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(ll->context, fn, "body");
  LLVMPositionBuilderAtEnd(ll->builder, ll->allocas);
  LLVMBuildBr(ll->builder, body);
  LLVMPositionBuilderAtEnd(ll->builder, body);
  kiln_llvm_memo_undo(ll, 0);
  *out_function = fn;
  return KILN_OK;
}

static int is_identifier(const char *name) {
  if (!name || !*name || (*name >= '0' && *name <= '9') || strncmp(name, "kiln_", 5) == 0 ||
      strncmp(name, "__kiln", 6) == 0) {
    return 0;
  }
  for (const char *p = name; *p; ++p) {
    char c = *p;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return 0;
    }
  }
  return 1;
}

/* Ends the current block with `ret 0` unless it is terminated. */
static void return_zero(kiln_llvm_t *ll) {
  if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(ll->builder))) {
    LLVMBuildRet(ll->builder, LLVMConstInt(ll->t_i32, 0, 0));
  }
}

/* The compute function: the body over the checked data pointers. */
static kiln_status_t emit_compute(kiln_llvm_t *ll, int num_vars, const kiln_tir_var_t **vars,
                                  LLVMValueRef *compute) {
  const kiln_tir_prim_func_t *func = ll->func;
  int *is_data = NULL, *align = NULL;
  size_t n = num_vars > 0 ? (size_t)num_vars : 1;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(&ll->arena, n, sizeof(int), _Alignof(int), (void **)&is_data));
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(&ll->arena, n, sizeof(int), _Alignof(int), (void **)&align));
  for (int i = 0; i < num_vars; ++i) {
    is_data[i] = i < func->num_params;
    align[i] = i < func->num_params ? (int)kiln_dtype_size(func->params[i]->dtype) : 0;
  }
  char name[256];
  snprintf(name, sizeof(name), "%s_compute_", func->name);
  KILN_RETURN_IF_ERROR(
      kiln_llvm_body_function(ll, name, 0, NULL, num_vars, vars, is_data, align, compute, NULL));
  KILN_RETURN_IF_ERROR(kiln_llvm_stmt(ll, func->body));
  return_zero(ll);
  return KILN_OK;
}

/* `@__kiln_num_args_<name> = constant i32 <count>`: the loader reads it to
 * refuse a caller passing another count before the first call. */
static void record_num_args(kiln_llvm_t *ll, const kiln_tir_prim_func_t *func) {
  char name[512];
  int length =
      snprintf(name, sizeof(name), "%s%s", KILN_RUNTIME_MODULE_NUM_ARGS_PREFIX, func->name);
  if (length < 0 || (size_t)length >= sizeof(name)) {
    return; /* the loader does not look such a name up either */
  }
  LLVMValueRef global = LLVMAddGlobal(ll->module, ll->t_i32, name);
  LLVMSetInitializer(global, LLVMConstInt(ll->t_i32, (unsigned long long)func->num_params, 0));
  LLVMSetGlobalConstant(global, 1);
  LLVMSetLinkage(global, LLVMExternalLinkage);
}

kiln_status_t kiln_llvm_function(kiln_llvm_t *ll, const kiln_tir_prim_func_t *func) {
  if (!is_identifier(func->name)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "llvm backend: function name \"%s\" is not a C identifier (or is "
                       "reserved: kiln_*, __kiln*)",
                       func->name ? func->name : "(null)");
  }
  if (LLVMGetNamedFunction(ll->module, func->name)) {
    return KILN_STATUS(INVALID_ARGUMENT, "llvm backend: two functions are named %s", func->name);
  }
  ll->func = func;
  KILN_RETURN_IF_ERROR(kiln_codegen_parallel_outline(&ll->arena, func, ll->chunk, &ll->parallel));
  LLVMTypeRef value_ptr = LLVMPointerType(ll->t_value, 0);
  LLVMTypeRef i32_ptr = LLVMPointerType(ll->t_i32, 0);
  LLVMTypeRef params[] = {value_ptr, i32_ptr, ll->t_i32, value_ptr, i32_ptr, ll->t_ptr};
  LLVMValueRef packed =
      LLVMAddFunction(ll->module, func->name, LLVMFunctionType(ll->t_i32, params, 6, 0));
  static const char *const names[] = {"args",      "type_codes", "num_args",
                                      "ret_value", "ret_tcode",  "resource"};
  for (unsigned i = 0; i < 6; ++i) {
    LLVMSetValueName2(LLVMGetParam(packed, i), names[i], strlen(names[i]));
  }
  ll->function = packed;
  LLVMPositionBuilderAtEnd(ll->builder,
                           LLVMAppendBasicBlockInContext(ll->context, packed, "entry"));
  int num_vars = 0;
  const kiln_tir_var_t **vars = NULL;
  LLVMValueRef *values = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_checks(ll, packed, &num_vars, &vars, &values));
  LLVMBasicBlockRef call_block = LLVMGetInsertBlock(ll->builder);
  LLVMValueRef compute = NULL;
  KILN_RETURN_IF_ERROR(emit_compute(ll, num_vars, vars, &compute));
  LLVMPositionBuilderAtEnd(ll->builder, call_block);
  LLVMValueRef result = LLVMBuildCall2(ll->builder, LLVMGetElementType(LLVMTypeOf(compute)),
                                       compute, values, (unsigned)num_vars, "");
  LLVMBuildRet(ll->builder, result);
  ll->lambda_base += ll->parallel.count;
  record_num_args(ll, func);
  return KILN_OK;
}
