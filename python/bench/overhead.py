#!/usr/bin/env python3
"""Python's cost per batch: Dataset.range(N).batch(1024) iterated from Python against the same
pipeline iterated in C++ (build/bench/python_batch_overhead), alternating, in one run. Reports
wall-clock and CPU time per batch (CPU: this process's threads, which a loaded machine distorts
less) and their differences: the binding's overhead.

    PYTHONPATH=build/python /usr/bin/python3 python/bench/overhead.py [--elements 10000000]
        [--rounds 5] [--cpp build/bench/python_batch_overhead]

The last line is key=value pairs.
"""
import argparse
import os
import resource
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def python_pass(elements, batch):
    from sluice.data import Dataset
    ds = Dataset.range(elements).batch(batch)
    cpu = time.process_time()
    start = time.perf_counter()
    n = 0
    for b in ds:
        n += 1
    return n, time.perf_counter() - start, time.process_time() - cpu


def cpp_pass(binary, elements, batch):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([binary, "--elements", str(elements), "--batch", str(batch),
                          "--passes", "1"], capture_output=True, text=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    fields = dict(kv.split("=") for kv in out.split())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return int(fields["batches"]), float(fields["best_seconds"]), cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=10_000_000)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cpp", default=os.path.join(HERE, "..", "..", "build", "bench",
                                                      "python_batch_overhead"))
    args = parser.parse_args()
    py, cpp = [], []
    for _ in range(args.rounds):
        py.append(python_pass(args.elements, args.batch))
        cpp.append(cpp_pass(args.cpp, args.elements, args.batch))
    batches = py[0][0]
    py_wall = min(r[1] for r in py) / batches * 1e6
    py_cpu = min(r[2] for r in py) / batches * 1e6
    cpp_wall = min(r[1] for r in cpp) / batches * 1e6
    # The C++ process's CPU includes its start-up; small against a 10M-element pass.
    cpp_cpu = min(r[2] for r in cpp) / batches * 1e6
    print(f"{'':24s} {'wall us/batch':>14s} {'cpu us/batch':>13s}")
    print(f"{'C++':24s} {cpp_wall:14.2f} {cpp_cpu:13.2f}")
    print(f"{'Python':24s} {py_wall:14.2f} {py_cpu:13.2f}")
    print(f"batches={batches} cpp_us_per_batch={cpp_wall:.2f} python_us_per_batch={py_wall:.2f} "
          f"overhead_us_per_batch={py_wall - cpp_wall:.2f} "
          f"cpu_overhead_us_per_batch={py_cpu - cpp_cpu:.2f}")


if __name__ == "__main__":
    main()
