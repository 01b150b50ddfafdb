"""Checkpoints: safetensors files of named tensors, model weights, and full
training states that resume a run exactly."""
import os
import tempfile
import unittest

import numpy as np

import kiln
import support


def mlp(rt):
    return kiln.Sequential(kiln.layer("Linear", in_features=2, out_features=8, runtime=rt),
                           kiln.layer("ReLU", runtime=rt),
                           kiln.layer("Linear", in_features=8, out_features=2, runtime=rt), runtime=rt)


class Folder(unittest.TestCase):
    def setUp(self):
        self._folder = tempfile.TemporaryDirectory()
        self.folder = self._folder.name

    def tearDown(self):
        self._folder.cleanup()

    def file(self, name):
        return os.path.join(self.folder, name)


class Safetensors(Folder):
    def test_round_trip_keeps_names_order_dtypes_and_values(self):
        tensors = {
            "weights": np.arange(6, dtype=np.float32).reshape(2, 3),
            "scale": np.array(2.5, np.float64),
            "counts": np.array([1, 2, 3], np.int64),
            "mask": np.array([True, False]),
            "pixels": np.array([0, 255], np.uint8),
            "half": np.array([0.5, -1.0], np.float16),
        }
        kiln.save_safetensors(tensors, self.file("t.safetensors"))
        loaded = kiln.load_safetensors(self.file("t.safetensors"))
        self.assertEqual(list(loaded), list(tensors))
        for name, array in tensors.items():
            self.assertEqual(loaded[name].device, "cpu")
            self.assertEqual(loaded[name].numpy().dtype, array.dtype, name)
            np.testing.assert_array_equal(loaded[name].numpy(), array)

    def test_bf16_and_an_example(self):
        example = kiln.Example({"b": kiln.tensor([1.5, -2.0], dtype=kiln.bfloat16)})
        kiln.save_safetensors(example, self.file("b.safetensors"))
        loaded = kiln.load_safetensors(self.file("b.safetensors"))["b"]
        self.assertEqual(loaded.dtype, kiln.bfloat16)
        self.assertEqual(loaded.to(kiln.float32).tolist(), [1.5, -2.0])

    def test_bad_files(self):
        with self.assertRaisesRegex(kiln.IOFailure, "cannot load '.*missing.safetensors': No such file"):
            kiln.load_safetensors(self.file("missing.safetensors"))
        with open(self.file("short.safetensors"), "wb") as f:
            f.write(b"\x05\x00")
        with self.assertRaisesRegex(kiln.IOFailure, "the file is truncated: 2 bytes, less than the 8 bytes of the "
                                                    "header length"):
            kiln.load_safetensors(self.file("short.safetensors"))
        with open(self.file("huge.safetensors"), "wb") as f:
            f.write((1 << 40).to_bytes(8, "little") + b"{}")
        with self.assertRaisesRegex(kiln.IOFailure, "the header length 1099511627776 is above the limit"):
            kiln.load_safetensors(self.file("huge.safetensors"))

    def test_saving_into_a_missing_folder(self):
        with self.assertRaisesRegex(kiln.IOFailure, "cannot save '.*x.safetensors'"):
            kiln.save_safetensors({"x": np.zeros(1, np.float32)}, self.file("no/such/folder/x.safetensors"))


class Weights(Folder):
    def test_round_trip_gives_the_same_model(self):
        source, target = mlp(kiln.Runtime(seed=1)), mlp(kiln.Runtime(seed=2))
        kiln.save_weights(source, self.file("w.safetensors"))
        self.assertEqual(list(kiln.load_safetensors(self.file("w.safetensors"))), list(source.state_dict()))
        kiln.load_weights(target, self.file("w.safetensors"))
        x = np.random.default_rng(0).normal(size=(3, 2)).astype(np.float32)
        np.testing.assert_array_equal(target(x).numpy(), source(x).numpy())

    def test_strict_names_and_shapes(self):
        rt = kiln.Runtime()
        kiln.save_safetensors({"0.weight": np.zeros((8, 2), np.float32), "extra": np.zeros(1, np.float32)},
                              self.file("partial.safetensors"))
        model = mlp(rt)
        before = model.parameters()["0.weight"].numpy().copy()
        with self.assertRaisesRegex(kiln.InvalidArgument, "3 tensor\\(s\\) missing from the file: 0.bias, 2.weight, "
                                                          "2.bias; 1 unexpected tensor\\(s\\) in the file: extra"):
            kiln.load_weights(model, self.file("partial.safetensors"), strict=True)
        np.testing.assert_array_equal(model.parameters()["0.weight"].numpy(), before)  # all or nothing
        kiln.load_weights(model, self.file("partial.safetensors"), strict=False)
        np.testing.assert_array_equal(model.parameters()["0.weight"].numpy(), np.zeros((8, 2)))
        kiln.save_safetensors({"0.weight": np.zeros((3, 3), np.float32)}, self.file("shape.safetensors"))
        with self.assertRaisesRegex(kiln.ShapeMismatch, r"0.weight \(the file has \[3, 3\], the model "
                                                        r"\(Sequential\) has \[8, 2\]\)"):
            kiln.load_weights(model, self.file("shape.safetensors"), strict=False)


class TrainingState(Folder):
    def setup(self):
        rt = kiln.Runtime(seed=3, num_threads=1)
        inputs, targets = support.blobs(64)
        loader = kiln.Loader(kiln.DataSource("tensors", input=inputs, target=targets, runtime=rt), batch_size=8,
                             shuffle=True, seed=5)
        model = mlp(rt)
        optimizer = kiln.Optimizer("Adam", model, lr=0.01)
        return model, optimizer, loader

    def run_steps(self, trainer, count):
        return [trainer.step().loss for _ in range(count)]

    def test_a_resumed_run_takes_the_same_steps(self):
        model, optimizer, loader = self.setup()
        straight = kiln.Trainer(model, optimizer, loader, max_steps=12, progress="quiet")
        losses = self.run_steps(straight, 12)

        model, optimizer, loader = self.setup()
        first = kiln.Trainer(model, optimizer, loader, max_steps=12, progress="quiet")
        resumed = self.run_steps(first, 5)
        first.save(self.file("state.safetensors"))

        model2, optimizer2, loader2 = self.setup()
        second = kiln.Trainer(model2, optimizer2, loader2, max_steps=12, progress="quiet")
        second.load(self.file("state.safetensors"))
        resumed += self.run_steps(second, 7)
        self.assertEqual(resumed, losses)
        self.assertIsNone(second.step())

    def test_loading_a_missing_state_is_an_error(self):
        model, optimizer, loader = self.setup()
        trainer = kiln.Trainer(model, optimizer, loader, epochs=1, progress="quiet")
        with self.assertRaisesRegex(kiln.IOFailure, "missing.safetensors"):
            trainer.load(self.file("missing.safetensors"))

    def test_checkpoint_every(self):
        model, optimizer, loader = self.setup()
        path = self.file("periodic.safetensors")
        kiln.Trainer(model, optimizer, loader, max_steps=4, checkpoint_every=2, checkpoint_path=path,
                     progress="quiet").run()
        names = kiln.load_safetensors(path)
        self.assertIn("model.0.weight", names)


if __name__ == "__main__":
    support.main()
