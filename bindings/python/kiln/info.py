"""What the loaded libkiln.so is: its version and how it was built."""
import ctypes
import dataclasses

from . import _capi
from ._library import decode, lib


@dataclasses.dataclass(frozen=True)
class BuildInfo:
    """kiln_build_info; a component the library was built without says "not built"."""

    version: str
    with_cuda: bool
    with_nccl: bool
    compiler: str
    build_type: str
    onednn_version: str
    cuda_runtime_version: str
    cublas_version: str
    cudnn_version: str
    nccl_version: str


def version():
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return decode(lib.kiln_version())


def build_info():
    info = _capi.sized(_capi.BuildInfo)
    lib.kiln_build_info_get(ctypes.byref(info))
    return BuildInfo(
        version=decode(info.version),
        with_cuda=bool(info.with_cuda),
        with_nccl=bool(info.with_nccl),
        compiler=decode(info.compiler),
        build_type=decode(info.build_type),
        onednn_version=decode(info.onednn_version),
        cuda_runtime_version=decode(info.cuda_runtime_version),
        cublas_version=decode(info.cublas_version),
        cudnn_version=decode(info.cudnn_version),
        nccl_version=decode(info.nccl_version),
    )


def status_name(status):
    """kiln's short name of a kiln_status number ("shape mismatch")."""
    return decode(lib.kiln_status_name(status))
