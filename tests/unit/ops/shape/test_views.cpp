// squeeze, unsqueeze, flatten and narrow: shapes as PyTorch gives them,
// sharing the input's storage, gradients against finite differences, and
// the errors for bad dims and windows.
#include <catch2/catch.hpp>

#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

bool shares_storage(const Tensor& a, const Tensor& b) { return a.impl()->storage == b.impl()->storage; }

}  // namespace

TEST_CASE("squeeze drops size-1 dims, all or the ones named", "[shape][views]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {1, 3, 1, 2}, DType::f32);
  Tensor all = rt.call1("squeeze", {x});
  CHECK(all.shape() == Shape{3, 2});
  CHECK(shares_storage(all, x));
  require_close(rt, all, values(rt, x));
  CHECK(rt.call1("squeeze", {x}, {{"dim", std::vector<int64_t>{-2}}}).shape() == Shape{1, 3, 2});
  CHECK(rt.call1("squeeze", {x}, {{"dim", std::vector<int64_t>{0, 2}}}).shape() == Shape{3, 2});
  // A named dim whose size is not 1 stays, as in PyTorch.
  CHECK(rt.call1("squeeze", {x}, {{"dim", std::vector<int64_t>{1}}}).shape() == Shape{1, 3, 1, 2});
  CHECK(rt.call1("squeeze", {random_tensor(rt, {1, 1})}).shape() == Shape{});
  CHECK(rt.call1("squeeze", {random_tensor(rt, {0, 1})}).shape() == Shape{0});
  require_error([&] { rt.call1("squeeze", {x}, {{"dim", std::vector<int64_t>{4}}}); }, Status::invalid_argument,
                {"squeeze", "dimension 4 is out of range for a tensor of rank 4"});
}

TEST_CASE("unsqueeze inserts a size-1 dim, negative dims counting from the new end", "[shape][views]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {2, 3}, DType::f64);
  CHECK(rt.call1("unsqueeze", {x}, {{"dim", 0}}).shape() == Shape{1, 2, 3});
  CHECK(rt.call1("unsqueeze", {x}, {{"dim", 1}}).shape() == Shape{2, 1, 3});
  CHECK(rt.call1("unsqueeze", {x}, {{"dim", -1}}).shape() == Shape{2, 3, 1});
  CHECK(rt.call1("unsqueeze", {x}, {{"dim", -3}}).shape() == Shape{1, 2, 3});
  Tensor u = rt.call1("unsqueeze", {x}, {{"dim", 2}});
  CHECK(shares_storage(u, x));
  CHECK(u.is_contiguous());
  require_close(rt, u, values(rt, x));
  CHECK(rt.call1("unsqueeze", {make_tensor(rt, {}, {5})}, {{"dim", 0}}).shape() == Shape{1});
  require_error([&] { rt.call1("unsqueeze", {x}, {{"dim", 3}}); }, Status::invalid_argument,
                {"unsqueeze", "dimension 3 is out of range for a tensor of rank 2 (expected -3 to 2)"});
  require_error([&] { rt.call1("unsqueeze", {x}, {{"dim", -4}}); }, Status::invalid_argument,
                {"dimension -4 is out of range"});
}

TEST_CASE("flatten merges a run of dims, viewing when the strides allow", "[shape][views]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {2, 3, 4, 5}, DType::f64);
  Tensor all = rt.call1("flatten", {x});
  CHECK(all.shape() == Shape{120});
  CHECK(shares_storage(all, x));
  CHECK(rt.call1("flatten", {x}, {{"start_dim", 1}}).shape() == Shape{2, 60});
  CHECK(rt.call1("flatten", {x}, {{"start_dim", 1}, {"end_dim", -2}}).shape() == Shape{2, 12, 5});
  CHECK(rt.call1("flatten", {x}, {{"start_dim", 2}, {"end_dim", 2}}).shape() == Shape{2, 3, 4, 5});
  CHECK(rt.call1("flatten", {make_tensor(rt, {}, {7})}).shape() == Shape{1});

  // Transposed: dims 0 and 1 swapped cannot merge with one stride (a copy),
  // while the untouched trailing dims still can (a view).
  Tensor t = rt.call1("transpose", {x}, {{"dim0", 0}, {"dim1", 1}});
  Tensor copied = rt.call1("flatten", {t}, {{"end_dim", 1}});
  CHECK(copied.shape() == Shape{6, 4, 5});
  CHECK_FALSE(shares_storage(copied, x));
  require_close(rt, copied, values(rt, t));
  Tensor viewed = rt.call1("flatten", {t}, {{"start_dim", 2}});
  CHECK(viewed.shape() == Shape{3, 2, 20});
  CHECK(shares_storage(viewed, x));
  require_close(rt, viewed, values(rt, t));
  require_error([&] { rt.call1("flatten", {x}, {{"start_dim", 2}, {"end_dim", 1}}); }, Status::invalid_argument,
                {"flatten", "start_dim 2 comes after end_dim 1"});
}

TEST_CASE("narrow views a window of one dim", "[shape][views]") {
  Runtime rt;
  Tensor x = make_tensor(rt, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7}, DType::i64);
  Tensor n = rt.call1("narrow", {x}, {{"dim", 1}, {"start", 1}, {"length", 2}});
  CHECK(n.shape() == Shape{2, 2});
  CHECK(shares_storage(n, x));
  require_close(rt, n, {1, 2, 5, 6});
  require_close(rt, rt.call1("narrow", {x}, {{"dim", -1}, {"start", -1}, {"length", 1}}), {3, 7});
  require_close(rt, rt.call1("narrow", {x}, {{"dim", 0}, {"start", 1}, {"length", 1}}), {4, 5, 6, 7});
  CHECK(rt.call1("narrow", {x}, {{"dim", 1}, {"start", 4}, {"length", 0}}).shape() == Shape{2, 0});
  require_error([&] { rt.call1("narrow", {x}, {{"dim", 1}, {"start", 3}, {"length", 2}}); }, Status::invalid_argument,
                {"narrow", "start 3 and length 2 exceed dimension 1 of size 4"});
  require_error([&] { rt.call1("narrow", {x}, {{"dim", 1}, {"start", 5}, {"length", 0}}); }, Status::invalid_argument,
                {"narrow", "start 5 is out of range for dimension 1 of size 4"});
  require_error([&] { rt.call1("narrow", {x}, {{"dim", 2}, {"start", 0}, {"length", 1}}); }, Status::invalid_argument,
                {"narrow", "dimension 2 is out of range"});
}

TEST_CASE("view gradients match finite differences", "[shape][views][grad]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {2, 1, 3}, DType::f64, -1.0, 1.0, 71);
  gradcheck(rt, "squeeze", {x});
  gradcheck(rt, "unsqueeze", {x}, {{"dim", -1}});
  gradcheck(rt, "flatten", {x}, {{"start_dim", 1}});
  gradcheck(rt, "narrow", {x}, {{"dim", 2}, {"start", 1}, {"length", 2}});
  gradcheck(rt, "narrow", {x}, {{"dim", 0}, {"start", -1}, {"length", 1}});
  gradcheck_fn(
      rt, [&](const std::vector<Tensor>& in) {
        Tensor t = rt.call1("transpose", {in[0]}, {{"dim0", 0}, {"dim1", 2}});
        return rt.call1("flatten", {t}, {{"end_dim", 1}});
      },
      {x});
}
