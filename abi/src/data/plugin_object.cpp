// Errors reported by plugin callbacks, and where a runtime keeps its plugins.
#include "data/plugin_object.hpp"

#include <string_view>

#include "kiln/error.hpp"

namespace kiln::abi {

const PluginHost& plugin_host(const kiln_runtime* rt) { return rt->plugins; }

void throw_plugin_error(kiln_status status, const std::string& what) {
  // The plugin's message may come with an empty function name in front.
  std::string_view message = kiln_last_error();
  while (!message.empty() && (message.front() == ':' || message.front() == ' ')) message.remove_prefix(1);
  throw_error(Status(status), what + ": " + std::string(message));
}

}  // namespace kiln::abi
