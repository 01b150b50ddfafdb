// kiln's ops against PyTorch: every stored fixture (tests/fixtures/torch) is
// run and its outputs and gradients compared. The largest differences per
// op are printed as a table, so that they can be quoted.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "ops/torch/fixture_run.hpp"
#include "ops/torch/known_differences.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

struct OpSummary {
  std::string op;
  size_t cases = 0;
  size_t gradient_cases = 0;
  Difference outputs, grads;
  bool failed = false;
  size_t known = 0;  // cases listed in known_differences.cpp
};

void print_table(const std::vector<OpSummary>& rows, const std::string& torch_version) {
  std::printf("kiln against PyTorch %s: the largest |kiln - torch| per op; 'worst' is the largest difference\n"
              "as a fraction of the tolerance (atol + rtol |torch|, by dtype; 1 is the limit)\n",
              torch_version.c_str());
  std::printf("%-22s %6s %6s %14s %14s %9s  %s\n", "op", "cases", "grads", "outputs", "gradients", "worst",
              "result");
  for (const OpSummary& r : rows) {
    std::printf("%-22s %6zu %6zu %14.3e %14.3e %9.3f  %s\n", r.op.c_str(), r.cases, r.gradient_cases,
                r.outputs.max_abs, r.grads.max_abs, std::max(r.outputs.worst, r.grads.worst),
                r.failed ? "DIFFERS" : r.known ? "ok, but for known differences" : "ok");
  }
}

}  // namespace

TEST_CASE("ops match PyTorch's stored outputs and gradients", "[ops][torch]") {
  Runtime rt;
  const std::vector<std::string> paths = fixture_paths();
  REQUIRE(!paths.empty());
  std::vector<OpSummary> rows;
  std::string torch_version;
  for (const std::string& path : paths) {
    const FixtureFile file = read_fixture(rt, path);
    INFO(path);
    CHECK(file.op == fixture_op_name(path));
    CHECK(!file.cases.empty());
    torch_version = file.torch_version;
    std::set<std::string> labels;
    for (const FixtureCase& c : file.cases) CHECK(labels.insert(c.label).second);
    OpSummary row;
    row.op = file.op;
    for (const FixtureCase& c : file.cases) {
      const CaseResult result = run_fixture_case(rt, file.op, c);
      ++row.cases;
      row.gradient_cases += c.checks_gradients() ? 1 : 0;
      if (const KnownDifference* known = find_known_difference(file.op, c.label)) {
        ++row.known;
        if (result.failures.empty())
          FAIL_CHECK("op '" << file.op << "' case '" << c.label << "' now matches PyTorch: remove its entry from "
                            << "known_differences.cpp (" << known->reason << ")");
        continue;
      }
      row.outputs.merge(result.outputs);
      row.grads.merge(result.grads);
      for (const std::string& failure : result.failures) {
        row.failed = true;
        FAIL_CHECK("op '" << file.op << "' " << failure);
      }
    }
    rows.push_back(row);
  }
  print_table(rows, torch_version);
}

TEST_CASE("known differences from PyTorch name stored cases", "[ops][torch]") {
  Runtime rt;
  for (const KnownDifference& d : known_differences()) {
    INFO("known difference: op '" << d.op << "', case '" << d.label << "'");
    bool found = false;
    for (const FixtureCase& c : read_fixture(rt, fixture_folder() + "/" + std::string(d.op) + ".safetensors").cases)
      found = found || c.label == d.label;
    CHECK(found);
    CHECK(!d.reason.empty());
  }
}
