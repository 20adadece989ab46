"""make install-python's steps: kiln installed under a prefix (cmake
--install of the build tree), then python/install.sh builds the package
against that prefix alone (its kiln.pc) and copies it to a site folder; a
fresh python3, with neither the build tree on PYTHONPATH nor
LD_LIBRARY_PATH, imports it from there and loads the prefix's libkiln."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]

CHECK = """
import sys, numpy as np, kiln
site = sys.argv[1]
assert kiln.__file__.startswith(site), kiln.__file__
maps = open("/proc/self/maps").read()
libkiln = {line.split()[-1] for line in maps.splitlines() if "libkiln.so" in line}
assert libkiln and all(path.startswith(sys.argv[2]) for path in libkiln), libkiln
y = kiln.eager.add(kiln.tensor([1.0, 2.0]), kiln.tensor([3.0, 4.0]))
assert y.numpy().tolist() == [4.0, 6.0]
print("ok", kiln.version)
"""


def test_install_python(tmp_path):
    build = os.environ.get("KILN_BUILD_DIR")
    if not build or not shutil.which("cmake") or not shutil.which("pkg-config"):
        pytest.skip("KILN_BUILD_DIR (set by run_pytest.sh), cmake and pkg-config are needed")
    prefix, site = tmp_path / "prefix", tmp_path / "site"
    subprocess.run(["cmake", "--install", build, "--prefix", prefix], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["sh", REPOSITORY / "python" / "install.sh", prefix, sys.executable, site],
                   check=True, stdout=subprocess.DEVNULL)
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    environment["PYTHONPATH"] = str(site)
    result = subprocess.run([sys.executable, "-c", CHECK, str(site), str(prefix.resolve())],
                            cwd=tmp_path, env=environment, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok ")
