"""The trainer: a training loop that runs in C++, with Python callbacks.

    trainer = kiln.Trainer(model, optimizer, train_loader, loss="cross_entropy", epochs=3,
                           validation=val_loader, on_step=lambda m: print(m.step, m.loss))
    trainer.run()

on_step(metrics), on_eval(metrics) and on_epoch(epoch, last_step) are
called from the loop; a truthy result stops training after the current
step. An exception raised in one stops training and is raised again by the
call that ran the loop (run, step, evaluate).
"""
import ctypes
import dataclasses
import os

from . import _capi, errors
from ._callbacks import CallbackBridge
from ._handle import Handle, handle_of
from ._library import lib
from .data import Loader
from .dtypes import as_dtype
from .modules import Module
from .optim import LRSchedule, Optimizer
from .strategy import Strategy


@dataclasses.dataclass(frozen=True)
class StepMetrics:
    """What one optimizer step did (kiln_step_metrics)."""

    step: int
    epoch: int
    epoch_step: int
    samples: int
    loss: float
    lr: float
    grad_norm: float
    step_seconds: float
    input_wait_seconds: float
    samples_per_second: float
    device_input_wait_seconds: float
    loss_scale: float  # what the loss was multiplied by before backward (1 without loss scaling)
    skipped: int  # 1: the gradients held inf or NaN, and the step changed nothing but the scale
    peak_cpu_bytes: int
    peak_gpu_bytes: int
    # Where step_seconds went: with input_wait_seconds these add up to it (see kiln_step_metrics).
    forward_seconds: float
    backward_seconds: float
    communication_seconds: float
    optimizer_seconds: float
    other_seconds: float
    flops: float  # the arithmetic of the step's products and convolutions, as their ops declare it


@dataclasses.dataclass(frozen=True)
class EvalMetrics:
    """One evaluation pass (kiln_eval_metrics); accuracy is -1 when targets are not class indices."""

    step: int
    epoch: int
    samples: int
    loss: float
    accuracy: float
    seconds: float


def _step_metrics(pointer):
    """A kiln_step_metrics* of a callback as StepMetrics (None for NULL)."""
    return _capi.to_dataclass(StepMetrics, pointer.contents) if pointer else None


def _eval_metrics(pointer):
    return _capi.to_dataclass(EvalMetrics, pointer.contents)


_PROGRESS = {"auto": 0, "bar": 1, "lines": 2, "quiet": 3}


def _progress(value):
    if value in _PROGRESS:
        return _PROGRESS[value]
    if value in _PROGRESS.values():
        return value
    raise errors.InvalidArgument(f"progress is {value!r}; expected one of {', '.join(map(repr, _PROGRESS))} "
                                 f"(or 0 to 3)")


def _precision(value):
    """options->precision from None or a dtype ("bf16", "bfloat16", kiln.bfloat16, ...)."""
    return None if value is None else str(as_dtype(value)).encode()


_LOSS_SCALE_KEYS = {"init": "loss_scale_init", "growth": "loss_scale_growth", "backoff": "loss_scale_backoff",
                    "interval": "loss_scale_interval", "min": "loss_scale_min"}


def _loss_scale(value):
    """options->loss_scaling and loss_scale_* from None (the default: on for
    f16), False (off), True (on) or a dict of settings (on)."""
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"loss_scaling": 1 if value else 2}
    if not isinstance(value, dict):
        raise errors.InvalidArgument(f"loss_scale is {value!r}; expected None, a bool or a dict of settings")
    unknown = set(value) - set(_LOSS_SCALE_KEYS)
    if unknown:
        raise errors.InvalidArgument(f"loss_scale has unknown setting(s) {', '.join(sorted(map(repr, unknown)))}; "
                                     f"expected {', '.join(map(repr, _LOSS_SCALE_KEYS))}")
    return {"loss_scaling": 1, **{_LOSS_SCALE_KEYS[k]: v for k, v in value.items()}}


def _trace_steps(steps):
    if steps is None:
        return {}
    try:
        first, last = steps
    except (TypeError, ValueError):
        raise errors.InvalidArgument(f"trace_steps is {steps!r}; expected (first, last)") from None
    return {"trace_first_step": first, "trace_last_step": last}


def _optional_path(path):
    return None if path is None else os.fsencode(path)


def _optional_text(text):
    return None if text is None else text.encode()


class Trainer(Handle):
    """kiln_trainer_create with the options as keyword arguments; see kiln.h
    for each. progress: "auto" (a bar on a terminal, lines otherwise),
    "bar", "lines" or "quiet". precision: None or "f32", "bf16" or "f16"
    (the forward and loss of each step and evaluation under autocast).
    precision_fallback: True trains in f32, with a warning on the runtime's
    log, where the model's device cannot compute in `precision`; False
    (default) makes that an error.
    loss_scale: dynamic loss scaling, None (on for "f16" only), False (off),
    True (on) or a dict of settings that turns it on: init (65536), growth
    (2), backoff (0.5), interval (2000 clean steps), min (1).
    tensorboard_dir: a folder that gets a TensorBoard event file of the
    step and evaluation scalars (made when missing). report: True prints
    the training report (see report()) on stderr when run() ends.
    trace_path: a Chrome/Perfetto trace of the steps trace_steps =
    (first, last), counted from 1 (None: the second step alone). The
    schedule and the strategy are kept open while the trainer uses them."""

    _release_function = "kiln_trainer_release"

    def __init__(self, model, optimizer, train, *, loss=None, schedule=None, validation=None, strategy=None,
                 epochs=0, max_steps=0, accumulate=1, clip_grad_norm=0.0, eval_every=0, log_every=0,
                 progress="auto", metrics_path=None, input_field=None, target_field=None, on_step=None,
                 on_eval=None, on_epoch=None, checkpoint_every=0, checkpoint_path=None, precision=None,
                 precision_fallback=False, loss_scale=None, tensorboard_dir=None, report=False, trace_path=None,
                 trace_steps=None):
        self._bridge = CallbackBridge()
        # Kept as long as the trainer: kiln calls them until it is released.
        self._callbacks = (
            self._bridge.wrap(_capi.StepFn, "on_step", on_step, lambda m: (_step_metrics(m),)),
            self._bridge.wrap(_capi.EvalFn, "on_eval", on_eval, lambda m: (_eval_metrics(m),)),
            self._bridge.wrap(_capi.EpochFn, "on_epoch", on_epoch, lambda epoch, m: (epoch, _step_metrics(m))),
        )
        options = _capi.sized(
            _capi.TrainerOptions, model=handle_of(model, Module, "model"), loss=_optional_text(loss),
            optimizer=handle_of(optimizer, Optimizer, "optimizer"),
            schedule=handle_of(schedule, LRSchedule, "schedule", optional=True),
            train=handle_of(train, Loader, "train"),
            validation=handle_of(validation, Loader, "validation", optional=True),
            strategy=handle_of(strategy, Strategy, "strategy", optional=True), epochs=epochs, max_steps=max_steps,
            accumulate=accumulate, clip_grad_norm=clip_grad_norm, eval_every=eval_every, log_every=log_every,
            progress=_progress(progress),
            metrics_path=_optional_path(metrics_path), input_field=_optional_text(input_field),
            target_field=_optional_text(target_field), on_step=self._callbacks[0], on_eval=self._callbacks[1],
            on_epoch=self._callbacks[2], checkpoint_every=checkpoint_every,
            checkpoint_path=_optional_path(checkpoint_path), precision=_precision(precision),
            precision_fallback=1 if precision_fallback else 0,
            tensorboard_dir=_optional_path(tensorboard_dir), report=1 if report else 0,
            trace_path=_optional_path(trace_path), **_trace_steps(trace_steps), **_loss_scale(loss_scale))
        runtime = model.runtime
        out = ctypes.c_void_p()
        lib.kiln_trainer_create(runtime._raw_address, ctypes.byref(options), ctypes.byref(out))
        super().__init__(out.value, runtime)
        # kiln holds the model, optimizer and loaders itself; the schedule and
        # the strategy it does not reference-count must stay open (they were
        # checked open above, so holding them cannot fail).
        self._unowned = [x for x in (schedule, strategy) if x is not None]
        for x in self._unowned:
            x._hold()

    def _drop(self):
        if self._address is not None:
            super()._drop()
            for x in self._unowned:
                x._unhold()

    def step(self):
        """One optimizer step; its StepMetrics, or None when training is over."""
        metrics = _capi.sized(_capi.StepMetrics)
        done = ctypes.c_int()
        self._bridge.run(lib.kiln_trainer_step, self._ptr, ctypes.byref(metrics), ctypes.byref(done))
        return None if done.value else _capi.to_dataclass(StepMetrics, metrics)

    def run(self):
        """Steps until done, evaluating as configured."""
        self._bridge.run(lib.kiln_trainer_run, self._ptr)

    def report(self):
        """The training report of the steps so far (the first left out): the
        step time split, throughput, utilisation, memory and advice
        (kiln_trainer_report)."""
        return _capi.read_text(lib.kiln_trainer_report, self._ptr)

    def evaluate(self, loader=None):
        """One pass over the validation loader (or `loader`) in eval mode without gradients."""
        metrics = _capi.sized(_capi.EvalMetrics)
        loader_handle = handle_of(loader, Loader, "loader", optional=True)
        self._bridge.run(lib.kiln_trainer_evaluate, self._ptr, loader_handle, ctypes.byref(metrics))
        return _capi.to_dataclass(EvalMetrics, metrics)

    def save(self, path):
        """The full training state, to continue exactly where it stands (a safetensors file, written atomically)."""
        lib.kiln_trainer_save(self._ptr, os.fsencode(path))

    def load(self, path):
        """Restores a state written by save(); a missing path is an error, never a fresh start."""
        lib.kiln_trainer_load(self._ptr, os.fsencode(path))


def evaluate(model, loader, loss=None, input_field=None, target_field=None):
    """One evaluation pass of `model` over `loader` without a trainer:
    loss(model(batch[input_field]), batch[target_field]) averaged, and the
    accuracy. Defaults: "cross_entropy", "input", "target"."""
    metrics = _capi.sized(_capi.EvalMetrics)
    lib.kiln_evaluate(handle_of(model, Module, "model"), handle_of(loader, Loader, "loader"), _optional_text(loss),
                      _optional_text(input_field), _optional_text(target_field), ctypes.byref(metrics))
    return _capi.to_dataclass(EvalMetrics, metrics)
