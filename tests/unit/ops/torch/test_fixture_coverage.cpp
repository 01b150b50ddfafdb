// Every op of a runtime is checked against PyTorch through a stored fixture,
// or is listed in fixture_exceptions.cpp with the reason it is not.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

#include "ops/torch/fixture_exceptions.hpp"
#include "ops/torch/fixture_file.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// The endings of the ops that compute a piece of another op's gradient.
constexpr std::string_view kGradientSuffixes[] = {"_backward", "_grad", "_grad_input", "_grad_weight"};

// "x" for an op named x_backward (and the like), else "".
std::string gradient_of(std::string_view op) {
  for (std::string_view suffix : kGradientSuffixes)
    if (op.size() > suffix.size() && op.ends_with(suffix)) return std::string(op.substr(0, op.size() - suffix.size()));
  return "";
}

// Fixture op name -> whether the fixture stores gradients.
std::map<std::string, bool> fixtures_with_gradients(Runtime& rt) {
  std::map<std::string, bool> out;
  for (const std::string& path : fixture_paths()) {
    bool gradients = false;
    for (const FixtureCase& c : read_fixture(rt, path).cases) gradients = gradients || c.checks_gradients();
    out[fixture_op_name(path)] = gradients;
  }
  return out;
}

const FixtureException* find_exception(std::string_view op) {
  for (const FixtureException& e : fixture_exceptions())
    if (e.op == op) return &e;
  return nullptr;
}

}  // namespace

TEST_CASE("every op has a PyTorch fixture or a stated reason", "[ops][torch]") {
  Runtime rt;
  const std::map<std::string, bool> fixtures = fixtures_with_gradients(rt);
  for (const std::string& op : rt.registry().names()) {
    if (fixtures.count(op) || find_exception(op)) continue;
    auto forward = fixtures.find(gradient_of(op));
    if (forward != fixtures.end() && forward->second) continue;
    FAIL_CHECK("op '" << op << "' has no fixture in tests/fixtures/torch (add it to generate.py) "
                      << "and no entry in tests/unit/ops/torch/fixture_exceptions.cpp");
  }
}

TEST_CASE("the fixture exceptions name registered ops without fixtures", "[ops][torch]") {
  Runtime rt;
  const std::map<std::string, bool> fixtures = fixtures_with_gradients(rt);
  std::set<std::string_view> seen;
  for (const FixtureException& e : fixture_exceptions()) {
    INFO("exception '" << e.op << "'");
    CHECK(rt.registry().find(e.op) != nullptr);
    CHECK(fixtures.count(std::string(e.op)) == 0);
    CHECK(!e.reason.empty());
    CHECK(seen.insert(e.op).second);
  }
  for (const auto& [op, gradients] : fixtures) {
    INFO("fixture '" << op << "'");
    CHECK(rt.registry().find(op) != nullptr);
  }
}
