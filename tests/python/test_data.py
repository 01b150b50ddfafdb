"""Examples, data sources (from NumPy arrays and .npy files), transforms and loaders."""
import os
import tempfile
import unittest

import numpy as np

import kiln
import support

INPUTS = np.arange(20, dtype=np.float32).reshape(10, 2)
TARGETS = np.arange(10, dtype=np.int64)


def tensors_source(**config):
    return kiln.DataSource("tensors", input=INPUTS, target=TARGETS, **config)


class Examples(unittest.TestCase):
    def test_fields_by_name_and_in_order(self):
        example = kiln.Example({"input": np.ones(3, np.float32), "target": kiln.tensor(2)})
        self.assertEqual(len(example), 2)
        self.assertEqual(example.keys(), ["input", "target"])
        self.assertEqual(list(example), ["input", "target"])
        self.assertEqual(example["target"].item(), 2)
        example["input"] = np.zeros(2, np.float32)  # replaces the field
        self.assertEqual(example.to_dict()["input"].tolist(), [0.0, 0.0])

    def test_errors(self):
        example = kiln.Example({"input": np.ones(1, np.float32)})
        with self.assertRaisesRegex(kiln.NotFound, "the example has no field 'label' \\(it has 'input'\\)"):
            example["label"]
        with self.assertRaisesRegex(kiln.InvalidArgument, "a field name must not be empty"):
            example[""] = np.ones(1, np.float32)


class Sources(unittest.TestCase):
    def test_tensors_source_from_arrays(self):
        source = tensors_source()
        self.assertEqual(len(source), 10)
        example = source[3]
        self.assertEqual(set(example), {"input", "target"})
        self.assertEqual(example["input"].tolist(), [6.0, 7.0])
        self.assertEqual(example["target"].item(), 3)
        self.assertEqual(source[-1]["target"].item(), 9)
        self.assertEqual([e["target"].item() for e in source][:3], [0, 1, 2])
        with self.assertRaisesRegex(IndexError, "example 10 of a source of 10"):
            source[10]

    def test_the_source_copies_its_arrays(self):
        inputs = INPUTS.copy()
        source = kiln.DataSource("tensors", input=inputs)
        inputs[0, 0] = 100.0
        self.assertEqual(source[0]["input"].tolist(), [0.0, 1.0])
        self.assertEqual(list(source[0]), ["input"])

    def test_npy_source(self):
        with tempfile.TemporaryDirectory() as folder:
            np.save(os.path.join(folder, "x.npy"), INPUTS)
            np.save(os.path.join(folder, "y.npy"), TARGETS)
            source = kiln.DataSource("npy", inputs=os.path.join(folder, "x.npy"),
                                     targets=os.path.join(folder, "y.npy"))
            self.assertEqual(len(source), 10)
            self.assertEqual(source[4]["input"].tolist(), [8.0, 9.0])
            np.save(os.path.join(folder, "short.npy"), TARGETS[:4])
            with self.assertRaisesRegex(kiln.ShapeMismatch, "hold 10 examples, targets .*short.npy' hold 4"):
                kiln.DataSource("npy", inputs=os.path.join(folder, "x.npy"), targets=os.path.join(folder, "short.npy"))

    def test_mismatched_arrays(self):
        with self.assertRaisesRegex(kiln.ShapeMismatch,
                                    "'input' holds 10 examples \\(dimension 0\\), 'target' holds 3"):
            kiln.DataSource("tensors", input=INPUTS, target=TARGETS[:3])
        with self.assertRaisesRegex(kiln.NotFound, "unknown data source 'parquet'"):
            kiln.DataSource("parquet")


class Transforms(unittest.TestCase):
    def test_normalize_and_one_hot(self):
        example = {"input": np.array([1.0, 3.0], np.float32), "target": np.array(2, np.int64)}
        normalized = kiln.Transform("normalize", mean=[1.0], std=[2.0])(example)
        self.assertEqual(normalized["input"].tolist(), [0.0, 1.0])
        self.assertEqual(example["input"].tolist(), [1.0, 3.0])  # the dict's arrays are not changed
        one_hot = kiln.Transform("one_hot", num_classes=4).apply(example, seed=0)
        self.assertEqual(one_hot["target"].tolist(), [0.0, 0.0, 1.0, 0.0])

    def test_random_transforms_depend_on_the_seed_only(self):
        flip = kiln.Transform("random_hflip", p=0.5)
        image = {"input": np.arange(4, dtype=np.float32).reshape(1, 1, 4)}
        results = {seed: tuple(flip(image, seed)["input"].numpy().ravel()) for seed in range(16)}
        self.assertEqual({results[s] for s in range(16)}, {(0.0, 1.0, 2.0, 3.0), (3.0, 2.0, 1.0, 0.0)})
        self.assertEqual(results, {seed: tuple(flip(image, seed)["input"].numpy().ravel()) for seed in range(16)})

    def test_an_example_is_transformed_in_place(self):
        example = kiln.Example({"input": np.array([2.0], np.float32)})
        kiln.Transform("to_float", scale=0.5)(example)
        self.assertEqual(example["input"].tolist(), [1.0])


class Loaders(unittest.TestCase):
    def test_batches_of_an_epoch(self):
        loader = kiln.Loader(tensors_source(), batch_size=4)
        self.assertEqual((len(loader), loader.num_examples), (3, 10))
        batches = list(loader)
        self.assertEqual([b["input"].shape for b in batches], [(4, 2), (4, 2), (2, 2)])
        self.assertEqual(batches[0]["target"].tolist(), [0, 1, 2, 3])
        self.assertEqual(loader.stats().batches, 3)

    def test_drop_last_shards_and_workers(self):
        loader = kiln.Loader(tensors_source(), batch_size=4, drop_last=True, rank=1, world_size=2, num_workers=2,
                             prefetch=2)
        self.assertEqual((len(loader), loader.num_examples), (1, 5))
        (batch,) = list(loader)
        self.assertEqual(batch["target"].tolist(), [1, 3, 5, 7])
        stats = loader.stats()
        self.assertLessEqual(stats.max_ready, 2)
        self.assertGreaterEqual(stats.total_wait_seconds, stats.last_wait_seconds)
        self.assertEqual(stats.device_wait_seconds, 0.0)  # no copies to a GPU

    def test_shuffled_epochs_are_seeded(self):
        def orders(seed):
            loader = kiln.Loader(tensors_source(), batch_size=10, shuffle=True, seed=seed)
            return [next(iter(loader))["target"].tolist() for _ in range(2)]

        first = orders(3)
        self.assertEqual(first, orders(3))
        self.assertNotEqual(first[0], first[1])  # a new order every epoch
        self.assertEqual(sorted(first[0]), list(range(10)))

    def test_epochs_and_resuming_inside_one(self):
        loader = kiln.Loader(tensors_source(), batch_size=3, shuffle=True, seed=1)
        whole = [b["target"].tolist() for b in loader.epoch(5)]
        resumed = [b["target"].tolist() for b in loader.epoch(5, first_batch=2)]
        self.assertEqual(resumed, whole[2:])
        loader.start_epoch(5)
        self.assertEqual(loader.next()["target"].tolist(), whole[0])
        while loader.next() is not None:
            pass
        self.assertIsNone(loader.next())
        with self.assertRaisesRegex(kiln.InvalidArgument, r"first batch is 99; an epoch of this loader has 4 "
                                                          r"batch\(es\)"):
            loader.start_epoch(0, first_batch=99)

    def test_transforms_run_on_each_example(self):
        loader = kiln.Loader(tensors_source(), [kiln.Transform("one_hot", num_classes=10)], batch_size=2)
        batch = next(iter(loader))
        np.testing.assert_array_equal(batch["target"].numpy(), np.eye(10, dtype=np.float32)[:2])

    def test_bad_options(self):
        with self.assertRaisesRegex(kiln.InvalidArgument, "batch_size is 0; expected > 0"):
            kiln.Loader(tensors_source(), batch_size=0)
        with self.assertRaisesRegex(kiln.InvalidArgument, "unknown device 'disk'"):
            kiln.Loader(tensors_source(), batch_size=1, device="disk")
        with self.assertRaisesRegex(kiln.InvalidArgument, "the loader's source must be a kiln.DataSource, got ndarray"):
            kiln.Loader(INPUTS, batch_size=1)
        with self.assertRaisesRegex(kiln.InvalidArgument, "a loader transform must be a kiln.Transform, got str"):
            kiln.Loader(tensors_source(), ["normalize"], batch_size=1)

    def test_a_failing_transform_names_the_example(self):
        loader = kiln.Loader(kiln.DataSource("tensors", input=np.zeros((3, 2), np.uint8)),
                             [kiln.Transform("normalize", mean=[0.0], std=[1.0])], batch_size=1)
        with self.assertRaisesRegex(kiln.DTypeMismatch, r"example 0 \(epoch 0\): transform 'normalize'"):
            list(loader)


if __name__ == "__main__":
    support.main()
