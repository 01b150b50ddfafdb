"""Parallel strategies: how gradients agree across processes.

    strategy = kiln.Strategy("ddp", bucket_mb=25)      # in a job (see kiln.dist)
    kiln.Trainer(model, optimizer, loader, strategy=strategy, ...).run()
    kiln.Strategy("zero1")   # ddp with the optimizer's state sharded over the ranks

A host that drives its own loop does what the trainer does:

    strategy.attach(model)                  # once: rank 0's weights everywhere, hooks set
    for batch in loader:
        strategy.backward_begin(sync=True)  # False for micro-batches that only accumulate
        loss = kiln.F.cross_entropy(model(batch["input"]), batch["target"])
        loss.backward()                     # buckets are reduced while backward runs
        strategy.reduce_gradients(model)    # waits for them: every rank has the same gradients
        strategy.optimizer_step(optimizer)  # zero1: this rank's share, then everyone's parameters
        optimizer.zero_grad()
"""
import ctypes

from ._attrs import AttrList
from ._handle import Handle, handle_of
from ._library import lib
from ._params import handle_array, parameter_list
from .modules import Module
from .optim import Optimizer
from .tensor import Tensor
from .runtime import resolve


class Strategy(Handle):
    """A strategy of a registered type, configured by keyword arguments:
    "single" (one process, nothing to do), "ddp" (data parallel over the
    runtime's default process group; bucket_mb=25) or "zero1" (ddp whose
    optimizer state is sharded: each rank keeps and updates its share of
    the parameters; bucket_mb=25)."""

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

    def attach(self, model):
        """Prepares `model` for training with this strategy, once, before
        the first step: "ddp" broadcasts rank 0's parameters and buffers and
        sets the gradient-ready hooks that overlap reduction with backward.
        A Trainer given the strategy does this itself."""
        lib.kiln_strategy_attach(self._ptr, handle_of(model, Module, "model"))

    def backward_begin(self, sync=True):
        """Call before each backward: `sync` is True when the gradients will
        be reduced after it (the last micro-batch before an optimizer step),
        False when they only accumulate."""
        lib.kiln_strategy_backward_begin(self._ptr, bool(sync))

    def reduce_gradients(self, params):
        """Makes the gradients of `params` (a module, a dict or Tensors) agree
        across the processes; call it after backward, before the optimizer step."""
        tensors = parameter_list(params)
        lib.kiln_strategy_reduce_gradients(self._ptr, handle_array(tensors), len(tensors))

    def optimizer_step(self, optimizer):
        """The optimizer step, in place of optimizer.step() once the gradients
        are reduced: "zero1" updates this rank's share of the parameters and
        then gives every rank the others'; other strategies just step."""
        lib.kiln_strategy_optimizer_step(self._ptr, handle_of(optimizer, Optimizer, "optimizer"))

    def state_owner(self, param):
        """The rank that keeps the optimizer state of `param` ("zero1"), or
        -1 when every rank keeps it."""
        owner = ctypes.c_int()
        lib.kiln_strategy_state_owner(self._ptr, handle_of(param, Tensor, "param"), ctypes.byref(owner))
        return owner.value
