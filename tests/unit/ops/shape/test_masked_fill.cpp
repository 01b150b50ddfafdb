// masked_fill with masks of the input's shape and broadcast ones, in several
// dtypes; its gradient; and the errors for a mask of the wrong dtype or shape.
#include <catch2/catch.hpp>

#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("masked_fill writes the value where the broadcast mask is true", "[shape][masked_fill]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::i64}) {
    Tensor x = make_tensor(rt, {2, 3}, {1, 2, 3, 4, 5, 6}, t);
    Tensor full = make_tensor(rt, {2, 3}, {1, 0, 0, 0, 1, 1}, DType::boolean);
    require_close(rt, rt.call1("masked_fill", {x, full}, {{"value", -1.0}}), {-1, 2, 3, 4, -1, -1});
    Tensor row = make_tensor(rt, {3}, {0, 1, 0}, DType::boolean);
    require_close(rt, rt.call1("masked_fill", {x, row}, {{"value", 0.0}}), {1, 0, 3, 4, 0, 6});
    Tensor column = make_tensor(rt, {2, 1}, {1, 0}, DType::boolean);
    require_close(rt, rt.call1("masked_fill", {x, column}, {{"value", 7.0}}), {7, 7, 7, 4, 5, 6});
    Tensor scalar = make_tensor(rt, {}, {1}, DType::boolean);
    require_close(rt, rt.call1("masked_fill", {x, scalar}, {{"value", 2.0}}), {2, 2, 2, 2, 2, 2});
  }
  Tensor empty = make_tensor(rt, {0, 3}, {}, DType::f32);
  CHECK(rt.call1("masked_fill", {empty, make_tensor(rt, {3}, {1, 0, 1}, DType::boolean)}, {{"value", 1.0}}).shape() ==
        Shape{0, 3});
  // A strided input.
  Tensor t = rt.call1("transpose", {make_tensor(rt, {2, 3}, {1, 2, 3, 4, 5, 6})}, {{"dim0", 0}, {"dim1", 1}});
  require_close(rt, rt.call1("masked_fill", {t, make_tensor(rt, {2}, {0, 1}, DType::boolean)}, {{"value", 0.0}}),
                {1, 0, 2, 0, 3, 0});
}

TEST_CASE("masked_fill refuses masks it cannot use", "[shape][masked_fill]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {2, 3});
  require_error([&] { rt.call1("masked_fill", {x, make_tensor(rt, {3}, {1, 0, 1}, DType::f32)}, {{"value", 0.0}}); },
                Status::dtype_mismatch, {"masked_fill", "mask must be bool, got f32"});
  require_error([&] { rt.call1("masked_fill", {x, make_tensor(rt, {2}, {1, 0}, DType::boolean)}, {{"value", 0.0}}); },
                Status::shape_mismatch,
                {"masked_fill", "mask of shape [2] does not broadcast to the input's shape [2, 3]"});
  const Tensor deeper = make_tensor(rt, {1, 2, 3}, {1, 0, 1, 0, 1, 0}, DType::boolean);
  require_error([&] { rt.call1("masked_fill", {x, deeper}, {{"value", 0.0}}); }, Status::shape_mismatch,
                {"mask of shape [1, 2, 3] does not broadcast"});
}

TEST_CASE("masked_fill gradient matches finite differences", "[shape][masked_fill][grad]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {3, 4}, DType::f64, -1.0, 1.0, 91);
  Tensor mask = make_tensor(rt, {4}, {1, 0, 0, 1}, DType::boolean);
  gradcheck(rt, "masked_fill", {x, mask}, {{"value", 0.5}}, {.skip_inputs = {1}});
  gradcheck(rt, "masked_fill", {x, make_tensor(rt, {3, 1}, {0, 1, 0}, DType::boolean)}, {{"value", 0.0}},
            {.skip_inputs = {1}});
}
