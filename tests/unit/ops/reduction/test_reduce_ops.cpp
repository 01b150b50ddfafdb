#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "ops/reduction/reference.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

std::vector<double> reference(const std::string& op, const std::vector<std::vector<double>>& groups,
                              int64_t correction = 1) {
  std::vector<double> out;
  for (const std::vector<double>& g : groups) {
    double sum = 0;
    for (double v : g) sum += v;
    const double mean = sum / double(g.size());
    double ss = 0;
    for (double v : g) ss += (v - mean) * (v - mean);
    if (op == "sum") out.push_back(sum);
    else if (op == "mean") out.push_back(mean);
    else if (op == "max") out.push_back(*std::max_element(g.begin(), g.end()));
    else out.push_back(ss / double(int64_t(g.size()) - correction));
  }
  return out;
}

}  // namespace

TEST_CASE("sum, mean, max and var match a plain reference in f32 and f64", "[reduction]") {
  Runtime rt;
  const Shape shape{3, 4, 5};
  for (DType dtype : {DType::f32, DType::f64}) {
    Tensor x = random_tensor(rt, shape, dtype, -2.0, 2.0, 7);
    const std::vector<double> xv = values(rt, x);
    for (const std::vector<int>& dims : std::vector<std::vector<int>>{{}, {1}, {0, 2}, {-1}}) {
      for (bool keepdim : {false, true}) {
        for (const char* op : {"sum", "mean", "max", "var"}) {
          INFO(op << " over " << dims.size() << " dims, keepdim " << keepdim << ", " << dtype_name(dtype));
          Tensor y = rt.call1(op, {x}, {{"dims", std::vector<int64_t>(dims.begin(), dims.end())}, {"keepdim", keepdim}});
          Shape expected_shape;
          for (int d = 0; d < shape.rank(); ++d) {
            const bool reduced = dims.empty() || std::count(dims.begin(), dims.end(), d) ||
                                 std::count(dims.begin(), dims.end(), d - shape.rank());
            if (!reduced) expected_shape.push_back(shape[d]);
            else if (keepdim) expected_shape.push_back(1);
          }
          CHECK(y.shape() == expected_shape);
          require_close(rt, y, reference(op, reduce_groups(shape, xv, dims)), 1e-6, 1e-5);
        }
      }
    }
  }
}

TEST_CASE("var honours correction and reductions read strided inputs", "[reduction]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {4, 6}, DType::f64, -1.0, 1.0, 3);
  Tensor v0 = rt.call1("var", {x}, {{"dims", std::vector<int64_t>{1}}, {"correction", 0}});
  require_close(rt, v0, reference("var", reduce_groups({4, 6}, values(rt, x), {1}), 0), 1e-12, 1e-10);

  Tensor t = rt.call1("transpose", {x}, {{"dim0", 0}, {"dim1", 1}});  // [6, 4], not contiguous
  REQUIRE_FALSE(t.is_contiguous());
  const std::vector<double> tv = values(rt, t);
  for (const char* op : {"sum", "mean", "max", "var"}) {
    INFO(op);
    Tensor y = rt.call1(op, {t}, {{"dims", std::vector<int64_t>{0}}});
    require_close(rt, y, reference(op, reduce_groups({6, 4}, tv, {0})), 1e-12, 1e-10);
  }
}

TEST_CASE("reduction gradients match finite differences", "[reduction][grad]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {3, 4, 5}, DType::f64, -1.0, 1.0, 11);
  for (const char* op : {"sum", "mean", "max", "var"}) {
    INFO(op);
    gradcheck(rt, op, {x}, {{"dims", std::vector<int64_t>{1}}});
    gradcheck(rt, op, {x}, {{"dims", std::vector<int64_t>{0, 2}}, {"keepdim", true}});
    gradcheck(rt, op, {x});
  }
  gradcheck(rt, "var", {x}, {{"dims", std::vector<int64_t>{-1}}, {"correction", 0}});
  gradcheck(rt, "sum", {rt.call1("transpose", {x}, {{"dim0", 0}, {"dim1", 2}})}, {{"dims", std::vector<int64_t>{1}}});
}

TEST_CASE("max splits its gradient evenly among tied maxima", "[reduction][grad]") {
  Runtime rt;
  Tensor x = make_tensor(rt, {2, 4}, {1, 3, 3, 2, 5, 0, 5, 5});
  x.set_requires_grad(true);
  Tensor y = rt.call1("max", {x}, {{"dims", std::vector<int64_t>{1}}});
  require_close(rt, y, {3, 5});
  rt.backward(y, make_tensor(rt, {2}, {1.0, 3.0}));
  require_close(rt, x.grad(), {0, 0.5, 0.5, 0, 1, 0, 1, 1});
}

TEST_CASE("reductions reject bad dims and non-floating inputs", "[reduction][errors]") {
  Runtime rt;
  Tensor x = rt.full({2, 3}, 1.0);
  require_error([&] { rt.call1("sum", {x}, {{"dims", std::vector<int64_t>{2}}}); }, Status::invalid_argument,
                {"sum"});
  require_error([&] { rt.call1("mean", {x}, {{"dims", std::vector<int64_t>{1, -1}}}); }, Status::invalid_argument,
                {"op 'mean'", "more than once", "[2, 3]"});
  require_error([&] { rt.call1("var", {rt.full({2, 3}, 1.0, DType::i64)}); }, Status::dtype_mismatch,
                {"op 'var'", "i64"});
  require_error([&] { rt.call1("max", {rt.full({2, 0}, 1.0)}, {{"dims", std::vector<int64_t>{1}}}); },
                Status::invalid_argument, {"op 'max'", "zero elements"});
}
