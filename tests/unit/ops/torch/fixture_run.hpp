// Calls a kiln op as a stored fixture case says and compares what it gives
// with PyTorch's outputs and gradients.
#pragma once

#include <string>
#include <vector>

#include "ops/torch/compare.hpp"
#include "ops/torch/fixture_file.hpp"

namespace kiln::test {

struct CaseResult {
  Difference outputs;
  Difference grads;
  std::vector<std::string> failures;  // each names the case and what differs
};

// Runs case `c` of op `op`: the op is called by name with the stored inputs
// and attributes; when the case stores gradients, backward runs from every
// output that has weights, with those weights as the output's gradient, and
// each input's gradient is compared (an input kiln gives none counts as zeros).
CaseResult run_fixture_case(Runtime& rt, const std::string& op, const FixtureCase& c);

}  // namespace kiln::test
