"""The trainer's TensorBoard event file read back by the tensorboard
package's own reader (EventAccumulator): every step's and evaluation's
scalars, at their steps, with the values the callbacks saw.

Needs tensorboard (the interpreter is KILN_REFERENCE_PYTHON); skipped with
the reason when it cannot be imported."""
import os
import tempfile
import unittest

import support

support.require("numpy", "tensorboard")

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

import kiln  # noqa: E402

STEP_TAGS = {"train/loss", "train/lr", "train/grad_norm", "train/samples_per_second", "train/step_seconds",
             "train/input_wait_seconds", "train/flops_per_second", "train/flop_utilisation",
             "time/forward_seconds", "time/backward_seconds", "time/optimizer_seconds", "time/other_seconds",
             "memory/peak_cpu_bytes"}


class TensorBoard(unittest.TestCase):
    def test_the_tensorboard_reader_reads_the_scalars(self):
        rt = kiln.Runtime(seed=3, num_threads=1)
        inputs, targets = support.blobs(96)
        source = kiln.DataSource("tensors", input=inputs, target=targets, runtime=rt)
        model = kiln.layer("Linear", in_features=2, out_features=2, runtime=rt)
        optimizer = kiln.Optimizer("SGD", model, lr=0.2)
        steps, evals = [], []
        with tempfile.TemporaryDirectory() as folder:
            run = os.path.join(folder, "exp1")
            trainer = kiln.Trainer(model, optimizer, kiln.Loader(source, batch_size=16, shuffle=True, seed=1),
                                   validation=kiln.Loader(source, batch_size=96), epochs=2, progress="quiet",
                                   tensorboard_dir=run, on_step=steps.append, on_eval=evals.append)
            trainer.run()
            trainer.close()
            names = os.listdir(run)
            self.assertEqual(len(names), 1)
            self.assertTrue(names[0].startswith("events.out.tfevents."))
            events = EventAccumulator(run)
            events.Reload()
            tags = set(events.Tags()["scalars"])

        self.assertEqual(tags, STEP_TAGS | {"eval/loss", "eval/accuracy"})
        loss = events.Scalars("train/loss")
        self.assertEqual([e.step for e in loss], [m.step for m in steps])
        for read, seen in zip(loss, steps):
            self.assertAlmostEqual(read.value, seen.loss, places=5)
        for read, seen in zip(events.Scalars("train/lr"), steps):
            self.assertAlmostEqual(read.value, seen.lr, places=6)
        for read, seen in zip(events.Scalars("time/forward_seconds"), steps):
            self.assertAlmostEqual(read.value, seen.forward_seconds, delta=1e-6 * seen.forward_seconds)
        for read, seen in zip(events.Scalars("train/flops_per_second"), steps):
            self.assertGreater(seen.flops, 0.0)
            self.assertAlmostEqual(read.value, seen.flops / seen.step_seconds, delta=1e-6 * read.value)
        accuracy = events.Scalars("eval/accuracy")
        self.assertEqual([e.step for e in accuracy], [6, 12])
        for read, seen in zip(accuracy, evals):
            self.assertAlmostEqual(read.value, seen.accuracy, places=6)
        self.assertLess(loss[-1].value, loss[0].value)


if __name__ == "__main__":
    support.main()
