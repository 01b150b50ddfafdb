// kiln plugins: every plugin a default runtime loads, with what it registers.
#include <cstdio>
#include <string>

#include "command.hpp"
#include "kiln/kiln_plugin.h"
#include "registrations.hpp"

namespace kiln::cli {

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
    if (!collect_registrations(rt.get(), p, info.num_registrations, &registrations))
      return library_failure(self, std::string("cannot read what plugin '") + info.name + "' registers");
    std::printf("%s %s\n  file: %s\n  plugin ABI: %u.%u\n", info.name, info.version, info.path,
                unsigned(KILN_PLUGIN_ABI_MAJOR(info.abi_version)), unsigned(KILN_PLUGIN_ABI_MINOR(info.abi_version)));
    print_registrations(registrations);
  }
  return kExitOk;
}

}  // namespace kiln::cli
