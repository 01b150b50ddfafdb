"""Python callables as kiln callbacks, with their exceptions carried across.

An exception cannot unwind through kiln's C++ frames, so a callback that
raises is stopped at the border: the exception is kept, kiln is told
through kiln_error_set (the call then fails with KILN_ERR_SCRIPT and the
message), and once the kiln call has returned the original exception is
raised again in place of kiln's error, with its own traceback.
"""
from . import _capi, errors
from ._library import lib


class CallbackBridge:
    def __init__(self):
        self._pending = None

    def wrap(self, c_type, role, function, convert):
        """A c_type callback calling function(*convert(*c_arguments)); a
        truthy result asks kiln to stop. None gives a NULL callback."""
        if function is None:
            return c_type()

        def call(_user_data, *arguments):
            try:
                return 1 if function(*convert(*arguments)) else 0
            except BaseException as e:  # KeyboardInterrupt too: stop training, raise it afterwards
                self._pending = e
                message = f"{role} raised {type(e).__name__}: {e}"
                return lib.kiln_error_set(_capi.ERR_SCRIPT, message.encode(errors="replace"))

        return c_type(call)

    def run(self, function, *arguments):
        """Calls a kiln function that may run the callbacks; a callback's
        exception is raised in place of the kiln error it caused."""
        self._pending = None
        try:
            return function(*arguments)
        except errors.Error:
            pending, self._pending = self._pending, None
            if pending is None:
                raise
            raise pending from None
