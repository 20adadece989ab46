/*
 * The graph executor's profile and debug runs; see include/kiln/runtime.h.
 *
 * A profile runs the graph `runs` times, reading the monotonic clock around
 * every tvm_op node (kernels, __copy, __nop) and around each whole run, and
 * keeps each node's median: a median, unlike a mean, is not moved by one run
 * the OS interrupted. A node's share is its median over the sum of the
 * medians, and its GFLOP/s come from graph.json's kiln_flops when the
 * compiler wrote them. The table is built in a string builder so the caller
 * decides where it goes. The profile's names point into the executor, so it
 * must not outlive it.
 *
 * A debug run executes the nodes one at a time like a run and, after each,
 * copies its output entries into tensors written as .npy files (the inputs
 * and params first), so the files show each node's output as it was made,
 * before a later node reuses its storage.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/strbuf.h"
#include "kiln/npy.h"
#include "runtime/graph_executor.h"

double kiln_gx_now_milliseconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int is_op_node(const kiln_gx_node_t *node) {
  return node->func_name != NULL;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double kiln_gx_median(double *values, int count) {
  qsort(values, (size_t)count, sizeof(double), compare_doubles);
  return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

/* Runs the graph `runs` times; times[k * runs + r] is op node k's time in run r. */
static kiln_status_t timed_runs(kiln_graph_executor_t *gx, int runs, double *times,
                                double *run_times) {
  for (int r = 0; r < runs; ++r) {
    double run_start = kiln_gx_now_milliseconds();
    for (int i = 0, k = 0; i < gx->num_nodes; ++i) {
      if (!is_op_node(&gx->nodes[i])) {
        continue;
      }
      double start = kiln_gx_now_milliseconds();
      KILN_RETURN_IF_ERROR(kiln_gx_run_node(gx, i));
      times[(size_t)k++ * (size_t)runs + (size_t)r] = kiln_gx_now_milliseconds() - start;
    }
    run_times[r] = kiln_gx_now_milliseconds() - run_start;
  }
  return KILN_OK;
}

static void summarize(const kiln_graph_executor_t *gx, int runs, double *times, double *run_times,
                      kiln_graph_profile_t *profile) {
  for (int i = 0, k = 0; i < gx->num_nodes; ++i) {
    const kiln_gx_node_t *node = &gx->nodes[i];
    if (!is_op_node(node)) {
      continue;
    }
    double ms = kiln_gx_median(times + (size_t)k * (size_t)runs, runs);
    profile->nodes[k++] = (kiln_graph_profile_node_t){
        i,
        node->name,
        node->func_name,
        ms,
        0,
        node->flops,
        node->flops > 0 && ms > 0 ? (double)node->flops / (ms * 1e6) : 0};
    profile->total_milliseconds += ms;
    profile->total_flops += node->flops;
  }
  for (int k = 0; k < profile->num_nodes; ++k) {
    double total = profile->total_milliseconds;
    profile->nodes[k].share = total > 0 ? profile->nodes[k].milliseconds / total : 0;
  }
  profile->run_milliseconds = kiln_gx_median(run_times, runs);
}

kiln_status_t kiln_graph_executor_profile(kiln_graph_executor_t *executor, int runs,
                                          kiln_graph_profile_t **out_profile) {
  *out_profile = NULL;
  if (executor->vm) {
    return kiln_vm_profile(executor->vm, runs, out_profile);
  }
  if (runs < 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: a profile needs at least one run, not %d",
                       executor->source, runs);
  }
  KILN_RETURN_IF_ERROR(kiln_gx_check_inputs(executor));
  int count = 0;
  for (int i = 0; i < executor->num_nodes; ++i) {
    count += is_op_node(&executor->nodes[i]);
  }
  kiln_allocator_t allocator = executor->allocator;
  kiln_graph_profile_t *profile = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_zeroed(allocator, sizeof(*profile), (void **)&profile));
  *profile = (kiln_graph_profile_t){allocator, runs, count, NULL, 0, 0, 0};
  double *times = NULL;
  kiln_status_t status = kiln_allocator_malloc_array(
      allocator, count > 0 ? (size_t)count : 1, sizeof(*profile->nodes), (void **)&profile->nodes);
  if (!status) {
    status = kiln_allocator_malloc_array(allocator, ((size_t)count + 1) * (size_t)runs,
                                         sizeof(double), (void **)&times);
  }
  if (!status) {
    double *run_times = times + (size_t)count * (size_t)runs;
    status = timed_runs(executor, runs, times, run_times);
    if (!status) {
      summarize(executor, runs, times, run_times, profile);
    }
  }
  kiln_allocator_free(allocator, times);
  if (status) {
    kiln_graph_profile_destroy(profile);
    return status;
  }
  *out_profile = profile;
  return KILN_OK;
}

void kiln_graph_profile_destroy(kiln_graph_profile_t *profile) {
  if (!profile) {
    return;
  }
  kiln_allocator_free(profile->allocator, profile->nodes);
  kiln_allocator_free(profile->allocator, profile);
}

static kiln_status_t append_gflops(kiln_strbuf_t *sb, int64_t flops, double ms) {
  if (flops <= 0 || ms <= 0) {
    return kiln_strbuf_append(sb, "         -\n");
  }
  return kiln_strbuf_appendf(sb, "%10.2f\n", (double)flops / (ms * 1e6));
}

static kiln_status_t format_into(const kiln_graph_profile_t *p, kiln_strbuf_t *sb) {
  int width = 5; /* "total" */
  for (int k = 0; k < p->num_nodes; ++k) {
    int length = (int)strlen(p->nodes[k].name);
    width = length > width ? length : width;
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%d kernel nodes, median of %d run%s\n",
                                           p->num_nodes, p->runs, p->runs == 1 ? "" : "s"));
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%5s  %-*s  %12s  %7s  %10s\n", "node", width,
                                           "name", "time (ms)", "share", "GFLOP/s"));
  for (int k = 0; k < p->num_nodes; ++k) {
    const kiln_graph_profile_node_t *n = &p->nodes[k];
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%5d  %-*s  %12.4f  %6.1f%%  ", n->node, width,
                                             n->name, n->milliseconds, n->share * 100));
    KILN_RETURN_IF_ERROR(append_gflops(sb, n->flops, n->milliseconds));
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%5s  %-*s  %12.4f  %6.1f%%  ", "", width, "total",
                                           p->total_milliseconds,
                                           p->total_milliseconds > 0 ? 100.0 : 0.0));
  KILN_RETURN_IF_ERROR(append_gflops(sb, p->total_flops, p->total_milliseconds));
  return kiln_strbuf_appendf(sb, "%5s  %-*s  %12.4f\n", "", width, "run", p->run_milliseconds);
}

kiln_status_t kiln_graph_profile_format(const kiln_graph_profile_t *profile,
                                        kiln_allocator_t allocator, char **out_text) {
  *out_text = NULL;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, allocator);
  kiln_status_t status = format_into(profile, &sb);
  if (!status) {
    status = kiln_strbuf_take(&sb, out_text);
  }
  kiln_strbuf_deinitialize(&sb);
  return status;
}

/* ---- debug ---- */

kiln_status_t kiln_gx_append_safe_name(kiln_strbuf_t *sb, const char *name) {
  for (const char *c = name; *c; ++c) {
    int safe = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
               *c == '.' || *c == '-' || *c == '_';
    KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, safe ? *c : '_'));
  }
  return KILN_OK;
}

/* folder/<node>_<name>[_<output>].npy with the name made safe for a path. */
static kiln_status_t dump_path(kiln_allocator_t allocator, const char *folder, int node,
                               const kiln_gx_node_t *n, int output, char **out_path) {
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, allocator);
  kiln_status_t status = kiln_strbuf_appendf(&sb, "%s/%d_", folder, node);
  if (!status) {
    status = kiln_gx_append_safe_name(&sb, n->name);
  }
  if (!status && n->num_outputs > 1) {
    status = kiln_strbuf_appendf(&sb, "_%d", output);
  }
  if (!status) {
    status = kiln_strbuf_append(&sb, ".npy");
  }
  if (!status) {
    status = kiln_strbuf_take(&sb, out_path);
  }
  kiln_strbuf_deinitialize(&sb);
  return status;
}

static kiln_status_t dump_entry(const kiln_graph_executor_t *gx, const char *folder, int node,
                                int output) {
  const kiln_gx_node_t *n = &gx->nodes[node];
  const kiln_gx_entry_t *e = &gx->entries[n->first_entry + output];
  kiln_allocator_t allocator = gx->allocator;
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_tensor_create_copy(allocator, e->dtype, e->dl.ndim, e->dl.shape,
                                               e->dl.data, e->bytes, &tensor));
  char *path = NULL;
  kiln_status_t status = dump_path(allocator, folder, node, n, output, &path);
  if (!status) {
    status = kiln_npy_write_file(allocator, tensor, path);
  }
  kiln_allocator_free(allocator, path);
  kiln_tensor_release(tensor);
  return status;
}

static kiln_status_t dump_node(const kiln_graph_executor_t *gx, const char *folder, int node) {
  for (int j = 0; j < gx->nodes[node].num_outputs; ++j) {
    KILN_RETURN_IF_ERROR(dump_entry(gx, folder, node, j));
  }
  return KILN_OK;
}

kiln_status_t kiln_graph_executor_run_debug(kiln_graph_executor_t *executor, const char *folder) {
  if (executor->vm) {
    return kiln_vm_run_debug(executor->vm, folder);
  }
  KILN_RETURN_IF_ERROR(kiln_gx_check_inputs(executor));
  if (!folder || (mkdir(folder, 0777) != 0 && errno != EEXIST)) {
    return KILN_STATUS(IO_ERROR, "%s: cannot make the debug folder %s: %s", executor->source,
                       folder ? folder : "(null)", folder ? strerror(errno) : "no path");
  }
  for (int i = 0; i < executor->num_nodes; ++i) {
    if (!is_op_node(&executor->nodes[i])) {
      KILN_RETURN_IF_ERROR(dump_node(executor, folder, i));
    }
  }
  for (int i = 0; i < executor->num_nodes; ++i) {
    if (is_op_node(&executor->nodes[i])) {
      KILN_RETURN_IF_ERROR(kiln_gx_run_node(executor, i));
      KILN_RETURN_IF_ERROR(dump_node(executor, folder, i));
    }
  }
  return KILN_OK;
}
