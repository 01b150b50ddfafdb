"""Grad mode: kiln records gradients per runtime and per thread."""
import ctypes
import functools

from ._library import lib
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


def grad_enabled(runtime=None):
    """Whether ops record gradients on this thread in `runtime`."""
    flag = ctypes.c_int()
    lib.kiln_grad_enabled(resolve(runtime)._address, ctypes.byref(flag))
    return bool(flag.value)


def backward(tensor, gradient=None, retain_graph=False):
    """Reverse mode from `tensor` (see Tensor.backward)."""
    tensor.backward(gradient, retain_graph)
