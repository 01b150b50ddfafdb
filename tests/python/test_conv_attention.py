"""conv1d, conv_transpose2d and scaled_dot_product_attention through kiln.F,
and the Conv1d and ConvTranspose2d layers, against NumPy written from the
definitions."""
import unittest

import numpy as np

import kiln
import support


def conv1d_numpy(x, w, b, stride, padding):
    n, c, length = x.shape
    o, _, k = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding)))
    out = (length + 2 * padding - k) // stride + 1
    y = np.empty((n, o, out))
    for i in range(out):
        window = xp[:, :, i * stride:i * stride + k]
        y[:, :, i] = np.einsum("nck,ock->no", window, w)
    return y + b[None, :, None]


def conv_transpose2d_numpy(x, w, b, stride):
    n, c, h, wd = x.shape
    _, o, kh, kw = w.shape
    y = np.zeros((n, o, (h - 1) * stride + kh, (wd - 1) * stride + kw))
    for i in range(h):
        for j in range(wd):
            y[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw] += np.einsum("nc,cokl->nokl", x[:, :, i, j],
                                                                                        w)
    return y + b[None, :, None, None]


def attention_numpy(q, k, v, keep=None, causal=False, scale=None):
    scores = q @ np.swapaxes(k, -1, -2) * (1 / np.sqrt(q.shape[-1]) if scale is None else scale)
    if causal:
        keep = np.tril(np.ones(scores.shape[-2:], bool))
    if keep is not None:
        scores = np.where(keep, scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return weights / weights.sum(-1, keepdims=True) @ v


class Ops(unittest.TestCase):
    def test_conv1d(self):
        rng = np.random.default_rng(1)
        x, w, b = rng.standard_normal((2, 3, 9)), rng.standard_normal((4, 3, 3)), rng.standard_normal(4)
        y = kiln.F.conv1d(kiln.tensor(x), kiln.tensor(w), kiln.tensor(b), stride=[2], padding=[1])
        np.testing.assert_allclose(y.numpy(), conv1d_numpy(x, w, b, 2, 1), rtol=1e-12, atol=1e-12)

    def test_conv_transpose2d(self):
        rng = np.random.default_rng(2)
        x, w, b = rng.standard_normal((2, 3, 4, 3)), rng.standard_normal((3, 2, 3, 3)), rng.standard_normal(2)
        y = kiln.F.conv_transpose2d(kiln.tensor(x), kiln.tensor(w), kiln.tensor(b), stride=[2, 2])
        np.testing.assert_allclose(y.numpy(), conv_transpose2d_numpy(x, w, b, 2), rtol=1e-12, atol=1e-12)

    def test_scaled_dot_product_attention(self):
        rng = np.random.default_rng(3)
        q, k, v = (rng.standard_normal((2, 4, s, 8)) for s in (5, 7, 7))
        keep = rng.random((5, 7)) < 0.7
        keep[:, 0] = True
        t = [kiln.tensor(a) for a in (q, k, v)]
        np.testing.assert_allclose(kiln.F.scaled_dot_product_attention(*t).numpy(), attention_numpy(q, k, v),
                                   rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(kiln.F.scaled_dot_product_attention(*t, kiln.tensor(keep)).numpy(),
                                   attention_numpy(q, k, v, keep), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(kiln.F.scaled_dot_product_attention(*t[:3], None, is_causal=True).numpy(),
                                   attention_numpy(q, k, v, causal=True), rtol=1e-10, atol=1e-12)
        # scale=None (left out) is 1/sqrt(E); any given value is used as it is, 0 included.
        for scale in (None, 0.0, 0.25):
            np.testing.assert_allclose(kiln.F.scaled_dot_product_attention(*t, scale=scale).numpy(),
                                       attention_numpy(q, k, v, scale=scale), rtol=1e-10, atol=1e-12)

    def test_attention_dropout(self):
        # Equal scores give each of the 4 keys 1/4; with p = 0.5 a kept one is
        # worth 1/2, so value = the identity shows which were kept. One output,
        # as in PyTorch; the seed decides the mask.
        q, v = kiln.zeros(2, 3, 5), kiln.tensor(np.broadcast_to(np.eye(4, dtype=np.float32), (2, 4, 4)).copy())
        kiln.manual_seed(6)
        y = kiln.F.scaled_dot_product_attention(q, kiln.zeros(2, 4, 5), v, dropout_p=0.5).numpy()
        self.assertTrue(np.all((y == 0) | np.isclose(y, 0.5)))
        kiln.manual_seed(6)
        np.testing.assert_array_equal(
            kiln.F.scaled_dot_product_attention(q, kiln.zeros(2, 4, 5), v, dropout_p=0.5).numpy(), y)

    def test_attention_errors_name_the_op(self):
        q = kiln.ones(2, 4, 3)
        with self.assertRaisesRegex(kiln.ShapeMismatch, "scaled_dot_product_attention.*same last dim E"):
            kiln.F.scaled_dot_product_attention(q, kiln.ones(2, 4, 5), kiln.ones(2, 4, 3))
        with self.assertRaisesRegex(kiln.InvalidArgument, r"dropout_p must be in \[0, 1\), got 1.5"):
            kiln.F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)


class Layers(unittest.TestCase):
    def test_conv1d_layer(self):
        layer = kiln.layer("Conv1d", in_channels=3, out_channels=4, kernel_size=3, padding=1)
        params = layer.parameters()
        self.assertEqual(list(params), ["weight", "bias"])
        self.assertEqual(params["weight"].shape, (4, 3, 3))
        x = np.random.default_rng(4).standard_normal((2, 3, 6)).astype(np.float32)
        want = conv1d_numpy(x.astype(np.float64), params["weight"].numpy().astype(np.float64),
                            params["bias"].numpy().astype(np.float64), 1, 1)
        np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-5, atol=1e-5)

    def test_conv_transpose2d_layer(self):
        layer = kiln.layer("ConvTranspose2d", in_channels=3, out_channels=2, kernel_size=2, stride=2)
        params = layer.parameters()
        self.assertEqual(params["weight"].shape, (3, 2, 2, 2))
        x = np.random.default_rng(5).standard_normal((1, 3, 3, 4)).astype(np.float32)
        want = conv_transpose2d_numpy(x.astype(np.float64), params["weight"].numpy().astype(np.float64),
                                      params["bias"].numpy().astype(np.float64), 2)
        np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    support.main()
