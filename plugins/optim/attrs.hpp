// Reading a configuration the host has checked against our schema (every
// entry present, in schema order), and checking the values themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/kiln_plugin.h"

namespace kiln_optim {

class Attrs {
 public:
  Attrs(const kiln_attr* data, size_t n) : data_(data), n_(n) {}

  double number(const char* name) const;  // an int or a float
  int64_t integer(const char* name) const;
  bool flag(const char* name) const;
  std::string text(const char* name) const;
  std::vector<double> numbers(const char* name) const;  // ints or floats
  std::vector<int64_t> integers(const char* name) const;

 private:
  const kiln_attr& find(const char* name) const;
  const kiln_attr* data_;
  size_t n_;
};

// Numbers in messages. (Not std::to_string: its templates would be exported
// from the library, which must export kiln_plugin_entry alone.)
std::string to_text(double v);
std::string to_text(int64_t v);

// Fail with invalid_argument, naming the entry, unless its value is in range.
void require_at_least(const char* name, double value, double min);
void require_above(const char* name, double value, double min);
void require_below(const char* name, double value, double max);

}  // namespace kiln_optim
