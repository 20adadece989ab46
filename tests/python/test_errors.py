"""kiln's statuses as Python exceptions."""
import pytest

import kiln


def test_not_found_is_file_not_found_error(tmp_path):
    missing = tmp_path / "missing.onnx"
    with pytest.raises(FileNotFoundError, match="missing.onnx") as error:
        kiln.compile(missing)
    assert isinstance(error.value, kiln.NotFoundError) and isinstance(error.value, kiln.Error)
    assert isinstance(error.value, RuntimeError)
    assert error.value.code == "NOT_FOUND" and error.value.source.startswith("src/")
    with pytest.raises(FileNotFoundError, match="no built-in workload \"resnet99\""):
        kiln.compile("resnet99")
    with pytest.raises(FileNotFoundError, match="not a folder"):
        kiln.load(tmp_path / "nothing")


def test_invalid_argument_is_value_error():
    with pytest.raises(ValueError, match="opt_level 7 is out of range") as error:
        kiln.compile("mlp", opt_level=7)
    assert isinstance(error.value, kiln.InvalidArgumentError)
    assert error.value.code == "INVALID_ARGUMENT"


def test_out_of_memory_is_memory_error():
    x = kiln.tensor([1.0])
    with pytest.raises(MemoryError) as error:
        kiln.eager.call("broadcast_to", x, shape=[1 << 21, 1 << 21])
    assert isinstance(error.value, kiln.OutOfMemoryError)
    assert error.value.code == "RESOURCE_EXHAUSTED"


def test_other_codes_are_kiln_errors(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"hello")
    with pytest.raises(kiln.Error, match="bad.onnx: 5 bytes do not parse") as error:
        kiln.compile(bad)
    assert type(error.value) is kiln.Error and isinstance(error.value, RuntimeError)
    assert error.value.code not in ("NOT_FOUND", "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED")
