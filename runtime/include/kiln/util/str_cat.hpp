// str_cat: concatenates strings, string views, C strings, numbers and any type
// with a `to_string(const T&)` found by argument-dependent lookup.
#pragma once

#include <concepts>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace detail {

inline void append_part(std::string& out, std::string_view s) { out.append(s); }
inline void append_part(std::string& out, const char* s) { out.append(s); }
inline void append_part(std::string& out, char c) { out.push_back(c); }
inline void append_part(std::string& out, bool b) { out.append(b ? "true" : "false"); }

template <class T>
  requires(std::is_arithmetic_v<T> && !std::same_as<T, bool> && !std::same_as<T, char>)
void append_part(std::string& out, T v) {
  if constexpr (std::is_floating_point_v<T>) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
    out.append(buf);
  } else {
    out.append(std::to_string(v));
  }
}

template <class T>
  requires requires(const T& t) { to_string(t); }
void append_part(std::string& out, const T& v) {
  out.append(to_string(v));
}

}  // namespace detail

template <class... Parts>
std::string str_cat(const Parts&... parts) {
  std::string out;
  (detail::append_part(out, parts), ...);
  return out;
}

}  // namespace kiln
