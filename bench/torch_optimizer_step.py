"""PyTorch's side of kiln_optim_bench: the median time of one optimizer step
(AdamW, SGD with momentum 0.9) on the CPU over the same parameter lists
(ResNet-18's 62 tensors, the 784-256-10 MLP's four), with foreach=False
(one tensor at a time) and foreach=True (multi-tensor)."""
import argparse
import statistics
import time

import torch


def resnet18_shapes():
    shapes = []

    def conv_bn(out, inp, k):
        shapes.extend([(out, inp, k, k), (out,), (out,)])

    conv_bn(64, 3, 7)
    inp = 64
    for width in (64, 128, 256, 512):
        for block in range(2):
            block_in = inp if block == 0 else width
            conv_bn(width, block_in, 3)
            conv_bn(width, width, 3)
            if block_in != width:
                conv_bn(width, block_in, 1)
        inp = width
    shapes.extend([(1000, 512), (1000,)])
    return shapes


PARAM_LISTS = [("ResNet-18", resnet18_shapes()), ("MLP 784-256-10", [(256, 784), (256,), (10, 256), (10,)])]


def step_seconds(params, make, budget=1.0):
    opt = make(params)
    for _ in range(3):
        opt.step()
    start = time.perf_counter()
    opt.step()
    first = max(time.perf_counter() - start, 1e-9)
    samples = []
    for _ in range(min(200, max(5, int(budget / first)))):
        start = time.perf_counter()
        opt.step()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"PyTorch {torch.__version__} optimizer step, f32 on the CPU, {args.threads} threads (median ms per step)")
    print(f"{'parameters':34} {'foreach':>8} {'AdamW ms':>12} {'SGD mom. ms':>12}")
    for name, shapes in PARAM_LISTS:
        params = [torch.full(s, 0.01, requires_grad=True) for s in shapes]
        for p in params:
            p.grad = torch.full_like(p, 1e-3)
        for foreach in (False, True):
            adamw = step_seconds(params, lambda ps: torch.optim.AdamW(ps, lr=1e-3, weight_decay=1e-2, foreach=foreach))
            sgd = step_seconds(params, lambda ps: torch.optim.SGD(ps, lr=1e-2, momentum=0.9, foreach=foreach))
            print(f"{name:34} {str(foreach):>8} {adamw * 1e3:12.3f} {sgd * 1e3:12.3f}")


if __name__ == "__main__":
    main()
