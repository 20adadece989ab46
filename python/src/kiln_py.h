/*
 * kiln's Python extension (`kiln._kiln`): the declarations its files share.
 *
 * The extension is built on kiln's public C API alone (include/kiln/) and
 * NumPy's C API. Each file has one job:
 *
 *   module.c  the module: its functions table, types and exceptions
 *   errors.c  kiln statuses become Python exceptions (kiln.Error and its
 *             subclasses, which are also ValueError, FileNotFoundError, ...)
 *   array.c   NumPy arrays <-> kiln tensors (dtypes, DLTensor views,
 *             zero-copy arrays over kiln tensors)
 *   dlpack.c  DLPack capsules both ways (export a kiln tensor, import any
 *             producer's tensor without a copy)
 *   tensor.c  kiln.Tensor: a Python object holding one eager tensor
 *   eager.c   the eager operators (the generic call by name, typed helpers)
 *   context.c kiln.eager.Context: an eager context of one's own
 *   model.c   kiln.Model's engine: compile or load, run, profile, save
 *
 * Threads: every call that may wait (compile, run, eager reads and calls,
 * sync) releases the GIL, so no kiln thread ever waits for the GIL while the
 * GIL's holder waits for kiln. The one kiln-to-Python call, a DLPack
 * producer's deleter run when kiln drops an imported tensor, takes the GIL
 * itself (dlpack.c).
 */
#ifndef KILN_PY_H_
#define KILN_PY_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API  NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL kiln_py_numpy_api
#ifndef KILN_PY_IMPORT_NUMPY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <kiln/compiler.h>
#include <kiln/eager.h>
#include <kiln/model.h>
#include <kiln/runtime.h>
#include <kiln/status.h>
#include <kiln/tensor.h>

/* ---- errors.c ---- */

/* Makes kiln.Error and its subclasses and adds them to `module`; -1 on error. */
int kiln_py_errors_initialize(PyObject *module);
/* Raises the exception for `status` (which must not be OK), frees the status
 * and returns NULL. */
PyObject *kiln_py_error_raise(kiln_status_t status);
/* The same returning -1, for int-returning helpers. */
int kiln_py_error_raise_int(kiln_status_t status);

/* ---- array.c ---- */

/* The NumPy type number of `dtype`; -1 with TypeError when NumPy has none. */
int kiln_py_array_typenum(kiln_dtype_t dtype);
/* The kiln dtype of a NumPy array; -1 with TypeError when kiln has none. */
int kiln_py_array_dtype(PyArrayObject *array, kiln_dtype_t *out_dtype);
/* `object` as a C-contiguous, aligned NumPy array (a new reference; the
 * same array when it already is one). `dtype`, when not NULL, is the dtype
 * that objects which are not arrays yet (lists, scalars) are converted to. */
PyArrayObject *kiln_py_array_from_object(PyObject *object, const kiln_dtype_t *dtype);
/* A DLTensor view of a C-contiguous array: `shape` has room for
 * KILN_MAX_RANK dims; -1 with an exception for a dtype or rank kiln lacks. */
int kiln_py_array_dl(PyArrayObject *array, int64_t *shape, DLTensor *out_dl);
/* A NumPy array over `tensor`'s storage, without a copy; takes the
 * caller's reference to the tensor (released with the array). */
PyObject *kiln_py_array_wrap_tensor(kiln_tensor_t *tensor);

/* ---- dlpack.c ---- */

/* A "dltensor" capsule over `tensor` (retained until the consumer's deleter
 * runs, or the unconsumed capsule dies). */
PyObject *kiln_py_dlpack_export(kiln_tensor_t *tensor);
/* A kiln tensor over the memory of `object` (a DLPack producer: an object
 * with __dlpack__, or a "dltensor" capsule), without a copy; the producer
 * stays alive until the tensor's last release. NULL with an exception. */
kiln_tensor_t *kiln_py_dlpack_import(PyObject *object);
/* DLPack managed tensors exported and not yet deleted (tests). */
long kiln_py_dlpack_live_exports(void);

/* ---- tensor.c ---- */

typedef struct kiln_py_tensor_t {
  PyObject_HEAD kiln_eager_tensor_t *eager;
} kiln_py_tensor_t;

extern PyTypeObject kiln_py_tensor_type;

int kiln_py_tensor_initialize(PyObject *module);
/* A kiln.Tensor owning `eager` (the caller's reference is taken, also on
 * failure). */
PyObject *kiln_py_tensor_wrap(kiln_eager_tensor_t *eager);
/* A new reference to an eager tensor for `object`: a kiln.Tensor's own, or
 * a copy of anything NumPy turns into an array (converted to *dtype when
 * given and `object` is not an array) made in `context` (NULL: the
 * default one). */
int kiln_py_tensor_from_object(PyObject *object, const kiln_dtype_t *dtype,
                               kiln_eager_context_t *context, kiln_eager_tensor_t **out_eager);
/* The copy alone (also for a kiln.Tensor, as any array). */
int kiln_py_tensor_copy_object(PyObject *object, const kiln_dtype_t *dtype,
                               kiln_eager_context_t *context, kiln_eager_tensor_t **out_eager);
/* Waits (GIL released) for the tensor's writers; returns its storage
 * (retained) or NULL with the exception. */
kiln_tensor_t *kiln_py_tensor_read(kiln_eager_tensor_t *eager);

/* ---- eager.c ---- */

extern PyMethodDef kiln_py_eager_methods[];
/* The generic call's arguments (op_name, inputs, attrs) run in `context`
 * (NULL: the inputs' context, else the default one). */
PyObject *kiln_py_eager_call_in(kiln_eager_context_t *context, PyObject *args);
/* Binary eager operator by name (for Tensor's number protocol). */
PyObject *kiln_py_eager_binary_named(const char *op_name, PyObject *a, PyObject *b);

/* ---- context.c ---- */

int kiln_py_context_initialize(PyObject *module);

/* ---- model.c ---- */

extern PyTypeObject kiln_py_model_type;
int kiln_py_model_initialize(PyObject *module);
/* compile(model, target, opt_level, input_shapes, disabled_passes, batch,
 * image_size) and load(folder): a new _kiln.Model. */
PyObject *kiln_py_model_compile(PyObject *module, PyObject *args);
PyObject *kiln_py_model_load(PyObject *module, PyObject *args);

#endif /* KILN_PY_H_ */
