/*
 * kiln.Model's engine (`_kiln.Model`): a compiled model, run from Python.
 *
 * A model is compiled (kiln_compile: an ONNX file or a workload; the
 * compiled model is kept, so it can be saved) or loaded from a folder that
 * `save` or `kiln compile -o` wrote (graph.json or vm.json, lib.so, params.bin). It
 * runs on graph executors (kiln/runtime.h), which belong to one thread at
 * a time, so the model keeps a pool: a run takes an idle executor (or makes
 * one: kiln_compiled_create_executor, or kiln_graph_executor_load of the
 * folder), sets the inputs (copied), runs, copies the outputs into new
 * tensors and gives the executor back, all with the GIL released. Two
 * Python threads running one model run on two executors at once.
 *
 * Inputs are NumPy arrays (or anything NumPy turns into one, converted to
 * the input's dtype when it is not an array yet) or kiln.Tensor objects;
 * outputs are NumPy arrays over the copied tensors (no second copy).
 */
#include <pthread.h>
#include <string.h>

#include "kiln_py.h"
#include "structmember.h"

typedef struct kiln_py_model_t {
  PyObject_HEAD kiln_compiled_t *compiled; /* NULL for a loaded model */
  PyObject *folder;                        /* a loaded model's folder (str), else None */
  pthread_mutex_t lock;                    /* guards the pool below */
  kiln_graph_executor_t **idle;
  int num_idle, capacity;
  int num_inputs, num_outputs;
  int is_vm;                  /* runs on the VM (vm.json), else the graph executor */
  PyObject *inputs, *outputs; /* tuples of (name, shape, dtype) */
  kiln_dtype_t *input_dtypes;
} kiln_py_model_t;

/* The inputs of one run: the arrays (new references) and their views. */
typedef struct kiln_py_model_binding_t {
  int count;
  PyObject **arrays;
  DLTensor *dls;
  int64_t (*shapes)[KILN_MAX_RANK];
} kiln_py_model_binding_t;

/* ---- the executor pool (called without the GIL) ---- */

static kiln_status_t kiln_py_model_executor_create(kiln_py_model_t *self, const char *folder,
                                                   kiln_graph_executor_t **out_executor) {
  if (self->compiled) {
    return kiln_compiled_create_executor(self->compiled, out_executor);
  }
  return kiln_graph_executor_load(kiln_allocator_system(), folder, out_executor);
}

static kiln_status_t kiln_py_model_executor_acquire(kiln_py_model_t *self, const char *folder,
                                                    kiln_graph_executor_t **out_executor) {
  pthread_mutex_lock(&self->lock);
  *out_executor = self->num_idle > 0 ? self->idle[--self->num_idle] : NULL;
  pthread_mutex_unlock(&self->lock);
  return *out_executor ? KILN_OK : kiln_py_model_executor_create(self, folder, out_executor);
}

static void kiln_py_model_executor_release(kiln_py_model_t *self, kiln_graph_executor_t *executor) {
  pthread_mutex_lock(&self->lock);
  if (self->num_idle == self->capacity) {
    int capacity = self->capacity ? 2 * self->capacity : 2;
    void *grown = realloc(self->idle, (size_t)capacity * sizeof(*self->idle));
    if (!grown) { /* keep what the pool holds; this executor goes */
      pthread_mutex_unlock(&self->lock);
      kiln_graph_executor_destroy(executor);
      return;
    }
    self->idle = grown;
    self->capacity = capacity;
  }
  self->idle[self->num_idle++] = executor;
  pthread_mutex_unlock(&self->lock);
}

/* ---- inputs ---- */

static PyObject *kiln_py_model_info(const kiln_graph_executor_tensor_info_t *info) {
  PyObject *shape = PyTuple_New(info->ndim);
  for (int i = 0; shape && i < info->ndim; ++i) {
    PyObject *dim = PyLong_FromLongLong(info->shape[i]);
    if (!dim) {
      Py_CLEAR(shape);
      break;
    }
    PyTuple_SET_ITEM(shape, i, dim);
  }
  PyObject *tuple =
      shape ? Py_BuildValue("(sOs)", info->name, shape, kiln_dtype_name(info->dtype)) : NULL;
  Py_XDECREF(shape);
  return tuple;
}

/* inputs and outputs from the first executor. */
static int kiln_py_model_describe(kiln_py_model_t *self, kiln_graph_executor_t *executor) {
  self->is_vm = kiln_graph_executor_kind(executor) == KILN_EXECUTOR_VM;
  self->num_inputs = kiln_graph_executor_num_inputs(executor);
  self->num_outputs = kiln_graph_executor_num_outputs(executor);
  self->inputs = PyTuple_New(self->num_inputs);
  self->outputs = PyTuple_New(self->num_outputs);
  self->input_dtypes = PyMem_Calloc((size_t)self->num_inputs + 1, sizeof(kiln_dtype_t));
  if (!self->inputs || !self->outputs || !self->input_dtypes) {
    return -1;
  }
  kiln_graph_executor_tensor_info_t info;
  for (int i = 0; i < self->num_inputs + self->num_outputs; ++i) {
    int is_input = i < self->num_inputs;
    int index = is_input ? i : i - self->num_inputs;
    kiln_status_t status = is_input ? kiln_graph_executor_input_info(executor, index, &info)
                                    : kiln_graph_executor_output_info(executor, index, &info);
    if (status) {
      return kiln_py_error_raise_int(status);
    }
    PyObject *item = kiln_py_model_info(&info);
    if (!item) {
      return -1;
    }
    PyTuple_SET_ITEM(is_input ? self->inputs : self->outputs, index, item);
    if (is_input) {
      self->input_dtypes[i] = info.dtype;
    }
  }
  return 0;
}

static int kiln_py_model_input_index(kiln_py_model_t *self, PyObject *name) {
  for (int i = 0; i < self->num_inputs; ++i) {
    int equal = PyObject_RichCompareBool(PyTuple_GET_ITEM(PyTuple_GET_ITEM(self->inputs, i), 0),
                                         name, Py_EQ);
    if (equal != 0) {
      return equal < 0 ? -2 : i;
    }
  }
  PyErr_Format(PyExc_TypeError, "run() got an unexpected input %R (the model's inputs: %R)", name,
               self->inputs);
  return -1;
}

/* The object for each input (borrowed), from positional and named ones. */
static int kiln_py_model_gather(kiln_py_model_t *self, PyObject *positional, PyObject *named,
                                PyObject **objects) {
  Py_ssize_t count = PyTuple_GET_SIZE(positional);
  if (count > self->num_inputs) {
    PyErr_Format(PyExc_TypeError, "run() takes %d inputs, %zd given", self->num_inputs, count);
    return -1;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    objects[i] = PyTuple_GET_ITEM(positional, i);
  }
  PyObject *key, *value;
  Py_ssize_t position = 0;
  while (named && PyDict_Next(named, &position, &key, &value)) {
    int index = kiln_py_model_input_index(self, key);
    if (index < 0) {
      return -1;
    }
    if (objects[index]) {
      PyErr_Format(PyExc_TypeError, "run() got input %R twice", key);
      return -1;
    }
    objects[index] = value;
  }
  for (int i = 0; i < self->num_inputs; ++i) {
    if (!objects[i]) {
      PyErr_Format(PyExc_TypeError, "run() is missing input %R",
                   PyTuple_GET_ITEM(PyTuple_GET_ITEM(self->inputs, i), 0));
      return -1;
    }
  }
  return 0;
}

/* An array for one input: a kiln.Tensor's memory, or the object as an array. */
static PyObject *kiln_py_model_input_array(PyObject *object, kiln_dtype_t dtype) {
  if (PyObject_TypeCheck(object, &kiln_py_tensor_type)) {
    return PyObject_CallMethod(object, "numpy", NULL);
  }
  return (PyObject *)kiln_py_array_from_object(object, &dtype);
}

static void kiln_py_model_unbind(kiln_py_model_binding_t *binding) {
  for (int i = 0; binding->arrays && i < binding->count; ++i) {
    Py_XDECREF(binding->arrays[i]);
  }
  PyMem_Free(binding->arrays);
  PyMem_Free(binding->dls);
  PyMem_Free(binding->shapes);
  memset(binding, 0, sizeof(*binding));
}

static int kiln_py_model_bind(kiln_py_model_t *self, PyObject *positional, PyObject *named,
                              kiln_py_model_binding_t *binding) {
  int n = self->num_inputs;
  binding->count = n;
  binding->arrays = PyMem_Calloc((size_t)n + 1, sizeof(PyObject *));
  binding->dls = PyMem_Calloc((size_t)n + 1, sizeof(DLTensor));
  binding->shapes = PyMem_Calloc((size_t)n + 1, sizeof(*binding->shapes));
  if (!binding->arrays || !binding->dls || !binding->shapes) {
    PyErr_NoMemory();
    return -1;
  }
  PyObject **objects = PyMem_Calloc((size_t)n + 1, sizeof(PyObject *)); /* borrowed */
  int gathered = objects ? kiln_py_model_gather(self, positional, named, objects) : -1;
  for (int i = 0; gathered == 0 && i < n; ++i) {
    binding->arrays[i] = kiln_py_model_input_array(objects[i], self->input_dtypes[i]);
    gathered = binding->arrays[i] ? 0 : -1;
  }
  PyMem_Free(objects);
  if (gathered < 0) {
    if (!PyErr_Occurred()) {
      PyErr_NoMemory();
    }
    return -1;
  }
  for (int i = 0; i < n; ++i) {
    PyArrayObject *array = (PyArrayObject *)binding->arrays[i];
    if (!PyArray_Check(array) ||
        kiln_py_array_dl(array, binding->shapes[i], &binding->dls[i]) < 0) {
      if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_TypeError, "run(): an input is not an array");
      }
      return -1;
    }
  }
  return 0;
}

/* Zero-filled inputs (a profile without inputs given). */
static int kiln_py_model_bind_zeros(kiln_py_model_t *self, kiln_py_model_binding_t *binding) {
  PyObject *zeros = PyTuple_New(self->num_inputs);
  if (!zeros) {
    return -1;
  }
  for (int i = 0; i < self->num_inputs; ++i) {
    PyObject *info = PyTuple_GET_ITEM(self->inputs, i);
    int typenum = kiln_py_array_typenum(self->input_dtypes[i]);
    PyArray_Dims dims = {NULL, 0};
    if (typenum < 0 || !PyArray_IntpConverter(PyTuple_GET_ITEM(info, 1), &dims)) {
      Py_DECREF(zeros);
      return -1;
    }
    PyObject *array = PyArray_ZEROS(dims.len, dims.ptr, typenum, 0);
    PyDimMem_FREE(dims.ptr);
    if (!array) {
      Py_DECREF(zeros);
      return -1;
    }
    PyTuple_SET_ITEM(zeros, i, array);
  }
  int result = kiln_py_model_bind(self, zeros, NULL, binding);
  Py_DECREF(zeros);
  return result;
}

static kiln_status_t kiln_py_model_set_inputs(kiln_graph_executor_t *executor,
                                              const kiln_py_model_binding_t *binding) {
  for (int i = 0; i < binding->count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_graph_executor_set_input(executor, i, &binding->dls[i]));
  }
  return KILN_OK;
}

/* ---- run ---- */

/* Sets the inputs, runs and copies the outputs; no GIL. */
static kiln_status_t kiln_py_model_execute(kiln_py_model_t *self, const char *folder,
                                           const kiln_py_model_binding_t *binding,
                                           kiln_tensor_t **outputs) {
  kiln_graph_executor_t *executor = NULL;
  KILN_RETURN_IF_ERROR(kiln_py_model_executor_acquire(self, folder, &executor));
  kiln_status_t status = kiln_py_model_set_inputs(executor, binding);
  if (!status) {
    status = kiln_graph_executor_run(executor);
  }
  for (int i = 0; !status && i < self->num_outputs; ++i) {
    status = kiln_graph_executor_copy_output(executor, i, kiln_allocator_system(), &outputs[i]);
  }
  kiln_py_model_executor_release(self, executor);
  return status;
}

/* Arrays over the output tensors (taken, also on failure). */
static PyObject *kiln_py_model_outputs(int count, kiln_tensor_t **outputs) {
  PyObject *list = PyList_New(count);
  for (int i = 0; i < count; ++i) {
    if (!list) {
      kiln_tensor_release(outputs[i]);
      continue;
    }
    PyObject *array = kiln_py_array_wrap_tensor(outputs[i]);
    if (!array) {
      Py_CLEAR(list);
      continue;
    }
    PyList_SET_ITEM(list, i, array);
  }
  return list;
}

static const char *kiln_py_model_folder(kiln_py_model_t *self) {
  return self->folder == Py_None ? NULL : PyUnicode_AsUTF8(self->folder);
}

/* run(positional, named) -> list of arrays */
static PyObject *kiln_py_model_run(kiln_py_model_t *self, PyObject *args) {
  PyObject *positional = NULL, *named = NULL;
  if (!PyArg_ParseTuple(args, "O!O!:run", &PyTuple_Type, &positional, &PyDict_Type, &named)) {
    return NULL;
  }
  kiln_py_model_binding_t binding = {0};
  kiln_tensor_t **outputs = PyMem_Calloc((size_t)self->num_outputs + 1, sizeof(kiln_tensor_t *));
  PyObject *result = NULL;
  if (outputs && kiln_py_model_bind(self, positional, named, &binding) == 0) {
    const char *folder = kiln_py_model_folder(self);
    kiln_status_t status;
    Py_BEGIN_ALLOW_THREADS;
    status = kiln_py_model_execute(self, folder, &binding, outputs);
    Py_END_ALLOW_THREADS;
    if (status) {
      for (int i = 0; i < self->num_outputs; ++i) {
        kiln_tensor_release(outputs[i]);
      }
      kiln_py_error_raise(status);
    } else {
      result = kiln_py_model_outputs(self->num_outputs, outputs);
    }
  }
  kiln_py_model_unbind(&binding);
  PyMem_Free(outputs);
  return result;
}

/* ---- profile ---- */

static PyObject *kiln_py_model_profile_rows(const kiln_graph_profile_t *profile) {
  PyObject *rows = PyList_New(profile->num_nodes);
  for (int i = 0; rows && i < profile->num_nodes; ++i) {
    const kiln_graph_profile_node_t *node = &profile->nodes[i];
    PyObject *row = Py_BuildValue(
        "{s:i,s:s,s:s,s:d,s:d,s:L,s:d}", "node", node->node, "name", node->name, "kernel",
        node->func_name, "milliseconds", node->milliseconds, "share", node->share, "flops",
        (long long)node->flops, "gflops_per_second", node->gflops_per_second);
    if (!row) {
      Py_CLEAR(rows);
      break;
    }
    PyList_SET_ITEM(rows, i, row);
  }
  return rows;
}

/* The profile as (rows, table text, totals). */
static PyObject *kiln_py_model_profile_result(const kiln_graph_profile_t *profile,
                                              const char *text) {
  PyObject *rows = kiln_py_model_profile_rows(profile);
  if (!rows) {
    return NULL;
  }
  return Py_BuildValue("(Ns{s:i,s:d,s:d,s:L})", rows, text, "runs", profile->runs,
                       "total_milliseconds", profile->total_milliseconds, "run_milliseconds",
                       profile->run_milliseconds, "total_flops", (long long)profile->total_flops);
}

static kiln_status_t kiln_py_model_profile_execute(kiln_py_model_t *self, const char *folder,
                                                   const kiln_py_model_binding_t *binding, int runs,
                                                   kiln_graph_profile_t **out_profile,
                                                   char **out_text) {
  kiln_graph_executor_t *executor = NULL;
  KILN_RETURN_IF_ERROR(kiln_py_model_executor_acquire(self, folder, &executor));
  kiln_status_t status = kiln_py_model_set_inputs(executor, binding);
  if (!status) {
    status = kiln_graph_executor_profile(executor, runs, out_profile);
  }
  if (!status) {
    status = kiln_graph_profile_format(*out_profile, kiln_allocator_system(), out_text);
  }
  kiln_py_model_executor_release(self, executor);
  return status;
}

/* profile(runs, positional, named) -> (rows, text, totals); no inputs: zeros */
static PyObject *kiln_py_model_profile(kiln_py_model_t *self, PyObject *args) {
  int runs = 10;
  PyObject *positional = NULL, *named = NULL;
  if (!PyArg_ParseTuple(args, "iO!O!:profile", &runs, &PyTuple_Type, &positional, &PyDict_Type,
                        &named)) {
    return NULL;
  }
  kiln_py_model_binding_t binding = {0};
  int bound = PyTuple_GET_SIZE(positional) == 0 && PyDict_GET_SIZE(named) == 0
                  ? kiln_py_model_bind_zeros(self, &binding)
                  : kiln_py_model_bind(self, positional, named, &binding);
  PyObject *result = NULL;
  if (bound == 0) {
    const char *folder = kiln_py_model_folder(self);
    kiln_graph_profile_t *profile = NULL;
    char *text = NULL;
    kiln_status_t status;
    Py_BEGIN_ALLOW_THREADS;
    status = kiln_py_model_profile_execute(self, folder, &binding, runs, &profile, &text);
    Py_END_ALLOW_THREADS;
    result = status ? kiln_py_error_raise(status) : kiln_py_model_profile_result(profile, text);
    kiln_allocator_free(kiln_allocator_system(), text);
    kiln_graph_profile_destroy(profile);
  }
  kiln_py_model_unbind(&binding);
  return result;
}

/* ---- save, stats ---- */

static PyObject *kiln_py_model_save(kiln_py_model_t *self, PyObject *args) {
  const char *dir = NULL;
  if (!PyArg_ParseTuple(args, "s:save", &dir)) {
    return NULL;
  }
  if (!self->compiled) {
    PyErr_SetString(PyExc_ValueError, "a loaded model is saved by copying its folder");
    return NULL;
  }
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = kiln_compiled_save(self->compiled, dir);
  Py_END_ALLOW_THREADS;
  return status ? kiln_py_error_raise(status) : Py_NewRef(Py_None);
}

static PyObject *kiln_py_model_stats(kiln_py_model_t *self, void *closure) {
  (void)closure;
  if (!self->compiled) {
    Py_RETURN_NONE;
  }
  kiln_compile_stats_t s;
  kiln_compiled_get_stats(self->compiled, &s);
  return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d,s:i,s:i,s:i,s:i,s:L,s:n,s:n}", "seconds_import",
                       s.seconds_import, "seconds_passes", s.seconds_passes, "seconds_lower",
                       s.seconds_lower, "seconds_codegen", s.seconds_codegen, "seconds_total",
                       s.seconds_total, "num_kernels", s.num_kernels, "num_kernels_reused",
                       s.num_kernels_reused, "num_kernel_calls", s.num_kernel_calls, "num_params",
                       s.num_params, "flops", (long long)s.flops, "planned_bytes",
                       (Py_ssize_t)s.planned_bytes, "tensor_bytes", (Py_ssize_t)s.tensor_bytes);
}

static PyObject *kiln_py_model_pool_size(kiln_py_model_t *self, void *closure) {
  (void)closure;
  pthread_mutex_lock(&self->lock);
  int count = self->num_idle;
  pthread_mutex_unlock(&self->lock);
  return PyLong_FromLong(count);
}

/* ---- life ---- */

static void kiln_py_model_dealloc(kiln_py_model_t *self) {
  for (int i = 0; i < self->num_idle; ++i) {
    kiln_graph_executor_destroy(self->idle[i]);
  }
  free(self->idle);
  kiln_compiled_destroy(self->compiled);
  pthread_mutex_destroy(&self->lock);
  Py_XDECREF(self->folder);
  Py_XDECREF(self->inputs);
  Py_XDECREF(self->outputs);
  PyMem_Free(self->input_dtypes);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A model over `compiled` (taken) or `folder`, with its first executor. */
static PyObject *kiln_py_model_create(kiln_compiled_t *compiled, PyObject *folder,
                                      kiln_graph_executor_t *executor) {
  kiln_py_model_t *self = PyObject_New(kiln_py_model_t, &kiln_py_model_type);
  if (!self) {
    kiln_graph_executor_destroy(executor);
    kiln_compiled_destroy(compiled);
    return NULL;
  }
  memset((char *)self + sizeof(PyObject), 0, sizeof(*self) - sizeof(PyObject));
  pthread_mutex_init(&self->lock, NULL);
  self->compiled = compiled;
  self->folder = Py_NewRef(folder);
  kiln_py_model_executor_release(self, executor);
  if (self->num_idle != 1 || kiln_py_model_describe(self, executor) < 0) {
    if (!PyErr_Occurred()) {
      PyErr_NoMemory();
    }
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

/* compile(model, target, opt_level, input_shapes, disabled_passes, batch, image_size, executor) */
PyObject *kiln_py_model_compile(PyObject *module, PyObject *args) {
  (void)module;
  const char *model = NULL, *target = NULL;
  kiln_compiler_options_t options = kiln_compiler_options_default();
  PyObject *shape_list = NULL, *disabled_list = NULL;
  int batch = 0, image_size = 0, executor_kind = 0;
  if (!PyArg_ParseTuple(args, "sziO!O!iii:compile", &model, &target, &options.opt_level,
                        &PyTuple_Type, &shape_list, &PyTuple_Type, &disabled_list, &batch,
                        &image_size, &executor_kind)) {
    return NULL;
  }
  options.executor = (kiln_executor_kind_t)executor_kind; /* checked by kiln.compile */
  Py_ssize_t num_shapes = PyTuple_GET_SIZE(shape_list);
  Py_ssize_t num_disabled = PyTuple_GET_SIZE(disabled_list);
  const char **texts = PyMem_Calloc((size_t)(num_shapes + num_disabled + 1), sizeof(char *));
  if (!texts) {
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < num_shapes + num_disabled; ++i) {
    PyObject *item = i < num_shapes ? PyTuple_GET_ITEM(shape_list, i)
                                    : PyTuple_GET_ITEM(disabled_list, i - num_shapes);
    if (!(texts[i] = PyUnicode_AsUTF8(item))) {
      PyMem_Free(texts);
      return NULL;
    }
  }
  options.target = target;
  options.num_input_shapes = (int)num_shapes;
  options.input_shapes = texts;
  options.num_disabled_passes = (int)num_disabled;
  options.disabled_passes = texts + num_shapes;
  options.batch = batch > 0 ? batch : options.batch;
  options.image_size = image_size > 0 ? image_size : options.image_size;
  kiln_compiled_t *compiled = NULL;
  kiln_graph_executor_t *executor = NULL;
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = kiln_compile(kiln_allocator_system(), model, &options, &compiled);
  if (!status) {
    status = kiln_compiled_create_executor(compiled, &executor);
  }
  Py_END_ALLOW_THREADS;
  PyMem_Free(texts);
  if (status) {
    kiln_compiled_destroy(compiled);
    return kiln_py_error_raise(status);
  }
  return kiln_py_model_create(compiled, Py_None, executor);
}

/* load(folder) */
PyObject *kiln_py_model_load(PyObject *module, PyObject *args) {
  (void)module;
  PyObject *folder = NULL;
  if (!PyArg_ParseTuple(args, "U:load", &folder)) {
    return NULL;
  }
  const char *path = PyUnicode_AsUTF8(folder);
  if (!path) {
    return NULL;
  }
  kiln_graph_executor_t *executor = NULL;
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = kiln_graph_executor_load(kiln_allocator_system(), path, &executor);
  Py_END_ALLOW_THREADS;
  if (status) {
    return kiln_py_error_raise(status);
  }
  return kiln_py_model_create(NULL, folder, executor);
}

static PyMethodDef kiln_py_model_methods[] = {
    {"run", (PyCFunction)kiln_py_model_run, METH_VARARGS,
     "run(positional, named) -> list of arrays"},
    {"profile", (PyCFunction)kiln_py_model_profile, METH_VARARGS,
     "profile(runs, positional, named) -> (rows, text, totals)"},
    {"save", (PyCFunction)kiln_py_model_save, METH_VARARGS, "save(dir): a compiled model"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef kiln_py_model_members[] = {
    {"inputs", T_OBJECT, offsetof(kiln_py_model_t, inputs), READONLY,
     "((name, shape, dtype), ...)"},
    {"outputs", T_OBJECT, offsetof(kiln_py_model_t, outputs), READONLY,
     "((name, shape, dtype), ...)"},
    {"folder", T_OBJECT, offsetof(kiln_py_model_t, folder), READONLY,
     "the folder a loaded model came from, else None"},
    {"is_vm", T_INT, offsetof(kiln_py_model_t, is_vm), READONLY,
     "1 when the model runs on the VM (vm.json), 0 on the graph executor"},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef kiln_py_model_getset[] = {
    {"stats", (getter)kiln_py_model_stats, NULL, "the compile's statistics (None when loaded)",
     NULL},
    {"idle_executors", (getter)kiln_py_model_pool_size, NULL, "executors in the pool", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject kiln_py_model_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kiln._kiln.Model",
    .tp_doc = "a compiled model (made by _kiln.compile or _kiln.load)",
    .tp_basicsize = sizeof(kiln_py_model_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)kiln_py_model_dealloc,
    .tp_methods = kiln_py_model_methods,
    .tp_members = kiln_py_model_members,
    .tp_getset = kiln_py_model_getset,
};

int kiln_py_model_initialize(PyObject *module) {
  if (PyType_Ready(&kiln_py_model_type) < 0) {
    return -1;
  }
  return PyModule_AddObjectRef(module, "Model", (PyObject *)&kiln_py_model_type);
}
