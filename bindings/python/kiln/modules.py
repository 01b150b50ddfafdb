"""Modules: layers from plugins, Sequential and Graph containers, modules
that call one op.

    model = kiln.Sequential(kiln.layer("Linear", in_features=4, out_features=8),
                            kiln.layer("ReLU"),
                            kiln.layer("Linear", in_features=8, out_features=2))
    y = model(x)                       # forward
    model.parameters()                 # {"0.weight": Tensor, "0.bias": Tensor, ...}
    model.state_dict()                 # parameters and buffers, PyTorch's names
"""
import ctypes
import dataclasses

from . import _capi, devices, dtypes, errors
from ._attrs import AttrList
from ._handle import Handle, handle_of
from ._library import decode, lib
from .creation import as_tensor
from .ops import MAX_OUTPUTS
from .runtime import resolve
from .tensor import Tensor


@dataclasses.dataclass(frozen=True)
class TensorSpec:
    """The shape and dtype of a tensor, without its data."""

    shape: tuple
    dtype: dtypes.DType = dtypes.DType.F32


def _desc(value):
    """A kiln_tensor_desc from a TensorSpec, a Tensor or an ndarray, or a shape (f32)."""
    if isinstance(value, TensorSpec):
        shape, dtype = value.shape, value.dtype
    elif hasattr(value, "shape") and hasattr(value, "dtype"):
        shape, dtype = value.shape, dtypes.as_dtype(value.dtype)
    else:
        shape, dtype = tuple(value), dtypes.DType.F32
    if len(shape) > _capi.MAX_DIMS:
        raise errors.InvalidArgument(f"a kiln tensor has at most {_capi.MAX_DIMS} dimensions, got shape {shape}")
    desc = _capi.TensorDesc(rank=len(shape), dtype=dtype)
    desc.dims[: len(shape)] = shape
    return desc


class Module(Handle):
    """A kiln module: named parameters and buffers, a train/eval mode, a forward."""

    _release_function = "kiln_module_release"

    def __call__(self, *inputs):
        return self.forward(*inputs)

    def forward(self, *inputs):
        """Runs the module; one output is returned as a Tensor, several as a tuple.
        Inputs may be Tensors or ndarrays (shared, see kiln.from_numpy)."""
        tensors = [as_tensor(x, self._runtime) for x in inputs]
        try:
            handles = (ctypes.c_void_p * len(tensors))(*[t._ptr for t in tensors])
            outputs = (ctypes.c_void_p * MAX_OUTPUTS)()
            count = ctypes.c_size_t()
            lib.kiln_module_forward(self._ptr, handles, len(tensors), outputs, MAX_OUTPUTS, ctypes.byref(count))
        finally:
            for t in tensors:
                t.close()
        results = [Tensor(outputs[i], self._runtime) for i in range(count.value)]
        return results[0] if len(results) == 1 else tuple(results)

    def build(self, *inputs):
        """Infers the output shapes for inputs shaped like `inputs` (shapes,
        TensorSpecs, Tensors or ndarrays); a layer that does not fit raises
        with its name, type, input shapes and the reason."""
        descs = (_capi.TensorDesc * len(inputs))(*[_desc(x) for x in inputs])
        outputs = (_capi.TensorDesc * MAX_OUTPUTS)()
        count = ctypes.c_size_t()
        lib.kiln_module_build(self._ptr, descs, len(inputs), outputs, MAX_OUTPUTS, ctypes.byref(count))
        return [TensorSpec(tuple(o.dims[: o.rank]), dtypes.DType(o.dtype)) for o in outputs[: count.value]]

    @property
    def type(self):
        """"Linear", "Sequential", "Graph", "op:add", ..."""
        name = ctypes.c_char_p()
        lib.kiln_module_type(self._ptr, ctypes.byref(name))
        return decode(name.value)

    # ---- mode ----------------------------------------------------------------------------

    @property
    def training(self):
        flag = ctypes.c_int()
        lib.kiln_module_training(self._ptr, ctypes.byref(flag))
        return bool(flag.value)

    def train(self, mode=True):
        """Train mode (or eval mode with mode=False) for the module and all it contains."""
        lib.kiln_module_set_training(self._ptr, bool(mode))
        return self

    def eval(self):
        return self.train(False)

    # ---- parameters and buffers ------------------------------------------------------------

    def _named(self, count_function, get_function):
        count = ctypes.c_size_t()
        count_function(self._ptr, ctypes.byref(count))
        named = {}
        for i in range(count.value):
            name, out = ctypes.c_char_p(), ctypes.c_void_p()
            get_function(self._ptr, i, ctypes.byref(name), ctypes.byref(out))
            named[decode(name.value)] = Tensor(out.value, self._runtime)
        return named

    def parameters(self):
        """{dotted name: Tensor}: the module's own tensors, not copies, in a fixed order."""
        return self._named(lib.kiln_module_parameter_count, lib.kiln_module_parameter)

    def buffers(self):
        """{dotted name: Tensor}: running statistics and other state that is not learned."""
        return self._named(lib.kiln_module_buffer_count, lib.kiln_module_buffer)

    def state_dict(self):
        """Parameters then buffers, under the names PyTorch's state_dict gives the same model."""
        return {**self.parameters(), **self.buffers()}

    def load_state_dict(self, state, strict=True):
        """Copies `state` ({name: Tensor or ndarray}) into the parameters and
        buffers of the same names, converting dtypes. strict: the names
        must match exactly. Names and shapes are all checked before
        anything is written."""
        own = self.state_dict()
        missing = [name for name in own if name not in state]
        unexpected = [name for name in state if name not in own]
        if strict and (missing or unexpected):
            raise errors.InvalidArgument(f"load_state_dict: missing {missing or 'none'}, unexpected "
                                         f"{unexpected or 'none'}")
        sources = {name: as_tensor(value, self._runtime) for name, value in state.items() if name in own}
        for name, source in sources.items():
            if source.shape != own[name].shape:
                raise errors.ShapeMismatch(f"load_state_dict: '{name}' has shape {source.shape} in the state, "
                                           f"{own[name].shape} in the module")
        for name, source in sources.items():
            own[name].copy_(source)

    # ---- device and dtype ----------------------------------------------------------------------

    def to(self, target):
        """Moves every parameter and buffer to a device ("cuda:0"), or casts the
        floating ones to a floating dtype (kiln.float64). Returns the module."""
        if isinstance(target, str) and target.partition(":")[0] in ("cpu", "cuda"):
            lib.kiln_module_to(self._ptr, *devices.parse(target))
        else:
            lib.kiln_module_cast(self._ptr, dtypes.as_dtype(target))
        return self

    def __repr__(self):
        return "kiln.Module(closed)" if self.closed else f"kiln.Module({self.type})"


def layer(type_name, config=None, runtime=None, **kwargs):
    """A layer of a registered type ("Linear", "Conv2d", ...) configured by
    `config` and keyword arguments (PyTorch's names and defaults)."""
    runtime = resolve(runtime)
    attrs = AttrList({**(config or {}), **kwargs}, runtime)
    out = ctypes.c_void_p()
    lib.kiln_module_create(runtime._raw_address, type_name.encode(), attrs.array, len(attrs), ctypes.byref(out))
    return Module(out.value, runtime)


def op_module(op_name, runtime=None, **attrs):
    """A module without parameters that calls one op ("add" joining two graph branches)."""
    runtime = resolve(runtime)
    attr_list = AttrList(attrs, runtime)
    out = ctypes.c_void_p()
    lib.kiln_module_from_op(runtime._raw_address, runtime._op(op_name), attr_list.array, len(attr_list),
                            ctypes.byref(out))
    return Module(out.value, runtime)


def _names(names):
    encoded = [n.encode() for n in names]
    return (ctypes.c_char_p * len(encoded))(*encoded)


class Sequential(Module):
    """Each child's outputs are the next one's inputs. Children are given in
    order (named "0", "1", ...) or as one dict {name: module}."""

    def __init__(self, *children, runtime=None):
        runtime = resolve(runtime)
        out = ctypes.c_void_p()
        lib.kiln_sequential_create(runtime._raw_address, ctypes.byref(out))
        super().__init__(out.value, runtime)
        named = children[0].items() if len(children) == 1 and isinstance(children[0], dict) else \
            [(None, child) for child in children]
        for name, child in named:
            self.append(child, name)

    def append(self, module, name=None):
        """Appends `module` (named by its index when `name` is None); returns self."""
        child = handle_of(module, Module, "a Sequential child")
        lib.kiln_sequential_append(self._ptr, None if name is None else name.encode(), child)
        return self


class Checkpoint(Module):
    """Activation checkpointing: runs `module` without keeping its
    intermediate values for backward, which runs its forward again, from
    the same point of the random stream, and back-propagates through that.
    Gradients equal the unwrapped module's; parameters keep the names they
    have in `module`, so weights files do not change."""

    def __init__(self, module, runtime=None):
        runtime = resolve(runtime)
        inner = handle_of(module, Module, "the module to checkpoint")
        out = ctypes.c_void_p()
        lib.kiln_module_checkpoint(runtime._raw_address, inner, ctypes.byref(out))
        super().__init__(out.value, runtime)


class Graph(Module):
    """Named nodes for skip connections and several inputs: a node's inputs
    are graph inputs or earlier nodes ("name" for output 0, "name:k" for
    output k). Nodes run in the order added."""

    def __init__(self, inputs, runtime=None):
        runtime = resolve(runtime)
        out = ctypes.c_void_p()
        lib.kiln_graph_create(runtime._raw_address, _names(inputs), len(inputs), ctypes.byref(out))
        super().__init__(out.value, runtime)

    def add(self, name, module, inputs):
        """Adds node `name` running `module` on `inputs`; returns self."""
        node = handle_of(module, Module, f"graph node '{name}'")
        lib.kiln_graph_add(self._ptr, name.encode(), node, _names(inputs), len(inputs))
        return self

    def set_outputs(self, *names):
        """The graph's outputs, in order (default: the last node's)."""
        lib.kiln_graph_set_outputs(self._ptr, _names(names), len(names))
        return self
