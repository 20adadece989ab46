/*
 * The eager operators (kiln/eager.h) for Python: the generic call of any
 * registry operator by name, with attributes in the text format's spelling
 * (kiln.eager.call builds that text from Python values), and the typed
 * helpers of the C API. Every call runs in the inputs' context (the
 * process default one), with the GIL released: the call itself only checks,
 * infers the output types and queues the work.
 *
 * Inputs are kiln.Tensor objects or anything NumPy turns into an array (a
 * copy); an input that is not an array yet (a Python number or list) takes
 * the dtype of the first kiln.Tensor among the inputs.
 */
#include "kiln_py.h"

#define KILN_PY_EAGER_MAX_INPUTS 64

static void kiln_py_eager_release(int count, kiln_eager_tensor_t **tensors) {
  for (int i = 0; i < count; ++i) {
    kiln_eager_tensor_release(tensors[i]);
  }
}

/* The eager tensors of `count` Python objects (new references); objects
 * that are not kiln tensors are copied into the first kiln tensor's
 * context (`fallback` when there is none; NULL: the default one), with its
 * dtype when they are not arrays yet. */
static int kiln_py_eager_inputs_in(kiln_eager_context_t *fallback, int count,
                                   PyObject *const *objects, kiln_eager_tensor_t **out_tensors) {
  kiln_dtype_t hint;
  const kiln_dtype_t *dtype = NULL;
  kiln_eager_context_t *context = fallback;
  for (int i = 0; i < count && !dtype; ++i) {
    if (PyObject_TypeCheck(objects[i], &kiln_py_tensor_type)) {
      kiln_eager_tensor_t *eager = ((kiln_py_tensor_t *)objects[i])->eager;
      hint = kiln_eager_tensor_dtype(eager);
      dtype = &hint;
      context = kiln_eager_tensor_context(eager);
    }
  }
  for (int i = 0; i < count; ++i) {
    if (kiln_py_tensor_from_object(objects[i], dtype, context, &out_tensors[i]) < 0) {
      kiln_py_eager_release(i, out_tensors);
      return -1;
    }
  }
  return 0;
}

static int kiln_py_eager_inputs(int count, PyObject *const *objects,
                                kiln_eager_tensor_t **out_tensors) {
  return kiln_py_eager_inputs_in(NULL, count, objects, out_tensors);
}

/* A kiln.Tensor for a typed helper's result. */
static PyObject *kiln_py_eager_result(kiln_status_t status, kiln_eager_tensor_t *out) {
  return status ? kiln_py_error_raise(status) : kiln_py_tensor_wrap(out);
}

/* ---- the generic call ---- */

/* attrs: a sequence of (name, value text) pairs; the strings borrowed from
 * `items` (a fast sequence kept alive by the caller). */
static int kiln_py_eager_attrs(PyObject *items, int capacity, kiln_eager_attr_t *out_attrs,
                               int *out_count) {
  Py_ssize_t count = PySequence_Fast_GET_SIZE(items);
  if (count > capacity) {
    PyErr_Format(PyExc_ValueError, "kiln.eager: at most %d attributes", capacity);
    return -1;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject *pair = PySequence_Fast_GET_ITEM(items, i);
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
      PyErr_SetString(PyExc_TypeError, "kiln.eager: an attribute is a (name, text) pair");
      return -1;
    }
    out_attrs[i].name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(pair, 0));
    out_attrs[i].value = PyUnicode_AsUTF8(PyTuple_GET_ITEM(pair, 1));
    if (!out_attrs[i].name || !out_attrs[i].value) {
      return -1;
    }
  }
  *out_count = (int)count;
  return 0;
}

static PyObject *kiln_py_eager_outputs(int count, kiln_eager_tensor_t **outputs) {
  PyObject *tuple = PyTuple_New(count);
  if (!tuple) {
    kiln_py_eager_release(count, outputs);
    return NULL;
  }
  for (int i = 0; i < count; ++i) {
    PyObject *tensor = kiln_py_tensor_wrap(outputs[i]);
    if (!tensor) {
      kiln_py_eager_release(count - i - 1, outputs + i + 1);
      Py_DECREF(tuple);
      return NULL;
    }
    PyTuple_SET_ITEM(tuple, i, tensor);
  }
  return tuple;
}

/* Calls `op_name` in `context` (NULL: the inputs') on `num_inputs` eager
 * tensors (released here). */
static PyObject *kiln_py_eager_run(kiln_eager_context_t *context, const char *op_name,
                                   int num_inputs, kiln_eager_tensor_t **inputs, int num_attrs,
                                   const kiln_eager_attr_t *attrs) {
  kiln_eager_tensor_t *outputs[KILN_EAGER_MAX_OUTPUTS];
  int num_outputs = 0;
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = kiln_eager_context_call(context, op_name, num_inputs, inputs, num_attrs, attrs,
                                   KILN_EAGER_MAX_OUTPUTS, &num_outputs, outputs);
  Py_END_ALLOW_THREADS;
  kiln_py_eager_release(num_inputs, inputs);
  return status ? kiln_py_error_raise(status) : kiln_py_eager_outputs(num_outputs, outputs);
}

PyObject *kiln_py_eager_call_in(kiln_eager_context_t *context, PyObject *args) {
  const char *op_name = NULL;
  PyObject *input_list = NULL, *attr_list = NULL;
  if (!PyArg_ParseTuple(args, "sOO:call", &op_name, &input_list, &attr_list)) {
    return NULL;
  }
  PyObject *inputs = PySequence_Fast(input_list, "kiln.eager.call: inputs is a sequence");
  PyObject *attr_items =
      inputs ? PySequence_Fast(attr_list, "kiln.eager.call: attrs is a sequence") : NULL;
  PyObject *result = NULL;
  kiln_eager_attr_t attrs[32];
  int num_attrs = 0;
  kiln_eager_tensor_t *tensors[KILN_PY_EAGER_MAX_INPUTS];
  Py_ssize_t num_inputs = inputs ? PySequence_Fast_GET_SIZE(inputs) : 0;
  if (attr_items && num_inputs > KILN_PY_EAGER_MAX_INPUTS) {
    PyErr_Format(PyExc_ValueError, "kiln.eager.call: at most %d inputs", KILN_PY_EAGER_MAX_INPUTS);
  } else if (attr_items && kiln_py_eager_attrs(attr_items, 32, attrs, &num_attrs) == 0 &&
             kiln_py_eager_inputs_in(context, (int)num_inputs, PySequence_Fast_ITEMS(inputs),
                                     tensors) == 0) {
    result = kiln_py_eager_run(context, op_name, (int)num_inputs, tensors, num_attrs, attrs);
  }
  Py_XDECREF(inputs);
  Py_XDECREF(attr_items);
  return result;
}

/* call(op_name, inputs, attrs) -> tuple of Tensors, in the inputs' context. */
static PyObject *kiln_py_eager_call(PyObject *self, PyObject *args) {
  (void)self;
  return kiln_py_eager_call_in(NULL, args);
}

PyObject *kiln_py_eager_binary_named(const char *op_name, PyObject *a, PyObject *b) {
  PyObject *objects[2] = {a, b};
  kiln_eager_tensor_t *tensors[2];
  if (kiln_py_eager_inputs(2, objects, tensors) < 0) {
    return NULL;
  }
  PyObject *outputs = kiln_py_eager_run(NULL, op_name, 2, tensors, 0, NULL);
  if (!outputs) {
    return NULL;
  }
  PyObject *first = Py_NewRef(PyTuple_GET_ITEM(outputs, 0));
  Py_DECREF(outputs);
  return first;
}

/* ---- typed helpers ---- */

typedef kiln_status_t (*kiln_py_unary_fn)(kiln_eager_tensor_t *, kiln_eager_tensor_t **);
typedef kiln_status_t (*kiln_py_binary_fn)(kiln_eager_tensor_t *, kiln_eager_tensor_t *,
                                           kiln_eager_tensor_t **);

static PyObject *kiln_py_eager_unary(PyObject *x, kiln_py_unary_fn fn) {
  kiln_eager_tensor_t *input = NULL, *out = NULL;
  if (kiln_py_eager_inputs(1, &x, &input) < 0) {
    return NULL;
  }
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = fn(input, &out);
  Py_END_ALLOW_THREADS;
  kiln_eager_tensor_release(input);
  return kiln_py_eager_result(status, out);
}

static PyObject *kiln_py_eager_binary(PyObject *args, const char *format, kiln_py_binary_fn fn) {
  PyObject *objects[2];
  if (!PyArg_ParseTuple(args, format, &objects[0], &objects[1])) {
    return NULL;
  }
  kiln_eager_tensor_t *inputs[2], *out = NULL;
  if (kiln_py_eager_inputs(2, objects, inputs) < 0) {
    return NULL;
  }
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = fn(inputs[0], inputs[1], &out);
  Py_END_ALLOW_THREADS;
  kiln_py_eager_release(2, inputs);
  return kiln_py_eager_result(status, out);
}

#define KILN_PY_UNARY(name)                                            \
  static PyObject *kiln_py_eager_##name(PyObject *self, PyObject *x) { \
    (void)self;                                                        \
    return kiln_py_eager_unary(x, kiln_eager_##name);                  \
  }
#define KILN_PY_BINARY(name)                                              \
  static PyObject *kiln_py_eager_##name(PyObject *self, PyObject *args) { \
    (void)self;                                                           \
    return kiln_py_eager_binary(args, "OO:" #name, kiln_eager_##name);    \
  }

KILN_PY_UNARY(relu)
KILN_PY_UNARY(sigmoid)
KILN_PY_UNARY(tanh)
KILN_PY_UNARY(global_avg_pool2d)
KILN_PY_UNARY(batch_flatten)
KILN_PY_BINARY(add)
KILN_PY_BINARY(subtract)
KILN_PY_BINARY(multiply)
KILN_PY_BINARY(divide)
KILN_PY_BINARY(dense)

static PyObject *kiln_py_eager_softmax(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *x = NULL;
  int axis = -1;
  if (!PyArg_ParseTuple(args, "O|i:softmax", &x, &axis)) {
    return NULL;
  }
  kiln_eager_tensor_t *input = NULL, *out = NULL;
  if (kiln_py_eager_inputs(1, &x, &input) < 0) {
    return NULL;
  }
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = kiln_eager_softmax(input, axis, &out);
  Py_END_ALLOW_THREADS;
  kiln_eager_tensor_release(input);
  return kiln_py_eager_result(status, out);
}

static PyObject *kiln_py_eager_bias_add(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *objects[2];
  int axis = 1;
  if (!PyArg_ParseTuple(args, "OO|i:bias_add", &objects[0], &objects[1], &axis)) {
    return NULL;
  }
  kiln_eager_tensor_t *inputs[2], *out = NULL;
  if (kiln_py_eager_inputs(2, objects, inputs) < 0) {
    return NULL;
  }
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = kiln_eager_bias_add(inputs[0], inputs[1], axis, &out);
  Py_END_ALLOW_THREADS;
  kiln_py_eager_release(2, inputs);
  return kiln_py_eager_result(status, out);
}

/* conv2d(x, weight, (sh, sw), (top, left, bottom, right)) */
static PyObject *kiln_py_eager_conv2d(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *objects[2];
  int64_t strides[2], padding[4];
  if (!PyArg_ParseTuple(args, "OO(LL)(LLLL):conv2d", &objects[0], &objects[1], &strides[0],
                        &strides[1], &padding[0], &padding[1], &padding[2], &padding[3])) {
    return NULL;
  }
  kiln_eager_tensor_t *inputs[2], *out = NULL;
  if (kiln_py_eager_inputs(2, objects, inputs) < 0) {
    return NULL;
  }
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = kiln_eager_conv2d(inputs[0], inputs[1], strides, padding, &out);
  Py_END_ALLOW_THREADS;
  kiln_py_eager_release(2, inputs);
  return kiln_py_eager_result(status, out);
}

/* max_pool2d(x, (ph, pw), (sh, sw), (top, left, bottom, right)) */
static PyObject *kiln_py_eager_max_pool2d(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *x = NULL;
  int64_t pool[2], strides[2], padding[4];
  if (!PyArg_ParseTuple(args, "O(LL)(LL)(LLLL):max_pool2d", &x, &pool[0], &pool[1], &strides[0],
                        &strides[1], &padding[0], &padding[1], &padding[2], &padding[3])) {
    return NULL;
  }
  kiln_eager_tensor_t *input = NULL, *out = NULL;
  if (kiln_py_eager_inputs(1, &x, &input) < 0) {
    return NULL;
  }
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = kiln_eager_max_pool2d(input, pool, strides, padding, &out);
  Py_END_ALLOW_THREADS;
  kiln_eager_tensor_release(input);
  return kiln_py_eager_result(status, out);
}

static PyObject *kiln_py_eager_sync(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = kiln_eager_sync();
  Py_END_ALLOW_THREADS;
  return status ? kiln_py_error_raise(status) : Py_NewRef(Py_None);
}

PyMethodDef kiln_py_eager_methods[] = {
    {"eager_call", kiln_py_eager_call, METH_VARARGS,
     "eager_call(op_name, inputs, attrs) -> tuple of Tensors; attrs: (name, text) pairs"},
    {"eager_relu", kiln_py_eager_relu, METH_O, NULL},
    {"eager_sigmoid", kiln_py_eager_sigmoid, METH_O, NULL},
    {"eager_tanh", kiln_py_eager_tanh, METH_O, NULL},
    {"eager_global_avg_pool2d", kiln_py_eager_global_avg_pool2d, METH_O, NULL},
    {"eager_batch_flatten", kiln_py_eager_batch_flatten, METH_O, NULL},
    {"eager_add", kiln_py_eager_add, METH_VARARGS, NULL},
    {"eager_subtract", kiln_py_eager_subtract, METH_VARARGS, NULL},
    {"eager_multiply", kiln_py_eager_multiply, METH_VARARGS, NULL},
    {"eager_divide", kiln_py_eager_divide, METH_VARARGS, NULL},
    {"eager_dense", kiln_py_eager_dense, METH_VARARGS, NULL},
    {"eager_softmax", kiln_py_eager_softmax, METH_VARARGS, NULL},
    {"eager_bias_add", kiln_py_eager_bias_add, METH_VARARGS, NULL},
    {"eager_conv2d", kiln_py_eager_conv2d, METH_VARARGS, NULL},
    {"eager_max_pool2d", kiln_py_eager_max_pool2d, METH_VARARGS, NULL},
    {"eager_sync", kiln_py_eager_sync, METH_NOARGS, "eager_sync(): waits for every eager call"},
    {NULL, NULL, 0, NULL},
};
