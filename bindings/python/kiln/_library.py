"""Finding libkiln.so and binding its functions.

The library is located on first use, in this order: the file named by the
environment variable KILN_LIBRARY (and nothing else when it is set), a
libkiln.so inside this package's folder (where an install puts it), then
the system's search (ctypes.util.find_library). Functions are bound on
first use as well, so importing the package never fails for a function
that an older libkiln.so lacks: calling it raises kiln.Unsupported.
"""
import ctypes
import ctypes.util
import glob
import os
import threading

from . import _capi, errors

ENV_VARIABLE = "KILN_LIBRARY"
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def decode(raw):
    """A string the library returned (bytes or None) as str."""
    return raw.decode("utf-8", errors="replace") if raw else ""


def _candidates():
    """(where it came from, path or name to load) pairs, in search order."""
    explicit = os.environ.get(ENV_VARIABLE)
    if explicit:
        return [(ENV_VARIABLE, explicit)]
    found = [("the package folder", p) for p in sorted(glob.glob(os.path.join(_PACKAGE_DIR, "libkiln.so*")))]
    system = ctypes.util.find_library("kiln")
    if system:
        found.append(("the system's library search", system))
    return found


def _shorten_openmp_spin():
    """libgomp's threads (oneDNN's and kiln's kernels') spin 300,000 rounds
    after each parallel region by default and take the cores from the
    threads outside them (the input pipeline's workers, the host's) while
    they do; libgomp reads GOMP_SPINCOUNT when it loads, with libkiln.so, so
    it is set here first (as kiln run does), unless the user chose already."""
    if "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = "10000"


def _open():
    _shorten_openmp_spin()
    tried = []
    for origin, path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append(f"{path} (from {origin}): {e}")
    if not tried:
        raise errors.LibraryNotFound(
            f"libkiln.so not found: {ENV_VARIABLE} is not set, {_PACKAGE_DIR} holds no libkiln.so and "
            f"the system's library search finds none; set {ENV_VARIABLE} to the path of libkiln.so")
    raise errors.LibraryNotFound("libkiln.so could not be loaded: " + "; ".join(tried))


def _check_status(result, function, arguments):
    """ctypes errcheck of every function returning a kiln_status."""
    if result.value != _capi.OK:
        raise errors.from_status(result.value, last_error())


class _Library:
    """libkiln.so, loaded and bound on first use: `lib.kiln_tensor_rank(...)`.
    A bound function is stored on the instance, so later calls skip this lookup."""

    def __init__(self):
        self._lock = threading.Lock()
        self._cdll = None
        self.path = None

    def _load(self):
        with self._lock:
            if self._cdll is None:
                self._cdll, self.path = _open()
        return self._cdll

    def _what(self):
        """The loaded library in words, for messages: its kiln version when it has one."""
        if not hasattr(self._cdll, "kiln_version"):
            return "it is not libkiln.so, or it"
        return f"the library (kiln {decode(self.kiln_version())})"

    def __getattr__(self, name):
        if name not in _capi.SIGNATURES:
            raise AttributeError(name)
        cdll = self._cdll or self._load()
        try:
            function = getattr(cdll, name)
        except AttributeError:
            raise errors.Unsupported(f"{self.path} has no {name}: {self._what()} is older than this package") from None
        result, arguments = _capi.SIGNATURES[name]
        function.restype = result
        function.argtypes = arguments
        if result is _capi.Status:
            function.errcheck = _check_status
        setattr(self, name, function)
        return function


lib = _Library()


def last_error():
    """kiln's message for the last failing call on this thread."""
    return decode(lib.kiln_last_error())


def library_path():
    """The path (or name) libkiln.so was loaded from; loads it if needed."""
    lib._load()
    return lib.path
