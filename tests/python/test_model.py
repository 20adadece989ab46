"""kiln.compile, Model.run / profile / save, kiln.load."""
import numpy as np
import pytest

import kiln


def test_resnet18_matches_the_expected_output(resnet18):
    model, x, expected = resnet18
    [y] = model.run(x)
    assert isinstance(y, np.ndarray) and y.dtype == np.float32
    np.testing.assert_allclose(y, expected, rtol=1e-3, atol=1e-4)
    assert model.inputs == [kiln.TensorInfo("input", (1, 3, 224, 224), "float32")]
    assert model.outputs[0].shape == (1, 1000) and model.outputs[0].dtype == "float32"
    assert model.stats["num_kernels"] > 0 and model.stats["seconds_total"] > 0


def test_run_by_name_and_outputs_are_fresh(mlp):
    model, x, expected = mlp
    name = model.inputs[0].name
    [first] = model.run(**{name: x})
    [second] = model(x + 1)
    np.testing.assert_allclose(first, expected, rtol=1e-3, atol=1e-4)
    assert not np.allclose(first, second)  # the first result was not overwritten
    assert first.__array_interface__["data"][0] != second.__array_interface__["data"][0]


def test_run_takes_lists_tensors_and_strided_arrays(mlp):
    model, x, expected = mlp
    [from_list] = model.run(x.tolist())  # converted to the input's dtype
    [from_tensor] = model.run(kiln.tensor(x))
    strided = np.repeat(x, 2, axis=-1)[..., ::2]  # not contiguous: copied first
    [from_strided] = model.run(strided)
    for y in (from_list, from_tensor, from_strided):
        np.testing.assert_allclose(y, expected, rtol=1e-3, atol=1e-4)


def test_run_argument_errors(mlp):
    model, x, _ = mlp
    name = model.inputs[0].name
    with pytest.raises(TypeError, match="missing input"):
        model.run()
    with pytest.raises(TypeError, match="takes 1 inputs, 2 given"):
        model.run(x, x)
    with pytest.raises(TypeError, match="unexpected input 'nope'"):
        model.run(nope=x)
    with pytest.raises(TypeError, match="twice"):
        model.run(x, **{name: x})
    with pytest.raises(ValueError, match=name) as error:
        model.run(x.astype(np.float64))  # an array keeps its dtype: kiln names the input
    assert isinstance(error.value, kiln.InvalidArgumentError) and error.value.code == "INVALID_ARGUMENT"
    with pytest.raises(ValueError, match=name):
        model.run(np.zeros((3, 5), np.float32))


def test_profile_lists_every_kernel(mlp):
    model, x, _ = mlp
    profile = model.profile(x, runs=3)
    assert isinstance(profile, list) and len(profile) > 0
    assert set(profile[0]) == {"node", "name", "kernel", "milliseconds", "share", "flops",
                               "gflops_per_second"}
    assert profile.runs == 3
    assert abs(sum(row["share"] for row in profile) - 1.0) < 1e-6
    assert profile.total_milliseconds == pytest.approx(sum(r["milliseconds"] for r in profile))
    text = str(profile)
    assert "median of 3 runs" in text and profile[0]["kernel"] in text
    assert len(model.profile(runs=1)) == len(profile)  # zeros when no inputs are given


def test_save_and_load(mlp, tmp_path):
    model, x, expected = mlp
    model.save(tmp_path / "mlp")
    assert sorted(p.name for p in (tmp_path / "mlp").iterdir()) == [
        "graph.json", "lib.so", "params.bin"]
    loaded = kiln.load(tmp_path / "mlp")
    assert loaded.inputs == model.inputs and loaded.outputs == model.outputs
    assert loaded.stats is None
    np.testing.assert_allclose(loaded.run(x)[0], expected, rtol=1e-3, atol=1e-4)
    loaded.save(tmp_path / "copy")  # a loaded model saves by copying its folder
    np.testing.assert_allclose(kiln.load(tmp_path / "copy").run(x)[0], expected, rtol=1e-3,
                               atol=1e-4)


def test_vm_executor(mlp, tmp_path):
    """kiln.compile(executor="vm"): the VM (docs/vm.md) gives the graph
    executor's output bit for bit, saves vm.json and loads back as a VM."""
    from conftest import shared_model
    model, x, _ = mlp
    vm = kiln.compile(shared_model("mlp")[0], executor="vm")
    assert vm.executor == "vm" and model.executor == "graph"
    assert vm.inputs == model.inputs and vm.outputs == model.outputs
    np.testing.assert_array_equal(vm.run(x)[0], model.run(x)[0])
    assert len(vm.profile(x, runs=2)) == len(model.profile(x, runs=2))
    vm.save(tmp_path / "vm")
    assert sorted(p.name for p in (tmp_path / "vm").iterdir()) == [
        "lib.so", "params.bin", "vm.json"]
    loaded = kiln.load(tmp_path / "vm")
    assert loaded.executor == "vm"
    np.testing.assert_array_equal(loaded.run(x)[0], model.run(x)[0])
    loaded.save(tmp_path / "copy")
    assert kiln.load(tmp_path / "copy").executor == "vm"
    with pytest.raises(ValueError, match="executor must be one of"):
        kiln.compile("mlp", executor="jit")


def test_workload_and_options(workload_mlp):
    model = workload_mlp
    assert model.inputs[0].shape[0] == 2  # batch=2
    x = np.random.default_rng(0).standard_normal(model.inputs[0].shape).astype(np.float32)
    [y] = model.run(x)
    assert y.shape == model.outputs[0].shape and np.isfinite(y).all()
    c = kiln.compile("mlp", target="c", opt_level=1, batch=2)
    np.testing.assert_allclose(c.run(x)[0], y, rtol=1e-3, atol=1e-4)


def test_input_shapes(mlp):
    # The shared mlp's input is fixed: the same shape is accepted, another
    # one is refused naming the input.
    from conftest import shared_model
    model, x, expected = mlp
    path = shared_model("mlp")[0]
    info = model.inputs[0]
    same = kiln.compile(path, input_shapes={info.name: info.shape})
    np.testing.assert_allclose(same.run(x)[0], expected, rtol=1e-3, atol=1e-4)
    with pytest.raises(ValueError, match=info.name):
        kiln.compile(path, input_shapes={info.name: (3, 7)})
