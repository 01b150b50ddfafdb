"""What the Python tests share: running a test file as one CTest test,
skipping one whose interpreter lacks a module, and a small problem to
train on."""
import importlib
import sys
import unittest

# CTest's SKIP_RETURN_CODE for these tests.
SKIPPED = 77


def require(*modules):
    """Exits with SKIPPED, saying why, unless every module can be imported."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as e:
            print(f"skipped: {sys.executable} cannot import {name} ({e})")
            sys.exit(SKIPPED)


def main():
    unittest.main(verbosity=2)


def blobs(n=256, seed=0):
    """Two Gaussian blobs in the plane, classes alternating: inputs f32[n, 2]
    around (-2, -2) for class 0 and (2, 2) for class 1, targets i64[n]."""
    import numpy as np

    rng = np.random.default_rng(seed)
    targets = (np.arange(n) % 2).astype(np.int64)
    centres = np.where(targets[:, None] == 1, 2.0, -2.0)
    inputs = (centres + rng.normal(size=(n, 2))).astype(np.float32)
    return inputs, targets
