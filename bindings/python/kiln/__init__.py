"""kiln: an embeddable neural-network training runtime, from Python.

A pure-Python package over libkiln.so's C API (ctypes; nothing to compile).
See README.md beside this package for where the library is looked for, an
example, the exception classes and the zero-copy rules.
"""
from . import dist, functional
from . import functional as F
from .autograd import autocast, autocast_dtype, backward, grad_enabled, no_grad
from .checkpoint import load_safetensors, load_weights, save_safetensors, save_weights
from .creation import empty, from_numpy, full, ones, tensor, zeros
from .data import DataSource, Example, Loader, LoaderStats, Transform
from .dist import ProcessGroup, Work
from .dtypes import DType
from .errors import (DeviceMismatch, DTypeMismatch, Error, InternalError, InvalidArgument, InvalidState, IOFailure,
                     LibraryNotFound, NotFound, OutOfMemory, PeerFailure, PluginRefused, ScriptError, ShapeMismatch, Timeout,
                     Unsupported)
from .info import BuildInfo, build_info, status_name, version
from ._library import library_path
from .memory import BatchSizeResult, MemoryEstimate, estimate_memory, find_batch_size
from .modules import Checkpoint, Graph, Module, Sequential, TensorSpec, layer, op_module
from .op_listing import OpAttr, OpInfo, OpInput, ops
from .ops import Op, op
from .optim import LRSchedule, Optimizer
from .profiler import profile
from .plugins import ConfigEntry, PluginInfo, config_schema, load_plugin, plugins, unload_plugin
from .runtime import LogLevel, MemoryStats, Runtime, default_runtime, set_default_runtime
from .sampling import rand, randn
from .strategy import Strategy
from .tensor import Tensor
from .trainer import EvalMetrics, StepMetrics, Trainer, evaluate

__version__ = "0.1.0"

__all__ = [
    # runtimes, the library, plugins
    "Runtime", "default_runtime", "set_default_runtime", "manual_seed", "LogLevel", "MemoryStats", "version",
    "build_info", "BuildInfo", "status_name", "library_path", "plugins", "load_plugin", "unload_plugin",
    "PluginInfo", "config_schema", "ConfigEntry",
    # tensors, dtypes, autograd, ops
    "Tensor", "tensor", "from_numpy", "empty", "zeros", "ones", "full", "rand", "randn", "DType", "float32",
    "float64", "float16", "bfloat16", "int32", "int64", "uint8", "bool_", "backward", "no_grad", "grad_enabled",
    "autocast", "autocast_dtype", "profile",
    "op", "Op", "ops", "OpInfo", "OpInput", "OpAttr", "functional", "F",
    # modules, optimizers, data, training, checkpoints
    "Module", "Sequential", "Graph", "Checkpoint", "layer", "op_module", "TensorSpec", "Optimizer", "LRSchedule",
    "Example", "estimate_memory", "MemoryEstimate", "find_batch_size", "BatchSizeResult",
    "DataSource", "Transform", "Loader", "LoaderStats", "Trainer", "StepMetrics", "EvalMetrics", "evaluate",
    "Strategy", "save_safetensors", "load_safetensors", "save_weights", "load_weights",
    # distributed training
    "dist", "ProcessGroup", "Work",
    # errors
    "Error", "InvalidArgument", "ShapeMismatch", "DTypeMismatch", "DeviceMismatch", "NotFound", "OutOfMemory",
    "InvalidState", "Unsupported", "IOFailure", "InternalError", "PluginRefused", "ScriptError", "Timeout",
    "PeerFailure", "LibraryNotFound",
]

float32 = DType.F32
float64 = DType.F64
float16 = DType.F16
bfloat16 = DType.BF16
int32 = DType.I32
int64 = DType.I64
uint8 = DType.U8
bool_ = DType.BOOL


def manual_seed(seed, runtime=None):
    """Reseeds the random stream of `runtime` (default: the default runtime)."""
    (runtime or default_runtime()).manual_seed(seed)
