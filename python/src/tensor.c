/*
 * kiln.Tensor: a Python object holding one eager tensor (kiln/eager.h).
 *
 * A tensor is made from anything NumPy turns into an array (a copy:
 * kiln.Tensor(x), kiln.tensor(x)), from a DLPack producer without a copy
 * (kiln.from_dlpack), or by an eager operator. Its dtype and shape are
 * known at once; reading it (numpy(), data_ptr(), __dlpack__) waits for
 * the operators that write it, with the GIL released. numpy() and
 * __dlpack__ share the tensor's memory. + - * / @ are the eager operators
 * add, subtract, multiply, divide and nn.matmul.
 */
#include "kiln_py.h"

PyObject *kiln_py_tensor_wrap(kiln_eager_tensor_t *eager) {
  kiln_py_tensor_t *self = PyObject_New(kiln_py_tensor_t, &kiln_py_tensor_type);
  if (!self) {
    kiln_eager_tensor_release(eager);
    return NULL;
  }
  self->eager = eager;
  return (PyObject *)self;
}

int kiln_py_tensor_copy_object(PyObject *object, const kiln_dtype_t *dtype,
                               kiln_eager_context_t *context, kiln_eager_tensor_t **out_eager) {
  PyArrayObject *array = kiln_py_array_from_object(object, dtype);
  if (!array) {
    return -1;
  }
  int64_t shape[KILN_MAX_RANK];
  DLTensor dl;
  kiln_dtype_t array_dtype;
  if (kiln_py_array_dl(array, shape, &dl) < 0 || kiln_py_array_dtype(array, &array_dtype) < 0) {
    Py_DECREF(array);
    return -1;
  }
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  size_t size = (size_t)PyArray_NBYTES(array);
  status = context
               ? kiln_eager_context_tensor_from_host(context, array_dtype, dl.ndim, shape, dl.data,
                                                     size, out_eager)
               : kiln_eager_tensor_from_host(array_dtype, dl.ndim, shape, dl.data, size, out_eager);
  Py_END_ALLOW_THREADS;
  Py_DECREF(array);
  return status ? kiln_py_error_raise_int(status) : 0;
}

int kiln_py_tensor_from_object(PyObject *object, const kiln_dtype_t *dtype,
                               kiln_eager_context_t *context, kiln_eager_tensor_t **out_eager) {
  if (PyObject_TypeCheck(object, &kiln_py_tensor_type)) {
    *out_eager = ((kiln_py_tensor_t *)object)->eager;
    kiln_eager_tensor_retain(*out_eager);
    return 0;
  }
  return kiln_py_tensor_copy_object(object, dtype, context, out_eager);
}

kiln_tensor_t *kiln_py_tensor_read(kiln_eager_tensor_t *eager) {
  kiln_tensor_t *tensor = NULL;
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = kiln_eager_tensor_read(eager, &tensor);
  Py_END_ALLOW_THREADS;
  if (status) {
    kiln_py_error_raise(status);
    return NULL;
  }
  return tensor;
}

/* ---- the type ---- */

static PyObject *kiln_py_tensor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static char *keywords[] = {"data", NULL};
  PyObject *data = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:Tensor", keywords, &data)) {
    return NULL;
  }
  kiln_eager_tensor_t *eager = NULL;
  if (kiln_py_tensor_copy_object(data, NULL, NULL, &eager) < 0) {
    return NULL;
  }
  kiln_py_tensor_t *self = (kiln_py_tensor_t *)type->tp_alloc(type, 0);
  if (!self) {
    kiln_eager_tensor_release(eager);
    return NULL;
  }
  self->eager = eager;
  return (PyObject *)self;
}

static void kiln_py_tensor_dealloc(kiln_py_tensor_t *self) {
  kiln_eager_tensor_release(self->eager);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *kiln_py_tensor_shape(kiln_py_tensor_t *self, void *closure) {
  (void)closure;
  int ndim = kiln_eager_tensor_ndim(self->eager);
  const int64_t *shape = kiln_eager_tensor_shape(self->eager);
  PyObject *tuple = PyTuple_New(ndim);
  for (int i = 0; tuple && i < ndim; ++i) {
    PyObject *dim = PyLong_FromLongLong(shape[i]);
    if (!dim) {
      Py_CLEAR(tuple);
      break;
    }
    PyTuple_SET_ITEM(tuple, i, dim);
  }
  return tuple;
}

static PyObject *kiln_py_tensor_dtype(kiln_py_tensor_t *self, void *closure) {
  (void)closure;
  return PyUnicode_FromString(kiln_dtype_name(kiln_eager_tensor_dtype(self->eager)));
}

static PyObject *kiln_py_tensor_ndim(kiln_py_tensor_t *self, void *closure) {
  (void)closure;
  return PyLong_FromLong(kiln_eager_tensor_ndim(self->eager));
}

static PyObject *kiln_py_tensor_numpy(kiln_py_tensor_t *self, PyObject *unused) {
  (void)unused;
  kiln_tensor_t *tensor = kiln_py_tensor_read(self->eager);
  return tensor ? kiln_py_array_wrap_tensor(tensor) : NULL;
}

static PyObject *kiln_py_tensor_array(kiln_py_tensor_t *self, PyObject *args) {
  PyObject *dtype = Py_None;
  if (!PyArg_ParseTuple(args, "|O:__array__", &dtype)) {
    return NULL;
  }
  PyObject *array = kiln_py_tensor_numpy(self, NULL);
  if (!array || dtype == Py_None) {
    return array;
  }
  PyObject *cast = PyObject_CallMethod(array, "astype", "O", dtype);
  Py_DECREF(array);
  return cast;
}

static PyObject *kiln_py_tensor_data_ptr(kiln_py_tensor_t *self, PyObject *unused) {
  (void)unused;
  kiln_tensor_t *tensor = kiln_py_tensor_read(self->eager);
  if (!tensor) {
    return NULL;
  }
  PyObject *address = PyLong_FromVoidPtr(kiln_tensor_data(tensor));
  kiln_tensor_release(tensor);
  return address;
}

static PyObject *kiln_py_tensor_dlpack(kiln_py_tensor_t *self, PyObject *args, PyObject *kwargs) {
  static char *keywords[] = {"stream", NULL};
  PyObject *stream = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$O:__dlpack__", keywords, &stream)) {
    return NULL;
  }
  if (stream != Py_None) {
    PyErr_SetString(PyExc_ValueError, "kiln tensors are on the CPU: __dlpack__ takes no stream");
    return NULL;
  }
  kiln_tensor_t *tensor = kiln_py_tensor_read(self->eager);
  if (!tensor) {
    return NULL;
  }
  PyObject *capsule = kiln_py_dlpack_export(tensor);
  kiln_tensor_release(tensor);
  return capsule;
}

static PyObject *kiln_py_tensor_dlpack_device(kiln_py_tensor_t *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return Py_BuildValue("(ii)", (int)kDLCPU, 0);
}

static PyObject *kiln_py_tensor_repr(kiln_py_tensor_t *self) {
  char shape[KILN_SHAPE_TEXT_CAPACITY];
  kiln_shape_format(kiln_eager_tensor_ndim(self->eager), kiln_eager_tensor_shape(self->eager),
                    shape, sizeof(shape));
  return PyUnicode_FromFormat("kiln.Tensor(shape=%s, dtype=%s)", shape,
                              kiln_dtype_name(kiln_eager_tensor_dtype(self->eager)));
}

/* ---- numbers: the eager operators ---- */

static PyObject *kiln_py_tensor_add(PyObject *a, PyObject *b) {
  return kiln_py_eager_binary_named("add", a, b);
}

static PyObject *kiln_py_tensor_subtract(PyObject *a, PyObject *b) {
  return kiln_py_eager_binary_named("subtract", a, b);
}

static PyObject *kiln_py_tensor_multiply(PyObject *a, PyObject *b) {
  return kiln_py_eager_binary_named("multiply", a, b);
}

static PyObject *kiln_py_tensor_divide(PyObject *a, PyObject *b) {
  return kiln_py_eager_binary_named("divide", a, b);
}

static PyObject *kiln_py_tensor_matmul(PyObject *a, PyObject *b) {
  return kiln_py_eager_binary_named("nn.matmul", a, b);
}

static PyNumberMethods kiln_py_tensor_number = {
    .nb_add = kiln_py_tensor_add,
    .nb_subtract = kiln_py_tensor_subtract,
    .nb_multiply = kiln_py_tensor_multiply,
    .nb_true_divide = kiln_py_tensor_divide,
    .nb_matrix_multiply = kiln_py_tensor_matmul,
};

static PyGetSetDef kiln_py_tensor_getset[] = {
    {"shape", (getter)kiln_py_tensor_shape, NULL, "the shape, a tuple (known at once)", NULL},
    {"dtype", (getter)kiln_py_tensor_dtype, NULL, "the dtype's name: 'float32', ...", NULL},
    {"ndim", (getter)kiln_py_tensor_ndim, NULL, "the rank", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef kiln_py_tensor_methods[] = {
    {"numpy", (PyCFunction)kiln_py_tensor_numpy, METH_NOARGS,
     "numpy() -> ndarray sharing the tensor's memory (waits for its writers)"},
    {"__array__", (PyCFunction)kiln_py_tensor_array, METH_VARARGS, NULL},
    {"data_ptr", (PyCFunction)kiln_py_tensor_data_ptr, METH_NOARGS,
     "data_ptr() -> the address of the tensor's first element"},
    {"__dlpack__", (PyCFunction)(void (*)(void))kiln_py_tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(stream=None) -> a 'dltensor' capsule (no copy)"},
    {"__dlpack_device__", (PyCFunction)kiln_py_tensor_dlpack_device, METH_NOARGS,
     "__dlpack_device__() -> (1, 0): the CPU"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject kiln_py_tensor_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kiln.Tensor",
    .tp_doc = "Tensor(data): an eager kiln tensor holding a copy of data (array-like)",
    .tp_basicsize = sizeof(kiln_py_tensor_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = kiln_py_tensor_new,
    .tp_dealloc = (destructor)kiln_py_tensor_dealloc,
    .tp_repr = (reprfunc)kiln_py_tensor_repr,
    .tp_as_number = &kiln_py_tensor_number,
    .tp_getset = kiln_py_tensor_getset,
    .tp_methods = kiln_py_tensor_methods,
};

int kiln_py_tensor_initialize(PyObject *module) {
  if (PyType_Ready(&kiln_py_tensor_type) < 0) {
    return -1;
  }
  return PyModule_AddObjectRef(module, "Tensor", (PyObject *)&kiln_py_tensor_type);
}
