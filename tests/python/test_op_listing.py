"""kiln.ops() lists every op with its inputs and attributes, and every op
that takes a first input is a Tensor method, plugins' ops included."""
import math
import os
import unittest

import numpy as np

import kiln
import support

A = np.array([[-1.5, 0.0, 2.0], [3.0, -4.0, 0.5]], dtype=np.float32)
# The loader tests' plugin: op "test_cube" (scale * x^3); given by CTest.
CUBE_PLUGIN = os.environ.get("KILN_TEST_OP_PLUGIN")


class Listing(unittest.TestCase):
    def test_every_op_in_name_order(self):
        ops = kiln.ops()
        names = [op.name for op in ops]
        self.assertGreater(len(ops), 50)
        self.assertEqual(names, sorted(set(names)))
        self.assertTrue(all(op.plugin is None for op in ops))
        self.assertEqual(sorted(dir(kiln.F)), names)

    def test_one_op_with_its_schema(self):
        split = kiln.ops("split")
        self.assertIs(split, kiln.ops("split"))  # read once per runtime
        self.assertEqual(split.inputs, (kiln.OpInput("input", False, False),))
        self.assertEqual(split.attrs, (kiln.OpAttr("dim", "int", False, 0, "0"),
                                       kiln.OpAttr("sizes", "ints", True, None, "")))
        self.assertTrue(split.backward)
        self.assertEqual(split.signature(), "split(input, dim=0, sizes=<required>)")
        linear = kiln.ops("linear")
        self.assertTrue(linear.inputs[2].optional)
        self.assertEqual(linear.attrs[0].default, "none")
        self.assertIn(kiln.float64, linear.kernels["cpu"])
        self.assertNotIn(kiln.bool_, linear.kernels["cpu"])
        self.assertEqual(kiln.ops("conv2d").attrs[0].default, [1, 1])
        self.assertEqual(kiln.ops("dropout").attrs[0].default, 0.5)
        self.assertTrue(math.isnan(kiln.ops("clamp").attrs[0].default))
        self.assertTrue(kiln.ops("concat").inputs[0].variadic)
        self.assertEqual(kiln.ops("concat").signature(), "concat(*inputs, dim=0)")
        sgd = kiln.ops("sgd_update")
        self.assertTrue(sgd.writes_inputs)
        self.assertTrue(kiln.ops("reshape").view)

    def test_unknown_name(self):
        with self.assertRaisesRegex(kiln.NotFound, "unknown op 'splitt'.*did you mean: split"):
            kiln.ops("splitt")


class Methods(unittest.TestCase):
    def test_methods_against_numpy(self):
        x, y = kiln.tensor(A), kiln.tensor(A[::-1].copy())
        np.testing.assert_array_equal(x.abs().numpy(), np.abs(A))
        np.testing.assert_array_equal(x.maximum(y).numpy(), np.maximum(A, A[::-1]))
        np.testing.assert_array_equal(x.eq(y).numpy(), A == A[::-1])
        np.testing.assert_array_equal(x.clamp(-1.0, 1.0).numpy(), np.clip(A, -1.0, 1.0))
        np.testing.assert_array_equal(x.clamp(max=1.0).numpy(), np.minimum(A, 1.0))
        np.testing.assert_allclose(x.softplus(beta=2.0).numpy(), np.log1p(np.exp(2.0 * A)) / 2.0, rtol=1e-6)
        e = np.exp(A - A.max(axis=1, keepdims=True))
        np.testing.assert_allclose(x.softmax(dim=1).numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-6)
        index = kiln.tensor(np.array([[2, 0], [1, 1]], dtype=np.int64))
        np.testing.assert_array_equal(x.gather(index, dim=1).numpy(), np.take_along_axis(A, index.numpy(), axis=1))
        first, rest = x.split(1, [1, 2])  # dim and sizes by position
        np.testing.assert_array_equal(first.numpy(), A[:, :1])
        np.testing.assert_array_equal(rest.numpy(), A[:, 1:])
        mask = x.gt(0.0)
        np.testing.assert_array_equal(mask.where(x, kiln.zeros(2, 3)).numpy(), np.where(A > 0, A, 0))
        np.testing.assert_array_equal(x.add(1.0).numpy(), A + 1)  # numbers become tensors like x

    def test_gradients_flow_through_methods(self):
        shifted = (A + 0.25).astype(np.float64)  # no zero, where abs has no derivative
        x = kiln.tensor(shifted).requires_grad_()
        x.abs().sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.sign(shifted))

    def test_every_op_with_a_first_input_is_a_method(self):
        x = kiln.ones(2)
        names = dir(x)
        for op in kiln.ops():
            with self.subTest(op=op.name):
                if op.inputs:
                    self.assertTrue(callable(getattr(x, op.name)))
                    self.assertIn(op.name, names)
                else:
                    self.assertFalse(hasattr(x, op.name))

    def test_generated_method_says_what_it_calls(self):
        method = kiln.ones(2).softplus
        self.assertEqual(method.__name__, "softplus")
        self.assertIn("softplus(input, beta=1, threshold=20)", method.__doc__)

    def test_tensor_methods_keep_their_own_conventions(self):
        x = kiln.tensor(A)
        np.testing.assert_array_equal(x.sum(1).numpy(), A.sum(1))  # Tensor.sum, not op sum's dims
        self.assertEqual(x.reshape(3, 2).shape, (3, 2))

    def test_bad_calls(self):
        x = kiln.tensor(A)
        with self.assertRaisesRegex(AttributeError, "no attribute 'softplux'.*did you mean: .*softplus"):
            x.softplux()
        with self.assertRaisesRegex(AttributeError, "op arange.*takes no input"):
            x.arange
        with self.assertRaisesRegex(kiln.InvalidArgument, r"clamp\(input, min=nan, max=nan\) takes at most 3 "
                                                          r"positional arguments \(its inputs, then its "
                                                          r"attributes in order\), got 4"):
            x.clamp(0.0, 1.0, 2.0)
        with self.assertRaisesRegex(kiln.InvalidArgument, "attribute 'min' is given both by position and by name"):
            x.clamp(0.0, min=1.0)
        with self.assertRaisesRegex(kiln.InvalidArgument, "op 'split' has no attribute 'dims'"):
            x.split(sizes=[1, 2], dims=0)


@unittest.skipUnless(CUBE_PLUGIN, "KILN_TEST_OP_PLUGIN (the test_cube plugin) is not set")
class PluginOps(unittest.TestCase):
    def test_a_plugin_op_is_listed_and_a_method(self):
        rt = kiln.Runtime(default_plugins=False)
        before = len(kiln.ops(runtime=rt))
        kiln.load_plugin(CUBE_PLUGIN, runtime=rt)
        self.assertEqual(len(kiln.ops(runtime=rt)), before + 2)
        cube = kiln.ops("test_cube", runtime=rt)
        self.assertEqual(cube.plugin, "test-good")
        self.assertEqual(cube.attrs, (kiln.OpAttr("scale", "float", False, 1.0, "1"),))
        self.assertEqual(cube.kernels, {"cpu": (kiln.float32, kiln.float64), "cuda": ()})
        x = kiln.tensor(A, runtime=rt)
        np.testing.assert_allclose(x.test_cube(scale=2.0).numpy(), 2.0 * A ** 3, rtol=1e-6)
        np.testing.assert_allclose(x.test_cube(0.5).numpy(), 0.5 * A ** 3, rtol=1e-6)
        # The default runtime did not load it.
        self.assertFalse(hasattr(kiln.tensor(A), "test_cube"))


if __name__ == "__main__":
    support.main()
