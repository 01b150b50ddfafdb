"""The per-op profiler (see kiln_profiler_begin in kiln.h): time per op,
forward and backward apart, as a table and as a Chrome trace."""
import os

from . import _capi
from ._library import lib
from .runtime import resolve


class profile:
    """Records every op call of a runtime (default: the default runtime),
    from any thread, while the block runs, and every backward function
    ("<op> backward"):

        with kiln.profile() as prof:
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        print(prof.table())             # op, phase, calls, total ms, self ms, mean µs, % total
        prof.write_trace("step.json")   # for Perfetto or chrome://tracing

    table() and write_trace() read the runtime's last finished profile:
    call them after the block, before profiling that runtime again.
    Profiles of one runtime do not nest (InvalidState).
    """

    def __init__(self, runtime=None):
        self._runtime = runtime
        self._active = None

    def __enter__(self):
        self._active = resolve(self._runtime)
        lib.kiln_profiler_begin(self._active._raw_address)
        return self

    def __exit__(self, *exc_info):
        lib.kiln_profiler_end(self._active._raw_address)

    def table(self):
        """The table as text: one row per op and phase, forward rows then
        backward rows, each by total time, then the sums of both phases."""
        address = resolve(self._active or self._runtime)._raw_address
        return _capi.read_text(lib.kiln_profiler_report, address)

    def write_trace(self, path):
        """Writes the profile to `path` as Chrome trace JSON, atomically."""
        lib.kiln_profiler_write_trace(resolve(self._active or self._runtime)._raw_address, os.fsencode(path))
