"""The models of the CPU comparison suite, PyTorch's side (bench/suite/models.lua
is kiln's, with the same layers, optimizers and batches).

MODELS maps a name to a Model: its batch, the shape of one example, the classes
(targets are class ids), whether the input is token ids (below `vocabulary`),
the unit a rate counts, and the functions that build the network and its
optimizer.
"""
import os
import sys
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from torch_fashion_mnist import network as fashion_cnn  # noqa: E402 (bench/ is on the path only now)


def sgd(parameters):
    return torch.optim.SGD(parameters, lr=0.01, momentum=0.9)


def adam(parameters):
    return torch.optim.Adam(parameters, lr=1e-3)


def adamw(parameters):
    return torch.optim.AdamW(parameters, lr=1e-3, weight_decay=1e-2)


@dataclass
class Model:
    batch: int
    input: Tuple[int, ...]
    build: Callable[[], nn.Module]
    optimizer: Callable
    classes: int = 10
    vocabulary: Optional[int] = None
    unit: str = "samples"


def small_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 10, 5), nn.MaxPool2d(2), nn.ReLU(),
        nn.Conv2d(10, 20, 5), nn.MaxPool2d(2), nn.ReLU(),
        nn.Flatten(), nn.Linear(320, 50), nn.ReLU(), nn.Linear(50, 10))


def mlp():
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))


def separable(c_in, c_out):
    """kiln's DepthwiseSeparableConv2d: a 3x3 depthwise convolution, then a 1x1 one."""
    return nn.Sequential(nn.Conv2d(c_in, c_in, 3, padding=1, groups=c_in), nn.Conv2d(c_in, c_out, 1))


def separable_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        separable(16, 32), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        separable(32, 64), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(64, 10))


class CharTransformer(nn.Module):
    """Embedding, two causal pre-norm encoder layers, LayerNorm and the output
    layer; the scores come as [B, V, T], as cross_entropy takes them."""

    def __init__(self, vocabulary=65, width=128, heads=4, blocks=2):
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, width)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0, activation="gelu", norm_first=True,
                                       batch_first=True) for _ in range(blocks))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocabulary)

    def forward(self, tokens):
        x = self.embedding(tokens)
        mask = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1])
        for block in self.blocks:
            x = block(x, src_mask=mask, is_causal=True)
        return self.head(self.norm(x)).transpose(1, 2)


class CharLSTM(nn.Module):
    """examples/char_lstm.lua's network: embedding, a 2-layer LSTM and the
    output layer; the scores come as [B, V, T]."""

    def __init__(self, vocabulary=65, width=64, layers=2):
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, width)
        self.lstm = nn.LSTM(width, width, layers, batch_first=True)
        self.head = nn.Linear(width, vocabulary)

    def forward(self, tokens):
        return self.head(self.lstm(self.embedding(tokens))[0]).transpose(1, 2)


class BasicBlock(nn.Module):
    """ResNet-18's block: two 3x3 convolutions with batch norm, and the input
    added back (through a strided 1x1 convolution when the shape changes)."""

    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(),
            nn.Conv2d(c_out, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out))
        self.shortcut = nn.Identity()
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride=stride, bias=False), nn.BatchNorm2d(c_out))

    def forward(self, x):
        return torch.relu(self.body(x) + self.shortcut(x))


def resnet18():
    """ResNet-18 for 32x32 images: a 3x3 stem without max-pooling."""
    layers = [nn.Conv2d(3, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU()]
    channels = 64
    for width in (64, 128, 256, 512):
        layers += [BasicBlock(channels, width, 1 if width == channels else 2), BasicBlock(width, width, 1)]
        channels = width
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10))


MODELS = {
    "fashion_cnn": Model(64, (1, 28, 28), fashion_cnn, sgd),
    "small_cnn": Model(64, (1, 28, 28), small_cnn, sgd),
    "mlp": Model(128, (784,), mlp, adam),
    "char_transformer": Model(32, (64,), CharTransformer, adamw, classes=65, vocabulary=65, unit="tokens"),
    "char_lstm": Model(32, (64,), CharLSTM, adamw, classes=65, vocabulary=65, unit="tokens"),
    "separable_cnn": Model(128, (1, 28, 28), separable_cnn, adamw),
    "resnet18": Model(32, (3, 32, 32), resnet18, sgd),
}
