// kiln::Runtime: the op table, allocators, threads, random stream and
// plugins of kiln_runtime; and what a runtime and the library say about
// themselves (devices, memory, plugins, the build).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "c_strings.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "kiln/kiln.h"

namespace kiln {

// A device: the CPU, or the GPU `index`.
struct Device {
  kiln_device_type type = KILN_DEVICE_CPU;
  int index = 0;

  static constexpr Device cpu() { return {KILN_DEVICE_CPU, 0}; }
  static constexpr Device cuda(int index = 0) { return {KILN_DEVICE_CUDA, index}; }
  constexpr bool operator==(const Device& other) const { return type == other.type && index == other.index; }
  constexpr bool operator!=(const Device& other) const { return !(*this == other); }
};

// kiln_runtime_options with C++ types. `log` (with `log_user_data`) is
// called by the runtime for as long as it lives, which may be past the last
// Runtime wrapper (tensors and modules hold the runtime): it must stay
// callable until then; NULL writes to stderr.
struct RuntimeOptions {
  int num_threads = 0;  // 0: one per hardware thread
  uint64_t seed = 0;
  std::vector<std::string> plugin_paths;  // loaded first, before the default search path
  bool skip_default_plugins = false;
  kiln_log_fn log = nullptr;
  void* log_user_data = nullptr;
  bool log_verbose = false;
};

struct PluginRegistration {
  kiln_registration_kind kind;
  std::string name;
};

struct PluginInfo {
  std::string name;
  std::string version;
  std::string path;
  uint32_t abi_version = 0;
  std::vector<PluginRegistration> registrations;
};

class Runtime : public detail::SharedHandle<kiln_runtime, kiln_runtime_retain, kiln_runtime_release> {
 public:
  // Creates a runtime, loading its plugins.
  explicit Runtime(const RuntimeOptions& options = {}) {
    const std::vector<const char*> paths = detail::c_strings(options.plugin_paths);
    kiln_runtime_options o{};
    o.size = sizeof o;
    o.num_threads = options.num_threads;
    o.seed = options.seed;
    o.plugin_paths = paths.data();
    o.n_plugin_paths = paths.size();
    o.skip_default_plugins = options.skip_default_plugins;
    o.log = options.log;
    o.log_user_data = options.log_user_data;
    o.log_verbose = options.log_verbose;
    kiln_runtime* rt = nullptr;
    check(kiln_runtime_create(&o, &rt));
    *this = adopt(rt);
  }
  explicit Runtime(std::nullptr_t) noexcept {}
  // Takes over the caller's reference on `rt`; retain() adds one.
  static Runtime adopt(kiln_runtime* rt) noexcept { return Runtime(rt); }
  static Runtime retain(kiln_runtime* rt) noexcept {
    kiln_runtime_retain(rt);
    return Runtime(rt);
  }

  void manual_seed(uint64_t seed) const { check(kiln_manual_seed(get(), seed)); }

  kiln_memory_stats memory_stats(Device device = Device::cpu()) const {
    kiln_memory_stats stats{};
    stats.size = sizeof stats;
    check(kiln_memory_stats_get(get(), device.type, device.index, &stats));
    return stats;
  }

  // GPUs found at creation (0 when none is usable), and why none is, in words.
  int cuda_device_count() const {
    int count = 0;
    check(kiln_devices_get(get(), &count, nullptr));
    return count;
  }
  std::string cuda_unavailable_reason() const {
    const char* reason = nullptr;
    check(kiln_devices_get(get(), nullptr, &reason));
    return reason;
  }

  void load_plugin(const std::string& path) const { check(kiln_plugin_load(get(), path.c_str())); }
  void unload_plugin(const std::string& name) const { check(kiln_plugin_unload(get(), name.c_str())); }

  // The loaded plugins, in load order, with what each registered.
  std::vector<PluginInfo> plugins() const {
    size_t count = 0;
    check(kiln_plugin_count(get(), &count));
    std::vector<PluginInfo> plugins;
    for (size_t p = 0; p < count; ++p) {
      kiln_plugin_info info{};
      info.size = sizeof info;
      check(kiln_plugin_info_get(get(), p, &info));
      PluginInfo plugin{info.name, info.version, info.path, info.abi_version, {}};
      for (size_t r = 0; r < info.num_registrations; ++r) {
        kiln_registration_kind kind{};
        const char* name = nullptr;
        check(kiln_plugin_registration(get(), p, r, &kind, &name));
        plugin.registrations.push_back({kind, name});
      }
      plugins.push_back(std::move(plugin));
    }
    return plugins;
  }

 private:
  explicit Runtime(kiln_runtime* rt) noexcept : SharedHandle(rt) {}
};

// How the library was built; every string in it is static.
inline kiln_build_info build_info() {
  kiln_build_info info{};
  info.size = sizeof info;
  check(kiln_build_info_get(&info));
  return info;
}

}  // namespace kiln
