"""Checks that kiln's TransformerBlock computes what PyTorch's
nn.TransformerEncoderLayer(128, 4, 512, dropout=0, activation="gelu",
norm_first=True, batch_first=True) with a causal mask does, as the
char_transformer model of the suite takes them to: the block is given
PyTorch's parameters under PyTorch's names (the load is strict, so the names
and shapes must all match) and both run the same random input. Prints the
largest difference of the outputs; exits non-zero when it is over 1e-4.

  python bench/suite/check_transformer_block.py

kiln's package finds libkiln.so through KILN_LIBRARY (bench/suite/compare.py sets it).
"""
import sys

import kiln
import torch
from torch import nn

WIDTH, HEADS, TOKENS, TOLERANCE = 128, 4, 16, 1e-4


def main():
    torch.manual_seed(0)
    reference = nn.TransformerEncoderLayer(WIDTH, HEADS, 4 * WIDTH, dropout=0, activation="gelu", norm_first=True,
                                           batch_first=True).eval()
    block = kiln.layer("TransformerBlock", embed_dim=WIDTH, num_heads=HEADS, causal=True).eval()
    block.load_state_dict({name: value.detach().numpy() for name, value in reference.state_dict().items()})

    x = torch.randn(2, TOKENS, WIDTH)
    with torch.no_grad():
        expected = reference(x, src_mask=nn.Transformer.generate_square_subsequent_mask(TOKENS), is_causal=True)
    with kiln.no_grad():
        got = block(kiln.tensor(x.numpy())).numpy()
    difference = float(abs(torch.from_numpy(got) - expected).max())
    parameters = sum(p.numel() for p in reference.parameters())
    print(f"TransformerBlock against nn.TransformerEncoderLayer ({parameters} parameters each): "
          f"largest output difference {difference:.2e}")
    return 0 if difference <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
