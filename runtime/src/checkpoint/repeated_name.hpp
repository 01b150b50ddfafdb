// Finding a name given twice: tensor names and metadata keys, both when a
// header is read and before one is written.
#pragma once

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

namespace kiln::checkpoint {

// A name that two of `items` share (the first such in sorted order), or
// nothing; `name_of(item)` gives an item's name as a string_view.
template <class Range, class NameOf>
std::optional<std::string_view> find_repeated_name(const Range& items, NameOf name_of) {
  std::vector<std::string_view> names;
  names.reserve(items.size());
  for (const auto& item : items) names.push_back(name_of(item));
  std::sort(names.begin(), names.end());
  const auto twice = std::adjacent_find(names.begin(), names.end());
  if (twice == names.end()) return std::nullopt;
  return *twice;
}

}  // namespace kiln::checkpoint
