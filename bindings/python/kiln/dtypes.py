"""Element types: kiln's dtypes and their NumPy counterparts.

bf16 has no NumPy dtype. Rather than hand out its raw bits as uint16 (which
NumPy would then treat as integers), a bf16 tensor refuses `numpy()` with
kiln.Unsupported; cast it first: `t.to(kiln.float32).numpy()`.
"""
import enum

import numpy as np

from . import errors


class DType(enum.IntEnum):
    """kiln_dtype; str() gives kiln's short name ("f32")."""

    F32 = 0
    F64 = 1
    F16 = 2
    BF16 = 3
    I32 = 4
    I64 = 5
    U8 = 6
    BOOL = 7

    def __str__(self):
        return self.name.lower()

    def __repr__(self):
        return f"kiln.{_LONG_NAMES[self]}"


_LONG_NAMES = {
    DType.F32: "float32",
    DType.F64: "float64",
    DType.F16: "float16",
    DType.BF16: "bfloat16",
    DType.I32: "int32",
    DType.I64: "int64",
    DType.U8: "uint8",
    DType.BOOL: "bool_",
}
_TO_NUMPY = {
    DType.F32: np.dtype(np.float32),
    DType.F64: np.dtype(np.float64),
    DType.F16: np.dtype(np.float16),
    DType.I32: np.dtype(np.int32),
    DType.I64: np.dtype(np.int64),
    DType.U8: np.dtype(np.uint8),
    DType.BOOL: np.dtype(np.bool_),
}
_FROM_NUMPY = {np_dtype: dtype for dtype, np_dtype in _TO_NUMPY.items()}
_BY_NAME = {str(d): d for d in DType}
_BY_NAME.update({name: d for d, name in _LONG_NAMES.items()})
_BY_NAME["bool"] = DType.BOOL


def _known():
    return ", ".join(f"{d} ({_LONG_NAMES[d]})" for d in DType)


def from_numpy(np_dtype):
    """The kiln dtype of a NumPy dtype; InvalidArgument when kiln has none."""
    np_dtype = np.dtype(np_dtype)
    dtype = _FROM_NUMPY.get(np_dtype) if np_dtype.isnative else None
    if dtype is None:
        raise errors.InvalidArgument(f"NumPy dtype {np_dtype.str} ({np_dtype}) has no kiln dtype; kiln takes "
                                     f"{', '.join(map(str, _TO_NUMPY.values()))} in native byte order (convert with "
                                     f"array.astype(...))")
    return dtype


def to_numpy(dtype):
    """The NumPy dtype of a kiln dtype; Unsupported for bf16, which NumPy lacks."""
    dtype = DType(dtype)
    if dtype is DType.BF16:
        raise errors.Unsupported("bf16 has no NumPy dtype; cast the tensor first: t.to(kiln.float32).numpy()")
    return _TO_NUMPY[dtype]


def as_dtype(value):
    """A DType from a DType, a name ("f32", "float32") or a NumPy dtype."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        dtype = _BY_NAME.get(value)
        if dtype is None:
            raise errors.InvalidArgument(f"unknown dtype '{value}'; kiln has {_known()}")
        return dtype
    try:
        np_dtype = np.dtype(value)
    except TypeError:
        raise errors.InvalidArgument(f"expected a dtype (kiln.float32, 'f32', numpy.float32), got {value!r}") from None
    return from_numpy(np_dtype)
