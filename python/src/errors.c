/*
 * kiln statuses as Python exceptions.
 *
 * kiln.Error (a RuntimeError) is the base of every exception kiln raises;
 * three codes also take the Python exception a Python programmer expects:
 *
 *   INVALID_ARGUMENT    kiln.InvalidArgumentError (also a ValueError)
 *   NOT_FOUND           kiln.NotFoundError        (also a FileNotFoundError)
 *   RESOURCE_EXHAUSTED  kiln.OutOfMemoryError     (also a MemoryError)
 *   anything else       kiln.Error                (a RuntimeError)
 *
 * The exception's message is kiln's message (naming the file, node or
 * operator as kiln does); its `code` attribute is the status code's name
 * ("INVALID_ARGUMENT") and `source` where kiln made it ("src/x.c:12").
 */
#include "kiln_py.h"

static PyObject *error_base;
static PyObject *error_invalid_argument;
static PyObject *error_not_found;
static PyObject *error_out_of_memory;

/* Makes kiln.<name> with `bases` (a new tuple, taken) and adds it to `module`. */
static PyObject *kiln_py_errors_add(PyObject *module, const char *name, PyObject *bases) {
  if (!bases) {
    return NULL;
  }
  char qualified[64];
  snprintf(qualified, sizeof(qualified), "kiln.%s", name);
  PyObject *type = PyErr_NewException(qualified, bases, NULL);
  Py_DECREF(bases);
  if (!type) {
    return NULL;
  }
  if (PyModule_AddObjectRef(module, name, type) < 0) {
    Py_DECREF(type);
    return NULL;
  }
  return type;
}

int kiln_py_errors_initialize(PyObject *module) {
  error_base = kiln_py_errors_add(module, "Error", PyTuple_Pack(1, PyExc_RuntimeError));
  if (!error_base) {
    return -1;
  }
  error_invalid_argument = kiln_py_errors_add(module, "InvalidArgumentError",
                                              PyTuple_Pack(2, error_base, PyExc_ValueError));
  error_not_found = kiln_py_errors_add(module, "NotFoundError",
                                       PyTuple_Pack(2, PyExc_FileNotFoundError, error_base));
  error_out_of_memory = kiln_py_errors_add(module, "OutOfMemoryError",
                                           PyTuple_Pack(2, error_base, PyExc_MemoryError));
  return error_invalid_argument && error_not_found && error_out_of_memory ? 0 : -1;
}

static PyObject *kiln_py_error_type(kiln_status_code_t code) {
  switch (code) {
  case KILN_STATUS_CODE_INVALID_ARGUMENT:
    return error_invalid_argument;
  case KILN_STATUS_CODE_NOT_FOUND:
    return error_not_found;
  case KILN_STATUS_CODE_RESOURCE_EXHAUSTED:
    return error_out_of_memory;
  default:
    return error_base;
  }
}

/* The exception object for `status`, with its code and source attributes. */
static PyObject *kiln_py_error_make(PyObject *type, kiln_status_t status) {
  PyObject *error = PyObject_CallFunction(type, "s", kiln_status_message(status));
  if (!error) {
    return NULL;
  }
  PyObject *code = PyUnicode_FromString(kiln_status_code_name(kiln_status_code(status)));
  PyObject *source =
      PyUnicode_FromFormat("%s:%d", kiln_status_file(status), kiln_status_line(status));
  int failed = !code || !source || PyObject_SetAttrString(error, "code", code) < 0 ||
               PyObject_SetAttrString(error, "source", source) < 0;
  Py_XDECREF(code);
  Py_XDECREF(source);
  if (failed) {
    Py_DECREF(error);
    return NULL;
  }
  return error;
}

PyObject *kiln_py_error_raise(kiln_status_t status) {
  PyObject *type = kiln_py_error_type(kiln_status_code(status));
  PyObject *error = kiln_py_error_make(type, status);
  kiln_status_free(status);
  if (error) {
    PyErr_SetObject(type, error);
    Py_DECREF(error);
  }
  return NULL;
}

int kiln_py_error_raise_int(kiln_status_t status) {
  kiln_py_error_raise(status);
  return -1;
}
