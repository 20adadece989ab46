"""DLPack both ways without copies, and the producers' lifetimes."""
import ctypes
import gc
import sys

import numpy as np
import pytest

import kiln
from kiln import _kiln

ctypes.pythonapi.PyCapsule_IsValid.restype = ctypes.c_int
ctypes.pythonapi.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]


def capsule_name_is(capsule, name):
    return ctypes.pythonapi.PyCapsule_IsValid(capsule, name.encode()) == 1


def address(array):
    return array.__array_interface__["data"][0]


def settle():
    kiln.eager.sync()
    gc.collect()


def test_numpy_to_kiln_shares_memory():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = kiln.from_dlpack(a)
    assert t.data_ptr() == address(a)
    assert t.shape == (3, 4) and t.dtype == "float32"
    a[0, 0] = 100.0  # one memory: the write shows through kiln
    assert t.numpy()[0, 0] == 100.0
    np.testing.assert_array_equal(kiln.eager.add(t, t).numpy(), 2 * a)
    for dtype in (np.int8, np.uint16, np.int32, np.int64, np.float64, np.float16):
        b = np.arange(6, dtype=dtype)
        assert kiln.from_dlpack(b).data_ptr() == address(b)
        assert kiln.from_dlpack(b).dtype == np.dtype(dtype).name


def test_kiln_to_numpy_shares_memory():
    t = kiln.eager.relu(kiln.tensor(np.arange(-3, 3, dtype=np.float32)))
    b = np.from_dlpack(t)
    assert address(b) == t.data_ptr()
    np.testing.assert_array_equal(b, [0, 0, 0, 0, 1, 2])
    assert t.__dlpack_device__() == (1, 0)
    assert kiln.from_dlpack(t).data_ptr() == t.data_ptr()  # kiln to kiln, shared too


def test_the_producer_lives_while_kiln_uses_it():
    a = np.arange(1000, dtype=np.float32)
    before = sys.getrefcount(a)
    t = kiln.from_dlpack(a)
    assert sys.getrefcount(a) == before + 1  # held by the capsule's deleter
    y = kiln.eager.multiply(t, t)  # queued work may hold it past the tensor
    del t
    np.testing.assert_array_equal(y.numpy(), a * a)
    settle()
    assert sys.getrefcount(a) == before  # the last kiln user is done: released
    # The array may go first: kiln keeps its memory alive.
    b = np.arange(5, dtype=np.float32) * 3
    t = kiln.from_dlpack(b)
    del b
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), [0, 3, 6, 9, 12])


def test_consumed_capsules_are_renamed():
    a = np.ones(4, np.float32)
    capsule = a.__dlpack__()
    assert capsule_name_is(capsule, "dltensor")
    t = kiln.from_dlpack(capsule)
    assert capsule_name_is(capsule, "used_dltensor")
    with pytest.raises(ValueError, match="consumed already"):
        kiln.from_dlpack(capsule)
    assert t.data_ptr() == address(a)


def test_exported_capsules_release_the_tensor():
    settle()
    base = _kiln._live_exports()
    t = kiln.tensor(np.ones(3, np.float32))
    capsule = t.__dlpack__()
    assert capsule_name_is(capsule, "dltensor") and _kiln._live_exports() == base + 1
    del capsule  # never consumed: the capsule's destructor deletes it
    assert _kiln._live_exports() == base
    b = np.from_dlpack(t)
    assert _kiln._live_exports() == base + 1
    del t
    np.testing.assert_array_equal(b, [1, 1, 1])  # the consumer keeps the memory
    del b
    gc.collect()
    assert _kiln._live_exports() == base


def test_refusals():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    with pytest.raises(BufferError, match="not compact"):
        kiln.from_dlpack(a[:, ::2])
    with pytest.raises(TypeError, match="DLPack producer"):
        kiln.from_dlpack([1, 2, 3])
    with pytest.raises(ValueError, match="no stream"):
        kiln.tensor(a).__dlpack__(stream=1)
    # A column of a transposed array is compact where its dims are 1.
    column = np.ascontiguousarray(a)[:, :1].T[:1]
    assert kiln.from_dlpack(np.ascontiguousarray(column)).shape == (1, 3)


def test_torch_both_ways():
    torch = pytest.importorskip("torch")
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    t = kiln.from_dlpack(x)
    assert t.data_ptr() == x.data_ptr()
    x[0, 0] = 7.0
    assert t.numpy()[0, 0] == 7.0
    y = kiln.eager.add(t, t)
    back = torch.from_dlpack(y)
    assert back.data_ptr() == y.data_ptr()
    assert torch.equal(back, 2 * x)
    # torch's consumer renames kiln's capsule.
    capsule = y.__dlpack__()
    consumed = torch.utils.dlpack.from_dlpack(capsule)
    assert capsule_name_is(capsule, "used_dltensor")
    assert consumed.data_ptr() == y.data_ptr()
    # The torch tensor may go first: kiln keeps its storage alive.
    z = torch.full((4,), 3.0)
    kz = kiln.from_dlpack(z)
    del z
    gc.collect()
    np.testing.assert_array_equal(kz.numpy(), [3, 3, 3, 3])
    with pytest.raises(BufferError, match="not compact"):
        kiln.from_dlpack(x.t())
