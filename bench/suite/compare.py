"""kiln against PyTorch on the CPU, side by side: the models of
bench/suite/models.lua and models.py trained on the same synthetic batches,
then kiln's input pipeline alone and the cost of one tiny op call.

  python3 bench/suite/compare.py [--rounds 5] [--steps 20] [--warmup 5] [--threads 2]
                                 [--torch /tmp/kiln-torch-venv/bin/python] [--models mlp,resnet18]
                                 [--precisions f32,bf16]

Each round runs every model in kiln (bench/suite/kiln_train.lua under
`kiln run --threads N`) and then in PyTorch (bench/suite/torch_train.py,
torch.set_num_threads(N)), each in a process of its own, so that a change in
the machine's load falls on both alike. The Markdown table gives, over the
rounds, the median, min and max rate of each (samples/s; tokens/s for the
transformer), kiln's median over PyTorch's, the peak RSS of each process (the
largest of the rounds, from os.wait4), kiln's achieved GFLOP/s and its share
of the peak the training report measures, and the parameters of each (equal
when both build the same network). With --precisions naming more than f32,
each model also runs in each precision given (bf16: kiln.fit's autocast and
torch.autocast("cpu", dtype=torch.bfloat16)), one row each. Before it, with PyTorch, the suite checks
that kiln's TransformerBlock and PyTorch's encoder layer compute the same
(bench/suite/check_transformer_block.py). PyTorch runs without OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE, which slow it down; without --torch (default: the virtual
environment bench/make-torch-venv makes, when it exists) only kiln runs.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = ["fashion_cnn", "small_cnn", "mlp", "char_transformer", "char_lstm", "separable_cnn", "resnet18"]
KILN_LINE = re.compile(r"kiln \w+: ([0-9.]+) (\w+)/s, ([0-9.]+) GFLOP/s, peak ([0-9.]+) GFLOP/s, (\d+) parameters")
TORCH_LINE = re.compile(r"torch \w+: ([0-9.]+) (\w+)/s, (\d+) parameters")
NS_LINE = re.compile(r"^(.*): ([0-9.]+) ns per call", re.M)
PIPELINE_LINE = re.compile(r"input pipeline, (\d+) workers: ([0-9.]+) batches/s \(min ([0-9.]+), max ([0-9.]+)")


def run(command, env=None):
    """(output, peak RSS in MiB) of a command, or (None, 0) with its output shown when it failed."""
    with tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, text=True, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        text = output.read()
    if process.returncode != 0:
        sys.stderr.write(f"failed ({process.returncode}): {' '.join(command)}\n{text}\n")
        return None, 0
    return text, usage.ru_maxrss / 1024  # Linux counts ru_maxrss in KiB


def measure(command, pattern, env=None):
    """The fields the pattern finds in a command's output, and its peak RSS; None when it failed."""
    text, rss = run(command, env)
    match = pattern.search(text) if text else None
    if text is not None and not match:
        sys.stderr.write(f"no result in the output of {' '.join(command)}:\n{text}\n")
    return (match.groups(), rss) if match else None


def spread(values, ran=True):
    """Median, min and max as three cells; "failed" when runs gave nothing, "-" when none ran."""
    if not values:
        return "failed | | " if ran else "- | - | -"
    return f"{statistics.median(values):.1f} | {min(values):.1f} | {max(values):.1f}"


def model_table(args, kiln, torch):
    rows = [(name, precision) for name in args.models for precision in args.precisions]
    results = {row: {"kiln": [], "torch": []} for row in rows}
    for round_number in range(1, args.rounds + 1):
        for name, precision in rows:
            results[name, precision]["kiln"].append(
                measure(kiln + [name, str(args.steps), str(args.warmup), precision], KILN_LINE))
            if torch:
                results[name, precision]["torch"].append(
                    measure(torch + [name, "--precision", precision], TORCH_LINE, torch_env()))
        print(f"round {round_number} of {args.rounds} done", file=sys.stderr, flush=True)

    print(f"\n{args.threads} threads, {args.steps} timed steps after {args.warmup} warm-up steps, "
          f"{args.rounds} rounds\n")
    print("| model | precision | unit | kiln median | min | max | PyTorch median | min | max | kiln/PyTorch "
          "| kiln RSS MiB | PyTorch RSS MiB | kiln GFLOP/s | of peak | parameters kiln / PyTorch |")
    print("|---" * 15 + "|")
    for name, precision in rows:
        kiln_runs = [r for r in results[name, precision]["kiln"] if r]
        torch_runs = [r for r in results[name, precision]["torch"] if r]
        kiln_rates = [float(fields[0]) for fields, _ in kiln_runs]
        torch_rates = [float(fields[0]) for fields, _ in torch_runs]
        unit = (kiln_runs or torch_runs or [(("", "samples"), 0)])[0][0][1]
        ratio = f"{statistics.median(kiln_rates) / statistics.median(torch_rates):.2f}" \
            if kiln_rates and torch_rates else "-"
        rss = [f"{max(r for _, r in runs):.0f}" if runs else "-" for runs in (kiln_runs, torch_runs)]
        gflops = statistics.median(float(fields[2]) for fields, _ in kiln_runs) if kiln_runs else 0
        peak = float(kiln_runs[0][0][3]) if kiln_runs else 0
        share = f"{100 * gflops / peak:.1f}%" if peak else "-"
        parameters = " / ".join(runs[0][0][-1] if runs else "-" for runs in (kiln_runs, torch_runs))
        rates = f"{spread(kiln_rates)} | {spread(torch_rates, torch is not None)}"
        print(f"| {name} | {precision} | {unit} | {rates} | {ratio} | {rss[0]} | {rss[1]} | {gflops:.2f} | {share} "
              f"| {parameters} |")


def torch_env():
    return {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}


def kiln_python_env(build):
    env = torch_env()
    env["KILN_LIBRARY"] = os.path.join(build, "lib", "libkiln.so")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(ROOT, "bindings", "python"),
                                                      env.get("PYTHONPATH")]))
    return env


def pipeline_table(args, python):
    text, _ = run([python, os.path.join(HERE, "input_pipeline.py"), "--batches", str(args.batches)],
                  kiln_python_env(args.build))
    print("\n| input pipeline (Fashion-MNIST, batch 64, normalise + crop + flip) | batches/s median | min | max |")
    print("|---|---|---|---|")
    rows = PIPELINE_LINE.findall(text or "")
    for workers, median, low, high in rows:
        print(f"| {workers} workers | {median} | {low} | {high} |")
    if not rows:
        print("| failed (see above) | | | |")


def overhead_table(args, python, torch_python):
    calls = str(args.calls)
    commands = [([os.path.join(args.build, "bench", "kiln_call_overhead"), calls], None),
                ([os.path.join(args.build, "bin", "kiln"), "run", "--threads", "1",
                  os.path.join(HERE, "call_overhead.lua"), calls], None),
                ([python, os.path.join(HERE, "call_overhead.py"), "kiln", calls], kiln_python_env(args.build))]
    if torch_python:
        commands.append(([torch_python, os.path.join(HERE, "call_overhead.py"), "torch", calls], torch_env()))
    print("\n| add of two 1-element tensors, from | ns of CPU time per call |")
    print("|---|---|")
    for command, env in commands:
        text, _ = run(command, env)
        rows = NS_LINE.findall(text or "")
        for caller, ns in rows:
            print(f"| {caller} | {ns} |")
        if not rows:
            print(f"| {' '.join(os.path.basename(part) for part in command[:3])} | failed (see above) |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20, help="timed steps of each run")
    parser.add_argument("--warmup", type=int, default=5, help="steps before the timed ones")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated, of: " + ", ".join(MODELS))
    parser.add_argument("--precisions", default="f32", help="comma-separated, of: f32, bf16")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="kiln's build folder")
    default_torch = "/tmp/kiln-torch-venv/bin/python"
    parser.add_argument("--torch", default=default_torch if os.path.exists(default_torch) else None,
                        help="a Python with torch and NumPy (default: bench/make-torch-venv's, when it exists)")
    parser.add_argument("--python", default=None,
                        help="a Python with NumPy for kiln's package (default: --torch's, else this one)")
    parser.add_argument("--batches", type=int, default=200, help="batches per timed pass of the input pipeline")
    parser.add_argument("--calls", type=int, default=200000, help="calls per timed run of the tiny op")
    args = parser.parse_args()
    args.models = [m for m in args.models.split(",") if m]
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        parser.error(f"unknown models {', '.join(unknown)}; the models: {', '.join(MODELS)}")
    args.precisions = [p for p in args.precisions.split(",") if p]
    if not args.precisions or any(p not in ("f32", "bf16") for p in args.precisions):
        parser.error(f"--precisions takes f32 and bf16, got '{','.join(args.precisions)}'")
    python = args.python or args.torch or sys.executable

    kiln = [os.path.join(args.build, "bin", "kiln"), "run", "--threads", str(args.threads),
            os.path.join(HERE, "kiln_train.lua")]
    torch = [args.torch, os.path.join(HERE, "torch_train.py"), "--threads", str(args.threads),
             "--steps", str(args.steps), "--warmup", str(args.warmup)] if args.torch else None
    if args.torch:
        text, _ = run([args.torch, os.path.join(HERE, "check_transformer_block.py")], kiln_python_env(args.build))
        print(text.strip() if text else "TransformerBlock against nn.TransformerEncoderLayer: failed (above)")
    model_table(args, kiln, torch)
    pipeline_table(args, python)
    overhead_table(args, python, args.torch)


if __name__ == "__main__":
    main()
