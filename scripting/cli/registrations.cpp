#include "registrations.hpp"

#include <cstdio>

#include "text_wrap.hpp"

namespace kiln::cli {
namespace {

// "strategy" -> "strategies", "layer" -> "layers".
std::string plural(std::string noun) {
  if (noun.ends_with('y')) return noun.substr(0, noun.size() - 1) + "ies";
  return noun + "s";
}

}  // namespace

bool collect_registrations(kiln_runtime* rt, size_t plugin, size_t count, Registrations* out) {
  for (size_t r = 0; r < count; ++r) {
    kiln_registration_kind kind{};
    const char* name = nullptr;
    if (kiln_plugin_registration(rt, plugin, r, &kind, &name) != KILN_OK) return false;
    (*out)[kind].emplace_back(name);
  }
  return true;
}

void print_registrations(const Registrations& registrations) {
  for (const auto& [kind, names] : registrations) {
    const std::string label =
        "  " + plural(kiln_registration_kind_name(kind)) + " (" + std::to_string(names.size()) + "): ";
    std::fputs(wrap_list(label, names).c_str(), stdout);
  }
}

}  // namespace kiln::cli
