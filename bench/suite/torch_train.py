"""Times training steps of one model of bench/suite/models.py on synthetic data
held in memory, and prints one line for bench/suite/compare.py:

  python bench/suite/torch_train.py <model> [--steps 20] [--warmup 5] [--threads 2] [--precision f32]

As bench/suite/kiln_train.lua does: four batches of random examples (inputs
N(0, 1), or token ids; random class targets) taken in turn, cross-entropy loss,
and the rate of the timed steps' units (samples, or tokens). With --precision
bf16 the forward and the loss run under torch.autocast("cpu", dtype=torch.bfloat16).
"""
import argparse
import contextlib
import time

import torch
from torch import nn

from models import MODELS


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--precision", choices=["f32", "bf16"], default="f32")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    spec = MODELS[args.model]

    examples = 4 * spec.batch
    if spec.vocabulary:
        inputs = torch.randint(spec.vocabulary, (examples, *spec.input))
        targets = torch.randint(spec.classes, (examples, *spec.input))
    else:
        inputs = torch.randn(examples, *spec.input)
        targets = torch.randint(spec.classes, (examples,))
    model = spec.build()
    optimizer = spec.optimizer(model.parameters())
    loss_fn = nn.CrossEntropyLoss()
    units_per_example = spec.input[0] if spec.unit == "tokens" else 1

    def autocast():
        if args.precision == "bf16":
            return torch.autocast("cpu", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def step(i):
        batch = slice((i % 4) * spec.batch, (i % 4 + 1) * spec.batch)
        optimizer.zero_grad(set_to_none=True)
        with autocast():
            loss = loss_fn(model(inputs[batch]), targets[batch])
        loss.backward()
        optimizer.step()

    for i in range(args.warmup):
        step(i)
    start = time.perf_counter()
    for i in range(args.steps):
        step(args.warmup + i)
    seconds = time.perf_counter() - start
    values = sum(p.numel() for p in model.parameters())
    print(f"torch {args.model}: {args.steps * spec.batch * units_per_example / seconds:.2f} {spec.unit}/s, "
          f"{values} parameters, {args.steps} steps, torch {torch.__version__}")


if __name__ == "__main__":
    main()
