"""Memory shared between NumPy arrays and kiln tensors, without copies.

In: kiln_tensor_wrap over an array's buffer, with a release callback that
keeps the array alive until the last tensor viewing it is gone (kiln may
call it on any thread, possibly long after the Python Tensor was closed).

Out: an ndarray over a contiguous CPU tensor's memory, whose base object
holds one reference on the tensor and drops it when NumPy collects it.
"""
import ctypes
import itertools

import numpy as np

from . import _capi
from ._library import lib

# key -> array whose memory a kiln tensor uses; the key is the callback's
# user_data. Dict operations are atomic under the GIL, which ctypes takes
# for the callback on whichever thread calls it.
_arrays_in_use = {}
_keys = itertools.count(1)  # from 1: a user_data of 0 would arrive as None


def _release_array(user_data, _data):
    _arrays_in_use.pop(user_data, None)


_RELEASE_ARRAY = _capi.ReleaseFn(_release_array)


def can_wrap(array):
    """Whether kiln may use the array's memory as it is: C-contiguous,
    aligned and writeable (kiln may write into a tensor's memory)."""
    flags = array.flags
    return flags.c_contiguous and flags.aligned and flags.writeable


def wrap(runtime_address, array, dtype):
    """A new tensor handle over `array`'s memory (see can_wrap)."""
    key = next(_keys)
    _arrays_in_use[key] = array
    shape = (ctypes.c_int64 * array.ndim)(*array.shape)
    out = ctypes.c_void_p()
    try:
        lib.kiln_tensor_wrap(runtime_address, array.ctypes.data, array.nbytes, shape, array.ndim, dtype,
                             _RELEASE_ARRAY, key, ctypes.byref(out))
    except BaseException:
        # On failure kiln never calls the release function: the array is ours again.
        del _arrays_in_use[key]
        raise
    return out.value


def copy_in(runtime_address, array, dtype):
    """A new tensor handle holding a copy of `array`."""
    array = np.ascontiguousarray(array)
    shape = (ctypes.c_int64 * array.ndim)(*array.shape)
    out = ctypes.c_void_p()
    lib.kiln_tensor_from_data(runtime_address, array.ctypes.data, array.nbytes, shape, array.ndim, dtype,
                              ctypes.byref(out))
    return out.value


class _TensorMemory:
    """The base object of an ndarray viewing a tensor's memory: it holds a
    reference on the tensor for as long as NumPy keeps the array."""

    def __init__(self, tensor_address, data, shape, np_dtype):
        lib.kiln_tensor_retain(tensor_address)
        self._release = lib.kiln_tensor_release
        self._address = tensor_address
        self.__array_interface__ = {"version": 3, "shape": shape, "typestr": np_dtype.str, "data": (data, False)}

    def __del__(self):
        self._release(self._address)


def view(contiguous_address, shape, np_dtype):
    """An ndarray over a contiguous CPU tensor's memory, without a copy."""
    data = ctypes.c_void_p()
    lib.kiln_tensor_data(contiguous_address, ctypes.byref(data))
    if data.value is None:  # no elements, no memory
        return np.empty(shape, np_dtype)
    return np.asarray(_TensorMemory(contiguous_address, data.value, shape, np_dtype))


def copy_out(tensor_address, shape, np_dtype):
    """A new ndarray holding a copy of the tensor's elements (any layout, any device)."""
    array = np.empty(shape, np_dtype)
    lib.kiln_tensor_read(tensor_address, array.ctypes.data, array.nbytes)
    return array
