"""The GIL is released while kiln compiles and runs: threads run models at once."""
import threading

import numpy as np

import kiln


def run_in_threads(*jobs):
    results, errors = [None] * len(jobs), []
    barrier = threading.Barrier(len(jobs))

    def work(index, job):
        try:
            barrier.wait()
            results[index] = job()
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i, job)) for i, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return results


def test_two_threads_two_models(resnet18, mlp):
    (big, x, expected), (small, y, expected_small) = resnet18, mlp
    results = run_in_threads(lambda: big.run(x)[0],
                             lambda: [small.run(y)[0] for _ in range(20)])
    np.testing.assert_allclose(results[0], expected, rtol=1e-3, atol=1e-4)
    for result in results[1]:
        np.testing.assert_allclose(result, expected_small, rtol=1e-3, atol=1e-4)


def test_two_threads_one_model_run_at_once(resnet18):
    model, x, expected = resnet18
    for _ in range(5):  # two overlapping runs need a second executor
        results = run_in_threads(lambda: model.run(x)[0], lambda: model.run(x * 0.5)[0])
        np.testing.assert_allclose(results[0], expected, rtol=1e-3, atol=1e-4)
        assert not np.allclose(results[1], expected)
        if model._impl.idle_executors >= 2:
            break
    assert model._impl.idle_executors >= 2  # the runs overlapped: the GIL was free
    [again] = model.run(x * 0.5)
    np.testing.assert_allclose(again, results[1], rtol=1e-5, atol=1e-6)


def test_a_thread_compiles_while_another_runs_python():
    done = threading.Event()
    ticks = []

    def compile_it():
        kiln.compile("mlp", opt_level=3, batch=3)
        done.set()

    thread = threading.Thread(target=compile_it)
    thread.start()
    while not done.is_set():  # this thread keeps running Python meanwhile
        ticks.append(1)
        done.wait(0.001)
    thread.join()
    assert len(ticks) > 5


def test_two_threads_on_a_workload(workload_mlp):
    # Needs no shared files: the built-in mlp, one thread's runs against the other's.
    model = workload_mlp
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal(model.inputs[0].shape).astype(np.float32) for _ in range(2)]
    expected = [model.run(x)[0] for x in inputs]
    results = run_in_threads(*[lambda x=x: [model.run(x)[0] for _ in range(10)] for x in inputs])
    for runs, reference in zip(results, expected):
        for result in runs:
            np.testing.assert_array_equal(result, reference)
