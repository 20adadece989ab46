/*
 * The module kiln._kiln: its functions, types and exceptions. The Python
 * package (python/kiln/__init__.py) is the public face; this module is
 * what it is built on.
 */
#define KILN_PY_IMPORT_NUMPY
#include "kiln_py.h"

#include <kiln/version.h>

/* from_dlpack(x) -> Tensor over x's memory (no copy). */
static PyObject *kiln_py_from_dlpack(PyObject *module, PyObject *object) {
  (void)module;
  kiln_tensor_t *tensor = kiln_py_dlpack_import(object);
  if (!tensor) {
    return NULL;
  }
  kiln_eager_tensor_t *eager = NULL;
  kiln_status_t status = kiln_eager_tensor_wrap(tensor, &eager);
  kiln_tensor_release(tensor);
  return status ? kiln_py_error_raise(status) : kiln_py_tensor_wrap(eager);
}

static PyObject *kiln_py_live_exports(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  return PyLong_FromLong(kiln_py_dlpack_live_exports());
}

/* At interpreter exit (atexit): the eager work finishes while Python can
 * still run the DLPack deleters it may reach. */
static PyObject *kiln_py_at_exit(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  kiln_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = kiln_eager_sync();
  Py_END_ALLOW_THREADS;
  kiln_status_free(status); /* reported by the read that meets it, if any */
  Py_RETURN_NONE;
}

static PyMethodDef kiln_py_functions[] = {
    {"compile", kiln_py_model_compile, METH_VARARGS,
     "compile(model, target, opt_level, input_shapes, disabled_passes, batch, image_size)"},
    {"load", kiln_py_model_load, METH_VARARGS, "load(folder)"},
    {"from_dlpack", kiln_py_from_dlpack, METH_O, "from_dlpack(x) -> Tensor sharing x's memory"},
    {"_live_exports", kiln_py_live_exports, METH_NOARGS,
     "DLPack tensors exported and not yet deleted"},
    {"_at_exit", kiln_py_at_exit, METH_NOARGS, "waits for the eager work"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef kiln_py_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "kiln._kiln",
    .m_doc = "kiln's C extension (see the kiln package)",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__kiln(void) {
  import_array();
  PyObject *module = PyModule_Create(&kiln_py_module);
  if (!module) {
    return NULL;
  }
  if (PyModule_AddFunctions(module, kiln_py_functions) < 0 ||
      PyModule_AddFunctions(module, kiln_py_eager_methods) < 0 ||
      kiln_py_errors_initialize(module) < 0 || kiln_py_tensor_initialize(module) < 0 ||
      kiln_py_model_initialize(module) < 0 || kiln_py_context_initialize(module) < 0 ||
      PyModule_AddStringConstant(module, "version", kiln_version_string()) < 0 ||
      PyModule_AddStringConstant(module, "default_target", kiln_compiler_default_target()) < 0) {
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
