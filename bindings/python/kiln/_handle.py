"""The base of every Python object that owns a reference on a kiln handle.

The reference is dropped deterministically by close() or at the end of a
`with` block, and by __del__ as a fallback when the object is collected.
Each object keeps its Runtime object alive; the C runtime itself is kept
alive by the handles that need it (kiln's own reference counting), so
closing a Runtime before the objects made from it is safe.
"""
from . import errors
from ._library import lib


class Handle:
    # The kiln_*_release function of the subclass's handle type.
    _release_function = None

    def __init__(self, address, runtime):
        # Bound now rather than looked up in __del__, which may run while the
        # interpreter shuts down.
        self._release = getattr(lib, self._release_function)
        self._address = address
        self._runtime = runtime
        self._holders = 0
        self._close_when_released = False

    @property
    def _ptr(self):
        """The handle, for calls; InvalidState once closed."""
        self._check_open()
        return self._address

    def _check_open(self):
        if self._address is None:
            raise errors.InvalidState(f"this {type(self).__name__} is closed")

    @property
    def runtime(self):
        """The Runtime this object belongs to."""
        return self._runtime

    @property
    def closed(self):
        return self._address is None

    def close(self):
        """Drops this object's reference. While a holder (a Trainer using a
        schedule or a strategy, which kiln does not reference-count) still
        uses the object, the reference is dropped when the last one is done."""
        if self._holders:
            self._close_when_released = True
            return
        self._drop()

    def _drop(self):
        """Releases the reference, once."""
        address, self._address = self._address, None
        if address is not None:
            self._release(address)

    def _hold(self):
        self._check_open()
        self._holders += 1

    def _unhold(self):
        self._holders -= 1
        if self._holders == 0 and self._close_when_released:
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __del__(self):
        # __init__ may have failed before the handle was stored.
        if getattr(self, "_address", None) is not None:
            self._drop()


def handle_of(value, cls, role, optional=False):
    """The handle of `value`, which must be a `cls` (or None when optional)."""
    if value is None and optional:
        return None
    if not isinstance(value, cls):
        raise errors.InvalidArgument(f"{role} must be a kiln.{cls.__name__}, got {type(value).__name__}")
    return value._ptr
