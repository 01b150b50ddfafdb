"""The declarations of kiln.h and kiln_types.h in ctypes terms.

Structures, enumerations and callback types mirror the C header field for
field; SIGNATURES gives every function's result and argument types. Handles
are opaque: they travel as c_void_p (a Python int, or None for NULL).
"""
import ctypes
import dataclasses
from ctypes import POINTER, c_char_p, c_double, c_int, c_int64, c_size_t, c_uint32, c_uint64, c_void_p

MAX_DIMS = 8

# kiln_status values.
OK = 0
ERR_INVALID_ARGUMENT = 1
ERR_SHAPE_MISMATCH = 2
ERR_DTYPE_MISMATCH = 3
ERR_DEVICE_MISMATCH = 4
ERR_NOT_FOUND = 5
ERR_OUT_OF_MEMORY = 6
ERR_INVALID_STATE = 7
ERR_UNSUPPORTED = 8
ERR_IO = 9
ERR_INTERNAL = 10
ERR_PLUGIN_REFUSED = 11
ERR_SCRIPT = 12
ERR_TIMEOUT = 13
ERR_PEER = 14

# kiln_device_type values.
DEVICE_CPU = 0
DEVICE_CUDA = 1

# kiln_reduce_op values.
REDUCE_SUM = 0
REDUCE_MEAN = 1
REDUCE_MAX = 2
REDUCE_MIN = 3

# kiln_attr_type values.
ATTR_INT, ATTR_FLOAT, ATTR_BOOL, ATTR_INTS, ATTR_FLOATS, ATTR_STRING, ATTR_DTYPE, ATTR_TENSOR = range(8)


class TensorDesc(ctypes.Structure):
    _fields_ = [("rank", c_int), ("dims", c_int64 * MAX_DIMS), ("dtype", c_int)]


class _Ints(ctypes.Structure):
    _fields_ = [("data", POINTER(c_int64)), ("len", c_size_t)]


class _Floats(ctypes.Structure):
    _fields_ = [("data", POINTER(c_double)), ("len", c_size_t)]


class _AttrValue(ctypes.Union):
    _fields_ = [
        ("i", c_int64),
        ("f", c_double),
        ("b", c_int),
        ("ints", _Ints),
        ("floats", _Floats),
        ("s", c_char_p),
        ("dtype", c_int),
        ("tensor", c_void_p),
    ]


class Attr(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("type", c_int), ("value", _AttrValue)]


LogFn = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_char_p)
GradHookFn = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p)
ReleaseFn = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)


class RuntimeOptions(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("num_threads", c_int),
        ("seed", c_uint64),
        ("plugin_paths", POINTER(c_char_p)),
        ("n_plugin_paths", c_size_t),
        ("skip_default_plugins", c_int),
        ("log", LogFn),
        ("log_user_data", c_void_p),
        ("log_verbose", c_int),
        ("allow_tf32", c_int),
        ("direct_convolutions", c_int),
    ]


class MemoryStats(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("current_bytes", c_int64),
        ("peak_bytes", c_int64),
        ("reserved_bytes", c_int64),
        ("num_allocs", c_int64),
        ("num_frees", c_int64),
        ("active_bytes", c_int64),
        ("cached_free_bytes", c_int64),
        ("largest_free_block", c_int64),
        ("num_reserves", c_int64),
        ("num_releases", c_int64),
        ("cache_hits", c_int64),
        ("num_cache_flushes", c_int64),
        ("limit_bytes", c_int64),
        ("fragmentation", c_double),
    ]


class BuildInfo(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("version", c_char_p),
        ("with_cuda", c_int),
        ("with_nccl", c_int),
        ("compiler", c_char_p),
        ("build_type", c_char_p),
        ("onednn_version", c_char_p),
        ("cuda_runtime_version", c_char_p),
        ("cublas_version", c_char_p),
        ("cudnn_version", c_char_p),
        ("nccl_version", c_char_p),
    ]


class PluginInfo(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("name", c_char_p),
        ("version", c_char_p),
        ("path", c_char_p),
        ("abi_version", c_uint32),
        ("num_registrations", c_size_t),
    ]


class OpInfo(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("name", c_char_p),
        ("plugin", c_char_p),
        ("num_inputs", c_size_t),
        ("num_attrs", c_size_t),
        ("has_backward", c_int),
        ("writes_inputs", c_int),
        ("is_view", c_int),
        ("cpu_dtypes", c_uint32),
        ("cuda_dtypes", c_uint32),
    ]


class OpInputInfo(ctypes.Structure):
    _fields_ = [("size", c_size_t), ("name", c_char_p), ("optional", c_int), ("variadic", c_int)]


class OpAttrInfo(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("name", c_char_p),
        ("type", c_int),
        ("required", c_int),
        ("default_text", c_char_p),
        ("default_value", Attr),
    ]


class LoaderOptions(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("batch_size", c_int64),
        ("shuffle", c_int),
        ("seed", c_uint64),
        ("drop_last", c_int),
        ("rank", c_int),
        ("world_size", c_int),
        ("num_workers", c_int),
        ("prefetch", c_int),
        ("device", c_int),
        ("device_index", c_int),
    ]


class LoaderStats(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("batches", c_int64),
        ("last_wait_seconds", c_double),
        ("total_wait_seconds", c_double),
        ("max_ready", c_int64),
        ("device_wait_seconds", c_double),
    ]


class MemoryPlanOptions(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("loss", c_char_p),
        ("optimizer", c_void_p),
        ("precision", c_char_p),
        ("limit_bytes", c_int64),
        ("max_batch_size", c_int64),
    ]


class MemoryEstimate(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("parameter_bytes", c_int64),
        ("buffer_bytes", c_int64),
        ("gradient_bytes", c_int64),
        ("optimizer_bytes", c_int64),
        ("activation_bytes", c_int64),
        ("total_bytes", c_int64),
    ]


class BatchSizeResult(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("batch_size", c_int64),
        ("peak_bytes", c_int64),
        ("tries", c_int64),
    ]


class StepMetrics(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("step", c_int64),
        ("epoch", c_int64),
        ("epoch_step", c_int64),
        ("samples", c_int64),
        ("loss", c_double),
        ("lr", c_double),
        ("grad_norm", c_double),
        ("step_seconds", c_double),
        ("input_wait_seconds", c_double),
        ("samples_per_second", c_double),
        ("device_input_wait_seconds", c_double),
        ("loss_scale", c_double),
        ("skipped", c_int),
        ("peak_cpu_bytes", c_int64),
        ("peak_gpu_bytes", c_int64),
        ("forward_seconds", c_double),
        ("backward_seconds", c_double),
        ("communication_seconds", c_double),
        ("optimizer_seconds", c_double),
        ("other_seconds", c_double),
        ("flops", c_double),
    ]


class EvalMetrics(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("step", c_int64),
        ("epoch", c_int64),
        ("samples", c_int64),
        ("loss", c_double),
        ("accuracy", c_double),
        ("seconds", c_double),
    ]


StepFn = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(StepMetrics))
EvalFn = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(EvalMetrics))
EpochFn = ctypes.CFUNCTYPE(c_int, c_void_p, c_int64, POINTER(StepMetrics))


class TrainerOptions(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("model", c_void_p),
        ("loss", c_char_p),
        ("optimizer", c_void_p),
        ("schedule", c_void_p),
        ("train", c_void_p),
        ("validation", c_void_p),
        ("strategy", c_void_p),
        ("epochs", c_int64),
        ("max_steps", c_int64),
        ("accumulate", c_int64),
        ("clip_grad_norm", c_double),
        ("eval_every", c_int64),
        ("log_every", c_int64),
        ("progress", c_int),
        ("metrics_path", c_char_p),
        ("input_field", c_char_p),
        ("target_field", c_char_p),
        ("on_step", StepFn),
        ("on_eval", EvalFn),
        ("on_epoch", EpochFn),
        ("user_data", c_void_p),
        ("checkpoint_every", c_int64),
        ("checkpoint_path", c_char_p),
        ("precision", c_char_p),
        ("loss_scaling", c_int),
        ("loss_scale_init", c_double),
        ("loss_scale_growth", c_double),
        ("loss_scale_backoff", c_double),
        ("loss_scale_interval", c_int64),
        ("loss_scale_min", c_double),
        ("tensorboard_dir", c_char_p),
        ("report", c_int),
        ("trace_path", c_char_p),
        ("trace_first_step", c_int64),
        ("trace_last_step", c_int64),
        ("precision_fallback", c_int),
    ]


class ProcessGroupOptions(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("backend", c_char_p),
        ("rank", c_int),
        ("world_size", c_int),
        ("master_addr", c_char_p),
        ("master_port", c_int),
        ("timeout_seconds", c_double),
        ("name", c_char_p),
    ]


def sized(struct_type, **fields):
    """A structure whose leading `size` field holds its own size, as kiln asks."""
    return struct_type(size=ctypes.sizeof(struct_type), **fields)


def read_text(function, *args):
    """The text a kiln_*_report function writes: its length first, then the text."""
    length = c_size_t()
    function(*args, None, 0, ctypes.byref(length))
    buffer = ctypes.create_string_buffer(length.value + 1)
    function(*args, buffer, len(buffer), None)
    return buffer.value.decode()


def to_dataclass(cls, struct):
    """The dataclass `cls` with the values of the struct fields of the same names."""
    return cls(**{f.name: getattr(struct, f.name) for f in dataclasses.fields(cls)})


class Status(c_int):
    """A kiln_status result: the loader checks every function returning one."""


# Argument shorthands: a handle, a pointer receiving a handle, a status result.
_H = c_void_p
_OUT = POINTER(c_void_p)
_STATUS = Status
_HANDLES = POINTER(c_void_p)  # kiln_tensor* const* and similar arrays of handles
_NAMES = POINTER(c_char_p)
_SHAPE = POINTER(c_int64)
_ATTRS = POINTER(Attr)

# name: (result type, argument types). A Status result is checked by the
# loader, which raises the matching kiln.Error when it is not KILN_OK.
SIGNATURES = {
    "kiln_version": (c_char_p, []),
    "kiln_status_name": (c_char_p, [c_int]),
    "kiln_last_error": (c_char_p, []),
    "kiln_error_set": (c_int, [c_int, c_char_p]),  # returns its argument: never checked
    "kiln_runtime_create": (_STATUS, [POINTER(RuntimeOptions), _OUT]),
    "kiln_runtime_retain": (None, [_H]),
    "kiln_runtime_release": (None, [_H]),
    "kiln_manual_seed": (_STATUS, [_H, c_uint64]),
    "kiln_memory_stats_get": (_STATUS, [_H, c_int, c_int, POINTER(MemoryStats)]),
    "kiln_memory_empty_cache": (_STATUS, [_H, c_int, c_int]),
    "kiln_memory_reset_peak": (_STATUS, [_H, c_int, c_int]),
    "kiln_memory_set_limit": (_STATUS, [_H, c_int, c_int, c_int64]),
    "kiln_memory_estimate_get": (_STATUS, [_H, _SHAPE, c_int, c_int64, POINTER(MemoryPlanOptions),
                                           POINTER(MemoryEstimate)]),
    "kiln_find_batch_size": (_STATUS, [_H, _SHAPE, c_int, POINTER(MemoryPlanOptions), POINTER(BatchSizeResult)]),
    "kiln_build_info_get": (_STATUS, [POINTER(BuildInfo)]),
    "kiln_devices_get": (_STATUS, [_H, POINTER(c_int), POINTER(c_char_p)]),
    "kiln_tensor_empty": (_STATUS, [_H, _SHAPE, c_int, c_int, c_int, c_int, _OUT]),
    "kiln_tensor_full": (_STATUS, [_H, _SHAPE, c_int, c_double, c_int, c_int, c_int, _OUT]),
    "kiln_tensor_zeros": (_STATUS, [_H, _SHAPE, c_int, c_int, c_int, c_int, _OUT]),
    "kiln_tensor_from_data": (_STATUS, [_H, c_void_p, c_size_t, _SHAPE, c_int, c_int, _OUT]),
    "kiln_tensor_wrap": (_STATUS, [_H, c_void_p, c_size_t, _SHAPE, c_int, c_int, ReleaseFn, c_void_p, _OUT]),
    "kiln_tensor_retain": (None, [_H]),
    "kiln_tensor_release": (None, [_H]),
    "kiln_tensor_read": (_STATUS, [_H, c_void_p, c_size_t]),
    "kiln_tensor_data": (_STATUS, [_H, POINTER(c_void_p)]),
    "kiln_tensor_contiguous": (_STATUS, [_H, _OUT]),
    "kiln_tensor_rank": (_STATUS, [_H, POINTER(c_int)]),
    "kiln_tensor_shape": (_STATUS, [_H, _SHAPE, c_int]),
    "kiln_tensor_numel": (_STATUS, [_H, POINTER(c_int64)]),
    "kiln_tensor_dtype": (_STATUS, [_H, POINTER(c_int)]),
    "kiln_tensor_device": (_STATUS, [_H, POINTER(c_int), POINTER(c_int)]),
    "kiln_tensor_assign": (_STATUS, [_H, _H]),
    "kiln_tensor_set_requires_grad": (_STATUS, [_H, c_int]),
    "kiln_tensor_requires_grad": (_STATUS, [_H, POINTER(c_int)]),
    "kiln_tensor_grad": (_STATUS, [_H, _OUT]),
    "kiln_tensor_zero_grad": (_STATUS, [_H]),
    "kiln_tensor_set_grad": (_STATUS, [_H, _H]),
    "kiln_tensor_add_grad_hook": (_STATUS, [_H, GradHookFn, c_void_p, POINTER(c_uint64)]),
    "kiln_tensor_remove_grad_hook": (_STATUS, [_H, c_uint64]),
    "kiln_tensor_detach": (_STATUS, [_H, _OUT]),
    "kiln_tensor_to": (_STATUS, [_H, c_int, c_int, _OUT]),
    "kiln_backward": (_STATUS, [_H, _H, _H, c_int]),
    "kiln_no_grad_begin": (_STATUS, [_H]),
    "kiln_no_grad_end": (_STATUS, [_H]),
    "kiln_grad_enabled": (_STATUS, [_H, POINTER(c_int)]),
    "kiln_autocast_begin": (_STATUS, [_H, c_int]),
    "kiln_autocast_end": (_STATUS, [_H]),
    "kiln_autocast_dtype": (_STATUS, [_H, POINTER(c_int)]),
    "kiln_profiler_begin": (_STATUS, [_H]),
    "kiln_profiler_end": (_STATUS, [_H]),
    "kiln_profiler_report": (_STATUS, [_H, c_char_p, c_size_t, POINTER(c_size_t)]),
    "kiln_profiler_write_trace": (_STATUS, [_H, c_char_p]),
    "kiln_op_find": (_STATUS, [_H, c_char_p, _OUT]),
    "kiln_op_call": (_STATUS, [_H, _H, _HANDLES, c_size_t, _ATTRS, c_size_t, _HANDLES, c_size_t, POINTER(c_size_t)]),
    "kiln_op_call1": (_STATUS, [_H, _H, _HANDLES, c_size_t, _ATTRS, c_size_t, _OUT]),
    "kiln_op_count": (_STATUS, [_H, POINTER(c_size_t)]),
    "kiln_op_at": (_STATUS, [_H, c_size_t, _OUT]),
    "kiln_op_info_get": (_STATUS, [_H, POINTER(OpInfo)]),
    "kiln_op_input_get": (_STATUS, [_H, c_size_t, POINTER(OpInputInfo)]),
    "kiln_op_attr_get": (_STATUS, [_H, c_size_t, POINTER(OpAttrInfo)]),
    "kiln_registration_kind_name": (c_char_p, [c_int]),
    "kiln_plugin_load": (_STATUS, [_H, c_char_p]),
    "kiln_plugin_unload": (_STATUS, [_H, c_char_p]),
    "kiln_plugin_count": (_STATUS, [_H, POINTER(c_size_t)]),
    "kiln_plugin_info_get": (_STATUS, [_H, c_size_t, POINTER(PluginInfo)]),
    "kiln_plugin_registration": (_STATUS, [_H, c_size_t, c_size_t, POINTER(c_int), POINTER(c_char_p)]),
    "kiln_registration_config_count": (_STATUS, [_H, c_int, c_char_p, POINTER(c_size_t)]),
    "kiln_registration_config_entry": (_STATUS, [_H, c_int, c_char_p, c_size_t, POINTER(Attr), POINTER(c_int),
                                                 POINTER(c_char_p)]),
    "kiln_module_create": (_STATUS, [_H, c_char_p, _ATTRS, c_size_t, _OUT]),
    "kiln_module_from_op": (_STATUS, [_H, _H, _ATTRS, c_size_t, _OUT]),
    "kiln_sequential_create": (_STATUS, [_H, _OUT]),
    "kiln_sequential_append": (_STATUS, [_H, c_char_p, _H]),
    "kiln_graph_create": (_STATUS, [_H, _NAMES, c_size_t, _OUT]),
    "kiln_graph_add": (_STATUS, [_H, c_char_p, _H, _NAMES, c_size_t]),
    "kiln_graph_set_outputs": (_STATUS, [_H, _NAMES, c_size_t]),
    "kiln_module_checkpoint": (_STATUS, [_H, _H, _OUT]),
    "kiln_module_retain": (None, [_H]),
    "kiln_module_release": (None, [_H]),
    "kiln_module_build": (_STATUS, [_H, POINTER(TensorDesc), c_size_t, POINTER(TensorDesc), c_size_t,
                                    POINTER(c_size_t)]),
    "kiln_module_forward": (_STATUS, [_H, _HANDLES, c_size_t, _HANDLES, c_size_t, POINTER(c_size_t)]),
    "kiln_module_forward1": (_STATUS, [_H, _HANDLES, c_size_t, _OUT]),
    "kiln_module_set_training": (_STATUS, [_H, c_int]),
    "kiln_module_training": (_STATUS, [_H, POINTER(c_int)]),
    "kiln_module_type": (_STATUS, [_H, POINTER(c_char_p)]),
    "kiln_module_parameter_count": (_STATUS, [_H, POINTER(c_size_t)]),
    "kiln_module_parameter": (_STATUS, [_H, c_size_t, POINTER(c_char_p), _OUT]),
    "kiln_module_buffer_count": (_STATUS, [_H, POINTER(c_size_t)]),
    "kiln_module_buffer": (_STATUS, [_H, c_size_t, POINTER(c_char_p), _OUT]),
    "kiln_module_to": (_STATUS, [_H, c_int, c_int]),
    "kiln_module_cast": (_STATUS, [_H, c_int]),
    "kiln_optimizer_create": (_STATUS, [_H, c_char_p, _HANDLES, c_size_t, _ATTRS, c_size_t, _OUT]),
    "kiln_optimizer_add_group": (_STATUS, [_H, _HANDLES, c_size_t, _ATTRS, c_size_t]),
    "kiln_optimizer_retain": (None, [_H]),
    "kiln_optimizer_release": (None, [_H]),
    "kiln_optimizer_step": (_STATUS, [_H]),
    "kiln_optimizer_zero_grad": (_STATUS, [_H]),
    "kiln_optimizer_group_count": (_STATUS, [_H, POINTER(c_size_t)]),
    "kiln_optimizer_get_hyper": (_STATUS, [_H, c_size_t, c_char_p, POINTER(c_double)]),
    "kiln_optimizer_set_hyper": (_STATUS, [_H, c_size_t, c_char_p, c_double]),
    "kiln_optimizer_step_count": (_STATUS, [_H, POINTER(c_int64)]),
    "kiln_optimizer_state_count": (_STATUS, [_H, POINTER(c_size_t)]),
    "kiln_optimizer_state_get": (_STATUS, [_H, c_size_t, POINTER(c_char_p), _OUT]),
    "kiln_optimizer_state_load": (_STATUS, [_H, _NAMES, _HANDLES, c_size_t]),
    "kiln_lr_schedule_create": (_STATUS, [_H, c_char_p, _ATTRS, c_size_t, _OUT]),
    "kiln_lr_schedule_release": (None, [_H]),
    "kiln_lr_schedule_lr": (_STATUS, [_H, c_int64, c_double, POINTER(c_double)]),
    "kiln_example_create": (_STATUS, [_H, _OUT]),
    "kiln_example_release": (None, [_H]),
    "kiln_example_set": (_STATUS, [_H, c_char_p, _H]),
    "kiln_example_get": (_STATUS, [_H, c_char_p, _OUT]),
    "kiln_example_field_count": (_STATUS, [_H, POINTER(c_size_t)]),
    "kiln_example_field": (_STATUS, [_H, c_size_t, POINTER(c_char_p), _OUT]),
    "kiln_data_source_create": (_STATUS, [_H, c_char_p, _ATTRS, c_size_t, _OUT]),
    "kiln_data_source_release": (None, [_H]),
    "kiln_data_source_length": (_STATUS, [_H, POINTER(c_int64)]),
    "kiln_data_source_get": (_STATUS, [_H, c_int64, _OUT]),
    "kiln_transform_create": (_STATUS, [_H, c_char_p, _ATTRS, c_size_t, _OUT]),
    "kiln_transform_release": (None, [_H]),
    "kiln_transform_apply": (_STATUS, [_H, _H, c_uint64]),
    "kiln_loader_create": (_STATUS, [_H, _HANDLES, c_size_t, POINTER(LoaderOptions), _OUT]),
    "kiln_loader_retain": (None, [_H]),
    "kiln_loader_release": (None, [_H]),
    "kiln_loader_length": (_STATUS, [_H, POINTER(c_int64), POINTER(c_int64)]),
    "kiln_loader_start_epoch": (_STATUS, [_H, c_int64]),
    "kiln_loader_start_epoch_at": (_STATUS, [_H, c_int64, c_int64]),
    "kiln_loader_next": (_STATUS, [_H, _OUT]),
    "kiln_loader_stats_get": (_STATUS, [_H, POINTER(LoaderStats)]),
    "kiln_trainer_create": (_STATUS, [_H, POINTER(TrainerOptions), _OUT]),
    "kiln_trainer_release": (None, [_H]),
    "kiln_trainer_step": (_STATUS, [_H, POINTER(StepMetrics), POINTER(c_int)]),
    "kiln_trainer_run": (_STATUS, [_H]),
    "kiln_trainer_report": (_STATUS, [_H, c_char_p, c_size_t, POINTER(c_size_t)]),
    "kiln_trainer_evaluate": (_STATUS, [_H, _H, POINTER(EvalMetrics)]),
    "kiln_evaluate": (_STATUS, [_H, _H, c_char_p, c_char_p, c_char_p, POINTER(EvalMetrics)]),
    "kiln_safetensors_save": (_STATUS, [_H, c_char_p]),
    "kiln_safetensors_load": (_STATUS, [_H, c_char_p, _OUT]),
    "kiln_weights_save": (_STATUS, [_H, c_char_p]),
    "kiln_weights_load": (_STATUS, [_H, c_char_p, c_int]),
    "kiln_trainer_save": (_STATUS, [_H, c_char_p]),
    "kiln_trainer_load": (_STATUS, [_H, c_char_p]),
    "kiln_strategy_create": (_STATUS, [_H, c_char_p, _ATTRS, c_size_t, _OUT]),
    "kiln_strategy_release": (None, [_H]),
    "kiln_strategy_rank": (_STATUS, [_H, POINTER(c_int), POINTER(c_int)]),
    "kiln_strategy_attach": (_STATUS, [_H, _H]),
    "kiln_strategy_backward_begin": (_STATUS, [_H, c_int]),
    "kiln_strategy_reduce_gradients": (_STATUS, [_H, _HANDLES, c_size_t]),
    "kiln_strategy_optimizer_step": (_STATUS, [_H, _H]),
    "kiln_strategy_state_owner": (_STATUS, [_H, _H, POINTER(c_int)]),
    "kiln_dist_job": (_STATUS, [POINTER(c_int), POINTER(c_int), POINTER(c_int)]),
    "kiln_process_group_create": (_STATUS, [_H, POINTER(ProcessGroupOptions), _OUT]),
    "kiln_process_group_default": (_STATUS, [_H, _OUT]),
    "kiln_process_group_retain": (None, [_H]),
    "kiln_process_group_release": (None, [_H]),
    "kiln_process_group_rank": (_STATUS, [_H, POINTER(c_int), POINTER(c_int)]),
    "kiln_process_group_backend": (c_char_p, [_H]),
    "kiln_process_group_all_reduce": (_STATUS, [_H, _H, c_int, _OUT]),
    "kiln_process_group_broadcast": (_STATUS, [_H, _H, c_int, _OUT]),
    "kiln_process_group_all_gather": (_STATUS, [_H, _H, _H, _OUT]),
    "kiln_process_group_reduce_scatter": (_STATUS, [_H, _H, _H, c_int, _OUT]),
    "kiln_process_group_send": (_STATUS, [_H, _H, c_int, c_int, _OUT]),
    "kiln_process_group_recv": (_STATUS, [_H, _H, c_int, c_int, _OUT]),
    "kiln_process_group_barrier": (_STATUS, [_H, _OUT]),
    "kiln_work_wait": (_STATUS, [_H]),
    "kiln_work_done": (_STATUS, [_H, POINTER(c_int)]),
    "kiln_work_release": (None, [_H]),
}
