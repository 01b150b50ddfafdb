"""Plugins of a runtime: what is loaded, loading one more, unloading."""
import ctypes
import dataclasses
import os

from . import _capi
from ._library import decode, lib
from .runtime import resolve


@dataclasses.dataclass(frozen=True)
class PluginInfo:
    name: str
    version: str
    path: str
    abi_version: int  # KILN_PLUGIN_ABI(major, minor): major << 16 | minor
    registrations: tuple  # (kind, name) pairs: ("layer", "Linear"), ("optimizer", "SGD"), ...


def _info(runtime, index):
    info = _capi.sized(_capi.PluginInfo)
    lib.kiln_plugin_info_get(runtime._raw_address, index, ctypes.byref(info))
    registrations = []
    for r in range(info.num_registrations):
        kind, name = ctypes.c_int(), ctypes.c_char_p()
        lib.kiln_plugin_registration(runtime._raw_address, index, r, ctypes.byref(kind), ctypes.byref(name))
        registrations.append((decode(lib.kiln_registration_kind_name(kind.value)), decode(name.value)))
    return PluginInfo(decode(info.name), decode(info.version), decode(info.path), info.abi_version,
                      tuple(registrations))


@dataclasses.dataclass(frozen=True)
class ConfigEntry:
    name: str
    type: str  # "int", "float", "bool", "ints", "floats", "string", "dtype" or "tensor"
    required: bool
    doc: str


_ATTR_TYPES = ("int", "float", "bool", "ints", "floats", "string", "dtype", "tensor")
_KINDS = range(7)  # kiln_registration_kind: op, layer, optimizer, lr schedule, data source, transform, strategy


def config_schema(kind, name, runtime=None):
    """The configuration entries a plugin declared for its type `name` of
    `kind` ("layer", "optimizer", "lr schedule", "data source", "transform"
    or "strategy"), in order."""
    runtime = resolve(runtime)
    kinds = {decode(lib.kiln_registration_kind_name(k)): k for k in _KINDS}
    if kind not in kinds:
        raise ValueError(f"unknown registration kind {kind!r}; expected one of {', '.join(kinds)}")
    count = ctypes.c_size_t()
    encoded = name.encode()
    lib.kiln_registration_config_count(runtime._raw_address, kinds[kind], encoded, ctypes.byref(count))
    entries = []
    for i in range(count.value):
        attr, required, doc = _capi.Attr(), ctypes.c_int(), ctypes.c_char_p()
        lib.kiln_registration_config_entry(runtime._raw_address, kinds[kind], encoded, i, ctypes.byref(attr),
                                           ctypes.byref(required), ctypes.byref(doc))
        entries.append(ConfigEntry(decode(attr.name), _ATTR_TYPES[attr.type], bool(required.value), decode(doc.value)))
    return entries


def plugins(runtime=None):
    """The loaded plugins, in load order."""
    runtime = resolve(runtime)
    count = ctypes.c_size_t()
    lib.kiln_plugin_count(runtime._raw_address, ctypes.byref(count))
    return [_info(runtime, i) for i in range(count.value)]


def load_plugin(path, runtime=None):
    """Loads one more plugin library; returns its PluginInfo. A library
    kiln will not take raises kiln.PluginRefused saying why."""
    runtime = resolve(runtime)
    lib.kiln_plugin_load(runtime._raw_address, os.fsencode(path))
    count = ctypes.c_size_t()
    lib.kiln_plugin_count(runtime._raw_address, ctypes.byref(count))
    return _info(runtime, count.value - 1)


def unload_plugin(name, runtime=None):
    """Removes plugin `name`: what it registers can no longer be created;
    objects it made stay usable."""
    lib.kiln_plugin_unload(resolve(runtime)._address, name.encode())
