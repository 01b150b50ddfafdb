// The ops of a runtime that have no PyTorch fixture, each with the reason and
// the tests that check it instead. Keep it short: an op that PyTorch can
// compute deterministically belongs in tests/fixtures/torch/generate.py.
//
// Not listed, because covered by rule: an op named `<x>_backward`, `<x>_grad`,
// `<x>_grad_input` or `<x>_grad_weight` computes a piece of op x's gradient
// and is checked by x's fixture when that fixture stores gradients.
#pragma once

#include <span>
#include <string_view>

namespace kiln::test {

struct FixtureException {
  std::string_view op;
  std::string_view reason;
};

std::span<const FixtureException> fixture_exceptions();

}  // namespace kiln::test
