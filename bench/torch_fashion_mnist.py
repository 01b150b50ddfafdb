"""PyTorch reference for kiln's Fashion-MNIST training throughput.

Trains the classic Fashion-MNIST network (the one examples/fashion_mnist.lua
trains: conv 5x5x32 pad 2, max-pool 2, ReLU, conv 5x5x64 pad 2, max-pool 2,
ReLU, dense 1024, ReLU, dense 10) with SGD (momentum 0.9, nesterov) at batch 64
on the real training images, and prints the median training throughput
(samples/s) over several timed windows, plus the time of one evaluation pass
over the test set.

Run it with the same threads as kiln, and without the OpenBLAS variables
the environment may set (they slow PyTorch down):
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 bench/torch_fashion_mnist.py --threads 2
--device cuda:0 runs it on a GPU (eager mode, the data held on the GPU);
--data names another folder of the Fashion-MNIST files; --autocast bf16
(or f16) runs the forward and the loss under torch.autocast with that dtype,
as kiln's precision = "bf16" does.
"""
import argparse
import gzip
import statistics
import time

import numpy as np
import torch
from torch import nn

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def network():
    return nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2), nn.MaxPool2d(2), nn.ReLU(),
        nn.Conv2d(32, 64, 5, padding=2), nn.MaxPool2d(2), nn.ReLU(),
        nn.Flatten(), nn.Linear(3136, 1024), nn.ReLU(), nn.Linear(1024, 10))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=60, help="steps per timed window")
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--device", default="cpu", help="cpu or cuda:N")
    parser.add_argument("--data", default=DATA, help="folder of the Fashion-MNIST files")
    parser.add_argument("--autocast", choices=["f32", "bf16", "f16"], default="f32",
                        help="forward and loss under torch.autocast in this dtype (f32: off)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    device = torch.device(args.device)

    def synchronize():
        # GPU work is queued: a window ends when the GPU has done its steps.
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    images = torch.from_numpy(read_idx(f"{args.data}/train-images-idx3-ubyte.gz").copy()).float().div_(255)
    images = images.sub_(0.2860).div_(0.3530).unsqueeze(1).to(device)
    labels = torch.from_numpy(read_idx(f"{args.data}/train-labels-idx1-ubyte.gz").astype(np.int64)).to(device)
    test_images = torch.from_numpy(read_idx(f"{args.data}/t10k-images-idx3-ubyte.gz").copy()).float().div_(255)
    test_images = test_images.sub_(0.2860).div_(0.3530).unsqueeze(1).to(device)

    model = network().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    loss_fn = nn.CrossEntropyLoss()
    low = {"bf16": torch.bfloat16, "f16": torch.float16}.get(args.autocast)
    order = torch.randperm(images.shape[0], device=device)
    position = 0

    def step():
        nonlocal position
        idx = order[position:position + args.batch]
        position = (position + args.batch) % (images.shape[0] - args.batch)
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=low, enabled=low is not None):
            loss = loss_fn(model(images[idx]), labels[idx])
        loss.backward()
        opt.step()

    for _ in range(5):  # warm-up
        step()
    rates = []
    for _ in range(args.windows):
        synchronize()
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        synchronize()
        rates.append(args.steps * args.batch / (time.perf_counter() - start))
    model.eval()
    start = time.perf_counter()
    with torch.no_grad():
        for i in range(0, test_images.shape[0], 1000):
            model(test_images[i:i + 1000])
    synchronize()
    eval_seconds = time.perf_counter() - start
    print(f"torch {torch.__version__} on {args.device}, {args.autocast}, threads {args.threads}: "
          f"train {statistics.median(rates):.1f} samples/s "
          f"(median of {args.windows} windows of {args.steps} steps, batch {args.batch}; "
          f"min {min(rates):.1f}, max {max(rates):.1f}); eval of 10000 test images {eval_seconds:.2f} s")


if __name__ == "__main__":
    main()
