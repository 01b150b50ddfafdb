// std, norm (p = 1, 2, inf) and logsumexp against references, with their
// edge values (zeros, infinities, empty groups) and gradients.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "kiln/runtime.hpp"
#include "ops/reduction/reference.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

double std_of(const std::vector<double>& g, int64_t correction) {
  double mean = 0, ss = 0;
  for (double v : g) mean += v / double(g.size());
  for (double v : g) ss += (v - mean) * (v - mean);
  return std::sqrt(ss / double(int64_t(g.size()) - correction));
}

double norm_of(const std::vector<double>& g, double p) {
  double s = 0;
  for (double v : g) s = p == kInf ? std::max(s, std::abs(v)) : s + std::pow(std::abs(v), p);
  return p == kInf ? s : std::pow(s, 1 / p);
}

double logsumexp_of(const std::vector<double>& g) {
  double s = 0;
  for (double v : g) s += std::exp(v);
  return std::log(s);
}

const std::vector<std::vector<int>> kDimSets = {{}, {1}, {0, 2}, {-1}};

}  // namespace

TEST_CASE("std, norm and logsumexp match references", "[reduction]") {
  Runtime rt;
  const Shape shape{3, 4, 5};
  for (DType dtype : {DType::f32, DType::f64}) {
    Tensor x = random_tensor(rt, shape, dtype, -3.0, 3.0, 51);
    const std::vector<double> xv = values(rt, x);
    for (const std::vector<int>& dims : kDimSets) {
      for (bool keepdim : {false, true}) {
        INFO(dtype_name(dtype) << " over " << dims.size() << " dims, keepdim " << keepdim);
        const std::vector<int64_t> d(dims.begin(), dims.end());
        const auto groups = reduce_groups(shape, xv, dims);
        for (int64_t correction : {0, 1}) {
          Tensor s = rt.call1("std", {x}, {{"dims", d}, {"keepdim", keepdim}, {"correction", correction}});
          CHECK(s.shape() == reduced_shape(shape, dims, keepdim));
          require_close(rt, s, per_group(groups, [&](const auto& g) { return std_of(g, correction); }), 1e-6, 1e-5);
        }
        for (double p : {1.0, 2.0, kInf}) {
          INFO("p = " << p);
          Tensor n = rt.call1("norm", {x}, {{"p", p}, {"dims", d}, {"keepdim", keepdim}});
          CHECK(n.shape() == reduced_shape(shape, dims, keepdim));
          require_close(rt, n, per_group(groups, [&](const auto& g) { return norm_of(g, p); }), 1e-6, 1e-5);
        }
        Tensor l = rt.call1("logsumexp", {x}, {{"dims", d}, {"keepdim", keepdim}});
        CHECK(l.shape() == reduced_shape(shape, dims, keepdim));
        require_close(rt, l, per_group(groups, logsumexp_of), 1e-6, 1e-5);
      }
    }
  }
}

TEST_CASE("logsumexp is stable and handles infinite and empty groups as PyTorch", "[reduction]") {
  Runtime rt;
  Tensor x = make_tensor(rt, {5, 2}, {1000, 1000, -1000, -1001, -kInf, -kInf, kInf, 3, kNan, 1}, DType::f32);
  const NamedAttrs dim1 = {{"dims", std::vector<int64_t>{1}}};
  require_close(rt, rt.call1("logsumexp", {x}, dim1),
                {1000 + std::log(2.0), -1000 + std::log1p(std::exp(-1.0)), -kInf, kInf, kNan}, 1e-3, 1e-6);
  require_close(rt, rt.call1("logsumexp", {rt.full({2, 0}, 1.0)}, dim1), {-kInf, -kInf});
  // The gradient is softmax; NaN for a group of -inf, as in PyTorch.
  Tensor leaf = make_tensor(rt, {2, 2}, {0, std::log(3.0), -kInf, -kInf});
  leaf.set_requires_grad(true);
  rt.backward(rt.call1("logsumexp", {leaf}, dim1), make_tensor(rt, {2}, {1.0, 1.0}));
  require_close(rt, leaf.grad(), {0.25, 0.75, kNan, kNan});
}

TEST_CASE("norm and std edge values: zeros, infinities, empty groups", "[reduction]") {
  Runtime rt;
  Tensor x = make_tensor(rt, {3, 3}, {0, 0, 0, -3, 4, 0, kInf, 1, -2});
  const NamedAttrs dim1 = {{"dims", std::vector<int64_t>{1}}};
  require_close(rt, rt.call1("norm", {x}, {{"p", 2.0}, {"dims", std::vector<int64_t>{1}}}), {0, 5, kInf});
  require_close(rt, rt.call1("norm", {x}, {{"p", 1.0}, {"dims", std::vector<int64_t>{1}}}), {0, 7, kInf});
  require_close(rt, rt.call1("norm", {x}, {{"p", kInf}, {"dims", std::vector<int64_t>{1}}}), {0, 4, kInf});
  require_close(rt, rt.call1("norm", {rt.full({2, 0}, 1.0)}, dim1), {0, 0});
  // std with one element and correction 1 divides by zero: NaN, as torch.std.
  require_close(rt, rt.call1("std", {rt.full({2, 1}, 1.0)}, dim1), {kNan, kNan});
}

TEST_CASE("std, norm and logsumexp gradients match finite differences", "[reduction][grad]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {3, 4, 5}, DType::f64, -1.0, 1.0, 53);
  for (const std::vector<int>& dims : kDimSets) {
    const std::vector<int64_t> d(dims.begin(), dims.end());
    INFO(dims.size() << " dims");
    gradcheck(rt, "std", {x}, {{"dims", d}});
    gradcheck(rt, "std", {x}, {{"dims", d}, {"keepdim", true}, {"correction", 0}});
    for (double p : {1.0, 2.0, kInf}) {
      INFO("p = " << p);
      gradcheck(rt, "norm", {x}, {{"p", p}, {"dims", d}});
    }
    gradcheck(rt, "logsumexp", {x}, {{"dims", d}, {"keepdim", true}});
  }
}

TEST_CASE("norm's gradient at zero and on ties is PyTorch's", "[reduction][grad]") {
  Runtime rt;
  for (double p : {1.0, 2.0, kInf}) {
    INFO("p = " << p);
    Tensor leaf = make_tensor(rt, {3, 3}, {0, 0, 0, -3, 4, 0, 2, -2, 1});
    leaf.set_requires_grad(true);
    rt.backward(rt.call1("norm", {leaf}, {{"p", p}, {"dims", std::vector<int64_t>{1}}}),
                make_tensor(rt, {3}, {1.0, 1.0, 1.0}));
    if (p == 1.0) require_close(rt, leaf.grad(), {0, 0, 0, -1, 1, 0, 1, -1, 1});
    if (p == 2.0) require_close(rt, leaf.grad(), {0, 0, 0, -0.6, 0.8, 0, 2 / 3.0, -2 / 3.0, 1 / 3.0});
    // inf: the two elements of |x| = 2 share the gradient.
    if (p == kInf) require_close(rt, leaf.grad(), {0, 0, 0, 0, 1, 0, 0.5, -0.5, 0});
  }
}

TEST_CASE("norm, std and logsumexp reject bad p, dims and integer inputs", "[reduction][errors]") {
  Runtime rt;
  Tensor x = rt.full({2, 3}, 1.0);
  require_error([&] { rt.call1("norm", {x}, {{"p", 3.0}}); }, Status::invalid_argument,
                {"op 'norm'", "p must be 1, 2 or inf, got 3"});
  require_error([&] { rt.call1("norm", {rt.full({2, 0}, 1.0)}, {{"p", kInf}, {"dims", std::vector<int64_t>{1}}}); },
                Status::invalid_argument, {"op 'norm'", "inf-norm over zero elements"});
  require_error([&] { rt.call1("logsumexp", {x}, {{"dims", std::vector<int64_t>{5}}}); }, Status::invalid_argument,
                {"op 'logsumexp'", "dimension 5 is out of range"});
  require_error([&] { rt.call1("std", {rt.full({2}, 1.0, DType::i32)}); }, Status::dtype_mismatch,
                {"op 'std'", "i32"});
}
