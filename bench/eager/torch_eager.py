"""PyTorch eager doing the loop of eager_bench.c: y = y + x, then y = y * s,
alternating, on one-element float32 tensors, `ops` per round; the median
round's microseconds per op. usage: torch_eager.py [ops per round] [rounds]"""
import sys
import time

import torch


def round_seconds(ops, x, s):
    y = torch.zeros(1)
    start = time.perf_counter()
    for i in range(ops):
        y = torch.mul(y, s) if i & 1 else torch.add(y, x)
    value = float(y[0])
    return time.perf_counter() - start, value


def main():
    ops = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    torch.set_num_threads(1)
    x = torch.ones(1)
    s = torch.full((1,), 0.5)
    round_seconds(1000, x, s)
    times = []
    value = 0.0
    for _ in range(rounds):
        seconds, value = round_seconds(ops, x, s)
        times.append(seconds)
    median = sorted(times)[rounds // 2]
    print(f"torch eager {torch.__version__}: {ops} ops x {rounds} rounds, median "
          f"{median / ops * 1e6:.3f} us/op, {ops / median:.0f} ops/s (y = {value:g})")
    print(f"TORCH_US_PER_OP {median / ops * 1e6:.4f}")


if __name__ == "__main__":
    main()
