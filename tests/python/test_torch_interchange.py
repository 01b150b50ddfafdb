"""Weights cross between PyTorch and kiln as safetensors files, both ways:
a PyTorch state_dict saved with safetensors.torch.save_file loads into the
matching kiln model (kiln_weights_load, strict), and kiln's
kiln_weights_save file loads into the PyTorch model with
load_state_dict(strict=True); both then compute the same outputs. Models:
an MLP, a CNN with batch norm, MultiheadAttention (self- and
cross-attention, with and without biases) and a pre-norm
TransformerEncoderLayer.

Needs torch and safetensors (the interpreter is KILN_REFERENCE_PYTHON);
skipped with the reason when they cannot be imported."""
import collections
import os
import tempfile
import unittest

import support

support.require("numpy", "torch", "safetensors")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402

import kiln  # noqa: E402

ATOL = 1e-5


def torch_mlp():
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))


def kiln_mlp(rt):
    return kiln.Sequential(kiln.layer("Linear", in_features=4, out_features=8, runtime=rt),
                           kiln.layer("ReLU", runtime=rt),
                           kiln.layer("Linear", in_features=8, out_features=3, runtime=rt), runtime=rt)


class TorchCnn(torch.nn.Module):
    """Named children, so that the state_dict holds conv1.*, bn1.* (with its
    running statistics) and fc.*."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(4)
        self.relu = torch.nn.ReLU()
        self.pool = torch.nn.MaxPool2d(2)
        self.flatten = torch.nn.Flatten()
        self.fc = torch.nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        return self.fc(self.flatten(self.pool(self.relu(self.bn1(self.conv1(x))))))


def kiln_cnn(rt):
    return kiln.Sequential(collections.OrderedDict([
        ("conv1", kiln.layer("Conv2d", in_channels=1, out_channels=4, kernel_size=3, padding=1, runtime=rt)),
        ("bn1", kiln.layer("BatchNorm2d", num_features=4, runtime=rt)),
        ("relu", kiln.layer("ReLU", runtime=rt)),
        ("pool", kiln.layer("MaxPool2d", kernel_size=2, runtime=rt)),
        ("flatten", kiln.layer("Flatten", runtime=rt)),
        ("fc", kiln.layer("Linear", in_features=4 * 4 * 4, out_features=5, runtime=rt)),
    ]), runtime=rt)


EMBED, HEADS = 8, 2


class TorchAttention(torch.nn.MultiheadAttention):
    """Batch-first MultiheadAttention called as kiln's is: (x) for
    self-attention, (query, key, value) for cross-attention; the output only."""

    def __init__(self, bias):
        super().__init__(EMBED, HEADS, bias=bias, batch_first=True)

    def forward(self, query, key=None, value=None):
        if key is None:
            key = value = query
        return super().forward(query, key, value, need_weights=False)[0]


def kiln_attention(rt, bias):
    return kiln.layer("MultiHeadAttention", embed_dim=EMBED, num_heads=HEADS, bias=bias, runtime=rt)


def torch_encoder_layer():
    return torch.nn.TransformerEncoderLayer(EMBED, HEADS, dim_feedforward=2 * EMBED, dropout=0.0, activation="gelu",
                                            batch_first=True, norm_first=True)


def kiln_block(rt):
    return kiln.layer("TransformerBlock", embed_dim=EMBED, num_heads=HEADS, mlp_ratio=2.0, runtime=rt)


def arguments(x):
    """A model's inputs: one array, or a tuple of them."""
    return x if isinstance(x, tuple) else (x,)


def attention_inputs(cross, count=3):
    """[3, 5, E] arrays for self-attention; (query [3, 5, E], key and value
    [3, 7, E]) tuples for cross-attention."""
    queries = batches((3, 5, EMBED), count)
    if not cross:
        return queries
    keys, values = batches((3, 7, EMBED), count, seed=1), batches((3, 7, EMBED), count, seed=2)
    return list(zip(queries, keys, values))


def randomize_torch(model):
    """Every parameter U(-0.5, 0.5): biases start at zero in attention."""
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.uniform_(-0.5, 0.5)


def randomize_kiln(model, seed=3):
    rng = np.random.default_rng(seed)
    model.load_state_dict({name: rng.uniform(-0.5, 0.5, size=tensor.numpy().shape).astype(np.float32)
                           for name, tensor in model.parameters().items()}, strict=False)


def batches(shape, count=3, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape).astype(np.float32) for _ in range(count)]


class Interchange(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.rt = kiln.Runtime(seed=1)
        self.folder = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.folder.name, "weights.safetensors")

    def tearDown(self):
        self.folder.cleanup()

    def assert_same_outputs(self, torch_model, kiln_model, x, label):
        torch_model.eval()
        kiln_model.eval()
        with torch.no_grad():
            expected = torch_model(*map(torch.from_numpy, arguments(x))).numpy()
        with kiln.no_grad(self.rt):
            got = kiln_model(*arguments(x)).numpy()
        difference = float(np.abs(expected - got).max())
        print(f"{label}: outputs {got.shape}, max abs difference {difference:.3g}")
        self.assertLessEqual(difference, ATOL)

    def assert_same_state(self, torch_model, kiln_model, label):
        kiln_state = kiln_model.state_dict()
        torch_state = torch_model.state_dict()
        # kiln lists parameters, then buffers; PyTorch interleaves them by module.
        self.assertEqual(sorted(kiln_state), sorted(torch_state))
        for name, tensor in torch_state.items():
            mine = kiln_state[name].numpy()
            self.assertEqual(mine.shape, tuple(tensor.shape), name)
            self.assertEqual(mine.dtype, tensor.numpy().dtype, name)
            difference = float(np.abs(mine.astype(np.float64) - tensor.numpy().astype(np.float64)).max(initial=0))
            print(f"{label}: {name} {list(mine.shape)} {mine.dtype}, max abs difference {difference:.3g}")
            self.assertLessEqual(difference, ATOL, name)

    def torch_to_kiln(self, torch_model, kiln_model, inputs, label):
        torch_model.train()
        with torch.no_grad():
            for x in inputs:  # moves any running statistics away from their initial values
                torch_model(*map(torch.from_numpy, arguments(x)))
        save_file(torch_model.state_dict(), self.path)
        kiln.load_weights(kiln_model, self.path, strict=True)
        self.assert_same_state(torch_model, kiln_model, label)
        self.assert_same_outputs(torch_model, kiln_model, inputs[0], label)

    def kiln_to_torch(self, kiln_model, torch_model, inputs, label):
        kiln_model.train()
        for x in inputs:
            kiln_model(*arguments(x))
        kiln.save_weights(kiln_model, self.path)
        torch_model.load_state_dict(load_file(self.path), strict=True)
        self.assert_same_state(torch_model, kiln_model, label)
        self.assert_same_outputs(torch_model, kiln_model, inputs[0], label)

    def test_mlp_from_pytorch(self):
        self.torch_to_kiln(torch_mlp(), kiln_mlp(self.rt), batches((5, 4)), "mlp pytorch->kiln")

    def test_mlp_to_pytorch(self):
        self.kiln_to_torch(kiln_mlp(self.rt), torch_mlp(), batches((5, 4)), "mlp kiln->pytorch")

    def test_cnn_from_pytorch(self):
        torch_model, kiln_model = TorchCnn(), kiln_cnn(self.rt)
        self.torch_to_kiln(torch_model, kiln_model, batches((6, 1, 8, 8)), "cnn pytorch->kiln")
        self.assertEqual(kiln_model.buffers()["bn1.num_batches_tracked"].item(), 3)

    def test_cnn_to_pytorch(self):
        kiln_model, torch_model = kiln_cnn(self.rt), TorchCnn()
        self.kiln_to_torch(kiln_model, torch_model, batches((6, 1, 8, 8)), "cnn kiln->pytorch")
        state = load_file(self.path)
        self.assertEqual(state["bn1.num_batches_tracked"].dtype, torch.int64)
        self.assertEqual(state["bn1.num_batches_tracked"].shape, torch.Size([]))
        self.assertEqual(int(state["bn1.num_batches_tracked"]), 3)

    def test_batch_norm_updates_its_statistics_alike(self):
        torch_model, kiln_model = TorchCnn(), kiln_cnn(self.rt)
        save_file(torch_model.state_dict(), self.path)
        kiln.load_weights(kiln_model, self.path, strict=True)
        torch_model.train()
        kiln_model.train()
        for x in batches((6, 1, 8, 8), seed=1):
            with torch.no_grad():
                torch_model(torch.from_numpy(x))
            kiln_model(x)
        self.assert_same_state(torch_model, kiln_model, "cnn trained in both")

    def test_attention_from_pytorch(self):
        for bias in (True, False):
            for cross in (False, True):
                with self.subTest(bias=bias, cross=cross):
                    torch_model = TorchAttention(bias)
                    randomize_torch(torch_model)
                    label = f"attention {'cross' if cross else 'self'} bias={bias} pytorch->kiln"
                    self.torch_to_kiln(torch_model, kiln_attention(self.rt, bias), attention_inputs(cross), label)

    def test_attention_to_pytorch(self):
        for bias in (True, False):
            for cross in (False, True):
                with self.subTest(bias=bias, cross=cross):
                    kiln_model = kiln_attention(self.rt, bias)
                    randomize_kiln(kiln_model)
                    label = f"attention {'cross' if cross else 'self'} bias={bias} kiln->pytorch"
                    self.kiln_to_torch(kiln_model, TorchAttention(bias), attention_inputs(cross), label)

    def test_transformer_block_from_pytorch(self):
        torch_model = torch_encoder_layer()
        randomize_torch(torch_model)
        self.torch_to_kiln(torch_model, kiln_block(self.rt), attention_inputs(False), "transformer pytorch->kiln")

    def test_transformer_block_to_pytorch(self):
        kiln_model = kiln_block(self.rt)
        randomize_kiln(kiln_model)
        self.kiln_to_torch(kiln_model, torch_encoder_layer(), attention_inputs(False), "transformer kiln->pytorch")

    def test_strict_loading_names_what_does_not_match(self):
        save_file(torch_mlp().state_dict(), self.path)
        with self.assertRaisesRegex(kiln.InvalidArgument, r"missing from the file: conv1.weight, .*unexpected "
                                                          r"tensor\(s\) in the file: 0.bias, 0.weight"):
            kiln.load_weights(kiln_cnn(self.rt), self.path, strict=True)


if __name__ == "__main__":
    support.main()
