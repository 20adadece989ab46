"""kiln: a deep-learning compiler and runtime, from Python.

    import kiln
    model = kiln.compile("resnet18.onnx", input_shapes={"input": (1, 3, 224, 224)})
    [scores] = model.run(image)                 # NumPy in, NumPy out
    model.save("resnet18/")                     # graph.json, lib.so, params.bin
    model = kiln.load("resnet18/")

    x = kiln.tensor(np.ones((2, 3), np.float32))
    y = kiln.eager.relu(x + x)                  # eager operators (kiln.eager)
    y.numpy()

    t = kiln.from_dlpack(torch_tensor)          # no copy, both ways (DLPack)
    torch.from_dlpack(t)

Errors are kiln.Error (a RuntimeError); kiln.InvalidArgumentError is also a
ValueError, kiln.NotFoundError a FileNotFoundError, kiln.OutOfMemoryError a
MemoryError. Compiling and running release the GIL. docs/python.md.
"""
import atexit as _atexit
import collections as _collections
import os as _os
import shutil as _shutil

from . import _kiln
from ._kiln import (Error, InvalidArgumentError, NotFoundError, OutOfMemoryError, Tensor,
                    from_dlpack)

__all__ = ["compile", "load", "Model", "TensorInfo", "Profile", "Tensor", "tensor",
           "from_dlpack", "eager", "Error", "InvalidArgumentError", "NotFoundError",
           "OutOfMemoryError", "version", "default_target"]

version = _kiln.version
default_target = _kiln.default_target

TensorInfo = _collections.namedtuple("TensorInfo", ["name", "shape", "dtype"])
TensorInfo.__doc__ = "A model's input or output: name, shape (a tuple), dtype ('float32')."

_atexit.register(_kiln._at_exit)


class Profile(list):
    """Per-kernel times of a model, as `kiln run --profile` prints them.

    A list of dicts, one per kernel node in graph order: node (its index
    in graph.json), name, kernel, milliseconds (median over the runs),
    share (of the sum), flops, gflops_per_second. Attributes: runs,
    total_milliseconds (sum of the nodes), run_milliseconds (median of
    whole runs), total_flops; str() is the CLI's table.
    """

    def __init__(self, rows, text, totals):
        super().__init__(rows)
        self.text = text
        self.runs = totals["runs"]
        self.total_milliseconds = totals["total_milliseconds"]
        self.run_milliseconds = totals["run_milliseconds"]
        self.total_flops = totals["total_flops"]

    def __str__(self):
        return self.text


class Model:
    """A compiled model (kiln.compile, kiln.load).

    run(*arrays, **named) takes NumPy arrays (or kiln tensors, or anything
    NumPy turns into an array) by position or by input name and returns
    the outputs as a list of NumPy arrays. Any number of threads may run
    one model at once (each run takes a graph executor of its own).
    """

    def __init__(self, impl):
        self._impl = impl
        self.inputs = [TensorInfo(*info) for info in impl.inputs]
        self.outputs = [TensorInfo(*info) for info in impl.outputs]

    def run(self, *arrays, **named):
        return self._impl.run(arrays, named)

    __call__ = run

    def profile(self, *arrays, runs=10, **named):
        """Runs `runs` times (on zeros when no inputs are given) timing every kernel."""
        return Profile(*self._impl.profile(int(runs), arrays, named))

    @property
    def executor(self):
        """"vm" when the model runs on the VM (vm.json), else "graph"."""
        return "vm" if self._impl.is_vm else "graph"

    def save(self, folder):
        """Writes folder/graph.json (vm.json for the VM), folder/lib.so and
        folder/params.bin (a model loaded from one file: copies that file to
        `folder`)."""
        folder = _os.fspath(folder)
        if self._impl.folder is None:
            self._impl.save(folder)
            return
        if _os.path.isfile(self._impl.folder):
            _shutil.copyfile(self._impl.folder, folder)
            return
        _os.makedirs(folder, exist_ok=True)
        program = "vm.json" if self._impl.is_vm else "graph.json"
        for name in (program, "lib.so", "params.bin"):
            source = _os.path.join(self._impl.folder, name)
            target = _os.path.join(folder, name)
            if not (_os.path.exists(target) and _os.path.samefile(source, target)):
                _shutil.copyfile(source, target)

    @property
    def stats(self):
        """The compile's statistics (a dict; None for a loaded model)."""
        return self._impl.stats

    def __repr__(self):
        inputs = ", ".join(f"{i.name}: {i.dtype}{list(i.shape)}" for i in self.inputs)
        return f"<kiln.Model ({inputs}) -> {len(self.outputs)} output(s)>"


def _shape_text(name, shape):
    if isinstance(shape, str):
        return f"{name}={shape}"
    return f"{name}=" + "x".join(str(int(d)) for d in shape)


_EXECUTORS = {"auto": 0, "graph": 1, "vm": 2}


def compile(model, target=None, opt_level=3, input_shapes=None, *, batch=None,
            image_size=None, disabled_passes=(), executor="auto"):
    """Compiles an ONNX file (a path ending in .onnx) or a built-in workload
    ("resnet18", "mlp", ...) for `target` (None: kiln.default_target; "llvm",
    "llvm -mcpu=...", "c", "c -march=native") at `opt_level` (0 to 3).
    input_shapes: {input name: shape} for an ONNX model's symbolic dims.
    batch, image_size: a workload's. executor: "graph", "vm" or "auto" (the
    VM when the model has dynamic shapes or control flow, else the graph
    executor; docs/vm.md). Returns a kiln.Model; the GIL is released while
    kiln compiles."""
    if executor not in _EXECUTORS:
        raise ValueError(f"executor must be one of {sorted(_EXECUTORS)}, not {executor!r}")
    model = _os.fspath(model)
    shapes = tuple(_shape_text(name, shape) for name, shape in (input_shapes or {}).items())
    impl = _kiln.compile(model, target, int(opt_level), shapes, tuple(disabled_passes),
                         int(batch or 0), int(image_size or 0), _EXECUTORS[executor])
    return Model(impl)


def load(folder):
    """Loads a folder that Model.save or `kiln compile -o DIR` wrote, or a
    one-file model (`kiln compile -o model.so`)."""
    return Model(_kiln.load(_os.fspath(folder)))


def tensor(data, dtype=None):
    """A kiln tensor holding a copy of `data` (anything NumPy turns into an
    array; `dtype` converts it first). kiln.from_dlpack shares instead."""
    if dtype is not None:
        import numpy
        data = numpy.asarray(data, dtype=dtype)
    return Tensor(data)


from . import eager  # noqa: E402  (eager uses the names above)
