"""kiln's eager operators: one call at a time, queued on kiln's eager VM.

Every operator of kiln's registry is callable by name with call(); the
common ones have helpers. Inputs are kiln.Tensor objects or anything NumPy
turns into an array (copied); outputs are kiln.Tensor objects whose dtype
and shape are known at once, and whose values a read (.numpy()) waits for.
An error in a kernel comes back from the next read of its outputs, or from
sync().

    y = kiln.eager.conv2d(x, w, strides=(1, 1), padding=(1, 1))
    z = kiln.eager.call("nn.softmax", y, axis=1)
    top, indices = kiln.eager.call("topk", z, k=5)
"""
from . import _kiln

__all__ = ["Context", "call", "sync", "add", "subtract", "multiply", "divide", "matmul", "dense",
           "bias_add", "relu", "sigmoid", "tanh", "softmax", "conv2d", "max_pool2d",
           "avg_pool2d", "global_avg_pool2d", "batch_flatten", "reshape", "transpose",
           "concatenate", "exp", "sum", "mean"]


def _scalar_text(value):
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) else str(value)
    return str(value)


def _attr_text(value):
    """An attribute in kiln's text format: 3, 1e-05, True, [1, 2], "NCHW"."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_scalar_text(v) for v in value) + "]"
    if hasattr(value, "tolist"):  # NumPy scalars and arrays
        return _attr_text(value.tolist())
    return _scalar_text(value)


def call(op_name, *inputs, **attrs):
    """Runs registry operator `op_name` ("add", "nn.conv2d", "topk", ...) on
    `inputs` with `attrs` (the rest at their defaults). Returns a Tensor, or
    a tuple of Tensors for an operator with several outputs."""
    pairs = [(name, _attr_text(value)) for name, value in attrs.items()]
    outputs = _kiln.eager_call(op_name, inputs, pairs)
    return outputs[0] if len(outputs) == 1 else outputs


def sync():
    """Waits for every eager call so far (in the default context); raises
    the first kernel error since the last sync."""
    _kiln.eager_sync()


class Context:
    """An eager context of one's own: its own VM and threads, its own options.

        with kiln.eager.Context(reference_kernels=True) as context:
            x = context.tensor(np.ones((2, 3), np.float32))
            y = kiln.eager.relu(x - 2)         # runs in x's context
            r = context.call("arange", start=0, stop=4, step=1, dtype="float32")

    target: a code-generation target string (None: kiln's eager default);
    reference_kernels: run every operator's reference kernel, never compile.
    Operators run in their inputs' context (NumPy inputs are copied into it);
    mixing two contexts' tensors in one call is a ValueError. close() (or
    the with block's end) cancels what has not started; the tensors stay
    readable, new work on them raises kiln.Error.
    """

    def __init__(self, target=None, reference_kernels=False):
        self._impl = _kiln.Context(target, bool(reference_kernels))

    def tensor(self, data, dtype=None):
        """A tensor in this context holding a copy of `data`."""
        if dtype is not None:
            import numpy
            data = numpy.asarray(data, dtype=dtype)
        return self._impl.tensor(data)

    def from_dlpack(self, x):
        """A tensor in this context over x's memory (no copy)."""
        return self._impl.from_dlpack(x)

    def call(self, op_name, *inputs, **attrs):
        """kiln.eager.call in this context (for an operator without inputs too)."""
        pairs = [(name, _attr_text(value)) for name, value in attrs.items()]
        outputs = self._impl.call(op_name, inputs, pairs)
        return outputs[0] if len(outputs) == 1 else outputs

    def sync(self):
        """Waits for the context's work; raises its first kernel error since the last sync."""
        self._impl.sync()

    def close(self):
        self._impl.close()

    @property
    def closed(self):
        return self._impl.closed

    @property
    def kernel_stats(self):
        """The kernel cache's counts: lookups, entries, hits, compiled, reference, compiles."""
        return self._impl.kernel_stats

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()


def add(a, b):
    return _kiln.eager_add(a, b)


def subtract(a, b):
    return _kiln.eager_subtract(a, b)


def multiply(a, b):
    return _kiln.eager_multiply(a, b)


def divide(a, b):
    return _kiln.eager_divide(a, b)


def matmul(a, b):
    """NumPy's matmul (nn.matmul)."""
    return call("nn.matmul", a, b)


def dense(x, weight, bias=None):
    """x (batch, in) times weight (units, in) transposed, plus bias."""
    y = _kiln.eager_dense(x, weight)
    return y if bias is None else _kiln.eager_bias_add(y, bias, -1)


def bias_add(x, bias, axis=1):
    return _kiln.eager_bias_add(x, bias, int(axis))


def relu(x):
    return _kiln.eager_relu(x)


def sigmoid(x):
    return _kiln.eager_sigmoid(x)


def tanh(x):
    return _kiln.eager_tanh(x)


def exp(x):
    return call("exp", x)


def softmax(x, axis=-1):
    return _kiln.eager_softmax(x, int(axis))


def _pair(value):
    return (value, value) if isinstance(value, int) else tuple(value)


def _padding(value):
    """An int, (h, w) or (top, left, bottom, right)."""
    if isinstance(value, int):
        return (value,) * 4
    value = tuple(value)
    return value * 2 if len(value) == 2 else value


def conv2d(x, weight, strides=1, padding=0, dilation=1, groups=1, bias=None):
    """NCHW input, OIHW weight. strides, dilation: int or (h, w); padding:
    int, (h, w) or (top, left, bottom, right)."""
    if _pair(dilation) == (1, 1) and groups == 1:
        y = _kiln.eager_conv2d(x, weight, _pair(strides), _padding(padding))
    else:
        y = call("nn.conv2d", x, weight, strides=_pair(strides), padding=_padding(padding),
                 dilation=_pair(dilation), groups=groups)
    return y if bias is None else _kiln.eager_bias_add(y, bias, 1)


def max_pool2d(x, pool_size, strides=None, padding=0):
    strides = pool_size if strides is None else strides
    return _kiln.eager_max_pool2d(x, _pair(pool_size), _pair(strides), _padding(padding))


def avg_pool2d(x, pool_size, strides=None, padding=0):
    strides = pool_size if strides is None else strides
    return call("nn.avg_pool2d", x, pool_size=_pair(pool_size), strides=_pair(strides),
                padding=_padding(padding))


def global_avg_pool2d(x):
    return _kiln.eager_global_avg_pool2d(x)


def batch_flatten(x):
    return _kiln.eager_batch_flatten(x)


def reshape(x, shape):
    return call("reshape", x, newshape=tuple(shape))


def transpose(x, axes=None):
    return call("transpose", x) if axes is None else call("transpose", x, axes=tuple(axes))


def concatenate(tensors, axis=0):
    return call("concatenate", *tensors, axis=int(axis))


def sum(x, axis=None, keepdims=False):
    if axis is None:
        return call("sum", x, keepdims=keepdims)
    return call("sum", x, axis=_axes(axis), keepdims=keepdims)


def mean(x, axis=None, keepdims=False):
    if axis is None:
        return call("mean", x, keepdims=keepdims)
    return call("mean", x, axis=_axes(axis), keepdims=keepdims)


def _axes(axis):
    return [axis] if isinstance(axis, int) else list(axis)
