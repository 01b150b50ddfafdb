"""kiln.ops(): the ops of a runtime, built-in and from plugins, with their
inputs, attributes and defaults; and how a call's arguments bind to them.

    for op in kiln.ops():
        print(op.name, [i.name for i in op.inputs])
    kiln.ops("split").attrs[1]  # OpAttr(name='sizes', type='ints', required=True, ...)

Descriptions are read once per runtime and op: an op's schema never changes
while its runtime lives.
"""
import ctypes
import dataclasses

from . import _capi, dtypes, errors
from ._library import decode, lib
from .runtime import resolve

_ATTR_TYPES = ("int", "float", "bool", "ints", "floats", "string", "dtype", "tensor")
_DTYPES = tuple(dtypes.DType)  # in kiln_dtype order


@dataclasses.dataclass(frozen=True)
class OpInput:
    name: str
    optional: bool  # may be None (a bias)
    variadic: bool  # the last input, taking any number of tensors (concat)


@dataclasses.dataclass(frozen=True)
class OpAttr:
    name: str
    type: str  # "int", "float", "bool", "ints", "floats", "string" or "dtype"
    required: bool
    default: object  # the value taken when the call gives none; None when required
    default_text: str  # the default as kiln writes it: 2, 0.5, true, [1, 1], "mean", f32; "" when required


@dataclasses.dataclass(frozen=True)
class OpInfo:
    name: str
    plugin: str  # the plugin that registered it; None for a built-in op
    inputs: tuple  # of OpInput, in call order
    attrs: tuple  # of OpAttr, in schema order
    backward: bool  # gradients flow through it
    writes_inputs: bool  # it updates its inputs in place (optimizer steps)
    view: bool  # its output shares the input's memory where the layout allows
    kernels: dict  # device ("cpu", "cuda") -> tuple of the kiln.DTypes it has kernels for

    def signature(self):
        """"split(input, dim=0, sizes=<required>)": how to call it."""
        inputs = [f"*{i.name}" if i.variadic else f"{i.name}=None" if i.optional else i.name for i in self.inputs]
        attrs = [f"{a.name}=<required>" if a.required else f"{a.name}={a.default_text}" for a in self.attrs]
        return f"{self.name}({', '.join(inputs + attrs)})"


def _attr_default(value):
    """A kiln_attr default as the Python value a caller would pass."""
    if value.type == _capi.ATTR_INT:
        return value.value.i
    if value.type == _capi.ATTR_FLOAT:
        return value.value.f
    if value.type == _capi.ATTR_BOOL:
        return bool(value.value.b)
    if value.type == _capi.ATTR_INTS:
        return [value.value.ints.data[k] for k in range(value.value.ints.len)]
    if value.type == _capi.ATTR_FLOATS:
        return [value.value.floats.data[k] for k in range(value.value.floats.len)]
    if value.type == _capi.ATTR_STRING:
        return decode(value.value.s)
    return dtypes.DType(value.value.dtype)


def _input(op, index):
    info = _capi.sized(_capi.OpInputInfo)
    lib.kiln_op_input_get(op, index, ctypes.byref(info))
    return OpInput(decode(info.name), bool(info.optional), bool(info.variadic))


def _attr(op, index):
    info = _capi.sized(_capi.OpAttrInfo)
    lib.kiln_op_attr_get(op, index, ctypes.byref(info))
    required = bool(info.required)
    return OpAttr(decode(info.name), _ATTR_TYPES[info.type], required,
                  None if required else _attr_default(info.default_value), decode(info.default_text))


def _describe(op):
    info = _capi.sized(_capi.OpInfo)
    lib.kiln_op_info_get(op, ctypes.byref(info))
    kernels = {device: tuple(d for d in _DTYPES if bits >> d.value & 1)
               for device, bits in (("cpu", info.cpu_dtypes), ("cuda", info.cuda_dtypes))}
    return OpInfo(decode(info.name), decode(info.plugin) or None,
                  tuple(_input(op, i) for i in range(info.num_inputs)),
                  tuple(_attr(op, i) for i in range(info.num_attrs)),
                  bool(info.has_backward),
                  bool(info.writes_inputs), bool(info.is_view), kernels)


def describe(runtime, name):
    """The OpInfo of op `name` of `runtime` (a Runtime object), read once;
    kiln.NotFound, with the closest names, for an unknown name."""
    info = runtime._op_infos.get(name)
    if info is None:
        info = runtime._op_infos.setdefault(name, _describe(runtime._op(name)))
    return info


def ops(name=None, runtime=None):
    """Every op of `runtime` (default: the default runtime), built-in and
    from its plugins, as OpInfo in name order; with `name`, that op's OpInfo
    (kiln.NotFound naming the closest for an unknown name)."""
    runtime = resolve(runtime)
    if name is not None:
        return describe(runtime, name)
    count = ctypes.c_size_t()
    lib.kiln_op_count(runtime._raw_address, ctypes.byref(count))
    listed = []
    for index in range(count.value):
        op = ctypes.c_void_p()
        lib.kiln_op_at(runtime._raw_address, index, ctypes.byref(op))
        info = _capi.sized(_capi.OpInfo)
        lib.kiln_op_info_get(op, ctypes.byref(info))
        listed.append(describe(runtime, decode(info.name)))
    return listed


def bind(info, args, kwargs):
    """The inputs and attributes of a call of op `info`: positional
    arguments are its inputs (all of them when it has a variadic input);
    those past its inputs take its attributes in order, and keywords name
    attributes."""
    if len(args) <= len(info.inputs) or any(i.variadic for i in info.inputs):
        return args, kwargs
    extra = args[len(info.inputs):]
    if len(extra) > len(info.attrs):
        raise errors.InvalidArgument(
            f"{info.signature()} takes at most {len(info.inputs) + len(info.attrs)} positional arguments "
            f"(its inputs, then its attributes in order), got {len(args)}")
    attrs = dict(kwargs)
    for attr, value in zip(info.attrs, extra):
        if attr.name in attrs:
            raise errors.InvalidArgument(f"{info.signature()}: attribute '{attr.name}' is given both by position "
                                         f"and by name")
        attrs[attr.name] = value
    return args[:len(info.inputs)], attrs
