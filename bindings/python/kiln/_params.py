"""Parameters passed to optimizers and strategies: a module, a {name: Tensor}
dict or Tensors, as a list of Tensors and as a C array of handles."""
import ctypes

from . import errors
from .modules import Module
from .tensor import Tensor


def parameter_list(params):
    if isinstance(params, Module):
        params = params.parameters()
    if isinstance(params, dict):
        params = params.values()
    tensors = list(params)
    for t in tensors:
        if not isinstance(t, Tensor):
            raise errors.InvalidArgument(f"parameters are kiln Tensors, got {type(t).__name__}")
    return tensors


def handle_array(tensors):
    """A kiln_tensor* const* array of `tensors`."""
    return (ctypes.c_void_p * len(tensors))(*[t._ptr for t in tensors])
