// Long lists printed for people: wrapped to a terminal's width.
#pragma once

#include <string>
#include <vector>

namespace kiln::cli {

// "<lead>a, b, c\n", broken into lines of at most `width` columns (a single
// longer item gets its own line); lines after the first are indented to
// line up under the first item.
std::string wrap_list(const std::string& lead, const std::vector<std::string>& items, size_t width = 100);

}  // namespace kiln::cli
