"""The fixed cost of one op call from Python: `a + b` of two 1-element f32
tensors with grad recording off, in ns of the process's CPU time per call
(time.process_time_ns), the median of five runs after warm-up calls, through
kiln's Python package (bindings/python) and, for comparison, PyTorch's own;
as bench/call_overhead.c measures it from C.

  python bench/suite/call_overhead.py kiln|torch [calls per run]

kiln's package finds libkiln.so through KILN_LIBRARY (bench/suite/compare.py sets it).
"""
import statistics
import sys
import time


def median_ns(add, calls):
    def run(n):
        start = time.process_time_ns()
        for _ in range(n):
            add()
        return time.process_time_ns() - start

    run(calls // 10 + 1)
    return statistics.median(run(calls) / calls for _ in range(5))


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "kiln"
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
    if which == "kiln":
        import kiln as library
        import numpy as np
        a, b = library.tensor(np.ones(1, np.float32)), library.tensor(np.ones(1, np.float32))
    elif which == "torch":
        import torch as library
        library.set_num_threads(1)
        a, b = library.ones(1), library.ones(1)
    else:
        sys.exit("usage: call_overhead.py kiln|torch [calls per run]")
    with library.no_grad():
        ns = median_ns(lambda: a + b, calls)
    print(f"Python ({which}): {ns:.1f} ns per call (median of 5 runs of {calls} calls)")


if __name__ == "__main__":
    main()
