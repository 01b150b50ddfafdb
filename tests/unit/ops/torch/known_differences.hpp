// Fixture cases where kiln is known to differ from PyTorch, each with what
// kiln does instead. Such a case is still run and must still differ: once
// kiln matches PyTorch there, the test fails until the entry is removed.
#pragma once

#include <span>
#include <string_view>

namespace kiln::test {

struct KnownDifference {
  std::string_view op;
  std::string_view label;  // the case's label in the fixture
  std::string_view reason;
};

std::span<const KnownDifference> known_differences();
const KnownDifference* find_known_difference(std::string_view op, std::string_view label);

}  // namespace kiln::test
