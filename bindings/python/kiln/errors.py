"""The exceptions of the kiln package: one class per kiln_status.

Every failing call raises a subclass of `kiln.Error` carrying kiln's message
(what kiln_last_error() said) and the status. The classes are named after
the statuses, without an "Error" suffix, so that none of them reads like a
Python builtin: the file status is `IOFailure`, not `IOError` (a builtin
alias of OSError), and the memory status is `OutOfMemory`, not
`MemoryError`.
"""
from . import _capi


class Error(Exception):
    """A kiln call failed. `status` is the kiln_status number, `message`
    kiln's description of what was wrong."""

    status = _capi.ERR_INTERNAL

    def __init__(self, message, status=None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class InvalidArgument(Error):
    """A bad value, an unknown attribute, a missing argument."""

    status = _capi.ERR_INVALID_ARGUMENT


class ShapeMismatch(Error):
    status = _capi.ERR_SHAPE_MISMATCH


class DTypeMismatch(Error):
    status = _capi.ERR_DTYPE_MISMATCH


class DeviceMismatch(Error):
    """Tensors on different devices, or a device that does not exist."""

    status = _capi.ERR_DEVICE_MISMATCH


class NotFound(Error):
    """An unknown op, layer, optimizer, ... name, or a missing field."""

    status = _capi.ERR_NOT_FOUND


class OutOfMemory(Error):
    status = _capi.ERR_OUT_OF_MEMORY


class InvalidState(Error):
    """For example backward through a freed graph, or a closed handle."""

    status = _capi.ERR_INVALID_STATE


class Unsupported(Error):
    """No kernel for this dtype or device, a feature not built, a library too old."""

    status = _capi.ERR_UNSUPPORTED


class IOFailure(Error):
    """A file that cannot be read or written, or is malformed."""

    status = _capi.ERR_IO


class InternalError(Error):
    status = _capi.ERR_INTERNAL


class PluginRefused(Error):
    """A plugin library the loader would not take; the message says why."""

    status = _capi.ERR_PLUGIN_REFUSED


class ScriptError(Error):
    """A script, or a Python callback run by kiln, raised an error."""

    status = _capi.ERR_SCRIPT


class Timeout(Error):
    """A wait for a peer, a store key or a collective ran past its timeout."""

    status = _capi.ERR_TIMEOUT


class PeerFailure(Error):
    """Another process of a distributed job failed, left or sent malformed data."""

    status = _capi.ERR_PEER


_BY_STATUS = {cls.status: cls for cls in Error.__subclasses__()}


def from_status(status, message):
    """The exception for `status` (InternalError for a number kiln does not define)."""
    cls = _BY_STATUS.get(status)
    if cls is None:
        return InternalError(f"{message} (unknown kiln_status {status})", status)
    return cls(message)


class LibraryNotFound(OSError):
    """libkiln.so could not be found or loaded; the message lists where it was looked for."""
