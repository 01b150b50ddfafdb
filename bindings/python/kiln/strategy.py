"""Parallel strategies: how gradients agree across processes."""
import ctypes

from ._attrs import AttrList
from ._handle import Handle
from ._library import lib
from ._params import handle_array, parameter_list
from .runtime import resolve


class Strategy(Handle):
    """A strategy of a registered type ("single": one process), configured by keyword arguments."""

    _release_function = "kiln_strategy_release"

    def __init__(self, type_name="single", runtime=None, **config):
        runtime = resolve(runtime)
        attrs = AttrList(config, runtime)
        out = ctypes.c_void_p()
        lib.kiln_strategy_create(runtime._raw_address, type_name.encode(), attrs.array, len(attrs), ctypes.byref(out))
        super().__init__(out.value, runtime)

    def _rank(self):
        rank, world_size = ctypes.c_int(), ctypes.c_int()
        lib.kiln_strategy_rank(self._ptr, ctypes.byref(rank), ctypes.byref(world_size))
        return rank.value, world_size.value

    @property
    def rank(self):
        return self._rank()[0]

    @property
    def world_size(self):
        return self._rank()[1]

    def reduce_gradients(self, params):
        """Makes the gradients of `params` (a module, a dict or Tensors) agree
        across the processes; call it after backward, before the optimizer step."""
        tensors = parameter_list(params)
        lib.kiln_strategy_reduce_gradients(self._ptr, handle_array(tensors), len(tensors))
