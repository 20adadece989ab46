/*
 * NumPy arrays and kiln tensors.
 *
 * dtypes map by NumPy's kind and item size ('f' 4 is float32, 'b' 1 is
 * bool, ...), so int64 is int64 whatever C type NumPy names it; bfloat16
 * has no NumPy dtype. An array kiln reads is C-contiguous, aligned and in
 * native byte order (kiln_py_array_from_object makes it so, copying only
 * when it is not), and is described to kiln by a DLTensor view (compact:
 * strides NULL). An array over a kiln tensor's storage keeps the tensor
 * alive through its base object, a capsule that releases the tensor.
 */
#include "kiln_py.h"

int kiln_py_array_typenum(kiln_dtype_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_FLOAT32:
    return NPY_FLOAT32;
  case KILN_DTYPE_FLOAT16:
    return NPY_FLOAT16;
  case KILN_DTYPE_FLOAT64:
    return NPY_FLOAT64;
  case KILN_DTYPE_INT8:
    return NPY_INT8;
  case KILN_DTYPE_INT16:
    return NPY_INT16;
  case KILN_DTYPE_INT32:
    return NPY_INT32;
  case KILN_DTYPE_INT64:
    return NPY_INT64;
  case KILN_DTYPE_UINT8:
    return NPY_UINT8;
  case KILN_DTYPE_UINT16:
    return NPY_UINT16;
  case KILN_DTYPE_UINT32:
    return NPY_UINT32;
  case KILN_DTYPE_UINT64:
    return NPY_UINT64;
  case KILN_DTYPE_BOOL:
    return NPY_BOOL;
  default:
    PyErr_Format(PyExc_TypeError, "kiln dtype %s has no NumPy dtype", kiln_dtype_name(dtype));
    return -1;
  }
}

/* kiln's dtype for NumPy's kind and item size; -1 when there is none. */
static int kiln_py_array_dtype_of(char kind, int size) {
  static const struct {
    char kind;
    int size;
    kiln_dtype_t dtype;
  } table[] = {
      {'f', 4, KILN_DTYPE_FLOAT32}, {'f', 2, KILN_DTYPE_FLOAT16}, {'f', 8, KILN_DTYPE_FLOAT64},
      {'i', 1, KILN_DTYPE_INT8},    {'i', 2, KILN_DTYPE_INT16},   {'i', 4, KILN_DTYPE_INT32},
      {'i', 8, KILN_DTYPE_INT64},   {'u', 1, KILN_DTYPE_UINT8},   {'u', 2, KILN_DTYPE_UINT16},
      {'u', 4, KILN_DTYPE_UINT32},  {'u', 8, KILN_DTYPE_UINT64},  {'b', 1, KILN_DTYPE_BOOL},
  };
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); ++i) {
    if (table[i].kind == kind && table[i].size == size) {
      return (int)table[i].dtype;
    }
  }
  return -1;
}

int kiln_py_array_dtype(PyArrayObject *array, kiln_dtype_t *out_dtype) {
  PyArray_Descr *descr = PyArray_DESCR(array);
  int dtype = kiln_py_array_dtype_of(descr->kind, (int)descr->elsize);
  if (dtype < 0 || !PyArray_ISNOTSWAPPED(array)) {
    PyObject *text = PyObject_Str((PyObject *)descr);
    PyErr_Format(PyExc_TypeError, "kiln has no dtype for NumPy's %s",
                 text ? PyUnicode_AsUTF8(text) : "?");
    Py_XDECREF(text);
    return -1;
  }
  *out_dtype = (kiln_dtype_t)dtype;
  return 0;
}

PyArrayObject *kiln_py_array_from_object(PyObject *object, const kiln_dtype_t *dtype) {
  PyArray_Descr *descr = NULL;
  if (dtype && !PyArray_Check(object)) {
    int typenum = kiln_py_array_typenum(*dtype);
    if (typenum < 0) {
      return NULL;
    }
    descr = PyArray_DescrFromType(typenum);
  }
  /* PyArray_FromAny steals `descr`. */
  return (PyArrayObject *)PyArray_FromAny(
      object, descr, 0, 0, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_NOTSWAPPED, NULL);
}

int kiln_py_array_dl(PyArrayObject *array, int64_t *shape, DLTensor *out_dl) {
  kiln_dtype_t dtype;
  if (kiln_py_array_dtype(array, &dtype) < 0) {
    return -1;
  }
  int ndim = PyArray_NDIM(array);
  if (ndim > KILN_MAX_RANK) {
    PyErr_Format(PyExc_ValueError, "an array of rank %d is over kiln's largest rank, %d", ndim,
                 KILN_MAX_RANK);
    return -1;
  }
  for (int i = 0; i < ndim; ++i) {
    shape[i] = (int64_t)PyArray_DIM(array, i);
  }
  *out_dl = (DLTensor){
      .data = PyArray_DATA(array),
      .device = {kDLCPU, 0},
      .ndim = ndim,
      .dtype = kiln_dtype_to_dl(dtype),
      .shape = shape,
      .strides = NULL,
      .byte_offset = 0,
  };
  return 0;
}

static void kiln_py_array_release_tensor(PyObject *capsule) {
  kiln_tensor_release(PyCapsule_GetPointer(capsule, "kiln.tensor"));
}

PyObject *kiln_py_array_wrap_tensor(kiln_tensor_t *tensor) {
  int typenum = kiln_py_array_typenum(kiln_tensor_dtype(tensor));
  if (typenum < 0) {
    kiln_tensor_release(tensor);
    return NULL;
  }
  PyObject *owner = PyCapsule_New(tensor, "kiln.tensor", kiln_py_array_release_tensor);
  if (!owner) {
    kiln_tensor_release(tensor);
    return NULL;
  }
  npy_intp dims[KILN_MAX_RANK];
  int ndim = kiln_tensor_ndim(tensor);
  for (int i = 0; i < ndim; ++i) {
    dims[i] = (npy_intp)kiln_tensor_shape(tensor)[i];
  }
  PyObject *array = PyArray_SimpleNewFromData(ndim, dims, typenum, kiln_tensor_data(tensor));
  if (!array) {
    Py_DECREF(owner);
    return NULL;
  }
  if (PyArray_SetBaseObject((PyArrayObject *)array, owner) < 0) { /* steals owner */
    Py_DECREF(array);
    return NULL;
  }
  return array;
}
