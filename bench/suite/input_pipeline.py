"""Batches/s of kiln's input pipeline alone: the Fashion-MNIST training images
from Debian's IDX files (dataset-fashion-mnist), batch 64, shuffled, each image
scaled to [0, 1], normalised, randomly cropped (padding 2) and mirrored, as
examples/fashion_mnist_setup.lua augments them; with 0, 1 and 2 workers. Each
rate is the median of three passes of `--batches` batches after one warm-up
pass, in wall-clock time (the workers are threads of the process).

  python bench/suite/input_pipeline.py [--batches 200] [--data FOLDER]

kiln's package finds libkiln.so through KILN_LIBRARY (bench/suite/compare.py sets it).
"""
import argparse
import itertools
import statistics
import time

import kiln

DATA = "/usr/share/datasets/fashion-mnist"


def loader(folder, workers):
    source = kiln.DataSource("idx", images=f"{folder}/train-images-idx3-ubyte.gz",
                             labels=f"{folder}/train-labels-idx1-ubyte.gz", limit=0)
    transforms = [kiln.Transform("to_float", scale=1 / 255),
                  kiln.Transform("normalize", mean=[0.2860], std=[0.3530]),
                  kiln.Transform("random_crop", size=[28], padding=2),
                  kiln.Transform("random_hflip")]
    return kiln.Loader(source, transforms, batch_size=64, shuffle=True, seed=1, num_workers=workers)


def endless(batches):
    """The loader's batches, epoch after epoch."""
    for epoch in itertools.count():
        yield from batches.epoch(epoch)


def batches_per_second(batches, count):
    start = time.perf_counter()
    taken = sum(1 for _ in itertools.islice(batches, count))
    return taken / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=200, help="batches per timed pass")
    parser.add_argument("--data", default=DATA, help="folder of the Fashion-MNIST files")
    args = parser.parse_args()
    for workers in (0, 1, 2):
        batches = endless(loader(args.data, workers))
        batches_per_second(batches, args.batches)
        rates = [batches_per_second(batches, args.batches) for _ in range(3)]
        print(f"input pipeline, {workers} workers: {statistics.median(rates):.1f} batches/s "
              f"(min {min(rates):.1f}, max {max(rates):.1f}; {args.batches} batches of 64)")


if __name__ == "__main__":
    main()
