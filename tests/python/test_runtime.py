"""Runtimes: options, seeds, devices, memory statistics, the default runtime, lifetimes."""
import gc
import os
import unittest

import numpy as np

import kiln
import support

PLUGIN_FOLDER = os.path.join(os.path.dirname(os.path.realpath(os.environ["KILN_LIBRARY"])), "kiln", "plugins")


class Options(unittest.TestCase):
    def test_the_same_seed_draws_the_same_numbers(self):
        first, second = kiln.Runtime(seed=5), kiln.Runtime(seed=5)
        a, b = kiln.randn(8, runtime=first).numpy(), kiln.randn(8, runtime=second).numpy()
        np.testing.assert_array_equal(a, b)
        other = kiln.randn(8, runtime=kiln.Runtime(seed=6)).numpy()
        self.assertFalse(np.array_equal(a, other))

    def test_manual_seed_restarts_the_stream(self):
        rt = kiln.Runtime(seed=1, num_threads=1)
        rt.manual_seed(42)
        a = kiln.rand(5, runtime=rt).numpy()
        kiln.manual_seed(42, runtime=rt)
        np.testing.assert_array_equal(a, kiln.rand(5, runtime=rt).numpy())
        self.assertTrue(((a >= 0) & (a < 1)).all())

    def test_direct_convolutions_stay_close_to_the_default_ones(self):
        # A ResNet-like 3x3 layer: by default it may run by Winograd's
        # algorithm (oneDNN's or kiln's), which rounds differently; the two
        # agree to a few millionths of the largest value.
        rng = np.random.default_rng(0)
        x = rng.uniform(-1, 1, (32, 64, 16, 16)).astype(np.float32)
        w = rng.uniform(-1, 1, (64, 64, 3, 3)).astype(np.float32)
        outputs = []
        for rt in (kiln.Runtime(), kiln.Runtime(direct_convolutions=True)):
            y = kiln.F.conv2d(kiln.tensor(x, runtime=rt), kiln.tensor(w, runtime=rt), padding=[1, 1])
            outputs.append(y.numpy())
        np.testing.assert_allclose(outputs[0], outputs[1], rtol=0, atol=2e-5 * np.abs(outputs[1]).max())

    def test_without_default_plugins_only_the_given_paths_are_loaded(self):
        rt = kiln.Runtime(default_plugins=False, plugin_paths=[os.path.join(PLUGIN_FOLDER, "libkiln_optim.so")])
        self.assertEqual([p.name for p in kiln.plugins(rt)], ["kiln-optim"])
        with self.assertRaisesRegex(kiln.NotFound, "unknown layer 'Linear'"):
            kiln.layer("Linear", in_features=1, out_features=1, runtime=rt)

    def test_by_default_the_plugins_beside_the_library_are_loaded(self):
        names = {p.name for p in kiln.plugins(kiln.Runtime())}
        self.assertLessEqual({"kiln-layers", "kiln-optim", "kiln-data", "kiln-parallel"}, names)

    def test_log_receives_a_refused_plugin(self):
        messages = []
        kiln.Runtime(default_plugins=False, plugin_paths=[os.environ["KILN_LIBRARY"]],
                     log=lambda level, message: messages.append((level, message)))
        self.assertTrue(messages, "the refusal was not logged")
        level, message = messages[0]
        self.assertIsInstance(level, kiln.LogLevel)
        self.assertGreaterEqual(level, kiln.LogLevel.WARNING)
        self.assertIn("libkiln.so", message)


class Queries(unittest.TestCase):
    def test_memory_stats_count_allocations(self):
        rt = kiln.Runtime()
        before = rt.memory_stats()
        t = kiln.zeros(1000, runtime=rt)
        during = rt.memory_stats("cpu")
        self.assertGreaterEqual(during.current_bytes, before.current_bytes + 4000)
        self.assertGreaterEqual(during.peak_bytes, during.current_bytes)
        self.assertEqual(during.num_allocs, before.num_allocs + 1)
        t.close()
        self.assertEqual(rt.memory_stats().num_frees, during.num_frees + 1)

    def test_the_cpu_caches_large_blocks(self):
        rt = kiln.Runtime()
        rt.empty_cache("cpu")
        before = rt.memory_stats("cpu")
        kiln.zeros(1 << 16, runtime=rt).close()  # 256 KiB, kept for the next request of its size
        cached = rt.memory_stats("cpu")
        self.assertEqual((cached.cached_free_bytes, cached.largest_free_block), (1 << 18, 1 << 18))
        self.assertEqual(cached.reserved_bytes, before.reserved_bytes + (1 << 18))
        kiln.zeros(1 << 16, runtime=rt).close()
        self.assertEqual(rt.memory_stats("cpu").cache_hits, before.cache_hits + 1)
        rt.empty_cache("cpu")
        emptied = rt.memory_stats("cpu")
        self.assertEqual((emptied.cached_free_bytes, emptied.reserved_bytes), (0, before.reserved_bytes))

    def test_a_missing_gpu(self):
        rt = kiln.Runtime()
        if rt.cuda_device_count > 0:
            self.skipTest("a GPU is present: test_cuda covers its memory")
        with self.assertRaisesRegex(kiln.DeviceMismatch, "kiln_memory_stats_get: device cuda:0 is not available"):
            rt.memory_stats("cuda:0")
        with self.assertRaisesRegex(kiln.DeviceMismatch, "kiln_memory_empty_cache: device cuda:0 is not available"):
            rt.empty_cache("cuda:0")

    def test_memory_stats_of_an_unknown_device(self):
        with self.assertRaisesRegex(kiln.InvalidArgument, "unknown device 'tpu'"):
            kiln.Runtime().memory_stats("tpu")

    def test_devices(self):
        rt = kiln.Runtime()
        count, reason = rt.cuda_device_count, rt.cuda_unavailable_reason
        self.assertGreaterEqual(count, 0)
        self.assertEqual(reason == "", count > 0)


class DefaultRuntime(unittest.TestCase):
    def test_functions_without_runtime_use_the_default(self):
        t = kiln.zeros(2)
        self.assertIs(t.runtime, kiln.default_runtime())

    def test_set_default_runtime(self):
        mine = kiln.Runtime()
        previous = kiln.set_default_runtime(mine)
        try:
            self.assertIs(kiln.ones(1).runtime, mine)
        finally:
            kiln.set_default_runtime(previous)
        with self.assertRaisesRegex(kiln.InvalidArgument, "expected a kiln.Runtime, got str"):
            kiln.set_default_runtime("cpu")

    def test_a_closed_default_is_replaced(self):
        mine = kiln.Runtime()
        previous = kiln.set_default_runtime(mine)
        try:
            mine.close()
            self.assertIsNot(kiln.default_runtime(), mine)
            self.assertFalse(kiln.default_runtime().closed)
        finally:
            kiln.set_default_runtime(previous)


class Lifetimes(unittest.TestCase):
    def test_a_closed_runtime_refuses_new_objects(self):
        rt = kiln.Runtime()
        rt.close()
        rt.close()  # closing twice does nothing
        self.assertTrue(rt.closed)
        with self.assertRaisesRegex(kiln.InvalidState, "this Runtime is closed"):
            kiln.zeros(2, runtime=rt)
        with self.assertRaisesRegex(kiln.InvalidState, "this Runtime is closed"):
            rt.manual_seed(1)

    def test_objects_outlive_their_closed_runtime(self):
        with kiln.Runtime(seed=3) as rt:
            model = kiln.layer("Linear", in_features=2, out_features=1, runtime=rt)
            x = kiln.ones(1, 2, runtime=rt)
        y = model(x) + 1  # the module and the tensors hold the runtime
        expected = model.parameters()["weight"].numpy().sum() + model.parameters()["bias"].item() + 1
        self.assertAlmostEqual(y.item(), expected, places=5)

    def test_objects_are_released_when_collected(self):
        rt = kiln.Runtime()
        frees = rt.memory_stats().num_frees
        kiln.zeros(10, runtime=rt)  # dropped at once
        gc.collect()
        self.assertEqual(rt.memory_stats().num_frees, frees + 1)

    def test_runtime_arguments_are_checked(self):
        with self.assertRaisesRegex(kiln.InvalidArgument, "runtime must be a kiln.Runtime, got str"):
            kiln.zeros(2, runtime="cpu")


if __name__ == "__main__":
    support.main()
