"""kiln.eager.Context: eager contexts of one's own."""
import threading

import numpy as np
import pytest

import kiln
from kiln import eager


def test_a_context_runs_its_tensors():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    with eager.Context(reference_kernels=True) as context:
        x = context.tensor(a)
        y = eager.relu(x - 2)  # x's context; the number is copied into it
        np.testing.assert_array_equal(y.numpy(), np.maximum(a - 2, 0))
        z = eager.add(y, a)  # a NumPy input goes into y's context too
        np.testing.assert_array_equal(z.numpy(), np.maximum(a - 2, 0) + a)
        r = context.call("arange", start=0, stop=4, step=1, dtype="float32")
        np.testing.assert_array_equal(r.numpy(), [0, 1, 2, 3])
        shared = context.from_dlpack(a)
        assert shared.data_ptr() == a.__array_interface__["data"][0]
        np.testing.assert_array_equal(eager.multiply(shared, x).numpy(), a * a)
        context.sync()
        stats = context.kernel_stats
        assert stats["reference"] > 0 and stats["compiled"] == 0
    assert context.closed
    np.testing.assert_array_equal(z.numpy(), np.maximum(a - 2, 0) + a)  # still readable
    with pytest.raises(kiln.Error, match="destroyed"):
        eager.relu(z)
    with pytest.raises(ValueError, match="closed"):
        context.tensor(a)


def test_contexts_do_not_mix():
    with eager.Context() as one, eager.Context() as two:
        with pytest.raises(ValueError, match="another eager context"):
            eager.add(one.tensor([1.0]), two.tensor([1.0]))
        with pytest.raises(ValueError, match="another eager context"):
            eager.add(one.tensor([1.0]), kiln.tensor([1.0]))  # the default context's


def test_two_threads_two_contexts():
    results = {}

    def work(index):
        with eager.Context() as context:
            x = context.tensor(np.full((4, 4), index, np.float32))
            y = x
            for _ in range(50):
                y = eager.add(y, x)
            results[index] = y.numpy().copy()

    threads = [threading.Thread(target=work, args=(i,)) for i in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for index in (1, 2):
        np.testing.assert_array_equal(results[index], np.full((4, 4), 51.0 * index))
