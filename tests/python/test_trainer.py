"""The trainer with Python callbacks, evaluation, and strategies."""
import json
import os
import tempfile
import traceback
import unittest

import numpy as np

import kiln
import support


def setup(n=256, batch_size=32, lr=0.1, seed=0):
    """An MLP on two blobs, SGD, a shuffled train loader and an in-order validation loader."""
    rt = kiln.Runtime(seed=seed, num_threads=1)
    inputs, targets = support.blobs(n)
    source = kiln.DataSource("tensors", input=inputs, target=targets, runtime=rt)
    train = kiln.Loader(source, batch_size=batch_size, shuffle=True, seed=1)
    validation = kiln.Loader(source, batch_size=64)
    model = kiln.Sequential(kiln.layer("Linear", in_features=2, out_features=16, runtime=rt),
                            kiln.layer("ReLU", runtime=rt),
                            kiln.layer("Linear", in_features=16, out_features=2, runtime=rt), runtime=rt)
    optimizer = kiln.Optimizer("SGD", model, lr=lr, momentum=0.9)
    return model, optimizer, train, validation


class Training(unittest.TestCase):
    def test_an_mlp_learns(self):
        model, optimizer, train, validation = setup()
        before = kiln.evaluate(model, validation)
        steps = []
        trainer = kiln.Trainer(model, optimizer, train, validation=validation, epochs=3, progress="quiet",
                               on_step=steps.append)
        trainer.run()
        after = trainer.evaluate()
        self.assertEqual([m.step for m in steps], list(range(1, 25)))
        self.assertEqual(steps[-1].epoch, 2)
        self.assertEqual(steps[0].samples, 32)
        self.assertLess(np.mean([m.loss for m in steps[-8:]]), 0.5 * np.mean([m.loss for m in steps[:8]]))
        self.assertLess(after.loss, 0.5 * before.loss)
        self.assertGreater(after.accuracy, 0.95)
        self.assertEqual((after.samples, after.step), (256, 24))
        self.assertEqual(optimizer.step_count, 24)

    def test_step_by_step(self):
        model, optimizer, train, _ = setup(n=64)
        trainer = kiln.Trainer(model, optimizer, train, max_steps=3, progress="quiet")
        metrics = [trainer.step() for _ in range(4)]
        self.assertEqual([m.step for m in metrics[:3]], [1, 2, 3])
        self.assertIsNone(metrics[3])
        self.assertAlmostEqual(metrics[0].lr, 0.1)
        self.assertGreater(metrics[0].loss, 0.0)
        # The step held the parameters (2*16+16+16*2+2 floats), their gradients and a batch of 32 x 2.
        parameter_bytes = (2 * 16 + 16 + 16 * 2 + 2) * 4
        self.assertGreaterEqual(metrics[0].peak_cpu_bytes, 2 * parameter_bytes + 32 * 2 * 4)
        self.assertEqual(metrics[0].peak_gpu_bytes, 0)

    def test_step_time_split_and_report(self):
        model, optimizer, train, _ = setup(n=64, batch_size=16)
        trainer = kiln.Trainer(model, optimizer, train, epochs=2, progress="quiet")
        self.assertIn("no step to report", trainer.report())
        steps = [trainer.step() for _ in range(8)]
        for m in steps:
            parts = (m.input_wait_seconds + m.forward_seconds + m.backward_seconds + m.communication_seconds
                     + m.optimizer_seconds + m.other_seconds)
            self.assertAlmostEqual(parts, m.step_seconds, delta=1e-9 * m.step_seconds)
            self.assertGreater(m.forward_seconds, 0.0)
            self.assertEqual(m.communication_seconds, 0.0)
        report = trainer.report()
        self.assertIn("training report: 7 steps after the first, 112 samples, on cpu, f32", report)
        for row in ("input wait", "forward", "backward", "optimizer", "samples/s", "advice"):
            self.assertIn(row, report)

    def test_trace_of_chosen_steps(self):
        model, optimizer, train, _ = setup(n=64, batch_size=16)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "trace.json")
            kiln.Trainer(model, optimizer, train, epochs=1, progress="quiet", trace_path=path,
                         trace_steps=(2, 3)).run()
            with open(path) as f:
                trace = json.load(f)
        spans = {e["name"] for e in trace["traceEvents"] if e.get("cat") == "span"}
        self.assertTrue({"step 2", "step 3", "forward", "backward", "optimizer"} <= spans)
        self.assertNotIn("step 1", spans)
        self.assertNotIn("step 4", spans)
        with self.assertRaisesRegex(kiln.InvalidArgument, "expected \\(first, last\\)"):
            kiln.Trainer(model, optimizer, train, trace_path="t.json", trace_steps=3)

    def test_schedule_accumulation_and_clipping(self):
        model, optimizer, train, _ = setup(n=64, batch_size=16)
        schedule = kiln.LRSchedule("step", step_size=1, gamma=0.5)
        steps = []
        kiln.Trainer(model, optimizer, train, schedule=schedule, epochs=1, accumulate=2, clip_grad_norm=1.0,
                     progress="quiet", on_step=steps.append).run()
        self.assertEqual([m.lr for m in steps], [0.1, 0.05])
        self.assertEqual([m.samples for m in steps], [32, 32])
        self.assertTrue(all(m.grad_norm > 0 for m in steps))

    def test_metrics_file(self):
        model, optimizer, train, validation = setup(n=64)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "metrics.jsonl")
            kiln.Trainer(model, optimizer, train, validation=validation, epochs=1, progress="quiet",
                         metrics_path=path).run()
            with open(path) as f:
                records = [json.loads(line) for line in f]
        self.assertEqual(len(records), 3)  # two steps and one evaluation
        self.assertIn("loss", records[0])

    def test_evaluate_without_a_trainer(self):
        model, _, _, validation = setup(n=64)
        metrics = kiln.evaluate(model, validation, loss="cross_entropy", input_field="input", target_field="target")
        self.assertEqual((metrics.step, metrics.epoch, metrics.samples), (0, 0, 64))
        self.assertTrue(0.0 <= metrics.accuracy <= 1.0)
        with self.assertRaisesRegex(kiln.NotFound, "'pixels'"):
            kiln.evaluate(model, validation, input_field="pixels")


class Callbacks(unittest.TestCase):
    def test_each_callback_is_called(self):
        model, optimizer, train, validation = setup(n=64)
        evals, epochs = [], []
        kiln.Trainer(model, optimizer, train, validation=validation, epochs=2, progress="quiet",
                     on_eval=evals.append, on_epoch=lambda epoch, last: epochs.append((epoch, last.step))).run()
        self.assertEqual([(m.epoch, m.step, m.samples) for m in evals], [(0, 2, 64), (1, 4, 64)])
        self.assertEqual(epochs, [(0, 2), (1, 4)])

    def test_a_truthy_result_stops_training(self):
        model, optimizer, train, _ = setup()
        seen = []
        kiln.Trainer(model, optimizer, train, epochs=5, progress="quiet",
                     on_step=lambda m: seen.append(m.step) or m.step == 3).run()
        self.assertEqual(seen, [1, 2, 3])
        self.assertEqual(optimizer.step_count, 3)

    def test_an_exception_stops_training_and_is_raised_by_run(self):
        model, optimizer, train, _ = setup()

        def on_step(metrics):
            if metrics.step == 2:
                raise ValueError(f"no more at step {metrics.step}")

        trainer = kiln.Trainer(model, optimizer, train, epochs=5, progress="quiet", on_step=on_step)
        try:
            trainer.run()
            self.fail("run() did not raise")
        except ValueError as e:
            self.assertEqual(str(e), "no more at step 2")
            # The traceback reaches into the callback; kiln's ScriptError is not chained on.
            self.assertEqual(traceback.extract_tb(e.__traceback__)[-1].name, "on_step")
            self.assertTrue(e.__suppress_context__)
        self.assertEqual(optimizer.step_count, 2)

    def test_exceptions_from_step_and_evaluate(self):
        model, optimizer, train, validation = setup(n=64)
        trainer = kiln.Trainer(model, optimizer, train, epochs=1, progress="quiet",
                               on_step=lambda m: {}["missing"], on_eval=lambda m: None)
        with self.assertRaises(KeyError):
            trainer.step()
        other = kiln.Trainer(model, optimizer, train, validation=validation, epochs=1, progress="quiet",
                             on_eval=lambda m: 1 / 0)
        with self.assertRaises(ZeroDivisionError):
            other.run()

    def test_kiln_errors_still_come_through(self):
        model, optimizer, train, _ = setup(n=64)
        trainer = kiln.Trainer(model, optimizer, train, epochs=1, progress="quiet", loss="mse_loss",
                               on_step=lambda m: None)
        with self.assertRaisesRegex(kiln.DTypeMismatch, "loss 'mse_loss': .*input 1 is i64 but input 0 is f32"):
            trainer.run()


class Options(unittest.TestCase):
    def test_bad_options(self):
        model, optimizer, train, _ = setup(n=64)
        with self.assertRaisesRegex(kiln.InvalidArgument, "options->epochs and options->max_steps are both 0"):
            kiln.Trainer(model, optimizer, train)
        with self.assertRaisesRegex(kiln.InvalidArgument, "progress is 'loud'; expected one of 'auto', 'bar', "
                                                          "'lines', 'quiet'"):
            kiln.Trainer(model, optimizer, train, epochs=1, progress="loud")
        with self.assertRaisesRegex(kiln.InvalidArgument, "cannot evaluate on the train loader"):
            kiln.Trainer(model, optimizer, train, validation=train, epochs=1, progress="quiet").run()
        with self.assertRaisesRegex(kiln.NotFound, "unknown op 'hinge'"):
            kiln.Trainer(model, optimizer, train, epochs=1, loss="hinge")
        with self.assertRaisesRegex(kiln.InvalidArgument, "optimizer must be a kiln.Optimizer, got Sequential"):
            kiln.Trainer(model, model, train, epochs=1)
        with self.assertRaisesRegex(kiln.InvalidArgument, "validation must be a kiln.Loader, got DataSource"):
            kiln.Trainer(model, optimizer, train, validation=kiln.DataSource("tensors", input=np.zeros((1, 2))),
                         epochs=1)
        with self.assertRaisesRegex(kiln.InvalidArgument, "loader must be a kiln.Loader, got list"):
            kiln.evaluate(model, [])

    def test_the_schedule_stays_open_while_the_trainer_uses_it(self):
        model, optimizer, train, _ = setup(n=64)
        schedule = kiln.LRSchedule("step", step_size=1, gamma=0.5)
        trainer = kiln.Trainer(model, optimizer, train, schedule=schedule, epochs=1, progress="quiet")
        schedule.close()
        self.assertFalse(schedule.closed)
        trainer.run()
        trainer.close()
        self.assertTrue(schedule.closed)
        with self.assertRaisesRegex(kiln.InvalidState, "this LRSchedule is closed"):
            kiln.Trainer(model, optimizer, train, schedule=schedule, epochs=1)


class Strategies(unittest.TestCase):
    def test_single_process(self):
        strategy = kiln.Strategy("single")
        self.assertEqual((strategy.rank, strategy.world_size), (0, 1))
        p = kiln.tensor([1.0, 2.0], requires_grad=True)
        (p * p).sum().backward()
        strategy.reduce_gradients([p])
        np.testing.assert_array_equal(p.grad.numpy(), [2.0, 4.0])
        with self.assertRaisesRegex(kiln.NotFound, "unknown strategy 'ring'"):
            kiln.Strategy("ring")

    def test_a_trainer_with_a_strategy(self):
        model, optimizer, train, _ = setup(n=64)
        strategy = kiln.Strategy(runtime=model.runtime)
        steps = []
        kiln.Trainer(model, optimizer, train, strategy=strategy, epochs=1, progress="quiet",
                     on_step=steps.append).run()
        self.assertEqual(len(steps), 2)


if __name__ == "__main__":
    support.main()
