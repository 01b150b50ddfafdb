"""Optimizers and learning-rate schedules of the registered types.

    opt = kiln.Optimizer("AdamW", model, lr=1e-3, weight_decay=0.01)
    opt = kiln.Optimizer("SGD", [{"params": [w], "lr": 0.1}, {"params": [b], "lr": 0.01}], momentum=0.9)
    sched = kiln.LRSchedule("cosine", T_max=100)
"""
import ctypes

from . import errors
from ._attrs import AttrList
from ._handle import Handle
from ._library import decode, lib
from ._params import handle_array, parameter_list
from .creation import as_tensor
from .runtime import resolve
from .tensor import Tensor


def _groups(params):
    """[(tensors, group hyper-parameters)]: one group, or PyTorch-style group dicts."""
    if isinstance(params, (list, tuple)) and params and all(isinstance(g, dict) for g in params):
        groups = []
        for group in params:
            if "params" not in group:
                raise errors.InvalidArgument(f"a parameter group needs a 'params' entry, got keys {sorted(group)}")
            hyper = {k: v for k, v in group.items() if k != "params"}
            groups.append((parameter_list(group["params"]), hyper))
        return groups
    return [(parameter_list(params), {})]


class Optimizer(Handle):
    """An optimizer of a registered type ("SGD", "Adam", ...) over `params`
    (a module, a {name: Tensor} dict, Tensors, or a list of group dicts
    with "params" and per-group hyper-parameters). Keyword arguments are the
    hyper-parameters of every group (PyTorch's names and defaults)."""

    _release_function = "kiln_optimizer_release"

    def __init__(self, type_name, params, runtime=None, **hyper):
        groups = _groups(params)
        first_tensors, first_hyper = groups[0]
        # The parameters' runtime, which they keep alive; else the one given.
        runtime = first_tensors[0].runtime if runtime is None and first_tensors else resolve(runtime)
        attrs = AttrList({**hyper, **first_hyper}, runtime)
        out = ctypes.c_void_p()
        lib.kiln_optimizer_create(runtime._raw_address, type_name.encode(), handle_array(first_tensors),
                                  len(first_tensors), attrs.array, len(attrs), ctypes.byref(out))
        super().__init__(out.value, runtime)
        for tensors, group_hyper in groups[1:]:
            self.add_param_group(tensors, **group_hyper)

    def add_param_group(self, params, **hyper):
        """Another group; hyper-parameters not given take the values given at creation."""
        tensors = parameter_list(params)
        attrs = AttrList(hyper, self._runtime)
        lib.kiln_optimizer_add_group(self._ptr, handle_array(tensors), len(tensors), attrs.array, len(attrs))

    def step(self):
        """One update of every parameter that has a gradient."""
        lib.kiln_optimizer_step(self._ptr)

    def zero_grad(self):
        """Drops every parameter's gradient."""
        lib.kiln_optimizer_zero_grad(self._ptr)

    @property
    def num_groups(self):
        count = ctypes.c_size_t()
        lib.kiln_optimizer_group_count(self._ptr, ctypes.byref(count))
        return count.value

    def get_hyper(self, name, group=0):
        """A group's hyper-parameter ("lr", "weight_decay", ...)."""
        value = ctypes.c_double()
        lib.kiln_optimizer_get_hyper(self._ptr, group, name.encode(), ctypes.byref(value))
        return value.value

    def set_hyper(self, name, value, group=0):
        lib.kiln_optimizer_set_hyper(self._ptr, group, name.encode(), value)

    @property
    def step_count(self):
        """Steps taken."""
        count = ctypes.c_int64()
        lib.kiln_optimizer_step_count(self._ptr, ctypes.byref(count))
        return count.value

    def state_dict(self):
        """The state as {name: Tensor} copies: "step" and "<parameter index>.<name>" ("0.exp_avg")."""
        count = ctypes.c_size_t()
        lib.kiln_optimizer_state_count(self._ptr, ctypes.byref(count))
        state = {}
        for i in range(count.value):
            name, out = ctypes.c_char_p(), ctypes.c_void_p()
            lib.kiln_optimizer_state_get(self._ptr, i, ctypes.byref(name), ctypes.byref(out))
            state[decode(name.value)] = Tensor(out.value, self._runtime)
        return state

    def load_state_dict(self, state):
        """Takes a state_dict() back (of the same type over parameters of the
        same shapes): every entry must be present and fit, or nothing changes."""
        names = [n.encode() for n in state]
        tensors = [as_tensor(v, self._runtime) for v in state.values()]
        lib.kiln_optimizer_state_load(self._ptr, (ctypes.c_char_p * len(names))(*names), handle_array(tensors),
                                      len(tensors))


class LRSchedule(Handle):
    """A learning-rate schedule of a registered type ("step", "cosine", ...);
    schedule(step, base_lr) is the rate at `step` (0 is the first)."""

    _release_function = "kiln_lr_schedule_release"

    def __init__(self, type_name, runtime=None, **config):
        runtime = resolve(runtime)
        attrs = AttrList(config, runtime)
        out = ctypes.c_void_p()
        lib.kiln_lr_schedule_create(runtime._raw_address, type_name.encode(), attrs.array, len(attrs),
                                    ctypes.byref(out))
        super().__init__(out.value, runtime)

    def __call__(self, step, base_lr):
        lr = ctypes.c_double()
        lib.kiln_lr_schedule_lr(self._ptr, step, base_lr, ctypes.byref(lr))
        return lr.value

    lr = __call__
