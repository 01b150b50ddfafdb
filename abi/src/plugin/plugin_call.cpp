#include "plugin/plugin_call.hpp"

#include "kiln/error.hpp"
#include "kiln/kiln.h"

namespace kiln::abi {

void check_plugin_call(kiln_status status, std::string_view object, std::string_view plugin, std::string_view callback) {
  if (status == KILN_OK) return;
  throw_error(Status(status), str_cat(object, " of plugin '", plugin, "': ", callback, ": ", kiln_last_error()));
}

}  // namespace kiln::abi
