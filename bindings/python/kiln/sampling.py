"""Random tensors, drawn from the runtime's random stream (kiln.manual_seed
makes them repeatable)."""
from . import dtypes
from .ops import call_on
from .runtime import resolve
from .tensor import shape_argument


def _sample(op_name, shape, dtype, device, runtime, **distribution):
    return call_on(resolve(runtime), op_name, shape=shape_argument(shape), dtype=dtypes.as_dtype(dtype),
                   device=device, **distribution)


def rand(*shape, low=0.0, high=1.0, dtype=dtypes.DType.F32, device="cpu", runtime=None):
    """Uniform in [low, high)."""
    return _sample("rand", shape, dtype, device, runtime, low=low, high=high)


def randn(*shape, mean=0.0, std=1.0, dtype=dtypes.DType.F32, device="cpu", runtime=None):
    """Normal(mean, std)."""
    return _sample("randn", shape, dtype, device, runtime, mean=mean, std=std)
