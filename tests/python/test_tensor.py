"""Tensors: creation, queries, dtypes, and NumPy interchange with and without copies."""
import gc
import unittest
import weakref

import numpy as np

import kiln
import support

NUMPY_DTYPES = {
    kiln.float32: np.float32,
    kiln.float64: np.float64,
    kiln.float16: np.float16,
    kiln.int32: np.int32,
    kiln.int64: np.int64,
    kiln.uint8: np.uint8,
    kiln.bool_: np.bool_,
}


class Creation(unittest.TestCase):
    def test_filled_tensors(self):
        z = kiln.zeros(2, 3)
        self.assertEqual((z.shape, z.ndim, z.numel(), len(z), z.dtype, z.device),
                         ((2, 3), 2, 6, 2, kiln.float32, "cpu"))
        np.testing.assert_array_equal(z.numpy(), np.zeros((2, 3)))
        np.testing.assert_array_equal(kiln.ones((2,), dtype="i32").numpy(), [1, 1])
        self.assertEqual(kiln.ones(2, dtype="i32").dtype, kiln.int32)
        np.testing.assert_array_equal(kiln.full((2, 2), 7.5, dtype=kiln.float64).numpy(), np.full((2, 2), 7.5))
        self.assertEqual(kiln.empty(4, 1, dtype=np.int64).shape, (4, 1))

    def test_scalars(self):
        s = kiln.full((), 3.0)
        self.assertEqual((s.shape, s.ndim, s.numel()), ((), 0, 1))
        self.assertEqual(s.item(), 3.0)
        with self.assertRaisesRegex(TypeError, "len\\(\\) of a 0-dimensional tensor"):
            len(s)

    def test_python_values_take_pytorch_defaults(self):
        self.assertEqual(kiln.tensor([1.0, 2.0]).dtype, kiln.float32)
        self.assertEqual(kiln.tensor([[1, 2], [3, 4]]).dtype, kiln.int64)
        self.assertEqual(kiln.tensor([True, False]).dtype, kiln.bool_)
        self.assertEqual(kiln.tensor(2.5).shape, ())
        self.assertEqual(kiln.tensor([1, 2], dtype=kiln.float64).numpy().tolist(), [1.0, 2.0])
        self.assertEqual(kiln.tensor([[1.5, 2.0]]).tolist(), [[1.5, 2.0]])

    def test_bad_shapes_and_dtypes(self):
        with self.assertRaisesRegex(kiln.InvalidArgument, r"a shape is a sequence of integers, got \(2, 'x'\)"):
            kiln.zeros(2, "x")
        with self.assertRaisesRegex(kiln.InvalidArgument, "unknown dtype 'f8'; kiln has f32 \\(float32\\)"):
            kiln.zeros(2, dtype="f8")
        with self.assertRaisesRegex(kiln.InvalidArgument, r"rank 9 of 'shape' is out of range \(0 to 8\)"):
            kiln.zeros(*([1] * 9))
        with self.assertRaisesRegex(kiln.InvalidArgument, "NumPy dtype <i2 \\(int16\\) has no kiln dtype"):
            kiln.from_numpy(np.zeros(2, np.int16))
        with self.assertRaisesRegex(kiln.InvalidArgument, "from_numpy expects a numpy.ndarray, got list"):
            kiln.from_numpy([1, 2])

    def test_other_numpy_dtypes_convert_when_asked(self):
        t = kiln.tensor(np.arange(3, dtype=np.int16), dtype=kiln.int32)
        self.assertEqual((t.dtype, t.tolist()), (kiln.int32, [0, 1, 2]))


class ZeroCopy(unittest.TestCase):
    def test_every_kiln_dtype_round_trips(self):
        for dtype, np_dtype in NUMPY_DTYPES.items():
            array = (np.arange(6) % 2 == 1) if np_dtype is np.bool_ else np.arange(6).astype(np_dtype)
            t = kiln.from_numpy(array.reshape(2, 3))
            self.assertEqual(t.dtype, dtype)
            back = t.numpy()
            self.assertEqual(back.dtype, np.dtype(np_dtype))
            np.testing.assert_array_equal(back, array.reshape(2, 3))

    def test_a_contiguous_array_is_shared_both_ways(self):
        array = np.arange(6, dtype=np.float32).reshape(2, 3)
        t = kiln.tensor(array)
        array[0, 0] = 42.0
        self.assertEqual(t.numpy()[0, 0], 42.0)
        view = t.numpy()
        view[1, 2] = -1.0
        self.assertEqual(array[1, 2], -1.0)
        self.assertTrue(np.shares_memory(view, array))

    def test_the_array_lives_as_long_as_a_tensor_uses_it(self):
        array = np.arange(4, dtype=np.float64)
        alive = weakref.ref(array)
        t = kiln.from_numpy(array)
        detached = t.detach()  # a second tensor on the same memory
        del array
        gc.collect()
        self.assertIsNotNone(alive())
        t.close()
        gc.collect()
        self.assertIsNotNone(alive())
        np.testing.assert_array_equal(detached.numpy(), [0, 1, 2, 3])
        detached.close()
        gc.collect()
        self.assertIsNone(alive())

    def test_a_view_keeps_its_tensor_alive(self):
        rt = kiln.Runtime()
        t = kiln.full((3,), 5.0, runtime=rt)
        view = t.numpy()
        t.close()
        frees = rt.memory_stats().num_frees
        np.testing.assert_array_equal(view, [5.0, 5.0, 5.0])
        del view
        gc.collect()
        self.assertEqual(rt.memory_stats().num_frees, frees + 1)

    def test_strided_and_read_only_arrays_are_copied(self):
        array = np.arange(12, dtype=np.float32).reshape(3, 4)
        strided = kiln.from_numpy(array[:, ::2])
        np.testing.assert_array_equal(strided.numpy(), array[:, ::2])
        array[0, 0] = 100.0
        self.assertEqual(strided.numpy()[0, 0], 0.0)
        read_only = np.arange(3, dtype=np.float32)
        read_only.flags.writeable = False
        copy = kiln.from_numpy(read_only)
        self.assertFalse(np.shares_memory(copy.numpy(), read_only))
        np.testing.assert_array_equal(copy.numpy(), read_only)

    def test_a_strided_tensor_gives_a_copy(self):
        t = kiln.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
        transposed = t.transpose(0, 1)
        out = transposed.numpy()
        np.testing.assert_array_equal(out, np.arange(6).reshape(2, 3).T)
        self.assertTrue(out.flags.c_contiguous)
        self.assertFalse(np.shares_memory(out, t.numpy()))

    def test_np_asarray_uses_the_tensor(self):
        t = kiln.tensor([1.0, 2.0])
        np.testing.assert_array_equal(np.asarray(t), [1.0, 2.0])
        self.assertEqual(np.asarray(t, dtype=np.float64).dtype, np.float64)

    def test_bf16_refuses_numpy_and_casts(self):
        t = kiln.tensor([1.5, -2.0], dtype=kiln.bfloat16)
        self.assertEqual(t.dtype, kiln.bfloat16)
        with self.assertRaisesRegex(kiln.Unsupported, r"cast the tensor first: t.to\(kiln.float32\).numpy\(\)"):
            t.numpy()
        np.testing.assert_array_equal(t.to(kiln.float32).numpy(), [1.5, -2.0])
        self.assertIn("dtype=bf16", repr(t))


class Conversions(unittest.TestCase):
    def test_to_dtype_and_device(self):
        t = kiln.tensor([1.25, 2.5])
        self.assertEqual(t.to(kiln.float64).dtype, kiln.float64)
        self.assertEqual(t.to("i32").tolist(), [1, 2])
        same = t.to("cpu")
        self.assertTrue(np.shares_memory(same.numpy(), t.numpy()))
        with self.assertRaisesRegex(kiln.InvalidArgument, "unknown device 'cuda:x'"):
            t.to("cuda:x")

    def test_copy_in_place(self):
        t = kiln.zeros(3)
        t.copy_(np.array([1, 2, 3], np.int64))
        np.testing.assert_array_equal(t.numpy(), [1.0, 2.0, 3.0])
        t.copy_(kiln.tensor([4.0, 5.0, 6.0], dtype=kiln.float64))
        np.testing.assert_array_equal(t.numpy(), [4.0, 5.0, 6.0])
        with self.assertRaises(kiln.ShapeMismatch):
            t.copy_(kiln.zeros(4))

    def test_detach_and_contiguous_share_memory(self):
        t = kiln.tensor([1.0, 2.0])
        self.assertTrue(np.shares_memory(t.detach().numpy(), t.numpy()))
        self.assertTrue(np.shares_memory(t.contiguous().numpy(), t.numpy()))

    def test_item_needs_one_element(self):
        with self.assertRaisesRegex(kiln.InvalidArgument, r"item\(\) needs a tensor with one element, this one has "
                                                          r"shape \(2,\)"):
            kiln.zeros(2).item()

    def test_a_closed_tensor(self):
        t = kiln.zeros(2)
        t.close()
        self.assertEqual(repr(t), "kiln.Tensor(closed)")
        with self.assertRaisesRegex(kiln.InvalidState, "this Tensor is closed"):
            t.shape

    def test_repr(self):
        self.assertEqual(repr(kiln.tensor([1.0, 2.0])), "kiln.Tensor([1., 2.], shape=(2,), dtype=f32, device=cpu)")
        self.assertEqual(repr(kiln.zeros(100, dtype="u8")), "kiln.Tensor(shape=(100,), dtype=u8, device=cpu)")


if __name__ == "__main__":
    support.main()
