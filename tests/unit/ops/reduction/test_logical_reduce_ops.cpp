// any and all against a reference, for every dtype, NaN and empty groups.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "kiln/runtime.hpp"
#include "ops/reduction/reference.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("any and all match a reference in every dtype", "[reduction]") {
  Runtime rt;
  const Shape shape{3, 4, 2};
  std::vector<double> xv = values(rt, random_tensor(rt, shape, DType::f64, -1, 2, 21));
  for (double& v : xv) v = v < 0 ? 0 : std::floor(v);  // mostly 0 and 1
  for (DType dtype : kAllDTypes) {
    Tensor x = make_tensor(rt, shape, xv, dtype);
    for (const std::vector<int>& dims : std::vector<std::vector<int>>{{}, {1}, {0, 2}, {-1}}) {
      for (bool keepdim : {false, true}) {
        INFO(dtype_name(dtype) << " over " << dims.size() << " dims, keepdim " << keepdim);
        const auto groups = reduce_groups(shape, xv, dims);
        const NamedAttrs attrs = {{"dims", std::vector<int64_t>(dims.begin(), dims.end())}, {"keepdim", keepdim}};
        Tensor any = rt.call1("any", {x}, attrs), all = rt.call1("all", {x}, attrs);
        CHECK(any.dtype() == DType::boolean);
        CHECK(all.shape() == reduced_shape(shape, dims, keepdim));
        require_close(rt, any, per_group(groups, [](const std::vector<double>& g) {
                        return double(std::any_of(g.begin(), g.end(), [](double v) { return v != 0; }));
                      }), 0, 0);
        require_close(rt, all, per_group(groups, [](const std::vector<double>& g) {
                        return double(std::all_of(g.begin(), g.end(), [](double v) { return v != 0; }));
                      }), 0, 0);
      }
    }
  }
}

TEST_CASE("any and all count NaN as true and answer for empty groups", "[reduction]") {
  Runtime rt;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = make_tensor(rt, {2, 2}, {nan, 0, nan, -0.0}, DType::f32);
  require_close(rt, rt.call1("any", {x}, {{"dims", std::vector<int64_t>{0}}}), {1, 0}, 0, 0);
  require_close(rt, rt.call1("all", {x}, {{"dims", std::vector<int64_t>{0}}}), {1, 0}, 0, 0);
  Tensor empty = rt.full({2, 0}, 1.0);
  require_close(rt, rt.call1("any", {empty}, {{"dims", std::vector<int64_t>{1}}}), {0, 0}, 0, 0);
  require_close(rt, rt.call1("all", {empty}, {{"dims", std::vector<int64_t>{1}}}), {1, 1}, 0, 0);
  require_close(rt, rt.call1("all", {empty}), {1}, 0, 0);
  require_error([&] { rt.call1("any", {x}, {{"dims", std::vector<int64_t>{2}}}); }, Status::invalid_argument,
                {"op 'any'", "dimension 2 is out of range"});
  require_error([&] { rt.call1("all", {x}, {{"dims", std::vector<int64_t>{0, 0}}}); }, Status::invalid_argument,
                {"op 'all'", "more than once"});
}
