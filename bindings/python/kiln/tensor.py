"""kiln.Tensor: a reference on a kiln tensor, with NumPy interchange,
autograd, arithmetic, and every op of its runtime as a method.

numpy() views the tensor's memory without a copy when the tensor is a
contiguous CPU tensor (the array keeps the tensor alive), and copies
otherwise (strided views, GPU tensors). bf16 tensors refuse numpy() with
kiln.Unsupported, since NumPy has no bf16: cast them first.
"""
import ctypes
import importlib
import numbers

import numpy as np

from . import _capi, _numpy_memory, devices, dtypes, errors
from ._handle import Handle
from ._library import lib


# ops and creation build on Tensor, so they are imported when first needed;
# the module of op calls by its full name, since the package's `ops` is
# the listing function kiln.ops().
def _ops():
    return importlib.import_module(".ops", __package__)


def _op_listing():
    from . import op_listing
    return op_listing


def _as_tensor(value, runtime, like):
    from .creation import as_tensor
    return as_tensor(value, runtime, like)


def _dims(dims):
    """An op's "dims" attribute from a dim argument: None (all), an int or a sequence."""
    if dims is None:
        return None
    return [dims] if isinstance(dims, numbers.Integral) else list(dims)


def shape_argument(args):
    """A shape given as separate integers or as one sequence: zeros(2, 3)
    and zeros((2, 3)), reshape(2, 3) and reshape((2, 3)) alike."""
    shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    if not all(isinstance(d, numbers.Integral) for d in shape):
        raise errors.InvalidArgument(f"a shape is a sequence of integers, got {tuple(shape)!r}")
    return list(shape)


class Tensor(Handle):
    """A kiln tensor. Made by kiln.tensor(), kiln.from_numpy(), kiln.zeros(),
    ops, modules and loaders; closed by close(), `with`, or when collected."""

    _release_function = "kiln_tensor_release"

    def _new(self, address):
        return Tensor(address, self._runtime)

    def _new_reference(self):
        """Another Tensor object on the same tensor (one more kiln reference)."""
        lib.kiln_tensor_retain(self._ptr)
        return self._new(self._address)

    def _out(self, function, *arguments):
        """The tensor handle a kiln_tensor_* function returns, as a Tensor."""
        out = ctypes.c_void_p()
        function(self._ptr, *arguments, ctypes.byref(out))
        return None if out.value is None else self._new(out.value)

    # ---- queries ----------------------------------------------------------------

    @property
    def shape(self):
        rank = ctypes.c_int()
        lib.kiln_tensor_rank(self._ptr, ctypes.byref(rank))
        dims = (ctypes.c_int64 * _capi.MAX_DIMS)()
        lib.kiln_tensor_shape(self._ptr, dims, _capi.MAX_DIMS)
        return tuple(dims[: rank.value])

    @property
    def ndim(self):
        rank = ctypes.c_int()
        lib.kiln_tensor_rank(self._ptr, ctypes.byref(rank))
        return rank.value

    def numel(self):
        n = ctypes.c_int64()
        lib.kiln_tensor_numel(self._ptr, ctypes.byref(n))
        return n.value

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-dimensional tensor")
        return shape[0]

    @property
    def dtype(self):
        dtype = ctypes.c_int()
        lib.kiln_tensor_dtype(self._ptr, ctypes.byref(dtype))
        return dtypes.DType(dtype.value)

    def _device(self):
        device_type, index = ctypes.c_int(), ctypes.c_int()
        lib.kiln_tensor_device(self._ptr, ctypes.byref(device_type), ctypes.byref(index))
        return device_type.value, index.value

    @property
    def device(self):
        """"cpu" or "cuda:<index>"."""
        return devices.describe(*self._device())

    # ---- NumPy and Python values --------------------------------------------------

    def numpy(self):
        """The elements as an ndarray: a view of the tensor's memory for a
        contiguous CPU tensor, a copy otherwise."""
        np_dtype = dtypes.to_numpy(self.dtype)
        shape = self.shape
        if self._device()[0] != _capi.DEVICE_CPU:
            return _numpy_memory.copy_out(self._ptr, shape, np_dtype)
        # A new reference on this very tensor when it is contiguous, a contiguous copy otherwise.
        with self.contiguous() as contiguous:
            return _numpy_memory.view(contiguous._ptr, shape, np_dtype)

    def __array__(self, dtype=None):
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise errors.InvalidArgument(f"item() needs a tensor with one element, this one has shape {self.shape}")
        return self.numpy().reshape(()).item()

    def tolist(self):
        return self.numpy().tolist()

    # ---- copies, views and conversions ----------------------------------------------

    def contiguous(self):
        """This tensor (a new reference) when contiguous, a contiguous copy otherwise."""
        return self._out(lib.kiln_tensor_contiguous)

    def detach(self):
        """A tensor on the same memory without autograd history."""
        return self._out(lib.kiln_tensor_detach)

    def to(self, target):
        """A copy on another device ("cpu", "cuda:0"; this tensor, as a new
        reference, when it is there already) or converted to another dtype
        (kiln.float64, "f16"). Gradients flow through either."""
        if isinstance(target, str) and target.partition(":")[0] in ("cpu", "cuda"):
            return self._out(lib.kiln_tensor_to, *devices.parse(target))
        dtype = dtypes.as_dtype(target)
        return _ops().call("cast", self, dtype=dtype)

    def cpu(self):
        return self.to("cpu")

    def copy_(self, source):
        """Copies `source` (a Tensor, an array or a number) into this tensor in
        place, converting dtype and device; not recorded for gradients."""
        with _as_tensor(source, self._runtime, self) as src:
            lib.kiln_tensor_assign(self._ptr, src._ptr)
        return self

    # ---- autograd ----------------------------------------------------------------------

    @property
    def requires_grad(self):
        flag = ctypes.c_int()
        lib.kiln_tensor_requires_grad(self._ptr, ctypes.byref(flag))
        return bool(flag.value)

    @requires_grad.setter
    def requires_grad(self, value):
        lib.kiln_tensor_set_requires_grad(self._ptr, bool(value))

    def requires_grad_(self, value=True):
        self.requires_grad = value
        return self

    @property
    def grad(self):
        """The gradient accumulated by backward, or None. Assigning replaces
        it (see set_grad); assigning None drops it."""
        return self._out(lib.kiln_tensor_grad)

    @grad.setter
    def grad(self, value):
        self.set_grad(value)

    def set_grad(self, grad):
        """Replaces the gradient of this leaf that requires grad with a copy of
        `grad` (a Tensor, an ndarray or a nested list of numbers, of this
        tensor's shape, dtype and device), or drops it when `grad` is None."""
        if grad is None:
            lib.kiln_tensor_set_grad(self._ptr, None)
            return
        with _as_tensor(grad, self._runtime, self) as value:
            lib.kiln_tensor_set_grad(self._ptr, value._ptr)

    def zero_grad(self):
        """Drops the accumulated gradient."""
        lib.kiln_tensor_zero_grad(self._ptr)

    def backward(self, gradient=None, retain_graph=False):
        """Reverse mode from this tensor; `gradient` seeds it (default 1 for
        a one-element tensor)."""
        if gradient is None:
            self._backward(None, retain_graph)
        else:
            with _as_tensor(gradient, self._runtime, self) as seed:
                self._backward(seed._ptr, retain_graph)

    def _backward(self, seed_handle, retain_graph):
        # The tensor holds the C runtime (see runtime.resolve).
        lib.kiln_backward(self._runtime._raw_address, self._ptr, seed_handle, bool(retain_graph))

    # ---- arithmetic through ops --------------------------------------------------------

    # NumPy hands `array + tensor` (and -, *, /, @) to the Tensor's reflected
    # operators, so mixed arithmetic runs in kiln and gives a Tensor.
    __array_ufunc__ = None

    def _binary(self, name, other, reverse=False):
        with _as_tensor(other, self._runtime, self) as other:
            return _ops().call(name, *((other, self) if reverse else (self, other)))

    def __add__(self, other):
        if isinstance(other, numbers.Real):
            return _ops().call("add_scalar", self, value=other)
        return self._binary("add", other)

    __radd__ = __add__

    def __sub__(self, other):
        if isinstance(other, numbers.Real):
            return _ops().call("add_scalar", self, value=-other)
        return self._binary("sub", other)

    def __rsub__(self, other):
        return self._binary("sub", other, reverse=True)

    def __mul__(self, other):
        if isinstance(other, numbers.Real):
            return _ops().call("mul_scalar", self, value=other)
        return self._binary("mul", other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, numbers.Real):
            return _ops().call("mul_scalar", self, value=1.0 / other)
        return self._binary("div", other)

    def __rtruediv__(self, other):
        return self._binary("div", other, reverse=True)

    def __matmul__(self, other):
        return self._binary("matmul", other)

    def __rmatmul__(self, other):
        return self._binary("matmul", other, reverse=True)

    def __neg__(self):
        return _ops().call("neg", self)

    def reshape(self, *shape):
        return _ops().call("reshape", self, shape=shape_argument(shape))

    def permute(self, *dims):
        return _ops().call("permute", self, dims=shape_argument(dims))

    def transpose(self, dim0, dim1):
        return _ops().call("transpose", self, dim0=dim0, dim1=dim1)

    def sum(self, dim=None, keepdim=False):
        return _ops().call("sum", self, dims=_dims(dim), keepdim=keepdim)

    def mean(self, dim=None, keepdim=False):
        return _ops().call("mean", self, dims=_dims(dim), keepdim=keepdim)

    def max(self, dim=None, keepdim=False):
        return _ops().call("max", self, dims=_dims(dim), keepdim=keepdim)

    # ---- every op of the runtime as a method ---------------------------------------------

    def __getattr__(self, name):
        """Every op of this tensor's runtime that takes a first input,
        plugins' ops included, is a method, unless a method above has its
        name: x.abs(), x.maximum(y), x.split(1, [2, 3]), x.softplus(beta=2)
        are kiln.F.abs(x), kiln.F.maximum(x, y), ... with the same arguments
        after x (see kiln.ops for what each op takes)."""
        if name.startswith("_"):  # Python's and NumPy's probes, and attributes not set yet
            raise AttributeError(name)
        listing = _op_listing()
        try:
            info = listing.describe(self._runtime, name)
        except errors.NotFound as unknown:
            raise AttributeError(f"kiln.Tensor has no attribute '{name}', and its runtime no such op "
                                 f"({unknown})") from None
        if not info.inputs:
            raise AttributeError(f"kiln.Tensor has no attribute '{name}': op {info.signature()} takes no input")

        def method(*args, **attrs):
            return _ops().call(name, self, *args, **attrs)

        method.__name__ = name
        method.__doc__ = f"kiln.F.{info.signature()}, with this tensor as '{info.inputs[0].name}'."
        return method

    def __dir__(self):
        ops = [op.name for op in _op_listing().ops(runtime=self._runtime) if op.inputs]
        return sorted(set(super().__dir__()) | set(ops))

    def __repr__(self):
        if self.closed:
            return "kiln.Tensor(closed)"
        head = f"shape={self.shape}, dtype={self.dtype}, device={self.device}"
        if self.dtype is dtypes.DType.BF16 or self.numel() > 64:
            return f"kiln.Tensor({head})"
        values = np.array2string(self.numpy(), separator=", ", prefix="kiln.Tensor(")
        return f"kiln.Tensor({values}, {head})"
