// How the report writes numbers.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/util/str_cat.hpp"

namespace kiln::report {

std::string fixed(double value, int decimals);  // "12.35"
std::string milliseconds(double seconds);       // "12.35 ms"
std::string percent(double fraction);           // "12.3%"
std::string bytes(int64_t count);               // "38.0 MiB"
std::string flops_rate(double per_second);      // "12.3 GFLOP/s"

}  // namespace kiln::report
