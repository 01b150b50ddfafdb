"""The profiler from Python: kiln.profile around a training step gives the
table and a Chrome trace whose events are well formed and nested; profiles
do not nest; a failed trace write raises IOFailure and leaves the path."""
import os
import tempfile
import threading
import unittest

import numpy as np

import kiln
import support
import trace_check
from kiln import functional as F


def train_step(model, opt, inputs, targets):
    opt.zero_grad()
    loss = F.cross_entropy(model(inputs), targets)
    loss.backward()
    opt.step()


class Profile(unittest.TestCase):
    def setUp(self):
        kiln.manual_seed(0)
        self.model = kiln.Sequential(kiln.layer("Linear", in_features=2, out_features=8), kiln.layer("ReLU"),
                                     kiln.layer("Linear", in_features=8, out_features=2))
        self.opt = kiln.Optimizer("SGD", self.model.parameters(), lr=0.1)
        inputs, targets = support.blobs(16)
        self.inputs, self.targets = kiln.from_numpy(inputs), kiln.from_numpy(targets)

    def test_the_table_of_a_training_step(self):
        with kiln.profile() as prof:
            train_step(self.model, self.opt, self.inputs, self.targets)
        table = prof.table()
        self.assertRegex(table, r"^op +phase +calls +total ms +self ms +mean µs +% total\n")
        self.assertRegex(table, r"\nlinear +forward +2 ")
        self.assertRegex(table, r"\nlinear backward +backward +2 ")
        self.assertLess(table.index("\nlinear "), table.index("\nlinear backward "))
        self.assertRegex(table, r"\nforward [0-9.]+ ms, backward [0-9.]+ ms \(self time of [0-9]+ profiled calls\)\n$")

    def test_the_trace_is_well_formed_and_nested(self):
        with kiln.profile() as prof:
            train_step(self.model, self.opt, self.inputs, self.targets)
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "step.json")
            prof.write_trace(path)
            events = trace_check.check_training_step(path)
        linear = [e for e in events if e["name"] == "linear"]
        self.assertEqual(linear[0]["args"]["input_shapes"], [[16, 2], [8, 2], [8]])
        self.assertEqual({e["pid"] for e in events}, {os.getpid()})

    def test_ops_from_other_threads_are_recorded(self):
        a = kiln.ones(4)
        def work():
            for _ in range(50):
                a + a
        with kiln.profile() as prof:
            threads = [threading.Thread(target=work) for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        self.assertRegex(prof.table(), r"\nadd +forward +150 ")

    def test_profiles_do_not_nest_and_end_on_errors(self):
        with self.assertRaisesRegex(kiln.InvalidState, "already on"):
            with kiln.profile():
                with kiln.profile():
                    pass
        with self.assertRaises(ZeroDivisionError):
            with kiln.profile():
                1 / 0
        with kiln.profile() as prof:
            kiln.ones(2) * 3
        self.assertRegex(prof.table(), r"\nmul_scalar +forward +1 ")
        self.assertNotRegex(prof.table(), r"\n\S+ backward +backward ")

    def test_reading_a_profile_that_is_on_is_refused(self):
        with kiln.profile() as prof:
            with self.assertRaisesRegex(kiln.InvalidState, "still on"):
                prof.table()

    def test_a_failed_trace_write_leaves_the_path(self):
        with kiln.profile() as prof:
            kiln.ones(2) + 1
        with tempfile.TemporaryDirectory() as directory:
            with self.assertRaisesRegex(kiln.IOFailure, "cannot save"):
                prof.write_trace(directory)
            self.assertTrue(os.path.isdir(directory))
            self.assertEqual(os.listdir(directory), [])


if __name__ == "__main__":
    support.main()
