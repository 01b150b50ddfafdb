"""Ops by name with attributes, and Tensor arithmetic through them."""
import unittest

import numpy as np

import kiln
import support
from kiln.ops import call

A = np.arange(6, dtype=np.float32).reshape(2, 3)


class GenericCalls(unittest.TestCase):
    def test_attributes_of_every_kind(self):
        x = kiln.tensor(A)
        np.testing.assert_array_equal(kiln.op("sum")(x, dims=[1], keepdim=True).numpy(), A.sum(1, keepdims=True))
        np.testing.assert_array_equal(kiln.op("reshape")(x, shape=(3, 2)).numpy(), A.reshape(3, 2))
        np.testing.assert_array_equal(kiln.op("cast")(x, dtype=np.int32).numpy(), A.astype(np.int32))
        np.testing.assert_allclose(kiln.op("leaky_relu")(x - 3.0, negative_slope=0.5).numpy(),
                                   np.where(A - 3 > 0, A - 3, 0.5 * (A - 3)))
        self.assertEqual(kiln.op("mse_loss")(x, x + 1.0, reduction="sum").item(), 6.0)

    def test_several_outputs_come_back_as_a_tuple(self):
        first, rest = kiln.F.split(kiln.tensor(np.arange(5, dtype=np.float32)), sizes=[2, 3])
        self.assertEqual((first.tolist(), rest.tolist()), ([0.0, 1.0], [2.0, 3.0, 4.0]))

    def test_none_leaves_an_optional_input_out(self):
        x, w = kiln.ones(2, 3), kiln.ones(4, 3)
        np.testing.assert_array_equal(kiln.F.linear(x, w, None).numpy(), np.full((2, 4), 3.0))
        np.testing.assert_array_equal(kiln.F.linear(x, w, np.ones(4, np.float32)).numpy(), np.full((2, 4), 4.0))

    def test_numbers_and_lists_take_the_first_tensors_dtype(self):
        x = kiln.tensor(A, dtype=kiln.float64)
        y = kiln.F.add(x, [1, 2, 3])
        self.assertEqual(y.dtype, kiln.float64)
        np.testing.assert_array_equal(y.numpy(), A + [1, 2, 3])

    def test_ops_without_tensor_inputs_run_in_the_given_runtime(self):
        rt = kiln.Runtime(seed=9)
        a = kiln.op("randn", runtime=rt)(shape=[3], dtype=kiln.float64)
        self.assertIs(a.runtime, rt)
        self.assertEqual((a.shape, a.dtype), ((3,), kiln.float64))
        rt.manual_seed(9)
        np.testing.assert_array_equal(kiln.randn(3, dtype=kiln.float64, runtime=rt).numpy(), a.numpy())
        u = kiln.rand(1000, low=2.0, high=3.0, runtime=rt).numpy()
        self.assertTrue(((u >= 2.0) & (u < 3.0)).all())

    def test_an_unknown_op_names_the_closest(self):
        with self.assertRaisesRegex(kiln.NotFound, "unknown op 'relux'; did you mean: relu"):
            kiln.op("relux")
        with self.assertRaisesRegex(kiln.NotFound, "unknown op 'relux'"):
            kiln.F.relux(kiln.ones(1))
        self.assertEqual(repr(kiln.op("relu")), "kiln.op('relu')")

    def test_bad_attributes(self):
        x = kiln.tensor(A)
        with self.assertRaisesRegex(kiln.InvalidArgument, r"op 'sum' has no attribute 'dim' \(its attributes: dims, "
                                                          r"keepdim\)"):
            kiln.F.sum(x, dim=1)
        with self.assertRaisesRegex(kiln.InvalidArgument, "attribute 'dims' must be a integer list, got a string"):
            kiln.F.sum(x, dims="rows")
        with self.assertRaisesRegex(kiln.InvalidArgument, "attribute 'dims': expected a number, a bool, a string, a "
                                                          "dtype, a list of numbers or a tensor, got dict"):
            kiln.F.sum(x, dims={})
        with self.assertRaisesRegex(kiln.InvalidArgument, "op attributes cannot be tensors"):
            kiln.F.sum(x, dims=x)

    def test_bad_inputs(self):
        with self.assertRaisesRegex(kiln.InvalidArgument, "cannot make a tensor from dict"):
            kiln.F.add(kiln.ones(1), {"a": 1})
        with self.assertRaisesRegex(kiln.InvalidArgument, "op 'relu': no input is a kiln.Tensor"):
            call("relu", 1.0)
        with self.assertRaisesRegex(kiln.InvalidArgument, "input 1 belongs to another runtime than 'rt'"):
            kiln.F.add(kiln.ones(2), kiln.ones(2, runtime=kiln.Runtime()))


class Arithmetic(unittest.TestCase):
    def test_operators(self):
        x, y = kiln.tensor(A), kiln.tensor(A + 1.0)
        np.testing.assert_array_equal((x + y).numpy(), A + A + 1)
        np.testing.assert_array_equal((x - y).numpy(), -np.ones_like(A))
        np.testing.assert_array_equal((x * y).numpy(), A * (A + 1))
        np.testing.assert_allclose((x / y).numpy(), A / (A + 1))
        np.testing.assert_array_equal((-x).numpy(), -A)
        np.testing.assert_array_equal((x @ y.transpose(0, 1)).numpy(), A @ (A + 1).T)

    def test_with_numbers_and_arrays(self):
        x = kiln.tensor(A)
        np.testing.assert_array_equal((x + 1).numpy(), A + 1)
        np.testing.assert_array_equal((2 + x).numpy(), A + 2)
        np.testing.assert_array_equal((x - 1).numpy(), A - 1)
        np.testing.assert_array_equal((10 - x).numpy(), 10 - A)
        np.testing.assert_array_equal((x * 3).numpy(), A * 3)
        np.testing.assert_array_equal((3 * x).numpy(), A * 3)
        np.testing.assert_allclose((x / 4).numpy(), A / 4)
        np.testing.assert_allclose((1 / (x + 1)).numpy(), 1 / (A + 1))
        np.testing.assert_array_equal((x + np.ones(3, np.float32)).numpy(), A + 1)
        np.testing.assert_array_equal((np.ones((3, 1), np.float32).T @ x.transpose(0, 1)).numpy(),
                                      np.ones((1, 3)) @ A.T)

    def test_views_and_reductions(self):
        x = kiln.tensor(A)
        np.testing.assert_array_equal(x.reshape(3, 2).numpy(), A.reshape(3, 2))
        np.testing.assert_array_equal(x.reshape((6,)).numpy(), A.reshape(6))
        np.testing.assert_array_equal(x.permute(1, 0).numpy(), A.T)
        self.assertEqual(x.sum().item(), A.sum())
        np.testing.assert_array_equal(x.sum(0).numpy(), A.sum(0))
        np.testing.assert_array_equal(x.mean(dim=1, keepdim=True).numpy(), A.mean(1, keepdims=True))
        np.testing.assert_array_equal(x.max([0, 1]).numpy(), A.max())

    def test_gradients_flow_through_operators(self):
        x = kiln.tensor([1.0, 2.0], requires_grad=True)
        ((x * 3 + 1) / 2 - x).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [0.5, 0.5])


if __name__ == "__main__":
    support.main()
