"""Memory planning: kiln.estimate_memory, kiln.find_batch_size, the CPU cap
(Runtime.set_memory_limit) and the peak reset."""
import unittest

import kiln
import support


def mlp():
    return kiln.Sequential(kiln.layer("Linear", in_features=16, out_features=64), kiln.layer("ReLU"),
                           kiln.layer("Linear", in_features=64, out_features=4))


PARAM_BYTES = (16 * 64 + 64 + 64 * 4 + 4) * 4


class MemoryPlanning(unittest.TestCase):
    def test_estimate(self):
        model = mlp()
        optimizer = kiln.Optimizer("SGD", model, lr=0.1, momentum=0.9)
        rt = kiln.default_runtime()
        before = rt.memory_stats("cpu").current_bytes
        estimate = kiln.estimate_memory(model, (16,), batch_size=32, optimizer=optimizer)
        self.assertEqual((estimate.parameter_bytes, estimate.gradient_bytes, estimate.optimizer_bytes),
                         (PARAM_BYTES, PARAM_BYTES, PARAM_BYTES))
        self.assertGreaterEqual(estimate.activation_bytes, 32 * (16 + 64) * 4)
        self.assertEqual(estimate.total_bytes, PARAM_BYTES * 3 + estimate.activation_bytes)
        self.assertEqual(rt.memory_stats("cpu").current_bytes, before)
        rt.reset_peak_memory("cpu")
        stats = rt.memory_stats("cpu")
        self.assertEqual(stats.peak_bytes, stats.current_bytes)

    def test_find_batch_size_under_a_cpu_cap(self):
        model = mlp()
        rt = kiln.default_runtime()
        before = rt.memory_stats("cpu").current_bytes
        rt.set_memory_limit(before + 3 * PARAM_BYTES + 64 * 1024)
        try:
            found = kiln.find_batch_size(model, (16,))
            self.assertGreater(found.batch_size, 1)
            self.assertEqual(rt.memory_stats("cpu").current_bytes, before)
            with self.assertRaisesRegex(kiln.OutOfMemory, "over the cap of"):
                kiln.estimate_memory(model, (16,), batch_size=found.batch_size + 1)
        finally:
            rt.set_memory_limit(0)
        self.assertEqual(kiln.find_batch_size(model, (16,), max_batch_size=3).batch_size, 3)

    def test_errors(self):
        with self.assertRaisesRegex(kiln.InvalidArgument, "batch_size is 0"):
            kiln.estimate_memory(mlp(), (16,), batch_size=0)
        with self.assertRaisesRegex(kiln.InvalidArgument, "model must be a kiln.Module"):
            kiln.find_batch_size("model", (16,))


if __name__ == "__main__":
    unittest.main()
