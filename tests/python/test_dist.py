"""kiln.dist: outside a job (rank 0 of 1, groups of one rank, mistakes),
and jobs of two ranks on loopback, each rank a Python process running
dist_rank.py: every collective, data-parallel training, and a peer that is
killed."""
import datetime
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

import numpy as np

import kiln
import support

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dist_rank.py")
JOB_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                 "KILN_DIST_TIMEOUT")
DTYPES = (kiln.float32, kiln.float64, kiln.int64)


def outside_a_job(**variables):
    """The environment without a job's variables, plus `variables`."""
    patch = mock.patch.dict(os.environ, {k: str(v) for k, v in variables.items()})
    patch.start()
    for name in JOB_VARIABLES:
        if name not in variables:
            os.environ.pop(name, None)
    return patch


class OutsideAJob(unittest.TestCase):
    def setUp(self):
        self.addCleanup(outside_a_job().stop)
        self.rt = kiln.Runtime(num_threads=1)

    def test_rank_zero_of_one(self):
        self.assertFalse(kiln.dist.in_job())
        self.assertEqual((kiln.dist.rank(), kiln.dist.world_size()), (0, 1))
        with mock.patch.dict(os.environ, {"RANK": "0", "WORLD_SIZE": ""}):
            self.assertFalse(kiln.dist.in_job())  # an empty variable is not set, as kiln reads it

    def test_the_jobs_variables_are_checked(self):
        with mock.patch.dict(os.environ, {"RANK": "3", "WORLD_SIZE": "4"}):
            self.assertTrue(kiln.dist.in_job())
            self.assertEqual((kiln.dist.rank(), kiln.dist.world_size()), (3, 4))  # nothing is connected
        for rank, world, words in (("2", "2", "RANK must be a whole number in [0, 1], got '2'"),
                                   ("0", "two", "WORLD_SIZE must be a whole number in [1, 1048576], got 'two'")):
            with mock.patch.dict(os.environ, {"RANK": rank, "WORLD_SIZE": world}):
                with self.assertRaises(kiln.InvalidArgument) as caught:
                    kiln.dist.rank()
                self.assertIn(words, str(caught.exception))
                with self.assertRaises(kiln.InvalidArgument) as caught:  # kiln says the same
                    kiln.dist.default_group(self.rt)
                self.assertIn(words, str(caught.exception))

    def test_no_default_group_outside_a_job(self):
        for make in (lambda: kiln.dist.default_group(self.rt), lambda: kiln.ProcessGroup(runtime=self.rt),
                     lambda: kiln.dist.all_reduce(kiln.zeros(1, runtime=self.rt)),
                     lambda: kiln.Strategy("ddp", runtime=self.rt)):
            with self.assertRaises(kiln.InvalidArgument) as caught:
                make()
            self.assertIn("WORLD_SIZE is not set", str(caught.exception))
            self.assertIn("kiln launch", str(caught.exception))

    def test_a_group_of_one_rank_is_the_identity(self):
        with kiln.ProcessGroup(rank=0, world_size=1, name="solo", runtime=self.rt) as g:
            self.assertEqual((g.rank(), g.world_size(), g.backend()), (0, 1, "gloo"))
            self.assertIn("rank 0 of 1", repr(g))
            for dtype in DTYPES:
                with self.subTest(dtype=dtype):
                    self.check_identity(g, dtype)
            g.barrier()
            with g.barrier(async_op=True) as work:
                work.wait()
                self.assertTrue(work.done())
            self.assertIn("closed", repr(work))

    def check_identity(self, g, dtype):
        values = np.array([1, -2, 3], dtype=kiln.dtypes.to_numpy(dtype))
        ops = ["sum", "max", "min"] + (["mean"] if dtype != kiln.int64 else [])
        for op in ops + [kiln.dist.ReduceOp.SUM]:
            array = values.copy()
            g.all_reduce(kiln.from_numpy(array), op)
            np.testing.assert_array_equal(array, values, err_msg=f"all_reduce {op}")
        array = values.copy()
        with g.all_reduce(kiln.from_numpy(array), "sum", async_op=True) as work:
            work.wait()
            self.assertTrue(work.done())
        np.testing.assert_array_equal(array, values)
        t = kiln.tensor(values)
        g.broadcast(t, root=0)
        np.testing.assert_array_equal(t.numpy(), values)
        out = kiln.zeros(3, dtype=dtype, runtime=self.rt)
        g.all_gather(t, out)
        np.testing.assert_array_equal(out.numpy(), values)
        out = kiln.zeros(3, dtype=dtype, runtime=self.rt)
        g.reduce_scatter(t, out, "max")
        np.testing.assert_array_equal(out.numpy(), values)

    def test_module_functions_on_a_group_given(self):
        g = kiln.ProcessGroup(rank=0, world_size=1, runtime=self.rt)
        t = kiln.tensor([1.5, 2.5], runtime=self.rt)
        kiln.dist.all_reduce(t, "mean", group=g)
        kiln.dist.broadcast(t, 0, group=g)
        out = kiln.zeros(2, runtime=self.rt)
        kiln.dist.all_gather(t, out, group=g)
        kiln.dist.barrier(group=g)
        np.testing.assert_array_equal(out.numpy(), [1.5, 2.5])
        with self.assertRaises(kiln.InvalidArgument):
            kiln.dist.barrier(group="default")

    def test_bad_options_raise_with_kilns_message(self):
        cases = [
            (dict(rank=3, world_size=2), "rank 3 of 2 ranks"),
            (dict(rank=-1, world_size=2), "rank -1 of 2 ranks"),
            (dict(rank=0, world_size=1, backend="mpi"), "unknown process group backend 'mpi'"),
            (dict(rank=0, world_size=1, timeout=-1), "timeout_seconds must be positive, got -1"),
            (dict(rank=0, world_size=1, timeout=0), "timeout_seconds must be positive, got 0"),
            (dict(rank=0, world_size=1, master_port=70000), "master_port must be 1 to 65535, got 70000"),
            (dict(rank=0, world_size=1, master_port=0), "master_port must be 1 to 65535, got 0"),
            (dict(rank=1), "rank (1) and world_size (None) are given together"),
            (dict(rank=0, world_size=0), "world_size must be at least 1, got 0"),
            (dict(rank="0", world_size=1), "rank must be an integer, got '0'"),
            (dict(rank=0, world_size=1, timeout="5"), "timeout is in seconds"),
        ]
        for options, words in cases:
            with self.subTest(options=options), self.assertRaises(kiln.InvalidArgument) as caught:
                kiln.ProcessGroup(runtime=self.rt, **options)
            self.assertIn(words, str(caught.exception))
        with mock.patch.dict(os.environ, {"MASTER_PORT": "http"}), self.assertRaises(kiln.InvalidArgument) as caught:
            kiln.ProcessGroup(rank=0, world_size=1, runtime=self.rt)
        self.assertIn("the environment variable MASTER_PORT must be a whole number", str(caught.exception))

    def test_bad_operations_raise(self):
        g = kiln.ProcessGroup(rank=0, world_size=1, timeout=datetime.timedelta(seconds=30), runtime=self.rt)
        t = kiln.zeros(2, runtime=self.rt)
        cases = [
            (kiln.InvalidArgument, "unknown reduce op 'product'", lambda: g.all_reduce(t, "product")),
            (kiln.InvalidArgument, "unknown reduce op 'SUM'", lambda: g.all_reduce(t, "SUM")),
            (kiln.DTypeMismatch, "only floating dtypes average",
             lambda: g.all_reduce(kiln.zeros(2, dtype=kiln.int32, runtime=self.rt), "mean")),
            (kiln.InvalidArgument, "root 1 is not a rank of the group", lambda: g.broadcast(t, root=1)),
            (kiln.InvalidArgument, "destination 0 is not another rank", lambda: g.send(t, 0)),
            (kiln.InvalidArgument, "source 1 is not another rank", lambda: g.recv(t, 1)),
            (kiln.InvalidArgument, "all_reduce: tensor must be a kiln.Tensor", lambda: g.all_reduce(np.zeros(2))),
            (kiln.InvalidArgument, "broadcast: root must be an integer", lambda: g.broadcast(t, root=0.5)),
            (kiln.ShapeMismatch, "1 (ranks) x 2 (input's) elements", lambda: g.all_gather(t, kiln.zeros(3))),
            (kiln.DTypeMismatch, "reduce_scatter: input is f32 but output is f64",
             lambda: g.reduce_scatter(t, kiln.zeros(2, dtype=kiln.float64))),
        ]
        for cls, words, call in cases:
            with self.subTest(words=words), self.assertRaises(cls) as caught:
                call()
            self.assertIn(words, str(caught.exception))
        g.barrier()  # mistakes found before anything runs leave the group working

    def test_ddp_in_a_job_of_one(self):
        with mock.patch.dict(os.environ, {"RANK": "0", "WORLD_SIZE": "1"}):
            self.assertTrue(kiln.dist.in_job())
            self.assertEqual((kiln.dist.rank(), kiln.dist.world_size()), (0, 1))
            with self.assertRaises(kiln.InvalidArgument) as caught:
                kiln.Strategy("ddp", bucket_mb=0, runtime=self.rt)
            self.assertIn("bucket_mb must be positive", str(caught.exception))
            strategy = kiln.Strategy("ddp", bucket_mb=25, runtime=self.rt)
            self.assertEqual((strategy.rank, strategy.world_size), (0, 1))
            inputs, targets = support.blobs(64)
            source = kiln.DataSource("tensors", input=inputs, target=targets, runtime=self.rt)
            loader = kiln.Loader(source, batch_size=16, shuffle=True, seed=1)
            model = kiln.Sequential(kiln.layer("Linear", in_features=2, out_features=2, runtime=self.rt),
                                    runtime=self.rt)
            optimizer = kiln.Optimizer("SGD", model, lr=0.1)
            steps = []
            kiln.Trainer(model, optimizer, loader, strategy=strategy, epochs=1, progress="quiet",
                         on_step=steps.append).run()
            self.assertEqual(len(steps), 4)

    def test_zero1_in_a_job_of_one(self):
        with mock.patch.dict(os.environ, {"RANK": "0", "WORLD_SIZE": "1"}):
            with self.assertRaises(kiln.InvalidArgument) as caught:
                kiln.Strategy("zero1", bucket_mb=-1, runtime=self.rt)
            self.assertIn("zero1: bucket_mb must be positive", str(caught.exception))
            strategy = kiln.Strategy("zero1", runtime=self.rt)
            model = kiln.Sequential(kiln.layer("Linear", in_features=2, out_features=2, runtime=self.rt),
                                    runtime=self.rt)
            weight = model.parameters()["0.weight"]
            self.assertEqual(strategy.state_owner(weight), -1)  # nothing shared out before attach
            strategy.attach(model)
            self.assertEqual(strategy.state_owner(weight), 0)
            with self.assertRaises(kiln.InvalidArgument) as caught:
                strategy.state_owner(np.zeros(2))
            self.assertIn("param must be a kiln.Tensor", str(caught.exception))
            with self.assertRaises(kiln.InvalidArgument) as caught:
                strategy.optimizer_step(model)
            self.assertIn("optimizer must be a kiln.Optimizer", str(caught.exception))
            optimizer = kiln.Optimizer("SGD", model, lr=0.5)
            before = weight.numpy().copy()
            kiln.F.cross_entropy(model(kiln.tensor([[1.0, 2.0]], runtime=self.rt)),
                                 kiln.tensor([1], dtype=kiln.int64, runtime=self.rt)).backward()
            gradient = weight.grad.numpy()
            strategy.optimizer_step(optimizer)
            np.testing.assert_allclose(weight.numpy(), before - 0.5 * gradient, rtol=1e-6)


class Gradients(unittest.TestCase):
    def test_set_grad(self):
        rt = kiln.Runtime(num_threads=1)
        p = kiln.tensor([1.0, 2.0], requires_grad=True, runtime=rt)
        self.assertIsNone(p.grad)
        p.grad = [0.5, 0.25]
        np.testing.assert_array_equal(p.grad.numpy(), [0.5, 0.25])
        source = np.array([3.0, 4.0], np.float32)
        p.set_grad(source)
        source[:] = 0  # the gradient is a copy
        np.testing.assert_array_equal(p.grad.numpy(), [3.0, 4.0])
        p.grad = None
        self.assertIsNone(p.grad)
        (p * p).sum().backward()  # backward starts from no gradient
        np.testing.assert_array_equal(p.grad.numpy(), [2.0, 4.0])
        with self.assertRaises(kiln.ShapeMismatch) as caught:
            p.grad = [1.0, 2.0, 3.0]
        self.assertIn("shape, dtype and device must match", str(caught.exception))
        with self.assertRaises(kiln.InvalidState) as caught:
            (p * 2).grad = [1.0, 1.0]
        self.assertIn("only a leaf that requires grad", str(caught.exception))

    def test_single_strategy_attach_and_backward_begin(self):
        rt = kiln.Runtime(num_threads=1)
        model = kiln.Sequential(kiln.layer("Linear", in_features=2, out_features=2, runtime=rt), runtime=rt)
        strategy = kiln.Strategy("single", runtime=rt)
        strategy.attach(model)
        strategy.backward_begin(sync=False)
        strategy.backward_begin(sync=True)
        strategy.reduce_gradients(model)
        with self.assertRaises(kiln.InvalidArgument):
            strategy.attach(model.parameters())


def free_port():
    """A port nothing listens on now, on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TwoRanks(unittest.TestCase):
    """Jobs of two Python processes, each running dist_rank.py MODE FOLDER."""

    TIMEOUT = 60  # seconds for a whole job: far more than it takes; a hang fails instead of stalling CTest

    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.folder = folder.name

    def run_job(self, mode):
        """Starts the ranks, waits for both; [(return code, output)] per rank."""
        port = str(free_port())
        ranks = []
        for rank in range(2):
            env = {k: v for k, v in os.environ.items() if k not in JOB_VARIABLES}
            env.update(RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=port, KILN_DIST_TIMEOUT="30")
            log = open(os.path.join(self.folder, f"rank{rank}.log"), "w+")
            self.addCleanup(log.close)
            ranks.append((subprocess.Popen([sys.executable, HELPER, mode, self.folder], env=env, stdout=log,
                                           stderr=subprocess.STDOUT), log))
        deadline = time.monotonic() + self.TIMEOUT
        try:
            for process, _ in ranks:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for process, _ in ranks:
                process.kill()
                process.wait()
            self.fail(f"the '{mode}' job ran past {self.TIMEOUT} s:\n{self.outputs(ranks)}")
        return [process.returncode for process, _ in ranks], self.outputs(ranks)

    @staticmethod
    def outputs(ranks):
        text = []
        for rank, (_, log) in enumerate(ranks):
            log.seek(0)
            text.append(f"---- rank {rank}\n{log.read()}")
        return "\n".join(text)

    def load(self, name, rank):
        with np.load(os.path.join(self.folder, f"{name}_{rank}.npz")) as f:
            return {k: f[k] for k in f.files}

    def test_collectives(self):
        codes, output = self.run_job("collectives")
        self.assertEqual(codes, [0, 0], output)
        for rank in range(2):
            self.assertIn(f"rank {rank}: collectives passed", output)

    def test_ddp_ranks_end_with_the_same_parameters(self):
        codes, output = self.run_job("ddp")
        self.assertEqual(codes, [0, 0], output)
        for name in ("trainer", "host"):
            initial = [self.load(f"{name}_initial", r) for r in range(2)]
            final = [self.load(name, r) for r in range(2)]
            self.assertEqual(sorted(final[0]), sorted(final[1]))
            # Other seeds: the ranks start apart, and ddp makes them agree.
            self.assertTrue(any(not np.array_equal(initial[0][k], initial[1][k]) for k in initial[0]), name)
            for k in final[0]:
                np.testing.assert_array_equal(final[0][k], final[1][k], err_msg=f"{name}: {k}")
                self.assertFalse(np.array_equal(final[0][k], initial[0][k]), f"{name}: {k} never moved")
        for rank in range(2):
            with open(os.path.join(self.folder, f"losses_{rank}.json")) as f:
                losses = json.load(f)
            self.assertEqual(len(losses), 16)  # 8 batches of this rank's 128 examples, 2 epochs
            self.assertLess(np.mean(losses[-4:]), 0.5 * np.mean(losses[:4]))

    def test_zero1_shards_the_state_and_the_ranks_agree(self):
        codes, output = self.run_job("zero1")
        self.assertEqual(codes, [0, 0], output)
        for name in ("zero1_trainer", "zero1_host"):
            initial = [self.load(f"{name}_initial", r) for r in range(2)]
            final = [self.load(name, r) for r in range(2)]
            self.assertTrue(any(not np.array_equal(initial[0][k], initial[1][k]) for k in initial[0]), name)
            for k in final[0]:
                np.testing.assert_array_equal(final[0][k], final[1][k], err_msg=f"{name}: {k}")
                self.assertFalse(np.array_equal(final[0][k], initial[0][k]), f"{name}: {k} never moved")
        reports = []
        for rank in range(2):
            with open(os.path.join(self.folder, f"zero1_state_{rank}.json")) as f:
                reports.append(json.load(f))
        owners, sizes = reports[0]["owners"], reports[0]["sizes"]
        self.assertEqual(owners, reports[1]["owners"])
        self.assertEqual(sorted(set(owners)), [0, 1])
        for rank, report in enumerate(reports):
            # AdamW keeps two moments of each parameter this rank owns, and of no other.
            owned = sum(n for n, owner in zip(sizes, owners) if owner == rank)
            self.assertEqual(report["moment_elements"], 2 * owned)
            self.assertLess(np.mean(report["losses"][-4:]), 0.5 * np.mean(report["losses"][:4]))

    def test_a_killed_peer_fails_the_survivor(self):
        start = time.monotonic()
        codes, output = self.run_job("killed")
        self.assertEqual(codes, [0, -signal.SIGKILL], output)
        with open(os.path.join(self.folder, "survivor.json")) as f:
            report = json.load(f)
        self.assertIn("error", report, output)
        self.assertIn("rank 1 left the job", report["error"])
        self.assertIn("all_reduce", report["error"])
        self.assertLess(report["seconds"], 5, report)  # within the group's timeout
        self.assertIn("rank 1", report.get("then", ""))
        self.assertLess(time.monotonic() - start, 20, output)


if __name__ == "__main__":
    support.main()
