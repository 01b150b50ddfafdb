"""Runtimes: each owns its op table, allocators, CPU threads, random stream
and plugins. Functions that create something take `runtime=`; left out,
they use the default runtime, created on first use with default options.
"""
import ctypes
import dataclasses
import enum
import os
import threading

from . import _capi, devices, errors
from ._handle import Handle
from ._library import decode, lib


class LogLevel(enum.IntEnum):
    DEBUG = 0
    INFO = 1
    WARNING = 2
    ERROR = 3


@dataclasses.dataclass(frozen=True)
class MemoryStats:
    """One device's allocator statistics (kiln_memory_stats). The fields
    after num_frees describe the GPU's caching allocator; 0 for the CPU."""

    current_bytes: int  # held by live allocations
    peak_bytes: int
    reserved_bytes: int  # obtained from the system
    num_allocs: int
    num_frees: int
    active_bytes: int
    cached_free_bytes: int
    largest_free_block: int
    num_reserves: int
    num_releases: int
    cache_hits: int
    num_cache_flushes: int
    limit_bytes: int
    fragmentation: float


# Log callbacks stay alive for the life of the process: the C runtime can
# outlive its Python object (its tensors hold it) and may log until it goes.
_log_callbacks = []


def _log_callback(log):
    def forward(_user_data, level, message):
        log(LogLevel(level), decode(message))

    callback = _capi.LogFn(forward)
    _log_callbacks.append(callback)
    return callback


class Runtime(Handle):
    """A kiln runtime (kiln_runtime_create).

    plugin_paths: plugin files, or folders whose lib*.so are all loaded,
    before the KILN_PLUGIN_PATH folders and the install's plugin folder;
    default_plugins=False loads `plugin_paths` only. log(level, message)
    receives the runtime's warnings and errors (and its info and debug
    messages with verbose=True) instead of stderr, from any thread.
    allow_tf32=True lets f32 matrix products and convolutions on a GPU round
    their inputs to TF32 (off by default, as in PyTorch).
    direct_convolutions=True keeps f32 convolutions on the CPU on direct
    kernels; by default 3x3 (and on AVX2 5x5) stride-1 ones may run with
    Winograd's algorithm where it is faster (oneDNN's on AVX-512, kiln's on
    AVX2; errors up to about 1e-5 of the largest value).
    """

    _release_function = "kiln_runtime_release"

    def __init__(self, *, seed=0, num_threads=0, plugin_paths=(), default_plugins=True, log=None, verbose=False,
                 allow_tf32=False, direct_convolutions=False):
        paths = [os.fsencode(p) for p in plugin_paths]
        path_array = (ctypes.c_char_p * len(paths))(*paths)
        options = _capi.sized(_capi.RuntimeOptions, num_threads=num_threads, seed=seed, plugin_paths=path_array,
                              n_plugin_paths=len(paths), skip_default_plugins=not default_plugins,
                              log_verbose=bool(verbose), allow_tf32=bool(allow_tf32),
                              direct_convolutions=bool(direct_convolutions))
        if log is not None:
            options.log = _log_callback(log)
        out = ctypes.c_void_p()
        lib.kiln_runtime_create(ctypes.byref(options), ctypes.byref(out))
        super().__init__(out.value, None)
        # Unlike _address, kept after close(): objects of this runtime hold
        # references on the C runtime and go on using it through this.
        self._raw_address = out.value
        self._ops = {}
        self._ops_lock = threading.Lock()
        self._op_infos = {}  # name -> kiln.OpInfo, filled by kiln.op_listing.describe

    @property
    def runtime(self):
        return self

    def manual_seed(self, seed):
        """Reseeds the random stream."""
        lib.kiln_manual_seed(self._ptr, seed)

    def memory_stats(self, device="cpu"):
        """Allocator statistics of `device` ("cpu", "cuda:0")."""
        device_type, index = devices.parse(device)
        stats = _capi.sized(_capi.MemoryStats)
        lib.kiln_memory_stats_get(self._ptr, device_type, index, ctypes.byref(stats))
        return _capi.to_dataclass(MemoryStats, stats)

    def empty_cache(self, device="cuda:0"):
        """Gives the cached memory of `device` that no tensor uses back to it
        (for another library that needs GPU memory); nothing for the CPU."""
        lib.kiln_memory_empty_cache(self._ptr, *devices.parse(device))

    def reset_peak_memory(self, device="cpu"):
        """Starts the peak_bytes of `device`'s statistics again from what is
        held now, to measure the peak of what follows."""
        lib.kiln_memory_reset_peak(self._ptr, *devices.parse(device))

    def set_memory_limit(self, limit_bytes):
        """Caps what the CPU allocator holds at once (0: no cap); a request
        over it raises kiln.OutOfMemory, as running out does."""
        lib.kiln_memory_set_limit(self._ptr, *devices.parse("cpu"), limit_bytes)

    def _devices(self):
        count, reason = ctypes.c_int(), ctypes.c_char_p()
        lib.kiln_devices_get(self._ptr, ctypes.byref(count), ctypes.byref(reason))
        return count.value, decode(reason.value)

    @property
    def cuda_device_count(self):
        """GPUs found when the runtime was created (0 when none is usable)."""
        return self._devices()[0]

    @property
    def cuda_unavailable_reason(self):
        """Why no GPU is usable, in words; "" when GPUs are usable."""
        return self._devices()[1]

    def _op(self, name):
        """The kiln_op handle of `name`, looked up once per runtime. Op
        handles live as long as the C runtime, which every caller keeps
        alive (see resolve)."""
        op = self._ops.get(name)
        if op is None:
            out = ctypes.c_void_p()
            lib.kiln_op_find(self._raw_address, name.encode(), ctypes.byref(out))
            with self._ops_lock:
                op = self._ops.setdefault(name, out.value)
        return op

    def __repr__(self):
        return f"<kiln.Runtime {'closed' if self.closed else hex(self._address)}>"


_default = None
_default_lock = threading.Lock()


def default_runtime():
    """The runtime used where `runtime=` is left out (created on first use)."""
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            _default = Runtime()
        return _default


def set_default_runtime(runtime):
    """Makes `runtime` the default (None: a new one on next use); returns
    the previous one (or None)."""
    global _default
    if runtime is not None and not isinstance(runtime, Runtime):
        raise errors.InvalidArgument(f"expected a kiln.Runtime, got {type(runtime).__name__}")
    with _default_lock:
        previous, _default = _default, runtime
    return previous


def resolve(runtime):
    """The runtime a public function was given (checked open), or the
    default runtime when it is None.

    Only such entry points check: code acting for an existing object
    (a module's forward, an op on tensors) uses `runtime._raw_address`
    directly, which stays valid after Runtime.close() because that object
    holds a reference on the C runtime.
    """
    if runtime is None:
        return default_runtime()
    if not isinstance(runtime, Runtime):
        raise errors.InvalidArgument(f"runtime must be a kiln.Runtime, got {type(runtime).__name__}")
    runtime._check_open()
    return runtime
