"""Builds kiln's Python package: kiln/ and its C extension kiln._kiln.

The extension is built on kiln's public C API and links libkiln (shared).
Where kiln is, in this order:

  KILN_INCLUDE_DIRS (os.pathsep-separated) and KILN_LIBRARY_DIR, as the
      build tree's CMake target (python/CMakeLists.txt) sets them;
  pkg-config's kiln.pc (an installed kiln; PKG_CONFIG_PATH for a prefix
      outside the system's), as python/install.sh uses it.

KILN_RPATH (default: the library folder) is written into the extension,
so `import kiln` finds libkiln without LD_LIBRARY_PATH. Only Debian's
python3-dev, python3-numpy and python3-setuptools are needed.
"""
import glob
import os
import shlex
import subprocess

import numpy
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def pkg_config(*args):
    output = subprocess.run(["pkg-config", *args, "kiln"], check=True,
                            capture_output=True, text=True).stdout
    return shlex.split(output)


def kiln_location():
    include_dirs = os.environ.get("KILN_INCLUDE_DIRS")
    library_dir = os.environ.get("KILN_LIBRARY_DIR")
    if include_dirs and library_dir:
        return include_dirs.split(os.pathsep), library_dir
    includes = [flag[2:] for flag in pkg_config("--cflags-only-I")]
    library_dir = os.path.normpath(pkg_config("--variable=libdir")[0])
    return includes, library_dir


include_dirs, library_dir = kiln_location()
rpath = os.environ.get("KILN_RPATH", library_dir)

extension = Extension(
    "kiln._kiln",
    sources=sorted(glob.glob(os.path.join("src", "*.c"))),
    depends=[os.path.join("src", "kiln_py.h")],
    include_dirs=include_dirs + [numpy.get_include()],
    library_dirs=[library_dir],
    libraries=["kiln"],
    runtime_library_dirs=[rpath] if rpath else [],
    extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Werror",
                        "-Wno-missing-field-initializers"],
)

os.chdir(HERE)
setup(
    name="kiln",
    version=os.environ.get("KILN_VERSION", "0.1.0"),
    description="kiln: a deep-learning compiler and runtime (Python bindings)",
    packages=["kiln"],
    ext_modules=[extension],
)
