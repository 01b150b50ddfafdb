"""Tensors, modules and loaders on a GPU; skipped, with the reason, without one."""
import sys
import unittest

import numpy as np

import kiln
import support

_probe = kiln.Runtime()
if _probe.cuda_device_count == 0:
    print(f"skipped: no usable GPU: {_probe.cuda_unavailable_reason}")
    sys.exit(support.SKIPPED)


class OnTheGpu(unittest.TestCase):
    def test_tensors_move_and_numpy_copies_back(self):
        host = kiln.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
        device = host.to("cuda:0")
        self.assertEqual(device.device, "cuda:0")
        out = device.numpy()
        np.testing.assert_array_equal(out, np.arange(6).reshape(2, 3))
        self.assertFalse(np.shares_memory(out, host.numpy()))
        self.assertEqual(device.cpu().device, "cpu")
        self.assertEqual(kiln.zeros(2, device="cuda").device, "cuda:0")

    def test_ops_run_where_their_inputs_are(self):
        x = kiln.tensor([1.0, -2.0], device="cuda:0")
        y = kiln.F.relu(x * 2 + 1)
        self.assertEqual(y.device, "cuda:0")
        self.assertEqual(y.tolist(), [3.0, 0.0])
        with self.assertRaises(kiln.DeviceMismatch):
            x + kiln.tensor([1.0, 1.0])

    def test_a_module_on_the_gpu(self):
        model = kiln.layer("Linear", in_features=3, out_features=2)
        x = np.ones((4, 3), np.float32)
        expected = model(x).numpy()
        model.to("cuda:0")
        self.assertEqual({t.device for t in model.parameters().values()}, {"cuda:0"})
        out = model(kiln.tensor(x, device="cuda:0"))
        self.assertEqual(out.device, "cuda:0")
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)

    def test_a_loader_delivers_on_the_gpu(self):
        source = kiln.DataSource("tensors", input=np.ones((8, 2), np.float32), target=np.zeros(8, np.int64))
        batch = next(iter(kiln.Loader(source, batch_size=4, device="cuda:0")))
        self.assertEqual({t.device for t in batch.values()}, {"cuda:0"})

    def test_memory_stats_and_the_cache_of_the_gpu(self):
        rt = kiln.Runtime()
        before = rt.memory_stats("cuda:0")
        t = kiln.zeros(1 << 20, device="cuda:0", runtime=rt)
        during = rt.memory_stats("cuda:0")
        self.assertEqual(during.num_allocs, before.num_allocs + 1)
        self.assertGreaterEqual(during.active_bytes, 4 << 20)
        t.close()
        cached = rt.memory_stats("cuda:0")
        self.assertGreaterEqual(cached.cached_free_bytes, 4 << 20)  # freed, kept for reuse
        rt.empty_cache("cuda:0")
        self.assertEqual(rt.memory_stats("cuda:0").cached_free_bytes, 0)


if __name__ == "__main__":
    support.main()
