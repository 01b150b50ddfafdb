#include "checkpoint/plugin_manifest.hpp"

#include "train/api_call.hpp"

namespace kiln::abi {

PluginVersions loaded_plugins(kiln_runtime* rt) {
  PluginVersions versions;
  size_t n = 0;
  train::check_call(kiln_plugin_count(rt, &n), "listing the plugins");
  for (size_t i = 0; i < n; ++i) {
    kiln_plugin_info info{};
    info.size = sizeof info;
    train::check_call(kiln_plugin_info_get(rt, i, &info), "listing the plugins");
    versions.emplace(info.name, info.version);
  }
  return versions;
}

}  // namespace kiln::abi
