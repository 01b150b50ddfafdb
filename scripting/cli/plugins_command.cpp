// kiln plugins: every plugin a default runtime loads, with what it registers.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "command.hpp"
#include "kiln/kiln_plugin.h"
#include "text_wrap.hpp"

namespace kiln::cli {
namespace {

// Names registered by one plugin, by kind, in the kinds' enum order.
using Registrations = std::map<kiln_registration_kind, std::vector<std::string>>;

bool collect(kiln_runtime* rt, size_t plugin, size_t count, Registrations* out) {
  for (size_t r = 0; r < count; ++r) {
    kiln_registration_kind kind{};
    const char* name = nullptr;
    if (kiln_plugin_registration(rt, plugin, r, &kind, &name) != KILN_OK) return false;
    (*out)[kind].emplace_back(name);
  }
  return true;
}

// "strategy" -> "strategies", "layer" -> "layers".
std::string plural(std::string noun) {
  if (noun.ends_with('y')) return noun.substr(0, noun.size() - 1) + "ies";
  return noun + "s";
}

// "  layers (21): Linear, Conv2d, ..." wrapped under a hanging indent.
void print_group(kiln_registration_kind kind, const std::vector<std::string>& names) {
  const std::string label = "  " + plural(kiln_registration_kind_name(kind)) + " (" + std::to_string(names.size()) + "): ";
  std::fputs(wrap_list(label, names).c_str(), stdout);
}

}  // namespace

int plugins_command(const Command& self, Args args) {
  if (const int code = check_no_arguments(self, args); code != kExitOk) return code;
  const RuntimePtr rt = open_runtime(self, nullptr);
  if (!rt) return kExitFailure;
  size_t count = 0;
  if (kiln_plugin_count(rt.get(), &count) != KILN_OK) return library_failure(self, "cannot count the plugins");
  if (count == 0)
    std::puts("no plugins found (searched KILN_PLUGIN_PATH and the install's plugin folder beside libkiln)");
  for (size_t p = 0; p < count; ++p) {
    kiln_plugin_info info{};
    info.size = sizeof info;
    if (kiln_plugin_info_get(rt.get(), p, &info) != KILN_OK) return library_failure(self, "cannot read a plugin");
    Registrations registrations;
    if (!collect(rt.get(), p, info.num_registrations, &registrations))
      return library_failure(self, std::string("cannot read what plugin '") + info.name + "' registers");
    std::printf("%s %s\n  file: %s\n  plugin ABI: %u.%u\n", info.name, info.version, info.path,
                unsigned(KILN_PLUGIN_ABI_MAJOR(info.abi_version)), unsigned(KILN_PLUGIN_ABI_MINOR(info.abi_version)));
    for (const auto& [kind, names] : registrations) print_group(kind, names);
  }
  return kExitOk;
}

}  // namespace kiln::cli
