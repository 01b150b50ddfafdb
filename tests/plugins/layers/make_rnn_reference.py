"""Writes the PyTorch reference of tests/plugins/layers/test_rnn.c into
tests/plugins/layers/data/: for each case, <case>_weights.safetensors (the
module's state_dict, as PyTorch names it) and, in rnn_io.safetensors, its
inputs and outputs under "<case>.<name>". Everything is float64.

    python tests/plugins/layers/make_rnn_reference.py

Needs torch and safetensors; run it again only when a case changes."""
import os

import torch
from safetensors.torch import save_file

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
INPUT, HIDDEN, STEPS, BATCH = 3, 4, 5, 2


def lstm_bidirectional():
    """2 layers, bidirectional, batch_first, given h0 and c0."""
    model = torch.nn.LSTM(INPUT, HIDDEN, num_layers=2, bidirectional=True, batch_first=True)
    x = torch.randn(BATCH, STEPS, INPUT)
    h0, c0 = torch.randn(4, BATCH, HIDDEN), torch.randn(4, BATCH, HIDDEN)
    output, (h, c) = model(x, (h0, c0))
    return model, {"input": x, "h0": h0, "c0": c0, "output": output, "h_n": h, "c_n": c}


def gru_bidirectional():
    """2 layers, bidirectional, time-major, given h0."""
    model = torch.nn.GRU(INPUT, HIDDEN, num_layers=2, bidirectional=True)
    x = torch.randn(STEPS, BATCH, INPUT)
    h0 = torch.randn(4, BATCH, HIDDEN)
    output, h = model(x, h0)
    return model, {"input": x, "h0": h0, "output": output, "h_n": h}


def lstm_unbatched():
    """1 layer without biases, an unbatched input, zero initial states."""
    model = torch.nn.LSTM(INPUT, HIDDEN, bias=False)
    x = torch.randn(STEPS, INPUT)
    output, (h, c) = model(x)
    return model, {"input": x, "output": output, "h_n": h, "c_n": c}


def gru_unbatched():
    """1 layer, batch_first (which an unbatched input ignores), zero h0."""
    model = torch.nn.GRU(INPUT, HIDDEN, batch_first=True)
    x = torch.randn(STEPS, INPUT)
    output, h = model(x)
    return model, {"input": x, "output": output, "h_n": h}


def lstm_projected():
    """2 layers, bidirectional, proj_size 2, given h0 [4, N, 2] and c0 [4, N, H]."""
    model = torch.nn.LSTM(INPUT, HIDDEN, num_layers=2, bidirectional=True, proj_size=2)
    x = torch.randn(STEPS, BATCH, INPUT)
    h0, c0 = torch.randn(4, BATCH, 2), torch.randn(4, BATCH, HIDDEN)
    output, (h, c) = model(x, (h0, c0))
    return model, {"input": x, "h0": h0, "c0": c0, "output": output, "h_n": h, "c_n": c}


# New cases go last: each draws from the one seeded generator after those before it.
CASES = {"lstm_bidirectional": lstm_bidirectional, "gru_bidirectional": gru_bidirectional,
         "lstm_unbatched": lstm_unbatched, "gru_unbatched": gru_unbatched, "lstm_projected": lstm_projected}


def main():
    torch.manual_seed(0)
    torch.set_default_dtype(torch.float64)
    io = {}
    for case, make in CASES.items():
        with torch.no_grad():
            model, tensors = make()
        save_file({k: v.contiguous() for k, v in model.state_dict().items()},
                  os.path.join(HERE, f"{case}_weights.safetensors"))
        io.update({f"{case}.{name}": t.contiguous() for name, t in tensors.items()})
    save_file(io, os.path.join(HERE, "rnn_io.safetensors"))


if __name__ == "__main__":
    main()
