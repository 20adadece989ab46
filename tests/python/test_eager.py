"""kiln.Tensor and kiln.eager against NumPy."""
import numpy as np
import pytest

import kiln
from kiln import eager

RNG = np.random.default_rng(19)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def close(tensor, expected):
    assert isinstance(tensor, kiln.Tensor)
    np.testing.assert_allclose(tensor.numpy(), expected, rtol=1e-4, atol=1e-5)


def test_tensor_basics():
    a = rand(2, 3)
    t = kiln.tensor(a)
    assert t.shape == (2, 3) and t.dtype == "float32" and t.ndim == 2
    assert repr(t) == "kiln.Tensor(shape=(2, 3), dtype=float32)"
    close(t, a)
    assert t.data_ptr() != a.__array_interface__["data"][0]  # kiln.tensor copies
    assert t.numpy().__array_interface__["data"][0] == t.data_ptr()  # numpy() shares
    np.testing.assert_array_equal(np.asarray(t), a)
    assert kiln.tensor([1, 2, 3], dtype=np.int64).dtype == "int64"
    assert kiln.Tensor(np.float64(2.5)).shape == ()
    assert kiln.tensor(np.array([True, False])).numpy().dtype == np.bool_


def test_elementwise_and_operators():
    a, b = rand(3, 4), rand(3, 4)
    ta, tb = kiln.tensor(a), kiln.tensor(b)
    close(eager.add(ta, tb), a + b)
    close(eager.subtract(ta, b), a - b)  # NumPy inputs are copied in
    close(eager.multiply(ta, tb), a * b)
    close(eager.divide(ta, tb), a / b)
    close(ta + tb, a + b)
    close(ta - 1.5, a - 1.5)  # a Python number takes the tensor's dtype
    close(ta * 2, a * 2)
    close(ta / tb, a / b)
    close(eager.add(ta, rand(4)[None, :] * 0 + 1), a + 1)  # broadcasting
    close(eager.relu(ta), np.maximum(a, 0))
    close(eager.sigmoid(ta), 1 / (1 + np.exp(-a)))
    close(eager.tanh(ta), np.tanh(a))
    close(eager.exp(ta), np.exp(a))


def test_matmul_dense_softmax():
    a, b, w, bias = rand(3, 5), rand(5, 4), rand(6, 5), rand(6)
    close(eager.matmul(a, b), a @ b)
    close(kiln.tensor(a) @ kiln.tensor(b), a @ b)
    close(eager.dense(a, w), a @ w.T)
    close(eager.dense(a, w, bias), a @ w.T + bias)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    close(eager.softmax(a, axis=1), e / e.sum(axis=1, keepdims=True))
    close(eager.softmax(a), e / e.sum(axis=1, keepdims=True))


def reference_conv2d(x, w, stride, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), np.float32)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return out


def test_conv2d_and_pooling():
    x, w, bias = rand(1, 3, 9, 7), rand(4, 3, 3, 3), rand(4)
    y = eager.conv2d(x, w, strides=2, padding=1, bias=bias)
    close(y, reference_conv2d(x, w, 2, 1) + bias[None, :, None, None])
    assert y.shape == (1, 4, 5, 4)
    close(eager.conv2d(x, w, padding=(1, 1)), reference_conv2d(x, w, 1, 1))
    pooled = eager.max_pool2d(x, 2)
    close(pooled, x[:, :, :8, :6].reshape(1, 3, 4, 2, 3, 2).max(axis=(3, 5)))
    close(eager.avg_pool2d(x, 2), x[:, :, :8, :6].reshape(1, 3, 4, 2, 3, 2).mean(axis=(3, 5)))
    close(eager.global_avg_pool2d(x), x.mean(axis=(2, 3), keepdims=True))
    close(eager.batch_flatten(x), x.reshape(1, -1))
    close(eager.bias_add(x, rand(3) * 0 + 2), x + 2)


def test_generic_call_with_attributes():
    a = rand(2, 6)
    values, indices = eager.call("topk", a, k=2)
    assert indices.dtype == "int64"
    np.testing.assert_array_equal(indices.numpy(), np.argsort(-a, axis=1)[:, :2])
    close(values, -np.sort(-a, axis=1)[:, :2])
    parts = eager.call("split", a, indices=[2, 4], axis=1)
    assert len(parts) == 3
    close(parts[1], a[:, 2:4])
    close(eager.reshape(a, (3, 4)), a.reshape(3, 4))
    close(eager.transpose(a), a.T)
    close(eager.concatenate([a, a], axis=0), np.concatenate([a, a]))
    close(eager.sum(a, axis=1), a.sum(axis=1))
    close(eager.mean(a, axis=[0, 1], keepdims=True), a.mean(keepdims=True))
    close(eager.call("clip", a, a_min=-0.5, a_max=0.5), np.clip(a, -0.5, 0.5))
    close(eager.call("nn.leaky_relu", a, alpha=0.25), np.where(a > 0, a, 0.25 * a))
    close(eager.sum(a), a.sum())
    close(eager.call("cast", a, dtype="int32"), a.astype(np.int32))
    close(eager.call("arange", start=0, stop=5, step=1, dtype="float32"), np.arange(5))
    close(2 * kiln.tensor(a), 2 * a)  # reflected operators too
    x, w = rand(1, 4, 5, 5), rand(6, 2, 3, 3)
    y = eager.conv2d(x, w, padding=1, groups=2)
    expected = np.concatenate([reference_conv2d(x[:, :2], w[:3], 1, 1),
                               reference_conv2d(x[:, 2:], w[3:], 1, 1)], axis=1)
    close(y, expected)
    eager.sync()


def test_eager_errors():
    a = kiln.tensor(rand(2, 3))
    with pytest.raises(ValueError, match=r"add: cannot broadcast \(2, 3\) and \(4,\)"):
        eager.add(a, rand(4))
    with pytest.raises(ValueError, match="nn.softmax has no attribute 'axes'"):
        eager.call("nn.softmax", a, axes=1)
    with pytest.raises(kiln.NotFoundError, match="nn.nothing"):
        eager.call("nn.nothing", a)
    with pytest.raises(TypeError, match="complex128"):
        kiln.tensor(np.ones(2, np.complex128))
    with pytest.raises(MemoryError, match="out of memory"):
        eager.call("broadcast_to", kiln.tensor(np.ones(1, np.float32)), shape=[1 << 20, 1 << 20])
