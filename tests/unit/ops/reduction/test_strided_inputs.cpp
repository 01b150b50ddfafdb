// The reductions that read their input in place (accepts_strided) give on
// a transposed view what they give on a contiguous copy of it.
#include <catch2/catch.hpp>

#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("min, prod, std, norm, logsumexp, any, all and the arg-reductions read strided inputs",
          "[reduction]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {4, 6, 3}, DType::f64, -2.0, 2.0, 81);
  Tensor view = rt.call1("transpose", {x}, {{"dim0", 0}, {"dim1", 2}});  // [3, 6, 4]
  REQUIRE_FALSE(view.is_contiguous());
  Tensor copy = make_tensor(rt, view.shape(), values(rt, view));
  const auto same = [&](const char* op, NamedAttrs attrs) {
    INFO(op);
    const std::vector<Tensor> expected = rt.call(op, {copy}, attrs);
    const std::vector<Tensor> got = rt.call(op, {view}, attrs);
    REQUIRE(got.size() == expected.size());
    for (size_t k = 0; k < got.size(); ++k) require_close(rt, got[k], values(rt, expected[k]), 1e-12, 1e-12);
  };
  for (const char* op : {"min", "std", "prod", "logsumexp", "any", "all"}) {
    same(op, {{"dims", std::vector<int64_t>{1}}});
    same(op, {{"dims", std::vector<int64_t>{0, 2}}, {"keepdim", true}});
  }
  same("norm", {{"p", 1.0}, {"dims", std::vector<int64_t>{2}}});
  for (int64_t dim : {0, 1, 2}) {
    same("max_dim", {{"dim", dim}});
    same("min_dim", {{"dim", dim}, {"keepdim", true}});
    same("argmax", {{"dim", std::vector<int64_t>{dim}}});
    same("argmin", {{"dim", std::vector<int64_t>{dim}}});
  }
  same("argmax", {});
  same("argmin", {});
}
