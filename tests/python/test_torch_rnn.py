"""kiln's LSTM and GRU against torch.nn.LSTM and torch.nn.GRU: kiln's weights
saved with kiln.save_weights load into the PyTorch module with
load_state_dict(strict=True), and a PyTorch state_dict saved with
safetensors loads into kiln's layer (strict); both then give the same
output and final states, with and without initial states given, for
several layers, both directions, batch_first and LSTM's proj_size.

Needs torch and safetensors (the interpreter is KILN_REFERENCE_PYTHON);
skipped with the reason when they cannot be imported."""
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
INPUT, HIDDEN, STEPS, BATCH = 5, 6, 7, 3

# (type, options) pairs, each run with and without given states.
CONFIGS = [
    ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("LSTM", dict(num_layers=1, bias=False)),
    ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=3)),
    ("GRU", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(num_layers=3, batch_first=True)),
]


def torch_module(kind, options):
    return getattr(torch.nn, kind)(INPUT, HIDDEN, **options)


def kiln_module(rt, kind, options):
    return kiln.layer(kind, input_size=INPUT, hidden_size=HIDDEN, runtime=rt, **options)


def inputs(kind, options, with_states, seed=0):
    """The input and, with_states, h0 (and c0 for LSTM), as float32 arrays; h0 is proj_size wide when set."""
    rng = np.random.default_rng(seed)
    shape = (BATCH, STEPS, INPUT) if options.get("batch_first") else (STEPS, BATCH, INPUT)
    arrays = [rng.normal(size=shape).astype(np.float32)]
    if with_states:
        stacks = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
        widths = [options.get("proj_size") or HIDDEN] + ([HIDDEN] if kind == "LSTM" else [])
        for width in widths:
            arrays.append(rng.normal(size=(stacks, BATCH, width)).astype(np.float32))
    return arrays


def torch_outputs(model, kind, arrays):
    """PyTorch's (output, h_n[, c_n]) flattened as kiln gives them."""
    x = torch.from_numpy(arrays[0])
    states = [torch.from_numpy(a) for a in arrays[1:]]
    with torch.no_grad():
        if kind == "LSTM":
            output, (h, c) = model(x, tuple(states)) if states else model(x)
            return [output.numpy(), h.numpy(), c.numpy()]
        output, h = model(x, states[0]) if states else model(x)
        return [output.numpy(), h.numpy()]


class TorchRnn(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.rt = kiln.Runtime(seed=1)
        self.folder = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.folder.name, "rnn.safetensors")

    def tearDown(self):
        self.folder.cleanup()

    def assert_same(self, kiln_model, torch_model, kind, options, label):
        kiln_model.eval()
        torch_model.eval()
        for with_states in (False, True):
            arrays = inputs(kind, options, with_states)
            expected = torch_outputs(torch_model, kind, arrays)
            with kiln.no_grad(self.rt):
                got = [t.numpy() for t in kiln_model(*arrays)]
            self.assertEqual(len(got), len(expected))
            for name, mine, theirs in zip(("output", "h_n", "c_n"), got, expected):
                self.assertEqual(mine.shape, theirs.shape, f"{label} {name}")
                difference = float(np.abs(mine - theirs).max())
                print(f"{label} states={with_states}: {name} {list(mine.shape)}, max abs difference {difference:.3g}")
                self.assertLessEqual(difference, ATOL, f"{label} {name}")

    def test_kiln_weights_load_into_pytorch(self):
        for kind, options in CONFIGS:
            with self.subTest(kind=kind, **options):
                kiln_model, torch_model = kiln_module(self.rt, kind, options), torch_module(kind, options)
                kiln.save_weights(kiln_model, self.path)
                torch_model.load_state_dict(load_file(self.path), strict=True)
                self.assert_same(kiln_model, torch_model, kind, options, f"{kind} {options} kiln->pytorch")

    def test_pytorch_weights_load_into_kiln(self):
        for kind, options in CONFIGS:
            with self.subTest(kind=kind, **options):
                torch_model, kiln_model = torch_module(kind, options), kiln_module(self.rt, kind, options)
                save_file(torch_model.state_dict(), self.path)
                kiln.load_weights(kiln_model, self.path, strict=True)
                self.assert_same(kiln_model, torch_model, kind, options, f"{kind} {options} pytorch->kiln")

    def test_same_names_and_shapes_as_pytorch(self):
        for kind, options in CONFIGS:
            with self.subTest(kind=kind, **options):
                mine = {name: t.numpy().shape for name, t in kiln_module(self.rt, kind, options).parameters().items()}
                theirs = {name: tuple(t.shape) for name, t in torch_module(kind, options).state_dict().items()}
                self.assertEqual(list(mine), list(theirs))
                self.assertEqual(mine, theirs)


if __name__ == "__main__":
    support.main()
