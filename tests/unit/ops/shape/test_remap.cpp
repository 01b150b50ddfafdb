// flip, roll, repeat, pad, tril and triu against hand-worked results (every
// dtype moves the same elements), their gradients against finite
// differences, and their errors.
#include <catch2/catch.hpp>

#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

using Ints = std::vector<int64_t>;

// 0, 1, 2, ... in row-major order.
Tensor iota(Runtime& rt, const Shape& shape, DType dtype = DType::f64) {
  std::vector<double> v(size_t(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = double(i);
  return make_tensor(rt, shape, v, dtype);
}

}  // namespace

TEST_CASE("flip reverses the listed dims", "[shape][remap]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64, DType::bf16, DType::i64, DType::u8}) {
    Tensor x = iota(rt, {2, 3}, t);
    require_close(rt, rt.call1("flip", {x}, {{"dims", Ints{0}}}), {3, 4, 5, 0, 1, 2});
    require_close(rt, rt.call1("flip", {x}, {{"dims", Ints{-1}}}), {2, 1, 0, 5, 4, 3});
    require_close(rt, rt.call1("flip", {x}, {{"dims", Ints{0, 1}}}), {5, 4, 3, 2, 1, 0});
    require_close(rt, rt.call1("flip", {x}, {{"dims", Ints{}}}), {0, 1, 2, 3, 4, 5});
  }
  CHECK(rt.call1("flip", {iota(rt, {0, 3})}, {{"dims", Ints{0}}}).shape() == Shape{0, 3});
  require_error([&] { rt.call1("flip", {iota(rt, {2, 3})}, {{"dims", Ints{1, -1}}}); }, Status::invalid_argument,
                {"flip", "dimension -1 is listed twice"});
  require_error([&] { rt.call1("flip", {iota(rt, {2, 3})}, {{"dims", Ints{2}}}); }, Status::invalid_argument,
                {"flip", "dimension 2 is out of range for a tensor of rank 2"});
}

TEST_CASE("roll shifts along dims, or over the flattened tensor without dims", "[shape][remap]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64, DType::i32}) {
    Tensor x = iota(rt, {2, 3}, t);
    require_close(rt, rt.call1("roll", {x}, {{"shifts", Ints{1}}}), {5, 0, 1, 2, 3, 4});
    require_close(rt, rt.call1("roll", {x}, {{"shifts", Ints{-2}}}), {2, 3, 4, 5, 0, 1});
    require_close(rt, rt.call1("roll", {x}, {{"shifts", Ints{1}}, {"dims", Ints{1}}}), {2, 0, 1, 5, 3, 4});
    require_close(rt, rt.call1("roll", {x}, {{"shifts", Ints{1, -4}}, {"dims", Ints{0, -1}}}), {4, 5, 3, 1, 2, 0});
    // A dim listed twice rolls by the sum.
    require_close(rt, rt.call1("roll", {x}, {{"shifts", Ints{1, 1}}, {"dims", Ints{1, 1}}}), {1, 2, 0, 4, 5, 3});
  }
  CHECK(rt.call1("roll", {iota(rt, {2, 0})}, {{"shifts", Ints{3}}}).shape() == Shape{2, 0});
  require_error([&] { rt.call1("roll", {iota(rt, {2, 3})}, {{"shifts", Ints{1, 2}}}); }, Status::invalid_argument,
                {"roll", "without dims, shifts must hold one shift"});
  require_error([&] { rt.call1("roll", {iota(rt, {2, 3})}, {{"shifts", Ints{1}}, {"dims", Ints{0, 1}}}); },
                Status::invalid_argument, {"roll", "1 shifts for 2 dims"});
}

TEST_CASE("repeat tiles the tensor, leading repeats adding dims", "[shape][remap]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64, DType::boolean}) {
    Tensor x = make_tensor(rt, {2}, {1, 0}, t);
    Tensor y = rt.call1("repeat", {x}, {{"repeats", Ints{2, 2}}});
    CHECK(y.shape() == Shape{2, 4});
    require_close(rt, y, {1, 0, 1, 0, 1, 0, 1, 0});
  }
  Tensor x = iota(rt, {2, 2});
  require_close(rt, rt.call1("repeat", {x}, {{"repeats", Ints{2, 1}}}), {0, 1, 2, 3, 0, 1, 2, 3});
  require_close(rt, rt.call1("repeat", {x}, {{"repeats", Ints{1, 2}}}), {0, 1, 0, 1, 2, 3, 2, 3});
  CHECK(rt.call1("repeat", {x}, {{"repeats", Ints{3, 1, 2}}}).shape() == Shape{3, 2, 4});
  CHECK(rt.call1("repeat", {x}, {{"repeats", Ints{0, 2}}}).shape() == Shape{0, 4});
  require_close(rt, rt.call1("repeat", {make_tensor(rt, {}, {7})}, {{"repeats", Ints{3}}}), {7, 7, 7});
  require_error([&] { rt.call1("repeat", {x}, {{"repeats", Ints{2}}}); }, Status::invalid_argument,
                {"repeat", "1 repeats for a tensor of rank 2"});
  require_error([&] { rt.call1("repeat", {x}, {{"repeats", Ints{1, -1}}}); }, Status::invalid_argument,
                {"repeat", "repeat -1 for dim 1 is negative"});
}

TEST_CASE("pad pads from the last dim backwards in constant, reflect and replicate modes", "[shape][remap]") {
  Runtime rt;
  Tensor x = iota(rt, {2, 3});  // [[0, 1, 2], [3, 4, 5]]
  SECTION("constant, with a value, negative amounts cropping") {
    Tensor y = rt.call1("pad", {x}, {{"pad", Ints{1, 2}}, {"value", -1.0}});
    CHECK(y.shape() == Shape{2, 6});
    require_close(rt, y, {-1, 0, 1, 2, -1, -1, -1, 3, 4, 5, -1, -1});
    y = rt.call1("pad", {x}, {{"pad", Ints{0, 0, 1, 0}}});
    CHECK(y.shape() == Shape{3, 3});
    require_close(rt, y, {0, 0, 0, 0, 1, 2, 3, 4, 5});
    require_close(rt, rt.call1("pad", {x}, {{"pad", Ints{-1, 1}}}), {1, 2, 0, 4, 5, 0});
    Tensor i = rt.call1("pad", {iota(rt, {2}, DType::i64)}, {{"pad", Ints{1, 1}}, {"value", 9.0}});
    CHECK(i.dtype() == DType::i64);
    require_close(rt, i, {9, 0, 1, 9});
    CHECK(rt.call1("pad", {iota(rt, {0, 2})}, {{"pad", Ints{1, 1}}}).shape() == Shape{0, 4});
  }
  SECTION("reflect mirrors without repeating the edge") {
    require_close(rt, rt.call1("pad", {x}, {{"pad", Ints{2, 1}}, {"mode", "reflect"}}),
                  {2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4});
    require_close(rt, rt.call1("pad", {x}, {{"pad", Ints{1, 1, 1, 0}}, {"mode", "reflect"}}),
                  {4, 3, 4, 5, 4, 1, 0, 1, 2, 1, 4, 3, 4, 5, 4});
  }
  SECTION("replicate repeats the edge") {
    require_close(rt, rt.call1("pad", {x}, {{"pad", Ints{2, 1}}, {"mode", "replicate"}}),
                  {0, 0, 0, 1, 2, 2, 3, 3, 3, 4, 5, 5});
    require_close(rt, rt.call1("pad", {x}, {{"pad", Ints{0, 0, 0, 2}}, {"mode", "replicate"}}),
                  {0, 1, 2, 3, 4, 5, 3, 4, 5, 3, 4, 5});
  }
  SECTION("errors") {
    require_error([&] { rt.call1("pad", {x}, {{"pad", Ints{3, 0}}, {"mode", "reflect"}}); },
                  Status::invalid_argument,
                  {"pad", "reflect padding (3, 0) of dimension 1 must be less than its size 3"});
    require_error([&] { rt.call1("pad", {x}, {{"pad", Ints{0, 0, 0, 2}}, {"mode", "reflect"}}); },
                  Status::invalid_argument, {"reflect padding (0, 2) of dimension 0 must be less than its size 2"});
    require_error([&] { rt.call1("pad", {x}, {{"pad", Ints{1}}}); }, Status::invalid_argument,
                  {"pad", "pad holds 1 values for a tensor of rank 2"});
    require_error([&] { rt.call1("pad", {x}, {{"pad", Ints{1, 1, 1, 1, 1, 1}}}); }, Status::invalid_argument,
                  {"pad holds 6 values for a tensor of rank 2"});
    require_error([&] { rt.call1("pad", {x}, {{"pad", Ints{1, 1}}, {"mode", "circular"}}); },
                  Status::invalid_argument, {"unknown mode 'circular' (expected constant, reflect or replicate)"});
    require_error([&] { rt.call1("pad", {x}, {{"pad", Ints{-1, 0}}, {"mode", "replicate"}}); },
                  Status::invalid_argument, {"negative padding (-1, 0) of dimension 1 needs mode 'constant'"});
    require_error([&] { rt.call1("pad", {x}, {{"pad", Ints{-2, -2}}}); }, Status::invalid_argument,
                  {"padding (-2, -2) leaves dimension 1 of size 3 with a negative size"});
    require_error([&] { rt.call1("pad", {iota(rt, {2, 0})}, {{"pad", Ints{1, 0}}, {"mode", "replicate"}}); },
                  Status::invalid_argument, {"replicate padding of dimension 1 needs at least one element"});
  }
}

TEST_CASE("tril and triu keep a triangle of the last two dims", "[shape][remap]") {
  Runtime rt;
  Tensor x = make_tensor(rt, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, DType::f32);
  require_close(rt, rt.call1("tril", {x}), {1, 0, 0, 4, 5, 0, 7, 8, 9});
  require_close(rt, rt.call1("tril", {x}, {{"diagonal", 1}}), {1, 2, 0, 4, 5, 6, 7, 8, 9});
  require_close(rt, rt.call1("tril", {x}, {{"diagonal", -1}}), {0, 0, 0, 4, 0, 0, 7, 8, 0});
  require_close(rt, rt.call1("triu", {x}), {1, 2, 3, 0, 5, 6, 0, 0, 9});
  require_close(rt, rt.call1("triu", {x}, {{"diagonal", 1}}), {0, 2, 3, 0, 0, 6, 0, 0, 0});
  require_close(rt, rt.call1("triu", {x}, {{"diagonal", -1}}), {1, 2, 3, 4, 5, 6, 0, 8, 9});
  // A batch of 2x3 matrices, integer elements.
  Tensor b = iota(rt, {2, 2, 3}, DType::i64);
  require_close(rt, rt.call1("tril", {b}), {0, 0, 0, 3, 4, 0, 6, 0, 0, 9, 10, 0});
  require_close(rt, rt.call1("triu", {b}), {0, 1, 2, 0, 4, 5, 6, 7, 8, 0, 10, 11});
  require_error([&] { rt.call1("tril", {iota(rt, {3})}); }, Status::invalid_argument,
                {"tril", "needs a matrix or a batch of matrices (rank 2 or more), got shape [3]"});
}

TEST_CASE("remap gradients match finite differences", "[shape][remap][grad]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {3, 4}, DType::f64, -1.0, 1.0, 81);
  gradcheck(rt, "flip", {x}, {{"dims", Ints{0, 1}}});
  gradcheck(rt, "roll", {x}, {{"shifts", Ints{5}}});
  gradcheck(rt, "roll", {x}, {{"shifts", Ints{-1, 2}}, {"dims", Ints{0, 1}}});
  gradcheck(rt, "repeat", {x}, {{"repeats", Ints{2, 1, 3}}});
  gradcheck(rt, "tril", {x}, {{"diagonal", 1}});
  gradcheck(rt, "triu", {x}, {{"diagonal", -1}});
  gradcheck(rt, "pad", {x}, {{"pad", Ints{1, 2, 0, 1}}, {"value", 3.0}});
  gradcheck(rt, "pad", {x}, {{"pad", Ints{-1, 2}}});
  gradcheck(rt, "pad", {x}, {{"pad", Ints{3, 2, 2, 1}}, {"mode", "reflect"}});
  gradcheck(rt, "pad", {x}, {{"pad", Ints{2, 3, 1, 1}}, {"mode", "replicate"}});
}
