/*
 * kiln.eager.Context (`_kiln.Context`): an eager context of one's own
 * (kiln_eager_context_create: its own VM, threads and options), for eager
 * work kept apart from the process default context that kiln.eager's
 * functions use. Tensors made by the context (tensor, from_dlpack) belong
 * to it, and every operator on them runs in it; call() names it for an
 * operator without inputs. close() (and the object's end) destroys the
 * context: what has not started is cancelled, its tensors stay readable,
 * new work on them is refused (FAILED_PRECONDITION, kiln.Error). Creating,
 * syncing and destroying release the GIL.
 */
#include "kiln_py.h"

typedef struct kiln_py_context_t {
  PyObject_HEAD kiln_eager_context_t *context; /* NULL once closed */
  PyObject *target;                            /* the target string asked for, or None */
} kiln_py_context_t;

static PyTypeObject kiln_py_context_type;

static kiln_eager_context_t *kiln_py_context_get(kiln_py_context_t *self) {
  if (!self->context) {
    PyErr_SetString(PyExc_ValueError, "the kiln eager context is closed");
  }
  return self->context;
}

static PyObject *kiln_py_context_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static char *keywords[] = {"target", "reference_kernels", NULL};
  PyObject *target = Py_None;
  int reference_kernels = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Op:Context", keywords, &target,
                                   &reference_kernels)) {
    return NULL;
  }
  kiln_eager_options_t options = kiln_eager_options_default();
  options.reference_kernels = reference_kernels != 0;
  if (target != Py_None && !(options.target = PyUnicode_AsUTF8(target))) {
    return NULL;
  }
  kiln_py_context_t *self = (kiln_py_context_t *)type->tp_alloc(type, 0);
  if (!self) {
    return NULL;
  }
  self->target = Py_NewRef(target);
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = kiln_eager_context_create(&options, &self->context);
  Py_END_ALLOW_THREADS;
  if (status) {
    Py_DECREF(self);
    return kiln_py_error_raise(status);
  }
  return (PyObject *)self;
}

static void kiln_py_context_destroy(kiln_py_context_t *self) {
  kiln_eager_context_t *context = self->context;
  self->context = NULL;
  Py_BEGIN_ALLOW_THREADS;
  kiln_eager_context_destroy(context);
  Py_END_ALLOW_THREADS;
}

static void kiln_py_context_dealloc(kiln_py_context_t *self) {
  kiln_py_context_destroy(self);
  Py_XDECREF(self->target);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *kiln_py_context_close(kiln_py_context_t *self, PyObject *unused) {
  (void)unused;
  kiln_py_context_destroy(self);
  Py_RETURN_NONE;
}

/* tensor(data) -> a Tensor holding a copy of data, in this context. */
static PyObject *kiln_py_context_tensor(kiln_py_context_t *self, PyObject *data) {
  kiln_eager_context_t *context = kiln_py_context_get(self);
  kiln_eager_tensor_t *eager = NULL;
  if (!context || kiln_py_tensor_copy_object(data, NULL, context, &eager) < 0) {
    return NULL;
  }
  return kiln_py_tensor_wrap(eager);
}

/* from_dlpack(x) -> a Tensor over x's memory, in this context. */
static PyObject *kiln_py_context_from_dlpack(kiln_py_context_t *self, PyObject *object) {
  kiln_eager_context_t *context = kiln_py_context_get(self);
  kiln_tensor_t *tensor = context ? kiln_py_dlpack_import(object) : NULL;
  if (!tensor) {
    return NULL;
  }
  kiln_eager_tensor_t *eager = NULL;
  kiln_status_t status = kiln_eager_context_tensor_wrap(context, tensor, &eager);
  kiln_tensor_release(tensor);
  return status ? kiln_py_error_raise(status) : kiln_py_tensor_wrap(eager);
}

static PyObject *kiln_py_context_call(kiln_py_context_t *self, PyObject *args) {
  kiln_eager_context_t *context = kiln_py_context_get(self);
  return context ? kiln_py_eager_call_in(context, args) : NULL;
}

static PyObject *kiln_py_context_sync(kiln_py_context_t *self, PyObject *unused) {
  (void)unused;
  kiln_eager_context_t *context = kiln_py_context_get(self);
  if (!context) {
    return NULL;
  }
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = kiln_eager_context_sync(context);
  Py_END_ALLOW_THREADS;
  return status ? kiln_py_error_raise(status) : Py_NewRef(Py_None);
}

static PyObject *kiln_py_context_kernel_stats(kiln_py_context_t *self, void *closure) {
  (void)closure;
  kiln_eager_context_t *context = kiln_py_context_get(self);
  kiln_eager_kernel_stats_t s;
  kiln_status_t status = context ? kiln_eager_context_get_kernel_stats(context, &s) : KILN_OK;
  if (!context || status) {
    return status ? kiln_py_error_raise(status) : NULL;
  }
  return Py_BuildValue("{s:L,s:L,s:L,s:L,s:L,s:L}", "lookups", (long long)s.lookups, "entries",
                       (long long)s.entries, "hits", (long long)s.hits, "compiled",
                       (long long)s.compiled, "reference", (long long)s.reference, "compiles",
                       (long long)s.compiles);
}

static PyObject *kiln_py_context_closed(kiln_py_context_t *self, void *closure) {
  (void)closure;
  return PyBool_FromLong(self->context == NULL);
}

static PyMethodDef kiln_py_context_methods[] = {
    {"close", (PyCFunction)kiln_py_context_close, METH_NOARGS, "destroys the context"},
    {"tensor", (PyCFunction)kiln_py_context_tensor, METH_O, "tensor(data): a copy, here"},
    {"from_dlpack", (PyCFunction)kiln_py_context_from_dlpack, METH_O,
     "from_dlpack(x): x's memory, here"},
    {"call", (PyCFunction)kiln_py_context_call, METH_VARARGS, "call(op_name, inputs, attrs)"},
    {"sync", (PyCFunction)kiln_py_context_sync, METH_NOARGS, "waits for the context's work"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef kiln_py_context_getset[] = {
    {"kernel_stats", (getter)kiln_py_context_kernel_stats, NULL, "the kernel cache's counts", NULL},
    {"closed", (getter)kiln_py_context_closed, NULL, "whether close() ran", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject kiln_py_context_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kiln._kiln.Context",
    .tp_doc = "Context(target=None, reference_kernels=False): an eager context",
    .tp_basicsize = sizeof(kiln_py_context_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = kiln_py_context_new,
    .tp_dealloc = (destructor)kiln_py_context_dealloc,
    .tp_methods = kiln_py_context_methods,
    .tp_getset = kiln_py_context_getset,
};

int kiln_py_context_initialize(PyObject *module) {
  if (PyType_Ready(&kiln_py_context_type) < 0) {
    return -1;
  }
  return PyModule_AddObjectRef(module, "Context", (PyObject *)&kiln_py_context_type);
}
