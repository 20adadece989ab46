#!/usr/bin/env python3
"""Writes the .npz fixtures of kiln's tests as numpy.savez (stored members)
and numpy.savez_compressed (deflated members) write them: Python's zipfile,
each member opened with force_zip64=True, a .npy 1.0 file per array. Uses
the standard library alone (no NumPy needed). Run from this folder."""
import struct
import zipfile


def npy(descr, shape, data):
    shape_text = "(%s)" % "".join("%d, " % d for d in shape)[:-1] if len(shape) != 1 \
        else "(%d,)" % shape[0]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data


def savez(path, arrays, compression, level=None):
    with zipfile.ZipFile(path, "w", compression=compression, allowZip64=True,
                         compresslevel=level) as zf:
        for name, value in arrays.items():
            with zf.open(name + ".npy", "w", force_zip64=True) as member:
                member.write(value)


def skewed(count):
    state = 12345
    for _ in range(count):
        state = (state * 1103515245 + 12345) % 2**31
        yield min(state >> 16 & 15, state >> 20 & 15)


mlp = npy("<f4", (1, 784), struct.pack("<784f", *[(i % 7) * 0.125 - 0.25 for i in range(784)]))
savez("mlp_data.npz", {"data": mlp}, zipfile.ZIP_STORED)
savez("mlp_data_compressed.npz", {"data": mlp}, zipfile.ZIP_DEFLATED)  # dynamic codes
two = {
    "a": npy("<f4", (2, 3), struct.pack("<6f", 1, 2, 3, 4, 5, 6)),
    "b": npy("<i8", (3,), struct.pack("<3q", 7, -8, 9)),
    # skewed bytes, which zlib codes with a dynamic Huffman code
    "c": npy("|i1", (1000,), bytes(skewed(1000))),
}
savez("two.npz", two, zipfile.ZIP_STORED)
savez("two_compressed.npz", two, zipfile.ZIP_DEFLATED)  # fixed Huffman codes
savez("two_level0.npz", two, zipfile.ZIP_DEFLATED, 0)  # deflate's stored blocks
with zipfile.ZipFile("not_npy.npz", "w") as zf:
    zf.writestr("notes.txt", "not an array")
# Every zip64 record a large .npz has (the central entries' zip64 extra
# fields, the zip64 end record and its locator), in a small file: the
# limits above which zipfile writes them, lowered.
zipfile.ZIP64_LIMIT = 1
zipfile.ZIP_FILECOUNT_LIMIT = 1
savez("two_zip64.npz", two, zipfile.ZIP_DEFLATED)
