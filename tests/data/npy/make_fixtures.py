#!/usr/bin/python3
"""Writes the .npy fixtures of tests/runtime/test_npy.c with NumPy.

Run with a Python that has NumPy (here /usr/bin/python3, NumPy 1.24):

    /usr/bin/python3 tests/data/npy/make_fixtures.py

The generated files are committed; the C tests never run Python. Every value
is a formula of the element's flat index i that the C test recomputes (see
VALUES below and fixture_value() in test_npy.c), so no sidecar files are
needed:

    float32, float16, float64:  i * 0.5 - 3
    int8, int16, int32, int64:  (i - 12) * scale   (scale 1, 1000, 10**8, 10**17)
    uint8, uint16, uint32, uint64: i * scale       (scale 10, 2000, 10**8, 8 * 10**17)
    bool:                       i % 3 == 0

For each dtype, <dtype>_<shape>.npy with shapes () "scalar", (5,) "5",
(2, 3, 4) "2x3x4" and (0, 3) "0x3", written by numpy.save (format 1.0).
Then, from the float32 (2, 3, 4) array: a version 2.0 and a 3.0 file
(numpy.lib.format.write_array), a Fortran-order file and a big-endian file;
a rank-32 float32 file of ones of shape (1,) * 31 + (2,); and an empty uint8
file with a wide first dim, (1234567890123, 0), whose repr eats NumPy's
growth padding; and two empty uint8 files, uint8_pad1.npy of shape
(0,) + (100,) * 8 and uint8_pad64.npy of shape (0,) + (100,) * 7 + (1000,),
whose headers need 1 and 64 bytes of alignment padding (NumPy pads a full 64
when the header would already end on a boundary).
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

INT_SCALES = {"int8": 1, "int16": 1000, "int32": 10**8, "int64": 10**17}
UINT_SCALES = {"uint8": 10, "uint16": 2000, "uint32": 10**8, "uint64": 8 * 10**17}
DTYPES = ["float32", "float16", "float64", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "uint32", "uint64", "bool"]
SHAPES = {"scalar": (), "5": (5,), "2x3x4": (2, 3, 4), "0x3": (0, 3)}


def values(dtype, shape):
    count = int(np.prod(shape, dtype=np.int64))
    i = np.arange(count, dtype=np.int64)
    if dtype.startswith("float"):
        flat = (i * 0.5 - 3).astype(dtype)
    elif dtype in INT_SCALES:
        flat = ((i - 12) * INT_SCALES[dtype]).astype(dtype)
    elif dtype in UINT_SCALES:
        flat = (i.astype(np.uint64) * np.uint64(UINT_SCALES[dtype])).astype(dtype)
    else:
        flat = i % 3 == 0
    return flat.reshape(shape)


def path(name):
    return os.path.join(HERE, name)


def write_version(name, array, version):
    with open(path(name), "wb") as f:
        np.lib.format.write_array(f, array, version=version)


def main():
    for dtype in DTYPES:
        for label, shape in SHAPES.items():
            np.save(path("%s_%s.npy" % (dtype, label)), values(dtype, shape))
    base = values("float32", (2, 3, 4))
    write_version("float32_2x3x4.v2.npy", base, (2, 0))
    write_version("float32_2x3x4.v3.npy", base, (3, 0))
    np.save(path("float32_2x3x4.fortran.npy"), np.asfortranarray(base))
    np.save(path("float32_2x3x4.big.npy"), base.astype(">f4"))
    np.save(path("float32_rank32.npy"), np.ones((1,) * 31 + (2,), dtype=np.float32))
    np.save(path("uint8_wide_empty.npy"), np.zeros((1234567890123, 0), dtype=np.uint8))
    # Headers whose alignment padding is 1 byte and a full 64 bytes.
    np.save(path("uint8_pad1.npy"), np.zeros((0,) + (100,) * 8, dtype=np.uint8))
    np.save(path("uint8_pad64.npy"), np.zeros((0,) + (100,) * 7 + (1000,), dtype=np.uint8))


if __name__ == "__main__":
    main()
