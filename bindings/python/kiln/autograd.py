"""Grad mode and autocast: kiln keeps both per runtime and per thread."""
import ctypes
import functools

from ._library import lib
from .dtypes import DType, as_dtype
from .runtime import resolve


class no_grad:
    """Turns gradient recording off for a runtime (default: the default
    runtime) on this thread, as a context manager or a decorator:

        with kiln.no_grad():
            y = model(x)
    """

    def __init__(self, runtime=None):
        self._runtime = runtime

    def __enter__(self):
        self._active = resolve(self._runtime)
        lib.kiln_no_grad_begin(self._active._raw_address)
        return self

    def __exit__(self, *exc_info):
        lib.kiln_no_grad_end(self._active._raw_address)

    def __call__(self, function):
        @functools.wraps(function)
        def without_grad(*args, **kwargs):
            with no_grad(self._runtime):
                return function(*args, **kwargs)

        return without_grad


class autocast:
    """Mixed precision for a runtime (default: the default runtime) on this
    thread, as a context manager or a decorator: matrix products and
    convolutions run in `dtype` ("bf16" or "f16", or kiln.bfloat16 /
    kiln.float16) and give their results in it, precision-sensitive ops
    (softmax, losses, norms, exp, log, sums) run in f32; parameters and
    their gradients stay f32 (see kiln_autocast_begin in kiln.h):

        with kiln.autocast("bf16"):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
    """

    def __init__(self, dtype="bf16", runtime=None):
        self._dtype = as_dtype(dtype)
        self._runtime = runtime

    def __enter__(self):
        self._active = resolve(self._runtime)
        lib.kiln_autocast_begin(self._active._raw_address, int(self._dtype))
        return self

    def __exit__(self, *exc_info):
        lib.kiln_autocast_end(self._active._raw_address)

    def __call__(self, function):
        @functools.wraps(function)
        def with_autocast(*args, **kwargs):
            with autocast(self._dtype, self._runtime):
                return function(*args, **kwargs)

        return with_autocast


def autocast_dtype(runtime=None):
    """The dtype of the innermost autocast scope on this thread in `runtime`, kiln.float32 when none is open."""
    dtype = ctypes.c_int()
    lib.kiln_autocast_dtype(resolve(runtime)._address, ctypes.byref(dtype))
    return DType(dtype.value)


def grad_enabled(runtime=None):
    """Whether ops record gradients on this thread in `runtime`."""
    flag = ctypes.c_int()
    lib.kiln_grad_enabled(resolve(runtime)._address, ctypes.byref(flag))
    return bool(flag.value)


def backward(tensor, gradient=None, retain_graph=False):
    """Reverse mode from `tensor` (see Tensor.backward)."""
    tensor.backward(gradient, retain_graph)
