"""Checkpoints as safetensors files, which PyTorch and the Hugging Face
ecosystem read and write as they are. Every file is written atomically
(a temporary file, flushed, renamed over the path); reading checks the
whole header before anything is read or changed. Training states are
saved and loaded by Trainer.save and Trainer.load.
"""
import ctypes
import os

from ._handle import handle_of
from ._library import lib
from .data import Example, take_example
from .modules import Module
from .runtime import resolve
from .tensor import Tensor


def save_safetensors(tensors, path, runtime=None):
    """Writes {name: Tensor or ndarray} (or an Example) to `path`."""
    if not isinstance(tensors, Example):
        owner = next((t.runtime for t in tensors.values() if isinstance(t, Tensor)), None)
        tensors = Example._for(tensors, owner) if runtime is None and owner else Example(tensors, runtime)
    lib.kiln_safetensors_save(tensors._ptr, os.fsencode(path))


def load_safetensors(path, runtime=None):
    """Every tensor of a safetensors file, {name: CPU Tensor} in the file's order."""
    runtime = resolve(runtime)
    out = ctypes.c_void_p()
    lib.kiln_safetensors_load(runtime._raw_address, os.fsencode(path), ctypes.byref(out))
    return take_example(out.value, runtime)


def save_weights(model, path):
    """The parameters and buffers of `model` under PyTorch's state_dict names, each in its own dtype."""
    lib.kiln_weights_save(handle_of(model, Module, "model"), os.fsencode(path))


def load_weights(model, path, strict=True):
    """Loads a weights file (kiln's or PyTorch's, saved with
    safetensors.torch.save_file) into `model`, converting dtypes. strict:
    the file holds exactly the model's names. All or nothing."""
    lib.kiln_weights_load(handle_of(model, Module, "model"), os.fsencode(path), bool(strict))
