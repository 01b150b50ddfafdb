// Lists of strings as the C API takes them (const char* const*): views on
// the caller's strings, valid while those live unchanged.
#pragma once

#include <string>
#include <vector>

namespace kiln::detail {

inline std::vector<const char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<const char*> c;
  c.reserve(strings.size());
  for (const std::string& s : strings) c.push_back(s.c_str());
  return c;
}

}  // namespace kiln::detail
