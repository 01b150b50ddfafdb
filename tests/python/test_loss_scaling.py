"""Trainer(loss_scale=...): dynamic loss scaling, on by default for f16;
each step's loss_scale and skipped; a NaN batch skipped with the scale
halved; NaN that never goes away ending the run at the minimum scale; bad
settings refused."""
import unittest

import numpy as np

import kiln
import support


def trainer(nan_batches=(), **options):
    """A Linear model on 64 blobs in order, batches of 16, with the batches
    in `nan_batches` made of NaN; the trainer and its model."""
    rt = kiln.Runtime(seed=0, num_threads=1)
    inputs, targets = support.blobs(64)
    for b in nan_batches:
        inputs[16 * b:16 * (b + 1)] = np.nan
    source = kiln.DataSource("tensors", input=inputs, target=targets, runtime=rt)
    train = kiln.Loader(source, batch_size=16)
    model = kiln.layer("Linear", in_features=2, out_features=2, runtime=rt)
    optimizer = kiln.Optimizer("SGD", model, lr=0.1)
    return kiln.Trainer(model, optimizer, train, progress="quiet", **{"epochs": 1, **options}), model


def steps_of(t):
    steps = []
    while (m := t.step()) is not None:
        steps.append(m)
    return steps


class LossScaling(unittest.TestCase):
    def test_on_by_default_for_f16(self):
        t, model = trainer(precision="f16", epochs=5)
        steps = steps_of(t)
        # From 2^16; a step whose f16 gradients overflow there is skipped and backs it off.
        self.assertEqual(steps[0].loss_scale, 65536.0)
        self.assertTrue(all(m.loss_scale <= 65536.0 and m.skipped in (0, 1) for m in steps))
        self.assertLess(steps[-1].loss, 0.7 * steps[0].loss)
        self.assertTrue(all(p.dtype == kiln.float32 for p in model.parameters().values()))
        self.assertEqual(steps_of(trainer(precision="f16", loss_scale=False)[0])[0].loss_scale, 1.0)
        self.assertEqual(steps_of(trainer()[0])[0].loss_scale, 1.0)
        self.assertEqual(steps_of(trainer(loss_scale=True)[0])[0].loss_scale, 65536.0)

    def test_settings_and_growth(self):
        steps = steps_of(trainer(loss_scale={"init": 8, "growth": 4, "interval": 2})[0])
        self.assertEqual([m.loss_scale for m in steps], [8.0, 8.0, 32.0, 32.0])

    def test_a_nan_batch_is_skipped(self):
        steps = steps_of(trainer(nan_batches=[1], loss_scale={"init": 1024})[0])
        self.assertEqual([m.skipped for m in steps], [0, 1, 0, 0])
        self.assertEqual([m.loss_scale for m in steps], [1024.0, 1024.0, 512.0, 512.0])

    def test_nan_that_stays_stops_at_the_minimum(self):
        t, _ = trainer(nan_batches=range(4), loss_scale={"init": 4, "min": 2})
        with self.assertRaisesRegex(kiln.InvalidState, "step 2 hold inf or NaN at the minimum loss scale 2"):
            t.run()

    def test_bad_settings(self):
        with self.assertRaisesRegex(kiln.InvalidArgument, "unknown setting.*'inti'"):
            trainer(loss_scale={"inti": 4})
        with self.assertRaisesRegex(kiln.InvalidArgument, "loss_scale is 'yes'"):
            trainer(loss_scale="yes")
        with self.assertRaisesRegex(kiln.InvalidArgument, "options->loss_scale_growth is 1"):
            trainer(loss_scale={"growth": 1})


if __name__ == "__main__":
    unittest.main()
