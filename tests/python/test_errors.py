"""Every kiln error is raised as the kiln.Error subclass of its status,
carrying kiln's message."""
import os
import tempfile
import unittest

import numpy as np

import kiln
import support


class ErrorClasses(unittest.TestCase):
    def test_one_class_per_status(self):
        classes = [kiln.InvalidArgument, kiln.ShapeMismatch, kiln.DTypeMismatch, kiln.DeviceMismatch, kiln.NotFound,
                   kiln.OutOfMemory, kiln.InvalidState, kiln.Unsupported, kiln.IOFailure, kiln.InternalError,
                   kiln.PluginRefused, kiln.ScriptError, kiln.Timeout, kiln.PeerFailure]
        self.assertEqual([c.status for c in classes], list(range(1, 15)))
        for cls in classes:
            self.assertTrue(issubclass(cls, kiln.Error))
            # Each status name is kiln's own: the classes follow the C API.
            self.assertNotEqual(kiln.status_name(cls.status), "")

    def test_statuses_map_to_their_classes(self):
        for status in range(1, 15):
            error = kiln.errors.from_status(status, "what went wrong")
            self.assertEqual(error.status, status)
            self.assertEqual(str(error), "what went wrong")
        self.assertIsInstance(kiln.errors.from_status(12, ""), kiln.ScriptError)
        unknown = kiln.errors.from_status(99, "what went wrong")
        self.assertIsInstance(unknown, kiln.InternalError)
        self.assertEqual((unknown.status, str(unknown)), (99, "what went wrong (unknown kiln_status 99)"))

    def test_no_class_shadows_a_builtin(self):
        import builtins
        for name in ("InvalidArgument", "ShapeMismatch", "DTypeMismatch", "DeviceMismatch", "NotFound",
                     "OutOfMemory", "InvalidState", "Unsupported", "IOFailure", "InternalError", "PluginRefused",
                     "ScriptError", "Timeout", "PeerFailure", "Error"):
            self.assertFalse(hasattr(builtins, name), name)

    def test_an_error_carries_status_and_message(self):
        with self.assertRaises(kiln.NotFound) as caught:
            kiln.layer("Linaer")
        error = caught.exception
        self.assertEqual(error.status, 5)
        self.assertEqual(str(error), error.message)
        self.assertIn("kiln_module_create: unknown layer 'Linaer'", error.message)
        self.assertIn("Linear", error.message)  # the closest name


class ErrorsFromKiln(unittest.TestCase):
    """One failing call per status that a Python program can provoke."""

    def test_invalid_argument(self):
        with self.assertRaisesRegex(kiln.InvalidArgument, "unknown entry 'in_feature'"):
            kiln.layer("Linear", in_feature=2, out_features=3)

    def test_shape_mismatch(self):
        a, b = kiln.zeros(2, 3), kiln.zeros(4, 5)
        with self.assertRaisesRegex(kiln.ShapeMismatch, r"matmul"):
            a @ b

    def test_dtype_mismatch(self):
        source = kiln.DataSource("tensors", input=np.zeros((4, 3), np.uint8))
        normalize = kiln.Transform("normalize", mean=[0.5], std=[0.5])
        with self.assertRaisesRegex(kiln.DTypeMismatch, r"normalize: the input is u8\[3\]; expected f32"):
            normalize(source[0])

    def test_not_found(self):
        with self.assertRaisesRegex(kiln.NotFound, "the example has no field 'label'"):
            kiln.Example({"input": np.zeros(2, np.float32)})["label"]

    def test_invalid_state(self):
        x = kiln.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
        with self.assertRaisesRegex(kiln.InvalidState, "already been freed"):
            y.backward()

    def test_unsupported(self):
        with self.assertRaisesRegex(kiln.Unsupported, "bf16 has no NumPy dtype"):
            kiln.zeros(2, dtype=kiln.bfloat16).numpy()

    def test_io_failure(self):
        with tempfile.TemporaryDirectory() as folder:
            missing = os.path.join(folder, "missing.npy")
            with self.assertRaisesRegex(kiln.IOFailure, "missing.npy"):
                kiln.DataSource("npy", inputs=missing)

    def test_plugin_refused(self):
        with self.assertRaisesRegex(kiln.PluginRefused, "not a shared library"):
            kiln.load_plugin(__file__)

    def test_an_exception_in_a_callback_is_raised_as_itself_not_as_script_error(self):
        inputs, targets = support.blobs(32)
        loader = kiln.Loader(kiln.DataSource("tensors", input=inputs, target=targets), batch_size=8)
        model = kiln.layer("Linear", in_features=2, out_features=2)
        trainer = kiln.Trainer(model, kiln.Optimizer("SGD", model, lr=0.1), loader, epochs=1, progress="quiet",
                               on_step=lambda m: 1 / 0)
        with self.assertRaises(ZeroDivisionError):
            trainer.run()

    def test_errors_of_python_arguments_are_kiln_errors_too(self):
        with self.assertRaisesRegex(kiln.InvalidArgument, "attribute 'padding': expected a list of numbers"):
            kiln.layer("Conv2d", in_channels=1, out_channels=1, kernel_size=3, padding=[1, "x"])
        with self.assertRaisesRegex(kiln.InvalidArgument, "unknown device 'gpu'"):
            kiln.zeros(2, device="gpu")


if __name__ == "__main__":
    support.main()
