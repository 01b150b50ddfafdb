"""Python values as kiln_attr arrays: the attributes of an op call and the
configurations of layers, optimizers, schedules, sources, transforms and
strategies.

bool -> BOOL, int -> INT, float -> FLOAT, str -> STRING, a kiln dtype or a
NumPy dtype -> DTYPE, a list or tuple of numbers -> INTS when every entry is
an int, else FLOATS, a Tensor or an ndarray -> TENSOR (configurations
only). None leaves the attribute out, so it takes its default.
"""
import ctypes
import numbers

import numpy as np

from . import _capi, dtypes, errors
from .creation import from_numpy
from .tensor import Tensor


def _is_integer(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_, dtypes.DType))


def _is_dtype(value):
    return isinstance(value, (dtypes.DType, np.dtype)) or (isinstance(value, type) and issubclass(value, np.generic))


class AttrList:
    """A kiln_attr array built from a dict; it keeps every name, string,
    list and tensor the array points at alive as long as it lives."""

    def __init__(self, values, runtime=None):
        self._runtime = runtime
        self._keep = []
        items = [(name, value) for name, value in values.items() if value is not None]
        self._array = (_capi.Attr * len(items))()
        for attr, (name, value) in zip(self._array, items):
            if not isinstance(name, str):
                raise errors.InvalidArgument(f"attribute names are strings, got {name!r}")
            attr.name = self._bytes(name)
            self._fill(attr, name, value)

    def __len__(self):
        return len(self._array)

    @property
    def array(self):
        """The kiln_attr* to pass (NULL when empty)."""
        return self._array if len(self._array) else None

    def _bytes(self, text):
        raw = text.encode()
        self._keep.append(raw)
        return raw

    def _fill(self, attr, name, value):
        # DType is an IntEnum and bool an int: both are tested before int.
        if isinstance(value, (bool, np.bool_)):
            attr.type, attr.value.b = _capi.ATTR_BOOL, bool(value)
        elif _is_dtype(value):
            attr.type, attr.value.dtype = _capi.ATTR_DTYPE, dtypes.as_dtype(value)
        elif _is_integer(value):
            attr.type, attr.value.i = _capi.ATTR_INT, int(value)
        elif isinstance(value, numbers.Real):
            attr.type, attr.value.f = _capi.ATTR_FLOAT, float(value)
        elif isinstance(value, str):
            attr.type, attr.value.s = _capi.ATTR_STRING, self._bytes(value)
        elif isinstance(value, (Tensor, np.ndarray)):
            tensor = value if isinstance(value, Tensor) else from_numpy(value, runtime=self._runtime)
            self._keep.append(tensor)
            attr.type, attr.value.tensor = _capi.ATTR_TENSOR, tensor._ptr
        elif isinstance(value, (list, tuple)):
            self._fill_list(attr, name, value)
        else:
            raise errors.InvalidArgument(
                f"attribute '{name}': expected a number, a bool, a string, a dtype, a list of numbers or a tensor, "
                f"got {type(value).__name__}")

    def _fill_list(self, attr, name, values):
        if not all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in values):
            raise errors.InvalidArgument(f"attribute '{name}': expected a list of numbers, got {list(values)!r}")
        if all(_is_integer(v) for v in values):
            array = (ctypes.c_int64 * len(values))(*values)
            attr.type, attr.value.ints.data, attr.value.ints.len = _capi.ATTR_INTS, array, len(values)
        else:
            array = (ctypes.c_double * len(values))(*values)
            attr.type, attr.value.floats.data, attr.value.floats.len = _capi.ATTR_FLOATS, array, len(values)
        self._keep.append(array)
