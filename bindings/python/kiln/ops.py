"""Ops by name: kiln.op("matmul")(a, b), kiln.op("sum")(x, dims=[1], keepdim=True).

Positional arguments are the op's inputs: Tensors, ndarrays (shared as
kiln.from_numpy does), numbers and lists (made with the dtype of the first
tensor input), or None to leave an optional input out (a bias). Positional
arguments past the op's inputs take its attributes in schema order
(kiln.op("split")(x, 0, [2, 3]) is split(x, dim=0, sizes=[2, 3])), unless
its last input takes any number of tensors. Keyword arguments name
attributes (see kiln._attrs for the conversions). An op with one output
returns a Tensor, one with several a tuple. kiln.ops() lists every op with
its inputs and attributes.
"""
import ctypes

from . import errors, op_listing
from ._attrs import AttrList
from ._library import lib
from .creation import as_tensor
from .runtime import resolve
from .tensor import Tensor

# Room for the outputs of one call; an op with more fails with a message
# saying how many it returns.
MAX_OUTPUTS = 64


def _invoke(runtime, name, inputs, attrs):
    """Calls op `name` of `runtime` on Tensors (or None); returns its outputs as Tensors."""
    attr_list = AttrList(attrs, runtime)
    handles = (ctypes.c_void_p * len(inputs))(*[None if t is None else t._ptr for t in inputs])
    outputs = (ctypes.c_void_p * MAX_OUTPUTS)()
    count = ctypes.c_size_t()
    # Tensor inputs hold the C runtime; without any, `runtime` came through resolve().
    lib.kiln_op_call(runtime._raw_address, runtime._op(name), handles, len(inputs), attr_list.array, len(attr_list),
                     outputs, MAX_OUTPUTS, ctypes.byref(count))
    return [Tensor(outputs[i], runtime) for i in range(count.value)]


def _results(tensors):
    return tensors[0] if len(tensors) == 1 else tuple(tensors)


def call(name, *inputs, **attrs):
    """Calls op `name` on `inputs` in the runtime of the first Tensor input."""
    like = next((t for t in inputs if isinstance(t, Tensor)), None)
    if like is None:
        raise errors.InvalidArgument(f"op '{name}': no input is a kiln.Tensor; pass one, or use "
                                     f"kiln.op('{name}', runtime=...) for an op without tensor inputs")
    return _call_with(like.runtime, like, name, inputs, attrs)


def call_on(runtime, name, *inputs, **attrs):
    """Calls op `name` of `runtime` (an op that may have no tensor input,
    such as "randn"); `runtime` comes from resolve()."""
    like = next((t for t in inputs if isinstance(t, Tensor)), None)
    return _call_with(runtime, like, name, inputs, attrs)


def _call_with(runtime, like, name, inputs, attrs):
    inputs, attrs = op_listing.bind(op_listing.describe(runtime, name), inputs, attrs)
    made = []  # inputs converted from arrays and numbers, closed after the call
    tensors = []
    for value in inputs:
        if value is None or isinstance(value, Tensor):
            tensors.append(value)
        else:
            made.append(as_tensor(value, runtime, like=like))
            tensors.append(made[-1])
    try:
        return _results(_invoke(runtime, name, tensors, attrs))
    finally:
        for tensor in made:
            tensor.close()


class Op:
    """An op of a runtime by name; calling it runs the op.

    With runtime=None it runs in the runtime of its first tensor input (the
    default runtime when it has none), so one Op serves every runtime.
    """

    def __init__(self, name, runtime=None):
        self.name = name
        self._runtime = runtime

    def __call__(self, *inputs, **attrs):
        if self._runtime is None and any(isinstance(t, Tensor) for t in inputs):
            return call(self.name, *inputs, **attrs)
        return call_on(resolve(self._runtime), self.name, *inputs, **attrs)

    def __repr__(self):
        return f"kiln.op({self.name!r})"


def op(name, runtime=None):
    """The op `name`, checked now: an unknown name raises kiln.NotFound with
    the closest names kiln knows."""
    resolve(runtime)._op(name)
    return Op(name, runtime)
