"""PyTorch DistributedDataParallel reference for kiln's data-parallel scaling.

Trains the Fashion-MNIST network of bench/torch_fashion_mnist.py (the one
examples/fashion_mnist.lua trains) with SGD (momentum 0.9, Nesterov, weight
decay 5e-4) on the real training images, batch --batch per rank, under DDP
with the Gloo backend, and rank 0 prints the job's median samples/s and the
median step time over several timed windows after a warm-up. Started with
the environment torchrun gives (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT),
or alone as one process without DDP:

  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE torchrun --nproc-per-node 2 \\
      bench/torch_ddp_fashion_mnist.py --threads 1
"""
import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist
from torch import nn

from torch_fashion_mnist import DATA, network, read_idx


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=40, help="steps per timed window")
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64, help="per rank")
    parser.add_argument("--data", default=DATA)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1:
        dist.init_process_group("gloo")

    images = torch.from_numpy(read_idx(f"{args.data}/train-images-idx3-ubyte.gz").copy()).float().div_(255)
    images = images.sub_(0.2860).div_(0.3530).unsqueeze(1)
    labels = torch.from_numpy(read_idx(f"{args.data}/train-labels-idx1-ubyte.gz").astype("int64"))
    # This rank's shard, as DistributedSampler takes it: every world-th image.
    images, labels = images[rank::world].contiguous(), labels[rank::world].contiguous()

    model = network()
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    loss_fn = nn.CrossEntropyLoss()
    order = torch.randperm(images.shape[0])
    position = 0

    def step():
        nonlocal position
        idx = order[position:position + args.batch]
        position = (position + args.batch) % (images.shape[0] - args.batch)
        opt.zero_grad(set_to_none=True)
        loss_fn(model(images[idx]), labels[idx]).backward()
        opt.step()

    for _ in range(5):  # warm-up
        step()
    rates, step_ms = [], []
    for _ in range(args.windows):
        if world > 1:
            dist.barrier()
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        seconds = time.perf_counter() - start
        rates.append(args.steps * args.batch * world / seconds)
        step_ms.append(1000 * seconds / args.steps)
    if rank == 0:
        print(f"torch {torch.__version__} DDP (gloo), {world} rank{'s' if world > 1 else ''}, threads {args.threads}: "
              f"train {statistics.median(rates):.1f} samples/s (median of {args.windows} windows of {args.steps} "
              f"steps, batch {args.batch} per rank; min {min(rates):.1f}, max {max(rates):.1f}); "
              f"step {statistics.median(step_ms):.2f} ms")
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
