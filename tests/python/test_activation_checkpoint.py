"""kiln.Checkpoint: gradients bit-identical to the unwrapped model's with
dropout inside, the parameters' names unchanged, and the peak memory of a
forward and backward lower than without it."""
import unittest

import numpy as np

import kiln
import support


def block(n_in, n_out):
    return kiln.Sequential(kiln.layer("Linear", in_features=n_in, out_features=n_out), kiln.layer("ReLU"),
                           kiln.layer("Dropout", p=0.5))


def step_values(model, x, w):
    """x's and every parameter's gradient after one backward from seed 1234."""
    kiln.default_runtime().manual_seed(1234)
    (model(x) * w).sum().backward()
    values = [x.grad.numpy().copy()]
    x.zero_grad()
    for p in model.parameters().values():
        values.append(p.grad.numpy().copy())
        p.zero_grad()
    return values


class Checkpointing(unittest.TestCase):
    def test_gradients_and_names_match_the_plain_model(self):
        blocks = [block(6, 12), block(12, 12), kiln.layer("Linear", in_features=12, out_features=4)]
        plain = kiln.Sequential(*blocks)
        wrapped = kiln.Sequential(kiln.Checkpoint(blocks[0]), kiln.Checkpoint(blocks[1]), blocks[2])
        self.assertEqual(kiln.Checkpoint(plain).type, "Checkpoint")
        self.assertEqual(list(wrapped.parameters()), list(plain.parameters()))
        self.assertEqual(list(wrapped.parameters())[0], "0.0.weight")
        x = kiln.randn(5, 6)
        x.requires_grad = True
        w = kiln.randn(5, 4)
        for got, want in zip(step_values(wrapped, x, w), step_values(plain, x, w)):
            np.testing.assert_array_equal(got, want)

    def test_peak_memory_is_lower(self):
        # Activations (1024 x 256 per value kept) outweigh the weights (256 x 256).
        blocks = [kiln.Sequential(kiln.layer("Linear", in_features=256, out_features=256), kiln.layer("ReLU"))
                  for _ in range(8)]
        x = kiln.randn(1024, 256)
        rt = kiln.default_runtime()

        def peak(model):
            rt.reset_peak_memory("cpu")
            start = rt.memory_stats("cpu").current_bytes
            model(x).sum().backward()
            return rt.memory_stats("cpu").peak_bytes - start

        plain = kiln.Sequential(*blocks)
        peak(plain)  # the gradients exist from here on, as in training
        plain_peak = peak(plain)
        checkpointed_peak = peak(kiln.Sequential(*[kiln.Checkpoint(b) for b in blocks]))
        self.assertLess(checkpointed_peak, 0.75 * plain_peak)

    def test_a_module_is_required(self):
        with self.assertRaisesRegex(kiln.InvalidArgument, "the module to checkpoint"):
            kiln.Checkpoint(42)


if __name__ == "__main__":
    unittest.main()
