#include "kiln/device.hpp"

#include <charconv>

namespace kiln {

std::string to_string(const Device& d) {
  if (d.is_cpu()) return "cpu";
  return "cuda:" + std::to_string(d.index);
}

bool parse_device(std::string_view text, Device* out) {
  if (text == "cpu") {
    *out = Device::cpu();
    return true;
  }
  if (text == "cuda") {
    *out = Device::cuda(0);
    return true;
  }
  constexpr std::string_view prefix = "cuda:";
  if (text.substr(0, prefix.size()) != prefix) return false;
  const std::string_view digits = text.substr(prefix.size());
  int index = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || end != digits.data() + digits.size() || index < 0) return false;
  *out = Device::cuda(index);
  return true;
}

}  // namespace kiln
