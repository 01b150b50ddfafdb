"""Fashion-MNIST training throughput in f32 against bf16 autocast, side by side.

Runs bench/fashion_mnist_train.lua (kiln) in f32 and with precision "bf16",
and, when --torch names a Python with torch, bench/torch_fashion_mnist.py
without and with torch.autocast("cpu", dtype=torch.bfloat16), in interleaved
rounds (each round runs every configuration once, in turn, so that a change
in the machine's load falls on all of them alike), then prints each round's
samples/s and the medians as a Markdown table for bench/RESULTS.md:

  python3 bench/autocast_fashion_mnist.py --rounds 3 --threads 2 [--torch /tmp/torchenv/bin/python]

PyTorch runs without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, which slow it down.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RATE = re.compile(r"train ([0-9.]+) samples/s")


def run(command, env=None):
    """The samples/s a benchmark printed, or None (with its output shown) when it failed."""
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    match = RATE.search(result.stdout)
    if result.returncode != 0 or not match:
        sys.stderr.write(f"failed ({result.returncode}): {' '.join(command)}\n{result.stdout}{result.stderr}\n")
        return None
    print(result.stdout.strip(), flush=True)
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=60, help="steps per timed window")
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build"), help="kiln's build folder")
    parser.add_argument("--torch", help="a Python with torch, to run PyTorch's side too")
    args = parser.parse_args()

    kiln = [os.path.join(args.build, "bin", "kiln"), "run", "--threads", str(args.threads),
            os.path.join(HERE, "fashion_mnist_train.lua"), str(args.steps), str(args.windows), "64", "cpu", ""]
    configurations = [("kiln f32", kiln + ["f32"], None), ("kiln bf16", kiln + ["bf16"], None)]
    if args.torch:
        env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
        torch = [args.torch, os.path.join(HERE, "torch_fashion_mnist.py"), "--threads", str(args.threads),
                 "--steps", str(args.steps), "--windows", str(args.windows)]
        configurations += [("torch f32", torch + ["--autocast", "f32"], env),
                           ("torch bf16", torch + ["--autocast", "bf16"], env)]

    rates = {name: [] for name, _, _ in configurations}
    for _ in range(args.rounds):
        for name, command, env in configurations:
            rates[name].append(run(command, env))

    names = [name for name, _, _ in configurations]
    print()
    print("| round | " + " | ".join(names) + " | kiln bf16 / f32 |" + (" torch bf16 / f32 |" if args.torch else ""))
    print("|---" * (len(names) + 2 + (1 if args.torch else 0)) + "|")

    def ratio(low, full):
        return f"{low / full:.2f}" if low and full else "-"

    def row(label, values):
        cells = [f"{values[name]:.1f}" if values[name] else "failed" for name in names]
        extra = [ratio(values["kiln bf16"], values["kiln f32"])]
        if args.torch:
            extra.append(ratio(values["torch bf16"], values["torch f32"]))
        print(f"| {label} | " + " | ".join(cells + extra) + " |")

    for i in range(args.rounds):
        row(str(i + 1), {name: rates[name][i] for name in names})
    medians = {name: statistics.median([r for r in rates[name] if r]) if any(rates[name]) else None for name in names}
    row("median", medians)


if __name__ == "__main__":
    main()
