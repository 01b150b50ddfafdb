"""One rank of the jobs that test_dist.py starts: `dist_rank.py MODE FOLDER`
with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT in the environment. The
groups it makes beside the default group meet at the same port (the job's
groups share its store).

collectives: every collective on a group of its own and on the default
  group, blocking and asynchronous, on f32, f64 and i64 tensors over NumPy
  arrays, checked against what the ranks' values make.
ddp: a Trainer with Strategy("ddp"), then a loop driven by hand (attach,
  backward_begin, reduce_gradients) with gradient accumulation; each writes
  its initial and final parameters to FOLDER/<name>_<rank>.npz.
zero1: the same with Strategy("zero1") and AdamW (the loop by hand calls
  optimizer_step); also writes each parameter's owner and the elements of
  the optimizer state each rank keeps to FOLDER/zero1_state_<rank>.json.
killed: rank 1 kills itself after the first all-reduce; rank 0 writes what
  its next operations raised to FOLDER/survivor.json.

A rank that finds something wrong raises: it exits non-zero with a traceback.
"""
import json
import os
import signal
import sys
import time

import numpy as np

import kiln
import support

DTYPES = (np.float32, np.float64, np.int64)


def expect(array, values, what):
    values = np.asarray(values, dtype=array.dtype)
    assert np.array_equal(array, values), f"{what}: got {array.tolist()}, expected {values.tolist()}"


def expect_error(cls, words, function):
    try:
        function()
    except cls as e:
        for word in words:
            assert word in str(e), f"{cls.__name__} '{e}' does not say '{word}'"
        return
    raise AssertionError(f"expected {cls.__name__} saying {words}")


def on_group(g, rank, dtype):
    """Every operation of `g` on tensors over arrays of `dtype`: the arrays see the results."""
    other, name = 1 - rank, np.dtype(dtype).name

    def array(values):
        return np.array(values, dtype=dtype)

    a = array([1, 2, 3]) * (rank + 1)
    g.all_reduce(kiln.from_numpy(a))
    expect(a, [3, 6, 9], f"{name} all_reduce sum")
    a = array([rank, 10 - rank])
    g.all_reduce(kiln.from_numpy(a), "max")
    expect(a, [1, 10], f"{name} all_reduce max")
    a = array([rank, 10 - rank])
    g.all_reduce(kiln.from_numpy(a), kiln.dist.ReduceOp.MIN)
    expect(a, [0, 9], f"{name} all_reduce min")
    a = array([rank * 2, 4])
    if np.issubdtype(dtype, np.floating):
        g.all_reduce(kiln.from_numpy(a), "mean")
        expect(a, [1, 4], f"{name} all_reduce mean")
    else:
        expect_error(kiln.DTypeMismatch, ["only floating dtypes average"],
                     lambda: g.all_reduce(kiln.from_numpy(a), "mean"))

    a = array([rank, rank, rank])
    g.broadcast(kiln.from_numpy(a), root=1)
    expect(a, [1, 1, 1], f"{name} broadcast from rank 1")

    gathered = np.zeros(4, dtype)
    g.all_gather(kiln.from_numpy(array([rank, rank + 10])), kiln.from_numpy(gathered))
    expect(gathered, [0, 10, 1, 11], f"{name} all_gather")
    part = kiln.zeros(2, dtype=dtype)
    g.reduce_scatter(kiln.from_numpy(array([1, 2, 3, 4]) * (rank + 1)), part, "sum")
    expect(part.numpy(), [3, 6] if rank == 0 else [9, 12], f"{name} reduce_scatter")

    # Point to point both ways, both started before either is waited for.
    incoming = np.zeros(2, dtype)
    received = g.recv(kiln.from_numpy(incoming), src=other, tag=5, async_op=True)
    sent = g.send(kiln.from_numpy(array([rank + 100] * 2)), dst=other, tag=5, async_op=True)
    sent.wait()
    received.wait()
    assert received.done() and sent.done()
    expect(incoming, [100 + other] * 2, f"{name} send/recv")
    received.close()
    sent.close()

    # Asynchronous collectives overlap; each is waited for on its own.
    x, y = array([rank + 1]), array([rank + 1])
    with g.all_reduce(kiln.from_numpy(x), "sum", async_op=True) as wx, \
            g.all_reduce(kiln.from_numpy(y), "min", async_op=True) as wy:
        wy.wait()
        wx.wait()
        assert wx.done() and wy.done()
    expect(x, [3], f"{name} async sum")
    expect(y, [1], f"{name} async min")
    g.barrier()


def the_work_keeps_its_tensors(g, rank):
    """A Work owns its tensors and group: the caller may drop or close theirs at once."""
    a = np.full(100_000, rank + 1.0, np.float32)
    work = g.all_reduce(kiln.from_numpy(a), async_op=True)  # the Tensor object is gone at once
    work.wait()
    del work
    expect(a, np.full(100_000, 3.0), "all_reduce of a dropped Tensor")

    b = np.full(1000, rank + 1.0, np.float64)
    t = kiln.from_numpy(b)
    work = g.all_reduce(t, async_op=True)
    t.close()
    work.wait()
    work.close()
    expect(b, np.full(1000, 3.0), "all_reduce of a closed Tensor")

    short = kiln.ProcessGroup(timeout=20, name="short-lived")
    c = np.array([rank + 1], np.int64)
    work = short.all_reduce(kiln.from_numpy(c), async_op=True)
    short.close()  # the Work keeps the group until it is closed
    work.wait()
    work.close()
    expect(c, [3], "all_reduce on a closed group")


def on_default_group(rank):
    dist = kiln.dist
    t = kiln.tensor([1.0, 2.0, 3.0]) * (rank + 1)
    dist.all_reduce(t)
    expect(t.numpy(), [3, 6, 9], "dist.all_reduce")
    b = kiln.tensor([rank, rank])
    dist.broadcast(b, root=0)
    expect(b.numpy(), [0, 0], "dist.broadcast")
    gathered = kiln.zeros(2, dtype=kiln.int64)
    dist.all_gather([rank * 7], gathered)  # numbers take the output's dtype
    expect(gathered.numpy(), [0, 7], "dist.all_gather")
    part = kiln.zeros(1)
    dist.reduce_scatter(np.array([1.0, 2.0], np.float32), part, "max")
    expect(part.numpy(), [1.0 + rank], "dist.reduce_scatter")
    box = kiln.zeros(3, dtype=kiln.float64)
    if rank == 0:
        dist.send(np.array([4.0, 5.0, 6.0]), dst=1, tag=2)
    else:
        dist.recv(box, src=0, tag=2)
        expect(box.numpy(), [4, 5, 6], "dist.send/recv")
    dist.barrier()
    work = dist.barrier(async_op=True)
    work.wait()
    assert work.done()
    group = kiln.dist.default_group()
    assert (group.rank(), group.world_size(), group.backend()) == (rank, 2, "gloo"), repr(group)


def mistakes(g, rank):
    expect_error(kiln.InvalidArgument, ["is not another rank of the group"], lambda: g.send(kiln.zeros(1), rank))
    expect_error(kiln.InvalidArgument, ["root 5 is not a rank of the group"], lambda: g.broadcast(kiln.zeros(1), 5))
    expect_error(kiln.InvalidArgument, ["'product'"], lambda: g.all_reduce(kiln.zeros(1), "product"))
    expect_error(kiln.ShapeMismatch, ["all_gather", "2 (ranks) x 3"],
                 lambda: g.all_gather(kiln.zeros(3), kiln.zeros(5)))
    expect_error(kiln.InvalidArgument, ["must be a kiln.Tensor"], lambda: g.all_reduce(np.zeros(2)))
    g.barrier()  # none of these broke the group


def collectives(rank, folder):
    dist = kiln.dist
    assert dist.in_job() and (dist.rank(), dist.world_size()) == (rank, 2), (dist.rank(), dist.world_size())
    g = kiln.ProcessGroup(timeout=20, name="python-test")
    assert (g.rank(), g.world_size(), g.backend()) == (rank, 2, "gloo"), repr(g)
    for dtype in DTYPES:
        on_group(g, rank, dtype)
    the_work_keeps_its_tensors(g, rank)
    on_default_group(rank)
    mistakes(g, rank)
    print(f"rank {rank}: collectives passed")


def mlp(rt):
    return kiln.Sequential(kiln.layer("Linear", in_features=2, out_features=16, runtime=rt),
                           kiln.layer("ReLU", runtime=rt),
                           kiln.layer("Linear", in_features=16, out_features=2, runtime=rt), runtime=rt)


def save(folder, name, rank, model):
    np.savez(os.path.join(folder, f"{name}_{rank}.npz"), **{k: p.numpy() for k, p in model.parameters().items()})


def ddp(rank, folder):
    rt = kiln.Runtime(seed=100 + rank, num_threads=1)  # different initial weights: ddp broadcasts rank 0's
    inputs, targets = support.blobs(256)
    source = kiln.DataSource("tensors", input=inputs, target=targets, runtime=rt)
    train = kiln.Loader(source, batch_size=16, shuffle=True, seed=3, rank=rank, world_size=2)
    assert train.num_examples == 128, train.num_examples

    model = mlp(rt)
    save(folder, "trainer_initial", rank, model)
    strategy = kiln.Strategy("ddp", bucket_mb=25, runtime=rt)
    assert (strategy.rank, strategy.world_size) == (rank, 2)
    losses = []
    optimizer = kiln.Optimizer("SGD", model, lr=0.1, momentum=0.9)
    with kiln.Trainer(model, optimizer, train, strategy=strategy, epochs=2, progress="quiet",
                      on_step=lambda m: losses.append(m.loss)) as trainer:
        trainer.run()
    save(folder, "trainer", rank, model)
    with open(os.path.join(folder, f"losses_{rank}.json"), "w") as f:
        json.dump(losses, f)

    # The same by hand, a bucket per parameter, two micro-batches per step.
    model = mlp(rt)
    save(folder, "host_initial", rank, model)
    optimizer = kiln.Optimizer("SGD", model, lr=0.1)
    strategy = kiln.Strategy("ddp", bucket_mb=0.0001, runtime=rt)
    strategy.attach(model)
    for i, batch in enumerate(train):
        sync = i % 2 == 1
        strategy.backward_begin(sync)
        loss = kiln.F.cross_entropy(model(batch["input"]), batch["target"])
        loss.backward()
        if sync:
            strategy.reduce_gradients(model)
            optimizer.step()
            optimizer.zero_grad()
    save(folder, "host", rank, model)
    print(f"rank {rank}: ddp trained (loss {losses[0]:.3f} -> {losses[-1]:.3f})")


def moment_elements(optimizer):
    return sum(t.numel() for name, t in optimizer.state_dict().items() if not name.endswith("step"))


def zero1(rank, folder):
    rt = kiln.Runtime(seed=100 + rank, num_threads=1)  # different initial weights: zero1 broadcasts rank 0's
    inputs, targets = support.blobs(256)
    source = kiln.DataSource("tensors", input=inputs, target=targets, runtime=rt)
    train = kiln.Loader(source, batch_size=16, shuffle=True, seed=3, rank=rank, world_size=2)

    model = mlp(rt)
    save(folder, "zero1_trainer_initial", rank, model)
    strategy = kiln.Strategy("zero1", runtime=rt)
    optimizer = kiln.Optimizer("AdamW", model, lr=0.02)
    losses = []
    with kiln.Trainer(model, optimizer, train, strategy=strategy, epochs=2, progress="quiet",
                      on_step=lambda m: losses.append(m.loss)) as trainer:
        trainer.run()
    save(folder, "zero1_trainer", rank, model)
    report = {"owners": [strategy.state_owner(p) for p in model.parameters().values()],
              "sizes": [p.numel() for p in model.parameters().values()],
              "moment_elements": moment_elements(optimizer), "losses": losses}
    with open(os.path.join(folder, f"zero1_state_{rank}.json"), "w") as f:
        json.dump(report, f)

    # The same by hand, two micro-batches per step.
    model = mlp(rt)
    save(folder, "zero1_host_initial", rank, model)
    optimizer = kiln.Optimizer("AdamW", model, lr=0.02)
    strategy = kiln.Strategy("zero1", bucket_mb=0.0001, runtime=rt)
    strategy.attach(model)
    for i, batch in enumerate(train):
        sync = i % 2 == 1
        strategy.backward_begin(sync)
        loss = kiln.F.cross_entropy(model(batch["input"]), batch["target"])
        loss.backward()
        if sync:
            strategy.reduce_gradients(model)
            strategy.optimizer_step(optimizer)
            optimizer.zero_grad()
    save(folder, "zero1_host", rank, model)
    print(f"rank {rank}: zero1 trained (loss {losses[0]:.3f} -> {losses[-1]:.3f})")


def killed(rank, folder):
    g = kiln.ProcessGroup(timeout=5, name="doomed")
    t = kiln.ones(1000)
    g.all_reduce(t)
    if rank == 1:
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    start = time.monotonic()
    report = {}
    try:
        g.all_reduce(t, async_op=True).wait()
    except kiln.PeerFailure as e:
        report["error"] = str(e)
    report["seconds"] = time.monotonic() - start
    try:
        g.barrier()  # the group is broken: the first error again, at once
    except kiln.PeerFailure as e:
        report["then"] = str(e)
    with open(os.path.join(folder, "survivor.json"), "w") as f:
        json.dump(report, f)
    print(f"rank {rank}: {report}")


def main():
    mode, folder = sys.argv[1], sys.argv[2]
    rank = int(os.environ["RANK"])
    kiln.set_default_runtime(kiln.Runtime(num_threads=1))
    {"collectives": collectives, "ddp": ddp, "zero1": zero1, "killed": killed}[mode](rank, folder)


if __name__ == "__main__":
    main()
