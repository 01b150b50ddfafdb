"""Devices as strings, as PyTorch writes them: "cpu", "cuda", "cuda:1"."""
from . import _capi, errors

_TYPES = {"cpu": _capi.DEVICE_CPU, "cuda": _capi.DEVICE_CUDA}
_NAMES = {number: name for name, number in _TYPES.items()}


def parse(device):
    """(kiln_device_type, index) of a device string."""
    if not isinstance(device, str):
        raise errors.InvalidArgument(f"expected a device such as 'cpu' or 'cuda:0', got {device!r}")
    name, _, index = device.partition(":")
    if name not in _TYPES or (index and not index.isdigit()):
        raise errors.InvalidArgument(f"unknown device '{device}'; expected 'cpu', 'cuda' or 'cuda:<index>'")
    return _TYPES[name], int(index or 0)


def describe(device_type, index):
    """The string of a (kiln_device_type, index) pair: "cpu" or "cuda:<index>"."""
    name = _NAMES.get(device_type, f"device{device_type}")
    return name if device_type == _capi.DEVICE_CPU else f"{name}:{index}"
