#include <catch2/catch.hpp>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

Tensor bools(Runtime& rt, const Shape& shape, const std::vector<double>& v) {
  return make_tensor(rt, shape, v, DType::boolean);
}

}  // namespace

TEST_CASE("where picks a or b, broadcasting all three", "[elementwise]") {
  Runtime rt;
  for (DType dtype : {DType::f32, DType::f64, DType::i64, DType::u8}) {
    Tensor cond = bools(rt, {2, 1}, {1, 0});
    Tensor a = make_tensor(rt, {3}, {1, 2, 3}, dtype);
    Tensor b = make_tensor(rt, {2, 3}, {10, 20, 30, 40, 50, 60}, dtype);
    Tensor out = rt.call1("where", {cond, a, b});
    CHECK(out.shape() == Shape{2, 3});
    CHECK(out.dtype() == dtype);
    require_close(rt, out, {1, 2, 3, 40, 50, 60});
  }
  Tensor cond = bools(rt, {3}, {0, 1, 1});
  Tensor b = make_tensor(rt, {3, 1}, {7, 8, 9}, DType::f32);
  Tensor a = rt.call1("transpose", {make_tensor(rt, {3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8}, DType::f32)},
                      {{"dim0", 0}, {"dim1", 1}});
  require_close(rt, rt.call1("where", {cond, a, b}), {7, 3, 6, 8, 4, 7, 9, 5, 8});
}

TEST_CASE("where sends the gradient to the chosen operand", "[elementwise]") {
  Runtime rt;
  Tensor cond = bools(rt, {2, 3}, {1, 0, 1, 0, 0, 1});
  gradcheck(rt, "where", {cond, random_tensor(rt, {2, 3}), random_tensor(rt, {2, 3}, DType::f64, -1, 1, 2)});
  gradcheck(rt, "where", {cond, random_tensor(rt, {3}), random_tensor(rt, {2, 1}, DType::f64, -1, 1, 2)});
  gradcheck(rt, "where", {bools(rt, {2, 1}, {0, 1}), random_tensor(rt, {1, 3}), random_tensor(rt, {1})});
}

TEST_CASE("where checks the condition and operand dtypes", "[elementwise]") {
  Runtime rt;
  try {
    rt.call1("where", {rt.full({2}, 1.0, DType::f32), rt.full({2}, 1.0), rt.full({2}, 2.0)});
    FAIL("where accepted a float condition");
  } catch (const Error& e) {
    CHECK(e.status() == Status::dtype_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("op 'where'") && Catch::Contains("bool") && Catch::Contains("f32"));
  }
  try {
    rt.call1("where", {rt.full({2}, 1.0, DType::boolean), rt.full({2}, 1.0), rt.full({2}, 2.0, DType::f64)});
    FAIL("where accepted mixed operand dtypes");
  } catch (const Error& e) {
    CHECK(e.status() == Status::dtype_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("f64"));
  }
  try {
    rt.call1("where", {rt.full({3}, 1.0, DType::boolean), rt.full({2}, 1.0), rt.full({2}, 2.0)});
    FAIL("where accepted shapes that do not broadcast");
  } catch (const Error& e) {
    CHECK(e.status() == Status::shape_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("[3]") && Catch::Contains("[2]"));
  }
}

TEST_CASE("cast converts between every pair of dtypes", "[elementwise]") {
  Runtime rt;
  const std::vector<DType> all = {DType::f32, DType::f64, DType::f16, DType::bf16,
                                  DType::i32, DType::i64, DType::u8,  DType::boolean};
  const std::vector<double> source = {0, 1, 2, 7, 100};  // exact in every dtype
  for (DType from : all) {
    for (DType to : all) {
      INFO(dtype_name(from) << " -> " << dtype_name(to));
      Tensor x = make_tensor(rt, {5}, from == DType::boolean ? std::vector<double>{0, 1, 1, 0, 1} : source, from);
      Tensor y = rt.call1("cast", {x}, {{"dtype", to}});
      CHECK(y.dtype() == to);
      std::vector<double> expected = values(rt, x);
      if (to == DType::boolean)
        for (double& v : expected) v = v != 0 ? 1 : 0;
      require_close(rt, y, expected);
    }
  }
  // Truncation toward zero, and rounding to the nearest 16-bit float.
  require_close(rt, rt.call1("cast", {make_tensor(rt, {2}, {2.7, -2.7})}, {{"dtype", DType::i32}}), {2, -2});
  require_close(rt, rt.call1("cast", {make_tensor(rt, {1}, {1.0 + 1.0 / 512})}, {{"dtype", DType::bf16}}), {1.0});
}

TEST_CASE("cast sends the gradient back in the input's dtype", "[elementwise]") {
  Runtime rt;
  gradcheck(rt, "cast", {random_tensor(rt, {2, 3})}, {{"dtype", DType::f64}});
  Tensor x = random_tensor(rt, {3});
  x.set_requires_grad(true);
  Tensor y = rt.call1("cast", {x}, {{"dtype", DType::f32}});
  rt.backward(y, make_tensor(rt, {3}, {1, 2, 3}, DType::f32));
  CHECK(x.grad().dtype() == DType::f64);
  require_close(rt, x.grad(), {1, 2, 3});
}
