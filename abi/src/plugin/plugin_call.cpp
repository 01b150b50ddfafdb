#include "plugin/plugin_call.hpp"

#include "kiln/error.hpp"
#include "kiln/kiln.h"

namespace kiln::abi {

std::string describe_registered(std::string_view kind, std::string_view name, std::string_view plugin) {
  return str_cat(kind, " '", name, "' (plugin '", plugin, "')");
}

void check_plugin_call(kiln_status status, std::string_view who) {
  if (status == KILN_OK) return;
  // A plugin that failed without calling host->error leaves an older message
  // behind; the status still tells what kind of failure it was.
  const bool known = status > KILN_OK && status <= KILN_ERR_SCRIPT;
  throw_error(known ? Status(status) : Status::internal,
              known ? str_cat(who, ": ", kiln_last_error())
                    : str_cat(who, ": failed with the unknown status ", int(status), " (", kiln_last_error(), ")"));
}

}  // namespace kiln::abi
