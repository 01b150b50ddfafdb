// kiln::Optimizer (steps, groups, hyper-parameters, state, shared
// ownership) and kiln::LrSchedule (move-only).
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "support.hpp"

static_assert(std::is_copy_constructible_v<kiln::Optimizer>);
static_assert(!std::is_copy_constructible_v<kiln::LrSchedule> &&
              std::is_nothrow_move_constructible_v<kiln::LrSchedule>);

namespace {
// A parameter holding `values`, with the gradient 1 in every element.
kiln::Tensor parameter_with_unit_grad(const kiln::Runtime& rt, const std::vector<float>& values) {
  kiln::Tensor p = kiln::Tensor::from_data(rt, values, {static_cast<int64_t>(values.size())});
  p.set_requires_grad();
  kiln::backward(rt, kiln::Op(rt, "sum")({p}));
  return p;
}
}  // namespace

TEST_CASE("Optimizer steps its parameters, counts steps, drops gradients", "[optimizer]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  kiln::Tensor p = parameter_with_unit_grad(rt, {1.0f, 2.0f});
  kiln::Optimizer sgd(rt, "SGD", {p}, {{"lr", 0.5}});
  CHECK(sgd.step_count() == 0);
  sgd.step();
  CHECK(p.to_vector<float>() == std::vector<float>{0.5f, 1.5f});
  CHECK(sgd.step_count() == 1);
  sgd.zero_grad();
  CHECK_FALSE(p.grad());
  sgd.step();  // without gradients nothing moves
  CHECK(p.to_vector<float>() == std::vector<float>{0.5f, 1.5f});
}

TEST_CASE("Optimizer groups and hyper-parameters", "[optimizer]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  kiln::Tensor a = parameter_with_unit_grad(rt, {0.0f}), b = parameter_with_unit_grad(rt, {0.0f});
  kiln::Optimizer sgd(rt, "SGD", {a}, {{"lr", 0.1}, {"momentum", 0.9}});
  sgd.add_group({b}, {{"lr", 1.0}});
  CHECK(sgd.group_count() == 2);
  CHECK(sgd.hyper(1, "lr") == 1.0);
  CHECK(sgd.hyper(1, "momentum") == 0.9);  // taken from creation
  sgd.set_hyper(0, "lr", 0.25);
  CHECK(sgd.hyper(0, "lr") == 0.25);
  REQUIRE_KILN_ERROR(sgd.hyper(0, "lrr"), KILN_ERR_NOT_FOUND, "'lrr'", "momentum");
  REQUIRE_KILN_ERROR(sgd.hyper(2, "lr"), KILN_ERR_INVALID_ARGUMENT, "group 2");
  REQUIRE_KILN_ERROR(sgd.add_group({a}), KILN_ERR_INVALID_ARGUMENT, "group");
  REQUIRE_KILN_ERROR(kiln::Optimizer(rt, "SDG", {a}), KILN_ERR_NOT_FOUND, "SDG", "SGD");
}

TEST_CASE("Optimizer state comes out as named copies and goes back in", "[optimizer]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  kiln::Tensor p = parameter_with_unit_grad(rt, {1.0f, 2.0f});
  kiln::Optimizer adam(rt, "Adam", {p}, {{"lr", 0.1}});
  adam.step();
  const std::vector<kiln::NamedTensor> saved = adam.state();
  std::vector<std::string> names;
  for (const kiln::NamedTensor& e : saved) names.push_back(e.name);
  CHECK(std::find(names.begin(), names.end(), "step") != names.end());
  CHECK(std::find(names.begin(), names.end(), "0.exp_avg") != names.end());

  kiln::Tensor q = parameter_with_unit_grad(rt, {1.0f, 2.0f});
  kiln::Optimizer other(rt, "Adam", {q}, {{"lr", 0.1}});
  other.load_state(saved);
  CHECK(other.step_count() == 1);
  std::vector<kiln::NamedTensor> misfit = saved;
  for (kiln::NamedTensor& e : misfit)
    if (e.name == "0.exp_avg") e.tensor = kiln::Tensor::zeros(rt, {3});
  REQUIRE_KILN_ERROR(other.load_state(misfit), KILN_ERR_SHAPE_MISMATCH, "0.exp_avg");
}

TEST_CASE("Optimizer copies share it, and it keeps its parameters", "[optimizer][lifetime]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  float memory[2] = {1.0f, 2.0f};
  int releases = 0;
  kiln::Optimizer kept(nullptr);
  {
    kiln::Tensor p = kiln::Tensor::wrap(rt, memory, sizeof memory, {2}, KILN_F32, [&releases] { ++releases; });
    p.set_requires_grad();
    kiln::Optimizer sgd(rt, "SGD", {p}, {{"lr", 1.0}});
    kept = sgd;
    CHECK(kept.get() == sgd.get());
    kiln::Optimizer retained = kiln::Optimizer::retain(sgd.get());
    CHECK(retained.get() == sgd.get());
  }
  CHECK(releases == 0);  // the optimizer holds the parameter
  kept = kiln::Optimizer(nullptr);
  CHECK(releases == 1);
}

TEST_CASE("LrSchedule gives the rate at each step, and moves but is not copied", "[schedule]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  kiln::LrSchedule step(rt, "step", {{"step_size", 2}, {"gamma", 0.5}});
  CHECK(step.lr(0, 1.0) == 1.0);
  CHECK(step.lr(1, 1.0) == 1.0);
  CHECK(step.lr(2, 1.0) == 0.5);
  CHECK(step.lr(5, 0.8) == 0.2);
  kiln::LrSchedule moved(std::move(step));
  CHECK_FALSE(step);
  CHECK(moved.lr(2, 1.0) == 0.5);
  step = std::move(moved);
  CHECK(step);
  CHECK_FALSE(moved);
  REQUIRE_KILN_ERROR(kiln::LrSchedule(rt, "cosine_typo"), KILN_ERR_NOT_FOUND, "cosine_typo");
  REQUIRE_KILN_ERROR(kiln::LrSchedule(rt, "step", {{"step_size", 0}}), KILN_ERR_INVALID_ARGUMENT, "step_size");
}
