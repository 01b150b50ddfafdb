"""Examples, data sources, transforms and loaders (the input pipeline).

    source = kiln.DataSource("tensors", input=x_array, target=y_array)
    loader = kiln.Loader(source, batch_size=32, shuffle=True, seed=1, num_workers=2)
    for batch in loader:                 # one epoch per loop: 0, 1, ...
        batch["input"], batch["target"]  # Tensors, stacked along dimension 0

Examples travel as dicts {field name: Tensor}; kiln.Example is the handle
kiln uses for them, made from a dict where kiln needs one.
"""
import ctypes
import dataclasses

from . import _capi, devices
from ._attrs import AttrList
from ._handle import Handle, handle_of
from ._library import decode, lib
from .creation import as_tensor
from .runtime import resolve
from .tensor import Tensor


class Example(Handle):
    """Named CPU tensors (kiln_example), made from a dict of Tensors or ndarrays."""

    _release_function = "kiln_example_release"

    def __init__(self, fields=None, runtime=None):
        self._create(fields, resolve(runtime))

    @classmethod
    def _for(cls, fields, runtime):
        """An Example made for an object of `runtime`, which keeps it alive."""
        example = cls.__new__(cls)
        example._create(fields, runtime)
        return example

    def _create(self, fields, runtime):
        out = ctypes.c_void_p()
        lib.kiln_example_create(runtime._raw_address, ctypes.byref(out))
        Handle.__init__(self, out.value, runtime)
        for name, value in (fields or {}).items():
            self[name] = value

    @classmethod
    def _adopt(cls, address, runtime):
        """An Example owning the reference `address` that kiln gave back."""
        example = cls.__new__(cls)
        Handle.__init__(example, address, runtime)
        return example

    def __setitem__(self, name, value):
        with as_tensor(value, self._runtime) as tensor:
            lib.kiln_example_set(self._ptr, name.encode(), tensor._ptr)

    def __getitem__(self, name):
        out = ctypes.c_void_p()
        lib.kiln_example_get(self._ptr, name.encode(), ctypes.byref(out))
        return Tensor(out.value, self._runtime)

    def __len__(self):
        count = ctypes.c_size_t()
        lib.kiln_example_field_count(self._ptr, ctypes.byref(count))
        return count.value

    def to_dict(self):
        """{field name: Tensor}, in the example's field order."""
        fields = {}
        for i in range(len(self)):
            name, out = ctypes.c_char_p(), ctypes.c_void_p()
            lib.kiln_example_field(self._ptr, i, ctypes.byref(name), ctypes.byref(out))
            fields[decode(name.value)] = Tensor(out.value, self._runtime)
        return fields

    def keys(self):
        return list(self.to_dict())

    def __iter__(self):
        return iter(self.keys())


def take_example(address, runtime):
    """The fields of a new example handle as a dict; the handle is released."""
    with Example._adopt(address, runtime) as example:
        return example.to_dict()


def as_example(value, runtime):
    """`value` (an Example, used as it is, or a dict) as an Example."""
    if isinstance(value, Example):
        return value
    return Example._for(value, runtime)


class DataSource(Handle):
    """A data source of a registered type ("idx", "cifar10", "npy", "csv",
    "tensors", "synthetic"), configured by keyword arguments; source[i] is
    example i as a dict. Files are read and checked here."""

    _release_function = "kiln_data_source_release"

    def __init__(self, type_name, runtime=None, **config):
        runtime = resolve(runtime)
        attrs = AttrList(config, runtime)
        out = ctypes.c_void_p()
        lib.kiln_data_source_create(runtime._raw_address, type_name.encode(), attrs.array, len(attrs),
                                    ctypes.byref(out))
        super().__init__(out.value, runtime)

    def __len__(self):
        n = ctypes.c_int64()
        lib.kiln_data_source_length(self._ptr, ctypes.byref(n))
        return n.value

    def __getitem__(self, index):
        if not -len(self) <= index < len(self):
            raise IndexError(f"example {index} of a source of {len(self)}")
        out = ctypes.c_void_p()
        lib.kiln_data_source_get(self._ptr, index % len(self), ctypes.byref(out))
        return take_example(out.value, self._runtime)


class Transform(Handle):
    """A transform of a registered type ("to_float", "normalize", "random_crop",
    "random_hflip", "one_hot"); transform(example, seed) returns the
    transformed fields. Random choices depend on `seed` only."""

    _release_function = "kiln_transform_release"

    def __init__(self, type_name, runtime=None, **config):
        runtime = resolve(runtime)
        attrs = AttrList(config, runtime)
        out = ctypes.c_void_p()
        lib.kiln_transform_create(runtime._raw_address, type_name.encode(), attrs.array, len(attrs), ctypes.byref(out))
        super().__init__(out.value, runtime)

    def __call__(self, example, seed=0):
        """The transformed fields of `example`: a dict given is left as it
        is (transforms set new tensors), an Example is transformed in place."""
        target = as_example(example, self._runtime)
        lib.kiln_transform_apply(self._ptr, target._ptr, seed)
        return target.to_dict()

    apply = __call__


@dataclasses.dataclass(frozen=True)
class LoaderStats:
    batches: int  # delivered since creation
    last_wait_seconds: float
    total_wait_seconds: float
    max_ready: int  # most batches ever waiting ready at once
    device_wait_seconds: float  # bound for a GPU: its compute stream's wait for input copies


class Loader(Handle):
    """Batches of a data source: a seeded shuffle per epoch, this process's
    shard (rank of world_size), transforms on `num_workers` threads, up to
    `prefetch` batches made ahead, delivered on `device`. Iterating runs
    the next epoch (0, 1, ...); epoch(n) runs epoch n."""

    _release_function = "kiln_loader_release"

    def __init__(self, source, transforms=(), *, batch_size, shuffle=False, seed=0, drop_last=False, rank=0,
                 world_size=1, num_workers=0, prefetch=0, device="cpu"):
        device_type, index = devices.parse(device)
        options = _capi.sized(_capi.LoaderOptions, batch_size=batch_size, shuffle=bool(shuffle), seed=seed,
                              drop_last=bool(drop_last), rank=rank, world_size=world_size, num_workers=num_workers,
                              prefetch=prefetch, device=device_type, device_index=index)
        source_handle = handle_of(source, DataSource, "the loader's source")
        transforms = [handle_of(t, Transform, "a loader transform") for t in transforms]
        handles = (ctypes.c_void_p * len(transforms))(*transforms)
        out = ctypes.c_void_p()
        lib.kiln_loader_create(source_handle, handles, len(transforms), ctypes.byref(options), ctypes.byref(out))
        super().__init__(out.value, source.runtime)
        self._next_epoch = 0

    def _length(self):
        examples, batches = ctypes.c_int64(), ctypes.c_int64()
        lib.kiln_loader_length(self._ptr, ctypes.byref(examples), ctypes.byref(batches))
        return examples.value, batches.value

    def __len__(self):
        """Batches per epoch (of this shard)."""
        return self._length()[1]

    @property
    def num_examples(self):
        """Examples per epoch (of this shard)."""
        return self._length()[0]

    def start_epoch(self, epoch, first_batch=0):
        """Abandons the current epoch and starts `epoch` at batch `first_batch`
        (the batches before it are skipped without being made)."""
        if first_batch:
            lib.kiln_loader_start_epoch_at(self._ptr, epoch, first_batch)
        else:
            lib.kiln_loader_start_epoch(self._ptr, epoch)
        self._next_epoch = epoch + 1

    def next(self):
        """The next batch of the current epoch as a dict, or None when it is over."""
        out = ctypes.c_void_p()
        lib.kiln_loader_next(self._ptr, ctypes.byref(out))
        return None if out.value is None else take_example(out.value, self._runtime)

    def epoch(self, epoch, first_batch=0):
        """The batches of `epoch`, from `first_batch` on."""
        self.start_epoch(epoch, first_batch)
        while (batch := self.next()) is not None:
            yield batch

    def __iter__(self):
        return self.epoch(self._next_epoch)

    def stats(self):
        stats = _capi.sized(_capi.LoaderStats)
        lib.kiln_loader_stats_get(self._ptr, ctypes.byref(stats))
        return _capi.to_dataclass(LoaderStats, stats)
