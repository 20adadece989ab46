/*
 * DLPack both ways, without copies (the Python array API's protocol).
 *
 * Export: a "dltensor" capsule holds a DLManagedTensor whose DLTensor is
 * the kiln tensor's own description and whose manager_ctx is the tensor,
 * retained; the consumer renames the capsule "used_dltensor" and calls the
 * deleter when it is done (the capsule's destructor calls it instead when
 * nobody consumed the capsule). The deleter may run on any thread, without
 * the GIL: it only releases the tensor.
 *
 * Import: the producer's capsule (from __dlpack__) is checked (CPU,
 * compact, a dtype kiln has), its memory becomes an external kiln tensor
 * (kiln_tensor_create_external) and the capsule is renamed
 * "used_dltensor". The producer's deleter runs at the kiln tensor's last
 * release, which may happen on one of kiln's threads: the release takes
 * the GIL first (NumPy's deleter needs it), and at interpreter shutdown
 * leaves the producer alone rather than touch a dying interpreter.
 */
#include <stdatomic.h>

#include "kiln_py.h"

#if PY_VERSION_HEX >= 0x030d0000
#define KILN_PY_FINALIZING() Py_IsFinalizing()
#else
#define KILN_PY_FINALIZING() _Py_IsFinalizing()
#endif

static atomic_long live_exports;

long kiln_py_dlpack_live_exports(void) {
  return atomic_load(&live_exports);
}

/* ---- export ---- */

static void kiln_py_dlpack_delete_export(DLManagedTensor *managed) {
  kiln_tensor_release(managed->manager_ctx);
  PyMem_RawFree(managed);
  atomic_fetch_sub(&live_exports, 1);
}

/* An unconsumed capsule dies: its managed tensor is deleted here. */
static void kiln_py_dlpack_capsule_destructor(PyObject *capsule) {
  if (PyCapsule_IsValid(capsule, "used_dltensor")) {
    return;
  }
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  DLManagedTensor *managed = PyCapsule_GetPointer(capsule, "dltensor");
  if (managed) {
    managed->deleter(managed);
  } else {
    PyErr_WriteUnraisable(capsule);
  }
  PyErr_Restore(type, value, traceback);
}

PyObject *kiln_py_dlpack_export(kiln_tensor_t *tensor) {
  DLManagedTensor *managed = PyMem_RawMalloc(sizeof(*managed));
  if (!managed) {
    return PyErr_NoMemory();
  }
  kiln_tensor_retain(tensor);
  managed->dl_tensor = *kiln_tensor_dl(tensor);
  managed->manager_ctx = tensor;
  managed->deleter = kiln_py_dlpack_delete_export;
  atomic_fetch_add(&live_exports, 1);
  PyObject *capsule = PyCapsule_New(managed, "dltensor", kiln_py_dlpack_capsule_destructor);
  if (!capsule) {
    kiln_py_dlpack_delete_export(managed);
  }
  return capsule;
}

/* ---- import ---- */

/* kiln's last release of an imported tensor: the producer's deleter. */
static void kiln_py_dlpack_release_import(void *owner) {
  DLManagedTensor *managed = owner;
  if (!managed->deleter || !Py_IsInitialized() || KILN_PY_FINALIZING()) {
    return;
  }
  PyGILState_STATE state = PyGILState_Ensure();
  managed->deleter(managed);
  PyGILState_Release(state);
}

/* The producer's capsule: `object` itself or what its __dlpack__ returns. */
static PyObject *kiln_py_dlpack_capsule(PyObject *object) {
  PyObject *capsule = NULL;
  if (PyCapsule_CheckExact(object)) {
    capsule = Py_NewRef(object);
  } else if (PyObject_HasAttrString(object, "__dlpack__")) {
    capsule = PyObject_CallMethod(object, "__dlpack__", NULL);
  } else {
    return PyErr_Format(PyExc_TypeError,
                        "kiln.from_dlpack: expected a DLPack producer (an object with "
                        "__dlpack__) or a \"dltensor\" capsule, not %s",
                        Py_TYPE(object)->tp_name);
  }
  if (!capsule) {
    return NULL;
  }
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    return capsule;
  }
  if (PyCapsule_IsValid(capsule, "used_dltensor")) {
    PyErr_SetString(PyExc_ValueError,
                    "kiln.from_dlpack: the DLPack capsule was consumed already (used_dltensor)");
  } else {
    PyErr_SetString(PyExc_TypeError, "kiln.from_dlpack: expected a DLPack producer (an object "
                                     "with __dlpack__) or a \"dltensor\" capsule");
  }
  Py_DECREF(capsule);
  return NULL;
}

static int kiln_py_dlpack_dtype(const DLTensor *dl, kiln_dtype_t *out_dtype) {
  if (dl->dtype.code == 6 /* kDLBool (DLPack 0.8) */ && dl->dtype.bits == 8 &&
      dl->dtype.lanes == 1) {
    *out_dtype = KILN_DTYPE_BOOL;
    return 0;
  }
  kiln_status_t status = kiln_dtype_from_dl(dl->dtype, out_dtype);
  return status ? kiln_py_error_raise_int(status) : 0;
}

/* 0 when the tensor can be used as it is: on the CPU, compact, of a kiln
 * dtype and rank; -1 with BufferError (or TypeError for the dtype). */
static int kiln_py_dlpack_check(const DLTensor *dl, kiln_dtype_t *out_dtype) {
  if (dl->device.device_type != kDLCPU) {
    PyErr_Format(PyExc_BufferError,
                 "kiln.from_dlpack: the tensor is on DLPack device type %d; kiln runs on the CPU "
                 "(1)",
                 (int)dl->device.device_type);
    return -1;
  }
  if (dl->ndim < 0 || dl->ndim > KILN_MAX_RANK) {
    PyErr_Format(PyExc_BufferError, "kiln.from_dlpack: rank %d is outside [0, %d]", dl->ndim,
                 KILN_MAX_RANK);
    return -1;
  }
  int64_t expected = 1;
  for (int i = dl->ndim - 1; dl->strides && i >= 0; --i) {
    if (dl->shape[i] != 1 && dl->strides[i] != expected) {
      PyErr_SetString(PyExc_BufferError,
                      "kiln.from_dlpack: the tensor is not compact (row-major); make it "
                      "contiguous first (numpy.ascontiguousarray, torch's .contiguous())");
      return -1;
    }
    expected *= dl->shape[i];
  }
  return kiln_py_dlpack_dtype(dl, out_dtype);
}

kiln_tensor_t *kiln_py_dlpack_import(PyObject *object) {
  PyObject *capsule = kiln_py_dlpack_capsule(object);
  if (!capsule) {
    return NULL;
  }
  DLManagedTensor *managed = PyCapsule_GetPointer(capsule, "dltensor");
  const DLTensor *dl = &managed->dl_tensor;
  kiln_dtype_t dtype;
  kiln_tensor_t *tensor = NULL;
  if (kiln_py_dlpack_check(dl, &dtype) == 0) {
    kiln_status_t status = kiln_tensor_create_external(
        kiln_allocator_system(), dtype, dl->ndim, dl->shape, (char *)dl->data + dl->byte_offset,
        kiln_py_dlpack_release_import, managed, &tensor);
    if (status) {
      kiln_py_error_raise(status);
    } else if (PyCapsule_SetName(capsule, "used_dltensor") < 0) {
      /* Cannot happen for a valid capsule; give the memory back untouched. */
      tensor = NULL;
    }
  }
  Py_DECREF(capsule);
  return tensor;
}
