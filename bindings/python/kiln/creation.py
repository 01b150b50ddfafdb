"""Making tensors: from NumPy arrays and Python values, and filled.

Zero-copy rule: kiln.from_numpy(a) and kiln.tensor(a) use the memory of an
ndarray `a` without a copy when `a` is C-contiguous, aligned, writeable and
of a kiln dtype (float32, float64, float16, int32, int64, uint8, bool) in
native byte order; writes on either side are then seen by the other, and
the array stays alive as long as any tensor views it. Other layouts, and
read-only arrays, are copied; other dtypes are refused (kiln.tensor
converts them when given dtype=).
"""
import ctypes

import numpy as np

from . import _numpy_memory, devices, dtypes, errors
from ._library import lib
from .runtime import resolve
from .tensor import Tensor, shape_argument


def _array_tensor(array, runtime):
    """A tensor of `runtime` over `array`, or holding a copy of it."""
    dtype = dtypes.from_numpy(array.dtype)
    make = _numpy_memory.wrap if _numpy_memory.can_wrap(array) else _numpy_memory.copy_in
    return Tensor(make(runtime._raw_address, array, dtype), runtime)


def from_numpy(array, runtime=None):
    """A CPU tensor over `array`'s memory (see the zero-copy rule above)."""
    if not isinstance(array, np.ndarray):
        raise errors.InvalidArgument(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    return _array_tensor(array, resolve(runtime))


def _default_array(data):
    """A Python value as an ndarray, with PyTorch's defaults: floats as
    float32, integers as int64."""
    array = np.asarray(data)
    if array.dtype.kind not in "biuf":  # strings, dicts, ragged lists, ...
        raise errors.InvalidArgument(f"cannot make a tensor from {type(data).__name__} {data!r}; expected a "
                                     f"kiln.Tensor, an ndarray, a number or a nested list of numbers")
    if array.dtype == np.float64:
        return array.astype(np.float32)
    if array.dtype.kind in "iu" and array.dtype != np.uint8:
        return array.astype(np.int64)
    return array


def _value_tensor(data, dtype, runtime):
    """A tensor of `runtime` from an ndarray, a list or a number, of `dtype` when given."""
    array = data if isinstance(data, np.ndarray) else _default_array(data)
    target = None if dtype is None else dtypes.as_dtype(dtype)
    if target is not None and target is not dtypes.DType.BF16:
        np_target = dtypes.to_numpy(target)
        if array.dtype != np_target:
            array = array.astype(np_target)
    result = _array_tensor(array, runtime)
    if target is dtypes.DType.BF16:
        with result:
            result = result.to(target)
    return result


def tensor(data, dtype=None, device="cpu", requires_grad=False, runtime=None):
    """A tensor from an ndarray (shared as from_numpy does when no dtype
    conversion is asked for), a nested list or a number (float32, int64 or
    bool by default), or a Tensor (the same tensor, or converted)."""
    if isinstance(data, Tensor):
        result = data.to(dtype) if dtype is not None else data._new_reference()
    else:
        result = _value_tensor(data, dtype, resolve(runtime))
    if device != "cpu":
        with result:
            result = result.to(device)
    if requires_grad:
        result.requires_grad = True
    return result


def as_tensor(value, runtime, like=None):
    """`value` as a Tensor of `runtime`, for an object of that runtime: a
    Tensor as it is (a new reference), an ndarray shared, a number or a
    list made with the dtype of `like` when given."""
    if isinstance(value, Tensor):
        return value._new_reference()
    use_like = like is not None and not isinstance(value, np.ndarray) and like.dtype is not dtypes.DType.BOOL
    return _value_tensor(value, like.dtype if use_like else None, runtime)


def _filled(function, shape, dtype, device, runtime, *value):
    runtime = resolve(runtime)
    dims = shape_argument(shape)
    device_type, index = devices.parse(device)
    out = ctypes.c_void_p()
    function(runtime._raw_address, (ctypes.c_int64 * len(dims))(*dims), len(dims), *value, dtypes.as_dtype(dtype),
             device_type, index, ctypes.byref(out))
    return Tensor(out.value, runtime)


def empty(*shape, dtype=dtypes.DType.F32, device="cpu", runtime=None):
    """An uninitialised tensor."""
    return _filled(lib.kiln_tensor_empty, shape, dtype, device, runtime)


def zeros(*shape, dtype=dtypes.DType.F32, device="cpu", runtime=None):
    return _filled(lib.kiln_tensor_zeros, shape, dtype, device, runtime)


def full(shape, value, dtype=dtypes.DType.F32, device="cpu", runtime=None):
    return _filled(lib.kiln_tensor_full, (shape,), dtype, device, runtime, float(value))


def ones(*shape, dtype=dtypes.DType.F32, device="cpu", runtime=None):
    return full(shape_argument(shape), 1.0, dtype=dtype, device=device, runtime=runtime)
