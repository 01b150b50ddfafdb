#include "kiln/memory/memory_fraction.hpp"

#include <charconv>
#include <cstring>

#include "kiln/error.hpp"

namespace kiln {

double parse_memory_fraction(const char* text) {
  if (text == nullptr || *text == '\0') return 1.0;
  // from_chars, unlike strtod, ignores the host process's locale.
  const char* end = text + std::strlen(text);
  double fraction = 0.0;
  const auto [stop, err] = std::from_chars(text, end, fraction);
  KILN_CHECK(err == std::errc() && stop == end && fraction > 0.0 && fraction <= 1.0, Status::invalid_argument,
             kMemoryFractionVariable, "=\"", text, "\": expected a number greater than 0 and at most 1 (the share of ",
             "each GPU's memory kiln may reserve)");
  return fraction;
}

size_t memory_limit_bytes(double fraction, size_t device_bytes) {
  if (fraction >= 1.0) return 0;
  // At least one byte: a tiny fraction is a tiny cap, never "no cap".
  const auto limit = size_t(fraction * double(device_bytes));
  return limit > 0 ? limit : 1;
}

}  // namespace kiln
