"""Memory planning: what training a model at a batch size holds, and the
largest batch that fits (kiln_memory_estimate_get, kiln_find_batch_size).

    estimate = kiln.estimate_memory(model, (1, 28, 28), batch_size=64, optimizer=optimizer)
    print(estimate.total_bytes, estimate.activation_bytes)
    found = kiln.find_batch_size(model, (1, 28, 28), optimizer=optimizer, limit_bytes=1 << 30)
    print(found.batch_size, found.peak_bytes)

Both run trial steps (forward, loss, backward) on zero-filled batches of
inputs shaped (batch, *input_shape) on the model's device; a trial changes
nothing in the model, its gradients or the random stream. `loss` is an op
name ("cross_entropy" when None), `precision` "bf16" or "f16" (or the
dtype) runs forward and loss under autocast.
"""
import ctypes
import dataclasses

from . import _capi
from ._handle import handle_of
from ._library import lib
from .dtypes import as_dtype
from .modules import Module
from .optim import Optimizer


@dataclasses.dataclass(frozen=True)
class MemoryEstimate:
    """What training a model at one batch size holds, in bytes (kiln_memory_estimate)."""

    parameter_bytes: int
    buffer_bytes: int
    gradient_bytes: int
    optimizer_bytes: int
    activation_bytes: int
    total_bytes: int


@dataclasses.dataclass(frozen=True)
class BatchSizeResult:
    """The largest batch that fits, its trial's peak and the trials run (kiln_batch_size_result)."""

    batch_size: int
    peak_bytes: int
    tries: int


def _options(loss, optimizer, precision, limit_bytes=0, max_batch_size=0):
    return _capi.sized(_capi.MemoryPlanOptions, loss=None if loss is None else loss.encode(),
                       optimizer=handle_of(optimizer, Optimizer, "optimizer", optional=True),
                       precision=None if precision is None else str(as_dtype(precision)).encode(),
                       limit_bytes=limit_bytes, max_batch_size=max_batch_size)


def _shape(input_shape):
    dims = [int(d) for d in input_shape]
    return (ctypes.c_int64 * max(len(dims), 1))(*dims), len(dims)


def estimate_memory(model, input_shape, batch_size=1, loss=None, optimizer=None, precision=None):
    """Parameters, buffers, gradients, optimizer state and activations of
    training `model` at `batch_size`, from one trial step."""
    shape, rank = _shape(input_shape)
    options = _options(loss, optimizer, precision)
    out = _capi.sized(_capi.MemoryEstimate)
    lib.kiln_memory_estimate_get(handle_of(model, Module, "model"), shape, rank, batch_size, ctypes.byref(options),
                                 ctypes.byref(out))
    return _capi.to_dataclass(MemoryEstimate, out)


def find_batch_size(model, input_shape, loss=None, optimizer=None, limit_bytes=0, max_batch_size=0, precision=None):
    """The largest batch whose trial step neither runs out of memory nor
    holds more than `limit_bytes` (0: no limit but the device's, or the CPU
    cap of Runtime.set_memory_limit): doubling, then a binary search."""
    shape, rank = _shape(input_shape)
    options = _options(loss, optimizer, precision, limit_bytes, max_batch_size)
    out = _capi.sized(_capi.BatchSizeResult)
    lib.kiln_find_batch_size(handle_of(model, Module, "model"), shape, rank, ctypes.byref(options), ctypes.byref(out))
    return _capi.to_dataclass(BatchSizeResult, out)
