"""Fixtures of kiln's Python tests (run by ctest's python.pytest through
run_pytest.sh, which puts the built package on PYTHONPATH).

The shared models are found as kiln's C tests find them: ../shared/models
beside the repository (KILN_SHARED_MODELS_DIR overrides); a test that needs
one is skipped when it is absent. Compiled models are session fixtures, so
each is compiled once.
"""
import os
import pathlib

import numpy as np
import pytest

import kiln

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
MODELS = pathlib.Path(os.environ.get("KILN_SHARED_MODELS_DIR",
                                     REPOSITORY.parent / "shared" / "models"))


def shared_model(name):
    """(model path, input, expected output) of a shared model, or a skip."""
    path = MODELS / f"{name}.onnx"
    if not path.exists():
        pytest.skip(f"the shared model {path} is absent")
    return (path, np.load(MODELS / f"{name}.input.npy"),
            np.load(MODELS / f"{name}.output.npy"))


@pytest.fixture(scope="session")
def resnet18():
    path, x, expected = shared_model("resnet18")
    return kiln.compile(path), x, expected


@pytest.fixture(scope="session")
def mlp():
    path, x, expected = shared_model("mlp")
    return kiln.compile(path), x, expected


@pytest.fixture(scope="session")
def workload_mlp():
    """The built-in mlp workload (needs no shared files)."""
    return kiln.compile("mlp", batch=2)
