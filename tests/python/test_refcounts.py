"""Reference counts: many calls leave the process's memory flat.

The resident set (/proc/self/statm) is read after a warm-up and again
after the calls; it may not grow by more than BOUND. (Keeping every
result of 100,000 eager adds grows it by about 40 MB.)
"""
import gc
import os

import numpy as np

import kiln

PAGE = os.sysconf("SC_PAGE_SIZE")
# A leak of 40 bytes a call over 100,000 calls is 4 MB: the bound.
BOUND = 4 << 20


def rss():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


def growth(step, calls, warmup=5000, sync_every=1000):
    for i in range(warmup):
        step(i)
    kiln.eager.sync()
    gc.collect()
    before = rss()
    for i in range(calls):
        step(i)
        if i % sync_every == 0:
            kiln.eager.sync()  # keeps the queue (not a leak) short
    kiln.eager.sync()
    gc.collect()
    return rss() - before


def test_eager_calls_and_dlpack_stay_flat():
    a = kiln.tensor(np.ones(16, np.float32))
    host = np.ones(16, np.float32)

    def step(i):
        y = kiln.eager.add(a, host if i % 2 else a)  # every other call copies an array in
        if i % 100 == 0:
            np.from_dlpack(kiln.from_dlpack(y.numpy()))

    assert growth(step, 100_000) < BOUND


def test_dlpack_round_trips_stay_flat():
    host = np.ones(64, np.float32)

    def step(i):
        t = kiln.from_dlpack(host)
        np.from_dlpack(t)
        t.__dlpack__()

    assert growth(step, 100_000) < BOUND


def test_model_runs_stay_flat(mlp):
    # A run's kernels wait for the thread pool, slow to wake on a busy
    # machine: fewer calls, and a bound of 100 bytes a run (an output
    # array or tensor lost each run is more).
    model, x, _ = mlp
    assert growth(lambda i: model.run(x), 5_000, warmup=500) < 500_000
