"""Normalisation, resampling, 1-d pooling and batched products from Python:
the ops through kiln.F and their layers through kiln.layer, against NumPy."""
import unittest

import numpy as np

import kiln
import support

RNG = np.random.default_rng(3)


def group_norm(x, groups, w, b, eps=1e-5):
    n, c = x.shape[:2]
    rows = x.reshape(n, groups, -1)
    normed = (rows - rows.mean(-1, keepdims=True)) / np.sqrt(rows.var(-1, keepdims=True) + eps)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return normed.reshape(x.shape) * w.reshape(shape) + b.reshape(shape)


class Ops(unittest.TestCase):
    def test_group_and_instance_norm(self):
        x = RNG.uniform(-1, 2, (2, 6, 3, 2))
        w, b = RNG.uniform(0.5, 1.5, 6), RNG.uniform(-1, 1, 6)
        np.testing.assert_allclose(kiln.F.group_norm(x, w, b, num_groups=3).numpy(), group_norm(x, 3, w, b),
                                   atol=1e-10)
        np.testing.assert_allclose(kiln.F.instance_norm(x, w, b).numpy(), group_norm(x, 6, w, b), atol=1e-10)

    def test_upsample_and_pools(self):
        x = RNG.uniform(-1, 1, (1, 2, 3, 4))
        np.testing.assert_array_equal(kiln.F.upsample_nearest2d(x, scale_factor=[2.0]).numpy(),
                                      x.repeat(2, axis=2).repeat(2, axis=3))
        seq = RNG.uniform(-1, 1, (2, 3, 8))
        np.testing.assert_array_equal(kiln.F.max_pool1d(seq, kernel_size=[2]).numpy(),
                                      seq.reshape(2, 3, 4, 2).max(-1))
        np.testing.assert_allclose(kiln.F.avg_pool1d(seq, kernel_size=[4]).numpy(), seq.reshape(2, 3, 2, 4).mean(-1))

    def test_bmm_and_baddbmm(self):
        a, b, c = RNG.uniform(-1, 1, (3, 2, 4)), RNG.uniform(-1, 1, (3, 4, 5)), RNG.uniform(-1, 1, (2, 5))
        np.testing.assert_allclose(kiln.F.bmm(a, b).numpy(), a @ b, atol=1e-12)
        np.testing.assert_allclose(kiln.F.baddbmm(c, a, b, beta=0.5, alpha=2.0).numpy(), 0.5 * c + 2 * (a @ b),
                                   atol=1e-12)
        with self.assertRaisesRegex(kiln.ShapeMismatch, "batch1 must be a 3D tensor"):
            kiln.F.bmm(a[0], b)


class Layers(unittest.TestCase):
    def test_group_norm_and_instance_norm_layers(self):
        layer = kiln.layer("GroupNorm", num_groups=2, num_channels=4)
        self.assertEqual(list(layer.parameters()), ["weight", "bias"])
        x = RNG.uniform(-1, 1, (2, 4, 5)).astype(np.float32)
        np.testing.assert_allclose(layer(x).numpy(), group_norm(x, 2, np.ones(4), np.zeros(4)), atol=1e-5)
        self.assertEqual(list(kiln.layer("InstanceNorm2d", num_features=3).parameters()), [])

    def test_upsample_pool_and_activation_layers(self):
        x = RNG.uniform(-1, 1, (1, 2, 3, 3)).astype(np.float32)
        up = kiln.layer("Upsample", size=[6, 6])
        np.testing.assert_array_equal(up(x).numpy(), x.repeat(2, axis=2).repeat(2, axis=3))
        seq = RNG.uniform(-1, 1, (1, 2, 6)).astype(np.float32)
        np.testing.assert_array_equal(kiln.layer("MaxPool1d", kernel_size=3)(seq).numpy(),
                                      seq.reshape(1, 2, 2, 3).max(-1))
        np.testing.assert_array_equal(kiln.layer("Identity")(seq).numpy(), seq)
        np.testing.assert_allclose(kiln.layer("PReLU")(seq).numpy(), np.where(seq > 0, seq, 0.25 * seq), rtol=1e-6)
        np.testing.assert_allclose(kiln.layer("Softplus")(seq).numpy(), np.log1p(np.exp(seq)), rtol=1e-5)


if __name__ == "__main__":
    support.main()
